"""Operators: onnxruntime's MaxpoolWithMask (domain "com.microsoft").

onnxruntime's schema says only "For internal use"; the semantics below were measured
against onnxruntime 1.32's CPU kernel (float32 only) with one-node models.

- Inputs: X float32 (N, C, *spatial) with 1, 2 or 3 spatial dims, and M int32 of X's
  rank whose spatial dims are X's. Output Y float32 (N, C, *out). Attributes:
  kernel_shape (optional in onnxruntime's schema, yet its kernel refuses a node without
  it, and so does onegraph; one value per spatial dim), strides, pads, auto_pad
  (NOTSET, VALID, SAME_UPPER, SAME_LOWER), storage_order (read, no effect: there is no
  Indices output). There are no dilations and no ceil_mode: onnxruntime refuses the
  node with either, as with any other attribute the schema does not list.
- Mask: an entry is "off" when it is 0, "on" for any other value (1, 5, -1 alike). M's
  N and C need not be X's: image plane p of X (p = n * C + c) reads the S =
  prod(spatial) entries of M's plane p mod (M's N * C), so a mask of one plane (M's
  N = C = 1) is shared by every plane of X (but see the refusals below).
- Window: as MaxPool's without dilation, the window clipped to the input (padding is
  never read). The taps along the last spatial dim are scanned in order, and the
  first "off" entry ends the scan of that line of the window: it and every tap after
  it along that dim are left out, while the window's other lines (its rows in 2-D, its
  lines along the last dim at each of its (h, w) in 3-D) are scanned afresh. Y is the
  largest value read.
  NaN never wins (onnxruntime keeps a value only if it is greater than the best so
  far), and a window that reads nothing (every line starts "off", or the window lies in
  the padding) gives float32's lowest value, -3.4028235e38, as does one of -inf only.
- Output size per spatial dim: (n + pads - k) / stride + 1 in C's division (toward
  zero), so a window longer than the padded input by less than the stride still gives
  one (clipped) window, and one longer by at most 2 * stride - 1 gives none (an empty
  Y); longer still is refused (ShapeError), as onnxruntime refuses it. auto_pad VALID
  ignores pads; SAME_UPPER/SAME_LOWER ignore them too and pad need = (ceil(n / s) - 1)
  * s + k - n, the head need / 2 (SAME_UPPER) or (need + 1) / 2 (SAME_LOWER) in C's
  division: with a stride longer than the kernel need is negative and the windows move
  into the input (`ort_same_padding`'s rule for pooling).
- Attribute checks (OpAttributeError), as onnxruntime's: kernel_shape and strides
  positive, pads not negative and smaller than the kernel, pads/strides of the kernel's
  length (an empty list is the default, as onnxruntime reads it), auto_pad one of the
  four; window values beyond 2**31 - 1 (`check_window_values`). A kernel_shape with
  more than 3 values is an UnsupportedOpError (onnxruntime has 1-D to 3-D only), one
  whose length is not X's spatial rank an OpAttributeError. Input checks (ShapeError),
  as onnxruntime's: X below rank 3, X or M of another dtype, M of another rank or other
  spatial dims, M with N or C of 0 while X's are not, and X empty in a dim other than N.

Refused where onnxruntime's results are wrong (its kernel's own arithmetic, measured):

- It starts plane p's mask at element (p * S) mod T of M, T = M's N * M's C: a count
  of planes used as an element offset. That is the start of M's plane p mod T, the
  broadcast its source comment intends, for every p exactly when T is 1, S is 1, or
  (min(X's N * C, T) - 1) * S < T; any other M (a full per-channel (N, C, *spatial)
  mask of more than one plane, for one) would be read misaligned, so it is a
  ShapeError.
- Its 2-D and 3-D kernels test the mask only at spatial index > 0 (its 1-D kernel at
  every index), so an "off" entry at the first spatial position (0, 0) or (0, 0, 0) of a
  mask plane is ignored there and that element always read; such a mask is refused
  (UnsupportedOpError). 1-D masks may be off at index 0 (it ends the window's scan).

Hostile sizes: an output, intermediate or padded buffer over 2 GiB is refused with a
ResourceExhaustedError before anything is allocated (`check_result_size`).

The kernel is two vectorised passes: the masked scan along the last spatial dim, one
numpy pass per kernel tap (a running "still on" flag per output), then an ordinary
clipped max over the other spatial dims (`ops/pool.py`'s `_separable_reduce`).
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .ms_fused import check_result_size, check_window_values, pool_attrs
from .ms_transformer import _DOMAIN
from .pool import _separable_reduce, _taps_reaching_input, _valid_range
from .registry import TensorInfo, define

_OP = "MaxpoolWithMask"
_F32 = np.dtype(np.float32)
_I32 = np.dtype(np.int32)
# What onnxruntime starts every window's maximum at (numeric_limits<float>::lowest()).
_LOWEST = np.float32(np.finfo(np.float32).min)
_MODES = ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER")
_MAX_SPATIAL = 3


def _mode(attrs):
    """auto_pad as a str (NOTSET when absent)."""
    mode = attrs.get("auto_pad") or "NOTSET"
    return mode.decode() if isinstance(mode, bytes) else mode


def _c_div(a, b):
    """a / b rounded toward zero (C's integer division), for b > 0."""
    return -(-a // b) if a < 0 else a // b


def _window_attrs(attrs):
    """attrs with an empty pads or strides list read as absent, as onnxruntime reads it
    (the shared pooling checks refuse empty lists, which onnxruntime's MaxPool does)."""
    fixed = {name: None for name in ("pads", "strides")
             if attrs.get(name) is not None and len(attrs[name]) == 0}
    return dict(attrs, **fixed) if fixed else attrs


def _check_attrs(attrs):
    """check_attrs of MaxpoolWithMask: the checks onnxruntime makes when it loads the
    node (see the module docstring), so a bad model fails at load. Returns None.

    Raises:
        OpAttributeError: kernel_shape absent, empty or not positive, strides not positive,
            pads negative or not smaller than the kernel, pads/strides of another
            length than the kernel, auto_pad unknown, a value beyond 2**31 - 1.
        UnsupportedOpError: kernel_shape holds more than 3 values.
    """
    attrs = _window_attrs(attrs)
    check_window_values(_OP, attrs, ("kernel_shape", "strides", "pads"))
    mode = _mode(attrs)
    if mode not in _MODES:
        raise OpAttributeError(f"{_OP}: auto_pad {mode!r} is not one of {', '.join(_MODES)}")
    if attrs.get("kernel_shape") is None:
        # optional in onnxruntime's schema, but its kernel refuses a node without it
        raise OpAttributeError(f"{_OP}: kernel_shape is not set (onnxruntime refuses the "
                               "node without it)")
    kernel = [int(k) for k in attrs["kernel_shape"]]
    if not kernel or min(kernel) < 1:
        raise OpAttributeError(f"{_OP}: kernel_shape {kernel} must hold one positive value "
                               "per spatial dim")
    if len(kernel) > _MAX_SPATIAL:
        raise UnsupportedOpError(f"{_OP}: kernel_shape {kernel} asks for {len(kernel)}-D "
                                 f"pooling; only 1-D, 2-D and 3-D are supported (as in "
                                 f"onnxruntime)")
    strides = attrs.get("strides")
    if strides is not None and any(int(s) < 1 for s in strides):
        raise OpAttributeError(f"{_OP}: strides {[int(s) for s in strides]} must be positive")
    pool_attrs(_OP, attrs)
    return None


def _geometry(sp, attrs):
    """(kernel, strides, head pads, output sizes) of spatial dims `sp` (None: unknown,
    giving None head and size) as onnxruntime sizes the windows: C's division, SAME_*
    head padding possibly negative (see the module docstring).

    Raises:
        ShapeError: a window is so much longer than its padded input that the output
            size comes out negative (onnxruntime refuses it too).
    """
    attrs = _window_attrs(attrs)
    kernel = [int(k) for k in attrs["kernel_shape"]]
    nsp = len(kernel)
    strides = [int(s) for s in attrs.get("strides") or [1] * nsp]
    pads = [int(p) for p in attrs.get("pads") or [0] * (2 * nsp)]
    mode = _mode(attrs)
    heads, outs = [], []
    for i, (n, k, s) in enumerate(zip(sp, kernel, strides)):
        if n is None:
            heads.append(None)
            outs.append(None)
            continue
        if mode in ("SAME_UPPER", "SAME_LOWER"):
            total = (-(-n // s) - 1) * s + k - n
            head = _c_div(total + (mode == "SAME_LOWER"), 2)
        elif mode == "VALID":
            total = head = 0
        else:
            total, head = pads[i] + pads[i + nsp], pads[i]
        out = _c_div(n + total - k, s) + 1
        if out < 0:
            raise ShapeError(f"{_OP}: spatial dim {i}: the kernel {k} is longer than the "
                             f"padded input {n + total} by more than twice the stride {s}: "
                             f"the output size would be {out}")
        heads.append(head)
        outs.append(out)
    return kernel, strides, heads, outs


def _check_inputs(x, m, kernel):
    """Check X and M (TensorInfo-like: dtype and shape, None where unknown) against
    each other and the kernel, as onnxruntime's kernel does.

    Raises:
        ShapeError: a dtype other than float32 (X) or int32 (M), X below rank 3, M of
            another rank or spatial dims, M with N or C of 0 while X's are not, X empty
            in a dim other than N.
        UnsupportedOpError: X has more than 3 spatial dims.
        OpAttributeError: kernel_shape's length is not X's spatial rank.
    """
    if x.dtype is not None and x.dtype != _F32:
        raise ShapeError(f"{_OP}: X must be float32 (onnxruntime's only kernel), got "
                         f"{x.dtype}")
    if m.dtype is not None and m.dtype != _I32:
        raise ShapeError(f"{_OP}: M must be int32, got {m.dtype}")
    if x.shape is None:
        return
    xs = list(x.shape)
    if len(xs) < 3:
        raise ShapeError(f"{_OP}: X must be (N, C, *spatial) with 1 to 3 spatial dims, got "
                         f"shape {xs}")
    if len(xs) - 2 > _MAX_SPATIAL:
        raise UnsupportedOpError(f"{_OP}: X {xs} has {len(xs) - 2} spatial dims; only 1-D, "
                                 "2-D and 3-D pooling are supported (as in onnxruntime)")
    if len(kernel) != len(xs) - 2:
        raise OpAttributeError(f"{_OP}: kernel_shape {list(kernel)} has {len(kernel)} "
                               f"value(s), but X {xs} has {len(xs) - 2} spatial dims")
    if xs[0] != 0 and 0 in xs[1:]:
        raise ShapeError(f"{_OP}: X {xs} is empty in a dim other than N (onnxruntime "
                         "refuses it)")
    if m.shape is None:
        return
    ms = list(m.shape)
    if len(ms) != len(xs):
        raise ShapeError(f"{_OP}: M {ms} must have X's rank {len(xs)}")
    for i in range(2, len(xs)):
        if None not in (xs[i], ms[i]) and xs[i] != ms[i]:
            raise ShapeError(f"{_OP}: M {ms} must have X's spatial dims {xs[2:]}")
    if xs[0] != 0 and xs[1] != 0 and 0 in ms[:2]:
        raise ShapeError(f"{_OP}: M {ms} has an N or C of 0 while X {xs} has not")


def _keep(m, planes, sp):
    """The mask's "on" entries (bool) per image plane of X: (planes, *sp), or (1, *sp)
    when every plane reads the same mask plane.

    Raises:
        ShapeError: onnxruntime would read the mask misaligned (module docstring).
        UnsupportedOpError: a 2-D/3-D mask plane read is off at spatial position 0.
    """
    size = int(np.prod(sp, dtype=np.int64))
    total = int(m.shape[0]) * int(m.shape[1])
    used = min(planes, total)
    # onnxruntime starts plane p at element (p * size) % total; that is plane p % total's
    # start, (p % total) * size, for every p exactly when this holds (periodic in total)
    if not (total == 1 or size == 1 or (used - 1) * size < total):
        raise ShapeError(
            f"{_OP}: M {list(m.shape)} has {total} planes for X's {planes}; onnxruntime "
            f"reads plane p's mask from element (p * {size}) mod {total} of M, which is "
            f"not where a mask plane starts, so its result would be misaligned (give M "
            f"N = C = 1 to share one mask plane)")
    keep = np.asarray(m).reshape(total, size)[:used] != 0
    if len(sp) > 1 and not keep[:, 0].all():
        raise UnsupportedOpError(
            f"{_OP}: a {len(sp)}-D mask that is 0 at the first spatial position is not "
            "supported: onnxruntime's 2-D/3-D kernels never test that entry and always "
            "read the element there")
    if used == 1:
        return keep.reshape((1,) + tuple(sp))
    return keep[np.arange(planes) % total].reshape((planes,) + tuple(sp))


def _masked_lines(x, keep, k, s, head, out):
    """Max over each window's taps along the last spatial dim, each line of taps read
    up to its first "off" mask entry: x (P, *sp), keep (P or 1, *sp), result
    (P, *sp[:-1], out). Reads nothing: _LOWEST; NaN never wins (np.fmax)."""
    n = x.shape[-1]
    acc = np.full(x.shape[:-1] + (out,), _LOWEST, dtype=_F32)
    # whether each output's line is still being scanned (no "off" entry met yet)
    scanning = np.ones(keep.shape[:-1] + (out,), dtype=bool)
    for p in _taps_reaching_input(n, k, s, 1, head, out):
        lo, hi, t0 = _valid_range(n, p, s, 1, head, out)
        if hi <= lo:
            continue
        taps = slice(t0, t0 + (hi - lo - 1) * s + 1, s)
        on = scanning[..., lo:hi]
        on &= keep[..., taps]
        dst = acc[..., lo:hi]
        np.fmax(dst, x[..., taps], out=dst, where=on)
    return acc


def _maxpool_with_mask_kernel(inputs, attrs, ctx):
    """Y = the masked, clipped window maxima of X (see the module docstring).

    Raises:
        ShapeError, UnsupportedOpError, OpAttributeError: see `_check_inputs`, `_keep`,
            `_geometry`.
        ResourceExhaustedError: a buffer over 2 GiB.
    """
    x, m = np.asarray(inputs[0]), np.asarray(inputs[1])
    kernel = [int(k) for k in attrs["kernel_shape"]]
    _check_inputs(x, m, kernel)
    kernel, strides, heads, outs = _geometry(x.shape[2:], attrs)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    check_result_size(_OP, "the output", (n, c) + tuple(outs), _F32.itemsize)
    check_result_size(_OP, "the scan along the last dim", (n, c) + sp[:-1] + (outs[-1],),
                      _F32.itemsize)
    if n * c == 0 or 0 in outs:
        return (np.empty((n, c) + tuple(outs), dtype=_F32),)
    # a padded copy the outer reduction may make: every window of the outer dims
    check_result_size(_OP, "the padded input", (n, c) + tuple(
        max((o - 1) * st + k, d + max(h, 0)) for o, st, k, d, h in
        zip(outs[:-1], strides[:-1], kernel[:-1], sp[:-1], heads[:-1])) + (outs[-1],),
        _F32.itemsize)
    planes = n * c
    keep = _keep(m, planes, sp)
    lines = _masked_lines(x.reshape((planes,) + sp), keep, kernel[-1], strides[-1],
                          heads[-1], outs[-1]).reshape((n, c) + sp[:-1] + (outs[-1],))
    if len(sp) == 1:
        return (lines,)
    # windows moved into the input (a negative SAME_* head) start at -head: crop there
    crop = (slice(None), slice(None)) + tuple(slice(max(-h, 0), None) for h in heads[:-1])
    lines = lines[crop]
    nsp = len(sp)
    y = _separable_reduce(lines, kernel[:-1] + [1], strides[:-1] + [1], [1] * nsp,
                          [max(h, 0) for h in heads[:-1]] + [0], outs, np.maximum,
                          _LOWEST)
    return (np.ascontiguousarray(y, dtype=_F32),)


def _maxpool_with_mask_infer(attrs, inputs):
    """Y's dtype (float32) and shape (N, C, *out) from X's and M's.

    Raises:
        ShapeError, UnsupportedOpError, OpAttributeError: as the kernel's input checks.
    """
    x, m = inputs[0], inputs[1]
    kernel = [int(k) for k in attrs["kernel_shape"]]
    _check_inputs(x, m, kernel)
    if x.shape is None:
        return [TensorInfo(_F32, None)]
    _, _, _, outs = _geometry(x.shape[2:], attrs)
    return [TensorInfo(_F32, tuple(x.shape[:2]) + tuple(outs))]


MaxpoolWithMask = define(
    _OP, ("X", "M"), ("Y",), _maxpool_with_mask_kernel,
    (("auto_pad", "string", "NOTSET"), ("kernel_shape", "ints", None), ("pads", "ints", None),
     ("storage_order", "int", 0), ("strides", "ints", None)),
    infer=_maxpool_with_mask_infer, domain=_DOMAIN, dtypes=("float32",),
    check_attrs=_check_attrs, since_version=1,
    doc="Max over sliding windows of X, each window line read up to its mask's first 0.")

OPS = (MaxpoolWithMask,)

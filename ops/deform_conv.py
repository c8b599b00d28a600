"""Operators: deformable convolution (ONNX DeformConv).

DeformConv is Conv whose kernel taps read the input not on the regular grid but at
positions moved by a learned, per-output-pixel `offset` (and scaled by an optional
`mask`, DCNv2). Fractional positions are read by N-linear interpolation; a corner of
the interpolation cell outside the input reads zero (ONNX: GridSample with zero
padding and align_corners=1).

The kernel is im2col + GEMM like `ops/conv.py`, with the im2col gather made explicit:
for each kernel tap, the sampling positions of all output pixels are computed at once,
the 2**n corners of their cells are gathered with fancy indexing from a zero-bordered
channels-last copy of the input (one contiguous row of channels per position), and the
corner values are blended with the interpolation weights times the mask. The columns of
all taps then meet the weights in one batched matmul, groups as its batch axis. Python
loops run over kernel taps and cell corners only.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .conv import _compute_dtype, _pool_geometry
from .registry import TensorInfo, define

KNOWN_FAILURES: dict[str, str] = {}

_OP = "DeformConv"


# --------------------------------------------------------------------------------------
# Geometry and checks (shared by the kernel and inference; None = unknown dim)
# --------------------------------------------------------------------------------------


def _attr_ints(attrs, name, n, fill, minimum):
    """An ints attribute as a list of n values >= minimum (fill when absent)."""
    value = attrs.get(name)
    if value is None or len(value) == 0:
        return [fill] * n
    value = [int(v) for v in value]
    if len(value) != n:
        raise OpAttributeError(f"{_OP}: {name} has {len(value)} values, expected {n} for "
                               f"{n // (2 if name == 'pads' else 1)} spatial dims")
    if min(value) < minimum:
        raise OpAttributeError(f"{_OP}: {name} {value} must be >= {minimum}")
    return value


def _positive_int(attrs, name):
    value = attrs.get(name)
    value = 1 if value is None else int(value)
    if value < 1:
        raise OpAttributeError(f"{_OP}: {name} must be >= 1, got {value}")
    return value


def _dim_mismatch(a, b):
    return a is not None and b is not None and a != b


def _geometry(x_shape, w_shape, off_shape, b_shape, mask_shape, attrs):
    """Check the inputs' shapes against each other and the attributes.

    Shapes may hold None for unknown dims (inference); a None shape is unknown.

    Returns:
        (kernel, group, offset_group, strides, dilations, pads_begin, out_sp); kernel and
        out_sp entries are None where unknown.

    Raises:
        ShapeError: ranks, channels, group/offset_group divisibility, or the offset,
            mask or bias shapes are inconsistent.
        OpAttributeError: an attribute has the wrong length or an invalid value.
    """
    rank = next((len(s) for s in (x_shape, w_shape, off_shape, mask_shape)
                 if s is not None), None)
    if rank is None:
        raise ShapeError(f"{_OP}: the input ranks are unknown")
    if rank < 3:
        raise ShapeError(f"{_OP}: X must have rank >= 3 (N, C, spatial...), got rank {rank}")
    for name, s in (("X", x_shape), ("W", w_shape), ("offset", off_shape),
                    ("mask", mask_shape)):
        if s is not None and len(s) != rank:
            raise ShapeError(f"{_OP}: {name} has rank {len(s)}, expected {rank} like the "
                             f"other inputs")
    nsp = rank - 2
    x_shape = x_shape or (None,) * rank
    w_shape = w_shape or (None,) * rank
    off_shape = off_shape or (None,) * rank

    group = _positive_int(attrs, "group")
    offset_group = _positive_int(attrs, "offset_group")
    strides = _attr_ints(attrs, "strides", nsp, 1, 1)
    dilations = _attr_ints(attrs, "dilations", nsp, 1, 1)
    pads = _attr_ints(attrs, "pads", 2 * nsp, 0, 0)

    kernel = list(w_shape[2:])
    ks = attrs.get("kernel_shape")
    if ks is not None and len(ks):
        ks = [int(k) for k in ks]
        if len(ks) != nsp:
            raise OpAttributeError(f"{_OP}: kernel_shape {ks} has {len(ks)} values, expected "
                                   f"{nsp}")
        if any(_dim_mismatch(k, d) for k, d in zip(ks, kernel)):
            raise ShapeError(f"{_OP}: kernel_shape {ks} differs from W's spatial dims "
                             f"{tuple(kernel)}")
        kernel = ks
    if any(k is not None and k < 1 for k in kernel):
        raise ShapeError(f"{_OP}: empty kernel {tuple(kernel)}")

    c, m, cg = x_shape[1], w_shape[0], w_shape[1]
    if c is not None and c % group:
        raise ShapeError(f"{_OP}: input channels {c} not divisible by group {group}")
    if m is not None and m % group:
        raise ShapeError(f"{_OP}: output channels {m} (W dim 0) not divisible by group {group}")
    if c is not None and cg is not None and cg * group != c:
        raise ShapeError(f"{_OP}: input channels {c} != W dim 1 ({cg}) * group {group}")
    if c is not None and c % offset_group:
        raise ShapeError(f"{_OP}: input channels {c} not divisible by offset_group "
                         f"{offset_group}")

    ntaps = math.prod(kernel) if None not in kernel else None
    n = x_shape[0]
    if _dim_mismatch(off_shape[0], n):
        raise ShapeError(f"{_OP}: offset batch {off_shape[0]} != X batch {n}")
    if ntaps is not None and _dim_mismatch(off_shape[1], offset_group * ntaps * nsp):
        raise ShapeError(f"{_OP}: offset has {off_shape[1]} channels, expected offset_group "
                         f"{offset_group} * kernel taps {ntaps} * {nsp} spatial dims = "
                         f"{offset_group * ntaps * nsp}")

    *_, out_sp = _pool_geometry(x_shape[2:], kernel, {"strides": strides,
                                                      "dilations": dilations, "pads": pads})
    if any(_dim_mismatch(o, d) for o, d in zip(out_sp, off_shape[2:])):
        raise ShapeError(f"{_OP}: offset spatial dims {tuple(off_shape[2:])} differ from the "
                         f"output's {tuple(out_sp)} (from X, kernel, strides, pads, dilations)")
    out_sp = [d if o is None else o for o, d in zip(out_sp, off_shape[2:])]

    if mask_shape is not None:
        if _dim_mismatch(mask_shape[0], n):
            raise ShapeError(f"{_OP}: mask batch {mask_shape[0]} != X batch {n}")
        if ntaps is not None and _dim_mismatch(mask_shape[1], offset_group * ntaps):
            raise ShapeError(f"{_OP}: mask has {mask_shape[1]} channels, expected "
                             f"offset_group {offset_group} * kernel taps {ntaps} = "
                             f"{offset_group * ntaps}")
        if any(_dim_mismatch(o, d) for o, d in zip(out_sp, mask_shape[2:])):
            raise ShapeError(f"{_OP}: mask spatial dims {tuple(mask_shape[2:])} differ from "
                             f"the output's {tuple(out_sp)}")
    if b_shape is not None and (len(b_shape) != 1 or _dim_mismatch(b_shape[0], m)):
        raise ShapeError(f"{_OP}: bias shape {tuple(b_shape)}, expected ({m},)")
    return kernel, group, offset_group, strides, dilations, pads[:nsp], out_sp


# --------------------------------------------------------------------------------------
# Kernel
# --------------------------------------------------------------------------------------


def _channels_last_bordered(x, og):
    """x (N, C, *S) as (N, prod(S + 2), og, C/og): channels last, one zero pixel around.

    A sampling corner outside the image is clipped onto the border and so reads 0.
    """
    n, c = x.shape[:2]
    sp = x.shape[2:]
    out = np.zeros((n,) + tuple(d + 2 for d in sp) + (c,), dtype=x.dtype)
    out[(slice(None),) + (slice(1, -1),) * len(sp)] = np.moveaxis(x, 1, -1)
    return out.reshape(n, math.prod(d + 2 for d in sp), og, c // og)


def deform_conv(x, w, offset, b=None, mask=None, attrs=None):
    """N-D deformable convolution with ONNX DeformConv semantics.

    Args:
        x: input (N, C, *S).
        w: weights (M, C/group, *k).
        offset: (N, offset_group * prod(k) * len(S), *out): per output pixel and tap, the
            displacement of the sampling position along each spatial axis (tap-major,
            then axis), in input pixels.
        b: optional bias (M,).
        mask: optional (N, offset_group * prod(k), *out) factor per sample (DCNv2).
        attrs: dilations, group, kernel_shape, offset_group, pads, strides.

    Returns:
        (N, M, *out) in x's dtype (computed in float32, float64 for float64 inputs).

    Raises:
        ShapeError: the inputs' shapes disagree with each other or the attributes.
        OpAttributeError: an attribute has the wrong length or an invalid value.
    """
    attrs = attrs or {}
    kernel, group, og, strides, dilations, pads_begin, out_sp = _geometry(
        x.shape, w.shape, offset.shape, None if b is None else b.shape,
        None if mask is None else mask.shape, attrs)
    out_dtype = x.dtype
    cdt = _compute_dtype(out_dtype)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    nsp = len(sp)
    m = w.shape[0]
    cg, mg, cog = c // group, m // group, c // og
    ntaps = math.prod(kernel)
    npix = math.prod(out_sp)

    xl = _channels_last_bordered(np.asarray(x, dtype=cdt), og)
    # strides of the bordered image's flattened spatial index
    pstride = [math.prod(d + 2 for d in sp[i + 1:]) for i in range(nsp)]
    off = np.asarray(offset, dtype=np.float64).reshape(n, og, ntaps, nsp, npix)
    msk = None if mask is None else np.asarray(mask, dtype=cdt).reshape(n, og, ntaps, npix)
    # output pixel p's window starts at out_index * stride - pad_begin, per axis
    grid = np.indices(out_sp).reshape(nsp, npix)
    origin = [(grid[i] * strides[i] - pads_begin[i])[:, None] for i in range(nsp)]
    batch = np.arange(n)[:, None, None]
    ogrp = np.arange(og)[None, None, :]

    cols = np.empty((n, group, npix, ntaps, cg), dtype=cdt)
    for t, tap in enumerate(itertools.product(*(range(k) for k in kernel))):
        # sampling positions (N, P, og) per axis: floor cell corner and fraction
        lows, fracs = [], []
        for i in range(nsp):
            pos = (origin[i] + tap[i] * dilations[i]) + off[:, :, t, i, :].transpose(0, 2, 1)
            low = np.floor(pos)
            with np.errstate(invalid="ignore"):  # inf - inf: a NaN result, no warning
                fracs.append(pos - low)
            # clip far-away cells onto the zero border; NaN positions read the border
            # too, and their NaN fraction still poisons the result as it should
            np.clip(low, -2, sp[i], out=low)
            np.nan_to_num(low, copy=False, nan=-2)
            lows.append(low.astype(np.int64))
        scale = None if msk is None else msk[:, :, t, :].transpose(0, 2, 1)
        sample = np.zeros((n, npix, og, cog), dtype=cdt)
        for corner in itertools.product((0, 1), repeat=nsp):
            flat = 0
            weight = 1.0
            for i, bit in enumerate(corner):
                flat = flat + (np.clip(lows[i] + bit, -1, sp[i]) + 1) * pstride[i]
                weight = weight * (fracs[i] if bit else 1.0 - fracs[i])
            weight = weight.astype(cdt)
            if scale is not None:
                weight *= scale
            sample += weight[..., None] * xl[batch, flat, ogrp]
        cols[:, :, :, t, :] = sample.reshape(n, npix, group, cg).transpose(0, 2, 1, 3)

    # W (M, Cg, *k) -> (group, taps * Cg, Mg), matching the columns' (tap, channel) order
    wk = np.asarray(w, dtype=cdt).reshape(group, mg, cg, ntaps).transpose(0, 3, 2, 1)
    y = np.matmul(cols.reshape(n, group, npix, ntaps * cg), wk.reshape(group, ntaps * cg, mg))
    y = np.ascontiguousarray(y.transpose(0, 1, 3, 2)).reshape((n, m) + tuple(out_sp))
    if b is not None:
        y += np.asarray(b, dtype=cdt).reshape((m,) + (1,) * nsp)
    return y.astype(out_dtype, copy=False)


def _deform_conv_kernel(inputs, attrs, ctx):
    x, w, offset = inputs[:3]
    b = inputs[3] if len(inputs) > 3 else None
    mask = inputs[4] if len(inputs) > 4 else None
    return (deform_conv(x, w, offset, b, mask, attrs),)


def _deform_conv_infer(attrs, inputs):
    """Output (N, M, *out): checks what is known of the inputs' shapes and dtypes.

    Raises:
        ShapeError: inconsistent shapes or dtypes (see `deform_conv`).
        OpAttributeError: an attribute has the wrong length or an invalid value.
    """
    x, w, off = inputs[:3]
    b = inputs[3] if len(inputs) > 3 else None
    mask = inputs[4] if len(inputs) > 4 else None
    present = [("X", x), ("W", w), ("offset", off), ("B", b), ("mask", mask)]
    dtypes = {name: np.dtype(t.dtype) for name, t in present
              if t is not None and t.dtype is not None}
    if len(set(dtypes.values())) > 1:
        raise ShapeError(f"{_OP}: inputs must share one float dtype, got "
                         + ", ".join(f"{k} {v}" for k, v in dtypes.items()))
    def shape(t):
        return None if t is None else t.shape

    if all(shape(t) is None for t in (x, w, off, mask)):
        return [TensorInfo(x.dtype, None)]
    *_, out_sp = _geometry(shape(x), shape(w), shape(off), shape(b), shape(mask), attrs)
    n = next((s[0] for s in (shape(x), shape(off), shape(mask))
              if s is not None and s[0] is not None), None)
    m = w.shape[0] if w is not None and w.shape is not None else None
    if m is None and b is not None and b.shape is not None and len(b.shape) == 1:
        m = b.shape[0]
    return [TensorInfo(x.dtype, (n, m) + tuple(out_sp))]


_FLOATS = ("float16", "float32", "float64")

OPS = (
    define("DeformConv", ("X", "W", "offset", "B?", "mask?"), ("Y",), _deform_conv_kernel,
           (("dilations", "ints", None), ("group", "int", 1), ("kernel_shape", "ints", None),
            ("offset_group", "int", 1), ("pads", "ints", None), ("strides", "ints", None)),
           infer=_deform_conv_infer, dtypes=_FLOATS, since_version=22,
           doc="N-D deformable convolution (offset/mask sampled im2col + grouped GEMM)."),
)

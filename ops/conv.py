"""Operators: conv family (Conv, ConvTranspose).

Convolution is im2col + GEMM, with faster paths chosen by shape (`conv_nd`):

- With oneDNN (ops/onednn.py, the `onednn` extra) and a weight cache, float32 2-D
  convs with kernels past 1x1 (stems, strided convs, few channels, small images; not
  the wide many-channel 3x3s where Winograd below wins, `_onednn_pays`) run as one
  oneDNN primitive on channel-blocked copies, bias and Relu fused.
- 1x1 convs are a plain GEMM on the input (grouped: one batched matmul); grouped
  ones, and ones with at least twice as many outputs as inputs, take their bias
  through the GEMM as a row of ones (`_pointwise_with_ones_row`).
- With numba (ops/jit.py) and a weight cache, 2-D convs with few taps per output and
  few output channels (C*kh*kw <= 144, M <= 32: RGB stems) run as compiled direct
  taps from the stride phases of the padded input (`_conv_direct_taps`).
- 3x3 stride-1 convs with >= 64 input channels and >= 144 output pixels, when the
  caller keeps a weight cache (the Session's fused Conv steps), run Winograd
  F(2x2, 3x3) (`_conv_winograd_3x3`): 2.25x fewer multiplies in the GEMMs (with
  numba's transforms also from 14x14 and fewer channels, and F(4x4, 3x3) on wide
  images, `_winograd_compiled`).
- Stride-1 2-D convs with few output channels (M <= C/2, e.g. DenseNet's 128->32 3x3)
  run GEMM-then-shift (`_conv_taps_2d`), which moves kh*kw*M rather than kh*kw*C
  values per pixel.
- Small feature maps (<= 1024 output pixels, C >= 16) use a channels-last im2col
  (`_conv_nhwc_2d`) whose copies are rows of kw*C contiguous values.
- Otherwise the (zero-padded) input is viewed through `np.lib.stride_tricks.as_strided`
  as windows ``(N, C, *kernel, *out)`` and copied into one image's column matrix for
  one GEMM (the bias a row of ones); groups are a batch axis of the matmul, blocked
  so depthwise columns stay in L2.
- 2-D depthwise convs (group == C == M, no dilation) skip im2col: sums of shifted
  views contracted by einsum, or numba's loops (`conv_depthwise.depthwise_2d`).

ConvTranspose is GEMM followed by col2im, the scatter-add of columns back to an image,
again looping over kernel positions only.

The window/padding arithmetic here (`_pool_geometry`, `_conv_output_shape`, `_pad`,
`_window_slices`, `_im2col`, `_col2im`) is shared with `ops/pool.py` and meant for reuse
by the gradient kernels.
"""

from __future__ import annotations

import itertools
import math
import threading

import numpy as np

from ..errors import OpAttributeError, ShapeError
from . import jit, onednn
from .activation import all_finite
from .activation import relu as relu_op
from .blas import backend, matmul_constant
from .conv_depthwise import _rectified_input, depthwise_2d
from .common import check_result_size, derived, remember
from .registry import TensorInfo, define
from .scratch import scratch as _scratch

# --------------------------------------------------------------------------------------
# Geometry: strides / dilations / pads / output sizes
# --------------------------------------------------------------------------------------


def _ints(value, n, fill):
    """An ints attribute as a list of length n, or [fill]*n when absent/empty."""
    if value is None or len(value) == 0:
        return [fill] * n
    return [int(v) for v in value]


def _auto_pad(attrs) -> str:
    mode = attrs.get("auto_pad") or "NOTSET"
    if isinstance(mode, bytes):
        mode = mode.decode()
    return mode


def _conv_output_shape(in_sp, kernel, strides, dilations, pads_begin, pads_end,
                       ceil_mode=False):
    """Output spatial sizes of a sliding window; None where the input dim is unknown.

    ``ceil_mode`` follows ONNX/PyTorch pooling: round up, but drop a last window that
    would start inside the end padding.

    Raises:
        ShapeError: a window (dilated kernel) is so much longer than the padded input
            that the output size comes out negative (as onnxruntime and ONNX's
            reference refuse it; a size of 0 is allowed, as they allow it).
    """
    out = []
    for i, (n, k, s, d, pb, pe) in enumerate(zip(in_sp, kernel, strides, dilations,
                                                  pads_begin, pads_end)):
        if n is None or k is None:
            out.append(None)
            continue
        span = n + pb + pe - ((k - 1) * d + 1)
        if ceil_mode:
            o = -(-span // s) + 1
            if (o - 1) * s >= n + pb:
                o -= 1
        else:
            o = span // s + 1
        if o < 0:
            raise ShapeError(f"spatial dim {i}: the window (kernel {k}, dilation {d}) spans "
                             f"{(k - 1) * d + 1} but the padded input only {n + pb + pe} "
                             f"({n} + pads {pb} and {pe}): the output size would be {o}")
        out.append(o)
    return out


def _spatial_rank(in_sp, kernel) -> int:
    """The number of spatial dims, after checking the kernel has one per input dim.

    Raises:
        ShapeError: the input has no spatial dim.
        OpAttributeError: kernel_shape holds another number of values.
    """
    if not in_sp:
        raise ShapeError(f"the input has rank {len(in_sp) + 2}; it needs at least 3 (N, C "
                         f"and the spatial dims)")
    if len(kernel) != len(in_sp):
        raise OpAttributeError(f"kernel_shape {list(kernel)} has {len(kernel)} value(s), but "
                               f"the rank-{len(in_sp) + 2} input has {len(in_sp)} spatial "
                               "dims")
    return len(kernel)


def _pool_geometry(in_sp, kernel, attrs, ceil_mode=False):
    """Resolve (strides, dilations, pads_begin, pads_end, out_sp) for Conv and pooling.

    ``auto_pad`` SAME_* gives ``out = ceil(in / stride)`` with the total padding split
    evenly, the odd pixel at the end (SAME_UPPER) or the beginning (SAME_LOWER).
    Unknown input dims (None) give None pads/sizes.

    Raises:
        OpAttributeError: kernel_shape, strides, dilations or pads do not hold one
            positive (pads: non-negative) value per spatial dim of the input (two for
            pads).
        ShapeError: the input has no spatial dim, or a window is longer than its
            padded input (see `_conv_output_shape`).
    """
    nsp = _spatial_rank(in_sp, kernel)
    strides = _ints(attrs.get("strides"), nsp, 1)
    dilations = _ints(attrs.get("dilations"), nsp, 1)
    for name, values in (("kernel_shape", kernel), ("strides", strides),
                         ("dilations", dilations)):
        if len(values) != nsp or any(v is not None and v < 1 for v in values):
            raise OpAttributeError(f"{name} {list(values)} must hold {nsp} positive "
                                   f"values, one per spatial dim")
    mode = _auto_pad(attrs)
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        pb, pe, out = [], [], []
        for n, k, s, d in zip(in_sp, kernel, strides, dilations):
            if n is None:
                pb.append(None)
                pe.append(None)
                out.append(None)
                continue
            o = -(-n // s)
            total = max((o - 1) * s + (k - 1) * d + 1 - n, 0)
            small = total // 2
            if mode == "SAME_UPPER":
                pb.append(small)
                pe.append(total - small)
            else:
                pb.append(total - small)
                pe.append(small)
            out.append(o)
        return _single_window_strides(strides, in_sp, out), dilations, pb, pe, out
    if mode == "VALID":
        pads = [0] * (2 * nsp)
    elif mode == "NOTSET":
        pads = _ints(attrs.get("pads"), 2 * nsp, 0)
    else:
        raise ShapeError(f"unknown auto_pad {mode!r}")
    if len(pads) != 2 * nsp:
        raise OpAttributeError(f"pads {pads} must hold {2 * nsp} values (begin and end "
                               f"of each of the {nsp} spatial dims)")
    if min(pads) < 0:
        raise OpAttributeError(f"pads {pads} must not be negative")
    pb, pe = pads[:nsp], pads[nsp:]
    out = _conv_output_shape(in_sp, kernel, strides, dilations, pb, pe, ceil_mode)
    return _single_window_strides(strides, in_sp, out), dilations, pb, pe, out


def _check_padded_size(op, x_shape, itemsize, pads_begin, pads_end):
    """Refuse pads that make the zero-padded input (N, C, *padded) of x's `x_shape`
    (dims all known) more than MAX_RESULT_BYTES larger than x, before anything is
    padded or allocated: a pads value of 2**40 would reach numpy as "Maximum allowed
    dimension exceeded" or an allocation of terabytes.

    Raises:
        ResourceExhaustedError: naming `op`, the pads and the padded shape.
    """
    if not any(pads_begin) and not any(pads_end):
        return
    padded = list(x_shape[:2]) + [int(d) + int(b) + int(e) for d, b, e in
                                  zip(x_shape[2:], pads_begin, pads_end)]
    check_result_size(op, "the padded input", padded, itemsize,
                      beyond=math.prod(int(d) for d in x_shape) * int(itemsize),
                      cause=f"pads {list(pads_begin) + list(pads_end)}")


def _single_window_strides(strides, in_sp, out_sp):
    """strides with 1 where a dim has a single window and a stride longer than the
    input: it changes nothing there, and a huge one (2**62) would overflow the kernels'
    strided views. (Other strides stay, so the fast paths keyed on them still apply.)"""
    return [1 if o == 1 and n is not None and s > n else s
            for s, n, o in zip(strides, in_sp, out_sp)]


def _pad(x, pads_begin, pads_end, fill=0):
    """Pad the spatial dims (all but the first two) of x; returns x itself if no padding.

    Negative end pads crop.
    """
    if not any(pads_begin) and not any(pads_end):
        return x
    sp = x.shape[2:]
    new_sp = [n + b + max(e, 0) for n, b, e in zip(sp, pads_begin, pads_end)]
    out = np.full(x.shape[:2] + tuple(new_sp), fill, dtype=x.dtype)
    dst = (slice(None), slice(None)) + tuple(
        slice(b, b + n + min(e, 0)) for n, b, e in zip(sp, pads_begin, pads_end))
    src = (slice(None), slice(None)) + tuple(slice(0, n + min(e, 0))
                                             for n, e in zip(sp, pads_end))
    out[dst] = x[src]
    return out


def _pad_for_windows(x, kernel, strides, dilations, pads_begin, pads_end, out_sp, fill=0):
    """Pad x so every one of out_sp windows fits (ceil mode may need extra end padding).

    Returns the padded array; windows then start at 0 in the padded coordinates.
    """
    pe = []
    for n, k, s, d, b, e, o in zip(x.shape[2:], kernel, strides, dilations, pads_begin,
                                   pads_end, out_sp):
        need = (o - 1) * s + (k - 1) * d + 1 if o > 0 else 0
        pe.append(max(need - n - b, e) if o > 0 else e)
    return _pad(x, pads_begin, pe, fill)


def _window_slices(kernel, strides, dilations, out_sp):
    """Yield (kernel_index_tuple, slices) for each kernel position.

    ``xp[(..., *slices)]`` is the strided view of the padded input that kernel position
    meets at every output position, shaped like the output's spatial dims.
    """
    for pos in itertools.product(*(range(k) for k in kernel)):
        # an empty output dim must give an empty slice (a stop below the start would
        # count from the end instead)
        yield pos, tuple(slice(p * d, p * d + (o - 1) * s + 1 if o > 0 else p * d, s)
                         for p, d, o, s in zip(pos, dilations, out_sp, strides))


def _im2col(xp, kernel, strides, dilations, out_sp):
    """Strided view (no copy) of the padded input: shape (N, C, *kernel, *out_sp)."""
    st = xp.strides
    shape = xp.shape[:2] + tuple(kernel) + tuple(out_sp)
    strides_ = st[:2] + tuple(a * d for a, d in zip(st[2:], dilations)) + \
        tuple(a * s for a, s in zip(st[2:], strides))
    return np.lib.stride_tricks.as_strided(xp, shape, strides_, writeable=False)


def _col2im(cols, buf, kernel, strides, dilations, in_sp):
    """Scatter-add columns (N, C, *kernel, *in_sp) into the image buffer buf (N, C, *L).

    Column at kernel position p and input position i lands at buf[..., i*s + p*d]; the
    loop runs over kernel positions only.
    """
    nk = len(kernel)
    for pos, sl in _window_slices(kernel, strides, dilations, in_sp):
        buf[(slice(None), slice(None)) + sl] += cols[(slice(None), slice(None)) + pos
                                                    + (slice(None),) * nk]
    return buf


def _pad_scratch(x, pads_begin, pads_end, purpose):
    """`_pad` into a scratch buffer (non-negative pads); x itself if no padding."""
    if not any(pads_begin) and not any(pads_end):
        return x
    if min(pads_begin) < 0 or min(pads_end) < 0:
        return _pad(x, pads_begin, pads_end)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    out = _scratch(purpose, (n, c) + tuple(d + b + e for d, b, e in
                                          zip(sp, pads_begin, pads_end)), x.dtype)
    inner = (slice(None), slice(None)) + tuple(slice(b, b + d) for d, b in
                                               zip(sp, pads_begin))
    # zero only the borders, then copy the image
    for k, (d, b, e) in enumerate(zip(sp, pads_begin, pads_end)):
        lead = (slice(None), slice(None)) + inner[2:2 + k]
        if b:
            out[lead + (slice(0, b),)] = 0
        if e:
            out[lead + (slice(b + d, None),)] = 0
    out[inner] = x
    return out


def _group(attrs):
    """Conv's `group` attribute (default 1).

    Raises:
        OpAttributeError: it is below 1.
    """
    group = attrs.get("group")
    group = 1 if group is None else int(group)
    if group < 1:
        raise OpAttributeError(f"group {group} must be at least 1")
    return group


def _check_weights(op, x_shape, w_shape, attrs):
    """Conv's and ConvTranspose's W against X and the kernel_shape attribute (shapes may
    hold None for unknown dims; a None shape is unknown).

    Raises:
        ShapeError: W's rank is not X's, or kernel_shape contradicts W's spatial dims.
        OpAttributeError: kernel_shape does not hold one value per spatial dim.
    """
    rank = None if x_shape is None else len(x_shape)
    if rank is not None and rank < 3:
        raise ShapeError(f"{op}: X has rank {rank}; it needs at least 3 (N, C and the "
                         f"spatial dims)")
    if rank is not None and w_shape is not None and len(w_shape) != rank:
        raise ShapeError(f"{op}: W has rank {len(w_shape)} (shape {list(w_shape)}) but X "
                         f"rank {rank}: W needs the same {rank - 2} spatial dims")
    ks = attrs.get("kernel_shape")
    if ks is None or not len(ks):
        return
    nsp = rank - 2 if rank is not None else None if w_shape is None else len(w_shape) - 2
    if nsp is not None and len(ks) != nsp:
        raise OpAttributeError(f"{op}: kernel_shape {list(ks)} has {len(ks)} value(s), "
                               f"expected {nsp}, one per spatial dim")
    if w_shape is not None and any(d is not None and int(k) != d
                                   for k, d in zip(ks, w_shape[2:])):
        raise ShapeError(f"{op}: kernel_shape {list(ks)} differs from W's spatial dims "
                         f"{list(w_shape[2:])}")


def _check_bias(op: str, b, m: int) -> None:
    """Refuse a bias B that is not 1-D with one value per output channel (ONNX's B:
    (M,)), which numpy would broadcast or fail to reshape.

    Raises:
        ShapeError: names the op, B's shape and M.
    """
    if b is not None and np.shape(b) != (m,):
        raise ShapeError(f"{op}: bias B must have shape ({m},), one value per output "
                         f"channel; got {list(np.shape(b))}")


def _compute_dtype(dtype):
    """Kernels compute in float64 for float64 and in float32 for everything else."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


# --------------------------------------------------------------------------------------
# Conv
# --------------------------------------------------------------------------------------


def _conv_kernel(inputs, attrs, ctx):
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    return (conv_nd(x, w, b, attrs),)


# A fused Conv's cache keeps the geometry of at most this many image sizes (a model
# fed ever new sizes would otherwise grow it forever).
_GEOMETRIES_PER_CONV = 64


def conv_nd(x, w, b, attrs, cache=None, shuffle=None, out=None, relu=False, add=None,
            relu_input=False, input_shift=None):
    """N-D convolution (ONNX Conv semantics), x (N, C, *S), w (M, C/group, *k).

    `cache`: a dict the caller keeps for fixed (w, b) (the Session's plan-time Conv
    fusion does), holding GEMM-ready weights across calls.
    `shuffle`: g > 1 returns the output channel-shuffled, channel i*(M/g) + k moved to
    k*g + i (ShuffleNet's Reshape-Transpose-Reshape); a grouped 1x1 conv with
    group == g writes its GEMM straight into the shuffled layout (no extra copy).
    `out`: an (N, M, *out) array of x's dtype (float32/64) whose per-image blocks are
    contiguous (a channel slice of a Concat buffer) to write the result into and
    return; the dense GEMM paths write their GEMM there directly, others copy.
    `relu`: apply max(y, 0) to the result (in the pass that writes it where a path
    has one, else in place at the end).
    `add`: an array added to the result before the Relu (a residual block's shortcut,
    broadcast as Add). When it is an (N, M, *out) array of the compute dtype
    (float32/64), C-contiguous and writeable, the caller gives up its values: the sum
    is written over it and returned, by the GEMM itself where the BLAS backend
    accumulates (group-1 1x1 convs through MKL).
    `relu_input`: convolve max(x, 0) (the Relu of the step before, moved here by the
    Session's rewrite 12: 2-D depthwise convs apply it as they read x, others first);
    with `input_shift` (C,), max(x + input_shift, 0) (the step's bias moved too).

    Raises:
        ShapeError: channels, weight shape and group disagree, `out` does not fit, or
            `add` does not broadcast to the result.
    """
    out_dtype = x.dtype
    cdt = _compute_dtype(out_dtype)
    x = np.asarray(x, dtype=cdt)
    w = _weights_in(w, cdt, cache)
    group = _group(attrs)
    if x.ndim != w.ndim or x.ndim < 3:
        _check_weights("Conv", x.shape, w.shape, attrs)
    n, c = x.shape[:2]
    m = w.shape[0]
    kernel = list(w.shape[2:])
    cg, mg = c // group, m // group
    if w.shape[1] != cg or c % group or m % group:
        raise ShapeError(f"Conv: input channels {c}, weight {w.shape}, group {group}")
    _check_bias("Conv", b, m)
    if cache is None:
        if attrs.get("kernel_shape"):
            _check_weights("Conv", x.shape, w.shape, attrs)
        strides, dilations, pb, pe, out_sp = _pool_geometry(x.shape[2:], kernel, attrs)
        _check_padded_size("Conv", x.shape, cdt.itemsize, pb, pe)
    else:  # the node's attrs are fixed: the geometry and its checks depend on the
        # input's shape only, so they are made once per shape
        geometries = cache.get("geometry")
        if geometries is None:
            geometries = cache["geometry"] = {}
        geometry = geometries.get((x.shape, cdt))
        if geometry is None:  # bounded: a model may see ever new image sizes
            _check_weights("Conv", x.shape, w.shape, attrs)
            geometry = _pool_geometry(x.shape[2:], kernel, attrs)
            _check_padded_size("Conv", x.shape, cdt.itemsize, geometry[2], geometry[3])
            remember(geometries, (x.shape, cdt), geometry, _GEOMETRIES_PER_CONV)
        strides, dilations, pb, pe, out_sp = geometry
    npix = math.prod(out_sp)
    nsp = len(kernel)
    direct = None  # `out` as (N, M, P) when the GEMM writes into it
    if out is not None:
        if out.shape != (n, m) + tuple(out_sp) or out.dtype != cdt or shuffle:
            raise ShapeError(f"Conv: out {out.shape} {out.dtype} does not fit the result")
        direct = out.reshape(n, m, npix)
        if out.size and not np.may_share_memory(direct, out):
            raise ShapeError("Conv: out must merge its spatial dims without a copy")
    acc = None  # `add` as (N, M, P), when the result is to be summed into its memory
    add_relu = False  # the Relu then waits for the sum
    if add is not None:
        if out is None and not shuffle and type(add) is np.ndarray \
                and add.shape == (n, m) + tuple(out_sp) and add.dtype == cdt \
                and add.flags.c_contiguous and add.flags.writeable \
                and not np.may_share_memory(add, x):
            acc = add.reshape(n, m, npix)
        add_relu, relu = relu, False
    accumulated = False  # the GEMM added the product to acc itself
    depthwise = group == c == m and nsp == 2 and dilations == [1, 1] \
        and min(pb + pe) >= 0 and c > 1 and any(k != 1 for k in kernel)
    if relu_input and not depthwise:
        x = _rectified_input(x, input_shift)
    if n == 0 or npix == 0:
        # nothing to compute; the fast paths' reshapes (-1 over zero pixels) would fail
        y = out if out is not None else np.zeros((n, m) + tuple(out_sp), dtype=cdt)
        return _with_residual(y, add, add_relu, out_dtype)

    y = None
    if cache is not None and nsp == 2 and cdt == np.float32 and not shuffle \
            and min(pb + pe) >= 0 and not (relu_input and depthwise) \
            and _onednn_pays(c, m, group, kernel, strides, dilations, out_sp):
        y = _conv_onednn(x, w, b, strides, pb, pe, dilations, group, relu, out_sp, direct,
                         cache)
    if y is not None:
        b, relu = None, False  # oneDNN added them
    elif all(k == 1 for k in kernel) and not any(pb) and not any(pe):
        # 1x1: a plain GEMM on the (possibly strided) input; a stride past the input
        # (one window) reads as 1 (`_single_window_strides`) but still takes one pixel
        if any(s != 1 for s in strides) or x.shape[2:] != tuple(out_sp):
            x = x[(slice(None), slice(None)) + tuple(slice(0, (o - 1) * s + 1, s)
                                                     for o, s in zip(out_sp, strides))]
        y = None
        if group == 1 and cache is not None and _transposed_pays(npix):
            y = _pointwise_transposed(x, w, b, relu, cache, direct if acc is None else acc,
                                      acc is not None)
        if y is not None:
            b, relu, accumulated = None, False, acc is not None
        elif b is not None and cache is not None \
                and (group > 1 or m >= _ONES_ROW_MIN_EXPANSION * c):
            shuffled = group > 1 and shuffle == group
            if shuffled:  # group i's outputs land at channels k*group + i
                y = np.empty((n, mg, group, npix), dtype=cdt)
                shuffle = None
            elif acc is not None and group == 1:
                y, accumulated = acc, True
            else:
                y = np.empty((n, m, npix), dtype=cdt) if direct is None else direct
            _pointwise_with_ones_row(x, _weights_with_bias(w, b, m, cg, cdt, cache), y,
                                     group, shuffled, cache, accumulated)
            b = None
        elif group == 1:
            if acc is not None:
                y, accumulated = acc, True
            else:
                y = np.empty((n, m, npix), dtype=cdt) if direct is None else direct
            for i in range(n):
                _weights_times(w.reshape(m, c), x[i].reshape(c, npix), y[i], cache,
                               accumulated)
        elif shuffle == group:
            # group i's (mg, P) result lands at channels k*group + i: a strided (row
            # stride group*P) GEMM output, no copy
            y = np.empty((n, mg, group, npix), dtype=cdt)
            np.matmul(w.reshape(group, mg, cg), x.reshape(n, group, cg, npix),
                      out=y.transpose(0, 2, 1, 3))
            shuffle = None
            if b is not None:
                b = np.asarray(b, dtype=cdt).reshape(group, mg).T.reshape(m)
        else:
            y = np.matmul(w.reshape(group, mg, cg), x.reshape(n, group, cg, npix))
    else:
        kk = cg * math.prod(kernel)
        nhwc = group == 1 and nsp == 2 and dilations == [1, 1] and min(pb + pe) >= 0 \
            and npix <= _NHWC_MAX_PIXELS and c >= _NHWC_MIN_CHANNELS \
            and (cache is not None or m * kk <= _NHWC_UNCACHED_WEIGHTS)
        compiled = jit.kernels("conv") if cache is not None else None
        if compiled is not None and group == 1 and nsp == 2 and dilations == [1, 1] \
                and min(pb + pe) >= 0 and _direct_taps_pays(c, m, kernel, out_sp):
            y = np.empty((n, m, npix), dtype=cdt) if direct is None else direct
            _conv_direct_taps(compiled, x, w, b, strides, pb, out_sp, cache, relu, y)
            b, relu = None, False
        elif kernel == [3, 3] and group == 1 and strides == [1, 1] and dilations == [1, 1] \
                and min(pb + pe) >= 0 and cache is not None \
                and _winograd_pays(c, m, out_sp, compiled is not None) \
                and _finite(x, w, cache):
            y = np.empty((n, m, npix), dtype=cdt) if direct is None else direct
            _winograd_in_bands(x, w, b, pb, out_sp, cache, relu, y)
            b, relu = None, False
        elif group == 1 and nsp == 2 and 2 * m <= c and strides == [1, 1] \
                and dilations == [1, 1] and min(pb + pe) >= 0 \
                and not (nhwc and npix <= _NHWC_OVER_TAPS_PIXELS):
            y = _conv_taps_2d(x, w, pb, pe, out_sp, cache).reshape(n, m, npix)
        elif nhwc:
            y = np.empty((n, m, npix), dtype=cdt) if direct is None else direct
            _conv_nhwc_2d(x, w, b, strides, pb, pe, out_sp, cache, relu, y)
            b, relu = None, False
        elif depthwise:
            y = np.empty((n, m, npix), dtype=cdt) if direct is None else direct
            depthwise_2d(x, w, strides, pb, out_sp, cache, b,
                         y.reshape((n, m) + tuple(out_sp)), relu_input, input_shift)
            b = None
        elif group == 1:
            xp = _pad_scratch(x, pb, pe, "conv.pad")
            cols = _im2col(xp, kernel, strides, dilations, out_sp)
            # one GEMM per image keeps the im2col copy at one image's size; the bias
            # rides along as a row of ones in the columns (no pass over the output)
            # when [W | b] is cached or cheap to build
            fold = b is not None and (cache is not None or 2 * (kk + 1) < npix)
            wm = _weights_with_bias(w, b, m, kk, cdt, cache) if fold else w.reshape(m, kk)
            if fold:
                b = None
            y = np.empty((n, m, npix), dtype=cdt) if direct is None else direct
            _im2col_gemm(xp, cols, wm, kk, fold, kernel, strides, dilations, out_sp, y,
                         cache)
        else:
            xp = _pad_scratch(x, pb, pe, "conv.pad")
            cols = _im2col(xp, kernel, strides, dilations, out_sp)
            y = _grouped_gemm(w.reshape(group, mg, kk), cols, group, kk, npix)
    if out is not None and y is not direct:
        np.copyto(direct, y.reshape(n, m, npix))
    y = y.reshape((n, m) + tuple(out_sp)) if out is None else out
    if b is not None:
        # broadcast per channel: a cached full-size bias plane adds faster on its own
        # but was no faster in the models (one more cold array per Conv) and held
        # 4-9 MB per model
        y += np.asarray(b, dtype=cdt).reshape((m,) + (1,) * nsp)
    if relu:
        relu_op(y, out=y)
    if shuffle is not None and shuffle > 1:
        y = np.ascontiguousarray(
            y.reshape((n, shuffle, m // shuffle, npix)).transpose(0, 2, 1, 3)
        ).reshape((n, m) + tuple(out_sp))
    if acc is not None:
        if not accumulated:
            np.add(acc, y.reshape(n, m, npix), out=acc)
        return _with_residual(add, None, add_relu, out_dtype)
    return _with_residual(y, add, add_relu, out_dtype)


def _with_residual(y, add, relu, out_dtype):
    """y + add (when add is given, broadcast as Add, into a new array), then Relu in
    place when `relu`, as out_dtype.

    Raises:
        ShapeError: add does not broadcast to y's shape.
    """
    if add is not None:
        try:
            y = np.add(y, add, dtype=y.dtype)
        except ValueError as e:
            raise ShapeError(f"Conv: residual of shape {np.shape(add)} does not "
                             f"broadcast to the output {y.shape}") from e
    if relu:
        relu_op(y, out=y)
    return y.astype(out_dtype, copy=False)


def _weights_in(w, cdt, cache):
    """w in the compute dtype; a float16/bfloat16 w of a cached node is converted once
    and kept in `cache` (a float16 ResNet-50 converted all its weights on every run)."""
    if w.dtype == cdt or cache is None:
        return np.asarray(w, dtype=cdt)
    return derived(cache, ("w", cdt), w, lambda v: np.asarray(v, dtype=cdt))


# A 1x1 conv with many more outputs than inputs (ResNet's 64 -> 256 expansions) takes
# its bias through the GEMM, as a row of ones under a copy of the input: copying C rows
# of the input costs less than a pass over M rows of output that no longer fit in L2.
# Measured, GEMM + bias + Relu against the copy, GEMM + Relu, with cold caches:
# 64 -> 256 on 56x56 0.88x, 128 -> 512 on 28x28 0.92x, 256 -> 1024 on 14x14 0.98x, but
# 256 -> 64 on 56x56 1.21x and 576 -> 256 1.08x.
# Grouped 1x1 convs always do: their bias add broadcasts per channel over the short
# rows of small images, 2-3x the cost of a flat pass (272x14x14: 22 us against 7), and
# one GEMM per group on [x_g; 1] replaces it (ShuffleNet 0.95x, interleaved runs).
_ONES_ROW_MIN_EXPANSION = 2


def _pointwise_with_ones_row(x, wb, y, group=1, shuffled=False, cache=None,
                             accumulate=False):
    """y[i] = [W_g | b_g] @ [x_g[i]; 1] per group g for a 1x1 conv (added to what y
    holds when `accumulate`, group 1 only).

    x (N, C, *S), possibly a strided view; wb (M, C/group + 1), each group's rows
    together (cached in `cache` with its BLAS pack); y (N, M, P), or
    (N, M/group, group, P) when `shuffled` (ShuffleNet's channel shuffle: group g's
    output k lands at channel k*group + g).
    """
    n, c = x.shape[:2]
    cg = c // group
    npix = math.prod(x.shape[2:])
    cols = _scratch("conv.ones_row", (group, cg + 1, npix), wb.dtype)
    cols[:, cg] = 1
    split = (group, cg) + x.shape[2:]
    wg = wb.reshape(group, -1, cg + 1)
    for i in range(n):
        np.copyto(cols[:, :cg].reshape(split), x[i].reshape(split))
        if group == 1:  # a plain GEMM, not a batch of one
            _weights_times(wg[0], cols[0], y[i], cache, accumulate)
        else:
            np.matmul(wg, cols, out=y[i].transpose(1, 0, 2) if shuffled
                      else y[i].reshape(group, -1, npix))


# Small images (7x7 to 13x13) whose pixel count is no multiple of 16 make a poor last
# column block of MKL's packed (M, C) @ (C, P) product; (P, C) @ (C, M) with the packed
# weights on the right runs whole blocks along M, and the transposing copy back to
# (M, P) carries the Relu that would have been its own pass. Measured per 1x1 Conv with
# bias and Relu (one thread, MKL 2026.2, Sapphire Rapids), transposed against direct:
# 2048x512x7x7 0.86, 512x2048x7x7 0.82, 352x1024x7x7 0.83, 192x1024x7x7 0.77,
# 1000x512x13x13 0.69, 384x768x9x9 0.86, 512x1024x10x10 0.93; 8x8 (64 pixels) 0.97
# and 12x12 (144) 1.08, 14x14 (196) 1.16 and up lose.
_TRANSPOSED_MAX_PIXELS = 169


def _transposed_pays(npix):
    """Whether a 1x1 Conv over npix output pixels goes through `_pointwise_transposed`."""
    return npix <= _TRANSPOSED_MAX_PIXELS and npix % 16 != 0


def _pointwise_transposed(x, w, b, relu, cache, out=None, accumulate=False):
    """A group-1 1x1 Conv of x (N, C, *S) as (x[i]^T @ W^T)^T per image through MKL's
    packed GEMM, the weights packed once in `cache`: the bias added to the (P, M) rows,
    Relu (when `relu`) in the transposing copy into the (N, M, P) result, which is
    `out` when given (the transposing pass adds to what `out` holds when `accumulate`).
    None, with nothing written, when the BLAS backend does not take the product (numpy
    then multiplies the usual way)."""
    # MKL's refusals depend on the shapes only: remembered per input shape, so a
    # product it will not take costs a dict lookup, not a reshaped call, every run
    declines = cache.get("pointwise_t_declined")
    if declines is None:
        declines = cache["pointwise_t_declined"] = {}
    if (x.shape[1:], x.dtype) in declines or backend() != "mkl":
        return None
    n, c = x.shape[:2]
    m = w.shape[0]
    npix = math.prod(x.shape[2:])
    wt = w.reshape(m, c).T
    yt = _scratch("conv.pointwise_t", (npix, m), x.dtype)
    y = out
    for i in range(n):
        if matmul_constant(x[i].reshape(c, npix).T, wt, cache, "b", yt) is None:
            remember(declines, (x.shape[1:], x.dtype), True, _GEOMETRIES_PER_CONV)
            return None  # the same shapes every image: only the first can decline
        if y is None:
            y = np.empty((n, m, npix), dtype=x.dtype)
        if b is not None:
            np.add(yt, np.asarray(b, dtype=yt.dtype), out=yt)
        if accumulate:
            np.add(y[i], yt.T, out=y[i])
            if relu:
                relu_op(y[i], out=y[i])
        elif relu:
            relu_op(yt.T, out=y[i])
        else:
            np.copyto(y[i], yt.T)
    return y


def _weights_times(wm, cols, out, cache, accumulate=False):
    """out = wm @ cols (out += wm @ cols when `accumulate`) for the conv's weights wm
    (fixed while `cache` lives, or any weights when cache is None): the BLAS backend's
    packed product where it pays (ops/blas.py; it accumulates in the same pass), numpy's
    otherwise."""
    if cache is not None and matmul_constant(wm, cols, cache, "a", out,
                                             accumulate) is not None:
        return
    if accumulate:
        out += np.matmul(wm, cols)
    else:
        np.matmul(wm, cols, out=out)


def _weights_with_bias(w, b, m, kk, cdt, cache):
    """[W | b] as an (M, K+1) matrix (cached in `cache` when given)."""
    wb = cache.get("w_bias") if cache is not None else None
    if wb is None or wb.dtype != cdt:
        wb = np.empty((m, kk + 1), dtype=cdt)
        wb[:, :kk] = w.reshape(m, kk)
        wb[:, kk] = np.asarray(b, dtype=cdt).reshape(m)
        if cache is not None:
            cache["w_bias"] = wb
    return wb


# The columns are built and multiplied in blocks of output rows of about this size:
# the GEMM then packs columns that were just written and are still in cache. Measured
# against one image-sized column matrix: 7x7/2 stems (147 x 12544) 0.88x, 11x11/4
# (363 x 2916) 0.95x, 3x3 on 3x224x224 (27 x 50176) 0.93x; 1 MiB blocks gained less, 4 MiB
# nothing, and matrices below the size (the 3x3/2 stems, 144 x 3025) stay one block.
# Every block repeats the per-tap copy calls, which in the model cost more than the
# blocks save for AlexNet's 121-tap stem (+7%, against -6 to -8% for the 7x7 and
# 3x3 stems), so blocking stops where blocks x taps would pass _COLS_BLOCK_COPIES.
_COLS_BLOCK_BYTES = 2 << 20
_COLS_BLOCK_COPIES = 256


def _im2col_gemm(xp, cols, wm, kk, fold, kernel, strides, dilations, out_sp, y,
                 cache=None):
    """y[i] = wm @ im2col(xp[i]) for every image, with the bias row of ones when
    `fold`; the columns are copied and multiplied in blocks of output rows. wm is
    fixed while `cache` (the node's, or None) lives."""
    rows_out = out_sp[0]
    per_row = math.prod(out_sp[1:])
    k_rows = kk + fold
    rows = max(1, _COLS_BLOCK_BYTES // max(1, k_rows * per_row * wm.itemsize))
    if -(-rows_out // rows) * math.prod(kernel) > _COLS_BLOCK_COPIES:
        rows = rows_out
    rows = max(1, min(rows, rows_out))
    flat = _scratch("conv.cols", (k_rows * rows * per_row,), wm.dtype)
    for i in range(xp.shape[0]):
        copy_rows = _im2col_rows(xp[i], cols[i], kernel, strides, dilations)
        for r0 in range(0, rows_out, rows):
            r1 = min(rows_out, r0 + rows)
            width = (r1 - r0) * per_row
            # contiguous for every block width, so the copy's reshape is always a view
            blk = flat[:k_rows * width].reshape(k_rows, width)
            copy_rows(r0, r1, blk[:kk])
            if fold:
                blk[kk] = 1
            _weights_times(wm, blk, y[i, :, r0 * per_row:r1 * per_row], cache)


def _im2col_rows(xpi, cols_i, kernel, strides, dilations):
    """A function copy(r0, r1, out) that writes output rows [r0, r1) (first spatial
    dim) of one image's im2col view (C, *kernel, *out) into `out` (K, pixels).

    2-D convs with a horizontal stride split the padded image into its column phases
    once, so every tap copies contiguous row pieces instead of strided elements.
    """
    lead = (slice(None),) * (1 + len(kernel))
    sw = strides[-1]
    if len(kernel) != 2 or sw == 1 or dilations != [1, 1]:
        def copy(r0, r1, out):
            part = cols_i[lead + (slice(r0, r1),)]
            np.copyto(out.reshape(part.shape), part)
        return copy
    kh, kw = kernel
    sh = strides[0]
    wo = cols_i.shape[-1]
    phases = []
    for j in range(min(sw, kw)):
        src = xpi[:, :, j::sw]
        ph = _scratch(f"conv.phase{j}", src.shape, src.dtype)
        np.copyto(ph, src)
        phases.append(ph)

    def copy(r0, r1, out):
        dst = out.reshape(cols_i.shape[:3] + (r1 - r0, wo))
        for a in range(kh):
            taps = slice(r0 * sh + a, (r1 - 1) * sh + a + 1, sh)
            for bb in range(kw):
                q = bb // sw
                np.copyto(dst[:, a, bb], phases[bb % sw][:, taps, q:q + wo])
    return copy


# Winograd F(2x2, 3x3) for 3x3 stride-1 convs with enough channels and pixels: 16
# GEMMs of (M, C) @ (C, tiles) replace the 9-tap im2col GEMM, 2.25x fewer multiplies
# for passes of additions over C + M planes and ~60 numpy calls. What it saves grows
# with C*M per pixel, what it costs with (C + M) per pixel plus the fixed calls, so
# the rule is on C*M/(C+M) and the image size. Measured against the other paths
# (im2col, channels-last, GEMM-then-shift), conv alone:
#   wins: 32x27x27 -> 128 0.81x, 48x28x28 -> 64 0.74x, 32x56x56 -> 64 0.77x,
#         64x13x13 -> 256 0.82x, 96x14x14 -> 128 0.76x, 128x28x28 -> 32 0.67x
#   ties: 16x55x55 -> 64, 32x28x28 -> 32, 64x14x14 -> 64, 128x14x14 -> 32
#   loses: 32x20x20 -> 48 1.16x, 40x14x14 -> 96 1.23x, 32x13x13 -> 128 1.30x, and
#         every 7x7 image (96 -> 96 1.26x, 512 -> 512 1.21x)
_WINO_MIN_PIXELS = 144
_WINO_MIN_HARMONIC = 20        # C*M/(C+M), from 20x20 outputs up
_WINO_SMALL_PIXELS = 400
_WINO_SMALL_MIN_HARMONIC = 48  # below 20x20
# With numba's transforms (conv_jit.py, JIT backend numba) the transforms cost one pass
# each, and Winograd also wins from 14x14 outputs at C*M/(C+M) >= 16: 128 -> 32 at
# 14x14 0.74x (DenseNet's growth convs), 32 -> 32 at 28x28 0.79x and 56x56 0.71x,
# 64 -> 64 at 14x14 0.88x; ties at 40 -> 96 14x14 and 32 -> 48 20x20; loses below:
# 16 -> 64 at 55x55 1.23x, 48 -> 192 at 13x13 1.16x, 128 -> 32 at 7x7 1.17x
_WINO_COMPILED_MIN_PIXELS = 196
_WINO_COMPILED_MIN_HARMONIC = 16


def _winograd_pays(c, m, out_sp, compiled=False):
    """Whether Winograd F(2x2, 3x3) beats the other paths for C input and M output
    channels and this output size (measured per shape; see the constants above);
    `compiled`: with numba's transforms."""
    npix = out_sp[0] * out_sp[1]
    if compiled and npix >= _WINO_COMPILED_MIN_PIXELS \
            and c * m >= _WINO_COMPILED_MIN_HARMONIC * (c + m):
        return True
    if npix < _WINO_MIN_PIXELS:
        return False
    need = _WINO_MIN_HARMONIC if npix >= _WINO_SMALL_PIXELS else _WINO_SMALL_MIN_HARMONIC
    return c * m >= need * (c + m)


# Tall images go through Winograd in bands of this many output rows (a multiple of
# the 2-row tiles): a whole 56x56 image's transform planes (M x 812 per tile
# position) overflow L2. Measured, conv alone, interleaved: 64x56x56 -> 192 5146 vs
# 5813 us, 64x56x56 -> 64 1913 vs 2160 us; 28x28 images gain nothing (left whole).
_WINO_BAND_ROWS = 16
# ... and F(4x4, 3x3) in bands of this many: 16 rows are only 4 rows of its tiles, too
# few columns for its GEMMs (64 -> 64 at 56x56: whole image 1400 us, bands of 16 2095)
_WINO4_BAND_ROWS = 64


def _finite(x, w, cache):
    """Whether x and w hold no inf or NaN (the weights' answer cached) and x no value
    near the float range. Winograd's transforms subtract inputs, so an inf becomes
    inf - inf = NaN and any non-finite value spreads over whole 4x4 tiles, and their
    sums of finite values near the range's end (|x| ~ 1e38) overflow: such inputs take
    a direct path. x's check is its sum of squares (one BLAS dot, as all_finite's): it
    is finite exactly when x is and no |x| reaches about 1e19 / sqrt(x.size), far
    beyond any activation."""
    ok = cache.get("finite")
    if ok is None:
        ok = cache["finite"] = all_finite(w)
    if not ok:
        return False
    flat = x.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(np.dot(flat, flat)))


def _winograd_in_bands(x, w, b, pb, out_sp, cache, relu, y):
    """`_conv_winograd_3x3` into y (N, M, P), run on horizontal bands of
    _WINO_BAND_ROWS output rows (_WINO4_BAND_ROWS for F(4x4, 3x3)) when the image has
    more than twice as many."""
    ho, wo = out_sp
    rows = _WINO_BAND_ROWS
    if _winograd4_pays(x.shape[1], w.shape[0], wo) and jit.kernels("conv") is not None:
        rows = _WINO4_BAND_ROWS
    if not rows or ho <= 2 * rows:
        _conv_winograd_3x3(x, w, b, pb, out_sp, cache, relu, y)
        return
    h = x.shape[2]
    top = pb[0]
    y4 = y.reshape(y.shape[:2] + (ho, wo))
    for o0 in range(0, ho, rows):
        o1 = min(ho, o0 + rows)
        # input rows o0 - top .. o1 + 1 - top feed output rows o0 .. o1 - 1; those
        # above the image are the band's own top padding, those below read as zeros
        i0 = o0 - top
        lo = min(h, max(0, i0))
        hi = max(lo, min(h, o1 + 2 - top))
        _conv_winograd_3x3(x[:, :, lo:hi], w, b, [max(0, -i0), pb[1]], [o1 - o0, wo],
                           cache, relu, y4[:, :, o0:o1])


# G of Winograd F(2x2, 3x3) and F(4x4, 3x3): U = G g G^T transforms a 3x3 kernel g
_WINO_G = {2: ((1, 0, 0), (.5, .5, .5), (.5, -.5, .5), (0, 0, 1)),
           4: ((1 / 4, 0, 0), (-1 / 6, -1 / 6, -1 / 6), (-1 / 6, 1 / 6, -1 / 6),
               (1 / 24, 1 / 12, 1 / 6), (1 / 24, -1 / 12, 1 / 6), (0, 0, 1))}


def _winograd_weights(w, cache, dtype, tile=2):
    """U = G g G^T per (output, input) channel pair, as ((tile + 2)^2, M, C), for
    F(tile x tile, 3x3), computed in float64 and cached."""
    key = ("w_winograd", dtype) if tile == 2 else ("w_winograd", dtype, tile)
    u = cache.get(key)
    if u is None:
        g = np.array(_WINO_G[tile])
        u = np.einsum("ra,mcab,sb->rsmc", g, w.astype(np.float64), g)
        u = cache[key] = np.ascontiguousarray(
            u.reshape((tile + 2) ** 2, w.shape[0], w.shape[1]), dtype=dtype)
    return u


def _phase_extent(parity, pad, size, room):
    """Where the phase of rows (or columns) `parity` of an image padded by `pad` in
    front meets the unpadded image of `size`: (first phase index inside it, the image
    index it holds, how many of the `room` phase entries hold image values)."""
    first = (pad - parity + 1) // 2 if pad > parity else 0
    start = 2 * first + parity - pad
    count = min(room - first, (size - start + 1) // 2) if start < size else 0
    return first, start, max(0, count)


# B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]: row k as
# (tap a0, tap a1, sign of a1)
_WINO_BT = ((0, 2, -1), (1, 2, 1), (2, 1, -1), (1, 3, -1))


def _conv_winograd_3x3(x, w, b, pb, out_sp, cache, relu, y):
    """3x3 stride-1 conv (group 1, pads >= 0) by Winograd F(2x2, 3x3), into y (N, M, P).

    The padded image is split into its four 2x2 phases (padding written as zeros
    there, no padded copy), each channel's phase flattened row-major with a spare row
    and column: element (r, s) of every 4x4 input tile is then the phase (r % 2, s % 2)
    shifted by (r // 2) rows and s // 2 columns, so B^T d B is a few long 1-D additions
    over all channels at once. B^T's rows run one at a time (row k: both column
    parities combined, then the four column taps as shifts of those two): the four
    planes v[4k + s] go through a batched GEMM with the cached transformed weights,
    whose products land in the rows of the output transform A^T m A (only 4 + 8 planes
    live at once). The bias is added to the plane that reaches all four outputs of a
    tile (m_11). A^T's columns then run contiguously and are interleaved into output
    rows by two strided copies (carrying the Relu when `relu`); rows wrap into the
    spare column, which the final crop drops. y may also be an (N, M, ho, wo) view
    with contiguous rows (a band of a taller output).
    """
    compiled = jit.kernels("conv")
    if compiled is not None:
        _winograd_compiled(compiled, x, w, b, pb, out_sp, cache, relu, y)
        return
    n, c, h, wd = x.shape
    m = w.shape[0]
    top, left = pb
    ho, wo = out_sp
    th, tw = (ho + 1) // 2, (wo + 1) // 2           # 2x2 output tiles
    hq, wq = th + 2, tw + 1                         # phase size, spare row and column
    plane, span = hq * wq, th * wq
    dt = x.dtype
    u = _winograd_weights(w, cache, dt).reshape(4, 4, m, c)
    bias = None if b is None else np.asarray(b, dtype=dt).reshape(m, 1)
    phases = _scratch("conv.wino_phases", (4, c * plane), dt)
    rowsum = _scratch("conv.wino_r", (2, c * plane), dt)
    v = _scratch("conv.wino_v", (4, c, plane), dt)
    prod = _scratch("conv.wino_m", (4, m, span), dt)
    rows = _scratch("conv.wino_rows", (2, 4, m, span), dt)
    cols = _scratch("conv.wino_o", (2, m, span), dt)
    pairs = _scratch("conv.wino_z", (m, th, wq, 2), dt)
    vf = v.reshape(4, c * plane)
    ph4 = phases.reshape(4, c, hq, wq)
    pf = pairs.reshape(m, span, 2)
    prow = pairs.reshape(m, th, 2 * wq)
    extents = [(_phase_extent(k // 2, top, h, hq), _phase_extent(k % 2, left, wd, wq))
               for k in range(4)]
    # every shift below (at most one row and one column) stays inside the buffers;
    # positions past a channel's last used tile row only feed the cropped spare
    lim = c * plane - wq - 1
    vs = v[:, :, :span]
    for i in range(n):
        phases[...] = 0
        for k, ((r0, xr, nr), (c0, xc, nc)) in enumerate(extents):
            if nr and nc:
                np.copyto(ph4[k, :, r0:r0 + nr, c0:c0 + nc],
                          x[i, :, xr:xr + 2 * nr - 1:2, xc:xc + 2 * nc - 1:2])
        for k, (a0, a1, sign) in enumerate(_WINO_BT):
            combine = np.add if sign > 0 else np.subtract
            o0, o1 = (a0 // 2) * wq, (a1 // 2) * wq
            for par in (0, 1):
                combine(phases[2 * (a0 % 2) + par, o0:o0 + lim + 1],
                        phases[2 * (a1 % 2) + par, o1:o1 + lim + 1],
                        out=rowsum[par, :lim + 1])
            even, odd = rowsum[0], rowsum[1]    # column taps 0, 2 / 1, 3
            np.subtract(even[:lim], even[1:lim + 1], out=vf[0, :lim])
            np.add(odd[:lim], even[1:lim + 1], out=vf[1, :lim])
            np.subtract(even[1:lim + 1], odd[:lim], out=vf[2, :lim])
            np.subtract(odd[:lim], odd[1:lim + 1], out=vf[3, :lim])
            # A^T = [[1, 1, 1, 0], [0, 1, -1, -1]] on tile rows: rows[0] sums the
            # products of B^T rows 0..2, rows[1] is row 1 minus rows 2 and 3; the
            # first two GEMMs write straight into them
            if k == 0:
                np.matmul(u[0], vs, out=rows[0])
            elif k == 1:
                np.matmul(u[1], vs, out=rows[1])
                if bias is not None:
                    rows[1, 1] += bias
                rows[0] += rows[1]
            else:
                np.matmul(u[k], vs, out=prod)
                if k == 2:
                    rows[0] += prod
                rows[1] -= prod
        yi = y[i].reshape(m, ho, wo) if y.ndim == 3 else y[i]
        for p in (0, 1):
            r = rows[p]
            np.add(r[0], r[1], out=cols[0])
            cols[0] += r[2]
            np.subtract(r[1], r[2], out=cols[1])
            cols[1] -= r[3]
            for q in (0, 1):
                if relu:
                    relu_op(cols[q], out=pf[:, :, q])
                else:
                    np.copyto(pf[:, :, q], cols[q])
            np.copyto(yi[:, p::2], prow[:, :(ho - p + 1) // 2, :wo])


def _winograd_compiled(kernels, x, w, b, pb, out_sp, cache, relu, y):
    """`_conv_winograd_3x3` with numba's transforms (conv_jit.py), F(2x2, 3x3) or, where
    `_winograd4_pays`, F(4x4, 3x3): per image the input transform into (tile + 2)^2
    planes (C, tiles), one GEMM per plane with the cached transformed weights, the
    output transform (+ bias, Relu) into y, one compiled pass each instead of two dozen
    numpy passes. Measured per conv against the numpy transforms, F(2x2): 64->64 at
    56x56 1958 -> 1698 us, 64->192 at 56x56 4884 -> 3877, 128->128 at 28x28 1430 ->
    1305, 256->256 at 14x14 1388 -> 1237."""
    n, c = x.shape[:2]
    m = w.shape[0]
    ho, wo = out_sp
    tile = 4 if _winograd4_pays(c, m, wo) else 2
    th, tw = -(-ho // tile), -(-wo // tile)
    planes = (tile + 2) ** 2
    dt = x.dtype
    u = _winograd_weights(w, cache, dt, tile)
    v = _wino_planes("conv.wino_v", planes, c, th * tw, dt)
    prod = _wino_planes("conv.wino_m", planes, m, th * tw, dt)
    bias = np.zeros(m, dt) if b is None else np.ascontiguousarray(np.asarray(b, dt))
    x = np.ascontiguousarray(x)
    transform_in, transform_out = (kernels.winograd4_input, kernels.winograd4_output) \
        if tile == 4 else (kernels.winograd_input, kernels.winograd_output)
    for i in range(n):
        transform_in(x[i], pb[0], pb[1], th, tw, v)
        _winograd_products(u, v, prod, cache)
        yi = y[i].reshape(m, ho, wo) if y.ndim == 3 else y[i]
        transform_out(prod, bias, relu, dt.type(0), yi)


def _winograd_products(u, v, prod, cache):
    """prod[k] = u[k] @ v[k] for every Winograd plane k: through MKL's packed GEMM
    plane by plane where it takes them (large weights: 256 -> 256 at 56x56, F(4x4),
    5.7 against 6.7 ms batched), else as numpy's one batched matmul, whose GEMMs run
    in one call instead of a Python loop of small ones (in the models, against that
    loop: Inception v2 -3.6%, DenseNet-121 -2.5%, ResNet-50 -2.1%, Inception v1 -1.6%,
    VGG-19 unchanged; interleaved A/B)."""
    if matmul_constant(u[0], v[0], cache, "a", prod[0]) is None:
        np.matmul(u, v, out=prod)
        return
    for k in range(1, u.shape[0]):
        _weights_times(u[k], v[k], prod[k], cache)


# Winograd F(4x4, 3x3) (numba's transforms only) for images from 28 columns wide with
# at least 64 channels on both sides, where its 2.25 multiplies per output (against
# F(2x2)'s 4) outweigh costlier transforms. Its float32 results lie within about 1e-5
# of the largest output (F(2x2): 4e-7). Measured per conv against F(2x2): 64 -> 64 at
# 56x56 0.79x, 64 -> 192 at 56x56 0.72x, 128 -> 128 and 96 -> 96 at 28x28 0.76-0.79x;
# ties or losses at 256 -> 256 14x14 1.05x, 32 -> 128 27x27 1.01x, 128 -> 32 28x28 1.05x.
_WINO4_MIN_WIDTH = 28
_WINO4_MIN_CHANNELS = 64


def _winograd4_pays(c, m, width):
    """Whether F(4x4, 3x3) beats F(2x2, 3x3) (numba's transforms) for C input and M
    output channels and outputs `width` columns wide."""
    return width >= _WINO4_MIN_WIDTH and min(c, m) >= _WINO4_MIN_CHANNELS


def _wino_planes(purpose, count, rows, cols, dtype):
    """`count` scratch planes of (rows, cols) whose starts lie an odd number of 64-byte
    lines apart: planes a multiple of 4 KiB apart share the L1's sets (4K aliasing),
    which made the transforms of 64 channels of 28x28 tiles 7x slower."""
    line = 64 // dtype.itemsize
    stride = -(-rows * cols // line) * line
    if (stride // line) % 2 == 0:
        stride += line
    return _scratch(purpose, (count, stride), dtype)[:, :rows * cols].reshape(
        count, rows, cols)


# Convs with few taps per output (C*kh*kw) and few output channels, straight from the
# stride phases of the padded input in numba (conv_jit.direct_taps): the GEMM on their
# im2col columns has too short a K (27 for a 3x3 RGB stem) and too few rows (M) to run
# at speed. Measured per conv without Relu, caches cold (median, one thread), im2col +
# GEMM -> direct taps: 3 -> 24 3x3/2 on 224x224 (ShuffleNet's stem) 690 -> 460 us,
# 3 -> 32 3x3/2 775 -> 550, 3 -> 16 3x3 at 224x224 1470 -> 1050, 16 -> 16 3x3 at
# 112x112 1700 -> 870, 16 -> 32 at 56x56 675 -> 625, 8 -> 32 at 28x28 220 -> 155;
# ties at 48 outputs, slower from 64 (3 -> 64 3x3/2 1.1x, 3x3/1 1.2x: the GEMM's rows
# are enough there) and past 144 taps.
_DIRECT_MAX_TAPS = 144
_DIRECT_MAX_OUTPUTS = 32
# Output rows per band: the band's input rows stay in cache while every block of four
# output channels reads them (512 to 1024 values measured alike, 256 slower)
_DIRECT_BAND_VALUES = 1024


# Which float32 2-D convs oneDNN runs (ops/onednn.py), from per-conv timings with bias
# and Relu, one thread, Sapphire Rapids, the reorders to and from its blocked layouts
# included (oneDNN's time / this module's): stems 3 -> 64 3x3/2 on 224 0.57, 7x7/2
# 0.52; 3x3/2 0.55-0.65; 3x3 with few channels 16 -> 64 on 55x55 0.63, 32 -> 128 on
# 27x27 0.64, 128 -> 32 on 56x56 0.75; 3x3 on 14x14 and less 0.62-0.85. Where the
# 3x3 stride-1 convs have many channels on large images, Winograd's fewer
# multiplications win: 128 -> 128 on 112x112 1.30, 256 -> 256 on 56x56 1.96,
# 512 -> 512 on 28x28 1.59, 64 -> 192 on 56x56 1.24, 128 -> 128 on 28x28 1.18, (at
# 14x14) 512 -> 512 1.07; the line runs at C*M/(C+M) = 40 from 28x28 up (64 -> 64 on
# 224x224 0.81, 64 -> 96 on 28x28 0.91), 128 below. 1x1 convs are GEMMs on the NCHW
# input already (oneDNN's: 0.94-1.38), depthwise convs numba's (1.3-1.7).
_ONEDNN_WIDE_IMAGE = 28
_ONEDNN_MAX_HARMONIC_WIDE = 40
_ONEDNN_MAX_HARMONIC = 128
_ONEDNN_ANY_IMAGE = 7


def _onednn_pays(c, m, group, kernel, strides, dilations, out_sp):
    """Whether a float32 2-D conv of a Session's plan goes through oneDNN
    (ops/onednn.py) when that backend is active (see the measurements above)."""
    if group != 1 or all(k == 1 for k in kernel):
        return False
    if kernel != [3, 3] or strides != [1, 1] or dilations != [1, 1] \
            or min(out_sp) <= _ONEDNN_ANY_IMAGE:
        return True
    limit = _ONEDNN_MAX_HARMONIC_WIDE if min(out_sp) >= _ONEDNN_WIDE_IMAGE \
        else _ONEDNN_MAX_HARMONIC
    return c * m <= limit * (c + m)


def _conv_onednn(x, w, b, strides, pb, pe, dilations, group, relu, out_sp, direct,
                 cache):
    """A float32 2-D conv (+ bias, + Relu when `relu`) through oneDNN into `direct` (or a
    new (N, M, P) array), returned; None when the oneDNN backend is off or declines.

    Raises:
        ExecutionError: oneDNN failed.
    """
    # oneDNN's fused Relu is max(y, 0) in a form that gives 0 for NaN (onnxruntime's
    # and conv.py's keep NaN): inputs that may make NaN take conv.py's paths
    if not onednn.active() or relu and not np.isfinite(x).all():
        return None
    n, m = x.shape[0], w.shape[0]
    y = np.empty((n, m, math.prod(out_sp)), dtype=np.float32) if direct is None \
        else direct
    if onednn.conv_2d(np.ascontiguousarray(x), w, b, strides, pb, pe, dilations, group,
                      relu, y.reshape((n, m) + tuple(out_sp)), cache):
        return y
    return None


def _direct_taps_pays(c, m, kernel, out_sp):
    """Whether a group-1 2-D conv with C input and M output channels goes through
    `direct_taps` (numba's; see the measurements above)."""
    return min(out_sp) > 0 and m <= _DIRECT_MAX_OUTPUTS \
        and c * kernel[0] * kernel[1] <= _DIRECT_MAX_TAPS


def _conv_direct_taps(kernels, x, w, b, strides, pb, out_sp, cache, relu, y):
    """2-D conv (group 1, no dilation, pads >= 0) into y (N, M, P), returned, by numba's
    direct taps (conv_jit.direct_taps, + bias and Relu when `relu`): per image, x copied
    into the stride phases of its padded form (a buffer per thread and input shape,
    kept in `cache`, whose padding positions are never written: threads sharing a
    Session run this conv at once), then one pass per four output channels. The taps
    come in groups of nine; the spare taps of the last group read a zero plane past
    the phases (a zero weight times an inf there would be NaN)."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    sh, sw = strides
    ho, wo = out_sp
    dt = x.dtype
    key = (x.shape[1:], dt)
    layouts = cache.get("direct_taps")
    if layouts is None:
        layouts = cache.setdefault("direct_taps", {})
    layout = layouts.get(key)
    if layout is None:
        hq = ho + (kh - 1) // sh + 1     # a spare row: the junk columns read past
        wq = wo + (kw - 1) // sw
        size = c * sh * sw * hq * wq
        taps = [((ci * sh + a % sh) * sw + t % sw) * hq * wq + (a // sh) * wq + t // sw
                for ci in range(c) for a in range(kh) for t in range(kw)]
        groups = -(-len(taps) // 9)
        offsets = np.array(taps + [size] * (9 * groups - len(taps)), np.int64)
        blocks = -(-m // 4)
        wt = np.zeros((4 * blocks, 9 * groups), dt)
        wt[:m, :len(taps)] = w.reshape(m, -1)
        weights = np.ascontiguousarray(
            wt.reshape(blocks, 4, groups, 9).transpose(0, 2, 1, 3))
        rows = max(1, min(ho, _DIRECT_BAND_VALUES // wq))
        bias = np.zeros(m, dt) if b is None else np.ascontiguousarray(np.asarray(b, dt))
        layout = ((c, sh, sw, hq, wq), offsets, weights, rows, bias)
        remember(layouts, key, layout, _GEOMETRIES_PER_CONV)
    grid_shape, offsets, weights, rows, bias = layout
    size, wq = math.prod(grid_shape), grid_shape[4]
    mine = cache.get("direct_taps_buffers")
    if mine is None:
        mine = cache.setdefault("direct_taps_buffers", threading.local())
    buffers = getattr(mine, "by_shape", None)
    if buffers is None:
        buffers = mine.by_shape = {}
    phases = buffers.get(key)
    if phases is None:   # (the spare zero plane past the phases: grid_shape[3] rows)
        phases = remember(buffers, key, np.zeros(size + grid_shape[3] * wq, dt),
                          _GEOMETRIES_PER_CONV)
    grid = phases[:size].reshape(grid_shape)
    x = np.ascontiguousarray(x)
    for i in range(n):
        kernels.into_stride_phases(x[i], sh, sw, pb[0], pb[1], grid)
        kernels.direct_taps(phases, offsets, weights, bias, relu, dt.type(0), wq, rows,
                            y[i].reshape(m, ho, wo))
    return y


# Channels-last im2col for small feature maps (the deep layers of Inception, ResNet,
# SqueezeNet): the NCHW window view copies rows of only `wo` values (7 or 14), the
# channels-last one rows of kw*C contiguous values; the GEMM is the same, transposed.
# Measured 5-28% faster per conv up to 28x28 outputs with C >= 16, slower at 56x56.
_NHWC_MAX_PIXELS = 1024
_NHWC_MIN_CHANNELS = 16
_NHWC_UNCACHED_WEIGHTS = 1 << 16  # reorder weights per call only when this small
# ... and ahead of GEMM-then-shift up to 16x16 outputs (128x7x7 -> 32: 77 vs 135 us)
_NHWC_OVER_TAPS_PIXELS = 256


def _conv_nhwc_2d(x, w, b, strides, pb, pe, out_sp, cache, relu, y):
    """2-D conv (group 1, no dilation, pads >= 0) by channels-last im2col, into y.

    Per image: the padded image as (hp, wp, C), its windows as (ho, wo, kh, kw*C) rows
    copied into columns (P, K [+1 ones column for the bias]), one GEMM with the
    reordered weights (K [+1], M) cached in `cache`, and the (P, M) result written
    transposed into y (N, M, P), with the bias already in and Relu applied in the same
    pass when `relu`.
    """
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    sh, sw = strides
    ho, wo = out_sp
    hp, wp = h + pb[0] + pe[0], wd + pb[1] + pe[1]
    kk = kh * kw * c
    ones = b is not None
    key = ("w_nhwc", x.dtype)
    wt = cache.get(key) if cache is not None else None
    if wt is None:
        wt = np.empty((kk + ones, m), dtype=x.dtype)
        wt[:kk] = w.transpose(2, 3, 1, 0).reshape(kk, m)
        if ones:
            wt[kk] = np.asarray(b, dtype=x.dtype).reshape(m)
        if cache is not None:
            cache[key] = wt
    xp = _scratch("conv.nhwc_pad", (hp, wp, c), x.dtype)
    top, left = pb
    if top:
        xp[:top] = 0
    if hp > top + h:
        xp[top + h:] = 0
    if left:
        xp[top:top + h, :left] = 0
    if wp > left + wd:
        xp[top:top + h, left + wd:] = 0
    cols = _scratch("conv.nhwc_cols", (ho * wo, kk + ones), x.dtype)
    if ones:
        cols[:, kk] = 1
    s0, s1, s2 = xp.strides
    win = np.lib.stride_tricks.as_strided(xp, (ho, wo, kh, kw * c),
                                          (sh * s0, sw * s1, s0, s2), writeable=False)
    dst = cols[:, :kk].reshape(ho, wo, kh, kw * c)  # a view: only splits axes
    if not np.may_share_memory(dst, cols):
        raise AssertionError("channels-last im2col: column view was copied")
    yt = _scratch("conv.nhwc_out", (ho * wo, m), x.dtype)
    for i in range(n):
        np.copyto(xp[top:top + h, left:left + wd], x[i].transpose(1, 2, 0))
        np.copyto(dst, win)
        if cache is None or matmul_constant(cols, wt, cache, "b", yt) is None:
            np.matmul(cols, wt, out=yt)
        if relu:
            relu_op(yt.T, out=y[i])
        else:
            np.copyto(y[i], yt.T)


def _conv_taps_2d(x, w, pb, pe, out_sp, cache=None):
    """Stride-1 2-D conv with few output channels (M <= C/2): GEMM first, shift after.

    One GEMM (kh*kw*M, C) @ (C, padded pixels) gives every tap's contribution at every
    padded position; the output is the sum of the kh*kw planes, each shifted by its tap
    offset in the row-major padded image (rows wrap into the pad columns, which are
    cropped). This writes kh*kw*M values per pixel instead of im2col's kh*kw*C.
    The reordered weights are kept in `cache` when given (the node's, for fixed w).
    """
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    ho, wo = out_sp
    hp, wp = h + pb[0] + pe[0], wd + pb[1] + pe[1]
    xp = _pad_scratch(x, [pb[0], pb[1]], [pe[0] + 1, pe[1]], "conv.pad")  # spare row
    length = (hp + 1) * wp
    wt = cache.get(("w_taps", x.dtype)) if cache is not None else None
    if wt is None:
        wt = np.ascontiguousarray(w.transpose(2, 3, 0, 1)).reshape(kh * kw * m, c)
        if cache is not None:
            cache[("w_taps", x.dtype)] = wt
    y = np.empty((n, m, ho, wo), dtype=x.dtype)
    span = ho * wp
    for i in range(n):
        z = _scratch("conv.taps", (kh * kw * m, length), x.dtype)
        np.matmul(wt, xp[i].reshape(c, length), out=z)
        z = z.reshape(kh * kw, m, length)
        acc = _scratch("conv.taps_acc", (m, span), x.dtype)
        np.copyto(acc, z[0, :, :span])
        for t in range(1, kh * kw):
            off = (t // kw) * wp + t % kw
            acc += z[t, :, off:off + span]
        y[i] = acc.reshape(m, ho, wp)[:, :, :wo]
    return y


_BLOCK_BYTES = 1 << 18  # im2col buffer per block of groups: stays in L2


def _grouped_gemm(wg, cols, group, kk, npix):
    """Batched GEMM over groups: (G, Mg, Kg) @ im2col (N, G, Kg, P) -> (N, G, Mg, P).

    Groups are processed in blocks whose im2col copy fits in L2, so memory-bound
    depthwise convs do not stream a 9x-sized column matrix through main memory.
    """
    n = cols.shape[0]
    mg = wg.shape[1]
    y = np.empty((n, group, mg, npix), dtype=wg.dtype)
    blk = max(1, _BLOCK_BYTES // (kk * npix * wg.itemsize))
    if blk >= group:
        np.matmul(wg, cols.reshape(n, group, kk, npix), out=y)
        return y
    cg = cols.shape[1] // group
    win = cols.reshape((n, group, cg) + cols.shape[2:])
    buf = np.empty((blk, cg) + cols.shape[2:], dtype=wg.dtype)
    for i in range(n):
        for g0 in range(0, group, blk):
            g1 = min(group, g0 + blk)
            part = buf[:g1 - g0]
            np.copyto(part, win[i, g0:g1])
            np.matmul(wg[g0:g1], part.reshape(g1 - g0, kk, npix), out=y[i, g0:g1])
    return y


def _known(shape, i):
    return shape is not None and len(shape) > i and shape[i] is not None


def _conv_infer(attrs, inputs):
    x, w = inputs[0], inputs[1]
    _check_weights("Conv", x.shape, None if w is None else w.shape, attrs)
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    rank = len(x.shape)
    if w is not None and w.shape is not None:
        kernel = list(w.shape[2:])
        m = w.shape[0]
    else:
        kernel = list(attrs.get("kernel_shape") or [None] * (rank - 2))
        m = None
    if attrs.get("kernel_shape"):
        kernel = [int(k) for k in attrs["kernel_shape"]]
    if w is not None and _known(w.shape, 1) and _known(x.shape, 1):
        group = _group(attrs)
        if x.shape[1] != w.shape[1] * group:
            raise ShapeError(f"Conv: input channels {x.shape[1]} != weight {w.shape[1]} * "
                             f"group {group}")
    *_, pb, pe, out = _pool_geometry(x.shape[2:], kernel, attrs)
    if x.dtype is not None and all(d is not None for d in x.shape):
        _check_padded_size("Conv", x.shape, _compute_dtype(x.dtype).itemsize, pb, pe)
    return [TensorInfo(x.dtype, (x.shape[0], m) + tuple(out))]


# --------------------------------------------------------------------------------------
# ConvTranspose
# --------------------------------------------------------------------------------------


def _convtranspose_geometry(in_sp, kernel, attrs):
    """Resolve (strides, dilations, pads_begin, pads_end, out_sp) for ConvTranspose.

    Raises:
        OpAttributeError: kernel_shape, strides, dilations, pads or output_padding do
            not hold one value per spatial dim of the input (two for pads), strides,
            dilations or the kernel are not positive, pads or output_padding negative,
            or an output_padding is not below max(stride, dilation) (the spec: "less
            than the corresponding stride/dilation dimension", as onnxruntime's own
            check reads it; a further check of its refuses output_padding >= stride
            even with a larger dilation, which onegraph runs as the spec says).
        ShapeError: the input has no spatial dim, or the pads cut more than the whole
            output.
    """
    nsp = _spatial_rank(in_sp, kernel)
    strides = _ints(attrs.get("strides"), nsp, 1)
    dilations = _ints(attrs.get("dilations"), nsp, 1)
    outpad = _ints(attrs.get("output_padding"), nsp, 0)
    given_pads = attrs.get("pads")
    for name, values, low in (("kernel_shape", kernel, 1), ("strides", strides, 1),
                              ("dilations", dilations, 1), ("output_padding", outpad, 0)):
        if len(values) != nsp or any(v is not None and v < low for v in values):
            raise OpAttributeError(f"{name} {list(values)} must hold {nsp} "
                                   f"{'positive' if low else 'non-negative'} values, one "
                                   f"per spatial dim")
    for i, (op, s, d) in enumerate(zip(outpad, strides, dilations)):
        if op >= max(s, d):
            raise OpAttributeError(f"output_padding {outpad}: entry {i} ({op}) must be less "
                                   f"than the stride ({s}) or the dilation ({d})")
    if given_pads is not None and len(given_pads):
        if len(given_pads) != 2 * nsp:
            raise OpAttributeError(f"pads {list(given_pads)} must hold {2 * nsp} values "
                                   f"(begin and end of each of the {nsp} spatial dims)")
        if min(given_pads) < 0:
            raise OpAttributeError(f"pads {list(given_pads)} must not be negative")
    mode = _auto_pad(attrs)
    out_shape = attrs.get("output_shape")
    if out_shape is not None and len(out_shape):
        if len(out_shape) not in (nsp, nsp + 2):
            raise OpAttributeError(f"output_shape {list(out_shape)} must hold {nsp} values "
                                   "(one per spatial dim) or the whole output shape")
        out_shape = [int(v) for v in out_shape][-nsp:]
        if min(out_shape) < 1:
            raise OpAttributeError(f"output_shape {list(out_shape)} must be positive")
    elif mode in ("SAME_UPPER", "SAME_LOWER"):
        out_shape = [None if n is None else n * s for n, s in zip(in_sp, strides)]
    else:
        out_shape = None
    if out_shape is None:
        pads = [0] * (2 * nsp) if mode == "VALID" else _ints(attrs.get("pads"), 2 * nsp, 0)
        pb, pe = pads[:nsp], pads[nsp:]
        out = [None if n is None else
               s * (n - 1) + op + (k - 1) * d + 1 - b - e
               for n, k, s, d, op, b, e in zip(in_sp, kernel, strides, dilations, outpad,
                                               pb, pe)]
        if any(o is not None and o < 0 for o in out):
            raise ShapeError(f"pads {pb + pe} cut more than the whole output: its spatial "
                             f"size would be {out}")
        return strides, dilations, pb, pe, out
    pb, pe = [], []
    for n, k, s, d, op, o in zip(in_sp, kernel, strides, dilations, outpad, out_shape):
        if n is None:
            pb.append(None)
            pe.append(None)
            continue
        total = s * (n - 1) + op + (k - 1) * d + 1 - o
        half = total // 2
        if total < 1 - s:
            raise OpAttributeError(
                f"output_shape {list(out_shape)}: {o} is more than stride - 1 beyond the "
                f"natural size {o + total} of spatial dim {len(pb)}")
        if total < 0 and mode not in ("SAME_UPPER", "SAME_LOWER"):
            # a size beyond the natural one is padding at the end, as output_padding
            # (onnxruntime; ONNX's reference): splitting the negative total would
            # shift the output by a zero row
            pb.append(0)
            pe.append(total)
        elif mode == "SAME_UPPER":
            pb.append(half)
            pe.append(total - half)
        else:
            pb.append(total - half)
            pe.append(half)
    return strides, dilations, pb, pe, list(out_shape)


def _check_transposed_size(n, m, in_sp, kernel, out_sp, attrs, itemsize):
    """Refuse a ConvTranspose whose output (n, m, *out_sp) would take more than
    MAX_RESULT_BYTES beyond its GEMM's columns (n, m, *kernel, *in_sp), which its
    inputs' sizes alone set: only strides, dilations, pads or output_shape of 2**40
    (no real model's) make the output that much larger. Dims must be known.

    Raises:
        ResourceExhaustedError: naming the output shape and the attributes.
    """
    cols = math.prod([int(n), int(m)] + [int(k) for k in kernel] + [int(i) for i in in_sp])
    given = [f"{name} {[int(v) for v in attrs[name]]}" for name in
             ("strides", "dilations", "pads", "output_shape") if attrs.get(name)]
    check_result_size("ConvTranspose", "the output", [n, m] + list(out_sp), itemsize,
                      beyond=cols * int(itemsize), cause=", ".join(given))


def _convtranspose_kernel(inputs, attrs, ctx):
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    return (conv_transpose_nd(x, w, b, attrs),)


def conv_transpose_nd(x, w, b, attrs):
    """N-D transposed convolution: x (N, C, *S), w (C, M/group, *k) -> (N, M, *out)."""
    out_dtype = x.dtype
    cdt = _compute_dtype(out_dtype)
    x = np.asarray(x, dtype=cdt)
    w = np.asarray(w, dtype=cdt)
    group = _group(attrs)
    if x.ndim != w.ndim or x.ndim < 3 or attrs.get("kernel_shape"):
        _check_weights("ConvTranspose", x.shape, w.shape, attrs)
    n, c = x.shape[:2]
    in_sp = list(x.shape[2:])
    kernel = list(w.shape[2:])
    nsp = len(kernel)
    cg, mg = c // group, w.shape[1]
    m = mg * group
    if w.shape[0] != c or c % group:
        raise ShapeError(f"ConvTranspose: input channels {c}, weight {w.shape}, group {group}")
    _check_bias("ConvTranspose", b, m)
    strides, dilations, pb, pe, out_sp = _convtranspose_geometry(in_sp, kernel, attrs)
    full = [s * (i - 1) + (k - 1) * d + 1 for i, k, s, d in zip(in_sp, kernel, strides,
                                                                dilations)]
    # the col2im buffer covers both the full result and the requested window
    lo = [min(0, p) for p in pb]
    hi = [max(f, p + o) for f, p, o in zip(full, pb, out_sp)]
    _check_transposed_size(n, m, in_sp, kernel, [h - l for h, l in zip(hi, lo)], attrs,
                           cdt.itemsize)
    kprod = int(np.prod(kernel))
    npix = int(np.prod(in_sp))
    # GEMM: columns (N, G, Mg*K, P) = W_g^T (Mg*K, Cg) @ X_g (Cg, P)
    if group == 1:
        cols = np.matmul(w.reshape(c, m * kprod).T, x.reshape(n, c, npix))
    else:
        cols = np.matmul(w.reshape(group, cg, mg * kprod).transpose(0, 2, 1),
                         x.reshape(n, group, cg, npix))
    cols = cols.reshape((n, m) + tuple(kernel) + tuple(in_sp))
    buf = np.zeros((n, m) + tuple(h - l for h, l in zip(hi, lo)), dtype=cdt)
    inner = buf[(slice(None), slice(None)) + tuple(slice(-l, -l + f) for l, f in zip(lo, full))]
    _col2im(cols, inner, kernel, strides, dilations, in_sp)
    y = buf[(slice(None), slice(None)) + tuple(slice(p - l, p - l + o)
                                               for p, l, o in zip(pb, lo, out_sp))]
    if b is not None:
        y = y + np.asarray(b, dtype=cdt).reshape((m,) + (1,) * nsp)
    return np.ascontiguousarray(y, dtype=out_dtype)


def _convtranspose_infer(attrs, inputs):
    x, w = inputs[0], inputs[1]
    _check_weights("ConvTranspose", x.shape, None if w is None else w.shape, attrs)
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    rank = len(x.shape)
    group = _group(attrs)
    if w is not None and w.shape is not None:
        kernel = list(w.shape[2:])
        m = None if w.shape[1] is None else w.shape[1] * group
    else:
        kernel = [None] * (rank - 2)
        m = None
    if attrs.get("kernel_shape"):
        kernel = [int(k) for k in attrs["kernel_shape"]]
    if any(k is None for k in kernel):
        return [TensorInfo(x.dtype, (x.shape[0], m) + (None,) * (rank - 2))]
    # (the output's size is checked by the kernel: ConvTransposeWithDynamicPads runs
    # this rule before its own check, which names that op)
    *_, out = _convtranspose_geometry(x.shape[2:], kernel, attrs)
    return [TensorInfo(x.dtype, (x.shape[0], m) + tuple(out))]


_FLOATS = ("float16", "float32", "float64")

_CONV_ATTRS = (("auto_pad", "string", "NOTSET"), ("dilations", "ints", None),
               ("group", "int", 1), ("kernel_shape", "ints", None), ("pads", "ints", None),
               ("strides", "ints", None))

Conv = define(
    "Conv", ("X", "W", "B?"), ("Y",), _conv_kernel, _CONV_ATTRS, infer=_conv_infer,
    dtypes=_FLOATS, since_version=22,
    doc="N-D convolution (im2col + one GEMM per call; groups batched).")

ConvTranspose = define(
    "ConvTranspose", ("X", "W", "B?"), ("Y",), _convtranspose_kernel,
    _CONV_ATTRS + (("output_padding", "ints", None), ("output_shape", "ints", None)),
    infer=_convtranspose_infer, dtypes=_FLOATS, since_version=22,
    doc="N-D transposed convolution (GEMM + col2im).")

OPS = (Conv, ConvTranspose)

KNOWN_FAILURES: dict[str, str] = {}

"""Operators: pool family (MaxPool, AveragePool, LpPool, global pools, LRN,
MaxRoiPool).

Pooling reduces strided views of the padded input: one whole-array reduction per
kernel position (``prod(kernel_shape)`` iterations), never a loop over output pixels.
Small 2-D average pools are two GEMMs with fixed averaging matrices instead
(`_average_2d_gemm`).
Window geometry (auto_pad, ceil_mode, dilations) comes from `ops/conv.py`.
MaxRoiPool gathers, per pooled bin, the pixels of all ROIs whose bin there has one
size, channels last, and reduces them in one pass.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from . import jit
from .common import check_result_size, remember
from .conv import (_check_padded_size, _compute_dtype, _pad_for_windows, _pool_geometry,
                   _scratch, _window_slices)
from .registry import NUM_OUTPUTS, TensorInfo, define

_ALL = (slice(None), slice(None))


def _geometry(x_shape, attrs, itemsize=None, op=""):
    """(kernel, strides, dilations, pads_begin, pads_end, out_sp) of a pool over x of
    `x_shape` (N, C, *S; None for unknown dims).

    With `itemsize` (the kernel's) and x's dims all known, pads that make the padded
    input more than 2 GiB larger than x (a pads value of 2**40, which would reach
    numpy as "Maximum allowed dimension exceeded") are refused before any allocation.
    (A pad as long as the kernel is taken, unlike in onnxruntime: its windows over
    padding only pool to the lowest value, which tests/train/test_optimize.py relies
    on.) `op` prefixes the messages (inference leaves it out: its caller names the
    node).

    Raises:
        OpAttributeError: a malformed window attribute (see `_pool_geometry`).
        ShapeError: the input's rank, or a window longer than the padded input.
        ResourceExhaustedError: the padded input would be too large.
    """
    kernel = [int(k) for k in attrs["kernel_shape"]]
    geometry = _pool_geometry(x_shape[2:], kernel, attrs, bool(attrs.get("ceil_mode", 0)))
    _, _, pb, pe, _ = geometry
    if itemsize is not None and all(d is not None for d in x_shape):
        _check_padded_size(op, x_shape, itemsize, pb, pe)
    return (kernel,) + tuple(geometry)


def _lowest(dtype):
    if dtype.kind == "f":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _wants_output(attrs, k):
    """Whether the node declares output k (executors pass the count in attrs)."""
    n = attrs.get(NUM_OUTPUTS)
    return n is None or n > k


# --------------------------------------------------------------------------------------
# Separable window reduction (max, sum)
# --------------------------------------------------------------------------------------


def _valid_range(n, p, s, d, b, o):
    """Outputs [lo, hi) whose kernel tap p lands inside the input [0, n), and the first
    input coordinate they read (tap position t = out * s - pad_begin + p * d)."""
    off = p * d - b
    lo = max(0, -(off // s) if off < 0 else 0)
    hi = min(o, (n - 1 - off) // s + 1) if n - 1 - off >= 0 else 0
    return lo, hi, lo * s + off


def _taps_reaching_input(n, k, s, d, b, o):
    """The kernel taps p (of k) that some output (of o) reads inside the input [0, n):
    input position o' * s - b + p * d for 0 <= o' < o. The others read padding only,
    and a window a million taps wide over a tiny image must not loop over them all."""
    if o <= 0 or n <= 0:
        return range(0)
    first = max(0, -((-(b - (o - 1) * s)) // d))  # ceil((b - (o-1)s) / d)
    last = min(k - 1, (n - 1 + b) // d)
    return range(first, last + 1)


# numba's window reductions (pool_jit.py, JIT backend numba) take the strided pools;
# stride-1 pools run faster as the numpy passes below (which fold each row once where
# the compiled kernel folds it per output row). Measured per max / sum, float32, numpy
# -> numba: 3x3/2 64x112x112 pad 1 819 -> 309 / 787 -> 276 us, 128x55x55 301 -> 195,
# 24x56x56 pad 1 79 -> 37, 576x14x14 188 -> 137, 256x27x27 135 -> 134 / 136 -> 105;
# 2x2/2 256x56x56 375 -> 256, 64x56x56 70 -> 61, 512x28x28 219 -> 193; against 3x3/1
# pad 1 192x28x28 122 -> 221, 832x7x7 63 -> 190, and 2x2/2 below 28 columns (1024x14x14
# 125 -> 146: numpy's two passes, `_reduce_2x2_s2`).
_COMPILED_MIN_WIDTH_2 = 28
_AVERAGE_COMPILED_MIN_WIDTH = 28
_COMPILED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _compiled_reduction(x, kernel, strides, dil, pb):
    """numba's window-reduction kernels (pool_jit.py) when the JIT backend is numba and
    they take this pool (the rule above), else None."""
    if x.ndim == 4 and x.dtype in _COMPILED_DTYPES and min(strides) >= 2 \
            and list(dil) == [1, 1] and min(pb) >= 0 \
            and (kernel[1] >= 3 or x.shape[3] >= _COMPILED_MIN_WIDTH_2):
        return jit.kernels("pool")
    return None


def _separable_reduce(x, kernel, strides, dil, pb, out_sp, ufunc, init):
    """Reduce every window with `ufunc` (np.maximum or np.add), one spatial dim at a time.

    Pads and ceil-mode overhang are never materialised: each kernel tap only touches the
    outputs whose input lies inside x, so padding acts as the identity `init`.  Cost is
    sum(kernel) whole-array ufunc calls instead of prod(kernel).
    """
    if ufunc is np.maximum and x.ndim == 4 and x.dtype in _COMPILED_DTYPES \
            and list(kernel) == [3, 3] and list(dil) == [1, 1] \
            and _same_size_3x3(x, (kernel, strides, dil, pb, pb, out_sp)):
        compiled = jit.kernels("pool")
        if compiled is not None:
            return compiled.max_3x3_same(np.ascontiguousarray(x), np.empty(x.shape, x.dtype),
                                        init)
    compiled = _compiled_reduction(x, kernel, strides, dil, pb) \
        if ufunc in (np.maximum, np.add) else None
    if compiled is not None:
        y = np.empty(x.shape[:2] + tuple(out_sp), x.dtype)
        args = (np.ascontiguousarray(x), y, kernel[0], kernel[1], strides[0], strides[1],
                pb[0], pb[1])
        if ufunc is np.maximum:
            if list(kernel) == [3, 3] and list(strides) == [2, 2]:
                return compiled.max_3x3_s2(args[0], y, pb[0], pb[1], init)
            return compiled.max_2d(*args, init)
        return compiled.sum_2d(*args)
    flat = None
    if x.ndim == 4 and list(kernel) == [3, 3] and list(strides) == [1, 1] \
            and list(dil) == [1, 1] and list(pb) == [1, 1] \
            and tuple(out_sp) == x.shape[2:] and min(out_sp) >= 2:
        flat = lambda xb, yb: _reduce_3x3_same(xb, ufunc, yb)  # noqa: E731
    elif x.ndim == 4 and list(kernel) == [3, 3] and list(strides) == [2, 2] \
            and list(dil) == [1, 1] and pb[0] == pb[1] and pb[0] in (0, 1) \
            and min(out_sp) >= 1 and min(x.shape[2:]) >= 2 \
            and 2 * out_sp[0] <= x.shape[2] + pb[0] and 2 * out_sp[1] <= x.shape[3] + pb[1]:
        # (every window starts inside the image: its first row 2i - top <= h - 2)
        flat = lambda xb, yb: _reduce_3x3_s2(xb, out_sp, pb[0], ufunc, yb)  # noqa: E731
    elif x.ndim == 4 and list(kernel) == [2, 2] and list(strides) == [2, 2] \
            and list(dil) == [1, 1] and not any(pb) and min(out_sp) >= 1 \
            and 2 * out_sp[0] <= x.shape[2] and 2 * out_sp[1] <= x.shape[3]:
        # (no window overhangs the image: no padding, ceil mode adds no partial one)
        flat = lambda xb, yb: _reduce_2x2_s2(xb, out_sp, ufunc, yb)  # noqa: E731
    elif x.ndim == 4 and list(dil) == [1, 1] and min(pb) >= 0 \
            and kernel[0] * kernel[1] > 1 and min(out_sp) > 0:
        flat = lambda xb, yb: _reduce_2d_flat(  # noqa: E731
            xb, kernel, strides, pb, out_sp, ufunc, init, yb)
    if flat is not None:
        return _by_channel_blocks(x, out_sp, flat)
    y = x
    nsp = len(kernel)
    for dim in range(nsp):  # outer dims first: their taps read contiguous rows
        n, k, s, d, b, o = (y.shape[2 + dim], kernel[dim], strides[dim], dil[dim], pb[dim],
                            out_sp[dim])
        if k == 1 and s == 1 and b == 0 and o == n:
            continue
        lead = (slice(None),) * (2 + dim)
        shape = y.shape[:2 + dim] + (o,) + y.shape[3 + dim:]
        res = None
        for p in _taps_reaching_input(n, k, s, d, b, o):
            lo, hi, t0 = _valid_range(n, p, s, d, b, o)
            if hi <= lo:
                continue
            src = y[lead + (slice(t0, t0 + (hi - lo - 1) * s + 1, s),)]
            if res is None:
                if lo == 0 and hi == o:
                    res = src.copy()
                    continue
                res = np.full(shape, init, dtype=y.dtype)
            dst = res[lead + (slice(lo, hi),)]
            ufunc(dst, src, out=dst)
        y = res if res is not None else np.full(shape, init, dtype=y.dtype)
    return y if y is not x else x.copy()


# The flat window reductions make several passes over scratch arrays. Large inputs are
# taken a block of channels at a time so those passes stay in cache; smaller ones are done
# whole, since every block repeats each pass's ufunc calls. Measured per pool (median of
# 60 interleaved calls) against 256 KiB blocks: 96x109x109 3x3/2 0.65x, 64x112x112 2x2/2
# 0.70x whole; 64x224x224 3x3/1 0.48x, 128x112x112 2x2/2 0.75x in 2 MiB blocks.
_POOL_BLOCK_BYTES = 1 << 21
_POOL_WHOLE_BYTES = 5 << 20


def _by_channel_blocks(x, out_sp, flat):
    """y (N, C, *out_sp) from `flat(x_block, y_block)` over blocks of the N*C images."""
    n, c, h, w = x.shape
    y = np.empty((n, c) + tuple(out_sp), dtype=x.dtype)
    nc = n * c
    blk = max(1, _POOL_BLOCK_BYTES // max(1, h * w * x.itemsize))
    if x.nbytes <= _POOL_WHOLE_BYTES or blk >= nc or not x.flags.c_contiguous:
        flat(x, y)
        return y
    xs = x.reshape(1, nc, h, w)
    ys = y.reshape((1, nc) + tuple(out_sp))
    for c0 in range(0, nc, blk):
        flat(xs[:, c0:c0 + blk], ys[:, c0:c0 + blk])
    return y


def _reduce_3x3_same(x, ufunc, y):
    """3x3, stride 1, one pixel of padding on every side (output shape = input shape),
    written into y.

    No padded copy: each tap is a flat shift over the unpadded images, so the passes
    are long contiguous 1-D ufunc calls; they only go wrong where a shift crosses a
    row (first/last column) or an image (first/last row), and those borders are then
    recomputed from their two in-bounds taps (a pad tap is the ufunc's identity).
    """
    n, c, h, w = x.shape
    nc, total = n * c, x.size
    xf = np.ascontiguousarray(x).reshape(total)
    hm = _scratch("pool.rows", (total,), x.dtype)
    ufunc(xf[:-2], xf[1:-1], out=hm[1:-1])
    ufunc(hm[1:-1], xf[2:], out=hm[1:-1])
    xr, hr = xf.reshape(nc * h, w), hm.reshape(nc * h, w)
    ufunc(xr[:, 0], xr[:, 1], out=hr[:, 0])
    ufunc(xr[:, w - 1], xr[:, w - 2], out=hr[:, w - 1])
    yf = y.reshape(total)
    ufunc(hm[:-2 * w], hm[w:-w], out=yf[w:-w])
    ufunc(yf[w:-w], hm[2 * w:], out=yf[w:-w])
    hi, yi = hm.reshape(nc, h, w), yf.reshape(nc, h, w)
    ufunc(hi[:, 0], hi[:, 1], out=yi[:, 0])
    ufunc(hi[:, h - 1], hi[:, h - 2], out=yi[:, h - 1])
    return y


def _reduce_3x3_s2(x, out_sp, top, ufunc, y):
    """3x3, stride 2, `top` (0 or 1) pixels of leading padding on both spatial dims, the
    last window possibly overhanging the image (trailing pad, ceil mode); written into y.

    Rows first, at the output's row stride: each output row is `ufunc` over three
    input rows (two passes over half the image, rows contiguous). Then the columns as
    flat shifts over those rows (two contiguous passes), of which one strided copy takes
    every second column. The windows that reach outside the image (the first row and
    column with padding, the last ones when they overhang) are redone from their
    in-image rows or columns. Against full-resolution windows subsampled at the end
    (four passes over the whole image), measured per pool: 64x111x111 0.76x,
    128x55x55 0.71x, 24x112x112 pad 1 0.66x, 64x112x112 pad 1 0.69x, 256x27x27 0.94x.
    """
    n, c, h, w = x.shape
    ho, wo = out_sp
    nc = n * c
    xr = np.ascontiguousarray(x).reshape(nc, h, w)
    rows = _scratch("pool.rows", (nc, ho, w), x.dtype)
    # windows [lo, hi) read three in-image rows: 2i - top >= 0 and 2i - top + 2 < h
    lo, hi = top, min(ho, (h - 3 + top) // 2 + 1)
    if hi > lo:
        a, k = 2 * lo - top, hi - lo
        inner = rows[:, lo:hi]
        ufunc(xr[:, a:a + 2 * k - 1:2], xr[:, a + 1:a + 2 * k:2], out=inner)
        ufunc(inner, xr[:, a + 2:a + 2 * k + 1:2], out=inner)
    for i in (*range(min(lo, ho)), *range(max(hi, lo), ho)):
        _reduce_edge_window(xr, 2 * i - top, h, 1, ufunc, rows[:, i])
    flat = rows.reshape(-1)
    cols = _scratch("pool.cols", flat.shape, x.dtype)
    ufunc(flat[:-2], flat[1:-1], out=cols[:-2])
    ufunc(cols[:-2], flat[2:], out=cols[:-2])
    yr = y.reshape(nc, ho, wo)
    lo, hi = top, min(wo, (w - 3 + top) // 2 + 1)
    if hi > lo:
        b = 2 * lo - top
        np.copyto(yr[:, :, lo:hi], cols.reshape(nc, ho, w)[:, :, b:b + 2 * (hi - lo) - 1:2])
    for j in (*range(min(lo, wo)), *range(max(hi, lo), wo)):
        _reduce_edge_window(rows, 2 * j - top, w, 2, ufunc, yr[:, :, j])
    return y


def _reduce_2x2_s2(x, out_sp, ufunc, y):
    """2x2, stride 2, no padding, every window inside the image (DenseNet's transition
    and VGG's pools), written into y: each output row is `ufunc` of two input rows
    (one pass over half the image, rows contiguous), then of two columns of that (one
    pass at stride 2). Against the flat window passes subsampled at the end, measured
    per AveragePool (the scaling included): 256x56x56 676 -> 390 us, 512x28x28 326 ->
    173 us, 1024x14x14 193 -> 108 us."""
    n, c, h, w = x.shape
    ho, wo = out_sp
    nc = n * c
    xr = x.reshape(nc, h, w)
    rows = _scratch("pool.rows", (nc, ho, w), x.dtype)
    ufunc(xr[:, 0:2 * ho:2], xr[:, 1:2 * ho:2], out=rows)
    ufunc(rows[:, :, 0:2 * wo:2], rows[:, :, 1:2 * wo:2], out=y.reshape(nc, ho, wo))
    return y


def _reduce_edge_window(src, first, size, axis, ufunc, out):
    """`ufunc` over the in-range indices of first, first + 1, first + 2 along `axis`
    (1 or 2) of the 3-D `src`, into `out` (a window that reaches past an edge; the
    indices outside [0, size) are padding, the ufunc's identity)."""
    inside = [k for k in range(first, first + 3) if 0 <= k < size]
    take = (lambda k: src[:, k]) if axis == 1 else (lambda k: src[:, :, k])
    np.copyto(out, take(inside[0]))
    for k in inside[1:]:
        ufunc(out, take(k), out=out)


def _reduce_2d_flat(x, kernel, strides, pb, out_sp, ufunc, init, y):
    """2-D window reduction over the padded images flattened row-major, into y.

    With the padded images (width wp) flattened, vertical tap a is the shift a*wp and
    horizontal tap b the shift b: every tap is one long contiguous 1-D slice (rows wrap
    into the pad columns, which are cropped at the end), instead of one short row at a
    time. Strided pools reduce at stride 1 and subsample in the final crop: more
    arithmetic, but long contiguous passes beat short strided ones by far in numpy.
    The padded copy and the intermediates are scratch buffers.
    """
    n, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = strides
    ho, wo = out_sp
    hp = max((ho - 1) * sh + kh, pb[0] + h)
    wp = max((wo - 1) * sw + kw, pb[1] + w)
    nc = n * c
    top, left = pb
    if hp == h and wp == w and x.flags.c_contiguous:  # nothing to pad: read x itself
        xp = x.reshape(nc, hp, wp)
    else:
        xp = _pad_windows(x, nc, hp, wp, top, left, init)
    # One 1-D pass per tap over all channels at once: a window never leaves its own
    # channel's image (hp >= ho + kh - 1, wp >= wo + kw - 1), so positions mixing two
    # channels only land in the cropped rows/columns.
    total = nc * hp * wp
    flat = xp.reshape(total)
    span = total - (kh - 1) * wp
    if kh > 1:
        rows = _scratch("pool.rows", (total,), x.dtype)
        ufunc(flat[:span], flat[wp:wp + span], out=rows[:span])
        for a in range(2, kh):
            ufunc(rows[:span], flat[a * wp:a * wp + span], out=rows[:span])
    else:
        rows = flat
    if kw > 1:
        inner = span - (kw - 1)
        acc = _scratch("pool.cols", (total,), x.dtype)
        ufunc(rows[:inner], rows[1:1 + inner], out=acc[:inner])
        for b in range(2, kw):
            ufunc(acc[:inner], rows[b:b + inner], out=acc[:inner])
    else:
        acc = rows
    np.copyto(y.reshape(nc, ho, wo), acc.reshape(nc, hp, wp)[
        :, 0:(ho - 1) * sh + 1:sh, 0:(wo - 1) * sw + 1:sw])
    return y


def _pad_windows(x, nc, hp, wp, top, left, init):
    """x (N, C, h, w) placed at (top, left) of a scratch (N*C, hp, wp) filled with init."""
    h, w = x.shape[2:]
    xp = _scratch("pool.pad", (nc, hp, wp), x.dtype)
    if top:
        xp[:, :top] = init
    if hp > top + h:
        xp[:, top + h:] = init
    if left:
        xp[:, top:top + h, :left] = init
    if wp > left + w:
        xp[:, top:top + h, left + w:] = init
    xp[:, top:top + h, left:left + w] = x.reshape(nc, h, w)
    return xp


# --------------------------------------------------------------------------------------
# MaxPool
# --------------------------------------------------------------------------------------


def _maxpool_kernel(inputs, attrs, ctx):
    x = inputs[0]
    kernel, strides, dil, pb, pe, out_sp = _geometry(x.shape, attrs, x.dtype.itemsize,
                                                     "MaxPool")
    if not _wants_output(attrs, 1):
        return (_separable_reduce(x, kernel, strides, dil, pb, out_sp, np.maximum,
                                  _lowest(x.dtype)),)
    # With Indices: track the winning kernel tap (first one on ties) with branch-free
    # modular arithmetic (masked stores are slow on random masks), decode at the end.
    xp = _pad_for_windows(x, kernel, strides, dil, pb, pe, out_sp, _lowest(x.dtype))
    ntaps = int(np.prod(kernel))
    tdt = np.uint8 if ntaps <= 256 else np.uint32
    y = tap = better = step = None
    # Y takes the first NaN of a window (np.maximum): its index must name that NaN
    nans = x.dtype.kind == "f" and bool(np.isnan(x).any())
    for i, (pos, sl) in enumerate(_window_slices(kernel, strides, dil, out_sp)):
        v = xp[_ALL + sl]
        if y is None:
            y = v.copy()
            tap = np.zeros(y.shape, dtype=tdt)
            better = np.empty(y.shape, dtype=bool)
            step = np.empty(y.shape, dtype=tdt)
            continue
        np.greater(v, y, out=better)
        if nans:
            better |= np.isnan(v) & ~np.isnan(y)
        np.maximum(y, v, out=y)
        np.subtract(tdt(i), tap, out=step)          # tap += better * (i - tap)
        np.multiply(step, better, out=step, casting="unsafe")
        tap += step
    if any(pb):
        _taps_off_padding(xp, y, tap, kernel, strides, dil, pb, x.shape[2:])
    idx = _flat_index(x.shape, tap, kernel, strides, dil, pb, out_sp,
                      int(attrs.get("storage_order", 0)))
    return (y, idx)


def _taps_off_padding(xp, y, tap, kernel, strides, dil, pb, in_sp):
    """Move winning taps that sit in the leading padding to the first in-image tap of
    equal value, in place.

    A window whose maximum equals the pad fill (0 for uint8, -inf for floats) ties
    with the padding, and the first tap wins ties; the index must still name an
    element of x. (Any other tap wins only by being greater, which the lowest value
    never is, and a window's first tap is outside the image only in leading padding.)
    """
    nsp = len(kernel)
    ks = np.unravel_index(tap, kernel)               # winning tap, per spatial dim
    outside = np.zeros(tap.shape, bool)
    for d in range(nsp):
        pos = np.arange(tap.shape[2 + d]).reshape((-1,) + (1,) * (nsp - 1 - d))
        outside |= pos * strides[d] + ks[d] * dil[d] < pb[d]
    if not outside.any():
        return
    where = np.nonzero(outside)
    best = y[where]
    fixed = np.zeros(best.shape, bool)
    for i, pos in enumerate(np.ndindex(*kernel)):
        coords = [where[2 + d] * strides[d] + pos[d] * dil[d] for d in range(nsp)]
        inside = np.ones(best.shape, bool)
        for d in range(nsp):
            inside &= (coords[d] >= pb[d]) & (coords[d] < pb[d] + in_sp[d])
        v = xp[(where[0], where[1], *coords)]
        same = (v == best) | (np.isnan(v) & np.isnan(best)) if v.dtype.kind == "f" \
            else v == best
        take = inside & same & ~fixed
        tap[tuple(w[take] for w in where)] = i
        fixed |= take


def _flat_index(shape, tap, kernel, strides, dil, pb, out_sp, storage_order):
    """Flat index into x (N, C, *S) of the element each output's winning tap read.

    `tap` is the row-major kernel position per output; spatial dims are flattened row
    major (storage_order 0) or column major (storage_order 1).
    """
    n, c = shape[:2]
    sp = shape[2:]
    nsp = len(sp)
    mult = [0] * nsp
    acc = 1
    for d in (range(nsp) if storage_order == 1 else range(nsp - 1, -1, -1)):
        mult[d] = acc
        acc *= sp[d]
    # offset of each kernel tap, and of each output window's origin
    taps = np.indices(kernel, dtype=np.int64).reshape(nsp, -1)
    tap_off = sum(taps[d] * (dil[d] * mult[d]) for d in range(nsp))
    base = (np.arange(n * c, dtype=np.int64) * acc).reshape((n, c) + (1,) * nsp)
    for d in range(nsp):
        shp = [1] * (2 + nsp)
        shp[2 + d] = out_sp[d]
        base = base + ((np.arange(out_sp[d], dtype=np.int64) * strides[d] - pb[d])
                       * mult[d]).reshape(shp)
    return base + np.take(tap_off, tap)


def _maxpool_infer(attrs, inputs):
    x = inputs[0]
    shape = _pooled_shape(x, attrs)
    return [TensorInfo(x.dtype, shape), TensorInfo(np.dtype(np.int64), shape)]


def _pooled_shape(x, attrs):
    if x.shape is None:
        return None
    itemsize = None if x.dtype is None else np.dtype(x.dtype).itemsize
    *_, out_sp = _geometry(x.shape, attrs, itemsize)
    return tuple(x.shape[:2]) + tuple(out_sp)


# --------------------------------------------------------------------------------------
# AveragePool, LpPool
# --------------------------------------------------------------------------------------


def _window_sum(x, attrs, transform=None, op=""):
    """Sum over each window of zero-padded x (after `transform`), in the compute dtype;
    `op` names the pool in messages."""
    cdt = _compute_dtype(x.dtype)
    kernel, strides, dil, pb, pe, out_sp = _geometry(x.shape, attrs, cdt.itemsize, op)
    xc = np.asarray(x, dtype=cdt)
    if transform is not None:
        xc = transform(xc)
    acc = _separable_reduce(xc, kernel, strides, dil, pb, out_sp, np.add, 0)
    return acc, (kernel, strides, dil, pb, pe, out_sp)


_COUNTS: dict = {}  # geometry -> (counts, the common count or None); small, bounded


def _window_counts_cached(in_sp, kernel, strides, dil, pb, pe, out_sp, include_pad):
    """(`_window_counts`, its single value if all windows count alike else None),
    memoised per geometry: computing it costs ~30 us, more than a small pool."""
    key = (tuple(in_sp), tuple(kernel), tuple(strides), tuple(dil), tuple(pb), tuple(pe),
           tuple(out_sp), include_pad)
    hit = _COUNTS.get(key)
    if hit is None:
        counts = _window_counts(in_sp, kernel, strides, dil, pb, pe, out_sp, include_pad)
        first = counts.flat[0] if counts.size else 1
        uniform = int(first) if counts.size == 0 or np.all(counts == first) else None
        counts.setflags(write=False)
        hit = remember(_COUNTS, key, (counts, uniform), 257)
    return hit


def _window_counts(in_sp, kernel, strides, dil, pb, pe, out_sp, include_pad):
    """Number of counted elements in each window, shaped out_sp (separable per dim)."""
    counts = np.ones((), dtype=np.int64)
    for n, k, s, d, b, e, o in zip(in_sp, kernel, strides, dil, pb, pe, out_sp):
        t = np.arange(o)[:, None] * s - b + np.arange(k)[None, :] * d
        lo, hi = (-b, n + e) if include_pad else (0, n)
        c = ((t >= lo) & (t < hi)).sum(axis=1)
        counts = np.multiply.outer(counts, c)
    return counts


# Small 2-D average pools run as two GEMMs with fixed averaging matrices,
#     Y[c] = Ph @ X[c] @ Pw^T,  Ph (ho, h) and Pw (wo, w),
# each row holding 1/count at its window's in-bounds taps (the counts are separable, so
# the division rides along). The GEMMs do wo*(w + ho) multiplies per input row where the
# window passes do kh + kw additions per pixel, but BLAS beats numpy passes by far, so
# the GEMMs win while wo*(w + ho) <= 5*w*(kh + kw). Measured (3x3/2 pad 1, 2x2/2,
# 3x3/1 pad 1 at C 32-512): 0.2-0.7x the window passes up to 28x28 (3x3/2), 14x14
# (2x2/2, 3x3/1); ties at the rule's edge; 1.3-4x slower past it. Padded windows
# counted without the padding cost the window passes one more pass (the division by
# per-window counts), and the GEMMs win further out: 3x3/2 pad 1 on 56x56 at C 24-128
# 0.57-0.72x (ShuffleNet's shortcut pools), against 1.03-1.08x unpadded; 3x3/1 pad 1
# on 28x28 still 1.08x.
_GEMM_POOL_FACTOR = 5
_GEMM_POOL_FACTOR_UNEVEN = 8
_POOL_MATRICES: dict = {}  # geometry -> (Ph, Pw^T); small, bounded


def _average_gemm_pays(in_sp, kernel, out_sp, uneven=False):
    """Whether the two-GEMM average pool beats the window passes (see above);
    `uneven`: the windows' counts differ (padding not counted)."""
    (h, w), (ho, wo) = in_sp, out_sp
    factor = _GEMM_POOL_FACTOR_UNEVEN if uneven else _GEMM_POOL_FACTOR
    return h > 0 and w > 0 and ho > 0 and wo > 0 \
        and wo * (w + ho) <= factor * w * (kernel[0] + kernel[1])


# ... except unpadded 2x2/2 pools from 14x14 up, whose two passes (`_reduce_2x2_s2`)
# beat the GEMMs there (1024x14x14 138 against 204 us; 7x7 images 50 against 44)
_TWO_PASS_MIN_SIZE = 14


def _average_gemm_applies(in_sp, geometry, include_pad):
    """`_average_gemm_pays` for a 2-D pool's `_geometry`, the windows uneven when
    padding is present and not counted."""
    kernel, strides, _, pb, pe, out_sp = geometry
    if list(kernel) == list(strides) == [2, 2] and not any(pb) and not any(pe) \
            and min(in_sp) >= _TWO_PASS_MIN_SIZE:
        return False
    uneven = not include_pad and (any(pb) or any(pe))
    return _average_gemm_pays(in_sp, kernel, out_sp, uneven)


def _average_matrix(n, k, s, d, b, e, o, include_pad, dtype):
    """(o, n): row i holds 1/count at the input positions output i's window reads
    along one dim (count per ONNX: in-bounds taps, or with include_pad every tap
    inside the padded extent)."""
    counts = _window_counts([n], [k], [s], [d], [b], [e], [o], include_pad)
    taps = np.arange(o)[:, None] * s - b + np.arange(k)[None, :] * d
    inside = (taps >= 0) & (taps < n)
    rows = np.broadcast_to(np.arange(o)[:, None], taps.shape)[inside]
    m = np.zeros((o, n), dtype=dtype)
    m[rows, taps[inside]] = 1.0 / np.maximum(counts, 1)[rows]
    return m


def _average_2d_gemm(x, geometry, include_pad):
    """2-D AveragePool of float32/float64 x (N, C, h, w) as Ph @ X @ Pw^T, or None when
    the result is not finite (an inf or NaN in x: 0 * inf in the GEMMs would spread it
    to windows that never read it, so the caller redoes those with the window passes).
    """
    kernel, strides, dil, pb, pe, out_sp = geometry
    n, c, h, w = x.shape
    ho, wo = out_sp
    key = ((h, w), tuple(kernel), tuple(strides), tuple(dil), tuple(pb), tuple(pe),
           tuple(out_sp), include_pad, x.dtype)
    mats = _POOL_MATRICES.get(key)
    if mats is None:
        ph = _average_matrix(h, kernel[0], strides[0], dil[0], pb[0], pe[0], ho,
                             include_pad, x.dtype)
        pwt = np.ascontiguousarray(_average_matrix(
            w, kernel[1], strides[1], dil[1], pb[1], pe[1], wo, include_pad, x.dtype).T)
        if len(_POOL_MATRICES) > 256:
            _POOL_MATRICES.clear()
        mats = _POOL_MATRICES[key] = (ph, pwt)
    ph, pwt = mats
    with np.errstate(invalid="ignore", over="ignore"):
        rows = np.matmul(x.reshape(n * c * h, w), pwt)        # pool along w
        y = np.matmul(ph, rows.reshape(n * c, h, wo))          # pool along h, per image
        total = y.sum()
    if not np.isfinite(total):
        return None
    return y.reshape(n, c, ho, wo)


def _averagepool_kernel(inputs, attrs, ctx):
    x = inputs[0]
    geometry = _geometry(x.shape, attrs, x.dtype.itemsize, "AveragePool") \
        if x.ndim >= 3 else None
    if geometry is not None and geometry[0] == list(x.shape[2:]):
        kernel, strides, dil, pb, pe, out_sp = geometry
        if not any(pb) and not any(pe) and all(o == 1 for o in out_sp) \
                and all(d == 1 for d in dil):
            # one window covering the whole image: the global mean (a dilated window
            # of the image's size reaches past it, skipping pixels)
            return (_global_mean(x),)
    include_pad = bool(attrs.get("count_include_pad", 0))
    if geometry is not None and x.ndim == 4 and x.dtype in _COMPILED_DTYPES \
            and list(geometry[0]) == [3, 3] and list(geometry[2]) == [1, 1] \
            and (list(geometry[1]) == [2, 2] and min(geometry[3]) >= 0
                 or _same_size_3x3(x, geometry)):
        y = _mean_3x3_compiled(x, geometry, include_pad)
        if y is not None:
            return (y,)
    # numba's window sums, where they take the pool, beat the GEMMs from 28 columns up
    # (3x3/2 pad 1: 24x56x56 92 -> 61 us, 136x28x28 112 -> 89) but not below (272x14x14
    # 52 -> 79, 2x2/2 512x14x14 76 -> 82)
    if x.ndim == 4 and x.dtype in (np.float32, np.float64) \
            and (x.shape[3] < _AVERAGE_COMPILED_MIN_WIDTH
                 or _compiled_reduction(x, *geometry[:4]) is None):
        if _average_gemm_applies(x.shape[2:], geometry, include_pad):
            y = _average_2d_gemm(x, geometry, include_pad)
            if y is not None:
                return (y,)
    acc, (kernel, strides, dil, pb, pe, out_sp) = _window_sum(x, attrs, op="AveragePool")
    counts, uniform = _window_counts_cached(x.shape[2:], kernel, strides, dil, pb, pe,
                                            out_sp, include_pad)
    if uniform is not None:
        acc *= acc.dtype.type(1.0 / max(uniform, 1))
    else:
        acc /= np.maximum(counts, 1).astype(acc.dtype)
    return (acc.astype(x.dtype, copy=False),)


def _same_size_3x3(x, geometry):
    """Whether a 3x3 pool geometry is stride 1 with one pixel of padding on every side
    (the output as large as x, at least two columns wide)."""
    kernel, strides, _, pb, pe, out_sp = geometry
    return list(strides) == [1, 1] and list(pb) == list(pe) == [1, 1] \
        and tuple(out_sp) == x.shape[2:] and x.shape[3] >= 2


def _mean_3x3_compiled(x, geometry, include_pad):
    """A 3x3 AveragePool of float32/float64 x (N, C, H, W), stride 2 or stride 1 with
    the output as large as x, in one compiled pass (pool_jit.mean_3x3_s2,
    mean_3x3_same: sums and division together, where the other paths make a pass
    each) when the JIT backend is numba, else None. ShuffleNet's stride-2 shortcut
    pools run 2-3x faster, Inception's stride-1 branch pools 5x."""
    compiled = jit.kernels("pool")
    if compiled is None:
        return None
    kernel, strides, dil, pb, pe, out_sp = geometry
    counts, _ = _window_counts_cached(x.shape[2:], kernel, strides, dil, pb, pe, out_sp,
                                      include_pad)
    y = np.empty(x.shape[:2] + tuple(out_sp), x.dtype)
    divisor = np.maximum(counts, 1).astype(x.dtype)
    x = np.ascontiguousarray(x)
    if list(strides) == [1, 1]:
        return compiled.mean_3x3_same(x, y, divisor)
    return compiled.mean_3x3_s2(x, y, pb[0], pb[1], divisor)


def _lppool_kernel(inputs, attrs, ctx):
    x = inputs[0]
    p = _lp_order(attrs)
    if p == 2:
        acc, _ = _window_sum(x, attrs, np.square, "LpPool")
        np.sqrt(acc, out=acc)
    elif p == 1:
        acc, _ = _window_sum(x, attrs, np.abs, "LpPool")
    else:
        acc, _ = _window_sum(x, attrs, lambda v: np.abs(v) ** p, "LpPool")
        acc **= 1.0 / p
    return (acc.astype(x.dtype, copy=False),)


def _pool_infer(attrs, inputs):
    x = inputs[0]
    return [TensorInfo(x.dtype, _pooled_shape(x, attrs))]


# --------------------------------------------------------------------------------------
# Global pools
# --------------------------------------------------------------------------------------


def _global_mean(x):
    """Mean over the spatial dims of x (N, C, *S), shaped (N, C, 1, ...).

    float32/float64 images sum as one matrix-vector product with a ones vector
    (BLAS; 5x faster than numpy's mean over short rows), then divide by the count.
    """
    n, c = x.shape[:2]
    cdt = _compute_dtype(x.dtype)
    shape = (n, c) + (1,) * (x.ndim - 2)
    if x.dtype == cdt and x.size:
        flat = x.reshape(n * c, -1)
        y = flat @ np.ones(flat.shape[1], dtype=cdt)
        y /= cdt.type(flat.shape[1])
        return y.reshape(shape)
    y = _per_image(x).mean(axis=2, dtype=cdt).astype(x.dtype, copy=False)
    return y.reshape(shape)


def _per_image(x):
    """x (N, C, *S) as (N, C, prod(S)); explicit sizes, as reshape(n, c, -1) is
    ambiguous for an empty batch. An image with no pixels has no max or mean: ShapeError."""
    n, c = x.shape[:2]
    pixels = int(np.prod(x.shape[2:]))
    if pixels == 0 and n * c:
        raise ShapeError(f"global pooling over an empty image: input shape {list(x.shape)}")
    return x.reshape(n, c, pixels)


_GLOBAL_NAMES = {"mean": "GlobalAveragePool", "max": "GlobalMaxPool", "lp": "GlobalLpPool"}


def _global_rank(op, rank):
    """Global pools reduce the spatial dims of (N, C, spatial...): rank 3 at least.

    Raises:
        ShapeError: a lower rank (onnxruntime refuses it too).
    """
    if rank < 3:
        raise ShapeError(f"{op}: input of rank {rank}; it needs at least 3 (N, C and the "
                         f"spatial dims)")


def _global_kernel(reduce):
    op = _GLOBAL_NAMES[reduce]

    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        if x.ndim < 3:
            _global_rank(op, x.ndim)
        shape = x.shape[:2] + (1,) * (x.ndim - 2)
        if not x.size:
            # No images (N * C = 0; empty images with some raise in _per_image): the
            # result is empty too, as onnxruntime's. numpy's max over an empty pixel
            # axis would fail (no identity) and its mean warn.
            _per_image(x)
            return (np.zeros(shape, x.dtype),)
        if reduce == "mean":
            return (_global_mean(x),)
        if reduce == "max":
            return (_per_image(x).max(axis=2).reshape(shape),)
        p = _lp_order(attrs)
        cdt = _compute_dtype(x.dtype)
        flat = np.abs(_per_image(x).astype(cdt, copy=False))
        y = np.sqrt(np.einsum("ncs,ncs->nc", flat, flat)) if p == 2 else \
            np.sum(flat, axis=2) if p == 1 else np.sum(flat ** p, axis=2) ** (1.0 / p)
        return (y.astype(x.dtype, copy=False).reshape(shape),)
    return kernel


def _lp_order(attrs):
    """LpPool's and GlobalLpPool's p: a positive integer (p = 0 would be 1/0)."""
    p = int(attrs.get("p", 2))
    if p < 1:
        raise OpAttributeError(f"p must be a positive integer, got {p}")
    return p


def _global_infer(attrs, inputs):
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    _global_rank("global pooling", len(x.shape))
    return [TensorInfo(x.dtype, tuple(x.shape[:2]) + (1,) * (len(x.shape) - 2))]


# --------------------------------------------------------------------------------------
# LRN
# --------------------------------------------------------------------------------------


def _lrn_kernel(inputs, attrs, ctx):
    """Local response normalization across channels: x / (bias + alpha / size * sum of
    the squares in the `size` channels around)^beta, the window reaching floor((size -
    1) / 2) channels back and the rest forward (ONNX).

    A window reaching past every channel sums them all, so its reach is capped at C - 1
    each way: any size (2**40 too) costs at most 2C - 1 shifted adds and no padding
    beyond that (size still divides alpha).

    Raises:
        OpAttributeError: size below 1.
        ShapeError: x has no channel axis.
    """
    x = inputs[0]
    size = int(attrs["size"])
    if size < 1:
        raise OpAttributeError(f"LRN: size must be a positive number of channels, got "
                               f"{size}")
    if x.ndim < 2:
        raise ShapeError(f"LRN: the input must have a channel axis (rank >= 2), got shape "
                         f"{list(x.shape)}")
    alpha, beta, bias = float(attrs["alpha"]), float(attrs["beta"]), float(attrs["bias"])
    cdt = _compute_dtype(x.dtype)
    xc = np.asarray(x, dtype=cdt)
    c = x.shape[1]
    back = min((size - 1) // 2, max(c - 1, 0))
    ahead = min(size - 1 - (size - 1) // 2, max(c - 1, 0))
    sq = np.zeros((x.shape[0], c + back + ahead) + x.shape[2:], dtype=cdt)
    # (huge or infinite inputs overflow the squares, and inf / inf is NaN: the spec's
    # results, computed without numpy's warnings)
    with np.errstate(over="ignore", invalid="ignore"):
        np.square(xc, out=sq[:, back:back + c])
        acc = sq[:, 0:c].copy()
        for i in range(1, back + ahead + 1):
            acc += sq[:, i:i + c]
        acc *= cdt.type(alpha / size)
        acc += cdt.type(bias)
        if beta == 0.75:
            # x^-0.75 = 1 / (sqrt(x) * sqrt(sqrt(x))): much cheaper than np.power
            r = np.sqrt(acc)
            acc = np.sqrt(r, out=acc)
            acc *= r
        elif beta == 0.5:
            np.sqrt(acc, out=acc)
        else:
            np.power(acc, cdt.type(beta), out=acc)
        y = np.divide(xc, acc, out=acc)
    return (y.astype(x.dtype, copy=False),)


# --------------------------------------------------------------------------------------
# MaxRoiPool
# --------------------------------------------------------------------------------------

# onnxruntime converts every ROI coordinate and bin edge to a C int; a value outside
# int32 makes that conversion (or a later sum) undefined, so such ROIs are refused.
_INT32_LIMIT = 2 ** 31

# At most this many values are gathered at once (ROIs x bin pixels x channels).
_ROI_GATHER_ELEMENTS = 1 << 22


def _round_half_away(v):
    """C's round(): halves away from zero (numpy's rounds them to even). float64 keeps
    |v| + 0.5 exact for every float32 v."""
    v = v.astype(np.float64)
    return np.copysign(np.floor(np.abs(v) + 0.5), v)


def _roi_int32(value, what, rois_f32, where):
    """Check that int64 `value` (one row per ROI) fits onnxruntime's int arithmetic.

    Raises:
        ShapeError: names the first ROI whose `what` leaves int32.
    """
    bad = (value <= -_INT32_LIMIT) | (value >= _INT32_LIMIT)
    if bad.any():
        k = int(np.flatnonzero(bad.reshape(len(bad), -1).any(axis=1))[0])
        raise ShapeError(f"{where}: roi {k} {rois_f32[k].tolist()} gives a {what} outside "
                         f"the 32-bit range onnxruntime computes it in")


def _roi_bins(rois, scale, pooled, height, width, where):
    """Per ROI: its image index and the clipped [start, end) rows (R, PH) and columns
    (R, PW) of its bins, computed as onnxruntime's float32 kernel does (Caffe's ROI
    pooling): coordinates scaled in float32 and rounded half away from zero, the ROI at
    least 1x1, bin edges floor(i * size / bins) and ceil((i + 1) * size / bins) in
    float32, shifted to the ROI and clipped to the image.

    Raises:
        ShapeError: a coordinate is not finite or does not fit a 32-bit int.
    """
    r32 = rois.astype(np.float32)
    if not np.isfinite(r32).all():
        k = int(np.flatnonzero(~np.isfinite(r32).all(axis=1))[0])
        raise ShapeError(f"{where}: roi {k} is {r32[k].tolist()}; batch index and "
                         "coordinates must be finite (onnxruntime's result is undefined)")
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = r32[:, 1:] * np.float32(scale)
    if not np.isfinite(scaled).all():
        k = int(np.flatnonzero(~np.isfinite(scaled).all(axis=1))[0])
        raise ShapeError(f"{where}: roi {k} {r32[k].tolist()} times spatial_scale {scale} "
                         "is not finite (onnxruntime's result is undefined)")
    corners = _round_half_away(scaled)
    _roi_int32(corners, "scaled corner", r32, where)
    corners = corners.astype(np.int64)
    sw, sh, ew, eh = corners.T
    ends = []
    for start, end, bins, size in ((sh, eh, pooled[0], height), (sw, ew, pooled[1], width)):
        extent = np.maximum(end - start + 1, 1)   # a reversed ROI counts as 1x1
        _roi_int32(extent, "ROI size", r32, where)
        step = extent.astype(np.float32) / np.float32(bins)
        idx = np.arange(bins, dtype=np.float32)
        lo = np.floor(idx * step[:, None]).astype(np.int64)
        hi = np.ceil((idx + np.float32(1)) * step[:, None]).astype(np.int64)
        _roi_int32(hi, "bin end", r32, where)
        lo, hi = lo + start[:, None], hi + start[:, None]
        _roi_int32(hi, "shifted bin end", r32, where)
        ends.append((np.clip(lo, 0, size), np.clip(hi, 0, size)))
    return ends


def _roi_batch(rois, batch_size, where):
    """The image index of each ROI: its first column truncated toward zero, as a C
    int cast does (-0.9 is image 0).

    Raises:
        ShapeError: an index is NaN or outside [0, batch_size) (onnxruntime refuses
            those it can convert, and a NaN converts to an undefined int).
    """
    raw = rois[:, 0].astype(np.float32)
    with np.errstate(invalid="ignore"):
        idx = np.trunc(raw)
        bad = ~((idx >= 0) & (idx < batch_size))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ShapeError(f"{where}: roi {k} has batch index {float(raw[k])!r}, outside "
                         f"[0, {batch_size}) for X of batch {batch_size}")
    return idx.astype(np.int64)


def _max_fold(vals, floor, nans=True):
    """onnxruntime's bin maximum, y = std::max(v, y) over a bin in row-major order
    starting from `floor`, of vals (R, K, C): the bin's K values per ROI and channel.

    That fold keeps a NaN only until the next value replaces it (NaN < y and y < NaN
    are both false), so a bin's result is the maximum of what follows its last NaN
    (NaN when nothing does), or of the whole bin and `floor` when it has no NaN.
    `nans` False says vals hold none.
    """
    y = np.maximum(vals.max(axis=1), floor)
    if not nans:
        return y
    nan = np.isnan(vals)
    if not nan.any():
        return y
    k = vals.shape[1]
    last = k - 1 - np.argmax(nan[:, ::-1], axis=1)                # (R, C)
    after = np.arange(k)[None, :, None] > last[:, None, :]
    tail = np.where(after, vals, -np.inf).max(axis=1)
    tail[~after.any(axis=1)] = np.nan
    return np.where(nan.any(axis=1), tail, y)


def _max_roi_pool_kernel(inputs, attrs, ctx):
    """MaxRoiPool: the maximum of X over each bin of each ROI (see `_roi_bins`); an
    empty bin (clipped away) is 0, a bin's maximum is at least float32's lowest value
    (onnxruntime's starting value), and NaNs are kept as onnxruntime's fold keeps them
    (`_max_fold`). Computed in float32 for float16 and float32 X (onnxruntime runs
    float16 through float32), in float64 for float64 X (no onnxruntime kernel: the same
    arithmetic, ROI coordinates still in float32, float64's lowest as the floor).

    Raises:
        ShapeError: X is not 4-D or rois not (num_rois, 5) (onnxruntime aborts the
            process on some of these); a batch index is NaN or out of range; an ROI
            coordinate is not finite or leaves int32 once scaled (undefined in
            onnxruntime).
        OpAttributeError: pooled_shape or spatial_scale is invalid.
        ResourceExhaustedError: pooled_shape makes the output more than 2 GiB larger
            than X and rois (2**40 bins), refused before it is allocated.
    """
    x, rois = np.asarray(inputs[0]), np.asarray(inputs[1])
    where = "MaxRoiPool"
    problem = _max_roi_pool_attr_problem(attrs)
    if problem:
        raise OpAttributeError(f"{where}: {problem}")
    _max_roi_pool_shapes(x.shape, rois.shape, where)
    ph, pw = (int(v) for v in attrs["pooled_shape"])
    n, c, h, w = x.shape
    r = rois.shape[0]
    cdt = np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)
    check_result_size(where, "the output", (r, c, ph, pw), cdt.itemsize,
                      beyond=x.nbytes + rois.nbytes, cause=f"pooled_shape {[ph, pw]}")
    y = np.zeros((r, ph, pw, c), dtype=cdt)
    if r == 0:
        return (np.ascontiguousarray(y.transpose(0, 3, 1, 2), dtype=x.dtype),)
    batch = _roi_batch(rois, n, where)
    (hs, he), (ws, we) = _roi_bins(rois, attrs["spatial_scale"], (ph, pw), h, w, where)
    if c == 0 or h == 0 or w == 0:
        # every bin clipped away: zeros
        return (np.ascontiguousarray(y.transpose(0, 3, 1, 2), dtype=x.dtype),)
    # Channels last, so that gathering one pixel of an ROI copies a contiguous row.
    xt = np.ascontiguousarray(x.transpose(0, 2, 3, 1), dtype=cdt)
    floor = np.finfo(cdt).min
    nans = bool(np.isnan(xt).any())
    # Per bin, the ROIs whose bin there has the same size are gathered together, as
    # (ROIs, rows * columns, C): exactly the bins' pixels, in onnxruntime's row-major
    # order, each pass vectorised over those ROIs and all channels. (Empty bins stay 0.)
    tall = np.maximum(he - hs, 0)
    wide = np.maximum(we - ws, 0)
    for i in range(ph):
        for j in range(pw):
            size = tall[:, i] * (w + 1) + wide[:, j]
            for key in np.unique(size[(tall[:, i] > 0) & (wide[:, j] > 0)]):
                group = np.flatnonzero(size == key)
                kh, kw = int(tall[group[0], i]), int(wide[group[0], j])
                step = max(1, _ROI_GATHER_ELEMENTS // (kh * kw * c))
                for k in range(0, len(group), step):  # bounded memory for large bins
                    sel = group[k:k + step]
                    rows = hs[sel, i, None] + np.arange(kh)
                    cols = ws[sel, j, None] + np.arange(kw)
                    vals = xt[batch[sel, None, None], rows[:, :, None], cols[:, None, :]]
                    y[sel, i, j] = _max_fold(vals.reshape(len(sel), kh * kw, c), floor,
                                             nans)
    return (np.ascontiguousarray(y.transpose(0, 3, 1, 2), dtype=x.dtype),)


def _max_roi_pool_attr_problem(attrs):
    """What is wrong with MaxRoiPool's attributes (onnxruntime refuses the model), or
    None: pooled_shape must be two positive ints, spatial_scale positive."""
    pooled = attrs.get("pooled_shape")
    if pooled is None or len(pooled) != 2:
        return f"pooled_shape must hold 2 values (height, width), got {pooled!r}"
    if any(int(v) <= 0 for v in pooled):
        return f"pooled_shape values must be positive, got {list(pooled)}"
    scale = attrs.get("spatial_scale", 1.0)
    if not float(scale) > 0:
        return f"spatial_scale must be positive, got {scale}"
    return None


def _max_roi_pool_shapes(x_shape, rois_shape, where):
    """Check X (N, C, H, W) and rois (num_rois, 5); None dims (unknown) pass.

    Raises:
        ShapeError: names both shapes.
    """
    if x_shape is not None and len(x_shape) != 4:
        raise ShapeError(f"{where}: X must be 4-D (N, C, H, W), got shape {list(x_shape)}")
    if rois_shape is not None and (len(rois_shape) != 2
                                   or rois_shape[1] not in (5, None)):
        raise ShapeError(f"{where}: rois must be (num_rois, 5) rows of [batch_index, x1, "
                         f"y1, x2, y2], got shape {list(rois_shape)}")


def _max_roi_pool_infer(attrs, inputs):
    """MaxRoiPool's output: (num_rois, C, pooled_h, pooled_w) of X's dtype.

    Raises:
        ShapeError: X is not 4-D or rois not (num_rois, 5).
        OpAttributeError: pooled_shape or spatial_scale is invalid.
    """
    x, rois = inputs[0], inputs[1]
    problem = _max_roi_pool_attr_problem(attrs)
    if problem:
        raise OpAttributeError(f"MaxRoiPool: {problem}")
    _max_roi_pool_shapes(x.shape, rois.shape, "MaxRoiPool")
    r = rois.shape[0] if rois.shape is not None else None
    c = x.shape[1] if x.shape is not None else None
    ph, pw = (int(v) for v in attrs["pooled_shape"])
    return [TensorInfo(x.dtype, (r, c, ph, pw))]


_FLOATS = ("float16", "float32", "float64")
_POOL_ATTRS = (("auto_pad", "string", "NOTSET"), ("ceil_mode", "int", 0),
               ("dilations", "ints", None), ("kernel_shape", "ints"),
               ("pads", "ints", None), ("strides", "ints", None))

AveragePool = define(
    "AveragePool", ("X",), ("Y",), _averagepool_kernel,
    _POOL_ATTRS + (("count_include_pad", "int", 0),), infer=_pool_infer, dtypes=_FLOATS,
    since_version=22, doc="Average over sliding windows (padding excluded unless "
                          "count_include_pad).")

GlobalAveragePool = define(
    "GlobalAveragePool", ("X",), ("Y",), _global_kernel("mean"), infer=_global_infer,
    dtypes=_FLOATS, since_version=22, doc="Mean over all spatial dims, kept as size 1.")

GlobalMaxPool = define(
    "GlobalMaxPool", ("X",), ("Y",), _global_kernel("max"), infer=_global_infer,
    dtypes=_FLOATS, since_version=22, doc="Max over all spatial dims, kept as size 1.")

GlobalLpPool = define(
    "GlobalLpPool", ("X",), ("Y",), _global_kernel("lp"), (("p", "int", 2),),
    infer=_global_infer, dtypes=_FLOATS, since_version=22,
    doc="p-norm over all spatial dims, kept as size 1.")

LRN = define(
    "LRN", ("X",), ("Y",), _lrn_kernel,
    (("alpha", "float", 0.0001), ("beta", "float", 0.75), ("bias", "float", 1.0),
     ("size", "int")), infer=lambda attrs, inputs: [TensorInfo(inputs[0].dtype,
                                                               inputs[0].shape)],
    dtypes=_FLOATS, since_version=13, doc="Local response normalization across channels.")

LpPool = define(
    "LpPool", ("X",), ("Y",), _lppool_kernel, _POOL_ATTRS + (("p", "int", 2),),
    infer=_pool_infer, dtypes=_FLOATS, since_version=22,
    doc="p-norm over sliding windows (zero padding).")

MaxPool = define(
    "MaxPool", ("X",), ("Y", "Indices?"), _maxpool_kernel,
    _POOL_ATTRS + (("storage_order", "int", 0),), infer=_maxpool_infer,
    dtypes=_FLOATS + ("int8", "uint8"), since_version=22,
    doc="Max over sliding windows; Indices are flat indices into X.")

MaxRoiPool = define(
    "MaxRoiPool", ("X", "rois"), ("Y",), _max_roi_pool_kernel,
    (("pooled_shape", "ints"), ("spatial_scale", "float", 1.0)), infer=_max_roi_pool_infer,
    dtypes=_FLOATS, since_version=22, check_attrs=_max_roi_pool_attr_problem,
    doc="Max over each bin of each region of interest (Caffe's ROI pooling).")

OPS = (AveragePool, GlobalAveragePool, GlobalLpPool, GlobalMaxPool, LRN, LpPool, MaxPool,
       MaxRoiPool)

KNOWN_FAILURES: dict[str, str] = {}

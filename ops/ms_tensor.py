"""Operators: onnxruntime's tensor and math contrib ops (domain "com.microsoft").

ExpandDims, Range, Pad, GatherND, Trilu, Inverse, Unique, CDist, IsAllFinite,
ComplexMul, ComplexMulConj, Rfft, Irfft, CropAndResize, MurmurHash3, TorchEmbedding,
WordConvEmbedding, NGramRepeatBlock, DynamicTimeWarping, UnfoldTensor, GridSample,
ConvTransposeWithDynamicPads and SampleOp. Models hold them when they were exported
for onnxruntime: its PyTorch export helper (`onnxruntime.tools.
pytorch_export_contrib_ops`) writes Inverse, GridSample and Trilu; its Whisper export
writes DynamicTimeWarping and UnfoldTensor (word timestamps) and its generation tools
NGramRepeatBlock; feature hashing uses MurmurHash3; the rest appear in older converted
models and in onnxruntime-training graphs. Inputs, outputs, attributes and defaults
follow onnxruntime's op schemas; semantics follow its CPU kernels, which the tests use
as the oracle. IsAllFinite, ComplexMul, ComplexMulConj, Rfft, Irfft and TorchEmbedding
have only CUDA kernels in onnxruntime: they follow the schema text and the CUDA
kernels' formulas (tested against the same math written as standard ONNX ops).

Where the contrib op differs from the standard op of the same name (whose onegraph
kernel it reuses): ExpandDims is Unsqueeze of one axis given as an int32 input; Range
takes delta as an optional input (default 1); Pad takes no axes input, pads may also
be (1, 2 * rank) and the fill value is the optional third input; GatherND has no
batch_dims (always 0); Unique takes a 1-D input only and returns (y, idx, counts) in
first-occurrence order; GridSample (contrib) is 4-D only with the mode names bilinear,
nearest and bicubic; ConvTransposeWithDynamicPads is ConvTranspose whose pads come from
an int64 input instead of the attribute.

Loops: DynamicTimeWarping's DP runs one anti-diagonal at a time (M + N - 1 vectorised
steps) and traces the path back in at most M + N steps; MurmurHash3 loops over the
4-byte blocks of the longest key, hashing every element at once in uint32 arithmetic.

Refused (UnsupportedOpError / OpAttributeError naming the op and the value): CDist
metrics other than sqeuclidean/euclidean; Rfft/Irfft with onesided=0 or normalized=1
(the schema says "must be"), or signal_ndim outside 1..3; IsAllFinite with both
isnan_only and isinf_only; MurmurHash3 seeds beyond 32 bits (onnxruntime cuts them);
Pad in reflect/edge/wrap mode cropping an axis to nothing, or wrapping an empty input,
and ConvTransposeWithDynamicPads with an unknown auto_pad (as onnxruntime refuses them);
WordConvEmbedding character ids outside C's rows (onnxruntime reads past its table);
results whose size comes from a value (Range's length, Pad's pads, CropAndResize's
crop_size, ConvTransposeWithDynamicPads' strides) beyond 2 GiB, with a
ResourceExhaustedError before allocating. MurmurHash3's output is uint32 only for
positive=1 (any other value is int32, as onnxruntime reads it). Trilu and UnfoldTensor
take every dtype (onnxruntime's CPU kernels: Trilu float16/32/64 and int64, UnfoldTensor
not int8; the results only select or move elements). GridSample coordinates beyond the
int range (|grid| ~1e30, inf) sample as far outside the image; onnxruntime's results
there come from undefined float-to-int casts. Inverse of a singular matrix raises
ExecutionError (where onnxruntime returns inf/nan). WordConvEmbedding writes zeros for a
word whose first character id is <= 0 (onnxruntime leaves that output row unwritten).
Kernels compute float16 in float32 and round once at the end.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError, UnsupportedOpError
from .common import infer_same
from .conv import _convtranspose_infer, conv_transpose_nd
from .image import _grid_sample_kernel
from .indexing import _gather_nd
from .ms_fused import check_result_size, check_window_values
from .ms_transformer import _DOMAIN, _padded, _work
from .registry import NUM_OUTPUTS, TensorInfo, define
from .shape import _FOLD_LIMIT, _pad, _range, _range_length, _scalar, _trilu

_F16_32_64 = ("float16", "float32", "float64")
_INT32 = np.dtype(np.int32)
_INT64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)


def _as_float(x, op, what):
    """x as an array; raises ShapeError naming `what` unless it is a float tensor."""
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise ShapeError(f"{op}: {what} must be a float tensor, got {x.dtype}")
    return x


def _rank_of(info):
    """The rank a TensorInfo knows, or None."""
    return None if info is None or info.shape is None else len(info.shape)


# --------------------------------------------------------------------------------------
# ExpandDims, Range, Pad, GatherND, Trilu, Unique: the standard kernels in contrib form
# --------------------------------------------------------------------------------------


def _expand_axis(op, axis, rank):
    """ExpandDims' axis (a one-element int32 tensor) as a position in [0, rank]."""
    a = np.asarray(axis)
    if a.size != 1 or a.dtype.kind not in "iu":
        raise ShapeError(f"{op}: axis must be one integer, got {a.dtype} of shape "
                         f"{list(a.shape)}")
    k = int(a.reshape(-1)[0])
    if not -rank - 1 <= k <= rank:
        raise ShapeError(f"{op}: axis {k} out of range [{-rank - 1}, {rank}] for input "
                         f"of rank {rank}")
    return k + rank + 1 if k < 0 else k


def _expand_dims_kernel(inputs, attrs, ctx):
    """X with a new dim of size 1 at `axis` (negative counts from the output's end)."""
    x, axis = np.asarray(inputs[0]), inputs[1]
    return (np.expand_dims(x, _expand_axis("ExpandDims", axis, x.ndim)),)


def _expand_dims_infer(attrs, inputs):
    """X's shape with a 1 at the axis when the axis value is known."""
    x, axis = inputs
    if x.shape is None or axis.value is None:
        rank = _rank_of(x)
        return [TensorInfo(x.dtype, None if rank is None else (None,) * (rank + 1))]
    k = _expand_axis("ExpandDims", axis.value, len(x.shape))
    return [TensorInfo(x.dtype, tuple(x.shape[:k]) + (1,) + tuple(x.shape[k:]))]


def _range_kernel(inputs, attrs, ctx):
    """start, start + delta, ... below limit (above, for a negative delta); delta
    defaults to 1 in start's dtype. Errors come from the standard Range's kernel."""
    start, limit, delta = _padded(inputs, 3)
    start, limit = np.asarray(start), np.asarray(limit)
    if limit.dtype != start.dtype or (delta is not None
                                      and np.asarray(delta).dtype != start.dtype):
        raise ShapeError(f"Range: start ({start.dtype}), limit ({limit.dtype}) and delta "
                         "must have one dtype")
    if delta is None:
        delta = np.ones((), start.dtype)
    n = _range_length(*(_scalar(v, name) for v, name in
                        ((start, "start"), (limit, "limit"), (delta, "delta"))))
    # the length is a value: refused past the result limit rather than allocated (the
    # values are built in int64/float64 before the cast, hence 8 bytes each at least)
    check_result_size("Range", "the output", (n,), max(start.dtype.itemsize, 8))
    return _range([start, limit, delta], attrs, ctx)


def _range_infer(attrs, inputs):
    """Length (and, for short ranges, the values) when start, limit and delta are
    known; the length comes from the standard Range's rule, so a huge range is never
    materialised here."""
    start, limit, delta = _padded(inputs, 3)
    known = [t for t in (start, limit, delta) if t is not None]
    if not all(t.value is not None for t in known):
        return [TensorInfo(start.dtype, (None,))]
    step = np.ones((), start.dtype) if delta is None else delta.value
    n = _range_length(*(_scalar(v, name) for v, name in
                        ((start.value, "start"), (limit.value, "limit"), (step, "delta"))))
    if n > _FOLD_LIMIT:
        return [TensorInfo(start.dtype, (n,))]
    (y,) = _range_kernel([start.value, limit.value, step], attrs, None)
    return [TensorInfo(start.dtype, y.shape, y)]


def _pads_1d(op, pads, rank):
    """Pad's pads as a 1-D int list: (2 * rank,) or (1, 2 * rank)."""
    p = np.asarray(pads)
    if p.dtype != _INT64:
        raise ShapeError(f"{op}: pads must be int64, got {p.dtype}")
    if p.ndim == 2 and p.shape[0] == 1:
        p = p[0]
    if p.ndim != 1 or p.shape[0] != 2 * rank:
        raise ShapeError(f"{op}: pads must be of shape [{2 * rank}] or [1, {2 * rank}] for "
                         f"input of rank {rank}, got {list(np.shape(pads))}")
    return p


def _pad_kernel(inputs, attrs, ctx):
    """Pad (or crop, for negative pads) in constant/reflect/edge mode (and wrap, which
    onnxruntime's contrib kernel also runs) with the standard Pad's kernel."""
    x, pads, value = _padded(inputs, 3)
    x = _as_float(x, "Pad", "data")
    if attrs["mode"] not in ("constant", "reflect", "edge", "wrap"):
        raise OpAttributeError(f"Pad: unknown mode {attrs['mode']!r} (constant, reflect, "
                               "edge)")
    if value is not None:
        value = np.asarray(value)
        if value.size != 1 or value.ndim > 1:
            raise ShapeError(f"Pad: value must be a scalar or a one-element 1-D tensor, "
                             f"got shape {list(value.shape)}")
    p = _pads_1d("Pad", pads, x.ndim)
    r = x.ndim
    if attrs["mode"] != "constant":
        # onnxruntime's rules: no axis cropped to nothing, and no wrap padding of an
        # empty input (there is nothing to repeat)
        for i, d in enumerate(x.shape):
            if d > 0 and d + min(int(p[i]), 0) + min(int(p[i + r]), 0) <= 0:
                raise ShapeError(f"Pad: {attrs['mode']} mode crops axis {i} of size {d} to "
                                 f"nothing (pads {p.tolist()})")
        if attrs["mode"] == "wrap" and x.size == 0 and p.any():
            raise ShapeError(f"Pad: wrap mode cannot pad the empty input {list(x.shape)}")
    # the pads are values: an output past the result limit is refused, not allocated
    check_result_size("Pad", "the output", [max(int(d) + int(p[i]) + int(p[i + r]), 0)
                                            for i, d in enumerate(x.shape)], x.itemsize)
    return _pad([x, p, value], attrs, ctx)


def _pad_infer(attrs, inputs):
    """X's dims grown by the pads when their value is known."""
    x, pads = inputs[0], inputs[1]
    if x.shape is None or pads.value is None:
        return [TensorInfo(x.dtype, None if x.shape is None else (None,) * len(x.shape))]
    p = [int(v) for v in _pads_1d("Pad", pads.value, len(x.shape))]
    r = len(x.shape)
    return [TensorInfo(x.dtype, tuple(None if d is None else d + p[i] + p[i + r]
                                      for i, d in enumerate(x.shape)))]


def _gather_nd_kernel(inputs, attrs, ctx):
    """The standard GatherND with batch_dims = 0 (the contrib op has no batch dims):
    indices (..., k) address the first k dims of data; negative indices count back."""
    x, idx = np.asarray(inputs[0]), np.asarray(inputs[1])
    if idx.dtype not in (_INT32, _INT64):
        raise ShapeError(f"GatherND: indices must be int32 or int64, got {idx.dtype}")
    return _gather_nd([x, idx], {"batch_dims": 0}, ctx)


def _gather_nd_infer(attrs, inputs):
    """indices.shape[:-1] + data.shape[k:] for k = indices.shape[-1]."""
    x, idx = inputs
    if idx.shape is not None and len(idx.shape) == 0:
        raise ShapeError("GatherND: indices must have a last dim (the index length), got a "
                         "scalar")
    if x.shape is None or idx.shape is None or idx.shape[-1] is None:
        return [TensorInfo(x.dtype, None)]
    if idx.shape[-1] > len(x.shape):
        raise ShapeError(f"GatherND: indices {list(idx.shape)} address {idx.shape[-1]} dims; "
                         f"data {list(x.shape)} has {len(x.shape)}")
    return [TensorInfo(x.dtype, tuple(idx.shape[:-1]) + tuple(x.shape[idx.shape[-1]:]))]


def _trilu_kernel(inputs, attrs, ctx):
    """The standard Trilu: the upper (or lower) triangle of the last two dims from the
    k-th diagonal on."""
    return _trilu(inputs, attrs, ctx)


def _unique_kernel(inputs, attrs, ctx):
    """Distinct values of a 1-D x in first-occurrence order, the index of each element
    of x in them, and their counts. Each NaN is distinct, as onnxruntime's hash map
    keeps them."""
    x = np.asarray(inputs[0])
    if x.ndim != 1:
        raise ShapeError(f"Unique: input must be 1-D, got shape {list(x.shape)}")
    if x.dtype.kind not in "biuf":
        raise ShapeError(f"Unique: input must be numeric or bool, got {x.dtype}")
    _, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                          return_counts=True, equal_nan=False)
    # sorted -> first-occurrence order, the inverse map renumbered to match
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    # the first occurrence itself (numpy's representative of 0.0 == -0.0 may differ)
    return (x[first[order]], rank[inverse.reshape(-1)].astype(np.int64),
            counts[order].astype(np.int64))


def _unique_infer(attrs, inputs):
    """y and counts of unknown length; idx of x's shape."""
    x = inputs[0]
    n = None if x.shape is None else x.shape
    return [TensorInfo(x.dtype, (None,)), TensorInfo(_INT64, n), TensorInfo(_INT64, (None,))]


# --------------------------------------------------------------------------------------
# Inverse, CDist, IsAllFinite, ComplexMul(Conj), Rfft, Irfft
# --------------------------------------------------------------------------------------


def _inverse_kernel(inputs, attrs, ctx):
    """The inverse of each square matrix in the last two dims."""
    x = _as_float(inputs[0], "Inverse", "X")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"Inverse: X must be square matrices (..., n, n), got shape "
                         f"{list(x.shape)}")
    try:
        with np.errstate(all="ignore"):
            y = np.linalg.inv(x.astype(_work(x.dtype)))
    except np.linalg.LinAlgError:
        raise ExecutionError("Inverse: a matrix of X is singular") from None
    return (y.astype(x.dtype),)


def _cdist_kernel(inputs, attrs, ctx):
    """Pairwise (squared) euclidean distances of A's rows (M, K) to B's rows (N, K), by
    onnxruntime's formula: |(-2 A B^T + |a|^2) + |b|^2|, then sqrt for euclidean."""
    op = "CDist"
    metric = attrs["metric"]
    if metric not in ("sqeuclidean", "euclidean"):
        raise UnsupportedOpError(f"{op}: metric {metric!r} is not supported "
                                 "(sqeuclidean, euclidean)")
    a, b = _as_float(inputs[0], op, "A"), _as_float(inputs[1], op, "B")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or a.shape[1] == 0:
        raise ShapeError(f"{op}: A {list(a.shape)} and B {list(b.shape)} must be 2-D with "
                         "one positive number of columns")
    if a.dtype != b.dtype:
        raise ShapeError(f"{op}: A is {a.dtype} but B is {b.dtype}")
    w = _work(a.dtype)
    a, b = a.astype(w, copy=False), b.astype(w, copy=False)
    d = (-2 * (a @ b.T) + np.einsum("ij,ij->i", a, a)[:, None]) \
        + np.einsum("ij,ij->i", b, b)[None, :]
    d = np.abs(d)
    return ((np.sqrt(d) if metric == "euclidean" else d).astype(inputs[0].dtype),)


def _cdist_infer(attrs, inputs):
    """(rows of A, rows of B)."""
    a, b = inputs
    for t, what in ((a, "A"), (b, "B")):
        if t.shape is not None and len(t.shape) != 2:
            raise ShapeError(f"CDist: {what} must be 2-D, got shape {list(t.shape)}")
    m = None if a.shape is None else a.shape[0]
    n = None if b.shape is None else b.shape[0]
    return [TensorInfo(a.dtype, (m, n))]


def _is_all_finite_kernel(inputs, attrs, ctx):
    """A bool scalar: no element of any input is NaN or +-inf (only NaN with
    isnan_only, only infinities with isinf_only)."""
    op = "IsAllFinite"
    nan_only, inf_only = int(attrs["isnan_only"]), int(attrs["isinf_only"])
    if nan_only and inf_only:
        raise OpAttributeError(f"{op}: isnan_only and isinf_only cannot both be set")
    if not inputs:
        raise ShapeError(f"{op}: needs at least one input")
    ok = True
    for i, x in enumerate(inputs):
        x = _as_float(x, op, f"input {i}")
        if nan_only:
            bad = np.isnan(x).any()
        elif inf_only:
            bad = np.isinf(x).any()
        else:
            bad = not np.isfinite(x).all()
        ok = ok and not bad
    return (np.array(ok),)


def _is_all_finite_infer(attrs, inputs):
    """A bool scalar."""
    return [TensorInfo(_BOOL, ())]


def _complex_mul(op, inputs, conj):
    """A * B (or A * conj(B)) of (..., 2) complex pairs, in the work dtype."""
    a, b = _as_float(inputs[0], op, "A"), _as_float(inputs[1], op, "B")
    if a.dtype != b.dtype:
        raise ShapeError(f"{op}: A is {a.dtype} but B is {b.dtype}")
    if a.ndim < 1 or b.ndim < 1 or a.shape[-1] != 2 or b.shape[-1] != 2:
        raise ShapeError(f"{op}: A {list(a.shape)} and B {list(b.shape)} must end in a dim "
                         "of 2 (real, imaginary)")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ShapeError(f"{op}: A {list(a.shape)} and B {list(b.shape)} do not "
                         "broadcast") from None
    w = _work(a.dtype)
    ar, ai = a[..., 0].astype(w), a[..., 1].astype(w)
    br, bi = b[..., 0].astype(w), b[..., 1].astype(w)
    if conj:
        bi = -bi
    y = np.stack([ar * br - ai * bi, ar * bi + ai * br], axis=-1)
    return (y.astype(a.dtype),)


def _complex_mul_kernel(inputs, attrs, ctx):
    """A * B of complex numbers stored as (..., 2) = (real, imaginary), broadcast."""
    return _complex_mul("ComplexMul", inputs, conj=False)


def _complex_mul_conj_kernel(inputs, attrs, ctx):
    """A * conj(B) of complex numbers stored as (..., 2) = (real, imaginary)."""
    return _complex_mul("ComplexMulConj", inputs, conj=True)


def _complex_mul_infer(attrs, inputs):
    """The broadcast shape of A and B (both ending in 2)."""
    a, b = inputs
    if a.shape is None or b.shape is None:
        return [TensorInfo(a.dtype, None)]
    if len(a.shape) < 1 or len(b.shape) < 1 or a.shape[-1] not in (2, None) \
            or b.shape[-1] not in (2, None):
        raise ShapeError(f"ComplexMul: A {list(a.shape)} and B {list(b.shape)} must end in "
                         "a dim of 2")
    rank = max(len(a.shape), len(b.shape))
    pa = (1,) * (rank - len(a.shape)) + tuple(a.shape)
    pb = (1,) * (rank - len(b.shape)) + tuple(b.shape)
    out = []
    for x, y in zip(pa, pb):
        if x is None or y is None:
            # an unknown dim against one > 1 must be 1 or that dim: the output is it
            known = y if x is None else x
            out.append(known if known not in (None, 1) else None)
        elif x != y and 1 not in (x, y):
            raise ShapeError(f"ComplexMul: A {list(a.shape)} and B {list(b.shape)} do not "
                             "broadcast")
        else:
            out.append(y if x == 1 else x)  # (1 against 0 broadcasts to 0)
    return [TensorInfo(a.dtype, tuple(out))]


def _fft_attrs(op, attrs, rank_needed, rank):
    """signal_ndim after checking the FFT attributes and the input rank."""
    nd = int(attrs["signal_ndim"])
    if not 1 <= nd <= 3:
        raise OpAttributeError(f"{op}: signal_ndim must be 1, 2 or 3, got {nd}")
    if int(attrs["onesided"]) != 1:
        raise UnsupportedOpError(f"{op}: onesided={attrs['onesided']} is not supported "
                                 "(only one-sided transforms, as the schema says)")
    if int(attrs["normalized"]) != 0:
        raise UnsupportedOpError(f"{op}: normalized={attrs['normalized']} is not supported "
                                 "(the schema says it must be 0)")
    if rank < nd + rank_needed:
        raise ShapeError(f"{op}: signal_ndim {nd} needs an input of rank >= "
                         f"{nd + rank_needed}, got rank {rank}")
    return nd


def _rfft_kernel(inputs, attrs, ctx):
    """The unnormalised forward FFT of a real signal over the last signal_ndim dims,
    keeping the n // 2 + 1 non-negative frequencies of the last one: (..., n) ->
    (..., n // 2 + 1, 2) = (real, imaginary)."""
    op = "Rfft"
    x = _as_float(inputs[0], op, "X")
    nd = _fft_attrs(op, attrs, 0, x.ndim)
    if 0 in x.shape[x.ndim - nd:]:
        raise ShapeError(f"{op}: the signal dims {list(x.shape[x.ndim - nd:])} must be "
                         "positive")
    y = np.fft.rfftn(x.astype(_work(x.dtype)), axes=tuple(range(x.ndim - nd, x.ndim)))
    return (np.stack([y.real, y.imag], axis=-1).astype(x.dtype),)


def _rfft_infer(attrs, inputs):
    """(..., n // 2 + 1, 2) for a last dim n."""
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    last = x.shape[-1] if x.shape else None
    return [TensorInfo(x.dtype, tuple(x.shape[:-1])
                       + (None if last is None else last // 2 + 1, 2))]


def _irfft_kernel(inputs, attrs, ctx):
    """The inverse of Rfft, scaled by 1 / (signal size) as onnxruntime's kernel: input
    (..., m, 2) -> real output (..., 2 m - 1) (onnxruntime's output length: an odd n,
    for which the m bins are all of the spectrum's non-negative half)."""
    op = "Irfft"
    x = _as_float(inputs[0], op, "X")
    nd = _fft_attrs(op, attrs, 1, x.ndim)
    if x.shape[-1] != 2:
        raise ShapeError(f"{op}: X's last dim must be 2 (real, imaginary), got shape "
                         f"{list(x.shape)}")
    sig = x.shape[x.ndim - 1 - nd:-1]
    if 0 in sig:
        raise ShapeError(f"{op}: the signal dims {list(sig)} must be positive")
    w = _work(x.dtype)
    z = x[..., 0].astype(w) + 1j * x[..., 1].astype(w)
    s = tuple(sig[:-1]) + (2 * sig[-1] - 1,)
    y = np.fft.irfftn(z, s=s, axes=tuple(range(z.ndim - nd, z.ndim)))
    return (y.astype(x.dtype),)


def _irfft_infer(attrs, inputs):
    """(..., 2 m - 1) for input (..., m, 2)."""
    x = inputs[0]
    if x.shape is None or len(x.shape) < 2:
        return [TensorInfo(x.dtype, None)]
    m = x.shape[-2]
    return [TensorInfo(x.dtype, tuple(x.shape[:-2]) + (None if m is None else 2 * m - 1,))]


# --------------------------------------------------------------------------------------
# CropAndResize
# --------------------------------------------------------------------------------------


def _crop_coords(lo, hi, size, out):
    """Sample positions (rois, out) along one axis, as onnxruntime's kernel: corner
    aligned lo * (size - 1) + i * (hi - lo) * (size - 1) / (out - 1) with the last one
    exactly hi * (size - 1); the centre for out == 1."""
    lo, hi = lo[:, None], hi[:, None]
    t = lo.dtype.type
    if out > 1:
        scale = (hi - lo) * t(size - 1) / t(out - 1)
        pos = lo * t(size - 1) + np.arange(out, dtype=lo.dtype) * scale
        pos[:, -1:] = hi * t(size - 1)
        pos[:, :1] = lo * t(size - 1)
        return pos
    # onnxruntime adds the corners in the input dtype, scales in double (its literal
    # 0.5), then rounds back
    centre = 0.5 * (lo + hi).astype(np.float64) * (size - 1)
    return centre.astype(lo.dtype)


def _crop_and_resize_kernel(inputs, attrs, ctx):
    """Crops of X (N, C, H, W) at normalised boxes [y1, x1, y2, x2], each resized to
    crop_size (bilinear, or nearest with half-away-from-zero rounding); samples outside
    the image get extrapolation_value. Output (num_rois, C, crop_h, crop_w)."""
    op = "CropAndResize"
    x, rois, idx, size = inputs
    x, rois = _as_float(x, op, "X"), _as_float(rois, op, "rois")
    mode = attrs["mode"]
    if mode not in ("bilinear", "nearest"):
        raise OpAttributeError(f"{op}: unknown mode {mode!r} (bilinear, nearest)")
    if x.ndim != 4:
        raise ShapeError(f"{op}: X must be 4-D (N, C, H, W), got shape {list(x.shape)}")
    if rois.ndim != 2 or rois.shape[1] != 4:
        raise ShapeError(f"{op}: rois must be (num_rois, 4), got shape {list(rois.shape)}")
    idx, size = np.asarray(idx), np.asarray(size)
    if idx.dtype != _INT32 or size.dtype != _INT32:
        raise ShapeError(f"{op}: batch_indices and crop_size must be int32, got "
                         f"{idx.dtype} and {size.dtype}")
    if idx.shape != (rois.shape[0],):
        raise ShapeError(f"{op}: batch_indices must be ({rois.shape[0]},), got shape "
                         f"{list(idx.shape)}")
    if size.shape != (2,) or size.min() <= 0:
        raise ShapeError(f"{op}: crop_size must be two positive values, got "
                         f"{size.tolist()}")
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[0]):
        raise ShapeError(f"{op}: batch_indices {idx.tolist()} out of range for batch "
                         f"{x.shape[0]}")
    ch, cw = int(size[0]), int(size[1])
    _, c, h, w = x.shape
    # the crop size is a value: a fuzzed 2**31 - 1 must not reach numpy as an allocation
    check_result_size(op, "the output", (rois.shape[0], c, ch, cw), 4)
    if (h == 0 or w == 0) and rois.shape[0]:
        raise ShapeError(f"{op}: X {list(x.shape)} has an empty image to crop from")
    work = _work(x.dtype)
    r = rois.astype(work)
    ys = _crop_coords(r[:, 0], r[:, 2], h, ch)  # (R, ch)
    xs = _crop_coords(r[:, 1], r[:, 3], w, cw)  # (R, cw)
    inside = ((ys >= 0) & (ys <= h - 1))[:, :, None] & ((xs >= 0) & (xs <= w - 1))[:, None]
    img = x.astype(work)[idx]  # (R, C, H, W)
    rr = np.arange(len(idx))[:, None, None]
    with np.errstate(invalid="ignore"):
        ysafe = np.where((ys >= 0) & (ys <= h - 1), ys, 0)
        xsafe = np.where((xs >= 0) & (xs <= w - 1), xs, 0)
    if mode == "nearest":
        yi = np.trunc(ysafe + np.copysign(0.5, ysafe)).astype(np.int64)
        xi = np.trunc(xsafe + np.copysign(0.5, xsafe)).astype(np.int64)
        vals = img[rr, :, yi[:, :, None], xi[:, None, :]]  # (R, ch, cw, C)
    else:
        y0, y1 = np.floor(ysafe).astype(np.int64), np.ceil(ysafe).astype(np.int64)
        x0, x1 = np.floor(xsafe).astype(np.int64), np.ceil(xsafe).astype(np.int64)
        ly = (ysafe - y0).astype(np.float32)[:, :, None, None]
        lx = (xsafe - x0).astype(np.float32)[:, None, :, None]
        f32 = np.float32

        def tap(yy, xx):
            """The image values at rows yy (R, ch), columns xx (R, cw)."""
            return img[rr, :, yy[:, :, None], xx[:, None, :]].astype(f32)

        top = tap(y0, x0) + (tap(y0, x1) - tap(y0, x0)) * lx
        bottom = tap(y1, x0) + (tap(y1, x1) - tap(y1, x0)) * lx
        vals = top + (bottom - top) * ly
    vals = np.where(inside[..., None], vals, np.float32(attrs["extrapolation_value"]))
    return (np.ascontiguousarray(np.moveaxis(vals, -1, 1)).astype(x.dtype),)


def _crop_and_resize_infer(attrs, inputs):
    """(num_rois, C, crop_h, crop_w), the crop size when known."""
    x, rois, _, size = inputs
    if rois.shape is not None and len(rois.shape) != 2:
        raise ShapeError(f"CropAndResize: rois must be (num_rois, 4), got shape "
                         f"{list(rois.shape)}")
    r = None if rois.shape is None else rois.shape[0]
    c = None if x.shape is None or len(x.shape) < 2 else x.shape[1]
    hw = (None, None)
    if size.value is not None and np.size(size.value) == 2:
        hw = tuple(int(v) for v in np.asarray(size.value).reshape(-1))
    return [TensorInfo(x.dtype, (r, c) + hw)]


# --------------------------------------------------------------------------------------
# MurmurHash3
# --------------------------------------------------------------------------------------

_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)


def _rotl(x, r):
    """Rotate uint32 values left by r bits."""
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix_block(h, k, active=None):
    """One body round of MurmurHash3_x86_32 on uint32 arrays (where `active`)."""
    k = _rotl(k * _C1, 15) * _C2
    new = _rotl(h ^ k, 13) * np.uint32(5) + np.uint32(0xE6546B64)
    return new if active is None else np.where(active, new, h)


def _fmix(h):
    """MurmurHash3's 32-bit finalisation mix (avalanche)."""
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def _murmur_fixed(words, seed):
    """Hash each row of `words` (n, k) uint32 (the key's little-endian 4-byte blocks)."""
    h = np.full(words.shape[0], seed, np.uint32)
    for j in range(words.shape[1]):  # a key's 1 or 2 blocks, not its elements
        h = _mix_block(h, words[:, j])
    return _fmix(h ^ np.uint32(4 * words.shape[1]))


def _murmur_bytes(keys, seed):
    """Hash byte strings of different lengths together: the blocks are looped over (up
    to the longest key's), every key at once."""
    lengths = np.array([len(k) for k in keys], np.int64)
    width = int(-(-lengths.max(initial=0) // 4) * 4)
    buf = np.zeros((len(keys), max(width, 4)), np.uint8)
    if width:
        flat = np.frombuffer(b"".join(keys), np.uint8)
        rows = np.repeat(np.arange(len(keys)), lengths)
        cols = np.arange(flat.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        buf[rows, cols] = flat
    words = buf.view("<u4").astype(np.uint32)
    nblocks = lengths // 4
    h = np.full(len(keys), seed, np.uint32)
    for j in range(width // 4):  # blocks of the longest key
        h = _mix_block(h, words[:, j], j < nblocks)
    # tail: the 1-3 bytes past the last block (zeros beyond), mixed without rotl13
    tail = words[np.arange(len(keys)), np.minimum(nblocks, words.shape[1] - 1)]
    keep = (np.uint64(1) << (8 * (lengths % 4)).astype(np.uint64)) - np.uint64(1)
    tail = (tail.astype(np.uint64) & keep).astype(np.uint32)
    k = _rotl(tail * _C1, 15) * _C2
    h = np.where(lengths % 4 > 0, h ^ k, h)
    return _fmix(h ^ lengths.astype(np.uint32))


def _murmur_hash3_kernel(inputs, attrs, ctx):
    """MurmurHash3_x86_32 of each element's bytes with `seed`: 4 for int32/uint32/
    float, 8 for int64/uint64/double, a string's UTF-8 bytes. uint32 output, or the
    same bits as int32 when positive=0."""
    op = "MurmurHash3"
    x = np.asarray(inputs[0])
    seed = int(attrs["seed"])
    if not -2 ** 31 <= seed < 2 ** 32:
        raise OpAttributeError(f"{op}: seed {seed} does not fit 32 bits")
    seed = seed & 0xFFFFFFFF
    with np.errstate(over="ignore"):
        if x.dtype.kind in "OUS":
            flat = x.reshape(-1).tolist()
            if not all(isinstance(v, (str, bytes)) for v in flat):
                raise ShapeError(f"{op}: a string tensor holds a non-string element")
            h = _murmur_bytes([v.encode("utf-8") if isinstance(v, str) else v
                               for v in flat], seed)
        elif x.dtype.name in ("int32", "uint32", "float32", "int64", "uint64", "float64"):
            le = np.ascontiguousarray(x.reshape(-1).astype(x.dtype.newbyteorder("<")))
            words = le.view("<u4").reshape(le.size, x.dtype.itemsize // 4)
            h = _murmur_fixed(words.astype(np.uint32), seed)
        else:
            raise ShapeError(f"{op}: input must be int32, uint32, int64, uint64, float, "
                             f"double or string, got {x.dtype}")
    h = h.reshape(x.shape)
    # onnxruntime reads positive == 1 (any other value, 2 or -1 too, is int32 output)
    return (h if int(attrs["positive"]) == 1 else h.view(np.int32),)


def _murmur_hash3_infer(attrs, inputs):
    """X's shape; uint32 when positive=1, else int32."""
    dtype = np.dtype(np.uint32) if int(attrs["positive"]) == 1 else _INT32
    return [TensorInfo(dtype, inputs[0].shape)]


# --------------------------------------------------------------------------------------
# TorchEmbedding, WordConvEmbedding, NGramRepeatBlock
# --------------------------------------------------------------------------------------


def _torch_embedding_kernel(inputs, attrs, ctx):
    """weight[indices]: one row of weight (N, M) per index. padding_idx and
    scale_grad_by_freq only change the gradient, so the forward pass ignores them."""
    op = "TorchEmbedding"
    weight, idx, pad, scale = _padded(inputs, 4)
    weight, idx = np.asarray(weight), np.asarray(idx)
    if weight.ndim != 2:
        raise ShapeError(f"{op}: weight must be 2-D (N, M), got shape {list(weight.shape)}")
    if idx.dtype != _INT64:
        raise ShapeError(f"{op}: indices must be int64, got {idx.dtype}")
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        raise ShapeError(f"{op}: indices {int(idx.min())}..{int(idx.max())} out of range "
                         f"for {weight.shape[0]} rows")
    for name, v in (("padding_idx", pad), ("scale_grad_by_freq", scale)):
        if v is not None and np.size(v) != 1:
            raise ShapeError(f"{op}: {name} must be a scalar, got shape "
                             f"{list(np.shape(v))}")
    return (weight[idx],)


def _torch_embedding_infer(attrs, inputs):
    """indices.shape + (M,)."""
    w, idx = inputs[0], inputs[1]
    m = None if w.shape is None or len(w.shape) != 2 else w.shape[1]
    return [TensorInfo(w.dtype, None if idx.shape is None else tuple(idx.shape) + (m,))]


def _word_conv_embedding_kernel(inputs, attrs, ctx):
    """Per word of Sequence (seq, word_len) int32 character ids: embed the characters
    with C (chars, E), run the conv W (M, 1, width, E) + B along the word, tanh, and
    max over positions -> (seq, M). A word's length is its count of ids > 0 (0 when
    its first id is <= 0); its first max(length, width) ids are embedded."""
    op = "WordConvEmbedding"
    seq, w, b, c = (np.asarray(v) for v in inputs)
    if seq.dtype != _INT32 or seq.ndim != 2:
        raise ShapeError(f"{op}: Sequence must be 2-D int32 (seq, word_len), got "
                         f"{seq.dtype} of shape {list(seq.shape)}")
    for name, v in (("W", w), ("B", b), ("C", c)):
        if v.dtype != np.float32:
            raise ShapeError(f"{op}: {name} must be float32, got {v.dtype}")
    if w.ndim != 4 or w.shape[1] != 1 or c.ndim != 2 or c.shape[1] != w.shape[3] \
            or b.shape != (w.shape[0],):
        raise ShapeError(f"{op}: W {list(w.shape)}, B {list(b.shape)} and C "
                         f"{list(c.shape)} must be (M, 1, width, E), (M,) and (chars, E)")
    for attr, have in (("embedding_size", w.shape[0]), ("conv_window_size", w.shape[2]),
                       ("char_embedding_size", c.shape[1])):
        given = attrs[attr]
        if given is not None and int(given) != -1 and int(given) != have:
            raise OpAttributeError(f"{op}: {attr}={given} does not match the weights' "
                                   f"{have}")
    m, _, width, e = w.shape
    n, word_len = seq.shape
    if width < 1 or word_len < width:
        raise ShapeError(f"{op}: conv width {width} must be in 1..word length {word_len}")
    lengths = np.where(seq[:, 0] > 0, (seq > 0).sum(axis=1), 0)
    used = np.maximum(lengths, width)[:, None] > np.arange(word_len)  # ids embedded
    ids = np.where(used & (lengths[:, None] > 0), seq, 0)
    looked = ids[used & (lengths[:, None] > 0)]
    if looked.size and (looked.min() < 0 or looked.max() >= c.shape[0]):
        raise ShapeError(f"{op}: character ids {int(looked.min())}..{int(looked.max())} "
                         f"out of range for {c.shape[0]} rows of C")
    emb = np.where(used[..., None], c[ids], np.float32(0))  # (n, word_len, E)
    wins = np.lib.stride_tricks.sliding_window_view(emb, width, axis=1)  # (n, P, E, w)
    wins = wins.transpose(0, 1, 3, 2).reshape(n, word_len - width + 1, width * e)
    act = np.tanh(wins @ w.reshape(m, width * e).T + b)  # (n, P, M)
    valid = np.arange(word_len - width + 1) < (np.maximum(lengths, width) - width + 1)[:, None]
    y = np.where(valid[..., None], act, np.float32(-1e12)).max(axis=1)
    return (np.where(lengths[:, None] > 0, y, np.float32(0)).astype(np.float32),)


def _word_conv_embedding_infer(attrs, inputs):
    """(words, filters), float32."""
    seq, w = inputs[0], inputs[1]
    op = "WordConvEmbedding"
    if seq.shape is not None and len(seq.shape) != 2:
        raise ShapeError(f"{op}: Sequence must be 2-D (seq, word_len), got shape "
                         f"{list(seq.shape)}")
    if w.shape is not None and len(w.shape) != 4:
        raise ShapeError(f"{op}: W must be 4-D (M, 1, width, E), got shape {list(w.shape)}")
    n = None if seq.shape is None else seq.shape[0]
    m = None if w.shape is None else w.shape[0]
    return [TensorInfo(np.dtype(np.float32), (n, m))]


def _ngram_repeat_block_kernel(inputs, attrs, ctx):
    """scores with -inf at every token that would repeat an n-gram of input_ids: for
    each earlier position whose n-1 tokens equal the last n-1, the token after them."""
    op = "NGramRepeatBlock"
    ids, scores = np.asarray(inputs[0]), np.asarray(inputs[1])
    n = int(attrs["ngram_size"])
    if n < 1:
        raise OpAttributeError(f"{op}: ngram_size must be positive, got {n}")
    if ids.dtype != _INT64 or ids.ndim != 2:
        raise ShapeError(f"{op}: input_ids must be 2-D int64, got {ids.dtype} of shape "
                         f"{list(ids.shape)}")
    if scores.dtype != np.float32 or scores.ndim != 2 or scores.shape[0] != ids.shape[0]:
        raise ShapeError(f"{op}: scores must be float32 (batch {ids.shape[0]}, vocab), got "
                         f"{scores.dtype} of shape {list(scores.shape)}")
    out = scores.copy()
    batch, cur = ids.shape
    if cur + 1 < n or cur < n:
        return (out,)
    grams = np.lib.stride_tricks.sliding_window_view(ids, n, axis=1)  # (B, cur-n+1, n)
    tail = ids[:, cur + 1 - n:]  # the last n-1 tokens
    hit = (grams[:, :, :n - 1] == tail[:, None, :]).all(axis=2)
    tokens = grams[:, :, n - 1]
    banned = tokens[hit]
    if banned.size and (banned.min() < 0 or banned.max() >= scores.shape[1]):
        raise ShapeError(f"{op}: token ids {int(banned.min())}..{int(banned.max())} out of "
                         f"range for vocab {scores.shape[1]}")
    rows = np.broadcast_to(np.arange(batch)[:, None], hit.shape)[hit]
    out[rows, banned] = -np.inf
    return (out,)


def _ngram_repeat_block_infer(attrs, inputs):
    """scores_out has the scores' dtype and shape."""
    return [inputs[1]]


# --------------------------------------------------------------------------------------
# DynamicTimeWarping, UnfoldTensor
# --------------------------------------------------------------------------------------


def _dtw_kernel(inputs, attrs, ctx):
    """The cheapest monotone path from (0, 0) to (M-1, N-1) of a cost matrix as
    (2, len) int32 rows and columns. The DP runs one anti-diagonal at a time (each
    vectorised); ties pick the step from the left, as onnxruntime's kernel does
    (diagonal only when strictly cheapest of the three, up only when strictly
    cheapest). The trace back is a loop over the path's at most M + N steps."""
    op = "DynamicTimeWarping"
    x = np.asarray(inputs[0])
    if x.dtype != np.float32:
        raise ShapeError(f"{op}: input must be float32, got {x.dtype}")
    if not (x.ndim == 2 or (x.ndim == 3 and x.shape[0] == 1)):
        raise ShapeError(f"{op}: input must be (M, N) or (1, M, N), got shape "
                         f"{list(x.shape)}")
    x = x.reshape(x.shape[-2:])
    rows, cols = x.shape
    if rows == 0 or cols == 0:
        return (np.zeros((2, 0), np.int32),)
    cost = np.full((rows + 1, cols + 1), np.inf, np.float32)
    cost[0, 0] = 0
    trace = np.full((rows + 1, cols + 1), -1, np.int8)
    for d in range(2, rows + cols + 1):  # cells (i, j) with i + j = d, 1-based
        i = np.arange(max(1, d - cols), min(rows, d - 1) + 1)
        j = d - i
        c0, c1, c2 = cost[i - 1, j - 1], cost[i - 1, j], cost[i, j - 1]
        step = np.where((c0 < c1) & (c0 < c2), 0, np.where((c1 < c0) & (c1 < c2), 1, 2))
        best = np.choose(step, [c0, c1, c2])
        cost[i, j] = best + x[i - 1, j - 1]
        trace[i, j] = step
    path = []
    i, j = rows, cols
    moves = ((-1, -1), (-1, 0), (0, -1))
    while i > 0 and j > 0:
        path.append((i - 1, j - 1))
        di, dj = moves[trace[i, j]]
        i, j = i + di, j + dj
    return (np.ascontiguousarray(np.array(path[::-1], np.int32).T),)


def _dtw_infer(attrs, inputs):
    """(2, path length), int32."""
    return [TensorInfo(_INT32, (2, None))]


def _unfold_geometry(op, shape, attrs):
    """(dim, size, step, count) of UnfoldTensor on `shape`."""
    rank = len(shape)
    dim, size, step = int(attrs["dim"]), int(attrs["size"]), int(attrs["step"])
    if not -rank <= dim < rank:
        raise OpAttributeError(f"{op}: dim {dim} out of range for rank {rank}")
    dim %= rank
    if step <= 0:
        raise OpAttributeError(f"{op}: step must be positive, got {step}")
    sizedim = shape[dim]
    if size <= 0 or (sizedim is not None and size > sizedim):
        raise OpAttributeError(f"{op}: size {size} must be in 1..{sizedim} (dim {dim}'s "
                               "size)")
    count = None if sizedim is None else (sizedim - size) // step + 1
    return dim, size, step, count


def _unfold_kernel(inputs, attrs, ctx):
    """All slices of length `size` along `dim`, `step` apart: that dim becomes the
    slice count (sizedim - size) // step + 1 and a last dim of `size` is appended."""
    op = "UnfoldTensor"
    x = np.asarray(inputs[0])
    if x.ndim == 0:
        raise ShapeError(f"{op}: input must have at least one dim")
    if x.dtype.kind in "OUS":
        raise ShapeError(f"{op}: string tensors are not supported (nor by onnxruntime)")
    dim, size, step, _ = _unfold_geometry(op, x.shape, attrs)
    win = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    win = win[(slice(None),) * dim + (slice(None, None, step),)]
    return (np.ascontiguousarray(win),)


def _unfold_infer(attrs, inputs):
    """dim replaced by the slice count, a last dim of `size` appended."""
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    dim, size, _, count = _unfold_geometry("UnfoldTensor", x.shape, attrs)
    shape = list(x.shape)
    shape[dim] = count
    return [TensorInfo(x.dtype, tuple(shape) + (size,))]


# --------------------------------------------------------------------------------------
# GridSample (contrib), ConvTransposeWithDynamicPads, SampleOp
# --------------------------------------------------------------------------------------

_GRID_MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}


def _grid_sample_ms_kernel(inputs, attrs, ctx):
    """The standard GridSample's kernel on 4-D X (N, C, H, W) and grid (N, Ho, Wo, 2),
    with the contrib mode names bilinear / nearest / bicubic."""
    op = "GridSample"
    mode = _GRID_MODES.get(attrs["mode"])
    if mode is None:
        raise OpAttributeError(f"{op}: unknown mode {attrs['mode']!r} (bilinear, nearest, "
                               "bicubic)")
    x = _as_float(inputs[0], op, "X")
    grid = np.asarray(inputs[1])
    if x.ndim != 4 or grid.ndim != 4:
        raise ShapeError(f"{op}: X and Grid must be 4-D, got shapes {list(x.shape)} and "
                         f"{list(grid.shape)}")
    if grid.dtype != x.dtype:
        raise ShapeError(f"{op}: Grid is {grid.dtype} but X is {x.dtype}")
    w = _work(x.dtype)
    (y,) = _grid_sample_kernel([x.astype(w), grid.astype(w)],
                               {**attrs, "mode": mode}, ctx)
    return (y.astype(x.dtype),)


def _grid_sample_ms_infer(attrs, inputs):
    """(N, C, H_out, W_out) from X and Grid."""
    x, grid = inputs
    n = c = None
    if x.shape is not None and len(x.shape) == 4:
        n, c = x.shape[0], x.shape[1]
    if grid.shape is None or len(grid.shape) != 4:
        return [TensorInfo(x.dtype, (n, c, None, None))]
    return [TensorInfo(x.dtype, (n, c) + tuple(grid.shape[1:3]))]


def _dynamic_pads(op, pads):
    """ConvTransposeWithDynamicPads' Pads input as a list of ints (1-D int64)."""
    p = np.asarray(pads)
    if p.dtype != _INT64 or p.ndim != 1:
        raise ShapeError(f"{op}: Pads must be a 1-D int64 tensor, got {p.dtype} of shape "
                         f"{list(p.shape)}")
    return [int(v) for v in p]


def _conv_transpose_dyn_kernel(inputs, attrs, ctx):
    """ConvTranspose (ops/conv.py's conv_transpose_nd) with pads taken from the Pads
    input (begin..., end...) instead of the pads attribute. onnxruntime requires Pads."""
    op = "ConvTransposeWithDynamicPads"
    x, w, pads, b = _padded(inputs, 4)
    if pads is None:
        raise ShapeError(f"{op}: the Pads input is required (as onnxruntime requires it)")
    x = _as_float(x, op, "X")
    for v, what in ((w, "W"), (b, "B")):
        if v is not None and np.asarray(v).dtype != x.dtype:
            # (onnxruntime's schema: one type T for X, W and B)
            raise ShapeError(f"{op}: {what} is {np.asarray(v).dtype}, but X is {x.dtype}")
    conv_attrs = {k: v for k, v in attrs.items() if k != NUM_OUTPUTS}
    conv_attrs["pads"] = _dynamic_pads(op, pads)
    check_window_values(op, conv_attrs)
    mode = attrs["auto_pad"]
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        raise OpAttributeError(f"{op}: unknown auto_pad {mode!r} (NOTSET, SAME_UPPER, "
                               "SAME_LOWER, VALID)")
    w = np.asarray(w)
    try:
        # the output's size comes from values (strides, pads, output_shape): refused
        # past the result limit before conv_transpose_nd allocates it
        (info,) = _convtranspose_infer(conv_attrs, [TensorInfo(x.dtype, x.shape),
                                                    TensorInfo(w.dtype, w.shape)])
        if info.shape is not None and None not in info.shape:
            check_result_size(op, "the output", info.shape, 8)
        return (conv_transpose_nd(x, w, b, conv_attrs),)
    except (OpAttributeError, ShapeError) as e:
        raise type(e)(f"{op}: {e}") from None


def _conv_transpose_dyn_infer(attrs, inputs):
    """ConvTranspose's shape rule with the Pads input's value as pads (spatial dims unknown when
    that value is not known)."""
    x, w, pads, b = _padded(inputs, 4)
    conv_attrs = dict(attrs)
    if pads is not None and pads.value is not None:
        conv_attrs["pads"] = _dynamic_pads("ConvTransposeWithDynamicPads", pads.value)
    elif x.shape is not None:
        rank = len(x.shape)
        out = _convtranspose_infer(conv_attrs, [x, w])[0]
        return [TensorInfo(x.dtype, None if out.shape is None else
                           tuple(out.shape[:2]) + (None,) * (rank - 2))]
    return _convtranspose_infer(conv_attrs, [x, w])


def _sample_op_kernel(inputs, attrs, ctx):
    """onnxruntime's example contrib op: echoes its input."""
    x = np.asarray(inputs[0])
    if x.dtype.name not in ("uint32", "uint64", "int32", "int64", "float16", "float32",
                            "float64"):
        raise ShapeError(f"SampleOp: unsupported dtype {x.dtype}")
    return (x.copy(),)


# --------------------------------------------------------------------------------------
# definitions
# --------------------------------------------------------------------------------------

_MS = {"domain": _DOMAIN, "since_version": 1}

OPS = tuple(sorted((
    define("CDist", ["A", "B"], ["C"], _cdist_kernel, [("metric", "string", "sqeuclidean")],
           infer=_cdist_infer, dtypes=("float32", "float64"), **_MS),
    define("ComplexMul", ["A", "B"], ["C"], _complex_mul_kernel, infer=_complex_mul_infer,
           dtypes=_F16_32_64, **_MS),
    define("ComplexMulConj", ["A", "B"], ["C"], _complex_mul_conj_kernel,
           infer=_complex_mul_infer, dtypes=_F16_32_64, **_MS),
    define("ConvTransposeWithDynamicPads", ["X", "W", "Pads?", "B?"], ["Y"],
           _conv_transpose_dyn_kernel,
           [("auto_pad", "string", "NOTSET"), ("dilations", "ints", None),
            ("group", "int", 1), ("kernel_shape", "ints", None),
            ("output_padding", "ints", None), ("strides", "ints", None)],
           infer=_conv_transpose_dyn_infer, dtypes=_F16_32_64, **_MS),
    define("CropAndResize", ["X", "rois", "batch_indices", "crop_size"], ["Y"],
           _crop_and_resize_kernel,
           [("extrapolation_value", "float", 0.0), ("mode", "string", "bilinear")],
           infer=_crop_and_resize_infer, dtypes=_F16_32_64, **_MS),
    define("DynamicTimeWarping", ["input"], ["output"], _dtw_kernel, infer=_dtw_infer,
           dtypes=("float32",), **_MS),
    define("ExpandDims", ["X", "axis"], ["Y"], _expand_dims_kernel,
           infer=_expand_dims_infer, **_MS),
    define("GatherND", ["data", "indices"], ["output"], _gather_nd_kernel,
           infer=_gather_nd_infer, **_MS),
    define("GridSample", ["X", "Grid"], ["Y"], _grid_sample_ms_kernel,
           [("align_corners", "int", 0), ("mode", "string", "bilinear"),
            ("padding_mode", "string", "zeros")],
           infer=_grid_sample_ms_infer, dtypes=_F16_32_64, **_MS),
    define("Inverse", ["X"], ["Y"], _inverse_kernel, infer=infer_same, dtypes=_F16_32_64,
           **_MS),
    define("Irfft", ["X"], ["Y"], _irfft_kernel,
           [("normalized", "int", 0), ("onesided", "int", 1), ("signal_ndim", "int")],
           infer=_irfft_infer, dtypes=_F16_32_64, **_MS),
    define("IsAllFinite", ["input*"], ["output"], _is_all_finite_kernel,
           [("isinf_only", "int", 0), ("isnan_only", "int", 0)],
           infer=_is_all_finite_infer, **_MS),
    define("MurmurHash3", ["X"], ["Y"], _murmur_hash3_kernel,
           [("positive", "int", 1), ("seed", "int", 0)], infer=_murmur_hash3_infer, **_MS),
    define("NGramRepeatBlock", ["input_ids", "scores"], ["scores_out"],
           _ngram_repeat_block_kernel, [("ngram_size", "int")],
           infer=_ngram_repeat_block_infer, **_MS),
    define("Pad", ["data", "pads", "value?"], ["output"], _pad_kernel,
           [("mode", "string", "constant")], infer=_pad_infer, dtypes=_F16_32_64, **_MS),
    define("Range", ["start", "limit", "delta?"], ["Y"], _range_kernel,
           infer=_range_infer, **_MS),
    define("Rfft", ["X"], ["Y"], _rfft_kernel,
           [("normalized", "int", 0), ("onesided", "int", 1), ("signal_ndim", "int", 1)],
           infer=_rfft_infer, dtypes=_F16_32_64, **_MS),
    define("SampleOp", ["X"], ["Y"], _sample_op_kernel, infer=infer_same, **_MS),
    define("TorchEmbedding", ["weight", "indices", "padding_idx?", "scale_grad_by_freq?"],
           ["Y"], _torch_embedding_kernel, infer=_torch_embedding_infer, **_MS),
    define("Trilu", ["X", "k?"], ["Y"], _trilu_kernel, [("upper", "int", 1)],
           infer=infer_same, **_MS),
    define("UnfoldTensor", ["input"], ["output"], _unfold_kernel,
           [("dim", "int", -1), ("size", "int"), ("step", "int", 1)],
           infer=_unfold_infer, **_MS),
    define("Unique", ["x"], ["y", "idx", "counts"], _unique_kernel, infer=_unique_infer,
           **_MS),
    define("WordConvEmbedding", ["Sequence", "W", "B", "C"], ["Y"],
           _word_conv_embedding_kernel,
           [("char_embedding_size", "int", None), ("conv_window_size", "int", None),
            ("embedding_size", "int", None)],
           infer=_word_conv_embedding_infer, dtypes=("int32",), **_MS),
), key=lambda op: op.name))

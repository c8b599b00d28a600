"""Operators: assorted tensor ops (CumProd, EyeLike, ReverseSequence, CenterCropPad,
Col2Im, MaxUnpool, Det, TensorScatter, BitCast, Upsample).

All kernels are vectorised: index arrays and strided views, no per-element Python
loops (Col2Im loops over kernel positions only, through `ops/conv.py`'s col2im).
Where an output shape depends on an input's value (CenterCropPad's `shape`, Col2Im's
`image_shape`, MaxUnpool's `output_shape`, Upsample's `scales`) inference uses the value
when it is statically known and leaves the dims unknown otherwise.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .common import check_result_size, infer_same
from .conv import _col2im, _ints
from .elementwise import onnx_type_to_numpy
from .registry import TensorInfo, define


def _axis_value(a, rank, op):
    axis = int(np.asarray(a).reshape(-1)[0])
    if not -rank <= axis < max(rank, 1):
        raise OpAttributeError(f"{op}: axis {axis} out of range for rank {rank}")
    return axis % rank if rank else 0


def _value(info):
    return None if info is None or info.value is None else np.asarray(info.value)


# ---------------------------------------------------------------------------------------
# CumProd


def _cumprod_kernel(inputs, attrs, ctx):
    """Cumulative product along `axis` (input 1); `exclusive` shifts in a 1."""
    x = np.asarray(inputs[0])
    axis = _axis_value(inputs[1], x.ndim, "CumProd")
    v = np.flip(x, axis) if attrs["reverse"] else x
    if attrs["exclusive"] and v.shape[axis] > 0:
        ones = np.ones_like(np.take(v, [0], axis=axis))
        v = np.concatenate([ones, np.take(v, np.arange(v.shape[axis] - 1), axis=axis)],
                           axis=axis)
    y = np.cumprod(v, axis=axis, dtype=x.dtype)
    if attrs["reverse"]:
        y = np.flip(y, axis)
    return (np.ascontiguousarray(y),)


# ---------------------------------------------------------------------------------------
# EyeLike


def _eyelike_dtype(attrs, input_dtype):
    return onnx_type_to_numpy(attrs["dtype"]) if attrs["dtype"] is not None else input_dtype


def _eyelike_kernel(inputs, attrs, ctx):
    """Ones on the k-th diagonal of a 2-D tensor shaped like the input."""
    x = np.asarray(inputs[0])
    if x.ndim != 2:
        raise ShapeError(f"EyeLike: input must be 2-D, got shape {x.shape}")
    return (np.eye(x.shape[0], x.shape[1], k=attrs["k"],
                   dtype=_eyelike_dtype(attrs, x.dtype)),)


def _eyelike_infer(attrs, inputs):
    try:
        dtype = _eyelike_dtype(attrs, inputs[0].dtype)
    except OpAttributeError:
        dtype = None
    return [TensorInfo(dtype, inputs[0].shape)]


# ---------------------------------------------------------------------------------------
# ReverseSequence


def _reverse_sequence_kernel(inputs, attrs, ctx):
    """Reverse the first seq_lens[b] time steps of every batch entry b."""
    x = np.asarray(inputs[0])
    lens = np.asarray(inputs[1]).astype(np.int64)
    b_ax, t_ax = attrs["batch_axis"], attrs["time_axis"]
    if {b_ax, t_ax} != {0, 1}:
        raise OpAttributeError("ReverseSequence: batch_axis/time_axis must be 0 and 1")
    if x.ndim < 2 or lens.shape != (x.shape[b_ax],):
        raise ShapeError(f"ReverseSequence: sequence_lens {lens.shape} does not match "
                         f"batch dim of input {x.shape}")
    bad = np.flatnonzero((lens < 0) | (lens > x.shape[t_ax]))
    if bad.size:
        raise ShapeError(f"ReverseSequence: sequence_lens[{bad[0]}] = {lens[bad[0]]} is "
                         f"outside [0, {x.shape[t_ax]}], the time dim")
    t = np.arange(x.shape[t_ax])
    src = np.where(t[None, :] < lens[:, None], lens[:, None] - 1 - t[None, :], t[None, :])
    if t_ax == 0:
        src = src.T  # (T, B)
    idx = src.reshape(src.shape + (1,) * (x.ndim - 2))
    return (np.take_along_axis(x, np.broadcast_to(idx, x.shape), axis=t_ax),)


# ---------------------------------------------------------------------------------------
# CenterCropPad


def _crop_axes(attrs, rank, n, op="CenterCropPad"):
    axes = attrs["axes"]
    axes = list(range(rank)) if axes is None else [int(a) for a in axes]
    if len(axes) != n:
        raise ShapeError(f"{op}: shape has {n} entries for {len(axes)} axes")
    for a in axes:
        if not -rank <= a < rank:
            raise OpAttributeError(f"{op}: axis {a} out of range for rank {rank}")
    norm = [a % rank for a in axes]
    if len(set(norm)) != len(norm):
        # the spec leaves a repeated axis undefined; onnxruntime refuses it
        raise OpAttributeError(f"{op}: axes {axes} names an axis more than once "
                               f"(rank {rank})")
    return norm


def _crop_target(shape, op="CenterCropPad"):
    """The `shape` input's values as ints, each >= 0."""
    target = [int(v) for v in np.asarray(shape).reshape(-1)]
    if target and min(target) < 0:
        # a window dimension cannot be negative (onnxruntime makes such an axis empty,
        # the reference fails)
        raise ShapeError(f"{op}: shape {target} has a negative dimension")
    return target


def _center_crop_pad_kernel(inputs, attrs, ctx):
    """Crop (window start rounded down) or zero-pad (extra pixel at the end) centrally."""
    x = np.asarray(inputs[0])
    target = _crop_target(inputs[1])
    axes = _crop_axes(attrs, x.ndim, len(target))
    out_shape = list(x.shape)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for a, t in zip(axes, target):
        n = x.shape[a]
        out_shape[a] = t
        if n >= t:
            start = (n - t) // 2
            src[a] = slice(start, start + t)
        else:
            start = (t - n) // 2
            dst[a] = slice(start, start + n)
    check_result_size("CenterCropPad", "the result", out_shape, x.itemsize, beyond=x.nbytes,
                      cause=f"shape {target}")
    y = np.zeros(out_shape, dtype=x.dtype)
    y[tuple(dst)] = x[tuple(src)]
    return (y,)


def _center_crop_pad_infer(attrs, inputs):
    x, shape = inputs
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    out = list(x.shape)
    value = _value(shape)
    if value is not None:
        target = _crop_target(value)
        for a, t in zip(_crop_axes(attrs, len(out), len(target)), target):
            out[a] = t
    else:
        axes = attrs["axes"]
        for a in (range(len(out)) if axes is None else axes):
            out[int(a) % len(out)] = None
    return [TensorInfo(x.dtype, tuple(out))]


# ---------------------------------------------------------------------------------------
# Col2Im


def _col2im_params(attrs, image, block):
    """Col2Im's (strides, dilations, pads_begin, pads_end), checked against the spatial
    rank of image_shape and block_shape.

    Raises:
        ShapeError: image_shape and block_shape are empty or differ in length, a block
            dim is below 1 or an image dim below 0.
        OpAttributeError: strides, dilations (each >= 1) or pads (each >= 0, the spec's
            range; negative pads would crop the image to the wrong shape) have the wrong
            length or a value out of range.
    """
    nsp = len(image)
    if nsp == 0 or len(block) != nsp:
        raise ShapeError(f"Col2Im: image_shape {image} and block_shape {block} must be "
                         "non-empty and of the same length")
    if min(block) < 1 or min(image) < 0:
        raise ShapeError(f"Col2Im: block_shape {block} must be >= 1 and image_shape "
                         f"{image} >= 0 in every dim")
    out = []
    for name, size, fill, low in (("strides", nsp, 1, 1), ("dilations", nsp, 1, 1),
                                  ("pads", 2 * nsp, 0, 0)):
        given = attrs[name]
        values = _ints(given, size, fill)
        if len(values) != size or min(values) < low:
            raise OpAttributeError(f"Col2Im: {name} {list(given)} must hold {size} values, "
                                   f"each >= {low}, for {nsp} spatial dims")
        out.append(values)
    strides, dilations, pads = out
    return strides, dilations, pads[:nsp], pads[nsp:]


def _col2im_kernel(inputs, attrs, ctx):
    """Sum sliding-window columns (N, C*prod(block), L) back into images (N, C, *image)."""
    x = np.asarray(inputs[0])
    image = [int(v) for v in np.asarray(inputs[1]).reshape(-1)]
    block = [int(v) for v in np.asarray(inputs[2]).reshape(-1)]
    strides, dilations, pb, pe = _col2im_params(attrs, image, block)
    if x.ndim != 3:
        raise ShapeError(f"Col2Im: input must be 3-D (N, C * prod(block_shape), L), got "
                         f"shape {x.shape}")
    grid = [(n + b + e - ((k - 1) * d + 1)) // s + 1
            for n, b, e, k, d, s in zip(image, pb, pe, block, dilations, strides)]
    if min(grid) < 1:
        raise ShapeError(f"Col2Im: block_shape {block} (dilations {dilations}) does not fit "
                         f"image_shape {image} padded by {pb + pe}")
    kk = int(np.prod(block))
    n_batch, ck, length = x.shape
    if ck % kk or length != int(np.prod(grid)):
        raise ShapeError(f"Col2Im: input {x.shape} does not fit block {block} and "
                         f"{int(np.prod(grid))} windows")
    c = ck // kk
    cdt = np.float64 if x.dtype == np.float64 else np.float32
    cols = x.astype(cdt).reshape((n_batch, c) + tuple(block) + tuple(grid))
    buf = np.zeros((n_batch, c) + tuple(n + b + e for n, b, e in zip(image, pb, pe)), cdt)
    _col2im(cols, buf, block, strides, dilations, grid)
    crop = (slice(None), slice(None)) + tuple(slice(b, b + n) for b, n in zip(pb, image))
    return (np.ascontiguousarray(buf[crop]).astype(x.dtype),)


def _col2im_infer(attrs, inputs):
    x, image = inputs[0], inputs[1]
    value = _value(image)
    n = x.shape[0] if x.shape is not None else None
    if value is not None:
        sp = tuple(int(v) for v in value.reshape(-1))
    elif image.shape is not None and len(image.shape) == 1 and image.shape[0] is not None:
        sp = (None,) * image.shape[0]
    else:
        return [TensorInfo(x.dtype, None)]
    c = None
    block = _value(inputs[2])
    if block is not None and value is not None:
        _col2im_params(attrs, list(sp), [int(v) for v in block.reshape(-1)])
    if block is not None and x.shape is not None and x.shape[1] is not None \
            and np.prod(block) > 0:
        c = x.shape[1] // int(np.prod(block))
    return [TensorInfo(x.dtype, (n, c) + sp)]


# ---------------------------------------------------------------------------------------
# MaxUnpool


def _unpool_shape(in_sp, attrs):
    """MaxUnpool's default output spatial dims, (in - 1) * stride + kernel - pads, for
    input spatial dims `in_sp` (None where unknown), after onnxruntime's checks of the
    attributes.

    Raises:
        ShapeError: X has no spatial dim.
        OpAttributeError: kernel_shape, strides or pads do not hold one value per
            spatial dim (two for pads), a kernel or stride value is not positive, or
            a pad is not smaller than the kernel (as onnxruntime requires).
        ShapeError: an output dim comes out below 1.
    """
    kernel = [int(k) for k in attrs["kernel_shape"]]
    nsp = len(kernel)
    if len(in_sp) != nsp:
        raise (ShapeError if not in_sp else OpAttributeError)(
            f"MaxUnpool: kernel_shape {kernel} has {nsp} value(s) for an X of rank "
            f"{len(in_sp) + 2}; it needs one per spatial dim"
            + (" (X needs at least rank 3: N, C and the spatial dims)" if not in_sp else ""))
    strides = _ints(attrs["strides"], nsp, 1)
    pads = _ints(attrs["pads"], 2 * nsp, 0)
    for name, values, want in (("strides", strides, nsp), ("pads", pads, 2 * nsp)):
        if len(values) != want:
            raise OpAttributeError(f"MaxUnpool: {name} {values} must hold {want} values")
    for name, values in (("kernel_shape", kernel), ("strides", strides)):
        if min(values) < 1:
            raise OpAttributeError(f"MaxUnpool: {name} {values} must be positive")
    for i, p in enumerate(pads):
        if p >= kernel[i % nsp]:
            raise OpAttributeError(f"MaxUnpool: pads {pads}: entry {i} ({p}) must be "
                                   f"smaller than kernel_shape {kernel} along its dim, as "
                                   f"onnxruntime requires")
    out = [None if n is None else (n - 1) * s + k - pads[i] - pads[i + nsp]
           for i, (n, s, k) in enumerate(zip(in_sp, strides, kernel))]
    if any(o is not None and o < 1 for o in out):
        raise ShapeError(f"MaxUnpool: the output's spatial dims would be {out} for X's "
                         f"{list(in_sp)} (kernel_shape {kernel}, strides {strides}, pads "
                         f"{pads}); they must be positive")
    return out


def _max_unpool_kernel(inputs, attrs, ctx):
    """Scatter X to the flat positions I (MaxPool's Indices) of a zero tensor."""
    x = np.asarray(inputs[0])
    idx = np.asarray(inputs[1]).astype(np.int64)
    shape_in = inputs[2] if len(inputs) > 2 else None
    if idx.shape != x.shape:
        raise ShapeError(f"MaxUnpool: indices {idx.shape} and X {x.shape} differ")
    default = list(x.shape[:2]) + _unpool_shape(x.shape[2:], attrs)
    sizing = [f"{name} {[int(v) for v in attrs[name]]}"
              for name in ("kernel_shape", "strides", "pads") if attrs.get(name)]
    check_result_size("MaxUnpool", "the output", default, x.dtype.itemsize,
                      beyond=x.nbytes, cause=", ".join(sizing))
    flat = idx.reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= int(np.prod(default))):
        raise ShapeError(f"MaxUnpool: index out of range for unpooled shape {default}")
    shape = default
    if shape_in is not None:
        # Indices address the default unpooled shape; a larger output_shape keeps each
        # value at the same coordinates (the extra rows/columns stay zero).
        shape = [int(v) for v in np.asarray(shape_in).reshape(-1)]
        if len(shape) != len(default) or any(a < b for a, b in zip(shape, default)):
            raise ShapeError(f"MaxUnpool: output_shape {shape} smaller than {default}")
        check_result_size("MaxUnpool", "the output", shape, x.dtype.itemsize,
                          beyond=x.nbytes, cause="input 'output_shape'")
        flat = np.ravel_multi_index(np.unravel_index(flat, default), shape)
    y = np.zeros(int(np.prod(shape)), dtype=x.dtype)
    y[flat] = x.reshape(-1)
    return (y.reshape(shape),)


def _max_unpool_infer(attrs, inputs):
    x = inputs[0]
    out_shape = inputs[2] if len(inputs) > 2 else None
    if out_shape is not None:
        value = _value(out_shape)
        if value is not None:
            return [TensorInfo(x.dtype, tuple(int(v) for v in value.reshape(-1)))]
        if out_shape.shape is not None and out_shape.shape[0] is not None:
            return [TensorInfo(x.dtype, (None,) * out_shape.shape[0])]
        return [TensorInfo(x.dtype, None)]
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    return [TensorInfo(x.dtype, tuple(x.shape[:2]) + tuple(_unpool_shape(x.shape[2:], attrs)))]


# ---------------------------------------------------------------------------------------
# Det


def _det_kernel(inputs, attrs, ctx):
    """Determinant of the trailing square matrices."""
    x = np.asarray(inputs[0])
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"Det: input must be (..., M, M), got {x.shape}")
    cdt = np.float64 if x.dtype == np.float64 else np.float32
    return (np.asarray(np.linalg.det(x.astype(cdt))).astype(x.dtype),)


def _det_infer(attrs, inputs):
    x = inputs[0]
    return [TensorInfo(x.dtype, None if x.shape is None else tuple(x.shape[:-2]))]


# ---------------------------------------------------------------------------------------
# TensorScatter


def _tensor_scatter_kernel(inputs, attrs, ctx):
    """Write `update` into a copy of the cache along `axis` from write_indices[batch]."""
    past = np.asarray(inputs[0])
    update = np.asarray(inputs[1])
    write = inputs[2] if len(inputs) > 2 else None
    rank = past.ndim
    axis = attrs["axis"]
    if not -rank <= axis < rank or axis % rank == 0:
        raise OpAttributeError(f"TensorScatter: axis {axis} invalid for rank {rank}")
    axis %= rank
    if update.ndim != rank or any(p != u for i, (p, u) in
                                  enumerate(zip(past.shape, update.shape)) if i != axis):
        raise ShapeError(f"TensorScatter: update {update.shape} does not match cache "
                         f"{past.shape} outside axis {axis}")
    batch, cap, seq = past.shape[0], past.shape[axis], update.shape[axis]
    start = np.zeros(batch, np.int64) if write is None \
        else np.asarray(write).astype(np.int64).reshape(batch)
    pos = start[:, None] + np.arange(seq)[None, :]  # (B, S)
    if attrs["mode"] == "circular":
        pos %= cap
    elif attrs["mode"] != "linear":
        raise OpAttributeError(f"TensorScatter: unknown mode {attrs['mode']!r}")
    elif seq and (pos.min() < 0 or pos.max() >= cap):
        raise ShapeError("TensorScatter: write position beyond max_sequence_length")
    shape = [1] * rank
    shape[0], shape[axis] = batch, seq
    idx = np.broadcast_to(pos.reshape(shape), update.shape)
    out = past.copy()
    np.put_along_axis(out, idx, update, axis=axis)
    return (out,)


# ---------------------------------------------------------------------------------------
# BitCast


def _bitcast_kernel(inputs, attrs, ctx):
    """Reinterpret the (little-endian) bytes as the type `to` of the same width."""
    x = np.array(inputs[0], copy=True, order="C")
    dtype = onnx_type_to_numpy(attrs["to"])
    if dtype.kind in "OUS" or x.dtype.kind in "OUS":
        raise OpAttributeError("BitCast: string tensors cannot be bit-cast")
    if dtype.itemsize != x.dtype.itemsize:
        raise OpAttributeError(f"BitCast: {x.dtype} and {dtype} differ in width")
    if not np.little_endian:  # pragma: no cover - big-endian hosts
        return (x.byteswap().view(dtype).byteswap(),)
    return (x.view(dtype),)


def _bitcast_infer(attrs, inputs):
    try:
        dtype = onnx_type_to_numpy(attrs["to"])
    except OpAttributeError:
        dtype = None
    return [TensorInfo(dtype, inputs[0].shape)]


# ---------------------------------------------------------------------------------------
# Upsample (deprecated since opset 10; nearest and linear, asymmetric coordinates)


def _upsample_scales(scales, rank):
    """Upsample's scales as floats, one per dim, each finite and > 0 (a NaN or inf
    scale has no output size; Resize refuses those too)."""
    values = [float(s) for s in np.asarray(scales).reshape(-1)]
    if rank is not None and len(values) != rank:
        raise ShapeError(f"Upsample: {len(values)} scales for rank {rank}")
    if not all(np.isfinite(v) and v > 0 for v in values):
        raise ShapeError(f"Upsample: scales must be finite and greater than 0, got {values}")
    return values


def _check_upsample_size(shape, dtype, scales) -> None:
    """Refuse an Upsample whose output would take more than 2 GiB beyond its input
    (its float passes hold float64 values), before anything is made (a scale of 2**40).

    Raises:
        ResourceExhaustedError: naming the scales and the output shape.
    """
    out = [int(np.floor(n * s)) for n, s in zip(shape, scales)]
    check_result_size("Upsample", "the output", out, max(np.dtype(dtype).itemsize, 8),
                      beyond=int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize,
                      cause=f"scales {list(scales)}")


def _upsample_kernel(inputs, attrs, ctx):
    """Scale every dim by scales[i]: out = floor(in * scale), source = out / scale."""
    x = np.asarray(inputs[0])
    scales = _upsample_scales(inputs[1], x.ndim)
    _check_upsample_size(x.shape, x.dtype, scales)
    mode = attrs["mode"]
    y = x
    for axis, s in enumerate(scales):
        n = y.shape[axis]
        m = int(np.floor(n * s))
        coord = np.arange(m) / s
        if mode == "nearest":
            y = np.take(y, np.minimum(np.floor(coord).astype(np.int64), n - 1), axis=axis)
        elif mode in ("linear", "bilinear"):
            lo = np.minimum(np.floor(coord).astype(np.int64), n - 1)
            hi = np.minimum(lo + 1, n - 1)
            w = (coord - lo).reshape((-1,) + (1,) * (y.ndim - axis - 1))
            yf = y.astype(np.float64)
            y = (np.take(yf, lo, axis=axis) * (1 - w) + np.take(yf, hi, axis=axis) * w)
        else:
            raise OpAttributeError(f"Upsample: unknown mode {mode!r}")
    return (np.asarray(y).astype(x.dtype),)


def _upsample_infer(attrs, inputs):
    x, scales = inputs
    value = _value(scales)
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    if value is None:
        return [TensorInfo(x.dtype, (None,) * len(x.shape))]
    return [TensorInfo(x.dtype, tuple(None if n is None else int(np.floor(n * s))
                                      for n, s in zip(x.shape, _upsample_scales(
                                          value, len(x.shape)))))]


OPS = (
    define("BitCast", ["input"], ["output"], _bitcast_kernel, attrs=[("to", "int")],
           infer=_bitcast_infer, since_version=26),
    define("CenterCropPad", ["input_data", "shape"], ["output_data"], _center_crop_pad_kernel,
           attrs=[("axes", "ints", None)], infer=_center_crop_pad_infer, since_version=18),
    define("Col2Im", ["input", "image_shape", "block_shape"], ["output"], _col2im_kernel,
           attrs=[("dilations", "ints", None), ("pads", "ints", None),
                  ("strides", "ints", None)], infer=_col2im_infer, since_version=18),
    define("CumProd", ["x", "axis"], ["y"], _cumprod_kernel,
           attrs=[("exclusive", "int", 0), ("reverse", "int", 0)], infer=infer_same,
           since_version=26),
    define("Det", ["X"], ["Y"], _det_kernel, infer=_det_infer, since_version=22),
    define("EyeLike", ["input"], ["output"], _eyelike_kernel,
           attrs=[("dtype", "int", None), ("k", "int", 0)], infer=_eyelike_infer,
           since_version=22),
    define("MaxUnpool", ["X", "I", "output_shape?"], ["output"], _max_unpool_kernel,
           attrs=[("kernel_shape", "ints"), ("pads", "ints", None), ("strides", "ints", None)],
           infer=_max_unpool_infer, since_version=22),
    define("ReverseSequence", ["input", "sequence_lens"], ["Y"], _reverse_sequence_kernel,
           attrs=[("batch_axis", "int", 1), ("time_axis", "int", 0)], infer=infer_same,
           since_version=10),
    define("TensorScatter", ["past_cache", "update", "write_indices?"], ["present_cache"],
           _tensor_scatter_kernel, attrs=[("axis", "int", -2), ("mode", "string", "linear")],
           infer=infer_same, since_version=24),
    define("Upsample", ["X", "scales"], ["Y"], _upsample_kernel,
           attrs=[("mode", "string", "nearest")], infer=_upsample_infer, since_version=9),
)

KNOWN_FAILURES: dict[str, str] = {}

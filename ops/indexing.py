"""Operators: indexing family (slicing, gathers, scatters, one-hot, selection)."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from .registry import TensorInfo, define
from .shape import _check_1d, _check_1d_info, _folding, _ints, _norm_axis

KNOWN_FAILURES: dict[str, str] = {}

_INT64 = np.dtype(np.int64)


def _wrap(indices, dim):
    """ONNX indices may be negative (counting from the end); make them non-negative."""
    indices = np.asarray(indices).astype(np.int64, copy=False)
    return np.where(indices < 0, indices + dim, indices)


def _check_range(indices, dim, where):
    if indices.size and (indices.min() < 0 or indices.max() >= dim):
        raise ShapeError(f"{where}: index out of range for dimension of size {dim}")


# --------------------------------------------------------------------------- Slice

def _slice_spec(shape, starts, ends, axes, steps):
    """Per-axis Python slices for ONNX Slice over an input of `shape` (a dim may be
    None: its slice is then left for Python to clamp, and only its length is unknown).

    ONNX clamps a negative step's start to [0, dim - 1], where Python's slice treats a
    start below -dim as "before the first element" (an empty result instead of one
    that starts at element 0); ends clamp to [-1, dim - 1], -1 meaning past the first.
    """
    rank = len(shape)
    axes = list(range(len(starts))) if axes is None else [_norm_axis(a, rank) for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ShapeError("Slice: starts, ends, axes and steps differ in length")
    spec = [slice(None)] * rank
    for a, s, e, st in zip(axes, starts, ends, steps):
        if st == 0:
            raise ShapeError("Slice: step 0")
        dim = shape[a]
        if st < 0 and dim is not None:
            s = min(max(s + dim if s < 0 else s, 0), dim - 1)
            e = min(max(e + dim if e < 0 else e, -1), dim - 1)
            spec[a] = slice(s, None if e < 0 else e, st)
        else:  # positive steps: Python's clamping is ONNX's
            spec[a] = slice(s, e, st)
    return spec


_SLICE_OPERANDS = ("starts", "ends", "axes", "steps")


def _opt_ints(inputs, i):
    return _ints(inputs[i]) if len(inputs) > i and inputs[i] is not None else None


def _slice(inputs, attrs, ctx):
    """Strided slice along chosen axes (negative indices and steps, clamped bounds)."""
    x = inputs[0]
    for name, v in zip(_SLICE_OPERANDS, inputs[1:]):
        if v is not None and np.ndim(v) != 1:
            _check_1d(v, "Slice", name)
    spec = _slice_spec(x.shape, _ints(inputs[1]), _ints(inputs[2]), _opt_ints(inputs, 3),
                       _opt_ints(inputs, 4))
    return (x[tuple(spec)].copy(),)


@_folding(_slice)
def _infer_slice(attrs, inputs):
    x = inputs[0]
    for name, info in zip(_SLICE_OPERANDS, inputs[1:]):
        _check_1d_info(info, "Slice", name)
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    rank = len(x.shape)
    parts = [inputs[i] if len(inputs) > i else None for i in range(1, 5)]
    if any(p is not None and p.value is None for p in parts):
        axes = parts[2]
        if axes is not None and axes.value is not None:
            hit = {_norm_axis(a, rank) for a in _ints(axes.value)}
            return [TensorInfo(x.dtype, tuple(None if i in hit else d
                                              for i, d in enumerate(x.shape)))]
        return [TensorInfo(x.dtype, (None,) * rank)]
    vals = [None if p is None else _ints(p.value) for p in parts]
    spec = _slice_spec(x.shape, *vals)
    out = []
    for d, s in zip(x.shape, spec):
        if s == slice(None):
            out.append(d)
        else:
            out.append(None if d is None else len(range(*s.indices(d))))
    return [TensorInfo(x.dtype, tuple(out))]


# --------------------------------------------------------------------------- Gather

def _gather(inputs, attrs, ctx):
    """Pick slices along `axis` at the given (possibly negative) indices."""
    x, idx = inputs
    axis = _norm_axis(attrs["axis"], x.ndim)
    idx = _wrap(idx, x.shape[axis])
    _check_range(idx, x.shape[axis], "Gather")
    return (np.take(x, idx, axis=axis),)


@_folding(_gather)
def _infer_gather(attrs, inputs):
    x, idx = inputs
    if x.shape is None or idx.shape is None:
        return [TensorInfo(x.dtype, None)]
    axis = _norm_axis(attrs["axis"], len(x.shape))
    return [TensorInfo(x.dtype, x.shape[:axis] + tuple(idx.shape) + x.shape[axis + 1:])]


def _gather_elements(inputs, attrs, ctx):
    """out[i][j][k] = x[i][idx[i][j][k]][k] (for axis 1): index along one axis."""
    x, idx = inputs
    axis = _norm_axis(attrs["axis"], x.ndim)
    if idx.ndim != x.ndim or any(i > d for a, (i, d) in enumerate(zip(idx.shape, x.shape))
                                 if a != axis):
        raise ShapeError(f"GatherElements: indices {idx.shape} must have data's rank and "
                         f"fit within data {x.shape} off axis {axis}")
    idx = _wrap(idx, x.shape[axis])
    _check_range(idx, x.shape[axis], "GatherElements")
    # the output has the indices' shape, which may be smaller than data's off the
    # axis (take_along_axis would broadcast it up instead)
    where = list(np.indices(idx.shape, sparse=True))
    where[axis] = idx
    return (x[tuple(where)],)


@_folding(_gather_elements)
def _infer_gather_elements(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[1].shape)]


def _gather_nd(inputs, attrs, ctx):
    """Gather slices of x addressed by the last dim of `indices`, after batch_dims."""
    x, idx = inputs
    b = attrs["batch_dims"]
    if b and (b < 0 or b >= min(x.ndim, idx.ndim) or idx.shape[:b] != x.shape[:b]):
        raise ShapeError(f"GatherND: batch_dims={b} does not fit data {x.shape} and indices "
                         f"{idx.shape} (their first batch_dims dims must be equal, and "
                         "both must have more)")
    k = idx.shape[-1] if idx.ndim else 0
    if idx.ndim < 1 or not 1 <= k <= x.ndim - b:
        raise ShapeError(f"GatherND: indices {idx.shape} address {k} dims; data "
                         f"{x.shape} has {x.ndim - b} after batch_dims={b}")
    batch = int(np.prod(x.shape[:b], dtype=np.int64))
    out_shape = idx.shape[:-1] + x.shape[b + k:]
    if batch == 0 or idx.size == 0:  # nothing to gather (-1 in a reshape cannot be 0)
        return (np.empty(out_shape, dtype=x.dtype),)
    xr = x.reshape((batch,) + x.shape[b:])
    ir = np.asarray(idx).reshape(batch, -1, k).astype(np.int64)
    coords = []
    for j in range(k):  # loop over the index tuple's length, not over elements
        dim = x.shape[b + j]
        c = _wrap(ir[..., j], dim)
        _check_range(c, dim, "GatherND")
        coords.append(c)
    out = xr[(np.arange(batch)[:, None],) + tuple(coords)]
    return (out.reshape(out_shape),)


@_folding(_gather_nd)
def _infer_gather_nd(attrs, inputs):
    x, idx = inputs
    if x.shape is None or idx.shape is None or idx.shape[-1] is None:
        return [TensorInfo(x.dtype, None)]
    k, b = idx.shape[-1], attrs["batch_dims"]
    return [TensorInfo(x.dtype, tuple(idx.shape[:-1]) + tuple(x.shape[b + k:]))]


# --------------------------------------------------------------------------- Scatter

_REDUCERS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _scatter_into(out, where, updates, reduction, op):
    if reduction == "none":
        out[where] = updates
    elif reduction in _REDUCERS:
        # ufunc.at applies duplicates one after another, as ONNX's reductions require.
        _REDUCERS[reduction].at(out, where, updates)
    else:
        raise ShapeError(f"{op}: unknown reduction {reduction!r}")
    return out


def _scatter_along(x, idx, upd, axis, reduction, op):
    """Write (or reduce) updates into a copy of data at indices along `axis`."""
    axis = _norm_axis(axis, x.ndim)
    if idx.ndim != x.ndim or np.shape(upd) != idx.shape or any(
            i > d for a, (i, d) in enumerate(zip(idx.shape, x.shape)) if a != axis):
        raise ShapeError(f"{op}: indices {idx.shape} and updates {np.shape(upd)} must have "
                         f"one shape, of data's rank, within data {x.shape} off axis {axis}")
    idx = _wrap(idx, x.shape[axis])
    _check_range(idx, x.shape[axis], op)
    where = list(np.indices(idx.shape, sparse=True))
    where[axis] = idx
    return _scatter_into(x.copy(), tuple(where), upd, reduction, op)


def _scatter_elements(inputs, attrs, ctx):
    """ScatterElements: see `_scatter_along`."""
    return (_scatter_along(*inputs, attrs["axis"], attrs["reduction"], "ScatterElements"),)


def _scatter(inputs, attrs, ctx):
    """Deprecated Scatter (opsets 9-10): ScatterElements without a reduction."""
    return (_scatter_along(*inputs, attrs["axis"], "none", "Scatter"),)


def _scatter_nd_updates_shape(data_shape, idx_shape):
    """The shape ScatterND's updates must have: indices.shape[:-1] + data.shape[k:],
    k = indices.shape[-1] (dims may be None, unknown, in inference).

    Raises:
        ShapeError: indices is a scalar, or its tuples address more dims than data has.
    """
    if len(idx_shape) < 1:
        raise ShapeError("ScatterND: indices must have rank >= 1, got a scalar")
    k = idx_shape[-1]
    if k is not None and k > len(data_shape):
        raise ShapeError(f"ScatterND: indices {list(idx_shape)} address {k} dims; data "
                         f"{list(data_shape)} has {len(data_shape)}")
    if k is None:
        return None
    return tuple(idx_shape[:-1]) + tuple(data_shape[k:])


def _check_scatter_nd_updates(data_shape, idx_shape, upd_shape):
    """Refuse ScatterND updates whose shape is not indices.shape[:-1] + data.shape[k:]
    (numpy would broadcast a smaller one over the slices and write wrong values; the
    spec and onnxruntime refuse it). Unknown (None) dims are not compared.

    Raises:
        ShapeError: names the expected and the actual shape (see also
            `_scatter_nd_updates_shape`).
    """
    want = _scatter_nd_updates_shape(data_shape, idx_shape)
    if want is None or upd_shape is None:
        return
    if len(upd_shape) != len(want) or any(
            a is not None and b is not None and a != b for a, b in zip(upd_shape, want)):
        raise ShapeError(f"ScatterND: updates must have shape {list(want)} "
                         f"(indices.shape[:-1] + data.shape[{idx_shape[-1]}:]), got "
                         f"{list(upd_shape)}")


def _scatter_nd(inputs, attrs, ctx):
    """Write (or reduce) update slices into a copy of data at N-d index tuples."""
    x, idx, upd = inputs
    _check_scatter_nd_updates(x.shape, np.shape(idx), np.shape(upd))
    k = idx.shape[-1]
    where = []
    for j in range(k):  # loop over the index tuple's length, not over elements
        c = _wrap(idx[..., j], x.shape[j])
        _check_range(c, x.shape[j], "ScatterND")
        where.append(c)
    return (_scatter_into(x.copy(), tuple(where), upd, attrs["reduction"], "ScatterND"),)


def _infer_scatter(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


def _infer_scatter_nd(attrs, inputs):
    """Data's shape; refuses updates of another shape where the shapes are known."""
    x, idx, upd = inputs
    if x.shape is not None and idx.shape is not None:
        _check_scatter_nd_updates(x.shape, idx.shape, upd.shape)
    return _infer_scatter(attrs, inputs)


# --------------------------------------------------------------------------- OneHot

def _one_value(value, op, name):
    """The one element of an operand the spec makes a scalar, also given (as
    onnxruntime accepts it) as a one-element 1-D tensor.

    Raises:
        ShapeError: it has another size or a rank above 1.
    """
    a = np.asarray(value)
    if a.size != 1 or a.ndim > 1:
        raise ShapeError(f"{op}: {name} must be a scalar or a 1-D tensor of one element, "
                         f"got shape {list(a.shape)}")
    return a.reshape(-1)[0]


def _one_value_info(info, op, name):
    """`_one_value` for inference: checks a statically known shape only."""
    shape = None if info is None else info.shape
    if shape is None:
        return
    if len(shape) > 1 or (len(shape) == 1 and shape[0] not in (None, 1)):
        raise ShapeError(f"{op}: {name} must be a scalar or a 1-D tensor of one element, "
                         f"got shape {list(shape)}")


def _check_one_hot_values(shape):
    """OneHot's `values` is [off_value, on_value]: a 1-D tensor of exactly two elements
    (the spec's words; onnxruntime refuses other shapes too). `shape` may hold None for
    an unknown dim, or be None (nothing known).

    Raises:
        ShapeError: it has another rank or length (numpy would read values[0] and
            values[1] of any longer or reshaped tensor and ignore the rest).
    """
    if shape is None:
        return
    if len(shape) != 1 or shape[0] not in (None, 2):
        raise ShapeError(f"OneHot: values must be a 1-D tensor of two elements "
                         f"[off_value, on_value], got shape {list(shape)}")


def _depth(value) -> int:
    """OneHot's depth as an int (a float one is truncated, as the spec casts it).

    Raises:
        ShapeError: it is NaN, infinite or below 1.
    """
    v = np.asarray(value)
    if v.dtype.kind == "f" and not np.isfinite(v):
        raise ShapeError(f"OneHot: depth must be a finite number, got {v}")
    depth = int(v)
    if depth < 1:
        raise ShapeError(f"OneHot: depth {depth}; it must be at least 1")
    return depth


def _one_hot(inputs, attrs, ctx):
    """values[1] where index == position along the new `axis`, values[0] elsewhere."""
    idx, depth, values = inputs
    _check_one_hot_values(np.shape(values))
    depth = _depth(_one_value(depth, "OneHot", "depth"))
    idx = np.asarray(idx)
    axis = _norm_axis(attrs["axis"], idx.ndim + 1)
    if idx.size == 0:  # an empty result: no need for a depth-long comparison row
        shape = list(idx.shape)
        shape.insert(axis, depth)
        return (np.empty(shape, dtype=np.asarray(values).dtype),)
    # Indices are wrapped from the end; anything still outside [0, depth) stays all-off.
    pos = np.asarray(idx).astype(np.int64)
    pos = np.where(pos < 0, pos + depth, pos)
    hot = np.moveaxis(pos[..., None] == np.arange(depth), -1, axis)
    values = np.asarray(values)
    return (np.where(hot, values[1], values[0]).astype(values.dtype),)


@_folding(_one_hot)
def _infer_one_hot(attrs, inputs):
    idx, depth, values = inputs
    _one_value_info(depth, "OneHot", "depth")
    _check_one_hot_values(values.shape)
    if idx.shape is None:
        return [TensorInfo(values.dtype, None)]
    d = None if depth.value is None else _depth(_one_value(depth.value, "OneHot", "depth"))
    axis = _norm_axis(attrs["axis"], len(idx.shape) + 1)
    shape = list(idx.shape)
    shape.insert(axis, d)
    return [TensorInfo(values.dtype, tuple(shape))]


# --------------------------------------------------------------------------- NonZero

def _non_zero(inputs, attrs, ctx):
    """Indices of non-zero elements, one row per input dim, as int64."""
    x = np.asarray(inputs[0])
    if x.ndim == 0:
        return (np.zeros((0, int(bool(x))), dtype=np.int64),)
    return (np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1),)


@_folding(_non_zero)
def _infer_non_zero(attrs, inputs):
    x = inputs[0]
    return [TensorInfo(_INT64, None if x.shape is None else (len(x.shape), None))]


# --------------------------------------------------------------------------- Compress

def _compress(inputs, attrs, ctx):
    """Keep slices along `axis` (of the flattened input if none) where condition holds."""
    x, cond = inputs
    cond = np.asarray(cond).astype(bool).reshape(-1)
    if attrs["axis"] is None:
        flat = x.reshape(-1)
        return (flat[:cond.size][cond[:flat.size]],)
    axis = _norm_axis(attrs["axis"], x.ndim)
    keep = np.nonzero(cond[:x.shape[axis]])[0]
    return (np.take(x, keep, axis=axis),)


@_folding(_compress)
def _infer_compress(attrs, inputs):
    x = inputs[0]
    if attrs["axis"] is None:
        return [TensorInfo(x.dtype, (None,))]
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    axis = _norm_axis(attrs["axis"], len(x.shape))
    return [TensorInfo(x.dtype, x.shape[:axis] + (None,) + x.shape[axis + 1:])]


# --------------------------------------------------------------------------- Unique

def _unique(inputs, attrs, ctx):
    """Unique values (or slices along `axis`), first indices, inverse map and counts."""
    x = np.asarray(inputs[0])
    axis = attrs["axis"]
    if axis is not None:
        axis = _norm_axis(axis, x.ndim)
        data = x
    else:
        data = x.reshape(-1)
    y, first, inverse, counts = np.unique(data, return_index=True, return_inverse=True,
                                          return_counts=True,
                                          axis=None if axis is None else axis)
    inverse = inverse.reshape(-1)
    if not attrs["sorted"]:
        # Reorder the sorted uniques by first occurrence and remap the inverse.
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        y = np.take(y, order, axis=0 if axis is None else axis)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    return (y, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64))


@_folding(_unique)
def _infer_unique(attrs, inputs):
    x = inputs[0]
    n = (None,)
    if attrs["axis"] is None or x.shape is None:
        y = (None,) if attrs["axis"] is None else None
        inv = (None,)
    else:
        axis = _norm_axis(attrs["axis"], len(x.shape))
        y = x.shape[:axis] + (None,) + x.shape[axis + 1:]
        inv = (x.shape[axis],)
    return [TensorInfo(x.dtype, y), TensorInfo(_INT64, n), TensorInfo(_INT64, inv),
            TensorInfo(_INT64, n)]


# --------------------------------------------------------------------------- definitions

_REDUCTION = ("reduction", "string", "none")

OPS = tuple(sorted((
    define("Compress", ["input", "condition"], ["output"], _compress,
           [("axis", "int", None)], infer=_infer_compress, since_version=11),
    define("Gather", ["data", "indices"], ["output"], _gather, [("axis", "int", 0)],
           infer=_infer_gather, since_version=13),
    define("GatherElements", ["data", "indices"], ["output"], _gather_elements,
           [("axis", "int", 0)], infer=_infer_gather_elements, since_version=13),
    define("GatherND", ["data", "indices"], ["output"], _gather_nd,
           [("batch_dims", "int", 0)], infer=_infer_gather_nd, since_version=13),
    define("NonZero", ["X"], ["Y"], _non_zero, infer=_infer_non_zero, since_version=13),
    define("OneHot", ["indices", "depth", "values"], ["output"], _one_hot,
           [("axis", "int", -1)], infer=_infer_one_hot, since_version=11),
    define("Scatter", ["data", "indices", "updates"], ["output"], _scatter,
           [("axis", "int", 0)], infer=_infer_scatter, since_version=9),
    define("ScatterElements", ["data", "indices", "updates"], ["output"], _scatter_elements,
           [("axis", "int", 0), _REDUCTION], infer=_infer_scatter, since_version=13),
    define("ScatterND", ["data", "indices", "updates"], ["output"], _scatter_nd,
           [_REDUCTION], infer=_infer_scatter_nd, since_version=13),
    define("Slice", ["data", "starts", "ends", "axes?", "steps?"], ["output"], _slice,
           infer=_infer_slice, since_version=13),
    define("Unique", ["X"], ["Y", "indices?", "inverse_indices?", "counts?"], _unique,
           [("axis", "int", None), ("sorted", "int", 1)], infer=_infer_unique,
           since_version=11),
), key=lambda op: op.name))

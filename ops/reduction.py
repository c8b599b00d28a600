"""Operators: reduction family (Reduce*, ArgMax/ArgMin, TopK, CumSum)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError
from .indexing import _one_value, _one_value_info
from .registry import TensorInfo, define
from .shape import _folding, _ints, _norm_axis

KNOWN_FAILURES: dict[str, str] = {}

_INT64 = np.dtype(np.int64)


# --------------------------------------------------------------------------- Reduce*

def _reduce_axes(inputs, attrs, rank):
    """Axes to reduce as a sorted tuple, or None for "leave the input as is".

    Raises:
        ShapeError: the axes input has more than one dim (the spec's is 1-D; its
            values would be read flattened).
    """
    axes = None
    if len(inputs) > 1 and inputs[1] is not None:
        if np.ndim(inputs[1]) > 1:
            raise ShapeError(f"axes must be a 1-D tensor, got shape "
                             f"{list(np.shape(inputs[1]))}")
        axes = _ints(inputs[1])
    elif attrs.get("axes") is not None:
        axes = list(attrs["axes"])
    if not axes:
        return None if attrs["noop_with_empty_axes"] else tuple(range(rank))
    return tuple(sorted({_norm_axis(a, rank) for a in axes}))


def _is_float(dtype) -> bool:
    """Floating point, including ml_dtypes' bfloat16/float8 (numpy kind 'V')."""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or dtype.name == "bfloat16" or dtype.name.startswith("float8")


def _acc_dtype(dtype):
    """Accumulate half-precision floats in float32; everything else in its own type."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if _is_float(dtype) and dtype.itemsize < 4 else dtype


def _lowest(dtype):
    if _is_float(dtype):
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _highest(dtype):
    if _is_float(dtype):
        return np.inf
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).max


def _sum(x, axes, keep):
    return np.sum(x, axis=axes, keepdims=keep, dtype=_acc_dtype(x.dtype))


def _log_sum_exp(x, axes, keep):
    xf = x.astype(np.float64)
    m = np.max(xf, axis=axes, keepdims=True, initial=-np.inf)
    # Shift by the max for stability; an all -inf (or empty) slice must stay -inf.
    shift = np.where(np.isfinite(m), m, 0.0)
    out = np.log(np.sum(np.exp(xf - shift), axis=axes, keepdims=True)) + shift
    return out if keep else np.squeeze(out, axis=axes)


def _mean(x, axes, keep):
    if x.size == 0:
        # ONNX leaves the mean of nothing undefined; onnxruntime gives 0 (so do PyTorch's
        # EmbeddingBag(mode="mean") for an empty bag, which exports as a ReduceMean
        # over it, and integers, which have no NaN)
        return np.sum(x, axis=axes, keepdims=keep,
                      dtype=None if x.dtype.kind in "iub" else _acc_dtype(x.dtype))
    if x.dtype.kind not in "iub":
        return np.mean(x, axis=axes, keepdims=keep, dtype=_acc_dtype(x.dtype))
    return np.mean(x, axis=axes, keepdims=keep, dtype=np.float64)


def _wide(x):
    """x in the type its squares are summed in: float64 for integers (no overflow of
    the squares), float32 for half-precision floats."""
    return x.astype(np.float64 if x.dtype.kind in "iub" else _acc_dtype(x.dtype))


_REDUCERS = {
    "ReduceSum": _sum,
    "ReduceMean": _mean,
    "ReduceMax": lambda x, a, k: np.max(x, axis=a, keepdims=k, initial=_lowest(x.dtype)),
    "ReduceMin": lambda x, a, k: np.min(x, axis=a, keepdims=k, initial=_highest(x.dtype)),
    "ReduceProd": lambda x, a, k: np.prod(x, axis=a, keepdims=k, dtype=_acc_dtype(x.dtype)),
    "ReduceL1": lambda x, a, k: _sum(np.abs(x), a, k),
    "ReduceL2": lambda x, a, k: np.sqrt(_sum(np.square(_wide(x)), a, k)),
    "ReduceSumSquare": lambda x, a, k: _sum(np.square(x), a, k),
    "ReduceLogSum": lambda x, a, k: np.log(_sum(x, a, k)),
    "ReduceLogSumExp": _log_sum_exp,
}


# Reductions with elementwise steps around the sum, which noop_with_empty_axes keeps.
_COMPOSITE = frozenset({"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                        "ReduceLogSumExp"})


def _reduce_kernel(name):
    reducer = _REDUCERS[name]
    composite = name in _COMPOSITE

    def kernel(inputs, attrs, ctx):
        x = np.asarray(inputs[0])
        axes = _reduce_axes(inputs, attrs, x.ndim)
        if axes is None:
            if not composite:
                return (x.copy(),)
            axes = ()  # no reduction, but the elementwise steps (abs, square, log) apply
        with np.errstate(divide="ignore", invalid="ignore"):
            out = reducer(x, axes, bool(attrs["keepdims"]))
        return (np.asarray(out).astype(x.dtype, copy=False),)

    kernel.__doc__ = f"{name}: reduce over the given axes (all by default)."
    return kernel


def _reduce_infer(kernel):
    @_folding(kernel)
    def infer(attrs, inputs):
        """Reduced shape when the axes are known; rank-only (or unknown) otherwise."""
        x = inputs[0]
        axes_info = inputs[1] if len(inputs) > 1 else None
        keep = bool(attrs["keepdims"])
        if x.shape is None:
            # every axis reduced away: a scalar, whatever the rank
            every = axes_info is None and attrs.get("axes") is None \
                and not attrs.get("noop_with_empty_axes")
            return [TensorInfo(x.dtype, () if every and not keep else None)]
        rank = len(x.shape)
        if axes_info is not None and axes_info.value is None:
            n = axes_info.shape[0] if axes_info.shape and len(axes_info.shape) == 1 else None
            if n != 0:
                if keep:
                    return [TensorInfo(x.dtype, (None,) * rank)]
                return [TensorInfo(x.dtype, None if n is None else (None,) * (rank - n))]
            axes_info = None
        probe = [None] if axes_info is None else [None, np.asarray(axes_info.value)]
        axes = _reduce_axes(probe, attrs, rank)
        if axes is None:
            return [TensorInfo(x.dtype, x.shape)]
        return [TensorInfo(x.dtype, _reduced_shape(x.shape, axes, keep))]
    return infer


def _reduced_shape(shape, axes, keep):
    if keep:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


# --------------------------------------------------------------------------- ArgMax/ArgMin

def _arg_kernel(fn):
    def kernel(inputs, attrs, ctx):
        x = np.asarray(inputs[0])
        axis = _norm_axis(attrs["axis"], x.ndim)
        if x.shape[axis] == 0:
            shape = _reduced_shape(x.shape, (axis,), attrs["keepdims"])
            if math.prod(shape):  # an index into nothing: numpy's ValueError, named
                raise ShapeError(f"{fn.__name__[3:].capitalize()}: axis {axis} of shape "
                                 f"{list(x.shape)} is empty: no index to return")
            return (np.zeros(shape, np.int64),)  # no outputs: onnxruntime's empty result
        if attrs["select_last_index"]:
            # Search the reversed axis so ties resolve to the last occurrence.
            idx = x.shape[axis] - 1 - fn(np.flip(x, axis=axis), axis=axis)
        else:
            idx = fn(x, axis=axis)
        idx = np.asarray(idx, dtype=np.int64)
        return (np.expand_dims(idx, axis) if attrs["keepdims"] else idx,)

    kernel.__doc__ = f"Index (int64) of the {fn.__name__[3:]} along `axis`."
    return kernel


def _infer_arg(attrs, inputs):
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(_INT64, None)]
    axis = _norm_axis(attrs["axis"], len(x.shape))
    return [TensorInfo(_INT64, _reduced_shape(x.shape, (axis,), attrs["keepdims"]))]


# --------------------------------------------------------------------------- TopK

def _top_k(inputs, attrs, ctx):
    """k largest (or smallest) along `axis`, sorted, equal values ordered by index."""
    x, k = np.asarray(inputs[0]), inputs[1]
    if np.shape(k) != (1,):
        _k_shape(np.shape(k))
    k = int(np.asarray(k)[0])
    axis = _norm_axis(attrs["axis"], x.ndim)
    n = x.shape[axis]
    if not 0 <= k <= n:
        raise ShapeError(f"TopK: k={k} outside [0, {n}]")
    if 0 < 8 * k <= n and x.size and not (x.dtype.kind in "fc" and np.isnan(x).any()):
        return _top_few(x, k, axis, bool(attrs["largest"]))
    if attrs["largest"]:
        # Stable ascending sort of the reversed axis, read backwards, is descending with
        # ties in ascending index order (works for unsigned ints, unlike negation).
        order = n - 1 - np.flip(np.argsort(np.flip(x, axis=axis), axis=axis, kind="stable"),
                                axis=axis)
    else:
        order = np.argsort(x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis).astype(np.int64)
    return (np.take_along_axis(x, idx, axis=axis), idx)


def _top_few(x, k: int, axis: int, largest: bool):
    """TopK for k much smaller than the axis (no NaN): select, then sort only k.

    argpartition picks k elements of each row in linear time: every element beyond the
    k-th value t and some equal to t. Where a row has more elements equal to t than
    it needs, the lowest-index ones are taken instead (ONNX orders ties by index).
    Then only those k are sorted, as `_top_k` sorts the whole axis.
    """
    xm = np.moveaxis(x, axis, -1)
    n = xm.shape[-1]
    rows = xm.reshape(-1, n)
    if largest:
        part = np.argpartition(rows, n - k, axis=1)[:, n - k:]
        t = np.take_along_axis(rows, part, axis=1).min(axis=1, keepdims=True)
        beyond = rows > t
    else:
        part = np.argpartition(rows, k - 1, axis=1)[:, :k]
        t = np.take_along_axis(rows, part, axis=1).max(axis=1, keepdims=True)
        beyond = rows < t
    need = k - np.count_nonzero(beyond, axis=1, keepdims=True)
    tied = rows == t
    idx = np.sort(part, axis=1)  # right unless a row has more elements equal to t
    extra = np.flatnonzero(np.count_nonzero(tied, axis=1) > need[:, 0])
    if extra.size:  # then only the lowest-index ones of them
        tied = tied[extra]
        chosen = beyond[extra] | (tied & (np.cumsum(tied, axis=1) <= need[extra]))
        idx[extra] = np.nonzero(chosen)[1].reshape(extra.size, k)
    vals = np.take_along_axis(rows, idx, axis=1)
    if largest:  # descending, ties in ascending index order (see _top_k)
        order = k - 1 - np.flip(np.argsort(np.flip(vals, axis=1), axis=1, kind="stable"),
                                axis=1)
    else:
        order = np.argsort(vals, axis=1, kind="stable")
    idx = np.take_along_axis(idx, order, axis=1).astype(np.int64)
    vals = np.take_along_axis(vals, order, axis=1)
    shape = xm.shape[:-1] + (k,)
    return (np.moveaxis(vals.reshape(shape), -1, axis),
            np.moveaxis(idx.reshape(shape), -1, axis))


def _k_shape(shape):
    """TopK's K is a 1-D tensor of one element (the spec; onnxruntime refuses a scalar).

    Raises:
        ShapeError: the (statically known) shape is another.
    """
    if shape is not None and (len(shape) != 1 or shape[0] not in (None, 1)):
        raise ShapeError(f"TopK: K must be a 1-D tensor of one element, got shape "
                         f"{list(shape)}")


def _infer_top_k(attrs, inputs):
    x, k = inputs
    _k_shape(k.shape)
    if x.shape is None:
        return [TensorInfo(x.dtype, None), TensorInfo(_INT64, None)]
    axis = _norm_axis(attrs["axis"], len(x.shape))
    kv = None if k.value is None else int(np.asarray(k.value).reshape(-1)[0])
    shape = x.shape[:axis] + (kv,) + x.shape[axis + 1:]
    return [TensorInfo(x.dtype, shape), TensorInfo(_INT64, shape)]


# --------------------------------------------------------------------------- CumSum

def _cum_sum(inputs, attrs, ctx):
    """Running sum along `axis`, optionally exclusive and/or from the end."""
    x = np.asarray(inputs[0])
    axis = _norm_axis(int(_one_value(inputs[1], "CumSum", "axis")), x.ndim, "CumSum: ")
    y = np.flip(x, axis=axis) if attrs["reverse"] else x
    y = np.cumsum(y, axis=axis, dtype=_acc_dtype(x.dtype))
    if attrs["exclusive"] and y.shape[axis]:
        # shift by one along the axis: y[i] = sum of x[:i], y[0] = 0
        shifted = np.zeros_like(y)
        lead = (slice(None),) * axis
        shifted[lead + (slice(1, None),)] = y[lead + (slice(None, -1),)]
        y = shifted
    if attrs["reverse"]:
        y = np.flip(y, axis=axis)
    return (np.ascontiguousarray(y).astype(x.dtype, copy=False),)


def _infer_cum_sum(attrs, inputs):
    _one_value_info(inputs[1], "CumSum", "axis")
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


# --------------------------------------------------------------------------- definitions

_REDUCE_ATTRS = (("axes", "ints", None), ("keepdims", "int", 1),
                 ("noop_with_empty_axes", "int", 0))


def _reduce_op(name):
    kernel = _reduce_kernel(name)
    return define(name, ["data", "axes?"], ["reduced"], kernel, _REDUCE_ATTRS,
                  infer=_reduce_infer(kernel), since_version=13 if name == "ReduceSum" else 18)


_ARG_ATTRS = (("axis", "int", 0), ("keepdims", "int", 1), ("select_last_index", "int", 0))

OPS = tuple(sorted((
    *(_reduce_op(name) for name in _REDUCERS),
    define("ArgMax", ["data"], ["reduced"], _arg_kernel(np.argmax), _ARG_ATTRS,
           infer=_folding(_arg_kernel(np.argmax))(_infer_arg), since_version=13),
    define("ArgMin", ["data"], ["reduced"], _arg_kernel(np.argmin), _ARG_ATTRS,
           infer=_folding(_arg_kernel(np.argmin))(_infer_arg), since_version=13),
    define("CumSum", ["x", "axis"], ["y"], _cum_sum,
           [("exclusive", "int", 0), ("reverse", "int", 0)],
           infer=_folding(_cum_sum)(_infer_cum_sum),
           since_version=14),
    define("TopK", ["X", "K"], ["Values", "Indices"], _top_k,
           [("axis", "int", -1), ("largest", "int", 1), ("sorted", "int", 1)],
           infer=_infer_top_k, since_version=11),
), key=lambda op: op.name))

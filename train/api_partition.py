"""TF1's og.dynamic_partition, og.dynamic_stitch (og.parallel_dynamic_stitch) and
og.batch_gather, composed of og's graph functions (boolean_mask, unsorted_segment_max,
gather), so they differentiate and export to ONNX as those do. The run-time checks TF's
kernels make (partition values, negative stitch indices, gathered indices) are og.Asserts
that fail the run with ExecutionError; an ONNX export leaves them out.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api, api_compat, api_extra
from . import graph as _g
from .api import _graph_of, _int_arg, _t
from .api_extra import _rank
from .api_math import _checked
from .debugging import Assert
from .graph import Tensor

__all__ = ["batch_gather", "dynamic_partition", "dynamic_stitch", "parallel_dynamic_stitch"]


def _compatible(a, b) -> bool:
    """Whether two static dims (None: unknown) can be equal."""
    return a is None or b is None or a == b


def _check_prefix(ids: Tensor, data: Tensor, what: str) -> None:
    """Refuse ids whose static shape cannot be a prefix of data's.

    Raises:
        ShapeError: it cannot (names `what`).
    """
    if data.shape is None:
        return
    k = len(ids.shape)
    if k > len(data.shape) or not all(map(_compatible, ids.shape, data.shape)):
        raise ShapeError(f"{what}: indices of shape {list(ids.shape)} must be a prefix of "
                         f"data's shape {list(data.shape)}")


# --------------------------------------------------------------------------- partition

def dynamic_partition(data, partitions, num_partitions, name=None) -> list:
    """tf.dynamic_partition: num_partitions tensors, the i-th holding the rows of data
    (over its leading partitions.ndim dims) whose partition is i, in row-major order;
    each of static shape [None] + data.shape[partitions.ndim:]. A scalar partitions
    puts all of data, as one row, in its partition. partitions may be int32 (TF's) or
    int64. Gradients flow to data (boolean_mask's, which is TF's dynamic_stitch of them).

    Raises:
        TypeError: num_partitions is not an int, or name not a str.
        ValueError: num_partitions < 1.
        ShapeError: partitions is not an integer tensor of known rank whose shape is a
            prefix of data's, or data's rank is unknown.
        ExecutionError (when the graph runs): a partition value is outside
            [0, num_partitions), or partitions' shape is not data's leading dims.
    """
    _g.check_name(name, "dynamic_partition")
    what = "dynamic_partition"
    n = _int_arg(num_partitions, f"{what}: num_partitions")
    if n < 1:
        raise ValueError(f"{what}: num_partitions must be >= 1, got {n}")
    g = _graph_of(data, partitions)
    x = _t(data, graph=g)
    p = _g.integer_tensor(partitions, f"{what}: partitions", g)
    k = _rank(p, f"{what}: partitions")
    _rank(x, f"{what}: data")  # boolean_mask needs it
    _check_prefix(p, x, f"{what}: partitions")
    with g.name_scope(name or "DynamicPartition"):
        p = api.cast(p, DType.INT64)
        valid = api.logical_and(api.greater_equal(p, np.int64(0)), api.less(p, np.int64(n)))
        p = _checked(p, valid, f"{what}: partitions must be in [0, {n}) (num_partitions)")
        # boolean_mask takes a mask shorter than data's dims without complaint
        fits = api.equal(api.shape(p), api.shape(x)[:k])
        p = _checked(p, fits, f"{what}: partitions' shape must be the leading dims of data's")
        if k == 0:
            # a scalar partition picks all of data or nothing: one row of it
            x, p = api.expand_dims(x, 0), api.reshape(p, [1])
        tail = None if x.shape is None else list(x.shape[max(k, 1):])
        outs = [api_extra.boolean_mask(x, api.equal(p, np.int64(i))) for i in range(n)]
    if tail is not None:
        for out in outs:
            out.set_shape([None] + tail)
    return outs


# --------------------------------------------------------------------------- stitch

def _stitch_inputs(indices, data, what: str) -> tuple:
    """(int64 index tensors, data tensors) of dynamic_stitch, checked.

    Raises:
        TypeError: indices or data is not a list or tuple.
        ValueError: they differ in length or are empty.
        ShapeError: an index is not an integer tensor of known rank, a data tensor's
            rank is unknown, dtypes differ, or an index shape is not a prefix of its
            data's.
    """
    for arg, label in ((indices, "indices"), (data, "data")):
        if not isinstance(arg, (list, tuple)):
            raise TypeError(f"{what}: {label} must be a list of tensors, got "
                            f"{type(arg).__name__}")
    if len(indices) != len(data):
        raise ValueError(f"{what}: indices and data must have the same number of tensors, "
                         f"got {len(indices)} and {len(data)}")
    if not indices:
        raise ValueError(f"{what}: needs at least one indices/data pair")
    g = _graph_of(*indices, *data)
    ids = [_g.integer_tensor(i, f"{what}: indices[{m}]", g) for m, i in enumerate(indices)]
    ds = [_t(d, graph=g) for d in data]
    for m, (i, d) in enumerate(zip(ids, ds)):
        _rank(i, f"{what}: indices[{m}]")
        _rank(d, f"{what}: data[{m}]")
        if d.dtype != ds[0].dtype:
            raise ShapeError(f"{what}: data[{m}] has dtype {d.dtype.short_name} but data[0] "
                             f"{ds[0].dtype.short_name}")
        _check_prefix(i, d, f"{what}: data[{m}]")
    return ids, ds


def _stitch_tail(ids: list, ds: list, what: str) -> list:
    """The row dims shared by every data[m] (data[m].shape[indices[m].ndim:]), merged.

    Raises:
        ShapeError: two of them differ in rank or in a known dim.
    """
    tail = list(ds[0].shape[len(ids[0].shape):])
    for m, (i, d) in enumerate(zip(ids, ds)):
        mine = d.shape[len(i.shape):]
        if len(mine) != len(tail) or not all(map(_compatible, mine, tail)):
            raise ShapeError(f"{what}: the trailing dims {list(mine)} of data[{m}] (after "
                             f"indices[{m}]'s dims) differ from data[0]'s {tail}")
        tail = [a if a is not None else b for a, b in zip(tail, mine)]
    return tail


def _shapes_agree(ids: list, ds: list) -> Tensor:
    """True when every indices[m]'s run-time shape is data[m]'s leading dims and every
    data[m]'s row dims are data[0]'s (the static checks leave unknown dims open)."""
    k0 = len(ids[0].shape)
    tail0 = api.shape(ds[0])[k0:]
    checks = []
    for i, d in zip(ids, ds):
        k = len(i.shape)
        checks.append(api.equal(api.shape(i), api.shape(d)[:k]))
        checks.append(api.equal(api.shape(d)[k:], tail0))
    return api_extra.reduce_all(api.concat(checks, 0))


def _rows(d: Tensor, k: int) -> Tensor:
    """d with its leading k dims merged into one (a new one for k = 0); the count is
    their product rather than -1, so rows of no elements still reshape."""
    dims = api.shape(d)
    count = api.reshape(api.reduce_prod(dims[:k]), [1])
    return api.reshape(d, api.concat([count, dims[k:]], 0))


def _static_count(g, ids: list):
    """max(indices) + 1 when every indices tensor is known while building, else None."""
    values = [g.static_value(i) for i in ids]
    if any(v is None for v in values):
        return None
    return max((int(np.max(v)) + 1 for v in values if np.size(v)), default=0)


def dynamic_stitch(indices, data, name=None) -> Tensor:
    """tf.dynamic_stitch: merged[indices[m][i...], ...] = data[m][i..., ...], of
    shape [max of all indices + 1] + data[0].shape[indices[0].ndim:]; where indices
    repeat, the later one (higher m, then later in indices[m]) wins, and rows no index
    names are zeros. The first dim is static when every indices tensor is a constant.
    Indices may be int32 or int64. The gradient of data[m] is the output's gradient at
    indices[m], zero where a later duplicate won (a gather at the winning positions:
    unsorted_segment_max of the positions by index).

    Raises:
        TypeError: indices or data is not a list or tuple, or name not a str.
        ValueError: indices and data differ in length or are empty.
        ShapeError: an index is not an integer tensor of known rank, a data rank is
            unknown, data dtypes differ, an indices shape is not a prefix of its data's,
            or the row dims of data differ.
        ExecutionError (when the graph runs): an index is negative, or the shapes fed
            break those rules.
    """
    _g.check_name(name, "dynamic_stitch")
    what = "dynamic_stitch"
    ids, ds = _stitch_inputs(indices, data, what)
    tail = _stitch_tail(ids, ds, what)
    g = ds[0].graph
    count_known = _static_count(g, ids)
    with g.name_scope(name or "DynamicStitch"):
        fits = Assert(_shapes_agree(ids, ds),
                      [f"{what}: each indices[m]'s shape must be the leading dims of data[m] "
                       "and the remaining dims the same for every m"])
        # before the reshapes and concatenations that would fail with a vaguer message
        with g.control_dependencies([fits]):
            flat = api.concat([api.reshape(api.cast(i, DType.INT64), [-1]) for i in ids], 0)
            rows = api.concat([_rows(d, len(i.shape)) for i, d in zip(ids, ds)], 0)
        flat = _checked(flat, api.greater_equal(flat, np.int64(0)),
                        f"{what}: indices must be >= 0")
        # max of no indices is int64's minimum: the count is then 0
        count = api.maximum(api.reduce_max(flat) + np.int64(1), np.int64(0))
        positions = api_extra.range(api.reshape(api_extra.size(flat, out_type=DType.INT64),
                                                []), dtype=DType.INT64)
        winner = api_compat.unsorted_segment_max(positions, flat, count)
        # row 0 of `padded` is zeros, for indices no input names (winner: int64 min)
        named = api.greater_equal(winner, np.int64(0))
        pick = api.where(named, winner + np.int64(1), api.zeros_like(winner))
        zero_row = api.zeros(api.concat([api.constant(np.array([1], np.int64)),
                                         api.shape(rows)[1:]], 0), ds[0].dtype)
        padded = api.concat([zero_row, rows], 0)
        out = api.gather(padded, pick)
    out.set_shape([count_known] + tail)
    return out


# TF1's parallel_dynamic_stitch is the same op (its duplicate order unspecified)
parallel_dynamic_stitch = dynamic_stitch


# --------------------------------------------------------------------------- batch_gather

def batch_gather(params, indices, name=None) -> Tensor:
    """TF1's deprecated tf.batch_gather: og.gather(params, indices, batch_dims=
    rank(indices) - 1), i.e. out[b..., i] = params[b..., indices[b..., i], ...] within
    each of the leading batch dims; static shape params' batch dims (merged with
    indices') + indices' last dim + params' dims after the gathered one.

    Raises:
        TypeError: name is not a str.
        ShapeError: indices is not an integer tensor of known rank, params' rank is
            unknown, or their known batch dims differ.
        ValueError: indices is a scalar, or params has no dim after the batch dims.
        ExecutionError (when the graph runs): an index is outside [0, params' dim
            batch_dims), or the batch dims differ.
    """
    _g.check_name(name, "batch_gather")
    what = "batch_gather"
    g = _graph_of(params, indices)
    p = _t(params, graph=g)
    idx = _g.integer_tensor(indices, f"{what}: indices", g)
    b = _rank(idx, f"{what}: indices") - 1
    rank = _rank(p, f"{what}: params")
    if b < 0:
        raise ValueError(f"{what}: indices must have rank >= 1, got a scalar")
    if b >= rank:
        raise ValueError(f"{what}: params of rank {rank} needs a dim after the {b} batch "
                         f"dims of indices of rank {b + 1}")
    batch = list(p.shape[:b])
    if not all(map(_compatible, batch, idx.shape[:b])):
        raise ShapeError(f"{what}: the batch dims of params {list(p.shape)} and indices "
                         f"{list(idx.shape)} differ")
    batch = [a if a is not None else c for a, c in zip(batch, idx.shape[:b])]
    with g.name_scope(name or "BatchGather"):
        # og.gather checks the batch dims at run time; TF's gather also refuses the
        # negative indices that og.gather (as ONNX) counts from the end
        i64 = api.cast(idx, DType.INT64)
        dims = api.shape(p)
        inside = api.logical_and(api.greater_equal(i64, np.int64(0)), api.less(i64, dims[b]))
        i64 = _checked(i64, inside, f"{what}: indices must be in [0, params' dim {b})")
        out = api.gather(p, i64, axis=b, batch_dims=b)
    out.set_shape(batch + list(idx.shape[b:]) + list(p.shape[b + 1:]))
    return out

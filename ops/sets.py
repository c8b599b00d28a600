"""Operators: TF's set operations (onegraph domain): SetSize and the Dense/Sparse set
operations over the last dimension, whose entries along it form one set per group.

Names, inputs, outputs, attributes and refusal messages are TF's raw ops'. A set
operation's result is a SparseTensor (indices, values, dense_shape) holding each
non-empty group's set sorted ascending, its dense shape the group shape plus the
largest result set's size. Dense groups keep every entry (nothing counts as padding).
Errors while running are InvalidArgumentError with TF's text. Ints (8 to 64 bits,
uint8/16) and strings (str) only; no gradients (see train/api_sets.py).
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, InvalidArgumentError, ShapeError
from .registry import TensorInfo, define
from .sparse import _fmt, _validate_indices

DOMAIN = "onegraph"
SET_OPERATIONS = ("a-b", "b-a", "intersection", "union")
_SP = ["indices", "values", "shape"]


def _join(dims) -> str:
    return "[" + ",".join(str(int(d)) for d in dims) + "]"


def _group_shape(shape) -> tuple:
    """The shape without its last (set) dim.

    Raises:
        InvalidArgumentError: rank below 2 (TF's "has rank 1 < 2").
    """
    if len(shape) < 2:
        raise InvalidArgumentError(f"Shape {_join(shape)} has rank {len(shape)} < 2")
    return tuple(int(d) for d in shape[:-1])


def _same_groups(shape1, shape2) -> tuple:
    """The group shape two inputs share.

    Raises:
        InvalidArgumentError: a rank below 2, or the group shapes differ.
    """
    g1, g2 = _group_shape(shape1), _group_shape(shape2)
    if g1 != g2:
        raise InvalidArgumentError(f"Mismatched shapes {_join(g1)} vs {_join(g2)}")
    return g1


def _dense_sets(x: np.ndarray) -> dict:
    """{group index tuple: set of its entries} for every group of a dense input."""
    rows = x.reshape(-1, x.shape[-1]) if x.size else np.zeros((0, 0), x.dtype)
    lead = x.shape[:-1]
    out = {}
    for flat, group in enumerate(np.ndindex(*lead)):
        out[group] = set(rows[flat].tolist()) if x.shape[-1] else set()
    return out


def _sparse_parts(inputs, k: int, validate: bool, checked_rank: bool = True):
    """The SparseTensor given as inputs k..k+2 as (indices, values, shape) arrays.

    Raises:
        InvalidArgumentError: malformed parts, or (validate) indices out of bounds,
            order or repeated, with TF's IndicesValid text.
    """
    ind = np.asarray(inputs[k])
    val = np.asarray(inputs[k + 1])
    shp = np.asarray(inputs[k + 2])
    if shp.ndim != 1:
        raise InvalidArgumentError("Shape must be a 1D tensor.")
    if ind.ndim != 2 or ind.dtype.kind not in "iu" or shp.dtype.kind not in "iu":
        raise InvalidArgumentError(f"indices must be an int64 matrix, got {ind.dtype} "
                                   f"{_fmt(ind.shape)}")
    if val.ndim != 1 or val.shape[0] != ind.shape[0] or ind.shape[1] != shp.shape[0]:
        raise InvalidArgumentError(f"indices {_fmt(ind.shape)}, values {_fmt(val.shape)} and "
                                   f"shape {_fmt(shp.shape)} do not form a SparseTensor")
    ind = ind.astype(np.int64, copy=False)
    shp = shp.astype(np.int64, copy=False)
    if np.any(shp < 0):
        raise InvalidArgumentError(f"Dimension -1 must be >= 0, got shape {_join(shp)}")
    if validate:
        try:
            _validate_indices(ind, shp)
        except ExecutionError as e:
            raise InvalidArgumentError(str(e)) from e
    return ind, val, shp


def _sparse_sets(ind, val, shp) -> dict:
    """{group index tuple: set of its values} for the groups holding entries; every
    index must lie inside the shape (TF's CheckGroup)."""
    for j, dim in enumerate(shp):
        if ind.shape[0] and dim <= 0:
            raise InvalidArgumentError(f"Invalid dim_size[{j}] = {int(dim)}.")
        bad = np.nonzero((ind[:, j] >= dim) | (ind[:, j] < 0))[0]
        if bad.size:
            i = int(bad[0])
            raise InvalidArgumentError(f"indices[{i}, {j}] expected < {int(dim)}, got "
                                       f"{int(ind[i, j])}.")
    out: dict = {}
    values = val.tolist()
    for row, v in zip(ind[:, :-1].tolist(), values):
        out.setdefault(tuple(row), set()).add(v)
    return out


def _apply(op: str, a: set, b: set) -> set:
    if op == "a-b":
        return a - b
    if op == "b-a":
        return b - a
    if op == "intersection":
        return a & b
    return a | b


def _result(op: str, group_shape: tuple, sets_a: dict, sets_b: dict, dtype):
    """The result SparseTensor's three arrays, groups in row-major order."""
    rows, values = [], []
    largest = 0
    for group in sorted(set(sets_a) | set(sets_b)):
        result = sorted(_apply(op, sets_a.get(group, set()), sets_b.get(group, set())))
        largest = max(largest, len(result))
        rows.extend(group + (j,) for j in range(len(result)))
        values.extend(result)
    rank = len(group_shape) + 1
    if np.dtype(dtype).kind in "OUS":  # strings as objects: no width to truncate to
        dtype = object
    indices = np.array(rows, np.int64).reshape(-1, rank)
    out_values = np.array(values, dtype=dtype).reshape(-1)
    return indices, out_values, np.array(group_shape + (largest,), np.int64)


def _operation(attrs) -> str:
    op = attrs.get("set_operation")
    if isinstance(op, bytes):
        op = op.decode()
    if op not in SET_OPERATIONS:
        raise InvalidArgumentError(f"Invalid set_operation {op}.")
    return op


def _check_dtypes(a_dtype, b_dtype) -> None:
    if a_dtype != b_dtype and not (a_dtype.kind in "OU" and b_dtype.kind in "OU"):
        raise InvalidArgumentError(f"set1 is {a_dtype}, set2 is {b_dtype}: types must match")


# ------------------------------------------------------------------------- kernels

def _dense_to_dense(inputs, attrs, ctx):
    """TF's DenseToDenseSetOperation."""
    op = _operation(attrs)
    a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
    _check_dtypes(a.dtype, b.dtype)
    group_shape = _same_groups(a.shape, b.shape)
    return _result(op, group_shape, _dense_sets(a), _dense_sets(b), a.dtype)


def _dense_to_sparse(inputs, attrs, ctx):
    """TF's DenseToSparseSetOperation (set1 dense, set2 sparse)."""
    op = _operation(attrs)
    a = np.asarray(inputs[0])
    ind, val, shp = _sparse_parts(inputs, 1, bool(attrs.get("validate_indices", 1)))
    _check_dtypes(a.dtype, val.dtype)
    group_shape = _same_groups(a.shape, shp)
    return _result(op, group_shape, _dense_sets(a), _sparse_sets(ind, val, shp), a.dtype)


def _sparse_to_sparse(inputs, attrs, ctx):
    """TF's SparseToSparseSetOperation."""
    op = _operation(attrs)
    validate = bool(attrs.get("validate_indices", 1))
    a_ind, a_val, a_shp = _sparse_parts(inputs, 0, validate)
    b_ind, b_val, b_shp = _sparse_parts(inputs, 3, validate)
    _check_dtypes(a_val.dtype, b_val.dtype)
    group_shape = _same_groups(a_shp, b_shp)
    return _result(op, group_shape, _sparse_sets(a_ind, a_val, a_shp),
                   _sparse_sets(b_ind, b_val, b_shp), a_val.dtype)


def _set_size(inputs, attrs, ctx):
    """TF's SetSize: the number of distinct values in each group, int32 of the group
    shape."""
    ind, val, shp = _sparse_parts(inputs, 0, bool(attrs.get("validate_indices", 1)))
    if shp.shape[0] < 2:
        raise InvalidArgumentError(f"Invalid rank {shp.shape[0]}.")
    out = np.zeros(tuple(int(d) for d in shp[:-1]), np.int32)
    for group, values in _sparse_sets(ind, val, shp).items():
        out[group] = len(values)
    return (out,)


# ----------------------------------------------------------------------- inference

def _rank_of(info):
    return None if info is None or info.shape is None else len(info.shape)


def _dim(info, k):
    if info is None or info.shape is None or len(info.shape) <= k:
        return None
    return info.shape[k]


def _sparse_rank(inputs, k):
    rank = _dim(inputs[k], 1)
    return rank if rank is not None else _dim(inputs[k + 2], 0)


def _outputs(rank, dtype):
    return [TensorInfo(np.dtype(np.int64), (None, rank)),
            TensorInfo(None if dtype is None else np.dtype(dtype), (None,)),
            TensorInfo(np.dtype(np.int64), (rank,))]


def _check_ranks(first, second) -> None:
    for rank in (first, second):
        if rank is not None and rank < 2:
            raise ShapeError(f"a set input has rank {rank}; it must be at least 2")
    if first is not None and second is not None and first != second:
        raise ShapeError(f"the set inputs have ranks {first} and {second}; they must agree")


def _infer(first_rank, second_rank, dtype):
    _check_ranks(first_rank, second_rank)
    return _outputs(first_rank if first_rank is not None else second_rank, dtype)


def _dtype_of(info):
    return None if info is None else info.dtype


def _dense_to_dense_infer(attrs, inputs):
    return _infer(_rank_of(inputs[0]), _rank_of(inputs[1]), _dtype_of(inputs[0]))


def _dense_to_sparse_infer(attrs, inputs):
    return _infer(_rank_of(inputs[0]), _sparse_rank(inputs, 1), _dtype_of(inputs[0]))


def _sparse_to_sparse_infer(attrs, inputs):
    return _infer(_sparse_rank(inputs, 0), _sparse_rank(inputs, 3), _dtype_of(inputs[1]))


_ATTRS = [("set_operation", "string"), ("validate_indices", "int", 1)]
_OUT = ["result_indices", "result_values", "result_shape"]

OPS = (
    define("SetSize", ["set_indices", "set_values", "set_shape"], ["size"], _set_size,
           attrs=[("validate_indices", "int", 1)],
           infer=lambda attrs, inputs: [TensorInfo(np.dtype(np.int32), None)],
           domain=DOMAIN, doc="TF's SetSize"),
    define("DenseToDenseSetOperation", ["set1", "set2"], _OUT, _dense_to_dense,
           attrs=_ATTRS, infer=_dense_to_dense_infer, domain=DOMAIN,
           doc="TF's DenseToDenseSetOperation"),
    define("DenseToSparseSetOperation", ["set1"] + ["set2_" + n for n in _SP], _OUT,
           _dense_to_sparse, attrs=_ATTRS, infer=_dense_to_sparse_infer, domain=DOMAIN,
           doc="TF's DenseToSparseSetOperation"),
    define("SparseToSparseSetOperation", ["set1_" + n for n in _SP] + ["set2_" + n for n in _SP],
           _OUT, _sparse_to_sparse, attrs=_ATTRS, infer=_sparse_to_sparse_infer, domain=DOMAIN,
           doc="TF's SparseToSparseSetOperation"),
)

"""SparseTensor elements in og.data pipelines (train/data.py): batching them into one
SparseTensor with a leading batch dim and splitting one along its first dim, as TF's
batch / unbatch / from_tensor_slices do for sparse components."""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError
from .sparse_tensor import SparseTensorValue


def as_value(value) -> SparseTensorValue:
    """A SparseTensorValue of int64 indices and dense_shape (arrays)."""
    indices, values, dense_shape = value
    dense_shape = np.asarray(dense_shape, np.int64).reshape(-1)
    return SparseTensorValue(np.asarray(indices, np.int64).reshape(-1, dense_shape.size),
                             np.asarray(values).reshape(-1), dense_shape)


def rows(value) -> int:
    """The size of a sparse value's first dim.

    Raises:
        ExecutionError: it is a scalar (rank 0).
    """
    shape = np.asarray(value.dense_shape).reshape(-1)
    if shape.size == 0:
        raise ExecutionError("a sparse component of rank 0 cannot be sliced or unbatched")
    return int(shape[0])


def batch(parts: list) -> SparseTensorValue:
    """Sparse values of one rank as one, with a leading dim over them; the dense shape
    is the largest of theirs in each dim (TF's batching of SparseTensors).

    Raises:
        ExecutionError: the ranks differ.
    """
    parts = [as_value(p) for p in parts]
    ranks = {p.dense_shape.size for p in parts}
    if len(ranks) != 1:
        raise ExecutionError(f"batch: sparse elements of different ranks {sorted(ranks)}")
    rank = ranks.pop()
    shape = np.max(np.stack([p.dense_shape for p in parts]), axis=0) if rank else \
        np.zeros([0], np.int64)
    indices = [np.concatenate([np.full([len(p.values), 1], i, np.int64), p.indices], axis=1)
               for i, p in enumerate(parts)]
    return SparseTensorValue(np.concatenate(indices).reshape(-1, rank + 1),
                             np.concatenate([p.values for p in parts]),
                             np.concatenate([[len(parts)], shape]).astype(np.int64))


def split(value) -> list:
    """The slices of a sparse value along its first dim, each one rank lower.

    Raises:
        ExecutionError: it is a scalar, or an index is outside its dense shape.
    """
    value = as_value(value)
    count = rows(value)
    first = value.indices[:, 0]
    if first.size and (first.min() < 0 or first.max() >= count):
        raise ExecutionError(f"a sparse index {int(first.max())} is outside the first dim "
                             f"{count}")
    order = np.argsort(first, kind="stable")
    indices, values, first = value.indices[order], value.values[order], first[order]
    bounds = np.searchsorted(first, np.arange(count + 1))
    return [SparseTensorValue(indices[a:b, 1:], values[a:b], value.dense_shape[1:])
            for a, b in zip(bounds[:-1], bounds[1:])]

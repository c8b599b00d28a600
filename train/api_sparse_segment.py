"""TF1's sparse segment reductions (og.sparse_segment_sum / mean / sqrt_n, also as
og.sparse.segment_*): a segment reduction of the rows `indices` of data, built from
og.gather and og.unsorted_segment_sum (so their gradients are those ops')."""

from __future__ import annotations

import numpy as np

from ..format import DType
from . import api, api_extra
from .graph import Tensor

__all__ = ["sparse_segment_mean", "sparse_segment_sqrt_n", "sparse_segment_sum"]


def _segments(data, indices, segment_ids, num_segments):
    """(rows of data picked by indices, segment ids as int64, the segment count)."""
    rows = api.gather(data, indices, axis=0)
    ids = api.cast(api._t(segment_ids), DType.INT64)
    count = num_segments if num_segments is not None else \
        api.reduce_max(ids) + np.int64(1)
    return rows, ids, count


def sparse_segment_sum(data, indices, segment_ids, name=None, num_segments=None) -> Tensor:
    """Sums of data's rows `indices` per segment (TF's tf.sparse.segment_sum): row k of
    the result adds data[indices[j]] for the j with segment_ids[j] == k; segments
    without rows are 0 (num_segments sets how many; default: the largest id + 1).

    Raises:
        ShapeError / TypeError: as og.gather and og.unsorted_segment_sum.
    """
    rows, ids, count = _segments(data, indices, segment_ids, num_segments)
    return api_extra.unsorted_segment_sum(rows, ids, count, name=name)


def _counts(ids, count, dtype):
    ones = api.ones_like(api.cast(ids, dtype))
    return api_extra.unsorted_segment_sum(ones, ids, count)


def _per_row(x, rank_like):
    """x (one value per segment) shaped to divide the segments' rows."""
    extra = api.zeros_like(api.shape(rank_like))[1:]
    return api.reshape(x, api.concat([api.shape(x), api.ones_like(extra)], 0))


def sparse_segment_mean(data, indices, segment_ids, name=None, num_segments=None) -> Tensor:
    """Means of data's rows `indices` per segment (TF's tf.sparse.segment_mean);
    empty segments are 0.

    Raises:
        ShapeError / TypeError: as sparse_segment_sum.
    """
    rows, ids, count = _segments(data, indices, segment_ids, num_segments)
    total = api_extra.unsorted_segment_sum(rows, ids, count)
    n = api.maximum(_counts(ids, count, total.dtype), api.ones_like(
        _counts(ids, count, total.dtype)))
    return api.identity(total / _per_row(n, total), name=name)


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None,
                          num_segments=None) -> Tensor:
    """Sums of data's rows `indices` per segment divided by the square root of their
    count (TF's tf.sparse.segment_sqrt_n); empty segments are 0.

    Raises:
        ShapeError / TypeError: as sparse_segment_sum.
    """
    rows, ids, count = _segments(data, indices, segment_ids, num_segments)
    total = api_extra.unsorted_segment_sum(rows, ids, count)
    n = _counts(ids, count, total.dtype)
    n = api.maximum(n, api.ones_like(n))
    return api.identity(total / _per_row(api.sqrt(n), total), name=name)

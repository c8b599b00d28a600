"""TF1's top-k retrieval metrics: recall_at_k, precision_at_k (and their _at_top_k
forms taking the predicted class ids), average_precision_at_k, with TF1's sparse_*
aliases.

TF1 builds them from set operations on each example's last axis: labels is a dense
integer tensor [..., num_labels] (or [...], one label per example) and the top k
predicted ids are compared with it as sets, so repeated ids count once. Here the sets
are pairwise comparisons of the two short last axes (a label counts only at its first
occurrence). The running totals are float64, as TF1's; dense labels only (no
SparseTensor).
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_extra
from . import graph as _g
from .graph import LOCAL_VARIABLES, METRIC_VARIABLES, Tensor
from .losses import _check_weights_shape, _safe_divide
from .metrics_more import _finish
from .variables import Variable

__all__ = ["average_precision_at_k", "precision_at_k", "precision_at_top_k",
           "recall_at_k", "recall_at_top_k", "sparse_average_precision_at_k",
           "sparse_precision_at_k"]


def _total64(name: str, g) -> Variable:
    return Variable(np.float64(0), trainable=False, name=name, graph=g,
                    collections=[LOCAL_VARIABLES, METRIC_VARIABLES])


def _k(k, where: str) -> int:
    n = api._int_arg(k, f"{where}: k")
    if n < 1:
        raise ValueError(f"{where}: k must be >= 1, got {n}")
    return n


def _ids(value, what: str, g=None) -> Tensor:
    """An integer tensor of class ids as int64.

    Raises:
        ShapeError: it is not an integer tensor.
    """
    return api.cast(_g.integer_tensor(value, what, g), DType.INT64)


def _labels_like(labels: Tensor, ids: Tensor, where: str) -> Tensor:
    """labels with a last axis of 1 added when they have one rank less than the
    predicted ids (TF1's _maybe_expand_labels).

    Raises:
        ShapeError: the ranks are known and differ otherwise, or are unknown.
    """
    if labels.shape is None or ids.shape is None:
        raise ShapeError(f"{where}: labels and predictions need known ranks")
    if len(ids.shape) == len(labels.shape):
        return labels
    if len(ids.shape) == len(labels.shape) + 1:
        return api.expand_dims(labels, -1)
    raise ShapeError(f"{where}: labels {list(labels.shape)} do not fit predictions "
                     f"{list(ids.shape)}: their rank must be the predictions' or one less")


def _first_occurrence(x: Tensor) -> Tensor:
    """Bool, shaped as x: whether each entry of the last axis is the first of its
    value along that axis."""
    same = api.equal(api.expand_dims(x, -1), api.expand_dims(x, -2))  # [..., n, n]
    n = x.shape[-1]
    if n is None:
        raise ShapeError("top-k metrics: the last axis of labels and predictions must be "
                         "known while building")
    earlier = api.constant(np.tril(np.ones((n, n), bool), -1))      # m < l at [l, m]
    return api.logical_not(api_extra.reduce_any(api.logical_and(same, earlier), -1))


def _member(x: Tensor, of: Tensor) -> Tensor:
    """Bool, shaped as x: whether each entry of x's last axis occurs in `of`'s."""
    return api_extra.reduce_any(api.equal(api.expand_dims(x, -1), api.expand_dims(of, -2)),
                                -1)


def _set_counts(labels: Tensor, ids: Tensor, class_id) -> dict:
    """Per example (float64): tp = |ids ∩ labels|, fp = |ids \\ labels|, fn =
    |labels \\ ids|, as sets over the last axis (restricted to {class_id} if given)."""
    hit = api.logical_and(_first_occurrence(ids), _member(ids, labels))
    extra = api.logical_and(_first_occurrence(ids), api.logical_not(_member(ids, labels)))
    miss = api.logical_and(_first_occurrence(labels), api.logical_not(_member(labels, ids)))
    if class_id is not None:
        cid = api.constant(np.int64(class_id))
        hit = api.logical_and(hit, api.equal(ids, cid))
        extra = api.logical_and(extra, api.equal(ids, cid))
        miss = api.logical_and(miss, api.equal(labels, cid))
    count = lambda b: api.reduce_sum(api.cast(b, DType.FLOAT64), [-1])  # noqa: E731
    return {"tp": count(hit), "fp": count(extra), "fn": count(miss)}


def _weighted(counts: Tensor, weights, where: str) -> Tensor:
    if weights is None:
        return counts
    return counts * _example_weights(weights, counts, where)


def _example_weights(weights, per_example: Tensor, where: str) -> Tensor:
    """weights as float64, checked to broadcast to the per-example values (TF1's
    assert_broadcastable: a scalar, or their rank with each dim 1 or theirs).

    Raises:
        ShapeError: they do not.
    """
    w = api.cast(_g.convert_to_tensor(weights, graph=per_example.graph), DType.FLOAT64)
    _check_weights_shape(w, per_example, where)
    return w


def _streaming_ratio(where: str, other: str, labels, ids, class_id, weights,
                     metrics_collections, updates_collections, name) -> tuple:
    """tp / (tp + other) of running float64 totals ("fp" for precision, "fn" for
    recall), TF1's plain division (NaN while both are 0)."""
    if class_id is not None:
        class_id = api._int_arg(class_id, f"{where}: class_id")
    idx = _ids(ids, f"{where}: predictions_idx")
    g = idx.graph
    lab = _labels_like(_ids(labels, f"{where}: labels", g), idx, where)
    with g.name_scope(name or where):
        counts = _set_counts(lab, idx, class_id)
        totals, updates = {}, {}
        for kind in ("tp", other):
            var = _total64({"tp": "true_positive", "fp": "false_positive",
                            "fn": "false_negative"}[kind], g)
            totals[kind] = var.value()
            updates[kind] = var.assign_add(api.reduce_sum(
                _weighted(counts[kind], weights, where)))
        value = totals["tp"] / (totals["tp"] + totals[other])
        update = updates["tp"] / (updates["tp"] + updates[other])
    return _finish(value, update, metrics_collections, updates_collections, where)


def _top_ids(predictions, k: int, where: str) -> Tensor:
    p = _g.convert_to_tensor(predictions)
    if p.shape is not None and len(p.shape) == 0:
        raise ShapeError(f"{where}: predictions need rank >= 1")
    return api_extra.top_k(p, k)[1]


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None, name=None) -> tuple:
    """(recall, update_op): of the examples' label sets, the fraction found among
    their predicted ids (predictions_idx [..., k]), or of class_id's labels only
    (tf.metrics.recall_at_top_k). Labels outside the classes count as misses.

    Raises:
        ShapeError: labels or ids are not integer tensors or do not fit.
        TypeError: class_id is not an int, or as og.metrics.mean.
    """
    return _streaming_ratio("recall_at_top_k", "fn", labels, predictions_idx, class_id,
                            weights, metrics_collections, updates_collections, name)


def recall_at_k(labels, predictions, k, class_id=None, weights=None,
                metrics_collections=None, updates_collections=None, name=None) -> tuple:
    """(recall, update_op): recall_at_top_k of the k highest-scoring classes of
    predictions [..., num_classes] (ties: the lower class first)
    (tf.metrics.recall_at_k).

    Raises:
        ValueError: k is below 1.
        ShapeError / TypeError: as recall_at_top_k.
    """
    n = _k(k, "recall_at_k")
    return _streaming_ratio("recall_at_k", "fn", labels, _top_ids(predictions, n,
                                                                  "recall_at_k"),
                            class_id, weights, metrics_collections, updates_collections,
                            name)


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None,
                       name=None) -> tuple:
    """(precision, update_op): of the predicted ids (predictions_idx [..., k]), the
    fraction in the examples' label sets, or for class_id only
    (tf.metrics.precision_at_top_k).

    Raises:
        ShapeError / TypeError: as recall_at_top_k.
    """
    return _streaming_ratio("precision_at_top_k", "fp", labels, predictions_idx,
                            class_id, weights, metrics_collections, updates_collections,
                            name)


def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None, name=None) -> tuple:
    """(precision, update_op): precision_at_top_k of the k highest-scoring classes
    (tf.metrics.precision_at_k, alias sparse_precision_at_k).

    Raises:
        ValueError: k is below 1.
        ShapeError / TypeError: as recall_at_top_k.
    """
    n = _k(k, "precision_at_k")
    return _streaming_ratio("precision_at_k", "fp", labels,
                            _top_ids(predictions, n, "precision_at_k"), class_id, weights,
                            metrics_collections, updates_collections, name)


sparse_precision_at_k = precision_at_k


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None) -> tuple:
    """(mean average precision, update_op): per example, the mean over its relevant
    labels (at most k; labels outside [0, num_classes) do not count) of the precision
    at each rank of the top k predictions where a label is found; averaged over the
    examples, weighted (tf.metrics.average_precision_at_k, alias
    sparse_average_precision_at_k). An example without relevant labels gives NaN, as
    in TF1.

    Raises:
        ValueError: k is below 1.
        ShapeError: labels are not an integer tensor or do not fit predictions.
    """
    where = "average_precision_at_k"
    _g.check_name(name, where)
    n = _k(k, where)
    scores = _g.convert_to_tensor(predictions)
    g = scores.graph
    idx = api.cast(_top_ids(scores, n, where), DType.INT64)
    lab = _ids(labels, f"{where}: labels", g)
    classes = api.shape(scores)[-1]
    lab = api.where(api.logical_and(api.greater_equal(lab, api.zeros_like(lab)),
                                    api.less(lab, classes)), lab,
                    api.ones_like(lab) * np.int64(-1))
    lab = _labels_like(lab, idx, where)
    with g.name_scope(name or where):
        relevant = api.cast(_member(idx, lab), DType.FLOAT64)          # [..., k]
        ranks = api.constant(np.arange(1, n + 1, dtype=np.float64))
        precision = api_extra.cumsum(relevant, -1) / ranks
        found = api.reduce_sum(precision * relevant, [-1])
        labelled = api.cast(api.greater_equal(lab, api.zeros_like(lab)), DType.FLOAT64)
        wanted = api.minimum(api.reduce_sum(labelled, [-1]),
                             api.constant(np.float64(n)))
        average = found / wanted
        if weights is not None:
            w = _example_weights(weights, average, where) * api.ones_like(average)
            average, batch = average * w, api.reduce_sum(w)
        else:
            batch = api.cast(api_extra.size(average), DType.FLOAT64)
        most, total = _total64("max", g), _total64("total", g)
        update_most = most.assign_add(batch)
        update_total = total.assign_add(api.reduce_sum(average))
        value = _safe_divide(total.value(), most.value())
        update = _safe_divide(update_total, update_most)
    return _finish(value, update, metrics_collections, updates_collections, where)


sparse_average_precision_at_k = average_precision_at_k

"""More of TF1's tf.metrics: counts of true/false positives/negatives (also at
thresholds), precision and recall at thresholds, auc, sensitivity_at_specificity,
specificity_at_sensitivity, mean_iou, mean_per_class_accuracy, mean_cosine_distance,
mean_relative_error, mean_tensor and percentage_below.

They follow metrics.py's conventions (running totals in local metric variables,
`(value, update_op)` pairs, TF1's squeeze rules) and TF1's formulas step for step
(tensorflow/python/ops/metrics_impl.py), epsilons included, so values agree with TF1's
to float32 rounding. Predictions scored against thresholds must lie in [0, 1]; like
TF1, that is checked when update_op runs.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_extra
from . import api_linalg
from . import api_math
from . import graph as _g
from .api_extra import not_equal
from .graph import LOCAL_VARIABLES, METRIC_VARIABLES, Tensor
from .losses import _safe_divide  # TF's div_no_nan
from .metrics import (_collect, _floats, _paired, _squeezable_pair, _squeezable_weights,
                      _weights_like, mean)
from .variables import Variable

__all__ = [
    "auc", "false_negatives", "false_negatives_at_thresholds", "false_positives",
    "false_positives_at_thresholds", "mean_cosine_distance", "mean_iou",
    "mean_per_class_accuracy", "mean_relative_error", "mean_tensor", "percentage_below",
    "precision_at_thresholds", "recall_at_thresholds", "sensitivity_at_specificity",
    "specificity_at_sensitivity", "true_negatives", "true_negatives_at_thresholds",
    "true_positives", "true_positives_at_thresholds",
]

_COUNTER_NAMES = {"tp": "true_positives", "fp": "false_positives",
                  "tn": "true_negatives", "fn": "false_negatives"}


def _totals(name: str, shape, g, dtype=np.float32) -> Variable:
    """Running totals of `shape` (zeros at start) in the local and metric collections."""
    return Variable(np.zeros(shape, dtype), trainable=False, name=name, graph=g,
                    collections=[LOCAL_VARIABLES, METRIC_VARIABLES])


def _finish(value: Tensor, update: Tensor, metrics_collections, updates_collections,
            where: str) -> tuple:
    _collect(metrics_collections, value, f"{where}: metrics_collections")
    _collect(updates_collections, update, f"{where}: updates_collections")
    return value, update


# --------------------------------------------------------------------------- counts

def _count(where: str, kind: str, labels, predictions, weights, metrics_collections,
           updates_collections, name) -> tuple:
    """The weighted count of one cell of the confusion of bool labels and predictions
    (TF1's _count_condition): kind "tp", "fp", "tn" or "fn"."""
    _g.check_name(name, where)
    y, p = _paired(labels, predictions, where)
    g = y.graph
    with g.name_scope(name or _COUNTER_NAMES[kind]):
        truth, said = not_equal(y, 0.0), not_equal(p, 0.0)
        if kind in ("fp", "tn"):
            truth = api.logical_not(truth)
        if kind in ("tn", "fn"):
            said = api.logical_not(said)
        hits = api.cast(api.logical_and(truth, said), DType.FLOAT32)
        w = _weights_like(weights, hits, where)
        count = _totals("count", (), g)
        update = count.assign_add(api.reduce_sum(hits * w))
        value = api.identity(count.value())
    return _finish(value, update, metrics_collections, updates_collections, where)


def true_positives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None) -> tuple:
    """(count, update_op): the weighted count of true labels predicted true, of bool
    (or nonzero) labels and predictions (tf.metrics.true_positives).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: they are not numbers or bools, or a collections argument is not a
            list.
    """
    return _count("true_positives", "tp", labels, predictions, weights,
                  metrics_collections, updates_collections, name)


def false_positives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None) -> tuple:
    """(count, update_op): the weighted count of false labels predicted true
    (tf.metrics.false_positives).

    Raises:
        ShapeError / TypeError: as `true_positives`.
    """
    return _count("false_positives", "fp", labels, predictions, weights,
                  metrics_collections, updates_collections, name)


def true_negatives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None) -> tuple:
    """(count, update_op): the weighted count of false labels predicted false
    (tf.metrics.true_negatives).

    Raises:
        ShapeError / TypeError: as `true_positives`.
    """
    return _count("true_negatives", "tn", labels, predictions, weights,
                  metrics_collections, updates_collections, name)


def false_negatives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None) -> tuple:
    """(count, update_op): the weighted count of true labels predicted false
    (tf.metrics.false_negatives).

    Raises:
        ShapeError / TypeError: as `true_positives`.
    """
    return _count("false_negatives", "fn", labels, predictions, weights,
                  metrics_collections, updates_collections, name)


# --------------------------------------------------------------------------- at thresholds

def _threshold_list(thresholds, where: str) -> list:
    """thresholds as a non-empty list of floats.

    Raises:
        TypeError: they are not numbers.
        ValueError: there are none.
    """
    try:
        values = [float(t) for t in np.asarray(thresholds, dtype=np.float64).reshape(-1)]
    except (TypeError, ValueError):
        raise TypeError(f"{where}: thresholds must be a list of numbers, got "
                        f"{thresholds!r}") from None
    if not values:
        raise ValueError(f"{where}: thresholds must not be empty")
    return values


def _at_thresholds(where: str, labels, predictions, thresholds: list, weights,
                   includes) -> tuple:
    """TF1's _confusion_matrix_at_thresholds: ({kind: running totals [T]}, {kind: the
    update adding this batch's weighted counts}) where a prediction above threshold t
    counts as positive; kinds from "tp", "fp", "tn", "fn". The updates check that
    predictions lie in [0, 1]."""
    p = _floats(predictions, f"{where}: predictions")
    y = _floats(labels, f"{where}: labels")
    y, p = _squeezable_pair(y, p)
    if weights is not None:
        w = _squeezable_weights(_floats(weights, f"{where}: weights"), p)
        w = _weights_like(w, p, where)
    g = p.graph
    zero, one = api.zeros_like(p), api.ones_like(p)
    p = api_math._checked(p, api.logical_and(api.greater_equal(p, zero),
                                             api.less_equal(p, one)),
                          f"{where}: predictions must be in [0, 1]")
    flat_p = api.reshape(p, [1, -1])
    flat_y = api.reshape(not_equal(y, 0.0), [1, -1])
    if p.shape is not None and y.shape is not None and None not in p.shape \
            and None not in y.shape and int(np.prod(p.shape)) != int(np.prod(y.shape)):
        raise ShapeError(f"{where}: labels {list(y.shape)} and predictions "
                         f"{list(p.shape)} must have the same size")
    limits = api.constant(np.asarray(thresholds, np.float32).reshape(-1, 1))
    said = api.greater(flat_p, limits)                                  # [T, N]
    masks = {"tp": api.logical_and(flat_y, said),
             "fn": api.logical_and(flat_y, api.logical_not(said)),
             "tn": api.logical_and(api.logical_not(flat_y), api.logical_not(said)),
             "fp": api.logical_and(api.logical_not(flat_y), said)}
    values, updates = {}, {}
    for kind in includes:
        hits = api.cast(masks[kind], DType.FLOAT32)
        if weights is not None:
            hits = hits * api.reshape(w, [1, -1])
        totals = _totals(_COUNTER_NAMES[kind], (len(thresholds),), g)
        updates[kind] = totals.assign_add(api.reduce_sum(hits, [1]))
        values[kind] = totals.value()
    return values, updates


def _read_at_thresholds(where: str, labels, predictions, limits: list, weights, kinds,
                        read, name, metrics_collections, updates_collections) -> tuple:
    """(value, update_op) of a metric read off the confusion counts at the thresholds
    `limits`: read({kind: counts [T]}) of the running totals and of this batch's
    update, in the name scope `name` (default `where`); the counts of `kinds` only.

    Raises:
        ShapeError / TypeError / ExecutionError: as `true_positives_at_thresholds`.
    """
    g = _floats(predictions, f"{where}: predictions").graph
    with g.name_scope(name or where):
        values, updates = _at_thresholds(where, labels, predictions, limits, weights,
                                         kinds)
        value, update = read(values), read(updates)
    return _finish(value, update, metrics_collections, updates_collections, where)


def _count_at_thresholds(where: str, kind: str, labels, predictions, thresholds, weights,
                         metrics_collections, updates_collections, name) -> tuple:
    _g.check_name(name, where)
    limits = _threshold_list(thresholds, where)
    g = _floats(predictions, f"{where}: predictions").graph
    with g.name_scope(name or _COUNTER_NAMES[kind]):
        values, updates = _at_thresholds(where, labels, predictions, limits, weights,
                                         (kind,))
        value = api.identity(values[kind])
    return _finish(value, updates[kind], metrics_collections, updates_collections, where)


def true_positives_at_thresholds(labels, predictions, thresholds, weights=None,
                                 metrics_collections=None, updates_collections=None,
                                 name=None) -> tuple:
    """(counts [len(thresholds)], update_op): for each threshold, the weighted count of
    true labels whose prediction is above it (tf.metrics.true_positives_at_thresholds).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: thresholds are not numbers, or as `true_positives`.
        ValueError: thresholds is empty.
        ExecutionError: (when update_op runs) a prediction is outside [0, 1].
    """
    return _count_at_thresholds("true_positives_at_thresholds", "tp", labels, predictions,
                                thresholds, weights, metrics_collections,
                                updates_collections, name)


def false_positives_at_thresholds(labels, predictions, thresholds, weights=None,
                                  metrics_collections=None, updates_collections=None,
                                  name=None) -> tuple:
    """(counts, update_op): per threshold, the weighted count of false labels whose
    prediction is above it (tf.metrics.false_positives_at_thresholds).

    Raises:
        as `true_positives_at_thresholds`.
    """
    return _count_at_thresholds("false_positives_at_thresholds", "fp", labels, predictions,
                                thresholds, weights, metrics_collections,
                                updates_collections, name)


def true_negatives_at_thresholds(labels, predictions, thresholds, weights=None,
                                 metrics_collections=None, updates_collections=None,
                                 name=None) -> tuple:
    """(counts, update_op): per threshold, the weighted count of false labels whose
    prediction is not above it (tf.metrics.true_negatives_at_thresholds).

    Raises:
        as `true_positives_at_thresholds`.
    """
    return _count_at_thresholds("true_negatives_at_thresholds", "tn", labels, predictions,
                                thresholds, weights, metrics_collections,
                                updates_collections, name)


def false_negatives_at_thresholds(labels, predictions, thresholds, weights=None,
                                  metrics_collections=None, updates_collections=None,
                                  name=None) -> tuple:
    """(counts, update_op): per threshold, the weighted count of true labels whose
    prediction is not above it (tf.metrics.false_negatives_at_thresholds).

    Raises:
        as `true_positives_at_thresholds`.
    """
    return _count_at_thresholds("false_negatives_at_thresholds", "fn", labels, predictions,
                                thresholds, weights, metrics_collections,
                                updates_collections, name)


def _ratio_at_thresholds(where: str, other: str, labels, predictions, thresholds, weights,
                         metrics_collections, updates_collections, name) -> tuple:
    """tp / (1e-7 + tp + other) per threshold, TF1's precision/recall_at_thresholds."""
    _g.check_name(name, where)
    limits = _threshold_list(thresholds, where)

    def ratio(c):
        return c["tp"] / (c["tp"] + c[other] + 1e-7)
    return _read_at_thresholds(where, labels, predictions, limits, weights, ("tp", other),
                               ratio, name, metrics_collections, updates_collections)


def precision_at_thresholds(labels, predictions, thresholds, weights=None,
                            metrics_collections=None, updates_collections=None,
                            name=None) -> tuple:
    """(precisions [len(thresholds)], update_op): per threshold, tp / (tp + fp) of
    predictions above it (tf.metrics.precision_at_thresholds; 1e-7 added below).

    Raises:
        as `true_positives_at_thresholds`.
    """
    return _ratio_at_thresholds("precision_at_thresholds", "fp", labels, predictions,
                                thresholds, weights, metrics_collections,
                                updates_collections, name)


def recall_at_thresholds(labels, predictions, thresholds, weights=None,
                         metrics_collections=None, updates_collections=None,
                         name=None) -> tuple:
    """(recalls [len(thresholds)], update_op): per threshold, tp / (tp + fn) of
    predictions above it (tf.metrics.recall_at_thresholds; 1e-7 added below).

    Raises:
        as `true_positives_at_thresholds`.
    """
    return _ratio_at_thresholds("recall_at_thresholds", "fn", labels, predictions,
                                thresholds, weights, metrics_collections,
                                updates_collections, name)


def _even_thresholds(num_thresholds, where: str, top: float) -> list:
    """TF1's evenly spaced thresholds: -1e-7, then (i + 1) / (n - 1) for i < n - 2,
    then `top`.

    Raises:
        ValueError: num_thresholds is below 2.
    """
    n = api._int_arg(num_thresholds, f"{where}: num_thresholds")
    if n < 2:
        raise ValueError(f"{where}: num_thresholds must be >= 2, got {n}")
    return [0.0 - 1e-7] + [(i + 1) * 1.0 / (n - 1) for i in range(n - 2)] + [top]


_SUMMATIONS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


def _interpolated_pr_auc(tp: Tensor, fp: Tensor, fn: Tensor, n: int) -> Tensor:
    """TF1's careful interpolation of the precision-recall curve (Davis & Goadrich
    2006): precision varies along each threshold interval as TP does linearly in the
    predicted positives P."""
    head, tail = slice(0, n - 1), slice(1, n)
    dtp = tp[head] - tp[tail]
    p = tp + fp
    slope = _safe_divide(dtp, api.maximum(p[head] - p[tail], 0.0))
    intercept = tp[tail] - slope * p[tail]
    both = api.logical_and(p[head] > 0.0, p[tail] > 0.0)
    ratio = api.where(both, _safe_divide(p[head], api.maximum(p[tail], 0.0)),
                      api.ones_like(p[tail]))
    return api.reduce_sum(_safe_divide(slope * (dtp + intercept * api.log(ratio)),
                                      api.maximum(tp[tail] + fn[tail], 0.0)))


def _area(tp, fn, tn, fp, n: int, curve: str, summation: str) -> Tensor:
    if curve == "PR" and summation == "careful_interpolation":
        return _interpolated_pr_auc(tp, fp, fn, n)
    eps = 1e-6
    recall = (tp + eps) / (tp + fn + eps)
    if curve == "ROC":
        x, y = fp / (fp + tn + eps), recall
    else:
        x, y = recall, (tp + eps) / (tp + fp + eps)
    head, tail = slice(0, n - 1), slice(1, n)
    if summation == "minoring":
        height = api.minimum(y[head], y[tail])
    elif summation == "majoring":
        height = api.maximum(y[head], y[tail])
    else:
        height = (y[head] + y[tail]) / 2.0
    return api.reduce_sum((x[head] - x[tail]) * height)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None) -> tuple:
    """(auc, update_op): the area under the ROC or precision-recall curve, from
    confusion counts at num_thresholds evenly spaced thresholds (or the given ones,
    sorted, plus -1e-7 and 1 + 1e-7), summed by the trapezoidal rule, its minoring or
    majoring variant, or (PR) careful interpolation (tf.metrics.auc).

    Raises:
        ValueError: curve is not "ROC"/"PR", summation_method unknown, or fewer than 2
            thresholds.
        ShapeError / TypeError / ExecutionError: as `true_positives_at_thresholds`.
    """
    where = "auc"
    _g.check_name(name, where)
    if curve not in ("ROC", "PR"):
        raise ValueError(f"auc: curve must be 'ROC' or 'PR', got {curve!r}")
    if summation_method not in _SUMMATIONS:
        raise ValueError(f"auc: summation_method must be one of {', '.join(_SUMMATIONS)}, "
                         f"got {summation_method!r}")
    if thresholds is not None:
        limits = [0.0 - 1e-7] + sorted(_threshold_list(thresholds, where)) + [1.0 + 1e-7]
    else:
        limits = _even_thresholds(num_thresholds, where, 1.0 + 1e-7)
    n = len(limits)

    def area(c):
        return _area(c["tp"], c["fn"], c["tn"], c["fp"], n, curve, summation_method)
    return _read_at_thresholds(where, labels, predictions, limits, weights,
                               ("tp", "fn", "tn", "fp"), area, name, metrics_collections,
                               updates_collections)


def _rate_in_range(value, what: str) -> float:
    v = api_extra._python_number(value, what)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{what} must be in [0, 1], got {v}")
    return v


def sensitivity_at_specificity(labels, predictions, specificity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None) -> tuple:
    """(sensitivity, update_op): the recall at the threshold whose specificity
    tn / (tn + fp) is closest to `specificity` (first such threshold), over
    num_thresholds evenly spaced ones (tf.metrics.sensitivity_at_specificity).

    Raises:
        ValueError: specificity is outside [0, 1] or num_thresholds below 2.
        ShapeError / TypeError / ExecutionError: as `true_positives_at_thresholds`.
    """
    where = "sensitivity_at_specificity"
    _g.check_name(name, where)
    target = _rate_in_range(specificity, f"{where}: specificity")
    limits = _even_thresholds(num_thresholds, where, 1.0 + 1e-7)

    def at(c):
        specificities = c["tn"] / (c["tn"] + c["fp"] + 1e-7)
        k = api.argmin(api.abs(specificities - target), 0)
        return c["tp"][k] / (c["tp"][k] + c["fn"][k] + 1e-7)
    return _read_at_thresholds(where, labels, predictions, limits, weights,
                               ("tp", "fn", "tn", "fp"), at, name, metrics_collections,
                               updates_collections)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None) -> tuple:
    """(specificity, update_op): the specificity at the threshold whose recall
    tp / (tp + fn) is closest to `sensitivity` (the last such threshold, as TF1), over
    num_thresholds evenly spaced ones (tf.metrics.specificity_at_sensitivity).

    Raises:
        ValueError: sensitivity is outside [0, 1] or num_thresholds below 2.
        ShapeError / TypeError / ExecutionError: as `true_positives_at_thresholds`.
    """
    where = "specificity_at_sensitivity"
    _g.check_name(name, where)
    target = _rate_in_range(sensitivity, f"{where}: sensitivity")
    limits = _even_thresholds(num_thresholds, where, 1.0 - 1e-7)

    def at(c):
        gap = api.abs(c["tp"] / (c["tp"] + c["fn"] + 1e-7) - target)
        closest = api.cast(api.equal(gap, api.reduce_min(gap)), DType.INT64)
        # argmax of the running count of closest thresholds: its last occurrence
        k = api.argmax(api_extra.cumsum(closest), 0)
        return c["tn"][k] / (c["tn"][k] + c["fp"][k] + 1e-7)
    return _read_at_thresholds(where, labels, predictions, limits, weights,
                               ("tp", "fn", "tn", "fp"), at, name, metrics_collections,
                               updates_collections)


# --------------------------------------------------------------------------- classes

def _flat_classes(labels, predictions, weights, where: str) -> tuple:
    """labels and predictions (int64) and weights (float32 or None) flattened to 1-D,
    as TF1 does for the per-class metrics.

    Raises:
        ShapeError: labels or predictions are not numbers, or their known sizes differ.
    """
    y = _g.convert_to_tensor(labels)
    p = _g.convert_to_tensor(predictions, graph=y.graph)
    for t, what in ((y, "labels"), (p, "predictions")):
        if t.dtype is DType.BOOL or t.dtype.numpy.kind not in "iuf":
            raise ShapeError(f"{where}: {what} must be class ids, got "
                             f"{t.dtype.short_name}")
    if y.shape is not None and p.shape is not None and None not in y.shape \
            and None not in p.shape and int(np.prod(y.shape)) != int(np.prod(p.shape)):
        raise ShapeError(f"{where}: labels {list(y.shape)} and predictions "
                         f"{list(p.shape)} must have the same size")
    flat = [api.reshape(api.cast(t, DType.INT64), [-1]) for t in (y, p)]
    w = None
    if weights is not None:
        w = api.reshape(_floats(weights, f"{where}: weights"), [-1])
    return flat[0], flat[1], w


def _classes(num_classes, where: str) -> int:
    n = api._int_arg(num_classes, f"{where}: num_classes")
    if n < 1:
        raise ValueError(f"{where}: num_classes must be >= 1, got {n}")
    return n


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None) -> tuple:
    """(mean_iou, update_op): the mean over classes (those seen in labels or
    predictions) of intersection over union, from a running float64 confusion matrix;
    update_op returns that matrix (tf.metrics.mean_iou).

    Raises:
        ValueError: num_classes is below 1.
        ShapeError: labels or predictions are not class ids, or their sizes differ.
        ExecutionError: (when update_op runs) a class id is outside [0, num_classes).
    """
    where = "mean_iou"
    _g.check_name(name, where)
    n = _classes(num_classes, where)
    y, p, w = _flat_classes(labels, predictions, weights, where)
    g = y.graph
    with g.name_scope(name or where):
        total = _totals("total_confusion_matrix", (n, n), g, np.float64)
        batch = api_linalg.confusion_matrix(y, p, n, dtype=DType.FLOAT64, weights=w)
        update = total.assign_add(batch)
        matrix = total.value()
        rows = api.cast(api.reduce_sum(matrix, 0), DType.FLOAT32)
        cols = api.cast(api.reduce_sum(matrix, 1), DType.FLOAT32)
        diagonal = api.cast(api_linalg.diag_part(matrix), DType.FLOAT32)
        union = rows + cols - diagonal
        seen = api.reduce_sum(api.cast(not_equal(union, 0.0), DType.FLOAT32))
        union = api.where(api.greater(union, 0.0), union, api.ones_like(union))
        value = api.where(api.greater(seen, 0.0),
                          api.reduce_sum(diagonal / union) / seen,
                          api.zeros_like(seen))
    return _finish(value, update, metrics_collections, updates_collections, where)


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None,
                            name=None) -> tuple:
    """(mean_accuracy, update_op): the mean over all num_classes classes of each
    class's weighted accuracy (0 for a class never seen in labels)
    (tf.metrics.mean_per_class_accuracy).

    Raises:
        ValueError: num_classes is below 1.
        ShapeError: labels or predictions are not class ids, or their sizes differ.
        ExecutionError: (when update_op runs) a label is outside [0, num_classes).
    """
    where = "mean_per_class_accuracy"
    _g.check_name(name, where)
    n = _classes(num_classes, where)
    y, p, w = _flat_classes(labels, predictions, weights, where)
    g = y.graph
    with g.name_scope(name or "mean_accuracy"):
        y = api_math._checked(y, api.logical_and(api.greater_equal(y, api.zeros_like(y)),
                                                 api.less(y, n)),
                              f"{where}: labels must be in [0, {n})")
        seen = api.ones_like(api.cast(y, DType.FLOAT32))
        right = api.cast(api.equal(p, y), DType.FLOAT32)
        if w is not None:
            right, seen = right * w, seen * w
        total, count = _totals("total", (n,), g), _totals("count", (n,), g)
        update_total = total.assign_add(api_extra.unsorted_segment_sum(seen, y, n))
        update_count = count.assign_add(api_extra.unsorted_segment_sum(right, y, n))
        value = api.reduce_mean(_safe_divide(count.value(),
                                            api.maximum(total.value(), 0.0)))
        update = _safe_divide(update_count, api.maximum(update_total, 0.0))
    return _finish(value, update, metrics_collections, updates_collections, where)


# --------------------------------------------------------------------------- means

def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None) -> tuple:
    """(distance, update_op): 1 - the running mean of sum(labels * predictions) along
    `dim` (unit-normalised inputs give the cosine distance)
    (tf.metrics.mean_cosine_distance).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: dim is not an int, or as `mean`.
    """
    where = "mean_cosine_distance"
    _g.check_name(name, where)
    axis = api._int_arg(dim, f"{where}: dim")
    y, p = _paired(labels, predictions, where)
    with y.graph.name_scope(name or where) as scope:
        radial = api.reduce_sum(p * y, [axis], keepdims=True)
        value, update = mean(radial, weights, None, None, scope)
        value, update = 1.0 - value, 1.0 - update
    return _finish(value, update, metrics_collections, updates_collections, where)


def mean_relative_error(labels, predictions, normalizer, weights=None,
                        metrics_collections=None, updates_collections=None,
                        name=None) -> tuple:
    """(error, update_op): the running mean of |labels - predictions| / normalizer, 0
    where normalizer is 0 (tf.metrics.mean_relative_error).

    Raises:
        ShapeError: labels, predictions and normalizer (or the weights) do not fit.
        TypeError: as `mean`.
    """
    where = "mean_relative_error"
    _g.check_name(name, where)
    y, p = _paired(labels, predictions, where)
    norm = _floats(normalizer, f"{where}: normalizer")
    p, norm = _squeezable_pair(p, norm)
    with y.graph.name_scope(name or where) as scope:
        zero = api.equal(norm, api.zeros_like(norm))
        safe = api.where(zero, api.ones_like(norm), norm)
        errors = api.where(zero, api.zeros_like(y), api.abs(y - p) / safe)
        return mean(errors, weights, metrics_collections, updates_collections, scope)


def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None) -> tuple:
    """(fraction, update_op): the weighted fraction of values below threshold
    (tf.metrics.percentage_below).

    Raises:
        TypeError: values are not numbers, or as `mean`.
        ShapeError: the weights do not fit.
    """
    where = "percentage_below"
    _g.check_name(name, where)
    v = _floats(values, f"{where}: values")
    limit = api_extra._python_number(threshold, f"{where}: threshold") \
        if not _g._is_symbolic(threshold) else api.cast(threshold, DType.FLOAT32)
    below = api.cast(api.less(v, limit), DType.FLOAT32)
    with v.graph.name_scope(name or "percentage_below_threshold") as scope:
        return mean(below, weights, metrics_collections, updates_collections, scope)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None) -> tuple:
    """(means, update_op): the elementwise running weighted mean of a tensor of fixed
    shape (tf.metrics.mean_tensor).

    Raises:
        ShapeError: values' shape is not fully known, or the weights do not fit.
        TypeError: as `mean`.
    """
    where = "mean_tensor"
    _g.check_name(name, where)
    v = _floats(values, f"{where}: values")
    if v.shape is None or None in v.shape:
        got = "an unknown rank" if v.shape is None else f"shape {list(v.shape)}"
        raise ShapeError(f"{where}: values need a fully known shape, got {got}")
    g = v.graph
    with g.name_scope(name or "mean"):
        count_each = api.ones_like(v)
        if weights is not None:
            w = _weights_like(weights, v, where)
            v, count_each = v * w, count_each * w
        total = _totals("total_tensor", tuple(v.shape), g)
        count = _totals("count_tensor", tuple(v.shape), g)
        update = _safe_divide(total.assign_add(v),
                             api.maximum(count.assign_add(count_each), 0.0))
        value = _safe_divide(total.value(), api.maximum(count.value(), 0.0))
    return _finish(value, update, metrics_collections, updates_collections, where)

"""TF1's tf.metrics as og.metrics: streaming metrics over many Session runs.

Each metric keeps its running totals in local variables (og.LOCAL_VARIABLES and
og.METRIC_VARIABLES, not GLOBAL_VARIABLES, so `og.global_variables_initializer()`
leaves them alone and `og.local_variables_initializer()` resets them, as in TF1) and
returns `(value, update_op)`: run `update_op` on each batch, then fetch `value` for the
metric over every batch since the last reset. A metric over zero weight is 0. Like
every onegraph variable, the totals start at 0 in a new Session, and a Saver without a
var_list checkpoints them too (TF1's default saves only global variables).

Shapes follow TF1's rules, on the static ranks: labels and predictions whose ranks
differ by one, the longer ending in a dim of 1 (or unknown), lose that dim ([N, 1]
labels with [N] predictions); weights of one rank more than the values lose their last
dim, of one rank less get a last dim of 1 (per-example weights [N] for [N, k] values),
and must then be a scalar or broadcast to the values (each dim 1 or the values' own).
Tensors of unknown rank are left as they are (TF1 decides at run time).
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import graph as _g
from .api_extra import not_equal
from .graph import LOCAL_VARIABLES, METRIC_VARIABLES, Tensor
from .losses import _check_weights_shape
from .variables import Variable


def _total(name: str, graph) -> Variable:
    """A float32 scalar running total, 0 at start, in the local and metric collections."""
    return Variable(np.float32(0), trainable=False, name=name, graph=graph,
                    collections=[LOCAL_VARIABLES, METRIC_VARIABLES])


def _collect(collections, value, what: str) -> None:
    if collections is None:
        return
    if isinstance(collections, (str, bytes)) or not hasattr(collections, "__iter__"):
        raise TypeError(f"{what} must be a list of collection names, got "
                        f"{type(collections).__name__}")
    for key in collections:
        value.graph.add_to_collection(key, value)


def _safe_ratio(numerator: Tensor, denominator: Tensor, name: str) -> Tensor:
    """numerator / denominator, 0 where denominator is 0 (TF1's _safe_div)."""
    empty = api.equal(denominator, 0.0)
    safe = api.where(empty, api.ones_like(denominator), denominator)
    return api.where(empty, api.zeros_like(numerator), numerator / safe, name=name)


def _floats(values, what: str) -> Tensor:
    t = _g.convert_to_tensor(values)
    if t.dtype is DType.BOOL or t.dtype.numpy.kind in "iuf":
        return t if t.dtype == DType.FLOAT32 else api.cast(t, DType.FLOAT32)
    raise TypeError(f"{what} must be numbers or bools, got {t.dtype.short_name}")


def _squeezable_weights(w: Tensor, values: Tensor) -> Tensor:
    """TF1's `_remove_squeezable_dimensions` for the weights of a metric: weights of
    one rank more than the values lose their last dim, of one rank less get a last dim
    of 1 (a scalar, or an unknown rank, stays as it is)."""
    if w.shape is None or values.shape is None or len(w.shape) == 0:
        return w
    if len(w.shape) - len(values.shape) == 1:
        return api.squeeze(w, [-1])
    if len(values.shape) - len(w.shape) == 1:
        return api.expand_dims(w, -1)
    return w


def _weights_like(weights, values: Tensor, where: str) -> Tensor:
    """The weights as float32 broadcast to values' shape (ones when None), after
    TF1's squeeze or expansion of their last dim (`_squeezable_weights`).

    Raises:
        ShapeError: weights cannot weight values (TF1's rule: a scalar, or values' rank
            with each dim 1 or values' own).
    """
    if weights is None:
        return api.ones_like(values)
    w = _squeezable_weights(_floats(weights, f"{where}: weights"), values)
    _check_weights_shape(w, values, where)
    return w * api.ones_like(values)


def mean(values, weights=None, metrics_collections=None, updates_collections=None,
         name=None) -> tuple:
    """(mean, update_op): the weighted mean of every value passed to update_op since
    the metrics' variables were last reset (tf.metrics.mean).

    Raises:
        TypeError: values are not numbers, a collections argument is not a list, or
            name is not a str.
        ShapeError: weights cannot weight values.
    """
    _g.check_name(name, "mean")
    values = _floats(values, "mean: values")
    g = values.graph
    with g.name_scope(name or "mean"):
        w = _weights_like(weights, values, "mean")
        total, count = _total("total", g), _total("count", g)
        update_total = total.assign_add(api.reduce_sum(values * w))
        update_count = count.assign_add(api.reduce_sum(w))
        value = _safe_ratio(total.value(), count.value(), "value")
        update = _safe_ratio(update_total, update_count, "update_op")
    _collect(metrics_collections, value, "mean: metrics_collections")
    _collect(updates_collections, update, "mean: updates_collections")
    return value, update


def _squeezable_pair(y: Tensor, p: Tensor) -> tuple:
    """TF1's confusion_matrix.remove_squeezable_dimensions (on static ranks): when
    predictions have one rank more than labels and their last dim is 1 (or unknown),
    it is squeezed away; likewise the labels' last dim when they have the one rank
    more ([N, 1] labels with [N] predictions)."""
    if p.shape is None or y.shape is None:
        return y, p
    diff = len(p.shape) - len(y.shape)
    if diff == 1 and p.shape[-1] in (1, None):
        p = api.squeeze(p, [-1])
    elif diff == -1 and y.shape[-1] in (1, None):
        y = api.squeeze(y, [-1])
    return y, p


def _paired(labels, predictions, where: str) -> tuple:
    """labels and predictions as float32 tensors of compatible static shapes, after
    TF1's squeeze of a trailing dim of 1 that only one of them has.

    Raises:
        ShapeError: their known shapes differ otherwise (TF1: ValueError).
    """
    p = _floats(predictions, f"{where}: predictions")
    y = _floats(labels, f"{where}: labels")
    y, p = _squeezable_pair(y, p)
    if p.shape is not None and y.shape is not None and (
            len(p.shape) != len(y.shape) or any(
                a is not None and b is not None and a != b for a, b in zip(p.shape, y.shape))):
        raise ShapeError(f"{where}: labels {list(y.shape)} and predictions "
                         f"{list(p.shape)} must have the same shape")
    return y, p


def _mean_of(where, per_element, labels, predictions, weights, metrics_collections,
             updates_collections, name) -> tuple:
    """The streaming `mean` of per_element(labels, predictions) in a scope named after
    the metric (the shared body of accuracy and the error metrics)."""
    _g.check_name(name, where)
    y, p = _paired(labels, predictions, where)
    with y.graph.name_scope(name or where) as scope:
        return mean(per_element(y, p), weights, metrics_collections, updates_collections,
                    scope)


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None) -> tuple:
    """(accuracy, update_op): the weighted fraction of predictions equal to labels
    (tf.metrics.accuracy).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: as `mean`.
    """
    return _mean_of("accuracy", lambda y, p: api.cast(api.equal(p, y), DType.FLOAT32),
                    labels, predictions, weights, metrics_collections, updates_collections,
                    name)


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None) -> tuple:
    """(mse, update_op): the weighted mean of (predictions - labels)^2
    (tf.metrics.mean_squared_error).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: as `mean`.
    """
    return _mean_of("mean_squared_error", lambda y, p: api.square(p - y), labels,
                    predictions, weights, metrics_collections, updates_collections, name)


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None) -> tuple:
    """(mae, update_op): the weighted mean of |predictions - labels|
    (tf.metrics.mean_absolute_error).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: as `mean`.
    """
    return _mean_of("mean_absolute_error", lambda y, p: api.abs(p - y), labels,
                    predictions, weights, metrics_collections, updates_collections, name)


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None) -> tuple:
    """(rmse, update_op): the square root of the streaming mean squared error
    (tf.metrics.root_mean_squared_error).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: as `mean`.
    """
    _g.check_name(name, "root_mean_squared_error")
    y, p = _paired(labels, predictions, "root_mean_squared_error")
    with y.graph.name_scope(name or "root_mean_squared_error"):
        mse, update = mean_squared_error(y, p, weights)
        value, update = api.sqrt(mse), api.sqrt(update)
    _collect(metrics_collections, value, "root_mean_squared_error: metrics_collections")
    _collect(updates_collections, update, "root_mean_squared_error: updates_collections")
    return value, update


def _counted(where, labels, predictions, weights, kinds, metrics_collections,
             updates_collections, name, ratio) -> tuple:
    """A ratio of weighted counts of true/false positives/negatives of bool labels and
    predictions: `kinds` names the counters ("tp", "fp", "fn"), `ratio(counts)` gives
    (numerator, denominator) from them."""
    _g.check_name(name, where)
    y, p = _paired(labels, predictions, where)
    g = y.graph
    with g.name_scope(name or where):
        truth, said = not_equal(y, 0.0), not_equal(p, 0.0)
        w = _weights_like(weights, p, where)
        masks = {"tp": api.logical_and(truth, said),
                 "fp": api.logical_and(api.logical_not(truth), said),
                 "fn": api.logical_and(truth, api.logical_not(said))}
        counters, updates = {}, {}
        for kind in kinds:
            counter = _total({"tp": "true_positives", "fp": "false_positives",
                              "fn": "false_negatives"}[kind], g)
            counters[kind] = counter.value()
            updates[kind] = counter.assign_add(
                api.reduce_sum(api.cast(masks[kind], DType.FLOAT32) * w))
        value = _safe_ratio(*ratio(counters), "value")
        update = _safe_ratio(*ratio(updates), "update_op")
    _collect(metrics_collections, value, f"{where}: metrics_collections")
    _collect(updates_collections, update, f"{where}: updates_collections")
    return value, update


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None) -> tuple:
    """(precision, update_op): true positives / (true + false positives) of bool (or
    0/1) labels and predictions, weighted (tf.metrics.precision).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: as `mean`.
    """
    return _counted("precision", labels, predictions, weights, ("tp", "fp"),
                    metrics_collections, updates_collections, name,
                    lambda c: (c["tp"], c["tp"] + c["fp"]))


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None) -> tuple:
    """(recall, update_op): true positives / (true positives + false negatives) of bool
    (or 0/1) labels and predictions, weighted (tf.metrics.recall).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: as `mean`.
    """
    return _counted("recall", labels, predictions, weights, ("tp", "fn"),
                    metrics_collections, updates_collections, name,
                    lambda c: (c["tp"], c["tp"] + c["fn"]))


__all__ = ["accuracy", "mean", "mean_absolute_error", "mean_squared_error", "precision",
           "recall", "root_mean_squared_error"]



# The counts at thresholds, auc, the per-class and tensor means and the top-k metrics
# live in their own modules; og.metrics is this module, so they are re-exported here
# (imported last: they use the helpers above).
from .metrics_at_k import *  # noqa: E402,F401,F403
from .metrics_at_k import __all__ as _at_k_all  # noqa: E402
from .metrics_more import *  # noqa: E402,F401,F403
from .metrics_more import __all__ as _more_all  # noqa: E402

__all__ = sorted(__all__ + _more_all + _at_k_all)

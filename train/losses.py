"""TF1's tf.losses as og.losses: loss functions that weight their per-element losses,
reduce them to one value and add it to the LOSSES collection.

Every function takes TF1's arguments in TF1's order: ``weights`` (a scalar, or a
tensor of the losses' rank whose dims are 1 or the losses' own), ``scope`` (the name
scope of the ops, the function's name when None), ``loss_collection`` (None adds the
loss to no collection) and ``reduction`` (a `Reduction` key; by default the weighted
sum divided by the number of non-zero weights, as in TF1). `get_total_loss` adds up
the collected losses and, unless told otherwise, the REGULARIZATION_LOSSES.

One difference from TF1: TF1 computes every loss in float32 (a float64 loss is
rounded to float32 and back); here float64 losses stay float64. As in TF1, the losses
of predictions against labels (mean_squared_error, huber_loss, ...) compute integer,
float16 and bfloat16 predictions in float32 and return float32, and the cross-entropies
reduce float16/bfloat16 losses in float32 and return their own dtype.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_extra
from . import graph as _g
from .graph import LOSSES, REGULARIZATION_LOSSES, Tensor
from .nn import sigmoid_cross_entropy_with_logits


class Reduction:
    """How a loss function reduces its weighted per-element losses (TF1's keys).

    NONE keeps them; SUM adds them up; MEAN divides the sum by the sum of the weights;
    SUM_OVER_BATCH_SIZE by the number of losses; SUM_BY_NONZERO_WEIGHTS (the default,
    also spelled SUM_OVER_NONZERO_WEIGHTS) by the number of losses whose weight is not
    0. A division by 0 gives 0.
    """

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple:
        """Every reduction key."""
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key) -> None:
        """Raises ValueError (TF1's error) unless key is one of `all()`."""
        if not isinstance(key, str) or key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key!r}; expected one of "
                             f"{sorted(set(cls.all()))}")


def _name_scope(graph, scope, default: str):
    _g.check_name(scope, f"{default}: scope")
    return graph.name_scope(scope or default)


def _float(x, what: str) -> Tensor:
    """x as a tensor, checked to hold floats."""
    t = _g.convert_to_tensor(x)
    if t.dtype not in _FLOATS:
        raise TypeError(f"{what} must be a float tensor, got {t.dtype.name.lower()}")
    return t


_FLOATS = (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64)


def _is_number(value) -> bool:
    """A Python or numpy real number (not a bool)."""
    return not isinstance(value, (bool, np.bool_)) and isinstance(
        value, (int, float, np.integer, np.floating))


def _numeric_predictions(t: Tensor, what: str) -> None:
    if t.dtype not in _FLOATS and t.dtype.numpy.kind not in "iu":
        raise TypeError(f"{what} must be a numeric tensor, got {t.dtype.name.lower()}")


def _like(x, ref: Tensor, what: str) -> Tensor:
    """x as a tensor of ref's dtype whose static shape is compatible with ref's.

    Raises:
        ShapeError: both shapes are known somewhere and differ (TF1: ValueError).
    """
    t = _g.convert_to_tensor(x, ref.dtype, ref.graph)
    if t.dtype != ref.dtype:
        t = api.cast(t, ref.dtype)
    _check_compatible(t.shape, ref.shape, what)
    return t


def _check_compatible(a, b, what: str) -> None:
    if a is None or b is None:
        return
    if len(a) != len(b) or any(x is not None and y is not None and x != y
                               for x, y in zip(a, b)):
        raise ShapeError(f"{what}: shapes {_shape_text(a)} and {_shape_text(b)} are "
                         f"incompatible")


def _shape_text(shape) -> str:
    if shape is None:
        return "of unknown rank"
    dims = ", ".join("?" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def _check_weights_shape(weights: Tensor, losses: Tensor, where: str) -> None:
    """TF1's rule: weights are a scalar, or have the losses' rank with each dim 1 or
    the losses' own.

    Raises:
        ShapeError: the static shapes break the rule.
    """
    ws, ls = weights.shape, losses.shape
    if ws is None or ls is None or len(ws) == 0:
        return
    if len(ws) != len(ls) or any(w is not None and w != 1 and d is not None and w != d
                                 for w, d in zip(ws, ls)):
        raise ShapeError(f"{where}: weights {_shape_text(ws)} cannot weight losses "
                         f"{_shape_text(ls)}: they must be a scalar or of the losses' "
                         f"rank with each dim 1 or the losses' own")


def _safe_divide(total: Tensor, count: Tensor) -> Tensor:
    """total / count, 0 where count is 0 (TF's div_no_nan), with a finite gradient."""
    empty = api.equal(count, 0.0)
    safe = api.where(empty, api.ones_like(count), count)
    return api.where(empty, api.zeros_like(total), total / safe)


def _count(losses: Tensor, dtype) -> Tensor:
    return api.cast(api_extra.size(losses, out_type=DType.INT64), dtype)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """The per-element `losses` times `weights`, reduced by `reduction`, in the losses'
    dtype; added to `loss_collection` unless it is None.

    Raises:
        TypeError: losses are not floats, or scope is not a str.
        ValueError: reduction is not a Reduction key.
        ShapeError: weights cannot weight the losses (see the module docstring).
    """
    Reduction.validate(reduction)
    losses = _float(losses, "compute_weighted_loss: losses")
    g = losses.graph
    with _name_scope(g, scope, "weighted_loss"):
        wide = losses.dtype in (DType.FLOAT16, DType.BFLOAT16)
        work = api.cast(losses, DType.FLOAT32) if wide else losses
        w = _g.convert_to_tensor(weights, work.dtype, g)
        if w.dtype != work.dtype:
            w = api.cast(w, work.dtype)
        _check_weights_shape(w, work, "compute_weighted_loss")
        weighted = work * w
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = api.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_divide(loss, api.reduce_sum(api.ones_like(work) * w))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_divide(loss, _present(work, weights, w))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_divide(loss, _count(work, work.dtype))
        if wide:
            loss = api.cast(loss, losses.dtype)
        loss = api.identity(loss, name="value")
    if loss_collection is not None:
        g.add_to_collection(loss_collection, loss)
    return loss


def _present(losses: Tensor, weights, w: Tensor) -> Tensor:
    """How many losses have a non-zero weight (all of them for a non-zero number)."""
    if isinstance(weights, (int, float)) and not isinstance(weights, bool) and weights != 0:
        return _count(losses, losses.dtype)
    nonzero = api.where(api.equal(w, 0.0), api.zeros_like(w), api.ones_like(w))
    return api.reduce_sum(api.ones_like(losses) * nonzero)


def _pairwise(name, labels, predictions, weights, scope, loss_collection, reduction,
              per_element, default_scope=None, to_float=True):
    """Shared body of the losses of predictions against same-shaped labels. With
    to_float, as TF1 (`math_ops.to_float`), integer, float16 and bfloat16 predictions
    and labels are computed in float32 (float64 ones stay float64, see the module
    docstring); without, predictions must be floats."""
    Reduction.validate(reduction)
    predictions = _g.convert_to_tensor(predictions)
    if not to_float:
        _float(predictions, f"{name}: logits")
    elif predictions.dtype not in (DType.FLOAT32, DType.FLOAT64):
        _numeric_predictions(predictions, f"{name}: predictions")
        predictions = api.cast(predictions, DType.FLOAT32)
    g = predictions.graph
    with _name_scope(g, scope, default_scope or name) as opened:
        labels = _like(labels, predictions, name)
        losses = per_element(labels, predictions)
        # the opened scope again (TF1's code passes it on), so the loss is "<scope>/value"
        return compute_weighted_loss(losses, weights, opened, loss_collection, reduction)


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted |predictions - labels| (TF1's tf.losses.absolute_difference).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: predictions are not floats.
        ValueError: reduction is not a Reduction key.
    """
    return _pairwise("absolute_difference", labels, predictions, weights, scope,
                     loss_collection, reduction, lambda y, p: api.abs(p - y))


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted (predictions - labels)^2 (TF1's tf.losses.mean_squared_error).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: predictions are not floats.
        ValueError: reduction is not a Reduction key.
    """
    return _pairwise("mean_squared_error", labels, predictions, weights, scope,
                     loss_collection, reduction, lambda y, p: api.square(p - y))


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted Huber loss: 0.5 e^2 where |e| <= delta, delta (|e| - 0.5 delta) beyond,
    e = predictions - labels (TF1's tf.losses.huber_loss).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: predictions are not floats.
        ValueError: reduction is not a Reduction key, or delta is not positive.
    """
    if _is_number(delta) and not delta > 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta!r}")

    def huber(y, p):
        error = api.abs(p - y)
        quadratic = api.minimum(error, delta)
        return 0.5 * api.square(quadratic) + delta * (error - quadratic)

    return _pairwise("huber_loss", labels, predictions, weights, scope, loss_collection,
                     reduction, huber)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted -y log(p + eps) - (1 - y) log(1 - p + eps) of probabilities p
    (TF1's tf.losses.log_loss).

    Raises:
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: predictions are not floats.
        ValueError: reduction is not a Reduction key.
    """
    def logistic(y, p):
        return -y * api.log(p + epsilon) - (1.0 - y) * api.log(1.0 - p + epsilon)

    return _pairwise("log_loss", labels, predictions, weights, scope, loss_collection,
                     reduction, logistic)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted max(0, 1 - (2y - 1) logits) of labels y in {0, 1}
    (TF1's tf.losses.hinge_loss).

    Raises:
        ShapeError: labels and logits (or the weights) do not fit.
        TypeError: logits are not floats.
        ValueError: reduction is not a Reduction key.
    """
    return _pairwise("hinge_loss", labels, logits, weights, scope, loss_collection,
                     reduction, lambda y, x: api.relu(1.0 - (2.0 * y - 1.0) * x))


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
                    dim=None) -> Tensor:
    """Weighted 1 - sum(labels * predictions) over `axis` (kept as a dim of 1), for
    unit-normalised labels and predictions (TF1's tf.losses.cosine_distance; `dim` is
    its deprecated name for axis).

    Raises:
        ValueError: neither or both of axis and dim are given, or reduction is not a
            Reduction key.
        ShapeError: labels and predictions (or the weights) do not fit.
        TypeError: predictions are not floats, or axis is not an int.
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("cosine_distance: give axis or its old name dim, not both")
        axis = dim
    if axis is None:
        raise ValueError("cosine_distance: you must specify 'axis'")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"cosine_distance: axis must be an int, got {axis!r:.60}")
    return _pairwise(
        "cosine_distance", labels, predictions, weights, scope, loss_collection, reduction,
        lambda y, p: 1.0 - api.reduce_sum(p * y, axis=axis, keepdims=True),
        default_scope="cosine_distance_loss")


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted sigmoid cross-entropy of logits against labels in [0, 1] per element;
    label_smoothing s moves labels to y (1 - s) + s / 2
    (TF1's tf.losses.sigmoid_cross_entropy).

    Raises:
        ShapeError: labels and logits (or the weights) do not fit.
        TypeError: logits are not floats.
        ValueError: reduction is not a Reduction key, or label_smoothing is outside
            [0, 1].
    """
    smoothing = _smoothing(label_smoothing, "sigmoid_cross_entropy")

    def xent(y, x):
        if smoothing:
            y = y * (1.0 - smoothing) + 0.5 * smoothing
        return sigmoid_cross_entropy_with_logits(labels=y, logits=x)

    return _pairwise("sigmoid_cross_entropy", multi_class_labels, logits, weights, scope,
                     loss_collection, reduction, xent,
                     default_scope="sigmoid_cross_entropy_loss", to_float=False)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=LOSSES) -> Tensor:
    """TF1's tf.losses.mean_pairwise_squared_error: for each example (axis 0), the mean
    over pairs of its elements of ((p_i - p_j) - (y_i - y_j))^2, computed as TF1 does
    from d = predictions - labels: 2 sum(d^2) / (n - 1) - 2 (sum d)^2 / (n (n - 1))
    with n the example's elements of non-zero weight, times the weights and summed
    (in float32, as TF1 casts everything). An example's rank must be known.

    Raises:
        ShapeError: labels and predictions are not of one shape, or their rank is
            unknown or 0.
        TypeError: predictions are not numbers, or scope is not a str.
    """
    predictions = _g.convert_to_tensor(predictions)
    _numeric_predictions(predictions, "mean_pairwise_squared_error: predictions")
    g = predictions.graph
    with _name_scope(g, scope, "mean_pairwise_squared_error"):
        p = api.cast(predictions, DType.FLOAT32)
        y = api.cast(_g.convert_to_tensor(labels, graph=g), DType.FLOAT32)
        w = api.cast(_g.convert_to_tensor(weights, graph=g), DType.FLOAT32)
        _check_compatible(y.shape, p.shape, "mean_pairwise_squared_error")
        if p.shape is None or len(p.shape) == 0:
            raise ShapeError(f"mean_pairwise_squared_error: predictions need a known rank "
                             f"of at least 1 (axis 0 is the batch), got shape "
                             f"{_shape_text(p.shape)}")
        d = p - y
        axes = list(range(1, len(p.shape)))

        def per_example(x):
            return api.reduce_sum(x, axis=axes, keepdims=True) if axes else x

        present = api.where(api.equal(w, 0.0), api.zeros_like(w), api.ones_like(w))
        n = per_example(present * api.ones_like(d))
        zero = api.zeros_like(n)
        term1 = 2.0 * _safe_divide(per_example(api.square(d)), api.maximum(n - 1.0, zero))
        term2 = 2.0 * _safe_divide(api.square(per_example(d)),
                                   api.maximum(n * (n - 1.0), zero))
        loss = api.reduce_sum((term1 - term2) * w)
        loss = api.where(api.reduce_sum(n) > 0.0, loss, api.zeros_like(loss))
        loss = api.identity(loss, name="value")
    if loss_collection is not None:
        g.add_to_collection(loss_collection, loss)
    return loss


def _smoothing(value, where: str) -> float:
    if not _is_number(value) or not 0 <= value <= 1:
        raise ValueError(f"{where}: label_smoothing must be a number in [0, 1], "
                         f"got {value!r:.60}")
    return float(value)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted softmax cross-entropy per example of logits (..., classes) against
    label distributions of the same shape; label_smoothing s moves them to
    y (1 - s) + s / classes. No gradient reaches the labels
    (TF1's tf.losses.softmax_cross_entropy).

    Raises:
        ShapeError: labels and logits (or the weights) do not fit.
        TypeError: logits are not floats.
        ValueError: reduction is not a Reduction key, or label_smoothing is outside
            [0, 1].
    """
    Reduction.validate(reduction)
    smoothing = _smoothing(label_smoothing, "softmax_cross_entropy")
    logits = _float(logits, "softmax_cross_entropy: logits")
    g = logits.graph
    with _name_scope(g, scope, "softmax_cross_entropy_loss") as opened:
        labels = _like(onehot_labels, logits, "softmax_cross_entropy")
        if smoothing:
            classes = api.cast(api.shape(labels)[-1], labels.dtype)
            labels = labels * (1.0 - smoothing) + smoothing / classes
        labels = api.stop_gradient(labels)
        losses = g.op("SoftmaxCrossEntropyWithLogits", [logits, labels],
                      name="xentropy")[0]
        return compute_weighted_loss(losses, weights, opened, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted softmax cross-entropy per example of logits (..., classes) against
    integer class labels (...) (TF1's tf.losses.sparse_softmax_cross_entropy). As in
    TF1, labels of the logits' rank with a last dim of 1 are squeezed, and so are
    weights with one more dim than the labels ending in 1.

    Raises:
        ShapeError: labels and logits (or the weights) do not fit.
        TypeError: logits are not floats.
        ValueError: reduction is not a Reduction key.
    """
    Reduction.validate(reduction)
    logits = _float(logits, "sparse_softmax_cross_entropy: logits")
    g = logits.graph
    with _name_scope(g, scope, "sparse_softmax_cross_entropy_loss") as opened:
        ids = _g.integer_tensor(labels, "sparse_softmax_cross_entropy: labels", g)
        if _squeezable(ids.shape, logits.shape):
            ids = api.squeeze(ids, axis=[-1])
        if ids.shape is not None and logits.shape is not None:
            _check_compatible(ids.shape, logits.shape[:-1],
                              "sparse_softmax_cross_entropy: labels and logits[:-1]")
        if not isinstance(weights, (int, float)):
            weights = _g.convert_to_tensor(weights, logits.dtype, g)
            if _squeezable(weights.shape, ids.shape, extra=1):
                weights = api.squeeze(weights, axis=[-1])
        losses = g.op("SparseSoftmaxCrossEntropyWithLogits", [logits, ids],
                      name="xentropy")[0]
        return compute_weighted_loss(losses, weights, opened, loss_collection, reduction)


def _squeezable(shape, ref, extra=0) -> bool:
    """Whether `shape` is `ref`'s rank (+ extra) with a last dim of 1 or unknown (TF1's
    remove_squeezable_dimensions; an unknown dim that is not 1 fails at run time)."""
    return shape is not None and ref is not None and len(shape) == len(ref) + extra \
        and len(shape) > 0 and shape[-1] in (1, None)   # TF1: compatible with 1


def add_loss(loss, loss_collection=LOSSES) -> None:
    """Add a loss made elsewhere to `loss_collection` (nothing when it is None)."""
    if loss_collection is not None:
        t = _g.convert_to_tensor(loss)
        t.graph.add_to_collection(loss_collection, t)


def get_losses(scope=None, loss_collection=LOSSES) -> list:
    """The losses in `loss_collection` of the default graph, those whose names match
    the regular expression `scope` from their start when it is given."""
    return api.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None) -> list:
    """The REGULARIZATION_LOSSES of the default graph (filtered by `scope` as
    get_losses)."""
    return api.get_collection(REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name: str = "total_regularization_loss") -> Tensor:
    """The sum of the regularization losses, or a float32 0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return api.add_n(losses, name=name)
    return api.constant(0.0, dtype=DType.FLOAT32, name=name)


def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss",
                   scope=None) -> Tensor:
    """The sum of the collected losses, and of the regularization losses unless told
    otherwise (TF1's tf.losses.get_total_loss).

    Raises:
        ValueError: there are no losses to add up (TF1's error).
    """
    losses = get_losses(scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope)
    if not losses:
        raise ValueError("get_total_loss: no losses in the LOSSES collection (nor "
                         "regularization losses) to add up")
    return api.add_n(losses, name=name)


__all__ = [
    "Reduction", "absolute_difference", "add_loss", "compute_weighted_loss",
    "cosine_distance", "get_losses", "get_regularization_loss",
    "get_regularization_losses", "get_total_loss", "hinge_loss", "huber_loss",
    "log_loss", "mean_pairwise_squared_error", "mean_squared_error",
    "sigmoid_cross_entropy", "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]

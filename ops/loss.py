"""Operators: loss family (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss).

Both take class scores shaped (N, C, D1, ..., Dk) and integer targets shaped
(N, D1, ..., Dk). A target equal to `ignore_index` contributes nothing and, for
reduction "mean", is not counted in the denominator (the sum of the applied class
weights, or the number of counted targets without weights). Losses keep the dtype of
the scores; they are computed in float64 (float32 for exotic floats) and rounded once.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .registry import NUM_OUTPUTS, TensorInfo, define

_REDUCTIONS = ("none", "sum", "mean")


def _wide(x):
    return x.astype(np.float64)


def _check(op, scores, target, weight, ignore_index, names):
    """The loss ops' inputs against each other, before any arithmetic: scores (N, C,
    D1, ..., Dk), integer targets (N, D1, ..., Dk) each in [0, C) unless it is
    ignore_index, and the optional weight a float tensor of shape (C,), one per class
    (the spec's "1D Tensor assigned weight to each of the classes"). `names` are the op's
    names of its three inputs, for the messages.

    Raises:
        ShapeError: naming the input that does not fit, its shape or dtype, and (for a
            target out of range) the first such value, where it is and ignore_index.
    """
    if scores.ndim < 2:
        raise ShapeError(f"{op}: input '{names[0]}' must be (N, C, ...), got shape "
                         f"{list(scores.shape)}")
    n, c = scores.shape[:2]
    if target.dtype.kind not in "iu":
        raise ShapeError(f"{op}: input '{names[1]}' must hold integer class indices, got "
                         f"{target.dtype}")
    if target.shape != (n,) + scores.shape[2:]:
        raise ShapeError(f"{op}: input '{names[1]}' has shape {list(target.shape)}; for "
                         f"'{names[0]}' of shape {list(scores.shape)} it must be "
                         f"{[n] + list(scores.shape[2:])}")
    bad = (target < 0) | (target >= c)
    if ignore_index is not None:
        bad &= target != ignore_index
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ShapeError(f"{op}: input '{names[1]}' holds {int(target[where])} at "
                         f"{list(where)}, outside the classes [0, {c}) and not the "
                         f"ignore_index ({'none' if ignore_index is None else ignore_index})")
    if weight is None:
        return
    weight = np.asarray(weight)
    if weight.dtype.kind != "f":
        raise ShapeError(f"{op}: input '{names[2]}' must be a float tensor (one weight per "
                         f"class), got {weight.dtype}")
    if weight.shape != (c,):
        raise ShapeError(f"{op}: input '{names[2]}' must have shape [{c}], one weight per "
                         f"class of '{names[0]}' (shape {list(scores.shape)}); got "
                         f"{list(weight.shape)}")


def _nll(logp, target, weight, ignore_index, reduction, op):
    """Negative log likelihood of `target` under log-probabilities `logp` (float64);
    the inputs are checked (`_check`)."""
    if reduction not in _REDUCTIONS:
        raise OpAttributeError(f"{op}: reduction must be one of {_REDUCTIONS}, "
                               f"got {reduction!r}")
    target = target.astype(np.int64)
    keep = np.ones(target.shape, dtype=bool) if ignore_index is None \
        else target != ignore_index
    safe = np.where(keep, target, 0)
    picked = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    w = np.where(keep, 1.0, 0.0)
    if weight is not None:
        w = w * _wide(np.asarray(weight))[safe]
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.asarray(loss.sum())
    with np.errstate(all="ignore"):
        return np.asarray(loss.sum() / w.sum())


def _sce_kernel(inputs, attrs, ctx):
    """Log-softmax over axis 1, then the negative log likelihood of the labels.

    Raises:
        OpAttributeError: an unknown reduction.
        ShapeError: the inputs do not fit (`_check`), or the scores have no class
            (C = 0) to take a softmax over.
    """
    scores = np.asarray(inputs[0])
    labels = np.asarray(inputs[1])
    weights = inputs[2] if len(inputs) > 2 else None
    _check("SoftmaxCrossEntropyLoss", scores, labels, weights, attrs["ignore_index"],
           ("scores", "labels", "weights"))
    if scores.shape[1] == 0 and labels.size:  # every label ignored: nothing to softmax
        raise ShapeError(f"SoftmaxCrossEntropyLoss: input 'scores' of shape "
                         f"{list(scores.shape)} has no classes to take a softmax over")
    x = _wide(scores)
    shifted = x - x.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = _nll(logp, labels, weights, attrs["ignore_index"], attrs["reduction"],
                "SoftmaxCrossEntropyLoss")
    out = (loss.astype(scores.dtype),)
    if attrs.get(NUM_OUTPUTS, 1) > 1:
        out += (logp.astype(scores.dtype),)
    return out


def _nll_kernel(inputs, attrs, ctx):
    """Negative log likelihood of `target` given log-probabilities `input`.

    Raises:
        OpAttributeError: an unknown reduction.
        ShapeError: the inputs do not fit (`_check`).
    """
    x = np.asarray(inputs[0])
    weight = inputs[2] if len(inputs) > 2 else None
    _check("NegativeLogLikelihoodLoss", x, np.asarray(inputs[1]), weight,
           attrs["ignore_index"], ("input", "target", "weight"))
    loss = _nll(_wide(x), np.asarray(inputs[1]), weight, attrs["ignore_index"],
                attrs["reduction"], "NegativeLogLikelihoodLoss")
    return (loss.astype(x.dtype),)


def _loss_shape(attrs, inputs):
    x, t = inputs[0], inputs[1]
    if attrs["reduction"] != "none":
        return ()
    if t is not None and t.shape is not None:
        return t.shape
    if x.shape is not None:
        return (x.shape[0],) + x.shape[2:]
    return None


def _check_weight_info(op, inputs, names):
    """The weight input's known dtype is a float one and its known shape (C,) for the
    scores' known C (see `_check`).

    Raises:
        ShapeError: naming the weight input and its dtype or shape.
    """
    x = inputs[0]
    w = inputs[2] if len(inputs) > 2 else None
    if w is None:
        return
    if w.dtype is not None and np.dtype(w.dtype).kind != "f":
        raise ShapeError(f"{op}: input '{names[2]}' must be a float tensor (one weight per "
                         f"class), got {np.dtype(w.dtype)}")
    if w.shape is None:
        return
    c = x.shape[1] if x.shape is not None and len(x.shape) > 1 else None
    if len(w.shape) != 1 or (c is not None and w.shape[0] not in (None, c)):
        want = "C" if c is None else c
        raise ShapeError(f"{op}: input '{names[2]}' must have shape [{want}], one weight per "
                         f"class of '{names[0]}'; got "
                         f"{[d if d is not None else '?' for d in w.shape]}")


def _sce_infer(attrs, inputs):
    _check_weight_info("SoftmaxCrossEntropyLoss", inputs, ("scores", "labels", "weights"))
    out = [TensorInfo(inputs[0].dtype, _loss_shape(attrs, inputs))]
    return out + [TensorInfo(inputs[0].dtype, inputs[0].shape)]


def _nll_infer(attrs, inputs):
    _check_weight_info("NegativeLogLikelihoodLoss", inputs, ("input", "target", "weight"))
    return [TensorInfo(inputs[0].dtype, _loss_shape(attrs, inputs))]


_ATTRS = [("ignore_index", "int", None), ("reduction", "string", "mean")]

OPS = (
    define("NegativeLogLikelihoodLoss", ["input", "target", "weight?"], ["loss"],
           _nll_kernel, attrs=_ATTRS, infer=_nll_infer, since_version=22),
    define("SoftmaxCrossEntropyLoss", ["scores", "labels", "weights?"],
           ["output", "log_prob?"], _sce_kernel, attrs=_ATTRS, infer=_sce_infer,
           since_version=13),
)

KNOWN_FAILURES: dict[str, str] = {}

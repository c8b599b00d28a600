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


def _nll(logp, target, weight, ignore_index, reduction, op):
    """Negative log likelihood of `target` under log-probabilities `logp` (float64)."""
    if reduction not in _REDUCTIONS:
        raise OpAttributeError(f"{op}: reduction must be one of {_REDUCTIONS}, "
                               f"got {reduction!r}")
    if logp.ndim < 2:
        raise ShapeError(f"{op}: input must be (N, C, ...), got shape {logp.shape}")
    n, c = logp.shape[:2]
    if target.shape != (n,) + logp.shape[2:]:
        raise ShapeError(f"{op}: target shape {target.shape} does not match input "
                         f"{logp.shape} (want {(n,) + logp.shape[2:]})")
    target = target.astype(np.int64)
    keep = np.ones(target.shape, dtype=bool) if ignore_index is None \
        else target != ignore_index
    safe = np.where(keep, target, 0)
    if np.any((safe < 0) | (safe >= c)):
        raise ShapeError(f"{op}: target values must be in [0, {c}) or the ignore_index")
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
    """Log-softmax over axis 1, then the negative log likelihood of the labels."""
    scores = np.asarray(inputs[0])
    labels = np.asarray(inputs[1])
    weights = inputs[2] if len(inputs) > 2 else None
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
    """Negative log likelihood of `target` given log-probabilities `input`."""
    x = np.asarray(inputs[0])
    weight = inputs[2] if len(inputs) > 2 else None
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


def _sce_infer(attrs, inputs):
    out = [TensorInfo(inputs[0].dtype, _loss_shape(attrs, inputs))]
    return out + [TensorInfo(inputs[0].dtype, inputs[0].shape)]


def _nll_infer(attrs, inputs):
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

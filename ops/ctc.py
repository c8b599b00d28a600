"""Operators: the connectionist temporal classification loss (the `onegraph` domain).

CTCLoss(logits (T, B, C) time-major, labels (B, L) int, label_length (B,),
logit_length (B,)) -> (loss (B,), grad (T, B, C)). Example b's loss is
-log p(labels[b, :label_length[b]] | logits[:logit_length[b], b]), the sum over every
alignment (a path of one class per time step that reduces to the labels once
repeated classes are merged, if merge_repeated, and blanks dropped) of the product of
its softmax probabilities. It is computed by the forward-backward (alpha / beta)
recursions over the extended label sequence (a blank before, between and after the
labels, 2 L + 1 states) in log space, vectorised over the batch and the states with a
loop over time (Graves et al. 2006; TF's ctc_loss_calculator and ctc_loss_dense).

The second output is d loss / d logits as TF computes it from the same recursions:
softmax(logits) minus each class's posterior occupancy, zero after logit_length. The
gradient rule scales it by the incoming gradient of the loss (TF does the same; the
logits' gradient is not differentiated again).

An example whose labels cannot fit its time steps has loss +inf (TF's ctc_loss_v2) and
a zero gradient; with `ignore_longer` its loss is 0 too (TF1's
ignore_longer_outputs_than_inputs), and with `check_length` (TF1's ctc_loss without
it) the kernel raises instead.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from .registry import TensorInfo, define

DOMAIN = "onegraph"


def _logsumexp(*terms: np.ndarray) -> np.ndarray:
    """Elementwise log(sum(exp(terms))), -inf where every term is -inf."""
    stack = np.stack(terms)
    top = stack.max(axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(stack - safe).sum(axis=0))


def _check(logits, labels, label_length, logit_length) -> None:
    if logits.ndim != 3:
        raise ShapeError(f"CTCLoss: logits must be 3-D (time, batch, classes), got shape "
                         f"{list(logits.shape)}")
    t, b, _ = logits.shape
    if labels.ndim != 2 or labels.shape[0] != b:
        raise ShapeError(f"CTCLoss: labels must be (batch={b}, max_label_length), got "
                         f"shape {list(labels.shape)}")
    for what, v in (("label_length", label_length), ("logit_length", logit_length)):
        if v.shape != (b,):
            raise ShapeError(f"CTCLoss: {what} must be (batch={b},), got shape "
                             f"{list(v.shape)}")
    if np.any(label_length < 0) or np.any(label_length > labels.shape[1]):
        raise ShapeError(f"CTCLoss: label_length {label_length.tolist()} must lie in "
                         f"[0, {labels.shape[1]}]")
    if np.any(logit_length < 0) or np.any(logit_length > t):
        raise ShapeError(f"CTCLoss: logit_length {logit_length.tolist()} must lie in "
                         f"[0, {t}]")


def ctc_forward_backward(logits, labels, label_length, logit_length, blank: int,
                         merge_repeated: bool = True) -> tuple:
    """(loss (B,), d loss / d logits (T, B, C)) in float64; see the module docstring."""
    x = np.asarray(logits, np.float64)
    n_t, n_b, n_c = x.shape
    top = x.max(axis=2, keepdims=True)
    lp = x - top - np.log(np.exp(x - top).sum(axis=2, keepdims=True))   # log_softmax
    n_l = labels.shape[1]
    n_s = 2 * n_l + 1
    ext = np.full((n_b, n_s), blank, np.int64)            # blank, l1, blank, l2, ...
    ext[:, 1::2] = labels
    s_idx = np.arange(n_s)
    states = 2 * label_length.astype(np.int64) + 1         # valid states per example
    valid = s_idx[None, :] < states[:, None]
    is_blank = (s_idx % 2 == 0)[None, :] | (ext == blank)
    stay = np.ones((n_b, n_s), bool) if merge_repeated else is_blank
    skip = np.zeros((n_b, n_s), bool)                      # s - 2 -> s allowed
    if n_s > 2:
        same = ext[:, 2:] == ext[:, :-2]
        skip[:, 2:] = ~is_blank[:, 2:] & ~(same & merge_repeated)
    neg = np.full((n_b, n_s), -np.inf)
    bi = np.arange(n_b)[:, None]
    emit = lp[:, bi, ext]                                  # (T, B, S)
    alpha = np.full((n_t, n_b, n_s), -np.inf)
    if n_t:
        alpha[0][:, :2] = emit[0][:, :2]
        alpha[0] = np.where(valid, alpha[0], -np.inf)
    for t in range(1, n_t):
        prev = alpha[t - 1]
        one = np.concatenate([neg[:, :1], prev[:, :-1]], axis=1)
        two = np.where(skip, np.concatenate([neg[:, :2], prev[:, :-2]], axis=1), -np.inf)
        alpha[t] = np.where(valid, _logsumexp(np.where(stay, prev, -np.inf), one, two)
                            + emit[t], -np.inf)
    last = np.maximum(logit_length.astype(np.int64) - 1, 0)
    end = alpha[last, np.arange(n_b)]                      # (B, S)
    final = (s_idx[None, :] == states[:, None] - 1) | (s_idx[None, :] == states[:, None] - 2)
    loglik = _logsumexp(*np.where(final, end, -np.inf).T) if n_s else np.zeros(n_b)
    loglik = np.where(logit_length > 0, loglik, np.where(label_length == 0, 0.0, -np.inf))
    # beta[t, b, s]: log p(the rest after t | state s at t), the emission at t excluded
    beta = np.full((n_t, n_b, n_s), -np.inf)
    init = np.where(final & valid, 0.0, -np.inf)
    for t in range(n_t - 1, -1, -1):
        if t + 1 < n_t:
            nxt = beta[t + 1] + emit[t + 1]
            same_s = np.where(stay, nxt, -np.inf)
            one = np.concatenate([nxt[:, 1:], neg[:, :1]], axis=1)
            two = np.concatenate([np.where(skip, nxt, -np.inf)[:, 2:], neg[:, :2]], axis=1)
            rec = np.where(valid, _logsumexp(same_s, one, two), -np.inf)
        else:
            rec = neg
        beta[t] = np.where((t == last)[:, None], init, rec)
    possible = np.isfinite(loglik)
    safe = np.where(possible, loglik, 0.0)
    live = (np.arange(n_t)[:, None] < logit_length[None, :]) & possible[None, :]   # (T, B)
    with np.errstate(invalid="ignore", over="ignore"):
        gamma = np.exp(alpha + beta - safe[None, :, None])                    # (T, B, S)
    gamma = np.where(live[:, :, None], gamma, 0.0)
    occupancy = np.zeros((n_t, n_b, n_c))
    for b in range(n_b):   # classes per state differ by example: scatter-add per example
        np.add.at(occupancy[:, b], (slice(None), ext[b]), gamma[:, b])
    grad = np.where(live[:, :, None], np.exp(lp) - occupancy, 0.0)
    return -loglik, grad


def _kernel(inputs, attrs, ctx):
    """(loss (batch,), d loss / d logits (time, batch, classes)), logits' dtype."""
    logits, labels, label_length, logit_length = (np.asarray(v) for v in inputs)
    _check(logits, labels, label_length, logit_length)
    n_c = logits.shape[2]
    blank = int(attrs["blank"])
    if not 0 <= blank < n_c:
        raise ShapeError(f"CTCLoss: blank {blank} is not a class of logits with {n_c}")
    labels = labels.astype(np.int64)
    in_use = np.arange(labels.shape[1])[None, :] < label_length[:, None]
    if np.any(in_use & ((labels < 0) | (labels >= n_c))):
        raise ShapeError(f"CTCLoss: labels must lie in [0, {n_c}), got "
                         f"{labels[in_use].tolist()}")
    labels = np.where(in_use, labels, blank)
    merge = bool(attrs["merge_repeated"])
    if attrs["check_length"] or attrs["ignore_longer"]:
        # TF1's test: the labels need one step each plus one per merged repeat
        repeats = (labels[:, 1:] == labels[:, :-1]) & in_use[:, 1:] if merge else \
            np.zeros((labels.shape[0], 0), bool)
        needed = label_length + repeats.sum(axis=1)
        short = needed > logit_length
        if attrs["check_length"] and not attrs["ignore_longer"] and np.any(short):
            b = int(np.flatnonzero(short)[0])
            raise ShapeError(f"CTCLoss: not enough time for target transition sequence of "
                             f"example {b} (required: {int(needed[b])}, available: "
                             f"{int(logit_length[b])}); pass "
                             "ignore_longer_outputs_than_inputs=True to ignore it")
    loss, grad = ctc_forward_backward(logits, labels, label_length, logit_length, blank,
                                      merge)
    if attrs["ignore_longer"]:
        loss = np.where(short, 0.0, loss)
        grad = np.where(short[None, :, None], 0.0, grad)
    return loss.astype(logits.dtype), grad.astype(logits.dtype)


def _infer(attrs, inputs):
    x = inputs[0]
    if x.shape is None or len(x.shape) != 3:
        return [TensorInfo(x.dtype, (None,)), TensorInfo(x.dtype, None)]
    return [TensorInfo(x.dtype, (x.shape[1],)), TensorInfo(x.dtype, tuple(x.shape))]


def _gradient(b, op, grads):
    """d/d logits = the incoming gradient of each example's loss times the kernel's
    second output; labels and lengths are integers."""
    dloss = grads[0]
    if dloss is None:
        return [None] * 4
    scale = b.op("Reshape", [dloss, b.constant(np.asarray([1, -1, 1], np.int64))])
    return [b.op("Mul", [scale, op.outputs[1]]), None, None, None]


OPS = (
    define("CTCLoss", ["logits", "labels", "label_length", "logit_length"],
           ["loss", "grad"], _kernel,
           [("blank", "int", 0), ("merge_repeated", "int", 1), ("ignore_longer", "int", 0),
            ("check_length", "int", 0)],
           infer=_infer, gradient=_gradient, domain=DOMAIN, dtypes=("float32", "float64"),
           doc="CTC loss by forward-backward and its gradient w.r.t. the logits"),
)

"""Operators: more of TF1's candidate samplers (the `onegraph` domain) and
ComputeAccidentalHits.

FixedUnigramCandidateSampler draws class ids with probability proportional to
weights given as an attribute: TF's FixedUnigramSampler, whose weights are
num_reserved_ids zeros then unigrams ** distortion, each kept only when its id (counted
from the reserved zeros kept) falls in the shard (id % num_shards == shard);
range_max must equal the number kept. LearnedUnigramCandidateSampler starts with
weight 1 on every class and, after each run's draws, adds 1 to the weight of every
true class seen (duplicates count), as TF's UnigramSampler; its weights live in the
executor's per-node state, beside the random stream. Expected counts are those of
ops/candidate_sampling.py (p * num_sampled, or -expm1(tries * log1p(-p)) with
`unique`). Draws are inverse-CDF lookups of uniform numbers.

ComputeAccidentalHits(true_classes (batch, num_true), sampled (num_sampled,)) gives,
for each true class that is also a sampled candidate, its row, the candidate's
position (the last one when a candidate repeats, as TF's map) and the weight
-FLT_MAX, in row-major order of the true classes (TF's order).
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .candidate_sampling import _distinct_draws, _expected_count, _infer
from .random import _rng
from .registry import NODE_KEY, TensorInfo, define

DOMAIN = "onegraph"
_LOCK = threading.Lock()


def fixed_unigram_weights(unigrams, distortion: float, num_reserved_ids: int,
                          num_shards: int, shard: int) -> np.ndarray:
    """TF's FixedUnigramSampler weights (FillReservedIds then LoadFromUnigrams)."""
    weights = [0.0 for i in range(num_reserved_ids) if i % num_shards == shard]
    word_id = len(weights)   # TF counts on from the reserved ids kept, not all of them
    for w in unigrams:
        if word_id % num_shards == shard:
            weights.append(float(np.float32(w)) ** distortion)
        word_id += 1
    return np.asarray(weights, np.float64)


def _weighted_draws(weights: np.ndarray):
    cdf = np.cumsum(weights)
    total = cdf[-1]

    def draw(rng, count: int, range_max: int) -> np.ndarray:
        picks = np.searchsorted(cdf, rng.random(count) * total, side="right")
        return np.minimum(picks, range_max - 1).astype(np.int64)
    return draw


def _check_classes(op: str, true_classes, num_true: int, range_max: int) -> np.ndarray:
    true_classes = np.asarray(true_classes)
    if true_classes.dtype != np.int64 or true_classes.ndim != 2 \
            or true_classes.shape[1] != num_true:
        raise ShapeError(f"{op}: true_classes must be int64 of shape (batch, "
                         f"num_true={num_true}), got {true_classes.dtype} "
                         f"{list(true_classes.shape)}")
    bad = (true_classes < 0) | (true_classes >= range_max)
    if np.any(bad):
        raise ValueError(f"{op}: true_candidate out of range [0, {range_max}), received "
                         f"{int(true_classes[bad][0])}")
    return true_classes


def _sample(op, weights, true_classes, attrs, ctx) -> tuple:
    num_sampled, range_max = attrs["num_sampled"], attrs["range_max"]
    unique = bool(attrs["unique"])
    if unique and num_sampled > np.count_nonzero(weights):
        raise OpAttributeError(f"{op}: cannot draw {num_sampled} distinct classes from "
                               f"{np.count_nonzero(weights)} of nonzero weight")
    draw = _weighted_draws(weights)
    rng = _rng(attrs, ctx)
    if unique:
        sampled, tries = _distinct_draws(draw, rng, num_sampled, range_max)
    else:
        sampled, tries = draw(rng, num_sampled, range_max), num_sampled
    p = weights / weights.sum()
    with np.errstate(all="ignore"):
        true_count = _expected_count(p[true_classes], num_sampled, tries)
        sampled_count = _expected_count(p[sampled], num_sampled, tries)
    return sampled, true_count.astype(np.float32), sampled_count.astype(np.float32)


def _fixed_kernel(inputs, attrs, ctx):
    """Sampled ids (num_sampled,) int64 and the expected counts, float32."""
    op = "FixedUnigramCandidateSampler"
    weights = fixed_unigram_weights(attrs["unigrams"], attrs["distortion"],
                                    attrs["num_reserved_ids"], attrs["num_shards"],
                                    attrs["shard"])
    range_max = attrs["range_max"]
    if weights.size != range_max:
        raise OpAttributeError(f"{op}: range_max is {range_max} but must equal the number "
                               f"of weights in the shard, {weights.size}")
    if not weights.sum() > 0:
        raise OpAttributeError(f"{op}: the unigrams' weights sum to {weights.sum()}")
    true_classes = _check_classes(op, inputs[0], attrs["num_true"], range_max)
    return _sample(op, weights, true_classes, attrs, ctx)


def _learned_kernel(inputs, attrs, ctx):
    """As FixedUnigramCandidateSampler, weights learned from the true classes seen."""
    op = "LearnedUnigramCandidateSampler"
    range_max = attrs["range_max"]
    true_classes = _check_classes(op, inputs[0], attrs["num_true"], range_max)
    node = attrs.get(NODE_KEY)
    state = getattr(ctx, "state", None) if node is not None else None
    with _LOCK:
        if state is None:
            weights = np.ones(range_max)
        else:
            weights = state.setdefault(("learned unigram", node), np.ones(range_max))
        current = weights.copy()
        np.add.at(weights, true_classes.reshape(-1), 1.0)   # after this run's draws
    return _sample(op, current, true_classes, attrs, ctx)


def _hits_kernel(inputs, attrs, ctx):
    """(indices int32, ids int64, weights float32) of the accidental hits."""
    true_classes, sampled = (np.asarray(v) for v in inputs)
    num_true = attrs["num_true"]
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise ShapeError(f"ComputeAccidentalHits: true_classes must be (batch, "
                         f"num_true={num_true}), got {list(true_classes.shape)}")
    if sampled.ndim != 1:
        raise ShapeError(f"ComputeAccidentalHits: sampled_candidates must be 1-D, got "
                         f"{list(sampled.shape)}")
    position = {int(v): k for k, v in enumerate(sampled)}   # the last one wins
    rows, ids = [], []
    for (i, _), v in np.ndenumerate(true_classes):
        k = position.get(int(v))
        if k is not None:
            rows.append(i)
            ids.append(k)
    weights = np.full(len(rows), np.finfo(np.float32).min, np.float32)
    return np.asarray(rows, np.int32), np.asarray(ids, np.int64), weights


def _hits_infer(attrs, inputs):
    return [TensorInfo(np.dtype(np.int32), (None,)), TensorInfo(np.dtype(np.int64), (None,)),
            TensorInfo(np.dtype(np.float32), (None,))]


_ATTRS = [("num_true", "int"), ("num_sampled", "int"), ("unique", "int"), ("range_max", "int"),
          ("seed", "float", None)]
_OUTPUTS = ["sampled_candidates", "true_expected_count", "sampled_expected_count"]

OPS = (
    define("ComputeAccidentalHits", ["true_classes", "sampled_candidates"],
           ["indices", "ids", "weights"], _hits_kernel, [("num_true", "int")],
           infer=_hits_infer, domain=DOMAIN,
           doc="which sampled candidates are true classes, and the weight -FLT_MAX"),
    define("FixedUnigramCandidateSampler", ["true_classes"], _OUTPUTS, _fixed_kernel,
           _ATTRS + [("unigrams", "floats"), ("distortion", "float", 1.0),
                     ("num_reserved_ids", "int", 0), ("num_shards", "int", 1),
                     ("shard", "int", 0)],
           infer=_infer, domain=DOMAIN, stateful=True,
           doc="class ids drawn from fixed unigram weights and expected counts"),
    define("LearnedUnigramCandidateSampler", ["true_classes"], _OUTPUTS, _learned_kernel,
           _ATTRS, infer=_infer, domain=DOMAIN, stateful=True,
           doc="class ids drawn from unigram weights learned from the true classes"),
)

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

Edge values: unigrams must be finite, >= 0 and within float32 (TF keeps them as float);
distortion must be finite, and a zero unigram with a negative distortion (an infinite
weight) is refused. unigrams ** distortion is computed in log space when it would
overflow or underflow float64, scaled by a common factor that leaves the
probabilities as they were (TF's float32 weights would turn inf or 0 there). The
weights' count (range_max) is at most random_more.MAX_SAMPLE_ELEMENTS and is checked
before anything is allocated. With `unique`, num_sampled must not exceed the number of
classes a draw can reach (weight > 0 and not lost to rounding in the running sum).
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError
from .candidate_sampling import (_distinct_draws, _expected_count, _infer,
                                 check_sampler_attrs, sampler_attr_problem)
from .random import _rng
from .random_more import check_sample_count, memory_guarded
from .registry import NODE_KEY, TensorInfo, define

DOMAIN = "onegraph"
_LOCK = threading.Lock()
_OP = "FixedUnigramCandidateSampler"

# |log weight| beyond which unigrams ** distortion is rescaled: e**600 ~ 1e260 leaves
# room for summing MAX_SAMPLE_ELEMENTS (2**28) of them without overflowing float64
_LOG_WEIGHT_LIMIT = 600.0


def _int_value(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise OpAttributeError(f"{_OP}: {what} must be an int, got "
                               f"{type(value).__name__} {value!r:.60}")
    return int(value)


def _unigram_array(unigrams) -> np.ndarray:
    """The unigrams as float64 values of float32 precision (TF stores them as float).

    Raises:
        OpAttributeError: None, not numbers, negative, NaN, infinite or beyond float32.
    """
    if unigrams is None or isinstance(unigrams, (str, bytes)):
        raise OpAttributeError(f"{_OP}: unigrams must be a list of numbers >= 0, got "
                               f"{type(unigrams).__name__} {unigrams!r:.60}")
    try:
        u = np.asarray(unigrams, np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise OpAttributeError(f"{_OP}: unigrams must be a list of numbers >= 0, got "
                               f"{unigrams!r:.60}") from None
    if u.size and not np.all((u >= 0) & (u <= np.finfo(np.float32).max)):
        bad = u[~((u >= 0) & (u <= np.finfo(np.float32).max))][0]
        raise OpAttributeError(f"{_OP}: unigrams must be finite numbers >= 0 within "
                               f"float32, got {bad!r}")
    return u.astype(np.float32).astype(np.float64)


def _distorted(u: np.ndarray, distortion: float) -> np.ndarray:
    """u ** distortion (TF's weights), rescaled by one common factor where float64
    would overflow or underflow (so the probabilities are kept).

    Raises:
        OpAttributeError: a zero unigram with a negative distortion (infinite weight).
    """
    zero = u == 0
    if distortion < 0 and zero.any():
        raise OpAttributeError(f"{_OP}: a zero unigram raised to the negative distortion "
                               f"{distortion} has infinite weight")
    if distortion == 0 or not u.size or zero.all():
        return np.power(u, distortion)   # 0 ** 0 is 1, as TF's pow
    with np.errstate(divide="ignore"):
        logw = distortion * np.log(np.where(zero, 1.0, u))
    top = float(logw[~zero].max())
    if -_LOG_WEIGHT_LIMIT < top < _LOG_WEIGHT_LIMIT:
        return np.power(u, distortion)   # no overflow: TF's values exactly
    with np.errstate(under="ignore"):
        return np.where(zero, 0.0, np.exp(logw - top))   # the largest weight becomes 1


def fixed_unigram_weights(unigrams, distortion: float, num_reserved_ids: int,
                          num_shards: int, shard: int) -> np.ndarray:
    """TF's FixedUnigramSampler weights (FillReservedIds then LoadFromUnigrams):
    num_reserved_ids zeros then unigrams ** distortion, each kept when its id (counted
    on from the reserved zeros kept, as TF does) is in the shard (id % num_shards ==
    shard). Counted before anything is allocated.

    Raises:
        OpAttributeError: unigrams are missing or bad (see _unigram_array), distortion
            is not a finite number, num_shards < 1, shard not in [0, num_shards),
            num_reserved_ids < 0, or a zero unigram meets a negative distortion.
        ShapeError: more than MAX_SAMPLE_ELEMENTS weights would be kept.
    """
    reserved = _int_value(num_reserved_ids, "num_reserved_ids")
    shards = _int_value(num_shards, "num_shards")
    shard = _int_value(shard, "shard")
    if shards < 1 or not 0 <= shard < shards or reserved < 0:
        raise OpAttributeError(f"{_OP}: need num_shards >= 1, shard in [0, num_shards) "
                               f"and num_reserved_ids >= 0, got {shards}, {shard} and "
                               f"{reserved}")
    if isinstance(distortion, (bool, np.bool_)) or \
            not isinstance(distortion, (int, float, np.integer, np.floating)) or \
            not np.isfinite(float(distortion)):
        raise OpAttributeError(f"{_OP}: distortion must be a finite number, got "
                               f"{distortion!r:.60}")
    u = _unigram_array(unigrams)
    # the reserved ids i in [0, reserved) with i % shards == shard
    reserved_kept = max(0, -(-(reserved - shard) // shards))
    check_sample_count((reserved_kept,), _OP, "weights")
    ids = reserved_kept + np.arange(u.size, dtype=np.int64)
    # ids stay below 2**62, so a larger num_shards (which int64 cannot hold) acts as
    # 2**62: id % num_shards is the id itself either way
    u = u[ids % min(shards, 2 ** 62) == shard] if shard < 2 ** 62 else u[:0]
    check_sample_count((reserved_kept + u.size,), _OP, "weights")
    return np.concatenate([np.zeros(reserved_kept), _distorted(u, float(distortion))])


def _weighted_draws(weights: np.ndarray):
    cdf = np.cumsum(weights)
    total = cdf[-1]

    def draw(rng, count: int, range_max: int) -> np.ndarray:
        picks = np.searchsorted(cdf, rng.random(count) * total, side="right")
        return np.minimum(picks, range_max - 1).astype(np.int64)
    return draw


def _reachable(weights: np.ndarray) -> int:
    """How many classes a draw can give: those whose weight raises the running sum (a
    tiny weight after large ones is lost to rounding and is never drawn)."""
    cdf = np.cumsum(weights)
    return int(np.count_nonzero(np.diff(cdf, prepend=0.0) > 0))


def _check_classes(op: str, true_classes, num_true: int, range_max: int) -> np.ndarray:
    true_classes = np.asarray(true_classes)
    if true_classes.dtype != np.int64 or true_classes.ndim != 2 \
            or true_classes.shape[1] != num_true:
        raise ShapeError(f"{op}: true_classes must be int64 of shape (batch, "
                         f"num_true={num_true}), got {true_classes.dtype} "
                         f"{list(true_classes.shape)}")
    bad = (true_classes < 0) | (true_classes >= range_max)
    if np.any(bad):
        raise ExecutionError(f"{op}: true_candidate out of range [0, {range_max}), "
                             f"received {int(true_classes[bad][0])}")
    return true_classes


def _sample(op, weights, true_classes, attrs, ctx) -> tuple:
    num_sampled, range_max = int(attrs["num_sampled"]), int(attrs["range_max"])
    unique = bool(attrs["unique"])
    if unique and num_sampled > _reachable(weights):
        raise OpAttributeError(f"{op}: cannot draw {num_sampled} distinct classes from "
                               f"the {_reachable(weights)} a draw can reach (weight > 0)")
    draw = _weighted_draws(weights)
    rng = _rng(attrs, ctx)
    if unique:
        sampled, tries = _distinct_draws(draw, rng, num_sampled, range_max, op)
    else:
        sampled, tries = draw(rng, num_sampled, range_max), num_sampled
    p = weights / weights.sum()
    with np.errstate(all="ignore"):
        true_count = _expected_count(p[true_classes], num_sampled, tries)
        sampled_count = _expected_count(p[sampled], num_sampled, tries)
    return sampled, true_count.astype(np.float32), sampled_count.astype(np.float32)


def _fixed_kernel(inputs, attrs, ctx):
    """Sampled ids (num_sampled,) int64 and the expected counts, float32."""
    op = _OP
    _, _, range_max, _ = check_sampler_attrs(op, attrs)
    weights = fixed_unigram_weights(attrs["unigrams"], attrs["distortion"],
                                    attrs["num_reserved_ids"], attrs["num_shards"],
                                    attrs["shard"])
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
    num_true, _, range_max, _ = check_sampler_attrs(op, attrs)
    check_sample_count((range_max,), op, "weights (one per class up to range_max)")
    true_classes = _check_classes(op, inputs[0], num_true, range_max)
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
    op = "ComputeAccidentalHits"
    true_classes, sampled = (np.asarray(v) for v in inputs)
    num_true = attrs.get("num_true")
    if num_true is None or int(num_true) < 1:
        raise OpAttributeError(f"{op}: num_true must be at least 1, got {num_true}")
    for name, v in (("true_classes", true_classes), ("sampled_candidates", sampled)):
        # ints that int64 holds exactly, so the two compare without float promotion
        if v.dtype.kind not in "iu" or v.dtype == np.uint64:
            raise ShapeError(f"{op}: {name} must be int64 (or a narrower integer type), "
                             f"got {v.dtype}")
    true_classes, sampled = true_classes.astype(np.int64), sampled.astype(np.int64)
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise ShapeError(f"{op}: true_classes must be (batch, num_true={num_true}), got "
                         f"{list(true_classes.shape)}")
    if sampled.ndim != 1:
        raise ShapeError(f"{op}: sampled_candidates must be 1-D, got "
                         f"{list(sampled.shape)}")
    flat = true_classes.reshape(-1)
    if not sampled.size or not flat.size:
        rows = ids = np.empty(0, np.int64)
    else:
        # the last position of each candidate (TF's map keeps the last one): the first
        # in the reversed list
        values, first_reversed = np.unique(sampled[::-1], return_index=True)
        last = sampled.size - 1 - first_reversed
        at = np.minimum(np.searchsorted(values, flat), values.size - 1)
        hit = np.flatnonzero(values[at] == flat)      # row-major order, TF's
        rows, ids = hit // num_true, last[at[hit]]
    weights = np.full(len(rows), np.finfo(np.float32).min, np.float32)
    return rows.astype(np.int32), ids.astype(np.int64), weights


def _hits_infer(attrs, inputs):
    return [TensorInfo(np.dtype(np.int32), (None,)), TensorInfo(np.dtype(np.int64), (None,)),
            TensorInfo(np.dtype(np.float32), (None,))]


_ATTRS = [("num_true", "int"), ("num_sampled", "int"), ("unique", "int"), ("range_max", "int"),
          ("seed", "float", None)]
_OUTPUTS = ["sampled_candidates", "true_expected_count", "sampled_expected_count"]

OPS = (
    define("ComputeAccidentalHits", ["true_classes", "sampled_candidates"],
           ["indices", "ids", "weights"],
           memory_guarded("ComputeAccidentalHits", _hits_kernel), [("num_true", "int")],
           infer=_hits_infer, domain=DOMAIN,
           doc="which sampled candidates are true classes, and the weight -FLT_MAX"),
    define("FixedUnigramCandidateSampler", ["true_classes"], _OUTPUTS,
           memory_guarded(_OP, _fixed_kernel),
           _ATTRS + [("unigrams", "floats"), ("distortion", "float", 1.0),
                     ("num_reserved_ids", "int", 0), ("num_shards", "int", 1),
                     ("shard", "int", 0)],
           infer=_infer, domain=DOMAIN, stateful=True, check_attrs=sampler_attr_problem,
           doc="class ids drawn from fixed unigram weights and expected counts"),
    define("LearnedUnigramCandidateSampler", ["true_classes"], _OUTPUTS,
           memory_guarded("LearnedUnigramCandidateSampler", _learned_kernel),
           _ATTRS, infer=_infer, domain=DOMAIN, stateful=True,
           check_attrs=sampler_attr_problem,
           doc="class ids drawn from unigram weights learned from the true classes"),
)

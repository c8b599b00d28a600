"""Operators: candidate samplers for sampled losses (the `onegraph` domain), TF1's
UniformCandidateSampler and LogUniformCandidateSampler.

Each draws `num_sampled` class ids from [0, range_max) and gives, as TF's do, the
expected number of times each true class and each sampled class would have been
drawn: p * num_sampled when draws may repeat; with `unique`, draws go on until
num_sampled distinct ids are found, and after n draws a class of probability p is
expected -expm1(n * log1p(-p)) times. The log-uniform (Zipfian) distribution has
P(k) = log((k + 2) / (k + 1)) / log(range_max + 1), drawn as
floor(exp(u * log(range_max + 1))) - 1 for u uniform in [0, 1).

The `seed` attribute and the stream's advance from run to run follow ops/random.py.

Attributes follow TF's op definitions: num_true, num_sampled and range_max are at least
1, and with `unique` num_sampled is at most range_max (checked while building and when
run, as an OpAttributeError); range_max fits int64. num_sampled is at most
random_more.MAX_SAMPLE_ELEMENTS (a ShapeError). Drawing distinct ids gives up, with an
ExecutionError, after MAX_UNIQUE_DRAWS draws: the ids still missing are then so
improbable that TF's loop, which has no such bound, would in effect never end.
Draws past range_max - 1 (float rounding at the top end) are clipped to it before the
cast to int64, so range_max up to 2**63 - 1 gives ids in range.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError
from .random import _rng
from .random_more import check_sample_count, memory_guarded
from .registry import TensorInfo, define

DOMAIN = "onegraph"

# Draws one `unique` sampling run may make before giving up (ExecutionError): all of
# 10**6 uniform ids take about 1.4e7 draws; the bound is a few seconds of work, past
# which the ids still missing are too improbable to find in any reasonable time (TF's
# loop has no bound and would in effect never end).
MAX_UNIQUE_DRAWS = 2 ** 27
_CHUNK_MAX = 2 ** 22   # draws per round: 32 MiB arrays at most
_MASK_MAX = 2 ** 26    # ranges up to this many ids get a found-flag per id (64 MiB)

_INT64_MAX = 2 ** 63 - 1


def _top_id(range_max: int) -> float:
    """range_max - 1 as a float that converts to int64 exactly (floats near 2**63 round
    up to 2**63, which int64 cannot hold)."""
    return float(min(range_max - 1, 2 ** 63 - 1024))


def _uniform_draws(rng, count: int, range_max: int) -> np.ndarray:
    # clipped as floats, before the cast: a float at 2**63 would wrap to a negative id
    return np.minimum(np.floor(rng.random(count) * range_max),
                      _top_id(range_max)).astype(np.int64)


def _log_uniform_draws(rng, count: int, range_max: int) -> np.ndarray:
    values = np.floor(np.exp(rng.random(count) * math.log(range_max + 1.0))) - 1.0
    return np.clip(values, 0.0, _top_id(range_max)).astype(np.int64)  # rounding at the top


def _uniform_probability(ids: np.ndarray, range_max: int) -> np.ndarray:
    return np.full(ids.shape, 1.0 / range_max)


def _log_uniform_probability(ids: np.ndarray, range_max: int) -> np.ndarray:
    k = ids.astype(np.float64)
    return np.log((k + 2.0) / (k + 1.0)) / math.log(range_max + 1.0)


def _distinct_draws(draw, rng, wanted: int, range_max: int, op: str = "") -> tuple:
    """(the first `wanted` distinct ids in draw order, how many draws that took).

    Draws come in chunks of max(16, twice the ids missing, half the draws so far), at
    most _CHUNK_MAX: the ids and the count do not depend on the chunking (one stream,
    read in order), and growing chunks keep the rounds few when the last ids are rare.
    Ids already found are dropped first (a flag per id up to _MASK_MAX ids, else a
    sorted list), so a round costs O(chunk), not a sort of the chunk.

    Raises:
        ExecutionError: MAX_UNIQUE_DRAWS draws did not find them all.
    """
    if wanted > MAX_UNIQUE_DRAWS:
        raise ExecutionError(f"{op}: {wanted:,} distinct ids need at least as many draws, "
                             f"more than MAX_UNIQUE_DRAWS = {MAX_UNIQUE_DRAWS:,}; ask for "
                             f"fewer, or set unique to False")
    found = np.empty(0, np.int64)                  # in draw order
    seen = np.zeros(range_max, bool) if range_max <= _MASK_MAX else None
    known = np.empty(0, np.int64)                  # without `seen`: found, sorted
    tries = 0
    while found.size < wanted:
        if tries >= MAX_UNIQUE_DRAWS:
            raise ExecutionError(
                f"{op}: {found.size} of the {wanted} distinct ids wanted were found in "
                f"{tries:,} draws, and no more than MAX_UNIQUE_DRAWS = "
                f"{MAX_UNIQUE_DRAWS:,} are made: the ids left are too improbable to "
                f"draw; ask for fewer, or set unique to False")
        missing = wanted - found.size
        size = min(max(16, 2 * missing, tries // 2), _CHUNK_MAX, MAX_UNIQUE_DRAWS - tries)
        chunk = draw(rng, size, range_max)
        if seen is not None:
            unseen = np.flatnonzero(~seen[chunk])
        elif known.size:
            at = np.minimum(np.searchsorted(known, chunk), known.size - 1)
            unseen = np.flatnonzero(known[at] != chunk)
        else:
            unseen = np.arange(chunk.size)
        _, first = np.unique(chunk[unseen], return_index=True)  # first within the chunk
        taken = unseen[np.sort(first)][:missing]                   # in draw order
        new = chunk[taken]
        found = np.concatenate([found, new])
        if seen is not None:
            seen[new] = True
        else:
            new = np.sort(new)
            known = np.insert(known, np.searchsorted(known, new), new)   # a merge
        # a chunk that completes the set counts its draws up to the last one taken
        tries += chunk.size if found.size < wanted else int(taken[-1]) + 1
    return found, tries


def _expected_count(p: np.ndarray, num_sampled: int, tries: int) -> np.ndarray:
    if tries == num_sampled:
        return p * num_sampled
    return -np.expm1(tries * np.log1p(-p))


def sampler_attr_problem(attrs) -> str | None:
    """What is wrong with a candidate sampler's num_true, num_sampled, range_max and
    unique attributes (TF's rules: counts >= 1, range_max within int64, num_sampled <=
    range_max when unique), or None; the registry's check_attrs hook, so the error
    shows while building as well as when run."""
    values = {k: attrs.get(k) for k in ("num_true", "num_sampled", "range_max", "unique")}
    missing = [k for k, v in values.items() if v is None]
    if missing:
        return f"attribute(s) {', '.join(missing)} must be given"
    num_true, num_sampled, range_max = (int(values[k]) for k in
                                        ("num_true", "num_sampled", "range_max"))
    if num_true < 1 or num_sampled < 1 or range_max < 1:
        return (f"num_true, num_sampled and range_max must be at least 1, got "
                f"{num_true}, {num_sampled} and {range_max}")
    if range_max > _INT64_MAX:
        return f"range_max ({range_max}) must fit int64"
    if int(values["unique"]) and num_sampled > range_max:
        return (f"num_sampled ({num_sampled}) must not exceed range_max ({range_max}) "
                f"when unique")
    return None


def check_sampler_attrs(op: str, attrs) -> tuple:
    """(num_true, num_sampled, range_max, unique) of a candidate sampler, checked.

    Raises:
        OpAttributeError: sampler_attr_problem finds something.
        ShapeError: num_sampled is above MAX_SAMPLE_ELEMENTS.
    """
    problem = sampler_attr_problem(attrs)
    if problem:
        raise OpAttributeError(f"{op}: {problem}")
    num_sampled = int(attrs["num_sampled"])
    check_sample_count((num_sampled,), op, "sampled_candidates")
    return (int(attrs["num_true"]), num_sampled, int(attrs["range_max"]),
            bool(attrs["unique"]))


def _sampler(op: str, draw, probability):
    def kernel(inputs, attrs, ctx):
        """Sampled ids (num_sampled,) int64, the true classes' expected counts (batch,
        num_true) and the sampled ids' (num_sampled,), float32."""
        true_classes = np.asarray(inputs[0])
        num_true, num_sampled, range_max, unique = check_sampler_attrs(op, attrs)
        if true_classes.dtype != np.int64 or true_classes.ndim != 2 \
                or true_classes.shape[1] != num_true:
            raise ShapeError(f"{op}: true_classes must be int64 of shape (batch, "
                             f"num_true={num_true}), got {true_classes.dtype} "
                             f"{list(true_classes.shape)}")
        rng = _rng(attrs, ctx)
        if unique:
            sampled, tries = _distinct_draws(draw, rng, num_sampled, range_max, op)
        else:
            sampled, tries = draw(rng, num_sampled, range_max), num_sampled
        with np.errstate(all="ignore"):  # classes outside the range: p is meaningless
            true_count = _expected_count(probability(true_classes, range_max),
                                         num_sampled, tries)
            sampled_count = _expected_count(probability(sampled, range_max), num_sampled,
                                            tries)
        return (sampled, true_count.astype(np.float32), sampled_count.astype(np.float32))
    return memory_guarded(op, kernel)


def _infer(attrs, inputs):
    shape = inputs[0].shape
    batch = shape[0] if shape is not None and len(shape) == 2 else None
    n = attrs["num_sampled"]
    check_sample_count((n,), "candidate sampler", "sampled_candidates")
    return [TensorInfo(np.dtype(np.int64), (n,)),
            TensorInfo(np.dtype(np.float32), (batch, attrs["num_true"])),
            TensorInfo(np.dtype(np.float32), (n,))]


_ATTRS = [("num_true", "int"), ("num_sampled", "int"), ("unique", "int"), ("range_max", "int"),
          ("seed", "float", None)]
_OUTPUTS = ["sampled_candidates", "true_expected_count", "sampled_expected_count"]

OPS = (
    define("LogUniformCandidateSampler", ["true_classes"], _OUTPUTS,
           _sampler("LogUniformCandidateSampler", _log_uniform_draws,
                    _log_uniform_probability), _ATTRS, infer=_infer, domain=DOMAIN,
           stateful=True, check_attrs=sampler_attr_problem,
           doc="class ids drawn log-uniformly (Zipf) and expected counts"),
    define("UniformCandidateSampler", ["true_classes"], _OUTPUTS,
           _sampler("UniformCandidateSampler", _uniform_draws, _uniform_probability),
           _ATTRS, infer=_infer, domain=DOMAIN, stateful=True,
           check_attrs=sampler_attr_problem,
           doc="class ids drawn uniformly and expected counts"),
)

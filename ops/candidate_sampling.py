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
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .random import _rng
from .registry import TensorInfo, define

DOMAIN = "onegraph"


def _uniform_draws(rng, count: int, range_max: int) -> np.ndarray:
    return np.minimum((rng.random(count) * range_max).astype(np.int64), range_max - 1)


def _log_uniform_draws(rng, count: int, range_max: int) -> np.ndarray:
    values = np.exp(rng.random(count) * math.log(range_max + 1.0)).astype(np.int64) - 1
    return np.clip(values, 0, range_max - 1)  # rounding at the top end


def _uniform_probability(ids: np.ndarray, range_max: int) -> np.ndarray:
    return np.full(ids.shape, 1.0 / range_max)


def _log_uniform_probability(ids: np.ndarray, range_max: int) -> np.ndarray:
    k = ids.astype(np.float64)
    return np.log((k + 2.0) / (k + 1.0)) / math.log(range_max + 1.0)


def _distinct_draws(draw, rng, wanted: int, range_max: int) -> tuple:
    """(the first `wanted` distinct ids in draw order, how many draws that took)."""
    found = np.empty(0, np.int64)
    tries = 0
    while found.size < wanted:
        chunk = draw(rng, max(16, 2 * (wanted - found.size)), range_max)
        _, first = np.unique(chunk, return_index=True)
        fresh = np.zeros(chunk.size, bool)
        fresh[first] = True        # first time within the chunk ...
        fresh &= ~np.isin(chunk, found)   # ... and not found before it
        positions = np.flatnonzero(fresh)[:wanted - found.size]
        found = np.concatenate([found, chunk[positions]])
        # a chunk that completes the set counts its draws up to the last one taken
        tries += chunk.size if found.size < wanted else int(positions[-1]) + 1
    return found, tries


def _expected_count(p: np.ndarray, num_sampled: int, tries: int) -> np.ndarray:
    if tries == num_sampled:
        return p * num_sampled
    return -np.expm1(tries * np.log1p(-p))


def _sampler(op: str, draw, probability):
    def kernel(inputs, attrs, ctx):
        """Sampled ids (num_sampled,) int64, the true classes' expected counts (batch,
        num_true) and the sampled ids' (num_sampled,), float32."""
        true_classes = np.asarray(inputs[0])
        num_true, num_sampled = attrs["num_true"], attrs["num_sampled"]
        range_max, unique = attrs["range_max"], bool(attrs["unique"])
        if true_classes.dtype != np.int64 or true_classes.ndim != 2 \
                or true_classes.shape[1] != num_true:
            raise ShapeError(f"{op}: true_classes must be int64 of shape (batch, "
                             f"num_true={num_true}), got {true_classes.dtype} "
                             f"{list(true_classes.shape)}")
        if range_max < 1 or num_sampled < 0 or num_true < 1:
            raise OpAttributeError(f"{op}: range_max and num_true must be at least 1 and "
                                   f"num_sampled at least 0, got {range_max}, {num_true}, "
                                   f"{num_sampled}")
        if unique and num_sampled > range_max:
            raise OpAttributeError(f"{op}: num_sampled ({num_sampled}) must not exceed "
                                   f"range_max ({range_max}) when unique")
        rng = _rng(attrs, ctx)
        if unique:
            sampled, tries = _distinct_draws(draw, rng, num_sampled, range_max)
        else:
            sampled, tries = draw(rng, num_sampled, range_max), num_sampled
        with np.errstate(all="ignore"):  # classes outside the range: p is meaningless
            true_count = _expected_count(probability(true_classes, range_max),
                                         num_sampled, tries)
            sampled_count = _expected_count(probability(sampled, range_max), num_sampled,
                                            tries)
        return (sampled, true_count.astype(np.float32), sampled_count.astype(np.float32))
    return kernel


def _infer(attrs, inputs):
    shape = inputs[0].shape
    batch = shape[0] if shape is not None and len(shape) == 2 else None
    n = attrs["num_sampled"]
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
           stateful=True, doc="class ids drawn log-uniformly (Zipf) and expected counts"),
    define("UniformCandidateSampler", ["true_classes"], _OUTPUTS,
           _sampler("UniformCandidateSampler", _uniform_draws, _uniform_probability),
           _ATTRS, infer=_infer, domain=DOMAIN, stateful=True,
           doc="class ids drawn uniformly and expected counts"),
)

"""The random generator ops (ops/random.py) through ONNX import and the Session.

Bernoulli, Multinomial, RandomNormal(Like) and RandomUniform(Like): output shape and
dtype as the ONNX spec says (shape and dtype attributes, the *Like input's dtype by
default), values where they are certain (Bernoulli p = 0 and 1, the uniform range), the
distribution (moments and frequencies over about 10**5 samples, within `Z` standard
errors of formula values: normal, uniform, Bernoulli p and Multinomial's softmax of its
unnormalized log-probabilities) and the `seed` attribute.

Shapes and dtypes are compared with onnx's reference implementation (ReferenceEvaluator),
which has no Multinomial: that one follows the spec's text. Statistical draws use a
Session seed, so a given implementation passes or fails every time, never by luck; for
a correct sampler each bound fails with probability below 1e-6.
"""

import math

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper
from onnx.reference import ReferenceEvaluator

import onegraph as og
from onegraph.convert import from_onnx

N = 100_000  # samples per statistical check
Z = 5.0      # standard errors allowed


def _model(op, inputs=(), **attrs):
    """A one-node model: `op` with `inputs` [(name, elem_type, shape)], output "y"."""
    node = helper.make_node(op, [name for name, _, _ in inputs], ["y"], **attrs)
    graph = helper.make_graph(
        [node], op.lower(),
        [helper.make_tensor_value_info(name, t, shape) for name, t, shape in inputs],
        [helper.make_tensor_value_info("y", TP.UNDEFINED, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    model.ir_version = 10
    return model


def _run(model, feeds=None, seed=None):
    """Output "y" of one run of a fresh Session (`seed`: the Session's seed)."""
    return og.Session(from_onnx(model), seed=seed).run(["y"], feeds or {})[0]


def _reference(model, feeds=None):
    return ReferenceEvaluator(model).run(None, feeds or {})[0]


_ELEM = {np.dtype(np.float16): TP.FLOAT16, np.dtype(np.float32): TP.FLOAT,
         np.dtype(np.float64): TP.DOUBLE, np.dtype(np.int32): TP.INT32}

# (op, attributes, input dtype or None): every output's shape and dtype vs ONNX's reference.
_SHAPE_CASES = [
    ("RandomUniform", {"shape": [2, 3, 4]}, None),                       # dtype: FLOAT
    ("RandomUniform", {"shape": [5], "dtype": TP.DOUBLE}, None),
    ("RandomUniform", {"shape": [3, 1], "dtype": TP.FLOAT16}, None),
    ("RandomUniform", {"shape": [2, 2], "dtype": TP.BFLOAT16}, None),
    ("RandomNormal", {"shape": [4, 3]}, None),
    ("RandomNormal", {"shape": [1, 2, 3], "dtype": TP.DOUBLE}, None),
    ("RandomNormal", {"shape": [7], "dtype": TP.FLOAT16}, None),
    ("RandomUniformLike", {}, np.float64),                                # input's dtype
    ("RandomUniformLike", {}, np.float16),
    ("RandomUniformLike", {"dtype": TP.FLOAT}, np.float64),               # attribute wins
    ("RandomUniformLike", {"dtype": TP.DOUBLE}, np.int32),
    ("RandomNormalLike", {}, np.float32),
    ("RandomNormalLike", {}, np.float64),
    ("RandomNormalLike", {"dtype": TP.FLOAT16}, np.float32),
    ("RandomNormalLike", {"dtype": TP.FLOAT}, np.int32),
    ("Bernoulli", {}, np.float32),
    ("Bernoulli", {}, np.float64),
    ("Bernoulli", {}, np.float16),
    ("Bernoulli", {"dtype": TP.DOUBLE}, np.float32),
    ("Bernoulli", {"dtype": TP.BOOL}, np.float32),
    ("Bernoulli", {"dtype": TP.INT64}, np.float64),
    ("Bernoulli", {"dtype": TP.UINT8}, np.float32),
]


def _like_input(dtype, shape=(3, 4)):
    return (np.random.default_rng(1).random(shape) * 0.9 + 0.05).astype(dtype)


def _shape_case_id(op, attrs, in_dtype):
    parts = [op] + [f"{k}={TP.DataType.Name(v) if k == 'dtype' else v}"
                    for k, v in sorted(attrs.items())]
    return "-".join(parts + ([f"input={np.dtype(in_dtype).name}"] if in_dtype else []))


@pytest.mark.parametrize("op,attrs,in_dtype", _SHAPE_CASES,
                         ids=[_shape_case_id(*c) for c in _SHAPE_CASES])
def test_shape_and_dtype_as_reference(op, attrs, in_dtype):
    if in_dtype is None:
        model, feeds = _model(op, **attrs), {}
    else:
        x = _like_input(in_dtype)
        model = _model(op, [("x", _ELEM[np.dtype(in_dtype)], list(x.shape))], **attrs)
        feeds = {"x": x}
    got = _run(model, feeds)
    want = _reference(model, feeds)
    assert isinstance(got, np.ndarray)
    assert got.shape == want.shape, f"shape {got.shape} != reference {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != reference {want.dtype}"
    if op == "Bernoulli":
        assert np.isin(got.astype(np.float64), [0.0, 1.0]).all(), np.unique(got)


@pytest.mark.parametrize("attrs,in_dtype,want_dtype", [
    ({}, np.float32, np.int32),                     # dtype defaults to int32
    ({"dtype": TP.INT64}, np.float64, np.int64),
    ({"dtype": TP.INT32}, np.float16, np.int32),
], ids=["default-int32", "int64", "float16-input"])
def test_multinomial_shape_and_dtype(attrs, in_dtype, want_dtype):
    """Spec: output [batch_size, sample_size], int32 unless dtype says int64; values are
    class indices."""
    logits = np.log(np.array([[1, 2, 3, 4], [4, 1, 1, 1], [1, 1, 1, 1]])).astype(in_dtype)
    model = _model("Multinomial", [("x", _ELEM[np.dtype(in_dtype)], [3, 4])],
                   sample_size=7, **attrs)
    got = _run(model, {"x": logits})
    assert got.shape == (3, 7)
    assert got.dtype == want_dtype
    assert ((got >= 0) & (got < 4)).all(), got
    # sample_size defaults to 1
    got = _run(_model("Multinomial", [("x", TP.FLOAT, [3, 4])]), {"x": logits.astype(np.float32)})
    assert got.shape == (3, 1) and got.dtype == np.int32


def test_bernoulli_certain_outcomes():
    """p = 0 always gives 0, p = 1 always 1 (spec: 1 with probability p)."""
    p = np.tile(np.array([0.0, 1.0], np.float32), 5000).reshape(100, 100)
    for attrs, want_dtype in (({}, np.float32), ({"dtype": TP.INT32}, np.int32),
                              ({"dtype": TP.BOOL}, np.bool_)):
        got = _run(_model("Bernoulli", [("p", TP.FLOAT, [100, 100])], **attrs), {"p": p},
                   seed=3)
        assert got.dtype == want_dtype
        np.testing.assert_array_equal(got.astype(np.float32), p)


def test_bernoulli_mean_follows_p():
    """Each row's mean is its p within Z standard errors sqrt(p (1 - p) / n)."""
    probs = np.array([0.1, 0.5, 0.9, 0.02])
    n = N // len(probs)
    p = np.repeat(probs[:, None], n, axis=1)
    got = _run(_model("Bernoulli", [("p", TP.DOUBLE, list(p.shape))]), {"p": p}, seed=11)
    assert got.shape == p.shape
    means = got.mean(axis=1)
    bound = Z * np.sqrt(probs * (1 - probs) / n)
    assert (np.abs(means - probs) < bound).all(), (means, probs, bound)


def _check_normal(y, mean, scale):
    y = y.astype(np.float64)
    n = y.size
    assert abs(y.mean() - mean) < Z * scale / math.sqrt(n), (y.mean(), mean)
    assert abs(y.std() - scale) < Z * scale / math.sqrt(2 * (n - 1)), (y.std(), scale)
    # Shape, not only the moments: the share within one sigma is erf(1 / sqrt(2)).
    inside = np.mean(np.abs(y - mean) < scale)
    p = math.erf(1 / math.sqrt(2))
    assert abs(inside - p) < Z * math.sqrt(p * (1 - p) / n), (inside, p)


@pytest.mark.parametrize("dtype", [TP.FLOAT, TP.DOUBLE])
def test_random_normal_moments(dtype):
    y = _run(_model("RandomNormal", shape=[N // 100, 100], mean=1.5, scale=0.25,
                    dtype=dtype), seed=5)
    assert y.shape == (N // 100, 100)
    _check_normal(y, 1.5, 0.25)


def test_random_normal_defaults_are_standard():
    _check_normal(_run(_model("RandomNormal", shape=[N]), seed=6), 0.0, 1.0)


@pytest.mark.parametrize("in_dtype", [np.float32, np.float64])
def test_random_normal_like_moments(in_dtype):
    x = np.zeros((N // 10, 10), in_dtype)
    y = _run(_model("RandomNormalLike", [("x", _ELEM[np.dtype(in_dtype)], list(x.shape))],
                    mean=-3.0, scale=2.0), {"x": x}, seed=7)
    assert y.shape == x.shape and y.dtype == in_dtype
    _check_normal(y, -3.0, 2.0)


def _check_uniform(y, low, high):
    y = y.astype(np.float64)
    n = y.size
    assert abs(y.mean() - (low + high) / 2) < Z * (high - low) / math.sqrt(12 * n), y.mean()
    # Flat: each of 10 equal bins holds a tenth, within Z standard errors.
    counts = np.histogram(y, bins=10, range=(low, high))[0] / n
    assert (np.abs(counts - 0.1) < Z * math.sqrt(0.1 * 0.9 / n)).all(), counts


@pytest.mark.parametrize("dtype", [TP.FLOAT, TP.DOUBLE, TP.FLOAT16])
def test_random_uniform_range_and_moments(dtype):
    low, high = -2.0, 3.0
    y = _run(_model("RandomUniform", shape=[N], low=low, high=high, dtype=dtype), seed=8)
    assert y.shape == (N,)
    y64 = y.astype(np.float64)
    assert y64.min() >= low
    if dtype == TP.DOUBLE:
        assert y64.max() < high  # [low, high)
    else:
        # float32/float16 outputs are rounded after scaling: a draw just under `high`
        # may round to it (ONNX's reference does the same).
        assert y64.max() <= high
    _check_uniform(y, low, high)


def test_random_uniform_defaults_are_unit_interval():
    y = _run(_model("RandomUniform", shape=[N], dtype=TP.DOUBLE), seed=9)
    assert 0.0 <= y.min() and y.max() < 1.0
    _check_uniform(y, 0.0, 1.0)


def test_random_uniform_like_range_and_moments():
    x = np.zeros((N // 4, 4), np.float64)
    y = _run(_model("RandomUniformLike", [("x", TP.DOUBLE, list(x.shape))], low=10.0,
                    high=10.5), {"x": x}, seed=10)
    assert y.shape == x.shape and y.dtype == np.float64
    assert 10.0 <= y.min() and y.max() < 10.5
    _check_uniform(y, 10.0, 10.5)


def test_multinomial_frequencies_are_softmax_of_input():
    """ONNX: the input holds unnormalized log-probabilities, so class k of a row is drawn
    with probability softmax(row)[k]; the frequencies over n samples per row must be
    within Z standard errors sqrt(p (1 - p) / n)."""
    logits = np.array([[0.0, np.log(2), np.log(3), np.log(4)],   # 0.1 0.2 0.3 0.4
                       [5.0, 3.0, 7.0, 5.0],                       # shift-invariant
                       [-1.0, 2.0, 0.5, -30.0]])
    n = N // 2
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    got = _run(_model("Multinomial", [("x", TP.DOUBLE, [3, 4])], sample_size=n,
                      dtype=TP.INT64), {"x": logits}, seed=12)
    assert got.shape == (3, n) and got.dtype == np.int64
    freq = np.stack([np.bincount(row, minlength=4) for row in got]) / n
    assert freq.shape == probs.shape, freq.shape  # no index out of [0, 4)
    bound = Z * np.sqrt(probs * (1 - probs) / n)
    assert (np.abs(freq - probs) <= bound).all(), (freq, probs)


# One model per op, with a `seed` attribute: (op, attributes, feeds).
def _seeded(op, seed):
    p = np.full((40, 50), 0.5, np.float32)
    logits = np.zeros((4, 8), np.float32)
    x = np.zeros((40, 50), np.float32)
    return {
        "RandomUniform": (_model(op, shape=[40, 50], seed=seed), {}),
        "RandomNormal": (_model(op, shape=[40, 50], seed=seed), {}),
        "RandomUniformLike": (_model(op, [("x", TP.FLOAT, [40, 50])], seed=seed), {"x": x}),
        "RandomNormalLike": (_model(op, [("x", TP.FLOAT, [40, 50])], seed=seed), {"x": x}),
        "Bernoulli": (_model(op, [("p", TP.FLOAT, [40, 50])], seed=seed), {"p": p}),
        "Multinomial": (_model(op, [("x", TP.FLOAT, [4, 8])], sample_size=500, seed=seed),
                        {"x": logits}),
    }[op]


_RANDOM_OPS = ["RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
               "Bernoulli", "Multinomial"]


@pytest.mark.parametrize("op", _RANDOM_OPS)
def test_seed_attribute(op):
    """The same seed attribute gives the same draws in two Sessions, whatever their own
    seeds: the node's stream advances from run to run (as in onnxruntime) and starts
    over in a new Session. Different seeds give different draws (3.5 too: onegraph
    seeds with the float's bits, where ONNX's reference would truncate it to 3)."""
    model, feeds = _seeded(op, 3.0)
    session = og.Session(from_onnx(model), seed=1)
    first, second = (session.run(["y"], feeds)[0] for _ in range(2))
    assert not np.array_equal(first, second), "the seeded stream did not advance"
    session = og.Session(from_onnx(model), seed=2)
    np.testing.assert_array_equal(session.run(["y"], feeds)[0], first)
    np.testing.assert_array_equal(session.run(["y"], feeds)[0], second)
    for other in (4.0, 3.5):
        model, feeds = _seeded(op, other)
        assert not np.array_equal(_run(model, feeds, seed=1), first), f"seed {other}"


@pytest.mark.parametrize("op", _RANDOM_OPS)
def test_unseeded_draws_differ_per_run_and_follow_the_session_seed(op):
    """Without a seed attribute the values come from the Session's generator: each run
    draws anew (never constant-folded or cached), and a Session seed reproduces them."""
    model, feeds = _seeded(op, None)
    session = og.Session(from_onnx(model), seed=21)
    first = session.run(["y"], feeds)[0]
    second = session.run(["y"], feeds)[0]
    assert not np.array_equal(first, second)
    again = og.Session(from_onnx(model), seed=21).run(["y"], feeds)[0]
    np.testing.assert_array_equal(again, first)

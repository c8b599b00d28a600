"""The Session's fusion of Gelu chains spelled with Erf (`train/fuse_gelu.py`), checked
against onnxruntime running the unfused chain and against math.erfc in float64."""

from __future__ import annotations

import math

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

SQRT2 = math.sqrt(2.0)

# (scale node, add node, tail nodes) spellings of 0.5 x (1 + erf(x / sqrt 2)) over
# input "h"; constants: s2 = sqrt 2, r2 = 1 / sqrt 2, one = 1, half = 0.5
SPELLINGS = {
    "torch": (("Div", ["h", "s2"]), ("Add", ["e", "one"]),
              [("Mul", ["h", "a"], "m"), ("Mul", ["m", "half"], "g")]),
    "bert": (("Div", ["h", "s2"]), ("Add", ["e", "one"]),
             [("Mul", ["h", "half"], "m"), ("Mul", ["m", "a"], "g")]),
    "mul_scale": (("Mul", ["r2", "h"]), ("Add", ["one", "e"]),
                  [("Mul", ["a", "h"], "m"), ("Mul", ["half", "m"], "g")]),
    "half_first": (("Mul", ["h", "r2"]), ("Add", ["e", "one"]),
                   [("Mul", ["half", "a"], "m"), ("Mul", ["m", "h"], "g")]),
    "bert_swapped": (("Div", ["h", "s2"]), ("Add", ["one", "e"]),
                     [("Mul", ["half", "h"], "m"), ("Mul", ["a", "m"], "g")]),
}


def _gelu_model(spelling, dtype=np.float32, x_shape=(3, 8), const_shape=(),
                s2=SQRT2, fetch=(), bare=False):
    """x -> MatMul -> the Gelu chain -> MatMul -> y, so that the chain's input and
    output are intermediates as in a transformer's feed-forward block; `bare`: the
    chain alone, from x to y."""
    rng = np.random.default_rng(7)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    scale, add, tail = SPELLINGS[spelling]
    d = x_shape[-1]
    consts = {"s2": s2, "r2": 1 / SQRT2, "one": 1.0, "half": 0.5}
    used = set(scale[1]) | set(add[1]) | {name for _, ins, _ in tail for name in ins}
    inits = [numpy_helper.from_array(np.full(const_shape, v, dtype), k)
             for k, v in consts.items() if k in used]
    nodes = [helper.make_node(scale[0], scale[1], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node(add[0], add[1], ["a"])]
    nodes += [helper.make_node(op, ins, [out]) for op, ins, out in tail]
    if bare:
        nodes = [helper.make_node("Identity", ["x"], ["h"])] + nodes \
            + [helper.make_node("Identity", ["g"], ["y"])]
    else:
        inits += [numpy_helper.from_array(rng.standard_normal((d, d)).astype(dtype), "w1"),
                  numpy_helper.from_array(rng.standard_normal((d, 5)).astype(dtype), "w2")]
        nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"])] + nodes \
            + [helper.make_node("MatMul", ["g", "w2"], ["y"])]
    outputs = [helper.make_tensor_value_info(n, elem, None) for n in ("y",) + fetch]
    graph = helper.make_graph(nodes, "gelu", [helper.make_tensor_value_info(
        "x", elem, list(x_shape))], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    x = rng.standard_normal(x_shape).astype(dtype)
    return model, x


def _unfused_onnxruntime(model, x, names=None):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])
    return sess.run(names, {"x": x})


def _plan_ops(sess):
    (plan,) = sess._plans.values()
    return [s.node.op_type for s in plan.steps]


def _exact_gelu(v):
    """v Phi(v) = 0.5 v erfc(-v / sqrt 2) in float64 with math.erfc (no cancellation
    in the negative tail)."""
    erfc = np.vectorize(math.erfc, otypes=[np.float64])
    with np.errstate(invalid="ignore"):  # -inf * 0
        return 0.5 * v * erfc(-v / SQRT2)


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_chain_becomes_one_step(spelling, dtype):
    model, x = _gelu_model(spelling, dtype)
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    assert _plan_ops(sess) == ["MatMul", "Erf", "MatMul"]
    if dtype == np.float32:
        (want,) = _unfused_onnxruntime(model, x)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    else:  # onnxruntime has no float64 Erf
        w1, w2 = (numpy_helper.to_array(t) for t in model.graph.initializer[-2:])
        want = _exact_gelu(x @ w1) @ w2
        np.testing.assert_allclose(y, want, rtol=1e-13, atol=1e-13)


def test_fused_chain_values_against_math_erfc():
    """The chain alone over the whole range, including the tails and special values."""
    model, _ = _gelu_model("torch", x_shape=(64, 8), bare=True)
    x = np.linspace(-12, 12, 8 * 64, dtype=np.float32).reshape(64, 8)
    x[0, :4] = [np.inf, -np.inf, np.nan, -0.0]
    sess = og.Session(from_onnx(model))
    got = sess.run("y", {"x": x})
    assert "Div" not in _plan_ops(sess)
    want = _exact_gelu(x.astype(np.float64))
    assert np.isposinf(got[0, 0]) and np.isnan(got[0, 1]) and np.isnan(got[0, 2])
    assert got[0, 3] == 0
    core = np.abs(x[1:]) <= 5
    np.testing.assert_allclose(got[1:][core], want[1:][core], rtol=2e-6, atol=1e-30)
    # exp(-x^2 / 2) in float32 carries x^2's rounding: 3e-6 relative at x = -10
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-5, atol=1e-30)
    (unfused,) = _unfused_onnxruntime(model, x)
    np.testing.assert_allclose(got[1:], unfused[1:], rtol=1e-5, atol=1e-6)


def test_constants_of_higher_rank_than_the_input_keep_broadcasting():
    """(1, 1) constants broadcast a (8,) input to (1, 8): the fused step falls back to
    the chain's kernels and keeps that shape."""
    model, _ = _gelu_model("torch", x_shape=(8,), const_shape=(1, 1))
    x = np.random.default_rng(1).standard_normal(8).astype(np.float32)
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    (want,) = _unfused_onnxruntime(model, x)
    assert y.shape == want.shape == (1, 5)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_wrong_constant_is_not_fused():
    model, x = _gelu_model("torch", s2=1.5)
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    assert "Div" in _plan_ops(sess)
    (want,) = _unfused_onnxruntime(model, x)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fetched", ["e", "m"])
def test_fetched_intermediate_is_not_fused(fetched):
    model, x = _gelu_model("bert", fetch=(fetched,))
    sess = og.Session(from_onnx(model))
    y, inner = sess.run(["y", fetched], {"x": x})
    assert "Erf" in _plan_ops(sess) and "Add" in _plan_ops(sess)
    want_y, want_inner = _unfused_onnxruntime(model, x, ["y", fetched])
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(inner, want_inner, rtol=1e-5, atol=1e-6)


def test_float16_chain_runs_unfused():
    model, x = _gelu_model("torch", np.float16)
    sess = og.Session(from_onnx(model))
    y = sess.run("y", {"x": x})
    assert "Div" in _plan_ops(sess)
    (want,) = _unfused_onnxruntime(model, x)
    np.testing.assert_allclose(y.astype(np.float32), want.astype(np.float32),
                               rtol=1e-2, atol=1e-2)

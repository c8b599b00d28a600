"""Rewrite 11 of `train/optimize.py`: a fused Conv's residual Add (+ Relu) summed into
the shortcut's memory. Checked against onnxruntime on small residual blocks under both
BLAS backends, with the rewrite taken exactly where the shortcut is the plan's to
overwrite (its last reader the Add, not fetched, fed, a graph input or the Conv's own
input)."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

# rewrite 11 is the plan's on conv.py's own paths: with oneDNN on, residual blocks run
# in its chains (rewrite 13, tests/train/test_onednn_chains.py)
pytestmark = pytest.mark.usefixtures("own_convs")


def _weights(rng, m, c, k):
    return {"w": (rng.standard_normal((m, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32),
            "b": (rng.standard_normal(m) * 0.1).astype(np.float32)}


def _block(kind, c=32, hw=14, add_op="Add", relu=True):
    """x -> Conv a + Relu = t -> Conv m + Relu = v -> Conv b (1x1, no Relu) = u ->
    Add(u, shortcut) (+ Relu) = y; the shortcut (and extra outputs) by `kind`."""
    rng = np.random.default_rng(11)
    inits, nodes = {}, []

    def conv(name, src, m, k, stride=1, act=False):
        for key, v in _weights(rng, m, c, k).items():
            inits[f"{name}_{key}"] = v
        out = f"{name}_out"
        nodes.append(helper.make_node("Conv", [src, f"{name}_w", f"{name}_b"], [out],
                                      pads=[k // 2] * 4, strides=[stride, stride]))
        if act:
            nodes.append(helper.make_node("Relu", [out], [f"{name}_r"]))
            return f"{name}_r"
        return out

    outputs = ["y"]
    t = conv("a", "x", c, 3, act=True)
    v = conv("m", t, c, 3, act=True)
    if kind == "downsample":   # ResNet's first block of a stage: both sides strided
        u = conv("b", v, 4 * c, 1, stride=2)
        short = conv("s", "x", 4 * c, 1, stride=2)
    elif kind == "conv_reads_shortcut":
        u, short = conv("b", t, c, 1), t
    else:
        u = conv("b", v, c, 1)
        short = "x" if kind == "graph_input" else t
    nodes.append(helper.make_node(add_op, [u, short], ["sum"]))
    nodes.append(helper.make_node("Relu" if relu else "Identity", ["sum"], ["y"]))
    if kind == "fetched":
        outputs.append(t)
    if kind == "read_later":
        nodes.append(helper.make_node("Mul", [t, t], ["later"]))
        outputs.append("later")
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((1, c, hw, hw)).astype(np.float32)
    return model, x, outputs


def _fused_steps(sess):
    (plan,) = sess._plans.values()
    return sum(s.kernel.__qualname__.startswith("_conv_residual_kernel") for s in plan.steps)


CASES = [  # kind, is the rewrite taken
    ("identity", True), ("downsample", True), ("graph_input", False), ("fetched", False),
    ("read_later", False), ("conv_reads_shortcut", False)]


@pytest.mark.parametrize("relu", [True, False])
@pytest.mark.parametrize("add_op", ["Add", "Sum"])
@pytest.mark.parametrize("kind, taken", CASES, ids=[c[0] for c in CASES])
def test_residual_block_matches_onnxruntime(kind, taken, add_op, relu, blas_backend):
    model, x, outputs = _block(kind, add_op=add_op, relu=relu)
    sess = og.Session(from_onnx(model))
    runs = [sess.run(outputs, {"x": x}) for _ in range(2)]  # the second on cached weights
    assert _fused_steps(sess) == (1 if taken else 0)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(outputs, {"x": x})
    for got in runs:
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_chained_blocks_sum_into_each_others_outputs(blas_backend):
    """Three identity blocks in a row, each block's input its shortcut (the next ones'
    a value the previous fused step wrote in place), against onnxruntime."""
    rng = np.random.default_rng(12)
    c, hw = 64, 14
    inits, nodes, cur = {}, [], "x"
    for i in range(3):
        for name, k in (("a", 3), ("b", 1)):
            for key, v in _weights(rng, c, c, k).items():
                inits[f"{name}{i}_{key}"] = v
        nodes += [helper.make_node("Conv", [cur, f"a{i}_w", f"a{i}_b"], [f"a{i}"],
                                   pads=[1] * 4),
                  helper.make_node("Relu", [f"a{i}"], [f"ar{i}"]),
                  helper.make_node("Conv", [f"ar{i}", f"b{i}_w", f"b{i}_b"], [f"b{i}"]),
                  helper.make_node("Add", [f"b{i}", cur], [f"s{i}"]),
                  helper.make_node("Relu", [f"s{i}"], [f"r{i}"])]
        cur = f"r{i}"
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
        [helper.make_tensor_value_info(cur, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((1, c, hw, hw)).astype(np.float32)
    sess = og.Session(from_onnx(model))
    got = [sess.run([cur], {"x": x})[0] for _ in range(2)]
    assert _fused_steps(sess) == 2  # the first block's shortcut is the graph's input
    (want,) = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run([cur], {"x": x})
    for g in got:
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4)

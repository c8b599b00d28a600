"""Kernels that use the per-thread scratch arena (im2col, padded copies, pool passes),
run by the Session in ways that restart the arena under a running step (an If
branch's own steps) or share nothing between threads; checked against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx

from ..threads import run_together

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

X_SHAPE = (1, 8, 30, 30)


def _weights(rng, *names):
    return {k: rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2 for k in names}


def _branch(name, w):
    """A graph body: Conv (pad 1) of the outer `c`, then a 3x3/2 MaxPool."""
    return helper.make_graph(
        [helper.make_node("Conv", ["c", w], [f"{name}_c"], pads=[1, 1, 1, 1]),
         helper.make_node("MaxPool", [f"{name}_c"], [f"{name}_y"], kernel_shape=[3, 3],
                          strides=[2, 2])],
        name, [], [helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, None)])


def _if_model(rng):
    """x -> Conv -> If(flag: Conv + MaxPool | other Conv + MaxPool) -> Conv -> y."""
    weights = _weights(rng, "w0", "w_then", "w_else", "w1")
    nodes = [helper.make_node("Conv", ["x", "w0"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("If", ["flag"], ["p"], then_branch=_branch("t", "w_then"),
                              else_branch=_branch("e", "w_else")),
             helper.make_node("Conv", ["p", "w1"], ["y"], pads=[1, 1, 1, 1])]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, X_SHAPE),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor(k, TensorProto.FLOAT, v.shape, v.ravel())
         for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    return model


def _ort(model):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("flag", [True, False])
def test_if_branch_steps_between_outer_convs_match_onnxruntime(flag):
    rng = np.random.default_rng(11)
    model = _if_model(rng)
    x = rng.standard_normal(X_SHAPE).astype(np.float32)
    feeds = {"x": x, "flag": np.array(flag)}
    want = _ort(model).run(["y"], feeds)[0]
    sess = og.Session(from_onnx(model))
    for _ in range(3):  # later runs reuse the arena the earlier ones grew
        got = sess.run("y", feeds)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_sessions_in_threads_keep_their_scratch_apart():
    """Two threads run their own Session of the model at once, many times: each
    result matches onnxruntime (a shared arena would mix their temporaries)."""
    rng = np.random.default_rng(12)
    model = _if_model(rng)
    inputs = [rng.standard_normal(X_SHAPE).astype(np.float32) for _ in range(2)]
    flags = [True, False]
    ref = _ort(model)
    wants = [ref.run(["y"], {"x": x, "flag": np.array(f)})[0] for x, f in zip(inputs, flags)]
    errors = []

    def work(k):
        sess = og.Session(from_onnx(model))
        feeds = {"x": inputs[k], "flag": np.array(flags[k])}
        for _ in range(100):
            got = sess.run("y", feeds)
            if not np.allclose(got, wants[k], rtol=1e-4, atol=1e-4):
                errors.append(k)
                return

    assert not run_together(work, 2)
    assert errors == []

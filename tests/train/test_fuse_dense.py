"""Rewrite 14 (train/fuse_dense.py): MatMul by constant weights + bias Add (+ Gelu) as
one oneDNN matmul, checked against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.ops import onednn

from ..backends import needs_backend

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

pytestmark = [needs_backend(onednn, "onednn", "oneDNN (the onednn extra)"),
              pytest.mark.usefixtures("with_onednn")]


def _model(act, x_shape, k=64, n=96, bias_first=False, outputs=("y",), seed=0):
    """x @ W + b (then Gelu of `act`: "none", "tanh", or None for no Gelu)."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    add_in = ["b", "mm"] if bias_first else ["mm", "b"]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
             helper.make_node("Add", add_in, ["z" if act else "y"], name="bias")]
    if act:
        nodes.append(helper.make_node("Gelu", ["z"], ["y"], approximate=act, name="act"))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel()),
         helper.make_tensor("b", TensorProto.FLOAT, b.shape, b.ravel())])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return model


def _run(model, x, outputs=("y",)):
    sess = og.Session(from_onnx(model))
    got = sess.run(list(outputs), {"x": x})
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(list(outputs),
                                                                        {"x": x})
    (plan,) = sess._plans.values()
    return got, want, plan.steps


@pytest.mark.parametrize("act", ["none", "tanh", None])
@pytest.mark.parametrize("x_shape", [(2, 16, 64), (40, 64)])
@pytest.mark.parametrize("bias_first", [False, True])
def test_dense_layers_are_one_step(act, x_shape, bias_first):
    model = _model(act, list(x_shape), bias_first=bias_first)
    x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
    got, want, steps = _run(model, x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)
    (step,) = steps
    assert len(step.kernel.members) == (3 if act else 2)


def test_few_rows_and_non_finite_inputs_run_the_steps():
    model = _model("none", [None, 64])
    for x in (np.random.default_rng(2).standard_normal((3, 64)).astype(np.float32),
              np.full((16, 64), np.inf, np.float32) * np.where(np.arange(64) % 2, 1, -1)):
        got, want, _ = _run(model, x.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(got[0]), np.isnan(want[0]))
        ok = np.isfinite(want[0])
        np.testing.assert_allclose(got[0][ok], want[0][ok], rtol=1e-4, atol=1e-5)


def test_fetched_intermediates_keep_the_steps_apart():
    model = _model("none", [8, 64], outputs=("y", "z"))
    x = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    got, want, steps = _run(model, x, ("y", "z"))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    (dense,) = [s for s in steps if hasattr(s.kernel, "members")]
    assert len(dense.kernel.members) == 2  # MatMul + bias; the Gelu on its own


def test_without_oneDNN_nothing_is_fused():
    onednn.use_backend("numpy")
    model = _model("none", [8, 64])
    x = np.random.default_rng(4).standard_normal((8, 64)).astype(np.float32)
    got, want, steps = _run(model, x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)
    assert not any(hasattr(s.kernel, "members") for s in steps)

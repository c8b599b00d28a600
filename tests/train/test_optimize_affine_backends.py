"""The BatchNormalization rewrites (train/optimize.py: BN as a per-channel multiply-add,
BN + Relu, BN + Relu whose scale goes into the next 1x1 or padded 3x3 Conv) under both
JIT backends: numba's one-pass kernels (ops/normalization_jit.py) and numpy's passes,
against onnxruntime, the kernel that ran recorded."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.train import optimize

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper, numpy_helper  # noqa: E402


def _model(after, dtype, c=6):
    """x -> BatchNormalization -> `after` ("", "relu", "relu+conv1x1",
    "relu+conv3x3"), seeded parameters of `dtype`."""
    rng = np.random.default_rng(4)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def init(name, v):
        return numpy_helper.from_array(np.asarray(v, dtype), name)
    inits = [init("s", rng.uniform(0.5, 1.5, c)), init("b", rng.standard_normal(c)),
             init("m", rng.standard_normal(c)), init("v", rng.uniform(0.5, 1.5, c))]
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"])]
    out = "n"
    if after.startswith("relu"):
        nodes.append(helper.make_node("Relu", ["n"], ["r"]))
        out = "r"
    if after.endswith("conv1x1") or after.endswith("conv3x3"):
        k = 1 if after.endswith("conv1x1") else 3
        inits.append(init("W", rng.standard_normal((4, c, k, k))))
        nodes.append(helper.make_node("Conv", ["r", "W"], ["y"], pads=[k // 2] * 4))
        out = "y"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", elem, None)],
                              [helper.make_tensor_value_info(out, elem, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    return model, out


@pytest.mark.parametrize("after", ["", "relu", "relu+conv1x1", "relu+conv3x3"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 6, 7, 7), (2, 6, 12, 10)])
def test_batchnorm_rewrites_match_onnxruntime(after, dtype, shape, jit_backend, taken_by):
    model, out = _model(after, dtype)
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    ran = taken_by(optimize, "_per_channel_kernels")
    got = og.Session(from_onnx(model)).run([out], {"x": x})[0]
    assert got.dtype == dtype
    assert any(ran) == (jit_backend == "numba")
    # onnxruntime has no float64 BatchNormalization/Conv on CPU everywhere: float32
    f32, _ = _model(after, np.float32)
    want = ort.InferenceSession(f32.SerializeToString(), providers=["CPUExecutionProvider"]
                                ).run(None, {"x": x.astype(np.float32)})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

"""Kernels whose weights go through MKL's packed GEMM (ops/blas.py) give onnxruntime's
outputs: MatMul on a stack of rows, Gemm with a transposed weight and bias, a 1x1
Conv (plain and with the bias row of ones), a small-image 3x3 Conv (channels-last
columns, packed right operand) and a larger-image strided 3x3 Conv (im2col blocks,
packed left operand). Each model runs under both backends; under MKL the packed path
must have been taken (counted), so the check cannot pass on numpy alone."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402
from onegraph.ops import blas  # noqa: E402

from .test_blas import needs_mkl  # noqa: E402


def _model(nodes, inputs, outputs, weights):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                     for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _cases():
    rng = np.random.default_rng(0)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(
            np.float32)

    yield "matmul", _model(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", [1, 128, 256])], ["y"],
        {"w": w(256, 512)}), {"x": rng.standard_normal((1, 128, 256), np.float32)}
    yield "gemm", _model(
        [helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
        [("x", [64, 256])], ["y"], {"w": w(512, 256), "c": w(512)}), \
        {"x": rng.standard_normal((64, 256), np.float32)}
    for name, (c, m, k, hw, stride) in {
            "conv1x1": (256, 512, 1, 14, 1), "conv1x1_expand": (128, 512, 1, 28, 1),
            "conv1x1_7x7": (512, 256, 1, 7, 1),
            "conv3x3_small": (256, 256, 3, 7, 1),
            "conv3x3_strided": (64, 128, 3, 56, 2)}.items():
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["z"], pads=[k // 2] * 4,
                                  strides=[stride, stride]),
                 helper.make_node("Relu", ["z"], ["y"])]
        yield name, _model(nodes, [("x", [1, c, hw, hw])], ["y"],
                           {"w": w(m, c, k, k), "b": w(m)}), \
            {"x": rng.standard_normal((1, c, hw, hw), np.float32)}


@pytest.mark.parametrize("backend", [pytest.param("mkl", marks=needs_mkl), "numpy"])
@pytest.mark.parametrize("name,model,feeds", list(_cases()), ids=[c[0] for c in _cases()])
def test_packed_weights_match_onnxruntime(name, model, feeds, backend, monkeypatch,
                                          own_convs):
    packs = []
    real = blas._packed

    def counting(*args):
        packed = real(*args)
        packs.append(packed is not None)
        return packed

    monkeypatch.setattr(blas, "_packed", counting)
    blas.use_backend(backend)
    try:
        sess = og.Session(from_onnx(model))
        runs = [sess.run(["y"], feeds)[0] for _ in range(2)]  # packs made, then reused
    finally:
        blas._reset_for_tests()
    (want,) = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(["y"], feeds)
    for got in runs:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert (backend == "mkl") == any(packs), packs


@pytest.mark.parametrize("backend", [pytest.param("mkl", marks=needs_mkl), "numpy"])
@pytest.mark.parametrize("op_type", ["MatMul", "Gemm"])
def test_float16_weights_are_widened_once(op_type, backend, monkeypatch):
    """A float16 model's constant weights are converted to float32 once, not on every
    run; results are the float64 product rounded to float16 (within an ulp)."""
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((256, 512)) / 16).astype(np.float16)
    x = rng.standard_normal((64, 256)).astype(np.float16)
    inputs = ["x", "w"]
    node = helper.make_node(op_type, inputs, ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    from onegraph.ops import linalg
    weights_seen = []
    real = linalg._with_constant_weights

    def recording(a, b, attrs):
        (a2, b2), dt, constant = real(a, b, attrs)
        weights_seen.append((b2, constant))
        return (a2, b2), dt, constant

    monkeypatch.setattr(linalg, "_with_constant_weights", recording)
    blas.use_backend(backend)
    try:
        sess = og.Session(from_onnx(model))
        runs = [sess.run(["y"], {"x": x})[0] for _ in range(3)]
    finally:
        blas._reset_for_tests()
    want = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float16)
    for got in runs:
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=2e-3, atol=2e-3)
    # the same float32 array every run (widened once, then taken from the cache)
    assert len(weights_seen) == 3 and all(c for _, c in weights_seen)
    first = weights_seen[0][0]
    assert first.dtype == np.float32 and all(b is first for b, _ in weights_seen)

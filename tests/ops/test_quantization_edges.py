"""Quantized kernels on the cases a sweep against onnxruntime found: the requantization
multiplier near rounding ties, float16 scales, a vector A with per-column scales, and
DynamicQuantizeLinear on all-zero and NaN inputs. onnxruntime (CPU) is the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from ..ort_int8 import ort_saturates_u8s8  # noqa: E402
from .single_node import feeds_model, run_onnxruntime  # noqa: E402


def _qlinear_matmul(a, a_s, b, b_s, y_s, opset=21, zps=(0, 0, 0)):
    feeds = {"a": a, "a_s": a_s, "a_z": np.array(zps[0], a.dtype), "b": b, "b_s": b_s,
             "b_z": np.full(np.shape(b_s), zps[1], b.dtype),
             "y_s": y_s, "y_z": np.array(zps[2], np.uint8)}
    feeds = {k: np.asarray(v) for k, v in feeds.items()}   # onnxruntime takes arrays only
    return feeds_model("QLinearMatMul", feeds, opset, np.uint8), feeds


@pytest.mark.parametrize("case", ["float16 scales", "tie", "vector a", "vector b",
                                  "random per column"])
def test_qlinear_matmul_matches_onnxruntime(case):
    rng = np.random.default_rng(0)
    f32, f16 = np.float32, np.float16
    if case == "float16 scales":   # the int32 accumulator (79007) overflows float16
        model, feeds = _qlinear_matmul(np.array([[200, 100, 3, 7]], np.uint8), f16(0.0625),
                                       np.array([[255], [255], [250], [251]], np.uint8),
                                       f16(0.0625), f16(32))
    elif case == "tie":   # 5 * (0.1 * 0.1 / 0.02) rounds to 3, 5 * 0.1 * 0.1 / 0.02 to 2
        model, feeds = _qlinear_matmul(np.array([[5]], np.uint8), f32(0.1),
                                       np.array([[1]], np.uint8), f32(0.1), f32(0.02))
    elif case == "vector a":
        model, feeds = _qlinear_matmul(np.array([1, 2, 3, 4], np.uint8), f32(0.5),
                                       rng.integers(0, 255, (4, 2), np.uint8),
                                       np.array([0.1, 0.2], f32), f32(4.0))
    elif case == "vector b":
        model, feeds = _qlinear_matmul(rng.integers(0, 255, (3, 4), np.uint8), f32(0.05),
                                       np.array([4, 3, 2, 1], np.uint8), f32(0.1), f32(0.7),
                                       opset=13)
    else:
        model, feeds = _qlinear_matmul(rng.integers(0, 255, (2, 3, 8), np.uint8), f32(0.02),
                                       rng.integers(0, 255, (8, 5), np.uint8),
                                       rng.uniform(0.01, 0.05, 5).astype(f32), f32(0.9),
                                       zps=(128, 100, 7))
    got = og.Session(from_onnx(model)).run("y", feeds)
    want = run_onnxruntime(model, feeds)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_conv_requantizes_with_the_float32_multiplier(per_channel):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 255, (1, 3, 6, 6), np.uint8)
    # within [-64, 63] where onnxruntime's int8 products saturate (tests/ort_int8.py)
    low, high = (-64, 64) if ort_saturates_u8s8() else (-127, 127)
    w = rng.integers(low, high, (4, 3, 3, 3), np.int8)
    w_s = rng.uniform(0.005, 0.02, 4).astype(np.float32) if per_channel \
        else np.float32(0.01)
    feeds = {"x": x, "x_s": np.float32(0.05), "x_z": np.uint8(30), "w": w, "w_s": w_s,
             "w_z": np.zeros(np.shape(w_s), np.int8), "y_s": np.float32(0.3),
             "y_z": np.uint8(5), "b": rng.integers(-500, 500, 4).astype(np.int32)}
    feeds = {k: np.asarray(v) for k, v in feeds.items()}
    model = feeds_model("QLinearConv", feeds, 10, np.uint8, pads=[1, 1, 1, 1])
    got = og.Session(from_onnx(model)).run("y", feeds)
    np.testing.assert_array_equal(got, run_onnxruntime(model, feeds))
    # the tie the sweep found: acc -900 * (0.05 * 0.01 / 0.3) is next to -1.5
    tie = {"x": np.zeros((1, 1, 1, 1), np.uint8), "x_s": np.float32(0.05),
           "x_z": np.uint8(30), "w": np.full((1, 1, 1, 1), 30, np.int8),
           "w_s": np.float32(0.01), "w_z": np.int8(0), "y_s": np.float32(0.3),
           "y_z": np.uint8(5)}
    tie = {k: np.asarray(v) for k, v in tie.items()}
    model = feeds_model("QLinearConv", tie, 10, np.uint8)
    got = og.Session(from_onnx(model)).run("y", tie)
    np.testing.assert_array_equal(got, run_onnxruntime(model, tie))


@pytest.mark.parametrize("x", [[0.0, 0.0, 0.0], [1.0, np.nan, -2.0], [np.nan, np.nan], [],
                               [3.0, 3.0], [-1.5, 0.25, 7.0]])
def test_dynamic_quantize_linear_matches_onnxruntime(x):
    feeds = {"x": np.array(x, np.float32)}
    model = feeds_model("DynamicQuantizeLinear", feeds, 13, np.uint8)
    model.graph.node[0].output.extend(["s", "z"])
    model.graph.output.extend([helper.make_tensor_value_info("s", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("z", TensorProto.UINT8, None)])
    got = og.Session(from_onnx(model)).run(["y", "s", "z"], feeds)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("op,a_shape,b_shape,want", [
    ("MatMulInteger", (0, 2, 3), (1, 3, 4), (0, 2, 4)),
    ("MatMulInteger", (1, 2, 3), (None, 3, 4), (None, 2, 4)),
    ("MatMulInteger", (None, 2, 3), (0, 3, 4), (0, 2, 4)),
    ("QLinearMatMul", (1, 0, 2, 3), (5, 1, 3, 4), (5, 0, 2, 4)),
])
def test_integer_matmul_inference_broadcasts_zero_batch_dims(op, a_shape, b_shape, want):
    """A 0 batch dim against a 1 broadcasts to 0 (it was inferred as 1), as numpy's
    matmul gives; the shared MatMul shape rule does it."""
    from onegraph.ops import REGISTRY, TensorInfo

    opdef = REGISTRY.get(op)
    u8, f32 = np.dtype(np.uint8), np.dtype(np.float32)
    a, b = TensorInfo(u8, a_shape), TensorInfo(u8, b_shape)
    if op == "MatMulInteger":
        inputs = [a, b]
    else:
        scalar = [TensorInfo(f32, ()), TensorInfo(u8, ())]
        inputs = [a] + scalar + [b] + scalar + scalar
    got = opdef.infer(opdef.resolve_attrs({}), inputs)[0].shape
    assert got == want
    if None not in a_shape + b_shape:  # the kernel agrees
        ins = [np.zeros(a_shape, u8), np.zeros(b_shape, u8)] if op == "MatMulInteger" else \
            [np.zeros(a_shape, u8), f32.type(1), u8.type(0), np.zeros(b_shape, u8),
             f32.type(1), u8.type(0), f32.type(1), u8.type(0)]
        assert opdef.kernel(ins, opdef.resolve_attrs({}), None)[0].shape == want

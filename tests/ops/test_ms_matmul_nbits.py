"""onnxruntime's weight-quantized matmuls (`ops/ms_matmul_nbits.py`) against onnxruntime.

The oracle is onnxruntime's CPUExecutionProvider. Single-node com.microsoft models are
built with onnx.helper over seeded random packed weights, scales, zero points and
inputs, imported with `from_onnx` and run in a Session; then real models are quantized
by onnxruntime's own tools inside the test (into tmp_path) and run both ways.

Bounds:
* MatMulNBits, float32: |onegraph - onnxruntime| <= NBITS_RTOL * max|Y| (plus the same
  share of |Y|). onnxruntime's accuracy_level 0 path for float32 dequantizes B in
  float32 and runs a float32 GEMM whose blocked kernels sum in another order than
  numpy's; measured: under 1e-6 of max|Y| on every case here, the bound is 1e-5.
  float16: the same float32 computation rounded to float16, bound FP16_RTOL (one
  float16 step; measured: equal on every case here).
* accuracy_level 4 lets onnxruntime quantize A to int8 (measured 0.6% of max|Y| off);
  onegraph computes in float32 at every level, so it gives its level-0 result, checked
  equal, and is within ACC4_RTOL of onnxruntime's.
* GatherBlockQuantized: exact (a float32 subtract and multiply per element).
* DynamicQuantizeMatMul, MatMulIntegerToFloat: exact (measured: every output equal,
  every case here): the integer product is exact and the scaling is onnxruntime's one
  float32 multiply and add.
* Whole models quantized with MatMulNBitsQuantizer: MODEL_NBITS_RTOL of max|Y| (float
  ops around float32 matmuls; measured up to 9e-7 on the encoder, 2e-7 on the GPTs).
* Whole models quantized with quantize_dynamic: every com.microsoft node, run on
  onnxruntime's own inputs to it, gives onnxruntime's output exactly (the real check
  of these kernels). End to end the outputs differ by up to MODEL_DYNAMIC_RTOL of
  max|Y|: the standard float ops upstream are a float32 ulp off onnxruntime's here and
  there (the encoder's Softmax on 78% of its outputs, then LayerNormalization), so a
  DynamicQuantizeLinear downstream gets a scale one ulp apart and shifts codes, and
  four layers of quantized matmuls carry that on (measured on the 4-layer encoder:
  1.6% of max|Y| for int8 weights, 0.6% for uint8; 0 on the GPTs).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError, UnsupportedOpError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from ..ort_int8 import ort_saturates_u8s8, weight_codes  # noqa: E402
from .single_node import node_inputs, onegraph_outputs, ort_outputs  # noqa: E402

MS = "com.microsoft"
_ONNX_TYPE = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
              np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32,
              np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int64): TensorProto.INT64}
NBITS_RTOL = 1e-5
FP16_RTOL = 1e-3
ACC4_RTOL = 2e-2
MODEL_NBITS_RTOL = 1e-5
MODEL_DYNAMIC_RTOL = 3e-2
DATA = os.path.join(os.path.dirname(__file__), "..", "convert", "data", "pytorch_exported")


# --------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------


def _model(op, inputs, feeds, attrs=None, out_dtype=np.float32):
    """A single-node com.microsoft model: `inputs` lists (name, array or None) in the
    op's input order (None = omitted, written as ""); names in `feeds` become graph
    inputs, the other arrays initializers."""
    names, graph_inputs, inits = node_inputs(inputs, feeds)
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, ["Y"], domain=MS, **(attrs or {}))
    graph = helper.make_graph([node], op, graph_inputs, [helper.make_tensor_value_info(
        "Y", _ONNX_TYPE[np.dtype(out_dtype)], None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


_ort, _og = ort_outputs, onegraph_outputs


def _kernel(op, inputs, attrs=None):
    definition = REGISTRY.get(op, MS)
    return definition.kernel(list(inputs), definition.resolve_attrs(attrs or {}), None)[0]


def _infer(op, inputs, attrs=None):
    definition = REGISTRY.get(op, MS)
    infos = [None if v is None else TensorInfo(np.asarray(v).dtype, np.shape(v))
             for _, v in inputs]
    return definition.infer(definition.resolve_attrs(attrs or {}), infos)[0]


def _assert_same(op, inputs, feeds, attrs, out_dtype, rtol=0.0):
    """onegraph == onnxruntime (dtype, shape; values within rtol * max|Y| + rtol |Y|,
    exact for rtol 0), and the op's inference gives the output's dtype and shape."""
    model = _model(op, inputs, feeds, attrs, out_dtype)
    fed = {k: np.asarray(v) for k, v in inputs if k in feeds}
    want = _ort(model, fed)
    got = _og(model, fed)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    w = want.astype(np.float64)
    diff = np.abs(got.astype(np.float64) - w)
    bound = rtol * (np.abs(w).max(initial=0) + np.abs(w))
    assert (diff <= bound).all(), f"{op}: off by up to {diff.max()} (max|Y| " \
                                  f"{np.abs(w).max()})"
    inferred = _infer(op, inputs, attrs)
    assert np.dtype(inferred.dtype) == got.dtype and tuple(inferred.shape) == got.shape
    return got, want


# --------------------------------------------------------------------------------------
# MatMulNBits: the packing, written independently of the kernel
# --------------------------------------------------------------------------------------


def _pack(codes, bits):
    """uint8 codes (< 2^bits) packed low bits first along the last axis."""
    per = 8 // bits
    codes = codes.reshape(codes.shape[:-1] + (-1, per)).astype(np.uint16)
    out = np.zeros(codes.shape[:-1], np.uint16)
    for i in range(per):
        out |= codes[..., i] << (i * bits)
    return out.astype(np.uint8)


def _nbits_case(rng, k, n, block_size, bits, zero_points, bias, a_shape, dtype=np.float32,
                g_idx=False):
    """(inputs, attrs) of a MatMulNBits node with random codes, scales and zero points
    ("none", "uint8" packed, or "float")."""
    k_blocks = -(-k // block_size)
    codes = rng.integers(0, 1 << bits, (n, k_blocks, block_size)).astype(np.uint8)
    b = _pack(codes, bits)
    scales = (rng.random((n, k_blocks)) * 0.1 + 0.01).astype(dtype)
    zp = None
    if zero_points == "uint8":
        zp_row = -(-k_blocks * bits // 8) * 8 // bits
        zp = _pack(rng.integers(0, 1 << bits, (n, zp_row)).astype(np.uint8), bits).reshape(-1)
    elif zero_points == "float":
        zp = (rng.random((n, k_blocks)) * (1 << bits)).astype(dtype)
    gi = None
    if g_idx:
        gi = (np.arange(k) // block_size).astype(np.int32)[rng.permutation(k)]
    inputs = [("A", rng.standard_normal(a_shape + (k,)).astype(dtype)), ("B", b),
              ("scales", scales.reshape(-1) if rng.random() < 0.5 else scales),
              ("zero_points", zp), ("g_idx", gi),
              ("bias", rng.standard_normal(n).astype(dtype) if bias else None)]
    return inputs, {"K": k, "N": n, "bits": bits, "block_size": block_size}


@pytest.mark.parametrize("k, n, block_size", [(64, 24, 16), (100, 24, 32), (256, 40, 64),
                                              (200, 16, 128), (96, 8, 32)])
@pytest.mark.parametrize("bits, zero_points", [(4, "none"), (4, "uint8"), (4, "float"),
                                               (8, "none"), (8, "uint8"), (2, "uint8")])
def test_matmul_nbits(k, n, block_size, bits, zero_points):
    rng = np.random.default_rng([k, n, block_size, bits, len(zero_points)])
    a_shape = (3,) if k % 2 else (2, 5)
    inputs, attrs = _nbits_case(rng, k, n, block_size, bits, zero_points, k % 3 == 1,
                                a_shape)
    _assert_same("MatMulNBits", inputs, {"A"}, attrs, np.float32, NBITS_RTOL)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("a_shape", [(), (7,), (2, 3)])
def test_matmul_nbits_bias_and_ranks(bias, a_shape):
    rng = np.random.default_rng(len(a_shape) + 10 * bias)
    inputs, attrs = _nbits_case(rng, 64, 16, 32, 4, "uint8", bias, a_shape)
    _assert_same("MatMulNBits", inputs, {"A"}, attrs, np.float32, NBITS_RTOL)


@pytest.mark.parametrize("zero_points", ["none", "uint8", "float"])
@pytest.mark.parametrize("bits", [4, 8])
def test_matmul_nbits_float16(bits, zero_points):
    if bits == 8 and zero_points == "float":
        pytest.skip("onnxruntime's CPU kernel refuses 8 bits with float zero points")
    rng = np.random.default_rng(bits)
    inputs, attrs = _nbits_case(rng, 128, 16, 64, bits, zero_points, True, (2, 7),
                                np.float16)
    _assert_same("MatMulNBits", inputs, {"A"}, attrs, np.float16, FP16_RTOL)


@pytest.mark.parametrize("zero_points", ["none", "float"])
def test_matmul_nbits_g_idx(zero_points):
    """g_idx (act-order) picks each k's block: run as onnxruntime does for 4 bits."""
    rng = np.random.default_rng(5)
    inputs, attrs = _nbits_case(rng, 100, 16, 32, 4, zero_points, True, (7,), g_idx=True)
    _assert_same("MatMulNBits", inputs, {"A"}, attrs, np.float32, NBITS_RTOL)


def test_matmul_nbits_accuracy_level_4():
    rng = np.random.default_rng(4)
    inputs, attrs = _nbits_case(rng, 128, 16, 32, 4, "uint8", True, (7,))
    level0 = _kernel("MatMulNBits", [v for _, v in inputs], attrs)
    got, want = _assert_same("MatMulNBits", inputs, {"A"}, dict(attrs, accuracy_level=4),
                             np.float32, ACC4_RTOL)
    np.testing.assert_array_equal(got, level0)


@pytest.mark.parametrize("empty", [(0, 4, 16), (16, 0, 16), (0, 0, 0)])
def test_matmul_nbits_empty_weight(empty):
    """B with packed dims 0 (the spec's omitted projection): Y is the broadcast bias."""
    rng = np.random.default_rng(0)
    inputs, attrs = _nbits_case(rng, 128, 16, 32, 4, "none", True, (3,))
    inputs[1] = ("B", np.zeros(empty, np.uint8))
    got, _ = _assert_same("MatMulNBits", inputs, {"A"}, attrs, np.float32)
    np.testing.assert_array_equal(got, np.broadcast_to(inputs[5][1], (3, 16)))


def test_matmul_nbits_dequantizes_once_per_node(monkeypatch):
    """The dequantized weight is kept in the node's kernel cache: a second run of the
    Session does not unpack B again; a fed (writeable) B is dequantized every call."""
    from onegraph.ops import ms_matmul_nbits

    calls = []
    original = ms_matmul_nbits._nbits_weight
    monkeypatch.setattr(ms_matmul_nbits, "_nbits_weight",
                        lambda *a: calls.append(1) or original(*a))
    rng = np.random.default_rng(1)
    inputs, attrs = _nbits_case(rng, 64, 8, 32, 4, "uint8", False, (2,))
    model = _model("MatMulNBits", inputs, {"A"}, attrs)
    session = onegraph.Session(from_onnx(model))
    a = inputs[0][1]
    first = session.run("Y", {"A": a})
    second = session.run("Y", {"A": a * 2})
    np.testing.assert_allclose(second, first * 2, rtol=1e-6)
    assert len(calls) == 1
    _kernel("MatMulNBits", [v for _, v in inputs], attrs)
    _kernel("MatMulNBits", [v for _, v in inputs], attrs)
    assert len(calls) == 3


# --------------------------------------------------------------------------------------
# DynamicQuantizeMatMul, MatMulIntegerToFloat
# --------------------------------------------------------------------------------------


def _b_params(rng, b_type, n, per_column, zero_point):
    scale = (rng.random(n) * 0.05 + 0.001).astype(np.float32) if per_column \
        else np.float32(0.02)
    zp = None
    if zero_point:
        zp = rng.integers(0, 100, n if per_column else ()).astype(b_type)
    return scale, np.asarray(zp) if zp is not None else None


@pytest.mark.parametrize("b_type", [np.int8, np.uint8])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("zero_point", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_dynamic_quantize_matmul(b_type, per_column, zero_point, bias):
    rng = np.random.default_rng([per_column, zero_point, bias])
    k, n = 64, 24
    b = weight_codes(rng, b_type, (k, n))  # int8 in 7 bits where onnxruntime saturates
    scale, zp = _b_params(rng, b_type, n, per_column, zero_point)
    inputs = [("A", rng.standard_normal((2, 5, k)).astype(np.float32)), ("B", b),
              ("b_scale", scale), ("b_zero_point", zp),
              ("bias", rng.standard_normal(n).astype(np.float32) if bias else None)]
    _assert_same("DynamicQuantizeMatMul", inputs, {"A"}, {}, np.float32)


@pytest.mark.parametrize("a_type, b_type", [(np.uint8, np.int8), (np.int8, np.int8),
                                            (np.uint8, np.uint8)])
@pytest.mark.parametrize("per_column, zero_points, bias", [
    (False, False, False), (True, True, True), (False, True, True), (True, False, True)])
def test_matmul_integer_to_float(a_type, b_type, per_column, zero_points, bias):
    # onnxruntime has no kernel for int8 A with uint8 B
    rng = np.random.default_rng([per_column, zero_points, bias])
    k, n = 48, 20
    ia = np.iinfo(a_type)
    a = rng.integers(ia.min, ia.max + 1, (3, 4, k)).astype(a_type)
    b = weight_codes(rng, b_type, (k, n))  # int8 in 7 bits where onnxruntime saturates
    scale, zp = _b_params(rng, b_type, n, per_column, zero_points)
    inputs = [("A", a), ("B", b), ("a_scale", np.float32(0.013)), ("b_scale", scale),
              ("a_zero_point", np.asarray(a_type(7)) if zero_points else None),
              ("b_zero_point", zp),
              ("bias", rng.standard_normal(n).astype(np.float32) if bias else None)]
    _assert_same("MatMulIntegerToFloat", inputs, {"A"}, {}, np.float32)


def test_matmul_integer_to_float_float16():
    rng = np.random.default_rng(3)
    inputs = [("A", rng.integers(0, 256, (3, 16)).astype(np.uint8)),
              ("B", weight_codes(rng, np.int8, (16, 8))),  # (tests/ort_int8.py)
              ("a_scale", np.float16(0.013)), ("b_scale", np.float16(0.02)),
              ("a_zero_point", np.uint8(3)), ("b_zero_point", None),
              ("bias", rng.standard_normal(8).astype(np.float16))]
    _assert_same("MatMulIntegerToFloat", inputs, {"A"}, {}, np.float16)


# --------------------------------------------------------------------------------------
# GatherBlockQuantized
# --------------------------------------------------------------------------------------

_INDICES = np.array([[3, 0, -1], [2, 2, 5]], np.int64)


def _gbq_case(rng, data_shape, kind, bits, block_size, gather_axis, quantize_axis,
              zero_points, scale_type=np.float32):
    """(inputs, attrs) of a GatherBlockQuantized node: int4 / uint4 codes, or uint8
    bytes holding `bits`-bit codes packed along the last axis."""
    import ml_dtypes

    shape = list(data_shape)
    per = 8 // bits if kind == "uint8" else 1
    if kind == "uint8":
        data = rng.integers(0, 256, shape).astype(np.uint8)
        shape[-1] *= per
    else:
        low, high = (-8, 8) if kind == "int4" else (0, 16)
        data = rng.integers(low, high, shape).astype(getattr(ml_dtypes, kind))
    axis = quantize_axis % len(shape)
    pshape = [-(-d // block_size) if i == axis else d for i, d in enumerate(shape)]
    zp = None
    if zero_points and kind == "uint8":
        zp = rng.integers(0, 256, pshape[:-1] + [-(-pshape[-1] // per)]).astype(np.uint8)
    elif zero_points:
        zp = rng.integers(low, high, pshape).astype(data.dtype)
    idx = _INDICES % shape[gather_axis % len(shape)] if gather_axis else _INDICES
    inputs = [("data", data), ("indices", idx),
              ("scales", (rng.random(pshape) * 0.1 + 0.01).astype(scale_type)),
              ("zero_points", zp)]
    return inputs, {"bits": bits, "block_size": block_size, "gather_axis": gather_axis,
                    "quantize_axis": quantize_axis}


@pytest.mark.parametrize("kind", ["int4", "uint4"])
@pytest.mark.parametrize("zero_points", [False, True])
@pytest.mark.parametrize("data_shape, block_size, gather_axis, quantize_axis", [
    ((10, 64), 32, 0, 1), ((10, 64), 16, 0, -1), ((64, 10), 16, 1, 0), ((64, 10), 32, 0, 0),
    ((6, 48, 5), 16, 1, 2), ((6, 40, 5), 16, 2, 1)])
def test_gather_block_quantized_int4(kind, zero_points, data_shape, block_size,
                                     gather_axis, quantize_axis):
    rng = np.random.default_rng(len(data_shape) + block_size)
    inputs, attrs = _gbq_case(rng, data_shape, kind, 4, block_size, gather_axis,
                              quantize_axis, zero_points)
    _assert_same("GatherBlockQuantized", inputs, {"indices"}, attrs, np.float32)


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("zero_points", [False, True])
@pytest.mark.parametrize("data_shape, block_size", [((10, 40), 16), ((10, 3, 32), 32)])
def test_gather_block_quantized_uint8(bits, zero_points, data_shape, block_size):
    rng = np.random.default_rng(bits)
    shape = data_shape[:-1] + (data_shape[-1] * bits // 8,)
    inputs, attrs = _gbq_case(rng, shape, "uint8", bits, block_size, 0, -1, zero_points)
    _assert_same("GatherBlockQuantized", inputs, {"indices"}, attrs, np.float32)


@pytest.mark.parametrize("kind", ["int4", "uint8"])
def test_gather_block_quantized_float16(kind):
    rng = np.random.default_rng(2)
    inputs, attrs = _gbq_case(rng, (10, 32), kind, 4, 16, 0, 1, True, np.float16)
    inputs[1] = ("indices", _INDICES.astype(np.int32))
    _assert_same("GatherBlockQuantized", inputs, {"indices"}, attrs, np.float16)


# --------------------------------------------------------------------------------------
# Bad inputs: named errors naming the op and the input
# --------------------------------------------------------------------------------------

_A = np.zeros((2, 64), np.float32)
_B = np.zeros((8, 2, 16), np.uint8)
_SC = np.ones(16, np.float32)
_NB = {"K": 64, "N": 8, "block_size": 32}
_I8 = np.zeros((64, 8), np.int8)
_U8D = np.zeros((4, 16), np.uint8)  # GatherBlockQuantized: 4 rows of 32 4-bit codes
_IDX = np.array([0, 3], np.int64)


@pytest.mark.parametrize("op, inputs, attrs, error, words", [
    ("MatMulNBits", [_A, np.zeros((8, 2, 17), np.uint8), _SC], _NB, ShapeError,
     r"MatMulNBits: B of shape \[8, 2, 17\] must be \[N, k_blocks, blob_size\]"),
    ("MatMulNBits", [_A, _B.reshape(8, 32), _SC], _NB, ShapeError, "MatMulNBits: B of shape"),
    ("MatMulNBits", [np.zeros((2, 63), np.float32), _B, _SC], _NB, ShapeError,
     r"MatMulNBits: A of shape \[2, 63\] must end in K = 64"),
    ("MatMulNBits", [_A, _B, _SC], dict(_NB, bits=3), OpAttributeError,
     "MatMulNBits: bits 3 is not supported"),
    ("MatMulNBits", [_A, _B, _SC], dict(_NB, block_size=24), OpAttributeError,
     "MatMulNBits: block_size 24 must be a power of 2"),
    ("MatMulNBits", [_A, _B, _SC], dict(_NB, weight_prepacked=1), OpAttributeError,
     "MatMulNBits: weight_prepacked"),
    ("MatMulNBits", [_A, _B.view(np.int8), _SC], _NB, ShapeError,
     "MatMulNBits: B must be uint8"),
    ("MatMulNBits", [_A.astype(np.float64), _B, _SC], _NB, ShapeError,
     "MatMulNBits: A must be float32 or float16"),
    ("MatMulNBits", [_A, _B, np.ones(15, np.float32)], _NB, ShapeError,
     "MatMulNBits: scales of shape"),
    ("MatMulNBits", [_A, _B, _SC.astype(np.float16)], _NB, ShapeError,
     "MatMulNBits: scales is float16, but A is float32"),
    ("MatMulNBits", [_A, _B, _SC, np.zeros(16, np.uint8)], _NB, ShapeError,
     "MatMulNBits: zero_points of shape"),
    ("MatMulNBits", [_A, _B, _SC, np.zeros(16, np.float16)], _NB, ShapeError,
     "MatMulNBits: zero_points is float16"),
    ("MatMulNBits", [_A, _B, _SC, np.zeros(8, np.uint8), np.zeros(64, np.int32)], _NB,
     UnsupportedOpError, "MatMulNBits: g_idx together with packed uint8 zero_points"),
    ("MatMulNBits", [_A, np.zeros((8, 2, 32), np.uint8), _SC, None,
                     np.zeros(64, np.int32)], dict(_NB, bits=8), UnsupportedOpError,
     "MatMulNBits: g_idx is supported with bits 4 only"),
    ("MatMulNBits", [_A, _B, _SC, None, np.full(64, 2, np.int32)], _NB, ShapeError,
     "MatMulNBits: g_idx holds block indices"),
    ("MatMulNBits", [_A, _B, _SC, None, None, np.zeros(7, np.float32)], _NB, ShapeError,
     r"MatMulNBits: bias of shape \[7\] must be \[N\] = \[8\]"),
    ("DynamicQuantizeMatMul", [_A, np.zeros((63, 8), np.int8), np.float32(1)], {},
     ShapeError, "DynamicQuantizeMatMul: inner dims differ"),
    ("DynamicQuantizeMatMul", [_A, _I8.astype(np.int16), np.float32(1)], {}, ShapeError,
     "DynamicQuantizeMatMul: B must be uint8 or int8"),
    ("DynamicQuantizeMatMul", [_A, _I8, np.ones(3, np.float32)], {}, ShapeError,
     "DynamicQuantizeMatMul: b_scale of shape"),
    ("DynamicQuantizeMatMul", [_A, _I8, np.float32(1), np.uint8(0)], {}, ShapeError,
     "DynamicQuantizeMatMul: b_zero_point is uint8, but must be int8"),
    ("DynamicQuantizeMatMul", [_A.astype(np.float16), _I8, np.float32(1)], {}, ShapeError,
     "DynamicQuantizeMatMul: A must be float32"),
    ("MatMulIntegerToFloat", [_A, _I8, np.float32(1), np.float32(1)], {}, ShapeError,
     "MatMulIntegerToFloat: A must be uint8 or int8"),
    ("MatMulIntegerToFloat", [np.zeros((2, 64), np.uint8), _I8, np.ones(2, np.float32),
                              np.float32(1)], {}, ShapeError,
     "MatMulIntegerToFloat: a_scale of shape"),
    ("MatMulIntegerToFloat", [np.zeros((2, 64), np.uint8), _I8, np.float32(1),
                              np.float32(1), np.int8(0)], {}, ShapeError,
     "MatMulIntegerToFloat: a_zero_point must be one uint8"),
    ("MatMulIntegerToFloat", [np.zeros((2, 64), np.uint8), _I8, np.float32(1),
                              np.float16(1)], {}, ShapeError,
     "MatMulIntegerToFloat: b_scale is float16"),
    ("GatherBlockQuantized", [_U8D, _IDX, np.ones((4, 1), np.float32)],
     {"gather_axis": 1, "block_size": 32}, OpAttributeError,
     "GatherBlockQuantized: uint8 data needs gather_axis 0"),
    ("GatherBlockQuantized", [_U8D, _IDX, np.ones((1, 16), np.float32)],
     {"quantize_axis": 0, "block_size": 16, "bits": 8}, OpAttributeError,
     "GatherBlockQuantized: uint8 data needs quantize_axis to be the last"),
    ("GatherBlockQuantized", [_U8D, _IDX, np.ones((4, 1), np.float32)],
     {"block_size": 32, "bits": 3}, OpAttributeError,
     "GatherBlockQuantized: bits 3 is not supported"),
    ("GatherBlockQuantized", [_U8D, _IDX, np.ones((4, 2), np.float32)],
     {"block_size": 32}, ShapeError, r"GatherBlockQuantized: scales of shape \[4, 2\]"),
    ("GatherBlockQuantized", [_U8D, np.array([4]), np.ones((4, 1), np.float32)],
     {"block_size": 32}, ShapeError, "GatherBlockQuantized: indices out of range"),
    ("GatherBlockQuantized", [_U8D, _IDX.astype(np.float32), np.ones((4, 1), np.float32)],
     {"block_size": 32}, ShapeError, "GatherBlockQuantized: indices must be int32 or int64"),
    ("GatherBlockQuantized", [_U8D, _IDX, np.ones((4, 1), np.float32), np.zeros((4, 1),
                                                                              np.int8)],
     {"block_size": 32}, ShapeError, "GatherBlockQuantized: zero_points is int8"),
    ("GatherBlockQuantized", [_U8D.astype(np.int8), _IDX, np.ones((4, 1), np.float32)],
     {"block_size": 32}, ShapeError, "GatherBlockQuantized: data must be int4, uint4 or uint8"),
])
def test_bad_inputs_raise_named_errors(op, inputs, attrs, error, words):
    with pytest.raises(error, match=words):
        _kernel(op, inputs, attrs)


def test_bad_packed_shape_is_refused_at_import():
    """Inference refuses a B that does not fit K, N, bits and block_size when the model
    is imported or run, with the ShapeError naming the op and the input."""
    rng = np.random.default_rng(0)
    inputs, attrs = _nbits_case(rng, 64, 8, 32, 4, "none", False, (2,))
    good = list(inputs)
    inputs[1] = ("B", np.zeros((8, 3, 16), np.uint8))
    model = _model("MatMulNBits", inputs, {"A"}, attrs)
    with pytest.raises(ShapeError, match=r"MatMulNBits: B of shape \[8, 3, 16\]"):
        onegraph.Session(from_onnx(model)).run("Y", {"A": inputs[0][1]})
    wrong_k = [("A", np.zeros((2, 32), np.float32))] + good[1:]
    with pytest.raises(ShapeError, match="MatMulNBits: A of shape"):
        _infer("MatMulNBits", wrong_k, attrs)


def test_missing_required_attributes():
    for name in ("K", "N", "block_size"):
        attrs = {k: v for k, v in _NB.items() if k != name}
        with pytest.raises(OpAttributeError, match=name):
            REGISTRY.get("MatMulNBits", MS).resolve_attrs(attrs)


# --------------------------------------------------------------------------------------
# Real models, quantized by onnxruntime's tools
# --------------------------------------------------------------------------------------


def _corpus(name):
    with open(os.path.join(DATA, "index.json"), encoding="utf-8") as f:
        entry = json.load(f)[name]
    feeds = {k: np.load(os.path.join(DATA, f), allow_pickle=False)
             for k, f in zip(entry["inputs"], entry["input_files"])}
    return onnx.load(os.path.join(DATA, name)), feeds


def _float_model(which):
    if which == "encoder":
        from ..convert.model_zoo import transformer_encoder, transformer_input

        return transformer_encoder(), {"x": transformer_input()}
    return _corpus(which)


_MODELS = ["encoder", "gpt__dynamo_op23_dyn.onnx", "gpt_sdpa__ts_op17_dyn.onnx"]


def _ms_ops(model):
    return sorted(n.op_type for n in model.graph.node if n.domain == MS)


def _round_trip(model, feeds, outputs, want):
    """to_onnx writes the com.microsoft ops back as they came; onnxruntime runs the
    export and gives the same outputs."""
    exported = to_onnx(from_onnx(model))
    assert {o.domain: o.version for o in exported.opset_import}.get(MS) == 1
    assert _ms_ops(exported) == _ms_ops(model)
    again = _ort(exported, feeds, outputs)
    for a, b in zip(want, again):
        np.testing.assert_array_equal(a, b)


def _assert_close(got, want, rtol, what):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, what
        off = float(np.abs(g.astype(np.float64) - w).max())
        assert off <= rtol * float(np.abs(w).max()), f"{what}: off by {off}"


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("which", _MODELS)
def test_matmul_nbits_quantized_models(which, symmetric):
    """MatMulNBitsQuantizer (4 bits, block_size 32) on the encoder and the GPTs: every
    MatMul with a constant weight becomes MatMulNBits (zero points iff asymmetric)."""
    pytest.importorskip("onnx_ir")  # the quantizer's own dependency
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer)

    float_model, feeds = _float_model(which)
    config = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=symmetric)
    quantizer = MatMulNBitsQuantizer(float_model, algo_config=config)
    quantizer.process()
    model = quantizer.model.model
    nodes = [n for n in model.graph.node if n.domain == MS]
    assert nodes and {n.op_type for n in nodes} == {"MatMulNBits"}
    assert all((len(n.input) > 3 and n.input[3] != "") != symmetric for n in nodes)
    _check_quantized(which, model, feeds, MODEL_NBITS_RTOL)


def _check_quantized(which, model, feeds, rtol):
    outputs = [o.name for o in model.graph.output]
    want = _ort(model, feeds, outputs)
    got = _og(model, feeds, outputs)
    _assert_close(got, want, rtol, which)
    _round_trip(model, feeds, outputs, want)


@pytest.mark.parametrize("symmetric", [True, False])
def test_quantized_embeddings(symmetric):
    """MatMulNBitsQuantizer with Gather among its op types: the GPT's token embedding
    becomes GatherBlockQuantized (int4 data, quantize_axis 1) next to MatMulNBits."""
    pytest.importorskip("onnx_ir")
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer)

    float_model, feeds = _float_model("gpt__dynamo_op23_dyn.onnx")
    config = DefaultWeightOnlyQuantConfig(
        block_size=32, is_symmetric=symmetric, op_types_to_quantize=("MatMul", "Gather"),
        quant_axes=(("MatMul", 0), ("Gather", 1)))
    quantizer = MatMulNBitsQuantizer(float_model, algo_config=config)
    quantizer.process()
    model = quantizer.model.model
    assert set(_ms_ops(model)) == {"GatherBlockQuantized", "MatMulNBits"}
    _check_quantized("gpt with quantized embeddings", model, feeds, MODEL_NBITS_RTOL)


# fusions whose ops live outside this module: left off so the optimized models hold the
# standard ops plus DynamicQuantizeMatMul and MatMulIntegerToFloat
_OTHER_FUSIONS = ["MatMulScaleFusion", "SkipLayerNormFusion", "LayerNormFusion",
                  "SimplifiedLayerNormFusion", "GeluFusion", "BiasGeluFusion",
                  "FastGeluFusion", "QuickGeluFusion", "AttentionFusion",
                  "EmbedLayerNormFusion", "BiasSoftmaxFusion", "GemmActivationFusion",
                  "MatMulAddFusion", "BiasDropoutFusion"]


def _each_node_exact(model, feeds):
    """Every com.microsoft node, run by its onegraph kernel on onnxruntime's own values
    of its inputs, gives onnxruntime's output exactly."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    nodes = [n for n in probe.graph.node if n.domain == MS]
    known = {o.name for o in probe.graph.output}
    names = sorted({i for n in nodes for i in n.input if i} | {n.output[0] for n in nodes})
    inits = {t.name: numpy_helper.to_array(t) for t in probe.graph.initializer}
    fetch = [x for x in names if x not in inits]
    probe.graph.output.extend(onnx.ValueInfoProto(name=x) for x in fetch if x not in known)
    values = dict(zip(fetch, _ort(probe, feeds, fetch)))
    values.update(inits)
    for n in nodes:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        got = _kernel(n.op_type, [values[i] if i else None for i in n.input], attrs)
        np.testing.assert_array_equal(got, values[n.output[0]], err_msg=n.name)


@pytest.mark.parametrize("weight_type", ["QInt8", "QUInt8"])
@pytest.mark.parametrize("which", _MODELS)
def test_dynamic_quantized_models(which, weight_type, tmp_path):
    """quantize_dynamic, then onnxruntime's optimizer (extended level, written out with
    optimized_model_filepath) fuses the integer matmuls into DynamicQuantizeMatMul (and
    MatMulIntegerToFloat for the encoder's activation-by-activation matmuls)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    float_model, feeds = _float_model(which)
    src, quantized, optimized = (tmp_path / "f.onnx", tmp_path / "q.onnx",
                                 tmp_path / "o.onnx")
    onnx.save(float_model, src)
    # 7-bit weights where onnxruntime's int8 products saturate (tests/ort_int8.py)
    quantize_dynamic(str(src), str(quantized), weight_type=getattr(QuantType, weight_type),
                     reduce_range=ort_saturates_u8s8())
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(optimized)
    ort.InferenceSession(str(quantized), options, providers=["CPUExecutionProvider"],
                         disabled_optimizers=_OTHER_FUSIONS)
    model = onnx.load(optimized)
    used = set(_ms_ops(model))
    assert "DynamicQuantizeMatMul" in used
    assert used <= {"DynamicQuantizeMatMul", "MatMulIntegerToFloat"}
    if which == "encoder":
        assert used == {"DynamicQuantizeMatMul", "MatMulIntegerToFloat"}
    _each_node_exact(model, feeds)
    outputs = [o.name for o in model.graph.output]
    want = _ort(model, feeds, outputs)
    got = _og(model, feeds, outputs)
    _assert_close(got, want, MODEL_DYNAMIC_RTOL, which)
    _round_trip(model, feeds, outputs, want)

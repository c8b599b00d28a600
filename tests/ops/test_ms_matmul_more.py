"""MatMulBnb4 and MatMulFpQ4 (`ops/ms_matmul_nbits.py`) against onnxruntime.

The oracle is onnxruntime 1.32's CPUExecutionProvider on one-node com.microsoft models
(A fed, the packed weight an initializer as exported models hold it). MatMulBnb4's
weights come from onnxruntime's own packer (`quantize_matmul_bnb4`, what
`MatMulBnb4Quantizer` calls) and from a whole model quantized by `MatMulBnb4Quantizer`
inside the test; MatMulFpQ4's MLAS Q4 blobs are packed here (`_fpq4_blob`, written from
MLAS's layout independently of the kernel) from random codes, scales and zero points.

Bounds (relative to max|Y|, plus the same share of |Y|): float32 F32_RTOL = 1e-5 (both
dequantize to float32 and run a float32 GEMM, summing in another order; measured up to
7.9e-7, against onnxruntime and against the weights dequantized by hand); float16 A
F16_RTOL = 2e-3, a float16 step (onnxruntime casts around its float32 kernel, as onegraph
computes; measured equal).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from ..ort_int8 import ort_lacks_kernel  # noqa: E402
from .single_node import node_inputs, ort_session  # noqa: E402

MS = "com.microsoft"
F32_RTOL = 1e-5
F16_RTOL = 2e-3
_FP4 = [0.0, 5.208333333e-03, 0.66666667, 1.0, 0.33333333, 0.5, 0.16666667, 0.25, -0.0,
        -5.208333333e-03, -0.66666667, -1.0, -0.33333333, -0.5, -0.16666667, -0.25]
_NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
        -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
        0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
        0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0]


def _model(op, inputs, attrs, out_dtype=np.float32):
    names, graph_inputs, inits = node_inputs(inputs, {"A"})
    node = helper.make_node(op, names, ["Y"], domain=MS, **attrs)
    graph = helper.make_graph([node], op, graph_inputs, [helper.make_tensor_value_info(
        "Y", helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype)), None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _assert_close(got, want, rtol):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    w = np.asarray(want, np.float64)
    diff = np.abs(np.asarray(got, np.float64) - w)
    bound = rtol * (np.abs(w).max(initial=0) + np.abs(w))
    assert (diff <= bound).all(), f"off by up to {diff.max()} (max|Y| {np.abs(w).max()})"


def _run_both(op, inputs, attrs, out_dtype=np.float32):
    """(onegraph's, onnxruntime's) output; onnxruntime's is None where it has no kernel
    for the op on this CPU (MatMulFpQ4 without AVX-512: tests/ort_int8.py)."""
    model = _model(op, inputs, attrs, out_dtype)
    feeds = {"A": inputs[0][1]}
    try:
        want = ort_session(model).run(None, feeds)[0]
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error types
        if not ort_lacks_kernel(e):
            raise
        want = None
    got = onegraph.Session(from_onnx(model)).run("Y", feeds)
    return got, want


def _kernel(op, inputs, attrs):
    definition = REGISTRY.get(op, MS)
    return definition.kernel([v for _, v in inputs], definition.resolve_attrs(attrs), None)[0]


def _infer(op, inputs, attrs):
    definition = REGISTRY.get(op, MS)
    infos = [TensorInfo(np.asarray(v).dtype, np.shape(v), None if k == "A" else np.asarray(v))
             for k, v in inputs]
    return definition.infer(definition.resolve_attrs(attrs), infos)[0]


# --------------------------------------------------------------------------------------
# MatMulBnb4
# --------------------------------------------------------------------------------------


def _bnb4_case(rng, k, n, block_size, quant_type, dtype=np.float32):
    """(packed B, absmax, dequantized W [N, K] by hand) of a random [K, N] weight, packed
    by onnxruntime's quantize_matmul_bnb4 as MatMulBnb4Quantizer does."""
    from onnxruntime.capi._pybind_state import quantize_matmul_bnb4

    w = rng.standard_normal((k, n)).astype(dtype)
    numel = k * n
    packed = np.zeros((numel + 1) // 2, np.uint8)
    absmax = np.zeros(-(-numel // block_size), dtype)
    quantize_matmul_bnb4(packed, np.ascontiguousarray(w.T), absmax, block_size, quant_type,
                         n, k)
    codes = np.stack([packed >> 4, packed & 15], 1).reshape(-1)[:numel]
    book = np.array(_FP4 if quant_type == 0 else _NF4, np.float32)
    scale = np.repeat(absmax.astype(np.float32), block_size)[:numel]
    return packed, absmax, (book[codes] * scale).reshape(n, k)


@pytest.mark.parametrize("k, n, block_size", [(64, 24, 16), (64, 24, 32), (100, 7, 64),
                                              (33, 5, 16), (256, 48, 128)])
@pytest.mark.parametrize("quant_type", [0, 1])
@pytest.mark.parametrize("a_shape", [(3,), (2, 5), ()])
def test_matmul_bnb4(k, n, block_size, quant_type, a_shape):
    rng = np.random.default_rng([k, n, block_size, quant_type, len(a_shape)])
    packed, absmax, w = _bnb4_case(rng, k, n, block_size, quant_type)
    a = rng.standard_normal(a_shape + (k,)).astype(np.float32)
    inputs = [("A", a), ("B", packed), ("absmax", absmax)]
    attrs = dict(K=k, N=n, block_size=block_size, quant_type=quant_type)
    got, want = _run_both("MatMulBnb4", inputs, attrs)
    _assert_close(got, want, F32_RTOL)
    _assert_close(got, (a.astype(np.float64) @ w.T.astype(np.float64)).astype(np.float32),
                  F32_RTOL)
    inferred = _infer("MatMulBnb4", inputs, attrs)
    assert tuple(inferred.shape) == got.shape and inferred.dtype == got.dtype


def test_matmul_bnb4_float16():
    rng = np.random.default_rng(16)
    packed, absmax, _ = _bnb4_case(rng, 128, 32, 64, 1, np.float16)
    a = rng.standard_normal((4, 128)).astype(np.float16)
    got, want = _run_both("MatMulBnb4", [("A", a), ("B", packed), ("absmax", absmax)],
                          dict(K=128, N=32, block_size=64, quant_type=1), np.float16)
    _assert_close(got, want, F16_RTOL)


def test_matmul_bnb4_trans_b_0():
    """transB=0: Y = A @ W, A [..., N]. onnxruntime's CPU kernel multiplies by the wrong
    layout here (its GEMM is always B-transposed, reading past the weight), so the
    oracle is the dequantized weight by hand; its result is shown to differ."""
    rng = np.random.default_rng(0)
    packed, absmax, w = _bnb4_case(rng, 64, 24, 32, 1)
    a = rng.standard_normal((3, 24)).astype(np.float32)
    inputs = [("A", a), ("B", packed), ("absmax", absmax)]
    attrs = dict(K=64, N=24, block_size=32, quant_type=1, transB=0)
    got, want = _run_both("MatMulBnb4", inputs, attrs)
    _assert_close(got, (a.astype(np.float64) @ w.astype(np.float64)).astype(np.float32),
                  F32_RTOL)
    assert got.shape == want.shape == (3, 64) and np.abs(got - want).max() > 1.0
    assert tuple(_infer("MatMulBnb4", inputs, attrs).shape) == (3, 64)


def test_matmul_bnb4_quantizer_model(tmp_path):
    """A two-layer model quantized by onnxruntime's MatMulBnb4Quantizer, run both ways."""
    from onnxruntime.quantization.matmul_bnb4_quantizer import MatMulBnb4Quantizer

    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((64, 48)).astype(np.float32)
    w2 = rng.standard_normal((48, 16)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["y"])]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(w1, "w1"), onnx.numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=9)
    quantizer = MatMulBnb4Quantizer(model, MatMulBnb4Quantizer.NF4, 32)
    quantizer.process()
    quantized = quantizer.model.model
    assert [n.op_type for n in quantized.graph.node].count("MatMulBnb4") == 2
    x = rng.standard_normal((5, 64)).astype(np.float32)
    want = ort_session(quantized).run(None, {"x": x})[0]
    got = onegraph.Session(from_onnx(quantized)).run("y", {"x": x})
    _assert_close(got, want, F32_RTOL)
    exported = to_onnx(from_onnx(quantized))
    _assert_close(ort_session(exported).run(None, {"x": x})[0], want, 0.0)


def test_matmul_bnb4_errors():
    rng = np.random.default_rng(1)
    packed, absmax, _ = _bnb4_case(rng, 64, 8, 32, 0)
    a = np.zeros((2, 64), np.float32)
    attrs = dict(K=64, N=8, block_size=32, quant_type=0)
    with pytest.raises(OpAttributeError, match="block_size"):
        _kernel("MatMulBnb4", [("A", a), ("B", packed), ("absmax", absmax)],
                dict(attrs, block_size=24))
    with pytest.raises(OpAttributeError, match="quant_type"):
        _kernel("MatMulBnb4", [("A", a), ("B", packed), ("absmax", absmax)],
                dict(attrs, quant_type=2))
    with pytest.raises(ShapeError, match="B must be uint8"):
        _kernel("MatMulBnb4", [("A", a), ("B", packed[:-1]), ("absmax", absmax)], attrs)
    with pytest.raises(ShapeError, match="absmax of shape"):
        _kernel("MatMulBnb4", [("A", a), ("B", packed), ("absmax", absmax[:-1])], attrs)
    with pytest.raises(ShapeError, match="must end in K"):
        _kernel("MatMulBnb4", [("A", a[:, :8]), ("B", packed), ("absmax", absmax)], attrs)
    with pytest.raises(ShapeError, match="absmax is float16"):
        _kernel("MatMulBnb4", [("A", a), ("B", packed), ("absmax", absmax.astype(np.float16))],
                attrs)


# --------------------------------------------------------------------------------------
# MatMulFpQ4
# --------------------------------------------------------------------------------------


def _fpq4_blob(codes, scales, zero_points, block):
    """MLAS's Q4 blob of codes [N, blocks, block] (< 16), float32 scales [N, blocks] and
    optional uint8 zero points: per column and block, the scale's 4 little-endian bytes,
    the zero point, then per 32 codes 16 bytes (code l low, code l + 16 high)."""
    out = bytearray()
    n, blocks, _ = codes.shape
    for col in range(n):
        for b in range(blocks):
            out += struct.pack("<f", float(scales[col, b]))
            if zero_points is not None:
                out.append(int(zero_points[col, b]))
            for start in range(0, block, 32):
                chunk = codes[col, b, start:start + 32].astype(np.uint8)
                out += bytes(chunk[:16] | (chunk[16:] << 4))
    return np.frombuffer(bytes(out), np.uint8).copy()


def _fpq4_case(rng, k, n, kind):
    block = 64 if kind == 2 else 32
    blocks = -(-k // block)
    codes = rng.integers(0, 16, (n, blocks, block)).astype(np.uint8)
    scales = (rng.random((n, blocks)) * 0.1 + 0.005).astype(np.float32)
    zero = rng.integers(0, 16, (n, blocks)).astype(np.uint8) if kind == 1 else None
    w = (codes.astype(np.float64) - (zero[:, :, None] if kind == 1 else 8)) * \
        scales[:, :, None].astype(np.float64)
    return _fpq4_blob(codes, scales, zero, block), w.reshape(n, -1)[:, :k].T


@pytest.mark.parametrize("k, n", [(64, 8), (50, 5), (40, 3), (256, 33), (32, 1)])
@pytest.mark.parametrize("kind", [0, 1])
@pytest.mark.parametrize("a_shape", [(2, 3), (7,), ()])
def test_matmul_fpq4(k, n, kind, a_shape):
    rng = np.random.default_rng([k, n, kind, len(a_shape)])
    blob, w = _fpq4_case(rng, k, n, kind)
    a = rng.standard_normal(a_shape + (k,)).astype(np.float32)
    inputs = [("A", a), ("B", blob), ("B_shape", np.array([k, n], np.int64))]
    attrs = dict(blk_quant_type=kind)
    got, want = _run_both("MatMulFpQ4", inputs, attrs)
    if want is not None:
        _assert_close(got, want, F32_RTOL)
    _assert_close(got, (a.astype(np.float64) @ w).astype(np.float32), F32_RTOL)
    assert tuple(_infer("MatMulFpQ4", inputs, attrs).shape) == got.shape


def test_matmul_fpq4_default_type_and_block_64():
    """blk_quant_type defaults to 1 (blocks of 32 with zero points); type 2 (blocks of
    64, symmetric, per the schema) runs by the schema: onnxruntime's CPU kernel reads
    every type but 0 as type 1 and refuses the type-2 blob by its size."""
    rng = np.random.default_rng(2)
    blob, w = _fpq4_case(rng, 96, 6, 1)
    a = rng.standard_normal((4, 96)).astype(np.float32)
    inputs = [("A", a), ("B", blob), ("B_shape", np.array([96, 6], np.int64))]
    got, want = _run_both("MatMulFpQ4", inputs, {})
    if want is not None:
        _assert_close(got, want, F32_RTOL)
    _assert_close(got, (a.astype(np.float64) @ w).astype(np.float32), F32_RTOL)
    blob, w = _fpq4_case(rng, 100, 6, 2)
    inputs = [("A", a[:, :1].repeat(100, 1)), ("B", blob),
              ("B_shape", np.array([100, 6], np.int64))]
    got = _kernel("MatMulFpQ4", inputs, dict(blk_quant_type=2))
    _assert_close(got, (inputs[0][1].astype(np.float64) @ w).astype(np.float32), F32_RTOL)
    # onnxruntime refuses the type-2 blob (by its size; where it has no MatMulFpQ4
    # kernel for this CPU, every blob: tests/ort_int8.py)
    model = _model("MatMulFpQ4", inputs, dict(blk_quant_type=2), np.float32)
    with pytest.raises(Exception):
        ort_session(model).run(None, {"A": inputs[0][1]})


def test_matmul_fpq4_errors():
    rng = np.random.default_rng(3)
    blob, _ = _fpq4_case(rng, 64, 4, 0)
    a = np.zeros((2, 64), np.float32)
    shape = np.array([64, 4], np.int64)
    with pytest.raises(ShapeError, match="blob of"):
        _kernel("MatMulFpQ4", [("A", a), ("B", blob[:-1]), ("B_shape", shape)],
                dict(blk_quant_type=0))
    with pytest.raises(ShapeError, match="blob of"):
        _kernel("MatMulFpQ4", [("A", a), ("B", blob), ("B_shape", shape)], {})
    with pytest.raises(ShapeError, match="must end in K"):
        _kernel("MatMulFpQ4", [("A", a[:, :3]), ("B", blob), ("B_shape", shape)],
                dict(blk_quant_type=0))
    with pytest.raises(ShapeError, match="B_shape"):
        _kernel("MatMulFpQ4", [("A", a), ("B", blob), ("B_shape", shape[:1])],
                dict(blk_quant_type=0))
    with pytest.raises(ShapeError, match="float32"):
        _kernel("MatMulFpQ4", [("A", a.astype(np.float16)), ("B", blob), ("B_shape", shape)],
                dict(blk_quant_type=0))
    with pytest.raises(OpAttributeError, match="blk_quant_type"):
        _kernel("MatMulFpQ4", [("A", a), ("B", blob), ("B_shape", shape)],
                dict(blk_quant_type=4))


def test_dequantized_weights_are_cached_per_node(monkeypatch):
    """Both ops keep their dequantized constant weight in the node's kernel cache: a
    second Session run does not decode the weight again."""
    from onegraph.ops import ms_matmul_nbits

    calls = []
    for name in ("_bnb4_weight", "_fpq4_weight"):
        original = getattr(ms_matmul_nbits, name)
        monkeypatch.setattr(ms_matmul_nbits, name,
                            lambda *a, _f=original: calls.append(1) or _f(*a))
    rng = np.random.default_rng(4)
    packed, absmax, _ = _bnb4_case(rng, 64, 8, 32, 1)
    blob, _ = _fpq4_case(rng, 64, 8, 1)
    for op, inputs, attrs in (
            ("MatMulBnb4", [("A", None), ("B", packed), ("absmax", absmax)],
             dict(K=64, N=8, block_size=32, quant_type=1)),
            ("MatMulFpQ4", [("A", None), ("B", blob), ("B_shape", np.array([64, 8]))], {})):
        calls.clear()
        a = rng.standard_normal((2, 64)).astype(np.float32)
        session = onegraph.Session(from_onnx(_model(op, [("A", a)] + inputs[1:], attrs)))
        first = session.run("Y", {"A": a})
        np.testing.assert_allclose(session.run("Y", {"A": a * 2}), first * 2, rtol=1e-6)
        assert len(calls) == 1, op

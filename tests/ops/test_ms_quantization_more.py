"""More of onnxruntime's quantized contrib ops (`ops/ms_quantization_more.py`) against
onnxruntime.

The oracle is onnxruntime 1.32's CPUExecutionProvider, which has kernels for every op
here (checked: it has none for QLinearReduceMean and ReduceSumInteger, which are not
implemented). Single-node models are built with onnx.helper over seeded random data, scales and
zero points, imported with `from_onnx` and run in a Session.

Bounds (measured on this suite):
* com.microsoft QuantizeLinear / DequantizeLinear (8/16/4-bit, per tensor and per axis,
  float32 and float16, .5 ties and saturation), MatMulInteger16, QLinearWhere,
  QLinearConv (NCHW and NHWC, per-tensor and per-channel w_scale): exact equality, 0
  steps off. int4/uint4 results, which onnxruntime's Python binding cannot return, are
  compared through a DequantizeLinear after them. QLinearWhere is also checked against
  the schema's formula, written here.
* QAttention: |difference| <= 1e-5 * max(1, max |output|) (`_close`). The integer GEMM
  and its scaling are exact (one token: equal to onnxruntime bit for bit); the
  attention after it is float32 with onnxruntime's own exp and summation order.
  Measured: 1e-6 with 12 input features, 2.4e-4 at outputs of magnitude 70 with 64
  (3.4e-6 relative), over 30 seeds.
* QEmbedLayerNormalization: rtol = atol = 1e-5 (measured 5.2e-6 at most, hidden 64, 30
  seeds); mask_index_out exact (it counts the mask's ones, not its nonzeros).
* DynamicQuantizeLSTM: rtol = atol = 1e-6 against onnxruntime on one thread (measured
  2.4e-7: its logistic/tanh approximations; the dynamic quantization and integer GEMMs
  are exact). onnxruntime on more threads quantizes H_{t-1} in row chunks and moves by
  up to 3e-3; see test_dynamic_quantize_lstm.
* Whole models quantized by onnxruntime's own tool: a 2-layer BERT (fused by its
  transformers optimizer) through `quantize_dynamic` (QAttention,
  QEmbedLayerNormalization, DynamicQuantizeLinear, MatMulInteger): rtol = atol = 1e-5
  (measured 7.2e-7 over 10 seeds), and written back by to_onnx; a small conv/matmul
  net through `quantize_static` with UseQDQContribOps and 16-bit activations: exactly
  onnxruntime's outputs for the file as written (its graph optimizations, which drop
  some Q/DQ pairs, move its own outputs by up to 0.0075, so they are off there); a
  bidirectional LSTM through `quantize_dynamic` (DynamicQuantizeLSTM) at 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
ml_dtypes = pytest.importorskip("ml_dtypes")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError, UnsupportedOpError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from ..ort_int8 import ort_saturates_u8s8, weight_codes  # noqa: E402
from .single_node import node_inputs, ort_session  # noqa: E402

MS = "com.microsoft"
TOL = dict(rtol=1e-5, atol=1e-5)
_INT4 = np.dtype(ml_dtypes.int4)
_UINT4 = np.dtype(ml_dtypes.uint4)


# --------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------


def _elem(dtype):
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _model(op, inputs, feeds, outputs, attrs=None, extra_nodes=()):
    """A com.microsoft `op` node: `inputs` (name, array or None) in the op's order, the
    names in `feeds` graph inputs, the other arrays initializers; `outputs` (name,
    numpy dtype) the node's outputs, all graph outputs unless `extra_nodes` (nodes
    after it, whose last output is the graph's) are given."""
    names, graph_inputs, inits = node_inputs(inputs, feeds)
    nodes = [helper.make_node(op, names, [n for n, _ in outputs], domain=MS,
                              **(attrs or {}))] + list(extra_nodes)
    if extra_nodes:
        outs = [helper.make_tensor_value_info(extra_nodes[-1].output[0], TensorProto.FLOAT,
                                              None)]
    else:
        outs = [helper.make_tensor_value_info(n, _elem(t), None) for n, t in outputs]
    graph = helper.make_graph(nodes, op, graph_inputs, outs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _run_both(model, feeds, optimize=True):
    """(onnxruntime's outputs, onegraph's outputs) of `model` on `feeds`; onnxruntime's
    graph optimizations off unless `optimize`."""
    want = ort_session(model, optimize).run(None, feeds)
    names = [o.name for o in model.graph.output]
    got = onegraph.Session(from_onnx(model)).run(names, feeds)
    return want, got


def _check_infer(op, inputs, attrs, got):
    """The op's inference gives the dtypes and shapes of the outputs `got`."""
    definition = REGISTRY.get(op, MS)
    infos = [None if v is None else TensorInfo(np.asarray(v).dtype, np.shape(v))
             for _, v in inputs]
    inferred = definition.infer(definition.resolve_attrs(attrs or {}), infos)
    for info, g in zip(inferred, got):
        assert np.dtype(info.dtype) == g.dtype and tuple(info.shape) == g.shape, \
            (info, g.dtype, g.shape)


def _kernel(op, inputs, attrs=None, num_outputs=None):
    definition = REGISTRY.get(op, MS)
    return definition.kernel(list(inputs), definition.resolve_attrs(
        attrs or {}, num_outputs=num_outputs), None)


def _codes(rng, dtype, shape):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else ml_dtypes.iinfo(dtype)
    return rng.integers(int(info.min), int(info.max) + 1, shape).astype(dtype)


def _scale(rng, low, high, n=None, dtype=np.float32):
    return np.asarray(np.exp(rng.uniform(np.log(low), np.log(high), n)), dtype=dtype)


# --------------------------------------------------------------------------------------
# QuantizeLinear / DequantizeLinear (com.microsoft)
# --------------------------------------------------------------------------------------

_Q_TYPES = [np.int8, np.uint8, np.int16, np.uint16]


@pytest.mark.parametrize("qtype", _Q_TYPES)
@pytest.mark.parametrize("ftype", [np.float32, np.float16])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_quantize_dequantize(qtype, ftype, axis):
    """Quantize then dequantize: both outputs equal onnxruntime's exactly. `axis` None
    is per tensor; otherwise the scale and zero point are per slice along it (axis
    omitted from the node when it is 1, the default)."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 5, 4)) * 40).astype(ftype)
    n = None if axis is None else x.shape[axis]
    low, high = (0.3, 1.0) if np.dtype(qtype).itemsize == 1 else (0.002, 0.01)
    scale = _scale(rng, low, high, n, ftype)
    if axis is None:
        scale = np.asarray(0.5, ftype) if ftype == np.float32 else scale
    zp = _codes(rng, qtype, () if n is None else (n,))
    attrs = {} if axis in (None, 1) else {"axis": axis}
    inputs = [("x", x), ("s", scale), ("z", zp)]
    for op, ins, outs in (("QuantizeLinear", inputs, [("y", qtype)]),
                          ("DequantizeLinear", [("x", _codes(rng, qtype, x.shape)),
                                                ("s", scale), ("z", zp)], [("y", ftype)])):
        model = _model(op, ins, {"x"}, outs, attrs)
        feeds = {"x": ins[0][1]}
        (want,), (got,) = _run_both(model, feeds)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        _check_infer(op, ins, attrs, [got])


@pytest.mark.parametrize("qtype", _Q_TYPES)
@pytest.mark.parametrize("ftype", [np.float32, np.float16])
def test_quantize_ties_and_saturation(qtype, ftype):
    """x / scale exactly on .5 ties (rounded half to even) and far outside the range
    (saturated), per tensor and per axis with power-of-two scales."""
    x = ((np.arange(-40, 40) + 0.5) * 0.25).astype(ftype).reshape(8, 10)
    x[0, :3] = [1e4, -1e4, 0]
    zp = np.asarray(3, qtype)
    for scale, attrs in ((np.asarray(0.25, ftype), {}),
                         (np.asarray([0.25, 0.5] * 4, ftype), {"axis": 0}),
                         (np.asarray([0.125, 0.25] * 5, ftype), {})):
        z = zp if scale.ndim == 0 else np.full(scale.shape, zp, qtype)
        model = _model("QuantizeLinear", [("x", x), ("s", scale), ("z", z)], {"x"},
                       [("y", qtype)], attrs)
        (want,), (got,) = _run_both(model, {"x": x})
        np.testing.assert_array_equal(got, want)


def test_quantize_without_zero_point_is_uint8():
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((4, 6)) * 30).astype(np.float32)
    inputs = [("x", x), ("s", np.float32(0.3))]
    model = _model("QuantizeLinear", inputs, {"x"}, [("y", np.uint8)])
    (want,), (got,) = _run_both(model, {"x": x})
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)
    dq = _model("DequantizeLinear", [("x", want), ("s", np.float32(0.3))], {"x"},
                [("y", np.float32)])
    (w2,), (g2,) = _run_both(dq, {"x": want})
    np.testing.assert_array_equal(g2, w2)


@pytest.mark.parametrize("qtype", [_INT4, _UINT4])
@pytest.mark.parametrize("per_axis", [False, True])
def test_int4_quantize_through_dequantize(qtype, per_axis):
    """int4/uint4: onnxruntime cannot hand int4 arrays to Python, so Q is followed by a
    contrib DQ in one model (compared exactly), and onegraph's Q output alone is checked
    against the DQ input it implies."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 6)) * 3).astype(np.float32)
    scale = _scale(rng, 0.2, 0.6, 6) if per_axis else np.float32(0.4)
    zp = _codes(rng, qtype, (6,) if per_axis else ())
    dq = helper.make_node("DequantizeLinear", ["y", "s", "z"], ["back"], domain=MS)
    model = _model("QuantizeLinear", [("x", x), ("s", scale), ("z", zp)], {"x"},
                   [("y", qtype)], extra_nodes=[dq])
    (want,), (got,) = _run_both(model, {"x": x})
    np.testing.assert_array_equal(got, want)
    q = _kernel("QuantizeLinear", [x, scale, zp])[0]
    assert q.dtype == qtype
    # the int4 codes themselves, from onnxruntime's dequantized values
    codes = np.rint(want / scale).astype(np.int64) + zp.astype(np.int64)
    np.testing.assert_array_equal(q.astype(np.int64), codes)


def test_dequantize_int32_and_int4_initializer():
    """int32 (what the quantizer writes for biases) and int4/uint4 initializers, per
    axis, into float32 and float16."""
    rng = np.random.default_rng(6)
    x32 = rng.integers(-2**20, 2**20, (3, 5)).astype(np.int32)
    s = _scale(rng, 1e-4, 1e-3, 5)
    for ins, feeds in (([("x", x32), ("s", s), ("z", np.zeros(5, np.int32))], {"x"}),
                       ([("x", _codes(rng, _INT4, (3, 5))), ("s", s),
                         ("z", _codes(rng, _INT4, (5,)))], {"s"}),
                       ([("x", _codes(rng, _UINT4, (3, 5))), ("s", s.astype(np.float16)),
                         ("z", _codes(rng, _UINT4, (5,)))], {"s"})):
        model = _model("DequantizeLinear", ins, feeds, [("y", ins[1][1].dtype)])
        fed = {k: v for k, v in ins if k in feeds}
        (want,), (got,) = _run_both(model, fed)
        np.testing.assert_array_equal(got, want)


_QDQ_ERRORS = [
    ("QuantizeLinear", [np.zeros((2, 3), np.float32), np.float16(1)], {}, ShapeError,
     "QuantizeLinear: y_scale is float16, but x is float32"),
    ("QuantizeLinear", [np.zeros((2, 3), np.int32), np.float32(1)], {}, ShapeError,
     "QuantizeLinear: x must be float32 or float16"),
    ("QuantizeLinear", [np.zeros((2, 3), np.float32), np.ones(3, np.float32),
                        np.zeros(2, np.uint8)], {}, ShapeError, "must have one shape"),
    ("QuantizeLinear", [np.zeros((2, 3), np.float32), np.ones((2, 1), np.float32)], {},
     ShapeError, "no block_size"),
    ("QuantizeLinear", [np.zeros((2, 3), np.float32), np.ones(3, np.float32)],
     {"axis": 2}, OpAttributeError, "axis 2 is out of range"),
    ("QuantizeLinear", [np.zeros((2, 3), np.float32), np.ones(2, np.float32)], {},
     ShapeError, "per-axis scale of 2 values does not match"),
    ("QuantizeLinear", [np.zeros((2, 3), np.float32), np.float32(1), np.int32(0)], {},
     ShapeError, "y_zero_point must be int8, uint8"),
    ("DequantizeLinear", [np.zeros((2, 3), np.int8), np.float32(1), np.uint8(0)], {},
     ShapeError, "x_zero_point is uint8, but x is int8"),
    ("DequantizeLinear", [np.zeros((2, 3), np.float32), np.float32(1)], {}, ShapeError,
     "DequantizeLinear: x must be int8"),
    ("DequantizeLinear", [np.zeros((2, 3), np.int8), np.int32(1)], {}, ShapeError,
     "x_scale must be float32 or float16"),
]


@pytest.mark.parametrize("op, inputs, attrs, error, words", _QDQ_ERRORS)
def test_qdq_errors(op, inputs, attrs, error, words):
    with pytest.raises(error, match=words):
        _kernel(op, inputs, attrs)


# --------------------------------------------------------------------------------------
# QAttention
# --------------------------------------------------------------------------------------


def _close(got, want):
    """|got - want| <= 1e-5 * max(1, max |want|): float32 attention over scores in the
    hundreds (a GEMM of 8-bit codes) carries onnxruntime's float32 rounding (its own exp
    and summation order) at that scale."""
    assert got.shape == want.shape and got.dtype == want.dtype
    bound = 1e-5 * max(1.0, float(np.abs(want).max()))
    assert np.abs(got.astype(np.float64) - want).max() <= bound


def _qattention_inputs(rng, batch=2, seq=5, d_in=12, hidden=8, wtype=np.int8,
                       per_column=False, mask=None):
    n = 3 * hidden
    return [("input", _codes(rng, np.uint8, (batch, seq, d_in))),
            # int8 within [-64, 63] where onnxruntime saturates (tests/ort_int8.py)
            ("weight", weight_codes(rng, wtype, (d_in, n))),
            ("bias", (rng.standard_normal(n) * 0.1).astype(np.float32)),
            ("input_scale", _scale(rng, 0.005, 0.02)),
            ("weight_scale", _scale(rng, 0.005, 0.02, n if per_column else None)),
            ("mask_index", mask),
            ("input_zero_point", _codes(rng, np.uint8, ())),
            ("weight_zero_point", _codes(rng, wtype, (n,) if per_column else ()))]


_MASKS = {"none": None, "lengths": np.array([5, 3], np.int32),
          "2d": np.array([[1, 1, 1, 1, 1], [1, 1, 0, 1, 0]], np.int32),
          "3d": (np.random.default_rng(0).random((2, 5, 5)) > 0.3).astype(np.int32)}


@pytest.mark.parametrize("wtype", [np.int8, np.uint8])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("mask", list(_MASKS))
@pytest.mark.parametrize("d_in", [12, 64])
def test_qattention(wtype, per_column, mask, d_in):
    rng = np.random.default_rng(7)
    inputs = _qattention_inputs(rng, d_in=d_in, wtype=wtype, per_column=per_column,
                                mask=_MASKS[mask])
    attrs = {"num_heads": 2}
    model = _model("QAttention", inputs, {"input"}, [("y", np.float32)], attrs)
    feeds = {"input": inputs[0][1]}
    (want,), (got,) = _run_both(model, feeds)
    _close(got, want)
    _check_infer("QAttention", inputs, attrs, [got])


@pytest.mark.parametrize("attrs", [{"num_heads": 4, "unidirectional": 1},
                                   {"num_heads": 2, "scale": 0.1},
                                   {"num_heads": 1, "mask_filter_value": -50.0}])
def test_qattention_attributes_and_present(attrs):
    """unidirectional, scale, mask_filter_value; both outputs (present = stack(K, V)),
    optional zero points left out."""
    rng = np.random.default_rng(8)
    inputs = _qattention_inputs(rng, mask=_MASKS["2d"])[:6]
    model = _model("QAttention", inputs, {"input"}, [("y", np.float32),
                                                     ("present", np.float32)], attrs)
    feeds = {"input": inputs[0][1]}
    want, got = _run_both(model, feeds)
    for w, g in zip(want, got):
        _close(g, w)
    _check_infer("QAttention", inputs, attrs, got)


def test_qattention_gemm_is_int8_then_scale():
    """The QKV projection is the integer GEMM scaled once: with one token the softmax
    is exactly 1 and the output is V, which equals onnxruntime's bit for bit and
    float32(acc) * float32(input_scale * weight_scale) + bias of V's columns."""
    rng = np.random.default_rng(9)
    inputs = dict(_qattention_inputs(rng, batch=1, seq=1))
    inputs["mask_index"] = np.array([1], np.int32)
    y = _kernel("QAttention", list(inputs.values()), {"num_heads": 2})[0]
    model = _model("QAttention", list(inputs.items()), {"input"}, [("y", np.float32)],
                   {"num_heads": 2})
    (from_ort,), _ = _run_both(model, {"input": inputs["input"]})
    np.testing.assert_array_equal(y, from_ort)
    x = inputs["input"].astype(np.int64) - int(inputs["input_zero_point"])
    w = inputs["weight"].astype(np.int64) - int(inputs["weight_zero_point"])
    acc = (x @ w)[..., 16:]
    scale = np.float32(inputs["weight_scale"] * inputs["input_scale"])
    want = acc.astype(np.float32) * scale + inputs["bias"][16:]
    np.testing.assert_array_equal(y, want)


_QATT_ERRORS = [
    (dict(past=np.zeros((2, 2, 2, 0, 4), np.float32)), {}, UnsupportedOpError,
     "QAttention: the past input"),
    ({}, {"do_rotary": 1}, UnsupportedOpError, "do_rotary=1 is not supported"),
    (dict(input=np.zeros((2, 5, 12), np.int8)), {}, UnsupportedOpError,
     "QAttention: int8 input"),
    (dict(bias=np.zeros(24, np.float16)), {}, UnsupportedOpError, "float16 bias"),
    (dict(weight=np.zeros((12, 25), np.int8)), {}, ShapeError, "3 \\* hidden"),
    (dict(weight=np.zeros((11, 24), np.int8)), {}, ShapeError, "input must be"),
    (dict(weight_scale=np.ones(5, np.float32)), {}, ShapeError,
     "weight_scale of shape \\[5\\]"),
    (dict(mask_index=np.ones((2, 7), np.int32)), {}, UnsupportedOpError,
     "QAttention: mask_index of shape \\[2, 7\\]"),
    (dict(input_zero_point=np.int8(0)), {}, ShapeError,
     "input_zero_point is int8, but the tensor"),
    ({}, {"num_heads": 0}, OpAttributeError, "num_heads must be positive"),
    ({}, {"num_heads": 3}, ShapeError, "multiple of num_heads 3"),
]


@pytest.mark.parametrize("change, attrs, error, words", _QATT_ERRORS)
def test_qattention_errors(change, attrs, error, words):
    rng = np.random.default_rng(10)
    inputs = dict(_qattention_inputs(rng))
    inputs["past"] = None
    inputs.update(change)
    with pytest.raises(error, match=words):
        _kernel("QAttention", list(inputs.values()), {"num_heads": 2, **attrs})


# --------------------------------------------------------------------------------------
# QEmbedLayerNormalization
# --------------------------------------------------------------------------------------


def _qembed_inputs(rng, dtype=np.uint8, segments=True, mask=True, batch=2, seq=6,
                   hidden=8):
    def table(*shape):
        return _codes(rng, dtype, shape), _scale(rng, 0.01, 0.05), _codes(rng, dtype, ())
    word, pos, seg, gamma, beta = table(20, hidden), table(9, hidden), table(3, hidden), \
        table(hidden), table(hidden)
    ids = rng.integers(0, 20, (batch, seq)).astype(np.int32)
    seg_ids = rng.integers(0, 3, (batch, seq)).astype(np.int32) if segments else None
    # 2s too: onnxruntime counts the ones only
    m = rng.integers(0, 3, (batch, seq)).astype(np.int32) if mask else None
    tables = (word, pos, seg if segments else (None, None, None), gamma, beta)
    return [("input_ids", ids), ("segment_ids", seg_ids), ("word", word[0]),
            ("pos", pos[0]), ("seg", tables[2][0]), ("gamma", gamma[0]), ("beta", beta[0]),
            ("mask", m)] + [(f"s{k}", t[1]) for k, t in enumerate(tables)] + \
        [(f"z{k}", t[2]) for k, t in enumerate(tables)]


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("segments, mask", [(True, True), (False, False), (True, False)])
def test_qembed_layer_norm(dtype, segments, mask):
    rng = np.random.default_rng(11)
    inputs = _qembed_inputs(rng, dtype, segments, mask)
    feeds = {k for k, _ in inputs[:2] + inputs[7:8]}
    outs = [("y", np.float32), ("mask_index", np.int32)]
    model = _model("QEmbedLayerNormalization", inputs, feeds, outs, {"epsilon": 1e-5})
    fed = {k: v for k, v in inputs if k in feeds and v is not None}
    want, got = _run_both(model, fed)
    np.testing.assert_allclose(got[0], want[0], **TOL)
    np.testing.assert_array_equal(got[1], want[1])
    _check_infer("QEmbedLayerNormalization", inputs, {}, got)


def test_qembed_errors():
    rng = np.random.default_rng(12)
    inputs = dict(_qembed_inputs(rng))
    op = "QEmbedLayerNormalization"
    bad_ids = dict(inputs, input_ids=np.full((2, 6), 20, np.int32))
    with pytest.raises(ShapeError, match=f"{op}: input_ids holds ids outside"):
        _kernel(op, list(bad_ids.values()))
    bad = dict(inputs, gamma=inputs["gamma"].view(np.int8), z3=np.int8(0))
    with pytest.raises(ShapeError, match="gamma is int8, but word_embedding is uint8"):
        _kernel(op, list(bad.values()))
    long = dict(inputs, input_ids=np.zeros((1, 10), np.int32),
                segment_ids=np.zeros((1, 10), np.int32), mask=None)
    with pytest.raises(ShapeError, match="sequence length 10 exceeds"):
        _kernel(op, list(long.values()))
    with pytest.raises(ShapeError, match="segment_ids and segment_embedding"):
        _kernel(op, list(dict(inputs, segment_ids=None).values()))
    with pytest.raises(ShapeError, match="word_embedding's scale of shape \\(2,\\) must hold one"):
        _kernel(op, list(dict(inputs, s0=np.ones(2, np.float32)).values()))


# --------------------------------------------------------------------------------------
# QLinearWhere
# --------------------------------------------------------------------------------------


def _where_schema(cond, x, xs, xz, y, ys, yz, zs, zz):
    """The schema's formula, written from the spec: dequantize in float32, pick,
    quantize (round half to even, saturate)."""
    info = np.iinfo(x.dtype)

    def requant(q, s, z):
        v = (q.astype(np.float32) - np.float32(z)) * np.float32(s)
        return np.clip(np.rint(v / np.float32(zs)) + int(zz), info.min, info.max)
    return np.where(cond, requant(x, xs, xz), requant(y, ys, yz)).astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4), (3, 4)), ((4,), (3, 1), (1, 4)),
                                    ((2, 1, 5), (5,), (2, 3, 1)), ((), (6,), (6,))])
@pytest.mark.parametrize("same", [False, True])
def test_qlinear_where(dtype, shapes, same):
    """onegraph == onnxruntime == the schema's formula. `same`: X's scale and zero point
    are Z's (copied, not requantized)."""
    rng = np.random.default_rng(13)
    cond = np.asarray(rng.random(shapes[0]) > 0.5)
    x, y = _codes(rng, dtype, shapes[1]), _codes(rng, dtype, shapes[2])
    zs, zz = _scale(rng, 0.02, 0.1), _codes(rng, dtype, ())
    xs, xz = (zs, zz) if same else (_scale(rng, 0.02, 0.1), _codes(rng, dtype, ()))
    inputs = [("c", cond), ("x", x), ("xs", xs), ("xz", xz), ("y", y),
              ("ys", _scale(rng, 0.02, 0.1)), ("yz", _codes(rng, dtype, ())), ("zs", zs),
              ("zz", zz)]
    model = _model("QLinearWhere", inputs, {"c", "x", "y"}, [("z", dtype)])
    (want,), (got,) = _run_both(model, {"c": cond, "x": x, "y": y})
    schema = _where_schema(*[v for _, v in inputs])
    np.testing.assert_array_equal(got, schema)
    np.testing.assert_array_equal(got, want)
    _check_infer("QLinearWhere", inputs, {}, [got])


def test_qlinear_where_errors():
    u8 = np.uint8
    base = [np.array([True]), np.zeros(3, u8), np.float32(1), u8(0), np.zeros(3, u8),
            np.float32(1), u8(0), np.float32(1), u8(0)]
    with pytest.raises(ShapeError, match="QLinearWhere: condition must be bool"):
        _kernel("QLinearWhere", [np.ones(3, np.int32)] + base[1:])
    with pytest.raises(ShapeError, match="X and Y must have one type"):
        _kernel("QLinearWhere", base[:4] + [np.zeros(3, np.int8)] + base[5:])
    with pytest.raises(ShapeError, match="QLinearWhere: .*broadcast"):
        _kernel("QLinearWhere", base[:4] + [np.zeros(4, u8)] + base[5:])
    with pytest.raises(ShapeError, match="z_zero_point is int8"):
        _kernel("QLinearWhere", base[:8] + [np.int8(0)])


# --------------------------------------------------------------------------------------
# MatMulInteger16
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (4, 6)), ((4,), (4, 3)),
                                    ((2, 1, 3, 7), (3, 7, 2))])
def test_matmul_integer16(shapes):
    rng = np.random.default_rng(14)
    a, b = _codes(rng, np.int16, shapes[0]), _codes(rng, np.int16, shapes[1])
    inputs = [("a", a), ("b", b)]
    model = _model("MatMulInteger16", inputs, {"a", "b"}, [("y", np.int32)])
    (want,), (got,) = _run_both(model, {"a": a, "b": b})
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    _check_infer("MatMulInteger16", inputs, {}, [got])


def test_matmul_integer16_errors():
    with pytest.raises(UnsupportedOpError, match="MatMulInteger16: A must be int16"):
        _kernel("MatMulInteger16", [np.zeros((2, 2), np.uint16), np.zeros((2, 2), np.int16)])
    with pytest.raises(ShapeError, match="MatMulInteger16: A \\[2, 3\\] and B \\[2, 2\\]"):
        _kernel("MatMulInteger16", [np.zeros((2, 3), np.int16), np.zeros((2, 2), np.int16)])


# --------------------------------------------------------------------------------------
# QLinearConv (com.microsoft)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("xtype, wtype", [(np.uint8, np.int8), (np.uint8, np.uint8),
                                          (np.int8, np.int8)])
@pytest.mark.parametrize("attrs", [{}, {"pads": [1, 1, 1, 1], "strides": [2, 1]},
                                   {"group": 2, "dilations": [2, 2]},
                                   {"auto_pad": "SAME_UPPER", "strides": [2, 2]}])
@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_conv(channels_last, xtype, wtype, attrs, per_channel):
    rng = np.random.default_rng(15)
    c, m = 4, 6
    x = _codes(rng, xtype, (2, c, 7, 6))
    if channels_last:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    # int8 within [-64, 63] where onnxruntime saturates (tests/ort_int8.py)
    w = weight_codes(rng, wtype, (m, c // attrs.get("group", 1), 3, 3))
    n = m if per_channel else None
    inputs = [("x", x), ("xs", _scale(rng, 0.01, 0.05)), ("xz", _codes(rng, xtype, ())),
              ("w", w), ("ws", _scale(rng, 0.005, 0.02, n)),
              ("wz", np.zeros(m if per_channel else (), wtype)),
              ("ys", _scale(rng, 0.05, 0.3)), ("yz", _codes(rng, xtype, ())),
              ("B", rng.integers(-3000, 3000, m).astype(np.int32))]
    attrs = dict(attrs, channels_last=channels_last)
    model = _model("QLinearConv", inputs, {"x"}, [("y", xtype)], attrs)
    (want,), (got,) = _run_both(model, {"x": x})
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    _check_infer("QLinearConv", inputs, attrs, [got])


@pytest.mark.parametrize("spatial", [(9,), (5, 4, 6)])
@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_conv_1d_3d(spatial, channels_last):
    rng = np.random.default_rng(22)
    x = _codes(rng, np.uint8, (2, 3) + spatial)
    if channels_last:
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    w = weight_codes(rng, np.int8, (4, 3) + (3,) * len(spatial))  # (tests/ort_int8.py)
    inputs = [("x", x), ("xs", np.float32(0.02)), ("xz", np.uint8(120)), ("w", w),
              ("ws", np.float32(0.01)), ("wz", np.int8(0)), ("ys", np.float32(0.2)),
              ("yz", np.uint8(128))]
    attrs = {"channels_last": channels_last, "pads": [1] * (2 * len(spatial))}
    model = _model("QLinearConv", inputs, {"x"}, [("y", np.uint8)], attrs)
    (want,), (got,) = _run_both(model, {"x": x})
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    _check_infer("QLinearConv", inputs, attrs, [got])


def test_qlinear_conv_errors():
    u8, i8 = np.uint8, np.int8
    base = [np.zeros((1, 2, 4, 4), u8), np.float32(1), u8(0), np.zeros((3, 2, 3, 3), i8),
            np.float32(1), i8(0), np.float32(1), u8(0)]
    with pytest.raises(ShapeError, match="QLinearConv: w_scale of shape \\[2\\]"):
        _kernel("QLinearConv", base[:4] + [np.ones(2, np.float32)] + base[5:])
    with pytest.raises(ShapeError, match="QLinearConv: B must be int32 of shape \\[3\\]"):
        _kernel("QLinearConv", base + [np.zeros(2, np.int32)])
    with pytest.raises(ShapeError, match="QLinearConv: x must be uint8 or int8"):
        _kernel("QLinearConv", [np.zeros((1, 2, 4, 4), np.float32)] + base[1:])
    with pytest.raises(ShapeError, match="QLinearConv: .*kernel_shape"):
        _kernel("QLinearConv", base, {"kernel_shape": [2, 2]})


# --------------------------------------------------------------------------------------
# DynamicQuantizeLSTM
# --------------------------------------------------------------------------------------


def _one_thread_session(model):
    """onnxruntime on one thread: with more, its LSTM quantizes H_{t-1} in row chunks
    that depend on the thread count (see test_dynamic_quantize_lstm)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def _lstm_inputs(rng, nd=1, wtype=np.int8, per_column=False, steps=5, batch=2, size=6,
                 hidden=4, peep=False, init=False, bias=True):
    n = (nd, 4 * hidden) if per_column else (nd,)
    zp = np.zeros(n, wtype) if wtype == np.int8 else np.full(n, 128, wtype)

    def floats(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    return [("X", floats(steps, batch, size)),
            # int8 within [-64, 63] where onnxruntime saturates (tests/ort_int8.py)
            ("W", weight_codes(rng, wtype, (nd, size, 4 * hidden))),
            ("R", weight_codes(rng, wtype, (nd, hidden, 4 * hidden))),
            ("B", floats(nd, 8 * hidden, scale=0.1) if bias else None),
            ("sequence_lens", None),
            ("initial_h", floats(nd, batch, hidden, scale=0.5) if init else None),
            ("initial_c", floats(nd, batch, hidden, scale=0.5) if init else None),
            ("P", floats(nd, 3 * hidden, scale=0.3) if peep else None),
            ("W_scale", _scale(rng, 0.002, 0.01, n)), ("W_zero_point", zp),
            ("R_scale", _scale(rng, 0.002, 0.01, n)), ("R_zero_point", zp)]


_LSTM_CASES = [({}, {}), ({"init": True}, {}), ({"nd": 2}, {"direction": "bidirectional"}),
               ({}, {"direction": "reverse"}), ({"wtype": np.uint8}, {}),
               ({"per_column": True, "nd": 2}, {"direction": "bidirectional"}),
               ({"peep": True, "init": True}, {}), ({}, {"clip": 0.5}),
               ({}, {"input_forget": 1}),
               ({"bias": False}, {"activations": ["HardSigmoid", "Tanh", "Softsign"],
                                  "activation_alpha": [0.3], "activation_beta": [0.4]}),
               ({"steps": 12, "batch": 5, "size": 16, "hidden": 8}, {})]


@pytest.mark.parametrize("case, attrs", _LSTM_CASES)
def test_dynamic_quantize_lstm(case, attrs):
    """All three outputs against onnxruntime run on one thread: max difference measured
    2.4e-7 (its own logistic/tanh approximations). On two threads onnxruntime quantizes
    H_{t-1} per chunk of rows (ceil(batch / threads)) rather than over the batch, and its
    result moves by up to 3e-3 on the 5-sequence case: onegraph follows the one-thread
    arithmetic, which does not depend on the machine."""
    rng = np.random.default_rng(19)
    inputs = _lstm_inputs(rng, **case)
    hidden = inputs[2][1].shape[1]
    attrs = dict(attrs, hidden_size=hidden)
    outs = [("Y", np.float32), ("Y_h", np.float32), ("Y_c", np.float32)]
    model = _model("DynamicQuantizeLSTM", inputs, {"X"}, outs, attrs)
    feeds = {"X": inputs[0][1]}
    want = _one_thread_session(model).run(None, feeds)
    got = onegraph.Session(from_onnx(model)).run([n for n, _ in outs], feeds)
    for w, g in zip(want, got):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    _check_infer("DynamicQuantizeLSTM", inputs, attrs, got)


def test_dynamic_quantize_lstm_errors():
    rng = np.random.default_rng(20)
    base = dict(_lstm_inputs(rng))
    op = "DynamicQuantizeLSTM"
    attrs = {"hidden_size": 4}
    for change, error, words in (
            (dict(sequence_lens=np.array([5, 3], np.int32)), UnsupportedOpError,
             "sequence_lens other than the full"),
            (dict(W_zero_point=np.ones(1, np.int8)), ShapeError,
             "W_zero_point must be zero for int8 W"),
            (dict(R=np.zeros((1, 4, 15), np.int8)), ShapeError,
             "R must have shape \\[1, 4, 16\\]"),
            (dict(W_scale=np.ones(3, np.float32)), ShapeError, "W_scale of shape \\[3\\]"),
            (dict(B=np.zeros((1, 16), np.float32)), ShapeError, "B must be float32 of shape"),
            (dict(X=np.zeros((5, 2), np.float32)), ShapeError, "X must be float32"),
            (dict(initial_h=np.zeros((1, 3, 4), np.float32)), ShapeError,
             "initial_h must be float32 of shape \\[1, 2, 4\\]")):
        with pytest.raises(error, match=f"{op}: {words}"):
            _kernel(op, list(dict(base, **change).values()), attrs)
    with pytest.raises(OpAttributeError, match="direction must be"):
        _kernel(op, list(base.values()), dict(attrs, direction="sideways"))
    with pytest.raises(OpAttributeError, match="unsupported activation"):
        _kernel(op, list(base.values()), dict(attrs, activations=["Gelu"] * 3))


# --------------------------------------------------------------------------------------
# Whole models quantized by onnxruntime's tool
# --------------------------------------------------------------------------------------


def _bert_feeds(rng, batch=2, seq=7):
    return {"input_ids": rng.integers(0, 50, (batch, seq)).astype(np.int64),
            "token_type_ids": rng.integers(0, 2, (batch, seq)).astype(np.int64),
            "attention_mask": np.array([[1] * seq, [1] * (seq - 2) + [0, 0]], np.int64)}


def test_quantize_dynamic_bert(tmp_path):
    """A 2-layer BERT fused by onnxruntime's transformers optimizer
    (tests/ops/data/ms_transformer/bert_synthetic.opt.onnx), quantized by
    `quantize_dynamic` to QAttention, QEmbedLayerNormalization and MatMulInteger: the
    same quantized file in onegraph and onnxruntime, then written back by to_onnx."""
    from pathlib import Path

    from onnxruntime.quantization import QuantType, quantize_dynamic

    src = Path(__file__).parent / "data" / "ms_transformer" / "bert_synthetic.opt.onnx"
    model = onnx.load(str(src))
    if not any(o.domain == MS for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS, 1))
    out = tmp_path / "bert_q.onnx"
    # 7-bit weights where onnxruntime's int8 products saturate (tests/ort_int8.py)
    quantize_dynamic(model, str(out), weight_type=QuantType.QInt8,
                     reduce_range=ort_saturates_u8s8(),
                     op_types_to_quantize=["Attention", "EmbedLayerNormalization",
                                           "MatMul"],
                     extra_options={"DefaultTensorType": TensorProto.FLOAT})
    quantized = onnx.load(str(out))
    ops = {n.op_type for n in quantized.graph.node if n.domain == MS}
    assert {"QAttention", "QEmbedLayerNormalization"} <= ops
    feeds = _bert_feeds(np.random.default_rng(16))
    (want,), (got,) = _run_both(quantized, feeds)
    np.testing.assert_allclose(got, want, **TOL)
    back = to_onnx(from_onnx(quantized))
    assert {"QAttention", "QEmbedLayerNormalization"} <= \
        {n.op_type for n in back.graph.node if n.domain == MS}
    again = ort_session(back).run(None, feeds)[0]
    np.testing.assert_allclose(again, want, **TOL)


def test_quantize_dynamic_lstm(tmp_path):
    """A bidirectional float LSTM quantized by `quantize_dynamic` to DynamicQuantizeLSTM
    (weights transposed and per-tensor int8 by onnxruntime's tool): onegraph against
    onnxruntime (one thread) on the quantized file, and the file written back."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    rng = np.random.default_rng(21)
    hidden, size = 8, 6
    f = TensorProto.FLOAT
    inits = [numpy_helper.from_array((rng.standard_normal(shape) * 0.4).astype(np.float32),
                                     name)
             for name, shape in (("W", (2, 4 * hidden, size)), ("R", (2, 4 * hidden, hidden)),
                                 ("B", (2, 8 * hidden)))]
    node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y", "y_h", "y_c"],
                            hidden_size=hidden, direction="bidirectional")
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info(
        "x", f, [7, 3, size])], [helper.make_tensor_value_info(n, f, None)
                                 for n in ("y", "y_h", "y_c")], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=9)
    src, out = tmp_path / "lstm.onnx", tmp_path / "lstm_q.onnx"
    onnx.save(model, str(src))
    # 7-bit weights where onnxruntime's int8 products saturate (tests/ort_int8.py)
    quantize_dynamic(str(src), str(out), weight_type=QuantType.QInt8,
                     op_types_to_quantize=["LSTM"], reduce_range=ort_saturates_u8s8())
    quantized = onnx.load(str(out))
    assert [n.op_type for n in quantized.graph.node] == ["DynamicQuantizeLSTM"]
    feeds = {"x": rng.standard_normal((7, 3, size)).astype(np.float32)}
    want = _one_thread_session(quantized).run(None, feeds)
    got = onegraph.Session(from_onnx(quantized)).run(["y", "y_h", "y_c"], feeds)
    back = _one_thread_session(to_onnx(from_onnx(quantized))).run(None, feeds)
    for w, g, b in zip(want, got, back):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(b, w)


def _small_net(rng):
    """Conv -> Relu -> Flatten -> MatMul -> Add, float32, random weights."""
    f = TensorProto.FLOAT
    inits = [numpy_helper.from_array((rng.standard_normal((4, 3, 3, 3)) * 0.3)
                                     .astype(np.float32), "cw"),
             numpy_helper.from_array((rng.standard_normal(4) * 0.1).astype(np.float32), "cb"),
             numpy_helper.from_array((rng.standard_normal((64, 5)) * 0.2).astype(np.float32),
                                     "mw"),
             numpy_helper.from_array((rng.standard_normal(5) * 0.1).astype(np.float32), "mb")]
    nodes = [helper.make_node("Conv", ["x", "cw", "cb"], ["c"], pads=[1, 1, 1, 1],
                              strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Flatten", ["r"], ["fl"]),
             helper.make_node("MatMul", ["fl", "mw"], ["mm"]),
             helper.make_node("Add", ["mm", "mb"], ["y"])]
    graph = helper.make_graph(nodes, "net", [helper.make_tensor_value_info("x", f,
                                                                            [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", f, [1, 5])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=9)


@pytest.mark.parametrize("activation", ["QUInt16", "QInt16"])
def test_quantize_static_contrib_qdq(tmp_path, activation):
    """`quantize_static` with UseQDQContribOps and 16-bit activations writes
    com.microsoft QuantizeLinear/DequantizeLinear; the quantized file runs in onegraph
    to onnxruntime's outputs."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    rng = np.random.default_rng(17)
    src, out = tmp_path / "net.onnx", tmp_path / "net_q.onnx"
    onnx.save(_small_net(rng), str(src))
    data = [{"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)} for _ in range(4)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.items = iter(data)

        def get_next(self):
            return next(self.items, None)

    quantize_static(str(src), str(out), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=getattr(QuantType, activation),
                    weight_type=QuantType.QInt8,
                    extra_options={"UseQDQContribOps": True})
    quantized = onnx.load(str(out))
    ms_ops = {n.op_type for n in quantized.graph.node if n.domain == MS}
    assert ms_ops == {"QuantizeLinear", "DequantizeLinear"}
    feeds = {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)}
    # onnxruntime's graph optimizations drop some Q/DQ pairs (QDQ propagation through
    # Flatten, Relu fusion), which moves its result by up to 0.0075 here: the model as
    # written is the oracle
    (want,), (got,) = _run_both(quantized, feeds, optimize=False)
    np.testing.assert_array_equal(got, want)


def test_round_trip_model():
    """contrib QuantizeLinear -> QLinearWhere -> contrib DequantizeLinear, imported,
    written back by to_onnx and run in onnxruntime to the original's outputs."""
    rng = np.random.default_rng(18)
    u8 = np.uint8
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (
        ("s", np.float32(0.05)), ("z", u8(120)), ("s2", np.float32(0.08)),
        ("z2", u8(100)), ("bias", _codes(rng, u8, (4, 6))))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], domain=MS),
             helper.make_node("QLinearWhere", ["c", "q", "s", "z", "bias", "s", "z", "s2",
                                               "z2"], ["w"], domain=MS),
             helper.make_node("DequantizeLinear", ["w", "s2", "z2"], ["y"], domain=MS)]
    graph = helper.make_graph(nodes, "rt", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6]),
        helper.make_tensor_value_info("c", TensorProto.BOOL, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(MS, 1)], ir_version=9)
    feeds = {"x": (rng.standard_normal((4, 6)) * 3).astype(np.float32),
             "c": rng.random((4, 6)) > 0.5}
    (want,), (got,) = _run_both(model, feeds)
    np.testing.assert_array_equal(got, want)
    back = to_onnx(from_onnx(model))
    assert [n.op_type for n in back.graph.node if n.domain == MS] == \
        ["QuantizeLinear", "QLinearWhere", "DequantizeLinear"]
    again = ort_session(back).run(None, feeds)[0]
    np.testing.assert_array_equal(again, want)

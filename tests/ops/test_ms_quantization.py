"""onnxruntime's quantized contrib ops (`ops/ms_quantization.py`) against onnxruntime.

The oracle is onnxruntime's CPUExecutionProvider, which implements every one of these
ops. Single-node models are built with onnx.helper over seeded random uint8 and int8
data, scales and zero points, imported with `from_onnx` and run in a Session.

Bounds: exact equality for QGemm, QLinearMul, QLinearConcat, QLinearAveragePool,
QLinearGlobalAveragePool, QLinearSigmoid and QLinearLeakyRelu: measured on this suite and
on ~2,600 further random parameter sets per op (every 8-bit code through the tables,
broadcast Mul, padded pools), every output equals onnxruntime's, since the kernels do its
float32 arithmetic step by step. The lookup tables were where a one-step difference was
expected (numpy's exp against MLAS's logistic approximation); none showed up.
QLinearAdd and QLinearSoftmax: one step on a share of about 1e-5 of the outputs at most
(ADD_SHARE, SOFTMAX_SHARE below say what was measured): onnxruntime reaches a few .5
ties through a float32 order its vector kernels use and the kernels here do not
reproduce exactly. For softmax the kernel follows onnxruntime's AVX2 kernel (the one it
runs here); a plain left-to-right float32 sum differed on 56 of 232,036 outputs, by up
to 57 steps where exp * floor(1/y_scale) overflows float32 in a row of one value.

Whole models (squeezenet with random weights, and a small conv net holding every op)
are quantized with onnxruntime's quantize_static in the QOperator format and compared
on their final outputs, in steps of the output's quantization scale; see the bounds by
those tests.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from ..ort_int8 import ort_saturates_u8s8, weight_codes  # noqa: E402
from .single_node import node_inputs, onegraph_outputs, ort_outputs  # noqa: E402

MS = "com.microsoft"
_ONNX_TYPE = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
              np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}
_DTYPES = (np.uint8, np.int8)


# --------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------


def _model(op, inputs, feeds, attrs=None, out_dtype=None, out="Y"):
    """A single-node com.microsoft model: `inputs` is a list of (name, array or None)
    in the op's input order (None = omitted, written as ""); names in `feeds` become
    graph inputs, the other arrays initializers."""
    names, graph_inputs, inits = node_inputs(inputs, feeds)
    # omitted optional inputs stay as "" even at the end: onnxruntime aborts the process
    # when a lookup-table op's node is shorter than 5 inputs (it reads InputDefs()[4])
    node = helper.make_node(op, names, [out], domain=MS, **(attrs or {}))
    graph = helper.make_graph([node], op, graph_inputs, [helper.make_tensor_value_info(
        out, _ONNX_TYPE[np.dtype(out_dtype)], None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


_ort, _og = ort_outputs, onegraph_outputs


# QLinearAdd's bound: one step, on at most this share of the outputs. Measured: 12 of
# 7,864,320 outputs (every pair of codes, 40 scale sets, three broadcast layouts) one
# step off; onnxruntime's kernels reach a few rounding ties through another float32
# order (see the kernel's docstring). Every other op: exact.
ADD_SHARE = 1e-5
# QLinearSoftmax's bound: one step on at most this share. Measured: rows of 40 values, 3,
# 2 and 0 of 163,840 outputs per run one step off (exact for rows under 32 values and in
# every other test here): a row sum one float32 ulp from onnxruntime's puts a .5 tie on
# the other side; its kernel's summation order for longer rows is not reproduced exactly.
SOFTMAX_SHARE = 3e-5


def _assert_same(model, inputs, feeds, attrs, op, oracle=None, steps=0, share=0.0):
    """onegraph == onnxruntime (dtype, shape, values: at most `steps` apart, on at most
    `share` of the outputs), and the op's inference gives the output's dtype and shape.
    `oracle`, when given, is the model onnxruntime runs instead (the same op, written in
    a form onnxruntime accepts)."""
    fed = {k: np.asarray(v) for k, v in inputs if k in feeds and v is not None}
    want = _ort(oracle if oracle is not None else model, fed)
    got = _og(model, fed)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    off = int((diff > 0).sum())
    assert not diff.size or (diff.max() <= steps and off <= share * diff.size), \
        f"{op}: {off} of {diff.size} outputs differ, by up to {diff.max()}"
    definition = REGISTRY.get(op, MS)
    infos = [None if v is None else TensorInfo(np.asarray(v).dtype, np.shape(v))
             for _, v in inputs]
    inferred = definition.infer(definition.resolve_attrs(attrs or {}), infos)[0]
    assert np.dtype(inferred.dtype) == got.dtype and tuple(inferred.shape) == got.shape
    return got


def _omitting(op, inputs, names, feeds, attrs, dtype, out="Y"):
    """(inputs with the zero points `names` left out, the oracle model): onnxruntime's
    type inference refuses QLinearAdd, QLinearMul and QLinearAveragePool nodes without
    their optional zero points, so it runs them as explicit zeros (the spec's default)."""
    zeros = [(k, np.zeros((), dtype) if k in names else v) for k, v in inputs]
    omitted = [(k, None if k in names else v) for k, v in inputs]
    return omitted, _model(op, zeros, feeds, attrs, dtype, out)


def _codes(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def _zp(rng, dtype, n=None):
    info = np.iinfo(dtype)
    return np.asarray(rng.integers(info.min, info.max + 1, n), dtype=dtype)


def _scale(rng, low, high, n=None):
    """Scales spread log-uniformly over [low, high]."""
    return np.asarray(np.exp(rng.uniform(np.log(low), np.log(high), n)), dtype=np.float32)


def _kernel(op, inputs, attrs=None):
    definition = REGISTRY.get(op, MS)
    return definition.kernel(list(inputs), definition.resolve_attrs(attrs or {}), None)[0]


# --------------------------------------------------------------------------------------
# One op at a time against onnxruntime
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("op, attrs", [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {}),
                                       ("QLinearLeakyRelu", {"alpha": 0.3})])
@pytest.mark.parametrize("zero_points", [True, False])
def test_lookup_table_ops(op, attrs, dtype, zero_points):
    rng = np.random.default_rng(1)
    for trial in range(6):
        # every code, twice, in a 2-D shape: every table entry is checked
        x = np.tile(np.arange(256, dtype=np.uint8).view(dtype), 2).reshape(4, 128)
        inputs = [("X", x), ("xs", _scale(rng, 1e-3, 0.5)),
                  ("xz", _zp(rng, dtype) if zero_points else None),
                  ("ys", _scale(rng, 1e-3, 0.05)),
                  ("yz", _zp(rng, dtype) if zero_points else None)]
        _assert_same(_model(op, inputs, {"X"}, attrs, dtype), inputs, {"X"}, attrs, op)


_BROADCASTS = [((2, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 4, 5), (1, 3, 1, 1)),
               ((1, 3, 1, 1), (2, 3, 4, 5)), ((2, 3, 4, 5), (5,)), ((4, 1), (1, 6)),
               ((3, 1), (3, 7)), ((), (3, 4)), ((3, 4), ()), ((1,), (1,)), ((0, 3), (1, 3)),
               ((2, 0), (2, 1)), ((2, 1, 4), (1, 5, 1)), ((37,), (37,)), ((70,), (1,))]


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shapes", _BROADCASTS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_add_mul(op, dtype, shapes):
    """Every broadcast pattern takes one of onnxruntime's three span paths (A fixed, B
    fixed, both varying along the innermost dim), which round differently for Add."""
    rng = np.random.default_rng(2)
    for trial in range(4):
        # (np.float32: numpy 1.x makes a 0-d float32 array times an int a float64)
        c_scale = np.float32(_scale(rng, 1e-3, 0.5) * (5 if op == "QLinearMul" else 1))
        inputs = [("A", _codes(rng, dtype, shapes[0])), ("as", _scale(rng, 1e-3, 0.2)),
                  ("az", _zp(rng, dtype)), ("B", _codes(rng, dtype, shapes[1])),
                  ("bs", _scale(rng, 1e-3, 0.2)), ("bz", _zp(rng, dtype)),
                  ("cs", c_scale), ("cz", _zp(rng, dtype))]
        oracle = None
        if trial == 3:
            inputs, oracle = _omitting(op, inputs, {"az", "bz", "cz"}, {"A", "B"}, {}, dtype,
                                       "C")
        _assert_same(_model(op, inputs, {"A", "B"}, {}, dtype, "C"), inputs, {"A", "B"},
                     {}, op, oracle, *_BINARY_BOUND[op])


_BINARY_BOUND = {"QLinearAdd": (1, ADD_SHARE), "QLinearMul": (0, 0.0)}


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("layout", ["A fixed per row", "B fixed per row", "both full"])
def test_add_mul_every_code_pair(op, dtype, layout):
    """All 65,536 pairs of codes, under random scales of ratio 1/4..4 and under
    power-of-two scales, whose results land on exact .5 ties (rounding half to even)."""
    rng = np.random.default_rng(9)
    codes = np.arange(256, dtype=np.uint8).view(dtype)
    a, b = {"A fixed per row": (codes[:, None], codes[None, :]),
            "B fixed per row": (codes[None, :], codes[:, None]),
            "both full": (np.repeat(codes, 256), np.tile(codes, 256))}[layout]
    for trial in range(4):
        if trial == 0:
            scales = np.float32(0.5), np.float32(0.25), np.float32(4 if op == "QLinearMul" else 1)
        else:
            c = _scale(rng, 1e-3, 0.1)
            scales = (np.float32(c * np.exp(rng.uniform(np.log(0.25), np.log(4)))),
                      np.float32(c * np.exp(rng.uniform(np.log(0.25), np.log(4)))),
                      np.float32(c * (16 if op == "QLinearMul" else 1)))
        inputs = [("A", a), ("as", scales[0]), ("az", _zp(rng, dtype)), ("B", b),
                  ("bs", scales[1]), ("bz", _zp(rng, dtype)), ("cs", scales[2]),
                  ("cz", _zp(rng, dtype))]
        _assert_same(_model(op, inputs, {"A", "B"}, {}, dtype, "C"), inputs, {"A", "B"},
                     {}, op, None, *_BINARY_BOUND[op])


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("axis, shapes", [
    (1, [(2, 3, 4), (2, 5, 4), (2, 1, 4)]), (-1, [(3, 2), (3, 7)]),
    (0, [(4,), (0,), (3,)]), (2, [(1, 2, 3, 4), (1, 2, 5, 4)]), (-3, [(2, 2, 2), (1, 2, 2)])])
def test_concat(dtype, axis, shapes):
    rng = np.random.default_rng(3)
    for trial in range(3):
        y_scale, y_zp = _scale(rng, 1e-3, 0.1), _zp(rng, dtype)
        inputs = [("ys", y_scale), ("yz", y_zp)]
        feeds = set()
        for k, shape in enumerate(shapes):
            same = k == 0 and trial == 1  # Y's own parameters: copied, not requantized
            inputs += [(f"x{k}", _codes(rng, dtype, shape)),
                       (f"s{k}", y_scale.copy() if same else _scale(rng, 1e-3, 0.1)),
                       (f"z{k}", y_zp.copy() if same else _zp(rng, dtype))]
            feeds.add(f"x{k}")
        attrs = {"axis": axis}
        _assert_same(_model("QLinearConcat", inputs, feeds, attrs, dtype), inputs, feeds,
                     attrs, "QLinearConcat")


@pytest.mark.parametrize("dtype", _DTYPES)
def test_concat_many_inputs(dtype):
    """300 inputs of every code, each with its own scale and zero point: 76,800 table
    entries per run, enough to reach the ties where onnxruntime's float32 requantization
    and the exact quotient round apart."""
    rng = np.random.default_rng(13)
    codes = np.arange(256, dtype=np.uint8).view(dtype).reshape(1, 256)
    inputs, feeds = [("ys", _scale(rng, 1e-3, 0.1)), ("yz", _zp(rng, dtype))], set()
    for k in range(300):
        inputs += [(f"x{k}", codes), (f"s{k}", _scale(rng, 1e-3, 0.1)), (f"z{k}", _zp(rng, dtype))]
        feeds.add(f"x{k}")
    _assert_same(_model("QLinearConcat", inputs, feeds, {"axis": 0}, dtype), inputs, feeds,
                 {"axis": 0}, "QLinearConcat")


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("shape", [(2, 3, 5, 5), (1, 8, 7), (2, 4, 3, 2, 2), (1, 1, 13, 13)])
def test_global_average_pool(dtype, channels_last, shape):
    rng = np.random.default_rng(4)
    for trial in range(3):
        x = _codes(rng, dtype, shape)
        inputs = [("X", x), ("xs", _scale(rng, 1e-3, 0.1)), ("xz", _zp(rng, dtype)),
                  ("ys", _scale(rng, 1e-3, 0.02)), ("yz", _zp(rng, dtype))]
        attrs = {"channels_last": channels_last}
        _assert_same(_model("QLinearGlobalAveragePool", inputs, {"X"}, attrs, dtype), inputs,
                     {"X"}, attrs, "QLinearGlobalAveragePool")


_POOLS = [
    ((2, 3, 7, 7), dict(kernel_shape=[3, 3])),
    ((2, 3, 7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ((2, 3, 7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                        count_include_pad=1)),
    ((2, 3, 7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    # a ceil_mode window overhanging the padding still counts the whole kernel
    ((2, 3, 7, 7), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, pads=[1, 0, 1, 0],
                        count_include_pad=1)),
    ((2, 3, 8, 8), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, pads=[1, 1, 1, 1],
                        count_include_pad=1)),
    ((2, 3, 7, 6), dict(kernel_shape=[2, 3], strides=[1, 2], pads=[0, 1, 1, 0])),
    ((2, 3, 7, 7), dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2])),
    ((2, 3, 7, 7), dict(kernel_shape=[3, 3], auto_pad="SAME_LOWER")),
    ((2, 3, 7, 7), dict(kernel_shape=[3, 3], auto_pad="VALID", strides=[2, 1])),
    ((2, 3, 7, 7), dict(kernel_shape=[7, 7])),  # the whole image: the global average
    ((2, 3, 7, 7), dict(kernel_shape=[7, 7], pads=[1, 1, 1, 1], count_include_pad=1)),
    ((2, 3, 9), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    ((1, 2, 5, 6, 4), dict(kernel_shape=[2, 3, 2], pads=[0, 1, 0, 1, 0, 1])),
]


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("shape, attrs", _POOLS, ids=[str(i) for i in range(len(_POOLS))])
def test_average_pool(dtype, channels_last, shape, attrs):
    rng = np.random.default_rng(5)
    attrs = dict(attrs, channels_last=channels_last)
    for trial in range(2):
        x = _codes(rng, dtype, shape)
        if channels_last:
            x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
        inputs = [("X", x), ("xs", _scale(rng, 1e-3, 0.1)), ("xz", _zp(rng, dtype)),
                  ("ys", _scale(rng, 1e-3, 0.05)), ("yz", _zp(rng, dtype))]
        oracle = None
        if trial == 1:
            inputs, oracle = _omitting("QLinearAveragePool", inputs, {"xz", "yz"}, {"X"},
                                       attrs, dtype)
        _assert_same(_model("QLinearAveragePool", inputs, {"X"}, attrs, dtype), inputs,
                     {"X"}, attrs, "QLinearAveragePool", oracle)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("opset, axis", [(13, None), (13, 1), (13, 0), (13, -2), (12, None),
                                         (12, 1), (11, 0)])
@pytest.mark.parametrize("row", [1, 15, 16, 17, 40])
def test_softmax(dtype, opset, axis, row):
    """Rows of 1..40 values cover onnxruntime's 16-value blocks and their remainder."""
    rng = np.random.default_rng(6)
    attrs = {"opset": opset} if axis is None else {"opset": opset, "axis": axis}
    for trial in range(3):
        if trial == 0:  # what the quantization tool writes: y = p / 256
            y_scale = np.float32(1 / 256)
            y_zp = np.asarray(0 if dtype == np.uint8 else -128, dtype)
        else:
            y_scale, y_zp = _scale(rng, 1 / 300, 1 / 100), _zp(rng, dtype)
        inputs = [("X", _codes(rng, dtype, (3, 2, row))), ("xs", _scale(rng, 1e-3, 1.0)),
                  ("xz", _zp(rng, dtype) if trial < 2 else None), ("ys", y_scale),
                  ("yz", y_zp)]
        _assert_same(_model("QLinearSoftmax", inputs, {"X"}, attrs, dtype), inputs, {"X"},
                     attrs, "QLinearSoftmax")


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("row", [20, 40])
def test_softmax_many_rows(dtype, row):
    """4,096 rows: enough to reach the rounding ties where the float32 order of the row
    sums (16-value blocks in eight lanes, as onnxruntime's kernel adds) matters."""
    rng = np.random.default_rng(10)
    for trial in range(3):
        inputs = [("X", _codes(rng, dtype, (4096, row))), ("xs", _scale(rng, 1e-3, 1.0)),
                  ("xz", _zp(rng, dtype)), ("ys", _scale(rng, 1 / 300, 1 / 100)),
                  ("yz", _zp(rng, dtype))]
        _assert_same(_model("QLinearSoftmax", inputs, {"X"}, {"opset": 13}, dtype), inputs,
                     {"X"}, {"opset": 13}, "QLinearSoftmax", None, 1, SOFTMAX_SHARE)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_average_pool_many_windows(dtype):
    """A million windows per run, to reach the ties where float32 window sums
    (onnxruntime's) and exact ones round apart."""
    rng = np.random.default_rng(11)
    attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    for trial in range(3):
        inputs = [("X", _codes(rng, dtype, (1, 64, 128, 128))), ("xs", _scale(rng, 1e-3, 0.1)),
                  ("xz", _zp(rng, dtype)), ("ys", _scale(rng, 1e-3, 0.1)),
                  ("yz", _zp(rng, dtype))]
        _assert_same(_model("QLinearAveragePool", inputs, {"X"}, attrs, dtype), inputs,
                     {"X"}, attrs, "QLinearAveragePool")


_GEMM_C = {"none": None, "N": lambda m, n: (n,), "MN": lambda m, n: (m, n),
           "1": lambda m, n: (1,), "M1": lambda m, n: (m, 1)}


@pytest.mark.parametrize("a_type, b_type", [(np.uint8, np.uint8), (np.uint8, np.int8),
                                            (np.int8, np.int8)])
@pytest.mark.parametrize("trans", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("c", list(_GEMM_C))
@pytest.mark.parametrize("output", ["quantized", "float"])
def test_qgemm(a_type, b_type, trans, c, output):
    rng = np.random.default_rng(7)
    m, k, n = 5, 37, 7
    for per_column, alpha in ((False, 1.0), (True, 0.5)):
        a = _codes(rng, a_type, (k, m) if trans[0] else (m, k))
        # int8 B within [-64, 63] where onnxruntime's products saturate (tests/ort_int8.py)
        b = weight_codes(rng, b_type, (n, k) if trans[1] else (k, n))
        width = n if per_column else None
        inputs = [("A", a), ("as", _scale(rng, 0.01, 0.05)), ("az", _zp(rng, a_type)),
                  ("B", b), ("bs", _scale(rng, 1e-3, 0.01, width)), ("bz", _zp(rng, b_type, width)),
                  ("C", None if _GEMM_C[c] is None else
                   rng.integers(-20000, 20000, _GEMM_C[c](m, n)).astype(np.int32))]
        if output == "quantized":
            inputs += [("ys", _scale(rng, 0.01, 0.05)), ("yz", _zp(rng, a_type))]
        attrs = {"alpha": alpha, "transA": trans[0], "transB": trans[1]}
        out_dtype = a_type if output == "quantized" else np.float32
        _assert_same(_model("QGemm", inputs, {"A"}, attrs, out_dtype), inputs, {"A"}, attrs,
                     "QGemm")


@pytest.mark.parametrize("a_type, b_type", [(np.uint8, np.int8), (np.int8, np.int8)])
def test_qgemm_large(a_type, b_type):
    """131,072 outputs per run: reaches the ties where onnxruntime's float32 product
    acc * multiplier and the exact one round apart."""
    rng = np.random.default_rng(12)
    for trial in range(2):
        inputs = [("A", _codes(rng, a_type, (512, 64))), ("as", _scale(rng, 0.01, 0.05)),
                  ("az", _zp(rng, a_type)), ("B", weight_codes(rng, b_type, (64, 256))),
                  ("bs", _scale(rng, 1e-4, 1e-3, 256)), ("bz", _zp(rng, b_type, 256)),
                  ("C", rng.integers(-20000, 20000, 256).astype(np.int32)),
                  ("ys", _scale(rng, 0.05, 0.2)), ("yz", _zp(rng, a_type))]
        _assert_same(_model("QGemm", inputs, {"A"}, {}, a_type), inputs, {"A"}, {}, "QGemm")


def test_qgemm_y_scale_without_zero_point_is_a_float_output():
    """onnxruntime then returns the float32 product divided by y_scale; so does onegraph."""
    rng = np.random.default_rng(8)
    inputs = [("A", _codes(rng, np.uint8, (3, 4))), ("as", np.float32(0.02)),
              ("az", np.uint8(100)), ("B", weight_codes(rng, np.int8, (4, 5))),
              ("bs", np.float32(0.01)), ("bz", np.int8(3)), ("C", None),
              ("ys", np.float32(0.05))]
    _assert_same(_model("QGemm", inputs, {"A"}, {}, np.float32), inputs, {"A"}, {}, "QGemm")


# --------------------------------------------------------------------------------------
# Bad inputs: onegraph's named errors, naming the op and the input
# --------------------------------------------------------------------------------------

_U8 = np.zeros((2, 3), np.uint8)
_S = np.float32(0.1)
_Z = np.uint8(3)


@pytest.mark.parametrize("op, inputs, attrs, error, words", [
    ("QLinearSigmoid", [_U8.astype(np.float32), _S, _Z, _S, _Z], {}, ShapeError,
     "QLinearSigmoid: X must be uint8 or int8"),
    ("QLinearSigmoid", [_U8, _S, np.int8(3), _S, _Z], {}, ShapeError,
     "QLinearSigmoid: X_zero_point is int8"),
    ("QLinearLeakyRelu", [_U8, np.float64(0.1), _Z, _S, _Z], {}, ShapeError,
     "QLinearLeakyRelu: X_scale must be float32"),
    ("QLinearLeakyRelu", [_U8, _S, _Z, np.full(2, _S), _Z], {}, ShapeError,
     "QLinearLeakyRelu: Y_scale of shape"),
    ("QLinearAdd", [_U8, _S, _Z, _U8.astype(np.int8), _S, np.int8(0), _S, _Z], {},
     ShapeError, "QLinearAdd: A and B must have one type"),
    ("QLinearAdd", [_U8, _S, np.zeros(3, np.uint8), _U8, _S, _Z, _S, _Z], {}, ShapeError,
     "QLinearAdd: A_zero_point of shape"),
    ("QLinearMul", [_U8, _S, _Z, np.zeros((4,), np.uint8), _S, _Z, _S, _Z], {}, ShapeError,
     "QLinearMul: A and B: cannot broadcast"),
    ("QLinearMul", [_U8, _S, _Z, _U8, _S, _Z, _S, np.int8(0)], {}, ShapeError,
     "QLinearMul: C_zero_point is int8"),
    ("QLinearConcat", [_S, _Z, _U8, _S, _Z, np.zeros((2, 3, 1), np.uint8), _S, _Z],
     {"axis": 1}, ShapeError, "QLinearConcat: input X1 has rank 3"),
    ("QLinearConcat", [_S, _Z, _U8, _S, _Z, np.zeros((3, 3), np.uint8), _S, _Z],
     {"axis": 1}, ShapeError, "QLinearConcat: dim 0 differs"),
    ("QLinearConcat", [_S, _Z, _U8, _S, np.int8(0)], {"axis": 1}, ShapeError,
     "QLinearConcat: X0's zero point is int8"),
    ("QLinearConcat", [_S, _Z, _U8.astype(np.int8), _S, np.int8(0)], {"axis": 1},
     ShapeError, "QLinearConcat: X0 is int8, but Y_zero_point is uint8"),
    ("QLinearConcat", [_S, _Z, _U8, _S], {"axis": 1}, ShapeError,
     "QLinearConcat: after Y_scale and Y_zero_point"),
    ("QLinearConcat", [_S, _Z, _U8, _S, _Z], {"axis": 2}, OpAttributeError,
     "QLinearConcat: axis 2 is out of range"),
    ("QLinearGlobalAveragePool", [_U8, _S, _Z, _S, _Z], {}, ShapeError,
     "QLinearGlobalAveragePool: X has rank 2"),
    ("QLinearAveragePool", [np.zeros((1, 2, 4, 4), np.uint8), _S, _Z, _S, _Z],
     {"kernel_shape": [2]}, OpAttributeError, "QLinearAveragePool: kernel_shape"),
    ("QLinearAveragePool", [np.zeros((1, 2, 4, 4), np.uint8), _S, np.int8(1), _S, _Z],
     {"kernel_shape": [2, 2]}, ShapeError, "QLinearAveragePool: x_zero_point is int8"),
    ("QLinearSoftmax", [_U8, _S, _Z, _S, _Z], {"opset": 13, "axis": 2}, OpAttributeError,
     "QLinearSoftmax: axis 2 is out of range"),
    ("QLinearSoftmax", [_U8, _S, _Z, _S, np.int8(0)], {"opset": 13}, ShapeError,
     "QLinearSoftmax: y_zero_point is int8"),
    ("QGemm", [_U8, _S, _Z, np.zeros((4, 2), np.uint8), _S, _Z], {}, ShapeError,
     "QGemm: inner dims differ"),
    ("QGemm", [_U8, _S, _Z, np.zeros((3, 2), np.uint8), np.full(3, _S), _Z], {}, ShapeError,
     "QGemm: b_scale of shape"),
    ("QGemm", [_U8, _S, _Z, np.zeros((3, 2), np.int8), _S, _Z], {}, ShapeError,
     "QGemm: b_zero_point is uint8, but B is int8"),
    ("QGemm", [_U8, _S, _Z, np.zeros((3, 2), np.uint8), _S, _Z, np.zeros((3, 2), np.int32)],
     {}, ShapeError, "QGemm: C of shape"),
    ("QGemm", [_U8, _S, _Z, np.zeros((3, 2), np.uint8), _S, _Z, np.zeros(2, np.float32)],
     {}, ShapeError, "QGemm: C must be int32"),
    ("QGemm", [_U8, _S, _Z, np.zeros((3, 2), np.uint8), _S, _Z, None, None, _Z], {},
     ShapeError, "QGemm: y_zero_point is given without y_scale"),
    ("QGemm", [np.zeros((2, 3, 1), np.uint8), _S, _Z, np.zeros((3, 2), np.uint8), _S, _Z],
     {}, ShapeError, "QGemm: A must be 2-D"),
])
def test_bad_inputs_raise_named_errors(op, inputs, attrs, error, words):
    with pytest.raises(error, match=words):
        _kernel(op, inputs, attrs)


def test_bad_model_names_node_and_input_at_import():
    """A zero point of the wrong type is refused by inference when the model is imported
    (or run), with onegraph's ShapeError naming the node, the op and the input."""
    x = np.zeros((2, 3), np.uint8)
    inputs = [("X", x), ("xs", np.float32(0.1)), ("xz", np.int8(3)), ("ys", np.float32(0.1)),
              ("yz", np.uint8(0))]
    model = _model("QLinearSigmoid", inputs, {"X"}, {}, np.uint8)
    with pytest.raises(ShapeError, match=r"QLinearSigmoid.*X_zero_point is int8"):
        onegraph.Session(from_onnx(model)).run("Y", {"X": x})


def test_missing_required_attribute():
    with pytest.raises(OpAttributeError, match="kernel_shape"):
        REGISTRY.get("QLinearAveragePool", MS).resolve_attrs({})
    with pytest.raises(OpAttributeError, match="opset"):
        REGISTRY.get("QLinearSoftmax", MS).resolve_attrs({})


def test_schema_defaults_match_onnxruntime():
    """Attribute defaults and input arity as onnxruntime's registered schemas state them."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    schemas = {s.name: s for s in state.get_all_operator_schema() if s.domain == MS}
    for op in (o for o in REGISTRY if o.domain == MS):
        schema = schemas[op.name]
        assert [i.name for i in schema.inputs] == [n.rstrip("?*") for n in op.inputs]
        optional = [str(i.option).endswith("Optional") for i in schema.inputs]
        assert optional == [n.endswith("?") for n in op.inputs], op.name
        assert {a.name for a in op.attrs} == set(schema.attributes), op.name
        for spec in op.attrs:
            assert spec.required == schema.attributes[spec.name].required, (op.name, spec.name)
    assert REGISTRY.get("QLinearLeakyRelu", MS).attr_spec("alpha").default == \
        float(np.float32(0.01))
    assert REGISTRY.get("QLinearSoftmax", MS).attr_spec("axis").default == -1


# --------------------------------------------------------------------------------------
# Export: back to com.microsoft, run by onnxruntime
# --------------------------------------------------------------------------------------


def _small_float_model(seed=0):
    """A small conv net whose QOperator quantization uses every op of the module."""
    rng = np.random.default_rng(seed)
    inits = []

    def weight(name, shape):
        fan_in = int(np.prod(shape[1:]))
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * np.sqrt(2 / fan_in)).astype(np.float32), name))
        return name

    def bias(name, n):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(n) * 0.1).astype(np.float32), name))
        return name

    node = helper.make_node
    nodes = [
        node("Conv", ["x", weight("w1", (8, 3, 3, 3)), bias("b1", 8)], ["c1"], pads=[1] * 4),
        node("Relu", ["c1"], ["r1"]),
        node("Conv", ["r1", weight("w2", (8, 8, 3, 3)), bias("b2", 8)], ["c2"], pads=[1] * 4),
        node("LeakyRelu", ["c2"], ["l2"], alpha=0.1),
        node("Sigmoid", ["c2"], ["s2"]),
        node("Mul", ["l2", "s2"], ["m2"]),
        node("Add", ["m2", "r1"], ["a2"]),
        node("AveragePool", ["a2"], ["p2"], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4),
        node("Conv", ["p2", weight("w3", (8, 8, 1, 1)), bias("b3", 8)], ["c3"]),
        node("Concat", ["p2", "c3"], ["cat"], axis=1),
        node("GlobalAveragePool", ["cat"], ["g"]),
        node("Flatten", ["g"], ["f"]),
        node("Gemm", ["f", weight("w4", (10, 16)), bias("b4", 10)], ["logits"], transB=1),
        node("Softmax", ["logits"], ["prob"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 12, 12])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [2, 10]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, [2, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _quantize(model, tmp_path, activations, weights, per_channel, seed=0):
    """onnxruntime's quantize_static, QOperator format, calibrated on two seeded random
    inputs (no quant_pre_process: it needs sympy)."""
    from onnxruntime import quantization as q

    feed = model.graph.input[0]
    shape = [d.dim_value or 1 for d in feed.type.tensor_type.shape.dim]

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(seed)
            self.batches = iter([{feed.name: rng.standard_normal(shape).astype(np.float32)}
                                 for _ in range(2)])

        def get_next(self):
            return next(self.batches, None)

    src, dst = tmp_path / "float.onnx", tmp_path / "quantized.onnx"
    onnx.save(model, src)
    # 7-bit weights where onnxruntime's int8 products saturate (tests/ort_int8.py)
    q.quantize_static(str(src), str(dst), Reader(), quant_format=q.QuantFormat.QOperator,
                      activation_type=getattr(q.QuantType, activations),
                      weight_type=getattr(q.QuantType, weights), per_channel=per_channel,
                      reduce_range=ort_saturates_u8s8())
    return onnx.load(dst), feed.name, shape


def _output_steps(model, outputs, want, got):
    """Largest |difference| of each float output in steps of the scale of the
    DequantizeLinear that produces it."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}
    steps = {}
    for name, a, b in zip(outputs, want, got):
        node = producer[name]
        assert node.op_type == "DequantizeLinear", name
        scale = float(inits[node.input[1]])
        # dequantized outputs are multiples of the scale up to float32 rounding
        steps[name] = round(float(np.abs(a.astype(np.float64) - b).max()) / scale, 3)
    return steps


def _round_trip(model, feeds, outputs, want):
    """to_onnx writes the ops back in com.microsoft with an opset_import for it; the
    checker passes and onnxruntime gives the same outputs on the exported model."""
    exported = to_onnx(from_onnx(model))
    assert {o.domain: o.version for o in exported.opset_import}.get(MS) == 1
    ms_nodes = [n.op_type for n in exported.graph.node if n.domain == MS]
    assert sorted(ms_nodes) == sorted(n.op_type for n in model.graph.node if n.domain == MS)
    onnx.checker.check_model(exported, full_check=True)
    again = _ort(exported, feeds, outputs)
    for a, b in zip(want, again):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("activations, weights, per_channel", [
    ("QUInt8", "QInt8", False), ("QInt8", "QInt8", True), ("QUInt8", "QUInt8", False)])
def test_small_quantized_model(tmp_path, activations, weights, per_channel):
    """Bound: 0 steps (measured: every output equal, 3 inputs x 4 settings)."""
    model, name, shape = _quantize(_small_float_model(), tmp_path, activations, weights,
                                   per_channel)
    used = {n.op_type for n in model.graph.node if n.domain == MS}
    assert used == {"QGemm", "QLinearAdd", "QLinearAveragePool", "QLinearConcat",
                    "QLinearGlobalAveragePool", "QLinearLeakyRelu", "QLinearMul",
                    "QLinearSigmoid", "QLinearSoftmax"}
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    outputs = [o.name for o in model.graph.output]
    want = _ort(model, {name: x}, outputs)
    got = _og(model, {name: x}, outputs)
    steps = _output_steps(model, outputs, want, got)
    assert max(steps.values()) == 0, steps
    _round_trip(model, {name: x}, outputs, want)


@pytest.mark.parametrize("activations, weights, per_channel", [
    ("QUInt8", "QInt8", False), ("QInt8", "QInt8", True)])
def test_squeezenet_quantized(tmp_path, activations, weights, per_channel):
    """SqueezeNet (the onnx wheel's light model, seeded random weights, logits exposed)
    quantized by onnxruntime: QLinearConcat x8, QLinearGlobalAveragePool, QLinearSoftmax
    next to 26 QLinearConv. Bound: 1 step on the logits, 0 on the softmax. Measured: 1
    step, from QLinearConv (the standard op; `ops/quantization._requantize` rounds the
    exact product where onnxruntime rounds a float32 one, which parts on 2-3 of 2.6
    million conv outputs here); the contrib ops themselves, run on onnxruntime's own
    inputs, match it exactly (0 of 1.45 million concat outputs differ)."""
    from ..convert.model_zoo import light_model_path, random_weight_variant

    float_model = random_weight_variant(onnx.load(light_model_path("squeezenet")), seed=0)
    model, name, shape = _quantize(float_model, tmp_path, activations, weights, per_channel)
    assert {"QLinearConcat", "QLinearGlobalAveragePool", "QLinearSoftmax"} <= \
        {n.op_type for n in model.graph.node if n.domain == MS}
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    outputs = [o.name for o in model.graph.output]
    want = _ort(model, {name: x}, outputs)
    got = _og(model, {name: x}, outputs)
    steps = _output_steps(model, outputs, want, got)
    assert max(steps.values()) <= 1, steps
    _round_trip(model, {name: x}, outputs, want)



@pytest.mark.parametrize("x_scale", [0.0, -0.5, np.nan])
def test_softmax_refuses_a_degenerate_x_scale(x_scale):
    """onnxruntime refuses an X_scale that is not positive ("x_scale must be
    positive"); the exp table divides by it, so onegraph refuses it with its named
    error (was a ZeroDivisionError for 0)."""
    with pytest.raises(ShapeError, match="QLinearSoftmax: X_scale must be positive"):
        _kernel("QLinearSoftmax", [_U8, np.float32(x_scale), _Z, _S, _Z], {"opset": 13})


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("x_scale", [1.33e36, np.inf])
def test_softmax_of_a_masked_attention_scale(dtype, x_scale):
    """quantize_static of a Hugging Face decoder's attention: calibration sees the
    additive mask's float32 min, so X_scale is huge (1.33e36) or overflows to inf, and
    the rows are a few maxima then the masked codes. onnxruntime runs both: ties such
    as 63.5 round as its (e / sum) * floor(1 / y_scale) does (onegraph's product with
    1 / sum first gave 63), and an infinite scale gives 0 everywhere (onegraph refused
    it, so 15 quantized decoders failed to run)."""
    info = np.iinfo(dtype)
    rows = [[info.max] * k + [info.min] * (8 - k) for k in range(1, 9)]
    x = np.concatenate([np.array(rows, dtype),
                        _codes(np.random.default_rng(12), dtype, (24, 8))]).reshape(4, 8, 8)
    # (the y_scales the quantization tools write; with y_scale 0.01 onnxruntime still
    # rounds 8 of these 256 ties differently: its order there is not reproduced)
    for y_scale, y_zp in ((1 / 255, 0), (1 / 256, info.min), (1 / 255, info.min)):
        inputs = [("X", x), ("xs", np.float32(x_scale)), ("xz", np.asarray(0, dtype)),
                  ("ys", np.float32(y_scale)), ("yz", np.asarray(y_zp, dtype))]
        _assert_same(_model("QLinearSoftmax", inputs, {"X"}, {"opset": 13}, dtype), inputs,
                     {"X"}, {"opset": 13}, "QLinearSoftmax")


@pytest.mark.parametrize("dtype", _DTYPES)
def test_softmax_of_rows_of_one_value(dtype):
    """A softmax axis of length 1 (MobileViT's attention over one patch): its one exp
    value is near FLT_MAX / e^5, so e * floor(1 / y_scale) would overflow to inf and
    give 255 where onnxruntime gives 254."""
    x = _codes(np.random.default_rng(13), dtype, (2, 5, 1))
    for y_scale in (1 / 255, 1 / 256):
        inputs = [("X", x), ("xs", np.float32(0.05)), ("xz", np.asarray(0, dtype)),
                  ("ys", np.float32(y_scale)), ("yz", np.asarray(np.iinfo(dtype).min, dtype))]
        _assert_same(_model("QLinearSoftmax", inputs, {"X"}, {"opset": 13}, dtype), inputs,
                     {"X"}, {"opset": 13}, "QLinearSoftmax")

"""Quantization and ONNX-ML kernels on the cases an audit against onnxruntime found.

* MatMulInteger / QLinearMatMul with N-D per-row ([D1, M, 1]) and per-column
  ([D1, 1, N]) scales and zero points, and the shapes the spec forbids (a named
  ShapeError naming the input and its shape);
* QuantizeLinear of NaN, and of x / 0 with a zero scale, into every integer type;
* LabelEncoder of ai.onnx.ml opset 1 (classes_strings, default_int64, default_string);
* FeatureVectorizer on a batch of zero rows.

onnxruntime (CPU) is the oracle; where it refuses an input the spec allows, onnx's
ReferenceEvaluator is. onnxruntime aborts the whole process on the empty-batch
FeatureVectorizer, so that case is checked against the reference only.
"""

from __future__ import annotations

import numpy as np
import pytest

from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError, OpAttributeError, ShapeError
from onegraph.ops import TensorInfo, get_op
from onegraph.train.session import Session

from ..ort_int8 import ort_saturates_u8s8
from .single_node import run_onnxruntime

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
ml_dtypes = pytest.importorskip("ml_dtypes")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

ML = "ai.onnx.ml"
U8, S8 = np.uint8, np.int8


def _model(op, inputs, out_elem, initializers, opset=21, ml_opset=None, domain="",
           **attrs):
    """A one-node model: `inputs` are (name, array) pairs in node order ("" leaves an
    optional input out); those named in `initializers` are constants, the rest graph
    inputs. Output "y" of element type `out_elem`."""
    elem = helper.np_dtype_to_tensor_dtype
    node = helper.make_node(op, [n for n, _ in inputs], ["y"], domain=domain or None,
                            **attrs)
    graph_inputs = [helper.make_tensor_value_info(n, elem(np.asarray(v).dtype),
                                                  list(np.shape(v)))
                    for n, v in inputs if n and n not in initializers]
    graph = helper.make_graph(
        [node], op.lower(), graph_inputs, [helper.make_tensor_value_info("y", out_elem, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()])
    opsets = [helper.make_opsetid("", opset)]
    if ml_opset is not None:
        opsets.append(helper.make_opsetid(ML, ml_opset))
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 10 if opset >= 21 else 9
    return m


def _run_og(m, feeds):
    return Session(from_onnx(m)).run("y", feeds)


def _run_ref(m, feeds):
    return ReferenceEvaluator(m).run(None, feeds)[0]


def _assert_same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "OSU":
        assert got.tolist() == want.astype(object).tolist()
        return
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


def _ort_exact(oracle, b) -> bool:
    """Whether a case's oracle is onnxruntime here: not for an int8 b on a CPU where
    onnxruntime's uint8 x int8 products saturate (tests/ort_int8.py), where ONNX's
    reference, exact on the full range, takes its place."""
    return oracle == "ort" and not (b.dtype == np.int8 and ort_saturates_u8s8())


def _ints(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(int(info.min), int(info.max) + 1, shape).astype(dtype)


# --------------------------------------------------------------------------- MatMulInteger

# (case, a shape, b shape, a_zero_point shape or None, b_zero_point shape or None,
#  b dtype, oracle). onnxruntime refuses any a_zero_point that is not a single value
# and batch-broadcast zero points, which the spec allows ([D1, D2, M, 1]) and the
# reference computes.
_MMI_CASES = [
    ("b [D1,1,N]", (2, 3, 4), (2, 4, 5), (), (2, 1, 5), U8, "ort"),
    ("b [D1,1,N] int8", (2, 3, 4), (2, 4, 5), (), (2, 1, 5), S8, "ort"),
    ("b [D1,D2,1,N]", (2, 2, 3, 4), (2, 2, 4, 5), None, (2, 2, 1, 5), U8, "ort"),
    ("2-D b [1,N]", (3, 4), (4, 5), None, (1, 5), U8, "ort"),
    ("vector a, b [D1,1,N]", (4,), (2, 4, 5), (), (2, 1, 5), U8, "ort"),
    ("b [1,1,N] broadcast over the batch", (2, 3, 4), (2, 4, 5), None, (1, 1, 5), U8, "ref"),
    ("a [D1,M,1]", (2, 3, 4), (2, 4, 5), (2, 3, 1), None, U8, "ref"),
    ("a [D1,1,1] with M = 1", (2, 1, 4), (4, 5), (2, 1, 1), None, U8, "ref"),
    ("2-D a [M,1]", (3, 4), (4, 5), (3, 1), (5,), U8, "ref"),
    ("a [D1,M,1] and b [D1,1,N]", (2, 3, 4), (2, 4, 5), (2, 3, 1), (2, 1, 5), U8, "ref"),
]


def _matmul_integer(a, b, azp, bzp):
    inits = {}
    inputs = [("a", a), ("b", b)]
    for name, zp in (("azp", azp), ("bzp", bzp)):
        if zp is None:
            inputs.append(("", None))
        else:
            inputs.append((name, zp))
            inits[name] = zp
    while inputs[-1][0] == "":
        inputs.pop()
    return _model("MatMulInteger", inputs, TensorProto.INT32, inits, opset=10)


@pytest.mark.parametrize("case", _MMI_CASES, ids=[c[0] for c in _MMI_CASES])
def test_matmul_integer_nd_zero_points_match_the_oracle(case):
    _, sa, sb, sza, szb, b_dtype, oracle = case
    rng = np.random.default_rng(5)
    a, b = _ints(rng, sa, U8), _ints(rng, sb, b_dtype)
    azp = None if sza is None else _ints(rng, sza, U8)
    bzp = None if szb is None else _ints(rng, szb, b_dtype)
    m = _matmul_integer(a, b, azp, bzp)
    feeds = {"a": a, "b": b}
    want = run_onnxruntime(m, feeds) if _ort_exact(oracle, b) else _run_ref(m, feeds)
    _assert_same(_run_og(m, feeds), want)


# (case, a shape, b shape, a_zero_point shape, b_zero_point shape, the message)
_MMI_BAD = [
    ("b zero point of b's full shape", (2, 3, 4), (2, 4, 5), None, (2, 4, 5),
     r"b_zero_point of shape \(2, 4, 5\) does not fit B of shape \(2, 4, 5\)"),
    ("b zero point of the wrong length", (2, 3, 4), (2, 4, 5), None, (3,),
     r"b_zero_point of shape \(3,\) does not fit B of shape \(2, 4, 5\)"),
    ("b zero point of higher rank than b", (2, 3, 4), (4, 5), None, (2, 1, 5),
     r"b_zero_point of shape \(2, 1, 5\) does not fit B of shape \(4, 5\)"),
    ("a zero point of a's full shape", (2, 3, 4), (2, 4, 5), (2, 3, 4), None,
     r"a_zero_point of shape \(2, 3, 4\) does not fit A of shape \(2, 3, 4\)"),
    ("a zero point batch larger than a's", (1, 3, 4), (4, 5), (2, 3, 1), None,
     r"a_zero_point of shape \(2, 3, 1\) does not fit A of shape \(1, 3, 4\)"),
]


@pytest.mark.parametrize("case", _MMI_BAD, ids=[c[0] for c in _MMI_BAD])
def test_matmul_integer_zero_points_the_spec_forbids_raise_shape_error(case):
    _, sa, sb, sza, szb, message = case
    rng = np.random.default_rng(6)
    a, b = _ints(rng, sa, U8), _ints(rng, sb, U8)
    azp = None if sza is None else _ints(rng, sza, U8)
    bzp = None if szb is None else _ints(rng, szb, U8)
    m = _matmul_integer(a, b, azp, bzp)
    with pytest.raises(Exception):  # onnxruntime refuses these too
        run_onnxruntime(m, {"a": a, "b": b})
    with pytest.raises(ShapeError, match="MatMulInteger: " + message):
        _run_og(m, {"a": a, "b": b})


# --------------------------------------------------------------------------- QLinearMatMul

def _qlinear_matmul(rng, sa, sb, a_scale, b_scale, a_zp=(), b_zp=(), y_scale=(),
                    b_dtype=U8):
    """A QLinearMatMul model with random uint8 a, `b_dtype` b, and scales / zero points
    of the given shapes (the zero points' shapes default to a single value)."""
    a, b = _ints(rng, sa, U8), _ints(rng, sb, b_dtype)
    inits = {"as": rng.uniform(0.01, 0.03, a_scale).astype(np.float32),
             "azp": _ints(rng, a_zp, U8),
             "bs": rng.uniform(0.001, 0.05, b_scale).astype(np.float32),
             "bzp": _ints(rng, b_zp, b_dtype),
             "ys": rng.uniform(0.1, 0.3, y_scale).astype(np.float32),
             "yzp": np.full(y_scale, 100, U8)}
    names = ["a", "as", "azp", "b", "bs", "bzp", "ys", "yzp"]
    values = dict(inits, a=a, b=b)
    m = _model("QLinearMatMul", [(n, values[n]) for n in names], TensorProto.UINT8, inits)
    return m, {"a": a, "b": b}


# (case, a shape, b shape, keyword shapes for _qlinear_matmul, oracle)
_QLMM_CASES = [
    ("b [D1,1,N]", (2, 3, 4), (2, 4, 5), dict(b_scale=(2, 1, 5), b_zp=(2, 1, 5)), "ort"),
    ("b [D1,1,N] int8", (2, 3, 4), (2, 4, 5),
     dict(b_scale=(2, 1, 5), b_zp=(2, 1, 5), b_dtype=S8), "ort"),
    ("b [D1,D2,1,N]", (2, 2, 3, 4), (2, 2, 4, 5),
     dict(b_scale=(2, 2, 1, 5), b_zp=(2, 2, 1, 5)), "ort"),
    ("b scale [D1,1,N], one zero point", (2, 3, 4), (2, 4, 5), dict(b_scale=(2, 1, 5)), "ort"),
    ("one b scale, zero point [D1,1,N]", (2, 3, 4), (2, 4, 5), dict(b_zp=(2, 1, 5)), "ort"),
    ("2-D b [1,N]", (3, 4), (4, 5), dict(b_scale=(1, 5), b_zp=(1, 5)), "ort"),
    ("vector a, b [D1,1,N]", (4,), (2, 4, 5), dict(b_scale=(2, 1, 5), b_zp=(2, 1, 5)), "ort"),
    ("a [D1,M,1]", (2, 3, 4), (2, 4, 5), dict(a_scale=(2, 3, 1), a_zp=(2, 3, 1)), "ref"),
    ("a [D1,M,1] and b [D1,1,N]", (2, 3, 4), (2, 4, 5),
     dict(a_scale=(2, 3, 1), a_zp=(2, 3, 1), b_scale=(2, 1, 5), b_zp=(2, 1, 5)), "ref"),
    ("2-D a [M,1]", (3, 4), (4, 5), dict(a_scale=(3, 1), a_zp=(3, 1)), "ref"),
]


@pytest.mark.parametrize("case", _QLMM_CASES, ids=[c[0] for c in _QLMM_CASES])
def test_qlinear_matmul_nd_scales_match_the_oracle(case):
    _, sa, sb, shapes, oracle = case
    shapes = dict(dict(a_scale=(), b_scale=()), **shapes)
    m, feeds = _qlinear_matmul(np.random.default_rng(7), sa, sb, **shapes)
    want = run_onnxruntime(m, feeds) if _ort_exact(oracle, feeds["b"]) \
        else _run_ref(m, feeds)
    _assert_same(_run_og(m, feeds), want)


def test_qlinear_matmul_per_row_a_with_a_vector_b():
    """a [D1, M, 1] scales with a 1-D b: onnxruntime refuses per-row a, and the
    reference mis-broadcasts a 1-D b, so the oracle is the reference on b as [K, 1]
    (numpy.matmul's definition of a vector b) with that axis dropped."""
    rng = np.random.default_rng(8)
    m, feeds = _qlinear_matmul(rng, (2, 3, 4), (4,), a_scale=(2, 3, 1), a_zp=(2, 3, 1),
                               b_scale=())
    column = onnx.ModelProto()
    column.CopyFrom(m)
    column.graph.input[1].CopyFrom(helper.make_tensor_value_info("b", TensorProto.UINT8,
                                                                 [4, 1]))
    want = _run_ref(column, {"a": feeds["a"], "b": feeds["b"].reshape(4, 1)})[..., 0]
    _assert_same(_run_og(m, feeds), want)


# (case, a shape, b shape, keyword shapes for _qlinear_matmul, the message)
_QLMM_BAD = [
    ("b scale of b's full shape", (2, 3, 4), (2, 4, 5), dict(b_scale=(2, 4, 5)),
     r"b_scale of shape \(2, 4, 5\) does not fit b of shape \(2, 4, 5\)"),
    ("b scale flattened", (2, 3, 4), (2, 4, 5), dict(b_scale=(10,)),
     r"b_scale of shape \(10,\) does not fit b of shape \(2, 4, 5\)"),
    ("b scale of higher rank than b", (2, 3, 4), (4, 5), dict(b_scale=(2, 1, 5)),
     r"b_scale of shape \(2, 1, 5\) does not fit b of shape \(4, 5\)"),
    ("b zero point of the wrong width", (2, 3, 4), (2, 4, 5), dict(b_zp=(2, 1, 4)),
     r"b_zero_point of shape \(2, 1, 4\) does not fit b of shape \(2, 4, 5\)"),
    ("a scale of a's full shape", (2, 3, 4), (2, 4, 5), dict(a_scale=(2, 3, 4)),
     r"a_scale of shape \(2, 3, 4\) does not fit a of shape \(2, 3, 4\)"),
    ("per-column scale of a vector b", (3, 4), (4,), dict(b_scale=(2,)),
     r"b_scale of shape \(2,\) does not fit b of shape \(4,\)"),
    ("y scale not a single value", (3, 4), (4, 5), dict(y_scale=(2,)),
     r"y_scale of shape \(2,\) must hold one value"),
]


@pytest.mark.parametrize("case", _QLMM_BAD, ids=[c[0] for c in _QLMM_BAD])
def test_qlinear_matmul_shapes_the_spec_forbids_raise_shape_error(case):
    _, sa, sb, shapes, message = case
    shapes = dict(dict(a_scale=(), b_scale=()), **shapes)
    m, feeds = _qlinear_matmul(np.random.default_rng(9), sa, sb, **shapes)
    with pytest.raises(Exception):  # onnxruntime refuses these too
        run_onnxruntime(m, feeds)
    with pytest.raises(ShapeError, match="QLinearMatMul: " + message):
        _run_og(m, feeds)


# --------------------------------------------------------------------------- QuantizeLinear

_INT_TARGETS = [(np.int8, 21), (np.uint8, 21), (np.int16, 21), (np.uint16, 21),
                (ml_dtypes.int4, 21), (ml_dtypes.uint4, 21), (ml_dtypes.int2, 25),
                (ml_dtypes.uint2, 25)]
_NAN_X = np.array([np.nan, -np.nan, 0.0, 1.0, -1.0, 2.5, np.inf, -np.inf], np.float32)


@pytest.mark.parametrize("scale", [1.0, 0.0], ids=["scale 1", "scale 0"])
@pytest.mark.parametrize("zero_point", ["zero", "one", "max"])
@pytest.mark.parametrize("target", _INT_TARGETS,
                         ids=[np.dtype(t).name for t, _ in _INT_TARGETS])
def test_quantize_linear_nan_and_zero_scale_match_onnxruntime(target, zero_point, scale):
    """NaN (and 0 / 0 from a zero scale) becomes the type's minimum, as in onnxruntime
    and the reference; +-inf saturates (the reference gives the minimum for +inf too,
    a cast to int32 that overflows, so only its NaN entries are compared)."""
    dtype, opset = target
    high = int(ml_dtypes.iinfo(dtype).max)
    zp = np.array({"zero": 0, "one": 1, "max": high}[zero_point], dtype)
    inits = {"s": np.float32(scale), "zp": zp}
    m = _model("QuantizeLinear", [("x", _NAN_X), ("s", inits["s"]), ("zp", zp)],
               helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), inits, opset=opset)
    # onnxruntime's Python API returns no int4 / int2 arrays: read its output as int64
    wide = onnx.ModelProto()
    wide.CopyFrom(m)
    wide.graph.node.append(helper.make_node("Cast", ["y"], ["y64"], to=TensorProto.INT64))
    wide.graph.output[0].CopyFrom(helper.make_tensor_value_info("y64", TensorProto.INT64,
                                                                None))
    feeds = {"x": _NAN_X}
    got = _run_og(m, feeds)
    assert got.dtype == np.dtype(dtype)
    got = np.asarray(got).astype(np.int64)
    np.testing.assert_array_equal(got, run_onnxruntime(wide, feeds))
    undefined = np.isnan(_NAN_X) if scale else np.isnan(_NAN_X) | (_NAN_X == 0)
    with np.errstate(divide="ignore", invalid="ignore"):  # the reference's own casts
        ref = np.asarray(_run_ref(m, feeds)).astype(np.int64)
    np.testing.assert_array_equal(got[undefined], ref[undefined])


def test_quantize_linear_nan_per_axis_matches_onnxruntime():
    x = np.array([[np.nan, 1.0, -3.0], [4.0, np.nan, 0.0]], np.float32)
    inits = {"s": np.array([0.5, 0.0], np.float32), "zp": np.array([3, -2], np.int8)}
    m = _model("QuantizeLinear", [("x", x), ("s", inits["s"]), ("zp", inits["zp"])],
               TensorProto.INT8, inits, axis=0)
    _assert_same(_run_og(m, {"x": x}), run_onnxruntime(m, {"x": x}))


# --------------------------------------------------------------------------- LabelEncoder

def _label_encoder_v1(x, out_elem, ml_opset=1, **attrs):
    return _model("LabelEncoder", [("X", x)], out_elem, {}, opset=19, ml_opset=ml_opset,
                  domain=ML, **attrs)


_STRINGS = np.array(["a", "b", "zz", "c", "a", ""], dtype=object)
_INDICES = np.array([0, 2, 5, -1, 1, 3], np.int64)

_LE1_CASES = {
    "string to int": (_STRINGS, TensorProto.INT64,
                      dict(classes_strings=["a", "b", "c"], default_int64=42)),
    "string to int, duplicate class (the last wins)":
        (_STRINGS, TensorProto.INT64, dict(classes_strings=["a", "b", "a", "c"])),
    "string to int, default left out": (_STRINGS, TensorProto.INT64,
                                        dict(classes_strings=["a", "b"])),
    "string to int, 2-D": (_STRINGS.reshape(2, 3), TensorProto.INT64,
                           dict(classes_strings=["a", "b", "c"], default_int64=-5)),
    "int to string": (_INDICES, TensorProto.STRING,
                      dict(classes_strings=["a", "b", "c"], default_string="?")),
    "int to string, default left out": (_INDICES, TensorProto.STRING,
                                         dict(classes_strings=["a", "b"])),
    "int to string, 2-D": (_INDICES.reshape(3, 2), TensorProto.STRING,
                           dict(classes_strings=["x", "y", "z", "w"], default_string="")),
}


@pytest.mark.parametrize("case", list(_LE1_CASES))
def test_label_encoder_ml_opset1_matches_onnxruntime(case):
    x, out_elem, attrs = _LE1_CASES[case]
    m = _label_encoder_v1(x, out_elem, **attrs)
    want = run_onnxruntime(m, {"X": x})
    _assert_same(_run_og(m, {"X": x}), want)
    # the imported model exports back as ml opset 1, which onnxruntime runs alike
    _assert_same(run_onnxruntime(to_onnx(from_onnx(m)), {"X": x}), want)


def test_label_encoder_ml_opset1_in_an_upgraded_model_matches_onnxruntime():
    """A default-domain opset older than 13 is upgraded with onnx's version converter,
    which converts the default domain only: ai.onnx.ml stays at opset 1."""
    x = _STRINGS
    m = _model("LabelEncoder", [("X", x)], TensorProto.INT64, {}, opset=9, ml_opset=1,
               domain=ML, classes_strings=["a", "c"], default_int64=7)
    m.ir_version = 7
    assert from_onnx(m).opset_imports == {"": 13, ML: 1}
    _assert_same(_run_og(m, {"X": x}), run_onnxruntime(m, {"X": x}))


def test_label_encoder_ml_opset1_inference_and_errors():
    op = get_op("LabelEncoder", ML)
    attrs = op.resolve_attrs({"classes_strings": ["a", "b"]})
    assert op.infer(attrs, [TensorInfo(np.dtype(object), (4,))]) == \
        [TensorInfo(np.dtype(np.int64), (4,))]
    assert op.infer(attrs, [TensorInfo(np.dtype(np.int64), (2, 3))]) == \
        [TensorInfo(np.dtype(object), (2, 3))]
    with pytest.raises(ShapeError, match="LabelEncoder: classes_strings maps strings or "
                                         "integers, got input of type float32"):
        op.kernel([np.zeros(2, np.float32)], attrs, None)
    mixed = op.resolve_attrs({"classes_strings": ["a"], "keys_strings": ["a"],
                              "values_int64s": [1]})
    with pytest.raises(OpAttributeError, match="LabelEncoder: classes_strings .ml opset 1. "
                                               "cannot be combined with keys_strings"):
        op.kernel([np.array(["a"], object)], mixed, None)
    # an opset-1 attribute in an opset-2 model: onnxruntime and the importer refuse it
    m = _label_encoder_v1(_STRINGS, TensorProto.INT64, ml_opset=2, classes_strings=["a"])
    with pytest.raises(Exception):
        run_onnxruntime(m, {"X": _STRINGS})
    with pytest.raises(ConversionError, match="'classes_strings' is not defined for "
                                              "LabelEncoder at opset 2"):
        from_onnx(m)


# --------------------------------------------------------------------------- FeatureVectorizer

def test_feature_vectorizer_empty_batch_matches_the_reference():
    # onnxruntime aborts the process on this input: the reference is the oracle
    xs = [("X0", np.zeros((0, 3), np.float32)), ("X1", np.zeros((0, 2), np.int64))]
    m = _model("FeatureVectorizer", xs, TensorProto.FLOAT, {}, opset=19, ml_opset=1,
               domain=ML, inputdimensions=[3, 2])
    feeds = dict(xs)
    want = ReferenceEvaluator(m).run(None, feeds)[0]
    assert want.shape == (0, 5)
    # Y is float32 in the spec; the reference promotes the int64 input to float64
    _assert_same(_run_og(m, feeds), want.astype(np.float32))

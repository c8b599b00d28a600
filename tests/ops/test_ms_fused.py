"""onnxruntime's graph-optimizer fused ops (`ops/ms_fused.py`: FusedConv, FusedGemm,
FusedMatMul, TransposeMatMul, GemmFastGelu, NhwcMaxPool) against onnxruntime.

Oracle: onnxruntime's CPUExecutionProvider (graph optimizations off) on one-node models
with seeded random inputs. GemmFastGelu has no onnxruntime CPU kernel: its oracle is
MatMul + Add + Gelu(approximate="tanh") run in onnxruntime. FusedConv/FusedGemm in float64
have none either (nor have float64 Conv and Elu): their oracle is the ONNX formula written
in numpy in the test. NhwcMaxPool (int8/uint8) must match bit for bit.
Bounds: float32 TOL rtol = atol = 1e-5 (measured max error 3.8e-6 on outputs up to ~15,
at most 0.3 of the bound; summation order); the light models' logits LIGHT_TOL = 1e-5 of
their largest magnitude (measured 2.3e-7 of it for squeezenet, 5.1e-7 for shufflenet,
whose random-weight logits reach 3e6); float64
F64_TOL 1e-12 (measured 4.4e-15); float16 F16_TOL 2e-3 (measured 0 against onnxruntime's
float16 kernels, 9.5e-4 for GemmFastGelu against the float32 standard-op model, one
float16 step at |y| ~ 1-2). The quantized corpus model matches bit for bit.

The corpus tests build small float models (Conv+BatchNormalization+Relu, a Conv+Add+Relu
residual, Conv+Clip (Relu6), grouped Conv+LeakyRelu, Gemm+Relu, MatMul+Add+erf Gelu,
Transpose+MatMul, MatMul*scale) and a uint8 QLinearConv+MaxPool model, let onnxruntime
optimize and save them at ORT_ENABLE_EXTENDED and ORT_ENABLE_ALL (into tmp_path), check the
saved file holds the fused ops expected, then import it, run it in onegraph.Session and
compare with onnxruntime running the ORIGINAL model. Same for onnx's light squeezenet and
shufflenet (weights: their ConstantOfShape fills replaced by seeded random initializers,
since fills make every output 1/1000 and would prove nothing). Files that hold
com.microsoft.nchwc ops (what ORT_ENABLE_ALL writes for float convolutions on this
machine) run with ms_nchwc.BLOCK_SIZE set to this machine's block size (the `block`
fixture of test_ms_nchwc.py); files holding ops not registered are skipped, saying which.
"""

from __future__ import annotations

import collections
import math
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import (ConversionError, OpAttributeError, ShapeError,  # noqa: E402
                             UnsupportedOpError)
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from .single_node import node_inputs, ort_session  # noqa: E402
from .test_ms_nchwc import block, machine_block  # noqa: E402,F401 (fixtures)

MS = "com.microsoft"
TOL = dict(rtol=1e-5, atol=1e-5)
F64_TOL = dict(rtol=1e-12, atol=1e-12)
F16_TOL = dict(rtol=2e-3, atol=2e-3)
LIGHT_TOL = 1e-5
_TOLS = {np.dtype(np.float32): TOL, np.dtype(np.float64): F64_TOL,
         np.dtype(np.float16): F16_TOL}


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _randn(rng, *shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _model(op, inputs, domain=MS, out_elem=None, opset=17, **attrs):
    """A one-node model of `op`; `inputs` a list of (name, array or None), all graph
    inputs; output "y" of the first input's type (or `out_elem`)."""
    names, graph_inputs, _ = node_inputs(inputs)
    while names and names[-1] == "":
        names.pop()
    elem = out_elem or helper.np_dtype_to_tensor_dtype(np.asarray(inputs[0][1]).dtype)
    node = helper.make_node(op, names, ["y"], domain=domain, **attrs)
    graph = helper.make_graph([node], op, graph_inputs,
                              [helper.make_tensor_value_info("y", elem, None)])
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)]
                                                  if domain == MS else [])
    return helper.make_model(graph, opset_imports=imports, ir_version=9)


def _feeds(inputs):
    return {k: np.asarray(v) for k, v in inputs if v is not None}


def _og(model, feeds):
    return onegraph.Session(from_onnx(model)).run([o.name for o in model.graph.output],
                                                  feeds)


def _check(op, inputs, tol=None, **attrs):
    """onegraph's output of the one-node model against onnxruntime's; also checks that
    shape/dtype inference agrees with the kernel's output. Returns the max error."""
    model = _model(op, inputs, **attrs)
    feeds = _feeds(inputs)
    want = ort_session(model, optimize=False).run(None, feeds)[0]
    got = _og(model, feeds)[0]
    tol = tol or _TOLS.get(np.asarray(inputs[0][1]).dtype, {})
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), **tol)
    _check_infer(op, inputs, attrs, got)
    return float(np.max(np.abs(got.astype(np.float64) - want), initial=0))


def _check_infer(op, inputs, attrs, got):
    opdef = REGISTRY.get(op, MS)
    infos = [None if v is None else TensorInfo(np.asarray(v).dtype, np.shape(v))
             for _, v in inputs]
    (info,) = opdef.infer(opdef.resolve_attrs(attrs), infos)
    assert info.dtype == got.dtype and tuple(info.shape) == got.shape


def _standard(nodes, inputs, opset=20):
    """onnxruntime's output "y" of a model of standard `nodes` over graph `inputs`."""
    _, graph_inputs, _ = node_inputs(inputs)
    elem = helper.np_dtype_to_tensor_dtype(np.asarray(inputs[0][1]).dtype)
    graph = helper.make_graph(nodes, "std", graph_inputs,
                              [helper.make_tensor_value_info("y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=9)
    return ort_session(model, optimize=False).run(None, _feeds(inputs))[0]


# --------------------------------------------------------------------------------------
# FusedConv
# --------------------------------------------------------------------------------------

_CONV_ACTS = [(None, None), ("Relu", None), ("Tanh", None), ("Sigmoid", None),
              ("HardSwish", None), ("LeakyRelu", [0.2]), ("Clip", [-0.5, 1.5]),
              ("HardSigmoid", [0.3, 0.4])]


def _act_attrs(act, params):
    attrs = {}
    if act is not None:
        attrs["activation"] = act
    if params is not None:
        attrs["activation_params"] = params
    return attrs


@pytest.mark.parametrize("act,params", _CONV_ACTS)
@pytest.mark.parametrize("with_b,with_z", [(False, False), (True, False), (True, True)])
def test_fused_conv_activations(rng, act, params, with_b, with_z):
    x, w = _randn(rng, 2, 4, 7, 6), _randn(rng, 5, 4, 3, 3, scale=0.5)
    b = _randn(rng, 5) if with_b else None
    z = _randn(rng, 2, 5, 7, 6) if with_z else None
    inputs = [("x", x), ("w", w), ("b", b), ("z", z)]
    _check("FusedConv", inputs, pads=[1, 1, 1, 1], **_act_attrs(act, params))


@pytest.mark.parametrize("shape,wshape,attrs", [
    ((1, 4, 9, 8), (6, 2, 3, 3), dict(group=2, strides=[2, 1], pads=[0, 1, 2, 0])),
    ((1, 4, 9, 9), (4, 1, 3, 3), dict(group=4, dilations=[2, 2], pads=[2, 1, 2, 1])),
    ((1, 3, 9, 8), (4, 3, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER")),
    ((2, 3, 10), (4, 3, 3), dict(strides=[2], pads=[1, 1])),
    ((1, 2, 4, 5, 5), (3, 2, 2, 3, 3), dict(pads=[0, 1, 1, 0, 1, 1])),
    ((1, 8, 5, 5), (16, 8, 1, 1), {}),
])
def test_fused_conv_geometry(rng, shape, wshape, attrs):
    x, w, b = _randn(rng, *shape), _randn(rng, *wshape, scale=0.5), _randn(rng, wshape[0])
    _check("FusedConv", [("x", x), ("w", w), ("b", b)], activation="LeakyRelu",
           activation_params=[0.1], **attrs)


def test_fused_conv_float16(rng):
    x, w = _randn(rng, 1, 4, 6, 6, dtype=np.float16), _randn(rng, 3, 4, 3, 3, dtype=np.float16,
                                                             scale=0.3)
    b, z = _randn(rng, 3, dtype=np.float16), _randn(rng, 1, 3, 4, 4, dtype=np.float16)
    _check("FusedConv", [("x", x), ("w", w), ("b", b), ("z", z)], activation="Clip",
           activation_params=[0.0, 1.0])


def _np_conv2d(x, w, b, pads):
    """An independent float64 2-D Conv (stride 1, group 1) from the ONNX spec:
    zero-padded windows contracted with the weights."""
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    win = np.lib.stride_tricks.sliding_window_view(xp, w.shape[2:], axis=(2, 3))
    return np.einsum("ncijkl,mckl->nmij", win, w) + b.reshape(1, -1, 1, 1)


@pytest.mark.parametrize("act,params,fn", [
    ("Relu", None, lambda s: np.maximum(s, 0)),
    ("LeakyRelu", [0.3], lambda s: np.where(s < 0, 0.3 * s, s)),
    ("HardSigmoid", [0.3, 0.4], lambda s: np.clip(0.3 * s + 0.4, 0, 1)),
    ("HardSwish", None, lambda s: s * np.clip(s / 6 + 0.5, 0, 1)),
    ("Sigmoid", None, lambda s: 1 / (1 + np.exp(-s))),
])
def test_fused_conv_float64(rng, act, params, fn):
    """onnxruntime has no float64 FusedConv (nor Conv) CPU kernel: the oracle is the
    ONNX formula in numpy (float64 activation params are float32 attributes, as in the
    model: 0.3 is float32(0.3))."""
    x, w = _randn(rng, 2, 3, 6, 6, dtype=np.float64), _randn(rng, 4, 3, 3, 3, dtype=np.float64)
    b, z = _randn(rng, 4, dtype=np.float64), _randn(rng, 2, 4, 6, 6, dtype=np.float64)
    inputs = [("x", x), ("w", w), ("b", b), ("z", z)]
    if params:
        f32 = [float(np.float32(p)) for p in params]
        fn = {"LeakyRelu": lambda s: np.where(s < 0, f32[0] * s, s),
              "HardSigmoid": lambda s: np.clip(f32[0] * s + f32[1], 0, 1)}[act]
    want = fn(_np_conv2d(x, w, b, [1, 1, 1, 1]) + z)
    got = _og(_model("FusedConv", inputs, pads=[1, 1, 1, 1], **_act_attrs(act, params)),
              _feeds(inputs))[0]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, **F64_TOL)


def test_fused_conv_errors(rng):
    x, w = _randn(rng, 1, 2, 4, 4), _randn(rng, 3, 2, 3, 3)
    op = REGISTRY.get("FusedConv", MS)
    with pytest.raises(UnsupportedOpError, match="FusedConv: activation 'Gelu' is not "
                                                 "supported"):
        op.resolve_attrs({"activation": "Gelu"})
    with pytest.raises(UnsupportedOpError, match="FusedConv: activation 'Gelu' is not"):
        from_onnx(_model("FusedConv", [("x", x), ("w", w)], activation="Gelu"))
    with pytest.raises(OpAttributeError, match="FusedConv: activation LeakyRelu needs 1"):
        op.resolve_attrs({"activation": "LeakyRelu"})
    with pytest.raises(OpAttributeError, match="FusedConv: activation Clip needs 2"):
        op.resolve_attrs({"activation": "Clip", "activation_params": [1.0]})
    kernel = op.kernel
    attrs = op.resolve_attrs({"activation": "Relu"})
    with pytest.raises(UnsupportedOpError, match="FusedConv: activation 'relu'"):
        kernel([x, w], dict(attrs, activation="relu"), None)
    with pytest.raises(ShapeError, match=r"FusedConv: Z must have the output's shape"):
        kernel([x, w, None, np.zeros((1, 3, 1, 1), np.float32)], attrs, None)
    with pytest.raises(ShapeError, match="FusedConv: X must be float16, float32 or float64"):
        kernel([x.astype(np.int32), w], attrs, None)
    with pytest.raises(ShapeError, match="FusedConv: W is float64, but X is float32"):
        kernel([x, w.astype(np.float64)], attrs, None)
    with pytest.raises(ShapeError, match="FusedConv: .*channels"):
        kernel([x, _randn(rng, 3, 3, 3, 3)], attrs, None)
    infer = REGISTRY.get("FusedConv", MS).infer
    with pytest.raises(ShapeError, match="FusedConv: Z must have"):
        infer(attrs, [TensorInfo(np.dtype(np.float32), (1, 2, 4, 4)),
                      TensorInfo(np.dtype(np.float32), (3, 2, 3, 3)), None,
                      TensorInfo(np.dtype(np.float32), (1, 3, 4, 4))])


# --------------------------------------------------------------------------------------
# FusedGemm
# --------------------------------------------------------------------------------------

_GEMM_ACTS = [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("Softplus", {}), ("Softsign", {}),
              ("LeakyRelu", dict(activation_alpha=0.2)), ("Elu", dict(activation_alpha=0.7)),
              ("ThresholdedRelu", dict(activation_alpha=0.4)),
              ("Selu", dict(activation_alpha=1.6, activation_gamma=1.1)),
              ("HardSigmoid", dict(activation_alpha=0.3, activation_beta=0.45)),
              ("ParametricSoftplus", dict(activation_alpha=0.5, activation_beta=2.0)),
              ("ScaledTanh", dict(activation_alpha=0.5, activation_beta=2.0))]


@pytest.mark.parametrize("act,params", _GEMM_ACTS)
def test_fused_gemm_activations(rng, act, params):
    a, b, c = _randn(rng, 4, 6), _randn(rng, 6, 5), _randn(rng, 5)
    _check("FusedGemm", [("a", a), ("b", b), ("c", c)], activation=act, **params)


@pytest.mark.parametrize("ta,tb,cshape,alpha,beta", [
    (1, 0, (4, 5), 0.5, 2.0), (0, 1, (1, 5), 1.0, 1.0), (1, 1, (4, 1), 2.0, -1.0),
    (0, 0, (), 1.0, 0.5), (0, 0, None, 1.5, 1.0)])
def test_fused_gemm_forms(rng, ta, tb, cshape, alpha, beta):
    a = _randn(rng, *((6, 4) if ta else (4, 6)))
    b = _randn(rng, *((5, 6) if tb else (6, 5)))
    c = None if cshape is None else _randn(rng, *cshape)
    _check("FusedGemm", [("a", a), ("b", b), ("c", c)], activation="LeakyRelu",
           activation_alpha=0.1, transA=ta, transB=tb, alpha=alpha, beta=beta)


def test_fused_gemm_float16(rng):
    a, b, c = (_randn(rng, 3, 8, dtype=np.float16), _randn(rng, 8, 4, dtype=np.float16),
               _randn(rng, 4, dtype=np.float16))
    _check("FusedGemm", [("a", a), ("b", b), ("c", c)], activation="Sigmoid")


def test_fused_gemm_float64(rng):
    """onnxruntime has no float64 FusedGemm (nor Elu) CPU kernel: the ONNX formula in
    numpy is the oracle."""
    a, b, c = (_randn(rng, 3, 8, dtype=np.float64), _randn(rng, 4, 8, dtype=np.float64),
               _randn(rng, 4, dtype=np.float64))
    inputs = [("a", a), ("b", b), ("c", c)]
    alpha = float(np.float32(0.7))
    g = 0.5 * a @ b.T + c
    want = np.where(g < 0, alpha * np.expm1(g), g)
    got = _og(_model("FusedGemm", inputs, activation="Elu", activation_alpha=0.7, transB=1,
                     alpha=0.5), _feeds(inputs))[0]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, **F64_TOL)


def test_fused_gemm_errors(rng):
    a, b = _randn(rng, 2, 3), _randn(rng, 3, 2)
    feeds = {"a": a, "b": b}
    op = REGISTRY.get("FusedGemm", MS)
    with pytest.raises(UnsupportedOpError, match="FusedGemm: activation 'Gelu'"):
        op.resolve_attrs({"activation": "Gelu"})
    with pytest.raises(UnsupportedOpError, match="FusedGemm: activation None"):
        op.resolve_attrs({})
    with pytest.raises(OpAttributeError, match="FusedGemm: activation Selu needs attribute "
                                               "activation_gamma"):
        op.resolve_attrs({"activation": "Selu", "activation_alpha": 1.0})
    with pytest.raises(ConversionError, match="FusedGemm: activation HardSigmoid needs "
                                              "attribute activation_alpha"):
        _og(_model("FusedGemm", [("a", a), ("b", b)], activation="HardSigmoid"), feeds)
    attrs = op.resolve_attrs({"activation": "Relu"})
    with pytest.raises(ShapeError, match="FusedGemm: .*C of shape"):
        op.kernel([a, b, np.zeros((3,), np.float32)], attrs, None)
    with pytest.raises(ShapeError, match="FusedGemm: A and B must be 2-D"):
        op.kernel([a[None], b], attrs, None)
    with pytest.raises(ShapeError, match="FusedGemm: A must be float16, float32"):
        op.kernel([a.astype(np.int64), b.astype(np.int64)], attrs, None)


# --------------------------------------------------------------------------------------
# FusedMatMul, TransposeMatMul
# --------------------------------------------------------------------------------------


def _operand(rng, final, tbatch, trans):
    """A random operand whose FusedMatMul view (transBatch, then trans) has shape
    `final`."""
    s = list(final)
    if trans and len(s) >= 2:
        s[-1], s[-2] = s[-2], s[-1]
    if tbatch:
        n = len(s)
        s = [s[n - 2]] + s[:n - 2] + [s[n - 1]]
    return _randn(rng, *s)


@pytest.mark.parametrize("ta,tb,tba,tbb", [(a, b, c, d) for a in (0, 1) for b in (0, 1)
                                           for c in (0, 1) for d in (0, 1)])
def test_fused_matmul_transposes(rng, ta, tb, tba, tbb):
    a = _operand(rng, (2, 6, 3, 5), tba, ta)
    b = _operand(rng, (2, 6, 5, 4), tbb, tb)
    _check("FusedMatMul", [("a", a), ("b", b)], transA=ta, transB=tb, transBatchA=tba,
           transBatchB=tbb, alpha=0.5)


@pytest.mark.parametrize("sa,sb,attrs", [
    ((3, 5), (5, 4), {}), ((5,), (5, 4), dict(transA=1)), ((3, 5), (4, 5), dict(transB=1)),
    ((3, 5), (5,), dict(alpha=-2.0)), ((2, 1, 3, 5), (4, 4, 5), dict(transB=1)),
    ((2, 3, 5), (1, 5, 4), dict(transBatchA=1)), ((6, 5, 3), (5, 4), dict(transA=1))])
def test_fused_matmul_shapes(rng, sa, sb, attrs):
    a, b = _randn(rng, *sa), _randn(rng, *sb)
    _check("FusedMatMul", [("a", a), ("b", b)], **attrs)


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_fused_matmul_other_floats(rng, dtype):
    a, b = _randn(rng, 2, 5, 3, dtype=dtype), _randn(rng, 2, 4, 5, dtype=dtype)
    _check("FusedMatMul", [("a", a), ("b", b)], transA=1, transB=1, alpha=0.25)


@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_transpose_matmul(rng, ta, tb):
    a = _randn(rng, *((2, 5, 3) if ta else (2, 3, 5)))
    b = _randn(rng, *((4, 5) if tb else (5, 4)))
    _check("TransposeMatMul", [("a", a), ("b", b)], transA=ta, transB=tb, alpha=1.5)


def test_fused_matmul_errors(rng):
    op = REGISTRY.get("FusedMatMul", MS)
    a3, b2 = _randn(rng, 2, 3, 5), _randn(rng, 5, 4)
    with pytest.raises(ShapeError, match="FusedMatMul: transBatchA/transBatchB need A and B "
                                         "of one rank >= 3, got ranks 3 and 2"):
        op.kernel([a3, b2], op.resolve_attrs({"transBatchA": 1}), None)
    with pytest.raises(ShapeError, match="FusedMatMul: transBatchA/transBatchB need"):
        op.infer(op.resolve_attrs({"transBatchB": 1}),
                 [TensorInfo(np.dtype(np.float32), (3, 5)),
                  TensorInfo(np.dtype(np.float32), (5, 4))])
    with pytest.raises(ShapeError, match="FusedMatMul: inner dims differ"):
        op.kernel([a3, b2], op.resolve_attrs({"transA": 1}), None)
    with pytest.raises(ShapeError, match="FusedMatMul: scalar operands"):
        op.kernel([np.float32(1.0), b2], op.resolve_attrs({}), None)
    with pytest.raises(ShapeError, match="FusedMatMul: A must be float16, float32"):
        op.kernel([a3.astype(np.int32), b2.astype(np.int32)], op.resolve_attrs({}), None)
    tm = REGISTRY.get("TransposeMatMul", MS)
    with pytest.raises(OpAttributeError, match="TransposeMatMul: unknown attribute "
                                               "'transBatchA'"):
        tm.resolve_attrs({"transBatchA": 1}, where="TransposeMatMul: ")


# --------------------------------------------------------------------------------------
# GemmFastGelu (no onnxruntime CPU kernel: MatMul + Add + tanh Gelu is the oracle)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("xshape,with_bias", [((4, 8), True), ((2, 3, 8), True),
                                              ((2, 3, 8), False)])
def test_gemm_fast_gelu(rng, xshape, with_bias):
    x, w = _randn(rng, *xshape), _randn(rng, 8, 6, scale=0.5)
    bias = _randn(rng, 6) if with_bias else None
    inputs = [("x", x), ("w", w), ("bias", bias)]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m" if with_bias else "s"])]
    if with_bias:
        nodes.append(helper.make_node("Add", ["m", "bias"], ["s"]))
    nodes.append(helper.make_node("Gelu", ["s"], ["y"], approximate="tanh"))
    want = _standard(nodes, [i for i in inputs if i[1] is not None])
    got = _og(_model("GemmFastGelu", inputs), _feeds(inputs))[0]
    np.testing.assert_allclose(got, want, **TOL)
    _check_infer("GemmFastGelu", inputs, {}, got)


def test_gemm_fast_gelu_float16(rng):
    x, w, bias = (_randn(rng, 4, 8, dtype=np.float16), _randn(rng, 8, 6, dtype=np.float16),
                  _randn(rng, 6, dtype=np.float16))
    inputs = [("x", x), ("w", w), ("bias", bias)]
    f32 = [(k, v.astype(np.float32)) for k, v in inputs]
    want = _standard([helper.make_node("MatMul", ["x", "w"], ["m"]),
                      helper.make_node("Add", ["m", "bias"], ["s"]),
                      helper.make_node("Gelu", ["s"], ["y"], approximate="tanh")], f32)
    got = _og(_model("GemmFastGelu", inputs), _feeds(inputs))[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want, **F16_TOL)


def test_gemm_fast_gelu_errors(rng):
    op = REGISTRY.get("GemmFastGelu", MS)
    x, w = _randn(rng, 4, 8), _randn(rng, 8, 6)
    with pytest.raises(ShapeError, match="GemmFastGelu: bias must be 1-D of the output's"):
        op.kernel([x, w, _randn(rng, 8)], {}, None)
    with pytest.raises(ShapeError, match="GemmFastGelu: inner dims differ"):
        op.kernel([x, w.T], {}, None)
    with pytest.raises(ShapeError, match="GemmFastGelu: X must be float16 or float32"):
        op.kernel([x.astype(np.float64), w.astype(np.float64)], {}, None)


# --------------------------------------------------------------------------------------
# NhwcMaxPool
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("shape,attrs", [
    ((2, 7, 6, 5), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((1, 9, 9, 3), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])),
    ((1, 8, 7, 4), dict(kernel_shape=[3, 2], ceil_mode=1, strides=[2, 2])),
    ((1, 8, 8, 2), dict(kernel_shape=[2, 2], dilations=[2, 2])),
    ((1, 7, 7, 3), dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2])),
    ((2, 10, 3), dict(kernel_shape=[3], strides=[1])),
])
def test_nhwc_maxpool(rng, dtype, shape, attrs):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    err = _check("NhwcMaxPool", [("x", x)], **attrs)
    assert err == 0


def test_nhwc_maxpool_errors(rng):
    op = REGISTRY.get("NhwcMaxPool", MS)
    attrs = op.resolve_attrs({"kernel_shape": [2, 2]})
    with pytest.raises(ShapeError, match="NhwcMaxPool: x must be int8 or uint8, got float32"):
        op.kernel([_randn(rng, 1, 4, 4, 2)], attrs, None)
    with pytest.raises(ShapeError, match="NhwcMaxPool: x must be .N, .spatial, C."):
        op.kernel([np.zeros((4, 2), np.uint8)], attrs, None)
    with pytest.raises(OpAttributeError, match="NhwcMaxPool: .*kernel_shape"):
        op.kernel([np.zeros((1, 4, 4, 2), np.uint8)],
                  op.resolve_attrs({"kernel_shape": [2, 2, 2]}), None)
    with pytest.raises(OpAttributeError, match="missing required attribute 'kernel_shape'"):
        op.resolve_attrs({})
    with pytest.raises(ShapeError, match="NhwcMaxPool: x must be int8 or uint8"):
        op.infer(attrs, [TensorInfo(np.dtype(np.float32), (1, 4, 4, 2))])


# --------------------------------------------------------------------------------------
# Corpus: models onnxruntime optimized and saved
# --------------------------------------------------------------------------------------


def _w(rng, name, *shape, scale=0.3):
    return numpy_helper.from_array(_randn(rng, *shape, scale=scale), name)


def _c(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype), name)


def _float_model(nodes, inputs, inits, opset=17):
    graph = helper.make_graph(
        nodes, "corpus",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=9)


def _corpus(name):
    """(model, feeds, {level: fused ops the saved file must hold}) of corpus model
    `name`; ops are "domain::op" counted at least once."""
    rng = np.random.default_rng(1)
    mk = helper.make_node
    if name == "conv_bn_relu":
        m = _float_model(
            [mk("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             mk("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"]),
             mk("Relu", ["n"], ["y"])], [("x", [1, 3, 8, 8])],
            [_w(rng, "w", 8, 3, 3, 3), _w(rng, "b", 8), _c("s", rng.uniform(.5, 1.5, 8)),
             _w(rng, "bb", 8), _w(rng, "m", 8), _c("v", rng.uniform(.5, 1.5, 8))])
        want = {"EXTENDED": {"com.microsoft::FusedConv"}, "ALL": {"com.microsoft.nchwc::Conv"}}
    elif name == "conv_add_relu":
        m = _float_model(
            [mk("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             mk("Conv", ["c1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             mk("Add", ["c2", "c1"], ["a"]), mk("Relu", ["a"], ["y"])], [("x", [1, 3, 8, 8])],
            [_w(rng, "w1", 16, 3, 3, 3), _w(rng, "b1", 16), _w(rng, "w2", 16, 16, 3, 3, scale=.1),
             _w(rng, "b2", 16)])
        # onnxruntime 1.32 fuses the residual Add only in its NCHWc pass (nchwc Conv's Sum)
        want = {"EXTENDED": {"Conv", "Add", "Relu"}, "ALL": {"com.microsoft.nchwc::Conv"}}
    elif name == "conv_clip":
        m = _float_model(
            [mk("Conv", ["x", "w", "b"], ["c"], strides=[2, 2]),
             mk("Clip", ["c", "lo", "hi"], ["y"])], [("x", [1, 4, 9, 9])],
            [_w(rng, "w", 6, 4, 3, 3), _w(rng, "b", 6), _c("lo", 0.0), _c("hi", 6.0)])
        want = {"EXTENDED": {"com.microsoft::FusedConv"}, "ALL": {"com.microsoft.nchwc::Conv"}}
    elif name == "conv_leaky":
        m = _float_model(
            [mk("Conv", ["x", "w"], ["c"], group=2, pads=[0, 1, 0, 1]),
             mk("LeakyRelu", ["c"], ["y"], alpha=0.2)], [("x", [2, 4, 7, 7])],
            [_w(rng, "w", 6, 2, 3, 3)])
        want = {"EXTENDED": {"com.microsoft::FusedConv"}, "ALL": {"com.microsoft::FusedConv"}}
    elif name == "gemm_relu":
        m = _float_model([mk("Gemm", ["x", "w", "b"], ["g"], transB=1), mk("Relu", ["g"], ["y"])],
                         [("x", [3, 10])], [_w(rng, "w", 7, 10), _w(rng, "b", 7)])
        want = {"EXTENDED": {"com.microsoft::FusedGemm"}, "ALL": {"com.microsoft::FusedGemm"}}
    elif name == "matmul_add_gelu":
        m = _float_model(
            [mk("MatMul", ["x", "w"], ["m"]), mk("Add", ["m", "b"], ["a"]),
             mk("Div", ["a", "sq"], ["d"]), mk("Erf", ["d"], ["e"]),
             mk("Add", ["e", "one"], ["e1"]), mk("Mul", ["a", "e1"], ["ae"]),
             mk("Mul", ["ae", "half"], ["y"])], [("x", [2, 5, 16])],
            [_w(rng, "w", 16, 32), _w(rng, "b", 32), _c("sq", math.sqrt(2)), _c("one", 1.0),
             _c("half", 0.5)])
        want = {"EXTENDED": {"com.microsoft::Gelu", "Gemm"}, "ALL": {"com.microsoft::Gelu"}}
    elif name == "transpose_matmul":
        m = _float_model([mk("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
                          mk("MatMul", ["t", "z"], ["y"])], [("x", [2, 6, 5]), ("z", [2, 6, 4])],
                         [])
        want = {"EXTENDED": {"com.microsoft::FusedMatMul"},
                "ALL": {"com.microsoft::FusedMatMul"}}
    elif name == "matmul_scale":
        m = _float_model([mk("MatMul", ["x", "z"], ["m"]), mk("Mul", ["m", "s"], ["y"])],
                         [("x", [2, 5, 6]), ("z", [6, 4])], [_c("s", 0.125)])
        want = {"EXTENDED": {"com.microsoft::FusedMatMul"},
                "ALL": {"com.microsoft::FusedMatMul"}}
    elif name == "qconv_maxpool":
        u8 = np.uint8
        m = _float_model(
            [mk("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             mk("QLinearConv", ["xq", "xs", "xz", "wq", "ws", "wz", "ys", "yz", "bq"], ["cq"],
                pads=[1, 1, 1, 1]),
             mk("MaxPool", ["cq"], ["pq"], kernel_shape=[2, 2], strides=[2, 2]),
             mk("DequantizeLinear", ["pq", "ys", "yz"], ["y"])], [("x", [1, 8, 8, 8])],
            [_c("xs", 0.02), _c("xz", 128, u8), _c("wq", rng.integers(0, 255, (16, 8, 3, 3)), u8),
             _c("ws", 0.01), _c("wz", 128, u8), _c("ys", 0.05), _c("yz", 100, u8),
             _c("bq", rng.integers(-200, 200, 16), np.int32)], opset=13)
        want = {"EXTENDED": {"QLinearConv", "MaxPool"},
                "ALL": {"com.microsoft::NhwcMaxPool", "com.microsoft::QLinearConv"}}
    else:
        raise KeyError(name)
    feeds = {i.name: _randn(rng, *[d.dim_value for d in i.type.tensor_type.shape.dim])
             for i in m.graph.input}
    return m, feeds, want


_CORPUS = ("conv_bn_relu", "conv_add_relu", "conv_clip", "conv_leaky", "gemm_relu",
           "matmul_add_gelu", "transpose_matmul", "matmul_scale", "qconv_maxpool")


def _optimize(model_or_path, level, path):
    """Let onnxruntime optimize a model at ORT_ENABLE_<level> and save it to `path`;
    returns the saved ModelProto."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel,
                                               f"ORT_ENABLE_{level}")
    options.optimized_model_filepath = str(path)
    src = model_or_path.SerializeToString() if hasattr(model_or_path, "SerializeToString") \
        else model_or_path
    ort.InferenceSession(src, options, providers=["CPUExecutionProvider"])
    return onnx.load(str(path))


def _op_counts(model):
    return collections.Counter(f"{n.domain}::{n.op_type}" if n.domain else n.op_type
                               for n in model.graph.node)


def _skip_unregistered(counts):
    """Skip (saying why) when the saved file holds ops this checkout does not register
    yet (the NCHWc ops, the channels-last com.microsoft QLinearConv)."""
    missing = sorted(k for k in counts if "::" in k and not REGISTRY.has(
        k.split("::")[1], k.split("::")[0]))
    if missing:
        pytest.skip(f"saved file holds ops not registered yet: {', '.join(missing)}")


@pytest.mark.parametrize("level", ["EXTENDED", "ALL"])
@pytest.mark.parametrize("name", _CORPUS)
def test_optimized_corpus(tmp_path, block, name, level):
    model, feeds, want_ops = _corpus(name)
    saved = _optimize(model, level, tmp_path / f"{name}.{level}.onnx")
    counts = _op_counts(saved)
    assert want_ops[level] <= set(counts), f"expected {want_ops[level]} in {dict(counts)}"
    _skip_unregistered(counts)
    want = ort_session(model, optimize=False).run(None, feeds)[0]
    got = _og(saved, feeds)[0]
    if name == "qconv_maxpool":  # integer arithmetic inside: bit for bit
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, **TOL)


def _light_model(name, rng):
    """onnx's light `name` model with its ConstantOfShape weight fills replaced by seeded
    random initializers (He-scaled weights, 1-D parameters in [0.5, 1.5]), the
    initializers taken out of the graph inputs (so onnxruntime may fold them) and the
    final Softmax replaced by Identity (the logits are compared)."""
    path = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light",
                        f"light_{name}.onnx")
    if not os.path.exists(path):
        pytest.skip(f"onnx wheel has no {path}")
    m = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    nodes, new_inits = [], []
    for node in m.graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in inits:
            shape = [int(d) for d in inits[node.input[0]]]
            if len(shape) == 1:
                value = rng.uniform(0.5, 1.5, shape)
            else:
                value = rng.standard_normal(shape) * math.sqrt(2.0 / math.prod(shape[1:]))
            new_inits.append(numpy_helper.from_array(value.astype(np.float32), node.output[0]))
        elif node.op_type == "Softmax" and node.output[0] == m.graph.output[0].name:
            # compare the logits: random weights saturate the softmax
            nodes.append(helper.make_node("Identity", list(node.input), list(node.output)))
        else:
            nodes.append(node)
    used = {i for n in nodes for i in n.input}
    kept = [i for i in m.graph.initializer if i.name in used]
    names = {i.name for i in kept} | {i.name for i in new_inits}
    graph = helper.make_graph(nodes, m.graph.name,
                              [i for i in m.graph.input if i.name not in names
                               and i.name not in inits],
                              list(m.graph.output), kept + new_inits)
    model = helper.make_model(graph, opset_imports=list(m.opset_import), ir_version=7)
    return model


def _assert_close_to_scale(got, want):
    """|got - want| <= LIGHT_TOL * max |want| (the logits of random deep networks span
    up to ~3e6 in shufflenet, so the bound is relative to their scale)."""
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=LIGHT_TOL * float(np.abs(want).max()))


@pytest.mark.parametrize("name,fused", [("squeezenet", 26), ("shufflenet", 17)])
def test_light_models_extended(tmp_path, name, fused):
    """onnx's light squeezenet/shufflenet at ORT_ENABLE_EXTENDED: every Conv followed by
    a Relu becomes a FusedConv (BatchNormalization folded in; shufflenet keeps its 32
    Convs without a Relu); onegraph runs the saved file to the original model's outputs
    (random 224x224 input)."""
    rng = np.random.default_rng(2)
    model = _light_model(name, rng)
    saved = _optimize(model, "EXTENDED", tmp_path / f"{name}.onnx")
    counts = _op_counts(saved)
    assert counts["com.microsoft::FusedConv"] == fused and "BatchNormalization" not in counts
    inp = model.graph.input[0]
    feeds = {inp.name: _randn(rng, *[d.dim_value for d in inp.type.tensor_type.shape.dim])}
    want = ort_session(model, optimize=False).run(None, feeds)[0]
    got = _og(saved, feeds)[0]
    _assert_close_to_scale(got, want)


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet"])
def test_light_models_all(tmp_path, block, name):
    """The same at ORT_ENABLE_ALL (NCHWc pooling and, for squeezenet, FusedConv)."""
    rng = np.random.default_rng(2)
    model = _light_model(name, rng)
    saved = _optimize(model, "ALL", tmp_path / f"{name}.onnx")
    counts = _op_counts(saved)
    assert any(k.startswith("com.microsoft") for k in counts)
    _skip_unregistered(counts)
    inp = model.graph.input[0]
    feeds = {inp.name: _randn(rng, *[d.dim_value for d in inp.type.tensor_type.shape.dim])}
    want = ort_session(model, optimize=False).run(None, feeds)[0]
    got = _og(saved, feeds)[0]
    _assert_close_to_scale(got, want)


def test_nhwc_maxpool_between_standard_ops(rng):
    """NhwcMaxPool between QuantizeLinear/Transpose and Transpose/DequantizeLinear, as the
    NhwcTransformer writes it, against the standard channels-first model."""
    mk = helper.make_node
    x = _randn(rng, 2, 5, 9, 9)
    scales = [_c("s", 0.03), _c("z", 120, np.uint8)]
    nhwc = [mk("QuantizeLinear", ["x", "s", "z"], ["q"]),
            mk("Transpose", ["q"], ["qt"], perm=[0, 2, 3, 1]),
            mk("NhwcMaxPool", ["qt"], ["p"], domain=MS, kernel_shape=[3, 3], strides=[2, 2],
               pads=[1, 1, 1, 1]),
            mk("Transpose", ["p"], ["pt"], perm=[0, 3, 1, 2]),
            mk("DequantizeLinear", ["pt", "s", "z"], ["y"])]
    nchw = [mk("QuantizeLinear", ["x", "s", "z"], ["q"]),
            mk("MaxPool", ["q"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
            mk("DequantizeLinear", ["p", "s", "z"], ["y"])]
    model = _float_model(nhwc, [("x", list(x.shape))], scales)
    model.opset_import.append(helper.make_opsetid(MS, 1))
    want = ort_session(_float_model(nchw, [("x", list(x.shape))], scales),
                       optimize=False).run(None, {"x": x})[0]
    np.testing.assert_array_equal(_og(model, {"x": x})[0], want)
    np.testing.assert_array_equal(ort_session(model, optimize=False).run(None, {"x": x})[0],
                                  want)


def test_round_trip_model(tmp_path):
    """Optimized files imported and written back by to_onnx: onnxruntime runs the
    written models to the originals' outputs (FusedConv, FusedGemm, FusedMatMul)."""
    for name, level in (("conv_bn_relu", "EXTENDED"), ("conv_leaky", "ALL"),
                        ("gemm_relu", "EXTENDED"), ("transpose_matmul", "EXTENDED"),
                        ("matmul_scale", "ALL")):
        model, feeds, _ = _corpus(name)
        saved = _optimize(model, level, tmp_path / f"{name}.onnx")
        back = to_onnx(from_onnx(saved))
        assert {n.op_type for n in back.graph.node if n.domain == MS} == \
            {n.op_type for n in saved.graph.node if n.domain == MS} != set()
        want = ort_session(model, optimize=False).run(None, feeds)[0]
        again = ort_session(back, optimize=False).run(None, feeds)[0]
        np.testing.assert_allclose(again, want, **TOL)
        np.testing.assert_allclose(_og(back, feeds)[0], want, **TOL)

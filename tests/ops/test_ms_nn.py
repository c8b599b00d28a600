"""onnxruntime's normalisation, activation, dropout and attention-helper contrib ops
(`ops/ms_nn.py`) against onnxruntime.

onnxruntime 1.32 has CPU kernels for ScaledSiLU, DecoderMaskedMultiHeadAttention
(float32 only) and SparseAttention alone (probed: every other op here fails with
NOT_IMPLEMENTED on CPUExecutionProvider), so those three are checked against
onnxruntime's own kernels on one-node models (DMMHA's packed-QKV and float16 forms,
which that kernel does not run, against it on the unpacked / float32 inputs;
SparseAttention through an IOBinding that gives past and present one buffer, as the
kernel demands, batch entry by entry because of the stride quirk _sa_oracle describes),
and every other op's oracle is the same computation written as standard ONNX ops
(Add + opset-11 Softmax, Dropout-13 in inference mode, GroupNormalization-21 between
Transposes, Erf Gelu, Clip/Exp/Div in double, T5's bucket arithmetic in float32
Log/Div/Cast, MatMul/ReduceSum/Sigmoid, TopK/Gather and ScatterND) run by
onnxruntime's CPU provider. The bit-packed masks of the Bitmask dropouts are compared
with the all-ones words their schema states. Inputs are seeded random.

Bounds: float32 rtol = atol = 1e-5 (TOL; measured max error 5.8e-7 of 1 + |y|, 7.6e-6
absolute on SwiGLU outputs of ~65),
float16 rtol = atol = 2e-3 (F16_TOL, one float16 step at |y| ~ 2-4; measured max
1.95e-3 absolute, 7.2e-4 of 1 + |y|, where the oracle rounds intermediates to float16
and onegraph rounds once), float64 1e-5 (measured 3.3e-16); index outputs, the
gathered RelativePositionBias values and the padding ops exact.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import (ExecutionError, OpAttributeError, ShapeError,  # noqa: E402
                             UnsupportedOpError)
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from .single_node import node_inputs, ort_session  # noqa: E402

MS = "com.microsoft"
DM = "DecoderMaskedMultiHeadAttention"
TOL = dict(rtol=1e-5, atol=1e-5)
F16_TOL = dict(rtol=2e-3, atol=2e-3)
_ELEM = helper.np_dtype_to_tensor_dtype


# --------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------


def _ms_model(op, inputs, out_types, **attrs):
    """A one-node com.microsoft model; `inputs` (name, array or None) in the op's order,
    every array a graph input; `out_types` the numpy dtypes of the declared outputs."""
    names, graph_inputs, _ = node_inputs(inputs)
    while names and names[-1] == "":
        names.pop()
    outs = [f"out{i}" for i in range(len(out_types))]
    node = helper.make_node(op, names, outs, domain=MS, **attrs)
    graph = helper.make_graph([node], op, graph_inputs, [
        helper.make_tensor_value_info(o, _ELEM(np.dtype(t)), None)
        for o, t in zip(outs, out_types)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _feeds(inputs):
    """The given arrays of `inputs` by name (the session feeds)."""
    return {k: np.asarray(v) for k, v in inputs if v is not None}


def _og(model, feeds):
    """onegraph's outputs of the imported model, in its output order."""
    names = [o.name for o in model.graph.output]
    return onegraph.Session(from_onnx(model)).run(names, feeds)


def _oracle(nodes, feeds, outputs, opset=17, inits=None):
    """onnxruntime's outputs of a graph of standard ONNX `nodes` over `feeds`."""
    graph = helper.make_graph(
        nodes, "oracle",
        [helper.make_tensor_value_info(k, _ELEM(v.dtype), v.shape) for k, v in feeds.items()],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=10 if opset >= 21 else 9)
    return ort_session(model, optimize=False).run(outputs, feeds)


def _compare(got, want, tol=None):
    """Every output equal in dtype and shape, and close (exact for integers)."""
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, (i, g.dtype, g.shape, w.dtype,
                                                           w.shape)
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
            continue
        t = tol or (F16_TOL if g.dtype == np.float16 else TOL)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **t,
                                   err_msg=f"output {i}")


def _infer_matches(op, inputs, got, attrs, values=()):
    """The op's inference gives each output's dtype and (known) shape."""
    opdef = REGISTRY.get(op, MS)
    infos = [None if v is None else TensorInfo(np.asarray(v).dtype, np.shape(v),
                                               np.asarray(v) if k in values else None)
             for k, v in inputs]
    inferred = opdef.infer(opdef.resolve_attrs(attrs), infos)
    for info, y in zip(inferred, got):
        assert np.dtype(info.dtype) == y.dtype, (op, info.dtype, y.dtype)
        if info.shape is not None:
            assert len(info.shape) == y.ndim and all(
                d is None or d == n for d, n in zip(info.shape, y.shape)), (op, info, y.shape)


def _run_ms(op, inputs, out_types, **attrs):
    """onegraph's outputs of the one-node model (checking inference on the way)."""
    got = _og(_ms_model(op, inputs, out_types, **attrs), _feeds(inputs))
    _infer_matches(op, inputs, got, attrs)
    return got


def _kernel(op, inputs, **attrs):
    """The op's kernel called directly (attrs resolved with defaults)."""
    opdef = REGISTRY.get(op, MS)
    return opdef.kernel(list(inputs), opdef.resolve_attrs(attrs), None)


@pytest.fixture
def rng():
    """A seeded generator per test."""
    return np.random.default_rng(0)


def _randn(rng, *shape, dtype=np.float32, scale=1.0):
    """Normal random values of `shape` in `dtype`."""
    return (rng.standard_normal(shape) * scale).astype(dtype)


# --------------------------------------------------------------------------------------
# ScaledSiLU (onnxruntime has a CPU kernel)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("scale,attrs", [(None, {}), (None, dict(alpha=1.702)),
                                         (np.float32(0.75), {}),
                                         (np.float32(-2.5), dict(alpha=3.0))])
def test_scaled_silu(rng, dtype, scale, attrs):
    x = _randn(rng, 2, 3, 40, dtype=dtype, scale=4.0)
    x.reshape(-1)[:3] = [-100, 95, 0]  # the sigmoid's tails
    inputs = [("x", x), ("s", None if scale is None else np.asarray(scale))]
    model = _ms_model("ScaledSiLU", inputs, [dtype], **attrs)
    want = ort_session(model, optimize=False).run(None, _feeds(inputs))
    _compare(_run_ms("ScaledSiLU", inputs, [dtype], **attrs), want)


def test_scaled_silu_float16_scale(rng):
    x = _randn(rng, 4, 16, dtype=np.float16)
    inputs = [("x", x), ("s", np.array(1.5, np.float16))]
    model = _ms_model("ScaledSiLU", inputs, [np.float16])
    _compare(_run_ms("ScaledSiLU", inputs, [np.float16]),
             ort_session(model, optimize=False).run(None, _feeds(inputs)))


def test_scaled_silu_errors(rng):
    with pytest.raises(ShapeError, match="ScaledSiLU: scale must be a scalar"):
        _kernel("ScaledSiLU", [_randn(rng, 3), np.ones(2, np.float32)])
    with pytest.raises(ShapeError, match="ScaledSiLU: X must be a float tensor"):
        _kernel("ScaledSiLU", [np.ones(3, np.int32)])


# --------------------------------------------------------------------------------------
# BiasSoftmax: Add + opset-11 Softmax (which flattens the dims from axis on)
# --------------------------------------------------------------------------------------

_BIAS_SOFTMAX_CASES = [
    ((2, 3, 4, 5), (2, 1, 1, 5), 3, 1),   # (batch, 1, 1, keys) additive mask
    ((2, 3, 4, 5), (2, 3, 1, 5), -1, 1),
    ((2, 3, 4, 5), (1, 1, 4, 5), 2, 0),   # one mask for every batch entry and head
    ((2, 3, 4, 5), (3, 4, 5), 1, 0),      # lower rank: leading ones implied
    ((2, 3, 4, 5), (2, 3, 4, 5), 1, 1),   # no broadcast
    ((2, 3, 4, 5), (4, 5), 2, 0),
    ((6, 7), (1, 7), 1, 0),
    ((6, 7), (6, 7), 0, 1),               # axis 0: one softmax over everything
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("xs,bs,axis,inner", _BIAS_SOFTMAX_CASES)
def test_bias_softmax(rng, dtype, xs, bs, axis, inner):
    x, b = _randn(rng, *xs, dtype=dtype, scale=3.0), _randn(rng, *bs, dtype=dtype, scale=3.0)
    inputs = [("x", x), ("b", b)]
    got = _run_ms("BiasSoftmax", inputs, [dtype], axis=axis, is_inner_broadcast=inner)
    nodes = [helper.make_node("Add", ["x", "b"], ["s"]),
             helper.make_node("Softmax", ["s"], ["y"], axis=axis)]
    _compare(got, _oracle(nodes, _feeds(inputs), ["y"], opset=11))


def test_bias_softmax_masked_rows(rng):
    x = _randn(rng, 2, 2, 3, 4)
    mask = np.zeros((2, 1, 1, 4), np.float32)
    mask[0, ..., 2:] = -1e4  # the masked keys get ~0
    got = _kernel("BiasSoftmax", [x, mask], axis=3, is_inner_broadcast=1)[0]
    assert np.all(got[0, ..., 2:] < 1e-30)
    np.testing.assert_allclose(got.sum(axis=-1), 1, rtol=1e-6)


def test_bias_softmax_errors(rng):
    x = _randn(rng, 2, 3, 4, 5)
    with pytest.raises(ShapeError, match="BiasSoftmax: bias \\[2, 1, 1, 5\\] does not fit"):
        _kernel("BiasSoftmax", [x, _randn(rng, 2, 1, 1, 5)], axis=3, is_inner_broadcast=0)
    with pytest.raises(ShapeError, match="BiasSoftmax: bias \\[1, 3, 1, 5\\] does not fit"):
        _kernel("BiasSoftmax", [x, _randn(rng, 1, 3, 1, 5)], axis=3, is_inner_broadcast=1)
    with pytest.raises(ShapeError, match="dims from axis on"):
        _kernel("BiasSoftmax", [x, _randn(rng, 2, 3, 4, 4)], axis=3, is_inner_broadcast=1)
    with pytest.raises(OpAttributeError, match="BiasSoftmax: axis 4 out of range"):
        _kernel("BiasSoftmax", [x, x], axis=4, is_inner_broadcast=1)
    with pytest.raises(OpAttributeError, match="missing required attribute "
                       "'is_inner_broadcast'"):
        _kernel("BiasSoftmax", [x, x])
    with pytest.raises(ShapeError, match="BiasSoftmax: bias is float16"):
        _kernel("BiasSoftmax", [x, x.astype(np.float16)], is_inner_broadcast=1)


# --------------------------------------------------------------------------------------
# BiasDropout, BitmaskDropout, BitmaskBiasDropout: Add(s) + Dropout-13 inference mode
# --------------------------------------------------------------------------------------


def _dropout_oracle(feeds, bias, residual, dtype):
    """Standard ONNX: data (+ bias) (+ residual), then Dropout-13 with training_mode
    false, giving the output and its all-true bool mask."""
    nodes, cur = [], "x"
    for name in ("b", "r"):
        if (bias if name == "b" else residual) is not None:
            nodes.append(helper.make_node("Add", [cur, name], [cur + name]))
            cur += name
    inits = {"ratio": np.array(0.25, dtype), "train": np.array(False)}
    nodes.append(helper.make_node("Dropout", [cur, "ratio", "train"], ["y", "mask"]))
    return _oracle(nodes, feeds, ["y", "mask"], opset=13, inits=inits)


@pytest.mark.parametrize("op", ["BiasDropout", "BitmaskBiasDropout"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("bias_full,residual", [(False, False), (False, True), (True, True)])
@pytest.mark.parametrize("mode", ["absent", "false", "ratio0"])
def test_bias_dropout(rng, op, dtype, bias_full, residual, mode):
    shape = (2, 3, 37)  # 222 values: the bitmask's last word is partly padding
    x = _randn(rng, *shape, dtype=dtype)
    b = _randn(rng, *(shape if bias_full else shape[-1:]), dtype=dtype)
    r = _randn(rng, *shape, dtype=dtype) if residual else None
    ratio = training = None
    if mode == "false":
        ratio, training = np.array(0.4, np.float32), np.array(False)
    elif mode == "ratio0":  # training mode with ratio 0 copies (onnxruntime's rule)
        ratio, training = np.array(0.0, dtype), np.array(True)
    inputs = [("x", x), ("b", b), ("r", r), ("ratio", ratio), ("t", training)]
    bitmask = op.startswith("Bitmask")
    got = _run_ms(op, inputs, [dtype, np.uint32 if bitmask else np.bool_])
    want = _dropout_oracle({k: v for k, v in _feeds(inputs).items() if k in "xbr"},
                           b, r, dtype)
    if bitmask:
        want[1] = np.full(-(-x.size // 32), 0xFFFFFFFF, np.uint32)
    _compare(got, want)


@pytest.mark.parametrize("mode", ["absent", "false"])
def test_bitmask_dropout(rng, mode):
    x = _randn(rng, 5, 13)
    inputs = [("x", x)]
    if mode == "false":
        inputs += [("ratio", np.array(0.7, np.float32)), ("t", np.array(False))]
    got = _run_ms("BitmaskDropout", inputs, [np.float32, np.uint32])
    want = _dropout_oracle({"x": x}, None, None, np.float32)
    _compare(got, [want[0], np.full(3, 0xFFFFFFFF, np.uint32)])
    only = _run_ms("BitmaskDropout", inputs, [np.float32])
    assert len(only) == 1 and np.array_equal(only[0], x)


def test_dropout_refusals(rng):
    x, b = _randn(rng, 2, 8), _randn(rng, 8)
    train = np.array(True)
    for op, ins in (("BiasDropout", [x, b, None, np.array(0.1, np.float32), train]),
                    ("BitmaskBiasDropout", [x, b, None, None, train]),
                    ("BitmaskDropout", [x, np.array(0.5, np.float32), train])):
        with pytest.raises(UnsupportedOpError, match=f"{op}: training_mode true with "
                           "ratio 0.[15]"):
            _kernel(op, ins)
    with pytest.raises(ShapeError, match="BiasDropout: ratio must lie in \\[0, 1\\)"):
        _kernel("BiasDropout", [x, b, None, np.array(1.0, np.float32)])
    with pytest.raises(ShapeError, match="BiasDropout: bias \\[7\\] must be 1-D"):
        _kernel("BiasDropout", [x, _randn(rng, 7)])
    with pytest.raises(ShapeError, match="BiasDropout: residual \\[8\\] must have data's"):
        _kernel("BiasDropout", [x, b, b])
    with pytest.raises(ShapeError, match="BitmaskDropout: training_mode must be a bool"):
        _kernel("BitmaskDropout", [x, None, np.array(1, np.int32)])


# --------------------------------------------------------------------------------------
# GroupNorm, SkipGroupNorm: Transpose + GroupNormalization-21 (+ Sigmoid, Mul)
# --------------------------------------------------------------------------------------


def _group_norm_oracle(feeds, groups, eps, silu, last, skip=None, bias=False, f16=False):
    """Standard ONNX ops over feeds x, g, b (and skip s, bias c): the sum in float32,
    GroupNormalization-21 in NCHW, then SiLU; returns (Y, S)."""
    nodes, cur = [], "x"
    if f16:
        nodes.append(helper.make_node("Cast", ["x"], ["x32"], to=TensorProto.FLOAT))
        cur = "x32"
        for name in ("s", "c"):
            if name in feeds:
                nodes.append(helper.make_node("Cast", [name], [name + "32"],
                                              to=TensorProto.FLOAT))
    sfx = "32" if f16 else ""
    if skip is not None:
        s_name = "s" + sfx
        if skip == "nc":  # (N, C) -> one value per (batch, channel) in the layout
            nodes.append(helper.make_node("Unsqueeze", [s_name, "ax12" if last else "ax23"],
                                          ["s4"]))
            s_name = "s4"
        nodes.append(helper.make_node("Add", [cur, s_name], ["sum1"]))
        cur = "sum1"
        if bias:
            c_name = "c" + sfx
            if not last:
                nodes.append(helper.make_node("Unsqueeze", ["c" + sfx, "ax12"], ["c4"]))
                c_name = "c4"
            nodes.append(helper.make_node("Add", [cur, c_name], ["sum2"]))
            cur = "sum2"
    sum_name = cur
    if last:
        nodes.append(helper.make_node("Transpose", [cur], ["nchw"], perm=[0, 3, 1, 2]))
        cur = "nchw"
    nodes.append(helper.make_node("GroupNormalization", [cur, "g32" if f16 else "g",
                                                         "b32" if f16 else "b"],
                                  ["gn"], num_groups=groups, epsilon=eps))
    cur = "gn"
    if f16:
        nodes += [helper.make_node("Cast", [n], [n + "32"], to=TensorProto.FLOAT)
                  for n in ("g", "b")]
    if silu:
        nodes += [helper.make_node("Sigmoid", [cur], ["sig"]),
                  helper.make_node("Mul", [cur, "sig"], ["act"])]
        cur = "act"
    if last:
        nodes.append(helper.make_node("Transpose", [cur], ["nhwc"], perm=[0, 2, 3, 1]))
        cur = "nhwc"
    outs = ["y", "sum"]
    to = TensorProto.FLOAT16 if f16 else TensorProto.FLOAT
    nodes += [helper.make_node("Cast", [cur], ["y"], to=to),
              helper.make_node("Cast", [sum_name], ["sum"], to=to)]
    inits = {"ax12": np.array([1, 2], np.int64), "ax23": np.array([2, 3], np.int64)}
    return _oracle(nodes, feeds, outs, opset=21, inits=inits)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape,groups", [((2, 3, 5, 8), 2), ((1, 4, 4, 12), 3),
                                          ((2, 2, 3, 6), 6), ((1, 1, 1, 4), 1)])
@pytest.mark.parametrize("activation", [0, 1])
@pytest.mark.parametrize("last", [1, 0])
def test_group_norm(rng, dtype, shape, groups, activation, last):
    if not last:  # the same sizes in NCHW
        shape = (shape[0], shape[3], shape[1], shape[2])
    x = _randn(rng, *shape, dtype=dtype, scale=2.0) + dtype(0.5)
    c = shape[3] if last else shape[1]
    g, b = _randn(rng, c, dtype=dtype), _randn(rng, c, dtype=dtype)
    attrs = dict(groups=groups, activation=activation, channels_last=last, epsilon=1e-4)
    inputs = [("x", x), ("g", g), ("b", b)]
    got = _run_ms("GroupNorm", inputs, [dtype], **attrs)
    want = _group_norm_oracle(_feeds(inputs), groups, 1e-4, activation, last,
                              f16=dtype == np.float16)
    _compare(got, want[:1])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("skip_form", ["full", "n11c", "nc"])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("last", [1, 0])
def test_skip_group_norm(rng, dtype, skip_form, bias, last):
    shape = (2, 3, 4, 8) if last else (2, 8, 3, 4)
    c, n = 8, 2
    x = _randn(rng, *shape, dtype=dtype)
    g, b = _randn(rng, c, dtype=dtype), _randn(rng, c, dtype=dtype)
    skip = {"full": _randn(rng, *shape, dtype=dtype),
            "n11c": _randn(rng, *((n, 1, 1, c) if last else (n, c, 1, 1)), dtype=dtype),
            "nc": _randn(rng, n, c, dtype=dtype)}[skip_form]
    cb = _randn(rng, c, dtype=dtype) if bias else None
    inputs = [("x", x), ("g", g), ("b", b), ("s", skip), ("c", cb)]
    attrs = dict(groups=4, activation=1, channels_last=last)
    got = _run_ms("SkipGroupNorm", inputs, [dtype, dtype], **attrs)
    want = _group_norm_oracle(_feeds(inputs), 4, 1e-5, 1, last,
                              skip="nc" if skip_form == "nc" else skip_form, bias=bias,
                              f16=dtype == np.float16)
    _compare(got, want)
    assert len(_run_ms("SkipGroupNorm", inputs, [dtype], **attrs)) == 1


def test_group_norm_errors(rng):
    x, g = _randn(rng, 2, 3, 3, 6), _randn(rng, 6)
    with pytest.raises(ShapeError, match="GroupNorm: 6 channels are not divisible by "
                       "groups 4"):
        _kernel("GroupNorm", [x, g, g], groups=4, activation=0)
    with pytest.raises(OpAttributeError, match="GroupNorm: activation must be 0"):
        _kernel("GroupNorm", [x, g, g], groups=3, activation=2)
    with pytest.raises(OpAttributeError, match="GroupNorm: groups must be positive"):
        _kernel("GroupNorm", [x, g, g], groups=0, activation=0)
    with pytest.raises(ShapeError, match="GroupNorm: X must be 4-D \\(NHWC\\)"):
        _kernel("GroupNorm", [x[0], g, g], groups=3, activation=0)
    with pytest.raises(ShapeError, match="GroupNorm: gamma must be 1-D of the 6 channels"):
        _kernel("GroupNorm", [x, g[:3], g], groups=3, activation=0)
    with pytest.raises(ShapeError, match="SkipGroupNorm: skip \\[2, 3, 1, 6\\] must be"):
        _kernel("SkipGroupNorm", [x, g, g, x[:, :, :1]], groups=3, activation=0)
    with pytest.raises(ShapeError, match="SkipGroupNorm: bias must be 1-D"):
        _kernel("SkipGroupNorm", [x, g, g, x, g[:2]], groups=3, activation=0)


# --------------------------------------------------------------------------------------
# BiasSplitGelu: Add, Split, Erf Gelu, Mul
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", [(2, 5, 16), (1, 3, 2)])
def test_bias_split_gelu(rng, dtype, shape):
    x, b = _randn(rng, *shape, dtype=dtype, scale=2.0), _randn(rng, shape[-1], dtype=dtype)
    inputs = [("x", x), ("b", b)]
    got = _run_ms("BiasSplitGelu", inputs, [dtype])
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Cast", ["x"], ["x32"], to=f),
             helper.make_node("Cast", ["b"], ["b32"], to=f),
             helper.make_node("Add", ["x32", "b32"], ["s"]),
             helper.make_node("Split", ["s"], ["left", "right"], axis=-1, num_outputs=2),
             helper.make_node("Mul", ["right", "rsqrt2"], ["z"]),
             helper.make_node("Erf", ["z"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["right", "e1"], ["g2"]),
             helper.make_node("Mul", ["g2", "half"], ["gelu"]),
             helper.make_node("Mul", ["left", "gelu"], ["y32"]),
             helper.make_node("Cast", ["y32"], ["y"], to=_ELEM(np.dtype(dtype)))]
    inits = {"rsqrt2": np.float32(1 / np.sqrt(2)), "one": np.float32(1),
             "half": np.float32(0.5)}
    _compare(got, _oracle(nodes, _feeds(inputs), ["y"], opset=18, inits=inits))


def test_bias_split_gelu_errors(rng):
    with pytest.raises(ShapeError, match="BiasSplitGelu: X must be 3-D \\(N, S, D\\) with D "
                       "even"):
        _kernel("BiasSplitGelu", [_randn(rng, 2, 3, 5), _randn(rng, 5)])
    with pytest.raises(ShapeError, match="BiasSplitGelu: bias must be 1-D"):
        _kernel("BiasSplitGelu", [_randn(rng, 2, 3, 4), _randn(rng, 2)])


# --------------------------------------------------------------------------------------
# SwiGLU: Clip, Sigmoid, Mul, Add in double
# --------------------------------------------------------------------------------------


def _swiglu_oracle(gate, up, alpha, beta, limit, round_to=None):
    """The schema's formula as ONNX ops in float64 (which keeps the sigmoid's negative
    tail, as the schema's widening does), cast to T at the end (and, with round_to, the
    activation rounded to T first)."""
    d = TensorProto.DOUBLE
    nodes = [helper.make_node("Cast", ["gate"], ["g0"], to=d)]
    feeds = {"gate": gate}
    if up is None:
        nodes.append(helper.make_node("Split", ["g0"], ["gh", "u0"], axis=-1, num_outputs=2))
        g = "gh"
    else:
        feeds["up"] = up
        nodes.append(helper.make_node("Cast", ["up"], ["u0"], to=d))
        g = "g0"
    u = "u0"
    inits = {"alpha": np.float64(np.float32(alpha)), "beta": np.float64(np.float32(beta)),
             "hi": np.float64(np.float32(limit)), "lo": np.float64(-np.float32(limit)),
             "one": np.float64(1)}
    if limit > 0:
        nodes += [helper.make_node("Clip", [g, "", "hi"], ["gc"]),
                  helper.make_node("Clip", [u, "lo", "hi"], ["uc"])]
        g, u = "gc", "uc"
    # G sigmoid(z) as G / (1 + exp(-z)): onnxruntime's float64 Sigmoid gives 0 below
    # about -88, where the schema's widened product does not
    nodes += [helper.make_node("Mul", [g, "alpha"], ["z"]),
              helper.make_node("Neg", ["z"], ["nz"]),
              helper.make_node("Exp", ["nz"], ["ez"]),
              helper.make_node("Add", ["ez", "one"], ["den"]),
              helper.make_node("Div", [g, "den"], ["act"]),
              helper.make_node("Add", [u, "beta"], ["ub"])]
    act = "act"
    if round_to is not None:
        nodes += [helper.make_node("Cast", ["act"], ["act_t"], to=_ELEM(np.dtype(round_to))),
                  helper.make_node("Cast", ["act_t"], ["act_r"], to=d)]
        act = "act_r"
    nodes += [helper.make_node("Mul", [act, "ub"], ["y64"]),
              helper.make_node("Cast", ["y64"], ["y"], to=_ELEM(gate.dtype))]
    return _oracle(nodes, feeds, ["y", "y64"], opset=18, inits=inits)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("alpha,beta,limit", [(1.0, 0.0, 0.0), (1.702, 1.0, 7.0),
                                              (0.5, -0.25, 2.0)])
@pytest.mark.parametrize("round_activation", [0, 1])
def test_swiglu(rng, dtype, packed, alpha, beta, limit, round_activation):
    gate = _randn(rng, 3, 5, 24 if packed else 12, dtype=dtype, scale=4.0)
    gate.reshape(-1)[:3] = [-150, -95, 30]  # the widened tail and the clamp
    up = None if packed else _randn(rng, 3, 5, 12, dtype=dtype, scale=4.0)
    inputs = [("gate", gate), ("up", up)]
    attrs = dict(activation_alpha=alpha, activation_beta=beta, limit=limit,
                 round_activation=round_activation)
    got = _run_ms("SwiGLU", inputs, [dtype], **attrs)
    want = _swiglu_oracle(gate, up, alpha, beta, limit,
                          dtype if round_activation else None)
    _compare(got, want[:1])
    if dtype == np.float32 and not limit:
        # the widened tail (-95 x sigmoid(-95) x up ~ 1e-40, a float32 subnormal, which
        # onnxruntime's Cast to float flushes to zero) against the float64 product
        np.testing.assert_allclose(got[0].reshape(-1)[:2], want[1].reshape(-1)[:2],
                                   rtol=1e-5, atol=1e-44)


def test_swiglu_errors(rng):
    with pytest.raises(ShapeError, match="SwiGLU: without up, gate's last dim must be even"):
        _kernel("SwiGLU", [_randn(rng, 2, 5)])
    with pytest.raises(ShapeError, match="SwiGLU: up float32 \\[2, 3\\] must have gate's"):
        _kernel("SwiGLU", [_randn(rng, 2, 4), _randn(rng, 2, 3)])


# --------------------------------------------------------------------------------------
# RelativePositionBias: T5's buckets in float32 ONNX arithmetic, Gather
# --------------------------------------------------------------------------------------


def _t5_oracle(table, seq, max_distance, bidirectional):
    """Buckets of rel = key - query by onnxruntime's kernel arithmetic written as ONNX
    ops (Abs/Min/Where, float32 Log/Div/Mul, Cast to int64 truncating), then Gather from
    the table's buffer as (heads, buckets)."""
    nb, heads = table.shape
    half = nb // 2 if bidirectional else nb
    exact = half // 2
    rel = np.arange(seq)[None, :] - np.arange(seq)[:, None]
    nodes = []
    if bidirectional:
        nodes += [helper.make_node("Greater", ["rel", "zero"], ["pos"]),
                  helper.make_node("Where", ["pos", "half", "zero"], ["base"]),
                  helper.make_node("Abs", ["rel"], ["r"])]
    else:
        nodes += [helper.make_node("Min", ["rel", "zero"], ["neg"]),
                  helper.make_node("Neg", ["neg"], ["r"]),
                  helper.make_node("Identity", ["zero"], ["base"])]
    f = TensorProto.FLOAT
    nodes += [helper.make_node("Max", ["r", "one"], ["r1"]),
              helper.make_node("Cast", ["r1"], ["rf"], to=f),
              helper.make_node("Div", ["rf", "exact_f"], ["q"]),
              helper.make_node("Log", ["q"], ["lq"]),
              helper.make_node("Div", ["lq", "den"], ["t"]),
              helper.make_node("Mul", ["t", "span"], ["t2"]),
              helper.make_node("Cast", ["t2"], ["ti"], to=TensorProto.INT64),
              helper.make_node("Add", ["ti", "exact"], ["large0"]),
              helper.make_node("Min", ["large0", "top"], ["large"]),
              helper.make_node("Less", ["r", "exact"], ["small"]),
              helper.make_node("Where", ["small", "r", "large"], ["bk"]),
              helper.make_node("Add", ["bk", "base"], ["bucket"]),
              helper.make_node("Reshape", ["table", "hb"], ["t2d"]),
              helper.make_node("Gather", ["t2d", "bucket"], ["g"], axis=1),
              helper.make_node("Unsqueeze", ["g", "ax0"], ["y"])]
    i64 = np.int64
    inits = {"rel": rel.astype(i64), "zero": i64(0), "one": i64(1), "half": i64(half),
             "exact": i64(exact), "exact_f": np.float32(exact), "top": i64(half - 1),
             "den": np.log(np.float32(max_distance) / np.float32(exact)).astype(np.float32),
             "span": np.float32(half - exact), "hb": np.array([heads, nb], i64),
             "ax0": np.array([0], i64)}
    return _oracle(nodes, {"table": table}, ["y"], inits=inits)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("seq,nb,max_distance,bidirectional", [
    (7, 32, 128, 1), (40, 32, 128, 1), (40, 32, 20, 0), (130, 16, 100, 0), (1, 8, 16, 1),
    (60, 10, 33, 1)])
def test_relative_position_bias(rng, dtype, seq, nb, max_distance, bidirectional):
    table = _randn(rng, nb, 3, dtype=dtype)
    n = np.array(seq, np.int64)
    inputs = [("table", table), ("q", n), ("k", n)]
    attrs = dict(max_distance=max_distance, is_bidirectional=bidirectional)
    got = _run_ms("RelativePositionBias", inputs, [dtype], **attrs)
    _compare(got, _t5_oracle(table, seq, max_distance, bidirectional), tol=dict(rtol=0,
                                                                              atol=0))
    _infer_matches("RelativePositionBias", inputs, got, attrs, values=("q", "k"))


def test_relative_position_bias_errors(rng):
    table, n = _randn(rng, 32, 2), np.array(5, np.int64)
    with pytest.raises(UnsupportedOpError, match="RelativePositionBias: query_length 5 != "
                       "key_length 6"):
        _kernel("RelativePositionBias", [table, n, np.array(6, np.int64)], max_distance=64)
    with pytest.raises(ShapeError, match="RelativePositionBias: query_length must be an "
                       "int64 scalar"):
        _kernel("RelativePositionBias", [table, np.array(5, np.int32), n], max_distance=64)
    with pytest.raises(OpAttributeError, match="max_distance 8 must exceed"):
        _kernel("RelativePositionBias", [table, n, n], max_distance=8)
    with pytest.raises(OpAttributeError, match="max_distance must be positive"):
        _kernel("RelativePositionBias", [table, n, n], max_distance=0)
    with pytest.raises(ShapeError, match="3 buckets are too few"):
        _kernel("RelativePositionBias", [table[:3], n, n], max_distance=8,
                is_bidirectional=1)
    with pytest.raises(ShapeError, match="bias_table must be 2-D"):
        _kernel("RelativePositionBias", [table[0], n, n], max_distance=64)
    big = np.array(2**31 - 1, np.int64)
    with pytest.raises(ExecutionError, match="RelativePositionBias: the \\(1, 2, 2147483647, "
                       "2147483647\\) output would take"):
        _kernel("RelativePositionBias", [table, big, big], max_distance=64)


# --------------------------------------------------------------------------------------
# GatedRelativePositionBias: Add, Reshape, Transpose, MatMul, ReduceSum, Sigmoid
# --------------------------------------------------------------------------------------


def _gated_oracle(feeds, batch, seq, heads, head_size, d):
    """The gate formula as ONNX ops: Add, Reshape, Transpose, MatMul, Add, Split,
    ReduceSum, Sigmoid and the eco_a arithmetic, times rel_pos."""
    nodes = [
        helper.make_node("Add", ["q", "qb"], ["q1"]),
        helper.make_node("Reshape", ["q1", "bsnh"], ["q2"]),
        helper.make_node("Transpose", ["q2"], ["q3"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["q3", "w"], ["qw0"]),
        helper.make_node("Add", ["qw0", "bias"], ["qw"]),
        helper.make_node("Split", ["qw"], ["uh", "rh"], axis=-1, num_outputs=2),
        helper.make_node("ReduceSum", ["uh", "last"], ["us"], keepdims=1),
        helper.make_node("ReduceSum", ["rh", "last"], ["rs"], keepdims=1),
        helper.make_node("Sigmoid", ["us"], ["u"]),
        helper.make_node("Sigmoid", ["rs"], ["r"]),
        helper.make_node("Mul", ["r", "eco"], ["re"]),
        helper.make_node("Sub", ["re", "one"], ["re1"]),
        helper.make_node("Mul", ["u", "re1"], ["ur"]),
        helper.make_node("Add", ["ur", "two"], ["gate"]),
        helper.make_node("Mul", ["gate", "rel"], ["y"])]
    dt = feeds["q"].dtype
    inits = {"bsnh": np.array([batch, seq, heads, head_size], np.int64),
             "last": np.array([-1], np.int64), "one": np.array(1, dt),
             "two": np.array(2, dt)}
    return _oracle(nodes, feeds, ["y"], opset=18, inits=inits)


def _gated_inputs(rng, batch, seq, heads, head_size, d, dtype=np.float32):
    """Random GatedRelativePositionBias inputs of consistent shapes."""
    hidden = heads * head_size
    return [("q", _randn(rng, batch, seq, hidden, dtype=dtype)),
            ("qb", _randn(rng, hidden, dtype=dtype)),
            ("rel", _randn(rng, 1, heads, seq, seq, dtype=dtype)),
            ("w", _randn(rng, head_size, d, dtype=dtype, scale=0.5)),
            ("bias", _randn(rng, d, dtype=dtype)),
            ("eco", _randn(rng, 1, heads, 1, 1, dtype=dtype))]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("batch,seq,heads,head_size,d", [(2, 5, 3, 8, 8), (1, 4, 2, 4, 2),
                                                         (3, 7, 4, 6, 10)])
def test_gated_relative_position_bias(rng, dtype, batch, seq, heads, head_size, d):
    inputs = _gated_inputs(rng, batch, seq, heads, head_size, d, dtype)
    got = _run_ms("GatedRelativePositionBias", inputs, [dtype], num_heads=heads)
    _compare(got, _gated_oracle(_feeds(inputs), batch, seq, heads, head_size, d))


def test_gated_relative_position_bias_packed(rng):
    """A packed query with token_offset equals the padded query whose padding rows are
    zeros (the kernel then adds query_bias to them alone)."""
    batch, seq, heads, head_size, d = 2, 4, 2, 4, 6
    inputs = _gated_inputs(rng, batch, seq, heads, head_size, d)
    counts = np.array([3, 1], np.int32)
    real = (np.arange(seq)[None] < counts[:, None]).reshape(-1)
    offset = np.argsort(~real, kind="stable").astype(np.int32).reshape(batch, seq)
    q = inputs[0][1]
    packed = q.reshape(batch * seq, -1)[offset.reshape(-1)[:4]]
    padded = np.zeros_like(q).reshape(batch * seq, -1)
    padded[offset.reshape(-1)[:4]] = packed
    want = _gated_oracle(dict(_feeds(inputs), q=padded.reshape(q.shape)), batch, seq, heads,
                         head_size, d)
    ins = [("q", packed)] + inputs[1:] + [("off", offset)]
    _compare(_run_ms("GatedRelativePositionBias", ins, [np.float32], num_heads=heads), want)


def test_gated_relative_position_bias_errors(rng):
    ins = [v for _, v in _gated_inputs(rng, 2, 5, 3, 8, 8)]
    with pytest.raises(ShapeError, match="GatedRelativePositionBias: query_layer must be"):
        _kernel("GatedRelativePositionBias", ins, num_heads=5)
    bad = list(ins)
    bad[2] = ins[2][:, :, :4]
    with pytest.raises(ShapeError, match="rel_pos must have shape \\[1, 3, 5, 5\\]"):
        _kernel("GatedRelativePositionBias", bad, num_heads=3)
    bad = list(ins)
    bad[3] = ins[3][:, :7]
    with pytest.raises(ShapeError, match="weight \\[8, 7\\] must be"):
        _kernel("GatedRelativePositionBias", bad, num_heads=3)
    with pytest.raises(OpAttributeError, match="num_heads must be positive"):
        _kernel("GatedRelativePositionBias", ins, num_heads=0)
    bad = ins + [np.array([[0, 1], [2, 99]], np.int32)]
    bad[0] = ins[0].reshape(10, 24)[:4]
    with pytest.raises(ShapeError, match="token_offset holds offsets outside \\[0, 4\\)"):
        _kernel("GatedRelativePositionBias", bad, num_heads=3)


# --------------------------------------------------------------------------------------
# RemovePadding, RestorePadding: TopK/Gather/CumSum and ScatterND
# --------------------------------------------------------------------------------------


def _remove_padding_oracle(x, counts):
    """token_offset = the flat positions sorted by (is padding, position) with TopK, the
    output a Gather of the first sum(counts) of them, CumSum and ReduceMax."""
    b, s, h = x.shape
    i64 = np.int64
    nodes = [
        helper.make_node("Unsqueeze", ["c", "ax1"], ["c2"]),
        helper.make_node("Less", ["pos", "c2"], ["real"]),
        helper.make_node("Not", ["real"], ["pad"]),
        helper.make_node("Cast", ["pad"], ["padi"], to=TensorProto.INT64),
        helper.make_node("Mul", ["padi", "bs"], ["key0"]),
        helper.make_node("Add", ["key0", "flat"], ["key1"]),
        helper.make_node("Reshape", ["key1", "minus1"], ["key"]),
        helper.make_node("TopK", ["key", "k"], ["_", "order"], largest=0, sorted=1),
        helper.make_node("Cast", ["order"], ["order32"], to=TensorProto.INT32),
        helper.make_node("Reshape", ["order32", "shape_bs"], ["offset"]),
        helper.make_node("ReduceSum", ["c"], ["total32"], keepdims=1),
        helper.make_node("Cast", ["total32"], ["total"], to=TensorProto.INT64),
        helper.make_node("Slice", ["order", "zero1", "total"], ["picked"]),
        helper.make_node("Reshape", ["x", "shape_th"], ["x2"]),
        helper.make_node("Gather", ["x2", "picked"], ["y"], axis=0),
        helper.make_node("CumSum", ["c", "zero0"], ["cs"]),
        helper.make_node("Concat", ["zero32", "cs"], ["cum"], axis=0),
        helper.make_node("ReduceMax", ["c"], ["top"], keepdims=1)]
    inits = {"ax1": np.array([1], i64), "pos": np.arange(s, dtype=np.int32)[None],
             "bs": i64(b * s), "flat": np.arange(b * s, dtype=i64).reshape(b, s),
             "minus1": np.array([-1], i64), "k": np.array([b * s], i64),
             "shape_bs": np.array([b, s], i64), "zero1": np.array([0], i64),
             "shape_th": np.array([b * s, h], i64), "zero0": np.array(0, np.int32),
             "zero32": np.array([0], np.int32)}
    return _oracle(nodes, {"x": x, "c": counts}, ["y", "offset", "cum", "top"], inits=inits)


def _restore_padding_oracle(packed, offset, hidden):
    """ScatterND of the packed rows into zeros at token_offset's first rows."""
    b, s = offset.shape
    i64 = np.int64
    nodes = [helper.make_node("Reshape", ["off", "minus1"], ["flat"]),
             helper.make_node("Slice", ["flat", "zero1", "t"], ["idx32"]),
             helper.make_node("Cast", ["idx32"], ["idx"], to=TensorProto.INT64),
             helper.make_node("Unsqueeze", ["idx", "ax1"], ["idx2"]),
             helper.make_node("ScatterND", ["zeros", "idx2", "x"], ["y2"]),
             helper.make_node("Reshape", ["y2", "bsh"], ["y"])]
    inits = {"minus1": np.array([-1], i64), "zero1": np.array([0], i64),
             "t": np.array([packed.shape[0]], i64), "ax1": np.array([1], i64),
             "zeros": np.zeros((b * s, hidden), packed.dtype),
             "bsh": np.array([b, s, hidden], i64)}
    return _oracle(nodes, {"x": packed, "off": offset}, ["y"], inits=inits)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("counts", [[1, 2, 4], [4, 4, 4], [0, 3, 2], [0, 0, 0]])
def test_remove_and_restore_padding(rng, dtype, counts):
    x = _randn(rng, 3, 4, 6, dtype=dtype)
    c = np.array(counts, np.int32)
    inputs = [("x", x), ("c", c)]
    got = _run_ms("RemovePadding", inputs, [dtype, np.int32, np.int32, np.int32])
    _compare(got, _remove_padding_oracle(x, c), tol=dict(rtol=0, atol=0))
    packed, offset = got[0], got[1]
    ins = [("x", packed), ("off", offset)]
    back = _run_ms("RestorePadding", ins, [dtype])
    _compare(back, _restore_padding_oracle(packed, offset, 6), tol=dict(rtol=0, atol=0))


def test_padding_errors(rng):
    x = _randn(rng, 2, 3, 4)
    with pytest.raises(ShapeError, match="RemovePadding: sequence_token_count must lie in "
                       "\\[0, 3\\]"):
        _kernel("RemovePadding", [x, np.array([1, 4], np.int32)])
    with pytest.raises(ShapeError, match="RemovePadding: sequence_token_count must be int32"):
        _kernel("RemovePadding", [x, np.array([1, 2], np.int64)])
    with pytest.raises(ShapeError, match="RemovePadding: input must be \\(batch, seq, "
                       "hidden\\)"):
        _kernel("RemovePadding", [x, np.array([1, 2, 3], np.int32)])
    off = np.arange(6, dtype=np.int32).reshape(2, 3)
    with pytest.raises(ShapeError, match="RestorePadding: token_offset holds offsets "
                       "outside \\[0, 6\\)"):
        _kernel("RestorePadding", [x[0], off + 5])
    with pytest.raises(ShapeError, match="RestorePadding: input must be \\(token_count, "
                       "hidden\\)"):
        _kernel("RestorePadding", [_randn(rng, 7, 4), off])


# --------------------------------------------------------------------------------------
# Models through to_onnx
# --------------------------------------------------------------------------------------


def _graph_model(nodes, inputs, outputs, inits=None):
    """A model of `nodes` (default and com.microsoft domains) over `inputs`."""
    graph = helper.make_graph(
        nodes, "nn", [helper.make_tensor_value_info(k, _ELEM(v.dtype), v.shape)
                      for k, v in inputs.items()],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def test_round_trip_model(rng):
    """ScaledSiLU between standard ops feeding a DecoderMaskedMultiHeadAttention
    decoding step (the ops onnxruntime runs on CPU), imported, run, written back by
    to_onnx: onnxruntime runs the written model to the original's outputs."""
    nodes = [helper.make_node("ScaledSiLU", ["x"], ["a"], domain=MS, alpha=1.702),
             helper.make_node("MatMul", ["a", "w"], ["m"]),
             helper.make_node("ScaledSiLU", ["m", "scale"], ["q"], domain=MS),
             helper.make_node(DM, ["q", "k", "v", "mask", "", "pk", "pv", "plen"],
                              ["y", "present_k", "present_v"], domain=MS, num_heads=2,
                              past_present_share_buffer=1)]
    feeds = {"x": _randn(rng, 2, 1, 8), "k": _randn(rng, 2, 1, 16),
             "v": _randn(rng, 2, 1, 16), "mask": np.array([[1, 1, 0, 1], [1, 1, 1, 1]],
                                                          np.int32),
             "pk": _randn(rng, 2, 2, 5, 8), "pv": _randn(rng, 2, 2, 5, 8),
             "plen": np.array(3, np.int32)}
    model = _graph_model(nodes, feeds, ["y", "present_k", "present_v"],
                         {"w": _randn(rng, 8, 16), "scale": np.float32(0.5)})
    want = ort_session(model, optimize=False).run(None, feeds)
    got = _og(model, feeds)
    back = to_onnx(from_onnx(model))
    assert [n.op_type for n in back.graph.node if n.domain == MS] == ["ScaledSiLU"] * 2 + [DM]
    again = ort_session(back, optimize=False).run(None, feeds)
    _compare(got, want)
    _compare(again, want)


def test_round_trip_ops_without_cpu_kernels(rng):
    """A packed-BERT-style chain (RemovePadding, BiasSplitGelu-free FFN pieces, BiasDropout,
    RestorePadding, BiasSoftmax, SkipGroupNorm) survives to_onnx: the written nodes keep
    their op types and attributes, and onegraph runs the written model to the same
    outputs (onnxruntime has no CPU kernels to run it)."""
    nodes = [
        helper.make_node("RemovePadding", ["x", "counts"], ["packed", "offset", "cum", "mx"],
                         domain=MS),
        helper.make_node("SwiGLU", ["packed"], ["act"], domain=MS, limit=3.0),
        helper.make_node("BiasDropout", ["act", "b4"], ["drop"], domain=MS),
        helper.make_node("RestorePadding", ["drop", "offset"], ["restored"], domain=MS),
        helper.make_node("BiasSoftmax", ["restored", "mask"], ["probs"], domain=MS, axis=2,
                         is_inner_broadcast=1),
        helper.make_node("Unsqueeze", ["probs", "ax"], ["img"]),
        helper.make_node("SkipGroupNorm", ["img", "g", "b", "img"], ["y", "s"], domain=MS,
                         groups=2, activation=1)]
    feeds = {"x": _randn(rng, 2, 3, 8), "counts": np.array([2, 3], np.int32)}
    inits = {"b4": _randn(rng, 4), "mask": _randn(rng, 2, 1, 4), "ax": np.array([1], np.int64),
             "g": _randn(rng, 4), "b": _randn(rng, 4)}
    model = _graph_model(nodes, feeds, ["y", "s", "cum", "mx"], inits)
    got = _og(model, feeds)
    back = to_onnx(from_onnx(model))
    ms_nodes = {n.op_type: n for n in back.graph.node if n.domain == MS}
    assert set(ms_nodes) == {n.op_type for n in nodes if n.domain == MS}
    attrs = {a.name: helper.get_attribute_value(a) for a in ms_nodes["BiasSoftmax"].attribute}
    assert attrs["axis"] == 2 and attrs["is_inner_broadcast"] == 1
    again = _og(back, feeds)
    _compare(again, got, tol=dict(rtol=0, atol=0))
    # and the chain's values: the group norm of 2 x softmax, unit-free checks
    np.testing.assert_array_equal(got[2], [0, 2, 5])
    np.testing.assert_array_equal(got[3], [3])


# --------------------------------------------------------------------------------------
# DecoderMaskedMultiHeadAttention (onnxruntime has a float32 CPU kernel)
# --------------------------------------------------------------------------------------

_DM_NAMES = ("q", "k", "v", "mask", "ab", "pk", "pv", "plen", "bw", "ci", "bias")


def _dm_model(values, outputs, dtype=np.float32, **attrs):
    """A one-node DMMHA model: `values` maps input names (_DM_NAMES) to arrays, the
    rest omitted; `outputs` the declared output names ("" = omitted)."""
    inputs = [(n, values.get(n)) for n in _DM_NAMES]
    names, graph_inputs, _ = node_inputs(inputs)
    while names[-1] == "":
        names.pop()
    node = helper.make_node(DM, names, list(outputs), domain=MS, **attrs)
    graph = helper.make_graph([node], "dm", graph_inputs, [
        helper.make_tensor_value_info(o, _ELEM(np.dtype(dtype)), None) for o in outputs if o])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _dm_check(values, outputs, oracle_values=None, **attrs):
    """onegraph == onnxruntime's CPU kernel (run on `oracle_values`, float32, when
    given: the packed and float16 forms it has no kernel for); returns onegraph's."""
    dtype = values["q"].dtype
    got = _og(_dm_model(values, outputs, dtype, **attrs), values)
    ov = oracle_values or values
    want = ort_session(_dm_model(ov, outputs, **attrs), optimize=False).run(None, ov)
    _compare(got, [w.astype(dtype) for w in want])
    infos = [None if values.get(n) is None else TensorInfo(values[n].dtype, values[n].shape)
             for n in _DM_NAMES]
    opdef = REGISTRY.get(DM, MS)
    inferred = opdef.infer(opdef.resolve_attrs(attrs), infos)
    for info, y in zip([i for i, o in zip(inferred, outputs) if o], got):
        assert info.dtype == y.dtype and (info.shape is None or all(
            d is None or d == n for d, n in zip(info.shape, y.shape)))
    return got


def _dm_self(rng, batch=2, heads=2, hs=8, max_seq=6, past=3, dtype=np.float32):
    """Random self-attention DMMHA inputs with shared-buffer caches of max_seq rows."""
    d = heads * hs
    return {"q": _randn(rng, batch, 1, d, dtype=dtype), "k": _randn(rng, batch, 1, d,
                                                                     dtype=dtype),
            "v": _randn(rng, batch, 1, d, dtype=dtype),
            "pk": _randn(rng, batch, heads, max_seq, hs, dtype=dtype),
            "pv": _randn(rng, batch, heads, max_seq, hs, dtype=dtype),
            "plen": np.array(past, np.int32)}


_PRESENT = ("y", "pk_out", "pv_out")


@pytest.mark.parametrize("past", [0, 3, 5])
@pytest.mark.parametrize("extras", [(), ("bias",), ("mask",), ("ab",), ("ab1", "mask"),
                                    ("bias", "mask", "ab")])
def test_dmmha_self(rng, past, extras):
    values = _dm_self(rng, past=past)
    if "bias" in extras:
        values["bias"] = _randn(rng, 48)
    if "mask" in extras:
        values["mask"] = (rng.random((2, past + 1)) > 0.3).astype(np.int32)
    if "ab" in extras or "ab1" in extras:
        values["ab"] = _randn(rng, *((2, 2) if "ab" in extras else (1, 1)), 1, past + 1)
    _dm_check(values, _PRESENT, num_heads=2, past_present_share_buffer=1)


def test_dmmha_scale_qk_and_filter(rng):
    values = _dm_self(rng)
    values["mask"] = np.array([[1, 0, 1, 1], [0, 1, 1, 1]], np.int32)
    _dm_check(values, _PRESENT + ("qk",), num_heads=2, past_present_share_buffer=1,
              output_qk=1, scale=0.3, mask_filter_value=-50.0)


def test_dmmha_packed_qkv(rng):
    """onnxruntime's CPU kernel fails on packed QKV (a reshape error); the oracle is its
    kernel on the same Q, K, V unpacked."""
    values = _dm_self(rng)
    packed = dict(values, q=np.concatenate([values["q"], values["k"], values["v"]], -1))
    del packed["k"], packed["v"]
    _dm_check(packed, _PRESENT, values, num_heads=2, past_present_share_buffer=1)


@pytest.mark.parametrize("with_bw", [True, False])
@pytest.mark.parametrize("extras", [(), ("bias",)])
def test_dmmha_beams(rng, with_bw, extras):
    batch, beam, max_seq, past = 4, 2, 6, 4
    values = _dm_self(rng, batch=batch, max_seq=max_seq, past=past)
    values["ci"] = rng.integers(0, beam, (batch // beam, beam, max_seq)).astype(np.int32)
    if with_bw:
        values["bw"] = np.array(beam, np.int32)
    if "bias" in extras:
        values["bias"] = _randn(rng, 48)
    _dm_check(values, _PRESENT + ("qk",), num_heads=2, past_present_share_buffer=1,
              output_qk=1)


@pytest.mark.parametrize("extras", [(), ("mask",), ("bias",)])
def test_dmmha_cross(rng, extras):
    batch, heads, hs, kv = 2, 2, 8, 5
    values = {"q": _randn(rng, batch, 1, heads * hs),
              "k": _randn(rng, batch, heads, kv, hs), "v": _randn(rng, batch, heads, kv, hs)}
    if "mask" in extras:
        values["mask"] = np.array([[1, 1, 0, 1, 0], [1, 1, 1, 1, 1]], np.int32)
    if "bias" in extras:
        values["bias"] = _randn(rng, 3 * heads * hs)
    _dm_check(values, ("y",), num_heads=heads)
    _dm_check(values, ("y", "", "", "qk"), num_heads=heads, output_qk=1)


def test_dmmha_float16(rng):
    values = _dm_self(rng, dtype=np.float16)
    values["mask"] = np.array([[1, 1, 0, 1], [1, 1, 1, 1]], np.int32)
    up = {k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in values.items()}
    _dm_check(values, _PRESENT, up, num_heads=2, past_present_share_buffer=1)


def test_dmmha_errors(rng):
    values = _dm_self(rng)

    def call(**changes):
        """The kernel on `values` with some inputs changed (_attrs, _n: attributes and
        the declared output count)."""
        v = dict(values, **{k: c for k, c in changes.items() if not k.startswith("_")})
        attrs = dict(dict(num_heads=2, past_present_share_buffer=1), **changes.get("_attrs", {}))
        opdef = REGISTRY.get(DM, MS)
        resolved = opdef.resolve_attrs(attrs, num_outputs=changes.get("_n", 3))
        return opdef.kernel([v.get(n) for n in _DM_NAMES], resolved, None)

    with pytest.raises(ShapeError, match=f"{DM}: query must be \\(batch, 1, hidden\\)"):
        call(q=_randn(rng, 2, 2, 16))
    with pytest.raises(ShapeError, match="past_sequence_length must lie in \\[0, 6\\)"):
        call(plen=np.array(6, np.int32))
    with pytest.raises(ShapeError, match="needs past_sequence_length"):
        call(plen=None)
    with pytest.raises(UnsupportedOpError, match="past_present_share_buffer=0"):
        call(_attrs=dict(past_present_share_buffer=0))
    with pytest.raises(UnsupportedOpError, match="mask_index of shape \\[2\\]"):
        call(mask=np.array([3, 4], np.int32))
    with pytest.raises(UnsupportedOpError, match="mask_index with cache_indirection"):
        call(mask=np.ones((2, 4), np.int32), ci=np.zeros((1, 2, 6), np.int32))
    with pytest.raises(UnsupportedOpError, match="attention_bias with cache_indirection"):
        call(ab=_randn(rng, 2, 2, 1, 4), ci=np.zeros((1, 2, 6), np.int32))
    with pytest.raises(ShapeError, match="beam_width 2 needs cache_indirection"):
        call(bw=np.array(2, np.int32))
    with pytest.raises(ShapeError, match="cache_indirection holds beams outside"):
        call(ci=np.full((1, 2, 6), 2, np.int32))
    with pytest.raises(UnsupportedOpError, match="attention_bias with cross-attention"):
        call(pk=None, pv=None, k=_randn(rng, 2, 2, 5, 8), v=_randn(rng, 2, 2, 5, 8),
             ab=_randn(rng, 2, 2, 1, 5))
    with pytest.raises(ShapeError, match="self-attention key/value must be"):
        call(k=_randn(rng, 2, 2, 5, 8))
    with pytest.raises(ShapeError, match="cross-attention key \\[2, 1, 16\\]"):
        call(pk=None, pv=None)
    with pytest.raises(ShapeError, match="bias must be 1-D of 3 \\* hidden = 48"):
        call(bias=_randn(rng, 16))
    with pytest.raises(OpAttributeError, match="the qk output needs output_qk=1"):
        call(_n=4)
    with pytest.raises(OpAttributeError, match="num_heads must be positive"):
        call(_attrs=dict(num_heads=0))


def test_empty_and_scalar_inputs():
    """Zero-size dims give empty outputs of the right shapes (not a reshape error), and
    0-d inputs run (the shared sigmoid writes in place, which a numpy scalar cannot)."""
    z = np.zeros
    for last in (1, 0):
        for shape in ((0, 2, 2, 4), (2, 2, 2, 0)) if last else ((0, 4, 2, 2), (2, 0, 2, 2)):
            c = shape[3] if last else shape[1]
            y, s = _kernel("SkipGroupNorm", [z(shape, np.float32), z(c, np.float32),
                                             z(c, np.float32), z(shape, np.float32)],
                           groups=2, activation=1, channels_last=last)
            assert y.shape == s.shape == shape
    x = np.array(-3.0, np.float32)
    np.testing.assert_allclose(_kernel("ScaledSiLU", [x])[0], -3 / (1 + np.exp(3)),
                               rtol=1e-6)
    np.testing.assert_allclose(_kernel("SwiGLU", [x, np.array(2.0, np.float32)])[0],
                               -6 / (1 + np.exp(3)), rtol=1e-6)
    assert _kernel("RelativePositionBias", [z((32, 2), np.float32), np.array(0),
                                            np.array(0)], max_distance=64)[0].shape == \
        (1, 2, 0, 0)


# --------------------------------------------------------------------------------------
# SparseAttention (onnxruntime has a CPU kernel; its past and present caches must share
# one buffer, so the oracle binds them to the same OrtValue)
# --------------------------------------------------------------------------------------

SA = "SparseAttention"
_SA_NAMES = ("q", "k", "v", "pk", "pv", "rows", "cols", "t", "kt", "cos", "sin")


def _sa_model(values, dtype, **attrs):
    """A one-node SparseAttention model over `values` (names in _SA_NAMES)."""
    inputs = [(n, values.get(n)) for n in _SA_NAMES]
    names, graph_inputs, _ = node_inputs(inputs)
    while names[-1] == "":
        names.pop()
    node = helper.make_node(SA, names, ["y", "pk_out", "pv_out"], domain=MS, **attrs)
    graph = helper.make_graph([node], "sa", graph_inputs, [
        helper.make_tensor_value_info(o, _ELEM(np.dtype(dtype)), None)
        for o in ("y", "pk_out", "pv_out")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _sa_ort(model, values):
    """onnxruntime's outputs with present_key/value bound to past_key/value's buffers."""
    session = ort_session(model, optimize=False)
    binding = session.io_binding()
    arrays = {n: np.array(v) for n, v in values.items()}  # (alive while bound)
    bound = {n: ort.OrtValue.ortvalue_from_numpy(a) for n, a in arrays.items()}
    for n, v in bound.items():
        binding.bind_ortvalue_input(n, v)
    binding.bind_output("y")
    binding.bind_ortvalue_output("pk_out", bound["pk"])
    binding.bind_ortvalue_output("pv_out", bound["pv"])
    session.run_with_iobinding(binding)
    # copies: the outputs view buffers that end with this function
    return [np.array(o.numpy(), copy=True) for o in binding.get_outputs()]


def _csr(block_masks):
    """(block_row_indices, block_col_indices) of (layouts, nb, nb) 0/1 block masks, the
    column lists padded with -1."""
    rows = np.concatenate([np.zeros((len(block_masks), 1), np.int64),
                           np.cumsum(block_masks.sum(axis=2), axis=1)], axis=1)
    nnz = int(rows[:, -1].max())
    cols = np.full((len(block_masks), nnz), -1, np.int64)
    for i, m in enumerate(block_masks):
        c = np.nonzero(m)[1]
        cols[i, :c.size] = c
    return rows.astype(np.int32), cols.astype(np.int32)


def _layouts(kind, nb=4):
    """Block masks: one dense layout, or two/four layouts mixing local and strided."""
    lower = np.tril(np.ones((nb, nb), np.int32))
    if kind == "dense":
        return lower[None]
    local = lower.copy()
    local[2, 0] = local[3, 0] = local[3, 1] = 0  # a local window of two blocks
    strided = lower.copy()
    strided[2, 1] = strided[3, 2] = 0
    if kind == "two":
        return np.stack([local, strided])
    return np.stack([local, strided, lower, local])


def _sa_values(rng, seq, klen, total, layouts, heads=4, kv=2, hs=16, cache=16,
               packed=False, rotary=False, dtype=np.float32):
    """Random SparseAttention inputs (key lengths `klen`, `rotary` cos/sin columns)."""
    batch = len(klen)
    rows, cols = _csr(_layouts(layouts))
    values = {"q": _randn(rng, batch, seq, heads * hs, dtype=dtype),
              "k": _randn(rng, batch, seq, kv * hs, dtype=dtype),
              "v": _randn(rng, batch, seq, kv * hs, dtype=dtype),
              "pk": _randn(rng, batch, kv, cache, hs, dtype=dtype),
              "pv": _randn(rng, batch, kv, cache, hs, dtype=dtype),
              "rows": rows, "cols": cols, "t": np.array([total], np.int32),
              "kt": np.array(klen, np.int32)}
    if packed:
        values["q"] = np.concatenate([values.pop("q"), values.pop("k"), values.pop("v")], -1)
    if rotary:
        cos, sin = (np.cos(np.arange(32)[:, None] * rng.random(rotary)).astype(dtype),
                    np.sin(np.arange(32)[:, None] * rng.random(rotary)).astype(dtype))
        values.update(cos=cos, sin=sin)
    return values


def _sa_oracle(values, dtype, attrs):
    """onnxruntime's outputs, batch entry by entry: its CPU kernel writes each (entry,
    head)'s probabilities at a stride of total_sequence_length but reads them back at
    the entry's own key length, so in a batch only entries of the full length come out
    right; alone (total_sequence_length = its key length, or the prompt's length) each
    entry does."""
    seq = values["q"].shape[1]
    prompt = int(values["t"][0]) == seq
    per_entry = []
    for b, klen in enumerate(values["kt"]):
        one = {n: (v[b:b + 1] if n in ("q", "k", "v", "pk", "pv") else v)
               for n, v in values.items()}
        total = seq if prompt else int(klen)
        one.update(kt=np.array([total], np.int32), t=np.array([total], np.int32))
        per_entry.append(_sa_ort(_sa_model(one, dtype, **attrs), one))
    return [np.concatenate(parts) for parts in zip(*per_entry)]


def _sa_check(values, valid_rows=None, **attrs):
    dtype = next(iter(values.values())).dtype
    attrs = dict(dict(num_heads=4, kv_num_heads=2, sparse_block_size=4), **attrs)
    model = _sa_model(values, dtype, **attrs)
    got = _og(model, values)
    want = _sa_oracle(values, dtype, attrs)
    if valid_rows is not None:  # a padded prompt's rows past the entry: zeros here
        keep = (np.arange(got[0].shape[1])[None, :] < np.array(valid_rows)[:, None])[..., None]
        assert not np.where(keep, 0, got[0]).any()
        want[0] = np.where(keep, want[0], 0)
    _compare(got, want)
    _infer_matches(SA, [(n, values.get(n)) for n in _SA_NAMES], got, attrs)
    return got


@pytest.mark.parametrize("layouts", ["dense", "two", "four"])
@pytest.mark.parametrize("rotary,interleaved,hs", [(0, 0, 16), (8, 0, 16), (8, 1, 16),
                                                   (8, 0, 32), (8, 1, 32)])
def test_sparse_attention_prompt(rng, layouts, rotary, interleaved, hs):
    # head_size 32 with an 8-column cos_cache rotates half of each head
    values = _sa_values(rng, 13, [13, 13], 13, layouts, rotary=rotary, hs=hs)
    _sa_check(values, do_rotary=int(rotary > 0), rotary_interleaved=interleaved)


@pytest.mark.parametrize("layouts", ["dense", "two"])
@pytest.mark.parametrize("seq", [1, 3])
@pytest.mark.parametrize("rotary", [0, 8])
def test_sparse_attention_decode(rng, layouts, seq, rotary):
    # entry 0 has 6 - seq cached tokens, entry 1 has 14 - seq
    values = _sa_values(rng, seq, [6, 14], 14, layouts, rotary=rotary)
    _sa_check(values, do_rotary=int(rotary > 0), scale=0.2)


def test_sparse_attention_padded_prompt(rng):
    _sa_check(_sa_values(rng, 9, [9, 5], 9, "two"), valid_rows=[9, 5])


def test_sparse_attention_onnxruntime_batch_quirk(rng):
    """The whole batch in one onnxruntime call: right for the entry of the full length,
    not for the shorter one (see _sa_oracle); onegraph matches the per-entry oracle."""
    values = _sa_values(rng, 1, [14, 6], 14, "dense")
    attrs = dict(num_heads=4, kv_num_heads=2, sparse_block_size=4)
    whole = _sa_ort(_sa_model(values, np.float32, **attrs), values)
    got = _sa_check(values)
    np.testing.assert_allclose(got[0][0], whole[0][0], **TOL)
    assert not np.allclose(got[0][1], whole[0][1], **TOL)


@pytest.mark.parametrize("rotary", [0, 8])
def test_sparse_attention_packed_and_float16(rng, rotary):
    _sa_check(_sa_values(rng, 5, [5, 5], 5, "two", packed=True, rotary=rotary),
              do_rotary=int(rotary > 0))
    values = _sa_values(rng, 1, [7, 12], 12, "four", rotary=rotary, dtype=np.float16)
    _sa_check(values, do_rotary=int(rotary > 0))


def test_sparse_attention_errors(rng):
    values = _sa_values(rng, 4, [4, 4], 4, "two")

    def call(attrs=None, **changes):
        """The kernel on `values` with some inputs changed."""
        v = dict(values, **changes)
        a = dict(dict(num_heads=4, kv_num_heads=2, sparse_block_size=4), **(attrs or {}))
        return _kernel(SA, [v.get(n) for n in _SA_NAMES], **a)

    with pytest.raises(OpAttributeError, match=f"{SA}: num_heads 4 must be a positive "
                       "multiple of kv_num_heads 3"):
        call(dict(kv_num_heads=3))
    with pytest.raises(ShapeError, match="block_row_indices must be non-decreasing"):
        call(rows=values["rows"][:, ::-1].copy())
    with pytest.raises(ShapeError, match="block_col_indices holds block columns outside"):
        call(cols=values["cols"] + 4)
    with pytest.raises(ShapeError, match="num_heads 4 a multiple of num_layout"):
        call(rows=np.zeros((3, 5), np.int32), cols=np.zeros((3, 1), np.int32))
    with pytest.raises(ShapeError, match="total_sequence_length 17 must lie in \\[1, 16\\]"):
        call(t=np.array([17], np.int32))
    with pytest.raises(ShapeError, match="key_total_sequence_lengths \\[3, 9\\] must lie "
                       "in \\[4, 9\\]"):
        call(kt=np.array([3, 9], np.int32), t=np.array([9], np.int32))
    with pytest.raises(ShapeError, match="key_total_sequence_lengths \\[5, 4\\] must lie "
                       "in \\[0, 4\\]"):
        call(kt=np.array([5, 4], np.int32))
    with pytest.raises(ShapeError, match="key_total_sequence_lengths must be \\(2,\\)"):
        call(kt=np.array([4], np.int32))
    with pytest.raises(ShapeError, match="do_rotary=1 needs cos_cache and sin_cache"):
        call(dict(do_rotary=1))
    with pytest.raises(ShapeError, match="past_key \\[2, 2, 16, 8\\]"):
        call(pk=values["pk"][..., :8], pv=values["pv"][..., :8])
    with pytest.raises(ShapeError, match="positions 0..3 out of the caches' 2 rows"):
        call(dict(do_rotary=1), cos=np.ones((2, 8), np.float32),
             sin=np.ones((2, 8), np.float32))

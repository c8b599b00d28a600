"""onnxruntime's transformer contrib ops (`ops/ms_transformer.py`) against onnxruntime.

The oracle is onnxruntime's CPUExecutionProvider. Single-node models are built with
onnx.helper over seeded random inputs (optional inputs present and absent, masks,
unidirectional), imported with `from_onnx` and run in a Session; every output the node
declares is compared. Bounds: rtol = atol = 1e-5 for float32 (TOL), float16 one
float16 step of the result (F16_TOL).

Then whole models: the repo's PyTorch-exported corpus models optimized by
onnxruntime's transformers optimizer (saved under tests/ops/data/ms_transformer/ by
`tools/export_ort_optimized_models.py`, with the fused op lists in fused_ops.json;
since none of them fuses Attention, EmbedLayerNormalization or FastGelu, also a
2-layer BERT built there in Hugging Face's export patterns, which does) run in onegraph
against onnxruntime and against the original model's outputs, and round-trip through
`to_onnx` with their com.microsoft nodes written back as they came.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import (ConversionError, OpAttributeError, ShapeError,  # noqa: E402
                             UnsupportedOpError)
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from .single_node import node_inputs, ort_session  # noqa: E402

MS = "com.microsoft"
TOL = dict(rtol=1e-5, atol=1e-5)
F16_TOL = dict(rtol=1e-3, atol=1e-3)
_ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
              np.dtype(np.float64): TensorProto.DOUBLE, np.dtype(np.int32): TensorProto.INT32,
              np.dtype(np.int64): TensorProto.INT64}
DATA = Path(__file__).parent / "data" / "ms_transformer"
CORPUS = Path(__file__).parents[1] / "convert" / "data" / "pytorch_exported"


# --------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------


def _model(op, inputs, out_types, attrs=None, domain=MS):
    """A single-node model: `inputs` is a list of (name, array or None) in the op's
    input order (None = omitted, written as ""), every array a graph input; `out_types`
    the numpy dtypes of the outputs the node declares."""
    names, graph_inputs, _ = node_inputs(inputs)
    while names and names[-1] == "":
        names.pop()
    outs = [f"out{i}" for i in range(len(out_types))]
    node = helper.make_node(op, names, outs, domain=domain, **(attrs or {}))
    graph = helper.make_graph([node], op, graph_inputs, [
        helper.make_tensor_value_info(o, _ONNX_TYPE[np.dtype(t)], None)
        for o, t in zip(outs, out_types)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _session(model):
    return ort_session(model, optimize=False)


def _ort(model, feeds):
    return _session(model).run(None, feeds)


def _og(model, feeds):
    names = [o.name for o in model.graph.output]
    return onegraph.Session(from_onnx(model)).run(names, feeds)


def _check(op, inputs, out_types, attrs=None, domain=MS, tol=None, skip_outputs=()):
    """onegraph == onnxruntime on every declared output (dtype, shape, values), and the
    op's inference gives each output's dtype and shape."""
    model = _model(op, inputs, out_types, attrs, domain)
    feeds = {k: np.asarray(v) for k, v in inputs if v is not None}
    want = _ort(model, feeds)
    got = _og(model, feeds)
    for i, (g, w) in enumerate(zip(got, want)):
        if i in skip_outputs:
            continue
        assert g.dtype == w.dtype and g.shape == w.shape, (op, i, g.dtype, g.shape,
                                                           w.dtype, w.shape)
        t = tol or (F16_TOL if g.dtype == np.float16 else TOL)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **t,
                                   err_msg=f"{op} output {i}")
    definition = REGISTRY.get(op, domain)
    infos = [None if v is None else TensorInfo(np.asarray(v).dtype, np.shape(v))
             for _, v in inputs]
    inferred = definition.infer(definition.resolve_attrs(attrs or {}), infos)
    for i, w in enumerate(want):
        if i in skip_outputs:
            continue
        assert inferred[i].dtype == w.dtype, (op, i, inferred[i].dtype, w.dtype)
        if inferred[i].shape is not None:
            assert tuple(inferred[i].shape) == w.shape, (op, i, inferred[i].shape, w.shape)
    return got


def _rand(rng, *shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _raises(error, match, op, inputs, out_types, attrs=None, domain=MS):
    model = _model(op, inputs, out_types, attrs, domain)
    feeds = {k: np.asarray(v) for k, v in inputs if v is not None}
    with pytest.raises(error, match=match):
        _og(model, feeds)


RNG_SEED = 20261203
F32, F16, F64, I32 = np.float32, np.float16, np.float64, np.int32


@pytest.fixture
def rng():
    return np.random.default_rng(RNG_SEED)


def _cast(dtype, *arrays):
    return [None if a is None else a.astype(dtype) for a in arrays]


# --------------------------------------------------------------------------------------
# SkipLayerNormalization, SkipSimplifiedLayerNormalization, SimplifiedLayerNormalization
# --------------------------------------------------------------------------------------

_SKIP_SHAPES = [((2, 5, 8), (2, 5, 8)), ((1, 3, 16), (1, 3, 16)), ((4, 8), (4, 8)),
                ((3, 4, 8), (1, 4, 8)), ((3, 4, 8), (4, 8))]


@pytest.mark.parametrize("shapes", _SKIP_SHAPES)
@pytest.mark.parametrize("beta,bias", [(False, False), (True, False), (False, True),
                                       (True, True)])
@pytest.mark.parametrize("n_out", [1, 4])
def test_skip_layernorm(rng, shapes, beta, bias, n_out):
    (xs, ss), h = shapes, shapes[0][-1]
    inputs = [("input", _rand(rng, *xs, scale=2)), ("skip", _rand(rng, *ss)),
              ("gamma", _rand(rng, h)), ("beta", _rand(rng, h) if beta else None),
              ("bias", _rand(rng, h) if bias else None)]
    _check("SkipLayerNormalization", inputs, [F32] * n_out, {"epsilon": 1e-5})


@pytest.mark.parametrize("shapes", _SKIP_SHAPES[:3])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("n_out", [1, 4])
def test_skip_simplified_layernorm(rng, shapes, bias, n_out):
    (xs, ss), h = shapes, shapes[0][-1]
    inputs = [("input", _rand(rng, *xs, scale=2)), ("skip", _rand(rng, *ss)),
              ("gamma", _rand(rng, h)), ("bias", _rand(rng, h) if bias else None)]
    _check("SkipSimplifiedLayerNormalization", inputs, [F32] * n_out)


@pytest.mark.parametrize("op,n", [("SkipLayerNormalization", 5),
                                  ("SkipSimplifiedLayerNormalization", 4)])
def test_skip_norms_float16(rng, op, n):
    """float16: the sum, statistics and norm in float32 (as onnxruntime), one rounding."""
    params = [_rand(rng, 8) for _ in range(n - 2)]
    inputs = list(zip(("input", "skip", "gamma", "beta", "bias")[:n] if n == 5 else
                      ("input", "skip", "gamma", "bias"),
                      _cast(F16, _rand(rng, 2, 5, 8), _rand(rng, 2, 5, 8), *params)))
    _check(op, inputs, [F16, F32, F32, F16])


@pytest.mark.parametrize("xs,axis", [((2, 5, 8), -1), ((2, 5, 8), 1), ((6, 16), -1),
                                     ((2, 3, 4, 5), 2)])
@pytest.mark.parametrize("n_out", [1, 2])
def test_simplified_layernorm(rng, xs, axis, n_out):
    x = _rand(rng, *xs, scale=3)
    scale = _rand(rng, *xs[axis:])
    _check("SimplifiedLayerNormalization", [("X", x), ("scale", scale)], [F32] * n_out,
           {"axis": axis, "epsilon": 1e-6}, domain="")


@pytest.mark.parametrize("xs,axis", [((0, 8, 32), -1), ((2, 0, 8), -1), ((0, 8), 1)])
def test_rms_norms_of_no_rows(rng, xs, axis):
    """An empty batch gives empty outputs, as onnxruntime (onnxscript's fusions write
    these ops into dynamic-batch models: reshape could not work out -1 for no rows)."""
    _check("SimplifiedLayerNormalization", [("X", _rand(rng, *xs)),
                                            ("scale", _rand(rng, *xs[axis:]))],
           [F32, F32], {"axis": axis, "epsilon": 1e-6}, domain="")
    if len(xs) == 3:
        _check("SkipSimplifiedLayerNormalization",
               [("input", _rand(rng, *xs)), ("skip", _rand(rng, *xs)),
                ("gamma", _rand(rng, xs[-1]))], [F32] * 4)


def test_simplified_layernorm_float16(rng):
    x, scale = _cast(F16, _rand(rng, 2, 5, 8), _rand(rng, 8))
    _check("SimplifiedLayerNormalization", [("X", x), ("scale", scale)], [F16, F32],
           domain="")


# --------------------------------------------------------------------------------------
# FastGelu, BiasGelu, Gelu, QuickGelu, BiasAdd
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F32, F16, F64])
@pytest.mark.parametrize("shape", [(2, 5, 8), (7, 32), (3,)])
@pytest.mark.parametrize("bias", [False, True])
def test_fast_gelu(rng, dtype, shape, bias):
    x, b = _cast(dtype, _rand(rng, *shape, scale=3), _rand(rng, shape[-1]) if bias else None)
    _check("FastGelu", [("X", x), ("bias", b)], [dtype])


@pytest.mark.parametrize("dtype", [F32, F16, F64])
@pytest.mark.parametrize("shape", [(2, 5, 8), (7, 32)])
def test_bias_gelu_and_gelu(rng, dtype, shape):
    """onnxruntime's CPU runs neither in float64 (no BiasGelu kernel, and Gelu expands
    to Erf, which has none): float64 is checked against the formula with math.erf."""
    a, b = _cast(dtype, _rand(rng, *shape, scale=3), _rand(rng, shape[-1]))
    if dtype != F64:
        _check("BiasGelu", [("A", a), ("B", b)], [dtype])
        _check("Gelu", [("X", a)], [dtype])
        return
    erf = np.vectorize(math.erf)
    for op, inputs, v in (("BiasGelu", [("A", a), ("B", b)], a + b), ("Gelu", [("X", a)], a)):
        got = _og(_model(op, inputs, [F64]), dict(inputs))[0]
        assert got.dtype == F64
        np.testing.assert_allclose(got, 0.5 * v * (1 + erf(v / math.sqrt(2))), rtol=1e-12,
                                   atol=1e-14)


@pytest.mark.parametrize("dtype", [F32, F16, F64])
@pytest.mark.parametrize("alpha", [None, 1.0, -0.5])
def test_quick_gelu(rng, dtype, alpha):
    x = _rand(rng, 3, 4, 16, scale=4).astype(dtype)
    _check("QuickGelu", [("X", x)], [dtype], None if alpha is None else {"alpha": alpha})


@pytest.mark.parametrize("op", ["FastGelu", "QuickGelu", "Gelu"])
@pytest.mark.parametrize("dtype", [F32, F16])
def test_activations_of_a_scalar(op, dtype):
    """A 0-d input (a fuzz found FastGelu and QuickGelu raising numpy's TypeError)
    gives onnxruntime's value for the same number as a 1-D input (onnxruntime refuses
    a 0-d input to float32 FastGelu)."""
    x = np.asarray(1.25, dtype)
    want = _ort(_model(op, [("X", x.reshape(1))], [dtype]), {"X": x.reshape(1)})[0]
    got = _og(_model(op, [("X", x)], [dtype]), {"X": x})[0]
    assert got.shape == () and got.dtype == dtype
    np.testing.assert_array_equal(got.reshape(1), want)


def test_bias_add(rng):
    """onnxruntime implements BiasAdd only on CUDA: checked against its formula."""
    x, b, s = _rand(rng, 2, 5, 320), _rand(rng, 320), _rand(rng, 2, 5, 320)
    model = _model("BiasAdd", [("X", x), ("bias", b), ("skip", s)], [F32])
    with pytest.raises(Exception, match="BiasAdd"):
        _ort(model, {"X": x, "bias": b, "skip": s})
    got = _og(model, {"X": x, "bias": b, "skip": s})[0]
    np.testing.assert_array_equal(got, x + b + s)
    inferred = REGISTRY.get("BiasAdd", MS).infer({}, [TensorInfo(np.dtype(F32), x.shape),
                                                      TensorInfo(np.dtype(F32), b.shape),
                                                      TensorInfo(np.dtype(F32), s.shape)])
    assert inferred[0] == TensorInfo(np.dtype(F32), x.shape)


# --------------------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------------------

B, S, D, N = 2, 5, 8, 2


def _masks(kind):
    if kind is None:
        return None
    if kind == "lengths":
        return np.array([3, 5], I32)
    m = np.ones((B, S), I32)
    m[0, 3:] = 0
    if kind == "padding":
        m[1, 1:] = 0
        return m
    if kind == "row_all_masked":
        m[1, :] = 0
        return m
    if kind == "3d":
        return (np.random.default_rng(3).random((B, S, S)) > 0.3).astype(I32)
    raise AssertionError(kind)


@pytest.mark.parametrize("mask", [None, "lengths", "padding", "row_all_masked", "3d"])
@pytest.mark.parametrize("unidirectional", [0, 1])
@pytest.mark.parametrize("bias", [False, True])
def test_attention(rng, mask, unidirectional, bias):
    if mask == "3d" and unidirectional:
        pytest.skip("refused (test_attention_refusals)")
    x, w = _rand(rng, B, S, D), _rand(rng, D, 3 * D, scale=0.5)
    inputs = [("input", x), ("weights", w), ("bias", _rand(rng, 3 * D) if bias else None),
              ("mask_index", _masks(mask))]
    _check("Attention", inputs, [F32, F32], {"num_heads": N, "unidirectional": unidirectional})


@pytest.mark.parametrize("unidirectional", [0, 1, 2])
def test_attention_mask_values_and_large_causal_scores(rng, unidirectional):
    """onnxruntime allows a key where its mask value is > 0 (a -1 masks, a 2 allows),
    is causal only for unidirectional == 1 (2 is bidirectional), and gives a future key
    the lowest float, not mask_filter_value: with scores near 1e4 a -10000 fill would let
    future keys through, and a query whose past keys are all padding attends to them,
    not to the future."""
    m = np.array([[0, 1, 2, -1, 1], [1, -3, 1, 1, 0]], I32)
    x, w = _rand(rng, B, S, D, scale=40.0), _rand(rng, D, 3 * D, scale=2.0)
    inputs = [("input", x), ("weights", w), ("bias", _rand(rng, 3 * D)), ("mask_index", m)]
    # outputs up to ~500, where float32's spacing is 3e-5: the two runtimes' GEMMs sum in
    # other orders (by machine and BLAS kernel), so 1e-5 absolute is below one ulp
    _check("Attention", inputs, [F32, F32], {"num_heads": N, "unidirectional": unidirectional},
           tol={"rtol": 1e-5, "atol": 1e-4})


@pytest.mark.parametrize("unidirectional", [0, 1, 2])
def test_multi_head_attention_mask_values_and_large_causal_scores(rng, unidirectional):
    """The same onnxruntime rules for MultiHeadAttention's key padding mask."""
    scale = 30.0 if unidirectional == 1 else 1.0  # a -1 key must weigh in the softmax
    inputs = [(name, _rand(rng, B, S, D, scale=scale)) for name in ("query", "key", "value")]
    inputs += [("bias", None), ("key_padding_mask", np.array([[0, 0, 1, 2, 1],
                                                              [1, 1, -1, 1, 0]], I32))]
    _check("MultiHeadAttention", inputs, [F32], {"num_heads": N,
                                                 "unidirectional": unidirectional})


@pytest.mark.parametrize("attrs", [{"scale": 0.3}, {"mask_filter_value": -1e3},
                                   {"qkv_hidden_sizes": [8, 8, 4]}, {"num_heads": 4}])
def test_attention_attributes(rng, attrs):
    attrs = {"num_heads": N, **attrs}
    width = sum(attrs.get("qkv_hidden_sizes", [D] * 3))
    inputs = [("input", _rand(rng, B, S, D)), ("weights", _rand(rng, D, width, scale=0.5)),
              ("bias", _rand(rng, width)), ("mask_index", _masks("row_all_masked"))]
    # a fully masked row's scores sit near mask_filter_value (-1e3 here), where float32's
    # spacing is 6e-5: its softmax weights carry relative errors of that size
    tol = {"rtol": 1e-4, "atol": 1e-4} if "mask_filter_value" in attrs else None
    _check("Attention", inputs, [F32] if "qkv_hidden_sizes" in attrs else [F32, F32], attrs,
           tol=tol)


@pytest.mark.parametrize("shape", [(1, N, S, S), (B, 1, S, S), (B, N, S, S)])
def test_attention_bias_input(rng, shape):
    inputs = [("input", _rand(rng, B, S, D)), ("weights", _rand(rng, D, 3 * D)),
              ("bias", _rand(rng, 3 * D)), ("mask_index", _masks("padding")),
              ("past", None), ("attention_bias", _rand(rng, *shape))]
    _check("Attention", inputs, [F32], {"num_heads": N, "unidirectional": 1})


def test_attention_float16(rng):
    x, w, b = _cast(F16, _rand(rng, B, S, D), _rand(rng, D, 3 * D, scale=0.5),
                    _rand(rng, 3 * D))
    _check("Attention", [("input", x), ("weights", w), ("bias", b),
                         ("mask_index", _masks("padding"))], [F16], {"num_heads": N})


def test_attention_refusals(rng):
    x, w = _rand(rng, B, S, D), _rand(rng, D, 3 * D)
    base = [("input", x), ("weights", w)]
    _raises(UnsupportedOpError, "Attention: the past input", "Attention",
            base + [("bias", None), ("mask_index", None), ("past", _rand(rng, 2, B, N, 3, 4))],
            [F32, F32], {"num_heads": N, "unidirectional": 1})
    _raises(UnsupportedOpError, "Attention: do_rotary", "Attention", base, [F32],
            {"num_heads": N, "do_rotary": 1})
    _raises(UnsupportedOpError, "Attention: a 3-D mask_index with unidirectional", "Attention",
            base + [("bias", None), ("mask_index", _masks("3d"))], [F32],
            {"num_heads": N, "unidirectional": 1})
    _raises(UnsupportedOpError, r"Attention: mask_index of shape \[4\]", "Attention",
            base + [("bias", None), ("mask_index", np.array([5, 5, 0, 0], I32))], [F32],
            {"num_heads": N})
    _raises(OpAttributeError, "Attention: qkv_hidden_sizes", "Attention", base, [F32],
            {"num_heads": N, "qkv_hidden_sizes": [8, 4, 12]})
    _raises((OpAttributeError, ConversionError), "missing required attribute 'num_heads'",
            "Attention", base, [F32])
    _raises(ShapeError, "Attention: input must be", "Attention",
            [("input", x), ("weights", _rand(rng, D + 1, 3 * D))], [F32], {"num_heads": N})
    _raises(ShapeError, "Attention: bias must be 1-D", "Attention",
            base + [("bias", _rand(rng, 3 * D + 1))], [F32], {"num_heads": N})


# --------------------------------------------------------------------------------------
# MultiHeadAttention
# --------------------------------------------------------------------------------------

L = 6  # key/value sequence length of the cross-attention cases


def _mha_inputs(rng, kind):
    q = _rand(rng, B, S, D)
    if kind == "self":
        return [("query", q), ("key", _rand(rng, B, S, D)), ("value", _rand(rng, B, S, D))]
    return [("query", q), ("key", _rand(rng, B, L, D)), ("value", _rand(rng, B, L, 12))]


@pytest.mark.parametrize("kind,unidirectional", [("cross", 0), ("self", 0), ("self", 1)])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("mask", [None, "lengths", "padding", "all_masked"])
@pytest.mark.parametrize("n_out", [1, 3])
def test_multi_head_attention(rng, kind, unidirectional, bias, mask, n_out):
    inputs = _mha_inputs(rng, kind)
    t, dv = inputs[1][1].shape[1], inputs[2][1].shape[2]
    inputs.append(("bias", _rand(rng, 2 * D + dv) if bias else None))
    if mask == "lengths":
        m = np.array([2, t], I32)
    elif mask is not None:
        m = np.ones((B, t), I32)
        m[0, 3:] = 0
        if mask == "all_masked":
            m[1] = 0
    inputs.append(("key_padding_mask", None if mask is None else m))
    _check("MultiHeadAttention", inputs, [F32] * n_out,
           {"num_heads": N, "unidirectional": unidirectional})


@pytest.mark.parametrize("shape", [(1, N, S, L), (B, 1, S, L), (B, N, S, L)])
def test_multi_head_attention_bias_input(rng, shape):
    inputs = _mha_inputs(rng, "cross") + [("bias", None), ("key_padding_mask", None),
                                           ("attention_bias", _rand(rng, *shape))]
    _check("MultiHeadAttention", inputs, [F32], {"num_heads": N, "scale": 0.7})


@pytest.mark.parametrize("unidirectional", [0, 1])
def test_multi_head_attention_past(rng, unidirectional):
    inputs = _mha_inputs(rng, "self") + [("bias", _rand(rng, 3 * D)),
                                         ("key_padding_mask", None), ("attention_bias", None),
                                         ("past_key", _rand(rng, B, N, 3, D // N)),
                                         ("past_value", _rand(rng, B, N, 3, D // N))]
    _check("MultiHeadAttention", inputs, [F32, F32, F32],
           {"num_heads": N, "unidirectional": unidirectional})


def test_multi_head_attention_4d_key_value(rng):
    inputs = [("query", _rand(rng, B, S, D)), ("key", _rand(rng, B, N, L, D // N)),
              ("value", _rand(rng, B, N, L, D // N))]
    _check("MultiHeadAttention", inputs, [F32], {"num_heads": N})


def test_multi_head_attention_packed(rng):
    """onnxruntime's CPU kernel does not run packed KV / QKV: checked against it on the
    same attention written with unpacked tensors."""
    h = D // N
    q, k, v = _rand(rng, B, S, D), _rand(rng, B, L, N, h), _rand(rng, B, L, N, h)
    attrs = {"num_heads": N}
    want = _ort(_model("MultiHeadAttention", [("q", q), ("k", k.reshape(B, L, D)),
                                              ("v", v.reshape(B, L, D))], [F32], attrs),
                {"q": q, "k": k.reshape(B, L, D), "v": v.reshape(B, L, D)})[0]
    kv = np.stack([k, v], axis=3)
    got = _og(_model("MultiHeadAttention", [("q", q), ("kv", kv)], [F32], attrs),
              {"q": q, "kv": kv})[0]
    np.testing.assert_allclose(got, want, **TOL)
    ks, vs = _rand(rng, B, S, N, h), _rand(rng, B, S, N, h)
    qs = q.reshape(B, S, N, h)
    want = _ort(_model("MultiHeadAttention", [("q", q), ("k", ks.reshape(B, S, D)),
                                              ("v", vs.reshape(B, S, D))], [F32],
                       {"num_heads": N, "unidirectional": 1}),
                {"q": q, "k": ks.reshape(B, S, D), "v": vs.reshape(B, S, D)})[0]
    qkv = np.stack([qs, ks, vs], axis=3)
    got = _og(_model("MultiHeadAttention", [("qkv", qkv)], [F32],
                     {"num_heads": N, "unidirectional": 1}), {"qkv": qkv})[0]
    np.testing.assert_allclose(got, want, **TOL)
    inferred = REGISTRY.get("MultiHeadAttention", MS).infer(
        {"num_heads": N}, [TensorInfo(np.dtype(F32), qkv.shape)])
    assert inferred[0].shape == (B, S, D)


def test_multi_head_attention_float16(rng):
    inputs = [(n, v.astype(F16)) for n, v in _mha_inputs(rng, "cross")]
    _check("MultiHeadAttention", inputs, [F16], {"num_heads": N})


def test_multi_head_attention_refusals(rng):
    cross = _mha_inputs(rng, "cross")
    _raises(UnsupportedOpError, "MultiHeadAttention: unidirectional with a key sequence",
            "MultiHeadAttention", cross, [F32], {"num_heads": N, "unidirectional": 1})
    _raises(UnsupportedOpError, "MultiHeadAttention: the past_sequence_length input",
            "MultiHeadAttention", cross + [("bias", None), ("key_padding_mask", None),
                                           ("attention_bias", None), ("past_key", None),
                                           ("past_value", None),
                                           ("past_sequence_length", np.array([0], I32))],
            [F32], {"num_heads": N})
    _raises(UnsupportedOpError, "MultiHeadAttention: the qk output", "MultiHeadAttention",
            cross, [F32] * 4, {"num_heads": N})
    _raises(UnsupportedOpError, r"MultiHeadAttention: key_padding_mask of shape \[2, 5, 6\]",
            "MultiHeadAttention", cross + [("bias", None),
                                           ("key_padding_mask", np.ones((B, S, L), I32))],
            [F32], {"num_heads": N})
    _raises(ShapeError, "MultiHeadAttention: key_padding_mask must be int32",
            "MultiHeadAttention", cross + [("bias", None),
                                           ("key_padding_mask", np.ones((B, L), np.int64))],
            [F32], {"num_heads": N})
    _raises(ShapeError, "not a multiple of num_heads", "MultiHeadAttention", cross, [F32],
            {"num_heads": 3})


# --------------------------------------------------------------------------------------
# EmbedLayerNormalization
# --------------------------------------------------------------------------------------

VOCAB, POSITIONS = 30, 16


def _embed_inputs(rng, dtype=F32, segments=True, mask=True, position_ids=None):
    ids = rng.integers(0, VOCAB, (B, S)).astype(I32)
    seg = rng.integers(0, 2, (B, S)).astype(I32)
    word, pos, segment, gamma, beta = _cast(dtype, _rand(rng, VOCAB, D),
                                            _rand(rng, POSITIONS, D), _rand(rng, 2, D),
                                            _rand(rng, D), _rand(rng, D))
    p = None if position_ids is None else rng.integers(0, POSITIONS,
                                                       position_ids).astype(I32)
    return [("input_ids", ids), ("segment_ids", seg if segments else None),
            ("word_embedding", word), ("position_embedding", pos),
            ("segment_embedding", segment if segments else None), ("gamma", gamma),
            ("beta", beta), ("mask", _masks("padding") if mask else None),
            ("position_ids", p)]


@pytest.mark.parametrize("segments", [False, True])
@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("position_ids", [None, (B, S), (1, S)])
def test_embed_layernorm(rng, segments, mask, position_ids):
    inputs = _embed_inputs(rng, F32, segments, mask, position_ids)
    _check("EmbedLayerNormalization", inputs, [F32, I32, F32])


def test_embed_layernorm_mask_index_counts_the_ones(rng):
    """onnxruntime's mask_index counts the mask's ones: a 2 or a -1 does not count."""
    inputs = _embed_inputs(rng)
    inputs[7] = ("mask", np.array([[1, 2, 1, 0, 1], [1, -1, 0, 3, 1]], I32))
    _check("EmbedLayerNormalization", inputs, [F32, I32, F32])


def test_embed_layernorm_float16_and_epsilon(rng):
    _check("EmbedLayerNormalization", _embed_inputs(rng, F16), [F16, I32, F16])
    _check("EmbedLayerNormalization", _embed_inputs(rng), [F32, I32], {"epsilon": 1e-5})


def test_embed_layernorm_errors(rng):
    inputs = _embed_inputs(rng)
    inputs[0] = ("input_ids", np.full((B, S), VOCAB, I32))
    _raises(ShapeError, r"EmbedLayerNormalization: input_ids holds ids outside \[0, 30\)",
            "EmbedLayerNormalization", inputs, [F32, I32])
    inputs = _embed_inputs(rng, segments=False)
    inputs[1] = ("segment_ids", np.zeros((B, S), I32))
    _raises(ShapeError, "segment_ids and segment_embedding must be given together",
            "EmbedLayerNormalization", inputs, [F32, I32])
    infer = REGISTRY.get("EmbedLayerNormalization", MS).infer
    with pytest.raises(ShapeError, match="EmbedLayerNormalization: input_ids must be int32"):
        infer({}, [TensorInfo(np.dtype(np.int64), (B, S)), None,
                   TensorInfo(np.dtype(F32), (VOCAB, D))])


# --------------------------------------------------------------------------------------
# Errors of the norms and activations
# --------------------------------------------------------------------------------------


def test_norm_and_activation_errors(rng):
    x = _rand(rng, 2, 5, 8)
    _raises(ShapeError, r"SkipLayerNormalization: skip \[2, 5, 7\] must have input's shape",
            "SkipLayerNormalization", [("input", x), ("skip", _rand(rng, 2, 5, 7)),
                                       ("gamma", _rand(rng, 8))], [F32])
    _raises(ShapeError, "SkipLayerNormalization: gamma must be 1-D of the hidden size 8",
            "SkipLayerNormalization", [("input", x), ("skip", x), ("gamma", _rand(rng, 7))],
            [F32])
    _raises(ShapeError, "SkipSimplifiedLayerNormalization: input must be 2-D or 3-D",
            "SkipSimplifiedLayerNormalization",
            [("input", x[None]), ("skip", x[None]), ("gamma", _rand(rng, 8))], [F32])
    _raises(OpAttributeError, "SimplifiedLayerNormalization: axis 3 out of range",
            "SimplifiedLayerNormalization", [("X", x), ("scale", _rand(rng, 8))], [F32],
            {"axis": 3}, domain="")
    _raises(ShapeError, "FastGelu: bias must be 1-D of the last dim", "FastGelu",
            [("X", x), ("bias", _rand(rng, 5))], [F32])
    _raises(ShapeError, "BiasGelu: B is float64, but the input is float32", "BiasGelu",
            [("A", x), ("B", _rand(rng, 8, dtype=F64))], [F32])
    infer = REGISTRY.get("SkipLayerNormalization", MS).infer
    with pytest.raises(ShapeError, match="SkipLayerNormalization: skip is float16"):
        infer({}, [TensorInfo(np.dtype(F32), (2, 5, 8)), TensorInfo(np.dtype(F16), (2, 5, 8)),
                   TensorInfo(np.dtype(F32), (8,))])


# --------------------------------------------------------------------------------------
# Whole models: the corpus optimized by onnxruntime's transformers optimizer
# --------------------------------------------------------------------------------------

_FUSED = json.loads((DATA / "fused_ops.json").read_text()) if DATA.exists() else {}
_INDEX = json.loads((CORPUS / "index.json").read_text()) if CORPUS.exists() else {}
# Against the original (unoptimized) model the bound is TOL, except gpt__dynamo_op23_dyn:
# the optimizer fuses its Gelu(approximate="tanh") + bias into BiasGelu, which is the
# exact (erf) Gelu, so the optimized model itself differs from the original (measured:
# onnxruntime's optimized vs original logits up to 7.5e-4 apart, |logits| <= 20.4;
# onegraph is within 2.9e-6 of onnxruntime on the optimized model).
_ORIGINAL_TOL = {"gpt__dynamo_op23_dyn": dict(rtol=1e-5, atol=2e-3)}


# bert_synthetic (built by tools/export_ort_optimized_models.py; no exported file of
# its own): (batch, seq) of the input sets, each with trailing padding in its first row
_SYNTHETIC_RUNS = ((2, 7), (3, 4), (1, 1))


def _corpus_cases():
    cases = []
    for name in sorted(_FUSED):
        if name == "bert_synthetic":
            cases += [pytest.param(name, run, id=f"{name}-{run[0]}x{run[1]}")
                      for run in _SYNTHETIC_RUNS]
            continue
        entry = _INDEX[f"{name}.onnx"]
        for which, files in (("in", entry["input_files"]),
                             ("alt", entry.get("alt_input_files"))):
            if files:
                cases.append(pytest.param(name, files, id=f"{name}-{which}"))
    return cases


def _corpus_feeds(name, files):
    if name == "bert_synthetic":
        b, s = files
        rng = np.random.default_rng(b * 100 + s)
        mask = np.ones((b, s), np.int64)
        mask[0, max(1, s - 2):] = 0
        return {"input_ids": rng.integers(0, 50, (b, s)),
                "token_type_ids": rng.integers(0, 2, (b, s)), "attention_mask": mask}
    entry = _INDEX[f"{name}.onnx"]
    return {n: np.load(CORPUS / f) for n, f in zip(entry["inputs"], files)}


def _corpus_cases_of(name):
    return [case.values[1] for case in _corpus_cases() if case.values[0] == name]


def _original(name):
    return DATA / "bert_synthetic.onnx" if name == "bert_synthetic" else \
        CORPUS / f"{name}.onnx"


def _contrib_nodes(graph, with_simplified=True):
    """The nodes the optimizer wrote (com.microsoft ops and, `with_simplified`,
    onnxruntime's default-domain SimplifiedLayerNormalization) as comparable tuples."""
    return [(n.op_type, n.domain, list(n.input), list(n.output),
             sorted((a.name, repr(helper.get_attribute_value(a))) for a in n.attribute))
            for n in graph.node
            if n.domain == MS or with_simplified and n.op_type == "SimplifiedLayerNormalization"]


def test_fused_models_hold_the_listed_ops():
    assert set(_FUSED) == {"bert__ts_op17", "gpt__dynamo_op23_dyn", "gpt_sdpa__ts_op17_dyn",
                           "bert_synthetic"}
    for name, entry in _FUSED.items():
        model = onnx.load(str(DATA / f"{name}.opt.onnx"))
        counts = {}
        for n in model.graph.node:
            key = f"{n.domain or 'ai.onnx'}::{n.op_type}"
            counts[key] = counts.get(key, 0) + 1
        assert counts == entry["ops"], name
        for op, count in entry["fused"].items():
            key = f"com.microsoft::{op}" if f"com.microsoft::{op}" in counts else f"ai.onnx::{op}"
            assert counts.get(key) == count, (name, op)


@pytest.mark.parametrize("name,files", _corpus_cases())
def test_fused_model_matches_onnxruntime(name, files):
    feeds = _corpus_feeds(name, files)
    model = onnx.load(str(DATA / f"{name}.opt.onnx"))
    want = _ort(model, feeds)
    original = ort.InferenceSession(str(_original(name)),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    got = _og(model, feeds)
    assert len(got) == len(want) == len(original)
    for g, w, o in zip(got, want, original):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, **TOL)
        np.testing.assert_allclose(g, o, **_ORIGINAL_TOL.get(name, TOL))


@pytest.mark.parametrize("name", sorted(_FUSED))
@pytest.mark.parametrize("check", [True, False])
def test_fused_model_round_trips(name, check):
    """to_onnx writes the optimizer's com.microsoft nodes back as they came and
    onnxruntime runs the export with the same outputs. onnxruntime's
    SimplifiedLayerNormalization, in ONNX's domain, which ONNX does not define, is
    written in ONNX's ops so that the export passes ONNX's checker, or with
    check=False as it came."""
    model = onnx.load(str(DATA / f"{name}.opt.onnx"))
    back = to_onnx(from_onnx(model), check=check)
    if check:
        onnx.checker.check_model(back, full_check=True)
        assert _contrib_nodes(back.graph, with_simplified=False) == \
            _contrib_nodes(model.graph, with_simplified=False)
        assert "SimplifiedLayerNormalization" not in {n.op_type for n in back.graph.node}
    else:
        assert _contrib_nodes(back.graph) == _contrib_nodes(model.graph)
    assert _contrib_nodes(model.graph)
    feeds = _corpus_feeds(name, _corpus_cases_of(name)[0])
    for g, w in zip(_ort(back, feeds), _ort(model, feeds)):
        np.testing.assert_allclose(g, w, **TOL)

"""onnxruntime's mixture-of-experts contrib ops (`ops/ms_moe.py`) against onnxruntime.

The oracle is onnxruntime 1.32's CPUExecutionProvider, which has kernels for MoE, QMoE
and MoEGroupRouter: one-node com.microsoft models over seeded random tokens, router
logits and experts (weights as initializers, as exported models hold them), imported
with `from_onnx` and run in a Session. The 2/4/8-bit packing of the QMoE weights and
zero points is written here independently of the kernel (`_pack`), and so is the
dequantized-weight reference `_moe_reference` (a loop over tokens and their experts in
float64), which is the oracle of the forms onnxruntime's CPU kernels refuse or ignore:
swiglu_fusion 0 (fc3) and 2, fc3 with silu (Mixtral's gated MLP), geglu, relu2,
swiglu_limit_after_activation, mixed projection widths and use_sparse_mixer (the
reference transcribes onnxruntime's CUDA sparse_mixer_top2; the CPU kernels route such a
node by plain softmax top-2, shown in a test).

Bounds, relative to max|Y| (plus the same share of |Y|):
* float32 MoE / QMoE against onnxruntime: F32_RTOL = 1e-5 (both dequantize to float32
  and run float32 GEMMs in another summation order; measured up to 5.1e-7).
* 2-bit block-wise QMoE: onnxruntime may take its LUT GEMM, which quantizes the
  activations (measured 5.8e-3 of max|Y| at hidden 128); accuracy_level 4 lets it
  quantize them to int8 for 4-bit experts (measured 1.0e-2); LUT_RTOL = 3e-2.
* 8-bit block-wise QMoE with constant weights: onnxruntime prepacks them for MLAS's
  QNBit GEMM, which has no float32 kernel for 8 bits and quantizes the activations to
  int8 (measured up to 1.8% of max|Y|, 0.9% for float16 inputs); INT8_ACT_RTOL = 3e-2.
  The same nodes with the weights fed as graph inputs (no prepacking) agree to F32_RTOL.
* float16: F16_RTOL = 2e-3, a float16 step (measured: equal on every case here, both
  computing in float32 and rounding once).
* against the float64 reference: REF_RTOL = 1e-5.
* MoEGroupRouter: the sigmoid and log in float32, REF_RTOL (measured 1.2e-7 absolute);
  the selection (which entries hold the sentinel) exact.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError, UnsupportedOpError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from .single_node import node_inputs, ort_session  # noqa: E402

MS = "com.microsoft"
F32_RTOL = 1e-5
LUT_RTOL = 3e-2
INT8_ACT_RTOL = 3e-2
F16_RTOL = 2e-3
REF_RTOL = 1e-5
_ELEM = helper.np_dtype_to_tensor_dtype
_MOE_INPUTS = ("input", "router_probs", "fc1_experts_weights", "fc1_experts_bias",
               "fc2_experts_weights", "fc2_experts_bias", "fc3_experts_weights",
               "fc3_experts_bias")
_QMOE_INPUTS = ("input", "router_probs", "fc1_experts_weights", "fc1_scales",
                "fc1_experts_bias", "fc2_experts_weights", "fc2_scales",
                "fc2_experts_bias", "fc3_experts_weights", "fc3_scales",
                "fc3_experts_bias", "fc1_zero_points", "fc2_zero_points",
                "fc3_zero_points", "router_weights")
_FEEDS = {"input", "router_probs", "router_weights", "logits", "expert_bias"}


# --------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------


def _model(op, inputs, attrs, out_types, feeds=_FEEDS):
    """A one-node com.microsoft model: `inputs` (name, array or None) in the op's order;
    the tokens and router inputs are graph inputs, the experts initializers. `out_types`
    gives a numpy dtype per declared output (None: an omitted output)."""
    names, graph_inputs, inits = node_inputs(inputs, feeds)
    while names and names[-1] == "":
        names.pop()
    outs = ["" if t is None else f"out{i}" for i, t in enumerate(out_types)]
    node = helper.make_node(op, names, outs, domain=MS, **attrs)
    graph = helper.make_graph([node], op, graph_inputs, [
        helper.make_tensor_value_info(o, _ELEM(np.dtype(t)), None)
        for o, t in zip(outs, out_types) if t is not None], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _feeds(inputs, feeds=_FEEDS):
    return {k: np.asarray(v) for k, v in inputs if v is not None and k in feeds}


def _run_both(op, inputs, attrs, out_types, feed_all=False):
    """(onegraph's outputs, onnxruntime's outputs) of the one-node model (every input a
    graph input with feed_all, else the experts initializers)."""
    names_fed = {k for k, _ in inputs} if feed_all else _FEEDS
    model = _model(op, inputs, attrs, out_types, names_fed)
    names = [o.name for o in model.graph.output]
    feeds = _feeds(inputs, names_fed)
    want = ort_session(model).run(names, feeds)
    got = onegraph.Session(from_onnx(model)).run(names, feeds)
    return got, want


def _onegraph(op, inputs, attrs, out_types=(np.float32,)):
    model = _model(op, inputs, attrs, out_types)
    names = [o.name for o in model.graph.output]
    return onegraph.Session(from_onnx(model)).run(names, _feeds(inputs))


def _assert_close(got, want, rtol, what=""):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    w = np.asarray(want, np.float64)
    diff = np.abs(np.asarray(got, np.float64) - w)
    bound = rtol * (np.abs(w).max(initial=0) + np.abs(w))
    assert (diff <= bound).all(), f"{what}: off by up to {diff.max()} (max|Y| " \
                                  f"{np.abs(w).max()})"


def _infer(op, inputs, attrs):
    definition = REGISTRY.get(op, MS)
    infos = [None if v is None else TensorInfo(np.asarray(v).dtype, np.shape(v))
             for _, v in inputs]
    return definition.infer(definition.resolve_attrs(attrs), infos)


def _kernel(op, inputs, attrs, num_outputs=1):
    definition = REGISTRY.get(op, MS)
    resolved = definition.resolve_attrs(attrs, num_outputs=num_outputs)
    return definition.kernel([v for _, v in inputs], resolved, None)


# --------------------------------------------------------------------------------------
# An independent reference: packing, dequantization and the expert loop
# --------------------------------------------------------------------------------------


def _pack(codes, bits):
    """uint8 codes (< 2^bits) packed low bits first along the last axis (padded with
    zero codes to whole bytes)."""
    per = 8 // bits
    pad = (-codes.shape[-1]) % per
    codes = np.concatenate([codes, np.zeros(codes.shape[:-1] + (pad,), codes.dtype)], -1)
    codes = codes.reshape(codes.shape[:-1] + (-1, per)).astype(np.uint16)
    out = np.zeros(codes.shape[:-1], np.uint16)
    for i in range(per):
        out |= codes[..., i] << (i * bits)
    return out.astype(np.uint8)


def _quantized(rng, e, n, k, bits, block_size, zero_points, dtype):
    """(packed weights, scales, packed zero points or None, float64 dequantized
    weights [e, n, k]) of random codes; per-row parameters when block_size is 0."""
    codes = rng.integers(0, 1 << bits, (e, n, k)).astype(np.uint8)
    blocks = k // block_size if block_size else 1
    scales = (rng.random((e, n, blocks)) * 0.04 / (1 << (bits - 2)) + 0.005).astype(dtype)
    zero = rng.integers(0, 1 << bits, (e, n, blocks)).astype(np.uint8) if zero_points \
        else np.full((e, n, blocks), 1 << (bits - 1), np.uint8)
    width = block_size or k
    w = (codes.astype(np.float64) - np.repeat(zero, width, -1).astype(np.float64)) * \
        np.repeat(scales.astype(np.float64), width, -1)
    packed_zero = None
    if zero_points:
        packed_zero = _pack(zero, bits) if block_size else _pack(zero[..., 0], bits)
    return _pack(codes, bits), (scales if block_size else scales[..., 0]), packed_zero, w


def _sparse_mixer_reference(logits):
    """onnxruntime's CUDA sparse_mixer_top2, transcribed token by token."""
    eps = 0.01
    idx, weights = [], []
    for row in logits.astype(np.float64):
        first = int(np.argmax(row))
        rest = row.copy()
        rest[first] = -np.inf
        second = int(np.argmax(rest))
        picks, ws = [first, second], []
        for j, e in enumerate(picks):
            best = row[e]
            keep = [(best - v) <= 2 * eps * max(abs(v), best) and not (j == 1 and i == first)
                    for i, v in enumerate(row)]
            ws.append(1.0 / sum(np.exp(v - best) for v, kp in zip(row, keep) if kp))
        idx.append(picks)
        weights.append(ws)
    return np.array(idx), np.array(weights)


def _moe_reference(x, logits, w1, b1, w2, b2, w3=None, b3=None, mixing=None, k=1,
                   activation_type="relu", normalize_routing_weights=0, use_sparse_mixer=0,
                   activation_alpha=1.0, activation_beta=0.0, swiglu_fusion=0,
                   swiglu_limit=None, swiglu_limit_after_activation=0, **_):
    """The mixture in float64, token by token (weights [E, N, K] as float64)."""
    flat = x.reshape(-1, x.shape[-1]).astype(np.float64)
    lg = logits.astype(np.float64)
    if use_sparse_mixer:
        idx, wts = _sparse_mixer_reference(logits.astype(np.float32))
    else:
        p = np.exp(lg - lg.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        idx = np.array([sorted(range(p.shape[1]), key=lambda e: (-r[e], -e))[:k] for r in p])
        src = p if mixing is None else mixing.astype(np.float64)
        wts = np.take_along_axis(src, idx, 1)
        if normalize_routing_weights:
            wts = wts / wts.sum(1, keepdims=True)
    limit = np.inf if swiglu_limit is None else swiglu_limit

    def sig(v):
        return 1 / (1 + np.exp(-v))

    def gelu(v):
        return 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))

    y = np.zeros(flat.shape)
    for t, row in enumerate(flat):
        for j, e in enumerate(idx[t]):
            if wts[t, j] <= 0:
                continue
            h = w1[e] @ row + (0 if b1 is None else b1[e])
            lin = None if w3 is None else w3[e] @ row + (0 if b3 is None else b3[e])
            if activation_type in ("swiglu", "geglu"):
                if lin is not None:
                    g = h
                elif swiglu_fusion == 1:
                    g, lin = h[0::2], h[1::2]
                else:
                    g, lin = h[:len(h) // 2], h[len(h) // 2:]
                if activation_type == "geglu":
                    a = gelu(g) * lin
                elif swiglu_limit_after_activation:
                    a = np.minimum(g * sig(activation_alpha * g), limit) * \
                        (np.clip(lin, -limit, limit) + activation_beta)
                else:
                    g = np.minimum(g, limit)
                    a = g * sig(activation_alpha * g) * (np.clip(lin, -limit, limit) +
                                                         activation_beta)
            else:
                a = {"relu": np.maximum(h, 0), "relu2": np.maximum(h, 0) ** 2,
                     "gelu": gelu(h), "silu": h * sig(h), "identity": h}[activation_type]
                if lin is not None:
                    a = a * lin
            y[t] += wts[t, j] * (w2[e] @ a + (0 if b2 is None else b2[e]))
    return y.reshape(x.shape)


# --------------------------------------------------------------------------------------
# MoE cases
# --------------------------------------------------------------------------------------


def _moe_case(rng, tokens=(7,), hidden=16, inter=12, experts=4, fusion=1, fc3=False,
              bias=True, dtype=np.float32):
    """(inputs, float64 weights for the reference) of a MoE node."""
    def w(*shape, scale=0.3):
        return (rng.standard_normal(shape) * scale).astype(dtype)

    x = w(*tokens, hidden, scale=1.0)
    t = int(np.prod(tokens))
    inputs = {"input": x, "router_probs": w(t, experts, scale=1.0),
              "fc1_experts_weights": w(experts, fusion * inter, hidden),
              "fc1_experts_bias": w(experts, fusion * inter) if bias else None,
              "fc2_experts_weights": w(experts, hidden, inter),
              "fc2_experts_bias": w(experts, hidden) if bias else None,
              "fc3_experts_weights": w(experts, inter, hidden) if fc3 else None,
              "fc3_experts_bias": w(experts, inter) if fc3 and bias else None}
    return [(n, inputs[n]) for n in _MOE_INPUTS]


def _moe_ref(inputs, attrs):
    d = {k: (None if v is None else np.asarray(v, np.float64)) for k, v in inputs}
    return _moe_reference(d["input"], np.asarray(dict(inputs)["router_probs"], np.float32),
                          d["fc1_experts_weights"], d["fc1_experts_bias"],
                          d["fc2_experts_weights"], d["fc2_experts_bias"],
                          d["fc3_experts_weights"], d["fc3_experts_bias"], **attrs)


@pytest.mark.parametrize("activation", ["relu", "gelu", "silu", "identity"])
@pytest.mark.parametrize("normalize", [0, 1])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_moe_against_onnxruntime(activation, normalize, k):
    rng = np.random.default_rng([k, normalize, len(activation)])
    inputs = _moe_case(rng, bias=k != 2)
    attrs = dict(k=k, activation_type=activation, normalize_routing_weights=normalize)
    (got,), (want,) = _run_both("MoE", inputs, attrs, [np.float32])
    _assert_close(got, want, F32_RTOL, activation)
    _assert_close(got, _moe_ref(inputs, attrs).astype(np.float32), REF_RTOL, "reference")


@pytest.mark.parametrize("alpha, beta, limit", [(1.0, 0.0, None), (1.702, 1.0, 7.0),
                                                (1.702, 1.0, 0.4)])
def test_moe_swiglu_interleaved(alpha, beta, limit):
    """swiglu_fusion=1 (gate and linear rows interleaved), as the gpt-oss / Phi exports
    write it; the only SwiGLU layout onnxruntime's CPU kernel runs."""
    rng = np.random.default_rng(int(alpha * 10) + (limit or 0) > 1)
    inputs = _moe_case(rng, fusion=2)
    attrs = dict(k=2, activation_type="swiglu", swiglu_fusion=1, normalize_routing_weights=1,
                 activation_alpha=alpha, activation_beta=beta)
    if limit is not None:
        attrs["swiglu_limit"] = limit
    (got,), (want,) = _run_both("MoE", inputs, attrs, [np.float32])
    _assert_close(got, want, F32_RTOL, "swiglu")


@pytest.mark.parametrize("tokens", [(1, 9), (2, 3), (0,), (1,)])
def test_moe_token_layouts(tokens):
    """3-D [batch, seq, hidden] input keeps its shape; zero and one token."""
    rng = np.random.default_rng(len(tokens))
    inputs = _moe_case(rng, tokens=tokens)
    attrs = dict(k=2, activation_type="silu", normalize_routing_weights=1)
    (got,), (want,) = _run_both("MoE", inputs, attrs, [np.float32])
    _assert_close(got, want, F32_RTOL, "layout")
    assert tuple(_infer("MoE", inputs, attrs)[0].shape) == got.shape


def test_moe_float16():
    rng = np.random.default_rng(16)
    inputs = _moe_case(rng, dtype=np.float16, fusion=2)
    attrs = dict(k=2, activation_type="swiglu", swiglu_fusion=1, normalize_routing_weights=1)
    (got,), (want,) = _run_both("MoE", inputs, attrs, [np.float16])
    _assert_close(got, want, F16_RTOL, "float16")


def test_moe_ties_pick_the_higher_expert():
    """Equal router logits: onnxruntime's partial_sort over (probability, index) with
    greater<> ranks the higher expert index first; k = 1 picks the last expert."""
    rng = np.random.default_rng(3)
    inputs = _moe_case(rng, experts=5)
    inputs[1] = ("router_probs", np.zeros((7, 5), np.float32))
    attrs = dict(k=1, activation_type="identity")
    (got,), (want,) = _run_both("MoE", inputs, attrs, [np.float32])
    _assert_close(got, want, F32_RTOL, "ties")
    d = dict(inputs)
    x = d["input"].astype(np.float64)
    last = (x @ d["fc1_experts_weights"][4].T + d["fc1_experts_bias"][4]) @ \
        d["fc2_experts_weights"][4].T + d["fc2_experts_bias"][4]
    np.testing.assert_allclose(got, last * 0.2, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attrs, fusion, fc3", [
    (dict(activation_type="swiglu", swiglu_fusion=2), 2, False),
    (dict(activation_type="swiglu", swiglu_fusion=0, swiglu_limit=1.0), 1, True),
    (dict(activation_type="silu"), 1, True),
    (dict(activation_type="relu", normalize_routing_weights=1), 1, True),
    (dict(activation_type="geglu", swiglu_fusion=1), 2, False),
    (dict(activation_type="geglu", swiglu_fusion=2), 2, False),
    (dict(activation_type="relu2"), 1, False),
    (dict(activation_type="swiglu", swiglu_fusion=1, swiglu_limit=0.3,
          swiglu_limit_after_activation=1, activation_alpha=1.702, activation_beta=1.0),
     2, False),
])
def test_moe_forms_onnxruntime_cpu_refuses(attrs, fusion, fc3):
    """The schema's other layouts and activations (CUDA-only in onnxruntime): against the
    reference, the CPU kernel refusing them (NOT_IMPLEMENTED or a failed session)."""
    rng = np.random.default_rng(len(attrs) + 10 * fusion + fc3)
    inputs = _moe_case(rng, fusion=fusion, fc3=fc3)
    attrs = dict(attrs, k=2)
    (got,) = _onegraph("MoE", inputs, attrs)
    _assert_close(got, _moe_ref(inputs, attrs).astype(np.float32), REF_RTOL, str(attrs))
    with pytest.raises(Exception):
        _run_both("MoE", inputs, attrs, [np.float32])


@pytest.mark.parametrize("experts", [8, 16])
def test_moe_sparse_mixer(experts):
    """use_sparse_mixer (Phi-3.5-MoE): onnxruntime's CUDA sparse_mixer_top2 routing.
    onnxruntime's CPU kernel ignores the attribute (its result is plain top-2), so the
    oracle is the transcription of the CUDA kernel; some logits sit within the jitter
    band of the best so the mask matters."""
    rng = np.random.default_rng(experts)
    inputs = _moe_case(rng, experts=experts, tokens=(12,))
    logits = rng.standard_normal((12, experts)).astype(np.float32)
    logits[:4, 1] = logits[:4, 0] = logits[:4].max(1) + 0.5
    logits[:4, 0] += 0.005
    inputs[1] = ("router_probs", logits)
    attrs = dict(k=2, activation_type="relu", use_sparse_mixer=1)
    (got,) = _onegraph("MoE", inputs, attrs)
    _assert_close(got, _moe_ref(inputs, attrs).astype(np.float32), REF_RTOL, "sparse mixer")
    (_,), (cpu,) = _run_both("MoE", inputs, attrs, [np.float32])
    (plain,) = _onegraph("MoE", inputs, dict(k=2, activation_type="relu"))
    _assert_close(cpu, plain, F32_RTOL, "onnxruntime's CPU kernel routes by top-2")
    assert np.abs(got - plain).max() > 1e-3


def test_moe_errors():
    rng = np.random.default_rng(0)
    inputs = _moe_case(rng)
    with pytest.raises(ShapeError, match="k = 5 exceeds"):
        _kernel("MoE", inputs, dict(k=5))
    bad = list(inputs)
    bad[4] = ("fc2_experts_weights", inputs[4][1][:, :5])
    with pytest.raises(ShapeError, match="fc2_experts_weights"):
        _kernel("MoE", bad, {})
    bad = list(inputs)
    bad[2] = ("fc1_experts_weights", inputs[2][1][:, :, :5])
    with pytest.raises(ShapeError, match="fc1_experts_weights"):
        _kernel("MoE", bad, {})
    bad = list(inputs)
    bad[1] = ("router_probs", inputs[1][1][:3])
    with pytest.raises(ShapeError, match="router_probs"):
        _kernel("MoE", bad, {})
    with pytest.raises(ShapeError, match="needs fc3"):
        _kernel("MoE", inputs, dict(activation_type="swiglu", swiglu_fusion=0))
    with pytest.raises(OpAttributeError, match="activation_type"):
        _kernel("MoE", inputs, dict(activation_type="tanh"))
    with pytest.raises(OpAttributeError, match="sparse_mixer needs k = 2"):
        _kernel("MoE", inputs, dict(use_sparse_mixer=1))
    with pytest.raises(ShapeError, match="input must be"):
        _kernel("MoE", [("input", inputs[0][1].astype(np.int32))] + inputs[1:], {})


# --------------------------------------------------------------------------------------
# QMoE
# --------------------------------------------------------------------------------------


def _qmoe_case(rng, bits=4, block_size=0, zero_points=True, activation="relu", tokens=(6,),
               hidden=64, inter=32, experts=4, bias=True, mixing=False, fc3=False,
               dtype=np.float32, bits2=None):
    """(inputs, float64 weights {name: array} for the reference) of a QMoE node."""
    fusion = 2 if activation in ("swiglu", "geglu") and not fc3 else 1
    bits2 = bits2 or bits
    t = int(np.prod(tokens))
    q1, s1, z1, w1 = _quantized(rng, experts, fusion * inter, hidden, bits, block_size,
                                zero_points, dtype)
    q2, s2, z2, w2 = _quantized(rng, experts, hidden, inter, bits2, block_size,
                                zero_points, dtype)
    q3 = s3 = z3 = w3 = None
    if fc3:
        q3, s3, z3, w3 = _quantized(rng, experts, inter, hidden, bits, block_size,
                                    zero_points, dtype)

    def f(*shape, scale=0.1):
        return (rng.standard_normal(shape) * scale).astype(dtype)

    values = {"input": f(*tokens, hidden, scale=1.0), "router_probs": f(t, experts, scale=1.0),
              "fc1_experts_weights": q1, "fc1_scales": s1,
              "fc1_experts_bias": f(experts, fusion * inter) if bias else None,
              "fc2_experts_weights": q2, "fc2_scales": s2,
              "fc2_experts_bias": f(experts, hidden) if bias else None,
              "fc3_experts_weights": q3, "fc3_scales": s3, "fc3_experts_bias": None,
              "fc1_zero_points": z1, "fc2_zero_points": z2, "fc3_zero_points": z3,
              "router_weights": rng.random((t, experts)).astype(dtype) if mixing else None}
    return [(n, values[n]) for n in _QMOE_INPUTS], {"w1": w1, "w2": w2, "w3": w3}


def _qmoe_ref(inputs, weights, attrs):
    d = dict(inputs)

    def f64(name):
        return None if d[name] is None else np.asarray(d[name], np.float64)

    return _moe_reference(f64("input"), np.asarray(d["router_probs"], np.float32),
                          weights["w1"], f64("fc1_experts_bias"), weights["w2"],
                          f64("fc2_experts_bias"), weights["w3"], None,
                          mixing=f64("router_weights"), **attrs)


def _qmoe_attrs(bits, block_size, activation, **more):
    attrs = dict(dict(k=2, activation_type=activation, expert_weight_bits=bits,
                      normalize_routing_weights=1), **more)
    if activation == "swiglu":
        attrs.setdefault("swiglu_fusion", 1)
    if block_size:
        attrs["block_size"] = block_size
    return attrs


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("block_size", [0, 16, 32])
@pytest.mark.parametrize("zero_points", [False, True])
@pytest.mark.parametrize("activation", ["relu", "swiglu"])
def test_qmoe_against_onnxruntime(bits, block_size, zero_points, activation):
    rng = np.random.default_rng([bits, block_size, zero_points, len(activation)])
    inputs, weights = _qmoe_case(rng, bits, block_size, zero_points, activation)
    attrs = _qmoe_attrs(bits, block_size, activation)
    (got,), (want,) = _run_both("QMoE", inputs, attrs, [np.float32])
    int8_act = bits == 8 and block_size
    _assert_close(got, want, INT8_ACT_RTOL if int8_act else F32_RTOL, f"{bits} bits")
    _assert_close(got, _qmoe_ref(inputs, weights, attrs).astype(np.float32), REF_RTOL,
                  "reference")
    if int8_act:
        (_,), (fed,) = _run_both("QMoE", inputs, attrs, [np.float32], feed_all=True)
        _assert_close(got, fed, F32_RTOL, "weights fed")
    assert tuple(_infer("QMoE", inputs, attrs)[0].shape) == got.shape


@pytest.mark.parametrize("bits, block_size", [(4, 64), (4, 128), (8, 64), (8, 128),
                                              (2, 128), (2, 32)])
@pytest.mark.parametrize("activation", ["silu", "gelu", "identity", "swiglu"])
def test_qmoe_larger_blocks(bits, block_size, activation):
    """hidden = inter = 128: MLAS's Q4 / QNBit / LUT paths of onnxruntime's kernel."""
    rng = np.random.default_rng([bits, block_size, len(activation)])
    inputs, weights = _qmoe_case(rng, bits, block_size, True, activation, hidden=128,
                                 inter=128)
    attrs = _qmoe_attrs(bits, block_size, activation)
    (got,), (want,) = _run_both("QMoE", inputs, attrs, [np.float32])
    _assert_close(got, want, {2: LUT_RTOL, 8: INT8_ACT_RTOL}.get(bits, F32_RTOL),
                  f"{bits} bits")
    _assert_close(got, _qmoe_ref(inputs, weights, attrs).astype(np.float32), REF_RTOL,
                  "reference")


@pytest.mark.parametrize("normalize", [0, 1])
def test_qmoe_router_weights(normalize):
    """router_weights (DeepSeek's noaux_tc): router_probs picks, router_weights mixes."""
    rng = np.random.default_rng(normalize)
    inputs, weights = _qmoe_case(rng, 4, 32, True, "swiglu", mixing=True)
    attrs = _qmoe_attrs(4, 32, "swiglu", normalize_routing_weights=normalize)
    (got,), (want,) = _run_both("QMoE", inputs, attrs, [np.float32])
    _assert_close(got, want, F32_RTOL, "router_weights")
    _assert_close(got, _qmoe_ref(inputs, weights, attrs).astype(np.float32), REF_RTOL,
                  "reference")


@pytest.mark.parametrize("bits", [4, 8])
def test_qmoe_float16(bits):
    rng = np.random.default_rng(bits)
    inputs, _ = _qmoe_case(rng, bits, 32, True, "swiglu", tokens=(2, 3), dtype=np.float16)
    attrs = _qmoe_attrs(bits, 32, "swiglu", swiglu_limit=7.0, activation_alpha=1.702,
                        activation_beta=1.0)
    (got,), (want,) = _run_both("QMoE", inputs, attrs, [np.float16])
    _assert_close(got, want, INT8_ACT_RTOL if bits == 8 else F16_RTOL, "float16")


def test_qmoe_accuracy_level_4():
    """accuracy_level 4 lets onnxruntime use int8 activations; onegraph stays float32."""
    rng = np.random.default_rng(44)
    inputs, weights = _qmoe_case(rng, 4, 32, False, "swiglu", hidden=128, inter=64)
    attrs = _qmoe_attrs(4, 32, "swiglu", accuracy_level=4)
    (got,), (want,) = _run_both("QMoE", inputs, attrs, [np.float32])
    _assert_close(got, want, LUT_RTOL, "accuracy_level 4")
    _assert_close(got, _qmoe_ref(inputs, weights, attrs).astype(np.float32), REF_RTOL,
                  "reference")


@pytest.mark.parametrize("form", ["fc3 swiglu", "fc3 silu", "fusion 2", "mixed bits"])
def test_qmoe_forms_onnxruntime_cpu_refuses(form):
    rng = np.random.default_rng(len(form))
    case = dict(bits=4, block_size=32, zero_points=True)
    more = {}
    if form == "fc3 swiglu":
        case.update(activation="swiglu", fc3=True)
        more = dict(swiglu_fusion=0)
    elif form == "fc3 silu":
        case.update(activation="silu", fc3=True)
    elif form == "fusion 2":
        case.update(activation="swiglu")
        more = dict(swiglu_fusion=2)
    else:
        case.update(activation="relu", bits2=8)
        more = dict(fc2_expert_weight_bits=8)
    inputs, weights = _qmoe_case(rng, **case)
    attrs = _qmoe_attrs(4, 32, case["activation"], **more)
    (got,) = _onegraph("QMoE", inputs, attrs)
    _assert_close(got, _qmoe_ref(inputs, weights, attrs).astype(np.float32), REF_RTOL, form)
    with pytest.raises(Exception):
        _run_both("QMoE", inputs, attrs, [np.float32])


def test_qmoe_refusals():
    rng = np.random.default_rng(1)
    inputs, _ = _qmoe_case(rng, 4, 32)
    attrs = _qmoe_attrs(4, 32, "relu")
    for extra, match in ((dict(quant_type="fp4"), "quant_type"),
                         (dict(weights_prepacked=1), "weights_prepacked"),
                         (dict(expert_weight_bits=3), "3-bit")):
        with pytest.raises(UnsupportedOpError, match=match):
            _kernel("QMoE", inputs, dict(attrs, **extra))
    with pytest.raises(OpAttributeError, match="bits must be"):
        _kernel("QMoE", inputs, dict(attrs, expert_weight_bits=5))
    with pytest.raises(OpAttributeError, match="block_size"):
        _kernel("QMoE", inputs, dict(attrs, block_size=24))
    bad = list(inputs)
    bad[3] = ("fc1_scales", inputs[3][1][:, :, :1])
    with pytest.raises(ShapeError, match="fc1_scales"):
        _kernel("QMoE", bad, attrs)
    bad = list(inputs)
    bad[11] = ("fc1_zero_points", inputs[11][1][:, :3])
    with pytest.raises(ShapeError, match="fc1_zero_points"):
        _kernel("QMoE", bad, attrs)
    bad = list(inputs)
    bad[3] = ("fc1_scales", None)
    with pytest.raises(ShapeError, match="fc1_scales is required"):
        _kernel("QMoE", bad, attrs)


def test_moe_and_qmoe_round_trip_through_to_onnx():
    """to_onnx writes both ops back as they came; onnxruntime runs the export."""
    rng = np.random.default_rng(9)
    for op, inputs, attrs in (
            ("MoE", _moe_case(rng, fusion=2),
             dict(k=2, activation_type="swiglu", swiglu_fusion=1, swiglu_limit=7.0)),
            ("QMoE", _qmoe_case(rng, 4, 16)[0], _qmoe_attrs(4, 16, "relu"))):
        model = _model(op, inputs, attrs, [np.float32])
        feeds = _feeds(inputs)
        exported = to_onnx(from_onnx(model))
        (node,) = [n for n in exported.graph.node if n.op_type == op]
        assert node.domain == MS
        want = ort_session(model).run(None, feeds)[0]
        _assert_close(ort_session(exported).run(None, feeds)[0], want, 0.0, op)


# --------------------------------------------------------------------------------------
# MoEGroupRouter
# --------------------------------------------------------------------------------------


def _router_case(rng, tokens=(6,), experts=16, dtype=np.float32):
    return [("logits", rng.standard_normal(tokens + (experts,)).astype(dtype)),
            ("expert_bias", (rng.standard_normal(experts) * 0.1).astype(np.float32))]


@pytest.mark.parametrize("top_k, n_group, topk_group, group_topk", [
    (2, 1, 1, 2), (4, 4, 2, 2), (3, 8, 3, 1), (6, 4, 4, 3), (8, 8, 4, 2), (1, 2, 1, 8)])
def test_group_router(top_k, n_group, topk_group, group_topk):
    rng = np.random.default_rng([top_k, n_group, topk_group, group_topk])
    inputs = _router_case(rng)
    attrs = dict(top_k=top_k, n_group=n_group, topk_group=topk_group, group_topk=group_topk)
    (got,), (want,) = _run_both("MoEGroupRouter", inputs, attrs, [np.float32])
    np.testing.assert_array_equal(got == np.float32(-1e4), want == np.float32(-1e4))
    _assert_close(got, want, REF_RTOL, "routed")


def test_group_router_ties_sentinel_and_layouts():
    """Equal scores pick the lower experts; router_sentinel fills the rest; rank-3
    logits give [tokens, experts]; float16 logits give float16 scores."""
    inputs = [("logits", np.zeros((1, 2, 8), np.float32)),
              ("expert_bias", np.zeros(8, np.float32))]
    attrs = dict(top_k=3, n_group=4, topk_group=2, router_sentinel=-5.0)
    (got,), (want,) = _run_both("MoEGroupRouter", inputs, attrs, [np.float32])
    np.testing.assert_array_equal(got, want)
    assert got.shape == (2, 8) and (got[:, 3:] == -5).all()
    assert tuple(_infer("MoEGroupRouter", inputs, attrs)[0].shape) == (2, 8)
    rng = np.random.default_rng(2)
    inputs = _router_case(rng, dtype=np.float16)
    (got,), (want,) = _run_both("MoEGroupRouter", inputs, dict(top_k=2), [np.float16])
    _assert_close(got, want, F16_RTOL, "float16")


@pytest.mark.parametrize("projection", [False, True])
def test_group_router_full_scores(projection):
    """selection_scores = sigmoid + bias and router_weights = sigmoid (float32), router_probs
    omitted; with projection_weight the logits are activations [tokens, 256 * n]."""
    rng = np.random.default_rng(projection)
    inputs = _router_case(rng)
    if projection:
        inputs[0] = ("logits", rng.standard_normal((6, 256)).astype(np.float32))
        inputs.append(("projection_weight",
                       (rng.standard_normal((16, 256)) * 0.05).astype(np.float32)))
    got, want = _run_both("MoEGroupRouter", inputs, dict(top_k=2),
                          [None, np.float32, np.float32])
    for g, w in zip(got, want):
        _assert_close(g, w, REF_RTOL, "full scores")


def test_group_router_errors():
    rng = np.random.default_rng(0)
    inputs = _router_case(rng, experts=12)
    with pytest.raises(ShapeError, match="do not split"):
        _kernel("MoEGroupRouter", inputs, dict(top_k=2, n_group=5, topk_group=1))
    with pytest.raises(ShapeError, match="exceeds"):
        _kernel("MoEGroupRouter", inputs, dict(top_k=7, n_group=4, topk_group=2))
    with pytest.raises(OpAttributeError, match="topk_group"):
        _kernel("MoEGroupRouter", inputs, dict(top_k=2, n_group=2, topk_group=3))
    with pytest.raises(ShapeError, match="expert_bias"):
        _kernel("MoEGroupRouter", [inputs[0], ("expert_bias", np.zeros(5, np.float32))],
                dict(top_k=2))
    with pytest.raises(ShapeError, match="projection_weight needs"):
        _kernel("MoEGroupRouter", inputs + [("p", np.zeros((12, 12), np.float32))],
                dict(top_k=2))

"""onnxruntime's recurrent, state-space and linear-attention contrib ops
(`ops/ms_sequence.py`) against onnxruntime.

The oracle is onnxruntime 1.32's CPUExecutionProvider, which has kernels for
LinearAttention, GatedDeltaNet, LinearAttentionGate, CausalConvWithState,
VarlenCausalConvWithState and AttnLSTM: one-node com.microsoft models over seeded random inputs
(keys L2-normalised for the delta rules, as the schemas ask), imported with `from_onnx`
and run in a Session. The recurrences are also checked against `_recurrence_reference`,
a token-by-token float64 transcription of the schemas' formulas written here, which is
the oracle of the forms onnxruntime's CPU kernels refuse (the state_window of
CausalConvWithState and LinearAttention).

Bounds: float32 outputs and states within F32_TOL (rtol = atol = 1e-5: both run the
same float32 recurrence, summing in other orders), the float64 reference within REF_TOL
(1e-5); measured over both, at most 2.8e-7 of 1 + |y| (5.2e-6 absolute). float16 within
F16_TOL (rtol = atol = 2e-3: onnxruntime and onegraph both widen to float32 and round
once; measured 3.5e-4 of 1 + |y|, under one float16 step). Carry states (copied input
values) and VarlenCausalConvWithState's state_update are exact.
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
F32_TOL = dict(rtol=1e-5, atol=1e-5)
F16_TOL = dict(rtol=2e-3, atol=2e-3)
REF_TOL = dict(rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------


def _model(op, inputs, attrs, num_outputs):
    names, graph_inputs, _ = node_inputs(inputs)
    while names and names[-1] == "":
        names.pop()
    outs = [f"out{i}" for i in range(num_outputs)]
    node = helper.make_node(op, names, outs, domain=MS, **attrs)
    graph = helper.make_graph([node], op, graph_inputs, [
        helper.make_value_info(o, onnx.TypeProto()) for o in outs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _feeds(inputs):
    return {k: np.asarray(v) for k, v in inputs if v is not None}


def _onegraph(op, inputs, attrs, num_outputs=2):
    model = _model(op, inputs, attrs, num_outputs)
    names = [o.name for o in model.graph.output]
    return onegraph.Session(from_onnx(model)).run(names, _feeds(inputs))


def _run_both(op, inputs, attrs, num_outputs=2, tol=F32_TOL):
    """Runs both, checks every output (dtype, shape, values within tol), returns
    onegraph's outputs."""
    model = _model(op, inputs, attrs, num_outputs)
    feeds = _feeds(inputs)
    want = ort_session(model).run(None, feeds)
    got = onegraph.Session(from_onnx(model)).run([o.name for o in model.graph.output], feeds)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, (i, g.dtype, g.shape, w.dtype,
                                                           w.shape)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **tol,
                                   err_msg=f"{op} output {i}")
    return got


def _kernel(op, inputs, attrs, num_outputs=2):
    definition = REGISTRY.get(op, MS)
    resolved = definition.resolve_attrs(attrs, num_outputs=num_outputs)
    return definition.kernel([v for _, v in inputs], resolved, None)


def _infer(op, inputs, attrs):
    definition = REGISTRY.get(op, MS)
    infos = [None if v is None else TensorInfo(np.asarray(v).dtype, np.shape(v))
             for _, v in inputs]
    return definition.infer(definition.resolve_attrs(attrs), infos)


def _unit(rng, shape):
    """Random vectors along the last axis, L2-normalised."""
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


# --------------------------------------------------------------------------------------
# The float64 reference recurrence
# --------------------------------------------------------------------------------------


def _recurrence_reference(q, k, v, g, beta, state, rule, scale, requests):
    """Token by token: q [N, Hq, dk], k [N, Hk, dk], v [N, Hs, dv]; state [R, Hs, dk, dv]
    (copied); g [N, Hs, 1 or dk] log decay; beta [N, Hs]; requests: (start, length).
    Hk divides Hs (key head h / (Hs / Hk)); query heads grouped (Hq > Hs) or shared.
    Returns (output [N, max(Hq, Hs), dv], final state)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    s = np.array(state, np.float64)
    n, hq, _ = q.shape
    hs, dv = v.shape[1:]
    hk = k.shape[1]
    out = np.zeros((n, max(hq, hs), dv))
    for r, (start, length) in enumerate(requests):
        for t in range(start, start + length):
            for h in range(hs):
                kt = k[t, h // (hs // hk)]
                if g is not None:
                    s[r, h] *= np.exp(np.asarray(g[t, h], np.float64))[:, None]
                if rule in ("delta", "gated_delta"):
                    s[r, h] += beta[t, h] * np.outer(kt, v[t, h] - kt @ s[r, h])
                else:
                    s[r, h] += np.outer(kt, v[t, h])
            for ho in range(max(hq, hs)):
                sh, qh = (ho // (hq // hs), ho) if hq >= hs else (ho, ho // (hs // hq))
                out[t, ho] = scale * q[t, qh] @ s[r, sh]
    return out, s


# --------------------------------------------------------------------------------------
# LinearAttention
# --------------------------------------------------------------------------------------


def _la_case(rng, b=2, t=5, hq=4, hkv=2, dk=8, dv=6, rule="gated_delta", per_key=False,
             past=True, beta_heads=None, dtype=np.float32):
    gated, delta = "gated" in rule, "delta" in rule
    inputs = [("query", rng.standard_normal((b, t, hq * dk)).astype(dtype)),
              ("key", _unit(rng, (b, t, hkv, dk)).reshape(b, t, -1).astype(dtype)),
              ("value", rng.standard_normal((b, t, hkv * dv)).astype(dtype)),
              ("past_state", (rng.standard_normal((b, hkv, dk, dv)) * 0.1).astype(dtype)
               if past else None),
              ("decay", -rng.random((b, t, hkv * (dk if per_key else 1))).astype(dtype)
               if gated else None),
              ("beta", rng.random((b, t, beta_heads or hkv)).astype(dtype) if delta else None)]
    return inputs, dict(q_num_heads=hq, kv_num_heads=hkv, update_rule=rule)


def _la_reference(inputs, attrs, window=0):
    d = dict(inputs)
    q, k, v = d["query"], d["key"], d["value"]
    b, t = q.shape[:2]
    hq, hkv = attrs["q_num_heads"], attrs["kv_num_heads"]
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    past = d["past_state"]
    state = np.zeros((b, hkv, dk, dv)) if past is None else (past[-1] if window else past)
    g = None if d["decay"] is None else d["decay"].reshape(b * t, hkv, -1)
    beta = None if d["beta"] is None else np.broadcast_to(
        d["beta"].reshape(b * t, -1), (b * t, hkv))
    out, s = _recurrence_reference(q.reshape(b * t, hq, dk), k.reshape(b * t, hkv, dk),
                                   v.reshape(b * t, hkv, dv), g, beta, state,
                                   attrs["update_rule"],
                                   attrs.get("scale") or 1 / np.sqrt(dk),
                                   [(i * t, t) for i in range(b)])
    return out.reshape(b, t, -1), s


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
@pytest.mark.parametrize("hq, hkv", [(4, 2), (2, 4), (2, 2), (3, 1)])
@pytest.mark.parametrize("per_key", [False, True])
def test_linear_attention(rule, hq, hkv, per_key):
    rng = np.random.default_rng([len(rule), hq, hkv, per_key])
    inputs, attrs = _la_case(rng, hq=hq, hkv=hkv, rule=rule, per_key=per_key)
    y, state = _run_both("LinearAttention", inputs, attrs)
    ref_y, ref_s = _la_reference(inputs, attrs)
    np.testing.assert_allclose(y, ref_y, **REF_TOL)
    np.testing.assert_allclose(state, ref_s, **REF_TOL)
    inferred = _infer("LinearAttention", inputs, attrs)
    assert tuple(inferred[0].shape) == y.shape and tuple(inferred[1].shape) == state.shape


@pytest.mark.parametrize("t", [1, 2, 9])
def test_linear_attention_decode_prefill_and_defaults(t):
    """T = 1 (decoding) and longer prompts; no past_state (zeros); beta [B, T, 1]; an
    explicit scale."""
    rng = np.random.default_rng(t)
    inputs, attrs = _la_case(rng, t=t, past=False, beta_heads=1)
    attrs["scale"] = 0.25
    y, state = _run_both("LinearAttention", inputs, attrs)
    ref_y, ref_s = _la_reference(inputs, attrs)
    np.testing.assert_allclose(y, ref_y, **REF_TOL)
    assert state.dtype == np.float32


def test_linear_attention_float16():
    rng = np.random.default_rng(16)
    inputs, attrs = _la_case(rng, dtype=np.float16)
    y, state = _run_both("LinearAttention", inputs, attrs, tol=F16_TOL)
    assert y.dtype == state.dtype == np.float16


def test_linear_attention_chunks_continue_the_recurrence():
    """Two calls carrying present_state on equal one call over the whole sequence."""
    rng = np.random.default_rng(3)
    inputs, attrs = _la_case(rng, t=8)
    whole_y, whole_s = _onegraph("LinearAttention", inputs, attrs)
    first = [(k, v if v is None or k == "past_state" else v[:, :3]) for k, v in inputs]
    y1, s1 = _onegraph("LinearAttention", first, attrs)
    second = [(k, None if v is None else v[:, 3:]) for k, v in inputs]
    second[3] = ("past_state", s1)
    y2, s2 = _onegraph("LinearAttention", second, attrs)
    np.testing.assert_allclose(np.concatenate([y1, y2], 1), whole_y, **F32_TOL)
    np.testing.assert_allclose(s2, whole_s, **F32_TOL)


@pytest.mark.parametrize("t, window", [(5, 3), (2, 4), (1, 1)])
def test_linear_attention_state_window(t, window):
    """state_window W (onnxruntime's CPU kernel refuses it): past_state's slot W - 1 is
    read; present_state's slot j is the state after token T - W + j, slots before the
    first token zero."""
    rng = np.random.default_rng([t, window])
    inputs, attrs = _la_case(rng, t=t)
    d = dict(inputs)
    windowed = (rng.standard_normal((window,) + d["past_state"].shape) * 0.1).astype(
        np.float32)
    inputs[3] = ("past_state", windowed)
    attrs["state_window"] = window
    y, present = _onegraph("LinearAttention", inputs, attrs)
    with pytest.raises(Exception):
        _run_both("LinearAttention", inputs, attrs)
    assert present.shape == (window,) + d["past_state"].shape
    for j in range(window):
        end = t - window + j + 1
        if end <= 0:
            assert not present[j].any()
            continue
        cut = [(k, v if v is None or k == "past_state" else v[:, :end])
               for k, v in inputs]
        _, ref_s = _la_reference(cut, attrs, window)
        np.testing.assert_allclose(present[j], ref_s, **REF_TOL)
    np.testing.assert_allclose(y, _la_reference(inputs, attrs, window)[0], **REF_TOL)


def test_linear_attention_errors():
    rng = np.random.default_rng(0)
    inputs, attrs = _la_case(rng)
    with pytest.raises(ShapeError, match="decay must be given"):
        _kernel("LinearAttention", inputs, dict(attrs, update_rule="delta"))
    with pytest.raises(ShapeError, match="beta must be given"):
        _kernel("LinearAttention", inputs, dict(attrs, update_rule="gated"))
    with pytest.raises(OpAttributeError, match="update_rule"):
        _kernel("LinearAttention", inputs, dict(attrs, update_rule="retention"))
    with pytest.raises(OpAttributeError, match="divide"):
        _kernel("LinearAttention", inputs, dict(attrs, q_num_heads=3))
    bad = list(inputs)
    bad[3] = ("past_state", inputs[3][1][:, :1])
    with pytest.raises(ShapeError, match="past_state"):
        _kernel("LinearAttention", bad, attrs)
    bad = list(inputs)
    bad[1] = ("key", inputs[1][1][:, :, :5])
    with pytest.raises(ShapeError, match="key's last dim"):
        _kernel("LinearAttention", bad, attrs)


# --------------------------------------------------------------------------------------
# GatedDeltaNet
# --------------------------------------------------------------------------------------


def _gdn_case(rng, lengths=(3, 4), hq=2, hv=4, dk=8, dv=6, rule="gated_delta",
              per_key=False, state=True, cu=True, dtype=np.float32):
    n = sum(lengths)
    gated, delta = "gated" in rule, "delta" in rule
    inputs = [("query", rng.standard_normal((n, hq, dk)).astype(dtype)),
              ("key", _unit(rng, (n, hq, dk)).astype(dtype)),
              ("value", rng.standard_normal((n, hv, dv)).astype(dtype)),
              ("cu_seqlens", np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
               if cu else None),
              ("decay", -rng.random((n, hv, dk) if per_key else (n, hv)).astype(np.float32)
               if gated else None),
              ("beta", rng.random((n, hv)).astype(np.float32) if delta else None),
              ("initial_state", (rng.standard_normal((len(lengths), hv, dv, dk)) * 0.1)
               .astype(np.float32) if state else None)]
    return inputs, dict(update_rule=rule)


def _gdn_reference(inputs, attrs, lengths, g=None, beta=None, q=None, k=None):
    d = dict(inputs)
    q = d["query"] if q is None else q
    k = d["key"] if k is None else k
    v = d["value"]
    n, hv = v.shape[:2]
    dk = q.shape[-1]
    g = g if g is not None else (None if d["decay"] is None else d["decay"].reshape(n, hv, -1))
    beta = beta if beta is not None else d["beta"]
    state = d["initial_state"]
    batch = len(lengths)
    state = np.zeros((batch, hv, v.shape[-1], dk)) if state is None else state
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    out, s = _recurrence_reference(q, k, v, g, beta, np.swapaxes(state, 2, 3),
                                   attrs.get("update_rule", "gated_delta"),
                                   attrs.get("scale") or 1 / np.sqrt(dk),
                                   list(zip(starts, lengths)))
    return out, np.swapaxes(s, 2, 3)


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
@pytest.mark.parametrize("per_key", [False, True])
@pytest.mark.parametrize("heads", [(2, 4), (2, 2), (1, 3)])
def test_gated_delta_net(rule, per_key, heads):
    rng = np.random.default_rng([len(rule), per_key, *heads])
    lengths = (3, 1, 4)
    inputs, attrs = _gdn_case(rng, lengths, hq=heads[0], hv=heads[1], rule=rule,
                              per_key=per_key)
    y, state = _run_both("GatedDeltaNet", inputs, attrs)
    ref_y, ref_s = _gdn_reference(inputs, attrs, lengths)
    np.testing.assert_allclose(y, ref_y, **REF_TOL)
    np.testing.assert_allclose(state, ref_s, **REF_TOL)
    assert tuple(_infer("GatedDeltaNet", inputs, attrs)[0].shape) == y.shape


@pytest.mark.parametrize("gate", ["softplus", "qwen", "sigmoid", "kda"])
@pytest.mark.parametrize("per_key_bias", [False, True])
def test_gated_delta_net_fused_gates(gate, per_key_bias):
    """gate_activation (Qwen3.5's softplus, Kimi's sigmoid), beta_activation sigmoid,
    qk_l2_norm (1 / sqrt(sum x^2 + 1e-12)) and an explicit scale; dt_bias per head, or
    per key dimension with a per-key decay."""
    rng = np.random.default_rng([len(gate), per_key_bias])
    lengths = (4, 3)
    inputs, attrs = _gdn_case(rng, lengths)
    hv, dk = 4, 8
    inputs[4] = ("decay", rng.standard_normal((7, hv, dk) if per_key_bias else (7, hv))
                 .astype(np.float32))
    inputs[5] = ("beta", rng.standard_normal((7, hv)).astype(np.float32))
    inputs += [("a_log", rng.standard_normal(hv).astype(np.float32)),
               ("dt_bias", rng.standard_normal((hv, dk) if per_key_bias else hv)
                .astype(np.float32))]
    attrs.update(gate_activation=gate, beta_activation="sigmoid", qk_l2_norm=1, scale=0.3,
                 gate_lower_bound=-4.0)
    y, state = _run_both("GatedDeltaNet", inputs, attrs)
    d = dict(inputs)
    x = d["decay"].reshape(7, hv, -1).astype(np.float64) + d["dt_bias"].reshape(hv, -1)
    a = np.exp(d["a_log"].astype(np.float64))[:, None]
    if gate in ("softplus", "qwen"):
        g = -a * np.log1p(np.exp(x))
    else:
        g = -4.0 / (1 + np.exp(-a * x))
    beta = 1 / (1 + np.exp(-d["beta"].astype(np.float64)))

    def l2(z):
        z = z.astype(np.float64)
        return z / np.sqrt((z * z).sum(-1, keepdims=True) + 1e-12)

    ref_y, ref_s = _gdn_reference(inputs, attrs, lengths, g=g, beta=beta,
                                  q=l2(d["query"]), k=l2(d["key"]))
    np.testing.assert_allclose(y, ref_y, **REF_TOL)
    np.testing.assert_allclose(state, ref_s, **REF_TOL)


def test_gated_delta_net_l2_epsilon():
    """qk_l2_norm's epsilon is 1e-12 inside the square root: tiny vectors show it."""
    rng = np.random.default_rng(12)
    inputs, attrs = _gdn_case(rng)
    inputs[0] = ("query", inputs[0][1] * np.float32(3e-7))
    inputs[1] = ("key", inputs[1][1] * np.float32(3e-7))
    _run_both("GatedDeltaNet", inputs, dict(attrs, qk_l2_norm=1))


def test_gated_delta_net_layouts():
    """Without cu_seqlens the tokens split evenly into initial_state's batch; the rank-4
    [B, S, H, D] spelling; packed QKV ([N, 2 Hq dk + Hv dv], head counts from the state);
    no initial_state with cu_seqlens (zeros). All equal the rank-3 ragged result."""
    rng = np.random.default_rng(4)
    inputs, attrs = _gdn_case(rng, (3, 3))
    base_y, base_s = _run_both("GatedDeltaNet", inputs, attrs)
    d = dict(inputs)
    uniform = list(inputs)
    uniform[3] = ("cu_seqlens", None)
    y, s = _run_both("GatedDeltaNet", uniform, attrs)
    np.testing.assert_allclose(y, base_y, **F32_TOL)
    rank4 = [(k, None if v is None else (v.reshape((2, 3) + v.shape[1:])
                                         if k in ("query", "key", "value", "decay", "beta")
                                         else v)) for k, v in uniform]
    y, s = _run_both("GatedDeltaNet", rank4, attrs)
    np.testing.assert_allclose(y.reshape(base_y.shape), base_y, **F32_TOL)
    packed = np.concatenate([d["query"].reshape(6, -1), d["key"].reshape(6, -1),
                             d["value"].reshape(6, -1)], 1)
    packed_inputs = [("query", packed), ("key", None), ("value", None)] + uniform[3:]
    y, s = _run_both("GatedDeltaNet", packed_inputs, attrs)
    np.testing.assert_allclose(y, base_y, **F32_TOL)
    no_state = inputs[:6]
    y, s = _run_both("GatedDeltaNet", no_state, attrs)
    ref_y, _ = _gdn_reference(no_state + [("initial_state", None)], attrs, (3, 3))
    np.testing.assert_allclose(y, ref_y, **REF_TOL)


def test_gated_delta_net_float16():
    rng = np.random.default_rng(16)
    inputs, attrs = _gdn_case(rng, dtype=np.float16)
    y, state = _run_both("GatedDeltaNet", inputs, attrs, tol=F16_TOL)
    assert y.dtype == np.float16 and state.dtype == np.float32


def test_gated_delta_net_errors():
    rng = np.random.default_rng(0)
    inputs, attrs = _gdn_case(rng)
    with pytest.raises(UnsupportedOpError, match="compact state updates"):
        _kernel("GatedDeltaNet", inputs, dict(attrs, state_update_capacity=2))
    with pytest.raises(ShapeError, match="decay must be given"):
        _kernel("GatedDeltaNet", inputs, dict(attrs, update_rule="delta"))
    bad = list(inputs)
    bad[3] = ("cu_seqlens", np.array([0, 3, 6], np.int32))
    with pytest.raises(ShapeError, match="cu_seqlens"):
        _kernel("GatedDeltaNet", bad, attrs)
    bad = list(inputs)
    bad[2] = ("value", inputs[2][1][:, :3])
    with pytest.raises(ShapeError, match="multiple"):
        _kernel("GatedDeltaNet", bad, attrs)
    with pytest.raises(ShapeError, match="initial_state is required"):
        _kernel("GatedDeltaNet", [inputs[0], ("key", None), ("value", None)] + inputs[3:6],
                attrs)
    with pytest.raises(ShapeError, match="dt_bias"):
        _kernel("GatedDeltaNet", inputs + [("a_log", np.zeros(4, np.float32)),
                                           ("dt_bias", np.zeros((4, 8), np.float32))],
                dict(attrs, gate_activation="softplus"))
    with pytest.raises(ShapeError, match="needs a_log"):
        _kernel("GatedDeltaNet", inputs, dict(attrs, gate_activation="softplus"))


# --------------------------------------------------------------------------------------
# LinearAttentionGate
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, tol", [(np.float32, F32_TOL), (np.float16, F16_TOL)])
@pytest.mark.parametrize("with_beta", [False, True])
def test_linear_attention_gate(dtype, tol, with_beta):
    rng = np.random.default_rng(with_beta)
    a = (rng.standard_normal((2, 5, 4)) * 10).astype(dtype)
    a[0, 0] = [40, -40, 0, 90]
    inputs = [("a", a), ("dt_bias", rng.standard_normal(4).astype(np.float32)),
              ("decay_scale", -np.exp(rng.standard_normal(4)).astype(np.float32)),
              ("b", (rng.standard_normal((2, 5, 4)) * 5).astype(dtype) if with_beta else None)]
    outs = _run_both("LinearAttentionGate", inputs, {}, 1 + with_beta, tol)
    d = dict(inputs)
    x = d["a"].astype(np.float64) + d["dt_bias"]
    np.testing.assert_allclose(outs[0], d["decay_scale"] * np.logaddexp(0, x), **tol)


def test_linear_attention_gate_errors():
    a = np.zeros((1, 2, 3), np.float32)
    p = np.zeros(3, np.float32)
    with pytest.raises(ShapeError, match="needs input b"):
        _kernel("LinearAttentionGate", [("a", a), ("d", p), ("s", p)], {}, 2)
    with pytest.raises(ShapeError, match="dt_bias"):
        _kernel("LinearAttentionGate", [("a", a), ("d", p[:2]), ("s", p)], {}, 1)
    with pytest.raises(ShapeError, match="decay_scale must be float32"):
        _kernel("LinearAttentionGate", [("a", a), ("d", p), ("s", p.astype(np.float16))],
                {}, 1)


# --------------------------------------------------------------------------------------
# CausalConvWithState, VarlenCausalConvWithState
# --------------------------------------------------------------------------------------


def _conv_reference(x, w, b, history, dilation, activation):
    """x [B, C, L], w [C, 1, k], history [B, C, (k - 1) dilation] -> (y, new history)."""
    k = w.shape[2]
    hist = (k - 1) * dilation
    full = np.concatenate([history, x], -1).astype(np.float64)
    length = x.shape[-1]
    y = np.zeros(x.shape)
    for t in range(length):
        for j in range(k):
            y[..., t] += w[:, 0, j] * full[..., hist + t - (k - 1 - j) * dilation]
    if b is not None:
        y += b[:, None]
    if activation in ("silu", "swish"):
        y = y / (1 + np.exp(-y))
    return y, full[..., full.shape[-1] - hist:]


def _conv_case(rng, b=2, c=5, length=7, k=4, dilation=1, bias=True, past=True,
               dtype=np.float32):
    hist = (k - 1) * dilation
    return [("input", rng.standard_normal((b, c, length)).astype(dtype)),
            ("weight", rng.standard_normal((c, 1, k)).astype(dtype)),
            ("bias", rng.standard_normal(c).astype(dtype) if bias else None),
            ("past_state", rng.standard_normal((b, c, hist)).astype(dtype) if past else None)]


@pytest.mark.parametrize("k, dilation", [(4, 1), (3, 2), (2, 3), (1, 1)])
@pytest.mark.parametrize("activation", ["none", "silu", "swish"])
@pytest.mark.parametrize("bias, past", [(True, True), (False, False)])
def test_causal_conv_with_state(k, dilation, activation, bias, past):
    rng = np.random.default_rng([k, dilation, len(activation), bias])
    inputs = _conv_case(rng, k=k, dilation=dilation, bias=bias, past=past)
    attrs = dict(dilation=dilation, activation=activation)
    y, state = _run_both("CausalConvWithState", inputs, attrs)
    d = dict(inputs)
    history = d["past_state"] if past else np.zeros((2, 5, (k - 1) * dilation))
    ref_y, ref_s = _conv_reference(d["input"], d["weight"], d["bias"], history, dilation,
                                   activation)
    np.testing.assert_allclose(y, ref_y, **REF_TOL)
    np.testing.assert_array_equal(state, ref_s.astype(np.float32))
    inferred = _infer("CausalConvWithState", inputs, attrs)
    assert tuple(inferred[0].shape) == y.shape and tuple(inferred[1].shape) == state.shape


def test_causal_conv_short_input_and_decode_steps():
    """An input shorter than the state, and token-by-token decoding carrying the state,
    equal one call over the whole sequence."""
    rng = np.random.default_rng(1)
    inputs = _conv_case(rng, length=2, k=4)
    _run_both("CausalConvWithState", inputs, {})
    inputs = _conv_case(rng, length=6, k=4, dilation=1)
    whole_y, whole_s = _onegraph("CausalConvWithState", inputs, {})
    state = dict(inputs)["past_state"]
    steps = []
    for t in range(6):
        step = list(inputs)
        step[0] = ("input", inputs[0][1][:, :, t:t + 1])
        step[3] = ("past_state", state)
        y, state = _onegraph("CausalConvWithState", step, {})
        steps.append(y)
    np.testing.assert_allclose(np.concatenate(steps, -1), whole_y, **F32_TOL)
    np.testing.assert_array_equal(state, whole_s)


@pytest.mark.parametrize("channel_dims", [(5,), (2, 3)])
def test_causal_conv_channels_last(channel_dims):
    """channels_last: input [B, L, d_1, ...] and state [B, state_length, d_1, ...]."""
    rng = np.random.default_rng(len(channel_dims))
    c = int(np.prod(channel_dims))
    x = rng.standard_normal((2, 6) + channel_dims).astype(np.float32)
    w = rng.standard_normal((c, 1, 3)).astype(np.float32)
    past = rng.standard_normal((2, 4) + channel_dims).astype(np.float32)
    inputs = [("input", x), ("weight", w), ("bias", None), ("past_state", past)]
    y, state = _run_both("CausalConvWithState", inputs, dict(channels_last=1, dilation=2))
    ref_y, ref_s = _conv_reference(x.reshape(2, 6, c).transpose(0, 2, 1), w, None,
                                   past.reshape(2, 4, c).transpose(0, 2, 1), 2, "none")
    np.testing.assert_allclose(y.reshape(2, 6, c), ref_y.transpose(0, 2, 1), **REF_TOL)
    assert state.shape == past.shape
    assert tuple(_infer("CausalConvWithState", inputs,
                        dict(channels_last=1, dilation=2))[1].shape) == past.shape


def test_causal_conv_float16():
    rng = np.random.default_rng(16)
    _run_both("CausalConvWithState", _conv_case(rng, dtype=np.float16),
              dict(activation="silu"), tol=F16_TOL)


@pytest.mark.parametrize("length, window", [(5, 3), (2, 4)])
def test_causal_conv_state_window(length, window):
    """state_window W (onnxruntime's CPU kernel refuses it): slot j holds the history
    after position L - W + j, slots before the first position zero; past_state's slot
    W - 1 is read."""
    rng = np.random.default_rng([length, window])
    inputs = _conv_case(rng, length=length, k=3)
    d = dict(inputs)
    windowed = rng.standard_normal((window,) + d["past_state"].shape).astype(np.float32)
    inputs[3] = ("past_state", windowed)
    y, present = _onegraph("CausalConvWithState", inputs, dict(state_window=window))
    ref_y, _ = _conv_reference(d["input"], d["weight"], d["bias"], windowed[-1], 1, "none")
    np.testing.assert_allclose(y, ref_y, **REF_TOL)
    assert present.shape == windowed.shape
    for j in range(window):
        end = length - window + j + 1
        if end <= 0:
            assert not present[j].any()
            continue
        _, ref_s = _conv_reference(d["input"][..., :end], d["weight"], d["bias"],
                                   windowed[-1], 1, "none")
        np.testing.assert_array_equal(present[j], ref_s.astype(np.float32))
    with pytest.raises(Exception):
        _run_both("CausalConvWithState", inputs, dict(state_window=window))


def test_causal_conv_errors():
    rng = np.random.default_rng(0)
    inputs = _conv_case(rng)
    with pytest.raises(UnsupportedOpError, match="ndim 2"):
        _kernel("CausalConvWithState", inputs, dict(ndim=2))
    with pytest.raises(UnsupportedOpError, match="state_length"):
        _kernel("CausalConvWithState", inputs, dict(state_length=5))
    with pytest.raises(OpAttributeError, match="activation"):
        _kernel("CausalConvWithState", inputs, dict(activation="gelu"))
    with pytest.raises(OpAttributeError, match="dilation"):
        _kernel("CausalConvWithState", inputs, dict(dilation=0))
    bad = list(inputs)
    bad[3] = ("past_state", inputs[3][1][:, :, :2])
    with pytest.raises(ShapeError, match="past_state"):
        _kernel("CausalConvWithState", bad, {})
    bad = list(inputs)
    bad[1] = ("weight", inputs[1][1][:3])
    with pytest.raises(ShapeError, match="weight"):
        _kernel("CausalConvWithState", bad, {})


def _varlen_case(rng, lengths, c=6, k=4, dilation=1, bias=True, dtype=np.float32):
    n = sum(lengths)
    return [("input", rng.standard_normal((n, c)).astype(dtype)),
            ("weight", rng.standard_normal((c, 1, k)).astype(dtype)),
            ("cumulative_sequence_length",
             np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)),
            ("bias", rng.standard_normal(c).astype(dtype) if bias else None),
            ("initial_state",
             rng.standard_normal((len(lengths), c, (k - 1) * dilation)).astype(dtype))]


@pytest.mark.parametrize("lengths", [(3, 1, 5), (1,), (2, 2)])
@pytest.mark.parametrize("k, dilation, activation", [(4, 1, "none"), (3, 2, "silu"),
                                                     (2, 1, "swish")])
def test_varlen_causal_conv(lengths, k, dilation, activation):
    rng = np.random.default_rng([len(lengths), k, dilation])
    inputs = _varlen_case(rng, lengths, k=k, dilation=dilation, bias=k != 2)
    attrs = dict(dilation=dilation, activation=activation)
    y, state = _run_both("VarlenCausalConvWithState", inputs, attrs)
    d = dict(inputs)
    cu = d["cumulative_sequence_length"]
    for r in range(len(lengths)):
        ref_y, ref_s = _conv_reference(d["input"][cu[r]:cu[r + 1]].T[None], d["weight"],
                                       d["bias"], d["initial_state"][r:r + 1], dilation,
                                       activation)
        np.testing.assert_allclose(y[cu[r]:cu[r + 1]], ref_y[0].T, **REF_TOL)
        np.testing.assert_array_equal(state[r], ref_s[0].astype(np.float32))


def test_varlen_causal_conv_state_update_and_float16():
    """state_update_capacity with capture_count: each request's first tokens (clamped to
    its length and the capacity), zeros after; float16."""
    rng = np.random.default_rng(5)
    inputs = _varlen_case(rng, (3, 1, 5))
    inputs.append(("capture_count", np.array([2, 4, 9], np.int32)))
    y, state, update = _run_both("VarlenCausalConvWithState", inputs,
                                 dict(state_update_capacity=3), 3)
    x = dict(inputs)["input"]
    np.testing.assert_array_equal(update[0, :2], x[0:2])
    np.testing.assert_array_equal(update[1, :1], x[3:4])
    np.testing.assert_array_equal(update[2], x[4:7])
    assert not update[0, 2:].any() and not update[1, 1:].any()
    _run_both("VarlenCausalConvWithState", _varlen_case(rng, (2, 3), dtype=np.float16),
              {}, tol=F16_TOL)


def test_varlen_causal_conv_errors():
    rng = np.random.default_rng(0)
    inputs = _varlen_case(rng, (2, 3))
    bad = list(inputs)
    bad[2] = ("cumulative_sequence_length", np.array([0, 2, 4], np.int32))
    with pytest.raises(ShapeError, match="cumulative_sequence_length"):
        _kernel("VarlenCausalConvWithState", bad, {})
    with pytest.raises(ShapeError, match="capture_count"):
        _kernel("VarlenCausalConvWithState", inputs, dict(state_update_capacity=2))
    with pytest.raises(UnsupportedOpError, match="dynamic"):
        _kernel("VarlenCausalConvWithState",
                inputs + [("c", None), ("kd", np.zeros((5, 2, 6), np.float32)),
                          ("pm", np.zeros((5, 1), np.float32))], {})
    bad = list(inputs)
    bad[4] = ("initial_state", inputs[4][1][:1])
    with pytest.raises(ShapeError, match="initial_state"):
        _kernel("VarlenCausalConvWithState", bad, {})


def test_sequence_ops_round_trip_through_to_onnx():
    """to_onnx writes the ops back as they came; onnxruntime runs the export."""
    rng = np.random.default_rng(9)
    la_inputs, la_attrs = _la_case(rng)
    gdn_inputs, gdn_attrs = _gdn_case(rng)
    for op, inputs, attrs in (("LinearAttention", la_inputs, la_attrs),
                              ("GatedDeltaNet", gdn_inputs, gdn_attrs),
                              ("CausalConvWithState", _conv_case(rng), dict(activation="silu")),
                              ("VarlenCausalConvWithState", _varlen_case(rng, (2, 3)), {}),
                              ("AttnLSTM", _attn_lstm_case(rng, layer=5), dict(hidden_size=4))):
        model = _model(op, inputs, attrs, 2)
        feeds = _feeds(inputs)
        exported = to_onnx(from_onnx(model))
        assert [n.op_type for n in exported.graph.node] == [op]
        want = ort_session(model).run(None, feeds)
        for g, w in zip(ort_session(exported).run(None, feeds), want):
            np.testing.assert_array_equal(g, w)


# --------------------------------------------------------------------------------------
# AttnLSTM
# --------------------------------------------------------------------------------------


def _attn_lstm_case(rng, steps=4, batch=3, isize=5, hidden=4, depth=6, mem_steps=5, attn=3,
                    layer=None, dirs=1, seq=None, mem=None, bias=True, peep=False,
                    initial=False, dtype=np.float32):
    """AttnLSTM inputs in the op's order (W's attention part sized by the attention
    layer when `layer` is given, else by the memory depth)."""
    att = layer or depth

    def f(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(dtype)

    return [("X", f(steps, batch, isize)), ("W", f(dirs, 4 * hidden, isize + att)),
            ("R", f(dirs, 4 * hidden, hidden)), ("B", f(dirs, 8 * hidden) if bias else None),
            ("sequence_lens", None if seq is None else np.array(seq, np.int32)),
            ("initial_h", f(dirs, batch, hidden) if initial else None),
            ("initial_c", f(dirs, batch, hidden) if initial else None),
            ("P", f(dirs, 3 * hidden) if peep else None),
            ("QW", f(dirs, hidden, attn)), ("MW", f(dirs, depth, attn)), ("V", f(dirs, attn)),
            ("M", f(batch, mem_steps, depth)),
            ("memory_seq_lens", None if mem is None else np.array(mem, np.int32)),
            ("AW", f(dirs, depth + hidden, layer) if layer else None)]


@pytest.mark.parametrize("case, attrs", [
    ({}, {}),
    (dict(layer=7), {}),
    (dict(mem=[5, 2, 3]), {}),
    (dict(seq=[4, 2, 3], layer=7), {}),
    (dict(peep=True, initial=True), {}),
    (dict(seq=[4, 2, 3], layer=7, mem=[1, 5, 2]), dict(direction="reverse")),
    (dict(dirs=2, seq=[4, 1, 3], layer=7, mem=[5, 2, 3], peep=True, initial=True),
     dict(direction="bidirectional")),
    (dict(bias=False), dict(clip=0.3, input_forget=1)),
    ({}, dict(activations=["HardSigmoid", "Tanh", "Relu"], activation_alpha=[0.3],
              activation_beta=[0.4])),
])
def test_attn_lstm(case, attrs):
    """Every output against onnxruntime's CPU kernel (which needs hidden_size set)."""
    rng = np.random.default_rng(len(case) * 10 + len(attrs))
    inputs = _attn_lstm_case(rng, **case)
    attrs = dict(attrs, hidden_size=4)
    y, y_h, y_c = _run_both("AttnLSTM", inputs, attrs, 3)
    inferred = _infer("AttnLSTM", inputs, attrs)
    assert [tuple(i.shape) for i in inferred] == [y.shape, y_h.shape, y_c.shape]


def test_attn_lstm_hidden_size_from_r_and_float64():
    """hidden_size may be left out (R gives it); float64 (whose CPU kernel onnxruntime
    leaves unimplemented) agrees with onnxruntime's float32 result on the same values."""
    rng = np.random.default_rng(64)
    inputs = _attn_lstm_case(rng, seq=[3, 4, 1], layer=5, peep=True)
    want = _run_both("AttnLSTM", inputs, dict(hidden_size=4), 3)
    got = _onegraph("AttnLSTM", inputs, {}, 3)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    wide = [(k, v if v is None or v.dtype != np.float32 else v.astype(np.float64))
            for k, v in inputs]
    for g, w in zip(_onegraph("AttnLSTM", wide, {}, 3), want):
        assert g.dtype == np.float64
        np.testing.assert_allclose(g, w, **F32_TOL)


def test_attn_lstm_errors():
    rng = np.random.default_rng(0)
    inputs = _attn_lstm_case(rng)
    with pytest.raises(ShapeError, match="attention inputs"):
        _kernel("AttnLSTM", inputs[:8], {}, 3)
    bad = list(inputs)
    bad[1] = ("W", inputs[1][1][:, :, :5])
    with pytest.raises(ShapeError, match="W must be"):
        _kernel("AttnLSTM", bad, {}, 3)
    bad = list(inputs)
    bad[4] = ("sequence_lens", np.array([0, 2, 3], np.int32))
    with pytest.raises(ShapeError, match="sequence_lens"):
        _kernel("AttnLSTM", bad, {}, 3)
    bad = list(inputs)
    bad[12] = ("memory_seq_lens", np.array([6, 2, 3], np.int32))
    with pytest.raises(ShapeError, match="memory_seq_lens"):
        _kernel("AttnLSTM", bad, {}, 3)
    with pytest.raises(ShapeError, match="hidden_size 5"):
        _kernel("AttnLSTM", inputs, dict(hidden_size=5), 3)
    with pytest.raises(OpAttributeError, match="direction"):
        _kernel("AttnLSTM", inputs, dict(direction="sideways"), 3)
    with pytest.raises(OpAttributeError, match="activation"):
        _kernel("AttnLSTM", inputs, dict(activations=["Gelu", "Tanh", "Tanh"]), 3)

"""Operators: onnxruntime's recurrent, state-space and linear-attention contrib ops
(domain "com.microsoft"), as onnxruntime 1.32's schemas define them.

* LinearAttention: the linear-attention recurrence over [B, T, H * D] packed heads with
  an explicit state S [B, H_kv, d_k, d_v]. Per token and KV head, by update_rule:
  linear S += k v^T; gated S = exp(g) S + k v^T; delta S += beta k (v - S^T k)^T;
  gated_delta S = exp(g) S + beta k (v - exp(g) S^T k)^T; then o = scale * S^T q
  (scale 0 = 1 / sqrt(d_k)). The decay g is per head ([B, T, H_kv]) or per key
  dimension ([B, T, H_kv * d_k], a diagonal decay of S's rows); beta [B, T, H_kv] or
  [B, T, 1]. H_q > H_kv is grouped-query attention (query head h reads KV head
  h / (H_q / H_kv)); H_kv > H_q the inverse (KV head h reads query head
  h / (H_kv / H_q)); the output has max(H_q, H_kv) heads. state_window W > 0 keeps the
  states after the last W tokens in a leading axis (past_state's slot W - 1 is read).
* GatedDeltaNet: the same recurrence, token-major: query [N, H_q, d_k] (or
  [B, S, H_q, d_k]), key [N, H_q, d_k], value [N, H_v, d_v], H_v a multiple of H_q (each
  query/key head shared by H_v / H_q value heads), or one packed QKV tensor whose head
  counts come from initial_state; ragged requests by cu_seqlens, else a uniform split
  into initial_state's batch. The state is V-major [B, H_v, d_v, d_k] and float32.
  gate_activation 'softplus' (alias 'qwen') computes g = -exp(a_log) * softplus(decay
  + dt_bias), 'sigmoid' (alias 'kda') g = gate_lower_bound * sigmoid(exp(a_log) *
  (decay + dt_bias)); with gate_activation 'none', a_log / dt_bias are refused (as
  onnxruntime). beta_activation 'sigmoid' applies a sigmoid; qk_l2_norm=1 scales
  each query and key head vector by 1 / sqrt(sum(x^2) + 1e-12) first.
* LinearAttentionGate: decay = decay_scale * softplus(a + dt_bias), beta = sigmoid(b).
* CausalConvWithState: the causal depthwise 1-D convolution of Mamba / Gated DeltaNet
  blocks with a carry state: the state's (k - 1) * dilation positions are prepended to
  the input, tap j of output t reads position t - (k - 1 - j) * dilation, the optional
  bias is added and silu (alias swish) applied; present_state holds the last
  (k - 1) * dilation positions of state + input. channels_last=1 takes input and state
  sequence-major ([B, L, d_1, ...]); state_window W > 0 keeps the states after the last
  W positions.
* VarlenCausalConvWithState: the same over a token-major [N, C] batch of ragged
  requests (cumulative_sequence_length), one carry state per request; the optional
  state_update holds each request's first capture_count input tokens.

* AttnLSTM: an LSTM (ONNX LSTM's gates i, o, f, c, peepholes, clip, input_forget,
  activations, directions and sequence_lens) wrapped by an AttentionWrapper: each step's
  input is concatenated with the previous step's attention state (zeros at first), and
  the step's output H_t queries a Bahdanau attention over the memory M: keys = M @ MW,
  alignment = softmax over the memory's valid steps (memory_seq_lens) of
  sum(V * tanh(keys + H_t @ QW)), context = alignment @ M; the attention state is the
  context, or [H_t, context] @ AW with the attention layer. Finished sequences output
  zeros and keep their last state. hidden_size may be left out (R gives it; onnxruntime's
  kernel needs it). float64 is computed in float64 (onnxruntime leaves it unimplemented).
  The alignment softmax subtracts the row maximum (onnxruntime's does not, so scores past
  float32's exp range give it NaN or a uniform alignment).

Arithmetic: float32 (float16 / bfloat16 inputs widened once, outputs rounded once);
the recurrences run token by token in a Python loop, vectorised over the requests,
heads and features (requests of different lengths step together while they last).

onnxruntime's CPU kernels refuse these forms, run here by the schema (no oracle):
the state_window of CausalConvWithState and LinearAttention. Refused here as CUDA-only extensions:
CausalConvWithState's ndim 2 and 3 (onnxruntime's CPU kernel runs ndim 1 only) and its
state_update_capacity / state_length / input_channel_offset / input_channels /
state_channels_last, GatedDeltaNet's compact state updates (state_update_capacity > 0),
VarlenCausalConvWithState's dynamic mode (kernel_delta, previous_mask, and group_size /
delta_offset other than 1 / 0).
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ResourceExhaustedError, ShapeError, UnsupportedOpError
from .registry import NUM_OUTPUTS, TensorInfo, define

_DOMAIN = "com.microsoft"
_F32 = np.float32
_FLOAT_NAMES = ("float32", "float16", "bfloat16")
_RULES = ("linear", "gated", "delta", "gated_delta")
_L2_EPS = 1e-12


def _padded(inputs, n):
    """The first n inputs, None for those not given."""
    return (list(inputs) + [None] * n)[:n]


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _float(op, what, x):
    x = np.asarray(x)
    if x.dtype.name not in _FLOAT_NAMES:
        raise ShapeError(f"{op}: {what} must be float32, float16 or bfloat16, got {x.dtype}")
    return x


def _float32_input(op, what, x):
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise ShapeError(f"{op}: {what} must be float32, got {x.dtype}")
    return x


def _wanted(attrs, most):
    return max(1, min(most, attrs.get(NUM_OUTPUTS, most)))


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return _F32(1) / (_F32(1) + np.exp(-x))


def _softplus(x):
    with np.errstate(over="ignore"):
        return np.logaddexp(_F32(0), x).astype(_F32)


def _silu(x):
    return x * _sigmoid(x)


# --------------------------------------------------------------------------------------
# The shared recurrence
# --------------------------------------------------------------------------------------


def _recurrence(q, k, v, decay, beta, state, starts, lengths, rule, scale, window=0,
                total=None):
    """The linear-attention recurrence over token-major float32 inputs.

    q [N, Hq, dk]; k [N, Hs, dk] and v [N, Hs, dv] at the state's heads Hs; decay
    [N, Hs, 1 or dk] or None; beta [N, Hs] or None; state [R, Hs, dk, dv] (updated in
    place); request r holds tokens starts[r] .. starts[r] + lengths[r]. Query heads
    map to state heads by grouping (Hq a multiple of Hs: query head h reads state head
    h / (Hq / Hs)) or by sharing (Hs a multiple of Hq). Returns (output
    [N, max(Hq, Hs), dv], the states after each request's last `window` tokens
    [window, R, Hs, dk, dv] or None).
    """
    n, hq, dk = q.shape
    hs, dv = v.shape[1], v.shape[2]
    out = np.zeros((n, max(hq, hs), dv), _F32)
    group = hq // hs if hq >= hs else 1
    share = hs // hq if hs > hq else 1
    requests = state.shape[0]
    kept = np.zeros((window, requests, hs, dk, dv), _F32) if window else None
    longest = int(lengths.max(initial=0))
    for t in range(longest):
        live = np.nonzero(lengths > t)[0]
        rows = starts[live] + t
        s = state[live]
        kt, vt = k[rows], v[rows]
        if decay is not None:
            s *= np.exp(decay[rows])[..., None]
        if rule in ("delta", "gated_delta"):
            pred = np.matmul(kt[:, :, None, :], s)[:, :, 0, :]
            s += beta[rows][:, :, None, None] * kt[:, :, :, None] * (vt - pred)[:, :, None, :]
        else:
            s += kt[:, :, :, None] * vt[:, :, None, :]
        state[live] = s
        qt = q[rows]
        if group > 1 or hq == hs:
            qg = qt.reshape(len(rows), hs, group, dk)
            o = np.matmul(qg, s).reshape(len(rows), hs * group, dv)
        else:
            qg = np.repeat(qt, share, axis=1)[:, :, None, :]
            o = np.matmul(qg, s)[:, :, 0, :]
        out[rows] = o * scale
        if window:
            # the state after local token t is slot W - (length - t) when that is >= 0
            slot = window - (lengths[live] - t)
            keep = slot >= 0
            kept[slot[keep], live[keep]] = s[keep]
    return out, kept


def _rule(op, attrs):
    rule = _text(attrs["update_rule"])
    if rule not in _RULES:
        raise OpAttributeError(f"{op}: update_rule {rule!r} is not one of "
                               f"{', '.join(_RULES)}")
    return rule


def _check_gates(op, rule, decay, beta):
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gated != (decay is not None):
        raise ShapeError(f"{op}: decay must be given exactly when update_rule is 'gated' or "
                         f"'gated_delta' (update_rule {rule!r})")
    if delta != (beta is not None):
        raise ShapeError(f"{op}: beta must be given exactly when update_rule is 'delta' or "
                         f"'gated_delta' (update_rule {rule!r})")


# --------------------------------------------------------------------------------------
# LinearAttention
# --------------------------------------------------------------------------------------


def _linear_attention_problem(attrs):
    if attrs["q_num_heads"] < 1 or attrs["kv_num_heads"] < 1:
        return "q_num_heads and kv_num_heads must be positive"
    hq, hkv = attrs["q_num_heads"], attrs["kv_num_heads"]
    if max(hq, hkv) % min(hq, hkv):
        return f"q_num_heads ({hq}) and kv_num_heads ({hkv}): one must divide the other"
    if not 0 <= attrs["state_window"] <= 8:
        return f"state_window must be in [0, 8], got {attrs['state_window']}"
    if _text(attrs["update_rule"]) not in _RULES:
        return f"update_rule {attrs['update_rule']!r} is not one of {', '.join(_RULES)}"
    return None


def _la_dims(op, q, k, v, attrs):
    """(B, T, dk, dv) of LinearAttention's packed [B, T, H * D] inputs, checked."""
    hq, hkv = attrs["q_num_heads"], attrs["kv_num_heads"]
    for name, x in (("query", q), ("key", k), ("value", v)):
        if x.ndim != 3:
            raise ShapeError(f"{op}: {name} must be 3-D [B, T, H * D], got {list(x.shape)}")
    b, t = q.shape[:2]
    if k.shape[:2] != (b, t) or v.shape[:2] != (b, t):
        raise ShapeError(f"{op}: query, key and value must share [B, T]: {list(q.shape)}, "
                         f"{list(k.shape)}, {list(v.shape)}")
    if q.shape[2] % hq or v.shape[2] % hkv:
        raise ShapeError(f"{op}: query's last dim {q.shape[2]} must be a multiple of "
                         f"q_num_heads {hq}, value's {v.shape[2]} of kv_num_heads {hkv}")
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    if k.shape[2] != hkv * dk:
        raise ShapeError(f"{op}: key's last dim {k.shape[2]} must be kv_num_heads * d_k "
                         f"= {hkv} * {dk}")
    return b, t, dk, dv


def _linear_attention_kernel(inputs, attrs, ctx):
    """LinearAttention (see the module doc): (output [B, T, max(H_q, H_kv) * d_v] of
    query's type, present_state of past_state's type, query's without one).

    Raises:
        ShapeError: a type or shape does not fit (names it), or decay / beta do not
            match update_rule.
    """
    op = "LinearAttention"
    q, k, v, past, decay, beta = _padded(inputs, 6)
    q, k, v = (_float(op, n, x) for n, x in (("query", q), ("key", k), ("value", v)))
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise ShapeError(f"{op}: key and value must be {q.dtype} as query is")
    rule = _rule(op, attrs)
    _check_gates(op, rule, decay, beta)
    b, t, dk, dv = _la_dims(op, q, k, v, attrs)
    hq, hkv, window = attrs["q_num_heads"], attrs["kv_num_heads"], attrs["state_window"]
    state_shape = (b, hkv, dk, dv)
    # without past_state, present_state has query's type (onnxruntime's T), else past's
    state_dtype = q.dtype
    if past is not None:
        past = _float(op, "past_state", past)
        state_dtype = past.dtype
        want = ((window,) if window else ()) + state_shape
        if past.shape != want:
            raise ShapeError(f"{op}: past_state of shape {list(past.shape)} must be "
                             f"{list(want)}")
        state = np.array(past[-1] if window else past, _F32)
    else:
        state = np.zeros(state_shape, _F32)
    g = None
    if decay is not None:
        decay = _float(op, "decay", decay)
        if decay.shape not in ((b, t, hkv), (b, t, hkv * dk)):
            raise ShapeError(f"{op}: decay of shape {list(decay.shape)} must be [B, T, "
                             f"H_kv] = {[b, t, hkv]} or [B, T, H_kv * d_k] = "
                             f"{[b, t, hkv * dk]}")
        g = decay.astype(_F32).reshape(b * t, hkv, -1)
    bt = None
    if beta is not None:
        beta = _float(op, "beta", beta)
        if beta.shape not in ((b, t, hkv), (b, t, 1)):
            raise ShapeError(f"{op}: beta of shape {list(beta.shape)} must be [B, T, H_kv] "
                             f"= {[b, t, hkv]} or [B, T, 1]")
        bt = np.broadcast_to(beta.astype(_F32).reshape(b * t, -1), (b * t, hkv))
    scale = _F32(attrs["scale"] or 1.0 / np.sqrt(dk))
    starts = np.arange(b, dtype=np.int64) * t
    lengths = np.full(b, t, np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        out, kept = _recurrence(q.astype(_F32).reshape(b * t, hq, dk),
                                k.astype(_F32).reshape(b * t, hkv, dk),
                                v.astype(_F32).reshape(b * t, hkv, dv), g, bt, state,
                                starts, lengths, rule, scale, window)
    y = out.reshape(b, t, -1).astype(q.dtype)
    present = (kept if window else state).astype(state_dtype)
    return (y, present)[:_wanted(attrs, 2)]


def _linear_attention_infer(attrs, inputs):
    q, k, v, past = _padded(inputs, 4)
    state_dtype = past.dtype if past is not None else q.dtype
    hq, hkv, window = attrs["q_num_heads"], attrs["kv_num_heads"], attrs["state_window"]
    out_shape = state = None
    if q.shape is not None and v is not None and v.shape is not None and \
            len(q.shape) == 3 and len(v.shape) == 3:
        dv = None if v.shape[2] is None else v.shape[2] // hkv
        dk = None if q.shape[2] is None else q.shape[2] // hq
        out_shape = (q.shape[0], q.shape[1], None if dv is None else max(hq, hkv) * dv)
        state = ((window,) if window else ()) + (q.shape[0], hkv, dk, dv)
    return [TensorInfo(q.dtype, out_shape), TensorInfo(state_dtype, state)]


# --------------------------------------------------------------------------------------
# GatedDeltaNet
# --------------------------------------------------------------------------------------

_GATE_ACTIVATIONS = {"none": "none", "softplus": "softplus", "qwen": "softplus",
                     "sigmoid": "sigmoid", "kda": "sigmoid"}


def _gdn_problem(attrs):
    if _text(attrs["update_rule"]) not in _RULES:
        return f"update_rule {attrs['update_rule']!r} is not one of {', '.join(_RULES)}"
    if _text(attrs["gate_activation"]) not in _GATE_ACTIVATIONS:
        return (f"gate_activation {attrs['gate_activation']!r} is not one of "
                f"{', '.join(_GATE_ACTIVATIONS)}")
    if _text(attrs["beta_activation"]) not in ("none", "sigmoid"):
        return f"beta_activation {attrs['beta_activation']!r} is not 'none' or 'sigmoid'"
    if not 0 <= attrs["state_update_capacity"] <= 8:
        return f"state_update_capacity must be in [0, 8], got {attrs['state_update_capacity']}"
    return None


def _gdn_heads(op, q, k, v, state):
    """(q [N, Hq, dk], k [N, Hq, dk], v [N, Hv, dv], leading dims of the output) from the
    separate or packed inputs."""
    if k is None and v is None:
        if state is None:
            raise ShapeError(f"{op}: initial_state is required for packed QKV (it gives "
                             f"the head counts and sizes)")
        hv, dv, dk = state.shape[1:]
        if q.ndim not in (2, 3):
            raise ShapeError(f"{op}: packed QKV must be [N, width] or [B, S, width], got "
                             f"{list(q.shape)}")
        lead = q.shape[:-1]
        width = q.shape[-1] - hv * dv
        if width <= 0 or width % (2 * dk):
            raise ShapeError(f"{op}: packed QKV width {q.shape[-1]} does not fit "
                             f"2 * H_q * {dk} + {hv} * {dv}")
        hq = width // (2 * dk)
        flat = q.reshape(int(np.prod(lead, dtype=np.int64)), q.shape[-1])
        return (flat[:, :hq * dk].reshape(-1, hq, dk),
                flat[:, hq * dk:2 * hq * dk].reshape(-1, hq, dk),
                flat[:, 2 * hq * dk:].reshape(-1, hv, dv), lead)
    if k is None or v is None:
        raise ShapeError(f"{op}: key and value must both be given, or both omitted (packed "
                         f"QKV)")
    if q.ndim not in (3, 4) or k.ndim != q.ndim or v.ndim != q.ndim:
        raise ShapeError(f"{op}: query, key and value must all be [N, H, D] or [B, S, H, D], "
                         f"got {list(q.shape)}, {list(k.shape)}, {list(v.shape)}")
    lead = q.shape[:-2]
    if k.shape != q.shape or v.shape[:-2] != lead:
        raise ShapeError(f"{op}: key must have query's shape {list(q.shape)} and value its "
                         f"leading dims, got {list(k.shape)} and {list(v.shape)}")
    n = int(np.prod(lead, dtype=np.int64))
    return (q.reshape((n,) + q.shape[-2:]), k.reshape((n,) + k.shape[-2:]),
            v.reshape((n,) + v.shape[-2:]), lead)


def _gdn_requests(op, cu, n, lead, state):
    """(starts, lengths) of the requests: from cu_seqlens, else a uniform split."""
    if cu is not None:
        cu = np.asarray(cu)
        if cu.dtype != np.int32 or cu.ndim != 1 or cu.size < 2:
            raise ShapeError(f"{op}: cu_seqlens must be int32 [batch + 1], got {cu.dtype} "
                             f"{list(cu.shape)}")
        if len(lead) != 1:
            raise ShapeError(f"{op}: cu_seqlens needs the token-major rank-3 spelling")
        cu = cu.astype(np.int64)
        if cu[0] != 0 or cu[-1] != n or (np.diff(cu) < 0).any():
            raise ShapeError(f"{op}: cu_seqlens must rise from 0 to the {n} tokens, got "
                             f"{cu.tolist()}")
        return cu[:-1], np.diff(cu)
    if len(lead) == 2:
        batch = lead[0]
    elif state is not None:
        batch = state.shape[0]
    else:
        raise ShapeError(f"{op}: without cu_seqlens, initial_state (or the [B, S, ...] "
                         f"spelling) must give the batch size")
    if batch == 0 or n % batch:
        raise ShapeError(f"{op}: {n} tokens do not split evenly into {batch} requests")
    per = n // batch
    return np.arange(batch, dtype=np.int64) * per, np.full(batch, per, np.int64)


def _gdn_decay(op, decay, n, hv, dk, attrs, a_log, dt_bias):
    """The effective log-space decay, float32 [N, Hv, 1 or dk]."""
    decay = _float(op, "decay", decay)
    if decay.size not in (n * hv, n * hv * dk):
        raise ShapeError(f"{op}: decay of shape {list(decay.shape)} must hold N * H_v = "
                         f"{n} * {hv} or N * H_v * d_k values")
    g = decay.astype(_F32).reshape(n, hv, -1)
    act = _GATE_ACTIVATIONS[_text(attrs["gate_activation"])]
    if act == "none":
        return g
    if a_log is None or dt_bias is None:
        raise ShapeError(f"{op}: gate_activation {attrs['gate_activation']!r} needs a_log "
                         f"and dt_bias")
    a_log = _float32_input(op, "a_log", a_log)
    dt_bias = _float32_input(op, "dt_bias", dt_bias)
    if a_log.shape != (hv,):
        raise ShapeError(f"{op}: a_log of shape {list(a_log.shape)} must be [H_v] = [{hv}]")
    if dt_bias.size != g.shape[1] * g.shape[2] and dt_bias.size != hv:
        raise ShapeError(f"{op}: dt_bias of shape {list(dt_bias.shape)} must be [H_v] = "
                         f"[{hv}], or [H_v, d_k] with a per-key-dimension decay")
    bias = dt_bias.reshape(hv, -1)
    a = np.exp(a_log)[:, None]
    if act == "softplus":
        return -a * _softplus(g + bias)
    return _F32(attrs["gate_lower_bound"]) * _sigmoid(a * (g + bias))


def _l2_normalize(x):
    return x / np.sqrt((x * x).sum(axis=-1, keepdims=True) + _F32(_L2_EPS))


def _gated_delta_net_kernel(inputs, attrs, ctx):
    """GatedDeltaNet (see the module doc): (output [..., max(H_q, H_v), d_v] of query's
    type, final_state float32 [B, H_v, d_v, d_k]).

    Raises:
        ShapeError: a type or shape does not fit (names it), decay / beta do not match
            update_rule, or the batch cannot be found.
        UnsupportedOpError: compact state updates (state_update_capacity > 0).
    """
    op = "GatedDeltaNet"
    (q, k, v, cu, decay, beta, state, a_log, dt_bias, capture,
     active) = _padded(inputs, 11)
    if attrs["state_update_capacity"] or capture is not None:
        raise UnsupportedOpError(f"{op}: compact state updates (state_update_capacity > 0, "
                                 f"capture_count) are not supported")
    q = _float(op, "query", q)
    for name, x in (("key", k), ("value", v)):
        if x is not None and np.asarray(x).dtype != q.dtype:
            raise ShapeError(f"{op}: {name} must be {q.dtype} as query is")
    if state is not None:
        state = _float32_input(op, "initial_state", state)
        if state.ndim != 4:
            raise ShapeError(f"{op}: initial_state must be [B, H_v, d_v, d_k], got "
                             f"{list(state.shape)}")
    rule = _rule(op, attrs)
    _check_gates(op, rule, decay, beta)
    gate_act = _GATE_ACTIVATIONS.get(_text(attrs["gate_activation"]), "none")
    if (a_log is not None or dt_bias is not None) and gate_act == "none":
        # they would be ignored silently; onnxruntime refuses them too
        raise ShapeError(f"{op}: a_log and dt_bias need gate_activation softplus or "
                         f"sigmoid (gate_activation {attrs['gate_activation']!r})")
    qs, ks, vs, lead = _gdn_heads(op, q, None if k is None else np.asarray(k),
                                  None if v is None else np.asarray(v), state)
    n, hq, dk = qs.shape
    hv, dv = vs.shape[1:]
    if ks.shape[1] != hq or hq == 0 or hv % hq:
        raise ShapeError(f"{op}: H_k ({ks.shape[1]}) must equal H_q ({hq}) and H_v ({hv}) "
                         f"be a positive multiple of it")
    starts, lengths = _gdn_requests(op, cu, n, lead, state)
    batch = len(starts)
    if state is None:
        state = np.zeros((batch, hv, dv, dk), _F32)
    elif state.shape != (batch, hv, dv, dk):
        raise ShapeError(f"{op}: initial_state of shape {list(state.shape)} must be "
                         f"[B, H_v, d_v, d_k] = {[batch, hv, dv, dk]}")
    with np.errstate(over="ignore", invalid="ignore"):
        g = None if decay is None else _gdn_decay(op, decay, n, hv, dk, attrs, a_log,
                                                  dt_bias)
        bt = None
        if beta is not None:
            beta = _float(op, "beta", beta)
            if beta.size != n * hv:
                raise ShapeError(f"{op}: beta of shape {list(beta.shape)} must hold N * H_v "
                                 f"= {n} * {hv} values")
            bt = beta.astype(_F32).reshape(n, hv)
            if _text(attrs["beta_activation"]) == "sigmoid":
                bt = _sigmoid(bt)
        qf, kf, vf = qs.astype(_F32), ks.astype(_F32), vs.astype(_F32)
        if attrs["qk_l2_norm"]:
            qf, kf = _l2_normalize(qf), _l2_normalize(kf)
        share = hv // hq
        kf = np.repeat(kf, share, axis=1)
        s = np.ascontiguousarray(state.transpose(0, 1, 3, 2), _F32)
        scale = _F32(attrs["scale"] or 1.0 / np.sqrt(dk))
        out, _ = _recurrence(qf, kf, vf, g, bt, s, starts, lengths, rule, scale)
    y = out.reshape(tuple(lead) + out.shape[1:]).astype(q.dtype)
    final = np.ascontiguousarray(s.transpose(0, 1, 3, 2))
    return (y, final)[:_wanted(attrs, 2)]


def _gated_delta_net_infer(attrs, inputs):
    q, k, v, cu, _, _, state = _padded(inputs, 7)
    shape = None
    if q.shape is not None and v is not None and v.shape is not None and \
            len(q.shape) in (3, 4) and len(v.shape) == len(q.shape):
        hq, hv = q.shape[-2], v.shape[-2]
        heads = None if None in (hq, hv) else max(hq, hv)
        shape = tuple(q.shape[:-2]) + (heads, v.shape[-1])
    elif q.shape is not None and k is None and v is None:
        hv_dv = (None, None) if state is None or state.shape is None else state.shape[1:3]
        shape = tuple(q.shape[:-1]) + tuple(hv_dv)
    final = (None,) * 4
    if state is not None and state.shape is not None:
        final = tuple(state.shape)
    elif cu is not None and cu.shape is not None and len(cu.shape) == 1 and v is not None \
            and v.shape is not None and len(v.shape) >= 2 and q.shape is not None \
            and len(q.shape) >= 1:
        # Only shapes of the right ranks say anything; the kernel names wrong ranks.
        batch = None if cu.shape[0] is None else cu.shape[0] - 1
        final = (batch, v.shape[-2], v.shape[-1], q.shape[-1])
    return [TensorInfo(q.dtype, shape), TensorInfo(np.dtype(np.float32), final)]


# --------------------------------------------------------------------------------------
# LinearAttentionGate
# --------------------------------------------------------------------------------------


def _linear_attention_gate_kernel(inputs, attrs, ctx):
    """decay = decay_scale * softplus(a + dt_bias), beta = sigmoid(b), in float32,
    returned in a's type.

    Raises:
        ShapeError: a type or shape does not fit (names it).
    """
    op = "LinearAttentionGate"
    a, dt_bias, scale, b = _padded(inputs, 4)
    a = _float(op, "a", a)
    if a.ndim == 0:
        raise ShapeError(f"{op}: a must have a last (head) axis")
    heads = a.shape[-1]
    dt_bias = _float32_input(op, "dt_bias", dt_bias)
    scale = _float32_input(op, "decay_scale", scale)
    for name, p in (("dt_bias", dt_bias), ("decay_scale", scale)):
        if p.shape != (heads,):
            raise ShapeError(f"{op}: {name} of shape {list(p.shape)} must be [H] = [{heads}]")
    decay = (scale * _softplus(a.astype(_F32) + dt_bias)).astype(a.dtype)
    if _wanted(attrs, 2) < 2:
        return (decay,)
    if b is None:
        raise ShapeError(f"{op}: the beta output needs input b")
    b = np.asarray(b)
    if b.dtype != a.dtype or b.shape != a.shape:
        raise ShapeError(f"{op}: b must be {a.dtype} of a's shape {list(a.shape)}, got "
                         f"{b.dtype} {list(b.shape)}")
    return decay, _sigmoid(b.astype(_F32)).astype(a.dtype)


def _linear_attention_gate_infer(attrs, inputs):
    a = inputs[0]
    return [TensorInfo(a.dtype, a.shape), TensorInfo(a.dtype, a.shape)]


# --------------------------------------------------------------------------------------
# CausalConvWithState, VarlenCausalConvWithState
# --------------------------------------------------------------------------------------

_CONV_ACTIVATIONS = ("none", "silu", "swish")


def _conv_problem(attrs):
    if attrs["dilation"] < 1:
        return f"dilation must be at least 1, got {attrs['dilation']}"
    if _text(attrs["activation"]) not in _CONV_ACTIVATIONS:
        return f"activation {attrs['activation']!r} is not 'none', 'silu' or 'swish'"
    if not 0 <= attrs["state_update_capacity"] <= 8:
        return f"state_update_capacity must be in [0, 8], got {attrs['state_update_capacity']}"
    return None


def _varlen_conv_problem(attrs):
    """What is wrong with VarlenCausalConvWithState's attributes, or None."""
    problem = _conv_problem(attrs)
    if problem:
        return problem
    # group_size and delta_offset shape the dynamic mode (kernel_delta), refused here;
    # other values without it would be ignored silently (onnxruntime refuses them).
    if attrs["group_size"] != 1 or attrs["delta_offset"] != 0:
        return (f"group_size ({attrs['group_size']}) and delta_offset "
                f"({attrs['delta_offset']}) other than 1 and 0 need the dynamic mode "
                f"(kernel_delta, CUDA only), which is not supported")
    return None


def _causal_conv_problem(attrs):
    problem = _conv_problem(attrs)
    if problem:
        return problem
    if attrs["ndim"] not in (1, 2, 3):
        return f"ndim must be 1, 2 or 3, got {attrs['ndim']}"
    if attrs["channels_last"] not in (0, 1):
        # onnxruntime refuses others too; a truthiness test would read 2 as 1
        return f"channels_last must be 0 or 1, got {attrs['channels_last']}"
    if attrs["channels_last"] and attrs["ndim"] != 1:
        return "channels_last needs ndim = 1"
    if not 0 <= attrs["state_window"] <= 8:
        return f"state_window must be in [0, 8], got {attrs['state_window']}"
    return None


_MAX_STATE_VALUES = 1 << 29  # 2 GiB of float32


def _check_history(op, batch, channels, hist):
    """Refuses a carry state past 2 GiB (its length comes from the kernel size and the
    dilation attribute) before anything is allocated."""
    if batch * channels * hist > _MAX_STATE_VALUES:
        raise ResourceExhaustedError(f"{op}: a carry state of {batch} x {channels} x {hist} "
                                     f"values (the kernel size and dilation) exceeds 2 GiB")


def _depthwise_taps(op, weight, bias, channels, dtype):
    """(taps float32 [C, k], bias float32 [C] or None)."""
    weight = np.asarray(weight)
    if weight.dtype != dtype or weight.ndim != 3 or weight.shape[:2] != (channels, 1) or \
            weight.shape[2] < 1:
        raise ShapeError(f"{op}: weight must be {dtype} [channels, 1, k] with channels = "
                         f"{channels}, got {weight.dtype} {list(weight.shape)}")
    if bias is not None:
        bias = np.asarray(bias)
        if bias.dtype != dtype or bias.shape != (channels,):
            raise ShapeError(f"{op}: bias must be {dtype} [channels] = [{channels}], got "
                             f"{bias.dtype} {list(bias.shape)}")
        bias = bias.astype(_F32)
    return weight[:, 0, :].astype(_F32), bias


def _conv_sequence(x, taps, bias, dilation, act):
    """The causal convolution of x [..., C, P + L] (P = (k - 1) * dilation positions of
    history first): [..., C, L], float32."""
    k = taps.shape[1]
    length = x.shape[-1] - (k - 1) * dilation
    y = np.zeros(x.shape[:-1] + (length,), _F32)
    for j in range(k):
        y += taps[:, j, None] * x[..., j * dilation:j * dilation + length]
    if bias is not None:
        y += bias[:, None]
    if act in ("silu", "swish"):
        with np.errstate(over="ignore"):
            y = _silu(y)
    return y


def _causal_conv_kernel(inputs, attrs, ctx):
    """CausalConvWithState, ndim 1 (see the module doc): (output of input's shape and
    type, present_state).

    Raises:
        ShapeError: a type or shape does not fit (names it).
        UnsupportedOpError: ndim 2 or 3, or a CUDA-only extended attribute.
    """
    op = "CausalConvWithState"
    x, weight, bias, past = _padded(inputs, 4)
    if attrs["ndim"] != 1:
        raise UnsupportedOpError(f"{op}: ndim {attrs['ndim']} is not supported (onegraph "
                                 f"runs ndim 1, as onnxruntime's CPU kernel does)")
    for name in ("state_update_capacity", "state_length", "input_channel_offset",
                 "input_channels"):
        if attrs[name]:
            raise UnsupportedOpError(f"{op}: {name} (a CUDA extension) is not supported")
    if attrs["state_channels_last"] not in (-1, attrs["channels_last"]):
        raise UnsupportedOpError(f"{op}: state_channels_last differing from channels_last "
                                 f"(a CUDA extension) is not supported")
    x = _float(op, "input", x)
    last, window = attrs["channels_last"], attrs["state_window"]
    if x.ndim < 3:
        raise ShapeError(f"{op}: input must be [B, C, L] (or [B, L, d_1, ...] channels-last), "
                         f"got {list(x.shape)}")
    if last:
        b, length, dims = x.shape[0], x.shape[1], x.shape[2:]
        channels = int(np.prod(dims))
        xc = x.reshape(b, length, channels).transpose(0, 2, 1)
    else:
        if x.ndim != 3:
            raise ShapeError(f"{op}: ndim 1 input must be [B, C, L], got {list(x.shape)}")
        b, channels, length = x.shape
        xc = x
    taps, bias = _depthwise_taps(op, weight, bias, channels, x.dtype)
    dilation = attrs["dilation"]
    hist = (taps.shape[1] - 1) * dilation
    _check_history(op, b * max(window, 1), channels, hist)
    slot_shape = (b, hist) + tuple(dims) if last else (b, channels, hist)
    if past is not None:
        past = np.asarray(past)
        want = ((window,) if window else ()) + slot_shape
        if past.dtype != x.dtype or past.shape != want:
            raise ShapeError(f"{op}: past_state must be {x.dtype} {list(want)}, got "
                             f"{past.dtype} {list(past.shape)}")
        p = past[-1] if window else past
        p = p.reshape(b, hist, channels).transpose(0, 2, 1) if last else p
        history = p.astype(_F32)
    else:
        history = np.zeros((b, channels, hist), _F32)
    full = np.concatenate([history, xc.astype(_F32)], axis=2)
    y = _conv_sequence(full, taps, bias, dilation, _text(attrs["activation"]))

    def state_at(end):
        """The history after virtual position `end` of full (state layout)."""
        s = full[:, :, end - hist:end]
        return s.transpose(0, 2, 1).reshape(slot_shape) if last else s

    if window:
        present = np.zeros((window,) + slot_shape, _F32)
        for j in range(max(0, window - length), window):
            present[j] = state_at(hist + length - window + j + 1)
    else:
        present = state_at(hist + length)
    y = y.transpose(0, 2, 1).reshape(x.shape) if last else y
    return (y.astype(x.dtype), present.astype(x.dtype))[:_wanted(attrs, 2)]


def _causal_conv_infer(attrs, inputs):
    x, weight = inputs[0], inputs[1]
    state = None
    if x.shape is not None and weight is not None and weight.shape is not None and \
            len(weight.shape) == 3 and weight.shape[2] is not None and len(x.shape) >= 3:
        hist = (weight.shape[2] - 1) * attrs["dilation"]
        if attrs["channels_last"]:
            state = (x.shape[0], hist) + tuple(x.shape[2:])
        else:
            state = (x.shape[0], x.shape[1], hist)
        if attrs["state_window"]:
            state = (attrs["state_window"],) + state
    return [TensorInfo(x.dtype, x.shape), TensorInfo(x.dtype, state)]


def _varlen_conv_kernel(inputs, attrs, ctx):
    """VarlenCausalConvWithState (see the module doc): (output [N, C], final_state
    [B, C, (k - 1) * dilation], state_update [B, capacity, C]) of input's type.

    Raises:
        ShapeError: a type or shape does not fit (names it).
        UnsupportedOpError: the CUDA dynamic mode (kernel_delta, previous_mask).
    """
    op = "VarlenCausalConvWithState"
    x, weight, cu, bias, state, capture, delta, mask = _padded(inputs, 8)
    if delta is not None or mask is not None:
        raise UnsupportedOpError(f"{op}: the dynamic grouped mode (kernel_delta, "
                                 f"previous_mask; CUDA only) is not supported")
    x = _float(op, "input", x)
    if x.ndim != 2:
        raise ShapeError(f"{op}: input must be [total_tokens, channels], got {list(x.shape)}")
    n, channels = x.shape
    taps, bias = _depthwise_taps(op, weight, bias, channels, x.dtype)
    dilation = attrs["dilation"]
    hist = (taps.shape[1] - 1) * dilation
    cu = np.asarray(cu)
    _check_history(op, max(cu.size - 1, 1), channels, hist)
    if cu.dtype != np.int32 or cu.ndim != 1 or cu.size < 2:
        raise ShapeError(f"{op}: cumulative_sequence_length must be int32 [batch + 1], got "
                         f"{cu.dtype} {list(cu.shape)}")
    cu = cu.astype(np.int64)
    if cu[0] != 0 or cu[-1] != n or (np.diff(cu) < 0).any():
        raise ShapeError(f"{op}: cumulative_sequence_length must rise from 0 to the {n} "
                         f"tokens, got {cu.tolist()}")
    batch = cu.size - 1
    if state is None:
        raise ShapeError(f"{op}: initial_state is required")
    state = np.asarray(state)
    if state.dtype != x.dtype or state.shape != (batch, channels, hist):
        raise ShapeError(f"{op}: initial_state must be {x.dtype} {[batch, channels, hist]}, "
                         f"got {state.dtype} {list(state.shape)}")
    capacity = attrs["state_update_capacity"]
    if (capture is not None) != (capacity > 0):
        raise ShapeError(f"{op}: capture_count must be given exactly when "
                         f"state_update_capacity > 0")
    xf = x.astype(_F32)
    act = _text(attrs["activation"])
    out = np.zeros((n, channels), _F32)
    final = state.astype(_F32).copy()
    updates = np.zeros((batch, capacity, channels), _F32)
    if capture is not None:
        capture = np.asarray(capture)
        if capture.dtype != np.int32 or capture.shape != (batch,):
            raise ShapeError(f"{op}: capture_count must be int32 [batch] = [{batch}], got "
                             f"{capture.dtype} {list(capture.shape)}")
    for r in range(batch):
        lo, hi = int(cu[r]), int(cu[r + 1])
        full = np.concatenate([final[r], xf[lo:hi].T], axis=1)
        out[lo:hi] = _conv_sequence(full, taps, bias, dilation, act).T
        final[r] = full[:, full.shape[1] - hist:]
        if capture is not None:
            count = int(np.clip(capture[r], 0, min(capacity, hi - lo)))
            updates[r, :count] = xf[lo:lo + count]
    outs = (out.astype(x.dtype), final.astype(x.dtype), updates.astype(x.dtype))
    return outs[:_wanted(attrs, 3)]


def _varlen_conv_infer(attrs, inputs):
    x, weight, cu, bias, state = _padded(inputs, 5)
    state_shape = state.shape if state is not None else None
    update = None
    if x.shape is not None and len(x.shape) == 2 and cu is not None and \
            cu.shape is not None and len(cu.shape) == 1 and cu.shape[0] is not None:
        update = (cu.shape[0] - 1, attrs["state_update_capacity"], x.shape[1])
    return [TensorInfo(x.dtype, x.shape), TensorInfo(x.dtype, state_shape),
            TensorInfo(x.dtype, update)]


# --------------------------------------------------------------------------------------
# AttnLSTM
# --------------------------------------------------------------------------------------

_ATTN_LSTM_DIRS = {"forward": 1, "reverse": 1, "bidirectional": 2}


def _attn_lstm_problem(attrs):
    direction = _text(attrs["direction"])
    if direction not in _ATTN_LSTM_DIRS:
        return f"direction {direction!r} is not forward, reverse or bidirectional"
    if attrs["hidden_size"] is not None and attrs["hidden_size"] < 1:
        return f"hidden_size must be positive, got {attrs['hidden_size']}"
    return None


def _lengths(op, what, lens, batch, most):
    """int32 lengths [batch] in [1, most] as int64, or all `most` when omitted."""
    if lens is None:
        return np.full(batch, most, np.int64)
    lens = np.asarray(lens)
    if lens.dtype != np.int32 or lens.shape != (batch,):
        raise ShapeError(f"{op}: {what} must be int32 [batch] = [{batch}], got {lens.dtype} "
                         f"{list(lens.shape)}")
    if batch and (lens.min() < 1 or lens.max() > most):
        raise ShapeError(f"{op}: {what} must lie in [1, {most}], got {lens.tolist()}")
    return lens.astype(np.int64)


def _shaped(op, what, a, shape, dtype):
    a = np.asarray(a)
    if a.dtype != dtype or a.shape != tuple(shape):
        raise ShapeError(f"{op}: {what} must be {dtype} {list(shape)}, got {a.dtype} "
                         f"{list(a.shape)}")
    return a


def _reverse_steps(x, lengths):
    """x [T, B, ...] with each batch entry's first lengths[b] steps reversed (the rest
    zero)."""
    out = np.zeros_like(x)
    for b, n in enumerate(lengths):
        out[:n, b] = x[n - 1::-1, b]
    return out


def _attn_lstm_direction(x, lengths, w, r, bias, peep, h, c, qw, mw, v, memory, mem_mask,
                         aw, acts, clip, input_forget):
    """One direction of AttnLSTM over x [T, B, I] (already in processing order): (Y
    [T, B, H] in processing order, last H [B, H], last C [B, H])."""
    dtype = x.dtype
    steps, batch, inputs = x.shape
    hs = r.shape[1]
    f, g, act_h = acts
    wx, wa = w[:, :inputs], w[:, inputs:]
    keys = memory @ mw  # [B, S, A]
    attn = np.zeros((batch, wa.shape[1]), dtype)
    ys = np.zeros((steps, batch, hs), dtype)
    last_h = np.zeros((batch, hs), dtype)
    for t in range(int(lengths.max(initial=0))):
        live = t < lengths
        pre = x[t] @ wx.T + attn @ wa.T + h @ r.T
        if bias is not None:
            pre = pre + bias
        gi, go, gf, gc = (pre[:, k * hs:(k + 1) * hs] for k in range(4))
        if peep is not None:
            gi = gi + peep[0] * c
            gf = gf + peep[2] * c
        if clip is not None:
            gi, gf, gc = (np.clip(z, -clip, clip) for z in (gi, gf, gc))
        i = f(np.array(gi))
        ft = (1 - i) if input_forget else f(np.array(gf))
        cn = ft * c + i * g(np.array(gc))
        if peep is not None:
            go = go + peep[1] * cn
        if clip is not None:
            go = np.clip(go, -clip, clip)
        hn = f(np.array(go)) * act_h(np.array(cn))
        out = np.where(live[:, None], hn, dtype.type(0))
        c = np.where(live[:, None], cn, c)
        last_h = np.where((lengths == t + 1)[:, None], hn, last_h)
        ys[t] = out
        h = out
        # Bahdanau attention of this step's output over the memory, then the wrapper
        query = out @ qw  # [B, A]
        score = (np.tanh(keys + query[:, None, :]) * v).sum(axis=2)
        score = np.where(mem_mask, score, -np.inf)
        align = np.exp(score - score.max(axis=1, keepdims=True))
        align /= align.sum(axis=1, keepdims=True)
        context = np.matmul(align[:, None, :], memory)[:, 0, :]
        attn = context if aw is None else out @ aw[:hs] + context @ aw[hs:]
    return ys, last_h, c


def _attn_lstm_kernel(inputs, attrs, ctx):
    """AttnLSTM: an LSTM (gates i, o, f, c as ONNX's LSTM) whose input at each step is
    concatenated with the previous step's attention state, which a Bahdanau attention
    over the memory M computes from the step's output: keys = M @ MW; alignment =
    softmax over the memory's valid steps of sum(V * tanh(keys + H_t @ QW)); context =
    alignment @ M; attention state = context, or [H_t, context] @ AW with the attention
    layer. Returns (Y [T, D, B, H], Y_h [D, B, H], Y_c [D, B, H]).

    Raises:
        ShapeError: an input's type or shape does not fit (names it).
        OpAttributeError: unknown activations.
    """
    op = "AttnLSTM"
    (x, w, r, b, seq_lens, h0, c0, p, qw, mw, v, memory, mem_lens,
     aw) = _padded(inputs, 14)
    x = np.asarray(x)
    if x.dtype not in (np.dtype(np.float32), np.dtype(np.float64)) or x.ndim != 3:
        raise ShapeError(f"{op}: X must be float32 or float64 [seq, batch, input], got "
                         f"{x.dtype} {list(x.shape)}")
    dtype = x.dtype
    steps, batch, isize = x.shape
    dirs = _ATTN_LSTM_DIRS[_text(attrs["direction"])]
    if any(a is None for a in (qw, mw, v, memory)):
        raise ShapeError(f"{op}: the attention inputs QW, MW, V and M are required")
    r = np.asarray(r)
    if r.ndim != 3 or r.shape[0] != dirs or r.shape[1] != 4 * r.shape[2]:
        raise ShapeError(f"{op}: R must be [num_directions, 4 * hidden, hidden] with "
                         f"num_directions {dirs}, got {list(r.shape)}")
    hs = r.shape[2]
    if attrs["hidden_size"] is not None and attrs["hidden_size"] != hs:
        raise ShapeError(f"{op}: hidden_size {attrs['hidden_size']} differs from R's {hs}")
    r = _shaped(op, "R", r, (dirs, 4 * hs, hs), dtype)
    memory = np.asarray(memory)
    if memory.dtype != dtype or memory.ndim != 3 or memory.shape[0] != batch or \
            memory.shape[1] < 1:
        raise ShapeError(f"{op}: M must be {dtype} [batch, memory_steps, memory_depth] with "
                         f"batch {batch}, got {memory.dtype} {list(memory.shape)}")
    mem_steps, depth = memory.shape[1:]
    mw = np.asarray(mw)
    if mw.ndim != 3:
        raise ShapeError(f"{op}: MW must be [num_directions, memory_depth, attn_size], got "
                         f"{list(mw.shape)}")
    asize = mw.shape[2]
    mw = _shaped(op, "MW", mw, (dirs, depth, asize), dtype)
    qw = _shaped(op, "QW", qw, (dirs, hs, asize), dtype)
    v = _shaped(op, "V", v, (dirs, asize), dtype)
    if aw is not None:
        aw = np.asarray(aw)
        if aw.ndim != 3 or aw.shape[:2] != (dirs, depth + hs):
            raise ShapeError(f"{op}: AW must be [num_directions, memory_depth + hidden, "
                             f"attention_size] = [{dirs}, {depth + hs}, ...], got "
                             f"{list(aw.shape)}")
        aw = _shaped(op, "AW", aw, aw.shape, dtype)
    att = depth if aw is None else aw.shape[2]
    w = _shaped(op, "W", w, (dirs, 4 * hs, isize + att), dtype)
    if b is not None:
        b = _shaped(op, "B", b, (dirs, 8 * hs), dtype)
    if p is not None:
        p = _shaped(op, "P", p, (dirs, 3 * hs), dtype)
    h0 = None if h0 is None else _shaped(op, "initial_h", h0, (dirs, batch, hs), dtype)
    c0 = None if c0 is None else _shaped(op, "initial_c", c0, (dirs, batch, hs), dtype)
    lengths = _lengths(op, "sequence_lens", seq_lens, batch, steps)
    mem_mask = np.arange(mem_steps)[None, :] < _lengths(op, "memory_seq_lens", mem_lens,
                                                         batch, mem_steps)[:, None]
    from .rnn import _activations  # the ONNX RNN family's activation parsing

    acts = _activations(op, attrs, 3, ("Sigmoid", "Tanh", "Tanh"), dirs, dtype)
    clip = None if attrs["clip"] is None else dtype.type(attrs["clip"])
    y = np.zeros((steps, dirs, batch, hs), dtype)
    y_h = np.zeros((dirs, batch, hs), dtype)
    y_c = np.zeros((dirs, batch, hs), dtype)
    reverse_dir = 1 if dirs == 2 else (0 if _text(attrs["direction"]) == "reverse" else -1)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for d in range(dirs):
            xs = _reverse_steps(x, lengths) if d == reverse_dir else x
            bias = None if b is None else b[d, :4 * hs] + b[d, 4 * hs:]
            peep = None if p is None else (p[d, :hs], p[d, hs:2 * hs], p[d, 2 * hs:])
            h = np.zeros((batch, hs), dtype) if h0 is None else h0[d].copy()
            c = np.zeros((batch, hs), dtype) if c0 is None else c0[d].copy()
            ys, y_h[d], y_c[d] = _attn_lstm_direction(
                xs, lengths, w[d], r[d], bias, peep, h, c, qw[d], mw[d], v[d], memory,
                mem_mask, None if aw is None else aw[d], acts[d], clip,
                attrs["input_forget"])
            y[:, d] = _reverse_steps(ys, lengths) if d == reverse_dir else ys
    return (y, y_h, y_c)[:_wanted(attrs, 3)]


def _attn_lstm_infer(attrs, inputs):
    x, w, r = _padded(inputs, 3)
    dirs = _ATTN_LSTM_DIRS.get(_text(attrs["direction"]), None)
    hs = attrs["hidden_size"]
    if hs is None and r is not None and r.shape is not None and len(r.shape) == 3:
        hs = r.shape[2]
    steps = batch = None
    if x.shape is not None and len(x.shape) == 3:
        steps, batch = x.shape[:2]
    return [TensorInfo(x.dtype, (steps, dirs, batch, hs)),
            TensorInfo(x.dtype, (dirs, batch, hs)), TensorInfo(x.dtype, (dirs, batch, hs))]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

OPS = (
    define("AttnLSTM", ("X", "W", "R", "B?", "sequence_lens?", "initial_h?", "initial_c?",
                        "P?", "QW?", "MW?", "V?", "M?", "memory_seq_lens?", "AW?"),
           ("Y?", "Y_h?", "Y_c?"), _attn_lstm_kernel,
           (("direction", "string", "forward"), ("hidden_size", "int", None),
            ("input_forget", "int", 0), ("clip", "float", None),
            ("activations", "strings", None), ("activation_alpha", "floats", None),
            ("activation_beta", "floats", None)),
           infer=_attn_lstm_infer, domain=_DOMAIN, dtypes=("float32", "float64"),
           check_attrs=_attn_lstm_problem,
           doc="LSTM wrapped with Bahdanau attention over a memory (AttentionWrapper)."),
    define("CausalConvWithState", ("input", "weight", "bias?", "past_state?"),
           ("output", "present_state", "state_update?"), _causal_conv_kernel,
           (("ndim", "int", 1), ("activation", "string", "none"), ("dilation", "int", 1),
            ("channels_last", "int", 0), ("state_window", "int", 0),
            ("state_update_capacity", "int", 0), ("state_channels_last", "int", -1),
            ("state_length", "int", 0), ("input_channel_offset", "int", 0),
            ("input_channels", "int", 0)),
           infer=_causal_conv_infer, domain=_DOMAIN, dtypes=_FLOAT_NAMES,
           check_attrs=_causal_conv_problem,
           doc="Causal depthwise convolution with a carry state (Mamba, Gated DeltaNet)."),
    define("GatedDeltaNet", ("query", "key?", "value?", "cu_seqlens?", "decay?", "beta?",
                             "initial_state?", "a_log?", "dt_bias?", "capture_count?",
                             "state_update_active?"),
           ("output", "final_state?", "state_update?"), _gated_delta_net_kernel,
           (("update_rule", "string", "gated_delta"), ("scale", "float", 0.0),
            ("gate_activation", "string", "none"), ("beta_activation", "string", "none"),
            ("qk_l2_norm", "int", 0), ("gate_lower_bound", "float", -5.0),
            ("chunk_size", "int", 64), ("state_update_capacity", "int", 0)),
           infer=_gated_delta_net_infer, domain=_DOMAIN, dtypes=_FLOAT_NAMES,
           check_attrs=_gdn_problem,
           doc="Packed gated delta network / linear attention with a recurrent state."),
    define("LinearAttention", ("query", "key", "value", "past_state?", "decay?", "beta?"),
           ("output", "present_state"), _linear_attention_kernel,
           (("q_num_heads", "int"), ("kv_num_heads", "int"),
            ("update_rule", "string", "gated_delta"), ("scale", "float", 0.0),
            ("chunk_size", "int", 64), ("state_window", "int", 0)),
           infer=_linear_attention_infer, domain=_DOMAIN, dtypes=_FLOAT_NAMES,
           check_attrs=_linear_attention_problem,
           doc="Linear attention (linear / gated / delta / gated delta recurrences)."),
    define("LinearAttentionGate", ("a", "dt_bias", "decay_scale", "b?"), ("decay", "beta?"),
           _linear_attention_gate_kernel, infer=_linear_attention_gate_infer,
           domain=_DOMAIN, dtypes=_FLOAT_NAMES,
           doc="Gate projections of gated DeltaNet: scaled softplus decay, sigmoid beta."),
    define("VarlenCausalConvWithState", ("input", "weight", "cumulative_sequence_length",
                                         "bias?", "initial_state", "capture_count?",
                                         "kernel_delta?", "previous_mask?"),
           ("output", "final_state", "state_update?"), _varlen_conv_kernel,
           (("activation", "string", "none"), ("dilation", "int", 1),
            ("state_update_capacity", "int", 0), ("delta_offset", "int", 0),
            ("group_size", "int", 1)),
           infer=_varlen_conv_infer, domain=_DOMAIN, dtypes=_FLOAT_NAMES,
           check_attrs=_varlen_conv_problem,
           doc="Causal depthwise convolution over ragged packed requests with states."),
)

KNOWN_FAILURES: dict[str, str] = {}

"""Operators: onnxruntime's LLM contrib ops (domain "com.microsoft").

onnxruntime-genai's model builder writes decoder LLMs (Llama, Phi-3, Qwen, Mistral)
with RotaryEmbedding and GroupQueryAttention next to MatMulNBits
(`ops/ms_matmul_nbits.py`) and SkipSimplifiedLayerNormalization
(`ops/ms_transformer.py`). Inputs, outputs and attributes follow onnxruntime's op
schemas; the semantics follow its CPU kernels, which the tests use as the oracle.

RotaryEmbedding: input (batch, seq, hidden) or (batch, heads, seq, head_size);
position_ids (batch, seq) or a (1,) offset (position = offset + s); cos_cache and
sin_cache (max_position, rotary_dim / 2); interleaved pairs (x[2i], x[2i+1]) or the
halves x[:rotary_dim/2], x[rotary_dim/2:rotary_dim]; dims past rotary_dim pass through.

GroupQueryAttention: query (batch, seq, num_heads * head_size), key/value (batch, seq,
kv_num_heads * head_size) or packed QKV in query (key and value absent); past_key/
past_value (batch, kv_num_heads, past, head_size) BNSH, absent or of length 0 for a
prompt; seqlens_k (batch,) int32 = each batch entry's total length - 1 (right padding);
total_sequence_length a scalar int32. A call is a first prompt when seq ==
total_sequence_length (every entry's past length is 0), else entry b's past length is
seqlens_k[b] + 1 - seq. The new keys/values go into present_key/present_value (batch,
kv_num_heads, max(past, total_sequence_length), head_size) after the entry's past rows,
the rest zeros; query s attends keys j <= past + s and j <= seqlens_k[b] (and
j > past + s - local_window_size for a positive window); a padding row with no key
allowed is zeros. do_rotary rotates Q and the new K at those positions with
cos_cache/sin_cache (onnxruntime's CPU kernel needs head_size a multiple of 16 there).
onegraph also runs a multi-token chunk after a past for batch > 1, which onnxruntime's
CPU kernel refuses.

What GroupQueryAttention refuses (UnsupportedOpError naming the op and the feature):
softcap != 0, smooth_softmax=1, causal=0, qk_output, sliding_window_cache, quantized KV
cache (k_quant_type / v_quant_type / kv_cache_bit_width), and the inputs position_ids,
attention_bias, head_sink, k_scale, v_scale, q_norm_weight, k_norm_weight,
query_seqlens. Kernels compute float16 in float32 and round once at the end.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .ms_transformer import _DOMAIN, _float, _padded, _sdpa, _work
from .registry import NUM_OUTPUTS, TensorInfo, define

_FLOATS = ("float16", "float32")

# --------------------------------------------------------------------------------------
# RotaryEmbedding
# --------------------------------------------------------------------------------------


def _caches(op, cos, sin):
    cos = _float(cos, op, "cos_cache")
    sin = _float(sin, op, "sin_cache")
    if cos.ndim != 2 or cos.shape != sin.shape:
        raise ShapeError(f"{op}: cos_cache {list(cos.shape)} and sin_cache "
                         f"{list(sin.shape)} must be the same 2-D (max_position, "
                         "rotary_dim / 2)")
    return cos, sin


def _rotate(x, pos, cos, sin, rot, interleaved, op):
    """RoPE of x (B, N, S, H) in place on its first `rot` dims at positions pos (B, S)."""
    half = rot // 2
    if half > cos.shape[1]:
        raise ShapeError(f"{op}: rotary_embedding_dim {rot} needs cos_cache's second dim "
                         f">= {half}, got {cos.shape[1]}")
    if pos.size and (pos.min() < 0 or pos.max() >= cos.shape[0]):
        raise ShapeError(f"{op}: positions {int(pos.min())}..{int(pos.max())} out of the "
                         f"caches' {cos.shape[0]} rows")
    c = cos[pos][:, None, :, :half].astype(x.dtype)  # (B, 1, S, half)
    s = sin[pos][:, None, :, :half].astype(x.dtype)
    if interleaved:
        x1, x2 = x[..., 0:rot:2].copy(), x[..., 1:rot:2].copy()
        x[..., 0:rot:2] = x1 * c - x2 * s
        x[..., 1:rot:2] = x2 * c + x1 * s
    else:
        x1, x2 = x[..., :half].copy(), x[..., half:rot].copy()
        x[..., :half] = x1 * c - x2 * s
        x[..., half:rot] = x2 * c + x1 * s
    return x


def _rope_layout(op, shape, attrs, cos_half):
    """(num_heads, head_size, rotary_dim) of a RotaryEmbedding input shape."""
    if len(shape) == 4:
        heads, head = shape[1], shape[3]
    elif len(shape) == 3:
        heads = int(attrs["num_heads"])
        if heads < 0:
            raise OpAttributeError(f"{op}: num_heads must be >= 0, got {heads}")
        if heads == 0:
            head = 2 * cos_half
            if head == 0 or shape[2] % head:
                raise ShapeError(f"{op}: hidden size {shape[2]} is not a multiple of the "
                                 f"head size {head} of cos_cache (give num_heads)")
            heads = shape[2] // head
        else:
            if shape[2] % heads:
                raise ShapeError(f"{op}: hidden size {shape[2]} is not a multiple of "
                                 f"num_heads {heads}")
            head = shape[2] // heads
    else:
        raise ShapeError(f"{op}: input must be 3-D or 4-D, got shape {list(shape)}")
    if int(attrs["rotary_embedding_dim"]) and int(attrs["num_heads"]) <= 0:
        # as onnxruntime, for 3-D and 4-D input alike
        raise OpAttributeError(f"{op}: num_heads is required when rotary_embedding_dim "
                               "is set")
    rot = int(attrs["rotary_embedding_dim"]) or head
    if rot < 0 or rot > head or rot % 2:
        raise OpAttributeError(f"{op}: rotary_embedding_dim {rot} must be even and at most "
                               f"the head size {head}")
    return heads, head, rot


def _positions(op, pid, batch, seq):
    pid = np.asarray(pid)
    if pid.dtype != np.int64:
        raise ShapeError(f"{op}: position_ids must be int64, got {pid.dtype}")
    if pid.shape == (batch, seq):
        return pid
    if pid.size == 1 and pid.ndim <= 1:
        return np.broadcast_to(int(pid.reshape(-1)[0]) + np.arange(seq), (batch, seq))
    raise ShapeError(f"{op}: position_ids must be (batch, seq) = ({batch}, {seq}) or a "
                     f"(1,) offset, got {list(pid.shape)}")


def _rope_kernel(inputs, attrs, ctx):
    """RoPE of Q or K: rotates each head's first rotary_embedding_dim dims."""
    op = "RotaryEmbedding"
    x, pid, cos, sin = inputs
    if int(attrs["is_packed_batching"]):
        raise UnsupportedOpError(f"{op}: is_packed_batching=1 is not supported")
    x = _float(x, op, "input")
    cos, sin = _caches(op, cos, sin)
    heads, head, rot = _rope_layout(op, x.shape, attrs, cos.shape[1])
    w = _work(x.dtype)
    if x.ndim == 3:
        b, s, _ = x.shape
        xs = x.astype(w).reshape(b, s, heads, head).transpose(0, 2, 1, 3)
    else:
        b, _, s, _ = x.shape
        xs = x.astype(w)
    pos = _positions(op, pid, b, s)
    y = _rotate(np.ascontiguousarray(xs), pos, cos.astype(w), sin.astype(w), rot,
                int(attrs["interleaved"]), op)
    if x.ndim == 3:
        y = y.transpose(0, 2, 1, 3).reshape(x.shape)
    return (y.astype(x.dtype, copy=False),)


def _rope_infer(attrs, inputs):
    x = inputs[0]
    if x.shape is not None and len(x.shape) not in (3, 4):
        raise ShapeError(f"RotaryEmbedding: input must be 3-D or 4-D, got shape "
                         f"{list(x.shape)}")
    return [TensorInfo(x.dtype, x.shape)]


# --------------------------------------------------------------------------------------
# GroupQueryAttention
# --------------------------------------------------------------------------------------

_GQA_INPUTS = ("query", "key?", "value?", "past_key?", "past_value?", "seqlens_k",
               "total_sequence_length", "cos_cache?", "sin_cache?", "position_ids?",
               "attention_bias?", "head_sink?", "k_scale?", "v_scale?", "q_norm_weight?",
               "k_norm_weight?", "query_seqlens?")


def _gqa_refusals(inputs, attrs):
    op = "GroupQueryAttention"
    if float(attrs["softcap"]) != 0.0:
        raise UnsupportedOpError(f"{op}: softcap={attrs['softcap']} is not supported")
    if int(attrs["smooth_softmax"]) == 1:
        raise UnsupportedOpError(f"{op}: smooth_softmax=1 is not supported")
    if int(attrs["causal"]) != 1:
        raise UnsupportedOpError(f"{op}: causal={attrs['causal']} is not supported")
    for name in ("qk_output", "sliding_window_cache", "kv_cache_bit_width"):
        if int(attrs[name]):
            raise UnsupportedOpError(f"{op}: {name}={attrs[name]} is not supported")
    for name in ("k_quant_type", "v_quant_type"):
        if str(attrs[name]).upper() != "NONE":
            raise UnsupportedOpError(f"{op}: {name}={attrs[name]} (quantized KV cache) is "
                                     "not supported")
    for name, value in zip(_GQA_INPUTS[9:], _padded(inputs, len(_GQA_INPUTS))[9:]):
        if value is not None:
            raise UnsupportedOpError(f"{op}: the {name.rstrip('?')} input is not supported")
    heads, kv_heads = int(attrs["num_heads"]), int(attrs["kv_num_heads"])
    if heads <= 0 or kv_heads <= 0 or heads % kv_heads:
        raise OpAttributeError(f"{op}: num_heads {heads} must be a positive multiple of "
                               f"kv_num_heads {kv_heads}")
    return heads, kv_heads


def _gqa_split(op, query, key, value, heads, kv_heads):
    """(B, S, N*H) Q and (B, S, Kv*H) K/V arrays, unpacking a packed query."""
    q = _float(query, op, "query")
    if q.ndim != 3:
        raise ShapeError(f"{op}: query must be 3-D (batch, seq, hidden), got "
                         f"{list(q.shape)}")
    if (key is None) != (value is None):
        raise ShapeError(f"{op}: key and value must be given together")
    if key is None:
        d = q.shape[2]
        if d % (heads + 2 * kv_heads):
            raise ShapeError(f"{op}: packed query hidden size {d} is not a multiple of "
                             f"num_heads + 2 * kv_num_heads = {heads + 2 * kv_heads}")
        h = d // (heads + 2 * kv_heads)
        return (q[..., :heads * h], q[..., heads * h:(heads + kv_heads) * h],
                q[..., (heads + kv_heads) * h:], h)
    k, v = _float(key, op, "key"), _float(value, op, "value")
    if q.shape[2] % heads:
        raise ShapeError(f"{op}: query hidden size {q.shape[2]} is not a multiple of "
                         f"num_heads {heads}")
    h = q.shape[2] // heads
    want = q.shape[:2] + (kv_heads * h,)
    if k.shape != want or v.shape != want:
        raise ShapeError(f"{op}: key {list(k.shape)} and value {list(v.shape)} must be "
                         f"{list(want)} (batch, seq, kv_num_heads * head_size)")
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise ShapeError(f"{op}: query, key and value must share a dtype")
    return q, k, v, h


def _gqa_kernel(inputs, attrs, ctx):
    """Grouped-query causal attention with a BNSH KV cache (see the module doc)."""
    op = "GroupQueryAttention"
    query, key, value, past_k, past_v, seqlens, total, cos, sin = \
        _padded(inputs, len(_GQA_INPUTS))[:9]
    heads, kv_heads = _gqa_refusals(inputs, attrs)
    q, k, v, h = _gqa_split(op, query, key, value, heads, kv_heads)
    dt = q.dtype
    w = _work(dt)
    b, s, _ = q.shape
    seqlens = np.asarray(seqlens)
    if seqlens.dtype != np.int32 or seqlens.shape != (b,):
        raise ShapeError(f"{op}: seqlens_k must be int32 of shape ({b},), got "
                         f"{seqlens.dtype} {list(seqlens.shape)}")
    total = np.asarray(total)
    if total.dtype != np.int32 or total.size != 1:
        raise ShapeError(f"{op}: total_sequence_length must be a scalar int32")
    total = int(total.reshape(-1)[0])
    if (past_k is None) != (past_v is None):
        raise ShapeError(f"{op}: past_key and past_value must be given together")
    past_len = 0
    if past_k is not None:
        past_k, past_v = _float(past_k, op, "past_key"), _float(past_v, op, "past_value")
        want = (b, kv_heads, past_k.shape[2] if past_k.ndim == 4 else -1, h)
        if past_k.shape != want or past_v.shape != want:
            raise ShapeError(f"{op}: past_key {list(past_k.shape)} and past_value "
                             f"{list(past_v.shape)} must be (batch, kv_num_heads, past, "
                             f"head_size) = {list(want)}")
        past_len = past_k.shape[2]
    if total != past_len + s and total > past_len:
        # onnxruntime's rule; a larger total also sized the present cache without bound
        raise ShapeError(f"{op}: total_sequence_length must equal past_sequence_length + "
                         f"kv_sequence_length for a dynamic cache, or be no greater than "
                         f"past_sequence_length for a static cache; got {total}, past "
                         f"{past_len}, new {s}")
    if (seqlens < 0).any() or (seqlens >= total).any():
        raise ShapeError(f"{op}: seqlens_k {seqlens.tolist()} must lie in [0, {total}) "
                         f"(total_sequence_length), as onnxruntime requires")
    first = s == total
    starts = np.zeros(b, np.int64) if first else seqlens.astype(np.int64) + 1 - s
    if total < s or (starts < 0).any() or (starts > past_len).any() \
            or (seqlens.astype(np.int64) + 1 > max(past_len, total)).any():
        raise ShapeError(f"{op}: seqlens_k {seqlens.tolist()} and total_sequence_length "
                         f"{total} do not fit a past of {past_len} and {s} new tokens")
    qh = q.astype(w).reshape(b, s, heads, h).transpose(0, 2, 1, 3)
    kh = k.astype(w).reshape(b, s, kv_heads, h).transpose(0, 2, 1, 3)
    vh = v.astype(w).reshape(b, s, kv_heads, h).transpose(0, 2, 1, 3)
    pos = starts.reshape(b, 1) + np.arange(s).reshape(1, s)
    if int(attrs["do_rotary"]):
        if cos is None or sin is None:
            raise ShapeError(f"{op}: do_rotary=1 needs cos_cache and sin_cache")
        cos, sin = _caches(op, cos, sin)
        rot = 2 * cos.shape[1]
        if rot > h:
            raise ShapeError(f"{op}: cos_cache's rotary dim {rot} exceeds the head size {h}")
        il = int(attrs["rotary_interleaved"])
        cw, sw = cos.astype(w), sin.astype(w)
        qh = _rotate(np.ascontiguousarray(qh), pos, cw, sw, rot, il, op)
        kh = _rotate(np.ascontiguousarray(kh), pos, cw, sw, rot, il, op)
    present = max(past_len, total)
    pk = np.zeros((b, kv_heads, present, h), w)
    pv = np.zeros((b, kv_heads, present, h), w)
    for i in range(b):
        p = int(starts[i])
        n = min(s, present - p)
        if p:
            pk[i, :, :p] = past_k[i, :, :p]
            pv[i, :, :p] = past_v[i, :, :p]
        pk[i, :, p:p + n] = kh[i, :, :n]
        pv[i, :, p:p + n] = vh[i, :, :n]
    # keys allowed: j <= past + s (causal), j < seqlens_k + 1, and the local window
    j = np.arange(present).reshape(1, 1, present)
    qpos = pos.reshape(b, s, 1)
    allowed = (j <= qpos) & (j < seqlens.astype(np.int64).reshape(b, 1, 1) + 1)
    window = int(attrs["local_window_size"])
    if window > 0:
        allowed &= j > qpos - window
    group = heads // kv_heads
    scale = attrs["scale"]
    scale = 1.0 / math.sqrt(h) if not scale else float(scale)
    y = _sdpa(op, qh, np.repeat(pk, group, axis=1), np.repeat(pv, group, axis=1), scale,
              allowed.reshape(b, 1, s, present),
              None, {"unidirectional": 0, "mask_filter_value": None})
    # a (padding) row with no key allowed is zeros, as onnxruntime writes it
    y[~allowed.any(-1)] = 0
    outs = (y.astype(dt, copy=False), pk.astype(dt, copy=False), pv.astype(dt, copy=False))
    return outs[:max(1, min(3, attrs.get(NUM_OUTPUTS, 3)))]


def _gqa_infer(attrs, inputs):
    op = "GroupQueryAttention"
    heads, kv_heads = _gqa_refusals(inputs, attrs)
    ins = _padded(inputs, len(_GQA_INPUTS))
    q, key, past_k = ins[0], ins[1], ins[3]
    dt = q.dtype
    unknown = [TensorInfo(dt, None)] * 3
    if q.shape is None:
        return unknown
    if len(q.shape) != 3:
        raise ShapeError(f"{op}: query must be 3-D (batch, seq, hidden), got "
                         f"{list(q.shape)}")
    b, s, d = q.shape
    h = None
    if d is not None:
        h = d // heads if key is not None else d // (heads + 2 * kv_heads)
    out = TensorInfo(dt, (b, s, None if h is None else heads * h))
    total = ins[6].value if ins[6] is not None else None
    plen = past_k.shape[2] if past_k is not None and past_k.shape is not None \
        and len(past_k.shape) == 4 else (0 if past_k is None else None)
    present = None
    if total is not None and plen is not None:
        present = max(plen, int(np.asarray(total).reshape(-1)[0]))
    kv = TensorInfo(dt, (b, kv_heads, present, h))
    return [out, kv, kv]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

OPS = (
    define("RotaryEmbedding", ("input", "position_ids", "cos_cache", "sin_cache"),
           ("output",), _rope_kernel,
           (("interleaved", "int", 0), ("num_heads", "int", 0),
            ("rotary_embedding_dim", "int", 0), ("scale", "float", 1.0),
            ("is_packed_batching", "int", 0)),
           infer=_rope_infer, domain=_DOMAIN, dtypes=_FLOATS,
           doc="Rotary position embedding (RoPE) of Q or K, 3-D or 4-D."),
    define("GroupQueryAttention", _GQA_INPUTS,
           ("output", "present_key?", "present_value?", "output_qk?"), _gqa_kernel,
           (("num_heads", "int"), ("kv_num_heads", "int"), ("scale", "float", None),
            ("softcap", "float", 0.0), ("local_window_size", "int", -1),
            ("do_rotary", "int", 0), ("rotary_interleaved", "int", 0),
            ("causal", "int", 1), ("smooth_softmax", "int", -1), ("qk_output", "int", 0),
            ("sliding_window_cache", "int", 0), ("kv_cache_bit_width", "int", 0),
            ("k_quant_type", "string", "NONE"), ("v_quant_type", "string", "NONE"),
            ("qk_norm_epsilon", "float", 1e-6), ("q_norm_epsilon", "float", None),
            ("k_norm_epsilon", "float", None)),
           infer=_gqa_infer, domain=_DOMAIN, dtypes=_FLOATS,
           doc="Grouped-query causal attention with a BNSH KV cache (onnxruntime-genai)."),
)

KNOWN_FAILURES: dict[str, str] = {}

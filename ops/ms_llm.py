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

MRotaryEmbedding (Qwen2-VL / Qwen2.5-VL / Qwen3-VL, exported by onnxruntime-genai's model
builder): RotaryEmbedding with three position streams, position_ids (3, batch, seq) int64 =
temporal, height, width. Cache column j (of rotary_dim / 2, which cos_cache's width must
equal) takes its cos/sin row from the stream that owns it: mrope_layout 0 gives the first
mrope_section[0] columns to T, the next mrope_section[1] to H, the rest to W; layout 1
gives H every 3rd column from 1 below 3 * mrope_section[1], W every 3rd column from 2 below
3 * mrope_section[2], T the others. cos and sin are multiplied by `scale` and rounded to
the input dtype before the rotation; a 3-D input needs num_heads. Refused (OpAttributeError):
mrope_section not 3 non-negative values summing to rotary_dim / 2, mrope_layout or
interleaved other than 0/1 (onnxruntime reads any interleaved != 1 as 0). Unlike
onnxruntime's CPU kernel, onegraph also rotates a sequence longer than the caches (its
positions must still be in the caches); is_packed_batching changes nothing else there, so
it is accepted.

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
# MRotaryEmbedding
# --------------------------------------------------------------------------------------


def _mrope_attr_problem(attrs):
    """What is wrong with MRotaryEmbedding's attributes on their own, or None."""
    section = attrs["mrope_section"]
    if section is None or len(section) != 3:
        return f"mrope_section must hold 3 integers (T, H, W), got {section!r}"
    if any(int(v) < 0 for v in section):
        return f"mrope_section values must be non-negative, got {list(section)}"
    if int(attrs["mrope_layout"]) not in (0, 1):
        return f"mrope_layout must be 0 (sectioned) or 1 (interleaved), got {attrs['mrope_layout']}"
    if int(attrs["interleaved"]) not in (0, 1):
        # onnxruntime reads only == 1 as interleaved; any other value is refused here
        return f"interleaved must be 0 or 1, got {attrs['interleaved']}"
    if int(attrs["num_heads"]) < 0 or int(attrs["rotary_embedding_dim"]) < 0:
        return (f"num_heads {attrs['num_heads']} and rotary_embedding_dim "
                f"{attrs['rotary_embedding_dim']} must be >= 0")
    if int(attrs["rotary_embedding_dim"]) and int(attrs["num_heads"]) <= 0:
        return "num_heads is required when rotary_embedding_dim is set"
    return None


def _mrope_layout(op, shape, attrs):
    """(num_heads, head_size, rotary_dim) of an MRotaryEmbedding input shape; unlike
    RotaryEmbedding a 3-D input needs num_heads (onnxruntime's rule)."""
    if len(shape) == 4:
        heads, head = shape[1], shape[3]
    elif len(shape) == 3:
        heads = int(attrs["num_heads"])
        if heads <= 0:
            raise OpAttributeError(f"{op}: num_heads must be > 0 for a 3-D input")
        if shape[2] % heads:
            raise ShapeError(f"{op}: hidden size {shape[2]} is not a multiple of num_heads "
                             f"{heads}")
        head = shape[2] // heads
    else:
        raise ShapeError(f"{op}: input must be 3-D or 4-D, got shape {list(shape)}")
    rot = int(attrs["rotary_embedding_dim"]) or head
    if rot > head or rot % 2:
        raise OpAttributeError(f"{op}: rotary dim {rot} (rotary_embedding_dim, or the head "
                               f"size) must be even and at most the head size {head}")
    return heads, head, rot


def _mrope_columns(section, layout, half):
    """Which position stream (0 = T, 1 = H, 2 = W) feeds each of the `half` cache columns."""
    if layout == 0:
        # contiguous chunks: [T] * section[0] + [H] * section[1] + [W] * section[2]
        return np.repeat(np.arange(3), section)[:half]
    cols = np.zeros(half, np.int64)
    j = np.arange(half)
    # interleaved: T everywhere, H every 3rd column from 1 and W every 3rd from 2, each
    # within its first 3 * section columns (W written last, as onnxruntime writes it)
    for stream in (1, 2):
        cols[(j % 3 == stream) & (j < 3 * section[stream])] = stream
    return cols


def _mrope_kernel(inputs, attrs, ctx):
    """Multimodal RoPE: per cache column, the cos/sin row of the T, H or W position."""
    op = "MRotaryEmbedding"
    x, pid, cos, sin = inputs
    problem = _mrope_attr_problem(attrs)
    if problem:
        raise OpAttributeError(f"{op}: {problem}")
    x = _float(x, op, "input")
    if x.dtype.name not in _FLOATS:
        raise ShapeError(f"{op}: input must be float16 or float32, got {x.dtype}")
    cos, sin = _caches(op, cos, sin)
    if cos.dtype != x.dtype or sin.dtype != x.dtype:
        raise ShapeError(f"{op}: cos_cache {cos.dtype} and sin_cache {sin.dtype} must have "
                         f"the input's dtype {x.dtype}")
    heads, head, rot = _mrope_layout(op, x.shape, attrs)
    half = rot // 2
    if cos.shape[1] != half:
        raise ShapeError(f"{op}: cos_cache's second dim must be the rotary dim / 2 = {half}, "
                         f"got {cos.shape[1]}")
    section = [int(v) for v in attrs["mrope_section"]]
    if sum(section) != half:
        raise OpAttributeError(f"{op}: mrope_section {section} must sum to the rotary dim / "
                               f"2 = {half}")
    if x.ndim == 3:
        b, s = x.shape[:2]
    else:
        b, s = x.shape[0], x.shape[2]
    pid = np.asarray(pid)
    if pid.dtype != np.int64 or pid.shape != (3, b, s):
        raise ShapeError(f"{op}: position_ids must be int64 (3, batch, seq) = (3, {b}, {s}), "
                         f"got {pid.dtype} {list(pid.shape)}")
    if pid.size and (pid.min() < 0 or pid.max() >= cos.shape[0]):
        raise ShapeError(f"{op}: positions {int(pid.min())}..{int(pid.max())} out of the "
                         f"caches' {cos.shape[0]} rows")
    w = _work(x.dtype)
    cols = _mrope_columns(section, int(attrs["mrope_layout"]), half)
    scale = np.float32(attrs["scale"])
    # per token and column, the cache row of the stream owning the column; scaled and
    # rounded to the input dtype as onnxruntime builds its per-token cos/sin rows
    rows = pid[cols, :, :].transpose(1, 2, 0)  # (B, S, half)
    idx = np.arange(half)
    comb = [(c.astype(w)[rows, idx] * scale).astype(x.dtype).astype(w).reshape(b * s, half)
            for c in (cos, sin)]
    if x.ndim == 3:
        xs = x.astype(w).reshape(b, s, heads, head).transpose(0, 2, 1, 3)
    else:
        xs = x.astype(w)
    # _rotate gathers rows by position: token (b, s) reads row b * s_len + s of comb
    pos = np.arange(b * s).reshape(b, s)
    y = _rotate(np.ascontiguousarray(xs), pos, comb[0], comb[1], rot,
                int(attrs["interleaved"]), op)
    if x.ndim == 3:
        y = y.transpose(0, 2, 1, 3).reshape(x.shape)
    return (y.astype(x.dtype, copy=False),)


def _mrope_infer(attrs, inputs):
    """The input's dtype and shape; checks the input and position_ids ranks."""
    op = "MRotaryEmbedding"
    x = inputs[0]
    if x.shape is not None and len(x.shape) not in (3, 4):
        raise ShapeError(f"{op}: input must be 3-D or 4-D, got shape {list(x.shape)}")
    p = inputs[1]
    if p.shape is not None and (len(p.shape) != 3 or p.shape[0] not in (3, None)):
        raise ShapeError(f"{op}: position_ids must be (3, batch, seq), got {list(p.shape)}")
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
    define("MRotaryEmbedding", ("input", "position_ids", "cos_cache", "sin_cache"),
           ("output",), _mrope_kernel,
           (("mrope_section", "ints"), ("num_heads", "int", 0),
            ("rotary_embedding_dim", "int", 0), ("interleaved", "int", 0),
            ("mrope_layout", "int", 0), ("is_packed_batching", "int", 0),
            ("scale", "float", 1.0)),
           infer=_mrope_infer, domain=_DOMAIN, dtypes=_FLOATS,
           check_attrs=_mrope_attr_problem,
           doc="Multimodal RoPE (Qwen2-VL / Qwen3-VL): T/H/W positions per cache section."),
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

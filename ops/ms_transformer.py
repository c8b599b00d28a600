"""Operators: onnxruntime's transformer contrib ops (domain "com.microsoft").

onnxruntime's transformers optimizer (`onnxruntime.transformers.optimizer.optimize_model`,
which HF Optimum calls) fuses the subgraphs of BERT/GPT-style models into these ops:
SkipLayerNormalization, SkipSimplifiedLayerNormalization, FastGelu, BiasGelu, Gelu,
QuickGelu, BiasAdd, Attention, MultiHeadAttention and EmbedLayerNormalization, all in
"com.microsoft", and SimplifiedLayerNormalization (RMS norm), which onnxruntime
registers in the default ONNX domain. Inputs (with the optional ones), outputs,
attributes and defaults follow onnxruntime's op schemas (its docs/ContribOperators.md).

Kernels compute float16 (and bfloat16) in float32 and round once to the input dtype at
the end, float32 in float32 and float64 in float64. The layer norms reuse
`ops/normalization.py`'s LayerNormalization kernel, the activations
`ops/activation.py`'s Gelu and Sigmoid kernels, the attention ops
`ops/activation.py`'s softmax.

What the attention ops refuse (OpAttributeError or UnsupportedOpError naming the op and
what): Attention's past / past_sequence_length, do_rotary, past_present_share_buffer,
the 2*batch and 4-D (Megatron) mask_index forms, a 3-D mask_index with unidirectional
(onnxruntime combines the two in a way not reproduced here); MultiHeadAttention's
past_sequence_length, cache_indirection, the qk output, query without key, bias with
packed or 4-D Q/K/V, key padding masks other than (batch,) lengths and (batch, total)
0/1, and unidirectional where the new keys are not as many as the queries
(cross-attention, which onnxruntime's CPU kernel masks in a non-causal way).
onnxruntime's CPU kernel does not implement the packed KV (batch, kv_seq, heads, 2,
head_size) and packed QKV (batch, seq, heads, 3, head_size) layouts; onegraph runs them
as the same attention over the unpacked tensors. onnxruntime has no CPU kernel for
BiasAdd and runs neither BiasGelu nor Gelu in float64; those follow the formulas.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .activation import _gelu, _gelu_tanh_float32, _sigmoid, _softmax
from .normalization import _layernorm_kernel
from .registry import NUM_OUTPUTS, TensorInfo, define

_DOMAIN = "com.microsoft"
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_FLOATS = ("float16", "float32", "float64", "bfloat16")
# the attention ops' default for masked scores (onnxruntime's schemas)
_MASK_FILTER_VALUE = -10000.0


def _padded(inputs, n):
    """The kernel's inputs as a list of n, None for omitted trailing optional ones."""
    return list(inputs) + [None] * (n - len(inputs))


def _work(dtype) -> np.dtype:
    """The dtype a kernel computes in: float64 for float64, float32 otherwise."""
    return _F64 if np.dtype(dtype) == _F64 else _F32


def _float(x, op, what):
    """x as an array; raises ShapeError naming `what` unless it is a float tensor."""
    x = np.asarray(x)
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        raise ShapeError(f"{op}: {what} must be a float tensor, got {x.dtype}")
    return x


def _wants(attrs, k):
    """Whether the node declares output k (all outputs when the executor did not say)."""
    return attrs.get(NUM_OUTPUTS, k + 1) > k


def _vector(v, hidden, op, what, dtype):
    """A per-hidden-unit parameter (1-D of `hidden` values) in `dtype`, or None."""
    if v is None:
        return None
    v = _float(v, op, what)
    if v.ndim != 1 or v.shape[0] != hidden:
        raise ShapeError(f"{op}: {what} must be 1-D of the hidden size {hidden}, got shape "
                         f"{list(v.shape)}")
    return v.astype(dtype, copy=False)


# --------------------------------------------------------------------------------------
# SkipLayerNormalization, SkipSimplifiedLayerNormalization, SimplifiedLayerNormalization
# --------------------------------------------------------------------------------------


def _skip_sum(op, x, skip, bias):
    """input + skip (+ bias) in the work dtype (float32 for float16, as onnxruntime sums
    them), after the shape checks onnxruntime makes:
    input 2-D or 3-D, skip of input's shape or (1, seq, hidden) or (seq, hidden)."""
    x = _float(x, op, "input")
    skip = _float(skip, op, "skip")
    if x.ndim not in (2, 3):
        raise ShapeError(f"{op}: input must be 2-D or 3-D, got shape {list(x.shape)}")
    fits = skip.shape == x.shape or (x.ndim == 3 and skip.shape in (
        (1,) + x.shape[1:], x.shape[1:]))
    if not fits:
        raise ShapeError(f"{op}: skip {list(skip.shape)} must have input's shape "
                         f"{list(x.shape)} (or (1, seq, hidden), (seq, hidden))")
    if skip.dtype != x.dtype:
        raise ShapeError(f"{op}: skip is {skip.dtype}, but input is {x.dtype}")
    w = _work(x.dtype)
    s = x.astype(w) + skip.astype(w, copy=False)
    b = _vector(bias, x.shape[-1], op, "bias", w)
    if b is not None:
        s += b
    return s


def _skip_layernorm_kernel(inputs, attrs, ctx):
    """output = LayerNorm(input + skip + bias) * gamma + beta over the last axis, with
    the float32 mean and 1/sqrt(var + epsilon) (shape (..., 1)) and the sum."""
    op = "SkipLayerNormalization"
    x, skip, gamma, beta, bias = _padded(inputs, 5)
    s = _skip_sum(op, x, skip, bias)
    hidden = s.shape[-1]
    gamma = _vector(gamma, hidden, op, "gamma", s.dtype)
    beta = _vector(beta, hidden, op, "beta", s.dtype)
    y, mean, inv = _layernorm_kernel([s, gamma, beta], {
        "axis": -1, "epsilon": attrs["epsilon"], "stash_type": 1}, ctx)
    dt = np.asarray(x).dtype
    return (y.astype(dt, copy=False), mean.astype(_F32, copy=False),
            inv.astype(_F32, copy=False), s.astype(dt, copy=False)
            )[:max(1, attrs.get(NUM_OUTPUTS, 4))]


def _rms_norm(x, gamma, axis, epsilon):
    """(x / sqrt(mean(x^2 over axis..) + epsilon) * gamma, inv_std_var) computed in
    float32 (float64 for float64), y in x's dtype and inv_std_var float32 (float64)."""
    w = _work(x.dtype)
    xs = np.asarray(x, w)
    lead = x.shape[:axis]
    # the normalised length spelled out: reshape cannot work out -1 for no rows
    flat = xs.reshape(int(np.prod(lead)), int(np.prod(x.shape[axis:])))
    ms = np.einsum("ij,ij->i", flat, flat).reshape(-1, 1) / w.type(max(flat.shape[1], 1))
    inv = 1.0 / np.sqrt(ms + w.type(epsilon))
    y = (flat * inv).reshape(x.shape) * np.asarray(gamma, w)
    return y.astype(x.dtype, copy=False), inv.reshape(lead + (1,) * (x.ndim - axis))


def _skip_simplified_kernel(inputs, attrs, ctx):
    """output = (input + skip + bias) / sqrt(mean of squares + epsilon) * gamma over the
    last axis; onnxruntime fills no mean (its output 1 is zeros here), the float32
    inv_std_var and the sum."""
    op = "SkipSimplifiedLayerNormalization"
    x, skip, gamma, bias = _padded(inputs, 4)
    s = _skip_sum(op, x, skip, bias)
    gamma = _vector(gamma, s.shape[-1], op, "gamma", s.dtype)
    y, inv = _rms_norm(s, gamma, s.ndim - 1, attrs["epsilon"])
    inv = inv.astype(_F32, copy=False)
    dt = np.asarray(x).dtype
    return (y.astype(dt, copy=False), np.zeros_like(inv), inv, s.astype(dt, copy=False)
            )[:max(1, attrs.get(NUM_OUTPUTS, 4))]


def _simplified_axis(op, attrs, rank):
    axis = int(attrs["axis"])
    if not -rank <= axis < rank:
        raise OpAttributeError(f"{op}: axis {axis} out of range for rank {rank}")
    return axis % rank


def _simplified_kernel(inputs, attrs, ctx):
    """Y = X / sqrt(mean(X^2 over axis..-1) + epsilon) * scale (RMS norm), inv_std_var
    in the stash type (float32, or float64 with stash_type 11)."""
    op = "SimplifiedLayerNormalization"
    x = _float(inputs[0], op, "X")
    scale = _float(inputs[1], op, "scale")
    axis = _simplified_axis(op, attrs, x.ndim)
    if scale.shape != x.shape[axis:] and scale.size != int(np.prod(x.shape[axis:])):
        raise ShapeError(f"{op}: scale {list(scale.shape)} must have the normalised shape "
                         f"{list(x.shape[axis:])}")
    stash = int(attrs["stash_type"])
    if stash not in (1, 11):
        raise OpAttributeError(f"{op}: stash_type must be 1 (float) or 11 (double), got "
                               f"{stash}")
    y, inv = _rms_norm(x, scale.reshape(x.shape[axis:]), axis, attrs["epsilon"])
    y = y.astype(scale.dtype, copy=False)  # Y has scale's type (V)
    inv = inv.astype(_F64 if stash == 11 else _F32, copy=False)
    return (y, inv)[:max(1, attrs.get(NUM_OUTPUTS, 2))]


def _stat_shape(shape, axis):
    return None if shape is None else tuple(shape[:axis]) + (1,) * (len(shape) - axis)


def _skip_infer(op, n_params):
    def infer(attrs, inputs):
        x = inputs[0]
        if x.shape is not None and len(x.shape) not in (2, 3):
            raise ShapeError(f"{op}: input must be 2-D or 3-D, got shape {list(x.shape)}")
        for t, name in zip(inputs[1:], ("skip",) + n_params):
            if t is not None and x.dtype is not None and t.dtype is not None \
                    and np.dtype(t.dtype) != np.dtype(x.dtype):
                raise ShapeError(f"{op}: {name} is {t.dtype}, but input is {x.dtype}")
        stat = _stat_shape(x.shape, len(x.shape) - 1 if x.shape is not None else 0)
        return [TensorInfo(x.dtype, x.shape), TensorInfo(_F32, stat), TensorInfo(_F32, stat),
                TensorInfo(x.dtype, x.shape)]
    return infer


def _simplified_infer(attrs, inputs):
    x, scale = inputs[0], inputs[1]
    stat = None
    if x.shape is not None:
        stat = _stat_shape(x.shape, _simplified_axis("SimplifiedLayerNormalization", attrs,
                                                     len(x.shape)))
    udt = _F64 if int(attrs["stash_type"]) == 11 else _F32
    return [TensorInfo(scale.dtype if scale is not None else x.dtype, x.shape),
            TensorInfo(udt, stat)]


# --------------------------------------------------------------------------------------
# FastGelu, BiasGelu, Gelu, QuickGelu, BiasAdd
# --------------------------------------------------------------------------------------


def _with_bias(op, x, bias, what="bias"):
    """x + bias (bias 1-D of x's last dim), or x."""
    x = _float(x, op, "X" if what == "bias" else "A")
    if bias is None:
        return x
    bias = _float(bias, op, what)
    if bias.ndim != 1 or x.ndim == 0 or bias.shape[0] != x.shape[-1]:
        raise ShapeError(f"{op}: {what} must be 1-D of the last dim {x.shape[-1:]} of the "
                         f"input, got shape {list(bias.shape)}")
    if bias.dtype != x.dtype:
        raise ShapeError(f"{op}: {what} is {bias.dtype}, but the input is {x.dtype}")
    return x + bias


def _in_work(fn, x):
    """fn of x computed in float32 (float64 for float64), as x's dtype."""
    w = _work(x.dtype)
    with np.errstate(all="ignore"):
        # at least 1-D: the shared kernels write in place (out=), which a 0-d
        # array's arithmetic, a numpy scalar, cannot take
        y = fn(np.asarray(x, w).reshape(x.shape or (1,)))
    return y.reshape(x.shape).astype(x.dtype, copy=False)


def _tanh_gelu(x):
    if x.dtype == _F32:
        return _gelu_tanh_float32(np.array(x, copy=True))
    return _gelu(x, {"approximate": "tanh"})


def _fast_gelu_kernel(inputs, attrs, ctx):
    """Y = Gelu(X + bias) in the tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    x, bias = _padded(inputs, 2)
    return (_in_work(_tanh_gelu, _with_bias("FastGelu", x, bias)),)


def _exact_gelu(x):
    return _gelu(x, {"approximate": "none"})


def _bias_gelu_kernel(inputs, attrs, ctx):
    """C = Gelu(A + B), exact (erf) Gelu, B 1-D of A's last dim."""
    return (_in_work(_exact_gelu, _with_bias("BiasGelu", inputs[0], inputs[1], "B")),)


def _ms_gelu_kernel(inputs, attrs, ctx):
    """Y = 0.5 X (1 + erf(X / sqrt 2))."""
    return (_in_work(_exact_gelu, _float(inputs[0], "Gelu", "X")),)


def _quick_gelu_kernel(inputs, attrs, ctx):
    """Y = X * sigmoid(alpha X)."""
    x = _float(inputs[0], "QuickGelu", "X")
    alpha = float(attrs["alpha"])

    def fn(v):
        return v * _sigmoid(v * v.dtype.type(alpha), None)
    return (_in_work(fn, x),)


def _bias_add_kernel(inputs, attrs, ctx):
    """Y = X + bias + skip, X and skip (batch, seq, channels), bias (channels,)."""
    op = "BiasAdd"
    x = _float(inputs[0], op, "X")
    skip = _float(inputs[2], op, "skip")
    if x.ndim != 3 or skip.shape != x.shape:
        raise ShapeError(f"{op}: X must be 3-D and skip of its shape, got {list(x.shape)} "
                         f"and {list(skip.shape)}")
    y = _with_bias(op, x, inputs[1])
    y += skip
    return (y,)


def _bias_infer(op, pos, what):
    def infer(attrs, inputs):
        x = inputs[0]
        b = inputs[pos] if len(inputs) > pos else None
        if b is not None and b.shape is not None and len(b.shape) != 1:
            raise ShapeError(f"{op}: {what} must be 1-D, got shape {list(b.shape)}")
        if b is not None and b.dtype is not None and x.dtype is not None \
                and np.dtype(b.dtype) != np.dtype(x.dtype):
            raise ShapeError(f"{op}: {what} is {b.dtype}, but the input is {x.dtype}")
        return [TensorInfo(x.dtype, x.shape)]
    return infer


# --------------------------------------------------------------------------------------
# Attention, MultiHeadAttention
# --------------------------------------------------------------------------------------


def _causal(attrs) -> bool:
    """Whether the node is unidirectional: onnxruntime reads `unidirectional == 1`
    (any other value is bidirectional)."""
    return int(attrs["unidirectional"]) == 1


def _mask_filter(attrs):
    v = attrs["mask_filter_value"]
    return _MASK_FILTER_VALUE if v is None else float(v)


def _key_padding(op, mask, batch, sq, total, what, unidirectional=0):
    """Boolean (B, 1, 1 or Sq, T) keys-allowed array of a key padding mask: (batch,)
    valid key counts, (batch, total) or (batch, seq, total) values (> 0 allows the
    key, as onnxruntime reads them), or None."""
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.dtype != np.int32:
        raise ShapeError(f"{op}: {what} must be int32, got {m.dtype}")
    if m.shape == (batch,):
        return (np.arange(total).reshape(1, total) < m.reshape(batch, 1)).reshape(
            batch, 1, 1, total)
    # onnxruntime allows a key where its mask value is > 0 (a -1 masks, as 0 does)
    if m.shape == (batch, total):
        return (m > 0).reshape(batch, 1, 1, total)
    if op == "Attention" and m.shape == (batch, sq, total) and not unidirectional:
        return (m > 0).reshape(batch, 1, sq, total)
    if op == "Attention" and m.shape == (batch, sq, total):
        raise UnsupportedOpError(f"{op}: a 3-D {what} with unidirectional=1 is not "
                                 "supported")
    forms = "(batch,) or (batch, total_sequence_length)" + (
        " or (batch, sequence_length, total_sequence_length)" if op == "Attention" else "")
    raise UnsupportedOpError(f"{op}: {what} of shape {list(m.shape)} is not supported "
                             f"(batch {batch}, total sequence {total}; supported: {forms})")


def _attention_bias(op, bias, batch, heads, sq, total, w):
    if bias is None:
        return None
    b = _float(bias, op, "attention_bias")
    if b.ndim != 4 or b.shape[0] not in (1, batch) or b.shape[1] not in (1, heads) \
            or b.shape[2:] != (sq, total):
        raise ShapeError(f"{op}: attention_bias must be (batch or 1, num_heads or 1, "
                         f"{sq}, {total}), got {list(b.shape)}")
    return b.astype(w, copy=False)


def _sdpa(op, q, k, v, scale, allowed, bias, attrs):
    """Softmax(scale Q K^T + bias, masked) V for (B, N, S, H) Q and (B, N, T, H) K/V in
    the work dtype. As onnxruntime does, a padding-masked key gets mask_filter_value
    (-10000 by default) added to its score, not -inf: a row with every key masked is the
    softmax of its unmasked scores, never NaN; a future key (unidirectional) gets the
    dtype's lowest value. Returns (B, S, N * Hv)."""
    w = q.dtype
    scores = np.matmul(q * w.type(scale), k.swapaxes(-1, -2))
    sq, total = q.shape[2], k.shape[2]
    fill = w.type(_mask_filter(attrs))
    # onnxruntime sums the padding and causal masks into one, then adds it to the scores
    # once; a future key gets the dtype's lowest value whatever mask_filter_value is (so
    # a query whose past keys are all padding still attends to them, not to the future)
    add = None if allowed is None else np.where(allowed, w.type(0), fill)
    if _causal(attrs):
        past = total - sq
        future = np.arange(total).reshape(1, total) > \
            np.arange(sq).reshape(sq, 1) + past
        c = np.where(future, np.finfo(w).min, w.type(0))
        add = c if add is None else add + c
    if add is not None:
        scores = scores + add
    if bias is not None:
        scores = scores + bias
    with np.errstate(all="ignore"):
        probs = _softmax(scores, -1, fast=w == _F32)
    y = np.matmul(probs, v)
    b, n, s, hv = y.shape
    return y.transpose(0, 2, 1, 3).reshape(b, s, n * hv)


def _heads(x, heads, op, what):
    """(B, S, N*H) -> (B, N, S, H)."""
    b, s, d = x.shape
    if d % heads:
        raise ShapeError(f"{op}: {what} hidden size {d} is not a multiple of num_heads "
                         f"{heads}")
    return x.reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3)


def _num_heads(op, attrs):
    heads = int(attrs["num_heads"])
    if heads <= 0:
        raise OpAttributeError(f"{op}: num_heads must be positive, got {heads}")
    return heads


def _qkv_sizes(attrs, n_out):
    sizes = attrs["qkv_hidden_sizes"]
    if sizes is None or len(sizes) == 0:
        if n_out % 3:
            raise ShapeError(f"Attention: weights' second dim {n_out} is not 3 * hidden "
                             "(give qkv_hidden_sizes)")
        return (n_out // 3,) * 3
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) != 3 or sum(sizes) != n_out or sizes[0] != sizes[1]:
        raise OpAttributeError(f"Attention: qkv_hidden_sizes {list(sizes)} must be three "
                               f"sizes summing to weights' second dim {n_out}, the Q and "
                               "K ones equal")
    return sizes


def _attention_refusals(attrs, past, past_len):
    op = "Attention"
    for name in ("do_rotary", "past_present_share_buffer"):
        if attrs[name]:
            raise UnsupportedOpError(f"{op}: {name}={attrs[name]} is not supported")
    if past is not None:
        raise UnsupportedOpError(f"{op}: the past input (key/value cache) is not supported")
    if past_len is not None:
        raise UnsupportedOpError(f"{op}: past_sequence_length is not supported")


def _attention_kernel(inputs, attrs, ctx):
    """onnxruntime's Attention: Q, K, V = input @ weights + bias split by
    qkv_hidden_sizes, num_heads heads, softmax(scale Q K^T + attention_bias, masked) V;
    `present` = stack(K, V) as (2, batch, heads, seq, head_size)."""
    op = "Attention"
    x, weights, bias, mask, past, attn_bias, past_len = _padded(inputs, 7)
    _attention_refusals(attrs, past, past_len)
    heads = _num_heads(op, attrs)
    x = _float(x, op, "input")
    weights = _float(weights, op, "weights")
    if x.ndim != 3 or weights.ndim != 2 or weights.shape[0] != x.shape[2]:
        raise ShapeError(f"{op}: input must be (batch, seq, input_hidden) and weights "
                         f"(input_hidden, q+k+v hidden), got {list(x.shape)} and "
                         f"{list(weights.shape)}")
    sizes = _qkv_sizes(attrs, weights.shape[1])
    if any(s % heads for s in sizes):
        raise ShapeError(f"{op}: hidden sizes {list(sizes)} must be multiples of num_heads "
                         f"{heads}")
    w = _work(x.dtype)
    qkv = np.matmul(x.astype(w, copy=False), weights.astype(w, copy=False))
    b = _vector(bias, weights.shape[1], op, "bias", w)
    if b is not None:
        qkv += b
    q, k, v = np.split(qkv, [sizes[0], sizes[0] + sizes[1]], axis=2)
    q, k, v = (_heads(t, heads, op, name) for t, name in ((q, "Q"), (k, "K"), (v, "V")))
    batch, sq = x.shape[:2]
    scale = attrs["scale"]
    scale = 1.0 / math.sqrt(sizes[0] // heads) if not scale else float(scale)
    allowed = _key_padding(op, mask, batch, sq, sq, "mask_index", _causal(attrs))
    ab = _attention_bias(op, attn_bias, batch, heads, sq, sq, w)
    y = _sdpa(op, q, k, v, scale, allowed, ab, attrs).astype(x.dtype, copy=False)
    if not _wants(attrs, 1):
        return (y,)
    if sizes[1] != sizes[2]:
        raise UnsupportedOpError(f"{op}: the present output needs equal K and V hidden "
                                 f"sizes, got {list(sizes)}")
    return (y, np.stack([k, v]).astype(x.dtype, copy=False))


def _attention_infer(attrs, inputs):
    op = "Attention"
    x, weights = inputs[0], inputs[1]
    _attention_refusals(attrs, inputs[4] if len(inputs) > 4 else None,
                        inputs[6] if len(inputs) > 6 else None)
    heads = _num_heads(op, attrs)
    if x.shape is None or weights.shape is None or weights.shape[1] is None:
        return [TensorInfo(x.dtype, None), TensorInfo(x.dtype, None)]
    if len(x.shape) != 3 or len(weights.shape) != 2:
        raise ShapeError(f"{op}: input must be 3-D and weights 2-D, got {list(x.shape)} "
                         f"and {list(weights.shape)}")
    sizes = _qkv_sizes(attrs, weights.shape[1])
    batch, seq = x.shape[:2]
    return [TensorInfo(x.dtype, (batch, seq, sizes[2])),
            TensorInfo(x.dtype, (2, batch, heads, seq, sizes[1] // heads))]


def _mha_qkv(op, query, key, value, bias, heads, w):
    """(Q, K, V) as (B, N, S, H) work-dtype arrays from MultiHeadAttention's layouts:
    3-D query with 3-D key/value (bias added), 3-D query with 4-D (B, N, T, H) key/value,
    3-D query with packed (B, T, N, 2, H) key, packed (B, S, N, 3, H) query."""
    q = _float(query, op, "query").astype(w, copy=False)
    if q.ndim == 5:
        if key is not None or value is not None or bias is not None:
            raise UnsupportedOpError(f"{op}: packed QKV query with key, value or bias is "
                                     "not supported")
        if q.shape[2] != heads or q.shape[3] != 3:
            raise ShapeError(f"{op}: packed query must be (batch, seq, {heads}, 3, "
                             f"head_size), got {list(q.shape)}")
        qkv = q.transpose(3, 0, 2, 1, 4)
        return qkv[0], qkv[1], qkv[2]
    if q.ndim != 3:
        raise ShapeError(f"{op}: query must be 3-D or packed 5-D, got {list(q.shape)}")
    if key is None:
        raise UnsupportedOpError(f"{op}: query without key (self-attention from one "
                                 "unpacked tensor) is not supported")
    k = _float(key, op, "key").astype(w, copy=False)
    if k.ndim == 5:
        if value is not None or bias is not None:
            raise UnsupportedOpError(f"{op}: packed KV key with value or bias is not "
                                     "supported")
        if k.shape[2] != heads or k.shape[3] != 2 or k.shape[0] != q.shape[0]:
            raise ShapeError(f"{op}: packed key must be (batch, kv_seq, {heads}, 2, "
                             f"head_size), got {list(k.shape)}")
        kv = k.transpose(3, 0, 2, 1, 4)
        return _heads(q, heads, op, "query"), kv[0], kv[1]
    if value is None:
        raise ShapeError(f"{op}: key of shape {list(k.shape)} needs value")
    v = _float(value, op, "value").astype(w, copy=False)
    if k.ndim == 4 and v.ndim == 4:
        if k.shape != v.shape or k.shape[:2] != (q.shape[0], heads):
            raise ShapeError(f"{op}: 4-D key {list(k.shape)} and value {list(v.shape)} "
                             f"must both be (batch, {heads}, kv_seq, head_size)")
        if bias is not None:
            raise UnsupportedOpError(f"{op}: bias with 4-D key/value is not supported")
        return _heads(q, heads, op, "query"), k, v
    if k.ndim != 3 or v.ndim != 3 or k.shape[:2] != v.shape[:2] or k.shape[0] != q.shape[0] \
            or k.shape[2] != q.shape[2]:
        raise ShapeError(f"{op}: query {list(q.shape)}, key {list(k.shape)} and value "
                         f"{list(v.shape)} must be (batch, seq, hidden), (batch, kv_seq, "
                         "hidden) and (batch, kv_seq, v_hidden)")
    if bias is not None:
        dq, dv = q.shape[2], v.shape[2]
        b = _vector(bias, 2 * dq + dv, op, "bias", w)
        q, k, v = q + b[:dq], k + b[dq:2 * dq], v + b[2 * dq:]
    return _heads(q, heads, op, "query"), _heads(k, heads, op, "key"), \
        _heads(v, heads, op, "value")


def _mha_refusals(inputs, attrs):
    op = "MultiHeadAttention"
    for pos, name in ((8, "past_sequence_length"), (9, "cache_indirection")):
        if len(inputs) > pos and inputs[pos] is not None:
            raise UnsupportedOpError(f"{op}: the {name} input is not supported")
    if attrs.get(NUM_OUTPUTS, 0) > 3:
        raise UnsupportedOpError(f"{op}: the qk output is not supported")


def _mha_kernel(inputs, attrs, ctx):
    """onnxruntime's MultiHeadAttention: softmax(scale Q K^T + attention_bias, masked) V
    over num_heads heads; past_key/past_value (B, N, P, H) are put before K/V, which the
    present_key/present_value outputs return."""
    op = "MultiHeadAttention"
    query, key, value, bias, kpm, attn_bias, past_k, past_v = _padded(inputs, 10)[:8]
    _mha_refusals(inputs, attrs)
    heads = _num_heads(op, attrs)
    out_dtype = _float(query, op, "query").dtype
    w = _work(out_dtype)
    q, k, v = _mha_qkv(op, query, key, value, bias, heads, w)
    if (past_k is None) != (past_v is None):
        raise ShapeError(f"{op}: past_key and past_value must be given together")
    if past_k is not None:
        pk = _float(past_k, op, "past_key").astype(w, copy=False)
        pv = _float(past_v, op, "past_value").astype(w, copy=False)
        if pk.ndim != 4 or pv.ndim != 4 or pk.shape[:2] != k.shape[:2] \
                or pk.shape[3] != k.shape[3] or pv.shape[3] != v.shape[3] \
                or pk.shape[2] != pv.shape[2]:
            raise ShapeError(f"{op}: past_key {list(pk.shape)} / past_value "
                             f"{list(pv.shape)} must be (batch, {heads}, past, head_size)")
        k = np.concatenate([pk, k], axis=2)
        v = np.concatenate([pv, v], axis=2)
    if q.shape[3] != k.shape[3] or k.shape[2] != v.shape[2]:
        raise ShapeError(f"{op}: Q {list(q.shape)}, K {list(k.shape)} and V "
                         f"{list(v.shape)} (batch, heads, seq, head_size) do not fit")
    batch, _, sq, hd = q.shape
    total = k.shape[2]
    past_len = 0 if past_k is None else np.asarray(past_k).shape[2]
    if _causal(attrs) and total != past_len + sq:
        raise UnsupportedOpError(
            f"{op}: unidirectional with a key sequence ({total - past_len}) other than "
            f"the query's ({sq}) is not supported (cross-attention; onnxruntime's CPU "
            "kernel masks it in a way that is not causal)")
    scale = attrs["scale"]
    scale = 1.0 / math.sqrt(hd) if not scale else float(scale)
    allowed = _key_padding(op, kpm, batch, sq, total, "key_padding_mask")
    ab = _attention_bias(op, attn_bias, batch, heads, sq, total, w)
    y = _sdpa(op, q, k, v, scale, allowed, ab, attrs).astype(out_dtype, copy=False)
    outs = (y, k.astype(out_dtype, copy=False), v.astype(out_dtype, copy=False))
    return outs[:max(1, min(3, attrs.get(NUM_OUTPUTS, 1)))]


def _mha_infer(attrs, inputs):
    op = "MultiHeadAttention"
    _mha_refusals(inputs, attrs)
    heads = _num_heads(op, attrs)
    q = inputs[0]
    value = inputs[2] if len(inputs) > 2 else None
    unknown = [TensorInfo(q.dtype, None)] * 3
    if q.shape is None:
        return unknown
    if len(q.shape) == 5:
        b, s, n, _, h = q.shape
        return [TensorInfo(q.dtype, (b, s, None if n is None or h is None else n * h))] + \
            unknown[1:]
    if len(q.shape) != 3:
        raise ShapeError(f"{op}: query must be 3-D or packed 5-D, got {list(q.shape)}")
    b, s, d = q.shape
    vd = d
    if value is not None and value.shape is not None:
        vs = value.shape
        vd = vs[2] if len(vs) == 3 else (None if vs[3] is None else heads * vs[3])
    return [TensorInfo(q.dtype, (b, s, vd))] + unknown[1:]


# --------------------------------------------------------------------------------------
# EmbedLayerNormalization
# --------------------------------------------------------------------------------------


def _ids(x, op, what, rows):
    """Checked int32 ids indexing a table of `rows` rows."""
    x = np.asarray(x)
    if x.dtype != np.int32:
        raise ShapeError(f"{op}: {what} must be int32, got {x.dtype}")
    if x.size and (x.min() < 0 or x.max() >= rows):
        raise ShapeError(f"{op}: {what} holds ids outside [0, {rows}): "
                         f"{int(x.min())}..{int(x.max())}")
    return x


def _table2d(t, op, what, hidden=None):
    t = _float(t, op, what)
    if t.ndim != 2 or (hidden is not None and t.shape[1] != hidden):
        width = "hidden" if hidden is None else f"hidden {hidden}"
        raise ShapeError(f"{op}: {what} must be (rows, {width}), got {list(t.shape)}")
    return t


def _embed_kernel(inputs, attrs, ctx):
    """output = LayerNorm(word[input_ids] + position[position_ids or 0..seq-1]
    + segment[segment_ids]) * gamma + beta; mask_index = the number of nonzero mask
    values per row (zeros without a mask); embedding_sum = the sum before the norm."""
    op = "EmbedLayerNormalization"
    ids, seg_ids, word, pos, seg, gamma, beta, mask, pos_ids = _padded(inputs, 9)
    word = _table2d(word, op, "word_embedding")
    hidden = word.shape[1]
    pos = _table2d(pos, op, "position_embedding", hidden)
    ids = _ids(ids, op, "input_ids", word.shape[0])
    if ids.ndim != 2:
        raise ShapeError(f"{op}: input_ids must be (batch, seq), got {list(ids.shape)}")
    batch, seq = ids.shape
    s = word[ids]
    if pos_ids is None:
        if seq > pos.shape[0]:
            raise ShapeError(f"{op}: sequence length {seq} exceeds position_embedding's "
                             f"{pos.shape[0]} rows")
        s = s + pos[:seq]
    else:
        p = _ids(pos_ids, op, "position_ids", pos.shape[0])
        if p.shape not in ((batch, seq), (1, seq)):
            raise ShapeError(f"{op}: position_ids must be (batch, seq) or (1, seq), got "
                             f"{list(p.shape)}")
        s = s + pos[p]
    if (seg is None) != (seg_ids is None):
        raise ShapeError(f"{op}: segment_ids and segment_embedding must be given together")
    if seg is not None:
        seg = _table2d(seg, op, "segment_embedding", hidden)
        sid = _ids(seg_ids, op, "segment_ids", seg.shape[0])
        if sid.shape != ids.shape:
            raise ShapeError(f"{op}: segment_ids {list(sid.shape)} must have input_ids' "
                             f"shape {list(ids.shape)}")
        s = s + seg[sid]
    s = s.astype(word.dtype, copy=False)
    g = _vector(gamma, hidden, op, "gamma", word.dtype)
    b = _vector(beta, hidden, op, "beta", word.dtype)
    y = _layernorm_kernel([s, g, b], {"axis": -1, "epsilon": attrs["epsilon"],
                                      "stash_type": 1}, ctx)[0]
    return (y, _mask_index(op, mask, ids.shape), s)[:max(1, attrs.get(NUM_OUTPUTS, 3))]


def _mask_index(op, mask, ids_shape):
    """The mask_index output of the embedding ops: per batch row, how many mask values
    are 1 (onnxruntime counts the ones: a 2 or a -1 does not count); zeros without a
    mask.

    Raises:
        ShapeError: the mask is not int32 of input_ids' shape.
    """
    if mask is None:
        return np.zeros(ids_shape[0], np.int32)
    mask = np.asarray(mask)
    if mask.dtype != np.int32 or mask.shape != tuple(ids_shape):
        raise ShapeError(f"{op}: mask must be int32 of input_ids' shape "
                         f"{list(ids_shape)}, got {mask.dtype} {list(mask.shape)}")
    return np.count_nonzero(mask == 1, axis=1).astype(np.int32)


def _embed_infer(attrs, inputs):
    ids, word = inputs[0], inputs[2]
    if ids.dtype is not None and np.dtype(ids.dtype) != np.int32:
        raise ShapeError(f"EmbedLayerNormalization: input_ids must be int32, got {ids.dtype}")
    batch = seq = None
    if ids.shape is not None:
        if len(ids.shape) != 2:
            raise ShapeError("EmbedLayerNormalization: input_ids must be (batch, seq), got "
                             f"{list(ids.shape)}")
        batch, seq = ids.shape
    hidden = word.shape[1] if word.shape is not None and len(word.shape) == 2 else None
    shape = None if ids.shape is None else (batch, seq, hidden)
    return [TensorInfo(word.dtype, shape), TensorInfo(np.dtype(np.int32),
                                                      None if ids.shape is None else (batch,)),
            TensorInfo(word.dtype, shape)]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

_SKIP_OUTPUTS = ("output", "mean?", "inv_std_var?", "input_skip_bias_sum?")
_EPS12 = ("epsilon", "float", 1e-12)

OPS = (
    define("SkipLayerNormalization", ("input", "skip", "gamma", "beta?", "bias?"),
           _SKIP_OUTPUTS, _skip_layernorm_kernel, (_EPS12,),
           infer=_skip_infer("SkipLayerNormalization", ("gamma", "beta", "bias")),
           domain=_DOMAIN, dtypes=_FLOATS,
           doc="LayerNormalization of input + skip + bias over the last axis."),
    define("SkipSimplifiedLayerNormalization", ("input", "skip", "gamma", "bias?"),
           _SKIP_OUTPUTS, _skip_simplified_kernel, (_EPS12,),
           infer=_skip_infer("SkipSimplifiedLayerNormalization", ("gamma", "bias")),
           domain=_DOMAIN, dtypes=_FLOATS,
           doc="RMS normalization of input + skip + bias over the last axis."),
    # onnxruntime registers SimplifiedLayerNormalization in the ONNX domain
    define("SimplifiedLayerNormalization", ("X", "scale"), ("Y", "inv_std_var?"),
           _simplified_kernel, (("axis", "int", -1), ("epsilon", "float", 1e-5),
                                ("stash_type", "int", 1)),
           infer=_simplified_infer, dtypes=_FLOATS,
           doc="onnxruntime's RMS normalization over axis..-1 (no mean subtracted)."),
    define("FastGelu", ("X", "bias?"), ("Y",), _fast_gelu_kernel,
           infer=_bias_infer("FastGelu", 1, "bias"), domain=_DOMAIN, dtypes=_FLOATS,
           doc="Gelu (tanh approximation) of X + bias."),
    define("BiasGelu", ("A", "B"), ("C",), _bias_gelu_kernel,
           infer=_bias_infer("BiasGelu", 1, "B"), domain=_DOMAIN, dtypes=_FLOATS,
           doc="Exact (erf) Gelu of A + B."),
    define("Gelu", ("X",), ("Y",), _ms_gelu_kernel, infer=_bias_infer("Gelu", 9, ""),
           domain=_DOMAIN, dtypes=_FLOATS, doc="Exact (erf) Gelu."),
    define("QuickGelu", ("X",), ("Y",), _quick_gelu_kernel, (("alpha", "float", 1.702),),
           infer=_bias_infer("QuickGelu", 9, ""), domain=_DOMAIN, dtypes=_FLOATS,
           doc="X * sigmoid(alpha X)."),
    define("BiasAdd", ("X", "bias", "skip"), ("Y",), _bias_add_kernel,
           infer=_bias_infer("BiasAdd", 1, "bias"), domain=_DOMAIN,
           dtypes=("float16", "float32"), doc="X + bias + skip."),
    define("Attention", ("input", "weights", "bias?", "mask_index?", "past?",
                         "attention_bias?", "past_sequence_length?"),
           ("output", "present?"), _attention_kernel,
           (("num_heads", "int"), ("unidirectional", "int", 0),
            ("qkv_hidden_sizes", "ints", None), ("mask_filter_value", "float", None),
            ("scale", "float", None), ("do_rotary", "int", 0),
            ("rotary_embedding_dim", "int", 0), ("past_present_share_buffer", "int", 0)),
           infer=_attention_infer, domain=_DOMAIN, dtypes=_FLOATS,
           doc="Multi-head self-attention with the QKV projection inside the op."),
    define("MultiHeadAttention", ("query", "key?", "value?", "bias?", "key_padding_mask?",
                                  "attention_bias?", "past_key?", "past_value?",
                                  "past_sequence_length?", "cache_indirection?"),
           ("output", "present_key?", "present_value?", "qk?"), _mha_kernel,
           (("num_heads", "int"), ("unidirectional", "int", 0),
            ("mask_filter_value", "float", None), ("scale", "float", None)),
           infer=_mha_infer, domain=_DOMAIN, dtypes=_FLOATS,
           doc="Multi-head attention of projected Q, K, V (unpacked or packed)."),
    define("EmbedLayerNormalization", ("input_ids", "segment_ids?", "word_embedding",
                                       "position_embedding", "segment_embedding?", "gamma",
                                       "beta", "mask?", "position_ids?"),
           ("output", "mask_index?", "embedding_sum?"), _embed_kernel,
           (_EPS12, ("mask_index_type", "int", 1)),
           infer=_embed_infer, domain=_DOMAIN,
           doc="Word + position + segment embeddings, LayerNorm, and the mask's lengths."),
)

KNOWN_FAILURES: dict[str, str] = {}

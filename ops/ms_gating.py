"""Operators: onnxruntime's gated-norm, gate and hyper-connection contrib ops, and three
decoding helpers (domain "com.microsoft").

Recent decoder LLMs exported for onnxruntime(-genai) fuse small gating patterns into
single ops: gated DeltaNet / Mamba2 attention outputs (hybrid models such as Qwen3-Next)
end in GatedRMSNorm; hyper-connection models (DeepSeek-V4 style: several residual streams
per token) mix their streams with HyperConnectionPreMix / HyperConnectionPostMix and normalise
each stream with BranchwiseRMSNorm; Engram n-gram memory blocks gate their value with
EngramGate; GatedAdd is a residual add scaled by a per-row gate. Inputs, outputs and
attributes follow onnxruntime's schemas; the semantics follow its CPU kernels, which the
tests use as the oracle.

GatedRMSNorm(X, scale, gate): Y = X * rsqrt(mean(X^2) + epsilon) * scale * act(gate), the
mean over each group of C = scale.size trailing elements (X's last dim a multiple of C),
act = silu ("swish" is its alias) or sigmoid; gate has X's shape.
BranchwiseRMSNorm(X, scale?): RMSNorm over H of grouped (..., C, H) X, or of flattened
(..., C * H) X with num_branches = C; scale (H), (C * H) or (C, H).
EngramGate(key, query, value, key_norm_scale, query_norm_scale, conv_norm_scale?): per
(batch, seq, hyper-connection) row, dot = sum(RMSNorm(key) * RMSNorm(query)) / sqrt(H),
gate = sigmoid(sign(dot) * sqrt(max(|dot|, 1e-6))), output = gate * value (value (B, S, H)
shared by the hc_mult rows); gated_value_normed = RMSNorm(output) * conv_norm_scale.
GatedAdd(X, Y, gate): X + Y * gate with gate (..., 1) of X's leading dims.
HyperConnectionPreMix(streams, pre_mix): Y[..., h] = reduction_scale *
sum_c(X[..., c, h] * pre_mix[..., c(, h)]); pre_mix (..., C), (..., C, 1), (..., C, H), or
(..., C * H) for flattened streams.
HyperConnectionPostMix(streams, block_output, post_mix, stream_mix?): Y[..., k, h] =
sum_c(stream_mix[..., c, k] * streams[..., c, h]) + post_mix[..., k(, h)] *
block_output[..., h]; stream_mix defaults to the identity.

BifurcationDetector, NGramHashMapping and VarlenNGramHashMapping are here because they
are small standalone helpers of decoding (no family of their own): BifurcationDetector
(aggressive decoding of sequence-to-sequence models) appends to cur_tokens the pred_tokens
up to and including the first that leaves src_tokens (from prev_suffix_match_idx), then
returns the position in src_tokens just after the output's last n-gram for n from
min_ngram_size up to max_ngram_size, stopping at the first n with no occurrence (or one
ending src_tokens); an n-gram found twice gives -1 unless a longer one is unique; int64.
NGramHashMapping (the Engram n-gram embedding's ids, int32 or int64): for n in
2..max_ngram_size, mix = xor over shifts k < n of id[t - k] * multipliers[k] (wrapping),
one hash id per head = mix mod vocab_size (+ head_offsets); ids before the call come from
past_ids (right-aligned), else pad_id, or eos_token_id when given; reset_on_eos (with
eos_token_id) reads shifts at or before the last EOS before t as eos_token_id, segment_ids
reads shifts before the last segment change in the call as that filler; present_ids = the
trailing max_ngram_size - 1 ids.
VarlenNGramHashMapping is the same over packed requests (input_ids (total_tokens,),
cumulative_sequence_length (B + 1,) int32, past_ids per request): a window never crosses
requests; segment changes also count between past_segment_ids and the tokens (history
without past_segment_ids continues the request's first segment); head_offsets may be
negative and wrap; state_update[b, j] = the trailing ids after token j for the first
min(capture_count[b], length, state_update_capacity) tokens, pad_id elsewhere. Refused:
present_segment_ids without segment_ids (as onnxruntime), and so state_update without
segment_ids (onegraph sees how many outputs a node has, not which are left out).

Arithmetic is float32 (float16 / bfloat16 widened once, rounded once at the end), as
onnxruntime's CPU kernels compute; GatedAdd's float16 product is rounded to float16 before
the add, as onnxruntime's kernel and schema state. The gates and mixing matrices (type M)
may have a float dtype other than the streams'. Dtypes are those of onnxruntime's CPU
kernels: float32 and float16, plus bfloat16 for BranchwiseRMSNorm and the two mixes.

Refused: GatedAdd's gate_weight input (projected mode; onnxruntime implements it only on
CUDA for bfloat16) raises UnsupportedOpError; an activation other than silu / swish /
sigmoid, num_branches < 0 and the decoding helpers' sizes out of range raise
OpAttributeError; shapes and values onnxruntime rejects (non-positive vocab_sizes,
NGramHashMapping's negative head_offsets or offsets + vocab_sizes past the id type, bad
cumulative_sequence_length) raise ShapeError naming the op and the input.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .ms_transformer import _DOMAIN, _float
from .registry import NUM_OUTPUTS, TensorInfo, define

_F32 = np.dtype(np.float32)
_HALF = ("float16", "float32")
_HALF_BF16 = ("float16", "float32", "bfloat16")


def _typed(x, op, what, allowed):
    """x as an array of one of the `allowed` float dtype names, else a ShapeError."""
    x = _float(x, op, what)
    if x.dtype.name not in allowed:
        names = ", ".join(allowed[:-1]) + " or " + allowed[-1]
        raise ShapeError(f"{op}: {what} must be {names}, got {x.dtype}")
    return x


def _sigmoid(z):
    """The logistic function of float32 z without overflow warnings for large |z|."""
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(_F32, copy=False)


def _inv_rms(x, eps):
    """1 / sqrt(mean(x^2) + eps) over the last axis of float32 x, kept as a length-1 axis
    (inf for a zero row with epsilon 0, as onnxruntime's float arithmetic gives)."""
    with np.errstate(divide="ignore", over="ignore"):
        ms = np.mean(x * x, axis=-1, keepdims=True) if x.shape[-1] else \
            np.zeros(x.shape[:-1] + (1,), _F32)
        return (1.0 / np.sqrt(ms + np.float32(eps))).astype(_F32, copy=False)


def _f32(x):
    """x as a float32 array (no copy when it already is one)."""
    return np.asarray(x).astype(_F32, copy=False)


def _refuse_attrs(op, check, attrs):
    """Raises OpAttributeError "<op>: <problem>" where check(attrs), one of the ops'
    check_attrs functions below, finds a problem; the kernels check as the registry's
    resolve_attrs does."""
    problem = check(attrs)
    if problem:
        raise OpAttributeError(f"{op}: {problem}")


# --------------------------------------------------------------------------------------
# GatedRMSNorm
# --------------------------------------------------------------------------------------

_ACTIVATIONS = ("silu", "swish", "sigmoid")


def _gated_rms_attrs(attrs):
    """What is wrong with GatedRMSNorm's attributes, or None."""
    act = attrs["activation"]
    act = act.decode() if isinstance(act, bytes) else act
    if act not in _ACTIVATIONS:
        return f"activation must be one of {', '.join(_ACTIVATIONS)}, got {act!r}"
    return None


def _gated_rms_kernel(inputs, attrs, ctx):
    """RMSNorm over groups of scale.size elements, times scale and act(gate)."""
    op = "GatedRMSNorm"
    _refuse_attrs(op, _gated_rms_attrs, attrs)
    x, scale, gate = inputs
    x = _typed(x, op, "X", _HALF)
    scale, gate = _typed(scale, op, "scale", _HALF), _typed(gate, op, "gate", _HALF)
    if scale.dtype != x.dtype or gate.dtype != x.dtype:
        raise ShapeError(f"{op}: X {x.dtype}, scale {scale.dtype} and gate {gate.dtype} must "
                         "share a dtype")
    if x.ndim < 1 or gate.shape != x.shape:
        raise ShapeError(f"{op}: X must have rank >= 1 and gate its shape, got X "
                         f"{list(x.shape)} and gate {list(gate.shape)}")
    c = scale.size
    if c == 0 or x.shape[-1] % c:
        raise ShapeError(f"{op}: X's last dim {x.shape[-1]} must be a multiple of the "
                         f"non-empty scale's length {c}")
    # onnxruntime reads scale flat, whatever its shape
    xs = _f32(x).reshape(-1, c)
    z = _f32(gate).reshape(-1, c)
    act = attrs["activation"]
    act = act.decode() if isinstance(act, bytes) else act
    g = _sigmoid(z) if act == "sigmoid" else z * _sigmoid(z)
    y = xs * _inv_rms(xs, attrs["epsilon"]) * _f32(scale).reshape(c) * g
    return (y.reshape(x.shape).astype(x.dtype, copy=False),)


def _same_shape_infer(attrs, inputs):
    """One output of the first input's dtype and shape."""
    x = inputs[0]
    return [TensorInfo(x.dtype, x.shape)]


# --------------------------------------------------------------------------------------
# Hyper-connection stream layout (BranchwiseRMSNorm, HyperConnectionPreMix / PostMix)
# --------------------------------------------------------------------------------------


def _streams(op, shape, num_branches):
    """(prefix dims, branches C, hidden H) of grouped (..., C, H) or flattened (..., C * H)
    streams (num_branches = C > 0), with onnxruntime's rules."""
    nb = int(num_branches)
    if nb < 0:
        raise OpAttributeError(f"{op}: num_branches must be >= 0, got {nb}")
    if nb:
        if len(shape) < 1 or shape[-1] <= 0 or shape[-1] % nb:
            raise ShapeError(f"{op}: flattened streams {list(shape)} need a positive last "
                             f"dim divisible by num_branches {nb}")
        return tuple(shape[:-1]), nb, shape[-1] // nb
    if len(shape) < 2 or shape[-2] <= 0 or shape[-1] <= 0:
        raise ShapeError(f"{op}: grouped streams must be (..., C, H) with C, H > 0, got "
                         f"{list(shape)}")
    return tuple(shape[:-2]), shape[-2], shape[-1]


def _gate(op, what, gate, prefix, c, h, flattened_feature):
    """A gate of suffix (C), (C, 1), (C, H) (or (C * H) when `flattened_feature`) after
    the streams' prefix dims, as float32 (*prefix, C, 1) or (*prefix, C, H)."""
    g = _float(gate, op, what)
    p = len(prefix)
    if g.ndim >= p and g.shape[:p] == prefix:
        suffix = g.shape[p:]
        if suffix == (c,) or suffix == (c, 1):
            return _f32(g).reshape(prefix + (c, 1))
        if suffix == (c, h) or (flattened_feature and suffix == (c * h,)):
            return _f32(g).reshape(prefix + (c, h))
    shapes = "(C), (C, 1), (C, H)" + (" or (C * H)" if flattened_feature else "")
    raise ShapeError(f"{op}: {what} {list(g.shape)} must be the streams' leading dims "
                     f"{list(prefix)} then {shapes} with C={c}, H={h}")


def _branchwise_kernel(inputs, attrs, ctx):
    """RMSNorm of each branch's H features, times an optional scale."""
    op = "BranchwiseRMSNorm"
    x = _typed(inputs[0], op, "X", _HALF_BF16)
    scale = inputs[1] if len(inputs) > 1 else None
    prefix, c, h = _streams(op, x.shape, attrs["num_branches"])
    xs = _f32(x).reshape(prefix + (c, h))
    y = xs * _inv_rms(xs, attrs["epsilon"])
    if scale is not None:
        s = _typed(scale, op, "scale", _HALF_BF16)
        if not ((s.ndim == 1 and s.shape[0] in (h, c * h)) or s.shape == (c, h)):
            raise ShapeError(f"{op}: scale must be (H), (C * H) or (C, H) with C={c}, H={h}, "
                             f"got {list(s.shape)}")
        # (H) broadcasts over the branches; (C * H) and (C, H) give each branch its own
        y = y * _f32(s).reshape((h,) if s.size == h else (c, h))
    return (y.reshape(x.shape).astype(x.dtype, copy=False),)


def _pre_mix_kernel(inputs, attrs, ctx):
    """reduction_scale * sum over branches of streams * pre_mix."""
    op = "HyperConnectionPreMix"
    x, mix = inputs
    x = _typed(x, op, "streams", _HALF_BF16)
    prefix, c, h = _streams(op, x.shape, attrs["num_branches"])
    g = _gate(op, "pre_mix", _typed(mix, op, "pre_mix", _HALF_BF16), prefix, c, h,
              int(attrs["num_branches"]) > 0)
    y = np.sum(_f32(x).reshape(prefix + (c, h)) * g, axis=-2) * np.float32(
        attrs["reduction_scale"])
    return (y.astype(x.dtype, copy=False),)


def _post_mix_kernel(inputs, attrs, ctx):
    """stream_mix^T applied over branches, plus post_mix * block_output per branch."""
    op = "HyperConnectionPostMix"
    x, block, post = inputs[:3]
    smix = inputs[3] if len(inputs) > 3 else None
    x = _typed(x, op, "streams", _HALF_BF16)
    block = _typed(block, op, "block_output", _HALF_BF16)
    if block.dtype != x.dtype:
        raise ShapeError(f"{op}: block_output {block.dtype} must have the streams' dtype "
                         f"{x.dtype}")
    prefix, c, h = _streams(op, x.shape, attrs["num_branches"])
    if block.shape != prefix + (h,):
        raise ShapeError(f"{op}: block_output must be (..., H) = {list(prefix + (h,))}, got "
                         f"{list(block.shape)}")
    post = _typed(post, op, "post_mix", _HALF_BF16)
    g = _gate(op, "post_mix", post, prefix, c, h, False)
    xs = _f32(x).reshape(prefix + (c, h))
    if smix is not None:
        m = _typed(smix, op, "stream_mix", _HALF_BF16)
        if m.dtype != post.dtype:
            # one type parameter M binds both (onnxruntime refuses the model)
            raise ShapeError(f"{op}: stream_mix {m.dtype} and post_mix {post.dtype} must "
                             "share a dtype")
        if m.shape != prefix + (c, c):
            raise ShapeError(f"{op}: stream_mix must be (..., C, C) = {list(prefix + (c, c))}, "
                             f"got {list(m.shape)}")
        # Y[k] = sum_c M[c, k] * X[c]: M transposed times X
        xs = np.matmul(np.swapaxes(_f32(m), -1, -2), xs)
    y = xs + g * _f32(block)[..., None, :]
    return (y.reshape(x.shape).astype(x.dtype, copy=False),)


def _known(shape):
    """Whether every dim of `shape` is known."""
    return shape is not None and all(d is not None for d in shape)


def _pre_mix_infer(attrs, inputs):
    """The streams' dtype and shape (..., H) (unknown unless all dims are)."""
    x = inputs[0]
    if not _known(x.shape):
        return [TensorInfo(x.dtype, None)]
    prefix, _, h = _streams("HyperConnectionPreMix", x.shape, attrs["num_branches"])
    return [TensorInfo(x.dtype, prefix + (h,))]


# --------------------------------------------------------------------------------------
# EngramGate
# --------------------------------------------------------------------------------------


def _engram_kernel(inputs, attrs, ctx):
    """sigmoid of the signed-sqrt scaled dot of RMS-normed key and query, times value."""
    op = "EngramGate"
    key, query, value, kscale, qscale = inputs[:5]
    cscale = inputs[5] if len(inputs) > 5 else None
    key = _typed(key, op, "key", _HALF)
    if key.ndim != 4:
        raise ShapeError(f"{op}: key must be 4-D (batch, seq, hc_mult, hidden), got "
                         f"{list(key.shape)}")
    b, s, g, h = key.shape
    named = [("query", query, key.shape), ("value", value, (b, s, h)),
             ("key_norm_scale", kscale, (g, h)), ("query_norm_scale", qscale, (g, h))]
    if cscale is not None:
        named.append(("conv_norm_scale", cscale, (g, h)))
    arrays = []
    for what, v, want in named:
        v = _typed(v, op, what, _HALF)
        if v.dtype != key.dtype or v.shape != want:
            raise ShapeError(f"{op}: {what} must be {key.dtype} of shape {list(want)}, got "
                             f"{v.dtype} {list(v.shape)}")
        arrays.append(_f32(v))
    q, v, ks, qs = arrays[:4]
    wants_normed = attrs.get(NUM_OUTPUTS, 1) > 1
    if wants_normed and cscale is None:
        raise ShapeError(f"{op}: conv_norm_scale is required for the gated_value_normed "
                         "output")
    eps = attrs["epsilon"]
    k = _f32(key)
    dot = np.sum(k * _inv_rms(k, eps) * ks * (q * _inv_rms(q, eps) * qs), axis=-1,
                 keepdims=True) / np.sqrt(np.float32(h))
    mag = np.sqrt(np.maximum(np.abs(dot), np.float32(1e-6)))
    # sign(0) = 0: a zero dot gives gate 0.5, as onnxruntime's EngramGateArg
    gate = _sigmoid((np.sign(dot) * mag).astype(_F32))
    y = gate * v[:, :, None, :]
    out = (y.astype(key.dtype, copy=False),)
    if wants_normed:
        # RMSNorm of the output as rounded to T (not of the float32 gated value), as
        # onnxruntime's kernel computes it
        yr = _f32(out[0])
        normed = yr * _inv_rms(yr, eps) * arrays[4]
        out += (normed.astype(key.dtype, copy=False),)
    return out


def _engram_infer(attrs, inputs):
    """Both outputs have the key's dtype and shape."""
    k = inputs[0]
    if k.shape is not None and len(k.shape) != 4:
        raise ShapeError(f"EngramGate: key must be 4-D (batch, seq, hc_mult, hidden), got "
                         f"{list(k.shape)}")
    return [TensorInfo(k.dtype, k.shape)] * 2


# --------------------------------------------------------------------------------------
# GatedAdd
# --------------------------------------------------------------------------------------


def _gated_add_kernel(inputs, attrs, ctx):
    """X + Y * gate, gate (..., 1) per row (plain mode)."""
    op = "GatedAdd"
    x, y, gate = inputs[:3]
    if len(inputs) > 3 and inputs[3] is not None:
        raise UnsupportedOpError(f"{op}: the gate_weight input (projected mode, CUDA "
                                 "bfloat16 only in onnxruntime) is not supported")
    x = _typed(x, op, "X", _HALF)
    y, gate = _typed(y, op, "Y", _HALF), _typed(gate, op, "gate", _HALF)
    if y.dtype != x.dtype or gate.dtype != x.dtype:
        raise ShapeError(f"{op}: X {x.dtype}, Y {y.dtype} and gate {gate.dtype} must share "
                         "a dtype")
    if x.ndim < 1 or x.shape[-1] <= 0 or y.shape != x.shape:
        raise ShapeError(f"{op}: X must have rank >= 1 and a positive last dim and Y its "
                         f"shape, got X {list(x.shape)} and Y {list(y.shape)}")
    if gate.shape != x.shape[:-1] + (1,):
        raise ShapeError(f"{op}: gate must be {list(x.shape[:-1] + (1,))} (X's leading dims, "
                         f"then 1), got {list(gate.shape)}")
    # the product is rounded to X's dtype before the add (separate Mul and Add)
    prod = (_f32(y) * _f32(gate)).astype(x.dtype).astype(_F32)
    return ((_f32(x) + prod).astype(x.dtype, copy=False),)


# --------------------------------------------------------------------------------------
# BifurcationDetector, NGramHashMapping (small standalone helpers of decoding)
# --------------------------------------------------------------------------------------


def _bifurcation_attrs(attrs):
    """What is wrong with BifurcationDetector's n-gram sizes, or None."""
    lo, hi = int(attrs["min_ngram_size"]), int(attrs["max_ngram_size"])
    if lo <= 0 or hi < lo:
        return f"need 0 < min_ngram_size <= max_ngram_size, got {lo} and {hi}"
    return None


def _ids(op, what, x, ndim=1):
    """An int64 id tensor of `ndim` dims, else a ShapeError naming `what`."""
    x = np.asarray(x)
    if x.dtype != np.int64 or x.ndim != ndim:
        raise ShapeError(f"{op}: {what} must be {ndim}-D int64, got {x.dtype} "
                         f"{list(x.shape)}")
    return x


def _bifurcation_kernel(inputs, attrs, ctx):
    """Merge predicted tokens up to where they leave the source, then find the unique
    source position of the longest output suffix n-gram (-1 if none or ambiguous)."""
    op = "BifurcationDetector"
    _refuse_attrs(op, _bifurcation_attrs, attrs)
    src, cur, prev = inputs[:3]
    pred = inputs[3] if len(inputs) > 3 else None
    src, cur = _ids(op, "src_tokens", src), _ids(op, "cur_tokens", cur)
    prev = np.asarray(prev)
    if prev.dtype != np.int64 or prev.size != 1:
        raise ShapeError(f"{op}: prev_suffix_match_idx must be one int64, got {prev.dtype} "
                         f"{list(prev.shape)}")
    n = src.shape[0]
    if pred is None:
        tokens = cur.copy()
    else:
        pred = _ids(op, "pred_tokens", pred)
        p = int(prev.reshape(-1)[0])
        if p < 0 or p > n or pred.shape[0] != n + 1 - p:
            raise ShapeError(f"{op}: prev_suffix_match_idx {p} must lie in [0, {n}] "
                             f"(src_tokens' length) and pred_tokens hold {n} + 1 - {p} "
                             f"tokens, got {pred.shape[0]}")
        # the first predicted token that differs from the source after p (or the last)
        differs = pred[:n - p] != src[p:]
        cut = int(np.argmax(differs)) if differs.any() else n - p
        tokens = np.concatenate([cur, pred[:cut + 1]])
    t = tokens.shape[0]
    idx = -1
    # a loop over the few n-gram sizes (attributes), each search vectorised
    for size in range(int(attrs["min_ngram_size"]), int(attrs["max_ngram_size"]) + 1):
        if size > t or size > n:
            break
        windows = np.lib.stride_tricks.sliding_window_view(src, size)
        hits = np.flatnonzero(np.all(windows == tokens[t - size:], axis=1))
        if hits.size == 0:
            break
        idx = int(hits[0]) + size
        if idx >= n:
            break
        if hits.size > 1:
            # the n-gram occurs again: ambiguous, try the next size
            idx = -1
    return tokens, np.full(prev.shape, idx, np.int64)


def _bifurcation_infer(attrs, inputs):
    """tokens: int64 of a length known only at run time; the index: prev's shape."""
    return [TensorInfo(np.dtype(np.int64), (None,)),
            TensorInfo(np.dtype(np.int64), inputs[2].shape)]


_NGRAM_INPUTS = ("input_ids", "multipliers", "vocab_sizes", "past_ids?", "head_offsets?",
                 "eos_token_id?", "segment_ids?")


def _ngram_attrs(attrs):
    """What is wrong with NGramHashMapping's attributes, or None."""
    if int(attrs["max_ngram_size"]) < 2:
        return f"max_ngram_size must be at least 2, got {attrs['max_ngram_size']}"
    if int(attrs["n_head_per_ngram"]) < 1:
        return f"n_head_per_ngram must be positive, got {attrs['n_head_per_ngram']}"
    return None


def _ngram_kernel(inputs, attrs, ctx):
    """Hash ids of the 2..max_ngram_size-grams ending at every token (see the doc)."""
    op = "NGramHashMapping"
    _refuse_attrs(op, _ngram_attrs, attrs)
    ins = list(inputs) + [None] * (len(_NGRAM_INPUTS) - len(inputs))
    ids, mult, vocab, past, offsets, eos, seg = ins
    ids = np.asarray(ids)
    if ids.dtype not in (np.int32, np.int64) or ids.ndim != 2:
        raise ShapeError(f"{op}: input_ids must be 2-D int32 or int64, got {ids.dtype} "
                         f"{list(ids.shape)}")
    dt = ids.dtype
    big_n, heads = int(attrs["max_ngram_size"]), int(attrs["n_head_per_ngram"])
    nh, state = (big_n - 1) * heads, big_n - 1
    b, s = ids.shape
    info = np.iinfo(dt)
    pad = int(attrs["pad_id"])
    if not info.min <= pad <= info.max:
        raise OpAttributeError(f"{op}: pad_id {pad} is out of range for {dt}")

    def typed(what, v, shape):
        """v as an array of the ids' dtype (and `shape`), else a ShapeError."""
        v = np.asarray(v)
        if v.dtype != dt or (shape is not None and v.shape != shape):
            want = "" if shape is None else f" of shape {list(shape)}"
            raise ShapeError(f"{op}: {what} must be {dt}{want}, got {v.dtype} "
                             f"{list(v.shape)}")
        return v

    mult = typed("multipliers", mult, None)
    if mult.ndim != 1 or mult.shape[0] < big_n:
        raise ShapeError(f"{op}: multipliers must be 1-D with at least max_ngram_size = "
                         f"{big_n} values, got {list(mult.shape)}")
    vocab = typed("vocab_sizes", vocab, (nh,))
    if (vocab <= 0).any():
        raise ShapeError(f"{op}: vocab_sizes must be positive, got {vocab.tolist()}")
    fill = pad
    if eos is not None:
        eos = typed("eos_token_id", eos, None)
        if eos.size != 1:
            raise ShapeError(f"{op}: eos_token_id must be a scalar, got {list(eos.shape)}")
        fill = int(eos.reshape(-1)[0])
    # ext: the state_length ids before this call (past_ids or the filler), then input_ids
    if past is None:
        ext = np.concatenate([np.full((b, state), fill, dt), ids], axis=1)
    else:
        ext = np.concatenate([typed("past_ids", past, (b, state)), ids], axis=1)
    t = np.arange(s)
    k = np.arange(big_n)
    src = state + t[:, None] - k[None, :]  # (S, N): ext column of shift k at position t
    tok = ext[:, src]  # (B, S, N)
    if eos is not None and int(attrs["reset_on_eos"]):
        # shifts at or before the latest EOS strictly before t read eos_token_id
        col = np.arange(state + s)
        last = np.maximum.accumulate(np.where(ext == fill, col, -1), axis=1)  # (B, L+S)
        before = last[:, state + t - 1][:, :, None]  # (B, S, 1)
        tok = np.where((k[None, None, :] > 0) & (src[None] <= before), dt.type(fill), tok)
    if seg is not None:
        seg = np.asarray(seg)
        if seg.dtype != np.int32 or seg.shape != (b, s):
            raise ShapeError(f"{op}: segment_ids must be int32 of input_ids' shape "
                             f"{[b, s]}, got {seg.dtype} {list(seg.shape)}")
        # the latest segment start at or before t within this chunk (0: none); shifts
        # before it read the filler
        starts = np.zeros((b, s), np.int64)
        starts[:, 1:] = np.where(seg[:, 1:] != seg[:, :-1], t[1:], 0)
        start = np.maximum.accumulate(starts, axis=1)[:, :, None]  # (B, S, 1)
        cut = (start > 0) & (src[None] < state + start)
        tok = np.where(cut, dt.type(fill), tok)
    with np.errstate(over="ignore"):
        prod = tok * mult[:big_n]  # wraps in the id type, as onnxruntime's
        mix = np.bitwise_xor.accumulate(prod, axis=2)[:, :, 1:]  # (B, S, N - 1): n = 2..N
        out = np.repeat(mix, heads, axis=2) % vocab  # vocab > 0: the non-negative modulo
        if offsets is not None:
            offsets = typed("head_offsets", offsets, (nh,))
            if (offsets < 0).any() or (offsets > info.max - vocab).any():
                # onnxruntime's rule: every hash id + offset fits the id type
                raise ShapeError(f"{op}: head_offsets must be non-negative with head_offsets "
                                 f"+ vocab_sizes <= {info.max}, got {offsets.tolist()}")
            out = out + offsets
    out = out.astype(dt, copy=False)
    return (out, ext[:, s:].copy())[:max(1, min(2, attrs.get(NUM_OUTPUTS, 2)))]


def _ngram_infer(attrs, inputs):
    """hash_ids (B, S, heads) and present_ids (B, max_ngram_size - 1), the ids' dtype."""
    x = inputs[0]
    nh = (int(attrs["max_ngram_size"]) - 1) * int(attrs["n_head_per_ngram"])
    if x.shape is None:
        return [TensorInfo(x.dtype, None)] * 2
    if len(x.shape) != 2:
        raise ShapeError(f"NGramHashMapping: input_ids must be 2-D, got {list(x.shape)}")
    return [TensorInfo(x.dtype, (x.shape[0], x.shape[1], nh)),
            TensorInfo(x.dtype, (x.shape[0], int(attrs["max_ngram_size"]) - 1))]


_VARLEN_INPUTS = ("input_ids", "multipliers", "vocab_sizes", "cumulative_sequence_length",
                  "past_ids?", "head_offsets?", "eos_token_id?", "segment_ids?",
                  "past_segment_ids?", "capture_count?")


def _varlen_attrs(attrs):
    """What is wrong with VarlenNGramHashMapping's attributes, or None."""
    cap = int(attrs["state_update_capacity"])
    if not 0 <= cap <= 8:
        return f"state_update_capacity must be in [0, 8], got {cap}"
    return _ngram_attrs(attrs)


def _varlen_requests(op, cu, total):
    """The int64 (B + 1) offsets of the packed requests, checked as onnxruntime checks."""
    cu = np.asarray(cu)
    if cu.dtype != np.int32 or cu.ndim != 1 or cu.shape[0] < 2:
        raise ShapeError(f"{op}: cumulative_sequence_length must be 1-D int32 of batch_size + "
                         f"1 >= 2 values, got {cu.dtype} {list(cu.shape)}")
    cu = cu.astype(np.int64)
    if cu[0] != 0 or cu[-1] != total or (np.diff(cu) <= 0).any():
        raise ShapeError(f"{op}: cumulative_sequence_length {cu.tolist()} must start at 0, "
                         f"end at total_tokens {total} and strictly increase (every request "
                         "holds a token)")
    return cu


def _varlen_kernel(inputs, attrs, ctx):
    """NGramHashMapping of each packed request, its history never crossing requests."""
    op = "VarlenNGramHashMapping"
    _refuse_attrs(op, _varlen_attrs, attrs)
    ins = list(inputs) + [None] * (len(_VARLEN_INPUTS) - len(inputs))
    ids, mult, vocab, cu, past, offsets, eos, seg, pseg, count = ins
    ids = np.asarray(ids)
    if ids.dtype not in (np.int32, np.int64) or ids.ndim != 1:
        raise ShapeError(f"{op}: input_ids must be 1-D int32 or int64, got {ids.dtype} "
                         f"{list(ids.shape)}")
    dt, total = ids.dtype, ids.shape[0]
    big_n, heads = int(attrs["max_ngram_size"]), int(attrs["n_head_per_ngram"])
    nh, state, cap = (big_n - 1) * heads, big_n - 1, int(attrs["state_update_capacity"])
    info = np.iinfo(dt)
    pad = int(attrs["pad_id"])
    if not info.min <= pad <= info.max:
        raise OpAttributeError(f"{op}: pad_id {pad} is out of range for {dt}")
    cu = _varlen_requests(op, cu, total)
    b = cu.shape[0] - 1
    n_out = max(1, min(4, attrs.get(NUM_OUTPUTS, 4)))

    def typed(what, v, dtype, shape):
        """v as an array of `dtype` (and `shape`), else a ShapeError naming `what`."""
        v = np.asarray(v)
        if v.dtype != dtype or (shape is not None and v.shape != shape):
            want = "" if shape is None else f" of shape {list(shape)}"
            raise ShapeError(f"{op}: {what} must be {np.dtype(dtype)}{want}, got {v.dtype} "
                             f"{list(v.shape)}")
        return v

    mult = typed("multipliers", mult, dt, None)
    if mult.ndim != 1 or mult.shape[0] < big_n:
        raise ShapeError(f"{op}: multipliers must be 1-D with at least max_ngram_size = "
                         f"{big_n} values, got {list(mult.shape)}")
    vocab = typed("vocab_sizes", vocab, dt, (nh,))
    if (vocab <= 0).any():
        raise ShapeError(f"{op}: vocab_sizes must be positive, got {vocab.tolist()}")
    if (count is None) != (cap == 0):
        raise ShapeError(f"{op}: capture_count must be given exactly when "
                         f"state_update_capacity ({cap}) is positive")
    if n_out > 2 and seg is None:
        # onnxruntime's rule for a declared present_segment_ids; onegraph sees only how
        # many outputs a node has, so a state_update after an omitted one is refused too
        raise UnsupportedOpError(f"{op}: the present_segment_ids output (and state_update, "
                                 "which follows it) needs segment_ids")
    fill = pad
    if eos is not None:
        eos = typed("eos_token_id", eos, dt, None)
        if eos.size != 1:
            raise ShapeError(f"{op}: eos_token_id must be a scalar, got {list(eos.shape)}")
        fill = int(eos.reshape(-1)[0])
    if past is None:
        hist = np.full((b, state), fill, dt)
    else:
        hist = typed("past_ids", past, dt, (b, state))
    lens = np.diff(cu)
    req = np.repeat(np.arange(b), lens)  # each token's request
    local = np.arange(total) - cu[req]  # its position in the request

    def gather(pos, rq, own, before):
        """own[cu[rq] + pos] where pos >= 0, else the history slot before[rq, state + pos]."""
        mine = own[np.clip(cu[rq] + pos, 0, max(total - 1, 0))]
        return np.where(pos >= 0, mine, before[rq, np.clip(state + pos, 0, state - 1)])

    k = np.arange(big_n)
    pos = local[:, None] - k[None, :]  # (T, N): request position of shift k
    rq = np.broadcast_to(req[:, None], pos.shape)
    tok = gather(pos, rq, ids, hist)
    ext = state + pos  # position in the request's history ++ tokens
    idx = np.arange(total)
    if eos is not None and int(attrs["reset_on_eos"]):
        # the latest EOS strictly before each token: in its own request's tokens, else in
        # its history; shifts at or before it read eos_token_id
        seen = np.maximum.accumulate(np.where(ids == fill, idx, -1)) if total else idx
        own = np.where(local >= 1, seen[np.maximum(idx - 1, 0)], -1)
        own = np.where(own >= cu[req], own - cu[req] + state, -1)
        old = np.where(hist == fill, np.arange(state), -1).max(axis=1)
        last = np.where(own >= 0, own, old[req])[:, None]
        tok = np.where((k[None, :] > 0) & (ext <= last), dt.type(fill), tok)
    pseg_full = None
    if seg is not None:
        seg = typed("segment_ids", seg, np.int32, (total,))
        if pseg is not None:
            pseg_full = typed("past_segment_ids", pseg, np.int32, (b, state))
        else:
            # history before a request continues its first segment
            pseg_full = np.repeat(seg[cu[:-1]][:, None], state, axis=1)
        # segment changes: inside the tokens, at a token after its history, inside history
        prev = np.where(local >= 1, seg[np.maximum(idx - 1, 0)], pseg_full[req, state - 1])
        change = np.where(seg != prev, local + state, -1)
        latest = np.maximum.accumulate(np.where(change >= 0, idx, -1)) if total else idx
        start = np.where(latest >= cu[req], change[np.maximum(latest, 0)], -1)
        inner = np.where(pseg_full[:, 1:] != pseg_full[:, :-1], np.arange(1, state), -1)
        inner = inner.max(axis=1, initial=-1)
        start = np.where(start >= 0, start, inner[req])[:, None]
        tok = np.where((start >= 0) & (ext < start), dt.type(fill), tok)
    with np.errstate(over="ignore"):
        prod = tok * mult[:big_n]  # wraps in the id type, as onnxruntime's
        mix = np.bitwise_xor.accumulate(prod, axis=1)[:, 1:]  # (T, N - 1): n = 2..N
        out = np.repeat(mix, heads, axis=1) % vocab
        if offsets is not None:
            out = out + typed("head_offsets", offsets, dt, (nh,))  # wraps, as documented
    outs = [out.astype(dt, copy=False)]
    tail = lens[:, None] - state + np.arange(state)[None, :]  # (B, L) trailing positions
    rb = np.broadcast_to(np.arange(b)[:, None], tail.shape)
    outs.append(gather(tail, rb, ids, hist))
    if n_out > 2:
        outs.append(gather(tail, rb, seg, pseg_full).astype(np.int32))
    if n_out > 3:
        upd = np.full((b, cap, state), pad, dt)
        if cap:
            count = typed("capture_count", count, np.int32, (b,))
            n_cap = np.minimum(np.minimum(count.astype(np.int64), lens), cap)
            # the trailing history after captured token j: positions j + 1 - L .. j
            at = np.arange(cap)[:, None] + 1 - state + np.arange(state)[None, :]
            at = np.broadcast_to(at[None], (b, cap, state))
            rc = np.broadcast_to(np.arange(b)[:, None, None], at.shape)
            used = np.arange(cap)[None, :, None] < n_cap[:, None, None]
            upd = np.where(used, gather(at, rc, ids, hist), upd)
        outs.append(upd)
    return tuple(outs[:n_out])


def _varlen_infer(attrs, inputs):
    """hash_ids (T, heads), present ids/segments (B, L), state_update (B, cap, L)."""
    x = inputs[0]
    big_n = int(attrs["max_ngram_size"])
    nh, state = (big_n - 1) * int(attrs["n_head_per_ngram"]), big_n - 1
    cu = inputs[3]
    # A wrong-rank input leaves the dims unknown here; the kernel names it.
    b = None if cu.shape is None or len(cu.shape) != 1 or cu.shape[0] is None \
        else cu.shape[0] - 1
    total = None if x.shape is None or len(x.shape) != 1 else x.shape[0]
    return [TensorInfo(x.dtype, (total, nh)), TensorInfo(x.dtype, (b, state)),
            TensorInfo(np.dtype(np.int32), (b, state)),
            TensorInfo(x.dtype, (b, int(attrs["state_update_capacity"]), state))]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

OPS = (
    define("BifurcationDetector", ("src_tokens", "cur_tokens", "prev_suffix_match_idx",
                                   "pred_tokens?"), ("tokens", "suffix_match_idx"),
           _bifurcation_kernel, (("max_ngram_size", "int", 3), ("min_ngram_size", "int", 1)),
           infer=_bifurcation_infer, domain=_DOMAIN, dtypes=("int64",),
           check_attrs=_bifurcation_attrs,
           doc="Aggressive decoding: merge predicted tokens, find the suffix n-gram match."),
    define("BranchwiseRMSNorm", ("X", "scale?"), ("Y",), _branchwise_kernel,
           (("num_branches", "int", 0), ("epsilon", "float", 1e-5)),
           infer=_same_shape_infer, domain=_DOMAIN, dtypes=_HALF_BF16,
           doc="RMSNorm of each hyper-connection branch, grouped or flattened streams."),
    define("EngramGate", ("key", "query", "value", "key_norm_scale", "query_norm_scale",
                          "conv_norm_scale?"), ("output", "gated_value_normed?"),
           _engram_kernel, (("epsilon", "float", 1e-5),), infer=_engram_infer,
           domain=_DOMAIN, dtypes=_HALF,
           doc="Engram gate: sigmoid(signed sqrt of the normed key . query) * value."),
    define("GatedAdd", ("X", "Y", "gate", "gate_weight?"), ("output",), _gated_add_kernel,
           infer=_same_shape_infer, domain=_DOMAIN, dtypes=_HALF,
           doc="X + Y * gate with a per-row gate (plain mode)."),
    define("GatedRMSNorm", ("X", "scale", "gate"), ("Y",), _gated_rms_kernel,
           (("activation", "string", "silu"), ("epsilon", "float", 1e-5)),
           infer=_same_shape_infer, domain=_DOMAIN, dtypes=_HALF,
           check_attrs=_gated_rms_attrs,
           doc="RMSNorm over groups of scale.size elements times scale * silu/sigmoid(gate)."),
    define("NGramHashMapping", _NGRAM_INPUTS, ("hash_ids", "present_ids?"), _ngram_kernel,
           (("reset_on_eos", "int", 0), ("pad_id", "int"), ("n_head_per_ngram", "int"),
            ("max_ngram_size", "int")),
           infer=_ngram_infer, domain=_DOMAIN, dtypes=("int32", "int64"),
           check_attrs=_ngram_attrs,
           doc="Engram n-gram hash ids of token ids, causal across calls via past_ids."),
    define("VarlenNGramHashMapping", _VARLEN_INPUTS,
           ("hash_ids", "present_ids?", "present_segment_ids?", "state_update?"),
           _varlen_kernel,
           (("reset_on_eos", "int", 0), ("state_update_capacity", "int", 0),
            ("pad_id", "int"), ("n_head_per_ngram", "int"), ("max_ngram_size", "int")),
           infer=_varlen_infer, domain=_DOMAIN, dtypes=("int32", "int64"),
           check_attrs=_varlen_attrs,
           doc="NGramHashMapping over packed variable-length requests."),
    define("HyperConnectionPostMix", ("streams", "block_output", "post_mix", "stream_mix?"),
           ("output",), _post_mix_kernel, (("num_branches", "int", 0),),
           infer=_same_shape_infer, domain=_DOMAIN, dtypes=_HALF_BF16,
           doc="Mix hyper-connection streams and inject a block output."),
    define("HyperConnectionPreMix", ("streams", "pre_mix"), ("output",), _pre_mix_kernel,
           (("reduction_scale", "float", 1.0), ("num_branches", "int", 0)),
           infer=_pre_mix_infer, domain=_DOMAIN, dtypes=_HALF_BF16,
           doc="Reduce hyper-connection streams to one feature tensor."),
)

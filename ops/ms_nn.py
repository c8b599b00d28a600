"""Operators: onnxruntime's normalisation, activation, dropout and attention-helper
contrib ops (domain "com.microsoft").

Where the models come from: onnxruntime's transformers optimizer and its training
graph transformers fuse Softmax(scores + mask) into BiasSoftmax and Add + Dropout
(+ residual Add) into BiasDropout / BitmaskBiasDropout (BitmaskDropout is Dropout with a
bit-packed mask); its Stable Diffusion optimizer (`onnxruntime.transformers.models.
stable_diffusion`) writes the UNet/VAE with GroupNorm and SkipGroupNorm in NHWC and
BiasSplitGelu; T5 and WavLM exports use RelativePositionBias and
GatedRelativePositionBias; BERT exports optimized for packed (padding-free) execution
put RemovePadding / RestorePadding around the encoder; newer onnxruntime graph fusions
and MoE exports write SwiGLU and ScaledSiLU.

Inputs, outputs, attributes and defaults follow onnxruntime's op schemas. onnxruntime
1.32 has CPU kernels only for ScaledSiLU, (float32) DecoderMaskedMultiHeadAttention and
SparseAttention, which the tests use as the oracle; the others run only on CUDA/ROCm
there, and follow onnxruntime's CUDA kernels:

* BiasSoftmax: softmax(data + bias) over the dims from `axis` on, flattened as opset-11
  Softmax does; bias has data's dims from `axis` on, and before `axis` data's leading
  dims then ones (is_inner_broadcast=1) or ones then data's trailing dims (0).
* BiasDropout / BitmaskBiasDropout: data + bias (+ residual); BitmaskDropout: data. In
  inference mode only (training_mode absent or false, or ratio 0): the mask is all
  true (BitmaskDropout's and BitmaskBiasDropout's are ceil(size / 32) uint32 words of
  all ones bits).
* GroupNorm / SkipGroupNorm: group normalization of a 4-D NHWC (channels_last=1) or
  NCHW input, statistics over each group's channels and all pixels, then the
  per-channel gamma/beta and optionally SiLU (activation=1); SkipGroupNorm first adds
  skip (X's shape, or one value per (batch, channel)) and bias (C,), and returns the
  sum as S. (onnxruntime's CUDA kernel runs NHWC only; NCHW is the same math.)
* BiasSplitGelu: (X + bias) split in two halves along the last dim, left * Gelu(right).
* SwiGLU: clamp(gate, max=limit) * sigmoid(alpha * it) * (clamp(up, +-limit) + beta),
  `up` absent meaning gate holds both halves; ScaledSiLU: z = scale * X rounded to T,
  Y = z * sigmoid(z) with each step rounded to T, as the op's schema defines.
* RelativePositionBias: T5's bucketed relative positions looked up in bias_table,
  whose buffer holds (num_heads, num_buckets) (the schema calls it column-major).
* GatedRelativePositionBias: WavLM's gate (from the biased query times weight) times
  rel_pos; with token_offset the query is packed (token_count, hidden).
* RemovePadding / RestorePadding: right-padded (batch, seq, hidden) to the packed
  tokens and back (padding rows zero).
* DecoderMaskedMultiHeadAttention (GPT/T5/Whisper decoding inside onnxruntime's
  BeamSearch): one query token; self-attention writes the new key/value (+ bias) into
  the (batch, heads, max_seq, head_size) caches at past_sequence_length and attends to
  positions 0..past_sequence_length (rows picked by cache_indirection under beam
  search); with no past_key it is cross-attention over the given (batch, heads, kv,
  head_size) key/value (which onegraph also returns as present_key/present_value if
  the node declares them; onnxruntime refuses that). Packed QKV, which onnxruntime's
  CPU kernel fails on, runs as the same attention on the unpacked Q, K, V.
* SparseAttention (Phi-3 small): block-sparse causal grouped-query attention; the
  new K/V (rotated with Q when do_rotary) go into the shared-buffer caches at each
  entry's key_total_sequence_lengths - sequence_length (0 in a prompt, when
  total_sequence_length == sequence_length); head h uses block layout h % num_layout
  (CSR block_row_indices/block_col_indices), a layout or block row as full as a lower
  triangle counting as dense, blocked keys getting the lowest float. onnxruntime's CPU
  kernel stores each entry's probabilities at a stride of total_sequence_length and
  reads them at the entry's own key length, so in a batch it is right only for entries
  of the full length; onegraph gives every entry what onnxruntime gives it alone, and
  zeros for the rows of a right-padded prompt past an entry's length (which
  onnxruntime leaves undefined).

Refused by name: the dropouts in training mode with a nonzero ratio (a random dropout
onnxruntime draws from its own Philox generator, which cannot be reproduced here);
RelativePositionBias with query_length != key_length (onnxruntime's kernel refuses it
too); GroupNorm activations other than 0 and 1; DecoderMaskedMultiHeadAttention's
past_present_share_buffer=0 with a past, mask_index of another shape than (batch, total)
(whose keys with a value <= 0 are masked, as onnxruntime reads them), attention_bias with
cross-attention, and mask_index or attention_bias under beam search (onnxruntime's CPU
kernel reads the mask as floats and gives row b the bias of row b // beam_width there);
ScaledSiLU's scale of any shape but 0-d and float64 X (as onnxruntime); GroupNorm's (batch, groups)
statistics over 2 GiB (ResourceExhaustedError, before allocating). Kernels compute
float16 (and bfloat16) in float32 and round once to the input dtype at the end, except
where the schema states intermediate roundings (ScaledSiLU, SwiGLU's round_activation).
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError, UnsupportedOpError
from .activation import _gelu, _sigmoid, _softmax, silu
from .ms_fused import check_result_size
from .ms_llm import _caches, _gqa_split, _rotate
from .ms_transformer import (_DOMAIN, _F32, _attention_bias, _float, _mask_filter,
                             _num_heads, _padded, _wants, _work)
from .normalization import _mean_var
from .registry import NUM_OUTPUTS, TensorInfo, define

_F16_32 = ("float16", "float32")
_IEEE = ("float16", "float32", "float64", "bfloat16")
_I32 = np.dtype(np.int32)
_U32 = np.dtype(np.uint32)
_BOOL = np.dtype(np.bool_)


def _same_dtype(op, what, v, x):
    """Raise ShapeError unless v has x's dtype."""
    if v.dtype != x.dtype:
        raise ShapeError(f"{op}: {what} is {v.dtype}, but the input is {x.dtype}")


def _int32(op, what, v):
    """v as an int32 array; raises ShapeError naming `what` otherwise."""
    v = np.asarray(v)
    if v.dtype != _I32:
        raise ShapeError(f"{op}: {what} must be int32, got {v.dtype}")
    return v


def _quiet(fn, *args):
    """fn(*args) with floating-point warnings off (exp overflow in a sigmoid's tail is
    the intended inf, giving 0)."""
    with np.errstate(all="ignore"):
        return fn(*args)


def _same_infer(attrs, inputs):
    """One output of the first input's dtype and shape."""
    x = inputs[0]
    return [TensorInfo(x.dtype, x.shape)]


# --------------------------------------------------------------------------------------
# BiasSoftmax
# --------------------------------------------------------------------------------------


def _bias_softmax_axis(attrs, rank):
    """BiasSoftmax's axis in [0, rank); OpAttributeError outside [-rank, rank)."""
    axis = int(attrs["axis"])
    if not -rank <= axis < rank:
        raise OpAttributeError(f"BiasSoftmax: axis {axis} out of range for rank {rank}")
    return axis % rank


def _bias_softmax_shape(xs, bs, axis, inner):
    """bias's shape padded with leading ones to data's rank, after checking it is one
    of the two broadcast forms onnxruntime's kernel indexes (see the module doc)."""
    op = "BiasSoftmax"
    b = (1,) * (len(xs) - len(bs)) + tuple(bs)
    fits = len(bs) <= len(xs) and b[axis:] == tuple(xs[axis:])
    lead, blead = tuple(xs[:axis]), b[:axis]
    if fits and inner:
        fits = any(blead[:k] == lead[:k] and all(d == 1 for d in blead[k:])
                   for k in range(axis + 1))
    elif fits:
        fits = any(all(d == 1 for d in blead[:k]) and blead[k:] == lead[k:]
                   for k in range(axis + 1))
    if not fits:
        form = "data's leading dims then ones" if inner else "ones then data's trailing dims"
        raise ShapeError(f"{op}: bias {list(bs)} does not fit data {list(xs)} with axis "
                         f"{axis} and is_inner_broadcast={int(inner)} (bias must have data's "
                         f"dims from axis on and, before it, {form})")
    return b


def _bias_softmax_kernel(inputs, attrs, ctx):
    """Y = softmax(data + bias) over the dims from `axis` on taken as one."""
    op = "BiasSoftmax"
    x = _float(inputs[0], op, "data")
    b = _float(inputs[1], op, "bias")
    _same_dtype(op, "bias", b, x)
    axis = _bias_softmax_axis(attrs, x.ndim) if x.ndim else 0
    shape = _bias_softmax_shape(x.shape, b.shape, axis, int(attrs["is_inner_broadcast"]))
    w = _work(x.dtype)
    s = x.astype(w) + b.astype(w, copy=False).reshape(shape)
    rows = int(np.prod(x.shape[:axis]))
    flat = np.ascontiguousarray(s).reshape(rows, int(np.prod(x.shape[axis:])))
    y = _quiet(_softmax, flat, 1, w == _F32)
    return (y.reshape(x.shape).astype(x.dtype, copy=False),)


def _bias_softmax_infer(attrs, inputs):
    """data's dtype and shape, after the bias-shape check where both shapes are known."""
    x, b = inputs[0], inputs[1]
    if x.shape is not None and b.shape is not None and None not in x.shape \
            and None not in b.shape and len(x.shape):
        axis = _bias_softmax_axis(attrs, len(x.shape))
        _bias_softmax_shape(x.shape, b.shape, axis, int(attrs["is_inner_broadcast"]))
    return [TensorInfo(x.dtype, x.shape)]


# --------------------------------------------------------------------------------------
# BiasDropout, BitmaskDropout, BitmaskBiasDropout (inference mode)
# --------------------------------------------------------------------------------------

# the schemas' ratio when the input is absent
_DEFAULT_RATIO = 0.5
_MASK_BITS = 32


def _dropout_mode(op, ratio, training):
    """Check ratio and training_mode; refuse a random (training-mode) dropout."""
    r = _DEFAULT_RATIO
    if ratio is not None:
        ratio = _float(ratio, op, "ratio")
        if ratio.size != 1:
            raise ShapeError(f"{op}: ratio must be a scalar, got shape {list(ratio.shape)}")
        r = float(ratio.reshape(-1)[0])
        if not 0.0 <= r < 1.0:
            raise ShapeError(f"{op}: ratio must lie in [0, 1), got {r}")
    if training is None:
        return
    t = np.asarray(training)
    if t.dtype != _BOOL or t.size != 1:
        raise ShapeError(f"{op}: training_mode must be a bool scalar, got {t.dtype} "
                         f"{list(t.shape)}")
    if bool(t.reshape(-1)[0]) and r != 0.0:
        raise UnsupportedOpError(
            f"{op}: training_mode true with ratio {r} (a random dropout) is not supported: "
            "onnxruntime draws the mask from its own random generator, which onegraph "
            "cannot reproduce")


def _dropout_kernel(op, with_bias, bitmask):
    """The kernel of one of the three dropouts, in inference mode."""

    def kernel(inputs, attrs, ctx):
        """output = data (+ bias) (+ residual); mask all true (all bits set)."""
        if with_bias:
            x, bias, residual, ratio, training = _padded(inputs, 5)
        else:
            (x, ratio, training), bias, residual = _padded(inputs, 3), None, None
        x = _float(x, op, "data")
        _dropout_mode(op, ratio, training)
        w = _work(x.dtype)
        y = x.astype(w)  # a copy: the output never aliases the input
        if bias is not None:
            bias = _float(bias, op, "bias")
            _same_dtype(op, "bias", bias, x)
            if bias.shape != x.shape and (bias.ndim != 1 or x.ndim == 0
                                          or bias.shape[0] != x.shape[-1]):
                raise ShapeError(f"{op}: bias {list(bias.shape)} must be 1-D of data's last "
                                 f"dim or of data's shape {list(x.shape)}")
            y += bias.astype(w, copy=False)
        if residual is not None:
            residual = _float(residual, op, "residual")
            _same_dtype(op, "residual", residual, x)
            if residual.shape != x.shape:
                raise ShapeError(f"{op}: residual {list(residual.shape)} must have data's "
                                 f"shape {list(x.shape)}")
            y += residual.astype(w, copy=False)
        y = y.astype(x.dtype, copy=False)
        if not _wants(attrs, 1):
            return (y,)
        if bitmask:
            mask = np.full(-(-x.size // _MASK_BITS), 0xFFFFFFFF, _U32)
        else:
            mask = np.ones(x.shape, _BOOL)
        return (y, mask)

    return kernel


def _dropout_infer(bitmask):
    """The inference rule of a dropout: output as data, mask bool of data's shape or
    ceil(size / 32) uint32 words."""
    def infer(attrs, inputs):
        """output and mask of a dropout node."""
        x = inputs[0]
        if not bitmask:
            return [TensorInfo(x.dtype, x.shape), TensorInfo(_BOOL, x.shape)]
        words = None
        if x.shape is not None and None not in x.shape:
            words = (-(-int(np.prod(x.shape)) // _MASK_BITS),)
        return [TensorInfo(x.dtype, x.shape), TensorInfo(_U32, words)]
    return infer


# --------------------------------------------------------------------------------------
# GroupNorm, SkipGroupNorm
# --------------------------------------------------------------------------------------


def _group_norm_attrs(op, attrs):
    """(groups, silu?, channels_last) after onnxruntime's checks."""
    groups = int(attrs["groups"])
    if groups < 1:
        raise OpAttributeError(f"{op}: groups must be positive, got {groups}")
    activation = int(attrs["activation"])
    if activation not in (0, 1):
        raise OpAttributeError(f"{op}: activation must be 0 (none) or 1 (SiLU), got "
                               f"{activation}")
    if not float(attrs["epsilon"]) >= 0:
        raise OpAttributeError(f"{op}: epsilon must be >= 0, got {attrs['epsilon']}")
    return groups, activation == 1, int(attrs["channels_last"]) != 0


def _channels(op, x, groups, last):
    """The channel count of a 4-D input, checked against groups."""
    if x.ndim != 4:
        layout = "NHWC" if last else "NCHW"
        raise ShapeError(f"{op}: X must be 4-D ({layout}), got shape {list(x.shape)}")
    c = x.shape[3] if last else x.shape[1]
    if c == 0:
        # 0 channels divide into any count of groups, whose (batch, groups) statistics
        # are still allocated: a fuzzed groups=2**31 - 1 is refused, not allocated
        check_result_size(op, "the group statistics", (x.shape[0], groups), 8)
    if c % groups:
        raise ShapeError(f"{op}: {c} channels are not divisible by groups {groups}")
    return c


def _per_channel(op, what, v, c, last, w):
    """A (C,) parameter as an array broadcasting over X's channel axis."""
    v = _float(v, op, what)
    if v.shape != (c,):
        raise ShapeError(f"{op}: {what} must be 1-D of the {c} channels, got shape "
                         f"{list(v.shape)}")
    return v.astype(w, copy=False).reshape((c,) if last else (c, 1, 1))


def _skip_sum(op, x, skip, bias, c, last, w):
    """x + skip (+ bias) in the work dtype; skip is X's shape or one value per (batch,
    channel): (N, C), or (N, 1, 1, C) in NHWC / (N, C, 1, 1) in NCHW."""
    skip = _float(skip, op, "skip")
    _same_dtype(op, "skip", skip, x)
    n = x.shape[0]
    per_channel = (n, 1, 1, c) if last else (n, c, 1, 1)
    if skip.shape != x.shape and skip.shape not in ((n, c), per_channel):
        raise ShapeError(f"{op}: skip {list(skip.shape)} must be X's shape {list(x.shape)}, "
                         f"{list(per_channel)} or {[n, c]}")
    s = x.astype(w) + skip.astype(w, copy=False).reshape(
        x.shape if skip.shape == x.shape else per_channel)
    if bias is not None:
        bias = _float(bias, op, "bias")
        _same_dtype(op, "bias", bias, x)
        s += _per_channel(op, "bias", bias, c, last, w)
    return s


def _group_normalize(s, gamma, beta, groups, act, last, eps):
    """GroupNorm of s (work dtype, 4-D) then gamma/beta and optionally SiLU."""
    n, c = s.shape[0], s.shape[3] if last else s.shape[1]
    pixels = s.shape[1] * s.shape[2] if last else s.shape[2] * s.shape[3]
    # (explicit sizes, no -1: a reshape cannot infer one of an empty array)
    if last:  # (N, H*W, G, C/G): statistics over pixels and the group's channels
        v = s.reshape(n, pixels, groups, c // groups)
        axes = (1, 3)
    else:
        v = s.reshape(n, groups, c // groups * pixels)
        axes = (2,)
    mean, var = _mean_var(v, axes)
    y = (v - mean) / np.sqrt(var + s.dtype.type(eps))
    y = y.reshape(s.shape) * gamma
    y += beta
    return _quiet(silu, y) if act else y


def _group_norm_kernel(op, with_skip):
    """The kernel of GroupNorm or SkipGroupNorm."""

    def kernel(inputs, attrs, ctx):
        """Y = [SiLU](gamma * (S - mean) / sqrt(var + epsilon) + beta) with S = X (+ skip
        + bias) and mean/var per (batch, group); SkipGroupNorm also returns S."""
        x, gamma, beta, skip, bias = _padded(inputs, 5)
        groups, act, last = _group_norm_attrs(op, attrs)
        x = _float(x, op, "X")
        c = _channels(op, x, groups, last)
        w = _work(x.dtype)
        g = _per_channel(op, "gamma", gamma, c, last, w)
        b = _per_channel(op, "beta", beta, c, last, w)
        s = _skip_sum(op, x, skip, bias, c, last, w) if with_skip else x.astype(w)
        y = _group_normalize(s, g, b, groups, act, last, attrs["epsilon"])
        y = y.astype(x.dtype, copy=False)
        if with_skip and _wants(attrs, 1):
            return (y, s.astype(x.dtype, copy=False))
        return (y,)

    return kernel


def _group_norm_infer(op):
    """The inference rule of GroupNorm / SkipGroupNorm: Y (and S) as X, after the
    attribute, rank and channel checks."""
    def infer(attrs, inputs):
        """Y and S of a group-norm node."""
        groups, _, last = _group_norm_attrs(op, attrs)
        x = inputs[0]
        if x.shape is not None:
            if len(x.shape) != 4:
                raise ShapeError(f"{op}: X must be 4-D, got shape {list(x.shape)}")
            c = x.shape[3] if last else x.shape[1]
            if c is not None and c % groups:
                raise ShapeError(f"{op}: {c} channels are not divisible by groups {groups}")
        return [TensorInfo(x.dtype, x.shape)] * 2
    return infer


# --------------------------------------------------------------------------------------
# BiasSplitGelu, SwiGLU, ScaledSiLU
# --------------------------------------------------------------------------------------


def _bias_split_gelu_kernel(inputs, attrs, ctx):
    """Y = L * Gelu(R) (exact erf Gelu) where [L, R] = X + bias split along the last dim."""
    op = "BiasSplitGelu"
    x = _float(inputs[0], op, "X")
    bias = _float(inputs[1], op, "bias")
    _same_dtype(op, "bias", bias, x)
    if x.ndim != 3 or x.shape[2] % 2:
        raise ShapeError(f"{op}: X must be 3-D (N, S, D) with D even, got shape "
                         f"{list(x.shape)}")
    if bias.shape != x.shape[2:]:
        raise ShapeError(f"{op}: bias must be 1-D of X's last dim {x.shape[2]}, got shape "
                         f"{list(bias.shape)}")
    w = _work(x.dtype)
    s = x.astype(w) + bias.astype(w, copy=False)
    half = x.shape[2] // 2
    right = np.ascontiguousarray(s[..., half:])
    y = s[..., :half] * _quiet(_gelu, right, {"approximate": "none"})
    return (y.astype(x.dtype, copy=False),)


def _bias_split_gelu_infer(attrs, inputs):
    """Y (N, S, D / 2) of X's dtype."""
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    if len(x.shape) != 3:
        raise ShapeError(f"BiasSplitGelu: X must be 3-D, got shape {list(x.shape)}")
    d = x.shape[2]
    return [TensorInfo(x.dtype, x.shape[:2] + (None if d is None else d // 2,))]


# below this, exp(-x) overflows float32 in the sigmoid: the schema widens the product to
# double there so that the negative tail is not lost
_SWIGLU_WIDEN_BELOW = -87.0


def _swiglu_halves(op, gate, up):
    """(gate, up) as given, or the two halves of gate when up is absent."""
    gate = _float(gate, op, "gate")
    if up is None:
        if gate.ndim == 0 or gate.shape[-1] % 2:
            raise ShapeError(f"{op}: without up, gate's last dim must be even (gate then "
                             f"up), got shape {list(gate.shape)}")
        half = gate.shape[-1] // 2
        return gate, gate[..., :half], gate[..., half:]
    up = _float(up, op, "up")
    if up.shape != gate.shape or up.dtype != gate.dtype:
        raise ShapeError(f"{op}: up {up.dtype} {list(up.shape)} must have gate's dtype and "
                         f"shape {gate.dtype} {list(gate.shape)}")
    return gate, gate, up


def _swiglu_kernel(inputs, attrs, ctx):
    """output = G * sigmoid(alpha G) * (L + beta), G = min(gate, limit), L = clip(up,
    -limit, limit) when limit > 0; float32 arithmetic, float64 where alpha G < -87."""
    op = "SwiGLU"
    gate, up = _padded(inputs, 2)
    x, g, u = _swiglu_halves(op, gate, up)
    alpha, beta = float(attrs["activation_alpha"]), float(attrs["activation_beta"])
    limit = float(attrs["limit"])
    w = _work(x.dtype)
    shape = g.shape
    # flat copies: the shared sigmoid writes in place (out=), which a 0-d array's
    # arithmetic, a numpy scalar, cannot take
    g = g.astype(w).reshape(-1)
    u = u.astype(w).reshape(-1)
    if limit > 0:
        np.minimum(g, w.type(limit), out=g)
        np.clip(u, w.type(-limit), w.type(limit), out=u)
    z = g * w.type(alpha)
    act = g * _quiet(_sigmoid, z, None)
    rounding = bool(attrs["round_activation"])
    if rounding:
        act = act.astype(x.dtype).astype(w)
    if beta != 0.0:  # (a zero beta leaves up as it is, even -0.0)
        u += w.type(beta)
    y = act * u
    tail = z < _SWIGLU_WIDEN_BELOW
    if tail.any():
        gt = g[tail].astype(np.float64)
        at = _quiet(lambda: gt / (1.0 + np.exp(-gt * alpha)))
        if rounding:
            at = at.astype(x.dtype).astype(np.float64)
        y[tail] = at * u[tail]
    return (y.reshape(shape).astype(x.dtype, copy=False),)


def _swiglu_infer(attrs, inputs):
    """gate's shape with `up`, else gate's with its last dim halved."""
    gate = inputs[0]
    up = inputs[1] if len(inputs) > 1 else None
    if gate.shape is None or up is not None or not gate.shape:
        return [TensorInfo(gate.dtype, gate.shape)]
    d = gate.shape[-1]
    return [TensorInfo(gate.dtype, gate.shape[:-1] + (None if d is None else d // 2,))]


def _scaled_silu_kernel(inputs, attrs, ctx):
    """Z = T(scale X), S = T(sigmoid(Z)), Y = T(Z S), scale the scalar input or alpha."""
    op = "ScaledSiLU"
    x, scale = _padded(inputs, 2)
    x = _float(x, op, "X")
    if x.dtype == np.float64:  # (the schema's T: float16, float32, bfloat16)
        raise ShapeError(f"{op}: X must be float16, float32 or bfloat16, got float64 (as "
                         "onnxruntime's schema)")
    if scale is None:
        k = float(np.float32(attrs["alpha"]))
    else:
        scale = _float(scale, op, "scale")
        if scale.ndim != 0:  # (onnxruntime refuses a (1,) scale too)
            raise ShapeError(f"{op}: scale must be a scalar, got shape {list(scale.shape)}")
        k = float(scale.reshape(-1)[0].astype(np.float32))
    w = _work(x.dtype)
    dt = x.dtype
    # flat: the shared sigmoid writes in place (out=), which a 0-d array cannot take
    z = (x.astype(w).reshape(-1) * w.type(k)).astype(dt).astype(w)  # each step rounded
    s = _quiet(_sigmoid, z, None).astype(dt).astype(w)
    return ((z * s).reshape(x.shape).astype(dt, copy=False),)


# --------------------------------------------------------------------------------------
# RelativePositionBias, GatedRelativePositionBias
# --------------------------------------------------------------------------------------


# RelativePositionBias's output size comes from a scalar input's value: a bad one (a
# fuzzed 2**31) is refused rather than allocated
_MAX_RESULT_BYTES = 1 << 31


def _length(op, what, v):
    """A non-negative int64 scalar input as an int (ShapeError otherwise)."""
    v = np.asarray(v)
    if v.dtype != np.int64 or v.size != 1:
        raise ShapeError(f"{op}: {what} must be an int64 scalar, got {v.dtype} "
                         f"{list(v.shape)}")
    n = int(v.reshape(-1)[0])
    if n < 0:
        raise ShapeError(f"{op}: {what} must be >= 0, got {n}")
    return n


def _t5_buckets(seq, num_buckets, max_distance, bidirectional):
    """(seq, seq) bucket of each (query i, key j) relative position j - i, as
    onnxruntime's kernel computes it (float32 logs, truncation toward zero)."""
    op = "RelativePositionBias"
    rel = np.arange(seq)[None, :] - np.arange(seq)[:, None]
    half = num_buckets // 2 if bidirectional else num_buckets
    if bidirectional:
        base = np.where(rel > 0, half, 0)
        rel = np.abs(rel)
    else:
        base = 0
        rel = -np.minimum(rel, 0)
    exact = half // 2
    if exact < 1:
        raise ShapeError(f"{op}: {num_buckets} buckets are too few (at least "
                         f"{4 if bidirectional else 2})")
    if max_distance <= exact:
        raise OpAttributeError(f"{op}: max_distance {max_distance} must exceed the "
                               f"{exact} exact buckets")
    f = np.float32
    # logf of float32 quotients, correctly rounded (float64 log rounded to float32)
    num = np.log(np.maximum(rel, 1).astype(f) / f(exact), dtype=np.float64).astype(f)
    den = f(np.log(np.float64(f(max_distance) / f(exact))))
    large = exact + (num / den * f(half - exact)).astype(np.int64)
    large = np.minimum(large, half - 1)
    return base + np.where(rel < exact, rel, large)


def _rel_pos_bias_kernel(inputs, attrs, ctx):
    """output (1, heads, seq, seq) = table[head, bucket(key - query)], the table's buffer
    read as (num_heads, num_buckets)."""
    op = "RelativePositionBias"
    table = _float(inputs[0], op, "bias_table")
    if table.ndim != 2:
        raise ShapeError(f"{op}: bias_table must be 2-D (num_buckets, num_heads), got "
                         f"shape {list(table.shape)}")
    q = _length(op, "query_length", inputs[1])
    k = _length(op, "key_length", inputs[2])
    if q != k:
        raise UnsupportedOpError(f"{op}: query_length {q} != key_length {k} is not "
                                 "supported (onnxruntime's kernel takes self-attention only)")
    max_distance = int(attrs["max_distance"])
    if max_distance < 1:
        raise OpAttributeError(f"{op}: max_distance must be positive, got {max_distance}")
    num_buckets, heads = table.shape
    size = heads * q * q * table.dtype.itemsize  # (Python ints: no overflow)
    if size > _MAX_RESULT_BYTES:
        raise ExecutionError(f"{op}: the (1, {heads}, {q}, {q}) output would take {size:,} "
                             f"bytes, over the limit of {_MAX_RESULT_BYTES:,}")
    buckets = _t5_buckets(q, num_buckets, max_distance, int(attrs["is_bidirectional"]))
    y = table.reshape(heads, num_buckets)[:, buckets]
    return (y.reshape(1, heads, q, q),)


def _rel_pos_bias_infer(attrs, inputs):
    """(1, num_heads, seq, seq) of bias_table's dtype, seq known when query_length's
    value is."""
    table, ql = inputs[0], inputs[1]
    heads = None
    if table.shape is not None:
        if len(table.shape) != 2:
            raise ShapeError("RelativePositionBias: bias_table must be 2-D, got shape "
                             f"{list(table.shape)}")
        heads = table.shape[1]
    s = None if ql.value is None else _length("RelativePositionBias", "query_length",
                                               ql.value)
    return [TensorInfo(table.dtype, (1, heads, s, s))]


def _packed_query(op, query, offset, hidden):
    """A packed (token_count, hidden) query restored to (batch, seq, hidden) by
    token_offset (batch, seq): padding rows zero (they then carry the bias alone)."""
    offset = _int32(op, "token_offset", offset)
    if offset.ndim != 2:
        raise ShapeError(f"{op}: token_offset must be 2-D (batch, seq), got shape "
                         f"{list(offset.shape)}")
    b, s = offset.shape
    if query.ndim != 2 or query.shape[0] > b * s:
        raise ShapeError(f"{op}: with token_offset, query_layer must be (token_count <= "
                         f"{b * s}, hidden), got shape {list(query.shape)}")
    idx = offset.reshape(-1)[:query.shape[0]]
    if idx.size and (idx.min() < 0 or idx.max() >= b * s):
        raise ShapeError(f"{op}: token_offset holds offsets outside [0, {b * s})")
    full = np.zeros((b * s, hidden), query.dtype)
    full[idx] = query
    return full.reshape(b, s, hidden)


def _gated_rel_pos_kernel(inputs, attrs, ctx):
    """output (B, N, S, S) = gate * rel_pos, gate = sigmoid(u) (sigmoid(r) eco_a - 1) + 2
    per (batch, head, query), u and r the sums of the two halves of
    (query_layer + query_bias) per head @ weight + bias."""
    op = "GatedRelativePositionBias"
    query, qbias, rel_pos, weight, bias, eco_a, offset = _padded(inputs, 7)
    heads = int(attrs["num_heads"])
    if heads < 1:
        raise OpAttributeError(f"{op}: num_heads must be positive, got {heads}")
    query = _float(query, op, "query_layer")
    hidden = query.shape[-1] if query.ndim else 0
    if offset is not None:
        query = _packed_query(op, query, offset, hidden)
    if query.ndim != 3 or hidden == 0 or hidden % heads:
        raise ShapeError(f"{op}: query_layer must be (batch, seq, num_heads {heads} x "
                         f"head_size), got shape {list(query.shape)}")
    batch, seq, _ = query.shape
    head_size = hidden // heads
    params = {"query_bias": (qbias, (hidden,)), "rel_pos": (rel_pos, (1, heads, seq, seq)),
              "eco_a": (eco_a, (1, heads, 1, 1))}
    for what, (v, shape) in params.items():
        v = _float(v, op, what)
        if v.shape != shape:
            raise ShapeError(f"{op}: {what} must have shape {list(shape)}, got "
                             f"{list(v.shape)}")
    weight, bias = _float(weight, op, "weight"), _float(bias, op, "bias")
    if weight.ndim != 2 or weight.shape[0] != head_size or weight.shape[1] % 2 \
            or bias.shape != weight.shape[1:]:
        raise ShapeError(f"{op}: weight {list(weight.shape)} must be (head_size "
                         f"{head_size}, D) with D even and bias {list(bias.shape)} (D,)")
    for what, v in (("query_bias", qbias), ("rel_pos", rel_pos), ("weight", weight),
                    ("bias", bias), ("eco_a", eco_a)):
        _same_dtype(op, what, np.asarray(v), query)
    w = _work(query.dtype)
    q = query.astype(w) + np.asarray(qbias, w)
    q = q.reshape(batch, seq, heads, head_size).transpose(0, 2, 1, 3)
    qw = q @ weight.astype(w, copy=False) + bias.astype(w, copy=False)  # (B, N, S, D)
    d = weight.shape[1] // 2
    u = _quiet(_sigmoid, qw[..., :d].sum(axis=-1), None)
    r = _quiet(_sigmoid, qw[..., d:].sum(axis=-1), None)
    gate = u * (r * np.asarray(eco_a, w).reshape(1, heads, 1) - 1) + 2
    y = gate[..., None] * np.asarray(rel_pos, w)
    return (y.astype(query.dtype, copy=False),)


def _gated_rel_pos_infer(attrs, inputs):
    """(batch, num_heads, seq, seq) from query_layer's (or token_offset's) shape."""
    query, offset = inputs[0], inputs[6] if len(inputs) > 6 else None
    bs = None
    if offset is not None and offset.shape is not None:
        bs = tuple(offset.shape)
    elif offset is None and query.shape is not None and len(query.shape) == 3:
        bs = tuple(query.shape[:2])
    n = int(attrs["num_heads"])
    shape = None if bs is None or len(bs) != 2 else (bs[0], n, bs[1], bs[1])
    return [TensorInfo(query.dtype, shape)]


# --------------------------------------------------------------------------------------
# RemovePadding, RestorePadding
# --------------------------------------------------------------------------------------


def _remove_padding_kernel(inputs, attrs, ctx):
    """output = the (batch, seq, hidden) input's first sequence_token_count[b] tokens of
    each sequence, packed; token_offset = their flat offsets then the padding's;
    cumulated_seq_len = 0 and the running token counts; max_seq_len = the largest count."""
    op = "RemovePadding"
    x = _float(inputs[0], op, "input")
    count = _int32(op, "sequence_token_count", inputs[1])
    if x.ndim != 3 or count.shape != x.shape[:1]:
        raise ShapeError(f"{op}: input must be (batch, seq, hidden) and "
                         f"sequence_token_count (batch,), got {list(x.shape)} and "
                         f"{list(count.shape)}")
    b, s, h = x.shape
    if count.size and (count.min() < 0 or count.max() > s):
        raise ShapeError(f"{op}: sequence_token_count must lie in [0, {s}], got "
                         f"{count.tolist()}")
    real = (np.arange(s)[None, :] < count[:, None]).reshape(-1)
    # a stable sort of "is padding" puts the tokens first and the padding after, each
    # in order
    offset = np.argsort(~real, kind="stable").astype(np.int32)
    total = int(count.sum())
    y = x.reshape(b * s, h)[offset[:total]]
    cum = np.concatenate([[0], np.cumsum(count, dtype=np.int64)]).astype(np.int32)
    top = np.array([count.max() if count.size else 0], np.int32)
    return (y, offset.reshape(b, s), cum, top)[:max(1, attrs.get(NUM_OUTPUTS, 4))]


def _remove_padding_infer(attrs, inputs):
    """(tokens, hidden), token_offset (batch, seq), cumulated_seq_len (batch + 1,) and
    max_seq_len (1,); the token count is a value, unknown here."""
    x = inputs[0]
    if x.shape is not None and len(x.shape) != 3:
        raise ShapeError(f"RemovePadding: input must be 3-D, got shape {list(x.shape)}")
    b, s, h = x.shape if x.shape is not None else (None,) * 3
    return [TensorInfo(x.dtype, (None, h)), TensorInfo(_I32, (b, s)),
            TensorInfo(_I32, (None if b is None else b + 1,)), TensorInfo(_I32, (1,))]


def _restore_padding_kernel(inputs, attrs, ctx):
    """output (batch, seq, hidden): row token_offset[i] = input[i] for the token_count
    packed rows, the other rows (padding) zero."""
    op = "RestorePadding"
    x = _float(inputs[0], op, "input")
    offset = _int32(op, "token_offset", inputs[1])
    if x.ndim != 2 or offset.ndim != 2 or x.shape[0] > offset.size:
        raise ShapeError(f"{op}: input must be (token_count, hidden) and token_offset "
                         f"(batch, seq) with token_count <= batch * seq, got {list(x.shape)} "
                         f"and {list(offset.shape)}")
    b, s = offset.shape
    idx = offset.reshape(-1)[:x.shape[0]]
    if idx.size and (idx.min() < 0 or idx.max() >= b * s):
        raise ShapeError(f"{op}: token_offset holds offsets outside [0, {b * s})")
    y = np.zeros((b * s, x.shape[1]), x.dtype)
    y[idx] = x
    return (y.reshape(b, s, x.shape[1]),)


def _restore_padding_infer(attrs, inputs):
    """(batch, seq, hidden) from token_offset's and input's shapes."""
    x, offset = inputs[0], inputs[1]
    b = s = h = None
    if offset.shape is not None and len(offset.shape) == 2:
        b, s = offset.shape
    if x.shape is not None and len(x.shape) == 2:
        h = x.shape[1]
    return [TensorInfo(x.dtype, (b, s, h))]


# --------------------------------------------------------------------------------------
# DecoderMaskedMultiHeadAttention
# --------------------------------------------------------------------------------------


def _dmmha_int(op, what, v):
    """A one-element int32 input as an int, or None when absent."""
    if v is None:
        return None
    v = _int32(op, what, v)
    if v.size != 1:
        raise ShapeError(f"{op}: {what} must hold one value, got shape {list(v.shape)}")
    return int(v.reshape(-1)[0])


def _dmmha_qkv(op, query, key, value, bias, heads, w):
    """(q (B, N, 1, H), key, value, hidden) from the query (B, 1, hidden) with key/value,
    or packed QKV (B, 1, 3 * hidden); bias (3 * hidden) is added to Q (and to the new
    K and V of self-attention); key/value are returned raw, their bias added."""
    q = _float(query, op, "query")
    if q.ndim != 3 or q.shape[1] != 1:
        raise ShapeError(f"{op}: query must be (batch, 1, hidden) (one decoding step), got "
                         f"shape {list(q.shape)}")
    if (key is None) != (value is None):
        raise ShapeError(f"{op}: key and value must be given together")
    d = q.shape[2]
    if key is None:  # packed QKV: query holds Q, K and V of equal head sizes
        if d % 3:
            raise ShapeError(f"{op}: packed QKV query's hidden {d} is not 3 * hidden")
        d //= 3
        q, key, value = q[..., :d], q[..., d:2 * d], q[..., 2 * d:]
    if d == 0 or d % heads:
        raise ShapeError(f"{op}: query hidden size {d} is not a positive multiple of "
                         f"num_heads {heads}")
    q = q.astype(w)
    key, value = _float(key, op, "key"), _float(value, op, "value")
    for what, t in (("key", key), ("value", value)):
        _same_dtype(op, what, t, query)
    if bias is not None:
        bias = _float(bias, op, "bias")
        _same_dtype(op, "bias", bias, query)
        if bias.shape != (3 * d,):
            raise ShapeError(f"{op}: bias must be 1-D of 3 * hidden = {3 * d}, got shape "
                             f"{list(bias.shape)}")
        bias = bias.astype(w)
        q += bias[:d]
    batch = q.shape[0]
    q = q.reshape(batch, heads, 1, d // heads)
    return q, key, value, bias, d


def _dmmha_self_kv(op, key, value, bias, past_k, past_v, plen, d, heads, w, attrs):
    """present_key/value: the past caches (B, N, max_seq, H) with the new key/value
    (B, 1, hidden) (+ bias) written at past_sequence_length."""
    if past_k is None or past_v is None:
        raise ShapeError(f"{op}: self-attention needs past_key and past_value (with no "
                         "past_key, the op is cross-attention and declares no present outputs)")
    if not attrs["past_present_share_buffer"]:
        raise UnsupportedOpError(f"{op}: past_key with past_present_share_buffer=0 is not "
                                 "supported (onnxruntime's CPU kernel requires 1)")
    if key.ndim != 3 or value.ndim != 3:
        raise ShapeError(f"{op}: self-attention key/value must be (batch, 1, hidden), got "
                         f"{list(key.shape)} and {list(value.shape)}")
    pk, pv = _float(past_k, op, "past_key"), _float(past_v, op, "past_value")
    batch, hs = key.shape[0], d // heads
    if pk.ndim != 4 or pk.shape != pv.shape or pk.shape[:2] != (batch, heads) \
            or pk.shape[3] != hs or key.shape != (batch, 1, d) or value.shape != key.shape:
        raise ShapeError(f"{op}: past_key {list(pk.shape)} and past_value {list(pv.shape)} "
                         f"must be (batch {batch}, num_heads {heads}, max_seq, head_size "
                         f"{hs}) and key/value {list(key.shape)}/{list(value.shape)} (batch, "
                         f"1, {d})")
    if plen is None:
        raise ShapeError(f"{op}: past_present_share_buffer needs past_sequence_length")
    if not 0 <= plen < pk.shape[2]:
        raise ShapeError(f"{op}: past_sequence_length must lie in [0, {pk.shape[2]}) "
                         f"(max_sequence_length), got {plen}")
    k, v = key.astype(w), value.astype(w)
    if bias is not None:
        k += bias[d:2 * d]
        v += bias[2 * d:]
    present_k, present_v = pk.astype(w), pv.astype(w)  # copies: the outputs
    present_k[:, :, plen] = k.reshape(batch, heads, hs)
    present_v[:, :, plen] = v.reshape(batch, heads, hs)
    return present_k, present_v


def _beam_rows(op, indir, beam, batch, total, max_seq):
    """(batch, total) cache row each batch row reads key position j from: its beam's
    cache_indirection entry within its group of `beam` rows, its own row for the new
    position."""
    indir = _int32(op, "cache_indirection", indir)
    beam = indir.shape[1] if beam is None and indir.ndim == 3 else beam
    if beam is None or beam < 1 or indir.ndim != 3 or batch % beam \
            or indir.shape != (batch // beam, beam, max_seq):
        raise ShapeError(f"{op}: cache_indirection {list(indir.shape)} must be (batch / "
                         f"beam_width, beam_width {beam}, max_sequence_length {max_seq})")
    beams = indir.reshape(batch, max_seq)[:, :total]
    if beams.size and (beams.min() < 0 or beams.max() >= beam):
        raise ShapeError(f"{op}: cache_indirection holds beams outside [0, {beam})")
    rows = (np.arange(batch) // beam * beam)[:, None] + beams
    rows[:, total - 1] = np.arange(batch)
    return rows


def _dmmha_kernel(inputs, attrs, ctx):
    """One decoding step of multi-head attention: softmax(scale q K^T + attention_bias,
    keys with mask_index 0 getting mask_filter_value) V over the cache positions
    0..past_sequence_length (self-attention, the new key/value written there first,
    K/V rows picked by cache_indirection under beam search) or over the given (B, N,
    kv, H) key/value (cross-attention: no past_key); qk = the masked, biased scores."""
    op = "DecoderMaskedMultiHeadAttention"
    (query, key, value, mask, attn_bias, past_k, past_v, plen, beam, indir,
     bias) = _padded(inputs, 11)
    heads = _num_heads(op, attrs)
    w = _work(_float(query, op, "query").dtype)
    q, key, value, bias, d = _dmmha_qkv(op, query, key, value, bias, heads, w)
    batch, hs = q.shape[0], d // heads
    plen = _dmmha_int(op, "past_sequence_length", plen)
    beam = _dmmha_int(op, "beam_width", beam)
    if past_k is None:  # cross-attention over key/value caches (B, N, kv, H)
        if attn_bias is not None:
            raise UnsupportedOpError(f"{op}: attention_bias with cross-attention is not "
                                     "supported (onnxruntime refuses it too)")
        if key.ndim != 4 or key.shape != value.shape or key.shape[:2] != (batch, heads) \
                or key.shape[3] != hs:
            raise ShapeError(f"{op}: cross-attention key {list(key.shape)} and value "
                             f"{list(value.shape)} must be (batch {batch}, num_heads "
                             f"{heads}, kv_seq, head_size {hs})")
        k_all, v_all = key.astype(w, copy=False), value.astype(w, copy=False)
        present = (k_all, v_all)
    else:
        if key.ndim >= 1 and key.shape[0] != batch:
            raise ShapeError(f"{op}: key {list(key.shape)} must have query's batch {batch}")
        present = _dmmha_self_kv(op, key, value, bias, past_k, past_v, plen, d, heads, w,
                                 attrs)
        total = plen + 1
        k_all, v_all = present[0][:, :, :total], present[1][:, :, :total]
        if indir is not None:
            if mask is not None:
                raise UnsupportedOpError(f"{op}: mask_index with cache_indirection (beam "
                                         "search) is not supported (onnxruntime's CPU kernel "
                                         "reads that mask as floats)")
            if attn_bias is not None:
                raise UnsupportedOpError(f"{op}: attention_bias with cache_indirection (beam "
                                         "search) is not supported (onnxruntime's CPU kernel "
                                         "gives row b the bias of row b // beam_width)")
            rows = _beam_rows(op, indir, beam, batch, total, present[0].shape[2])
            pos = np.arange(total)[None, :]
            # (B, T, N, H) -> (B, N, T, H): row b's key j from cache row rows[b, j]
            k_all = present[0][rows, :, pos].transpose(0, 2, 1, 3)
            v_all = present[1][rows, :, pos].transpose(0, 2, 1, 3)
        elif beam is not None and beam > 1:
            raise ShapeError(f"{op}: beam_width {beam} needs cache_indirection")
    total = k_all.shape[2]
    scale = attrs["scale"]
    scale = 1.0 / np.sqrt(hs) if not scale else float(scale)
    scores = np.matmul(q, k_all.swapaxes(-1, -2)) * w.type(scale)  # (B, N, 1, T)
    if mask is not None:
        m = _int32(op, "mask_index", mask)
        if m.shape != (batch, total):
            raise UnsupportedOpError(f"{op}: mask_index of shape {list(m.shape)} is not "
                                     f"supported (only (batch, total_sequence_length) = "
                                     f"{[batch, total]})")
        # onnxruntime masks the keys whose mask_index is <= 0 (a -1 as a 0)
        scores += np.where(m <= 0, w.type(_mask_filter(attrs)), w.type(0))[:, None, None]
    ab = _attention_bias(op, attn_bias, batch, heads, 1, total, w)
    if ab is not None:
        scores += ab
    probs = _quiet(_softmax, scores, -1, w == _F32)
    y = np.matmul(probs, v_all).reshape(batch, 1, heads * v_all.shape[3])
    dt = np.asarray(query).dtype
    outs = (y, present[0], present[1])
    if attrs.get(NUM_OUTPUTS, 1) > 3:
        if not attrs["output_qk"]:
            raise OpAttributeError(f"{op}: the qk output needs output_qk=1")
        outs += (scores,)
    return tuple(o.astype(dt, copy=False) for o in outs[:max(1, attrs.get(NUM_OUTPUTS, 1))])


def _dmmha_infer(attrs, inputs):
    """output (batch, 1, v_hidden); present_key/value the past caches' shape (the
    key/value caches' for cross-attention); qk (batch, num_heads, 1, total)."""
    op = "DecoderMaskedMultiHeadAttention"
    heads = _num_heads(op, attrs)
    q = inputs[0]
    key = inputs[1] if len(inputs) > 1 else None
    past = inputs[5] if len(inputs) > 5 else None
    if q.shape is None:
        return [TensorInfo(q.dtype, None)] * 4
    if len(q.shape) != 3:
        raise ShapeError(f"{op}: query must be (batch, 1, hidden), got {list(q.shape)}")
    b, s, d = q.shape
    if key is None and d is not None:
        d //= 3
    present = past.shape if past is not None else (key.shape if key is not None else None)
    total = None
    if past is None and present is not None and len(present) == 4:
        total = present[2]
    qk = (b, heads, 1, total)
    return [TensorInfo(q.dtype, (b, s, d)), TensorInfo(q.dtype, present),
            TensorInfo(q.dtype, present), TensorInfo(q.dtype, qk)]


# --------------------------------------------------------------------------------------
# SparseAttention
# --------------------------------------------------------------------------------------


def _sparse_heads(op, attrs):
    """(num_heads, kv_num_heads, sparse_block_size) after onnxruntime's checks."""
    heads, kv = int(attrs["num_heads"]), int(attrs["kv_num_heads"])
    if heads < 1 or kv < 1 or heads % kv:
        raise OpAttributeError(f"{op}: num_heads {heads} must be a positive multiple of "
                               f"kv_num_heads {kv}")
    block = int(attrs["sparse_block_size"])
    if block < 1:
        raise OpAttributeError(f"{op}: sparse_block_size must be positive, got {block}")
    return heads, kv, block


def _block_masks(op, rows, cols, heads):
    """(layouts, blocks, blocks) bool block masks from the CSR inputs, with
    onnxruntime's rules: a layout with as many nonzeros as a full lower triangle, and a
    block row with as many as its index + 1, are dense (every earlier block allowed)."""
    rows, cols = _int32(op, "block_row_indices", rows), _int32(op, "block_col_indices", cols)
    if rows.ndim != 2 or rows.shape[1] < 2 or rows.shape[0] < 1 or heads % rows.shape[0] \
            or cols.ndim != 2 or cols.shape[0] != rows.shape[0]:
        raise ShapeError(f"{op}: block_row_indices {list(rows.shape)} must be (num_layout, "
                         f"max_blocks + 1) with num_heads {heads} a multiple of num_layout, and "
                         f"block_col_indices {list(cols.shape)} (num_layout, max_nnz)")
    layouts, nb = rows.shape[0], rows.shape[1] - 1
    if np.any(np.diff(rows, axis=1) < 0) or rows.min() < 0 or rows.max() > cols.shape[1]:
        raise ShapeError(f"{op}: block_row_indices must be non-decreasing offsets into "
                         f"block_col_indices' {cols.shape[1]} columns")
    # entry e of layout l belongs to block row r when rows[l, r] <= e < rows[l, r + 1]
    entry = np.arange(cols.shape[1])
    used = (entry[None, None, :] >= rows[:, :-1, None]) & \
        (entry[None, None, :] < rows[:, 1:, None])
    if np.any(used & ((cols[:, None, :] < 0) | (cols[:, None, :] >= nb))):
        raise ShapeError(f"{op}: block_col_indices holds block columns outside [0, {nb})")
    onehot = np.zeros((layouts, nb, cols.shape[1], nb), bool)
    l, r, e = np.nonzero(used)
    onehot[l, r, e, cols[l, e]] = True
    mask = onehot.any(axis=2)
    lower = np.tril(np.ones((nb, nb), bool))
    dense_row = np.diff(rows, axis=1) == np.arange(1, nb + 1)  # (layouts, nb)
    dense_layout = rows[:, -1] >= nb * (nb + 1) // 2
    dense = dense_row | dense_layout[:, None]
    return np.where(dense[:, :, None], lower, mask)


def _sparse_lengths(op, total, lengths, batch, seq, cache, max_seq):
    """(is_prompt, per-entry past lengths, total lengths) after onnxruntime's checks."""
    t = _int32(op, "total_sequence_length", total)
    if t.size != 1:
        raise ShapeError(f"{op}: total_sequence_length must hold one value, got shape "
                         f"{list(t.shape)}")
    t = int(t.reshape(-1)[0])
    kl = _int32(op, "key_total_sequence_lengths", lengths)
    if kl.shape != (batch,):
        raise ShapeError(f"{op}: key_total_sequence_lengths must be ({batch},), got "
                         f"{list(kl.shape)}")
    limit = min(cache, max_seq)
    if not 0 < t <= limit:
        raise ShapeError(f"{op}: total_sequence_length {t} must lie in [1, {limit}] (the KV "
                         "cache's and the block mask's lengths)")
    prompt = t == seq
    low, high = (0, seq) if prompt else (seq, t)
    if kl.size and (kl.min() < low or kl.max() > high):
        raise ShapeError(f"{op}: key_total_sequence_lengths {kl.tolist()} must lie in "
                         f"[{low}, {high}] ({'prompt' if prompt else 'past + sequence_length'}"
                         " .. total_sequence_length)")
    past = np.zeros(batch, np.int64) if prompt else kl.astype(np.int64) - seq
    return prompt, past, kl.astype(np.int64)


def _sparse_attention_kernel(inputs, attrs, ctx):
    """Block-sparse causal grouped-query attention with a shared-buffer KV cache (Phi-3
    small): the new K/V (rotated with Q when do_rotary) are written into the caches at
    each entry's past length (key_total_sequence_lengths - sequence_length; 0 for a
    prompt); query at position p of head h attends keys j <= p whose block j // block
    the block mask of layout h % num_layout allows in block row p // block. Rows of a
    right-padded prompt past an entry's length are zeros."""
    op = "SparseAttention"
    (query, key, value, past_k, past_v, rows, cols, total, lengths, cos,
     sin) = _padded(inputs, 11)
    heads, kv_heads, block = _sparse_heads(op, attrs)
    q, k, v, hs = _gqa_split(op, query, key, value, heads, kv_heads)
    dt = q.dtype
    batch, seq = q.shape[:2]
    masks = _block_masks(op, rows, cols, heads)
    pk, pv = _float(past_k, op, "past_key"), _float(past_v, op, "past_value")
    if pk.ndim != 4 or pk.shape != pv.shape or pk.shape[:2] != (batch, kv_heads) \
            or pk.shape[3] != hs:
        raise ShapeError(f"{op}: past_key {list(pk.shape)} and past_value {list(pv.shape)} "
                         f"must be (batch {batch}, kv_num_heads {kv_heads}, max_cache, "
                         f"head_size {hs})")
    cache = pk.shape[2]
    prompt, past, klen = _sparse_lengths(op, total, lengths, batch, seq, cache,
                                         masks.shape[1] * block)
    w = _work(dt)
    qh = q.astype(w).reshape(batch, seq, heads, hs).transpose(0, 2, 1, 3)
    kh = k.astype(w).reshape(batch, seq, kv_heads, hs).transpose(0, 2, 1, 3)
    vh = v.astype(w).reshape(batch, seq, kv_heads, hs).transpose(0, 2, 1, 3)
    pos = past[:, None] + np.arange(seq)[None, :]  # (B, S) absolute positions
    if attrs["do_rotary"]:
        if cos is None or sin is None:
            raise ShapeError(f"{op}: do_rotary=1 needs cos_cache and sin_cache")
        cos, sin = _caches(op, cos, sin)
        rot = 2 * cos.shape[1]
        if rot > hs:
            raise ShapeError(f"{op}: cos_cache's {cos.shape[1]} columns rotate more than "
                             f"head_size {hs} dims")
        qh = _rotate(np.ascontiguousarray(qh), pos, cos, sin, rot, attrs["rotary_interleaved"],
                     op)
        kh = _rotate(np.ascontiguousarray(kh), pos, cos, sin, rot,
                     attrs["rotary_interleaved"], op)
    present_k, present_v = pk.astype(w), pv.astype(w)  # copies: the outputs
    b_idx = np.arange(batch)[:, None]
    present_k[b_idx, :, pos] = kh.transpose(0, 2, 1, 3)  # (B, S, Kv, H) at (b, :, pos)
    present_v[b_idx, :, pos] = vh.transpose(0, 2, 1, 3)
    span = int(pos.max()) + 1 if pos.size else 0  # the keys any query can reach
    group = heads // kv_heads
    keys = np.repeat(present_k[:, :, :span], group, axis=1)  # (B, N, T, H)
    vals = np.repeat(present_v[:, :, :span], group, axis=1)
    scale = attrs["scale"]
    scale = 1.0 / np.sqrt(hs) if not scale else float(scale)
    scores = np.matmul(qh * w.type(scale), keys.swapaxes(-1, -2))  # (B, N, S, T)
    j = np.arange(span)
    causal = j[None, None, :] <= pos[:, :, None]  # (B, S, T)
    layout = np.arange(heads) % masks.shape[0]
    blocks = masks[layout[None, :, None, None], (pos // block)[:, None, :, None],
                   (j // block)[None, None, None, :]]  # (B, N, S, T)
    # onnxruntime gives blocked keys the lowest float (not -inf: a row with every key
    # blocked is uniform over its causal keys) and keys past the query none at all
    scores = np.where(blocks, scores, np.finfo(w).min)
    scores = np.where(causal[:, None], scores, -np.inf)
    probs = _quiet(_softmax, scores, -1, False)
    y = np.matmul(probs, vals)  # (B, N, S, H)
    if prompt:  # rows of a right-padded prompt past the entry's length: zeros
        y = np.where((np.arange(seq)[None, :] < klen[:, None])[:, None, :, None], y, 0)
    y = y.transpose(0, 2, 1, 3).reshape(batch, seq, heads * hs)
    return tuple(o.astype(dt, copy=False) for o in (y, present_k, present_v))


def _sparse_attention_infer(attrs, inputs):
    """output (batch, seq, num_heads * head_size); present_key/value the past caches'
    shapes."""
    op = "SparseAttention"
    heads, kv_heads, _ = _sparse_heads(op, attrs)
    q, key, past = inputs[0], inputs[1], inputs[3]
    shape = None
    if q.shape is not None and len(q.shape) == 3 and q.shape[2] is not None:
        d = q.shape[2] if key is not None else q.shape[2] // (heads + 2 * kv_heads) * heads
        shape = (q.shape[0], q.shape[1], d)
    return [TensorInfo(q.dtype, shape), TensorInfo(q.dtype, past.shape),
            TensorInfo(q.dtype, past.shape)]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

_SEED = ("seed", "int", None)
_GN_ATTRS = (("channels_last", "int", 1), ("activation", "int"), ("groups", "int"),
             ("epsilon", "float", 1e-5))

OPS = (
    define("BiasSoftmax", ("data", "bias"), ("output",), _bias_softmax_kernel,
           (("is_inner_broadcast", "int"), ("axis", "int", 1)), infer=_bias_softmax_infer,
           domain=_DOMAIN, dtypes=("float16", "float32", "float64"),
           doc="Softmax of data + a broadcast bias over the dims from axis on."),
    define("BiasDropout", ("data", "bias", "residual?", "ratio?", "training_mode?"),
           ("output", "mask?"), _dropout_kernel("BiasDropout", True, False), (_SEED,),
           infer=_dropout_infer(False), domain=_DOMAIN, dtypes=_IEEE,
           doc="data + bias (+ residual), inference-mode dropout (mask all true)."),
    define("BitmaskDropout", ("data", "ratio?", "training_mode?"), ("output", "mask?"),
           _dropout_kernel("BitmaskDropout", False, True), (_SEED,),
           infer=_dropout_infer(True), domain=_DOMAIN, dtypes=_IEEE,
           doc="Inference-mode dropout with a bit-packed uint32 mask (all bits set)."),
    define("BitmaskBiasDropout", ("data", "bias", "residual?", "ratio?", "training_mode?"),
           ("output", "mask?"), _dropout_kernel("BitmaskBiasDropout", True, True),
           (_SEED,), infer=_dropout_infer(True), domain=_DOMAIN, dtypes=_IEEE,
           doc="data + bias (+ residual), inference-mode dropout, bit-packed mask."),
    define("GroupNorm", ("X", "gamma", "beta"), ("Y",), _group_norm_kernel("GroupNorm", False),
           _GN_ATTRS, infer=_group_norm_infer("GroupNorm"), domain=_DOMAIN, dtypes=_F16_32,
           doc="Group normalization of NHWC (or NCHW) input, optionally then SiLU."),
    define("SkipGroupNorm", ("X", "gamma", "beta", "skip", "bias?"), ("Y", "S?"),
           _group_norm_kernel("SkipGroupNorm", True), _GN_ATTRS,
           infer=_group_norm_infer("SkipGroupNorm"), domain=_DOMAIN, dtypes=_F16_32,
           doc="GroupNorm of X + skip + bias, which it also returns."),
    define("BiasSplitGelu", ("X", "bias"), ("Y",), _bias_split_gelu_kernel,
           infer=_bias_split_gelu_infer, domain=_DOMAIN, dtypes=_F16_32,
           doc="Left half of X + bias times Gelu of its right half."),
    define("SwiGLU", ("gate", "up?"), ("output",), _swiglu_kernel,
           (("round_activation", "int", 0), ("activation_beta", "float", 0.0),
            ("activation_alpha", "float", 1.0), ("limit", "float", 0.0)),
           infer=_swiglu_infer, domain=_DOMAIN, dtypes=("float16", "bfloat16", "float32"),
           doc="Clamped SwiGLU: G sigmoid(alpha G) (L + beta)."),
    define("ScaledSiLU", ("X", "scale?"), ("Y",), _scaled_silu_kernel,
           (("alpha", "float", 1.0),), infer=_same_infer, domain=_DOMAIN,
           dtypes=("float32", "float16", "bfloat16"),
           doc="SiLU of scale * X with the schema's roundings to T."),
    define("RelativePositionBias", ("bias_table", "query_length", "key_length"),
           ("output",), _rel_pos_bias_kernel,
           (("is_bidirectional", "int", 0), ("max_distance", "int")),
           infer=_rel_pos_bias_infer, domain=_DOMAIN, dtypes=_F16_32,
           doc="T5's bucketed relative position bias (1, heads, seq, seq)."),
    define("GatedRelativePositionBias", ("query_layer", "query_bias", "rel_pos", "weight",
                                         "bias", "eco_a", "token_offset?"), ("output",),
           _gated_rel_pos_kernel, (("num_heads", "int"),), infer=_gated_rel_pos_infer,
           domain=_DOMAIN, dtypes=_F16_32,
           doc="WavLM's query-gated relative position bias."),
    define("RemovePadding", ("input", "sequence_token_count"),
           ("output", "token_offset", "cumulated_seq_len", "max_seq_len"),
           _remove_padding_kernel, infer=_remove_padding_infer, domain=_DOMAIN,
           dtypes=_F16_32, doc="Packs the non-padding tokens of right-padded sequences."),
    define("RestorePadding", ("input", "token_offset"), ("output",), _restore_padding_kernel,
           infer=_restore_padding_infer, domain=_DOMAIN, dtypes=_F16_32,
           doc="Unpacks tokens to (batch, seq, hidden) with zero padding rows."),
    define("DecoderMaskedMultiHeadAttention",
           ("query", "key?", "value?", "mask_index?", "attention_bias?", "past_key?",
            "past_value?", "past_sequence_length?", "beam_width?", "cache_indirection?",
            "bias?"), ("output", "present_key?", "present_value?", "qk?"), _dmmha_kernel,
           (("output_qk", "int", 0), ("mask_filter_value", "float", None),
            ("scale", "float", None), ("past_present_share_buffer", "int", 0),
            ("num_heads", "int")),
           infer=_dmmha_infer, domain=_DOMAIN, dtypes=_F16_32,
           doc="One decoding step of multi-head self- or cross-attention with a KV cache."),
    define("SparseAttention", ("query", "key?", "value?", "past_key", "past_value",
                               "block_row_indices", "block_col_indices",
                               "total_sequence_length", "key_total_sequence_lengths",
                               "cos_cache?", "sin_cache?"),
           ("output", "present_key", "present_value"), _sparse_attention_kernel,
           (("rotary_interleaved", "int", 0), ("sparse_block_size", "int"),
            ("scale", "float", 0.0), ("do_rotary", "int", 0), ("kv_num_heads", "int"),
            ("num_heads", "int")),
           infer=_sparse_attention_infer, domain=_DOMAIN, dtypes=("float16", "float32"),
           doc="Block-sparse causal grouped-query attention with a KV cache (Phi-3 small)."),
)

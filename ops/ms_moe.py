"""Operators: onnxruntime's mixture-of-experts contrib ops (domain "com.microsoft").

* MoE: float experts. Each token's router logits pick k experts; each picked expert runs
  its feed-forward block, fc2(act(fc1(x))), and the token's output is the routing-weight
  sum of those blocks. Weights are [num_experts, N, K] (row-major, out-features first, as
  onnxruntime 1.32's schema gives them): fc1 [E, fusion * inter, hidden], fc2 [E, hidden,
  inter], fc3 [E, inter, hidden]; biases [E, N].
* QMoE: the same with integer-quantized expert weights (uint8, 2/4/8-bit codes packed low
  bits first along K, each row [N, K * bits / 8]); scales per output row ([E, N]) or per
  block of `block_size` along K ([E, N, K / block_size]); zero points uint8 packed the
  same way ([E, ceil(N * bits / 8)] per row, [E, N, ceil(blocks * bits / 8)] per block),
  2^(bits-1) when omitted. W = (code - zero_point) * scale. fc1/fc2/fc3_expert_weight_bits
  override expert_weight_bits per projection. router_weights, when given, replaces the
  softmax probabilities as mixing weights (router_probs still selects the experts).
* MoEGroupRouter: the group-limited sigmoid router of DeepSeek-V3 / BailingMoeV3
  (noaux_tc): s = sigmoid(logits); groups ranked by the sum of their top `group_topk`
  values of s + expert_bias, the best `topk_group` groups kept, the top_k experts of
  those by s + expert_bias written as log(max(s, 1e-20)), every other entry
  router_sentinel. Or the full-score outputs: selection_scores = s + expert_bias and
  router_weights = s (float32), optionally of logits @ projection_weight.T.

Routing (MoE, QMoE), as onnxruntime's CPU kernels do it: softmax of router_probs in
float32, the k largest (ties: the higher expert index first), renormalised to sum 1 when
normalize_routing_weights; router_weights gathered at the chosen experts and then
renormalised the same way. Routes whose weight is not positive are skipped, as
onnxruntime skips them. use_sparse_mixer=1 (Phi-3.5-MoE's export; k must be 2) routes by
onnxruntime's CUDA sparse_mixer_top2 on the raw logits (jitter_eps 0.01): the best
expert, then the best of the others, each weighted by its softmax among the experts
within 2 * eps * max(|logit|, best) of that best one (the first expert masked out for
the second; normalize_routing_weights and router_weights play no part); onnxruntime's
CPU kernels ignore the attribute and route by softmax top-2, so a sparse-mixer model
gives other outputs there (onegraph follows the attribute).

Activations: relu, gelu (tanh form), silu (x * sigmoid(x)), identity, relu2 (relu
squared) and the gated swiglu and geglu, with gate g and linear l taken from fc1's rows
interleaved (swiglu_fusion=1: g0, l0, g1, l1, ...), concatenated (2: [g | l]) or from fc1
and fc3 (0, swiglu only). swiglu = min(g, limit) * sigmoid(alpha * min(g, limit)) *
(clip(l, -limit, limit) + beta), limit swiglu_limit (none when unset);
swiglu_limit_after_activation=1 clamps the activated gate instead. geglu =
gelu_tanh(g) * l. With fc3 and a non-gated activation the block is fc2(act(fc1(x)) *
fc3(x)) (Mixtral's gated MLP, as onnxruntime's CUDA MoE computes it).

Arithmetic: float32 throughout (float16 / bfloat16 inputs are widened once and the
output rounded once); quantized weights are dequantized to float32 per expert, for the
experts some token picks, on every run (the whole dequantized set of a large model would
not fit in memory next to it). accuracy_level lets onnxruntime quantize activations to
int8; onegraph always computes in float32, which meets every level.

onnxruntime's CPU kernels refuse (so these have no oracle here, and follow the schema):
swiglu_fusion 0 and 2, fc3 inputs, mixed projection widths, relu2 and geglu. Refused
here: QMoE quant_type other than 'int' (fp4, nvfp4, fp8, wfp4afp8: onnxruntime's CPU
kernel crashes or has no kernel for them), the 3-bit profile, weights_prepacked=1 (an
execution provider's private layout), and the flags normalize_routing_weights,
use_sparse_mixer and swiglu_limit_after_activation other than 0 or 1 (onnxruntime reads
the first two as `== 1`, so 2 would be "off" there).
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedOpError
from .ms_matmul_nbits import _unpack
from .registry import NUM_OUTPUTS, TensorInfo, define

_DOMAIN = "com.microsoft"
_F32 = np.float32
_FLOAT_NAMES = ("float32", "float16", "bfloat16")
_ACTIVATIONS = ("relu", "gelu", "silu", "identity", "swiglu", "relu2", "geglu")
_GATED = ("swiglu", "geglu")
_SPARSE_MIXER_EPS = 0.01
_INT_BITS = (2, 4, 8)

# MoE and QMoE's shared attributes (defaults from onnxruntime 1.32's schemas; None =
# not set, as the schema leaves swiglu_limit).
_MOE_ATTRS = (("k", "int", 1), ("activation_type", "string", "relu"),
              ("normalize_routing_weights", "int", 0), ("use_sparse_mixer", "int", 0),
              ("activation_alpha", "float", 1.0), ("activation_beta", "float", 0.0),
              ("swiglu_fusion", "int", 0), ("swiglu_limit", "float", None),
              ("swiglu_limit_after_activation", "int", 0))
_QMOE_ATTRS = _MOE_ATTRS + (
    ("expert_weight_bits", "int", 4), ("fc1_expert_weight_bits", "int", None),
    ("fc2_expert_weight_bits", "int", None), ("fc3_expert_weight_bits", "int", None),
    ("block_size", "int", None), ("quant_type", "string", "int"),
    ("weights_prepacked", "int", -1), ("accuracy_level", "int", 0))


def _padded(inputs, n):
    """The first n inputs, None for those not given."""
    return (list(inputs) + [None] * n)[:n]


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _is_float(dtype):
    return dtype is not None and np.dtype(dtype).name in _FLOAT_NAMES


# --------------------------------------------------------------------------------------
# Attributes
# --------------------------------------------------------------------------------------


def _moe_problem(attrs):
    """What is wrong with the routing and activation attributes, or None."""
    act = _text(attrs["activation_type"])
    if act not in _ACTIVATIONS:
        return f"activation_type {act!r} is not one of {', '.join(_ACTIVATIONS)}"
    if attrs["k"] < 1:
        return f"k must be at least 1, got {attrs['k']}"
    # onnxruntime reads normalize_routing_weights and use_sparse_mixer as `== 1`, so 2 or
    # -1 means "off" there and "on" to a truthiness test: refuse flags that are neither.
    for flag in ("normalize_routing_weights", "use_sparse_mixer",
                 "swiglu_limit_after_activation"):
        if attrs[flag] not in (0, 1):
            return f"{flag} must be 0 or 1, got {attrs[flag]}"
    if attrs["use_sparse_mixer"] and attrs["k"] != 2:
        return f"use_sparse_mixer needs k = 2, got k = {attrs['k']}"
    fusion = attrs["swiglu_fusion"]
    if fusion not in (0, 1, 2):
        return f"swiglu_fusion must be 0, 1 or 2, got {fusion}"
    if act == "geglu" and fusion == 0:
        return "geglu needs fused fc1 gate/up rows (swiglu_fusion 1 or 2)"
    if attrs["swiglu_limit_after_activation"] and act != "swiglu":
        return "swiglu_limit_after_activation needs activation_type 'swiglu'"
    return None


def _bits(attrs, which):
    """The effective width of projection `which` (1, 2, 3)."""
    own = attrs[f"fc{which}_expert_weight_bits"]
    return attrs["expert_weight_bits"] if own is None else own


def _qmoe_problem(attrs):
    """What is wrong with QMoE's attributes, or None (see `_moe_problem`)."""
    problem = _moe_problem(attrs)
    if problem:
        return problem
    for which in (1, 2, 3):
        bits = _bits(attrs, which)
        if bits == 3:
            continue  # refused at run time as unsupported, not as malformed
        if bits not in _INT_BITS:
            return f"fc{which} weight bits must be 2, 3, 4 or 8, got {bits}"
    bs = attrs["block_size"]
    if bs is not None and bs > 0 and (bs < 16 or bs & (bs - 1)):
        return f"block_size {bs} must be a power of 2 and at least 16"
    if attrs["weights_prepacked"] not in (-1, 0, 1):
        return f"weights_prepacked must be -1, 0 or 1, got {attrs['weights_prepacked']}"
    return None


def _qmoe_unsupported(attrs):
    """Raises UnsupportedOpError for the QMoE forms onegraph does not run."""
    quant = _text(attrs["quant_type"])
    if quant != "int":
        raise UnsupportedOpError(f"QMoE: quant_type {quant!r} is not supported (onegraph "
                                 f"runs integer experts, quant_type 'int')")
    if attrs["weights_prepacked"] == 1:
        raise UnsupportedOpError("QMoE: weights_prepacked=1 (an execution provider's "
                                 "private layout) is not supported")
    for which in (1, 2, 3):
        if _bits(attrs, which) == 3:
            raise UnsupportedOpError("QMoE: the 3-bit profile is not supported (2, 4 and "
                                     "8-bit experts are)")


# --------------------------------------------------------------------------------------
# Routing
# --------------------------------------------------------------------------------------


def _softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _top_k_high_index_first(p, k):
    """The k largest entries of each row, ties broken towards the higher index (the
    order of onnxruntime's partial_sort over (value, index) pairs with greater<>)."""
    num = p.shape[1]
    order = np.argsort(-p[:, ::-1], axis=1, kind="stable")[:, :k]
    return (num - 1 - order).astype(np.int64)


def _sparse_mixer(logits):
    """onnxruntime's CUDA sparse_mixer_top2 on float32 logits [T, E]: (indices [T, 2],
    weights [T, 2])."""
    eps2 = _F32(2 * _SPARSE_MIXER_EPS)
    rows = np.arange(logits.shape[0])
    experts = np.arange(logits.shape[1])
    first = logits.argmax(axis=1)
    others = logits.copy()
    others[rows, first] = -np.inf
    second = others.argmax(axis=1)
    idx = np.stack([first, second], axis=1)
    weights = np.empty(idx.shape, _F32)
    for j in (0, 1):
        best = logits[rows, idx[:, j]][:, None]
        masked = (best - logits) > eps2 * np.maximum(np.abs(logits), best)
        if j == 1:
            masked |= experts[None, :] == first[:, None]
        total = np.where(masked, _F32(0), np.exp(logits - best)).sum(axis=1)
        weights[:, j] = _F32(1) / total
    return idx.astype(np.int64), weights


def _route(op, logits, attrs, mixing=None):
    """(expert indices [T, k], float32 weights [T, k]) of float32 logits [T, E];
    `mixing` (router_weights, float32 [T, E]) replaces the probabilities as weights."""
    k = attrs["k"]
    num = logits.shape[1]
    if k > num:
        raise ShapeError(f"{op}: k = {k} exceeds the number of experts ({num})")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if attrs["use_sparse_mixer"]:
            return _sparse_mixer(logits)
        probs = _softmax_rows(logits)
        idx = _top_k_high_index_first(probs, k)
        weights = np.take_along_axis(probs if mixing is None else mixing, idx, axis=1)
        if attrs["normalize_routing_weights"]:
            weights = weights / weights.sum(axis=1, keepdims=True)
    return idx, weights.astype(_F32, copy=False)


# --------------------------------------------------------------------------------------
# The expert block
# --------------------------------------------------------------------------------------


def _sigmoid(x):
    return _F32(1) / (_F32(1) + np.exp(-x))


def _gelu_tanh(x):
    c = _F32(0.7978845608)
    return _F32(0.5) * x * (_F32(1) + np.tanh(c * (x + _F32(0.044715) * x * x * x)))


def _activate(h, act):
    if act == "relu":
        return np.maximum(h, _F32(0))
    if act == "relu2":
        r = np.maximum(h, _F32(0))
        return r * r
    if act == "gelu":
        return _gelu_tanh(h)
    if act == "silu":
        return h * _sigmoid(h)
    return h


def _gated(g, lin, attrs):
    """swiglu / geglu of gate g and linear part lin."""
    if _text(attrs["activation_type"]) == "geglu":
        return _gelu_tanh(g) * lin
    alpha, beta = _F32(attrs["activation_alpha"]), _F32(attrs["activation_beta"])
    limit = attrs["swiglu_limit"]
    if limit is None:
        return g * _sigmoid(alpha * g) * (lin + beta)
    limit = _F32(limit)
    lin = np.clip(lin, -limit, limit)
    if attrs["swiglu_limit_after_activation"]:
        return np.minimum(g * _sigmoid(alpha * g), limit) * (lin + beta)
    g = np.minimum(g, limit)
    return g * _sigmoid(alpha * g) * (lin + beta)


def _linear(x, w, b):
    y = x @ w.T
    return y if b is None else y + b


def _expert_block(x, w1, b1, w2, b2, w3, b3, attrs):
    """fc2(act(fc1(x))) of one expert on its tokens x [n, hidden], float32."""
    act = _text(attrs["activation_type"])
    h = _linear(x, w1, b1)
    if act in _GATED:
        if w3 is not None:
            a = _gated(h, _linear(x, w3, b3), attrs)
        elif attrs["swiglu_fusion"] == 1:
            a = _gated(h[:, 0::2], h[:, 1::2], attrs)
        else:
            half = h.shape[1] // 2
            a = _gated(h[:, :half], h[:, half:], attrs)
    else:
        a = _activate(h, act)
        if w3 is not None:
            a = a * _linear(x, w3, b3)
    return _linear(a, w2, b2)


def _mixture(op, x, logits, mixing, num_experts, expert_weights, attrs):
    """The routed mixture of x [T, hidden] (float32): expert_weights(e) gives expert e's
    (w1, b1, w2, b2, w3, b3) as float32 arrays (biases and fc3 may be None)."""
    idx, weights = _route(op, logits, attrs, mixing)
    y = np.zeros(x.shape, _F32)
    live = weights > 0
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for e in range(num_experts):
            rows, slots = np.nonzero((idx == e) & live)
            if rows.size == 0:
                continue
            out = _expert_block(x[rows], *expert_weights(e), attrs)
            y[rows] += weights[rows, slots][:, None] * out
    return y


# --------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------


def _tokens(op, x, router, mixing=None):
    """(x as float32 [T, hidden], logits float32 [T, E], mixing float32 or None)."""
    x = np.asarray(x)
    if not _is_float(x.dtype):
        raise ShapeError(f"{op}: input must be float32, float16 or bfloat16, got {x.dtype}")
    if x.ndim not in (2, 3):
        raise ShapeError(f"{op}: input must be 2-D [tokens, hidden] or 3-D [batch, seq, "
                         f"hidden], got shape {list(x.shape)}")
    hidden = x.shape[-1]
    if hidden == 0:
        raise ShapeError(f"{op}: input's hidden size (last dim) must be positive")
    flat = x.reshape(-1, hidden).astype(_F32)
    router = np.asarray(router)
    if router.dtype != x.dtype:
        raise ShapeError(f"{op}: router_probs is {router.dtype}, but input is {x.dtype}")
    if router.ndim != 2 or router.shape[0] != flat.shape[0]:
        raise ShapeError(f"{op}: router_probs of shape {list(router.shape)} must be "
                         f"[tokens, num_experts] with tokens = {flat.shape[0]}")
    if mixing is not None:
        mixing = np.asarray(mixing)
        if mixing.dtype != x.dtype or mixing.shape != router.shape:
            raise ShapeError(f"{op}: router_weights must be {x.dtype} of router_probs' "
                             f"shape {list(router.shape)}, got {mixing.dtype} "
                             f"{list(mixing.shape)}")
        mixing = mixing.astype(_F32)
    return flat, router.astype(_F32), mixing


def _check_array(op, name, a, shape, dtype):
    a = np.asarray(a)
    if a.dtype != np.dtype(dtype):
        raise ShapeError(f"{op}: {name} is {a.dtype}, but must be {np.dtype(dtype)}")
    if a.shape != tuple(shape):
        raise ShapeError(f"{op}: {name} of shape {list(a.shape)} must be {list(shape)}")
    return a


def _gate_layout(op, attrs, has_fc3):
    """(fusion size of fc1's rows, whether fc3 is used), checked against the inputs."""
    act = _text(attrs["activation_type"])
    if act in _GATED:
        if attrs["swiglu_fusion"] == 0:
            if not has_fc3:
                raise ShapeError(f"{op}: {act} with swiglu_fusion 0 needs fc3 weights "
                                 f"(the linear projection)")
            return 1
        if has_fc3:
            raise ShapeError(f"{op}: fused {act} (swiglu_fusion {attrs['swiglu_fusion']}) "
                             f"keeps the linear projection in fc1; fc3 must be omitted")
        return 2
    return 1


# --------------------------------------------------------------------------------------
# MoE
# --------------------------------------------------------------------------------------


def _moe_kernel(inputs, attrs, ctx):
    """Float mixture of experts (see the module doc); output of input's type and shape.

    Raises:
        ShapeError: an input's type or shape does not fit (names it), or k > experts.
    """
    op = "MoE"
    x, router, w1, b1, w2, b2, w3, b3 = _padded(inputs, 8)
    x = np.asarray(x)
    flat, logits, _ = _tokens(op, x, router)
    hidden, num = flat.shape[1], logits.shape[1]
    fusion = _gate_layout(op, attrs, w3 is not None)
    w2 = np.asarray(w2)
    if w2.ndim != 3 or w2.shape[:2] != (num, hidden):
        raise ShapeError(f"{op}: fc2_experts_weights of shape {list(w2.shape)} must be "
                         f"[num_experts, hidden, inter] = [{num}, {hidden}, inter]")
    inter = w2.shape[2]
    w1 = _check_array(op, "fc1_experts_weights", w1, (num, fusion * inter, hidden), x.dtype)
    w2 = _check_array(op, "fc2_experts_weights", w2, (num, hidden, inter), x.dtype)
    if b1 is not None:
        b1 = _check_array(op, "fc1_experts_bias", b1, (num, fusion * inter), x.dtype)
    if b2 is not None:
        b2 = _check_array(op, "fc2_experts_bias", b2, (num, hidden), x.dtype)
    if w3 is not None:
        w3 = _check_array(op, "fc3_experts_weights", w3, (num, inter, hidden), x.dtype)
    if b3 is not None:
        if w3 is None:
            raise ShapeError(f"{op}: fc3_experts_bias is given without fc3_experts_weights")
        b3 = _check_array(op, "fc3_experts_bias", b3, (num, inter), x.dtype)

    def f32(a, e):
        return None if a is None else a[e].astype(_F32)

    def expert(e):
        return (f32(w1, e), f32(b1, e), f32(w2, e), f32(b2, e), f32(w3, e), f32(b3, e))

    y = _mixture(op, flat, logits, None, num, expert, attrs)
    return (y.reshape(x.shape).astype(x.dtype),)


def _moe_infer(op):
    def infer(attrs, inputs):
        return _moe_infer_for(op, inputs)
    return infer


def _moe_infer_for(op, inputs):
    x, router = inputs[0], inputs[1]
    if x.dtype is not None and not _is_float(x.dtype):
        raise ShapeError(f"{op}: input must be float32, float16 or bfloat16, got {x.dtype}")
    if router is not None and router.dtype is not None and x.dtype is not None and \
            np.dtype(router.dtype) != np.dtype(x.dtype):
        raise ShapeError(f"{op}: router_probs is {router.dtype}, but input is {x.dtype}")
    if x.shape is not None and len(x.shape) not in (2, 3):
        raise ShapeError(f"{op}: input must be 2-D or 3-D, got shape {list(x.shape)}")
    if router is not None and router.shape is not None and len(router.shape) != 2:
        raise ShapeError(f"{op}: router_probs must be 2-D, got shape {list(router.shape)}")
    return [TensorInfo(x.dtype, x.shape)]


# --------------------------------------------------------------------------------------
# QMoE
# --------------------------------------------------------------------------------------


class _QuantProjection:
    """One quantized projection (fc1, fc2 or fc3) of every expert: N rows of K inputs."""

    def __init__(self, op, name, weights, scales, zero_points, n, k, bits, block_size,
                 num, dtype):
        self.name, self.bits = name, bits
        self.n, self.k = n, k
        if k * bits % 8:
            raise ShapeError(f"{op}: {name} rows of {k} {bits}-bit codes are not whole bytes")
        self.weights = _check_array(op, f"{name}_experts_weights", weights,
                                    (num, n, k * bits // 8), np.uint8)
        if scales is None:
            raise ShapeError(f"{op}: {name}_scales is required for integer experts")
        scales = np.asarray(scales)
        if scales.dtype != np.dtype(dtype):
            raise ShapeError(f"{op}: {name}_scales is {scales.dtype}, but input is "
                             f"{np.dtype(dtype)}")
        self.block = block_size
        if block_size:
            if k % block_size:
                raise ShapeError(f"{op}: {name}'s K = {k} is not a multiple of block_size "
                                 f"{block_size}")
            blocks = k // block_size
            self.scales = _check_array(op, f"{name}_scales", scales, (num, n, blocks), dtype)
            zshape = (num, n, -(-blocks * bits // 8))
            self.count = blocks
        else:
            self.scales = _check_array(op, f"{name}_scales", scales, (num, n), dtype)
            zshape = (num, -(-n * bits // 8))
            self.count = n
        self.zero_points = None if zero_points is None else _check_array(
            op, f"{name}_zero_points", zero_points, zshape, np.uint8)

    def dequantize(self, e):
        """Expert e's weight, float32 [N, K]."""
        codes = _unpack(self.weights[e], self.bits).astype(_F32)
        scale = self.scales[e].astype(_F32)
        if self.zero_points is None:
            zero = _F32(1 << (self.bits - 1))
        else:
            zero = _unpack(self.zero_points[e], self.bits)[..., :self.count].astype(_F32)
        if self.block:
            shape = (self.n, self.count, self.block)
            zero = zero if np.ndim(zero) == 0 else zero[:, :, None]
            w = (codes.reshape(shape) - zero) * scale[:, :, None]
            return w.reshape(self.n, self.k)
        zero = zero if np.ndim(zero) == 0 else zero[:, None]
        return (codes - zero) * scale[:, None]


def _qmoe_kernel(inputs, attrs, ctx):
    """Mixture of integer-quantized experts (see the module doc); output of input's type
    and shape.

    Raises:
        ShapeError: an input's type or shape does not fit (names it), or k > experts.
        UnsupportedOpError: a quant_type other than 'int', 3-bit or prepacked weights.
    """
    op = "QMoE"
    (x, router, w1, s1, b1, w2, s2, b2, w3, s3, b3, z1, z2, z3, mixing,
     *rest) = _padded(inputs, 21)
    _qmoe_unsupported(attrs)
    if any(r is not None for r in rest):
        raise UnsupportedOpError(f"{op}: global and activation scales (fp4 / fp8 experts) "
                                 f"are not supported")
    x = np.asarray(x)
    flat, logits, mixing = _tokens(op, x, router, mixing)
    hidden, num = flat.shape[1], logits.shape[1]
    fusion = _gate_layout(op, attrs, w3 is not None)
    bs = attrs["block_size"] if attrs["block_size"] and attrs["block_size"] > 0 else 0
    w2 = np.asarray(w2)
    bits2 = _bits(attrs, 2)
    if w2.ndim != 3 or w2.shape[:2] != (num, hidden):
        raise ShapeError(f"{op}: fc2_experts_weights of shape {list(w2.shape)} must be "
                         f"[num_experts, hidden, inter * bits / 8] = [{num}, {hidden}, ...]")
    inter = w2.shape[2] * 8 // bits2
    fc1 = _QuantProjection(op, "fc1", w1, s1, z1, fusion * inter, hidden, _bits(attrs, 1),
                           bs, num, x.dtype)
    fc2 = _QuantProjection(op, "fc2", w2, s2, z2, hidden, inter, bits2, bs, num, x.dtype)
    fc3 = None if w3 is None else _QuantProjection(op, "fc3", w3, s3, z3, inter, hidden,
                                                   _bits(attrs, 3), bs, num, x.dtype)
    if b1 is not None:
        b1 = _check_array(op, "fc1_experts_bias", b1, (num, fusion * inter), x.dtype)
    if b2 is not None:
        b2 = _check_array(op, "fc2_experts_bias", b2, (num, hidden), x.dtype)
    if b3 is not None:
        if fc3 is None:
            raise ShapeError(f"{op}: fc3_experts_bias is given without fc3_experts_weights")
        b3 = _check_array(op, "fc3_experts_bias", b3, (num, inter), x.dtype)

    def f32(a, e):
        return None if a is None else a[e].astype(_F32)

    def expert(e):
        return (fc1.dequantize(e), f32(b1, e), fc2.dequantize(e), f32(b2, e),
                None if fc3 is None else fc3.dequantize(e), f32(b3, e))

    y = _mixture(op, flat, logits, mixing, num, expert, attrs)
    return (y.reshape(x.shape).astype(x.dtype),)


# --------------------------------------------------------------------------------------
# MoEGroupRouter
# --------------------------------------------------------------------------------------


def _router_problem(attrs):
    for name in ("top_k", "n_group", "topk_group", "group_topk"):
        if attrs[name] < 1:
            return f"{name} must be positive, got {attrs[name]}"
    if attrs["topk_group"] > attrs["n_group"]:
        return f"topk_group ({attrs['topk_group']}) exceeds n_group ({attrs['n_group']})"
    return None


def _group_router_kernel(inputs, attrs, ctx):
    """MoEGroupRouter (see the module doc): (router_probs, selection_scores,
    router_weights), as many as the node declares. A node declaring more than one output
    reads the full scores (its router_probs is omitted, or onnxruntime refuses the node);
    onegraph computes the routed scores for the first position all the same.

    Raises:
        ShapeError: a type or shape does not fit (names it), the experts do not split
            into n_group groups, or top_k exceeds the experts of the groups kept.
    """
    op = "MoEGroupRouter"
    logits, bias, proj = _padded(inputs, 3)
    logits = np.asarray(logits)
    if not _is_float(logits.dtype):
        raise ShapeError(f"{op}: logits must be float32, float16 or bfloat16, got "
                         f"{logits.dtype}")
    bias = np.asarray(bias)
    if bias.dtype != np.float32 or bias.ndim != 1:
        raise ShapeError(f"{op}: expert_bias must be 1-D float32, got {bias.dtype} "
                         f"{list(bias.shape)}")
    wanted = max(1, min(3, attrs.get(NUM_OUTPUTS, 1)))
    if proj is not None:
        proj = np.asarray(proj)
        if wanted < 2:
            raise ShapeError(f"{op}: projection_weight needs the full-score outputs "
                             f"(selection_scores and router_weights)")
        if proj.dtype != logits.dtype or proj.ndim != 2 or logits.ndim != 2 or \
                proj.shape[1] != logits.shape[1]:
            raise ShapeError(f"{op}: projection_weight {proj.dtype} {list(proj.shape)} must "
                             f"be [num_experts, width] of logits' type, logits [tokens, "
                             f"width] (got {list(logits.shape)})")
        scores = logits.astype(_F32) @ proj.astype(_F32).T
    else:
        if logits.ndim == 0 or logits.shape[-1] == 0:
            raise ShapeError(f"{op}: logits must have rank 1 or more and at least one "
                             f"expert, got shape {list(logits.shape)}")
        scores = logits.reshape(-1, logits.shape[-1]).astype(_F32)
    num = scores.shape[1]
    if bias.shape[0] != num:
        raise ShapeError(f"{op}: expert_bias has {bias.shape[0]} values for {num} experts")
    with np.errstate(over="ignore"):
        s = _sigmoid(scores)
    biased = s + bias
    n_group, top_k = attrs["n_group"], attrs["top_k"]
    if num % n_group:
        raise ShapeError(f"{op}: {num} experts do not split into n_group = {n_group} groups")
    size = num // n_group
    keep = attrs["topk_group"]
    if top_k > keep * size:
        raise ShapeError(f"{op}: top_k = {top_k} exceeds the {keep * size} experts of the "
                         f"topk_group = {keep} groups kept")
    tokens = biased.shape[0]
    grouped = biased.reshape(tokens, n_group, size)
    best = -np.sort(-grouped, axis=2)[:, :, :min(attrs["group_topk"], size)].sum(axis=2)
    chosen = np.argsort(-best, axis=1, kind="stable")[:, :keep]
    allowed = np.zeros((tokens, n_group), bool)
    np.put_along_axis(allowed, chosen, True, axis=1)
    masked = np.where(np.repeat(allowed, size, axis=1), biased, -np.inf)
    picked = np.argsort(-masked, axis=1, kind="stable")[:, :top_k]
    out = np.full((tokens, num), _F32(attrs["router_sentinel"]), _F32)
    with np.errstate(divide="ignore"):
        values = np.log(np.maximum(np.take_along_axis(s, picked, axis=1), _F32(1e-20)))
    np.put_along_axis(out, picked, values, axis=1)
    return (out.astype(logits.dtype), biased, s)[:wanted]


def _group_router_infer(attrs, inputs):
    logits, bias, proj = _padded(inputs, 3)
    dtype = logits.dtype
    num = None
    if bias is not None and bias.shape is not None and len(bias.shape) == 1:
        num = bias.shape[0]
    tokens = None
    if logits.shape is not None and None not in logits.shape and logits.shape:
        tokens = int(np.prod(logits.shape[:-1], dtype=np.int64))
    shape = (tokens, num)
    return [TensorInfo(dtype, shape), TensorInfo(np.dtype(np.float32), shape),
            TensorInfo(np.dtype(np.float32), shape)]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

OPS = (
    define("MoE", ("input", "router_probs", "fc1_experts_weights", "fc1_experts_bias?",
                   "fc2_experts_weights", "fc2_experts_bias?", "fc3_experts_weights?",
                   "fc3_experts_bias?"), ("output",),
           _moe_kernel, _MOE_ATTRS, infer=_moe_infer("MoE"), domain=_DOMAIN,
           dtypes=_FLOAT_NAMES, check_attrs=_moe_problem,
           doc="Mixture of experts: top-k routing over float feed-forward experts."),
    define("MoEGroupRouter", ("logits", "expert_bias", "projection_weight?"),
           ("router_probs?", "selection_scores?", "router_weights?"),
           _group_router_kernel,
           (("top_k", "int"), ("n_group", "int", 1), ("topk_group", "int", 1),
            ("group_topk", "int", 2), ("router_sentinel", "float", -10000.0)),
           infer=_group_router_infer, domain=_DOMAIN, dtypes=_FLOAT_NAMES,
           check_attrs=_router_problem,
           doc="Group-limited sigmoid MoE router (DeepSeek-V3 noaux_tc)."),
    define("QMoE", ("input", "router_probs", "fc1_experts_weights", "fc1_scales?",
                    "fc1_experts_bias?", "fc2_experts_weights", "fc2_scales?",
                    "fc2_experts_bias?", "fc3_experts_weights?", "fc3_scales?",
                    "fc3_experts_bias?", "fc1_zero_points?", "fc2_zero_points?",
                    "fc3_zero_points?", "router_weights?", "fc1_global_scale?",
                    "fc2_global_scale?", "fc1_act_scale?", "fc2_act_scale?",
                    "fc1_act_block_scale?", "fc2_act_block_scale?"), ("output",),
           _qmoe_kernel, _QMOE_ATTRS, infer=_moe_infer("QMoE"), domain=_DOMAIN,
           dtypes=_FLOAT_NAMES, check_attrs=_qmoe_problem,
           doc="Mixture of experts with 2/4/8-bit integer-quantized expert weights."),
)

KNOWN_FAILURES: dict[str, str] = {}

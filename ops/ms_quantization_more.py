"""Operators: more of onnxruntime's quantized contrib ops (domain "com.microsoft").

onnxruntime's quantization tool writes these beyond the QOperator ops of
`ops/ms_quantization.py`:

* QuantizeLinear and DequantizeLinear in com.microsoft: what `quantize_static(...,
  extra_options={"UseQDQContribOps": True})` writes for QDQ models, needed for the
  16-bit (activation_type QInt16/QUInt16) and 4-bit types older ONNX opsets lack.
  Per tensor or per axis (attribute axis, default 1); the contrib schemas have no
  block_size, so a blocked scale is refused.
* QAttention and QEmbedLayerNormalization: what `quantize_dynamic` writes for the fused
  Attention and EmbedLayerNormalization nodes of onnxruntime's transformers optimizer
  (BERT-style models).
* DynamicQuantizeLSTM: what `quantize_dynamic` writes for an LSTM (8-bit W and R,
  transposed to (directions, input, 4 * hidden); X and each step's H quantized to uint8
  at run time).
* QLinearWhere, MatMulInteger16, and QLinearConv in com.microsoft (its channels_last
  variant, which onnxruntime's NHWC transformer puts in the graphs it optimizes).

Inputs (with the optional ones), attributes and defaults follow onnxruntime's op schemas.
Arithmetic follows onnxruntime's CPU kernels (float32 steps in its order), so integer
results match it bit for bit in the tests; the float results of QAttention,
QEmbedLayerNormalization and DynamicQuantizeLSTM match to float32 rounding.
Quantize/dequantize, dynamic quantization and the exact integer GEMMs are
`ops/quantization.py`'s; QAttention's attention is `ops/ms_transformer.py`'s;
DynamicQuantizeLSTM's activations are `ops/rnn.py`'s.

Refused by name: QAttention's past input, do_rotary and past_present_share_buffer, int8
`input` and float16 (onnxruntime has CPU kernels for uint8 input and float32 only);
blocked scales of QuantizeLinear/DequantizeLinear; DynamicQuantizeLSTM's sequence_lens
shorter than the sequence, and weight zero points onnxruntime refuses (nonzero int8,
uint8 that differ between columns) and clip <= 0; QAttention's 1-D mask_index with a
negative end position; QEmbedLayerNormalization's epsilon below 0, and
QLinearConv type combinations and attributes onnxruntime refuses (pads of another length,
dilations with auto_pad SAME_*, a window longer than the padded input) or whose buffers
would pass 2 GiB (see `ops/ms_fused.py`); its auto_pad SAME_* follows onnxruntime where a
stride longer than the kernel makes the padding negative. QAttention reads unidirectional
and mask_index as onnxruntime does: causal only for unidirectional=1, a future key
getting the lowest float32 whatever mask_filter_value is (which fills the key padding
mask only), a key masked where its (2-D or 3-D) mask value is <= 0. Not here
because onnxruntime 1.32 has no CPU kernel for them: QLinearReduceMean and
ReduceSumInteger. MaxpoolWithMask (an internal op no quantization tool writes) is in
ops/ms_maxpool_mask.py.

Where onnxruntime's own result is not a function of the model alone, onegraph picks
one: its DynamicQuantizeLSTM on more than one thread quantizes H_{t-1} per chunk of
ceil(batch / threads) rows; onegraph quantizes the batch's rows together, as onnxruntime
does on one thread.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .common import broadcast_shape
from .ms_fused import check_window, ort_same_padding
from .ms_matmul_nbits import _eight_bit
from .ms_quantization import _look_up, _table, _zero_point
from .ms_transformer import _causal, _heads, _ids, _key_padding, _mask_index, _sdpa
from .normalization import _layernorm_kernel
from .quantization import (_conv_int, _conv_shape, _dynamic_quantize_kernel,
                           _quantize_values, _shift_cols, _shift_rows, _single, dequantize,
                           quantize)
from .registry import NUM_OUTPUTS, TensorInfo, define
from .rnn import _activations, _clipper

_DOMAIN = "com.microsoft"
_F32 = np.float32
_EIGHT_BIT = (np.dtype(np.uint8), np.dtype(np.int8))


def _padded(inputs, n):
    """The kernel's inputs as a list of n, None for omitted trailing optional ones."""
    return list(inputs) + [None] * (n - len(inputs))


def _sub_byte(name):
    """The ml_dtypes dtype `name` (int4, uint4)."""
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, name))


def _q_types():
    """Integer types the contrib QuantizeLinear writes (its T2)."""
    return (np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int16),
            np.dtype(np.uint16), _sub_byte("int4"), _sub_byte("uint4"))


def _dq_types():
    """Integer types the contrib DequantizeLinear reads (its T1): QuantizeLinear's and
    int32."""
    return _q_types() + (np.dtype(np.int32),)


def _scalar(p, op, what):
    """A per-tensor parameter as a 0-d array; ShapeError unless it holds one value."""
    if p is None:
        raise ShapeError(f"{op}: {what} is required")
    return _single(p, op, what)


def _f32_scale(s, op, what):
    """A one-value float32 scale as a 0-d float32 array (the ops' tensor(float))."""
    s = np.asarray(_scalar(s, op, what))
    if s.dtype != np.float32:
        raise ShapeError(f"{op}: {what} must be float32, got {s.dtype}")
    return s


# --------------------------------------------------------------------------------------
# QuantizeLinear, DequantizeLinear (com.microsoft)
# --------------------------------------------------------------------------------------


def _qdq_params(op, x_shape, scale, zp, axis):
    """Check a contrib Q/DQ scale and zero point against x; returns the axis to pass to
    the shared helpers (per tensor: any; per axis: `axis` made non-negative).

    Raises:
        ShapeError: scale or zero point neither one value nor a vector along `axis`, or
            the two of different shapes.
        OpAttributeError: axis out of range for a per-axis scale.
    """
    scale = np.asarray(scale)
    if zp is not None and np.shape(zp) != scale.shape and \
            not (np.size(zp) == 1 and scale.size == 1):
        raise ShapeError(f"{op}: zero point of shape {list(np.shape(zp))} and scale of "
                         f"shape {list(scale.shape)} must have one shape")
    if scale.size == 1 and scale.ndim <= 1:
        return 1
    rank = len(x_shape)
    if scale.ndim != 1:
        raise ShapeError(f"{op}: scale of shape {list(scale.shape)} must be one value or a "
                         "1-D vector along axis (com.microsoft's Q/DQ have no block_size: "
                         "blocked scales are not supported)")
    if not -rank <= axis < rank:
        raise OpAttributeError(f"{op}: axis {axis} is out of range for an input of rank "
                               f"{rank}")
    axis %= rank
    if scale.shape[0] != x_shape[axis]:
        raise ShapeError(f"{op}: per-axis scale of {scale.shape[0]} values does not match "
                         f"the input's dim {x_shape[axis]} on axis {axis}")
    return axis


def _ms_quantize_kernel(inputs, attrs, ctx):
    """y = saturate(rint(x / y_scale) + y_zero_point), per tensor or along `axis`, into
    y_zero_point's type (uint8 without one). x and y_scale float32 or float16 (one type):
    the division is done in float32, as onnxruntime's kernel does."""
    op = "QuantizeLinear"
    x, scale, zp = _padded(inputs, 3)
    x = np.asarray(x)
    scale = np.asarray(scale)
    if x.dtype not in (np.float32, np.float16):
        raise ShapeError(f"{op}: x must be float32 or float16, got {x.dtype}")
    if scale.dtype != x.dtype:
        raise ShapeError(f"{op}: y_scale is {scale.dtype}, but x is {x.dtype}")
    dtype = np.dtype(np.uint8) if zp is None else np.asarray(zp).dtype
    if dtype not in _q_types():
        raise ShapeError(f"{op}: y_zero_point must be int8, uint8, int16, uint16, int4 or "
                         f"uint4, got {dtype}")
    axis = _qdq_params(op, x.shape, scale, zp, int(attrs["axis"]))
    return (quantize(x, scale, zp, dtype, axis, 0, 1, precision=np.float32),)


def _ms_quantize_infer(attrs, inputs):
    """Output: x's shape, y_zero_point's type (uint8 without one)."""
    zp = inputs[2] if len(inputs) > 2 else None
    dtype = np.dtype(np.uint8) if zp is None else zp.dtype
    return [TensorInfo(dtype, inputs[0].shape)]


def _ms_dequantize_kernel(inputs, attrs, ctx):
    """y = (x - x_zero_point) * x_scale, per tensor or along `axis`, in x_scale's type
    (float32 or float16, computed in float32 and rounded once)."""
    op = "DequantizeLinear"
    x, scale, zp = _padded(inputs, 3)
    x = np.asarray(x)
    scale = np.asarray(scale)
    if x.dtype not in _dq_types():
        raise ShapeError(f"{op}: x must be int8, uint8, int16, uint16, int32, int4 or "
                         f"uint4, got {x.dtype}")
    if scale.dtype not in (np.float32, np.float16):
        raise ShapeError(f"{op}: x_scale must be float32 or float16, got {scale.dtype}")
    if zp is not None and np.asarray(zp).dtype != x.dtype:
        raise ShapeError(f"{op}: x_zero_point is {np.asarray(zp).dtype}, but x is "
                         f"{x.dtype}")
    axis = _qdq_params(op, x.shape, scale, zp, int(attrs["axis"]))
    # (np.asarray: a 0-d x must give a 0-d array, not a numpy scalar)
    return (np.asarray(dequantize(x, scale, zp, scale.dtype, axis, 0)),)


def _ms_dequantize_infer(attrs, inputs):
    """Output: x's shape, x_scale's type."""
    return [TensorInfo(inputs[1].dtype, inputs[0].shape)]


# --------------------------------------------------------------------------------------
# QAttention
# --------------------------------------------------------------------------------------


def _per_column_param(p, n, op, what):
    """QAttention's weight scale or zero point: one value, or one per column of weight
    (n = 3 * hidden), as a 0-d array or an (n,) vector."""
    p = np.asarray(p)
    if p.size == 1 and p.ndim <= 1:
        return p.reshape(())
    if p.shape == (n,):
        return p
    raise ShapeError(f"{op}: {what} of shape {list(p.shape)} must be one value or a "
                     f"vector of weight's {n} columns")


def _qattention_refusals(attrs, past):
    """Refuse what is not implemented (past, do_rotary, past_present_share_buffer);
    returns num_heads, checked positive."""
    op = "QAttention"
    for name in ("do_rotary", "past_present_share_buffer"):
        if attrs[name]:
            raise UnsupportedOpError(f"{op}: {name}={attrs[name]} is not supported")
    if past is not None:
        raise UnsupportedOpError(f"{op}: the past input (key/value cache) is not supported")
    heads = int(attrs["num_heads"])
    if heads <= 0:
        raise OpAttributeError(f"{op}: num_heads must be positive, got {heads}")
    return heads


def _qattention_kernel(inputs, attrs, ctx):
    """onnxruntime's QAttention: QKV = (input - input_zp) @ (weight - weight_zp) as an
    exact integer GEMM, then float32(acc) * (input_scale * weight_scale) + bias in
    float32 (MLAS's scale-bias output step; weight's scale and zero point per tensor or
    per column), split into equal Q, K, V of num_heads heads, and
    softmax(scale Q K^T, masked) V as the float Attention op computes it;
    `present` = stack(K, V) (2, batch, heads, seq, head_size)."""
    op = "QAttention"
    x, w, bias, x_scale, w_scale, mask, x_zp, w_zp, past = _padded(inputs, 9)
    heads = _qattention_refusals(attrs, past)
    x = _eight_bit(x, op, "input")
    if x.dtype != np.uint8:
        raise UnsupportedOpError(f"{op}: int8 input is not supported (onnxruntime's CPU "
                                 "kernel takes uint8)")
    w = _eight_bit(w, op, "weight")
    bias = np.asarray(bias)
    if bias.dtype != np.float32:
        raise UnsupportedOpError(f"{op}: {bias.dtype} bias is not supported (float32 only, "
                                 "as onnxruntime's CPU kernel)")
    if x.ndim != 3 or w.ndim != 2 or w.shape[0] != x.shape[2]:
        raise ShapeError(f"{op}: input must be (batch, seq, input_hidden) and weight "
                         f"(input_hidden, 3 * hidden), got {list(x.shape)} and "
                         f"{list(w.shape)}")
    n = w.shape[1]
    hidden = n // 3
    if n % 3 or hidden % heads or hidden == 0:
        raise ShapeError(f"{op}: weight's {n} columns must be 3 * hidden with hidden a "
                         f"nonzero multiple of num_heads {heads}")
    if bias.shape != (n,):
        raise ShapeError(f"{op}: bias must be 1-D of {n} values, got {list(bias.shape)}")
    sx = _f32_scale(x_scale, op, "input_scale")
    ws = np.asarray(w_scale)
    if ws.dtype != np.float32:
        raise ShapeError(f"{op}: weight_scale must be float32, got {ws.dtype}")
    ws = _per_column_param(ws, n, op, "weight_scale")
    zx = _zero_point(x_zp, x.dtype, op, "input_zero_point")
    zw = None
    if w_zp is not None:
        if np.asarray(w_zp).dtype != w.dtype:
            raise ShapeError(f"{op}: weight_zero_point is {np.asarray(w_zp).dtype}, but "
                             f"weight is {w.dtype}")
        zw = _per_column_param(w_zp, n, op, "weight_zero_point")
    batch, seq = x.shape[:2]
    acc = np.rint(np.matmul(_shift_rows(x, zx, op, "input_zero_point", "input"),
                            _shift_cols(w, zw, op, "weight_zero_point", "weight")))
    dequant = (ws.astype(_F32) * sx).astype(_F32)
    qkv = acc.astype(_F32) * dequant + bias
    q, k, v = np.split(qkv, 3, axis=2)
    q, k, v = (_heads(t, heads, op, name) for t, name in ((q, "Q"), (k, "K"), (v, "V")))
    scale = attrs["scale"]
    scale = 1.0 / math.sqrt(hidden // heads) if not scale else float(scale)
    if mask is not None and np.ndim(mask) == 1 and np.asarray(mask).dtype == np.int32 \
            and np.any(np.asarray(mask) < 0):
        raise ShapeError(f"{op}: mask_index end positions must not be negative, got "
                         f"{np.asarray(mask).tolist()} (as onnxruntime requires)")
    try:
        allowed = _key_padding("Attention", mask, batch, seq, seq, "mask_index",
                               _causal(attrs))
    except (ShapeError, UnsupportedOpError) as e:
        raise type(e)(f"{op}: {str(e).split(': ', 1)[-1]}") from e
    # _sdpa masks as onnxruntime: keys whose mask value is > 0 are allowed, causal when
    # unidirectional == 1, a future key gets the lowest float32 whatever
    # mask_filter_value is
    y = _sdpa(op, q, k, v, scale, allowed, None, attrs).astype(_F32, copy=False)
    if attrs.get(NUM_OUTPUTS, 1) < 2:
        return (y,)
    return (y, np.stack([k, v]).astype(_F32, copy=False))


def _qattention_infer(attrs, inputs):
    """output (batch, seq, hidden) and present (2, batch, heads, seq, head_size), float32."""
    op = "QAttention"
    heads = _qattention_refusals(attrs, inputs[8] if len(inputs) > 8 else None)
    x, w = inputs[0], inputs[1]
    f32 = np.dtype(np.float32)
    if x.shape is None or w.shape is None:
        return [TensorInfo(f32, None), TensorInfo(f32, None)]
    if len(x.shape) != 3 or len(w.shape) != 2:
        raise ShapeError(f"{op}: input must be 3-D and weight 2-D, got {list(x.shape)} and "
                         f"{list(w.shape)}")
    if w.shape[1] is None:
        return [TensorInfo(f32, None), TensorInfo(f32, None)]
    hidden = w.shape[1] // 3
    batch, seq = x.shape[:2]
    return [TensorInfo(f32, (batch, seq, hidden)),
            TensorInfo(f32, (2, batch, heads, seq, hidden // heads))]


# --------------------------------------------------------------------------------------
# QEmbedLayerNormalization
# --------------------------------------------------------------------------------------


def _quantized_table(t, scale, zp, op, what, ndim, hidden=None):
    """A quantized table (2-D embedding or 1-D gamma/beta) with its one-value float32
    scale and zero point of the table's type, checked."""
    t = _eight_bit(t, op, what)
    if t.ndim != ndim or (hidden is not None and t.shape[-1] != hidden):
        want = "(rows, hidden)" if ndim == 2 else f"({hidden},)"
        raise ShapeError(f"{op}: {what} must be {want}, got {list(t.shape)}")
    s = _f32_scale(scale, op, f"{what}'s scale")
    if zp is None:
        raise ShapeError(f"{op}: {what}'s zero point is required")
    return t, s, _zero_point(zp, t.dtype, op, f"{what}'s zero point")


def _check_epsilon(attrs):
    """check_attrs of QEmbedLayerNormalization: epsilon >= 0 (onnxruntime refuses the
    node otherwise; a NaN too)."""
    eps = float(attrs["epsilon"])
    return None if eps >= 0 else f"epsilon must be >= 0, got {eps}"


def _qembed_kernel(inputs, attrs, ctx):
    """onnxruntime's QEmbedLayerNormalization: the rows of word_embedding[input_ids],
    position_embedding[0..seq-1] and segment_embedding[segment_ids] dequantized
    ((q - zp) * scale, float32) and summed, LayerNorm over hidden with the dequantized
    gamma and beta and epsilon; mask_index_out = the number of mask values equal to 1 per
    row (zeros without a mask)."""
    op = "QEmbedLayerNormalization"
    (ids, seg_ids, word, pos, seg, gamma, beta, mask, word_s, pos_s, seg_s, gamma_s,
     beta_s, word_z, pos_z, seg_z, gamma_z, beta_z) = _padded(inputs, 18)
    word, word_s, word_z = _quantized_table(word, word_s, word_z, op, "word_embedding", 2)
    hidden = word.shape[1]
    dtype = word.dtype
    pos, pos_s, pos_z = _quantized_table(pos, pos_s, pos_z, op, "position_embedding", 2,
                                         hidden)
    gamma, gamma_s, gamma_z = _quantized_table(gamma, gamma_s, gamma_z, op, "gamma", 1,
                                               hidden)
    beta, beta_s, beta_z = _quantized_table(beta, beta_s, beta_z, op, "beta", 1, hidden)
    for t, what in ((pos, "position_embedding"), (gamma, "gamma"), (beta, "beta")):
        if t.dtype != dtype:
            raise ShapeError(f"{op}: {what} is {t.dtype}, but word_embedding is {dtype}")
    ids = _ids(ids, op, "input_ids", word.shape[0])
    if ids.ndim != 2:
        raise ShapeError(f"{op}: input_ids must be (batch, seq), got {list(ids.shape)}")
    batch, seq = ids.shape
    if seq > pos.shape[0]:
        raise ShapeError(f"{op}: sequence length {seq} exceeds position_embedding's "
                         f"{pos.shape[0]} rows")
    s = dequantize(word[ids], word_s, word_z, _F32) + \
        dequantize(pos[:seq], pos_s, pos_z, _F32)
    if (seg is None) != (seg_ids is None):
        raise ShapeError(f"{op}: segment_ids and segment_embedding must be given together")
    if seg is not None:
        seg, seg_s, seg_z = _quantized_table(seg, seg_s, seg_z, op, "segment_embedding", 2,
                                             hidden)
        if seg.dtype != dtype:
            raise ShapeError(f"{op}: segment_embedding is {seg.dtype}, but word_embedding "
                             f"is {dtype}")
        sid = _ids(seg_ids, op, "segment_ids", seg.shape[0])
        if sid.shape != ids.shape:
            raise ShapeError(f"{op}: segment_ids {list(sid.shape)} must have input_ids' "
                             f"shape {list(ids.shape)}")
        s = s + dequantize(seg[sid], seg_s, seg_z, _F32)
    g = dequantize(gamma, gamma_s, gamma_z, _F32)
    b = dequantize(beta, beta_s, beta_z, _F32)
    y = _layernorm_kernel([s, g, b], {"axis": -1, "epsilon": attrs["epsilon"],
                                      "stash_type": 1}, ctx)[0].astype(_F32, copy=False)
    return (y, _mask_index(op, mask, ids.shape))


def _qembed_infer(attrs, inputs):
    """layernorm_out (batch, seq, hidden) float32 and mask_index_out (batch,) int32."""
    op = "QEmbedLayerNormalization"
    ids, word = inputs[0], inputs[2]
    if ids.dtype is not None and np.dtype(ids.dtype) != np.int32:
        raise ShapeError(f"{op}: input_ids must be int32, got {ids.dtype}")
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    if ids.shape is None:
        return [TensorInfo(f32, None), TensorInfo(i32, None)]
    if len(ids.shape) != 2:
        raise ShapeError(f"{op}: input_ids must be (batch, seq), got {list(ids.shape)}")
    hidden = word.shape[1] if word.shape is not None and len(word.shape) == 2 else None
    batch, seq = ids.shape
    return [TensorInfo(f32, (batch, seq, hidden)), TensorInfo(i32, (batch,))]


# --------------------------------------------------------------------------------------
# QLinearWhere
# --------------------------------------------------------------------------------------


def _requantized(x, xs, xz, zs, zz):
    """x requantized from (xs, xz) to (zs, zz) through onnxruntime's 256-entry table
    (dequantize in float32, quantize as rint(v / z_scale) + z_zp), or x itself when the
    parameters are the same."""
    if xs == zs and xz == zz:
        return x
    return _look_up(_table(x.dtype, xs, xz, zs, zz, lambda v: v), x)


def _qlinear_where_kernel(inputs, attrs, ctx):
    """Z = where(condition, X, Y), X and Y requantized to Z's scale and zero point (each
    through a 256-entry table, or copied when its parameters are Z's, as onnxruntime
    does); numpy broadcasting of the three."""
    op = "QLinearWhere"
    cond, x, xs, xz, y, ys, yz, zs, zz = _padded(inputs, 9)
    cond = np.asarray(cond)
    if cond.dtype != np.bool_:
        raise ShapeError(f"{op}: condition must be bool, got {cond.dtype}")
    x = _eight_bit(x, op, "X")
    y = _eight_bit(y, op, "Y")
    if y.dtype != x.dtype:
        raise ShapeError(f"{op}: X and Y must have one type, got {x.dtype} and {y.dtype}")
    params = []
    for p, what in ((xs, "x_scale"), (ys, "y_scale"), (zs, "z_scale")):
        params.append(_f32_scale(p, op, what))
    zps = []
    for p, what in ((xz, "x_zero_point"), (yz, "y_zero_point"), (zz, "z_zero_point")):
        if p is None:
            raise ShapeError(f"{op}: {what} is required")
        zps.append(_zero_point(p, x.dtype, op, what))
    shape = broadcast_shape(cond.shape, x.shape, y.shape, where=f"{op}: ")
    xq = _requantized(x, params[0], zps[0], params[2], zps[2])
    yq = _requantized(y, params[1], zps[1], params[2], zps[2])
    return (np.where(np.broadcast_to(cond, shape), xq, yq).astype(x.dtype, copy=False),)


def _qlinear_where_infer(attrs, inputs):
    """Z: X's type, the broadcast shape of condition, X and Y."""
    op = "QLinearWhere"
    c, x, y = inputs[0], inputs[1], inputs[4]
    if x.dtype is not None and y.dtype is not None and np.dtype(x.dtype) != np.dtype(y.dtype):
        raise ShapeError(f"{op}: X and Y must have one type, got {x.dtype} and {y.dtype}")
    return [TensorInfo(x.dtype, broadcast_shape(c.shape, x.shape, y.shape,
                                                where=f"{op}: "))]


# --------------------------------------------------------------------------------------
# MatMulInteger16
# --------------------------------------------------------------------------------------


def _matmul_integer16_kernel(inputs, attrs, ctx):
    """Y = A @ B for int16 A and B (ONNX MatMul shapes), int32 Y. The products are summed
    exactly in int64 and wrapped to int32, as onnxruntime's int32 accumulation wraps."""
    op = "MatMulInteger16"
    a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
    for t, what in ((a, "A"), (b, "B")):
        if t.dtype != np.int16:
            raise UnsupportedOpError(f"{op}: {what} must be int16 (onnxruntime's CPU kernel "
                                     f"takes int16 only), got {t.dtype}")
        if t.ndim == 0:
            raise ShapeError(f"{op}: {what} must have rank 1 or more, got a scalar")
    try:
        y = np.matmul(a.astype(np.int64), b.astype(np.int64))
    except ValueError as e:
        raise ShapeError(f"{op}: A {list(a.shape)} and B {list(b.shape)} do not fit a "
                         f"matmul ({e})") from e
    # (np.asarray: 1-D @ 1-D gives a numpy scalar; the output is a 0-d array)
    return (np.asarray(y.astype(np.int32)),)


def _matmul_integer16_infer(attrs, inputs):
    """Y: int32, ONNX MatMul's shape."""
    # (linalg's MatMul rule: quantization's takes the larger of a 0 and a 1 batch dim)
    from .linalg import _matmul_infer

    a, b = inputs[0], inputs[1]
    try:
        (y,) = _matmul_infer({}, [a, b])
    except ShapeError as e:
        raise ShapeError(f"MatMulInteger16: {e}") from e
    return [TensorInfo(np.dtype(np.int32), y.shape)]


# --------------------------------------------------------------------------------------
# QLinearConv (com.microsoft, channels_last)
# --------------------------------------------------------------------------------------


def _ms_qlinear_conv_kernel(inputs, attrs, ctx):
    """onnxruntime's QLinearConv (com.microsoft): NCHW, or NHWC with channels_last=1 (x
    and y channels last; w stays (M, C/group, *kernel)). The exact integer convolution
    plus the int32 bias (wrapping in int32 as onnxruntime's accumulator), converted to
    float32 and times the float32 multiplier x_scale * w_scale / y_scale (per output
    channel for a per-channel w_scale), rounded half to even, plus y_zero_point,
    saturated: onnxruntime's requantization."""
    op = "QLinearConv"
    x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias = _padded(inputs, 9)
    x = _eight_bit(x, op, "x")
    w = _eight_bit(w, op, "w")
    if y_zp is None or x_zp is None or w_zp is None:
        raise ShapeError(f"{op}: x_zero_point, w_zero_point and y_zero_point are required")
    y_zp = _zero_point(y_zp, _eight_bit(y_zp, op, "y_zero_point").dtype, op, "y_zero_point")
    zx = _zero_point(x_zp, x.dtype, op, "x_zero_point")
    w_zp = np.asarray(w_zp)
    if w_zp.dtype != w.dtype:
        raise ShapeError(f"{op}: w_zero_point is {w_zp.dtype}, but w is {w.dtype}")
    if y_zp.dtype != x.dtype or (x.dtype == np.int8 and w.dtype != np.int8):
        # onnxruntime's kernels: uint8 x with uint8 or int8 w, int8 x with int8 w; y as x
        raise UnsupportedOpError(f"{op}: x {x.dtype}, w {w.dtype} and y {y_zp.dtype} is not "
                                 "a supported combination (uint8 x, uint8 or int8 w, uint8 "
                                 "y; int8 x, w and y)")
    if x.ndim < 3 or w.ndim != x.ndim:
        raise ShapeError(f"{op}: x and w must have one rank of 3 or more, got "
                         f"{list(x.shape)} and {list(w.shape)}")
    m = w.shape[0]
    ws = np.asarray(w_scale)
    if ws.dtype != np.float32:
        raise ShapeError(f"{op}: w_scale must be float32, got {ws.dtype}")
    for p, what in ((ws, "w_scale"), (w_zp, "w_zero_point")):
        if p.size != 1 and p.shape != (m,):
            raise ShapeError(f"{op}: {what} of shape {list(p.shape)} must be one value or "
                             f"one per output channel ({m})")
    last = bool(attrs["channels_last"])
    xc = np.moveaxis(x, -1, 1) if last else x
    # the integer convolution runs in float64 (exact sums)
    kernel = attrs.get("kernel_shape") or w.shape[2:]
    check_window(op, xc.shape, kernel, attrs, m, 8, conv=True)
    xc, attrs = ort_same_padding(xc, kernel, attrs, conv=True)
    try:
        acc = _conv_int(xc, w, zx, w_zp, attrs)
    except (ShapeError, OpAttributeError) as e:
        raise type(e)(f"{op}: {e}") from e
    nsp = acc.ndim - 2
    if bias is not None:
        bias = np.asarray(bias)
        if bias.dtype != np.int32 or bias.shape != (m,):
            raise ShapeError(f"{op}: B must be int32 of shape [{m}], got {bias.dtype} "
                             f"{list(bias.shape)}")
        # onnxruntime adds the bias to its int32 accumulator, which wraps (a fuzzed bias
        # of 2**31 - 1 gave 255 here and 0 there); the exact sums fit int64
        acc = acc.astype(np.int64) + bias.astype(np.int64).reshape((m,) + (1,) * nsp)
        acc = ((acc + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.float64)
    sx = _f32_scale(x_scale, op, "x_scale")
    sy = _f32_scale(y_scale, op, "y_scale")
    # a zero y_scale gives +-inf (saturated) or NaN (0 * inf, the type's minimum), as the
    # shared quantizer treats them
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mult = (sx * ws.astype(_F32).reshape(-1)) / sy
        mult = mult.reshape(()) if mult.size == 1 else mult.reshape((m,) + (1,) * nsp)
        v = acc.astype(_F32) * mult
    y = _quantize_values(v.astype(np.float64) + float(y_zp), y_zp.dtype, 1)
    return (np.ascontiguousarray(np.moveaxis(y, 1, -1)) if last else y,)


def _ms_qlinear_conv_infer(attrs, inputs):
    """y: y_zero_point's type, Conv's output shape (channels last when asked)."""
    op = "QLinearConv"
    x, w, y_zp = inputs[0], inputs[3], _padded(inputs, 9)[7]
    if y_zp is None:
        raise ShapeError(f"{op}: y_zero_point is required")
    if x.shape is None:
        return [TensorInfo(y_zp.dtype, None)]
    if len(x.shape) < 3 or (w.shape is not None and len(w.shape) != len(x.shape)):
        raise ShapeError(f"{op}: x and w must have one rank of 3 or more, got "
                         f"{list(x.shape)} and {None if w.shape is None else list(w.shape)}")
    last = bool(attrs["channels_last"])
    shape = tuple(x.shape)
    first = (shape[0], shape[-1]) + shape[1:-1] if last else shape
    try:
        out = _conv_shape(TensorInfo(x.dtype, first), w, attrs)
    except (ShapeError, OpAttributeError) as e:
        raise type(e)(f"{op}: {e}") from e
    if last and out is not None:
        out = (out[0],) + tuple(out[2:]) + (out[1],)
    return [TensorInfo(y_zp.dtype, out)]


# --------------------------------------------------------------------------------------
# DynamicQuantizeLSTM
# --------------------------------------------------------------------------------------


def _dynamic_gemm(a, w_shifted, w_scale):
    """onnxruntime's quantized RNN GEMM: a (M, K) float32 quantized to uint8 over all its
    values at once (DynamicQuantizeLinear's arithmetic: range including 0, scale =
    range / 255, zero point rint(-min / scale)), the exact integer product with the
    zero-point-shifted weights w_shifted (K, N) (float64), then float32(acc) times the
    float32 multiplier a_scale * w_scale (w_scale one value or per column)."""
    q, a_scale, a_zp = _dynamic_quantize_kernel([a], {}, None)
    acc = np.rint(np.matmul(q.astype(np.float64) - float(a_zp), w_shifted))
    return acc.astype(_F32) * (_F32(a_scale) * w_scale).astype(_F32)


def _lstm_weight(t, scale, zp, rows, hs, nd, op, what):
    """One quantized LSTM weight (W or R, (nd, rows, 4 hs)) with its scale and zero
    point, checked as onnxruntime checks them; returns per direction the shifted
    weight (float64) and the float32 scale (one value or per column)."""
    t = _eight_bit(t, op, what)
    if t.shape != (nd, rows, 4 * hs):
        raise ShapeError(f"{op}: {what} must have shape {[nd, rows, 4 * hs]}, got "
                         f"{list(t.shape)}")
    scale = np.asarray(scale)
    if scale.dtype != np.float32:
        raise ShapeError(f"{op}: {what}_scale must be float32, got {scale.dtype}")
    zp = np.asarray(zp)
    if zp.dtype != t.dtype:
        raise ShapeError(f"{op}: {what}_zero_point is {zp.dtype}, but {what} is {t.dtype}")
    for p, name in ((scale, "scale"), (zp, "zero_point")):
        if p.shape not in ((nd,), (nd, 4 * hs)):
            raise ShapeError(f"{op}: {what}_{name} of shape {list(p.shape)} must be "
                             f"{[nd]} (per tensor) or {[nd, 4 * hs]} (per column)")
    zp = zp.reshape(nd, -1)
    # the GEMM takes one zero point per direction: onnxruntime requires int8 ones to be
    # 0 and uint8 ones to be the same for every column
    if zp.dtype == np.int8 and zp.any():
        raise ShapeError(f"{op}: {what}_zero_point must be zero for int8 {what}")
    if (zp != zp[:, :1]).any():
        raise ShapeError(f"{op}: {what}_zero_point must be the same for every column")
    scale = scale.reshape(nd, -1).astype(_F32)
    return [(t[d].astype(np.float64) - float(zp[d, 0]),
             scale[d, 0] if scale.shape[1] == 1 else scale[d]) for d in range(nd)]


def _dq_lstm_state(v, nd, batch, hs, op, what):
    """initial_h / initial_c (nd, batch, hs) float32, zeros when omitted."""
    if v is None:
        return np.zeros((nd, batch, hs), _F32)
    v = np.asarray(v)
    if v.dtype != np.float32 or v.shape != (nd, batch, hs):
        raise ShapeError(f"{op}: {what} must be float32 of shape {[nd, batch, hs]}, got "
                         f"{v.dtype} {list(v.shape)}")
    return v


def _check_clip(attrs):
    """check_attrs of DynamicQuantizeLSTM: clip, when given, above 0 (onnxruntime refuses
    the node otherwise)."""
    clip = attrs["clip"]
    if clip is not None and not float(clip) > 0:
        return f"clip must be above 0, got {float(clip)}"
    return None


def _dq_lstm_kernel(inputs, attrs, ctx):
    """onnxruntime's DynamicQuantizeLSTM: ONNX LSTM (gates i, o, f, c; peepholes, clip,
    input_forget, activations) whose W (nd, input, 4H) and R (nd, H, 4H) are 8-bit,
    transposed against LSTM's. As onnxruntime computes it, per direction: X (all steps
    at once) and, at each step, H_{t-1} (the batch's rows) are quantized dynamically to
    uint8 (`_dynamic_gemm`), multiplied exactly with the shifted weights and scaled;
    the biases Wb + Rb are added after the two GEMMs. sequence_lens shorter than the
    sequence are refused (the quantization range then depends on onnxruntime's
    reversed-padding layout)."""
    op = "DynamicQuantizeLSTM"
    (x, w, r, bias, seq_lens, init_h, init_c, peep, w_scale, w_zp, r_scale,
     r_zp) = _padded(inputs, 12)
    x = np.asarray(x)
    if x.dtype != np.float32 or x.ndim != 3:
        raise ShapeError(f"{op}: X must be float32 (seq, batch, input), got {x.dtype} "
                         f"{list(x.shape)}")
    direction = attrs["direction"]
    if isinstance(direction, bytes):
        direction = direction.decode()
    if direction not in ("forward", "reverse", "bidirectional"):
        raise OpAttributeError(f"{op}: direction must be forward, reverse or "
                               f"bidirectional, got {direction!r}")
    nd = 2 if direction == "bidirectional" else 1
    t_len, batch, in_size = x.shape
    r_arr = np.asarray(r)
    hs = attrs["hidden_size"]
    hs = int(hs) if hs is not None else (r_arr.shape[1] if r_arr.ndim == 3 else 0)
    if hs <= 0:
        raise OpAttributeError(f"{op}: hidden_size must be positive, got {hs}")
    ws = _lstm_weight(w, w_scale, w_zp, in_size, hs, nd, op, "W")
    rs = _lstm_weight(r, r_scale, r_zp, hs, hs, nd, op, "R")
    if seq_lens is not None:
        lens = np.asarray(seq_lens)
        if lens.shape != (batch,) or (lens != t_len).any():
            raise UnsupportedOpError(f"{op}: sequence_lens other than the full sequence "
                                     f"length {t_len} for every batch entry are not "
                                     "supported")
    b = np.zeros((nd, 4 * hs), _F32)
    if bias is not None:
        bias = np.asarray(bias)
        if bias.dtype != np.float32 or bias.shape != (nd, 8 * hs):
            raise ShapeError(f"{op}: B must be float32 of shape {[nd, 8 * hs]}, got "
                             f"{bias.dtype} {list(bias.shape)}")
        b = bias[:, :4 * hs] + bias[:, 4 * hs:]
    h0 = _dq_lstm_state(init_h, nd, batch, hs, op, "initial_h")
    c0 = _dq_lstm_state(init_c, nd, batch, hs, op, "initial_c")
    if peep is not None:
        peep = np.asarray(peep)
        if peep.dtype != np.float32 or peep.shape != (nd, 3 * hs):
            raise ShapeError(f"{op}: P must be float32 of shape {[nd, 3 * hs]}, got "
                             f"{peep.dtype} {list(peep.shape)}")
    acts = _activations(op, attrs, 3, ("Sigmoid", "Tanh", "Tanh"), nd, np.dtype(_F32))
    clip = _clipper(attrs["clip"], np.dtype(_F32))
    y = np.zeros((t_len, nd, batch, hs), _F32)
    y_h = np.zeros((nd, batch, hs), _F32)
    y_c = np.zeros((nd, batch, hs), _F32)
    with np.errstate(over="ignore", under="ignore"):
        for d in range(nd):
            f, g, act_h = acts[d]
            rev = direction == "reverse" or d == 1
            steps = x[::-1] if rev else x
            xw = _dynamic_gemm(steps.reshape(t_len * batch, in_size), *ws[d])
            xw = xw.reshape(t_len, batch, 4 * hs)
            h, c = h0[d], c0[d]
            for s in range(t_len):
                pre = xw[s] + _dynamic_gemm(h, *rs[d])
                gi, go, gf, gc = (pre[:, k * hs:(k + 1) * hs] for k in range(4))
                if peep is not None:
                    gi += peep[d, :hs] * c
                    gf += peep[d, 2 * hs:] * c
                pre += b[d]
                for gate in (gi, gf, gc):
                    if clip is not None:
                        clip(gate)
                f(gi)
                if attrs["input_forget"]:
                    np.subtract(_F32(1), gi, out=gf)
                else:
                    f(gf)
                g(gc)
                c = gf * c + gi * gc
                if peep is not None:
                    go += peep[d, hs:2 * hs] * c
                if clip is not None:
                    clip(go)
                f(go)
                h = go * act_h(c.copy())
                y[t_len - 1 - s if rev else s, d] = h
            y_h[d], y_c[d] = h, c
    return (y, y_h, y_c)[:max(1, attrs.get(NUM_OUTPUTS, 3))]


def _dq_lstm_infer(attrs, inputs):
    """Y (seq, directions, batch, hidden), Y_h and Y_c (directions, batch, hidden)."""
    x, r = inputs[0], inputs[2]
    nd = 2 if attrs["direction"] in ("bidirectional", b"bidirectional") else 1
    hs = attrs["hidden_size"]
    if hs is None and r.shape is not None and len(r.shape) == 3:
        hs = r.shape[1]
    f32 = np.dtype(np.float32)
    if x.shape is None or len(x.shape) != 3:
        return [TensorInfo(f32, None)] * 3
    t_len, batch = x.shape[:2]
    state = (nd, batch, hs)
    return [TensorInfo(f32, (t_len, nd, batch, hs)), TensorInfo(f32, state),
            TensorInfo(f32, state)]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

_CONV_ATTRS = (("auto_pad", "string", "NOTSET"), ("channels_last", "int", 0),
               ("dilations", "ints", None), ("group", "int", 1),
               ("kernel_shape", "ints", None), ("pads", "ints", None),
               ("strides", "ints", None))

OPS = (
    define("DequantizeLinear", ("x", "x_scale", "x_zero_point?"), ("y",),
           _ms_dequantize_kernel, (("axis", "int", 1),), infer=_ms_dequantize_infer,
           domain=_DOMAIN,
           doc="onnxruntime's DequantizeLinear: 4/8/16/32-bit, per tensor or per axis."),
    define("DynamicQuantizeLSTM", ("X", "W", "R", "B?", "sequence_lens?", "initial_h?",
                                   "initial_c?", "P?", "W_scale", "W_zero_point",
                                   "R_scale", "R_zero_point"), ("Y?", "Y_h?", "Y_c?"),
           _dq_lstm_kernel, (("activation_alpha", "floats", None),
                             ("activation_beta", "floats", None),
                             ("activations", "strings", None), ("clip", "float", None),
                             ("direction", "string", "forward"),
                             ("hidden_size", "int", None), ("input_forget", "int", 0)),
           infer=_dq_lstm_infer, domain=_DOMAIN, dtypes=("float32",),
           check_attrs=_check_clip,
           doc="LSTM with 8-bit W and R and dynamically quantized inputs."),
    define("MatMulInteger16", ("A", "B"), ("Y",), _matmul_integer16_kernel,
           infer=_matmul_integer16_infer, domain=_DOMAIN, dtypes=("int16",),
           doc="int16 matmul with int32 output."),
    define("QAttention", ("input", "weight", "bias", "input_scale", "weight_scale",
                          "mask_index?", "input_zero_point?", "weight_zero_point?",
                          "past?"), ("output", "present?"), _qattention_kernel,
           (("do_rotary", "int", 0), ("mask_filter_value", "float", None),
            ("num_heads", "int"), ("past_present_share_buffer", "int", 0),
            ("scale", "float", None), ("unidirectional", "int", 0)),
           infer=_qattention_infer, domain=_DOMAIN, dtypes=("uint8",),
           doc="Attention with a quantized (8-bit) QKV projection."),
    define("QEmbedLayerNormalization", (
        "input_ids", "segment_ids?", "word_embedding_quant", "position_embedding_quant",
        "segment_embedding?", "gamma_quant", "beta_quant", "mask?", "word_embedding_scale",
        "position_embedding_scale", "segment_embedding_scale?", "gamma_scale",
        "beta_scale", "word_embedding_zero_point", "position_embedding_zero_point",
        "segment_embedding_zero_point?", "gamma_zero_point", "beta_zero_point"),
           ("layernorm_out", "mask_index_out"), _qembed_kernel,
           (("epsilon", "float", 1e-12),), infer=_qembed_infer, domain=_DOMAIN,
           check_attrs=_check_epsilon,
           doc="EmbedLayerNormalization over 8-bit quantized tables."),
    define("QLinearConv", ("x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
                           "y_scale", "y_zero_point", "B?"), ("y",), _ms_qlinear_conv_kernel,
           _CONV_ATTRS, infer=_ms_qlinear_conv_infer, domain=_DOMAIN,
           dtypes=("uint8", "int8"), doc="QLinearConv, NCHW or (channels_last) NHWC."),
    define("QLinearWhere", ("condition", "X", "x_scale", "x_zero_point", "Y", "y_scale",
                            "y_zero_point", "z_scale", "z_zero_point"), ("Z",),
           _qlinear_where_kernel, infer=_qlinear_where_infer, domain=_DOMAIN,
           doc="Where over 8-bit X and Y, requantized to Z's scale."),
    define("QuantizeLinear", ("x", "y_scale", "y_zero_point?"), ("y",),
           _ms_quantize_kernel, (("axis", "int", 1),), infer=_ms_quantize_infer,
           domain=_DOMAIN,
           doc="onnxruntime's QuantizeLinear: to 4/8/16-bit, per tensor or per axis."),
)

KNOWN_FAILURES: dict[str, str] = {}

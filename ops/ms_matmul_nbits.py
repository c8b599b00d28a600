"""Operators: onnxruntime's weight-quantized matmuls (domain "com.microsoft").

onnxruntime's quantization tools write these contrib ops (its docs/ContribOperators.md
defines them; inputs, attributes and defaults follow its registered schemas):

* MatMulNBits: `MatMulNBitsQuantizer` (block-wise int4/int8 LLM weights). B holds the
  [N, K] weight quantized along K in blocks of `block_size`, each block a blob of
  block_size * bits / 8 bytes with the codes packed low bits first; a scale per block
  and a zero point per block (packed the same way as B, or floats of the scales' type;
  2^(bits-1) when omitted). Y = A @ dequantize(B).T + bias.
* DynamicQuantizeMatMul and MatMulIntegerToFloat: `quantize_dynamic` followed by
  onnxruntime's graph optimizer, which fuses DynamicQuantizeLinear + MatMulInteger +
  Cast + Mul (+ Add) into them.
* GatherBlockQuantized: `MatMulNBitsQuantizer` with Gather among its op types
  (quantized embeddings): int4 / uint4 data, or uint8 data holding 2, 4 or 8-bit codes
  packed along the last axis. Float8 and float4 data are refused with a ShapeError
  naming the type.

* MatMulBnb4: `MatMulBnb4Quantizer` (bitsandbytes' QLoRA FP4 / NF4): the [N, K] weight
  flattened row-major, in blocks of block_size values scaled by their absmax, two 4-bit
  code-book indices a byte (the first in the high nibble); block_size 16, 32, 64, 128 or
  256, as onnxruntime's kernel (others refused). Y = A @ W.T (transB=1) or
  A @ W (transB=0; onnxruntime's CPU kernel multiplies by the wrong layout there, reading
  past the weight, so that form follows the schema with no oracle). training_mode has
  no effect on inference.
* MatMulFpQ4: B [K, N] as an MLAS Q4 blob (`MlasQ4GemmPackB`), B_shape = [K, N]:
  blk_quant_type 0 (blocks of 32, symmetric), 1 (32 with a zero-point byte; code minus
  it wraps to int8, as MLAS computes it) and 2 (64, symmetric; onnxruntime's CPU kernel
  reads every type but 0 as type 1 and so refuses type-2 blobs by their size; onegraph
  follows the schema).

Arithmetic. MatMulNBits dequantizes B to float32, (code - zero_point) * scale, and runs
one float32 matmul (onnxruntime's accuracy_level 0 path for float32 A: dequantize and
sgemm; its blocked kernels sum in another order, so results agree to float32 rounding,
about 1e-6 relative). accuracy_level is a lower bound on the accuracy onnxruntime may
use (4 lets it quantize A to int8): onegraph always computes in float32, which meets
every level. float16 A and scales are computed in float32 and the result rounded to
float16. The dequantized weight of a node is kept in the node's kernel cache while its
packed inputs are the same read-only (constant) arrays, so repeated runs do not unpack
it again.

DynamicQuantizeMatMul quantizes A as DynamicQuantizeLinear does (uint8, the range
including 0); both ops then take the exact integer product of the zero-point-shifted
operands and scale it by a_scale * b_scale (float32, per tensor or per column of B),
then add the bias, as onnxruntime's MLAS output processor does. The helpers are those
of `ops/quantization.py`.

Refused, where onnxruntime's CPU kernels refuse or disagree with the spec: MatMulNBits
with bits other than 2, 4, 8, with weight_prepacked, with g_idx for bits other than 4
or with g_idx and packed uint8 zero points (onnxruntime then ignores the zero points);
GatherBlockQuantized's uint8 data with gather_axis other than 0 or quantize_axis other
than the last. MatMulNBits with 8 bits and float zero points is run by the spec's
formula (onnxruntime's CPU kernel refuses it, so it has no oracle here).

MatMulBnb4 and MatMulFpQ4 dequantize their weight to float32 once (kept in the node's
kernel cache while it is a constant, as MatMulNBits does) and run one float32 matmul
(float16 / bfloat16 A for MatMulBnb4 computed in float32 and rounded once), as
onnxruntime's CPU kernels do (dequantize, then sgemm / MLAS's Q4 GEMM).
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .quantization import _dynamic_quantize_kernel, _int_matmul, _shift_cols, _shift_rows
from .registry import TensorInfo, define, is_plan_constant, kernel_cache

_DOMAIN = "com.microsoft"
_F32 = np.float32
_FLOATS = (np.dtype(np.float32), np.dtype(np.float16))
_EIGHT_BIT = (np.dtype(np.uint8), np.dtype(np.int8))
_BITS = (2, 4, 8)


def _padded(inputs, n):
    return list(inputs) + [None] * (n - len(inputs))


def _ceil_div(a, b):
    return -(-a // b)


# --------------------------------------------------------------------------------------
# MatMulNBits
# --------------------------------------------------------------------------------------


def _bits_and_block_problem(attrs):
    """What is wrong with the bits and block_size attributes (MatMulNBits,
    GatherBlockQuantized), or None."""
    if attrs["bits"] not in _BITS:
        return f"bits {attrs['bits']} is not supported (onegraph runs 2, 4 and 8)"
    bs = attrs["block_size"]
    if bs < 16 or bs & (bs - 1):
        return f"block_size {bs} must be a power of 2 and at least 16"
    return None


def _nbits_check_attrs(attrs):
    """What is wrong with MatMulNBits' attributes, or None."""
    problem = _bits_and_block_problem(attrs)
    if problem is not None:
        return problem
    if attrs["K"] < 1 or attrs["N"] < 1:
        return f"K ({attrs['K']}) and N ({attrs['N']}) must be positive"
    if attrs["weight_prepacked"]:
        return "weight_prepacked B (an execution provider's private layout) is not supported"
    return None


def _geometry(attrs):
    """(K, N, bits, block_size, k_blocks, blob_size) of a MatMulNBits node."""
    k, n, bits, bs = attrs["K"], attrs["N"], attrs["bits"], attrs["block_size"]
    return k, n, bits, bs, _ceil_div(k, bs), bs * bits // 8


def _unpack(packed, bits):
    """The codes of uint8 bytes packed low bits first: [..., B] -> [..., B * 8 / bits]."""
    per = 8 // bits
    if per == 1:
        return packed
    shifts = (np.arange(per, dtype=np.uint8) * bits)
    codes = (packed[..., None] >> shifts) & np.uint8((1 << bits) - 1)
    return codes.reshape(packed.shape[:-1] + (packed.shape[-1] * per,))


def _nbits_zero_points(zp, scales_dtype, n, k_blocks, bits):
    """The zero points as float32 [N, k_blocks]: packed uint8 ([N * ceil(k_blocks * bits
    / 8)] or [N, ceil(...)]), floats of the scales' type in the scales' shape, or
    2^(bits-1) when omitted."""
    op = "MatMulNBits"
    if zp is None:
        return np.full((1, 1), 1 << (bits - 1), _F32)
    zp = np.asarray(zp)
    if zp.dtype == np.uint8:
        row = _ceil_div(k_blocks * bits, 8)
        if zp.size != n * row or zp.ndim not in (1, 2) or (zp.ndim == 2 and zp.shape[0] != n):
            raise ShapeError(f"{op}: zero_points of shape {list(zp.shape)} must hold "
                             f"N * ceil(k_blocks * bits / 8) = {n} * {row} packed bytes "
                             f"([{n * row}] or [{n}, {row}])")
        return _unpack(zp.reshape(n, row), bits)[:, :k_blocks].astype(_F32)
    if zp.dtype != scales_dtype:
        raise ShapeError(f"{op}: zero_points is {zp.dtype}: it must be uint8 (packed) or "
                         f"the scales' type {scales_dtype}")
    if zp.size != n * k_blocks:
        raise ShapeError(f"{op}: zero_points of shape {list(zp.shape)} must hold N * "
                         f"k_blocks = {n} * {k_blocks} values, as the scales do")
    return zp.reshape(n, k_blocks).astype(_F32)


def _nbits_weight(b, scales, zp, g_idx, attrs):
    """The dequantized weight W, float32 [N, K]: W[n, k] = (code - zp) * scale of k's
    block (k // block_size, or g_idx[k] when given).

    Raises:
        ShapeError: B, scales, zero_points or g_idx do not fit K, N, bits, block_size.
    """
    op = "MatMulNBits"
    k, n, bits, bs, k_blocks, blob = _geometry(attrs)
    scales = np.asarray(scales)
    if scales.dtype not in _FLOATS:
        raise ShapeError(f"{op}: scales must be float32 or float16, got {scales.dtype}")
    if scales.size != n * k_blocks or scales.ndim not in (1, 2) or \
            (scales.ndim == 2 and scales.shape[0] != n):
        raise ShapeError(f"{op}: scales of shape {list(scales.shape)} must hold N * "
                         f"k_blocks = {n} * {k_blocks} values ([{n * k_blocks}] or "
                         f"[{n}, {k_blocks}])")
    zero = _nbits_zero_points(zp, scales.dtype, n, k_blocks, bits)
    codes = _unpack(b, bits)  # [N, k_blocks, block_size]; the last block padded past K
    scale = scales.reshape(n, k_blocks).astype(_F32)
    if g_idx is None:
        # block by block: broadcast each block's parameters over its codes
        w = (codes.astype(_F32) - zero[:, :, None]) * scale[:, :, None]
        return w.reshape(n, k_blocks * bs)[:, :k]
    codes = codes.reshape(n, k_blocks * bs)[:, :k]
    g_idx = np.asarray(g_idx)
    _check_g_idx(zp, bits)
    if g_idx.dtype != np.int32 or g_idx.shape != (k,):
        raise ShapeError(f"{op}: g_idx must be int32 of shape [K] = [{k}], got "
                         f"{g_idx.dtype} {list(g_idx.shape)}")
    if k and (g_idx.min() < 0 or g_idx.max() >= k_blocks):
        raise ShapeError(f"{op}: g_idx holds block indices outside [0, {k_blocks})")
    zero = np.broadcast_to(zero, (n, k_blocks))
    return (codes.astype(_F32) - zero[:, g_idx]) * scale[:, g_idx]


def _check_g_idx(zp, bits):
    """g_idx is run where onnxruntime's CPU kernel runs it the spec's way: 4 bits, zero
    points omitted or floats.

    Raises:
        UnsupportedOpError: g_idx with bits other than 4 (onnxruntime refuses them) or
            with packed uint8 zero_points (onnxruntime then ignores the zero points and
            uses 8: the model's meaning is ambiguous, so onegraph refuses it).
    """
    if bits != 4:
        raise UnsupportedOpError(f"MatMulNBits: g_idx is supported with bits 4 only, got "
                                 f"bits {bits}")
    if zp is not None and np.asarray(zp).dtype == np.uint8:
        raise UnsupportedOpError(
            "MatMulNBits: g_idx together with packed uint8 zero_points is not supported "
            "(onnxruntime ignores such zero points; give them as floats of the scales' type)")


def _is_empty_weight(shape, want):
    """B's packed shape with one or more dims 0 and the others as `want` (the spec's
    omitted projection)."""
    return len(shape) == 3 and 0 in shape and all(d in (0, w) for d, w in zip(shape, want))


def _cached_weight(b, scales, zp, g_idx, attrs):
    """`_nbits_weight`, kept in the node's kernel cache (see `_cached_by_inputs`)."""
    return _cached_by_inputs(attrs, (b, scales, zp, g_idx),
                             lambda: _nbits_weight(b, scales, zp, g_idx, attrs))


def _cached_by_inputs(attrs, inputs, compute):
    """compute(), kept in the node's kernel cache while `inputs` (None for omitted ones)
    are the same plan constants (`is_plan_constant`): keyed by their data addresses,
    shapes and dtypes, and holding the arrays themselves so the memory is not reused
    under the key. Fed inputs, read-only or not, are computed afresh every call: the
    caller may refill their buffers between runs."""
    arrays = [a for a in inputs if a is not None]
    if not all(is_plan_constant(a) for a in arrays):
        return compute()
    key = tuple((a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str)
                if a is not None else None for a in inputs)
    cache = kernel_cache(attrs)
    hit = cache.get("weight")
    if hit is not None and hit[0] == key:
        return hit[2]
    w = compute()
    w.flags.writeable = False
    cache["weight"] = (key, arrays, w)
    return w


def _float_input(a, op, what="A"):
    a = np.asarray(a)
    if a.dtype not in _FLOATS:
        raise ShapeError(f"{op}: {what} must be float32 or float16, got {a.dtype}")
    return a


def _bias(bias, n, dtype, op):
    """The bias as float32 [N], checked: of A's type and N values."""
    bias = np.asarray(bias)
    if bias.dtype != dtype:
        raise ShapeError(f"{op}: bias is {bias.dtype}, but A is {dtype}")
    if bias.shape != (n,):
        raise ShapeError(f"{op}: bias of shape {list(bias.shape)} must be [N] = [{n}]")
    return bias.astype(_F32)


def _matmul_nbits_kernel(inputs, attrs, ctx):
    """Y = A @ W.T + bias, W = dequantize(B) [N, K] in float32 (see the module doc);
    Y has A's type and shape A.shape[:-1] + [N].

    Raises:
        ShapeError: an input's type or shape does not fit the attributes (names it).
        OpAttributeError: unsupported bits, block_size or weight_prepacked.
    """
    op = "MatMulNBits"
    a, b, scales, zp, g_idx, bias = _padded(inputs, 6)
    problem = _nbits_check_attrs(attrs)
    if problem:
        raise OpAttributeError(f"{op}: {problem}")
    k, n, bits, bs, k_blocks, blob = _geometry(attrs)
    a = _float_input(a, op)
    if a.ndim == 0 or a.shape[-1] != k:
        raise ShapeError(f"{op}: A of shape {list(a.shape)} must end in K = {k}")
    b = np.asarray(b)
    if b.dtype != np.uint8:
        raise ShapeError(f"{op}: B must be uint8 (packed codes), got {b.dtype}")
    if scales is not None and np.asarray(scales).dtype != a.dtype:
        raise ShapeError(f"{op}: scales is {np.asarray(scales).dtype}, but A is {a.dtype}")
    bias = None if bias is None else _bias(bias, n, a.dtype, op)
    out_shape = a.shape[:-1] + (n,)
    if _is_empty_weight(b.shape, (n, k_blocks, blob)):
        y = np.zeros(out_shape, _F32) if bias is None else np.broadcast_to(bias, out_shape)
        return (np.array(y, a.dtype),)
    if b.shape != (n, k_blocks, blob):
        raise ShapeError(f"{op}: B of shape {list(b.shape)} must be [N, k_blocks, "
                         f"blob_size] = [{n}, {k_blocks}, {blob}] (K={k}, bits={bits}, "
                         f"block_size={bs})")
    w = _cached_weight(b, scales, zp, g_idx, attrs)
    y = np.matmul(a.astype(_F32, copy=False), w.T)
    if bias is not None:
        y = y + bias
    return (np.asarray(y, a.dtype).reshape(out_shape),)


def _matmul_nbits_infer(attrs, inputs):
    op = "MatMulNBits"
    a, b, scales, zp, g_idx, bias = _padded(inputs, 6)
    k, n, bits, bs, k_blocks, blob = _geometry(attrs)
    if a.dtype is not None and np.dtype(a.dtype) not in _FLOATS:
        raise ShapeError(f"{op}: A must be float32 or float16, got {a.dtype}")
    if b is not None and b.dtype is not None and np.dtype(b.dtype) != np.uint8:
        raise ShapeError(f"{op}: B must be uint8 (packed codes), got {b.dtype}")
    for name, t in (("scales", scales), ("bias", bias)):
        if t is not None and t.dtype is not None and a.dtype is not None and \
                np.dtype(t.dtype) != np.dtype(a.dtype):
            raise ShapeError(f"{op}: {name} is {t.dtype}, but A is {a.dtype}")
    if b is not None and b.shape is not None and None not in b.shape and \
            tuple(b.shape) != (n, k_blocks, blob) and \
            not _is_empty_weight(tuple(b.shape), (n, k_blocks, blob)):
        raise ShapeError(f"{op}: B of shape {list(b.shape)} must be [N, k_blocks, "
                         f"blob_size] = [{n}, {k_blocks}, {blob}]")
    if g_idx is not None:
        _check_g_idx(None if not _known(zp) else np.zeros(0, zp.dtype), bits)
    if a.shape is None:
        return [TensorInfo(a.dtype, None)]
    if not a.shape or (a.shape[-1] is not None and a.shape[-1] != k):
        raise ShapeError(f"{op}: A of shape {list(a.shape)} must end in K = {k}")
    return [TensorInfo(a.dtype, tuple(a.shape[:-1]) + (n,))]


# --------------------------------------------------------------------------------------
# DynamicQuantizeMatMul, MatMulIntegerToFloat
# --------------------------------------------------------------------------------------


def _eight_bit(x, op, what):
    """x as an array; ShapeError naming `what` unless it is uint8 or int8."""
    x = np.asarray(x)
    if x.dtype not in _EIGHT_BIT:
        raise ShapeError(f"{op}: {what} must be uint8 or int8, got {x.dtype}")
    return x


def _per_column(p, n, dtype, op, what):
    """A scale or zero point of B (one value, or one per column: [N] or [1, N]) as an
    array broadcasting against the [..., N] product; raises ShapeError naming it."""
    p = np.asarray(p)
    if p.dtype != np.dtype(dtype):
        raise ShapeError(f"{op}: {what} is {p.dtype}, but must be {np.dtype(dtype)}")
    if p.size == 1:
        return p.reshape(())
    if p.size == n and p.ndim >= 1 and p.shape[-1] == n:
        return p.reshape(n)
    raise ShapeError(f"{op}: {what} of shape {list(p.shape)} must be one value or one "
                     f"per column of B (N = {n})")


def _matmul_operands(a, b, op):
    """Checks that a (..., K) and b (K, N) fit; returns N."""
    if b.ndim != 2:
        raise ShapeError(f"{op}: B must be 2-D [K, N], got shape {list(b.shape)}")
    if a.ndim == 0 or a.shape[-1] != b.shape[0]:
        raise ShapeError(f"{op}: inner dims differ: A of shape {list(a.shape)}, B of shape "
                         f"{list(b.shape)}")
    return b.shape[1]


def _scaled_product(op, a_q, a_zp, b, b_zp, multiplier, bias, out_dtype):
    """float32(exact integer (A - a_zp)(B - b_zp)) * multiplier + bias, as out_dtype."""
    n = b.shape[1]
    zb = None if b_zp is None else _per_column(b_zp, n, b.dtype, op, "b_zero_point")
    acc = _int_matmul(_shift_rows(a_q, a_zp, op, "a_zero_point", "A"),
                      _shift_cols(b, zb, op, "b_zero_point", "B"))
    y = acc.astype(_F32) * multiplier
    if bias is not None:
        y = y + _bias(bias, n, np.dtype(out_dtype), op)
    return (np.asarray(y, out_dtype),)


def _dynamic_quantize_matmul_kernel(inputs, attrs, ctx):
    """Y = (DynamicQuantizeLinear(A) - a_zp)(B - b_zp) * (a_scale * b_scale) + bias:
    A quantized to uint8 over its whole range, the integer product exact, the scale
    product and multiply in float32 (b_scale per tensor or per column).

    Raises:
        ShapeError: an input's type or shape does not fit (names it).
    """
    op = "DynamicQuantizeMatMul"
    a, b, b_scale, b_zp, bias = _padded(inputs, 5)
    a = np.asarray(a)
    if a.dtype != np.float32:
        raise ShapeError(f"{op}: A must be float32, got {a.dtype}")
    b = _eight_bit(b, op, "B")
    n = _matmul_operands(a, b, op)
    if b_scale is None:
        raise ShapeError(f"{op}: b_scale is required")
    sb = _per_column(b_scale, n, np.float32, op, "b_scale")
    a_q, a_scale, a_zp = _dynamic_quantize_kernel([a], {}, None)
    return _scaled_product(op, a_q, a_zp, b, b_zp, _F32(a_scale) * sb, bias, np.float32)


def _matmul_integer_to_float_kernel(inputs, attrs, ctx):
    """Y = (A - a_zp)(B - b_zp) * (a_scale * b_scale) + bias: the integer product exact,
    the scales (a's per tensor, b's per tensor or per column) multiplied and applied in
    float32; Y has the scales' type (float32 or float16).

    Raises:
        ShapeError: an input's type or shape does not fit (names it).
    """
    op = "MatMulIntegerToFloat"
    a, b, a_scale, b_scale, a_zp, b_zp, bias = _padded(inputs, 7)
    a = _eight_bit(a, op, "A")
    b = _eight_bit(b, op, "B")
    n = _matmul_operands(a, b, op)
    if a_scale is None or b_scale is None:
        raise ShapeError(f"{op}: a_scale and b_scale are required")
    dtype = np.asarray(a_scale).dtype
    if dtype not in _FLOATS:
        raise ShapeError(f"{op}: a_scale must be float32 or float16, got {dtype}")
    sa = np.asarray(a_scale)
    if sa.size != 1:
        raise ShapeError(f"{op}: a_scale of shape {list(sa.shape)} must hold one value")
    if a_zp is not None:
        a_zp = np.asarray(a_zp)
        if a_zp.dtype != a.dtype or a_zp.size != 1:
            raise ShapeError(f"{op}: a_zero_point must be one {a.dtype} value, got "
                             f"{a_zp.dtype} of shape {list(a_zp.shape)}")
        a_zp = a_zp.reshape(())
    sb = _per_column(b_scale, n, dtype, op, "b_scale")
    multiplier = sa.reshape(()).astype(_F32) * sb.astype(_F32)
    return _scaled_product(op, a, a_zp, b, b_zp, multiplier, bias, dtype)


def _known(t):
    return t is not None and t.dtype is not None


def _integer_matmul_infer(op, a_types, out_from):
    def infer(attrs, inputs):
        a, b = inputs[0], inputs[1]
        if _known(a) and np.dtype(a.dtype) not in a_types:
            raise ShapeError(f"{op}: A must be {' or '.join(str(t) for t in a_types)}, "
                             f"got {a.dtype}")
        if _known(b) and np.dtype(b.dtype) not in _EIGHT_BIT:
            raise ShapeError(f"{op}: B must be uint8 or int8, got {b.dtype}")
        out = inputs[out_from]
        dtype = out.dtype if out is not None else None
        if a.shape is None or b is None or b.shape is None:
            return [TensorInfo(dtype, None)]
        if len(b.shape) != 2 or not a.shape:
            raise ShapeError(f"{op}: B must be 2-D and A at least 1-D, got {list(a.shape)} "
                             f"and {list(b.shape)}")
        if None not in (a.shape[-1], b.shape[0]) and a.shape[-1] != b.shape[0]:
            raise ShapeError(f"{op}: inner dims differ: A of shape {list(a.shape)}, B of "
                             f"shape {list(b.shape)}")
        return [TensorInfo(dtype, tuple(a.shape[:-1]) + (b.shape[1],))]
    return infer


# --------------------------------------------------------------------------------------
# GatherBlockQuantized
# --------------------------------------------------------------------------------------

_INT4_NAMES = ("int4", "uint4")


def _gbq_kind(dtype):
    """'int4' (ml_dtypes int4/uint4), 'uint8' (packed codes) or None (not supported)."""
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return "uint8"
    return "int4" if dtype.name in _INT4_NAMES else None


_gbq_check_attrs = _bits_and_block_problem


def _gbq_geometry(data_shape, dtype, attrs, op="GatherBlockQuantized"):
    """(logical data shape, gather axis, quantize axis, codes per byte) after checks.

    Raises:
        ShapeError: data's type is not int4, uint4 or uint8, or an axis is out of range.
        OpAttributeError: uint8 data with gather_axis not 0 or quantize_axis not the
            last axis (onnxruntime refuses both), packed (bits < 8) with quantize_axis
            equal to gather_axis, or int4 / uint4 data with bits other than 4.
    """
    kind = _gbq_kind(dtype)
    if kind is None:
        raise ShapeError(f"{op}: data must be int4, uint4 or uint8 (packed), got "
                         f"{np.dtype(dtype)} (float8 and float4 data are not supported)")
    rank = len(data_shape)
    if rank == 0:
        raise ShapeError(f"{op}: data must have rank 1 or more")
    axes = []
    for name in ("gather_axis", "quantize_axis"):
        axis = attrs[name]
        if not -rank <= axis < rank:
            raise OpAttributeError(f"{op}: {name} {axis} is out of range for data of rank "
                                   f"{rank}")
        axes.append(axis % rank)
    gather, quant = axes
    shape = list(data_shape)
    per = 1
    if kind == "uint8":
        if gather != 0:
            raise OpAttributeError(f"{op}: uint8 data needs gather_axis 0, got "
                                   f"{attrs['gather_axis']}")
        if quant != rank - 1:
            raise OpAttributeError(f"{op}: uint8 data needs quantize_axis to be the last "
                                   f"axis, got {attrs['quantize_axis']}")
        per = 8 // attrs["bits"]
        if per > 1:
            if gather == quant:
                raise OpAttributeError(f"{op}: packed uint8 data needs quantize_axis "
                                       f"different from gather_axis")
            shape[-1] = None if shape[-1] is None else shape[-1] * per
    elif attrs["bits"] != 4:
        raise OpAttributeError(f"{op}: {np.dtype(dtype)} data needs bits 4, got "
                               f"{attrs['bits']}")
    return tuple(shape), gather, quant, per


def _gbq_params_shape(shape, quant, block_size):
    return tuple(-(-d // block_size) if i == quant else d for i, d in enumerate(shape))


def _gather_block_quantized_kernel(inputs, attrs, ctx):
    """output = (Gather(data, indices, gather_axis) - zero_point) * scale, each element's
    scale and zero point those of its block of `block_size` along quantize_axis; int4 /
    uint4 data (zero point 0 when omitted) or uint8 data of 2, 4 or 8 bits packed low
    bits first along the last axis (zero points packed the same way, 2^(bits-1) when
    omitted). Dequantized in float32, returned in the scales' type.

    Raises:
        ShapeError: a type or shape does not fit, or an index is out of range.
        OpAttributeError: see `_gbq_geometry`.
    """
    op = "GatherBlockQuantized"
    data, indices, scales, zp = _padded(inputs, 4)
    data = np.asarray(data)
    shape, gather, quant, per = _gbq_geometry(data.shape, data.dtype, attrs)
    bs = attrs["block_size"]
    scales = np.asarray(scales)
    if scales.dtype not in _FLOATS:
        raise ShapeError(f"{op}: scales must be float32 or float16, got {scales.dtype}")
    pshape = _gbq_params_shape(shape, quant, bs)
    if scales.shape != pshape:
        raise ShapeError(f"{op}: scales of shape {list(scales.shape)} must be "
                         f"{list(pshape)} (data's with quantize_axis in blocks of {bs})")
    indices = np.asarray(indices)
    if indices.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ShapeError(f"{op}: indices must be int32 or int64, got {indices.dtype}")
    dim = shape[gather]
    idx = np.where(indices < 0, indices.astype(np.int64) + dim, indices.astype(np.int64))
    if idx.size and (idx.min() < 0 or idx.max() >= dim):
        raise ShapeError(f"{op}: indices out of range for data's dim {gather} of size {dim}")
    codes = np.take(data, idx, axis=gather)
    if per > 1:
        codes = _unpack(codes, attrs["bits"])
    codes = codes.astype(_F32)
    if zp is not None:
        zp = np.asarray(zp)
        if zp.dtype != data.dtype:
            raise ShapeError(f"{op}: zero_points is {zp.dtype}, but data is {data.dtype}")
        zshape = pshape[:-1] + (-(-pshape[-1] // per),)
        if zp.shape != zshape:
            raise ShapeError(f"{op}: zero_points of shape {list(zp.shape)} must be "
                             f"{list(zshape)}")
        zero = (_unpack(zp, attrs["bits"])[..., :pshape[-1]] if per > 1 else zp)
        zero = zero.astype(_F32)
    elif data.dtype == np.uint8:
        zero = np.full(pshape, 1 << (attrs["bits"] - 1), _F32)
    else:
        zero = None
    out_quant = quant if quant < gather else quant + idx.ndim - 1

    def expand(p):
        """Block parameters [.., blocks along quant, ..] to the output's elements."""
        if quant == gather:
            return np.take(p, idx // bs, axis=gather)
        p = np.take(p, idx, axis=gather)
        return np.repeat(p, bs, axis=out_quant).take(np.arange(shape[quant]),
                                                     axis=out_quant)

    values = codes if zero is None else codes - expand(zero)
    return ((values * expand(scales.astype(_F32))).astype(scales.dtype),)


def _gather_block_quantized_infer(attrs, inputs):
    op = "GatherBlockQuantized"
    data, indices, scales = inputs[0], inputs[1], inputs[2]
    dtype = scales.dtype if scales is not None else None
    if dtype is not None and np.dtype(dtype) not in _FLOATS:
        raise ShapeError(f"{op}: scales must be float32 or float16, got {dtype}")
    if data.dtype is None or data.shape is None or indices.shape is None:
        return [TensorInfo(dtype, None)]
    shape, gather, _, _ = _gbq_geometry(data.shape, data.dtype, attrs)
    return [TensorInfo(dtype, shape[:gather] + tuple(indices.shape) + shape[gather + 1:])]


# --------------------------------------------------------------------------------------
# MatMulBnb4
# --------------------------------------------------------------------------------------

# bitsandbytes' 4-bit code books (QLoRA), as onnxruntime's blockwise_quant_block_bnb4.h
# lists them: FP4 (sign bit, two exponent bits, one mantissa bit, divided by 12) and
# NF4 (the normal-float quantiles).
_BNB4_MAPS = (
    np.array([0.0, 5.208333333e-03, 0.66666667, 1.0, 0.33333333, 0.5, 0.16666667, 0.25,
              -0.0, -5.208333333e-03, -0.66666667, -1.0, -0.33333333, -0.5, -0.16666667,
              -0.25], _F32),
    np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
              -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
              0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
              0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
              0.7229568362236023, 1.0], _F32),
)
_BNB4_FLOATS = ("float32", "float16", "bfloat16")


def _bnb4_check_attrs(attrs):
    """What is wrong with MatMulBnb4's attributes, or None."""
    bs = attrs["block_size"]
    # onnxruntime's kernel takes these five only; a larger one would also make the
    # per-value scales (np.repeat by block_size) an allocation no input bounds.
    if bs not in (16, 32, 64, 128, 256):
        return f"block_size {bs} must be 16, 32, 64, 128 or 256 (as onnxruntime's kernel)"
    if attrs["quant_type"] not in (0, 1):
        return f"quant_type must be 0 (FP4) or 1 (NF4), got {attrs['quant_type']}"
    if attrs["K"] < 1 or attrs["N"] < 1:
        return f"K ({attrs['K']}) and N ({attrs['N']}) must be positive"
    return None


def _bnb4_weight(b, absmax, attrs):
    """The dequantized weight, float32 [N, K]: the row-major [N, K] weight flattened,
    two codes a byte (the first in the high nibble), each block of block_size values
    scaled by its absmax."""
    op = "MatMulBnb4"
    k, n, bs = attrs["K"], attrs["N"], attrs["block_size"]
    numel = n * k
    b = np.asarray(b)
    if b.dtype != np.uint8 or b.shape != ((numel + 1) // 2,):
        raise ShapeError(f"{op}: B must be uint8 of shape [(N * K + 1) / 2] = "
                         f"[{(numel + 1) // 2}], got {b.dtype} {list(b.shape)}")
    blocks = _ceil_div(numel, bs)
    absmax = np.asarray(absmax)
    if absmax.shape != (blocks,):
        raise ShapeError(f"{op}: absmax of shape {list(absmax.shape)} must be "
                         f"[ceil(N * K / block_size)] = [{blocks}]")
    codes = np.stack([b >> 4, b & np.uint8(15)], axis=1).reshape(-1)[:numel]
    scale = np.repeat(absmax.astype(_F32), bs)[:numel]
    return (_BNB4_MAPS[attrs["quant_type"]][codes] * scale).reshape(n, k)


def _bnb4_float(a, what):
    a = np.asarray(a)
    if a.dtype.name not in _BNB4_FLOATS:
        raise ShapeError(f"MatMulBnb4: {what} must be float32, float16 or bfloat16, got "
                         f"{a.dtype}")
    return a


def _matmul_bnb4_kernel(inputs, attrs, ctx):
    """Y = A @ W.T (transB=1, A [..., K]) or A @ W (transB=0, A [..., N]), W the
    dequantized [N, K] weight (see `_bnb4_weight`), in float32; Y has A's type.

    Raises:
        ShapeError: A, B or absmax does not fit K, N and block_size (names it).
    """
    op = "MatMulBnb4"
    a, b, absmax = _padded(inputs, 3)
    a = _bnb4_float(a, "A")
    absmax = _bnb4_float(absmax, "absmax")
    if absmax.dtype != a.dtype:
        raise ShapeError(f"{op}: absmax is {absmax.dtype}, but A is {a.dtype}")
    inner = attrs["K"] if attrs["transB"] else attrs["N"]
    if a.ndim == 0 or a.shape[-1] != inner:
        raise ShapeError(f"{op}: A of shape {list(a.shape)} must end in "
                         f"{'K' if attrs['transB'] else 'N'} = {inner}")
    w = _cached_by_inputs(attrs, (b, absmax), lambda: _bnb4_weight(b, absmax, attrs))
    y = np.matmul(a.astype(_F32, copy=False), w.T if attrs["transB"] else w)
    return (np.asarray(y, a.dtype),)


def _matmul_bnb4_infer(attrs, inputs):
    op = "MatMulBnb4"
    a = inputs[0]
    if a.dtype is not None and np.dtype(a.dtype).name not in _BNB4_FLOATS:
        raise ShapeError(f"{op}: A must be float32, float16 or bfloat16, got {a.dtype}")
    if a.shape is None:
        return [TensorInfo(a.dtype, None)]
    inner, outer = (attrs["K"], attrs["N"]) if attrs["transB"] else (attrs["N"], attrs["K"])
    if not a.shape or (a.shape[-1] is not None and a.shape[-1] != inner):
        raise ShapeError(f"{op}: A of shape {list(a.shape)} must end in {inner}")
    return [TensorInfo(a.dtype, tuple(a.shape[:-1]) + (outer,))]


# --------------------------------------------------------------------------------------
# MatMulFpQ4
# --------------------------------------------------------------------------------------

# blk_quant_type -> (block length, has a zero point): MLAS's BlkQ4Sym, BlkQ4Zp8 and
# BlkQ4Sym64 blobs.
_FPQ4_TYPES = {0: (32, False), 1: (32, True), 2: (64, False)}


def _fpq4_check_attrs(attrs):
    if attrs["blk_quant_type"] not in _FPQ4_TYPES:
        return f"blk_quant_type must be 0, 1 or 2, got {attrs['blk_quant_type']}"
    return None


def _fpq4_shape(b_shape):
    """(K, N) from the B_shape input."""
    b_shape = np.asarray(b_shape)
    if b_shape.dtype != np.int64 or b_shape.shape != (2,) or (b_shape < 0).any():
        raise ShapeError(f"MatMulFpQ4: B_shape must hold the two int64 dims [K, N] of B, "
                         f"got {b_shape.dtype} {b_shape.tolist()}")
    return int(b_shape[0]), int(b_shape[1])


def _fpq4_weight(blob, k, n, kind):
    """The dequantized B, float32 [K, N], of MLAS's Q4 blob: column by column, block by
    block along K, each block a float32 scale, (a uint8 zero point), then per 32 values
    16 bytes, byte l holding value l in its low nibble and value l + 16 in its high one.
    value = (code - zero_point) * scale, the zero point 8 for the symmetric types, the
    difference wrapped to int8 as MLAS computes it (for a zero point byte above 15)."""
    block, has_zero = _FPQ4_TYPES[kind]
    blocks = _ceil_div(k, block)
    head = 5 if has_zero else 4
    size = head + block // 2
    blob = np.asarray(blob)
    if blob.dtype != np.uint8 or blob.shape != (n * blocks * size,):
        raise ShapeError(f"MatMulFpQ4: B must be a uint8 blob of N * ceil(K / {block}) * "
                         f"{size} = {n * blocks * size} bytes for K={k}, N={n} "
                         f"(blk_quant_type {kind}), got {blob.dtype} {list(blob.shape)}")
    rows = blob.reshape(n, blocks, size)
    scale = np.ascontiguousarray(rows[:, :, :4]).view("<f4")[:, :, 0].astype(_F32)
    zero = rows[:, :, 4:5] if has_zero else np.uint8(8)
    data = rows[:, :, head:].reshape(n, blocks, block // 32, 16)
    codes = np.concatenate([data & np.uint8(15), data >> 4], axis=3)
    # MLAS subtracts the zero-point byte in int8, wrapping (probed: zero point 129 turns
    # code 0 into 127, 255 into 1); within 0..15 this is the plain difference
    diff = (codes.reshape(n, blocks, block) - zero).view(np.int8).astype(_F32)
    w = (diff * scale[:, :, None]).reshape(n, blocks * block)[:, :k]
    return np.ascontiguousarray(w.T)


def _matmul_fpq4_kernel(inputs, attrs, ctx):
    """Y = A @ B, B [K, N] dequantized from MLAS's Q4 blob (see `_fpq4_weight`), in
    float32.

    Raises:
        ShapeError: A is not float32, or A, the blob or B_shape does not fit.
    """
    op = "MatMulFpQ4"
    a, blob, b_shape = _padded(inputs, 3)
    a = np.asarray(a)
    if a.dtype != np.float32:
        raise ShapeError(f"{op}: A must be float32, got {a.dtype}")
    k, n = _fpq4_shape(b_shape)
    if a.ndim == 0 or a.shape[-1] != k:
        raise ShapeError(f"{op}: A of shape {list(a.shape)} must end in K = {k}")
    kind = attrs["blk_quant_type"]
    w = _cached_by_inputs(attrs, (blob, b_shape), lambda: _fpq4_weight(blob, k, n, kind))
    return (np.matmul(a, w),)


def _matmul_fpq4_infer(attrs, inputs):
    op = "MatMulFpQ4"
    a, b_shape = inputs[0], inputs[2]
    if a.dtype is not None and np.dtype(a.dtype) != np.float32:
        raise ShapeError(f"{op}: A must be float32, got {a.dtype}")
    if a.shape is None:
        return [TensorInfo(a.dtype, None)]
    n = None
    if b_shape is not None and b_shape.value is not None:
        k, n = _fpq4_shape(b_shape.value)
        if not a.shape or (a.shape[-1] is not None and a.shape[-1] != k):
            raise ShapeError(f"{op}: A of shape {list(a.shape)} must end in K = {k}")
    return [TensorInfo(a.dtype, tuple(a.shape[:-1]) + (n,))]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

OPS = (
    define("DynamicQuantizeMatMul", ("A", "B", "b_scale", "b_zero_point?", "bias?"), ("Y",),
           _dynamic_quantize_matmul_kernel,
           infer=_integer_matmul_infer("DynamicQuantizeMatMul", (np.dtype(np.float32),), 2),
           domain=_DOMAIN, dtypes=("float32",),
           doc="MatMul of float A, quantized dynamically to uint8, by an 8-bit B."),
    define("GatherBlockQuantized", ("data", "indices", "scales", "zero_points?"), ("output",),
           _gather_block_quantized_kernel,
           (("bits", "int", 4), ("block_size", "int", 128), ("gather_axis", "int", 0),
            ("quantize_axis", "int", 1)),
           infer=_gather_block_quantized_infer, domain=_DOMAIN,
           dtypes=("int4", "uint4", "uint8"), check_attrs=_gbq_check_attrs,
           doc="Gather from block-quantized int4/uint4/uint8 data, dequantized."),
    define("MatMulBnb4", ("A", "B", "absmax"), ("Y",), _matmul_bnb4_kernel,
           (("K", "int"), ("N", "int"), ("block_size", "int"), ("quant_type", "int"),
            ("transB", "int", 1), ("training_mode", "int", 0)),
           infer=_matmul_bnb4_infer, domain=_DOMAIN, dtypes=_BNB4_FLOATS,
           check_attrs=_bnb4_check_attrs,
           doc="MatMul by a bitsandbytes FP4/NF4 block-quantized weight [N, K]."),
    define("MatMulFpQ4", ("A", "B", "B_shape"), ("Y",), _matmul_fpq4_kernel,
           (("blk_quant_type", "int", 1),),
           infer=_matmul_fpq4_infer, domain=_DOMAIN, dtypes=("float32",),
           check_attrs=_fpq4_check_attrs,
           doc="MatMul by an MLAS int4 block-quantized blob B [K, N]."),
    define("MatMulIntegerToFloat", ("A", "B", "a_scale", "b_scale", "a_zero_point?",
                                    "b_zero_point?", "bias?"), ("Y",),
           _matmul_integer_to_float_kernel,
           infer=_integer_matmul_infer("MatMulIntegerToFloat", _EIGHT_BIT, 2),
           domain=_DOMAIN, dtypes=("uint8", "int8"),
           doc="Integer MatMul of 8-bit A and B, scaled to float (+ bias)."),
    define("MatMulNBits", ("A", "B", "scales", "zero_points?", "g_idx?", "bias?"), ("Y",),
           _matmul_nbits_kernel,
           (("K", "int"), ("N", "int"), ("accuracy_level", "int", 0), ("bits", "int", 4),
            ("block_size", "int"), ("weight_prepacked", "int", 0)),
           infer=_matmul_nbits_infer, domain=_DOMAIN, dtypes=("float32", "float16"),
           check_attrs=_nbits_check_attrs,
           doc="MatMul by a block-quantized 2/4/8-bit weight [N, K] (+ bias)."),
)

KNOWN_FAILURES: dict[str, str] = {}

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
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .quantization import _dynamic_quantize_kernel, _int_matmul, _shift_cols, _shift_rows
from .registry import TensorInfo, define, kernel_cache

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
    """`_nbits_weight`, kept in the node's kernel cache while the packed inputs are the
    same read-only arrays (constants): keyed by their data addresses, shapes and dtypes,
    and holding the arrays themselves so the memory is not reused under the key."""
    arrays = [a for a in (b, scales, zp, g_idx) if a is not None]
    if not all(isinstance(a, np.ndarray) and not a.flags.writeable for a in arrays):
        return _nbits_weight(b, scales, zp, g_idx, attrs)
    key = tuple((a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str)
                if a is not None else None for a in (b, scales, zp, g_idx))
    cache = kernel_cache(attrs)
    hit = cache.get("weight")
    if hit is not None and hit[0] == key:
        return hit[2]
    w = _nbits_weight(b, scales, zp, g_idx, attrs)
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

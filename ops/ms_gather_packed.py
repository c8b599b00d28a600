"""Operators: onnxruntime's com.microsoft GatherPacked (GGML block-packed embeddings).

GatherPacked(data, indices) -> output gathers rows of a 2-D uint8 table
data [vocab, row_bytes], each row the K values of one embedding packed in a GGML tensor
format, and dequantizes them: output has indices' shape + [K] and the type output_dtype
(TensorProto 1 float, 10 float16, 16 bfloat16, the default). packed_type is a GGML
tensor type id. Semantics measured against onnxruntime 1.32's CPU kernel:

* row_bytes must be K / block * block_bytes exactly (anything else is refused at run
  time), K a positive multiple of the format's block size (refused when the node is
  built otherwise). Formats (block elements, block bytes), all little-endian:
  F32 0 (1, 4), F16 1 (1, 2), BF16 30 (1, 2) hold the values themselves. Q4_0 2
  (32, 18): a float16 scale d, then 16 bytes; byte j holds value j in its low nibble and
  value j + 16 in its high one, value = (code - 8) * d. Q5_0 6 (32, 22): d, a uint32 of
  fifth bits (bit i for value i), then 16 nibble bytes as Q4_0; value = (code - 16) * d.
  Q8_0 8 (32, 34): d, then 32 int8 codes; value = code * d. Q5_K 13 (256, 176): float16
  d and dmin, 12 bytes of eight 6-bit (scale, min) pairs, 32 bytes of fifth bits, 128
  nibble bytes; value = (d * scale) * code - dmin * min. Q6_K 14 (256, 210): 128 bytes
  of low nibbles, 64 of high bit pairs, 16 int8 scales, float16 d; value =
  (d * scale) * (code - 32). The exact placements are in the decoders below.
* Every value is computed in float32 (float16 scales widened exactly, subnormals
  included; inf and NaN scales and values propagate as IEEE arithmetic makes them),
  then rounded to the output type to nearest even. A NaN becomes float16 0x7E00 with
  its sign or bfloat16 0x7FC1 whatever its sign (onnxruntime's conversions); a float32
  output keeps every bit, NaN payloads included.
* Indices are int32 or int64 of any rank; an index below 0 or at or past vocab selects
  row 0 (no wrapping of negatives). Empty indices give an empty output, whatever vocab;
  vocab 0 with any index is an error.
* The IQ formats onnxruntime accepts (16 IQ2_XXS, 17 IQ2_XS, 18 IQ3_XXS, 20 IQ4_NL,
  22 IQ2_S, 23 IQ4_XS) dequantize through lookup grids onegraph does not hold: they are
  refused with UnsupportedOpError naming the type. Other type ids are refused as
  onnxruntime refuses them (OpAttributeError), as are output_dtype values other than
  1, 10 and 16.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .elementwise import onnx_type_to_numpy
from .registry import TensorInfo, define

_DOMAIN = "com.microsoft"
_OP = "GatherPacked"
_F32 = np.float32
_OUTPUT_TYPES = {1: "float", 10: "float16", 16: "bfloat16"}
_INDEX_TYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _half(blocks, at):
    """The little-endian float16 at byte `at` of each block, widened to float32."""
    return np.ascontiguousarray(blocks[..., at:at + 2]).view("<f2")[..., 0].astype(_F32)


def _nibbles(packed):
    """[..., 16 * n] bytes -> [..., 32 * n] codes: for every 16 bytes, their low nibbles
    then their high ones (GGML's order within a 32-value group)."""
    groups = packed.reshape(packed.shape[:-1] + (-1, 1, 16))
    codes = np.concatenate([groups & np.uint8(15), groups >> 4], axis=-2)
    return codes.reshape(packed.shape[:-1] + (-1,))


def _bits(packed, count):
    """The first `count` bits of each [..., bytes] little-endian bit field, as 0/1."""
    return np.unpackbits(packed, axis=-1, count=count, bitorder="little")


def _decode_f32(blocks):
    return np.ascontiguousarray(blocks).view("<f4").astype(_F32)


def _decode_f16(blocks):
    return np.ascontiguousarray(blocks).view("<f2").astype(_F32)


def _decode_bf16(blocks):
    # bfloat16 is the high half of a float32: widening is a 16-bit shift
    halves = np.ascontiguousarray(blocks).view("<u2").astype(np.uint32)
    return (halves << 16).view(_F32)


def _decode_q4_0(blocks):
    codes = _nibbles(blocks[..., 2:18]).astype(_F32)
    return (codes - _F32(8)) * _half(blocks, 0)[..., None]


def _decode_q5_0(blocks):
    codes = _nibbles(blocks[..., 6:22]) | (_bits(blocks[..., 2:6], 32) << 4)
    return (codes.astype(_F32) - _F32(16)) * _half(blocks, 0)[..., None]


def _decode_q8_0(blocks):
    codes = np.ascontiguousarray(blocks[..., 2:34]).view(np.int8).astype(_F32)
    return codes * _half(blocks, 0)[..., None]


def _k_scales_mins(packed):
    """The eight 6-bit (scale, min) pairs of Q5_K's 12 bytes, each [..., 8] float32:
    pairs 0-3 are the low 6 bits of bytes 0-3 (scales) and 4-7 (mins); pairs 4-7 take
    their low 4 bits from the nibbles of bytes 8-11 and their top 2 bits from the top
    bits of bytes 0-3 (scales) and 4-7 (mins)."""
    low6 = np.uint8(63)
    first, second, third = packed[..., 0:4], packed[..., 4:8], packed[..., 8:12]
    scales = np.concatenate([first & low6, (third & np.uint8(15)) | ((first >> 6) << 4)], -1)
    mins = np.concatenate([second & low6, (third >> 4) | ((second >> 6) << 4)], -1)
    return scales.astype(_F32), mins.astype(_F32)


def _decode_q5_k(blocks):
    d, dmin = _half(blocks, 0), _half(blocks, 2)
    scales, mins = _k_scales_mins(blocks[..., 4:16])
    # 128 bytes: four runs of 32, each run's low nibbles the values of one 32-group and
    # its high nibbles the next; fifth bits: bit g of byte l belongs to value l of group g
    low = blocks[..., 48:176].reshape(blocks.shape[:-1] + (4, 1, 32))
    low = np.concatenate([low & np.uint8(15), low >> 4], axis=-2)
    high = _bits(blocks[..., 16:48, None], 8).swapaxes(-1, -2)
    codes = low.reshape(blocks.shape[:-1] + (8, 32)) | (high << 4)
    scale = (d[..., None] * scales)[..., None]
    offset = (dmin[..., None] * mins)[..., None]
    return (scale * codes.astype(_F32) - offset).reshape(blocks.shape[:-1] + (256,))


def _decode_q6_k(blocks):
    lead = blocks.shape[:-1]
    # each half of 128 values: 64 low-nibble bytes, 32 high-bit bytes; within a half,
    # value 32 * q + l takes nibble (q // 2) of low byte l + 32 * (q % 2) and bit pair q
    # of high byte l
    low = blocks[..., 0:128].reshape(lead + (2, 1, 2, 32))
    low = np.concatenate([low & np.uint8(15), low >> 4], axis=-3).reshape(lead + (2, 4, 32))
    high = blocks[..., 128:192].reshape(lead + (2, 1, 32))
    high = (high >> (np.arange(4, dtype=np.uint8) * 2)[:, None]) & np.uint8(3)
    codes = (low | (high << 4)).astype(_F32) - _F32(32)
    scales = np.ascontiguousarray(blocks[..., 192:208]).view(np.int8).astype(_F32)
    # one scale per 16 values, in value order
    scale = (_half(blocks, 208)[..., None] * scales).reshape(lead + (2, 4, 2, 1))
    values = codes.reshape(lead + (2, 4, 2, 16)) * scale
    return values.reshape(lead + (256,))


# packed_type -> (GGML name, block elements, block bytes, decoder; None = refused)
_FORMATS = {
    0: ("F32", 1, 4, _decode_f32),
    1: ("F16", 1, 2, _decode_f16),
    2: ("Q4_0", 32, 18, _decode_q4_0),
    6: ("Q5_0", 32, 22, _decode_q5_0),
    8: ("Q8_0", 32, 34, _decode_q8_0),
    13: ("Q5_K", 256, 176, _decode_q5_k),
    14: ("Q6_K", 256, 210, _decode_q6_k),
    16: ("IQ2_XXS", 256, 66, None),
    17: ("IQ2_XS", 256, 74, None),
    18: ("IQ3_XXS", 256, 98, None),
    20: ("IQ4_NL", 32, 18, None),
    22: ("IQ2_S", 256, 82, None),
    23: ("IQ4_XS", 256, 136, None),
    30: ("BF16", 1, 2, _decode_bf16),
}


def _check_attrs(attrs):
    """What is wrong with GatherPacked's attributes, or None."""
    kind, k = attrs["packed_type"], attrs["K"]
    if kind not in _FORMATS:
        return (f"packed_type {kind} is not a GGML type onnxruntime's GatherPacked takes "
                f"(known: {sorted(_FORMATS)})")
    name, block, _, _ = _FORMATS[kind]
    if k < 1 or k % block:
        return f"K ({k}) must be a positive multiple of {name}'s block size {block}"
    if attrs["output_dtype"] not in _OUTPUT_TYPES:
        return (f"output_dtype {attrs['output_dtype']} must be 1 (float), 10 (float16) "
                f"or 16 (bfloat16)")
    return None


def _format(attrs):
    """(name, block, block_bytes, decoder, row_bytes) of the node's packed_type.

    Raises:
        UnsupportedOpError: the type is one onnxruntime accepts but onegraph does not
            decode (the IQ formats).
    """
    name, block, size, decode = _FORMATS[attrs["packed_type"]]
    if decode is None:
        raise UnsupportedOpError(
            f"{_OP}: packed_type {attrs['packed_type']} ({name}) is not supported (its "
            f"lookup grids are not in onegraph)")
    return name, block, size, decode, attrs["K"] // block * size


def _round_float16(x):
    """float32 -> float16 to nearest even, NaN as 0x7E00 with its sign."""
    bits = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    if nan.any():
        sign = (x.view(np.uint32) >> 16).astype(np.uint16) & np.uint16(0x8000)
        bits = np.where(nan, sign | np.uint16(0x7E00), bits)
    return bits.view(np.float16)


def _round_bfloat16(x):
    """float32 -> bfloat16 to nearest even on the bits, every NaN as 0x7FC1."""
    bits = x.view(np.uint32)
    rounded = (bits + (np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1)))) >> 16
    rounded = np.where(np.isnan(x), np.uint32(0x7FC1), rounded).astype(np.uint16)
    return rounded.view(onnx_type_to_numpy(16))


def _to_output(x, output_dtype):
    if output_dtype == 10:
        return _round_float16(x)
    if output_dtype == 16:
        return _round_bfloat16(x)
    return x


def _gather_packed_kernel(inputs, attrs, ctx):
    """Gather rows of the packed table and dequantize them (see the module doc): output
    indices.shape + [K] of output_dtype.

    Raises:
        ShapeError: data is not 2-D uint8 with row_bytes fitting K and packed_type,
            indices are not int32/int64, or vocab is 0 while indices are not empty.
        UnsupportedOpError: packed_type is an IQ format (not decoded here).
    """
    data, indices = (np.asarray(v) for v in inputs[:2])
    name, block, size, decode, row_bytes = _format(attrs)
    if data.dtype != np.uint8 or data.ndim != 2:
        raise ShapeError(f"{_OP}: data must be 2-D uint8 [vocab, row_bytes], got "
                         f"{data.dtype} {list(data.shape)}")
    if data.shape[1] != row_bytes:
        raise ShapeError(f"{_OP}: data has rows of {data.shape[1]} bytes, but {name} with "
                         f"K={attrs['K']} needs {row_bytes} (K / {block} blocks of {size})")
    if indices.dtype not in _INDEX_TYPES:
        raise ShapeError(f"{_OP}: indices must be int32 or int64, got {indices.dtype}")
    vocab = data.shape[0]
    if vocab == 0 and indices.size:
        raise ShapeError(f"{_OP}: data has no rows (vocab 0), but indices are not empty")
    rows = np.where((indices >= 0) & (indices < vocab), indices, 0).reshape(-1)
    picked = np.take(data, rows, axis=0).reshape(-1, attrs["K"] // block, size)
    values = decode(picked).reshape(indices.shape + (attrs["K"],))
    return (_to_output(np.ascontiguousarray(values, _F32), attrs["output_dtype"]),)


def _gather_packed_infer(attrs, inputs):
    """indices.shape + [K] of output_dtype.

    Raises:
        ShapeError: data or indices of a type or shape the op does not take.
        UnsupportedOpError: packed_type is an IQ format.
    """
    data, indices = inputs[0], inputs[1]
    _, _, _, _, row_bytes = _format(attrs)
    if data is not None and data.dtype is not None and np.dtype(data.dtype) != np.uint8:
        raise ShapeError(f"{_OP}: data must be uint8, got {data.dtype}")
    if data is not None and data.shape is not None:
        if len(data.shape) != 2:
            raise ShapeError(f"{_OP}: data must be 2-D [vocab, row_bytes], got shape "
                             f"{list(data.shape)}")
        if data.shape[1] is not None and data.shape[1] != row_bytes:
            raise ShapeError(f"{_OP}: data has rows of {data.shape[1]} bytes, but the "
                             f"format with K={attrs['K']} needs {row_bytes}")
    if indices is not None and indices.dtype is not None and \
            np.dtype(indices.dtype) not in _INDEX_TYPES:
        raise ShapeError(f"{_OP}: indices must be int32 or int64, got {indices.dtype}")
    dtype = onnx_type_to_numpy(attrs["output_dtype"])
    if indices is None or indices.shape is None:
        return [TensorInfo(dtype, None)]
    return [TensorInfo(dtype, tuple(indices.shape) + (attrs["K"],))]


OPS = (
    define(_OP, ("data", "indices"), ("output",), _gather_packed_kernel,
           (("packed_type", "int"), ("K", "int"), ("output_dtype", "int", 16)),
           infer=_gather_packed_infer, domain=_DOMAIN, dtypes=("uint8",),
           check_attrs=_check_attrs,
           doc="Gather rows of a GGML block-packed table, dequantized to float."),
)

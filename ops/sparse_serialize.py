"""Operators: TF's sparse serialization ops (onegraph domain).

SerializeSparse(indices, values, dense_shape) -> [3] strings: the TensorProto bytes of
each part (ops/io_ops.py's serialize_array, byte for byte as TF writes them).
SerializeManySparse(indices, values, dense_shape) -> [N, 3]: one row per entry of the
first dimension (rank >= 2, indices in row-major order), each row the minibatch entry's
sparse tensor (first index dropped) serialized as SerializeSparse does.
DeserializeManySparse(serialized [N, 3]) -> indices, values, dense_shape: the rows
parsed and stacked with a leading dim, in row order, dense_shape the per-dim maximum.

Strings are onegraph's str (bytes through surrogateescape); TF's InvalidArgumentError
is InvalidArgumentError here, with TF's words.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, InvalidArgumentError, ShapeError
from .io_ops import parse_array, serialize_array, tf_type_name
from .regex_re2 import text_bytes
from .registry import TensorInfo, define
from .summary_encoding import field_bytes, field_varint, read_fields, read_varint, varint

_D = "onegraph"
_OBJ = np.dtype(object)


def _as_text(data: bytes) -> str:
    # onegraph's strings: bytes as str through surrogateescape
    return data.decode("utf-8", "surrogateescape")


def _as_bytes(v) -> bytes:
    if isinstance(v, bytes):
        return v
    if not isinstance(v, str):
        raise InvalidArgumentError(f"expected a string, got {type(v).__name__}")
    return text_bytes(v)


def _parts(inputs) -> tuple:
    """(indices, values, dense_shape) as checked arrays.

    Raises:
        InvalidArgumentError: the parts are not an int64 matrix, a vector and an int64
            vector of agreeing sizes.
    """
    ind, val, shp = (np.asarray(x) for x in inputs)
    if ind.ndim != 2 or val.ndim != 1 or shp.ndim != 1:
        raise InvalidArgumentError(f"Input indices, values and shape should be a matrix, a "
                                   f"vector and a vector, got shapes {list(ind.shape)}, "
                                   f"{list(val.shape)} and {list(shp.shape)}")
    if ind.shape[0] != val.shape[0] or ind.shape[1] != shp.shape[0]:
        raise InvalidArgumentError(f"Number of values ({val.shape[0]}) and indices "
                                   f"({ind.shape[0]}) or rank ({shp.shape[0]}) and index "
                                   f"width ({ind.shape[1]}) disagree")
    return ind.astype(np.int64), val, shp.astype(np.int64)


def _content_bytes(x: np.ndarray) -> bytes:
    """TensorProto bytes as TF's AsProtoTensorContent writes them; for strings that is
    tensor_content too: every length as a varint, then the bytes one after another."""
    if x.dtype != _OBJ:
        return serialize_array(x)
    data = [_as_bytes(v) for v in x.reshape(-1).tolist()]
    dims = b"".join(field_bytes(2, field_varint(1, d), always=True) for d in x.shape)
    body = b"".join(varint(len(d)) for d in data) + b"".join(data)
    return field_varint(1, 7) + field_bytes(2, dims, always=True) + field_bytes(4, body)


def _string_content(body: bytes, count: int) -> list:
    """The strings of a string tensor_content: `count` varint lengths, then the bytes.

    Raises:
        ValueError: the lengths or bytes run out.
    """
    lengths, pos = [], 0
    for _ in range(count):
        value, pos = read_varint(body, pos)
        lengths.append(value)
    out = []
    for n in lengths:
        if pos + n > len(body):
            raise ValueError("truncated string tensor_content")
        out.append(_as_text(body[pos:pos + n]))
        pos += n
    return out


def _parse_bytes(data: bytes) -> np.ndarray:
    """TensorProto bytes as an array, string tensor_content included.

    Raises:
        ValueError / ExecutionError: the bytes are not a TensorProto.
    """
    fields = read_fields(data)
    content = [v for f, w, v in fields if f == 4 and w == 2]
    if not any(f == 1 and w == 0 and v == 7 for f, w, v in fields) or not content:
        return parse_array(data)
    shape = []
    for f, w, v in fields:
        if f == 2 and w == 2:
            shape = [next((d for n, k, d in read_fields(dim) if n == 1 and k == 0), 0)
                     for m, _, dim in read_fields(v) if m == 2]
    if any(d >= 1 << 62 for d in shape):
        raise ValueError("a dim is negative or too large")
    values = _string_content(content[-1], int(np.prod(shape, dtype=np.int64)))
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape)


def _row(ind, val, shp) -> list:
    return [_as_text(_content_bytes(a)) for a in (ind, val, shp)]


def _serialize_kernel(inputs, attrs, ctx):
    """SerializeSparse: the three parts' TensorProto bytes, a [3] string vector.

    Raises:
        InvalidArgumentError: malformed parts.
        ExecutionError: a values dtype TensorProto cannot hold here.
    """
    ind, val, shp = _parts(inputs)
    return (np.array(_row(ind, val, shp), dtype=object),)


def _joined(index) -> str:
    return ",".join(str(int(i)) for i in index)


def _check_order(ind, shp) -> None:
    """TF's SparseTensor::IndicesValid: in bounds, row-major order, no repeats.

    Raises:
        InvalidArgumentError: the first index that breaks a rule, in TF's words.
    """
    for i, index in enumerate(ind):
        if np.any(index < 0) or np.any(index >= shp):
            raise InvalidArgumentError(f"indices[{i}] = [{_joined(index)}] is out of bounds: "
                                       f"need 0 <= index < [{_joined(shp)}]")
        if i:
            prev = tuple(ind[i - 1].tolist())
            here = tuple(index.tolist())
            if here == prev:
                raise InvalidArgumentError(f"indices[{i}] = [{_joined(index)}] is repeated")
            if here < prev:
                raise InvalidArgumentError(
                    f"indices[{i}] = [{_joined(index)}] is out of order. Many sparse ops "
                    "require sorted indices.\n    Use `tf.sparse.reorder` to create a "
                    "correctly ordered copy.")


def _serialize_many_kernel(inputs, attrs, ctx):
    """SerializeManySparse: one serialized row per entry of the first dimension.

    Raises:
        InvalidArgumentError: rank < 2, or indices out of bounds, repeated or out of order.
    """
    ind, val, shp = _parts(inputs)
    if shp.shape[0] < 2:
        raise InvalidArgumentError(f"Rank of input SparseTensor should be > 1, but saw "
                                   f"rank: {shp.shape[0]}")
    _check_order(ind, shp)
    rows = []
    for b in range(int(shp[0])):
        pick = ind[:, 0] == b
        rows.append(_row(ind[pick, 1:], val[pick], shp[1:]))
    out = np.empty((len(rows), 3), dtype=object)
    for b, row in enumerate(rows):
        out[b, :] = row
    return (out,)


def _parsed(data, i: int, j: int) -> np.ndarray:
    try:
        return _parse_bytes(_as_bytes(data))
    except (ExecutionError, ValueError):
        raise InvalidArgumentError("Could not parse serialized proto") from None


def _one_row(row, i: int, want: np.dtype) -> tuple:
    """Row i's (indices, values, dense_shape), checked against dtype `want`.

    Raises:
        InvalidArgumentError: bytes that are no TensorProto, another dtype, or parts
            that do not make a SparseTensor.
    """
    ind, val, shp = (_parsed(row[j], i, j) for j in range(3))
    if val.dtype != want:
        raise InvalidArgumentError(f"Requested SparseTensor of type {tf_type_name(want)} but "
                                   f"SparseTensor[{i}].values.dtype() == "
                                   f"{tf_type_name(val.dtype)}")
    if ind.dtype != np.int64 or shp.dtype != np.int64:
        raise InvalidArgumentError(f"SparseTensor[{i}]: indices and dense_shape must be "
                                   f"int64, got {tf_type_name(ind.dtype)} and "
                                   f"{tf_type_name(shp.dtype)}")
    if ind.ndim != 2 or val.ndim != 1 or shp.ndim != 1 or ind.shape[0] != val.shape[0] \
            or ind.shape[1] != shp.shape[0]:
        raise InvalidArgumentError(f"SparseTensor[{i}] is malformed: indices "
                                   f"{list(ind.shape)}, values {list(val.shape)}, "
                                   f"dense_shape {list(shp.shape)}")
    return ind, val, shp


def _deserialize_many_kernel(inputs, attrs, ctx):
    """DeserializeManySparse: the rows stacked with a leading dim, in row order.

    Raises:
        InvalidArgumentError: serialized is not [N, 3] with N > 0, a row does not parse,
            holds another dtype, or its rank differs from the rows before it.
    """
    ser = np.asarray(inputs[0], dtype=object)
    if ser.ndim != 2 or ser.shape[1] != 3:
        raise InvalidArgumentError(f"Serialized sparse should be a matrix with 3 columns, "
                                   f"got shape [{_joined(ser.shape)}]")
    if ser.shape[0] == 0:
        raise InvalidArgumentError(f"Serialized sparse should have at least 1 serialized "
                                   f"tensor, but has a zero dimension [{_joined(ser.shape)}]")
    want = np.dtype(attrs["dtype"])
    rows = [_one_row(ser[i], i, want) for i in range(ser.shape[0])]
    rank = rows[0][2].shape[0]
    for i, (_, _, shp) in enumerate(rows):
        if shp.shape[0] != rank:
            raise InvalidArgumentError(f"Inconsistent shape across SparseTensors: rank prior "
                                       f"to SparseTensor[{i}] was: {rank} but rank of "
                                       f"SparseTensor[{i}] is: {shp.shape[0]}")
    ind = np.concatenate([np.concatenate([np.full((r[0].shape[0], 1), i, np.int64), r[0]],
                                         axis=1) for i, r in enumerate(rows)])
    val = np.concatenate([r[1] for r in rows]).astype(want)
    dims = np.max(np.stack([r[2] for r in rows]), axis=0) if rank else np.zeros(0, np.int64)
    shp = np.concatenate([[len(rows)], dims]).astype(np.int64)
    return ind.reshape(-1, rank + 1), val, shp


def _sparse_in(inputs, what: str) -> None:
    ind, val, shp = inputs
    if ind.shape is not None and len(ind.shape) != 2:
        raise ShapeError(f"{what}: indices must be a matrix, got shape {list(ind.shape)}")
    if val.shape is not None and len(val.shape) != 1:
        raise ShapeError(f"{what}: values must be a vector, got shape {list(val.shape)}")
    if shp.shape is not None and len(shp.shape) != 1:
        raise ShapeError(f"{what}: dense_shape must be a vector, got shape {list(shp.shape)}")


def _serialize_infer(attrs, inputs):
    _sparse_in(inputs, "SerializeSparse")
    return [TensorInfo(_OBJ, (3,))]


def _serialize_many_infer(attrs, inputs):
    _sparse_in(inputs, "SerializeManySparse")
    return [TensorInfo(_OBJ, (None, 3))]


def _deserialize_infer(attrs, inputs):
    shape = inputs[0].shape
    if shape is not None:
        if len(shape) != 2:
            raise ShapeError(f"Shape must be rank 2 but is rank {len(shape)} for "
                             f"DeserializeManySparse with input shapes: {list(shape)}.")
        if shape[1] is not None and shape[1] != 3:
            raise ShapeError(f"Dimension must be 3 but is {shape[1]} for "
                             f"DeserializeManySparse with input shapes: {list(shape)}.")
    rank = attrs["rank"]
    width = None if rank < 0 else rank
    return [TensorInfo(np.dtype(np.int64), (None, width)),
            TensorInfo(np.dtype(attrs["dtype"]), (None,)),
            TensorInfo(np.dtype(np.int64), (width,))]


_TYPES = ("float32", "float64", "int32", "uint8", "int16", "int8", "object", "int64", "bool",
          "uint16", "float16", "uint32", "uint64")


def _dtype_problem(attrs) -> str | None:
    if attrs["dtype"] not in _TYPES:
        return f"dtype must be one of {', '.join(_TYPES)}, got {attrs['dtype']!r}"
    return None


OPS = (
    define("SerializeSparse", ["sparse_indices", "sparse_values", "sparse_shape"],
           ["serialized_sparse"], _serialize_kernel, infer=_serialize_infer, domain=_D,
           doc="TF's SerializeSparse (out_type string): [3] TensorProto strings."),
    define("SerializeManySparse", ["sparse_indices", "sparse_values", "sparse_shape"],
           ["serialized_sparse"], _serialize_many_kernel, infer=_serialize_many_infer,
           domain=_D, doc="TF's SerializeManySparse (out_type string): [N, 3] strings."),
    define("DeserializeManySparse", ["serialized_sparse"],
           ["sparse_indices", "sparse_values", "sparse_shape"], _deserialize_many_kernel,
           attrs=[("dtype", "string", "float32"), ("rank", "int", -1)],
           infer=_deserialize_infer, domain=_D, check_attrs=_dtype_problem,
           doc="TF's DeserializeManySparse (dtype a numpy dtype name; rank -1 unknown)."),
)

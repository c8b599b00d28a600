"""TF's TensorProto as a small Python class, with tf.make_tensor_proto and
tf.make_ndarray. The class has TF's fields (dtype, tensor_shape with dims of size,
tensor_content and the typed *_val lists), protobuf's SerializeToString / FromString /
ParseFromString, equality by bytes, and str() in protobuf's text format as TF prints it.
make_tensor_proto follows TF's rules: tensor_content for a numeric array of two or more
values at its own shape, the *_val lists otherwise (a scalar broadcast to `shape`).
The class is reached through these functions only (TF1 has no tf.TensorProto).
"""

from __future__ import annotations

import numbers
import struct

import numpy as np

from ..errors import DataLossError
from ..ops.summary_encoding import field_bytes, field_varint, packed_int64s, read_fields, varint
from .example_proto import _float_text, _quoted
from . import graph as _g

# numpy dtype name -> (TF's DataType number, its enum name)
_DTYPES = {
    "float32": (1, "DT_FLOAT"), "float64": (2, "DT_DOUBLE"), "int32": (3, "DT_INT32"),
    "uint8": (4, "DT_UINT8"), "int16": (5, "DT_INT16"), "int8": (6, "DT_INT8"),
    "object": (7, "DT_STRING"), "int64": (9, "DT_INT64"), "bool": (10, "DT_BOOL"),
    "uint16": (17, "DT_UINT16"), "float16": (19, "DT_HALF"), "uint32": (22, "DT_UINT32"),
    "uint64": (23, "DT_UINT64"),
}
_BY_NUMBER = {num: name for name, (num, _) in _DTYPES.items()}
_TF_NAMES = {"float32": "float", "float64": "double", "object": "string", "float16": "half"}
# TF's _TENSOR_CONTENT_TYPES (uint16 and bool are not among them)
_CONTENT = ("float16", "float32", "float64", "int32", "uint8", "int16", "int8", "int64",
            "uint32", "uint64")
# typed value lists: (field name, field number, kind), in field-number order
_VALS = (("float_val", 5, "f"), ("double_val", 6, "d"), ("int_val", 7, "v"),
         ("string_val", 8, "s"), ("int64_val", 10, "v"), ("bool_val", 11, "b"),
         ("half_val", 13, "v"), ("uint32_val", 16, "u"), ("uint64_val", 17, "u"))
# numpy dtype name -> the list make_tensor_proto appends to
_LIST_OF = {"float32": "float_val", "float64": "double_val", "int32": "int_val",
            "int16": "int_val", "int8": "int_val", "uint8": "int_val", "uint16": "int_val",
            "int64": "int64_val", "bool": "bool_val", "float16": "half_val",
            "uint32": "uint32_val", "uint64": "uint64_val", "object": "string_val"}


class Dim:
    """TensorShapeProto.Dim: one dimension's size."""

    def __init__(self, size=0):
        self.size = int(size)

    def __repr__(self) -> str:
        return f"Dim(size={self.size})"


class TensorShapeProto:
    """TF's TensorShapeProto: a list of Dim (unknown_rank is not used here)."""

    def __init__(self, dim=()):
        self.dim = [d if isinstance(d, Dim) else Dim(d) for d in dim]

    def _bytes(self) -> bytes:
        return b"".join(field_bytes(2, field_varint(1, d.size), always=True) for d in self.dim)

    def _lines(self) -> list:
        out = []
        for d in self.dim:
            out += ["  dim {"] + ([f"    size: {d.size}"] if d.size else []) + ["  }"]
        return out


class TensorProto:
    """TF's TensorProto message (the fields onegraph's dtypes use).

    Raises (constructor):
        ValueError: an unknown field name.
    """

    def __init__(self, **fields):
        self.dtype = 0
        self.tensor_shape = TensorShapeProto()
        self.version_number = 0
        self.tensor_content = b""
        for name, _, _ in _VALS:
            setattr(self, name, [])
        for key, value in fields.items():
            if not hasattr(self, key):
                raise ValueError(f"TensorProto has no field {key!r}")
            setattr(self, key, value)

    # -- wire format --------------------------------------------------------------------

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's wire-format bytes (field-number order, packed numbers)."""
        out = [field_varint(1, self.dtype), field_bytes(2, self.tensor_shape._bytes(),
                                                        always=True),
               field_varint(3, self.version_number), field_bytes(4, self.tensor_content)]
        for name, num, kind in _VALS:
            values = getattr(self, name)
            if not values:
                continue
            if kind == "s":
                out += [field_bytes(num, _as_bytes(v), always=True) for v in values]
                continue
            if kind == "f":
                body = struct.pack(f"<{len(values)}f", *values)
            elif kind == "d":
                body = struct.pack(f"<{len(values)}d", *values)
            else:
                body = b"".join(varint(int(v)) for v in values)
            out.append(field_bytes(num, body, always=True))
        return b"".join(out)

    def ParseFromString(self, data) -> None:  # noqa: N802 - protobuf's name
        """Replace the fields with those parsed from wire-format bytes.

        Raises:
            TypeError: data is not bytes.
            DataLossError: the bytes are not a well-formed TensorProto.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"TensorProto.ParseFromString: needs bytes, got "
                            f"{type(data).__name__}")
        self.__init__()
        try:
            self._parse(read_fields(bytes(data)))
        except ValueError as e:
            raise DataLossError(f"TensorProto: cannot parse the bytes: {e}") from None

    def _parse(self, fields) -> None:
        by_num = {num: (name, kind) for name, num, kind in _VALS}
        for num, wire, value in fields:
            if num == 1 and wire == 0:
                self.dtype = value
            elif num == 2 and wire == 2:
                self.tensor_shape = TensorShapeProto(_dims(value))
            elif num == 3 and wire == 0:
                self.version_number = value
            elif num == 4 and wire == 2:
                self.tensor_content = value
            elif num in by_num:
                name, kind = by_num[num]
                getattr(self, name).extend(_values_of(kind, wire, value))

    @classmethod
    def FromString(cls, data):  # noqa: N802 - protobuf's name
        """A TensorProto parsed from wire-format bytes (see ParseFromString)."""
        proto = cls()
        proto.ParseFromString(data)
        return proto

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and \
            self.SerializeToString() == other.SerializeToString()

    # -- text format --------------------------------------------------------------------

    def __str__(self) -> str:
        """The message in protobuf's text format, as TF prints it."""
        name = _DTYPES.get(_BY_NUMBER.get(self.dtype, ""), (0, str(self.dtype)))[1]
        lines = [f"dtype: {name}"] if self.dtype else []
        lines += ["tensor_shape {"] + self.tensor_shape._lines() + ["}"]
        if self.version_number:
            lines.append(f"version_number: {self.version_number}")
        if self.tensor_content:
            lines.append("tensor_content: " + _quoted(self.tensor_content, False))
        for field, _, kind in _VALS:
            lines += [f"{field}: {_text(kind, v)}" for v in getattr(self, field)]
        return "".join(line + "\n" for line in lines)

    __repr__ = __str__


def _as_bytes(v) -> bytes:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8", "surrogateescape")
    raise TypeError(f"TensorProto.string_val: needs bytes or str, got {type(v).__name__}")


def _text(kind: str, v) -> str:
    if kind == "s":
        return _quoted(_as_bytes(v), False)
    if kind == "f":
        return _float_text(v)
    if kind == "d":
        f = float(v)
        if f != f:
            return "nan"
        if f in (float("inf"), float("-inf")):
            return "inf" if f > 0 else "-inf"
        text = "%.15g" % f
        return text if float(text) == f else "%.17g" % f
    if kind == "b":
        return "true" if v else "false"
    return str(int(v))


def _dims(body: bytes) -> list:
    dims = []
    for num, wire, value in read_fields(body):
        if num == 2 and wire == 2:
            size = 0
            for n2, w2, v2 in read_fields(value):
                if n2 == 1 and w2 == 0:
                    size = v2 - (1 << 64) if v2 >= 1 << 63 else v2
            dims.append(size)
    return dims


def _values_of(kind: str, wire: int, value) -> list:
    """The values of one *_val entry: a single varint / fixed value or a packed run."""
    if kind == "s":
        return [value]
    if kind in "fd":
        fmt = "<f4" if kind == "f" else "<f8"
        if wire == 2 or isinstance(value, (bytes, bytearray)):
            return [float(x) for x in np.frombuffer(bytes(value), fmt)]
        return [float(value)]
    if wire == 0:
        values = [value]
    else:
        values = packed_int64s(value)
    if kind == "u":
        return [v % 2 ** 64 for v in values]
    if kind == "b":
        return [bool(v) for v in values]
    return [v - 2 ** 64 if v >= 2 ** 63 else v for v in values]


# ------------------------------------------------------------------ make_tensor_proto

def _dtype_name(dtype) -> str:
    """numpy name of dtype (og dtype, numpy dtype or name).

    Raises:
        TypeError: a dtype TensorProto cannot hold here.
    """
    name = _g.as_dtype(dtype).numpy.name
    if name not in _DTYPES:
        raise TypeError(f"make_tensor_proto: dtype {name} is not supported")
    return name


def _leaves(values):
    if isinstance(values, (list, tuple)):
        for v in values:
            yield from _leaves(v)
    else:
        yield values


def _check_compatible(values, name: str) -> None:
    """TF's _AssertCompatible: every Python leaf fits the requested dtype.

    Raises:
        TypeError: "Expected <dtype>, but got <value> of type '<type>'."
    """
    for v in _leaves(values):
        if name == "object":
            ok = isinstance(v, (str, bytes, np.bytes_, np.str_))
        elif name == "bool":
            ok = isinstance(v, (bool, np.bool_))
        elif name[0] in "iu":
            ok = isinstance(v, numbers.Integral)
        else:
            ok = isinstance(v, numbers.Real)
        if not ok:
            shown = _TF_NAMES.get(name, name)
            raise TypeError(f"Expected {shown}, but got {v} of type '{type(v).__name__}'.")


def _infer(values) -> str:
    """The dtype TF gives Python values: str/bytes string, bool, int32 (int64 when a
    value does not fit), float32; an empty list float32."""
    leaves = list(_leaves(values))
    if not leaves:
        return "float32"
    if any(isinstance(v, (str, bytes)) for v in leaves):
        return "object"
    if all(isinstance(v, (bool, np.bool_)) for v in leaves):
        return "bool"
    if all(isinstance(v, numbers.Integral) for v in leaves):
        small = all(-2 ** 31 <= int(v) < 2 ** 31 for v in leaves)
        return "int32" if small else "int64"
    return "float32"


def _array(values, name: str) -> np.ndarray:
    """Python values as a numpy array of dtype `name` (strings as bytes objects).

    Raises:
        ValueError: ragged nesting (numpy's words).
    """
    if name == "object":
        arr = np.array(values, dtype=object)
        flat = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in arr.reshape(-1)]
        out = np.empty(arr.shape, dtype=object)
        out.reshape(-1)[:] = flat if flat else []
        return out
    raw = np.array(values)
    if raw.dtype == object:
        raise ValueError("setting an array element with a sequence: the values are ragged")
    return raw.astype(name)    # integers wrap as TF's conversion does (300 -> uint8 44)


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False,
                      allow_broadcast=False) -> TensorProto:
    """A TensorProto of `values` (TF's tf.make_tensor_proto): a numpy array keeps its
    dtype, Python values get TF's (int32/int64, float32, string, bool); with `shape`
    the values are reshaped, or a scalar broadcast; a TensorProto is returned as it is.

    Raises:
        TypeError: values do not fit dtype; verify_shape and the shape differs; a
            broadcast of more than one value to another size; an unsupported dtype.
        ValueError: ragged values; more values than `shape` holds.
    """
    if isinstance(values, TensorProto):
        return values
    name = None if dtype is None else _dtype_name(dtype)
    if shape is not None:
        shape = [int(d) for d in shape]
    if isinstance(values, (np.ndarray, np.generic)):
        arr = np.asarray(values)
        if arr.dtype.kind in "US":
            arr = _array(arr.tolist(), "object")
        name = name or _dtype_name(arr.dtype)
        nparray = arr.astype(name) if name != "object" else arr
    elif shape is not None and int(np.prod(shape, dtype=np.int64)) == 0:
        name = name or _infer(values)
        nparray = np.empty(shape, dtype=name)
    else:
        if name is not None:
            _check_compatible(values, name)
        name = name or _infer(values)
        nparray = _array(values, name)
    if shape is None:
        shape, same = list(nparray.shape), True
    else:
        size = int(np.prod(shape, dtype=np.int64))
        same = size == nparray.size
        if allow_broadcast:
            if nparray.shape not in ((1,), ()) and nparray.size != size:
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got "
                                f"{nparray.shape}.")
        else:
            if verify_shape and nparray.shape != tuple(shape):
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got "
                                f"{nparray.shape}.")
            if nparray.size > size:
                raise ValueError(f"Too many elements provided. Takes at most {size}, but got "
                                 f"{nparray.size}.")
    proto = TensorProto(dtype=_DTYPES[name][0], tensor_shape=TensorShapeProto(shape))
    if same and name in _CONTENT and nparray.size > 1:
        proto.tensor_content = np.ascontiguousarray(
            nparray, nparray.dtype.newbyteorder("<")).tobytes()
        return proto
    flat = nparray.reshape(-1)
    if name == "float16":
        flat = flat.view(np.uint16)
    getattr(proto, _LIST_OF[name]).extend(flat.tolist())
    return proto


def make_ndarray(tensor_proto) -> np.ndarray:
    """The numpy array a TensorProto holds (TF's tf.make_ndarray): tensor_content, or
    the typed values with the last one repeated to fill the shape (zeros when there are
    none); strings as bytes objects.

    Raises:
        TypeError: not a TensorProto, or a dtype not supported here.
        ValueError: tensor_content of the wrong size, or more values than the shape.
    """
    if not isinstance(tensor_proto, TensorProto):
        raise TypeError(f"make_ndarray: needs a TensorProto, got {type(tensor_proto).__name__}")
    if tensor_proto.dtype not in _BY_NUMBER:
        raise TypeError(f"Unsupported tensor type: {tensor_proto.dtype}")
    name = _BY_NUMBER[tensor_proto.dtype]
    shape = tuple(d.size for d in tensor_proto.tensor_shape.dim)
    count = int(np.prod(shape, dtype=np.int64))
    dtype = np.dtype(name)
    if tensor_proto.tensor_content and name != "object":
        data = tensor_proto.tensor_content
        if len(data) != count * dtype.itemsize:
            raise ValueError(f"make_ndarray: tensor_content holds {len(data)} bytes, not "
                             f"{count} values of {name}")
        return np.frombuffer(data, dtype.newbyteorder("<")).astype(dtype).reshape(shape)
    values = list(getattr(tensor_proto, _LIST_OF[name]))
    if name == "object":
        values = [_as_bytes(v) for v in values]
    if len(values) > count:
        raise ValueError(f"make_ndarray: {len(values)} values do not fit shape {list(shape)}")
    if not values:
        return np.zeros(shape, dtype) if name != "object" else \
            np.full(shape, b"", dtype=object)
    values = values + [values[-1]] * (count - len(values))
    if name == "object":
        out = np.empty(count, dtype=object)
        out[:] = values
        return out.reshape(shape)
    if name == "float16":
        return np.asarray(values, np.uint16).view(np.float16).reshape(shape)
    return np.asarray(values).astype(dtype).reshape(shape)


__all__ = ["make_ndarray", "make_tensor_proto"]

"""TF1's file and record decoding functions: decode_csv, decode_raw,
decode_padded_raw, serialize_tensor, parse_tensor, read_file, write_file,
matching_files and decode_compressed.

Names, argument order and defaults are tf.compat.v1's (decode_raw also takes TF1's
`bytes` alias of input_bytes); decode_padded_raw is TF 2's name for the
DecodePaddedRaw op, which tf.compat.v1 does not export. The ops are the onegraph
domain's (ops/io_ops.py, which says how onegraph's str stands for TF's bytes). What
TF's Python layer or kernel constructor refuses (a bad select_cols, a field_delim of
two characters, an unknown compression) is refused here while building, with a
ValueError or TypeError; what depends on the data raises ExecutionError when the graph
runs, with TF's words (NotFoundError for a missing file, DataLossError for a bad
stream).
"""

from __future__ import annotations

import numpy as np

from ..ops.io_ops import tf_type_name
from . import api
from . import graph as _g
from .api_strings import _str_arg
from .graph import Tensor

__all__ = ["decode_csv", "decode_raw", "decode_padded_raw", "serialize_tensor",
           "parse_tensor", "read_file", "write_file", "matching_files",
           "decode_compressed"]

_D = "onegraph"
_RAW_TYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
              "uint16", "uint32", "uint64", "bool")
_CSV_TYPES = ("int32", "int64", "float32", "float64", "object")


def _op(op_type: str, inputs: list, attrs: dict, name, what: str):
    _g.check_name(name, what)
    graph = next((t.graph for t in inputs if isinstance(t, Tensor)),
                 _g.get_default_graph())
    return graph.op(op_type, inputs, attrs, name=name or what, domain=_D,
                    num_outputs=len(inputs) - 1 if op_type == "DecodeCSV" else None)


def _strings(x, what: str) -> Tensor:
    """x as a string tensor (str, bytes and lists of them become constants).

    Raises:
        TypeError: x is a tensor of another dtype.
    """
    t = x if isinstance(x, Tensor) else api._t(_tf_constant(x))
    if t.dtype.numpy != np.dtype(object):
        raise TypeError(f"{what} must be a string tensor, got {t.dtype.short_name} "
                        f"{t.name!r}")
    return t


def _tf_constant(value) -> np.ndarray:
    """A Python value as TF's convert_to_tensor types it: ints int32 (int64 when one
    does not fit), floats float32, str/bytes string, an empty list float32."""
    if isinstance(value, np.ndarray):
        return value
    arr = np.asarray(value, dtype=object if _has_text(value) else None)
    if arr.dtype == object:
        return arr
    if arr.size == 0:
        return arr.astype(np.float32)
    if arr.dtype.kind in "iu" and arr.dtype.itemsize == 8 and not isinstance(value, np.generic):
        small = np.iinfo(np.int32)
        return arr.astype(np.int32 if small.min <= arr.min() and arr.max() <= small.max
                          else np.int64)
    if arr.dtype == np.float64 and not isinstance(value, np.generic):
        return arr.astype(np.float32)
    return arr


def _has_text(value) -> bool:
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_text(v) for v in value)
    return False


def _numpy_type(dtype, what: str, allowed: tuple) -> str:
    """The numpy name of a dtype given as og.float32, 'float32', numpy dtype, ...

    Raises:
        TypeError: it is none of `allowed`.
    """
    if dtype is None:
        raise TypeError(f"{what}: out_type is required")
    name = _g.as_dtype(dtype).numpy.name
    if name not in allowed:
        shown = ", ".join("string" if a == "object" else a for a in allowed)
        raise TypeError(f"{what}: out_type must be one of {shown}, got "
                        f"{'string' if name == 'object' else name}")
    return name


# ------------------------------------------------------------------ decoding

def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None) -> list:
    """Convert CSV records to tensors, one per column (tf.io.decode_csv): each output
    has the records' shape and the dtype of its default (int32, int64, float32,
    float64, string); an empty (or na_value) field takes the default, and a column
    whose default is empty is required.

    Raises:
        TypeError: records is not a string tensor, a default has another dtype.
        ValueError: field_delim not one character, select_cols not increasing,
            negative or of another length than record_defaults, a default of rank > 1
            or with several values.
        ExecutionError: (when run) a record has the wrong number of fields, a field
            does not parse, a required field is missing, quoting is broken.
    """
    what = "decode_csv"
    recs = _strings(records, f"{what}: records")
    delim = _str_arg(field_delim, f"{what}: field_delim")
    if len(delim.encode("utf-8", "surrogateescape")) != 1:
        raise ValueError(f"{what}: field_delim should be only 1 char, got {delim!r}")
    na = _str_arg(na_value, f"{what}: na_value")
    if isinstance(record_defaults, (str, bytes)) or not isinstance(
            record_defaults, (list, tuple)):
        raise TypeError(f"{what}: record_defaults must be a list, got "
                        f"{type(record_defaults).__name__}")
    cols = None
    if select_cols is not None:
        cols = [int(c) for c in select_cols]
        if any(b <= a for a, b in zip(cols, cols[1:])):
            raise ValueError(f"{what}: select_cols is not strictly increasing.")
        if cols and cols[0] < 0:
            raise ValueError(f"{what}: select_cols contains negative values.")
        if len(cols) != len(record_defaults):
            raise ValueError(f"{what}: Length of select_cols and record_defaults do not "
                             f"match.")
    defaults = []
    for f, d in enumerate(record_defaults):
        t = d if isinstance(d, Tensor) else api._t(_tf_constant(d))
        if t.dtype.numpy.name not in _CSV_TYPES:
            raise TypeError(f"{what}: record_defaults[{f}] must be int32, int64, float32, "
                            f"float64 or string, got {t.dtype.short_name}")
        shape = t.shape
        if shape is not None and len(shape) > 1:
            raise ValueError(f"{what}: Shape must be at most rank 1 but is rank "
                             f"{len(shape)} for record_defaults[{f}]")
        if shape is not None and len(shape) == 1 and shape[0] is not None and shape[0] > 1:
            raise ValueError(f"{what}: There should only be 1 default per field but field "
                             f"{f} has {shape[0]}")
        defaults.append(t)
    if not defaults:
        raise ValueError(f"{what}: record_defaults must not be empty")
    out = _op("DecodeCSV", [recs] + defaults,
              {"field_delim": delim, "use_quote_delim": int(bool(use_quote_delim)),
               "na_value": na, "select_cols": cols}, name, "DecodeCSV")
    return list(out) if isinstance(out, (list, tuple)) else [out]


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None,
               bytes=None):  # noqa: A002 - TF1's alias
    """Reinterpret the bytes of each string as numbers of out_type
    (tf.io.decode_raw): output shape is the input's plus one dimension, the string
    length over the type's size. `bytes` is TF1's alias of input_bytes.

    Raises:
        ValueError: both or neither of input_bytes and bytes given.
        TypeError: not a string tensor; out_type not a number/bool type.
        ExecutionError: (when run) strings of different lengths, a length not a
            multiple of the type's size.
    """
    what = "decode_raw"
    if (input_bytes is None) == (bytes is None):
        raise ValueError(f"{what}: give exactly one of input_bytes and bytes (its TF1 "
                         f"alias)")
    x = _strings(bytes if input_bytes is None else input_bytes, f"{what}: input_bytes")
    kind = _numpy_type(out_type, what, _RAW_TYPES)
    return _op("DecodeRaw", [x], {"out_type": kind,
                                  "little_endian": int(bool(little_endian))}, name, what)


def decode_padded_raw(input_bytes, fixed_length, out_type, little_endian=True, name=None):
    """Each string cut or zero-padded to fixed_length bytes and read as numbers of
    out_type (tf.io.decode_padded_raw): shape input + [fixed_length / size].

    Raises:
        TypeError: not a string tensor; out_type not a number/bool type.
        ValueError: a constant fixed_length that is not positive or not a multiple
            of the type's size.
        ExecutionError: (when run) the same for a computed fixed_length.
    """
    what = "decode_padded_raw"
    x = _strings(input_bytes, f"{what}: input_bytes")
    kind = _numpy_type(out_type, what, _RAW_TYPES)
    if not isinstance(fixed_length, Tensor):
        length = int(fixed_length)
        size = np.dtype(kind).itemsize
        if length <= 0 or length % size:
            raise ValueError(f"{what}: fixed_length ({length}) must be positive and a "
                             f"multiple of the size of out_type ({tf_type_name(kind)})")
        fixed_length = api._t(np.int32(length))
    return _op("DecodePaddedRaw", [x, fixed_length],
               {"out_type": kind, "little_endian": int(bool(little_endian))}, name, what)


def serialize_tensor(tensor, name=None) -> Tensor:
    """The tensor as TF's TensorProto bytes, a string scalar (tf.io.serialize_tensor).

    Raises:
        TypeError: a dtype TensorProto cannot hold here.
    """
    what = "serialize_tensor"
    t = tensor if isinstance(tensor, Tensor) else api._t(_tf_constant(tensor))
    if t.dtype.numpy.name not in _RAW_TYPES + ("object",):
        raise TypeError(f"{what}: dtype {t.dtype.short_name} is not supported")
    return _op("SerializeTensor", [t], {}, name, what)


def parse_tensor(serialized, out_type, name=None) -> Tensor:
    """TensorProto bytes (a string scalar) as a tensor of out_type
    (tf.io.parse_tensor); its shape is known only when run.

    Raises:
        TypeError: serialized is not a string tensor; out_type not supported.
        ExecutionError: (when run) the bytes are no TensorProto, or hold another dtype.
    """
    what = "parse_tensor"
    x = _strings(serialized, f"{what}: serialized")
    kind = _numpy_type(out_type, what, _RAW_TYPES + ("object",))
    return _op("ParseTensor", [x], {"out_type": kind}, name, what)


def decode_compressed(bytes, compression_type="", name=None) -> Tensor:  # noqa: A002
    """Each string inflated from a ZLIB or GZIP stream, or left as it is for ""
    (tf.io.decode_compressed); same shape.

    Raises:
        TypeError: not a string tensor.
        ValueError: compression_type is not "", "ZLIB" or "GZIP".
        DataLossError: (when run) a string that is not such a stream.
    """
    what = "decode_compressed"
    x = _strings(bytes, f"{what}: bytes")
    kind = _str_arg(compression_type, f"{what}: compression_type")
    if kind not in ("", "ZLIB", "GZIP"):
        raise ValueError(f"{what}: Only ZLIB, GZIP or NONE are supported compressions, "
                         f"got {kind!r}")
    return _op("DecodeCompressed", [x], {"compression_type": kind}, name, what)


# ------------------------------------------------------------------ files

def _scalar_strings(x, what: str) -> Tensor:
    t = _strings(x, what)
    if t.shape is not None and len(t.shape) != 0:
        raise ValueError(f"{what}: Shape must be rank 0 but is rank {len(t.shape)}")
    return t


def read_file(filename, name=None) -> Tensor:
    """The whole file's bytes as a string scalar (tf.io.read_file).

    Raises:
        TypeError / ValueError: filename is not a string scalar.
        NotFoundError: (when run) no such file; ExecutionError: it cannot be read.
    """
    what = "read_file"
    return _op("ReadFile", [_scalar_strings(filename, f"{what}: filename")], {}, name, what)


def write_file(filename, contents, name=None):
    """An op writing contents to filename (tf.io.write_file), its folder made first;
    the write is atomic (temp file, fsync, rename).

    Raises:
        TypeError / ValueError: filename or contents is not a string scalar.
        ExecutionError: (when run) the file cannot be written.
    """
    what = "write_file"
    return _op("WriteFile", [_scalar_strings(filename, f"{what}: filename"),
                             _scalar_strings(contents, f"{what}: contents")], {}, name, what)


def matching_files(pattern, name=None) -> Tensor:
    """The sorted paths matching a glob pattern or a 1-D list of them
    (tf.io.matching_files): '*' and '?' never cross '/', and match dot files.

    Raises:
        TypeError: pattern is not a string tensor.
        ValueError: pattern has rank above 1.
    """
    what = "matching_files"
    t = _strings(pattern, f"{what}: pattern")
    if t.shape is not None and len(t.shape) > 1:
        raise ValueError(f"{what}: Shape must be at most rank 1 but is rank {len(t.shape)}")
    return _op("MatchingFiles", [t], {}, name, what)

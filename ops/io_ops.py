"""Operators: TF's file and record decoding ops (onegraph domain).

DecodeCSV(records, record_defaults*) -> output*: TF's CSV parser (quoting with doubled
quotes, one-byte delimiter, na_value, select_cols); output i has the dtype of default i
(int32, int64, float32, float64 or string) and the records' shape.
DecodeRaw(bytes) / DecodePaddedRaw(input_bytes, fixed_length): each string's bytes as
numbers of out_type, one more (last) dimension.
SerializeTensor(tensor) / ParseTensor(serialized): TF's TensorProto wire format
(dtype, shape, tensor_content; string_val for strings), byte for byte as TF writes it.
ReadFile / WriteFile / MatchingFiles: files (stateful: never folded); WriteFile
writes through a temp file, fsync and rename. DecodeCompressed: zlib / gzip streams.

Strings are bytes to TF; onegraph's str stands for `s.encode("utf-8",
"surrogateescape")` (ops/strings_tf.py's bridge), so binary data round-trips. Errors
TF raises while running (InvalidArgumentError) are ExecutionError here with TF's
words; a missing file is NotFoundError.
"""

from __future__ import annotations

import base64
import os
import re
import stat
import zlib
from fnmatch import fnmatchcase

import numpy as np

from ..errors import DataLossError, ExecutionError, NotFoundError, ShapeError
from ..format.atomic import atomic_open
from .regex_re2 import text_bytes
from .registry import REQUIRED, TensorInfo, define
from .strings_tf import _parse_float
from .summary_encoding import field_bytes, field_varint, packed_int64s, read_fields

_D = "onegraph"
_OBJ = np.dtype(object)
_SPACE = b" \t\n\v\f\r"

# numpy dtype name -> (TF's DataType number, TF's DataTypeString), for TensorProto and
# for the words of TF's messages
_TF_TYPES = {
    "float32": (1, "float"), "float64": (2, "double"), "int32": (3, "int32"),
    "uint8": (4, "uint8"), "int16": (5, "int16"), "int8": (6, "int8"),
    "object": (7, "string"), "int64": (9, "int64"), "bool": (10, "bool"),
    "uint16": (17, "uint16"), "float16": (19, "half"), "uint32": (22, "uint32"),
    "uint64": (23, "uint64"),
}
_BY_TF_NUMBER = {num: np.dtype(name) for name, (num, _) in _TF_TYPES.items()}
_RAW_TYPES = tuple(n for n in _TF_TYPES if n != "object")
_CSV_TYPES = ("int32", "int64", "float32", "float64", "object")


def _bytes(v) -> bytes:
    if isinstance(v, bytes):
        return v
    if not isinstance(v, str):
        raise ExecutionError(f"expected a string, got {type(v).__name__} {v!r:.40}")
    return text_bytes(v)


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def tf_type_name(dtype) -> str:
    """TF's DataTypeString of a numpy dtype ("float", "double", "int32", "string",
    ...). Never raises (an unknown dtype gives its numpy name)."""
    dtype = np.dtype(dtype)
    return _TF_TYPES.get(dtype.name, (0, dtype.name))[1]


def _obj_array(items, shape) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _scalar_bytes(x, what: str, op: str) -> bytes:
    arr = np.asarray(x, dtype=object)
    if arr.ndim != 0:
        raise ShapeError(f"{op}: {what} tensor must be scalar, but had shape: "
                         f"{list(arr.shape)}")
    return _bytes(arr[()])


# ------------------------------------------------------------------ DecodeCSV

class CsvFields:
    """TF's ExtractFields for one record: bytes in, the selected fields out."""

    def __init__(self, delim: int, quote: bool, select: list):
        self.delim, self.quote, self.select = delim, quote, select

    def _include(self, sel: int, parsed: int) -> bool:
        return not self.select or (sel < len(self.select) and self.select[sel] == parsed)

    def split(self, rec: bytes) -> list:
        """The fields of `rec` (only the selected ones when select_cols is set).

        Raises:
            ExecutionError: a quote or CR/LF inside an unquoted field, a lone quote
                inside a quoted one, a quoted field not closed by quote + delim or end.
        """
        out: list = []
        if not rec:
            return out
        delim, n, i, parsed, sel = self.delim, len(rec), 0, 0, 0
        while i < n:
            if rec[i] in (10, 13):   # TF skips CR/LF between fields
                i += 1
                continue
            include = self._include(sel, parsed)
            field = bytearray()
            if self.quote and rec[i] == 34:
                i += 1
                while i < n - 1 and (rec[i] != 34 or rec[i + 1] != delim):
                    if rec[i] != 34:
                        field.append(rec[i])
                        i += 1
                        continue
                    if rec[i + 1] != 34:
                        raise ExecutionError("Quote inside a string has to be escaped by "
                                             "another quote")
                    field.append(34)
                    i += 2
                if not (i < n and rec[i] == 34 and (i == n - 1 or rec[i + 1] == delim)):
                    raise ExecutionError("Quoted field has to end with quote followed by "
                                         "delim or end")
                i += 2
            else:
                while i < n and rec[i] != delim:
                    if (self.quote and rec[i] == 34) or rec[i] in (10, 13):
                        raise ExecutionError("Unquoted fields cannot have quotes/CRLFs "
                                             "inside")
                    field.append(rec[i])
                    i += 1
                i += 1
            parsed += 1
            if include:
                out.append(bytes(field))
                sel += 1
                if self.select and sel == len(self.select):
                    return out
        if self._include(sel, parsed) and rec[-1] == delim:
            out.append(b"")                 # a trailing delimiter ends an empty field
        return out


_INT_RE = re.compile(rb"[+-]?[0-9]+")


def _parse_int(field: bytes, dtype: np.dtype):
    """TF's safe_strto32/64: ASCII spaces around, an optional sign, decimal digits in
    range; None when it does not parse."""
    t = field.strip(_SPACE)
    if not _INT_RE.fullmatch(t):
        return None
    v = int(t)
    info = np.iinfo(dtype)
    return v if info.min <= v <= info.max else None


def csv_value(field: bytes, dtype: np.dtype, where: str):
    """A CSV field parsed as `dtype` (TF's rules: spaces around numbers, a sign,
    decimal ints in range; strings as onegraph's str).

    Raises:
        ExecutionError: "Field <where> is not a valid <type>: <field>".
    """
    if dtype == _OBJ:
        return _text(field)
    if dtype.kind == "i":
        v = _parse_int(field, dtype)
    else:
        v = _parse_float(field.decode("latin-1"))
    if v is None:
        raise ExecutionError(f"Field {where} is not a valid {tf_type_name(dtype)}: "
                             f"{_text(field)}")
    return v


def _check_default(default, f: int) -> np.ndarray:
    d = np.asarray(default)
    if d.ndim > 1:
        raise ShapeError(f"DecodeCSV: Shape must be at most rank 1 but is rank {d.ndim} "
                         f"for record_defaults {f}")
    if d.size > 1:
        raise ExecutionError(f"There should only be 1 default per field but field {f} has "
                             f"{d.size}")
    if d.dtype.name not in _CSV_TYPES:
        raise ExecutionError(f"DecodeCSV: record_defaults {f} must be int32, int64, "
                             f"float32, float64 or string, got {d.dtype}")
    return d


def _csv_kernel(inputs, attrs, ctx):
    """TF's DecodeCSV: every record split into fields, each parsed as its default's
    dtype (an empty or na_value field takes the default).

    Raises:
        ShapeError: a default of rank > 1.
        ExecutionError: a default with several values, a record with the wrong field
            count, a field that does not parse, a required field missing, bad quoting.
    """
    records = np.asarray(inputs[0], dtype=object)
    defaults = [_check_default(d, f) for f, d in enumerate(inputs[1:])]
    splitter = CsvFields(_bytes(attrs["field_delim"])[0], bool(attrs["use_quote_delim"]),
                          [int(c) for c in attrs["select_cols"] or ()])
    na = _bytes(attrs["na_value"])
    flat = records.reshape(-1)
    columns: list = [[] for _ in defaults]
    for r, rec in enumerate(flat.tolist()):
        fields = splitter.split(_bytes(rec))
        if len(fields) != len(defaults):
            raise ExecutionError(f"Expect {len(defaults)} fields but have {len(fields)} in "
                                 f"record {r}")
        for f, (field, d) in enumerate(zip(fields, defaults)):
            if not field or field == na:
                if d.size != 1:
                    raise ExecutionError(f"Field {f} is required but missing in record "
                                         f"{r}!")
                columns[f].append(d.reshape(-1)[0])
            else:
                columns[f].append(csv_value(field, d.dtype, f"{f} in record {r}"))
    outs = []
    for col, d in zip(columns, defaults):
        if d.dtype == _OBJ:
            outs.append(_obj_array(col, records.shape))
        else:
            outs.append(np.asarray(col, dtype=np.float64 if d.dtype.kind == "f" else d.dtype)
                        .astype(d.dtype).reshape(records.shape))
    return tuple(outs)


def _csv_problem(attrs) -> str | None:
    delim = attrs["field_delim"]
    if len(_bytes(delim)) != 1:
        return f"field_delim should be only 1 char, got {delim!r}"
    cols = [int(c) for c in attrs["select_cols"] or ()]
    if any(c < 0 for c in cols):
        return "select_cols should be non-negative"
    if any(b <= a for a, b in zip(cols, cols[1:])):
        return "select_cols is not strictly increasing"
    return None


def _csv_infer(attrs, inputs):
    outs = []
    for f, d in enumerate(inputs[1:]):
        if d.shape is not None and len(d.shape) > 1:
            raise ShapeError(f"DecodeCSV: Shape must be at most rank 1 but is rank "
                             f"{len(d.shape)} for record_defaults {f}")
        outs.append(TensorInfo(d.dtype, inputs[0].shape))
    return outs


# ------------------------------------------------------------------ DecodeRaw

def _raw_dtype(attrs, little: bool) -> np.dtype:
    dtype = np.dtype(attrs["out_type"])
    return dtype.newbyteorder("<" if little else ">") if dtype.itemsize > 1 else dtype


def _raw_kernel(inputs, attrs, ctx):
    """TF's DecodeRaw: each string's bytes as numbers; all strings the same length.

    Raises:
        ExecutionError: strings of different lengths, a length not a multiple of the
            type's size.
    """
    x = np.asarray(inputs[0], dtype=object)
    data = [_bytes(v) for v in x.reshape(-1).tolist()]
    out_dtype = np.dtype(attrs["out_type"])
    size = len(data[0]) if data else 0
    for i, b in enumerate(data):
        if len(b) != size:
            raise ExecutionError(f"DecodeRaw requires input strings to all be the same "
                                 f"size, but element {i} has size {size} != {len(b)}")
    if size % out_dtype.itemsize:
        raise ExecutionError(f"Input to DecodeRaw has length {size} that is not a multiple "
                             f"of {out_dtype.itemsize}, the size of "
                             f"{tf_type_name(out_dtype)}")
    width = size // out_dtype.itemsize
    raw = np.frombuffer(b"".join(data), dtype=_raw_dtype(attrs, bool(attrs["little_endian"])))
    return (raw.astype(out_dtype).reshape(x.shape + (width,)),)


def _raw_infer(attrs, inputs):
    shape = inputs[0].shape
    return [TensorInfo(np.dtype(attrs["out_type"]), None if shape is None else shape + (None,))]


def _padded_kernel(inputs, attrs, ctx):
    """TF's DecodePaddedRaw: each string cut or zero-padded to fixed_length bytes, then
    read as numbers.

    Raises:
        ExecutionError: fixed_length not positive or not a multiple of the type's size.
    """
    x = np.asarray(inputs[0], dtype=object)
    length = int(np.asarray(inputs[1]))
    out_dtype = np.dtype(attrs["out_type"])
    if length % out_dtype.itemsize:
        raise ExecutionError(f"fixed_length ({length}) must be a multiple of the size of "
                             f"out_type ({tf_type_name(out_dtype)})")
    if length <= 0:
        raise ExecutionError(f"fixed_length ({length}) must be positive")
    data = b"".join(_bytes(v)[:length].ljust(length, b"\0") for v in x.reshape(-1).tolist())
    raw = np.frombuffer(data, dtype=_raw_dtype(attrs, bool(attrs["little_endian"])))
    return (raw.astype(out_dtype).reshape(x.shape + (length // out_dtype.itemsize,)),)


def _padded_infer(attrs, inputs):
    shape, fixed = inputs[0].shape, inputs[1].value
    dtype = np.dtype(attrs["out_type"])
    width = None
    if fixed is not None and int(fixed) > 0 and int(fixed) % dtype.itemsize == 0:
        width = int(fixed) // dtype.itemsize
    return [TensorInfo(dtype, None if shape is None else shape + (width,))]


def _raw_problem(attrs) -> str | None:
    if attrs["out_type"] not in _RAW_TYPES:
        return f"out_type must be one of {', '.join(_RAW_TYPES)}, got {attrs['out_type']!r}"
    return None


# ------------------------------------------------------------------ Serialize/ParseTensor

def serialize_array(x) -> bytes:
    """A numpy array as TF's Tensor::AsProtoTensorContent TensorProto bytes: dtype,
    tensor_shape (always present), tensor_content (string_val for strings).

    Raises:
        ExecutionError: a dtype TF's TensorProto cannot hold here.
    """
    x = np.asarray(x)
    if x.dtype.kind in "US":
        x = x.astype(object)
    if x.dtype.name not in _TF_TYPES:
        raise ExecutionError(f"SerializeTensor: dtype {x.dtype} is not supported")
    dims = b"".join(field_bytes(2, field_varint(1, d), always=True) for d in x.shape)
    out = field_varint(1, _TF_TYPES[x.dtype.name][0]) + field_bytes(2, dims, always=True)
    if x.dtype == _OBJ:
        return out + b"".join(field_bytes(8, _bytes(v), always=True)
                              for v in x.reshape(-1).tolist())
    return out + field_bytes(4, np.ascontiguousarray(x, x.dtype.newbyteorder("<")).tobytes())


def _serialize_kernel(inputs, attrs, ctx):
    """SerializeTensor: the input as TensorProto bytes (a string scalar).

    Raises:
        ExecutionError: an unsupported dtype.
    """
    return (np.asarray(_text(serialize_array(inputs[0])), dtype=object),)


def _shape_of(body: bytes) -> tuple:
    dims = []
    for field, _, value in read_fields(body):
        if field == 2:
            size = 0
            for f2, _, v2 in read_fields(value):
                if f2 == 1:
                    size = v2 - (1 << 64) if v2 >= 1 << 63 else v2
            if size < 0:
                raise ExecutionError(f"ParseTensor: a dim of {size} is negative")
            dims.append(size)
        elif field == 3 and value:
            raise ExecutionError("ParseTensor: the TensorProto's shape has unknown rank")
    return tuple(dims)


# TensorProto's typed value fields: number -> (wire dtype, numpy dtypes it fills)
_VAL_FIELDS = {5: "<f4", 6: "<f8", 7: "int32", 10: "int64", 11: "bool", 13: "int32",
               16: "uint32", 17: "uint64"}


def _unpacked(field: int, wire: int, value) -> list:
    """The values of one TensorProto *_val field entry (a varint, a fixed value, or a
    packed run); varints as int64, except uint64_val's.

    Raises:
        ValueError: a packed varint is truncated or overlong.
    """
    if wire == 0:
        return [value]
    if wire in (5, 1) or field in (5, 6):   # fixed32/fixed64 values
        return list(np.frombuffer(value, _VAL_FIELDS[field]))
    values = packed_int64s(value)
    return [v % 2 ** 64 for v in values] if field == 17 else values


def parse_array(data: bytes) -> np.ndarray:
    """TensorProto bytes as a numpy array (tensor_content or the typed *_val fields,
    the last value repeated to fill as TF's FromProto does).

    Raises:
        ExecutionError: the bytes are not a TensorProto, or hold a dtype not supported
            here, or values that do not fit the shape.
    """
    try:
        return _parse_fields(read_fields(data))
    except ValueError:                  # malformed protobuf: TF's words, data as base64
        shown = base64.b64encode(data).decode("ascii")
        raise ExecutionError(f"Could not parse `serialized` as TensorProto, base64: "
                             f"{shown}") from None


def _parse_fields(fields: list) -> np.ndarray:
    num, shape, content, strings, vals = 0, (), None, [], []
    for field, wire, value in fields:
        if field == 1 and wire == 0:
            num = value
        elif field == 2 and wire == 2:
            shape = _shape_of(value)
        elif field == 4 and wire == 2:
            content = value
        elif field == 8 and wire == 2:
            strings.append(value)
        elif field in _VAL_FIELDS:
            vals.extend(_unpacked(field, wire, value))
    if num not in _BY_TF_NUMBER:
        raise ExecutionError(f"ParseTensor: TensorProto dtype {num} is not supported")
    dtype = _BY_TF_NUMBER[num]
    count = int(np.prod(shape, dtype=np.int64))
    if dtype == _OBJ:
        vals = [_text(s) for s in strings]
    elif content is not None:
        if len(content) != count * dtype.itemsize:
            raise ExecutionError(f"ParseTensor: tensor_content holds {len(content)} bytes, "
                                 f"not {count} {tf_type_name(dtype)} values")
        return np.frombuffer(content, dtype.newbyteorder("<")).astype(dtype).reshape(shape)
    if dtype == np.float16 and vals:
        vals = list(np.asarray(vals, np.uint16).view(np.float16))
    if len(vals) > count or (count and not vals):
        if not vals and dtype != _OBJ:      # TF: no values at all means zeros
            return np.zeros(shape, dtype)
        raise ExecutionError(f"ParseTensor: {len(vals)} values do not fit shape "
                             f"{list(shape)}")
    vals = vals + [vals[-1]] * (count - len(vals)) if vals else vals
    if dtype == _OBJ:
        return _obj_array(vals, shape)
    if dtype.kind in "iu":
        # varints carry negative values as 64-bit two's complement
        wide = np.asarray([int(v) & 0xFFFFFFFFFFFFFFFF for v in vals], np.uint64)
        return wide.view(np.int64).astype(dtype).reshape(shape)
    return np.asarray(vals).astype(dtype).reshape(shape)


def _parse_kernel(inputs, attrs, ctx):
    """ParseTensor: TensorProto bytes (a string scalar) as a tensor of out_type.

    Raises:
        ShapeError: serialized is not a scalar.
        ExecutionError: not a TensorProto, or its dtype is not out_type.
    """
    data = _scalar_bytes(inputs[0], "Serialized", "ParseTensor")
    out = parse_array(data)
    want = np.dtype(attrs["out_type"])
    if out.dtype != want:
        raise ExecutionError(f"Type mismatch between parsed tensor ({tf_type_name(out.dtype)}) "
                             f"and dtype ({tf_type_name(want)})")
    return (out,)


def _parse_problem(attrs) -> str | None:
    if attrs["out_type"] not in _TF_TYPES:
        return f"out_type must be one of {', '.join(_TF_TYPES)}, got {attrs['out_type']!r}"
    return None


# ------------------------------------------------------------------ files

def _read_file_kernel(inputs, attrs, ctx):
    """ReadFile: the whole file as a string scalar.

    Raises:
        ShapeError: filename not a scalar.
        NotFoundError: no such file; ExecutionError: it cannot be read.
    """
    path = _text(_scalar_bytes(inputs[0], "Input filename", "ReadFile"))
    try:
        with open(path, "rb") as fh:
            return (np.asarray(_text(fh.read()), dtype=object),)
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None
    except OSError as e:
        raise ExecutionError(f"ReadFile: cannot read {path!r}: {e.strerror or e}") from None


def _write_file_kernel(inputs, attrs, ctx):
    """WriteFile: contents written to filename (its folder made first, as TF does),
    through a temp file, fsync and rename.

    Raises:
        ShapeError: filename or contents not a scalar.
        ExecutionError: the file cannot be written.
    """
    path = _text(_scalar_bytes(inputs[0], "Input filename", "WriteFile"))
    data = _scalar_bytes(inputs[1], "Contents", "WriteFile")
    try:
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with atomic_open(path, "wb") as fh:
            fh.write(data)
    except OSError as e:
        raise ExecutionError(f"WriteFile: cannot write {path!r}: {e.strerror or e}") from None
    return ()


def _has_magic(part: str) -> bool:
    return any(c in part for c in "*?[")


def _glob(pattern: str) -> list:
    """Paths matching `pattern` as TF's GetMatchingPaths: fnmatch per path component
    ('*' never crosses '/', and matches names starting with '.')."""
    parts = pattern.split("/")
    found = ["/" if pattern.startswith("/") else ""]
    for k, part in enumerate(parts):
        if k == 0 and part == "":
            continue
        last = k == len(parts) - 1
        nxt = []
        for base in found:
            if not _has_magic(part):
                cand = base + part
                if os.path.lexists(cand) and (last or os.path.isdir(cand)):
                    nxt.append(cand + ("" if last else "/"))
                continue
            try:
                names = os.listdir(base or ".")
            except OSError:
                continue
            for name in names:
                if not fnmatchcase(name, part):
                    continue
                cand = base + name
                if last:
                    nxt.append(cand)
                elif stat.S_ISDIR(os.stat(cand).st_mode):
                    nxt.append(cand + "/")
        found = nxt
    return found


def _matching_kernel(inputs, attrs, ctx):
    """MatchingFiles: every path matching any pattern, sorted (1-D strings).

    Raises:
        ShapeError: pattern has rank above 1.
    """
    patterns = np.asarray(inputs[0], dtype=object)
    if patterns.ndim > 1:
        raise ShapeError(f"MatchingFiles: Shape must be at most rank 1 but is rank "
                         f"{patterns.ndim}")
    names = []
    for p in patterns.reshape(-1).tolist():
        names.extend(_glob(_text(_bytes(p))))
    names.sort(key=text_bytes)              # TF sorts the bytes
    return (_obj_array(names, (len(names),)),)


# ------------------------------------------------------------------ DecodeCompressed

_WBITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}


def _decompress_kernel(inputs, attrs, ctx):
    """DecodeCompressed: each string inflated (ZLIB or GZIP stream), or as it is ("").

    Raises:
        DataLossError: a string that is not a whole stream of that kind.
    """
    x = np.asarray(inputs[0], dtype=object)
    kind = attrs["compression_type"]
    if not kind:
        return (x.copy(),)
    out = []
    for i, v in enumerate(x.reshape(-1).tolist()):
        d = zlib.decompressobj(_WBITS[kind])
        try:
            data = d.decompress(_bytes(v)) + d.flush()
        except zlib.error as e:
            # zlib's "Error -3 while decompressing data: X" in TF's inflate() words
            m = re.match(r"Error (-?\d+) while decompressing data: (.*)", str(e))
            why = f"error {m.group(1)}: {m.group(2)}" if m else str(e)
            raise DataLossError(f"inflate() failed with {why} (element {i}, "
                                f"{kind})") from None
        if not d.eof:
            raise DataLossError(f"DecodeCompressed: element {i} is a truncated {kind} "
                                f"stream")
        out.append(_text(data))
    return (_obj_array(out, x.shape),)


def _compression_problem(attrs) -> str | None:
    if attrs["compression_type"] not in ("", "ZLIB", "GZIP"):
        return (f"Only ZLIB, GZIP or NONE are supported compressions, got "
                f"{attrs['compression_type']!r}")
    return None


def _same_strings(attrs, inputs):
    return [TensorInfo(_OBJ, inputs[0].shape)]


def _string_scalar(attrs, inputs):
    return [TensorInfo(_OBJ, ())]


OPS = (
    define("DecodeCSV", ["records", "record_defaults*"], ["output*"], _csv_kernel,
           attrs=[("field_delim", "string", ","), ("use_quote_delim", "int", 1),
                  ("na_value", "string", ""), ("select_cols", "ints", None)],
           infer=_csv_infer, domain=_D, check_attrs=_csv_problem,
           doc="TF's DecodeCSV: one output per record default, of its dtype."),
    define("DecodeRaw", ["bytes"], ["output"], _raw_kernel,
           attrs=[("out_type", "string", REQUIRED), ("little_endian", "int", 1)],
           infer=_raw_infer, domain=_D, check_attrs=_raw_problem,
           doc="TF's DecodeRaw (out_type a numpy dtype name)."),
    define("DecodePaddedRaw", ["input_bytes", "fixed_length"], ["output"], _padded_kernel,
           attrs=[("out_type", "string", REQUIRED), ("little_endian", "int", 1)],
           infer=_padded_infer, domain=_D, check_attrs=_raw_problem,
           doc="TF's DecodePaddedRaw (out_type a numpy dtype name)."),
    define("SerializeTensor", ["tensor"], ["serialized"], _serialize_kernel,
           infer=_string_scalar, domain=_D, doc="TF's SerializeTensor (TensorProto bytes)."),
    define("ParseTensor", ["serialized"], ["output"], _parse_kernel,
           attrs=[("out_type", "string", REQUIRED)],
           infer=lambda attrs, inputs: [TensorInfo(np.dtype(attrs["out_type"]), None)],
           domain=_D, check_attrs=_parse_problem, doc="TF's ParseTensor."),
    define("ReadFile", ["filename"], ["contents"], _read_file_kernel, infer=_string_scalar,
           domain=_D, stateful=True, doc="TF's ReadFile (the file's bytes)."),
    define("WriteFile", ["filename", "contents"], [], _write_file_kernel,
           infer=lambda attrs, inputs: [], domain=_D, stateful=True,
           doc="TF's WriteFile (atomic: temp file, fsync, rename)."),
    define("MatchingFiles", ["pattern"], ["filenames"], _matching_kernel,
           infer=lambda attrs, inputs: [TensorInfo(_OBJ, (None,))], domain=_D,
           stateful=True, doc="TF's MatchingFiles (sorted glob)."),
    define("DecodeCompressed", ["bytes"], ["output"], _decompress_kernel,
           attrs=[("compression_type", "string", "")], infer=_same_strings, domain=_D,
           check_attrs=_compression_problem, doc="TF's DecodeCompressed (zlib/gzip)."),
)

"""Operators: TF's lookup tables (the `onegraph` domain).

A table op (HashTable, MutableHashTable) yields a handle to a `Table` that lives in the
Session's state (keyed by `shared_name`), as queues do: every step of a Session sees the
same table. InitializeTable / InitializeTableFromTextFile fill a static table once;
LookupTableFind reads it ("Table not initialized." before that, as TF's
FailedPreconditionError); LookupTableInsert / Remove change a mutable table;
LookupTableFindWithBuckets maps keys missing from the table to TF's out-of-vocabulary
buckets (FarmHash Fingerprint64 of the key's bytes, integers as their decimal text).

Keys are Python str (strings) or int; values are numpy arrays of the table's value
dtype and value shape.
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import ExecutionError, NotFoundError
from ..format import DType
from .registry import TensorInfo, define
from .strings_tf import fingerprint64

DOMAIN = "onegraph"
_CREATE_LOCK = threading.Lock()


class Table:
    """A hash table of one key dtype and one value dtype (thread-safe).

    Args:
        name: shared name (for messages).
        key_dtype, value_dtype: numpy dtypes (object for strings).
        value_shape: the shape of each value (() for scalars).
        mutable: whether insert/remove are allowed and lookups need no initialization.
    """

    def __init__(self, name: str, key_dtype, value_dtype, value_shape=(), mutable=False):
        self.name, self.key_dtype, self.value_dtype = name, key_dtype, value_dtype
        self.value_shape = tuple(value_shape)
        self.mutable = mutable
        self.data: dict = {}
        self.initialized = mutable
        self.lock = threading.Lock()

    def key(self, k):
        """A dict key for one array element."""
        return _text(k) if self.key_dtype == object else int(k)

    def check_ready(self) -> None:
        """Raise ExecutionError("Table not initialized.") for a static table not yet
        filled (TF's FailedPreconditionError)."""
        if not self.initialized:
            raise ExecutionError("Table not initialized.")

    def fill(self, keys: list, values: np.ndarray) -> None:
        """Initialize a static table from parallel keys and values.

        A second initialization with the same data is a no-op, as in TF.

        Raises:
            ExecutionError: a key repeats with a different value, or the table was
                already initialized with different data.
        """
        data: dict = {}
        for k, v in zip(keys, values):
            k = self.key(k)
            if self.value_dtype == object:
                v = _text(v)
            if k in data and not _same(data[k], v):
                raise ExecutionError(
                    f"HashTable has different value for same key. Key {k} has "
                    f"{_show(data[k])} and trying to add value {_show(v)}")
            data[k] = v
        with self.lock:
            if self.initialized:
                if data.keys() != self.data.keys() or not all(
                        _same(v, self.data[k]) for k, v in data.items()):
                    raise ExecutionError("Table was already initialized with different data.")
                return
            self.data, self.initialized = data, True

    def find(self, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        """The values of `keys` (any shape), `default` for absent keys.

        Raises:
            ExecutionError: a static table is not initialized.
        """
        self.check_ready()
        if self.value_dtype == object and np.ndim(default) == 0:
            default = _text(np.asarray(default).item())   # one str, not a 0-d array
        flat = keys.reshape(-1)
        out = np.empty((flat.size,) + self.value_shape, self.value_dtype)
        with self.lock:
            for i, k in enumerate(flat):
                out[i] = self.data.get(self.key(k), default)
        return out.reshape(keys.shape + self.value_shape)


def _text(v) -> str:
    """A string element as str (bytes ride as str with surrogateescape)."""
    return v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else str(v)


def _same(a, b) -> bool:
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def _show(v) -> str:
    """A value as TF prints it in messages."""
    v = np.asarray(v)
    if v.ndim == 0:
        if v.dtype == object:
            return str(v.item())
        if v.dtype.kind == "f":
            return f"{float(v):g}"
        return str(v.item())
    return str(v.tolist())


def _numpy(name: str):
    return DType.parse(name).numpy


def _table_kernel(mutable: bool):
    def kernel(inputs, attrs, ctx):
        """The session's table named attrs['shared_name'] (created on first use)."""
        state = ctx.state
        key = ("lookup_table", attrs["shared_name"])
        with _CREATE_LOCK:
            table = state.get(key)
            if table is None:
                shape = tuple(int(d) for d in attrs["value_shape"])
                table = Table(attrs["shared_name"], _numpy(attrs["key_dtype"]),
                              _numpy(attrs["value_dtype"]), shape, mutable)
                state[key] = table
        if table.mutable != mutable:
            raise ExecutionError(f"table {table.name!r} already exists as a "
                                 f"{'mutable' if table.mutable else 'static'} table")
        return (table,)
    return kernel


def _t(x) -> Table:
    if not isinstance(x, Table):
        raise ExecutionError(f"expected a lookup table handle, got {type(x).__name__}")
    return x


def _check_dtype(table: Table, arr: np.ndarray, want, what: str) -> None:
    if (arr.dtype == object) != (want == object) or (want != object and arr.dtype != want):
        raise ExecutionError(f"table {table.name!r}: {what} have dtype {arr.dtype}, the table "
                             f"expects {np.dtype(want)}")


def _values_for(table: Table, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values` checked to be keys.shape + value_shape, flattened to one row per key.

    Raises:
        ExecutionError: a dtype or the shape is wrong (TF's message).
    """
    _check_dtype(table, keys, table.key_dtype, "keys")
    _check_dtype(table, values, table.value_dtype, "values")
    want = keys.shape + table.value_shape
    if values.shape != want:
        raise ExecutionError(f"Expected shape {list(want)} for value, got "
                             f"{list(values.shape)}")
    return values.reshape((keys.size,) + table.value_shape)


def _initialize(inputs, attrs, ctx):
    """Fill a static table from the keys and values inputs."""
    table = _t(inputs[0])
    keys, values = np.asarray(inputs[1]), np.asarray(inputs[2])
    if keys.ndim != 1 or values.shape[:1] != keys.shape:
        raise ExecutionError(f"table {table.name!r}: keys and values must be vectors of "
                             f"one length, got shapes {list(keys.shape)} and "
                             f"{list(values.shape)}")
    values = _values_for(table, keys, values)
    table.fill(list(keys), values)
    return ()


def _read_lines(path: str) -> list[tuple[str, int]]:
    """The lines of a text file (UTF-8 as str with surrogateescape), without the line
    ends ("\\n" or "\\r\\n", as TF's line reader drops them), each with the byte
    offset just past its end (TF names an empty line by it).

    Raises:
        NotFoundError: the file cannot be opened.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        raise NotFoundError(f"{path}; {e.strerror or 'cannot be read'}") from None
    out, start = [], 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        line = data[start:end].rstrip(b"\n")
        if line.endswith(b"\r"):
            line = line[:-1]
        out.append((line.decode("utf-8", "surrogateescape"), end))
        start = end
    return out


def _field(text: str, line_no: int, dtype):
    """One key or value field parsed as the table's dtype (TF's messages)."""
    if dtype == object:
        return text
    if np.dtype(dtype).kind in "iu":
        try:
            value = int(text, 10)
            np.array(value, dtype)      # range check
            return value
        except (ValueError, OverflowError):
            raise ExecutionError(f"Field {text} in line {line_no} is not a valid "
                                 f"{np.dtype(dtype).name}.") from None
    try:
        return float(text)
    except ValueError:
        raise ExecutionError(f"Field {text} in line {line_no} is not a valid "
                             f"{'float' if np.dtype(dtype) == np.float32 else 'double'}."
                             ) from None


def _pick(columns: list, line: str, index: int, line_no: int, dtype):
    if index == -2:         # TextFileIndex.WHOLE_LINE
        return _field(line, line_no, dtype)
    if index == -1:         # TextFileIndex.LINE_NUMBER
        return line_no
    return _field(columns[index], line_no, dtype)


def _initialize_from_file(inputs, attrs, ctx):
    """Fill a static table from a text file: one entry per line, key and value each the
    whole line (-2), the line number (-1) or a column split at `delimiter`."""
    table = _t(inputs[0])
    path = str(np.asarray(inputs[1]).item())
    ki, vi = int(attrs["key_index"]), int(attrs["value_index"])
    vocab_size, delim = int(attrs["vocab_size"]), attrs["delimiter"]
    lines = _read_lines(path)
    need = max(ki, vi) + 1
    keys, values = [], []
    for n, (line, end) in enumerate(lines):
        if 0 <= vocab_size <= n:
            break
        if line == "":
            raise ExecutionError(f"Invalid content in {path}: empty line found at "
                                 f"position {end}.")
        columns = line.split(delim) if need > 0 else []
        if len(columns) < need:
            raise ExecutionError(f"Invalid number of columns in {path} line {n} ({line}) : "
                                 f"expected at least {need} got {len(columns)}")
        keys.append(_pick(columns, line, ki, n, table.key_dtype))
        values.append(_pick(columns, line, vi, n, table.value_dtype))
    if vocab_size > len(lines):
        raise ExecutionError(f"Invalid vocab_size in {path}: expected {vocab_size} but got "
                             f"{len(lines)}")
    arr = np.empty(len(values), table.value_dtype)
    arr[:] = values
    table.fill(keys, arr)
    return ()


def _default(table: Table, default) -> np.ndarray:
    default = np.asarray(default)
    _check_dtype(table, default, table.value_dtype, "default_value")
    if default.shape not in ((), table.value_shape):
        raise ExecutionError(f"table {table.name!r}: default_value must have shape "
                             f"{list(table.value_shape)}, got {list(default.shape)}")
    return default


def _find(inputs, attrs, ctx):
    """Values of the keys input (any shape), the default for absent keys."""
    table = _t(inputs[0])
    keys = np.asarray(inputs[1])
    _check_dtype(table, keys, table.key_dtype, "keys")
    return (table.find(keys, _default(table, inputs[2])),)


def _find_with_buckets(inputs, attrs, ctx):
    """As LookupTableFind, but a key whose value is the default gets the id
    table size + Fingerprint64(key bytes) % num_oov_buckets (TF's OOV buckets)."""
    table = _t(inputs[0])
    keys = np.asarray(inputs[1])
    _check_dtype(table, keys, table.key_dtype, "keys")
    default = _default(table, inputs[2])
    ids = table.find(keys, default)
    n = int(attrs["num_oov_buckets"])
    if n <= 0:
        return (ids,)
    miss = ids == default
    if miss.any():
        blobs = [(_text(k) if keys.dtype == object else str(int(k))).encode(
            "utf-8", "surrogateescape") for k in keys[miss]]
        buckets = (fingerprint64(blobs) % np.uint64(n)).astype(np.int64)
        ids = ids.copy()
        ids[miss] = buckets + len(table.data)
    return (ids,)


def _size(inputs, attrs, ctx):
    """The number of entries (0 for a static table not yet initialized, as TF)."""
    table = _t(inputs[0])
    with table.lock:
        return (np.asarray(len(table.data), np.int64),)


def _mutable(table: Table, op: str) -> Table:
    if not table.mutable:
        raise ExecutionError(f"{op}: table {table.name!r} is not a mutable table")
    return table


def _insert(inputs, attrs, ctx):
    """Set the values of keys (replacing existing ones) in a mutable table."""
    table = _mutable(_t(inputs[0]), "insert")
    keys, values = np.asarray(inputs[1]), np.asarray(inputs[2])
    rows = _values_for(table, keys, values)
    with table.lock:
        for k, v in zip(keys.reshape(-1), rows):
            table.data[table.key(k)] = (_text(v) if table.value_dtype == object
                                        else np.array(v, table.value_dtype))
    return ()


def _remove(inputs, attrs, ctx):
    """Drop keys (absent ones are ignored) from a mutable table."""
    table = _mutable(_t(inputs[0]), "remove")
    keys = np.asarray(inputs[1])
    _check_dtype(table, keys, table.key_dtype, "keys")
    with table.lock:
        for k in keys.reshape(-1):
            table.data.pop(table.key(k), None)
    return ()


def _export(inputs, attrs, ctx):
    """All keys and their values (in insertion order; TF's order is its hash order)."""
    table = _t(inputs[0])
    with table.lock:
        items = list(table.data.items())
    keys = np.empty(len(items), table.key_dtype)
    keys[:] = [k for k, _ in items]
    values = np.empty((len(items),) + table.value_shape, table.value_dtype)
    for i, (_, v) in enumerate(items):
        values[i] = v
    return keys, values


def _infer_handle(attrs, inputs):
    return [TensorInfo(None, None)]


def _none(attrs, inputs):
    return []


_TABLE_ATTRS = (("shared_name", "string"), ("key_dtype", "string"),
                ("value_dtype", "string"), ("value_shape", "ints", ()))
_STATEFUL = dict(domain=DOMAIN, stateful=True)

OPS = tuple(sorted((
    define("HashTable", [], ["handle"], _table_kernel(False), _TABLE_ATTRS,
           infer=_infer_handle, doc="a static hash table (filled once)", **_STATEFUL),
    define("MutableHashTable", [], ["handle"], _table_kernel(True), _TABLE_ATTRS,
           infer=_infer_handle, doc="a mutable hash table", **_STATEFUL),
    define("InitializeTable", ["handle", "keys", "values"], [], _initialize,
           infer=_none, doc="fill a static table from keys and values", **_STATEFUL),
    define("InitializeTableFromTextFile", ["handle", "filename"], [], _initialize_from_file,
           [("key_index", "int"), ("value_index", "int"), ("vocab_size", "int", -1),
            ("delimiter", "string", "\t")],
           infer=_none, doc="fill a static table from a text file", **_STATEFUL),
    define("LookupTableFind", ["handle", "keys", "default_value"], ["values"], _find,
           infer=lambda a, i: [TensorInfo(None, None)], doc="look keys up",
           **_STATEFUL),
    define("LookupTableFindWithBuckets", ["handle", "keys", "default_value"], ["values"],
           _find_with_buckets, [("num_oov_buckets", "int", 0)],
           infer=lambda a, i: [TensorInfo(np.dtype(np.int64), None)],
           doc="look keys up; absent keys get hash bucket ids", **_STATEFUL),
    define("LookupTableSize", ["handle"], ["size"], _size,
           infer=lambda a, i: [TensorInfo(np.dtype(np.int64), ())],
           doc="number of entries", **_STATEFUL),
    define("LookupTableInsert", ["handle", "keys", "values"], [], _insert,
           infer=_none, doc="insert or replace entries", **_STATEFUL),
    define("LookupTableRemove", ["handle", "keys"], [], _remove,
           infer=_none, doc="remove entries", **_STATEFUL),
    define("LookupTableExport", ["handle"], ["keys", "values"], _export,
           infer=lambda a, i: [TensorInfo(None, None)] * 2,
           doc="all keys and values", **_STATEFUL),
), key=lambda op: op.name))

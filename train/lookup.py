"""TF1's lookup tables (`og.lookup`): static tables filled by an initializer, mutable
tables, vocabulary tables with out-of-vocabulary hash buckets, and TF1's
index_table_* / index_to_string_table_* helpers::

    table = og.lookup.index_table_from_tensor(og.constant(["a", "b", "c"]),
                                              num_oov_buckets=1)
    ids = table.lookup(og.constant(["b", "zz"]))          # [1, 3]
    sess.run(og.tables_initializer()); sess.run(ids)

A table lives in the Session (ops/lookup.py). Each static table's initializer op joins
the "table_initializer" collection (TF's GraphKeys.TABLE_INITIALIZERS), which
`tables_initializer()` groups. Lookups of a static table before it is initialized raise
ExecutionError("Table not initialized."), TF's FailedPreconditionError.
"""

from __future__ import annotations

import numpy as np

from ..format import DType
from . import graph as _g
from .api import cast, group, no_op
from .sparse_tensor import SparseTensor

__all__ = ["TextFileIndex", "KeyValueTensorInitializer", "TextFileInitializer",
           "TextFileIdTableInitializer", "TextFileStringTableInitializer",
           "StaticHashTable", "HashTable", "StaticVocabularyTable", "IdTableWithHashBuckets",
           "MutableHashTable", "index_table_from_tensor", "index_table_from_file",
           "index_to_string_table_from_tensor", "index_to_string_table_from_file",
           "tables_initializer", "TABLE_INITIALIZERS"]

TABLE_INITIALIZERS = "table_initializer"


class TextFileIndex:
    """Special column indices of a text-file initializer."""
    WHOLE_LINE = -2
    LINE_NUMBER = -1


def _tf_dtype(d) -> str:
    """A dtype as TF prints it in messages: <dtype: 'string'>."""
    return f"<dtype: '{d.name.lower()}'>"


def _fresh_op(g, op_type: str, attrs: dict, name: str):
    """Create a handle op under exactly the unique name `name` (its shared_name)."""
    g._used_names.discard(name)
    saved, g._scope = g._scope, []
    try:
        return g.op(op_type, [], dict(attrs, shared_name=name), name=name)
    finally:
        g._scope = saved


def _convert(g, value, dtype, what: str):
    """`value` as a tensor of `dtype`.

    Raises:
        TypeError: a Python value does not fit dtype (TF's wording).
        ValueError: a tensor has another dtype (TF's wording).
    """
    if isinstance(value, _g.Tensor):
        if value.dtype != dtype:
            raise ValueError(f"{what}: Tensor conversion requested dtype "
                             f"{dtype.name.lower()} for Tensor with dtype "
                             f"{value.dtype.name.lower()}: {value.name}")
        return value
    arr = np.asarray(value, dtype=object if dtype == DType.STRING else None)
    if dtype == DType.STRING:
        if arr.dtype.kind not in "OSU" or not all(
                isinstance(v, (str, bytes)) for v in arr.reshape(-1)):
            raise TypeError(f"Expected string, but got {value} of type "
                            f"'{type(value).__name__}'.")
    elif arr.dtype.kind in "OSU":
        raise TypeError(f"Expected {dtype.name.lower()}, but got {value} of type "
                        f"'{type(value).__name__}'.")
    return g.convert(value, dtype)


def _keys_tensor(g, keys, dtype) -> _g.Tensor:
    """Lookup keys as a tensor of the table's key dtype.

    Raises:
        TypeError: the keys have another dtype (TF's wording).
    """
    t = keys if isinstance(keys, _g.Tensor) else g.convert(keys)
    if t.dtype != dtype:
        raise TypeError(f"Dtype of argument `keys` must be {_tf_dtype(dtype)}, received: "
                        f"{_tf_dtype(t.dtype)}")
    return t


def _dims(t) -> tuple | None:
    return None if t.shape is None else tuple(t.shape)


class KeyValueTensorInitializer:
    """Fills a static table from parallel key and value vectors.

    Raises:
        ValueError: the keys and values have different static lengths.
    """

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        g = _g.get_default_graph()
        self._keys = g.convert(keys, None if key_dtype is None else _g.as_dtype(key_dtype))
        self._values = g.convert(values,
                                 None if value_dtype is None else _g.as_dtype(value_dtype))
        ks, vs = _dims(self._keys), _dims(self._values)
        if ks and vs and ks[0] is not None and vs[0] is not None and ks[0] != vs[0]:
            raise ValueError(f"Dimensions must be equal, but are {ks[0]} and {vs[0]} "
                             f"for key_value_init with input shapes: {list(ks)}, {list(vs)}.")
        self.key_dtype, self.value_dtype = self._keys.dtype, self._values.dtype
        self._name = name or "key_value_init"

    def initialize(self, table):
        """The op filling `table` (raises at run time on conflicting duplicate keys)."""
        return table.graph.op("InitializeTable", [table.resource_handle, self._keys,
                                                  self._values], name=self._name)


class TextFileInitializer:
    """Fills a static table from a text file, one entry per line: key and value each the
    whole line (TextFileIndex.WHOLE_LINE), the line number (LINE_NUMBER) or a column
    split at `delimiter`.

    Raises:
        ValueError: an index is below -2, LINE_NUMBER is asked for a non-int64 dtype,
            WHOLE_LINE for a dtype that is neither string nor integer, or vocab_size is
            not positive.
    """

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None, value_index_offset=0):
        self.key_dtype, self.value_dtype = _g.as_dtype(key_dtype), _g.as_dtype(value_dtype)
        for what, index, dtype in (("key", key_index, self.key_dtype),
                                   ("value", value_index, self.value_dtype)):
            if index < -2:
                raise ValueError(f"`{what}_index` must be >= -2, received: {index}")
            if index == TextFileIndex.LINE_NUMBER and dtype != DType.INT64:
                raise ValueError(f"`{what}_dtype` must be int64 if `{what}_index` is -1, "
                                 f"received: {_tf_dtype(dtype)}")
            if index == TextFileIndex.WHOLE_LINE and dtype != DType.STRING and \
                    np.dtype(dtype.numpy).kind not in "iu" and what == "key":
                raise ValueError(f"`key_dtype` must be either an integer or string for "
                                 f"whole line, received: {_tf_dtype(dtype)}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` must be > 0, received: {vocab_size}")
        if not isinstance(delimiter, str) or not delimiter:
            raise ValueError(f"`delimiter` must be a non-empty string, got {delimiter!r}")
        g = _g.get_default_graph()
        self._filename = g.convert(filename, DType.STRING)
        self._attrs = {"key_index": int(key_index), "value_index": int(value_index),
                       "vocab_size": -1 if vocab_size is None else int(vocab_size),
                       "delimiter": delimiter}
        self._name = name or "text_file_init"

    def initialize(self, table):
        """The op filling `table` (raises at run time on a missing file, a bad line,
        a wrong vocab_size or conflicting duplicate keys)."""
        return table.graph.op("InitializeTableFromTextFile",
                              [table.resource_handle, self._filename], self._attrs,
                              name=self._name)


class TextFileIdTableInitializer(TextFileInitializer):
    """A text-file initializer mapping each line (or a column) to its line number."""

    def __init__(self, filename, key_column_index=TextFileIndex.WHOLE_LINE,
                 value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None,
                 delimiter="\t", name="text_file_id_table_init", key_dtype=DType.STRING):
        super().__init__(filename, key_dtype, key_column_index, DType.INT64,
                         value_column_index, vocab_size, delimiter, name)


class TextFileStringTableInitializer(TextFileInitializer):
    """A text-file initializer mapping each line number to the line (or a column)."""

    def __init__(self, filename, key_column_index=TextFileIndex.LINE_NUMBER,
                 value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None,
                 delimiter="\t", name="text_file_string_table_init"):
        super().__init__(filename, DType.INT64, key_column_index, DType.STRING,
                         value_column_index, vocab_size, delimiter, name)


class _Table:
    """What every table has: a handle op in the default graph and lookup helpers."""

    def _make(self, op_type: str, key_dtype, value_dtype, name: str, value_shape=()):
        self.graph = g = _g.get_default_graph()
        self._key_dtype, self._value_dtype = key_dtype, value_dtype
        self._name = g.unique_name(name)
        self.resource_handle = _fresh_op(g, op_type, {
            "key_dtype": key_dtype.short_name, "value_dtype": value_dtype.short_name,
            "value_shape": list(value_shape)}, self._name)
        self._value_shape = tuple(value_shape)

    @property
    def key_dtype(self):
        """The dtype of the keys."""
        return self._key_dtype

    @property
    def value_dtype(self):
        """The dtype of the values."""
        return self._value_dtype

    @property
    def name(self) -> str:
        """The table op's name."""
        return self._name

    def size(self, name=None):
        """The number of entries (int64 scalar; 0 before a static table is filled)."""
        return self.graph.op("LookupTableSize", [self.resource_handle],
                             name=name or f"{self._name}_Size")

    def _find(self, op_type, keys, default, attrs=None, name=None, dtype=None):
        """Run `op_type` over dense keys, or over a SparseTensor's values."""
        if isinstance(keys, SparseTensor):
            values = self._find(op_type, keys.values, default, attrs, name, dtype)
            return SparseTensor(keys.indices, values, keys.dense_shape)
        k = _keys_tensor(self.graph, keys, self._key_dtype)
        ks = _dims(k)
        shape = None if ks is None else ks + self._value_shape
        return self.graph.op(op_type, [self.resource_handle, k, default], attrs or {},
                             name=name or f"{self._name}_Lookup",
                             dtypes=[dtype or self._value_dtype], shapes=[shape])


class StaticHashTable(_Table):
    """A table filled once by `initializer` (TF1's tf.lookup.StaticHashTable).

    Args:
        initializer: a KeyValueTensorInitializer or TextFileInitializer.
        default_value: the value of absent keys (of the initializer's value dtype).

    Raises:
        TypeError: default_value does not fit the value dtype.
    """

    def __init__(self, initializer, default_value, name=None):
        self._make("HashTable", initializer.key_dtype, initializer.value_dtype,
                   name or "hash_table")
        self._default = _convert(self.graph, default_value, self._value_dtype,
                                 "default_value")
        self._init = initializer.initialize(self)
        self.graph.add_to_collection(TABLE_INITIALIZERS, self._init)

    @property
    def default_value(self):
        """The value of absent keys (a tensor)."""
        return self._default

    @property
    def initializer(self):
        """The op filling the table."""
        return self._init

    init = initializer

    def lookup(self, keys, name=None):
        """Values of `keys` (a tensor of any shape, or a SparseTensor: the result is
        of the same kind); the default for absent keys.

        Raises:
            TypeError: the keys' dtype is not the table's key dtype.
        """
        return self._find("LookupTableFind", keys, self._default, name=name)


HashTable = StaticHashTable


class StaticVocabularyTable:
    """A string or int64 -> int64 table whose absent keys get one of num_oov_buckets
    ids after the vocabulary: size + Fingerprint64(key) % num_oov_buckets (TF's).

    Raises:
        ValueError: num_oov_buckets is not positive or the values are not int64.
    """

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None):
        if num_oov_buckets <= 0:
            raise ValueError(f"`num_oov_buckets` must be > 0; use StaticHashTable "
                             f"instead, received: {num_oov_buckets}")
        if initializer.value_dtype != DType.INT64:
            raise ValueError(f"`initializer` must have value dtype int64, received: "
                             f"{_tf_dtype(initializer.value_dtype)}")
        self._table = StaticHashTable(initializer, -1, name=name or "hash_table")
        self._oov = int(num_oov_buckets)

    key_dtype = property(lambda self: self._table.key_dtype, doc="The dtype of the keys.")
    value_dtype = property(lambda self: DType.INT64, doc="int64.")
    name = property(lambda self: self._table.name, doc="The table op's name.")
    initializer = property(lambda self: self._table.initializer, doc="The filling op.")
    init = initializer
    default_value = property(lambda self: self._table.default_value,
                             doc="-1 (what the vocabulary lookup yields before buckets).")

    def size(self, name=None):
        """Vocabulary size plus num_oov_buckets (int64 scalar)."""
        return self._table.graph.op("Add", [self._table.size(),
                                            np.asarray(self._oov, np.int64)],
                                    name=name or f"{self.name}_Size")

    def lookup(self, keys, name=None):
        """Ids of `keys` (dense or SparseTensor): vocabulary ids, or hash bucket ids.

        Raises:
            TypeError: the keys' dtype is not the table's key dtype.
        """
        t = self._table
        return t._find("LookupTableFindWithBuckets", keys, t.default_value,
                       {"num_oov_buckets": self._oov}, name, DType.INT64)


class IdTableWithHashBuckets(StaticVocabularyTable):
    """TF1's tf.contrib.lookup.IdTableWithHashBuckets: `table`'s ids, and for keys it
    maps to its default value, size + Fingerprint64(key) % num_oov_buckets.

    Raises:
        ValueError: table is None, num_oov_buckets is negative, the table's values
            are not int64, or hasher_spec is not FarmHash.
    """

    def __init__(self, table, num_oov_buckets, hasher_spec=None, name=None, key_dtype=None):
        _check_hasher(hasher_spec)
        if table is None:
            raise ValueError("IdTableWithHashBuckets needs a table here (hash-only "
                             "tables are not supported)")
        if num_oov_buckets < 0:
            raise ValueError(f"num_oov_buckets must be >= 0, got {num_oov_buckets}")
        if table.value_dtype != DType.INT64:
            raise ValueError(f"Expected table value dtype int64, got "
                             f"{_tf_dtype(table.value_dtype)}")
        self._table, self._oov = table, int(num_oov_buckets)


class MutableHashTable(_Table):
    """A table changed by insert / remove ops (TF's tf.lookup.experimental
    .MutableHashTable); values may be vectors (default_value's shape).

    Raises:
        TypeError: default_value does not fit value_dtype.
    """

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True):
        key_dtype, value_dtype = _g.as_dtype(key_dtype), _g.as_dtype(value_dtype)
        shape = np.shape(default_value) if not isinstance(default_value, _g.Tensor) else \
            tuple(default_value.shape or ())
        self._make("MutableHashTable", key_dtype, value_dtype, name, shape)
        self._default = _convert(self.graph, default_value, value_dtype, "default_value")

    default_value = property(lambda self: self._default, doc="The value of absent keys.")

    def lookup(self, keys, name=None):
        """Values of `keys` (dense or SparseTensor), default_value for absent keys.

        Raises:
            ValueError: the keys' dtype is not the table's key dtype (TF's wording).
        """
        if not isinstance(keys, SparseTensor):
            keys = _convert(self.graph, keys, self._key_dtype, "keys")
        return self._find("LookupTableFind", keys, self._default, name=name)

    def insert(self, keys, values, name=None):
        """An op setting keys' values (values: keys' shape + the value shape).

        Raises:
            ValueError: keys or values have the wrong dtype (TF's wording).
        """
        k = _convert(self.graph, keys, self._key_dtype, "keys")
        v = _convert(self.graph, values, self._value_dtype, "values")
        return self.graph.op("LookupTableInsert", [self.resource_handle, k, v],
                             name=name or f"{self._name}_lookup_table_insert")

    def remove(self, keys, name=None):
        """An op dropping keys (absent ones are ignored).

        Raises:
            ValueError: the keys have the wrong dtype.
        """
        k = _convert(self.graph, keys, self._key_dtype, "keys")
        return self.graph.op("LookupTableRemove", [self.resource_handle, k],
                             name=name or f"{self._name}_lookup_table_remove")

    def export(self, name=None):
        """(keys, values) tensors of every entry, in no particular order."""
        return self.graph.op("LookupTableExport", [self.resource_handle], num_outputs=2,
                             name=name or f"{self._name}_lookup_table_export_values",
                             dtypes=[self._key_dtype, self._value_dtype],
                             shapes=[None, None])


def _check_hasher(hasher_spec) -> None:
    """Raise ValueError for a hasher other than TF's default FastHashSpec (FarmHash)."""
    if hasher_spec is not None and getattr(hasher_spec, "hasher", "fasthash") != "fasthash":
        raise ValueError(f"only the default FarmHash hasher (FastHashSpec) is supported, "
                         f"got {hasher_spec!r}")


def _vocab_tensor(vocabulary_list, dtype):
    g = _g.get_default_graph()
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` must be specified.")
    t = vocabulary_list if isinstance(vocabulary_list, _g.Tensor) else g.convert(
        np.asarray(vocabulary_list, dtype=object) if dtype == DType.STRING
        else vocabulary_list, dtype)
    return g, t


def _positions(g, t):
    """0..n-1 (int64) for the entries of vector t."""
    from .api_extra import range as _range, size as _size
    return _range(0, _size(t, out_type=DType.INT64), dtype=DType.INT64)


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1,
                            hasher_spec=None, dtype=DType.STRING, name=None):
    """A table mapping each vocabulary entry to its position (int64); absent keys get
    default_value, or with num_oov_buckets one of that many hash bucket ids.

    Raises:
        ValueError: vocabulary_list is None, num_oov_buckets is negative, or
            hasher_spec is not FarmHash.
    """
    dtype = _g.as_dtype(dtype)
    _check_hasher(hasher_spec)
    if num_oov_buckets < 0:
        raise ValueError(f"`num_oov_buckets` must be greater than or equal to 0, got "
                         f"{num_oov_buckets}.")
    g, keys = _vocab_tensor(vocabulary_list, dtype)
    if keys.dtype != DType.STRING and keys.dtype != DType.INT64:
        keys = cast(keys, DType.INT64)
    init = KeyValueTensorInitializer(keys, _positions(g, keys), name="table_init")
    table = StaticHashTable(init, default_value, name=name or "string_to_index")
    return IdTableWithHashBuckets(table, num_oov_buckets) if num_oov_buckets else table


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None,
                          default_value=-1, hasher_spec=None, key_dtype=DType.STRING,
                          name=None, key_column_index=TextFileIndex.WHOLE_LINE,
                          value_column_index=TextFileIndex.LINE_NUMBER, delimiter="\t"):
    """A table mapping each line of a vocabulary file (or a column) to its line number
    (or a column); absent keys get default_value or hash bucket ids.

    Raises:
        ValueError: vocabulary_file is missing or empty, or num_oov_buckets or
            vocab_size is out of range.
    """
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    _check_hasher(hasher_spec)
    if num_oov_buckets < 0:
        raise ValueError(f"`num_oov_buckets` must be greater than or equal to 0, got "
                         f"{num_oov_buckets}.")
    init = TextFileInitializer(vocabulary_file, key_dtype, key_column_index, DType.INT64,
                               value_column_index, vocab_size, delimiter)
    table = StaticHashTable(init, default_value, name=name or "string_to_index")
    return IdTableWithHashBuckets(table, num_oov_buckets) if num_oov_buckets else table


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """A table mapping int64 positions to the vocabulary's strings; default_value for
    positions out of range.

    Raises:
        ValueError: vocabulary_list is None.
    """
    g, values = _vocab_tensor(vocabulary_list, DType.STRING)
    init = KeyValueTensorInitializer(_positions(g, values), values, name="table_init")
    return StaticHashTable(init, default_value, name=name or "index_to_string")


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK",
                                    name=None, key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE,
                                    delimiter="\t"):
    """A table mapping line numbers (int64) of a vocabulary file to its lines (or a
    column); default_value for numbers out of range.

    Raises:
        ValueError: vocabulary_file is missing or empty, or vocab_size is not positive.
    """
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    init = TextFileInitializer(vocabulary_file, DType.INT64, key_column_index, DType.STRING,
                               value_column_index, vocab_size, delimiter)
    return StaticHashTable(init, default_value, name=name or "index_to_string")


def tables_initializer(name="init_all_tables"):
    """One op running every table initializer of the default graph (a no-op when there
    are none), as TF1's tf.tables_initializer."""
    inits = _g.get_default_graph().get_collection(TABLE_INITIALIZERS)
    return group(*inits, name=name) if inits else no_op(name=name)

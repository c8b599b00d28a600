"""The lookup-table scenarios that tools/record_tf_lookup.py runs under TensorFlow
(tf.compat.v1) and tests/train/test_lookup.py under onegraph.

`lib` is a namespace with TF1's lookup names (StaticHashTable, HashTable,
KeyValueTensorInitializer, TextFileInitializer, TextFileIndex, StaticVocabularyTable,
IdTableWithHashBuckets, MutableHashTable, index_table_from_tensor, index_table_from_file,
index_to_string_table_from_tensor, index_to_string_table_from_file, tables_initializer,
TextFileIdTableInitializer, TextFileStringTableInitializer), constant, placeholder,
SparseTensor, the dtypes, and `path(name)`: the path of FILES[name] written to a scratch
folder. A scenario returns a list of steps; the runner first runs tables_initializer()
(unless the scenario is in NO_INIT), then each step in order, recording every tensor's
(or SparseTensor's) value; a step that is an op records nothing."""

from __future__ import annotations

import numpy as np


def _s(items) -> np.ndarray:
    """A string array holding `items` as UTF-8 bytes (both frameworks accept it)."""
    out = np.empty(len(items), dtype=object)
    out[:] = [v.encode("utf-8") if isinstance(v, str) else v for v in items]
    return out


FILES = {
    "vocab.txt": b"emerson\nlake\npalmer\n",
    "vocab_crlf.txt": b"one\r\ntwo\r\nthree\r\n",
    "cols.tsv": b"apple\t10\tred\nbanana\t20\tyellow\ncherry\t30\tdark red\n",
    "cols.csv": b"7,seven\n8,eight\n9,nine\n",
    "short_cols.tsv": b"a\t1\nb\n",
    "bad_int.tsv": b"a\t1\nb\tx2\n",
    "dup.txt": b"x\ny\nx\n",
    "unicode.txt": "gr\u00fc\u00df\n\u65e5\u672c\nna\u00efve\n".encode("utf-8"),
    "empty_line.txt": b"a\n\nb\n",
    "empty_line_late.txt": b"a\nb\nc\nd\n\n",
    "floats.tsv": b"a\t1.5\nb\t-2e3\n",
}

# many strings for the OOV bucket ids (FarmHash Fingerprint64 mod buckets)
OOV_WORDS = ["", "x", "zz", "hello", "hello world", "0123456789abcdef", "a" * 17,
             "b" * 32, "c" * 33, "the quick brown fox jumps over the lazy dog" * 2,
             "d" * 64, "e" * 65, "f" * 200, "\u00fcber", "\u65e5\u672c\u8a9e",
             "\U0001f600 emoji", "tab\there", "caf\u00e9", "\u0000nul"]


def _kv(lib, keys, values, kd=None, vd=None):
    return lib.KeyValueTensorInitializer(keys, values, key_dtype=kd, value_dtype=vd)


def _static_str_int(lib):
    table = lib.StaticHashTable(
        _kv(lib, _s(["a", "b", "c"]), np.array([1, 2, 3], np.int64)), -1)
    keys = lib.constant(_s(["b", "zz", "a", "c"]).reshape(2, 2))
    return [table.lookup(keys), table.size()]


def _static_int_str(lib):
    table = lib.HashTable(_kv(lib, np.array([5, 7, 9], np.int64), _s(["five", "seven",
                                                                       "nine"])), "UNK")
    return [table.lookup(lib.constant(np.array([9, 1, 5], np.int64))), table.size()]


def _static_int32_float(lib):
    table = lib.StaticHashTable(
        _kv(lib, np.array([1, 2], np.int32), np.array([0.5, 1.5], np.float32)), -1.0)
    return [table.lookup(lib.constant(np.array([[2], [3], [1]], np.int32)))]


def _static_scalar(lib):
    table = lib.StaticHashTable(_kv(lib, _s(["k"]), np.array([4], np.int64)), 0)
    return [table.lookup(lib.constant(b"k")), table.lookup(lib.constant(b"q"))]


def _static_placeholder(lib):
    table = lib.StaticHashTable(_kv(lib, _s(["a", "b"]), np.array([0, 1], np.int64)), 9)
    ph = lib.placeholder(lib.string, [None])
    return [table.lookup(ph)], {ph: _s(["b", "q", "a"])}


def _static_sparse(lib):
    table = lib.StaticHashTable(_kv(lib, _s(["a", "b"]), np.array([10, 20], np.int64)),
                                -5)
    sp = lib.SparseTensor(indices=np.array([[0, 0], [1, 2], [2, 1]], np.int64),
                          values=_s(["b", "x", "a"]), dense_shape=np.array([3, 4], np.int64))
    return [table.lookup(sp)]


def _static_dup_same(lib):
    table = lib.StaticHashTable(_kv(lib, _s(["a", "a", "b"]), np.array([1, 1, 2], np.int64)),
                                -1)
    return [table.lookup(lib.constant(_s(["a", "b"]))), table.size()]


def _static_dup_diff(lib):
    table = lib.StaticHashTable(_kv(lib, _s(["a", "b", "a"]), np.array([1, 2, 3], np.int64)),
                                -1)
    return [table.lookup(lib.constant(_s(["a"])))]


def _static_uninit(lib):
    table = lib.StaticHashTable(_kv(lib, _s(["a"]), np.array([1], np.int64)), -1)
    return [table.lookup(lib.constant(_s(["a"])))]


def _static_uninit_size(lib):
    table = lib.StaticHashTable(_kv(lib, _s(["a"]), np.array([1], np.int64)), -1)
    return [table.size()]


def _static_key_dtype(lib):
    table = lib.StaticHashTable(_kv(lib, _s(["a"]), np.array([1], np.int64)), -1)
    return [table.lookup(lib.constant(np.array([1], np.int64)))]


def _static_default_dtype(lib):
    return [lib.StaticHashTable(_kv(lib, _s(["a"]), np.array([1], np.int64)), "x").size()]


def _kv_len_mismatch(lib):
    table = lib.StaticHashTable(_kv(lib, _s(["a", "b"]), np.array([1, 2, 3], np.int64)), -1)
    return [table.size()]


def _text(lib, name, kd, ki, vd, vi, default, keys, delimiter="\t", vocab_size=None):
    init = lib.TextFileInitializer(lib.path(name), kd, ki, vd, vi, vocab_size=vocab_size,
                                   delimiter=delimiter)
    table = lib.StaticHashTable(init, default)
    return [table.lookup(lib.constant(keys)), table.size()]


W, L = -2, -1  # TextFileIndex.WHOLE_LINE, LINE_NUMBER


def _case_text(*args, **kw):
    return lambda lib: _text(lib, *args, **kw)


def _vocab(lib, **kw):
    table = lib.StaticVocabularyTable(
        _kv(lib, _s(["emerson", "lake", "palmer"]), np.array([0, 1, 2], np.int64)), **kw)
    return [table.lookup(lib.constant(_s(["lake"] + OOV_WORDS))), table.size()]


def _vocab_int(lib):
    table = lib.StaticVocabularyTable(
        _kv(lib, np.array([42, 7], np.int64), np.array([0, 1], np.int64)), 5)
    return [table.lookup(lib.constant(np.array([7, 1, 2, 3, -4, 42, 1 << 40], np.int64)))]


def _index_tensor(lib):
    table = lib.index_table_from_tensor(lib.constant(_s(["a", "b", "c"])), num_oov_buckets=1)
    return [table.lookup(lib.constant(_s(["b", "zz", "c", "a", "q"]))), table.size()]


def _index_tensor_default(lib):
    table = lib.index_table_from_tensor(_s(["a", "b", "c"]), default_value=-7)
    return [table.lookup(lib.constant(_s(["c", "zz"]))), table.size()]


def _index_tensor_many_oov(lib):
    table = lib.index_table_from_tensor(_s(["emerson", "lake"]), num_oov_buckets=7)
    return [table.lookup(lib.constant(_s(OOV_WORDS))), table.size()]


def _index_tensor_int(lib):
    table = lib.index_table_from_tensor(np.array([10, 20, 30], np.int64), num_oov_buckets=3,
                                        dtype=lib.int64)
    return [table.lookup(lib.constant(np.array([30, 10, 11, 12, 99], np.int64)))]


def _index_tensor_sparse(lib):
    table = lib.index_table_from_tensor(_s(["a", "b"]), num_oov_buckets=2)
    sp = lib.SparseTensor(indices=np.array([[0, 1], [1, 0], [1, 3]], np.int64),
                          values=_s(["a", "hello", "b"]), dense_shape=np.array([2, 4], np.int64))
    return [table.lookup(sp)]


def _index_tensor_dup(lib):
    table = lib.index_table_from_tensor(_s(["a", "b", "a"]))
    return [table.lookup(lib.constant(_s(["a"])))]


def _index_file(lib, **kw):
    table = lib.index_table_from_file(lib.path("vocab.txt"), **kw)
    return [table.lookup(lib.constant(_s(["palmer", "emerson", "zappa", "lake", "x"]))),
            table.size()]


def _index_file_cols(lib):
    table = lib.index_table_from_file(lib.path("cols.tsv"), key_column_index=0,
                                      value_column_index=1, default_value=-3)
    return [table.lookup(lib.constant(_s(["cherry", "apple", "kiwi"]))), table.size()]


def _index_to_string(lib):
    table = lib.index_to_string_table_from_tensor(_s(["a", "b", "c"]))
    return [table.lookup(lib.constant(np.array([[2, 0], [5, -1]], np.int64))), table.size()]


def _index_to_string_default(lib):
    table = lib.index_to_string_table_from_tensor(["x", "y"], default_value="?")
    return [table.lookup(lib.constant(np.array([1, 2], np.int64)))]


def _index_to_string_file(lib, **kw):
    table = lib.index_to_string_table_from_file(lib.path("vocab.txt"), **kw)
    return [table.lookup(lib.constant(np.array([0, 2, 3, 1], np.int64))), table.size()]


def _mutable(lib):
    table = lib.MutableHashTable(lib.string, lib.int64, -1)
    keys = lib.constant(_s(["a", "b", "c"]))
    return [table.size(), table.insert(keys, lib.constant(np.array([1, 2, 3], np.int64))),
            table.size(), table.lookup(lib.constant(_s(["c", "z", "a"]))),
            table.insert(lib.constant(_s(["a", "d"])), lib.constant(np.array([10, 4], np.int64))),
            table.lookup(lib.constant(_s(["a", "d", "b"]).reshape(3, 1))),
            table.remove(lib.constant(_s(["b", "nothere"]))), table.size(),
            table.lookup(lib.constant(_s(["b", "c"])))]


def _mutable_export(lib):
    table = lib.MutableHashTable(lib.int64, lib.float32, 0.5)
    ins = table.insert(lib.constant(np.array([3, 1, 2], np.int64)),
                       lib.constant(np.array([3.5, 1.5, 2.5], np.float32)))
    keys, values = table.export()
    return [ins, keys, values]


def _mutable_vector(lib):
    table = lib.MutableHashTable(lib.string, lib.int64, np.array([-1, -1], np.int64))
    ins = table.insert(lib.constant(_s(["a", "b"])),
                       lib.constant(np.array([[1, 2], [3, 4]], np.int64)))
    return [ins, table.lookup(lib.constant(_s(["b", "q", "a"]))), table.size()]


def _mutable_bad_dtype(lib):
    table = lib.MutableHashTable(lib.string, lib.int64, -1)
    return [table.insert(lib.constant(_s(["a"])), lib.constant(np.array([1.0], np.float32)))]


def _mutable_bad_keys(lib):
    table = lib.MutableHashTable(lib.string, lib.int64, -1)
    return [table.lookup(lib.constant(np.array([1], np.int64)))]


def _mutable_len(lib):
    table = lib.MutableHashTable(lib.string, lib.int64, -1)
    return [table.insert(lib.constant(_s(["a", "b"])), lib.constant(np.array([1], np.int64)))]


def _id_table_buckets(lib):
    base = lib.StaticHashTable(_kv(lib, _s(["a", "b"]), np.array([0, 1], np.int64)), -1)
    table = lib.IdTableWithHashBuckets(base, num_oov_buckets=4)
    return [table.lookup(lib.constant(_s(["b", "hello", "a", "world", "\u00fc"]))),
            table.size()]


def _text_id_init(lib):
    table = lib.StaticHashTable(lib.TextFileIdTableInitializer(lib.path("vocab.txt")), -1)
    return [table.lookup(lib.constant(_s(["lake", "zz"]))), table.size()]


def _text_string_init(lib):
    table = lib.StaticHashTable(lib.TextFileStringTableInitializer(lib.path("vocab.txt")),
                                "UNK")
    return [table.lookup(lib.constant(np.array([2, 9], np.int64))), table.size()]


CASES = {
    "static_str_int": _static_str_int,
    "static_int_str": _static_int_str,
    "static_int32_float": _static_int32_float,
    "static_scalar": _static_scalar,
    "static_placeholder": _static_placeholder,
    "static_sparse": _static_sparse,
    "static_dup_same": _static_dup_same,
    "text_whole_line_to_line_number": _case_text("vocab.txt", "string", W, "int64", L, -1,
                                                 _s(["palmer", "emerson", "zz"])),
    "text_line_number_to_whole_line": _case_text("vocab.txt", "int64", L, "string", W, "?",
                                                 np.array([0, 2, 3], np.int64)),
    "text_crlf": _case_text("vocab_crlf.txt", "string", W, "int64", L, -1,
                            _s(["two", "two\r", "three"])),
    "text_columns": _case_text("cols.tsv", "string", 0, "int64", 1, -1,
                               _s(["banana", "cherry", "apple", "fig"])),
    "text_columns_str": _case_text("cols.tsv", "string", 0, "string", 2, "none",
                                   _s(["cherry", "fig"])),
    "text_csv": _case_text("cols.csv", "int64", 0, "string", 1, "?",
                           np.array([8, 9, 10], np.int64), delimiter=","),
    "text_vocab_size": _case_text("vocab.txt", "string", W, "int64", L, -1,
                                  _s(["emerson", "lake", "palmer"]), vocab_size=2),
    "text_unicode": _case_text("unicode.txt", "string", W, "int64", L, -1,
                               _s(["\u65e5\u672c", "na\u00efve", "gr\u00fc\u00df"])),
    "text_empty_line": _case_text("empty_line.txt", "string", W, "int64", L, -1,
                                  _s(["", "b"])),
    "text_empty_line_late": _case_text("empty_line_late.txt", "string", W, "int64", L, -1,
                                       _s(["d"])),
    "text_float_values": _case_text("floats.tsv", "string", 0, "float32", 1, 0.0,
                                    _s(["b", "a", "c"])),
    "vocab_oov1": lambda lib: _vocab(lib, num_oov_buckets=1),
    "vocab_oov10": lambda lib: _vocab(lib, num_oov_buckets=10),
    "vocab_oov_big": lambda lib: _vocab(lib, num_oov_buckets=1000003),
    "vocab_int": _vocab_int,
    "index_tensor": _index_tensor,
    "index_tensor_default": _index_tensor_default,
    "index_tensor_many_oov": _index_tensor_many_oov,
    "index_tensor_int": _index_tensor_int,
    "index_tensor_sparse": _index_tensor_sparse,
    "index_file": _index_file,
    "index_file_oov": lambda lib: _index_file(lib, num_oov_buckets=3),
    "index_file_vocab_size": lambda lib: _index_file(lib, vocab_size=2, default_value=-2),
    "index_file_cols": _index_file_cols,
    "index_to_string": _index_to_string,
    "index_to_string_default": _index_to_string_default,
    "index_to_string_file": _index_to_string_file,
    "index_to_string_file_size": lambda lib: _index_to_string_file(lib, vocab_size=2,
                                                                   default_value="-"),
    "mutable": _mutable,
    "mutable_export": _mutable_export,
    "mutable_vector": _mutable_vector,
    "id_table_buckets": _id_table_buckets,
    "text_id_init": _text_id_init,
    "text_string_init": _text_string_init,
    # errors
    "err_uninit": _static_uninit,
    "err_uninit_size": _static_uninit_size,
    "err_dup_keys": _static_dup_diff,
    "err_index_dup": _index_tensor_dup,
    "err_key_dtype": _static_key_dtype,
    "err_default_dtype": _static_default_dtype,
    "err_kv_len": _kv_len_mismatch,
    "err_text_dup": _case_text("dup.txt", "string", W, "int64", L, -1, _s(["x"])),
    "err_text_short": _case_text("short_cols.tsv", "string", 0, "int64", 1, -1, _s(["a"])),
    "err_text_bad_int": _case_text("bad_int.tsv", "string", 0, "int64", 1, -1, _s(["a"])),
    "err_text_vocab_size": _case_text("vocab.txt", "string", W, "int64", L, -1, _s(["a"]),
                                      vocab_size=5),
    "err_text_missing": _case_text("missing.txt", "string", W, "int64", L, -1, _s(["a"])),
    "err_text_int_key_whole_line": _case_text("vocab.txt", "int64", W, "int64", L, -1,
                                              np.array([1], np.int64)),
    "err_text_line_number_str": _case_text("vocab.txt", "string", L, "int64", W, -1,
                                           _s(["a"])),
    "err_mutable_value_dtype": _mutable_bad_dtype,
    "err_mutable_key_dtype": _mutable_bad_keys,
    "err_mutable_len": _mutable_len,
}

NO_INIT = {"err_uninit", "err_uninit_size"}

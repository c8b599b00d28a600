"""The file and record decoding scenarios that tools/record_tf_io_ops.py runs under
TensorFlow (tf.compat.v1) and tests/train/test_io_ops.py under onegraph.

`lib` is a namespace with TF's names: decode_csv, decode_raw, decode_padded_raw,
serialize_tensor, parse_tensor, decode_compressed, matching_files, constant and
placeholder (tf.io's functions for TF, onegraph.train.api_io_ops' for onegraph). Each
scenario is a function of lib returning (fetches, feed) built in the current default
graph. Values cross as Python bytes (TF's strings) and are compared as hex."""

from __future__ import annotations

import struct

import numpy as np


def _s(items) -> np.ndarray:
    """A string array holding `items` as bytes (both frameworks accept it)."""
    out = np.empty(len(items), dtype=object)
    out[:] = [v.encode("latin-1") if isinstance(v, str) else v for v in items]
    return out


def _csv(records, defaults, **kw):
    return lambda lib: (lib.decode_csv(lib.constant(_s(records)), defaults, **kw), None)


CSV_CASES = {
    "csv_basic": _csv(["1,2.5,abc,7", "-3, 4e2 ,x y,8"],
                      [[0], [0.0], [""], np.array([0], np.int64)]),
    "csv_quoted": _csv(['"a,b","say ""hi""",3', '"",plain,"4"'], [["d"], [""], [0]]),
    "csv_defaults": _csv([",,", "5,,z", ",2.5,"], [[9], [1.5], ["dflt"]]),
    "csv_float64": _csv(["1.25,0x10", "-inf,nan"], [np.array([0], np.float64), [0.0]]),
    "csv_tab": _csv(["a\t1\t\"q\tq\"", "b\t2\tr"], [[""], [0], [""]], field_delim="\t"),
    "csv_pipe_noquote": _csv(['"a"|b"', 'c|d'], [[""], [""]], field_delim="|",
                             use_quote_delim=False),
    "csv_na": _csv(["NA,3", "4,NA"], [[1], [2]], na_value="NA"),
    "csv_select": _csv(["1,2,3,4,5", "6,7,8,9,10"], [[0], [0.0]], select_cols=[1, 3]),
    "csv_select_last": _csv(["a,b,", "c,d,e"], [[""], ["dflt"]], select_cols=[0, 2]),
    "csv_plus_sign": _csv(["+5, -2 "], [[0], np.array([0], np.int64)]),
    "csv_trailing_delim": _csv(["1,", "2,3"], [[0], [7]]),
    "csv_batch_2d": lambda lib: (lib.decode_csv(
        lib.constant(_s(["1,a", "2,b", "3,c", "4,d"]).reshape(2, 2)), [[0], [""]]), None),
    "csv_placeholder": lambda lib: _csv_placeholder(lib),
    # errors
    "csv_err_count": _csv(["1,2,3"], [[0], [0]]),
    "csv_err_int": _csv(["1,abc"], [[0], [0]]),
    "csv_err_int_range": _csv(["1,99999999999"], [[0], [0]]),
    "csv_err_float": _csv(["1,2.5.3"], [[0], [0.0]]),
    "csv_err_required": _csv(["1,"], [[0], np.zeros([0], np.int32)]),
    "csv_err_required_string": _csv([",x"], [np.zeros([0], object), [""]]),
    "csv_err_quote_inside": _csv(['a"b,c'], [[""], [""]]),
    "csv_err_quote_end": _csv(['"ab"c,d'], [[""], [""]]),
    "csv_err_select_order": _csv(["1,2"], [[0], [0]], select_cols=[1, 0]),
    "csv_err_select_length": _csv(["1,2"], [[0], [0]], select_cols=[1]),
    "csv_err_delim": _csv(["1,2"], [[0], [0]], field_delim="ab"),
}


def _csv_placeholder(lib):
    x = lib.placeholder(lib.string, [None])
    return lib.decode_csv(x, [[0.0], [0]]), {x: _s(["1.5,2", "3,4", "5e-1,-6"])}


def _raw(data, dtype, little=True):
    return lambda lib: (lib.decode_raw(lib.constant(_s(data)), getattr(lib, dtype),
                                       little_endian=little), None)


_F = struct.pack("<4f", 1.5, -2.0, 3.25, 1e-3)
RAW_CASES = {
    "raw_float32": _raw([_F, _F[::-1]], "float32"),
    "raw_float32_big": _raw([_F], "float32", little=False),
    "raw_int16": _raw([b"\x01\x02\x03\x04\xff\xff", b"abcdef"], "int16"),
    "raw_int16_big": _raw([b"\x01\x02\x03\x04\xff\xff"], "int16", little=False),
    "raw_uint8": _raw([b"\x00\x7f\x80\xff", b"abcd", b"wxyz"], "uint8"),
    "raw_int64_big": _raw([bytes(range(16))], "int64", little=False),
    "raw_float64": _raw([struct.pack("<2d", 0.1, -1e300)], "float64"),
    "raw_int32": _raw([bytes(range(8)), bytes(range(8, 16))], "int32"),
    "raw_float16": _raw([b"\x00\x3c\x00\xc0"], "float16"),
    "raw_empty_string": _raw([b""], "int32"),
    "raw_2d": lambda lib: (lib.decode_raw(lib.constant(
        _s([b"ab", b"cd", b"ef", b"gh"]).reshape(2, 2)), lib.uint8), None),
    "raw_err_multiple": _raw([b"abcde"], "int32"),
    "raw_err_lengths": _raw([b"abcd", b"abcdefgh"], "int32"),
    "padded_int16": lambda lib: (lib.decode_padded_raw(
        lib.constant(_s([b"\x01\x02\x03", b"\x04\x05\x06\x07\x08\x09"])), 4, lib.int16),
        None),
    "padded_int16_big": lambda lib: (lib.decode_padded_raw(
        lib.constant(_s([b"\x01\x02\x03"])), 6, lib.int16, little_endian=False), None),
}


def _serialize(value):
    return lambda lib: (lib.serialize_tensor(lib.constant(value)), None)


SERIALIZE_VALUES = {
    "ser_float32_2x3": np.arange(6, dtype=np.float32).reshape(2, 3) / 7,
    "ser_float32_scalar": np.float32(-2.5),
    "ser_float32_empty": np.zeros([0, 3], np.float32),
    "ser_int64": np.array([-1, 2 ** 40, 0], np.int64),
    "ser_int32_3d": np.arange(-4, 8, dtype=np.int32).reshape(2, 3, 2),
    "ser_string": _s([b"a", b"", b"\xff\x00bin", "longer text " * 12]),
    "ser_string_2d": _s([b"x", b"yy", b"zzz", b"w"]).reshape(2, 2),
    "ser_bool": np.array([[True, False, True]]),
    "ser_float64": np.array([0.1, -np.inf], np.float64),
    "ser_uint8": np.array([0, 255, 7], np.uint8),
}
SERIALIZE_CASES = {k: _serialize(v) for k, v in SERIALIZE_VALUES.items()}


def parse_case(serialized: bytes, dtype: str):
    """A scenario parsing `serialized` (TensorProto bytes) as `dtype`."""
    # an object scalar: numpy's bytes dtype would drop trailing NUL bytes
    data = np.array(serialized, dtype=object)
    return lambda lib: (lib.parse_tensor(lib.constant(data), getattr(lib, dtype)), None)


def compress_case(data: bytes, kind: str):
    """A scenario inflating `data` (one string) as `kind`."""
    return lambda lib: (lib.decode_compressed(lib.constant(_s([data, data])), kind), None)


# the files the matching_files scenarios see: names relative to a fresh folder
MATCH_FILES = ("b.txt", "a.txt", "A.txt", ".hidden.txt", "a1.csv", "sub/c.txt",
               "sub/d.csv", "sub2/e.txt", "ab.txt")
MATCH_PATTERNS = {
    "match_star": ["*.txt"],
    "match_question": ["a?.*"],
    "match_sub": ["*/*.txt"],
    "match_class": ["[ab]*.txt"],
    "match_several": ["sub/*", "*.csv"],
    "match_none": ["*.nothing"],
}

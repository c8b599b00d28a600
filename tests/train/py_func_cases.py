"""The py_func cases that tools/record_tf_py_func.py runs under TensorFlow and
tests/train/test_py_func.py under onegraph: a name -> (function of the float32 input
x = [1, 2], Tout) table."""

from __future__ import annotations

import numpy as np


def _raise(kind):
    def func(v):
        raise kind("boom")
    return func


# name -> (function of v, Tout as dtype names: a str, a list or a tuple)
CASES = {
    "single": (lambda v: v * 2, "float32"),
    "list_one": (lambda v: [v * 2], ["float32"]),
    "tuple_two": (lambda v: (v, v + 1), ("float32", "float32")),
    "empty": (lambda v: None, []),
    "float64_for_float32": (lambda v: v.astype(np.float64), "float32"),
    "int64_for_float32": (lambda v: v.astype(np.int64), "float32"),
    "float32_for_float64": (lambda v: v, "float64"),
    "float16_for_float32": (lambda v: v.astype(np.float16), "float32"),
    "python_float_for_float32": (lambda v: 1.5, "float32"),
    "python_float_for_float64": (lambda v: 1.5, "float64"),
    "python_int_for_int64": (lambda v: 3, "int64"),
    "python_int_for_int32": (lambda v: 3, "int32"),
    "bool_for_bool": (lambda v: v > 1, "bool"),
    "two_for_one": (lambda v: (v, v), ["float32"]),
    "tuple_for_single": (lambda v: (v, v), "float32"),
    "one_for_two": (lambda v: v, ["float32", "float32"]),
    "none_for_one": (lambda v: None, "float32"),
    "value_for_empty": (lambda v: v, []),
    "str_for_string": (lambda v: "hi", "string"),
    "bytes_for_string": (lambda v: b"hi", "string"),
    "unicode_array_for_string": (lambda v: np.array(["a", "bc"]), "string"),
    "float_for_string": (lambda v: v, "string"),
    "string_for_float32": (lambda v: "x", "float32"),
    "raises_value_error": (_raise(ValueError), "float32"),
    "raises_key_error": (_raise(KeyError), "float32"),
    "raises_stop_iteration": (_raise(StopIteration), "float32"),
}

"""Scenarios shared by tools/record_tf_sparse_serialize.py (which runs them under TF and
records TF's results) and tests/train/test_sparse_serialize.py / test_tensor_proto.py
(which run them in onegraph and compare). Plain data only: no TF, no onegraph.

Sparse values are (indices, values, dtype name, dense_shape); strings are str (UTF-8).
"""

# name -> (indices, values, dtype, dense_shape)
SPARSE = {
    "f32_2d": ([[0, 1], [1, 0], [1, 2]], [1.5, -2.0, 3.25], "float32", [2, 3]),
    "i64_2d": ([[0, 0], [2, 1]], [7, -9], "int64", [3, 2]),
    "i32_3d": ([[0, 0, 1], [0, 1, 0], [1, 1, 1]], [1, 2, 3], "int32", [2, 2, 2]),
    "str_2d": ([[0, 0], [0, 2], [2, 1]], ["a", "", "héllo"], "string", [3, 4]),
    "bool_2d": ([[0, 0], [1, 1]], [True, False], "bool", [2, 2]),
    "f64_2d": ([[1, 0]], [0.1], "float64", [2, 1]),
    "u8_2d": ([[0, 1], [1, 1]], [3, 255], "uint8", [2, 2]),
    "f16_2d": ([[0, 0]], [0.5], "float16", [1, 3]),
    "i64_1d": ([[1], [4]], [5, 6], "int64", [6]),
    "empty_2d": ([], [], "float32", [3, 4]),
    "empty_3d": ([], [], "int64", [2, 0, 5]),
    "unordered_2d": ([[2, 0], [0, 1], [0, 0]], [1.0, 2.0, 3.0], "float32", [3, 2]),
    "i32_4d": ([[0, 1, 0, 2], [1, 0, 1, 0]], [4, 5], "int32", [2, 2, 2, 3]),
}

# serialize_many_sparse's inputs (rank >= 2)
MANY = ["f32_2d", "i64_2d", "i32_3d", "str_2d", "bool_2d", "f64_2d", "u8_2d", "empty_2d",
        "empty_3d", "unordered_2d", "i32_4d"]

# deserialize_many_sparse of the rows serialize_sparse makes of these (same dtype and
# rank, different shapes): stacked with a leading dim, dense_shape the max per dim
STACKS = {
    "stack_f32": ["f32_2d", "unordered_2d", "empty_2d"],
    "stack_i64_1d": ["i64_1d", "i64_1d"],
    "stack_one": ["i32_3d"],
}

# make_tensor_proto(values, dtype, shape, verify_shape, allow_broadcast) scenarios:
# name -> dict of keyword arguments; "np" holds (list, numpy dtype name) for a numpy array
PROTOS = {
    "float_scalar": {"values": 1.5},
    "int_scalar": {"values": 3},
    "big_int": {"values": 2 ** 40},
    "bool_scalar": {"values": True},
    "str_scalar": {"values": "hi\n\"x\""},
    "bytes_scalar": {"values": b"\x00\xff"},
    "float_list": {"values": [1.0, 2.5, -3.0]},
    "int_list": {"values": [1, 2, 3]},
    "nested": {"values": [[1, 2], [3, 4]]},
    "str_list": {"values": ["a", "bc"]},
    "bool_list": {"values": [True, False, True]},
    "one_elem": {"values": [7]},
    "empty_list": {"values": []},
    "f32_dtype": {"values": [1, 2], "dtype": "float32"},
    "f64_dtype": {"values": [0.1, 0.2], "dtype": "float64"},
    "f16_dtype": {"values": [0.5, 1.0], "dtype": "float16"},
    "f16_scalar": {"values": 0.5, "dtype": "float16"},
    "i64_dtype": {"values": [1, -2], "dtype": "int64"},
    "i64_scalar": {"values": -5, "dtype": "int64"},
    "i8_dtype": {"values": [1, -2], "dtype": "int8"},
    "i16_scalar": {"values": -3, "dtype": "int16"},
    "u8_scalar": {"values": 200, "dtype": "uint8"},
    "u16_dtype": {"values": [1, 2], "dtype": "uint16"},
    "u32_scalar": {"values": 7, "dtype": "uint32"},
    "u64_scalar": {"values": 2 ** 63, "dtype": "uint64"},
    "f64_scalar": {"values": 0.1, "dtype": "float64"},
    "np_f64": {"np": ([[1.0, 2.0], [3.0, 4.0]], "float64")},
    "np_i32": {"np": ([1, 2, 3], "int32")},
    "np_bool": {"np": ([True, False], "bool")},
    "np_f32_scalar": {"np": (2.5, "float32")},
    "np_u16": {"np": ([1, 2], "uint16")},
    "nan_inf": {"values": [float("nan"), float("inf"), -float("inf")], "dtype": "float32"},
    "float_text": {"values": [0.1, 1e-7, 123456789.0, 1e20], "dtype": "float32"},
    "double_text": {"values": [0.1, 1e-7, 1e100], "dtype": "float64"},
    "double_scalar_text": {"values": 1e-7, "dtype": "float64"},
    "broadcast_scalar": {"values": 1.0, "shape": [2, 3]},
    "broadcast_int": {"values": 5, "shape": [4]},
    "shape_fill": {"values": [1, 2], "shape": [4]},
    "shape_reshape": {"values": [1, 2, 3, 4], "shape": [2, 2]},
    "shape_zero": {"values": 1.0, "shape": [0, 3]},
    "allow_broadcast": {"values": 2.0, "shape": [2], "allow_broadcast": True},
    "allow_broadcast_one": {"values": [2.0], "shape": [3], "allow_broadcast": True},
    "verify_ok": {"values": [[1, 2]], "shape": [1, 2], "verify_shape": True},
    # errors
    "verify_bad": {"values": [1, 2], "shape": [2, 1], "verify_shape": True},
    "too_many": {"values": [1, 2, 3], "shape": [2]},
    "ragged": {"values": [[1, 2], [3]]},
    "str_as_int": {"values": ["a"], "dtype": "int32"},
    "float_as_int": {"values": [1.5], "dtype": "int32"},
    "broadcast_bad": {"values": [1.0, 2.0], "shape": [3], "allow_broadcast": True},
    "int_overflow": {"values": [300], "dtype": "uint8"},
}

# decode_json_example inputs: name -> JSON text (or a list of texts, a batch)
JSON = {
    "ints": '{"features": {"feature": {"x": {"int64List": {"value": ["1", "-2", 3]}}}}}',
    "floats": '{"features": {"feature": {"f": {"floatList": {"value": [1.5, -0.25]}}}}}',
    "bytes": '{"features": {"feature": {"b": {"bytesList": {"value": ["aGk=", ""]}}}}}',
    "snake": '{"features": {"feature": {"s": {"int64_list": {"value": [5]}}}}}',
    "order": ('{"features": {"feature": {"z": {"int64List": {"value": [1]}}, '
              '"a": {"floatList": {"value": [2]}}, "m": {"bytesList": {"value": []}}}}}'),
    "empty": "{}",
    "empty_features": '{"features": {}}',
    "empty_feature": '{"features": {"feature": {"e": {}}}}',
    "special_floats": ('{"features": {"feature": {"f": {"floatList": '
                       '{"value": ["NaN", "Infinity", "-Infinity", "1.5"]}}}}}'),
    "batch": ['{"features": {"feature": {"a": {"int64List": {"value": [1]}}}}}', "{}"],
    "matrix": [['{}', '{"features": {"feature": {"a": {"floatList": {"value": [1]}}}}}']],
    "big_int": ('{"features": {"feature": {"x": {"int64List": '
                '{"value": ["-9223372036854775808"]}}}}}'),
    # errors
    "bad_json": "{not json",
    "unknown_field": '{"nope": 1}',
    "wrong_type": '{"features": {"feature": {"x": {"int64List": {"value": ["abc"]}}}}}',
    "float_as_int": '{"features": {"feature": {"x": {"int64List": {"value": [1.5]}}}}}',
    "two_kinds": ('{"features": {"feature": {"x": {"int64List": {"value": [1]}, '
                  '"floatList": {"value": [1]}}}}}'),
    "bad_base64": '{"features": {"feature": {"b": {"bytesList": {"value": ["!!"]}}}}}',
    "not_object": "[1, 2]",
}

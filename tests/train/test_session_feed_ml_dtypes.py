"""Feeds to bfloat16, float8 and int4 tensors follow the cast rules of every other
dtype (TF1's: numbers cast where no value changes beyond float rounding): numpy has
no such types, so a float32 or int64 array is what a user has to feed."""

import numpy as np
import pytest

import onegraph as og

ml_dtypes = pytest.importorskip("ml_dtypes")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from onegraph.convert import from_onnx  # noqa: E402


def _identity_session(elem_type):
    node = helper.make_node("Identity", ["x"], ["y"])
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", elem_type, [3])],
                              [helper.make_tensor_value_info("y", elem_type, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return og.Session(from_onnx(model))


CASES = [
    (TensorProto.BFLOAT16, ml_dtypes.bfloat16, np.float32([1.5, -2.0, 3.3])),
    (TensorProto.BFLOAT16, ml_dtypes.bfloat16, np.float64([1e30, -7.0, 0.1])),
    (TensorProto.BFLOAT16, ml_dtypes.bfloat16, np.int64([1, 257, -3])),
    (TensorProto.BFLOAT16, ml_dtypes.bfloat16, np.bool_([True, False, True])),
    (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn, np.float32([1.5, -2.0, 448.0])),
    (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2, np.int32([1, 2, -3])),
    (TensorProto.INT4, ml_dtypes.int4, np.int64([-8, 0, 7])),
    (TensorProto.UINT4, ml_dtypes.uint4, np.uint8([0, 9, 15])),
]


@pytest.mark.parametrize("elem_type, target, value", CASES)
def test_numbers_are_cast_as_numpy_casts_them(elem_type, target, value):
    got = _identity_session(elem_type).run("y", {"x": value})
    assert got.dtype == np.dtype(target)
    expected = value.astype(target)  # ml_dtypes' own cast is the oracle
    assert got.view(np.uint8).tolist() == expected.view(np.uint8).tolist()


@pytest.mark.parametrize("elem_type, value, words", [
    (TensorProto.FLOAT8E4M3FN, np.float32([1e6, 0, 0]), "value 1000000.0 overflows the "
                                                        "tensor's float8e4m3fn (max 448)"),
    (TensorProto.BFLOAT16, np.float64([1e39, 0, 0]), "overflows the tensor's bfloat16"),
    (TensorProto.INT4, np.int64([0, 100, 0]), "values [0, 100] do not fit the tensor's "
                                             "int4 [-8, 7]"),
    (TensorProto.UINT4, np.int8([-1, 0, 0]), "do not fit the tensor's uint4 [0, 15]"),
    (TensorProto.INT4, np.float32([1, 2, 3]), "dtype float32 does not match the tensor's "
                                             "int4"),
])
def test_values_that_would_change_are_refused_by_name(elem_type, value, words):
    with pytest.raises(og.ShapeError) as info:
        _identity_session(elem_type).run("y", {"x": value})
    assert words in str(info.value)
    assert "feed for 'x'" in str(info.value)


def test_non_finite_floats_still_pass_as_they_are():
    value = np.float32([np.inf, -np.inf, np.nan])
    got = _identity_session(TensorProto.BFLOAT16).run("y", {"x": value})
    assert got.astype(np.float32).tolist()[:2] == [np.inf, -np.inf]
    assert np.isnan(got.astype(np.float32)[2])

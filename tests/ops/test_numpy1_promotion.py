"""Kernels keep their input's dtype under numpy 1.x's value-based casting too.

numpy before 2.0 (the core dependency allows 1.24) types a 0-d array combined with a
Python scalar, or with an array of a smaller type, by value: np.maximum of a 0-d int32
and the int 0 is int64, and a 0-d float32 plus a float16 array is float16. The random
elementwise sweep met both in `make test-min-deps` (numpy 1.24): Relu of an int32
scalar came out int64, and Mean of float16 values, whose sum is taken in float32, summed
in float16 again after a scalar first operand and overflowed. These run the kernels
directly, so they need no onnx; the expected values are the spec's formulas in numpy.
"""

import numpy as np
import pytest

from onegraph.ops import KernelContext, get_op


def _run(op_type, inputs, **attrs):
    op = get_op(op_type)
    return op.kernel(inputs, op.resolve_attrs(attrs, num_outputs=1), KernelContext())[0]


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_relu_of_ints_keeps_the_dtype(dtype, shape):
    x = np.full(shape, -9 if np.dtype(dtype).kind == "i" else 9, dtype)
    assert type(x) is np.ndarray   # (a 0-d array, not a numpy scalar)
    y = _run("Relu", [x])
    assert y.dtype == x.dtype and y.shape == x.shape
    np.testing.assert_array_equal(y, np.where(x > 0, x, 0).astype(dtype))


def test_mean_of_float16_sums_in_float32_after_a_scalar():
    """60000 + 60000 overflows float16 (max 65504); their mean (40000) does not."""
    scalar = np.array(60000, np.float16)
    row = np.array([0.546875, 0.0, 60000], np.float16)
    y = _run("Mean", [scalar, np.array([[[-0.623046875]]], np.float16), row])
    want = (np.float64(60000) - 0.623046875 + row.astype(np.float64)) / 3
    assert y.dtype == np.float16 and y.shape == (1, 1, 3)
    np.testing.assert_allclose(y.astype(np.float64).reshape(-1), want, rtol=1e-3)

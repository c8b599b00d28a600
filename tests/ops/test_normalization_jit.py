"""ops/normalization_jit.py: numba's per-channel affine kernels against numpy's formulas
(the same operations in the same order: equal to the bit), float32 and float64, with
NaN, inf and signed zeros, several batch and image sizes."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def kernels(numba_jit):
    from onegraph.ops import jit

    return jit.kernels("normalization")


def _inputs(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, 4)] = [np.nan, np.inf, -np.inf, -0.0]
    c = shape[1]
    return x, rng.uniform(0.1, 2, c).astype(dtype), rng.standard_normal(c).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 3, 1), (2, 5, 49), (1, 16, 3136), (3, 2, 17)])
def test_kernels_equal_numpy_to_the_bit(kernels, dtype, shape):
    x, a, b = _inputs(dtype, shape, sum(shape))
    col = (slice(None), None)
    zero = x.dtype.type(0)
    with np.errstate(invalid="ignore"):
        for relu in (False, True):
            want = x * a[col] + b[col]
            if relu:
                want = np.maximum(want, zero)
            got = kernels.affine(x, a, b, relu, zero, np.empty_like(x))
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(kernels.clip_below(x, b, np.empty_like(x)),
                                      np.maximum(x, b[col]))
        np.testing.assert_array_equal(kernels.shift_relu(x, b, zero, np.empty_like(x)),
                                      np.maximum(x - b[col], zero))
        # in place
        y = x.copy()
        kernels.shift_relu(y, b, zero, y)
        np.testing.assert_array_equal(y, np.maximum(x - b[col], zero))

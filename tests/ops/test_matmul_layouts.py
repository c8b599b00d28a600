"""MatMul on operands of every memory layout a graph hands it (Transpose and Slice
give views): the kernel copies transposed stacked operands for BLAS, and must give
the same values as a float64 oracle whatever the layout."""

from __future__ import annotations

import numpy as np
import pytest

from onegraph.ops import get_op


def _layouts(x):
    """x as a C-contiguous array, a transposed view of a contiguous transpose, and a
    strided slice of a bigger array (same values)."""
    flipped = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    bigger = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    bigger[..., ::2] = x
    return {"contiguous": x, "transposed": np.swapaxes(flipped, -1, -2),
            "strided": bigger[..., ::2]}


@pytest.mark.parametrize("a_shape,b_shape", [
    ((3, 8, 128), (3, 128, 512)), ((2, 4, 5, 6), (2, 4, 6, 7)), ((5, 6), (2, 3, 6, 4)),
    ((2, 3, 1, 6), (6, 1)), ((4, 6), (6, 3)),
])
@pytest.mark.parametrize("a_layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("b_layout", ["contiguous", "transposed", "strided"])
def test_matmul_of_views_matches_float64(a_shape, b_shape, a_layout, b_layout):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    op = get_op("MatMul")
    (got,) = op.kernel([_layouts(a)[a_layout], _layouts(b)[b_layout]], {}, None)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)

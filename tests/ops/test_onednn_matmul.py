"""ops/onednn_matmul.py: products by constant float32 weights through oneDNN's matmul,
against float64 numpy (and math.erf for the fused Gelu)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from onegraph.ops import onednn, onednn_matmul

from ..backends import needs_backend
from ..threads import run_together

pytestmark = [needs_backend(onednn, "onednn", "oneDNN (the onednn extra)"),
              pytest.mark.usefixtures("with_onednn")]


def _expected(a, w, bias=None, activation=None):
    y = a.astype(np.float64) @ w.astype(np.float64)
    if bias is not None:
        y = y + bias
    if activation == "gelu":
        y = 0.5 * y * (1 + np.vectorize(math.erf, otypes=[np.float64])(y / math.sqrt(2)))
    elif activation == "gelu_tanh":
        y = 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi) * (y + 0.044715 * y ** 3)))
    return y


def _operands(m, k, n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(np.float32),
            (rng.standard_normal((k, n)) / math.sqrt(k)).astype(np.float32),
            rng.standard_normal(n).astype(np.float32))


@pytest.mark.parametrize("activation", [None, "gelu", "gelu_tanh"])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("shape", [(128, 256, 1024), (8, 512, 64), (77, 130, 250)])
def test_products_match_float64(shape, with_bias, activation):
    a, w, b = _operands(*shape)
    cache = {}
    y = onednn_matmul.matmul_constant(a, w, cache, b if with_bias else None, activation)
    assert y is not None and y.dtype == np.float32 and y.shape == shape[::2]
    np.testing.assert_allclose(y, _expected(a, w, b if with_bias else None, activation),
                               rtol=1e-4, atol=1e-4)
    # the plan is kept: a second call with other rows reuses it
    a2 = a[::-1].copy()
    y2 = onednn_matmul.matmul_constant(a2, w, cache, b if with_bias else None, activation)
    np.testing.assert_allclose(y2, y[::-1], rtol=1e-5, atol=1e-5)


def test_transposed_weights_and_strided_rows():
    # Gemm's transB gives a transposed view of the constant on every call; a's rows
    # may be a slice of wider rows
    a, w, _ = _operands(32, 128, 96, seed=1)
    wt = np.ascontiguousarray(w.T)
    wide = np.zeros((32, 200), np.float32)
    wide[:, 10:138] = a
    cache = {}
    for _ in range(2):
        y = onednn_matmul.matmul_constant(wide[:, 10:138], wt.T, cache)
        np.testing.assert_allclose(y, _expected(a, w), rtol=1e-4, atol=1e-4)
    assert sum(len(v) for _, views in cache.values() for v in views.values()) == 1


def test_small_products_and_other_dtypes_are_left_to_the_caller():
    a, w, b = _operands(4, 256, 256)  # fewer rows than _MIN_ROWS
    assert onednn_matmul.matmul_constant(a, w, {}) is None
    a, w, b = _operands(16, 8, 8)  # too few multiply-adds
    assert onednn_matmul.matmul_constant(a, w, {}) is None
    a, w, b = _operands(64, 64, 128)
    assert onednn_matmul.matmul_constant(a.astype(np.float64), w, {}) is None
    assert onednn_matmul.matmul_constant(a, w, {}, b[:5]) is None  # a bias that does not fit
    onednn.use_backend("numpy")
    assert onednn_matmul.matmul_constant(a, w, {}) is None


def test_row_counts_past_the_plan_limit_are_left_to_the_caller():
    a, w, _ = _operands(64, 256, 256)
    cache = {}
    limit = onednn_matmul._PLANS_PER_WEIGHTS
    for m in range(8, 8 + limit):
        assert onednn_matmul.matmul_constant(a[:m], w, cache) is not None
    assert onednn_matmul.matmul_constant(a[:8 + limit], w, cache) is None
    assert onednn_matmul.matmul_constant(a[:8], w, cache) is not None


def test_another_bias_makes_another_plan():
    a, w, b = _operands(16, 128, 128)
    cache = {}
    onednn_matmul.matmul_constant(a, w, cache, b)
    b2 = b + 1
    np.testing.assert_allclose(onednn_matmul.matmul_constant(a, w, cache, b2),
                               _expected(a, w, b2), rtol=1e-4, atol=1e-4)


def test_nan_and_inf_reach_the_rows_they_are_in():
    a, w, b = _operands(16, 128, 192)
    a[3, 7], a[5, 1] = np.nan, np.inf
    # (not through the fused Gelu: oneDNN's gives NaN for inf, the Session's fusion
    # hands non-finite inputs to the Gelu kernel, tests/train/test_fuse_dense.py)
    y = onednn_matmul.matmul_constant(a, w, {}, b)
    want = _expected(a, w, b)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    ok = np.isfinite(want)
    np.testing.assert_allclose(y[ok], want[ok], rtol=1e-4, atol=1e-4)


def test_threads_share_a_plan():
    a, w, b = _operands(64, 256, 256)
    cache = {}
    onednn_matmul.matmul_constant(a, w, cache, b)
    xs = [a * (k + 1) for k in range(4)]
    errors = []

    def work(k):
        try:
            for _ in range(20):
                np.testing.assert_allclose(onednn_matmul.matmul_constant(xs[k], w, cache, b),
                                           _expected(xs[k], w, b), rtol=1e-4, atol=1e-3)
        except Exception as e:  # reported below
            errors.append(e)

    assert run_together(work, 4, timeout=60) == [] and not errors

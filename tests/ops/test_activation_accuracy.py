"""Pointwise activations in float32 against their ONNX formulas evaluated in float64.

The kernels avoid np.where (slow on random masks) and build the piecewise functions from
extrema, sums and in-place passes; these checks cover the points where such rewrites go
wrong: signed zeros, infinities, NaN, both tails and the breakpoints themselves.
"""

import math
import warnings

import numpy as np
import pytest

from onegraph.ops import KernelContext, get_op


def run(op_type, inputs, **attrs):
    op = get_op(op_type)
    return op.kernel(inputs, op.resolve_attrs(attrs), KernelContext())[0]


def _inputs():
    rng = np.random.default_rng(3)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -3.0, 2.5, -2.5,
               -80.0, -88.0, 40.0, 88.0, 1e-30, -1e-30, 1e-7, -1e-7]
    return np.concatenate([rng.standard_normal(20000) * 3, rng.uniform(-60, 60, 2000),
                           special]).astype(np.float32)


SELU_ALPHA = 1.67326319217681884765625
SELU_GAMMA = 1.05070102214813232421875

# (op, attrs, float64 formula, relative tolerance)
CASES = [
    ("Sigmoid", {}, lambda x: 1 / (1 + np.exp(-x)), 1e-6),
    ("LeakyRelu", {"alpha": 0.01}, lambda x: np.where(x < 0, 0.01 * x, x), 1e-6),
    ("LeakyRelu", {"alpha": 0.0}, lambda x: np.where(x < 0, 0.0 * x, x), 1e-6),
    ("LeakyRelu", {"alpha": 3.0}, lambda x: np.where(x < 0, 3.0 * x, x), 1e-6),
    ("LeakyRelu", {"alpha": -0.5}, lambda x: np.where(x < 0, -0.5 * x, x), 1e-6),
    ("Elu", {"alpha": 0.7}, lambda x: np.where(x < 0, 0.7 * np.expm1(x), x), 1e-6),
    ("Selu", {}, lambda x: SELU_GAMMA * np.where(x <= 0, SELU_ALPHA * np.expm1(x), x),
     1e-6),
    ("HardSigmoid", {"alpha": 0.25, "beta": 0.5},
     lambda x: np.clip(0.25 * x + 0.5, 0, 1), 1e-6),
    ("HardSwish", {}, lambda x: x * np.clip(x / 6 + 0.5, 0, 1), 1e-6),
    ("Softsign", {}, lambda x: x / (1 + np.abs(x)), 1e-6),
    ("ThresholdedRelu", {"alpha": 1.0}, lambda x: np.where(x > 1.0, x, 0.0), 0),
]


@pytest.mark.parametrize("op_type,attrs,formula,rtol", CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_float32_matches_float64_formula(op_type, attrs, formula, rtol):
    x = _inputs()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = formula(x.astype(np.float64))
        got = run(op_type, [x], **attrs)
    assert got.dtype == np.float32 and got.shape == x.shape
    got = got.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg="NaN positions")
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)],
                                  want[~finite & ~np.isnan(want)], err_msg="infinities")
    # float32 rounding of inputs near a clamp breakpoint (0.25 x + 0.5 = 0) costs
    # relative accuracy; an absolute floor of a few float32 ulps of 1 covers it
    np.testing.assert_allclose(got[finite], want[finite], rtol=max(rtol, 1e-7), atol=3e-7)


def test_sigmoid_tail_down_to_float32_range():
    # 1 / (1 + exp(-x)) is exact-ish while exp(-x) stays finite (x > -88.7)
    x = np.array([-80.0, -60.0, -30.0, -17.0], np.float32)
    want = np.array([1 / (1 + math.exp(-v)) for v in x.astype(np.float64)])
    np.testing.assert_allclose(run("Sigmoid", [x]), want, rtol=1e-6)


def test_float16_sigmoid_keeps_its_tail():
    x = np.array([-12.0, -15.0, 0.0, 12.0], np.float16)
    want = 1 / (1 + np.exp(-x.astype(np.float64)))
    got = run("Sigmoid", [x])
    assert got.dtype == np.float16
    # float16 subnormals below 6.1e-5 are spaced 6e-8 apart
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=6e-8)


def test_prelu_broadcast_slope_and_specials():
    x = np.array([[-2.0, -0.0, 0.0, 3.0, np.inf, -np.inf, np.nan]] * 2, np.float32)
    slope = np.array([[0.25], [-1.0]], np.float32)
    with np.errstate(all="ignore"):
        want = np.where(x < 0, x * slope, x)
    got = run("PRelu", [x, slope])
    np.testing.assert_array_equal(got, want)


def test_clip_both_bounds_and_crossed_bounds():
    x = np.array([-5.0, 0.5, 7.0, np.nan, -np.inf, np.inf], np.float32)
    lo, hi = np.array(0.0, np.float32), np.array(6.0, np.float32)
    np.testing.assert_array_equal(run("Clip", [x, lo, hi]),
                                  [0.0, 0.5, 6.0, np.nan, 0.0, 6.0])
    # min > max: every value becomes max (ONNX)
    np.testing.assert_array_equal(run("Clip", [x[:3], hi, lo]), [0.0, 0.0, 0.0])


def test_float32_erf_against_math_erf(blas_backend):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(50000) * 2, rng.uniform(-6, 6, 20000),
                        np.logspace(-30, 1, 3000), -np.logspace(-30, 1, 3000),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 3.9, 4.0, 4.1, 1e30]]
                       ).astype(np.float32)
    got = run("Erf", [x])
    assert got.dtype == np.float32
    want = np.array([math.erf(v) for v in x.astype(np.float64)])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=5e-7, atol=0)
    assert np.abs(got[ok]).max() <= 1.0
    assert np.signbit(run("Erf", [np.array([-0.0], np.float32)]))[0]


def test_float16_and_float64_erf(blas_backend):
    x = np.linspace(-5, 5, 201)
    want = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(run("Erf", [x]), want, rtol=1e-15, atol=1e-16)
    got16 = run("Erf", [x.astype(np.float16)])
    assert got16.dtype == np.float16
    np.testing.assert_allclose(got16.astype(np.float64),
                               [math.erf(v) for v in x.astype(np.float16).astype(float)],
                               rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_erf_and_activations_of_empty_arrays(dtype, blas_backend):
    x = np.zeros((0, 3), dtype)
    for op_type in ("Erf", "Sigmoid", "HardSwish", "ThresholdedRelu"):
        y = run(op_type, [x])
        assert y.shape == (0, 3) and y.dtype == dtype, op_type

"""og's special functions (lgamma, digamma, polygamma, zeta, igamma, igammac, betainc,
lbeta, erfinv, erfcinv, ndtri, the Bessel I functions, xlog1py) against TensorFlow's
recorded outputs and gradients (tests/train/tf1_special_cases.py, recorded into
data/tf1_special_reference.npz), against high-precision values where TensorFlow is
itself inaccurate, plus the errors and the ONNX export refusal.

Tolerances. Kernels compute in float64 and agree with TF to ~1e-14 relative on these
inputs, so float64 outputs are held to rtol 1e-10 (igamma/igammac at large a 1e-11
worse in TF itself: 1e-9 there), gradients to 1e-9 (both sides evaluate the same TF
formulas; the last digits move with lgamma/exp rounding). float32 outputs are the
float64 result rounded once against TF's float32 kernels (a few float32 ulps): rtol
2e-6. float32 gradients are formulas evaluated in float32 by both (exp of a sum of
terms ~10-100 in size, each rounded to 6e-8 relative): rtol 5e-5. Non-finite results
(NaN, +-inf) must match exactly.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ConversionError, ShapeError
from onegraph.ops import special as kernels
from onegraph.train import api_special

from . import tf1_reference
from .tf1_special_cases import CASES

REF = tf1_reference.load("special")
# TF's own float32 kernels compute the prefactor's logarithms (a log x - lgamma(a),
# lbeta(30, 30) = -41.7) in float32: an absolute error ~ulp(50) = 4e-6 becomes that
# relative error of the result. Ours are the float64 results rounded once.
_LOOSER = {"igamma64": 1e-9, "igammac64": 1e-9, "igamma32": 2e-5, "igammac32": 2e-5,
           "betainc32": 2e-5}


def _function(path: str):
    """og's function at `path` (og.lgamma, og.math.erfinv, ...), or the one in
    train/api_special.py until og.math exposes it."""
    try:
        fn = og
        for part in path.split("."):
            fn = getattr(fn, part)
        return fn
    except AttributeError:
        fn = api_special
        for part in path.split(".")[1:] if path.startswith("math.") else [path]:
            fn = getattr(fn, part)
        return fn


def _check(got, want, rtol, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaNs")
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)],
                                  want[~finite & ~np.isnan(want)], err_msg=f"{what}: infs")
    tiny = np.finfo(want.dtype).tiny
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=tiny,
                               err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow(case, monkeypatch):
    monkeypatch.setattr(tf1_reference, "function", _function)
    name = case[0]
    outs, grads = tf1_reference.run_case(REF, case)
    want = REF[f"out/{name}"]
    f32 = want.dtype == np.float32
    _check(outs[0], want, _LOOSER.get(name, 2e-6 if f32 else 1e-10), name)
    for key, got in grads.items():
        _check(got, REF[f"grad/{name}/{key}"], 5e-5 if f32 else 1e-9, f"{name} d/d{key}")


def test_every_case_recorded_with_gradients():
    for name, _, _, _, wrt in CASES:
        assert f"out/{name}" in REF, name
        for key in wrt:
            assert f"grad/{name}/{key[1:]}" in REF, (name, key)


# ------------------------------------------------------------ high-precision checks

_PI = Decimal("3.14159265358979323846264338327950288419716939937511")


def _lgamma_reference(x: float) -> float:
    """lgamma(x), x > 0, to 30+ digits: the recurrence up to x + 100, then Stirling
    (9 terms: the next is below 1e-35 there)."""
    getcontext().prec = 60
    d = Decimal(x)
    prod = Decimal(1)
    for k in range(100):
        prod *= d + k
    z = d + 100
    s = (z - Decimal("0.5")) * z.ln() - z + (2 * _PI).ln() / 2
    bern = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30),
            Fraction(5, 66), Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510),
            Fraction(43867, 798)]
    for k, b in enumerate(bern, start=1):
        s += Decimal(b.numerator) / Decimal(b.denominator) / (2 * k * (2 * k - 1)
                                                              * z ** (2 * k - 1))
    return float(s - prod.ln())


def test_lgamma_keeps_relative_accuracy_next_to_its_zeros():
    # TF's lgamma loses relative accuracy where lgamma crosses 0 (at 1 and 2);
    # here within 4 ulp of a 50-digit reference
    xs = np.array([1 - 1e-9, 1 + 1e-12, 1.001, 0.999, 1.2, 2 - 1e-10, 2 + 1e-7, 1.999, 2.3])
    got = kernels.lgamma(xs)
    want = np.array([_lgamma_reference(float(v)) for v in xs])
    assert np.all(np.abs(got - want) <= 4 * np.spacing(np.abs(want))), (got - want) / want


def test_lgamma_float64_within_a_few_ulp():
    xs = np.concatenate([np.linspace(0.01, 12, 97), [1e-5, 30.5, 1e4 + 0.3]])
    got = kernels.lgamma(xs)
    want = np.array([_lgamma_reference(float(v)) for v in xs])
    assert np.max(np.abs(got - want) / np.spacing(np.abs(want))) <= 8


def test_erfinv_and_ndtri_keep_relative_accuracy_near_zero():
    # TF computes erfinv through ndtri((1 + x) / 2), which returns 0 for x = 1e-300
    z = np.array([1e-300, 1e-100, 1e-10, -1e-8])
    want = (math.sqrt(math.pi) / 2) * z * (1 + math.pi / 12 * z * z)
    np.testing.assert_allclose(kernels.erfinv(z), want, rtol=4e-16)
    p = 0.5 + np.array([1e-12, -1e-13])
    d = p - 0.5                          # exact: the offset the rounded p really has
    np.testing.assert_allclose(kernels.ndtri(p), math.sqrt(2 * math.pi) * d, rtol=1e-15)


def _erfc_decimal(y: float) -> Decimal:
    """erfc(y) for y >= 3 by its continued fraction at 60 digits (converged there)."""
    getcontext().prec = 60
    d = Decimal(y)
    f = d
    for k in range(400, 0, -1):
        f = d + Decimal(k) / 2 / f
    return (-(d * d)).exp() / _PI.sqrt() / f


def test_inverse_error_functions_invert_erf():
    z = np.linspace(-0.999, 0.999, 101)
    back = np.array([math.erf(v) for v in kernels.erfinv(z)])
    assert np.max(np.abs(back - z) / np.spacing(np.abs(z) + 1e-300)) <= 8
    # the far tail (TF is ~10 ulp off at 1e-300), against a 60-digit erfc: the error
    # of y is (erfc(y) - q) / erfc'(y), within 1 ulp
    for q in [1e-300, 1e-250, 1e-200, 1e-100, 1e-20, 1e-5]:
        y = float(kernels.erfcinv(np.array([q]))[0])
        dy = (_erfc_decimal(y) - Decimal(q)) / (-2 / _PI.sqrt() * (-(Decimal(y) ** 2)).exp())
        assert abs(float(dy)) <= np.spacing(y), (q, y, float(dy))
    # next to +-1 erfinv works from 1 - |z| (exact), where TF's ndtri((1 + z) / 2)
    # rounds: erfinv(1 - 2^-40) is 5.0420319 here, 5.0420211 in TF
    z = np.array([1 - 2.0 ** -40, -1 + 2.0 ** -30])
    np.testing.assert_array_equal(kernels.erfinv(z),
                                  np.sign(z) * kernels.erfcinv(1 - np.abs(z)))


def test_float32_polygamma_at_large_negative_x():
    # TF's float32 Polygamma gives 0.0357 for trigamma(-10.7); the direct sum is 14.99
    x = np.array([-10.7, -100.2, -3.3], np.float32)
    want = [sum(1.0 / (k + float(v)) ** 2 for k in range(200000)) for v in x]
    g = og.Graph()
    with g.as_default():
        got = og.Session(g).run(api_special.polygamma(1.0, og.constant(x)))
    np.testing.assert_allclose(got, want, rtol=2e-5)  # the sum's tail ~1/200000


def test_betainc_symmetric_point_and_igamma_tiny_a_stay_in_range():
    # TF gives 0.5000000000001281 here and igamma(1e-300, 0.5) = 1.0000000000000233
    assert abs(kernels.betainc(1000.0, 1000.0, 0.5) - 0.5) < 1e-12
    p = kernels.igamma(np.array([1e-300, 1e-300]), np.array([0.5, 1e-300]))
    q = kernels.igammac(np.array([1e-300, 1e-300]), np.array([0.5, 1e-300]))
    assert np.all((p >= 0) & (p <= 1) & (q >= 0) & (q <= 1))


def test_bessel_within_a_few_ulp_of_the_power_series():
    # 50-digit sums of the positive series; measured: i0 2, i0e 3, i1e 6, i1 9 ulp
    getcontext().prec = 50
    x = np.concatenate([np.linspace(0.01, 8, 25), np.linspace(8.05, 40, 20), [-3.5, -12.0]])

    def series(nu, v):
        d = Decimal(abs(v))
        term, total = (d / 2) ** nu, Decimal(0)
        for k in range(1, 200):
            total += term
            term = term * (d * d / 4) / (k * (k + nu))
        return total * (-1 if v < 0 and nu else 1), (-d).exp()

    for fn, nu, scaled, bound in ((kernels.bessel_i0, 0, False, 3),
                                  (kernels.bessel_i0e, 0, True, 4),
                                  (kernels.bessel_i1, 1, False, 10),
                                  (kernels.bessel_i1e, 1, True, 8)):
        want = np.array([float(t * e if scaled else t) for t, e in (series(nu, v) for v in x)])
        err = np.abs(fn(x) - want) / np.spacing(np.abs(want))
        assert err.max() <= bound, (fn.__name__, err.max())


# ---------------------------------------------------------------------------- errors

@pytest.mark.parametrize("fn,args", [
    (api_special.lgamma, ([1, 2],)), (api_special.bessel_i0, (3,)),
    (api_special.erfcinv, (np.array([1, 2], np.int64),)), (api_special.lbeta, ([1, 2],)),
    (api_special.igamma, (1, 2)), (api_special.xlog1py, ([True], [1.0])),
])
def test_integer_inputs_are_refused_as_tf_does(fn, args):
    with og.Graph().as_default():
        with pytest.raises(TypeError, match="float"):
            fn(*args)


def test_mixed_dtypes_refused_numbers_adopt_the_tensor_dtype():
    with og.Graph().as_default():
        x64 = og.constant(np.array([1.0, 2.0]))
        with pytest.raises(TypeError, match="one dtype"):
            api_special.igamma(og.constant(np.float32(1.0)), x64)
        with pytest.raises(TypeError, match="float"):
            api_special.zeta(og.constant(np.array([2, 3], np.int32)), x64)
        assert api_special.polygamma(1, x64).dtype == og.float64
        assert api_special.igamma(0.5, og.constant(np.float32(2.0))).dtype == og.float32


def test_shape_rules_of_betainc_and_lbeta():
    with og.Graph().as_default():
        with pytest.raises(ShapeError, match="betainc"):
            api_special.betainc(og.ones([2, 3]), og.ones([3]), og.ones([2, 3]))
        assert api_special.betainc(og.ones([2, 3]), 1.0, og.ones([2, 3])).shape == (2, 3)
        with pytest.raises(ShapeError, match="rank >= 1"):
            api_special.lbeta(og.constant(2.0))


def test_float16_computed_and_rounded_once():
    g = og.Graph()
    with g.as_default():
        x = og.constant(np.array([0.5, 3.0, 10.0], np.float16))
        y = og.Session(g).run(api_special.lgamma(x))
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, kernels.lgamma(np.array([0.5, 3.0, 10.0],
                                                             np.float16)).astype(np.float16))


def test_kernel_refuses_integer_arrays():
    op = og.ops.get_op("Lgamma", "onegraph") if hasattr(og, "ops") else None
    from onegraph.ops import get_op

    kernel = get_op("Lgamma", "onegraph").kernel
    with pytest.raises(ShapeError, match="float"):
        kernel([np.array([1, 2])], {}, None)
    del op


def test_saved_graph_runs_and_onnx_export_refuses(tmp_path):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3], name="x")
        y = og.identity(api_special.lgamma(x) + api_special.bessel_i1e(x), name="y")
        sig = og.signature({"x": x}, {"y": y})
        path = str(tmp_path / "special.og")
        og.save(g, path, signatures={"serving": sig})
        with pytest.raises(ConversionError, match="Lgamma|BesselI1e"):
            to_onnx(g, signatures={"serving": sig})
    a = np.array([0.5, 2.5, 7.0])
    got = og.Session(og.load(path)).run_signature("serving", x=a)["y"]
    np.testing.assert_allclose(got, kernels.lgamma(a) + kernels.bessel_i1e(a), rtol=1e-15)

"""og.linalg's LU, expm, sqrtm, tridiagonal and banded solvers against TensorFlow's
values and gradients, recorded in data/tf1_linalgmore_reference.npz by
`tools/record_tf1_reference.py linalgmore` (TensorFlow 2.21's tf.compat.v1.linalg);
gradients TF lacks (Lu), and all of them again, by central differences; run-time failures;
bad arguments; saving.

Tolerances: float64 outputs and gradients agree with TF's to 1e-12 of the largest
magnitude (measured: at most 8e-16; the algorithms are TF's own, so only rounding
differs, and sqrtm's iteration converges to 10 n eps); float32 to 2e-6 (measured: at
most 4e-7, a few float32 ulps of float32 Pade sums and solves).
"""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError

from . import tf1_reference
from .gradcheck import check_op_gradients
from .tf1_linalgmore_cases import CASES, make_inputs

og.linalg   # noqa: B018 - load og's public names before the module that extends og.linalg
from onegraph.train import api_linalg_more  # noqa: E402,F401 - adds the og.linalg names

F64_TOL = 1e-12
F32_TOL = 2e-6


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("linalgmore")


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        if f"in/{key}" in reference:
            np.testing.assert_array_equal(reference[f"in/{key}"], value)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow_values_and_gradients(reference, case):
    tol = F32_TOL if "f32" in case[0] else F64_TOL
    tf1_reference.check_case(reference, case, rtol=tol, atol=tol)


def _run(fn, *arrays):
    with og.Graph().as_default():
        out = fn(*[og.constant(a) for a in arrays])
        return og.Session().run(list(out) if isinstance(out, tuple) else out)


def test_lu_factors_singular_and_batched_matrices():
    rng = np.random.RandomState(3)
    a = rng.randn(3, 5, 5)
    a[1, :, 2] = a[1, :, 0] * 2.0                    # singular: a zero pivot appears
    packed, p = _run(og.linalg.lu, a)
    assert p.dtype == np.int32 and p.shape == (3, 5)
    lower = np.tril(packed, -1) + np.eye(5)
    upper = np.triu(packed)
    np.testing.assert_allclose(lower @ upper, np.take_along_axis(a, p[..., None], 1),
                               atol=1e-12)
    assert np.all(np.abs(np.tril(packed, -1)) <= 1.0 + 1e-15)   # partial pivoting
    back = _run(lambda x: og.linalg.lu_reconstruct(*og.linalg.lu(x)), a)
    np.testing.assert_allclose(back, a, atol=1e-12)


@pytest.mark.parametrize("build, x", [
    (lambda a: og.linalg.lu(a)[0], np.random.RandomState(4).randn(4, 4)),
    (lambda a: og.linalg.lu(a)[0], np.random.RandomState(5).randn(2, 3, 3)),
    (lambda a: og.linalg.expm(a), np.random.RandomState(6).randn(2, 3, 3)),
    (lambda a: og.linalg.expm(a), 3.0 * np.random.RandomState(7).randn(3, 3)),
    (lambda a: og.linalg.sqrtm(a), np.random.RandomState(11).rand(3, 3) + 2 * np.eye(3)),
    (lambda a: og.linalg.tridiagonal_solve(a, og.constant(np.ones((4, 2)))),
     np.random.RandomState(8).randn(3, 4) + np.asarray([[0.0], [3.0], [0.0]])),
], ids=["lu", "lu_batch", "expm_batch", "expm_squarings", "sqrtm", "tridiagonal_solve"])
def test_gradients_match_central_differences(build, x):
    check_op_gradients(build, [x], rtol=1e-6)


def test_sqrtm_squares_back_and_names_matrices_without_a_real_root():
    rng = np.random.RandomState(9)
    a = rng.randn(2, 4, 4)
    a = a @ np.swapaxes(a, -1, -2) + np.eye(4)
    root = _run(og.linalg.sqrtm, a)
    np.testing.assert_allclose(root @ root, a, atol=1e-12)
    np.testing.assert_array_equal(_run(og.linalg.sqrtm, np.zeros((3, 3))), np.zeros((3, 3)))
    assert np.all(np.isnan(_run(og.linalg.sqrtm, np.diag([1.0, -4.0]))))


def test_expm_of_known_matrices():
    t = 0.7
    rotation = _run(og.linalg.expm, np.asarray([[0.0, -t], [t, 0.0]]))
    np.testing.assert_allclose(rotation, [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]],
                               atol=1e-15)
    nilpotent = _run(og.linalg.expm, np.asarray([[0.0, 50.0], [0.0, 0.0]]))
    np.testing.assert_allclose(nilpotent, [[1.0, 50.0], [0.0, 1.0]], rtol=1e-13)
    d = np.diag([-30.0, 0.5, 12.0])
    # normwise accurate (squarings cost the tiny exp(-30) its relative accuracy)
    np.testing.assert_allclose(_run(og.linalg.expm, d), np.diag(np.exp(np.diag(d))),
                               rtol=1e-13, atol=1e-13 * np.exp(12.0))


def test_eigh_tridiagonal_vectors_and_index_range():
    inputs = make_inputs()
    alpha, beta = inputs["alpha"], inputs["beta"]
    dense = np.diag(alpha) + np.diag(beta, 1) + np.diag(beta, -1)
    e, v = _run(lambda a, b: og.linalg.eigh_tridiagonal(a, b, eigvals_only=False), alpha, beta)
    np.testing.assert_allclose(dense @ v, v * e, atol=1e-12)
    np.testing.assert_allclose(v.T @ v, np.eye(5), atol=1e-12)
    e2, v2 = _run(lambda a, b: og.linalg.eigh_tridiagonal(
        a, b, eigvals_only=False, select="i", select_range=(1, 2)), alpha, beta)
    np.testing.assert_allclose(e2, e[1:3], atol=1e-14)
    assert v2.shape == (5, 2)
    np.testing.assert_allclose(dense @ v2, v2 * e2, atol=1e-12)


# TensorFlow 2.21's tf.linalg.banded_triangular_solve (not in tf.compat.v1, so not in
# the recorded cases) for bands [[2, 3, 4], [5, 6, 7]] (lower; upper: the rows swapped)
# and rhs [1, 2, 3]^T: they fix the layout (diagonal first and subdiagonals aligned
# right when lower; superdiagonals aligned left, diagonal last, when upper).
_TF_BANDED = [
    (True, False, [0.5, -0.3333333333333333, 1.3333333333333333]),
    (False, False, [2.5833333333333335, -0.8333333333333334, 0.75]),
    (True, True, [3.75, -1.0833333333333333, 0.75]),
]


@pytest.mark.parametrize("lower, adjoint, want", _TF_BANDED)
def test_banded_triangular_solve_matches_tensorflow(lower, adjoint, want):
    bands = np.asarray([[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]])
    if not lower:
        bands = bands[::-1]
    got = _run(lambda b, r: og.linalg.banded_triangular_solve(b, r, lower=lower,
                                                              adjoint=adjoint),
               bands, np.asarray([[1.0], [2.0], [3.0]]))
    np.testing.assert_allclose(got.ravel(), want, rtol=1e-15)


@pytest.mark.parametrize("lower", [True, False])
def test_banded_triangular_solve_against_a_dense_solve(lower):
    inputs = make_inputs()
    bands = inputs["bands_lower" if lower else "bands_upper"]
    rhs = inputs["band_rhs"]
    k, m = bands.shape
    dense = np.zeros((m, m))
    for j in range(k):
        for i in range(m):
            if lower and i >= j:
                dense[i, i - j] = bands[j, i]
            if not lower and i + j < m:
                dense[i, i + j] = bands[k - 1 - j, i]
    got = _run(lambda b, r: og.linalg.banded_triangular_solve(b, r, lower=lower), bands, rhs)
    np.testing.assert_allclose(got, np.linalg.solve(dense, rhs), atol=1e-12)


def test_failures_when_the_graph_runs_are_named():
    singular = np.asarray([[0.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 3.0, 4.0]])  # main 0 and
    cases = [                                                            # sub 0 in column 0
        (lambda: og.linalg.tridiagonal_solve(og.constant(singular), np.ones((3, 1))),
         "not invertible"),
        (lambda: og.linalg.tridiagonal_solve(
            og.constant(np.asarray([[1.0, 1.0, 0.0], [0.0, 2.0, 2.0], [0.0, 1.0, 1.0]])),
            np.ones((3, 1)), partial_pivoting=False), "not invertible"),
        (lambda: og.linalg.banded_triangular_solve(np.asarray([[1.0, 0.0]]), np.ones((2, 1))),
         "singular"),
        (lambda: og.linalg.lu(np.asarray([[np.nan, 1.0], [1.0, 1.0]]))[0], "NaN"),
    ]
    for build, message in cases:
        with og.Graph().as_default():
            y = build()
            with pytest.raises(ExecutionError, match=message):
                og.Session().run(y)


def test_bad_arguments_are_named_errors():
    sq = np.eye(3)
    cases = [
        (lambda: og.linalg.lu(np.ones((2, 3))), ShapeError, "square"),
        (lambda: og.linalg.lu(np.ones((2, 2), np.int32)), TypeError, "float"),
        (lambda: og.linalg.lu(sq, output_idx_type=og.float32), TypeError, "output_idx_type"),
        (lambda: og.linalg.lu_solve(sq, np.asarray([0.0, 1.0, 2.0]), np.ones((3, 1))),
         TypeError, "perm"),
        (lambda: og.linalg.lu_solve(sq, np.arange(3), np.ones((2, 1))), ShapeError, "3 rows"),
        (lambda: og.linalg.lu_solve(sq, np.arange(3), og.constant(np.ones((3, 1), np.float32))),
         TypeError, "float32"),
        (lambda: og.linalg.expm(np.ones(3)), ShapeError, "rank >= 2"),
        (lambda: og.linalg.sqrtm(np.ones((2, 3))), ShapeError, "square"),
        (lambda: og.linalg.tridiagonal_solve(np.ones((3, 4)), np.ones((4, 1)),
                                             diagonals_format="banded"), ValueError, "format"),
        (lambda: og.linalg.tridiagonal_solve(np.ones((2, 4)), np.ones((4, 1))), ShapeError,
         r"\[\.\.\., 3, m\]"),
        (lambda: og.linalg.tridiagonal_solve(np.ones((3, 4)), np.ones((5, 1))), ShapeError,
         "does not fit"),
        (lambda: og.linalg.tridiagonal_solve(np.ones((3, 4)), np.ones((4, 1)),
                                             perturb_singular=True), ValueError, "perturb"),
        (lambda: og.linalg.tridiagonal_solve([np.ones(4)] * 2, np.ones((4, 1)),
                                             diagonals_format="sequence"), TypeError, "three"),
        (lambda: og.linalg.tridiagonal_matmul(np.ones((3, 4)),
                                              og.constant(np.ones((4, 1), np.float32))),
         TypeError, "float32"),
        (lambda: og.linalg.eigh_tridiagonal(np.ones(4), np.ones(4)), ShapeError, r"\[3\]"),
        (lambda: og.linalg.eigh_tridiagonal(np.ones(4), np.ones(3), select="v",
                                            select_range=(0.0, 1.0)), ValueError, "'v'"),
        (lambda: og.linalg.eigh_tridiagonal(np.ones(4), np.ones(3), select="i",
                                            select_range=(2, 5)), ValueError, "select_range"),
        (lambda: og.linalg.banded_triangular_solve(np.ones((2, 3)), np.ones((3, 1)),
                                                   lower="yes"), TypeError, "lower"),
    ]
    for build, error, message in cases:
        with og.Graph().as_default():
            with pytest.raises(error, match=message):
                build()


def test_runs_after_saving(tmp_path):
    a = np.random.RandomState(10).randn(3, 3)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3, 3], name="x")
        packed, perm = og.linalg.lu(x)
        y = og.identity(og.linalg.expm(x) + og.linalg.lu_reconstruct(packed, perm)
                        + og.linalg.sqrtm(og.matmul(x, x, transpose_b=True)), name="y")
        sig = og.signature({"x": x}, {"y": y})
        want = og.Session(g).run(y, {x: a})
        path = str(tmp_path / "linalg_more.og")
        og.save(g, path, signatures={"serving": sig})
    got = og.Session(og.load(path)).run_signature("serving", x=a)["y"]
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------ fuzz findings (edge inputs)

@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 2, 2), (2, 0, 0, 0)])
def test_empty_matrices_give_empty_results_as_tf(shape):
    # a 0 x 0 matrix made reshape(-1, 0, 0) fail inside the kernels (a raw ValueError)
    a = np.zeros(shape)
    packed, perm = _run(og.linalg.lu, a)
    assert packed.shape == shape and perm.shape == shape[:-1] and perm.dtype == np.int32
    assert _run(og.linalg.expm, a).shape == shape
    assert _run(og.linalg.sqrtm, a).shape == shape
    for build in (lambda x: og.linalg.lu(x)[0], og.linalg.expm, og.linalg.sqrtm):
        with og.Graph().as_default():
            x = og.constant(a)
            grad = og.gradients(og.reduce_sum(build(x)), [x])[0]
            assert og.Session().run(grad).shape == shape


@pytest.mark.parametrize("diagonals, rhs, want", [
    (np.zeros((3, 0)), np.zeros((0, 1)), (0, 1)),
    (np.zeros((2, 3, 0)), np.zeros((2, 0, 4)), (2, 0, 4)),
    (np.ones((3, 4)), np.zeros((4, 0)), (4, 0)),
])
def test_tridiagonal_solve_of_empty_systems(diagonals, rhs, want):
    got = _run(lambda d, r: og.linalg.tridiagonal_solve(d, r), diagonals, rhs)
    assert got.shape == want
    with og.Graph().as_default():
        d, r = og.constant(diagonals), og.constant(rhs)
        grads = og.gradients(og.reduce_sum(og.linalg.tridiagonal_solve(d, r)), [d, r])
        got_d, got_r = og.Session().run(grads)
        assert got_d.shape == diagonals.shape and got_r.shape == rhs.shape


@pytest.mark.parametrize("a", [
    np.asarray([[np.inf, 0.0], [0.0, 1.0]]),
    np.asarray([[1e300, 0.0], [0.0, 1.0]]),
    np.asarray([[1e308, 1e308], [1e308, 1e308]]),       # the 1-norm overflows
    np.asarray([[np.nan, 0.0], [0.0, 1.0]]),
    np.asarray([[1e30, 0.0], [0.0, 1.0]], np.float32),
], ids=["inf", "1e300", "norm_overflow", "nan", "f32_1e30"])
def test_expm_of_huge_or_non_finite_matrices_is_non_finite(a):
    # inf made the squaring count int(inf): an OverflowError inside the kernel
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")          # numpy's overflow warnings stay inside
        got = _run(og.linalg.expm, a)
    assert got.shape == a.shape and got.dtype == a.dtype and not np.all(np.isfinite(got))


def test_expm_of_a_subnormal_matrix():
    # 5e-324 / limit underflowed to 0 and log2(0) = -inf went into int()
    got = _run(og.linalg.expm, np.asarray([[5e-324]]))
    np.testing.assert_array_equal(got, [[1.0]])


def test_nan_and_inf_inputs_propagate_or_are_named():
    nan = np.asarray([[np.nan, 0.0], [0.0, 1.0]])
    assert np.all(np.isnan(_run(og.linalg.sqrtm, nan)))
    assert np.all(np.isnan(_run(og.linalg.sqrtm, np.asarray([[np.inf, 0.0], [0.0, 1.0]]))))
    got = _run(lambda d, r: og.linalg.tridiagonal_solve(d, r), np.full((3, 3), np.nan),
               np.ones((3, 1)))
    assert np.all(np.isnan(got))
    with og.Graph().as_default():
        y = og.linalg.lu(og.constant(nan))[0]
        with pytest.raises(ExecutionError, match="NaN"):
            og.Session().run(y)


def test_banded_triangular_solve_with_infinity_is_non_finite_not_singular():
    # np.linalg.solve's LU called the matrix singular (a wrapped LinAlgError); TF's
    # banded kernel substitutes, and so does og's now
    bands = np.asarray([[2.0, 3.0, 4.0], [0.0, np.inf, 7.0]])    # A[1, 0] = inf
    for adjoint, want in [(False, [0.5, -np.inf, np.inf]), (True, [np.inf, -0.25, 0.25])]:
        got = _run(lambda b, r: og.linalg.banded_triangular_solve(b, r, adjoint=adjoint),
                   bands, np.ones((2, 3, 2)))
        assert got.shape == (2, 3, 2)
        np.testing.assert_array_equal(got[1, :, 0], want)
    got = _run(lambda b, r: og.linalg.banded_triangular_solve(b, r), bands[:1],
               np.asarray([[np.nan], [1.0], [2.0]]))
    np.testing.assert_array_equal(got.ravel(), [np.nan, 1 / 3, 0.5])


def test_eigh_tridiagonal_select_range_must_hold_ints():
    # int() read "ab" (a raw ValueError) and truncated 1.5 to 1
    for select_range, error in [(("a", "b"), TypeError), ((1.5, 2), TypeError),
                                ("ab", TypeError), ((2 ** 70, 2 ** 71), ValueError),
                                (None, ValueError), (3, ValueError)]:
        with og.Graph().as_default():
            with pytest.raises((error, ValueError), match="select_range"):
                og.linalg.eigh_tridiagonal(np.ones(4), np.ones(3), select="i",
                                           select_range=select_range)

"""og.linalg.lu_solve, lu_reconstruct, lu_matrix_inverse and eigh_tridiagonal with
matrix sizes known only at run time (the rank known), as TF1 takes them: TensorFlow's
recorded cases with every dim of every input hidden while building; central-difference
gradients of batched and empty inputs; run-time misfits as named errors; unknown ranks
refused while building. The gradient rules of lu, expm, sqrtm and tridiagonal_solve
likewise, against TF's gradients and central differences.

Tolerances as test_api_linalg_more.py's: float64 to 1e-12 of the largest magnitude (the
compositions are the static ones with run-time sizes, so only rounding differs).
"""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError

from . import tf1_reference
from .gradcheck import check_op_gradients
from .tf1_linalgmore_cases import CASES

og.linalg   # noqa: B018 - load og's public names before the module that extends og.linalg
from onegraph.train import api_linalg_more  # noqa: E402,F401 - adds the og.linalg names

F64_TOL = 1e-12
F32_TOL = 2e-6

_FUNCTIONS = ("linalg.lu_solve", "linalg.lu_reconstruct", "linalg.lu_matrix_inverse",
              "linalg.eigh_tridiagonal")
_RUNTIME_CASES = [c for c in CASES if c[1] in _FUNCTIONS]


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("linalgmore")


def test_every_function_has_recorded_cases():
    assert {c[1] for c in _RUNTIME_CASES} == set(_FUNCTIONS)


@pytest.mark.parametrize("case", _RUNTIME_CASES, ids=[c[0] for c in _RUNTIME_CASES])
def test_matches_tensorflow_with_sizes_known_only_at_run_time(reference, case):
    """TF's values (and gradients, where recorded) with every dim of every input
    unknown while building."""
    tol = F32_TOL if "f32" in case[0] else F64_TOL
    tf1_reference.check_case(reference, case, rtol=tol, atol=tol,
                             hidden_dims=tf1_reference.hidden_axes(reference, case))


def _unknown_dims(a):
    return og.placeholder_with_default(a, [None] * len(a.shape))


def _batch_inputs(seed, batch, n, k):
    rng = np.random.RandomState(seed)
    packed = rng.randn(*batch, n, n) + 3 * np.eye(n)      # U well away from singular
    perm = np.stack([rng.permutation(n) for _ in range(int(np.prod(batch)))])
    return packed, perm.reshape(*batch, n).astype(np.int32), rng.randn(*batch, n, k)


@pytest.mark.parametrize("batch, n, k", [((2,), 3, 2), ((2, 2), 4, 1), ((3,), 1, 2)],
                         ids=["batch", "batch2", "1x1"])
def test_lu_solve_gradients_match_central_differences(batch, n, k):
    packed, perm, rhs = _batch_inputs(batch[0] + n, batch, n, k)
    got = check_op_gradients(
        lambda a, p, b: og.linalg.lu_solve(_unknown_dims(a), _unknown_dims(p),
                                           _unknown_dims(b)),
        [packed, perm, rhs], wrt=[0, 2], rtol=1e-6)
    assert got[0].shape == packed.shape and got[1].shape == rhs.shape


@pytest.mark.parametrize("batch, n", [((2,), 3), ((2, 2), 4)], ids=["batch", "batch2"])
def test_lu_reconstruct_gradients_match_central_differences(batch, n):
    packed, perm, _ = _batch_inputs(7 + n, batch, n, 1)
    check_op_gradients(
        lambda a, p: og.linalg.lu_reconstruct(_unknown_dims(a), _unknown_dims(p)),
        [packed, perm], wrt=[0], rtol=1e-6)


def _run_hidden(fn, *arrays):
    """fn of placeholders of the arrays with every dim unknown while building."""
    with og.Graph().as_default():
        holders = [og.placeholder(a.dtype, [None] * a.ndim) for a in arrays]
        out = fn(*holders)
        return og.Session().run(list(out) if isinstance(out, tuple) else out,
                                dict(zip(holders, arrays)))


def test_results_match_numpy_for_a_batch():
    packed, perm, rhs = _batch_inputs(3, (2,), 4, 3)
    lower = np.tril(packed, -1) + np.eye(4)
    upper = np.triu(packed)
    # P A = L U with P's row i picking row perm[i]: A = P^T L U
    a = np.zeros_like(packed)
    for i in range(2):
        a[i][perm[i]] = lower[i] @ upper[i]
    np.testing.assert_allclose(_run_hidden(og.linalg.lu_reconstruct, packed, perm), a,
                               atol=1e-12)
    np.testing.assert_allclose(_run_hidden(og.linalg.lu_solve, packed, perm, rhs),
                               np.linalg.solve(a, rhs), atol=1e-12)
    np.testing.assert_allclose(_run_hidden(og.linalg.lu_matrix_inverse, packed, perm),
                               np.linalg.inv(a), atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0)])
def test_empty_matrices(shape):
    packed = np.zeros(shape)
    perm = np.zeros(shape[:-1], np.int32)
    rhs = np.zeros(shape[:-1] + (2,))
    assert _run_hidden(og.linalg.lu_reconstruct, packed, perm).shape == shape
    assert _run_hidden(og.linalg.lu_matrix_inverse, packed, perm).shape == shape
    assert _run_hidden(og.linalg.lu_solve, packed, perm, rhs).shape == rhs.shape
    with og.Graph().as_default():
        a, p, b = (og.placeholder(x.dtype, [None] * x.ndim) for x in (packed, perm, rhs))
        grads = og.gradients(og.reduce_sum(og.linalg.lu_solve(a, p, b)), [a, b])
        got = og.Session().run(grads, {a: packed, p: perm, b: rhs})
    assert got[0].shape == packed.shape and got[1].shape == rhs.shape


def test_eigh_tridiagonal_of_one_and_of_a_selected_range():
    alpha, beta = np.asarray([2.5]), np.zeros(0)
    np.testing.assert_array_equal(_run_hidden(og.linalg.eigh_tridiagonal, alpha, beta),
                                  [2.5])
    rng = np.random.RandomState(1)
    alpha, beta = rng.randn(6), rng.randn(5)
    want = np.linalg.eigvalsh(np.diag(alpha) + np.diag(beta, 1) + np.diag(beta, -1))
    e, v = _run_hidden(lambda a, b: og.linalg.eigh_tridiagonal(
        a, b, eigvals_only=False, select="i", select_range=(2, 4)), alpha, beta)
    np.testing.assert_allclose(e, want[2:5], atol=1e-12)
    assert v.shape == (6, 3)


@pytest.mark.parametrize("build, arrays, message", [
    (og.linalg.lu_solve, [np.eye(3), np.arange(3, dtype=np.int32), np.ones((2, 1))],
     "lu_solve.*rows"),
    (og.linalg.lu_solve, [np.eye(3), np.arange(2, dtype=np.int32), np.ones((3, 1))],
     "lu_solve.*perm"),
    (og.linalg.lu_solve, [np.ones((2, 3)), np.arange(2, dtype=np.int32), np.ones((2, 1))],
     "lu_solve.*square"),
    (og.linalg.lu_reconstruct, [np.eye(3), np.arange(4, dtype=np.int32)],
     "lu_reconstruct.*perm"),
    (og.linalg.lu_matrix_inverse, [np.ones((3, 2)), np.arange(3, dtype=np.int32)],
     "lu_matrix_inverse.*square"),
    (og.linalg.eigh_tridiagonal, [np.ones(4), np.ones(4)], "eigh_tridiagonal.*beta"),
    (lambda a, b: og.linalg.eigh_tridiagonal(a, b, select="i", select_range=(1, 4)),
     [np.ones(4), np.ones(3)], "eigh_tridiagonal.*select_range"),
], ids=["rhs_rows", "perm_length", "not_square", "reconstruct_perm", "inverse_not_square",
        "beta_length", "select_range"])
def test_run_time_misfits_are_named_errors(build, arrays, message):
    with pytest.raises(ExecutionError, match=message):
        _run_hidden(build, *arrays)


@pytest.mark.parametrize("build", [
    lambda a, p: og.linalg.lu_solve(a, p, np.ones((3, 1))),
    og.linalg.lu_reconstruct,
    og.linalg.lu_matrix_inverse,
], ids=["lu_solve", "lu_reconstruct", "lu_matrix_inverse"])
def test_unknown_rank_is_refused_while_building(build):
    with og.Graph().as_default():
        a = og.placeholder(og.float64, None)
        with pytest.raises(ShapeError, match="rank"):
            build(a, og.placeholder(og.int32, [None]))


def test_eigh_tridiagonal_of_unknown_rank_is_refused_while_building():
    with og.Graph().as_default():
        with pytest.raises(ShapeError, match="eigh_tridiagonal.*1-D"):
            og.linalg.eigh_tridiagonal(og.placeholder(og.float64, None), np.ones(3))


# ------------------------------------------------------------------ gradient rules

_GRADIENT_CASES = [c for c in CASES if c[4] and c[1] in (
    "linalg.expm", "linalg.sqrtm", "linalg.tridiagonal_solve")]


@pytest.mark.parametrize("case", _GRADIENT_CASES, ids=[c[0] for c in _GRADIENT_CASES])
def test_gradients_of_sizes_known_only_at_run_time_match_tensorflow(reference, case):
    """TensorFlow's expm, sqrtm and tridiagonal_solve cases with every dim of every
    input unknown while building (the rank known): the gradient rules read the sizes
    from the run, with the same values and gradients."""
    tol = F32_TOL if "f32" in case[0] else F64_TOL
    tf1_reference.check_case(reference, case, rtol=tol, atol=tol,
                             hidden_dims=tf1_reference.hidden_axes(reference, case))


@pytest.mark.parametrize("build, x", [
    (lambda a: og.linalg.lu(_unknown_dims(a))[0], np.random.RandomState(5).randn(2, 3, 3)),
    (lambda a: og.linalg.lu(_unknown_dims(a))[0], np.zeros((2, 0, 0))),
    (lambda a: og.linalg.expm(_unknown_dims(a)), np.random.RandomState(6).randn(2, 3, 3)),
    (lambda a: og.linalg.sqrtm(_unknown_dims(a)),
     np.random.RandomState(11).rand(2, 3, 3) + 2 * np.eye(3)),
    (lambda a: og.linalg.sqrtm(_unknown_dims(a)), np.zeros((0, 3, 3))),
    (lambda a: og.linalg.tridiagonal_solve(_unknown_dims(a), og.constant(np.ones((4, 2)))),
     np.random.RandomState(8).randn(3, 4) + np.asarray([[0.0], [3.0], [0.0]])),
    (lambda a: og.linalg.tridiagonal_solve(_unknown_dims(a), og.constant(np.ones((1, 2)))),
     np.asarray([[0.0], [2.0], [0.0]])),
], ids=["lu_batch", "lu_empty", "expm_batch", "sqrtm_batch", "sqrtm_empty_batch",
        "tridiagonal_solve", "tridiagonal_solve_1x1"])
def test_gradients_of_sizes_known_only_at_run_time_match_central_differences(build, x):
    check_op_gradients(build, [x], rtol=1e-6)

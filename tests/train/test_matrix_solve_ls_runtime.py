"""og.matrix_solve_ls (og.linalg.lstsq) with matrix sizes known only when the graph
runs: TensorFlow's recorded values and gradients (data/tf1_linsolve_reference.npz) with
the matrix and rhs dims hidden while building, numpy's least squares for batches, the
branch (tall or wide) chosen per run, and the named failures."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError

from . import tf1_reference
from .tf1_linsolve_cases import CASES

LSTSQ = [c for c in CASES if c[0].startswith("lstsq_")]

# key of the matrix and of the rhs of each case, as the cases name them
_KEYS = {c[0]: [a[1:] for a in c[2]] for c in LSTSQ}


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("linsolve")


def test_the_tall_wide_and_regularised_cases_are_all_here():
    assert sorted(_KEYS) == ["lstsq_regularised", "lstsq_tall", "lstsq_wide"]


@pytest.mark.parametrize("hidden", [
    {0: (0, 1), 1: (0, 1)},     # every matrix and rhs dim
    {0: (0,), 1: ()},           # rows only: the rhs still tells them apart
    {0: (1,), 1: (1,)},         # cols only (and the rhs's column count)
], ids=["all_dims", "matrix_rows", "cols"])
@pytest.mark.parametrize("case", LSTSQ, ids=[c[0] for c in LSTSQ])
def test_matches_tensorflow_with_dims_hidden(reference, case, hidden):
    keys = _KEYS[case[0]]
    tf1_reference.check_case(reference, case, rtol=1e-7, atol=1e-7,
                             hidden_dims={keys[i]: axes for i, axes in hidden.items()})


def _numpy_lstsq(a, b, lam=0.0):
    """The regularised least-squares solution of each matrix in float64: numpy's
    pseudo-inverse solution when lam = 0, the Tikhonov normal equations otherwise."""
    out = []
    for ai, bi in zip(a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])):
        if lam == 0.0:
            out.append(np.linalg.lstsq(ai, bi, rcond=None)[0])
        elif ai.shape[0] >= ai.shape[1]:
            out.append(np.linalg.solve(ai.T @ ai + lam * np.eye(ai.shape[1]), ai.T @ bi))
        else:
            out.append(ai.T @ np.linalg.solve(ai @ ai.T + lam * np.eye(ai.shape[0]), bi))
    return np.asarray(out).reshape(a.shape[:-2] + (a.shape[-1], b.shape[-1]))


def test_one_graph_takes_the_tall_and_the_wide_branch_per_run():
    a = og.placeholder(og.float64, [None, None, None])
    b = og.placeholder(og.float64, [None, None, None])
    lam = og.placeholder(og.float64, [])
    x = og.linalg.lstsq(a, b, l2_regularizer=lam)
    rng = np.random.RandomState(3)
    with og.Session() as sess:
        for shape, k, reg in [((2, 7, 3), 2, 0.0), ((2, 3, 6), 4, 0.0),
                              ((3, 5, 4), 1, 0.3), ((1, 2, 5), 3, 0.7), ((2, 4, 4), 2, 0.0)]:
            av = rng.randn(*shape)
            bv = rng.randn(shape[0], shape[1], k)
            got = sess.run(x, {a: av, b: bv, lam: reg})
            np.testing.assert_allclose(got, _numpy_lstsq(av, bv, reg), rtol=1e-9,
                                       atol=1e-9, err_msg=str((shape, reg)))


def test_gradients_w_r_t_both_inputs_with_sizes_hidden_match_central_differences():
    rng = np.random.RandomState(4)
    for shape in [(5, 3), (2, 4)]:
        av, bv = rng.randn(*shape), rng.randn(shape[0], 2)
        w = rng.randn(shape[1], 2)
        g = og.Graph()
        with g.as_default():
            a = og.placeholder(og.float64, [None, None])
            b = og.placeholder(og.float64, [None, None])
            loss = og.reduce_sum(og.matrix_solve_ls(a, b, l2_regularizer=0.1) * w)
            grads = og.gradients(loss, [a, b])
            sess = og.Session(g)
            da, db = sess.run(grads, {a: av, b: bv})

            def f(x, y):
                return sess.run(loss, {a: x, b: y})

            for got, which in ((da, 0), (db, 1)):
                want = np.zeros_like(got)
                for i in np.ndindex(got.shape):
                    step = np.zeros_like(got)
                    step[i] = 1e-6
                    args_p = [av, bv]
                    args_m = [av, bv]
                    args_p[which] = args_p[which] + step
                    args_m[which] = args_m[which] - step
                    want[i] = (f(*args_p) - f(*args_m)) / 2e-6
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7,
                                           err_msg=f"{shape} d/d{'ab'[which]}")


def test_a_rhs_whose_rows_do_not_fit_fails_when_the_graph_runs_with_a_named_error():
    for shape in [(5, 3), (3, 5)]:
        with og.Graph().as_default():
            a = og.placeholder(og.float64, [None, None])
            b = og.placeholder(og.float64, [None, None])
            x = og.matrix_solve_ls(a, b)
            with pytest.raises(ExecutionError, match="matrix_solve_ls.*rows"):
                og.Session().run(x, {a: np.ones(shape), b: np.ones((4, 1))})


def test_a_rhs_of_unknown_rows_is_checked_when_the_matrix_sizes_are_known():
    with og.Graph().as_default():
        b = og.placeholder(og.float64, [None, 1])
        x = og.matrix_solve_ls(np.random.RandomState(5).randn(5, 3), b)
        with pytest.raises(ExecutionError, match="matrix_solve_ls.*rows"):
            og.Session().run(x, {b: np.ones((4, 1))})


def test_a_matrix_of_unknown_rank_is_a_named_shape_error():
    # its matrices are transposed: ONNX's Transpose needs the rank
    with og.Graph().as_default():
        a = og.placeholder(og.float64, None)
        with pytest.raises(ShapeError, match="matrix_solve_ls: the matrix .*unknown rank"):
            og.matrix_solve_ls(a, np.ones((3, 1)))


@pytest.mark.parametrize("case", LSTSQ, ids=[c[0] for c in LSTSQ])
def test_a_rhs_of_unknown_rank_solves(reference, case):
    # values only: og.matmul has no gradient for an operand of unknown rank
    matrix, rhs = _KEYS[case[0]]
    with og.Graph().as_default():
        a = og.placeholder(og.float64, [None, None])
        b = og.placeholder(og.float64, None)
        x = og.matrix_solve_ls(a, b, **case[3])
        got = og.Session().run(x, {a: reference[f"in/{matrix}"], b: reference[f"in/{rhs}"]})
    np.testing.assert_allclose(got, reference[f"out/{case[0]}"], rtol=1e-7, atol=1e-7)


def test_known_sizes_still_build_no_cond():
    with og.Graph().as_default() as g:
        og.matrix_solve_ls(og.placeholder(og.float64, [6, 3]),
                           og.placeholder(og.float64, [6, 2]))
        assert not [op for op in g.get_operations() if op.type in ("Switch", "Merge")]

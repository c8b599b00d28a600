"""og's matrix inverse, solves and decompositions (onegraph-domain ops) against
TensorFlow's values and gradients, recorded in data/tf1_linsolve_reference.npz by
`tools/record_tf1_reference.py linsolve` (TensorFlow 2.21's tf.compat.v1); singular
and eigen vectors, whose signs are a free choice, by reconstruction and central
differences of sign-free functions of them; run-time failures; saving and export."""

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ConversionError, ExecutionError, ShapeError

from . import tf1_reference
from .gradcheck import check_op_gradients
from .tf1_linsolve_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("linsolve")


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow_values_and_gradients(reference, case):
    tol = 2e-4 if "f32" in case[0] else 1e-7
    tf1_reference.check_case(reference, case, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape, full", [((5, 3), False), ((3, 5), False), ((4, 4), True),
                                         ((2, 4, 3), False), ((4, 6), True)])
def test_svd_reconstructs_with_orthonormal_vectors(shape, full):
    a = np.random.RandomState(1).randn(*shape)
    s, u, v = og.Session().run(list(og.svd(og.constant(a), full_matrices=full)))
    k = min(shape[-2:])
    assert s.shape == shape[:-2] + (k,)
    assert np.all(np.diff(s, axis=-1) <= 0)
    uk, vk = u[..., :, :k], v[..., :, :k]
    np.testing.assert_allclose((uk * s[..., None, :]) @ np.swapaxes(vk, -1, -2), a,
                               atol=1e-12)
    for m in (u, v):
        np.testing.assert_allclose(np.swapaxes(m, -1, -2) @ m,
                                   np.broadcast_to(np.eye(m.shape[-1]), m.shape[:-2]
                                                   + (m.shape[-1],) * 2), atol=1e-12)


def test_eigh_reads_the_lower_triangle_and_reconstructs():
    a = np.random.RandomState(2).randn(3, 4, 4)
    e, v = og.Session().run(list(og.linalg.eigh(og.constant(a))))
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    np.testing.assert_allclose(v @ (e[..., None] * np.swapaxes(v, -1, -2)), sym, atol=1e-12)
    assert np.all(np.diff(e, axis=-1) >= 0)


def _spd(seed, n=4):
    a = np.random.RandomState(seed).randn(n, n)
    return a @ a.T + n * np.eye(n)


@pytest.mark.parametrize("build, x", [
    # squares of the vectors do not depend on the sign LAPACK picks
    (lambda x: [og.square(og.self_adjoint_eig(x)[1]), og.self_adjoint_eig(x)[0]],
     _spd(3) - 2 * np.eye(4)),
    (lambda x: [og.square(u) for u in og.svd(x)[1:]] + [og.svd(x)[0]],
     np.random.RandomState(4).randn(5, 3)),
    (lambda x: [og.square(u) for u in og.svd(x)[1:]],
     np.random.RandomState(5).randn(3, 5)),
    (lambda x: [og.square(u) for u in og.svd(x)[1:]], np.random.RandomState(6).randn(4, 4)),
    (lambda x: og.svd(x, full_matrices=True)[0] * 1.0, np.random.RandomState(7).randn(4, 5)),
    (lambda x: list(og.qr(x, full_matrices=True)), np.random.RandomState(8).randn(3, 5)),
], ids=["eigh_vectors", "svd_tall", "svd_wide", "svd_square", "svd_full_values",
        "qr_full_wide"])
def test_decomposition_gradients_match_central_differences(build, x):
    check_op_gradients(build, [x], rtol=1e-5)


def test_failures_when_the_graph_runs_are_named():
    singular = np.asarray([[1.0, 2.0], [2.0, 4.0]])
    cases = [
        (lambda: og.matrix_inverse(singular), "not invertible"),
        (lambda: og.matrix_solve(singular, np.ones((2, 1))), "not invertible"),
        (lambda: og.matrix_triangular_solve(np.asarray([[1.0, 0.0], [5.0, 0.0]]),
                                            np.ones((2, 1))), "singular"),
        (lambda: og.cholesky(np.asarray([[1.0, 2.0], [2.0, 1.0]])), "positive definite"),
        (lambda: og.svd(np.asarray([[np.nan, 1.0], [1.0, 2.0]])), "NaN"),
    ]
    for build, message in cases:
        with og.Graph().as_default():
            y = build()
            y = y[0] if isinstance(y, tuple) else y
            with pytest.raises(ExecutionError, match=message):
                og.Session().run(y)


def test_bad_arguments_are_named_errors():
    cases = [
        (lambda: og.matrix_inverse(np.ones((2, 3))), ShapeError, "square"),
        (lambda: og.matrix_inverse(np.ones(3)), ShapeError, "rank >= 2"),
        (lambda: og.cholesky(np.ones((2, 2), np.int32)), TypeError, "float"),
        (lambda: og.matrix_solve(np.eye(2), np.ones((3, 1))), ShapeError, "2 rows"),
        (lambda: og.matrix_solve(np.eye(2), og.constant(np.ones((2, 1), np.float32))),
         TypeError, "float32"),
        (lambda: og.matrix_solve_ls(np.ones((3, 2)), np.ones((2, 1))), ShapeError, "rows"),
        (lambda: og.matrix_solve_ls(np.ones((3, 2)), np.ones((3, 1)), fast=False),
         TypeError, "fast"),
        (lambda: og.matrix_solve_ls(np.ones((3, 2)), np.ones((3, 1)), -1.0), ValueError,
         "l2_regularizer"),
        (lambda: og.qr(np.ones((2, 2)), full_matrices="yes"), TypeError, "full_matrices"),
    ]
    for build, error, message in cases:
        with og.Graph().as_default():
            with pytest.raises(error, match=message):
                build()


def test_run_after_saving_and_refused_by_onnx_export(tmp_path):
    a = _spd(9, 3)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3, 3], name="x")
        y = og.identity(og.matrix_inverse(x) + og.cholesky(x), name="y")
        sig = og.signature({"x": x}, {"y": y})
        want = og.Session(g).run(y, {x: a})
        path = str(tmp_path / "linalg.og")
        og.save(g, path, signatures={"serving": sig})
        with pytest.raises(ConversionError, match="MatrixInverse|Cholesky"):
            to_onnx(g, signatures={"serving": sig})
    got = og.Session(og.load(path)).run_signature("serving", x=a)["y"]
    np.testing.assert_allclose(got, np.linalg.inv(a) + np.linalg.cholesky(a), atol=1e-12)
    np.testing.assert_allclose(got, want, atol=0)

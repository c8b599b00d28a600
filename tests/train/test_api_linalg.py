"""TF1's linear-algebra and array functions (train/api_linalg.py) against TensorFlow's
outputs and gradients, recorded in data/tf1_linalg_reference.npz by
`tools/record_tf1_reference.py linalg` (TensorFlow 2.21's tf.compat.v1); shapes known
only at run time; exact gradients where TF's are not defined (cumprod at zeros, the
determinant of a singular matrix); bad arguments; an export run by onnxruntime."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ExecutionError, OneGraphError, ShapeError
from onegraph.train import api_linalg as L

from . import tf1_reference
from .gradcheck import check_op_gradients
from .graph_runs import run_on, session_and_onnxruntime
from .tf1_linalg_cases import CASES, make_inputs


def _resolve(path: str):
    """The function at a tf.compat.v1 path in api_linalg ("linalg.det" -> L.linalg.det)."""
    fn = L
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("linalg")


@pytest.fixture
def from_module(monkeypatch):
    monkeypatch.setattr(tf1_reference, "function", _resolve)


def test_reference_inputs_are_the_cases_inputs(reference):
    inputs = make_inputs()
    assert {k[3:] for k in reference if k.startswith("in/")} == set(inputs)
    for key, value in inputs.items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)
        assert reference[f"in/{key}"].dtype == value.dtype


def test_every_case_was_recorded(reference):
    for name, *_ in CASES:
        assert f"out/{name}" in reference or f"nout/{name}" in reference, name
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow_values_and_gradients(reference, from_module, case):
    tf1_reference.check_case(reference, case)
    for k in case[4]:   # every gradient asked for was recorded and compared
        if reference[f"in/{k[1:]}"].dtype.kind == "f":
            assert f"grad/{case[0]}/{k[1:]}" in reference, k


# --------------------------------------------------------------------------- run-time shapes

def _run_dynamic(fn, *arrays):
    """fn of placeholders whose dims are all unknown while building."""
    return run_on(fn, *arrays, dynamic=True)


@pytest.mark.parametrize("build", [
    lambda x: L.matrix_band_part(x, 1, -1),
    lambda x: L.matrix_diag_part(x, k=(-1, 2), padding_value=-3.0),
    lambda x: L.matrix_diag_part(x, k=1, align="LEFT_LEFT"),
    lambda x: L.matrix_diag(x, k=(0, 1), align="RIGHT_RIGHT"),
    lambda x: L.matrix_diag(x, k=-1, num_rows=5, padding_value=2.0),
    lambda x: L.matrix_set_diag(x, og.ones_like(L.matrix_diag_part(x, k=(0, 1))),
                                k=(0, 1)),
    lambda x: L.trace(x),
    lambda x: L.diag_part(L.diag(x)),
    lambda x: L.cumprod(x, axis=1),
    lambda x: L.cumprod(x, axis=-1, exclusive=True, reverse=True),
    lambda x: L.roll(x, [2, -1], [0, 1]),
    lambda x: L.repeat(x, 2, axis=1),
    lambda x: L.repeat(x, [1, 0], axis=0),
    lambda x: L.norm(x, ord=1, axis=(0, 1), keepdims=True),
], ids=["band", "diag_part_band", "diag_part_k", "diag_band", "diag_rows", "set_diag",
        "trace", "diag_roundtrip", "cumprod", "cumprod_excl_rev", "roll", "repeat",
        "repeat_counts", "norm"])
def test_sizes_known_only_at_run_time_give_the_same_values(build):
    x = np.random.RandomState(3).randn(2, 3).astype(np.float32)
    want = run_on(build, x)
    got = _run_dynamic(build, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_run_time_lengths_for_counts_shifts_and_searches():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    reps = np.array([2, 0, 1], np.int32)
    got = run_on(lambda t, r: [L.repeat(t, r, axis=0), L.roll(t, r[0], 1),
                               L.repeat(t, r[2], axis=1), L.bincount(r, minlength=r[0] + 3),
                               L.matrix_band_part(t, r[2], r[1] - 1)], x, reps)
    np.testing.assert_array_equal(got[0], np.repeat(x, reps, axis=0))
    np.testing.assert_array_equal(got[1], np.roll(x, 2, axis=1))
    np.testing.assert_array_equal(got[2], x)
    np.testing.assert_array_equal(got[3], [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(got[4], np.tril(np.triu(x, -1), 100))


def test_scalar_results_against_numpy():
    """(the recorder draws no R for a 0-d float output, so these are checked here)"""
    rng = np.random.RandomState(5)
    a = rng.randn(4, 4).astype(np.float64)
    v = rng.randn(2, 3, 4).astype(np.float32)
    got = run_on(lambda m, t: [L.matrix_determinant(m), L.trace(m), L.norm(t),
                               L.norm(t, ord=3), L.norm(t[0], ord="fro", axis=[0, 1])],
                 a, v)
    np.testing.assert_allclose(got[0], np.linalg.det(a), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.trace(a), rtol=1e-12)
    np.testing.assert_allclose(got[2], np.linalg.norm(v.ravel()), rtol=1e-6)
    np.testing.assert_allclose(got[3], np.sum(np.abs(v) ** 3) ** (1 / 3), rtol=1e-6)
    np.testing.assert_allclose(got[4], np.linalg.norm(v[0]), rtol=1e-6)
    assert all(np.ndim(g) == 0 for g in got)


# --------------------------------------------------------------------------- exact gradients

def test_cumprod_gradient_is_exact_at_zeros():
    """TF1's gradient divides by x (NaN at zeros); the scan's is the exact one."""
    x = np.array([[1.5, -2.0, 0.0, 3.0, -1.0, 0.5], [0.0, 2.0, 1.0, 0.0, 4.0, -3.0]])
    for kwargs in ({}, {"exclusive": True}, {"reverse": True},
                   {"exclusive": True, "reverse": True}):
        grads = check_op_gradients(lambda t, kw=kwargs: L.cumprod(t, axis=1, **kw), [x])
        assert np.all(np.isfinite(grads[0]))


def test_cumprod_with_a_run_time_length_has_gradients():
    x = np.array([[1.5, -2.0, 0.0, 3.0, -1.0], [0.5, 2.0, 1.0, -0.5, 4.0]])
    w = np.random.RandomState(1).randn(2, 5)
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float64, [2, None])
        y = L.cumprod(p, axis=1)
        (dx,) = og.gradients(og.reduce_sum(y * w), [p])
    got, d = og.Session(g).run([y, dx], {p: x})
    np.testing.assert_allclose(got, np.cumprod(x, axis=1), rtol=1e-12)
    eps = 1e-6
    numeric = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        numeric[idx] = (np.sum(np.cumprod(hi, 1) * w) - np.sum(np.cumprod(lo, 1) * w)) \
            / (2 * eps)
    np.testing.assert_allclose(d, numeric, rtol=1e-6, atol=1e-8)


def test_determinant_gradient_is_the_cofactor_matrix_also_when_singular():
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    batch = np.random.RandomState(2).randn(2, 3, 4, 4)
    for a in (singular, batch, np.array([[3.0]])):
        check_op_gradients(L.matrix_determinant, [a])
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float64, [3, 3])
        (d,) = og.gradients(L.matrix_determinant(p), [p])
    got = og.Session(g).run(d, {p: singular})
    np.testing.assert_allclose(got, _cofactors(singular), rtol=1e-10, atol=1e-12)
    assert np.abs(got).max() > 1   # TF1's det * inv(A)^T has no value here
    # second order through the minors' own Det gradients
    check_op_gradients(lambda m: og.gradients(og.reduce_sum(L.matrix_determinant(m)),
                                              [m])[0], [batch[0, 0]])


def _cofactors(a):
    n = a.shape[0]
    out = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            out[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return out


def test_determinant_gradient_with_a_run_time_size():
    a = np.random.RandomState(4).randn(3, 3)
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float64, [None, None])
        (d,) = og.gradients(L.matrix_determinant(p), [p])
    np.testing.assert_allclose(og.Session(g).run(d, {p: a}), _cofactors(a), rtol=1e-10)


@pytest.mark.parametrize("build", [
    lambda x: L.matrix_diag_part(x, k=(-1, 1), padding_value=0.5),
    lambda x: L.matrix_diag(x[:2], k=(0, 1)),
    lambda x: L.matrix_set_diag(x, x[:, 1] * 2.0),
    lambda x: L.matrix_band_part(x, 0, 1),
    lambda x: L.diag(x),
    lambda x: L.trace(x),
    lambda x: L.cross(x, x[::-1] * 2.0),
    lambda x: L.norm(x, ord=np.inf, axis=(1, 0)),
    lambda x: L.roll(x, [1, 2], [0, 1]),
    lambda x: L.repeat(x, [2, 0, 1], axis=1),
], ids=["diag_part", "diag", "set_diag", "band", "tensor_diag", "trace", "cross",
        "norm", "roll", "repeat"])
def test_gradients_match_central_differences(build):
    x = np.random.RandomState(8).randn(3, 3)
    check_op_gradients(build, [x])


# --------------------------------------------------------------------------- run-time checks

@pytest.mark.parametrize("build, feed, message", [
    (lambda t: L.invert_permutation(t), np.array([1, 1, 0], np.int32), "permutation"),
    (lambda t: L.invert_permutation(t), np.array([-1, 0], np.int64), "permutation"),
    (lambda t: L.bincount(t), np.array([1, -2], np.int32), "non-negative"),
    (lambda t: L.confusion_matrix(t, t, num_classes=2), np.array([0, 2], np.int32),
     r"\[0, num_classes\)"),
    (lambda t: L.repeat(og.constant([1.0, 2.0]), t), np.array([1, -1], np.int32), ">= 0"),
    (lambda t: L.matrix_band_part(og.ones([2, 3]), t[0], -1), np.array([3], np.int32),
     "at most"),
])
def test_values_only_the_run_knows_are_checked(build, feed, message):
    with pytest.raises(ExecutionError, match=message):
        run_on(build, feed)


def test_shapes_only_the_run_knows_are_checked():
    m = np.ones((2, 3), np.float32)
    with pytest.raises(ExecutionError, match="outside the matrix"):
        _run_dynamic(lambda t: L.matrix_diag_part(t, k=5), m)
    with pytest.raises(ExecutionError, match="D \\+ D"):
        _run_dynamic(L.diag_part, m)
    with pytest.raises(ExecutionError, match="same number of rows"):
        _run_dynamic(lambda s: L.searchsorted(s, og.reshape(s, [-1, 2])), m)
    with pytest.raises(ExecutionError, match="do not fit"):
        _run_dynamic(lambda d: L.matrix_diag(d, num_rows=5, num_cols=6), m)


# --------------------------------------------------------------------------- bad arguments

def _building(fn):
    g = og.Graph()
    with g.as_default():
        return fn()


@pytest.mark.parametrize("call, error, message", [
    (lambda: L.matrix_band_part(og.ones([3]), 0, 0), ShapeError,
     "matrix_band_part: input must have rank >= 2"),
    (lambda: L.matrix_band_part(og.ones([2, 3]), 1.0, 0), TypeError,
     "matrix_band_part: num_lower must be an int"),
    (lambda: L.matrix_band_part(og.ones([2, 3]), 3, 0), ShapeError,
     "matrix_band_part: num_lower must be negative or at most the number of rows"),
    (lambda: L.matrix_band_part(og.ones([2, 3]), 0, og.constant([1, 2])), ShapeError,
     "matrix_band_part: num_upper must be a scalar"),
    (lambda: L.matrix_band_part(og.ones([2, 3]), og.constant(1.5), 0), ShapeError,
     "num_lower must be an integer tensor"),
    (lambda: L.matrix_diag(og.ones([3]), k=(1, 0)), ValueError,
     "matrix_diag: k's lower diagonal 1 must not be above"),
    (lambda: L.matrix_diag(og.ones([3]), k=[0, 1, 2]), ValueError,
     "matrix_diag: k must have one or two entries"),
    (lambda: L.matrix_diag(og.ones([3]), k=og.constant(1)), TypeError,
     "matrix_diag: k must be an int or a pair"),
    (lambda: L.matrix_diag(og.ones([3]), align="UP"), ValueError, "matrix_diag: align"),
    (lambda: L.matrix_diag(og.constant(1.0)), ShapeError,
     "matrix_diag: diagonal must have rank >= 1"),
    (lambda: L.matrix_diag(og.ones([2, 3]), k=(0, 2)), ShapeError,
     "second-to-last dim must be the 3 diagonals"),
    (lambda: L.matrix_diag(og.ones([3]), num_rows=4, num_cols=5), ShapeError,
     "matrix_diag: num_rows=4 and num_cols=5 are not consistent"),
    (lambda: L.matrix_diag(og.ones([3]), num_rows=2), ShapeError,
     "matrix_diag: num_rows=2 is too small"),
    (lambda: L.matrix_diag(og.ones([3]), num_cols=1.5), TypeError,
     "matrix_diag: num_cols must be an int"),
    (lambda: L.matrix_diag(og.ones([3]), padding_value=og.ones([2])), ShapeError,
     "matrix_diag: padding_value must be a scalar"),
    (lambda: L.matrix_diag(og.ones([3], og.int32), padding_value=0.5), OneGraphError,
     "matrix_diag: padding_value: cannot convert 0.5 to int32"),
    (lambda: L.matrix_diag_part(og.ones([3, 4]), k=4), ShapeError,
     "matrix_diag_part: diagonal 4 is outside a 3 x 4 matrix"),
    (lambda: L.matrix_diag_part(og.ones([3, 4]), k=(-3, 0)), ShapeError,
     "matrix_diag_part: diagonal -3 is outside"),
    (lambda: L.matrix_diag_part(og.ones([3]), k=0), ShapeError,
     "matrix_diag_part: input must have rank >= 2"),
    (lambda: L.matrix_diag_part(og.placeholder(og.float32), k=0), ShapeError,
     "matrix_diag_part: input: the rank"),
    (lambda: L.matrix_set_diag(og.ones([3, 4]), og.ones([4])), ShapeError,
     "matrix_set_diag: diagonal must have shape \\[3\\]"),
    (lambda: L.matrix_set_diag(og.ones([3, 4]), og.ones([2, 3])), ShapeError,
     "matrix_set_diag: diagonal must have shape"),
    (lambda: L.matrix_set_diag(og.ones([3, 4]), og.ones([3], og.int32)), ShapeError,
     "matrix_set_diag: operands of different dtypes"),
    (lambda: L.diag(og.constant(1.0)), ShapeError, "diag: diagonal must have rank >= 1"),
    (lambda: L.diag_part(og.ones([2, 2, 2])), ShapeError, "diag_part: input must have an "
     "even rank"),
    (lambda: L.diag_part(og.ones([2, 3])), ShapeError, "diag_part: input's shape"),
    (lambda: L.trace(og.ones([4])), ShapeError, "trace: x must have rank >= 2"),
    (lambda: L.trace(og.constant([[True]])), ShapeError, "trace: x must be a numeric"),
    (lambda: L.matrix_determinant(og.ones([2, 3])), ShapeError,
     "matrix_determinant: input must hold square matrices"),
    (lambda: L.matrix_determinant(og.ones([3, 3], og.int32)), TypeError,
     "matrix_determinant: input must be a float tensor"),
    (lambda: L.matrix_determinant(og.ones([3])), ShapeError,
     "matrix_determinant: input must have rank >= 2"),
    (lambda: L.cross(og.ones([4]), og.ones([4])), ShapeError,
     "cross: the last dim of a and b must be 3"),
    (lambda: L.cross(og.ones([2, 3]), og.ones([3])), ShapeError,
     "cross: a and b must have the same shape"),
    (lambda: L.cross(og.ones([3]), og.ones([3], og.int32)), ShapeError,
     "cross: operands of different dtypes"),
    (lambda: L.norm(og.ones([3]), ord="fro"), ValueError,
     "norm: ord 'fro' is not a supported vector norm"),
    (lambda: L.norm(og.ones([3]), ord=0), ValueError, "norm: ord must be a supported vector"),
    (lambda: L.norm(og.ones([3]), ord=-1), ValueError, "norm: ord must be a supported"),
    (lambda: L.norm(og.ones([3]), ord="nuc"), ValueError, "norm: ord 'nuc'"),
    (lambda: L.norm(og.ones([3]), ord=True), TypeError, "norm: ord must be"),
    (lambda: L.norm(og.ones([2, 3]), ord=2, axis=[0, 1]), ValueError,
     "norm: the matrix 2-norm"),
    (lambda: L.norm(og.ones([2, 3]), ord=3, axis=[0, 1]), ValueError,
     "norm: ord must be a supported matrix norm"),
    (lambda: L.norm(og.ones([2, 3]), axis=[1, 1]), ValueError, "norm: axis must be"),
    (lambda: L.norm(og.ones([2, 3]), axis=[0, 1, 2]), ValueError, "norm: axis must be"),
    (lambda: L.norm(og.ones([2, 3]), axis=[1, -1]), ShapeError, "names one axis twice"),
    (lambda: L.norm(og.ones([2, 3]), axis=og.constant(1)), TypeError,
     "norm: axis must be None"),
    (lambda: L.norm(og.ones([2, 3]), axis=2), ShapeError, "norm: axis 2 is out of range"),
    (lambda: L.norm(og.ones([2, 3]), axis="1"), TypeError, "norm: axis must be an int"),
    (lambda: L.norm(og.ones([2, 3]), keepdims=True, keep_dims=True), ValueError,
     "norm: give keepdims or its old name keep_dims"),
    (lambda: L.norm(og.ones([2, 3]), keepdims="yes"), TypeError, "norm: keepdims"),
    (lambda: L.norm(og.ones([3], og.int32)), TypeError, "norm: tensor must be a float"),
    (lambda: L.cumprod(og.ones([2, 3]), axis=2), ShapeError,
     "cumprod: axis 2 is out of range"),
    (lambda: L.cumprod(og.ones([2, 3]), axis=og.constant(1)), TypeError,
     "cumprod: axis must be an int"),
    (lambda: L.cumprod(og.constant(2.0)), ShapeError, "cumprod: x must have rank >= 1"),
    (lambda: L.cumprod(og.constant([True])), ShapeError, "cumprod: x must be a numeric"),
    (lambda: L.cumprod(og.ones([2]), exclusive="no"), TypeError,
     "cumprod: exclusive must be a bool"),
    (lambda: L.roll(og.ones([2, 3]), [1, 2], [0]), ValueError,
     "roll: shift and axis must have the same length"),
    (lambda: L.roll(og.ones([2, 3]), 1, [0, 1]), ValueError,
     "roll: shift and axis must both be ints"),
    (lambda: L.roll(og.ones([2, 3]), 1, 2), ShapeError, "roll: axis 2 is out of range"),
    (lambda: L.roll(og.constant(1.0), 1, 0), ShapeError, "roll: input must have rank >= 1"),
    (lambda: L.roll(og.ones([2, 3]), 1.5, 0), TypeError, "roll: shift"),
    (lambda: L.roll(og.ones([2, 3]), og.constant([1, 2]), 0), ShapeError,
     "roll: shift must have shape \\[\\]"),
    (lambda: L.roll(og.ones([2, 3]), 1, og.constant(0)), TypeError, "roll: axis must be"),
    (lambda: L.repeat(og.ones([2, 3]), -1), ValueError, "repeat: repeats must be >= 0"),
    (lambda: L.repeat(og.ones([2, 3]), [1, -1], axis=0), ValueError,
     "repeat: repeats must be >= 0"),
    (lambda: L.repeat(og.ones([2, 3]), [1, 2], axis=1), ShapeError,
     "repeat: repeats has 2 counts for an axis of length 3"),
    (lambda: L.repeat(og.ones([2, 3]), [[1, 2, 3]], axis=1), ShapeError,
     "repeat: repeats must be a scalar or 1-D"),
    (lambda: L.repeat(og.ones([2, 3]), 1.5, axis=1), TypeError,
     "repeat: repeats must be an int"),
    (lambda: L.repeat(og.ones([2, 3]), 1, axis=2), ShapeError, "repeat: axis 2 is out"),
    (lambda: L.repeat(og.ones([2, 3]), og.constant([1.0]), axis=1), ShapeError,
     "repeat: repeats must be an integer tensor"),
    (lambda: L.searchsorted(og.ones([4]), og.ones([2]), side="middle"), ValueError,
     "searchsorted: side must be 'left' or 'right'"),
    (lambda: L.searchsorted(og.ones([4]), og.ones([2]), out_type=og.float32), TypeError,
     "searchsorted: out_type must be one of int32, int64"),
    (lambda: L.searchsorted(og.ones([4]), og.ones([2], og.int32)), ShapeError,
     "searchsorted: operands of different dtypes"),
    (lambda: L.searchsorted(og.ones([2, 4]), og.ones([3, 2])), ShapeError,
     "searchsorted: sorted_sequence \\[2, 4\\] and values \\[3, 2\\] must hold the same"),
    (lambda: L.searchsorted(og.ones([4]), og.constant(1.0)), ShapeError,
     "searchsorted: sorted_sequence and values must have rank >= 1"),
    (lambda: L.invert_permutation(og.constant([[0]])), ShapeError,
     "invert_permutation: x must be 1-D"),
    (lambda: L.invert_permutation(og.constant([0.0])), ShapeError,
     "invert_permutation: x must be an integer tensor"),
    (lambda: L.bincount(og.constant([1.0])), ShapeError,
     "bincount: arr must be an integer tensor"),
    (lambda: L.bincount(og.constant([1]), minlength=-1), ValueError,
     "bincount: minlength must be >= 0"),
    (lambda: L.bincount(og.constant([1]), maxlength=1.5), TypeError,
     "bincount: maxlength must be an int"),
    (lambda: L.bincount(og.constant([1]), dtype=og.bool_), TypeError, "bincount: dtype"),
    (lambda: L.bincount(og.constant([1, 2]), weights=og.ones([3])), ShapeError,
     "bincount: weights must have arr's shape"),
    (lambda: L.unique(og.constant([[1, 2]])), ShapeError, "unique: x must be 1-D"),
    (lambda: L.unique(og.constant([1, 2]), out_idx=og.float32), TypeError,
     "unique: out_idx must be one of int32, int64"),
    (lambda: L.unique_with_counts(og.constant(1)), ShapeError,
     "unique_with_counts: x must be 1-D"),
    (lambda: L.setdiff1d(og.constant([[1]]), og.constant([1])), ShapeError,
     "setdiff1d: x must be 1-D"),
    (lambda: L.setdiff1d(og.constant([1]), og.constant([1]), index_dtype="float32"),
     TypeError, "setdiff1d: index_dtype"),
    (lambda: L.setdiff1d(og.constant([1], og.int32), og.constant([1], og.int64)),
     ShapeError, "setdiff1d: operands of different dtypes"),
    (lambda: L.confusion_matrix(og.constant([1, 2]), og.constant([1])), ShapeError,
     "confusion_matrix: labels and predictions differ in length"),
    (lambda: L.confusion_matrix(og.constant([[1, 2]]), og.constant([[1, 2]])), ShapeError,
     "confusion_matrix: labels must be 1-D"),
    (lambda: L.confusion_matrix(og.constant([1]), og.constant([1]), num_classes=-2),
     ValueError, "confusion_matrix: num_classes must be >= 0"),
    (lambda: L.confusion_matrix(og.constant([1]), og.constant([1]), dtype=og.string),
     TypeError, "confusion_matrix: dtype"),
    (lambda: L.confusion_matrix(og.constant([1]), og.constant([1]), weights=og.ones([2])),
     ShapeError, "confusion_matrix: weights must have the labels' shape"),
    (lambda: L.trace(og.ones([2, 2]), name=3), TypeError, "trace: name must be a str"),
    (lambda: L.matrix_diag_part(og.ones([2, 2]), name=3), TypeError,
     "matrix_diag_part: name must be a str"),
])
def test_bad_arguments_are_refused_while_building(call, error, message):
    with pytest.raises(error, match=message):
        _building(call)


def test_names_and_namespace():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [3, 3], name="x")
        named = [L.trace(x, name="tr"), L.matrix_diag_part(x, name="dp"),
                 L.cumprod(x, name="cp"), L.roll(x, 1, 0, name="rl"),
                 L.norm(x, name="nm"), L.matrix_band_part(x, 0, 0, name="bp")]
    assert [t.name for t in named] == ["tr", "dp", "cp", "rl", "nm", "bp"]
    assert L.linalg.det is L.matrix_determinant and L.linalg.diag is L.matrix_diag
    assert L.linalg.tensor_diag is L.diag and L.linalg.band_part is L.matrix_band_part
    assert set(L.linalg.__all__) <= set(dir(L.linalg))
    for name in L.__all__:
        fn = getattr(L, name)
        assert fn.__doc__ and ("Raises:" in fn.__doc__ or name == "linalg"), name


# --------------------------------------------------------------------------- export

def test_linalg_functions_export_and_run_in_onnxruntime():
    rng = np.random.RandomState(9)
    xv = rng.randn(2, 3, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2, 3, 3], name="x")
        flat = og.reshape(x, [-1])
        u = L.unique(og.cast(og.floor(flat), og.int64))
        outs = {"band": L.matrix_band_part(x, 1, 0),
                "diag": L.matrix_diag(L.matrix_diag_part(x, k=(-1, 1)), k=(-1, 1)),
                "set": L.matrix_set_diag(x, og.zeros([2, 3])),
                "tensor_diag": L.diag(x[0, 0]),
                "trace": L.trace(x),
                "det": L.matrix_determinant(x),
                "cross": L.cross(x, L.roll(x, 1, 1)),
                "norm": L.norm(x, ord=1, axis=(1, 2)),
                "norm_p": L.norm(x, ord=3, axis=-1, keepdims=True),
                "cumprod": L.cumprod(x, axis=2, exclusive=True, reverse=True),
                "repeat": L.repeat(x, [2, 0, 1], axis=1),
                "search": L.searchsorted(og.constant(np.linspace(-2, 2, 7, dtype=np.float32)),
                                         flat),
                "unique": u.y, "unique_idx": u.idx,
                "bincount": L.bincount(og.cast(og.abs(og.floor(flat)), og.int32),
                                       minlength=4),
                "setdiff": L.setdiff1d(og.constant([0, 1, 2, 3, 4], og.int64), u.y).out,
                "confusion": L.confusion_matrix(og.constant([0, 1, 2]),
                                                og.constant([2, 1, 0]), num_classes=4),
                "invperm": L.invert_permutation(og.constant([2, 0, 1], og.int32))}
    want, got = session_and_onnxruntime(g, {"x": x}, outs, {"x": xv})
    for key, a, b in zip(outs, got, want):
        assert a.dtype == b.dtype and a.shape == b.shape, key
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6, err_msg=key)
    np.testing.assert_allclose(want[5], np.linalg.det(xv), rtol=1e-5)


def test_exports_run_where_onnxruntime_lacks_a_kernel_for_the_dtype():
    """onnxruntime has Unique kernels for int64/int8/float/double/string values only and
    OneHot ones for int64/float/float16 values only, and its optimizer takes an Expand
    to an empty axis for a no-op: unique of int32/uint8/float16/uint64 values, one_hot
    of int32/float64/bool/uint8 values and repeat by 0 export in forms it runs, with the
    values numpy gives."""
    xv = np.array([3, -1, 3, 7, -1, 0], np.int32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.int32, [6], name="x")
        outs = {}
        for dt in (og.int32, og.uint8, og.float16, og.uint64):
            u = L.unique(og.cast(x, dt))
            outs[f"unique_{dt.short_name}"], outs[f"idx_{dt.short_name}"] = u.y, u.idx
        counted = L.unique_with_counts(x)
        outs["counts"] = counted.count
        for dt, on, off in ((og.int32, 5, -2), (og.float64, 0.25, -1.5), (og.bool, True, False),
                            (og.uint8, 200, 7), (og.int16, -3, 300), (og.uint64, 2 ** 63 + 5, 1)):
            outs[f"one_hot_{dt.short_name}"] = og.one_hot(x, 8, on, off, dtype=dt)
        for on, off in ((False, True), (True, True), (False, False)):
            outs[f"one_hot_bool_{on}_{off}"] = og.one_hot(x, 3, on, off, dtype=og.bool)
        outs["one_hot_axis0"] = og.one_hot(x, 4, 3, 1, axis=0)
        outs["repeat_zero"] = L.repeat(og.reshape(x, [2, 3]), 0, axis=1)
    want, got = session_and_onnxruntime(g, {"x": x}, outs, {"x": xv})
    for key, a, b in zip(outs, got, want, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, key
        np.testing.assert_array_equal(a, b, err_msg=key)
    values = dict(zip(outs, want))
    np.testing.assert_array_equal(values["unique_int32"], [3, -1, 7, 0])
    np.testing.assert_array_equal(values["idx_uint8"], [0, 1, 0, 2, 1, 3])
    np.testing.assert_array_equal(values["unique_uint64"], xv[[0, 1, 3, 5]].astype(np.uint64))
    np.testing.assert_array_equal(values["counts"], [2, 2, 1, 1])
    hot = np.where(np.arange(8) == xv[:, None], 0.25, -1.5)   # -1: a row of off_value
    np.testing.assert_array_equal(values["one_hot_float64"], hot)
    assert values["one_hot_int32"].dtype == np.int32 and values["one_hot_uint8"][0, 3] == 200
    assert values["one_hot_uint64"][0, 3] == 2 ** 63 + 5 and values["one_hot_int16"][1, 0] == 300
    for on, off in ((False, True), (True, True), (False, False)):
        np.testing.assert_array_equal(values[f"one_hot_bool_{on}_{off}"],
                                      np.where(np.arange(3) == xv[:, None], on, off))
    np.testing.assert_array_equal(values["one_hot_axis0"],
                                  np.where(np.arange(4)[:, None] == xv, 3, 1))
    assert values["repeat_zero"].shape == (2, 0)


def test_sizes_known_only_at_run_time_export_too():
    """The Range/Shape index arithmetic and cumprod's scan loop (an ONNX Loop)."""
    xv = np.random.RandomState(10).randn(4, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None], name="x")
        outs = {"cumprod": L.cumprod(x, axis=1),
                "cumprod_excl_rev": L.cumprod(x, axis=0, exclusive=True, reverse=True),
                "diag_part": L.matrix_diag_part(x, k=(-1, 1)),
                "diag": L.matrix_diag(x, k=1),
                "set_diag": L.matrix_set_diag(x, og.ones_like(L.matrix_diag_part(x))),
                "repeat": L.repeat(x, og.constant([2, 0, 1]), axis=1),
                "roll": L.roll(x, [1, 2], [0, 1]),
                "tensor_diag": L.diag_part(L.diag(x))}
        sig = og.signature({"x": x}, outs)
    want = og.Session(g).run(list(outs.values()), {x: xv})
    proto = to_onnx(g, signatures={"serving": sig})
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(list(outs), {"x": xv})
    for key, a, b in zip(outs, got, want):
        assert a.shape == b.shape, key
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6, err_msg=key)
    np.testing.assert_allclose(want[0], np.cumprod(xv, axis=1), rtol=1e-6)

"""og.linalg.pinv, matrix_rank, matvec, normalize, adjoint, l2_normalize, global_norm
and og.losses.mean_pairwise_squared_error against TensorFlow's values and gradients,
recorded in data/tf1_apimore_reference.npz by `tools/record_tf1_reference.py apimore`
(TensorFlow 2.21's tf.compat.v1); their errors."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ShapeError

from . import tf1_reference
from .tf1_apimore_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("apimore")


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)


_FLOAT32_CASES = {"pinv_f32", "normalize", "l2_normalize", "global_norm",
                  "pairwise_row_weights", "pairwise_element_weights"}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow_values_and_gradients(reference, case):
    tol = 2e-5 if case[0] in _FLOAT32_CASES else 1e-9
    tf1_reference.check_case(reference, case, rtol=tol, atol=tol)


_CUTOFF_CASES = [c for c in CASES if c[1] in ("linalg.pinv", "linalg.matrix_rank")]


@pytest.mark.parametrize("case", _CUTOFF_CASES, ids=[c[0] for c in _CUTOFF_CASES])
def test_default_cutoffs_of_matrices_sized_only_at_run_time(reference, case):
    """pinv's and matrix_rank's cases again with every matrix dim unknown while
    building: the default cutoff (max(m, n) * eps) comes from the run-time shape and
    the values are TensorFlow's (an SVD gradient needs the sizes, in TF1 too, so only
    the values are compared)."""
    key = case[2][0][1:]
    tol = 2e-5 if case[0] in _FLOAT32_CASES else 1e-9
    tf1_reference.check_case(reference, case[:4] + ([],), rtol=tol, atol=tol,
                             hidden_dims={key: tuple(range(reference[f"in/{key}"].ndim))})


def test_pairwise_loss_with_a_scalar_weight_counts_per_example_as_tf1_graph_mode():
    # TF 2.21's tf.compat.v1.losses.mean_pairwise_squared_error in a tf.Graph run by a
    # tf.compat.v1.Session gave 12.008437 and 0.0 (one element per example: no pairs)
    inputs = make_inputs()
    g = og.Graph()
    with g.as_default():
        loss = og.losses.mean_pairwise_squared_error(inputs["labels"],
                                                     og.constant(inputs["predictions"]))
        flat = og.losses.mean_pairwise_squared_error(
            inputs["labels1d"], og.constant(inputs["predictions1d"]), weights=2.0)
        got = og.Session(g).run([loss, flat])
    np.testing.assert_allclose(got[0], 12.008437, rtol=1e-6)
    assert got[1] == 0.0


def test_errors_are_named():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(ShapeError, match="rank"):
            og.linalg.matrix_rank(og.constant(np.ones(3)))
        with pytest.raises(ShapeError, match="mean_pairwise_squared_error: shapes"):
            og.losses.mean_pairwise_squared_error(og.constant(np.ones((2, 3), np.float32)),
                                                  og.constant(np.ones((3, 2), np.float32)))
        with pytest.raises(ShapeError, match="known rank of at least 1"):
            og.losses.mean_pairwise_squared_error(1.0, og.constant(np.float32(2.0)))

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
        unknown = og.placeholder(og.float64, [None, None])
        with pytest.raises(ShapeError, match="pinv: the matrix dims must be known"):
            og.linalg.pinv(unknown)
        og.linalg.pinv(unknown, rcond=1e-12)   # an explicit cutoff needs no dims
        with pytest.raises(ShapeError, match="rank"):
            og.linalg.matrix_rank(og.constant(np.ones(3)))
        with pytest.raises(ShapeError, match="mean_pairwise_squared_error: shapes"):
            og.losses.mean_pairwise_squared_error(og.constant(np.ones((2, 3), np.float32)),
                                                  og.constant(np.ones((3, 2), np.float32)))
        with pytest.raises(ShapeError, match="known rank of at least 1"):
            og.losses.mean_pairwise_squared_error(1.0, og.constant(np.float32(2.0)))

"""og.linalg's pinv, matrix_rank, matvec, normalize, adjoint, l2_normalize and
global_norm, and og.losses.mean_pairwise_squared_error checked against TensorFlow's
tf.compat.v1 (values and gradients): shared by tests/train/test_api_more.py and
`tools/record_tf1_reference.py apimore` (which needs tensorflow; the test does not).
Case form as tf1_nn_cases.py's. The recording runs eagerly, where TF's
mean_pairwise_squared_error counts a scalar weight's elements over the whole batch,
not per example as in TF1's graph mode (og's); those cases are in the test, with
values from TF 2.21 in graph mode.
"""

import numpy as np


def make_inputs() -> dict:
    """The named inputs (fixed seed): general, rank-deficient and batched matrices,
    vectors, labels, predictions and weights."""
    rng = np.random.RandomState(20261205)
    deficient = rng.randn(2, 5, 3)
    deficient[1, :, 2] = deficient[1, :, 0] - 2 * deficient[1, :, 1]
    return {
        "tall": rng.randn(5, 3),
        "wide32": rng.randn(2, 4).astype(np.float32),
        "deficient": deficient,
        "batch": rng.randn(2, 3, 4),
        "vectors": rng.randn(2, 4),
        "x32": rng.randn(3, 5).astype(np.float32),
        "labels": rng.randn(4, 3, 2).astype(np.float32),
        "predictions": rng.randn(4, 3, 2).astype(np.float32),
        "row_weights": np.array([[[1.0]], [[0.0]], [[2.5]], [[0.5]]], np.float32),
        "element_weights": (rng.rand(4, 3, 2) > 0.3).astype(np.float32),
        "labels1d": rng.randn(6).astype(np.float32),
        "predictions1d": rng.randn(6).astype(np.float32),
        "vec3": rng.randn(2, 3),
    }


CASES = [
    ("pinv", "linalg.pinv", ["@tall"], {}, ["@tall"]),
    ("pinv_f32", "linalg.pinv", ["@wide32"], {}, ["@wide32"]),
    ("pinv_rcond", "linalg.pinv", ["@deficient"], {"rcond": 1e-10}, []),
    ("matrix_rank", "linalg.matrix_rank", ["@deficient"], {}, []),
    ("matrix_rank_tol", "linalg.matrix_rank", ["@tall"], {"tol": 1.5}, []),
    ("matvec", "linalg.matvec", ["@batch", "@vectors"], {"transpose_a": False},
     ["@batch", "@vectors"]),
    ("matvec_adjoint", "linalg.matvec", ["@batch", "@vec3"], {"adjoint_a": True},
     ["@vec3"]),
    ("normalize", "linalg.normalize", ["@x32"], {"axis": 1}, ["@x32"]),
    ("normalize_all", "linalg.normalize", ["@batch"], {"ord": 1}, ["@batch"]),
    ("adjoint", "linalg.adjoint", ["@batch"], {}, ["@batch"]),
    ("l2_normalize", "linalg.l2_normalize", ["@x32"], {"axis": 0}, ["@x32"]),
    ("global_norm", "linalg.global_norm", [["@x32", "@wide32"]], {}, ["@x32"]),
    ("pairwise_row_weights", "losses.mean_pairwise_squared_error",
     ["@labels", "@predictions"], {"weights": "@row_weights"}, ["@predictions"]),
    ("pairwise_element_weights", "losses.mean_pairwise_squared_error",
     ["@labels", "@predictions"], {"weights": "@element_weights"}, ["@predictions"]),
]

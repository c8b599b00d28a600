"""og's matrix inverse, solves and decompositions checked against TensorFlow's
tf.compat.v1 (values and gradients): shared by tests/train/test_api_linalg_solve.py
and tools/record_tf1_reference.py linsolve (which needs tensorflow; the test does
not). Case form as tf1_nn_cases.py's. Outputs whose sign is a free choice (singular
vectors, eigenvectors) are checked in the test by sign-free means instead.
"""

import numpy as np


def make_inputs() -> dict:
    """The named input matrices (fixed seed): general, symmetric positive definite,
    triangular, batched, tall and wide, float32 and float64."""
    rng = np.random.RandomState(20261206)
    a = rng.randn(2, 4, 4)
    spd = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)
    lower = np.tril(rng.randn(3, 3)) + 3 * np.eye(3)
    return {
        "square": rng.randn(4, 4) + 2 * np.eye(4),
        "square32": (rng.randn(3, 3) + 2 * np.eye(3)).astype(np.float32),
        "batch": rng.randn(2, 3, 3) + 3 * np.eye(3),
        "rhs": rng.randn(4, 2),
        "rhs32": rng.randn(3, 5).astype(np.float32),
        "batch_rhs": rng.randn(2, 3, 2),
        "shared_rhs": rng.randn(3, 4),
        "spd": spd,
        "spd_one": spd[0],
        "spd_rhs": rng.randn(2, 4, 3),
        "lower": lower,
        "lower_full": lower + np.triu(rng.randn(3, 3), 1),   # upper part must be ignored
        "tri_rhs": rng.randn(3, 2),
        "tall": rng.randn(6, 3),
        "wide": rng.randn(3, 5),
        "tall_rhs": rng.randn(6, 2),
        "wide_rhs": rng.randn(3, 2),
        "sym": (spd[1] - 6 * np.eye(4)),
        "batch_tall": rng.randn(2, 5, 3),
    }


CASES = [
    ("inverse", "matrix_inverse", ["@square"], {}, ["@square"]),
    ("inverse_adjoint", "matrix_inverse", ["@batch"], {"adjoint": True}, ["@batch"]),
    ("inverse_f32", "linalg.inv", ["@square32"], {}, ["@square32"]),
    ("solve", "matrix_solve", ["@square", "@rhs"], {}, ["@square", "@rhs"]),
    ("solve_adjoint", "matrix_solve", ["@batch", "@batch_rhs"], {"adjoint": True},
     ["@batch", "@batch_rhs"]),
    ("solve_f32", "linalg.solve", ["@square32", "@rhs32"], {}, ["@square32", "@rhs32"]),
    ("triangular_lower", "matrix_triangular_solve", ["@lower_full", "@tri_rhs"], {},
     ["@lower_full", "@tri_rhs"]),
    ("triangular_upper_adjoint", "matrix_triangular_solve", ["@lower_full", "@tri_rhs"],
     {"lower": False, "adjoint": True}, ["@lower_full", "@tri_rhs"]),
    ("triangular_broadcast", "linalg.triangular_solve", ["@batch", "@shared_rhs"], {},
     ["@batch", "@shared_rhs"]),
    ("cholesky", "cholesky", ["@spd"], {}, ["@spd"]),
    ("cholesky_one", "linalg.cholesky", ["@spd_one"], {}, ["@spd_one"]),
    ("cholesky_solve", "cholesky_solve", ["@lower", "@tri_rhs"], {}, ["@lower", "@tri_rhs"]),
    ("lstsq_tall", "matrix_solve_ls", ["@tall", "@tall_rhs"], {}, ["@tall", "@tall_rhs"]),
    ("lstsq_regularised", "matrix_solve_ls", ["@tall", "@tall_rhs"],
     {"l2_regularizer": 0.5}, ["@tall"]),
    ("lstsq_wide", "linalg.lstsq", ["@wide", "@wide_rhs"], {}, ["@wide", "@wide_rhs"]),
    ("qr_square", "qr", ["@square"], {}, ["@square"]),
    ("qr_tall", "qr", ["@tall"], {}, ["@tall"]),
    ("qr_wide", "linalg.qr", ["@wide"], {}, ["@wide"]),
    ("qr_batch_tall", "qr", ["@batch_tall"], {}, ["@batch_tall"]),
    ("qr_tall_full", "qr", ["@tall"], {"full_matrices": True}, []),
    ("svd_values", "svd", ["@tall"], {"compute_uv": False}, ["@tall"]),
    ("svd_values_wide", "linalg.svd", ["@wide"], {"compute_uv": False}, ["@wide"]),
    ("svd_values_batch", "svd", ["@batch_tall"], {"compute_uv": False}, ["@batch_tall"]),
    ("eigvals", "self_adjoint_eigvals", ["@sym"], {}, ["@sym"]),
    ("eigvals_batch", "linalg.eigvalsh", ["@spd"], {}, ["@spd"]),
]

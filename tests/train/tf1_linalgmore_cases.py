"""og.linalg's LU, matrix functions and banded solvers checked against TensorFlow's
tf.compat.v1.linalg (values and gradients): shared by
tests/train/test_api_linalg_more.py and tools/record_tf1_reference.py linalgmore
(which needs tensorflow; the test does not). Case form as tf1_nn_cases.py's.
"""

import numpy as np


def make_inputs() -> dict:
    """The named inputs (fixed seed)."""
    rng = np.random.RandomState(20261207)
    packed = rng.randn(4, 4) + np.diag([3.0, -2.5, 3.5, 2.0])   # a packed LU, U well away
    spd = rng.randn(4, 4)                                        # from singular
    spd = spd @ spd.T + 4 * np.eye(4)
    m = 6
    main = rng.randn(m) + 4.0
    sup, sub = rng.randn(m), rng.randn(m)
    pivot_main = main.copy()
    pivot_main[0] = 0.0            # needs a row interchange at the first step
    tri = np.diag(main) + np.diag(sup[:-1], 1) + np.diag(sub[1:], -1)
    return {
        "square": rng.randn(4, 4),
        "square32": rng.randn(3, 3).astype(np.float32),
        "batch": rng.randn(2, 3, 3),
        "lu_packed": packed,
        "perm": np.asarray([2, 0, 3, 1], np.int32),
        "lu_rhs": rng.randn(4, 2),
        "lu_batch": rng.randn(2, 3, 3) + 3 * np.eye(3),
        "perm_batch": np.asarray([[1, 2, 0], [0, 2, 1]], np.int32),
        "lu_batch_rhs": rng.randn(2, 3, 2),
        "tiny": 0.004 * rng.randn(3, 3),           # Pade 3
        "small": 0.05 * rng.randn(3, 3),           # Pade 5
        "medium": 0.25 * rng.randn(3, 3),          # Pade 7 or 9
        "large": 2.0 * rng.randn(4, 4),            # Pade 13 with squarings
        "expm_batch": rng.randn(3, 2, 2),
        "expm32": rng.randn(3, 3).astype(np.float32),
        "expm32_large": (3.0 * rng.randn(3, 3)).astype(np.float32),
        "spd": spd,
        "nonsym": np.triu(rng.rand(4, 4)) + np.diag([1.0, 2.0, 3.0, 4.0]) + 0.1 * rng.randn(4, 4),
        "spd32": spd.astype(np.float32),
        "sqrtm_batch": np.stack([spd, spd.T @ spd / 10.0 + np.eye(4)])[:, :3, :3],
        "compact": np.stack([sup, main, sub]),
        "compact_batch": np.stack([np.stack([sup, main, sub]), np.stack([sub, main + 1, sup])]),
        "compact_pivot": np.stack([sup, pivot_main, sub]),
        "sup": sup,
        "main": main,
        "sub": sub,
        "tri_matrix": tri + np.diag(rng.randn(m - 2), 2),        # outside the band: unread
        "tri_rhs": rng.randn(m, 3),
        "tri_rhs_batch": rng.randn(2, m, 2),
        "tri_rhs_vector": rng.randn(m),
        "tri_rhs_t": rng.randn(3, m),
        "compact32": np.stack([sup, main, sub]).astype(np.float32),
        "tri_rhs32": rng.randn(m, 2).astype(np.float32),
        "alpha": rng.randn(5),
        "beta": rng.randn(4),
        "bands_lower": np.concatenate([rng.rand(1, 5) + 1.0, rng.randn(2, 5)]),
        "bands_upper": np.concatenate([rng.randn(2, 5), rng.rand(1, 5) + 1.0]),
        "band_rhs": rng.randn(5, 2),
    }


CASES = [
    # TF registers no gradient for Lu (og's is checked by finite differences)
    ("lu", "linalg.lu", ["@square"], {}, []),
    ("lu_f32", "linalg.lu", ["@square32"], {}, []),
    ("lu_batch", "linalg.lu", ["@batch"], {}, []),
    ("lu_int64", "linalg.lu", ["@square"], {"output_idx_type": "int64"}, []),
    ("lu_solve", "linalg.lu_solve", ["@lu_packed", "@perm", "@lu_rhs"], {},
     ["@lu_packed", "@lu_rhs"]),
    ("lu_solve_batch", "linalg.lu_solve", ["@lu_batch", "@perm_batch", "@lu_batch_rhs"], {},
     ["@lu_batch", "@lu_batch_rhs"]),
    ("lu_matrix_inverse", "linalg.lu_matrix_inverse", ["@lu_packed", "@perm"], {},
     ["@lu_packed"]),
    ("lu_reconstruct", "linalg.lu_reconstruct", ["@lu_packed", "@perm"], {}, ["@lu_packed"]),
    ("lu_reconstruct_batch", "linalg.lu_reconstruct", ["@lu_batch", "@perm_batch"], {},
     ["@lu_batch"]),
    ("expm_tiny", "linalg.expm", ["@tiny"], {}, ["@tiny"]),
    ("expm_small", "linalg.expm", ["@small"], {}, ["@small"]),
    ("expm_medium", "linalg.expm", ["@medium"], {}, ["@medium"]),
    ("expm_large", "linalg.expm", ["@large"], {}, ["@large"]),
    ("expm_batch", "linalg.expm", ["@expm_batch"], {}, ["@expm_batch"]),
    ("expm_f32", "linalg.expm", ["@expm32"], {}, ["@expm32"]),
    ("expm_f32_large", "linalg.expm", ["@expm32_large"], {}, ["@expm32_large"]),
    ("sqrtm_spd", "linalg.sqrtm", ["@spd"], {}, ["@spd"]),
    ("sqrtm_nonsym", "linalg.sqrtm", ["@nonsym"], {}, ["@nonsym"]),
    ("sqrtm_f32", "linalg.sqrtm", ["@spd32"], {}, ["@spd32"]),
    ("sqrtm_batch", "linalg.sqrtm", ["@sqrtm_batch"], {}, ["@sqrtm_batch"]),
    ("tridiagonal_matmul", "linalg.tridiagonal_matmul", ["@compact", "@tri_rhs"], {},
     ["@compact", "@tri_rhs"]),
    ("tridiagonal_matmul_sequence", "linalg.tridiagonal_matmul",
     [["@sup", "@main", "@sub"], "@tri_rhs"], {"diagonals_format": "sequence"},
     ["@sup", "@main", "@sub", "@tri_rhs"]),
    ("tridiagonal_matmul_matrix", "linalg.tridiagonal_matmul", ["@tri_matrix", "@tri_rhs"],
     {"diagonals_format": "matrix"}, ["@tri_matrix", "@tri_rhs"]),
    ("tridiagonal_solve", "linalg.tridiagonal_solve", ["@compact", "@tri_rhs"], {},
     ["@compact", "@tri_rhs"]),
    ("tridiagonal_solve_batch", "linalg.tridiagonal_solve", ["@compact_batch",
                                                             "@tri_rhs_batch"], {},
     ["@compact_batch", "@tri_rhs_batch"]),
    ("tridiagonal_solve_pivot", "linalg.tridiagonal_solve", ["@compact_pivot", "@tri_rhs"],
     {}, ["@compact_pivot", "@tri_rhs"]),
    ("tridiagonal_solve_no_pivot", "linalg.tridiagonal_solve", ["@compact", "@tri_rhs"],
     {"partial_pivoting": False}, ["@compact", "@tri_rhs"]),
    ("tridiagonal_solve_vector", "linalg.tridiagonal_solve", ["@compact", "@tri_rhs_vector"],
     {}, ["@compact", "@tri_rhs_vector"]),
    ("tridiagonal_solve_transpose", "linalg.tridiagonal_solve", ["@compact", "@tri_rhs_t"],
     {"transpose_rhs": True}, ["@compact", "@tri_rhs_t"]),
    ("tridiagonal_solve_sequence", "linalg.tridiagonal_solve",
     [["@sup", "@main", "@sub"], "@tri_rhs"], {"diagonals_format": "sequence"},
     ["@sup", "@main", "@sub", "@tri_rhs"]),
    ("tridiagonal_solve_matrix", "linalg.tridiagonal_solve", ["@tri_matrix", "@tri_rhs"],
     {"diagonals_format": "matrix"}, ["@tri_matrix", "@tri_rhs"]),
    ("tridiagonal_solve_f32", "linalg.tridiagonal_solve", ["@compact32", "@tri_rhs32"], {},
     ["@compact32", "@tri_rhs32"]),
    ("eigh_tridiagonal", "linalg.eigh_tridiagonal", ["@alpha", "@beta"], {}, []),
    ("eigh_tridiagonal_index", "linalg.eigh_tridiagonal", ["@alpha", "@beta"],
     {"select": "i", "select_range": [1, 3]}, []),
]

"""og's sparse variable updates (the scatter family) checked against TensorFlow's
tf.compat.v1: shared by tests/train/test_scatter_updates.py and
`tools/record_tf1_reference.py scatter` (which needs tensorflow; the test does not).

A case is (name, function under tf.compat.v1 and og, variable key, indices, updates):
a fresh variable holding inputs[variable key] gets one update, whose result (the new
value) is recorded. Indices are literal lists; updates are "@key" (an input, cast to
the variable's dtype) or a literal scalar.
"""

import numpy as np


def make_inputs() -> dict:
    """The named variables and updates (fixed seed): float32, float64, int32, int64."""
    rng = np.random.RandomState(20261202)
    return {
        "rows": rng.randn(5, 3).astype(np.float32),
        "rows64": rng.randn(4, 2),
        "ints": rng.randint(-30, 30, (5, 3)).astype(np.int32),
        "longs": rng.randint(-30, 30, (4,)).astype(np.int64),
        "cube": rng.randn(3, 4, 2).astype(np.float32),
        "u3": rng.randn(3, 3).astype(np.float32),
        "u4": rng.randn(4, 3).astype(np.float32),
        "u22": rng.randn(2, 2, 3).astype(np.float32),
        "u3_64": rng.randn(3, 2),
        "div3": (rng.uniform(0.5, 2.0, (3, 3)) * rng.choice([-1, 1], (3, 3))).astype(
            np.float32),
        "idiv": np.array([[3, -4, 5], [-2, 7, 2], [4, 3, -3]], np.int32),
        "imul": rng.randint(-3, 4, (3, 3)).astype(np.int32),
        "lu": rng.randint(-9, 9, (3,)).astype(np.int64),
        "nd_points": rng.randn(4).astype(np.float32),
        "nd_rows3": rng.randn(3, 3).astype(np.float32),
        "nd_slices": rng.randn(2, 4, 2).astype(np.float32),
        "nd_grid": rng.randn(2, 2, 2).astype(np.float32),
    }


CASES = [
    ("update", "scatter_update", "rows", [4, 0, 2], "@u3"),
    ("update_repeats_last_wins", "scatter_update", "rows", [1, 3, 1, 1], "@u4"),
    ("update_2d_indices", "scatter_update", "rows", [[0, 4], [2, 3]], "@u22"),
    ("update_scalar", "scatter_update", "rows", [1, 3], 7.5),
    ("update_f64", "scatter_update", "rows64", [3, 1, 0], "@u3_64"),
    ("add_repeats", "scatter_add", "rows", [2, 2, 0, 2], "@u4"),
    ("sub_repeats", "scatter_sub", "rows", [2, 0, 2], "@u3"),
    ("sub_int", "scatter_sub", "ints", [4, 4, 1], "@imul"),
    ("mul", "scatter_mul", "rows", [1, 3, 1], "@u3"),
    ("mul_int", "scatter_mul", "ints", [0, 2, 0], "@imul"),
    ("div", "scatter_div", "rows", [3, 0, 3], "@div3"),
    ("div_int_truncates", "scatter_div", "ints", [0, 2, 0], "@idiv"),
    ("div_int64_scalar", "scatter_div", "longs", [0, 1, 2, 3], -4),
    ("min", "scatter_min", "rows", [4, 1, 4], "@u3"),
    ("max", "scatter_max", "rows", [4, 1, 4], "@u3"),
    ("min_int", "scatter_min", "ints", [3, 3, 2], "@imul"),
    ("max_int64", "scatter_max", "longs", [0, 3, 0], "@lu"),
    ("nd_update_points", "scatter_nd_update", "rows", [[0, 1], [4, 2], [2, 0], [0, 1]],
     "@nd_points"),
    ("nd_update_rows", "scatter_nd_update", "rows", [[3], [0], [1]], "@nd_rows3"),
    ("nd_add_slices", "scatter_nd_add", "cube", [[2], [0]], "@nd_slices"),
    ("nd_add_repeats", "scatter_nd_add", "rows", [[1, 1], [1, 1], [0, 2], [1, 1]],
     "@nd_points"),
    ("nd_sub_grid", "scatter_nd_sub", "cube", [[[0, 3], [2, 1]], [[1, 0], [0, 3]]],
     "@nd_grid"),
    ("nd_add_int", "scatter_nd_add", "ints", [[0, 0], [4, 2], [0, 0]], "@lu"),
]

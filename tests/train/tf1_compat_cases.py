"""The onegraph.train.api_compat cases checked against TensorFlow's tf.compat.v1: shared
by tests/train/test_api_compat.py and tools/record_tf1_reference.py (which needs
tensorflow; the test does not).

A case is (name, function path under tf.compat.v1, positional arguments, keyword
arguments, inputs to differentiate). An argument "@key" stands for the input array
`key` of `make_inputs()`; gradients are of sum(output * R) for a fixed random R
(stored with the outputs), taken with respect to the listed "@key" inputs.
"""

import numpy as np


def make_inputs() -> dict:
    """The named input arrays (fixed seed)."""
    rng = np.random.RandomState(20260614)
    f32 = lambda *s: rng.randn(*s).astype(np.float32)  # noqa: E731
    ints = lambda dtype, *s: rng.randint(-9, 10, size=s).astype(dtype)  # noqa: E731
    fa = f32(3, 4)
    ts = f32(5, 3)
    tie = f32(4)
    tie[0], tie[2] = ts[0, 1] + 1.0, ts[0, 1] - 1.0  # index (0, 1) twice
    tie[3] = ts[2, 0]                                # equal to the tensor's entry
    sdz = f32(7, 3)
    sdz[0, 0] = 0.0                   # segment 0: one zero in column 0
    sdz[2, 1] = sdz[4, 1] = 0.0       # segment 2: two zeros in column 1
    sdz[3, 2] = 0.0                   # ... one in column 2
    erf_in = np.array([-6.0, -3.0, -1.5, -0.5, -1e-3, 0.0, 1e-3, 0.3, 0.5, 0.9, 1.0, 1.5,
                       2.0, 2.4, 2.6, 3.0, 4.0, 5.0, 7.0, 9.0])
    return {
        "fa": fa,
        "fa10": (f32(3, 4) * 10.0).astype(np.float32),
        "fb": np.array([1.5, -0.75, 2.25, -3.0], np.float32),
        "fb0": np.array([1.5, 0.0, -2.0, 0.0], np.float32),
        "fa0": np.where(rng.rand(3, 4) < 0.3, 0.0, f32(3, 4)).astype(np.float32),
        "da": rng.randn(3, 4) * 5.0,
        "db": np.array([0.5, -1.25, 3.0, -2.0]),
        "ia": ints(np.int32, 3, 4),
        "ib": np.array([3, -2, 5, -4], np.int32),
        "ib0": np.array([3, 0, -5, 0], np.int32),
        "la": ints(np.int64, 3, 4) * 1000,
        "lb": np.array([7, -3, 11, -13], np.int64),
        "i8a": ints(np.int8, 2, 4),
        "i8b": np.array([2, -3, 4, -5], np.int8),
        "ties": np.array([[1, 3, 3, 0, 3], [2, 2, -1, 0, 2]], np.int32),
        "ftie": np.array([[0.5, -1.0, 0.5], [-2.0, -2.0, 1.0], [3.0, 3.0, 3.0]], np.float32),
        "cond": rng.rand(2, 1, 4) < 0.5,
        "wx": f32(3, 4),
        "wy": f32(2, 3, 1),
        "bx": rng.rand(3, 4) < 0.5,
        "by": np.array([True, False, True, False]),
        "erf_in": erf_in.astype(np.float32),
        "erf_in64": np.concatenate([erf_in, [12.0, 20.0, 26.0]]),
        "halves": np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.4999, -3.7, 4.2,
                            -0.0, 8388607.5], np.float32),
        "halves64": np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999999, -3.7,
                              4503599627370495.5]),
        "lsig": np.array([-100.0, -20.0, -5.0, -1.0, -1e-4, 0.0, 1e-4, 0.5, 3.0, 15.0, 20.0,
                          50.0, 100.0], np.float32),
        "lsig64": np.array([-800.0, -40.0, -1.0, 0.0, 1e-9, 2.0, 40.0, 800.0]),
        "big": np.array([-3e10, -300.0, -1.5, -0.4, 0.0, 0.6, 200.0, 255.5, 3e9, 3e10,
                         np.inf, -np.inf], np.float32),
        "l64": np.array([-300, -128, 5, 127, 300, 2 ** 40], np.int64),
        "d64big": np.array([-1e300, -1.0, 5.0, 1e39, 1e300, 3.4e38]),
        "scalar": np.array(2.5, np.float32),
        "ts": ts,
        "ts_rows": np.array([[1], [3]], np.int32),
        "ts_rowupd": f32(2, 3),
        "ts_el": np.array([[0, 1], [4, 2], [0, 1], [2, 0]], np.int32),
        "ts_elupd": f32(4),
        "ts_tie": tie,
        "ts_el_once": np.array([[0, 1], [4, 2], [2, 0]], np.int64),
        "ts_el_onceupd": f32(3),
        "its": ints(np.int32, 5, 3),
        "its_upd": ints(np.int32, 2, 3),
        "sd": f32(7, 3),
        "sd1": f32(7),
        "sdz": sdz,
        "sd64": rng.randn(7, 3),
        "isd": ints(np.int32, 7, 3),
        "sids": np.array([0, 0, 2, 2, 2, 3, 5], np.int32),
        "uids": np.array([3, 0, -1, 3, 1, 0, 3], np.int32),
        "uids64": np.array([3, 0, -1, 3, 1, 0, 3], np.int64),
        "ud2": f32(2, 3, 2),
        "uids2": np.array([[1, 0, 1], [-1, 2, 1]], np.int32),
        "s2b": f32(2, 4, 6, 3),
        "s2b1": f32(2, 5, 3),
        "s2b_int": np.arange(16, dtype=np.int32).reshape(1, 4, 4, 1),
        "b2s": f32(8, 2, 3, 1),
        "b2s1": f32(6, 4, 2),
        "img": f32(2, 7, 6, 3),
    }


CASES = [
    # the old casts
    ("to_float_int", "to_float", ["@ia"], {}, []),
    ("to_double", "to_double", ["@fa"], {}, ["@fa"]),
    ("to_int32_truncates", "to_int32", ["@fa10"], {}, []),
    ("to_int64", "to_int64", ["@ia"], {}, []),
    # Python 2's div: floor for integers (negatives round down), true for floats
    ("div_int_broadcast", "div", ["@ia", "@ib"], {}, []),
    ("div_int_scalar", "div", ["@ia", 4], {}, []),
    ("div_int64", "div", ["@la", "@lb"], {}, []),
    ("div_int8", "div", ["@i8a", "@i8b"], {}, []),
    ("div_float", "div", ["@fa", "@fb"], {}, ["@fa", "@fb"]),
    ("div_float64", "div", ["@da", "@db"], {}, ["@da", "@db"]),
    ("div_no_nan_broadcast", "div_no_nan", ["@fa", "@fb0"], {}, ["@fa", "@fb0"]),
    ("div_no_nan_same_shape", "div_no_nan", ["@fa", "@fa0"], {}, ["@fa", "@fa0"]),
    ("div_no_nan_int", "div_no_nan", ["@ia", "@ib0"], {}, []),
    ("truncatediv_int", "truncatediv", ["@ia", "@ib"], {}, []),
    ("truncatediv_int64", "truncatediv", ["@la", "@lb"], {}, []),
    ("truncatediv_float", "truncatediv", ["@fa10", "@fb"], {}, []),
    ("truncatemod_int", "truncatemod", ["@ia", "@ib"], {}, []),
    ("truncatemod_float", "truncatemod", ["@fa10", "@fb"], {}, []),
    ("floor_div_int", "floor_div", ["@ia", "@ib"], {}, []),
    ("floor_div_int64", "floor_div", ["@la", "@lb"], {}, []),
    ("floor_div_float", "floor_div", ["@fa10", "@fb"], {}, []),
    # arg_max / arg_min: the first of equal values, negative dimensions, int32 output
    ("arg_max_ties", "arg_max", ["@ties", 1], {}, []),
    ("arg_max_axis0_int32", "arg_max", ["@ties", 0], {"output_type": "int32"}, []),
    ("arg_min_negative_axis", "arg_min", ["@ftie", -1], {}, []),
    ("arg_min_float_int32", "arg_min", ["@fa", 0], {"output_type": "int32"}, []),
    # reverse_v2, where_v2, logical_xor
    ("reverse_v2", "reverse_v2", ["@fa", [0, -1]], {}, ["@fa"]),
    ("reverse_v2_int", "reverse_v2", ["@ties", [1]], {}, []),
    ("reverse_v2_4d", "reverse_v2", ["@img", [-2, 3]], {}, ["@img"]),
    ("where_v2_broadcast", "where_v2", ["@cond", "@wx", "@wy"], {}, ["@wx", "@wy"]),
    ("where_v2_scalar_y", "where_v2", ["@bx", "@fa", 0.0], {}, ["@fa"]),
    ("where_v2_coordinates", "where_v2", ["@cond"], {}, []),
    ("where_v2_coordinates_int", "where_v2", ["@ia"], {}, []),
    ("logical_xor", "logical_xor", ["@bx", "@by"], {}, []),
    # erfc, rint, log_sigmoid
    ("erfc", "erfc", ["@erf_in"], {}, ["@erf_in"]),
    ("erfc_float64", "erfc", ["@erf_in64"], {}, ["@erf_in64"]),
    ("rint", "rint", ["@halves"], {}, []),
    ("rint_float64", "rint", ["@halves64"], {}, []),
    ("log_sigmoid", "log_sigmoid", ["@lsig"], {}, ["@lsig"]),
    ("log_sigmoid_float64", "log_sigmoid", ["@lsig64"], {}, ["@lsig64"]),
    # saturate_cast: TF's clip bounds (2147483520.0 for float32 -> int32), inf clipped
    ("saturate_uint8", "saturate_cast", ["@big", "uint8"], {}, []),
    ("saturate_int32", "saturate_cast", ["@big", "int32"], {}, []),
    ("saturate_int8_from_int64", "saturate_cast", ["@l64", "int8"], {}, []),
    ("saturate_float32_from_float64", "saturate_cast", ["@d64big", "float32"], {},
     ["@d64big"]),
    ("saturate_float16", "saturate_cast", ["@big", "float16"], {}, []),
    # scalar_mul
    ("scalar_mul", "scalar_mul", [2.5, "@fa"], {}, ["@fa"]),
    ("scalar_mul_tensor", "scalar_mul", ["@scalar", "@fa"], {}, ["@scalar", "@fa"]),
    # tensor_scatter_nd_*: rows and elements; add/sub/max/min with a repeated index,
    # max/min with an update equal to the tensor's entry (TF shares the gradient)
    ("tsnd_update_rows", "tensor_scatter_nd_update", ["@ts", "@ts_rows", "@ts_rowupd"], {},
     ["@ts", "@ts_rowupd"]),
    ("tsnd_update_elements", "tensor_scatter_nd_update",
     ["@ts", "@ts_el_once", "@ts_el_onceupd"], {}, ["@ts", "@ts_el_onceupd"]),
    ("tsnd_add_repeated", "tensor_scatter_nd_add", ["@ts", "@ts_el", "@ts_elupd"], {},
     ["@ts", "@ts_elupd"]),
    ("tsnd_sub_rows", "tensor_scatter_nd_sub", ["@ts", "@ts_rows", "@ts_rowupd"], {},
     ["@ts", "@ts_rowupd"]),
    ("tsnd_sub_repeated", "tensor_scatter_nd_sub", ["@ts", "@ts_el", "@ts_elupd"], {},
     ["@ts", "@ts_elupd"]),
    ("tsnd_max_repeated_tie", "tensor_scatter_nd_max", ["@ts", "@ts_el", "@ts_tie"], {},
     ["@ts", "@ts_tie"]),
    ("tsnd_min_repeated_tie", "tensor_scatter_nd_min", ["@ts", "@ts_el", "@ts_tie"], {},
     ["@ts", "@ts_tie"]),
    ("tsnd_max_rows", "tensor_scatter_nd_max", ["@ts", "@ts_rows", "@ts_rowupd"], {},
     ["@ts", "@ts_rowupd"]),
    ("tsnd_add_int", "tensor_scatter_nd_add", ["@its", "@ts_rows", "@its_upd"], {}, []),
    ("tsnd_min_int", "tensor_scatter_nd_min", ["@its", "@ts_rows", "@its_upd"], {}, []),
    ("tsnd_update_int", "tensor_scatter_nd_update", ["@its", "@ts_rows", "@its_upd"], {},
     []),
    # sorted segments: segments 1 and 4 empty (0, or 1 for products)
    ("segment_max", "segment_max", ["@sd", "@sids"], {}, ["@sd"]),
    ("segment_min", "segment_min", ["@sd", "@sids"], {}, ["@sd"]),
    ("segment_mean", "segment_mean", ["@sd", "@sids"], {}, ["@sd"]),
    ("segment_prod", "segment_prod", ["@sd", "@sids"], {}, ["@sd"]),
    ("segment_prod_zeros", "segment_prod", ["@sdz", "@sids"], {}, ["@sdz"]),
    ("segment_min_1d", "segment_min", ["@sd1", "@sids"], {}, ["@sd1"]),
    ("segment_max_float64", "segment_max", ["@sd64", "@sids"], {}, ["@sd64"]),
    ("segment_max_int", "segment_max", ["@isd", "@sids"], {}, []),
    ("segment_min_int", "segment_min", ["@isd", "@sids"], {}, []),
    ("segment_mean_int", "segment_mean", ["@isd", "@sids"], {}, []),
    ("segment_prod_int", "segment_prod", ["@isd", "@sids"], {}, []),
    # unsorted segments: ids out of order, -1 dropped, segments 2 and 4 empty
    ("useg_max", "unsorted_segment_max", ["@sd", "@uids", 5], {}, ["@sd"]),
    ("useg_min", "unsorted_segment_min", ["@sd", "@uids", 5], {}, ["@sd"]),
    ("useg_prod", "unsorted_segment_prod", ["@sd", "@uids", 5], {}, ["@sd"]),
    ("useg_prod_zeros", "unsorted_segment_prod", ["@sdz", "@uids", 5], {}, ["@sdz"]),
    ("useg_mean", "unsorted_segment_mean", ["@sd", "@uids", 5], {}, ["@sd"]),
    ("useg_sqrt_n", "unsorted_segment_sqrt_n", ["@sd", "@uids64", 5], {}, ["@sd"]),
    ("useg_max_2d_ids", "unsorted_segment_max", ["@ud2", "@uids2", 4], {}, ["@ud2"]),
    ("useg_min_2d_ids", "unsorted_segment_min", ["@ud2", "@uids2", 4], {}, ["@ud2"]),
    ("useg_mean_2d_ids", "unsorted_segment_mean", ["@ud2", "@uids2", 4], {}, ["@ud2"]),
    ("useg_sqrt_n_2d_ids", "unsorted_segment_sqrt_n", ["@ud2", "@uids2", 4], {}, ["@ud2"]),
    ("useg_prod_2d_ids", "unsorted_segment_prod", ["@ud2", "@uids2", 4], {}, ["@ud2"]),
    ("useg_max_float64", "unsorted_segment_max", ["@sd64", "@uids", 6], {}, ["@sd64"]),
    ("useg_max_int", "unsorted_segment_max", ["@isd", "@uids", 5], {}, []),
    ("useg_min_int", "unsorted_segment_min", ["@isd", "@uids", 5], {}, []),
    ("useg_prod_int", "unsorted_segment_prod", ["@isd", "@uids", 5], {}, []),
    ("useg_mean_int", "unsorted_segment_mean", ["@isd", "@uids", 5], {}, []),
    # space_to_batch_nd / batch_to_space_nd
    ("s2b_2d", "space_to_batch_nd", ["@s2b", [2, 3], [[0, 0], [0, 3]]], {}, ["@s2b"]),
    ("s2b_2d_padded", "space_to_batch_nd", ["@s2b", [2, 2], [[1, 3], [2, 0]]], {},
     ["@s2b"]),
    ("s2b_1d", "space_to_batch_nd", ["@s2b1", [2], [[1, 2]]], {}, ["@s2b1"]),
    ("s2b_int", "space_to_batch_nd", ["@s2b_int", [2, 2], [[0, 0], [0, 0]]], {}, []),
    ("b2s_2d", "batch_to_space_nd", ["@b2s", [2, 2], [[0, 1], [1, 0]]], {}, ["@b2s"]),
    ("b2s_1d", "batch_to_space_nd", ["@b2s1", [3], [[1, 2]]], {}, ["@b2s1"]),
    ("b2s_uncropped", "batch_to_space_nd", ["@b2s", [2, 4], [[0, 0], [0, 0]]], {},
     ["@b2s"]),
    # extract_image_patches: TF's patch layout, SAME/VALID, strides, rates
    ("patches_valid", "extract_image_patches", ["@img"],
     {"ksizes": [1, 3, 2, 1], "strides": [1, 2, 1, 1], "rates": [1, 1, 1, 1],
      "padding": "VALID"}, ["@img"]),
    ("patches_same_rates", "extract_image_patches", ["@img"],
     {"ksizes": [1, 2, 3, 1], "strides": [1, 2, 2, 1], "rates": [1, 2, 1, 1],
      "padding": "SAME"}, ["@img"]),
    ("patches_same_stride3", "extract_image_patches", ["@img"],
     {"ksizes": [1, 3, 3, 1], "strides": [1, 3, 3, 1], "rates": [1, 1, 1, 1],
      "padding": "SAME"}, ["@img"]),
    ("patches_valid_rates", "extract_image_patches", ["@img"],
     {"ksizes": [1, 2, 2, 1], "strides": [1, 1, 2, 1], "rates": [1, 3, 2, 1],
      "padding": "VALID"}, ["@img"]),
    ("patches_1x1", "extract_image_patches", ["@img"],
     {"ksizes": [1, 1, 1, 1], "strides": [1, 2, 3, 1], "rates": [1, 1, 1, 1],
      "padding": "VALID"}, ["@img"]),
]

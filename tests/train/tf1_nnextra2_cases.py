"""More og.nn cases checked against TensorFlow's tf.compat.v1 (train/nn_tf1_more.py):
shared by tests/train/test_nn_tf1_more.py and tools/record_tf1_reference.py (which
needs tensorflow; the test does not).

A case is (name, function path under tf.compat.v1 / og, positional arguments, keyword
arguments, inputs to differentiate), as in tf1_nn_cases.py. The random samplers are
not here (TF's draws cannot be reproduced); the test checks them statistically.
"""

import numpy as np


def make_inputs() -> dict:
    """The named input arrays (fixed seed)."""
    rng = np.random.RandomState(20261204)
    f32 = lambda *s: rng.randn(*s).astype(np.float32)  # noqa: E731
    return {
        # CTC: time-major (T=6, B=3, C=5) logits and the batch-major copy
        "ctc_logits": f32(6, 3, 5) * 2,
        "ctc_logits_bm": f32(3, 6, 5) * 2,
        "ctc_labels": np.array([[1, 2, 2], [3, 0, 0], [4, 4, 0]], np.int32),
        "ctc_labels_last": np.array([[0, 1, 1], [3, 0, 0], [2, 3, 0]], np.int32),
        "ctc_labels_mid": np.array([[0, 1, 3], [4, 0, 0], [3, 3, 1]], np.int32),
        "ctc_label_length": np.array([3, 1, 2], np.int32),
        "ctc_label_length_mid": np.array([3, 1, 3], np.int32),
        "ctc_logit_length": np.array([6, 4, 5], np.int32),
        "runs": np.array([[1, 1, 2, 2, 3], [4, 4, 4, 0, 0], [1, 2, 1, 2, 2]], np.int32),
        "runs_length": np.array([5, 2, 4], np.int32),
        "dupes": np.array([[3, 1, 3, 2, 1], [0, 0, 5, 5, 0], [7, 6, 5, 4, 3]], np.int32),
        # transposed convs
        "nwc": f32(2, 5, 3),
        "w1d_4_3": f32(3, 4, 3),
        "ndhwc": f32(1, 3, 4, 4, 2),
        "w3d_5_2": f32(2, 3, 3, 5, 2),
        "nhwc": f32(2, 5, 6, 3),
        "w2d_4_3": f32(3, 3, 4, 3),
        # depthwise
        "dw_filter": f32(3, 3, 3, 2),
        "dw_dy_same": f32(2, 5, 6, 6),
        "dw_dy_s2": f32(2, 3, 3, 6),
        "dw_dy_valid_s2": f32(2, 2, 2, 6),
        # conv3d backprop filter
        "c3_x": f32(1, 4, 5, 5, 2),
        "c3_dy_same": f32(1, 4, 5, 5, 3),
        "c3_dy_valid_s2": f32(1, 2, 2, 2, 3),
        # space to batch, pools
        "s2b": f32(2, 4, 6, 3),
        "seq": f32(2, 9, 3),
        "w_dil": f32(3, 3, 3, 4),
        # batch norm
        "bn_m": f32(3),
        "bn_v": np.abs(f32(3)) + 0.5,
        "bn_beta": f32(3),
        "bn_gamma": f32(3),
        # losses
        "per_example": np.abs(f32(4)),
        "per_example_2d": np.abs(f32(4, 3)),
        "sample_weight": np.array([1.0, 0.5, 0.0, 2.0], np.float32),
        "reg": f32(3),
        "reg2": f32(3),
        # candidates
        "true_classes": np.array([[1, 2], [3, 3], [0, 5]], np.int64),
        "sampled": np.array([3, 1, 3, 7, 2, 0], np.int64),
    }


_CTC = ["@ctc_logits", "@ctc_label_length", "@ctc_logit_length"]

CASES = [
    # ctc_loss_v2, dense labels: blank 0, repeats, shorter logit_length, blank last / mid
    ("ctc_v2", "nn.ctc_loss_v2", [],
     {"labels": "@ctc_labels", "logits": "@ctc_logits", "label_length": "@ctc_label_length",
      "logit_length": "@ctc_logit_length"}, ["@ctc_logits"]),
    ("ctc_v2_batch_major_blank_last", "nn.ctc_loss_v2", [],
     {"labels": "@ctc_labels_last", "logits": "@ctc_logits_bm",
      "label_length": "@ctc_label_length", "logit_length": "@ctc_logit_length",
      "logits_time_major": False, "blank_index": -1}, ["@ctc_logits_bm"]),
    ("ctc_v2_blank_mid", "nn.ctc_loss_v2", [],
     {"labels": "@ctc_labels_mid", "logits": "@ctc_logits",
      "label_length": "@ctc_label_length_mid", "logit_length": "@ctc_logit_length",
      "blank_index": 2}, ["@ctc_logits"]),
    ("collapse_repeated", "nn.collapse_repeated", ["@runs", "@runs_length"], {}, []),
    ("ctc_unique_labels", "nn.ctc_unique_labels", ["@dupes"], {}, []),
    # transposed convs
    ("conv1d_t_same_s2", "nn.conv1d_transpose", ["@nwc", "@w1d_4_3", [2, 10, 4], 2], {},
     ["@nwc", "@w1d_4_3"]),
    ("conv1d_t_valid_s2", "nn.conv1d_transpose", ["@nwc", "@w1d_4_3", [2, 11, 4], 2],
     {"padding": "VALID"}, ["@nwc", "@w1d_4_3"]),
    ("conv1d_t_same_odd", "nn.conv1d_transpose", ["@nwc", "@w1d_4_3", [2, 9, 4], [2]], {},
     ["@nwc"]),
    ("conv3d_t_same_s2", "nn.conv3d_transpose", ["@ndhwc", "@w3d_5_2", [1, 6, 8, 8, 5],
                                                  [1, 2, 2, 2, 1]], {},
     ["@ndhwc", "@w3d_5_2"]),
    ("conv3d_t_valid", "nn.conv3d_transpose", ["@ndhwc", "@w3d_5_2", [1, 4, 6, 6, 5],
                                               [1, 1, 1, 1, 1]], {"padding": "VALID"},
     ["@ndhwc", "@w3d_5_2"]),
    ("conv_t_rank3", "nn.conv_transpose", ["@nwc", "@w1d_4_3", [2, 10, 4], 2], {}, ["@nwc"]),
    ("conv_t_rank4", "nn.conv_transpose", ["@nhwc", "@w2d_4_3", [2, 10, 12, 4], 2], {},
     ["@nhwc", "@w2d_4_3"]),
    ("conv_t_rank5", "nn.conv_transpose", ["@ndhwc", "@w3d_5_2", [1, 5, 7, 7, 5], 2],
     {"padding": "SAME"}, ["@ndhwc"]),
    # depthwise
    ("dw_native_same", "nn.depthwise_conv2d_native", ["@nhwc", "@dw_filter", [1, 1, 1, 1],
                                                      "SAME"], {}, ["@nhwc", "@dw_filter"]),
    ("dw_native_valid_s2", "nn.depthwise_conv2d_native", ["@nhwc", "@dw_filter",
                                                          [1, 2, 2, 1], "VALID"], {},
     ["@nhwc", "@dw_filter"]),
    ("dw_native_dilated", "nn.depthwise_conv2d_native", ["@nhwc", "@dw_filter", [1, 1, 1, 1],
                                                         "SAME"],
     {"dilations": [1, 2, 2, 1]}, ["@nhwc", "@dw_filter"]),
    ("dw_bp_input_same", "nn.depthwise_conv2d_native_backprop_input",
     [[2, 5, 6, 3], "@dw_filter", "@dw_dy_same", [1, 1, 1, 1], "SAME"], {},
     ["@dw_filter", "@dw_dy_same"]),
    ("dw_bp_input_s2", "nn.depthwise_conv2d_native_backprop_input",
     [[2, 5, 6, 3], "@dw_filter", "@dw_dy_s2", [1, 2, 2, 1], "SAME"], {},
     ["@dw_filter", "@dw_dy_s2"]),
    ("dw_bp_input_alias", "nn.depthwise_conv2d_backprop_input",
     [[2, 5, 6, 3], "@dw_filter", "@dw_dy_valid_s2", [1, 2, 2, 1], "VALID"], {},
     ["@dw_dy_valid_s2"]),
    ("dw_bp_filter_same", "nn.depthwise_conv2d_native_backprop_filter",
     ["@nhwc", [3, 3, 3, 2], "@dw_dy_same", [1, 1, 1, 1], "SAME"], {},
     ["@nhwc", "@dw_dy_same"]),
    ("dw_bp_filter_s2", "nn.depthwise_conv2d_native_backprop_filter",
     ["@nhwc", [3, 3, 3, 2], "@dw_dy_s2", [1, 2, 2, 1], "SAME"], {},
     ["@nhwc", "@dw_dy_s2"]),
    ("dw_bp_filter_alias_valid", "nn.depthwise_conv2d_backprop_filter",
     ["@nhwc", [3, 3, 3, 2], "@dw_dy_valid_s2", [1, 2, 2, 1], "VALID"], {},
     ["@nhwc", "@dw_dy_valid_s2"]),
    # conv3d backprop filter
    ("c3_bp_filter_same", "nn.conv3d_backprop_filter_v2",
     ["@c3_x", [2, 3, 3, 2, 3], "@c3_dy_same", [1, 1, 1, 1, 1], "SAME"], {},
     ["@c3_x", "@c3_dy_same"]),
    ("c3_bp_filter_valid_s2", "nn.conv3d_backprop_filter",
     ["@c3_x", [2, 3, 3, 2, 3], "@c3_dy_valid_s2", [1, 2, 2, 2, 1], "VALID"], {},
     ["@c3_x", "@c3_dy_valid_s2"]),
    # space to batch; the dilated conv with_space_to_batch is checked against
    ("space_to_batch", "nn.space_to_batch", ["@s2b", [[0, 0], [1, 1]]], {"block_size": 2},
     ["@s2b"]),
    ("space_to_batch_shape", "nn.space_to_batch", ["@s2b", [[2, 2], [0, 2]]],
     {"block_shape": 2}, []),
    ("ref_dilated_same", "nn.convolution", ["@nhwc", "@w_dil", "SAME"],
     {"dilation_rate": [2, 2]}, ["@nhwc", "@w_dil"]),
    ("ref_dilated_valid", "nn.convolution", ["@nhwc", "@w_dil", "VALID"],
     {"dilation_rate": [2, 1]}, ["@nhwc", "@w_dil"]),
    # v2 pools
    ("max_pool_v2_1d", "nn.max_pool_v2", ["@seq", 3, 2, "SAME"], {}, ["@seq"]),
    ("max_pool_v2_2d", "nn.max_pool_v2", ["@nhwc", 2, 2, "VALID"], {}, ["@nhwc"]),
    # data_format given for 3-D: TF 2.21's eager _MaxPool3DGrad / _AvgPool3DGrad fail
    # when it is None (the default data_format=None is checked by max_pool_v2_3d_default)
    ("max_pool_v2_3d", "nn.max_pool_v2", ["@ndhwc", [1, 2, 2], 2, "SAME"],
     {"data_format": "NDHWC"}, ["@ndhwc"]),
    ("max_pool_v2_3d_default", "nn.max_pool_v2", ["@ndhwc", [1, 2, 2], 2, "SAME"], {}, []),
    ("avg_pool_v2_1d", "nn.avg_pool_v2", ["@seq", 3, 2, "SAME"], {}, ["@seq"]),
    ("avg_pool_v2_2d", "nn.avg_pool_v2", ["@nhwc", [2, 3], [1, 2], "SAME"], {}, ["@nhwc"]),
    ("avg_pool_v2_3d", "nn.avg_pool_v2", ["@ndhwc", 2, 2, "VALID"], {"data_format": "NDHWC"},
     ["@ndhwc"]),
    # batch norm
    ("bn_global_scale", "nn.batch_norm_with_global_normalization",
     ["@nhwc", "@bn_m", "@bn_v", "@bn_beta", "@bn_gamma", 1e-3, True], {},
     ["@nhwc", "@bn_m", "@bn_v", "@bn_beta", "@bn_gamma"]),
    ("bn_global_noscale", "nn.batch_norm_with_global_normalization", [],
     {"input": "@nhwc", "mean": "@bn_m", "variance": "@bn_v", "beta": "@bn_beta",
      "gamma": "@bn_gamma", "variance_epsilon": 0.01, "scale_after_normalization": False},
     ["@nhwc", "@bn_m", "@bn_v"]),
    # losses
    ("avg_loss", "nn.compute_average_loss", ["@per_example"], {}, ["@per_example"]),
    ("avg_loss_weighted", "nn.compute_average_loss", ["@per_example"],
     {"sample_weight": "@sample_weight", "global_batch_size": 8}, ["@per_example"]),
    ("avg_loss_2d_weighted", "nn.compute_average_loss", ["@per_example_2d"],
     {"sample_weight": "@sample_weight"}, ["@per_example_2d"]),
    ("scale_reg", "nn.scale_regularization_loss", ["@reg"], {}, ["@reg"]),
    ("scale_reg_list", "nn.scale_regularization_loss", [["@reg", "@reg2"]], {},
     ["@reg", "@reg2"]),
    # candidates (deterministic ones)
    ("accidental_hits", "nn.compute_accidental_hits", ["@true_classes", "@sampled", 2], {},
     []),
    ("all_candidates", "nn.all_candidate_sampler", ["@true_classes", 2, 6, True], {}, []),
]

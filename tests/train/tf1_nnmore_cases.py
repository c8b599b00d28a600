"""The cases of onegraph.train.nn_more checked against TensorFlow's tf.compat.v1:
shared by tests/train/test_nn_more.py and tools/record_tf1_reference.py (which needs
tensorflow; the test does not).

A case is (name, function path under tf.compat.v1 / og, positional arguments, keyword
arguments, inputs to differentiate). An argument "@key" stands for the input array
`key` of `make_inputs()`; gradients are of sum(output * R) for a fixed random R
(stored with the outputs; one R per output for the functions returning several),
taken with respect to the listed "@key" inputs. The recorder cannot weigh a scalar float
output (zero_fraction, sufficient_statistics' count), so those two functions are checked
in test_nn_more.py against TF's formulas instead.
"""

import numpy as np


def make_inputs() -> dict:
    """The named input arrays (fixed seed)."""
    rng = np.random.RandomState(20260611)
    f32 = lambda *s: rng.randn(*s).astype(np.float32)  # noqa: E731
    pos = lambda *s: (rng.rand(*s) + 0.2).astype(np.float32)  # noqa: E731
    probs = np.exp(f32(4, 5))
    weights = pos(4, 7)
    weights[:, 2] = 0.0            # a column whose weights sum to 0
    weights[1, 4] = 0.0
    sparse = f32(3, 4, 5)
    sparse[sparse < 0.3] = 0.0
    return {
        # images: NHWC and NCHW with odd sizes, 3-D volumes, 1-D sequences
        "x_nhwc": f32(2, 5, 6, 3),
        "x_nchw": f32(2, 3, 5, 6),
        "x_ndhwc": f32(2, 3, 4, 5, 2),
        "x_batches": f32(2, 2, 5, 6, 3),
        "vol": f32(2, 5, 6, 7, 2),
        "vol_first": f32(2, 2, 5, 6, 7),
        "seq": f32(2, 9, 3),
        "ncw": f32(2, 3, 9),
        # per-channel statistics and parameters
        "mean3": f32(3),
        "var3": pos(3),
        "offset3": f32(3),
        "scale3": pos(3),
        "mean2": f32(2),
        "var2": pos(2),
        "offset2": f32(2),
        "scale2": pos(2),
        "mean_keep": f32(1, 5, 1, 3),
        "var_keep": pos(1, 1, 6, 1),
        "feat": f32(4, 7),
        "mean_rows": f32(4, 1),
        "var_cols": pos(7),
        # dense layers
        "w7_5": f32(7, 5),
        "b5": f32(5),
        "beta": np.asarray(1.7, np.float32),
        # losses
        "logits": np.array([[0.0, 1.5, -2.0, 30.0, 0.5], [-40.0, 0.25, 3.0, -0.5, 1.0],
                            [1.0, 2.0, 3.0, 4.0, 5.0], [0.1, -0.2, 0.3, -0.4, 0.0]],
                           np.float32),
        "probs": (probs / probs.sum(axis=1, keepdims=True)).astype(np.float32),
        "raw_labels": pos(4, 5),
        "logits3d": f32(3, 4, 2),
        "labels3d": pos(3, 4, 2),
        "log_in": f32(3, 4),
        "targets": np.array([[0.0, 0.5, 1.0, 3.0], [7.0, 1.5, 0.25, 2.0],
                             [4.0, 0.0, 12.0, 1.0]], np.float32),
        "targets_big": np.array([[1.5, 2.0, 3.0, 4.5], [7.0, 1.25, 9.0, 2.0],
                                 [4.0, 1.75, 12.0, 30.0]], np.float32),
        "sparse": sparse,
        "ints": np.array([[0, 3, 0], [1, 0, -2]], np.int32),
        # moments
        "count": np.asarray(12.0, np.float32),
        "mss": f32(3) * 5,
        "vss": pos(3) * 20,
        "shift3": f32(3),
        "fw": weights,
        "fw_rows": pos(4, 1),
        # filters: conv (k..., in, out), morphology (kh, kw, depth)
        "w3x3_3_4": f32(3, 3, 3, 4),
        "w3d": f32(2, 3, 2, 2, 4),
        "w3d_small": f32(2, 2, 2, 2, 3),
        "w1d": f32(3, 3, 4),
        "w2x2_3_2": f32(2, 2, 3, 2),
        "mfilt": f32(3, 2, 3),
        # gradients of a conv2d's output (conv2d_backprop_*)
        "dy_s2": f32(2, 3, 3, 4),
        "dy_v2": f32(2, 2, 2, 4),
        "dy_full": f32(2, 5, 6, 4),
        "dy_explicit": f32(2, 2, 4, 4),
        "dy_s2_nchw": f32(2, 4, 3, 3),
        # small integers: windows with tied maxima (TF's 2-D pools and argmax give the
        # gradient to the first, its 3-D pools to every one)
        "x_ties": rng.randint(0, 3, size=(2, 5, 6, 3)).astype(np.float32),
        "vol_ties": rng.randint(0, 2, size=(1, 4, 5, 4, 2)).astype(np.float32),
        "seq_ties": rng.randint(0, 2, size=(2, 9, 3)).astype(np.float32),
        "mfilt_ties": rng.randint(0, 2, size=(3, 2, 3)).astype(np.float32),
    }


CASES = [
    # batch_normalization: 1-D statistics over the last axis, keepdims-shaped ones,
    # other broadcasting shapes, scale / offset left out
    ("bn_vectors", "nn.batch_normalization",
     ["@x_nhwc", "@mean3", "@var3", "@offset3", "@scale3", 1e-3], {},
     ["@x_nhwc", "@mean3", "@var3", "@offset3", "@scale3"]),
    ("bn_broadcast", "nn.batch_normalization",
     ["@x_nhwc", "@mean_keep", "@var_keep", "@offset3", "@scale3"],
     {"variance_epsilon": 0.01}, ["@x_nhwc", "@mean_keep", "@var_keep", "@scale3"]),
    ("bn_no_scale", "nn.batch_normalization", ["@feat", "@mean_rows", "@var_cols", None,
                                               None, 1e-5], {},
     ["@feat", "@mean_rows", "@var_cols"]),
    ("bn_offset_only", "nn.batch_normalization",
     ["@feat", "@mean_rows", "@var_cols", "@mean_rows", None, 0.5], {},
     ["@feat", "@var_cols", "@mean_rows"]),
    # fused_batch_norm: training (Bessel-corrected variance returned) and inference,
    # NHWC / NCHW / NDHWC, the running-average factor
    ("fused_train_nhwc", "nn.fused_batch_norm", ["@x_nhwc", "@scale3", "@offset3"], {},
     ["@x_nhwc", "@scale3", "@offset3"]),
    ("fused_train_nchw", "nn.fused_batch_norm", ["@x_nchw", "@scale3", "@offset3"],
     {"data_format": "NCHW", "epsilon": 0.01}, ["@x_nchw", "@scale3", "@offset3"]),
    ("fused_infer_nhwc", "nn.fused_batch_norm",
     ["@x_nhwc", "@scale3", "@offset3", "@mean3", "@var3"], {"is_training": False},
     ["@x_nhwc", "@scale3", "@offset3", "@mean3", "@var3"]),
    ("fused_infer_nchw", "nn.fused_batch_norm",
     ["@x_nchw", "@scale3", "@offset3", "@mean3", "@var3", 1e-4, "NCHW", False],
     {}, ["@x_nchw", "@scale3", "@offset3"]),
    ("fused_avg_factor", "nn.fused_batch_norm",
     ["@x_nhwc", "@scale3", "@offset3", "@mean3", "@var3"],
     {"exponential_avg_factor": 0.25}, ["@x_nhwc", "@scale3", "@mean3", "@var3"]),
    ("fused_train_ndhwc", "nn.fused_batch_norm", ["@x_ndhwc", "@scale2", "@offset2"],
     {"data_format": "NDHWC"}, ["@x_ndhwc", "@scale2", "@offset2"]),
    # the v2 cross-entropy: gradients into labels too, rows not summing to 1, axis/dim
    ("xent_v2", "nn.softmax_cross_entropy_with_logits_v2", [],
     {"labels": "@probs", "logits": "@logits"}, ["@logits", "@probs"]),
    ("xent_v2_raw_labels", "nn.softmax_cross_entropy_with_logits_v2", [],
     {"labels": "@raw_labels", "logits": "@logits"}, ["@logits", "@raw_labels"]),
    ("xent_v2_axis", "nn.softmax_cross_entropy_with_logits_v2", [],
     {"labels": "@labels3d", "logits": "@logits3d", "axis": 1},
     ["@logits3d", "@labels3d"]),
    ("xent_v2_dim", "nn.softmax_cross_entropy_with_logits_v2", [],
     {"labels": "@labels3d", "logits": "@logits3d", "dim": 0}, ["@logits3d", "@labels3d"]),
    # small layers and activations
    ("xw_plus_b", "nn.xw_plus_b", ["@feat", "@w7_5", "@b5"], {}, ["@feat", "@w7_5", "@b5"]),
    ("relu_layer", "nn.relu_layer", ["@feat", "@w7_5", "@b5"], {},
     ["@feat", "@w7_5", "@b5"]),
    ("crelu", "nn.crelu", ["@x_nhwc"], {}, ["@x_nhwc"]),
    ("crelu_axis1", "nn.crelu", ["@x_nhwc"], {"axis": 1}, ["@x_nhwc"]),
    ("silu", "nn.silu", ["@feat"], {}, ["@feat"]),
    ("swish_beta", "nn.swish", ["@feat", 0.6], {}, ["@feat"]),
    ("silu_beta_tensor", "nn.silu", ["@feat"], {"beta": "@beta"}, ["@feat", "@beta"]),
    # log_poisson_loss, with and without Stirling's term (0 <= z <= 1 left out)
    ("log_poisson", "nn.log_poisson_loss", ["@targets", "@log_in"], {},
     ["@targets", "@log_in"]),
    ("log_poisson_full", "nn.log_poisson_loss", ["@targets", "@log_in", True], {},
     ["@log_in"]),
    ("log_poisson_full_grads", "nn.log_poisson_loss", ["@targets_big", "@log_in"],
     {"compute_full_loss": True}, ["@targets_big", "@log_in"]),
    # moments helpers
    ("normalize_moments", "nn.normalize_moments", ["@count", "@mss", "@vss", "@shift3"], {},
     ["@count", "@mss", "@vss", "@shift3"]),
    ("normalize_moments_no_shift", "nn.normalize_moments", [12.0, "@mss", "@vss", None], {},
     ["@mss", "@vss"]),
    ("weighted_moments", "nn.weighted_moments", ["@feat", [0], "@fw"], {},
     ["@feat", "@fw"]),
    ("weighted_moments_keep", "nn.weighted_moments", ["@feat", [0, 1], "@fw_rows"],
     {"keep_dims": True}, ["@feat", "@fw_rows"]),
    # 1-D and 3-D pools: SAME / VALID, odd sizes and strides, channels first
    ("max_pool1d_same", "nn.max_pool1d", ["@seq", 3, 2, "SAME"], {}, ["@seq"]),
    ("max_pool1d_valid_ncw", "nn.max_pool1d", ["@ncw", [1, 1, 2], [1, 1, 3], "VALID"],
     {"data_format": "NCW"}, []),   # TF's CPU MaxPoolGrad is NHWC only
    ("max_pool1d_explicit", "nn.max_pool1d", ["@seq", 3, 2, [[0, 0], [1, 2], [0, 0]]], {},
     ["@seq"]),
    ("avg_pool1d_same", "nn.avg_pool1d", ["@seq", [4], [3], "SAME"], {}, ["@seq"]),
    ("avg_pool1d_valid_ncw", "nn.avg_pool1d", ["@ncw", 2, 2, "VALID", "NCW"], {}, ["@ncw"]),
    ("max_pool3d_same", "nn.max_pool3d", ["@vol", [1, 2, 3, 2, 1], [1, 2, 2, 3, 1], "SAME"],
     {}, ["@vol"]),
    ("max_pool3d_valid_first", "nn.max_pool3d", ["@vol_first", 2, [1, 2, 3], "VALID"],
     {"data_format": "NCDHW"}, []),   # TF's CPU MaxPool3DGrad is NDHWC only
    ("avg_pool3d_same", "nn.avg_pool3d", ["@vol", [3, 3, 2], 2, "SAME"], {}, ["@vol"]),
    ("avg_pool3d_valid_first", "nn.avg_pool3d", ["@vol_first", [1, 1, 2, 2, 3],
                                                 [1, 1, 1, 3, 2], "VALID", "NCDHW"], {},
     ["@vol_first"]),
    ("max_pool1d_ties", "nn.max_pool1d", ["@seq_ties", 3, 2, "SAME"], {}, ["@seq_ties"]),
    ("max_pool3d_ties", "nn.max_pool3d", ["@vol_ties", [1, 2, 3, 2, 1], [1, 2, 2, 1, 1],
                                          "SAME"], {}, ["@vol_ties"]),
    ("pool_max_3d_ties", "nn.pool", ["@vol_ties", [2, 2, 2], "MAX", "VALID"],
     {"dilation_rate": [1, 2, 1]}, ["@vol_ties"]),
    # conv3d
    ("conv3d_same", "nn.conv3d", ["@vol", "@w3d", [1, 2, 1, 2, 1], "SAME"], {},
     ["@vol", "@w3d"]),
    ("conv3d_valid", "nn.conv3d", ["@vol", "@w3d", [1, 1, 2, 3, 1], "VALID"], {},
     ["@vol", "@w3d"]),
    ("conv3d_first", "nn.conv3d", ["@vol_first", "@w3d_small", [1, 1, 2, 2, 1], "SAME"],
     {"data_format": "NCDHW"}, ["@vol_first", "@w3d_small"]),
    ("conv3d_dilated", "nn.conv3d", ["@vol", "@w3d_small"],
     {"strides": [1, 1, 1, 1, 1], "padding": "SAME", "dilations": [1, 2, 1, 2, 1]},
     ["@vol", "@w3d_small"]),
    # tf.nn.convolution: 1-3 spatial dims, dilation, channels first, two batch dims
    ("convolution_1d_dilated", "nn.convolution", ["@seq", "@w1d", "SAME"],
     {"dilation_rate": [2]}, ["@seq", "@w1d"]),
    ("convolution_2d_strided", "nn.convolution", ["@x_nhwc", "@w3x3_3_4", "VALID"],
     {"strides": [2, 2]}, ["@x_nhwc", "@w3x3_3_4"]),
    ("convolution_2d_nchw", "nn.convolution", ["@x_nchw", "@w3x3_3_4", "SAME"],
     {"strides": [2, 1], "data_format": "NCHW"}, ["@x_nchw", "@w3x3_3_4"]),
    ("convolution_2d_dilated", "nn.convolution", ["@x_nhwc", "@w2x2_3_2", "VALID"],
     {"dilation_rate": [2, 3]}, ["@x_nhwc", "@w2x2_3_2"]),
    ("convolution_3d_dilated", "nn.convolution", ["@vol", "@w3d", "SAME"],
     {"dilations": [2, 1, 2]}, ["@vol", "@w3d"]),
    ("convolution_batches", "nn.convolution", ["@x_batches", "@w3x3_3_4", "SAME"], {},
     ["@x_batches", "@w3x3_3_4"]),
    # tf.nn.pool
    ("pool_max_same", "nn.pool", ["@x_nhwc", [3, 3], "MAX", "SAME"], {"strides": [2, 2]},
     ["@x_nhwc"]),
    ("pool_avg_same_nchw", "nn.pool", ["@x_nchw", [2, 3], "AVG", "SAME"],
     {"strides": [2, 3], "data_format": "NCHW"}, ["@x_nchw"]),
    ("pool_avg_1d_dilated", "nn.pool", ["@seq", [3], "AVG", "VALID"],
     {"dilation_rate": [2]}, ["@seq"]),
    ("pool_max_3d_dilated", "nn.pool", ["@vol", [2, 2, 2], "MAX", "VALID", [2, 1, 3]], {},
     ["@vol"]),
    ("pool_max_1d_strided", "nn.pool", ["@seq", [3], "MAX", "VALID"], {"strides": [2]},
     ["@seq"]),
    # conv2d's backprops
    ("backprop_input_same", "nn.conv2d_backprop_input",
     [[2, 5, 6, 3], "@w3x3_3_4", "@dy_s2", [1, 2, 2, 1], "SAME"], {},
     ["@w3x3_3_4", "@dy_s2"]),
    ("backprop_input_valid", "nn.conv2d_backprop_input",
     [[2, 5, 6, 3], "@w3x3_3_4", "@dy_v2", [1, 2, 2, 1], "VALID"], {},
     ["@w3x3_3_4", "@dy_v2"]),
    ("backprop_input_nchw", "nn.conv2d_backprop_input", [[2, 3, 5, 6]],
     {"filter": "@w3x3_3_4", "out_backprop": "@dy_s2_nchw", "strides": [1, 1, 2, 2],
      "padding": "SAME", "data_format": "NCHW"}, ["@w3x3_3_4", "@dy_s2_nchw"]),
    ("backprop_filter_same", "nn.conv2d_backprop_filter",
     ["@x_nhwc", [3, 3, 3, 4], "@dy_s2", [1, 2, 2, 1], "SAME"], {}, ["@x_nhwc", "@dy_s2"]),
    ("backprop_filter_valid", "nn.conv2d_backprop_filter",
     ["@x_nhwc", [3, 3, 3, 4], "@dy_v2", [1, 2, 2, 1], "VALID"], {}, ["@x_nhwc", "@dy_v2"]),
    ("backprop_filter_dilated", "nn.conv2d_backprop_filter",
     ["@x_nhwc", [3, 3, 3, 4], "@dy_full", [1, 1, 1, 1], "SAME"],
     {"dilations": [1, 2, 2, 1]}, ["@x_nhwc", "@dy_full"]),
    ("backprop_filter_explicit", "nn.conv2d_backprop_filter",
     ["@x_nhwc", [3, 3, 3, 4], "@dy_explicit", [1, 2, 2, 1],
      [[0, 0], [1, 0], [2, 1], [0, 0]]], {}, ["@x_nhwc", "@dy_explicit"]),
    ("backprop_filter_nchw", "nn.conv2d_backprop_filter",
     ["@x_nchw", [3, 3, 3, 4], "@dy_s2_nchw", [1, 1, 2, 2], "SAME"],
     {"data_format": "NCHW"}, ["@x_nchw", "@dy_s2_nchw"]),
    # max_pool_with_argmax: TF's flattened (y * W + x) * C + c index
    ("argmax_same", "nn.max_pool_with_argmax", ["@x_nhwc", [1, 3, 3, 1], [1, 2, 2, 1],
                                                "SAME"], {}, ["@x_nhwc"]),
    ("argmax_valid_batch", "nn.max_pool_with_argmax",
     ["@x_nhwc", [1, 2, 3, 1], [1, 2, 1, 1], "VALID"], {"include_batch_in_index": True},
     ["@x_nhwc"]),
    ("argmax_int32", "nn.max_pool_with_argmax", ["@x_nhwc", [1, 2, 2, 1], [1, 2, 2, 1],
                                                 "SAME"], {"output_dtype": "int32"},
     []),   # TF's CPU has no int32 MaxPoolGradWithArgmax
    ("argmax_ties", "nn.max_pool_with_argmax", ["@x_ties", [1, 3, 3, 1], [1, 2, 2, 1],
                                                "SAME"], {}, ["@x_ties"]),
    # morphology
    ("dilation_same", "nn.dilation2d", ["@x_nhwc", "@mfilt", [1, 1, 1, 1], [1, 1, 1, 1],
                                        "SAME"], {}, ["@x_nhwc", "@mfilt"]),
    ("dilation_valid_strided", "nn.dilation2d", ["@x_nhwc", "@mfilt", [1, 2, 2, 1],
                                                 [1, 1, 1, 1], "VALID"], {},
     ["@x_nhwc", "@mfilt"]),
    ("dilation_rates", "nn.dilation2d", ["@x_nhwc"],
     {"filters": "@mfilt", "strides": [1, 1, 1, 1], "dilations": [1, 2, 1, 1],
      "padding": "SAME"}, ["@x_nhwc", "@mfilt"]),
    ("dilation_ties", "nn.dilation2d", ["@x_ties", "@mfilt_ties", [1, 1, 1, 1],
                                        [1, 1, 1, 1], "SAME"], {},
     ["@x_ties", "@mfilt_ties"]),
    ("erosion_ties", "nn.erosion2d", ["@x_ties", "@mfilt_ties", [1, 1, 1, 1],
                                      [1, 2, 1, 1], "SAME"], {}, ["@x_ties", "@mfilt_ties"]),
    ("erosion_same", "nn.erosion2d", ["@x_nhwc", "@mfilt", [1, 2, 1, 1], [1, 1, 1, 1],
                                      "SAME"], {}, ["@x_nhwc", "@mfilt"]),
    ("erosion_rates_valid", "nn.erosion2d", ["@x_nhwc", "@mfilt", [1, 1, 1, 1],
                                             [1, 1, 2, 1], "VALID"], {},
     ["@x_nhwc", "@mfilt"]),
]

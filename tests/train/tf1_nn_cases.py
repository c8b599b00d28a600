"""The og.nn (and og.layers-free) cases checked against TensorFlow's tf.compat.v1:
shared by tests/train/test_nn_extra.py and tools/record_tf1_reference.py (which needs
tensorflow; the test does not).

A case is (name, function path under tf.compat.v1 / og, positional arguments, keyword
arguments, inputs to differentiate). An argument "@key" stands for the input array
`key` of `make_inputs()`; gradients are of sum(output * R) for a fixed random R
(stored with the outputs), taken with respect to the listed "@key" inputs.
"""

import numpy as np


def make_inputs() -> dict:
    """The named input arrays (fixed seed)."""
    rng = np.random.RandomState(20261203)
    f32 = lambda *s: rng.randn(*s).astype(np.float32)  # noqa: E731
    return {
        "x5x6": f32(2, 5, 6, 3),
        "x4x4": f32(1, 4, 4, 2),
        "x7x3": f32(2, 7, 3, 4),
        "nchw": f32(2, 3, 5, 6),
        "w3x3_7_3": f32(3, 3, 7, 3),
        "w2x2_5_2": f32(2, 2, 5, 2),
        "w4x1_3_4": f32(4, 1, 3, 4),
        "w3x3_3_2": f32(3, 3, 3, 2),
        "w1x1_6_5": f32(1, 1, 6, 5),
        "w3x3_3_4": f32(3, 3, 3, 4),
        "seq": f32(2, 9, 3),
        "ncw": f32(2, 3, 9),
        "w3_3_5": f32(3, 3, 5),
        "blocks": f32(2, 4, 6, 3),
        "deep": f32(2, 2, 3, 12),
        "logits": np.array([[0.0, 1.5, -2.0, 30.0], [-40.0, 0.25, 3.0, -0.5]], np.float32),
        "targets": np.array([[1.0, 0.0, 0.3, 1.0], [0.0, 1.0, 0.7, 0.0]], np.float32),
        "lrn_in": f32(2, 3, 4, 9),
    }


CASES = [
    # conv2d_transpose: SAME/VALID, strides, odd sizes, output_padding, NCHW, dilations
    ("tconv_same_s2", "nn.conv2d_transpose", ["@x5x6", "@w3x3_7_3", [2, 10, 12, 7],
                                              [1, 2, 2, 1]], {}, ["@x5x6", "@w3x3_7_3"]),
    ("tconv_same_s2_odd", "nn.conv2d_transpose", ["@x5x6", "@w3x3_7_3", [2, 9, 11, 7],
                                                  [1, 2, 2, 1]], {}, ["@x5x6", "@w3x3_7_3"]),
    ("tconv_valid_s2", "nn.conv2d_transpose", ["@x5x6", "@w3x3_7_3", [2, 11, 13, 7],
                                               [1, 2, 2, 1]], {"padding": "VALID"},
     ["@x5x6", "@w3x3_7_3"]),
    ("tconv_valid_outpad", "nn.conv2d_transpose", ["@x4x4", "@w2x2_5_2", [1, 13, 12, 5],
                                                   [1, 3, 3, 1]], {"padding": "VALID"},
     ["@x4x4", "@w2x2_5_2"]),
    ("tconv_same_s3", "nn.conv2d_transpose", ["@x4x4", "@w2x2_5_2", [1, 12, 11, 5],
                                              [1, 3, 3, 1]], {}, ["@x4x4"]),
    ("tconv_rect", "nn.conv2d_transpose", ["@x7x3", "@w4x1_3_4", [2, 14, 3, 3],
                                           [1, 2, 1, 1]], {}, ["@x7x3", "@w4x1_3_4"]),
    ("tconv_stride1", "nn.conv2d_transpose", ["@x5x6", "@w3x3_7_3", [2, 5, 6, 7],
                                              [1, 1, 1, 1]], {}, ["@x5x6"]),
    ("tconv_dilated", "nn.conv2d_transpose", ["@x5x6", "@w3x3_7_3", [2, 5, 6, 7],
                                              [1, 1, 1, 1]], {"dilations": [1, 2, 2, 1]},
     ["@x5x6", "@w3x3_7_3"]),
    # separable, atrous, 1-D
    ("separable", "nn.separable_conv2d", ["@x5x6", "@w3x3_3_2", "@w1x1_6_5", [1, 1, 1, 1],
                                          "SAME"], {}, ["@x5x6", "@w3x3_3_2", "@w1x1_6_5"]),
    ("separable_s2_valid", "nn.separable_conv2d", ["@x5x6", "@w3x3_3_2", "@w1x1_6_5",
                                                   [1, 2, 2, 1], "VALID"], {}, ["@x5x6"]),
    ("atrous_same", "nn.atrous_conv2d", ["@x5x6", "@w3x3_3_4", 2, "SAME"], {},
     ["@x5x6", "@w3x3_3_4"]),
    ("atrous_valid", "nn.atrous_conv2d", ["@x5x6", "@w3x3_3_4", 2, "VALID"], {},
     ["@x5x6"]),
    ("conv1d_same_s2", "nn.conv1d", ["@seq", "@w3_3_5", 2, "SAME"], {}, ["@seq", "@w3_3_5"]),
    ("conv1d_valid", "nn.conv1d", ["@seq", "@w3_3_5", 1, "VALID"], {}, ["@seq"]),
    # lrn: TF's alpha is per element of the window sum
    ("lrn_default", "nn.lrn", ["@lrn_in"], {}, ["@lrn_in"]),
    ("lrn_radius2", "nn.local_response_normalization", ["@lrn_in"],
     {"depth_radius": 2, "bias": 2.0, "alpha": 1e-2, "beta": 0.75}, ["@lrn_in"]),
    ("lrn_radius0", "nn.lrn", ["@lrn_in", 0, 1.5, 0.3, 0.6], {}, ["@lrn_in"]),
    # space/depth
    ("space_to_depth", "space_to_depth", ["@blocks", 2], {}, ["@blocks"]),
    ("depth_to_space", "depth_to_space", ["@deep", 2], {}, ["@deep"]),
    # losses
    ("weighted_ce", "nn.weighted_cross_entropy_with_logits", [],
     {"labels": "@targets", "logits": "@logits", "pos_weight": 3.0},
     ["@logits", "@targets"]),
    ("weighted_ce_small", "nn.weighted_cross_entropy_with_logits", [],
     {"labels": "@targets", "logits": "@logits", "pos_weight": 0.25}, ["@logits"]),
]

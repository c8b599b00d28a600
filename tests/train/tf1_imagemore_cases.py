"""og.image's colour, measure and box functions checked against TensorFlow's
tf.compat.v1.image: shared by tests/train/test_image_more.py and
tools/record_tf1_reference.py imagemore (which needs tensorflow; the test does not).

A case is (name, function path under tf.compat.v1 / og, positional arguments, keyword
arguments, inputs to differentiate); "@key" stands for make_inputs()[key] (see
tf1_nn_cases.py).
"""

import numpy as np


def _special_pixels() -> np.ndarray:
    """RGB pixels on the HSV formulas' edges: black, greys, white, pure and tied
    primaries, each sector of the hue circle, a channel at 0 and one at 1."""
    rows = [[0, 0, 0], [0.5, 0.5, 0.5], [1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1],
            [1, 1, 0], [0, 1, 1], [1, 0, 1], [0.8, 0.8, 0.2], [0.2, 0.8, 0.8],
            [0.8, 0.2, 0.8], [0.9, 0.3, 0.1], [0.3, 0.9, 0.1], [0.1, 0.3, 0.9],
            [0.1, 0.9, 0.3], [0.9, 0.1, 0.3], [0.3, 0.1, 0.9], [0.25, 0.0, 1e-7],
            [1e-6, 2e-6, 3e-6], [0.4, 0.4, 0.6], [0.6, 0.4, 0.4], [0.4, 0.6, 0.4],
            [0.0, 0.0, 1e-30]]
    return np.asarray(rows, np.float32).reshape(1, 4, 6, 3)


def make_inputs() -> dict:
    """The named input arrays (fixed seed)."""
    rng = np.random.RandomState(20261204)
    boxes = rng.rand(24, 4).astype(np.float32)
    boxes[:, 2:] = boxes[:, :2] + rng.rand(24, 2).astype(np.float32) * 0.4
    boxes[3] = boxes[3, [2, 3, 0, 1]]           # corners given the other way round
    boxes[7] = boxes[6] + 0.01                   # a near-duplicate
    scores = rng.rand(24).astype(np.float32)
    scores[9] = scores[4]                        # a tie
    big = rng.rand(2, 16, 18, 3).astype(np.float32)
    noisy = np.clip(big + rng.randn(*big.shape).astype(np.float32) * 0.1, 0, 1)
    return {
        "rgb": rng.rand(2, 5, 7, 3).astype(np.float32),
        "rgb_b": rng.rand(2, 5, 7, 3).astype(np.float32),
        "rgb3": rng.rand(6, 4, 3).astype(np.float32),
        "special": _special_pixels(),
        "hsv": rng.rand(2, 4, 5, 3).astype(np.float32),
        "u8": rng.randint(0, 256, (2, 6, 5, 3)).astype(np.uint8),
        "f16": rng.rand(2, 3, 4, 3).astype(np.float16),
        "f64": rng.rand(3, 4, 3),
        "i16": rng.randint(0, 32768, (2, 3, 4, 3)).astype(np.int16),
        "big": big,
        "big_noisy": noisy.astype(np.float32),
        "big_u8": rng.randint(0, 256, (1, 13, 12, 2)).astype(np.uint8),
        "big_u8b": rng.randint(0, 256, (1, 13, 12, 2)).astype(np.uint8),
        "grey4": rng.rand(2, 6, 5, 1).astype(np.float32),
        "delta": np.float32(0.27),
        "boxes": boxes,
        "scores": scores,
        "crop_boxes": np.asarray([[0.0, 0.0, 1.0, 1.0], [0.1, 0.2, 0.7, 0.9],
                                  [0.8, 0.9, 0.2, 0.1], [-0.2, 0.3, 0.6, 1.4],
                                  [0.5, 0.5, 0.5, 0.5], [0.33, 0.1, 0.34, 0.95]],
                                 np.float32),
        "crop_ind": np.asarray([0, 1, 1, 0, 1, 0], np.int32),
    }


CASES = [
    # HSV round trips, on random pixels (differentiated) and on the formulas' edges
    ("rgb_to_hsv", "image.rgb_to_hsv", ["@rgb"], {}, ["@rgb"]),
    ("rgb_to_hsv_3d", "image.rgb_to_hsv", ["@rgb3"], {}, []),
    ("rgb_to_hsv_special", "image.rgb_to_hsv", ["@special"], {}, []),
    ("rgb_to_hsv_f64", "image.rgb_to_hsv", ["@f64"], {}, []),
    ("rgb_to_hsv_f16", "image.rgb_to_hsv", ["@f16"], {}, []),
    ("hsv_to_rgb", "image.hsv_to_rgb", ["@hsv"], {}, ["@hsv"]),
    ("hsv_to_rgb_f64", "image.hsv_to_rgb", ["@f64"], {}, []),
    # hue and saturation: both signs, whole turns, integer and half-precision images
    ("hue_pos", "image.adjust_hue", ["@rgb", 0.3], {}, []),  # TF has no gradient
    ("hue_neg", "image.adjust_hue", ["@rgb", -0.45], {}, []),
    ("hue_full_turn", "image.adjust_hue", ["@rgb3", 1.0], {}, []),
    ("hue_special", "image.adjust_hue", ["@special", 0.2], {}, []),
    ("hue_tensor", "image.adjust_hue", ["@rgb", "@delta"], {}, []),
    ("hue_u8", "image.adjust_hue", ["@u8", 0.15], {}, []),
    ("hue_f64", "image.adjust_hue", ["@f64", 0.6], {}, []),
    ("saturation_up", "image.adjust_saturation", ["@rgb", 1.8], {}, []),  # nor here
    ("saturation_down", "image.adjust_saturation", ["@rgb3", 0.4], {}, []),
    ("saturation_zero", "image.adjust_saturation", ["@rgb", 0.0], {}, []),
    ("saturation_clip", "image.adjust_saturation", ["@special", 12.0], {}, []),
    ("saturation_u8", "image.adjust_saturation", ["@u8", 2.5], {}, []),
    # gamma: float images as they are, integer ones scaled and saturated back
    ("gamma", "image.adjust_gamma", ["@rgb"], {"gamma": 2.2, "gain": 1.1}, ["@rgb"]),
    ("gamma_default", "image.adjust_gamma", ["@rgb3"], {}, []),
    ("gamma_u8_saturates", "image.adjust_gamma", ["@u8"], {"gamma": 0.5, "gain": 1.7},
     []),
    ("gamma_i16", "image.adjust_gamma", ["@i16"], {"gamma": 1.5}, []),
    ("gamma_f16", "image.adjust_gamma", ["@f16"], {"gamma": 0.8, "gain": 0.9}, []),
    ("gamma_zero", "image.adjust_gamma", ["@rgb"], {"gamma": 0}, []),
    # colour-space matrices
    ("rgb_to_yiq", "image.rgb_to_yiq", ["@rgb"], {}, ["@rgb"]),
    ("yiq_to_rgb", "image.yiq_to_rgb", ["@hsv"], {}, []),
    ("rgb_to_yuv", "image.rgb_to_yuv", ["@rgb3"], {}, []),
    ("yuv_to_rgb", "image.yuv_to_rgb", ["@f64"], {}, []),
    # measures
    ("total_variation_4d", "image.total_variation", ["@rgb"], {}, ["@rgb"]),
    ("total_variation_3d", "image.total_variation", ["@rgb3"], {}, ["@rgb3"]),
    ("image_gradients", "image.image_gradients", ["@rgb"], {}, ["@rgb"]),
    ("sobel_edges", "image.sobel_edges", ["@rgb"], {}, ["@rgb"]),
    ("sobel_edges_grey", "image.sobel_edges", ["@grey4"], {}, []),
    ("psnr", "image.psnr", ["@big", "@big_noisy", 1.0], {}, ["@big"]),
    ("psnr_u8", "image.psnr", ["@big_u8", "@big_u8b", 255], {}, []),
    ("ssim", "image.ssim", ["@big", "@big_noisy", 1.0], {}, ["@big", "@big_noisy"]),
    ("ssim_small_window", "image.ssim", ["@rgb", "@rgb_b", 1.0],
     {"filter_size": 3, "filter_sigma": 0.8}, []),
    ("ssim_u8", "image.ssim", ["@big_u8", "@big_u8b", 255], {"filter_size": 7}, []),
    ("ssim_map", "image.ssim", ["@big", "@big_noisy", 1.0],
     {"filter_size": 5, "k1": 0.02, "k2": 0.05, "return_index_map": True}, []),
    # boxes
    ("nms", "image.non_max_suppression", ["@boxes", "@scores", 10], {}, []),
    ("nms_tight", "image.non_max_suppression", ["@boxes", "@scores", 24],
     {"iou_threshold": 0.1}, []),
    ("nms_score_threshold", "image.non_max_suppression", ["@boxes", "@scores", 24],
     {"iou_threshold": 0.3, "score_threshold": 0.45}, []),
    ("nms_keep_all", "image.non_max_suppression", ["@boxes", "@scores", 24],
     {"iou_threshold": 1.0}, []),
    ("nms_none", "image.non_max_suppression", ["@boxes", "@scores", 0], {}, []),
    ("crop_bilinear", "image.crop_and_resize",
     ["@rgb", "@crop_boxes", "@crop_ind", [4, 5]], {}, ["@rgb", "@crop_boxes"]),
    ("crop_nearest", "image.crop_and_resize",
     ["@rgb", "@crop_boxes", "@crop_ind", [3, 6]], {"method": "nearest"}, []),
    ("crop_extrapolate", "image.crop_and_resize",
     ["@rgb", "@crop_boxes", "@crop_ind", [5, 3]], {"extrapolation_value": -2.5}, []),
    ("crop_one_pixel", "image.crop_and_resize",
     ["@rgb", "@crop_boxes", "@crop_ind", [1, 1]], {}, []),
    ("crop_u8", "image.crop_and_resize",
     ["@u8", "@crop_boxes", "@crop_ind", [7, 2]], {}, []),
]

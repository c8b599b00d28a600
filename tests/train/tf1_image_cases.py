"""The og.image cases checked against TensorFlow's tf.compat.v1.image: shared by the
test (tests/train/test_image.py) and the script that records TensorFlow's outputs
(tools/record_tf1_reference.py image, which needs tensorflow; the test does not).

Each case is (name, function, input, keyword arguments); inputs are made by
`make_inputs` from a fixed seed and stored with the outputs, so the test reads the
very arrays TensorFlow saw.
"""

import numpy as np


def make_inputs() -> dict:
    """The named input images (NHWC batches, single HWC images, several dtypes)."""
    rng = np.random.RandomState(20261202)
    return {
        "img4": rng.rand(2, 5, 7, 3).astype(np.float32),
        "img3": rng.rand(6, 4, 3).astype(np.float32),
        "tall": rng.rand(1, 13, 3, 2).astype(np.float32),
        "u8": rng.randint(0, 256, (2, 6, 5, 3)).astype(np.uint8),
        "i16": rng.randint(-32768, 32768, (3, 4, 2)).astype(np.int16),
        "wide": (rng.rand(2, 3, 4, 3) * 2.0 - 0.5).astype(np.float32),
        "f64": rng.rand(4, 5, 3),
        "gray": rng.rand(5, 7, 1).astype(np.float32),
        "flat": np.full((3, 3, 2), 0.25, np.float32),
    }


CASES = [
    # resizes: every method x coordinate mapping, up and down, odd ratios
    ("bilinear_up", "resize_bilinear", "img4", {"size": [9, 11]}),
    ("bilinear_down", "resize_bilinear", "img4", {"size": [3, 4]}),
    ("bilinear_align", "resize_bilinear", "img4", {"size": [9, 4], "align_corners": True}),
    ("bilinear_half", "resize_bilinear", "img4",
     {"size": [8, 10], "half_pixel_centers": True}),
    ("bilinear_half_down", "resize_bilinear", "tall",
     {"size": [4, 2], "half_pixel_centers": True}),
    ("bilinear_uint8", "resize_bilinear", "u8", {"size": [7, 9]}),
    ("nearest_up", "resize_nearest_neighbor", "img4", {"size": [9, 11]}),
    ("nearest_down", "resize_nearest_neighbor", "tall", {"size": [5, 2]}),
    ("nearest_align", "resize_nearest_neighbor", "img4",
     {"size": [9, 12], "align_corners": True}),
    ("nearest_half", "resize_nearest_neighbor", "img4",
     {"size": [8, 10], "half_pixel_centers": True}),
    ("nearest_half_down", "resize_nearest_neighbor", "tall",
     {"size": [6, 2], "half_pixel_centers": True}),
    ("nearest_uint8", "resize_nearest_neighbor", "u8", {"size": [4, 8]}),
    ("bicubic_up", "resize_bicubic", "img4", {"size": [9, 11]}),
    ("bicubic_down", "resize_bicubic", "tall", {"size": [5, 2]}),
    ("bicubic_align", "resize_bicubic", "img4", {"size": [9, 4], "align_corners": True}),
    ("bicubic_half", "resize_bicubic", "img4", {"size": [8, 10], "half_pixel_centers": True}),
    ("bicubic_half_down", "resize_bicubic", "tall",
     {"size": [4, 2], "half_pixel_centers": True}),
    ("images_bilinear3d", "resize_images", "img3", {"size": [3, 7]}),
    ("images_nearest_u8", "resize_images", "u8", {"size": [12, 3], "method": 1}),
    ("images_bicubic", "resize_images", "img4", {"size": [6, 6], "method": 2}),
    ("images_aspect", "resize_images", "img4", {"size": [10, 10],
                                                "preserve_aspect_ratio": True}),
    ("images_aspect_tall", "resize_images", "tall", {"size": [6, 6],
                                                     "preserve_aspect_ratio": True}),
    ("images_same", "resize_images", "u8", {"size": [6, 5]}),
    # geometry
    ("flip_lr4", "flip_left_right", "img4", {}),
    ("flip_lr3", "flip_left_right", "img3", {}),
    ("flip_ud4", "flip_up_down", "img4", {}),
    ("flip_ud3", "flip_up_down", "img3", {}),
    ("transpose4", "transpose", "img4", {}),
    ("transpose3", "transpose", "img3", {}),
    ("rot90_1", "rot90", "img4", {"k": 1}),
    ("rot90_2", "rot90", "img3", {"k": 2}),
    ("rot90_3", "rot90", "img4", {"k": 3}),
    ("rot90_neg", "rot90", "img3", {"k": -1}),
    ("rot90_5", "rot90", "img3", {"k": 5}),
    ("crop4", "crop_to_bounding_box", "img4", {"offset_height": 1, "offset_width": 2,
                                              "target_height": 3, "target_width": 4}),
    ("crop3", "crop_to_bounding_box", "img3", {"offset_height": 0, "offset_width": 1,
                                              "target_height": 6, "target_width": 2}),
    ("pad4", "pad_to_bounding_box", "img4", {"offset_height": 2, "offset_width": 0,
                                            "target_height": 8, "target_width": 9}),
    ("pad3_u8", "pad_to_bounding_box", "u8", {"offset_height": 1, "offset_width": 3,
                                             "target_height": 7, "target_width": 8}),
    ("crop_or_pad_mixed", "resize_image_with_crop_or_pad", "img4",
     {"target_height": 8, "target_width": 4}),
    ("crop_or_pad_odd", "resize_image_with_crop_or_pad", "img3",
     {"target_height": 3, "target_width": 7}),
    ("crop_or_pad_same", "resize_image_with_crop_or_pad", "img3",
     {"target_height": 6, "target_width": 4}),
    ("central_half", "central_crop", "img4", {"central_fraction": 0.5}),
    ("central_odd", "central_crop", "tall", {"central_fraction": 0.33}),
    ("central_3d", "central_crop", "img3", {"central_fraction": 0.7}),
    ("central_all", "central_crop", "img3", {"central_fraction": 1.0}),
    # colour and dtype
    ("gray_f", "rgb_to_grayscale", "img4", {}),
    ("gray_u8", "rgb_to_grayscale", "u8", {}),
    ("rgb_from_gray", "grayscale_to_rgb", "gray", {}),
    ("u8_to_f", "convert_image_dtype", "u8", {"dtype": "float32"}),
    ("u8_to_f64", "convert_image_dtype", "u8", {"dtype": "float64"}),
    ("f_to_u8", "convert_image_dtype", "img4", {"dtype": "uint8"}),
    ("f_to_u8_sat", "convert_image_dtype", "wide", {"dtype": "uint8", "saturate": True}),
    ("f_to_i16_sat", "convert_image_dtype", "wide", {"dtype": "int16", "saturate": True}),
    ("f_to_i32_sat", "convert_image_dtype", "wide", {"dtype": "int32", "saturate": True}),
    ("f_to_f16", "convert_image_dtype", "img4", {"dtype": "float16"}),
    ("u8_to_i16", "convert_image_dtype", "u8", {"dtype": "int16"}),
    ("u8_to_i32", "convert_image_dtype", "u8", {"dtype": "int32"}),
    ("i16_to_u8", "convert_image_dtype", "i16", {"dtype": "uint8"}),
    ("i16_to_u8_sat", "convert_image_dtype", "i16", {"dtype": "uint8", "saturate": True}),
    ("i16_to_i8", "convert_image_dtype", "i16", {"dtype": "int8"}),
    ("i16_to_f", "convert_image_dtype", "i16", {"dtype": "float32"}),
    ("f64_to_u16", "convert_image_dtype", "f64", {"dtype": "uint16"}),
    ("bright_f", "adjust_brightness", "img4", {"delta": 0.3}),
    ("bright_u8", "adjust_brightness", "u8", {"delta": -0.2}),
    ("bright_f64", "adjust_brightness", "f64", {"delta": 0.1}),
    ("contrast_f", "adjust_contrast", "img4", {"contrast_factor": 1.7}),
    ("contrast_u8", "adjust_contrast", "u8", {"contrast_factor": 2.5}),
    ("contrast_3d", "adjust_contrast", "img3", {"contrast_factor": 0.4}),
    ("standardize4", "per_image_standardization", "img4", {}),
    ("standardize_u8", "per_image_standardization", "u8", {}),
    ("standardize_flat", "per_image_standardization", "flat", {}),
]

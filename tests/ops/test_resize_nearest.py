"""Resize mode=nearest at fractional scales, against onnxruntime and the ONNX reference.

Source coordinates that are whole pixels in exact arithmetic must pick that pixel under
ceil/floor rounding even when float64 evaluation lands an ulp off. Where onnxruntime and
the ONNX reference evaluator agree, onegraph must give the same indices (the two differ
elsewhere: onnxruntime rounds float32 coordinates and output sizes its own way).
"""

import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402

from .single_node import one_node_model, run_onnxruntime  # noqa: E402


def _resize_model(length, scale, ctm, nearest_mode):
    return one_node_model(
        "Resize", [("x", TensorProto.FLOAT, [1, 1, 1, length]), ("", None, None)],
        initializers={"scales": np.array([1, 1, 1, scale], np.float32)}, mode="nearest",
        coordinate_transformation_mode=ctm, nearest_mode=nearest_mode)


def _three_ways(model, x):
    want_ort = run_onnxruntime(model, {"x": x}).ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want_ref = ReferenceEvaluator(model).run(None, {"x": x})[0].ravel()
    got = onegraph.Session(from_onnx(model)).run(["y"], {"x": x})[0].ravel()
    return want_ort, want_ref, got


def test_half_pixel_symmetric_whole_pixel_coordinate_takes_that_pixel():
    # 9 pixels at scale 0.5 -> 4; output 0's source is exactly 1.0 (offset 0.5 + 1 - 0.5)
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 1, 9)
    want_ort, want_ref, got = _three_ways(
        _resize_model(9, 0.5, "half_pixel_symmetric", "ceil"), x)
    np.testing.assert_array_equal(want_ort, [1, 3, 5, 7])
    np.testing.assert_array_equal(want_ref, [1, 3, 5, 7])
    np.testing.assert_array_equal(got, [1, 3, 5, 7])


@pytest.mark.parametrize("ctm", ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                 "align_corners", "asymmetric"])
@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil",
                                          "floor", "ceil"])
def test_matches_where_onnxruntime_and_reference_agree(ctm, nearest_mode):
    compared = 0
    for length in (3, 5, 7, 9, 11):
        for scale in (0.3, 0.5, 0.6, 0.75, 1.5, 2.5, 4 / 3):
            x = np.arange(length, dtype=np.float32).reshape(1, 1, 1, length)
            want_ort, want_ref, got = _three_ways(
                _resize_model(length, scale, ctm, nearest_mode), x)
            if want_ort.shape != want_ref.shape or (want_ort != want_ref).any():
                continue
            compared += 1
            np.testing.assert_array_equal(
                got, want_ort, err_msg=f"{ctm} {nearest_mode} length {length} scale {scale}")
    # align_corners agrees least (onnxruntime divides by the whole output length, the
    # reference by the fractional one) but still leaves several real comparisons
    assert compared >= 4


@pytest.mark.parametrize("shape,scales", [
    ((1, 20, 5, 7), [1, 1, 2, 3]),          # upsampling two axes of 20 planes: one gather
    ((2, 8, 6, 5), [1, 1, 2.5, 1.6]),       # fractional upsampling, 16 planes
    ((1, 4, 3, 4, 5), [1, 4, 2, 2, 3]),     # three adjacent axes after 4 planes
    ((2, 16, 9, 8), [1, 1, 0.5, 2]),        # one axis shrinks, one grows (take per axis)
    ((1, 18, 6, 7), [1, 2, 1, 2]),          # resized axes not adjacent
    ((1, 3, 8, 8), [1, 1, 2, 2]),           # few planes: take per axis
    ((3, 17, 4), [1, 1, 3]),                # one axis only
])
@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "floor"])
def test_multi_axis_nearest_matches_onnxruntime(shape, scales, nearest_mode):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    model = one_node_model(
        "Resize", [("x", TensorProto.FLOAT, list(shape)), ("", None, None)],
        initializers={"scales": np.array(scales, np.float32)}, mode="nearest",
        coordinate_transformation_mode="asymmetric", nearest_mode=nearest_mode)
    want = run_onnxruntime(model, {"x": x})
    got = onegraph.Session(from_onnx(model)).run(["y"], {"x": x})[0]
    assert got.shape == want.shape and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)

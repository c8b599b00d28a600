"""Resize linear/cubic on both of its paths (short axes, <= 512 values, as a GEMM with
the dense interpolation matrix; longer ones gathering per tap), against the ONNX
reference evaluator (tightly) and onnxruntime (which computes coordinates in float32:
up to 1.3e-4 off on 600-pixel axes)."""

import itertools

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402

from .single_node import one_node_model, run_onnxruntime  # noqa: E402

_ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.uint8: TensorProto.UINT8}


def _model(shape, scales, dtype, **attrs):
    return one_node_model(
        "Resize", [("x", _ONNX_TYPE[dtype], shape), ("", None, None)],
        output_type=_ONNX_TYPE[dtype],
        initializers={"scales": np.array(scales, np.float32)}, **attrs)


@pytest.mark.parametrize("shape,scales", [
    ((1, 3, 28, 28), (1, 1, 8, 8)),         # dense both axes (a segmentation head)
    ((1, 2, 600, 40), (1, 1, 1.5, 0.5)),    # gathered (600 > 512) then dense
    ((1, 2, 37, 700), (1, 1, 0.4, 0.3)),    # dense then gathered, downsampling
])
@pytest.mark.parametrize("mode,ctm,extra", [
    ("linear", "half_pixel", {}),
    ("linear", "align_corners", {}),
    ("linear", "pytorch_half_pixel", {"antialias": 1}),
    ("cubic", "half_pixel", {"cubic_coeff_a": -0.5}),
    ("cubic", "asymmetric", {"exclude_outside": 1}),
])
def test_float32_matches_onnxruntime(shape, scales, mode, ctm, extra):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    model = _model(shape, scales, np.float32, mode=mode,
                   coordinate_transformation_mode=ctm, **extra)
    want = run_onnxruntime(model, {"x": x})
    reference = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = onegraph.Session(from_onnx(model)).run(["y"], {"x": x})[0]
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=5e-4)
    fractional = any(n * s % 1 for n, s in zip(shape, scales))
    if not (ctm == "align_corners" and fractional):
        # align_corners over a fractional output length (37 * 0.4 = 14.8): the reference
        # divides by 13.8; onnxruntime, PyTorch and onegraph by the whole length minus
        # one (13), as the spec's text says
        np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode,scales", list(itertools.product(
    ["linear", "cubic"], [(1, 1, 2, 2), (1, 1, 0.5, 0.75)])))
def test_uint8_rounds_and_saturates(mode, scales):
    x = np.random.default_rng(2).integers(0, 256, (1, 3, 20, 24), dtype=np.uint8)
    got = onegraph.Session(from_onnx(_model(x.shape, scales, np.uint8, mode=mode))).run(
        ["y"], {"x": x})[0]
    # oracle: the reference evaluator on the same image in float32, rounded and
    # saturated (cubic overshoots past 0 and 255; onnxruntime has no uint8 cubic)
    as_float = _model(x.shape, scales, np.float32, mode=mode)
    want = ReferenceEvaluator(as_float).run(None, {"x": x.astype(np.float32)})[0]
    want = np.clip(np.rint(want), 0, 255)
    assert got.dtype == np.uint8 and got.shape == want.shape
    # a value at .5 may round either way after float rounding
    assert np.abs(got.astype(float) - want).max() <= 1
    if mode == "linear":
        ort_got = run_onnxruntime(_model(x.shape, scales, np.uint8, mode=mode), {"x": x})
        assert np.abs(got.astype(int) - ort_got.astype(int)).max() <= 1


@pytest.mark.parametrize("mode", ["linear", "cubic", "nearest"])
def test_align_corners_with_fractional_scales_matches_onnxruntime(mode):
    """torch.onnx.export of F.interpolate(x, scale_factor=2.5, align_corners=True): the
    output's corner samples are the input's corners (0 and 24 here)."""
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    model = one_node_model("Resize", [("x", TensorProto.FLOAT, [1, 1, 5, 5]),
                                      ("", None, None)],
                           initializers={"scales": np.array([1, 1, 2.5, 2.5], np.float32)},
                           mode=mode, coordinate_transformation_mode="align_corners")
    got = onegraph.Session(from_onnx(model)).run(["y"], {"x": x})[0]
    assert got.shape == (1, 1, 12, 12)
    assert got[0, 0, 0, 0] == 0 and abs(got[0, 0, -1, -1] - 24) < 1e-5
    np.testing.assert_allclose(got, run_onnxruntime(model, {"x": x}), rtol=1e-5, atol=1e-5)


def test_tf_crop_and_resize_with_fractional_scales_matches_onnxruntime():
    """5 x 0.7 = 3.5 gives 3 outputs: the crop's samples are spaced over the whole
    length minus one, as the spec's length_resized (the reference's fractional length
    gave 5.76 where onnxruntime gives 6)."""
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    model = one_node_model(
        "Resize", [("x", TensorProto.FLOAT, [1, 1, 5, 5])],
        initializers={"roi": np.array([0, 0, .2, .2, 1, 1, .8, .8], np.float32),
                      "scales": np.array([1, 1, .7, .7], np.float32)},
        mode="linear", coordinate_transformation_mode="tf_crop_and_resize")
    got = onegraph.Session(from_onnx(model)).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(got, run_onnxruntime(model, {"x": x}), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[0, 0, 0], [4.8, 6.0, 7.2], rtol=1e-6)

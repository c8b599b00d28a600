"""og.image's colour (HSV, YIQ, YUV, hue, saturation, gamma), measure (total
variation, gradients, Sobel, PSNR, SSIM) and box (non_max_suppression, crop_and_resize)
functions against TensorFlow's outputs and gradients, recorded in
data/tf1_imagemore_reference.npz by `tools/record_tf1_reference.py imagemore`
(TensorFlow 2.21's tf.compat.v1); gradients TF does not define by central
differences; errors; exports."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ExecutionError, ShapeError

from . import tf1_reference
from .gradcheck import check_op_gradients
from .tf1_imagemore_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("imagemore")


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow_values_and_gradients(reference, case):
    # TF rounds each float16 step to half precision; onegraph rounds once from float32
    rtol = 2e-3 if case[0].endswith("_f16") else 1e-5
    tf1_reference.check_case(reference, case, rtol=rtol, atol=rtol)


_COLOR_CASES = [c for c in CASES if c[1] in ("image.rgb_to_hsv", "image.hsv_to_rgb",
                                             "image.adjust_hue", "image.adjust_saturation")]


@pytest.mark.parametrize("case", _COLOR_CASES, ids=[c[0] for c in _COLOR_CASES])
def test_color_conversions_of_images_of_unknown_rank(reference, case):
    """The HSV conversions and hue/saturation adjustments of TensorFlow's cases again
    with the images' rank unknown while building (TF1 takes them): the same values and
    gradients."""
    rtol = 2e-3 if case[0].endswith("_f16") else 1e-5
    tf1_reference.check_case(reference, case, rtol=rtol, atol=rtol,
                             hidden_dims={case[2][0][1:]: None})


def test_color_conversions_check_the_channels_at_run_time():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, None)
        y = og.image.rgb_to_hsv(x)
        sess = og.Session(g)
        assert sess.run(y, {x: np.full((2, 3), 0.5, np.float32)}).shape == (2, 3)
        with pytest.raises(ExecutionError, match="rgb_to_hsv: the last axis must hold 3"):
            sess.run(y, {x: np.full((2, 4), 0.5, np.float32)})


def _rgb(seed, shape=(2, 4, 5, 3)):
    return np.random.RandomState(seed).uniform(0.05, 0.95, shape)


@pytest.mark.parametrize("adjust", [
    lambda x: og.image.adjust_hue(x, 0.3),
    lambda x: og.image.adjust_hue(x, -0.7),
    lambda x: og.image.adjust_saturation(x, 0.6),
    lambda x: og.image.adjust_saturation(x, 1.4),
    lambda x: og.image.hsv_to_rgb(og.image.rgb_to_hsv(x) * 0.9),
], ids=["hue", "hue_negative", "saturation_down", "saturation_up", "hsv_round_trip"])
def test_colour_gradients_match_central_differences(adjust):
    # TensorFlow defines no gradient for AdjustHue/AdjustSaturation; float64 images
    # are adjusted in float64, so central differences are precise enough
    check_op_gradients(adjust, [_rgb(1)], rtol=1e-4)


def test_random_hue_turns_every_pixel_by_one_delta_in_range():
    img = _rgb(2, (3, 4, 3)).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.constant(img)
        turned = og.image.random_hue(x, 0.2, seed=4)
        hues = [og.image.rgb_to_hsv(x)[..., 0], og.image.rgb_to_hsv(turned)[..., 0]]
        saturated = og.image.random_saturation(x, 0.3, 0.9, seed=5)
        sats = [og.image.rgb_to_hsv(x)[..., 1], og.image.rgb_to_hsv(saturated)[..., 1]]
        sess = og.Session(g)
        runs = [sess.run(hues + sats) for _ in range(4)]
    deltas = set()
    for h0, h1, s0, s1 in runs:
        turn = (h1.astype(np.float64) - h0 + 0.5) % 1.0 - 0.5
        np.testing.assert_allclose(turn, turn.flat[0], atol=1e-5)
        assert -0.2 <= turn.flat[0] < 0.2
        factor = s1 / s0
        np.testing.assert_allclose(factor, factor.flat[0], rtol=1e-4)
        assert 0.3 <= factor.flat[0] < 0.9
        deltas.add(round(float(turn.flat[0]), 5))
    assert len(deltas) > 1   # a fresh draw each run


def test_crop_and_resize_takes_run_time_sizes_and_box_indices():
    img = np.random.RandomState(3).rand(2, 5, 6, 3).astype(np.float32)
    boxes = np.asarray([[0.1, 0.2, 0.9, 0.7], [0.0, 0.0, 1.0, 1.0]], np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None, None, 3])
        size = og.placeholder(og.int32, [2])
        dynamic = og.image.crop_and_resize(x, boxes, [1, 0], size)
        static = og.image.crop_and_resize(x, boxes, [1, 0], [4, 1])
        sess = og.Session(g)
        a, b = sess.run([dynamic, static], {x: img, size: np.asarray([4, 1], np.int32)})
        whole = sess.run(og.image.crop_and_resize(x, boxes[1:], [0], [5, 6]), {x: img})
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(whole[0], img[0], atol=1e-6)   # the full box is the image


def test_bad_arguments_are_named_errors():
    img = og.constant(np.zeros((1, 4, 4, 3), np.float32))
    boxes = np.zeros((2, 4), np.float32)
    cases = [
        (lambda: og.image.rgb_to_hsv(og.constant(np.zeros((2, 2, 3), np.uint8))),
         TypeError, "rgb_to_hsv: images must be float"),
        (lambda: og.image.hsv_to_rgb(og.constant(np.zeros((2, 2, 4), np.float32))),
         ShapeError, "3 channels"),
        (lambda: og.image.adjust_hue(og.constant(np.zeros((2, 2, 2), np.float32)), 0.1),
         ShapeError, "adjust_hue"),
        (lambda: og.image.random_hue(img, 0.6), ValueError, "max_delta must be <= 0.5"),
        (lambda: og.image.random_saturation(img, 2, 1), ValueError, "upper must be >"),
        (lambda: og.image.adjust_gamma(img, -1), ValueError, "non-negative"),
        (lambda: og.image.rgb_to_yuv(og.placeholder(og.float32)), ShapeError,
         "known rank"),
        (lambda: og.image.total_variation(og.constant(np.zeros((3, 3), np.float32))),
         ShapeError, "3-D or 4-D"),
        (lambda: og.image.image_gradients(og.constant(np.zeros((3, 3, 1), np.float32))),
         ShapeError, "4-D"),
        (lambda: og.image.psnr(img, og.constant(np.zeros((1, 4, 5, 3), np.float32)), 1.0),
         ShapeError, "last three dims differ"),
        (lambda: og.image.ssim(img, img, 1.0), ShapeError, "filter_size 11"),
        # an unknown rank was a TypeError from inside the function
        (lambda: og.image.ssim(og.placeholder(og.float32), img, 1.0), ShapeError,
         "ssim: images must be at least 3-D .* got an unknown rank"),
        (lambda: og.image.ssim_multiscale(og.placeholder(og.float32), img, 1.0), ShapeError,
         "ssim_multiscale: images must be at least 3-D"),
        (lambda: og.losses.mean_pairwise_squared_error(og.placeholder(og.float32),
                                                       og.placeholder(og.float32)),
         ShapeError, "predictions need a known rank .* got shape of unknown rank"),
        (lambda: og.image.ssim(img, img, 1.0, filter_sigma=0), ValueError, "filter_sigma"),
        (lambda: og.image.non_max_suppression(boxes, np.zeros(3, np.float32), 2),
         ShapeError, "2 boxes but 3 scores"),
        (lambda: og.image.non_max_suppression(boxes[:, :3], np.zeros(2, np.float32), 2),
         ShapeError, r"\[num_boxes, 4\]"),
        (lambda: og.image.non_max_suppression(boxes, np.zeros(2, np.float32), -1),
         ValueError, "max_output_size"),
        (lambda: og.image.non_max_suppression(boxes, np.zeros(2, np.float32), 2, 1.5),
         ValueError, "iou_threshold"),
        (lambda: og.image.crop_and_resize(img, boxes, [0, 0], [2, 2], method="area"),
         ValueError, "method"),
        (lambda: og.image.crop_and_resize(img, boxes, [0, 0], [0, 2]), ValueError,
         "two positive sizes"),
        (lambda: og.image.crop_and_resize(img, boxes, crop_size=[2, 2]), ValueError,
         "box_ind"),
        (lambda: og.image.crop_and_resize(img[0], boxes, [0, 0], [2, 2]), ShapeError,
         "4-D"),
    ]
    for fn, error, message in cases:
        with pytest.raises(error, match=message):
            fn()


@pytest.mark.parametrize("build, message", [
    (lambda x: og.image.crop_and_resize(x, np.zeros((1, 4), np.float32), [2], [2, 2]),
     "box_ind has values outside"),
    (lambda x: og.image.adjust_gamma(x, og.constant(-0.5)), "non-negative"),
    (lambda x: og.image.ssim(x, x, 1.0, filter_size=7), "filter_size 7"),
])
def test_run_time_checks(build, message):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None, None, 3])
        y = build(x)
        with pytest.raises(ExecutionError, match=message):
            og.Session(g).run(y, {x: np.zeros((2, 5, 5, 3), np.float32)})


def test_image_colour_and_box_graphs_export_and_run_in_onnxruntime():
    rng = np.random.RandomState(6)
    img = (rng.rand(2, 12, 13, 3) * 255).astype(np.uint8)
    boxes = np.asarray([[0.1, 0.1, 0.5, 0.6], [0.12, 0.1, 0.52, 0.62], [0.5, 0.4, 1.2, 0.9],
                        [0.9, 0.9, 0.2, 0.3]], np.float32)
    scores = np.asarray([0.9, 0.8, 0.7, 0.95], np.float32)
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.uint8, [None, None, None, 3], name="x")
        flt = og.image.convert_image_dtype(p, og.float32)
        keep = og.image.non_max_suppression(boxes, scores, 3, iou_threshold=0.5)
        outs = {"hsv": og.image.rgb_to_hsv(flt),
                "hue": og.image.adjust_hue(p, 0.4),
                "sat": og.image.adjust_saturation(flt, 1.6),
                "gamma": og.image.adjust_gamma(p, 0.7),
                "yiq": og.image.rgb_to_yiq(flt),
                "tv": og.image.total_variation(flt),
                "sobel": og.image.sobel_edges(flt),
                "psnr": og.image.psnr(p, og.image.flip_left_right(p), 255),
                "ssim": og.image.ssim(flt, og.image.flip_up_down(flt), 1.0, filter_size=5),
                "keep": keep,
                "crops": og.image.crop_and_resize(p, og.gather(boxes, keep),
                                                  og.zeros_like(keep), [3, 4])}
        sig = og.signature({"x": p}, outs)
        want = og.Session(g).run(list(outs.values()), {p: img})
        proto = to_onnx(g, signatures={"serving": sig})
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(list(outs), {"x": img})
    np.testing.assert_array_equal(want[list(outs).index("keep")], [3, 0, 2])
    for key, a, b in zip(outs, got, want, strict=True):
        assert a.dtype == b.dtype, key
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5,
                                   atol=1e-4, err_msg=key)

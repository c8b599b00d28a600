"""og.image (TF1's tf.image) against TensorFlow's own outputs, recorded in
data/tf1_image_reference.npz by tools/record_tf1_reference.py image (TensorFlow 2.21's
tf.compat.v1.image), plus the random functions' properties, errors and exports."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ShapeError

from . import tf1_reference
from .graph_runs import session_and_onnxruntime
from .tf1_image_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("image")


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)
    assert {k[4:] for k in reference if k.startswith("out/")} == {c[0] for c in CASES}


def _run(fn, x, kwargs, dynamic):
    g = og.Graph()
    with g.as_default():
        # dynamic: height and width (and batch) unknown while building
        shape = [None] * (x.ndim - 1) + [x.shape[-1]] if dynamic else list(x.shape)
        p = og.placeholder(x.dtype, shape)
        y = getattr(og.image, fn)(p, **kwargs)
        return og.Session(g).run(y, {p: x})


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow(reference, case, dynamic):
    name, fn, key, kwargs = case
    if dynamic and name == "images_same":
        pytest.skip("TF1 skips the resize only when the sizes are known while building")
    x, want = reference[f"in/{key}"], reference[f"out/{name}"]
    got = _run(fn, x, kwargs, dynamic)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
    elif fn == "resize_bicubic" or kwargs.get("method") == og.image.ResizeMethod.BICUBIC:
        # TF1 looks its cubic weights up in a 1024-entry table, and so does og
        # (sizes known while building or not); ONNX's exact kernel was 1e-3 away
        atol = 2e-6 * max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=atol)
    else:
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=2e-6 * scale)


def test_random_flips_flip_each_image_on_its_own_coin():
    x = np.random.RandomState(0).rand(64, 3, 4, 2).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [None, 3, 4, 2])
        lr = og.image.random_flip_left_right(p, seed=3)
        ud = og.image.random_flip_up_down(p[0], seed=4)
        sess = og.Session(g)
        a = sess.run(lr, {p: x})
        flipped = [np.array_equal(a[i], x[i, :, ::-1]) for i in range(64)]
        kept = [np.array_equal(a[i], x[i]) for i in range(64)]
        assert all(f != k for f, k in zip(flipped, kept))
        assert 16 < sum(flipped) < 48
        singles = [sess.run(ud, {p: x}) for _ in range(40)]
        ups = sum(np.array_equal(s, x[0, ::-1]) for s in singles)
        assert sum(np.array_equal(s, x[0]) for s in singles) + ups == 40
        assert 5 < ups < 35
        np.testing.assert_array_equal(og.Session(g).run(lr, {p: x}), a)  # seeded


def test_random_brightness_and_contrast_stay_in_their_ranges():
    x = np.random.RandomState(1).rand(2, 4, 5, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [2, 4, 5, 3])
        b = og.image.random_brightness(p, 0.25, seed=1)
        c = og.image.random_contrast(p, 0.5, 1.5, seed=2)
        sess = og.Session(g)
        deltas, factors = [], []
        for _ in range(30):
            bv, cv = sess.run([b, c], {p: x})
            delta = (bv - x).mean()
            np.testing.assert_allclose(bv, x + delta, atol=1e-6)
            deltas.append(delta)
            mean = x.mean(axis=(1, 2), keepdims=True)
            factor = ((cv - mean) * (x - mean)).sum() / ((x - mean) ** 2).sum()
            np.testing.assert_allclose(cv, (x - mean) * factor + mean, atol=1e-5)
            factors.append(factor)
    assert -0.25 <= min(deltas) < -0.05 and 0.05 < max(deltas) <= 0.25
    assert 0.5 <= min(factors) < 0.8 and 1.2 < max(factors) <= 1.5


def test_sizes_and_offsets_as_tensors():
    x = np.random.RandomState(2).rand(2, 6, 5, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [None, None, None, 3])
        h, w = og.shape(p)[1], og.shape(p)[2]
        outs = [og.image.resize_bilinear(p, [h * 2, w + 1]),
                og.image.resize_images(p, og.stack([w, h]), method=1),
                og.image.crop_to_bounding_box(p, h - 4, 1, 3, w - 2),
                og.image.pad_to_bounding_box(p, 1, w - 3, h + 2, w * 2),
                og.image.resize_image_with_crop_or_pad(p, h + 3, w - 2)]
        got = og.Session(g).run(outs, {p: x})
    assert got[0].shape == (2, 12, 6, 3) and got[1].shape == (2, 5, 6, 3)
    np.testing.assert_array_equal(got[2], x[:, 2:5, 1:4])
    want = np.zeros((2, 8, 10, 3), np.float32)
    want[:, 1:7, 2:7] = x
    np.testing.assert_array_equal(got[3], want)
    want = np.zeros((2, 9, 3, 3), np.float32)
    want[:, 1:7] = x[:, :, 1:4]
    np.testing.assert_array_equal(got[4], want)


def test_blocks_that_leave_the_image_fail_the_run_when_sizes_are_tensors():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [None, None, 3])
        n = og.placeholder(og.int64, [])
        crop = og.image.crop_to_bounding_box(p, n, 0, 2, 2)
        pad = og.image.pad_to_bounding_box(p, n, 0, 4, 4)
        sess = og.Session(g)
        x = np.ones((3, 3, 3), np.float32)
        assert sess.run(crop, {p: x, n: 1}).shape == (2, 2, 3)
        assert sess.run(pad, {p: x, n: 1}).shape == (4, 4, 3)
        with pytest.raises(og.errors.ExecutionError, match="slice: begin and size"):
            sess.run(crop, {p: x, n: 2})
        with pytest.raises(og.errors.ExecutionError, match="must fit the target"):
            sess.run(pad, {p: x, n: 2})


def test_bad_arguments_are_named():
    img = og.constant(np.zeros((4, 5, 3), np.float32))
    cases = [
        (lambda: og.image.resize_bilinear(og.constant(np.zeros((4, 5), np.float32)),
                                          [2, 2]), ShapeError, "must be 3-D"),
        (lambda: og.image.resize_images(img, [2, 2], method=7), ValueError,
         "unknown method"),
        (lambda: og.image.resize_bilinear(img, [2, 2], align_corners=True,
                                          half_pixel_centers=True), ValueError,
         "cannot both be true"),
        (lambda: og.image.resize_bilinear(img, [2, 0]), ValueError, "two sizes > 0"),
        (lambda: og.image.resize_bilinear(img, [2, 2, 2]), ValueError, "two sizes"),
        (lambda: og.image.resize_bilinear(img, og.constant([[2, 2]])), ShapeError,
         "1-D tensor of 2 elements"),
        (lambda: og.image.crop_to_bounding_box(img, 2, 0, 3, 2), ShapeError,
         "leaves the image of 4 x 5"),
        (lambda: og.image.crop_to_bounding_box(img, -1, 0, 3, 2), ValueError,
         "offset_height must be >= 0"),
        (lambda: og.image.crop_to_bounding_box(img, 0, 0, 0, 2), ValueError,
         "target_height must be > 0"),
        (lambda: og.image.pad_to_bounding_box(img, 1, 0, 4, 5), ShapeError,
         "height does not fit"),
        (lambda: og.image.central_crop(img, 0.0), ValueError, r"within \(0, 1\]"),
        (lambda: og.image.rgb_to_grayscale(og.constant(np.zeros((2, 2, 4), np.float32))),
         ShapeError, "3 channels"),
        (lambda: og.image.grayscale_to_rgb(img), ShapeError, "last axis of 1"),
        (lambda: og.image.convert_image_dtype(img, og.bool_), TypeError,
         "convert_image_dtype: dtype must be one of"),
        (lambda: og.image.random_contrast(img, 1.0, 0.5), ValueError, "upper must be"),
        (lambda: og.image.random_brightness(img, -0.1), ValueError, "non-negative"),
        (lambda: og.image.rot90(img, 1.5), TypeError, "rot90: k"),
    ]
    for fn, error, message in cases:
        with pytest.raises(error, match=message):
            fn()


def test_image_graphs_export_and_run_in_onnxruntime():
    x = (np.random.RandomState(3).rand(2, 6, 5, 3) * 255).astype(np.uint8)
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.uint8, [None, None, None, 3], name="x")
        h = og.shape(p)[1]
        flt = og.image.convert_image_dtype(p, og.float32)
        outs = {"half": og.image.resize_bilinear(flt, [h + 2, 7], half_pixel_centers=True),
                "nearest": og.image.resize_nearest_neighbor(p, [4, 9], align_corners=True),
                "cubic": og.image.resize_bicubic(flt, [9, 4]),
                "fit": og.image.resize_image_with_crop_or_pad(p, 4, 8),
                "gray": og.image.rgb_to_grayscale(p),
                "turned": og.image.rot90(og.image.flip_up_down(p), 3),
                "centre": og.image.central_crop(flt, 0.5),
                "std": og.image.per_image_standardization(p),
                "contrast": og.image.adjust_contrast(p, 1.5)}
    want, got = session_and_onnxruntime(g, {"x": p}, outs, {"x": x})
    for key, a, b in zip(outs, got, want, strict=True):
        assert a.dtype == b.dtype, key
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5,
                                   atol=1e-5, err_msg=key)

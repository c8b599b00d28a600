"""og.image.decode_jpeg and decode_image of JPEG bytes against TensorFlow's decoder:
JPEG files made by tf.io.encode_jpeg (4:2:0 and 4:4:4, qualities 95 and 50,
progressive, grayscale, sizes not multiples of 8) and TF's pixels, recorded in
data/tf_jpeg_reference.npz by tools/record_tf_jpeg.py (TensorFlow 2.21).

onegraph decodes with libjpeg's accurate integer DCT (through Pillow): TF's
dct_method="INTEGER_ACCURATE" gives exactly the same pixels; TF's default,
INTEGER_FAST, differs by a few levels (measured: at most 8, and 1.8 on average in
the worst image)."""

import os
import sys

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, UnsupportedOpError

pytest.importorskip("PIL", reason="JPEG decoding needs Pillow (the image extra)")

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_jpeg_reference.npz")
REF = np.load(DATA, allow_pickle=False)
CASES = sorted({k.split("/")[1] for k in REF.files if k.startswith("jpeg/")})


def _decode(build, case):
    with og.Graph().as_default():
        return og.Session().run(build(og.constant(REF[f"jpeg/{case}"].tobytes())))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("how, kwargs", [
    ("accurate0", {}), ("accurate1", {"channels": 1}), ("accurate3", {"channels": 3}),
    ("accurate_ratio2", {"ratio": 2})])
def test_pixels_equal_tensorflows_accurate_dct(case, how, kwargs):
    got = _decode(lambda c: og.image.decode_jpeg(c, dct_method="INTEGER_ACCURATE",
                                                 **kwargs), case)
    want = REF[f"out/{case}/{how}"]
    assert got.dtype == np.uint8 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("how, kwargs", [
    ("channels0", {}), ("channels1", {"channels": 1}), ("channels3", {"channels": 3}),
    ("ratio2", {"ratio": 2}), ("ratio4", {"channels": 3, "ratio": 4})])
def test_pixels_near_tensorflows_default_dct(case, how, kwargs):
    got = _decode(lambda c: og.image.decode_jpeg(c, **kwargs), case).astype(int)
    want = REF[f"out/{case}/{how}"].astype(int)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 8 and np.abs(got - want).mean() < 2.0


@pytest.mark.parametrize("case", ["rgb", "gray_progressive", "noise_444"])
def test_decode_image_of_a_jpeg(case):
    img = _decode(lambda c: og.image.decode_image(c), case)
    wide = _decode(lambda c: og.image.decode_image(c, dtype=og.uint16), case)
    exact = REF[f"out/{case}/accurate0"]
    np.testing.assert_array_equal(img, exact)
    assert wide.dtype == np.uint16
    np.testing.assert_array_equal(wide, exact.astype(np.uint16) * 257)


def test_errors_are_named():
    png = og.Session().run(og.image.encode_png(og.zeros([2, 2, 3], og.uint8)))
    with og.Graph().as_default():
        with pytest.raises(ExecutionError, match="not a JPEG"):
            og.Session().run(og.image.decode_jpeg(og.constant(png)))
    jpeg = REF["jpeg/rgb"].tobytes()
    with og.Graph().as_default():
        with pytest.raises(ExecutionError, match="cannot decode .* as a JPEG"):
            og.Session().run(og.image.decode_jpeg(og.constant(jpeg[:60])))
        with pytest.raises(ExecutionError, match="a JPEG decodes to 1 or 3 channels"):
            og.Session().run(og.image.decode_image(og.constant(jpeg), channels=4))
        with pytest.raises(ValueError, match="ratio must be 1, 2, 4 or 8"):
            og.image.decode_jpeg(og.constant(jpeg), ratio=3)
        with pytest.raises(ValueError, match="dct_method must be one of"):
            og.image.decode_jpeg(og.constant(jpeg), dct_method="FLOAT")
        with pytest.raises(ValueError, match="only fancy_upscaling=True"):
            og.image.decode_jpeg(og.constant(jpeg), try_recover_truncated=True)


def test_without_pillow_the_run_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)      # import PIL raises ImportError
    with og.Graph().as_default():
        y = og.image.decode_jpeg(og.constant(REF["jpeg/rgb"].tobytes()))
        with pytest.raises(UnsupportedOpError, match=r"pip install 'onegraph\[image\]'"):
            og.Session().run(y)

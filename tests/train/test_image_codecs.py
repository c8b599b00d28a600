"""og.image / og.io's GIF and BMP decoding, JPEG encoding, decode_and_crop_jpeg and
the JPEG-quality adjustments against TensorFlow 2.21's results, recorded (with the
files: GIFs written byte by byte or by Pillow, BMPs by hand or by Pillow, TF's JPEGs)
in data/tf_image_codecs_reference.npz by tools/record_tf_image_codecs.py. A TF error
is recorded by class: InvalidArgumentError when run is og's InvalidArgumentError."""

import os
import struct
import sys

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import InvalidArgumentError, ShapeError, UnsupportedOpError

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_image_codecs_reference.npz")
REF = np.load(DATA)
GIFS = sorted(k[4:] for k in REF.files if k.startswith("gif/"))
BMPS = sorted(k[4:] for k in REF.files if k.startswith("bmp/"))
JPEGS = sorted(k[5:] for k in REF.files if k.startswith("jpeg/"))

def _bytes(key: str) -> bytes:
    return REF[key].tobytes()


def _run(build):
    """build()'s value in a fresh graph and session."""
    g = og.Graph()
    with g.as_default():
        t = build()
        return og.Session(g).run(t)


def _check(key: str, build, atol=0):
    """og's value of build() against TF's out/<key>, or TF's error err/<key> (an
    InvalidArgumentError when run)."""
    if "err/" + key in REF.files:
        assert str(REF["err/" + key]) == "InvalidArgumentError"
        with pytest.raises(InvalidArgumentError):
            _run(build)
        return
    want = REF["out/" + key]
    got = _run(build)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=0,
                               atol=atol)


# --------------------------------------------------------------------------- GIF

@pytest.mark.parametrize("case", GIFS)
def test_decode_gif_matches_tensorflow(case):
    data = _bytes(f"gif/{case}")
    _check(f"gif/{case}/decode_gif", lambda: og.io.decode_gif(data))
    _check(f"gif/{case}/decode_gif", lambda: og.image.decode_gif(data))


@pytest.mark.parametrize("case", GIFS)
def test_decode_image_of_a_gif_matches_tensorflow(case):
    data = _bytes(f"gif/{case}")
    _check(f"gif/{case}/image", lambda: og.image.decode_image(data, expand_animations=False))
    _check(f"gif/{case}/image_anim", lambda: og.io.decode_image(data))
    _check(f"gif/{case}/image_float",
           lambda: og.image.decode_image(data, dtype=og.float32), atol=1e-7)
    _check(f"gif/{case}/image_c4", lambda: og.image.decode_image(data, channels=4))


@pytest.mark.parametrize("kind", ["png", "jpeg", "bmp", "gif", "empty", "junk"])
def test_decode_gif_and_decode_bmp_of_other_formats_as_tensorflow(kind):
    pytest.importorskip("PIL") if kind == "jpeg" else None
    data = {"bmp": _bytes("bmp/rgb24_odd"), "gif": _bytes("gif/static"), "empty": b"",
            "junk": b"GIX89a"}.get(kind)
    if data is None:  # TF's own PNG / JPEG of the rgb image
        data = _run(lambda: og.image.encode_png(REF["image/rgb"])) if kind == "png" \
            else _bytes("jpeg/rgb_default")
        if kind == "png":
            data = data.item().encode("utf-8", "surrogateescape")
    if kind == "jpeg":
        # TF decodes with its fast DCT here (no dct_method): og's accurate one gives
        # TF's INTEGER_ACCURATE pixels, as one frame
        got = _run(lambda: og.io.decode_gif(data))
        assert got.shape == REF["out/cross/jpeg/decode_gif"].shape
        np.testing.assert_array_equal(got[0], REF["out/jpeg/rgb_default/decoded"])
    else:
        _check(f"cross/{kind}/decode_gif", lambda: og.io.decode_gif(data))
    _check(f"cross/{kind}/decode_bmp", lambda: og.io.decode_bmp(data))


def test_gif_static_shape_and_checks_while_building():
    g = og.Graph()
    with g.as_default():
        s = og.placeholder(og.string, [])
        assert og.image.decode_gif(s).shape == (None, None, None, 3)
        assert og.image.decode_image(s, expand_animations=False, channels=3).shape == \
            (None, None, 3)
        with pytest.raises(TypeError, match="decode_gif: contents must be a string"):
            og.image.decode_gif(og.constant([1]))
        with pytest.raises(ShapeError, match="scalar"):
            og.image.decode_gif(og.constant(["a", "b"]))
        with pytest.raises(ValueError, match="channels must be one of"):
            og.image.decode_bmp(s, channels=2)


# --------------------------------------------------------------------------- BMP

@pytest.mark.parametrize("case", BMPS)
def test_decode_bmp_matches_tensorflow(case):
    data = _bytes(f"bmp/{case}")
    for c in (0, 1, 3, 4):
        _check(f"bmp/{case}/c{c}", lambda: og.io.decode_bmp(data, channels=c))
    _check(f"bmp/{case}/image", lambda: og.image.decode_image(data))


def test_bmp_row_padding_and_top_down_rows():
    """The hand-written files hold what they were written from (TF agrees above)."""
    a = _run(lambda: og.image.decode_bmp(_bytes("bmp/rgb24_odd")))
    b = _run(lambda: og.image.decode_bmp(_bytes("bmp/rgb24_topdown")))
    np.testing.assert_array_equal(a, b)
    head = _bytes("bmp/rgb24_odd")
    assert struct.unpack("<i", head[18:22])[0] == 5  # 15 bytes a row, padded to 16


# --------------------------------------------------------------------------- JPEG encode

def _segments(data: bytes) -> dict:
    """A JPEG's header segments up to the scan: marker -> list of payloads."""
    out, pos = {}, 2
    while data[pos + 1] != 0xDA:
        n = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        out.setdefault(data[pos + 1], []).append(data[pos + 4:pos + 2 + n])
        pos += 2 + n
    return out


# tools/record_tf_image_codecs.py's encoder options and crop windows
ENCODINGS = {
    "default": {}, "q50": {"quality": 50}, "q0": {"quality": 0}, "q100": {"quality": 100},
    "progressive": {"progressive": True}, "optimize": {"optimize_size": True},
    "444": {"chroma_downsampling": False}, "rgb": {"format": "rgb"},
    "grayscale": {"format": "grayscale"},
    "cm": {"density_unit": "cm", "x_density": 72, "y_density": 96},
    "xmp": {"xmp_metadata": "<x:xmpmeta>onegraph</x:xmpmeta>"},
}
WINDOWS = {"inner": [1, 2, 5, 4], "full": [0, 0, 21, 13], "corner": [20, 12, 1, 1],
           "past_bottom": [17, 0, 5, 3], "zero_height": [0, 0, 0, 3],
           "negative": [-1, 0, 3, 3]}


def _encoding(case: str) -> tuple:
    name, enc = case.split("_", 1)
    return REF[f"image/{name}"], ENCODINGS[enc]


@pytest.mark.parametrize("case", JPEGS)
def test_encode_jpeg_matches_tensorflow(case):
    """og's file has TF's header (JFIF density, XMP, quantisation tables, frame type
    and sampling factors) and decodes to TF's file's pixels; TF's decoder reads og's
    file (both are libjpeg's)."""
    pytest.importorskip("PIL")
    image, kwargs = _encoding(case)
    ours = _run(lambda: og.io.encode_jpeg(image, **kwargs))
    ours = ours.item().encode("utf-8", "surrogateescape")
    theirs = _bytes(f"jpeg/{case}")
    mine, ref = _segments(ours), _segments(theirs)
    for marker in (0xE0, 0xE1, 0xDB, 0xC0, 0xC1, 0xC2):
        assert mine.get(marker) == ref.get(marker), hex(marker)
    decoded = _run(lambda: og.image.decode_jpeg(ours))
    np.testing.assert_allclose(decoded.astype(int), REF[f"out/jpeg/{case}/decoded"],
                               atol=1)


@pytest.mark.parametrize("case", ["gray_rgb", "rgb_grayscale"])
def test_encode_jpeg_format_channel_mismatch_fails_when_run(case):
    pytest.importorskip("PIL")
    assert str(REF[f"err/jpeg/{case}"]) == "InvalidArgumentError"
    image, kwargs = _encoding(case)
    with pytest.raises(InvalidArgumentError, match="channels"):
        _run(lambda: og.image.encode_jpeg(image, **kwargs))


def test_encode_jpeg_bad_arguments():
    pytest.importorskip("PIL")
    assert str(REF["err/encode_bad/two_channels/default"]) == "InvalidArgumentError"
    with pytest.raises(InvalidArgumentError, match="1 or 3 channels"):
        _run(lambda: og.image.encode_jpeg(np.zeros((4, 4, 2), np.uint8)))
    assert str(REF["err/encode_bad/flat/default"]) == "ValueError"
    with pytest.raises(ValueError, match="3-D"):
        og.image.encode_jpeg(np.zeros((4, 4), np.uint8))
    # TF fails when run; onegraph knows while building
    assert str(REF["err/encode_bad/quality101/default"]) == "InvalidArgumentError"
    with pytest.raises(ValueError, match="quality must be in"):
        og.image.encode_jpeg(np.zeros((4, 4, 3), np.uint8), quality=101)
    with pytest.raises(TypeError, match="uint8"):
        og.image.encode_jpeg(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(ValueError, match="density_unit"):
        og.image.encode_jpeg(np.zeros((4, 4, 3), np.uint8), density_unit="mm")
    with pytest.raises(ValueError, match="format"):
        og.image.encode_jpeg(np.zeros((4, 4, 3), np.uint8), format="bgr")


# --------------------------------------------------------------------------- crop, quality

CROPS = sorted({k.split("/")[2] + "/" + k.split("/")[3] for k in REF.files
                if k.startswith(("out/crop/", "err/crop/"))})


@pytest.mark.parametrize("case", CROPS)
def test_decode_and_crop_jpeg_matches_tensorflow(case):
    pytest.importorskip("PIL")
    name, crop = case.split("/")
    data = _bytes(f"jpeg/{name}_default")
    if crop == "ratio2":
        _check(f"crop/{case}/c0", lambda: og.image.decode_and_crop_jpeg(
            data, [1, 1, 4, 3], ratio=2))
        return
    for c in (0, 1, 3):
        key = f"crop/{case}/c{c}"
        build = lambda: og.io.decode_and_crop_jpeg(  # noqa: E731
            data, WINDOWS[crop], channels=c, dct_method="INTEGER_ACCURATE")
        got = _run(build) if "out/" + key in REF.files else None
        if got is None or got.shape[2] == 1 or crop in ("full", "corner"):
            _check(key, build)
            continue
        # og's values are decode-then-crop; libjpeg's cropped decode in TF upsamples
        # the 4:2:0 chroma as if the image ended at the window's right edge, so only
        # that last column differs (by a few levels)
        want = REF["out/" + key]
        np.testing.assert_array_equal(got[:, :-1], want[:, :-1])
        np.testing.assert_allclose(got[:, -1].astype(int), want[:, -1], atol=10)
        full = _run(lambda: og.image.decode_jpeg(data, channels=c))
        y, x, h, w = WINDOWS[crop]
        np.testing.assert_array_equal(got, full[y:y + h, x:x + w])


def test_decode_and_crop_jpeg_checks_the_window_while_building():
    with pytest.raises(ShapeError, match="crop_window must have shape"):
        og.image.decode_and_crop_jpeg(b"\xff\xd8\xff", [1, 2, 3])
    with pytest.raises(TypeError, match="int32 or int64"):
        og.image.decode_and_crop_jpeg(b"\xff\xd8\xff", [1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize("name", ["rgb", "gray"])
@pytest.mark.parametrize("q", [10, 60, 95])
def test_adjust_jpeg_quality_matches_tensorflow(name, q):
    pytest.importorskip("PIL")
    image = REF[f"image/{name}"]
    _check(f"adjust/{name}/q{q}/uint8", lambda: og.image.adjust_jpeg_quality(
        image, q, dct_method="INTEGER_ACCURATE"))
    _check(f"adjust/{name}/q{q}/float", lambda: og.image.adjust_jpeg_quality(
        image.astype(np.float32) / 255, og.constant(q)), atol=1e-6)


def test_random_jpeg_quality_draws_from_its_range():
    pytest.importorskip("PIL")
    image = REF["image/rgb"]
    got = _run(lambda: og.image.random_jpeg_quality(image, 60, 61, seed=3))
    np.testing.assert_array_equal(got, REF["out/adjust/rgb/q60/uint8"])
    with pytest.raises(ValueError, match="between 0 and 100"):
        og.image.random_jpeg_quality(image, 10, 101)
    with pytest.raises(ValueError, match="less than"):
        og.image.random_jpeg_quality(image, 50, 50)
    assert str(REF["err/encode_bad/adjust101/default"]) == "InvalidArgumentError"
    with pytest.raises(ValueError, match="in \\[0, 100\\]"):
        og.image.adjust_jpeg_quality(image, 101)
    with pytest.raises(InvalidArgumentError, match="quality must be in"):
        _run(lambda: og.image.adjust_jpeg_quality(image, og.constant(101)))


# --------------------------------------------------------------------------- no Pillow

def test_without_pillow_jpeg_fails_naming_the_extra_and_gif_bmp_work(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(UnsupportedOpError, match="onegraph\\[image\\]"):
        _run(lambda: og.image.encode_jpeg(REF["image/rgb"]))
    with pytest.raises(UnsupportedOpError, match="onegraph\\[image\\]"):
        _run(lambda: og.image.decode_and_crop_jpeg(_bytes("jpeg/rgb_default"),
                                                   [0, 0, 2, 2]))
    with pytest.raises(UnsupportedOpError, match="onegraph\\[image\\]"):
        _run(lambda: og.image.adjust_jpeg_quality(REF["image/rgb"], 50))
    gif = _run(lambda: og.image.decode_gif(_bytes("gif/pillow_anim")))
    np.testing.assert_array_equal(gif, REF["out/gif/pillow_anim/decode_gif"])
    bmp = _run(lambda: og.image.decode_bmp(_bytes("bmp/pillow_rgb")))
    np.testing.assert_array_equal(bmp, REF["out/bmp/pillow_rgb/c0"])

"""onegraph.train.image_more (tf.image's PNG codec, decode_image, is_jpeg,
extract_jpeg_shape, draw_bounding_boxes, resize_area, resize_image_with_pad, the NMS
variants, ssim_multiscale, extract_patches) against TensorFlow's outputs recorded in
data/tf1_imageextra_reference.npz by `tools/record_tf1_reference.py imageextra`
(TensorFlow 2.21's tf.compat.v1); PNGs also against Pillow, an independent decoder;
corrupt files; seeded and statistical checks of the random functions.

The functions are not yet in og.image (they are exposed there by re-exporting
image_more from train/image.py); the cases call og.image.<name>, so the fixture
below puts image_more's functions there for the test's duration.
"""

import io
import struct
import zlib

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError
from onegraph.train import image_more

from . import tf1_reference
from .tf1_imageextra_cases import BMPS, CASES, JPEGS, PNGS, make_inputs, write_png

# Pillow warns when converting a palette with tRNS to RGB, which is what we ask of it
pytestmark = pytest.mark.filterwarnings("ignore:Palette images with Transparency")

# TF writes these with its own bundled zlib, whose deflate bit stream differs from
# Python's zlib 1.2.13 here (level 1's matcher; also, beyond this file, the stored
# blocks of incompressible images over 16 KiB): the PNG, its filters and zlib header
# are still TF's (checked below), only the compressed bits differ.
_ZLIB_DEPENDENT = {"encode_enc_steps_l1"}


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("imageextra")


@pytest.fixture(autouse=True)
def _image_more_in_og_image(monkeypatch):
    for name in image_more.__all__:
        monkeypatch.setattr(og.image, name, getattr(image_more, name), raising=False)


def _run(fn, *args):
    g = og.Graph()
    with g.as_default():
        out = fn(*args)
    return og.Session(g).run(out)


def _bytes(value) -> bytes:
    """A fetched string scalar as bytes (og's str stands for bytes by surrogateescape)."""
    v = np.asarray(value, dtype=object).item()
    return v if isinstance(v, bytes) else v.encode("utf-8", "surrogateescape")


def _chunks(png: bytes) -> list:
    pos, out = 8, []
    while pos < len(png):
        n, = struct.unpack(">I", png[pos:pos + 4])
        out.append((png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]))
        pos += 12 + n
    return out


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value, err_msg=key)
    for name, png in PNGS.items():  # the cases' bytes arguments are the stored files
        assert reference[f"in/png_{name}"].tobytes() == png


_VALUE_CASES = [c for c in CASES if not c[0].startswith(("encode_", "glimpse_partial"))]
_ENCODE_CASES = [c for c in CASES if c[0].startswith("encode_")]


@pytest.mark.parametrize("case", _VALUE_CASES, ids=[c[0] for c in _VALUE_CASES])
def test_matches_tensorflow(reference, case):
    # decodes, indices and counts exact; float results in float32 (area sums, NMS
    # decayed scores, MS-SSIM's products of powers, bicubic with TF's table) to 1e-5
    tf1_reference.check_case(reference, case, rtol=1e-5, atol=1e-5)


_PAD_CASES = [c for c in _VALUE_CASES if c[1] == "image.resize_image_with_pad"]


@pytest.mark.parametrize("case", _PAD_CASES, ids=[c[0] for c in _PAD_CASES])
def test_resize_image_with_pad_of_sizes_known_only_at_run_time(reference, case):
    """TensorFlow's resize_image_with_pad cases again with the image's batch, height and
    width unknown while building (images of any size, as a TF1 input pipeline decodes
    them): the same values and gradients."""
    hidden = tf1_reference.hidden_axes(reference, case, kept=1)   # all but the channels
    tf1_reference.check_case(reference, case, rtol=1e-5, atol=1e-5, hidden_dims=hidden)


def test_resize_image_with_pad_checks_an_empty_image_at_run_time():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None, None, 3])
        y = image_more.resize_image_with_pad(x, 4, 6)
        sess = og.Session(g)
        assert sess.run(y, {x: np.ones((2, 3, 3, 3), np.float32)}).shape == (2, 4, 6, 3)
        with pytest.raises(ExecutionError, match="the image is empty"):
            sess.run(y, {x: np.ones((1, 0, 3, 3), np.float32)})


_MSSSIM_CASES = [c for c in _VALUE_CASES if c[1] == "image.ssim_multiscale"]


@pytest.mark.parametrize("case", _MSSSIM_CASES, ids=[c[0] for c in _MSSSIM_CASES])
def test_ssim_multiscale_of_sizes_known_only_at_run_time(reference, case):
    """TensorFlow's MS-SSIM cases (odd sizes among them) with every dim but the channels
    unknown while building: the same values and gradients."""
    hidden = tf1_reference.hidden_axes(reference, case, kept=1)
    tf1_reference.check_case(reference, case, rtol=1e-5, atol=1e-5, hidden_dims=hidden)


def test_ssim_multiscale_checks_the_image_size_at_run_time():
    # 3 scales of a 5-tap filter need sides of at least (5 - 1) * 4 + 1 = 17
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [None, None, None, 1])
        b = og.placeholder(og.float32, [None, None, None, 1])
        ms = image_more.ssim_multiscale(a, b, 1.0, power_factors=(0.3, 0.3, 0.4),
                                        filter_size=5)
        sess = og.Session(g)
        img = np.random.RandomState(0).rand(2, 17, 19, 1).astype(np.float32)
        got = sess.run(ms, {a: img, b: img})
        np.testing.assert_allclose(got, np.ones(2, np.float32), rtol=1e-5)
        with pytest.raises(ExecutionError, match="too small for 3 scales.*at least 17"):
            sess.run(ms, {a: img[:, :16], b: img[:, :16]})


@pytest.mark.parametrize("case", _ENCODE_CASES, ids=[c[0] for c in _ENCODE_CASES])
def test_encode_png_writes_tensorflows_bytes(reference, case):
    name = case[0]
    outs, _ = tf1_reference.run_case(reference, case)
    got = _bytes(outs[0])
    want = str(reference[f"out/{name}"].item()).encode("utf-8", "surrogateescape")
    if name not in _ZLIB_DEPENDENT:
        assert got == want
        return
    assert got != want, f"{name} now matches TF byte for byte: drop it from the list"
    mine, theirs = _chunks(got), _chunks(want)
    assert [c for c in mine if c[0] != b"IDAT"] == [c for c in theirs if c[0] != b"IDAT"]
    ours = b"".join(p for t, p in mine if t == b"IDAT")
    tfs = b"".join(p for t, p in theirs if t == b"IDAT")
    assert ours[:2] == tfs[:2]                                   # zlib header, window
    assert zlib.decompress(ours) == zlib.decompress(tfs)         # the same filtered rows
    idat_sizes = [len(p) for t, p in mine if t == b"IDAT"]
    assert all(n == 8192 for n in idat_sizes[:-1])               # libpng's chunking


@pytest.mark.parametrize("noise", ["uniform", "gaussian"])
def test_glimpse_leaving_the_image_is_tfs_inside_and_noise_outside(reference, noise):
    # TF's noise is its own random draw: compare the pixels inside the image exactly
    # and the noise's range (uniform: the image's [min, max]; gaussian: each channel's
    # range after clipping) and spread
    name = f"glimpse_partial_{noise}"
    img, offsets = reference["in/glimpse_img"], reference["in/glimpse_out"]
    want = reference[f"out/{name}"]

    def glimpse(kind):
        return _run(lambda: image_more.extract_glimpse(img, [4, 5], offsets, noise=kind,
                                                       uniform_noise=kind == "uniform"))

    exact = glimpse("zero")      # the image is > 0, so 0 marks the outside
    inside = exact != 0
    assert inside.any() and not inside.all()
    np.testing.assert_array_equal(want[inside], exact[inside])
    got = glimpse(noise)
    np.testing.assert_array_equal(got[inside], exact[inside])
    for b in range(img.shape[0]):
        for out in (want[b], got[b]):
            outside = out[~inside[b]]
            assert img[b].min() <= outside.min() and outside.max() <= img[b].max()
    spread = [np.std(o[~inside]) for o in (want, got)]
    assert 0.5 < spread[0] / spread[1] < 2.0, spread


# ------------------------------------------------------------------ round trips


_ENCODE_INPUTS = sorted(k for k in make_inputs() if k.startswith("enc_"))


@pytest.mark.parametrize("key", _ENCODE_INPUTS)
def test_encode_round_trips_and_pillow_reads_it(key):
    image = make_inputs()[key]
    for level in (-1, 0, 9):
        png = _bytes(_run(lambda: image_more.encode_png(image, compression=level)))
        dtype = "uint16" if image.dtype == np.uint16 else "uint8"
        back = _run(lambda: image_more.decode_png(png, dtype=dtype))
        np.testing.assert_array_equal(back, image)
    PIL = pytest.importorskip("PIL.Image", reason="Pillow (an independent PNG decoder) "
                              "is not installed")
    with PIL.open(io.BytesIO(png)) as img:
        img.load()
        seen = np.asarray(img)
    if seen.ndim == 3 and seen.shape[2] == 4 and image.shape[2] == 2:
        seen = seen[..., [0, 3]]  # Pillow reads 16-bit grey + alpha as RGBA
    if image.dtype == np.uint16 and image.shape[2] == 1:
        np.testing.assert_array_equal(seen.astype(np.int64), image[..., 0])
    elif image.dtype == np.uint16:  # Pillow reads 16-bit colour as 8 bits (high byte)
        np.testing.assert_array_equal(seen.reshape(image.shape), image >> 8)
    else:
        np.testing.assert_array_equal(seen.reshape(image.shape), image)


def _pillow_view(png: bytes):
    """Pillow's pixels of a PNG and the og decode (channels, dtype) they compare to:
    Pillow keeps palettes as indices and 16-bit colour as 8 bits, so this converts."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        img.load()
        if img.mode == "P":
            return np.asarray(img.convert("RGB")), 3, "uint8"
        if img.mode in ("I;16", "I;16B", "I"):
            return np.asarray(img).astype(np.int64)[..., None], 1, "uint16"
        if img.mode == "1":
            return np.asarray(img.convert("L"))[..., None], 1, "uint8"
        view = np.asarray(img)
        return (view[..., None] if view.ndim == 2 else view), (
            1 if view.ndim == 2 else view.shape[2]), "uint8"


# Pillow refuses a tRNS chunk of the wrong length; libpng (so TF and og) ignores it
@pytest.mark.parametrize("name", sorted(set(PNGS) - {"gray8_bad_trns"}))
def test_decode_agrees_with_pillow(name):
    pytest.importorskip("PIL.Image", reason="Pillow (an independent PNG decoder) is not "
                        "installed")
    want, channels, dtype = _pillow_view(PNGS[name])
    if channels == 2:  # TF (and og) take channels 0 for grey + alpha
        channels = 0
    got = _run(lambda: image_more.decode_png(PNGS[name], channels=channels, dtype=dtype))
    np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64))


# ------------------------------------------------------------------ corrupt files


def _with_crc(png: bytes, index: int, payload: bytes) -> bytes:
    """png with chunk `index`'s payload replaced (its CRC recomputed)."""
    chunks = _chunks(png)
    chunks[index] = (chunks[index][0], payload)
    out = png[:8]
    for tag, data in chunks:
        out += (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))
    return out


_GOOD = PNGS["rgb8"]
_IDAT = [k for k, (t, _) in enumerate(_chunks(PNGS["gray8"])) if t == b"IDAT"][0]
_RAW_IDAT = _chunks(PNGS["gray8"])[_IDAT][1]
_BAD_FILTER = zlib.compress(b"\x07" + bytes(13) + b"\x00" + bytes(13) * 7)
_CORRUPT = {
    "bad CRC": (_GOOD[:40] + bytes([_GOOD[40] ^ 1]) + _GOOD[41:], "CRC"),
    "truncated in a chunk": (_GOOD[:60], "truncated"),
    "truncated before IEND": (_GOOD[:-12], "truncated"),
    "signature only": (_GOOD[:8], "truncated"),
    # decode_image names no signature: it does not know the format
    "wrong signature": (b"\x89PNG\r\n\x1b\n" + _GOOD[8:], "signature|unknown image format"),
    "empty": (b"", "signature|unknown image format"),
    "zlib data corrupt": (_with_crc(PNGS["gray8"], _IDAT, b"\x78\x9c\xff\xff" + bytes(20)),
                          "corrupt"),
    "zlib stream cut short": (_with_crc(PNGS["gray8"], _IDAT, _RAW_IDAT[:len(_RAW_IDAT) // 2]),
                              "truncated"),
    "too little image data": (_with_crc(PNGS["gray8"], _IDAT, zlib.compress(bytes(20))),
                              "truncated"),
    "unknown filter type": (_with_crc(PNGS["gray8"], _IDAT, _BAD_FILTER), "filter"),
    "IHDR bit depth": (_with_crc(_GOOD, 0, _chunks(_GOOD)[0][1][:8] + b"\x03\x02\0\0\0"),
                       "bit depth"),
    "IHDR zero width": (_with_crc(_GOOD, 0, bytes(4) + _chunks(_GOOD)[0][1][4:]), "size"),
    "no IDAT": (_GOOD[:33] + _GOOD[-12:], "IDAT"),
    "palette index beyond PLTE": (write_png(np.asarray([[[0], [5]]]), 3, 8,
                                            palette=[[1, 2, 3]]), "palette index"),
    "palette without PLTE": (write_png(np.asarray([[[0]]]), 3, 8), "PLTE"),
    "unknown critical chunk": (_GOOD[:33] + struct.pack(">I", 0) + b"ABCD"
                               + struct.pack(">I", zlib.crc32(b"ABCD")) + _GOOD[33:],
                               "critical"),
}


@pytest.mark.parametrize("name", sorted(_CORRUPT))
def test_corrupt_png_raises_execution_error(name):
    data, words = _CORRUPT[name]
    for fn in (image_more.decode_png, image_more.decode_image):
        with pytest.raises(ExecutionError, match=words):
            _run(lambda: fn(data))


def test_random_damage_raises_only_execution_error():
    # flipped bytes (CRC then catches them) and damaged image data behind a valid CRC
    # (inflate, filters and sizes then catch it): decodes or ExecutionError, nothing else
    from onegraph.ops.image_more import _png_decode

    rng = np.random.RandomState(0)
    for name in ("rgb8", "palette2", "rgba16_interlaced", "gray4_interlaced"):
        png = PNGS[name]
        idat = [k for k, (t, _) in enumerate(_chunks(png)) if t == b"IDAT"][0]
        payload = _chunks(png)[idat][1]
        for _ in range(40):
            broken = bytearray(payload)
            for k in rng.randint(0, len(broken), rng.randint(1, 4)):
                broken[k] = rng.randint(0, 256)
            cut = bytes(broken[:rng.randint(1, len(broken) + 1)])
            for data in (_with_crc(png, idat, bytes(broken)), _with_crc(png, idat, cut),
                         png[:rng.randint(0, len(png))]):
                try:
                    _png_decode(data, 0, False, "DecodePng")
                except ExecutionError:
                    pass


# ------------------------------------------------------------------ other formats


@pytest.mark.parametrize("kind", ["rgb", "gray"])
def test_decode_image_decodes_jpeg_as_decode_jpeg(kind):
    # (with Pillow; tests/train/test_decode_jpeg.py compares the pixels with TF's)
    pytest.importorskip("PIL", reason="JPEG decoding needs Pillow")
    got = _run(lambda: image_more.decode_image(JPEGS[kind]))
    assert got.dtype == np.uint8 and got.shape[-1] == (3 if kind == "rgb" else 1)
    np.testing.assert_array_equal(got, _run(lambda: image_more.decode_jpeg(JPEGS[kind])))


def test_decode_image_refuses_gif_and_unknown_bytes():
    with pytest.raises(ExecutionError, match="GIF"):
        _run(lambda: image_more.decode_image(b"GIF89a" + bytes(20)))
    with pytest.raises(ExecutionError, match="unknown image format"):
        _run(lambda: image_more.decode_image(b"hello world"))


def test_bmp_decodes_to_its_pixels():
    pixels = np.random.RandomState(5).randint(0, 256, (5, 7, 3)).astype(np.uint8)
    np.testing.assert_array_equal(_run(lambda: image_more.decode_image(BMPS["bmp24"])),
                                  pixels)


def test_fetched_png_bytes_are_a_file_and_decode_from_a_tensor():
    image = make_inputs()["enc_u8_3"]
    g = og.Graph()
    with g.as_default():
        png = image_more.encode_png(og.constant(image))
        back = image_more.decode_png(png)
        shape = og.shape(back)
    got, data, dims = og.Session(g).run([back, png, shape])
    np.testing.assert_array_equal(got, image)
    assert _bytes(data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert list(dims) == [9, 11, 3]


# ------------------------------------------------------------------ build-time errors


def test_bad_arguments_are_refused_while_building():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="channels"):
            image_more.decode_png(PNGS["rgb8"], channels=2)
        with pytest.raises(TypeError, match="dtype"):
            image_more.decode_png(PNGS["rgb8"], dtype="float32")
        with pytest.raises(TypeError, match="string"):
            image_more.decode_png(np.zeros(3, np.uint8))
        with pytest.raises(TypeError, match="uint8 or uint16"):
            image_more.encode_png(np.zeros((2, 2, 3), np.float32))
        with pytest.raises(ShapeError, match="channels"):
            image_more.encode_png(np.zeros((2, 2, 5), np.uint8))
        with pytest.raises(ValueError, match="compression"):
            image_more.encode_png(np.zeros((2, 2, 3), np.uint8), compression=10)
        with pytest.raises(ShapeError, match="4-D"):
            image_more.resize_area(np.zeros((4, 4, 3), np.float32), [2, 2])
        with pytest.raises(ValueError, match="iou_threshold"):
            image_more.non_max_suppression_with_scores(np.zeros((2, 4), np.float32),
                                                       np.zeros(2, np.float32), 2,
                                                       iou_threshold=1.5)
        with pytest.raises(ShapeError, match="too small"):
            image_more.ssim_multiscale(np.zeros((1, 30, 30, 1), np.float32),
                                       np.zeros((1, 30, 30, 1), np.float32), 1.0)


# ------------------------------------------------------------------ random crops

_SDBB_BOXES = np.array([[[0.1, 0.2, 0.5, 0.6], [0.6, 0.5, 0.9, 0.95]]], np.float32)
_SDBB_CONFIGS = [dict(min_object_covered=0.5),
                 dict(min_object_covered=0.1, aspect_ratio_range=[0.5, 2.0],
                      area_range=[0.2, 0.6])]
# TF 2.21's tf.compat.v1.image.sample_distorted_bounding_box on a 40 x 60 image with
# _SDBB_BOXES (seed=1, seed2=2), 3000 draws per config: (mean, sd) of the crop's area
# fraction, aspect (w / h), top, left, height and width (recorded once by hand; TF
# draws from Philox, og from numpy, so only the distributions can agree)
_TF_SDBB_STATS = [
    {"area": (0.419, 0.1748), "aspect": (1.0458, 0.1668), "y": (4.265, 4.7961),
     "x": (13.97, 9.3412), "h": (30.4437, 6.4586), "w": (31.7003, 8.1275)},
    {"area": (0.3666, 0.1162), "aspect": (1.2443, 0.4308), "y": (5.7287, 5.0719),
     "x": (13.3253, 9.2632), "h": (27.4677, 6.002), "w": (32.3263, 8.4626)},
]


def _draws(config, count, seed=1):
    g = og.Graph()
    with g.as_default():
        begin, size, bbox = image_more.sample_distorted_bounding_box(
            np.array([40, 60, 3], np.int32), _SDBB_BOXES, seed=seed, **config)
    sess = og.Session(g)
    return [sess.run([begin, size, bbox]) for _ in range(count)]


@pytest.mark.parametrize("k", [0, 1])
def test_sample_distorted_bounding_box_keeps_its_constraints_and_tfs_distribution(k):
    config = _SDBB_CONFIGS[k]
    lo_ratio, hi_ratio = config.get("aspect_ratio_range", [0.75, 1.33])
    lo_area, hi_area = config.get("area_range", [0.05, 1.0])
    rows = []
    for begin, size, bbox in _draws(config, 3000):
        (y, x, zero), (h, w, minus_one) = begin, size
        assert zero == 0 and minus_one == -1 and begin.dtype == np.int32
        assert 0 <= y and y + h <= 40 and 0 <= x and x + w <= 60
        np.testing.assert_allclose(bbox[0, 0], [y / 40, x / 60, (y + h) / 40, (x + w) / 60],
                                   rtol=1e-6)
        # TF's kernel checks the integer area exactly; w = rint(h * ratio), h may move
        # by 1 to meet the area: the aspect is the drawn one within rounding
        assert lo_area * 2400 - 1e-3 <= h * w <= hi_area * 2400 + 1e-3
        assert lo_ratio - 1.0 / h <= w / h <= hi_ratio + 1.5 / h
        covered = []
        for b in _SDBB_BOXES[0]:
            by0, bx0, by1, bx1 = b * [40, 60, 40, 60]
            inter = max(0, min(y + h, by1) - max(y, by0)) * max(0, min(x + w, bx1) - max(x, bx0))
            covered.append(inter / ((by1 - by0) * (bx1 - bx0)))
        assert max(covered) >= config["min_object_covered"] - 1e-6
        rows.append([h * w / 2400, w / h, y, x, h, w])
    rows = np.asarray(rows, np.float64)
    for j, key in enumerate(["area", "aspect", "y", "x", "h", "w"]):
        mean, sd = _TF_SDBB_STATS[k][key]
        # two samples of 3000: the difference of means has sd * sqrt(2 / 3000); 5 of
        # those is far from a false alarm (p < 1e-6) and still catches a shifted rule
        assert abs(rows[:, j].mean() - mean) < 5 * sd * np.sqrt(2 / 3000), key
        assert abs(rows[:, j].std() - sd) < 0.1 * sd, key


def test_sample_distorted_bounding_box_is_seeded():
    first = _draws(_SDBB_CONFIGS[0], 5)
    again = _draws(_SDBB_CONFIGS[0], 5)         # a rebuilt graph, a new session
    other = _draws(_SDBB_CONFIGS[0], 5, seed=2)
    flat = [np.concatenate([b, s]) for b, s, _ in first]
    assert all(np.array_equal(a, np.concatenate([b, s])) for a, (b, s, _) in zip(flat, again))
    assert len({tuple(a) for a in flat}) > 1     # the stream advances run to run
    assert any(not np.array_equal(a, np.concatenate([b, s]))
               for a, (b, s, _) in zip(flat, other))


def test_sample_distorted_bounding_box_falls_back_to_the_image():
    # no crop of at most 10% of the image covers 90% of a box of half the image
    config = dict(min_object_covered=0.9, area_range=[0.05, 0.1], max_attempts=20)
    g = og.Graph()
    with g.as_default():
        out = image_more.sample_distorted_bounding_box(
            np.array([40, 60, 3], np.int64), np.array([[[0.0, 0.0, 0.7, 0.7]]], np.float32),
            seed=3, **config)
    begin, size, bbox = og.Session(g).run(list(out))
    assert list(begin) == [0, 0, 0] and list(size) == [40, 60, -1]
    assert begin.dtype == np.int64
    np.testing.assert_array_equal(bbox, [[[0, 0, 1, 1]]])
    with pytest.raises(ExecutionError, match="use_image_if_no_bounding_boxes"):
        _run(lambda: image_more.sample_distorted_bounding_box(
            np.array([4, 6, 3], np.int32), np.zeros((1, 0, 4), np.float32), seed=1)[0])


def test_composed_functions_export_and_run_in_onnxruntime():
    # resize_image_with_pad and ssim_multiscale are ONNX ops only, so they export
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime checks the export")
    from onegraph.convert import to_onnx

    rng = np.random.RandomState(4)
    a = rng.rand(2, 30, 28, 3).astype(np.float32)
    b = np.clip(a + rng.randn(*a.shape).astype(np.float32) * 0.1, 0, 1)
    g = og.Graph()
    with g.as_default():
        pa = og.placeholder(og.float32, [2, 30, 28, 3], name="a")
        pb = og.placeholder(og.float32, [2, 30, 28, 3], name="b")
        outs = {"pad": image_more.resize_image_with_pad(pa, 12, 20),
                "ms": image_more.ssim_multiscale(pa, pb, 1.0, power_factors=(0.3, 0.7),
                                                 filter_size=7)}
        sig = og.signature({"a": pa, "b": pb}, outs)
        want = og.Session(g).run(list(outs.values()), {pa: a, pb: b})
        proto = to_onnx(g, signatures={"serving": sig})
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(list(outs), {"a": a, "b": b})
    for key, x, y in zip(outs, got, want, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5, err_msg=key)


def test_ssim_multiscale_of_run_time_sizes_exports_and_runs_in_onnxruntime():
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime checks the export")
    from onegraph.convert import to_onnx

    rng = np.random.RandomState(5)
    g = og.Graph()
    with g.as_default():
        pa = og.placeholder(og.float32, [None, None, None, 3], name="a")
        pb = og.placeholder(og.float32, [None, None, None, 3], name="b")
        ms = image_more.ssim_multiscale(pa, pb, 1.0, power_factors=(0.3, 0.7),
                                        filter_size=7)
        proto = to_onnx(g, signatures={"serving": og.signature({"a": pa, "b": pb},
                                                               {"ms": ms})})
        sess = og.Session(g)
    ort_sess = ort.InferenceSession(proto.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
    for shape in ((2, 30, 28, 3), (1, 15, 21, 3)):   # even and odd sides
        a = rng.rand(*shape).astype(np.float32)
        b = np.clip(a + rng.randn(*shape).astype(np.float32) * 0.1, 0, 1)
        (got,) = ort_sess.run(["ms"], {"a": a, "b": b})
        np.testing.assert_allclose(got, sess.run(ms, {pa: a, pb: b}), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ robustness
# Found by fuzzing: hostile sizes, NaN and infinite coordinates, limits beyond int32.
# Each bad input is a named onegraph error (or a documented result), never a numpy,
# zlib or Python error, a hang or an enormous allocation.

from onegraph.ops import image_more as _ops  # noqa: E402


def _png_of_zero_rows(width: int, height: int, trailing_rows: int = 0) -> bytes:
    """A grey 8-bit PNG of `height` all-zero rows (filter 0) deflated at level 9, the
    stream carrying `trailing_rows` more rows than the header declares. Compressed a
    block at a time, so making a 16384 x 16384 one takes little memory."""
    comp = zlib.compressobj(9)
    block = (b"\0" + bytes(width)) * 256
    rows = height + trailing_rows
    stream = b"".join([comp.compress(block) for _ in range(rows // 256)]
                      + [comp.compress(block[:(rows % 256) * (width + 1)]), comp.flush()])
    head = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"".join([b"\x89PNG\r\n\x1a\n", _ops._chunk(b"IHDR", head),
                     _ops._chunk(b"IDAT", stream), _ops._chunk(b"IEND", b"")])


def _png_header_only(width: int, height: int, color_type: int = 0, depth: int = 8) -> bytes:
    """A PNG whose IHDR declares width x height, with a token IDAT (a size check that
    happens before inflating never looks at it)."""
    head = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 0)
    return b"".join([b"\x89PNG\r\n\x1a\n", _ops._chunk(b"IHDR", head),
                     _ops._chunk(b"IDAT", zlib.compress(bytes(16))),
                     _ops._chunk(b"IEND", b"")])


def test_png_decompression_bomb_is_refused_before_inflating():
    # 261 KB declaring 16384 x 16384 grey: 268 MB of rows, which the decoder used to
    # inflate and then widen to int64 (~4.7 GB)
    import tracemalloc

    bomb = _png_of_zero_rows(16384, 16384)
    assert len(bomb) < 300_000
    tracemalloc.start()
    try:
        with pytest.raises(ExecutionError, match=r"16384 x 16384 .*268,451,840 bytes.*"
                                                 r"limit of 268,435,456 bytes"):
            _ops._png_decode(bomb, 0, False, "DecodePng")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"refusing the bomb took {peak:,} bytes"
    for fn in (image_more.decode_png, image_more.decode_image):
        with pytest.raises(ExecutionError, match="over the limit"):
            _run(lambda: fn(bomb))


@pytest.mark.parametrize("width, height, color_type, depth, channels, dtype, words", [
    (2 ** 31 - 1, 2 ** 31 - 1, 0, 8, 0, "uint8", "2147483647 x 2147483647"),
    (1 << 20, 1 << 20, 6, 16, 0, "uint8", r"RGBA, 16-bit"),        # the samples
    (9000, 9000, 0, 1, 4, "uint16", "as 4 channels of uint16"),   # 10 MB of rows
])
def test_png_limit_counts_the_declared_size_in_python_ints(width, height, color_type, depth,
                                                           channels, dtype, words):
    png = _png_header_only(width, height, color_type, depth)
    with pytest.raises(ExecutionError, match=words):
        _run(lambda: image_more.decode_png(png, channels=channels, dtype=dtype))
    # the same 1-bit file as one grey channel is within the limit: only its (token)
    # image data is wrong
    if depth == 1:
        with pytest.raises(ExecutionError, match="truncated"):
            _run(lambda: image_more.decode_png(png))


def test_png_data_past_its_rows_is_not_inflated():
    # 32 MiB of rows beyond the 4 x 4 the header declares: inflating stops at the
    # declared rows (the rest is dropped, as libpng drops "extra compressed data")
    import tracemalloc

    png = _png_of_zero_rows(4, 4, trailing_rows=(32 << 20) // 5)
    tracemalloc.start()
    try:
        got = _ops._png_decode(png, 0, False, "DecodePng")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(got, np.zeros((4, 4, 1), np.uint8))
    assert peak < 4 << 20, f"decoding took {peak:,} bytes"


_MEMORY_PNGS = {  # (colour type, depth, samples per pixel, interlaced, palette)
    "rgb8": (2, 8, 3, False, None),
    "palette2": (3, 2, 1, False, [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]),
    "rgba16_interlaced": (6, 16, 4, True, None),
    "gray4_interlaced": (0, 4, 1, True, None),
}


@pytest.mark.parametrize("name", sorted(_MEMORY_PNGS))
def test_png_decoding_holds_samples_in_small_integers(name):
    # the decoder's working memory is a small multiple of the image (it widened every
    # sample to int64: 50 to 120 bytes a pixel here, now 6 to 45)
    import tracemalloc

    ctype, depth, per_pixel, interlace, palette = _MEMORY_PNGS[name]
    h, w = 96, 80
    pixels = np.random.RandomState(9).randint(0, 4 if palette else 1 << depth,
                                              (h, w, per_pixel))
    png = write_png(pixels, ctype, depth, palette=palette, interlace=interlace)
    samples = h * w * per_pixel * (2 if depth == 16 else 1)
    for channels, bits16 in ((0, False), (4, True), (1, False)):
        want = _ops._png_decode(png, channels, bits16, "DecodePng")
        tracemalloc.start()
        try:
            got = _ops._png_decode(png, channels, bits16, "DecodePng")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        np.testing.assert_array_equal(got, want)
        assert peak < 8 * samples + 24 * h * w + got.nbytes, (channels, peak)


def _unfilter_by_the_spec(data: np.ndarray, ftypes, bpp: int) -> np.ndarray:
    """PNG's five filters undone byte by byte, as the specification writes them."""
    out = np.zeros_like(data)
    prev = [0] * data.shape[1]
    for r, kind in enumerate(ftypes):
        cur = data[r].astype(np.int64).tolist()
        for i in range(len(cur)):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            paeth = a if pa <= pb and pa <= pc else b if pb <= pc else c
            cur[i] = (cur[i] + (0, a, b, (a + b) >> 1, paeth)[kind]) & 255
        out[r] = cur
        prev = cur
    return out


@pytest.mark.parametrize("bpp", [1, 2, 3, 4, 6, 8])
def test_png_unfilter_by_diagonals_is_the_per_byte_rule(bpp):
    # passes of at least 32 x 32 pixels with Average or Paeth rows are undone by
    # anti-diagonals, others row by row: both are the specification's byte rules
    rng = np.random.RandomState(bpp)
    for rows, width in ((32, 32), (45, 70), (90, 33), (31, 40)):
        ftypes = rng.randint(0, 5, rows).astype(np.uint8)
        data = rng.randint(0, 256, (rows, width * bpp)).astype(np.uint8)
        data[rows // 2:, ::3] = 7  # runs of equal bytes: Paeth's ties
        raw = np.concatenate([ftypes[:, None], data], axis=1).tobytes()
        got = _ops._unfilter(memoryview(raw), rows, width * bpp, bpp, "DecodePng")
        np.testing.assert_array_equal(got, _unfilter_by_the_spec(data, ftypes, bpp),
                                      err_msg=f"{rows} x {width}")


def _python_lines(fn):
    """The number of Python lines of onegraph's code that running fn() executes."""
    import sys

    count = [0]

    def in_function(frame, event, arg):
        if event == "line":
            count[0] += 1
        return in_function

    def on_call(frame, event, arg):
        return in_function if "onegraph" in frame.f_globals.get("__name__", "") else None

    sys.settrace(on_call)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count[0]


def test_png_of_paeth_rows_decodes_in_numpy_steps():
    """Paeth rows are unfiltered in numpy steps along diagonals: the Python lines run
    grow with the image's side, not with its area (a per-byte loop took ~6 s on a 4096 x
    4096 image). Counted, not timed, so a loaded machine cannot fail it."""
    def paeth_png(side):
        comp = zlib.compressobj(9)
        stream = comp.compress((b"\x04" + bytes(side)) * side) + comp.flush()
        head = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
        return b"".join([b"\x89PNG\r\n\x1a\n", _ops._chunk(b"IHDR", head),
                         _ops._chunk(b"IDAT", stream), _ops._chunk(b"IEND", b"")])

    small, large = paeth_png(128), paeth_png(512)
    lines_small = _python_lines(lambda: _ops._png_decode(small, 0, False, "DecodePng"))
    lines_large = _python_lines(lambda: _ops._png_decode(large, 0, False, "DecodePng"))
    assert lines_large < 6 * lines_small, (lines_small, lines_large)  # area: 16x
    got = _ops._png_decode(large, 0, False, "DecodePng")
    assert got.shape == (512, 512, 1) and not got.any()


def test_png_round_trips_through_diagonal_unfiltering():
    # larger than the fixtures: libpng-style adaptive filters (ours) and write_png's
    # filters in turn, so whole passes go through the diagonals
    rng = np.random.RandomState(11)
    smooth = np.cumsum(rng.randint(0, 3, (60, 75, 3)), axis=1).astype(np.uint8)
    png = _bytes(_run(lambda: image_more.encode_png(smooth)))
    np.testing.assert_array_equal(_run(lambda: image_more.decode_png(png)), smooth)
    deep = rng.randint(0, 1 << 16, (40, 50, 2))
    for interlace in (False, True):
        png = write_png(deep, 4, 16, interlace=interlace)
        np.testing.assert_array_equal(_ops._png_decode(png, 0, True, "DecodePng"), deep)


def test_draw_bounding_boxes_skips_nan_boxes_and_puts_infinity_beyond_the_edge():
    images = np.zeros((1, 6, 8, 1), np.float32)

    def draw(box):
        return _run(lambda: image_more.draw_bounding_boxes(
            images, np.asarray([[box]], np.float64)))

    for box in ([np.nan, 0.1, 0.5, 0.5], [0.1, 0.1, np.nan, 0.5], [np.nan] * 4):
        np.testing.assert_array_equal(draw(box), images)        # no position: not drawn
    # corners far past the bottom right: the top and left edges (row int(0.2 * 5),
    # column int(0.25 * 7)) drawn to the image's edge, nothing else
    far = draw([0.2, 0.25, 1e30, 1e30])
    assert far[0, 1, 1:, 0].all() and far[0, 1:, 1, 0].all() and far.sum() == 7 + 5 - 1
    for big in (np.inf, 3e38, 1e300):          # 3e38 * 5 and 1e300 overflow float32
        np.testing.assert_array_equal(draw([0.2, 0.25, big, big]), far)
    np.testing.assert_array_equal(draw([-np.inf, -np.inf, np.inf, np.inf]), images)
    np.testing.assert_array_equal(draw([-1e300, -1e300, -1e300, -1e300]), images)


def test_draw_bounding_boxes_on_grey_images_with_given_colors():
    # grey images overwrite the colour table's first column: a constant colors array
    # (read-only when fed to the kernel) made that a numpy error
    out = _run(lambda: image_more.draw_bounding_boxes(
        np.zeros((1, 4, 4, 1), np.float32), np.asarray([[[0, 0, 1, 1]]], np.float32),
        colors=og.constant(np.asarray([[0.5, 0.5, 0.5, 1]], np.float32))))
    assert out[0, 0, :, 0].tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_extract_glimpse_refuses_non_finite_offsets(bad):
    img = np.ones((2, 5, 6, 1), np.float32)
    offsets = np.asarray([[0.0, 0.0], [0.1, bad]], np.float32)
    with pytest.raises(ExecutionError, match=r"offsets\[1\] = \[0\.1.*is not finite"):
        _run(lambda: image_more.extract_glimpse(img, [2, 3], offsets))


@pytest.mark.parametrize("normalized", [True, False])
def test_extract_glimpse_far_outside_is_all_noise(normalized):
    # offsets whose scaling overflows float32 (3e38 * width) or is beyond any index
    img = np.ones((3, 5, 6, 1), np.float32)
    offsets = np.asarray([[3e38, 3e38], [-3e38, 1e30], [1e20, -1e20]], np.float32)
    got = _run(lambda: image_more.extract_glimpse(img, [2, 3], offsets, normalized=normalized,
                                                  uniform_noise=False, noise="zero"))
    np.testing.assert_array_equal(got, np.zeros((3, 2, 3, 1), np.float32))


@pytest.mark.parametrize("fn, size, depths, words", [
    (image_more.extract_glimpse, [2 ** 31 - 1, 2 ** 31 - 1], (1, 0), "glimpses"),
    (image_more.resize_area, [2 ** 31 - 1, 2 ** 31 - 1], (1, 0), "resized images"),
    (image_more.resize_area, [2 ** 27, 1], (1,), "area weights"),  # 1 GiB out, 12 of taps
])
def test_huge_output_sizes_are_refused_before_allocating(fn, size, depths, words):
    # an empty depth still counts: numpy cannot even shape [1, 2^31, 2^31, 0]
    for depth in depths:
        img = np.ones((1, 5, 6, depth), np.float32)
        args = (img, size) + ((np.zeros((1, 2), np.float32),)
                              if fn is image_more.extract_glimpse else ())
        with pytest.raises(ExecutionError, match=f"{words}.*over the limit"):
            _run(lambda: fn(*args))


def test_resize_area_is_separable_and_quick():
    # the dense 3-operand einsum took ~10 s for this 256 x 256 image
    import time

    rng = np.random.RandomState(7)
    x = rng.rand(1, 256, 256, 3).astype(np.float32)
    start = time.perf_counter()
    got = _run(lambda: image_more.resize_area(x, [128, 128]))
    assert time.perf_counter() - start < 2.0
    np.testing.assert_allclose(got, x.reshape(1, 128, 2, 128, 2, 3).mean(axis=(2, 4)),
                               rtol=1e-5, atol=1e-6)
    wide = rng.rand(1, 1, 100000, 1).astype(np.float32)   # 80 GB as a dense matrix
    np.testing.assert_allclose(_run(lambda: image_more.resize_area(wide, [1, 4])),
                               wide.reshape(1, 1, 4, 25000).mean(-1)[..., None], rtol=1e-5)


_NMS_BOXES = np.asarray([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3], [0, 4, 1, 5]],
                        np.float32)
_NMS_SCORES = np.asarray([0.9, 0.8, 0.7, 0.6], np.float32)


@pytest.mark.parametrize("limit", [2 ** 31 - 1, 2 ** 31, 2 ** 40, 2 ** 63 - 1,
                                   np.int64(2 ** 40)])
def test_nms_limits_beyond_int32_select_every_box(limit):
    for fn in (image_more.non_max_suppression_with_scores,
               image_more.non_max_suppression_padded):
        idx, _ = _run(lambda: fn(_NMS_BOXES, _NMS_SCORES, limit))
        assert idx.tolist() == [0, 2, 3]
    overlaps = np.eye(4, dtype=np.float32)
    got = _run(lambda: image_more.non_max_suppression_overlaps(overlaps, _NMS_SCORES, limit))
    assert got.tolist() == [0, 1, 2, 3]


def test_nms_limit_tensors_keep_their_integer_type():
    # an int64 limit of 2^40 was cast to int32 (0): nothing was selected
    idx, _ = _run(lambda: image_more.non_max_suppression_with_scores(
        _NMS_BOXES, _NMS_SCORES, og.constant(np.int64(2 ** 40))))
    assert idx.tolist() == [0, 2, 3]
    with pytest.raises(ExecutionError, match="max_output_size -1 must be >= 0"):
        _run(lambda: image_more.non_max_suppression_with_scores(
            _NMS_BOXES, _NMS_SCORES, og.constant(np.int64(-1)))[0])


def test_nms_bad_limits_are_named_errors():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="must be >= 0, got -1"):
            image_more.non_max_suppression_with_scores(_NMS_BOXES, _NMS_SCORES, -1)
        with pytest.raises(ValueError, match="beyond the int64 range"):
            image_more.non_max_suppression_padded(_NMS_BOXES, _NMS_SCORES, 10 ** 20)
        with pytest.raises(TypeError, match="max_output_size must be an int"):
            image_more.non_max_suppression_overlaps(np.eye(4), _NMS_SCORES, 2.0)
        with pytest.raises(TypeError, match="iou_threshold must be numbers"):
            image_more.non_max_suppression_with_scores(_NMS_BOXES, _NMS_SCORES, 2,
                                                       iou_threshold=og.constant("x"))
        with pytest.raises(TypeError, match="boxes must be numbers"):
            image_more.combined_non_max_suppression(og.constant(np.full((1, 4, 1, 4), "a")),
                                                    np.zeros((1, 4, 2), np.float32), 1, 2)
    # padded to a limit whose result is gigabytes: refused, not allocated
    with pytest.raises(ExecutionError, match="padded selection.*over the limit"):
        _run(lambda: image_more.non_max_suppression_padded(
            _NMS_BOXES, _NMS_SCORES, 2 ** 40, pad_to_max_output_size=True)[0])
    with pytest.raises(ExecutionError, match="detections.*over the limit"):
        _run(lambda: image_more.combined_non_max_suppression(
            _NMS_BOXES[None, :, None], np.tile(_NMS_SCORES[None, :, None], (1, 1, 2)),
            2, 2 ** 40)[0])


def test_combined_nms_pad_per_class_stops_at_max_total_size():
    # pad_per_class with max_total_size below max_output_size_per_class * classes:
    # the count was not capped by the result's size (an IndexError)
    boxes = np.asarray([[[[0, 0, 1, 1]], [[0, 2, 1, 3]], [[0, 4, 1, 5]]]], np.float32)
    scores = np.asarray([[[0.9, 0.5], [0.8, 0.4], [0.7, 0.3]]], np.float32)
    out_boxes, out_scores, out_classes, valid = _run(
        lambda: image_more.combined_non_max_suppression(boxes, scores, 3, 4,
                                                        pad_per_class=True,
                                                        clip_boxes=False))
    assert valid.tolist() == [4] and out_boxes.shape == (1, 4, 4)
    np.testing.assert_allclose(out_scores, [[0.9, 0.8, 0.7, 0.5]])
    assert out_classes.tolist() == [[0, 0, 0, 1]]


def test_nms_of_many_boxes_needs_no_pairwise_matrix():
    # 20000 boxes: the n x n IOU matrix (and its temporaries) took gigabytes
    import tracemalloc

    rng = np.random.RandomState(3)
    boxes = rng.rand(20000, 4).astype(np.float32)
    boxes[:, 2:] = boxes[:, :2] + 0.05
    scores = rng.rand(20000).astype(np.float32)
    tracemalloc.start()
    try:
        picked, kept = _ops._soft_nms(
            lambda i, js: _ops._iou_with(_ops._box_corners(boxes), i, js), scores, 50,
            np.float32(0.5), np.float32(-np.inf), 0.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(picked) == 50 and peak < 64 << 20, peak
    idx, sc = _run(lambda: image_more.non_max_suppression_with_scores(boxes, scores, 50))
    assert idx.tolist() == picked and sc.tolist() == [float(s) for s in kept]


def test_sample_distorted_bounding_box_edge_values():
    boxes = np.asarray([[[0.1, 0.2, 0.5, 0.6]]], np.float32)

    def sample(**kwargs):
        args = dict(image_size=np.asarray([40, 60, 3], np.int32), bounding_boxes=boxes,
                    seed=1)
        args.update(kwargs)
        return _run(lambda: list(image_more.sample_distorted_bounding_box(**args)))

    # ranges whose float32 bounds are 0 or infinite
    for kwargs in (dict(aspect_ratio_range=[1e-300, 1.0]), dict(aspect_ratio_range=[1, 1e300]),
                   dict(area_range=[1e-300, 1e-300]), dict(aspect_ratio_range=[np.nan, 1])):
        with pytest.raises(ExecutionError, match="positive float32"):
            sample(**kwargs)
    # coverage no crop can reach: the whole image at once, however many attempts
    for covered in (1.5, np.nan):
        begin, size, _ = sample(min_object_covered=covered, max_attempts=10 ** 12)
        assert begin.tolist() == [0, 0, 0] and size.tolist() == [40, 60, -1]
    # a huge image: float32 sides overflow for extreme ratios, no crop of those
    begin, size, _ = sample(image_size=np.asarray([2 ** 62, 2 ** 62, 3], np.int64),
                            aspect_ratio_range=[1e-30, 1e30])
    assert begin.dtype == np.int64
    # seeds: negative, and numpy ints beyond int32
    sample(seed=-5, seed2=np.int64(2 ** 40))
    g = og.Graph()
    with g.as_default(), pytest.raises(TypeError, match="image_size must be integers"):
        image_more.sample_distorted_bounding_box([40.0, 60.0, 3.0], boxes)


def test_build_time_refusals_found_by_fuzzing():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(ShapeError, match="smaller than filter_size"):   # not 4 TiB
            image_more.ssim_multiscale(np.zeros((1, 32, 32, 1), np.float32),
                                       np.zeros((1, 32, 32, 1), np.float32), 1.0,
                                       filter_size=2 ** 40)
        with pytest.raises(TypeError, match="power_factors must be a list"):
            image_more.ssim_multiscale(np.zeros((1, 32, 32, 1), np.float32),
                                       np.zeros((1, 32, 32, 1), np.float32), 1.0,
                                       power_factors=None)
        with pytest.raises(ShapeError, match="empty image"):                 # 0 / 0
            image_more.resize_image_with_pad(np.zeros((1, 0, 4, 3), np.float32), 4, 4)
        with pytest.raises(ValueError, match="fit int32"):
            image_more.resize_image_with_pad(np.zeros((1, 2, 4, 3), np.float32), 2 ** 31, 4)
        with pytest.raises(TypeError, match="offsets must be numbers"):
            image_more.extract_glimpse(np.zeros((1, 4, 4, 1), np.float32), [2, 2],
                                       og.constant(np.full((1, 2), "a")))
        with pytest.raises(TypeError, match="boxes must be numbers"):
            image_more.draw_bounding_boxes(np.zeros((1, 4, 4, 1), np.float32),
                                           og.constant(np.full((1, 1, 4), "a")))


_KERNEL_EDGES = [np.float32(np.nan), np.float32(np.inf), np.int64(-1), np.int64(2 ** 62),
                 np.zeros(0, np.float32), np.asarray("s", object), np.asarray(True),
                 np.asarray([np.nan, 1.0]), np.asarray([2 ** 31, 2 ** 31], np.int64),
                 np.zeros((0, 5, 6, 3), np.float32), np.full((1, 2, 4), np.nan, np.float32),
                 np.full((6, 4), np.inf, np.float32), np.full((1, 2), np.nan, np.float32)]
_KERNEL_CASES = {
    "DrawBoundingBoxes": (_ops._draw_boxes_kernel, {},
                          [np.zeros((1, 5, 6, 3), np.float32),
                           np.full((1, 2, 4), 0.5, np.float32), None]),
    "ResizeArea": (_ops._resize_area_kernel, {"align_corners": 1},
                   [np.zeros((1, 5, 6, 3), np.float32), np.asarray([3, 4], np.int64)]),
    "ExtractGlimpse": (_ops._glimpse_kernel,
                       {"centered": 1, "normalized": 1, "noise": "uniform"},
                       [np.ones((1, 5, 6, 3), np.float32), np.asarray([3, 4], np.int64),
                        np.zeros((1, 2), np.float32)]),
    "NonMaxSuppressionV5": (_ops._nms_v5_kernel, {"pad_to_max_output_size": 1},
                            [_NMS_BOXES, _NMS_SCORES, np.int32(3), np.float32(0.5),
                             np.float32(-np.inf), np.float32(0)]),
    "NonMaxSuppressionWithOverlaps": (_ops._nms_overlaps_kernel, {},
                                      [np.eye(4, dtype=np.float32), _NMS_SCORES, np.int32(3),
                                       np.float32(0.5), np.float32(-np.inf)]),
    "CombinedNonMaxSuppression": (_ops._combined_nms_kernel,
                                  {"pad_per_class": 0, "clip_boxes": 1},
                                  [_NMS_BOXES[None, :, None], _NMS_SCORES[None, :, None],
                                   np.int32(2), np.int32(4), np.float32(0.5),
                                   np.float32(-np.inf)]),
    "SampleDistortedBoundingBox": (_ops._sample_box_kernel,
                                   {"seed": 1.0, "aspect_ratio_range": [0.75, 1.33],
                                    "area_range": [0.05, 1.0], "max_attempts": 100,
                                    "use_image_if_no_bounding_boxes": 1},
                                   [np.asarray([40, 60, 3], np.int32),
                                    np.asarray([[[0.1, 0.2, 0.5, 0.6]]], np.float32),
                                    np.float32(0.1)]),
}


@pytest.mark.parametrize("op", sorted(_KERNEL_CASES))
def test_kernels_raise_only_onegraph_errors_on_edge_inputs(op):
    # the kernels run in the Session and in the mobile interpreter alike: each input
    # in turn takes each edge value; a result or a OneGraphError, nothing else
    from onegraph.errors import OneGraphError
    from onegraph.ops.registry import KernelContext

    kernel, attrs, valid = _KERNEL_CASES[op]
    kernel(list(valid), attrs, KernelContext())
    for k in range(len(valid)):
        for value in _KERNEL_EDGES:
            inputs = list(valid)
            inputs[k] = value
            try:
                kernel(inputs, attrs, KernelContext())
            except OneGraphError:
                pass

"""ImageDecoder beyond the node tests: lossless formats decode to the exact pixels they
were written from, pixel formats, and named errors for bad streams and attributes."""

import io
import subprocess
import sys

import numpy as np
import pytest

from onegraph.errors import ExecutionError, OpAttributeError, ShapeError
from onegraph.ops import get_op

PIL = pytest.importorskip("PIL.Image")

_KERNEL = get_op("ImageDecoder").kernel


def _encode(pixels, fmt):
    buf = io.BytesIO()
    PIL.fromarray(pixels).save(buf, format=fmt)
    return np.frombuffer(buf.getvalue(), np.uint8)


@pytest.mark.parametrize("fmt", ["PNG", "BMP", "TIFF", "PPM"])
def test_lossless_formats_give_the_written_pixels(fmt):
    rgb = np.random.default_rng(0).integers(0, 256, (7, 5, 3), dtype=np.uint8)
    stream = _encode(rgb, fmt)
    (out,) = _KERNEL([stream], {"pixel_format": "RGB"}, None)
    np.testing.assert_array_equal(out, rgb)
    (bgr,) = _KERNEL([stream], {"pixel_format": "BGR"}, None)
    np.testing.assert_array_equal(bgr, rgb[:, :, ::-1])
    assert bgr.flags.c_contiguous
    (gray,) = _KERNEL([stream], {"pixel_format": "Grayscale"}, None)
    assert gray.shape == (7, 5, 1) and gray.dtype == np.uint8
    # ITU-R 601 luma, as Pillow's L conversion (rounded)
    luma = (rgb @ np.array([299, 587, 114]) + 500) // 1000
    assert np.max(np.abs(gray[:, :, 0].astype(int) - luma)) <= 1


def test_grayscale_and_palette_sources_come_out_rgb():
    gray = np.arange(12, dtype=np.uint8).reshape(3, 4) * 20
    (out,) = _KERNEL([_encode(gray, "PNG")], {"pixel_format": "RGB"}, None)
    np.testing.assert_array_equal(out, np.repeat(gray[:, :, None], 3, axis=2))
    pal = PIL.fromarray(gray).convert("P")
    buf = io.BytesIO()
    pal.save(buf, format="PNG")
    (out,) = _KERNEL([np.frombuffer(buf.getvalue(), np.uint8)], {}, None)
    assert out.shape == (3, 4, 3)


@pytest.mark.parametrize("stream, attrs, error, match", [
    (np.frombuffer(b"not an image at all", np.uint8), {}, ExecutionError,
     r"ImageDecoder: cannot decode 19 bytes"),
    (np.zeros(0, np.uint8), {}, ExecutionError, r"cannot decode 0 bytes"),
    (np.zeros((2, 3), np.uint8), {}, ShapeError, r"1-D uint8"),
    (np.zeros(4, np.float32), {}, ShapeError, r"1-D uint8"),
    (np.zeros(4, np.uint8), {"pixel_format": "RGBA"}, OpAttributeError,
     r"pixel_format 'RGBA'"),
])
def test_bad_inputs_are_named_errors(stream, attrs, error, match):
    with pytest.raises(error, match=match):
        _KERNEL([stream], attrs, None)


def test_truncated_png_is_an_execution_error():
    stream = _encode(np.zeros((16, 16, 3), np.uint8), "PNG")
    with pytest.raises(ExecutionError, match="cannot decode"):
        _KERNEL([stream[: len(stream) // 2]], {}, None)


def test_without_pillow_says_how_to_get_it():
    """With Pillow unimportable, the error names the extra to install."""
    code = ("import sys; sys.modules['PIL'] = None\n"
            "import numpy as np\n"
            "from onegraph.ops import get_op\n"
            "from onegraph.errors import UnsupportedOpError\n"
            "try:\n"
            "    get_op('ImageDecoder').kernel([np.zeros(4, np.uint8)], {}, None)\n"
            "except UnsupportedOpError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert "pip install 'onegraph[image]'" in out.stdout, out.stderr

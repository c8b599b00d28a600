"""Operators: the rest of TF's image codecs (onegraph domain).

DecodeGif (every frame, composed as TF's gif decoder does: ops/gif.py, numpy and the
standard library only), DecodeBmp (TF's BMP reader: 8/24/32 bits, bottom-up or
top-down rows, the file size checked against the header as TF checks it), and
DecodeImageAll, decode_image's op that reads PNG, JPEG, GIF (first frame or all) and
BMP. EncodeJpeg, EncodeJpegVariableQuality and DecodeAndCropJpeg go through Pillow's
libjpeg (the `image` extra; UnsupportedOpError when run without it): the JFIF density
and the XMP segment are written into the file as TF's encoder writes them.

A file TF would refuse is an InvalidArgumentError (TF's error class) saying what is
wrong.
"""

from __future__ import annotations

import struct

import numpy as np

from ..errors import ExecutionError, InvalidArgumentError, OpAttributeError, \
    UnsupportedOpError
from . import gif
from .image_more import _as_bytes, _as_string, _image_format, _jpeg_decode, _png_decode
from .registry import TensorInfo, define

_OBJ = np.dtype(object)
_MAX_PIXELS = 1 << 28  # GIF frames' indices in all: past this the file is refused
_XMP_HEADER = b"http://ns.adobe.com/xap/1.0/\0"


# ---------------------------------------------------------------------------------------
# GIF


def _gif_frames(data: bytes, first_only: bool, op: str) -> np.ndarray:
    """A GIF's frames, uint8 (n, h, w, 3) (n is 1 when first_only), as TF's decoder.

    Raises:
        InvalidArgumentError: the GIF is corrupt, truncated or has a bad palette.
    """
    try:
        images = gif.parse(data, _MAX_PIXELS)
        return gif.frames(images, 1 if first_only else None)
    except gif.GifError as e:
        raise InvalidArgumentError(f"{op}: invalid GIF data (size {len(data)}): {e}") from e


def _decode_gif_kernel(inputs, attrs, ctx):
    """DecodeGif: every frame of a GIF, uint8 (frames, h, w, 3); a PNG or JPEG is one
    RGB frame, as TF's DecodeGif reads those too."""
    op = "DecodeGif"
    data = _as_bytes(inputs[0], op)
    kind = _image_format(data)
    if kind == "png":
        return (_png_decode(data, 3, False, op)[None],)
    if kind == "jpeg":
        return (_jpeg_pixels(data, 3, 1, op)[None],)
    if kind != "gif":
        raise InvalidArgumentError(f"{op}: the bytes are not a GIF (nor PNG or JPEG): "
                                   f"they start with {data[:6]!r}")
    return (_gif_frames(data, False, op),)


def _decode_gif_infer(attrs, inputs):
    return [TensorInfo(np.dtype(np.uint8), (None, None, None, 3))]


# ---------------------------------------------------------------------------------------
# BMP


def bmp_decode(data: bytes, channels: int, op: str) -> np.ndarray:
    """TF's BMP reader: uint8 (h, w, c) of an uncompressed 8, 24 or 32-bit BMP whose
    pixels start at the header's offset and fill the rest of the file exactly; BGR(A)
    becomes RGB(A), 8-bit values are grey (the palette is not applied, as in TF).
    channels 0 keeps the file's 1, 3 or 4; 3 drops alpha or repeats grey; 4 adds an
    opaque alpha.

    Raises:
        InvalidArgumentError: channels 1, fewer than 32 bytes, a bit depth other than
            8/24/32, a size that is not positive, or a file size that does not match
            the header's offset plus the rows.
    """
    if channels == 1:
        raise InvalidArgumentError(f"{op}: channels must be 0, 3 or 4 for BMP, got 1")
    if channels not in (0, 3, 4):
        raise OpAttributeError(f"{op}: channels must be 0, 3 or 4, got {channels}")
    if len(data) < 32:
        raise InvalidArgumentError(f"{op}: incomplete BMP: the header needs 32 bytes, got "
                                   f"{len(data)}")
    offset, = struct.unpack("<i", data[10:14])
    width, height = struct.unpack("<ii", data[18:26])
    bpp, = struct.unpack("<h", data[28:30])
    native = bpp // 8
    if native not in (1, 3, 4):
        raise InvalidArgumentError(f"{op}: a BMP must have 1, 3 or 4 channels (8, 24 or "
                                   f"32 bits a pixel), this one has {bpp} bits")
    if width <= 0:
        raise InvalidArgumentError(f"{op}: BMP width must be positive, got {width}")
    if height == 0:
        raise InvalidArgumentError(f"{op}: BMP height must be nonzero")
    if offset < 0:
        raise InvalidArgumentError(f"{op}: BMP pixel offset must be nonnegative, got "
                                   f"{offset}")
    rows = abs(height)
    if width * rows >= (2 ** 31 - 1) // 8:
        raise InvalidArgumentError(f"{op}: BMP size {width} x {rows} is too large")
    row = (native * width + 3) // 4 * 4
    diff = len(data) - offset - row * rows
    if diff != 0:
        raise InvalidArgumentError(f"{op}: BMP size should be the pixel offset {offset} "
                                   f"plus {rows} rows of {row} bytes, but differs by {diff}")
    px = np.frombuffer(data, np.uint8, row * rows, offset).reshape(rows, row)
    px = px[:, :native * width].reshape(rows, width, native)
    if height > 0:  # bottom-up rows, the usual layout
        px = px[::-1]
    want = channels or native
    if native == 1:
        out = np.repeat(px, 3, axis=2) if want >= 3 else px
    else:
        out = px[..., [2, 1, 0, 3][:min(native, want)]]
    if want == 4 and out.shape[2] == 3:
        out = np.concatenate([out, np.full(out.shape[:2] + (1,), 255, np.uint8)], -1)
    return np.ascontiguousarray(out)


def _decode_bmp_kernel(inputs, attrs, ctx):
    """DecodeBmp: BMP bytes to uint8 (h, w, c), TF's channels (0, 3 or 4)."""
    op = "DecodeBmp"
    data = _as_bytes(inputs[0], op)
    if _image_format(data) != "bmp":
        kind = _image_format(data)
        raise InvalidArgumentError(f"{op}: the bytes are not a BMP (they are "
                                   f"{'of unknown format' if kind == 'unknown' else kind}):"
                                   f" use decode_image for other formats")
    return (bmp_decode(data, int(attrs["channels"]), op),)


def _channels_infer(attrs, inputs):
    c = int(attrs["channels"])
    return [TensorInfo(np.dtype(np.uint8), (None, None, c or None))]


# ---------------------------------------------------------------------------------------
# DecodeImageAll


def _decode_image_all_kernel(inputs, attrs, ctx):
    """DecodeImageAll: PNG, JPEG, GIF or BMP bytes to (h, w, c) of uint8/uint16; a
    GIF gives (frames, h, w, 3) when expand_animations, else its first frame."""
    op = "DecodeImage"
    data = _as_bytes(inputs[0], op)
    dtype, channels = attrs["dtype"], int(attrs["channels"])
    kind = _image_format(data)
    if kind == "png":
        return (_png_decode(data, channels, dtype == "uint16", op),)
    if kind == "gif":
        if channels not in (0, 3):
            raise InvalidArgumentError(f"{op}: channels must be 0 or 3 for GIF, got "
                                       f"{channels}")
        out = _gif_frames(data, not int(attrs["expand_animations"]), op)
        out = out if int(attrs["expand_animations"]) else out[0]
    elif kind == "bmp":
        out = bmp_decode(data, channels, op)
    elif kind == "jpeg":
        if channels not in (0, 1, 3):
            raise InvalidArgumentError(f"{op}: a JPEG decodes to 1 or 3 channels, asked "
                                       f"{channels} (channels 0, 1 or 3)")
        out = _jpeg_pixels(data, channels, 1, op)
    else:
        raise InvalidArgumentError(f"{op}: unknown image file format: the first bytes are "
                                   f"{data[:4]!r}; one of JPEG, PNG, GIF or BMP is needed")
    return (out.astype(np.uint16) * 257 if dtype == "uint16" else out,)


def _decode_image_all_infer(attrs, inputs):
    if not int(attrs["expand_animations"]):
        c = int(attrs["channels"])
        return [TensorInfo(np.dtype(attrs["dtype"]), (None, None, c or None))]
    # rank 3, or 4 for an animated GIF: not known until the bytes are read
    return [TensorInfo(np.dtype(attrs["dtype"]), None)]


# ---------------------------------------------------------------------------------------
# JPEG through Pillow


def _jpeg_pixels(data: bytes, channels: int, ratio: int, op: str) -> np.ndarray:
    """image_more's libjpeg decode, a corrupt file as TF's InvalidArgumentError."""
    try:
        return _jpeg_decode(data, channels, ratio, op)
    except UnsupportedOpError:
        raise
    except ExecutionError as e:
        raise InvalidArgumentError(str(e)) from e


_UNITS = {"in": 1, "cm": 2}


def jpeg_encode(image: np.ndarray, fmt: str, quality: int, progressive: bool,
                optimize: bool, chroma_downsampling: bool, density_unit: str,
                x_density: int, y_density: int, xmp: bytes, op: str) -> bytes:
    """A JPEG file of uint8 (h, w, 1 or 3) pixels by Pillow's libjpeg with TF's
    settings (4:2:0 chroma unless chroma_downsampling is False), its JFIF density and
    XMP APP1 segment written as TF's encoder writes them.

    Raises:
        InvalidArgumentError: not 3-D, channels other than the format's (1 for
            'grayscale', 3 for 'rgb', 1 or 3 for ''), quality outside [0, 100], an
            empty image.
        OpAttributeError: a format, density unit or density TF does not take.
        UnsupportedOpError: Pillow is not installed (onegraph[image]).
    """
    image = np.asarray(image)
    if image.dtype != np.uint8:
        raise InvalidArgumentError(f"{op}: image must be uint8, got {image.dtype}")
    if image.ndim != 3:
        raise InvalidArgumentError(f"{op}: image must be 3-dimensional, got shape "
                                   f"{list(image.shape)}")
    want = {"": image.shape[2], "grayscale": 1, "rgb": 3}.get(fmt)
    if want is None:
        raise OpAttributeError(f"{op}: format must be '', 'grayscale' or 'rgb', got "
                               f"{fmt!r:.40}")
    if want not in (1, 3) or image.shape[2] != want:
        raise InvalidArgumentError(f"{op}: image must have {want if fmt else '1 or 3'} "
                                   f"channels for format {fmt!r}, got shape "
                                   f"{list(image.shape)}")
    if not 0 <= quality <= 100:
        raise InvalidArgumentError(f"{op}: quality must be in [0, 100], got {quality}")
    if density_unit not in _UNITS:
        raise OpAttributeError(f"{op}: density_unit must be 'in' or 'cm', got "
                               f"{density_unit!r:.40}")
    for what, v in (("x_density", x_density), ("y_density", y_density)):
        if not 0 <= v <= 0xFFFF:
            raise OpAttributeError(f"{op}: {what} must be in [0, 65535], got {v}")
    if image.size == 0:
        raise InvalidArgumentError(f"{op}: cannot encode an empty image (shape "
                                   f"{list(image.shape)})")
    try:
        import io

        from PIL import Image
    except ImportError as e:
        raise UnsupportedOpError(f"{op}: encoding JPEG needs Pillow: pip install "
                                 f"'onegraph[image]'") from e
    pil = Image.fromarray(image[:, :, 0] if want == 1 else image, "L" if want == 1 else "RGB")
    buf = io.BytesIO()
    # libjpeg samples a grey image 1x1 (Pillow's 4:2:0 would mark it 2x2, as TF does not)
    sampling = 2 if chroma_downsampling and want == 3 else 0
    pil.save(buf, "JPEG", quality=max(quality, 1), progressive=bool(progressive),
             optimize=bool(optimize), subsampling=sampling)
    data = bytearray(buf.getvalue())
    if data[2:4] != b"\xff\xe0" or data[6:11] != b"JFIF\0":
        raise ExecutionError(f"{op}: Pillow wrote no JFIF header to set the density in")
    # TF's encoder always states the density (300 dpi unless told otherwise)
    data[13:18] = struct.pack(">BHH", _UNITS[density_unit], x_density, y_density)
    if xmp:
        end = 4 + struct.unpack(">H", data[4:6])[0]
        payload = _XMP_HEADER + xmp
        if len(payload) + 2 > 0xFFFF:
            raise InvalidArgumentError(f"{op}: xmp_metadata is too long for a JPEG "
                                       f"segment ({len(xmp)} bytes)")
        data[end:end] = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    return bytes(data)


def _encode_attrs(attrs) -> dict:
    return {"fmt": attrs["format"], "progressive": int(attrs["progressive"]),
            "optimize": int(attrs["optimize_size"]),
            "chroma_downsampling": int(attrs["chroma_downsampling"]),
            "density_unit": attrs["density_unit"], "x_density": int(attrs["x_density"]),
            "y_density": int(attrs["y_density"]),
            "xmp": attrs["xmp_metadata"].encode("utf-8", "surrogateescape")}


def _encode_jpeg_kernel(inputs, attrs, ctx):
    """EncodeJpeg: uint8 (h, w, c) to a JPEG file (a scalar string)."""
    data = jpeg_encode(inputs[0], quality=int(attrs["quality"]), op="EncodeJpeg",
                       **_encode_attrs(attrs))
    return (_as_string(data),)


_ENCODE_ATTRS = [("format", "string", ""), ("progressive", "int", 0),
                 ("optimize_size", "int", 0), ("chroma_downsampling", "int", 1),
                 ("density_unit", "string", "in"), ("x_density", "int", 300),
                 ("y_density", "int", 300), ("xmp_metadata", "string", "")]


def _variable_quality_kernel(inputs, attrs, ctx):
    """EncodeJpegVariableQuality: uint8 (h, w, c) and a scalar int quality to a JPEG
    file with TF's default settings."""
    op = "EncodeJpegVariableQuality"
    q = np.asarray(inputs[1])
    if q.ndim != 0 or q.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{op}: quality must be an integer scalar, got "
                                   f"{q.dtype} of shape {list(q.shape)}")
    data = jpeg_encode(inputs[0], "", int(q), False, False, True, "in", 300, 300, b"", op)
    return (_as_string(data),)


def _string_infer(attrs, inputs):
    return [TensorInfo(_OBJ, ())]


def _decode_crop_kernel(inputs, attrs, ctx):
    """DecodeAndCropJpeg: the window [y, x, h, w] of a decoded JPEG (after the ratio's
    scaling), uint8 (h, w, c)."""
    op = "DecodeAndCropJpeg"
    channels, ratio = int(attrs["channels"]), int(attrs["ratio"])
    if channels not in (0, 1, 3):
        raise OpAttributeError(f"{op}: channels must be 0, 1 or 3, got {channels}")
    if ratio not in (1, 2, 4, 8):
        raise OpAttributeError(f"{op}: ratio must be 1, 2, 4 or 8, got {ratio}")
    window = np.asarray(inputs[1])
    if window.shape != (4,) or window.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{op}: crop_window must be 4 integers [y, x, height, "
                                   f"width], got {window.dtype} of shape "
                                   f"{list(window.shape)}")
    pixels = _jpeg_pixels(_as_bytes(inputs[0], op), channels, ratio, op)
    y, x, h, w = (int(v) for v in window)
    rows, cols = pixels.shape[:2]
    if h <= 0 or w <= 0 or y < 0 or x < 0 or y + h > rows or x + w > cols:
        raise InvalidArgumentError(f"{op}: invalid crop window [y={y}, x={x}, height={h}, "
                                   f"width={w}] for a {rows} x {cols} image")
    return (np.ascontiguousarray(pixels[y:y + h, x:x + w]),)


OPS = (
    define("DecodeAndCropJpeg", ["contents", "crop_window"], ["image"], _decode_crop_kernel,
           [("channels", "int", 0), ("ratio", "int", 1)], infer=_channels_infer,
           domain="onegraph"),
    define("DecodeBmp", ["contents"], ["image"], _decode_bmp_kernel,
           [("channels", "int", 0)], infer=_channels_infer, domain="onegraph"),
    define("DecodeGif", ["contents"], ["image"], _decode_gif_kernel,
           infer=_decode_gif_infer, domain="onegraph"),
    define("DecodeImageAll", ["contents"], ["image"], _decode_image_all_kernel,
           [("channels", "int", 0), ("dtype", "string", "uint8"),
            ("expand_animations", "int", 1)],
           infer=_decode_image_all_infer, domain="onegraph"),
    define("EncodeJpeg", ["image"], ["contents"], _encode_jpeg_kernel,
           [("quality", "int", 95)] + _ENCODE_ATTRS, infer=_string_infer,
           domain="onegraph"),
    define("EncodeJpegVariableQuality", ["images", "quality"], ["contents"],
           _variable_quality_kernel, infer=_string_infer, domain="onegraph"),
)

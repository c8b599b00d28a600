"""The rest of TF1's image codecs in og.image (and og.io): decode_gif, decode_bmp,
decode_image for GIF too, encode_jpeg, decode_and_crop_jpeg, adjust_jpeg_quality and
random_jpeg_quality.

GIF and BMP are decoded by onegraph-domain kernels in numpy (ops/image_codecs.py,
ops/gif.py), so they need no extra package; the JPEG ones need Pillow when the graph
runs (the `image` extra: UnsupportedOpError without it), as og.image.decode_jpeg does.
Encoded images are string tensors (str standing for bytes by UTF-8 with
surrogateescape, see train/image_more.py).
"""

from __future__ import annotations

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_extra
from . import graph as _g
from . import image as _image_mod
from .api import _bool_arg, _int_arg, _t
from .graph import Tensor
from .image_more import _DCT_METHODS, _channels, _contents, _decode_options, _named

__all__ = ["adjust_jpeg_quality", "decode_and_crop_jpeg", "decode_bmp", "decode_gif",
           "decode_image", "encode_jpeg", "random_jpeg_quality"]

_FLOATS = (DType.FLOAT16, DType.FLOAT32, DType.FLOAT64)


def decode_gif(contents, name=None) -> Tensor:
    """Every frame of a GIF as uint8 [frames, height, width, 3] (tf.io.decode_gif),
    composed as TF's decoder does: the canvas is the largest frame's size, each frame
    starts from the one before (disposal is not applied, as in TF), transparent pixels
    keep what was there (black in the first frame). PNG or JPEG bytes give one frame,
    as in TF.

    Raises:
        TypeError: contents is not a string.
        ShapeError: contents is not a scalar.
        InvalidArgumentError (when run): not a GIF, truncated or corrupt, no colour
            map, or an index past its colour map.
    """
    _g.check_name(name, "decode_gif")
    t = _contents(contents, "decode_gif")
    return t.graph.op("DecodeGif", [t], name=name, domain="onegraph")


def decode_bmp(contents, channels=0, name=None) -> Tensor:
    """A BMP's uint8 [height, width, channels] pixels (tf.io.decode_bmp): uncompressed
    8, 24 or 32 bits a pixel, bottom-up or top-down rows; channels 0 keeps the file's,
    3 drops alpha (or repeats grey), 4 adds an opaque alpha.

    Raises:
        TypeError: contents is not a string.
        ValueError: channels is not 0, 1, 3 or 4 (1 fails when run, as in TF).
        InvalidArgumentError (when run): not a BMP, channels 1, a bit depth other
            than 8/24/32, or a file size that does not match its header.
    """
    _g.check_name(name, "decode_bmp")
    t = _contents(contents, "decode_bmp")
    c = _channels(channels, (0, 1, 3, 4), "decode_bmp")
    return t.graph.op("DecodeBmp", [t], {"channels": c}, name=name, domain="onegraph")


def decode_image(contents, channels=None, dtype=DType.UINT8, name=None,
                 expand_animations=True) -> Tensor:
    """A PNG, JPEG, GIF or BMP image's pixels (tf.image.decode_image): [height, width,
    channels], or [frames, height, width, 3] for a GIF when expand_animations (its
    first frame otherwise); dtype uint8 or uint16, or a float type (scaled to [0, 1]
    as convert_image_dtype does). JPEG needs Pillow when run (the `image` extra).

    Raises:
        TypeError: contents is not a string, dtype not uint8/uint16/float, or
            expand_animations not a bool.
        ValueError: channels is not None, 0, 1, 3 or 4.
        InvalidArgumentError (when run): an unknown or corrupt file, or channels the
            format does not take (GIF 0/3, JPEG 0/1/3, BMP 0/3/4).
        UnsupportedOpError (when run): a JPEG without Pillow installed.
    """
    _g.check_name(name, "decode_image")
    expand = _bool_arg(expand_animations, "decode_image: expand_animations")
    t = _contents(contents, "decode_image")
    d = _g.as_dtype(dtype) if not isinstance(dtype, DType) else dtype
    c = _channels(channels, (0, 1, 3, 4), "decode_image")
    if d not in (DType.UINT8, DType.UINT16) + _FLOATS:
        raise TypeError(f"decode_image: dtype must be uint8, uint16 or a float type, got "
                        f"{d.short_name}")
    raw = DType.UINT16 if d in _FLOATS else d
    y = t.graph.op("DecodeImageAll", [t], {"channels": c, "dtype": raw.numpy.name,
                                           "expand_animations": int(expand)},
                   domain="onegraph")
    if d in _FLOATS:
        y = _image_mod.convert_image_dtype(y, d)
    return _named(y, name)


def _jpeg_attrs(fmt, progressive, optimize_size, chroma_downsampling, density_unit,
                x_density, y_density, xmp_metadata) -> dict:
    """encode_jpeg's checked options as the EncodeJpeg op's attributes.

    Raises:
        TypeError: a flag is not a bool, a density not an int, a string not a str.
        ValueError: format, density_unit or a density out of TF's range.
    """
    what = "encode_jpeg"
    if fmt not in ("", "grayscale", "rgb"):
        raise ValueError(f"{what}: format must be '', 'grayscale' or 'rgb', got {fmt!r:.40}")
    if density_unit not in ("in", "cm"):
        raise ValueError(f"{what}: density_unit must be 'in' or 'cm', got "
                         f"{density_unit!r:.40}")
    dens = {}
    for key, v in (("x_density", x_density), ("y_density", y_density)):
        dens[key] = _int_arg(v, f"{what}: {key}")
        if not 0 <= dens[key] <= 0xFFFF:
            raise ValueError(f"{what}: {key} must be in [0, 65535] (a JFIF field), got "
                             f"{dens[key]}")
    if isinstance(xmp_metadata, bytes):
        xmp_metadata = xmp_metadata.decode("utf-8", "surrogateescape")
    if not isinstance(xmp_metadata, str):
        raise TypeError(f"{what}: xmp_metadata must be a str, got "
                        f"{type(xmp_metadata).__name__}")
    return {"format": fmt, "progressive": int(_bool_arg(progressive, f"{what}: progressive")),
            "optimize_size": int(_bool_arg(optimize_size, f"{what}: optimize_size")),
            "chroma_downsampling": int(_bool_arg(chroma_downsampling,
                                                 f"{what}: chroma_downsampling")),
            "density_unit": density_unit, "xmp_metadata": xmp_metadata, **dens}


def _uint8_image(image, what: str) -> Tensor:
    """image as a uint8 tensor of rank 3 (where known).

    Raises:
        TypeError: image is not uint8.
        ValueError: image is known not to be 3-D.
    """
    x = _t(image)
    if x.dtype != DType.UINT8:
        raise TypeError(f"{what}: image must be uint8, got {x.dtype.short_name}")
    if x.shape is not None and len(x.shape) != 3:
        raise ValueError(f"{what}: image must be 3-D [height, width, channels], got shape "
                         f"{list(x.shape)}")
    return x


def encode_jpeg(image, format="", quality=95, progressive=False,  # noqa: A002 - TF's name
                optimize_size=False, chroma_downsampling=True, density_unit="in",
                x_density=300, y_density=300, xmp_metadata="", name=None) -> Tensor:
    """The JPEG file (a scalar string) of a uint8 [height, width, 1 or 3] image
    (tf.image.encode_jpeg), written by libjpeg through Pillow when run (the `image`
    extra) with TF's settings: format '' takes the image's channels, 'grayscale' needs
    1 and 'rgb' 3; quality 0-100; progressive; optimize_size (optimal Huffman tables);
    chroma_downsampling (4:2:0, else 4:4:4); the JFIF density (density_unit 'in' or
    'cm', x/y_density); xmp_metadata as an XMP APP1 segment. For the same libjpeg the
    bytes are TF's.

    Raises:
        TypeError: image is not uint8, or an option of the wrong type.
        ValueError: image known not 3-D, quality outside [0, 100], format or
            density_unit not TF's, a density outside [0, 65535].
        InvalidArgumentError (when run): channels the format does not take, an
            empty image.
        UnsupportedOpError (when run): Pillow is not installed.
    """
    _g.check_name(name, "encode_jpeg")
    x = _uint8_image(image, "encode_jpeg")
    q = _int_arg(quality, "encode_jpeg: quality")
    if not 0 <= q <= 100:
        raise ValueError(f"encode_jpeg: quality must be in [0, 100], got {q}")
    attrs = _jpeg_attrs(format, progressive, optimize_size, chroma_downsampling,
                        density_unit, x_density, y_density, xmp_metadata)
    return x.graph.op("EncodeJpeg", [x], {"quality": q, **attrs}, name=name,
                      domain="onegraph")


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1,
                         dct_method="", name=None) -> Tensor:
    """The window crop_window = [y, x, height, width] of a JPEG's pixels
    (tf.image.decode_and_crop_jpeg): the values of decode_jpeg (with the same
    channels and ratio) then that crop. Needs Pillow when run (the `image` extra).

    Raises:
        TypeError: contents is not a string, crop_window not integers.
        ValueError: channels, ratio, dct_method or a TF-only option as decode_jpeg.
        ShapeError: crop_window is known not to have shape [4].
        InvalidArgumentError (when run): corrupt JPEG, or a window that is empty or
            not inside the (scaled) image.
        UnsupportedOpError (when run): Pillow is not installed.
    """
    what = "decode_and_crop_jpeg"
    _g.check_name(name, what)
    t = _contents(contents, what)
    attrs = _decode_options(channels, ratio, fancy_upscaling, try_recover_truncated,
                            acceptable_fraction, dct_method, what)
    w = _t(crop_window, graph=t.graph)
    if w.dtype not in (DType.INT32, DType.INT64):
        raise TypeError(f"{what}: crop_window must be int32 or int64, got "
                        f"{w.dtype.short_name}")
    if w.shape is not None and tuple(w.shape) not in ((4,), (None,)):
        raise ShapeError(f"{what}: crop_window must have shape [4] ([y, x, height, "
                         f"width]), got {list(w.shape)}")
    y = t.graph.op("DecodeAndCropJpeg", [t, w], attrs, domain="onegraph")
    return _named(y, name)


def adjust_jpeg_quality(image, jpeg_quality, dct_method="", name=None) -> Tensor:
    """image after a JPEG round trip at jpeg_quality (tf.image.adjust_jpeg_quality):
    converted to uint8 (saturating), encoded (TF's default settings), decoded with the
    image's channels and converted back to its dtype. jpeg_quality is an int or an int
    tensor in [0, 100]. Needs Pillow when run (the `image` extra); libjpeg's accurate
    DCT decodes, as TF's dct_method 'INTEGER_ACCURATE' (its default is a few levels
    away).

    Raises:
        TypeError: jpeg_quality is not an integer, or image not a numeric image.
        ValueError: image's channels are not known to be 1 or 3, jpeg_quality (a
            Python int) outside [0, 100], dct_method not TF's.
        InvalidArgumentError (when run): a quality tensor outside [0, 100].
        UnsupportedOpError (when run): Pillow is not installed.
    """
    what = "adjust_jpeg_quality"
    _g.check_name(name, what)
    if dct_method not in _DCT_METHODS:
        raise ValueError(f"{what}: dct_method must be one of {list(_DCT_METHODS)}, got "
                         f"{dct_method!r:.40}")
    x = _t(image)
    if x.shape is None or len(x.shape) < 1 or x.shape[-1] not in (1, 3):
        got = "an unknown shape" if x.shape is None else f"shape {list(x.shape)}"
        raise ValueError(f"{what}: image must have 1 or 3 channels known when building, "
                         f"got {got}")
    if isinstance(jpeg_quality, Tensor):
        q = jpeg_quality
        if q.dtype not in (DType.INT32, DType.INT64):
            raise TypeError(f"{what}: jpeg_quality must be an integer, got "
                            f"{q.dtype.short_name}")
    else:
        value = _int_arg(jpeg_quality, f"{what}: jpeg_quality")
        if not 0 <= value <= 100:
            raise ValueError(f"{what}: jpeg_quality must be in [0, 100], got {value}")
        q = api.constant(value, dtype=DType.INT32)
    orig = x.dtype
    u8 = _image_mod.convert_image_dtype(x, DType.UINT8, saturate=True)
    data = x.graph.op("EncodeJpegVariableQuality", [u8, q], domain="onegraph")
    out = x.graph.op("DecodeJpeg", [data], {"channels": int(x.shape[-1]), "ratio": 1},
                     domain="onegraph")
    out = _image_mod.convert_image_dtype(out, orig, saturate=True)
    return _named(out, name)


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None) -> Tensor:
    """adjust_jpeg_quality at a quality drawn uniformly from the integers in
    [min_jpeg_quality, max_jpeg_quality) (tf.image.random_jpeg_quality); seeds as
    og.random_uniform's.

    Raises:
        TypeError: a bound is not an int.
        ValueError: a bound outside [0, 100], or min_jpeg_quality >= max_jpeg_quality.
    """
    lo = _int_arg(min_jpeg_quality, "random_jpeg_quality: min_jpeg_quality")
    hi = _int_arg(max_jpeg_quality, "random_jpeg_quality: max_jpeg_quality")
    if not (0 <= lo <= 100 and 0 <= hi <= 100):
        raise ValueError(f"random_jpeg_quality: jpeg encoding range must be between 0 and "
                         f"100, got [{lo}, {hi})")
    if lo >= hi:
        raise ValueError(f"random_jpeg_quality: min_jpeg_quality must be less than "
                         f"max_jpeg_quality, got {lo} and {hi}")
    q = api_extra.random_uniform([], lo, hi, dtype=DType.INT32, seed=seed)
    return adjust_jpeg_quality(image, q)


# og.image is train/image.py: these join its names (decode_image replaces
# image_more's, which cannot read GIF)
for _name in __all__:
    setattr(_image_mod, _name, globals()[_name])
_image_mod.__all__ = sorted(set(_image_mod.__all__) | set(__all__))

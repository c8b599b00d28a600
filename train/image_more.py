"""More of TF1's tf.image: the PNG codec (decode_png, encode_png, decode_image for PNG
and BMP, is_jpeg, extract_jpeg_shape), draw_bounding_boxes, resize_area (also as
ResizeMethod.AREA of resize_images/resize), resize_image_with_pad, the NMS variants
(non_max_suppression_with_scores / _padded / _overlaps, combined_non_max_suppression),
ssim_multiscale, and og's extract_image_patches / random_crop under their tf.image
names.

The codec, area resize, box drawing and NMS variants are onegraph-domain kernels
(ops/image_more.py); resize_image_with_pad and ssim_multiscale are compositions of
ONNX ops, so they export. Encoded images are string tensors: og's strings are str
standing for bytes by UTF-8 with surrogateescape, so
`s.encode("utf-8", "surrogateescape")` of a fetched encode_png result is the file.
Decoding takes str or bytes.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_compat
from . import api_extra
from . import api_math
from . import api_random
from . import graph as _g
from . import image as _image_mod
from . import nn
from .api import _bool_arg, _int_arg, _t
from .api_extra import _op_seed, _python_number
from .debugging import Assert
from .graph import Tensor
from .image import ResizeMethod, _image, _resize_size, _unbatched
from .image_quality import (_as_unit_float, _fold_channels, _gaussian, _image_rank,
                            _plane_mean, _ssim_terms, _unfold_channels)

__all__ = [
    "combined_non_max_suppression", "decode_image", "decode_jpeg", "decode_png",
    "draw_bounding_boxes", "encode_png", "extract_glimpse", "extract_image_patches",
    "extract_jpeg_shape",
    "extract_patches",
    "is_jpeg", "non_max_suppression_overlaps", "non_max_suppression_padded",
    "non_max_suppression_with_scores", "random_crop", "resize_area",
    "resize_image_with_pad", "sample_distorted_bounding_box",
    "ssim_multiscale",
]

extract_image_patches = api_compat.extract_image_patches
random_crop = api_random.random_crop


def _contents(contents, what: str) -> Tensor:
    """A scalar string tensor of encoded bytes (bytes, str or a tensor).

    Raises:
        TypeError: contents is not a string.
        ShapeError: contents is not a scalar (where known).
    """
    t = _t(contents)
    if t.dtype != DType.STRING:
        raise TypeError(f"{what}: contents must be a string tensor, got "
                        f"{t.dtype.short_name}")
    if t.shape is not None and len(t.shape) != 0:
        raise ShapeError(f"{what}: contents must be a scalar string, got shape "
                         f"{list(t.shape)}")
    return t


def _codec_dtype(dtype, allowed: tuple, what: str) -> DType:
    d = _g.as_dtype(dtype) if not isinstance(dtype, DType) else dtype
    if d not in allowed:
        raise TypeError(f"{what}: dtype must be one of "
                        f"{[a.short_name for a in allowed]}, got {d.short_name}")
    return d


def _channels(channels, allowed: tuple, what: str) -> int:
    c = _int_arg(0 if channels is None else channels, f"{what}: channels")
    if c not in allowed:
        raise ValueError(f"{what}: channels must be one of {list(allowed)}, got {c}")
    return c


def _named(t: Tensor, name) -> Tensor:
    return api.identity(t, name=name) if name is not None else t


def _real(value, what: str, graph=None) -> Tensor:
    """value as a tensor of numbers (any int or float dtype), for boxes, scores,
    offsets and thresholds that are then cast to float: a string or bool tensor is
    refused here rather than failing in the Cast when run.

    Raises:
        TypeError: value is a string or bool tensor (names `what`).
    """
    t = _t(value, graph=graph)
    if t.dtype in (DType.STRING, DType.BOOL):
        raise TypeError(f"{what} must be numbers, got {t.dtype.short_name}")
    return t


# --------------------------------------------------------------------------- codecs

def decode_png(contents, channels=0, dtype=DType.UINT8, name=None) -> Tensor:
    """The [height, width, channels] pixels of a PNG (tf.image.decode_png): every
    colour type and bit depth, palettes, tRNS and interlacing. channels 0 keeps the
    file's (a palette with tRNS gives 4), 1 converts to grey (libpng's weights), 3 to
    RGB, 4 adds alpha (opaque, or from tRNS); dtype uint8 (16-bit files keep their
    high byte) or uint16 (8-bit values times 257).

    Raises:
        TypeError: contents is not a string, or dtype not uint8/uint16.
        ValueError: channels is not 0, 1, 3 or 4.
        ShapeError: contents is not a scalar.
        ExecutionError (when run): the bytes are not a valid PNG: wrong signature,
            truncated, a bad CRC, corrupt image data.

    Example:
        >>> img = og.image.decode_png(open("cat.png", "rb").read(), channels=3)
    """
    _g.check_name(name, "decode_png")
    t = _contents(contents, "decode_png")
    d = _codec_dtype(dtype, (DType.UINT8, DType.UINT16), "decode_png")
    c = _channels(channels, (0, 1, 3, 4), "decode_png")
    return t.graph.op("DecodePng", [t], {"channels": c, "dtype": d.numpy.name}, name=name,
                      domain="onegraph")


def encode_png(image, compression=-1, name=None) -> Tensor:
    """The PNG file (a scalar string) of a uint8 or uint16 [height, width, channels]
    image of 1 to 4 channels (grey, grey + alpha, RGB, RGBA), as tf.image.encode_png;
    compression is zlib's level, -1 its default. Written as TF's libpng writer does,
    so the bytes match TF's for the same zlib.

    Raises:
        TypeError: image is not uint8/uint16, or compression not an int.
        ValueError: compression is outside [-1, 9].
        ShapeError: image is not 3-D with 1 to 4 channels (where known).
    """
    _g.check_name(name, "encode_png")
    x = _t(image)
    if x.dtype not in (DType.UINT8, DType.UINT16):
        raise TypeError(f"encode_png: image must be uint8 or uint16, got "
                        f"{x.dtype.short_name}")
    if x.shape is not None and (len(x.shape) != 3 or x.shape[2] not in (None, 1, 2, 3, 4)):
        raise ShapeError(f"encode_png: image must be [height, width, channels] with 1 to 4 "
                         f"channels, got shape {list(x.shape)}")
    level = _int_arg(compression, "encode_png: compression")
    if not -1 <= level <= 9:
        raise ValueError(f"encode_png: compression must be in [-1, 9], got {level}")
    return x.graph.op("EncodePng", [x], {"compression": level}, name=name,
                      domain="onegraph")


_DCT_METHODS = ("", "INTEGER_FAST", "INTEGER_ACCURATE")


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="",
                name=None) -> Tensor:
    """A JPEG image's uint8 [height, width, channels] pixels (tf.image.decode_jpeg),
    decoded by libjpeg through Pillow when the graph runs (the `image` extra):
    channels 0 keeps the file's (1 or 3), 1 is its luma, 3 RGB; ratio 2, 4 or 8
    scales down while decoding. libjpeg's accurate DCT decodes every image: TF's
    dct_method "INTEGER_ACCURATE" gives the same pixels, its default (INTEGER_FAST)
    ones a few levels away.

    Raises:
        TypeError: contents is not a string, or a flag not a bool.
        ValueError: channels not 0, 1 or 3, ratio not 1, 2, 4 or 8, dct_method not
            '', 'INTEGER_FAST' or 'INTEGER_ACCURATE', or a TF option onegraph's decoder
            does not offer (fancy_upscaling=False, try_recover_truncated=True,
            acceptable_fraction below 1).
        ExecutionError (when run): the bytes are not a JPEG, or are corrupt.
        UnsupportedOpError (when run): Pillow is not installed.
    """
    what = "decode_jpeg"
    _g.check_name(name, what)
    t = _contents(contents, what)
    attrs = _decode_options(channels, ratio, fancy_upscaling, try_recover_truncated,
                            acceptable_fraction, dct_method, what)
    y = t.graph.op("DecodeJpeg", [t], attrs, domain="onegraph")
    return _named(y, name)


def _decode_options(channels, ratio, fancy_upscaling, try_recover_truncated,
                    acceptable_fraction, dct_method, what: str) -> dict:
    """decode_jpeg's options checked as it checks them: the op's channels and ratio.

    Raises:
        TypeError: a flag is not a bool.
        ValueError: channels not 0, 1 or 3, ratio not 1, 2, 4 or 8, dct_method not
            TF's, or a TF option onegraph's decoder does not offer.
    """
    c = _channels(channels, (0, 1, 3), what)
    r = _int_arg(ratio, f"{what}: ratio")
    if r not in (1, 2, 4, 8):
        raise ValueError(f"{what}: ratio must be 1, 2, 4 or 8, got {r}")
    if dct_method not in _DCT_METHODS:
        raise ValueError(f"{what}: dct_method must be one of {list(_DCT_METHODS)}, got "
                         f"{dct_method!r:.40}")
    if not _bool_arg(fancy_upscaling, f"{what}: fancy_upscaling") \
            or _bool_arg(try_recover_truncated, f"{what}: try_recover_truncated") \
            or _python_number(acceptable_fraction, f"{what}: acceptable_fraction") < 1:
        raise ValueError(f"{what}: only fancy_upscaling=True, try_recover_truncated=False "
                         f"and acceptable_fraction=1 (TF's defaults) are supported")
    return {"channels": c, "ratio": r}


def decode_image(contents, channels=None, dtype=DType.UINT8, name=None,
                 expand_animations=True) -> Tensor:
    """A PNG, BMP or JPEG image's [height, width, channels] pixels
    (tf.image.decode_image): dtype uint8 or uint16, or a float type (scaled to [0, 1]
    as convert_image_dtype does). JPEG needs Pillow when run (the `image` extra), as
    og.image.decode_jpeg; GIF bytes fail when run (the ImageDecoder op decodes them).

    Raises:
        TypeError: contents is not a string, or dtype not an integer/float image type.
        ValueError: channels is not None, 0, 1, 3 or 4.
        ExecutionError (when run): the bytes are GIF, unknown or corrupt, or a JPEG
            asked for 4 channels.
        UnsupportedOpError (when run): a JPEG without Pillow installed.
    """
    _g.check_name(name, "decode_image")
    _bool_arg(expand_animations, "decode_image: expand_animations")
    t = _contents(contents, "decode_image")
    d = _g.as_dtype(dtype) if not isinstance(dtype, DType) else dtype
    c = _channels(channels, (0, 1, 3, 4), "decode_image")
    floats = (DType.FLOAT16, DType.FLOAT32, DType.FLOAT64)
    if d not in (DType.UINT8, DType.UINT16) + floats:
        raise TypeError(f"decode_image: dtype must be uint8, uint16 or a float type, got "
                        f"{d.short_name}")
    raw = DType.UINT16 if d in floats else d
    y = t.graph.op("DecodeImage", [t], {"channels": c, "dtype": raw.numpy.name},
                   domain="onegraph")
    if d in floats:
        y = _image_mod.convert_image_dtype(y, d)
    return _named(y, name)


def is_jpeg(contents, name=None) -> Tensor:
    """Whether contents starts with JPEG's marker bytes FF D8 FF (tf.image.is_jpeg): a
    bool scalar."""
    _g.check_name(name, "is_jpeg")
    t = _contents(contents, "is_jpeg")
    return t.graph.op("IsJpeg", [t], name=name, domain="onegraph")


def extract_jpeg_shape(contents, output_type=DType.INT32, name=None) -> Tensor:
    """[height, width, channels] of a JPEG read from its frame header, without
    decoding it (tf.image.extract_jpeg_shape).

    Raises:
        TypeError: output_type is not int32 or int64.
        ExecutionError (when run): not a JPEG, or no frame header.
    """
    _g.check_name(name, "extract_jpeg_shape")
    t = _contents(contents, "extract_jpeg_shape")
    d = _codec_dtype(output_type, (DType.INT32, DType.INT64), "extract_jpeg_shape")
    return t.graph.op("ExtractJpegShape", [t], {"output_type": d.numpy.name}, name=name,
                      domain="onegraph")


# --------------------------------------------------------------------------- drawing

def draw_bounding_boxes(images, boxes, name=None, colors=None) -> Tensor:
    """images with each box's 1-pixel outline drawn (tf.image.draw_bounding_boxes):
    images [batch, height, width, depth] float, boxes [batch, num_boxes, 4] as
    normalised (y_min, x_min, y_max, x_max); colors [k, depth] cycle over the boxes
    (TF's table of 10 colours by default; grey images draw white). A box with a NaN
    coordinate is not drawn (it has no position); an infinite coordinate lies beyond
    that edge of the image, as a huge finite one does.

    Raises:
        ShapeError: images are not 4-D or boxes not 3-D [.., .., 4] (where known).
        TypeError: images are not float, or boxes or colors not numbers.
    """
    _g.check_name(name, "draw_bounding_boxes")
    x = _t(images)
    if x.shape is not None and len(x.shape) != 4:
        raise ShapeError(f"draw_bounding_boxes: images must be 4-D, got shape "
                         f"{list(x.shape)}")
    if x.dtype not in (DType.FLOAT16, DType.FLOAT32):
        raise TypeError(f"draw_bounding_boxes: images must be float16 or float32, got "
                        f"{x.dtype.short_name}")
    b = api.cast(_real(boxes, "draw_bounding_boxes: boxes", x.graph), DType.FLOAT32)
    if b.shape is not None and (len(b.shape) != 3 or b.shape[2] not in (None, 4)):
        raise ShapeError(f"draw_bounding_boxes: boxes must be [batch, num_boxes, 4], got "
                         f"shape {list(b.shape)}")
    inputs = [x, b]
    if colors is not None:
        inputs.append(api.cast(_real(colors, "draw_bounding_boxes: colors", x.graph),
                               DType.FLOAT32))
    return x.graph.op("DrawBoundingBoxes", inputs, name=name, domain="onegraph")


# --------------------------------------------------------------------------- resizes

def resize_area(images, size, align_corners=False, name=None) -> Tensor:
    """4-D images resized to size = [new_height, new_width] by area averaging (each output
    pixel the mean of the input area it covers, fractional pixels weighted), as TF1's
    tf.image.resize_area: float32 result.

    Raises:
        ValueError: a size that is not two positive values.
        ShapeError: images are not 3-D or 4-D.
        TypeError: images are not integer or float.
    """
    _g.check_name(name, "resize_area")
    x = _t(images)
    if x.shape is None or len(x.shape) != 4:
        got = "an unknown rank" if x.shape is None else f"shape {list(x.shape)}"
        raise ShapeError(f"resize_area: images must be 4-D [batch, height, width, "
                         f"channels] (as TF's ResizeArea), got {got}")
    if x.dtype == DType.STRING or x.dtype == DType.BOOL:
        raise TypeError(f"resize_area: images must be integer or float, got "
                        f"{x.dtype.short_name}")
    align = _bool_arg(align_corners, "resize_area: align_corners")
    _, size_t = _resize_size(size, "resize_area: size", x.graph)
    return x.graph.op("ResizeArea", [x, size_t], {"align_corners": int(align)},
                      name=name, domain="onegraph")


def resize_images_area(images, size, align_corners=False, preserve_aspect_ratio=False,
                       name=None) -> Tensor:
    """og.image.resize_images with ResizeMethod.AREA (which it hands here): 3-D or 4-D
    images through resize_area, images already of that size (known while building) as
    they are.

    Raises:
        as og.image.resize_images and resize_area.
    """
    x, single = _image(images, "resize_images")
    dims, size_t = _resize_size(size, "resize_images: size", x.graph)
    if _bool_arg(preserve_aspect_ratio, "resize_images: preserve_aspect_ratio"):
        dims, size_t = _image_mod._aspect_preserving_size(x, size_t)
    if dims is not None and tuple(x.shape[1:3]) == dims:
        return _unbatched(x, single, name)
    return _unbatched(resize_area(x, size_t, align_corners), single, name)


def resize_image_with_pad(image, target_height, target_width,
                          method=ResizeMethod.BILINEAR, align_corners=False) -> Tensor:
    """image resized to fit [target_height, target_width] keeping its aspect ratio,
    then zero-padded about its centre to exactly that size (TF1's
    tf.image.resize_image_with_pad, sizes as TF computes them in float32). Where the
    image's height or width is known only at run time, the graph computes the sizes
    and the run checks that the image is not empty.

    Raises:
        ValueError: a target <= 0 or beyond int32 (TF's type for them), or an unknown
            method.
        ShapeError: image is not 3-D or 4-D, or its height or width is 0 (known while
            building; at run time, ExecutionError).
    """
    x, single = _image(image, "resize_image_with_pad")
    th = _int_arg(target_height, "resize_image_with_pad: target_height")
    tw = _int_arg(target_width, "resize_image_with_pad: target_width")
    if not (0 < th < 2 ** 31 and 0 < tw < 2 ** 31):
        raise ValueError(f"resize_image_with_pad: targets must be > 0 and fit int32, got "
                         f"{th} x {tw}")
    h, w = x.shape[1], x.shape[2]
    if h is None or w is None:
        return _unbatched(_resize_with_pad_at_run_time(x, th, tw, method, align_corners),
                          single)
    if h == 0 or w == 0:  # no aspect ratio to keep: TF divides 0 by 0 here
        raise ShapeError(f"resize_image_with_pad: the image is {h} x {w}; an empty image "
                         "cannot be resized to fit")
    f = np.float32
    ratio = max(f(w) / f(tw), f(h) / f(th))
    rh, rw = f(h) / ratio, f(w) / ratio
    new_h, new_w = int(np.floor(rh)), int(np.floor(rw))
    pad_h = max(0, int(np.floor((f(th) - rh) / f(2))))
    pad_w = max(0, int(np.floor((f(tw) - rw) / f(2))))
    resized = _image_mod.resize_images(x, [new_h, new_w], method, align_corners)
    padded = _image_mod.pad_to_bounding_box(resized, pad_h, pad_w, th, tw)
    return _unbatched(padded, single)


def _resize_with_pad_at_run_time(x, th, tw, method, align_corners) -> Tensor:
    """resize_image_with_pad of an NHWC batch whose height or width only the run knows:
    the same float32 arithmetic as graph ops, and a run-time check (ExecutionError)
    that the image is not empty."""
    f32 = DType.FLOAT32
    h = api.cast(_image_mod._dim(x, 1), f32)
    w = api.cast(_image_mod._dim(x, 2), f32)
    fth, ftw = np.float32(th), np.float32(tw)
    ratio = api.maximum(w / ftw, h / fth)
    rh, rw = h / ratio, w / ratio

    def floor_int(v, low=None):
        i = api.cast(api.floor(v), DType.INT64)
        return i if low is None else api.maximum(i, np.int64(low))

    new_size = api.stack([floor_int(rh), floor_int(rw)])
    resized = _image_mod.resize_images(x, new_size, method, align_corners)
    padded = _image_mod.pad_to_bounding_box(resized, floor_int((fth - rh) / np.float32(2), 0),
                                            floor_int((ftw - rw) / np.float32(2), 0), th, tw)
    return api_math._checked(padded, api.logical_and(h > 0, w > 0),
                             "resize_image_with_pad: the image is empty (height or width "
                             "0); it cannot be resized to fit")


def extract_patches(images, sizes, strides, rates, padding, name=None) -> Tensor:
    """tf.image.extract_patches: og.extract_image_patches with `sizes` for ksizes."""
    return api_compat.extract_image_patches(images, sizes, strides, rates, padding,
                                            name=name)


def extract_glimpse(input, size, offsets, centered=True, normalized=True,  # noqa: A002
                    uniform_noise=True, name=None, noise=None) -> Tensor:
    """A [size[0], size[1]] window of each image of a float NHWC batch at offsets
    ([batch, 2] as (y, x)), as TF1's tf.image.extract_glimpse: `normalized` offsets
    are fractions of the image size, `centered` ones are measured from the image
    centre with [-1, 1] spanning it (TF1's rules, which halve them), else from the top
    left corner; the window is centred there (its top left truncated toward 0).
    Window pixels outside the image hold noise: uniform in the image's [min, max]
    (uniform_noise), else gaussian with each channel's mean and deviation clipped to
    its range; `noise` ("uniform", "gaussian", "zero"; TF's op attribute) chooses it
    directly. The noise is drawn from the Session's generator. Offsets far outside
    the image give all noise.

    Raises:
        ValueError: noise is unknown, or contradicts uniform_noise=True.
        ShapeError: input is not 4-D or offsets not [batch, 2] (where known).
        TypeError: input is not float, or offsets not numbers.
        ExecutionError (when run): an offset is NaN or infinite (a glimpse needs a
            position), or the glimpses would take more than 2 GiB.
    """
    _g.check_name(name, "extract_glimpse")
    x = _t(input)
    if x.shape is not None and len(x.shape) != 4:
        raise ShapeError(f"extract_glimpse: input must be 4-D [batch, height, width, "
                         f"channels], got shape {list(x.shape)}")
    if x.dtype not in (DType.FLOAT16, DType.FLOAT32, DType.FLOAT64):
        raise TypeError(f"extract_glimpse: input must be float, got {x.dtype.short_name}")
    uniform = _bool_arg(uniform_noise, "extract_glimpse: uniform_noise")
    if noise is None:
        noise = "uniform" if uniform else "gaussian"
    if noise not in ("uniform", "gaussian", "zero") or (uniform and noise != "uniform"):
        raise ValueError(f"extract_glimpse: noise must be uniform, gaussian or zero (and "
                         f"uniform when uniform_noise is True), got {noise!r}")
    g = x.graph
    _, size_t = _resize_size(size, "extract_glimpse: size", g)
    off = api.cast(_real(offsets, "extract_glimpse: offsets", g), DType.FLOAT32)
    if off.shape is not None and (len(off.shape) != 2 or off.shape[1] not in (None, 2)):
        raise ShapeError(f"extract_glimpse: offsets must be [batch, 2], got shape "
                         f"{list(off.shape)}")
    attrs = {"centered": int(_bool_arg(centered, "extract_glimpse: centered")),
             "normalized": int(_bool_arg(normalized, "extract_glimpse: normalized")),
             "noise": noise}
    return g.op("ExtractGlimpse", [x, size_t, off], attrs, name=name, domain="onegraph")


# --------------------------------------------------------------------------- NMS

def _nms_scalar(value, dtype: DType, g, what: str) -> Tensor:
    if _g._is_symbolic(value):
        return api.cast(_real(value, what, g), dtype)
    return api.constant(np.asarray(_python_number(value, what)), dtype)


_INT32_MAX = 2 ** 31 - 1


def _nms_limit(value, g, what: str) -> Tensor:
    """An NMS output limit as a scalar tensor. TF takes any int32 >= 0; a larger Python
    int (up to int64) is clamped to int32's maximum, which selects the same boxes (no
    more are selected than there are). A tensor keeps its integer type: the kernels
    read any, and casting an int64 to int32 would wrap a large limit to a negative or
    small one.

    Raises:
        TypeError: value is not an int (or integer tensor).
        ValueError: value is negative (TF: "output size must be non-negative") or
            beyond the int64 range.
        ShapeError: value is a tensor that is not integers.
    """
    if _g._is_symbolic(value):
        return _g.integer_tensor(value, what, g)
    n = _int_arg(value, what)
    if n < 0:
        raise ValueError(f"{what} must be >= 0, got {n}")
    return api.constant(np.asarray(min(n, _INT32_MAX), np.int32))


def _boxes_scores(boxes, scores, what: str) -> tuple:
    b = _real(boxes, f"{what}: boxes")
    s = _real(scores, f"{what}: scores", b.graph)
    if b.shape is not None and (len(b.shape) != 2 or b.shape[1] not in (None, 4)):
        raise ShapeError(f"{what}: boxes must be [num_boxes, 4], got shape "
                         f"{list(b.shape)}")
    if s.shape is not None and len(s.shape) != 1:
        raise ShapeError(f"{what}: scores must be 1-D [num_boxes], got shape "
                         f"{list(s.shape)}")
    return api.cast(b, DType.FLOAT32), s


def _v5(boxes, scores, max_output_size, iou_threshold, score_threshold, sigma, pad,
        what: str) -> list:
    b, s = _boxes_scores(boxes, scores, what)
    g = b.graph
    if not _g._is_symbolic(iou_threshold):
        iou = _python_number(iou_threshold, f"{what}: iou_threshold")
        if not 0.0 <= iou <= 1.0:
            raise ValueError(f"{what}: iou_threshold must be in [0, 1], got {iou}")
    if s.dtype not in (DType.FLOAT16, DType.FLOAT32):
        s = api.cast(s, DType.FLOAT32)
    inputs = [b, s, _nms_limit(max_output_size, g, f"{what}: max_output_size"),
              _nms_scalar(iou_threshold, DType.FLOAT32, g, f"{what}: iou_threshold"),
              _nms_scalar(score_threshold, DType.FLOAT32, g, f"{what}: score_threshold"),
              _nms_scalar(sigma, DType.FLOAT32, g, f"{what}: soft_nms_sigma")]
    return g.op("NonMaxSuppressionV5", inputs, {"pad_to_max_output_size": int(pad)},
                domain="onegraph")


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None) -> tuple:
    """(selected_indices int32, selected_scores) of greedy NMS; with soft_nms_sigma >
    0, Soft-NMS (Bodla et al.): overlapping boxes are not dropped but their scores
    decay by exp(-iou^2 / (2 sigma)) and they compete again, as
    tf.image.non_max_suppression_with_scores. boxes [num, 4] corners, scores [num].

    max_output_size: an int >= 0 (larger than int32 is taken as int32's maximum) or
    an integer scalar tensor.

    Raises:
        ShapeError: boxes or scores of the wrong rank (where known).
        TypeError: boxes, scores or a threshold are strings or bools.
        ValueError: max_output_size a negative int, iou_threshold outside [0, 1].
        ExecutionError (when run): a negative max_output_size tensor.
    """
    _g.check_name(name, "non_max_suppression_with_scores")
    idx, sc, _ = _v5(boxes, scores, max_output_size, iou_threshold, score_threshold,
                     soft_nms_sigma, False, "non_max_suppression_with_scores")
    return _named(idx, name), sc


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None, sorted_input=False,
                               canonicalized_coordinates=False, tile_size=512) -> tuple:
    """(selected_indices int32, valid_outputs) of greedy NMS over [num, 4] boxes, the
    indices padded with zeros to max_output_size when pad_to_max_output_size (TF's
    tiled algorithm selects the same boxes; sorted_input, canonicalized_coordinates
    and tile_size are its speed hints and change nothing here). Batched boxes
    ([..., num, 4]) are not supported.

    Raises:
        ShapeError: boxes not [num, 4] or scores not [num] (where known).
        ValueError: as non_max_suppression_with_scores.
        ExecutionError (when run): padded to a max_output_size whose result would take
            more than 2 GiB.
    """
    _g.check_name(name, "non_max_suppression_padded")
    for flag, what in ((sorted_input, "sorted_input"),
                       (canonicalized_coordinates, "canonicalized_coordinates"),
                       (pad_to_max_output_size, "pad_to_max_output_size")):
        _bool_arg(flag, f"non_max_suppression_padded: {what}")
    _int_arg(tile_size, "non_max_suppression_padded: tile_size")
    idx, _, valid = _v5(boxes, scores, max_output_size, iou_threshold, score_threshold,
                        0.0, pad_to_max_output_size, "non_max_suppression_padded")
    return _named(idx, name), valid


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None) -> Tensor:
    """Indices (int32) of greedy NMS by a given [num, num] overlap matrix: by
    descending score, a box is kept unless its overlap with a kept one exceeds
    overlap_threshold (tf.image.non_max_suppression_overlaps).

    Raises:
        ShapeError: overlaps not 2-D or scores not 1-D (where known).
        TypeError: overlaps, scores or a threshold are strings or bools.
        ValueError: max_output_size a negative int.
    """
    _g.check_name(name, "non_max_suppression_overlaps")
    o = api.cast(_real(overlaps, "non_max_suppression_overlaps: overlaps"), DType.FLOAT32)
    s = _real(scores, "non_max_suppression_overlaps: scores", o.graph)
    if o.shape is not None and len(o.shape) != 2 or s.shape is not None and len(s.shape) != 1:
        raise ShapeError(f"non_max_suppression_overlaps: overlaps must be 2-D and scores "
                         f"1-D, got {o.shape} and {s.shape}")
    g = o.graph
    what = "non_max_suppression_overlaps"
    inputs = [o, api.cast(s, DType.FLOAT32), _nms_limit(max_output_size, g,
                                                        f"{what}: max_output_size"),
              _nms_scalar(overlap_threshold, DType.FLOAT32, g, f"{what}: overlap_threshold"),
              _nms_scalar(score_threshold, DType.FLOAT32, g, f"{what}: score_threshold")]
    return g.op("NonMaxSuppressionWithOverlaps", inputs, name=name, domain="onegraph")


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size,
                                 iou_threshold=0.5, score_threshold=float("-inf"),
                                 pad_per_class=False, clip_boxes=True, name=None) -> tuple:
    """(nmsed_boxes, nmsed_scores, nmsed_classes, valid_detections) of greedy NMS per
    image and class, then each image's best max_total_size detections by score
    (tf.image.combined_non_max_suppression). boxes [batch, num, q, 4] (q 1: shared by
    the classes, or one per class), scores [batch, num, classes]; clip_boxes clips
    the boxes to [0, 1]; results padded with zeros.

    Sizes beyond int32 are taken as int32's maximum, as in the other NMS functions.

    Raises:
        ShapeError: boxes not 4-D or scores not 3-D (where known).
        TypeError: boxes, scores or a threshold are strings or bools.
        ValueError: a size <= 0 or iou_threshold outside [0, 1] (ints and numbers).
        ExecutionError (when run): the padded results would take more than 2 GiB (a
            max_total_size far beyond the detections there can be).
    """
    _g.check_name(name, "combined_non_max_suppression")
    what = "combined_non_max_suppression"
    b = api.cast(_real(boxes, f"{what}: boxes"), DType.FLOAT32)
    s = _real(scores, f"{what}: scores", b.graph)
    if b.shape is not None and len(b.shape) != 4 or s.shape is not None and len(s.shape) != 3:
        raise ShapeError(f"{what}: boxes must be [batch, num_boxes, q, 4] and scores "
                         f"[batch, num_boxes, classes], got {b.shape} and {s.shape}")
    g = b.graph
    for v, label in ((max_output_size_per_class, "max_output_size_per_class"),
                     (max_total_size, "max_total_size")):
        if not _g._is_symbolic(v) and _int_arg(v, f"{what}: {label}") <= 0:
            raise ValueError(f"{what}: {label} must be > 0, got {v}")
    if not _g._is_symbolic(iou_threshold):
        iou = _python_number(iou_threshold, f"{what}: iou_threshold")
        if not 0.0 <= iou <= 1.0:
            raise ValueError(f"{what}: iou_threshold must be in [0, 1], got {iou}")
    inputs = [b, api.cast(s, DType.FLOAT32),
              _nms_limit(max_output_size_per_class, g, f"{what}: max_output_size_per_class"),
              _nms_limit(max_total_size, g, f"{what}: max_total_size"),
              _nms_scalar(iou_threshold, DType.FLOAT32, g, f"{what}: iou_threshold"),
              _nms_scalar(score_threshold, DType.FLOAT32, g, f"{what}: score_threshold")]
    attrs = {"pad_per_class": int(_bool_arg(pad_per_class, f"{what}: pad_per_class")),
             "clip_boxes": int(_bool_arg(clip_boxes, f"{what}: clip_boxes"))}
    outs = g.op("CombinedNonMaxSuppression", inputs, attrs, domain="onegraph")
    return tuple(outs)


# --------------------------------------------------------------------------- MS-SSIM

_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03) -> Tensor:
    """Multi-scale SSIM (Wang et al. 2003) of image batches, as tf.image.ssim_multiscale:
    at each of len(power_factors) scales (each half the last, by 2 x 2 average pooling
    after symmetric padding to even sizes) the contrast-structure term, and at the
    last the full SSIM, each clipped at 0 (relu), combined as the product of their
    powers and averaged over channels. Height and width must be at least
    (filter_size - 1) * 2^(scales - 1) + 1 (every scale holds the filter); when only
    the run knows them, the run checks this. The channel count too may be known only
    at run time.

    Raises:
        ShapeError: as og.image.ssim (an unknown rank, or one below 3), or images
            too small for the scales (checked before the filter is made).
        ExecutionError (when run): images whose sizes only the run knows are too
            small for the scales.
        ValueError: filter_size < 1, filter_sigma <= 0, no power_factors.
        TypeError: power_factors not a list of numbers, max_val a string tensor.
    """
    size = _int_arg(filter_size, "ssim_multiscale: filter_size")
    sigma = _python_number(filter_sigma, "ssim_multiscale: filter_sigma")
    if not isinstance(power_factors, (list, tuple, np.ndarray)):
        raise TypeError(f"ssim_multiscale: power_factors must be a list of numbers, got "
                        f"{type(power_factors).__name__}")
    factors = [float(_python_number(p, "ssim_multiscale: power_factors"))
               for p in power_factors]
    if _g._is_symbolic(max_val):  # a string tensor would fail in a Cast when run
        _real(max_val, "ssim_multiscale: max_val")
    if size < 1 or not sigma > 0 or not factors:
        raise ValueError(f"ssim_multiscale: filter_size {size} must be >= 1, filter_sigma "
                         f"{sigma} > 0, and power_factors not empty")
    x, y, top = _as_unit_float(img1, img2, max_val, "ssim_multiscale")
    _image_rank(x, "ssim_multiscale")
    scales = len(factors)
    known = [x.shape[-3], x.shape[-2]]
    if None in known:
        with api.control_dependencies([_msssim_size_check(x, size, scales)]):
            x, y = api.identity(x), api.identity(y)
    else:
        # every scale must hold the filter: checked before the filter is made, which
        # for a huge filter_size would be a size x size array
        hw = [int(known[0]), int(known[1])]
        for k in range(scales):
            if k > 0:
                hw = [(hw[0] + 1) // 2, (hw[1] + 1) // 2]
            if min(hw) < size:
                raise ShapeError(f"ssim_multiscale: scale {k} is {hw[0]} x {hw[1]}, "
                                 f"smaller than filter_size {size}: the images are too "
                                 f"small for {scales} scales")
    window = _gaussian(size, sigma)
    channels = x.shape[-1]
    kernel = None if channels is None else api.constant(np.tile(window, (1, 1, channels, 1)))
    c1 = (_python_number(k1, "ssim_multiscale: k1") * top) ** 2
    c2 = (_python_number(k2, "ssim_multiscale: k2") * top) ** 2
    if channels is None:
        # TF tiles the window with the run's channel count; a depthwise Conv needs its
        # group while building, so each channel becomes a one-channel plane instead
        per_plane = _msssim_per_image(_fold_channels(x), _fold_channels(y), factors,
                                      _plane_mean(window), c1, c2, "NCHW")
        return api.reduce_mean(_unfold_channels(per_plane, x), [-1])
    head = api.shape(x)[:-3]
    minus_one = api.constant(np.asarray([-1], np.int64))
    tail = api.shape(x)[-3:] if None in known else \
        api.constant(np.asarray(known + [channels], np.int64))
    imgs = [api.reshape(t, api.concat([minus_one, tail], 0)) for t in (x, y)]

    def local_mean(t: Tensor) -> Tensor:
        return nn.depthwise_conv2d(t, kernel, [1, 1, 1, 1], "VALID")

    per_channel = _msssim_per_image(imgs[0], imgs[1], factors, local_mean, c1, c2, "NHWC")
    per_channel = api.reshape(per_channel, api.concat(
        [head, api.constant(np.asarray([channels], np.int64))], 0))
    return api.reduce_mean(per_channel, [-1])


def _msssim_per_image(a: Tensor, b: Tensor, factors: list, local_mean, c1, c2,
                      data_format: str) -> Tensor:
    """MS-SSIM of 4-D image batches a, b in `data_format` (NHWC, or NCHW one-channel
    planes) per image and channel: [batch, channels] or [planes, 1]. local_mean is the
    Gaussian window's local mean in that layout."""
    nchw = data_format == "NCHW"
    spatial = [-2, -1] if nchw else [-3, -2]
    halve = [1, 1, 2, 2] if nchw else [1, 2, 2, 1]
    imgs = [a, b]
    mcs = []
    for k in range(len(factors)):
        if k > 0:
            # TF pads odd sizes symmetrically by one and pools 2 x 2 VALID. The padded
            # row (column) repeats the last, so each window averages the same values
            # as a SAME pool that leaves the padding out of its count: no sizes needed
            # while building
            imgs = [nn.avg_pool(t, halve, halve, "SAME", data_format=data_format)
                    for t in imgs]
        luminance, cs = _ssim_terms(imgs[0], imgs[1], local_mean, c1, c2)
        ssim_val = api.reduce_mean(luminance * cs, spatial)
        mcs.append(nn.relu(api.reduce_mean(cs, spatial)))
    mcs.pop()
    stacked = api.stack(mcs + [nn.relu(ssim_val)], axis=-1)
    powers = api.pow(stacked, api.constant(np.asarray(factors, np.float32)))
    return api.reduce_prod(powers, [-1])


def _msssim_size_check(x: Tensor, size: int, scales: int):
    """An Assert that images x (NHWC, height and width known only at run time) hold a
    size x size filter at each of `scales` scales: scale k is ceil(side / 2^k), so each
    side must exceed (size - 1) * 2^(scales - 1). Its run raises ExecutionError."""
    sides = api.shape(x)[-3:-1]
    least = (size - 1) * 2 ** (scales - 1) + 1
    fits = api_extra.reduce_all(api.greater_equal(
        sides, api.constant(np.asarray([least, least], np.int64))))
    return Assert(fits, [f"ssim_multiscale: the images are too small for {scales} scales "
                         f"of filter_size {size}: height and width must be at least "
                         f"{least}, got", sides])


# --------------------------------------------------------------------------- random


def _pair(value, default, what: str) -> list:
    values = default if value is None else [float(_python_number(v, what)) for v in value]
    if len(values) != 2:
        raise ValueError(f"{what} must hold 2 numbers, got {list(values)}")
    return values


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None) -> tuple:
    """(begin, size, bboxes) of a random crop for data augmentation, as TF1's
    tf.image.sample_distorted_bounding_box: a crop whose aspect ratio (width / height)
    is drawn from aspect_ratio_range ([0.75, 1.33]) and whose area is a fraction of
    the image in area_range ([0.05, 1]), covering at least min_object_covered of one
    of bounding_boxes ([batch, N, 4] normalised corners); after max_attempts (100)
    draws without one, the whole image. begin = [y, x, 0] and size = [h, w, -1] feed
    og.slice; bboxes [1, 1, 4] is the crop normalised (for draw_bounding_boxes).
    image_size is [height, width, channels] (int32 or int64).

    Seeds follow TF1's (og.set_random_seed and `seed`); seed2, TF1's second seed, is
    mixed into `seed`. Draws come from numpy's generator, not TF's Philox stream, so
    the crops differ from TF's; their distribution follows TF's kernel.

    Raises:
        ValueError: a range that is not two numbers, max_attempts <= 0.
        TypeError: a seed is not an int, image_size not integers, bounding_boxes or
            min_object_covered not numbers.
        ExecutionError (when run): bad ranges (also bounds that are 0 or infinite in
            float32), boxes outside [0, 1], no boxes without
            use_image_if_no_bounding_boxes.
    """
    _g.check_name(name, "sample_distorted_bounding_box")
    what = "sample_distorted_bounding_box"
    size = _t(image_size)
    g = size.graph
    if size.dtype not in (DType.INT32, DType.INT64):
        if size.dtype not in (DType.INT8, DType.UINT8, DType.INT16, DType.UINT16,
                              DType.UINT32, DType.UINT64, DType.UNDEFINED):
            # TF takes integer sizes only (a float would be truncated, a string fail)
            raise TypeError(f"{what}: image_size must be integers, got "
                            f"{size.dtype.short_name}")
        size = api.cast(size, DType.INT32)
    boxes = api.cast(_real(bounding_boxes, f"{what}: bounding_boxes", g), DType.FLOAT32)
    covered = api.cast(_real(min_object_covered, f"{what}: min_object_covered", g),
                       DType.FLOAT32) if _g._is_symbolic(min_object_covered) else \
        api.constant(np.float32(_python_number(min_object_covered,
                                               f"{what}: min_object_covered")))
    attempts = 100 if max_attempts is None else _int_arg(max_attempts,
                                                         f"{what}: max_attempts")
    if attempts <= 0:
        raise ValueError(f"{what}: max_attempts must be > 0, got {attempts}")
    if seed2 is not None:
        seed2 = _int_arg(seed2, f"{what}: seed2")  # a Python int: numpy's overflow
        if seed2:
            words = [0 if seed is None else _int_arg(seed, f"{what}: seed"), seed2]
            # TF's seeds are int64 and SeedSequence takes non-negative words: a
            # negative seed enters as its 64-bit two's complement (others unchanged)
            words = [w % (1 << 64) for w in words]
            seed = int(np.random.SeedSequence(words).generate_state(1)[0] % (1 << 31))
    attrs = {"aspect_ratio_range": _pair(aspect_ratio_range, [0.75, 1.33],
                                         f"{what}: aspect_ratio_range"),
             "area_range": _pair(area_range, [0.05, 1.0], f"{what}: area_range"),
             "max_attempts": attempts,
             "use_image_if_no_bounding_boxes": int(_bool_arg(
                 use_image_if_no_bounding_boxes or False,
                 f"{what}: use_image_if_no_bounding_boxes"))}
    with g.name_scope(name or what) as scope:
        op_seed = _op_seed(g, seed, scope, what)
        if op_seed is not None:
            attrs["seed"] = op_seed
        outs = g.op("SampleDistortedBoundingBox", [size, boxes, covered], attrs,
                    domain="onegraph")
    return tuple(outs)


# og.image is train/image.py: these join its names (it cannot import this module, which
# needs it first)
for _name in __all__:
    setattr(_image_mod, _name, globals()[_name])
_image_mod.__all__ = sorted(set(_image_mod.__all__) | set(__all__))

# GIF and BMP decoding, JPEG encoding and cropping; its decode_image (GIF too) replaces
# the one above in og.image
from . import image_codecs  # noqa: E402,F401

"""og.image colour functions: TF1's HSV, YIQ and YUV conversions, hue, saturation
and gamma adjustments (tf.image.rgb_to_hsv, adjust_hue, ...).

TensorFlow runs the HSV conversions and the hue/saturation adjustments as single C++
kernels; here each is a handful of elementwise ONNX ops on the three channel planes,
so graphs using them export and differentiate. The formulas are TF's kernels' own
(colorspace_op.h, adjust_hue_op.cc, adjust_saturation_op.cc), rearranged only where a
Where would otherwise divide by zero in its unused branch (which makes NaN gradients).
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_extra
from . import api_math
from . import graph as _g
from .api import _t
from .api_extra import _python_number
from .graph import Tensor

__all__ = [
    "adjust_gamma", "adjust_hue", "adjust_saturation", "hsv_to_rgb", "random_hue",
    "random_saturation", "rgb_to_hsv", "rgb_to_yiq", "rgb_to_yuv", "yiq_to_rgb",
    "yuv_to_rgb",
]

_HSV_FLOATS = (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64)


def _three_channels(images, what: str, floats_only: bool = True) -> Tensor:
    """images as a tensor whose last axis holds 3 channels (where known).

    Raises:
        ShapeError: the rank is 0 or the last axis is known and not 3.
        TypeError: floats_only and images are not float16/bfloat16/float32/float64.
    """
    x = _t(images)
    if x.shape is not None and (not x.shape or x.shape[-1] not in (None, 3)):
        raise ShapeError(f"{what}: the last axis must hold 3 channels, got shape "
                         f"{list(x.shape)} ({x.name!r})")
    if floats_only and x.dtype not in _HSV_FLOATS:
        raise TypeError(f"{what}: images must be float16, bfloat16, float32 or float64, "
                        f"got {x.dtype.short_name} (convert_image_dtype first)")
    if x.shape is None or x.shape[-1] is None:   # as TF1, checked when the graph runs
        last = api.gather(api.shape(x), api.constant(np.int64(-1)))
        x = api_math._checked(x, api.equal(last, np.int64(3)),
                              f"{what}: the last axis must hold 3 channels")
    return x


def _planes(x: Tensor) -> tuple:
    """The three channel planes of x, each keeping a last axis of 1 (any rank, also one
    known only at run time)."""
    g = x.graph
    last = g.constant(np.asarray([-1], np.int64))
    return tuple(g.op("Slice", [x, g.constant(np.asarray([k], np.int64)),
                                g.constant(np.asarray([k + 1], np.int64)), last])
                 for k in range(3))


def _number(value, dtype: DType, x: Tensor, what: str) -> Tensor:
    """A scalar argument (Python number or tensor) as a tensor of dtype."""
    if _g._is_symbolic(value):
        return api.cast(_t(value, graph=x.graph), dtype)
    return api.constant(_python_number(value, what), dtype)


def _safe(denominator: Tensor, usable: Tensor) -> Tensor:
    """denominator where usable, 1 elsewhere: the quotient's unused Where branch then
    stays finite, and so does its gradient."""
    return api.where(usable, denominator, api.ones_like(denominator))


def _hsv_planes(r: Tensor, g: Tensor, b: Tensor) -> tuple:
    """(h, s, v) of RGB planes, TF's RGBToHSV: v the largest channel, s its range over
    v (0 where v is 0), h in [0, 1) by the sector of the largest channel (0 for
    greys)."""
    v = api.maximum(r, api.maximum(g, b))
    spread = v - api.minimum(r, api.minimum(g, b))
    zero = api.zeros_like(v)
    s = api.where(v > zero, spread / _safe(v, v > zero), zero)
    coloured = spread > zero
    norm = api.reciprocal(_safe(spread, coloured) * 6.0)
    h = api.where(api.equal(r, v), norm * (g - b),
                  api.where(api.equal(g, v), norm * (b - r) + 2.0 / 6.0,
                            norm * (r - g) + 4.0 / 6.0))
    h = api.where(coloured, h, zero)
    h = api.where(h < zero, h + 1.0, h)
    return h, s, v


def _rgb_planes(h: Tensor, s: Tensor, v: Tensor) -> Tensor:
    """RGB images (channels concatenated on the last axis) from HSV planes, TF's
    HSVToRGB: each channel v * (1 - s + s * ramp(6h))."""
    dh = h * 6.0
    dr = api.clip_by_value(api.abs(dh - 3.0) - 1.0, 0.0, 1.0)
    dg = api.clip_by_value(2.0 - api.abs(dh - 2.0), 0.0, 1.0)
    db = api.clip_by_value(2.0 - api.abs(dh - 4.0), 0.0, 1.0)
    one_s = 1.0 - s
    return api.concat([(one_s + s * d) * v for d in (dr, dg, db)], -1)


def rgb_to_hsv(images, name=None) -> Tensor:
    """RGB images (last axis 3, values in [0, 1]) as HSV, each in [0, 1], as TF's
    tf.image.rgb_to_hsv.

    Raises:
        ShapeError: the last axis is known and not 3.
        TypeError: images are not float16, bfloat16, float32 or float64.
    """
    _g.check_name(name, "rgb_to_hsv")
    x = _three_channels(images, "rgb_to_hsv")
    return api_math._in_float32(
        x, lambda f: api.concat(list(_hsv_planes(*_planes(f))), -1), name)


def hsv_to_rgb(images, name=None) -> Tensor:
    """HSV images (last axis 3, values in [0, 1]) as RGB, as TF's tf.image.hsv_to_rgb.

    Raises:
        ShapeError: the last axis is known and not 3.
        TypeError: images are not float16, bfloat16, float32 or float64.
    """
    _g.check_name(name, "hsv_to_rgb")
    x = _three_channels(images, "hsv_to_rgb")
    return api_math._in_float32(x, lambda f: _rgb_planes(*_planes(f)), name)


def _adjusted(image, what: str, adjust, name) -> Tensor:
    """TF1's frame for the colour adjustments: float16/float32 images as they are
    (float16 computed in float32, as TF's kernels do), other dtypes through
    convert_image_dtype to float32 and back (no saturation). float64 images stay in
    float64 (TF rounds them through float32)."""
    from .image import convert_image_dtype

    _g.check_name(name, what)
    x = _three_channels(image, what, floats_only=False)
    if x.dtype == DType.FLOAT64:
        out = adjust(x)
        return api.identity(out, name=name) if name is not None else out
    flt = x if x.dtype in (DType.FLOAT16, DType.FLOAT32) else \
        convert_image_dtype(x, DType.FLOAT32)
    wide = api.cast(flt, DType.FLOAT32) if flt.dtype != DType.FLOAT32 else flt
    out = api.cast(adjust(wide), flt.dtype) if flt.dtype != DType.FLOAT32 else adjust(wide)
    return convert_image_dtype(out, x.dtype, name=name)


def adjust_hue(image, delta, name=None) -> Tensor:
    """RGB images with their hue turned by delta (a fraction of the colour circle;
    a number or a float scalar tensor), value and saturation kept, as TF1's
    tf.image.adjust_hue. Integer images are scaled to [0, 1] and back.

    Raises:
        ShapeError: the last axis is known and not 3.
        TypeError: delta is not a number or tensor.
    """
    def turn(f):
        h, s, v = _hsv_planes(*_planes(f))
        h = h + _number(delta, f.dtype, f, "adjust_hue: delta")
        return _rgb_planes(h - api.floor(h), s, v)
    return _adjusted(image, "adjust_hue", turn, name)


def adjust_saturation(image, saturation_factor, name=None) -> Tensor:
    """RGB images with their saturation multiplied by saturation_factor and clipped to
    [0, 1], hue and value kept, as TF1's tf.image.adjust_saturation.

    Raises:
        ShapeError: the last axis is known and not 3.
        TypeError: saturation_factor is not a number or tensor.
    """
    def scale(f):
        h, s, v = _hsv_planes(*_planes(f))
        k = _number(saturation_factor, f.dtype, f,
                    "adjust_saturation: saturation_factor")
        return _rgb_planes(h, api.clip_by_value(s * k, 0.0, 1.0), v)
    return _adjusted(image, "adjust_saturation", scale, name)


def random_hue(image, max_delta, seed=None) -> Tensor:
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta), as TF1;
    seeds as og.random_uniform's.

    Raises:
        ValueError: max_delta is not in [0, 0.5].
    """
    top = _python_number(max_delta, "random_hue: max_delta")
    if top > 0.5:
        raise ValueError(f"random_hue: max_delta must be <= 0.5, got {top}")
    if top < 0:
        raise ValueError(f"random_hue: max_delta must be non-negative, got {top}")
    return adjust_hue(image, api_extra.random_uniform([], -top, top, seed=seed))


def random_saturation(image, lower, upper, seed=None) -> Tensor:
    """adjust_saturation by a factor drawn uniformly from [lower, upper), as TF1; seeds
    as og.random_uniform's.

    Raises:
        ValueError: upper <= lower, or lower < 0.
    """
    lo = _python_number(lower, "random_saturation: lower")
    hi = _python_number(upper, "random_saturation: upper")
    if hi <= lo:
        raise ValueError(f"random_saturation: upper must be > lower, got [{lo}, {hi})")
    if lo < 0:
        raise ValueError(f"random_saturation: lower must be non-negative, got {lo}")
    return adjust_saturation(image, api_extra.random_uniform([], lo, hi, seed=seed))


def adjust_gamma(image, gamma=1, gain=1) -> Tensor:
    """gain * image ** gamma in float (float16/float32 images as they are, others
    scaled to [0, 1] by convert_image_dtype), back in image's dtype with saturation,
    as TF1's tf.image.adjust_gamma. A gamma tensor is checked when the graph runs.

    Raises:
        ValueError: gamma is a negative number.
        TypeError: image is not integer or float, or gamma/gain are not numbers or
            tensors.
    """
    from .image import _in_float, convert_image_dtype

    x = _t(image)
    flt = _in_float(x)
    if not _g._is_symbolic(gamma) and _python_number(gamma, "adjust_gamma: gamma") < 0:
        raise ValueError(f"adjust_gamma: gamma must be a non-negative real number, got "
                         f"{gamma}")
    gm = _number(gamma, flt.dtype, flt, "adjust_gamma: gamma")
    if _g._is_symbolic(gamma):
        gm = api_math._checked(gm, api.greater_equal(gm, api.zeros_like(gm)),
                               "adjust_gamma: gamma must be a non-negative real number")
    k = _number(gain, flt.dtype, flt, "adjust_gamma: gain")
    return convert_image_dtype(k * api.pow(flt, gm), x.dtype, saturate=True)


# TF's matrices (image_ops_impl.py), applied to the last axis: rows are input channels
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115],
               [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
               [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538],
               [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185],
               [1.13988303, -0.58062185, 0]]


def _mix_channels(images, matrix, what: str) -> Tensor:
    """images (last axis 3, float) times the 3x3 matrix over the last axis."""
    x = _three_channels(images, what)
    if x.shape is None:
        raise ShapeError(f"{what}: images need a known rank ({x.name!r})")
    return api_extra.tensordot(x, api.constant(np.asarray(matrix, np.float64), x.dtype),
                               [[len(x.shape) - 1], [0]])


def rgb_to_yiq(images) -> Tensor:
    """RGB images (last axis 3, float) as YIQ, TF's tf.image.rgb_to_yiq.

    Raises:
        ShapeError: the rank is unknown or 0, or the last axis is known and not 3.
        TypeError: images are not float.
    """
    return _mix_channels(images, _RGB_TO_YIQ, "rgb_to_yiq")


def yiq_to_rgb(images) -> Tensor:
    """YIQ images (last axis 3, float) as RGB, TF's tf.image.yiq_to_rgb.

    Raises:
        ShapeError: the rank is unknown or 0, or the last axis is known and not 3.
        TypeError: images are not float.
    """
    return _mix_channels(images, _YIQ_TO_RGB, "yiq_to_rgb")


def rgb_to_yuv(images) -> Tensor:
    """RGB images (last axis 3, float) as YUV, TF's tf.image.rgb_to_yuv.

    Raises:
        ShapeError: the rank is unknown or 0, or the last axis is known and not 3.
        TypeError: images are not float.
    """
    return _mix_channels(images, _RGB_TO_YUV, "rgb_to_yuv")


def yuv_to_rgb(images) -> Tensor:
    """YUV images (last axis 3, float) as RGB, TF's tf.image.yuv_to_rgb.

    Raises:
        ShapeError: the rank is unknown or 0, or the last axis is known and not 3.
        TypeError: images are not float.
    """
    return _mix_channels(images, _YUV_TO_RGB, "yuv_to_rgb")

"""og.image: TF1's tf.image functions on NHWC images (3-D [h, w, c] or 4-D batches).

Each is a few ONNX ops, so graphs using them export: resizes are one Resize with the
coordinate mapping of TF1's kernels (`_RESIZE_MODES`), crops and pads are Slice and
Pad (with TF1's run-time checks when sizes are tensors), flips are Slices with a
negative step, and dtype conversions follow tf.image.convert_image_dtype's scaling.
Sizes and offsets may be ints or integer scalar tensors, as in TF1.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_extra
from . import api_math
from . import graph as _g
from .api import _bool_arg, _int_arg, _t
from .api_extra import _dtype_arg, _python_number
from .graph import Tensor
from .packing import holds_tensor, int64_tensor

__all__ = [
    "ResizeMethod", "adjust_brightness", "adjust_contrast", "central_crop",
    "convert_image_dtype", "crop_to_bounding_box", "flip_left_right", "flip_up_down",
    "grayscale_to_rgb", "pad_to_bounding_box", "per_image_standardization",
    "random_brightness", "random_contrast", "random_flip_left_right",
    "random_flip_up_down", "resize", "resize_bicubic", "resize_bilinear",
    "resize_image_with_crop_or_pad", "resize_images", "resize_nearest_neighbor",
    "resize_with_crop_or_pad", "rgb_to_grayscale", "rot90", "transpose",
    "transpose_image",
]

_INTEGERS = (DType.INT8, DType.INT16, DType.INT32, DType.INT64, DType.UINT8, DType.UINT16,
             DType.UINT32, DType.UINT64)
_FLOATS = (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64)


class ResizeMethod:
    """TF1's resize methods (tf.image.ResizeMethod), for `resize_images`'s `method`."""
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


# --------------------------------------------------------------------------- helpers

def _image(images, what: str) -> tuple:
    """images as a 4-D tensor and whether it came as one 3-D image.

    Raises:
        ShapeError: the rank is unknown or not 3 or 4.
    """
    x = _t(images)
    if x.shape is None or len(x.shape) not in (3, 4):
        got = "an unknown rank" if x.shape is None else f"shape {list(x.shape)}"
        raise ShapeError(f"{what}: images must be 3-D [height, width, channels] or 4-D "
                         f"[batch, height, width, channels], got {got} ({x.name!r})")
    if len(x.shape) == 3:
        return api.expand_dims(x, 0), True
    return x, False


def _unbatched(y: Tensor, single: bool, name=None) -> Tensor:
    if single:
        return api.squeeze(y, [0], name=name)
    return api.identity(y, name=name) if name is not None else y


def _size(value, what: str):
    """An image size or offset: an int (checked >= 0) or an integer scalar tensor, made
    int64 (TF1's sizes are often int32, e.g. from tf.shape)."""
    if _g._is_symbolic(value):
        return int64_tensor(value, what)
    v = _int_arg(value, what)
    if v < 0:
        raise ValueError(f"{what} must be >= 0, got {v}")
    return v


def _dim(x: Tensor, axis: int):
    """x's dim as an int when known while building, else an int64 scalar tensor."""
    d = x.shape[axis]
    return d if d is not None else api.shape(x)[axis]


def _known(*values) -> bool:
    return not any(_g._is_symbolic(v) for v in values)


# --------------------------------------------------------------------------- dtypes

def convert_image_dtype(image, dtype, saturate=False, name=None) -> Tensor:
    """image converted to dtype with TF1's scaling: integers span [0, MAX] of their
    type and floats [0, 1], so uint8 255 becomes float 1.0 and float 1.0 becomes
    uint8 255 (floats are scaled by MAX + 0.5 and cast, truncating); integers convert
    by a power-of-two factor; float to float is a cast. `saturate` clips to the target
    range before the cast (else out-of-range values wrap as in a C cast).

    Raises:
        TypeError: image or dtype is not an integer or float type, or saturate not a
            bool.
    """
    x = _t(image)
    want = _dtype_arg(dtype, _INTEGERS + _FLOATS, "convert_image_dtype: dtype")
    saturate = _bool_arg(saturate, "convert_image_dtype: saturate")
    have = x.dtype
    if have not in _INTEGERS + _FLOATS:
        raise TypeError(f"convert_image_dtype: image must be an integer or float tensor, "
                        f"got {have.short_name}")
    if have == want:
        return api.identity(x, name=name)
    if have in _INTEGERS and want in _INTEGERS:
        top_in, top_out = _type_max(have), _type_max(want)
        if top_in > top_out:  # scale down, then cast
            scaled = api_math.floordiv(x, api.constant((top_in + 1) // (top_out + 1), have))
            return _saturate_cast(scaled, want, name) if saturate else \
                api.cast(scaled, want, name=name)
        cast = _saturate_cast(x, want) if saturate else api.cast(x, want)
        return api.multiply(cast, api.constant((top_out + 1) // (top_in + 1), want),
                            name=name)
    if have in _FLOATS and want in _FLOATS:
        return api_extra._cast(x, want, name=name)
    if have in _INTEGERS:  # to float: cast, then scale
        return api.multiply(api.cast(x, want), api.constant(1.0 / _type_max(have), want),
                            name=name)
    scaled = api.multiply(x, api.constant(_type_max(want) + 0.5, have))
    return _saturate_cast(scaled, want, name) if saturate else \
        api.cast(scaled, want, name=name)


def _type_max(dt: DType) -> int:
    return int(np.iinfo(dt.numpy).max)


def _saturate_cast(x: Tensor, want: DType, name=None) -> Tensor:
    """x cast to want after clipping to want's range where x's range exceeds it (TF's
    saturate_cast)."""
    have = x.dtype
    lo, hi = np.iinfo(want.numpy).min, np.iinfo(want.numpy).max
    if have in _INTEGERS:
        info = np.iinfo(have.numpy)
        if info.min < lo:
            x = api.maximum(x, api.constant(lo, have))
        if info.max > hi:
            x = api.minimum(x, api.constant(hi, have))
    else:
        # the bounds as floats of x's type: hi may round up (2**31 - 1 -> 2**31), so
        # values at the bound are also below the next float down when cast
        x = api.minimum(api.maximum(x, api.constant(float(lo), have)),
                        api.constant(_float_at_most(hi, have), have))
    return api.cast(x, want, name=name)


def _float_at_most(value: int, dt: DType) -> float:
    """The largest value of float type dt that is <= value."""
    f = np.asarray(value, dtype=np.float64).astype(dt.numpy)
    if float(f) > value:
        f = np.nextafter(f, np.asarray(0, dt.numpy))
    return float(f)


# --------------------------------------------------------------------------- resize

# TF1's kernels as ONNX Resize attributes, per (method, align_corners,
# half_pixel_centers). TF1 maps output pixel i to input x = i * in / out ("asymmetric"),
# or (i + 0.5) * in / out - 0.5 with half_pixel_centers, or i * (in - 1) / (out - 1)
# with align_corners; nearest takes floor(x) (round(x) with align_corners, floor of
# (i + 0.5) * in / out with half-pixel centres: ONNX's half_pixel rounded half up).
# Bicubic is not an ONNX Resize: TF1 rounds its weights through a table
# (train/image_bicubic.py).
_RESIZE_MODES = {
    ("linear", False, False): {"coordinate_transformation_mode": "asymmetric"},
    ("linear", True, False): {"coordinate_transformation_mode": "align_corners"},
    ("linear", False, True): {"coordinate_transformation_mode": "half_pixel"},
    ("nearest", False, False): {"coordinate_transformation_mode": "asymmetric",
                                "nearest_mode": "floor"},
    ("nearest", True, False): {"coordinate_transformation_mode": "align_corners",
                               "nearest_mode": "round_prefer_ceil"},
    ("nearest", False, True): {"coordinate_transformation_mode": "half_pixel",
                               "nearest_mode": "round_prefer_ceil"},
}


def _resize_size(size, what: str, g) -> tuple:
    """resize's [new_height, new_width]: (the two ints when known while building, else
    None; the int64 tensor).

    Raises:
        TypeError: size is not a list of two ints/scalar tensors or a tensor.
        ValueError: a known size is not positive, or there are not two.
        ShapeError: a size tensor is not 1-D integers of length 2.
    """
    if holds_tensor(size):
        t = int64_tensor(size, what, g)
        if t.shape is not None and tuple(t.shape) not in ((2,), (None,)):
            raise ShapeError(f"{what} must be a 1-D tensor of 2 elements (new_height, "
                             f"new_width), got shape {list(t.shape)}")
        value = g.static_value(t)
        if value is None:
            return None, t
        dims = [int(v) for v in np.asarray(value).reshape(-1)]
    else:
        dims = api._int_list(size, what)
        t = None
    if len(dims) != 2 or min(dims) <= 0:
        raise ValueError(f"{what} must be two sizes > 0 (new_height, new_width), got "
                         f"{dims}")
    return tuple(dims), t if t is not None else g.constant(np.asarray(dims, np.int64))


def _resize(images, size, mode: str, align_corners, half_pixel_centers, name, what,
            preserve_aspect_ratio=False, skip_if_same=False) -> Tensor:
    x, single = _image(images, what)
    g = x.graph
    align_corners = _bool_arg(align_corners, f"{what}: align_corners")
    half_pixel_centers = _bool_arg(half_pixel_centers, f"{what}: half_pixel_centers")
    if align_corners and half_pixel_centers:
        raise ValueError(f"{what}: align_corners and half_pixel_centers cannot both be "
                         "true (TF1 refuses them too)")
    if x.dtype not in _INTEGERS + _FLOATS:
        raise TypeError(f"{what}: images must be integer or float, got "
                        f"{x.dtype.short_name}")
    dims, size_t = _resize_size(size, f"{what}: size", g)
    if _bool_arg(preserve_aspect_ratio, f"{what}: preserve_aspect_ratio"):
        dims, size_t = _aspect_preserving_size(x, size_t)
    if skip_if_same and dims is not None and tuple(x.shape[1:3]) == dims:
        return _unbatched(x, single, name)
    if mode != "nearest" and x.dtype != DType.FLOAT32:
        x = api.cast(x, DType.FLOAT32)  # TF1's bilinear and bicubic give float32
    if mode == "cubic":
        y = _cubic_tf_weights(x, dims, size_t, align_corners, half_pixel_centers)
    else:
        attrs = dict(_RESIZE_MODES[(mode, align_corners, half_pixel_centers)], mode=mode)
        batch, channels = api_extra._dims_slice(x, 0, 1), api_extra._dims_slice(x, 3, 4)
        full = g.op("Concat", [batch, size_t, channels], {"axis": 0})
        y = g.op("Resize", [x, None, None, full], attrs)
    return _unbatched(y, single, name)


def _cubic_tf_weights(x: Tensor, dims, size_t: Tensor, align_corners: bool,
                      half_pixel_centers: bool) -> Tensor:
    """Bicubic resize of NHWC x to size_t with TF's own table weights
    (train/image_bicubic.py): along the width first, then the height, as TF. The
    weight matrices are constants when the sizes are known while building, else
    computed when the graph runs."""
    from .image_bicubic import weight_matrix, weight_matrix_tensor

    g = x.graph
    mats = []
    for axis in (2, 1):
        n_in = x.shape[axis] if x.shape is not None else None
        n_out = dims[axis - 1] if dims is not None else None
        if n_in is not None and n_out is not None:
            mats.append(g.constant(weight_matrix(n_in, n_out, align_corners,
                                                 half_pixel_centers)))
        else:
            in_t = api.reshape(api_extra._dims_slice(x, axis, axis + 1), [])
            out_t = api.reshape(size_t[axis - 1:axis], [])
            mats.append(weight_matrix_tensor(g, in_t, out_t, align_corners,
                                             half_pixel_centers))
    cols = api_extra.einsum("nhwc,vw->nhvc", x, mats[0])
    return api_extra.einsum("nhwc,uh->nuwc", cols, mats[1])


def _aspect_preserving_size(x: Tensor, size_t: Tensor) -> tuple:
    """TF1's preserve_aspect_ratio: the largest size of x's aspect ratio within
    size_t, each side round(scale * side) with scale the smaller of the two ratios."""
    hw = api.cast(api_extra._dims_slice(x, 1, 3), DType.FLOAT32)
    scale = api.reduce_min(api.cast(size_t, DType.FLOAT32) / hw)
    t = api.cast(api_math.round(hw * scale), DType.INT64)
    value = x.graph.static_value(t)
    return (None if value is None else tuple(int(v) for v in value)), t


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None) -> Tensor:
    """images resized to size = [new_height, new_width] (ints, scalar tensors or a
    1-D tensor), as TF1's tf.image.resize_images: bilinear and bicubic give float32,
    nearest keeps the dtype; images already of that size (known while building) come
    back as they are. `preserve_aspect_ratio` fits the image inside size instead.

    Raises:
        ValueError: an unknown method, or a size that is not two positive values.
        ShapeError: images are not 3-D or 4-D.
        TypeError: a flag is not a bool.
    """
    modes = {ResizeMethod.BILINEAR: "linear", ResizeMethod.NEAREST_NEIGHBOR: "nearest",
             ResizeMethod.BICUBIC: "cubic"}
    if method == ResizeMethod.AREA and not isinstance(method, bool):
        # a onegraph-domain op (ONNX has no area resampling): runs, does not export
        from .image_more import resize_images_area

        return resize_images_area(images, size, align_corners, preserve_aspect_ratio, name)
    if isinstance(method, bool) or method not in modes:
        raise ValueError(f"resize_images: unknown method {method!r}; use "
                         "og.image.ResizeMethod")
    return _resize(images, size, modes[method], align_corners, False, name,
                   "resize_images", preserve_aspect_ratio, skip_if_same=True)


resize = resize_images


def resize_bilinear(images, size, align_corners=False, half_pixel_centers=False,
                    name=None) -> Tensor:
    """Bilinear resize of images (float32 result), as TF1's tf.image.resize_bilinear.

    Raises:
        ValueError: align_corners and half_pixel_centers together, or a bad size.
        ShapeError: images are not 3-D or 4-D.
    """
    return _resize(images, size, "linear", align_corners, half_pixel_centers, name,
                   "resize_bilinear")


def resize_nearest_neighbor(images, size, align_corners=False, half_pixel_centers=False,
                            name=None) -> Tensor:
    """Nearest-neighbour resize of images (dtype kept), as TF1's
    tf.image.resize_nearest_neighbor.

    Raises:
        ValueError: align_corners and half_pixel_centers together, or a bad size.
        ShapeError: images are not 3-D or 4-D.
    """
    return _resize(images, size, "nearest", align_corners, half_pixel_centers, name,
                   "resize_nearest_neighbor")


def resize_bicubic(images, size, align_corners=False, half_pixel_centers=False,
                   name=None) -> Tensor:
    """Bicubic resize of images (float32 result), as TF1's tf.image.resize_bicubic.

    Raises:
        ValueError: align_corners and half_pixel_centers together, or a bad size.
        ShapeError: images are not 3-D or 4-D.
    """
    return _resize(images, size, "cubic", align_corners, half_pixel_centers, name,
                   "resize_bicubic")


# --------------------------------------------------------------------------- geometry

def flip_left_right(image) -> Tensor:
    """image mirrored horizontally (the width axis reversed)."""
    x = _t(image)
    _image(x, "flip_left_right")
    return api_math.reverse(x, [-2])


def flip_up_down(image) -> Tensor:
    """image mirrored vertically (the height axis reversed)."""
    x = _t(image)
    _image(x, "flip_up_down")
    return api_math.reverse(x, [-3])


def _random_flip(image, axis: int, seed, what: str) -> Tensor:
    x = _t(image)
    _image(x, what)
    flipped = api_math.reverse(x, [axis])
    if len(x.shape) == 3:
        coin = api_extra.random_uniform([], seed=seed)
    else:  # a coin per image of the batch, as TF1
        n = _dim(x, 0)
        coin = api.reshape(api_extra.random_uniform([n], seed=seed), [-1, 1, 1, 1])
    return api.where(api.less(coin, 0.5), flipped, x)


def random_flip_left_right(image, seed=None) -> Tensor:
    """image mirrored horizontally with probability 1/2 (each image of a batch on its
    own coin), as TF1; seeds as og.random_uniform's."""
    return _random_flip(image, -2, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None) -> Tensor:
    """image mirrored vertically with probability 1/2 (each image of a batch on its own
    coin), as TF1; seeds as og.random_uniform's."""
    return _random_flip(image, -3, seed, "random_flip_up_down")


def transpose(image, name=None) -> Tensor:
    """image with height and width swapped (tf.image.transpose / transpose_image).

    Raises:
        ShapeError: image is not 3-D or 4-D.
    """
    x = _t(image)
    _image(x, "transpose")
    perm = [1, 0, 2] if len(x.shape) == 3 else [0, 2, 1, 3]
    return api.transpose(x, perm, name=name)


transpose_image = transpose


def rot90(image, k=1, name=None) -> Tensor:
    """image rotated counter-clockwise by k quarter turns (an int; any sign), as TF1's
    tf.image.rot90.

    Raises:
        TypeError: k is not an int (TF1 also takes a tensor).
        ShapeError: image is not 3-D or 4-D.
    """
    x = _t(image)
    _image(x, "rot90")
    k = _int_arg(k, "rot90: k") % 4
    h, w = len(x.shape) - 3, len(x.shape) - 2
    perm = list(range(len(x.shape)))
    perm[h], perm[w] = w, h
    if k == 1:
        y = api.transpose(api_math.reverse(x, [w]), perm)
    elif k == 2:
        y = api_math.reverse(x, [h, w])
    elif k == 3:
        y = api_math.reverse(api.transpose(x, perm), [w])
    else:
        y = x
    return api.identity(y, name=name) if name is not None or y is x else y


def crop_to_bounding_box(image, offset_height, offset_width, target_height,
                         target_width) -> Tensor:
    """The [target_height, target_width] block of image from (offset_height,
    offset_width), as TF1; ints or integer scalar tensors (a block that leaves the
    image is then refused when the graph runs, by an og.Assert).

    Raises:
        ValueError: an int offset < 0 or target <= 0.
        ShapeError: image is not 3-D or 4-D, or the block leaves it (sizes known).
    """
    x, single = _image(image, "crop_to_bounding_box")
    oh = _size(offset_height, "crop_to_bounding_box: offset_height")
    ow = _size(offset_width, "crop_to_bounding_box: offset_width")
    th = _positive(target_height, "crop_to_bounding_box: target_height")
    tw = _positive(target_width, "crop_to_bounding_box: target_width")
    h, w = x.shape[1], x.shape[2]
    if _known(oh, th) and h is not None and oh + th > h or \
            _known(ow, tw) and w is not None and ow + tw > w:
        raise ShapeError(f"crop_to_bounding_box: the block at ({oh}, {ow}) of "
                         f"{th} x {tw} leaves the image of {h} x {w}")
    y = api_math.slice(x, [0, oh, ow, 0], [-1, th, tw, -1])
    return _unbatched(y, single)


def _positive(value, what: str):
    v = _size(value, what)
    if not _g._is_symbolic(v) and v == 0:
        raise ValueError(f"{what} must be > 0, got 0")
    return v


def pad_to_bounding_box(image, offset_height, offset_width, target_height,
                        target_width) -> Tensor:
    """image placed at (offset_height, offset_width) of a zero image of
    [target_height, target_width], as TF1; ints or integer scalar tensors (a target
    too small for the image is then refused when the graph runs).

    Raises:
        ValueError: an int offset < 0.
        ShapeError: image is not 3-D or 4-D, or the target does not hold it at the
            offset (sizes known).
    """
    x, single = _image(image, "pad_to_bounding_box")
    oh = _size(offset_height, "pad_to_bounding_box: offset_height")
    ow = _size(offset_width, "pad_to_bounding_box: offset_width")
    th = _size(target_height, "pad_to_bounding_box: target_height")
    tw = _size(target_width, "pad_to_bounding_box: target_width")
    h, w = _dim(x, 1), _dim(x, 2)
    after_h, after_w = th - oh - h, tw - ow - w
    for after, side in ((after_h, "height"), (after_w, "width")):
        if _known(after) and after < 0:
            raise ShapeError(f"pad_to_bounding_box: the image {side} does not fit the "
                             f"target {th if side == 'height' else tw} at offset "
                             f"{oh if side == 'height' else ow}")
    y = api.pad(x, [[0, 0], [oh, after_h], [ow, after_w], [0, 0]])
    unknown = [a for a in (after_h, after_w) if not _known(a)]
    if unknown:
        y = api_math._checked(y, api.greater_equal(api.stack(unknown), 0),
                              "pad_to_bounding_box: the image must fit the target at "
                              "the offset")
    return _unbatched(y, single)


def resize_image_with_crop_or_pad(image, target_height, target_width) -> Tensor:
    """image cropped or zero-padded about its centre to [target_height, target_width]
    (ints or integer scalar tensors), as TF1's resize_image_with_crop_or_pad.

    Raises:
        ValueError: an int target <= 0.
        ShapeError: image is not 3-D or 4-D.
    """
    x, single = _image(image, "resize_image_with_crop_or_pad")
    th = _positive(target_height, "resize_image_with_crop_or_pad: target_height")
    tw = _positive(target_width, "resize_image_with_crop_or_pad: target_width")
    h, w = _dim(x, 1), _dim(x, 2)
    crop_h, pad_h, keep_h = _centre(th, h)
    crop_w, pad_w, keep_w = _centre(tw, w)
    y = crop_to_bounding_box(x, crop_h, crop_w, keep_h, keep_w)
    y = pad_to_bounding_box(y, pad_h, pad_w, th, tw)
    return _unbatched(y, single)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def _centre(target, size) -> tuple:
    """(crop offset, pad offset, kept length) of resize_image_with_crop_or_pad."""
    diff = target - size
    if _known(diff):
        return max(-diff // 2, 0), max(diff // 2, 0), min(target, size)
    zero = api.constant(0, diff.dtype)
    return (api.maximum(api_math.floordiv(-diff, 2), zero),
            api.maximum(api_math.floordiv(diff, 2), zero), api.minimum(target, size))


def central_crop(image, central_fraction) -> Tensor:
    """The central `central_fraction` (a number in (0, 1]) of image's height and width,
    as TF1: the crop starts at int((side - side * fraction) / 2).

    Raises:
        TypeError: central_fraction is not a number.
        ValueError: it is outside (0, 1].
        ShapeError: image is not 3-D or 4-D.
    """
    fraction = _python_number(central_fraction, "central_crop: central_fraction")
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"central_crop: central_fraction must be within (0, 1], got "
                         f"{fraction}")
    x, single = _image(image, "central_crop")
    if fraction == 1.0:
        return _t(image)
    starts, sizes = [], []
    for axis in (1, 2):
        side = _dim(x, axis)
        if _known(side):
            start = int((float(side) - float(side) * fraction) / 2)
        else:
            sd = api.cast(side, DType.FLOAT64)
            start = api.cast((sd - sd * fraction) / 2.0, DType.INT64)
        starts.append(start)
        sizes.append(side - start * 2)
    y = api_math.slice(x, [0] + starts + [0], [-1] + sizes + [-1])
    return _unbatched(y, single)


# --------------------------------------------------------------------------- colour

def rgb_to_grayscale(images, name=None) -> Tensor:
    """The luma 0.2989 R + 0.5870 G + 0.1140 B of RGB images (last axis 3), keeping a
    last axis of 1 and the dtype (computed in float32 via convert_image_dtype), as TF1.

    Raises:
        ShapeError: the last axis is known and not 3.
        TypeError: images are not integer or float.
    """
    x = _t(images)
    if x.shape is not None and (not x.shape or x.shape[-1] not in (None, 3)):
        raise ShapeError(f"rgb_to_grayscale: the last axis must hold 3 channels, got "
                         f"shape {list(x.shape)}")
    flt = convert_image_dtype(x, DType.FLOAT32)
    weights = api.constant(np.asarray([0.2989, 0.5870, 0.1140], np.float32))
    gray = api.reduce_sum(flt * weights, -1, keepdims=True)
    return convert_image_dtype(gray, x.dtype, name=name)


def grayscale_to_rgb(images, name=None) -> Tensor:
    """Grayscale images (last axis 1) with that channel repeated three times, as TF1.

    Raises:
        ShapeError: the rank is unknown or below 2, or the last axis is not 1.
    """
    x = _t(images)
    if x.shape is None or len(x.shape) < 2 or x.shape[-1] not in (None, 1):
        got = "an unknown rank" if x.shape is None else f"shape {list(x.shape)}"
        raise ShapeError(f"grayscale_to_rgb: images need rank >= 2 and a last axis of "
                         f"1, got {got}")
    return api.tile(x, [1] * (len(x.shape) - 1) + [3], name=name)


def _in_float(x: Tensor) -> Tensor:
    """TF1's working copy of an image for the adjust_* functions: float16 and float32
    as they are, other types through convert_image_dtype to float32."""
    if x.dtype in (DType.FLOAT16, DType.FLOAT32):
        return x
    return convert_image_dtype(x, DType.FLOAT32)


def adjust_brightness(image, delta) -> Tensor:
    """image + delta in float (images scaled to [0, 1] by convert_image_dtype), back
    in image's dtype with saturation, as TF1.

    Raises:
        TypeError: image is not integer or float.
    """
    x = _t(image)
    flt = _in_float(x)
    d = api.cast(_t(delta, graph=x.graph), flt.dtype) if _g._is_symbolic(delta) else \
        api.constant(_python_number(delta, "adjust_brightness: delta"), flt.dtype)
    return convert_image_dtype(flt + d, x.dtype, saturate=True)


def adjust_contrast(images, contrast_factor) -> Tensor:
    """(x - mean) * contrast_factor + mean, the mean of each channel of each image
    over its height and width, in float and back in the dtype with saturation, as TF1.

    Raises:
        ShapeError: images have rank below 3.
        TypeError: images are not integer or float.
    """
    x = _t(images)
    if x.shape is None or len(x.shape) < 3:
        got = "an unknown rank" if x.shape is None else f"shape {list(x.shape)}"
        raise ShapeError(f"adjust_contrast: images need rank >= 3, got {got}")
    flt = _in_float(x)
    wide = api.cast(flt, DType.FLOAT32)  # float16 images too: the mean in float32
    f = api.cast(_t(contrast_factor, graph=x.graph), DType.FLOAT32) \
        if _g._is_symbolic(contrast_factor) else \
        api.constant(_python_number(contrast_factor, "adjust_contrast: contrast_factor"),
                     DType.FLOAT32)
    mean = api.reduce_mean(wide, [-3, -2], keepdims=True)
    adjusted = api.cast((wide - mean) * f + mean, flt.dtype)
    return convert_image_dtype(adjusted, x.dtype, saturate=True)


def random_brightness(image, max_delta, seed=None) -> Tensor:
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta), as
    TF1; seeds as og.random_uniform's.

    Raises:
        ValueError: max_delta is negative.
    """
    top = _python_number(max_delta, "random_brightness: max_delta")
    if top < 0:
        raise ValueError(f"random_brightness: max_delta must be non-negative, got {top}")
    delta = api_extra.random_uniform([], -top, top, seed=seed) if top > 0 else 0.0
    return adjust_brightness(image, delta)


def random_contrast(image, lower, upper, seed=None) -> Tensor:
    """adjust_contrast by a factor drawn uniformly from [lower, upper), as TF1; seeds as
    og.random_uniform's.

    Raises:
        ValueError: upper <= lower, or lower < 0.
    """
    lo = _python_number(lower, "random_contrast: lower")
    hi = _python_number(upper, "random_contrast: upper")
    if hi <= lo:
        raise ValueError(f"random_contrast: upper must be > lower, got [{lo}, {hi})")
    if lo < 0:
        raise ValueError(f"random_contrast: lower must be non-negative, got {lo}")
    return adjust_contrast(image, api_extra.random_uniform([], lo, hi, seed=seed))


def per_image_standardization(image) -> Tensor:
    """(x - mean) / max(stddev, 1 / sqrt(pixels)) over each image's last three axes,
    in float32 (as TF1: integer images are cast, not scaled).

    Raises:
        ShapeError: image has rank below 3.
    """
    x = _t(image)
    if x.shape is None or len(x.shape) < 3:
        got = "an unknown rank" if x.shape is None else f"shape {list(x.shape)}"
        raise ShapeError(f"per_image_standardization: image needs rank >= 3, got {got}")
    flt = api.cast(x, DType.FLOAT32)
    axes = [-3, -2, -1]
    count = api.reduce_prod(api.cast(api_extra._dims_slice(x, len(x.shape) - 3, None),
                                     DType.FLOAT32))
    mean = api.reduce_mean(flt, axes, keepdims=True)
    std = api_math.reduce_std(flt, axes, keepdims=True)
    return (flt - mean) / api.maximum(std, api.rsqrt(count))


# The colour, measure and box functions live in their own modules; og.image is this
# module, so they are re-exported here (imported last: they use the helpers above).
from .image_boxes import *  # noqa: E402,F401,F403
from .image_boxes import __all__ as _boxes_all  # noqa: E402
from .image_color import *  # noqa: E402,F401,F403
from .image_color import __all__ as _color_all  # noqa: E402
from .image_quality import *  # noqa: E402,F401,F403
from .image_quality import __all__ as _quality_all  # noqa: E402

__all__ = sorted(__all__ + _boxes_all + _color_all + _quality_all)
# train/image_more.py (the PNG codec, NMS variants, resize_area, ...) adds its names here
# when it is imported (train/public.py does), as it needs this module first

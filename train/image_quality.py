"""og.image measures of images: TF1's total_variation, image_gradients, sobel_edges,
psnr and ssim, built from ONNX ops (slices, Pad, depthwise Conv, reductions) in TF's
own order of operations, so they export and differentiate.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_math
from . import graph as _g
from . import nn
from .api import _t
from .api_extra import _python_number
from .graph import Tensor

__all__ = ["image_gradients", "psnr", "sobel_edges", "ssim", "total_variation"]


def _rank(x: Tensor, allowed: tuple, what: str) -> int:
    """x's rank when it is one of `allowed`.

    Raises:
        ShapeError: the rank is unknown or not allowed.
    """
    if x.shape is None or len(x.shape) not in allowed:
        got = "an unknown rank" if x.shape is None else f"shape {list(x.shape)}"
        want = " or ".join(f"{r}-D" for r in allowed)
        raise ShapeError(f"{what}: images must be {want}, got {got} ({x.name!r})")
    return len(x.shape)


def total_variation(images, name=None) -> Tensor:
    """The sum of absolute differences between neighbouring pixels, down and across:
    a scalar for one 3-D image, one value per image for a 4-D batch (TF1's
    tf.image.total_variation).

    Raises:
        ShapeError: images are not 3-D or 4-D.
    """
    _g.check_name(name, "total_variation")
    x = _t(images)
    rank = _rank(x, (3, 4), "total_variation")
    lead = (slice(None),) * (rank - 3)
    down = x[lead + (slice(1, None),)] - x[lead + (slice(None, -1),)]
    across = x[lead + (slice(None), slice(1, None))] - x[lead + (slice(None), slice(None, -1))]
    axes = None if rank == 3 else [1, 2, 3]
    total = api.reduce_sum(api.abs(down), axes) + api.reduce_sum(api.abs(across), axes)
    return api.identity(total, name=name) if name is not None else total


def image_gradients(image) -> tuple:
    """(dy, dx): each pixel's difference to its neighbour below and to its right, 0 on
    the last row/column, same shape as the 4-D NHWC image (tf.image.image_gradients).

    Raises:
        ShapeError: image is not 4-D.
    """
    x = _t(image)
    _rank(x, (4,), "image_gradients")
    dy = x[:, 1:] - x[:, :-1]
    dx = x[:, :, 1:] - x[:, :, :-1]
    return (api.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]]),
            api.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]]))


def _image_rank(x: Tensor, what: str) -> int:
    """x's rank: images [..., height, width, channels], the channels known or not.

    Raises:
        ShapeError: the rank is unknown or below 3.
    """
    if x.shape is None or len(x.shape) < 3:
        got = "an unknown rank" if x.shape is None else f"shape {list(x.shape)}"
        raise ShapeError(f"{what}: images must be at least 3-D [..., height, width, "
                         f"channels], got {got} ({x.name!r})")
    return len(x.shape)


def _i64(values) -> Tensor:
    return api.constant(np.asarray(values, np.int64))


def _fold_channels(x: Tensor) -> Tensor:
    """Images [..., h, w, c] as one-channel NCHW planes [prod(...) * c, 1, h, w], plane
    i * c + k holding channel k of image i. Convolving the planes with a one-channel
    kernel is the depthwise conv with that kernel tiled c times, but needs no channel
    count while building (TF tiles with the run's count); being NCHW already, the
    convs on them need no transposes either."""
    shape = api.shape(x)
    images = x if x.shape is not None and len(x.shape) == 4 else \
        api.reshape(x, api.concat([_i64([-1]), shape[-3:]], 0))
    planes = api.transpose(images, [0, 3, 1, 2])
    return api.reshape(planes, api.concat([_i64([-1, 1]), shape[-3:-1]], 0))


def _unfold_channels(per_plane: Tensor, x: Tensor) -> Tensor:
    """Values [planes, 1, ...] of _fold_channels(x)'s planes as [..., c, ...]: x's
    leading dims, its channels, then the planes' trailing dims."""
    shape = api.shape(x)
    trailing = api.shape(per_plane)[2:]
    return api.reshape(per_plane, api.concat([shape[:-3], shape[-1:], trailing], 0))


_SOBEL = np.transpose(np.asarray([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                                  [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]]), (1, 2, 0))


def sobel_edges(image) -> Tensor:
    """The vertical and horizontal Sobel responses of each channel of 4-D NHWC images,
    stacked on a new last axis ([batch, h, w, channels, 2]), the borders reflected, as
    tf.image.sobel_edges. Any dim, the channel count included, may be known only at
    run time.

    Raises:
        ShapeError: image is not 4-D (or its rank is unknown).
    """
    x = _t(image)
    _rank(x, (4,), "sobel_edges")
    channels = x.shape[-1]
    if channels is None:
        return _sobel_of_planes(x)
    filters = np.tile(_SOBEL[:, :, None, :], (1, 1, channels, 1))
    padded = api.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = nn.depthwise_conv2d(padded, api.constant(filters.astype(np.float64), x.dtype),
                                  [1, 1, 1, 1], "VALID")
    shape = api.concat([api.shape(x), api.constant(np.asarray([2], np.int64))], 0)
    return api.reshape(out, shape)


def _sobel_of_planes(x: Tensor) -> Tensor:
    """sobel_edges of NHWC images x whose channel count only the run knows: each
    channel a plane of its own convolved with both kernels (TF tiles them with the
    run's count instead; a depthwise Conv needs its group while building)."""
    filters = api.constant(_SOBEL[:, :, None, :].astype(np.float64), x.dtype)
    planes = api.pad(_fold_channels(x), [[0, 0], [0, 0], [1, 1], [1, 1]], mode="REFLECT")
    edges = nn.depthwise_conv2d(planes, filters, [1, 1, 1, 1], "VALID",
                                data_format="NCHW")      # [batch * c, 2, h, w]
    shape = api.shape(x)
    split = api.reshape(edges, api.concat([shape[:1], shape[3:], _i64([2]), shape[1:3]], 0))
    return api.transpose(split, [0, 3, 4, 1, 2])


def _same_image_shapes(a: Tensor, b: Tensor, what: str) -> None:
    """Refuse images whose last three dims (where known) differ, or of rank below 3.

    Raises:
        ShapeError: as above.
    """
    for x in (a, b):
        if x.shape is not None and len(x.shape) < 3:
            raise ShapeError(f"{what}: images need rank >= 3, got shape {list(x.shape)} "
                             f"({x.name!r})")
    if a.shape is not None and b.shape is not None:
        for da, db in zip(a.shape[-3:], b.shape[-3:]):
            if da is not None and db is not None and da != db:
                raise ShapeError(f"{what}: the images' last three dims differ: "
                                 f"{list(a.shape)} and {list(b.shape)}")


def _as_unit_float(a, b, max_val, what: str) -> tuple:
    """a, b and max_val as float32 through convert_image_dtype (max_val first cast to
    a's dtype), as TF's psnr and ssim."""
    from .image import convert_image_dtype

    x, y = _t(a), _t(b)
    _same_image_shapes(x, y, what)
    top = api.cast(_t(max_val, graph=x.graph), x.dtype) if _g._is_symbolic(max_val) \
        else api.constant(_python_number(max_val, f"{what}: max_val"), x.dtype)
    return (convert_image_dtype(x, DType.FLOAT32), convert_image_dtype(y, DType.FLOAT32),
            convert_image_dtype(top, DType.FLOAT32))


def psnr(a, b, max_val, name=None) -> Tensor:
    """Peak signal-to-noise ratio of image batches a and b (dB), one value per image
    over its last three axes: 20 log10(max_val) - 10 log10(mse), as tf.image.psnr.
    Integer images are scaled to [0, 1] with their max_val.

    Raises:
        ShapeError: a or b has rank below 3, or their last three dims differ.
    """
    _g.check_name(name, "psnr")
    x, y, top = _as_unit_float(a, b, max_val, "psnr")
    mse = api.reduce_mean(api_math.squared_difference(x, y), [-3, -2, -1])
    ln10 = api.log(api.constant(10.0, DType.FLOAT32))
    value = 20.0 * api.log(top) / ln10 - np.float32(10 / np.log(10)) * api.log(mse)
    return api.identity(value, name=name) if name is not None else value


def _gaussian(size: int, sigma: float) -> np.ndarray:
    """TF's _fspecial_gauss in float32: a normalised size x size Gaussian window
    (softmax of -(i^2 + j^2) / 2 sigma^2 over the grid), shaped (size, size, 1, 1)."""
    coords = np.arange(size, dtype=np.float32) - np.float32((size - 1) / 2.0)
    g = np.square(coords) * np.float32(-0.5 / np.square(np.float32(sigma)))
    g = (g[None, :] + g[:, None]).reshape(-1)
    e = np.exp(g - g.max())
    return (e / e.sum()).astype(np.float32).reshape(size, size, 1, 1)


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         return_index_map=False) -> Tensor:
    """Structural similarity of image batches (tf.image.ssim): local means, variances
    and covariance under a filter_size Gaussian window (sigma filter_sigma, 'VALID'),
    luminance x contrast-structure with constants (k1 max_val)^2 and (k2 max_val)^2,
    averaged over height, width and channels (per window position and image with
    return_index_map). Integer images are scaled to [0, 1] with their max_val.

    Raises:
        ShapeError: an image's rank is unknown or below 3, the last three dims
            differ, or height or width is below filter_size (known sizes; unknown
            ones, as the channel count, may be left to the run, which checks them).
        ValueError: filter_size < 1 or filter_sigma <= 0.
    """
    size = api._int_arg(filter_size, "ssim: filter_size")
    sigma = _python_number(filter_sigma, "ssim: filter_sigma")
    if size < 1:
        raise ValueError(f"ssim: filter_size must be >= 1, got {size}")
    if not sigma > 0:
        raise ValueError(f"ssim: filter_sigma must be > 0, got {sigma}")
    x, y, top = _as_unit_float(img1, img2, max_val, "ssim")
    _image_rank(x, "ssim")
    for dim in x.shape[-3:-1]:
        if dim is not None and dim < size:
            raise ShapeError(f"ssim: height and width must be >= filter_size {size}, "
                             f"got images of shape {list(x.shape)}")
    window = _gaussian(size, sigma)
    channels = x.shape[-1]
    kernel = None if channels is None else api.constant(np.tile(window, (1, 1, channels, 1)))
    unknown = [d for d, n in zip((-3, -2), x.shape[-3:-1]) if n is None]
    if unknown:
        dims = api.stack([api.shape(x)[d] for d in unknown])
        x = api_math._checked(x, api.greater_equal(dims, size),
                              f"ssim: height and width must be >= filter_size {size}")
    c1 = (_python_number(k1, "ssim: k1") * top) ** 2
    c2 = (_python_number(k2, "ssim: k2") * top) ** 2
    index_map = api._bool_arg(return_index_map, "ssim: return_index_map")
    if channels is None:
        return _ssim_of_planes(x, y, window, c1, c2, index_map)

    def local_mean(t: Tensor) -> Tensor:
        shape = api.shape(t)
        images = api.reshape(t, api.concat([api.constant(np.asarray([-1], np.int64)),
                                            shape[-3:]], 0))
        filtered = nn.depthwise_conv2d(images, kernel, [1, 1, 1, 1], "VALID")
        return api.reshape(filtered, api.concat([shape[:-3], api.shape(filtered)[1:]], 0))

    luminance, cs = _ssim_terms(x, y, local_mean, c1, c2)
    per_channel = luminance * cs
    if not index_map:
        per_channel = api.reduce_mean(per_channel, [-3, -2])
    return api.reduce_mean(per_channel, [-1])


def _ssim_terms(x: Tensor, y: Tensor, local_mean, c1, c2) -> tuple:
    """(luminance, contrast-structure) of SSIM for images x and y under the window
    `local_mean` (a function of a tensor), in TF's order of operations."""
    mean0, mean1 = local_mean(x), local_mean(y)
    num0 = mean0 * mean1 * 2.0
    den0 = api.square(mean0) + api.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = local_mean(x * y) * 2.0
    den1 = local_mean(api.square(x) + api.square(y))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance, cs


def _plane_mean(window: np.ndarray):
    """The local mean of one-channel NCHW planes under `window` (kh, kw, 1, 1)."""
    kernel = api.constant(window)
    return lambda t: nn.depthwise_conv2d(t, kernel, [1, 1, 1, 1], "VALID", data_format="NCHW")


def _ssim_of_planes(x: Tensor, y: Tensor, window: np.ndarray, c1, c2,
                    index_map: bool) -> Tensor:
    """ssim of float32 images x, y whose channel count only the run knows: each channel
    of each image a plane of its own under the one-channel window (TF tiles the window
    with the run's count instead; a depthwise Conv needs its group while building)."""
    luminance, cs = _ssim_terms(_fold_channels(x), _fold_channels(y), _plane_mean(window),
                                c1, c2)
    per_plane = luminance * cs                              # [planes, 1, h', w']
    if not index_map:
        per_plane = api.reduce_mean(per_plane, [-2, -1])
    # TF's mean over channels, last: a map's channels sit before its h' and w'
    return api.reduce_mean(_unfold_channels(per_plane, x), [-3 if index_map else -1])

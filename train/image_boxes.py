"""og.image functions over boxes: TF1's non_max_suppression and crop_and_resize.

non_max_suppression is ONNX's NonMaxSuppression for one batch and one class (same
greedy order: descending score, ties to the lower index; same strict > tests on IoU and
score). crop_and_resize follows TF's CropAndResize kernel: box corners are fractions
of the image's height - 1 and width - 1, sample rows and columns are spread evenly
between them (one box centre for a size of 1), samples outside the image take
extrapolation_value, and bilinear samples interpolate their four neighbours. It is a
few Gathers and lerps, so it exports and differentiates with respect to the image
and the boxes.
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
from .packing import holds_tensor, int64_tensor

__all__ = ["crop_and_resize", "non_max_suppression"]


def _scalar(value, dtype: DType, g, what: str) -> Tensor:
    if _g._is_symbolic(value):
        return api.reshape(api.cast(_t(value, graph=g), dtype), [1])
    return api.constant(np.asarray([_python_number(value, what)]), dtype)


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None) -> Tensor:
    """Indices (int32) of at most max_output_size boxes kept by greedy non-maximum
    suppression: by descending score, a box is kept unless it overlaps a kept one by
    IoU > iou_threshold; boxes scoring <= score_threshold are dropped (TF1's
    tf.image.non_max_suppression). boxes are [num, 4] corner pairs (y1, x1, y2, x2)
    in either order, scores [num].

    Raises:
        ShapeError: boxes is not [num, 4] or scores not [num] (where known).
        ValueError: max_output_size is a negative int, or iou_threshold a number
            outside [0, 1] (a tensor outside it fails when the graph runs).
    """
    _g.check_name(name, "non_max_suppression")
    b, s = _t(boxes), _t(scores)
    g = b.graph
    if b.shape is not None and (len(b.shape) != 2 or b.shape[1] not in (None, 4)):
        raise ShapeError(f"non_max_suppression: boxes must be [num_boxes, 4], got shape "
                         f"{list(b.shape)} ({b.name!r})")
    if s.shape is not None and len(s.shape) != 1:
        raise ShapeError(f"non_max_suppression: scores must be 1-D [num_boxes], got "
                         f"shape {list(s.shape)} ({s.name!r})")
    if b.shape is not None and s.shape is not None and None not in (b.shape[0], s.shape[0]) \
            and b.shape[0] != s.shape[0]:
        raise ShapeError(f"non_max_suppression: {b.shape[0]} boxes but {s.shape[0]} "
                         "scores")
    if _g._is_symbolic(max_output_size):
        limit = api.reshape(_g.integer_tensor(max_output_size,
                                              "non_max_suppression: max_output_size", g),
                            [1])
        limit = api.cast(limit, DType.INT64)
    else:
        n = api._int_arg(max_output_size, "non_max_suppression: max_output_size")
        if n < 0:
            raise ValueError(f"non_max_suppression: max_output_size must be >= 0, got {n}")
        limit = api.constant(np.asarray([n], np.int64))
    if not _g._is_symbolic(iou_threshold):
        iou = _python_number(iou_threshold, "non_max_suppression: iou_threshold")
        if not 0.0 <= iou <= 1.0:
            raise ValueError(f"non_max_suppression: iou_threshold must be in [0, 1], got "
                             f"{iou}")
    iou_t = _scalar(iou_threshold, DType.FLOAT32, g, "non_max_suppression: iou_threshold")
    score_t = _scalar(score_threshold, DType.FLOAT32, g,
                      "non_max_suppression: score_threshold")
    picked = g.op("NonMaxSuppression",
                  [api.expand_dims(api.cast(b, DType.FLOAT32), 0),
                   api.reshape(api.cast(s, DType.FLOAT32), [1, 1, -1]), limit, iou_t,
                   score_t], {"center_point_box": 0})
    return api.cast(picked[:, 2], DType.INT32, name=name)


def _crop_size(crop_size, g) -> tuple:
    """(height, width) as ints when given as ints, else as int64 scalar tensors.

    Raises:
        ValueError: an int size is < 1, or crop_size does not hold two sizes.
    """
    if holds_tensor(crop_size):
        size = int64_tensor(crop_size, "crop_and_resize: crop_size", g)
        if size.shape is not None and list(size.shape) not in ([2], [None]):
            raise ValueError(f"crop_and_resize: crop_size must hold 2 sizes, got shape "
                             f"{list(size.shape)}")
        size = api_math._checked(size, api.greater(size, api.zeros_like(size)),
                                 "crop_and_resize: crop_size must be positive")
        return size[0], size[1]
    sizes = [api._int_arg(v, "crop_and_resize: crop_size") for v in np.atleast_1d(
        np.asarray(crop_size, dtype=object))]
    if len(sizes) != 2 or min(sizes) < 1:
        raise ValueError(f"crop_and_resize: crop_size must be two positive sizes, got "
                         f"{list(crop_size)}")
    return sizes[0], sizes[1]


def _sample_points(lo: Tensor, hi: Tensor, length: Tensor, count) -> Tensor:
    """TF's sample coordinates of one axis for every box: [num_boxes, count] float32.

    lo, hi: the box's two corners on this axis ([num_boxes, 1], fractions of the
    image); length: the image's size - 1 (float32 scalar); count: the crop size (an int
    or an int64 scalar tensor)."""
    spread = api.cast(api_extra.range(count), DType.FLOAT32)
    steps = api.cast(count, DType.FLOAT32) - 1.0 if _g._is_symbolic(count) \
        else api.constant(float(count - 1), DType.FLOAT32)
    ramp = lo * length + spread * ((hi - lo) * length / api.maximum(steps, 1.0))
    centre = (lo + hi) * 0.5 * length + api.zeros_like(ramp)
    if not _g._is_symbolic(count):
        return ramp if count > 1 else centre
    return api.where(api.greater(count, 1), ramp, centre)


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                    extrapolation_value=0, name=None, box_indices=None) -> Tensor:
    """Crops of NHWC images resized to crop_size: [num_boxes, crop_h, crop_w, depth]
    float32 (TF1's tf.image.crop_and_resize). boxes [num_boxes, 4] hold normalised
    (y1, x1, y2, x2) (y1 > y2 flips the crop); box_ind (TF2's box_indices) names each
    box's image; method "bilinear" or "nearest"; samples outside the image are
    extrapolation_value.

    Raises:
        ShapeError: image is not 4-D, boxes not [num_boxes, 4], box_ind not
            [num_boxes] (where known); a box_ind outside [0, batch) fails when the graph
            runs.
        ValueError: box_ind given twice or not at all, crop_size missing or not two
            positive sizes, or an unknown method.
    """
    _g.check_name(name, "crop_and_resize")
    if box_ind is not None and box_indices is not None:
        raise ValueError("crop_and_resize: give box_ind or box_indices, not both")
    box_ind = box_indices if box_ind is None else box_ind
    if box_ind is None or crop_size is None:
        raise ValueError("crop_and_resize: box_ind and crop_size are required")
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"crop_and_resize: method must be 'bilinear' or 'nearest', got "
                         f"{method!r}")
    x = _t(image)
    g = x.graph
    if x.shape is None or len(x.shape) != 4:
        got = "an unknown rank" if x.shape is None else f"shape {list(x.shape)}"
        raise ShapeError(f"crop_and_resize: image must be 4-D [batch, height, width, "
                         f"depth], got {got} ({x.name!r})")
    bx = api.cast(_t(boxes, graph=g), DType.FLOAT32)
    if bx.shape is not None and (len(bx.shape) != 2 or bx.shape[1] not in (None, 4)):
        raise ShapeError(f"crop_and_resize: boxes must be [num_boxes, 4], got shape "
                         f"{list(bx.shape)}")
    which = api.cast(_g.integer_tensor(box_ind, "crop_and_resize: box_ind", g),
                     DType.INT64)
    if which.shape is not None and len(which.shape) != 1:
        raise ShapeError(f"crop_and_resize: box_ind must be 1-D [num_boxes], got shape "
                         f"{list(which.shape)}")
    ch, cw = _crop_size(crop_size, g)
    fill = api.constant(_python_number(extrapolation_value,
                                       "crop_and_resize: extrapolation_value"),
                        DType.FLOAT32) if not _g._is_symbolic(extrapolation_value) else \
        api.cast(_t(extrapolation_value, graph=g), DType.FLOAT32)

    dims = api.shape(x)
    batch, height, width = dims[0], dims[1], dims[2]
    which = api_math._checked(
        which, api.logical_and(api.greater_equal(which, api.zeros_like(which)),
                               api.less(which, batch)),
        "crop_and_resize: box_ind has values outside [0, batch)")
    last_y = api.cast(height, DType.FLOAT32) - 1.0
    last_x = api.cast(width, DType.FLOAT32) - 1.0
    corner = [bx[:, k:k + 1] for k in range(4)]
    in_y = _sample_points(corner[0], corner[2], last_y, ch)          # [n, ch]
    in_x = _sample_points(corner[1], corner[3], last_x, cw)          # [n, cw]
    zero = api.constant(0.0, DType.FLOAT32)
    inside = api.logical_and(
        api.expand_dims(api.logical_and(in_y >= zero, in_y <= last_y), 2),
        api.expand_dims(api.logical_and(in_x >= zero, in_x <= last_x), 1))

    pixels = api.reshape(api.cast(x, DType.FLOAT32),
                         api.concat([api.constant(np.asarray([-1], np.int64)), dims[3:]], 0))
    base = api.reshape(which * height, [-1, 1, 1])                  # image's first row
    w64 = width

    def index(pos: Tensor, last: Tensor) -> Tensor:
        # clamped so that samples outside the image (masked below) still gather
        return api.cast(api.clip_by_value(pos, zero, api.maximum(last, zero)), DType.INT64)

    def sample(rows: Tensor, cols: Tensor) -> Tensor:
        flat = (base + api.expand_dims(rows, 2)) * w64 + api.expand_dims(cols, 1)
        return api.gather(pixels, flat, axis=0)                     # [n, ch, cw, depth]

    if method == "nearest":
        # TF rounds half away from zero; valid samples are >= 0, so floor(v + 0.5)
        crops = sample(index(api.floor(in_y + 0.5), last_y),
                       index(api.floor(in_x + 0.5), last_x))
    else:
        top, left = api.floor(in_y), api.floor(in_x)
        y_lerp = api.expand_dims(api.expand_dims(in_y - top, 2), 3)   # [n, ch, 1, 1]
        x_lerp = api.expand_dims(api.expand_dims(in_x - left, 1), 3)  # [n, 1, cw, 1]
        rows = (index(top, last_y), index(api.ceil(in_y), last_y))
        cols = (index(left, last_x), index(api.ceil(in_x), last_x))
        upper = [sample(rows[0], c) for c in cols]
        lower = [sample(rows[1], c) for c in cols]
        top_row = upper[0] + (upper[1] - upper[0]) * x_lerp
        bottom_row = lower[0] + (lower[1] - lower[0]) * x_lerp
        crops = top_row + (bottom_row - top_row) * y_lerp
    result = api.where(api.expand_dims(inside, 3), crops, fill)
    return api.identity(result, name=name) if name is not None else result

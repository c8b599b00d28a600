"""Operators: image family (GridSample, AffineGrid, RoiAlign, NonMaxSuppression,
ImageDecoder).

GridSample handles 2-D and 3-D images with nearest/linear/cubic interpolation (also the
opset-16 names bilinear/bicubic) and zeros/border/reflection padding: it gathers every
interpolation tap for all output positions and channels at once, looping only over the
taps (2^d linear, 4^d cubic). RoiAlign loops over regions of interest, each vectorised
over channels, bins and sample points. NonMaxSuppression's greedy selection is a loop
over candidates per (batch, class), with IoUs against the kept boxes vectorised.
ImageDecoder decodes with Pillow (the optional `image` extra), imported on first use so
the core stays numpy-only.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError, UnsupportedOpError
from .common import check_result_size
from .registry import TensorInfo, define

# ---------------------------------------------------------------------------------------
# GridSample

_MODES = {"linear": "linear", "bilinear": "linear", "nearest": "nearest", "cubic": "cubic",
          "bicubic": "cubic"}
_CUBIC_A = -0.75


def _reflect(v, lo, hi):
    """Fold coordinates into [lo, hi] by reflecting at the borders (repeatedly)."""
    span = hi - lo
    if span <= 0:
        return np.full_like(v, lo)
    below, above = v < lo, v > hi
    dx = np.where(below, lo - v, np.where(above, v - hi, 0))
    n = np.floor(dx / span)
    r = dx - n * span
    even = (n % 2) == 0
    from_lo, from_hi = lo + r, hi - r
    out = np.where(below, np.where(even, from_lo, from_hi), v)
    return np.where(above, np.where(even, from_hi, from_lo), out)


def _cubic_weights(t):
    """Keys cubic convolution weights (a = -0.75) of taps -1, 0, 1, 2 at offset t."""
    a = _CUBIC_A
    s = t + 1
    w0 = ((a * s - 5 * a) * s + 8 * a) * s - 4 * a
    w1 = ((a + 2) * t - (a + 3)) * t * t + 1
    u = 1 - t
    w2 = ((a + 2) * u - (a + 3)) * u * u + 1
    s = 2 - t
    w3 = ((a * s - 5 * a) * s + 8 * a) * s - 4 * a
    return [w0, w1, w2, w3]


def _grid_sample_kernel(inputs, attrs, ctx):
    """Sample X at the normalised grid positions ((x, y[, z]) in [-1, 1])."""
    x, grid = np.asarray(inputs[0]), np.asarray(inputs[1])
    mode = _MODES.get(attrs["mode"])
    if mode is None:
        raise OpAttributeError(f"GridSample: unknown mode {attrs['mode']!r}")
    padding = attrs["padding_mode"]
    if padding not in ("zeros", "border", "reflection"):
        raise OpAttributeError(f"GridSample: unknown padding_mode {padding!r}")
    nsp = x.ndim - 2
    if nsp < 1 or grid.ndim != nsp + 2 or grid.shape[-1] != nsp \
            or grid.shape[0] != x.shape[0]:
        raise ShapeError(f"GridSample: grid {grid.shape} does not fit input {x.shape}")
    align = bool(attrs["align_corners"])
    sizes = x.shape[2:]
    n, c = x.shape[:2]
    out_sp = grid.shape[1:-1]
    if 0 in sizes:
        if n * c * int(np.prod(out_sp)) == 0:  # nothing to sample
            return (np.zeros((n, c) + tuple(out_sp), dtype=x.dtype),)
        # onnxruntime refuses too ("Input spatial dimensions must be non-empty")
        raise ShapeError(f"GridSample: input X {x.shape} has an empty spatial dimension; "
                         f"there is nothing to sample at the grid's {out_sp} positions")
    cdt = np.float64 if grid.dtype == np.float64 else np.float32
    g = grid.astype(cdt)
    coords, bounds = [], []
    for d, size in enumerate(sizes):  # d = 0 is the outermost spatial dim (z or y)
        v = g[..., nsp - 1 - d]
        if align:
            v = (v + 1) / cdt(2) * cdt(size - 1)
            lo, hi = 0.0, float(size - 1)
        else:
            v = ((v + 1) * cdt(size) - 1) / cdt(2)
            lo, hi = -0.5, size - 0.5
        if mode == "nearest":
            v = np.rint(v)
        outside = (v < lo) | (v > hi)
        if mode == "cubic":
            # PyTorch's grid_sample (whose exports these are) and onnxruntime keep the
            # cubic coordinate and apply border/reflection to each of the 4 taps below;
            # folding the coordinate first (the ONNX reference) flattens the filter.
            # Before the taps become integer indices the coordinate is brought within
            # reach of the image, with the same taps: an |x| of 1e19 or inf would
            # overflow int64 (onnxruntime then reads the wrong border). Reflection
            # repeats every 2 * (hi - lo) (a whole number): reduce exactly modulo that
            # (inf has no position there: NaN, as with linear). Otherwise, beyond 3
            # pixels outside every tap is outside (zeros) or on the border (border),
            # as it is at 4 outside: clamp there, so +-inf reads the border (as the
            # reference does; onnxruntime reads garbage past 2^63).
            if padding == "reflection":
                period = 2.0 * (hi - lo)
                if period > 0:
                    with np.errstate(invalid="ignore"):
                        # fmod is exact; v - lo first would round away lo = -0.5
                        r = np.fmod(v.astype(np.float64), period) - lo
                    r = np.where(r < 0, r + period, np.where(r >= period, r - period, r))
                    v = (lo + r).astype(cdt)
            else:
                v = np.clip(v, cdt(-4), cdt(size + 3))
        elif padding == "border":
            v = np.where(outside, np.clip(v, 0, size - 1), v)
        elif padding == "reflection":
            v = np.where(outside, _reflect(v, lo, hi), v)
        coords.append(v.astype(cdt))
        bounds.append((lo, hi))

    taps = []  # per dim: list of (integer index array, weight array)
    for v in coords:
        if mode == "nearest":
            taps.append([(np.trunc(v).astype(np.int64), None)])
            continue
        f = np.floor(v)
        t = v - f
        f = f.astype(np.int64)
        if mode == "linear":
            taps.append([(f, 1 - t), (f + 1, t)])
        else:
            taps.append([(f + k - 1, w) for k, w in enumerate(_cubic_weights(t))])

    xt = np.moveaxis(x, 1, -1)  # (N, *sizes, C)
    batch = np.arange(n).reshape((n,) + (1,) * len(out_sp))
    acc = np.zeros((n,) + tuple(out_sp) + (c,), dtype=np.float64)
    for combo in itertools.product(*taps):
        index, weight, valid = [], None, None
        for d, (i, w) in enumerate(combo):
            size = sizes[d]
            if padding == "zeros":
                ok = (i >= 0) & (i < size)
                valid = ok if valid is None else valid & ok
            elif padding == "reflection":
                lo, hi = bounds[d]
                i = np.trunc(_reflect(i.astype(np.float64), lo, hi)).astype(np.int64)
            index.append(np.clip(i, 0, size - 1))
            if w is not None:
                weight = w if weight is None else weight * w
        vals = xt[(batch,) + tuple(index)].astype(np.float64)  # (N, *out, C)
        if weight is not None:
            vals = vals * weight.astype(np.float64)[..., None]
        if valid is not None:
            vals = np.where(valid[..., None], vals, 0.0)
        acc += vals
    return (np.ascontiguousarray(np.moveaxis(acc, -1, 1)).astype(x.dtype),)


def _grid_sample_infer(attrs, inputs):
    x, grid = inputs
    n = c = None
    if x.shape is not None:
        n, c = x.shape[0], x.shape[1]
    if grid.shape is None:
        return [TensorInfo(x.dtype, None)]
    return [TensorInfo(x.dtype, (n if n is not None else grid.shape[0], c)
                       + tuple(grid.shape[1:-1]))]


# ---------------------------------------------------------------------------------------
# AffineGrid


def _base_coords(size, align):
    if align:
        return np.linspace(-1.0, 1.0, size) if size > 1 else np.zeros(size)
    return (np.arange(size) * 2.0 + 1.0) / size - 1.0


def _affine_grid_kernel(inputs, attrs, ctx):
    """Grid (N, *sizes, d) of theta applied to the normalised base positions."""
    theta = np.asarray(inputs[0])
    size = [int(v) for v in np.asarray(inputs[1]).reshape(-1)]
    nsp = len(size) - 2
    if nsp not in (2, 3) or theta.shape[1:] != (nsp, nsp + 1):
        raise ShapeError(f"AffineGrid: theta {theta.shape} does not fit size {size}")
    if min(size) < 0:
        raise ShapeError(f"AffineGrid: size {size} has a negative dimension")
    # the float64 base positions (*sizes, d + 1) and grid (N, *sizes, d) grow from `size`
    check_result_size("AffineGrid", "the grid", [max(theta.shape[0], 1)] + size[2:]
                      + [nsp + 1], 8, beyond=theta.nbytes, cause=f"size {size}")
    align = bool(attrs["align_corners"])
    axes = [_base_coords(s, align) for s in size[2:]]  # outermost first (z, y, x)
    mesh = np.meshgrid(*axes, indexing="ij")
    # homogeneous base positions ordered (x, y[, z], 1)
    base = np.stack(list(mesh[::-1]) + [np.ones(mesh[0].shape)], axis=-1)  # (*sizes, d+1)
    flat = base.reshape(-1, nsp + 1)
    grid = np.einsum("pk,njk->npj", flat, theta.astype(np.float64))
    return (grid.reshape((theta.shape[0],) + tuple(size[2:]) + (nsp,)).astype(theta.dtype),)


def _affine_grid_infer(attrs, inputs):
    theta, size = inputs
    value = None if size.value is None else [int(v) for v in np.asarray(size.value).reshape(-1)]
    if value is not None:
        return [TensorInfo(theta.dtype, (value[0],) + tuple(value[2:]) + (len(value) - 2,))]
    if size.shape is not None and size.shape[0] is not None:
        nsp = size.shape[0] - 2
        n = theta.shape[0] if theta.shape is not None else None
        return [TensorInfo(theta.dtype, (n,) + (None,) * nsp + (nsp,))]
    return [TensorInfo(theta.dtype, None)]


# ---------------------------------------------------------------------------------------
# RoiAlign


def _roi_axis(start, bin_size, bins, grid, size):
    """Sample positions along one axis: (low, high, w_low, w_high, valid), (bins, grid)."""
    p = np.arange(bins)[:, None]
    i = np.arange(grid)[None, :]
    v = start + p * bin_size + (i + 0.5) * bin_size / grid
    valid = (v >= -1.0) & (v <= size)
    # clipped to [0, size] before the int conversion: a far roi (1e30) overflowed it
    v = np.clip(v, 0.0, float(size))
    low = np.floor(v).astype(np.int64)
    at_end = low >= size - 1
    low = np.where(at_end, size - 1, low)
    high = np.where(at_end, size - 1, low + 1)
    v = np.where(at_end, low.astype(np.float64), v)
    frac = v - low
    return low, high, 1.0 - frac, frac, valid


def _roi_align_kernel(inputs, attrs, ctx):
    """Average (or max) of bilinear samples on a regular grid in each output bin.

    Raises:
        ShapeError: the inputs' shapes do not fit, a batch index is out of range, or a
            roi is not finite.
        OpAttributeError: an unknown mode, negative output sizes, a spatial_scale that
            makes the rois non-finite.
        ResourceExhaustedError: output_height/width (the output), or sampling_ratio or
            a roi's size (the grid of samples of one channel of a roi), would take more
            than 2 GiB beyond X, refused before allocating (2**40 asked numpy for
            terabytes).
    """
    x = np.asarray(inputs[0])
    rois = np.asarray(inputs[1]).astype(np.float64)
    batch = np.asarray(inputs[2]).astype(np.int64)
    if x.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 4 or batch.shape != rois.shape[:1]:
        raise ShapeError(f"RoiAlign: X {x.shape}, rois {rois.shape}, batch_indices "
                         f"{batch.shape} do not fit")
    mode = attrs["mode"]
    if mode not in ("avg", "max"):
        raise OpAttributeError(f"RoiAlign: unknown mode {mode!r}")
    ctm = attrs["coordinate_transformation_mode"]
    if ctm not in ("half_pixel", "output_half_pixel"):
        raise OpAttributeError(f"RoiAlign: unknown coordinate_transformation_mode {ctm!r}")
    half = ctm == "half_pixel"
    oh, ow = attrs["output_height"], attrs["output_width"]
    scale, ratio = attrs["spatial_scale"], attrs["sampling_ratio"]
    if oh < 0 or ow < 0:
        raise OpAttributeError(f"RoiAlign: output_height {oh} and output_width {ow} must "
                               "not be negative")
    n_img, c, h, w = x.shape
    bad = (batch < 0) | (batch >= n_img)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        # onnxruntime refuses too; numpy would read batch_indices -1 as the last image
        raise ShapeError(f"RoiAlign: batch_indices value {int(batch[k])} at index {k} is out "
                         f"of range [0, {n_img}) for X of batch {n_img}")
    if not np.isfinite(rois).all():
        k = int(np.flatnonzero(~np.isfinite(rois).all(axis=1))[0])
        raise ShapeError(f"RoiAlign: rois must be finite (as onnxruntime requires); roi {k} "
                         f"is {rois[k].tolist()}")
    if not np.isfinite(rois * scale).all():
        raise OpAttributeError(f"RoiAlign: spatial_scale {scale} makes the rois "
                               "non-finite")
    extent = (rois[:, 2:] - rois[:, :2]) * scale
    if not np.isfinite(extent).all():
        k = int(np.flatnonzero(~np.isfinite(extent).all(axis=1))[0])
        raise ShapeError(f"RoiAlign: roi {k} ({rois[k].tolist()}, spatial_scale {scale}) "
                         "has a width or height that is not finite")
    check_result_size("RoiAlign", "the output", (rois.shape[0], c, oh, ow), 8,
                      beyond=x.nbytes, cause=f"output_height {oh}, output_width {ow}")
    xf = x.astype(np.float64)
    out = np.zeros((rois.shape[0], c, oh, ow))
    if oh == 0 or ow == 0 or h == 0 or w == 0:
        # no bins, or an empty image: every sample is outside it, so 0 (onnxruntime's
        # results: an empty Y; zeros)
        return (out.astype(x.dtype),)
    offset = 0.5 if half else 0.0
    for r, (x1, y1, x2, y2) in enumerate(rois):
        sx, sy = x1 * scale - offset, y1 * scale - offset
        rw, rh = x2 * scale - offset - sx, y2 * scale - offset - sy
        if not half:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / oh, rw / ow
        gh = ratio if ratio > 0 else int(np.ceil(rh / oh))
        gw = ratio if ratio > 0 else int(np.ceil(rw / ow))
        if gh <= 0 or gw <= 0:
            continue
        # each of the four bilinear terms is a float64 (C, oh, gh, ow, gw) array; the
        # grid of one channel is bounded (a large roi at full resolution with adaptive
        # sampling makes big but real grids, which onnxruntime computes)
        check_result_size("RoiAlign", f"the bilinear samples of one channel of roi {r}",
                          (4, oh, gh, ow, gw), 8, beyond=x.nbytes,
                          cause=(f"sampling_ratio {ratio}" if ratio > 0 else
                                 f"a grid of {gh} x {gw} samples per bin for roi "
                                 f"{rois[r].tolist()}"))
        ylo, yhi, wyl, wyh, vy = _roi_axis(sy, bh, oh, gh, h)
        xlo, xhi, wxl, wxh, vx = _roi_axis(sx, bw, ow, gw, w)
        img = xf[batch[r]]  # (C, H, W)
        valid = vy[:, :, None, None] & vx[None, None, :, :]  # (oh, gh, ow, gw)
        terms = []
        for yi, wy in ((ylo, wyl), (yhi, wyh)):
            for xi, wx in ((xlo, wxl), (xhi, wxh)):
                wgt = np.where(valid, wy[:, :, None, None] * wx[None, None, :, :], 0.0)
                vals = img[:, yi[:, :, None, None], xi[None, None, :, :]]  # (C, oh, gh, ow, gw)
                terms.append(vals * wgt)
        if mode == "avg":
            out[r] = sum(terms).sum(axis=(2, 4)) / max(gh * gw, 1)
        else:
            best = np.maximum(np.maximum(terms[0], terms[1]), np.maximum(terms[2], terms[3]))
            out[r] = best.max(axis=(2, 4))
    return (out.astype(x.dtype),)


def _roi_align_infer(attrs, inputs):
    x, rois = inputs[0], inputs[1]
    if attrs["output_height"] < 0 or attrs["output_width"] < 0:
        raise OpAttributeError(f"RoiAlign: output_height {attrs['output_height']} and "
                               f"output_width {attrs['output_width']} must not be negative")
    r = rois.shape[0] if rois.shape is not None else None
    c = x.shape[1] if x.shape is not None else None
    return [TensorInfo(x.dtype, (r, c, attrs["output_height"], attrs["output_width"]))]


# ---------------------------------------------------------------------------------------
# NonMaxSuppression


def _corners(boxes, center_point_box):
    """(y1, x1, y2, x2) with y1 <= y2 and x1 <= x2, from either box format."""
    b = boxes.astype(np.float64)
    if center_point_box:
        xc, yc, bw, bh = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
        return yc - bh / 2, xc - bw / 2, yc + bh / 2, xc + bw / 2
    return (np.minimum(b[..., 0], b[..., 2]), np.minimum(b[..., 1], b[..., 3]),
            np.maximum(b[..., 0], b[..., 2]), np.maximum(b[..., 1], b[..., 3]))


def _overlaps(a, b, iou_t):
    """Whether IoU(a_i, b_j) > iou_t (in [0, 1]) for every box in `a` and every box in `b`,
    each a tuple (y1, x1, y2, x2, area) of 1-D arrays: a (len(a), len(b)) bool matrix.

    Division-free: IoU > t is inter > t * (area_a + area_b - inter), i.e.
    inter * (1 + t) > t * (area_a + area_b); empty or disjoint pairs have inter = 0 and
    never pass (IoU 0)."""
    ay1, ax1, ay2, ax2, aa = (v[:, None] for v in a)
    by1, bx1, by2, bx2, ba = b
    inter = np.minimum(ay2, by2)
    inter -= np.maximum(ay1, by1)
    np.maximum(inter, 0, out=inter)
    iw = np.minimum(ax2, bx2)
    iw -= np.maximum(ax1, bx1)
    np.maximum(iw, 0, out=iw)
    inter *= iw
    inter *= inter.dtype.type(1 + iou_t)
    np.add(aa * aa.dtype.type(iou_t), ba * ba.dtype.type(iou_t), out=iw)
    return inter > iw


# Greedy NMS runs over the score-ordered candidates a block at a time: the block's own
# overlaps are one small matrix and its kept boxes then suppress all later candidates
# in vectorised chunks of at most _NMS_PAIRS pairs (float32, as onnxruntime computes;
# a chunk's temporaries stay in L2), so memory stays O(boxes) and Python loops only
# over candidates, not candidate pairs. torchvision's ssdlite320 with random weights
# keeps 11,826 of 27,000 boxes: 160M pairs.
_NMS_BLOCK = 256
_NMS_PAIRS = 1 << 17


def _greedy_select(corners, area, scores, limit, iou_t, score_t):
    """Indices kept by greedy NMS for one (batch, class): candidates by descending
    score (ties: lower index first), each kept box suppressing the later candidates
    that overlap it by IoU > iou_t. Detection heads hand NMS tens of thousands of
    boxes: nothing here is quadratic in memory."""
    s = scores.astype(np.float64)
    order = np.argsort(-s, kind="stable")
    if score_t is not None:
        order = order[s[order] > score_t]
    n = order.size
    if n == 0:
        return []
    boxes = tuple(np.ascontiguousarray(v[order], dtype=np.float32)
                  for v in corners + (area,))
    alive = np.ones(n, dtype=bool)
    kept: list[int] = []
    for b0 in range(0, n, _NMS_BLOCK):
        b1 = min(n, b0 + _NMS_BLOCK)
        block = tuple(v[b0:b1] for v in boxes)
        suppress = _overlaps(block, block, iou_t)
        new = []
        for p in range(b1 - b0):
            if not alive[b0 + p]:
                continue
            new.append(p)
            kept.append(int(order[b0 + p]))
            if len(kept) >= limit:
                return kept
            alive[b0 + p + 1:b1] &= ~suppress[p, p + 1:]
        later = np.flatnonzero(alive[b1:]) + b1
        if not new or not later.size:
            continue
        src = tuple(v[b0:b1][new] for v in boxes)
        step = max(1, _NMS_PAIRS // len(new))
        for c0 in range(0, later.size, step):
            idx = later[c0:c0 + step]
            hit = _overlaps(src, tuple(v[idx] for v in boxes), iou_t).any(axis=0)
            alive[idx[hit]] = False
    return kept


def _nms_kernel(inputs, attrs, ctx):
    """Greedy per-class selection by score; output rows (batch, class, box) as int64."""
    boxes, scores = np.asarray(inputs[0]), np.asarray(inputs[1])
    opt = list(inputs) + [None] * (5 - len(inputs))
    max_out, iou_t, score_t = opt[2], opt[3], opt[4]
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 \
            or scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
        raise ShapeError(f"NonMaxSuppression: boxes {boxes.shape} and scores "
                         f"{scores.shape} do not fit")
    limit = 0 if max_out is None or np.asarray(max_out).size == 0 \
        else int(np.asarray(max_out).reshape(-1)[0])
    iou_t = 0.0 if iou_t is None or np.asarray(iou_t).size == 0 \
        else float(np.asarray(iou_t).reshape(-1)[0])
    score_t = None if score_t is None or np.asarray(score_t).size == 0 \
        else float(np.asarray(score_t).reshape(-1)[0])
    if not 0.0 <= iou_t <= 1.0:  # NaN too; the spec's range, onnxruntime refuses
        raise ShapeError(f"NonMaxSuppression: iou_threshold must be in [0, 1], got {iou_t}")
    rows = []
    if limit > 0:
        for b in range(boxes.shape[0]):
            corners = _corners(boxes[b], attrs["center_point_box"])
            y1, x1, y2, x2 = corners
            area = (y2 - y1) * (x2 - x1)
            for cls in range(scores.shape[1]):
                kept = _greedy_select(corners, area, scores[b, cls], limit, iou_t,
                                      score_t)
                rows.extend((b, cls, i) for i in kept)
    return (np.asarray(rows, dtype=np.int64).reshape(-1, 3),)


def _nms_infer(attrs, inputs):
    return [TensorInfo(np.dtype(np.int64), (None, 3))]


# ---------------------------------------------------------------------------------------
# ImageDecoder

_PIXEL_FORMATS = {"RGB": "RGB", "BGR": "RGB", "Grayscale": "L"}


def _image_decoder_kernel(inputs, attrs, ctx):
    """Decode an encoded image (1-D uint8 bytes: JPEG, PNG, BMP, TIFF, WebP, PNM, JPEG
    2000, whatever Pillow reads) to uint8 (H, W, 3) RGB/BGR or (H, W, 1) Grayscale.

    Raises:
        OpAttributeError: pixel_format is not RGB, BGR or Grayscale.
        ShapeError: the input is not a 1-D uint8 tensor.
        UnsupportedOpError: Pillow is not installed.
        ExecutionError: the bytes are not an image Pillow can decode, or the image is
            larger than Pillow's decompression-bomb limit.
    """
    fmt = attrs.get("pixel_format") or "RGB"
    mode = _PIXEL_FORMATS.get(fmt)
    if mode is None:
        raise OpAttributeError(f"ImageDecoder: pixel_format {fmt!r} is not one of "
                               f"{sorted(_PIXEL_FORMATS)}")
    data = np.asarray(inputs[0])
    if data.ndim != 1 or data.dtype != np.uint8:
        raise ShapeError(f"ImageDecoder: encoded_stream must be 1-D uint8, got {data.dtype} "
                         f"shape {list(data.shape)}")
    try:
        import io
        import warnings

        from PIL import Image
    except ImportError as e:
        raise UnsupportedOpError("ImageDecoder needs Pillow: pip install 'onegraph[image]'") \
            from e
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data.tobytes())) as img:
                pixels = np.asarray(img.convert(mode), dtype=np.uint8)
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombWarning,
            Image.DecompressionBombError) as e:
        raise ExecutionError(f"ImageDecoder: cannot decode {data.size} bytes as an image: "
                             f"{e}") from e
    if mode == "L":
        return (pixels[:, :, None].copy(),)
    return (np.ascontiguousarray(pixels[:, :, ::-1]) if fmt == "BGR" else pixels,)


def _image_decoder_infer(attrs, inputs):
    channels = 1 if attrs.get("pixel_format") == "Grayscale" else 3
    return [TensorInfo(np.dtype(np.uint8), (None, None, channels))]


OPS = (
    define("AffineGrid", ["theta", "size"], ["grid"], _affine_grid_kernel,
           attrs=[("align_corners", "int", 0)], infer=_affine_grid_infer, since_version=20),
    define("GridSample", ["X", "grid"], ["Y"], _grid_sample_kernel,
           attrs=[("align_corners", "int", 0), ("mode", "string", "linear"),
                  ("padding_mode", "string", "zeros")],
           infer=_grid_sample_infer, since_version=22),
    define("ImageDecoder", ["encoded_stream"], ["image"], _image_decoder_kernel,
           [("pixel_format", "string", "RGB")], infer=_image_decoder_infer,
           since_version=20),
    define("NonMaxSuppression", ["boxes", "scores", "max_output_boxes_per_class?",
                                 "iou_threshold?", "score_threshold?"], ["selected_indices"],
           _nms_kernel, attrs=[("center_point_box", "int", 0)], infer=_nms_infer,
           since_version=11),
    define("RoiAlign", ["X", "rois", "batch_indices"], ["Y"], _roi_align_kernel,
           attrs=[("coordinate_transformation_mode", "string", "half_pixel"),
                  ("mode", "string", "avg"), ("output_height", "int", 1),
                  ("output_width", "int", 1), ("sampling_ratio", "int", 0),
                  ("spatial_scale", "float", 1.0)],
           infer=_roi_align_infer, since_version=22),
)

KNOWN_FAILURES: dict[str, str] = {}

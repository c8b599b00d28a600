"""Depthwise 2-D convolution (Conv with group == C == M) without im2col.

A depthwise conv does kh*kw multiply-adds per output value and no reduction over
channels, so the batched-GEMM form (one matrix-vector product per channel over a
kh*kw-times copied column matrix) is memory-bound and pays a BLAS call per channel.
Here every output is instead a sum of shifted views of one zero-padded copy of the
input, contracted by `np.einsum` (a single sum-of-products loop, no temporaries per tap):

- Strides are removed first by splitting the padded input into stride phases:
  phase (a, b) holds padded rows a, a + sh, ... and columns b, b + sw, ..., so tap
  (i, j) = (a + sh*i2, b + sw*j2) reads phase (a, b) shifted by (i2, j2), and every
  tap of every stride is a stride-1 shift.
- With a phase flattened row-major (width wq), the vertical shift i2 is an offset of
  i2*wq and the horizontal one an offset of j2: every tap's input is one long
  contiguous slice. Rows wrap into the pad columns, which are cropped at the end.

Three forms, chosen by stride and image size (`depthwise_2d`):

- same width (stride 1, output as wide as the input, large images: ShuffleNet's and
  MobileNet's 3x3 pad-1 convs): no pad columns at all. The image rows are copied with
  zero rows above and below into one flat buffer per channel (a block copy), so tap
  (a, b) of output position p reads position p + a*W + b. One einsum per horizontal
  tap contracts the vertical taps; a horizontal tap that reaches past the image's
  side wraps into the neighbouring row there, so its partial sum is zeroed in those
  few output columns before it is added. The result needs no crop.
- rows (NCHW, large images): per channel a flat row of ho*wq outputs; one einsum per
  horizontal tap contracts the vertical taps, its inner loop running along the long
  row with the weight a broadcast scalar.
- channels-last (small images, many channels): flat (pixels, C); one einsum contracts
  all taps at once, its inner loop running along several pixels' channels (the
  weights tiled to match), which keeps loops long when ho*wq is short. The layout
  change costs two transposing copies, which only pay off on small images.
"""

from __future__ import annotations

import numpy as np

from . import jit
from .activation import relu as relu_op
from .scratch import scratch as _scratch

# Below this many flat output positions per channel (ho * wq) the per-channel rows
# are too short for the NCHW einsum's inner loop: the channels-last form wins
# (measured: 136x28x28 rows 234 vs 283 us; 272x14x14 rows 164 vs 149 us).
_ROWS_MIN_SPAN = 400
# The same-width form from this many output pixels per channel (ho * W). Measured
# against the form the rule above picks: 136x28x28 232 vs 293 us, 32x112x112 0.86x,
# 272x14x14 150 vs 156 us (channels-last), 544x7x7 121 vs 108 us; in ShuffleNet
# (interleaved runs) -1.7% overall, of which the 14x14 convs about -0.3%.
_SAME_WIDTH_MIN_SPAN = 150
# Channels-last inner loop length: this many values (whole pixels) per einsum row.
_CHANNELS_LAST_ROW = 2048


def depthwise_2d(x, w, strides, pads_begin, out_sp, cache=None, bias=None, out=None,
                 rectify=False, shift=None):
    """Depthwise conv of x (N, C, H, W) with w (C, 1, kh, kw) and optional bias (C,),
    all of x's dtype (float32 or float64), without dilation.

    `pads_begin` are the (non-negative) leading pads; the trailing extent follows from
    `out_sp`, taps past the input reading zeros. `cache`: a dict kept for fixed w
    (the channels-last form keeps its tiled weights there). The result is written into
    `out` (N, C, *out_sp) when given (any strides), else into a new array; returned.
    `rectify`: convolve max(x, 0) instead (a Relu before the conv, moved here by the
    Session's rewrite 12): numba's 3x3 forms apply it as they copy each plane, the
    others make it a pass of its own first. `shift` (C,), with `rectify`: convolve
    max(x + shift, 0) (the producer's bias moved here as well).
    """
    compiled = jit.kernels("conv")
    if compiled is not None:
        return _compiled(compiled, x, w, strides, pads_begin, out_sp, bias, out, rectify,
                         shift)
    if rectify:
        x = _rectified_input(x, shift)
    if out is None:
        out = np.empty(x.shape[:2] + tuple(out_sp), x.dtype)
    bias = None if bias is None else np.asarray(bias, x.dtype).reshape(-1)
    if strides == [1, 1] and out_sp[1] == x.shape[3] and pads_begin[1] < w.shape[3] \
            and out_sp[0] * out_sp[1] >= _SAME_WIDTH_MIN_SPAN:
        _depthwise_same_width(x, w, pads_begin[0], pads_begin[1], out_sp[0], out)
        if bias is not None:
            out += bias.reshape(-1, 1, 1)
        return out
    y = None
    if _phase_grid(w, strides, out_sp)[3] < _ROWS_MIN_SPAN:
        y = _depthwise_channels_last(x, w, strides, pads_begin, out_sp, cache, bias)
    if y is None:
        y = _depthwise_rows(x, w, strides, pads_begin, out_sp)
        if bias is not None:  # one pass crops the pad columns and adds the bias
            np.add(y, bias.reshape(-1, 1, 1), out=out)
            return out
    np.copyto(out, y)
    return out


def _rectified_input(x, shift):
    """max(x + shift, 0) per channel (x (N, C, ...), shift (C,) or None: no shift), a
    new array."""
    if shift is None:
        return relu_op(x)
    y = np.add(x, np.asarray(shift, x.dtype).reshape((-1,) + (1,) * (x.ndim - 2)))
    return relu_op(y, out=y)


def _compiled(kernels, x, w, strides, pads_begin, out_sp, bias, out, rectify=False,
              shift=None):
    """depthwise_2d through the numba kernels of conv_jit.py: the 3x3 same-size
    stride-1 form, the 3x3 stride-2 phase form (both rectifying as they copy when
    `rectify`), the 3x3 row form (other pads and strides, 1 or 2 across), or the
    general one. They write C-contiguous outputs (one compiled form per layout)."""
    c = x.shape[1]
    x = np.ascontiguousarray(x)
    zero = x.dtype.type(0)
    w = np.ascontiguousarray(w, dtype=x.dtype)
    b = np.zeros(c, x.dtype) if bias is None else \
        np.ascontiguousarray(np.asarray(bias, x.dtype).reshape(c))
    y = out if out is not None and out.flags.c_contiguous else \
        np.empty(x.shape[:2] + tuple(out_sp), x.dtype)
    kernel = w.shape[2:]
    shifts = np.ascontiguousarray(np.asarray(shift, x.dtype).reshape(c)) \
        if rectify and shift is not None else np.zeros(0, x.dtype)
    if kernel == (3, 3) and list(strides) == [1, 1] and list(pads_begin) == [1, 1] \
            and tuple(out_sp) == x.shape[2:] and x.shape[3] >= 2:
        kernels.same_3x3(x, w, b, y, rectify, zero, shifts)
    elif kernel == (3, 3) and list(strides) == [2, 2]:
        kernels.strided_3x3(x, w, b, y, pads_begin[0], pads_begin[1], rectify, zero,
                            shifts)
    else:
        if rectify:
            x = _rectified_input(x, shift)
        if kernel == (3, 3) and strides[1] in (1, 2):
            kernels.depthwise_3x3(x, w, b, y, strides[0], strides[1], pads_begin[0],
                                  pads_begin[1])
        else:
            kernels.padded(x, w, b, y, strides[0], strides[1], pads_begin[0],
                           pads_begin[1])
    if out is None:
        return y
    if y is not out:
        np.copyto(out, y)
    return out


def _phase_grid(w, strides, out_sp):
    """(qh, qw, wq, span): taps per phase vertically and horizontally, the phase width
    (output columns plus the horizontal taps' overrun), and the flat output positions
    per channel (ho * wq)."""
    kh, kw = w.shape[2:]
    qh, qw = -(-kh // strides[0]), -(-kw // strides[1])
    wq = out_sp[1] + qw - 1
    return qh, qw, wq, out_sp[0] * wq


def _phase_extent(a, s, pad, size, length):
    """Phase positions [lo, hi) of phase `a` (stride s, `length` positions) that hold
    input elements, and the input coordinate of position lo."""
    lo = max(0, -(-(pad - a) // s))
    hi = min(length, (size - 1 + pad - a) // s + 1)
    return lo, hi, a + s * lo - pad


def _split_phases(x, strides, pads_begin, hq, wq, buf_of):
    """Write the stride phases of zero-padded x (N, C, H, W) into `buf_of(a, b)`
    views of shape (N, C, hq, wq): phase (a, b) position (r, q) holds padded element
    (a + sh*r, b + sw*q). Only the positions outside the input are zeroed."""
    h, wd = x.shape[2:]
    sh, sw = strides
    for a in range(sh):
        r0, r1, xr = _phase_extent(a, sh, pads_begin[0], h, hq)
        for b in range(sw):
            dst = buf_of(a, b)
            c0, c1, xc = _phase_extent(b, sw, pads_begin[1], wd, wq)
            if r1 <= r0 or c1 <= c0:
                dst[...] = 0
                continue
            dst[:, :, :r0] = 0
            dst[:, :, r1:] = 0
            dst[:, :, r0:r1, :c0] = 0
            dst[:, :, r0:r1, c1:] = 0
            dst[:, :, r0:r1, c0:c1] = x[:, :, xr:xr + (r1 - r0 - 1) * sh + 1:sh,
                                        xc:xc + (c1 - c0 - 1) * sw + 1:sw]


def _depthwise_same_width(x, w, top, left, ho, out):
    """Stride-1 form for an output as wide as the input (left pad < kw): flat rows
    without pad columns, the wrapped border columns of each horizontal tap zeroed.
    Writes the (N, C, ho, W) result into `out`."""
    n, c, h, wd = x.shape
    kh, kw = w.shape[2:]
    span = ho * wd
    rows = ho + kh - 1                    # padded rows the taps reach
    kept = max(0, min(h, rows - top))     # image rows inside them
    start = left + top * wd
    buf = _scratch("conv.dw_same", (n, c, rows * wd + kw - 1), x.dtype)
    buf[:, :, :start] = 0
    buf[:, :, start + kept * wd:] = 0
    buf[:, :, start:start + kept * wd] = x[:, :, :kept].reshape(n, c, kept * wd)
    taps = w.reshape(c, kh, kw)
    sn, sc, item = buf.strides
    # the sums go straight into `out` when its rows merge (one buffer less in cache)
    direct = out.strides[3] == item and out.strides[2] == wd * item
    if direct:
        acc = np.lib.stride_tricks.as_strided(out, (n, c, span), out.strides[:2] + (item,))
    else:
        acc = _scratch("conv.dw_acc", (n, c, span), x.dtype)
    part = _scratch("conv.dw_part", (n, c, span), x.dtype) if kw > 1 else None
    # the tap at the left pad is the image's own column: it never wraps, so it starts
    order = [left] + [b for b in range(kw) if b != left]
    for k, b in enumerate(order):
        win = np.lib.stride_tricks.as_strided(buf[:, :, b:], (n, c, kh, span),
                                              (sn, sc, wd * item, item), writeable=False)
        np.einsum("ncip,ci->ncp", win, taps[:, :, b], out=acc if k == 0 else part)
        if k == 0:
            continue
        cols = part.reshape(n, c, ho, wd)
        if b < left:
            cols[:, :, :, :left - b] = 0
        else:
            cols[:, :, :, max(0, wd - (b - left)):] = 0
        acc += part
    if not direct:
        np.copyto(out, acc.reshape(n, c, ho, wd))


def _depthwise_rows(x, w, strides, pads_begin, out_sp):
    """NCHW form: per (phase, horizontal tap) one einsum over the vertical taps.
    Returns an (N, C, *out_sp) view of scratch memory."""
    n, c = x.shape[:2]
    kh, kw = w.shape[2:]
    sh, sw = strides
    ho, wo = out_sp
    qh, qw, wq, span = _phase_grid(w, strides, out_sp)
    hq = ho + qh  # one spare row: the last tap's flat slice overruns by qw - 1 < wq
    buf = _scratch("conv.dw_phases", (sh, sw, n, c, hq, wq), x.dtype)
    _split_phases(x, strides, pads_begin, hq, wq, lambda a, b: buf[a, b])
    taps = w.reshape(c, kh, kw)
    acc = _scratch("conv.dw_acc", (n, c, span), x.dtype)
    part = _scratch("conv.dw_part", (n, c, span), x.dtype) if sh * kw > 1 else None
    item = x.itemsize
    first = True
    for a in range(min(sh, kh)):
        rows = -(-(kh - a) // sh)  # vertical taps a, a + sh, ... < kh
        for b in range(min(sw, kw)):
            flat = buf[a, b].reshape(n, c, hq * wq)
            sn, sc = flat.strides[:2]
            for j in range(b, kw, sw):
                win = np.lib.stride_tricks.as_strided(
                    flat[:, :, (j - b) // sw:], (n, c, rows, span),
                    (sn, sc, wq * item, item), writeable=False)
                np.einsum("ncip,ci->ncp", win, taps[:, a::sh, j],
                          out=acc if first else part)
                if not first:
                    acc += part
                first = False
    return acc.reshape(n, c, ho, wq)[:, :, :, :wo]


def _depthwise_channels_last(x, w, strides, pads_begin, out_sp, cache, bias):
    """Channels-last form: one einsum over all taps of all phases, rows of several
    pixels' channels (weights tiled to match); the bias is added channels-last, where
    it is a contiguous pass. Returns an (N, C, *out_sp) view of scratch memory, or
    None when a non-finite input meets zero phase taps (see the end)."""
    n, c = x.shape[:2]
    kh, kw = w.shape[2:]
    sh, sw = strides
    ho, wo = out_sp
    qh, qw, wq, span = _phase_grid(w, strides, out_sp)
    k = max(1, _CHANNELS_LAST_ROW // c)  # pixels per einsum row
    rows = -(-span // k)
    hq = -(-(rows * k + (qh - 1) * wq + qw - 1) // wq)
    buf = _scratch("conv.dw_phases", (n, sh, sw, hq, wq, c), x.dtype)
    _split_phases(x, strides, pads_begin, hq, wq,
                  lambda a, b: buf[:, a, b].transpose(0, 3, 1, 2))
    key = ("depthwise_taps", x.dtype, tuple(strides), k)
    tiled = cache.get(key) if cache is not None else None
    if tiled is None:
        tiled = _tiled_taps(w, strides, k)
        if cache is not None:
            cache[key] = tiled
    acc = _scratch("conv.dw_acc", (n, rows * k, c), x.dtype)
    item = x.itemsize
    for i in range(n):
        img = buf[i]
        sa, sb = img.strides[:2]
        win = np.lib.stride_tricks.as_strided(
            img, (rows, sh, sw, qh, qw, k * c),
            (k * c * item, sa, sb, wq * c * item, c * item, item), writeable=False)
        np.einsum("pabijl,abijl->pl", win, tiled, out=acc[i].reshape(rows, k * c))
    # the phase taps past the kernel (a kernel size that is no multiple of its
    # stride) are zero weights contracted with real inputs: 0 * inf would spread NaN
    # to outputs that never read the inf. A non-finite result (so a non-finite input)
    # is left to the row form, which has no such taps (None); the result is smaller
    # than the input, so it is the cheaper one to check
    if any(t % s for t, s in zip(w.shape[2:], strides)):
        flat = acc.reshape(-1)
        with np.errstate(over="ignore", invalid="ignore"):
            if not np.isfinite(np.dot(flat, flat)):   # one BLAS pass, no temporaries
                return None
    if bias is not None:
        acc += bias
    return acc[:, :span].reshape(n, ho, wq, c)[:, :, :wo].transpose(0, 3, 1, 2)


def _tiled_taps(w, strides, k):
    """Channels-last weights (sh, sw, qh, qw, k*C): tap (a + sh*i2, b + sw*j2) of every
    channel, repeated for k pixels; zero where the phase tap lies past the kernel."""
    c, _, kh, kw = w.shape
    sh, sw = strides
    taps = np.zeros((sh, sw, -(-kh // sh), -(-kw // sw), c), w.dtype)
    wt = w.reshape(c, kh, kw)
    for a in range(min(sh, kh)):
        for b in range(min(sw, kw)):
            sub = wt[:, a::sh, b::sw]
            taps[a, b, :sub.shape[1], :sub.shape[2]] = sub.transpose(1, 2, 0)
    return np.ascontiguousarray(np.broadcast_to(
        taps[..., None, :], taps.shape[:4] + (k, c))).reshape(taps.shape[:4] + (k * c,))

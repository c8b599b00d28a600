"""Conv kernels compiled by numba (ops/jit.py): the depthwise conv (behind
conv_depthwise.depthwise_2d: kh*kw multiply-adds per output and no reduction over
channels, so numpy's whole-array passes, one per tap, run at memory speed) and the
input and output transforms of the Winograd 3x3 conv (behind conv._conv_winograd_3x3:
two dozen numpy passes each, one compiled pass here; F(2x2, 3x3) in `winograd_input`,
`winograd_output` and F(4x4, 3x3), which numpy's passes could not afford, in
`winograd4_input`, `winograd4_output`). Importing this module imports numba.

The depthwise conv in four forms, each one compiled loop per output plane that LLVM
vectorises:
- `same_3x3` (stride 1, pad 1, the output as large as the input): the
  channel's image copied between two zero rows into a flat buffer; every output is then
  one long flat loop with the taps at fixed offsets, the side columns redone.
- `strided_3x3` (stride 2, any pads): the padded image split into its four 2x2 stride
  phases, every tap then a fixed offset into one of them: one flat loop per plane.
- `depthwise_3x3` (other pads and strides, 1 or 2 across): the input read where it
  lies, no padded copy; the windows inside the image row by row, the border ones one
  by one.
- `padded` (any kernel size and strides): the image copied into the row
  stride phases of its padded form, one loop per tap over all rows at once, the
  strided columns kept at the end.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

# cache: the machine code is kept on disk for the next process (see ops/jit.py);
# error_model="numpy": division and overflow follow IEEE rules, no Python exceptions
COMPILE = dict(cache=True, nogil=True, error_model="numpy")


@njit(inline="always", **COMPILE)
def max_nan(a, b):
    """max(a, b), NaN when either is NaN (as np.maximum); shared by the *_jit modules."""
    return a if (a >= b) | (a != a) else b


@njit(inline="always", **COMPILE)
def _copy(src, at, dst, to, count, zero, shift, transform):
    """dst[to + i] = transform(src[at + i], zero, shift) for i < count (unsigned
    offsets)."""
    for i in range(count):
        u = uint64(i)
        dst[to + u] = transform(src[at + u], zero, shift)


@njit(**COMPILE)
def same_3x3(x, w, b, out, rectify, zero, shift):
    """3x3 stride-1 depthwise conv with one pixel of zero padding on every side (the
    output as large as the input) of C-contiguous x (N, C, H, W), W >= 2, weights w
    (C, 1, 3, 3) and bias b (C,), written into the C-contiguous out (N, C, H, W);
    with `rectify`, of max(x, zero) (the Relu before it, applied as each plane is
    copied; zero: a 0 of x's dtype), or of max(x + shift[c], zero) on channel c when
    `shift` is not empty (the producer's bias moved here too).

    Each plane is copied between a zero row above and one below, so output position p
    (flat over the plane) reads p + a*W + t for tap (a, t): one loop over all H*W
    outputs. Where a horizontal tap crosses the image's side it reads the neighbouring
    row's end instead of the zero pad, so the first and last column are then
    recomputed without those taps. Flat arrays with unsigned indices and no view per
    plane (numba reference-counts views): a 14x14 plane costs 140 ns, not 250."""
    n_, c_, h, wd = x.shape
    hw = h * wd
    xf, of, wf = x.reshape(x.size), out.reshape(out.size), w.reshape(w.size)
    buf = np.zeros(hw + 2 * wd + 2, x.dtype)
    one, two, row, rows2 = uint64(1), uint64(2), uint64(wd), uint64(2 * wd)
    for plane in range(n_ * c_):
        c = plane % c_
        src = uint64(plane * hw)
        if shift.size:
            _copy(xf, src, buf, uint64(wd + 1), hw, zero, shift[c], shifted_rectified)
        elif rectify:
            _copy(xf, src, buf, uint64(wd + 1), hw, zero, zero, rectified)
        else:
            _copy(xf, src, buf, uint64(wd + 1), hw, zero, zero, as_is)
        k = uint64(9 * c)
        w00, w01, w02 = wf[k], wf[k + one], wf[k + two]
        w10, w11, w12 = wf[k + uint64(3)], wf[k + uint64(4)], wf[k + uint64(5)]
        w20, w21, w22 = wf[k + uint64(6)], wf[k + uint64(7)], wf[k + uint64(8)]
        bias = b[c]
        for i in range(hw):
            p = uint64(i)
            q, r = row + p, rows2 + p
            of[src + p] = (bias + w00 * buf[p] + w01 * buf[p + one] + w02 * buf[p + two]
                           + w10 * buf[q] + w11 * buf[q + one] + w12 * buf[q + two]
                           + w20 * buf[r] + w21 * buf[r + one] + w22 * buf[r + two])
        for i in range(h):
            p = uint64(i * wd)
            q, r = row + p, rows2 + p
            of[src + p] = (bias + w01 * buf[p + one] + w02 * buf[p + two]
                           + w11 * buf[q + one] + w12 * buf[q + two]
                           + w21 * buf[r + one] + w22 * buf[r + two])
            p += uint64(wd - 1)
            q, r = row + p, rows2 + p
            of[src + p] = (bias + w00 * buf[p] + w01 * buf[p + one] + w10 * buf[q]
                           + w11 * buf[q + one] + w20 * buf[r] + w21 * buf[r + one])
    return out


@njit(**COMPILE)
def _into_phases(img, planes, sh, wp, pt, pl, hq):
    """Copy the image rows (H, W) into the row phases of its zero-padded form (the
    padding itself is never written: it stays zero for every channel). Flat indices
    and the phase stepped along (no division per row): a short row's copy costs
    little more than numba's slicing or an integer division would."""
    h, wd = img.shape
    flat_in, flat_out = img.reshape(h * wd), planes.reshape(planes.size)
    plane = planes.shape[1]
    phase, q = pt % sh, pt // sh
    for r in range(h):
        if q >= hq:
            break
        dst, src = phase * plane + q * wp + pl, r * wd
        for j in range(wd):
            flat_out[dst + j] = flat_in[src + j]
        phase += 1
        if phase == sh:
            phase, q = 0, q + 1


@njit(**COMPILE)
def _crop(acc, out, wp, sw):
    """out (ho, wo) = the outputs at every sw-th column of the flat rows of width wp."""
    ho, wo = out.shape
    for r in range(ho):
        src, dst = acc[r * wp:(r + 1) * wp], out[r]
        if sw == 1:
            for j in range(wo):
                dst[j] = src[j]
        else:
            for j in range(wo):
                dst[j] = src[j * sw]


@njit(**COMPILE)
def padded(x, w, b, out, sh, sw, pt, pl):
    """Depthwise conv of any kernel size, strides (sh, sw) and non-negative leading pads
    (pt, pl), no dilation, of C-contiguous x (N, C, H, W) with w (C, 1, kh, kw) and
    bias b (C,), written into out (N, C, ho, wo) (any strides); the trailing pads follow
    from out's size, taps past the image reading zeros.

    The zero-padded image is split by rows into its sh vertical stride phases (padded
    row R is row R // sh of phase R % sh), each flat with the padded width wp: tap
    (a, t) of output row r, column j then reads phase a % sh at flat position
    (r + a // sh) * wp + j * sw + t, so each tap is one loop over all rows' outputs at
    once. Outputs are computed at every column and the strided ones kept."""
    n_, c_, h, wd = x.shape
    kh, kw = w.shape[2], w.shape[3]
    ho, wo = out.shape[2], out.shape[3]
    wp = max((wo - 1) * sw + kw, pl + wd)
    hq = ho + (kh - 1) // sh     # rows of each phase the taps read
    span = ho * wp
    planes = np.zeros((sh, hq * wp + kw), x.dtype)
    acc = np.empty(span, x.dtype)
    for i in range(n_):
        for c in range(c_):
            _into_phases(x[i, c], planes, sh, wp, pt, pl, hq)
            for a in range(kh):
                plane = planes[a % sh]
                for t in range(kw):
                    off = (a // sh) * wp + t
                    src = plane[off:off + span]
                    wv = w[c, 0, a, t]
                    if a == 0 and t == 0:
                        bias = b[c]
                        for p in range(span):
                            acc[p] = bias + wv * src[p]
                    else:
                        for p in range(span):
                            acc[p] += wv * src[p]
            _crop(acc, out[i, c], wp, sw)
    return out



@njit(inline="always", **COMPILE)
def zero_2x2_phases(h, wd, ho, wo, pt, pl, dtype):
    """(phases, hq, wq): a zeroed flat buffer for the four 2x2 stride phases
    (`into_2x2_phases`) of an H x W plane padded by (pt, pl) in front, each hq x wq,
    large enough for the whole image and for windows reaching one phase row and column
    past the ho x wo outputs, and two spare values."""
    hq = max(ho + 1, (h + pt + 2) // 2)
    wq = max(wo + 1, (wd + pl + 2) // 2)
    return np.zeros(4 * hq * wq + 2, dtype), hq, wq


@njit(inline="always", **COMPILE)
def as_is(value, zero, shift):
    """`value`: the copy that `rectified` is with the Relu (a kernel argument)."""
    return value


@njit(inline="always", **COMPILE)
def rectified(value, zero, shift):
    """max(value, zero), NaN kept: a Relu moved into the copy (Session rewrite 12)."""
    return max_nan(value, zero)


@njit(inline="always", **COMPILE)
def shifted_rectified(value, zero, shift):
    """max(value + shift, zero), NaN kept: the producer's bias and Relu moved into the
    copy (Session rewrite 12)."""
    return max_nan(value + shift, zero)


@njit(inline="always", **COMPILE)
def split_pairs(xf, start, pairs, even, e0, odd, o0, zero, shift, transform):
    """even[e0 + j] = transform(xf[start + 2j]), odd[o0 + j] = transform(xf[start +
    2j + 1]) for j < pairs (`as_is`, `rectified` or `shifted_rectified`, given zero and
    shift), with unsigned offsets. Both columns
    of a pair are read in one loop, which LLVM deinterleaves with vector permutes (a
    stride-2 read alone becomes a gather); `even` and `odd` may be one array."""
    one = uint64(1)
    for j in range(pairs):
        u = uint64(j)
        e = xf[start + u + u]
        o = xf[start + u + u + one]
        even[e0 + u] = transform(e, zero, shift)
        odd[o0 + u] = transform(o, zero, shift)


@njit(inline="always", **COMPILE)
def into_2x2_phases(xf, start, h, wd, pt, pl, phases, hq, wq, zero, shift, transform):
    """Copy the plane at flat offset `start` of xf (H x W), each value through
    `transform` (`as_is`, `rectified` or `shifted_rectified`, with zero a 0 of its
    dtype and the shift), into the four
    2x2 stride phases of its zero-padded form, flat in `phases`, each hq x wq: padded
    element (R, Q) at row R // 2, column Q // 2 of phase 2 * (R % 2) + Q % 2; pads
    (pt, pl) in front, everything of the image inside the phases (`split_pairs` a row).
    Padding positions are never written: they keep their value from plane to plane."""
    pq = hq * wq
    # input column 2j lands in column phase pl % 2 at (2j + pl) // 2, 2j + 1 in the other
    even_col = uint64((pl % 2) * pq + pl // 2)
    odd_col = uint64(((pl + 1) % 2) * pq + (pl + 1) // 2)
    for i in range(h):
        r = i + pt
        base = uint64((r % 2) * 2 * pq + (r // 2) * wq)
        s = uint64(start + i * wd)
        de, do = base + even_col, base + odd_col
        split_pairs(xf, s, wd // 2, phases, de, phases, do, zero, shift, transform)
        if wd % 2:
            phases[de + uint64(wd // 2)] = transform(xf[s + uint64(wd - 1)], zero, shift)


@njit(**COMPILE)
def strided_3x3(x, w, b, out, pt, pl, rectify, zero, shift):
    """3x3 stride-2 depthwise conv of C-contiguous x (N, C, H, W) (of max(x, zero) with
    `rectify`, of max(x + shift[c], zero) with a `shift`, as `same_3x3`) with weights
    w (C, 1, 3, 3) and bias b (C,), leading pads
    (pt, pl) >= 0, into the C-contiguous out (N, C, ho, wo) (the trailing pads follow
    from its size).

    Each plane is copied into the four stride phases of its zero-padded form (padded
    element (R, C) at row R // 2, column C // 2 of phase (R % 2, C % 2), rows wq long):
    tap (a, t) of output (r, j) is then phase (a % 2, t % 2) at flat position
    r*wq + j + (a // 2)*wq + t // 2, so all outputs of a plane are one loop with nine
    fixed offsets, computed at wq columns a row and cropped to wo (`into_2x2_phases`;
    the padding stays zero from plane to plane). Against reading the windows
    in place (`depthwise_3x3`), 112x56x56 320 -> 150 us, 64x112x112 720 -> 330."""
    n_, c_, h, wd = x.shape
    ho, wo = out.shape[2], out.shape[3]
    phases, hq, wq = zero_2x2_phases(h, wd, ho, wo, pt, pl, x.dtype)
    pq = hq * wq
    xf, of, wf = x.reshape(x.size), out.reshape(out.size), w.reshape(w.size)
    span = ho * wq
    acc = np.empty(span, x.dtype)
    one, row, row1 = uint64(1), uint64(wq), uint64(wq + 1)
    ee, eo, oe, oo = uint64(0), uint64(pq), uint64(2 * pq), uint64(3 * pq)
    for plane in range(n_ * c_):
        c = plane % c_
        start = plane * h * wd
        if shift.size:
            into_2x2_phases(xf, start, h, wd, pt, pl, phases, hq, wq, zero, shift[c],
                            shifted_rectified)
        elif rectify:
            into_2x2_phases(xf, start, h, wd, pt, pl, phases, hq, wq, zero, zero, rectified)
        else:
            into_2x2_phases(xf, start, h, wd, pt, pl, phases, hq, wq, zero, zero, as_is)
        k = uint64(9 * c)
        w00, w01, w02 = wf[k], wf[k + one], wf[k + uint64(2)]
        w10, w11, w12 = wf[k + uint64(3)], wf[k + uint64(4)], wf[k + uint64(5)]
        w20, w21, w22 = wf[k + uint64(6)], wf[k + uint64(7)], wf[k + uint64(8)]
        bias = b[c]
        for i in range(span):
            p = uint64(i)
            acc[p] = (bias + w00 * phases[ee + p] + w01 * phases[eo + p]
                      + w02 * phases[ee + p + one] + w10 * phases[oe + p]
                      + w11 * phases[oo + p] + w12 * phases[oe + p + one]
                      + w20 * phases[ee + p + row] + w21 * phases[eo + p + row]
                      + w22 * phases[ee + p + row1])
        dst = uint64(plane * ho * wo)
        for r in range(ho):
            d, s = dst + uint64(r * wo), uint64(r * wq)
            for j in range(wo):
                of[d + uint64(j)] = acc[s + uint64(j)]
    return out


@njit(inline="always", **COMPILE)
def _window(xf, src, h, wd, top, left, w, c, acc):
    """`acc` plus the in-image taps of the 3x3 window at (top, left) of the plane at
    flat offset `src` of xf (H x W) times the weights w[c, 0]: a window that reaches
    past the image's side, top or bottom."""
    for a in range(3):
        r = top + a
        if 0 <= r < h:
            for t in range(3):
                col = left + t
                if 0 <= col < wd:
                    acc += w[c, 0, a, t] * xf[src + uint64(r * wd + col)]
    return acc


@njit(**COMPILE)
def depthwise_3x3(x, w, b, out, sh, sw, pt, pl):
    """3x3 depthwise conv of C-contiguous x (N, C, H, W) with weights w (C, 1, 3, 3) and
    bias b (C,), strides (sh, sw) with sw 1 or 2, leading pads (pt, pl) >= 0, into the
    C-contiguous out (N, C, ho, wo) (the trailing pads follow from its size), reading
    the input where it lies. The windows inside the image go a row at a time, one loop
    over the row's columns (the stride a constant in each of the two loops); the border
    windows one by one, their taps past the image skipped. Flat arrays with unsigned
    indices: no view per row and no wrap-around test per element (see pool_jit.py)."""
    n_, c_, h, wd = x.shape
    ho, wo = out.shape[2], out.shape[3]
    xf, of = x.reshape(x.size), out.reshape(out.size)
    # windows inside the image: rows [i0, i1) (i*sh - pt >= 0, i*sh - pt + 2 < h) and
    # columns [j0, j1) likewise
    i0 = min(ho, (pt + sh - 1) // sh)
    i1 = max(i0, min(ho, (h - 3 + pt) // sh + 1))
    j0 = min(wo, (pl + sw - 1) // sw)
    j1 = max(j0, min(wo, (wd - 3 + pl) // sw + 1))
    n = j1 - j0
    for plane in range(n_ * c_):
        c = plane % c_
        src, dst = uint64(plane * h * wd), uint64(plane * ho * wo)
        bias = b[c]
        for r in range(ho):
            top = r * sh - pt
            row = dst + uint64(r * wo)
            skip_to = j1 if i0 <= r < i1 else j0   # inner rows skip [j0, j1)
            for j in range(j0):
                of[row + uint64(j)] = _window(xf, src, h, wd, top, j * sw - pl, w, c, bias)
            for j in range(skip_to, wo):
                of[row + uint64(j)] = _window(xf, src, h, wd, top, j * sw - pl, w, c, bias)
        if n <= 0:
            continue
        w00, w01, w02 = w[c, 0, 0, 0], w[c, 0, 0, 1], w[c, 0, 0, 2]
        w10, w11, w12 = w[c, 0, 1, 0], w[c, 0, 1, 1], w[c, 0, 1, 2]
        w20, w21, w22 = w[c, 0, 2, 0], w[c, 0, 2, 1], w[c, 0, 2, 2]
        for r in range(i0, i1):
            a = src + uint64((r * sh - pt) * wd + j0 * sw - pl)   # first inner window
            bb, d = a + uint64(wd), a + uint64(2 * wd)
            q = dst + uint64(r * wo + j0)
            if sw == 1:
                for j in range(n):
                    u = uint64(j)
                    of[q + u] = (bias + w00 * xf[a + u] + w01 * xf[a + u + 1]
                                 + w02 * xf[a + u + 2] + w10 * xf[bb + u]
                                 + w11 * xf[bb + u + 1] + w12 * xf[bb + u + 2]
                                 + w20 * xf[d + u] + w21 * xf[d + u + 1]
                                 + w22 * xf[d + u + 2])
            else:
                for j in range(n):
                    u, m = uint64(j), uint64(2 * j)
                    of[q + u] = (bias + w00 * xf[a + m] + w01 * xf[a + m + 1]
                                 + w02 * xf[a + m + 2] + w10 * xf[bb + m]
                                 + w11 * xf[bb + m + 1] + w12 * xf[bb + m + 2]
                                 + w20 * xf[d + m] + w21 * xf[d + m + 1]
                                 + w22 * xf[d + m + 2])
    return out


@njit(inline="always", **COMPILE)
def _into_border(img, buf, top, left):
    """Copy the plane img (H, W) into buf at (top, left), as much of it as fits: buf's
    other cells are zero padding that no plane ever writes."""
    h, wd = img.shape
    cols = min(wd, buf.shape[1] - left)
    for r in range(min(h, buf.shape[0] - top)):
        src, dst = img[r], buf[r + top, left:]
        for j in range(cols):
            dst[j] = src[j]


@njit(**COMPILE)
def winograd_input(x, top, left, th, tw, v):
    """Winograd F(2x2, 3x3) input transform of one image x (C, H, W) zero-padded by
    (top, left) in front (and as needed behind): v[4k + l, c, i*tw + j] = (B^T d B)[k, l]
    for the 4x4 tile d at rows 2i - top.., columns 2j - left.. of channel c, with
    B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]. Each channel is
    copied into a zero-bordered buffer first; every tile row is then one loop over its
    tiles (stride-2 reads, sixteen contiguous writes) that LLVM vectorises."""
    buf = np.zeros((2 * th + 2, 2 * tw + 2), x.dtype)
    for c in range(x.shape[0]):
        _into_border(x[c], buf, top, left)
        for i in range(th):
            r0, r1, r2, r3 = buf[2 * i], buf[2 * i + 1], buf[2 * i + 2], buf[2 * i + 3]
            o = v[:, c, i * tw:(i + 1) * tw]
            for j in range(tw):
                k = 2 * j
                a0, a1, a2, a3 = r0[k] - r2[k], r0[k + 1] - r2[k + 1], \
                    r0[k + 2] - r2[k + 2], r0[k + 3] - r2[k + 3]
                b0, b1, b2, b3 = r1[k] + r2[k], r1[k + 1] + r2[k + 1], \
                    r1[k + 2] + r2[k + 2], r1[k + 3] + r2[k + 3]
                c0, c1, c2, c3 = r2[k] - r1[k], r2[k + 1] - r1[k + 1], \
                    r2[k + 2] - r1[k + 2], r2[k + 3] - r1[k + 3]
                d0, d1, d2, d3 = r1[k] - r3[k], r1[k + 1] - r3[k + 1], \
                    r1[k + 2] - r3[k + 2], r1[k + 3] - r3[k + 3]
                o[0, j], o[1, j], o[2, j], o[3, j] = a0 - a2, a1 + a2, a2 - a1, a1 - a3
                o[4, j], o[5, j], o[6, j], o[7, j] = b0 - b2, b1 + b2, b2 - b1, b1 - b3
                o[8, j], o[9, j], o[10, j], o[11, j] = c0 - c2, c1 + c2, c2 - c1, c1 - c3
                o[12, j], o[13, j], o[14, j], o[15, j] = d0 - d2, d1 + d2, d2 - d1, d1 - d3
    return v


@njit(**COMPILE)
def winograd_output(p, b, relu, zero, y):
    """Winograd F(2x2, 3x3) output transform: y (M, ho, wo) (rows contiguous, any
    strides) = A^T m A + b per tile, m[k, l] = p[4k + l, channel, tile] (tiles row-major,
    (wo + 1) // 2 per row), A^T = [[1, 1, 1, 0], [0, 1, -1, -1]], then max(., zero) when
    `relu`; the outputs of the last tile row or column past the image are dropped."""
    m_, ho, wo = y.shape
    tw = (wo + 1) // 2
    th = (ho + 1) // 2
    full = wo // 2
    for m in range(m_):
        bias = b[m]
        for i in range(th):
            q = p[:, m, i * tw:(i + 1) * tw]
            top = y[m, 2 * i]
            below = 2 * i + 1 < ho
            bottom = y[m, 2 * i + 1] if below else top
            for j in range(tw):
                s0 = q[0, j] + q[4, j] + q[8, j]
                s1 = q[1, j] + q[5, j] + q[9, j]
                s2 = q[2, j] + q[6, j] + q[10, j]
                s3 = q[3, j] + q[7, j] + q[11, j]
                t0 = q[4, j] - q[8, j] - q[12, j]
                t1 = q[5, j] - q[9, j] - q[13, j]
                t2 = q[6, j] - q[10, j] - q[14, j]
                t3 = q[7, j] - q[11, j] - q[15, j]
                y00, y01 = s0 + s1 + s2 + bias, s1 - s2 - s3 + bias
                y10, y11 = t0 + t1 + t2 + bias, t1 - t2 - t3 + bias
                if relu:
                    y00, y01 = max_nan(y00, zero), max_nan(y01, zero)
                    y10, y11 = max_nan(y10, zero), max_nan(y11, zero)
                if below:
                    bottom[2 * j] = y10
                top[2 * j] = y00
                if j < full:
                    top[2 * j + 1] = y01
                    if below:
                        bottom[2 * j + 1] = y11
    return y


# Winograd F(4x4, 3x3): 6x6 input tiles, 4x4 output tiles, 36 products per tile where
# F(2x2, 3x3) needs 16 per 2x2 (2.25 multiplies per output instead of 4; the transforms
# cost more and lose about a digit of float32 accuracy, so conv.py takes it where the
# products dominate). B^T and A^T's multiples are spelled as additions: numba would
# widen float32 * int to float64.


@njit(inline="always", **COMPILE)
def _bt6(d0, d1, d2, d3, d4, d5):
    """B^T d for one column of a 6x6 tile, B^T = [[4, 0, -5, 0, 1, 0],
    [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
    [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]."""
    e1, e2, e3 = d1 + d1, d2 + d2, d3 + d3
    f0, f1, f2, f3 = (d0 + d0) + (d0 + d0), e1 + e1, e2 + e2, e3 + e3
    return (f0 - (f2 + d2) + d4, d3 + d4 - f1 - f2, f1 - f2 - d3 + d4,
            e3 - e1 - d2 + d4, e1 - d2 - e3 + d4, f1 - (f3 + d3) + d5)


@njit(inline="always", **COMPILE)
def _at6(m0, m1, m2, m3, m4, m5):
    """A^T m for one column of a 6x6 product tile, A^T = [[1, 1, 1, 1, 1, 0],
    [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]."""
    a, b, c, d = m1 + m2, m1 - m2, m3 + m4, m3 - m4
    c2, d2 = c + c, d + d
    c4, d4 = c2 + c2, d2 + d2
    return (m0 + a + c, b + d2, a + c4, b + (d4 + d4) + m5)


@njit(**COMPILE)
def winograd4_input(x, top, left, th, tw, v):
    """F(4x4, 3x3) input transform of one image x (C, H, W) zero-padded by (top, left)
    in front: v[6k + l, c, i*tw + j] = (B^T d B)[k, l] for the 6x6 tile d at rows
    4i - top.., columns 4j - left.. of channel c (as `winograd_input`)."""
    buf = np.zeros((4 * th + 2, 4 * tw + 2), x.dtype)
    for c in range(x.shape[0]):
        _into_border(x[c], buf, top, left)
        for i in range(th):
            r0, r1, r2 = buf[4 * i], buf[4 * i + 1], buf[4 * i + 2]
            r3, r4, r5 = buf[4 * i + 3], buf[4 * i + 4], buf[4 * i + 5]
            o = v[:, c, i * tw:(i + 1) * tw]
            for j in range(tw):
                k = 4 * j
                c0 = _bt6(r0[k], r1[k], r2[k], r3[k], r4[k], r5[k])
                c1 = _bt6(r0[k + 1], r1[k + 1], r2[k + 1], r3[k + 1], r4[k + 1], r5[k + 1])
                c2 = _bt6(r0[k + 2], r1[k + 2], r2[k + 2], r3[k + 2], r4[k + 2], r5[k + 2])
                c3 = _bt6(r0[k + 3], r1[k + 3], r2[k + 3], r3[k + 3], r4[k + 3], r5[k + 3])
                c4 = _bt6(r0[k + 4], r1[k + 4], r2[k + 4], r3[k + 4], r4[k + 4], r5[k + 4])
                c5 = _bt6(r0[k + 5], r1[k + 5], r2[k + 5], r3[k + 5], r4[k + 5], r5[k + 5])
                for a in range(6):
                    q = _bt6(c0[a], c1[a], c2[a], c3[a], c4[a], c5[a])
                    o[6 * a, j], o[6 * a + 1, j], o[6 * a + 2, j] = q[0], q[1], q[2]
                    o[6 * a + 3, j], o[6 * a + 4, j], o[6 * a + 5, j] = q[3], q[4], q[5]
    return v


@njit(inline="always", **COMPILE)
def _tile16(q, j):
    """A^T m A (4x4) of tile j, m[k, l] = q[6k + l, j]."""
    s0 = _at6(q[0, j], q[6, j], q[12, j], q[18, j], q[24, j], q[30, j])
    s1 = _at6(q[1, j], q[7, j], q[13, j], q[19, j], q[25, j], q[31, j])
    s2 = _at6(q[2, j], q[8, j], q[14, j], q[20, j], q[26, j], q[32, j])
    s3 = _at6(q[3, j], q[9, j], q[15, j], q[21, j], q[27, j], q[33, j])
    s4 = _at6(q[4, j], q[10, j], q[16, j], q[22, j], q[28, j], q[34, j])
    s5 = _at6(q[5, j], q[11, j], q[17, j], q[23, j], q[29, j], q[35, j])
    return (_at6(s0[0], s1[0], s2[0], s3[0], s4[0], s5[0]),
            _at6(s0[1], s1[1], s2[1], s3[1], s4[1], s5[1]),
            _at6(s0[2], s1[2], s2[2], s3[2], s4[2], s5[2]),
            _at6(s0[3], s1[3], s2[3], s3[3], s4[3], s5[3]))


@njit(inline="always", **COMPILE)
def _finish(v, bias, relu, zero):
    v = v + bias
    return max_nan(v, zero) if relu else v


@njit(**COMPILE)
def winograd4_output(p, b, relu, zero, y):
    """F(4x4, 3x3) output transform: y (M, ho, wo) (rows contiguous, any strides) =
    A^T m A + b per tile, m[k, l] = p[6k + l, channel, tile] (tiles row-major,
    (wo + 3) // 4 per row), then max(., zero) when `relu`; outputs past the image
    dropped. Whole tiles store without tests (one loop LLVM can unroll), the last
    partial tile row and column one value at a time."""
    m_, ho, wo = y.shape
    tw, th = (wo + 3) // 4, (ho + 3) // 4
    whole = wo // 4
    for m in range(m_):
        bias = b[m]
        for i in range(th):
            q = p[:, m, i * tw:(i + 1) * tw]
            start = 0
            if 4 * i + 3 < ho:
                y0, y1, y2, y3 = y[m, 4 * i], y[m, 4 * i + 1], y[m, 4 * i + 2], y[m, 4 * i + 3]
                for j in range(whole):
                    z0, z1, z2, z3 = _tile16(q, j)
                    k = 4 * j
                    for e in range(4):
                        y0[k + e] = _finish(z0[e], bias, relu, zero)
                        y1[k + e] = _finish(z1[e], bias, relu, zero)
                        y2[k + e] = _finish(z2[e], bias, relu, zero)
                        y3[k + e] = _finish(z3[e], bias, relu, zero)
                start = whole
            for j in range(start, tw):
                z = _tile16(q, j)
                for a in range(min(4, ho - 4 * i)):
                    row = y[m, 4 * i + a]
                    for e in range(min(4, wo - 4 * j)):
                        row[4 * j + e] = _finish(z[a][e], bias, relu, zero)
    return y


@njit(**COMPILE)
def into_stride_phases(x, sh, sw, pt, pl, phases):
    """Copy the image x (C, H, W) into the stride phases of its zero-padded form,
    phases (C, sh, sw, hq, wq): padded element (R, Q) of channel c lands at
    phases[c, R % sh, Q % sw, R // sh, Q // sw]. Only the image's positions are
    written (those past the buffer dropped): the padding keeps whatever the buffer
    held, zero when it was made so, and the same positions every call."""
    c_, h, wd = x.shape
    hq, wq = phases.shape[3], phases.shape[4]
    xf, pf = x.reshape(x.size), phases.reshape(phases.size)
    pq = hq * wq
    for c in range(c_):
        for i in range(h):
            r = i + pt
            if r // sh >= hq:
                break
            src = uint64((c * h + i) * wd)
            base = ((c * sh + r % sh) * sw) * pq + (r // sh) * wq
            for rx in range(sw):
                j0 = (rx - pl) % sw   # the first input column of column phase rx
                q0 = (j0 + pl) // sw
                count = min((wd - j0 + sw - 1) // sw, wq - q0) if j0 < wd else 0
                dst = uint64(base + rx * pq + q0)
                first = src + uint64(j0)
                for j in range(count):
                    pf[dst + uint64(j)] = xf[first + uint64(j * sw)]
    return phases


@njit(fastmath={"contract"}, **COMPILE)
def direct_taps(phases, offsets, weights, b, relu, zero, wq, rows, y):
    """A convolution with few taps per output (small C*kh*kw, e.g. an RGB stem) straight
    from the stride phases of its padded input (`into_stride_phases`, flattened):
    output (m, r, j) = b[m] + sum over taps k of weights[m // 4, k // 9, m % 4, k % 9] *
    phases[offsets[k] + r*wq + j], then max(., zero) when `relu`, into y (M, ho, wo)
    (rows contiguous). The taps come in groups of nine (`offsets` padded with zero
    weights) and the output channels in blocks of four: each group is one loop over a
    band of `rows` output rows (wq positions a row, the last wq - wo dropped) that
    reads the nine inputs once and updates four accumulators, 36 multiply-adds per
    position in registers where a GEMM on this few taps (K of 27 for 3x3 RGB) runs
    starved. The weights' first axis covers ceil(M / 4) blocks, the last one padded.
    Each output sums its taps in order by fused multiply-adds and takes the bias
    last, as a GEMM over im2col columns with a row of ones does: the results equal
    conv.py's im2col path's to the bit (OpenBLAS), so quantized models that round
    the conv's output see the same integers on either path."""
    m_, ho, wo = y.shape
    groups = offsets.size // 9
    band = rows * wq
    acc = np.empty(4 * band, y.dtype)
    a1, a2, a3 = uint64(band), uint64(2 * band), uint64(3 * band)
    for r0 in range(0, ho, rows):
        r1 = min(ho, r0 + rows)
        n = (r1 - r0) * wq
        start = r0 * wq
        for blk in range(weights.shape[0]):
            m0 = 4 * blk
            for i in range(4 * band):
                acc[i] = zero
            for g in range(groups):
                k = 9 * g
                o0, o1, o2 = uint64(offsets[k] + start), uint64(offsets[k + 1] + start), \
                    uint64(offsets[k + 2] + start)
                o3, o4, o5 = uint64(offsets[k + 3] + start), uint64(offsets[k + 4] + start), \
                    uint64(offsets[k + 5] + start)
                o6, o7, o8 = uint64(offsets[k + 6] + start), uint64(offsets[k + 7] + start), \
                    uint64(offsets[k + 8] + start)
                wg = weights[blk, g]
                u00, u01, u02, u03, u04, u05, u06, u07, u08 = \
                    wg[0, 0], wg[0, 1], wg[0, 2], wg[0, 3], wg[0, 4], wg[0, 5], wg[0, 6], \
                    wg[0, 7], wg[0, 8]
                u10, u11, u12, u13, u14, u15, u16, u17, u18 = \
                    wg[1, 0], wg[1, 1], wg[1, 2], wg[1, 3], wg[1, 4], wg[1, 5], wg[1, 6], \
                    wg[1, 7], wg[1, 8]
                u20, u21, u22, u23, u24, u25, u26, u27, u28 = \
                    wg[2, 0], wg[2, 1], wg[2, 2], wg[2, 3], wg[2, 4], wg[2, 5], wg[2, 6], \
                    wg[2, 7], wg[2, 8]
                u30, u31, u32, u33, u34, u35, u36, u37, u38 = \
                    wg[3, 0], wg[3, 1], wg[3, 2], wg[3, 3], wg[3, 4], wg[3, 5], wg[3, 6], \
                    wg[3, 7], wg[3, 8]
                for i in range(n):
                    p = uint64(i)
                    e0, e1, e2 = phases[o0 + p], phases[o1 + p], phases[o2 + p]
                    e3, e4, e5 = phases[o3 + p], phases[o4 + p], phases[o5 + p]
                    e6, e7, e8 = phases[o6 + p], phases[o7 + p], phases[o8 + p]
                    acc[p] = (acc[p] + u00 * e0 + u01 * e1 + u02 * e2 + u03 * e3 + u04 * e4
                              + u05 * e5 + u06 * e6 + u07 * e7 + u08 * e8)
                    q = a1 + p
                    acc[q] = (acc[q] + u10 * e0 + u11 * e1 + u12 * e2 + u13 * e3 + u14 * e4
                              + u15 * e5 + u16 * e6 + u17 * e7 + u18 * e8)
                    q = a2 + p
                    acc[q] = (acc[q] + u20 * e0 + u21 * e1 + u22 * e2 + u23 * e3 + u24 * e4
                              + u25 * e5 + u26 * e6 + u27 * e7 + u28 * e8)
                    q = a3 + p
                    acc[q] = (acc[q] + u30 * e0 + u31 * e1 + u32 * e2 + u33 * e3 + u34 * e4
                              + u35 * e5 + u36 * e6 + u37 * e7 + u38 * e8)
            for q in range(min(4, m_ - m0)):
                bias = b[m0 + q]
                for r in range(r0, r1):
                    dst = y[m0 + q, r]
                    src = uint64(q * band + (r - r0) * wq)
                    if relu:
                        for j in range(wo):
                            dst[j] = max_nan(acc[src + uint64(j)] + bias, zero)
                    else:
                        for j in range(wo):
                            dst[j] = acc[src + uint64(j)] + bias
    return y

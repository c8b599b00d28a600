"""2-D window reductions (MaxPool's maximum, AveragePool's and LpPool's sums) compiled by
numba (ops/jit.py), behind pool._separable_reduce when the JIT backend is numba.
Importing this module imports numba.

Separable, one output row at a time and in cache: the row's kernel rows that lie in
the image are folded into one full-width row (one vectorised pass each), then each
output column folds its window's columns of that row (one pass per kernel column, the
strides 1 and 2 vectorised, each its own loop); taps past the image are skipped, which
is the identity for both reductions. The input is read where it lies, with no padded
copy.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from .conv_jit import COMPILE, as_is, into_2x2_phases, max_nan, split_pairs, zero_2x2_phases


@njit(inline="always", **COMPILE)
def _add(a, b):
    return a + b


@njit(inline="always", **COMPILE)
def _reduce(x, out, kh, kw, sh, sw, pt, pl, combine):
    """out[n, c, i, j] = `combine` over the in-image taps of the kh x kw window at
    (i*sh - pt, j*sw - pl) of C-contiguous x (N, C, H, W) into C-contiguous out
    (N, C, ho, wo). A window with no tap in the image is left to the caller (see max_2d,
    sum_2d). Flat arrays with unsigned indices throughout: numba then neither tests
    indices for wrap-around nor makes a view (reference-counted) per row, which made a
    row's fixed cost larger than small images' rows."""
    n_, c_, h, wd = x.shape
    ho, wo = out.shape[2], out.shape[3]
    xf, of = x.reshape(x.size), out.reshape(out.size)
    rows = np.empty(wd, x.dtype)
    # columns [j0, j1): windows inside the image (j*sw - pl >= 0, j*sw - pl + kw <= W)
    j0 = min(wo, (pl + sw - 1) // sw)
    j1 = max(j0, min(wo, (wd - kw + pl) // sw + 1) if wd >= kw - pl else 0)
    for plane in range(n_ * c_):
        src, dst = uint64(plane * h * wd), uint64(plane * ho * wo)
        for r in range(ho):
            top = r * sh - pt
            a0, a1 = max(0, top), min(h, top + kh)
            if a1 <= a0:
                continue
            first = src + uint64(a0 * wd)
            for j in range(wd):
                rows[j] = xf[first + uint64(j)]
            for a in range(a0 + 1, a1):
                line = src + uint64(a * wd)
                for j in range(wd):
                    rows[j] = combine(rows[j], xf[line + uint64(j)])
            orow = dst + uint64(r * wo)
            for j in range(j0):
                _edge_column(rows, of, orow, j, kw, sw, pl, combine)
            for j in range(j1, wo):
                _edge_column(rows, of, orow, j, kw, sw, pl, combine)
            if j1 > j0:
                _inner_columns(rows, of, orow, j0, j1, kw, sw, pl, combine)
    return out


@njit(inline="always", **COMPILE)
def _edge_column(rows, of, orow, j, kw, sw, pl, combine):
    """of[orow + j] = `combine` over the in-image columns of window j of the folded row
    (a window that reaches past the side; left alone when none is in the image)."""
    left = j * sw - pl
    b0, b1 = max(0, left), min(rows.size, left + kw)
    if b1 > b0:
        acc = rows[b0]
        for b in range(b0 + 1, b1):
            acc = combine(acc, rows[b])
        of[orow + uint64(j)] = acc


@njit(inline="always", **COMPILE)
def _inner_columns(rows, of, orow, j0, j1, kw, sw, pl, combine):
    """of[orow + j] for the windows j in [j0, j1), inside the image: one pass per kernel
    column, the strides 1 and 2 each their own loop (LLVM vectorises them)."""
    n = j1 - j0
    out0 = orow + uint64(j0)
    for b in range(kw):
        at = uint64(j0 * sw - pl + b)   # the first window's tap b, never negative
        if b == 0:
            if sw == 1:
                for j in range(n):
                    of[out0 + uint64(j)] = rows[at + uint64(j)]
            else:
                for j in range(n):
                    of[out0 + uint64(j)] = rows[at + uint64(j * sw)]
        elif sw == 1:
            for j in range(n):
                q = out0 + uint64(j)
                of[q] = combine(of[q], rows[at + uint64(j)])
        elif sw == 2:
            for j in range(n):
                q = out0 + uint64(j)
                of[q] = combine(of[q], rows[at + uint64(2 * j)])
        else:
            for j in range(n):
                q = out0 + uint64(j)
                of[q] = combine(of[q], rows[at + uint64(j * sw)])


@njit(**COMPILE)
def max_2d(x, out, kh, kw, sh, sw, pt, pl, lowest):
    """Max over each window (NaN when the window holds one); `lowest` for a window with
    no tap in the image."""
    out[...] = lowest
    return _reduce(x, out, kh, kw, sh, sw, pt, pl, max_nan)


@njit(**COMPILE)
def sum_2d(x, out, kh, kw, sh, sw, pt, pl):
    """Sum over each window's in-image taps (0 for a window with none)."""
    out[...] = 0
    return _reduce(x, out, kh, kw, sh, sw, pt, pl, _add)


@njit(**COMPILE)
def mean_3x3_s2(x, out, pt, pl, divisor):
    """3x3 stride-2 window sums of C-contiguous x (N, C, H, W), leading pads (pt, pl) >= 0
    reading zeros, divided by divisor (ho, wo) (each window's count) into the
    C-contiguous out (N, C, ho, wo): AveragePool in one pass. Each plane is first
    copied into the four stride phases of its zero-padded form (conv_jit's
    `into_2x2_phases`: every tap then a fixed offset into one phase), then each
    output row is one loop over its columns, the window's rows summed first (the
    numpy passes' order). Against the window sums then the division as two passes:
    24x56x56 60 -> 22 us, 136x28x28 106 -> 76, and 150 -> 50 us with the input out of
    cache; 544x7x7 50 -> 34."""
    n_, c_, h, wd = x.shape
    ho, wo = out.shape[2], out.shape[3]
    phases, hq, wq = zero_2x2_phases(h, wd, ho, wo, pt, pl, x.dtype)
    pq = hq * wq
    xf, of, df = x.reshape(x.size), out.reshape(out.size), divisor.reshape(divisor.size)
    one, row, row1 = uint64(1), uint64(wq), uint64(wq + 1)
    ee, eo, oe, oo = uint64(0), uint64(pq), uint64(2 * pq), uint64(3 * pq)
    for plane in range(n_ * c_):
        into_2x2_phases(xf, plane * h * wd, h, wd, pt, pl, phases, hq, wq, phases[0],
                        phases[0], as_is)
        dst = uint64(plane * ho * wo)
        for r in range(ho):
            d, first, q = dst + uint64(r * wo), uint64(r * wq), uint64(r * wo)
            for j in range(wo):
                p = first + uint64(j)
                left = phases[ee + p] + phases[oe + p] + phases[ee + p + row]
                mid = phases[eo + p] + phases[oo + p] + phases[eo + p + row]
                right = phases[ee + p + one] + phases[oe + p + one] + phases[ee + p + row1]
                of[d + uint64(j)] = (left + mid + right) / df[q + uint64(j)]
    return out


@njit(**COMPILE)
def max_3x3_s2(x, out, pt, pl, lowest):
    """`max_2d` for 3x3 windows at stride 2 (the pool after most stems): each output
    row folds its window's rows into the even and odd padded columns apart (one loop
    reading a row's column pairs, which LLVM deinterleaves with vector permutes), then
    takes each window's three columns from those two rows contiguously, where
    `max_2d`'s stride-2 column reads become gathers. Padding positions hold `lowest`,
    never written. Against max_2d: 64x112x112 370 -> 256 us, 192x56x56 323 -> 257,
    832x14x14 200 -> 157; equal at 27x27 and 28x28."""
    n_, c_, h, wd = x.shape
    ho, wo = out.shape[2], out.shape[3]
    wq = max(wo + 1, (wd + pl + 2) // 2)
    even = np.full(wq + 1, lowest, x.dtype)   # padded columns 2q
    odd = np.full(wq + 1, lowest, x.dtype)    # padded columns 2q + 1
    xf, of = x.reshape(x.size), out.reshape(out.size)
    one = uint64(1)
    pairs = wd // 2
    # input column 2j is padded column 2j + pl: phase pl % 2 at (2j + pl) // 2, and
    # 2j + 1 the other phase at (2j + 1 + pl) // 2
    from_even, from_odd = (even, odd) if pl % 2 == 0 else (odd, even)
    e0, o0 = uint64(pl // 2), uint64((pl + 1) // 2)
    last = e0 + uint64(pairs)
    for plane in range(n_ * c_):
        src = uint64(plane * h * wd)
        dst = uint64(plane * ho * wo)
        for r in range(ho):
            top = 2 * r - pt
            a0, a1 = max(0, top), min(h, top + 3)
            row = dst + uint64(r * wo)
            if a1 <= a0:
                for j in range(wo):
                    of[row + uint64(j)] = lowest
                continue
            first = src + uint64(a0 * wd)
            split_pairs(xf, first, pairs, from_even, e0, from_odd, o0, lowest, lowest, as_is)
            if wd % 2:
                from_even[last] = xf[first + uint64(wd - 1)]
            for a in range(a0 + 1, a1):
                line = src + uint64(a * wd)
                for j in range(pairs):
                    u = uint64(j)
                    e = xf[line + u + u]
                    o = xf[line + u + u + one]
                    from_even[e0 + u] = max_nan(from_even[e0 + u], e)
                    from_odd[o0 + u] = max_nan(from_odd[o0 + u], o)
                if wd % 2:
                    from_even[last] = max_nan(from_even[last], xf[line + uint64(wd - 1)])
            for j in range(wo):
                u = uint64(j)
                of[row + u] = max_nan(max_nan(even[u], odd[u]), even[u + one])
    return out


@njit(inline="always", **COMPILE)
def _divide(value, divisor, p):
    return value / divisor[p]


@njit(inline="always", **COMPILE)
def _keep(value, divisor, p):
    return value


@njit(inline="always", **COMPILE)
def _same_3x3(x, out, fill, combine, finish, divisor):
    """out (N, C, H, W) = finish(`combine` over the 3x3 window around each pixel of the
    C-contiguous x (N, C, H, W), W >= 2, padded by one pixel of `fill` (the identity of
    `combine`), divisor, flat pixel index). Each plane is copied between a row of
    `fill` above and one below, so every window is nine fixed offsets from its pixel:
    one flat loop over the plane, the window's rows combined first, then its columns
    (the numpy passes' order); the side columns, whose horizontal taps read the
    neighbouring row's end, are redone without them."""
    n_, c_, h, wd = x.shape
    hw = h * wd
    xf, of = x.reshape(x.size), out.reshape(out.size)
    buf = np.full(hw + 2 * wd + 2, fill, x.dtype)
    one, two, row, rows2 = uint64(1), uint64(2), uint64(wd), uint64(2 * wd)
    for plane in range(n_ * c_):
        src = uint64(plane * hw)
        for i in range(hw):
            buf[uint64(wd + 1 + i)] = xf[src + uint64(i)]
        for i in range(hw):
            p = uint64(i)
            q, r = row + p, rows2 + p
            left = combine(combine(buf[p], buf[q]), buf[r])
            mid = combine(combine(buf[p + one], buf[q + one]), buf[r + one])
            right = combine(combine(buf[p + two], buf[q + two]), buf[r + two])
            of[src + p] = finish(combine(combine(left, mid), right), divisor, p)
        for i in range(h):
            p = uint64(i * wd)
            q, r = row + p, rows2 + p
            mid = combine(combine(buf[p + one], buf[q + one]), buf[r + one])
            right = combine(combine(buf[p + two], buf[q + two]), buf[r + two])
            of[src + p] = finish(combine(mid, right), divisor, p)
            p += uint64(wd - 1)
            q, r = row + p, rows2 + p
            left = combine(combine(buf[p], buf[q]), buf[r])
            mid = combine(combine(buf[p + one], buf[q + one]), buf[r + one])
            of[src + p] = finish(combine(left, mid), divisor, p)
    return out


@njit(**COMPILE)
def mean_3x3_same(x, out, divisor):
    """AveragePool 3x3, stride 1, one pixel of padding on every side (the output as
    large as the input) of C-contiguous x (N, C, H, W), W >= 2: the window sums divided
    by divisor (H, W) (each window's count) in one pass (`_same_3x3`). Against numpy's
    window passes and the division: 64x28x28 117 -> 20 us, 192x28x28 315 -> 60, 128x7x7
    36 -> 6."""
    flat = divisor.reshape(divisor.size)
    return _same_3x3(x, out, flat[0] * 0, _add, _divide, flat)


@njit(**COMPILE)
def max_3x3_same(x, out, lowest):
    """MaxPool 3x3, stride 1, one pixel of padding on every side, as `mean_3x3_same`
    (NaN where a window holds one): 256x28x28 289 -> 186 us, 192x28x28 185 -> 134,
    480x14x14 122 -> 109 against numpy's passes, equal to them."""
    return _same_3x3(x, out, lowest, max_nan, _keep, out.reshape(out.size)[:1])

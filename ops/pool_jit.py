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
from numba import njit

from .conv_jit import COMPILE, max_nan


@njit(inline="always", **COMPILE)
def _add(a, b):
    return a + b


@njit(inline="always", **COMPILE)
def _reduce(x, out, kh, kw, sh, sw, pt, pl, combine):
    """out[n, c, i, j] = `combine` over the in-image taps of the kh x kw window at
    (i*sh - pt, j*sw - pl) of x (N, C, H, W); out (N, C, ho, wo) any strides. A window
    with no tap in the image is left to the caller (see max_2d, sum_2d)."""
    n_, c_, h, wd = x.shape
    ho, wo = out.shape[2], out.shape[3]
    rows = np.empty(wd, x.dtype)
    # columns [j0, j1): windows inside the image (j*sw - pl >= 0, j*sw - pl + kw <= W)
    j0 = min(wo, (pl + sw - 1) // sw)
    j1 = min(wo, (wd - kw + pl) // sw + 1) if wd >= kw - pl else 0
    for i in range(n_):
        for c in range(c_):
            img, o = x[i, c], out[i, c]
            for r in range(ho):
                top = r * sh - pt
                a0, a1 = max(0, top), min(h, top + kh)
                orow = o[r]
                if a1 <= a0:
                    continue
                first = img[a0]
                for j in range(wd):
                    rows[j] = first[j]
                for a in range(a0 + 1, a1):
                    src = img[a]
                    for j in range(wd):
                        rows[j] = combine(rows[j], src[j])
                for j in range(j0):
                    _edge_column(rows, orow, j, kw, sw, pl, combine)
                for j in range(max(j0, j1), wo):
                    _edge_column(rows, orow, j, kw, sw, pl, combine)
                if j1 > j0:
                    _inner_columns(rows, orow, j0, j1, kw, sw, pl, combine)
    return out


@njit(inline="always", **COMPILE)
def _edge_column(rows, orow, j, kw, sw, pl, combine):
    """orow[j] = `combine` over the in-image columns of window j of the folded row (a
    window that reaches past the side; left alone when none is in the image)."""
    left = j * sw - pl
    b0, b1 = max(0, left), min(rows.size, left + kw)
    if b1 > b0:
        acc = rows[b0]
        for b in range(b0 + 1, b1):
            acc = combine(acc, rows[b])
        orow[j] = acc


@njit(inline="always", **COMPILE)
def _inner_columns(rows, orow, j0, j1, kw, sw, pl, combine):
    """orow[j0:j1] for the windows inside the image: one pass per kernel column over
    views that start at the first window's tap (indices from range() are never
    negative: LLVM drops numba's wrap-around test and vectorises strides 1 and 2)."""
    q, n = orow[j0:j1], j1 - j0
    for b in range(kw):
        src = rows[j0 * sw - pl + b:]
        if b == 0:
            if sw == 1:
                for j in range(n):
                    q[j] = src[j]
            elif sw == 2:
                for j in range(n):
                    q[j] = src[2 * j]
            else:
                for j in range(n):
                    q[j] = src[j * sw]
        elif sw == 1:
            for j in range(n):
                q[j] = combine(q[j], src[j])
        elif sw == 2:
            for j in range(n):
                q[j] = combine(q[j], src[2 * j])
        else:
            for j in range(n):
                q[j] = combine(q[j], src[j * sw])


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

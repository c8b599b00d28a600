"""Per-channel affine kernels compiled by numba (ops/jit.py): an inference
BatchNormalization folded to x * a + b per channel, with its Relu, as the Session's
plan rewrites run it (train/optimize.py). numpy needs a pass over memory per operation
(multiply, add, maximum), each also paying for the per-channel broadcast; these run
one pass, a vectorised loop per channel. No multiply-add is fused, so the results are
numpy's to the bit. Importing this module imports numba.

Every kernel takes x of shape (N, C, P) (the spatial dims flattened, C-contiguous), its
per-channel parameters of shape (C,) and writes `out` of x's shape (may be x). NaN
propagates through the maximum as through np.maximum.
"""

from __future__ import annotations

from numba import njit

from .conv_jit import COMPILE, max_nan


@njit(**COMPILE)
def affine(x, a, b, relu, zero, out):
    """out = x * a + b per channel, then max(., zero) when `relu` (zero: a 0 of x's
    dtype)."""
    for i in range(x.shape[0]):
        for c in range(x.shape[1]):
            src, dst, scale, shift = x[i, c], out[i, c], a[c], b[c]
            if relu:
                for j in range(src.size):
                    dst[j] = max_nan(src[j] * scale + shift, zero)
            else:
                for j in range(src.size):
                    dst[j] = src[j] * scale + shift
    return out


@njit(**COMPILE)
def clip_below(x, low, out):
    """out = max(x, low) per channel (a BatchNormalization + Relu whose positive scale
    went into the next 1x1 Conv)."""
    for i in range(x.shape[0]):
        for c in range(x.shape[1]):
            src, dst, lo = x[i, c], out[i, c], low[c]
            for j in range(src.size):
                dst[j] = max_nan(src[j], lo)
    return out


@njit(**COMPILE)
def shift_relu(x, shift, zero, out):
    """out = max(x - shift, zero) per channel (the same before a Conv with padding,
    whose zero padding must stay zero; zero: a 0 of x's dtype)."""
    for i in range(x.shape[0]):
        for c in range(x.shape[1]):
            src, dst, s = x[i, c], out[i, c], shift[c]
            for j in range(src.size):
                dst[j] = max_nan(src[j] - s, zero)
    return out

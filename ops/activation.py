"""Operators: activation family (definitions, kernels, inference, gradients).

Pointwise activations (Relu, Elu, Gelu, ...) and the axis-wise normalisers Softmax,
LogSoftmax and Hardmax, with ONNX semantics. Outputs keep the input dtype; types numpy
cannot compute in (ml_dtypes bfloat16) are evaluated in float32 and rounded back.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .blas import normal_cdf
from .common import infer_elementwise, infer_same
from .elementwise import erf, fp_errors_quiet
from .registry import define
from .scratch import scratch

_NATIVE_FLOATS = ("float16", "float32", "float64")


_LIFTS: dict = {}  # dtype -> whether it is computed in float32 (dtype.name is slow)


def _lift(x):
    x = np.asarray(x)
    dt = x.dtype
    lift = _LIFTS.get(dt)
    if lift is None:
        lift = _LIFTS[dt] = not (dt.kind in "fiu" and (dt.kind != "f"
                                                       or dt.name in _NATIVE_FLOATS))
    return x.astype(np.float32) if lift else x


def _pointwise(fn):
    def kernel(inputs, attrs, ctx):
        """Apply the activation elementwise, keeping the input dtype."""
        x = np.asarray(inputs[0])
        # a 0-d array runs as shape (1,): ufuncs return numpy scalars for 0-d operands,
        # which the kernels' in-place passes (out=...) cannot take
        lx = _lift(x.reshape(1) if x.ndim == 0 else x)
        if fp_errors_quiet():  # the executor ignores fp errors for the whole run
            y = np.asarray(fn(lx, attrs))
        else:
            with np.errstate(all="ignore"):
                y = np.asarray(fn(lx, attrs))
        y = y.reshape(x.shape)
        return (y if y.dtype == x.dtype else y.astype(x.dtype),)
    return kernel


def relu(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """max(x, 0) elementwise for a numpy array of a native float or int dtype.

    float32/float64 compare against a read-only plane of zeros (`_zero_plane`):
    numpy's maximum of two arrays runs its SIMD loop, against a scalar a slower one
    (and np.clip's speed varies by CPU). NaN still propagates. `out` may be x itself.
    Other dtypes: np.clip(x, 0, inf) for float16, a plain np.maximum for ints.
    """
    zeros = _zero_plane(x) if type(x) is np.ndarray else None
    if zeros is not None:
        return np.maximum(x, zeros, out=out)
    bounds = _RELU_BOUNDS.get(x.dtype)
    if bounds is None:
        # a typed zero: numpy 1.x takes a 0-d int32 and the int 0 to int64
        return np.maximum(x, x.dtype.type(0), out=out)
    return np.clip(x, bounds[0], bounds[1], out=out)


# Relu's zeros: a calloc'd block never written, so every page of it is the kernel's
# shared zero page (no memory or cache cost however much of it is read). Measured
# (median of 3000 interleaved calls, float32): 194k values 34 us against 46-48 us for
# np.clip or a scalar maximum; 50k values 7 vs 13 us.
_ZERO_PLANE_BYTES = 1 << 26
_ZERO_PLANE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_ZERO_PLANES: dict = {}


def all_finite(x: np.ndarray) -> bool:
    """Whether a float array holds no inf or NaN. Never raises.

    A contiguous float32/float64 array is dotted with the zero plane (BLAS): every
    finite product is 0 and inf * 0 = NaN, so the dot is 0 exactly when all values are
    finite; 200k float32 in 18 us, against 13 for a max that misses -inf and 49 for a
    sum."""
    zeros = _zero_plane(x) if type(x) is np.ndarray and x.flags.c_contiguous else None
    with np.errstate(invalid="ignore"):
        if zeros is not None:
            return bool(np.dot(x.reshape(-1), zeros.reshape(-1)) == 0)
        return bool(np.isfinite(x).all())


def _zero_plane(x):
    """A read-only zeros array of x's shape and dtype (float32/float64 up to
    _ZERO_PLANE_BYTES), or None. Never raises."""
    dt = x.dtype
    plane = _ZERO_PLANES.get(dt)
    if plane is None:
        if dt not in _ZERO_PLANE_DTYPES:
            return None
        plane = np.zeros(_ZERO_PLANE_BYTES // dt.itemsize, dt)
        plane.setflags(write=False)
        _ZERO_PLANES[dt] = plane
    n = x.size
    if n > plane.size:
        return None
    return plane[:n].reshape(x.shape)


def _relu_kernel(inputs, attrs, ctx):
    """max(x, 0) elementwise, keeping the input dtype (never warns: no errstate)."""
    x = inputs[0]
    if type(x) is not np.ndarray or x.dtype not in _RELU_NATIVE_DTYPES:
        return _relu_slow(inputs, attrs, ctx)
    y = relu(x)
    return (y if type(y) is np.ndarray else np.asarray(y),)


def _relu(x, attrs):
    return np.maximum(x, np.zeros((), x.dtype))


# The piecewise activations below are sums and extrema of whole-array passes, not
# np.where: a select on a mask that flips at random (half the inputs negative) runs
# numpy's branchy loop, 10.4 ms for a 96x112x112 float32 LeakyRelu against 1.0 ms for
# max(alpha x, x). NaN propagates through every form used.


def _negative_part(x, scale=None):
    """min(x, 0) (times `scale` when given) as a new array."""
    y = np.minimum(x, x.dtype.type(0))
    if scale is not None:
        y *= scale
    return y


def _leaky_relu(x, attrs):
    alpha = x.dtype.type(attrs["alpha"])
    if alpha > 0:
        y = np.multiply(x, alpha)
        # x >= 0: x >= alpha x when alpha <= 1; x < 0: alpha x >= x (reversed above 1)
        return np.maximum(y, x, out=y) if alpha <= 1 else np.minimum(y, x, out=y)
    # alpha <= 0 (0 * -inf stays NaN, as x * alpha gives)
    y = _negative_part(x, alpha)
    y += relu(x)
    return y


def _exp_negative_part(x, alpha):
    """alpha (exp(min(x, 0)) - 1) as a new array: Elu's and Selu's x < 0 branch."""
    y = _negative_part(x)
    np.expm1(y, out=y)
    y *= alpha
    return y


def _elu(x, attrs):
    alpha = x.dtype.type(attrs["alpha"])
    if not np.isfinite(alpha):  # the sum below would spread 0 * alpha = NaN to x >= 0
        with np.errstate(all="ignore"):
            return np.where(x < 0, alpha * np.expm1(x), x).astype(x.dtype)
    y = _exp_negative_part(x, alpha)
    y += relu(x)
    return y


def _selu(x, attrs):
    alpha = x.dtype.type(attrs["alpha"])
    gamma = x.dtype.type(attrs["gamma"])
    if not (np.isfinite(alpha) and np.isfinite(gamma)):  # as in _elu
        with np.errstate(all="ignore"):
            return np.where(x <= 0, gamma * (alpha * np.expm1(x)), gamma * x).astype(x.dtype)
    y = np.multiply(relu(x), gamma)
    y += _exp_negative_part(x, alpha * gamma)
    return y


def _celu(x, attrs):
    alpha = attrs["alpha"]
    if alpha == 0:
        raise OpAttributeError("Celu: alpha must not be 0")
    neg = alpha * np.expm1(np.minimum(x, 0).astype(np.float64) / alpha)
    return np.maximum(x, 0) + neg.astype(x.dtype)


def _sigmoid(x, attrs):
    # 1 / (1 + exp(-x)) in four passes over one array: exp(-x) overflows to inf for
    # x < -88.7 (float32), giving 0 where the true value is a subnormal below 4e-39.
    # float16 goes through float32, whose exp still covers float16's whole tail.
    if x.dtype == np.float16:
        return _sigmoid(x.astype(np.float32), attrs).astype(np.float16)
    y = np.negative(x)
    np.exp(y, out=y)
    y += 1
    return np.reciprocal(y, out=y)


# SiLU runs in blocks of this many values so its four passes stay in L2.
_SILU_BLOCK = 1 << 16


def silu(x: np.ndarray) -> np.ndarray:
    """x * sigmoid(x) = x / (1 + exp(-x)) of a float32/float64 array, as a new array in
    four in-cache passes per block (the Session's fusion of Sigmoid and Mul: EfficientNet's
    and YOLO's activation). Floating-point errors must already be quiet (exp overflows
    to inf for very negative x, giving -0; -inf gives NaN, as x * sigmoid(x) does)."""
    flat = np.ascontiguousarray(x).reshape(-1)
    y = np.empty(flat.shape, x.dtype)
    for start in range(0, flat.size, _SILU_BLOCK):
        xb, yb = flat[start:start + _SILU_BLOCK], y[start:start + _SILU_BLOCK]
        np.negative(xb, out=yb)
        np.exp(yb, out=yb)
        yb += 1
        np.divide(xb, yb, out=yb)
    return y.reshape(x.shape)


def _unit_clip(y):
    """y clamped to [0, 1] in place (np.clip into its own buffer: the fastest clamp
    numpy has for large float arrays, 0.6 ms for 1.2M float32 against 1.3 for a max
    then a min)."""
    dt = y.dtype.type
    return np.clip(y, dt(0), dt(1), out=y)


def _hard_sigmoid(x, attrs):
    alpha = x.dtype.type(attrs["alpha"])
    beta = x.dtype.type(attrs["beta"])
    y = np.multiply(x, alpha)
    y += beta
    return _unit_clip(y)


def _hard_swish(x, attrs):
    y = np.divide(x, x.dtype.type(6))
    y += x.dtype.type(0.5)
    _unit_clip(y)
    y *= x
    return y


def _softplus(x, attrs):
    return np.logaddexp(np.zeros((), x.dtype), x)


def _softsign(x, attrs):
    y = np.abs(x)
    y += 1
    return np.divide(x, y, out=y)


def _tanh(x, attrs):
    return np.tanh(x)


def _mish(x, attrs):
    return x * np.tanh(np.logaddexp(np.zeros((), x.dtype), x))


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu(x, attrs):
    mode = attrs["approximate"]
    if x.dtype == np.float32 and mode in ("none", "tanh"):
        return _gelu_float32(x, mode)
    if x.dtype.name in ("float16", "bfloat16") and mode == "none":
        # through the float32 kernel, rounded once (its relative error, ~1e-6 into the
        # far tail, is far below their half ulp); the float64 path below took 8.6 ms
        # for 131k values against 0.3. Not the tanh form: 1 + tanh cancels in float32
        # near x = -5.4, off by 2e-7 where float16 rounds the exact value to -0
        return _gelu_float32(x.astype(np.float32), mode).astype(x.dtype)
    wide = x.astype(np.float64)
    if mode == "none":
        y = 0.5 * wide * (1.0 + erf(wide / math.sqrt(2.0)))
    elif mode == "tanh":
        y = 0.5 * wide * (1.0 + np.tanh(_SQRT_2_OVER_PI * (wide + 0.044715 * wide ** 3)))
    else:
        raise OpAttributeError(f"Gelu: approximate must be 'none' or 'tanh', got {mode!r}")
    return y.astype(x.dtype)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact Gelu, x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), of a float32 or float64
    array as a new array (the Session's fusion of Gelu chains spelled with Erf).
    Never raises."""
    if fp_errors_quiet():
        return _gelu(x, _EXACT_GELU)
    with np.errstate(all="ignore"):
        return _gelu(x, _EXACT_GELU)


_EXACT_GELU = {"approximate": "none"}


def _gelu_float32(x, mode):
    """Gelu of a float32 array in float32, exact ("none") or tanh form."""
    return _gelu_erf_float32(x) if mode == "none" else _gelu_tanh_float32(x)


def _gelu_tanh_float32(x):
    """The tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) with one
    temporary (numpy's float32 tanh)."""
    f32 = np.float32
    t = x * x
    t *= f32(0.044715)
    t += f32(1.0)
    t *= x
    t *= f32(_SQRT_2_OVER_PI)
    np.tanh(t, out=t)
    t *= f32(0.5)
    t += f32(0.5)
    t *= x
    return t


# Exact Gelu through the normal tail: x * Phi(x) = relu(x) - |x| * Q(|x|), where
# Q(a) = 0.5 * erfc(a / sqrt 2) = exp(-a^2 / 2) * t * S(t) with t = C / (C + a).
# S is a degree-6 polynomial in t, fitted for relative error (weighted least squares
# refined by Lawson's minimax iteration against math.erfc) over 0 <= a <= 14.5, past
# which exp(-a^2 / 2) is 0 in float32: Q's relative error is 1.3e-6 over the whole
# range, so negative inputs keep their relative accuracy far into the tail (1 + erf
# loses it there). 24 whole-array passes, against 28 for 0.5 x (1 + erf(x / sqrt 2))
# through the rational erf. Coefficients from the highest power down.
_GELU_TAIL_C = 5.0
_GELU_TAIL_S = (0.2790967124114596, -0.3868351159567674, 0.4469526596627425,
                -0.12319634540811535, 0.13254118215461816, 0.07109127147575402,
                0.08035026274376743)
# |x| is clamped here so that x = +inf gives a tail of exactly 0 (not 0 * inf). The
# clamp pass only runs when some |x| (or a NaN) needs it, found by a max reduction.
_GELU_ABS_MAX = 1e4


# Arrays run in blocks of this many values, so the passes stay in L2. Measured against
# whole-array passes (median of 60 interleaved calls, a loaded machine): 1.2M values
# (ConvNeXt-T's first stage) 15.6 -> 9.0 ms, 605k (ViT-B/16's) 6.5 -> 3.5 ms, 131k
# (the transformer benchmark's) 0.61 -> 0.55 ms; blocks of 32k were no better.
_GELU_BLOCK = 1 << 16


def gelu_in_place(x: np.ndarray) -> np.ndarray:
    """Exact Gelu of a C-contiguous, writeable float32 array, written over x and
    returned (the Session's Gelu on a fresh GEMM output only it reads: the result
    stays where the input is, in cache, instead of a new array). Never raises."""
    if fp_errors_quiet():
        return _gelu_erf_float32(x, out=x)
    with np.errstate(all="ignore"):
        return _gelu_erf_float32(x, out=x)


def _gelu_erf_float32(x, out=None):
    """Gelu(x) = x * Phi(x) of a float32 array, as a new array (or into `out`, a
    C-contiguous array of x's shape, which may be x); NaN propagates,
    Gelu(+inf) = inf and Gelu(-inf) = NaN, as ONNX's formula 0.5 x (1 + erf(x / sqrt 2))
    gives (-inf * 0; onnxruntime and the other dtypes' kernels agree). x * Phi(x) with
    MKL's Phi when the BLAS backend is MKL (ops/blas.py), else the tail polynomial
    below. Temporaries come from the scratch arena."""
    flat = np.ascontiguousarray(x).reshape(-1)
    y = np.empty(flat.shape, np.float32) if out is None else out.reshape(-1)
    block = max(1, min(flat.size, _GELU_BLOCK))  # an empty array still gets a block
    t = scratch("gelu.t", (block,), np.float32)
    # MKL's vector-math Phi when the BLAS backend is MKL (ops/blas.py): x * Phi(x)
    if flat.size and normal_cdf(flat[:block], t) is not None:
        for start in range(0, flat.size, block):
            stop = min(flat.size, start + block)
            if start:
                normal_cdf(flat[start:stop], t[:stop - start])
            np.multiply(flat[start:stop], t[:stop - start], out=y[start:stop])
        return y.reshape(x.shape) if out is None else out
    a = scratch("gelu.abs", (block,), np.float32)
    tail = scratch("gelu.tail", (block,), np.float32)
    for start in range(0, flat.size, block):
        stop = min(flat.size, start + block)
        m = stop - start
        _gelu_erf_block(flat[start:stop], a[:m], t[:m], tail[:m], y[start:stop])
    return y.reshape(x.shape) if out is None else out


def _gelu_erf_block(x, a, t, tail, y):
    """`_gelu_erf_float32` of one flat block x into y (which may be x), with
    temporaries a, t, tail."""
    f32 = np.float32
    c = f32(_GELU_TAIL_C)
    np.abs(x, out=a)
    wide = not a.max() <= _GELU_ABS_MAX  # also true when a NaN is there
    if wide:
        neg_inf = np.isneginf(x)  # (before y, which may be x, is written)
        np.minimum(a, f32(_GELU_ABS_MAX), out=a)
    np.add(a, c, out=t)
    np.divide(c, t, out=t)
    np.multiply(t, f32(_GELU_TAIL_S[0]), out=tail)
    for k in _GELU_TAIL_S[1:]:
        tail += f32(k)
        tail *= t
    np.multiply(a, f32(-0.5), out=t)    # t is reused for exp(-a^2 / 2)
    t *= a
    np.exp(t, out=t)
    tail *= t
    tail *= a
    relu(x, out=y)
    y -= tail
    if wide:
        y[neg_inf] = np.nan


def _thresholded_relu(x, attrs):
    y = np.multiply(x, np.greater(x, x.dtype.type(attrs["alpha"])))
    # NaN fails the comparison and must give 0, but NaN * 0 is NaN: a max reduction
    # (NaN-propagating) finds whether any is there
    if y.size and np.isnan(y.max()):
        y[np.isnan(y)] = 0
    return y


def _shrink(x, attrs):
    if x.dtype.kind in "iu":
        # integers shrink in float64 and truncate the result, as onnxruntime and the
        # reference do (a bias of 1.5 is not 1)
        return _shrink(x.astype(np.float64), attrs).astype(x.dtype)
    lambd = x.dtype.type(attrs["lambd"])
    bias = x.dtype.type(attrs["bias"])
    zero = np.zeros((), x.dtype)
    return np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, zero))


def _prelu_kernel(inputs, attrs, ctx):
    """PRelu: x where x >= 0, slope * x elsewhere (slope broadcasts to x)."""
    x = np.asarray(inputs[0])
    slope = np.asarray(inputs[1])
    lx, ls = _lift(x), _lift(slope)
    try:
        shape = np.broadcast_shapes(lx.shape, ls.shape)
    except ValueError:
        shape = None
    if shape != x.shape:
        raise ShapeError(f"PRelu: slope shape {slope.shape} does not broadcast to {x.shape}")
    if lx.dtype.kind == "f" and not np.isfinite(ls).all():
        # min(x, 0) * slope would be 0 * inf = NaN where x >= 0
        y = np.where(lx < 0, lx * ls, lx)
    else:
        y = np.multiply(np.minimum(lx, lx.dtype.type(0)), ls)  # no np.where: see LeakyRelu
        y += relu(lx)
    return (np.asarray(y).astype(x.dtype, copy=False),)


# ---------------------------------------------------------------------------------------
# Axis-wise normalisers (opset 13: one axis, not a flattened 2-D view)


def _axis(attrs, rank, op_name):
    axis = attrs["axis"]
    if not -rank <= axis < max(rank, 1):
        raise OpAttributeError(f"{op_name}: axis {axis} out of range for rank {rank}")
    return axis % rank if rank else 0


def _infer_along_axis(op_name):
    """infer_same, checking `axis` against the input's rank when the rank is known."""
    def infer(attrs, inputs):
        if inputs[0].shape is not None:
            _axis(attrs, len(inputs[0].shape), op_name)
        return infer_same(attrs, inputs)
    return infer


def _softmax_kernel(inputs, attrs, ctx):
    """Softmax along `axis`, shifted by the max so exp cannot overflow."""
    x = np.asarray(inputs[0])
    lx = _lift(x)
    axis = _axis(attrs, x.ndim, "Softmax")
    # float16/bfloat16 keep the per-row shift and numpy's sum: their results are
    # rounded to a few bits, and ONNX's references were made that way
    fast = x.dtype == np.float32
    if fp_errors_quiet():
        return (_softmax(lx, axis, fast).astype(x.dtype, copy=False),)
    with np.errstate(all="ignore"):
        return (_softmax(lx, axis, fast).astype(x.dtype, copy=False),)


# Softmax is shift-invariant; the shift only has to keep exp() from overflowing and the
# terms from sinking into subnormals. When the whole tensor spans less than
# _SOFTMAX_SHARED_SHIFT_SPAN, its global max is such a shift for every row, and two
# whole-array reductions cost a fraction of a max along short rows. x - shift is rounded
# to float32, an error of up to |x - shift| * 2^-24 in each exponent, so a row whose own
# max lies d below the shared shift comes out up to about d/8 ulp off, where its own max
# gives 1. Rows with d > _SOFTMAX_ROW_DROP are therefore redone with their own max. A row
# of n terms with max m has exp(m - shift) <= sum <= n exp(m - shift), so its sum tells
# which rows may be such rows without a max along the rows: sum < n exp(-drop).
_SOFTMAX_SHARED_SHIFT_SPAN = 80.0
_SOFTMAX_ROW_DROP = 8.0
# Most logits and attention scores need no shift at all: when every value is at least
# _SOFTMAX_UNSHIFTED_LOW, exp() gives no subnormal term, and when the max is at most
# _SOFTMAX_UNSHIFTED_HIGH - ln(n), no row sum of n terms overflows (it is at most e^87).
# exp(x) is then as accurate as exp() itself, where any shift first rounds x - shift,
# and one pass cheaper (attention scores whose rows have different maxima took the per-row
# path before: (1, 4, 128, 128) 130 -> 55 us).
_SOFTMAX_UNSHIFTED_LOW = -80.0
_SOFTMAX_UNSHIFTED_HIGH = 87.0


def _softmax(lx, axis, fast=False):
    """Softmax of a lifted array along `axis`; `fast` allows the shared shift and the
    BLAS row sums (float32 inputs)."""
    if lx.size == 0:  # (the max of an empty axis is undefined)
        return lx.copy()
    if lx.dtype.kind != "f":
        e = lx - lx.max(axis=axis, keepdims=True)
        e = np.exp(e)
        return e / e.sum(axis=axis, keepdims=True)
    last = axis in (-1, lx.ndim - 1)
    rows = fast and last and lx.dtype == np.float32 and lx.flags.c_contiguous
    if fast:
        top, bottom = lx.max(), lx.min()
        n = lx.shape[axis]
        if bottom >= _SOFTMAX_UNSHIFTED_LOW \
                and top <= _SOFTMAX_UNSHIFTED_HIGH - math.log(n):  # False for NaN
            e = np.exp(lx)
            return np.divide(e, _softmax_sums(e, axis, rows), out=e)
        # one row (a classifier's logits): the shared shift is its own max
        single = lx.size == n and math.isfinite(top)
        if single or (top - bottom < _SOFTMAX_SHARED_SHIFT_SPAN
                      and not _softmax_rows_likely_low(lx, top, rows)):  # no inf, NaN
            e = np.subtract(lx, top)
            np.exp(e, out=e)
            s = _softmax_sums(e, axis, rows)
            low = s < n * math.exp(-_SOFTMAX_ROW_DROP)
            if not single and low.any():
                if not rows:
                    return _softmax(lx, axis)
                _softmax_redo_rows(lx, e, s, low)
            return np.divide(e, s, out=e)
    e = lx - lx.max(axis=axis, keepdims=True)
    np.exp(e, out=e)
    return np.divide(e, _softmax_sums(e, axis, rows), out=e)


# Redoing rows costs more than a max along all of them once more than about a tenth of
# them need it; the same test on every 16th row tells, at a sixteenth of the cost, when
# that is likely, and the per-row shift is then taken from the start.
_SOFTMAX_SAMPLE_STEP = 16
_SOFTMAX_LOW_SHARE = 0.1


def _softmax_rows_likely_low(lx, top, rows):
    """Whether a sample of the rows (softmax along the last axis of a C-contiguous
    array) says that many of them would be redone after the shared shift `top`."""
    if not rows:
        return False
    n = lx.shape[-1]
    sample = np.exp(lx.reshape(-1, n)[::_SOFTMAX_SAMPLE_STEP] - top).sum(axis=1)
    return np.count_nonzero(sample < n * math.exp(-_SOFTMAX_ROW_DROP)) > \
        _SOFTMAX_LOW_SHARE * sample.size


def _softmax_sums(e, axis, rows):
    """Sums of e along `axis`, kept as a length-1 axis; `rows` (a C-contiguous float32
    array summed along its last axis) sums them as one matrix-vector product (BLAS),
    3x a sum along short rows."""
    if rows:
        return (e.reshape(-1, e.shape[-1]) @ np.ones(e.shape[-1], e.dtype)).reshape(
            e.shape[:-1] + (1,))
    return e.sum(axis=axis, keepdims=True)


def _softmax_redo_rows(lx, e, s, low):
    """Recompute in place the rows of e (and their sums s) where `low` is set, shifted by
    each row's own max (C-contiguous arrays, softmax along the last axis)."""
    n = lx.shape[-1]
    picked = np.flatnonzero(low.reshape(-1))
    redo = lx.reshape(-1, n)[picked]
    redo -= redo.max(axis=1, keepdims=True)
    np.exp(redo, out=redo)
    e.reshape(-1, n)[picked] = redo
    s.reshape(-1)[picked] = redo.sum(axis=1)


def _log_softmax_kernel(inputs, attrs, ctx):
    """LogSoftmax along `axis`: (x - max) - log(sum(exp(x - max)))."""
    x = np.asarray(inputs[0])
    lx = _lift(x)
    axis = _axis(attrs, x.ndim, "LogSoftmax")
    if x.size == 0:
        return (x.copy(),)
    with np.errstate(all="ignore"):
        shifted = lx - np.max(lx, axis=axis, keepdims=True)
        y = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return (y.astype(x.dtype, copy=False),)


def _hardmax_kernel(inputs, attrs, ctx):
    """1 at the first maximum along `axis`, 0 elsewhere."""
    x = np.asarray(inputs[0])
    axis = _axis(attrs, x.ndim, "Hardmax")
    y = np.zeros(x.shape, dtype=x.dtype)
    if x.size:
        idx = np.expand_dims(np.argmax(_lift(x), axis=axis), axis)
        np.put_along_axis(y, idx, 1, axis=axis)
    return (y,)


# ---------------------------------------------------------------------------------------
# Definitions

_POINTWISE = {
    # name: (function, attributes with ONNX defaults, since_version)
    "Relu": (_relu, [], 14),
    "LeakyRelu": (_leaky_relu, [("alpha", "float", 0.01)], 16),
    "Elu": (_elu, [("alpha", "float", 1.0)], 22),
    "Selu": (_selu, [("alpha", "float", 1.67326319217681884765625),
                     ("gamma", "float", 1.05070102214813232421875)], 22),
    "Celu": (_celu, [("alpha", "float", 1.0)], 28),
    "Sigmoid": (_sigmoid, [], 13),
    "HardSigmoid": (_hard_sigmoid, [("alpha", "float", 0.2), ("beta", "float", 0.5)], 22),
    "HardSwish": (_hard_swish, [], 22),
    "Tanh": (_tanh, [], 13),
    "Softplus": (_softplus, [], 22),
    "Softsign": (_softsign, [], 22),
    "Gelu": (_gelu, [("approximate", "string", "none")], 20),
    "Mish": (_mish, [], 22),
    "ThresholdedRelu": (_thresholded_relu, [("alpha", "float", 1.0)], 22),
    "Shrink": (_shrink, [("bias", "float", 0.0), ("lambd", "float", 0.5)], 9),
}


_RELU_NATIVE = ("float16", "float32", "float64", "int8", "int16", "int32", "int64")
_RELU_NATIVE_DTYPES = frozenset(np.dtype(name) for name in _RELU_NATIVE)
_RELU_BOUNDS = {np.dtype(name): (np.zeros((), name)[()], np.full((), np.inf, name)[()])
                for name in ("float16", "float32", "float64")}
_relu_slow = _pointwise(_relu)


def _build():
    ops = [define(name, ["X"], ["Y"], _relu_kernel if name == "Relu" else _pointwise(fn),
                  attrs=attrs, infer=infer_same, since_version=since)
           for name, (fn, attrs, since) in _POINTWISE.items()]
    ops += [
        define("PRelu", ["X", "slope"], ["Y"], _prelu_kernel, infer=infer_elementwise,
               since_version=16),
        define("Softmax", ["input"], ["output"], _softmax_kernel,
               attrs=[("axis", "int", -1)], infer=_infer_along_axis("Softmax"),
               since_version=13),
        define("LogSoftmax", ["input"], ["output"], _log_softmax_kernel,
               attrs=[("axis", "int", -1)], infer=_infer_along_axis("LogSoftmax"),
               since_version=13),
        define("Hardmax", ["input"], ["output"], _hardmax_kernel,
               attrs=[("axis", "int", -1)], infer=_infer_along_axis("Hardmax"),
               since_version=13),
    ]
    return tuple(sorted(ops, key=lambda op: op.name))


OPS = _build()

KNOWN_FAILURES: dict[str, str] = {}

"""Still more of TF1's tf.nn: batch normalisation (the formula and the fused op), the
moments helpers, the v2 softmax cross-entropy, the small layers and activations
(xw_plus_b, relu_layer, crelu, silu / swish), log_poisson_loss, zero_fraction, 1-D
and 3-D pools, tf.nn.pool, conv3d, tf.nn.convolution, conv2d's two backprops,
max_pool_with_argmax and the morphological dilation2d / erosion2d.

Names, argument order and defaults are TF1's (tf.compat.v1.nn); images keep TF's
channels-last layouts (NWC / NHWC / NDHWC) unless data_format says channels first, and
filters TF's (k..., in, out) layout. Each function is a few registered ONNX ops (Conv,
MaxPool, AveragePool, LogSoftmax, Where, Slice, ...), so graphs using them export, and
their gradients are TensorFlow's (where TF's differ from the formula's, as for the fused
batch norm's statistics or the cross-entropy's logits gradient with labels that do not
sum to 1, the graph is written so that og.gradients gives TF's). SAME padding is TF's:
the odd pixel goes after. Bad arguments are refused while building with a TypeError,
ValueError or ShapeError naming the function and the argument.
"""

from __future__ import annotations

import collections
import itertools

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..format import DType
from . import api
from . import api_extra
from . import debugging
from . import graph as _g
from .api import _axes, _bool_arg, _int_arg, _t
from .api_math import _floats
from .gradients import RegisterGradient, gradient_override_map
from .graph import Tensor
from .nn import _is_positive_int, _same_pads
from .nn_extra import conv2d_transpose
from .nn_ops import _keepdims, bias_add, check_valid_window

__all__ = ["MaxPoolWithArgmax", "avg_pool1d", "avg_pool3d", "batch_normalization",
           "conv2d_backprop_filter", "conv2d_backprop_input", "conv3d", "convolution",
           "crelu", "dilation2d", "erosion2d", "fused_batch_norm", "log_poisson_loss",
           "max_pool1d", "max_pool3d", "max_pool_with_argmax", "normalize_moments",
           "pool", "relu_layer", "silu", "softmax_cross_entropy_with_logits_v2",
           "sufficient_statistics", "swish", "weighted_moments", "xw_plus_b",
           "zero_fraction"]

_FLOATS = (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64)
_HALF = (DType.FLOAT16, DType.BFLOAT16)
_LAYOUTS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


# --------------------------------------------------------------------------- helpers

def _brief(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _alias(value, other, name: str, other_name: str, what: str):
    """TF1's deprecated_argument_lookup: one of two names for an argument.

    Raises:
        ValueError: both are given.
    """
    if value is not None and other is not None:
        raise ValueError(f"{what}: give {name} or {other_name}, not both")
    return value if value is not None else other


def _number(value, what: str) -> float:
    """A Python number argument.

    Raises:
        TypeError: value is not an int or float (bools refused).
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what} must be a number, got {type(value).__name__} "
                        f"{_brief(value)}")
    return float(value)


def _layout(data_format, n: int, what: str) -> bool:
    """Whether data_format is channels first, for n spatial dims (TF's NWC / NCW, NHWC /
    NCHW, NDHWC / NCDHW; None is the channels-last one).

    Raises:
        ValueError: it is none of the two.
    """
    last, first = _LAYOUTS[n]
    fmt = last if data_format is None else data_format
    if fmt not in (last, first):
        raise ValueError(f"{what}: data_format must be {last!r} or {first!r}, got "
                         f"{_brief(data_format)}")
    return fmt == first


def _sizes(values, n: int, first: bool, what: str, default=None) -> list:
    """TF's ksize / strides / dilations for n spatial dims (its _get_sequence): an int,
    or 1, n or n + 2 ints (the last form with 1 on the batch and channel axes).

    Raises:
        ValueError: another number of entries, or n + 2 entries moving along the batch
            or channel axis.
        TypeError: an entry is not a positive int.
    """
    if values is None:
        values = default
    if isinstance(values, np.ndarray):
        values = values.tolist()
    items = list(values) if isinstance(values, (list, tuple)) else [values]
    if len(items) == 1:
        items = items * n
    elif len(items) == n + 2:
        outer = (items[0], items[1]) if first else (items[0], items[-1])
        if any(not _is_positive_int(v) or v != 1 for v in outer):
            raise ValueError(f"{what}: {_brief(values)} must be 1 on the batch and channel "
                             "axes")
        items = items[2:] if first else items[1:-1]
    elif len(items) != n:
        raise ValueError(f"{what} must have 1, {n} or {n + 2} entries, got "
                         f"{_brief(values)}")
    if not all(_is_positive_int(v) for v in items):
        raise TypeError(f"{what} must be positive ints, got {_brief(values)}")
    return [int(v) for v in items]


def _input(x, rank: int, what: str, arg: str = "input") -> Tensor:
    """x as a tensor of the given rank (when known).

    Raises:
        ShapeError: its rank is another.
    """
    x = _t(x)
    if x.shape is not None and len(x.shape) != rank:
        raise ShapeError(f"{what}: {arg} must be {rank}-D, got shape {list(x.shape)}")
    return x


def _like(value, x: Tensor, what: str) -> Tensor:
    """value as a tensor of x's dtype: plain values converted, tensors checked.

    Raises:
        TypeError: a tensor of another dtype (names `what`).
    """
    t = _g.convert_to_tensor(value, x.dtype, x.graph)
    if t.dtype is not DType.UNDEFINED and x.dtype is not DType.UNDEFINED \
            and t.dtype != x.dtype:
        raise TypeError(f"{what} must be {x.dtype.short_name} like the input, got "
                        f"{t.dtype.short_name}")
    return t


def _first(x: Tensor, n: int, first: bool) -> Tensor:
    """x in the channels-first layout ONNX ops take."""
    return x if first else api.transpose(x, [0, n + 1] + list(range(1, n + 1)))


def _last(y: Tensor, n: int, first: bool, name) -> Tensor:
    """y back in the caller's layout (named)."""
    if first:
        return api.identity(y, name=name)
    return api.transpose(y, [0] + list(range(2, n + 2)) + [1], name=name)


def _spatial_sizes(xc: Tensor, n: int) -> list:
    return list(xc.shape[2:]) if xc.shape is not None else [None] * n


def _padding(padding, xc: Tensor, n: int, reach, steps, first: bool, what: str,
             explicit: bool = False) -> dict:
    """ONNX pads (or auto_pad) for TF's padding of a window op on channels-first xc:
    "SAME" (the odd pixel after), "VALID", or with `explicit` n + 2 [before, after]
    pairs in the data format's order.

    Raises:
        ValueError: padding is none of these, or an explicit pair pads the batch or
            channel axis.
        ShapeError: a VALID window is larger than the input.
    """
    if isinstance(padding, str) and padding.upper() in ("SAME", "VALID"):
        sizes = _spatial_sizes(xc, n)
        if padding.upper() == "VALID":
            check_valid_window(sizes, reach, what)
            return {}
        if None in sizes:
            return {"auto_pad": "SAME_UPPER"}
        return {"pads": _same_pads(sizes, reach, steps)}
    if explicit and isinstance(padding, (list, tuple)) and len(padding) == n + 2:
        pairs = [list(p) if isinstance(p, (list, tuple)) else None for p in padding]
        if all(p is not None and len(p) == 2 and all(
                isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                and v >= 0 for v in p) for p in pairs):
            outer = (pairs[0], pairs[1]) if first else (pairs[0], pairs[-1])
            if any(p != [0, 0] for p in outer):
                raise ValueError(f"{what}: padding {_brief(padding)} must be [0, 0] on the "
                                 "batch and channel axes")
            inner = pairs[2:] if first else pairs[1:-1]
            return {"pads": [int(p[0]) for p in inner] + [int(p[1]) for p in inner]}
    allowed = "'SAME' or 'VALID'" if not explicit else \
        f"'SAME', 'VALID' or {n + 2} [before, after] pairs"
    raise ValueError(f"{what}: padding must be {allowed}, got {_brief(padding)}")


def _same_at_run_time(xc: Tensor, attrs: dict, n: int, reach, steps) -> Tensor:
    """xc padded by TF's SAME amounts from its run-time shape where a dilated window
    waits for the image size (auto_pad SAME_UPPER, which onnxruntime refuses with
    dilations); the auto_pad is then dropped from attrs. Otherwise xc itself.

    The padding is a static one of reach - 1 on both sides (so it has a gradient)
    then a Slice of the run-time SAME amounts out of it."""
    if attrs.get("auto_pad") != "SAME_UPPER" or list(reach) == list(attrs["kernel_shape"]):
        return xc
    del attrs["auto_pad"]
    g = xc.graph

    def ints(v):
        return g.constant(np.asarray(v, np.int64))

    size = g.op("Shape", [xc], {"start": 2})
    step = ints(steps)
    out = g.op("Div", [size + step - 1, step])        # ceil(in / stride), integers
    total = api.maximum((out - 1) * step + ints(reach) - size, ints([0] * n))
    before = g.op("Div", [total, ints([2] * n)])
    most = [r - 1 for r in reach]                     # total never exceeds it
    padded = api.pad(xc, [[0, 0], [0, 0]] + [[m, m] for m in most])
    start = ints(most) - before
    return g.op("Slice", [padded, start, start + size + total,
                          ints(list(range(2, n + 2)))])


def _broadcasts(a, b) -> bool:
    """Whether two static shapes broadcast (unknown dims fit anything)."""
    return all(p is None or q is None or p == q or p == 1 or q == 1
               for p, q in zip(reversed(tuple(a)), reversed(tuple(b))))


def _static_ints(value, count: int, what: str) -> list:
    """A size vector known while building: ints, or a tensor with a static value.

    Raises:
        TypeError: it is neither, or holds a non-int.
        ShapeError: it has another number of entries, or is a tensor whose value is
            known only at run time.
    """
    if _g._is_symbolic(value):
        t = _t(value)
        known = t.graph.static_value(t)
        if known is None:
            raise ShapeError(f"{what} must be known while building (a list of ints or a "
                             "constant)")
        value = np.asarray(known).reshape(-1).tolist()
    if isinstance(value, np.ndarray):
        value = value.reshape(-1).tolist()
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{what} must be a list of {count} ints, got {_brief(value)}")
    if len(value) != count:
        raise ShapeError(f"{what} must have {count} entries, got {len(value)}")
    return [_int_arg(v, what) for v in value]


def _rename_errors(what: str, build, words=()):
    """build(), its argument errors re-raised under `what`'s name (an alias built on
    another function), with (old, new) word replacements in the message."""
    try:
        return build()
    except (TypeError, ValueError, ShapeError) as e:
        text = str(e)
        for old, new in words:
            text = text.replace(old, new)
        if not text.startswith(what):
            text = f"{what}: {text}"
        raise type(e)(text) from None


# --------------------------------------------------------------------------- batch norm

def batch_normalization(x, mean, variance, offset, scale, variance_epsilon,
                        name=None) -> Tensor:
    """TF1's tf.nn.batch_normalization: scale * (x - mean) / sqrt(variance + epsilon)
    + offset, written as TF writes it (inv = rsqrt(variance + epsilon) * scale;
    x * inv + (offset - mean * inv)) so values and gradients are TF's. mean, variance,
    offset and scale broadcast against x: 1-D over the last axis, or of x's rank with
    1 on the normalised axes (tf.nn.moments(..., keepdims=True)). offset and scale may
    be None. Their dtype may differ from a float16 x (the result is cast to x's).

    Raises:
        TypeError: x is not a float tensor, a statistic is not a float tensor or they
            are not of one dtype, or variance_epsilon is not a number or tensor.
        ShapeError: a statistic does not broadcast against x.
    """
    what = "batch_normalization"
    x = _floats(_t(x), f"{what}: x")
    g = x.graph
    stats = {}
    for key, value in (("mean", mean), ("variance", variance), ("offset", offset),
                       ("scale", scale)):
        if value is None:
            if key in ("mean", "variance"):
                raise TypeError(f"{what}: {key} must be a tensor, got None")
            stats[key] = None
            continue
        t = _t(value) if _g._is_symbolic(value) else _g.convert_to_tensor(value, x.dtype, g)
        _floats(t, f"{what}: {key}")
        if t.shape is not None and x.shape is not None and not _broadcasts(t.shape, x.shape):
            raise ShapeError(f"{what}: {key} of shape {list(t.shape)} does not broadcast "
                             f"against x of shape {list(x.shape)}")
        stats[key] = t
    dtypes = {t.dtype for t in stats.values() if t is not None}
    if len(dtypes) > 1:
        raise TypeError(f"{what}: mean, variance, offset and scale must have one dtype, got "
                        + ", ".join(f"{k} {t.dtype.short_name}" for k, t in stats.items()
                                    if t is not None))
    if not _g._is_symbolic(variance_epsilon):
        _number(variance_epsilon, f"{what}: variance_epsilon")
    with g.name_scope(name or "batchnorm"):
        inv = api.rsqrt(stats["variance"] + variance_epsilon)
        if stats["scale"] is not None:
            inv = inv * stats["scale"]
        shift = -(stats["mean"] * inv) if stats["offset"] is None \
            else stats["offset"] - stats["mean"] * inv
        return api.add(x * api.cast(inv, x.dtype), api.cast(shift, x.dtype), name="value")


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None,
                     exponential_avg_factor=1.0) -> tuple:
    """TF1's tf.nn.fused_batch_norm on a 4-D (NHWC / NCHW) or 5-D (NDHWC / NCDHW) x,
    with 1-D scale and offset over the channels. Returns (y, mean, variance):

    - is_training=True: y is x normalised by the batch's mean and biased variance over
      every axis but the channels; the returned mean is the batch mean and the returned
      variance the batch variance with Bessel's correction (times n / (n - 1), n the
      count per channel), as TF's kernel gives them. With exponential_avg_factor f != 1
      they are (1 - f) * mean + f * batch statistic, mean and variance being the
      running averages passed in.
    - is_training=False: y uses the mean and variance passed in, which are returned
      as they are.

    As in TF, gradients flow into x, scale and offset through y only: none through the
    returned statistics, and none into mean or variance. A float16 x is normalised in
    float32 (scale, offset, mean and variance are float32, as TF's), y cast back.

    Raises:
        ValueError: mean or variance is missing when is_training is False or
            exponential_avg_factor != 1, or data_format is not one of the four.
        TypeError: is_training is not a bool, epsilon or exponential_avg_factor not a
            number, or a tensor's dtype does not fit.
        ShapeError: x is not 4-D / 5-D as data_format says, or scale, offset, mean or
            variance is not 1-D with one value per channel.
    """
    what = "fused_batch_norm"
    is_training = _bool_arg(is_training, f"{what}: is_training")
    epsilon = _number(epsilon, f"{what}: epsilon")
    factor = _number(exponential_avg_factor, f"{what}: exponential_avg_factor")
    if (not is_training or factor != 1.0) and (mean is None or variance is None):
        raise ValueError(f"{what}: mean and variance must both be 1-D tensors when "
                         "is_training is False or exponential_avg_factor != 1")
    formats = {"NHWC": (4, False), "NCHW": (4, True), "NDHWC": (5, False),
               "NCDHW": (5, True)}
    if data_format not in formats:
        raise ValueError(f"{what}: data_format must be 'NHWC', 'NCHW', 'NDHWC' or 'NCDHW', "
                         f"got {_brief(data_format)}")
    rank, first = formats[data_format]
    x = _floats(_input(x, rank, what, "x"), f"{what}: x")
    g = x.graph
    compute = DType.FLOAT32 if x.dtype in _HALF else x.dtype
    axis = 1 if first else rank - 1
    channels = x.shape[axis] if x.shape is not None else None
    params = {}
    for key, value in (("scale", scale), ("offset", offset), ("mean", mean),
                       ("variance", variance)):
        if value is None:
            continue
        t = _g.convert_to_tensor(value, compute, g)
        if t.dtype != compute:
            raise TypeError(f"{what}: {key} must be {compute.short_name}, got "
                            f"{t.dtype.short_name}")
        if t.shape is not None and (len(t.shape) != 1 or None not in (t.shape[0], channels)
                                    and t.shape[0] != channels):
            raise ShapeError(f"{what}: {key} must be 1-D with one value per channel "
                             f"({channels}), got shape {list(t.shape)}")
        params[key] = t
    view = [-1] + [1] * (rank - 2) if first else [-1]   # the (C,) vectors against x

    def spread(t):
        return api.reshape(t, view) if first else t

    axes = [a for a in range(rank) if a != axis]
    with g.name_scope(name or "FusedBatchNorm"):
        xc = api.cast(x, compute)
        if is_training:
            batch_mean = api.reduce_mean(xc, axes, keepdims=True)
            centered = xc - batch_mean
            batch_var = api.reduce_mean(api.square(centered), axes, keepdims=True)
            # the returned statistics take no gradient, as TF's FusedBatchNormGrad
            flat_mean = api.reshape(api.stop_gradient(batch_mean), [-1])
            count = _count(xc, axes, compute)
            flat_var = api.reshape(api.stop_gradient(batch_var), [-1]) * (
                count / api.maximum(count - 1.0, 1.0))
            if factor != 1.0:
                keep = 1.0 - factor
                flat_mean = api.stop_gradient(params["mean"]) * keep + flat_mean * factor
                flat_var = api.stop_gradient(params["variance"]) * keep + flat_var * factor
        else:
            flat_mean = api.stop_gradient(params["mean"])
            flat_var = api.stop_gradient(params["variance"])
            centered = xc - spread(flat_mean)
            batch_var = spread(flat_var)
        inv = api.rsqrt(batch_var + epsilon) * spread(params["scale"])
        y = api.add(centered * inv, spread(params["offset"]))
        return (api.cast(y, x.dtype, name="y") if x.dtype != compute
                else api.identity(y, name="y"),
                api.identity(flat_mean, name="mean"), api.identity(flat_var, name="variance"))


def _count(x: Tensor, axes: list, dtype: DType) -> Tensor:
    """The number of elements x has over `axes`, as a scalar of `dtype`: a constant
    when those dims are known while building, else from the run-time shape."""
    g = x.graph
    dims = [x.shape[a] for a in axes] if x.shape is not None else [None]
    if None not in dims:
        return g.constant(np.asarray(np.prod(dims, dtype=np.int64), dtype.numpy))
    picked = api.gather(g.op("Shape", [x]), g.constant(np.asarray(axes, np.int64)))
    return api.cast(api.reduce_prod(picked), dtype)


# --------------------------------------------------------------------------- moments

def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None,
                          keepdims=None) -> tuple:
    """TF1's tf.nn.sufficient_statistics: (count, sum of x - shift, sum of (x -
    shift)^2, shift) over `axes` (the sums of x and x^2 when shift is None, and None
    as the fourth value). count is x's dtype: a constant when the dims are known while
    building, else computed from the run-time shape. keep_dims is the old name of
    keepdims.

    Raises:
        TypeError: axes is not an int or a list of ints, keepdims not a bool, or x not
            a numeric tensor.
        ValueError: keep_dims and keepdims are both given.
        ShapeError: an axis is out of range.
    """
    what = "sufficient_statistics"
    keep = _keepdims(keep_dims, keepdims, what)
    x = _t(x)
    if x.dtype.numpy.kind not in "iuf":
        raise TypeError(f"{what}: x must be a numeric tensor, got {x.dtype.short_name}")
    axes = _unique_axes(axes, x, what)
    g = x.graph
    with g.name_scope(name or "sufficient_statistics"):
        counts = _count(x, axes, x.dtype)
        if shift is not None:
            shift = _like(shift, x, f"{what}: shift")
            m_ss = x - shift
            v_ss = api.square(x - shift)
        else:
            m_ss = x
            v_ss = api.square(x)
        m_ss = api.reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = api.reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


def _unique_axes(axes, x: Tensor, what: str) -> list:
    """axes as distinct non-negative ints (TF's set of them).

    Raises:
        TypeError: axes is not an int or a list of ints.
        ShapeError: x's rank is unknown, or an axis is out of range.
    """
    items = _axes(axes, f"{what}: axes")
    if x.shape is None:
        raise ShapeError(f"{what}: the rank of x must be known while building")
    r = len(x.shape)
    for a in items:
        if not -r <= a < r:
            raise ShapeError(f"{what}: axis {a} is out of range for x of shape "
                             f"{list(x.shape)}")
    return sorted({a % r for a in items})


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None) -> tuple:
    """TF1's tf.nn.normalize_moments: (mean, variance) from sufficient statistics:
    mean = mean_ss / counts (+ shift), variance = variance_ss / counts - (mean_ss /
    counts)^2. shift may be None.

    Raises:
        TypeError: mean_ss is not a float tensor, or another argument's dtype differs.
    """
    what = "normalize_moments"
    m = _floats(_t(mean_ss), f"{what}: mean_ss")
    v = _like(variance_ss, m, f"{what}: variance_ss")
    c = _like(counts, m, f"{what}: counts")
    g = m.graph
    with g.name_scope(name or "normalize"):
        divisor = api.reciprocal(c, name="divisor")
        shifted_mean = api.multiply(m, divisor, name="shifted_mean")
        mean = shifted_mean if shift is None else api.add(
            shifted_mean, _like(shift, m, f"{what}: shift"), name="mean")
        variance = api.subtract(v * divisor, api.square(shifted_mean), name="variance")
    return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None,
                     keepdims=None) -> tuple:
    """TF1's tf.nn.weighted_moments: the frequency-weighted mean and variance of x over
    `axes`, weights broadcasting against x: mean = sum(w x) / sum(w), variance =
    sum(w (x - mean)^2) / sum(w), each 0 where the weights sum to 0 (TF's div_no_nan,
    gradients too). float16 is computed in float32.

    Raises:
        TypeError: x is not a float tensor, axes not an int or a list of ints, or
            keepdims not a bool.
        ValueError: keep_dims and keepdims are both given.
        ShapeError: an axis is out of range, or the weights do not broadcast.
    """
    what = "weighted_moments"
    keep = _keepdims(keep_dims, keepdims, what)
    x = _floats(_t(x), f"{what}: x")
    axes = _unique_axes(axes, x, what)
    g = x.graph
    w = _t(frequency_weights) if _g._is_symbolic(frequency_weights) \
        else _g.convert_to_tensor(frequency_weights, x.dtype, g)
    if w.shape is not None and not _broadcasts(w.shape, x.shape):
        raise ShapeError(f"{what}: frequency_weights of shape {list(w.shape)} do not "
                         f"broadcast against x of shape {list(x.shape)}")
    with g.name_scope(name or "weighted_moments"):
        xc = api.cast(x, DType.FLOAT32) if x.dtype == DType.FLOAT16 else x
        w = api.cast(w, xc.dtype)
        total = api.reduce_sum(w * xc, axes, keepdims=True)
        weights = api.reduce_sum(w + api.zeros_like(xc), axes, keepdims=True)
        mean = _div_no_nan(total, weights)
        spread = api.reduce_sum(w * api.square(xc - mean), axes, keepdims=True)
        variance = _div_no_nan(spread, weights)
        if not keep:
            mean = api.squeeze(mean, axes)
            variance = api.squeeze(variance, axes)
        if x.dtype == DType.FLOAT16:
            mean, variance = api.cast(mean, x.dtype), api.cast(variance, x.dtype)
    return mean, variance


def _div_no_nan(a: Tensor, b: Tensor) -> Tensor:
    """a / b, 0 where b is 0 (tf.math.div_no_nan, whose gradients are 0 there too)."""
    zero = api.equal(b, api.zeros_like(b))
    safe = api.where(zero, api.ones_like(b), b)
    return api.where(zero, api.zeros_like(a * safe), a / safe)


# --------------------------------------------------------------------------- losses

def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None,
                                         dim=None) -> Tensor:
    """TF1's tf.nn.softmax_cross_entropy_with_logits_v2: -sum(labels *
    log_softmax(logits)) along `axis` (default the last; `dim` is its old name).
    Gradients flow into both logits and labels, and are TF's: logits get
    softmax - labels (TF's kernel leaves out the sum of a label row that is not 1) and
    labels -log_softmax(logits). labels are cast to logits' dtype; float16 logits are
    computed in float32 and the loss cast back.

    Raises:
        TypeError: labels or logits is missing, logits are not floats, or axis is not
            an int.
        ValueError: axis and dim are both given.
        ShapeError: axis is out of range, or labels' and logits' shapes differ.
    """
    what = "softmax_cross_entropy_with_logits_v2"
    axis = _alias(axis, dim, "axis", "dim", what)
    axis = -1 if axis is None else _int_arg(axis, f"{what}: axis")
    if labels is None or logits is None:
        raise TypeError(f"{what} needs labels and logits")
    lg = _floats(_t(logits), f"{what}: logits")
    g = lg.graph
    lab = _t(labels) if _g._is_symbolic(labels) else _g.convert_to_tensor(labels, lg.dtype, g)
    if lg.shape is not None:
        r = len(lg.shape)
        if not -r <= axis < r:
            raise ShapeError(f"{what}: axis {axis} is out of range for logits of shape "
                             f"{list(lg.shape)}")
        if lab.shape is not None and (len(lab.shape) != r or any(
                a is not None and b is not None and a != b
                for a, b in zip(lab.shape, lg.shape))):
            raise ShapeError(f"{what}: labels of shape {list(lab.shape)} and logits of "
                             f"shape {list(lg.shape)} must have the same shape")
    compute = DType.FLOAT32 if lg.dtype in _HALF else lg.dtype
    with g.name_scope(name or "softmax_cross_entropy_with_logits"):
        x = api.cast(lg, compute)
        z = api.cast(lab, compute)
        log_p = g.op("LogSoftmax", [x], {"axis": axis})
        loss = -api.reduce_sum(z * log_p, axis)
        # the formula's logits gradient is sum(z) softmax - z; TF's kernel gives
        # softmax - z. The correction (sum(z) - 1) logsumexp(x), less itself held
        # constant, is exactly 0 but takes (sum(z) - 1) softmax off the gradient.
        extra = api.stop_gradient(api.reduce_sum(z, axis) - 1.0) * \
            api.reduce_logsumexp(x, axis)
        loss = loss - (extra - api.stop_gradient(extra))
        return api.cast(loss, lg.dtype, name="value") if compute != lg.dtype \
            else api.identity(loss, name="value")


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None) -> Tensor:
    """TF1's tf.nn.log_poisson_loss: exp(c) - z c for log_input c and targets z; with
    compute_full_loss, plus Stirling's approximation of log(z!), z log z - z +
    0.5 log(2 pi z), where z > 1 (0 for 0 <= z <= 1), as TF computes it.

    Raises:
        TypeError: log_input is not a float tensor, targets of another dtype, or
            compute_full_loss not a bool.
        ShapeError: their static shapes differ.
    """
    what = "log_poisson_loss"
    full = _bool_arg(compute_full_loss, f"{what}: compute_full_loss")
    c = _floats(_t(log_input), f"{what}: log_input")
    z = _like(targets, c, f"{what}: targets")
    if c.shape is not None and z.shape is not None and (len(c.shape) != len(z.shape) or any(
            a is not None and b is not None and a != b for a, b in zip(c.shape, z.shape))):
        raise ShapeError(f"{what}: log_input of shape {list(c.shape)} and targets of shape "
                         f"{list(z.shape)} must have the same shape")
    g = c.graph
    with g.name_scope(name or "log_poisson_loss"):
        result = api.exp(c) - c * z
        if full:
            stirling = z * api.log(z) - z + 0.5 * api.log(2 * np.pi * z)
            small = api.logical_and(api.greater_equal(z, 0.0), api.less_equal(z, 1.0))
            result = result + api.where(small, api.zeros_like(z), stirling)
        return api.identity(result, name="value")


def zero_fraction(value, name=None) -> Tensor:
    """TF1's tf.nn.zero_fraction: the fraction of value's elements that are 0 (False
    for bools), a float32 scalar; NaN for an empty value.

    Raises:
        TypeError: value is a string tensor.
    """
    x = _t(value)
    if x.dtype.numpy.kind not in "biuf":
        raise TypeError(f"zero_fraction: value must be numeric or bool, got "
                        f"{x.dtype.short_name}")
    g = x.graph
    with g.name_scope(name or "zero_fraction"):
        zero = api.logical_not(x) if x.dtype == DType.BOOL else api.equal(x, api.zeros_like(x))
        zeros = api.reduce_sum(api.cast(zero, DType.FLOAT32))
        size = api.cast(g.op("Size", [x]), DType.FLOAT32)
        return api.divide(zeros, size, name="fraction")


# --------------------------------------------------------------------------- layers

def xw_plus_b(x, weights, biases, name=None) -> Tensor:
    """TF1's tf.nn.xw_plus_b: matmul(x, weights) + biases, x (batch, in), weights (in,
    out), biases (out,).

    Raises:
        ShapeError: x or weights is not 2-D, their inner sizes differ, or biases is not
            1-D of out values.
        TypeError: weights or biases is not of x's dtype.
    """
    what = "xw_plus_b"
    x = _input(x, 2, what, "x")
    w = _input(_like(weights, x, f"{what}: weights"), 2, what, "weights")
    b = _like(biases, x, f"{what}: biases")
    if x.shape is not None and w.shape is not None and None not in (x.shape[1], w.shape[0]) \
            and x.shape[1] != w.shape[0]:
        raise ShapeError(f"{what}: x of shape {list(x.shape)} and weights of shape "
                         f"{list(w.shape)} do not multiply")
    if b.shape is not None and (len(b.shape) != 1 or (
            w.shape is not None and None not in (b.shape[0], w.shape[1])
            and b.shape[0] != w.shape[1])):
        raise ShapeError(f"{what}: biases must be 1-D with one value per output "
                         f"({None if w.shape is None else w.shape[1]}), got shape "
                         f"{list(b.shape)}")
    return bias_add(api.matmul(x, w), b, name=name)


def relu_layer(x, weights, biases, name=None) -> Tensor:
    """TF1's tf.nn.relu_layer: relu(matmul(x, weights) + biases).

    Raises:
        as xw_plus_b (named relu_layer).
    """
    y = _rename_errors("relu_layer", lambda: xw_plus_b(x, weights, biases),
                       [("xw_plus_b", "relu_layer")])
    return api.relu(y, name=name)


def crelu(features, name=None, axis=-1) -> Tensor:
    """TF1's tf.nn.crelu: relu(concat([x, -x], axis)), twice the size along axis.

    Raises:
        TypeError: axis is not an int, or features are not numeric.
        ShapeError: axis is out of range.
    """
    axis = _int_arg(axis, "crelu: axis")
    x = _t(features)
    if x.dtype.numpy.kind not in "if":
        raise TypeError(f"crelu: features must be a numeric tensor, got {x.dtype.short_name}")
    if x.shape is not None and not -len(x.shape) <= axis < len(x.shape):
        raise ShapeError(f"crelu: axis {axis} is out of range for features of shape "
                         f"{list(x.shape)}")
    return api.relu(api.concat([x, -x], axis), name=name)


def silu(features, beta=1.0) -> Tensor:
    """TF's tf.nn.silu / tf.nn.swish: x * sigmoid(beta * x); beta is a number or a
    scalar tensor, and takes a gradient too (TF1's signature has no name).

    Raises:
        TypeError: features are not floats, or beta is not a number or tensor.
    """
    x = _floats(_t(features), "silu: features")
    if _g._is_symbolic(beta):
        b = api.cast(_t(beta), x.dtype)
    else:
        b = x.graph.constant(np.asarray(_number(beta, "silu: beta"), x.dtype.numpy))
    return api.multiply(x, api.sigmoid(b * x))


swish = silu


# --------------------------------------------------------------------------- pools

def _pool(op_type, what, n, input, ksize, strides, padding, data_format,  # noqa: A002
          name, explicit=False, dilations=None) -> Tensor:
    first = _layout(data_format, n, what)
    x = _input(input, n + 2, what)
    kernel = _sizes(ksize, n, first, f"{what}: ksize")
    steps = _sizes(strides, n, first, f"{what}: strides")
    rates = [1] * n if dilations is None else dilations
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, rates)]
    xc = _first(x, n, first)
    attrs = {"kernel_shape": kernel, "strides": steps}
    if any(d > 1 for d in rates):
        attrs["dilations"] = rates
    attrs.update(_padding(padding, xc, n, reach, steps, first, what, explicit))
    g = x.graph
    if op_type == "MaxPool" and n == 3:   # TF's MaxPool3DGrad: every tied maximum
        with gradient_override_map({"MaxPool": _ALL_TIES}, graph=g):
            y = g.op(op_type, [xc], attrs)
    else:
        y = g.op(op_type, [xc], attrs)
    return _last(y, n, first, name)


_ALL_TIES = "onegraph.nn_more.MaxPool3DGrad"


def _max_pool_all_ties(b, op, grads):
    """The gradient of a MaxPool as TF's CPU MaxPool3DGrad computes it: each window's
    gradient goes to every input equal to the window's maximum (ties included; the 2-D
    MaxPoolGrad and the ONNX rule give it to the first one only). A sum over the
    window's taps of dy where the tap holds the maximum, each slid back into place."""
    dy = grads[0]
    if dy is None:
        return [None]
    x, y = op.inputs[0], op.outputs[0]
    attrs = op.attrs
    kernel = [int(k) for k in attrs["kernel_shape"]]
    n = len(kernel)
    steps = [int(v) for v in (attrs.get("strides") or [1] * n)]
    rates = [int(v) for v in (attrs.get("dilations") or [1] * n)]
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, rates)]
    most = [r - 1 for r in reach]

    def ints(v):
        return b.constant(np.asarray(list(v), np.int64))

    size = b.op("Shape", [x], {"start": 2})
    out = b.op("Shape", [y], {"start": 2})
    if attrs.get("pads"):
        before = ints(int(p) for p in attrs["pads"][:n])
    elif attrs.get("auto_pad") == "SAME_UPPER":   # TF's SAME from the run-time sizes
        total = b.op("Max", [b.op("Sub", [b.op("Add", [b.op("Mul", [b.op(
            "Sub", [out, ints([1] * n)]), ints(steps)]), ints(reach)]), size]),
            ints([0] * n)])
        before = b.op("Div", [total, ints([2] * n)])
    else:
        before = ints([0] * n)
    lowest = b.constant(np.asarray(-np.inf, y.dtype.numpy))
    # x padded by the most any padding can be, so that every tap is a plain slice
    padded = b.op("Pad", [x, ints([0, 0] + most + [0, 0] + most), lowest])
    offset = b.op("Sub", [ints(most), before])
    axes, step = ints(range(2, n + 2)), ints(steps)
    span = b.op("Add", [b.op("Mul", [b.op("Sub", [out, ints([1] * n)]), step]), ints([1] * n)])
    zeros = b.op("ZerosLike", [dy])
    total_grad = None
    for tap in itertools.product(*[range(k) for k in kernel]):
        start = b.op("Add", [offset, ints(t * d for t, d in zip(tap, rates))])
        end = b.op("Add", [start, span])
        window = b.op("Slice", [padded, start, end, axes, step])
        picked = b.op("Where", [b.op("Equal", [window, y]), dy, zeros])
        part = b.op("SliceGrad", [picked, padded, start, end, axes, step])
        total_grad = part if total_grad is None else b.op("Add", [total_grad, part])
    return [b.op("Slice", [total_grad, ints(most), b.op("Add", [ints(most), size]), axes])]


try:
    RegisterGradient(_ALL_TIES)(_max_pool_all_ties)
except OneGraphError:   # registered already (the module imported again)
    pass


def max_pool1d(input, ksize, strides, padding, data_format="NWC",  # noqa: A002
               name=None) -> Tensor:
    """TF's tf.nn.max_pool1d: the maximum over ksize windows of a 3-D input (NWC, or
    NCW) moved by strides (an int, or 1 or 3 of them); SAME, VALID or explicit
    [[0, 0], [left, right], [0, 0]] padding (padding never wins).

    Raises:
        ShapeError: input is not 3-D, or a VALID window is wider than it.
        TypeError / ValueError: ksize, strides, padding or data_format is malformed.
    """
    return _pool("MaxPool", "max_pool1d", 1, input, ksize, strides, padding, data_format,
                 name, explicit=True)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC",  # noqa: A002
               name=None) -> Tensor:
    """TF's tf.nn.avg_pool1d: the mean over ksize windows of a 3-D input (NWC, or
    NCW), padding left out of the count; SAME or VALID.

    Raises:
        ShapeError: input is not 3-D, or a VALID window is wider than it.
        TypeError / ValueError: ksize, strides, padding or data_format is malformed.
    """
    return _pool("AveragePool", "avg_pool1d", 1, input, ksize, strides, padding,
                 data_format, name)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC",  # noqa: A002
               name=None) -> Tensor:
    """TF's tf.nn.max_pool3d: the maximum over ksize windows of a 5-D input (NDHWC, or
    NCDHW); ksize and strides an int, 3 ints or TF's 5-entry form; SAME or VALID.

    Raises:
        ShapeError: input is not 5-D, or a VALID window is larger than it.
        TypeError / ValueError: ksize, strides, padding or data_format is malformed.
    """
    return _pool("MaxPool", "max_pool3d", 3, input, ksize, strides, padding, data_format,
                 name)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC",  # noqa: A002
               name=None) -> Tensor:
    """TF's tf.nn.avg_pool3d: the mean over ksize windows of a 5-D input (NDHWC, or
    NCDHW), padding left out of the count; arguments as max_pool3d.

    Raises:
        ShapeError: input is not 5-D, or a VALID window is larger than it.
        TypeError / ValueError: ksize, strides, padding or data_format is malformed.
    """
    return _pool("AveragePool", "avg_pool3d", 3, input, ksize, strides, padding,
                 data_format, name)


def pool(input, window_shape, pooling_type, padding, dilation_rate=None,  # noqa: A002
         strides=None, name=None, data_format=None, dilations=None) -> Tensor:
    """TF1's tf.nn.pool: "MAX" or "AVG" pooling over 1 to 3 spatial dims (as many as
    window_shape has), input channels-last unless data_format starts with "NC"
    (NCW / NCHW / NCDHW). strides and dilation_rate (or its new name dilations) are N
    ints, default 1; as in TF, dilation needs VALID padding and unit strides, and
    strides may not exceed the window. Padding never counts in an average.

    Raises:
        ValueError: pooling_type, padding, window_shape's length, data_format or the
            strides / dilation combination is one TF refuses.
        TypeError: window_shape, strides or dilation_rate holds a non-positive int.
        ShapeError: input is not of rank N + 2, or a VALID window is larger than it.
    """
    what = "pool"
    rate = _alias(dilation_rate, dilations, "dilation_rate", "dilations", what)
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"{what}: pooling_type must be 'MAX' or 'AVG', got "
                         f"{_brief(pooling_type)}")
    if not isinstance(window_shape, (list, tuple, np.ndarray)) or not 1 <= len(window_shape) <= 3:
        raise ValueError(f"{what}: window_shape must be a list of 1, 2 or 3 ints, got "
                         f"{_brief(window_shape)}")
    n = len(window_shape)
    kernel = _exact(window_shape, n, f"{what}: window_shape")
    rates = _exact(rate, n, f"{what}: dilation_rate")
    steps = _exact(strides, n, f"{what}: strides")
    if any(s > 1 for s in steps) and any(r > 1 for r in rates):
        raise ValueError(f"{what}: strides {steps} > 1 cannot go with dilation_rate "
                         f"{rates} > 1")
    if padding == "SAME" and any(r > 1 for r in rates):
        raise ValueError(f"{what}: SAME padding is not implemented for dilation_rate "
                         f"{rates} > 1")
    if any(s > k for s, k in zip(steps, kernel)):
        raise ValueError(f"{what}: strides {steps} larger than window_shape {kernel} are "
                         "not supported (as in TF)")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got "
                         f"{_brief(padding)}")
    first = isinstance(data_format, str) and data_format.startswith("NC")
    if data_format is not None:
        _layout(data_format, n, what)
    return _pool("MaxPool" if pooling_type == "MAX" else "AveragePool", what, n, input,
                 kernel, steps, padding, _LAYOUTS[n][1] if first else _LAYOUTS[n][0],
                 name, dilations=rates)


def _exact(values, n: int, what: str) -> list:
    """N positive ints (TF's strides / dilation_rate of tf.nn.pool and
    tf.nn.convolution); None is all 1.

    Raises:
        ValueError: not n of them.
        TypeError: one is not a positive int.
    """
    if values is None:
        return [1] * n
    items = list(values) if isinstance(values, (list, tuple, np.ndarray)) else [values]
    if len(items) != n:
        raise ValueError(f"{what} must have {n} entries, got {_brief(values)}")
    if not all(_is_positive_int(v) for v in items):
        raise TypeError(f"{what} must be positive ints, got {_brief(values)}")
    return [int(v) for v in items]


class MaxPoolWithArgmax(collections.namedtuple("MaxPoolWithArgmax", ["output", "argmax"])):
    """max_pool_with_argmax's (output, argmax), as TF's namedtuple."""

    __slots__ = ()


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC",  # noqa: A002
                         Targmax=None, name=None, output_dtype=None,  # noqa: N803 - TF's
                         include_batch_in_index=False) -> MaxPoolWithArgmax:
    """TF1's tf.nn.max_pool_with_argmax on an NHWC input: (output, argmax), the max
    pool and, for each output, where its maximum is in the input as TF flattens it:
    (y * width + x) * channels + c, plus batch * height * width * channels with
    include_batch_in_index. Ties go to the first maximum in the window (row-major),
    as TF's CPU kernel; argmax is int64 unless Targmax (or its new name output_dtype)
    is int32. The gradient flows to the maxima.

    Raises:
        ValueError: data_format is not "NHWC", Targmax and output_dtype are both
            given, or padding is not SAME/VALID.
        TypeError: Targmax is not int32/int64, include_batch_in_index not a bool, or
            ksize / strides malformed.
        ShapeError: input is not 4-D, or a VALID window is larger than it.
    """
    what = "max_pool_with_argmax"
    if data_format != "NHWC":
        raise ValueError(f"{what}: data_format must be 'NHWC', got {_brief(data_format)}")
    dtype = _alias(Targmax, output_dtype, "Targmax", "output_dtype", what)
    dtype = DType.INT64 if dtype is None else _g.as_dtype(dtype)
    if dtype not in (DType.INT32, DType.INT64):
        raise TypeError(f"{what}: Targmax must be int32 or int64, got {dtype.short_name}")
    include = _bool_arg(include_batch_in_index, f"{what}: include_batch_in_index")
    x = _input(input, 4, what)
    kernel = _sizes(ksize, 2, False, f"{what}: ksize")
    steps = _sizes(strides, 2, False, f"{what}: strides")
    g = x.graph
    xc = _first(x, 2, False)
    attrs = {"kernel_shape": kernel, "strides": steps}
    attrs.update(_padding(padding, xc, 2, kernel, steps, False, what))
    with g.name_scope(name or "MaxPoolWithArgmax"):
        out, flat = g.op("MaxPool", [xc], attrs, num_outputs=2)
        # ONNX's index runs over NCHW: ((n * C + c) * H + y) * W + x
        def dim(k):   # of x, NHWC
            return g.op("Shape", [x], {"start": k, "end": k + 1})

        area = dim(1) * dim(2)
        channels = dim(3)
        plane = g.op("Mod", [flat, area])            # y * W + x
        outer = g.op("Div", [flat, area])            # n * C + c (integers)
        c = g.op("Mod", [outer, channels])
        index = plane * channels + c
        if include:
            index = index + g.op("Div", [outer, channels]) * area * channels
        index = api.cast(_last(index, 2, False, None), dtype, name="argmax")
        return MaxPoolWithArgmax(_last(out, 2, False, "output"), index)


# --------------------------------------------------------------------------- convs

def _conv(what, n, input, filter, steps, rates, padding, first, name) -> Tensor:  # noqa: A002
    """The N-D convolution of input (channels-first when `first`) with a TF filter
    (k..., in, out) as an ONNX Conv (grouped when the input has a multiple of `in`
    channels)."""
    x = _input(input, n + 2, what)
    w = _like(filter, x, f"{what}: filter")
    if w.shape is None or len(w.shape) != n + 2 or None in w.shape:
        raise ShapeError(f"{what}: filter must be {n + 2}-D (k..., in, out) with known dims, "
                         f"got shape {None if w.shape is None else list(w.shape)}")
    kernel, c_in = list(w.shape[:n]), w.shape[n]
    xc = _first(x, n, first)
    channels = xc.shape[1] if xc.shape is not None else None
    if channels is not None and channels % c_in:
        raise ShapeError(f"{what}: input has {channels} channels but filter "
                         f"{list(w.shape)} takes {c_in}")
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, rates)]
    attrs = {"kernel_shape": kernel, "strides": steps, "dilations": rates,
             "group": 1 if channels is None else channels // c_in}
    attrs.update(_padding(padding, xc, n, reach, steps, first, what))
    xc = _same_at_run_time(xc, attrs, n, reach, steps)
    weights = api.transpose(w, [n + 1, n] + list(range(n)))
    return _last(x.graph.op("Conv", [xc, weights], attrs), n, first, name)


def conv3d(input, filter=None, strides=None, padding=None,  # noqa: A002
           data_format="NDHWC", dilations=(1, 1, 1, 1, 1), name=None,
           filters=None) -> Tensor:
    """TF1's tf.nn.conv3d: a 5-D input (NDHWC, or NCDHW) convolved with filter (kd, kh,
    kw, in, out); strides and dilations TF's 5-entry form (or 1 or 3 ints); SAME
    (odd voxel after) or VALID padding. `filters` is the new name of filter.

    Raises:
        TypeError: input, filter, strides or padding is missing, the filter is not of
            the input's dtype, or strides / dilations hold non-positive ints.
        ValueError: filter and filters are both given, or padding / data_format /
            strides are malformed.
        ShapeError: input is not 5-D, filter not 5-D with known dims, or their
            channels differ.
    """
    what = "conv3d"
    filter = _alias(filter, filters, "filter", "filters", what)  # noqa: A001 - TF's name
    if input is None or filter is None or strides is None or padding is None:
        raise TypeError(f"{what} needs input, filter (filters), strides and padding")
    first = _layout(data_format, 3, what)
    steps = _sizes(strides, 3, first, f"{what}: strides")
    rates = _sizes(dilations, 3, first, f"{what}: dilations", default=1)
    return _conv(what, 3, input, filter, steps, rates, padding, first, name)


def convolution(input, filter=None, padding=None, strides=None,  # noqa: A002
                dilation_rate=None, name=None, data_format=None, filters=None,
                dilations=None) -> Tensor:
    """TF1's tf.nn.convolution: an N-D convolution (N = 1, 2 or 3, from the filter's
    rank) of input [batch..., spatial..., in] (channels first when data_format starts
    with "NC": NCW / NCHW / NCDHW) with filter (k..., in, out). strides and
    dilation_rate (new names: dilations; filters for filter) are 1, N or N + 2 ints;
    as in TF, strides > 1 and dilation_rate > 1 do not go together. SAME or VALID
    padding. Inputs with several leading batch dims are flattened around the conv, as
    TF does.

    Raises:
        TypeError: input, filter or padding is missing, or the filter is not of the
            input's dtype.
        ValueError: an alias is given twice, strides and dilation both exceed 1, or
            padding / data_format / N is one TF refuses.
        ShapeError: the ranks or channels of input and filter do not fit.
    """
    what = "convolution"
    filter = _alias(filter, filters, "filter", "filters", what)  # noqa: A001 - TF's name
    rate = _alias(dilation_rate, dilations, "dilation_rate", "dilations", what)
    if input is None or filter is None or padding is None:
        raise TypeError(f"{what} needs input, filter (filters) and padding")
    x = _t(input)
    w = _like(filter, x, f"{what}: filter")
    if w.shape is not None:
        n = len(w.shape) - 2
    elif x.shape is not None:
        n = len(x.shape) - 2
    else:
        raise ShapeError(f"{what}: the rank of input or filter must be known")
    if n not in (1, 2, 3):
        raise ValueError(f"{what}: only 1, 2 or 3 spatial dims, got a filter of rank "
                         f"{n + 2}")
    first = _layout(data_format, n, what) if data_format is not None else False
    steps = _sizes(strides, n, first, f"{what}: strides", default=1)
    rates = _sizes(rate, n, first, f"{what}: dilation_rate", default=1)
    if any(s > 1 for s in steps) and any(r > 1 for r in rates):
        raise ValueError(f"{what}: strides {steps} > 1 cannot go with dilation_rate "
                         f"{rates} > 1")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {_brief(padding)}")
    if x.shape is not None and len(x.shape) <= n + 2:
        if len(x.shape) < n + 2:
            raise ShapeError(f"{what}: input of shape {list(x.shape)} has fewer than the "
                             f"{n + 2} dims a filter of shape {list(w.shape)} needs")
        return _conv(what, n, x, w, steps, rates, padding, first, name)
    # several batch dims (or a rank only the run knows): the dims before the last n + 1
    # flattened into one around the conv (TF's expanded batch)
    g = x.graph
    minus_one = g.constant(np.asarray([-1], np.int64))
    flat = api.reshape(x, api.concat([minus_one, g.op("Shape", [x], {"start": -n - 1})], 0))
    flat.set_shape([None] * (n + 2))
    y = _conv(what, n, flat, w, steps, rates, padding, first, None)
    shape = api.concat([g.op("Shape", [x], {"end": -n - 1}),
                        g.op("Shape", [y], {"start": 1})], 0)
    return api.reshape(y, shape, name=name)


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,  # noqa: A002
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=(1, 1, 1, 1), name=None, filters=None) -> Tensor:
    """TF1's tf.nn.conv2d_backprop_input: the gradient of conv2d(input, filter) with
    respect to its input, given the gradient out_backprop of its output; input_sizes
    is the input's 4-D shape (ints, or a tensor / list with a tensor for the batch),
    filter (kh, kw, in, out). This is og.nn.conv2d_transpose(out_backprop, filter,
    input_sizes, ...) with TF's SAME / VALID / explicit padding and dilations.

    Raises:
        TypeError: input_sizes, filter, out_backprop, strides or padding is missing,
            or use_cudnn_on_gpu is not a bool.
        ValueError: filter and filters are both given, or padding / data_format is
            malformed.
        ShapeError: the shapes do not fit a conv2d (named), or a size that must be
            known while building is not.
    """
    what = "conv2d_backprop_input"
    filter = _alias(filter, filters, "filter", "filters", what)  # noqa: A001 - TF's name
    if input_sizes is None or filter is None or out_backprop is None or strides is None \
            or padding is None:
        raise TypeError(f"{what} needs input_sizes, filter (filters), out_backprop, strides "
                        "and padding")
    _bool_arg(use_cudnn_on_gpu, f"{what}: use_cudnn_on_gpu")
    return _rename_errors(
        what, lambda: conv2d_transpose(out_backprop, filter, input_sizes, strides, padding,
                                       data_format, name, dilations=dilations),
        [("conv2d_transpose", what), ("output_shape", "input_sizes"),
         ("input's", "out_backprop's"), ("input has", "out_backprop has")])


def _check_filter_channels(what, x, dy, c_in: int, c_out: int, filter_sizes) -> None:
    """Check a filter gradient's input `x` and out_backprop `dy` (channels first, dims
    unknown while building pass) against the channels filter_sizes gives them.

    Raises:
        ShapeError: x has not c_in channels, or dy not c_out.
    """
    for arg, t, c in (("input", x, c_in), ("out_backprop", dy, c_out)):
        if t.shape is not None and t.shape[1] is not None and t.shape[1] != c:
            raise ShapeError(f"{what}: {arg} has {t.shape[1]} channels but filter_sizes "
                             f"{filter_sizes} says {c}")


def _filter_grad_sizes(what, in_sp, pads, steps, reach, dy, conv: str) -> tuple:
    """(out_sp, ends) of a filter gradient, a Conv of the input with out_backprop `dy`
    (channels first) as its kernel: per spatial axis, the output size of the forward
    convolution (`conv` in messages, e.g. "a conv2d"), which dy's must be, and the
    padding its last taps reach at the end (negative: input rows no tap reaches).

    Raises:
        ShapeError: the filter is larger than the padded input, or dy's size on an
            axis is not the convolution's.
    """
    n = len(in_sp)
    out_sp, ends = [], []
    for axis in range(n):
        size, b, e, s, r = in_sp[axis], pads[axis], pads[axis + n], steps[axis], reach[axis]
        if size + b + e < r:
            raise ShapeError(f"{what}: the filter ({r}) is larger than the padded input "
                             f"({size + b + e}) on spatial axis {axis}")
        o = (size + b + e - r) // s + 1
        got = dy.shape[2 + axis] if dy.shape is not None else None
        if got is not None and got != o:
            raise ShapeError(f"{what}: out_backprop has size {got} on spatial axis {axis} "
                             f"but {conv} of this input, filter and padding makes {o}")
        out_sp.append(o)
        ends.append((o - 1) * s + r - size - b)
    return out_sp, ends


def _filter_grad_input(what, xc, dyc, pads, steps, reach, conv: str) -> Tensor:
    """The channels-first input xc of a filter gradient whose spatial sizes only the run
    knows, cut to the rows that the forward convolution's taps read: padded as TF's
    padding pads it (`pads` the VALID or explicit [begins + ends], None for SAME, whose
    amounts depend on the size), then sliced from the first tap to just past the last,
    so that a Conv of it (pads 0) with out_backprop `dyc` as the kernel, dilated by the
    strides, makes exactly the filter's sizes. The slice waits for the run's check
    that dyc's spatial sizes are those `conv` (e.g. "a conv2d") makes of this input.

    A run raises ExecutionError (naming `what`) when they are not, or when the filter
    is larger than the padded input."""
    g = xc.graph
    n = len(steps)

    def ints(v):
        return g.constant(np.asarray(v, np.int64))

    size, got = g.op("Shape", [xc], {"start": 2}), g.op("Shape", [dyc], {"start": 2})
    s, r, zeros = ints(steps), ints(reach), ints([0] * n)
    if pads is None:
        # TF's SAME: total = max((ceil(size / s) - 1) s + reach - size, 0), total // 2
        # before; never more than reach - 1, so a static pad of that holds every case
        # (static, as Pad's gradient needs) and the run-time slice picks the window
        before, after = [(k - 1) // 2 for k in reach], [k - 1 for k in reach]
        out = (size + s - 1) // s
        begin = api.maximum((out - 1) * s + r - size, zeros) // 2
        big_enough = api.greater(size, zeros)
    else:
        before, after = list(pads[:n]), list(pads[n:])
        out = (size + ints([b + e for b, e in zip(before, after)]) - r) // s + 1
        begin = ints(before)
        big_enough = api.greater_equal(size + ints([b + e for b, e in zip(before, after)]), r)
    fits = api_extra.reduce_all(api.logical_and(api.equal(got, out), big_enough))
    check = debugging.Assert(fits, [
        f"{what}: out_backprop's spatial sizes", got,
        f"are not the output sizes of {conv} with strides {list(steps)} and this padding "
        "of an input of spatial sizes", size, "(or the filter is larger than the padded "
        "input); those are", out])
    if any(before) or any(after):
        xc = api.pad(xc, [[0, 0], [0, 0]] + [[b, e] for b, e in zip(before, after)])
    start = ints(before) - begin          # where the forward conv's first tap reads
    with api.control_dependencies([check]):
        return g.op("Slice", [xc, start, start + (out - 1) * s + r,
                              ints(list(range(2, n + 2)))])


def _filter_grad_geometry(what, xc, dyc, padding, steps, reach, first: bool,
                          explicit: bool, conv: str) -> tuple:
    """(pads, out_sp, ends) of a filter gradient of channels-first xc and dyc, checked
    while building as far as the sizes are known: ONNX pads [begins + ends] of TF's
    padding, and _filter_grad_sizes' (out_sp, ends). Where a spatial size of xc is
    known only at run time, (pads or None for SAME, None, None): the run works them
    out (_filter_grad_input).

    Raises:
        ValueError: padding is malformed (explicit pairs only with `explicit`).
        ShapeError: the sizes known while building do not fit one convolution.
    """
    n = len(steps)
    in_sp = _spatial_sizes(xc, n)
    found = _padding(padding, xc, n, reach, steps, first, what, explicit=explicit)
    if None in in_sp:
        return (None if "auto_pad" in found else found.get("pads", [0] * (2 * n)),
                None, None)
    pads = found.get("pads", [0] * (2 * n))
    return (pads,) + _filter_grad_sizes(what, in_sp, pads, steps, reach, dyc, conv)


def _filter_grad_conv_input(what, xc, dyc, geometry, steps, rates, reach,
                            conv: str) -> tuple:
    """(input, attrs) of the ONNX Conv that makes a filter gradient: xc (channels
    first) cut to the rows its taps reach, and the Conv's attributes with strides and
    dilations swapped; `geometry` is _filter_grad_geometry's. With sizes known only at
    run time the Conv has no kernel_shape (ONNX takes it from the kernel, out_backprop)
    and no pads: the input comes padded and cut by _filter_grad_input."""
    pads, out_sp, ends = geometry
    n = len(steps)
    g = xc.graph
    if out_sp is None:
        return (_filter_grad_input(what, xc, dyc, pads, steps, reach, conv),
                {"strides": list(rates), "dilations": list(steps), "pads": [0] * (2 * n)})
    if any(e < 0 for e in ends):   # rows no tap reaches
        xc = g.op("Slice", [xc, g.constant(np.zeros(n, np.int64)),
                            g.constant(np.asarray([size + min(e, 0) for size, e in
                                                   zip(_spatial_sizes(xc, n), ends)],
                                                  np.int64)),
                            g.constant(np.arange(2, n + 2, dtype=np.int64))])
    return xc, {"kernel_shape": out_sp, "strides": list(rates), "dilations": list(steps),
                "pads": pads[:n] + [max(e, 0) for e in ends]}


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC",
                           dilations=(1, 1, 1, 1), name=None) -> Tensor:
    """TF1's tf.nn.conv2d_backprop_filter: the gradient of conv2d(input, filter) with
    respect to its (kh, kw, in, out) filter of shape filter_sizes, given the gradient
    out_backprop of its output; SAME / VALID / explicit padding, strides and
    dilations as conv2d's. Written as an ONNX Conv of the input (channels as the
    batch) with out_backprop as the kernel, strides and dilations swapped. The
    input's and out_backprop's batch and spatial sizes may be known only at run time;
    then the run checks that out_backprop's are the conv2d's output sizes.

    Raises:
        TypeError: use_cudnn_on_gpu is not a bool, input is not floats,
            out_backprop of another dtype, or filter_sizes not ints.
        ValueError: padding or data_format is malformed.
        ShapeError: input or out_backprop is not 4-D, filter_sizes is not known while
            building, or the sizes known while building do not fit one conv2d.
        ExecutionError (of the run): sizes known only at run time do not fit one
            conv2d (out_backprop's spatial sizes named).
    """
    what = "conv2d_backprop_filter"
    _bool_arg(use_cudnn_on_gpu, f"{what}: use_cudnn_on_gpu")
    first = _layout(data_format, 2, what)
    x = _floats(_input(input, 4, what), f"{what}: input")
    dy = _input(_like(out_backprop, x, f"{what}: out_backprop"), 4, what, "out_backprop")
    kh, kw, c_in, c_out = _static_ints(filter_sizes, 4, f"{what}: filter_sizes")
    steps = _sizes(strides, 2, first, f"{what}: strides")
    rates = _sizes(dilations, 2, first, f"{what}: dilations", default=1)
    xc, dyc = _first(x, 2, first), _first(dy, 2, first)
    _check_filter_channels(what, xc, dyc, c_in, c_out, [kh, kw, c_in, c_out])
    reach = [(k - 1) * d + 1 for k, d in zip((kh, kw), rates)]
    geometry = _filter_grad_geometry(what, xc, dyc, padding, steps, reach, first, True,
                                     "a conv2d")
    g = x.graph
    with g.name_scope(name or "Conv2DBackpropFilter"):
        xc, attrs = _filter_grad_conv_input(what, xc, dyc, geometry, steps, rates, reach,
                                            "a conv2d")
        # dW[i, j, ci, co] = sum_n,y,x x[n, ci, y s + i d, x s + j d] dy[n, co, y, x]:
        # a Conv of x (channels as its batch) with kernel dy, stride d and dilation s
        dw = g.op("Conv", [api.transpose(xc, [1, 0, 2, 3]), api.transpose(dyc, [1, 0, 2, 3])],
                  attrs)
        dw.set_shape([c_in, c_out, kh, kw])   # the run-time Conv's too, by construction
        return api.transpose(dw, [2, 3, 0, 1], name="filter_grad")


# --------------------------------------------------------------------------- morphology

def _dilation(what, x, w, strides, rates, padding, name) -> Tensor:
    """Grayscale dilation: out[b, y, x, c] = max over (i, j) of x[b, y s + i r - top,
    x s + j r - left, c] + w[i, j, c], the taps outside the image left out; ties go to
    the first tap in row-major order, as TF's kernel (and so does the gradient)."""
    x = _input(x, 4, what)
    if x.dtype.numpy.kind not in "iuf":
        raise TypeError(f"{what}: input must be a numeric tensor, got {x.dtype.short_name}")
    w = _like(w, x, f"{what}: filter")
    if w.shape is None or len(w.shape) != 3 or None in w.shape:
        raise ShapeError(f"{what}: filter must be 3-D (kh, kw, depth) with known dims, got "
                         f"shape {None if w.shape is None else list(w.shape)}")
    kh, kw, depth = w.shape
    if x.shape is not None and x.shape[3] is not None and x.shape[3] != depth:
        raise ShapeError(f"{what}: input has {x.shape[3]} channels but filter "
                         f"{list(w.shape)} has {depth}")
    steps = _sizes(strides, 2, False, f"{what}: strides")
    rs = _sizes(rates, 2, False, f"{what}: rates")
    if x.shape is None or None in x.shape[1:3]:
        raise ShapeError(f"{what}: the input's height and width must be known while "
                         f"building, got shape {None if x.shape is None else list(x.shape)}")
    size = list(x.shape[1:3])
    reach = [(k - 1) * r + 1 for k, r in zip((kh, kw), rs)]
    pads = _padding(padding, _first(x, 2, False), 2, reach, steps, False, what).get(
        "pads", [0, 0, 0, 0])
    out = [(n + pads[a] + pads[a + 2] - r) // s + 1
           for a, (n, r, s) in enumerate(zip(size, reach, steps))]
    g = x.graph
    dt = x.dtype.numpy
    lowest = np.finfo(dt).min if dt.kind == "f" else np.iinfo(dt).min

    def ints(v):
        return g.constant(np.asarray(v, np.int64))

    with g.name_scope(name or "Dilation2D"):
        xp = api.pad(x, [[0, 0], [pads[0], pads[2]], [pads[1], pads[3]], [0, 0]]) \
            if any(pads) else x
        best = None
        for i in range(kh):
            for j in range(kw):
                start = [i * rs[0], j * rs[1]]
                tap = g.op("Slice", [xp, ints(start),
                                     ints([b + (o - 1) * s + 1 for b, o, s in
                                           zip(start, out, steps)]),
                                     ints([1, 2]), ints(steps)])
                weight = g.op("Slice", [w, ints([i, j]), ints([i + 1, j + 1]), ints([0, 1])])
                value = tap + weight
                inside = [np.asarray([0 <= o * s + b - p < n for o in range(m)])
                          for m, s, b, p, n in zip(out, steps, start, pads[:2], size)]
                if not (inside[0].all() and inside[1].all()):
                    mask = np.outer(inside[0], inside[1])[None, :, :, None]
                    value = api.where(g.constant(mask), value,
                                      g.constant(np.asarray(lowest, dt)))
                best = value if best is None else api.where(api.greater(value, best),
                                                            value, best)
        return api.identity(best, name="value")


def dilation2d(input, filter=None, strides=None, rates=None, padding=None,  # noqa: A002
               name=None, filters=None, dilations=None) -> Tensor:
    """TF1's tf.nn.dilation2d: the grayscale morphological dilation of an NHWC input by
    filter (kh, kw, depth): out[b, y, x, c] = max over (i, j) of input[b, y * s_h +
    i * r_h, x * s_w + j * r_w, c] + filter[i, j, c] (unmirrored, as TF), SAME or
    VALID padding whose taps are left out. strides and rates (new names: dilations;
    filters for filter) are TF's [1, s_h, s_w, 1] (or 1 or 2 ints). Gradients go to
    the tap that wins (the first in row-major order on ties), as TF's.

    Raises:
        TypeError: filter, strides, rates or padding is missing, or dtypes differ.
        ValueError: an alias is given twice, or padding / strides / rates malformed.
        ShapeError: input is not 4-D with known height and width, or filter is not
            3-D with the input's depth.
    """
    what = "dilation2d"
    filter = _alias(filter, filters, "filter", "filters", what)  # noqa: A001 - TF's name
    rates = _alias(rates, dilations, "rates", "dilations", what)
    if filter is None or strides is None or rates is None or padding is None:
        raise TypeError(f"{what} needs input, filter (filters), strides, rates "
                        "(dilations) and padding")
    return _dilation(what, input, filter, strides, rates, padding, name)


def erosion2d(value, kernel, strides, rates, padding, name=None) -> Tensor:
    """TF1's tf.nn.erosion2d: the grayscale morphological erosion of an NHWC value by
    kernel (kh, kw, depth), out[b, y, x, c] = min over (i, j) of value[b, y * s_h -
    i * r_h, x * s_w - j * r_w, c] - kernel[i, j, c]; computed as TF does, by duality:
    -dilation2d(-value, kernel reversed on its two spatial axes).

    Raises:
        as dilation2d (named erosion2d).
    """
    what = "erosion2d"
    x = _t(value)
    k = _like(kernel, x, f"{what}: kernel")
    if k.shape is None or len(k.shape) != 3:
        raise ShapeError(f"{what}: kernel must be 3-D (kh, kw, depth), got shape "
                         f"{None if k.shape is None else list(k.shape)}")
    g = x.graph
    flipped = g.op("Slice", [k, g.constant(np.asarray([-1, -1], np.int64)),
                             g.constant(np.full(2, np.iinfo(np.int64).min, np.int64)),
                             g.constant(np.asarray([0, 1], np.int64)),
                             g.constant(np.asarray([-1, -1], np.int64))])
    with g.name_scope(name or "erosion2d"):
        y = _rename_errors(what, lambda: _dilation(what, -x, flipped, strides, rates,
                                                   padding, None),
                           [("filter", "kernel"), ("input", "value")])
        return api.negative(y, name="value")

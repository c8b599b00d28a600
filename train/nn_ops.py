"""TF1's tf.nn functions that are not layers: conv2d's op form, depthwise_conv2d,
max_pool, avg_pool, bias_add, moments, l2_normalize, relu6, selu, softsign, swish,
in_top_k and top_k (og.nn re-exports them).

Each is built from registered ONNX-semantics ops, so graphs using them export; names,
arguments and defaults are TF1's.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import graph as _g
from . import nn
from .api import _axes, _bool_arg, _int_arg, _pair, _t
from .api_extra import _rank, reduce_any, top_k
from .api_math import _checked, _floats
from .graph import Tensor

# TF's SELU constants (Klambauer et al.), in full; ONNX's defaults are their float32
# roundings
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# --------------------------------------------------------------------------- conv, pool

def _spatial(values, data_format: str, what: str, default=None) -> list[int]:
    """TF1's strides / ksize / dilations argument as (h, w): an int, 2 ints, or 4 ints
    whose batch and channel entries are 1.

    Raises:
        TypeError: it is none of these, or holds a non-positive value.
        ValueError: a 4-entry form moves along the batch or channel axis.
    """
    if values is None:
        values = default
    items = list(values) if hasattr(values, "__iter__") and not isinstance(values, str) \
        else [values]
    if len(items) == 1:
        items = items * 2
    if len(items) == 4:
        first = data_format.startswith("NC")
        outer = (items[0], items[1]) if first else (items[0], items[3])
        if list(outer) != [1, 1]:
            raise ValueError(f"{what}: {list(values)} must be 1 on the batch and channel "
                             f"axes for {data_format}")
        items = items[2:] if first else items[1:3]
    if len(items) != 2 or not all(nn._is_positive_int(v) for v in items):
        raise TypeError(f"{what} must be a positive int, 2 of them or 4 (TF1's NHWC/NCHW "
                        f"form), got {values!r:.60}")
    return [int(v) for v in items]


def _image_format(data_format, what: str, default: str = "NHWC") -> bool:
    """Whether data_format is channels-first ("NCHW"); TF1's "NHWC" is the default.

    Raises:
        ValueError: it is neither.
    """
    data_format = default if data_format is None else data_format
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{what}: data_format must be 'NHWC' or 'NCHW', got "
                         f"{data_format!r}")
    return data_format == "NCHW"


def check_valid_window(sizes, reach, what: str, padding_name: str = "VALID") -> None:
    """Refuse a VALID window that reaches past a spatial side known while building
    (`sizes`, None where unknown; `reach` the dilated window per axis), as TF1 refuses
    it (a negative output size) instead of building an empty output.

    Raises:
        ShapeError: names `what`, the axis and both sizes.
    """
    for axis, (size, r) in enumerate(zip(sizes, reach)):
        if size is not None and size < r:
            raise ShapeError(f"{what}: with {padding_name} padding the window ({r}) is "
                             f"larger than the input ({size}) on spatial axis {axis}")


def _window_padding(padding, x_nchw: Tensor, reach, strides, what: str) -> dict:
    """ONNX pads (or auto_pad) for TF1's padding: "SAME", "VALID", or explicit
    [[0, 0], [top, bottom], [left, right], [0, 0]] pairs in the data format's order
    (already reduced to the two spatial pairs by the caller when given as a list).

    Raises:
        ValueError: padding is none of these.
        ShapeError: a VALID window is larger than a spatial side known while building.
    """
    if isinstance(padding, str) and padding.upper() in ("SAME", "VALID"):
        spatial = x_nchw.shape[2:] if x_nchw.shape is not None else (None, None)
        if padding.upper() == "VALID":
            check_valid_window(spatial, reach, what)
            return {}
        if None in spatial:
            return {"auto_pad": "SAME_UPPER"}   # TF's SAME: the odd pixel at the end
        return {"pads": nn._same_pads(spatial, reach, strides)}
    pairs = padding
    if not (isinstance(pairs, (list, tuple)) and len(pairs) == 2 and all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(
                isinstance(v, (int, np.integer)) and v >= 0 for v in p) for p in pairs)):
        raise ValueError(f"{what}: padding must be 'SAME', 'VALID' or explicit pairs, got "
                         f"{padding!r:.80}")
    (top, bottom), (left, right) = pairs
    return {"pads": [int(top), int(left), int(bottom), int(right)]}


def conv_padding(x_nchw: Tensor, attrs: dict, reach, strides) -> Tensor:
    """The Conv input for `attrs`: x itself, or, where SAME padding of a dilated kernel
    waits for the image size (auto_pad SAME_UPPER, which onnxruntime refuses with
    dilations), x padded by TF's SAME amounts computed from its run-time shape, the
    auto_pad then dropped from attrs. `reach` is the dilated kernel's extent."""
    if attrs.get("auto_pad") != "SAME_UPPER" or list(reach) == list(attrs["kernel_shape"]):
        return x_nchw
    del attrs["auto_pad"]
    g = x_nchw.graph
    size = g.op("Shape", [x_nchw], {"start": 2})
    step = g.constant(np.asarray(strides, np.int64))
    out = api._div(size + step - 1, step)            # ceil(in / stride)
    total = api.maximum((out - 1) * step + g.constant(np.asarray(reach, np.int64)) - size,
                        g.constant(np.zeros(2, np.int64)))
    before = api._div(total, g.constant(np.full(2, 2, np.int64)))
    zeros = g.constant(np.zeros(2, np.int64))
    pads = api.concat([zeros, before, zeros, total - before], axis=0)
    return g.op("Pad", [x_nchw, pads])


def _explicit_pairs(padding, first: bool, what: str):
    """TF1's explicit padding (4 pairs in the data format's order) as its 2 spatial
    pairs; SAME/VALID as they are.

    Raises:
        ValueError: the batch or channel pair is not [0, 0], or there are not 4 pairs.
    """
    if isinstance(padding, str):
        return padding
    pairs = [list(p) if isinstance(p, (list, tuple)) else p for p in padding] \
        if isinstance(padding, (list, tuple)) else None
    if pairs is None or len(pairs) != 4:
        raise ValueError(f"{what}: padding must be 'SAME', 'VALID' or 4 [before, after] "
                         f"pairs, got {padding!r:.80}")
    outer = (pairs[0], pairs[1]) if first else (pairs[0], pairs[3])
    if any(p != [0, 0] for p in outer):
        raise ValueError(f"{what}: padding {padding!r:.80} must be [0, 0] on the batch and "
                         "channel axes")
    return pairs[2:] if first else pairs[1:3]


def _nchw(x: Tensor, first: bool) -> Tensor:
    return x if first else api.transpose(x, [0, 3, 1, 2])


def _back(y: Tensor, first: bool, name) -> Tensor:
    return api.identity(y, name=name) if first else api.transpose(y, [0, 2, 3, 1], name=name)


def _image_input(x, what: str) -> Tensor:
    x = _t(x)
    if x.shape is not None and len(x.shape) != 4:
        raise ShapeError(f"{what}: input must be 4-D, got shape {list(x.shape)}")
    return x


def _filter(value, x: Tensor, what: str, layout: str) -> Tensor:
    """A TF filter as a tensor of x's dtype, 4-D with known dims.

    Raises:
        ShapeError: it is not (names `what` and the `layout` expected).
    """
    w = _g.convert_to_tensor(value, x.dtype, x.graph)
    if w.shape is None or len(w.shape) != 4 or None in w.shape:
        raise ShapeError(f"{what}: filter must be 4-D {layout} with known dims, got shape "
                         f"{w.shape}")
    return w


def conv2d_op(input, filter, strides, padding, use_cudnn_on_gpu=True,  # noqa: A002
              data_format="NHWC", dilations=None, name=None) -> Tensor:
    """TF1's tf.nn.conv2d: `input` (NHWC, or NCHW) convolved with `filter` of shape
    (kh, kw, in, out), TF's SAME/VALID or explicit padding. og.nn.conv2d calls this
    when its second argument is a tensor (a Variable, or a 4-D array).

    Raises:
        ShapeError: input is not 4-D, filter is not 4-D with known dims, or their
            channel counts differ.
        TypeError / ValueError: strides, dilations, padding or data_format is malformed.
    """
    api._bool_arg(use_cudnn_on_gpu, "conv2d: use_cudnn_on_gpu")
    first = _image_format(data_format, "conv2d")
    x = _image_input(input, "conv2d")
    w = _filter(filter, x, "conv2d", "(kh, kw, in, out)")
    kh, kw, c_in, _ = w.shape
    steps = _spatial(strides, data_format, "conv2d: strides")
    rates = _spatial(dilations, data_format, "conv2d: dilations", default=1)
    xc = _nchw(x, first)
    channels = xc.shape[1] if xc.shape is not None else None
    if channels is not None and channels % c_in:
        raise ShapeError(f"conv2d: input has {channels} channels but filter {list(w.shape)} "
                         f"takes {c_in}")
    reach = [(k - 1) * d + 1 for k, d in zip((kh, kw), rates)]
    attrs = {"kernel_shape": [kh, kw], "strides": steps, "dilations": rates,
             "group": 1 if channels is None else channels // c_in}
    attrs.update(_window_padding(_explicit_pairs(padding, first, "conv2d"), xc, reach,
                                 steps, "conv2d"))
    xc = conv_padding(xc, attrs, reach, steps)
    y = x.graph.op("Conv", [xc, api.transpose(w, [3, 2, 0, 1])], attrs)
    return _back(y, first, name)


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None) -> Tensor:
    """TF1's tf.nn.depthwise_conv2d: each input channel convolved with its own
    `channel_multiplier` filters, filter (kh, kw, in, multiplier); output channel
    i * multiplier + m (an ONNX Conv with group = in). `rate` is TF1's name for
    dilations.

    Raises:
        ShapeError: input or filter is not 4-D, or their channel counts differ.
        TypeError / ValueError: strides, rate, padding or data_format is malformed, or
            both rate and dilations are given.
    """
    if rate is not None and dilations is not None:
        raise ValueError("depthwise_conv2d: give rate or dilations, not both")
    first = _image_format(data_format, "depthwise_conv2d")
    fmt = "NCHW" if first else "NHWC"
    x = _image_input(input, "depthwise_conv2d")
    w = _filter(filter, x, "depthwise_conv2d", "(kh, kw, in, multiplier)")
    kh, kw, c_in, mult = w.shape
    xc = _nchw(x, first)
    channels = xc.shape[1] if xc.shape is not None else None
    if channels is not None and channels != c_in:
        raise ShapeError(f"depthwise_conv2d: input has {channels} channels but filter "
                         f"{list(w.shape)} takes {c_in}")
    steps = _spatial(strides, fmt, "depthwise_conv2d: strides")
    rates = _spatial(rate if rate is not None else dilations, fmt,
                     "depthwise_conv2d: rate", default=1)
    reach = [(k - 1) * d + 1 for k, d in zip((kh, kw), rates)]
    attrs = {"kernel_shape": [kh, kw], "strides": steps, "dilations": rates, "group": c_in}
    attrs.update(_window_padding(_explicit_pairs(padding, first, "depthwise_conv2d"), xc,
                                 reach, steps, "depthwise_conv2d"))
    xc = conv_padding(xc, attrs, reach, steps)
    # (kh, kw, in, mult) -> (in * mult, 1, kh, kw): output channel i * mult + m
    weights = api.reshape(api.transpose(w, [2, 3, 0, 1]), [c_in * mult, 1, kh, kw])
    return _back(x.graph.op("Conv", [xc, weights], attrs), first, name)


def _pool_op(op_type, what, value, ksize, strides, padding, data_format, name):
    first = _image_format(data_format, what)
    x = _image_input(value, what)
    kernel = _spatial(ksize, data_format, f"{what}: ksize")
    steps = _spatial(strides, data_format, f"{what}: strides")
    xc = _nchw(x, first)
    attrs = {"kernel_shape": kernel, "strides": steps}
    attrs.update(_window_padding(_explicit_pairs(padding, first, what), xc, kernel, steps,
                                 what))
    return _back(x.graph.op(op_type, [xc], attrs), first, name)


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None) -> Tensor:
    """TF1's tf.nn.max_pool: the maximum over ksize windows moved by strides (both an
    int, 2 ints, or TF1's 4-entry form), SAME or VALID padding, NHWC unless
    data_format="NCHW".

    Raises:
        ShapeError: value is not 4-D.
        TypeError / ValueError: ksize, strides, padding or data_format is malformed.
    """
    return _pool_op("MaxPool", "max_pool", value, ksize, strides, padding, data_format,
                    name)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None) -> Tensor:
    """TF1's tf.nn.avg_pool: the mean over ksize windows, padding left out of the
    count as in TF; arguments as max_pool.

    Raises:
        ShapeError: value is not 4-D.
        TypeError / ValueError: ksize, strides, padding or data_format is malformed.
    """
    return _pool_op("AveragePool", "avg_pool", value, ksize, strides, padding,
                    data_format, name)


# --------------------------------------------------------------------------- others

def max_pool2d(input, ksize, strides, padding, data_format="NHWC",  # noqa: A002
               name=None) -> Tensor:
    """TF's tf.nn.max_pool2d: og.nn.max_pool under its TF 1.14+ name (NHWC by
    default; onegraph's NCHW layer is og.nn.max_pool2d_layer).

    Raises:
        ShapeError / TypeError / ValueError: as max_pool.
    """
    return max_pool(input, ksize, strides, padding, data_format, name)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC",  # noqa: A002
               name=None) -> Tensor:
    """TF's tf.nn.avg_pool2d: og.nn.avg_pool under its TF 1.14+ name (NHWC by
    default; onegraph's NCHW layer is og.nn.avg_pool2d_layer).

    Raises:
        ShapeError / TypeError / ValueError: as avg_pool.
    """
    return avg_pool(input, ksize, strides, padding, data_format, name)


def bias_add(value, bias, data_format=None, name=None) -> Tensor:
    """value + bias, the 1-D bias added along the channel axis: the last one for
    data_format None / "NHWC" / "N...C", axis 1 for "NCHW" / "NC..." (tf.nn.bias_add).

    Raises:
        ShapeError: bias is not 1-D, value has rank < 2, or their channel counts differ.
        ValueError: data_format is not one TF1 knows.
    """
    if data_format is None:
        data_format = "NHWC"
    first = isinstance(data_format, str) and data_format.startswith("NC")
    if not first and not (isinstance(data_format, str) and data_format.startswith("N")
                          and data_format.endswith("C")):
        raise ValueError(f"bias_add: data_format must be like NHWC or NCHW, got "
                         f"{data_format!r}")
    x, b = _pair(value, bias, "bias_add")
    if b.shape is not None and len(b.shape) != 1:
        raise ShapeError(f"bias_add: bias must be 1-D, got shape {list(b.shape)}")
    r = _rank(x, "bias_add")
    if r < 2:
        raise ShapeError(f"bias_add: value must have rank >= 2, got shape {list(x.shape)}")
    axis = 1 if first else r - 1
    c, n = x.shape[axis], None if b.shape is None else b.shape[0]
    if c is not None and n is not None and c != n:
        raise ShapeError(f"bias_add: bias of {n} values for {c} channels (axis {axis} "
                         f"of {list(x.shape)}, data_format {data_format})")
    bias = b
    if axis != r - 1:
        b = api.reshape(b, [-1] + [1] * (r - 1 - axis))
    if c is not None and n is not None:
        return api.add(x, b, name=name)
    # the Add would broadcast a bias of one value over any channel count
    g = x.graph
    same = api.equal(g.op("Shape", [x], {"start": axis, "end": axis + 1}),
                     g.op("Shape", [bias]))
    return _checked(api.add(x, b), same, "bias_add: the bias must hold one value per "
                    "channel", name)


def _keepdims(keep_dims, keepdims, what: str) -> bool:
    """TF1's keepdims, or its old name keep_dims (False when neither is given).

    Raises:
        ValueError: both are given.
        TypeError: it is not a bool.
    """
    if keep_dims is not None and keepdims is not None:
        raise ValueError(f"{what}: give keepdims or its old name keep_dims, not both")
    value = keepdims if keepdims is not None else keep_dims
    return False if value is None else _bool_arg(value, f"{what}: keepdims")


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None) -> tuple:
    """(mean, variance) of x over `axes` (tf.nn.moments, TF1's argument order; keep_dims
    is the old name of keepdims); the variance is the biased one, and no gradient
    flows through the mean inside it, as in TF1 (the total gradient is the same).
    `shift` is accepted and unused, as in TF1.

    Raises:
        TypeError: axes is not an int or a list of ints, keepdims not a bool, or x
            not a float tensor.
        ValueError: keep_dims and keepdims are both given.
    """
    axes = _axes(axes, "moments: axes")
    keepdims = _keepdims(keep_dims, keepdims, "moments")
    x = _floats(_t(x), "moments: x")
    g = x.graph
    with g.name_scope(name or "moments"):
        mean = api.reduce_mean(x, axis=axes, keepdims=True, name="mean")
        variance = api.reduce_mean(api.square(x - api.stop_gradient(mean)), axis=axes,
                                   keepdims=True, name="variance")
        if not keepdims:
            mean = api.squeeze(mean, axis=axes)
            variance = api.squeeze(variance, axis=axes)
    return mean, variance


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None) -> Tensor:
    """x / sqrt(max(sum(x^2, axis), epsilon)) (tf.nn.l2_normalize; `dim` is the old
    name of axis; None normalises over all axes).

    Raises:
        ValueError: both axis and dim are given.
        TypeError: x is not a float tensor.
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("l2_normalize: give axis or its old name dim, not both")
        axis = dim
    x = _floats(_t(x), "l2_normalize: x")
    axes = None if axis is None else _axes(axis, "l2_normalize: axis")
    squares = api.reduce_sum(api.square(x), axis=axes, keepdims=True)
    return api.multiply(x, api.rsqrt(api.maximum(squares, epsilon)), name=name)


def relu6(features, name=None) -> Tensor:
    """min(max(x, 0), 6) (tf.nn.relu6; ONNX Clip), with TF's gradient: 1 only where
    0 < x < 6 (Clip's own passes the ends too). The value is Clip's; the gradient
    comes from a Where that keeps x strictly inside, the difference held constant."""
    x = _t(features)
    g = x.graph
    lo = g.constant(np.asarray(0, x.dtype.numpy))
    hi = g.constant(np.asarray(6, x.dtype.numpy))
    clipped = g.op("Clip", [x, lo, hi])
    inside = api.logical_and(api.greater(x, lo), api.less(x, hi))
    slope = api.where(inside, x, api.zeros_like(x))
    # (clipped - slope) + slope is clipped exactly: slope is x or 0
    return api.add(api.stop_gradient(clipped - slope), slope, name=name)


def selu(features, name=None) -> Tensor:
    """scale * (x if x > 0 else alpha (e^x - 1)) with TF's constants (tf.nn.selu)."""
    x = _t(features)
    return x.graph.op("Selu", [x], {"alpha": _SELU_ALPHA, "gamma": _SELU_SCALE}, name=name)


def softsign(features, name=None) -> Tensor:
    """x / (1 + |x|) (tf.nn.softsign)."""
    x = _t(features)
    return x.graph.op("Softsign", [x], name=name)


def swish(features, name=None) -> Tensor:
    """x * sigmoid(x) (tf.nn.swish)."""
    x = _t(features)
    return api.multiply(x, api.sigmoid(x), name=name)


def in_top_k(predictions, targets, k, name=None) -> Tensor:
    """Whether each row's target class is among its k highest predictions
    (tf.nn.in_top_k): fewer than k classes score higher, so ties at the boundary all
    count as in. A target out of range, or a row holding a non-finite score, gives
    False; predictions and targets of different batch sizes fail at run time.

    Raises:
        ShapeError: predictions are not (batch, classes) or targets not (batch,), or
            their known batch sizes differ.
        TypeError: k is not an int or targets are not integers.
    """
    p = _floats(_t(predictions), "in_top_k: predictions")
    g = p.graph
    if p.shape is not None and len(p.shape) != 2:
        raise ShapeError(f"in_top_k: predictions must be (batch, classes), got shape "
                         f"{list(p.shape)}")
    t = api.cast(_g.integer_tensor(targets, "in_top_k: targets", g), DType.INT64)
    if t.shape is not None and len(t.shape) != 1:
        raise ShapeError(f"in_top_k: targets must be (batch,), got shape {list(t.shape)}")
    if t.shape is not None and p.shape is not None and None not in (t.shape[0], p.shape[0]) \
            and t.shape[0] != p.shape[0]:
        raise ShapeError(f"in_top_k: {p.shape[0]} rows of predictions but {t.shape[0]} "
                         "targets")
    kk = api.cast(_g.integer_tensor(k, "in_top_k: k", g) if _g._is_symbolic(k)
                  else api.constant(_int_arg(k, "in_top_k: k")), DType.INT64)
    classes = g.op("Shape", [p], {"start": 1, "end": 2})
    valid = api.logical_and(api.greater_equal(t, 0), api.less(t, classes))
    safe = api.where(valid, t, api.zeros_like(t))
    # GatherND over the batch: predictions and targets must have one batch size (a
    # GatherElements would broadcast a shorter targets over the rows)
    score = g.op("GatherND", [p, api.expand_dims(safe, 1)], {"batch_dims": 1})
    higher = api.reduce_sum(api.cast(api.greater(p, api.expand_dims(score, 1)),
                                     DType.INT64), axis=1)
    # TF1's kernel cannot say for a row holding a NaN or an infinity: False
    bad = api.logical_or(g.op("IsNaN", [p]), g.op("IsInf", [p]))
    finite_row = api.logical_not(reduce_any(bad, axis=1))
    ok = api.logical_and(api.less(higher, kk), api.logical_and(valid, finite_row))
    return api.identity(ok, name=name)


__all__ = ["avg_pool", "avg_pool2d", "bias_add", "depthwise_conv2d", "in_top_k",
           "l2_normalize", "max_pool", "max_pool2d", "moments", "relu6", "selu", "softsign",
           "swish", "top_k"]

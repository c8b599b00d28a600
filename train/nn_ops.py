"""TF1's tf.nn functions that are not layers: bias_add, moments, l2_normalize, relu6,
selu, softsign, swish, in_top_k and top_k (og.nn re-exports them).

Each is built from registered ONNX-semantics ops, so graphs using them export; names,
arguments and defaults are TF1's.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import graph as _g
from .api import _axes, _bool_arg, _int_arg, _pair, _t
from .api_extra import _rank, top_k
from .api_math import _floats
from .graph import Tensor

# TF's SELU constants (Klambauer et al.), in full; ONNX's defaults are their float32
# roundings
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


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
    if axis != r - 1:
        b = api.reshape(b, [-1] + [1] * (r - 1 - axis))
    return api.add(x, b, name=name)


def moments(x, axes, shift=None, keepdims=False, name=None) -> tuple:
    """(mean, variance) of x over `axes` (tf.nn.moments); the variance is the biased
    one, and no gradient flows through the mean inside it, as in TF1 (the total
    gradient is the same). `shift` is accepted and unused, as in TF1.

    Raises:
        TypeError: axes is not an int or a list of ints, keepdims not a bool, or x
            not a float tensor.
    """
    axes = _axes(axes, "moments: axes")
    keepdims = _bool_arg(keepdims, "moments: keepdims")
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
    """min(max(x, 0), 6) (tf.nn.relu6; ONNX Clip)."""
    x = _t(features)
    g = x.graph
    lo = g.constant(np.asarray(0, x.dtype.numpy))
    hi = g.constant(np.asarray(6, x.dtype.numpy))
    return g.op("Clip", [x, lo, hi], name=name)


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
    count as in. A target out of range, or a non-finite score, gives False.

    Raises:
        ShapeError: predictions are not (batch, classes) or targets not (batch,).
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
    kk = api.cast(_g.integer_tensor(k, "in_top_k: k", g) if _g._is_symbolic(k)
                  else api.constant(_int_arg(k, "in_top_k: k")), DType.INT64)
    classes = g.op("Shape", [p], {"start": 1, "end": 2})
    valid = api.logical_and(api.greater_equal(t, 0), api.less(t, classes))
    safe = api.where(valid, t, api.zeros_like(t))
    score = g.op("GatherElements", [p, api.expand_dims(safe, 1)], {"axis": 1})
    higher = api.reduce_sum(api.cast(api.greater(p, score), DType.INT64), axis=1)
    finite = api.logical_not(api.logical_or(g.op("IsNaN", [score]), g.op("IsInf", [score])))
    ok = api.logical_and(api.less(higher, kk),
                         api.logical_and(valid, api.squeeze(finite, axis=[1])))
    return api.identity(ok, name=name)


__all__ = ["bias_add", "in_top_k", "l2_normalize", "moments", "relu6", "selu", "softsign",
           "swish", "top_k"]

"""Gradient rules of the pool family: MaxPool, AveragePool, LpPool, LRN, global pools."""

from __future__ import annotations

import numpy as np

from ..errors import GradientNotDefinedError
from .grad_util import like_dtype
from .pool import _geometry, _window_counts

_POOL = ("auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides",
         "storage_order", "count_include_pad")


def _attrs(op):
    return {k: v for k, v in op.attrs.items() if k in _POOL and v is not None}


def _max_pool(b, op, grads):
    g = grads[0]
    if g is None:
        return [None]
    return [b.op("MaxPoolGrad", [op.inputs[0], g], _attrs(op))]


def _average_pool(b, op, grads):
    return [b.op("AveragePoolGrad", [op.inputs[0], grads[0]], _attrs(op))]


def _global(mode):
    def rule(b, op, grads):
        x = op.inputs[0]
        if x.shape is None:
            raise GradientNotDefinedError("global pool gradient needs an input of known rank")
        axes = list(range(2, len(x.shape)))
        return [b.op("ReduceGrad", [grads[0], x, op.outputs[0]],
                     {"axes": axes, "keepdims": 1, "mode": mode})]
    return rule


def _lrn(b, op, grads):
    attrs = {k: op.attrs[k] for k in ("alpha", "beta", "bias", "size")}
    return [b.op("LRNGrad", [grads[0], op.inputs[0]], attrs)]


def _lp_pool(b, op, grads):
    """y = (window sum of |x|^p)^(1/p) over zero-padded x. The window sum is an
    AveragePool with count_include_pad=1 times each window's count, so its adjoint is
    AveragePoolGrad of dy * count. The count is kprod for every window when ceil_mode
    is 0; with ceil_mode 1 the last windows may reach past the padded input and count
    fewer taps, which takes the spatial dims known while building.

    Raises:
        GradientNotDefinedError: ceil_mode 1 on spatial dims not known while building.
    """
    (g,) = grads
    x, y = op.inputs[0], op.outputs[0]
    attrs = _attrs(op)
    p = float(op.attrs["p"])
    attrs["count_include_pad"] = 1
    if int(op.attrs["ceil_mode"]):
        counts = _ceil_mode_counts(op, x)
        count = b.op("CastLike", [b.constant(counts / p), y])
    else:
        kprod = 1
        for k in op.attrs["kernel_shape"]:
            kprod *= int(k)
        attrs.pop("ceil_mode", None)
        count = like_dtype(b, kprod / p, y)
    # dL/d(window sum) = g * y^(1-p) / p; d|x|^p/dx = p |x|^(p-1) sign(x)
    d_sum = b.op("Mul", [g, b.op("Pow", [y, like_dtype(b, 1.0 - p, y)])])
    d_sum = b.op("Mul", [d_sum, count])
    d_u = b.op("AveragePoolGrad", [x, d_sum], attrs)
    return [b.op("Mul", [d_u, b.op("Mul", [_lp_slope(b, x, p), like_dtype(b, p, x)])])]


def _lp_slope(b, x, p):
    """d|x|^p/dx / p = |x|^(p-1) sign(x)."""
    return b.op("Mul", [b.op("Pow", [b.op("Abs", [x]), like_dtype(b, p - 1.0, x)]),
                        b.op("Sign", [x])])


def _ceil_mode_counts(op, x):
    """Each LpPool window's tap count inside the padded input (ceil_mode 1), shaped
    like the output's spatial dims."""
    sp = None if x.shape is None else x.shape[2:]
    if sp is None or any(d is None for d in sp):
        raise GradientNotDefinedError("LpPool gradient with ceil_mode=1 needs the spatial "
                                      "dims known while building")
    kernel, strides, dil, pb, pe, out_sp = _geometry((1, 1) + tuple(sp), op.attrs)
    return _window_counts(sp, kernel, strides, dil, pb, pe, out_sp, True).astype(np.float64)


def _global_lp_pool(b, op, grads):
    """y = (sum of |x|^p over each image)^(1/p): dx = dy * y^(1-p) * |x|^(p-1) sign(x),
    y broadcast over the image (it keeps the spatial dims as 1s)."""
    (g,) = grads
    x, y = op.inputs[0], op.outputs[0]
    p = float(op.attrs.get("p", 2))
    d_y = b.op("Mul", [g, b.op("Pow", [y, like_dtype(b, 1.0 - p, y)])])
    return [b.op("Mul", [_lp_slope(b, x, p), d_y])]


GRADIENTS = {"AveragePool": _average_pool, "GlobalAveragePool": _global("mean"),
             "GlobalLpPool": _global_lp_pool, "GlobalMaxPool": _global("max"), "LRN": _lrn,
             "LpPool": _lp_pool, "MaxPool": _max_pool}

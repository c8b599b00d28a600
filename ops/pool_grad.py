"""Gradient rules of the pool family: MaxPool, AveragePool, LpPool, LRN, global pools."""

from __future__ import annotations

from ..errors import GradientNotDefinedError
from .grad_util import like_dtype

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
    """y = (window sum of |x|^p)^(1/p) over zero-padded x. The window sum is kprod times
    an AveragePool with count_include_pad=1 (every window counts kprod taps when
    ceil_mode is 0), so its adjoint is AveragePoolGrad of dy * kprod."""
    (g,) = grads
    x, y = op.inputs[0], op.outputs[0]
    attrs = _attrs(op)
    if int(op.attrs["ceil_mode"]):
        raise GradientNotDefinedError("LpPool gradient with ceil_mode=1")
    kprod = 1
    for k in op.attrs["kernel_shape"]:
        kprod *= int(k)
    p = float(op.attrs["p"])
    attrs["count_include_pad"] = 1
    attrs.pop("ceil_mode", None)
    # dL/d(window sum) = g * y^(1-p) / p; d|x|^p/dx = p |x|^(p-1) sign(x)
    d_sum = b.op("Mul", [g, b.op("Pow", [y, like_dtype(b, 1.0 - p, y)])])
    d_sum = b.op("Mul", [d_sum, like_dtype(b, kprod / p, y)])
    d_u = b.op("AveragePoolGrad", [x, d_sum], attrs)
    slope = b.op("Mul", [b.op("Pow", [b.op("Abs", [x]), like_dtype(b, p - 1.0, x)]),
                         b.op("Sign", [x])])
    return [b.op("Mul", [d_u, b.op("Mul", [slope, like_dtype(b, p, x)])])]


def _global_lp_pool(b, op, grads):
    """y = (sum of |x|^p over each image)^(1/p): dx = dy * y^(1-p) * |x|^(p-1) sign(x),
    y broadcast over the image (it keeps the spatial dims as 1s)."""
    (g,) = grads
    x, y = op.inputs[0], op.outputs[0]
    p = float(op.attrs.get("p", 2))
    d_y = b.op("Mul", [g, b.op("Pow", [y, like_dtype(b, 1.0 - p, y)])])
    slope = b.op("Mul", [b.op("Pow", [b.op("Abs", [x]), like_dtype(b, p - 1.0, x)]),
                         b.op("Sign", [x])])
    return [b.op("Mul", [slope, d_y])]


GRADIENTS = {"AveragePool": _average_pool, "GlobalAveragePool": _global("mean"),
             "GlobalLpPool": _global_lp_pool, "GlobalMaxPool": _global("max"), "LRN": _lrn,
             "LpPool": _lp_pool, "MaxPool": _max_pool}

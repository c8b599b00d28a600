"""Gradient rules of the pool family: MaxPool, AveragePool, global pools."""

from __future__ import annotations

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
            raise NotImplementedError("global pool gradient needs an input of known rank")
        axes = list(range(2, len(x.shape)))
        return [b.op("ReduceGrad", [grads[0], x, op.outputs[0]],
                     {"axes": axes, "keepdims": 1, "mode": mode})]
    return rule


GRADIENTS = {"AveragePool": _average_pool, "GlobalAveragePool": _global("mean"),
             "GlobalMaxPool": _global("max"), "MaxPool": _max_pool}

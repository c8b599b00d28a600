"""Gradient rules of the conv family: Conv via ConvGradInput / ConvGradFilter /
ConvGradBias (onegraph-domain kernels in `ops/training.py`)."""

from __future__ import annotations

_GEOMETRY = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def _conv(b, op, grads):
    (g,) = grads
    x, w = op.inputs[0], op.inputs[1]
    attrs = {k: v for k, v in op.attrs.items() if k in _GEOMETRY and v is not None}
    out = [b.op("ConvGradInput", [g, w, x], attrs), b.op("ConvGradFilter", [x, g, w], attrs)]
    if len(op.inputs) > 2:
        out.append(None if op.inputs[2] is None else b.op("ConvGradBias", [g]))
    return out


GRADIENTS = {"Conv": _conv}

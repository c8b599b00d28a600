"""Gradient rules of the conv family: Conv via ConvGradInput / ConvGradFilter /
ConvGradBias (onegraph-domain kernels in `ops/training.py`); ConvTranspose, the adjoint
of a Conv, through the same kernels with the roles swapped."""

from __future__ import annotations

from ..errors import GradientNotDefinedError
from .conv import _convtranspose_geometry

_GEOMETRY = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def _conv(b, op, grads):
    (g,) = grads
    x, w = op.inputs[0], op.inputs[1]
    attrs = {k: v for k, v in op.attrs.items() if k in _GEOMETRY and v is not None}
    out = [b.op("ConvGradInput", [g, w, x], attrs), b.op("ConvGradFilter", [x, g, w], attrs)]
    if len(op.inputs) > 2:
        out.append(None if op.inputs[2] is None else b.op("ConvGradBias", [g]))
    return out


def _conv_transpose(b, op, grads):
    """ConvTranspose(x, w) is the adjoint of Conv(., w) run on the output's shape with the
    same strides, dilations, group and the resolved pads. So dL/dx = Conv(dy, w) and
    dL/dw = ConvGradFilter with dy as the Conv's input and x as its output gradient."""
    (g,) = grads
    x, w = op.inputs[0], op.inputs[1]
    if x.shape is None or w.shape is None or any(d is None for d in
                                                  tuple(x.shape[2:]) + tuple(w.shape[2:])):
        raise GradientNotDefinedError("ConvTranspose gradient needs static spatial shapes of "
                                      "X and W")
    a = op.attrs
    nsp = len(x.shape) - 2
    strides, dil, pb, pe, _ = _convtranspose_geometry(list(x.shape[2:]), list(w.shape[2:]),
                                                      a)
    outpad = list(a["output_padding"] or [0] * nsp)
    if any(p is None or p < 0 for p in pb + pe) or any(
            o >= s for o, s in zip(outpad, strides)):
        raise GradientNotDefinedError("ConvTranspose gradient with negative pads or "
                                      "output_padding >= stride")
    attrs = {"strides": list(strides), "dilations": list(dil), "pads": list(pb) + list(pe),
             "group": int(a["group"] or 1)}
    out = [b.op("Conv", [g, w], attrs), b.op("ConvGradFilter", [g, x, w], attrs)]
    if len(op.inputs) > 2:
        out.append(None if op.inputs[2] is None else b.op("ConvGradBias", [g]))
    return out


GRADIENTS = {"Conv": _conv, "ConvTranspose": _conv_transpose}

"""Gradient rules of the conv family: Conv via ConvGradInput / ConvGradFilter /
ConvGradBias (onegraph-domain kernels in `ops/training.py`); ConvTranspose, the adjoint
of a Conv, through the same kernels with the roles swapped, or through
ConvTransposeGradInput / ConvTransposeGradFilter where its pads are resolved per run."""

from __future__ import annotations

from .conv import _convtranspose_geometry

_GEOMETRY = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")
_TRANSPOSE_GEOMETRY = _GEOMETRY + ("output_padding", "output_shape")


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
    dL/dw = ConvGradFilter with dy as the Conv's input and x as its output gradient.
    When the pads can only be resolved at run time (spatial dims unknown while
    building) or are not a plain Conv's (negative, or output_padding >= stride), the
    helper kernels ConvTransposeGradInput / ConvTransposeGradFilter resolve them per
    run and crop dy to what x reaches."""
    (g,) = grads
    x, w = op.inputs[0], op.inputs[1]
    attrs = _static_adjoint_attrs(x, w, op.attrs)
    if attrs is not None:
        out = [b.op("Conv", [g, w], attrs), b.op("ConvGradFilter", [g, x, w], attrs)]
    else:
        a = {k: v for k, v in op.attrs.items() if k in _TRANSPOSE_GEOMETRY and v is not None}
        out = [b.op("ConvTransposeGradInput", [g, w, x], a),
               b.op("ConvTransposeGradFilter", [g, x, w], a)]
    if len(op.inputs) > 2:
        out.append(None if op.inputs[2] is None else b.op("ConvGradBias", [g]))
    return out


def _static_adjoint_attrs(x, w, a):
    """The attributes of the Conv that is ConvTranspose's adjoint, when its spatial
    shapes are known while building and the resolved pads are those of a Conv; else
    None."""
    if x.shape is None or w.shape is None or any(d is None for d in
                                                  tuple(x.shape[2:]) + tuple(w.shape[2:])):
        return None
    nsp = len(x.shape) - 2
    strides, dil, pb, pe, _ = _convtranspose_geometry(list(x.shape[2:]), list(w.shape[2:]),
                                                      a)
    outpad = list(a["output_padding"] or [0] * nsp)
    if any(p is None or p < 0 for p in pb + pe) or any(
            o >= s for o, s in zip(outpad, strides)):
        return None
    return {"strides": list(strides), "dilations": list(dil), "pads": list(pb) + list(pe),
            "group": int(a["group"] or 1)}


GRADIENTS = {"Conv": _conv, "ConvTranspose": _conv_transpose}

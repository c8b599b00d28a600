"""Gradient rules of the elementwise family (see `ops/registry.py`, gradient contract).

Each rule returns one entry per input: the gradient tensor, or None where the input
is not differentiable (integer, boolean) or the op is piecewise constant.
"""

from __future__ import annotations

import math

from .grad_util import like_dtype, unbroadcast

def _add(b, op, grads):
    (g,) = grads
    x, y = op.inputs
    return [unbroadcast(b, g, x, [y]), unbroadcast(b, g, y, [x])]

def _sub(b, op, grads):
    (g,) = grads
    x, y = op.inputs
    return [unbroadcast(b, g, x, [y]), unbroadcast(b, b.op("Neg", [g]), y, [x])]

def _mul(b, op, grads):
    (g,) = grads
    x, y = op.inputs
    return [unbroadcast(b, b.op("Mul", [g, y]), x, [y]),
            unbroadcast(b, b.op("Mul", [g, x]), y, [x])]

def _div(b, op, grads):
    (g,) = grads
    x, y = op.inputs
    gx = b.op("Div", [g, y])
    gy = b.op("Neg", [b.op("Mul", [gx, op.outputs[0]])])
    return [unbroadcast(b, gx, x, [y]), unbroadcast(b, gy, y, [x])]

def _neg(b, op, grads):
    return [b.op("Neg", [grads[0]])]

def _exp(b, op, grads):
    return [b.op("Mul", [grads[0], op.outputs[0]])]

def _log(b, op, grads):
    return [b.op("Div", [grads[0], op.inputs[0]])]

def _sqrt(b, op, grads):
    y = op.outputs[0]
    return [b.op("Div", [grads[0], b.op("Mul", [y, like_dtype(b, 2.0, y)])])]

def _reciprocal(b, op, grads):
    y = op.outputs[0]
    return [b.op("Neg", [b.op("Mul", [grads[0], b.op("Mul", [y, y])])])]

def _pow(b, op, grads):
    (g,) = grads
    x, p = op.inputs
    y = op.outputs[0]
    one = like_dtype(b, 1.0, x)
    p_x = p if p.dtype == x.dtype else b.op("CastLike", [p, x])
    gx = b.op("Mul", [g, b.op("Mul", [p_x, b.op("Pow", [x, b.op("Sub", [p_x, one])])])])
    gp = None
    if b.static_value(p) is None and p.dtype.numpy.kind == "f":
        gp = unbroadcast(b, b.op("Mul", [g, b.op("Mul", [y, b.op("Log", [x])])]), p, [x])
    return [unbroadcast(b, gx, x, [p]), gp]

def _abs(b, op, grads):
    return [b.op("Mul", [grads[0], b.op("Sign", [op.inputs[0]])])]

def _sin(b, op, grads):
    return [b.op("Mul", [grads[0], b.op("Cos", [op.inputs[0]])])]

def _cos(b, op, grads):
    return [b.op("Neg", [b.op("Mul", [grads[0], b.op("Sin", [op.inputs[0]])])])]

def _tan(b, op, grads):
    y = op.outputs[0]
    one = like_dtype(b, 1.0, y)
    return [b.op("Mul", [grads[0], b.op("Add", [one, b.op("Mul", [y, y])])])]

def _sinh(b, op, grads):
    return [b.op("Mul", [grads[0], b.op("Cosh", [op.inputs[0]])])]

def _cosh(b, op, grads):
    return [b.op("Mul", [grads[0], b.op("Sinh", [op.inputs[0]])])]

def _inv_sqrt_1m(b, x, sign):
    """1 / sqrt(1 + sign * x^2)."""
    one = like_dtype(b, 1.0, x)
    sq = b.op("Mul", [x, x])
    inner = b.op("Add", [one, sq]) if sign > 0 else b.op("Sub", [one, sq])
    return b.op("Reciprocal", [b.op("Sqrt", [inner])])

def _asin(b, op, grads):
    return [b.op("Mul", [grads[0], _inv_sqrt_1m(b, op.inputs[0], -1)])]

def _acos(b, op, grads):
    return [b.op("Neg", [b.op("Mul", [grads[0], _inv_sqrt_1m(b, op.inputs[0], -1)])])]

def _atan(b, op, grads):
    x = op.inputs[0]
    one = like_dtype(b, 1.0, x)
    return [b.op("Div", [grads[0], b.op("Add", [one, b.op("Mul", [x, x])])])]

def _asinh(b, op, grads):
    return [b.op("Mul", [grads[0], _inv_sqrt_1m(b, op.inputs[0], +1)])]

def _acosh(b, op, grads):
    x = op.inputs[0]
    one = like_dtype(b, 1.0, x)
    return [b.op("Div", [grads[0], b.op("Sqrt", [b.op("Sub", [b.op("Mul", [x, x]), one])])])]

def _atanh(b, op, grads):
    x = op.inputs[0]
    one = like_dtype(b, 1.0, x)
    return [b.op("Div", [grads[0], b.op("Sub", [one, b.op("Mul", [x, x])])])]

def _mod(b, op, grads):
    """Float Mod: a - q * b with q = trunc(a / b) (fmod=1) or floor(a / b) (fmod=0); q is
    piecewise constant, so dC/dA = 1 and dC/dB = -q. Integer Mod has no gradient."""
    (g,) = grads
    x, y = op.inputs
    if x.dtype.numpy.kind != "f":
        return [None, None]
    ratio = b.op("Div", [x, y])
    if int(op.attrs["fmod"]):
        q = b.op("Mul", [b.op("Sign", [ratio]), b.op("Floor", [b.op("Abs", [ratio])])])
    else:
        q = b.op("Floor", [ratio])
    return [unbroadcast(b, g, x, [y]),
            unbroadcast(b, b.op("Neg", [b.op("Mul", [g, q])]), y, [x])]

def _erf(b, op, grads):
    x = op.inputs[0]
    scale = like_dtype(b, 2.0 / math.sqrt(math.pi), x)
    e = b.op("Exp", [b.op("Neg", [b.op("Mul", [x, x])])])
    return [b.op("Mul", [grads[0], b.op("Mul", [scale, e])])]

def _zero(b, op, grads):
    return [None] * len(op.inputs)

def _select(pick_max):
    def rule(b, op, grads):
        (g,) = grads
        y = op.outputs[0]
        out = []
        xs = op.inputs
        for i, x in enumerate(xs):
            mask = b.op("Cast", [b.op("Equal", [x, y])], {"to": _onnx_float(x)})
            out.append(unbroadcast(b, b.op("Mul", [g, mask]), x,
                                   [o for j, o in enumerate(xs) if j != i]))
        return out
    return rule

def _onnx_float(t) -> int:
    return {"float32": 1, "float16": 10, "float64": 11}.get(t.dtype.numpy.name, 1)

def _sum(b, op, grads):
    xs = op.inputs
    return [unbroadcast(b, grads[0], x, [o for j, o in enumerate(xs) if j != i])
            for i, x in enumerate(xs)]

def _mean(b, op, grads):
    xs = op.inputs
    g = b.op("Div", [grads[0], like_dtype(b, float(len(xs)), op.outputs[0])])
    return [unbroadcast(b, g, x, [o for j, o in enumerate(xs) if j != i])
            for i, x in enumerate(xs)]

def _where(b, op, grads):
    (g,) = grads
    c, x, y = op.inputs
    zero = b.op("ZerosLike", [g])
    return [None, unbroadcast(b, b.op("Where", [c, g, zero]), x, [c, y]),
            unbroadcast(b, b.op("Where", [c, zero, g]), y, [c, x])]

def _clip(b, op, grads):
    (g,) = grads
    x = op.inputs[0]
    lo = op.inputs[1] if len(op.inputs) > 1 else None
    hi = op.inputs[2] if len(op.inputs) > 2 else None
    mask = None
    for bound, cmp in ((lo, "GreaterOrEqual"), (hi, "LessOrEqual")):
        if bound is None:
            continue
        m = b.op(cmp, [x, bound])
        mask = m if mask is None else b.op("And", [mask, m])
    if mask is None:
        return [g] + [None] * (len(op.inputs) - 1)
    return [b.op("Where", [mask, g, b.op("ZerosLike", [g])])] + [None] * (len(op.inputs) - 1)

def _cast(b, op, grads):
    x = op.inputs[0]
    if x.dtype.numpy.kind != "f":
        return [None]
    return [b.op("CastLike", [grads[0], x])]

def _castlike(b, op, grads):
    x = op.inputs[0]
    if x.dtype.numpy.kind != "f":
        return [None, None]
    return [b.op("CastLike", [grads[0], x]), None]

GRADIENTS = {
    "Abs": _abs, "Acos": _acos, "Acosh": _acosh, "Add": _add, "Asin": _asin, "Asinh": _asinh,
    "Atan": _atan, "Atanh": _atanh, "Cast": _cast, "CastLike": _castlike, "Ceil": _zero,
    "Clip": _clip, "Cos": _cos, "Cosh": _cosh, "Div": _div, "Erf": _erf, "Exp": _exp,
    "Floor": _zero, "Log": _log, "Max": _select(True), "Mean": _mean, "Min": _select(False),
    "Mod": _mod, "Mul": _mul, "Neg": _neg, "Pow": _pow, "Reciprocal": _reciprocal,
    "Round": _zero, "Sign": _zero, "Sin": _sin, "Sinh": _sinh, "Sqrt": _sqrt, "Sub": _sub,
    "Sum": _sum, "Tan": _tan, "Where": _where,
}

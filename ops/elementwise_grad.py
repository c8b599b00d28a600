"""Gradient rules of the elementwise family (see `ops/registry.py`, gradient contract).

Each rule returns one entry per input: the gradient tensor, or None where the input
is not differentiable (integer, boolean) or the op is piecewise constant.
"""

from __future__ import annotations

import math

from ..format import DType
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
    # a constant exponent gets its gradient too (it may be one of xs; unused, the
    # nodes are pruned by the Session), an integer one none
    if p.dtype is DType.UNDEFINED or p.dtype.numpy.kind == "f":
        # d(x^p)/dp = x^p log x, taken as 0 where x <= 0 (as TF): there x^p is 0 or
        # defined only for integral p, and log x would make the gradient NaN
        zero = like_dtype(b, 0.0, x)
        positive = b.op("Greater", [x, zero])
        log_x = b.op("Log", [b.op("Where", [positive, x, one])])
        gp = unbroadcast(b, b.op("Mul", [g, b.op("Mul", [y, log_x])]), p, [x])
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
    """Max/Min: dy goes to the first operand equal to the result, as TF's
    MaximumGrad/MinimumGrad give a tie to x (x >= y), so tf.maximum(x, 0.) at 0 passes
    the gradient to x, and Max(x, x) has gradient dy, not 2 dy.

    Where the result is NaN no operand equals it and every gradient is 0.
    """
    def rule(b, op, grads):
        (g,) = grads
        y = op.outputs[0]
        xs = op.inputs
        hits, taken = [], None
        for x in xs:
            hit = b.op("Equal", [x, y])
            if taken is not None:
                first = b.op("And", [hit, b.op("Not", [taken])])
                taken = b.op("Or", [taken, hit])
                hit = first
            else:
                taken = hit
            hits.append(b.op("Cast", [hit], {"to": _onnx_float(y)}))
        return [unbroadcast(b, b.op("Mul", [g, h]), x,
                            [o for j, o in enumerate(xs) if j != i])
                for i, (x, h) in enumerate(zip(xs, hits))]
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
    """y = min(max(x, lo), hi), the kernel's semantics (all hi when lo > hi). Each dy
    goes to exactly one input: x where lo <= x <= hi (a tie with a bound goes to x),
    lo where x < lo <= hi, hi where max(x, lo) > hi; a bound (one value) gets the sum
    of its dy.
    """
    (g,) = grads
    x = op.inputs[0]
    bounds = [op.inputs[i] if len(op.inputs) > i else None for i in (1, 2)]
    # the bounds are one value of any rank: compare as 0-d so no mask widens x's shape
    lo, hi = [_as_scalar(b, t) for t in bounds]
    masks = [b.op(cmp, [x, bound]) for bound, cmp in ((lo, "GreaterOrEqual"),
                                                       (hi, "LessOrEqual"))
             if bound is not None]
    if not masks:
        return [g] + [None] * (len(op.inputs) - 1)
    zero = b.op("ZerosLike", [g])
    mask = masks[0] if len(masks) == 1 else b.op("And", masks)
    out = [b.op("Where", [mask, g, zero])]
    if len(op.inputs) > 1:
        lo_mask = None if lo is None else b.op("Less", [x, lo])
        if lo_mask is not None and hi is not None:
            lo_mask = b.op("And", [lo_mask, b.op("LessOrEqual", [lo, hi])])
        out.append(_bound_grad(b, g, zero, bounds[0], lo_mask))
    if len(op.inputs) > 2:
        above = x if lo is None else b.op("Max", [x, lo])
        hi_mask = None if hi is None else b.op("Greater", [above, hi])
        out.append(_bound_grad(b, g, zero, bounds[1], hi_mask))
    return out

def _as_scalar(b, t):
    """A one-value tensor as 0-d (None stays None)."""
    if t is None or t.shape == ():
        return t
    return b.op("Reshape", [t, b.constant_ints([])])

def _bound_grad(b, g, zero, bound, mask):
    """A Clip bound's gradient: the sum of dy where mask, shaped like the bound (one
    value, 0-d or of any rank: the kernel reads it as a scalar)."""
    if bound is None or bound.dtype.numpy.kind != "f":
        return None
    total = b.op("ReduceSum", [b.op("Where", [mask, g, zero])], {"keepdims": 0})
    return total if bound.shape == () else b.op("Reshape", [total, b.op("Shape", [bound])])

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

"""Gradients of the special-function ops (special.py), TensorFlow's formulas
(math_grad.py) as graph nodes:

- Lgamma: digamma(x); Digamma: polygamma(1, x); Polygamma(n, x): polygamma(n + 1, x).
- Zeta(s, q): -s zeta(s + 1, q) for q.
- Igamma(a, x): x^(a-1) e^-x / Gamma(a) for x, in log space as TF; Igammac: its
  negative.
- Betainc(a, b, x): x^(a-1) (1-x)^(b-1) / B(a, b) for x, in log space as TF.
- Erfinv: sqrt(pi)/2 e^(y^2); Erfcinv: -sqrt(pi)/2 e^(y^2); Ndtri: sqrt(2 pi) e^(y^2/2).
- BesselI0: i1; BesselI0e: i1e - sign(x) y; BesselI1: i0 - y/x (1 at 0);
  BesselI1e: i0e - y (sign(x) + 1/x) (1/2 at 0).
- Xlog1py(x, y): log1p(y) where x != 0 (else 0) for x, x / (1 + y) (0 where x is 0)
  for y.

As in TF there is none for Polygamma's order, Zeta's s, Betainc's a and b; unlike TF
none for Igamma/Igammac's a either (TF's IgammaGradA is not implemented): those
entries are None.
"""

from __future__ import annotations

import math

from .grad_util import like_dtype, unbroadcast

_OG = "onegraph"


def _op(b, name, inputs):
    return b.op(name, inputs, domain=_OG)


def _mul(b, g, d):
    return b.op("Mul", [g, d])


def _lgamma(b, op, grads):
    return [_mul(b, grads[0], _op(b, "Digamma", [op.inputs[0]]))]


def _digamma(b, op, grads):
    x = op.inputs[0]
    return [_mul(b, grads[0], _op(b, "Polygamma", [like_dtype(b, 1.0, x), x]))]


def _polygamma(b, op, grads):
    n, x = op.inputs
    d = _op(b, "Polygamma", [b.op("Add", [n, like_dtype(b, 1.0, n)]), x])
    return [None, unbroadcast(b, _mul(b, grads[0], d), x, [n])]


def _zeta(b, op, grads):
    s, q = op.inputs
    d = b.op("Neg", [b.op("Mul", [s, _op(b, "Zeta", [b.op("Add", [s, like_dtype(b, 1.0, s)]),
                                                       q])])])
    return [None, unbroadcast(b, _mul(b, grads[0], d), q, [s])]


def _igamma_dx(b, a, x):
    """exp(-x + (a - 1) log x - lgamma(a))."""
    am1 = b.op("Sub", [a, like_dtype(b, 1.0, a)])
    expo = b.op("Sub", [b.op("Add", [b.op("Neg", [x]), b.op("Mul", [am1, b.op("Log", [x])])]),
                        _op(b, "Lgamma", [a])])
    return b.op("Exp", [expo])


def _igamma(b, op, grads):
    a, x = op.inputs
    return [None, unbroadcast(b, _mul(b, grads[0], _igamma_dx(b, a, x)), x, [a])]


def _igammac(b, op, grads):
    a, x = op.inputs
    d = b.op("Neg", [_igamma_dx(b, a, x)])
    return [None, unbroadcast(b, _mul(b, grads[0], d), x, [a])]


def _xlogy(b, u, v):
    """u log v, 0 where u is 0 (TF's xlogy)."""
    zero = like_dtype(b, 0.0, u)
    is_zero = b.op("Equal", [u, zero])
    safe = b.op("Where", [is_zero, like_dtype(b, 1.0, v), v])
    return b.op("Where", [is_zero, b.op("Mul", [u, zero]), b.op("Mul", [u, b.op("Log", [safe])])])


def _betainc(b, op, grads):
    a, bb, x = op.inputs
    one = like_dtype(b, 1.0, x)
    log_beta = b.op("Sub", [b.op("Add", [_op(b, "Lgamma", [a]), _op(b, "Lgamma", [bb])]),
                            _op(b, "Lgamma", [b.op("Add", [a, bb])])])
    expo = b.op("Add", [_op(b, "Xlog1py", [b.op("Sub", [bb, one]), b.op("Neg", [x])]),
                        _xlogy(b, b.op("Sub", [a, one]), x)])
    d = b.op("Exp", [b.op("Sub", [expo, log_beta])])
    return [None, None, unbroadcast(b, _mul(b, grads[0], d), x, [a, bb])]


def _exp_square(b, y, scale, half=False):
    sq = b.op("Mul", [y, y])
    if half:
        sq = b.op("Mul", [sq, like_dtype(b, 0.5, y)])
    return b.op("Mul", [like_dtype(b, scale, y), b.op("Exp", [sq])])


def _erfinv(b, op, grads):
    return [_mul(b, grads[0], _exp_square(b, op.outputs[0], math.sqrt(math.pi) / 2))]


def _erfcinv(b, op, grads):
    return [_mul(b, grads[0], _exp_square(b, op.outputs[0], -math.sqrt(math.pi) / 2))]


def _ndtri(b, op, grads):
    return [_mul(b, grads[0], _exp_square(b, op.outputs[0], math.sqrt(2 * math.pi), True))]


def _bessel_i0(b, op, grads):
    return [_mul(b, grads[0], _op(b, "BesselI1", [op.inputs[0]]))]


def _bessel_i0e(b, op, grads):
    x, y = op.inputs[0], op.outputs[0]
    d = b.op("Sub", [_op(b, "BesselI1e", [x]), b.op("Mul", [b.op("Sign", [x]), y])])
    return [_mul(b, grads[0], d)]


def _at_zero(b, x, value, other):
    """value where x == 0, else other (the formulas divide by x)."""
    return b.op("Where", [b.op("Equal", [x, like_dtype(b, 0.0, x)]), like_dtype(b, value, x),
                          other])


def _bessel_i1(b, op, grads):
    x, y = op.inputs[0], op.outputs[0]
    d = b.op("Sub", [_op(b, "BesselI0", [x]), b.op("Div", [y, x])])
    return [_mul(b, grads[0], _at_zero(b, x, 1.0, d))]


def _bessel_i1e(b, op, grads):
    x, y = op.inputs[0], op.outputs[0]
    d = b.op("Sub", [_op(b, "BesselI0e", [x]),
                     b.op("Mul", [y, b.op("Add", [b.op("Sign", [x]), b.op("Reciprocal", [x])])])])
    return [_mul(b, grads[0], _at_zero(b, x, 0.5, d))]


def _xlog1py(b, op, grads):
    (g,) = grads
    x, y = op.inputs
    zero = like_dtype(b, 0.0, x)
    x_zero = b.op("Equal", [x, zero])
    nonzero = b.op("Where", [x_zero, zero, like_dtype(b, 1.0, x)])
    gx = _op(b, "Xlog1py", [nonzero, y])
    y1 = b.op("Add", [y, like_dtype(b, 1.0, y)])
    safe = b.op("Where", [x_zero, like_dtype(b, 1.0, y), y1])
    gy = b.op("Where", [x_zero, b.op("Mul", [x, zero]), b.op("Div", [x, safe])])
    return [unbroadcast(b, _mul(b, g, gx), x, [y]), unbroadcast(b, _mul(b, g, gy), y, [x])]


GRADIENTS = {
    (_OG, "Lgamma"): _lgamma, (_OG, "Digamma"): _digamma, (_OG, "Polygamma"): _polygamma,
    (_OG, "Zeta"): _zeta, (_OG, "Igamma"): _igamma, (_OG, "Igammac"): _igammac,
    (_OG, "Betainc"): _betainc, (_OG, "Erfinv"): _erfinv, (_OG, "Erfcinv"): _erfcinv,
    (_OG, "Ndtri"): _ndtri, (_OG, "BesselI0"): _bessel_i0, (_OG, "BesselI0e"): _bessel_i0e,
    (_OG, "BesselI1"): _bessel_i1, (_OG, "BesselI1e"): _bessel_i1e,
    (_OG, "Xlog1py"): _xlog1py,
}

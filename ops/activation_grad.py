"""Gradient rules of the activation family (see `ops/registry.py`, gradient contract).

Relu, Sigmoid, Tanh, Softmax and LogSoftmax use fused `onegraph` gradient kernels that
read the forward *output*; the others are built from elementwise ops.
"""

from __future__ import annotations

import math

from .grad_util import like_dtype, unbroadcast


def _from_output(kernel):
    def rule(b, op, grads):
        return [b.op(kernel, [grads[0], op.outputs[0]])]
    return rule


def _axis_from_output(kernel):
    def rule(b, op, grads):
        return [b.op(kernel, [grads[0], op.outputs[0]], {"axis": op.attrs["axis"]})]
    return rule


def _where_negative(b, x, g, neg_value):
    """g where x >= 0, neg_value where x < 0."""
    return b.op("Where", [b.op("Less", [x, like_dtype(b, 0.0, x)]), neg_value, g])


def _leaky_relu(b, op, grads):
    """dy where x > 0, alpha dy elsewhere (TF's LeakyReluGrad: alpha at 0 too)."""
    (g,) = grads
    x = op.inputs[0]
    alpha = like_dtype(b, op.attrs["alpha"], x)
    positive = b.op("Greater", [x, like_dtype(b, 0.0, x)])
    return [b.op("Where", [positive, g, b.op("Mul", [g, alpha])])]


def _elu(b, op, grads):
    (g,) = grads
    x, y = op.inputs[0], op.outputs[0]
    alpha = like_dtype(b, op.attrs["alpha"], x)
    return [_where_negative(b, x, g, b.op("Mul", [g, b.op("Add", [y, alpha])]))]


def _selu(b, op, grads):
    (g,) = grads
    x, y = op.inputs[0], op.outputs[0]
    gamma = like_dtype(b, op.attrs["gamma"], x)
    ag = like_dtype(b, op.attrs["alpha"] * op.attrs["gamma"], x)
    pos = b.op("Mul", [g, gamma])
    neg = b.op("Mul", [g, b.op("Add", [y, ag])])
    # x = 0 takes the linear side's slope, as TF's SeluGrad (outputs < 0 only)
    below = b.op("Less", [x, like_dtype(b, 0.0, x)])
    return [b.op("Where", [below, neg, pos])]


def _celu(b, op, grads):
    (g,) = grads
    x = op.inputs[0]
    # y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)): slope exp(x / alpha) below 0
    slope = b.op("Exp", [b.op("Div", [x, like_dtype(b, op.attrs["alpha"], x)])])
    return [_where_negative(b, x, g, b.op("Mul", [g, slope]))]


def _shrink(b, op, grads):
    (g,) = grads
    x = op.inputs[0]
    lambd = op.attrs["lambd"]
    outside = b.op("Or", [b.op("Less", [x, like_dtype(b, -lambd, x)]),
                          b.op("Greater", [x, like_dtype(b, lambd, x)])])
    return [b.op("Where", [outside, g, b.op("ZerosLike", [g])])]


def _hardmax(b, op, grads):
    # piecewise constant: the gradient is zero almost everywhere
    return [b.op("ZerosLike", [op.inputs[0]])]


def _softplus(b, op, grads):
    return [b.op("Mul", [grads[0], b.op("Sigmoid", [op.inputs[0]])])]


def _softsign(b, op, grads):
    x = op.inputs[0]
    d = b.op("Add", [like_dtype(b, 1.0, x), b.op("Abs", [x])])
    return [b.op("Div", [grads[0], b.op("Mul", [d, d])])]


def _hard_sigmoid(b, op, grads):
    (g,) = grads
    x = op.inputs[0]
    alpha, beta = op.attrs["alpha"], op.attrs["beta"]
    z = b.op("Add", [b.op("Mul", [x, like_dtype(b, alpha, x)]), like_dtype(b, beta, x)])
    inside = b.op("And", [b.op("Greater", [z, like_dtype(b, 0.0, x)]),
                          b.op("Less", [z, like_dtype(b, 1.0, x)])])
    return [b.op("Where", [inside, b.op("Mul", [g, like_dtype(b, alpha, x)]),
                           b.op("ZerosLike", [g])])]


def _hard_swish(b, op, grads):
    (g,) = grads
    x = op.inputs[0]
    # y = x * clip(x/6 + 1/2, 0, 1): slope 0 below -3, x/3 + 1/2 inside, 1 above 3
    slope = b.op("Add", [b.op("Div", [x, like_dtype(b, 3.0, x)]), like_dtype(b, 0.5, x)])
    slope = b.op("Where", [b.op("Less", [x, like_dtype(b, -3.0, x)]),
                           b.op("ZerosLike", [x]), slope])
    slope = b.op("Where", [b.op("Greater", [x, like_dtype(b, 3.0, x)]),
                           b.op("OnesLike", [x]), slope])
    return [b.op("Mul", [g, slope])]


def _gelu(b, op, grads):
    (g,) = grads
    x = op.inputs[0]
    if op.attrs["approximate"] != "none":
        return [_gelu_tanh(b, x, g)]
    # d/dx x*Phi(x) = Phi(x) + x*phi(x)
    cdf = b.op("Mul", [like_dtype(b, 0.5, x), b.op("Add", [
        like_dtype(b, 1.0, x), b.op("Erf", [b.op("Mul", [x, like_dtype(b, 1 / math.sqrt(2),
                                                                         x)])])])])
    pdf = b.op("Mul", [like_dtype(b, 1 / math.sqrt(2 * math.pi), x),
                       b.op("Exp", [b.op("Mul", [b.op("Mul", [x, x]),
                                                 like_dtype(b, -0.5, x)])])])
    return [b.op("Mul", [g, b.op("Add", [cdf, b.op("Mul", [x, pdf])])])]


def _gelu_tanh(b, x, g):
    c = math.sqrt(2 / math.pi)
    x2 = b.op("Mul", [x, x])
    inner = b.op("Mul", [like_dtype(b, c, x), b.op("Add", [
        x, b.op("Mul", [like_dtype(b, 0.044715, x), b.op("Mul", [x2, x])])])])
    t = b.op("Tanh", [inner])
    one = like_dtype(b, 1.0, x)
    dinner = b.op("Mul", [like_dtype(b, c, x), b.op("Add", [
        one, b.op("Mul", [like_dtype(b, 3 * 0.044715, x), x2])])])
    sech2 = b.op("Sub", [one, b.op("Mul", [t, t])])
    d = b.op("Add", [b.op("Mul", [like_dtype(b, 0.5, x), b.op("Add", [one, t])]),
                     b.op("Mul", [b.op("Mul", [like_dtype(b, 0.5, x), x]),
                                  b.op("Mul", [sech2, dinner])])])
    return b.op("Mul", [g, d])


def _prelu(b, op, grads):
    (g,) = grads
    x, slope = op.inputs
    neg = b.op("Less", [x, like_dtype(b, 0.0, x)])
    zero = b.op("ZerosLike", [g])
    gx = b.op("Where", [neg, b.op("Mul", [g, slope]), g])
    gs = b.op("Where", [neg, b.op("Mul", [g, x]), zero])
    return [gx, unbroadcast(b, gs, slope, [x])]


def _thresholded_relu(b, op, grads):
    (g,) = grads
    x = op.inputs[0]
    above = b.op("Greater", [x, like_dtype(b, op.attrs["alpha"], x)])
    return [b.op("Where", [above, g, b.op("ZerosLike", [g])])]


def _mish(b, op, grads):
    (g,) = grads
    x = op.inputs[0]
    sp = b.op("Softplus", [x])
    t = b.op("Tanh", [sp])
    one = like_dtype(b, 1.0, x)
    d = b.op("Add", [t, b.op("Mul", [b.op("Mul", [x, b.op("Sub", [one, b.op("Mul", [t, t])])]),
                                     b.op("Sigmoid", [x])])])
    return [b.op("Mul", [g, d])]


GRADIENTS = {
    "Celu": _celu, "Elu": _elu, "Gelu": _gelu, "HardSigmoid": _hard_sigmoid,
    "HardSwish": _hard_swish, "Hardmax": _hardmax,
    "LeakyRelu": _leaky_relu, "LogSoftmax": _axis_from_output("LogSoftmaxGrad"),
    "Mish": _mish, "PRelu": _prelu, "Relu": _from_output("ReluGrad"), "Selu": _selu,
    "Shrink": _shrink,
    "Sigmoid": _from_output("SigmoidGrad"), "Softmax": _axis_from_output("SoftmaxGrad"),
    "Softplus": _softplus, "Softsign": _softsign, "Tanh": _from_output("TanhGrad"),
    "ThresholdedRelu": _thresholded_relu,
}

"""Gradient rules of the onegraph-domain helper ops (AddN, IdentityN, the fused losses,
variable reads) and of the gradient helpers that second-order gradients pass through
(OnesLike/ZerosLike, SumToShapeOf/BroadcastLike, ReduceGrad of sums and means, the
Relu/Sigmoid/Tanh/Softmax/LogSoftmax gradient kernels, ConvGradInput/ConvGradFilter,
ConvTransposeGradInput/ConvTransposeGradFilter, AveragePoolGrad, MaxPoolGrad and
MaxPoolGradGrad)."""

from __future__ import annotations

from ..errors import GradientNotDefinedError
from .conv_grad import _GEOMETRY as _CONV
from .conv_grad import _TRANSPOSE_GEOMETRY as _CONV_TRANSPOSE
from .pool_grad import _POOL


def _add_n(b, op, grads):
    return [grads[0]] * len(op.inputs)


def _identity_n(b, op, grads):
    return list(grads)


def _row_sum(b, x, axis=-1):
    return b.op("ReduceSum", [x, b.constant_ints([axis])], {"keepdims": 1})


def _add(b, a, c):
    return c if a is None else a if c is None else b.op("Add", [a, c])


def _softmax_vjp(b, logits, g):
    """g pulled back through softmax(logits) along the last axis: p * (g - <g, p>)."""
    p = b.op("Softmax", [logits], {"axis": -1})
    return b.op("Mul", [p, b.op("Sub", [g, _row_sum(b, b.op("Mul", [g, p]))])])


def _xent(b, op, grads):
    # loss = -log p[label]: dlogits = backprop * g. backprop = p - onehot(label) is an
    # output too (first-order gradients are built from it), so a second-order gradient
    # arrives there and goes back through the softmax.
    g, g_backprop = grads[0], grads[1] if len(grads) > 1 else None
    d_logits = None
    if g is not None:
        d_logits = b.op("Mul", [op.outputs[1], b.op("Unsqueeze", [g, b.constant_ints([-1])])])
    if g_backprop is not None:
        d_logits = _add(b, d_logits, _softmax_vjp(b, op.inputs[0], g_backprop))
    return [d_logits, None]


def _dense_xent(b, op, grads):
    # loss = -sum(labels * log p), backprop = p * sum(labels) - labels
    g, g_backprop = grads[0], grads[1] if len(grads) > 1 else None
    logits, labels = op.inputs
    d_logits = d_labels = None
    if g is not None:
        g_col = b.op("Unsqueeze", [g, b.constant_ints([-1])])
        d_logits = b.op("Mul", [op.outputs[1], g_col])
        d_labels = b.op("Mul", [b.op("Neg", [b.op("LogSoftmax", [logits], {"axis": -1})]),
                                g_col])
    if g_backprop is not None:
        total = _row_sum(b, labels)
        d_logits = _add(b, d_logits, b.op("Mul", [_softmax_vjp(b, logits, g_backprop), total]))
        p = b.op("Softmax", [logits], {"axis": -1})
        d_labels = _add(b, d_labels, b.op("Sub", [_row_sum(b, b.op("Mul", [g_backprop, p])),
                                                  g_backprop]))
    return [d_logits, d_labels]


def _not_differentiable(b, op, grads):
    """Outputs that depend on the input's shape only (OnesLike, ZerosLike)."""
    return [None] * len(op.inputs)


def _reduce_grad(b, op, grads):
    # ReduceGrad(dy, x, y, axes) of a sum or mean is linear in dy alone: its transpose
    # reduces the incoming gradient the same way (a mean divides by the count again).
    # The other modes depend on x and y nonlinearly.
    mode = op.attrs.get("mode", "sum")
    if mode not in ("sum", "mean"):
        raise GradientNotDefinedError(
            f"no second-order gradient through ReduceGrad of mode {mode!r} (node "
            f"{op.name!r}); only sums and means")
    (g,) = grads
    dy, x = op.inputs[0], op.inputs[1]
    if len(op.inputs) > 3 and op.inputs[3] is not None:
        axes = [op.inputs[3]]
    elif op.attrs.get("axes") is not None:
        axes = [b.constant_ints(op.attrs["axes"])]
    else:
        axes = []
    summed = b.op("ReduceSum", [g] + axes,
                  {"keepdims": 1, "noop_with_empty_axes": op.attrs.get("noop_with_empty_axes", 0)})
    d_dy = b.op("Reshape", [summed, b.op("Shape", [dy])])
    if mode == "mean":
        count = b.op("CastLike", [b.op("Div", [b.op("Size", [x]), b.op("Size", [dy])]), dy])
        d_dy = b.op("Div", [d_dy, count])
    return [d_dy, None, None] + [None] * (len(op.inputs) - 3)


def _sum_to_shape_of(b, op, grads):
    # summing down to a shape is the transpose of broadcasting up to it
    return [b.op("BroadcastLike", [grads[0], op.inputs[0]]), None]


def _broadcast_like(b, op, grads):
    return [b.op("SumToShapeOf", [grads[0], op.inputs[0]]), None]


def _relu_grad(b, op, grads):
    # dx = dy * (y > 0): linear in dy, piecewise constant in y
    return [b.op("ReluGrad", [grads[0], op.inputs[1]]), None]


def _sigmoid_grad(b, op, grads):
    # dx = dy * y (1 - y)
    (g,), (dy, y) = grads, op.inputs
    one = b.op("OnesLike", [y])
    d_y = b.op("Mul", [b.op("Mul", [g, dy]),
                       b.op("Sub", [one, b.op("Add", [y, y])])])
    return [b.op("SigmoidGrad", [g, y]), d_y]


def _tanh_grad(b, op, grads):
    # dx = dy * (1 - y^2)
    (g,), (dy, y) = grads, op.inputs
    d_y = b.op("Neg", [b.op("Mul", [b.op("Mul", [g, dy]), b.op("Add", [y, y])])])
    return [b.op("TanhGrad", [g, y]), d_y]


def _softmax_grad(b, op, grads):
    # dx = y * (dy - s), s = sum(dy * y): d dy = y * (g - t) with t = sum(g * y), and
    # d y = g * (dy - s) - t * dy
    (g,), (dy, y) = grads, op.inputs
    axis = op.attrs.get("axis", -1)
    s = _row_sum(b, b.op("Mul", [dy, y]), axis)
    t = _row_sum(b, b.op("Mul", [g, y]), axis)
    d_dy = b.op("Mul", [y, b.op("Sub", [g, t])])
    d_y = b.op("Sub", [b.op("Mul", [g, b.op("Sub", [dy, s])]), b.op("Mul", [t, dy])])
    return [d_dy, d_y]


def _log_softmax_grad(b, op, grads):
    # dx = dy - p * S with p = exp(y), S = sum(dy): d dy = g - sum(g * p) and
    # d y = -g * p * S
    (g,), (dy, y) = grads, op.inputs
    axis = op.attrs.get("axis", -1)
    gp = b.op("Mul", [g, b.op("Exp", [y])])
    d_dy = b.op("Sub", [g, _row_sum(b, gp, axis)])
    d_y = b.op("Neg", [b.op("Mul", [gp, _row_sum(b, dy, axis)])])
    return [d_dy, d_y]


# The conv and pool gradient kernels are linear in the gradient they carry (and the
# conv ones in the weights), so their own gradients are the forward ops again: with
# <g, ConvGradInput(dy; w)> = <Conv(g; w), dy> = <g, ...>, and ConvGradFilter(x, dy) the
# w-gradient of <Conv(x; w), dy>. WGAN-GP's gradient penalty differentiates through
# them. Inputs that give only a shape (x of ConvGradInput, w of ConvGradFilter) or
# where the result is piecewise constant (MaxPoolGrad's x) get no gradient.
_AVERAGE_POOL = ("auto_pad", "ceil_mode", "count_include_pad", "dilations",
                 "kernel_shape", "pads", "strides")


def _picked(op, names):
    return {k: v for k, v in op.attrs.items() if k in names and v is not None}


def _conv_grad_input_grad(b, op, grads):
    (g,), (dy, w, _) = grads, op.inputs
    attrs = _picked(op, _CONV)
    return [b.op("Conv", [g, w], attrs), b.op("ConvGradFilter", [g, dy, w], attrs), None]


def _conv_grad_filter_grad(b, op, grads):
    (g,), (x, dy, _) = grads, op.inputs
    attrs = _picked(op, _CONV)
    return [b.op("ConvGradInput", [dy, g, x], attrs), b.op("Conv", [x, g], attrs), None]


# The same holds for ConvTranspose's helpers: ConvTransposeGradInput(dy; w) is the adjoint
# of ConvTranspose(.; w), so its own adjoint is that ConvTranspose, and
# ConvTransposeGradFilter(dy, x) the w-gradient of <ConvTranspose(x; w), dy>.
def _conv_transpose_grad_input_grad(b, op, grads):
    (g,), (dy, w, _) = grads, op.inputs
    attrs = _picked(op, _CONV_TRANSPOSE)
    return [b.op("ConvTranspose", [g, w], attrs),
            b.op("ConvTransposeGradFilter", [dy, g, w], attrs), None]


def _conv_transpose_grad_filter_grad(b, op, grads):
    (g,), (dy, x, _) = grads, op.inputs
    attrs = _picked(op, _CONV_TRANSPOSE)
    return [b.op("ConvTranspose", [x, g], attrs),
            b.op("ConvTransposeGradInput", [dy, g, x], attrs), None]


def _average_pool_grad_grad(b, op, grads):
    return [None, b.op("AveragePool", [grads[0]], _picked(op, _AVERAGE_POOL))]


def _max_pool_grad_grad(b, op, grads):
    return [None, b.op("MaxPoolGradGrad", [op.inputs[0], grads[0]], _picked(op, _POOL))]


def _max_pool_grad_grad_grad(b, op, grads):
    # MaxPoolGradGrad reads g at each window's first maximum: linear in g
    return [None, b.op("MaxPoolGrad", [op.inputs[0], grads[0]], _picked(op, _POOL))]


def _read_variable(b, op, grads):
    # the variable itself has no gradient input; a read inside control flow sends it
    # to its `gradient_to` input (the read outside, carried in)
    return [None] + [grads[0]] * (len(op.inputs) - 1)


GRADIENTS = {
    ("onegraph", "AddN"): _add_n,
    ("onegraph", "IdentityN"): _identity_n,
    ("onegraph", "ReadVariable"): _read_variable,
    ("onegraph", "SoftmaxCrossEntropyWithLogits"): _dense_xent,
    ("onegraph", "SparseSoftmaxCrossEntropyWithLogits"): _xent,
    ("onegraph", "OnesLike"): _not_differentiable,
    ("onegraph", "ZerosLike"): _not_differentiable,
    ("onegraph", "ReduceGrad"): _reduce_grad,
    ("onegraph", "SumToShapeOf"): _sum_to_shape_of,
    ("onegraph", "BroadcastLike"): _broadcast_like,
    ("onegraph", "ReluGrad"): _relu_grad,
    ("onegraph", "SigmoidGrad"): _sigmoid_grad,
    ("onegraph", "TanhGrad"): _tanh_grad,
    ("onegraph", "SoftmaxGrad"): _softmax_grad,
    ("onegraph", "LogSoftmaxGrad"): _log_softmax_grad,
    ("onegraph", "ConvGradInput"): _conv_grad_input_grad,
    ("onegraph", "ConvGradFilter"): _conv_grad_filter_grad,
    ("onegraph", "ConvTransposeGradInput"): _conv_transpose_grad_input_grad,
    ("onegraph", "ConvTransposeGradFilter"): _conv_transpose_grad_filter_grad,
    ("onegraph", "AveragePoolGrad"): _average_pool_grad_grad,
    ("onegraph", "MaxPoolGrad"): _max_pool_grad_grad,
    ("onegraph", "MaxPoolGradGrad"): _max_pool_grad_grad_grad,
}

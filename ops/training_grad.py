"""Gradient rules of the onegraph-domain helper ops (AddN, IdentityN, the fused losses,
variable reads)."""

from __future__ import annotations


def _add_n(b, op, grads):
    return [grads[0]] * len(op.inputs)


def _identity_n(b, op, grads):
    return list(grads)


def _xent(b, op, grads):
    g = grads[0]
    if g is None:
        return [None, None]
    backprop = op.outputs[1]
    scaled = b.op("Mul", [backprop, b.op("Unsqueeze", [g, b.constant_ints([-1])])])
    return [scaled, None]


def _dense_xent(b, op, grads):
    g = grads[0]
    if g is None:
        return [None, None]
    g_col = b.op("Unsqueeze", [g, b.constant_ints([-1])])
    logits = op.inputs[0]
    d_labels = b.op("Mul", [b.op("Neg", [b.op("LogSoftmax", [logits], {"axis": -1})]), g_col])
    return [b.op("Mul", [op.outputs[1], g_col]), d_labels]


def _read_variable(b, op, grads):
    return [None]


GRADIENTS = {
    ("onegraph", "AddN"): _add_n,
    ("onegraph", "IdentityN"): _identity_n,
    ("onegraph", "ReadVariable"): _read_variable,
    ("onegraph", "SoftmaxCrossEntropyWithLogits"): _dense_xent,
    ("onegraph", "SparseSoftmaxCrossEntropyWithLogits"): _xent,
}

"""og.import_graph_def's converters for TF1 state: variables, their writes, and the
optimizer apply ops (and the two gradient helpers a minimize() graph needs).

A VariableV2 or VarHandleOp becomes an og.Variable of its shape and dtype, holding
zeros until its initializer (TF's "<variable>/Assign") runs or a checkpoint is restored:
that Assign is made the Variable's initializer, so global_variables_initializer gives
TF's initial values. The node's output stands for the variable: a ref VariableV2 reads
its value there (Identity "w/read" works on it), and every state op finds its Variable
from that tensor. The apply ops follow TF's kernels (training_ops.cc):
GradientDescent var -= lr * grad; Momentum accum = accum * momentum + grad,
var -= lr * accum (Nesterov: var -= lr * grad + lr * momentum * accum); Adam
lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t), m += (grad - m) * (1 - beta1),
v += (grad^2 - v) * (1 - beta2), var -= lr_t * m / (sqrt(v) + epsilon).
"""

from __future__ import annotations

import weakref

import numpy as np

from ..errors import ConversionError

__all__ = ["STATE_CONVERTERS", "imported_variables"]

# graph -> {tensor index of a variable node's output: (og Variable, TF node name)}
_VARIABLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _og():
    from . import public    # og's namespace; imported late as public.py imports this
    return public


def imported_variables(graph) -> dict:
    """{TF variable node name: og Variable} of the variables imported into `graph`
    (in import order). Never raises."""
    return {name: v for v, name in _VARIABLES.get(graph, {}).values()}


def _variable(node, ins, ctx):
    """VariableV2 / VarHandleOp -> a zero-filled og.Variable (in no collection: the
    meta graph's collections say where it belongs); its output stands for it."""
    og = _og()
    shape, dtype = node.get("shape"), node.get("dtype")
    if shape is None or dtype is None or any(d is None or d < 0 for d in shape):
        raise ConversionError(f"node {node.name!r} ({node.op}): og's importer needs a fully "
                              f"known shape and dtype, got shape {shape} dtype {dtype}")
    zeros = np.zeros([int(d) for d in shape], np.dtype(dtype))
    var = og.Variable(zeros, trainable=False, collections=[], name=ctx.name)
    out = var.value()
    _VARIABLES.setdefault(ctx.graph, {})[out.tensor_index] = (var, node.name)
    return out


def _of(node, t, ctx):
    """(og Variable, TF name) that input `t` stands for.

    Raises:
        ConversionError: `t` is not an imported variable's output.
    """
    found = _VARIABLES.get(ctx.graph, {}).get(getattr(t, "tensor_index", None))
    if found is None:
        raise ConversionError(f"node {node.name!r} ({node.op}): its first input is not a "
                              "variable (VariableV2 / VarHandleOp) og's importer built")
    return found


def _assign(resource: bool):
    """Assign / AssignVariableOp; TF's "<variable>/Assign" becomes the initializer."""
    def convert(node, ins, ctx):
        var, name = _of(node, ins[0], ctx)
        value = _og().convert_to_tensor(ins[1])
        if node.name == f"{name}/Assign" and var.initializer.name.endswith("/Assign"):
            graph = var.graph
            new = graph.op("Assign", [var.handle, value], name=ctx.name)
            names = graph.get_collection_ref("_initializer_names")
            if var.initializer.name in names:
                names[names.index(var.initializer.name)] = new.op.name
            var.initializer, var.initial_value = new.op, value
        else:
            new = var.assign(value, name=ctx.name)
        return new.op if resource else new
    return convert


def _update(method: str, resource: bool):
    """AssignAdd / AssignSub and their resource forms."""
    def convert(node, ins, ctx):
        var, _ = _of(node, ins[0], ctx)
        new = getattr(var, method)(ins[1], name=ctx.name)
        return new.op if resource else new
    return convert


def _read(node, ins, ctx):
    """ReadVariableOp: a fresh read, after the node's control inputs."""
    var, _ = _of(node, ins[0], ctx)
    return _og().identity(var.read_value(), name=ctx.name)


def _is_initialized(node, ins, ctx):
    var, _ = _of(node, ins[0], ctx)
    return var.is_initialized(name=ctx.name)


def _done(new, resource: bool):
    return new.op if resource else new


def _gradient_descent(resource: bool):
    def convert(node, ins, ctx):
        var, _ = _of(node, ins[0], ctx)
        return _done(var.assign_sub(ins[1] * ins[2], name=ctx.name), resource)
    return convert


def _momentum(resource: bool):
    def convert(node, ins, ctx):
        og = _og()
        var, _ = _of(node, ins[0], ctx)
        accum, _ = _of(node, ins[1], ctx)
        lr, grad, momentum = ins[2], ins[3], ins[4]
        new_accum = accum.assign(accum.read_value() * momentum + grad)
        if node.get("use_nesterov", False):
            step = grad * lr + new_accum * momentum * lr
        else:
            step = lr * new_accum
        with og.control_dependencies([new_accum.op]):
            return _done(var.assign_sub(step, name=ctx.name), resource)
    return convert


def _adam(resource: bool):
    def convert(node, ins, ctx):
        og = _og()
        var, _ = _of(node, ins[0], ctx)
        m, _ = _of(node, ins[1], ctx)
        v, _ = _of(node, ins[2], ctx)
        b1p, b2p, lr, b1, b2, eps, grad = ins[3:10]
        if node.get("use_nesterov", False):
            raise ConversionError(f"node {node.name!r} ({node.op}): use_nesterov Adam is "
                                  "not supported by og's importer")
        lr_t = lr * og.sqrt(1 - b2p) / (1 - b1p)
        new_m = m.assign_add((grad - m.read_value()) * (1 - b1))
        new_v = v.assign_add((grad * grad - v.read_value()) * (1 - b2))
        with og.control_dependencies([new_m.op, new_v.op]):
            step = lr_t * new_m / (og.sqrt(new_v) + eps)
            return _done(var.assign_sub(step, name=ctx.name), resource)
    return convert


def _relu_grad(node, ins, ctx):
    """ReluGrad(gradients, features): the gradients where features > 0, else 0."""
    og = _og()
    grad, features = ins
    return og.where(features > 0, grad, og.zeros_like(grad), name=ctx.name)


def _broadcast_gradient_args(node, ins, ctx):
    """BroadcastGradientArgs(s0, s1): the axes each side's gradient sums over - those
    where its shape (left-padded with 1s to the common rank) is 1.

    Raises:
        ConversionError: a shape input's length is not known while building.
    """
    og = _og()
    lengths = [t.shape[0] if t.shape is not None and len(t.shape) == 1 else None
               for t in ins]
    if None in lengths:
        raise ConversionError(f"node {node.name!r} ({node.op}): og's importer needs the "
                              "ranks of both shapes while building")
    rank = max(lengths)
    outs = []
    for t, n in zip(ins, lengths):
        padded = t if n == rank else og.concat(
            [og.ones([rank - n], dtype=t.dtype), t], axis=0)
        axes = og.where(og.equal(padded, og.ones([rank], dtype=t.dtype)))
        outs.append(og.cast(og.reshape(axes, [-1]), t.dtype))
    return [og.identity(outs[0], name=ctx.name), og.identity(outs[1])]


STATE_CONVERTERS = {
    "VariableV2": _variable, "Variable": _variable, "VarHandleOp": _variable,
    "Assign": _assign(False), "AssignVariableOp": _assign(True),
    "AssignAdd": _update("assign_add", False), "AssignSub": _update("assign_sub", False),
    "AssignAddVariableOp": _update("assign_add", True),
    "AssignSubVariableOp": _update("assign_sub", True),
    "ReadVariableOp": _read, "VarIsInitializedOp": _is_initialized,
    "IsVariableInitialized": _is_initialized,
    "ApplyGradientDescent": _gradient_descent(False),
    "ResourceApplyGradientDescent": _gradient_descent(True),
    "ApplyMomentum": _momentum(False), "ResourceApplyMomentum": _momentum(True),
    "ApplyAdam": _adam(False), "ResourceApplyAdam": _adam(True),
    "ReluGrad": _relu_grad, "BroadcastGradientArgs": _broadcast_gradient_args,
}

"""Rewrite 14 of the Session's plan optimiser: a dense layer as one oneDNN matmul.

When oneDNN is the conv and matmul backend (ops/onednn.py), a MatMul by a constant
float32 (K, N) matrix whose result only an Add of a constant (N,) bias reads, and
that only a Gelu reads (exact or tanh form; the transformer's FFN), becomes one step:
oneDNN's matmul adds the bias and applies the Gelu as it writes the product
(`ops.onednn_matmul`), instead of the product, a pass adding the bias and Gelu's own
pass. A MatMul + bias without the Gelu (attention's projections) becomes one step
too. The step runs the original steps when its input is not a float32 array of at
least two dims or oneDNN declines the product.
"""

from __future__ import annotations

import numpy as np

from ..errors import OneGraphError
from ..ops import REGISTRY, onednn, onednn_matmul
from ..ops.registry import kernel_cache
from .onednn_chains import run_members


def fuse_dense(steps: list, const, protected: set, Step) -> list:
    """The plan's steps with each MatMul + bias Add (+ Gelu) fused, when oneDNN is
    active; `const(i)` is tensor i's constant value or None."""
    try:
        if not onednn.active():
            return steps
    except OneGraphError:  # a bad ONEGRAPH_DNNL: the kernels report it when they run
        return steps
    readers: dict[int, list[int]] = {}
    for k, s in enumerate(steps):
        for i in set(s.inputs):
            readers.setdefault(i, []).append(k)

    def sole_reader(t, op_type):
        k = readers.get(t, ())
        if t in protected or len(k) != 1:
            return None
        s = steps[k[0]]
        node = s.node
        if node.op_type != op_type or node.domain not in ("", "ai.onnx") \
                or s.kernel is not REGISTRY.get(op_type).kernel or len(s.outputs) != 1:
            return None
        return k[0]

    replace, removed = {}, set()
    for k, step in enumerate(steps):
        node = step.node
        if k in removed or node.op_type != "MatMul" or node.domain not in ("", "ai.onnx") \
                or step.kernel is not REGISTRY.get("MatMul").kernel \
                or len(step.inputs) != 2 or len(step.outputs) != 1:
            continue
        w = const(step.inputs[1])
        if w is None or w.dtype != np.float32 or w.ndim != 2 or const(step.inputs[0]) \
                is not None:
            continue
        add = sole_reader(step.outputs[0], "Add")
        if add is None:
            continue
        ins = steps[add].inputs
        bias_index = ins[1] if ins[0] == step.outputs[0] else ins[0]
        bias = const(bias_index)
        if bias is None or bias.dtype != np.float32 or bias.shape != w.shape[1:] \
                or len(ins) != 2 or ins[0] == ins[1]:
            continue
        taken = [add]
        gelu = sole_reader(steps[add].outputs[0], "Gelu")
        activation = None
        if gelu is not None:
            mode = steps[gelu].attrs.get("approximate", "none")
            activation = {"none": "gelu", "tanh": "gelu_tanh"}.get(mode)
            if activation is not None:
                taken.append(gelu)
        members = [step] + [steps[j] for j in taken]
        constants = {step.inputs[1]: w, bias_index: bias}
        replace[k] = Step(_dense_kernel(members, w, bias, activation, constants),
                          step.attrs, (step.inputs[0],), members[-1].outputs, node, (), False)
        removed.update(taken)
    if not replace:
        return steps
    return [replace.get(k, s) for k, s in enumerate(steps) if k not in removed]


def _dense_kernel(members, w, bias, activation, constants):
    (k, n) = w.shape
    x_index, output = members[0].inputs[0], members[-1].outputs[0]

    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        # (oneDNN's Gelu gives NaN for an inf product, Gelu's kernel inf or 0 as the
        # limits are: a non-finite input, the only likely source, runs the steps)
        if type(x) is np.ndarray and x.dtype == np.float32 and x.ndim >= 2 \
                and x.shape[-1] == k and (activation is None or np.isfinite(x).all()):
            rows = x.reshape(-1, k)
            y = onednn_matmul.matmul_constant(rows, w, kernel_cache(attrs), bias,
                                              activation)
            if y is not None:
                return (y.reshape(x.shape[:-1] + (n,)),)
        return run_members(members, (x_index,), (output,), inputs, ctx, constants)
    kernel.members = members
    return kernel

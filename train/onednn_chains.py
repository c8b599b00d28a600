"""Rewrite 13 of the Session's plan optimiser: runs of conv-net steps as oneDNN chains.

When oneDNN is the conv backend (ops/onednn.py), each run of consecutive steps that
`ops.onednn_chain` can hold (fused group-1 Convs with constant float32 weights,
MaxPool, AveragePool, GlobalAveragePool, LRN, Relu, channel Concat, Add or Sum of two
step outputs, inference Dropout) with at least two Convs becomes one step: its values
stay channel-blocked between the steps, and only those read outside the run (or
fetched, fed, kept) come out as NCHW arrays. The step keeps the run's own steps:
inputs that are not finite 4-D float32 arrays, a backend switched off, or a run oneDNN
declines for its input shapes run them one by one, as they would have run without
this rewrite (but for rewrites 4a-12, which come after it).
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, OneGraphError
from ..format.ir import Node
from ..ops import onednn
from ..ops.common import kernel_failure
from ..ops.onednn_chain import ChainOp, ChainProgram, Declined
from ..ops.scratch import begin_kernel

_SIMPLE_OPS = {"MaxPool": "maxpool", "AveragePool": "avgpool",
               "GlobalAveragePool": "globalavgpool", "LRN": "lrn", "Relu": "relu"}
_MIN_CONVS = 2  # one conv alone already runs through oneDNN (ops/onednn.conv_2d)
_PROGRAMS_PER_CHAIN = 4  # input shapes with a program; others run the steps


def onednn_chains(steps: list, const, protected: set, Step) -> list:
    """The plan's steps with each run of chainable steps (two Convs or more) replaced
    by one chain step, when oneDNN is active; `const(i)` is tensor i's constant value
    or None; `protected` values (fetched, fed, kept) always come out of a chain."""
    try:
        if not onednn.active():
            return steps
    except OneGraphError:  # a bad ONEGRAPH_DNNL: the convs report it when they run
        return steps
    produced = {t for s in steps for t in s.outputs}
    readers: dict[int, list[int]] = {}
    for k, s in enumerate(steps):
        for i in s.inputs:
            readers.setdefault(i, []).append(k)
    ops = [_chain_op(s, produced, const,
                     lambda t: t < 0 or t not in protected and t not in readers)
           for s in steps]
    out, start = [], 0
    for end in range(len(steps) + 1):
        if end < len(steps) and ops[end] is not None:
            continue
        run = range(start, end)
        if sum(ops[k].kind == "conv" for k in run) >= _MIN_CONVS:
            out.append(_chain_step(steps, ops, run, readers, protected, const, Step))
        else:
            out.extend(steps[k] for k in run)
        if end < len(steps):
            out.append(steps[end])
        start = end + 1
    return out


def _chain_op(step, produced=frozenset(), const=lambda i: None, unused=lambda t: t < 0):
    """The ChainOp of a step, or None when a chain cannot hold it; `produced`: the
    tensors steps make (an Add of a constant broadcasts: no chain step); `const`: as
    `onednn_chains`'s; `unused(t)`: whether nothing reads, fetches or keeps tensor t
    (a Dropout's mask)."""
    from ..ops.conv import _conv_kernel as registry_conv

    node = step.node
    if node.domain not in ("", "ai.onnx") or step.outputs[0] < 0 or not step.inputs \
            or min(step.inputs[:1]) < 0:
        return None
    if node.op_type == "Dropout" and step.kernel is _registry_kernel(node) \
            and all(unused(t) for t in step.outputs[1:]) \
            and _inference_dropout(step, const):
        return ChainOp("identity", step.inputs[:1], step.outputs[0], step.attrs)
    if max(step.outputs[1:], default=-1) >= 0 or min(step.inputs) < 0:
        return None
    parts = getattr(step.kernel, "conv_parts", None)
    if node.op_type == "Conv" and parts is not None:
        conv, w, b, relu = parts
        group = int(step.attrs.get("group", 1) or 1)
        # grouped convs only with whole channel blocks a group (AlexNet's): oneDNN has
        # no blocked kernel for other widths, and the Session's later rewrites fold
        # ShuffleNet's shuffles and Relus into its grouped and depthwise convs
        if conv is not registry_conv or step.kernel.relu_input or len(step.inputs) != 1 \
                or w.ndim != 4 or w.dtype != np.float32 \
                or group != 1 and (w.shape[1] % 16 or w.shape[0] // group % 16) \
                or b is not None and b.dtype != np.float32:
            return None
        return ChainOp("conv", step.inputs, step.outputs[0], step.attrs, w, b, relu,
                       host=step.kernel)
    if node.op_type in ("Add", "Sum") and len(step.inputs) == 2 \
            and step.inputs[0] != step.inputs[1] and produced.issuperset(step.inputs):
        # the registry's Add or Sum, summing in place or with a Relu fused (rewrite 4)
        kernel, relu = step.kernel, False
        if hasattr(kernel, "add_into"):
            relu = kernel.add_into[1]
        else:
            if hasattr(kernel, "relu_after"):
                kernel, relu = kernel.relu_after, True
            if kernel is not _registry_kernel(node):
                return None
        return ChainOp("add", step.inputs, step.outputs[0], step.attrs, relu=relu,
                       host=step.kernel)
    clip = getattr(step.kernel, "clip", None)
    if node.op_type == "BatchNormalization" and clip is not None \
            and all(const(i) is not None for i in step.inputs[1:]):
        # a BatchNormalization + Relu whose scale went into the next conv (rewrite 4,
        # DenseNet's): max(x, c) or max(x - c, 0) per channel
        bound, one_by_one = clip
        return ChainOp("clip", step.inputs[:1], step.outputs[0], step.attrs,
                       b=bound.astype(np.float32), relu=not one_by_one, host=step.kernel)
    kind = "concat" if node.op_type == "Concat" else _SIMPLE_OPS.get(node.op_type)
    # (a kernel other than the registry's has a Relu or more fused into it)
    if kind is None or kind != "concat" and len(step.inputs) != 1 \
            or step.kernel is not _registry_kernel(node):
        return None
    return ChainOp(kind, step.inputs, step.outputs[0], step.attrs, host=step.kernel)


def _inference_dropout(step, const) -> bool:
    """Whether a Dropout step passes its input through: a constant scalar ratio (or
    none) and training_mode absent or a constant false."""
    ins = list(step.inputs[1:]) + [-1, -1]
    ratio, training = (const(i) if i >= 0 else None for i in ins[:2])
    return (ins[0] < 0 or ratio is not None and ratio.size == 1) \
        and (ins[1] < 0 or training is not None and training.size == 1
             and not training.reshape(-1)[0])


def _registry_kernel(node):
    from ..ops import REGISTRY

    return REGISTRY.get(node.op_type, node.domain).kernel


def _chain_step(steps, ops, run, readers, protected, const, Step):
    """One step running steps[run] as a oneDNN chain."""
    members = [steps[k] for k in run]
    made = {t for s in members for t in s.outputs}
    inputs = []
    for k in run:
        for i in ops[k].inputs:
            if i not in made and i not in inputs:
                inputs.append(i)
    # what the steps read besides (a BatchNormalization's parameters)
    constants = {i: const(i) for s in members for i in s.inputs
                 if i not in made and i not in inputs}
    outputs = [t for t in sorted(made) if t in protected
               or any(k not in run for k in readers.get(t, ()))]
    node = Node("OneDnnChain", list(inputs), list(outputs),
                name=f"oneDNN chain {members[0].node.name}..{members[-1].node.name}",
                domain="ai.onegraph.plan")
    kernel = _chain_kernel([ops[k] for k in run], members, tuple(inputs), tuple(outputs),
                           constants)
    return Step(kernel, {}, tuple(inputs), tuple(outputs), node, (), False)


def _chain_kernel(chain_ops, members, inputs, outputs, constants):
    programs: dict = {}

    def kernel(args, attrs, ctx):
        lib = onednn._active_library()
        # oneDNN's Relu and MaxPool turn NaN into numbers (max(NaN, 0) = 0 in its
        # kernels, where onnxruntime's and the steps' keep it): inputs holding NaN or
        # inf (which a conv may turn into NaN) run the steps
        if lib is not None and all(type(a) is np.ndarray and a.dtype == np.float32
                                   and a.ndim == 4 and np.isfinite(a).all() for a in args):
            key = tuple(a.shape for a in args)
            program = programs.get(key)
            if program is None and len(programs) < _PROGRAMS_PER_CHAIN:
                try:
                    program = ChainProgram(lib, chain_ops, inputs, outputs, key)
                except (Declined, ExecutionError):
                    program = False  # the steps run one by one
                programs[key] = program
            if program:
                return program.run([np.ascontiguousarray(a) for a in args], ctx)
        return run_members(members, inputs, outputs, args, ctx, constants)

    kernel.programs = programs
    kernel.members = members
    return kernel


def run_members(members, inputs, outputs, args, ctx, constants=None):
    """The outputs of a fused step from its own steps, run in turn on its inputs
    (and `constants`, {tensor: value}); an error names the step's node.

    Raises:
        OneGraphError: a step failed.
    """
    values = dict(constants or {})
    values.update(zip(inputs, args))
    for s in members:
        begin_kernel()
        step_args = [values[i] for i in s.inputs]
        try:
            outs = s.kernel(step_args, s.attrs, ctx)
        except OneGraphError as e:
            if str(e).startswith("node "):
                raise
            raise type(e)(f"node {s.node.name!r} ({s.node.op_type}): {e}") from e
        except Exception as e:
            raise kernel_failure(e, f"node {s.node.name!r} ({s.node.op_type})",
                                 step_args) from e
        values[s.outputs[0]] = outs[0]
    return [values[t] for t in outputs]

"""Operators: dataflow control flow of the paper (the `onegraph` domain).

Switch routes its data to one of two outputs and marks the other *dead*; every op
with a dead input produces dead outputs, except Merge, which forwards its first live
input. Enter / Exit / NextIteration delimit a loop frame: Enter passes a value into
frame `frame_name` (once, or on every iteration when `is_constant`), NextIteration
carries a value to the next iteration's Merge, Exit leaves the frame. The executor
(`onegraph.train.session`) implements the frame semantics; the kernels here are the
per-iteration data movement.

Also here: NoOp (a target that only orders its control inputs), IdentityN,
StopGradient, the per-run Stack used to keep forward values for backpropagation
through a while loop, and the accumulator (AccumulatorNew / AccumulatorWrite /
AccumulatorStack) in which map_fn and scan collect one row per iteration (their
gradient rules, like Switch's and Merge's, are in `onegraph.train.control_flow`).
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError
from .registry import TensorInfo, define

DOMAIN = "onegraph"


class _Dead:
    """The dead value: the untaken side of a Switch (a singleton)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEAD"


DEAD = _Dead()


def _switch(inputs, attrs, ctx):
    """(output_false, output_true): data on the side the predicate selects, DEAD on the other."""
    data, pred = inputs
    if bool(np.asarray(pred)):
        return (DEAD, data)
    return (data, DEAD)


def _merge(inputs, attrs, ctx):
    """(the first live input, its index); all dead -> dead."""
    for i, v in enumerate(inputs):
        if v is not DEAD and v is not None:
            return (v, np.array(i, dtype=np.int32))
    return (DEAD, DEAD)


def _identity(inputs, attrs, ctx):
    """Pass the value through."""
    return (inputs[0],)


def _identity_n(inputs, attrs, ctx):
    """Pass every input through to the output with the same position."""
    return tuple(inputs)


def _no_op(inputs, attrs, ctx):
    """Nothing: a NoOp exists for its control inputs."""
    return ()


def _loop_cond(inputs, attrs, ctx):
    """The loop predicate as a bool scalar."""
    return (np.asarray(bool(np.asarray(inputs[0]))),)


class StackValue(list):
    """The per-run stack a `Stack` op creates; lives in a value slot of one run only."""

    __slots__ = ()


def _stack(inputs, attrs, ctx):
    """A new, empty per-run stack."""
    return (StackValue(),)


def _stack_push(inputs, attrs, ctx):
    """Push input 1 onto the stack; output the pushed value (for chaining)."""
    stack, value = inputs
    if not isinstance(stack, StackValue):
        raise ExecutionError(f"StackPush: input 0 is not a stack ({type(stack).__name__})")
    stack.append(value)
    return (value,)


def _stack_pop(inputs, attrs, ctx):
    """Pop the most recently pushed value."""
    stack = inputs[0]
    if not isinstance(stack, StackValue):
        raise ExecutionError(f"StackPop: input 0 is not a stack ({type(stack).__name__})")
    if not stack:
        raise ExecutionError(f"StackPop: stack {attrs['stack_name']!r} is empty")
    return (stack.pop(),)


def _accumulator_new(inputs, attrs, ctx):
    """An empty accumulator (allocated by the first AccumulatorWrite)."""
    return (np.zeros((0,)),)


def _accumulator_write(inputs, attrs, ctx):
    """Row `index` of an (size, *value.shape) array := value; returns the array.

    The first write of a run allocates the array; later writes fill it in place (the
    accumulator is a loop variable no other node reads), so n writes cost O(n).
    """
    acc, index, value, size = inputs
    value = np.asarray(value)
    n, i = int(np.asarray(size)), int(np.asarray(index))
    if acc.shape[0] == 0:
        acc = np.empty((n,) + value.shape, value.dtype)
    elif acc.shape[1:] != value.shape:
        raise ExecutionError(f"AccumulatorWrite: element {i} has shape {list(value.shape)}, "
                             f"earlier elements {list(acc.shape[1:])}")
    if not 0 <= i < acc.shape[0]:
        raise ExecutionError(f"AccumulatorWrite: index {i} out of range for {acc.shape[0]}")
    acc[i] = value
    return (acc,)


def _accumulator_stack(inputs, attrs, ctx):
    """The accumulated array; an empty one of the element shape/dtype if none written."""
    acc = inputs[0]
    if acc.shape[0] == 0:
        shape = tuple(max(int(d), 0) for d in attrs["element_shape"])
        return (np.zeros((0,) + shape, np.dtype(attrs["dtype"])),)
    return (acc,)


def _infer_accumulator_stack(attrs, inputs):
    shape = (None,) + tuple(None if d < 0 else d for d in attrs["element_shape"])
    return [TensorInfo(np.dtype(attrs["dtype"]), shape)]


def _infer_unknown(attrs, inputs):
    return [TensorInfo(None, None)]


def _infer_same(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


def _infer_switch(attrs, inputs):
    t = TensorInfo(inputs[0].dtype, inputs[0].shape)
    return [t, t]


def _infer_merge(attrs, inputs):
    present = [t for t in inputs if t is not None and t.dtype is not None]
    first = present[0] if present else TensorInfo(None, None)
    shape = first.shape
    for t in present[1:]:
        if t.shape is None or shape is None or len(t.shape) != len(shape):
            shape = None
            break
        shape = tuple(a if a == b else None for a, b in zip(shape, t.shape))
    return [TensorInfo(first.dtype, shape), TensorInfo(np.dtype(np.int32), ())]


def _infer_identity_n(attrs, inputs):
    return [TensorInfo(t.dtype, t.shape) for t in inputs]


def _infer_bool(attrs, inputs):
    return [TensorInfo(np.dtype(bool), ())]


def _infer_stack(attrs, inputs):
    return [TensorInfo(None, None)]


_FRAME_ATTRS = (("frame_name", "string"), ("is_constant", "int", 0),
                ("parallel_iterations", "int", 1))

OPS = tuple(sorted((
    define("AccumulatorNew", [], ["handle"], _accumulator_new, infer=_infer_unknown,
           domain=DOMAIN, stateful=True,
           doc="an empty accumulator for AccumulatorWrite (map_fn/scan results)"),
    define("AccumulatorStack", ["handle"], ["output"], _accumulator_stack,
           [("dtype", "string"), ("element_shape", "ints")],
           infer=_infer_accumulator_stack, domain=DOMAIN,
           doc="the accumulated (n, *element_shape) array"),
    define("AccumulatorWrite", ["handle", "index", "value", "size"], ["handle_out"],
           _accumulator_write, infer=_infer_unknown, domain=DOMAIN, stateful=True,
           doc="write one row of an accumulator"),
    define("Enter", ["data"], ["output"], _identity, _FRAME_ATTRS, infer=_infer_same,
           domain=DOMAIN, doc="enter a loop frame"),
    define("Exit", ["data"], ["output"], _identity, [("frame_name", "string", "")],
           infer=_infer_same, domain=DOMAIN, doc="leave a loop frame"),
    define("IdentityN", ["input*"], ["output*"], _identity_n, infer=_infer_identity_n,
           domain=DOMAIN, doc="identity on several tensors at once"),
    define("LoopCond", ["input"], ["output"], _loop_cond, infer=_infer_bool,
           domain=DOMAIN, doc="a loop frame's continuation predicate"),
    define("Merge", ["inputs*"], ["output", "value_index"], _merge, infer=_infer_merge,
           domain=DOMAIN, doc="forward the first live input"),
    define("NextIteration", ["data"], ["output"], _identity, infer=_infer_same,
           domain=DOMAIN, doc="carry a value to the next loop iteration"),
    define("NoOp", [], [], _no_op, infer=lambda attrs, inputs: [], domain=DOMAIN,
           stateful=True, doc="does nothing; runs its control inputs"),
    define("Stack", [], ["handle"], _stack, [("stack_name", "string", "")],
           infer=_infer_stack, domain=DOMAIN, stateful=True,
           doc="a per-run stack for values kept across loop iterations"),
    define("StackPop", ["handle"], ["value"], _stack_pop, [("stack_name", "string", "")],
           infer=_infer_stack, domain=DOMAIN, stateful=True, doc="pop a stack"),
    define("StackPush", ["handle", "value"], ["output"], _stack_push,
           [("stack_name", "string", "")],
           infer=lambda attrs, inputs: [TensorInfo(inputs[1].dtype, inputs[1].shape)],
           domain=DOMAIN, stateful=True, doc="push onto a stack"),
    define("StopGradient", ["input"], ["output"], _identity, infer=_infer_same,
           domain=DOMAIN, gradient=lambda b, node, grads: [None],
           doc="identity whose gradient is zero"),
    define("Switch", ["data", "pred"], ["output_false", "output_true"], _switch,
           infer=_infer_switch, domain=DOMAIN,
           doc="route data to the output the predicate selects"),
), key=lambda op: op.name))

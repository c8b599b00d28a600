"""Operators: mutable state (the `onegraph` domain): reading and updating variables.

A variable is a graph tensor of kind VARIABLE; executors put a `VariableRef` in its
value slot, so these kernels receive the ref, not an array. Updates replace
`ref.value` with a new array under `ref.lock` (never mutate it in place), so a
reader that already holds the old array in a concurrent step is not disturbed.

Assign-family ops return the new value, so a train step can fetch it or chain on it.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, OutOfRangeError, ShapeError
from .registry import TensorInfo, VariableRef, define

DOMAIN = "onegraph"


def _ref(x, op: str) -> VariableRef:
    if not isinstance(x, VariableRef):
        raise ExecutionError(f"{op}: input 0 must be a variable, got {type(x).__name__}")
    return x


def _read(inputs, attrs, ctx):
    """The variable's current value (a snapshot: later updates replace, not mutate)."""
    return (_ref(inputs[0], "ReadVariable").read(),)


def _is_initialized(inputs, attrs, ctx):
    """Whether the variable holds a value (TF1's IsVariableInitialized)."""
    return (np.array(_ref(inputs[0], "IsVariableInitialized").value is not None),)


def _assign(inputs, attrs, ctx):
    """Replace the variable's value with input 1 (cast to the old dtype if it had one)."""
    ref = _ref(inputs[0], "Assign")
    value = np.asarray(inputs[1])
    with ref.lock:
        old = ref.value
        if old is not None and attrs["validate_shape"] and old.shape != value.shape:
            raise ShapeError(f"Assign to {ref.name!r}: shape {value.shape} != variable "
                             f"shape {old.shape}")
        if old is not None and value.dtype != old.dtype:
            value = value.astype(old.dtype)
        else:
            value = np.array(value)  # own the memory: the feed may be reused by the caller
        ref.value = value
    return (value,)


def _update(fn, op):
    def kernel(inputs, attrs, ctx):
        """Read-modify-write of the variable under its lock."""
        ref = _ref(inputs[0], op)
        delta = np.asarray(inputs[1])
        with ref.lock:
            old = ref.read()
            new = fn(old, delta.astype(old.dtype, copy=False))
            if new.shape != old.shape:
                raise ShapeError(f"{op} on {ref.name!r}: update of shape {delta.shape} "
                                 f"changes the variable's shape {old.shape}")
            ref.value = new
        return (new,)
    return kernel


def _scatter_add(inputs, attrs, ctx):
    """var[indices[i]] += updates[i] along axis 0, repeated indices accumulating (a
    scalar update is added to every picked row)."""
    ref = _ref(inputs[0], "ScatterAdd")
    indices = np.asarray(inputs[1]).astype(np.int64, copy=False)
    with ref.lock:
        old = ref.read()
        if old.ndim == 0:
            raise ShapeError(f"ScatterAdd on {ref.name!r}: the variable is a scalar; it "
                             f"has no rows")
        updates = np.asarray(inputs[2]).astype(old.dtype, copy=False)
        if updates.ndim == 0:  # a scalar goes to every picked row, as in TF1
            updates = np.broadcast_to(updates, indices.shape + old.shape[1:])
        if updates.shape != indices.shape + old.shape[1:]:
            raise ShapeError(f"ScatterAdd on {ref.name!r}: updates {updates.shape} must be "
                             f"indices {indices.shape} + variable row {old.shape[1:]}")
        if indices.size and (indices.min() < -old.shape[0] or indices.max() >= old.shape[0]):
            raise ShapeError(f"ScatterAdd on {ref.name!r}: index out of range "
                             f"[0, {old.shape[0]})")
        new = old.copy()
        np.add.at(new, indices.reshape(-1), updates.reshape((-1,) + old.shape[1:]))
        ref.value = new
    return (new,)


def _count_up_to(inputs, attrs, ctx):
    """The counter's value before adding 1 to it; OutOfRangeError once it has reached
    `limit`, which leaves it there (TF1's CountUpTo)."""
    ref = _ref(inputs[0], "CountUpTo")
    limit = attrs["limit"]
    with ref.lock:
        old = ref.read()
        if old.ndim != 0 or old.dtype.kind not in "iu":
            raise ShapeError(f"CountUpTo on {ref.name!r}: the variable must be an integer "
                             f"scalar, got {old.dtype} {list(old.shape)}")
        if old >= limit:
            raise OutOfRangeError(f"Reached limit of {limit} (variable {ref.name!r})")
        ref.value = np.asarray(old + 1, old.dtype)
    return (np.array(old),)


def _infer_scalar_value(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, ())]


def _infer_value(attrs, inputs):
    """Output has the variable's dtype and shape (as the builder recorded them)."""
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


_SIDE_EFFECTS = dict(domain=DOMAIN, stateful=True)

OPS = tuple(sorted((
    define("Assign", ["ref", "value"], ["output"], _assign, [("validate_shape", "int", 1)],
           infer=_infer_value, doc="ref = value", **_SIDE_EFFECTS),
    define("AssignAdd", ["ref", "value"], ["output"], _update(np.add, "AssignAdd"),
           infer=_infer_value, doc="ref += value", **_SIDE_EFFECTS),
    define("AssignSub", ["ref", "value"], ["output"], _update(np.subtract, "AssignSub"),
           infer=_infer_value, doc="ref -= value", **_SIDE_EFFECTS),
    # gradient_to: where the read's gradient goes (a read inside a cond or while_loop
    # passes it to the variable's read outside; see Variable.read_value)
    define("CountUpTo", ["ref"], ["output"], _count_up_to, [("limit", "int")],
           infer=_infer_scalar_value, doc="ref += 1 while below limit; the old value",
           **_SIDE_EFFECTS),
    define("IsVariableInitialized", ["ref"], ["is_initialized"], _is_initialized,
           infer=lambda attrs, inputs: [TensorInfo(np.dtype(bool), ())],
           doc="whether the variable holds a value", **_SIDE_EFFECTS),
    define("ReadVariable", ["ref", "gradient_to?"], ["value"], _read, infer=_infer_value,
           doc="snapshot of a variable's value", **_SIDE_EFFECTS),
    define("ScatterAdd", ["ref", "indices", "updates"], ["output"], _scatter_add,
           infer=_infer_value, doc="ref[indices] += updates (sparse update, axis 0)",
           **_SIDE_EFFECTS),
), key=lambda op: op.name))

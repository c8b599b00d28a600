"""Operators: sparse updates of variables (the `onegraph` domain), TF1's scatter family.

`ScatterUpdate` changes rows of a variable along axis 0 (tf.scatter_update, _sub,
_mul, _div, _min, _max; tf.scatter_add keeps its own op, `ScatterAdd` in state.py).
`ScatterNdUpdate` changes the elements or slices that index tuples pick
(tf.scatter_nd_update, _add, _sub). The `reduction` attribute says how an update
combines with the old value: "none" replaces it, "add", "sub", "mul", "div", "min"
and "max" combine. Repeated indices apply in their order, as TF1's CPU kernels do: the
last write wins for "none", the others accumulate. Integer division truncates toward
zero (C's and TF's `/=`). Updates have the shape the indices pick; ScatterUpdate also
takes a scalar that every picked row gets (as TF1's kernels do). A negative index
counts from the end, as og.gather's and ScatterAdd's do.

Like the other state ops, a kernel replaces `ref.value` with a new array under the
variable's lock and returns it.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, ShapeError
from .registry import TensorInfo, VariableRef, define

DOMAIN = "onegraph"
REDUCTIONS = ("none", "add", "sub", "mul", "div", "min", "max")

_ACCUMULATE = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
               "min": np.minimum, "max": np.maximum}


def _ref(x, op: str) -> VariableRef:
    if not isinstance(x, VariableRef):
        raise ExecutionError(f"{op}: input 0 must be a variable, got {type(x).__name__}")
    return x


def _reduction(attrs, op: str) -> str:
    reduction = attrs["reduction"]
    if reduction not in REDUCTIONS:
        raise ShapeError(f"{op}: reduction must be one of {', '.join(REDUCTIONS)}, got "
                         f"{reduction!r}")
    return reduction


def _wrap(indices, size: int, where: str):
    """Indices in [-size, size) as int64 in [0, size).

    Raises:
        ShapeError: an index lies outside that range.
    """
    if indices.size and (indices.min() < -size or indices.max() >= size):
        bad = indices[(indices < -size) | (indices >= size)].reshape(-1)[0]
        raise ShapeError(f"{where}: index {int(bad)} is out of range [-{size}, {size})")
    return np.where(indices < 0, indices + size, indices)


def _updates(raw, want: tuple, dtype, where: str, scalar: bool):
    """The updates as an array of shape `want` (a scalar is broadcast if `scalar`).

    Raises:
        ShapeError: their shape is neither `want` nor an allowed scalar's.
    """
    updates = np.asarray(raw)
    if updates.shape != want and (updates.ndim or not scalar):
        raise ShapeError(f"{where}: updates of shape {list(updates.shape)} must have the "
                         f"shape {list(want)} the indices pick"
                         + (", or be a scalar" if scalar else ""))
    return np.broadcast_to(updates.astype(dtype, copy=False), want)


def _truncating_divide(a, b, where: str):
    """a / b of integer arrays rounded toward zero.

    Raises:
        ExecutionError: some b is 0.
    """
    if np.any(b == 0):
        raise ExecutionError(f"{where}: integer division by zero")
    q = a // b
    q += ((a % b != 0) & ((a < 0) != (b < 0))).astype(q.dtype)
    return q


def _apply(rows_view, rows, updates, reduction: str, where: str) -> None:
    """Combine updates[i] into rows_view[rows[i]] in place, i in order."""
    if reduction == "none":
        # the last occurrence of each row is the one that stays
        reversed_rows = rows[::-1]
        _, last = np.unique(reversed_rows, return_index=True)
        keep = rows.size - 1 - last
        rows_view[rows[keep]] = updates[keep]
    elif reduction == "div" and rows_view.dtype.kind in "iu":
        # no truncating ufunc to .at with: each round takes the next occurrence of
        # every row, so repeats still divide in their order
        pending = np.arange(rows.size)
        while pending.size:
            _, first = np.unique(rows[pending], return_index=True)
            take = pending[first]
            rows_view[rows[take]] = _truncating_divide(rows_view[rows[take]],
                                                       updates[take], where)
            pending = np.delete(pending, first)
    elif reduction == "div":
        np.divide.at(rows_view, rows, updates)
    else:
        _ACCUMULATE[reduction].at(rows_view, rows, updates)


def _check_dtype(dtype, reduction: str, where: str) -> None:
    if reduction != "none" and dtype.kind not in "iuf":
        raise ShapeError(f"{where}: reduction {reduction!r} needs a numeric variable, not "
                         f"{dtype}")


def _operands(inputs, attrs, op: str) -> tuple:
    """(variable ref, reduction, where (for messages), indices array) of a kernel.

    Raises:
        ExecutionError: input 0 is not a variable.
        ShapeError: the reduction is unknown or the indices are not integers.
    """
    ref = _ref(inputs[0], op)
    reduction = _reduction(attrs, op)
    where = f"{op} ({reduction}) on {ref.name!r}"
    indices = np.asarray(inputs[1])
    if indices.dtype.kind not in "iu":
        raise ShapeError(f"{where}: indices must be integers, got {indices.dtype}")
    return ref, reduction, where, indices


def _scatter_update(inputs, attrs, ctx):
    """ref[indices[i]] (rows along axis 0) combined with updates[i] by `reduction`."""
    ref, reduction, where, raw_indices = _operands(inputs, attrs, "ScatterUpdate")
    with ref.lock:
        old = ref.read()
        if old.ndim == 0:
            raise ShapeError(f"{where}: the variable is a scalar; it has no rows")
        _check_dtype(old.dtype, reduction, where)
        rows = _wrap(raw_indices.astype(np.int64), old.shape[0], where)
        updates = _updates(inputs[2], rows.shape + old.shape[1:], old.dtype, where, True)
        new = old.copy()
        with np.errstate(all="ignore"):  # float division by zero gives inf, as in TF
            _apply(new, rows.reshape(-1), updates.reshape((-1,) + old.shape[1:]),
                   reduction, where)
        ref.value = new
    return (new,)


def _scatter_nd_update(inputs, attrs, ctx):
    """ref[tuple(indices[..., :])] combined with updates[...] by `reduction`; the last
    axis of indices holds K coordinates into the variable's first K axes."""
    ref, reduction, where, indices = _operands(inputs, attrs, "ScatterNdUpdate")
    if indices.ndim == 0:
        raise ShapeError(f"{where}: indices must have at least one axis (the last holds "
                         f"the index tuples)")
    with ref.lock:
        old = ref.read()
        depth = indices.shape[-1]
        if depth > old.ndim:
            raise ShapeError(f"{where}: index tuples of length {depth} are longer than "
                             f"the variable's rank {old.ndim}")
        _check_dtype(old.dtype, reduction, where)
        lead, rest = old.shape[:depth], old.shape[depth:]
        tuples = indices.astype(np.int64).reshape(-1, depth)
        coords = [_wrap(tuples[:, k], lead[k], f"{where}, coordinate {k}")
                  for k in range(depth)]
        rows = (np.ravel_multi_index(coords, lead) if depth
                else np.zeros(tuples.shape[0], np.int64))
        updates = _updates(inputs[2], indices.shape[:-1] + rest, old.dtype, where, False)
        new = old.copy()
        with np.errstate(all="ignore"):
            _apply(new.reshape((-1,) + rest), rows,
                   updates.reshape((-1,) + rest), reduction, where)
        ref.value = new
    return (new,)


def _infer_value(attrs, inputs):
    """Output has the variable's dtype and shape (as the builder recorded them)."""
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


_SIDE_EFFECTS = dict(domain=DOMAIN, stateful=True)

OPS = (
    define("ScatterNdUpdate", ["ref", "indices", "updates"], ["output"],
           _scatter_nd_update, [("reduction", "string", "none")], infer=_infer_value,
           doc="ref[index tuples] = / += / -= ... updates (sparse update)", **_SIDE_EFFECTS),
    define("ScatterUpdate", ["ref", "indices", "updates"], ["output"], _scatter_update,
           [("reduction", "string", "none")], infer=_infer_value,
           doc="ref[indices] = / -= / *= ... updates (sparse update, axis 0)",
           **_SIDE_EFFECTS),
)

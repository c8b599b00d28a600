"""Helpers shared by the gradient rules in `ops/<family>_grad.py`.

Rules receive a builder `b` (`b.op(op_type, inputs, attrs)`, `b.constant(value)`,
`b.static_value(tensor)`) and tensor handles exposing `.shape` (None for unknown dims)
and `.dtype`; these helpers only use that interface, so they hold no graph state.
"""

from __future__ import annotations

import numpy as np

from ..format import DType


def same_static_shape(a, b) -> bool:
    """True when both shapes are fully known and equal."""
    sa, sb = a.shape, b.shape
    return (sa is not None and sb is not None and sa == sb
            and all(d is not None for d in sa))


def unbroadcast(b, grad, x, others=()):
    """Sum `grad` (shaped like a broadcast result) down to the shape of input `x`.

    Skipped when x already has the result's shape: known equal shapes, or x has the
    highest rank and every other operand is 1 (or absent) wherever x's dim is unknown.
    """
    if grad is None:
        return None
    if _no_broadcast(grad, x, others):
        return grad
    return b.op("SumToShapeOf", [grad, x])


def _no_broadcast(grad, x, others) -> bool:
    sx, sg = x.shape, grad.shape
    if sx is None or sg is None or len(sx) != len(sg):
        return False
    for i, (dx, dg) in enumerate(zip(sx, sg)):
        if dx is not None and dg is not None:
            if dx != dg:
                return False
            continue
        if dx is None:
            # x's dim unknown: safe only if no other operand can stretch it
            for o in others:
                so = o.shape
                if so is None:
                    return False
                j = i - (len(sx) - len(so))
                if j >= 0 and so[j] != 1:
                    return False
        else:
            return False
    return True


def static_ints(b, t):
    """The known integer values of tensor t (None if not known while building)."""
    if t is None:
        return None
    v = b.static_value(t)
    return None if v is None else [int(a) for a in np.asarray(v).reshape(-1)]


def like_dtype(b, value, t):
    """A scalar constant with t's dtype (cast at run time when inference left t's
    dtype unknown)."""
    if t.dtype is DType.UNDEFINED:
        return b.op("CastLike", [b.constant(np.asarray(value, dtype=np.float64)), t])
    return b.constant(np.asarray(value, dtype=t.dtype.numpy))

"""TF1's functions on variables: `og.assign`, `og.assign_add`, `og.assign_sub`,
`og.count_up_to`, and the sparse updates `og.scatter_add`, `og.scatter_update`,
`og.scatter_sub`, `og.scatter_mul`, `og.scatter_div`, `og.scatter_min`,
`og.scatter_max`, `og.scatter_nd_update`, `og.scatter_nd_add` and `og.scatter_nd_sub`,
which build the same ops as the Variable methods of those names (CountUpTo,
ScatterAdd, ScatterUpdate and ScatterNdUpdate, ops/state.py and
ops/state_scatter.py)."""

from __future__ import annotations

from .variables import Variable


def _variable(ref, what: str) -> Variable:
    """`ref` when it is a Variable.

    Raises:
        TypeError: it is not (a plain tensor cannot be assigned to, as in TF1).
    """
    if not isinstance(ref, Variable):
        raise TypeError(f"{what}: ref must be a Variable (og.Variable or og.get_variable), "
                        f"got {type(ref).__name__}")
    return ref


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Set variable `ref` to `value`; the result is the new value (TF1's `tf.assign`).
    `validate_shape` and `use_locking` are accepted for TF1 compatibility: a value's
    static shape is always checked, and updates never race (runs apply ops in order).

    Raises:
        TypeError: ref is not a Variable, or name is not a str.
        ShapeError: value's dtype or static shape does not fit the variable.
        OneGraphError: a plain value does not convert to the variable's dtype.
    """
    del validate_shape, use_locking
    return _variable(ref, "assign").assign(value, name=name)


def _delta_update(method: str, words: str):
    def update(ref, value, use_locking=None, name=None):
        del use_locking
        return getattr(_variable(ref, method), method)(value, name=name)

    update.__name__ = method
    update.__doc__ = (f"{words} variable `ref`; the result is the new value (TF1's "
                      f"`tf.{method}`).\n\n    Raises:\n        TypeError: ref is not a "
                      "Variable, or name is not a str.\n        ShapeError: value's dtype "
                      "differs or its static shape does not broadcast to\n            the "
                      "variable's.\n        OneGraphError: a plain value does not convert "
                      "to the variable's dtype.\n    ")
    return update


assign_add = _delta_update("assign_add", "Add `value` to")
assign_sub = _delta_update("assign_sub", "Subtract `value` from")


def scatter_add(ref, indices, updates, use_locking=None, name=None):
    """Add `updates[i]` to row `indices[i]` of variable `ref` (repeated rows add up);
    the result is the new value (TF1's `tf.scatter_add`).

    Raises:
        TypeError: ref is not a Variable, or name is not a str.
    """
    del use_locking
    return _variable(ref, "scatter_add").scatter_add(indices, updates, name=name)


def count_up_to(ref, limit, name=None):
    """Add 1 to integer scalar variable `ref` while it is below `limit`; the result is
    its value before the increment, and a run once it has reached the limit raises
    og.OutOfRangeError (TF1's `tf.count_up_to`).

    Raises:
        TypeError: ref is not a Variable, limit not an int, or name not a str.
        ShapeError: ref is not an integer scalar.
    """
    return _variable(ref, "count_up_to").count_up_to(limit, name=name)


def _scatter_function(method: str, reduction: str, words: str, nd: bool):
    def update(ref, indices, updates, use_locking=None, name=None):
        del use_locking
        return _variable(ref, method)._scatter(method, reduction, indices, updates, name,
                                               nd)

    update.__name__ = method
    picked = ("`ref[tuple(indices[j])]` (the last axis of indices holds index tuples "
              "into ref's first axes)" if nd else "row `indices[i]` of variable `ref`")
    update.__doc__ = (
        f"{words} {picked}; repeated indices apply in order; the result is the new "
        f"value (TF1's `tf.{method}`). Updates have the shape the indices pick"
        + ("" if nd else ", or are a scalar")
        + ".\n\n    Raises:\n        TypeError: ref is not a Variable, or name is "
        "not a str.\n        ShapeError: indices are not integers, or the updates' dtype "
        "or static\n            shape does not fit; at run time, an index out of "
        "range.\n        ExecutionError: at run time, an integer division by zero.\n    ")
    return update


scatter_update = _scatter_function("scatter_update", "none",
                                   "Set to `updates[i]` (the last of repeats wins)", False)
scatter_sub = _scatter_function("scatter_sub", "sub", "Subtract `updates[i]` from", False)
scatter_mul = _scatter_function("scatter_mul", "mul", "Multiply by `updates[i]`", False)
scatter_div = _scatter_function("scatter_div", "div",
                                "Divide by `updates[i]` (integers truncate toward zero)",
                                False)
scatter_min = _scatter_function("scatter_min", "min", "Take the minimum with `updates[i]` "
                                "of", False)
scatter_max = _scatter_function("scatter_max", "max", "Take the maximum with `updates[i]` "
                                "of", False)
scatter_nd_update = _scatter_function("scatter_nd_update", "none",
                                      "Set to `updates[j]` (the last of repeats wins)", True)
scatter_nd_add = _scatter_function("scatter_nd_add", "add", "Add `updates[j]` to", True)
scatter_nd_sub = _scatter_function("scatter_nd_sub", "sub", "Subtract `updates[j]` from",
                                   True)


__all__ = ["assign", "assign_add", "assign_sub", "count_up_to", "scatter_add", "scatter_div",
           "scatter_max", "scatter_min", "scatter_mul", "scatter_nd_add", "scatter_nd_sub",
           "scatter_nd_update", "scatter_sub", "scatter_update"]

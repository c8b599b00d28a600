"""TF1's functions on variables: `og.assign`, `og.assign_add`, `og.assign_sub` and
`og.scatter_add`, which build the same ops as the Variable methods of those names."""

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


__all__ = ["assign", "assign_add", "assign_sub", "scatter_add"]

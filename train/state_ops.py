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


def assign_add(ref, value, use_locking=None, name=None):
    """Add `value` to variable `ref`; the result is the new value (TF1's
    `tf.assign_add`).

    Raises:
        TypeError: ref is not a Variable, or name is not a str.
        ShapeError: value's dtype differs or its static shape does not broadcast to
            the variable's.
        OneGraphError: a plain value does not convert to the variable's dtype.
    """
    del use_locking
    return _variable(ref, "assign_add").assign_add(value, name=name)


def assign_sub(ref, value, use_locking=None, name=None):
    """Subtract `value` from variable `ref`; the result is the new value (TF1's
    `tf.assign_sub`).

    Raises:
        TypeError: ref is not a Variable, or name is not a str.
        ShapeError: value's dtype differs or its static shape does not broadcast to
            the variable's.
        OneGraphError: a plain value does not convert to the variable's dtype.
    """
    del use_locking
    return _variable(ref, "assign_sub").assign_sub(value, name=name)


def scatter_add(ref, indices, updates, use_locking=None, name=None):
    """Add `updates[i]` to row `indices[i]` of variable `ref` (repeated rows add up);
    the result is the new value (TF1's `tf.scatter_add`).

    Raises:
        TypeError: ref is not a Variable, or name is not a str.
    """
    del use_locking
    return _variable(ref, "scatter_add").scatter_add(indices, updates, name=name)


__all__ = ["assign", "assign_add", "assign_sub", "scatter_add"]

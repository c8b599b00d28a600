"""TF1's tf.sets: set_size / size, set_intersection / intersection, set_union / union,
set_difference / difference over the last dimension of dense tensors or
og.SparseTensors, built on the ops of ops/sets.py; results are og.SparseTensors.

As TF's Python does, a sparse `a` with a dense `b` is swapped (a-b becoming b-a), the
dtypes are checked here (ints of 8 to 64 bits, uint8/16, strings) and the static ranks
and group dims are checked while building with TF's ValueError text. The ops have no
gradients (TF's have none): og.gradients gives None through them.
"""

from __future__ import annotations

from . import gradients as _gradients
from . import graph as _g
from .module_namespace import namespace
from .sparse_tensor import SparseTensor, SparseTensorValue

__all__ = ["set_size", "size", "set_intersection", "intersection", "set_union", "union",
           "set_difference", "difference", "sets"]

_DOMAIN = "onegraph"
_VALID = ("int8", "int16", "int32", "int64", "uint8", "uint16", "string")
_VALID_TEXT = "{" + ", ".join(_VALID) + "}"


# TF registers none for the set ops either
for _op_type in ("SetSize", "DenseToDenseSetOperation", "DenseToSparseSetOperation",
                 "SparseToSparseSetOperation"):
    _gradients.NotDifferentiable(_op_type)


def _dname(dtype) -> str:
    return str(getattr(dtype, "short_name", dtype))


def _convert(value):
    """value as a SparseTensor (from a SparseTensorValue too) or a Tensor."""
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        return value
    return _g.get_default_graph().convert(value)


def _ndims(t):
    """A tensor's static rank or None (an unknown-rank tensor may have no shape)."""
    return None if t.shape is None else t.shape.ndims


def _dims(t):
    """A tensor's static dims (None unknown), or None for an unknown rank."""
    return None if _ndims(t) is None else t.shape.as_list()


def _rank(x):
    """x's static rank (a SparseTensor's from its indices or dense_shape), or None."""
    if isinstance(x, SparseTensor):
        for t, k in ((x.indices, 1), (x.dense_shape, 0)):
            dims = _dims(t)
            if dims is not None and len(dims) > k and dims[k] is not None:
                return int(dims[k])
        return None
    return _ndims(x)


def _both(a, b):
    """(a, b, swapped): converted and dtype-checked, a sparse a with a dense b swapped.

    Raises:
        TypeError: a's dtype is not one of the set dtypes, or b's differs from a's.
    """
    a = _convert(a)
    if _dname(a.dtype) not in _VALID:
        raise TypeError(f"'a' has invalid dtype `{_dname(a.dtype)}` not in supported dtypes: "
                        f"`{_VALID_TEXT}`.")
    b = _convert(b)
    if b.dtype != a.dtype:
        raise TypeError(f"Types don't match, {_dname(a.dtype)} vs {_dname(b.dtype)}.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        return b, a, True
    return a, b, False


def _check_dense_dense(a, b) -> None:
    """TF's DenseToDenseSetOperation shape function, while building.

    Raises:
        ValueError: a rank below 2, ranks differ, or known group dims differ.
    """
    ra, rb = _ndims(a), _ndims(b)
    for r in (ra, rb) if ra is None else (ra,):
        if r is not None and r < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {r}")
    if ra is None or rb is None:
        return
    if rb != ra:
        raise ValueError(f"Shape must be rank {ra} but is rank {rb}")
    da, db = _dims(a)[:-1], _dims(b)[:-1]
    for k, (x, y) in enumerate(zip(da, db)):
        if x is not None and y is not None and x != y:
            shown = [("[" + ",".join("?" if d is None else str(d) for d in s) + "]")
                     for s in (da, db)]
            raise ValueError(f"Dimension {k} in both shapes must be equal, but are {x} and "
                             f"{y}. Shapes are {shown[0]} and {shown[1]}.")


def _check_with_sparse(a, b) -> None:
    """TF's Dense/SparseToSparseSetOperation shape functions, while building.

    Raises:
        ValueError: a rank below 2, or the ranks differ.
    """
    ra, rb = _rank(a), _rank(b)
    if isinstance(a, SparseTensor):
        for k, r in ((0, ra), (1, rb)):
            if r is not None and r < 2:
                raise ValueError(f"Input {k}, expected rank >= 2, got {r}.")
    else:
        if ra is not None and ra < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {ra}")
        if rb is not None and rb < 2:
            raise ValueError(f"Input 1, expected rank >= 2, got {rb}.")
    if ra is not None and rb is not None and ra != rb:
        raise ValueError(f"Dimension must be {ra} but is {rb}")


def _set_operation(a, b, operation: str, validate_indices) -> SparseTensor:
    """The op for a (dense or sparse) and b (dense or sparse) as a SparseTensor.

    Raises:
        ValueError: a is sparse and b dense (swap them), or the static shapes disagree.
    """
    g = _g.get_default_graph()
    attrs = {"set_operation": operation, "validate_indices": int(bool(validate_indices))}
    if isinstance(a, SparseTensor):
        if not isinstance(b, SparseTensor):
            raise ValueError("Sparse,Dense is not supported, but Dense,Sparse is. Please flip "
                             "the order of your inputs.")
        _check_with_sparse(a, b)
        op_type, inputs = "SparseToSparseSetOperation", [
            a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape]
    elif isinstance(b, SparseTensor):
        _check_with_sparse(a, b)
        op_type, inputs = "DenseToSparseSetOperation", [a, b.indices, b.values,
                                                        b.dense_shape]
    else:
        _check_dense_dense(a, b)
        op_type, inputs = "DenseToDenseSetOperation", [a, b]
    out = g.op(op_type, inputs, attrs, domain=_DOMAIN, num_outputs=3)
    return SparseTensor(*out)


def set_size(a, validate_indices=True):
    """The number of distinct values in each set (the last dim) of the SparseTensor
    `a`: an int32 tensor of a's dense shape without its last dim (TF1's
    tf.sets.set_size / tf.sets.size). Running it with indices out of bounds, or out of
    order or repeated when validate_indices, or with a rank below 2 raises
    InvalidArgumentError.

    Raises:
        TypeError: a is not a SparseTensor (or SparseTensorValue), or its dtype is no
            set dtype.
    """
    a = _convert(a)
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a!r:.100}.")
    if _dname(a.dtype) not in _VALID:
        raise TypeError(f"Invalid dtype `{_dname(a.dtype)}` not in supported dtypes: "
                        f"`{_VALID_TEXT}`.")
    g = _g.get_default_graph()
    return g.op("SetSize", [a.indices, a.values, a.dense_shape],
                {"validate_indices": int(bool(validate_indices))}, domain=_DOMAIN)


def set_intersection(a, b, validate_indices=True) -> SparseTensor:
    """The intersection of the sets (last dim) of a and b, group by group, sorted
    (TF1's tf.sets.set_intersection / tf.sets.intersection). a and b are dense tensors
    or SparseTensors of one set dtype whose dims other than the last agree.

    Raises:
        TypeError: a's dtype is not a set dtype or b's differs.
        ValueError: a rank below 2, or the ranks or leading dims disagree while
            building (while running: InvalidArgumentError).
    """
    a, b, _ = _both(a, b)
    return _set_operation(a, b, "intersection", validate_indices)


def set_union(a, b, validate_indices=True) -> SparseTensor:
    """The union of the sets (last dim) of a and b, group by group, sorted (TF1's
    tf.sets.set_union / tf.sets.union).

    Raises:
        What set_intersection raises.
    """
    a, b, _ = _both(a, b)
    return _set_operation(a, b, "union", validate_indices)


def set_difference(a, b, aminusb=True, validate_indices=True) -> SparseTensor:
    """The sets of a minus those of b (b minus a when aminusb is False), group by group,
    sorted (TF1's tf.sets.set_difference / tf.sets.difference).

    Raises:
        What set_intersection raises.
    """
    a, b, swapped = _both(a, b)
    if swapped:  # the operands were exchanged, so is the direction
        aminusb = not aminusb
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)


size = set_size
intersection = set_intersection
union = set_union
difference = set_difference

sets = namespace("sets", "TF1's tf.sets: set operations over the last dimension.", {
    "set_size": set_size, "size": size, "set_intersection": set_intersection,
    "intersection": intersection, "set_union": set_union, "union": union,
    "set_difference": set_difference, "difference": difference})

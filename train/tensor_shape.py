"""Static shapes as TF's TensorShape: what `Tensor.shape` and `get_shape()` return.

A TensorShape of known rank is a tuple of ints and None (unknown dims), so it indexes,
compares and unpacks as the tuples onegraph returned before; it adds TF's methods
(`as_list`, `ndims`, `is_fully_defined`, `merge_with`, ...). Indexing gives ints or
None, as TF 2's TensorShape does, which tf.compat.v1 also uses; `Dimension` and
`dimension_value` are there for TF1 code that reads `.value`. A shape of unknown rank
is `TensorShape(None)` (Tensor.shape gives None for it, as before).
"""

from __future__ import annotations

from ..errors import ShapeError


class TensorShape(tuple):
    """A static shape: TensorShape([None, 5]); TensorShape(None) for an unknown rank.

    Raises:
        TypeError: dims is not None, an int, or an iterable of ints, Nones and
            Dimensions.
    """

    __slots__ = ()

    def __new__(cls, dims=None):
        if dims is None:
            return tuple.__new__(_UnknownRank)
        if isinstance(dims, TensorShape) and dims.ndims is not None:
            return tuple.__new__(cls, dims)
        if isinstance(dims, int) and not isinstance(dims, bool):
            dims = [dims]
        try:
            values = [dimension_value(d) for d in dims]
        except TypeError:
            raise TypeError(f"TensorShape: dims must be None or a list of ints and None, "
                            f"got {type(dims).__name__}") from None
        for d in values:
            if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 0):
                raise TypeError(f"TensorShape: a dim must be an int >= 0 or None, got "
                                f"{d!r}")
        return tuple.__new__(cls, values)

    # -- TF's properties ------------------------------------------------------------

    @property
    def ndims(self) -> int | None:
        """The rank (None when unknown)."""
        return len(self)

    rank = ndims

    @property
    def dims(self) -> list | None:
        """The dims as a list of ints and None (None for an unknown rank)."""
        return list(self)

    def as_list(self) -> list:
        """The dims as a list of ints and None.

        Raises:
            ValueError: the rank is unknown (as TF).
        """
        return list(self)

    def is_fully_defined(self) -> bool:
        """Whether the rank and every dim are known."""
        return None not in self

    def num_elements(self) -> int | None:
        """The element count when every dim is known, else None."""
        if not self.is_fully_defined():
            return None
        total = 1
        for d in self:
            total *= d
        return total

    # -- combining ------------------------------------------------------------------

    def is_compatible_with(self, other) -> bool:
        """Whether the two shapes could describe the same tensor."""
        other = as_shape(other)
        if other.ndims is None:
            return True
        return len(self) == len(other) and all(
            a is None or b is None or a == b for a, b in zip(self, other))

    def merge_with(self, other) -> "TensorShape":
        """The shape holding what both know.

        Raises:
            ValueError: the shapes are not compatible (as TF).
        """
        other = as_shape(other)
        if other.ndims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self, other)])

    def concatenate(self, other) -> "TensorShape":
        """The dims of this shape followed by those of `other`."""
        other = as_shape(other)
        if other.ndims is None:
            return TensorShape(None)
        return TensorShape(list(self) + list(other))

    def __eq__(self, other):
        # TF compares with lists too (TensorShape([None, 5]) == [None, 5])
        if isinstance(other, list):
            other = tuple(dimension_value(d) for d in other)
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return as_shape(other).concatenate(self)

    def __getitem__(self, key):
        got = tuple.__getitem__(self, key)
        return TensorShape(got) if isinstance(key, slice) else got

    def with_rank(self, rank: int) -> "TensorShape":
        """This shape, checked to have `rank` dims.

        Raises:
            ValueError: it has another rank.
        """
        return self.merge_with(TensorShape([None] * rank))

    def with_rank_at_least(self, rank: int) -> "TensorShape":
        """This shape, checked to have at least `rank` dims.

        Raises:
            ValueError: it has fewer.
        """
        if len(self) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def assert_is_compatible_with(self, other) -> None:
        """Raises ValueError unless the shapes are compatible."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def assert_has_rank(self, rank: int) -> None:
        """Raises ValueError unless the rank is `rank` (or unknown)."""
        if self.ndims not in (None, rank):
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_same_rank(self, other) -> None:
        """Raises ValueError unless both ranks are equal (or one is unknown)."""
        other = as_shape(other)
        if None not in (self.ndims, other.ndims) and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def __repr__(self) -> str:
        return f"TensorShape({list(self)})"

    def __str__(self) -> str:
        return tuple.__repr__(self)   # (None, 5), as TF 2 prints it


class _UnknownRank(TensorShape):
    """TensorShape(None): no rank known. An empty tuple, but never a scalar's shape."""

    __slots__ = ()

    @property
    def ndims(self):
        return None

    rank = ndims

    @property
    def dims(self):
        return None

    def as_list(self):
        raise ValueError("as_list() is not defined on an unknown TensorShape.")

    def is_fully_defined(self) -> bool:
        return False

    def is_compatible_with(self, other) -> bool:
        return True

    def merge_with(self, other):
        return as_shape(other)

    def concatenate(self, other):
        return self

    def __radd__(self, other):
        return self

    def __eq__(self, other):
        return isinstance(other, _UnknownRank)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(None)

    def __repr__(self) -> str:
        return "TensorShape(None)"

    def __str__(self) -> str:
        return "<unknown>"   # as TF prints it


def as_shape(shape) -> TensorShape:
    """shape (a TensorShape, a list of ints/None, or None) as a TensorShape."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: int | None = None) -> TensorShape:
    """A shape of `rank` unknown dims, or of unknown rank (tf.TensorShape's helper)."""
    return TensorShape(None if rank is None else [None] * rank)


class Dimension:
    """TF1's Dimension: one dim whose `value` is an int or None."""

    __slots__ = ("value",)

    def __init__(self, value):
        value = dimension_value(value)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 0):
            raise ShapeError(f"Dimension: value must be an int >= 0 or None, got {value!r}")
        self.value = value

    def __int__(self):
        if self.value is None:
            raise TypeError("an unknown Dimension has no int value")
        return self.value

    __index__ = __int__

    def __eq__(self, other):
        other = dimension_value(other)
        return None if self.value is None or other is None else self.value == other

    def __hash__(self):
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Dimension({self.value})"


def dimension_value(dim):
    """The int (or None) of a dim given as an int, None or Dimension (TF1's
    tf.compat.dimension_value)."""
    return dim.value if isinstance(dim, Dimension) else dim


def static(dims) -> TensorShape | None:
    """Tensor.shape's value: a TensorShape of `dims` (a tuple of ints and None), or
    None for an unknown rank."""
    return None if dims is None else tuple.__new__(TensorShape, dims)

"""og.nest: TF's tf.nest over Python structures: lists, tuples, namedtuples and mappings
are structure (a mapping's values in sorted key order, as TF), everything else
(numbers, strings, arrays, tensors, None) is a leaf."""

from __future__ import annotations

import collections.abc as _abc

from .module_namespace import namespace

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure",
           "pack_sequence_as", "nest"]


def is_nested(seq) -> bool:
    """Whether seq is a structure (a list, tuple, namedtuple or mapping), not a leaf.
    Never raises."""
    return isinstance(seq, (list, tuple, _abc.Mapping))


def _children(seq) -> list:
    if isinstance(seq, _abc.Mapping):
        return [seq[k] for k in _sorted_keys(seq)]
    return list(seq)


def _sorted_keys(mapping) -> list:
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError("nest only supports dicts with sortable keys.") from None


def flatten(structure, expand_composites: bool = False) -> list:
    """The leaves of structure, depth first (a leaf alone gives [leaf]).

    Raises:
        TypeError: a mapping has keys that cannot be sorted.
    """
    if not is_nested(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child)]


def _rebuild(template, children: list):
    if isinstance(template, _abc.Mapping):
        values = dict(zip(_sorted_keys(template), children))
        kind = type(template)
        # keep the mapping's own key order and type (an OrderedDict stays one)
        ordered = [(k, values[k]) for k in template]
        return kind(ordered) if kind is not dict else dict(ordered)
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*children)
    return type(template)(children)


def pack_sequence_as(structure, flat_sequence, expand_composites: bool = False):
    """flat_sequence's items placed at structure's leaves.

    Raises:
        TypeError: flat_sequence is not a list or tuple.
        ValueError: the counts of leaves differ (TF's message).
    """
    if not isinstance(flat_sequence, (list, tuple)):
        raise TypeError(f"Attempted to pack value:\n  {flat_sequence!r}\ninto a structure, "
                        f"but found incompatible type `{type(flat_sequence).__name__}` "
                        f"instead.")
    items = list(flat_sequence)
    if not is_nested(structure):
        if len(items) != 1:
            raise ValueError(f"Structure is a scalar but len(flat_sequence) == "
                             f"{len(items)} > 1")
        return items[0]
    count = len(flatten(structure))
    if count != len(items):
        raise ValueError(f"Could not pack sequence. Structure had {count} atoms, but "
                         f"flat_sequence had {len(items)} items.  Structure: {structure}, "
                         f"flat_sequence: {items}.")
    it = iter(items)

    def build(template):
        if not is_nested(template):
            return next(it)
        return _rebuild(template, [build(c) for c in _children(template)])
    return build(structure)


def assert_same_structure(nest1, nest2, check_types: bool = True,
                          expand_composites: bool = False) -> None:
    """Check that two structures nest the same way (and, with check_types, with the
    same sequence types).

    Raises:
        ValueError: they nest differently or hold different numbers of leaves.
        TypeError: check_types and a sequence type differs.
    """
    def walk(a, b):
        if is_nested(a) != is_nested(b):
            raise ValueError(f"The two structures don't have the same nested structure.\n\n"
                             f"First structure: {nest1}\n\nSecond structure: {nest2}")
        if not is_nested(a):
            return
        if check_types and type(a) is not type(b) and not (
                isinstance(a, _abc.Mapping) and isinstance(b, _abc.Mapping)):
            raise TypeError(f"The two structures don't have the same sequence type. Input "
                            f"structure has type {type(a)}, while shallow structure has "
                            f"type {type(b)}.")
        if isinstance(a, _abc.Mapping) and _sorted_keys(a) != _sorted_keys(b):
            raise ValueError(f"The two dictionaries don't have the same set of keys. First "
                             f"structure has keys {_sorted_keys(a)}, while second structure "
                             f"has keys {_sorted_keys(b)}.")
        ca, cb = _children(a), _children(b)
        if len(ca) != len(cb):
            raise ValueError(f"The two structures don't have the same nested structure.\n\n"
                             f"First structure: {nest1}\n\nSecond structure: {nest2}")
        for x, y in zip(ca, cb):
            walk(x, y)
    walk(nest1, nest2)


def map_structure(func, *structure, **kwargs):
    """func applied to the leaves at each position of the structures, in the first
    structure's shape (check_types=True compares the sequence types).

    Raises:
        TypeError: func is not callable, or no structure is given.
        ValueError / TypeError: the structures differ (assert_same_structure).
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(f"Only valid keyword arguments are `check_types` and "
                         f"`expand_composites`, not: `{', '.join(sorted(kwargs))}`")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    leaves = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*xs) for xs in zip(*leaves)])


nest = namespace("nest", "TF's tf.nest over Python structures.", {
    "assert_same_structure": assert_same_structure, "flatten": flatten,
    "is_nested": is_nested, "map_structure": map_structure,
    "pack_sequence_as": pack_sequence_as})

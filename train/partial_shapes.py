"""Shape tensors known in part while building, as TF1's `constant_value_as_shape`.

TF1 code builds shapes from pieces: ``og.zeros([og.shape(x)[0], 3])``,
``og.random_uniform(og.stack([batch, 1, 1, 1]))``. Such a shape tensor has no value
while building, but some of its entries are known (3, 1) and the others name dims of
other tensors. The graph records those entries for the small integer tensors that shape
code makes (Shape, its slices and gathers, Squeeze / Unsqueeze / Reshape / Cast /
Identity of them, Concat of them with constants), and the ops that take a shape
(ConstantOfShape, Expand, Reshape, Resize's sizes, Tile) fill in from them the dims
their own inference left unknown: ``og.zeros([og.shape(x)[0], 3])`` is (?, 3), as in
TF1, not (?, ?).

Entries are ints (known) or None (known only at run time). Nothing here raises: a
pattern it does not know leaves the shapes as inference made them.
"""

from __future__ import annotations

import numpy as np

_INT_KINDS = "iu"
# Shape tensors are short; longer integer tensors are data, not shapes
_MAX_ENTRIES = 64


def entries(graph, index: int) -> tuple | None:
    """The entries of integer tensor `index` of `graph` (rank 0 or 1) known while
    building: its value as ints, or its recorded partial entries, else None."""
    value = graph._static.get(index)
    if value is not None:
        v = np.asarray(value)
        if v.dtype.kind not in _INT_KINDS or v.ndim > 1 or v.size > _MAX_ENTRIES:
            return None
        return tuple(int(d) for d in v.reshape(-1))
    return graph._partial.get(index)


def record(graph, node, shape_of) -> None:
    """After `node` was added and inferred: record its output's partial entries when
    it is shape arithmetic TF1 follows, and fill in unknown dims of the output of an
    op that takes a shape. `shape_of(index)` is a tensor's shape (None entries
    unknown) or None."""
    op = node.op_type
    if node.domain not in ("", "ai.onnx") or not node.outputs:
        return
    if op in _CONSUMERS:   # first: a Reshape is both, and its entries need its shape
        known = _CONSUMERS[op](graph, node, shape_of)
        if known is not None:
            _fill(graph, node.outputs[0], known)
    if op in _PRODUCERS and node.outputs[0] not in graph._static:
        found = _PRODUCERS[op](graph, node, shape_of)
        if found is not None and len(found) <= _MAX_ENTRIES:
            graph._partial[node.outputs[0]] = tuple(found)


def _fill(graph, index: int, known: tuple) -> None:
    """Fill the unknown dims (or rank) of tensor `index` from `known`."""
    t = graph._ir.tensors[index]
    if t.shape is None:
        t.shape = tuple(-1 if d is None else int(d) for d in known)
    elif len(t.shape) == len(known):
        t.shape = tuple(int(k) if d < 0 and k is not None and k >= 0 else d
                        for d, k in zip(t.shape, known))


def _input(node, k: int) -> int:
    return node.inputs[k] if k < len(node.inputs) else -1


def _ints(graph, node, k: int) -> list | None:
    """Input k's value as a list of ints, or None when absent or not known."""
    i = _input(node, k)
    if i < 0:
        return None
    found = entries(graph, i)
    return None if found is None or None in found else list(found)


# --------------------------------------------------------------------------- producers

def _shape(graph, node, shape_of):
    dims = shape_of(node.inputs[0])
    if dims is None:
        return None
    rank = len(dims)
    start = int(node.attributes.get("start", 0) or 0)
    end = node.attributes.get("end")
    start = max(0, min(rank, start + rank if start < 0 else start))
    end = rank if end is None else int(end)
    end = max(0, min(rank, end + rank if end < 0 else end))
    return dims[start:end]


def _slice(graph, node, shape_of):
    data = entries(graph, node.inputs[0])
    starts, ends = _ints(graph, node, 1), _ints(graph, node, 2)
    axes = _ints(graph, node, 3) if _input(node, 3) >= 0 else [0]
    steps = _ints(graph, node, 4) if _input(node, 4) >= 0 else [1]
    if data is None or None in (starts, ends, axes, steps) or len(starts) != 1 \
            or len(ends) != 1 or axes not in ([0], [-1]) or len(steps) != 1 or steps[0] == 0:
        return None
    n = len(data)
    # ONNX clamps starts and ends as Python slices do, ends past the end included
    lo = max(-n - 1, min(n, starts[0]))
    hi = max(-n - 1, min(n, ends[0]))
    return data[slice(lo, hi, steps[0])]


def _gather(graph, node, shape_of):
    data = entries(graph, node.inputs[0])
    idx = graph._static.get(_input(node, 1))
    if data is None or idx is None or int(node.attributes.get("axis", 0) or 0) not in (0, -1):
        return None
    idx = np.asarray(idx)
    if idx.dtype.kind not in _INT_KINDS or idx.ndim > 1:
        return None
    n = len(data)
    picked = [int(i) for i in idx.reshape(-1)]
    if any(not -n <= i < n for i in picked):
        return None
    return tuple(data[i] for i in picked)


def _same_entries(graph, node, shape_of):
    """Squeeze, Unsqueeze, Reshape, Identity, Cast to an integer type: the entries
    unchanged (the output of rank 0 or 1 holds the same elements in order)."""
    if node.op_type == "Cast" and node.attributes.get("to") not in _INT_ONNX_TYPES:
        return None
    data = entries(graph, node.inputs[0])
    out = shape_of(node.outputs[0])
    if data is None or out is None or len(out) > 1:
        return None
    return data if (len(out) == 0 and len(data) == 1) or (len(out) == 1 and out[0] in (
        None, len(data))) else None


def _concat(graph, node, shape_of):
    if int(node.attributes.get("axis", 0)) not in (0, -1):
        return None
    found = []
    for i in node.inputs:
        part = entries(graph, i) if i >= 0 else ()
        if part is None:
            dims = shape_of(i)
            if dims is None or len(dims) != 1 or dims[0] is None:
                return None
            part = (None,) * dims[0]   # its length known, its entries not
        found.extend(part)
    return tuple(found)


# ONNX TensorProto element types of the integer types (int8..uint64)
_INT_ONNX_TYPES = (2, 3, 4, 5, 6, 7, 12, 13)

_PRODUCERS = {"Shape": _shape, "Slice": _slice, "Gather": _gather, "Concat": _concat,
              "Squeeze": _same_entries, "Unsqueeze": _same_entries,
              "Reshape": _same_entries, "Identity": _same_entries, "Cast": _same_entries}


# --------------------------------------------------------------------------- consumers

def _dims_given(graph, node, k: int):
    """A shape input's entries (ints, None where only the run knows them; negative
    entries kept), or None."""
    i = _input(node, k)
    return None if i < 0 else entries(graph, i)


def _constant_of_shape(graph, node, shape_of):
    dims = _dims_given(graph, node, 0)
    if dims is None or any(d is not None and d < 0 for d in dims):
        return None
    return dims


def _expand(graph, node, shape_of):
    target, x = _dims_given(graph, node, 1), shape_of(node.inputs[0])
    if target is None or x is None:
        return None
    rank = max(len(target), len(x))
    target = (1,) * (rank - len(target)) + tuple(target)
    x = (1,) * (rank - len(x)) + tuple(x)
    out = []
    for a, b in zip(x, target):
        if a is not None and a != 1:
            out.append(a)            # a broadcast dim other than 1 wins (or misfits)
        elif b is not None and b != 1:
            out.append(b)
        elif a == 1 and b == 1:
            out.append(1)
        else:
            out.append(None)         # 1 against an unknown: the unknown decides
    return tuple(out)


def _reshape(graph, node, shape_of):
    target = _dims_given(graph, node, 1)
    if target is None:
        return None
    x = shape_of(node.inputs[0])
    allowzero = bool(node.attributes.get("allowzero", 0))
    out = []
    for k, d in enumerate(target):
        if d is None or d == -1:
            out.append(None)
        elif d == 0 and not allowzero:
            out.append(x[k] if x is not None and k < len(x) else None)
        elif d >= 0:
            out.append(d)
        else:
            return None
    return tuple(out)


def _tile(graph, node, shape_of):
    reps, x = _dims_given(graph, node, 1), shape_of(node.inputs[0])
    if reps is None or x is None or len(reps) != len(x):
        return None
    return tuple(None if a is None or r is None else a * r for a, r in zip(x, reps))


def _resize(graph, node, shape_of):
    sizes = _dims_given(graph, node, 3)
    # the output is `sizes` only when stretched to it on every axis
    if sizes is None or node.attributes.get("axes") is not None \
            or node.attributes.get("keep_aspect_ratio_policy", "stretch") != "stretch" \
            or any(d is not None and d < 0 for d in sizes):
        return None
    x = shape_of(node.inputs[0])
    if x is not None and len(x) != len(sizes):
        return None
    return sizes


_CONSUMERS = {"ConstantOfShape": _constant_of_shape, "Expand": _expand,
              "Reshape": _reshape, "Resize": _resize, "Tile": _tile}

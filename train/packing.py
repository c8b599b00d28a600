"""TF1's auto-packing of integer arguments that hold tensors.

TF1 converts a list such as ``[tf.shape(x)[0], -1]`` or ``[[0, n], [0, 0]]`` into one
tensor (a tf.stack of its entries), so shapes, multiples, paddings and slice bounds may
mix Python ints with scalar tensors. Here such a list becomes one int64 tensor: runs of
plain ints are one constant, each tensor entry is cast to int64 and reshaped to one
element, and the pieces are joined with a Concat. Lists of plain ints are left to the
callers' constant paths.
"""

from __future__ import annotations

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..format import DType
from . import graph as _g
from .graph import Graph, Tensor


def holds_tensor(value) -> bool:
    """Whether `value` is a tensor, or a list/tuple holding one at any depth."""
    if _g._is_symbolic(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(holds_tensor(v) for v in value)
    return False


def int64_tensor(value, what: str, graph: Graph | None = None) -> Tensor:
    """An integer argument given as a tensor, or as a (nested) list mixing ints and
    scalar integer tensors, as one int64 tensor (a list of rows becomes a 2-D tensor).

    Raises:
        TypeError: an entry is neither an int nor a tensor (names `what` and the entry).
        ShapeError: a tensor entry is not an integer scalar, a tensor argument is not
            integer, or the rows of a nested list differ in length.
    """
    if graph is None:
        graph = _graph_in(value)
    if _g._is_symbolic(value):
        return _as_int64(_g.integer_tensor(value, what, graph))
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{what} must be a list of ints and scalar tensors, or an integer "
                        f"tensor; got {type(value).__name__}")
    if value and all(isinstance(v, (list, tuple)) for v in value):
        rows = [int64_tensor(v, f"{what}[{k}]", graph) for k, v in enumerate(value)]
        lengths = {len(v) for v in value}
        if len(lengths) != 1:
            raise ShapeError(f"{what} has rows of different lengths: "
                             f"{[len(v) for v in value]}")
        flat = graph.op("Concat", rows, {"axis": 0})
        return graph.op("Reshape", [flat, graph.constant_ints([len(value), lengths.pop()])])
    pieces, run = [], []
    for k, v in enumerate(value):
        if _g._is_symbolic(v):
            if run:
                pieces.append(graph.constant_ints(run))
                run = []
            pieces.append(_entry(v, f"{what}[{k}]", graph))
        else:
            run.append(_plain_int(v, f"{what}[{k}]"))
    if run or not pieces:
        pieces.append(graph.constant_ints(run))
    if len(pieces) == 1:
        return pieces[0]
    return graph.op("Concat", pieces, {"axis": 0})


def _entry(v, what: str, graph: Graph) -> Tensor:
    """One tensor entry of a packed list, as a 1-element int64 vector."""
    t = _g.integer_tensor(v, what, graph)
    if t.shape is not None and len(t.shape) != 0:
        raise ShapeError(f"{what} must be a scalar tensor to pack into a list, got "
                         f"shape {list(t.shape)}")
    return graph.op("Reshape", [_as_int64(t), graph.constant_ints([1])])


_ONNX_INT64 = 7  # TensorProto.INT64, Cast's `to`


def _as_int64(t: Tensor) -> Tensor:
    if t.dtype is DType.INT64:
        return t
    return t.graph.op("Cast", [t], {"to": _ONNX_INT64})


def _plain_int(v, what: str) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an int or a scalar integer tensor, got "
                        f"{type(v).__name__} {v!r:.60}")
    return int(v)


def _graph_in(value) -> Graph:
    """The graph of the first tensor in `value` (lists searched in order)."""
    if _g._is_symbolic(value):  # a Tensor or a Variable
        return value.graph
    if isinstance(value, (list, tuple)):
        for v in value:
            if holds_tensor(v):
                return _graph_in(v)
    raise OneGraphError("no tensor to find a graph in")  # callers check holds_tensor

"""Whole-graph shape and dtype inference: each op's `infer` rule run in graph order.

`infer_graph` returns what is known about every tensor; `annotate_graph` writes it into
the activations whose dtype or shape the graph does not state yet (e.g. after building
a graph by hand or importing an ONNX model without value_info). Values of constants,
and of small shape computations derived from them, are propagated so that ops like
Reshape get exact output shapes.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..format import DType, Graph, Model
from .registry import TensorInfo

# Constants larger than this are not propagated as values (shape math only needs small
# integer tensors; copying weights through inference would be waste).
_MAX_VALUE_ELEMENTS = 1024


def _declared(t) -> TensorInfo:
    if t.containers:  # a sequence/optional value: dtype and shape describe its elements
        return TensorInfo(None, None)
    dtype = None if t.dtype is DType.UNDEFINED else t.dtype.numpy
    shape = None if t.shape is None else tuple(None if d < 0 else d for d in t.shape)
    value = None
    if t.data is not None and t.data.size <= _MAX_VALUE_ELEMENTS:
        value = np.asarray(t.data)
    return TensorInfo(dtype, shape, value)


def _check_graph(graph, who: str) -> None:
    """Raises TypeError unless `graph` is an IR Graph, saying what to pass instead."""
    if isinstance(graph, Graph):
        return
    kind = type(graph)
    hint = ""
    if isinstance(graph, Model):
        hint = " (pass model.graph, or each of model.all_graphs())"
    elif hasattr(graph, "to_model"):
        hint = " (an og.Graph: pass graph.to_model().graph)"
    raise TypeError(f"{who}: expected a onegraph.format.Graph, got "
                    f"{kind.__module__}.{kind.__qualname__}{hint}")


def infer_graph(graph: Graph, inputs: dict[int, TensorInfo] | None = None,
                strict: bool = False) -> list[TensorInfo | None]:
    """Infer dtype/shape (and small values) of every tensor of `graph`.

    Args:
        graph: the graph; it is not modified.
        inputs: optional overrides for input tensors, by tensor index.
        strict: raise when an op has no rule or its rule fails, instead of leaving
            that op's outputs unknown.

    Returns:
        One TensorInfo per tensor (None when nothing is known).

    Raises:
        ShapeError: (strict, or always on a real inconsistency) the node is named.
        TypeError: graph is not a `onegraph.format.Graph` (e.g. a Model: pass
            model.graph), or inputs is not a mapping.
    """
    from . import REGISTRY

    _check_graph(graph, "infer_graph")
    if inputs is not None and not isinstance(inputs, Mapping):
        raise TypeError(f"infer_graph: inputs must be a mapping of tensor index -> "
                        f"TensorInfo, got {type(inputs).__name__}")
    infos: list[TensorInfo | None] = [_declared(t) for t in graph.tensors]
    for index, info in (inputs or {}).items():
        infos[index] = info
    for n in graph.topological_order():
        node = graph.nodes[n]
        where = f"node {node.name!r} ({node.op_type}): "
        if not REGISTRY.has(node.op_type, node.domain):
            if strict:
                REGISTRY.get(node.op_type, node.domain, where)
            continue
        op = REGISTRY.get(node.op_type, node.domain)
        if op.infer is None:
            if strict:
                raise ShapeError(f"{where}op has no inference rule")
            continue
        args = [infos[i] if i >= 0 else None for i in node.inputs]
        if any(a is None or (a.dtype is None and a.shape is None) for a, i in
               zip(args, node.inputs) if i >= 0):
            continue
        try:
            attrs = op.resolve_attrs(node.attributes, where, len(node.outputs))
            result = op.infer(attrs, args)
        except ShapeError as e:
            raise ShapeError(f"{where}{e}") from e
        except OneGraphError:
            raise
        except Exception as e:  # a rule that cannot handle partial information
            if strict:
                raise ShapeError(f"{where}inference failed: {type(e).__name__}: {e}") from e
            continue
        for i, info in zip(node.outputs, result):
            if i >= 0 and info is not None:
                infos[i] = _merge(infos[i], info, graph.tensors[i].name, where)
    return infos


def _merge(declared: TensorInfo | None, inferred: TensorInfo, name: str,
           where: str) -> TensorInfo:
    """Combine a declared and an inferred description, keeping the most specific."""
    if declared is None or (declared.dtype is None and declared.shape is None):
        return inferred
    dtype = declared.dtype if declared.dtype is not None else inferred.dtype
    shape = declared.shape
    if inferred.shape is not None:
        if shape is None:
            shape = inferred.shape
        elif len(shape) == len(inferred.shape):
            merged = []
            for d, e in zip(shape, inferred.shape):
                if d is not None and e is not None and d != e:
                    raise ShapeError(f"{where}tensor {name!r} is declared with shape "
                                     f"{list(shape)} but the op produces {list(inferred.shape)}")
                merged.append(d if d is not None else e)
            shape = tuple(merged)
    return TensorInfo(dtype, shape, inferred.value if inferred.value is not None
                      else declared.value)


def annotate_graph(graph: Graph, strict: bool = False) -> Graph:
    """Fill in unknown dtypes and shapes of activations from inference, in place.

    Returns the same graph. Raises like `infer_graph` (TypeError: graph is not a
    `onegraph.format.Graph`).
    """
    _check_graph(graph, "annotate_graph")
    infos = infer_graph(graph, strict=strict)
    for t, info in zip(graph.tensors, infos):
        if info is None or t.data is not None or t.containers:
            continue
        if t.dtype is DType.UNDEFINED and info.dtype is not None:
            try:
                t.dtype = DType.from_numpy(info.dtype)
            except OneGraphError:
                pass
        if info.shape is not None and (t.shape is None or any(d < 0 for d in t.shape)):
            t.shape = tuple(-1 if d is None else int(d) for d in info.shape)
    return graph

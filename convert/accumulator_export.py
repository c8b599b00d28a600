"""og.map_fn's and og.scan's accumulators written as ONNX sequences, for the export.

map_fn and scan collect their rows in an accumulator that a while_loop carries:
AccumulatorNew makes an empty one, AccumulatorWrite(acc, i, row, n) puts row i in
(rows come in order, i being the loop's counter), and AccumulatorStack stacks them
into one (n, *row) array after the loop. ONNX carries sequences through a Loop, so
they become SequenceEmpty, SequenceInsert(acc, row, i) and ConcatFromSequence with a
new axis 0; an accumulator nothing was written to gives the empty (0, *row) array
AccumulatorStack gives (an If on the sequence's length), since ConcatFromSequence
refuses an empty sequence. Every tensor that carries an accumulator through the loop
frame (Enter, Merge, Switch, Exit, ...) becomes a sequence of the rows' type, so the
Loop the frame then becomes (`control_flow_export`) carries a sequence.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..format.ir import Container, DType, Graph, Node, TensorKind
from .control_flow_export import fresh_name

_DOMAIN = "onegraph"
# ops that hand an accumulator on unchanged (input 0 to output 0; Merge either input)
_ACCUMULATOR_OPS = frozenset({"AccumulatorNew", "AccumulatorWrite", "AccumulatorStack"})
_CARRIERS = frozenset({"Enter", "Exit", "Merge", "Switch", "NextIteration", "Identity",
                       "AccumulatorWrite"})


def accumulators_as_sequences(g: Graph, candidates: set, taken: set) -> Graph:
    """A copy of `g` where the accumulators are ONNX sequences (node indices are kept;
    new names avoid and join `taken`), when an accumulator op is among `candidates`
    (a signature's part of the graph); `g` itself otherwise. Every accumulator of the
    graph is rewritten, since a loop carries them all, even those (a tuple scan's
    other results) nothing kept reads. An accumulator whose origin is not an
    AccumulatorNew of the graph is left as it is (the export then names its ops).
    Never raises."""
    if not any(g.nodes[k].domain == _DOMAIN and g.nodes[k].op_type in _ACCUMULATOR_OPS
               for k in candidates):
        return g
    from .onnx_export import dtype_to_onnx  # (that module imports this one)

    stacks = [k for k, node in enumerate(g.nodes) if node.op_type == "AccumulatorStack"
              and node.domain == _DOMAIN and len(node.inputs) == 1]
    producers = g.producers()
    out = g.copy()
    for k in stacks:
        stack = g.nodes[k]
        try:
            dtype = DType.from_numpy(np.dtype(stack.attributes.get("dtype")))
            element = tuple(int(d) for d in stack.attributes.get("element_shape", ()))
        except Exception:  # noqa: BLE001 - an odd attribute: left for the export to name
            continue
        chain = _chain(g, producers, stack.inputs[0])
        if chain is None:
            continue
        tensors, writes, news = chain
        for t in tensors:
            out.tensors[t] = dataclasses.replace(
                g.tensors[t], dtype=dtype, shape=element, containers=(Container.SEQUENCE,))
        for n in news:
            out.nodes[n] = Node("SequenceEmpty", [], list(g.nodes[n].outputs),
                                {"dtype": dtype_to_onnx(dtype)}, name=g.nodes[n].name,
                                control_inputs=list(g.nodes[n].control_inputs))
        for n in writes:
            acc, index, row = g.nodes[n].inputs[:3]
            out.nodes[n] = Node("SequenceInsert", [acc, row, index],
                                list(g.nodes[n].outputs), name=g.nodes[n].name,
                                control_inputs=list(g.nodes[n].control_inputs))
        out.nodes[k] = _stacked(out, stack, dtype, element, taken)
    return out


def _chain(g: Graph, producers, start: int):
    """(tensors carrying the accumulator, its AccumulatorWrites, its AccumulatorNews)
    from tensor `start` back to where it was made, or None if something else makes or
    changes it."""
    tensors: set = set()
    writes: set = set()
    news: set = set()
    stack = [start]
    while stack:
        t = stack.pop()
        if t < 0 or t in tensors:
            continue
        tensors.add(t)
        n = producers.get(t)
        if n is None:
            return None
        node = g.nodes[n]
        if node.domain == _DOMAIN and node.op_type == "AccumulatorNew":
            news.add(n)
            continue
        if node.op_type not in _CARRIERS or node.domain not in (_DOMAIN, "", "ai.onnx") \
                or (node.op_type == "Identity") != (node.domain != _DOMAIN) \
                or not node.inputs:
            return None
        if node.op_type == "AccumulatorWrite":
            if len(node.inputs) != 4:
                return None
            writes.add(n)
        stack.extend(node.inputs if node.op_type == "Merge" else node.inputs[:1])
    return (tensors, writes, news) if news else None


def _stacked(out: Graph, stack: Node, dtype: DType, element: tuple, taken: set) -> Node:
    """The If that stands for AccumulatorStack: the rows concatenated on a new axis 0,
    or an empty (0, *row) array when there are none (unknown dims then 0, as the
    kernel gives)."""
    acc = stack.inputs[0]
    result = stack.outputs[0]
    base = stack.name or out.tensors[result].name

    def add(name, dt, shape, kind=TensorKind.ACTIVATION, data=None) -> int:
        out.tensors.append(dataclasses.replace(out.tensors[result],
                                               name=fresh_name(name, taken), dtype=dt,
                                               shape=shape, kind=kind, data=data,
                                               containers=()))
        return len(out.tensors) - 1

    length = add(f"{base}/length", DType.INT64, ())
    zero = add(f"{base}/zero", DType.INT64, (), TensorKind.CONSTANT, np.array(0, np.int64))
    empty = add(f"{base}/empty", DType.BOOL, ())
    # the If's branches read the accumulator by name; they run after the two nodes
    # before it, which the export orders by their data edges
    then = Graph(name=f"{base}/no_rows")
    value = np.zeros((0,) + tuple(max(d, 0) for d in element), dtype.numpy)
    then.tensors.append(dataclasses.replace(
        out.tensors[result], name=fresh_name(f"{base}/no_rows_value", taken),
        shape=value.shape, containers=()))
    then.nodes.append(Node("Constant", [], [0], {"value": value}, name=then.tensors[0].name))
    then.outputs = [0]
    other = Graph(name=f"{base}/rows")
    other.tensors.append(out.tensors[acc])
    other.tensors.append(dataclasses.replace(
        out.tensors[result], name=fresh_name(f"{base}/rows_value", taken), containers=()))
    other.nodes.append(Node("ConcatFromSequence", [0], [1], {"axis": 0, "new_axis": 1},
                            name=other.tensors[1].name))
    other.outputs = [1]
    out.nodes.append(Node("SequenceLength", [acc], [length], name=f"{base}/length"))
    out.nodes.append(Node("Equal", [length, zero], [empty], name=f"{base}/empty"))
    return Node("If", [empty], [result], {"then_branch": then, "else_branch": other},
                name=base, device=stack.device, control_inputs=list(stack.control_inputs))

"""ONNX's training Gradient op (domain ai.onnx.preview.training), built at import.

Gradient(xs=[...], zs=[...], y=name) takes one input per name of xs followed by zs, the
values at which to differentiate, and gives dy/dx for each x of xs (the gradient of the
sum of y's elements where y is not a scalar, as TF's `gradients` and the usual seed of
ones). The names pick out the computation from xs and zs to y in the same graph. There
is no kernel: the importer replaces each Gradient node by the nodes onegraph's autodiff
(`onegraph.train.gradients`) builds for that computation, so the imported graph holds
ordinary ops (which the Session runs and `to_onnx` writes).

Where the node's inputs are the tensors xs and zs name (the usual form), the gradient
reads the forward values the graph computes anyway. Otherwise the nodes from xs and zs
to y are built again on the given inputs, and differentiated there. A Gradient inside a
subgraph (If/Loop/Scan body) or one whose forward nodes hold subgraphs and must be
rebuilt is refused. Nothing in xs reaching y gives zeros (ONNX's outputs are tensors;
TF's None).
"""

from __future__ import annotations

from ..errors import ConversionError, OneGraphError
from ..format import DType, Graph, Node

DOMAIN = "ai.onnx.preview.training"
OP = "Gradient"
UNSUPPORTED_KEY = f"{DOMAIN}::{OP}"


def is_gradient(node: Node) -> bool:
    """Whether `node` is an ai.onnx.preview.training Gradient."""
    return node.op_type == OP and node.domain == DOMAIN


def nested_gradient(graph: Graph):
    """(the Gradient node, its subgraph, the node holding that) for the first Gradient
    inside a subgraph of `graph`, or None. Never raises."""
    for node in graph.nodes:
        for sub in node.subgraphs():
            for inner in sub.nodes:
                if is_gradient(inner):
                    return inner, sub, node
            found = nested_gradient(sub)
            if found is not None:
                return found
    return None


def refuse_nested_gradients(graph: Graph) -> None:
    """Raise ConversionError for a Gradient inside a subgraph of `graph` (the importer
    builds Gradient in the main graph only)."""
    found = nested_gradient(graph)
    if found is not None:
        inner, sub, node = found
        raise ConversionError(
            f"Gradient node {inner.name!r} is inside the subgraph {sub.name!r} of node "
            f"{node.name!r} ({node.op_type}): onegraph builds ai.onnx.preview.training "
            "Gradient only in the main graph")


def _names(node: Node, attr: str, where: str, required: bool) -> list[str]:
    value = node.attributes.get(attr)
    if value is None:
        if required:
            raise ConversionError(f"{where}: attribute {attr!r} is required")
        return []
    if isinstance(value, (bytes, str)):
        value = [value]
    names = [v.decode() if isinstance(v, bytes) else v for v in value]
    if not all(isinstance(v, str) and v for v in names):
        raise ConversionError(f"{where}: attribute {attr!r} must hold tensor names, got "
                              f"{value!r}")
    return names


def _tensor(graph: Graph, name: str, where: str, what: str) -> int:
    index = graph.find_tensor(name)
    if index is None:
        raise ConversionError(f"{where}: {what} {name!r} names no tensor of the graph")
    return index


def _forward_nodes(graph: Graph, y: int, sources: set[int], where: str) -> list[int]:
    """The nodes between `sources` and tensor y, in graph order (what computes y from
    them); a path that reaches a graph input or a constant stops there."""
    producer = graph.producers()
    found, stack, seen = set(), [y], set()
    while stack:
        t = stack.pop()
        if t in seen or t in sources:
            continue
        seen.add(t)
        n = producer.get(t)
        if n is None or n in found:
            continue
        if is_gradient(graph.nodes[n]):
            raise ConversionError(f"{where}: y is computed by another Gradient node "
                                  f"{graph.nodes[n].name!r} from values other than its own "
                                  "inputs")
        found.add(n)
        stack.extend(i for i in graph.nodes[n].inputs if i >= 0)
    return sorted(found)


def _rebuild(g, graph: Graph, y: int, binding: dict[int, int], where: str) -> int:
    """Build the nodes computing y again with the tensors in `binding` (old -> new
    index) in place of xs and zs; returns y's new index."""
    from ..train.graph import Tensor

    mapping = dict(binding)
    for n in _forward_nodes(graph, y, set(binding), where):
        node = graph.nodes[n]
        if node.subgraphs():
            raise ConversionError(f"{where}: the values given differ from xs and zs, so "
                                  f"the computation of y is built again, but its node "
                                  f"{node.name!r} ({node.op_type}) holds subgraphs")
        ins = [None if i < 0 else Tensor(g, mapping.get(i, i)) for i in node.inputs]
        outs = g.op(node.op_type, ins, dict(node.attributes),
                    num_outputs=len(node.outputs), domain=node.domain,
                    name=f"{node.name}_at_given_values")
        outs = outs if isinstance(outs, list) else [outs]
        for old, new in zip(node.outputs, outs):
            if old >= 0:
                mapping[old] = new.tensor_index
    return mapping.get(y, y)


def _expand(graph: Graph, n: int) -> None:
    """Replace node n (a Gradient) of `graph` by the nodes computing its outputs."""
    from ..train.gradients import gradients
    from ..train.graph import Graph as BuildGraph, Tensor

    node = graph.nodes[n]
    where = f"Gradient node {node.name!r}"
    xs = _names(node, "xs", where, True)
    zs = _names(node, "zs", where, False)
    y_name = _names(node, "y", where, True)
    if len(y_name) != 1:
        raise ConversionError(f"{where}: attribute 'y' must name one tensor, got {y_name}")
    if len(node.inputs) != len(xs) + len(zs):
        raise ConversionError(f"{where}: takes one input per name of xs and zs "
                              f"({len(xs)} + {len(zs)}), got {len(node.inputs)}")
    if len(node.outputs) > len(xs):
        raise ConversionError(f"{where}: has {len(node.outputs)} outputs for {len(xs)} xs")
    if any(i < 0 for i in node.inputs):
        raise ConversionError(f"{where}: every input is required (the value of each x "
                              "and z)")
    named = [_tensor(graph, x, where, "x") for x in xs] + \
        [_tensor(graph, z, where, "z") for z in zs]
    y = _tensor(graph, y_name[0], where, "y")
    if graph.tensors[y].dtype not in _FLOATS:
        raise ConversionError(f"{where}: y {y_name[0]!r} is {graph.tensors[y].dtype.name}; "
                              "only a floating-point y has a gradient")
    kept = graph.nodes[:n] + graph.nodes[n + 1:]
    if any(other.control_inputs for other in graph.nodes):
        raise ConversionError(f"{where}: the graph has control dependencies; onegraph "
                              "builds Gradient only in graphs without them")
    start = len(kept)
    graph.nodes[:] = kept  # the Gradient node itself is not differentiated through
    g = BuildGraph.around(graph)
    try:
        if list(node.inputs) == named:
            target, wrt = y, named[:len(xs)]
        else:
            target = _rebuild(g, graph, y, dict(zip(named, node.inputs)), where)
            wrt = list(node.inputs[:len(xs)])
        grads = gradients([Tensor(g, target)], [Tensor(g, i) for i in wrt],
                          name=f"{node.name or 'Gradient'}_gradients")
        made = []
        for k, out in enumerate(node.outputs):
            if out < 0:
                continue
            grad = grads[k]
            if grad is None:  # y does not depend on this x
                grad = g.op("ZerosLike", [Tensor(g, wrt[k])])
            made.append((grad.tensor_index, out))
    except OneGraphError as e:
        raise ConversionError(f"{where}: cannot build the gradient of {y_name[0]!r}: "
                              f"{e}") from e
    for source, out in made:
        graph.add_node("Identity", [source], [out], {}, name=f"{node.name}_output_{out}")
        t, src = graph.tensors[out], graph.tensors[source]
        if t.dtype is DType.UNDEFINED:
            t.dtype = src.dtype
        if t.shape is None:
            t.shape = src.shape
    built = graph.nodes[start:]
    graph.nodes[:] = kept[:n] + built + kept[n:]


_FLOATS = {DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64}


def _fill_element_types(graph: Graph) -> None:
    """Give the tensors whose element type neither the model nor ONNX's inference
    stated the one onegraph's inference finds: autodiff differentiates floating-point
    tensors only, and reads that from the graph."""
    from ..ops.inference import infer_graph

    if all(t.dtype is not DType.UNDEFINED or t.containers for t in graph.tensors):
        return
    try:
        infos = infer_graph(graph)
    except OneGraphError:
        return
    for t, info in zip(graph.tensors, infos):
        if t.dtype is DType.UNDEFINED and not t.containers and info is not None \
                and info.dtype is not None:
            try:
                t.dtype = DType.from_numpy(info.dtype)
            except OneGraphError:
                continue


def expand_gradients(graph: Graph, unsupported: dict) -> None:
    """Replace every Gradient node of the main graph `graph` by the nodes computing its
    outputs (see the module docstring), in place, and drop Gradient from `unsupported`
    (the importer's {op key: ...} of ops without kernels).

    Raises:
        ConversionError: a Gradient inside a subgraph; attributes xs or y missing or
            naming no tensor; input or output counts that do not fit xs and zs; a y
            that is not floating point; an op on the way from xs to y without a gradient
            rule (named); forward nodes with subgraphs that would have to be rebuilt.
    """
    if UNSUPPORTED_KEY not in unsupported:
        return
    refuse_nested_gradients(graph)
    _fill_element_types(graph)
    while True:
        n = next((k for k, node in enumerate(graph.nodes) if is_gradient(node)), None)
        if n is None:
            break
        _expand(graph, n)
    del unsupported[UNSUPPORTED_KEY]


"""og.import_graph_def: build a TF1 GraphDef (a frozen .pb) into the default og graph.

Each NodeDef becomes a call to og's own TF1-named function (graph_def_ops.CONVERTERS),
in topological order, under TF's name scope ("import" unless `name` says otherwise).

Control flow v1 (tf.cond's Switch/Merge, tf.while_loop's Enter/Merge/Switch/Exit/
NextIteration/LoopCond) becomes og's own dataflow ops, which the Session runs as frames
and onegraph.convert.to_onnx exports as If / Loop, from the IR alone (so a saved .og
runs too). A loop's Merge reads its NextIteration, built later: that input is a back
edge, left out of the build order and patched in once the NextIteration exists, as
og.while_loop does. TF's Exit names no frame; the importer tracks the frame each node
runs in (an Enter opens its frame_name, an Exit returns to the enclosing one) and
gives og's Exit that name. Gradients through imported control flow are not built: an
imported Merge has no og.cond predicate and an Exit no og.while_loop record, so
og.gradients refuses them by name (GradientNotDefinedError / OneGraphError).
"""

from __future__ import annotations

from ..errors import ConversionError, OneGraphError
from .graph_def import GraphDef
from .graph_def_functions import call_library_function, reachable_nodes
from .graph_def_ops import BACK_EDGE_SOURCES, CONVERTERS, MERGE_KINDS

__all__ = ["import_graph_def"]


def _split_name(ref: str) -> tuple[str, int]:
    """"node:1" -> ("node", 1); "node" -> ("node", 0); "^node" -> ("node", -1)."""
    if ref.startswith("^"):
        return ref[1:], -1
    node, sep, index = ref.rpartition(":")
    if sep and index.isdigit():
        return node, int(index)
    return ref, 0


def _unsupported_message(graph_def, library) -> str | None:
    """One sentence listing every op type without a converter (in the graph and in
    the library functions it calls; a library function's name is an op type too):
    count and first node ("function/node" inside a function)."""
    seen: dict = {}
    for where, node in reachable_nodes(graph_def, library):
        if node.op in CONVERTERS or node.op in library:
            continue
        count, first = seen.get(node.op, (0, where))
        seen[node.op] = (count + 1, first)
    if not seen:
        return None
    parts = [f"{op} (x{count}, first node {first!r})"
             for op, (count, first) in sorted(seen.items())]
    return (f"import_graph_def: {len(parts)} unsupported op type(s): " + ", ".join(parts))


def _topological(graph_def, mapped: set) -> list:
    """The nodes in an order where each comes after its data and control inputs
    (Kahn's algorithm, stable in GraphDef order); inputs in `mapped` need no producer.
    A Merge's input from a NextIteration is a loop's back edge: it does not order the
    Merge (the importer patches it in afterwards).

    Raises:
        ConversionError: an input names a missing node, or the nodes form a cycle (one
            that does not pass through a NextIteration into a Merge).
    """
    by_name = {}
    for node in graph_def.node:
        if node.name in by_name:
            raise ConversionError(f"import_graph_def: duplicate node name {node.name!r}")
        by_name[node.name] = node
    waiting, users = {}, {}
    for node in graph_def.node:
        deps = set()
        for ref in node.input:
            src, index = _split_name(ref)
            if index >= 0 and f"{src}:{index}" in mapped:
                continue
            if src not in by_name:
                raise ConversionError(f"import_graph_def: node {node.name!r} has input "
                                      f"{ref!r}, which is not in the graph_def")
            if node.op in MERGE_KINDS and index >= 0 \
                    and by_name[src].op in BACK_EDGE_SOURCES:
                continue    # a loop's back edge
            deps.add(src)
        waiting[node.name] = len(deps)
        for src in deps:
            users.setdefault(src, []).append(node.name)
    ready = [n.name for n in graph_def.node if waiting[n.name] == 0]
    order, pos = [], 0
    while pos < len(ready):
        name = ready[pos]
        pos += 1
        order.append(by_name[name])
        for user in users.get(name, ()):
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    if len(order) != len(by_name):
        stuck = sorted(n for n, c in waiting.items() if c > 0)[:5]
        raise ConversionError(f"import_graph_def: the graph_def has a cycle (nodes "
                              f"{stuck} never become ready)")
    return order


class _Context:
    """What a converter may ask the importer: the node's name, the loop frame its
    inputs run in ("" outside loops), static values, the og TensorArray each
    imported TensorArrayV3 handle stands for (keyed by the handle's tensor index),
    the graph_def's function library ({name: FunctionDef}) and `import_nodes`, which
    builds a function body's nodes."""

    def __init__(self, graph, library=None):
        self.graph, self.name, self.frame = graph, None, ""
        self.tensor_arrays: dict = {}
        self.library = library if library is not None else {}

    def import_nodes(self, nodes, mapped: dict) -> tuple:
        """Build `nodes` (NodeDefs whose inputs are "node:i" or keys of `mapped`,
        {"name:i": og Tensor}) into the default graph; returns ({node name: output
        tensors}, {node name: Operation}).

        Raises:
            ConversionError: as import_graph_def, for these nodes.
        """
        og = _og()
        body = GraphDef(nodes)
        order = _topological(body, set(mapped))
        inner = _Context(self.graph, self.library)
        inner.tensor_arrays = self.tensor_arrays
        return _build_all(order, inner, mapped, og)

    def static(self, tensor):
        """The value of `tensor` when known while building (a constant), else None."""
        try:
            return self.graph.static_value(tensor)
        except Exception:       # og refuses non-tensors/unknowns in several ways
            return None


def _normalise_input_map(input_map, graph_def, og) -> dict:
    """{"node:i": og Tensor}, keys checked against the graph_def's nodes and outputs.

    Raises:
        TypeError: input_map is not a dict or a key is not a str.
        ConversionError: a key names no node of the graph_def, or a control input.
    """
    if input_map is None:
        return {}
    if not isinstance(input_map, dict):
        raise TypeError(f"import_graph_def: input_map must be a dict, got "
                        f"{type(input_map).__name__}")
    names = {n.name for n in graph_def.node}
    out, missing = {}, []
    for key, value in input_map.items():
        if not isinstance(key, str):
            raise TypeError(f"import_graph_def: input_map keys must be str, got {key!r}")
        src, index = _split_name(key)
        if index < 0:
            raise ConversionError(f"import_graph_def: input_map key {key!r} is a control "
                                  f"input; map tensors (\"name:0\") only")
        if src not in names:
            missing.append(key)
            continue
        out[f"{src}:{index}"] = value if _is_tensor(value, og) else og.constant(value)
    if missing:
        raise ConversionError(f"import_graph_def: attempted to map inputs that were not "
                              f"found in graph_def: {missing}")
    return out


def _is_tensor(value, og) -> bool:
    return isinstance(value, og.Tensor)


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None,
                     op_dict=None, producer_op_list=None):
    """Build `graph_def`'s nodes into the default og graph, as TF1's tf.import_graph_def.

    Tensors named by `input_map` ("node:0" or "node" -> og Tensor or array) replace the
    graph_def's; `return_elements` ("node:0" -> Tensor, "node" -> Operation) are returned
    as a list (None when not given). `name` is the name scope ("import" by default, ""
    for none). op_dict and producer_op_list are accepted for TF's signature and unused.

    Raises:
        TypeError: graph_def is not a GraphDef/bytes, or input_map/return_elements are
            malformed.
        DataLossError: graph_def is bytes that do not parse as a GraphDef.
        ConversionError: unsupported op types (all listed in one message), a bad
            input_map key or return element, a missing input node, a cycle, or an
            attribute og cannot honour.
    """
    og = _og()
    if isinstance(graph_def, (bytes, bytearray)):
        graph_def = GraphDef.FromString(bytes(graph_def))
    if not isinstance(graph_def, GraphDef):
        raise TypeError(f"import_graph_def: graph_def must be an og.GraphDef, got "
                        f"{type(graph_def).__name__}")
    if return_elements is not None and (isinstance(return_elements, str) or not all(
            isinstance(r, str) for r in return_elements)):
        raise TypeError("import_graph_def: return_elements must be a list of str")
    library = graph_def.functions()
    message = _unsupported_message(graph_def, library)
    if message:
        raise ConversionError(message)
    mapped = _normalise_input_map(input_map, graph_def, og)
    order = _topological(graph_def, set(mapped))
    graph = og.get_default_graph()
    scope = "import" if name is None else name
    with og.name_scope(scope):
        outputs, operations = _build_all(order, _Context(graph, library), mapped, og)
    if return_elements is None:
        return None
    return [_return_element(r, outputs, operations) for r in return_elements]


def _build_all(order, ctx, mapped, og) -> tuple:
    """Build the nodes of `order` (topological), tracking loop frames, then patch the
    loops' back edges; returns ({name: output tensors}, {name: Operation})."""
    outputs, operations = {}, {}
    frames = _Frames()
    for node in order:
        ctx.frame = frames.of_inputs(node)
        outputs[node.name], operations[node.name] = _build(node, ctx, outputs,
                                                           operations, mapped, og)
        frames.record(node, ctx.frame)
    _patch_back_edges(ctx.graph, order, outputs, mapped)
    return outputs, operations


class _Frames:
    """The loop frame each built node runs in: an Enter runs in its frame_name (whose
    parent is its input's frame), an Exit in its input frame's parent, any other node
    in the frame of its inputs (control inputs too: a loop body's constants hang on
    its pivot); "" is outside every loop."""

    def __init__(self):
        self.frame: dict = {}
        self.parent: dict = {"": ""}

    def of_inputs(self, node) -> str:
        """The innermost frame among the node's built inputs ("" when none)."""
        best = ""
        for ref in node.input:
            src, index = _split_name(ref)
            if node.op in MERGE_KINDS and src not in self.frame:
                continue    # a back edge, not built yet
            found = self.frame.get(src, "")
            if found and (not best or self._depth(found) > self._depth(best)):
                best = found
        return best

    def _depth(self, frame: str) -> int:
        depth = 0
        while frame:
            frame, depth = self.parent.get(frame, ""), depth + 1
        return depth

    def record(self, node, inputs_frame: str) -> None:
        """Remember the node's frame, given the frame of its inputs.

        Raises:
            ConversionError: an Exit's input runs outside every loop frame (the Exit's
                converter refuses that first), or an Enter reopens a frame from
                another parent frame.
        """
        if node.op in ("Enter", "RefEnter"):
            name = node.get("frame_name", "")
            known = self.parent.setdefault(name, inputs_frame)
            if known != inputs_frame:
                raise ConversionError(f"import_graph_def: Enter {node.name!r} enters frame "
                                      f"{name!r} from frame {inputs_frame!r}, but another "
                                      f"Enter enters it from {known!r}")
            self.frame[node.name] = name
        elif node.op in ("Exit", "RefExit"):
            self.frame[node.name] = self.parent.get(inputs_frame, "")
        else:
            self.frame[node.name] = inputs_frame


def _patch_back_edges(graph, order, outputs, mapped) -> None:
    """Point each loop Merge's back-edge input at its NextIteration's output (the Merge
    was built reading its entering value there, as og.while_loop builds it).

    Raises:
        ConversionError: a back edge names an output its NextIteration does not have,
            or the loop variable's static shape changes across iterations (TF1's
            shape_invariants, which og's importer does not take).
    """
    for node in order:
        if node.op not in MERGE_KINDS:
            continue
        merge = outputs[node.name][0]
        ir_node = graph._ir.nodes[graph._producer[merge.tensor_index]]
        for k, ref in enumerate(node.input):
            src, index = _split_name(ref)
            if index < 0 or f"{src}:{index}" in mapped or k >= len(ir_node.inputs):
                continue
            outs = outputs.get(src)
            if outs is None or outs[0].op is None or \
                    outs[0].op.type != "NextIteration":
                continue
            if index >= len(outs):
                raise ConversionError(f"import_graph_def: node {node.name!r} reads {ref!r}, "
                                      f"but {src!r} has {len(outs)} output(s)")
            _check_loop_shape(node, merge, outs[index])
            ir_node.inputs[k] = outs[index].tensor_index


def _check_loop_shape(node, merge, next_value) -> None:
    """Refuse a loop variable whose shape the body changes: the ops of the body were
    built with the entering value's static shape, so they would fold wrong values."""
    a, b = merge.shape, next_value.shape
    if a is None or b is None:
        return
    if len(a) != len(b) or any(x is not None and y is not None and x != y
                               for x, y in zip(a, b)):
        raise ConversionError(f"import_graph_def: loop Merge {node.name!r} enters with "
                              f"shape {list(a)} but its NextIteration carries shape "
                              f"{list(b)}; loop variables that change shape are not "
                              "supported by og's importer")


def _og():
    from . import public    # og's namespace; imported late as public.py imports this
    return public


def _build(node, ctx, outputs, operations, mapped, og):
    """Convert one node; returns (its output tensors, its og Operation)."""
    data, control = [], []
    for ref in node.input:
        src, index = _split_name(ref)
        if index < 0:
            control.append(operations[src])
            continue
        key = f"{src}:{index}"
        if key in mapped:
            data.append(mapped[key])
            continue
        if src not in outputs:
            data.append(None)   # a Merge's back edge: patched in once built
            continue
        outs = outputs[src]
        if index >= len(outs):
            raise ConversionError(f"import_graph_def: node {node.name!r} reads {ref!r}, "
                                  f"but {src!r} has {len(outs)} output(s)")
        data.append(outs[index])
    if None in data:
        built = [t for t in data if t is not None]
        if not built:
            raise ConversionError(f"import_graph_def: Merge {node.name!r} has no input "
                                  "from outside its loop (only NextIteration back edges)")
        data = [built[0] if t is None else t for t in data]
    ctx.name = node.name
    try:
        with og.control_dependencies(control):
            convert = CONVERTERS.get(node.op, call_library_function)
            result = convert(node, data, ctx)
    except ConversionError:
        raise
    except (TypeError, ValueError, OneGraphError) as e:
        raise ConversionError(f"import_graph_def: node {node.name!r} ({node.op}): "
                              f"{type(e).__name__}: {e}") from e
    if isinstance(result, og.Operation):
        return [], result
    outs = list(result) if isinstance(result, (list, tuple)) else [result]
    return outs, (outs[0].op if outs else None)


def _return_element(ref: str, outputs, operations):
    """One return element: "node:i" -> Tensor, "node" -> Operation.

    Raises:
        ConversionError: the node or output does not exist.
    """
    src, sep, index = ref.rpartition(":")
    if not (sep and index.isdigit()):
        if ref not in operations:
            raise ConversionError(f"import_graph_def: requested return element {ref!r} "
                                  f"is not an operation of the graph_def")
        return operations[ref]
    if src not in outputs or int(index) >= len(outputs[src]):
        raise ConversionError(f"import_graph_def: requested return element {ref!r} is "
                              f"not a tensor of the graph_def")
    return outputs[src][int(index)]


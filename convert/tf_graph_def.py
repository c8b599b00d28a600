"""TF1 frozen graphs (GraphDef .pb files) to onegraph Models: `from_graph_def`, and
what `onegraph convert frozen.pb model.og` runs.

The graph is imported with og.import_graph_def (train/graph_def_import.py) under its
own node names, and saved with one signature, "serving": its inputs are the graph's
placeholders, its outputs the tensors named by `outputs` (default: the first output
of every node nothing reads, control-only nodes left out). Keys are the node names.

TF2's freezing (convert_variables_to_constants_v2, through lift_to_graph) leaves a
Placeholder named `unused_control_flow_input*` for each loop input it met before its
producer, then rewires the reader to the producer: the Placeholder stays, read by
nothing. Such a Placeholder is no input of the signature (a caller could not know what
to feed); one named so that a node does read is an input as any other.
"""

from __future__ import annotations

import os

from ..errors import ConversionError, DataLossError

# nodes that give no value a caller would fetch
_NOT_OUTPUTS = {"NoOp", "Assert", "Placeholder", "PlaceholderWithDefault", "Const",
                "SaveV2", "RestoreV2", "Print", "PrintV2"}


def _graph_def(source):
    """A GraphDef from a path, bytes or a GraphDef.

    Raises:
        ConversionError: the file cannot be read or is not a GraphDef.
    """
    from ..train.graph_def import GraphDef

    if isinstance(source, GraphDef):
        return source
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as f:
                source = f.read()
        except OSError as e:
            raise ConversionError(f"cannot read {os.fspath(source)!r}: {e.strerror or e}") \
                from None
    if not isinstance(source, (bytes, bytearray)):
        raise ConversionError(f"from_graph_def: expected a path, bytes or a GraphDef, got "
                              f"{type(source).__name__}")
    try:
        return GraphDef.FromString(bytes(source))
    except DataLossError as e:
        raise ConversionError(f"not a TensorFlow GraphDef: {e}") from None


def _sinks(graph_def) -> list:
    """The names of the nodes whose outputs no node reads (in the file's order)."""
    read = set()
    for node in graph_def.node:
        for name in node.input:
            read.add(name.lstrip("^").split(":")[0])
    return [n.name for n in graph_def.node if n.name not in read and n.op not in _NOT_OUTPUTS]


def _unused_lowering_inputs(graph_def, names) -> set:
    """Names of the Placeholders TF2's freezing left behind: named
    unused_control_flow_input*, read by no node (data or control edge) and not asked
    for as an output (`names`)."""
    read = {name.lstrip("^").split(":")[0] for node in graph_def.node for name in node.input}
    read |= {n.split(":")[0] for n in names}
    return {n.name for n in graph_def.node if n.op == "Placeholder"
            and n.name.startswith("unused_control_flow_input") and n.name not in read}


def from_graph_def(source, outputs=None):
    """The Model of a TF1 frozen graph: `source` a .pb path, its bytes or a GraphDef;
    `outputs` the node (or "node:i" tensor) names the serving signature gives (default:
    the nodes nothing reads). The signature's inputs are the Placeholders, but for
    the `unused_control_flow_input*` ones nothing reads (TF2's freezing leaves them).

    Raises:
        ConversionError: unreadable or corrupt bytes, an op without a mapping (all of
            them listed), an unknown output name, or no output at all.
    """
    import onegraph as og
    from ..train.graph_def_import import import_graph_def

    graph_def = _graph_def(source)
    names = list(outputs) if outputs is not None else _sinks(graph_def)
    if not names:
        raise ConversionError("the graph has no output to save (every node is read by "
                              "another, or is a constant or placeholder); name them")
    known = {n.name for n in graph_def.node}
    unknown = [n for n in names if n.split(":")[0] not in known]
    if unknown:
        raise ConversionError(f"outputs {unknown} name no node of the graph")
    unused = _unused_lowering_inputs(graph_def, names)
    placeholders = [n.name for n in graph_def.node
                    if n.op == "Placeholder" and n.name not in unused]
    graph = og.Graph()
    with graph.as_default():
        wanted = [n if ":" in n else f"{n}:0" for n in names]
        tensors = import_graph_def(graph_def, return_elements=wanted + [
            f"{p}:0" for p in placeholders], name="")
    outs, ins = tensors[:len(names)], tensors[len(names):]
    signature = og.signature(inputs=dict(zip(placeholders, ins)),
                             outputs=dict(zip(names, outs)))
    return graph.to_model(signatures={"serving": signature})

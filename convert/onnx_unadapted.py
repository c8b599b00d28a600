"""Op versions of opsets 1-6 that onnx's version converter has no adapter for.

onnx's converter upgrades a model one opset at a time and needs an adapter wherever an
op's version changes; for these it has none and stops ("No Adapter From Version $1 for
Pad"), so a model using them could not be imported at all:

    Pad-1           `paddings` (Pad-2 renamed it `pads`), a float `value`
    Split-1         `split` as an attribute or as a second input
    Cast-1          `to` as a string, a TensorProto.DataType name ("FLOAT", "INT64")
    Tile-1          `tiles` copies along one `axis`, both given as (float) inputs
    LpPool-1, GlobalLpPool-1
                    `p` as a float (an int from version 2)
    RNN-1, GRU-1, GRU-3, LSTM-1
                    an `output_sequence` attribute (removed in version 7; the Y output
                    is optional by being left out)
    And, Or, Xor, Equal, Greater, Less (version 1)
                    `broadcast=1` with an `axis`, as Add-1 had; numpy-style from 7

Each such node waits in onnx_legacy's private domain while the converter brings the
model to opset 11 (the same path as the experimental ops that need a later opset), and
is then spelled in opset-11 ops by `restore_unadapted`. An operand broadcast at an
`axis` first gets its trailing size-1 axes (onnx_legacy's `_align_operands`), so the
numpy-style op of opset 7 means what the old one did.

onnxruntime runs none of these versions (it starts at opset 7); the tests check each
against ONNX's reference implementation where it has the old version (Pad-1) and
against the same computation written in current ops, run by onnxruntime.
"""

from __future__ import annotations

from ..errors import ConversionError

# {op: the opset from which onnx's converter can upgrade it}
UNADAPTED_BEFORE = {"Pad": 2, "Split": 2, "LpPool": 2, "GlobalLpPool": 2, "Cast": 6,
                    "Tile": 6, "RNN": 7, "GRU": 7, "LSTM": 7, "And": 7, "Or": 7,
                    "Xor": 7, "Equal": 7, "Greater": 7, "Less": 7}

# the comparison and logic ops whose version 1 broadcast at an `axis`
AXIS_BROADCAST_LOGIC_OPS = ("And", "Or", "Xor", "Equal", "Greater", "Less")

_DEFAULT_DOMAINS = ("", "ai.onnx")


def is_unadapted(node, opset: int) -> bool:
    """Whether `node`, in a model of default-domain opset `opset`, is an op version
    onnx's converter has no adapter for (see the module docstring)."""
    return node.domain in _DEFAULT_DOMAINS \
        and opset < UNADAPTED_BEFORE.get(node.op_type, 0)


def _label(node) -> str:
    where = repr(node.name) if node.name else f"making {list(node.output)}"
    return f"{node.op_type} node {where}"


def attribute_values(node) -> dict:
    """{name: value} of a NodeProto's attributes, as onnx.helper reads them."""
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _keep_attrs(node, names) -> None:
    kept = [a for a in node.attribute if a.name in names]
    del node.attribute[:]
    node.attribute.extend(kept)


def restore_unadapted(node, names, types) -> list:
    """The opset-11 nodes computing what deferred `node` (an op of the module docstring,
    taken out of the private domain) computed in its own version. `names` makes fresh
    tensor names; `types` is {value name: (elem_type, dims, TypeProto)} of the model
    at opset 11 (a constant Pad `value` is made in its input's element type).

    Raises:
        ConversionError: naming the node: an attribute or input count its version
            does not allow, a Cast-1 `to` that names no ONNX data type, an LpPool `p`
            that is no whole number, an `axis` broadcast whose ranks are unknown, or a
            Pad with a non-zero `value` whose input's element type is unknown.
    """
    op = node.op_type
    if op == "Pad":
        return _pad(node, names, types)
    if op == "Split":
        return _split(node, names)
    if op == "Cast":
        return [_cast(node)]
    if op == "Tile":
        return _tile(node, names)
    if op in ("LpPool", "GlobalLpPool"):
        return [_lp_pool(node)]
    if op in ("RNN", "GRU", "LSTM"):
        _keep_attrs(node, set(attribute_values(node)) - {"output_sequence"})
        return [node]
    return [_logic(node)]


def _constant(name, array):
    """A Constant node making `name` with the value of numpy `array`."""
    from onnx import helper, numpy_helper

    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(array, name))


def _pad(node, names, types):
    """Pad-1 -> Pad-11: `paddings` (begins then ends, as `pads`) becomes the pads
    input, a non-zero `value` the constant_value input."""
    import numpy as np
    from onnx import helper

    attrs = attribute_values(node)
    where = _label(node)
    if "pads" in attrs or "paddings" not in attrs:
        raise ConversionError(f"{where}: Pad-1 takes its padding as the `paddings` "
                              "attribute")
    if len(node.input) != 1 or len(node.output) != 1:
        raise ConversionError(f"{where}: Pad-1 takes one input and makes one output")
    paddings = [int(p) for p in attrs["paddings"]]
    mode = attrs.get("mode", b"constant")
    mode = mode.decode("utf-8", "replace") if isinstance(mode, bytes) else str(mode)
    value = float(attrs.get("value", 0.0))
    pads = names.fresh("pad1_pads")
    nodes = [_constant(pads, np.asarray(paddings, np.int64))]
    inputs = [node.input[0], pads]
    if mode == "constant" and value != 0.0:
        known = types.get(node.input[0])
        if known is None:
            raise ConversionError(f"{where}: the element type of its input "
                                  f"{node.input[0]!r} cannot be inferred, and its fill "
                                  f"value {value} must be made in it; declare it in the "
                                  "graph's value_info")
        fill = names.fresh("pad1_value")
        dtype = helper.tensor_dtype_to_np_dtype(known[0])
        nodes.append(_constant(fill, np.asarray(value, dtype)))
        inputs.append(fill)
    nodes.append(helper.make_node("Pad", inputs, list(node.output), mode=mode,
                                  name=node.name))
    return nodes


def _split(node, names):
    """Split-1 -> Split-11 with `split` as an attribute, or, when the lengths are a
    second input computed at run time, one Slice per output between their running
    sums."""
    import numpy as np
    from onnx import helper

    attrs = attribute_values(node)
    where = _label(node)
    axis = int(attrs.get("axis", 0))
    split = list(attrs.get("split") or [])   # an empty list: equal parts, as none
    given = len(node.input) > 1 and node.input[1]
    if len(node.input) > 2 or (given and split):
        raise ConversionError(f"{where}: Split-1 takes the lengths either as its second "
                              "input or as the `split` attribute, not both")
    if not given:
        return [helper.make_node("Split", [node.input[0]], list(node.output),
                                 name=node.name, axis=axis,
                                 **({"split": split} if split else {}))]
    lengths = names.fresh("split1_lengths")
    ends = names.fresh("split1_ends")
    starts = names.fresh("split1_starts")
    zero = names.fresh("split1_zero")
    axes = names.fresh("split1_axis")
    nodes = [helper.make_node("Cast", [node.input[1]], [lengths], to=7),  # int64
             _constant(zero, np.asarray(0, np.int64)),
             helper.make_node("CumSum", [lengths, zero], [ends]),
             helper.make_node("Sub", [ends, lengths], [starts]),
             _constant(axes, np.asarray([axis], np.int64))]
    for k, out in enumerate(node.output):
        if not out:
            continue
        bounds = []
        for which in (starts, ends):
            one = names.fresh(f"split1_{k}")
            at, at_end = names.fresh("split1_at"), names.fresh("split1_at_end")
            nodes += [_constant(at, np.asarray([k], np.int64)),
                      _constant(at_end, np.asarray([k + 1], np.int64)),
                      helper.make_node("Slice", [which, at, at_end], [one])]
            bounds.append(one)
        nodes.append(helper.make_node("Slice", [node.input[0], *bounds, axes], [out],
                                      name=f"{node.name}__{k}" if node.name else ""))
    return nodes


def _cast(node):
    """Cast-1 -> Cast-6: `to` from a data type's name to its number."""
    from onnx import TensorProto, helper

    to = attribute_values(node).get("to")
    name = to.decode("utf-8", "replace") if isinstance(to, bytes) else str(to)
    try:
        number = TensorProto.DataType.Value(name.strip().upper())
    except ValueError:
        number = None
    if number not in _cast_1_types():
        raise ConversionError(f"{_label(node)}: Cast-1's `to` must name one of its data "
                              f"types ({', '.join(sorted(_CAST_1_TYPE_NAMES))}), got "
                              f"{name!r}")
    return helper.make_node("Cast", list(node.input), list(node.output), to=int(number),
                            name=node.name)


# the element types Cast-1 casts to (its T2)
_CAST_1_TYPE_NAMES = ("FLOAT16", "FLOAT", "DOUBLE", "INT8", "INT16", "INT32", "INT64",
                      "UINT8", "UINT16", "UINT32", "UINT64", "BOOL")


def _cast_1_types():
    from onnx import TensorProto

    return {TensorProto.DataType.Value(n) for n in _CAST_1_TYPE_NAMES}


def _tile(node, names):
    """Tile-1 (input, tiles, axis) -> Tile-6 with repeats = 1 on every axis but `axis`
    (negative counts from the end), which gets `tiles`; computed at run time from the
    input's rank, so inputs computed at run time work too."""
    import numpy as np
    from onnx import helper

    where = _label(node)
    if len(node.input) != 3 or not all(node.input) or len(node.output) != 1:
        raise ConversionError(f"{where}: Tile-1 takes input, tiles and axis and makes "
                              "one output")
    x, tiles, axis = node.input
    f = {k: names.fresh(f"tile1_{k}") for k in (
        "zero", "one", "shape", "rank", "index", "axis", "negative", "wrapped", "at",
        "picked", "tiles", "repeats")}
    return [
        _constant(f["zero"], np.asarray(0, np.int64)),
        _constant(f["one"], np.asarray(1, np.int64)),
        helper.make_node("Shape", [x], [f["shape"]]),
        helper.make_node("Size", [f["shape"]], [f["rank"]]),
        helper.make_node("Range", [f["zero"], f["rank"], f["one"]], [f["index"]]),
        helper.make_node("Cast", [axis], [f["axis"]], to=7),
        helper.make_node("Less", [f["axis"], f["zero"]], [f["negative"]]),
        helper.make_node("Add", [f["axis"], f["rank"]], [f["wrapped"]]),
        helper.make_node("Where", [f["negative"], f["wrapped"], f["axis"]], [f["at"]]),
        helper.make_node("Equal", [f["index"], f["at"]], [f["picked"]]),
        helper.make_node("Cast", [tiles], [f["tiles"]], to=7),
        helper.make_node("Where", [f["picked"], f["tiles"], f["one"]], [f["repeats"]]),
        helper.make_node("Tile", [x, f["repeats"]], list(node.output), name=node.name),
    ]


def _lp_pool(node):
    """LpPool-1 / GlobalLpPool-1 -> version 2: `p` from a float (default 2.0) to an
    int."""
    import math

    from onnx import helper

    attrs = attribute_values(node)
    p = attrs.get("p", 2.0)
    if isinstance(p, float):
        if not (math.isfinite(p) and p == int(p)):
            raise ConversionError(f"{_label(node)}: `p` must be a whole number (LpPool "
                                  f"takes an int from version 2), got {p}")
        _keep_attrs(node, set(attrs) - {"p"})
        node.attribute.append(helper.make_attribute("p", int(p)))
    return node


def _logic(node):
    """And, Or, Xor, Equal, Greater, Less of version 1 -> version 7: `broadcast` is
    dropped (numpy-style broadcasting covers it once the operand is aligned). An `axis`
    still there means the operands' ranks were unknown, so the alignment it asks for
    cannot be made."""
    attrs = attribute_values(node)
    if "axis" in attrs and attrs.get("broadcast", 0):
        raise ConversionError(f"{_label(node)}: broadcasting at axis {attrs['axis']} "
                              "needs both operands' ranks, which ONNX's shape inference "
                              "does not find; declare them in the graph's value_info")
    _keep_attrs(node, set())
    return node


def declare_unadapted_outputs(proto, deferred_domain: str, known_types, graphs_of) -> None:
    """Declare, in the value_info of the graph holding it, the type and shape of every
    output of the deferred nodes of this module (in place): onnx's converter passes a
    deferred node by without inferring its outputs, but its broadcast adapters (Add-6
    to Add-7, ...) need the shapes of their inputs. Each node's opset-11 spelling is
    inferred by ONNX's shape inference from its inputs' types, in rounds, so that a
    deferred node reading another's output (through standard nodes too) is declared
    once that one is. Nodes whose inputs stay unknown are left undeclared.

    `known_types(proto)` gives {value: (elem_type, dims, TypeProto)} of the model as
    it stands; `graphs_of(graph)` yields a graph and its nested bodies.

    Raises:
        ConversionError: as `restore_unadapted`, for a node whose inputs are known.
    """
    pending = [(g, n) for g in graphs_of(proto.graph) for n in g.node
               if n.domain == deferred_domain and n.op_type in UNADAPTED_BEFORE]
    while pending:
        types = known_types(proto)
        left = []
        for graph, node in pending:
            outputs = _inferred_outputs(node, types)
            if outputs is None:
                left.append((graph, node))
                continue
            declared = {v.name for v in (*graph.value_info, *graph.output)}
            graph.value_info.extend(v for v in outputs if v.name not in declared)
        if len(left) == len(pending):
            return
        pending = left


class _ScratchNames:
    """Fresh names for a throwaway model (no clash with the node's own names)."""

    def __init__(self):
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}__unadapted_{self.count}"


def _inferred_outputs(node, types):
    """[ValueInfoProto] of `node`'s outputs as ONNX's shape inference types its opset-11
    spelling, or None while an input's type is unknown or inference types no output."""
    import onnx
    from onnx import NodeProto, helper

    inputs = [i for i in node.input if i]
    if any(i not in types for i in inputs):
        return None
    copy = NodeProto()
    copy.CopyFrom(node)
    copy.domain = ""
    nodes = restore_unadapted(copy, _ScratchNames(), types)
    graph = helper.make_graph(
        nodes, "unadapted", [helper.make_value_info(i, types[i][2]) for i in inputs],
        [helper.make_value_info(o, onnx.TypeProto()) for o in node.output if o])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    try:
        inferred = onnx.shape_inference.infer_shapes(model).graph
    except Exception:  # noqa: BLE001 - an input that does not fit: undeclared
        return None
    found = {v.name: v for v in (*inferred.value_info, *inferred.output)
             if v.type.tensor_type.elem_type}
    outs = [found.get(o) for o in node.output if o]
    return outs if outs and all(v is not None for v in outs) else None

"""Rewrites of pre-opset-13 constructs that onnx's version converter upgrades wrongly
(or, for the removed experimental ops, not at all).

The importer upgrades models older than opset 13 with onnx's version converter, which
gets several things wrong; `rewrite_legacy` spells them, before that upgrade, in ops the
converter upgrades faithfully (first bringing a model older than opset 11 to 11 with
the converter where a rewrite needs that opset's ops). Each rewrite is checked against
onnxruntime running the original old-opset model (PRelu: against ONNX's stored
outputs, as onnxruntime does not run it).

Batched Scan (opset < 9). Scan before opset 9 was batched: an optional `sequence_lens`
input came first, every state and scan input carried a leading batch axis, scan inputs
had time on axis 1, and the body ran once per batch entry on unbatched values. onnx's
Scan 8 -> 9 adapter drops the batch axes from the model's declared inputs instead, so
the upgraded model no longer accepts its own inputs. Here such a Scan is first spelled,
still in opset 8, as the loops its specification describes:

    Loop over the batch b:                       (outer; its scan outputs stack on b)
        states = init_i[b];  seq_j = scan_j[b]
        Loop over time t < max_sequence_length:  (inner; its scan outputs stack on t)
            elements = seq_j[t]  (or [n_b - 1 - t] for a reversed input)
            run the body; with sequence_lens, an If keeps the old states and writes zero
            scan elements at steps t >= n_b (the padding the specification leaves open)

Loop, If, Gather, Shape, Sub, Cast, Less and Expand all exist in opset 8 with the
meaning they keep later, so the converter then upgrades the result faithfully.

Hardmax (opset < 13). Before opset 13 Hardmax coerced its input to 2-D at `axis`
(dims [0, axis) times dims [axis, rank)) and put one 1 per row of that matrix; opset 13
made it per axis, and onnx has no Hardmax 12 -> 13 adapter (it has them for Softmax
and LogSoftmax). It becomes Flatten(axis) -> Hardmax(axis=1) -> Reshape to the input's
shape: a 2-D Hardmax at axis 1 means the same in every opset. Flatten takes an axis
equal to the rank, which these ops refuse; where the input's rank is unknown before
the model runs, a one-output Split at the same axis checks it (`guard_flattening_axes`).

Upsample (opsets 7-9) and Resize (opset 10). These map output to input coordinates
as x_resized / scale (`asymmetric`); onnx's Resize 10 -> 11 adapter leaves Resize-11's
default, `half_pixel`. onnxruntime rounds nearest coordinates down on an axis whose
scale is >= 1 and up on one whose scale is < 1. After the converter has brought the
model to opset 11 (Upsample becomes Resize on the way), every Resize states
`asymmetric`, and a nearest one `floor` or `ceil`; a nearest one that upsamples some
axes and downsamples others (or whose scales are not constant) becomes two: one with
max(scales, 1) and `floor`, then one with min(scales, 1) and `ceil` (nearest picks
input indices axis by axis, and a scale of 1 maps each index to itself either way).

Upsample-1 (opsets 1-6, experimental) names its modes NEAREST and BILINEAR (any case),
which the converter copies into Upsample-7, whose modes are nearest and linear: they are
spelled so first (the scales the converter makes of height_scale and width_scale are
right).

Squeeze with `axes=[]` (opsets 1-12). onnxruntime and ONNX's reference squeeze every
size-1 dim, as for no `axes`; the converter makes it an empty `axes` input, which
squeezes nothing from opset 13 on. The empty attribute is dropped.

Broadcasting before opset 7. PRelu came from Caffe2, where a slope of more than one
element holds one value per channel (axis 1: "if Slope is of size 1, the value is shared
across different channels"); Add, Sub, Mul, Div and Pow broadcast their second operand
only with `broadcast=1`, aligned at `axis` of the first (trailing axes without one).
Opset 7 made both numpy-style. onnx's converter leaves such a PRelu as it is and stops
at such an `axis` (its adapter asserts trailing alignment). The second operand is given
the trailing size-1 axes that make numpy's alignment the old one, with an Unsqueeze
(opset 1's, axes as an attribute, which the converter upgrades), and `axis` is dropped.
onnxruntime runs neither op before opset 7, so ONNX's pytorch-converted test data
(PyTorch's nn.PReLU(3) on inputs of rank 3-5) and numpy are the oracles.

Experimental ops (opsets 1-9). ImageScaler, Crop, Affine, ScaledTanh,
ParametricSoftplus, Scale and DynamicSlice were removed from ONNX (onnx has no schema
for them, so its converter stops at them), but onnxruntime still runs them in models
of opsets 1-9 (the model zoo's tiny-yolov2 starts with an ImageScaler), and so are
ThresholdedRelu before opset 10 and MeanVarianceNormalization before 9, which onnx
defines only from then. They are spelled first, in standard ops of the model's own
opset (`rewrite_experimental`); the few whose spelling needs a later opset's ops
(DynamicSlice with bounds computed at run time, those two) wait in a private domain
while the converter brings the model to opset 11. GRUUnit, GivenTensorFill and ATen,
which onnxruntime does not run either, stay unsupported.

Op versions without an adapter (opsets 1-6: Pad-1, Split-1, Cast-1, Tile-1, LpPool-1,
GlobalLpPool-1, RNN/GRU/LSTM with `output_sequence`, And/Or/Xor/Equal/Greater/Less-1)
wait in the same private domain, their outputs declared for the converter's broadcast
adapters, and are spelled in opset-11 ops (onnx_unadapted.py); And ... Less-1 operands
broadcast at an `axis` are first aligned as Add-1's are.

BatchNormalization with spatial=0 (opsets 1-8: statistics per activation, not per
channel), which onnx's converter refuses, is spelled in elementwise ops first. Bodies
that read values of their enclosing graph get those values' shapes declared (opsets
1-7), which onnx's broadcast adapters need and the converter does not carry inside.
"""

from __future__ import annotations

import warnings

from ..errors import ConversionError
from .onnx_unadapted import (AXIS_BROADCAST_LOGIC_OPS, UNADAPTED_BEFORE, attribute_values,
                             declare_unadapted_outputs, is_unadapted, restore_unadapted)

# Scan lost its batch axis in this opset.
UNBATCHED_SCAN_OPSET = 9

# Hardmax became per axis (no 2-D coercion) in this opset.
PER_AXIS_HARDMAX_OPSET = 13

# Resize gained coordinate_transformation_mode and nearest_mode in this opset: the
# rewrites of Hardmax and Resize are spelled here (or in the model's opset if newer).
RESIZE_MODES_OPSET = 11

_DEFAULT_DOMAINS = ("", "ai.onnx")


def _default_opset(proto) -> int | None:
    for o in proto.opset_import:
        if o.domain in _DEFAULT_DOMAINS:
            return int(o.version)
    return None


def _is_batched_scan(node, opset: int) -> bool:
    return node.op_type == "Scan" and node.domain in _DEFAULT_DOMAINS \
        and opset < UNBATCHED_SCAN_OPSET


def _is_late_legacy(node, opset: int) -> bool:
    """Whether `node` is a Hardmax, Upsample or Resize of an opset whose meaning the
    converter loses (rewritten after the converter has reached RESIZE_MODES_OPSET)."""
    if node.domain not in _DEFAULT_DOMAINS:
        return False
    return (node.op_type == "Hardmax" and opset < PER_AXIS_HARDMAX_OPSET) or (
        node.op_type in ("Upsample", "Resize") and opset < RESIZE_MODES_OPSET)


# Upsample-1 (experimental) spelled its modes NEAREST and BILINEAR, as its examples'
# lower case too; Upsample-7 takes nearest and linear, and onnx's converter copies the
# old spelling across.
UPSAMPLE_7_OPSET = 7
_UPSAMPLE_1_MODES = {"nearest": b"nearest", "bilinear": b"linear"}


def _rename_upsample_1_mode(node) -> None:
    """Spell an Upsample-1 node's mode as Upsample-7 does (in place); an unknown mode
    is left for the Resize it becomes to refuse by name."""
    for a in node.attribute:
        if a.name == "mode":
            new = _UPSAMPLE_1_MODES.get(a.s.decode("utf-8", "replace").lower())
            if new is not None:
                a.s = new


def _is_squeeze_of_empty_axes(node, opset: int) -> bool:
    return node.op_type == "Squeeze" and node.domain in _DEFAULT_DOMAINS \
        and opset < PER_AXIS_HARDMAX_OPSET \
        and any(a.name == "axes" and not a.ints for a in node.attribute)


def _is_pad_with_unused_value(node, opset: int) -> bool:
    """A Pad-2 (attribute pads, opset < 11) in edge or reflect mode with a `value`
    attribute: Pad-2 allows it in every mode, and onnx's converter copies it into a
    Pad-11+, where only constant mode has one."""
    if node.op_type != "Pad" or node.domain not in _DEFAULT_DOMAINS or opset >= 11:
        return False
    mode = next((a.s for a in node.attribute if a.name == "mode"), b"constant")
    return mode != b"constant" and any(a.name == "value" for a in node.attribute)


# From this opset PRelu's slope and the second operand of Add, Sub, Mul, Div and Pow
# broadcast numpy-style: before it a slope was per channel and `broadcast=1, axis=k`
# aligned the operand at axis k of the first.
NUMPY_BROADCAST_OPSET = 7

_AXIS_BROADCAST_OPS = ("Add", "Sub", "Mul", "Div", "Pow")


def _is_old_broadcast(node, opset: int) -> bool:
    if node.domain not in _DEFAULT_DOMAINS or opset >= NUMPY_BROADCAST_OPSET \
            or len(node.input) != 2:
        return False
    if node.op_type == "PRelu":
        return True
    attrs = {a.name: a.i for a in node.attribute}
    return node.op_type in _AXIS_BROADCAST_OPS + AXIS_BROADCAST_LOGIC_OPS \
        and attrs.get("broadcast") == 1 and "axis" in attrs


def _known_ranks(proto) -> dict:
    """{tensor name: its dims (None for an unknown dim)} for the tensors of the main
    graph whose rank is known: initializers, declarations, and what ONNX's shape
    inference adds (skipped when it fails: those nodes are then left alone)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(proto).graph
    except Exception:  # noqa: BLE001 - inference raises several kinds
        inferred = proto.graph
    dims = {}
    for graph in all_graph_protos(inferred):
        for t in graph.initializer:
            dims.setdefault(t.name, list(t.dims))
        for vi in (*graph.input, *graph.value_info, *graph.output):
            t = vi.type.tensor_type
            if vi.name not in dims and t.HasField("shape"):
                dims[vi.name] = [d.dim_value if d.HasField("dim_value") else None
                                 for d in t.shape.dim]
    return dims


def _operands_to_align(proto, opset: int) -> list:
    """[(node, axes)] for the main graph's nodes of opsets 1-6 whose second operand
    needs `axes` (trailing size-1 axes, for an Unsqueeze) to broadcast numpy-style as it
    did then (see the module docstring): a PRelu slope that is 1-D with more than one
    element (or an unknown count) on an input of rank > 2 (one value per channel, axis
    1), and an operand of Add, Sub, Mul, Div or Pow with `broadcast=1` and an `axis`
    that leaves trailing axes of the first uncovered. Nodes whose ranks are unknown
    are left as they are."""
    nodes = [n for n in all_proto_nodes(proto.graph) if _is_old_broadcast(n, opset)]
    if not nodes:
        return []
    dims = _known_ranks(proto)
    found = []
    for node in nodes:
        a, b = dims.get(node.input[0]), dims.get(node.input[1])
        if a is None or b is None:
            continue
        if node.op_type == "PRelu":
            axis = 1 if len(a) > 2 and len(b) == 1 and b[0] != 1 else None
        else:
            given = next(x.i for x in node.attribute if x.name == "axis")
            axis = given + len(a) if given < 0 else given
            if not 0 <= axis <= len(a) - len(b):
                raise ConversionError(
                    f"{node.op_type} node {_node_label(node)}: broadcasting its second "
                    f"operand (rank {len(b)}) at axis {given} of its first (rank {len(a)}) "
                    f"needs an axis in [{-len(a)}, {len(a) - len(b)}]")
        if axis is not None and axis + len(b) < len(a):
            found.append((node, list(range(len(b), len(a) - axis))))
    return found


def _align_operands(proto, opset: int) -> None:
    """Give the second operands `_operands_to_align` finds their trailing axes (an
    Unsqueeze of opset 1, axes as an attribute, which onnx's converter upgrades), and
    drop the `axis` they no longer need; in place."""
    from onnx import helper

    names = _Names(proto.graph, tag="broadcast6")
    found = _operands_to_align(proto, opset)
    # innermost graphs first: inserting into a graph's node list copies the nodes that
    # follow, and with them their bodies
    for graph in reversed(list(all_graph_protos(proto.graph))):
        for node, axes in found:
            at = next((k for k, n in enumerate(graph.node) if n is node), None)
            if at is None:
                continue
            shaped = names.fresh(node.input[1])
            unsqueeze = helper.make_node("Unsqueeze", [node.input[1]], [shaped],
                                         name=names.fresh(node.name or node.op_type),
                                         axes=axes)
            node.input[1] = shaped
            kept = [x for x in node.attribute if x.name != "axis"]
            del node.attribute[:]
            node.attribute.extend(kept)
            graph.node.insert(at, unsqueeze)


# onnx's broadcast adapters (opset 6 -> 7 for Add ... Pow and Gemm, 7 -> 8 for Max,
# Min, Mean and Sum) assert that they know their inputs' shapes, which the converter
# does not carry into a body for values of the enclosing graph.
SIZED_ADAPTERS_BEFORE = 8


def _bodies_reading_outer_values(proto) -> list:
    """[(body GraphProto, [outer value names its nodes read])] for every body."""
    found = []

    def visit(graph, outer):
        local = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {
            o for n in graph.node for o in n.output}
        reads = sorted({i for n in graph.node for i in n.input
                        if i and i not in local and i in outer})
        if reads and graph is not proto.graph:
            found.append((graph, reads))
        for node in graph.node:
            for sub in proto_subgraphs(node):
                visit(sub, outer | local)

    visit(proto.graph, frozenset())
    return found


def _declare_outer_values(proto) -> None:
    """Declare in each body's value_info the types and shapes (from ONNX's inference)
    of the enclosing graphs' values its nodes read, so that onnx's broadcast adapters
    know them there (in place; values of unknown type are left out)."""
    bodies = _bodies_reading_outer_values(proto)
    if not bodies:
        return
    types = _known_types(proto)
    for body, reads in bodies:
        declared = {v.name for v in (*body.input, *body.output, *body.value_info)}
        for name in reads:
            if name not in declared and name in types:
                info = body.value_info.add()
                info.name = name
                info.type.CopyFrom(types[name][2])


# BatchNormalization lost `spatial` in this opset; spatial=0 before it normalises per
# activation (scale, bias, mean and var of shape (C, D1, ...)), which onnx's converter
# refuses ("Attribute spatial must have value 1") and onnxruntime runs.
SPATIAL_BATCHNORM_OPSET = 9


def _is_per_activation_batchnorm(node, opset: int) -> bool:
    return node.op_type == "BatchNormalization" and node.domain in _DEFAULT_DOMAINS \
        and opset < SPATIAL_BATCHNORM_OPSET \
        and any(a.name == "spatial" and a.i == 0 for a in node.attribute)


def _lower_per_activation_batchnorms(proto, opset: int) -> None:
    """Spell every BatchNormalization with spatial=0 (opsets 1-8, inference) in
    elementwise ops of the model's opset (in place):
    y = (x - mean) * (scale / sqrt(var + epsilon)) + bias, the statistics broadcast over
    the batch axis (`broadcast=1` before opset 7).

    Raises:
        ConversionError: naming the node: it also makes its running or saved
            statistics (training), or its input's element type is unknown.
    """
    import numpy as np
    from onnx import helper, numpy_helper

    if not any(_is_per_activation_batchnorm(n, opset) for n in all_proto_nodes(proto.graph)):
        return
    types = _known_types(proto)
    names = _Names(proto.graph, tag="bn_spatial0")
    legacy = {"broadcast": 1} if opset < NUMPY_BROADCAST_OPSET else {}
    for graph in reversed(list(all_graph_protos(proto.graph))):
        nodes, changed = [], False
        for node in graph.node:
            if not _is_per_activation_batchnorm(node, opset):
                nodes.append(node)
                continue
            where = f"BatchNormalization node {_node_label(node)}"
            if len(node.input) != 5 or not all(node.input) or len(node.output) < 1 \
                    or any(node.output[1:]):
                raise ConversionError(f"{where}: with spatial=0 only inference (X, scale, B, "
                                      "mean, var in; Y out) is supported")
            known = types.get(node.input[0])
            if known is None:
                raise ConversionError(f"{where}: the element type of its input "
                                      f"{node.input[0]!r} cannot be inferred; declare it")
            eps = next((a.f for a in node.attribute if a.name == "epsilon"), 1e-5)
            x, scale, bias, mean, var = node.input
            t = {k: names.fresh(f"bn_{k}") for k in ("eps", "shifted", "root", "factor",
                                                       "centred", "scaled")}
            graph.initializer.append(numpy_helper.from_array(
                np.asarray(eps, helper.tensor_dtype_to_np_dtype(known[0])), t["eps"]))
            nodes += [
                helper.make_node("Add", [var, t["eps"]], [t["shifted"]], **legacy),
                helper.make_node("Sqrt", [t["shifted"]], [t["root"]]),
                helper.make_node("Div", [scale, t["root"]], [t["factor"]]),
                helper.make_node("Sub", [x, mean], [t["centred"]], **legacy),
                helper.make_node("Mul", [t["centred"], t["factor"]], [t["scaled"]], **legacy),
                helper.make_node("Add", [t["scaled"], bias], [node.output[0]], name=node.name,
                                 **legacy)]
            changed = True
        if changed:
            del graph.node[:]
            graph.node.extend(nodes)


def needs_legacy_rewrite(proto, default_opset: int | None) -> bool:
    """Whether the model (default-domain opset `default_opset`) has, in any graph, an op
    onnx's version converter upgrades wrongly: a batched Scan (opset < 9), a Hardmax
    or a Squeeze with axes=[] (opset < 13), an Upsample or a Resize (opset < 11), a
    non-constant Pad with a value (opset < 11), one of ONNX's removed experimental
    ops (opsets 1-9, see `rewrite_experimental`), an op version onnx's converter has no
    adapter for (opsets 1-6, onnx_unadapted.py), or, in the main graph, a PRelu with a
    per-channel slope or an Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Greater or Less
    broadcasting at an `axis` (opsets 1-6, any graph), or a body reading values of its
    enclosing graph (opsets 1-7: their shapes are declared for the broadcast adapters).

    Raises:
        ConversionError: an `axis` broadcast with an axis out of range, naming the node.
    """
    if default_opset is None or default_opset >= PER_AXIS_HARDMAX_OPSET:
        return False
    return any(_is_batched_scan(n, default_opset) or _is_late_legacy(n, default_opset)
               or _is_squeeze_of_empty_axes(n, default_opset)
               or _is_pad_with_unused_value(n, default_opset)
               or _is_experimental(n, default_opset) or is_unadapted(n, default_opset)
               or _is_per_activation_batchnorm(n, default_opset)
               for n in all_proto_nodes(proto.graph)) \
        or bool(_operands_to_align(proto, default_opset)) \
        or (default_opset < SIZED_ADAPTERS_BEFORE
            and bool(_bodies_reading_outer_values(proto)))


def rewrite_legacy(proto):
    """A copy of `proto` whose ops that onnx's version converter upgrades wrongly are
    spelled in ops it upgrades faithfully (see the module docstring).

    Batched Scans are rewritten in the model's own opset. If there is an old Hardmax,
    Upsample or Resize, the converter then brings a model older than opset 11 to opset
    11 (restoring the node and output names its Upsample adapter drops) and those ops
    are rewritten there, so the result may be at opset 11 rather than the model's own.
    ONNX's removed experimental ops (ImageScaler, Crop, ...) are first spelled in
    standard ops of the model's opset (`rewrite_experimental`), and a per-channel PRelu
    slope or an operand broadcast at an `axis` (opsets 1-6) gets its trailing axes. Op
    versions onnx's converter has no adapter for wait, like the experimental ops that
    need a later opset, until the model is at opset 11 (onnx_unadapted.py). A model
    that needs none of this comes back as an unchanged copy.

    Raises:
        ConversionError: a Scan's inputs, outputs and body disagree (counts, missing
            body, no scan input), naming the node; or onnx's converter cannot bring the
            model to opset 11; or an experimental op cannot be rewritten (see
            `rewrite_experimental`), or an op version without an adapter cannot be
            spelled (see onnx_unadapted.restore_unadapted).
    """
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(proto)
    opset = _default_opset(out)
    if opset is None:
        return out
    if has_experimental_ops(out):
        out = rewrite_experimental(out)
    _lower_per_activation_batchnorms(out, opset)
    _align_operands(out, opset)
    if opset < SIZED_ADAPTERS_BEFORE:
        _declare_outer_values(out)
    for node in all_proto_nodes(out.graph):
        dropped = "axes" if _is_squeeze_of_empty_axes(node, opset) else \
            "value" if _is_pad_with_unused_value(node, opset) else None
        if dropped:
            kept = [a for a in node.attribute if a.name != dropped]
            del node.attribute[:]
            node.attribute.extend(kept)
        if node.op_type == "Upsample" and node.domain in _DEFAULT_DOMAINS \
                and opset < UPSAMPLE_7_OPSET:
            _rename_upsample_1_mode(node)
        if is_unadapted(node, opset):
            _defer(node)
    if _has_deferred(out):
        declare_unadapted_outputs(out, _DEFERRED_DOMAIN, _known_types, all_graph_protos)
    if any(_is_batched_scan(n, opset) for n in all_proto_nodes(out.graph)):
        _rewrite_graph(out.graph, _Names(out.graph))
    deferred = _has_deferred(out)
    if not deferred and not any(_is_late_legacy(n, opset)
                                for n in all_proto_nodes(out.graph)):
        return out
    if opset < RESIZE_MODES_OPSET:
        out = _convert_keeping_resize_names(out, opset, RESIZE_MODES_OPSET)
    if deferred:
        _restore_deferred(out)
    _rewrite_late(out.graph, _Names(out.graph, tag="legacy"),
                  old_resize=opset < RESIZE_MODES_OPSET)
    return out


def needs_scan_rewrite(proto, default_opset: int | None) -> bool:
    """`needs_legacy_rewrite` under the name `onnx_import` calls it by (Scan was the
    first rewrite; the answer covers Hardmax, Upsample and Resize too)."""
    return needs_legacy_rewrite(proto, default_opset)


def rewrite_batched_scans(proto):
    """`rewrite_legacy` under the name `onnx_import` calls it by (Scan was the first
    rewrite; the result also has old Hardmax, Upsample and Resize rewritten, and may be
    at opset 11).

    Raises:
        ConversionError: as `rewrite_legacy`.
    """
    return rewrite_legacy(proto)


def proto_subgraphs(node):
    """The GraphProtos held in a NodeProto's attributes (If branches, Loop/Scan
    bodies); the one walker the ONNX converter modules share."""
    for attr in node.attribute:
        if attr.HasField("g"):
            yield attr.g
        yield from attr.graphs


def all_graph_protos(graph):
    """`graph` and every GraphProto nested in its nodes' attributes (If branches, Loop
    and Scan bodies), outermost first."""
    yield graph
    for node in graph.node:
        for sub in proto_subgraphs(node):
            yield from all_graph_protos(sub)


def all_proto_nodes(graph):
    """Every NodeProto of a GraphProto and of its subgraphs, outer nodes first."""
    for node in graph.node:
        yield node
        for sub in proto_subgraphs(node):
            yield from all_proto_nodes(sub)


def drop_batchnorm_saved_outputs(proto) -> None:
    """BatchNormalization before opset 14 (in place): the trailing saved_mean /
    saved_var outputs, gone in opset 14 (which onegraph's op follows), are dropped when
    nothing reads them. (The running mean and variance outputs stay; the importer
    marks such a node training_mode=1, see OnnxImporter._fix_attrs.)

    Raises:
        ConversionError: a node's saved_mean or saved_var is read.
    """
    read = set()
    nodes = list(all_proto_nodes(proto.graph))
    for node in nodes:
        read.update(node.input)

    def outputs_of(graph):
        read.update(o.name for o in graph.output)
        for node in graph.node:
            for sub in proto_subgraphs(node):
                outputs_of(sub)

    outputs_of(proto.graph)
    for node in nodes:
        if node.op_type != "BatchNormalization" or node.domain not in ("", "ai.onnx") \
                or len(node.output) <= 3:
            continue
        used = [o for o in node.output[3:] if o and o in read]
        if used:
            raise ConversionError(f"BatchNormalization {node.name!r}: its saved_mean / "
                                  f"saved_var output {used[0]!r} (opset < 14 training "
                                  "outputs) is read; onegraph has no such output")
        outs = list(node.output[:3])
        del node.output[:]
        node.output.extend(outs)


class _Names:
    """Fresh tensor names that clash with no name anywhere in the model; `tag` marks
    which rewrite made them."""

    def __init__(self, graph, tag: str = "scan8"):
        self.taken: set[str] = set()
        self._collect(graph)
        self.count = 0
        self.tag = tag

    def _collect(self, graph):
        for coll in (graph.input, graph.output, graph.value_info):
            self.taken.update(v.name for v in coll)
        self.taken.update(t.name for t in graph.initializer)
        for node in graph.node:
            self.taken.update(node.input)
            self.taken.update(node.output)
            for sub in proto_subgraphs(node):
                self._collect(sub)

    def fresh(self, hint: str) -> str:
        while True:
            self.count += 1
            name = f"{hint}__{self.tag}_{self.count}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def _rewrite_graph(graph, names):
    nodes = []
    for node in graph.node:
        for sub in proto_subgraphs(node):
            _rewrite_graph(sub, names)
        if node.op_type == "Scan" and node.domain in _DEFAULT_DOMAINS:
            nodes.extend(_lower_scan(node, names))
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)


def _scan_parts(node):
    """(sequence_lens or '', inits, scans, body, directions) of an opset-8 Scan."""
    from onnx import helper

    where = f"Scan node {node.name!r}" if node.name else \
        f"the Scan node making {list(node.output)}"
    attrs = {a.name: a for a in node.attribute}
    if "body" not in attrs or "num_scan_inputs" not in attrs:
        raise ConversionError(f"{where}: opset-8 Scan needs the attributes body and "
                              "num_scan_inputs")
    body = attrs["body"].g
    m = int(helper.get_attribute_value(attrs["num_scan_inputs"]))
    rest = list(node.input[1:])
    n = len(rest) - m
    if m < 1 or n < 0 or len(body.input) != n + m or len(body.output) < n \
            or len(node.output) != len(body.output):
        raise ConversionError(
            f"{where}: {n} states, {m} scan inputs and {len(node.output)} outputs do not "
            f"fit a body of {len(body.input)} inputs and {len(body.output)} outputs")
    directions = list(helper.get_attribute_value(attrs["directions"])) \
        if "directions" in attrs else [0] * m
    if len(directions) != m or any(d not in (0, 1) for d in directions):
        raise ConversionError(f"{where}: directions {directions} must be {m} values of 0 "
                              "(forward) or 1 (reverse)")
    seq_lens = node.input[0] if len(node.input) else ""
    return seq_lens, rest[:n], rest[n:], body, directions


def _lower_scan(node, names):
    """The nodes that replace one opset-8 Scan (see the module docstring)."""
    from onnx import TensorProto, helper

    seq_lens, inits, scans, body, directions = _scan_parts(node)
    body = _with_fresh_names(body, names)
    n = len(inits)
    k = len(body.output) - n
    make = helper.make_node
    i64 = TensorProto.INT64

    def const(value):
        name = names.fresh("const")
        return name, make("Constant", [], [name],
                          value=helper.make_tensor(name, i64, [], [value]))

    zero, zero_node = const(0)
    one, one_node = const(1)
    shape, batch, max_len, last = (names.fresh(h) for h in ("shape", "batch", "max_len",
                                                             "last"))
    outer_nodes = [zero_node, one_node,
                   make("Shape", [scans[0]], [shape]),
                   make("Gather", [shape, zero], [batch], axis=0),
                   make("Gather", [shape, one], [max_len], axis=0),
                   make("Sub", [max_len, one], [last])]

    # --- the body of the Loop over time (one step of one batch entry)
    t, c_in, c_out = names.fresh("t"), names.fresh("cond_in"), names.fresh("cond_out")
    b = names.fresh("b")
    n_b = names.fresh("seq_len") if seq_lens else None
    seq = [names.fresh("seq") for _ in scans]
    step = [make("Identity", [c_in], [c_out])]
    live = None
    if seq_lens:
        t_f, n_f, live = names.fresh("t_f"), names.fresh("n_f"), names.fresh("live")
        step += [make("Cast", [t], [t_f], to=TensorProto.DOUBLE),
                 make("Cast", [n_b], [n_f], to=TensorProto.DOUBLE),
                 make("Less", [t_f, n_f], [live])]
    for j, (src, rev) in enumerate(zip(seq, directions)):
        idx = t
        if rev:
            back = names.fresh("rev_index")
            if seq_lens:
                n_last = names.fresh("seq_last")
                step += [make("Sub", [n_b, one], [n_last]),
                         make("Sub", [n_last, t], [back])]
                idx = _select(step, names, live, back, t, "index")
            else:
                step.append(make("Sub", [last, t], [back]))
                idx = back
        step.append(make("Gather", [src, idx], [body.input[n + j].name], axis=0))
    step.extend(body.node)
    state_out = [o.name for o in body.output[:n]]
    scan_out = [o.name for o in body.output[n:]]
    if seq_lens:
        state_out = [_select(step, names, live, new, old.name, "state")
                     for new, old in zip(state_out, body.input[:n])]
        scan_out = [_zero_unless(step, names, live, o) for o in body.output[n:]]
    step_graph = helper.make_graph(
        step, names.fresh("scan_step"),
        [helper.make_tensor_value_info(t, i64, []),
         helper.make_tensor_value_info(c_in, TensorProto.BOOL, [])] + list(body.input[:n]),
        [helper.make_tensor_value_info(c_out, TensorProto.BOOL, [])]
        + [_typed_like(o, name) for o, name in zip(body.output[:n], state_out)]
        + [_typed_like(o, name) for o, name in zip(body.output[n:], scan_out)],
        initializer=list(body.initializer), value_info=list(body.value_info))
    step_graph.sparse_initializer.extend(body.sparse_initializer)

    # --- the body of the Loop over the batch
    bc_in, bc_out = names.fresh("batch_cond_in"), names.fresh("batch_cond_out")
    init_b = [names.fresh("init") for _ in inits]
    fin_b = [names.fresh("final") for _ in inits]
    out_b = [names.fresh("scan_out") for _ in range(k)]
    entry = [make("Identity", [bc_in], [bc_out])]
    entry += [make("Gather", [x, b], [xb], axis=0) for x, xb in zip(inits, init_b)]
    entry += [make("Gather", [x, b], [xb], axis=0) for x, xb in zip(scans, seq)]
    if seq_lens:
        raw = names.fresh("seq_len_raw")
        entry += [make("Gather", [seq_lens, b], [raw], axis=0),
                  make("Cast", [raw], [n_b], to=i64)]
    entry.append(make("Loop", [max_len, ""] + init_b, fin_b + out_b, body=step_graph))
    entry_graph = helper.make_graph(
        entry, names.fresh("scan_batch_entry"),
        [helper.make_tensor_value_info(b, i64, []),
         helper.make_tensor_value_info(bc_in, TensorProto.BOOL, [])],
        [helper.make_tensor_value_info(bc_out, TensorProto.BOOL, [])]
        + [_typed_like(o, name, keep_shape=False)
           for o, name in zip(body.output, fin_b + out_b)])

    loop = make("Loop", [batch, ""], list(node.output), body=entry_graph,
                name=node.name or names.fresh("scan8_loop"))
    return outer_nodes + [loop]


def _with_fresh_names(body, names):
    """A copy of `body` whose own values (inputs, initializers, node outputs) have
    fresh names. Once inlined into a Loop, a body output becomes an intermediate value,
    and ONNX's shape inference confuses an intermediate with an outer value of the
    same name (Scan bodies often reuse the outer output names)."""
    from onnx import GraphProto

    out = GraphProto()
    out.CopyFrom(body)
    own = [v.name for v in out.input] + [t.name for t in out.initializer] \
        + [t.values.name for t in out.sparse_initializer] \
        + [o for nd in out.node for o in nd.output if o]
    mapping = {name: names.fresh(name) for name in dict.fromkeys(own)}
    for coll in (out.input, out.output, out.value_info):
        for v in coll:
            v.name = mapping.get(v.name, v.name)
    for t in out.initializer:
        t.name = mapping[t.name]
    for t in out.sparse_initializer:
        t.values.name = mapping[t.values.name]
    _rename_uses(out, mapping, top=True)
    return out


def _rename_uses(graph, mapping, top=False):
    """Apply `mapping` to the node inputs (and, at the top, outputs) of `graph` and to
    the outer-scope references of its nested graphs, stopping where a nested graph
    defines the name itself."""
    for nd in graph.node:
        nd.input[:] = [mapping.get(i, i) for i in nd.input]
        if top:
            nd.output[:] = [mapping.get(o, o) for o in nd.output]
        for sub in proto_subgraphs(nd):
            local = {v.name for v in sub.input} | {t.name for t in sub.initializer} \
                | {o for x in sub.node for o in x.output}
            inner = {k: v for k, v in mapping.items() if k not in local}
            for v in sub.output:
                v.name = inner.get(v.name, v.name)
            _rename_uses(sub, inner)


def _select(nodes, names, live, when_live, otherwise, hint):
    """Append If(live, when_live, otherwise) to `nodes`; returns its output name."""
    from onnx import helper

    out = names.fresh(hint)
    branches = []
    for src in (when_live, otherwise):
        res = names.fresh(hint + "_branch")
        branches.append(helper.make_graph(
            [helper.make_node("Identity", [src], [res])], names.fresh(hint + "_if"), [],
            [helper.make_empty_tensor_value_info(res)]))
    nodes.append(helper.make_node("If", [live], [out], then_branch=branches[0],
                                  else_branch=branches[1]))
    return out


def _zero_unless(nodes, names, live, info):
    """The scan element `info` at live steps, zeros of its shape after the sequence
    ends (the element itself when its type is unknown or not numeric)."""
    from onnx import TensorProto, helper

    elem = info.type.tensor_type.elem_type if info.type.HasField("tensor_type") else 0
    if elem in (0, TensorProto.STRING):
        return info.name
    zero, shape, zeros = names.fresh("zero"), names.fresh("shape"), names.fresh("zeros")
    nodes += [helper.make_node("Constant", [], [zero],
                               value=helper.make_tensor(zero, elem, [], [0])),
              helper.make_node("Shape", [info.name], [shape]),
              helper.make_node("Expand", [zero, shape], [zeros])]
    return _select(nodes, names, live, info.name, zeros, "scan_elem")


def _typed_like(info, name, keep_shape=True):
    """A ValueInfo called `name` with the type of `info` (element type only unless
    keep_shape)."""
    from onnx import ValueInfoProto

    out = ValueInfoProto()
    out.CopyFrom(info)
    out.name = name
    if not keep_shape and out.type.HasField("tensor_type"):
        out.type.tensor_type.ClearField("shape")
    return out


# ------------------------------------------------------------ Hardmax, Upsample, Resize

def _graph_nodes(graph):
    """(graph, node) for every node of `graph` and its subgraphs, in `all_proto_nodes` order."""
    for node in graph.node:
        yield graph, node
        for sub in proto_subgraphs(node):
            yield from _graph_nodes(sub)


def _is_resize_like(node) -> bool:
    return node.op_type in ("Upsample", "Resize") and node.domain in _DEFAULT_DOMAINS


def _convert_keeping_resize_names(proto, opset: int, target: int):
    """`proto` brought from `opset` to `target` by onnx's version converter, with the
    names its Upsample 9 -> 10 adapter drops (the node's own, and its output's, which it
    renames) given back to the Resize nodes that replace the Upsamples.

    Raises:
        ConversionError: the converter cannot upgrade the model.
    """
    from onnx import version_converter

    before = [(n.name, n.output[0] if len(n.output) else "")
              for _, n in _graph_nodes(proto.graph) if _is_resize_like(n)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = version_converter.convert_version(proto, target)
    except Exception as e:  # noqa: BLE001 - the converter raises RuntimeError etc.
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConversionError(f"model uses opset {opset}, older than "
                              f"{PER_AXIS_HARDMAX_OPSET}, and ONNX's version converter "
                              f"cannot upgrade it: {msg}") from e
    after = [(g, n) for g, n in _graph_nodes(out.graph) if _is_resize_like(n)]
    if len(after) != len(before):  # not the one-for-one replacement expected: leave it
        return out
    taken = _Names(out.graph).taken
    for (name, output), (graph, node) in zip(before, after):
        if name and not node.name:
            node.name = name
        if output and len(node.output) and node.output[0] != output and output not in taken:
            _rename_in_graph(graph, {node.output[0]: output})
            taken.add(output)
    return out


def _rename_in_graph(graph, mapping):
    """Rename values of `graph` (node outputs and their uses, here and in nested graphs,
    and the graph's outputs and value_info) by `mapping`."""
    _rename_uses(graph, mapping, top=True)
    for coll in (graph.output, graph.value_info):
        for v in coll:
            v.name = mapping.get(v.name, v.name)


def _rewrite_late(graph, names, old_resize: bool):
    """Rewrite, in `graph` and its subgraphs, every Hardmax (the model is older than
    opset 13) and, when `old_resize`, every Resize (each came from a Resize-10 or an
    Upsample); see the module docstring."""
    nodes = []
    for node in graph.node:
        for sub in proto_subgraphs(node):
            _rewrite_late(sub, names, old_resize)
        if node.domain in _DEFAULT_DOMAINS and node.op_type == "Hardmax":
            nodes.extend(_lower_hardmax(node, names))
        elif old_resize and _is_resize_like(node):
            nodes.extend(_asymmetric_resize(graph, node, names))
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)


FLATTENING_OPS = ("Softmax", "LogSoftmax", "Hardmax")


def guard_flattening_axes(proto, opset: int) -> None:
    """Make a pre-13 Softmax, LogSoftmax or Hardmax whose input rank is unknown before
    it runs fail, as the op does, when its (non-negative) axis equals that rank, in
    place: the upgrade spells the op with Flatten(axis), which takes axis = rank, so a
    1-D input with the default axis 1 would give all ones. Its input goes through a
    one-output Split at the same axis, which passes the tensor on and refuses such an
    axis by name. An input whose rank ONNX's shape inference knows gets no guard (the
    importer checks its axis). Never raises."""
    if opset >= PER_AXIS_HARDMAX_OPSET or not any(
            _flattens_at(n) is not None for n in all_proto_nodes(proto.graph)):
        return
    ranked = {name for name, (_, dims, _) in _known_types(proto).items()
              if dims is not None}
    _guard_graph(proto.graph, _Names(proto.graph, tag="axis_checked"), ranked)


def _flattens_at(node):
    """The non-negative axis of a default-domain Softmax, LogSoftmax or Hardmax node
    (1 when not given), or None for any other node or a negative axis."""
    if node.domain not in _DEFAULT_DOMAINS or node.op_type not in FLATTENING_OPS \
            or not len(node.input) or not node.input[0]:
        return None
    axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
    return axis if axis >= 0 else None


def _guard_graph(graph, names, ranked) -> None:
    from onnx import helper

    nodes, changed = [], False
    for node in graph.node:
        for sub in proto_subgraphs(node):
            _guard_graph(sub, names, ranked)
        axis = _flattens_at(node)
        if axis is not None and node.input[0] not in ranked:
            checked = names.fresh(node.input[0])
            nodes.append(helper.make_node(
                "Split", [node.input[0]], [checked], axis=axis,
                name=f"{node.name or node.op_type}__axis_check"))
            node.input[0] = checked
            changed = True
        nodes.append(node)
    if changed:
        del graph.node[:]
        graph.node.extend(nodes)


def _lower_hardmax(node, names):
    """The nodes that replace one pre-13 Hardmax: Flatten(axis) -> Hardmax(axis=1) ->
    Reshape to the input's shape (the Hardmax keeps the node's name)."""
    from onnx import helper

    if not len(node.input) or not node.input[0] or not len(node.output):
        return [node]  # malformed: left for the importer to report
    axis = next((int(helper.get_attribute_value(a)) for a in node.attribute
                 if a.name == "axis"), 1)
    x, y = node.input[0], node.output[0]
    flat, rows, shape = (names.fresh(h) for h in ("hardmax_in_2d", "hardmax_2d",
                                                   "hardmax_shape"))

    def named(part):
        return f"{node.name}__{part}" if node.name else ""

    return [helper.make_node("Flatten", [x], [flat], axis=axis, name=named("flatten")),
            helper.make_node("Hardmax", [flat], [rows], axis=1, name=node.name),
            helper.make_node("Shape", [x], [shape], name=named("shape")),
            helper.make_node("Reshape", [rows, shape], [y], name=named("reshape"))]


def _asymmetric_resize(graph, node, names):
    """The Resize-11 nodes that compute what the Resize-10 or Upsample that became
    `node` (inputs X, roi, scales) computed; `node` itself is kept and amended."""
    import numpy as np
    from onnx import helper, numpy_helper

    mode = next((helper.get_attribute_value(a) for a in node.attribute
                 if a.name == "mode"), b"nearest")
    mode = mode.decode("utf-8", "replace") if isinstance(mode, bytes) else str(mode)
    _set_attr(node, "coordinate_transformation_mode", "asymmetric")
    if mode != "nearest" or len(node.input) < 3 or not node.input[2] \
            or not len(node.output):
        return [node]
    scales = _constant(graph, node.input[2])
    if scales is not None and not (scales < 1).any():
        _set_attr(node, "nearest_mode", "floor")
        return [node]
    if scales is not None and not (scales > 1).any():
        _set_attr(node, "nearest_mode", "ceil")
        return [node]
    # Some axes grow and others shrink (or the scales are only known at run time): one
    # Resize per rounding direction.
    up, down, mid = names.fresh("scales_up"), names.fresh("scales_down"), \
        names.fresh("upsampled")
    if scales is not None:
        nodes = [helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
                     value.astype(np.float32), name))
                 for name, value in ((up, np.maximum(scales, 1)),
                                     (down, np.minimum(scales, 1)))]
    else:
        one = names.fresh("one")
        nodes = [helper.make_node("Constant", [], [one], value=numpy_helper.from_array(
                     np.array(1, np.float32), one)),
                 helper.make_node("Max", [node.input[2], one], [up]),
                 helper.make_node("Min", [node.input[2], one], [down])]
    first, second = (_copy_node(node) for _ in range(2))
    first.input[2], first.output[0] = up, mid
    _set_attr(first, "nearest_mode", "floor")
    second.input[0], second.input[2] = mid, down
    second.name = f"{node.name}__downsample" if node.name else ""
    _set_attr(second, "nearest_mode", "ceil")
    return nodes + [first, second]


def _constant(graph, name):
    """The value of `name` as a float numpy array when `graph` fixes it (an initializer
    that is not also an overridable graph input, or a Constant node's `value`); None
    otherwise."""
    import numpy as np
    from onnx import numpy_helper

    if name in {v.name for v in graph.input}:
        return None
    try:
        for t in graph.initializer:
            if t.name == name:
                return np.asarray(numpy_helper.to_array(t), dtype=np.float64)
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in _DEFAULT_DOMAINS \
                    and name in node.output:
                for a in node.attribute:
                    if a.name == "value":
                        return np.asarray(numpy_helper.to_array(a.t), dtype=np.float64)
    except Exception:  # noqa: BLE001 - undecodable: treated as unknown at conversion time
        return None
    return None


def _set_attr(node, name: str, value) -> None:
    """Set attribute `name` of `node` to `value`, replacing any it had."""
    from onnx import helper

    keep = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(keep)
    node.attribute.append(helper.make_attribute(name, value))


def _copy_node(node):
    from onnx import NodeProto

    out = NodeProto()
    out.CopyFrom(node)
    return out


# ------------------------------------------------------------ experimental ops

# onnxruntime runs ONNX's removed experimental ops (ImageScaler, ...) in models of these
# opsets only; onnx has no schema for them, so its version converter stops at them.
EXPERIMENTAL_LAST_OPSET = 9

EXPERIMENTAL_OPS = ("Affine", "Crop", "DynamicSlice", "ImageScaler", "ParametricSoftplus",
                    "Scale", "ScaledTanh")

# Ops onnx defines only from a later opset, which onnxruntime runs (with that opset's
# kernel) in models older than it: experimental there, so onnx's converter has no
# schema for them either. {op: the opset onnx defines it from}
EARLY_OPS = {"ThresholdedRelu": 10, "MeanVarianceNormalization": 9}

# Nodes whose standard spelling needs a later opset's ops (Slice with input bounds,
# ThresholdedRelu, MeanVarianceNormalization's axes) wait in this private domain while
# onnx's converter brings the model to RESIZE_MODES_OPSET, then take that spelling.
_DEFERRED_DOMAIN = "onegraph.legacy_deferred"

# Slice before opset 10 takes its bounds as attributes; "to the end" is the int64 limit.
_SLICE_END = 2 ** 63 - 1


def _is_experimental(node, opset: int) -> bool:
    if node.domain not in _DEFAULT_DOMAINS:
        return False
    return (node.op_type in EXPERIMENTAL_OPS and opset <= EXPERIMENTAL_LAST_OPSET) or \
        opset < EARLY_OPS.get(node.op_type, 0)


def has_experimental_ops(proto) -> bool:
    """Whether the model (any graph) uses one of ONNX's removed experimental ops at an
    opset onnxruntime runs them in (1-9), or ThresholdedRelu (MeanVarianceNormalization)
    before opset 10 (9), where onnx has no schema for it."""
    opset = _default_opset(proto)
    return opset is not None and any(_is_experimental(n, opset)
                                     for n in all_proto_nodes(proto.graph))


def rewrite_experimental(proto):
    """A copy of `proto` whose experimental ops are spelled in standard ops of the
    model's own opset (onnxruntime 1.32's kernels define their meaning; constants are
    initializers of the graph holding the node, of the input's element type):

    * ImageScaler(scale, bias) -> Mul by scale, Add of bias as (1, C, 1, 1); before
      opset 7 (no numpy broadcasting; onnx's converter misplaces a per-channel
      `axis` broadcast) one depthwise 1x1 Conv, weight scale, bias `bias`;
    * Crop(border, scale) -> Slice of H and W: [top, H - bottom) x [left, W - right),
      or with scale (h, w) [top, top + h) x [left, left + w);
    * Affine(alpha=1, beta=0) -> alpha * x + beta;  Scale(scale=1) -> x * scale;
    * ScaledTanh(alpha, beta) -> alpha * Tanh(beta * x);
      ParametricSoftplus(alpha, beta) -> alpha * Softplus(beta * x);
    * DynamicSlice(data, starts, ends[, axes]) with constant bounds -> Slice with them
      as attributes (the only form Slice has before opset 10);
    * what needs a later opset's ops waits, in a private domain, for `rewrite_legacy`
      to bring the model to opset 11 (`_restore_deferred`): DynamicSlice with bounds
      computed at run time (-> Slice with input bounds), ThresholdedRelu before opset
      10 (the same op), MeanVarianceNormalization before opset 9 (onnxruntime runs
      opset 9's kernel: mean and variance over axes [0, 2, 3], [0, 1, 2, 3] with
      across_channels; normalize_variance=0 only subtracts the mean).

    What onnxruntime checks only when it runs (ImageScaler's and Crop's 4-D input, a
    bias of C values, a crop inside the image) is checked here when the input's shape
    is declared; otherwise Slice clamps a crop that does not fit, and a one-value bias
    broadcasts over every channel, where onnxruntime fails.

    Raises:
        ConversionError: naming the node: an attribute onnxruntime requires is missing
            or invalid (ImageScaler's bias, ScaledTanh's and ParametricSoftplus's alpha
            and beta, Crop's four non-negative borders, a scale of two non-negative
            values), the element type of its input cannot be inferred, or its declared
            input shape contradicts it.
    """
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(proto)
    opset = _default_opset(out)
    if opset is None:
        return out
    names = _Names(out.graph, tag="exp")
    while True:
        pending = [n for n in all_proto_nodes(out.graph) if _is_experimental(n, opset)]
        if not pending:
            _has_deferred(out)   # imports the private domain of any deferred node
            return out
        types = _known_types(out)
        done = _rewrite_experimental_graph(out.graph, opset, names, types)
        if not done:
            node = pending[0]
            raise ConversionError(
                f"{node.op_type} node {_node_label(node)}: the element type of its input "
                f"{node.input[0] if len(node.input) else ''!r} cannot be inferred (ONNX's "
                "shape inference stops there); declare it in the graph's value_info")


def _node_label(node) -> str:
    return repr(node.name) if node.name else f"making {list(node.output)}"


def _known_types(proto):
    """{value name: (elem_type, dims or None, TypeProto)} from ONNX's shape inference
    of `proto` (every graph; dims hold ints, or None for an unknown dim)."""
    import onnx
    from onnx import helper

    try:
        inferred = onnx.shape_inference.infer_shapes(proto)
    except Exception:  # noqa: BLE001 - it fails on malformed models: use what is declared
        inferred = proto
    types = {}

    def visit(graph):
        for t in graph.initializer:
            types[t.name] = (t.data_type, list(t.dims),
                             helper.make_tensor_type_proto(t.data_type, list(t.dims)))
        for coll in (graph.input, graph.output, graph.value_info):
            for v in coll:
                tt = v.type.tensor_type if v.type.HasField("tensor_type") else None
                if tt is None or not tt.elem_type:
                    continue
                dims = [d.dim_value if d.HasField("dim_value") else None
                        for d in tt.shape.dim] if tt.HasField("shape") else None
                types.setdefault(v.name, (tt.elem_type, dims, v.type))
        for node in graph.node:
            for sub in proto_subgraphs(node):
                visit(sub)

    visit(inferred.graph)
    return types


def _rewrite_experimental_graph(graph, opset, names, types) -> int:
    """Rewrite the experimental nodes of `graph` (and its subgraphs) whose input type is
    known; returns how many were rewritten."""
    done = 0
    nodes = []
    for node in graph.node:
        for sub in proto_subgraphs(node):
            done += _rewrite_experimental_graph(sub, opset, names, types)
        if not _is_experimental(node, opset):
            nodes.append(node)
            continue
        if not len(node.input) or not node.input[0] or len(node.output) != 1 \
                or not node.output[0]:
            raise ConversionError(f"{node.op_type} node {_node_label(node)}: takes an "
                                  "input and makes one output")
        known = types.get(node.input[0])
        if node.op_type in EARLY_OPS or node.op_type == "DynamicSlice":
            # any element type; the same shape, or (Slice) none to declare
            new = [_defer(node)] if node.op_type in EARLY_OPS else \
                _lower_dynamic_slice(graph, node, f"DynamicSlice node {_node_label(node)}")
            # declared, so that ops rewritten after them (a Crop reading a deferred
            # MeanVarianceNormalization) know their input's type
            if known is not None and node.op_type in EARLY_OPS:
                _declare_like_input(graph, [new[0]], node, known[2])
            elif known is not None and new[0].domain == _DEFERRED_DOMAIN:
                _declare_slice_of(graph, new[0], known)
            nodes.extend(new)
            done += 1
            continue
        if known is None:
            nodes.append(node)
            continue
        new = _lower_experimental(graph, node, opset, names, known)
        if opset < 7:
            _declare_like_input(graph, new, node, known[2])
        nodes.extend(new)
        done += 1
    del graph.node[:]
    graph.node.extend(nodes)
    return done


def _lower_experimental(graph, node, opset, names, known):
    """The standard nodes computing what experimental `node` computes (see
    `rewrite_experimental`); `known` is its input's (elem_type, dims)."""
    from onnx import helper

    elem, dims, _ = known
    attrs = attribute_values(node)
    op, x, y = node.op_type, node.input[0], node.output[0]
    where = f"{op} node {_node_label(node)}"
    make = helper.make_node
    legacy = {"broadcast": 1} if opset < 7 else {}  # opsets 1-6 broadcast only when told
    try:
        np_type = helper.tensor_dtype_to_np_dtype(elem)
    except (KeyError, ValueError):
        raise ConversionError(f"{where}: input {x!r} has element type {elem}, which is no "
                              "ONNX data type") from None
    if np_type.kind != "f":
        raise ConversionError(f"{where}: input {x!r} is {np_type}; onnxruntime runs it on "
                              "float tensors only")

    def const(hint, value, shape=()):
        import numpy as np
        from onnx import numpy_helper

        name = names.fresh(hint)
        graph.initializer.append(numpy_helper.from_array(
            np.asarray(value, dtype=np_type).reshape(shape), name))
        return name

    def named(part):
        return f"{node.name}__{part}" if node.name else ""

    def scaled(src, factor, dst, part):
        return make("Mul", [src, const(f"{op}_{part}", factor)], [dst], name=named(part),
                    **legacy)

    if op == "Scale":
        return [scaled(x, _float_attr(attrs, "scale", 1.0, where), y, "scale")]
    if op == "Affine":
        mid = names.fresh("affine_scaled")
        return [scaled(x, _float_attr(attrs, "alpha", 1.0, where), mid, "alpha"),
                make("Add", [mid, const("Affine_beta", _float_attr(attrs, "beta", 0.0,
                                                                   where))],
                     [y], name=node.name, **legacy)]
    if op in ("ScaledTanh", "ParametricSoftplus"):
        alpha = _float_attr(attrs, "alpha", None, where)
        beta = _float_attr(attrs, "beta", None, where)
        inner, act = names.fresh(f"{op}_in"), names.fresh(f"{op}_act")
        return [scaled(x, beta, inner, "beta"),
                make("Tanh" if op == "ScaledTanh" else "Softplus", [inner], [act],
                     name=node.name),
                scaled(act, alpha, y, "alpha")]
    if op == "ImageScaler":
        return _lower_image_scaler(node, attrs, opset, dims, const, scaled, names,
                                   where)
    return [_lower_crop(node, attrs, dims, where)]


def _float_attr(attrs, name, default, where) -> float:
    """A FLOAT attribute's value, or `default`; a missing required one is refused."""
    if name in attrs:
        value = attrs[name]
        if not isinstance(value, (int, float)):
            raise ConversionError(f"{where}: attribute {name!r} must be a float, got "
                                  f"{value!r:.60}")
        return float(value)
    if default is None:
        raise ConversionError(f"{where}: attribute {name!r} is missing; onnxruntime's "
                              "kernel requires it")
    return default


def _ints_attr(attrs, name, count, where):
    """An INTS attribute of `count` non-negative values, or None when absent."""
    if name not in attrs:
        return None
    value = attrs[name]
    if not isinstance(value, (list, tuple)) or len(value) != count \
            or not all(isinstance(v, int) and v >= 0 for v in value):
        raise ConversionError(f"{where}: attribute {name!r} must be {count} non-negative "
                              f"integers (as onnxruntime requires), got {value!r:.80}")
    return [int(v) for v in value]


def _check_rank4(dims, where):
    """Refuse a declared input shape that is not 4-D (onnxruntime fails on it)."""
    if dims is not None and len(dims) != 4:
        raise ConversionError(f"{where}: input must be 4-D (N, C, H, W), its declared "
                              f"shape has rank {len(dims)}")


def _lower_image_scaler(node, attrs, opset, dims, const, scaled, names, where):
    """ImageScaler as Mul + Add (opset >= 7) or a depthwise 1x1 Conv (opsets 1-6).

    Raises:
        ConversionError: no bias; a declared input not 4-D or of another channel count.
    """
    from onnx import helper

    scale = _float_attr(attrs, "scale", 1.0, where)
    if "bias" not in attrs:
        raise ConversionError(f"{where}: attribute 'bias' is missing; onnxruntime's "
                              "ImageScaler requires one value per channel")
    bias = [float(v) for v in attrs["bias"]]
    _check_rank4(dims, where)
    channels = dims[1] if dims is not None else None
    if channels is not None and channels != len(bias):
        raise ConversionError(f"{where}: bias has {len(bias)} values, the input "
                              f"{channels} channels")
    x, y = node.input[0], node.output[0]
    if opset < 7:
        c = len(bias)
        weight = const("ImageScaler_weight", [scale] * c, (c, 1, 1, 1))
        return [helper.make_node("Conv", [x, weight, const("ImageScaler_bias", bias, (c,))],
                                 [y], group=c, kernel_shape=[1, 1], name=node.name)]
    mid = names.fresh("image_scaled")
    return [scaled(x, scale, mid, "scale"),
            helper.make_node("Add", [mid, const("ImageScaler_bias", bias,
                                                (1, len(bias), 1, 1))],
                             [y], name=node.name)]


def _lower_crop(node, attrs, dims, where):
    """Crop as an attribute-form Slice of axes 2 and 3.

    Raises:
        ConversionError: border or scale missing or malformed; a declared input not 4-D
            or too small for the crop.
    """
    from onnx import helper

    border = _ints_attr(attrs, "border", 4, where)
    if border is None:
        raise ConversionError(f"{where}: attribute 'border' (left, top, right, bottom) is "
                              "missing; onnxruntime's Crop requires it")
    size = _ints_attr(attrs, "scale", 2, where)
    left, top, right, bottom = border
    _check_rank4(dims, where)
    if size is None:
        starts, ends = [top, left], [-bottom if bottom else _SLICE_END,
                                     -right if right else _SLICE_END]
        need = [top + bottom, left + right]
    else:
        starts, ends = [top, left], [top + size[0], left + size[1]]
        need = ends
    if dims is not None:
        for axis, (have, want) in enumerate(zip(dims[2:], need)):
            if have is not None and have < want:
                raise ConversionError(f"{where}: the crop needs {want} "
                                      f"{('rows', 'columns')[axis]}, the input has {have}")
    return helper.make_node("Slice", [node.input[0]], [node.output[0]], axes=[2, 3],
                            starts=starts, ends=ends, name=node.name)


def _lower_dynamic_slice(graph, node, where):
    """DynamicSlice with constant starts/ends/axes as an attribute-form Slice; with
    bounds computed at run time, the node deferred (`_defer`).

    Raises:
        ConversionError: starts or ends missing, or a constant bound malformed.
    """
    from onnx import helper

    bounds = []
    for pos, what in ((1, "starts"), (2, "ends"), (3, "axes")):
        name = node.input[pos] if len(node.input) > pos else ""
        if not name:
            if pos < 3:
                raise ConversionError(f"{where}: input {what} is missing")
            bounds.append(None)
            continue
        value = _int_constant(graph, name)
        if value is None:  # Slice takes its bounds as inputs from opset 10 on
            return [_defer(node)]
        if value.ndim != 1 or value.dtype.kind not in "iu":
            raise ConversionError(f"{where}: {what} must be a 1-D int32 or int64 tensor, "
                                  f"got {value.dtype} of shape {list(value.shape)}")
        bounds.append([int(v) for v in value])
    starts, ends, axes = bounds
    if len(starts) != len(ends) or (axes is not None and len(axes) != len(starts)):
        raise ConversionError(f"{where}: starts ({len(starts)}), ends ({len(ends)}) and "
                              f"axes must have one value per sliced axis")
    extra = {"axes": axes} if axes is not None else {}
    return [helper.make_node("Slice", [node.input[0]], [node.output[0]], starts=starts,
                             ends=ends, name=node.name, **extra)]


def _int_constant(graph, name):
    """The value of `name` as `_constant` finds it, but in its own dtype (int64 bounds
    such as the int64 limit do not survive float64); None when not fixed."""
    from onnx import numpy_helper

    if name in {v.name for v in graph.input}:
        return None
    try:
        for t in graph.initializer:
            if t.name == name:
                return numpy_helper.to_array(t)
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in _DEFAULT_DOMAINS \
                    and name in node.output:
                for a in node.attribute:
                    if a.name == "value":
                        return numpy_helper.to_array(a.t)
    except Exception:  # noqa: BLE001 - undecodable: treated as unknown
        return None
    return None


def _declare_like_input(graph, new, node, type_proto) -> None:
    """Declare the values `new` makes (but for a Slice's) with the type and shape of
    `node`'s input: onnx's broadcast adapters up from opset 6 need their inputs' shapes,
    which shape inference of opsets 1-5 does not give. The ops are elementwise, so
    their values have the input's shape."""
    from onnx import ValueInfoProto

    declared = {v.name for coll in (graph.input, graph.output, graph.value_info)
                for v in coll}
    for n in new:
        if n.op_type == "Slice":
            continue
        for name in n.output:
            if name in declared:
                continue
            info = ValueInfoProto()
            info.name = name
            info.type.CopyFrom(type_proto)
            graph.value_info.append(info)


def _declare_slice_of(graph, node, known) -> None:
    """Declare the output of a deferred DynamicSlice: its input's element type and rank,
    dims unknown."""
    from onnx import helper

    elem, dims, _ = known
    if not node.output or any(v.name == node.output[0] for v in graph.value_info):
        return
    shape = None if dims is None else [None] * len(dims)
    graph.value_info.append(helper.make_tensor_value_info(node.output[0], elem, shape))


def _defer(node):
    """`node` moved to the private domain, to be spelled once onnx's converter has
    brought the model to RESIZE_MODES_OPSET (`_restore_deferred`)."""
    node.domain = _DEFERRED_DOMAIN
    return node


def _has_deferred(proto) -> bool:
    """Whether a node waits in the private domain; if so, make sure the model imports
    that domain (onnx's converter passes such nodes through unchanged)."""
    from onnx import helper

    if not any(n.domain == _DEFERRED_DOMAIN for n in all_proto_nodes(proto.graph)):
        return False
    if not any(o.domain == _DEFERRED_DOMAIN for o in proto.opset_import):
        proto.opset_import.append(helper.make_opsetid(_DEFERRED_DOMAIN, 1))
    return True


def _restore_deferred(proto) -> None:
    """Spell the deferred nodes (in place) in the model's ops, now of opset 11 (see
    `rewrite_experimental`), and drop the private domain's import."""
    names = _Names(proto.graph, tag="exp")
    # element types, taken while every deferred node still waits in the private domain
    types = _known_types(proto) if any(
        n.domain == _DEFERRED_DOMAIN and n.op_type in UNADAPTED_BEFORE
        for n in all_proto_nodes(proto.graph)) else {}
    # innermost graphs first: replacing a graph's node list copies its nodes, and with
    # them their bodies, so a body is rewritten before the graph holding it
    for graph in reversed(list(all_graph_protos(proto.graph))):
        nodes = []
        for node in graph.node:
            if node.domain != _DEFERRED_DOMAIN:
                nodes.append(node)
                continue
            node.domain = ""
            if node.op_type == "DynamicSlice":
                node.op_type = "Slice"
                nodes.append(node)
            elif node.op_type == "MeanVarianceNormalization":
                nodes.extend(_mvn_of_opset_11(node, names))
            elif node.op_type in UNADAPTED_BEFORE:
                nodes.extend(restore_unadapted(node, names, types))
            else:
                nodes.append(node)
        del graph.node[:]
        graph.node.extend(nodes)
    kept = [o for o in proto.opset_import if o.domain != _DEFERRED_DOMAIN]
    del proto.opset_import[:]
    proto.opset_import.extend(kept)


def _mvn_of_opset_11(node, names):
    """A MeanVarianceNormalization of opsets 1-8 (across_channels, normalize_variance)
    in opset-11 ops: the opset-9 op over axes [0, 2, 3] (or [0, 1, 2, 3] across
    channels), or, without variance normalisation, x - ReduceMean(x) over those axes."""
    from onnx import helper

    attrs = attribute_values(node)
    axes = [0, 1, 2, 3] if attrs.get("across_channels", 0) else [0, 2, 3]
    x, y = node.input[0], node.output[0]
    if attrs.get("normalize_variance", 1):
        return [helper.make_node("MeanVarianceNormalization", [x], [y], axes=axes,
                                 name=node.name)]
    mean = names.fresh("mvn_mean")
    return [helper.make_node("ReduceMean", [x], [mean], axes=axes, keepdims=1,
                             name=f"{node.name}__mean" if node.name else ""),
            helper.make_node("Sub", [x, mean], [y], name=node.name)]

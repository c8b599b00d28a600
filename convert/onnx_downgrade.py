"""Bringing an exported ModelProto to another default-domain opset: `convert_opset`.

Upgrades are onnx's version converter alone. Downgrades need more: the converter has
adapters for the changes that rewrite a node (Reduce* axes moving between attribute
and input, Split's sizes, ...), but none for most changes that only widened an op's
types or added an attribute or optional input whose default keeps the old meaning
(Add, Relu and Identity at 14, Pad's axes at 18, ...), so without help a model that
uses Add cannot go from opset 14 to 13. Nor can it write an op newer than the target.
A downgrade here therefore

1. expands the ops newer than the target that ONNX defines as functions (Swish,
   RotaryEmbedding, Attention, ...) with onnx's inliner, and such ops that a node uses
   in a form newer than the target (Attention's window attributes, GroupNormalization-
   21's per-channel scale); then rewrites the ops newer
   than the target that have a plain decomposition into older ops (Gelu,
   LayerNormalization, RMSNormalization, Mish, HardSwish, Trilu), and the nodes that
   use what their op gained since the target (Shape's start/end, axes inputs, ...) into
   the older form, written for the target opset (`onnx_rewrites.py`);
2. holds back from the converter every node whose op changed since the target only in
   ways the node does not use: it sets no attribute and feeds no input the older
   schema lacks, relies on no default that changed, and uses no attribute value the
   older opset does not know (`_keeps_meaning`); the converter does not enter a held
   node, so a held If/Loop/Scan whose subgraphs still hold a node for it is refused
   (`_refuse_unreached`);
3. runs the converter on the rest, and puts the held nodes back unchanged.

`to_onnx` then runs ONNX's checker, which checks each node's types against the target
schemas (an int8 Add cannot go below opset 14).
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np

from ..errors import ConversionError
from .onnx_import import (_onnx, declared_types, element_type_misfit, onnx_schema,
                          schema_accepts)
from .onnx_legacy import all_proto_nodes, proto_subgraphs
from .onnx_rewrites import (ADAPTATIONS, FLOAT_TYPES, HELD_DOMAIN, LOWERINGS, NodeBuilder,
                            adaptation_for, graph_constants, lower_new_ops, node_attr)


# Op versions whose meaning changed although the node may look the same under both
# schemas (GridSample's modes renamed, GroupNormalization's scale per channel rather
# than per group, RoiAlign's new coordinate_transformation_mode defaulting to a mode
# unlike the old behaviour): never held, left to the converter (which refuses them
# without an adapter).
_MEANING_CHANGED = {("GridSample", 20), ("GroupNormalization", 21), ("RoiAlign", 16),
                    # OneHot-11 counts negative indices from the back, where OneHot-9
                    # gives all off_value (onnxruntime counts them at both); MaxUnpool-11
                    # places values another way than onnxruntime's MaxUnpool-9 with an
                    # output_shape (test_maxunpool_export_with_output_shape)
                    ("OneHot", 11), ("MaxUnpool", 11),
                    # rewritten beforehand; never left to onnx's converter, which keeps
                    # an axis that is not the last and so changes the result
                    ("Softmax", 13), ("LogSoftmax", 13), ("Hardmax", 13)}

_BATCHNORM_RENAMED = ("BatchNormalization", 14)

# Mod's fmod=0 (floor modulo) on floats came in here; before, floats needed fmod=1.
_FLOAT_FLOOR_MOD = ("Mod", 28)
_FLOAT_ELEM_TYPES = {1, 10, 11, 16}  # float, float16, double, bfloat16 (0: unknown)

# Attributes that became an optional input (op version -> the attribute's name). Neither
# given means the same in both versions: every axis for the reductions (18; ReduceSum
# 13), with noop_with_empty_axes at its default 0 (another value is refused as a new
# attribute); every axis of length 1 for Squeeze (13); equal parts for Split (13). Such
# a node is held, also inside a held If or Loop, which onnx's converter does not enter
# (a jax2onnx ReduceProd over all axes, tf2onnx's GRU cell's Split in its Loop).
_ATTRIBUTE_BECAME_INPUT = {
    **{(op, 18): "axes" for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                   "ReduceL1", "ReduceL2", "ReduceLogSum",
                                   "ReduceLogSumExp", "ReduceSumSquare")},
    ("ReduceSum", 13): "axes", ("Squeeze", 13): "axes", ("Split", 13): "split"}

# Holding is for targets from here on: below it Sum, Max, Min and Mean (8) did not
# broadcast, a change no node shows. Softmax's axis, which changed meaning at 13, is
# rewritten before holding (onnx_rewrites.ADAPTATIONS_BEFORE_13); negative axes, which
# came in at 11, are counted from the front afterwards (`_axes_from_the_front`).
_OLDEST_HELD_TARGET = 8
# onegraph's own rewrites (Resize's axes, float Mod) are written for targets from here.
_OLDEST_REWRITE_TARGET = 11

# Negative axes (counted from the back) came in at opset 11 for these attributes
# (OneHot knew -1 alone before; Gather and Scatter had them from the start): below 11 a
# negative value is rewritten from the rank, as axis + rank (Unsqueeze: the output's
# rank; Flatten: axis in [-r, r]; OneHot: the output's, the indices' rank + 1).
_NEGATIVE_AXES_OPSET = 11
_AXIS_ATTRIBUTES = {
    **{op: "axis" for op in ("ArgMax", "ArgMin", "Compress", "Concat", "Flatten",
                             "Hardmax", "LogSoftmax", "Softmax", "OneHot", "Split",
                             "TopK")},
    **{op: "axes" for op in ("Squeeze", "Unsqueeze", "ReduceL1", "ReduceL2",
                             "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                             "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum",
                             "ReduceSumSquare")},
}
# Axes a node gives in other ways: refused when negative below 11 (their ranks are the
# scanned inputs' or the sliced data's, known only in simple cases).
_OTHER_AXES = {"Scan": ("scan_input_axes", "scan_output_axes")}

# Attribute values an op version added: a node using one is not held.
_NEW_ATTRIBUTE_VALUES = {
    ("Resize", 19): ("coordinate_transformation_mode", {b"half_pixel_symmetric"}),
    ("Pad", 19): ("mode", {b"wrap"}),
    ("ScatterElements", 18): ("reduction", {b"max", b"min"}),
    ("ScatterND", 18): ("reduction", {b"max", b"min"}),
}


def convert_opset(proto, source: int, target: int):
    """`proto` (a ModelProto whose default-domain ops are at opset `source`) written at
    opset `target`, as a new ModelProto.

    Raises:
        ConversionError: some op cannot be written at `target` (naming the op, its
            nodes and why; this includes a node whose element types the op accepts only
            from a later opset, such as an int8 Add below 14), or onnx's converter
            fails.
    """
    onnx = _onnx()
    if target >= source:
        return _run_converter(proto, source, target)
    work = onnx.ModelProto()
    work.CopyFrom(proto)
    # first the function bodies, whose ops the later steps then rewrite like any other
    work, inline_failure = _inline_new_function_ops(work, source, target, newer_forms=True)
    types = known_types(work)
    if source >= _SPLIT_NUM_OUTPUTS_OPSET > target:
        _split_by_sizes(work, target)
    if source >= _RESIZE_AXES_OPSET > target >= _OLDEST_REWRITE_TARGET:
        # first: below 13 the rewrites then give the Resize it writes empty roi/scales
        _spread_resize_axes(work.graph, target, types)
    lowered = lower_new_ops(work.graph, source, target, types)
    if source >= _FLOAT_FLOOR_MOD[1] > target >= _OLDEST_REWRITE_TARGET:
        lowered += _floor_mod_by_fmod(work.graph, target, types)
    held = _hold_unchanged(work.graph, source, target, types, _sequence_values(work)) \
        if target >= _OLDEST_HELD_TARGET else 0
    if lowered or held:
        work.opset_import.add(domain=HELD_DOMAIN, version=1)
    out = _run_converter(work, source, target, inline_failure)
    _release(out.graph)
    keep = [(o.domain, o.version) for o in out.opset_import if o.domain != HELD_DOMAIN]
    del out.opset_import[:]
    for domain, version in keep:
        out.opset_import.add(domain=domain, version=version)
    if target < _NEGATIVE_AXES_OPSET <= source:
        _axes_from_the_front(out, target, types)
    _refuse_types_the_target_lacks(out, source, target)
    _refuse_container_types_the_target_lacks(out, source, target)
    return out


def lower_ops_newer_than(proto, opset: int):
    """`proto` (a new ModelProto) with the default-domain ops that ONNX defines only
    after `opset`, which a converter wrote into a model of that opset (tf2onnx writes
    HardSwish into opset-13 models), spelled in opset-`opset` ops: by ONNX's function
    bodies, or onegraph's rewrites (`onnx_rewrites.py`), as a downgrade spells them.
    Nodes with neither are left as they are, for the caller to refuse.

    Raises:
        ConversionError: a rewrite needs an input type or rank that is unknown, as in
            `convert_opset`.
    """
    onnx = _onnx()
    newest = onnx.defs.onnx_opset_version()
    work = onnx.ModelProto()
    work.CopyFrom(proto)
    # the inliner finds a function op's body at the model's stated opset: state the
    # newest while it expands them (the other nodes mean the same at both)
    default = [o for o in work.opset_import if o.domain in ("", "ai.onnx")]
    for o in default:
        o.version = newest
    work, _ = _inline_new_function_ops(work, newest, opset)
    for o in work.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = opset
    lower_new_ops(work.graph, newest, opset, known_types(work))
    _release(work.graph)
    return work


# Split's num_outputs came in at opset 18; before it a Split without sizes splits
# equally among its outputs, and sizes are an input (13-17).
_SPLIT_NUM_OUTPUTS_OPSET = 18


def _split_by_sizes(proto, target) -> None:
    """Rewrite (in place, subgraphs too) each Split that uses num_outputs in Split-13's
    terms where the split axis's length is known: an even split drops the attribute
    (equal parts), an uneven one (num_outputs' smaller last part) gets its sizes as a
    `split` input. A Split whose axis length is unknown keeps the attribute, for
    `_split_sizes_at_run_time` to compute its sizes from the input's shape."""
    onnx = _onnx()
    from onnx import numpy_helper

    try:
        inferred = onnx.shape_inference.infer_shapes(proto)
    except Exception:  # noqa: BLE001 - without shapes nothing is rewritten
        inferred = proto

    def own_dims(graph) -> dict:
        dims = {}
        for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
            t = vi.type.tensor_type
            if t.HasField("shape"):
                dims[vi.name] = [d.dim_value if d.HasField("dim_value") else None
                                 for d in t.shape.dim]
        for init in graph.initializer:
            dims[init.name] = list(init.dims)
        return dims

    def rewrite(graph, shapes, outer: dict):
        # `shapes` is the same graph after inference (inference only adds value_info,
        # so its nodes and subgraphs line up); a name resolves in the innermost graph
        # that has it, as two sibling branches may each have their own `t`
        dims = {**outer, **own_dims(shapes)}
        for node, inferred_node in zip(graph.node, shapes.node):
            for sub, inferred_sub in zip(proto_subgraphs(node), proto_subgraphs(inferred_node)):
                rewrite(sub, inferred_sub, dims)
            if node.op_type != "Split" or node.domain not in ("", "ai.onnx"):
                continue
            n = node_attr(node, "num_outputs", None)
            if n is None or (len(node.input) > 1 and node.input[1]):
                continue
            shape = dims.get(node.input[0])
            axis = node_attr(node, "axis", 0)
            if shape is None or not -len(shape) <= axis < len(shape) \
                    or shape[axis] is None or n < 1:
                continue
            length = shape[axis]
            part = -(-length // n)
            sizes = [part] * (n - 1) + [length - part * (n - 1)]
            if sizes[-1] < 0:
                continue
            keep = [a for a in node.attribute if a.name != "num_outputs"]
            del node.attribute[:]
            node.attribute.extend(keep)
            if length % n:
                name = f"{node.name or node.output[0]}__split_sizes"
                graph.initializer.append(
                    numpy_helper.from_array(np.array(sizes, np.int64), name))
                del node.input[1:]
                node.input.append(name)
    rewrite(proto.graph, inferred.graph, {})


def _inline_new_function_ops(proto, source, target, newer_forms=False):
    """(proto, None) with every default-domain op that does not exist at `target` but
    that ONNX defines as a function of other ops (Swish, SwiGLU, RotaryEmbedding,
    Attention, CenterCropPad, AffineGrid, the window ops, CastLike, ...) expanded into
    its function body by onnx's inliner, subgraphs too; or (proto unchanged, the
    inliner's reason) when it cannot expand them (an omitted optional input of a
    context-dependent function, for one).

    With `newer_forms` (the nodes are at opset `source`), also such an op that exists at
    `target` where a node uses it in a form newer than the target (`_newer_form`:
    Attention's window attributes, GroupNormalization-21's per-channel scale), which
    would otherwise be refused; if the inliner cannot expand those, they are left to
    that refusal and the rest is expanded as before."""
    from onnx import inliner

    # a body may hold ops newer than the target too (SwiGLU's Swish): expand again
    for _ in range(_INLINE_ROUNDS):
        ids, optional = set(), set()
        for node in all_proto_nodes(proto.graph):
            if node.domain not in ("", "ai.onnx"):
                continue
            missing = onnx_schema(node.op_type, target, "") is None
            if not missing and not (newer_forms and _newer_form(node, source, target)):
                continue
            schema = onnx_schema(node.op_type, source, "")
            # the ops onegraph rewrites itself keep their rewrite
            if node.op_type not in LOWERINGS and schema is not None and (
                    schema.has_function or schema.has_context_dependent_function):
                (ids if missing else optional).add(("", node.op_type))
                _spell_default_attributes(node, schema)
        if not ids | optional:
            break
        failure = None
        for selected in ([ids | optional, ids] if optional and ids else [ids | optional]):
            callers = {o: _label(n) for n in all_proto_nodes(proto.graph)
                       if ("", n.op_type) in selected and n.domain in ("", "ai.onnx")
                       for o in n.output if o}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    proto = _without_added_types(inliner.inline_selected_functions(
                        _typed(proto), sorted(selected), inline_schema_functions=True),
                        proto)
                _name_body_nodes(proto.graph, callers)
                failure = None
                break
            except Exception as e:  # noqa: BLE001 - the inliner raises RuntimeError, more
                text = str(e).strip()
                first = text.splitlines()[0] if text else type(e).__name__
                first = first.split("` failed: ", 1)[-1]
                if first.rstrip() == "Type unknown for":  # the name it lacks is ""
                    first = "it needs the type of an omitted optional input"
                failure = first
        if failure is not None:
            return proto, (failure if ids else None)
    return proto, None


def _name_body_nodes(graph, callers) -> None:
    """Name the unnamed nodes that onnx's inliner wrote for a function op's body after
    that node ("Swish_0/Sigmoid_1"), so that a refusal can name them: the inliner puts a
    body where its node was, ending with the node that writes the node's output
    (`callers`: output name -> the inlined node's name). Subgraphs too."""
    pending = []
    taken = {n.name for n in graph.node if n.name}
    counts: dict = {}
    for node in graph.node:
        for sub in proto_subgraphs(node):
            _name_body_nodes(sub, callers)
        if node.name:
            pending = []
            continue
        pending.append(node)
        caller = next((callers[o] for o in node.output if o in callers), None)
        if caller is None:
            continue
        # (a node with several outputs ends its body in parts: count on per caller)
        for body_node in pending:
            while True:
                k = counts[caller] = counts.get(caller, -1) + 1
                name = f"{caller}/{body_node.op_type}_{k}"
                if name not in taken:
                    break
            body_node.name = name
            taken.add(name)
        pending = []


def _newer_form(node, source, target) -> bool:
    """Whether `node` (at opset `source`) uses its op in a form that came in after
    `target`: a version whose meaning changed (`_MEANING_CHANGED`), or an attribute
    set to other than its default or an input that the older schema lacks. False for
    the ops `ADAPTATIONS` rewrites."""
    if node.op_type in ADAPTATIONS or adaptation_for(node, source, target) is not None:
        # onegraph's own rewrite of these comes later (the reductions' bodies give
        # log(exp(x)) where ReduceLogSumExp over no axes gives x; Softmax stays one op)
        return False
    return any((node.op_type, new.since_version) in _MEANING_CHANGED
               or _new_attribute_used(node, new) or _new_input_used(node, new)
               for new in _changes(node.op_type, source, target))


_INLINE_ROUNDS = 4


def _typed(proto):
    """A copy of `proto` whose values carry types where inference finds them, and
    whose initializers have value_info too: the inliner types a context-dependent
    function's inputs (RotaryEmbedding's, Attention's) from value_info alone."""
    onnx = _onnx()
    typed = onnx.ModelProto()
    typed.CopyFrom(proto)
    if typed.ByteSize() < 1 << 30:
        try:
            typed = onnx.shape_inference.infer_shapes(typed)
        except Exception:  # noqa: BLE001 - inference only adds types here
            pass
    graphs = [typed.graph] + [g for n in all_proto_nodes(typed.graph)
                              for g in proto_subgraphs(n)]
    for graph in graphs:
        typed_names = {vi.name for vi in list(graph.input) + list(graph.value_info)}
        for init in graph.initializer:
            if init.name not in typed_names:
                graph.value_info.append(onnx.helper.make_tensor_value_info(
                    init.name, init.data_type, list(init.dims)))
    return typed


def _without_added_types(proto, original):
    """`proto` with only the value_info names `original` declared (in any graph): the
    types `_typed` added were for the inliner, and are inferred again later."""
    graphs = [original.graph] + [g for n in all_proto_nodes(original.graph)
                                 for g in proto_subgraphs(n)]
    declared = {vi.name for g in graphs for vi in g.value_info}
    for graph in [proto.graph] + [g for n in all_proto_nodes(proto.graph)
                                  for g in proto_subgraphs(n)]:
        keep = [vi for vi in graph.value_info if vi.name in declared]
        del graph.value_info[:]
        graph.value_info.extend(keep)
    return proto


def _spell_default_attributes(node, schema) -> None:
    """Give `node` every attribute its schema has a default for that it leaves out: the
    inliner drops a body attribute that refers to an attribute the node does not set
    (the window ops' Cast then lacks its `to`) instead of taking the default."""
    have = {a.name for a in node.attribute}
    for name, attr in schema.attributes.items():
        default = attr.default_value
        if name not in have and default is not None and default.name:
            copy = node.attribute.add()
            copy.CopyFrom(default)
            copy.name = name


def _run_converter(proto, source, target, inline_failure=None):
    """onnx's version converter, its failures as ConversionError naming the nodes
    (and, for an op the inliner could not expand, its reason)."""
    from onnx import version_converter

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return version_converter.convert_version(proto, int(target))
    except Exception as e:  # noqa: BLE001 - the converter raises RuntimeError and more
        text = str(e).strip()
        found = re.search(r"Version \$?(\d+) for (\w+)", text) \
            or re.search(r"No Previous Version of ()(\w+)", text)
        if found:
            op = found.group(2)
            since = onnx_schema(op, source, "")
            found_nodes = [(i, n) for i, n in enumerate(all_proto_nodes(proto.graph))
                           if n.op_type == op and n.domain in ("", "ai.onnx")]
            nodes = [n.name or f"#{i}" for i, n in found_nodes]
            shown = ", ".join(repr(n) for n in nodes[:5]) + (" ..." if len(nodes) > 5 else "")
            why = _why_not(op, found.group(1), since, target,
                           _changes_used([n for _, n in found_nodes], source, target))
            if inline_failure and since is not None and (
                    since.has_function or since.has_context_dependent_function):
                why += f" (onnx's inliner could not expand its function: {inline_failure})"
            raise ConversionError(
                f"cannot write {op} (node{'s' if len(nodes) != 1 else ''} {shown}) at "
                f"opset {target}: {why}; export at a later opset") from e
        first = text.splitlines()[0] if text else type(e).__name__
        # "/project/onnx/.../adapter.h:32: adapt: Assertion `...` failed: why" -> why
        first = first.split("` failed: ", 1)[-1]
        raise ConversionError(f"cannot convert from opset {source} to {target} (onnx's "
                              f"version converter): {first}") from e


def _changes_used(nodes, source, target) -> list:
    """The opsets (latest first) in (target, source] at which the nodes' op changed in a
    way one of `nodes` uses (`_keeps_meaning` false for it)."""
    if not nodes:
        return []
    return [new.since_version for new in _changes(nodes[0].op_type, source, target)
            if any(not _keeps_meaning(n, new) for n in nodes)]


def _why_not(op, version, since, target, used=()) -> str:
    """Why an op cannot simply be relabelled: it is newer than the target, or changed.

    `version` is the opset the converter had no adapter down to (its message names
    the adapter's target), so the op's version there is the one in force one opset
    later. That change may be one the nodes do not use (Slice-13's types, where a
    Slice at opset 9 uses Slice-10's inputs): then the latest change in `used` (the
    opsets whose change the nodes use) is named instead."""
    first = since
    while first is not None and onnx_schema(op, first.since_version - 1, "") is not None:
        first = onnx_schema(op, first.since_version - 1, "")
    if first is not None and first.since_version > target:
        return (f"the op came in at opset {first.since_version}, and neither onnx's "
                "version converter nor onegraph can rewrite it")
    changed = onnx_schema(op, int(version) + 1, "") if version else None
    at = changed.since_version if changed is not None else "?"
    if used and at not in used:
        at = used[0]
    if target < _OLDEST_HELD_TARGET:
        return (f"it changed at opset {at} and onnx's version converter has no adapter "
                f"down from there (onegraph keeps unchanged nodes as they are only for "
                f"targets from opset {_OLDEST_HELD_TARGET})")
    return (f"it changed at opset {at} in a way this node uses, and neither onnx's "
            "version converter nor onegraph can rewrite it")


# --------------------------------------------------------------------------------------
# Negative axes below opset 11
# --------------------------------------------------------------------------------------


def _axes_from_the_front(proto, target, source_types=None) -> None:
    """Rewrite in place every negative axis of `proto` (written at an opset below 11,
    subgraphs too) counted from the front, from the ranks in `source_types` (the model
    before the downgrade) or else the ones ONNX's shape inference gives at the target.
    The source's come first: inference at the target reads the negative axes it is
    about to lose as they were not meant (Unsqueeze-1's -1 keeps the input's rank), and
    inside If/Loop bodies, whose values the export declares without shapes, nothing
    else names their ranks.

    Raises:
        ConversionError: a node with a negative axis whose rank is unknown, or a Scan
            whose axes attributes hold one (naming the node), as opsets before 11 have
            no negative axes (Slice's constant axes input is counted from the front by
            onnx_rewrites' `_slice_before_11`).
    """
    onnx = _onnx()
    types = known_types(proto)
    types.update((k, v) for k, v in (source_types or {}).items() if v[1] is not None)
    for node in all_proto_nodes(proto.graph):
        if node.domain not in ("", "ai.onnx"):
            continue
        name = _AXIS_ATTRIBUTES.get(node.op_type)
        attr = next((a for a in node.attribute if a.name == name), None) if name else None
        if attr is not None:
            values = list(attr.ints) if attr.type == onnx.AttributeProto.INTS else [attr.i]
            if any(v < 0 for v in values) and not (node.op_type == "OneHot"
                                                   and values == [-1]):
                rank = _axes_rank(node, values, types, target)
                fixed = [v + rank if v < 0 else v for v in values]
                if attr.type == onnx.AttributeProto.INTS:
                    del attr.ints[:]
                    attr.ints.extend(fixed)
                else:
                    attr.i = fixed[0]
        for other in _OTHER_AXES.get(node.op_type, ()):
            if any(v < 0 for a in node.attribute if a.name == other for v in a.ints):
                raise ConversionError(_negative_axes_refusal(node, other, target))


def _axes_rank(node, values, types, target) -> int:
    """The rank a negative axis of `node` counts from (see `_AXIS_ATTRIBUTES`).

    Raises:
        ConversionError: that rank is unknown.
    """
    ranks = [types.get(x, (None, None))[1] for x in node.input if x]
    known = ranks[0] if node.op_type != "Concat" else next(
        (r for r in ranks if r is not None), None)
    if known is not None:
        if node.op_type == "Unsqueeze":
            return known + len(values)
        if node.op_type in ("Flatten", "OneHot"):
            return known + (node.op_type == "OneHot")
        return known
    raise ConversionError(
        f"cannot write {node.op_type} node {node.name or node.output[0]!r} with negative "
        f"axes {values} at an opset before {_NEGATIVE_AXES_OPSET}, which counts axes "
        f"from the front only, as its input's rank is unknown (so not at opset {target}); "
        f"give the input a shape or export at opset {_NEGATIVE_AXES_OPSET} or later")


def _negative_axes_refusal(node, what, target) -> str:
    return (f"cannot write {node.op_type} node {node.name or node.output[0]!r} at an opset "
            f"before {_NEGATIVE_AXES_OPSET}: its {what} are negative, which only opset "
            f"{_NEGATIVE_AXES_OPSET} brought (so not at opset {target}); export at opset "
            f"{_NEGATIVE_AXES_OPSET} or later")


def _all_graphs(graph):
    """`graph` and its subgraphs, nested ones too."""
    yield graph
    for node in graph.node:
        for sub in proto_subgraphs(node):
            yield from _all_graphs(sub)


# --------------------------------------------------------------------------------------
# Holding nodes whose meaning is the same at the target opset
# --------------------------------------------------------------------------------------


def _hold_unchanged(graph, source, target, types, sequences, outer_constants=None) -> int:
    """Move into the held domain every default-domain node (subgraphs too) whose op
    changed in (target, source] only in ways it does not use; returns how many.
    `sequences`: the names of values of a sequence type."""
    count = 0
    constants = dict(outer_constants or {})
    constants.update(graph_constants(graph))
    for node in graph.node:
        for sub in proto_subgraphs(node):
            count += _hold_unchanged(sub, source, target, types, sequences, constants)
        if node.domain not in ("", "ai.onnx"):
            continue
        _settle_allowzero(node, constants)
        _settle_optional_of_tensor(node, source, target, types, sequences)
        changes = _changes(node.op_type, source, target)
        _refuse_axis_input_at_run_time(node, changes, target, constants)
        for new in changes:
            _refuse_new_attribute_values(node, new, target, types)
        # What is left of the attributes the older schemas lack is at its default (the
        # rest was refused just now): drop them, held or not; onnx's adapters copy
        # them through (ReduceMean's noop_with_empty_axes=0 below 18 failed its checker)
        for new in changes:
            _drop_default_attributes(node, new)
        if changes and all(_keeps_meaning(node, new) for new in changes):
            node.domain = HELD_DOMAIN
            count += 1
            # the converter does not enter a held node: its subgraphs must need nothing
            for sub in proto_subgraphs(node):
                _refuse_unreached(sub, node, source, target)
    return count


def _refuse_unreached(graph, holder, source, target) -> None:
    """Refuse a default-domain node of `graph` (a subgraph of the held node `holder`;
    nested subgraphs too) that is neither held nor rewritten but changed since
    `target`: onnx's version converter does not enter a held node, so such a node would
    be written as it is, an op newer than the target or one in its newer form (a
    GroupNormalization-21 written as an 18 with its scale per channel).

    Raises:
        ConversionError: names the node, its op, the opset it came in or changed at,
            and the node holding it.
    """
    for node in graph.node:
        for sub in proto_subgraphs(node):
            _refuse_unreached(sub, holder, source, target)
        if node.domain not in ("", "ai.onnx"):
            continue
        changes = _changes(node.op_type, source, target)
        if not changes:
            continue
        if onnx_schema(node.op_type, target, "") is None:
            why = f"the op came in at opset {changes[-1].since_version}"
        else:
            bad = next((new for new in changes if not _keeps_meaning(node, new)), changes[0])
            why = f"it changed at opset {bad.since_version} in a way this node uses"
        raise ConversionError(
            f"cannot write {node.op_type} (node {_label(node)!r}) at opset {target}: {why}, "
            "and neither onnx's version converter nor onegraph can rewrite it inside "
            f"{holder.op_type} node {_label(holder)!r}; export at a later opset")


def _label(node) -> str:
    """A node's name, else its first output's (nodes of a subgraph may be unnamed)."""
    return node.name or next((o for o in node.output if o), "?")


def _settle_allowzero(node, constants) -> None:
    """Reshape's allowzero=1 (opset 14) means what the default 0 means when the shape
    holds no 0 (the dynamo exporter writes it on every view): say so, for the older
    schema; a shape computed at run time keeps it, and the downgrade refuses it."""
    if node.op_type != "Reshape" or len(node.input) < 2:
        return
    shape = constants.get(node.input[1])
    if shape is None or (np.asarray(shape) == 0).any():
        return
    for a in node.attribute:
        if a.name == "allowzero":
            a.i = 0


# OptionalHasElement and OptionalGetElement take plain tensors (and OptionalHasElement no
# input at all) from here on.
_OPTIONAL_OF_TENSOR_OPSET = 18


def _settle_optional_of_tensor(node, source, target, types, sequences) -> None:
    """Rewrite (in place) what the optional ops do with a plain tensor or no input from
    opset 18, for an older target: OptionalHasElement is then a constant (false
    without an input, true for a tensor), OptionalGetElement of a tensor or of a
    sequence (a name in `sequences`) an Identity.
    Opsets 15-17 take optionals only, and before 15 the ops do not exist; these forms
    mean the same at any opset. A value not known to be a tensor is left alone."""
    if not source >= _OPTIONAL_OF_TENSOR_OPSET > target \
            or node.op_type not in ("OptionalHasElement", "OptionalGetElement"):
        return
    given = node.input[0] if node.input else ""
    is_tensor = bool(given) and bool(types.get(given, (0, None))[0])
    if node.op_type == "OptionalGetElement":
        # (Identity takes sequences from opset 14; below, the type check names it)
        if is_tensor or given in sequences:
            node.op_type = "Identity"
        return
    if given and not is_tensor:
        return
    from onnx import helper, numpy_helper

    del node.input[:]
    del node.attribute[:]
    node.op_type = "Constant"
    node.attribute.append(helper.make_attribute(
        "value", numpy_helper.from_array(np.array(is_tensor), "")))


def _release(graph) -> None:
    """Put held nodes back in the default domain."""
    for node in graph.node:
        if node.domain == HELD_DOMAIN:
            node.domain = ""
        for sub in proto_subgraphs(node):
            _release(sub)


def _changes(op_type: str, source: int, target: int) -> list:
    """The op's schemas that came in after `target`, up to the one at `source`."""
    out = []
    version = source
    while version > target:
        schema = onnx_schema(op_type, version, "")
        if schema is None or schema.since_version <= target:
            break
        out.append(schema)
        version = schema.since_version - 1
    return out


def _keeps_meaning(node, new) -> bool:
    """Whether `node`, valid under schema `new`, means the same under the schema just
    before it (False when there is none: the op is newer)."""
    if (node.op_type, new.since_version) in _MEANING_CHANGED:
        return False
    old = onnx_schema(node.op_type, new.since_version - 1, "")
    if old is None:
        return False
    if (node.op_type, new.since_version) == _BATCHNORM_RENAMED:
        # BatchNormalization-14 renamed mean and var (now inputs only in inference):
        # an inference node (training_mode 0, Y alone) means what BatchNormalization-9
        # with Y alone means
        return not int(node_attr(node, "training_mode", 0)) and not any(node.output[1:])
    if not (_same_formals(node.input, new.inputs, old.inputs)
            and _same_formals(node.output, new.outputs, old.outputs)):
        return False
    given = {a.name: a for a in node.attribute}
    new_attrs, old_attrs = new.attributes, old.attributes
    for name, attr in given.items():
        if name in old_attrs:
            if old_attrs[name].type != attr.type:
                return False
        elif name not in new_attrs or not _is_default(attr, new_attrs[name]):
            return False
    for name, spec in old_attrs.items():
        if name in given:
            continue
        if name not in new_attrs:
            if _ATTRIBUTE_BECAME_INPUT.get((node.op_type, new.since_version)) == name \
                    and not (len(node.input) > 1 and node.input[1]):
                continue  # given neither way (see _ATTRIBUTE_BECAME_INPUT)
            return False  # moved elsewhere (an input): the converter's business
        if not _same_default(spec, new_attrs[name]):
            return False
    return True


def _floor_mod_by_fmod(graph, target, types) -> int:
    """Rewrite (in place, subgraphs too) each Mod with fmod=0 (floor modulo) of float16,
    float or double, which opset 28 brought, in ops of opset `target`: fmod's remainder
    r, moved by the divisor where r is not zero and its sign differs from the divisor's,
    with the divisor's sign, a zero too (numpy's mod, and ONNX's reference). Returns
    how many; other types are left for `_refuse_new_attribute_values`."""
    count = 0
    new_nodes = []
    for node in graph.node:
        for sub in proto_subgraphs(node):
            count += _floor_mod_by_fmod(sub, target, types)
        elem_type = types.get(node.input[0], (0, None))[0] if node.input else 0
        if node.op_type != "Mod" or node.domain not in ("", "ai.onnx") \
                or node_attr(node, "fmod", 0) or elem_type not in FLOAT_TYPES \
                or len(node.input) != 2:
            new_nodes.append(node)
            continue
        b = NodeBuilder(node, target, elem_type)
        x, y = node.input
        r = b.op("Mod", [x, y], fmod=1)
        zero = b.const(0.0)
        nonzero = b.op("Not", [b.op("Equal", [r, zero])])
        signs_differ = b.op("Xor", [b.op("Less", [r, zero]), b.op("Less", [y, zero])])
        moved = b.op("Where", [b.op("And", [nonzero, signs_differ]), b.op("Add", [r, y]), r])
        # the result has the divisor's sign, a zero too: |moved| * sign(y) (a Where
        # choosing a -0 gives +0 in onnxruntime)
        b.op("Mul", [b.op("Abs", [moved]), b.op("Sign", [y])], output=node.output[0])
        new_nodes.extend(b.nodes)
        count += 1
    if count:
        del graph.node[:]
        graph.node.extend(new_nodes)
    return count


# Resize's axes attribute came in here: scales, sizes and roi over those axes only.
_RESIZE_AXES_OPSET = 18


def _spread_resize_axes(graph, target, types) -> None:
    """Rewrite (in place, subgraphs too) each Resize with an `axes` attribute (opset 18)
    whose input rank is known into Resize-13's form: its scales, sizes or roi, given for
    those axes, scattered at run time over every axis (scale 1, the input's own size,
    the whole extent 0..1 elsewhere). The new nodes stay in the default domain for
    `_hold_unchanged`, which drops the other attributes at their defaults and refuses
    the rest (keep_aspect_ratio_policy, antialias). A Resize whose rank or roi type is
    unknown keeps its axes, and is refused by them."""
    from onnx import helper, numpy_helper

    new_nodes = []
    for node in graph.node:
        for sub in proto_subgraphs(node):
            _spread_resize_axes(sub, target, types)
        axes = node_attr(node, "axes", None)
        rank = types.get(node.input[0], (0, None))[1] if node.input else None
        inputs = list(node.input) + [""] * (4 - len(node.input))
        roi_type = types.get(inputs[1], (0, None))[0] if inputs[1] else 0
        if node.op_type != "Resize" or node.domain not in ("", "ai.onnx") or axes is None \
                or rank is None or (inputs[1] and roi_type not in FLOAT_TYPES):
            new_nodes.append(node)
            continue
        axes = [int(a) + rank if int(a) < 0 else int(a) for a in axes]
        if any(not 0 <= a < rank for a in axes) or len(set(axes)) != len(axes):
            new_nodes.append(node)   # the import refused these; never guess
            continue
        base = node.name or node.output[0]

        def const(tag, value, base=base):
            name = f"{base}/{tag}"
            new_nodes.append(helper.make_node("Constant", [], [name], name=name,
                                              value=numpy_helper.from_array(value)))
            return name

        def scatter(tag, everywhere, where, given, base=base):
            name = f"{base}/{tag}"
            new_nodes.append(helper.make_node("ScatterElements", [everywhere, where, given],
                                              [name], name=name, axis=0))
            return name

        where = const("axes", np.array(axes, np.int64))
        if inputs[1]:
            roi_dtype = FLOAT_TYPES[roi_type]
            extent = np.array([0] * rank + [1] * rank, roi_dtype)
            both_ends = const("roi_axes", np.array(axes + [a + rank for a in axes], np.int64))
            inputs[1] = scatter("roi", const("whole_roi", extent), both_ends, inputs[1])
        if inputs[2]:
            inputs[2] = scatter("scales", const("unit_scales", np.ones(rank, np.float32)),
                                where, inputs[2])
        if inputs[3]:
            shape = f"{base}/input_shape"
            new_nodes.append(helper.make_node("Shape", [node.input[0]], [shape], name=shape))
            inputs[3] = scatter("sizes", shape, where, inputs[3])
        while inputs and not inputs[-1]:
            inputs.pop()
        del node.input[:]
        node.input.extend(inputs)
        keep = [a for a in node.attribute if a.name != "axes"]
        del node.attribute[:]
        node.attribute.extend(keep)
        new_nodes.append(node)
    del graph.node[:]
    graph.node.extend(new_nodes)


def _refuse_new_attribute_values(node, new, target, types) -> None:
    """Raise ConversionError when `node` uses an attribute value that came in with
    schema `new` (onnx's converter would pass it through unchecked)."""
    what = None
    rule = _NEW_ATTRIBUTE_VALUES.get((node.op_type, new.since_version))
    if rule is not None:
        name, values = rule
        for a in node.attribute:
            if a.name == name and a.s in values:
                what = f"its {name} {a.s.decode()!r}"
    elif (node.op_type, new.since_version) == _FLOAT_FLOOR_MOD and node.input \
            and types.get(node.input[0], (0, None))[0] in _FLOAT_ELEM_TYPES | {0} \
            and not node_attr(node, "fmod", 0):
        what = "Mod with fmod=0 (floor modulo) on floats"
    if what is None:
        what = _new_attribute_used(node, new) or _new_input_used(node, new)
    if what:
        raise ConversionError(
            f"cannot write {node.op_type} node {_label(node)!r} at opset {target}: {what} "
            f"came in at opset {new.since_version}; export at opset "
            f"{new.since_version} or later")


def _new_attribute_used(node, new) -> str | None:
    """"its attribute 'NAME'" when `node` sets, to other than its default, an attribute
    that schema `new` added (AveragePool's dilations at 19): the schema before has no
    such attribute, and onnx's converter would copy it into a model its checker then
    refuses. None when the node uses no such attribute."""
    old = onnx_schema(node.op_type, new.since_version - 1, "")
    if old is None:
        return None
    for a in node.attribute:
        spec = new.attributes.get(a.name)
        if spec is not None and a.name not in old.attributes and not _is_default(a, spec):
            return f"its attribute {a.name!r}"
    return None


def _new_input_used(node, new) -> str | None:
    """"its input K ('NAME')" when `node` feeds an input that schema `new` added and
    the schema before has no slot for, nor an attribute of that name the converter moves
    it to (Attention's nonpad_kv_seqlen at 24; not the reductions' axes at 18, nor DFT's
    axis at 20, which were attributes before). None when it feeds no such input."""
    old = onnx_schema(node.op_type, new.since_version - 1, "")
    if old is None or (old.inputs and old.inputs[-1].option == _variadic()):
        return None
    for k in range(len(old.inputs), min(len(node.input), len(new.inputs))):
        if node.input[k] and new.inputs[k].name not in old.attributes:
            return f"its input {k} ({node.input[k]!r})"
    return None


# Inputs that were attributes before the op version named (onnx's converter moves a
# constant one back): (op, version) -> (input index, attribute).
_INPUT_WAS_ATTRIBUTE = {("DFT", 20): (2, "axis")}


def _refuse_axis_input_at_run_time(node, changes, target, constants) -> None:
    """Raise ConversionError when `node` feeds, computed at run time, an input that the
    op took only as an attribute before a version in `changes` (DFT's axis before 20):
    onnx's converter says only 'Axis input must be a constant', naming no node."""
    for new in changes:
        moved = _INPUT_WAS_ATTRIBUTE.get((node.op_type, new.since_version))
        if moved is None:
            continue
        k, attribute = moved
        if len(node.input) > k and node.input[k] and node.input[k] not in constants:
            raise ConversionError(
                f"cannot write {node.op_type} node {_label(node)!r} at opset {target} (it "
                f"changed at opset {new.since_version} in a way the node uses): its "
                f"{attribute} is computed at run time, and before opset "
                f"{new.since_version} {node.op_type} takes it only as an attribute; export "
                "at a later opset")


def _variadic():
    from onnx import defs

    return defs.OpSchema.FormalParameterOption.Variadic


def _single():
    from onnx import defs

    return defs.OpSchema.FormalParameterOption.Single


def _same_formals(names, new, old) -> bool:
    """Whether the inputs (or outputs) a node gives are the same formal parameters in
    both schemas: as many are allowed, with the same names, and none that the older
    schema requires is omitted."""
    used = len(names)
    while used and not names[used - 1]:
        used -= 1
    if used == 0:
        return True
    last_new = new[-1] if new else None
    variadic = bool(old) and old[-1].option == _variadic()
    if used > len(old) and not variadic:
        return False
    for i in range(min(used, len(old))):
        if i >= len(new) or new[i].name != old[i].name:
            return False
        if not names[i] and old[i].option == _single():
            return False  # omitted, optional only in the newer schema (Resize's roi at 13)
    if variadic and (last_new is None or last_new.name != old[-1].name):
        return False
    return True


def _attribute_value(attr):
    from onnx import helper

    return helper.get_attribute_value(attr)


# Per-axis attributes whose schema gives no default, where the spec's text says that
# absent means 1 along each axis (MaxPool's dilations from 10, AveragePool's from 19):
# all ones is what the op did before the attribute came in.
_ONES_WHEN_ABSENT = frozenset({"dilations"})


def _is_default(attr, spec) -> bool:
    """Whether a node's attribute equals the schema's default for it."""
    if not spec.default_value.name and spec.default_value.type == 0:
        from onnx import AttributeProto

        return attr.name in _ONES_WHEN_ABSENT and attr.type == AttributeProto.INTS \
            and len(attr.ints) > 0 and all(v == 1 for v in attr.ints)
    try:
        return _values_equal(_attribute_value(attr), _attribute_value(spec.default_value))
    except Exception:  # noqa: BLE001 - an attribute kind without a comparable value
        return False


def _same_default(old_spec, new_spec) -> bool:
    """Whether an attribute's default is the same in both schemas (absent in both
    counts as the same)."""
    a, b = old_spec.default_value, new_spec.default_value
    a_set, b_set = a.type != 0, b.type != 0
    if a_set != b_set:
        return False
    if not a_set:
        return old_spec.required == new_spec.required
    try:
        return _values_equal(_attribute_value(a), _attribute_value(b))
    except Exception:  # noqa: BLE001
        return False


def _values_equal(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return float(a) == float(b) or (math.isnan(float(a)) and math.isnan(float(b)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_values_equal(x, y) for x, y in zip(a, b))
    return a == b


def _drop_default_attributes(node, new) -> None:
    """Remove attributes the older schema lacks (they equal the new schema's default,
    which is what the older op does)."""
    old = onnx_schema(node.op_type, new.since_version - 1, "")
    if old is None:  # the op itself is newer: lowered or refused elsewhere
        return
    keep = [a for a in node.attribute if a.name in old.attributes]
    if len(keep) != len(node.attribute):
        del node.attribute[:]
        node.attribute.extend(keep)


def _with_inferred_types(proto):
    """`proto` with ONNX's shape inference's types filled in, or `proto` itself when
    it is too large for inference or inference fails (it only adds types here)."""
    if proto.ByteSize() >= 1 << 30:
        return proto
    try:
        return _onnx().shape_inference.infer_shapes(proto)
    except Exception:  # noqa: BLE001 - inference only fills in types here
        return proto


def _refuse_types_the_target_lacks(proto, source, target) -> None:
    """Refuse a default-domain node of `proto` (converted to `target`) with an input or
    output of an element type that its op's schema at `target` does not allow (types
    as declared or inferred, per scope). onnx's checker finds these too, but only when
    it runs (`to_onnx(check=False)` skips it).

    Raises:
        ConversionError: names the op, the node, the value, its type and the opset from
            which the op accepts it.
    """
    typed = _with_inferred_types(proto)
    found = element_type_misfit(typed.graph, {"": target})
    if found is None:
        return
    node, kind, k, name, elem = found
    later = next((s.since_version for v in range(target + 1, source + 1)
                  if (s := onnx_schema(node.op_type, v, "")) is not None
                  and schema_accepts(s, kind, k, elem)), None)
    since = f"from opset {later}" if later else f"at no opset up to {source}"
    raise ConversionError(
        f"cannot write {node.op_type} (node {_label(node)!r}) at opset {target}: its "
        f"{kind} {k} ({name!r}) is {elem[7:-1]}, which {node.op_type} accepts {since}; "
        "export at a later opset")


def _refuse_container_types_the_target_lacks(proto, source, target) -> None:
    """`_refuse_types_the_target_lacks` for values of sequence and optional types, which
    ops took later than their tensors (Identity, If and Loop take optionals from opset
    16, Identity sequences from 14): refuse a default-domain node of `proto` (converted
    to `target`; subgraphs too) with such a value its op's schema at `target` does not
    allow (types as declared or inferred, per scope).

    Raises:
        ConversionError: names the op, the node, the value, its type and the opset from
            which the op accepts it.
    """
    typed = _with_inferred_types(proto)

    def walk(graph, outer):
        scope = dict(outer)
        for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
            scope[vi.name] = vi.type
        for node in graph.node:
            for sub in proto_subgraphs(node):
                walk(sub, scope)
            if node.domain not in ("", "ai.onnx"):
                continue
            schema = onnx_schema(node.op_type, target, "")
            if schema is None:
                continue
            for kind, names in (("input", node.input), ("output", node.output)):
                for k, name in enumerate(names):
                    written = _type_text(scope[name]) if name in scope else None
                    if written is None or written.startswith("tensor("):
                        continue
                    allowed = _allowed_type_texts(schema, kind, k)
                    if allowed is None or written in allowed:
                        continue
                    later = next((v for v in range(target + 1, source + 1)
                                  if (s := onnx_schema(node.op_type, v, "")) is not None
                                  and written in (_allowed_type_texts(s, kind, k) or ())),
                                 None)
                    since = f"from opset {later}" if later else f"at no opset up to {source}"
                    then = f"with opset {later} or later" if later else "at a later opset"
                    if node.op_type == "Identity" and written.startswith("seq("):
                        then += " (og.map_fn and og.scan carry their rows as one sequence)"
                    raise ConversionError(
                        f"cannot write {node.op_type} (node {_label(node)!r}) at opset "
                        f"{target}: its {kind} {k} ({name!r}) is {written}, which "
                        f"{node.op_type} accepts {since}; export {then}")

    walk(typed.graph, {})


def _type_text(type_proto) -> str | None:
    """ONNX's type string of a TypeProto ("optional(seq(tensor(float)))"), or None when
    some part is unknown or not a tensor, sequence or optional."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        elem = type_proto.tensor_type.elem_type
        if not elem:
            return None
        name = _onnx().TensorProto.DataType.Name(elem).lower()
        return f"tensor({name})"
    if which in ("sequence_type", "optional_type"):
        inner = _type_text(getattr(type_proto, which).elem_type)
        return None if inner is None else \
            f"{'seq' if which == 'sequence_type' else 'optional'}({inner})"
    return None


def _allowed_type_texts(schema, kind, k) -> set | None:
    """The type strings `schema` allows for its input/output (`kind`) k, or None when it
    has no such slot."""
    formals = schema.inputs if kind == "input" else schema.outputs
    if k < len(formals):
        formal = formals[k]
    elif formals and formals[-1].option == _variadic():
        formal = formals[-1]
    else:
        return None
    return next((set(c.allowed_type_strs) for c in schema.type_constraints
                 if c.type_param_str == formal.type_str), {formal.type_str})


def _sequence_values(proto) -> set:
    """The names of values of a sequence type in `proto` (every graph), as declared or
    inferred."""
    typed = proto
    if proto.ByteSize() < 1 << 30:
        try:
            typed = _onnx().shape_inference.infer_shapes(proto)
        except Exception:  # noqa: BLE001 - inference only adds names here
            pass
    return {vi.name for g in [typed.graph] + [s for n in all_proto_nodes(typed.graph)
                                              for s in proto_subgraphs(n)]
            for vi in list(g.input) + list(g.output) + list(g.value_info)
            if vi.type.WhichOneof("value") == "sequence_type"}


def known_types(proto) -> dict:
    """{tensor name: (elem_type, rank or None)} from the model's own declarations and
    ONNX's shape inference (every graph, subgraphs included)."""
    onnx = _onnx()
    found = declared_types(proto.graph)
    if proto.ByteSize() < 1 << 30:
        try:
            inferred = declared_types(onnx.shape_inference.infer_shapes(proto).graph)
        except Exception:  # noqa: BLE001 - inference only fills gaps here
            inferred = {}
        for name, (elem, rank) in inferred.items():
            if name not in found or found[name][1] is None:
                found[name] = (elem, rank)
    return found



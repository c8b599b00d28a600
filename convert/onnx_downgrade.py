"""Bringing an exported ModelProto to another default-domain opset: `convert_opset`.

Upgrades are onnx's version converter alone. Downgrades need more: the converter has
adapters for the changes that rewrite a node (Reduce* axes moving between attribute
and input, Split's sizes, ...), but none for most changes that only widened an op's
types or added an attribute or optional input whose default keeps the old meaning
(Add, Relu and Identity at 14, Pad's axes at 18, ...), so without help a model that
uses Add cannot go from opset 14 to 13. Nor can it write an op newer than the target.
A downgrade here therefore

1. rewrites the ops newer than the target that have a plain decomposition into older
   ops (Gelu, LayerNormalization, RMSNormalization, Mish, HardSwish, Trilu), written for the
   target opset, and expands the other ops newer than the target that ONNX defines as
   functions (Swish, RotaryEmbedding, Attention, ...) with onnx's inliner;
2. holds back from the converter every node whose op changed since the target only in
   ways the node does not use: it sets no attribute and feeds no input the older
   schema lacks, relies on no default that changed, and uses no attribute value the
   older opset does not know (`_keeps_meaning`);
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

# The domain held nodes sit in while the converter runs (it adapts only ONNX's own
# domain) and the version its opset import gets meanwhile.
_HELD_DOMAIN = "onegraph.held"

# Op versions whose meaning changed although the node may look the same under both
# schemas (GridSample's modes renamed, GroupNormalization's scale per channel rather
# than per group, RoiAlign's new coordinate_transformation_mode defaulting to a mode
# unlike the old behaviour): never held, left to the converter (which refuses them
# without an adapter).
_MEANING_CHANGED = {("GridSample", 20), ("GroupNormalization", 21), ("RoiAlign", 16)}

_BATCHNORM_RENAMED = ("BatchNormalization", 14)

# Mod's fmod=0 (floor modulo) on floats came in here; before, floats needed fmod=1.
_FLOAT_FLOOR_MOD = ("Mod", 28)
_FLOAT_ELEM_TYPES = {1, 10, 11, 16}  # float, float16, double, bfloat16 (0: unknown)

# Holding is for targets from here on: below it ops changed meaning in ways a node
# does not show (negative axes came in at 11, Softmax's axis at 13).
_OLDEST_HELD_TARGET = 13

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
    work, inline_failure = _inline_new_function_ops(work, source, target)
    types = known_types(work)
    if source >= _SPLIT_NUM_OUTPUTS_OPSET > target:
        _split_by_sizes(work, target)
    lowered = _lower_new_ops(work.graph, source, target, types)
    held = _hold_unchanged(work.graph, source, target, types) \
        if target >= _OLDEST_HELD_TARGET else 0
    if lowered or held:
        work.opset_import.add(domain=_HELD_DOMAIN, version=1)
    out = _run_converter(work, source, target, inline_failure)
    _release(out.graph)
    keep = [(o.domain, o.version) for o in out.opset_import if o.domain != _HELD_DOMAIN]
    del out.opset_import[:]
    for domain, version in keep:
        out.opset_import.add(domain=domain, version=version)
    _refuse_types_the_target_lacks(out, source, target)
    return out


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
            n = _attr(node, "num_outputs", None)
            if n is None or (len(node.input) > 1 and node.input[1]):
                continue
            shape = dims.get(node.input[0])
            axis = _attr(node, "axis", 0)
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


def _inline_new_function_ops(proto, source, target):
    """(proto, None) with every default-domain op that does not exist at `target` but
    that ONNX defines as a function of other ops (Swish, SwiGLU, RotaryEmbedding,
    Attention, CenterCropPad, AffineGrid, the window ops, CastLike, ...) expanded into
    its function body by onnx's inliner, subgraphs too; or (proto unchanged, the
    inliner's reason) when it cannot expand them (an omitted optional input of a
    context-dependent function, for one)."""
    from onnx import inliner

    # a body may hold ops newer than the target too (SwiGLU's Swish): expand again
    for _ in range(_INLINE_ROUNDS):
        ids = set()
        for node in all_proto_nodes(proto.graph):
            if node.domain not in ("", "ai.onnx") or onnx_schema(node.op_type, target, "") \
                    is not None:
                continue
            schema = onnx_schema(node.op_type, source, "")
            # the ops onegraph rewrites itself keep their rewrite
            if node.op_type not in _LOWERINGS and schema is not None and (
                    schema.has_function or schema.has_context_dependent_function):
                ids.add(("", node.op_type))
                _spell_default_attributes(node, schema)
        if not ids:
            break
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                proto = _without_added_types(inliner.inline_selected_functions(
                    _typed(proto), sorted(ids), inline_schema_functions=True), proto)
        except Exception as e:  # noqa: BLE001 - the inliner raises RuntimeError and more
            text = str(e).strip()
            first = text.splitlines()[0] if text else type(e).__name__
            first = first.split("` failed: ", 1)[-1]
            if first.rstrip() == "Type unknown for":  # the name it lacks a type for is ""
                first = "it needs the type of an omitted optional input"
            return proto, first
    return proto, None


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
            nodes = [n.name or f"#{i}" for i, n in enumerate(all_proto_nodes(proto.graph))
                     if n.op_type == op and n.domain in ("", "ai.onnx")]
            shown = ", ".join(repr(n) for n in nodes[:5]) + (" ..." if len(nodes) > 5 else "")
            why = _why_not(op, found.group(1), since, target)
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


def _why_not(op, version, since, target) -> str:
    """Why an op cannot simply be relabelled: it is newer than the target, or changed.

    `version` is the opset the converter had no adapter down to (its message names
    the adapter's target), so the op's version there is the one in force one opset
    later."""
    first = since
    while first is not None and onnx_schema(op, first.since_version - 1, "") is not None:
        first = onnx_schema(op, first.since_version - 1, "")
    if first is not None and first.since_version > target:
        return (f"the op came in at opset {first.since_version}, and neither onnx's "
                "version converter nor onegraph can rewrite it")
    changed = onnx_schema(op, int(version) + 1, "") if version else None
    at = changed.since_version if changed is not None else "?"
    if target < _OLDEST_HELD_TARGET:
        return (f"it changed at opset {at} and onnx's version converter has no adapter "
                f"down from there (onegraph keeps unchanged nodes as they are only for "
                f"targets from opset {_OLDEST_HELD_TARGET})")
    return (f"it changed at opset {at} in a way this node uses, and neither onnx's "
            "version converter nor onegraph can rewrite it")


# --------------------------------------------------------------------------------------
# Holding nodes whose meaning is the same at the target opset
# --------------------------------------------------------------------------------------


def _hold_unchanged(graph, source, target, types, outer_constants=None) -> int:
    """Move into the held domain every default-domain node (subgraphs too) whose op
    changed in (target, source] only in ways it does not use; returns how many."""
    count = 0
    constants = dict(outer_constants or {})
    constants.update(_graph_constants(graph))
    for node in graph.node:
        for sub in proto_subgraphs(node):
            count += _hold_unchanged(sub, source, target, types, constants)
        if node.domain not in ("", "ai.onnx"):
            continue
        _settle_allowzero(node, constants)
        changes = _changes(node.op_type, source, target)
        for new in changes:
            _refuse_new_attribute_values(node, new, target, types)
        # What is left of the attributes the older schemas lack is at its default (the
        # rest was refused just now): drop them, held or not; onnx's adapters copy
        # them through (ReduceMean's noop_with_empty_axes=0 below 18 failed its checker)
        for new in changes:
            _drop_default_attributes(node, new)
        if changes and all(_keeps_meaning(node, new) for new in changes):
            node.domain = _HELD_DOMAIN
            count += 1
    return count


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


def _release(graph) -> None:
    """Put held nodes back in the default domain."""
    for node in graph.node:
        if node.domain == _HELD_DOMAIN:
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
        return not int(_attr(node, "training_mode", 0)) and not any(node.output[1:])
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
            return False  # moved elsewhere (an input): the converter's business
        if not _same_default(spec, new_attrs[name]):
            return False
    return True


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
            and not _attr(node, "fmod", 0):
        what = "Mod with fmod=0 (floor modulo) on floats"
    if what is None:
        what = _new_attribute_used(node, new)
    if what:
        raise ConversionError(
            f"cannot write {node.op_type} node {node.name!r} at opset {target}: {what} "
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


def _variadic():
    from onnx import defs

    return defs.OpSchema.FormalParameterOption.Variadic


def _same_formals(names, new, old) -> bool:
    """Whether the inputs (or outputs) a node gives are the same formal parameters in
    both schemas: as many are allowed, with the same names."""
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
    if variadic and (last_new is None or last_new.name != old[-1].name):
        return False
    return True


def _attribute_value(attr):
    from onnx import helper

    return helper.get_attribute_value(attr)


def _is_default(attr, spec) -> bool:
    """Whether a node's attribute equals the schema's default for it."""
    if not spec.default_value.name and spec.default_value.type == 0:
        return False
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


# --------------------------------------------------------------------------------------
# Rewriting ops newer than the target into older ones
# --------------------------------------------------------------------------------------

_FLOAT_TYPES = {1: np.float32, 10: np.float16, 11: np.float64}


def _refuse_types_the_target_lacks(proto, source, target) -> None:
    """Refuse a default-domain node of `proto` (converted to `target`) with an input or
    output of an element type that its op's schema at `target` does not allow (types
    as declared or inferred, per scope). onnx's checker finds these too, but only when
    it runs (`to_onnx(check=False)` skips it).

    Raises:
        ConversionError: names the op, the node, the value, its type and the opset from
            which the op accepts it.
    """
    typed = proto
    if proto.ByteSize() < 1 << 30:
        try:
            typed = _onnx().shape_inference.infer_shapes(proto)
        except Exception:  # noqa: BLE001 - inference only fills in types here
            pass
    found = element_type_misfit(typed.graph, {"": target})
    if found is None:
        return
    node, kind, k, name, elem = found
    later = next((s.since_version for v in range(target + 1, source + 1)
                  if (s := onnx_schema(node.op_type, v, "")) is not None
                  and schema_accepts(s, kind, k, elem)), None)
    since = f"from opset {later}" if later else f"at no opset up to {source}"
    raise ConversionError(
        f"cannot write {node.op_type} (node {node.name or '?'!r}) at opset {target}: its "
        f"{kind} {k} ({name!r}) is {elem[7:-1]}, which {node.op_type} accepts {since}; "
        "export at a later opset")


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


class NodeBuilder:
    """Appends the nodes that replace one node, named after it, into a node list."""

    def __init__(self, node, target, elem_type, domain=_HELD_DOMAIN):
        self.base = node.name or (node.output[0] if node.output else "lowered")
        self.target = target
        self.elem_type = elem_type
        # the nodes' domain: held from the version converter, or ONNX's own
        self.domain = domain
        self.constants: dict = {}
        self.nodes = []
        self.count = 0

    def _name(self, tag):
        self.count += 1
        return f"{self.base}/{tag}_{self.count}"

    def op(self, op_type, inputs, output=None, **attrs):
        from onnx import helper

        out = output or self._name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out],
                                           name=self._name(op_type), domain=self.domain,
                                           **attrs))
        return out

    def const(self, value, elem_type=None):
        """A scalar Constant of this node's float type (or `elem_type`)."""
        from onnx import numpy_helper

        dtype = _FLOAT_TYPES[elem_type or self.elem_type]
        tensor = numpy_helper.from_array(np.asarray(value, dtype=dtype))
        return self.op("Constant", [], value=tensor)

    def ints(self, values):
        """A 1-D int64 Constant."""
        from onnx import numpy_helper

        return self.op("Constant", [], value=numpy_helper.from_array(
            np.asarray(values, np.int64)))

    def scalar(self, value):
        """An int64 scalar Constant."""
        from onnx import numpy_helper

        return self.op("Constant", [], value=numpy_helper.from_array(np.int64(value)))

    def constant_input(self, name):
        """The value of `name` if an initializer or Constant node of the graph being
        rewritten holds it (see `_lower_new_ops`), else None."""
        return self.constants.get(name)

    def reduce_mean(self, x, axes):
        if self.target >= 18:
            from onnx import numpy_helper

            axes_t = self.op("Constant", [], value=numpy_helper.from_array(
                np.asarray(axes, np.int64)))
            return self.op("ReduceMean", [x, axes_t], keepdims=1)
        return self.op("ReduceMean", [x], axes=list(axes), keepdims=1)


def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            value = _attribute_value(a)
            return value.decode() if isinstance(value, bytes) else value
    return default


def _lower_gelu(node, b: NodeBuilder):
    x, y = node.input[0], node.output[0]
    if _attr(node, "approximate", "none") == "tanh":
        cube = b.op("Mul", [b.op("Mul", [x, x]), x])
        inner = b.op("Add", [x, b.op("Mul", [cube, b.const(0.044715)])])
        t = b.op("Tanh", [b.op("Mul", [inner, b.const(math.sqrt(2.0 / math.pi))])])
    else:
        t = b.op("Erf", [b.op("Mul", [x, b.const(1.0 / math.sqrt(2.0))])])
    half_x = b.op("Mul", [x, b.const(0.5)])
    b.op("Mul", [half_x, b.op("Add", [t, b.const(1.0)])], output=y)


def _lower_mish(node, b: NodeBuilder):
    x = node.input[0]
    b.op("Mul", [x, b.op("Tanh", [b.op("Softplus", [x])])], output=node.output[0])


def _lower_hard_swish(node, b: NodeBuilder):
    x = node.input[0]
    gate = b.op("HardSigmoid", [x], alpha=1.0 / 6.0, beta=0.5)
    b.op("Mul", [x, gate], output=node.output[0])


def _normalized_axes(node, rank) -> list:
    """[axis, ..., rank - 1] of a normalization node's `axis` attribute (default -1)."""
    if rank is None:
        raise NotLowered("the rank of its input is unknown")
    axis = int(_attr(node, "axis", -1))
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise NotLowered(f"axis {axis} is out of range for rank {rank}")
    return list(range(axis, rank))


def _lower_layer_norm(node, b: NodeBuilder, rank):
    axes = _normalized_axes(node, rank)
    eps = float(_attr(node, "epsilon", 1e-5))
    stash = int(_attr(node, "stash_type", 1))
    if stash not in _FLOAT_TYPES:
        raise NotLowered(f"stash_type {stash} is not a float type")
    x = node.input[0]
    xs = x if stash == b.elem_type else b.op("Cast", [x], to=stash)
    mean = b.reduce_mean(xs, axes)
    d = b.op("Sub", [xs, mean])
    var = b.reduce_mean(b.op("Mul", [d, d]), axes)
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [var, b.const(eps, stash)])])])
    normed = b.op("Mul", [d, inv])
    if stash != b.elem_type:
        normed = b.op("Cast", [normed], to=b.elem_type)
    outputs = list(node.output) + [""] * (3 - len(node.output))
    has_bias = len(node.input) > 2 and node.input[2]
    scaled = b.op("Mul", [normed, node.input[1]],
                  output=None if has_bias else outputs[0] or None)
    if has_bias:
        b.op("Add", [scaled, node.input[2]], output=outputs[0] or None)
    if outputs[1]:
        b.op("Identity", [mean], output=outputs[1])
    if outputs[2]:
        b.op("Identity", [inv], output=outputs[2])


def lower_rms_norm(node, b: NodeBuilder, rank, scale_type, out_type, stat_type=None):
    """Append to `b` the ONNX-13 ops that compute an RMS normalization node (ONNX's
    RMSNormalization, or onnxruntime's SimplifiedLayerNormalization with its optional
    inv_std_var output): Y = X / sqrt(mean(X^2 over axis..-1) + epsilon) * scale, in
    float (double when X is double or stash_type is 11), Y cast to `out_type` and
    inv_std_var to `stat_type`.

    Raises:
        NotLowered: the rank of X is unknown, axis is out of range, stash_type or the
            scale's type is not a float type.
    """
    axes = _normalized_axes(node, rank)
    stash = int(_attr(node, "stash_type", 1))
    if stash not in (1, 11):
        raise NotLowered(f"stash_type {stash} is not float (1) or double (11)")
    if scale_type not in _FLOAT_TYPES:
        raise NotLowered(f"its scale's type is {type_name(scale_type)}, not float16, "
                         "float or double")
    work = 11 if 11 in (stash, b.elem_type) else 1
    x = node.input[0]
    xs = x if b.elem_type == work else b.op("Cast", [x], to=work)
    mean_square = b.reduce_mean(b.op("Mul", [xs, xs]), axes)
    eps = b.const(float(_attr(node, "epsilon", 1e-5)), work)
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [mean_square, eps])])])
    scale = node.input[1] if scale_type == work else b.op("Cast", [node.input[1]], to=work)
    outputs = list(node.output) + [""] * (2 - len(node.output))
    if outputs[0]:
        y = b.op("Mul", [b.op("Mul", [xs, inv]), scale],
                 output=outputs[0] if out_type == work else None)
        if out_type != work:
            b.op("Cast", [y], output=outputs[0], to=out_type)
    if outputs[1]:
        if stat_type in (None, work):
            b.op("Identity", [inv], output=outputs[1])
        else:
            b.op("Cast", [inv], output=outputs[1], to=stat_type)


def _shape_by_slice(node, b: NodeBuilder, rank, types):
    """Shape's start and end (opset 15) as a Slice of the whole shape, which clamps
    and counts negative positions from the end just as they do."""
    start = int(_attr(node, "start", 0))
    end = _attr(node, "end", None)
    shape = b.op("Shape", [node.input[0]])
    b.op("Slice", [shape, b.ints([start]), b.ints([_INT64_MAX if end is None else int(end)]),
                   b.ints([0])], output=node.output[0])


def _pad_on_every_axis(node, b: NodeBuilder, rank, types):
    """Pad's `axes` input (opset 18) spelled out: the pads of the axes scattered into
    zeros for all `rank` axes (begins, then ends), as Pad-13 takes them."""
    axes = b.constant_input(node.input[3])
    if axes is None:
        raise NotLowered("its axes are not a constant")
    if rank is None:
        raise NotLowered("the rank of its input is unknown")
    axes = [int(a) + rank if int(a) < 0 else int(a) for a in np.asarray(axes).reshape(-1)]
    if any(not 0 <= a < rank for a in axes) or len(set(axes)) != len(axes):
        raise NotLowered(f"its axes {axes} are not distinct axes of rank {rank}")
    zeros = b.ints([0] * (2 * rank))
    where = b.ints(axes + [a + rank for a in axes])
    pads = b.op("ScatterElements", [zeros, where, node.input[1]], axis=0)
    inputs = [node.input[0], pads] + ([node.input[2]] if node.input[2] else [])
    mode = _attr(node, "mode", "constant")
    if mode not in ("constant", "reflect", "edge"):
        raise NotLowered(f"its mode {mode!r} came in at opset 19")
    b.op("Pad", inputs, output=node.output[0], mode=mode)


def _reduce_with_axes_attribute(node, b: NodeBuilder, rank, types):
    """A reduction's axes input (opset 18; ReduceSum's came at 13) as the attribute
    the older op takes, when the axes are constant."""
    axes = b.constant_input(node.input[1])
    if axes is None:
        raise NotLowered(f"its axes are computed at run time, and before opset 18 "
                         f"{node.op_type} takes them only as an attribute")
    axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    keepdims = int(_attr(node, "keepdims", 1))
    if not axes and int(_attr(node, "noop_with_empty_axes", 0)):
        # no reduction, but the op's elementwise part still applies (as onnxruntime
        # and onegraph compute it: ReduceL2 gives sqrt(x * x), ReduceLogSumExp x)
        x, out = node.input[0], node.output[0]
        if node.op_type in ("ReduceL2", "ReduceSumSquare"):
            square = b.op("Mul", [x, x], output=out if node.op_type == "ReduceSumSquare"
                          else None)
            if node.op_type == "ReduceL2":
                b.op("Sqrt", [square], output=out)
        else:
            b.op({"ReduceL1": "Abs", "ReduceLogSum": "Log"}.get(node.op_type, "Identity"),
                 [x], output=out)
        return
    attrs = {"keepdims": keepdims}
    if axes:
        attrs["axes"] = axes
    b.op(node.op_type, [node.input[0]], output=node.output[0], **attrs)


def _split_sizes_at_run_time(node, b: NodeBuilder, rank, types):
    """Split's num_outputs (opset 18) on an axis whose length is known only at run time
    (`_split_by_sizes` took the known ones): the sizes, ceil(length / n) each and the
    rest last, computed from the input's shape as Split-13's `split` input."""
    n = int(_attr(node, "num_outputs", 0))
    if n < 1 or n != len(node.output):
        raise NotLowered(f"num_outputs {n} does not match its {len(node.output)} outputs")
    axis = int(_attr(node, "axis", 0))
    length = b.op("Gather", [b.op("Shape", [node.input[0]]), b.ints([axis])])
    part = b.op("Div", [b.op("Add", [length, b.ints([n - 1])]), b.ints([n])])
    last = b.op("Sub", [length, b.op("Mul", [part, b.ints([n - 1])])])
    sizes = b.op("Concat", [part] * (n - 1) + [last], axis=0)
    b.nodes.append(_onnx().helper.make_node(
        "Split", [node.input[0], sizes], list(node.output), name=b._name("Split"),
        domain=b.domain, axis=axis))


def _lower_trilu(node, b: NodeBuilder, rank, types):
    """Trilu (opset 14) as a Where over the last two axes: keep x[..., i, j] where
    j - i >= k (upper) or j - i <= k (lower), zero elsewhere (NaN too)."""
    from onnx import numpy_helper

    if rank is not None and rank < 2:
        raise NotLowered(f"its input has rank {rank}, and Trilu needs at least 2")
    elem_type = types.get(node.input[0], (0, None))[0]
    if not elem_type:
        raise NotLowered("its input's type is unknown")
    x = node.input[0]
    shape = b.op("Shape", [x])

    def positions(axis):
        length = b.op("Squeeze", [b.op("Gather", [shape, b.ints([axis])]), b.ints([0])])
        return b.op("Range", [b.scalar(0), length, b.scalar(1)])

    diff = b.op("Sub", [b.op("Unsqueeze", [positions(-1), b.ints([0])]),
                        b.op("Unsqueeze", [positions(-2), b.ints([1])])])
    k = node.input[1] if len(node.input) > 1 and node.input[1] else b.scalar(0)
    upper = int(_attr(node, "upper", 1))
    keep = b.op("GreaterOrEqual" if upper else "LessOrEqual", [diff, k])
    if elem_type == _onnx().TensorProto.BOOL:  # (onnxruntime has no bool Where before 16)
        b.op("And", [keep, x], output=node.output[0])
        return
    zero = b.op("Constant", [], value=numpy_helper.from_array(
        np.zeros((), _onnx().helper.tensor_dtype_to_np_dtype(elem_type))))
    b.op("Where", [keep, x, zero], output=node.output[0])


def _grid_sample_modes_of_16(node, b: NodeBuilder, rank, types):
    """GridSample-20's mode names (linear, cubic) and N-D inputs in GridSample-16's
    terms: bilinear and bicubic, 4-D only."""
    if rank != 4:
        raise NotLowered(f"before opset 20 it takes 4-D inputs only, and its input's rank "
                         f"is {'unknown' if rank is None else rank}")
    attrs = {a.name: _attribute_value(a) for a in node.attribute}
    mode = attrs.get("mode", b"linear")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    attrs["mode"] = {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)
    for name in ("padding_mode",):
        if isinstance(attrs.get(name), bytes):
            attrs[name] = attrs[name].decode()
    b.op("GridSample", list(node.input), output=node.output[0], **attrs)


_INT64_MAX = np.iinfo(np.int64).max


def _lower_rms_normalization(node, b: NodeBuilder, rank, types):
    scale_type = types.get(node.input[1], (0, None))[0] if len(node.input) > 1 else 0
    # Y in X's type, as onegraph's kernel and ONNX's reference compute it (the schema
    # says scale's type; onnxruntime runs only X and scale of one type)
    lower_rms_norm(node, b, rank, scale_type, b.elem_type)


def type_name(elem_type: int) -> str:
    """ONNX's name of an element type number ("float16"), or "unknown" for 0."""
    if not elem_type:
        return "unknown"
    names = _onnx().TensorProto.DataType
    return names.Name(elem_type).lower() if elem_type in names.values() else str(elem_type)


class NotLowered(Exception):
    """A node that the rewrite cannot handle (why in the message)."""


# op -> (the opset it came in at, its rewrite into older ops)
_LOWERINGS = {"Gelu": (20, _lower_gelu), "Mish": (18, _lower_mish),
              "HardSwish": (14, _lower_hard_swish),
              "LayerNormalization": (17, _lower_layer_norm),
              "RMSNormalization": (23, _lower_rms_normalization),
              "Trilu": (14, _lower_trilu)}

# lowerings that take any element type (the others need float16, float or double)
_ANY_TYPE_LOWERINGS = frozenset({"Trilu"})


def _graph_constants(graph) -> dict:
    """{name: array} of a graph's initializers and Constant nodes' tensor values."""
    from onnx import numpy_helper

    found = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
            for a in node.attribute:
                if a.name == "value" and a.HasField("t"):
                    found[node.output[0]] = numpy_helper.to_array(a.t)
                elif a.name == "value_ints":
                    found[node.output[0]] = np.asarray(list(a.ints), np.int64)
                elif a.name == "value_int":
                    found[node.output[0]] = np.asarray(a.i, np.int64)
    return found


def _uses_shape_bounds(node) -> bool:
    return any(a.name in ("start", "end") for a in node.attribute)


def _uses_pad_axes(node) -> bool:
    return len(node.input) > 3 and bool(node.input[3])


def _uses_num_outputs(node) -> bool:
    return any(a.name == "num_outputs" for a in node.attribute) and not (
        len(node.input) > 1 and node.input[1])


def _uses_axes_input(node) -> bool:
    return len(node.input) > 1 and bool(node.input[1])


# op -> (the opset it changed at, whether a node uses the change, the node's rewrite in
# the older op's terms): ops that exist at the target, but in a form the node cannot use
_ADAPTATIONS = {"Shape": (15, _uses_shape_bounds, _shape_by_slice),
                "Pad": (18, _uses_pad_axes, _pad_on_every_axis),
                "Split": (18, _uses_num_outputs, _split_sizes_at_run_time),
                "GridSample": (20, lambda node: True, _grid_sample_modes_of_16),
                **{op: (18, _uses_axes_input, _reduce_with_axes_attribute)
                   for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                              "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                              "ReduceSumSquare")}}


def _lower_new_ops(graph, source, target, types, outer_constants=None) -> int:
    """Replace (in place, subgraphs too) each node whose op is newer than `target` and
    has a rewrite by its older-op form, and each node using what its op gained since
    `target` where that has a rewrite (Shape's start and end, Pad's axes); returns how
    many were replaced.

    Raises:
        ConversionError: such a node's input type (or rank) is unknown or not float; a
            Pad's axes are not constant or its mode came in after the target.
    """
    count = lowered_here = 0
    new_nodes = []
    constants = dict(outer_constants or {})
    constants.update(_graph_constants(graph))
    for node in graph.node:
        for sub in proto_subgraphs(node):
            count += _lower_new_ops(sub, source, target, types, constants)
        adaptation = _ADAPTATIONS.get(node.op_type) \
            if node.domain in ("", "ai.onnx") else None
        if adaptation is not None and adaptation[0] > target and adaptation[1](node) \
                and onnx_schema(node.op_type, target, "") is not None:
            builder = NodeBuilder(node, target, 0)
            builder.constants = constants
            try:
                adaptation[2](node, builder, types.get(node.input[0], (0, None))[1], types)
            except NotLowered as e:
                raise ConversionError(
                    f"cannot write {node.op_type} node {node.name!r} at opset {target} (it "
                    f"changed at opset {adaptation[0]} in a way the node uses): {e}; export "
                    "at a later opset") from None
            new_nodes.extend(builder.nodes)
            lowered_here += 1
            continue
        entry = _LOWERINGS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if entry is None or entry[0] <= target or onnx_schema(node.op_type, source, "") is None:
            new_nodes.append(node)
            continue
        where = f"{node.op_type} node {node.name!r}"
        elem_type, rank = types.get(node.input[0], (0, None))
        if elem_type not in _FLOAT_TYPES and node.op_type not in _ANY_TYPE_LOWERINGS:
            raise ConversionError(
                f"cannot write {where} at opset {target} (the op came in at opset "
                f"{entry[0]}): its input's type is {type_name(elem_type)}, "
                "and the rewrite into older ops needs float16, float or double")
        builder = NodeBuilder(node, target, elem_type)
        try:
            if node.op_type == "LayerNormalization":
                entry[1](node, builder, rank)
            elif node.op_type in ("RMSNormalization", "Trilu"):
                entry[1](node, builder, rank, types)
            else:
                entry[1](node, builder)
        except NotLowered as e:
            raise ConversionError(f"cannot write {where} at opset {target} (the op came "
                                  f"in at opset {entry[0]}): {e}") from None
        new_nodes.extend(builder.nodes)
        lowered_here += 1
    if lowered_here:
        replace_nodes(graph, new_nodes)
    return count + lowered_here


def replace_nodes(graph, nodes) -> None:
    """Make `nodes` (some of them the graph's own) the graph's node list, in order."""
    from onnx import NodeProto

    # copies: the kept messages belong to the field that is about to be cleared
    copies = []
    for node in nodes:
        copy = NodeProto()
        copy.CopyFrom(node)
        copies.append(copy)
    del graph.node[:]
    graph.node.extend(copies)

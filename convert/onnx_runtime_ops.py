"""Writing onnxruntime's ops that sit in ONNX's own domain as ONNX ops, for `to_onnx`.

onnxruntime registers a few contrib ops in the default domain rather than in
com.microsoft; its transformers optimizer writes one of them, SimplifiedLayerNormalization
(RMS norm), into every optimized Llama, T5 or Gemma. ONNX does not define it, so a
model holding it fails ONNX's checker. `spell_runtime_ops` writes each such node as
ONNX's RMSNormalization (opset 23 on, when the node's X and scale have one type and
its inv_std_var output is not used: onnxruntime runs RMSNormalization only then) or
else as the standard ops RMSNormalization's definition spells out.
"""

from __future__ import annotations

from ..errors import ConversionError
from .onnx_downgrade import known_types
from .onnx_rewrites import NodeBuilder, NotLowered, lower_rms_norm, replace_nodes, type_name
from .onnx_legacy import proto_subgraphs

# onnxruntime's contrib ops that it registers in ONNX's domain ("", not com.microsoft)
RUNTIME_OPS_IN_ONNX_DOMAIN = frozenset({"SimplifiedLayerNormalization"})

_RMS_NORMALIZATION_OPSET = 23
_FLOAT, _DOUBLE = 1, 11


def holds_runtime_ops(proto) -> bool:
    """Whether any graph of `proto` (subgraphs too) holds a default-domain op of
    RUNTIME_OPS_IN_ONNX_DOMAIN."""
    def walk(graph):
        for node in graph.node:
            if node.domain in ("", "ai.onnx") and node.op_type in RUNTIME_OPS_IN_ONNX_DOMAIN:
                return True
            if any(walk(sub) for sub in proto_subgraphs(node)):
                return True
        return False
    return walk(proto.graph)


def spell_runtime_ops(proto, opset: int) -> int:
    """Rewrite (in place, subgraphs too) each default-domain SimplifiedLayerNormalization
    of `proto`, whose default-domain opset is `opset`, in ONNX's ops; returns how many
    nodes were rewritten.

    Raises:
        ConversionError: a node's input types or rank are unknown or not float16, float
            or double, or its axis or stash_type is out of range (naming the node).
    """
    types = known_types(proto)
    return _spell_graph(proto.graph, opset, types)


def _spell_graph(graph, opset, types) -> int:
    count = here = 0
    new_nodes = []
    for node in graph.node:
        for sub in proto_subgraphs(node):
            count += _spell_graph(sub, opset, types)
        if node.domain not in ("", "ai.onnx") or node.op_type != "SimplifiedLayerNormalization":
            new_nodes.append(node)
            continue
        new_nodes.extend(_simplified_layer_norm(node, opset, types))
        here += 1
    if here:
        replace_nodes(graph, new_nodes)
    return count + here


def _simplified_layer_norm(node, opset, types) -> list:
    """The nodes that compute one SimplifiedLayerNormalization: Y in scale's type,
    inv_std_var in the stash type (float, or double with stash_type 11)."""
    where = f"SimplifiedLayerNormalization node {node.name!r}"
    if len(node.input) < 2 or not node.input[0] or not node.input[1]:
        raise ConversionError(f"cannot write {where} in ONNX's ops: it needs inputs X "
                              "and scale")
    x_type, rank = types.get(node.input[0], (0, None))
    scale_type = types.get(node.input[1], (0, None))[0]
    stash = _DOUBLE if any(a.name == "stash_type" and a.i == _DOUBLE
                           for a in node.attribute) else _FLOAT
    with_stat = len(node.output) > 1 and bool(node.output[1])
    if opset >= _RMS_NORMALIZATION_OPSET and stash == _FLOAT and not with_stat \
            and x_type == scale_type and x_type in (1, 10, 11, 16):
        from onnx import helper

        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        return [helper.make_node("RMSNormalization", list(node.input[:2]),
                                 [node.output[0]], name=node.name, **attrs)]
    if x_type not in (1, 10, 11):
        raise ConversionError(
            f"cannot write {where} in ONNX's ops: its input X's type is "
            f"{type_name(x_type)}, and the rewrite needs float16, float or double")
    builder = NodeBuilder(node, opset, x_type, domain="")
    try:
        lower_rms_norm(node, builder, rank, scale_type, scale_type, stash)
    except NotLowered as e:
        raise ConversionError(f"cannot write {where} in ONNX's ops: {e}") from None
    return builder.nodes

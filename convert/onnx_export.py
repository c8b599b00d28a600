"""onegraph -> ONNX export: `to_onnx(model, path=None, opset=None) -> ModelProto`.

Nodes map one-to-one (same names, op types, attributes); constants and variables
become initializers; subgraph attributes become GraphProtos whose free names still
refer to the enclosing graphs (outer scope). Quantized integer tensors export as QDQ:
a node touching quantized tensors gets DequantizeLinear on its quantized inputs,
runs in float, and QuantizeLinear writes its quantized outputs. The result passes
`onnx.checker.check_model(full_check=True)`, and onnxruntime loads it: node names are
made unique within each graph (the first node keeps a repeated name, later ones get a
suffix), and GroupNormalization's per-group scale and bias (opsets 18-20) are spread per
channel when exporting to opset 21 or later.
"""

from __future__ import annotations

import dataclasses
import functools
import os

import numpy as np

from ..errors import ConversionError, OpAttributeError, ShapeError
from ..format import AttrType, Container, DType, Graph, Model, Node, TensorKind
from ..format.ir import attr_type_of
from ..ops import REGISTRY, TensorInfo
from .accumulator_export import accumulators_as_sequences
from .control_flow_export import (as_functional, defined_names, holds_control_flow,
                                  outer_reads, used_names)
from .onnx_downgrade import convert_opset, lower_ops_newer_than
from .onnx_import import OMITTED_OUTPUT_PREFIX, _onnx, onnx_schema
from .onnx_legacy import _Names, all_graph_protos, proto_subgraphs
from .onnx_runtime_ops import RUNTIME_OPS_IN_ONNX_DOMAIN, holds_runtime_ops, spell_runtime_ops

# onegraph-domain ops that have a direct ONNX equivalent: (domain, op) -> ONNX op.
# StopGradient only matters to gradients (none in an exported graph); AddN adds inputs
# of one shape, which ONNX Sum does (it also broadcasts).
ONNX_EQUIVALENT = {("onegraph", "ReadVariable"): "Identity",
                   ("onegraph", "StopGradient"): "Identity",
                   # ONNX has no run-time check: the served model passes values on
                   ("onegraph", "CheckNumerics"): "Identity",
                   ("onegraph", "AddN"): "Sum"}

# onegraph-domain ops written as a few ONNX nodes: ZerosLike/OnesLike as
# ConstantOfShape(Shape(x)) (x * 0 would keep NaN and inf).
_FILLS = {("onegraph", "ZerosLike"): 0, ("onegraph", "OnesLike"): 1}

# Domains ONNX itself defines: their ops are written as they are (only the onegraph
# domain needs an equivalent or is refused).
_ONNX_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview", "ai.onnx.preview.training")

# Default target when a model records no default-domain opset.
DEFAULT_OPSET = 21

# Total weight bytes above which `to_onnx(path=...)` writes external data.
EXTERNAL_DATA_THRESHOLD = 2 ** 31

# GroupNormalization's scale and bias became per channel (they were per group) here.
PER_CHANNEL_GROUP_NORM_OPSET = 21

_SPEC_ATTR = {"int": AttrType.INT, "float": AttrType.FLOAT, "string": AttrType.STRING,
              "ints": AttrType.INTS, "floats": AttrType.FLOATS,
              "strings": AttrType.STRINGS, "tensor": AttrType.TENSOR,
              "graph": AttrType.GRAPH, "graphs": AttrType.GRAPHS}


def dtype_to_onnx(dtype: DType) -> int:
    """The ONNX TensorProto element type of a DType (UNDEFINED -> 0)."""
    T = _onnx().TensorProto
    dtype = DType(dtype)
    found = {
        DType.UNDEFINED: T.UNDEFINED, DType.FLOAT32: T.FLOAT, DType.FLOAT16: T.FLOAT16,
        DType.BFLOAT16: T.BFLOAT16, DType.FLOAT64: T.DOUBLE, DType.INT8: T.INT8,
        DType.UINT8: T.UINT8, DType.INT16: T.INT16, DType.UINT16: T.UINT16,
        DType.INT32: T.INT32, DType.UINT32: T.UINT32, DType.INT64: T.INT64,
        DType.UINT64: T.UINT64, DType.BOOL: T.BOOL, DType.STRING: T.STRING,
    }.get(dtype)
    if found is None:  # float8/int4/int2/float4: same names in ONNX (if this onnx has them)
        if dtype.name not in T.DataType.keys():
            raise ConversionError(f"this onnx has no element type {dtype.name}")
        found = T.DataType.Value(dtype.name)
    return found


def _array_to_tensor(array: np.ndarray, name: str, dtype: DType | None = None):
    from onnx import numpy_helper

    array = np.asarray(array)
    if dtype is not None and DType(dtype).raw_storage:  # raw bits would go out as UINT8
        raise ConversionError(f"tensor {name!r}: exporting {DType(dtype).name} data needs "
                              f"the ml_dtypes package")
    if array.dtype == object:
        array = np.array([s.encode("utf-8") if isinstance(s, str) else s
                          for s in array.reshape(-1)], dtype=object).reshape(array.shape)
    try:
        return numpy_helper.from_array(array, name)
    except Exception as e:  # noqa: BLE001
        raise ConversionError(f"tensor {name!r}: cannot encode {array.dtype} data: {e}") from e


def _value_info(t, with_shape: bool = True):
    """The ValueInfoProto of tensor t: its tensor type wrapped in its containers
    (sequence/optional/map), or no type at all when the element type is unknown. A
    dimension of known size is a dim_value; an unknown one is the dim_param that
    `t.dim_names` gives it, or left empty. Never raises for a linted tensor."""
    from onnx import helper

    if t.dtype is DType.UNDEFINED:
        vi = _onnx().ValueInfoProto()
        vi.name = t.name
        return vi
    shape = None
    if with_shape and t.shape is not None:
        names = t.dim_names if t.dim_names is not None and \
            len(t.dim_names) == len(t.shape) else ("",) * len(t.shape)
        shape = [d if d >= 0 else (name or None) for d, name in zip(t.shape, names)]
    type_proto = helper.make_tensor_type_proto(dtype_to_onnx(t.dtype), shape)
    for container in reversed(t.containers):  # innermost wrapper first
        if container is Container.SEQUENCE:
            type_proto = helper.make_sequence_type_proto(type_proto)
        elif container is Container.OPTIONAL:
            type_proto = helper.make_optional_type_proto(type_proto)
        else:
            key = _onnx().TensorProto.INT64 if container is Container.MAP_INT64 \
                else _onnx().TensorProto.STRING
            type_proto = helper.make_map_type_proto(key, type_proto)
    return helper.make_value_info(t.name, type_proto)


class _Exporter:
    def __init__(self, opsets: dict[str, int] | None = None, main_used: set | None = None):
        # main-graph tensors the export reads (None: all): others are not initializers
        self.main_used = main_used
        self.missing: dict[str, list] = {}
        # ops of ONNX's domains that ONNX does not define at the model's opset
        # ("MatMull"): op -> [count, first node]
        self.undefined: dict[str, list] = {}
        # what the op definitions' inference refuses: "graph 'g' node 'n' (Op): ..."
        self.inconsistent: list[str] = []
        self.graph_count = 0
        self.opsets = dict(opsets or {})  # domain ("" = default) -> the model's opset

    # -- inference of missing dtypes/shapes (for graph outputs and subgraph I/O) --

    def _infer(self, g: Graph) -> dict[int, TensorInfo]:
        """Dtypes and shapes of g's tensors, stated or inferred by the op definitions;
        what inference refuses (ShapeError, OpAttributeError) goes to
        `self.inconsistent`, other failures only leave a tensor unknown."""
        infos: dict[int, TensorInfo] = {}
        for i, t in enumerate(g.tensors):
            dtype = None if t.dtype is DType.UNDEFINED or t.dtype is DType.STRING \
                or t.containers else t.dtype.numpy
            shape = None if t.shape is None else tuple(None if d < 0 else d for d in t.shape)
            infos[i] = TensorInfo(dtype, shape, t.data if t.kind is TensorKind.CONSTANT
                                  else None)
        try:
            order = g.topological_order()
        except Exception:  # noqa: BLE001
            return infos
        for n in order:
            node = g.nodes[n]
            if not REGISTRY.has(node.op_type, node.domain):
                continue
            op = REGISTRY.get(node.op_type, node.domain)
            if op.infer is None:
                continue
            try:
                attrs = op.resolve_attrs(node.attributes)
                result = op.infer(attrs, [infos.get(i) if i >= 0 else None
                                          for i in node.inputs])
            except (ShapeError, OpAttributeError) as e:
                self.inconsistent.append(
                    f"graph {g.name!r} node {node.name!r} ({node.op_type}): {e}")
                continue
            except Exception:  # noqa: BLE001 - inference is a best-effort hint here
                continue
            for i, info in zip(node.outputs, result):
                old = infos.get(i)
                if info is None or old is None:
                    continue
                infos[i] = TensorInfo(old.dtype if old.dtype is not None else info.dtype,
                                      old.shape if old.shape is not None else info.shape)
        return infos

    @staticmethod
    def _complete(g: Graph, infos: dict[int, TensorInfo], i: int):
        """A copy of tensor i with dtype/shape filled from inference where unknown."""
        import copy

        t = copy.copy(g.tensors[i])
        info = infos.get(i)
        if info is not None and not t.containers:
            if t.dtype is DType.UNDEFINED and info.dtype is not None:
                try:
                    t.dtype = DType.from_numpy(info.dtype)
                except Exception:  # noqa: BLE001
                    pass
            if t.shape is None and info.shape is not None:
                t.shape = tuple(-1 if d is None else int(d) for d in info.shape)
        return t

    # -- graphs --

    def graph(self, g: Graph, is_main: bool):
        from onnx import helper

        self.graph_count += 1
        infos = self._infer(g)
        producers = g.producers()
        initializers, nodes, extra_vi = [], [], []
        input_set = set(g.inputs)
        qdq_done: dict[int, str] = {}
        omitted = self._omitted_outputs(g)

        def name_of(i: int) -> str:
            return "" if i < 0 else g.tensors[i].name

        def is_quantized(i: int) -> bool:
            if i < 0:
                return False
            t = g.tensors[i]
            return t.quantization is not None and t.dtype in (
                DType.INT8, DType.UINT8, DType.INT32, DType.INT16, DType.UINT16)

        def q_params(i: int):
            t = g.tensors[i]
            q = t.quantization
            scale_name = f"{t.name}__scale"
            zp_name = f"{t.name}__zero_point"
            if scale_name not in qdq_params:
                scale = q.scale.astype(np.float32)
                zp = q.zero_point.astype(t.dtype.numpy)
                if scale.size == 1:
                    scale, zp = scale.reshape(()), zp.reshape(())
                initializers.append(_array_to_tensor(scale, scale_name))
                initializers.append(_array_to_tensor(zp, zp_name))
                qdq_params.add(scale_name)
            attrs = {"axis": int(q.axis)} if q.scale.size > 1 else {}
            return scale_name, zp_name, attrs

        qdq_params: set = set()

        def dequantized(i: int) -> str:
            if i in qdq_done:
                return qdq_done[i]
            t = g.tensors[i]
            out = f"{t.name}__dequantized"
            scale, zp, attrs = q_params(i)
            nodes.append(helper.make_node("DequantizeLinear", [t.name, scale, zp], [out],
                                          name=f"{t.name}__DequantizeLinear", **attrs))
            qdq_done[i] = out
            return out

        used = self.main_used if is_main else None
        for i, t in enumerate(g.tensors):
            if t.data is not None and t.kind in (TensorKind.CONSTANT, TensorKind.VARIABLE) \
                    and i not in producers and (used is None or i in used):
                initializers.append(_array_to_tensor(t.data, t.name, t.dtype))

        # ONNX wants nodes in topological order; an imported graph may list them in
        # another (onnxruntime runs such models, and so does the Session)
        for node in [g.nodes[k] for k in _export_order(g)]:
            where = f"graph {g.name!r} node {node.name!r} ({node.op_type})"
            domain = node.domain
            op_type = node.op_type
            if (domain, op_type) in _FILLS and _fill_dtype(g, node) is not None:
                nodes.extend(_fill_nodes(g, node, _FILLS[(domain, op_type)]))
                continue
            if (domain, op_type) in _CROSS_ENTROPY and self.opsets.get("", 0) >= 13 \
                    and _loss_only(node, used):
                nodes.extend(_cross_entropy_nodes(g, node))
                continue
            equivalent = (domain, op_type) in ONNX_EQUIVALENT
            if equivalent:
                op_type, domain = ONNX_EQUIVALENT[(domain, op_type)], ""
            elif _is_onegraph_domain(domain):
                key = f"{domain}::{op_type}"
                entry = self.missing.setdefault(key, [0, node.name])
                entry[0] += 1
                continue
            schema_domain = "" if domain == "ai.onnx" else domain
            # another runtime's domain (com.microsoft, ...) is written as it is: ONNX
            # holds no schemas for it, so it is that runtime's to check
            if domain in _ONNX_DOMAINS and \
                    onnx_schema(op_type, self.opsets.get(schema_domain), schema_domain) is None:
                key = f"{schema_domain}::{op_type}" if schema_domain else op_type
                entry = self.undefined.setdefault(key, [0, node.name])
                entry[0] += 1
            quant_node = op_type not in ("QuantizeLinear", "DequantizeLinear",
                                         "QLinearConv", "QLinearMatMul", "ConvInteger",
                                         "MatMulInteger", "DynamicQuantizeLinear") and (
                any(is_quantized(i) for i in node.inputs) or
                any(is_quantized(i) for i in node.outputs))
            ins = [dequantized(i) if quant_node and is_quantized(i) else name_of(i)
                   for i in node.inputs]
            while ins and ins[-1] == "":
                ins.pop()
            outs = []
            requant = []
            for i in node.outputs:
                name = name_of(i)
                if i in omitted:
                    name = ""
                elif quant_node and is_quantized(i):
                    requant.append((f"{name}__float", i))
                    name = f"{name}__float"
                outs.append(name)
            attrs = {}
            op_def = REGISTRY.get(node.op_type, node.domain) \
                if REGISTRY.has(node.op_type, node.domain) else None
            # an equivalent takes none of the onegraph op's attributes (a message)
            node_attrs = {} if equivalent else node.attributes
            if op_type == "Resize" and domain in ("", "ai.onnx"):
                node_attrs = _resize_without_tf_half_pixel(node_attrs, where)
            written = _DEFAULTS_WRITTEN.get((domain, op_type))
            if written and any(node_attrs.get(a) is None for a in written):
                node_attrs = {**written, **{a: v for a, v in node_attrs.items()
                                            if v is not None}}
            for aname, value in node_attrs.items():
                if value is None:
                    continue
                spec = op_def.attr_spec(aname) if op_def is not None else None
                if domain == "" and op_type == "Optional" and aname == "type":
                    attrs[aname] = _type_proto_attribute(aname, value, where)
                    continue
                attrs[aname] = self.attribute(aname, value, spec, where)
            onode = helper.make_node(op_type, ins, outs, name=node.name, domain=domain,
                                     doc_string=node.doc_string or None)
            onode.attribute.extend(attrs.values())
            nodes.append(onode)
            for fname, i in requant:
                scale, zp, qattrs = q_params(i)
                nodes.append(helper.make_node("QuantizeLinear", [fname, scale, zp],
                                              [name_of(i)],
                                              name=f"{name_of(i)}__QuantizeLinear", **qattrs))

        inputs = []
        for i in g.inputs:
            t = self._complete(g, infos, i)
            inputs.append(_value_info(t))
        outputs = []
        for i in g.outputs:
            t = self._complete(g, infos, i)
            outputs.append(_value_info(t))
        for i, t in enumerate(g.tensors):
            if i in input_set or i in g.outputs or t.data is not None:
                continue
            if i in producers and t.dtype is not DType.UNDEFINED and \
                    i not in omitted and not is_quantized(i):
                extra_vi.append(_value_info(t))
        name = g.name or f"graph_{self.graph_count}"
        return helper.make_graph(nodes, name, inputs, outputs, initializer=initializers,
                                 doc_string=g.doc_string or None, value_info=extra_vi)

    def _omitted_outputs(self, g: Graph) -> set[int]:
        """Indices of the tensors of `g` that stand for omitted node outputs.

        The importer names the placeholder of an omitted output (one followed by a
        present output) OMITTED_OUTPUT_PREFIX + ...; a real tensor may carry such a name
        too. A placeholder is never read (the omitted output had no name to read it by),
        is no graph output, holds no data, and sits where the op's ONNX schema lets an
        output be omitted; a tensor failing any of these keeps its name. (A real tensor
        passing them all is unused, so writing it as omitted changes no result.)
        """
        candidates = {i for i, t in enumerate(g.tensors)
                      if t.name.startswith(OMITTED_OUTPUT_PREFIX) and t.data is None}
        if not candidates:
            return set()
        read = set(g.outputs)
        for node in g.nodes:
            read.update(node.inputs)
        read_inside = set()
        for node in g.nodes:
            for sub in node.subgraphs():
                read_inside |= outer_reads(sub)
        found = set()
        for node in g.nodes:
            opset = self.opsets.get(node.domain)
            for position, i in enumerate(node.outputs):
                if i in candidates and i not in read and \
                        g.tensors[i].name not in read_inside and \
                        _output_may_be_omitted(node.op_type, node.domain, opset, position):
                    found.add(i)
        return found

    def attribute(self, name: str, value, spec, where: str):
        from onnx import helper

        kind = _SPEC_ATTR.get(spec.type) if spec is not None else None
        if kind is None:
            try:
                kind = attr_type_of(value, where)
            except Exception as e:  # noqa: BLE001
                raise ConversionError(f"{where}: attribute {name!r}: {e}") from e
        A = _onnx().AttributeProto
        try:
            if kind is AttrType.INT:
                return helper.make_attribute(name, int(value), attr_type=A.INT)
            if kind is AttrType.FLOAT:
                return helper.make_attribute(name, float(value), attr_type=A.FLOAT)
            if kind is AttrType.STRING:
                return helper.make_attribute(name, str(value), attr_type=A.STRING)
            if kind is AttrType.INTS:
                return helper.make_attribute(name, [int(v) for v in value], attr_type=A.INTS)
            if kind is AttrType.FLOATS:
                return helper.make_attribute(name, [float(v) for v in value],
                                             attr_type=A.FLOATS)
            if kind is AttrType.STRINGS:
                return helper.make_attribute(name, [str(v) for v in value],
                                             attr_type=A.STRINGS)
            if kind is AttrType.TENSOR:
                return helper.make_attribute(name, _array_to_tensor(value, ""),
                                             attr_type=A.TENSOR)
            if kind is AttrType.GRAPH:
                return helper.make_attribute(name, self.graph(value, False),
                                             attr_type=A.GRAPH)
            if kind is AttrType.GRAPHS:
                return helper.make_attribute(name, [self.graph(v, False) for v in value],
                                             attr_type=A.GRAPHS)
        except ConversionError:
            raise
        except Exception as e:  # noqa: BLE001
            raise ConversionError(f"{where}: attribute {name!r} ({kind.name.lower()}) "
                                  f"cannot be encoded: {e}") from e
        raise ConversionError(f"{where}: attribute {name!r} has no ONNX representation")


# Attributes written even at their default: the checker's full check expands these
# ops' function bodies, which read the attribute (MeanVarianceNormalization's
# Constant(value_ints=@axes) is empty without it, and the check fails).
_DEFAULTS_WRITTEN = {("", "MeanVarianceNormalization"): {"axes": [0, 2, 3]}}


# Resize-11/12's tf_half_pixel_for_nn maps output x to (x + 0.5) / scale, half_pixel to
# that minus 0.5: round_prefer_floor(v) = ceil(v - 0.5) and floor(v) =
# round_prefer_ceil(v - 0.5), so nearest resizes in those two rounding modes have an
# exact spelling from opset 13 on, where the mode no longer exists. Exact in real
# arithmetic (and in the Session, which snaps coordinates to the half pixels they
# approximate); onnxruntime's float32 arithmetic can land an ulp past a whole pixel
# (3.0000002 for 3) at odd size ratios such as 7 -> 19, and then picks the next one
# (3 of 648 sizes in a sweep).
_TF_HALF_PIXEL_NEAREST = {"round_prefer_floor": "ceil", "floor": "round_prefer_ceil"}


def _resize_without_tf_half_pixel(attrs: dict, where: str) -> dict:
    """Resize attributes with coordinate_transformation_mode tf_half_pixel_for_nn
    rewritten to half_pixel and the matching nearest_mode; others as they are.

    Raises:
        ConversionError: a linear or cubic resize, or nearest_mode ceil or
            round_prefer_ceil, in that mode: ONNX from opset 13 cannot say it.
    """
    def text(name, default):
        value = attrs.get(name)
        value = default if value is None else value
        return value.decode() if isinstance(value, bytes) else value

    if text("coordinate_transformation_mode", "half_pixel") != "tf_half_pixel_for_nn":
        return attrs
    mode, nearest = text("mode", "nearest"), text("nearest_mode", "round_prefer_floor")
    if mode != "nearest" or nearest not in _TF_HALF_PIXEL_NEAREST:
        raise ConversionError(
            f"{where}: coordinate_transformation_mode 'tf_half_pixel_for_nn' left ONNX at "
            f"opset 13, and mode {mode!r} with nearest_mode {nearest!r} has no equivalent "
            "there (nearest resizes with nearest_mode round_prefer_floor or floor have one)")
    out = dict(attrs)
    out["coordinate_transformation_mode"] = "half_pixel"
    out["nearest_mode"] = _TF_HALF_PIXEL_NEAREST[nearest]
    return out


# The ops of TF1-style control flow, named when they stop an export: og.cond and
# og.while_loop become If and Loop (control_flow_export.py), map_fn/scan's
# accumulators sequences (accumulator_export.py), so these are left over from control
# flow built some other way.
_FRAME_OPS = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond",
              "AccumulatorNew", "AccumulatorStack", "AccumulatorWrite", "Stack", "StackPop",
              "StackPush"}


# The TF1 losses of the onegraph domain, written in ONNX ops when only their loss is
# read (their second output, the backprop, serves the training graph's gradient).
_CROSS_ENTROPY = {("onegraph", "SoftmaxCrossEntropyWithLogits"),
                  ("onegraph", "SparseSoftmaxCrossEntropyWithLogits")}


def _loss_only(node, used) -> bool:
    """Whether nothing exported reads the node's second output."""
    return len(node.outputs) < 2 or node.outputs[1] < 0 or (
        used is not None and node.outputs[1] not in used)


def _cross_entropy_nodes(g: Graph, node) -> list:
    """Softmax cross-entropy over the last axis, as ONNX nodes (opset 13+):
    -ReduceSum(labels * LogSoftmax(logits)) for dense label rows, and
    -GatherElements(LogSoftmax(logits), labels) for class indices."""
    from onnx import helper

    logits, labels = (g.tensors[i].name for i in node.inputs[:2])
    loss = g.tensors[node.outputs[0]].name
    base = node.name
    logp = f"{loss}__log_softmax"
    out = [helper.make_node("LogSoftmax", [logits], [logp], name=f"{base}__LogSoftmax",
                            axis=-1)]
    if node.op_type == "SoftmaxCrossEntropyWithLogits":
        dtype = dtype_to_onnx(g.tensors[node.inputs[0]].dtype)
        axes = _array_to_tensor(np.array([-1], np.int64), f"{loss}__axes")
        out += [
            helper.make_node("Cast", [labels], [f"{loss}__labels"], name=f"{base}__Cast",
                             to=dtype),
            helper.make_node("Mul", [f"{loss}__labels", logp], [f"{loss}__terms"],
                             name=f"{base}__Mul"),
            helper.make_node("Constant", [], [f"{loss}__axes"], name=f"{base}__axes",
                             value=axes),
            helper.make_node("ReduceSum", [f"{loss}__terms", f"{loss}__axes"],
                             [f"{loss}__sum"], name=f"{base}__ReduceSum", keepdims=0),
        ]
    else:
        axes = _array_to_tensor(np.array([-1], np.int64), f"{loss}__axes")
        out += [
            helper.make_node("Cast", [labels], [f"{loss}__labels"], name=f"{base}__Cast",
                             to=dtype_to_onnx(DType.INT64)),
            helper.make_node("Constant", [], [f"{loss}__axes"], name=f"{base}__axes",
                             value=axes),
            helper.make_node("Unsqueeze", [f"{loss}__labels", f"{loss}__axes"],
                             [f"{loss}__index"], name=f"{base}__Unsqueeze"),
            helper.make_node("GatherElements", [logp, f"{loss}__index"],
                             [f"{loss}__picked"], name=f"{base}__GatherElements", axis=-1),
            helper.make_node("Squeeze", [f"{loss}__picked", f"{loss}__axes"],
                             [f"{loss}__sum"], name=f"{base}__Squeeze"),
        ]
    out.append(helper.make_node("Neg", [f"{loss}__sum"], [loss], name=base))
    return out


def _fill_dtype(g: Graph, node):
    """The dtype of a ZerosLike/OnesLike output, when ConstantOfShape can make it."""
    dtype = g.tensors[node.outputs[0]].dtype
    if dtype in (DType.UNDEFINED, DType.STRING) or not node.inputs or node.inputs[0] < 0:
        return None
    return dtype


def _fill_nodes(g: Graph, node, value: int) -> list:
    """ZerosLike/OnesLike(x) as ConstantOfShape(Shape(x)) filled with `value`."""
    from onnx import helper

    dtype = _fill_dtype(g, node)
    x, y = g.tensors[node.inputs[0]].name, g.tensors[node.outputs[0]].name
    shape = f"{y}__shape"
    fill = _array_to_tensor(np.full((1,), value, dtype=dtype.numpy), f"{y}__value", dtype)
    return [helper.make_node("Shape", [x], [shape], name=f"{node.name}__Shape"),
            helper.make_node("ConstantOfShape", [shape], [y], name=node.name, value=fill)]


def _export_order(g: Graph) -> list[int]:
    """Node indices of `g` in an order ONNX accepts: each node after the producers of
    its inputs and of the values its subgraphs read from `g` by name.

    Raises:
        FormatError: the graph has a cycle.
    """
    from types import SimpleNamespace

    from ..format.ir import topological_order

    shims = []
    for node in g.nodes:
        reads = {name for sub in node.subgraphs() for name in outer_reads(sub)}
        found = [g.find_tensor(name) for name in sorted(reads)]
        shims.append(SimpleNamespace(
            inputs=list(node.inputs) + [i for i in found if i is not None],
            outputs=node.outputs, control_inputs=node.control_inputs,
            op_type=node.op_type))
    order = topological_order(len(g.tensors), shims)
    return order if order is not None else g.topological_order()


@functools.lru_cache(maxsize=None)
def _output_may_be_omitted(op_type: str, domain: str, opset: int | None,
                           position: int) -> bool:
    """Whether ONNX's schema of the op lets output `position` be omitted (optional or
    variadic); True when the op has no schema here, so that nothing is assumed."""
    from onnx import defs

    schema = onnx_schema(op_type, opset, domain)
    if schema is None:  # not an ONNX op (at this opset)
        return True
    formals = list(schema.outputs)
    if not formals:
        return True
    if position >= len(formals):
        position = len(formals) - 1
    return formals[position].option != defs.OpSchema.FormalParameterOption.Single


def _type_proto_attribute(name: str, text: str, where: str):
    """A TYPE_PROTO attribute from the protobuf text the importer keeps (Optional's type)."""
    from google.protobuf import text_format
    from onnx import AttributeProto

    attr = AttributeProto(name=name, type=AttributeProto.TYPE_PROTO)
    try:
        text_format.Parse(text, attr.tp)
    except text_format.ParseError as e:
        raise ConversionError(f"{where}: attribute {name!r} is not a TypeProto: {e}") from e
    return attr


def _min_inputs(op_type: str, opset: int) -> int:
    """The fewest inputs a default-domain op's schema at `opset` allows (0 if unknown)."""
    schema = onnx_schema(op_type, opset, "")
    return 0 if schema is None else int(schema.min_input)


def _fix_for_opset(graph, opset: int, target: int | None = None,
                   outer_empty: frozenset = frozenset()) -> None:
    """Undo importer-side additions that older opsets do not allow, and give back the
    empty names of omitted optional inputs that an op still needs by position (Loop's
    condition), which the IR drops when they trail. `target`: the opset the export
    ends at, when the version converter takes `opset` there next (BatchNormalization's
    training_mode is spelled for the end, which the converter cannot turn back).
    `outer_empty`: the names of the enclosing graphs' empty constants."""
    empty = outer_empty | _empty_constants(graph)
    for node in graph.node:
        if node.op_type == "Resize" and node.domain in ("", "ai.onnx") and opset >= 13 \
                and (target is None or target >= 13):
            _omit_empty_scales(node, empty)
        if node.domain in ("", "ai.onnx"):
            missing = _min_inputs(node.op_type, opset) - len(node.input)
            if missing > 0:
                node.input.extend([""] * missing)
        if node.op_type == "Split" and node.domain in ("", "ai.onnx") and opset < 18:
            keep = [a for a in node.attribute if a.name != "num_outputs"]
            if len(keep) != len(node.attribute):
                del node.attribute[:]
                node.attribute.extend(keep)
        if node.op_type == "BatchNormalization" and node.domain in ("", "ai.onnx") \
                and opset < 14 and (target is None or target < 14):
            _batchnorm_before_14(graph, node)
        if node.op_type == "RoiAlign" and node.domain in ("", "ai.onnx") and opset < 16:
            _roi_align_before_16(node)
        for a in node.attribute:
            if a.HasField("g"):
                _fix_for_opset(a.g, opset, target, empty)
            for sub in a.graphs:
                _fix_for_opset(sub, opset, target, empty)


def _empty_constants(graph) -> frozenset:
    """The names of a graph's initializers and Constant node values with no elements."""
    names = {t.name for t in graph.initializer if 0 in t.dims}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
            for a in node.attribute:
                if a.name == "value" and a.HasField("t") and 0 in a.t.dims:
                    names.add(node.output[0])
    return frozenset(names)


def _omit_empty_scales(node, empty: frozenset) -> None:
    """A Resize (opset 13 on) given sizes and an empty constant scales names scales ""
    (omitted), which means the same: ONNX's checker cannot tell that a scales read
    from an enclosing graph is empty, and refuses a body holding both."""
    if len(node.input) > 3 and node.input[3] and node.input[2] in empty:
        node.input[2] = ""


def _roi_align_before_16(node) -> None:
    """A RoiAlign for opsets 10-15, which have no coordinate_transformation_mode and
    sample as its output_half_pixel does (what the importer spelled out); the version
    converter spells it again for a later target.

    Raises:
        ConversionError: the node asks for half_pixel, which came in at opset 16.
    """
    mode = next((a for a in node.attribute if a.name == "coordinate_transformation_mode"),
                None)
    if mode is None:
        return
    if mode.s != b"output_half_pixel":
        raise ConversionError(
            f"cannot write RoiAlign node {node.name!r} at opset below 16: its "
            f"coordinate_transformation_mode {mode.s.decode(errors='replace')!r} came in "
            "at opset 16; export at opset 16 or later")
    keep = [a for a in node.attribute if a.name != "coordinate_transformation_mode"]
    del node.attribute[:]
    node.attribute.extend(keep)


def _batchnorm_before_14(graph, node) -> None:
    """A BatchNormalization for opsets 9-13, which have no training_mode: training mode
    is said by giving all five outputs (Y, mean, var, saved_mean, saved_var), so a
    training node gets fresh names for the ones it lacks; inference keeps Y alone."""
    mode = next((a for a in node.attribute if a.name == "training_mode"), None)
    if mode is None:
        return
    keep = [a for a in node.attribute if a.name != "training_mode"]
    del node.attribute[:]
    node.attribute.extend(keep)
    if not mode.i:
        del node.output[1:]
        return
    taken = {n for other in graph.node for n in list(other.input) + list(other.output)}
    taken |= {v.name for v in list(graph.input) + list(graph.output)}
    outs = list(node.output) + [""] * (5 - len(node.output))
    for k, tag in enumerate(("", "mean", "var", "saved_mean", "saved_var")):
        if k and not outs[k]:
            name = f"{outs[0]}__{tag}"
            while name in taken:
                name += "_"
            taken.add(name)
            outs[k] = name
    del node.output[:]
    node.output.extend(outs)


def _refuse_undefined(undefined: dict, opset: int) -> None:
    """Raise the ConversionError listing ops ONNX does not define at `opset` ({op:
    [count, first node name]})."""
    parts = [f"{op} x{count} (first: node {first!r})"
             for op, (count, first) in undefined.items()]
    raise ConversionError(f"ops that ONNX does not define (default-domain opset {opset}): "
                          + ", ".join(parts))


def _undefined_ops(graph, opset: int, found: dict | None = None) -> dict:
    """{op: [count, first node name]} of the default-domain nodes of `graph` (subgraphs
    included) whose op ONNX does not define at `opset`."""
    found = {} if found is None else found
    for node in graph.node:
        if node.domain in ("", "ai.onnx") and onnx_schema(node.op_type, opset, "") is None:
            entry = found.setdefault(node.op_type, [0, node.name])
            entry[0] += 1
        for sub in proto_subgraphs(node):
            _undefined_ops(sub, opset, found)
    return found


def _complete_output_types(proto) -> None:
    """Give untyped main-graph outputs (e.g. sequences) the type ONNX inference finds."""
    untyped = [o for o in proto.graph.output if not o.HasField("type")]
    if not untyped:
        return
    onnx = _onnx()
    try:
        inferred = onnx.shape_inference.infer_shapes(proto)
    except Exception:  # noqa: BLE001 - leave them untyped; the checker will say so
        return
    found = {v.name: v.type for v in list(inferred.graph.output)
             + list(inferred.graph.value_info) if v.HasField("type")}
    for o in untyped:
        if o.name in found:
            o.type.CopyFrom(found[o.name])


def _loosen_contradicted_shapes(proto) -> dict[str, tuple[int, int]]:
    """Leave unknown the dims that ONNX's shape inference contradicts, in the main graph
    and in control-flow bodies, and return {name: (stated rank, inferred rank)} of the
    main-graph values whose rank it contradicts (their shape is left out entirely).

    onnx 1.23 counts one window too many for ceil_mode pools whose last window would
    start in the padding (onnxruntime and onegraph skip it), and computes Resize's
    floor(size * scale) in double where onnxruntime and onegraph use float32 (12 x
    float32(10/12) is 10, not 9): the true shape stated there fails
    `check_model(full_check=True)`. Each dim of an activation or output whose stated
    value differs from the one ONNX infers from the inputs alone is written as an
    unknown dim instead, so the file states nothing false and still checks. Never
    raises: when inference fails the shapes stay as they are.
    """
    graph = proto.graph
    ranks: dict[str, tuple[int, int]] = {}

    def stated(graphs=None):  # taken afresh: the value_info messages are re-added below
        return [v for g in graphs or all_graph_protos(graph)
                for v in list(g.value_info) + list(g.output)
                if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")]

    if not stated() or proto.ByteSize() > 1 << 30:
        return ranks
    onnx = _onnx()
    saved = []
    for g in all_graph_protos(graph):
        outputs = [onnx.TypeProto() for _ in g.output]
        for keep, out in zip(outputs, g.output):
            keep.CopyFrom(out.type)
            if out.type.HasField("tensor_type"):
                out.type.tensor_type.ClearField("shape")
        saved.append((g, list(g.value_info), outputs))
        del g.value_info[:]
    try:
        inferred = onnx.shape_inference.infer_shapes(proto)
    except Exception:  # noqa: BLE001 - inference is only a cross-check here
        inferred = None
    finally:
        for g, info, outputs in saved:
            g.value_info.extend(info)
            for keep, out in zip(outputs, g.output):
                out.type.CopyFrom(keep)
    if inferred is None:
        return ranks
    # graphs paired by position (inference keeps the nesting): sibling branches may
    # reuse a name for values of different shapes
    for index, (g, theirs_g) in enumerate(zip(all_graph_protos(graph),
                                              all_graph_protos(inferred.graph))):
        found = {v.name: v.type.tensor_type.shape
                 for v in list(theirs_g.value_info) + list(theirs_g.output)
                 if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")}
        for v in stated([g]):
            theirs = found.get(v.name)
            ours = v.type.tensor_type.shape
            if theirs is None:
                continue
            if len(theirs.dim) != len(ours.dim):
                if index == 0:  # the main graph
                    ranks[v.name] = (len(ours.dim), len(theirs.dim))
                v.type.tensor_type.ClearField("shape")
                continue
            for mine, other in zip(ours.dim, theirs.dim):
                if mine.HasField("dim_value") and other.HasField("dim_value") \
                        and mine.dim_value != other.dim_value:
                    mine.Clear()
    return ranks


def _is_onegraph_domain(domain: str) -> bool:
    """Whether `domain` is one of onegraph's own ("onegraph", "onegraph.held"), whose
    ops no other runtime knows."""
    return domain == "onegraph" or domain.startswith("onegraph.")


def _missing_domain_opsets(model: Model) -> dict[str, int]:
    """Opset versions for the domains (ai.onnx.ml, com.microsoft, ...) whose ops the
    model uses but does not import (a graph built in Python rather than imported): for
    ONNX's domains the newest `since_version` among the ops it uses there, the oldest
    opset that has them all; for another runtime's domain, 1."""
    need: dict[str, int] = {}
    for g in model.all_graphs():
        for node in g.nodes:
            domain = node.domain
            if domain in ("", "ai.onnx") or _is_onegraph_domain(domain) \
                    or domain in model.opset_imports:
                continue
            version = REGISTRY.get(node.op_type, domain).since_version \
                if REGISTRY.has(node.op_type, domain) else 1
            need[domain] = max(need.get(domain, 1), version)
    return need


def _weight_bytes(proto_graph) -> int:
    total = 0
    for t in proto_graph.initializer:
        total += len(t.raw_data) if t.HasField("raw_data") else 0
    for node in proto_graph.node:
        for a in node.attribute:
            if a.HasField("g"):
                total += _weight_bytes(a.g)
            for sub in a.graphs:
                total += _weight_bytes(sub)
    return total


def to_onnx(model: Model, path: str | os.PathLike | None = None, opset: int | None = None,
            *, signature: str | None = None, session=None, signatures=None,
            external_data_threshold: int = EXTERNAL_DATA_THRESHOLD,
            check: bool = True):
    """Convert a Model to an ONNX ModelProto (and write it to `path` if given).

    A graph imported from ONNX is written as it is. A graph built with the training
    API (it lists no outputs) is exported as one signature (`signature`, by default
    `serving` or the only one): the nodes the signature's outputs depend on, cut at
    its inputs. Variable initializers, optimizer updates, gradients, Save/Restore and
    queues are left out, and variables become initializers holding their values in the
    model (or in `session`). The ONNX inputs and outputs are named by the signature's
    keys, so the imported model's `serving` signature takes the same names. A
    signature input computed by the graph (`og.placeholder_with_default`, a fed
    intermediate or dequeued tensor) becomes a graph input; a constant default is
    written as an initializer of the same name, ONNX's overridable default.

    Args:
        model: the model, or an og.Graph (converted with `signatures` and `session`
            as `og.save` does); subgraphs inline as attributes.
        path: where to save the `.onnx` file. When the initializers total more than
            `external_data_threshold` bytes (2 GiB by default) they are written as one
            external data file, `<basename>.data`, next to `path`, and the returned
            proto refers to it.
        opset: target default-domain opset; the model's own opset is converted to it
            with ONNX's version converter. Default: the model's recorded opset. Nodes
            keep their form for targets from 8 on (what changed meaning at 12 and 13
            is rewritten; below 11 negative axes are counted from the front); below 8
            every op that changed since (nearly all, if only by new element types) is
            refused.
        signature: the name of the signature to export, for a graph built with the
            training API (default: `serving`, or the model's only signature).
        session: an og.Session of `model` whose variable values are exported instead
            of the model's own (as `og.save(..., session=)` stores them).
        signatures: with an og.Graph, name -> og.signature(...), as for `og.save`.
        check: refuse ops that ONNX does not define, and run
            `onnx.checker.check_model(full_check=True)` on the result (a refusal also
            names the nodes whose inputs onegraph's own shape inference refuses).
            onnxruntime's SimplifiedLayerNormalization, in ONNX's domain but not
            ONNX's, is then written in ONNX's ops (RMSNormalization from opset 23);
            with check=False it is written as it came.

    Raises:
        TypeError: model is neither a Model nor an og.Graph; path is not a str, bytes
            or os.PathLike; external_data_threshold is not an int; signatures given
            with a Model.
        RuntimeError: `session` is closed.
        OneGraphError: `session` runs another graph than the model's.
        FormatError: the model has no graphs (a model loaded from a file names it).
        ConversionError: `path` cannot be written: its folder is missing, it is a
            folder, no permission, a full disk, a NUL byte in it (unlike og.save, which
            raises the OSError itself, every failure here is a ConversionError; the
            message is the same sentence, "cannot write 'PATH': the folder does not
            exist"), checked before converting; opset or external_data_threshold out of
            range; no outputs to export (see below), a variable without a value,
            an input or output of unknown rank, ops of the onegraph domain without an
            ONNX equivalent that the outputs depend on (one error listing all of them;
            another runtime's ops, such as com.microsoft's, are written as they are),
            an attribute or tensor that ONNX cannot hold,
            a failed opset conversion, a GroupNormalization whose known channel count
            is not a multiple of num_groups (exporting to opset 21 or later); with
            `check`, ops of ONNX's domains that ONNX does not define at the model's
            opset (one error listing all of them), a SimplifiedLayerNormalization
            whose input types or rank are unknown, or a result the ONNX checker
            rejects (for GroupNormalization below opset 21, the
            message says to export with opset 21).
    """
    onnx = _onnx()
    from onnx import helper

    if not isinstance(model, Model):
        if not hasattr(model, "to_model"):
            kind = type(model)
            raise TypeError(f"to_onnx: expected an onegraph Model or og.Graph, got "
                            f"{kind.__module__}.{kind.__qualname__} (load a .og file "
                            "with og.load)")
        model = model.to_model(signatures=signatures, session=session)
    elif signatures is not None:
        raise TypeError("to_onnx: signatures= is for an og.Graph; a Model has its own")
    elif session is not None:
        from ..train.session import model_with_values

        model = model_with_values(model, session)
    if signature is not None and not isinstance(signature, str):
        raise TypeError(f"to_onnx: signature must be a str (a signature's name), got "
                        f"{type(signature).__name__}")
    if isinstance(external_data_threshold, (bool, np.bool_)) or not isinstance(
            external_data_threshold, (int, np.integer)):
        raise TypeError(f"to_onnx: external_data_threshold must be an int (bytes), got "
                        f"{type(external_data_threshold).__name__} "
                        f"{external_data_threshold!r}")
    if external_data_threshold < 0:
        raise ConversionError(f"external_data_threshold must be an integer >= 0 (bytes), "
                              f"got {external_data_threshold!r}")
    if path is not None:
        path = _writable_path(path)
    if opset is not None:
        newest = onnx.defs.onnx_opset_version()
        if isinstance(opset, bool) or not isinstance(opset, (int, np.integer)) \
                or not 1 <= opset <= newest:
            raise ConversionError(f"opset must be an integer from 1 to {newest} (the newest "
                                  f"the installed onnx knows), got {opset!r}")
    source_opset = model.opset_imports.get("", model.opset_imports.get("ai.onnx"))
    if source_opset is None:
        source_opset = DEFAULT_OPSET
    domain_opsets = {d: int(v) for d, v in model.opset_imports.items() if d != "ai.onnx"}
    domain_opsets[""] = int(source_opset)
    main, used = _export_view(model, signature)
    exporter = _Exporter(domain_opsets, used)
    graph_proto = exporter.graph(main, True)
    if exporter.missing:
        parts = [f"{op} x{count} (first: node {first!r})"
                 for op, (count, first) in exporter.missing.items()]
        frames = any(op.split("::")[-1] in _FRAME_OPS for op in exporter.missing)
        raise ConversionError(
            "ops without an ONNX equivalent: " + ", ".join(parts)
            + ("; these are TF1 control-flow ops used otherwise than og.cond, "
               "og.while_loop, og.foldl, og.map_fn and og.scan use them (a Switch read "
               "without its Merge, a gradient loop's stacks), which ONNX cannot express: "
               "og.cond exports as If and the loops as Loop"
               if frames else ""))
    # onnxruntime registers a few contrib ops in ONNX's own domain (its transformers
    # optimizer writes SimplifiedLayerNormalization there): with `check` they are
    # spelled in ONNX's ops below, and check=False writes them as they came
    undefined = {op: v for op, v in exporter.undefined.items()
                 if op not in RUNTIME_OPS_IN_ONNX_DOMAIN}
    # ops ONNX defines only at a later opset (a converter wrote them into an older
    # model) are spelled in the model's opset below, where a rewrite exists
    newer_ops = check and bool(undefined) and all(
        onnx_schema(op, onnx.defs.onnx_opset_version(), "") is not None for op in undefined)
    if check and undefined and not newer_ops:
        _refuse_undefined(undefined, domain_opsets[""])
    # What onegraph's own inference refuses is only a hint: a model's stated shapes
    # may be wrong in branches it never takes, so it explains a checker failure
    # rather than failing the export itself.
    hint = ""
    if exporter.inconsistent:
        more = len(exporter.inconsistent) - 1
        hint = ("; onegraph's shape inference refuses " + exporter.inconsistent[0]
                + (f" (and {more} more nodes)" if more else ""))
    opsets = [helper.make_opsetid("", int(source_opset))]
    for domain, version in model.opset_imports.items():
        if domain not in ("", "ai.onnx") and not _is_onegraph_domain(domain):
            opsets.append(helper.make_opsetid(domain, int(version)))
    for domain, version in sorted(_missing_domain_opsets(model).items()):
        opsets.append(helper.make_opsetid(domain, version))
    proto = helper.make_model(graph_proto, opset_imports=opsets,
                              producer_name="onegraph", producer_version=_version())
    _fix_for_opset(proto.graph, int(source_opset), None if opset is None else int(opset))
    if check and holds_runtime_ops(proto):
        spell_runtime_ops(proto, int(source_opset))
    _complete_output_types(proto)
    if newer_ops:
        proto = lower_ops_newer_than(proto, int(source_opset))
        left = _undefined_ops(proto.graph, int(source_opset))
        if left:
            _refuse_undefined(left, int(source_opset))
    _write_header(proto, model.metadata if used is None else _serving_metadata(model.metadata))
    proto.ir_version = _ir_version_for(proto)
    if opset is not None and int(opset) != int(source_opset):
        proto = convert_opset(proto, int(source_opset), int(opset))
        _fix_for_opset(proto.graph, int(opset))
        proto.ir_version = _ir_version_for(proto)
    target_opset = int(source_opset) if opset is None else int(opset)
    if target_opset >= PER_CHANNEL_GROUP_NORM_OPSET:
        _spread_group_norm_params(proto, int(source_opset))
    _unique_node_names(proto.graph)
    untyped = [vi.name for vi in proto.graph.input if not vi.HasField("type")]
    if untyped:
        # ONNX requires typed graph inputs, and onnx's checker and shape inference
        # crash the process on a model without them
        raise ConversionError(f"graph inputs {untyped} have no known element type (it "
                              "came from the feed when the model was imported); ONNX "
                              "requires one: give the inputs a dtype before exporting")
    contradicted = _loosen_contradicted_shapes(proto)
    external = path is not None and _weight_bytes(proto.graph) > external_data_threshold
    if check:
        _check_io_ranks(proto.graph, contradicted)
    if check and not external:
        _check(proto, hint)
    if path is not None:
        try:
            _save(proto, path, external, hint if check and external else None)
        except OSError as e:
            raise ConversionError(_cannot_write(e, path)) from e
    return proto


def _writable_path(path) -> str:
    """`path` as a str (a bytes path decoded), after checking that the file can be
    written there (before the conversion's work, as the CLI does).

    Raises:
        TypeError: path is not a str, bytes or os.PathLike.
        ConversionError: "cannot write 'PATH': the folder does not exist" (the words
            og.save's OSError has), or a NUL byte in the path.
    """
    from ..format.atomic import check_writable, fs_path

    try:
        path = fs_path(path, "write")
    except ValueError as e:  # a NUL byte
        raise ConversionError(str(e)) from None
    try:
        check_writable(path)
    except OSError as e:
        raise ConversionError(_cannot_write(e, path)) from e
    return path


def _cannot_write(e: OSError, path: str) -> str:
    """"cannot write 'PATH': REASON", naming the external data file when it failed."""
    from ..format.atomic import cannot_write

    data_file = os.path.join(os.path.dirname(os.path.abspath(path)),
                             os.path.basename(path) + ".data")
    return cannot_write(e, e.filename if e.filename == data_file else path)


def _export_view(model: Model, signature: str | None = None):
    """The main graph as exported, and the tensors it reads (None: all).

    A graph that lists outputs (imported from ONNX) is written as it is. A graph
    built with the training API lists none: ONNX has one graph and no state, so the
    export computes one signature's outputs (`signature`; by default `serving` or the
    only signature) from the nodes they depend on, cut at the signature's inputs.
    Variable initializers, optimizer updates, gradients, Save/Restore and queues are
    left out, and variables become initializers holding their values in the model.
    Inputs and outputs are named by the signature's keys (see `_named_by_keys`).

    Raises:
        ConversionError: the named signature does not exist, there are no outputs to
            export, or a variable the outputs read has no value.
    """
    import copy

    g = model.graph
    sigs = model.signatures
    if g.outputs and signature is None:  # an ONNX-style graph: written as it is
        return g, None
    if signature is not None:
        if signature not in sigs:
            raise ConversionError(f"the model has no signature {signature!r} (it has "
                                  f"{sorted(sigs) or 'none'})")
        sig = sigs[signature]
        if sig.graph != 0 or not sig.outputs:
            raise ConversionError(f"signature {signature!r} cannot be exported: "
                                  + ("it has no outputs" if not sig.outputs else
                                     f"it runs graph {sig.graph}, not the main graph"))
    else:
        sig = sigs.get("serving") or (next(iter(sigs.values())) if len(sigs) == 1
                                      else None)
    if sig is None or not sig.outputs or sig.graph != 0:
        more = (f"; it has signatures {sorted(sigs)}: pick one with signature=... "
                "(onegraph convert --signature NAME)" if len(sigs) > 1 else "")
        raise ConversionError(
            "the model has no outputs to export: its main graph lists none and it has "
            "no 'serving' signature with outputs (save it with signatures={'serving': "
            "og.signature(inputs=..., outputs=...)})" + more)
    outputs = list(dict.fromkeys(sig.outputs.values()))
    cut = set(sig.inputs.values())
    keep, used = _ancestors(g, outputs, cut)
    g, keep, used = _functional_control_flow(g, keep, used, outputs, cut)
    # every signature input stays, read or not: a caller feeds the signature's inputs,
    # and onnxruntime refuses a feed the model does not declare
    used |= set(sig.inputs.values())
    inputs = [i for i in dict.fromkeys(list(sig.inputs.values()) + list(g.inputs))
              if i in used]
    for i in sorted(used):
        t = g.tensors[i]
        if t.kind is TensorKind.VARIABLE and t.data is None:
            raise ConversionError(
                f"variable {t.name!r} has no value to export (its initial value is computed "
                "by the graph): save the model with session=... so it holds the value")
    view = copy.copy(g)
    view.tensors = list(g.tensors)
    # control edges renumbered to the kept nodes' new places (an edge to a node left
    # out, such as a run-time check's Assert, goes): a stale number named another
    # node, and could close a cycle
    position = {n: k for k, n in enumerate(sorted(keep))}
    view.nodes = [_without_fed_outputs(view, _controls_in(g.nodes[n], position), cut)
                  for n in sorted(keep)]
    view.inputs, view.outputs = inputs, outputs
    producers = g.producers()
    for i in inputs:
        default = _constant_default(g, producers.get(i))
        if default is not None:
            view.tensors[i] = dataclasses.replace(g.tensors[i], kind=TensorKind.CONSTANT,
                                                  data=default)
    _named_by_keys(view, sig)
    return view, used | set(view.inputs) | set(view.outputs)


def _functional_control_flow(g: Graph, keep: set, used: set, outputs: list[int],
                             cut: set):
    """(graph, kept nodes, read tensors) with the og.cond and og.while_loop structures
    among `keep` written as If and Loop nodes (see `control_flow_export`), map_fn's
    and scan's accumulators as sequences (`accumulator_export`); as given when there
    are none.

    Raises:
        ConversionError: a cond is not one og.cond builds, or a tensor computed inside
            a cond or loop is also read outside it.
    """
    taken = used_names(g)
    rewritten = accumulators_as_sequences(g, keep, taken)
    if rewritten is g and not holds_control_flow(g, keep):
        return g, keep, used
    g = rewritten
    if holds_control_flow(g, keep):
        g = as_functional(g, keep, fetched=outputs, taken=taken, cut=frozenset(cut))
    keep, used = _ancestors(g, outputs, cut)
    inside = set()
    for n in keep:
        for sub in g.nodes[n].subgraphs():
            inside |= defined_names(sub)
    for n in sorted(keep):
        for o in g.nodes[n].outputs:
            if o >= 0 and g.tensors[o].name in inside:
                raise ConversionError(
                    f"tensor {g.tensors[o].name!r} is computed inside a cond branch or "
                    "loop body and also read outside it: ONNX's If and Loop cannot hand "
                    "it out")
    return g, keep, used


def _controls_in(node, position: dict):
    """`node` with its control edges renumbered by `position` (old -> new index),
    those to nodes not in it dropped."""
    if not node.control_inputs:
        return node
    return dataclasses.replace(node, control_inputs=[position[c] for c in node.control_inputs
                                                     if c in position])


def _without_fed_outputs(view: Graph, node, cut: set):
    """`node`, kept for another of its outputs, with each output that is a signature
    input (fed, so a graph input of the export) renamed to an unused value: a fed
    output of a multi-output node (one part of a Split) must not be defined twice."""
    if not any(o in cut for o in node.outputs):
        return node
    outputs = []
    for o in node.outputs:
        if o in cut:
            t = view.tensors[o]
            view.tensors.append(dataclasses.replace(t, name=f"{t.name}__computed"))
            o = len(view.tensors) - 1
        outputs.append(o)
    return dataclasses.replace(node, outputs=outputs)


def _serving_metadata(metadata: dict) -> dict:
    """The metadata a signature's export keeps: without the training graph's own keys
    (`initializer`, `collection:...`, written by og.Graph.to_model), which name nodes
    and tensors the export leaves out."""
    return {k: v for k, v in metadata.items()
            if k != "initializer" and not str(k).startswith("collection:")}


def _constant_default(g: Graph, producer: int | None):
    """The constant a signature input computed by an Identity of a constant holds when
    it is not fed (`og.placeholder_with_default` of a constant), or None."""
    if producer is None:
        return None
    node = g.nodes[producer]
    if node.op_type != "Identity" or node.domain not in ("", "ai.onnx") \
            or len(node.inputs) != 1 or node.inputs[0] < 0:
        return None
    src = g.tensors[node.inputs[0]]
    return src.data if src.kind is TensorKind.CONSTANT else None


def _named_by_keys(view: Graph, sig) -> None:
    """Name the view's inputs and outputs by the signature's keys, as a user of the
    signature knows them (`run_signature("serving", image=...)["probs"]`): a key that
    differs from its tensor's name gets an Identity between the two. A key already
    naming another tensor of the graph keeps the tensor's own name."""
    names = {t.name for t in view.tensors}

    def alias(index: int, key: str) -> int:
        view.tensors.append(dataclasses.replace(view.tensors[index], name=key))
        names.add(key)
        return len(view.tensors) - 1

    before, after = [], []  # Identities from the input keys, and to the output keys
    inputs = list(view.inputs)
    for key, i in sig.inputs.items():
        t = view.tensors[i]
        if i not in inputs or key == t.name or key in names:
            continue
        k = alias(i, key)  # a constant default moves to the key's name
        view.tensors[i] = dataclasses.replace(t, kind=TensorKind.ACTIVATION, data=None)
        inputs[inputs.index(i)] = k
        before.append(Node("Identity", [k], [i], name=f"{key}__input"))
    outputs = []
    for key, i in sig.outputs.items():
        if key == view.tensors[i].name or key in names:
            if i not in outputs:
                outputs.append(i)
            continue
        k = alias(i, key)
        outputs.append(k)
        after.append(Node("Identity", [i], [k], name=f"{key}__output"))
    view.nodes = before + view.nodes + after
    view.inputs, view.outputs = inputs, outputs


def _ancestors(g: Graph, outputs: list[int], cut: set = frozenset()):
    """The nodes `outputs` depend on (through inputs and the outer-scope reads of
    their subgraphs; ONNX has no control edges), not looking past the tensors in
    `cut` (fed, so their producers are not needed), and every tensor they read."""
    producers = g.producers()
    by_name = {t.name: i for i, t in enumerate(g.tensors)}
    keep: set[int] = set()
    used: set[int] = set()
    stack = [i for i in outputs if i >= 0]
    while stack:
        i = stack.pop()
        if i in used:
            continue
        used.add(i)
        n = None if i in cut else producers.get(i)
        if n is None or n in keep:
            continue
        keep.add(n)
        node = g.nodes[n]
        stack.extend(j for j in node.inputs if j >= 0)
        for sub in node.subgraphs():
            stack.extend(by_name[name] for name in outer_reads(sub) if name in by_name)
    return keep, used


def _check_io_ranks(graph, contradicted: dict | None = None) -> None:
    """ONNX needs the rank of a model's inputs and outputs: name those without one.
    `contradicted` ({name: (stated, inferred) rank}, from `_loosen_contradicted_shapes`)
    explains an output whose stated rank ONNX's inference contradicts.

    Raises:
        ConversionError: some have none.
    """
    contradicted = contradicted or {}
    for vi in graph.output:
        if vi.name in contradicted:
            stated, inferred = contradicted[vi.name]
            raise ConversionError(
                f"graph output {vi.name!r}: the model states rank {stated}, but ONNX's "
                f"shape inference finds rank {inferred} from the graph's inputs (the "
                "model was exported with a wrong output shape; onnx's checker refuses "
                "it); correct the output's shape, or export with check=False "
                "(--no-check), which leaves it out")
    unknown = [f"{kind} {vi.name!r}" for kind, vis in (("input", graph.input),
                                                      ("output", graph.output))
               for vi in vis if vi.type.HasField("tensor_type")
               and not vi.type.tensor_type.HasField("shape")]
    if unknown:
        raise ConversionError(
            f"graph {', '.join(unknown)}: unknown rank; ONNX needs the rank of a model's "
            "inputs and outputs (give the placeholder a shape, or the op that makes the "
            "output an explicit axis)")


def _save(proto, path: str, external: bool, check_hint: str | None = None) -> None:
    """Write `proto` to `path` so that a failure, at any point, leaves the old files
    whole and consistent; with `check_hint` not None, run the ONNX checker on the
    written files before they replace the old ones.

    With `external`, the weights go to a data file next to the model,
    `<basename>.data`, or `<basename>.1.data` when the model now at `path` uses that
    name: the new data never overwrites data the old model reads, and renaming the new
    model over `path` is the single step that switches both. The other data file is
    then removed; so is the replaced model's data file when the weights are now inline.

    Raises:
        OSError: the folder is missing or the file system refused.
        ConversionError: the checker refuses the model (nothing was replaced).
    """
    import shutil
    import tempfile

    from onnx import external_data_helper

    from ..format.atomic import AtomicFiles, atomic_open

    folder = os.path.dirname(os.path.abspath(path))
    location = old_location = None
    names = [os.path.basename(path) + ".data", os.path.basename(path) + ".1.data"]
    in_use = _data_files_in_use(path)
    if external:
        location = names[1] if names[0] in in_use else names[0]
        old_location = names[0] if location == names[1] else names[1]
        external_data_helper.convert_model_to_external_data(
            proto, all_tensors_to_one_file=True, location=location, size_threshold=0,
            convert_attribute=False)
        staging = tempfile.mkdtemp(prefix=".tmp-onnx-", dir=folder)
        try:
            external_data_helper.write_external_data_tensors(proto, staging)
            # no model reads this name yet: writing it changes nothing for readers
            with open(os.path.join(staging, location), "rb") as src, \
                    atomic_open(os.path.join(folder, location)) as dst:
                shutil.copyfileobj(src, dst, 1 << 24)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    committed = False
    try:
        with AtomicFiles() as files:
            with files.open(path) as f:
                f.write(proto.SerializeToString())
            if check_hint is not None:
                _check(files.staged(path), check_hint)
        committed = True
    finally:
        if location is not None:
            # the data file the model at `path` no longer reads: the old one after the
            # switch, the new one when the switch did not happen
            _remove_quietly(os.path.join(folder, old_location if committed else location))
        elif committed:
            # weights now inline: the data file the replaced model read is nobody's
            for name in names:
                if name in in_use:
                    _remove_quietly(os.path.join(folder, name))


def _data_files_in_use(path: str) -> set:
    """The external data locations the ONNX model now at `path` reads (empty when
    there is none, or it does not parse)."""
    import onnx

    try:
        old = onnx.load(path, load_external_data=False)
    except Exception:  # noqa: BLE001 - missing, unreadable or not a model: none in use
        return set()
    from .onnx_import import _model_tensor_protos

    return {e.value for t, _ in _model_tensor_protos(old) for e in t.external_data
            if e.key == "location"}


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _check(proto_or_path, explanation: str = "") -> None:
    """Run `onnx.checker.check_model(full_check=True)`.

    Raises:
        ConversionError: the checker refuses the model (with its message, then
            `explanation`; for a GroupNormalization, which ONNX deprecated at opsets
            18-20, or a sequence through Identity below opset 14, also the opset to
            export with instead).
    """
    onnx = _onnx()
    try:
        onnx.checker.check_model(proto_or_path, full_check=True)
    except Exception as e:  # noqa: BLE001 - ValidationError, InferenceError
        msg = str(e).strip()
        hint = ""
        if "GroupNormalization" in msg:
            hint = (f" (GroupNormalization needs opset {PER_CHANNEL_GROUP_NORM_OPSET} or "
                    f"later: ONNX deprecated the per-group scale and bias of opsets 18-20; "
                    f"export with to_onnx(model, opset={PER_CHANNEL_GROUP_NORM_OPSET}), "
                    "which spreads them per channel)")
        elif "Identity" in msg and "unsupported type: seq(" in msg:
            hint = (" (Identity takes sequences from opset 14 on; og.map_fn and og.scan "
                    "carry their rows as one; export with opset 14 or later)")
        raise ConversionError(f"exported model fails the ONNX checker{hint}: "
                              f"{msg[:2000]}{explanation}") from e


def _unique_node_names(graph) -> None:
    """Make the non-empty node names of `graph`, and of each of its subgraphs, unique
    within that graph: onnxruntime refuses a graph with two nodes of one name (it allows
    repeats across graphs, and empty names). The first node keeps a repeated name; later
    ones get `_1`, `_2`, ... (a suffix no node of the graph has)."""
    taken = {n.name for n in graph.node}
    seen = set()
    for node in graph.node:
        for sub in proto_subgraphs(node):
            _unique_node_names(sub)
        if not node.name:
            continue
        if node.name in seen:
            k = 1
            while f"{node.name}_{k}" in taken:
                k += 1
            node.name = f"{node.name}_{k}"
            taken.add(node.name)
        seen.add(node.name)


def _spread_group_norm_params(proto, source_opset: int) -> None:
    """Give every GroupNormalization of `proto` (at opset 21 or later) per-channel scale
    and bias where they are per group.

    Opsets 18-20 had one scale and one bias per group; 21 wants one per channel, and
    onnx's version converter only re-stamps the op. A value is taken as per group when
    it has num_groups values and the channel count differs, or, where either is unknown,
    when the model comes from opset 18-20. A constant with a known channel count is
    repeated (each group's value over its C / num_groups channels) into a new
    initializer; anything else is spread by nodes at run time (Unsqueeze, Expand to
    [num_groups, C / num_groups], Reshape to [C]).

    Raises:
        ConversionError: the channel count is known and not a multiple of num_groups.
    """
    if not any(n.op_type == "GroupNormalization" for n in _proto_nodes(proto.graph)):
        return
    names = _Names(proto.graph, tag="per_channel")
    _spread_in_graph(proto.graph, {}, {}, source_opset, names)


def _proto_nodes(graph):
    """Every NodeProto of `graph` and its subgraphs."""
    for node in graph.node:
        yield node
        for sub in proto_subgraphs(node):
            yield from _proto_nodes(sub)


def _value_shapes(graph) -> dict[str, list]:
    """name -> dims (None for an unknown dim) of the values `graph` states a shape for."""
    out = {}
    for v in list(graph.input) + list(graph.output) + list(graph.value_info):
        if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape"):
            out[v.name] = [d.dim_value if d.HasField("dim_value") else None
                           for d in v.type.tensor_type.shape.dim]
    for t in graph.initializer:
        out[t.name] = list(t.dims)
    return out


def _spread_in_graph(graph, outer_shapes: dict, outer_consts: dict, source_opset: int,
                     names) -> None:
    """`_spread_group_norm_params` for `graph` and its subgraphs, given the shapes and
    the constant initializers (name -> TensorProto) the enclosing graphs state."""
    from onnx import helper, numpy_helper

    shapes = {**outer_shapes, **_value_shapes(graph)}
    inputs = {v.name for v in graph.input}
    defined = inputs | {t.name for t in graph.initializer} | \
        {o for node in graph.node for o in node.output}
    # an outer constant stays one here unless this graph defines the name itself
    consts = {k: v for k, v in outer_consts.items() if k not in defined}
    consts.update((t.name, t) for t in graph.initializer if t.name not in inputs)
    nodes, replaced = [], set()
    for node in graph.node:
        for sub in proto_subgraphs(node):
            _spread_in_graph(sub, shapes, consts, source_opset, names)
        if node.op_type != "GroupNormalization" or node.domain not in ("", "ai.onnx") \
                or len(node.input) < 3:
            nodes.append(node)
            continue
        groups = next((int(helper.get_attribute_value(a)) for a in node.attribute
                       if a.name == "num_groups"), None)
        dims = shapes.get(node.input[0])
        channels = dims[1] if dims is not None and len(dims) >= 2 and dims[1] else None
        where = f"GroupNormalization node {node.name!r}"
        if groups is None or groups <= 0:
            nodes.append(node)  # the checker names what is wrong
            continue
        if channels is not None and channels % groups:
            raise ConversionError(f"{where}: {channels} channels are not a multiple of "
                                  f"num_groups={groups}")
        target = None  # [1, C / num_groups], built once for scale and bias
        for position in (1, 2):
            value = node.input[position]
            value_dims = shapes.get(value)
            size = int(np.prod(value_dims)) if value_dims is not None and \
                None not in value_dims else None
            if size is not None and size != groups:
                continue  # already per channel (or malformed: the checker says so)
            if size is not None and channels is not None:
                per_group = channels != groups
            else:
                per_group = source_opset < PER_CHANNEL_GROUP_NORM_OPSET
            if not per_group:
                continue
            spread = names.fresh(f"{value}__per_channel")
            if value in consts and channels is not None:
                data = numpy_helper.to_array(consts[value]).reshape(-1)
                graph.initializer.append(numpy_helper.from_array(
                    np.repeat(data, channels // groups), spread))
                replaced.add(value)
            else:
                if target is None:
                    target = names.fresh("group_norm_expand_shape")
                    nodes.extend(_expand_shape_nodes(node.input[0], groups, target, names))
                nodes.extend(_spread_nodes(value, target, spread, names))
            node.input[position] = spread
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    still_read = _read_names(graph)
    keep = [t for t in graph.initializer if t.name not in replaced or t.name in still_read]
    if len(keep) != len(graph.initializer):
        del graph.initializer[:]
        graph.initializer.extend(keep)


def _expand_shape_nodes(x: str, groups: int, out: str, names) -> list:
    """Nodes computing [1, C / groups] (int64) from the channel axis of `x`."""
    from onnx import helper

    def const(hint, values):
        name = names.fresh(hint)
        return name, helper.make_node("Constant", [], [name], value=helper.make_tensor(
            name, _onnx().TensorProto.INT64, [len(values)], values))

    one, one_node = const("one", [1])
    g, g_node = const("num_groups", [groups])
    channels, per_group = names.fresh("channels"), names.fresh("channels_per_group")
    return [one_node, g_node,
            helper.make_node("Shape", [x], [channels], start=1, end=2),
            helper.make_node("Div", [channels, g], [per_group]),
            helper.make_node("Concat", [one, per_group], [out], axis=0)]


def _spread_nodes(value: str, target: str, out: str, names) -> list:
    """Nodes turning per-group `value` [G] into per-channel `out` [C], given `target`
    = [1, C / G]: each group's value repeated over its channels."""
    from onnx import helper

    axes, column, grid, flat = (names.fresh(h) for h in ("axes", "per_group_column",
                                                         "per_group_grid", "flat_shape"))
    int64 = _onnx().TensorProto.INT64
    return [helper.make_node("Constant", [], [axes],
                             value=helper.make_tensor(axes, int64, [1], [1])),
            helper.make_node("Unsqueeze", [value, axes], [column]),
            helper.make_node("Expand", [column, target], [grid]),
            helper.make_node("Constant", [], [flat],
                             value=helper.make_tensor(flat, int64, [1], [-1])),
            helper.make_node("Reshape", [grid, flat], [out])]


def _read_names(graph) -> set[str]:
    """Every name the nodes of `graph` and its subgraphs read, and its outputs."""
    out = {v.name for v in graph.output}
    for node in graph.node:
        out.update(node.input)
        for sub in proto_subgraphs(node):
            out |= _read_names(sub)
    return out


# Metadata keys the importer fills from the ModelProto's header and the exporter does
# not write: the original producer's name and version stay in the .og metadata only,
# the exported file's producer is onegraph. (onnx.doc_string, onnx.graph_name,
# onnx.domain and onnx.model_version go back into the header: `_write_header`.)
PRODUCER_KEYS = ("onnx.producer_name", "onnx.producer_version")


def _write_header(proto, metadata: dict) -> None:
    """Fill `proto`'s header from the model's metadata and add the rest as
    metadata_props (sorted by key).

    `onnx.doc_string`, `onnx.graph_name`, `onnx.domain` and `onnx.model_version` become
    ModelProto.doc_string, graph.name, ModelProto.domain and ModelProto.model_version;
    `onnx.producer_name` / `onnx.producer_version` are not written (onegraph produced
    this file). A `onnx.model_version` that is not an integer within int64 cannot go in
    the header and is kept as a metadata_props entry, so nothing is lost. Never raises.
    """
    props = {}
    for key, value in metadata.items():
        key, value = str(key), str(value)
        if key == "onnx.doc_string":
            proto.doc_string = value
        elif key == "onnx.graph_name":
            proto.graph.name = value
        elif key == "onnx.domain":
            proto.domain = value
        elif key == "onnx.model_version" and _int64(value) is not None:
            proto.model_version = _int64(value)
        elif key not in PRODUCER_KEYS:
            props[key] = value
    for key in sorted(props):
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, props[key]


def _int64(text: str) -> int | None:
    """`text` as an int when it is a decimal integer within int64, else None."""
    try:
        value = int(text.strip())
    except ValueError:
        return None
    return value if -(2 ** 63) <= value < 2 ** 63 else None


# The IR version that introduced each newer element type (the comments on `Version`
# in onnx.proto, onnx 1.23): every other type ONNX has is in IR 4 (BFLOAT16) or older.
_TYPE_IR_VERSIONS = {
    "FLOAT8E4M3FN": 9, "FLOAT8E4M3FNUZ": 9, "FLOAT8E5M2": 9, "FLOAT8E5M2FNUZ": 9,
    "UINT4": 10, "INT4": 10,
    "FLOAT4E2M1": 11,
    "FLOAT8E8M0": 12,
    "UINT2": 13, "INT2": 13,
    "FLOAT6E2M3": 14, "FLOAT6E3M2": 14,
}

# Integer attributes of default-domain ops whose value is an element type (Cast's `to`,
# EyeLike's and the Random* ops' `dtype`, QuantizeLinear's `output_dtype`).
_TYPE_ATTRIBUTES = ("to", "dtype", "output_dtype")


@functools.lru_cache(maxsize=1)
def _type_ir_versions() -> dict[int, int]:
    """{TensorProto element type: the IR version that introduced it} for the newer
    types the installed onnx knows."""
    T = _onnx().TensorProto
    known = set(T.DataType.keys())
    return {T.DataType.Value(name): ir for name, ir in _TYPE_IR_VERSIONS.items()
            if name in known}


# IR 8 introduced the optional and sparse tensor types (and model-local functions,
# which the export does not write).
_IR8_TYPE_KINDS = frozenset({"optional_type", "sparse_tensor_type"})
# A model's opsets alone would allow IR 6 at opset 11 and IR 7 at opsets 12 to 14;
# IR 4 is the first in which initializers need not be graph inputs.
_OLDEST_IR_VERSION = 4


def _type_proto_elem_types(tp, out: set, kinds: set) -> None:
    """Add the element types a TypeProto mentions (through sequence, optional, map and
    sparse tensor types) to `out`, and the kinds of type it nests ("tensor_type",
    "optional_type", ...) to `kinds`."""
    while tp is not None:
        which = tp.WhichOneof("value")
        kinds.add(which)
        if which in ("tensor_type", "sparse_tensor_type"):
            out.add(getattr(tp, which).elem_type)
            return
        if which == "map_type":
            out.add(tp.map_type.key_type)
            tp = tp.map_type.value_type if tp.map_type.HasField("value_type") else None
        elif which in ("sequence_type", "optional_type"):
            inner = getattr(tp, which)
            tp = inner.elem_type if inner.HasField("elem_type") else None
        else:
            return


def _graph_elem_types(graph, out: set, kinds: set) -> None:
    """Add the element types `graph` and its subgraphs use to `out`: initializers
    (dense and sparse), inputs, outputs, value_info, tensor and type attributes, and
    the element-type attributes of default-domain ops (Cast's `to`, ...); and the kinds
    of type their TypeProtos nest to `kinds`."""
    for t in graph.initializer:
        out.add(t.data_type)
    for sp in graph.sparse_initializer:
        out.add(sp.values.data_type)
    for v in list(graph.input) + list(graph.output) + list(graph.value_info):
        if v.HasField("type"):
            _type_proto_elem_types(v.type, out, kinds)
    for node in graph.node:
        default_domain = node.domain in ("", "ai.onnx")
        for a in node.attribute:
            if a.HasField("t"):
                out.add(a.t.data_type)
            out.update(t.data_type for t in a.tensors)
            if a.HasField("sparse_tensor"):
                out.add(a.sparse_tensor.values.data_type)
            out.update(sp.values.data_type for sp in a.sparse_tensors)
            if a.HasField("tp"):
                _type_proto_elem_types(a.tp, out, kinds)
            for tp in a.type_protos:
                _type_proto_elem_types(tp, out, kinds)
            if default_domain and a.name in _TYPE_ATTRIBUTES and \
                    a.type == _onnx().AttributeProto.INT:
                out.add(a.i)
            if a.HasField("g"):
                _graph_elem_types(a.g, out, kinds)
            for sub in a.graphs:
                _graph_elem_types(sub, out, kinds)


def _ir_version_for(proto) -> int:
    """The IR version to write: the lowest one that has every opset `proto` imports,
    every element type it uses (see `_TYPE_IR_VERSIONS`) and every kind of type (IR 8
    for optional and sparse tensor types, and for model-local functions), and at least
    4. So an export at opset 11 is IR 6 and one at 12 to 14 IR 7, which runtimes of
    that time read, unless it needs more. Never raises: an opset the installed onnx
    does not know counts as IR 8."""
    from onnx import helper

    try:
        version = max(helper.find_min_ir_version_for(list(proto.opset_import),
                                                     ignore_unknown=True),
                      _OLDEST_IR_VERSION)
    except Exception:  # noqa: BLE001 - an opset onnx does not know
        version = 8
    types: set = set()
    kinds: set = set()
    _graph_elem_types(proto.graph, types, kinds)
    if len(proto.functions) or kinds & _IR8_TYPE_KINDS:
        version = max(version, 8)
    needs = _type_ir_versions()
    return max([version] + [needs[t] for t in types if t in needs])


def _version() -> str:
    from .. import __version__

    return __version__


__all__ = ["to_onnx", "dtype_to_onnx", "ONNX_EQUIVALENT", "EXTERNAL_DATA_THRESHOLD"]

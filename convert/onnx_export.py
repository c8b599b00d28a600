"""onegraph -> ONNX export: `to_onnx(model, path=None, opset=None) -> ModelProto`.

Nodes map one-to-one (same names, op types, attributes); constants and variables
become initializers; subgraph attributes become GraphProtos whose free names still
refer to the enclosing graphs (outer scope). Quantized integer tensors export as QDQ:
a node touching quantized tensors gets DequantizeLinear on its quantized inputs,
runs in float, and QuantizeLinear writes its quantized outputs. The result passes
`onnx.checker.check_model(full_check=True)`.
"""

from __future__ import annotations

import functools
import os
import warnings

import numpy as np

from ..errors import ConversionError
from ..format import AttrType, Container, DType, Graph, Model, TensorKind
from ..format.ir import attr_type_of
from ..ops import REGISTRY, TensorInfo
from .onnx_import import OMITTED_OUTPUT_PREFIX, _onnx

# onegraph-domain ops that have a direct ONNX equivalent: (domain, op) -> ONNX op.
ONNX_EQUIVALENT = {("onegraph", "ReadVariable"): "Identity"}

# Domains ONNX itself defines: their ops are written as they are (only the onegraph
# domain needs an equivalent or is refused).
_ONNX_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview", "ai.onnx.preview.training")

# Default target when a model records no default-domain opset.
DEFAULT_OPSET = 21

# Total weight bytes above which `to_onnx(path=...)` writes external data.
EXTERNAL_DATA_THRESHOLD = 2 ** 31

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
    (sequence/optional/map), or no type at all when the element type is unknown."""
    from onnx import helper

    if t.dtype is DType.UNDEFINED:
        vi = _onnx().ValueInfoProto()
        vi.name = t.name
        return vi
    shape = None
    if with_shape and t.shape is not None:
        shape = [d if d >= 0 else None for d in t.shape]
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
    def __init__(self):
        self.missing: dict[str, list] = {}
        self.graph_count = 0

    # -- inference of missing dtypes/shapes (for graph outputs and subgraph I/O) --

    @staticmethod
    def _infer(g: Graph) -> dict[int, TensorInfo]:
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

        for i, t in enumerate(g.tensors):
            if t.data is not None and t.kind in (TensorKind.CONSTANT, TensorKind.VARIABLE) \
                    and i not in producers:
                initializers.append(_array_to_tensor(t.data, t.name, t.dtype))

        for k, node in enumerate(g.nodes):
            where = f"graph {g.name!r} node {node.name!r} ({node.op_type})"
            domain = node.domain
            op_type = node.op_type
            if (domain, op_type) in ONNX_EQUIVALENT:
                op_type, domain = ONNX_EQUIVALENT[(domain, op_type)], ""
            elif domain not in _ONNX_DOMAINS:
                key = f"{domain}::{op_type}"
                entry = self.missing.setdefault(key, [0, node.name])
                entry[0] += 1
                continue
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
                if name.startswith(OMITTED_OUTPUT_PREFIX):
                    name = ""
                elif quant_node and is_quantized(i):
                    requant.append((f"{name}__float", i))
                    name = f"{name}__float"
                outs.append(name)
            attrs = {}
            op_def = REGISTRY.get(node.op_type, node.domain) \
                if REGISTRY.has(node.op_type, node.domain) else None
            for aname, value in node.attributes.items():
                if value is None:
                    continue
                spec = op_def.attr_spec(aname) if op_def is not None else None
                if domain == "" and op_type == "Optional" and aname == "type":
                    attrs[aname] = _type_proto_attribute(aname, value, where)
                    continue
                attrs[aname] = self.attribute(aname, value, spec, where)
            onode = helper.make_node(op_type, ins, outs, name=node.name, domain=domain)
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
                    not t.name.startswith(OMITTED_OUTPUT_PREFIX) and not is_quantized(i):
                extra_vi.append(_value_info(t))
        name = g.name or f"graph_{self.graph_count}"
        return helper.make_graph(nodes, name, inputs, outputs, initializer=initializers,
                                 value_info=extra_vi)

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


@functools.lru_cache(maxsize=None)
def _min_inputs(op_type: str, opset: int) -> int:
    """The fewest inputs a default-domain op's schema at `opset` allows (0 if unknown)."""
    from onnx import defs

    try:
        return int(defs.get_schema(op_type, opset, "").min_input)
    except Exception:  # noqa: BLE001 - SchemaError: not an ONNX op at this opset
        return 0


def _fix_for_opset(graph, opset: int) -> None:
    """Undo importer-side additions that older opsets do not allow, and give back the
    empty names of omitted optional inputs that an op still needs by position (Loop's
    condition), which the IR drops when they trail."""
    for node in graph.node:
        if node.domain in ("", "ai.onnx"):
            missing = _min_inputs(node.op_type, opset) - len(node.input)
            if missing > 0:
                node.input.extend([""] * missing)
        if node.op_type == "Split" and node.domain in ("", "ai.onnx") and opset < 18:
            keep = [a for a in node.attribute if a.name != "num_outputs"]
            if len(keep) != len(node.attribute):
                del node.attribute[:]
                node.attribute.extend(keep)
        for a in node.attribute:
            if a.HasField("g"):
                _fix_for_opset(a.g, opset)
            for sub in a.graphs:
                _fix_for_opset(sub, opset)


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


def _loosen_contradicted_shapes(proto) -> None:
    """Leave unknown the main-graph dims that ONNX's shape inference contradicts.

    onnx 1.23 counts one window too many for ceil_mode pools whose last window would
    start in the padding (onnxruntime and onegraph skip it): the true shape stated there
    fails `check_model(full_check=True)`. Each dim of an activation or output whose
    stated value differs from the one ONNX infers from the inputs alone is written as
    an unknown dim instead, so the file states nothing false and still checks. Never
    raises: when inference fails the shapes stay as they are.
    """
    graph = proto.graph

    def stated():  # taken afresh: the value_info messages are re-added below
        return [v for v in list(graph.value_info) + list(graph.output)
                if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")]

    if not stated() or proto.ByteSize() > 1 << 30:
        return
    onnx = _onnx()
    saved_info = list(graph.value_info)
    saved_outputs = [onnx.TypeProto() for _ in graph.output]
    for keep, out in zip(saved_outputs, graph.output):
        keep.CopyFrom(out.type)
        if out.type.HasField("tensor_type"):
            out.type.tensor_type.ClearField("shape")
    del graph.value_info[:]
    try:
        inferred = onnx.shape_inference.infer_shapes(proto)
    except Exception:  # noqa: BLE001 - inference is only a cross-check here
        inferred = None
    finally:
        graph.value_info.extend(saved_info)
        for keep, out in zip(saved_outputs, graph.output):
            out.type.CopyFrom(keep)
    if inferred is None:
        return
    found = {v.name: v.type.tensor_type.shape for v in
             list(inferred.graph.value_info) + list(inferred.graph.output)
             if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")}
    for v in stated():
        theirs = found.get(v.name)
        ours = v.type.tensor_type.shape
        if theirs is None:
            continue
        if len(theirs.dim) != len(ours.dim):
            v.type.tensor_type.ClearField("shape")
            continue
        for mine, other in zip(ours.dim, theirs.dim):
            if mine.HasField("dim_value") and other.HasField("dim_value") \
                    and mine.dim_value != other.dim_value:
                mine.Clear()


def _missing_domain_opsets(model: Model) -> dict[str, int]:
    """Opset versions for the ONNX domains (ai.onnx.ml, ...) whose ops the model uses
    but does not import (a graph built in Python rather than imported): the newest
    `since_version` among the ops it uses there, the oldest opset that has them all."""
    need: dict[str, int] = {}
    for g in model.all_graphs():
        for node in g.nodes:
            domain = node.domain
            if domain in ("", "ai.onnx") or domain not in _ONNX_DOMAINS \
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
            *, external_data_threshold: int = EXTERNAL_DATA_THRESHOLD,
            check: bool = True):
    """Convert a Model to an ONNX ModelProto (and write it to `path` if given).

    Args:
        model: the model (its main graph is exported; subgraphs inline as attributes).
        path: where to save the `.onnx` file. When the initializers total more than
            `external_data_threshold` bytes (2 GiB by default) they are written as one
            external data file, `<basename>.data`, next to `path`, and the returned
            proto refers to it.
        opset: target default-domain opset; the model's own opset is converted to it
            with ONNX's version converter. Default: the model's recorded opset.
        check: run `onnx.checker.check_model(full_check=True)` on the result.

    Raises:
        ConversionError: ops of the onegraph domain without an ONNX equivalent (one
            error listing all of them), an attribute or tensor that ONNX cannot hold,
            a failed opset conversion, or a result the ONNX checker rejects.
    """
    onnx = _onnx()
    from onnx import helper

    exporter = _Exporter()
    graph_proto = exporter.graph(model.graph, True)
    if exporter.missing:
        parts = [f"{op} x{count} (first: node {first!r})"
                 for op, (count, first) in exporter.missing.items()]
        raise ConversionError("ops without an ONNX equivalent: " + ", ".join(parts))
    source_opset = model.opset_imports.get("", model.opset_imports.get("ai.onnx"))
    if source_opset is None:
        source_opset = DEFAULT_OPSET
    opsets = [helper.make_opsetid("", int(source_opset))]
    for domain, version in model.opset_imports.items():
        if domain not in ("", "ai.onnx", "onegraph"):
            opsets.append(helper.make_opsetid(domain, int(version)))
    for domain, version in sorted(_missing_domain_opsets(model).items()):
        opsets.append(helper.make_opsetid(domain, version))
    proto = helper.make_model(graph_proto, opset_imports=opsets,
                              producer_name="onegraph", producer_version=_version())
    _fix_for_opset(proto.graph, int(source_opset))
    _complete_output_types(proto)
    for key, value in sorted(model.metadata.items()):
        entry = proto.metadata_props.add()
        entry.key, entry.value = str(key), str(value)
    proto.ir_version = _ir_version_for(proto)
    if opset is not None and int(opset) != int(source_opset):
        from onnx import version_converter

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                proto = version_converter.convert_version(proto, int(opset))
        except Exception as e:  # noqa: BLE001
            raise ConversionError(f"cannot convert from opset {source_opset} to {opset}: "
                                  f"{str(e).strip().splitlines()[0] if str(e).strip() else e}"
                                  ) from e
        _fix_for_opset(proto.graph, int(opset))
        proto.ir_version = _ir_version_for(proto)
    _loosen_contradicted_shapes(proto)
    external = path is not None and _weight_bytes(proto.graph) > external_data_threshold
    if check and not external:
        _check(proto)
    if path is not None:
        path = os.fspath(path)
        try:
            if external:
                location = os.path.basename(path) + ".data"
                onnx.save_model(proto, path, save_as_external_data=True,
                                all_tensors_to_one_file=True, location=location,
                                size_threshold=0, convert_attribute=False)
            else:
                onnx.save_model(proto, path)
        except OSError as e:
            raise ConversionError(f"cannot write {path}: {e}") from e
        if check and external:
            _check(path)
    return proto


def _check(proto_or_path) -> None:
    onnx = _onnx()
    try:
        onnx.checker.check_model(proto_or_path, full_check=True)
    except Exception as e:  # noqa: BLE001 - ValidationError, InferenceError
        msg = str(e).strip()
        raise ConversionError(f"exported model fails the ONNX checker: {msg[:2000]}") from e


def _ir_version_for(proto) -> int:
    from onnx import helper

    try:
        opsets = [(o.domain, o.version) for o in proto.opset_import]
        return max(helper.find_min_ir_version_for(opsets, ignore_unknown=True), 8)
    except Exception:  # noqa: BLE001
        return 8


def _version() -> str:
    from .. import __version__

    return __version__


__all__ = ["to_onnx", "dtype_to_onnx", "ONNX_EQUIVALENT", "EXTERNAL_DATA_THRESHOLD"]

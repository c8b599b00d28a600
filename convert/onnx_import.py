"""ONNX -> onegraph import: `from_onnx(path_or_proto) -> Model`.

The mapping is one-to-one: every ONNX node becomes one IR node with the same name,
op type, domain and attributes; initializers become CONSTANT tensors; subgraph
attributes (If/Loop/Scan bodies) become nested `Graph` objects whose free names refer
to the enclosing graphs by name (ONNX outer-scope semantics, which the Session
implements). Models older than opset 13 are upgraded with ONNX's version converter,
after batched opset-8 Scans are spelled as Loops (`onnx_legacy`), which it gets wrong.

Everything that can go wrong with the input is reported as one `ConversionError`
naming the node or tensor at fault: unreadable bytes, dangling tensor names, attribute
types that contradict the op definition, external data outside the model's folder,
and (all at once, with counts) every op the registry does not know.
"""

from __future__ import annotations

import collections
import os
import warnings

import numpy as np

from ..errors import ConversionError, FormatError, OpAttributeError
from ..format import AttrType, Container, DType, Graph, Model, TensorKind, TypedList
from ..format.ir import attr_type_of
from ..ops import REGISTRY
from .onnx_legacy import needs_scan_rewrite, rewrite_batched_scans

# The oldest default-domain opset whose semantics the kernels implement; older models
# are upgraded to this version first.
MIN_OPSET = 13

# Prefix of the placeholder tensors created for omitted (empty-named) node outputs
# that are followed by a present output; the exporter writes them back as "".
OMITTED_OUTPUT_PREFIX = "__og_omitted__"

_DEFAULT_DOMAINS = ("", "ai.onnx")


def _onnx():
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - depends on environment
        raise ConversionError("ONNX conversion needs the `onnx` package "
                              "(pip install onegraph[onnx])") from e
    return onnx


# --------------------------------------------------------------------------- dtypes

def dtype_from_onnx(elem_type: int, where: str = "") -> DType:
    """Map an ONNX TensorProto element type to a DType.

    Raises:
        ConversionError: the type has no onegraph equivalent (complex, float6...).
    """
    onnx = _onnx()
    T = onnx.TensorProto
    table = {
        T.UNDEFINED: DType.UNDEFINED, T.FLOAT: DType.FLOAT32, T.FLOAT16: DType.FLOAT16,
        T.BFLOAT16: DType.BFLOAT16, T.DOUBLE: DType.FLOAT64, T.INT8: DType.INT8,
        T.UINT8: DType.UINT8, T.INT16: DType.INT16, T.UINT16: DType.UINT16,
        T.INT32: DType.INT32, T.UINT32: DType.UINT32, T.INT64: DType.INT64,
        T.UINT64: DType.UINT64, T.BOOL: DType.BOOL, T.STRING: DType.STRING,
    }
    # Low-precision types (schema 1.1), by name: an older onnx may lack some of them.
    for name, dtype in _LOW_PRECISION_NAMES.items():
        if name in T.DataType.keys():
            table[T.DataType.Value(name)] = dtype
    try:
        return table[elem_type]
    except KeyError:
        name = T.DataType.Name(elem_type) if elem_type in T.DataType.values() else elem_type
        raise ConversionError(f"{where}: element type {name} is not supported") from None


# ONNX TensorProto.DataType name -> DType of the types onegraph keeps as ml_dtypes arrays
# (one byte per element; ONNX packs INT4/UINT4/FLOAT4E2M1 two and INT2/UINT2 four to a
# byte in raw_data, which numpy_helper.to_array / from_array unpack and pack).
_LOW_PRECISION_NAMES = {
    "FLOAT8E4M3FN": DType.FLOAT8E4M3FN, "FLOAT8E4M3FNUZ": DType.FLOAT8E4M3FNUZ,
    "FLOAT8E5M2": DType.FLOAT8E5M2, "FLOAT8E5M2FNUZ": DType.FLOAT8E5M2FNUZ,
    "UINT4": DType.UINT4, "INT4": DType.INT4, "FLOAT4E2M1": DType.FLOAT4E2M1,
    "FLOAT8E8M0": DType.FLOAT8E8M0, "UINT2": DType.UINT2, "INT2": DType.INT2,
}


# What an untyped value is recorded as: (dtype, shape, containers).
_UNTYPED = (DType.UNDEFINED, None, ())

_CONTAINER_FIELDS = {"sequence_type": Container.SEQUENCE, "optional_type": Container.OPTIONAL,
                     "map_type": None}
_MAP_KEYS = {7: Container.MAP_INT64, 8: Container.MAP_STRING}  # TensorProto INT64, STRING


def _type_info(type_proto, where: str) -> tuple:
    """(dtype, shape, containers) of a TypeProto.

    Sequence, optional and map types are unwrapped down to their tensor element (a
    map's values), recording the wrappers outermost first (a sequence of float tensors:
    FLOAT32, its shape, (SEQUENCE,); ZipMap's output: FLOAT32, no shape, (SEQUENCE,
    MAP_INT64)); maps with keys other than int64/string, or a missing type, give
    `_UNTYPED`, which the Session passes through as fed.
    """
    containers = []
    while type_proto is not None and type_proto.WhichOneof("value") in _CONTAINER_FIELDS:
        field = type_proto.WhichOneof("value")
        inner = getattr(type_proto, field)
        if field == "map_type":
            key = _MAP_KEYS.get(inner.key_type)
            if key is None:  # keys other than int64 / string: passed through untyped
                return _UNTYPED
            containers.append(key)
            type_proto = inner.value_type if inner.HasField("value_type") else None
            continue
        containers.append(_CONTAINER_FIELDS[field])
        type_proto = inner.elem_type if inner.HasField("elem_type") else None
    if type_proto is None or type_proto.WhichOneof("value") != "tensor_type":
        return DType.UNDEFINED, None, tuple(containers)
    tt = type_proto.tensor_type
    dtype = dtype_from_onnx(tt.elem_type, where) if tt.elem_type else DType.UNDEFINED
    if not tt.HasField("shape"):
        return dtype, None, tuple(containers)
    dims = tuple(d.dim_value if d.WhichOneof("value") == "dim_value" else -1
                 for d in tt.shape.dim)
    return dtype, dims, tuple(containers)


def _add_typed(g: Graph, name: str, typed: tuple) -> int:
    """Add tensor `name` with a (dtype, shape, containers) triple; returns its index."""
    dtype, shape, containers = typed
    return g.add_tensor(name, dtype, shape, containers=containers)


# --------------------------------------------------------------------------- loading

def _check_external_locations(graph_protos, base_dir: str | None) -> None:
    """Refuse external data whose location escapes the model's folder.

    Raises:
        ConversionError: a location is absolute, goes through '..', resolves (through
            symlinks) outside `base_dir`, or the model has external data but was not
            loaded from a file.
    """
    for g in graph_protos:
        for t in _all_tensor_protos(g):
            if t.data_location != 1:  # TensorProto.EXTERNAL
                continue
            info = {e.key: e.value for e in t.external_data}
            loc = info.get("location", "")
            where = f"initializer {t.name!r}: external data location {loc!r}"
            if base_dir is None:
                raise ConversionError(f"{where}: model has external data but was not "
                                      "loaded from a file")
            if not loc or os.path.isabs(loc) or loc.startswith(("/", "\\")) or \
                    ".." in loc.replace("\\", "/").split("/") or ":" in loc:
                raise ConversionError(f"{where} escapes the model's folder")
            root = os.path.realpath(base_dir)
            full = os.path.realpath(os.path.join(root, loc))
            if os.path.commonpath([root, full]) != root:
                raise ConversionError(f"{where} resolves outside the model's folder")
            if not os.path.isfile(full):
                raise ConversionError(f"{where}: file not found")
            try:
                offset = int(info.get("offset", 0) or 0)
                length = int(info["length"]) if "length" in info else None
            except ValueError:
                raise ConversionError(f"{where}: bad offset/length") from None
            size = os.path.getsize(full)
            if offset < 0 or offset > size or (length is not None and (
                    length < 0 or offset + length > size)):
                raise ConversionError(f"{where}: offset/length out of the file's "
                                      f"{size} bytes")


def _all_tensor_protos(graph):
    """Every TensorProto of a graph and its subgraphs (initializers, tensor attrs)."""
    yield from graph.initializer
    for sp in graph.sparse_initializer:
        yield sp.values
        yield sp.indices
    for node in graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            if a.HasField("g"):
                yield from _all_tensor_protos(a.g)
            for sub in a.graphs:
                yield from _all_tensor_protos(sub)


def _load_proto(path_or_proto):
    """Parse/validate the input and return (ModelProto with data loaded, base_dir)."""
    onnx = _onnx()
    base_dir = None
    if isinstance(path_or_proto, onnx.ModelProto):
        proto = onnx.ModelProto()
        proto.CopyFrom(path_or_proto)
    elif isinstance(path_or_proto, (bytes, bytearray, memoryview)):
        proto = _parse_bytes(bytes(path_or_proto), "<bytes>")
    elif isinstance(path_or_proto, (str, os.PathLike)):
        path = os.fspath(path_or_proto)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ConversionError(f"cannot read {path}: {e}") from e
        proto = _parse_bytes(data, path)
        base_dir = os.path.dirname(os.path.abspath(path))
    else:
        raise ConversionError(f"from_onnx needs a path, bytes or ModelProto, got "
                              f"{type(path_or_proto).__name__}")
    _check_external_locations([proto.graph], base_dir)
    if any(t.data_location == 1 for t in _all_tensor_protos(proto.graph)):
        from onnx.external_data_helper import load_external_data_for_model

        try:
            load_external_data_for_model(proto, base_dir)
        except Exception as e:  # noqa: BLE001 - onnx raises many types here
            raise ConversionError(f"cannot read external data: {e}") from e
    return proto, base_dir


def _parse_bytes(data: bytes, where: str):
    onnx = _onnx()
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise ConversionError(f"{where}: not a valid ONNX model (protobuf parse failed: "
                              f"{e})") from e
    if not proto.HasField("graph"):
        raise ConversionError(f"{where}: not a valid ONNX model (no graph)")
    return proto


def _default_opset(proto) -> int | None:
    for o in proto.opset_import:
        if o.domain in _DEFAULT_DOMAINS:
            return int(o.version)
    return None


def _upgrade(proto):
    """Inline local functions and upgrade opsets older than MIN_OPSET."""
    onnx = _onnx()  # a clear ConversionError when onnx is not installed
    if len(proto.functions):
        try:
            from onnx import inliner

            proto = inliner.inline_local_functions(proto)
        except Exception as e:  # noqa: BLE001
            raise ConversionError(f"cannot inline the model's local functions: {e}") from e
    version = _default_opset(proto)
    if version is not None and version < MIN_OPSET:
        from onnx import version_converter

        if needs_scan_rewrite(proto, version):
            proto = rewrite_batched_scans(proto)

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                proto = version_converter.convert_version(proto, MIN_OPSET)
        except Exception as e:  # noqa: BLE001 - the converter raises RuntimeError etc.
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ConversionError(f"model uses opset {version}, older than {MIN_OPSET}, "
                                  f"and ONNX's version converter cannot upgrade it: "
                                  f"{msg}") from e
        del onnx
    return proto


def _shaped_value_names(graph) -> set[str]:
    """Names the main graph of a proto gives a shape itself (value_info, inputs,
    outputs), before any inference."""
    return {vi.name for vi in list(graph.value_info) + list(graph.input) + list(graph.output)
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")}


def _prefer_own_shapes(graph: Graph, stated: set[str]) -> None:
    """Make onegraph's own shape inference win over onnx's where they disagree.

    Shapes that only ONNX's shape inference supplied (the model did not state them) are
    hints: each such activation takes the shape onegraph's rules infer for it (what its
    kernels produce), dimension by dimension, and keeps the hint where the rules know
    nothing. onnx 1.23 counts one window too many for ceil_mode pools whose last window
    would start in the padding, which onnxruntime and the kernels skip. Never raises: if
    onegraph's inference fails, the hints stay as they were.
    """
    from ..errors import OneGraphError
    from ..ops.inference import infer_graph

    hinted = {i: t.shape for i, t in enumerate(graph.tensors)
              if t.shape is not None and t.data is None and not t.containers
              and t.name not in stated}
    if not hinted:
        return
    for i in hinted:
        graph.tensors[i].shape = None
    try:
        infos = infer_graph(graph)
    except OneGraphError:
        infos = None
    for i, hint in hinted.items():
        own = None if infos is None or infos[i] is None else infos[i].shape
        if own is not None and len(own) == len(hint):
            hint = tuple(h if o is None else int(o) for o, h in zip(own, hint))
        graph.tensors[i].shape = hint


def _infer_shapes(proto):
    """Best-effort ONNX shape inference (fills value_info); the input on failure."""
    onnx = _onnx()
    try:
        if proto.ByteSize() > 1 << 30:
            return proto
        return onnx.shape_inference.infer_shapes(proto)
    except Exception:  # noqa: BLE001 - inference is only a hint
        return proto


# --------------------------------------------------------------------------- attributes

_SPEC_TYPES = {
    "int": AttrType.INT, "float": AttrType.FLOAT, "string": AttrType.STRING,
    "ints": AttrType.INTS, "floats": AttrType.FLOATS, "strings": AttrType.STRINGS,
    "tensor": AttrType.TENSOR, "graph": AttrType.GRAPH, "graphs": AttrType.GRAPHS,
}


def _attr_value(attr, where: str, convert_graph):
    onnx = _onnx()
    A = onnx.AttributeProto
    t = attr.type
    if attr.ref_attr_name:
        raise ConversionError(f"{where}: attribute {attr.name!r} refers to a function "
                              "attribute, which is only valid inside functions")
    try:
        if t == A.INT:
            return int(attr.i)
        if t == A.FLOAT:
            return float(attr.f)
        if t == A.STRING:
            return attr.s.decode("utf-8")
        if t == A.INTS:
            return TypedList(AttrType.INTS, [int(v) for v in attr.ints])
        if t == A.FLOATS:
            return TypedList(AttrType.FLOATS, [float(v) for v in attr.floats])
        if t == A.STRINGS:
            return TypedList(AttrType.STRINGS, [s.decode("utf-8") for s in attr.strings])
        if t == A.TENSOR:
            return _tensor_to_array(attr.t, f"{where} attribute {attr.name!r}")
        if t == A.GRAPH:
            return convert_graph(attr.g)
        if t == A.GRAPHS:
            return TypedList(AttrType.GRAPHS, [convert_graph(g) for g in attr.graphs])
        if t == A.TYPE_PROTO:  # (Optional's `type`): kept as protobuf text
            from google.protobuf import text_format

            return text_format.MessageToString(attr.tp, as_one_line=True)
    except UnicodeDecodeError as e:
        raise ConversionError(f"{where}: attribute {attr.name!r} is not valid UTF-8") from e
    name = A.AttributeType.Name(t) if t in A.AttributeType.values() else t
    raise ConversionError(f"{where}: attribute {attr.name!r} has unsupported type {name}")


def _tensor_to_array(tensor_proto, where: str) -> np.ndarray:
    onnx = _onnx()
    from onnx import numpy_helper

    dtype_from_onnx(tensor_proto.data_type, where)  # refuses unsupported types
    try:
        array = numpy_helper.to_array(tensor_proto)
    except Exception as e:  # noqa: BLE001 - malformed raw data etc.
        raise ConversionError(f"{where}: cannot decode tensor data: {e}") from e
    del onnx
    dims = tuple(int(d) for d in tensor_proto.dims)
    if array.shape != dims:
        if array.size != int(np.prod(dims, dtype=np.int64)):
            raise ConversionError(f"{where}: data has {array.size} elements, dims {list(dims)}")
        array = array.reshape(dims)
    if array.dtype.kind in "SU":
        array = np.array([v.decode("utf-8") if isinstance(v, bytes) else str(v)
                          for v in array.reshape(-1)], dtype=object).reshape(array.shape)
    elif array.dtype == object:
        array = np.array([v.decode("utf-8") if isinstance(v, bytes) else v
                          for v in array.reshape(-1)], dtype=object).reshape(array.shape)
    else:
        dtype = dtype_from_onnx(tensor_proto.data_type, where)
        if dtype.raw_storage:  # astype to the raw storage would convert, not keep, bits
            raise ConversionError(f"{where}: {dtype.name} data needs the ml_dtypes package")
        if array.dtype != dtype.numpy:
            array = array.astype(dtype.numpy)
    # (np.ascontiguousarray would turn a 0-d array into a 1-d one)
    return array if array.flags.c_contiguous else array.copy(order="C")


def _check_attr_types(op, attrs: dict, where: str) -> None:
    for name, value in attrs.items():
        spec = op.attr_spec(name)
        if spec is None:
            continue
        want = _SPEC_TYPES[spec.type]
        try:
            got = attr_type_of(value, where)
        except FormatError:
            got = AttrType.UNDEFINED
        if got is not want:
            raise ConversionError(f"{where}: attribute {name!r} must be {spec.type}, "
                                  f"got {got.name.lower()}")


# --------------------------------------------------------------------------- graphs

class _Importer:
    def __init__(self, opset: int | None):
        self.opset = opset
        self.unsupported: collections.OrderedDict = collections.OrderedDict()
        self.graph_count = 0

    def graph(self, gp, outer: list[dict[str, tuple]], is_main: bool) -> Graph:
        """Convert one GraphProto; `outer` holds name -> (dtype, shape, containers) per
        enclosing scope."""
        self.graph_count += 1
        gname = gp.name or ("main" if is_main else f"subgraph_{self.graph_count}")
        g = Graph(gname)
        where_g = f"graph {gname!r}"
        info: dict[str, tuple] = {}
        for vi in list(gp.value_info) + list(gp.input) + list(gp.output):
            if vi.name:
                info[vi.name] = _type_info(vi.type if vi.HasField("type") else None,
                                           f"{where_g} value {vi.name!r}")
        initializer_names = set()
        for init in gp.initializer:
            if not init.name:
                raise ConversionError(f"{where_g}: initializer without a name")
            if init.name in initializer_names:
                raise ConversionError(f"{where_g}: initializer {init.name!r} defined twice")
            initializer_names.add(init.name)
            array = _tensor_to_array(init, f"{where_g} initializer {init.name!r}")
            dtype = dtype_from_onnx(init.data_type, f"initializer {init.name!r}")
            g.add_tensor(init.name, dtype, array.shape, TensorKind.CONSTANT, array)
        if len(gp.sparse_initializer):
            for sp in gp.sparse_initializer:
                name = sp.values.name
                dense = _sparse_to_dense(sp, f"{where_g} sparse initializer {name!r}")
                g.add_tensor(name, DType.from_numpy(dense.dtype), dense.shape,
                             TensorKind.CONSTANT, dense)
                initializer_names.add(name)
        for vi in gp.input:
            if vi.name in initializer_names:
                g.inputs.append(g.find_tensor(vi.name))  # constant with a default
                continue
            if g.find_tensor(vi.name) is not None:
                raise ConversionError(f"{where_g}: input {vi.name!r} declared twice")
            dtype, shape, containers = info.get(vi.name, _UNTYPED)
            g.add_input(vi.name, dtype, shape, containers)

        produced = set()
        for node in gp.node:
            for o in node.output:
                if o:
                    if o in produced or o in initializer_names or \
                            g.find_tensor(o) is not None:
                        raise ConversionError(
                            f"{where_g}: node {node.name!r} ({node.op_type}) output {o!r} "
                            "is already defined")
                    produced.add(o)
        local = set(initializer_names) | produced | {vi.name for vi in gp.input}
        scope = [dict(info)] + outer
        for k, node in enumerate(gp.node):
            where = f"node {node.name or k!r} ({node.op_type})"
            ins = []
            for name in node.input:
                if name == "":
                    ins.append(-1)
                    continue
                idx = g.find_tensor(name)
                if idx is None:
                    if name in produced:
                        idx = _add_typed(g, name, info.get(name, _UNTYPED))
                    else:
                        found = next((s[name] for s in outer if name in s), None)
                        if found is None:
                            raise ConversionError(
                                f"{where_g}: {where} input {name!r} names no tensor, "
                                "initializer or graph input")
                        idx = _add_typed(g, name, found)  # outer-scope reference
                ins.append(idx)
            outs = []
            present = [i for i, o in enumerate(node.output) if o]
            last = present[-1] if present else -1
            for i, name in enumerate(node.output):
                if i > last:
                    break
                if not name:
                    name = f"{OMITTED_OUTPUT_PREFIX}{node.name or k}_{i}"
                    while g.find_tensor(name) is not None:
                        name += "_"
                idx = g.find_tensor(name)
                if idx is None:
                    idx = _add_typed(g, name, info.get(name, _UNTYPED))
                outs.append(idx)
            domain = "" if node.domain in _DEFAULT_DOMAINS else node.domain
            inner_scope = [self._scope_names(g, info, local)] + outer
            attrs = {}
            for a in node.attribute:
                if a.name in attrs:
                    raise ConversionError(f"{where_g}: {where}: attribute {a.name!r} "
                                          "given twice")
                attrs[a.name] = _attr_value(
                    a, f"{where_g}: {where}",
                    lambda sub: self.graph(sub, inner_scope, False))
            self._fix_attrs(node, attrs, domain)
            if REGISTRY.has(node.op_type, domain):
                op = REGISTRY.get(node.op_type, domain)
                _check_attr_types(op, attrs, f"{where_g}: {where}")
                try:
                    op.resolve_attrs(attrs, "")
                except OpAttributeError as e:
                    raise ConversionError(f"{where_g}: {where}: {e}") from e
            else:
                key = f"{domain}::{node.op_type}" if domain else node.op_type
                entry = self.unsupported.setdefault(key, [0, node.name or f"#{k}"])
                entry[0] += 1
            g.nodes.append(_make_node(node, ins, outs, attrs, domain, k))
        for vi in gp.output:
            idx = g.find_tensor(vi.name)
            if idx is None:
                found = next((s[vi.name] for s in outer if vi.name in s), None)
                if found is None:
                    raise ConversionError(f"{where_g}: output {vi.name!r} names no tensor")
                idx = _add_typed(g, vi.name, found)
            t = g.tensors[idx]
            dtype, shape, containers = info.get(vi.name, _UNTYPED)
            if containers and not t.containers:
                t.containers = containers
            if t.dtype is DType.UNDEFINED:
                t.dtype = dtype
            if t.shape is None and shape is not None:
                t.shape = shape
            g.outputs.append(idx)
        del scope
        return g

    @staticmethod
    def _scope_names(g: Graph, info: dict, local: set) -> dict:
        out = {}
        for name in local:
            idx = g.find_tensor(name)
            if idx is not None:
                t = g.tensors[idx]
                out[name] = (t.dtype, t.shape, t.containers)
            else:
                out[name] = info.get(name, _UNTYPED)
        return out

    def _fix_attrs(self, node, attrs: dict, domain: str) -> None:
        """Make implicit pre-opset-18 facts explicit where the kernels need them."""
        if domain == "" and node.op_type == "Split" and "num_outputs" not in attrs \
                and "split" not in attrs and (len(node.input) < 2 or not node.input[1]) \
                and (self.opset or 0) < 18:
            attrs["num_outputs"] = len(node.output)


def _sparse_to_dense(sp, where: str) -> np.ndarray:
    values = _tensor_to_array(sp.values, where)
    indices = _tensor_to_array(sp.indices, where).astype(np.int64)
    dims = tuple(int(d) for d in sp.dims)
    dense = np.zeros(int(np.prod(dims)), values.dtype)
    if indices.ndim == 2:
        indices = np.ravel_multi_index(tuple(indices.T), dims) if len(indices) else indices
    try:
        dense[indices.reshape(-1)] = values.reshape(-1)
    except (IndexError, ValueError) as e:
        raise ConversionError(f"{where}: indices out of range: {e}") from e
    return dense.reshape(dims)


def _make_node(node, ins, outs, attrs, domain, k):
    from ..format import Node

    return Node(node.op_type, ins, outs, attrs, node.name or f"{node.op_type}_{k}", domain)


# --------------------------------------------------------------------------- public API

def from_onnx(path_or_proto, *, check_ops: bool = True) -> Model:
    """Convert an ONNX model (file path, serialized bytes or ModelProto) to a Model.

    Initializers become CONSTANT tensors (a graph input that is also an initializer
    stays in `graph.inputs` as a constant default that a feed may override); symbolic
    dims become -1; opsets older than 13 are upgraded with ONNX's version converter;
    a "serving" signature maps each non-initializer graph input and each graph output
    by name. External data is read only from files inside the model's own folder.

    Args:
        path_or_proto: an `.onnx` path, the model's bytes, or an `onnx.ModelProto`.
        check_ops: refuse models using ops the registry does not know (default).

    Raises:
        ConversionError: the bytes do not parse; a node input names no tensor; an
            attribute has the wrong type for its op or is unknown; external data
            escapes the model's folder; the opset cannot be upgraded; or ops are
            unsupported (one error listing every unsupported op with its count and
            first node).
    """
    proto, _ = _load_proto(path_or_proto)
    proto = _upgrade(proto)
    stated = _shaped_value_names(proto.graph)
    proto = _infer_shapes(proto)
    opset = _default_opset(proto)
    importer = _Importer(opset)
    try:
        main = importer.graph(proto.graph, [], True)
    except FormatError as e:
        raise ConversionError(str(e)) from e
    _prefer_own_shapes(main, stated)
    if check_ops and importer.unsupported:
        parts = [f"{op} x{count} (first: node {first!r})"
                 for op, (count, first) in importer.unsupported.items()]
        raise ConversionError(f"{len(parts)} unsupported op type(s): " + ", ".join(parts))
    opsets = {("" if o.domain in _DEFAULT_DOMAINS else o.domain): int(o.version)
              for o in proto.opset_import}
    metadata = {p.key: p.value for p in proto.metadata_props}
    for key, value in (("onnx.producer_name", proto.producer_name),
                       ("onnx.producer_version", proto.producer_version),
                       ("onnx.doc_string", proto.doc_string),
                       ("onnx.graph_name", proto.graph.name)):
        if value:
            metadata.setdefault(key, value)
    model = Model(graphs=[main], opset_imports=opsets, metadata=metadata,
                  producer="onegraph.convert.from_onnx")
    constant_inputs = {i for i in main.inputs
                       if main.tensors[i].kind is TensorKind.CONSTANT}
    model.add_signature(
        "serving",
        inputs={main.tensors[i].name: i for i in main.inputs if i not in constant_inputs},
        outputs={main.tensors[i].name: i for i in main.outputs})
    try:
        model.lint()
    except FormatError as e:
        raise ConversionError(f"imported model is inconsistent: {e}") from e
    return model


def unsupported_ops(path_or_proto) -> dict[str, tuple[int, str]]:
    """Ops of an ONNX model that the registry lacks: {op: (count, first node name)}.

    Raises:
        ConversionError: the model cannot be read or is malformed (see `from_onnx`).
    """
    proto, _ = _load_proto(path_or_proto)
    proto = _upgrade(proto)
    importer = _Importer(_default_opset(proto))
    importer.graph(proto.graph, [], True)
    return {k: (v[0], v[1]) for k, v in importer.unsupported.items()}

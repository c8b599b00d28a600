"""ONNX -> onegraph import: `from_onnx(path_or_proto) -> Model`.

The mapping is one-to-one: every ONNX node becomes one IR node with the same name,
op type, domain and attributes; initializers become CONSTANT tensors; subgraph
attributes (If/Loop/Scan bodies) become nested `Graph` objects whose free names refer
to the enclosing graphs by name (ONNX outer-scope semantics, which the Session
implements). Models older than opset 13 are upgraded with ONNX's version converter,
after batched opset-8 Scans are spelled as Loops (`onnx_legacy`), which it gets wrong.

Everything that can go wrong with the input is reported as one `ConversionError`
naming the node or tensor at fault: unreadable bytes, ambiguous or unknown opset_import
entries, dangling tensor names, node arities and attribute names that contradict ONNX's
schema at the model's opset, attribute types that contradict the op definition, control-
flow subgraphs that do not fit their node, cycles through subgraph reads, malformed
sparse initializers, external data outside the model's folder (external data is read
only from there, wherever the tensor sits), and (all at once, with counts) every op the
registry does not know.
"""

from __future__ import annotations

import collections
import functools
import os
import stat
import warnings

import numpy as np

from ..errors import ConversionError, FormatError, OneGraphError, OpAttributeError
from ..format import AttrType, Container, DType, Graph, Model, TensorKind, TypedList
from ..format.ir import attr_type_of
from ..format.writer import FILE_IDENTIFIER as _OG_FILE_IDENTIFIER
from ..ops import REGISTRY
from ..ops.linalg import _parse_einsum
from .onnx_gradient import UNSUPPORTED_KEY as GRADIENT_KEY, expand_gradients, nested_gradient
from .onnx_legacy import (EARLY_OPS, FLATTENING_OPS, all_graph_protos, all_proto_nodes,
                          drop_batchnorm_saved_outputs, guard_flattening_axes,
                          needs_scan_rewrite, proto_subgraphs, rewrite_batched_scans)

# The oldest default-domain opset whose semantics the kernels implement; older models
# are upgraded to this version first.
MIN_OPSET = 13

# Prefix of the placeholder tensors created for omitted (empty-named) node outputs
# that are followed by a present output; the exporter writes them back as "".
OMITTED_OUTPUT_PREFIX = "__og_omitted__"

_DEFAULT_DOMAINS = ("", "ai.onnx")


@functools.lru_cache(maxsize=None)
def onnx_schema(op_type: str, opset: int | None, domain: str = ""):
    """ONNX's OpSchema of an op at `opset` (its newest without one), or None when ONNX
    defines no such op there. Cached: import and export ask once per node."""
    defs = _onnx().defs
    try:
        return defs.get_schema(op_type, opset, domain) if opset is not None \
            else defs.get_schema(op_type, domain)
    except defs.SchemaError:
        return None


def declared_types(graph, nested: bool = True) -> dict:
    """{tensor name: (elem_type, rank or None)} that a GraphProto declares:
    initializers, then inputs, outputs and value_info (a declaration with a shape wins
    over one without). With `nested`, the graphs in its nodes' attributes too, all in
    one table (names of different scopes may then overwrite each other); without, this
    graph's own. Tensors only; never raises."""
    found: dict = {}

    def take(g):
        for init in g.initializer:
            found[init.name] = (init.data_type, len(init.dims))
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            t = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
            if t is None or not t.elem_type:
                continue
            rank = len(t.shape.dim) if t.HasField("shape") else None
            if vi.name not in found or found[vi.name][1] is None:
                found[vi.name] = (t.elem_type, rank)
        if nested:
            for node in g.node:
                for sub in proto_subgraphs(node):
                    take(sub)

    take(graph)
    return found


def _formal(schema, kind: str, k: int):
    """The formal parameter of ONNX `schema` that its input/output (`kind`) `k` binds
    (the last one when that is variadic and k is past it), or None."""
    formal = schema.inputs if kind == "input" else schema.outputs
    if not formal:
        return None
    if k >= len(formal):
        last = formal[-1]
        return last if last.option == last.option.Variadic else None
    return formal[k]


def allowed_types(schema, kind: str, k: int) -> set[str] | None:
    """The tensor type strings ("tensor(int8)", ...) that ONNX `schema` allows for its
    input/output (`kind`) `k`, or None when it cannot tell (no such parameter, or one
    that takes no tensors)."""
    param = _formal(schema, kind, k)
    if param is None:
        return None
    allowed = next((set(c.allowed_type_strs) for c in schema.type_constraints
                    if c.type_param_str == param.type_str), {param.type_str})
    if not any(t.startswith("tensor(") for t in allowed):
        return None
    return allowed


def schema_accepts(schema, kind: str, k: int, elem: str):
    """Whether ONNX `schema` allows the type string `elem` ("tensor(int8)") for its
    input/output (`kind`) `k`; None when it cannot tell (see `allowed_types`)."""
    allowed = allowed_types(schema, kind, k)
    return None if allowed is None else elem in allowed


@functools.lru_cache(maxsize=None)
def _accepts(op_type: str, opset: int | None, kind: str, k: int, elem_type: int):
    """`schema_accepts` for a default-domain op at `opset` and an element type number,
    cached: a model asks the same question for most of its nodes."""
    schema = onnx_schema(op_type, opset, "")
    if schema is None:
        return None
    T = _onnx().TensorProto
    if elem_type not in T.DataType.values():
        return None  # no such element type: the import names it
    return schema_accepts(schema, kind, k, f"tensor({T.DataType.Name(elem_type).lower()})")


@functools.lru_cache(maxsize=None)
def _type_parameter(op_type: str, opset: int | None, kind: str, k: int) -> str | None:
    """The type parameter ("T", "T1", ...) that a default-domain op's input/output k
    binds at `opset`, or None when it binds none (a fixed type, or no such slot)."""
    schema = onnx_schema(op_type, opset, "")
    param = None if schema is None else _formal(schema, kind, k)
    if param is None or not any(c.type_param_str == param.type_str
                                for c in schema.type_constraints):
        return None
    if param.option == param.option.Variadic and not param.is_homogeneous:
        return None   # If's and Loop's outputs: each may have its own type
    return param.type_str


def _typed_nodes(graph, outer: dict | None = None):
    """(node, {value name: declared (elem_type, rank)}) for every node of a GraphProto,
    its subgraphs' included. Types are the graphs' own declarations
    (`declared_types`), looked up by scope: a subgraph sees its own names first, then
    its enclosing graphs' (`outer` for the graph given)."""
    # a name this graph defines hides the enclosing graphs' one, typed or not
    local = {o for node in graph.node for o in node.output} \
        | {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    types = {name: t for name, t in (outer or {}).items() if name not in local}
    types.update(declared_types(graph, nested=False))
    for node in graph.node:
        yield node, types
        for sub in proto_subgraphs(node):
            yield from _typed_nodes(sub, types)


def _typed_slots(node, types: dict):
    """(kind, index, value name, elem_type) of a node's inputs and outputs whose
    element type is declared."""
    for kind, names in (("input", node.input), ("output", node.output)):
        for k, name in enumerate(names):
            elem = types.get(name, (0,))[0] if name else 0
            if elem:
                yield kind, k, name, elem


def _type_string(elem: int) -> str:
    return f"tensor({_onnx().TensorProto.DataType.Name(elem).lower()})"


def element_type_misfit(graph, opsets: dict, outer: dict | None = None):
    """The first default-domain node (subgraphs included) with an input or output whose
    element type its op's schema at opsets[""] does not allow: (node, "input"|"output",
    index, value name, "tensor(T)"), or None (types as `_typed_nodes` reads them)."""
    opset = opsets.get("")
    for node, types in _typed_nodes(graph, outer):
        if node.domain in _DEFAULT_DOMAINS:
            for kind, k, name, elem in _typed_slots(node, types):
                if _accepts(node.op_type, opset, kind, k, elem) is False:
                    return node, kind, k, name, _type_string(elem)
    return None


def _refuse_type_conflicts(graph: Graph, opset: int | None, infos=None) -> None:
    """Refuse a default-domain node (subgraphs included) whose inputs bound to one type
    parameter have different element types: an Add of an int32 and a float32, which
    onnxruntime refuses and a kernel would answer in one of the two types. The types
    are the imported graph's own, after the declarations were checked against what
    the nodes compute (so a stale declaration is named as such first).

    `infos` (onegraph's inference of `graph`, one TensorInfo per tensor) gives the
    main graph's types where known; subgraphs use their tensors' types.

    Raises:
        ConversionError: names the node, both inputs, their types and the parameter.
    """
    def dtype_of(i: int):
        info = infos[i] if infos is not None else None
        if info is not None and info.dtype is not None:
            try:
                return DType.from_numpy(info.dtype)
            except FormatError:
                pass
        return graph.tensors[i].dtype

    for k, node in enumerate(graph.nodes):
        for value in node.attributes.values():
            for sub in (value if isinstance(value, (list, TypedList)) else [value]):
                if isinstance(sub, Graph):
                    _refuse_type_conflicts(sub, opset)   # (its own tensors' types)
        if node.domain not in _DEFAULT_DOMAINS:
            continue
        bound: dict = {}
        for j, i in enumerate(node.inputs):
            t = graph.tensors[i] if i >= 0 else None
            dtype = None if t is None or t.containers else dtype_of(i)
            if dtype is None or dtype is DType.UNDEFINED:
                continue
            param = _type_parameter(node.op_type, opset, "input", j)
            if param is None:
                continue
            first = bound.setdefault(param, (j, t, dtype))
            if first[2] is not dtype:
                which = f"node {node.name!r}" if node.name else f"node {k}"
                raise ConversionError(
                    f"graph {graph.name!r}: {which} ({node.op_type}): input {first[0]} "
                    f"({first[1].name!r}) is {first[2].short_name} but input {j} "
                    f"({t.name!r}) is {dtype.short_name}; {node.op_type} takes one type "
                    f"for both (its type parameter {param})")


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
    try:
        return _dtype_table()[elem_type]
    except KeyError:
        T = _onnx().TensorProto
        name = T.DataType.Name(elem_type) if elem_type in T.DataType.values() else elem_type
        raise ConversionError(f"{where}: element type {name} is not supported") from None


@functools.lru_cache(maxsize=None)
def _dtype_table() -> dict:
    """{ONNX element type number: DType} of the types `dtype_from_onnx` maps (built
    once: asking protobuf's enum for its names is slow, and import asks per tensor)."""
    T = _onnx().TensorProto
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
    return table


# ONNX TensorProto.DataType name -> DType of the types onegraph keeps as ml_dtypes arrays
# (one byte per element; ONNX packs INT4/UINT4/FLOAT4E2M1 two and INT2/UINT2 four to a
# byte in raw_data, which numpy_helper.to_array / from_array unpack and pack).
_LOW_PRECISION_NAMES = {
    "FLOAT8E4M3FN": DType.FLOAT8E4M3FN, "FLOAT8E4M3FNUZ": DType.FLOAT8E4M3FNUZ,
    "FLOAT8E5M2": DType.FLOAT8E5M2, "FLOAT8E5M2FNUZ": DType.FLOAT8E5M2FNUZ,
    "UINT4": DType.UINT4, "INT4": DType.INT4, "FLOAT4E2M1": DType.FLOAT4E2M1,
    "FLOAT8E8M0": DType.FLOAT8E8M0, "UINT2": DType.UINT2, "INT2": DType.INT2,
}


# What an untyped value is recorded as: (dtype, shape, containers, dim_names).
_UNTYPED = (DType.UNDEFINED, None, (), None)

_CONTAINER_FIELDS = {"sequence_type": Container.SEQUENCE, "optional_type": Container.OPTIONAL,
                     "map_type": None}
_MAP_KEYS = {7: Container.MAP_INT64, 8: Container.MAP_STRING}  # TensorProto INT64, STRING


def _type_info(type_proto, where: str) -> tuple:
    """(dtype, shape, containers, dim_names) of a TypeProto.

    A dimension with a dim_value keeps its size; any other (a dim_param such as
    "batch", or neither) is -1, and `dim_names` holds the dim_param of each dimension
    ("" where there is none), or is None when no dimension has one.

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
        return DType.UNDEFINED, None, tuple(containers), None
    tt = type_proto.tensor_type
    dtype = dtype_from_onnx(tt.elem_type, where) if tt.elem_type else DType.UNDEFINED
    if not tt.HasField("shape"):
        return dtype, None, tuple(containers), None
    dims, names = [], []
    for d in tt.shape.dim:
        which = d.WhichOneof("value")
        dims.append(d.dim_value if which == "dim_value" else -1)
        names.append(d.dim_param if which == "dim_param" else "")
    return dtype, tuple(dims), tuple(containers), tuple(names) if any(names) else None


def _fill_untyped(stated: tuple, declared: tuple) -> tuple:
    """The `_type_info` tuple `stated` with what it leaves open (an undefined dtype, no
    shape) taken from `declared`, another declaration of the same value of the same
    containers (a graph input that is also a graph output); `stated` as it is else."""
    if stated == _UNTYPED:   # no type at all
        return declared
    dtype, shape, containers, dim_names = stated
    if containers != declared[2]:
        return stated
    if dtype is DType.UNDEFINED:
        dtype = declared[0]
    if shape is None:
        shape, dim_names = declared[1], declared[3]
    return dtype, shape, containers, dim_names


def _add_typed(g: Graph, name: str, typed: tuple) -> int:
    """Add tensor `name` with a (dtype, shape, containers, dim_names) tuple; returns
    its index."""
    dtype, shape, containers, dim_names = typed
    index = g.add_tensor(name, dtype, shape, containers=containers)
    g.tensors[index].dim_names = dim_names
    return index


# --------------------------------------------------------------------------- loading

_EXTERNAL = 1  # TensorProto.EXTERNAL
_DEFAULT_LOCATION = 0  # TensorProto.DEFAULT

# ONNX packs these element types several to a byte in raw_data (bits per element).
_SUB_BYTE_BITS = {"UINT4": 4, "INT4": 4, "FLOAT4E2M1": 4, "UINT2": 2, "INT2": 2}


def _function_name(f) -> str:
    """'domain::name' of a FunctionProto (its name alone in the default domain)."""
    return f"{f.domain}::{f.name}" if f.domain else f.name


def _model_tensor_protos(proto):
    """(TensorProto, where) for every tensor a ModelProto can hold.

    Covers the main graph and its subgraphs (initializers, sparse initializers' values
    and indices, tensor and sparse-tensor attributes such as Constant's `value`), the
    bodies of model-local functions and their attribute defaults (which inlining copies
    into the graph), and training_info graphs. `where` names the tensor for errors.
    """
    yield from _graph_tensor_protos(proto.graph, "")
    for f in proto.functions:
        fwhere = f"function {_function_name(f)!r} "
        for k, node in enumerate(f.node):
            yield from _node_tensor_protos(node, k, fwhere)
        for a in f.attribute_proto:
            yield from _attr_tensor_protos(a, f"{fwhere}attribute default {a.name!r}")
    for info in proto.training_info:
        for field in ("initialization", "algorithm"):
            if info.HasField(field):
                yield from _graph_tensor_protos(getattr(info, field),
                                                f"training_info {field} ")


def _graph_tensor_protos(graph, prefix: str):
    where_g = f"{prefix}graph {graph.name!r}"
    for t in graph.initializer:
        yield t, f"{where_g} initializer {t.name!r}"
    for sp in graph.sparse_initializer:
        yield sp.values, f"{where_g} sparse initializer {sp.values.name!r} values"
        yield sp.indices, f"{where_g} sparse initializer {sp.values.name!r} indices"
    for k, node in enumerate(graph.node):
        yield from _node_tensor_protos(node, k, f"{where_g} ")


def _node_tensor_protos(node, k: int, prefix: str):
    where = f"{prefix}node {node.name or f'#{k}'!r} ({node.op_type})"
    for a in node.attribute:
        yield from _attr_tensor_protos(a, f"{where} attribute {a.name!r}")


def _attr_tensor_protos(a, where: str):
    if a.HasField("t"):
        yield a.t, where
    for i, t in enumerate(a.tensors):
        yield t, f"{where}[{i}]"
    sparse = ([a.sparse_tensor] if a.HasField("sparse_tensor") else []) + \
        list(a.sparse_tensors)
    for sp in sparse:
        yield sp.values, f"{where} values"
        yield sp.indices, f"{where} indices"
    if a.HasField("g"):
        yield from _graph_tensor_protos(a.g, f"{where}: ")
    for sub in a.graphs:
        yield from _graph_tensor_protos(sub, f"{where}: ")


def _external_nbytes(t, where: str) -> int:
    """Bytes the raw data of external tensor `t` must have, from its dims and type.

    Raises:
        ConversionError: a dim is negative, the type has no onegraph equivalent, or it
            is a string tensor (strings cannot be stored as external data).
    """
    onnx = _onnx()
    dtype = dtype_from_onnx(t.data_type, where)
    if dtype in (DType.STRING, DType.UNDEFINED):
        raise ConversionError(f"{where}: {dtype.name} tensors cannot hold external data")
    count = 1
    for d in t.dims:
        if d < 0:
            raise ConversionError(f"{where}: negative dimension in dims {list(t.dims)}")
        count *= int(d)
    bits = _SUB_BYTE_BITS.get(onnx.TensorProto.DataType.Name(t.data_type),
                              8 * dtype.itemsize)
    return (count * bits + 7) // 8


def _load_external_data(proto, base_dir: str | None) -> None:
    """Read every external tensor of `proto` from the model's folder, in place.

    Every tensor anywhere in the model (see `_model_tensor_protos`), sparse ones
    included, is checked and then loaded into raw_data, so nothing later reads a
    location relative to the process's working directory (which is what onnx's
    numpy_helper does for a tensor still marked external) and the inliner and version
    converter only see loaded tensors.

    Raises:
        ConversionError: the model has external data but was not loaded from a file; a
            location is empty, absolute, goes through '..', or resolves (through
            symlinks) outside `base_dir`; it contains a NUL byte; the file is missing,
            a directory, or not a regular file (a FIFO or device, which is never
            opened); offset/length are not integers, lie outside the file, or disagree
            with the tensor's dims and type.
    """
    root = None if base_dir is None else os.path.realpath(base_dir)
    for t, where in _model_tensor_protos(proto):
        if t.data_location != _EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        loc = info.get("location", "")
        where = f"{where}: external data location {loc!r}"
        if root is None:
            raise ConversionError(f"{where}: model has external data but was not "
                                  "loaded from a file")
        if not loc or os.path.isabs(loc) or loc.startswith(("/", "\\")) or \
                ".." in loc.replace("\\", "/").split("/") or ":" in loc:
            raise ConversionError(f"{where} escapes the model's folder")
        if "\x00" in loc:  # os.path would raise ValueError; onnxruntime truncates
            raise ConversionError(f"{where} contains a NUL byte")
        full = os.path.realpath(os.path.join(root, loc))
        if os.path.commonpath([root, full]) != root:
            raise ConversionError(f"{where} resolves outside the model's folder")
        try:
            mode = os.stat(full).st_mode
        except OSError:
            raise ConversionError(f"{where}: file not found") from None
        if stat.S_ISDIR(mode):
            raise ConversionError(f"{where} is a directory, not a file")
        if not stat.S_ISREG(mode):  # a FIFO or device: opening it could block
            raise ConversionError(f"{where} is not a regular file")
        try:
            offset = int(info.get("offset", 0) or 0)
            length = int(info["length"]) if info.get("length") else None
        except ValueError:
            raise ConversionError(f"{where}: bad offset/length") from None
        size = os.path.getsize(full)
        if offset < 0 or offset > size or (length is not None and (
                length < 0 or offset + length > size)):
            raise ConversionError(f"{where}: offset/length out of the file's "
                                  f"{size} bytes")
        # Read what the dims need, not what the file or `length` offers: a small
        # tensor pointing at a large file must not make us read the whole file.
        need = _external_nbytes(t, where)
        if length is not None and length != need:
            raise ConversionError(f"{where}: length {length} bytes, but dims "
                                  f"{list(t.dims)} of this type need {need}")
        if offset + need > size:
            raise ConversionError(f"{where}: offset/length out of the file's {size} "
                                  f"bytes (the tensor needs {need} bytes)")
        try:
            # O_NONBLOCK: a FIFO swapped in since the check above must not block us
            fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_BINARY", 0))
            with open(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise ConversionError(f"{where} is not a regular file")
                f.seek(offset)
                data = f.read(need)
        except OSError as e:
            raise ConversionError(f"{where}: cannot read: {e}") from e
        if len(data) != need:
            raise ConversionError(f"{where}: file ended after {len(data)} of {need} bytes")
        t.raw_data = data
        del t.external_data[:]
        t.data_location = _DEFAULT_LOCATION


def _load_proto(path_or_proto):
    """Parse/validate the input and return (ModelProto with data loaded, base_dir).

    Raises:
        ConversionError: the file cannot be read ("cannot read 'PATH': No such file or
            directory", the words of og.load and the CLI; a NUL byte in the path too);
            see `_parse_bytes`, `_check_opset_imports`, `_check_functions` and
            `_load_external_data`.
    """
    onnx = _onnx()
    base_dir = None
    if isinstance(path_or_proto, onnx.ModelProto):
        proto = onnx.ModelProto()
        proto.CopyFrom(path_or_proto)
    elif isinstance(path_or_proto, (bytes, bytearray, memoryview)):
        data = bytes(path_or_proto)
        try:
            proto = _parse_bytes(data, "<bytes>")
        except ConversionError as e:
            path = _bytes_as_path(data)
            if path is None:
                raise
            # og.load and to_onnx take a bytes path; here bytes are the model itself
            raise ConversionError(f"{e}; the bytes look like a file path ({path!r}): "
                                  "from_onnx reads bytes as the serialized model, so "
                                  "give a path as a str or os.PathLike") from e
        del data
    elif isinstance(path_or_proto, (str, os.PathLike)):
        from ..format.atomic import cannot_read, fs_path

        try:
            path = fs_path(path_or_proto, "read")
        except ValueError as e:  # a NUL byte
            raise ConversionError(str(e)) from None
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ConversionError(cannot_read(e, path)) from e
        proto = _parse_bytes(data, path)
        del data  # the parsed proto holds it now: do not keep the file's bytes twice
        base_dir = os.path.dirname(os.path.abspath(path))
    else:
        raise ConversionError(f"from_onnx needs a path, bytes or ModelProto, got "
                              f"{type(path_or_proto).__name__}")
    _check_nesting(proto)
    _check_strings(proto)
    _check_opset_imports(proto)
    _check_functions(proto)
    _check_names_and_attributes(proto)
    _load_external_data(proto, base_dir)
    return proto, base_dir


# Subgraphs (If/Loop/Scan bodies) nested deeper than this are refused: protobuf's parser
# stops a serialized model at about 31 levels, and the importer's walkers recurse.
MAX_SUBGRAPH_DEPTH = 32


def _check_nesting(proto) -> None:
    """Refuse subgraphs nested more than MAX_SUBGRAPH_DEPTH deep (a ModelProto built in
    memory is not bounded by protobuf's parse depth), without recursing.

    Raises:
        ConversionError: names the depth and the op of the deepest node reached.
    """
    stack = [(proto.graph, 0)] + [(f, 0) for f in proto.functions]
    while stack:
        g, depth = stack.pop()
        for node in g.node:
            for sub in proto_subgraphs(node):
                if depth + 1 > MAX_SUBGRAPH_DEPTH:
                    raise ConversionError(
                        f"subgraphs are nested more than {MAX_SUBGRAPH_DEPTH} deep (a "
                        f"{node.op_type} node's body at depth {depth + 1}); onegraph "
                        "imports up to that depth")
                stack.append((sub, depth + 1))


# AttributeProto.type -> the field holding its value
_ATTRIBUTE_FIELDS = {1: "f", 2: "i", 3: "s", 4: "t", 5: "g", 11: "sparse_tensor",
                     13: "tp", 6: "floats", 7: "ints", 8: "strings", 9: "tensors",
                     10: "graphs", 12: "sparse_tensors", 14: "type_protos"}
_ATTRIBUTE_TYPE_NAMES = {1: "FLOAT", 2: "INT", 3: "STRING", 4: "TENSOR", 5: "GRAPH",
                         11: "SPARSE_TENSOR", 13: "TYPE_PROTO", 6: "FLOATS", 7: "INTS",
                         8: "STRINGS", 9: "TENSORS", 10: "GRAPHS", 12: "SPARSE_TENSORS",
                         14: "TYPE_PROTOS"}
_VALUE_FIELDS = frozenset(_ATTRIBUTE_FIELDS.values())


def _check_names_and_attributes(proto) -> None:
    """The checks onnx's own passes (the inliner, the version converter, shape
    inference) need to have run before them, since a malformed model can crash them
    (the process dies, no exception): every node input names a value in scope (a
    model-local function's body sees only its inputs and its own nodes' outputs, no
    outer scope), and every attribute's value is in the field its type says. Walks
    without recursing (nesting is bounded by `_check_nesting`).

    Raises:
        ConversionError: names the graph or function, the node and the input or
            attribute.
    """
    stack = [(proto.graph, frozenset(), f"graph {proto.graph.name or 'main'!r}", False)]
    stack += [(f, frozenset(), f"function {_function_name(f)!r}", True)
              for f in proto.functions]
    while stack:
        g, outer, where_g, in_function = stack.pop()
        local = {o for node in g.node for o in node.output if o}
        if hasattr(g, "initializer"):  # a GraphProto (a FunctionProto has none)
            local.update(vi.name for vi in g.input)
            local.update(t.name for t in g.initializer)
            local.update(sp.values.name for sp in g.sparse_initializer)
        else:
            local.update(g.input)
        scope = outer | local
        for k, node in enumerate(g.node):
            where = f"{where_g}: node {node.name or k!r} ({node.op_type})"
            for name in node.input:
                if name and name not in scope:
                    raise ConversionError(
                        f"{where} input {name!r} names no tensor, initializer or graph "
                        "input" + (" (a function's body sees only its inputs and its own "
                                   "nodes' outputs)" if not hasattr(g, "initializer") else ""))
            for a in node.attribute:
                if a.ref_attr_name and not in_function:
                    # onnx's version converter would make it a plain attribute of value 0
                    raise ConversionError(
                        f"{where}: attribute {a.name!r} refers to a function attribute, "
                        "which is only valid inside functions")
                _check_attribute_field(a, f"{where} attribute {a.name!r}")
                if a.HasField("g"):
                    stack.append((a.g, scope, f"{where} attribute {a.name!r}",
                                  in_function))
                for i, sub in enumerate(a.graphs):
                    stack.append((sub, scope, f"{where} attribute {a.name!r}[{i}]",
                                  in_function))


def _check_attribute_field(a, where: str) -> None:
    """Refuse an attribute whose value sits in another field than its type's (type INT,
    the value in `f`): it would be read as its type's default; and one of type
    UNDEFINED (onnx's converter and the legacy rewrites cannot read it)."""
    if a.ref_attr_name:
        return
    if a.type == 0:
        raise ConversionError(f"{where}: has unsupported type UNDEFINED")
    if a.type not in _ATTRIBUTE_FIELDS:
        return
    own = _ATTRIBUTE_FIELDS[a.type]
    for field, _ in a.ListFields():
        if field.name in _VALUE_FIELDS and field.name != own:
            raise ConversionError(
                f"{where}: its type is {_ATTRIBUTE_TYPE_NAMES[a.type]} but it holds a "
                f"value in field {field.name!r} (type field and data field disagree)")


# Main-graph initializers at least this large leave the ModelProto right after it is
# read, as bytes, and become the Model's arrays without a copy (np.frombuffer): ONNX
# shape inference, the inliner and the version converter each serialize and re-parse
# the whole model, which held a 210 MB model five times over (1.05 GB peak, against
# onnxruntime's 0.36 GB) and took 1.5 s. No shape inference reads a weight's values;
# the small tensors they do read (shapes, axes, scales) stay in the proto.
_DETACH_MIN_BYTES = 1 << 16
# element types whose raw_data numpy reads as it is (little-endian, no packing)
_DETACHABLE = frozenset({DType.FLOAT32, DType.FLOAT64, DType.FLOAT16, DType.INT8,
                         DType.INT16, DType.INT32, DType.INT64, DType.UINT8, DType.UINT16,
                         DType.UINT32, DType.UINT64})


def _detach_payloads(proto) -> dict:
    """Move the raw_data of large main-graph initializers out of `proto`.

    Returns {initializer name: bytes}; an initializer whose name is repeated stays in
    place (the importer reports it). Never raises.
    """
    counts = collections.Counter(t.name for t in proto.graph.initializer)
    payloads = {}
    for t in proto.graph.initializer:
        if counts[t.name] != 1 or not t.HasField("raw_data") \
                or t.data_location == _EXTERNAL or len(t.dims) == 0:
            continue
        elem = _dtype_table().get(t.data_type)
        if elem not in _DETACHABLE:
            continue
        raw = t.raw_data
        if len(raw) < _DETACH_MIN_BYTES:
            continue
        payloads[t.name] = raw
        t.ClearField("raw_data")
    return payloads


def _payload_array(t, raw: bytes, where: str) -> np.ndarray:
    """The read-only array initializer `t` holds, from its detached raw_data.

    Raises:
        ConversionError: a negative dim, or raw_data is not exactly the bytes the dims
            need (the words of `_check_payload`).
    """
    dtype = dtype_from_onnx(t.data_type, where)
    dims = tuple(int(d) for d in t.dims)
    if any(d < 0 for d in dims):
        raise ConversionError(f"{where}: negative dimension in dims {list(dims)}")
    itemsize = np.dtype(dtype.numpy).itemsize
    need = itemsize
    for d in dims:
        need *= d
    if len(raw) != need:
        raise ConversionError(f"{where}: raw_data has {len(raw)} bytes, but dims "
                              f"{list(dims)} of {itemsize}-byte {dtype.name} need {need}")
    stored = np.dtype(dtype.numpy).newbyteorder("<")  # ONNX raw_data is little-endian
    array = np.frombuffer(raw, dtype=stored).reshape(dims)
    return array if stored.isnative else array.astype(dtype.numpy)


def _check_strings(proto) -> None:
    """Refuse string fields (names, op types, domains, ...) that are not valid UTF-8.

    onnx.proto is proto2, so protobuf parses such a field without complaint and hands
    Python `bytes` instead of `str`; nothing later expects that. One pass over every
    message of the model (tensor payloads are bytes or numbers and are not looked at).

    Raises:
        ConversionError: names the field, and the node (graph, index, op type) or
            other message it is in.
    """
    from google.protobuf.descriptor import FieldDescriptor

    string, message = FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE
    path: list = []  # (field name, index or None, message) from the model down

    def walk(msg):
        for field, value in msg.ListFields():
            kind = field.type
            if kind == string:
                if field.is_repeated:
                    for i, v in enumerate(value):
                        if type(v) is not str:
                            _refuse_non_utf8(path, f"{field.name}[{i}]", v)
                elif type(value) is not str:
                    _refuse_non_utf8(path, field.name, value)
            elif kind == message:
                if field.is_repeated:
                    for i, m in enumerate(value):
                        path.append((field.name, i, m))
                        walk(m)
                        path.pop()
                else:
                    path.append((field.name, None, value))
                    walk(value)
                    path.pop()

    walk(proto)


def _refuse_non_utf8(path: list, field: str, value) -> None:
    """Raise the ConversionError of `_check_strings` for `field` at `path`."""
    def text(v):
        return repr(v) if isinstance(v, str) else repr(bytes(v))

    at = ".".join([n if i is None else f"{n}[{i}]" for n, i, _ in path] + [field])
    where = ""
    node_at = max((k for k, (n, _, _) in enumerate(path) if n == "node"), default=None)
    if node_at is not None:
        _, index, node = path[node_at]
        parent = path[node_at - 1][2] if node_at else None  # a graph or a function
        kind = {"GraphProto": "graph", "FunctionProto": "function"}.get(
            type(parent).DESCRIPTOR.name if parent is not None else "")
        where = (f"{kind} {text(parent.name)} " if kind else "") + f"node {index}"
        if type(node.name) is str and node.name:
            where += f" {node.name!r}"
        op = node.op_type if type(node.op_type) is str else text(node.op_type)
        where += f" ({op}): "
    raise ConversionError(f"{where}{at} {text(value)} is not valid UTF-8 (a string field "
                          "of an ONNX model must be UTF-8)")


def _check_opset_imports(proto) -> None:
    """Refuse opset_import lists that make the model's opsets ambiguous or unknown.

    Raises:
        ConversionError: a domain is listed twice with different versions ("" and
            "ai.onnx" are one domain; a repeated identical entry, which skl2onnx writes
            and onnx's checker and onnxruntime accept, counts once); a version is below
            1 or newer than the installed onnx knows (default and ai.onnx.ml domains);
            or the graph uses default-domain ops with no default-domain entry (ONNX
            requires one).
    """
    onnx = _onnx()
    newest = {"": onnx.defs.onnx_opset_version(),
              "ai.onnx.ml": onnx.defs.onnx_ml_opset_version()}
    seen: dict[str, int] = {}
    for o in proto.opset_import:
        domain = "" if o.domain in _DEFAULT_DOMAINS else o.domain
        shown = repr(o.domain) if o.domain else "'' (ai.onnx)"
        if seen.get(domain) == o.version:
            continue
        if domain in seen:
            raise ConversionError(f"opset_import lists domain {shown} twice (versions "
                                  f"{seen[domain]} and {o.version})")
        seen[domain] = int(o.version)
        if o.version < 1:
            raise ConversionError(f"opset_import: domain {shown} has invalid version "
                                  f"{o.version}")
        if domain in newest and o.version > newest[domain]:
            raise ConversionError(
                f"opset_import: domain {shown} version {o.version} is newer than the "
                f"installed onnx {onnx.__version__} knows (up to {newest[domain]})")
    if "" not in seen:
        node = _first_default_domain_node(proto.graph)
        if node is not None:
            who = f"node {node.name!r} ({node.op_type})" if node.name else \
                f"a {node.op_type} node"
            raise ConversionError(f"{who} is in the default (ai.onnx) domain, but the "
                                  "model's opset_import has no entry for that domain")


def _first_default_domain_node(graph):
    for node in graph.node:
        if node.domain in _DEFAULT_DOMAINS:
            return node
        for sub in proto_subgraphs(node):
            found = _first_default_domain_node(sub)
            if found is not None:
                return found
    return None


def _check_functions(proto) -> None:
    """Check what inlining cannot report well: no model-local function takes the name
    of a standard op, and each one's outputs are produced by its nodes (or are its
    inputs).

    Raises:
        ConversionError: names the function and the undefined output.
    """
    onnx = _onnx()
    for f in proto.functions:
        if f.domain in _DEFAULT_DOMAINS and onnx.defs.has(f.name):
            raise ConversionError(
                f"function {_function_name(f)!r} has the name of the standard ONNX op "
                f"{f.name}: a model-local function cannot redefine it (onnxruntime runs "
                "the standard op); give the function its own domain")
        defined = set(f.input)
        for node in f.node:
            defined.update(o for o in node.output if o)
        for o in f.output:
            if o not in defined:
                raise ConversionError(f"function {_function_name(f)!r}: output {o!r} is "
                                      "not produced by any of its nodes")


def _bytes_as_path(data: bytes) -> str | None:
    """The path that bytes which are no ONNX model spell, when they name an existing
    file or end in ".onnx" (a path given as bytes), else None. Never raises."""
    if len(data) > 4096 or b"\0" in data:
        return None
    path = os.fsdecode(data)
    try:
        named = path.lower().endswith(".onnx") or os.path.isfile(path)
    except (OSError, ValueError):  # pragma: no cover - isfile itself swallows these
        return None
    return path if named else None


def _parse_bytes(data: bytes, where: str):
    onnx = _onnx()
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
        _refuse_og_file(data, where)
        raise ConversionError(f"{where}: not a valid ONNX model (protobuf parse failed: "
                              f"{e})") from e
    if not proto.HasField("graph"):
        _refuse_og_file(data, where)
        raise ConversionError(f"{where}: not a valid ONNX model (no graph)")
    return proto


def _refuse_og_file(data: bytes, where: str) -> None:
    """Say so when bytes that are no ONNX model are a onegraph file (its FlatBuffers
    identifier at bytes 4-8): protobuf's words would only say they do not parse.

    Raises:
        ConversionError: "WHERE: is a onegraph .og file, not an ONNX model; ...".
    """
    if bytes(data[4:8]) == _OG_FILE_IDENTIFIER:
        raise ConversionError(f"{where}: is a onegraph .og file, not an ONNX model; "
                              "load it with onegraph.load (or convert it with to_onnx)")


def _default_opset(proto) -> int | None:
    for o in proto.opset_import:
        if o.domain in _DEFAULT_DOMAINS:
            return int(o.version)
    return None


def _upgrade(proto):
    """Inline local functions and upgrade opsets older than MIN_OPSET.

    Returns:
        (the upgraded ModelProto, {(domain, name): why} of the local functions onnx's
        inliner left in place, so a call to one is reported as such, not as an unknown
        op).

    Raises:
        ConversionError: inlining fails, or the version converter cannot upgrade.
    """
    onnx = _onnx()  # a clear ConversionError when onnx is not installed
    left: dict[tuple[str, str], str] = {}
    if len(proto.functions):
        from onnx import inliner

        _apply_function_defaults(proto)
        convert_error = None
        try:
            # convert_version: a function written for another opset than the model's is
            # version-converted and inlined instead of being left as an unknown op.
            proto = inliner.inline_local_functions(proto, convert_version=True)
        except Exception as e:  # noqa: BLE001 - the converter raises RuntimeError etc.
            convert_error = _first_line(e)
            typed = _inline_with_inferred_types(proto)
            if typed is not None:
                proto, convert_error = typed, None
            else:
                try:
                    proto = inliner.inline_local_functions(proto)
                except Exception as e2:  # noqa: BLE001
                    raise ConversionError(f"cannot inline the model's local functions: "
                                          f"{e2}") from e2
        for f in proto.functions:
            left[(f.domain, f.name)] = _why_not_inlined(proto, f, convert_error)
    version = _default_opset(proto)
    if version is not None and version < 14:
        drop_batchnorm_saved_outputs(proto)
    if version is not None and version < MIN_OPSET:
        from onnx import version_converter

        _check_attributes(proto.graph, version)
        _check_initializer_types(proto.graph, version)
        _check_flattening_axes(proto.graph, version)
        _refuse_untyped_inputs(proto, version)
        guard_flattening_axes(proto, version)   # after: its shape inference needs types
        _spell_default_domain(proto)
        _state_unlisted_initializers(proto)
        if needs_scan_rewrite(proto, version):
            proto = rewrite_batched_scans(proto)
            _state_unlisted_initializers(proto)   # the rewrites add initializers

        _safe_for_inference(proto)   # the model's own dims, checked before conversion
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                proto = version_converter.convert_version(proto, MIN_OPSET)
            # the converter's own shape inference writes impossible shapes (a Pad with
            # pads below -dim) into the declarations; forget them, so that they count
            # as inferred and the node computing them is named when they are refused
            for vi in _value_infos(proto.graph):
                if any(d.HasField("dim_value") and d.dim_value < 0 for d in _dims_of(vi)):
                    vi.type.tensor_type.ClearField("shape")
        except Exception as e:  # noqa: BLE001 - the converter raises RuntimeError etc.
            unknown = _ops_without_kernels(proto.graph, left)
            if unknown:  # the converter stops at the first op it has no schema for
                raise ConversionError(_unsupported_message(unknown) + f" (the model uses "
                                      f"opset {version}, which onegraph imports through "
                                      f"ONNX's version converter)") from e
            raise ConversionError(f"model uses opset {version}, older than {MIN_OPSET}, "
                                  f"and ONNX's version converter cannot upgrade it: "
                                  f"{_first_line(e)}") from e
    del onnx
    return proto, left


def _refuse_op_of_a_later_opset(graph, k: int, node, version: int) -> None:
    """Refuse a default-domain node whose op ONNX defines only from a later opset than
    the model's (NonMaxSuppression in an opset-8 model), by name, where onnx's
    converter would stop at it with an adapter assertion: when the op has a version
    between the model's opset and MIN_OPSET. An op all of whose versions are later
    than MIN_OPSET (onnxruntime's LayerNormalization, which its optimizer writes into
    opset-12 models) passes the converter untouched and is the importer's to judge. The
    ops onnxruntime runs before ONNX defines them (ThresholdedRelu,
    MeanVarianceNormalization) are rewritten instead.

    Raises:
        ConversionError: names the graph, the node, the op and both opsets.
    """
    if node.op_type in EARLY_OPS:
        return
    versions = _op_versions(node.op_type)
    if versions and versions[0] > version \
            and any(version < v <= MIN_OPSET for v in versions):
        raise ConversionError(
            f"graph {graph.name or 'main'!r}: node {node.name or k!r} ({node.op_type}): "
            f"{node.op_type} does not exist at the model's opset {version}; it came in at "
            f"opset {versions[0]}")


@functools.lru_cache(maxsize=None)
def _op_versions(op_type: str) -> tuple:
    """The default-domain opsets at which ONNX defines a version of `op_type`, sorted
    (empty for an op ONNX does not define)."""
    onnx = _onnx()
    return tuple(sorted(s.since_version for s in onnx.defs.get_all_schemas_with_history()
                        if s.name == op_type and s.domain == ""))


def _refuse_untyped_inputs(proto, version: int) -> None:
    """Refuse a model older than opset 13 with a graph input declared without a type:
    onnx's version converter, and the legacy rewrites before it, run ONNX's shape
    inference, whose C++ code for some ops (EyeLike) dereferences the missing type and
    kills the process. At opset 13 and later onegraph takes such a type from the feed
    instead. (A body's inputs are typed by the inference of the node holding it.)

    Raises:
        ConversionError: names the input.
    """
    for vi in proto.graph.input:
        if not vi.HasField("type"):
            raise ConversionError(
                f"graph input {vi.name!r} has no type: the model's opset {version} is "
                f"upgraded to {MIN_OPSET} by onnx's version converter, which needs every "
                "graph input's type; declare it")


def _spell_default_domain(proto) -> None:
    """Spell the default domain "" where the model writes it "ai.onnx" (nodes of every
    graph, the opset import), in place: onnx's version converter knows only "".
    Never raises."""
    for node in all_proto_nodes(proto.graph):
        if node.domain == "ai.onnx":
            node.domain = ""
    if not any(o.domain == "" for o in proto.opset_import):
        for o in proto.opset_import:
            if o.domain == "ai.onnx":
                o.domain = ""


def _state_unlisted_initializers(proto) -> None:
    """Raise an IR-3 model whose initializers are not all graph inputs to IR 4, in
    place: IR 3 lists every initializer as a graph input too; onnxruntime saves
    optimized opset-9 models with IR 3 but without those inputs, which onnx's version
    converter then calls undefined. IR 4 states the model as it is."""
    if proto.ir_version < 4:
        inputs = {i.name for i in proto.graph.input}
        if any(t.name not in inputs for t in proto.graph.initializer):
            proto.ir_version = 4


def _inline_with_inferred_types(proto):
    """`proto` with its local functions version-converted and inlined after ONNX's
    shape inference has typed the values around their calls, or None if either fails.

    The inliner converts a function written for another opset (onnxscript writes its
    functions untyped, e.g. at opset 18 in an opset-23 model) only where it knows the
    types of the call's values. The types inference added are taken out again
    afterwards (value_info not in the model, outputs as the model states them), so
    they count as inferred, not stated, in the import."""
    from onnx import inliner, shape_inference

    stated_values = {v.name for g in all_graph_protos(proto.graph) for v in g.value_info}
    stated_outputs = {o.name: o for o in proto.graph.output}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = inliner.inline_local_functions(shape_inference.infer_shapes(proto),
                                                 convert_version=True)
    except Exception:  # noqa: BLE001 - inference and the inliner raise several kinds
        return None
    for g in all_graph_protos(out.graph):
        kept = [v for v in g.value_info if v.name in stated_values]
        del g.value_info[:]
        g.value_info.extend(kept)
    for o in out.graph.output:
        if o.name in stated_outputs:
            o.CopyFrom(stated_outputs[o.name])
    return out


def _check_ir_version(proto) -> None:
    """Refuse a model of a newer IR version than the installed onnx knows (its file
    format may mean things this reader does not know); onnx's checker and onnxruntime
    refuse it too.

    Raises:
        ConversionError: names both versions.
    """
    known = _onnx().IR_VERSION
    if proto.ir_version > known:
        raise ConversionError(f"the model's IR version {proto.ir_version} is newer than "
                              f"the installed onnx's ({known}); upgrade onnx to read it")


def _check_attributes(graph, version: int) -> None:
    """Refuse a default-domain node whose input or output count its op's schema at
    `version` does not allow (opset 13's two-input Unsqueeze in an opset-12 model), or
    whose attribute has another type than that schema says (Split's `split` as FLOATS):
    onnx's version converter crashes the process on some. Refuse an attribute that the
    schema at `version` does not define (DequantizeLinear's `axis` before opset 13,
    which onnxruntime's quantizer writes into opset-11 models): once upgraded it would
    be taken as the newer op's. onnx's checker and onnxruntime refuse all of these.
    Subgraphs too, without recursing.

    Raises:
        ConversionError: names the node and the counts the op takes, or the attribute
            and both types, or the attributes the op has at `version`.
    """
    graphs = [graph]
    while graphs:
        g = graphs.pop()
        for k, node in enumerate(g.node):
            graphs.extend(proto_subgraphs(node))
            if node.domain not in _DEFAULT_DOMAINS:
                continue
            schema = onnx_schema(node.op_type, version, "")
            if schema is None:
                _refuse_op_of_a_later_opset(g, k, node, version)
                continue
            for kind, n, lo, hi in (("input", len(node.input), schema.min_input,
                                     schema.max_input),
                                    ("output", len(node.output), schema.min_output,
                                     schema.max_output)):
                if not lo <= n <= hi:
                    raise ConversionError(
                        f"graph {g.name or 'main'!r}: node {node.name or k!r} "
                        f"({node.op_type}) has {n} {kind}(s), but {node.op_type} at "
                        f"opset {version} takes {_count_range(lo, hi)}")
            for a in node.attribute:
                spec = schema.attributes.get(a.name)
                if spec is None and not a.name.startswith("__") \
                        and node.op_type not in _UNCHECKED_ATTRIBUTE_OPS[""]:
                    raise ConversionError(
                        f"graph {g.name or 'main'!r}: node {node.name or k!r} "
                        f"({node.op_type}) attribute {a.name!r} is not defined for "
                        f"{node.op_type} at opset {version} (known: "
                        f"{sorted(schema.attributes) or 'none'})")
                if spec is not None and a.type and int(a.type) != int(spec.type):
                    raise ConversionError(
                        f"graph {g.name or 'main'!r}: node {node.name or k!r} "
                        f"({node.op_type}) attribute {a.name!r} must be "
                        f"{_ATTRIBUTE_TYPE_NAMES.get(int(spec.type), spec.type)}, got "
                        f"{_ATTRIBUTE_TYPE_NAMES.get(int(a.type), a.type)} (opset {version})")
                for t in (*([a.t] if a.HasField("t") else ()), *a.tensors):
                    if not _known_element_type(t.data_type):
                        raise ConversionError(
                            f"graph {g.name or 'main'!r}: node {node.name or k!r} "
                            f"({node.op_type}) attribute {a.name!r}: its tensor's element "
                            f"type {_element_type_name(t.data_type)} is not one ONNX "
                            f"defines (opset {version})")


def _check_initializer_types(graph, version: int) -> None:
    """Refuse an initializer (sparse ones included, subgraphs too) whose element type
    ONNX does not define: onnx's version converter stops at it with 'Unknown tensor
    data type', which names nothing.

    Raises:
        ConversionError: names the graph, the initializer and the type.
    """
    for g in all_graph_protos(graph):
        for t in (*g.initializer, *(s.values for s in g.sparse_initializer)):
            if not _known_element_type(t.data_type):
                raise ConversionError(
                    f"graph {g.name or 'main'!r} initializer {t.name!r}: element type "
                    f"{_element_type_name(t.data_type)} is not one ONNX defines (opset "
                    f"{version})")


def _known_element_type(data_type: int) -> bool:
    """Whether `data_type` names an ONNX tensor element type (UNDEFINED does not)."""
    return data_type != 0 and data_type in _onnx().TensorProto.DataType.values()


def _element_type_name(data_type: int) -> str:
    """An element type number as ONNX names it (UNDEFINED, ...), or the number."""
    T = _onnx().TensorProto
    return T.DataType.Name(data_type) if data_type in T.DataType.values() \
        else str(data_type)


def _check_flattening_axes(graph, version: int) -> None:
    """Refuse a pre-13 Softmax, LogSoftmax or Hardmax whose axis is outside [-r, r-1]
    for its input's declared rank r: the upgrade spells them with Flatten(axis), which
    takes axis = r, so a 1-D input with the default axis 1 would give all ones where
    the op is undefined (onnxruntime refuses it).

    Raises:
        ConversionError: names the node, its axis and the input's rank.
    """
    if version >= 13:
        return
    for node, types in _typed_nodes(graph):   # each subgraph sees its own declarations
        if node.domain not in _DEFAULT_DOMAINS or node.op_type not in FLATTENING_OPS \
                or not len(node.input):
            continue
        rank = types.get(node.input[0], (0, None))[1]
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
        if rank is not None and not -rank <= axis < rank:
            which = f"node {node.name!r}" if node.name else "an unnamed node"
            raise ConversionError(f"{which} ({node.op_type}): axis {axis} is out of range "
                                  f"for its input of rank {rank} (opset {version}: "
                                  f"[{-rank}, {rank - 1}])")


def _apply_function_defaults(proto) -> None:
    """Copy each local function's attribute defaults (FunctionProto.attribute_proto) onto
    the calls that do not set them, in place: onnx's inliner drops a reference to an
    attribute the call leaves out instead of using the default.

    A call inside a function body may set an attribute by reference (`beta=@alpha`).
    Where a call of the enclosing function leaves `alpha` out (and it has no default),
    ONNX treats `beta` as not given, so the inner function's default for it applies;
    the inliner would drop `beta` only after the defaults were copied. Such a call is
    first pointed at a copy of the function whose body leaves those references out
    (`_without_absent_references`), and the defaults are copied onto that copy's calls.
    """
    functions = {(f.domain, f.name): f for f in proto.functions}
    if not any(len(f.attribute_proto) for f in functions.values()):
        return
    copies: dict = {}

    def visit(nodes):
        for node in nodes:
            f = functions.get((node.domain, node.op_type))
            if f is not None:
                present = {a.name for a in node.attribute} | \
                    {a.name for a in f.attribute_proto}
                specialized = _without_absent_references(proto, f, present, functions,
                                                         copies)
                node.op_type = specialized.name
                f = specialized
                given = {a.name for a in node.attribute}
                for default in f.attribute_proto:
                    if default.name not in given:
                        node.attribute.add().CopyFrom(default)
            for sub in proto_subgraphs(node):
                visit(sub.node)

    visit(proto.graph.node)
    done: set = set()
    while True:  # the bodies of every function a call (now) reaches
        pending = [f for f in proto.functions if (f.domain, f.name) not in done]
        if not pending:
            break
        for f in pending:
            done.add((f.domain, f.name))
            functions.setdefault((f.domain, f.name), f)
            visit(f.node)


def _absent_references(nodes, present: set) -> bool:
    """Whether a node of `nodes` (subgraphs included) sets an attribute by reference
    to a name outside `present`."""
    for node in nodes:
        if any(a.ref_attr_name and a.ref_attr_name not in present for a in node.attribute):
            return True
        if any(_absent_references(sub.node, present) for sub in proto_subgraphs(node)):
            return True
    return False


def _without_absent_references(proto, f, present: set, functions: dict, copies: dict):
    """`f`, or (added to proto.functions once per set of absent names) a copy of it
    whose body drops the attributes that refer to names outside `present`, the
    attributes a call of it sets or defaults."""
    if not _absent_references(f.node, present):
        return f
    referenced = set()

    def collect(nodes):
        for node in nodes:
            referenced.update(a.ref_attr_name for a in node.attribute if a.ref_attr_name)
            for sub in proto_subgraphs(node):
                collect(sub.node)

    collect(f.node)
    absent = sorted(referenced - present)
    key = (f.domain, f.name, tuple(absent))
    if key in copies:
        return copies[key]
    copy = type(f)()
    copy.CopyFrom(f)
    copy.name = f"{f.name}__without_{'_'.join(absent)}"
    while (copy.domain, copy.name) in functions:
        copy.name += "_"

    def drop(nodes):
        for node in nodes:
            kept = [a for a in node.attribute
                    if not (a.ref_attr_name and a.ref_attr_name in absent)]
            if len(kept) != len(node.attribute):
                del node.attribute[:]
                node.attribute.extend(kept)
            for sub in proto_subgraphs(node):
                drop(sub.node)

    drop(copy.node)
    proto.functions.append(copy)
    functions[(copy.domain, copy.name)] = copy
    copies[key] = copy
    return copy


def _ops_without_kernels(graph, left: dict, found=None) -> dict:
    """{op: [count, first node, why a local function was not inlined]} of the ops in
    `graph` and its subgraphs that onegraph has no definition of, in the order met
    (ONNX's own older ops, which the version converter replaces, are not listed)."""
    from onnx import defs

    found = collections.OrderedDict() if found is None else found
    for k, node in enumerate(graph.node):
        domain = "" if node.domain in _DEFAULT_DOMAINS else node.domain
        if not REGISTRY.has(node.op_type, domain) and not (
                domain in ("", "ai.onnx.ml") and defs.has(node.op_type, domain)):
            key = f"{domain}::{node.op_type}" if domain else node.op_type
            entry = found.setdefault(key, [0, node.name or f"#{k}",
                                           left.get((node.domain, node.op_type))])
            entry[0] += 1
        for sub in proto_subgraphs(node):
            _ops_without_kernels(sub, left, found)
    return found


def _unsupported_message(unsupported: dict) -> str:
    """One sentence listing every unsupported op with its count and first node."""
    parts = [f"{op} x{count} (first: node {first!r}"
             + (f"; a model-local function, but {why})" if why else ")")
             for op, (count, first, why) in unsupported.items()]
    return f"{len(parts)} unsupported op type(s): " + ", ".join(parts)


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _why_not_inlined(proto, f, convert_error: str | None) -> str:
    """Why onnx's inliner left local function `f` in place, as far as we can tell."""
    model = {("" if o.domain in _DEFAULT_DOMAINS else o.domain): int(o.version)
             for o in proto.opset_import}
    diffs = []
    for o in f.opset_import:
        domain = "" if o.domain in _DEFAULT_DOMAINS else o.domain
        if domain in model and model[domain] != o.version:
            diffs.append(f"{o.domain or 'ai.onnx'} {o.version} (the model has "
                         f"{model[domain]})")
    why = "it could not be inlined"
    if diffs:
        why += ": its opset_import differs from the model's: " + ", ".join(diffs)
    if convert_error:
        why += f"; version-converting it failed: {convert_error}"
    return why


def _shaped_value_names(graph) -> set[str]:
    """Names the main graph of a proto gives a shape itself (value_info, inputs,
    outputs), before any inference."""
    return {vi.name for vi in list(graph.value_info) + list(graph.input) + list(graph.output)
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")}


def _subgraph_shaped_value_names(graph) -> set[str]:
    """Names the proto's If/Loop/Scan bodies (at any depth) give a shape themselves,
    before any inference."""
    names: set[str] = set()
    for node in graph.node:
        for a in node.attribute:
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                names |= _shaped_value_names(sub) | _subgraph_shaped_value_names(sub)
    return names


def _drop_subgraph_hints(graph: Graph, stated: set[str]) -> None:
    """Forget the shapes of body activations that only ONNX's shape inference gave.

    In the main graph `_prefer_own_shapes` replaces such hints by onegraph's own
    inference; in If/Loop/Scan bodies it cannot (a body reads the enclosing graph's
    values), and the hints can be false: ONNX sizes Resize in double where onnxruntime
    and the kernels use float32 (12 x float32(10/12) is 10, ONNX says 9). A body's
    activations need no stated shape to run, and the export then writes only what the
    model stated. Never raises."""
    for node in graph.nodes:
        for sub in node.subgraphs():
            produced = {o for n in sub.nodes for o in n.outputs if o >= 0}
            for i in produced:
                t = sub.tensors[i]
                if t.shape is not None and t.name not in stated and t.data is None:
                    t.shape = None
            _drop_subgraph_hints(sub, stated)


def _typed_value_names(graph) -> dict[str, str]:
    """{name: "output" | "value"} of the values whose element type the main graph of a
    proto states itself (outputs, value_info), before any inference."""
    typed = {}
    for kind, vis in (("output", graph.output), ("value", graph.value_info)):
        for vi in vis:
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
                typed.setdefault(vi.name, kind)
    return typed


def _prefer_own_shapes(graph: Graph, stated: set[str], typed: dict | None = None,
                       opset: int | None = None) -> None:
    """Make onegraph's own shape inference win over onnx's where they disagree, and
    check what the model states against it.

    Shapes that only ONNX's shape inference supplied (the model did not state them) are
    hints: each such activation takes the shape onegraph's rules infer for it (what its
    kernels produce), dimension by dimension, and keeps the hint where the rules know
    nothing. onnx 1.23 counts one window too many for ceil_mode pools whose last window
    would start in the padding, which onnxruntime and the kernels skip. If onegraph's
    inference fails, the hints stay as they were.

    `typed` ({name: "output" | "value"}, see `_typed_value_names`) are the values whose
    element type the model states: each one a node produces must have the element type
    the node's inference rule gives it.

    Raises:
        ConversionError: a stated element type contradicts the producing node's rule
            (names the value, the node and both types); or a shape inference left a
            value with a negative or unaddressable dimension (names the node producing
            it, and what onegraph's inference refused, if it did).
    """
    from ..errors import OneGraphError
    from ..ops.inference import infer_graph
    from ..ops.registry import TensorInfo

    typed = typed or {}
    hinted = {i: t.shape for i, t in enumerate(graph.tensors)
              if t.shape is not None and t.data is None and not t.containers
              and t.name not in stated}
    producer = {i: n for n, node in enumerate(graph.nodes) for i in node.outputs if i >= 0}
    # stated element types, checked against what their producer's rule computes: the
    # rule must not see them (a declared dtype wins over an inferred one)
    check = {i: t.dtype for i, t in enumerate(graph.tensors)
             if i in producer and t.name in typed and t.dtype is not DType.UNDEFINED
             and not t.containers and t.data is None}
    if not hinted and not check:
        return
    for i in hinted:
        graph.tensors[i].shape = None
    overrides = {}
    for i in check:
        shape = graph.tensors[i].shape
        overrides[i] = TensorInfo(None, None if shape is None else
                                  tuple(None if d < 0 else d for d in shape))
    error = None
    try:
        infos = infer_graph(graph, overrides)
    except OneGraphError as e:
        infos, error = None, e
    for i, hint in hinted.items():
        own = None if infos is None or infos[i] is None else infos[i].shape
        t = graph.tensors[i]
        if own is not None and len(own) == len(hint):
            hint = tuple(h if o is None else int(o) for o, h in zip(own, hint))
            if t.dim_names is not None:  # a dim now of known size loses its name
                names = tuple(n if d == -1 else "" for n, d in zip(t.dim_names, hint))
                t.dim_names = names if any(names) else None
        t.shape = hint
    _refuse_bad_hints(graph, hinted, producer, error)
    # mixed input types first: they are the cause when a stated output type then differs
    _refuse_type_conflicts(graph, opset, infos)
    if infos is None:
        return
    for i, declared in check.items():
        own = None if infos[i] is None else infos[i].dtype
        if own is None:
            continue
        try:
            own_type = DType.from_numpy(own)
        except FormatError:
            continue
        if own_type is not declared:
            t, n = graph.tensors[i], producer[i]
            node = graph.nodes[n]
            raise ConversionError(
                f"graph {graph.name!r}: {typed[t.name]} {t.name!r} is declared with "
                f"element type {declared.name}, but node {n} {node.name!r} "
                f"({node.op_type}) produces {own_type.name}")


def _refuse_bad_hints(graph: Graph, hinted: dict, producer: dict, error) -> None:
    """Refuse the hinted shapes (see `_prefer_own_shapes`) that no tensor can have: a
    dimension below -1, or more elements than can be addressed (what `Model.lint`
    refuses), naming the node whose output it is, the first in graph order.

    Raises:
        ConversionError: names the node (index, name, op type), the value, its shape,
            and `error`, what onegraph's own inference refused, if anything.
    """
    from ..format.ir import MAX_ELEMENTS

    bad = []
    for i in hinted:
        shape = graph.tensors[i].shape
        product = 1
        for d in shape:
            product *= max(d, 1)
        if min(shape, default=0) < -1 or product > MAX_ELEMENTS:
            bad.append(i)
    if not bad:
        return
    try:
        order = {n: k for k, n in enumerate(graph.topological_order())}
    except FormatError:
        order = {}
    i = min(bad, key=lambda i: order.get(producer.get(i, -1), producer.get(i, -1)))
    t = graph.tensors[i]
    n = producer.get(i)
    who = f"graph {graph.name!r}: " + ("" if n is None else
                                       f"node {n} {graph.nodes[n].name!r} "
                                       f"({graph.nodes[n].op_type}): ")
    shape = f"output {t.name!r} gets the invalid shape {list(t.shape)}"
    if error is None:
        raise ConversionError(f"{who}shape inference: {shape} (check the node's input "
                              "values and attributes)")
    cause = str(error)
    own = "" if n is None else f"node {graph.nodes[n].name!r} ({graph.nodes[n].op_type}): "
    if own and cause.startswith(own):  # onegraph's rule for this very node refused
        raise ConversionError(f"{who}{cause[len(own):]} (shape inference: {shape})")
    raise ConversionError(f"{who}shape inference: {shape}; onegraph's inference "
                          f"refused: {cause}")


def _copy_proto(proto):
    """A deep copy of a ModelProto."""
    out = type(proto)()
    out.CopyFrom(proto)
    return out


def _infer_shapes(proto):
    """Best-effort ONNX shape inference (fills value_info); the input on failure.

    Raises:
        ConversionError: a stated dimension is negative other than -1 (see
            `_safe_for_inference`).
    """
    onnx = _onnx()
    if not _safe_for_inference(proto):
        return proto
    try:
        if proto.ByteSize() > 1 << 30:
            return proto
        inferred = onnx.shape_inference.infer_shapes(proto)
    except Exception:  # noqa: BLE001 - inference is only a hint
        return proto
    # ONNX's inference names the unknown dims it makes "unk__N": they are not the
    # model's names, and would come back out of an export as if they were
    own = {d.dim_param for vi in _value_infos(proto.graph) for d in _dims_of(vi)}
    for vi in _value_infos(inferred.graph):
        for d in _dims_of(vi):
            if d.dim_param.startswith("unk__") and d.dim_param not in own:
                d.ClearField("dim_param")
    return inferred


def _safe_for_inference(proto) -> bool:
    """Make `proto` safe for onnx's shape inference, whose C++ code crashes the process
    on some malformed declarations, and say whether to run it. A dim of -1 (what some
    exporters write for "unknown") is cleared to an unknown dim, as onegraph reads it;
    a graph input without a type (which ONNX requires, and onegraph takes from the
    feed) makes inference skipped, since some ops' inference dereferences it.

    Raises:
        ConversionError: a dim below -1.
    """
    typed = True
    versions = {o.domain or "": o.version for o in proto.opset_import}
    graphs = [("graph", proto.graph)]
    while graphs:
        where, g = graphs.pop()
        for kind, vis in (("input", g.input), ("output", g.output),
                          ("value_info", g.value_info)):
            for vi in vis:
                if kind == "input" and not vi.HasField("type"):
                    typed = False
                for d in _dims_of(vi):
                    if d.HasField("dim_value") and d.dim_value < 0:
                        if d.dim_value != -1:
                            raise ConversionError(
                                f"{where} {g.name or 'main'!r} {kind} {vi.name!r}: "
                                f"dimension {d.dim_value} is negative")
                        d.ClearField("dim_value")
        _check_passthrough_types(g, where)
        for node in g.node:
            graphs.extend(("subgraph", sub) for sub in proto_subgraphs(node))
            _check_split_outputs(node)
            _check_einsum_equation(node)
            _check_inputs_and_axes(node, versions)
    return typed


def _elem_type(vi):
    t = vi.type
    return t.tensor_type.elem_type if t.HasField("tensor_type") else None


def _check_passthrough_types(graph, where: str) -> None:
    """Refuse a graph output that is a graph input (or initializer) itself, declared
    with another element type: nothing converts between the two, so one declaration
    is false (onegraph would otherwise cast the feed to the output's type).

    Raises:
        ConversionError: names the value and both types.
    """
    declared = {vi.name: _elem_type(vi) for vi in graph.input}
    declared.update({t.name: t.data_type for t in graph.initializer})
    for out in graph.output:
        stated, source = _elem_type(out), declared.get(out.name)
        if stated and source and stated != source:
            names = _onnx_type_names()
            raise ConversionError(
                f"{where} {graph.name or 'main'!r} output {out.name!r} is its input "
                f"itself, declared {names.get(source, source)} as input and "
                f"{names.get(stated, stated)} as output")


def _onnx_type_names() -> dict:
    """ONNX element type numbers -> names (FLOAT, DOUBLE, ...)."""
    onnx = _onnx()
    return {v: k for k, v in onnx.TensorProto.DataType.items()}


# attributes naming axes or counts of axes: onnx's inference indexes with them
_AXIS_ATTRS = ("axis", "batch_dims", "new_axis")

# Attributes of default-domain ops that ONNX defines as 0/1 flags. Another value is a
# malformed model that the runtimes read differently (onnxruntime: "== 1", ONNX's
# reference: "nonzero"), so it is refused.
_FLAG_ATTRS = frozenset({
    "keepdims", "ceil_mode", "count_include_pad", "select_last_index",
    "noop_with_empty_axes", "transA", "transB", "exclusive", "reverse", "largest",
    "sorted", "allowzero", "storage_order", "upper", "center_point_box",
    "linear_before_reset", "input_forget", "detect_negative", "detect_positive", "fmod",
    "exclude_outside", "onesided", "inverse", "periodic", "is_test", "spatial",
    "new_axis", "normalize_variance", "across_channels"})


def _check_inputs_and_axes(node, versions: dict) -> None:
    """Refuse, before onnx's shape inference (whose C++ code crashes the process on
    them), a node whose required input (by the op's schema at the model's opset) is
    given as "", and an axis attribute outside int32 range or a negative batch_dims;
    and a 0/1 flag attribute of another value.

    Raises:
        ConversionError: names the node, the input or attribute and the problem.
    """
    onnx = _onnx()
    which = f"node {node.name!r} ({node.op_type})" if node.name else \
        f"an unnamed {node.op_type} node"
    for a in node.attribute:
        if a.name in _AXIS_ATTRS and a.type == onnx.AttributeProto.INT and (
                not -2**31 <= a.i < 2**31 or (a.name == "batch_dims" and a.i < 0)):
            raise ConversionError(f"{which}: attribute {a.name} = {a.i} is out of range")
        if a.name in _FLAG_ATTRS and a.type == onnx.AttributeProto.INT \
                and node.domain in _DEFAULT_DOMAINS and a.i not in (0, 1):
            raise ConversionError(f"{which}: attribute {a.name} = {a.i} must be 0 or 1")
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    if domain not in versions:
        return
    try:
        schema = onnx.defs.get_schema(node.op_type, versions[domain], domain)
    except Exception:  # an unknown op: the importer names it later
        return
    option = onnx.defs.OpSchema.FormalParameterOption
    formals = list(schema.inputs)
    # (too few inputs are named by _check_schema later; an empty name crashes)
    for k, name in enumerate(node.input):
        if name or not formals:
            continue
        formal = formals[min(k, len(formals) - 1)]
        if k >= len(formals) and formal.option != option.Variadic:
            continue   # more inputs than the op has: _check_schema names that
        if formal.option == option.Single:
            raise ConversionError(f"{which}: required input {k} ({formal.name!r}) of "
                                  f"{node.op_type} is empty")
        if formal.option == option.Variadic:
            # only an optional input may be left out; onnxruntime refuses it at load
            raise ConversionError(f"{which}: input {k} (of the variadic "
                                  f"{formal.name!r}) of {node.op_type} is empty")


def _check_split_outputs(node) -> None:
    """Refuse a Split with more outputs than its num_outputs attribute, on which onnx's
    shape inference aborts the process (an assertion in its C++ code).

    Raises:
        OpAttributeError: names the node and both counts.
    """
    if node.domain not in _DEFAULT_DOMAINS or node.op_type != "Split":
        return
    wanted = next((a.i for a in node.attribute if a.name == "num_outputs"), None)
    if wanted is not None and 1 <= wanted < len(node.output):   # (below 1: the op says)
        which = f"node {node.name!r}" if node.name else "an unnamed node"
        raise OpAttributeError(f"{which} (Split): num_outputs is {wanted} but the node has "
                               f"{len(node.output)} outputs")


def _check_einsum_equation(node) -> None:
    """Refuse an Einsum equation with stray dots ("i.j", "....") or several "->", on
    which onnx's shape inference loops forever, or one that does not fit the node's
    input count.

    Raises:
        ConversionError: names the node and the equation (the import's error type for
            every malformed model; the kernel's parser says what is wrong).
    """
    if node.domain not in _DEFAULT_DOMAINS or node.op_type != "Einsum":
        return
    raw = next((a.s for a in node.attribute if a.name == "equation"), None)
    if raw is None:
        return
    try:
        _parse_einsum(raw.decode("utf-8", "replace"), [None] * len(node.input))
    except OneGraphError as e:
        which = f"node {node.name!r}" if node.name else "an unnamed node"
        raise ConversionError(f"{which}: {e}") from None


def _value_infos(graph):
    """Every ValueInfoProto of `graph` and its subgraphs (inputs, outputs, value_info)."""
    yield from graph.input
    yield from graph.output
    yield from graph.value_info
    for node in graph.node:
        for sub in proto_subgraphs(node):
            yield from _value_infos(sub)


def _dims_of(value_info):
    """The dims of a tensor value's shape (none for other types or no shape)."""
    t = value_info.type
    if t.HasField("tensor_type") and t.tensor_type.HasField("shape"):
        return t.tensor_type.shape.dim
    return ()


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
    """Decode a TensorProto (data already in the proto) to a C-contiguous array.

    Raises:
        ConversionError: unsupported element type, data still marked external, or data
            that does not decode or does not match the dims.
    """
    onnx = _onnx()
    from onnx import numpy_helper

    elem = dtype_from_onnx(tensor_proto.data_type, where)  # refuses unsupported types
    if tensor_proto.data_location == _EXTERNAL:
        # _load_external_data loads every external tensor from the model's folder;
        # numpy_helper would read this one relative to the working directory.
        raise ConversionError(f"{where}: external data was not loaded from the model's "
                              "folder")
    _check_payload(tensor_proto, elem, where)
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


# Element types whose int32_data entries hold something narrower than 32 bits: the
# range each entry must lie in (bit patterns for the float types; one byte of two
# packed 4-bit or four 2-bit values for the sub-byte types; the values themselves
# for the integer types and BOOL). numpy_helper would wrap anything outside silently;
# onnxruntime refuses the float and sub-byte ones with "data overflow".
_INT32_DATA_RANGES = {
    "FLOAT16": (0, 0xFFFF), "BFLOAT16": (0, 0xFFFF),
    "FLOAT8E4M3FN": (0, 0xFF), "FLOAT8E4M3FNUZ": (0, 0xFF), "FLOAT8E5M2": (0, 0xFF),
    "FLOAT8E5M2FNUZ": (0, 0xFF), "FLOAT8E8M0": (0, 0xFF),
    "UINT4": (0, 0xFF), "INT4": (0, 0xFF), "FLOAT4E2M1": (0, 0xFF),
    "UINT2": (0, 0xFF), "INT2": (0, 0xFF),
    "INT8": (-0x80, 0x7F), "UINT8": (0, 0xFF), "INT16": (-0x8000, 0x7FFF),
    "UINT16": (0, 0xFFFF), "BOOL": (0, 1),
}


def _check_payload(t, dtype: DType, where: str) -> None:
    """Refuse tensor data that does not fit the tensor's dims and element type exactly
    (numpy_helper.to_array drops surplus packed bytes and wraps out-of-range values).

    Raises:
        ConversionError: raw_data is not exactly the bytes the dims need (packed types:
            ceil(n * bits / 8)); packed 4-/2-bit int32_data has not ceil(n * bits / 8)
            entries; an int32_data entry is outside the range of the element type (a
            16-bit pattern for FLOAT16/BFLOAT16, a byte for the FLOAT8 and packed
            types, the type's own range for INT8/UINT8/INT16/UINT16, 0 or 1 for BOOL);
            a UINT32 uint64_data entry does not fit 32 bits.
    """
    if dtype in (DType.STRING, DType.UNDEFINED):
        return
    name = dtype.name  # the ONNX name too, for the types looked at here
    packed = t.HasField("raw_data")
    if not packed and name not in _INT32_DATA_RANGES and name != "UINT32":
        return
    count = 1
    for d in t.dims:
        if d < 0:
            raise ConversionError(f"{where}: negative dimension in dims {list(t.dims)}")
        count *= int(d)
    bits = _SUB_BYTE_BITS.get(name, 8 * dtype.itemsize)
    unit = f"{bits}-bit" if bits < 8 else f"{bits // 8}-byte"
    if packed:
        need = (count * bits + 7) // 8
        if len(t.raw_data) != need:
            raise ConversionError(f"{where}: raw_data has {len(t.raw_data)} bytes, but "
                                  f"dims {list(t.dims)} of {unit} {name} need {need}")
        return
    if name == "UINT32":
        top = np.asarray(t.uint64_data, dtype=np.uint64).max() if len(t.uint64_data) else 0
        if top > 0xFFFFFFFF:
            raise ConversionError(f"{where}: uint64_data value {top} does not fit UINT32")
        return
    n = len(t.int32_data)
    if not n:
        return
    if name in _SUB_BYTE_BITS:
        need = (count * bits + 7) // 8
        if n != need:
            raise ConversionError(f"{where}: int32_data has {n} entries, but dims "
                                  f"{list(t.dims)} of {name} need {need} (two 4-bit or "
                                  "four 2-bit values packed in each)")
    lo, hi = _INT32_DATA_RANGES[name]
    values = np.asarray(t.int32_data, dtype=np.int64)
    bad = np.flatnonzero((values < lo) | (values > hi))
    if len(bad):
        if name in _SUB_BYTE_BITS:
            what = f"one byte of packed {bits}-bit values each, {lo} to {hi}"
        elif name.startswith(("FLOAT", "BFLOAT")):
            what = f"{bits}-bit patterns, {lo} to {hi}"
        else:
            what = f"{lo} to {hi}"
        raise ConversionError(f"{where}: int32_data[{bad[0]}] = {values[bad[0]]} is out of "
                              f"range for {name} (its int32_data hold {what})")


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

class _Scope(dict):
    """An enclosing graph's names (name -> (dtype, shape, containers, dim_names)) as
    the subgraphs of its node `at` see them.

    Every name can be read (a read of a value that a later node produces makes the
    subgraph's node depend on it), but only names defined before node `at` (graph
    inputs, initializers, outputs of earlier nodes) are in scope for shadowing: ONNX's
    lexical scoping, which onnx's checker and onnxruntime apply, lets a subgraph
    define a name that the enclosing graph defines only later.
    """

    __slots__ = ("producer", "at")

    def __init__(self, names: dict, producer: dict[str, int], at: int):
        super().__init__(names)
        self.producer = producer  # name -> index of the node producing it
        self.at = at

    def defines(self, name: str) -> bool:
        """Whether `name` is defined in this scope before node `at`."""
        return name in self and self.producer.get(name, -1) < self.at


class _Importer:
    """Converts GraphProtos (the main graph and, recursively, subgraphs) to Graphs.

    Args:
        opsets: the (upgraded) model's opset_import, {domain: version} with "" for the
            default domain.
        upgraded_from: the default-domain opset the model had before `_upgrade`.
        local_functions: {(domain, name): why} of model-local functions left in place
            by the inliner (see `_upgrade`).
    """

    def __init__(self, opsets: dict[str, int], upgraded_from: int | None = None,
                 local_functions: dict | None = None, payloads: dict | None = None):
        self.opsets = opsets
        self.payloads = payloads or {}  # main-graph initializer data (_detach_payloads)
        self.opset = opsets.get("")
        self.upgraded_from = upgraded_from
        self.local_functions = local_functions or {}
        self.unsupported: collections.OrderedDict = collections.OrderedDict()
        self.graph_count = 0
        # id(Graph) -> names its nodes (or its subgraphs') read from enclosing graphs
        self.free_names: dict[int, set[str]] = {}
        self.root = None  # the main GraphProto
        self.names: set[str] | None = None  # every value name of the model (lazily)

    def _placeholder(self, name: str) -> str:
        """`name`, or `name` followed by as many "_" as make it a name that no value of
        the model (any graph, subgraphs included) and no earlier placeholder has."""
        if self.names is None:
            self.names = _value_names(self.root) if self.root is not None else set()
        while name in self.names:
            name += "_"
        self.names.add(name)
        return name

    def graph(self, gp, outer: list[_Scope], is_main: bool) -> Graph:
        """Convert one GraphProto; `outer` holds name -> (dtype, shape, containers,
        dim_names) per enclosing scope, innermost first.

        Raises:
            ConversionError: names what is malformed and where (see `from_onnx`).
        """
        self.graph_count += 1
        if is_main:
            self.root = gp
        gname = gp.name or ("main" if is_main else f"subgraph_{self.graph_count}")
        g = Graph(gname, doc_string=gp.doc_string)
        where_g = f"graph {gname!r}"
        info: dict[str, tuple] = {}
        # Graph inputs and outputs first: ONNX shape inference copies a bad input type
        # into value_info entries, and the error should name the input that has it.
        # Priority is unchanged: outputs over inputs over value_info.
        for kind, vis in (("input", gp.input), ("output", gp.output)):
            for vi in vis:
                if vi.name:
                    typed = _type_info(vi.type if vi.HasField("type") else None,
                                       f"{where_g} {kind} {vi.name!r}")
                    if kind == "output" and vi.name in info:
                        # a graph input given out as it is: what the output leaves
                        # unsaid (no type, or no shape) the input's declaration says,
                        # else its feeds would go unchecked and uncast
                        typed = _fill_untyped(typed, info[vi.name])
                    info[vi.name] = typed
        for vi in gp.value_info:
            if vi.name and vi.name not in info:
                info[vi.name] = _type_info(vi.type if vi.HasField("type") else None,
                                           f"{where_g} value {vi.name!r}")
        initializer_names = set()
        for init in gp.initializer:
            if not init.name:
                raise ConversionError(f"{where_g}: initializer without a name")
            if init.name in initializer_names:
                raise ConversionError(f"{where_g}: initializer {init.name!r} defined twice")
            initializer_names.add(init.name)
            raw = self.payloads.get(init.name) if is_main else None
            if raw is not None and not init.HasField("raw_data") \
                    and init.data_location != _EXTERNAL:
                array = _payload_array(init, raw, f"{where_g} initializer {init.name!r}")
            else:
                array = _tensor_to_array(init, f"{where_g} initializer {init.name!r}")
            dtype = dtype_from_onnx(init.data_type, f"initializer {init.name!r}")
            g.add_tensor(init.name, dtype, array.shape, TensorKind.CONSTANT, array)
        for sp in gp.sparse_initializer:
            name = sp.values.name
            where = f"{where_g} sparse initializer {name!r}"
            if not name:
                raise ConversionError(f"{where_g}: sparse initializer without a name")
            if name in initializer_names:
                raise ConversionError(f"{where} defined twice")
            dense, dtype = _sparse_to_dense(sp, where)
            g.add_tensor(name, dtype, dense.shape, TensorKind.CONSTANT, dense)
            initializer_names.add(name)
        for vi in gp.input:
            if vi.name in initializer_names:
                idx = g.find_tensor(vi.name)  # a constant with a default
                _check_input_default(g.tensors[idx], vi, f"{where_g} input {vi.name!r}")
                g.inputs.append(idx)
                continue
            if g.find_tensor(vi.name) is not None:
                raise ConversionError(f"{where_g}: input {vi.name!r} declared twice")
            dtype, shape, containers, dim_names = info.get(vi.name, _UNTYPED)
            g.tensors[g.add_input(vi.name, dtype, shape, containers)].dim_names = dim_names

        produced: dict[str, int] = {}  # name -> index of the node producing it
        for k, node in enumerate(gp.node):
            for o in node.output:
                if o:
                    if o in produced or o in initializer_names or \
                            g.find_tensor(o) is not None:
                        if o in produced:
                            j = produced[o]
                            first = gp.node[j]
                            by = f"output of node {first.name or j!r} ({first.op_type})"
                            if j == k:
                                by = "another output of the same node"
                        else:
                            by = "an initializer" if o in initializer_names else \
                                "a graph input"
                        raise ConversionError(
                            f"{where_g}: node {node.name or k!r} ({node.op_type}) output "
                            f"{o!r} is already defined (as {by})")
                    if any(s.defines(o) for s in outer):
                        # ONNX's single static assignment spans scopes; a local
                        # definition would silently hide the outer value. Outer values
                        # defined only later are not in scope yet (as onnx's checker
                        # and onnxruntime see it): a local name may repeat them.
                        raise ConversionError(
                            f"{where_g}: node {node.name or k!r} ({node.op_type}) "
                            f"output {o!r} shadows a value of an enclosing graph (ONNX "
                            "names must be unique across a graph and its subgraphs)")
                    produced[o] = k
        local = set(initializer_names) | set(produced) | {vi.name for vi in gp.input}
        free: set[str] = set()  # names read from enclosing graphs
        node_reads: dict[int, set[str]] = {}  # node -> names its subgraphs read from here
        # Synthesized names skip every name a node of this graph really has (and those
        # synthesized before), so they cannot collide.
        taken = {node.name for node in gp.node if node.name}
        for k, node in enumerate(gp.node):
            where = f"node {node.name or k!r} ({node.op_type})"
            domain = "" if node.domain in _DEFAULT_DOMAINS else node.domain
            self._check_schema(node, domain, f"{where_g}: {where}")
            _check_control_flow(node, domain, f"{where_g}: {where}")
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
                        free.add(name)
                ins.append(idx)
            outs = []
            present = [i for i, o in enumerate(node.output) if o]
            last = present[-1] if present else -1
            for i, name in enumerate(node.output):
                if i > last:
                    break
                if not name:
                    name = self._placeholder(f"{OMITTED_OUTPUT_PREFIX}{node.name or k}_{i}")
                idx = g.find_tensor(name)
                if idx is None:
                    idx = _add_typed(g, name, info.get(name, _UNTYPED))
                outs.append(idx)
            attrs = {}
            for a in node.attribute:
                if a.name in attrs:
                    raise ConversionError(f"{where_g}: {where}: attribute {a.name!r} "
                                          "given twice")
                if a.name == "sparse_value" and node.op_type == "Constant" and \
                        node.domain in ("", "ai.onnx") and a.HasField("sparse_tensor"):
                    others = [b.name for b in node.attribute if b.name != a.name]
                    if others:  # `value` would silently take its place or lose it
                        raise ConversionError(
                            f"{where_g}: {where}: Constant: exactly one of its value "
                            f"attributes must be given, got sparse_value and {others}")
                    # densified as sparse initializers are: the same constant as `value`
                    attrs["value"] = _sparse_to_dense(
                        a.sparse_tensor, f"{where_g}: {where} attribute 'sparse_value'")[0]
                    continue
                # The enclosing scope is built only for graph attributes: building it
                # for every node made importing quadratic in the node count.
                attrs[a.name] = _attr_value(
                    a, f"{where_g}: {where}",
                    lambda sub, k=k: self.graph(
                        sub, [_Scope(self._scope_names(g, info, local), produced, k)]
                        + outer, False))
            reads = set()
            for value in attrs.values():
                for sub in (value if isinstance(value, TypedList) else [value]):
                    if isinstance(sub, Graph):
                        reads |= self.free_names.pop(id(sub), set())
            if reads:
                node_reads[k] = reads
                free |= reads - local
            self._fix_attrs(node, attrs, domain, info, f"{where_g}: {where}")
            if REGISTRY.has(node.op_type, domain):
                op = REGISTRY.get(node.op_type, domain)
                _check_attr_types(op, attrs, f"{where_g}: {where}")
                try:
                    op.resolve_attrs(attrs, "")
                except OpAttributeError as e:
                    raise ConversionError(f"{where_g}: {where}: {e}") from e
            else:
                key = f"{domain}::{node.op_type}" if domain else node.op_type
                entry = self.unsupported.setdefault(
                    key, [0, node.name or f"#{k}",
                          self.local_functions.get((node.domain, node.op_type))])
                entry[0] += 1
            node_name = node.name
            if not node_name:
                node_name = _unique_name(node.op_type, k, taken)
                taken.add(node_name)
            if domain == "" and node.op_type in _SEQUENCE_MAKERS:
                _type_sequence_output(node.op_type, attrs, g, ins, outs)
            if domain == "" and node.op_type in ("Loop", "Scan"):
                _type_carried_values(node.op_type, attrs, g, ins, outs)
            if domain == "" and node.op_type == "SequenceMap":
                _type_mapped_body_inputs(attrs, g, ins)
            g.nodes.append(_make_node(node, ins, outs, attrs, domain, node_name))
        for vi in gp.output:
            idx = g.find_tensor(vi.name)
            if idx is None:
                found = next((s[vi.name] for s in outer if vi.name in s), None)
                if found is None:
                    raise ConversionError(f"{where_g}: output {vi.name!r} names no tensor")
                idx = _add_typed(g, vi.name, found)
                free.add(vi.name)
            t = g.tensors[idx]
            dtype, shape, containers, dim_names = info.get(vi.name, _UNTYPED)
            if containers and not t.containers:
                t.containers = containers
            if t.dtype is DType.UNDEFINED:
                t.dtype = dtype
            if t.shape is None and shape is not None:
                t.shape, t.dim_names = shape, dim_names
            g.outputs.append(idx)
        _check_outer_read_cycles(gp, produced, node_reads, where_g)
        if not is_main:
            self.free_names[id(g)] = free
        return g

    def _check_schema(self, node, domain: str, where: str) -> None:
        """Check a standard-domain node against ONNX's schema at the model's opset:
        input/output counts, required inputs and outputs not given as "", and attribute
        names. Ops ONNX does not define at that opset are left to the registry.

        Raises:
            ConversionError: names the node, the op and the opset.
        """
        version = self.opsets.get(domain)
        if domain not in _SCHEMA_DOMAINS or version is None:
            return
        schema = onnx_schema(node.op_type, version, domain)
        if schema is None:
            return
        at = f"{node.op_type} at opset {version}"
        if domain == "" and self.upgraded_from is not None and \
                self.upgraded_from != version:
            at += f" (the model's opset {self.upgraded_from}, upgraded)"
        for kind, given, lo, hi, formal in (
                ("input", node.input, schema.min_input, schema.max_input, schema.inputs),
                ("output", node.output, schema.min_output, schema.max_output,
                 schema.outputs)):
            n = len(given)
            if not lo <= n <= hi:
                raise ConversionError(f"{where}: has {n} {kind}(s), but {at} takes "
                                      f"{_count_range(lo, hi)}")
            single = _onnx().defs.OpSchema.FormalParameterOption.Single
            for i, name in enumerate(given):
                if not name and i < len(formal) and formal[i].option == single:
                    raise ConversionError(f"{where}: required {kind} {i} "
                                          f"({formal[i].name!r}) of {at} is empty")
        if node.op_type in _UNCHECKED_ATTRIBUTE_OPS.get(domain, ()):
            return
        for a in node.attribute:
            # ONNX reserves names starting with "__" for implementation details.
            if a.name not in schema.attributes and not a.name.startswith("__"):
                raise ConversionError(f"{where}: attribute {a.name!r} is not defined for "
                                      f"{at} (known: {sorted(schema.attributes) or 'none'})")

    @staticmethod
    def _scope_names(g: Graph, info: dict, local: set) -> dict:
        out = {}
        for name in local:
            idx = g.find_tensor(name)
            if idx is not None:
                t = g.tensors[idx]
                out[name] = (t.dtype, t.shape, t.containers, t.dim_names)
            else:
                out[name] = info.get(name, _UNTYPED)
        return out

    def _fix_attrs(self, node, attrs: dict, domain: str, info: dict, where: str) -> None:
        """Make implicit facts of older opsets explicit where the kernels need them
        (Split's equal parts before 18, RoiAlign's sampling before 16, BatchNormalization's
        training mode before 14).

        Raises:
            ConversionError: a pre-18 Split without sizes whose known axis length its
                outputs do not divide (the parts must be equal then; opset 18's smaller
                last part is not allowed, and onnxruntime refuses it).
        """
        if domain == "" and node.op_type == "Split" and "num_outputs" not in attrs \
                and "split" not in attrs and (len(node.input) < 2 or not node.input[1]) \
                and (self.opset or 0) < 18:
            parts = attrs["num_outputs"] = len(node.output)
            shape = info.get(node.input[0], _UNTYPED)[1] if len(node.input) else None
            axis = attrs.get("axis", 0)
            if isinstance(axis, (bool, float)) or not isinstance(axis, (int, np.integer)):
                raise ConversionError(f"{where}: Split's axis must be an INT attribute, "
                                      f"got {type(axis).__name__} {axis!r}")
            axis = int(axis)
            length = shape[axis] if shape is not None and -len(shape) <= axis < len(shape) \
                else None
            if length is not None and length >= 0 and parts and length % parts:
                raise ConversionError(
                    f"{where}: Split before opset 18 splits into equal parts, but axis "
                    f"{axis} of length {length} does not divide into {parts} (give the "
                    f"sizes, or use opset 18's num_outputs)")
        if domain == "" and node.op_type == "RoiAlign" and (self.opset or 0) < 16 \
                and "coordinate_transformation_mode" not in attrs:
            # RoiAlign-10 samples without the half-pixel shift; RoiAlign-16 names that
            # behaviour and makes half_pixel the default
            attrs["coordinate_transformation_mode"] = "output_half_pixel"
        if domain == "" and node.op_type == "BatchNormalization" \
                and (self.upgraded_from or self.opset or 0) < 14 \
                and sum(1 for o in node.output if o) > 1:
            # before opset 14 a node that declares its running mean and variance
            # outputs runs in training mode (batch statistics; the spec's "output case
            # 1", and onnxruntime); opset 14 says so with training_mode
            attrs["training_mode"] = 1


# Domains whose node input/output counts and attribute names are checked against
# onnx.defs at the model's opset for that domain.
_SCHEMA_DOMAINS = ("", "ai.onnx.ml")

# OpSchema.max_input/max_output of a variadic parameter.
_UNBOUNDED = 2 ** 31 - 1


# Ops whose output is a sequence whatever the model states (their element type comes
# from the `dtype` attribute or from input 0).
_SEQUENCE_MAKERS = ("SequenceEmpty", "SequenceConstruct", "SplitToSequence",
                    "SequenceInsert", "SequenceErase")


def _type_sequence_output(op_type: str, attrs: dict, g: Graph, ins: list,
                          outs: list) -> None:
    """Type an untyped output of a sequence-making op as a sequence, in place: where
    ONNX's shape inference gave the model no types (an untyped Loop body stops it),
    the sequence a Loop carries is then known to be one (see `_type_carried_values`)."""
    if not outs or g.tensors[outs[0]].dtype is not DType.UNDEFINED \
            or g.tensors[outs[0]].containers:
        return
    source = g.tensors[ins[0]] if ins and ins[0] >= 0 else None
    if op_type == "SequenceEmpty":
        dtype = attrs.get("dtype", 1)  # ONNX's default: float
        try:
            dtype = dtype_from_onnx(int(dtype))
        except (ConversionError, TypeError, ValueError):
            return
    elif source is None or source.dtype is DType.UNDEFINED:
        return
    else:
        dtype = source.dtype
    out = g.tensors[outs[0]]
    out.dtype, out.containers = dtype, (Container.SEQUENCE,)


def _type_mapped_body_inputs(attrs: dict, g: Graph, ins: list) -> None:
    """Give a SequenceMap body's untyped inputs their types, in place: an element of
    the sequence mapped (its element type, one container less) or the tensor passed
    alongside. onnxscript writes bodies untyped, and onnxruntime refuses a SequenceMap
    whose body is (`to_onnx` writes the body's output types from these)."""
    body = attrs.get("body")
    if not isinstance(body, Graph):
        return
    for k, i in enumerate(ins[:len(body.inputs)]):
        if i < 0:
            continue
        given, t = g.tensors[i], body.tensors[body.inputs[k]]
        if given.dtype is DType.UNDEFINED or t.dtype is not DType.UNDEFINED or t.containers:
            continue
        sequence = given.containers[:1] == (Container.SEQUENCE,)
        t.dtype = given.dtype
        t.containers = tuple(given.containers[1:] if sequence else given.containers)


def _type_carried_values(op_type: str, attrs: dict, g: Graph, ins: list, outs: list) -> None:
    """Give a Loop's or Scan's untyped loop-carried values the element type and
    containers of their initial value, in place: the body's carried inputs and outputs
    (ONNX: the same type as the initial value) and the node's final-value outputs.
    onnxscript leaves a body's carried sequences untyped, and without their containers
    `to_onnx` wrote them as tensors, which ONNX's checker refuses. Shapes may change
    from one iteration to the next and are left alone."""
    body = attrs.get("body")
    if not isinstance(body, Graph):
        return
    if op_type == "Loop":
        carried = len(ins) - 2
        first_in, first_out, outer = 2, 1, ins[2:]
    else:
        carried = len(ins) - int(attrs.get("num_scan_inputs", 0) or 0)
        first_in, first_out, outer = 0, 0, ins
    for k in range(max(carried, 0)):
        if k >= len(outer) or outer[k] < 0:
            continue
        initial = g.tensors[outer[k]]
        if initial.dtype is DType.UNDEFINED:
            continue
        places = []
        if first_in + k < len(body.inputs):
            places.append(body.tensors[body.inputs[first_in + k]])
        if first_out + k < len(body.outputs):
            places.append(body.tensors[body.outputs[first_out + k]])
        if k < len(outs):
            places.append(g.tensors[outs[k]])
        for t in places:
            if t.dtype is DType.UNDEFINED and not t.containers:
                t.dtype, t.containers = initial.dtype, tuple(initial.containers)


def _count_range(lo: int, hi: int) -> str:
    """How many inputs or outputs a schema takes, in words."""
    return f"at least {lo}" if hi >= _UNBOUNDED else (f"{lo}" if lo == hi else
                                                      f"{lo} to {hi}")

# Ops whose ONNX schema allows attributes it does not list (AllowUncheckedAttributes,
# which onnx.defs does not expose to Python): the checker and onnxruntime accept them.
_UNCHECKED_ATTRIBUTE_OPS = {"": ("LayerNormalization",)}


def _check_control_flow(node, domain: str, where: str) -> None:
    """Check If/Loop/Scan subgraph signatures against the node (what onnxruntime checks
    when it loads the model); graph attributes that are missing are left to the registry.

    Raises:
        ConversionError: names the node, the subgraph and the counts that disagree.
    """
    if domain != "" or node.op_type not in ("If", "Loop", "Scan"):
        return
    A = _onnx().AttributeProto
    bodies = {a.name: a.g for a in node.attribute if a.type == A.GRAPH}  # unset g: empty
    ints = {a.name: list(a.ints) for a in node.attribute if a.type == A.INTS}
    n_in, n_out = len(node.input), len(node.output)
    if node.op_type == "If":
        for key in ("then_branch", "else_branch"):
            branch = bodies.get(key)
            if branch is None:
                continue
            if len(branch.input):
                raise ConversionError(f"{where}: {key} declares {len(branch.input)} "
                                      "input(s); If branches take none")
            if len(branch.output) != n_out:
                raise ConversionError(f"{where}: {key} has {len(branch.output)} output(s), "
                                      f"but the If node has {n_out}")
        return
    body = bodies.get("body")
    if body is None:
        return
    b_in, b_out = len(body.input), len(body.output)
    if node.op_type == "Loop":
        carried = max(n_in - 2, 0)  # inputs: trip count, condition, loop-carried values
        if b_in != 2 + carried:
            raise ConversionError(
                f"{where}: body has {b_in} input(s), but a Loop with {carried} "
                f"loop-carried value(s) needs {2 + carried} (iteration number, condition, "
                "then the loop-carried values)")
        if b_out < 1 + carried or b_out != 1 + n_out:
            raise ConversionError(
                f"{where}: body has {b_out} output(s) and the Loop node {n_out}; the body "
                f"needs 1 + N + K (condition, the {carried} loop-carried values, K >= 0 "
                f"scan outputs) and the node N + K")
        return
    scan_inputs = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), None)
    if scan_inputs is None:
        return
    if not 1 <= scan_inputs <= n_in:
        raise ConversionError(f"{where}: num_scan_inputs = {scan_inputs}, but the node has "
                              f"{n_in} input(s)")
    state = n_in - scan_inputs
    if b_in != n_in:
        raise ConversionError(f"{where}: body has {b_in} input(s), but the Scan passes it "
                              f"{state} state variable(s) and {scan_inputs} scan input(s)")
    if b_out != n_out or n_out < state:
        raise ConversionError(
            f"{where}: body has {b_out} output(s) and the Scan node {n_out}; both must be "
            f"the {state} state variable(s) followed by the scan outputs")
    for key, count in (("scan_input_axes", scan_inputs),
                       ("scan_input_directions", scan_inputs),
                       ("scan_output_axes", n_out - state),
                       ("scan_output_directions", n_out - state)):
        if key in ints and len(ints[key]) != count:
            raise ConversionError(f"{where}: {key} has {len(ints[key])} entries, but there "
                                  f"are {count}")


def _cyclic_nodes(deps: list[set[int]]) -> list[int]:
    """Nodes Kahn's algorithm cannot order (on or behind a cycle); deps[k] holds the
    nodes node k depends on."""
    users: dict[int, list[int]] = collections.defaultdict(list)
    for k, d in enumerate(deps):
        for j in d:
            users[j].append(k)
    pending = [len(d) for d in deps]
    ready = [k for k, n in enumerate(pending) if n == 0]
    while ready:
        j = ready.pop()
        for k in users[j]:
            pending[k] -= 1
            if pending[k] == 0:
                ready.append(k)
    return [k for k, n in enumerate(pending) if n]


def _check_outer_read_cycles(gp, produced: dict, node_reads: dict, where_g: str) -> None:
    """Refuse cycles closed through subgraphs: a node whose subgraph reads a value of
    this graph depends on that value's producer, as if it were a direct input. Plain
    cycles are left to `Graph.lint`, which reports them as such.

    Raises:
        ConversionError: names the nodes on the cycle and what their subgraphs read.
    """
    extra = {k: {produced[n] for n in names if n in produced}
             for k, names in node_reads.items()}
    if not any(extra.values()):
        return
    inputs = [{produced[n] for n in node.input if n in produced} for node in gp.node]
    if _cyclic_nodes(inputs):
        return  # a plain cycle: Graph.lint reports it
    deps = [d | extra.get(k, set()) for k, d in enumerate(inputs)]
    stuck = set(_cyclic_nodes(deps))
    if not stuck:
        return
    # Kahn leaves the cycle and everything downstream of it; peel off the downstream
    # nodes (those no other stuck node depends on) to name only the cycle.
    while True:
        needed = {j for k in stuck for j in deps[k]}
        tail = stuck - needed
        if not tail:
            break
        stuck -= tail
    stuck = sorted(stuck)
    names = ", ".join(f"{gp.node[k].name or f'#{k}'!r} ({gp.node[k].op_type})"
                      for k in stuck[:6])
    reads = "; ".join(f"{gp.node[k].name or f'#{k}'!r} reads "
                      f"{sorted(n for n in node_reads[k] if n in produced)} in a subgraph"
                      for k in stuck if k in node_reads and extra[k])
    raise ConversionError(f"{where_g}: nodes {names} form a cycle through values read "
                          f"from this graph inside subgraphs ({reads})")


# The dense form of a sparse initializer is built at import. A dense initializer can
# only claim as much as the bytes it brings; a sparse one claims its dims for free, so
# its dense size is capped at what one protobuf message (2 GiB) can hold inline.
MAX_SPARSE_DENSE_BYTES = 1 << 31


def _sparse_to_dense(sp, where: str) -> tuple[np.ndarray, DType]:
    """Densify a SparseTensorProto, validating it before allocating anything.

    Returns:
        (the dense array, its DType).

    Raises:
        ConversionError: a dim is negative; the dense form would exceed
            MAX_SPARSE_DENSE_BYTES; the indices are not integers, are neither [NNZ]
            (linear, in [0, size)) nor [NNZ, rank] (each within its dim); or the values
            are not a 1-D tensor of NNZ elements.
    """
    dims = [int(d) for d in sp.dims]
    if any(d < 0 for d in dims):
        raise ConversionError(f"{where}: negative dimension in dims {dims}")
    size = 1
    for d in dims:
        size *= d
    dtype = dtype_from_onnx(sp.values.data_type, f"{where} values")
    if dtype is DType.UNDEFINED:
        raise ConversionError(f"{where}: values have no element type")
    itemsize = 8 if dtype is DType.STRING else dtype.itemsize  # object pointers
    if size * itemsize > MAX_SPARSE_DENSE_BYTES:
        raise ConversionError(f"{where}: dims {dims} ({size} elements) would take "
                              f"{size * itemsize} bytes dense, more than the "
                              f"{MAX_SPARSE_DENSE_BYTES} a sparse initializer may claim")
    idx_type = dtype_from_onnx(sp.indices.data_type, f"{where} indices")
    if idx_type is DType.BOOL or idx_type.numpy.kind not in "iu":
        raise ConversionError(f"{where}: indices must be integers (INT64), got "
                              f"{idx_type.name}")
    values = _tensor_to_array(sp.values, f"{where} values")
    indices = _tensor_to_array(sp.indices, f"{where} indices")
    if values.ndim != 1:
        raise ConversionError(f"{where}: values must be 1-D, got shape {list(values.shape)}")
    nnz = values.shape[0]
    if indices.dtype.kind == "u" and indices.size and \
            indices.max() > np.iinfo(np.int64).max:
        raise ConversionError(f"{where}: index {indices.max()} out of range")
    indices = indices.astype(np.int64)
    if indices.ndim == 1:
        if len(indices) != nnz:
            raise ConversionError(f"{where}: {len(indices)} indices for {nnz} values")
        bad = np.flatnonzero((indices < 0) | (indices >= size))
        if len(bad):
            raise ConversionError(f"{where}: index {indices[bad[0]]} at position {bad[0]} is "
                                  f"outside [0, {size}) for dims {dims}")
        flat = indices
    elif indices.ndim == 2:
        if indices.shape != (nnz, len(dims)):
            raise ConversionError(f"{where}: indices have shape {list(indices.shape)}, "
                                  f"want [NNZ, rank] = [{nnz}, {len(dims)}]")
        bad = np.argwhere((indices < 0) | (indices >= np.asarray(dims, np.int64)))
        if len(bad):
            row, axis = (int(v) for v in bad[0])
            raise ConversionError(f"{where}: index {indices[row].tolist()} at position "
                                  f"{row} is outside dims {dims} (axis {axis})")
        flat = np.ravel_multi_index(tuple(indices.T), dims) if nnz else \
            np.zeros(0, np.int64)
    else:
        raise ConversionError(f"{where}: indices must be 1-D or 2-D, got shape "
                              f"{list(indices.shape)}")
    if dtype is DType.STRING:
        dense = np.full(size, "", dtype=object)
    else:
        dense = np.zeros(size, values.dtype)
    dense[flat] = values
    return dense.reshape(dims), dtype


def _value_names(gp, names: set | None = None) -> set:
    """Every value name a GraphProto and its subgraphs use (inputs, outputs,
    value_info, initializers, node inputs and outputs)."""
    names = set() if names is None else names
    names.update(vi.name for vi in gp.input)
    names.update(vi.name for vi in gp.output)
    names.update(vi.name for vi in gp.value_info)
    names.update(t.name for t in gp.initializer)
    names.update(sp.values.name for sp in gp.sparse_initializer)
    for node in gp.node:
        names.update(node.input)
        names.update(node.output)
        for sub in proto_subgraphs(node):
            _value_names(sub, names)
    return names


def _check_input_default(t, vi, where: str) -> None:
    """Refuse a graph input whose declared type contradicts its initializer `t`
    (onnxruntime refuses it too: the declaration would describe a different value
    than the one the model holds).

    Raises:
        ConversionError: names the input, the declared and the initializer's type.
    """
    dtype, shape, containers, _ = _type_info(vi.type if vi.HasField("type") else None,
                                             where)
    init = f"{t.dtype.name}{list(t.shape)}"
    if containers:
        raise ConversionError(f"{where}: declared as a sequence/optional/map, but its "
                              f"initializer is the tensor {init}")
    if dtype is not DType.UNDEFINED and dtype is not t.dtype:
        raise ConversionError(f"{where}: declared with element type {dtype.name}, but "
                              f"its initializer is {init}")
    if shape is not None and (len(shape) != len(t.shape) or any(
            d >= 0 and d != a for d, a in zip(shape, t.shape))):
        shown = [d if d >= 0 else "?" for d in shape]
        raise ConversionError(f"{where}: declared with shape {shown}, but its "
                              f"initializer is {init}")


def _unique_name(op_type: str, k: int, taken: set[str]) -> str:
    """`{op_type}_{k}`, or the first `{op_type}_{j}` (j > k) not in `taken`."""
    name = f"{op_type}_{k}"
    while name in taken:
        k += 1
        name = f"{op_type}_{k}"
    return name


def _make_node(node, ins, outs, attrs, domain, name):
    from ..format import Node

    return Node(node.op_type, ins, outs, attrs, name, domain, doc_string=node.doc_string)


# --------------------------------------------------------------------------- public API

def from_onnx(path_or_proto, *, check_ops: bool = True) -> Model:
    """Convert an ONNX model (file path, serialized bytes or ModelProto) to a Model.

    Initializers become CONSTANT tensors (a graph input that is also an initializer
    stays in `graph.inputs` as a constant default that a feed may override; their
    arrays are read-only, as og.load's, and the large ones share the bytes read from
    the file, so an import holds its weights about twice at its peak); symbolic
    dims become -1, their names kept in `Tensor.dim_names`; the ModelProto's
    producer_name, producer_version, doc_string, domain, model_version and graph name
    go in `metadata` as `onnx.producer_name`, `onnx.producer_version`, ...,
    `onnx.graph_name` (unless metadata_props has the key); opsets older than 13 are
    upgraded with ONNX's version converter; a "serving" signature maps each
    non-initializer graph input and each graph output by name. External data is read
    only from files inside the model's own folder.

    Args:
        path_or_proto: an `.onnx` path (str or os.PathLike), the model's bytes, or
            an `onnx.ModelProto`. Bytes are the serialized model, never a path (unlike
            og.load's and to_onnx's); bytes that spell one are refused saying so.
        check_ops: refuse models using ops the registry does not know (default).

    Warns:
        UserWarning: the model has training_info, which is not imported.

    Raises:
        ConversionError: the file cannot be read: missing, a folder, no permission, a
            NUL byte in the path (unlike og.load, which raises the OSError itself, every
            failure here is a ConversionError; the message is the same sentence,
            "cannot read 'PATH': No such file or directory"); the argument is not a
            path, bytes or ModelProto; the bytes do not parse; a string field (op
            type, domain, attribute or value name, ...) is not valid UTF-8; a tensor's
            data does not fit its dims and element type exactly (raw_data length,
            int32_data values out of the type's range); an initializer's graph-input
            declaration, or a stated output or value_info element type, contradicts
            the model; shape inference gives a value an invalid dimension (the node is
            named, and what its inference refused); opset_import repeats a
            domain, lacks the default domain the nodes use, or names an opset newer than
            onnx knows;
            external data (anywhere: graphs, subgraphs, local functions, sparse
            initializers) escapes the model's folder, or the model is not a file; a
            sparse initializer is malformed or too large to densify; a node input names
            no tensor; a node's input/output counts or attribute names contradict ONNX's
            schema at the model's opset, or an attribute has the wrong type for its op;
            a value's element type is one its node's op does not take at that opset;
            an If/Loop/Scan subgraph's inputs/outputs do not fit the node; a subgraph
            defines a name already in scope there (an input or initializer of an
            enclosing graph, or a value of one defined before the subgraph's node), or
            a cycle runs through subgraph reads; the
            opset cannot be upgraded; or ops are unsupported (one error listing every
            unsupported op with its count and first node, and why a model-local
            function was not inlined).
    """
    proto, _ = _load_proto(path_or_proto)
    _check_ir_version(proto)
    payloads = _detach_payloads(proto)
    original = _default_opset(proto)
    # what the model said before the upgrade rewrote it: a refusal then names its values
    as_written = _copy_proto(proto) if original is not None and original < MIN_OPSET \
        else None
    proto, left = _upgrade(proto)
    stated = _shaped_value_names(proto.graph)
    stated_in_bodies = _subgraph_shaped_value_names(proto.graph)
    typed = _typed_value_names(proto.graph)
    proto = _infer_shapes(proto)
    opsets = {("" if o.domain in _DEFAULT_DOMAINS else o.domain): int(o.version)
              for o in proto.opset_import}
    _refuse_misfit_types(proto, opsets, original, as_written)
    del as_written
    importer = _Importer(opsets, original, left, payloads)
    del payloads  # the arrays made from them keep what they use
    try:
        main = importer.graph(proto.graph, [], True)
    except FormatError as e:
        raise ConversionError(str(e)) from e
    _prefer_own_shapes(main, stated, typed, opsets.get(""))
    _drop_subgraph_hints(main, stated_in_bodies)
    expand_gradients(main, importer.unsupported)
    if check_ops and importer.unsupported:
        raise ConversionError(_unsupported_message(importer.unsupported))
    # The ModelProto's header goes in the metadata (what `to_onnx` writes back there);
    # an entry of metadata_props with the same key wins.
    metadata = {p.key: p.value for p in proto.metadata_props}
    for key, value in (("onnx.producer_name", proto.producer_name),
                       ("onnx.producer_version", proto.producer_version),
                       ("onnx.doc_string", proto.doc_string),
                       ("onnx.graph_name", proto.graph.name),
                       ("onnx.domain", proto.domain),
                       ("onnx.model_version",
                        str(proto.model_version) if proto.model_version else "")):
        if value:
            metadata.setdefault(key, value)
    if len(proto.training_info):
        # ONNX's training description (initialization and algorithm graphs) has no
        # counterpart here: training is the graph's own business (og.train); say so
        # rather than drop it unnoticed
        warnings.warn(f"from_onnx: the model's training_info ({len(proto.training_info)} "
                      "entr" + ("y" if len(proto.training_info) == 1 else "ies")
                      + ") is not imported; the inference graph is", stacklevel=2)
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


def _refuse_misfit_types(proto, opsets: dict, original: int | None,
                         as_written=None) -> None:
    """Refuse a node whose declared or inferred element types its op does not take
    (a CumSum of bools: PyTorch's exporter writes one for torch.cumsum(x > 0), which
    onnxruntime and onnx's checker refuse and a kernel would answer wrongly).
    `original` is the model's own default-domain opset, before any upgrade, and
    `as_written` the model before it (None when it was not upgraded): the upgrade
    spells some nodes with values of its own (a pre-13 Hardmax's input is a Flatten's
    output), so a misfit found after it is named in the model's own terms where the
    op version the model uses refuses it too.

    Raises:
        ConversionError: names the node, the value, its type and the types allowed.
    """
    found = element_type_misfit(proto.graph, opsets)
    if found is None:
        return
    opset = opsets.get("")
    if as_written is not None:
        own = element_type_misfit(_infer_shapes(as_written).graph, {"": original})
        if own is not None:
            found, opset = own, original
    node, kind, k, name, elem = found
    allowed = allowed_types(onnx_schema(node.op_type, opset, ""), kind, k) or set()
    shown = ", ".join(sorted(t[7:-1] for t in allowed if t.startswith("tensor(")))
    at = f"opset {opset}" + (f" (the model's opset {original}, upgraded)"
                             if original is not None and original != opset else "")
    which = f"node {node.name!r}" if node.name else "an unnamed node"
    raise ConversionError(
        f"{which} ({node.op_type}): {kind} {k} ({name!r}) is {elem[7:-1]}, which "
        f"{node.op_type} does not take at {at} (it takes {shown})")


def unsupported_ops(path_or_proto) -> dict[str, tuple[int, str]]:
    """Ops of an ONNX model that the registry lacks: {op: (count, first node name)}.

    Raises:
        ConversionError: the model cannot be read or is malformed (see `from_onnx`).
    """
    proto, _ = _load_proto(path_or_proto)
    _detach_payloads(proto)  # the weights' bytes are not needed to list the ops
    original = _default_opset(proto)
    try:
        proto, left = _upgrade(proto)
    except ConversionError:
        # an older opset with ops the version converter does not know: those are
        # the answer (it cannot go past them)
        functions = {(f.domain, f.name) for f in proto.functions}
        unknown = {op: entry for op, entry in _ops_without_kernels(proto.graph, {}).items()
                   if tuple(op.split("::", 1) if "::" in op else ("", op))
                   not in functions}
        if unknown:
            return {k: (v[0], v[1]) for k, v in unknown.items()}
        raise
    importer = _Importer({("" if o.domain in _DEFAULT_DOMAINS else o.domain): int(o.version)
                          for o in proto.opset_import}, original, left)
    try:
        main = importer.graph(proto.graph, [], True)
    except FormatError as e:
        raise ConversionError(str(e)) from e
    unsupported = dict(importer.unsupported)
    if GRADIENT_KEY in unsupported and nested_gradient(main) is None:
        del unsupported[GRADIENT_KEY]  # from_onnx builds it (convert/onnx_gradient.py)
    return {k: (v[0], v[1]) for k, v in unsupported.items()}

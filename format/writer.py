"""Serialize a Model to a `.og` file: the FlatBuffer, then the 64-byte aligned data tail.

Buffers hold absolute file offsets, which depend on the FlatBuffer's size; the
FlatBuffer is therefore built twice: once with placeholder offsets to learn its size,
then with the real ones. Offsets are always non-zero, so both builds store the same
fields and have the same size (checked). The output is a pure function of the model:
saving a loaded model again reproduces the file byte for byte.
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from typing import Any

import flatbuffers
import numpy as np

from ..errors import FormatError
from . import fb
from .atomic import atomic_open, fs_path
from .dtypes import DType
from .fb import (Attribute, Buffer, Graph as FbGraph, KeyValue, Model as FbModel, Node,
                 OpsetImport, Quantization, Signature, SignatureTensor, Tensor as FbTensor,
                 TensorValue, Version)
from .ir import AttrType, Graph, Model, attr_type_of, fitting_dim_names

FILE_IDENTIFIER = b"OGF1"
ALIGNMENT = 64
_PLACEHOLDER_OFFSET = 1 << 62


def align_up(n: int, alignment: int = ALIGNMENT) -> int:
    """Round n up to a multiple of alignment."""
    return (n + alignment - 1) // alignment * alignment


def encode_strings(array: np.ndarray, where: str = "string tensor") -> tuple[bytes, bool]:
    """Pack a string tensor: (n+1) little-endian uint64 offsets, then the elements'
    bytes; returns (that, whether the elements are raw bytes).

    Elements are str or bytes (numpy `S` arrays and object arrays of bytes, as
    `Graph.add_constant` makes them). Text is stored as UTF-8, and bytes that are UTF-8
    with it (they load back as str). When some bytes element is not UTF-8 (TF's strings
    are bytes: a PNG file), the buffer holds raw bytes (Buffer.raw_bytes, schema 1.6)
    and every element loads back as bytes, str elements UTF-8 encoded.

    Raises:
        FormatError: an element is of another type (int, None, float, ...), or is a str
            that UTF-8 cannot encode (a lone surrogate); the message names `where` and
            the element's flat index.
    """
    encoded, raw = [], False
    for k, s in enumerate(np.asarray(array, dtype=object).reshape(-1)):
        if isinstance(s, str):
            try:
                encoded.append(s.encode("utf-8"))
            except UnicodeEncodeError as e:
                raise FormatError(f"{where}: string element {k} is not valid UTF-8 "
                                  f"({e.reason})") from None
        elif isinstance(s, bytes):
            if not raw:
                try:
                    s.decode("utf-8")
                except UnicodeDecodeError:
                    raw = True
            encoded.append(bytes(s))
        else:
            raise FormatError(f"{where}: string element {k} is {type(s).__name__}, not "
                              "str or bytes")
    ends = np.cumsum([0] + [len(e) for e in encoded], dtype=np.uint64)
    return ends.astype("<u8").tobytes() + b"".join(encoded), raw


class _Segments:
    """The data tail being planned: one entry per Buffer, in file order."""

    def __init__(self) -> None:
        self.views: list[memoryview] = []
        self.raw_bytes: list[bool] = []   # per view: a STRING buffer of raw bytes

    def add(self, array: np.ndarray, dtype: DType, where: str) -> int:
        raw = False
        if dtype is DType.STRING:
            payload, raw = encode_strings(array, where)
            view = memoryview(payload)
        else:
            try:
                contiguous = np.ascontiguousarray(array, dtype=dtype.numpy)
            except (TypeError, ValueError) as e:
                raise FormatError(f"{where}: data cannot be stored as {dtype.name}: {e}") from e
            view = memoryview(contiguous.reshape(-1).view(np.uint8))
        self.views.append(view)
        self.raw_bytes.append(raw)
        return len(self.views) - 1


def _plan(model: Model) -> tuple[list[Graph], dict[int, int], _Segments, dict]:
    """Order graphs and assign a buffer to every piece of data (deterministically)."""
    graphs = model.all_graphs()
    graph_index = {id(g): i for i, g in enumerate(graphs)}
    segments = _Segments()
    buffer_of: dict[tuple, int] = {}
    for gi, g in enumerate(graphs):
        for ti, t in enumerate(g.tensors):
            if t.data is not None:
                where = f"graphs[{gi}].tensors[{ti}] ({t.name!r})"
                buffer_of[("t", gi, ti)] = segments.add(t.data, t.dtype, where)
        for ni, node in enumerate(g.nodes):
            for name in sorted(node.attributes):
                value = node.attributes[name]
                if isinstance(value, np.ndarray):
                    where = f"graphs[{gi}].nodes[{ni}].attributes[{name!r}]"
                    dt = DType.from_numpy(value.dtype)
                    buffer_of[("a", gi, ni, name)] = segments.add(value, dt, where)
    return graphs, graph_index, segments, buffer_of


def serialize(model: Model) -> tuple[bytes, list[memoryview], list[int]]:
    """Build the FlatBuffer for `model`.

    Returns:
        (flatbuffer bytes, data segments, absolute file offset of each segment)

    Raises:
        TypeError: model is not a Model.
        FormatError: the model is inconsistent (see `Model.lint`) or holds a value that
            cannot be stored.
    """
    _check_model(model, "serialize")
    model.lint()
    graphs, graph_index, segments, buffer_of = _plan(model)
    placeholder = [_PLACEHOLDER_OFFSET] * len(segments.views)
    first = _build(model, graphs, graph_index, segments, buffer_of, placeholder)
    offsets = []
    pos = align_up(len(first))
    for view in segments.views:
        offsets.append(pos)
        pos = align_up(pos + view.nbytes)
    final = _build(model, graphs, graph_index, segments, buffer_of, offsets)
    if len(final) != len(first):  # pragma: no cover - guards the two-pass invariant
        raise FormatError("internal error: FlatBuffer size changed between passes")
    return final, segments.views, offsets


def save_model(model: Model, path: str | os.PathLike) -> int:
    """Write `model` to `path` atomically (temp file, fsync, rename); returns bytes written.

    `path` may be a str, bytes (decoded with os.fsdecode) or os.PathLike.

    Raises:
        TypeError: model is not a Model, or path is not a str, bytes or os.PathLike.
        ValueError: path contains a NUL byte.
        FormatError: the model cannot be stored (nothing is written).
        OSError: the file system refused (the temp file is removed): the subclass the
            system gave (FileNotFoundError, PermissionError, IsADirectoryError, ...),
            worded "cannot write 'PATH': the folder does not exist" (see `format/atomic.py`).
    """
    _check_model(model, "save")
    path = fs_path(path, "write")  # before the (long) serialization
    flat, views, offsets = serialize(model)
    with atomic_open(path, "wb", prefix=".og-") as f:
        f.write(flat)
        pos = len(flat)
        for view, offset in zip(views, offsets):
            if offset > pos:
                f.write(b"\0" * (offset - pos))
            f.write(view)
            pos = offset + view.nbytes
        end = align_up(pos)
        if end > pos:
            f.write(b"\0" * (end - pos))
            pos = end
    return pos




def _check_model(model, verb: str) -> None:
    """Raises TypeError (og.save's words) unless `model` is a Model."""
    if not isinstance(model, Model):
        raise TypeError(f"cannot {verb} a {type(model).__name__}; expected a Model")


# -- FlatBuffer construction ------------------------------------------------------------

# What FlatBuffers and numpy raise for a value outside a field's type (Model.lint
# refuses these first, naming the field; this catches what lint does not know about).
_VALUE_ERRORS = (TypeError, ValueError, OverflowError, KeyError, struct.error)


class _storing:
    """Context manager: re-raise a value error from FlatBuffers/numpy as FormatError
    naming `where`."""

    def __init__(self, where: str) -> None:
        self.where = where

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, tb) -> bool:
        if kind is not None and issubclass(kind, _VALUE_ERRORS):
            raise FormatError(f"{self.where}: cannot be stored: {error}") from error
        return False


def _build(model, graphs, graph_index, segments, buffer_of, offsets) -> bytes:
    b = flatbuffers.Builder(1024)
    strings: dict[str, int] = {}

    def string(s: str) -> int:
        # Share identical strings: smaller files, and still deterministic.
        if s not in strings:
            if not isinstance(s, str):  # Model.lint names the field; this is a backstop
                raise FormatError(f"{type(s).__name__} {s!r} cannot be stored as a string")
            try:
                strings[s] = b.CreateString(s)
            except UnicodeEncodeError as e:
                raise FormatError(f"string {s!r} is not valid UTF-8: {e}") from e
        return strings[s]

    def table_vector(start_fn, items: list[int]) -> int:
        start_fn(b, len(items))
        for off in reversed(items):
            b.PrependUOffsetTRelative(off)
        return b.EndVector()

    def numbers(values, dtype) -> int:
        return b.CreateNumpyVector(np.asarray(list(values), dtype=dtype))

    graph_offsets = [_build_graph(b, g, gi, graph_index, buffer_of, string, table_vector,
                                  numbers) for gi, g in enumerate(graphs)]
    with _storing("model"):
        return _build_model(b, model, segments, offsets, string, table_vector, numbers,
                            graph_offsets)


def _build_model(b, model, segments, offsets, string, table_vector, numbers,
                 graph_offsets) -> bytes:
    """The Model table around the graphs already in `b`; returns the finished bytes."""
    buffers = []
    for view, offset, raw in zip(segments.views, offsets, segments.raw_bytes):
        Buffer.Start(b)
        Buffer.AddOffset(b, offset)
        Buffer.AddLength(b, view.nbytes)
        Buffer.AddCrc32(b, zlib.crc32(view))
        if raw:
            Buffer.AddRawBytes(b, True)
        buffers.append(Buffer.End(b))

    opsets = []
    for domain, version in sorted(model.opset_imports.items()):
        d = string(domain)
        OpsetImport.Start(b)
        OpsetImport.AddDomain(b, d)
        OpsetImport.AddVersion(b, int(version))
        opsets.append(OpsetImport.End(b))

    sigs = []
    for name in sorted(model.signatures):
        sig = model.signatures[name]
        sig_name = string(name)
        ins = _sig_tensors(b, sig.inputs, string)
        outs = _sig_tensors(b, sig.outputs, string)
        in_vec = table_vector(Signature.StartInputsVector, ins)
        out_vec = table_vector(Signature.StartOutputsVector, outs)
        targets = numbers(sig.targets, "<i4")
        Signature.Start(b)
        Signature.AddName(b, sig_name)
        Signature.AddGraph(b, sig.graph)
        Signature.AddInputs(b, in_vec)
        Signature.AddOutputs(b, out_vec)
        Signature.AddTargets(b, targets)
        sigs.append(Signature.End(b))

    meta = []
    for key in sorted(model.metadata):
        k, v = string(key), string(str(model.metadata[key]))
        KeyValue.Start(b)
        KeyValue.AddKey(b, k)
        KeyValue.AddValue(b, v)
        meta.append(KeyValue.End(b))

    producer = string(model.producer)
    graphs_vec = table_vector(FbModel.StartGraphsVector, graph_offsets)
    buffers_vec = table_vector(FbModel.StartBuffersVector, buffers)
    opsets_vec = table_vector(FbModel.StartOpsetImportsVector, opsets)
    sigs_vec = table_vector(FbModel.StartSignaturesVector, sigs)
    meta_vec = table_vector(FbModel.StartMetadataVector, meta)
    FbModel.Start(b)
    major, minor = model.schema_version
    FbModel.AddSchemaVersion(b, Version.CreateVersion(b, major, minor))
    FbModel.AddProducer(b, producer)
    FbModel.AddOpsetImports(b, opsets_vec)
    FbModel.AddGraphs(b, graphs_vec)
    FbModel.AddBuffers(b, buffers_vec)
    FbModel.AddSignatures(b, sigs_vec)
    FbModel.AddMetadata(b, meta_vec)
    root = FbModel.End(b)
    b.Finish(root, file_identifier=FILE_IDENTIFIER)
    return bytes(b.Output())


def _sig_tensors(b, mapping: dict[str, int], string) -> list[int]:
    out = []
    for key in sorted(mapping):
        k = string(key)
        SignatureTensor.Start(b)
        SignatureTensor.AddKey(b, k)
        SignatureTensor.AddTensor(b, int(mapping[key]))
        out.append(SignatureTensor.End(b))
    return out


def _build_graph(b, g: Graph, gi: int, graph_index, buffer_of, string, table_vector,
                 numbers) -> int:
    tensors = []
    for ti, t in enumerate(g.tensors):
        with _storing(f"graphs[{gi}].tensors[{ti}]"):
            tensors.append(_build_tensor(b, t, buffer_of.get(("t", gi, ti), -1), string,
                                         table_vector, numbers))

    nodes = []
    for ni, node in enumerate(g.nodes):
        where = f"graphs[{gi}].nodes[{ni}]"
        attrs = []
        for name in sorted(node.attributes):
            at = f"{where}.attributes[{name!r}]"
            with _storing(at):
                attrs.append(_build_attribute(b, name, node.attributes[name], at,
                                              buffer_of.get(("a", gi, ni, name), -1),
                                              graph_index, string, numbers))
        with _storing(where):
            nodes.append(_build_node(b, node, attrs, string, table_vector, numbers))

    with _storing(f"graphs[{gi}]"):
        name = string(g.name)
        tensors_vec = table_vector(FbGraph.StartTensorsVector, tensors)
        nodes_vec = table_vector(FbGraph.StartNodesVector, nodes)
        ins = numbers(g.inputs, "<i4")
        outs = numbers(g.outputs, "<i4")
        doc = string(g.doc_string) if g.doc_string else None
        FbGraph.Start(b)
        FbGraph.AddName(b, name)
        FbGraph.AddTensors(b, tensors_vec)
        FbGraph.AddNodes(b, nodes_vec)
        FbGraph.AddInputs(b, ins)
        FbGraph.AddOutputs(b, outs)
        if doc is not None:
            FbGraph.AddDocString(b, doc)
        return FbGraph.End(b)


def _build_tensor(b, t, buffer: int, string, table_vector, numbers) -> int:
    name = string(t.name)
    shape = numbers(t.shape, "<i8") if t.shape is not None else None
    containers = numbers([int(c) for c in t.containers], "<i1") if t.containers else None
    dim_names = None
    names = fitting_dim_names(t)  # the reader refuses names that do not fit the shape
    if names is not None:
        dim_names = table_vector(FbTensor.StartDimNamesVector, [string(n) for n in names])
    quant = None
    if t.quantization is not None:
        q = t.quantization
        scale = numbers(q.scale, "<f4")
        zp = numbers(q.zero_point, "<i8")
        Quantization.Start(b)
        Quantization.AddScale(b, scale)
        Quantization.AddZeroPoint(b, zp)
        Quantization.AddAxis(b, int(q.axis))
        quant = Quantization.End(b)
    FbTensor.Start(b)
    FbTensor.AddName(b, name)
    FbTensor.AddDtype(b, int(t.dtype))
    if shape is not None:
        FbTensor.AddShape(b, shape)
    FbTensor.AddBuffer(b, buffer)
    if quant is not None:
        FbTensor.AddQuantization(b, quant)
    FbTensor.AddKind(b, int(t.kind))
    if containers is not None:
        FbTensor.AddContainers(b, containers)
    if dim_names is not None:
        FbTensor.AddDimNames(b, dim_names)
    return FbTensor.End(b)


def _build_node(b, node, attrs: list[int], string, table_vector, numbers) -> int:
    name, op_type = string(node.name), string(node.op_type)
    domain, device = string(node.domain), string(node.device)
    ins = numbers(node.inputs, "<i4")
    outs = numbers(node.outputs, "<i4")
    ctrl = numbers(node.control_inputs, "<i4")
    attr_vec = table_vector(Node.StartAttributesVector, attrs)
    doc = string(node.doc_string) if node.doc_string else None
    Node.Start(b)
    Node.AddName(b, name)
    Node.AddOpType(b, op_type)
    Node.AddDomain(b, domain)
    Node.AddInputs(b, ins)
    Node.AddOutputs(b, outs)
    Node.AddAttributes(b, attr_vec)
    Node.AddDevice(b, device)
    Node.AddControlInputs(b, ctrl)
    if doc is not None:
        Node.AddDocString(b, doc)
    return Node.End(b)


def _build_attribute(b, name: str, value: Any, where: str, buffer: int, graph_index,
                     string, numbers) -> int:
    kind = attr_type_of(value, where)
    name_off = string(name)
    payload = None
    if kind is AttrType.STRING:
        payload = string(value)
    elif kind is AttrType.FLOATS:
        payload = numbers([float(v) for v in value], "<f8")
    elif kind is AttrType.INTS:
        payload = numbers([int(v) for v in value], "<i8")
    elif kind is AttrType.STRINGS:
        items = [string(v) for v in value]
        Attribute.StartStringsVector(b, len(items))
        for off in reversed(items):
            b.PrependUOffsetTRelative(off)
        payload = b.EndVector()
    elif kind is AttrType.GRAPHS:
        payload = numbers([graph_index[id(v)] for v in value], "<i4")
    elif kind is AttrType.TENSOR:
        shape = numbers(value.shape, "<i8")
        TensorValue.Start(b)
        TensorValue.AddDtype(b, int(DType.from_numpy(value.dtype)))
        TensorValue.AddShape(b, shape)
        TensorValue.AddBuffer(b, buffer)
        payload = TensorValue.End(b)
    Attribute.Start(b)
    Attribute.AddName(b, name_off)
    Attribute.AddType(b, int(kind))
    if kind is AttrType.FLOAT:
        f = float(value)
        if f == 0.0 and math.copysign(1.0, f) < 0:
            # -0.0 equals the default 0.0, which FlatBuffers would omit: force it.
            b.ForceDefaults(True)
            Attribute.AddF(b, f)
            b.ForceDefaults(False)
        else:
            Attribute.AddF(b, f)
    elif kind is AttrType.INT:
        Attribute.AddI(b, int(value))
    elif kind is AttrType.STRING:
        Attribute.AddS(b, payload)
    elif kind is AttrType.TENSOR:
        Attribute.AddT(b, payload)
    elif kind is AttrType.GRAPH:
        Attribute.AddG(b, graph_index[id(value)])
    elif kind is AttrType.FLOATS:
        Attribute.AddFloats(b, payload)
    elif kind is AttrType.INTS:
        Attribute.AddInts(b, payload)
    elif kind is AttrType.STRINGS:
        Attribute.AddStrings(b, payload)
    elif kind is AttrType.GRAPHS:
        Attribute.AddGraphs(b, payload)
    return Attribute.End(b)

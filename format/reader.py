"""Load a `.og` file: verify every byte the FlatBuffer part claims, then build the IR.

The Python FlatBuffers runtime does no bounds checking, so this module does not use
it for reading. It walks the FlatBuffer with its own bounds-checked accessors, checking
each offset, length, index, enum value, UTF-8 string and shape as it decodes, and raises
`FormatError` naming the field path (``graphs[0].nodes[12].inputs[1]``) on the first
problem. Work is bounded by the file size (a budget of decoded elements and string
bytes), so a hostile file cannot make loading hang or allocate what it merely claims to
need. A string or number vector referenced from many places is decoded once (values
that cannot change: strings, tuples of numbers). A table listed twice (a buffer,
tensor, node, attribute or graph table that two entries point at; FlatBuffers allows
it, onegraph's writer never does it) is refused: decoding it per listing would let a
4-byte entry cost a whole table, and sharing one decoded object would let an edit of
one listing (shape inference writing a tensor's dtype) change the other. Buffer
entries whose data segments overlap or repeat are refused too (each segment is
decoded and checksummed at most once).

Constant and variable tensors become numpy arrays viewing the memory-mapped data tail:
loading does not read the weights. STRING tensors are the exception: their elements are
decoded into Python str objects at load (bytes objects for a raw_bytes buffer).
`check_data=True` also verifies segment checksums.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
import zlib

import numpy as np

from ..errors import DataLossError, FormatError
from .atomic import fs_path, worded
from .dtypes import DType
from .ir import (SCHEMA_VERSION, AttrType, Container, Graph, Model, Node, Quantization,
                 Signature, Tensor, TensorKind, TypedList, check_quantization, subgraph_cycle,
                 topological_order)
from .writer import ALIGNMENT, FILE_IDENTIFIER

_U8, _I8 = struct.Struct("<B"), struct.Struct("<b")
_U16, _I16 = struct.Struct("<H"), struct.Struct("<h")
_U32, _I32 = struct.Struct("<I"), struct.Struct("<i")
_U64, _I64 = struct.Struct("<Q"), struct.Struct("<q")
_F64 = struct.Struct("<d")
_MAX_DIM_PRODUCT = 1 << 62  # == ir.MAX_ELEMENTS, which the writer enforces


class _Reader:
    """Bounds-checked access to a FlatBuffer held in `buf` (any buffer-protocol object)."""

    def __init__(self, buf, size: int) -> None:
        self.buf = buf
        self.size = size
        self.extent = 0  # furthest byte the FlatBuffer part uses
        # Each decoded element (table, vector entry, string read) costs one unit, and
        # each 4 bytes of a newly decoded string one more; a well-formed file needs far
        # fewer than this, a hostile one sharing or overlapping sub-objects cannot make
        # us do more.
        self.budget = 4 * size + 100_000
        # Decoded strings by the position of their length word, number vectors by
        # position and type: one shared by many tables (or referenced many times by a
        # hostile file) is decoded once, so repeats cost no memory for its elements.
        self.strings: dict[int, str] = {}
        self.numbers: dict[tuple[int, str], tuple] = {}

    def need(self, pos: int, n: int, path: str) -> None:
        if pos < 0 or n < 0 or pos + n > self.size:
            # a file cut short (a copy or download that stopped) shows up as the first
            # reference past its end: DataLossError, as a truncated data tail is
            raise DataLossError(f"{path}: bytes {pos}..{pos + n} lie outside the file "
                                f"({self.size} bytes): the file is truncated or an "
                                "offset in it is corrupt")
        if pos + n > self.extent:
            self.extent = pos + n

    def spend(self, units: int, path: str) -> None:
        self.budget -= units
        if self.budget < 0:
            raise FormatError(f"{path}: file references more data than it can hold "
                              "(shared or overlapping objects)")

    def scalar(self, st: struct.Struct, pos: int, path: str):
        self.need(pos, st.size, path)
        return st.unpack_from(self.buf, pos)[0]

    def table(self, pos: int, path: str) -> "_Table":
        self.spend(1, path)
        self.need(pos, 4, path)
        vtable = pos - _I32.unpack_from(self.buf, pos)[0]
        self.need(vtable, 4, f"{path} (vtable)")
        vt_len, tbl_len = _U16.unpack_from(self.buf, vtable)[0], \
            _U16.unpack_from(self.buf, vtable + 2)[0]
        if vt_len < 4 or vt_len % 2:
            raise FormatError(f"{path}: bad vtable size {vt_len}")
        if tbl_len < 4:
            raise FormatError(f"{path}: bad table size {tbl_len}")
        self.need(vtable, vt_len, f"{path} (vtable)")
        self.need(pos, tbl_len, path)
        return _Table(self, pos, vtable, vt_len, tbl_len, path)


class _Table:
    __slots__ = ("r", "pos", "vtable", "vt_len", "tbl_len", "path")

    def __init__(self, r: _Reader, pos, vtable, vt_len, tbl_len, path):
        self.r, self.pos, self.vtable = r, pos, vtable
        self.vt_len, self.tbl_len, self.path = vt_len, tbl_len, path

    def _field(self, slot: int, size: int, name: str) -> int:
        """Absolute position of a field, 0 when absent; checks it lies inside the table."""
        o = 4 + 2 * slot
        if o >= self.vt_len:
            return 0
        off = _U16.unpack_from(self.r.buf, self.vtable + o)[0]
        if off == 0:
            return 0
        if off < 4 or off + size > self.tbl_len:
            raise FormatError(f"{self.path}.{name}: field offset {off} outside its table")
        return self.pos + off

    def scalar(self, slot: int, st: struct.Struct, default, name: str):
        p = self._field(slot, st.size, name)
        return default if p == 0 else st.unpack_from(self.r.buf, p)[0]

    def _target(self, slot: int, name: str) -> int:
        p = self._field(slot, 4, name)
        if p == 0:
            return 0
        target = p + _U32.unpack_from(self.r.buf, p)[0]
        self.r.need(target, 4, f"{self.path}.{name}")
        return target

    def struct_at(self, slot: int, size: int, name: str) -> int:
        return self._field(slot, size, name)

    def string(self, slot: int, name: str, default: str | None = "") -> str | None:
        p = self._target(slot, name)
        if p == 0:
            return default
        return _string_at(self.r, p, f"{self.path}.{name}")

    def table(self, slot: int, name: str) -> "_Table | None":
        p = self._target(slot, name)
        return None if p == 0 else self.r.table(p, f"{self.path}.{name}")

    def vector(self, slot: int, elem_size: int, name: str) -> tuple[int, int] | None:
        """(start, count) of a vector field, None when absent."""
        p = self._target(slot, name)
        if p == 0:
            return None
        count = _U32.unpack_from(self.r.buf, p)[0]
        path = f"{self.path}.{name}"
        self.r.need(p + 4, count * elem_size, path)
        self.r.spend(count, path)
        return p + 4, count

    def numbers(self, slot: int, dtype: str, name: str) -> tuple | None:
        """A vector of numbers as a tuple (shared: never mutate it), None when absent.

        Each read is charged a unit per element (callers walk the elements), but a
        vector is decoded into Python numbers once per position: a ~36-byte int per
        element for each of many references would let a small file fill memory.
        """
        dt = np.dtype(dtype)
        v = self.vector(slot, dt.itemsize, name)
        if v is None:
            return None
        start, count = v
        key = (start, dtype)
        values = self.r.numbers.get(key)
        if values is None:
            values = tuple(np.frombuffer(self.r.buf, dt, count, start).tolist())
            self.r.numbers[key] = values
        return values

    def tables(self, slot: int, name: str) -> "_Tables":
        v = self.vector(slot, 4, name)
        start, count = v if v is not None else (0, 0)
        return _Tables(self.r, start, count, f"{self.path}.{name}")

    def strings(self, slot: int, name: str) -> list[str] | None:
        v = self.vector(slot, 4, name)
        if v is None:
            return None
        start, count = v
        out = []
        for i in range(count):
            p = start + 4 * i
            target = p + _U32.unpack_from(self.r.buf, p)[0]
            path = f"{self.path}.{name}[{i}]"
            self.r.need(target, 4, path)
            out.append(_string_at(self.r, target, path))
        return out


class _Tables:
    """A vector of tables, each verified as iteration reaches it: a vector of a million
    entries (perhaps all one shared table) never exists as a million objects at once.
    Iterate once: every table visited is charged to the budget."""

    __slots__ = ("r", "start", "count", "path")

    def __init__(self, r: _Reader, start: int, count: int, path: str) -> None:
        self.r, self.start, self.count, self.path = r, start, count, path

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        r, buf, start, path = self.r, self.r.buf, self.start, self.path
        for i in range(self.count):
            p = start + 4 * i
            yield r.table(p + _U32.unpack_from(buf, p)[0], f"{path}[{i}]")

    def each(self, decode, memo: dict, prefix: str | None = None):
        """decode(table, prefix[i]) of each entry, in order; `memo` records the table
        positions decoded so far (for every vector of this kind in the file), where
        the results are kept. `prefix` is the path decode's messages use (default: the
        vector's own).

        Raises what `decode` raises, and FormatError when an entry points at a table
        decoded already (a hostile file can list one table a million times for 4
        bytes each; see the module docstring) or the budget runs out.
        """
        r, buf, start = self.r, self.r.buf, self.start
        prefix = self.path if prefix is None else prefix
        for i in range(self.count):
            p = start + 4 * i
            pos = p + _U32.unpack_from(buf, p)[0]
            if pos in memo:
                raise FormatError(f"{self.path}[{i}]: points at a table another entry "
                                  "points at; each entry of a .og file is its own table")
            table = r.table(pos, f"{self.path}[{i}]")
            value = memo[pos] = decode(table, f"{prefix}[{i}]")
            yield value


def _string_at(r: _Reader, p: int, path: str) -> str:
    """The string whose length word is at `p` (the caller checked p..p+4 is in the file).

    Every read costs one unit of budget; the first one also a unit per 4 bytes decoded,
    so overlapping strings cannot decode more than a small multiple of the file.
    """
    cached = r.strings.get(p)
    if cached is not None:
        r.spend(1, path)
        return cached
    n = _U32.unpack_from(r.buf, p)[0]
    r.need(p + 4, n + 1, path)
    r.spend(1 + n // 4, path)
    if r.buf[p + 4 + n] != 0:
        raise FormatError(f"{path}: string is not NUL-terminated")
    try:
        text = bytes(r.buf[p + 4:p + 4 + n]).decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"{path}: string is not valid UTF-8 ({e.reason} at byte "
                          f"{e.start})") from None
    r.strings[p] = text
    return text


class _GraphRef:
    """A GRAPH (one index) or GRAPHS (a list) attribute's graph indices, replaced by the
    Graph(s) once all graphs are decoded. A marker, so that replacing it is done once
    even for a node listed many times."""

    __slots__ = ("indices", "many")

    def __init__(self, indices: list[int], many: bool) -> None:
        self.indices, self.many = indices, many

    def resolve(self, graphs: list):
        if self.many:
            return TypedList(AttrType.GRAPHS, [graphs[k] for k in self.indices])
        return graphs[self.indices[0]]


_ENUM_MEMBERS = {cls: {m.value: m for m in cls} for cls in (DType, TensorKind, Container,
                                                              AttrType)}


def _enum(value: int, enum_cls, path: str):
    member = _ENUM_MEMBERS[enum_cls].get(value)  # a dict lookup: far cheaper than enum_cls()
    if member is None:
        raise FormatError(f"{path}: unknown {enum_cls.__name__} value {value}")
    return member


def _shape(values: list | None, path: str, allow_unknown: bool) -> tuple | None:
    if values is None:
        return None
    product = 1
    for k, d in enumerate(values):
        if d < 0 and not (allow_unknown and d == -1):
            raise FormatError(f"{path}[{k}]: invalid dimension {d}")
        if d > 0:
            product *= d
            if product > _MAX_DIM_PRODUCT:
                raise FormatError(f"{path}: shape {list(values)} has more elements than "
                                  "can be addressed")
    return tuple(values)


def _dim_names(names: list[str] | None, shape: tuple | None, path: str) -> tuple | None:
    """A tensor's dimension names as a tuple (None when the field is absent), checked
    against its shape: one per dimension, a name only on an unknown (-1) dimension.
    (Each entry was checked as a UTF-8 string when read.)

    Raises:
        FormatError: names without a shape, a count other than the rank, or a name on
            a dimension of known size; naming `path`.
    """
    if names is None:
        return None
    if shape is None:
        raise FormatError(f"{path}: {len(names)} names for a tensor without a shape")
    if len(names) != len(shape):
        raise FormatError(f"{path}: {len(names)} names for a shape of rank {len(shape)}")
    for k, (name, d) in enumerate(zip(names, shape)):
        if name and d != -1:
            raise FormatError(f"{path}[{k}]: name {name!r} on a dimension of size {d} "
                              "(only an unknown dimension, -1, has a name)")
    return tuple(names)


def _index(i: int, n: int, path: str, allow_omitted: bool = False) -> int:
    if allow_omitted and i == -1:
        return i
    if not 0 <= i < n:
        raise FormatError(f"{path}: index {i} out of range (0..{n - 1})")
    return i


class _Decoder:
    """Turns verified tables into IR objects; owns the buffer list and the mapping."""

    def __init__(self, r: _Reader, data, file_size: int, check_data: bool):
        self.r = r
        self.data = data
        self.file_size = file_size
        self.check_data = check_data
        self.buffers: list[tuple[int, int, int]] = []
        self.crc_checked: set[int] = set()
        self.strings: dict[int, np.ndarray] = {}  # decoded string buffers, by index
        self.raw_bytes: set[int] = set()  # STRING buffers of raw bytes (schema 1.6)
        # Decoded tables by position (see `_Tables.each`): a table listed many times
        # is one object listed many times. Their decoding must not depend on where
        # they are listed; the node checks that do (indices within a graph) run in
        # `graph` for every listing.
        self.buffer_memo: dict[int, tuple[int, int, int]] = {}
        self.tensor_memo: dict[int, Tensor] = {}
        self.node_memo: dict[int, tuple[Node, list]] = {}
        self.attribute_memo: dict[int, tuple] = {}

    def decode_buffers(self, model_t: _Table) -> None:
        self.buffers = list(model_t.tables(4, "buffers").each(self.buffer, self.buffer_memo,
                                                               "buffers"))
        self._check_disjoint()

    def buffer(self, t: _Table, path: str) -> tuple[int, int, int]:
        """(offset, length, crc32) of a Buffer table; a raw_bytes flag (schema 1.6) adds
        its index (from the path) to self.raw_bytes.

        Raises:
            FormatError: the offset is not aligned.
            DataLossError: the segment lies past the end of the file.
        """
        offset = t.scalar(0, _U64, 0, "offset")
        length = t.scalar(1, _U64, 0, "length")
        crc = t.scalar(2, _U32, 0, "crc32")
        if t.scalar(3, _U8, 0, "raw_bytes"):
            self.raw_bytes.add(int(path[path.rindex("[") + 1:-1]))
        if offset % ALIGNMENT:
            raise FormatError(f"{path}.offset: {offset} is not {ALIGNMENT}-byte aligned")
        if offset + length > self.file_size:
            raise DataLossError(f"{path}: segment {offset}..{offset + length} lies past "
                                f"the end of the file ({self.file_size} bytes); "
                                "the file is truncated")
        return offset, length, crc

    def _check_disjoint(self) -> None:
        """Refuse buffer entries whose data segments overlap or repeat.

        The writer gives every piece of data its own segment (tensors may share one
        buffer *entry*, never two entries one segment). Aliased entries would make each
        one decoded and checksummed again, costing entries x segment size from a small
        file. Empty segments hold no bytes and may share an offset with anything.
        """
        spans = sorted((offset, i) for i, (offset, length, _) in enumerate(self.buffers)
                       if length)
        widest, widest_end = -1, -1  # the segment reaching furthest so far
        for offset, i in spans:
            if offset < widest_end:
                a, b = sorted((widest, i))
                oa, la, _ = self.buffers[a]
                ob, lb, _ = self.buffers[b]
                raise FormatError(f"buffers[{a}] and buffers[{b}]: data segments "
                                  f"{oa}..{oa + la} and {ob}..{ob + lb} overlap (each "
                                  "buffer must have bytes of its own)")
            end = offset + self.buffers[i][1]
            if end > widest_end:
                widest, widest_end = i, end

    def check_layout(self) -> None:
        fb_end = self.r.extent
        for i, (offset, length, _) in enumerate(self.buffers):
            if length and offset < fb_end:
                raise FormatError(f"buffers[{i}]: segment at {offset} overlaps the "
                                  f"FlatBuffer (which ends at {fb_end})")

    def array(self, buffer: int, dtype: DType, shape: tuple, path: str) -> np.ndarray:
        _index(buffer, len(self.buffers), f"{path}.buffer")
        if shape is None or any(d < 0 for d in shape):
            raise FormatError(f"{path}: tensor with data must have a fully known shape, "
                              f"got {shape}")
        if dtype is DType.UNDEFINED:
            raise FormatError(f"{path}: tensor with data has dtype UNDEFINED")
        offset, length, crc = self.buffers[buffer]
        count = nonzero = 1
        for d in shape:
            count *= d
            nonzero *= d or 1
        # numpy refuses even an empty array whose non-zero dims overflow its byte size.
        if nonzero * dtype.numpy.itemsize > np.iinfo(np.intp).max:
            raise FormatError(f"{path}: shape {list(shape)} of {dtype.name} is too large "
                              "to be addressed")
        if self.check_data and buffer not in self.crc_checked:
            segment = memoryview(self.data)[offset:offset + length]
            if zlib.crc32(segment) != crc:
                raise DataLossError(f"{path}: data in buffers[{buffer}] fails its CRC-32 "
                                    "check (the file is corrupted)")
            self.crc_checked.add(buffer)  # tensors sharing a buffer: checksum it once
        if dtype is DType.STRING:
            # Decoding is per element: charge it, so many tensors sharing one big string
            # buffer cannot make loading take quadratic time.
            self.r.spend(min(count, length // 8), path)
            cached = self.strings.get(buffer)
            if cached is None or cached.size != count:
                cached = _decode_strings(self.data, offset, length, count, path,
                                         buffer in self.raw_bytes)
                self.strings[buffer] = cached
            return cached.copy().reshape(shape)
        want = count * dtype.itemsize
        if want != length:
            raise FormatError(f"{path}: shape {list(shape)} of {dtype.name} needs {want} "
                              f"bytes but buffers[{buffer}] holds {length}")
        array = np.frombuffer(self.data, dtype.numpy, count, offset) if count else \
            np.zeros(0, dtype.numpy)
        return array.reshape(shape)

    def quantization(self, t: _Table | None) -> Quantization | None:
        if t is None:
            return None
        scale = t.numbers(0, "<f4", "scale") or []
        zero_point = t.numbers(1, "<i8", "zero_point") or []
        axis = t.scalar(2, _I32, 0, "axis")
        return Quantization(np.array(scale, np.float32), np.array(zero_point, np.int64), axis)

    def tensor(self, t: _Table, path: str) -> Tensor:
        name = t.string(0, "name")
        dtype = _enum(t.scalar(1, _I8, 0, "dtype"), DType, f"{path}.dtype")
        kind = _enum(t.scalar(5, _I8, 0, "kind"), TensorKind, f"{path}.kind")
        containers = tuple(_enum(c, Container, f"{path}.containers[{i}]")
                           for i, c in enumerate(t.numbers(6, "<i1", "containers") or ()))
        shape = _shape(t.numbers(2, "<i8", "shape"), f"{path}.shape", allow_unknown=True)
        buffer = t.scalar(3, _I32, -1, "buffer")
        data = None
        if buffer != -1:
            data = self.array(buffer, dtype, shape, path)
        elif kind is TensorKind.CONSTANT:
            raise FormatError(f"{path}: constant tensor {name!r} has no buffer")
        quant = self.quantization(t.table(4, "quantization"))
        if quant is not None:
            check_quantization(quant, dtype, shape, path)
        tensor = Tensor.__new__(Tensor)
        tensor.name, tensor.dtype, tensor.shape = name, dtype, shape
        tensor.kind, tensor.data, tensor.quantization = kind, data, quant
        tensor.containers = containers
        tensor.dim_names = _dim_names(t.strings(7, "dim_names"), shape,
                                      f"{path}.dim_names")
        return tensor

    def attribute(self, t: _Table, path: str, n_graphs: int):
        name = t.string(0, "name")
        kind = _enum(t.scalar(1, _I8, 0, "type"), AttrType, f"{path}.type")
        if kind is AttrType.FLOAT:
            value = t.scalar(2, _F64, 0.0, "f")
        elif kind is AttrType.INT:
            value = t.scalar(3, _I64, 0, "i")
        elif kind is AttrType.STRING:
            value = t.string(4, "s")
        elif kind is AttrType.TENSOR:
            tv = t.table(5, "t")
            if tv is None:
                raise FormatError(f"{path}.t: tensor attribute without a value")
            dtype = _enum(tv.scalar(0, _I8, 0, "dtype"), DType, f"{path}.t.dtype")
            if dtype.raw_storage:
                # A tensor keeps its DType beside raw data; an attribute is only its
                # array, which as raw storage would be re-saved as UINT8/UINT16.
                raise FormatError(f"{path}.t.dtype: a {dtype.name} attribute tensor needs "
                                  f"the ml_dtypes package, which is not installed")
            shape = _shape(tv.numbers(1, "<i8", "shape") or [], f"{path}.t.shape", False)
            value = self.array(tv.scalar(2, _I32, -1, "buffer"), dtype, shape, f"{path}.t")
        elif kind is AttrType.GRAPH:
            value = _GraphRef([_index(t.scalar(6, _I32, -1, "g"), n_graphs, f"{path}.g")],
                              many=False)
        elif kind is AttrType.FLOATS:
            value = TypedList(kind, t.numbers(7, "<f8", "floats") or [])
        elif kind is AttrType.INTS:
            value = TypedList(kind, t.numbers(8, "<i8", "ints") or [])
        elif kind is AttrType.STRINGS:
            value = TypedList(kind, t.strings(9, "strings") or [])
        elif kind is AttrType.GRAPHS:
            value = _GraphRef([_index(g, n_graphs, f"{path}.graphs[{k}]") for k, g in
                               enumerate(t.numbers(10, "<i4", "graphs") or [])], many=True)
        else:
            raise FormatError(f"{path}.type: attribute {name!r} has no type")
        return name, kind, value

    def node(self, t: _Table, path: str, n_graphs: int) -> tuple[Node, list]:
        """A Node table as a Node, with the (graph indices, path) of its subgraph
        attributes. Its tensor and node indices are left to `check_node`: they depend
        on the graph listing it, and a shared table may be listed by several.

        Raises:
            FormatError: a malformed field or attribute, or an attribute name repeats.
        """
        ins = list(t.numbers(3, "<i4", "inputs") or ())
        outs = list(t.numbers(4, "<i4", "outputs") or ())
        ctrl = list(t.numbers(7, "<i4", "control_inputs") or ())
        attributes, refs = {}, []
        attribute = lambda at, apath: self.attribute(at, apath, n_graphs)  # noqa: E731
        for ai, (name, kind, value) in enumerate(
                t.tables(5, "attributes").each(attribute, self.attribute_memo,
                                               f"{path}.attributes")):
            apath = f"{path}.attributes[{ai}]"
            if name in attributes:
                raise FormatError(f"{apath}: duplicate attribute {name!r}")
            if isinstance(value, _GraphRef):
                refs.append((value.indices, apath))
            attributes[name] = value
        node = Node.__new__(Node)
        node.op_type, node.inputs, node.outputs = t.string(1, "op_type"), ins, outs
        node.attributes, node.name = attributes, t.string(0, "name")
        node.domain, node.device = t.string(2, "domain"), t.string(6, "device")
        node.control_inputs = ctrl
        node.doc_string = t.string(8, "doc_string")
        return node, refs

    def resolve_graph_refs(self, graphs: list[Graph]) -> None:
        """Replace the subgraph attributes' indices by the Graphs, in each node decoded
        (once, however many times the node is listed)."""
        for node, refs in self.node_memo.values():
            if refs:
                for name, value in node.attributes.items():
                    if isinstance(value, _GraphRef):
                        node.attributes[name] = value.resolve(graphs)

    def check_node(self, node: Node, g: Graph, ni: int, n_nodes: int,
                   produced: dict[int, int], path: str) -> None:
        """Check node `ni` of `g` (listing `n_nodes` nodes) against its graph: indices in
        range, outputs neither produced twice nor constants; record them in `produced`.
        Charged a unit per index: it runs again each time a shared node is listed.

        Raises:
            FormatError: naming the index at fault.
        """
        n_t = len(g.tensors)
        self.r.spend(len(node.inputs) + len(node.outputs) + len(node.control_inputs), path)
        for k, i in enumerate(node.inputs):
            _index(i, n_t, f"{path}.inputs[{k}]", allow_omitted=True)
        for k, o in enumerate(node.outputs):
            _index(o, n_t, f"{path}.outputs[{k}]")
        for k, o in enumerate(node.outputs):
            if o in produced:
                raise FormatError(f"{path}.outputs[{k}]: tensor {o} is already "
                                  f"produced by node {produced[o]}")
            if g.tensors[o].kind is TensorKind.CONSTANT:
                raise FormatError(f"{path}.outputs[{k}]: tensor {o} is a constant")
            produced[o] = ni
        for k, i in enumerate(node.control_inputs):
            _index(i, n_nodes, f"{path}.control_inputs[{k}]")

    def graph(self, t: _Table, gi: int, n_graphs: int, graph_refs: list) -> Graph:
        path = f"graphs[{gi}]"
        g = Graph(t.string(0, "name"))
        g.tensors = list(t.tables(1, "tensors").each(self.tensor, self.tensor_memo,
                                                     f"{path}.tensors"))
        n_t = len(g.tensors)
        node_tables = t.tables(2, "nodes")
        node = lambda nt, npath: self.node(nt, npath, n_graphs)  # noqa: E731
        produced: dict[int, int] = {}
        for ni, (nd, refs) in enumerate(node_tables.each(node, self.node_memo,
                                                          f"{path}.nodes")):
            self.check_node(nd, g, ni, len(node_tables), produced, f"{path}.nodes[{ni}]")
            if refs:
                self.r.spend(len(refs), f"{path}.nodes[{ni}]")
                graph_refs.extend((gi, targets, apath) for targets, apath in refs)
            g.nodes.append(nd)
        g.inputs = [_index(i, n_t, f"{path}.inputs[{k}]")
                    for k, i in enumerate(t.numbers(3, "<i4", "inputs") or [])]
        g.outputs = [_index(i, n_t, f"{path}.outputs[{k}]")
                     for k, i in enumerate(t.numbers(4, "<i4", "outputs") or [])]
        g.doc_string = t.string(5, "doc_string")
        if topological_order(n_t, g.nodes) is None:
            raise FormatError(f"{path}: the graph has a cycle outside control-flow frames")
        return g


def _decode_strings(data, offset: int, length: int, count: int, path,
                    as_bytes: bool = False) -> np.ndarray:
    """The `count` elements of a STRING buffer: str (UTF-8 text), or bytes when
    `as_bytes` (a raw_bytes buffer).

    Raises:
        FormatError: the offsets are inconsistent, or a text element is not UTF-8.
    """
    head = 8 * (count + 1)
    if head > length:
        raise FormatError(f"{path}: string tensor of {count} elements needs at least {head} "
                          f"bytes, buffer holds {length}")
    ends = np.frombuffer(data, "<u8", count + 1, offset)
    body = length - head
    if ends[0] != 0 or ends[-1] != body or np.any(np.diff(ends.astype(np.int64)) < 0):
        raise FormatError(f"{path}: string tensor offsets are inconsistent")
    raw = bytes(memoryview(data)[offset + head:offset + length])
    out = np.empty(count, dtype=object)
    try:
        for k in range(count):
            element = raw[ends[k]:ends[k + 1]]
            out[k] = element if as_bytes else element.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(f"{path}: string element {k} is not valid UTF-8") from None
    return out


def _check_graph_refs(graph_refs, n_graphs: int) -> None:
    """Subgraph references must form a DAG that never points back to graph 0."""
    edges: list[set[int]] = [set() for _ in range(n_graphs)]
    for gi, targets, path in graph_refs:
        for target in targets:
            if target == 0:
                raise FormatError(f"{path}: a subgraph attribute refers to the main graph")
            edges[gi].add(target)
    cycle = subgraph_cycle(edges)
    if cycle is not None:
        raise FormatError(f"graphs[{cycle[0]}]: subgraph references form a cycle "
                          f"through graphs[{cycle[1]}]")


def _distinct(tables: _Tables, path: str, what: str):
    """(index, table) of each entry of `tables`, refusing an entry that repeats an
    earlier one: the IR tells graphs apart by identity (subgraph attributes refer to
    them), so a model cannot hold one graph twice, and decoding it again per listing
    would let a small file cost a whole graph per 4 bytes.

    Raises:
        FormatError: naming both entries.
    """
    first: dict[int, int] = {}
    for i, t in enumerate(tables):
        if t.pos in first:
            raise FormatError(f"{path}[{i}]: the same {what} table as "
                              f"{path}[{first[t.pos]}] (each {what} is listed once)")
        first[t.pos] = i
        yield i, t


def _keyed(entries, what: str, field: str, path: str) -> dict:
    """{key: value} of the (key, value) pairs read from the list at `path`, whose
    tables hold the key in `field`; `what` names a key in messages.

    Raises:
        FormatError: a key repeats (the file would be ambiguous: which value wins?).
    """
    out: dict = {}
    first: dict = {}
    for k, (key, value) in enumerate(entries):
        if key in first:
            raise FormatError(f"{path}[{k}].{field}: duplicate {what} {key!r} "
                              f"(also {path}[{first[key]}])")
        first[key] = k
        out[key] = value
    return out


# How the hint below starts: the CLI, which knows the file's name, puts its own in place.
ONNX_HINT = "; it starts like an ONNX model"


def _onnx_hint(data) -> str:
    """"; it starts like an ONNX model ..." for bytes that open as an ONNX ModelProto
    does (field 1, ir_version, a varint of a version ONNX has had), else ""."""
    if data[0] == 0x08 and 1 <= data[1] <= 32:
        return (f"{ONNX_HINT} (ir_version {data[1]}): convert it with "
                "onegraph.convert.from_onnx or `onegraph convert`")
    return ""


def parse(data, check_data: bool = False) -> Model:
    """Verify and decode a `.og` image held in any buffer (bytes, mmap, memoryview).

    Raises:
        FormatError: the bytes are not a valid `.og` model (the message names the field).
        DataLossError: the file is truncated (anything it refers to lies past its end),
            or (with check_data) a checksum mismatch.
    """
    size = len(data)
    if size < 8:
        raise FormatError(f"file is {size} bytes: too short to be a .og model")
    if bytes(data[4:8]) != FILE_IDENTIFIER:
        raise FormatError(f"not a .og model: file identifier is {bytes(data[4:8])!r}, "
                          f"expected {FILE_IDENTIFIER!r}{_onnx_hint(data)}")
    r = _Reader(data, size)
    root = r.scalar(_U32, 0, "root offset")
    model_t = r.table(root, "model")
    version_pos = model_t.struct_at(0, 4, "schema_version")
    if version_pos == 0:
        raise FormatError("model.schema_version: missing")
    major = _U16.unpack_from(data, version_pos)[0]
    minor = _U16.unpack_from(data, version_pos + 2)[0]
    if major != SCHEMA_VERSION[0]:
        raise FormatError(f"model.schema_version: file has schema {major}.{minor}, this "
                          f"reader understands major version {SCHEMA_VERSION[0]} only")
    dec = _Decoder(r, data, size, check_data)
    dec.decode_buffers(model_t)
    model = Model()
    model.schema_version = (major, minor)
    model.producer = model_t.string(1, "producer")
    model.opset_imports = _keyed(
        ((t.string(0, "domain"), t.scalar(1, _I64, 0, "version"))
         for t in model_t.tables(2, "opset_imports")), "opset domain", "domain",
        "opset_imports")
    graph_tables = model_t.tables(3, "graphs")
    graph_refs: list = []
    graphs = [dec.graph(t, gi, len(graph_tables), graph_refs)
              for gi, t in _distinct(graph_tables, "graphs", "graph")]
    _check_graph_refs(graph_refs, len(graphs))
    dec.resolve_graph_refs(graphs)
    for si, t in enumerate(model_t.tables(5, "signatures")):
        path = f"signatures[{si}]"
        sig = Signature(t.string(0, "name"))
        sig.graph = _index(t.scalar(1, _I32, 0, "graph"), len(graphs), f"{path}.graph")
        g = graphs[sig.graph]
        for field, slot in (("inputs", 2), ("outputs", 3)):
            keys = _keyed(((st.string(0, "key"),
                            _index(st.scalar(1, _I32, 0, "tensor"), len(g.tensors),
                                   f"{path}.{field}[{k}].tensor"))
                           for k, st in enumerate(t.tables(slot, field))),
                          f"{field[:-1]} key", "key", f"{path}.{field}")
            setattr(sig, field, keys)
        sig.targets = [_index(n, len(g.nodes), f"{path}.targets[{k}]")
                       for k, n in enumerate(t.numbers(4, "<i4", "targets") or [])]
        if sig.name in model.signatures:
            raise FormatError(f"{path}: duplicate signature name {sig.name!r}")
        model.signatures[sig.name] = sig
    model.metadata = _keyed(((t.string(0, "key"), t.string(1, "value"))
                             for t in model_t.tables(6, "metadata")),
                            "metadata key", "key", "metadata")
    dec.check_layout()
    # Only the graphs stored in the file's list order; subgraphs stay reachable both
    # from there and from the attributes that reference them.
    model.graphs = graphs
    model.file_info = {
        "file_size": size,
        "flatbuffer_size": r.extent,
        "data_size": sum(length for _, length, _ in dec.buffers),
        "num_buffers": len(dec.buffers),
        "alignment": ALIGNMENT,
    }
    return model


def _aligned_empty(size: int) -> np.ndarray:
    """An uninitialized uint8 array of `size` bytes starting on a 64-byte boundary (the
    data tail's alignment holds in memory as it does in a mapping)."""
    buf = np.empty(size + ALIGNMENT, np.uint8)
    start = -buf.ctypes.data % ALIGNMENT
    return buf[start:start + size]


def _read_aligned(f, size: int) -> np.ndarray:
    """The whole file as a read-only uint8 array starting on a 64-byte boundary.

    Raises:
        DataLossError: the file shrank while it was read.
    """
    data = _aligned_empty(size)
    got = f.readinto(memoryview(data))
    if got != size:
        raise DataLossError(f"file is truncated: read {got} of {size} bytes")
    data.flags.writeable = False
    return data


# A pipe is read in chunks of this size. Each chunk is released as soon as it has been
# copied into the aligned array, whose pages only become resident as they are written,
# so reading a model through a pipe holds about its size plus one chunk, not twice it.
_STREAM_CHUNK = 1 << 24


def _read_stream(f) -> np.ndarray:
    """Everything a pipe delivers until its writer closes it, as `_read_aligned` gives
    a file (a pipe has no size to read up to, and cannot be mapped)."""
    chunks = []
    while True:
        chunk = f.read(_STREAM_CHUNK)
        if not chunk:
            break
        chunks.append(chunk)
    data = _aligned_empty(sum(len(c) for c in chunks))
    offset = 0
    chunks.reverse()  # popped from the end in file order, each freed once copied
    while chunks:
        chunk = chunks.pop()
        data[offset:offset + len(chunk)] = np.frombuffer(chunk, np.uint8)
        offset += len(chunk)
        del chunk
    data.flags.writeable = False
    return data


def _open_image(f, memory_map: bool):
    """The bytes of the open file `f`: a read-only mapping, or (memory_map=False, or a
    pipe) an aligned array holding them.

    Raises:
        FormatError: the file is empty, or neither a regular file nor a pipe (a
            terminal or a device would be read without end).
        DataLossError: the file shrank while it was read.
        OSError: reading or mapping failed.
    """
    st = os.fstat(f.fileno())
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        data = _read_stream(f)
    elif not stat.S_ISREG(st.st_mode):
        raise FormatError("not a regular file or a pipe")
    elif st.st_size == 0:
        raise FormatError("file is empty")
    else:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if memory_map \
            else _read_aligned(f, st.st_size)
    if len(data) == 0:
        raise FormatError("file is empty (the pipe delivered no bytes)")
    return data


def load_model(path: str | os.PathLike, check_data: bool = False,
               memory_map: bool = True) -> Model:
    """Memory-map and verify a `.og` file; tensors with data view the mapping (no copy).

    `path` may be a str, bytes (decoded with os.fsdecode) or os.PathLike. With
    `memory_map=False` the file is read into memory instead (see `onegraph.load`).
    A pipe or FIFO (`cat m.og | onegraph info /dev/stdin`, a shell's `<(...)`) cannot
    be mapped: it is read to its end into memory, as with memory_map=False. Opening a
    FIFO waits until a writer opens it, as `cat FIFO` does.

    Raises:
        FormatError / DataLossError: the file is malformed, truncated or corrupted;
            or it is empty, or neither a regular file nor a pipe (a terminal, a
            device); or the memory to decode it ran out. The message starts with PATH.
        OSError: the file cannot be opened or mapped: the subclass the system gave
            (FileNotFoundError, PermissionError, IsADirectoryError, ...), worded
            "cannot read 'PATH': No such file or directory" (see `format/atomic.py`).
        TypeError: path is not a str, bytes or os.PathLike.
        ValueError: path contains a NUL byte.
    """
    path = fs_path(path, "read")
    data = None
    try:
        with open(path, "rb") as f:
            data = _open_image(f, memory_map)
        model = parse(data, check_data=check_data)
    except OSError as e:
        raise worded(e, "read", path) from None
    except (FormatError, MemoryError) as e:
        if isinstance(data, mmap.mmap):
            try:
                data.close()
            except BufferError:  # arrays decoded before the failure still view the map
                pass
        if isinstance(e, MemoryError):
            # the budget keeps decoding within a small multiple of the file's size;
            # this is a file too large for the memory available, not a hang
            raise FormatError(f"{path}: out of memory while loading it") from None
        raise type(e)(f"{path}: {e}") from None
    model.path = path
    return model

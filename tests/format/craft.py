"""Helpers for crafting `.og` images in tests: unchecked serialization and byte patching.

`image_unchecked` runs the real writer's FlatBuffer construction but skips
`Model.lint()`, so a test can produce a file with a dangling index, a cycle or a bad
shape exactly as a buggy or hostile producer would. The `*_pos` functions find the
absolute byte position of a field through the generated accessors in `format/fb/`
(`_tab.Pos` plus the vtable offset), so a test can patch one field of a valid file.
"""

from __future__ import annotations

import os
import struct
import zlib

import flatbuffers

from onegraph.format import writer
from onegraph.format.fb import Model as FbModel

# vtable offsets (4 + 2 * slot) of the fields the tests patch
MODEL_SCHEMA_VERSION = 4
BUFFER_OFFSET, BUFFER_LENGTH, BUFFER_CRC = 4, 6, 8
TENSOR_NAME, TENSOR_DTYPE, TENSOR_SHAPE, TENSOR_BUFFER = 4, 6, 8, 10
TENSOR_CONTAINERS = 16
NODE_INPUTS, NODE_OUTPUTS = 10, 12
GRAPH_INPUTS, GRAPH_OUTPUTS = 12, 14


def layout(model, offsets=None):
    """(flatbuffer bytes, segment views, segment offsets) without linting the model.

    `offsets` places the segments at chosen absolute positions (they must be non-zero
    so the FlatBuffer keeps the size of the placeholder pass).
    """
    graphs, graph_index, segments, buffer_of = writer._plan(model)
    if offsets is None:
        offsets = []
        placeholder = [writer._PLACEHOLDER_OFFSET] * len(segments.views)
        first = writer._build(model, graphs, graph_index, segments, buffer_of, placeholder)
        pos = writer.align_up(len(first))
        for view in segments.views:
            offsets.append(pos)
            pos = writer.align_up(pos + view.nbytes)
    flat = writer._build(model, graphs, graph_index, segments, buffer_of, offsets)
    return flat, segments.views, offsets


def image_unchecked(model) -> bytes:
    """The bytes `onegraph.save` would write for `model`, skipping its lint."""
    flat, views, offsets = layout(model)
    out = bytearray(flat)
    for view, offset in zip(views, offsets):
        out.extend(b"\0" * (offset - len(out)))
        out.extend(bytes(view))
    out.extend(b"\0" * (writer.align_up(len(out)) - len(out)))
    return bytes(out)


def write(path, data: bytes) -> str:
    with open(path, "wb") as f:
        f.write(data)
    return os.fspath(path)


def root(data) -> FbModel.Model:
    return FbModel.Model.GetRootAs(data, 0)


def field_pos(obj, vt_offset: int) -> int:
    """Absolute position of a scalar/offset field of a generated accessor object."""
    o = obj._tab.Offset(vt_offset)
    if o == 0:
        raise LookupError(f"field at vtable offset {vt_offset} is absent")
    return obj._tab.Pos + o


def vector_elem_pos(obj, vt_offset: int, index: int, elem_size: int) -> int:
    """Absolute position of element `index` of a vector field."""
    o = obj._tab.Offset(vt_offset)
    if o == 0:
        raise LookupError(f"vector at vtable offset {vt_offset} is absent")
    return obj._tab.Vector(o) + index * elem_size


def vector_len_pos(obj, vt_offset: int) -> int:
    """Absolute position of the uint32 length word of a vector or string field."""
    o = obj._tab.Offset(vt_offset)
    if o == 0:
        raise LookupError(f"field at vtable offset {vt_offset} is absent")
    return obj._tab.Vector(o) - 4


def patch(data: bytes, pos: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, pos, value)
    return bytes(out)


def buffer_table(data, i: int):
    return root(data).Buffers(i)


def tensor_table(data, gi: int, ti: int):
    return root(data).Graphs(gi).Tensors(ti)


def set_crc(data: bytes, i: int) -> bytes:
    """Recompute buffers[i].crc32 after a test changed that segment's bytes."""
    b = buffer_table(data, i)
    segment = data[b.Offset():b.Offset() + b.Length()]
    return patch(data, field_pos(b, BUFFER_CRC), "<I", zlib.crc32(segment))


def minimal_model_image(major: int, minor: int, extra_slot: bool = False) -> bytes:
    """A hand-built FlatBuffer: a Model with one empty graph and the given version.

    With `extra_slot`, the Model table carries a field the current schema does not
    know (slot 7), as a newer minor version of the writer might add.
    """
    from onegraph.format.fb import Graph as FbGraph, Version

    b = flatbuffers.Builder(256)
    name = b.CreateString("main")
    FbGraph.Start(b)
    FbGraph.AddName(b, name)
    g = FbGraph.End(b)
    FbModel.StartGraphsVector(b, 1)
    b.PrependUOffsetTRelative(g)
    graphs = b.EndVector()
    producer = b.CreateString("future-writer")
    b.StartObject(8 if extra_slot else 7)
    FbModel.AddSchemaVersion(b, Version.CreateVersion(b, major, minor))
    FbModel.AddProducer(b, producer)
    FbModel.AddGraphs(b, graphs)
    if extra_slot:
        b.PrependInt64Slot(7, 123456789, 0)
    m = b.EndObject()
    b.Finish(m, file_identifier=writer.FILE_IDENTIFIER)
    return bytes(b.Output())

"""Malformed `.og` files: each must raise `onegraph.FormatError` (or `DataLossError`)
whose message names the offending field, never another exception or a big allocation.

Bad files are made by patching single fields of a valid file (positions found through
the generated accessors in `format/fb/`), by serializing an inconsistent IR while
skipping the writer's lint (`craft.image_unchecked`), or by hand with
`flatbuffers.Builder`. Also: files over 2 GiB (sparse, so the test is cheap).
"""

from __future__ import annotations

import os
import random
import tracemalloc
import zlib

import numpy as np
import pytest

import onegraph
from onegraph import DataLossError, FormatError
from onegraph.format import Graph, Model, Node, writer
from onegraph.format.reader import parse

from . import craft


def base_model() -> Model:
    """x -> MatMul(w) -> Add(b) -> y, plus a string constant and a Loop body."""
    g = Graph("main")
    x = g.add_input("x", "float32", [-1, 4])                                 # 0
    g.add_constant("w", np.arange(8, dtype=np.float32).reshape(4, 2))       # 1
    g.add_constant("b", np.array([0.5, -1.5], np.float32))                  # 2
    g.add_constant("labels", np.array(["cat", "dög"], dtype=object))        # 3
    g.add_node("MatMul", [x, "w"], ["h"])                                   # t4
    body = Graph("body")
    body.add_input("i", "int64", [])
    (y,) = g.add_node("Add", ["h", "b"], ["y"], {"body": body, "alpha": 0.5})  # t5
    g.outputs = [y]
    model = Model(graphs=[g], opset_imports={"": 17})
    model.add_signature("serving", inputs={"x": x}, outputs={"y": y}, targets=[1])
    return model


@pytest.fixture(scope="module")
def valid() -> bytes:
    """The bytes of `base_model()` as `onegraph.save` writes them."""
    data = craft.image_unchecked(base_model())
    parse(data)  # sanity: the base image is valid
    return data


def load_bytes(tmp_path, data: bytes, check_data: bool = False) -> Model:
    path = craft.write(tmp_path / "bad.og", data)
    return onegraph.load(path, check_data=check_data)


def refused(tmp_path, data: bytes, match: str, error=FormatError, check_data=False):
    """Assert loading `data` raises `error` whose message matches `match` and the path."""
    with pytest.raises(error, match=match) as info:
        load_bytes(tmp_path, data, check_data)
    assert "bad.og" in str(info.value)
    return info.value


# -- whole-file damage --------------------------------------------------------------------

def test_empty_file(tmp_path):
    """An empty file is refused by name."""
    refused(tmp_path, b"", "empty")


def test_wrong_file_identifier(tmp_path, valid):
    """A file whose identifier is not OGF1 is refused before anything else is read."""
    data = valid[:4] + b"ONNX" + valid[8:]
    refused(tmp_path, data, r"file identifier is b'ONNX', expected b'OGF1'")


def test_random_bytes(tmp_path):
    """Random blobs of many sizes, with and without a valid identifier, are refused."""
    rng = random.Random(1234)
    for k in range(400):
        size = rng.choice([1, 3, 7, 8, 9, 16, 64, 100, 1000, 5000])
        data = bytearray(rng.randbytes(size))
        if k % 2 and size >= 8:
            data[4:8] = b"OGF1"
        with pytest.raises(FormatError):
            parse(bytes(data))
    refused(tmp_path, rng.randbytes(333), "file identifier")


def test_truncated_at_every_cut_point(valid):
    """Cutting the file anywhere before the last byte it needs is refused, past the
    8-byte header always as DataLossError ("truncated"), inside the FlatBuffer too;
    cutting only trailing padding still loads the same model."""
    model = parse(valid)
    needed = max([model.file_info["flatbuffer_size"]] +
                 [craft.buffer_table(valid, i).Offset() + craft.buffer_table(valid, i).Length()
                  for i in range(model.file_info["num_buffers"])])
    assert needed <= len(valid)
    for cut in range(len(valid)):
        data = valid[:cut]
        if cut < needed:
            with pytest.raises(FormatError) as info:
                parse(data)
            if cut >= 8:
                assert isinstance(info.value, DataLossError), (cut, info.value)
                assert "truncated" in str(info.value)
        else:
            assert parse(data) == model


def test_truncated_file_on_disk(tmp_path, valid):
    """A file cut inside its data tail raises DataLossError naming the buffer."""
    first = craft.buffer_table(valid, 0)
    refused(tmp_path, valid[:first.Offset() + 5], r"buffers\[0\].*truncated", DataLossError)


# -- data tail ------------------------------------------------------------------------------

def test_bit_flip_in_data_segment(tmp_path, valid):
    """A flipped bit in a segment fails its CRC with check_data=True (DataLossError);
    without check_data the file loads (the damage is not looked for)."""
    for i in range(3):
        b = craft.buffer_table(valid, i)
        for bit in (0, 7, 8 * b.Length() - 1):
            data = bytearray(valid)
            data[b.Offset() + bit // 8] ^= 1 << (bit % 8)
            err = refused(tmp_path, bytes(data), rf"buffers\[{i}\].*CRC-32", DataLossError,
                          check_data=True)
            assert "graphs[0].tensors[" in str(err)
    b = craft.buffer_table(valid, 0)
    data = bytearray(valid)
    data[b.Offset()] ^= 0x80
    w = load_bytes(tmp_path, bytes(data)).graph.tensor("w").data
    assert w.tobytes() != np.arange(8, dtype=np.float32).tobytes()


def test_bit_flip_in_crc_field(tmp_path, valid):
    """A damaged checksum is reported, too (with check_data)."""
    b = craft.buffer_table(valid, 1)
    data = craft.patch(valid, craft.field_pos(b, craft.BUFFER_CRC), "<I", b.Crc32() ^ 4)
    refused(tmp_path, data, r"buffers\[1\].*CRC-32", DataLossError, check_data=True)
    assert load_bytes(tmp_path, data) == base_model()


@pytest.mark.parametrize("field, value, match, error", [
    (craft.BUFFER_OFFSET, 1 << 20, r"buffers\[0\]: segment .* past the end", DataLossError),
    (craft.BUFFER_OFFSET, (1 << 64) - 64, r"buffers\[0\]: segment .* past the end",
     DataLossError),
    (craft.BUFFER_OFFSET, 65, r"buffers\[0\]\.offset: 65 is not 64-byte aligned",
     FormatError),
    (craft.BUFFER_OFFSET, 0, r"buffers\[0\]: segment at 0 overlaps the FlatBuffer",
     FormatError),
    (craft.BUFFER_LENGTH, 1 << 40, r"buffers\[0\]: segment .* past the end", DataLossError),
    (craft.BUFFER_LENGTH, (1 << 64) - 1, r"buffers\[0\]: segment .* past the end",
     DataLossError),
    (craft.BUFFER_LENGTH, 28, r"tensors\[1\].*needs 32 bytes but buffers\[0\] holds 28",
     FormatError),
])
def test_bad_buffer_fields(tmp_path, valid, field, value, match, error):
    """Offsets/lengths past the end, unaligned or overlapping segments are refused."""
    pos = craft.field_pos(craft.buffer_table(valid, 0), field)
    refused(tmp_path, craft.patch(valid, pos, "<Q", value), match, error)


# -- FlatBuffer structure ---------------------------------------------------------------

def test_root_offset_past_end(tmp_path, valid):
    """A root offset pointing outside the file is refused."""
    refused(tmp_path, craft.patch(valid, 0, "<I", 0xFFFFFF00), r"model: bytes .* outside")


def test_vector_length_past_end(tmp_path, valid):
    """A vector claiming 2**32-1 elements is refused without reading or allocating."""
    g = craft.root(valid).Graphs(0)
    pos = craft.vector_len_pos(g, 6)  # Graph.tensors
    tracemalloc.start()
    try:
        refused(tmp_path, craft.patch(valid, pos, "<I", 0xFFFFFFFF),
                r"graphs\[0\]\.tensors: bytes .* outside the file")
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()


def test_string_length_past_end(tmp_path, valid):
    """A tensor name whose length runs past the end of the file is refused."""
    pos = craft.vector_len_pos(craft.tensor_table(valid, 0, 0), craft.TENSOR_NAME)
    refused(tmp_path, craft.patch(valid, pos, "<I", 0x7FFFFFFF),
            r"graphs\[0\]\.tensors\[0\]\.name: bytes .* outside the file")


def test_string_without_nul(tmp_path, valid):
    """A string must be NUL-terminated."""
    t = craft.tensor_table(valid, 0, 0)
    pos = craft.vector_len_pos(t, craft.TENSOR_NAME) + 4 + len(t.Name())
    refused(tmp_path, craft.patch(valid, pos, "<B", ord("!")),
            r"graphs\[0\]\.tensors\[0\]\.name: string is not NUL-terminated")


def test_bad_vtable(tmp_path, valid):
    """A table whose vtable offset points outside the file is refused."""
    t = craft.tensor_table(valid, 0, 1)
    refused(tmp_path, craft.patch(valid, t._tab.Pos, "<i", -(1 << 30)),
            r"graphs\[0\]\.tensors\[1\] \(vtable\): bytes .* outside")


# -- shapes and sizes -------------------------------------------------------------------

def shape_patch(data: bytes, ti: int, dims) -> bytes:
    t = craft.tensor_table(data, 0, ti)
    assert t.ShapeLength() == len(dims)
    for k, d in enumerate(dims):
        data = craft.patch(data, craft.vector_elem_pos(t, craft.TENSOR_SHAPE, k, 8), "<q", d)
    return data


@pytest.mark.parametrize("ti, dims, match", [
    (1, [-2, 2], r"graphs\[0\]\.tensors\[1\]\.shape\[0\]: invalid dimension -2"),
    (1, [4, -1], r"graphs\[0\]\.tensors\[1\]: tensor with data must have a fully known "
                 r"shape"),
    (0, [-1, -7], r"graphs\[0\]\.tensors\[0\]\.shape\[1\]: invalid dimension -7"),
    (1, [2**20, 2**20], r"graphs\[0\]\.tensors\[1\]: shape \[1048576, 1048576\] of "
                        r"FLOAT32 needs 4398046511104 bytes but buffers\[0\] holds 32"),
    (1, [2**40, 2**40], r"graphs\[0\]\.tensors\[1\]\.shape: .* more elements than can"),
    (1, [0, 2**62], r"graphs\[0\]\.tensors\[1\]: shape \[0, 4611686018427387904\] of "
                    r"FLOAT32 is too large"),
    (2, [2**40], r"graphs\[0\]\.tensors\[2\]: shape \[1099511627776\] of FLOAT32 "
                 r"needs 4398046511104 bytes"),
    (2, [2**62], r"graphs\[0\]\.tensors\[2\]: shape \[4611686018427387904\] of FLOAT32 "
                 r"is too large"),
    (3, [2**40], r"graphs\[0\]\.tensors\[3\]: string tensor of 1099511627776 "
                 r"elements needs at least"),
])
def test_bad_shapes_refused_without_allocating(tmp_path, valid, ti, dims, match):
    """Negative dims and enormous shapes claiming a tiny buffer are refused, and loading
    never allocates what the shape claims."""
    data = shape_patch(valid, ti, dims)
    tracemalloc.start()
    try:
        refused(tmp_path, data, match)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_buffer_length_not_matching_shape(tmp_path):
    """A constant whose buffer holds more bytes than shape * dtype is refused."""
    model = base_model()
    model.graph.tensors[1].shape = (4,)  # data still holds 8 floats
    refused(tmp_path, craft.image_unchecked(model),
            r"graphs\[0\]\.tensors\[1\]: shape \[4\] of FLOAT32 needs 16 bytes but "
            r"buffers\[0\] holds 32")


def test_string_tensor_with_bad_offsets(tmp_path, valid):
    """String tensor offsets must be monotonic and end at the buffer's end."""
    b = craft.buffer_table(valid, 2)
    data = craft.patch(valid, b.Offset() + 8, "<Q", 1000)
    refused(tmp_path, craft.set_crc(data, 2),
            r"graphs\[0\]\.tensors\[3\]: string tensor offsets are inconsistent",
            check_data=True)


def test_non_utf8_string_element(tmp_path):
    """A string tensor element that is not UTF-8 is refused by index. (The writer
    refuses to store one, so the bytes are patched in.)"""
    model = base_model()
    model.graph.tensors[3].data = np.array(["ok", "xx"], dtype=object)
    data = craft.image_unchecked(model)
    body = craft.buffer_table(data, 2).Offset() + 3 * 8  # after the 3 offsets
    data = craft.set_crc(craft.patch(data, body + 2, "<2s", b"\xff\xfe"), 2)
    refused(tmp_path, data, r"graphs\[0\]\.tensors\[3\]: string element 1 is not valid UTF-8")


def test_non_utf8_tensor_name(tmp_path):
    """A tensor name that is not UTF-8 is refused, naming the field. (The writer
    refuses to store one, so the bytes are patched in.)"""
    model = base_model()
    model.graph.tensors[0].name = "xyz"
    data = craft.image_unchecked(model)
    pos = craft.vector_len_pos(craft.tensor_table(data, 0, 0), craft.TENSOR_NAME) + 4
    refused(tmp_path, craft.patch(data, pos, "<3s", b"x\xff\xfe"),
            r"graphs\[0\]\.tensors\[0\]\.name: string is not valid UTF-8")


# -- enums --------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [25, 99, 127, -1, -128])
def test_unknown_dtype(tmp_path, valid, value):
    """A dtype byte outside the DType enum is refused (25: the first after schema 1.1's)."""
    pos = craft.field_pos(craft.tensor_table(valid, 0, 0), craft.TENSOR_DTYPE)
    refused(tmp_path, craft.patch(valid, pos, "<b", value),
            rf"graphs\[0\]\.tensors\[0\]\.dtype: unknown DType value {value}")


@pytest.mark.parametrize("ti", [0, 1])
def test_unknown_dtype_byte_200(tmp_path, valid, ti):
    """A dtype byte of 200 (0xC8; the field is a signed byte, so it reads as -56) is
    refused naming the field, on an activation and on a constant with data alike."""
    pos = craft.field_pos(craft.tensor_table(valid, 0, ti), craft.TENSOR_DTYPE)
    refused(tmp_path, craft.patch(valid, pos, "<B", 200),
            rf"graphs\[0\]\.tensors\[{ti}\]\.dtype: unknown DType value -56")


@pytest.mark.parametrize("name", ["FLOAT8E4M3FN", "INT4", "UINT2", "FLOAT4E2M1"])
def test_one_byte_dtype_on_float32_data_refused(tmp_path, valid, name):
    """Relabelling w (8 float32, 32 bytes) as a 1.1 dtype stored one byte per element
    (sub-byte types unpacked) makes its buffer too long for the shape: refused."""
    from onegraph.format import DType

    pos = craft.field_pos(craft.tensor_table(valid, 0, 1), craft.TENSOR_DTYPE)
    refused(tmp_path, craft.patch(valid, pos, "<b", int(DType[name])),
            rf"graphs\[0\]\.tensors\[1\].*{name} needs 8 bytes")


def test_unknown_dtype_from_ir(tmp_path):
    """The same, written by the writer from an IR tensor with dtype 99."""
    model = base_model()
    model.graph.tensors[0].dtype = 99
    refused(tmp_path, craft.image_unchecked(model),
            r"graphs\[0\]\.tensors\[0\]\.dtype: unknown DType value 99")


def test_unknown_tensor_kind_and_attribute_type(tmp_path, valid):
    """TensorKind and AttributeType bytes outside their enums are refused."""
    t = craft.tensor_table(valid, 0, 1)
    refused(tmp_path, craft.patch(valid, craft.field_pos(t, 14), "<b", 9),
            r"graphs\[0\]\.tensors\[1\]\.kind: unknown TensorKind value 9")
    attr = craft.root(valid).Graphs(0).Nodes(1).Attributes(0)
    refused(tmp_path, craft.patch(valid, craft.field_pos(attr, 6), "<b", 42),
            r"graphs\[0\]\.nodes\[1\]\.attributes\[0\]\.type: unknown AttrType value 42")


def test_unknown_container_refused(tmp_path):
    """A Tensor.containers byte outside the Container enum is refused, naming it."""
    from onegraph.format import Container

    model = base_model()
    model.graph.tensors[0].containers = (Container.OPTIONAL, Container.SEQUENCE)
    data = craft.image_unchecked(model)
    assert parse(data).graph.tensors[0].containers == model.graph.tensors[0].containers
    pos = craft.vector_elem_pos(craft.tensor_table(data, 0, 0), craft.TENSOR_CONTAINERS, 1, 1)
    refused(tmp_path, craft.patch(data, pos, "<b", 5),
            r"graphs\[0\]\.tensors\[0\]\.containers\[1\]: unknown Container value 5")


# -- indices ------------------------------------------------------------------------------

@pytest.mark.parametrize("mutate, match", [
    (lambda m: m.graph.nodes[0].inputs.__setitem__(1, 99),
     r"graphs\[0\]\.nodes\[0\]\.inputs\[1\]: index 99 out of range \(0\.\.5\)"),
    (lambda m: m.graph.nodes[0].inputs.__setitem__(0, -2),
     r"graphs\[0\]\.nodes\[0\]\.inputs\[0\]: index -2 out of range"),
    (lambda m: m.graph.nodes[1].outputs.__setitem__(0, 6),
     r"graphs\[0\]\.nodes\[1\]\.outputs\[0\]: index 6 out of range"),
    (lambda m: m.graph.nodes[1].outputs.__setitem__(0, 4),
     r"graphs\[0\]\.nodes\[1\]\.outputs\[0\]: tensor 4 is already produced by node 0"),
    (lambda m: m.graph.nodes[1].outputs.__setitem__(0, 1),
     r"graphs\[0\]\.nodes\[1\]\.outputs\[0\]: tensor 1 is a constant"),
    (lambda m: m.graph.nodes[1].control_inputs.append(5),
     r"graphs\[0\]\.nodes\[1\]\.control_inputs\[0\]: index 5 out of range"),
    (lambda m: m.graph.outputs.__setitem__(0, 99),
     r"graphs\[0\]\.outputs\[0\]: index 99 out of range"),
    (lambda m: m.graph.inputs.append(-1),
     r"graphs\[0\]\.inputs\[1\]: index -1 out of range"),
    (lambda m: setattr(m.signatures["serving"], "inputs", {"x": 42}),
     r"signatures\[0\]\.inputs\[0\]\.tensor: index 42 out of range"),
    (lambda m: setattr(m.signatures["serving"], "outputs", {"y": 6}),
     r"signatures\[0\]\.outputs\[0\]\.tensor: index 6 out of range"),
    (lambda m: setattr(m.signatures["serving"], "targets", [1, 2]),
     r"signatures\[0\]\.targets\[1\]: index 2 out of range \(0\.\.1\)"),
    (lambda m: setattr(m.signatures["serving"], "graph", 3),
     r"signatures\[0\]\.graph: index 3 out of range"),
])
def test_dangling_indices(tmp_path, mutate, match):
    """Every index into tensors, nodes or graphs is range-checked, naming the field."""
    model = base_model()
    mutate(model)
    refused(tmp_path, craft.image_unchecked(model), match)
    with pytest.raises(FormatError):  # and the writer refuses to produce such a file
        onegraph.save(model, tmp_path / "never.og")
    assert not os.path.exists(tmp_path / "never.og")


def test_dangling_buffer_and_graph_indices(tmp_path, valid):
    """Tensor.buffer and Attribute.g pointing past their lists are refused."""
    t = craft.tensor_table(valid, 0, 1)
    refused(tmp_path, craft.patch(valid, craft.field_pos(t, craft.TENSOR_BUFFER), "<i", 7),
            r"graphs\[0\]\.tensors\[1\]\.buffer: index 7 out of range \(0\.\.2\)")
    node = craft.root(valid).Graphs(0).Nodes(1)
    names = [node.Attributes(k).Name() for k in range(node.AttributesLength())]
    k = names.index(b"body")  # attributes are stored sorted by name
    body = node.Attributes(k)
    refused(tmp_path, craft.patch(valid, craft.field_pos(body, 16), "<i", 9),
            rf"graphs\[0\]\.nodes\[1\]\.attributes\[{k}\]\.g: index 9 out of range")
    refused(tmp_path, craft.patch(valid, craft.field_pos(body, 16), "<i", 0),
            rf"graphs\[0\]\.nodes\[1\]\.attributes\[{k}\]: a subgraph attribute refers to "
            "the main graph")


# -- cycles -------------------------------------------------------------------------------

def two_node_loop(op_type: str) -> Model:
    g = Graph("loop")
    x = g.add_input("x", "float32", [1])
    a = g.add_tensor("a", "float32", [1])
    b = g.add_tensor("b", "float32", [1])
    g.nodes = [Node("Merge", [x, b], [a], name="merge"), Node(op_type, [a], [b], name="n")]
    g.outputs = [a]
    return Model(graphs=[g])


def test_cyclic_graph_refused(tmp_path):
    """Two nodes feeding each other form a cycle: refused on load and on save."""
    model = two_node_loop("Identity")
    refused(tmp_path, craft.image_unchecked(model),
            r"graphs\[0\]: the graph has a cycle outside control-flow frames")
    with pytest.raises(FormatError, match="cycle"):
        onegraph.save(model, tmp_path / "never.og")


def test_control_input_cycle_refused(tmp_path):
    """A cycle made of control edges is a cycle too."""
    model = two_node_loop("Identity")
    model.graph.nodes[1].inputs = []
    model.graph.nodes[1].control_inputs = [0]
    model.graph.nodes[0].control_inputs = [1]
    refused(tmp_path, craft.image_unchecked(model), r"graphs\[0\]: the graph has a cycle")


def test_next_iteration_back_edge_allowed(tmp_path):
    """The same loop closed by a NextIteration node is a control-flow frame: it loads."""
    model = two_node_loop("NextIteration")
    path = tmp_path / "loop.og"
    onegraph.save(model, path)
    assert onegraph.load(path) == model


def test_subgraph_reference_cycle_refused(tmp_path):
    """Subgraphs referencing each other in a ring are refused."""
    g = Graph("main")
    x = g.add_input("x", "bool", [])
    one, two = Graph("one"), Graph("two")
    one.nodes.append(Node("If", [], [], {"then": two}))
    two.nodes.append(Node("If", [], [], {"then": one}))
    g.add_node("If", [x], ["y"], {"then_branch": one})
    refused(tmp_path, craft.image_unchecked(Model(graphs=[g])),
            r"subgraph references form a cycle")


# -- versions -----------------------------------------------------------------------------

def version_patch(data: bytes, major: int, minor: int) -> bytes:
    pos = craft.field_pos(craft.root(data), craft.MODEL_SCHEMA_VERSION)
    return craft.patch(craft.patch(data, pos, "<H", major), pos + 2, "<H", minor)


def test_unknown_major_version_refused(tmp_path, valid):
    """Schema 2.0 is refused with a clear message."""
    refused(tmp_path, version_patch(valid, 2, 0),
            r"model\.schema_version: file has schema 2\.0, this reader understands "
            r"major version 1 only")
    refused(tmp_path, version_patch(valid, 0, 9), r"schema 0\.9")


def test_newer_minor_version_loads(tmp_path, valid):
    """Schema 1.7 loads (new minor versions only add fields)."""
    loaded = load_bytes(tmp_path, version_patch(valid, 1, 7))
    assert loaded.schema_version == (1, 7)
    model = base_model()
    model.schema_version = (1, 7)
    assert loaded == model


def test_unknown_field_of_newer_minor_is_ignored(tmp_path):
    """A hand-built 1.7 file with a field this reader does not know loads; the same
    file claiming 2.0 is refused."""
    loaded = load_bytes(tmp_path, craft.minimal_model_image(1, 7, extra_slot=True))
    assert loaded.schema_version == (1, 7) and loaded.producer == "future-writer"
    assert [g.name for g in loaded.graphs] == ["main"]
    refused(tmp_path, craft.minimal_model_image(2, 0, extra_slot=True), r"schema 2\.0")


def test_missing_schema_version(tmp_path, valid):
    """A Model table without schema_version is refused."""
    root = craft.root(valid)
    vtable = root._tab.Pos - int.from_bytes(valid[root._tab.Pos:root._tab.Pos + 4], "little",
                                            signed=True)
    refused(tmp_path, craft.patch(valid, vtable + craft.MODEL_SCHEMA_VERSION, "<H", 0),
            r"model\.schema_version: missing")


# -- files over 2 GiB ---------------------------------------------------------------------

@pytest.mark.parametrize("base", [2**31, 2**32 + 2**20])
def test_sparse_file_over_2gib(tmp_path, base):
    """Segments at offsets above 2**31 (and 2**32) load and read back right: the file is
    sparse, so this costs a few KiB of disk and no time."""
    model = base_model()
    offsets = [base + 64 * k for k in range(3)]
    flat, views, offsets = craft.layout(model, offsets)
    path = tmp_path / "big.og"
    with open(path, "wb") as f:
        f.write(flat)
        for view, offset in zip(views, offsets):
            f.seek(offset)
            f.write(view)
        f.truncate(writer.align_up(offsets[-1] + views[-1].nbytes))
    assert os.path.getsize(path) > base
    if os.stat(path).st_blocks * 512 > 1 << 24:
        pytest.skip("file system does not support sparse files")
    loaded = onegraph.load(path, check_data=True)
    assert loaded == model
    assert loaded.file_info["file_size"] > base
    w = loaded.graph.tensor("w").data
    assert not w.flags.owndata and not w.flags.writeable
    np.testing.assert_array_equal(w, np.arange(8, dtype=np.float32).reshape(4, 2))
    assert loaded.graph.tensor("labels").data.tolist() == ["cat", "dög"]
    # and a flipped byte far beyond 2 GiB is still caught by its checksum
    with open(path, "r+b") as f:
        f.seek(offsets[1])
        f.write(b"\xff")
    with pytest.raises(DataLossError, match=r"buffers\[1\].*CRC-32"):
        onegraph.load(path, check_data=True)


@pytest.mark.slow
def test_real_file_over_2gib(tmp_path):
    """Saving and loading a model with a 2 GiB + 64 byte constant (writes 2 GiB)."""
    big = np.zeros(2**31 + 64, np.uint8)
    big[-1] = 7
    big[2**31 - 1] = 3
    g = Graph("main")
    g.add_constant("small", np.arange(4, dtype=np.int32))
    g.add_constant("big", big)
    g.add_constant("after", np.array([1.5, 2.5], np.float64))
    model = Model(graphs=[g])
    path = tmp_path / "big.og"
    onegraph.save(model, path)
    del big
    loaded = onegraph.load(path, check_data=True)
    data = loaded.graph.tensor("big").data
    assert data.shape == (2**31 + 64,) and data[-1] == 7 and data[2**31 - 1] == 3
    assert loaded.graph.tensor("after").data.tolist() == [1.5, 2.5]
    assert zlib.crc32(loaded.graph.tensor("small").data) == zlib.crc32(
        np.arange(4, dtype=np.int32))

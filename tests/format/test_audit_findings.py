"""Regressions for the `.og` format audit (/tmp/hunt_format/REPORT.md, F1-F7 and F9).

- F1/F2: buffer entries whose data segments overlap or repeat are refused before any
  tensor is decoded or checksummed (the writer never produces them), so a small file
  cannot make loading allocate or checksum one segment once per entry.
- F3: string tensors hold str (or bytes that are valid UTF-8, loaded back as str);
  anything else is refused by `save` before a byte is written.
- F4: `Model.lint` (run by save) refuses cyclic subgraph references, as load does.
- F5: numbers the file cannot represent (attribute ints outside int64, opset versions,
  the quantization axis, the schema version) are refused by lint, naming the field.
- F6: a string referenced many times is decoded once; the reader's budget charges
  every read and the bytes decoded, so shared or overlapping strings stay cheap.
- F7: duplicate metadata keys, opset domains and signature keys are refused on load.
- F9: `onegraph info --json` output is strict JSON even for NaN/inf scales.

Files are crafted by hand with `flatbuffers.Builder` or by patching a valid file
(`craft`). Tests of hostile files bound their time and memory.
"""

from __future__ import annotations

import json
import os
import struct
import zlib

import flatbuffers
import numpy as np
import pytest

import onegraph
from onegraph import FormatError
from onegraph.format import (AttrType, Graph, Model, Node, Quantization, TypedList,
                             writer)
from onegraph.format.fb import (Buffer, Graph as FbGraph, KeyValue, Model as FbModel,
                                OpsetImport, Signature as FbSignature,
                                SignatureTensor, Tensor as FbTensor, Version)
from onegraph.format.reader import parse

from . import craft
from .limits import bounded


def finish(b: flatbuffers.Builder, model_fn) -> bytes:
    """Finish a hand-built Model: `model_fn(b)` adds fields after the version."""
    FbModel.Start(b)
    FbModel.AddSchemaVersion(b, Version.CreateVersion(b, 1, 3))
    model_fn(b)
    b.Finish(FbModel.End(b), file_identifier=writer.FILE_IDENTIFIER)
    return bytes(b.Output())


def vector(b, start_fn, offsets) -> int:
    start_fn(b, len(offsets))
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def aliased_image(n: int, dtype: int, shape: list[int], segment: bytes,
                  one_table: bool = True) -> bytes:
    """n constant tensors, tensor i using buffers[i]; every buffer entry describes the
    SAME tail segment (one shared Buffer table, or n tables with equal fields)."""

    def image(seg_offset: int) -> bytes:
        b = flatbuffers.Builder(1024)
        shape_vec = b.CreateNumpyVector(np.array(shape, "<i8"))
        name = b.CreateString("t")
        tensors = []
        for i in range(n):
            FbTensor.Start(b)
            FbTensor.AddName(b, name)
            FbTensor.AddDtype(b, dtype)
            FbTensor.AddShape(b, shape_vec)
            FbTensor.AddBuffer(b, i)
            FbTensor.AddKind(b, 1)
            tensors.append(FbTensor.End(b))
        tensors_vec = vector(b, FbGraph.StartTensorsVector, tensors)
        FbGraph.Start(b)
        FbGraph.AddTensors(b, tensors_vec)
        graphs_vec = vector(b, FbModel.StartGraphsVector, [FbGraph.End(b)])
        buffers = []
        for i in range(1 if one_table else n):
            Buffer.Start(b)
            Buffer.AddOffset(b, seg_offset)
            Buffer.AddLength(b, len(segment))
            Buffer.AddCrc32(b, zlib.crc32(segment))
            buffers.append(Buffer.End(b))
        buffers_vec = vector(b, FbModel.StartBuffersVector,
                             buffers * n if one_table else buffers)

        def fields(b):
            FbModel.AddGraphs(b, graphs_vec)
            FbModel.AddBuffers(b, buffers_vec)
        return finish(b, fields)

    flat = image(writer._PLACEHOLDER_OFFSET)
    offset = writer.align_up(len(flat))
    flat = image(offset)
    assert writer.align_up(len(flat)) == offset
    return flat + b"\0" * (offset - len(flat)) + segment


def string_segment(text: bytes) -> bytes:
    """A string tensor's data holding the one element `text`."""
    return np.array([0, len(text)], "<u8").tobytes() + text


# -- F1/F2: overlapping or repeated data segments -------------------------------------

@pytest.mark.parametrize("one_table", [True, False])
def test_string_tensors_aliasing_one_segment_refused(one_table):
    """F1: buffer entries repeating one segment are refused (naming both) before any
    string is decoded, so memory does not grow as entries x segment size."""
    data = aliased_image(200, 14, [1], string_segment(b"a" * (256 << 10)), one_table)
    # one shared Buffer table is refused as a table listed twice, n equal tables as
    # overlapping segments
    with pytest.raises(FormatError, match=r"buffers\[1\]: points at a table another entry"
                       if one_table else r"buffers\[0\] and buffers\[1\]: data segments "
                                         r"\d+\.\.\d+ and \d+\.\.\d+ overlap"):
        bounded(lambda: parse(data), peak_bytes=4 << 20)


def test_checksumming_aliased_segments_refused_quickly():
    """F2: with check_data, one 1 MiB segment behind many buffer entries is refused
    before it is checksummed even once per entry."""
    data = aliased_image(2000, 6, [1 << 20], bytes(1 << 20))
    for check_data in (False, True):
        with pytest.raises(FormatError, match=r"buffers\[1\]: points at a table another "
                                              r"entry"):
            bounded(lambda: parse(data, check_data=check_data), seconds=1.0)


def test_partly_overlapping_segments_refused(tmp_path):
    """F1: a segment starting inside another one (not just an exact repeat) is refused."""
    g = Graph("main")
    g.add_constant("a", np.arange(64, dtype=np.float32))
    g.add_constant("b", np.arange(32, dtype=np.float32))
    data = craft.image_unchecked(Model(graphs=[g]))
    first = craft.buffer_table(data, 0)
    pos = craft.field_pos(craft.buffer_table(data, 1), craft.BUFFER_OFFSET)
    data = craft.patch(data, pos, "<Q", first.Offset() + 64)
    data = craft.set_crc(data, 1)
    path = craft.write(tmp_path / "bad.og", data)
    with pytest.raises(FormatError, match=r"bad\.og: buffers\[0\] and buffers\[1\]: data "
                                          r"segments .* overlap"):
        onegraph.load(path)


def test_writer_layouts_still_load(tmp_path):
    """What the writer produces stays valid: empty segments share an offset with the
    next segment, and tensors may share one buffer entry."""
    g = Graph("main")
    g.add_constant("e1", np.zeros((0, 3), np.float32))
    g.add_constant("e2", np.zeros(0, np.int64))
    g.add_constant("w", np.arange(6, dtype=np.float32))
    g.add_constant("e3", np.zeros(0, np.uint8))
    g.add_constant("s", np.array(["x", "yz"], dtype=object))
    model = Model(graphs=[g])
    path = tmp_path / "m.og"
    onegraph.save(model, path)
    loaded = onegraph.load(path, check_data=True)
    assert loaded == model
    offsets = [craft.buffer_table(path.read_bytes(), i).Offset() for i in range(5)]
    assert offsets[0] == offsets[1] == offsets[2]  # empty segments at the next offset
    # two tensors using one buffer entry (as in test_mutation's regressions) still load
    data = path.read_bytes()
    t = craft.tensor_table(data, 0, 1)
    data = craft.patch(data, craft.field_pos(t, craft.TENSOR_BUFFER), "<i", 0)
    data = craft.patch(data, craft.vector_elem_pos(t, craft.TENSOR_SHAPE, 0, 8), "<q", 0)
    shared = parse(data, check_data=True)
    assert shared.graph.tensors[1].data.shape == (0,)


# -- F3: string tensor elements -------------------------------------------------------

def string_model(values, as_attribute=False) -> Model:
    g = Graph("main")
    if as_attribute:
        g.add_node("Identity", [], ["y"], {"v": values})
    else:
        g.add_constant("s", values)
    return Model(graphs=[g])


@pytest.mark.parametrize("values, match", [
    (np.array(["a", 3], dtype=object), r"element 1 is int, not str"),
    (np.array([None], dtype=object), r"element 0 is NoneType, not str"),
    (np.array(["a", "b", 1.5], dtype=object), r"element 2 is float, not str"),
    (np.array([10**8], dtype=object), r"element 0 is int, not str"),
    (np.array(["ok", "\ud800"], dtype=object), r"element 1 is not valid UTF-8"),
])
@pytest.mark.parametrize("as_attribute", [False, True])
def test_bad_string_elements_refused_before_writing(tmp_path, values, match, as_attribute):
    """F3: ints, None, floats and lone surrogates in a string tensor or attribute are
    refused by save, naming the tensor/attribute, and nothing is written."""
    where = r"attributes\['v'\]" if as_attribute else r"tensors\[0\] \('s'\)"
    model = string_model(values, as_attribute)
    with pytest.raises(FormatError, match=where + r".*" + match):
        bounded(lambda: onegraph.save(model, tmp_path / "m.og"))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("as_attribute", [False, True])
def test_utf8_bytes_string_elements_load_as_str(tmp_path, as_attribute):
    """F3: bytes elements that are valid UTF-8 are stored and load back as str."""
    model = string_model(np.array([b"caf\xc3\xa9", "d\xf6g", np.bytes_(b"")], dtype=object),
                         as_attribute)
    onegraph.save(model, tmp_path / "m.og")
    loaded = onegraph.load(tmp_path / "m.og")
    value = (loaded.graph.nodes[0].attributes["v"] if as_attribute
             else loaded.graph.tensors[0].data)
    assert value.tolist() == ["café", "dög", ""]


@pytest.mark.parametrize("as_attribute", [False, True])
def test_raw_bytes_string_elements_load_as_bytes(tmp_path, as_attribute):
    """Schema 1.6: a string tensor or attribute with bytes that are not UTF-8 (TF's
    strings are bytes: a PNG file in a constant) is stored as raw bytes (these were
    refused) and every element loads back as bytes, str ones UTF-8 encoded; a file
    without such strings sets no raw_bytes flag."""
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    model = string_model(np.array([png, "d\xf6g", b"", b"\x80"], dtype=object),
                         as_attribute)
    onegraph.save(model, tmp_path / "m.og")
    loaded = onegraph.load(tmp_path / "m.og", check_data=True)
    value = (loaded.graph.nodes[0].attributes["v"] if as_attribute
             else loaded.graph.tensors[0].data)
    assert value.tolist() == [png, "d\xf6g".encode(), b"", b"\x80"]
    onegraph.save(loaded, tmp_path / "again.og")   # and again: the same bytes
    assert (tmp_path / "again.og").read_bytes() == (tmp_path / "m.og").read_bytes()
    text = string_model(np.array(["a", b"b"], dtype=object), as_attribute)
    onegraph.save(text, tmp_path / "text.og")
    flags = [FbModel.Model.GetRootAs((tmp_path / name).read_bytes()).Buffers(0).RawBytes()
             for name in ("m.og", "text.og")]
    assert flags == [True, False]


def test_lint_refuses_non_string_data_for_string_tensor():
    """F3: a STRING tensor whose data is a numeric array is refused by lint."""
    g = Graph("main")
    g.add_tensor("s", "string", [2], kind=1, data=np.array([1.0, 2.0]))
    with pytest.raises(FormatError, match=r"tensors\[0\] \('s'\): data dtype float64 "
                                          r"cannot hold STRING"):
        g.lint()


# -- F4: subgraph reference cycles -----------------------------------------------------

def test_save_refuses_self_referencing_subgraph(tmp_path):
    """F4: a subgraph whose node refers to the subgraph itself is refused on save."""
    g = Graph("main")
    x = g.add_input("x", "float32", [1])
    body = Graph("body")
    body.add_input("i", "int64", [])
    body.add_node("Loop", [], ["o"], {"body": body})
    g.add_node("Loop", [x], ["y"], {"body": body})
    with pytest.raises(FormatError, match=r"graph 'body': subgraph references form a "
                                          r"cycle through graph 'body'"):
        onegraph.save(Model(graphs=[g]), tmp_path / "m.og")
    assert os.listdir(tmp_path) == []


def test_lint_refuses_subgraph_cycle_through_two_graphs():
    """F4: one -> two -> one, reached from the main graph through GRAPHS, is refused."""
    g = Graph("main")
    x = g.add_input("x", "bool", [])
    one, two = Graph("one"), Graph("two")
    one.nodes.append(Node("If", [], [], {"then": two}))
    two.nodes.append(Node("If", [], [], {"branches": TypedList(AttrType.GRAPHS, [one])}))
    g.add_node("If", [x], ["y"], {"then_branch": one})
    with pytest.raises(FormatError, match=r"subgraph references form a cycle"):
        Model(graphs=[g]).lint()
    two.nodes[0].attributes.clear()  # a DAG again
    Model(graphs=[g]).lint()


# -- F5: numbers outside the file's integer types ----------------------------------------

def number_model() -> Model:
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    g.add_constant("w", np.ones(2, np.float32))
    g.add_node("Add", [x, "w"], ["y"], {"k": 1})
    return Model(graphs=[g], opset_imports={"": 17})


def attr(value):
    return lambda m: m.graph.nodes[0].attributes.update(k=value)


@pytest.mark.parametrize("mutate, match", [
    (attr(2**63), r"nodes\[0\].*attribute 'k': 9223372036854775808 is outside int64"),
    (attr(-(2**63) - 1), r"attribute 'k': -9223372036854775809 is outside int64"),
    (attr(np.uint64(2**64 - 1)), r"attribute 'k': 18446744073709551615 is outside int64"),
    (attr([1, 2**64]), r"attribute 'k'\[1\]: 18446744073709551616 is outside int64"),
    (attr([1.5, 2**2000]), r"attribute 'k'\[1\]: .* cannot be stored as a float64"),
    (attr(TypedList(AttrType.INTS, [1, "x"])), r"attribute 'k'\[1\]: 'x' is not an int"),
    (attr(TypedList(AttrType.STRINGS, ["a", 2])), r"attribute 'k'\[1\]: int is not a str"),
    (attr(TypedList(AttrType.GRAPHS, ["a"])), r"attribute 'k'\[0\]: str is not a Graph"),
    (lambda m: m.opset_imports.update({"": 2**63}),
     r"opset_imports\[''\]\.version: 9223372036854775808 is outside int64"),
    (lambda m: m.opset_imports.update({"x": "17"}),
     r"opset_imports\['x'\]\.version: '17' is not an int"),
    (lambda m: setattr(m.graph.tensors[1], "quantization", Quantization([1.0], [0], 2**31)),
     r"tensors\[1\] \('w'\)\.quantization\.axis: 2147483648 is outside int32"),
    (lambda m: setattr(m, "schema_version", (2, 0)),
     r"schema_version\.major: 2 is not 1, the only major version readers of this "
     r"version understand"),
    (lambda m: setattr(m, "schema_version", (70000, 0)), r"schema_version\.major: 70000 is not 1"),
    (lambda m: setattr(m, "schema_version", (1, 70000)),
     r"schema_version\.minor: 70000 is outside uint16"),
    (lambda m: setattr(m, "schema_version", (1, -1)),
     r"schema_version\.minor: -1 is outside uint16"),
    (lambda m: setattr(m.graph.tensors[1], "name", None),
     r"tensors\[1\]\.name: NoneType is not a str"),
    (lambda m: setattr(m.graph.nodes[0], "op_type", None),
     r"nodes\[0\]\.op_type: NoneType is not a str"),
    (lambda m: m.metadata.update({1: "v"}), r"metadata key 1: int is not a str"),
    (lambda m: m.opset_imports.update({None: 1}), r"opset_imports key None: NoneType is "
                                                  r"not a str"),
    (lambda m: m.graph.nodes[0].inputs.__setitem__(0, 0.0),
     r"nodes\[0\].*inputs: index 0\.0 is not an int"),
])
def test_out_of_range_numbers_refused_naming_the_field(tmp_path, mutate, match):
    """F5: values outside the schema's integer types are refused by save with a
    FormatError naming the field (not TypeError/OverflowError), nothing written."""
    model = number_model()
    mutate(model)
    with pytest.raises(FormatError, match=match):
        onegraph.save(model, tmp_path / "m.og")
    assert os.listdir(tmp_path) == []


def test_extreme_numbers_in_range_roundtrip(tmp_path):
    """F5: the limits themselves are stored (and np.bool_ is an INT like bool)."""
    model = number_model()
    model.graph.nodes[0].attributes.update(lo=-(2**63), hi=np.int64(2**63 - 1),
                                           ints=[2**63 - 1, -(2**63)], flag=np.bool_(True))
    model.opset_imports["big"] = 2**63 - 1
    model.graph.tensors[1].quantization = Quantization([1.0], [0], -(2**31))
    model.schema_version = (1, 65535)
    onegraph.save(model, tmp_path / "m.og")
    loaded = onegraph.load(tmp_path / "m.og")
    attrs = loaded.graph.nodes[0].attributes
    assert (attrs["lo"], attrs["hi"], attrs["ints"], attrs["flag"]) == (
        -(2**63), 2**63 - 1, [2**63 - 1, -(2**63)], 1)
    assert loaded.opset_imports["big"] == 2**63 - 1
    assert loaded.graph.tensors[1].quantization.axis == -(2**31)
    assert loaded.schema_version == (1, 65535)


def test_writer_wraps_unexpected_value_errors(tmp_path, monkeypatch):
    """F5: a value lint lets through but FlatBuffers refuses still surfaces as a
    FormatError naming the attribute."""
    from onegraph.format import ir

    model = number_model()
    model.graph.nodes[0].attributes["k"] = 2**63
    monkeypatch.setattr(ir.Graph, "lint", lambda self: None)
    with pytest.raises(FormatError, match=r"graphs\[0\]\.nodes\[0\]\.attributes\['k'\]: "
                                          r"cannot be stored"):
        onegraph.save(model, tmp_path / "m.og")
    assert os.listdir(tmp_path) == []


# -- F6: shared and overlapping strings -----------------------------------------------

def shared_name_image(n: int, name_len: int) -> bytes:
    """n Tensor tables, all naming one string of name_len bytes."""
    b = flatbuffers.Builder(1024)
    name = b.CreateString("x" * name_len)
    tables = []
    for _ in range(n):
        FbTensor.Start(b)
        FbTensor.AddName(b, name)
        tables.append(FbTensor.End(b))
    FbGraph.StartTensorsVector(b, n)
    for t in reversed(tables):
        b.PrependUOffsetTRelative(t)
    tensors = b.EndVector()
    FbGraph.Start(b)
    FbGraph.AddTensors(b, tensors)
    graphs = vector(b, FbModel.StartGraphsVector, [FbGraph.End(b)])
    return finish(b, lambda b: FbModel.AddGraphs(b, graphs))


def test_shared_string_decoded_once():
    """F6: a string referenced from many places is decoded once and shared: 10000
    references to a 959-byte name cost no 10000 copies of it (~10 MB)."""
    data = shared_name_image(10_000, 959)
    model = bounded(lambda: parse(data), seconds=10.0, peak_bytes=8 << 20)  # tracemalloc is slow
    names = [t.name for t in model.graph.tensors]
    assert len(names) == 10_000 and names[0] == "x" * 959
    assert all(n is names[0] for n in names)


def overlapping_strings_image(region_len: int) -> tuple[bytes, int]:
    """A STRINGS attribute whose k elements all point into one region at the end of
    the file: each element's length word says "up to the region's final NUL", so the
    strings overlap and decoding all of them takes ~k * region_len / 2 bytes."""
    lengths = [n for n in range(0, region_len, 4)
               if all(byte < 0x80 for byte in n.to_bytes(4, "little"))]
    g = Graph("main")
    g.add_node("Custom", [], [], {"s": [f"s{k}" for k in range(len(lengths))]})
    data = bytearray(craft.image_unchecked(Model(graphs=[g])))
    start = len(data)
    region = bytearray(b"a" * (region_len + 4) + b"\0")
    end = start + region_len + 4  # position of the NUL
    attribute = craft.root(bytes(data)).Graphs(0).Nodes(0).Attributes(0)
    for k, n in enumerate(lengths):
        word = end - n - 4  # the length word of element k
        struct.pack_into("<I", region, word - start, n)
        elem = craft.vector_elem_pos(attribute, 22, k, 4)  # Attribute.strings
        struct.pack_into("<I", data, elem, word - elem)
    return bytes(data + region), sum(lengths)


def test_overlapping_strings_charged_by_size():
    """F6: strings are charged for the bytes they decode: many overlapping strings in a
    small file are refused once they would cost more than the file can justify."""
    data, decoded = overlapping_strings_image(8 << 10)
    assert decoded > 100 * len(data)  # what loading would allocate without the budget
    with pytest.raises(FormatError, match=r"attributes\[0\]\.strings\[\d+\]: file "
                                          r"references more data than it can hold"):
        bounded(lambda: parse(data), peak_bytes=2 << 20)


def test_repeated_strings_are_charged():
    """F6: every read of a (cached) string costs budget, so repeats are counted."""
    from onegraph.format import reader

    data = shared_name_image(3, 200)
    r = reader._Reader(data, len(data))
    pos = craft.vector_len_pos(craft.tensor_table(data, 0, 0), craft.TENSOR_NAME)
    before = r.budget
    first = reader._string_at(r, pos, "name")
    after_first = r.budget
    again = reader._string_at(r, pos, "name")
    assert again is first
    assert before - after_first >= 1 + 200 // 8
    assert after_first - r.budget == 1


# -- F7: duplicate keys --------------------------------------------------------------

def keyed_image(metadata=(), opsets=(), sig_inputs=(), sig_outputs=()) -> bytes:
    """A model with one tensor and the given (key, value) lists, duplicates allowed."""
    b = flatbuffers.Builder(1024)
    FbTensor.Start(b)
    t = FbTensor.End(b)
    tensors = vector(b, FbGraph.StartTensorsVector, [t])
    FbGraph.Start(b)
    FbGraph.AddTensors(b, tensors)
    graphs = vector(b, FbModel.StartGraphsVector, [FbGraph.End(b)])
    kvs = []
    for k, v in metadata:
        ko, vo = b.CreateString(k), b.CreateString(v)
        KeyValue.Start(b)
        KeyValue.AddKey(b, ko)
        KeyValue.AddValue(b, vo)
        kvs.append(KeyValue.End(b))
    meta = vector(b, FbModel.StartMetadataVector, kvs)
    ops = []
    for domain, version in opsets:
        d = b.CreateString(domain)
        OpsetImport.Start(b)
        OpsetImport.AddDomain(b, d)
        OpsetImport.AddVersion(b, version)
        ops.append(OpsetImport.End(b))
    opset_vec = vector(b, FbModel.StartOpsetImportsVector, ops)

    def sig_tensors(pairs):
        out = []
        for key, tensor in pairs:
            k = b.CreateString(key)
            SignatureTensor.Start(b)
            SignatureTensor.AddKey(b, k)
            SignatureTensor.AddTensor(b, tensor)
            out.append(SignatureTensor.End(b))
        return out
    ins = vector(b, FbSignature.StartInputsVector, sig_tensors(sig_inputs))
    outs = vector(b, FbSignature.StartOutputsVector, sig_tensors(sig_outputs))
    name = b.CreateString("serving")
    FbSignature.Start(b)
    FbSignature.AddName(b, name)
    FbSignature.AddInputs(b, ins)
    FbSignature.AddOutputs(b, outs)
    sigs = vector(b, FbModel.StartSignaturesVector, [FbSignature.End(b)])

    def fields(b):
        FbModel.AddGraphs(b, graphs)
        FbModel.AddMetadata(b, meta)
        FbModel.AddOpsetImports(b, opset_vec)
        FbModel.AddSignatures(b, sigs)
    return finish(b, fields)


def test_distinct_keys_load():
    """F7: the hand-built image itself is valid when keys are distinct."""
    m = parse(keyed_image([("a", "1"), ("b", "2")], [("", 13), ("ai.onnx.ml", 3)],
                          [("in", 0), ("in2", 0)], [("out", 0)]))
    assert m.metadata == {"a": "1", "b": "2"}
    assert m.opset_imports == {"": 13, "ai.onnx.ml": 3}
    assert m.signatures["serving"].inputs == {"in": 0, "in2": 0}


@pytest.mark.parametrize("kwargs, match", [
    ({"metadata": [("a", "1"), ("b", "x"), ("a", "2")]},
     r"metadata\[2\]\.key: duplicate metadata key 'a' \(also metadata\[0\]\)"),
    ({"opsets": [("", 13), ("", 17)]},
     r"opset_imports\[1\]\.domain: duplicate opset domain '' \(also opset_imports\[0\]\)"),
    ({"sig_inputs": [("in", 0), ("in", 0)]},
     r"signatures\[0\]\.inputs\[1\]\.key: duplicate input key 'in' \(also "
     r"signatures\[0\]\.inputs\[0\]\)"),
    ({"sig_outputs": [("o", 0), ("p", 0), ("o", 0)]},
     r"signatures\[0\]\.outputs\[2\]\.key: duplicate output key 'o'"),
])
def test_duplicate_keys_refused_on_load(tmp_path, kwargs, match):
    """F7: a repeated metadata key, opset domain or signature key is ambiguous: refused."""
    path = craft.write(tmp_path / "dup.og", keyed_image(**kwargs))
    with pytest.raises(FormatError, match=r"dup\.og: " + match):
        onegraph.load(path)


@pytest.mark.parametrize("mutate, match", [
    (lambda m: m.metadata.update({b"a": "2"}), r"metadata key b'a': bytes is not a str"),
    (lambda m: m.opset_imports.update({b"": 3}), r"opset_imports key b'': bytes is not"),
    (lambda m: m.signatures["serving"].inputs.update({0: 0}),
     r"signatures\['serving'\]\.inputs key 0: int is not a str"),
])
def test_lint_refuses_keys_that_could_collide(tmp_path, mutate, match):
    """F7: in memory, keys are a dict's, so two can only collide in the file when they
    are not str (b'a' next to 'a'): lint requires str keys."""
    model = number_model()
    model.metadata["a"] = "1"
    model.add_signature("serving", inputs={"x": 0})
    mutate(model)
    with pytest.raises(FormatError, match=match):
        onegraph.save(model, tmp_path / "m.og")
    assert os.listdir(tmp_path) == []


# -- F9: info --json ---------------------------------------------------------------------

def _nan_scale_model():
    g = Graph("main")
    w = g.add_constant("w", np.ones((4, 1), np.int8))
    g.tensors[w].quantization = Quantization(
        [float("nan"), float("inf"), float("-inf"), 0.5], [0, 0, 0, 0], 0)
    return Model(graphs=[g])


def test_info_json_is_strict_json_for_non_finite_scales():
    """F9: NaN/inf quantization scales of an in-memory model (files cannot hold them)
    describe as the strings "NaN", "Infinity", "-Infinity": strict JSON."""
    from onegraph.info import describe

    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")
    d = json.loads(json.dumps(describe(_nan_scale_model())), parse_constant=refuse)
    assert d["quantized_tensors"][0]["scale"] == ["NaN", "Infinity", "-Infinity", 0.5]


def test_non_finite_scales_are_refused_when_saved_and_when_read(tmp_path):
    path = tmp_path / "nan.og"
    with pytest.raises(FormatError, match=r"'w'\)\.quantization\.scale\[0\]: nan is not "
                                          "a finite positive number"):
        onegraph.save(_nan_scale_model(), path)
    assert not path.exists()
    craft.write(path, craft.image_unchecked(_nan_scale_model()))
    with pytest.raises(FormatError, match=r"tensors\[0\]\.quantization\.scale\[0\]: nan"):
        onegraph.load(path)


@pytest.mark.parametrize("dtype, scale, zero_point, axis, match", [
    (np.int8, [0.0], [0], 0, r"scale\[0\]: 0\.0 is not a finite positive"),
    (np.int8, [0.5, -1.0, 0.5, 0.5], None, 0, r"scale\[1\]: -1\.0 is not"),
    (np.int8, [0.5], [128], 0, r"zero_point\[0\]: 128 is outside INT8's range \[-128, 127\]"),
    (np.uint8, [0.5], [-1], 0, r"zero_point\[0\]: -1 is outside UINT8's range"),
    (np.int8, [0.5, 0.5, 0.5], None, 0, r"3 scales for axis 0 of size 4"),
    (np.int8, [0.5, 0.5], None, 2, r"axis: 2 out of range for rank 2"),
])
def test_quantization_that_cannot_describe_the_tensor_is_refused(
        tmp_path, dtype, scale, zero_point, axis, match):
    g = Graph("main")
    w = g.add_constant("w", np.ones((4, 1), dtype))
    g.tensors[w].quantization = Quantization(
        scale, [0] * len(scale) if zero_point is None else zero_point, axis)
    model = Model(graphs=[g])
    with pytest.raises(FormatError, match=match):
        onegraph.save(model, tmp_path / "q.og")
    craft.write(tmp_path / "q.og", craft.image_unchecked(model))
    with pytest.raises(FormatError, match=match):
        onegraph.load(tmp_path / "q.og")

"""What a file shares is decoded once: tables and vectors listed many times.

FlatBuffers lets any number of offsets point at one table or vector. A hostile file
can list one Node, Tensor or Attribute table (4 bytes per listing) many times; decoding
it anew for each listing cost memory and time far beyond the file's size (a 7.6 MiB
file took 1.1 GiB, a 1 MiB file 11 s). The reader decodes each position once, and
still checks and charges per listing what depends on the listing (a node's indices).
Also here: loading through a pipe, and what load does when memory runs out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import flatbuffers
import numpy as np
import pytest

import onegraph
from onegraph import DataLossError, FormatError
from onegraph.format import AttrType, Graph, Model, reader, writer
from onegraph.format.fb import (Attribute as FbAttribute, Graph as FbGraph,
                                Model as FbModel, Node as FbNode,
                                Quantization as FbQuantization, Tensor as FbTensor,
                                Version)
from onegraph.format.reader import parse

from .limits import bounded

BIG = 2**40  # ints above the small-int cache: each decoded one is a new object


def vector(b, start_fn, offsets) -> int:
    start_fn(b, len(offsets))
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def tensor(b, name: str = "t", quantized: bool = False) -> int:
    """An activation Tensor table (INT8 with a per-tensor Quantization if `quantized`)."""
    name_off = b.CreateString(name)
    q = None
    if quantized:
        scale = b.CreateNumpyVector(np.array([0.5], "<f4"))
        zero = b.CreateNumpyVector(np.array([0], "<i8"))
        FbQuantization.Start(b)
        FbQuantization.AddScale(b, scale)
        FbQuantization.AddZeroPoint(b, zero)
        q = FbQuantization.End(b)
    FbTensor.Start(b)
    FbTensor.AddName(b, name_off)
    FbTensor.AddDtype(b, 5 if quantized else 1)  # INT8 / FLOAT
    if q is not None:
        FbTensor.AddQuantization(b, q)
    return FbTensor.End(b)


def attribute(b, name: str, kind: AttrType, ints: int | None = None,
              g: int | None = None, graphs: int | None = None) -> int:
    """An Attribute table; `ints`/`graphs` are offsets of vectors already built."""
    name_off = b.CreateString(name)
    FbAttribute.Start(b)
    FbAttribute.AddName(b, name_off)
    FbAttribute.AddType(b, int(kind))
    if ints is not None:
        FbAttribute.AddInts(b, ints)
    if g is not None:
        FbAttribute.AddG(b, g)
    if graphs is not None:
        FbAttribute.AddGraphs(b, graphs)
    return FbAttribute.End(b)


def node(b, attributes=(), inputs=None, outputs=None) -> int:
    """A Node table ("Custom") with the given Attribute tables and index lists."""
    attrs = vector(b, FbNode.StartAttributesVector, list(attributes))
    ins = b.CreateNumpyVector(np.array(inputs, "<i4")) if inputs is not None else None
    outs = b.CreateNumpyVector(np.array(outputs, "<i4")) if outputs is not None else None
    op = b.CreateString("Custom")
    FbNode.Start(b)
    FbNode.AddOpType(b, op)
    FbNode.AddAttributes(b, attrs)
    if ins is not None:
        FbNode.AddInputs(b, ins)
    if outs is not None:
        FbNode.AddOutputs(b, outs)
    return FbNode.End(b)


def graph(b, tensors=(), nodes=()) -> int:
    """A Graph table listing the given Tensor and Node tables (repeats allowed)."""
    tensors_vec = vector(b, FbGraph.StartTensorsVector, list(tensors))
    nodes_vec = vector(b, FbGraph.StartNodesVector, list(nodes))
    FbGraph.Start(b)
    FbGraph.AddTensors(b, tensors_vec)
    FbGraph.AddNodes(b, nodes_vec)
    return FbGraph.End(b)


def finish(b, graphs) -> bytes:
    graphs_vec = vector(b, FbModel.StartGraphsVector, list(graphs))
    FbModel.Start(b)
    FbModel.AddSchemaVersion(b, Version.CreateVersion(b, 1, 5))
    FbModel.AddGraphs(b, graphs_vec)
    b.Finish(FbModel.End(b), file_identifier=writer.FILE_IDENTIFIER)
    return bytes(b.Output())


def big_ints(b, n: int) -> int:
    return b.CreateNumpyVector(BIG + np.arange(n, dtype="<i8"))


# -- a table listed many times --------------------------------------------------------

SHARED = r"points at a table another entry points at"


def test_node_listed_many_times_is_refused_at_its_second_listing():
    """200 listings of one node holding 20000 large ints (the 7.6 MiB original took
    1.1 GiB): refused at the second, with nothing decoded twice."""
    b = flatbuffers.Builder(1 << 20)
    a = attribute(b, "a", AttrType.INTS, ints=big_ints(b, 20_000))
    n = node(b, [a])
    data = finish(b, [graph(b, nodes=[n] * 200)])
    with pytest.raises(FormatError, match=r"graphs\[0\]\.nodes\[1\]: " + SHARED):
        bounded(lambda: parse(data), seconds=5.0, peak_bytes=8 << 20)


def test_number_vector_shared_by_tables_is_decoded_once():
    """Distinct nodes and attributes pointing at one ints vector: its elements are
    decoded once (the same int objects), each node has its own list (a pointer per
    element, charged per element to the budget)."""
    b = flatbuffers.Builder(1 << 20)
    ints = big_ints(b, 20_000)
    nodes = [node(b, [attribute(b, "a", AttrType.INTS, ints=ints)]) for _ in range(20)]
    data = finish(b, [graph(b, nodes=nodes)])
    model = bounded(lambda: parse(data), seconds=5.0, peak_bytes=8 << 20)
    first, second = (x.attributes["a"] for x in model.graph.nodes[:2])
    assert first == second and first is not second
    assert first[-1] is second[-1]  # decoded once: 20 x 20000 ints would be ~18 MB


def test_tensor_table_listed_many_times_is_refused(monkeypatch):
    """20000 listings of one quantized tensor, 4 bytes each (the 1 MiB original took
    11 s and 180 MB to load): refused at the second, its quantization checked once."""
    calls = []
    check = reader.check_quantization
    monkeypatch.setattr(reader, "check_quantization",
                        lambda *args: calls.append(args) or check(*args))
    b = flatbuffers.Builder(1 << 16)
    t = tensor(b, quantized=True)
    data = finish(b, [graph(b, tensors=[t] * 20_000)])
    with pytest.raises(FormatError, match=r"graphs\[0\]\.tensors\[1\]: " + SHARED):
        bounded(lambda: parse(data), peak_bytes=4 << 20)
    assert len(calls) == 1


def test_one_tensor_table_at_two_indices_is_refused():
    """Sharing the decoded object would let inference that writes index 1's dtype and
    shape (a Relu's float output) overwrite index 2's (a Shape's int64 output)."""
    b = flatbuffers.Builder(1024)
    x, t = tensor(b), tensor(b)
    data = finish(b, [graph(b, tensors=[x, t, t])])
    with pytest.raises(FormatError, match=r"graphs\[0\]\.tensors\[2\]: " + SHARED):
        parse(data)


def test_node_shared_by_two_graphs_is_refused():
    b = flatbuffers.Builder(1024)
    n = node(b, inputs=[0])
    data = finish(b, [graph(b, tensors=[tensor(b)], nodes=[n]),
                      graph(b, tensors=[tensor(b)], nodes=[n])])
    with pytest.raises(FormatError, match=r"graphs\[1\]\.nodes\[0\]: " + SHARED):
        parse(data)


def test_attribute_table_shared_by_two_nodes_is_refused():
    """Each node holding its own list of a GRAPHS attribute's graphs made a 224 KB file
    take 495 MiB; the shared attribute is refused instead."""
    b = flatbuffers.Builder(1024)
    branches = attribute(b, "branches", AttrType.GRAPHS,
                         graphs=b.CreateNumpyVector(np.array([1, 1], "<i4")))
    data = finish(b, [graph(b, nodes=[node(b, [branches]), node(b, [branches])]),
                      graph(b)])
    with pytest.raises(FormatError, match=r"nodes\[1\]\.attributes\[0\]: " + SHARED):
        parse(data)


def test_subgraph_attributes_resolve_to_their_graph():
    b = flatbuffers.Builder(1024)
    body = attribute(b, "body", AttrType.GRAPH, g=1)
    branches = attribute(b, "branches", AttrType.GRAPHS,
                         graphs=b.CreateNumpyVector(np.array([1, 1], "<i4")))
    data = finish(b, [graph(b, nodes=[node(b, [body, branches])]), graph(b)])
    model = parse(data)
    sub = model.graphs[1]
    attrs = model.graph.nodes[0].attributes
    assert attrs["body"] is sub
    assert attrs["branches"].attr_type is AttrType.GRAPHS
    assert all(g is sub for g in attrs["branches"])


def test_graph_listed_twice_is_refused():
    """The IR tells graphs apart by identity: one graph table listed twice is refused
    (each listing would otherwise decode a whole graph for 4 bytes)."""
    b = flatbuffers.Builder(1024)
    g = graph(b, tensors=[tensor(b)])
    data = finish(b, [g, g])
    with pytest.raises(FormatError, match=r"graphs\[1\]: the same graph table as "
                                          r"graphs\[0\]"):
        parse(data)


def test_out_of_memory_is_a_format_error_naming_the_file(tmp_path, monkeypatch):
    def exhausted(data, check_data=False):
        raise MemoryError
    path = tmp_path / "m.og"
    onegraph.save(Model(graphs=[Graph("main")]), path)
    monkeypatch.setattr(reader, "parse", exhausted)
    with pytest.raises(FormatError, match=r"m\.og: out of memory while loading it"):
        onegraph.load(path)


# -- pipes and other files that are not regular ---------------------------------------

def small_model() -> Model:
    g = Graph("main")
    g.add_constant("c", np.arange(6, dtype=np.float32).reshape(2, 3))
    (y,) = g.add_node("Neg", [g.add_input("x", "float32", [2, 3])], ["y"])
    g.outputs = [y]
    return Model(graphs=[g])


def load_through_pipe(payload: bytes, **kwargs) -> Model:
    """onegraph.load of /dev/fd/N, a pipe a thread fills with `payload` and closes
    (as `cat m.og | onegraph info /dev/stdin` does)."""
    r, w = os.pipe()

    def feed():
        try:
            with os.fdopen(w, "wb") as f:
                f.write(payload)
        except BrokenPipeError:  # load stopped reading (it failed): not this test's point
            pass
    thread = threading.Thread(target=feed)
    thread.start()
    try:
        return onegraph.load(f"/dev/fd/{r}", **kwargs)
    finally:
        os.close(r)  # first: a writer blocked on a full pipe gets EPIPE, not a hang
        thread.join()


@pytest.mark.parametrize("memory_map", [True, False])
def test_model_read_through_a_pipe(tmp_path, memory_map):
    path = tmp_path / "m.og"
    onegraph.save(small_model(), path)
    payload = path.read_bytes()
    model = load_through_pipe(payload, memory_map=memory_map, check_data=True)
    assert model == onegraph.load(path)
    data = model.graph.tensors[0].data
    assert data.tolist() == [[0, 1, 2], [3, 4, 5]] and not data.flags.writeable
    assert data.ctypes.data % writer.ALIGNMENT == 0


def test_large_model_read_through_a_pipe(tmp_path):
    """More than a pipe's buffer (64 KiB): read to the writer's end, not one chunk."""
    g = Graph("main")
    g.add_constant("c", np.arange(100_000, dtype=np.float32))
    path = tmp_path / "big.og"
    onegraph.save(Model(graphs=[g]), path)
    model = load_through_pipe(path.read_bytes())
    assert np.array_equal(model.graph.tensors[0].data, np.arange(100_000, dtype=np.float32))


# VmHWM (this process image's peak resident size) rather than ru_maxrss, which keeps
# the forking pytest process's peak across exec.
_RSS_PROBE = """
import onegraph

def peak():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))

before = peak()
model = onegraph.load("/dev/stdin")
print((peak() - before) * 1024, model.graph.tensors[0].data.nbytes)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
def test_pipe_read_holds_about_the_model_once(tmp_path):
    """Reading through a pipe keeps about the model's size resident (plus one read
    chunk), not the bytes read and their aligned copy at once (twice the size)."""
    size = 64 << 20
    g = Graph("main")
    g.add_constant("c", np.ones(size // 4, np.float32))
    path = tmp_path / "big.og"
    onegraph.save(Model(graphs=[g]), path)
    with open(path, "rb") as f:
        cat = subprocess.Popen(["cat"], stdin=f, stdout=subprocess.PIPE)
        out = subprocess.run([sys.executable, "-c", _RSS_PROBE], stdin=cat.stdout,
                             capture_output=True, text=True, timeout=120)
        cat.stdout.close()
        cat.wait(timeout=60)
    assert out.returncode == 0, out.stderr
    grown, nbytes = map(int, out.stdout.split())
    assert nbytes == size
    assert grown < 1.5 * size, f"reading {size} bytes through a pipe took {grown}"


def test_empty_pipe_is_refused():
    with pytest.raises(FormatError, match=r"/dev/fd/\d+: file is empty"):
        load_through_pipe(b"")


def test_corrupt_model_through_a_pipe_is_refused(tmp_path):
    path = tmp_path / "m.og"
    onegraph.save(small_model(), path)
    with pytest.raises(DataLossError, match=r"/dev/fd/\d+: .*truncated"):
        load_through_pipe(path.read_bytes()[:100])


def test_device_is_refused():
    """A device (or a terminal) is neither mapped nor read without end."""
    with pytest.raises(FormatError, match=r"/dev/null: not a regular file or a pipe"):
        onegraph.load("/dev/null")


def test_bad_file_read_into_memory_is_a_format_error(tmp_path):
    """memory_map=False: the in-memory copy of a bad file is dropped without an
    AttributeError (it has no close() as a mapping does)."""
    path = tmp_path / "bad.og"
    path.write_bytes(b"\0\0\0\0" + writer.FILE_IDENTIFIER + b"\xff" * 12)
    with pytest.raises(FormatError, match=r"bad\.og: "):
        onegraph.load(path, memory_map=False)

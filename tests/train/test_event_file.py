"""Event files (train/event_file.py) against the files TF1's tf.summary.FileWriter wrote
(tests/train/data/tf_event_files, recorded by tools/record_tf_event_files.py), and the
GraphDef of an og graph decoded with Google's protobuf library."""

from __future__ import annotations

import json
import os
import socket
import struct
import time as real_time
import types

import numpy as np
import pytest

import onegraph as og
from onegraph.train import event_file as ef

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_event_files")
with open(os.path.join(DATA, "reference.json")) as _f:
    REF = json.load(_f)
with open(os.path.join(DATA, "tf_events.bin"), "rb") as _f:
    TF_FILE = _f.read()


def records(raw: bytes) -> list:
    """(data, whole record) pairs of a TFRecord file, split by the length fields only."""
    out, pos = [], 0
    while pos < len(raw):
        (n,) = struct.unpack_from("<Q", raw, pos)
        out.append((raw[pos + 12:pos + 12 + n], raw[pos:pos + 16 + n]))
        pos += 16 + n
    assert pos == len(raw)
    return out


def fake_clock(times: list):
    """A stand-in for the module's `time`: time() gives `times` in turn (the last one
    again when they run out); monotonic() is the real one."""
    left = list(times)

    def now():
        return left.pop(0) if len(left) > 1 else left[0]
    return types.SimpleNamespace(time=now, monotonic=real_time.monotonic)


def only_file(logdir) -> str:
    (name,) = os.listdir(logdir)
    return os.path.join(logdir, name)


def read(path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# --- byte-identical to TF's file ----------------------------------------------------------

def feed(writer, calls):
    for k, call in enumerate(calls):
        step = call.get("step")
        if call["kind"] == "summary":
            raw = bytes.fromhex(call["bytes"])
            # Session.run's form (a 0-d object array) for every other summary
            writer.add_summary(np.array(raw, dtype=object) if k % 2 else raw, step)
        elif call["kind"] == "session_log":
            writer.add_session_log(ef.SessionLog(**call["fields"]), step)
        elif call["kind"] == "event":
            writer.add_event(bytes.fromhex(call["bytes"]))
        else:
            writer.add_graph(graph_def=bytes.fromhex(call["bytes"]), global_step=step)


def test_records_match_tensorflows_file(tmp_path, monkeypatch):
    calls = [c for c in REF["calls"] if not c.get("after_close")]
    late = [c for c in REF["calls"] if c.get("after_close")]
    wall = REF["wall_times"]
    # TF reads the clock for every event it builds, not for add_event's raw Event
    timed = [w for c, w in zip(calls, wall[1:]) if c["kind"] != "event"]
    monkeypatch.setattr(ef, "time", fake_clock([wall[0]] + timed))
    writer = ef.FileWriter(str(tmp_path), filename_suffix=REF["suffix"])
    feed(writer, calls)
    writer.close()
    with pytest.warns(UserWarning, match="closed FileWriter"):
        feed(writer, late)  # dropped, as TF dropped it
    path = only_file(tmp_path)
    stamp = f"{int(wall[0]):010d}"
    assert os.path.basename(path) == (f"events.out.tfevents.{stamp}."
                                      f"{socket.gethostname()}{REF['suffix']}")
    assert REF["file_name"] == f"events.out.tfevents.{stamp}.{REF['hostname']}{REF['suffix']}"
    ours, theirs = records(read(path)), records(TF_FILE)
    assert len(ours) == len(theirs) == len(wall) == 20
    for k, (a, b) in enumerate(zip(ours[1:], theirs[1:]), 1):
        assert a == b, f"record {k} differs"
    # the header: TF 2.x adds source_metadata (field 10) after what og writes
    header = ef.encode_event(wall[0], file_version="brain.Event:2")
    assert ours[0][0] == header
    assert theirs[0][0].startswith(header) and theirs[0][0][len(header)] == 0x52


def test_framing_and_crcs_match_tensorflows_records():
    for data, whole in records(TF_FILE):
        assert ef.frame_record(data) == whole


@pytest.mark.parametrize("case", REF["encode_cases"], ids=lambda c: str(sorted(c["kwargs"])))
def test_encode_event_matches_tensorflow(case):
    kwargs = dict(case["kwargs"])
    for key in ("summary", "session_log", "graph_def", "meta_graph_def"):
        if key in kwargs:
            kwargs[key] = bytes.fromhex(kwargs[key])
    kwargs.setdefault("wall_time", 0.0)
    assert ef.encode_event(**kwargs) == bytes.fromhex(case["bytes"])


@pytest.mark.parametrize("case", REF["session_logs"], ids=lambda c: str(c["fields"]))
def test_session_log_matches_tensorflow(case):
    assert ef.SessionLog(**case["fields"]).SerializeToString() == bytes.fromhex(case["bytes"])


def test_metadata_stripping_follows_tensorflow(tmp_path):
    """The first value of a tag keeps its metadata, later ones lose it; a tag first
    seen without metadata counts as seen (the recorded file shows TF doing so)."""
    calls = [c for c in REF["calls"] if c["kind"] == "summary" and not c.get("after_close")]
    with ef.FileWriter(str(tmp_path)) as writer:
        feed(writer, calls)
    theirs = [d for d, _ in records(TF_FILE)[1:1 + len(calls)]]
    ours = [d for d, _ in records(read(only_file(tmp_path)))[1:]]
    # wall times differ here: compare from the step field on
    assert [d[9:] for d in ours] == [d[9:] for d in theirs]
    assert bytes.fromhex(calls[2]["bytes"]) not in theirs[2]  # TF did strip this one


# --- queueing, flushing, files ---------------------------------------------------------------

def test_written_when_max_queue_events_are_pending(tmp_path):
    writer = ef.EventFileWriter(str(tmp_path), max_queue=3, flush_secs=1e9)
    path = writer.path
    header = len(read(path))
    assert records(read(path))[0][0].endswith(b"\x1a\x0dbrain.Event:2")
    events = [ef.encode_event(float(k), k) for k in (1, 2, 3, 4)]
    writer.add_event(events[0])
    writer.add_event(events[1])
    assert len(read(path)) == header  # still queued
    writer.add_event(events[2])
    assert [d for d, _ in records(read(path))[1:]] == events[:3]
    writer.add_event(events[3])
    assert len(records(read(path))) == 4
    writer.flush()
    assert [d for d, _ in records(read(path))[1:]] == events
    writer.close()


def test_written_when_flush_secs_passed(tmp_path):
    writer = ef.EventFileWriter(str(tmp_path), max_queue=100, flush_secs=0)
    writer.add_event(b"\x10\x01")
    assert records(read(writer.path))[1][0] == b"\x10\x01"
    writer.close()


def test_close_then_reopen_starts_a_second_file(tmp_path, monkeypatch):
    # 1003.0: the dropped event reads the clock too, as TF's does
    monkeypatch.setattr(ef, "time", fake_clock([1000.5, 1001.0, 1003.0, 1007.25, 1008.0]))
    writer = ef.FileWriter(str(tmp_path))
    first = writer.event_writer.path
    writer.add_summary(b"", 1)
    writer.close()
    with pytest.warns(UserWarning):
        writer.add_session_log(ef.SessionLog(ef.SessionLog.START))
    before = read(first)
    writer.reopen()
    second = writer.event_writer.path
    writer.add_summary(b"", 2)
    writer.close()
    writer.close()  # again: nothing
    host = socket.gethostname()
    assert sorted(os.listdir(tmp_path)) == [f"events.out.tfevents.0000001000.{host}",
                                            f"events.out.tfevents.0000001007.{host}"]
    assert read(first) == before
    assert [d for d, _ in records(before)] == [
        ef.encode_event(1000.5, file_version="brain.Event:2"),
        ef.encode_event(1001.0, 1, summary=b"")]
    assert [d for d, _ in records(read(second))] == [
        ef.encode_event(1007.25, file_version="brain.Event:2"),
        ef.encode_event(1008.0, 2, summary=b"")]


def test_context_manager_and_cache(tmp_path):
    with ef.FileWriter(tmp_path / "run") as writer:
        assert writer.get_logdir() == str(tmp_path / "run")
    assert writer.event_writer.closed
    logdir = str(tmp_path / "cached")
    a = ef.FileWriterCache.get(logdir)
    assert ef.FileWriterCache.get(logdir) is a
    ef.FileWriterCache.clear()
    assert a.event_writer.closed and ef.FileWriterCache.get(logdir) is not a
    ef.FileWriterCache.clear()


# --- GraphDef ------------------------------------------------------------------------------

def graph_classes():
    """GraphDef and Event message classes built from graph.proto/event.proto's field
    numbers (a test-local copy, so protobuf decodes what og wrote)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="og_event_test.proto",
                                             package="ogtest", syntax="proto3")

    def message(name, fields, parent=None):
        m = (parent.nested_type if parent else fdp.message_type).add(name=name)
        for fname, number, ftype, label, type_name in fields:
            f = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = type_name
        return m

    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    shape = message("TensorShapeProto", [("dim", 2, F.TYPE_MESSAGE, rep,
                                          ".ogtest.TensorShapeProto.Dim"),
                                         ("unknown_rank", 3, F.TYPE_BOOL, opt, None)])
    message("Dim", [("size", 1, F.TYPE_INT64, opt, None),
                    ("name", 2, F.TYPE_STRING, opt, None)], shape)
    attr = message("AttrValue", [
        ("list", 1, F.TYPE_MESSAGE, opt, ".ogtest.AttrValue.ListValue"),
        ("s", 2, F.TYPE_BYTES, opt, None), ("i", 3, F.TYPE_INT64, opt, None),
        ("f", 4, F.TYPE_FLOAT, opt, None), ("b", 5, F.TYPE_BOOL, opt, None),
        ("type", 6, F.TYPE_INT32, opt, None),
        ("shape", 7, F.TYPE_MESSAGE, opt, ".ogtest.TensorShapeProto")])
    message("ListValue", [("s", 2, F.TYPE_BYTES, rep, None),
                          ("i", 3, F.TYPE_INT64, rep, None),
                          ("f", 4, F.TYPE_FLOAT, rep, None),
                          ("shape", 7, F.TYPE_MESSAGE, rep, ".ogtest.TensorShapeProto")],
            attr)
    node = message("NodeDef", [("name", 1, F.TYPE_STRING, opt, None),
                               ("op", 2, F.TYPE_STRING, opt, None),
                               ("input", 3, F.TYPE_STRING, rep, None),
                               ("device", 4, F.TYPE_STRING, opt, None),
                               ("attr", 5, F.TYPE_MESSAGE, rep, ".ogtest.NodeDef.AttrEntry")])
    entry = message("AttrEntry", [("key", 1, F.TYPE_STRING, opt, None),
                                  ("value", 2, F.TYPE_MESSAGE, opt, ".ogtest.AttrValue")], node)
    entry.options.map_entry = True
    message("VersionDef", [("producer", 1, F.TYPE_INT32, opt, None)])
    message("GraphDef", [("node", 1, F.TYPE_MESSAGE, rep, ".ogtest.NodeDef"),
                         ("versions", 4, F.TYPE_MESSAGE, opt, ".ogtest.VersionDef")])
    message("Event", [("wall_time", 1, F.TYPE_DOUBLE, opt, None),
                      ("step", 2, F.TYPE_INT64, opt, None),
                      ("graph_def", 4, F.TYPE_BYTES, opt, None),
                      ("meta_graph_def", 9, F.TYPE_BYTES, opt, None)])
    message("MetaGraphDef", [("graph_def", 2, F.TYPE_MESSAGE, opt, ".ogtest.GraphDef")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    get = message_factory.GetMessageClass
    return (get(pool.FindMessageTypeByName("ogtest.GraphDef")),
            get(pool.FindMessageTypeByName("ogtest.Event")),
            get(pool.FindMessageTypeByName("ogtest.MetaGraphDef")))


def small_graph():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3], name="x")
        w = og.Variable(np.ones((3, 2), np.float32), name="w")
        y = og.matmul(x, w)
        with og.control_dependencies([y]):
            z = og.add(y, 2.0, name="z")
        parts = og.split(z, 2, axis=1)
        og.identity(parts[1], name="second")
    return g


def test_graph_def_names_ops_inputs():
    GraphDef, _, _ = graph_classes()
    gd = GraphDef.FromString(ef.graph_def_bytes(small_graph()))
    nodes = {n.name: n for n in gd.node}
    assert len(nodes) == len(gd.node)
    seen = {name: (n.op, list(n.input)) for name, n in nodes.items()}
    assert seen["x"] == ("Placeholder", [])
    assert seen["w"] == ("VariableV2", [])
    assert seen["w/read"] == ("ReadVariable", ["w"])
    assert seen["MatMul"] == ("MatMul", ["x", "w/read"])
    assert seen["z"][0] == "Add" and seen["z"][1][0] == "MatMul"
    assert seen["z"][1][2:] == ["^MatMul"] and seen[seen["z"][1][1]][0] == "Const"
    assert seen["Split"] == ("Split", ["z"])
    assert seen["second"] == ("Identity", ["Split:1"])
    x = nodes["x"].attr
    assert x["dtype"].type == 1  # DT_FLOAT
    assert [d.size for d in x["shape"].shape.dim] == [-1, 3]
    assert [d.size for d in nodes["w"].attr["shape"].shape.dim] == [3, 2]
    assert nodes["Split"].attr["axis"].i == 1
    outs = nodes["Split"].attr["_output_shapes"].list.shape
    assert [[d.size for d in s.dim] for s in outs] == [[-1, 1], [-1, 1]]
    assert gd.versions.producer > 0


def test_graph_events_from_file_writer(tmp_path):
    GraphDef, Event, MetaGraphDef = graph_classes()
    g = small_graph()
    with ef.FileWriter(str(tmp_path), graph=g) as writer:
        writer.add_graph(g, global_step=7)
    events = [Event.FromString(d) for d, _ in records(read(only_file(tmp_path)))]
    # as TF1: the constructor's graph as a GraphDef event, then as a MetaGraphDef
    assert [e.step for e in events[1:]] == [0, 0, 7]
    graph, meta, later = events[1:]
    meta_graph = MetaGraphDef.FromString(meta.meta_graph_def)
    assert meta_graph.graph_def == GraphDef.FromString(ef.graph_def_bytes(g))
    for e in (graph, later):
        assert e.graph_def == ef.graph_def_bytes(g)
        assert "MatMul" in [n.name for n in GraphDef.FromString(e.graph_def).node]


# --- refusals -------------------------------------------------------------------------------

def test_logdir_that_is_a_file(tmp_path):
    path = tmp_path / "file"
    path.write_bytes(b"x")
    with pytest.raises(NotADirectoryError, match="not a directory"):
        ef.FileWriter(str(path))
    with pytest.raises(NotADirectoryError, match="is a file"):
        ef.FileWriter(str(path / "below"))


@pytest.mark.parametrize("bad", [3, "text", None, np.array([b"a", b"b"], dtype=object),
                                 np.array(1.0)])
def test_bad_summary_type(tmp_path, bad):
    with ef.FileWriter(str(tmp_path)) as writer:
        with pytest.raises(TypeError, match="summary must be"):
            writer.add_summary(bad)


def test_bad_arguments(tmp_path):
    with pytest.raises(NotImplementedError, match="session="):
        ef.FileWriter(str(tmp_path), session=object())
    with pytest.raises(TypeError, match="logdir"):
        ef.FileWriter(5)
    with pytest.raises(TypeError, match="max_queue"):
        ef.FileWriter(str(tmp_path), max_queue="10")
    with pytest.raises(ValueError, match="flush_secs"):
        ef.FileWriter(str(tmp_path), flush_secs=-1)
    with pytest.raises(TypeError, match="filename_suffix"):
        ef.FileWriter(str(tmp_path), filename_suffix=3)
    with ef.FileWriter(str(tmp_path / "w")) as writer:
        with pytest.raises(ValueError, match="valid|truncated|wire|runs past"):
            writer.add_summary(b"\x0a\x05ab")
        with pytest.raises(TypeError, match="global_step"):
            writer.add_summary(b"", global_step=1.5)
        with pytest.raises(TypeError, match="global_step"):
            writer.add_summary(b"", global_step=True)
        with pytest.raises(ValueError, match="int64"):
            writer.add_summary(b"", global_step=2 ** 63)
        with pytest.raises(TypeError, match="SessionLog"):
            writer.add_session_log(b"")
        with pytest.raises(TypeError, match="og.Graph"):
            writer.add_graph(123)
        with pytest.raises(ValueError, match="not both"):
            writer.add_graph(og.Graph(), graph_def=b"")
        with pytest.raises(TypeError, match="event must be bytes"):
            writer.add_event("event")
    with pytest.raises(ValueError, match="only one"):
        ef.encode_event(1.0, summary=b"", session_log=b"")
    with pytest.raises(TypeError, match="wall_time"):
        ef.encode_event("now")
    with pytest.raises(ValueError, match="status"):
        ef.SessionLog(7)
    with pytest.raises(TypeError, match="msg"):
        ef.SessionLog(1, msg=b"x")

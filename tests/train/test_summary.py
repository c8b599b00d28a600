"""og.summary (TF1's tf.summary) against TensorFlow's recordings.

- Names, tags, collections and merges of the calls in summary_api_cases.py, and the
  events the hooks and a FileWriter write in the loops of summary_hook_cases.py, as
  tools/record_tf_summary_api.py recorded them under tf.compat.v1.
- og.Summary / og.Event / og.HistogramProto: parsing and writing TF's own bytes (the
  summaries TF's kernels serialized, tests/ops/data/tf_summaries_reference.npz; the
  Events and the event file TF wrote, tests/train/data/tf_event_files/).
The bytes of each summary kind are checked in tests/ops/test_summary_ops.py and the
event file records in tests/train/test_event_file.py.
"""

from __future__ import annotations

import glob
import json
import os

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import DataLossError, ExecutionError

from . import summary_api_cases as api_cases
from . import summary_hook_cases as hook_cases

DATA = os.path.join(os.path.dirname(__file__), "data")
with open(os.path.join(DATA, "tf1_summary_api_reference.json")) as _f:
    REFERENCE = json.load(_f)
EVENTS = os.path.join(DATA, "tf_event_files")
KERNEL_BYTES = os.path.join(os.path.dirname(__file__), "..", "ops", "data",
                            "tf_summaries_reference.npz")
# onegraph's op for TF1's tf.summary.text (TF writes it through TensorSummaryV2)
OP_TYPES = {"TextSummary": "TensorSummaryV2"}


def tags_of(data: bytes) -> list:
    return [v.tag for v in og.Summary.FromString(data).value]


def test_names_tags_collections_and_merges_match_tensorflow():
    got = api_cases.describe(og, tags_of)
    want = REFERENCE["api"]
    for mine, theirs in zip(got["summaries"], want["summaries"]):
        mine[2] = OP_TYPES.get(mine[2], mine[2])
        assert mine == theirs
    assert len(got["summaries"]) == len(want["summaries"])
    assert got["collections"] == want["collections"]
    assert got["merged"] == want["merged"]


def _events(logdir) -> list:
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    out = []
    for event in og.train.summary_iterator(path):
        kind = event.WhichOneof("what")
        detail = None
        if kind == "summary":
            detail = sorted(v.tag for v in event.summary.value)
        elif kind == "session_log":
            detail = event.session_log.status
        out.append((event.step, kind, detail))
    return hook_cases.events(out)


@pytest.mark.parametrize("case", sorted(hook_cases.CASES))
def test_hooks_and_file_writer_write_tensorflows_events(case, tmp_path):
    og.summary.FileWriterCache.clear()
    try:
        with og.Graph().as_default():
            hook_cases.CASES[case](og, str(tmp_path))
    finally:
        og.summary.FileWriterCache.clear()  # closes (flushes) the hooks' writers
    assert _events(str(tmp_path)) == REFERENCE["hooks"][case]


def test_written_summaries_hold_the_run_values(tmp_path):
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [None])
        og.summary.scalar("mean", og.reduce_mean(x))
        og.summary.histogram("xs", x)
        merged = og.summary.merge_all()
        with og.Session() as sess, og.summary.FileWriter(str(tmp_path), sess.graph) as w:
            for step, values in enumerate(([1.0, 2.0], [4.0, 8.0, 16.0])):
                w.add_summary(sess.run(merged, {x: values}), step)
            w.add_summary(og.Summary(value=[og.Summary.Value(tag="by_hand",
                                                             simple_value=0.25)]), 2)
    (path,) = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    events = list(og.train.summary_iterator(path))
    assert [e.WhichOneof("what") for e in events] == [
        "file_version", "graph_def", "meta_graph_def", "summary", "summary", "summary"]
    first, second, by_hand = (e.summary.value for e in events[3:])
    assert (first[0].tag, first[0].simple_value) == ("mean", 1.5)
    assert (second[0].simple_value, second[1].histo.num, second[1].histo.max) == \
        (float(np.float32(28 / 3)), 3.0, 16.0)
    assert by_hand[0].simple_value == 0.25 and events[-1].step == 2


def test_run_time_refusals_are_named():
    with og.Graph().as_default():
        x = og.placeholder(og.float32)
        hist = og.summary.histogram("h", x)
        loss = og.summary.scalar("loss", x)
        twice = og.summary.merge([loss, loss])
        with og.Session() as sess:
            with pytest.raises(ExecutionError, match="Nan in summary histogram for: h"):
                sess.run(hist, {x: [1.0, np.nan]})
            with pytest.raises(ExecutionError, match="tags and values"):
                sess.run(loss, {x: [1.0, 2.0]})
            with pytest.raises(ExecutionError, match="Duplicate tag loss"):
                sess.run(twice, {x: 1.0})


def test_build_time_refusals_are_named():
    with og.Graph().as_default():
        with pytest.raises(TypeError, match="DataType string"):
            og.summary.scalar("s", og.constant("text"))
        with pytest.raises(ValueError, match="rank 4"):
            og.summary.image("i", og.zeros([4, 4, 3]))
        with pytest.raises(ValueError, match="last dim"):
            og.summary.image("i", og.zeros([1, 4, 4, 2]))
        with pytest.raises(ValueError, match="max_outputs"):
            og.summary.image("i", og.zeros([1, 4, 4, 3]), max_outputs=0)
        with pytest.raises(TypeError, match="DataType float64"):
            og.summary.audio("a", og.zeros([1, 4], og.float64), 8000.0)
        with pytest.raises(TypeError, match="string"):
            og.summary.text("t", og.constant(1.0))
        with pytest.raises(ValueError, match="length 0"):
            og.summary.merge([])
        with pytest.raises(TypeError, match="collections"):
            og.summary.scalar("c", 1.0, collections="summaries")
        assert og.summary.merge_all() is None


def test_summary_protos_read_and_write_tensorflows_kernel_bytes():
    data = np.load(KERNEL_BYTES, allow_pickle=False)
    outs = [k for k in data.files if k.endswith("/out") and data[k].dtype == np.uint8]
    assert len(outs) > 40
    kinds = set()
    for key in outs:
        raw = data[key].tobytes()
        summary = og.Summary.FromString(raw)
        kinds.update(v.WhichOneof("value") for v in summary.value)
        assert summary.SerializeToString() == raw, key
    assert {"simple_value", "histo", "image", "audio", "tensor"} <= kinds


def test_hand_built_summary_is_tensorflows_bytes():
    # TF: tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=0.5)])
    assert og.Summary(value=[og.Summary.Value(tag="loss", simple_value=0.5)]) \
        .SerializeToString() == bytes.fromhex("0a0b0a046c6f7373150000003f")
    histo = og.HistogramProto(min=-1.0, max=2.0, num=2, bucket_limit=[0.0, 3.0],
                              bucket=[1.0, 1.0])
    again = og.HistogramProto.FromString(histo.SerializeToString())
    assert again == histo and again.bucket_limit == [0.0, 3.0]
    with pytest.raises(TypeError, match="no field named 'simple'"):
        og.Summary.Value(tag="x", simple=1.0)


def test_events_match_tensorflows_bytes():
    with open(os.path.join(EVENTS, "reference.json")) as f:
        reference = json.load(f)
    for case in reference["encode_cases"]:
        kwargs = dict(case["kwargs"])
        if "summary" in kwargs:
            kwargs["summary"] = og.Summary.FromString(bytes.fromhex(kwargs["summary"]))
        if "session_log" in kwargs:
            kwargs["session_log"] = og.SessionLog.FromString(
                bytes.fromhex(kwargs["session_log"]))
        for key in ("graph_def", "meta_graph_def"):
            if key in kwargs:
                kwargs[key] = bytes.fromhex(kwargs[key])
        event = og.Event(**kwargs)
        assert event.SerializeToString().hex() == case["bytes"], case
        assert og.Event.FromString(bytes.fromhex(case["bytes"])) == event


def test_summary_iterator_reads_tensorflows_event_file(tmp_path):
    with open(os.path.join(EVENTS, "reference.json")) as f:
        reference = json.load(f)
    events = list(og.train.summary_iterator(os.path.join(EVENTS, "tf_events.bin")))
    assert [e.wall_time for e in events] == reference["wall_times"]
    assert events[0].file_version == "brain.Event:2"
    summaries = [e for e in events if e.WhichOneof("what") == "summary"]
    first = next(c for c in reference["calls"] if c["kind"] == "summary")
    assert summaries[0].summary.SerializeToString().hex() == first["bytes"]
    # damage: a flipped byte in a record, and a cut record, are DataLossError
    raw = bytearray(open(os.path.join(EVENTS, "tf_events.bin"), "rb").read())
    raw[40] ^= 1
    (tmp_path / "flipped").write_bytes(bytes(raw))
    with pytest.raises(DataLossError, match="corrupted record"):
        list(og.train.summary_iterator(str(tmp_path / "flipped")))
    (tmp_path / "cut").write_bytes(bytes(raw[:-3]))
    with pytest.raises(DataLossError):
        list(og.train.summary_iterator(str(tmp_path / "cut")))

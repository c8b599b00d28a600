"""og.python_io (TF1's TFRecordWriter / tf_record_iterator) against TensorFlow's files.

The oracle is a TFRecord file TensorFlow 2.21 wrote: the event file of
data/tf_event_files (an event file is a TFRecord file of serialized Events), whose
records data/tf_event_files/reference.json lists by their wall times.
"""

from __future__ import annotations

import json
import os

import pytest

import onegraph as og
from onegraph.errors import DataLossError

EVENTS = os.path.join(os.path.dirname(__file__), "data", "tf_event_files")


def test_reads_tensorflows_records_and_writes_them_back_identically(tmp_path):
    path = os.path.join(EVENTS, "tf_events.bin")
    with open(os.path.join(EVENTS, "reference.json")) as f:
        wall_times = json.load(f)["wall_times"]
    records = list(og.python_io.tf_record_iterator(path))
    assert len(records) == len(wall_times)
    assert [og.Event.FromString(r).wall_time for r in records] == wall_times
    out = tmp_path / "copy.tfrecord"
    with og.python_io.TFRecordWriter(str(out)) as writer:
        for r in records:
            writer.write(r)
        assert not out.exists()  # written to a temporary file until closed
    with open(path, "rb") as a:
        assert out.read_bytes() == a.read()


def test_strings_are_utf8_and_damage_is_named(tmp_path):
    out = tmp_path / "s.tfrecord"
    with og.python_io.TFRecordWriter(out) as writer:
        writer.write("h\u00e9")
        writer.write(b"")
    assert list(og.python_io.tf_record_iterator(out)) == ["h\u00e9".encode(), b""]
    data = bytearray(out.read_bytes())
    data[-1] ^= 0xFF
    out.write_bytes(bytes(data))
    with pytest.raises(DataLossError, match="corrupted record data at offset 19"):
        list(og.python_io.tf_record_iterator(out))
    with pytest.raises(NotImplementedError, match="compressed"):
        og.python_io.TFRecordWriter(tmp_path / "z", options="GZIP")
    writer = og.python_io.TFRecordWriter(tmp_path / "w")
    writer.close()
    with pytest.raises(ValueError, match="after close"):
        writer.write(b"x")
    with pytest.raises(TypeError, match="holds bytes"):
        og.python_io.TFRecordWriter(tmp_path / "t").write(3)

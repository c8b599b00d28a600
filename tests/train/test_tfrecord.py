"""og.python_io (TF1's TFRecordWriter / tf_record_iterator) against TensorFlow's files.

The oracle is a TFRecord file TensorFlow 2.21 wrote: the event file of
data/tf_event_files (an event file is a TFRecord file of serialized Events), whose
records data/tf_event_files/reference.json lists by their wall times.
"""

from __future__ import annotations

import base64
import json
import os

import pytest

import onegraph as og
from onegraph.errors import DataLossError

EVENTS = os.path.join(os.path.dirname(__file__), "data", "tf_event_files")
# TFRecord files TF wrote, plain and compressed, with their records (tools/record_tf_data.py)
with open(os.path.join(os.path.dirname(__file__), "data", "tf1_data_reference.json")) as _f:
    FILES = json.load(_f)["files"]
RECORDS = [r.encode("latin-1") for r in FILES["records_list"]]


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
    with pytest.raises(ValueError, match='Not a valid compression_type: "gzip"'):
        og.python_io.TFRecordWriter(tmp_path / "z", options="gzip")
    writer = og.python_io.TFRecordWriter(tmp_path / "w")
    writer.close()
    with pytest.raises(ValueError, match="after close"):
        writer.write(b"x")
    with pytest.raises(TypeError, match="holds bytes"):
        og.python_io.TFRecordWriter(tmp_path / "t").write(3)


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_compressed_files_are_tensorflows_bytes(kind, tmp_path):
    tf_file = base64.b64decode(FILES[f"records_{kind.lower()}"])
    path = tmp_path / "tf.tfrecord"
    path.write_bytes(tf_file)
    assert list(og.python_io.tf_record_iterator(path, options=kind)) == RECORDS
    options = og.python_io.TFRecordOptions(compression_type=kind)
    assert list(og.python_io.tf_record_iterator(str(path), options)) == RECORDS
    for opts in (kind, options, getattr(og.python_io.TFRecordCompressionType, kind)):
        out = tmp_path / "og.tfrecord"
        with og.python_io.TFRecordWriter(out, options=opts) as writer:
            for r in RECORDS:
                writer.write(r)
        assert out.read_bytes() == tf_file


def test_compression_options_and_damage(tmp_path):
    opts = og.python_io.TFRecordOptions
    assert [opts.get_compression_type_string(o) for o in (None, "", "ZLIB", 2, opts("GZIP"))] \
        == ["", "", "ZLIB", "GZIP", "GZIP"]
    for bad in ("gzip", "BZ2", 7):
        with pytest.raises(ValueError, match="Not a valid compression_type"):
            opts(compression_type=bad)
    with pytest.raises(ValueError, match="compression_level"):
        opts("GZIP", compression_level=12)
    with pytest.raises(TypeError, match="TFRecordOptions"):
        og.python_io.tf_record_iterator(tmp_path / "x", options=[1])
    out = tmp_path / "z.tfrecord"
    with og.python_io.TFRecordWriter(out, opts("ZLIB", compression_level=9)) as writer:
        for r in RECORDS:
            writer.write(r)
        writer.flush()  # a sync flush: what is written so far can be read back
        writer.write(b"after the flush")
    assert list(og.python_io.tf_record_iterator(out, "ZLIB")) == RECORDS + [b"after the flush"]
    data = out.read_bytes()
    out.write_bytes(data[:len(data) // 2])
    with pytest.raises(DataLossError, match="z.tfrecord"):
        list(og.python_io.tf_record_iterator(out, "ZLIB"))
    out.write_bytes(data[:2] + bytes(b ^ 0x55 for b in data[2:]))
    with pytest.raises(DataLossError, match="compressed data is damaged"):
        list(og.python_io.tf_record_iterator(out, "ZLIB"))
    out.write_bytes(data)
    with pytest.raises(DataLossError):  # read as GZIP, it is no gzip stream
        list(og.python_io.tf_record_iterator(out, "GZIP"))

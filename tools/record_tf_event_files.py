"""Record TensorFlow's tf.summary.FileWriter event files for tests/train/test_event_file.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    python tools/record_tf_event_files.py

It writes, under tests/train/data/tf_event_files/:

- the events file TF1's FileWriter wrote for a fixed list of calls (summaries TF
  built, some repeating a tag with metadata so TF's stripping shows; session logs;
  a raw event; a GraphDef; steps None, 0, large and negative; one call after close(),
  which TF drops);
- reference.json: that file's name, the calls (their serialized inputs in hex, their
  steps), every record's wall time as TF's summary_iterator reads it back, and TF's
  serialization of some Event and SessionLog messages.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "train", "data", "tf_event_files")
SUFFIX = ".og-ref"  # a suffix makes TF create the file in the constructor


def _summaries(tf) -> list:
    """(serialized Summary, step) pairs, in the order they are fed."""
    S = tf.Summary
    meta = tf.SummaryMetadata(plugin_data=tf.SummaryMetadata.PluginData(
        plugin_name="scalars", content=b"\x08\x01"), display_name="Accuracy")
    tensor = tf.make_tensor_proto([1.5, -2.0], dtype=tf.float32)
    histo = tf.HistogramProto(min=-1.0, max=3.0, num=4.0, sum=5.0, sum_squares=11.0,
                              bucket_limit=[0.0, 1.0, 3.0], bucket=[1.0, 1.0, 2.0])
    image = S.Image(height=2, width=3, colorspace=3, encoded_image_string=b"\x89PNG\r\n")
    out = [
        (S(value=[S.Value(tag="loss", simple_value=0.5)]), None),
        (S(value=[S.Value(tag="acc", simple_value=0.25, metadata=meta)]), 0),
        (S(value=[S.Value(tag="acc", simple_value=0.75, metadata=meta)]), 1),
        # "loss" was first seen without metadata: TF strips this value's metadata too
        (S(value=[S.Value(tag="loss", simple_value=0.125, metadata=meta)]), 2),
        (S(value=[S.Value(tag="t", tensor=tensor, metadata=meta),
                  S.Value(tag="t", tensor=tensor, metadata=meta),
                  S.Value(tag="u", simple_value=-0.0, metadata=meta)]), 2 ** 40),
        (S(value=[S.Value(tag="h", histo=histo)]), -3),
        (S(value=[S.Value(tag="img", image=image, node_name="n")]), 5),
        (S(), 6),
        (S(value=[S.Value(tag="loss/\u00e4", simple_value=1e30)]), 7),
    ]
    out = [(s.SerializeToString(), step) for s, step in out]
    # summaries TF's own summary ops build, as Session.run returns them
    with tf.Graph().as_default():
        a = tf.summary.scalar("scalar_op", tf.constant(3.5))
        b = tf.summary.histogram("histogram_op", tf.constant([1.0, 2.0, 2.5, 7.0]))
        c = tf.summary.text("text_op", tf.constant("hello"))
        merged = tf.summary.merge([a, b, c])
        with tf.Session() as sess:
            for step, value in enumerate(sess.run([a, b, c, merged, merged])):
                out.append((value, 100 + step))
    return out


def _graph_def(tf) -> bytes:
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        tf.add(tf.matmul(x, w), 1.0, name="y")
    return g.as_graph_def().SerializeToString()


def _encode_cases(tf) -> list:
    """Events built with keyword arguments as encode_event takes them, and TF's bytes."""
    summary = tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=2.0)])
    cases = [
        dict(wall_time=1.5),
        dict(wall_time=-0.0, step=0),
        dict(wall_time=1796462319.6436086, step=5, summary=""),
        dict(step=-1, file_version=""),
        dict(wall_time=0.0, step=2 ** 63 - 1, session_log=""),
        dict(wall_time=3.0, file_version="brain.Event:2"),
        dict(graph_def="0a03616263"),
        dict(meta_graph_def="78797a", step=1),
        dict(wall_time=-2.0, summary=summary.SerializeToString().hex()),
    ]
    out = []
    for kw in cases:
        proto = dict(kw)
        for key in ("summary", "session_log", "graph_def", "meta_graph_def"):
            if key in proto:
                raw = bytes.fromhex(proto[key])
                if key == "summary":
                    proto[key] = tf.Summary.FromString(raw)
                elif key == "session_log":
                    proto[key] = tf.SessionLog.FromString(raw)
                else:
                    proto[key] = raw
        out.append({"kwargs": kw, "bytes": tf.Event(**proto).SerializeToString().hex()})
    return out


def _session_logs() -> list:
    return [
        {},
        {"status": 1},
        {"status": 3, "checkpoint_path": "/tmp/run/model.ckpt-10", "msg": "saved"},
        {"status": 2, "msg": "\u00fcber"},
    ]


def main() -> None:
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    logdir = tempfile.mkdtemp()
    try:
        calls = []
        writer = tf.summary.FileWriter(logdir, filename_suffix=SUFFIX)
        for raw, step in _summaries(tf):
            writer.add_summary(raw, step)
            calls.append({"kind": "summary", "bytes": raw.hex(), "step": step})
        for fields, step in zip(_session_logs()[1:], [None, 10, 2 ** 62]):
            writer.add_session_log(tf.SessionLog(**fields), step)
            calls.append({"kind": "session_log", "fields": fields, "step": step})
        event = tf.Event(wall_time=123.25, step=4, log_message=tf.LogMessage(
            level=tf.LogMessage.INFO, message="hi"))
        writer.add_event(event)
        calls.append({"kind": "event", "bytes": event.SerializeToString().hex()})
        # the bytes TF serializes this GraphDef object to (a parse may reorder its maps)
        proto = tf.GraphDef.FromString(_graph_def(tf))
        graph_def = proto.SerializeToString()
        writer.add_graph(None, 3, graph_def=proto)
        calls.append({"kind": "graph_def", "bytes": graph_def.hex(), "step": 3})
        writer.close()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = tf.Summary(value=[tf.Summary.Value(tag="late", simple_value=1.0)])
            writer.add_summary(raw.SerializeToString(), 99)  # closed: TF drops it
        calls.append({"kind": "summary", "bytes": raw.SerializeToString().hex(),
                      "step": 99, "after_close": True})
        (name,) = os.listdir(logdir)
        path = os.path.join(logdir, name)
        wall_times = [e.wall_time for e in tf.train.summary_iterator(path)]
        shutil.rmtree(OUT, ignore_errors=True)
        os.makedirs(OUT)
        shutil.copy(path, os.path.join(OUT, "tf_events.bin"))
        reference = {
            "file_name": name, "hostname": socket.gethostname(), "suffix": SUFFIX,
            "calls": calls, "wall_times": wall_times,
            "encode_cases": _encode_cases(tf),
            "session_logs": [{"fields": f, "bytes": tf.SessionLog(**f).SerializeToString()
                              .hex()} for f in _session_logs()],
        }
        with open(os.path.join(OUT, "reference.json"), "w") as f:
            json.dump(reference, f, indent=1)
            f.write("\n")
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    print(f"{name}: {len(wall_times)} records -> {OUT}")


if __name__ == "__main__":
    main()

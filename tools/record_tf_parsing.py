"""Record TensorFlow's Example serialization and parsing for tests/train/parsing_cases.py
into tests/train/data/tf1_parsing_reference.json (run by hand, with tensorflow):

    /tmp/s51/tfvenv/bin/python tools/record_tf_parsing.py

Stored: each proto's bytes (SerializeToString(deterministic=True), hex), a TFRecord
file of RECORDS written by TF's writer (hex), each parse scenario's outputs (dtype,
static shape, values; sparse outputs as their three components; strings as hex), each
error scenario's exception type and first message line, the pipeline's batches and
each proto's text format (str).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests", "train")
sys.path.insert(0, TESTS)
OUT = os.path.join(TESTS, "data", "tf1_parsing_reference.json")


def _plain(value):
    """An array as JSON: nested lists, bytes as hex strings."""
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind == "S":
        return np.vectorize(lambda v: bytes(v).hex(), otypes=[object])(arr).tolist() \
            if arr.size else arr.reshape(arr.shape).tolist()
    return arr.tolist()


def _message(e) -> str:
    """The line of TF's error text that says what is wrong (not its graph context)."""
    skip = ("Graph execution error", "Detected at node", "Original stack trace", "File ",
            "Node: ")
    for line in str(e).split("\n"):
        if line.strip() and not line.startswith(("\t", " ")) and not line.startswith(skip):
            return line.strip()
    return str(e)


def _static(t):
    return None if t.shape.ndims is None else t.shape.as_list()


def _describe(tf, tensors, values) -> dict:
    """{key: description} of a dict of parsed tensors and their values."""
    out = {}
    for key, t in tensors.items():
        v = values[key]
        if isinstance(t, tf.SparseTensor):
            out[key] = {"sparse": True, "dtype": t.dtype.name,
                        "indices_shape": _static(t.indices), "values_shape": _static(t.values),
                        "dense_shape_shape": _static(t.dense_shape),
                        "indices": _plain(v.indices), "values": _plain(v.values),
                        "dense_shape": _plain(v.dense_shape)}
        else:
            out[key] = {"sparse": False, "dtype": t.dtype.name, "shape": _static(t),
                        "value": _plain(v)}
    return out


def _feed(tf, data, serialized):
    if isinstance(data, (list, tuple)):
        x = tf.placeholder(tf.string, [len(data) if isinstance(data, tuple) else None])
        return x, {x: [serialized.get(d, d) if isinstance(d, str) else d for d in data]}
    x = tf.placeholder(tf.string, [])
    return x, {x: serialized[data] if isinstance(data, str) else data}


def main() -> None:
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    import parsing_cases as cases

    protos = cases.protos(tf)
    serialized = {k: p.SerializeToString(deterministic=True) for k, p in protos.items()}
    ref = {"protos": {k: v.hex() for k, v in serialized.items()}, "cases": {},
           "errors": {}, "text": {k: str(p) for k, p in protos.items()}}
    for name, (data, fn) in cases.parse_cases(tf).items():
        with tf.Graph().as_default(), tf.Session() as sess:
            x, feed = _feed(tf, data, serialized)
            got = fn(x)
            parts = got if isinstance(got, tuple) else (got,)
            values = sess.run(list(parts), feed)
            ref["cases"][name] = [_describe(tf, p, v) for p, v in zip(parts, values)]
    for name, (data, fn) in cases.error_cases(tf).items():
        with tf.Graph().as_default(), tf.Session() as sess:
            x, feed = _feed(tf, data, serialized)
            stage = "build"
            try:
                got = fn(x)
                stage = "run"
                sess.run(got, feed)
            except Exception as e:  # noqa: BLE001 - recording whatever TF raises
                ref["errors"][name] = {"stage": stage, "type": type(e).__name__,
                                       "message": _message(e)}
            else:
                ref["errors"][name] = {"stage": "none", "type": "", "message": ""}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "records.tfrecord")
        with tf.python_io.TFRecordWriter(path) as w:
            for k in cases.RECORDS:
                w.write(serialized[k])
        with open(path, "rb") as fh:
            ref["records_file"] = fh.read().hex()
        with tf.Graph().as_default(), tf.Session() as sess:
            ds = cases.pipeline(tf, path)
            nxt = tf.data.make_one_shot_iterator(ds).get_next()
            batches = []
            while True:
                try:
                    batches.append({k: _plain(v) for k, v in sess.run(nxt).items()})
                except tf.errors.OutOfRangeError:
                    break
            ref["pipeline"] = batches
            ref["pipeline_shapes"] = {k: _static(v) for k, v in nxt.items()}
    tmp_out = OUT + ".tmp"
    with open(tmp_out, "w") as fh:
        json.dump(ref, fh, indent=1, sort_keys=True)
    os.replace(tmp_out, OUT)
    print("wrote", OUT, len(ref["cases"]), "cases", len(ref["errors"]), "errors")


if __name__ == "__main__":
    main()

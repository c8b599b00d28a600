"""Record the element sequences TF1's tf.data gives in the scenarios of
tests/train/test_data.py (the test builds the same pipelines with onegraph).

Needs tensorflow (not a onegraph dependency); run it by hand when the scenarios change:

    /tmp/s51/tfvenv/bin/python tools/record_tf_data.py

It writes tests/train/data/tf1_data_reference.json: {scenario: {"elements": [...],
"types": [...], "shapes": [...]}}, each element a list of its flattened components
({"dtype", "shape", "values"}; bytes as latin-1 text). The text file and the TFRecord
file (written by TF) the file scenarios read are stored in it too ("files").
"""

from __future__ import annotations

import base64
import json
import os
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "train", "data", "tf1_data_reference.json")

TEXT = "alpha\nbeta\r\n\n  gamma delta\nlast line without newline"
RECORDS = [b"", b"abc", bytes(range(256)), b"x" * 1000]


def _component(value) -> dict:
    a = np.asarray(value)
    if a.dtype == object or a.dtype.kind == "S":
        values = [v.decode("latin-1") for v in a.reshape(-1).tolist()]
        dtype = "bytes"
    else:
        values = a.reshape(-1).tolist()
        dtype = a.dtype.name
    return {"dtype": dtype, "shape": list(a.shape), "values": values}


def _shape(s) -> list | None:
    return None if s.ndims is None else s.as_list()


def _drain(tf, sess, nxt) -> list:
    out = []
    while True:
        try:
            value = sess.run(nxt)
        except tf.errors.OutOfRangeError:
            return out
        out.append([_component(v) for v in tf.nest.flatten(value)])


def _spec(tf, ds) -> dict:
    return {"types": [t.name for t in tf.nest.flatten(tf.data.get_output_types(ds))],
            "shapes": [_shape(s) for s in tf.nest.flatten(tf.data.get_output_shapes(ds))]}


def pipelines(tf, files) -> dict:
    """Scenario name -> dataset (built in the current default graph)."""
    D = tf.data.Dataset
    f32, i64 = np.float32, np.int64
    a = np.arange(6, dtype=f32).reshape(3, 2)
    b = np.array([1, 2, 3], i64)

    def gen():
        for i in range(4):
            yield i, np.full([i], 0.5 * i, f32)

    return {
        "slices_tuple": D.from_tensor_slices((a, b)),
        "slices_dict": D.from_tensor_slices(
            {"a": np.array([[1, 2], [3, 4]], np.int32), "b": np.array([b"x", b"yz"])}),
        "from_tensors": D.from_tensors((a, np.int32(7))).repeat(2),
        "range_stop": D.range(5),
        "range_step": D.range(2, 11, 3),
        "range_negative": D.range(10, 0, -3),
        "map_arith": D.range(6).map(lambda x: x * 2 + 1),
        "map_tuple": D.from_tensor_slices((a, b)).map(
            lambda x, y: (x + tf.cast(y, tf.float32), y * y)),
        "map_dict": D.from_tensor_slices({"p": b, "q": b * 10}).map(
            lambda d: {"s": d["p"] + d["q"], "d": d["q"] - d["p"]}),
        "filter": D.range(10).filter(lambda x: x % 3 < 2),
        "batch": D.range(10).batch(4),
        "batch_drop": D.range(10).batch(4, drop_remainder=True),
        "batch_tuple": D.from_tensor_slices((a, b)).batch(2),
        "padded_batch": D.range(1, 6).map(lambda x: tf.fill([x], x)).padded_batch(
            2, padded_shapes=[None]),
        "padded_batch_fixed": D.range(1, 5).map(lambda x: tf.fill([x], x)).padded_batch(
            3, padded_shapes=[6], padding_values=np.int64(-1), drop_remainder=True),
        "repeat": D.range(3).repeat(2),
        "take_skip": D.range(10).skip(2).take(5),
        "take_all": D.range(4).take(-1),
        "skip_all": D.range(4).skip(-1),
        "zip": D.zip((D.range(3), D.range(10, 15))),
        "zip_dict": D.zip({"x": D.range(3), "y": D.range(5, 9).map(lambda v: v * v)}),
        "concatenate": D.range(3).concatenate(D.range(10, 12)),
        "flat_map": D.range(3).flat_map(lambda x: D.from_tensors(x).repeat(2)),
        "flat_map_slices": D.from_tensor_slices(a).flat_map(
            lambda r: D.from_tensor_slices(r * 2)),
        "unbatch": D.from_tensor_slices(np.arange(12, dtype=i64).reshape(3, 2, 2)).unbatch(),
        "enumerate": D.from_tensor_slices(np.array([5, 6, 7], np.int32)).enumerate(start=3),
        "cache_repeat": D.range(3).map(lambda x: x + 1).cache().repeat(2),
        "apply": D.range(5).apply(lambda d: d.skip(1).map(lambda v: -v)),
        "prefetch": D.range(3).prefetch(2),
        "text_lines": tf.data.TextLineDataset(files["text"]),
        "tfrecords": tf.data.TFRecordDataset([files["records"], files["records"]]),
        "generator": D.from_generator(gen, (tf.int64, tf.float32),
                                      (tf.TensorShape([]), tf.TensorShape([None]))),
        "generator_padded": D.from_generator(gen, (tf.int64, tf.float32),
                                             (tf.TensorShape([]), tf.TensorShape([None])))
        .padded_batch(3),
    }


def record() -> dict:
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = {"text": os.path.join(tmp, "lines.txt"),
                 "records": os.path.join(tmp, "data.tfrecord")}
        with open(files["text"], "w", newline="") as f:
            f.write(TEXT)
        with tf.io.TFRecordWriter(files["records"]) as w:
            for r in RECORDS:
                w.write(r)
        with open(files["records"], "rb") as f:
            out["files"] = {"text": TEXT, "records": base64.b64encode(f.read()).decode()}
        names = list(pipelines(tf, files))
        for name in names:
            with tf.Graph().as_default():
                ds = pipelines(tf, files)[name]
                nxt = tf.data.make_one_shot_iterator(ds).get_next()
                with tf.Session() as sess:
                    out[name] = {"elements": _drain(tf, sess, nxt), **_spec(tf, ds)}
    with tf.Graph().as_default():
        ph = tf.placeholder(tf.float32, [None])
        ds = tf.data.Dataset.from_tensor_slices(ph).map(lambda x: x * 10)
        it = tf.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        with tf.Session() as sess:
            first = (sess.run(it.initializer, {ph: [1, 2, 3]}), _drain(tf, sess, nxt))[1]
            second = (sess.run(it.initializer, {ph: [7, 8]}), _drain(tf, sess, nxt))[1]
        out["initializable"] = {"first": first, "second": second, **_spec(tf, ds)}
    with tf.Graph().as_default():
        it = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
        d1 = tf.data.Dataset.range(3)
        d2 = tf.data.Dataset.range(100, 102).map(lambda x: x * 2)
        i1, i2 = it.make_initializer(d1), it.make_initializer(d2)
        nxt = it.get_next()
        with tf.Session() as sess:
            runs = []
            for init in (i1, i2, i1):
                sess.run(init)
                runs.append(_drain(tf, sess, nxt))
        out["reinitializable"] = {"runs": runs, "shape": _shape(nxt.shape)}
    return out


if __name__ == "__main__":
    result = record()
    with open(OUT + ".tmp", "w") as f:
        json.dump(result, f, indent=None, sort_keys=True)
        f.write("\n")
    os.replace(OUT + ".tmp", OUT)
    print("wrote", OUT, len(result), "scenarios")

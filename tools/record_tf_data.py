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
import gzip
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "train"))

from data_cases import (CAPTURE_FEEDS, FILES, capturing, feedable,  # noqa: E402 - the scenarios
                        pipelines, sparse_pipelines, window_pipelines)
from data_experimental_cases import (  # noqa: E402 - tf.data.experimental's scenarios
    experimental_pipelines, failing_singles, single_values)
from data_csv_cases import (csv_pipelines, example_pipelines,  # noqa: E402 - file scenarios
                            write_csv_files, write_example_files)
OUT = os.path.join(HERE, "..", "tests", "train", "data", "tf1_data_reference.json")

TEXT = "alpha\nbeta\r\n\n  gamma delta\nlast line without newline"
RECORDS = [b"", b"abc", bytes(range(256)), b"x" * 1000]
RECORDS2 = [b"second file %d" % i for i in range(7)]


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




def record() -> dict:
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = {k: os.path.join(tmp, k) for k in FILES}
        with open(files["text"], "w", newline="") as f:
            f.write(TEXT)
        with gzip.open(files["text_gzip"], "wb") as f:
            f.write(TEXT.encode())
        for name, records, kind in [("records", RECORDS, ""), ("records2", RECORDS2, ""),
                                    ("records_gzip", RECORDS, "GZIP"),
                                    ("records_zlib", RECORDS, "ZLIB")]:
            with tf.io.TFRecordWriter(files[name], tf.io.TFRecordOptions(kind)) as w:
                for r in records:
                    w.write(r)
        out["files"] = {"text": TEXT, "records_list": [r.decode("latin-1") for r in RECORDS]}
        for name in FILES[1:]:
            with open(files[name], "rb") as f:
                out["files"][name] = base64.b64encode(f.read()).decode()
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
    out["experimental"] = _experimental(tf)
    out["capturing"] = _capturing(tf)
    out["sparse"] = _sparse(tf)
    out["csv"] = _file_pipelines(tf)
    out["windows"] = _windows(tf)
    out["feedable"] = feedable(tf)
    out["list_files"] = _list_files(tf)
    return out


def _windows(tf) -> dict:
    """The window pipelines' elements, types and shapes."""
    out = {}
    for name in window_pipelines(tf):
        with tf.Graph().as_default():
            ds = window_pipelines(tf)[name]
            nxt = tf.data.make_one_shot_iterator(ds).get_next()
            with tf.Session() as sess:
                out[name] = {"elements": _drain(tf, sess, nxt), **_spec(tf, ds)}
    return out


def _file_pipelines(tf) -> dict:
    """The CSV and Example-file pipelines: elements, types, shapes and classes, or the
    error TF raises while reading (scenarios named err_*)."""
    out = {}
    with tempfile.TemporaryDirectory() as d:
        write_csv_files(d)
        write_example_files(tf, d)
        for cases in (csv_pipelines, example_pipelines):
            for name in cases(tf, d):
                with tf.Graph().as_default():
                    ds = cases(tf, d)[name]
                    nxt = tf.data.make_one_shot_iterator(ds).get_next()
                    classes = tf.nest.flatten(tf.data.get_output_classes(ds))
                    with tf.Session() as sess:
                        try:
                            elements = _drain(tf, sess, nxt)
                        except tf.errors.InvalidArgumentError as e:
                            lines = [ln.strip() for ln in e.message.splitlines()
                                     if ln.strip() and not ln.strip().startswith("[[")]
                            out[name] = {"error": lines[-1]}
                            continue
                    out[name] = {"elements": elements, **_spec(tf, ds),
                                 "classes": [c.__name__ for c in classes]}
    return out


def _sparse(tf) -> dict:
    """The pipelines with SparseTensor components: elements (a sparse value as its
    indices, values and dense_shape), types, shapes and classes."""
    out = {}
    for name in sparse_pipelines(tf):
        with tf.Graph().as_default():
            ds = sparse_pipelines(tf)[name]
            nxt = tf.data.make_one_shot_iterator(ds).get_next()
            classes = tf.nest.flatten(tf.data.get_output_classes(ds))
            with tf.Session() as sess:
                out[name] = {"elements": _drain(tf, sess, nxt), **_spec(tf, ds),
                             "classes": [c.__name__ for c in classes]}
    return out


def _capturing(tf) -> dict:
    """The elements of the capturing pipelines, one initializer run per fed value."""
    out = {}
    with tf.Graph().as_default():
        scale = tf.placeholder(tf.int64, [])
        names = list(capturing(tf, scale))
    for name in names:
        with tf.Graph().as_default():
            scale = tf.placeholder(tf.int64, [])
            it = tf.data.make_initializable_iterator(capturing(tf, scale)[name])
            nxt = it.get_next()
            with tf.Session() as sess:
                runs = []
                for value in CAPTURE_FEEDS:
                    sess.run(it.initializer, {scale: value})
                    runs.append(_drain(tf, sess, nxt))
            out[name] = runs
    return out


def _experimental(tf) -> dict:
    """tf.data.experimental's pipelines (elements, types, shapes), the values of the
    whole-dataset ops (and their static shapes) and the errors of failing ones."""
    out = {}
    for name in experimental_pipelines(tf):
        with tf.Graph().as_default():
            ds = experimental_pipelines(tf)[name]
            nxt = tf.data.make_one_shot_iterator(ds).get_next()
            with tf.Session() as sess:
                out[name] = {"elements": _drain(tf, sess, nxt), **_spec(tf, ds)}
    for name in single_values(tf):
        with tf.Graph().as_default():
            tensors = single_values(tf)[name]
            with tf.Session() as sess:
                value = sess.run(tensors)
            out[name] = {"value": [_component(v) for v in tf.nest.flatten(value)],
                         "shapes": [_shape(t.shape) for t in tf.nest.flatten(tensors)]}
    errors = {}
    for name in failing_singles(tf):
        with tf.Graph().as_default():
            tensors = failing_singles(tf)[name]
            with tf.Session() as sess:
                try:
                    sess.run(tensors)
                except tf.errors.InvalidArgumentError as e:
                    # TF 2's text: "Graph execution error: ... <the kernel's message>
                    # [[{{node ...}}]]"; keep the kernel's line
                    lines = [ln.strip() for ln in e.message.splitlines() if ln.strip()]
                    errors[name] = lines[-2]
    out["errors"] = errors
    return out


# file names list_files sees, and the pattern lists (relative to their directory)
LIST_FILES = ["b.txt", "a.txt", "c.csv", "d.txt", "sub/e.txt", ".hidden.txt"]
LIST_PATTERNS = [["*.txt"], ["*.csv", "[ab].txt"], ["*.txt", "a.*"], ["?.*"], ["*/*.txt"],
                 ["*"]]


def _list_files(tf) -> list:
    """The names (relative) list_files(shuffle=False) gives for each pattern list."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "sub"))
        for name in LIST_FILES:
            with open(os.path.join(tmp, name), "w") as f:
                f.write(name)
        for patterns in LIST_PATTERNS:
            with tf.Graph().as_default():
                ds = tf.data.Dataset.list_files([os.path.join(tmp, p) for p in patterns],
                                                shuffle=False)
                nxt = tf.data.make_one_shot_iterator(ds).get_next()
                with tf.Session() as sess:
                    names = [e[0]["values"][0] for e in _drain(tf, sess, nxt)]
            out.append([os.path.relpath(n, tmp) for n in names])
    return out


if __name__ == "__main__":
    result = record()
    with open(OUT + ".tmp", "w") as f:
        json.dump(result, f, indent=None, sort_keys=True)
        f.write("\n")
    os.replace(OUT + ".tmp", OUT)
    print("wrote", OUT, len(result), "scenarios")

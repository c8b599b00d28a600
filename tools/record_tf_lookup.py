"""Record TensorFlow's lookup-table results for tests/train/test_lookup.py.

Run by hand with the scratch TF venv (never imported by tests):

    /tmp/s51/tfvenv/bin/python tools/record_tf_lookup.py

Runs the scenarios of tests/train/lookup_cases.py under tf.compat.v1 (graph mode, the
tables of tf.compat.v1.lookup and TF1's index_table_* functions) and writes each step's
outputs (dtype, static shape, values; strings as hex; SparseTensors as their three
parts) or the scenario's error (class, whether building or running raised, the message's
first line, the scratch folder as "<dir>") to tests/train/data/tf1_lookup_reference.json.
"""

from __future__ import annotations

import json
import os
import tempfile
import types

import numpy as np
import tensorflow.compat.v1 as tf
from tensorflow.python.ops import lookup_ops

from tf_recording import TRAIN_TESTS, load_cases, write_reference  # noqa: E402

tf.disable_eager_execution()

OUT = TRAIN_TESTS / "data" / "tf1_lookup_reference.json"


def _lib(folder: str):
    lk = tf.lookup
    return types.SimpleNamespace(
        StaticHashTable=lk.StaticHashTable, HashTable=lookup_ops.HashTable,
        KeyValueTensorInitializer=lk.KeyValueTensorInitializer,
        TextFileInitializer=lk.TextFileInitializer, TextFileIndex=lk.TextFileIndex,
        StaticVocabularyTable=lk.StaticVocabularyTable,
        IdTableWithHashBuckets=lookup_ops.IdTableWithHashBuckets,
        MutableHashTable=lk.experimental.MutableHashTable,
        index_table_from_tensor=lookup_ops.index_table_from_tensor,
        index_table_from_file=lookup_ops.index_table_from_file,
        index_to_string_table_from_tensor=lookup_ops.index_to_string_table_from_tensor,
        index_to_string_table_from_file=lookup_ops.index_to_string_table_from_file,
        TextFileIdTableInitializer=lookup_ops.TextFileIdTableInitializer,
        TextFileStringTableInitializer=lookup_ops.TextFileStringTableInitializer,
        tables_initializer=tf.tables_initializer, constant=tf.constant,
        placeholder=tf.placeholder, SparseTensor=tf.SparseTensor, string=tf.string,
        int32=tf.int32, int64=tf.int64, float32=tf.float32,
        path=lambda name: os.path.join(folder, name))


def _encode(tensor, value) -> dict:
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind == "S":
        vals = [bytes(v).hex() for v in arr.reshape(-1)]
    elif arr.dtype.kind == "f":
        vals = [repr(float(v)) for v in arr.reshape(-1)]
    else:
        vals = [int(v) for v in arr.reshape(-1)]
    return {"dtype": tensor.dtype.name, "static_shape": tensor.shape.as_list()
            if tensor.shape.ndims is not None else None,
            "shape": list(arr.shape), "values": vals}


def _first_line(text) -> str:
    lines = [ln.strip() for ln in str(text).split("\n")]
    lines = [ln for ln in lines if ln and not ln.startswith(("[[", "Detected at node",
                                                            "Graph execution error"))]
    return lines[-1].split("\t [[")[0].strip() if lines else ""


def _step_record(step, value):
    if isinstance(step, tf.SparseTensor):
        return {"sparse": [_encode(step.indices, value.indices),
                           _encode(step.values, value.values),
                           _encode(step.dense_shape, value.dense_shape)]}
    if isinstance(step, tf.Operation):
        return None
    if isinstance(step, (list, tuple)):
        return [_step_record(s, v) for s, v in zip(step, value)]
    return _encode(step, value)


def run_case(name, build, folder, no_init) -> dict:
    """One scenario's step outputs or error, under a fresh graph."""
    with tf.Graph().as_default():
        try:
            built = build(_lib(folder))
            steps, feed = built if isinstance(built, tuple) else (built, None)
            init = tf.tables_initializer()
        except (ValueError, TypeError) as e:
            return {"error": type(e).__name__, "stage": "build",
                    "message": _first_line(e).replace(folder, "<dir>")}
        out = []
        with tf.Session() as sess:
            try:
                if not no_init:
                    sess.run(init)
                for step in steps:
                    out.append(_step_record(step, sess.run(step, feed)))
            except tf.errors.OpError as e:
                return {"error": type(e).__name__, "stage": "run",
                        "message": _first_line(e.message).replace(folder, "<dir>")}
        return {"steps": out}


def main() -> None:
    cases = load_cases("lookup_cases")
    ref: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        for fname, data in cases.FILES.items():
            with open(os.path.join(folder, fname), "wb") as fh:
                fh.write(data)
        for name, build in cases.CASES.items():
            ref[name] = run_case(name, build, folder, name in cases.NO_INIT)
            print(name, json.dumps(ref[name])[:300])
    write_reference(OUT, ref)


if __name__ == "__main__":
    main()

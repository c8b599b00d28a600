"""Record TensorFlow's feature-column results for tests/train/test_feature_column.py.

Run by hand with the scratch TF venv (never imported by tests):

    /tmp/s51/tfvenv/bin/python tools/record_tf_feature_column.py

Runs the scenarios of tests/train/feature_column_cases.py under tf.compat.v1 (graph
mode, tf.compat.v1.feature_column) and writes each output's dtype, static shape and
values (or make_parse_example_spec's result), every global variable's name and shape,
or the scenario's error (class, stage, the message's last line) to
tests/train/data/tf1_feature_column_reference.json.
"""

from __future__ import annotations

import json
import os
import tempfile
import types

import numpy as np
import tensorflow.compat.v1 as tf

from tf_recording import TRAIN_TESTS, load_cases, write_reference  # noqa: E402

tf.disable_eager_execution()

OUT = TRAIN_TESTS / "data" / "tf1_feature_column_reference.json"


def _lib(folder: str):
    return types.SimpleNamespace(
        fc=tf.feature_column, constant=tf.constant, placeholder=tf.placeholder,
        SparseTensor=tf.SparseTensor, string=tf.string, int32=tf.int32, int64=tf.int64,
        float32=tf.float32, constant_initializer=tf.constant_initializer,
        gradients=tf.gradients, reduce_sum=tf.reduce_sum,
        global_variables=tf.global_variables, trainable_variables=tf.trainable_variables,
        convert_to_tensor=tf.convert_to_tensor, path=lambda n: os.path.join(folder, n))


def _encode(tensor, value) -> dict:
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        vals = [repr(float(v)) for v in arr.reshape(-1)]
    else:
        vals = [int(v) for v in arr.reshape(-1)]
    return {"dtype": tensor.dtype.name, "static_shape": tensor.shape.as_list()
            if tensor.shape.ndims is not None else None,
            "shape": list(arr.shape), "values": vals}


def _last_line(text) -> str:
    lines = [ln.strip() for ln in str(text).split("\n") if ln.strip()]
    return lines[-1].split("\t [[")[0].strip() if lines else ""


def run_case(cases, build, folder) -> dict:
    """One scenario's outputs and variables, or its error, under a fresh graph."""
    with tf.Graph().as_default():
        try:
            built = build(_lib(folder))
        except (ValueError, TypeError) as e:
            return {"error": type(e).__name__, "stage": "build",
                    "message": _last_line(e).replace(folder, "<dir>")}
        if not isinstance(built, dict):
            return {"no_error": True}
        outs = built["out"]
        rec: dict = {"variables": [[v.op.name, v.shape.as_list()]
                                   for v in tf.global_variables()]}
        if "spec" in outs:
            rec["spec"] = cases.spec_record(outs["spec"])
            return rec
        if "names" in outs:
            rec["names"] = outs["names"]
            return rec
        init = [tf.global_variables_initializer(), tf.tables_initializer()]
        with tf.Session() as sess:
            try:
                sess.run(init)
                if built.get("assign"):
                    for v in tf.global_variables():
                        v.load(cases.fill(v.shape.as_list()), sess)
                keys = sorted(outs)
                vals = sess.run([outs[k] for k in keys], built.get("feed"))
            except tf.errors.OpError as e:
                return {"error": type(e).__name__, "stage": "run",
                        "message": _last_line(e.message).replace(folder, "<dir>")}
        rec["out"] = {k: _encode(outs[k], v) for k, v in zip(keys, vals)}
        return rec


def main() -> None:
    cases = load_cases("feature_column_cases")
    ref: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        for fname, data in cases.FILES.items():
            with open(os.path.join(folder, fname), "wb") as fh:
                fh.write(data)
        for name, build in cases.CASES.items():
            ref[name] = run_case(cases, build, folder)
            print(name, json.dumps(ref[name])[:400])
    write_reference(OUT, ref)


if __name__ == "__main__":
    main()

"""Record TF1's queue-based readers, PaddingFIFOQueue, PriorityQueue and
FixedLengthRecordDataset over the scenarios of tests/train/readers_cases.py into
tests/train/data/tf1_readers_reference.json (with the bytes of the files TF read, so
the test reads the very same files). Run with the scratch TF venv:

    /tmp/s51/tfvenv/bin/python tools/record_tf_readers.py
"""

from __future__ import annotations

import os
import tempfile
import types

import tensorflow.compat.v1 as tf

from tf_recording import TRAIN_TESTS, load_cases, write_reference

tf.disable_eager_execution()
cases = load_cases("readers_cases")


def _api():
    names = ["Graph", "Session", "local_variables_initializer", "placeholder", "int32",
             "int64", "float32", "string", "TFRecordReader", "TextLineReader",
             "WholeFileReader", "FixedLengthRecordReader", "IdentityReader",
             "PaddingFIFOQueue", "PriorityQueue"]
    api = types.SimpleNamespace(**{n: getattr(tf, n) for n in names})
    api.string_input_producer = tf.train.string_input_producer
    api.batch = tf.train.batch
    api.Coordinator = tf.train.Coordinator
    api.start_queue_runners = tf.train.start_queue_runners
    api.OutOfRangeError = tf.errors.OutOfRangeError
    api.FixedLengthRecordDataset = tf.data.FixedLengthRecordDataset
    api.make_one_shot_iterator = tf.data.make_one_shot_iterator
    return api


def _write_tfrecord(path, records, compression):
    with tf.io.TFRecordWriter(path, compression) as w:
        for r in records:
            w.write(r)


def main() -> None:
    api = _api()
    with tempfile.TemporaryDirectory() as folder:
        cases.write_files(folder, _write_tfrecord)
        files = {}
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                files[name] = f.read().hex()
        results = {c["name"]: cases.run(api, c, folder) for c in cases.CASES}
    data = {"files": files, "cases": results, "padding": cases.run_padding(api),
            "priority": cases.run_priority(api), "bad_args": cases.run_bad_args(api)}
    write_reference(TRAIN_TESTS / "data" / "tf1_readers_reference.json", data)


if __name__ == "__main__":
    main()

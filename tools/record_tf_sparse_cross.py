"""Record TensorFlow's sparse crosses for tests/train/test_sparse_cross.py.

Run by hand with the scratch TF venv (never imported by tests):

    /tmp/s51/tfvenv/bin/python tools/record_tf_sparse_cross.py

Each scenario of CASES (plain data: the function, its inputs and keyword arguments)
runs under tf.compat.v1 in graph mode; the file tests/train/data/
tf1_sparse_cross_reference.json keeps the scenario with TF's output SparseTensor
(indices, values, dense_shape) or its error (class, stage, first line of the message),
so the test rebuilds the same inputs under onegraph.
"""

from __future__ import annotations

import json

import numpy as np
import tensorflow.compat.v1 as tf

from tf_recording import TRAIN_TESTS, write_reference

tf.disable_eager_execution()

OUT = TRAIN_TESTS / "data" / "tf1_sparse_cross_reference.json"


def sp(indices, values, shape, dtype="string"):
    return {"sparse": [indices, values, shape], "dtype": dtype}


def dn(value, dtype="string"):
    return {"dense": value, "dtype": dtype}


A = sp([[0, 0], [1, 0], [1, 1]], ["a", "b", "c"], [2, 2])
D = sp([[0, 0], [1, 0]], ["d", "e"], [2, 1])
F = dn([["f"], ["g"]])
I3 = sp([[0, 0], [0, 1], [0, 2], [1, 0]], [7, -3, 2 ** 40, 0], [2, 3], "int64")
S2 = sp([[0, 0], [0, 1], [1, 0], [1, 1]], ["x", "y", "\u00fcber", "d" * 70], [2, 2])
EMPTY_ROW = sp([[0, 0], [2, 0], [2, 1]], ["p", "q", "r"], [3, 2])
DENSE3 = dn([["u", "v"], ["w", "x"], ["y", "z"]])
INT_DENSE3 = dn([[1, 2], [3, 4], [5, 6]], "int32")

CASES = {
    "doc_cross": ("cross", [A, D, F], {}),
    "doc_hashed": ("cross_hashed", [A, D, F], {}),
    "doc_hashed_buckets": ("cross_hashed", [A, D, F], {"num_buckets": 1000}),
    "doc_hashed_key": ("cross_hashed", [A, D, F], {"hash_key": 12345}),
    "doc_hashed_key_buckets": ("cross_hashed", [A, D, F],
                               {"num_buckets": 7, "hash_key": 2 ** 62 + 99}),
    "int_str_cross": ("cross", [I3, S2], {}),
    "int_str_hashed": ("cross_hashed", [I3, S2], {}),
    "int_str_hashed_buckets": ("cross_hashed", [I3, S2], {"num_buckets": 100}),
    "int_int_hashed": ("cross_hashed", [I3, sp([[0, 0], [1, 0], [1, 1]], [-1, 5, 9],
                                              [2, 2], "int64")], {}),
    "dense_only_cross": ("cross", [dn([[1, 2], [3, 4]], "int64"), dn([["a"], ["b"]])], {}),
    "dense_only_hashed": ("cross_hashed", [dn([[1, 2], [3, 4]], "int64"),
                                           dn([["a"], ["b"]])], {"num_buckets": 50}),
    "empty_row_cross": ("cross", [EMPTY_ROW, DENSE3], {}),
    "empty_row_hashed": ("cross_hashed", [EMPTY_ROW, DENSE3], {}),
    "separator": ("cross", [A, D, F], {"separator": "##"}),
    "separator_empty": ("cross", [A, F], {"separator": ""}),
    "int32_dense_hashed": ("cross_hashed", [EMPTY_ROW, INT_DENSE3], {"num_buckets": 10}),
    "int32_dense_cross": ("cross", [INT_DENSE3, EMPTY_ROW], {}),
    "dense_first_order": ("cross", [F, A, D], {}),
    "three_way_product": ("cross", [sp([[0, 0], [0, 1]], ["a", "b"], [1, 2]),
                                    sp([[0, 0], [0, 1], [0, 2]], [1, 2, 3], [1, 3], "int64"),
                                    dn([["x", "y"]])], {}),
    "three_way_hashed": ("cross_hashed", [sp([[0, 0], [0, 1]], ["a", "b"], [1, 2]),
                                          sp([[0, 0], [0, 1], [0, 2]], [1, 2, 3], [1, 3],
                                             "int64"), dn([["x", "y"]])], {}),
    "single_input_hashed": ("cross_hashed", [S2], {}),
    "single_input_cross": ("cross", [I3], {}),
    "all_empty": ("cross", [sp(np.zeros((0, 2), np.int64).tolist(), [], [3, 4]), DENSE3], {}),
    "all_empty_hashed": ("cross_hashed", [sp(np.zeros((0, 2), np.int64).tolist(), [], [3, 4]),
                                          DENSE3], {}),
    "batch4_mixed": ("cross_hashed", [sp([[1, 0], [1, 3], [3, 0]], ["m", "n", "o"], [4, 5]),
                                      sp([[0, 0], [1, 0], [3, 0], [3, 1]], [4, 5, 6, 7],
                                         [4, 2], "int64")], {"num_buckets": 13}),
    "float_dense_cast": ("cross", [dn([[1.7], [-2.2]], "float32"), A], {}),
    # errors
    "err_batch_sparse": ("cross", [A, sp([[0, 0]], ["z"], [3, 1])], {}),
    "err_batch_dense": ("cross_hashed", [A, DENSE3], {}),
    "err_batch_dense_only": ("cross", [F, DENSE3], {}),
    "err_dense_rank1": ("cross", [A, dn(["f", "g"])], {}),
    "err_sparse_rank3": ("cross", [sp([[0, 0, 0]], ["a"], [2, 1, 1]), F], {}),
    "err_not_list": ("cross", "not a list", {}),
    "err_not_tensor": ("cross", [A, [["f"], ["g"]]], {}),
    "err_not_tensor_hashed": ("cross_hashed", [A, [["f"], ["g"]]], {}),
}

_DTYPES = {"string": tf.string, "int64": tf.int64, "int32": tf.int32, "float32": tf.float32}


def build(spec):
    """The tf input a scenario's spec describes (a raw value for the error cases)."""
    if isinstance(spec, dict) and "sparse" in spec:
        ind, val, shape = spec["sparse"]
        return tf.SparseTensor(tf.constant(np.asarray(ind, np.int64).reshape(-1, len(shape))),
                               tf.constant(val, _DTYPES[spec["dtype"]]),
                               tf.constant(shape, tf.int64))
    if isinstance(spec, dict) and "dense" in spec:
        return tf.constant(spec["dense"], _DTYPES[spec["dtype"]])
    return spec


def _first_line(text) -> str:
    """The message's own line: the first one of a Python error, the last before the
    node trailer ("\t [[{{node ...}}]]") of a graph execution error."""
    lines = [ln for ln in str(text).split("\n") if ln.strip() and not ln.startswith("\t [[")]
    return lines[-1].strip() if lines else ""


def _values(arr) -> list:
    arr = np.asarray(arr)
    if arr.dtype.kind in "OSU":
        return [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in arr]
    return [int(v) for v in arr]


def run_case(fn, inputs, kwargs) -> dict:
    with tf.Graph().as_default():
        try:
            args = [build(i) for i in inputs] if isinstance(inputs, list) else inputs
            out = getattr(tf.sparse, fn)(args, **kwargs)
        except (ValueError, TypeError) as e:
            return {"error": type(e).__name__, "stage": "build", "message": _first_line(e)}
        with tf.Session() as sess:
            try:
                val = sess.run(out)
            except tf.errors.OpError as e:
                return {"error": type(e).__name__, "stage": "run",
                        "message": _first_line(e.message)}
    return {"indices": np.asarray(val.indices).tolist(), "values": _values(val.values),
            "dense_shape": np.asarray(val.dense_shape).tolist(), "dtype": out.values.dtype.name}


def main() -> None:
    ref = {}
    for name, (fn, inputs, kwargs) in CASES.items():
        ref[name] = {"fn": fn, "inputs": inputs, "kwargs": kwargs,
                     "tf": run_case(fn, inputs, kwargs)}
        print(name, json.dumps(ref[name]["tf"])[:300])
    write_reference(OUT, ref)


if __name__ == "__main__":
    main()

"""Record TF1's tf.py_func behaviour for tests/train/test_py_func.py.

Run by hand with a TensorFlow venv (never from the tests):
    /tmp/s51/tfvenv/bin/python tools/record_tf_py_func.py
Writes tests/train/data/tf1_py_func_reference.json: for each case (the same names,
functions and Tout as the test's CASES) what TF returned when the graph was built
(a Tensor, a list of n, or the Operation) and, run with x = [1, 2] (float32), the
value and dtype or the error's class and first message line.
"""

from __future__ import annotations

import json
import os
import re

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "train", "data",
                   "tf1_py_func_reference.json")


def _raise(kind):
    def func(v):
        raise kind("boom")
    return func


# name -> (function of v, Tout as dtype names: a str, a list or a tuple)
CASES = {
    "single": (lambda v: v * 2, "float32"),
    "list_one": (lambda v: [v * 2], ["float32"]),
    "tuple_two": (lambda v: (v, v + 1), ("float32", "float32")),
    "empty": (lambda v: None, []),
    "float64_for_float32": (lambda v: v.astype(np.float64), "float32"),
    "int64_for_float32": (lambda v: v.astype(np.int64), "float32"),
    "float32_for_float64": (lambda v: v, "float64"),
    "float16_for_float32": (lambda v: v.astype(np.float16), "float32"),
    "python_float_for_float32": (lambda v: 1.5, "float32"),
    "python_float_for_float64": (lambda v: 1.5, "float64"),
    "python_int_for_int64": (lambda v: 3, "int64"),
    "python_int_for_int32": (lambda v: 3, "int32"),
    "bool_for_bool": (lambda v: v > 1, "bool"),
    "two_for_one": (lambda v: (v, v), ["float32"]),
    "tuple_for_single": (lambda v: (v, v), "float32"),
    "one_for_two": (lambda v: v, ["float32", "float32"]),
    "none_for_one": (lambda v: None, "float32"),
    "value_for_empty": (lambda v: v, []),
    "str_for_string": (lambda v: "hi", "string"),
    "bytes_for_string": (lambda v: b"hi", "string"),
    "unicode_array_for_string": (lambda v: np.array(["a", "bc"]), "string"),
    "float_for_string": (lambda v: v, "string"),
    "string_for_float32": (lambda v: "x", "float32"),
    "raises_value_error": (_raise(ValueError), "float32"),
    "raises_key_error": (_raise(KeyError), "float32"),
    "raises_stop_iteration": (_raise(StopIteration), "float32"),
}


def _tout(spec):
    if isinstance(spec, str):
        return tf.as_dtype(spec)
    return type(spec)(tf.as_dtype(s) for s in spec)


def _jsonable(value):
    array = np.asarray(value, dtype=object if isinstance(value, bytes) else None)
    if array.dtype == object:
        return [v.decode() if isinstance(v, bytes) else v for v in array.reshape(-1)]
    return array.tolist()


def _record(name, func, spec):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2])
        out = tf.py_func(func, [x], _tout(spec), name=name)
        if isinstance(out, tf.Operation):
            built = "operation"
        elif isinstance(out, list):
            built = f"list:{len(out)}"
        else:
            built = "tensor"
        entry = {"built": built, "op_type": (out if built == "operation" else
                                             (out[0] if isinstance(out, list) else out).op).type}
        if built != "operation":
            first = out[0] if isinstance(out, list) else out
            entry["rank_known"] = first.shape.ndims is not None
        with tf.Session(graph=graph) as sess:
            try:
                value = sess.run(out, {x: [1, 2]})
            except tf.errors.OpError as e:
                # TF's first lines are "Graph execution error:" and a stack of
                # where the node was made: keep the kernel's own line
                line = next((s for s in e.message.splitlines()
                             if "pyfunc_" in s or "boom" in s), e.message.splitlines()[0])
                entry["error"] = type(e).__name__
                entry["message"] = re.sub(r"pyfunc_\d+", "pyfunc_N", line.strip())
                return entry
        values = value if isinstance(value, list) else [value]
        entry["values"] = [None if v is None else _jsonable(v) for v in values]
        entry["dtypes"] = [None if v is None else "string" if isinstance(v, bytes)
                           or np.asarray(v).dtype == object else np.asarray(v).dtype.name
                           for v in values]
        return entry


def _misc():
    """Gradients, the stateless op type and numpy_function's op type."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2])
        y = tf.py_func(lambda v: v, [x], tf.float32)
        grads = tf.gradients(y * 2.0, x)
        stateless = tf.py_func(lambda v: v, [x], tf.float32, stateful=False)
        nf = tf.numpy_function(lambda v: v, [x], tf.float32)
        return {"gradient_is_none": grads[0] is None,
                "stateless_op_type": stateless.op.type,
                "numpy_function_op_type": nf.op.type}


def main() -> None:
    """Record every case and write the JSON file."""
    data = {"tf_version": tf.__version__,
            "cases": {name: _record(name, f, spec) for name, (f, spec) in CASES.items()},
            "misc": _misc()}
    tmp = OUT + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, OUT)
    print("wrote", OUT)


if __name__ == "__main__":
    main()

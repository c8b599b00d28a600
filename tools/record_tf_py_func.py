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
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "train"))
from py_func_cases import CASES  # noqa: E402 - the shared cases

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "train", "data",
                   "tf1_py_func_reference.json")




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

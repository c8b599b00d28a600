"""Record one TF op per case (tests/train/graph_def_op_cases.py) as a GraphDef plus TF's
outputs, for og.import_graph_def's op-table tests.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_graph_def_ops.py
Writes tests/train/data/tf_graph_defs/ops_cases.npz, with per case <name>:
<name>__graph (the GraphDef bytes as uint8), <name>__feeds / <name>__fetches (tensor
names, unicode), <name>__runs (how many input sets), and per run k the inputs
<name>__in_<k>_<i> and TF's outputs <name>__out_<k>_<i> (numeric only: no pickle).
"""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "train", "data", "tf_graph_defs", "ops_cases.npz")


def _cases():
    """The case table, loaded by path (the test package needs no install here)."""
    path = os.path.join(HERE, "..", "tests", "train", "graph_def_op_cases.py")
    spec = importlib.util.spec_from_file_location("graph_def_op_cases", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module       # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def record(case, feed_type) -> dict:
    """Build `case` in its own graph, check it holds case.op, run every input set."""
    graph = tf.Graph()
    with graph.as_default():
        first = case.runs[0]
        holders = []
        for i, value in enumerate(first):
            value = np.asarray(value)
            shape = value.shape
            given = case.shapes[i] if case.shapes and i < len(case.shapes) else None
            if given is not None:
                shape = None if given == "any" else given
            holders.append(tf.placeholder(tf.as_dtype(value.dtype), shape, name=f"in{i}"))
        def fed(v):
            if isinstance(v, feed_type):
                return holders[v.index]
            if isinstance(v, list) and any(isinstance(e, feed_type) for e in v):
                return [fed(e) for e in v]
            return v
        kwargs = {k: fed(v) for k, v in case.args.items()}
        getattr(tf.raw_ops, case.op)(name="op", **kwargs)
        op = graph.get_operation_by_name("op")
        assert op.type == case.op, (case.name, op.type)
        fetches = [t.name for t in op.outputs]
        gd = graph.as_graph_def()
    assert any(n.op == case.op for n in gd.node), case.name
    arrays = {"graph": np.frombuffer(gd.SerializeToString(), np.uint8),
              "feeds": np.array([h.name for h in holders]),
              "fetches": np.array(fetches), "runs": np.array(len(case.runs))}
    with tf.Session(graph=graph) as sess:
        for k, inputs in enumerate(case.runs):
            outs = sess.run(fetches, dict(zip(holders, inputs)))
            for i, v in enumerate(inputs):
                arrays[f"in_{k}_{i}"] = np.asarray(v)
            for i, v in enumerate(outs):
                arrays[f"out_{k}_{i}"] = np.asarray(v)
    return arrays


def main():
    """Record every case (or those named on the command line, kept with the other
    recorded ones) into one npz, written to a temporary name then renamed."""
    module = _cases()
    only = set(sys.argv[1:])
    data = {}
    if only and os.path.exists(OUT):
        with np.load(OUT) as old:
            data = {k: old[k] for k in old.files if k.split("__")[0] not in only}
    for case in module.CASES:
        if only and case.name not in only:
            continue
        for key, value in record(case, module.Feed).items():
            data[f"{case.name}__{key}"] = value
        print(case.name, case.op)
    tmp = OUT + ".tmp.npz"
    np.savez_compressed(tmp, **data)
    os.replace(tmp, OUT)
    print(len({k.split("__")[0] for k in data}), "cases ->", OUT, os.path.getsize(OUT),
          "bytes")


if __name__ == "__main__":
    main()

"""Record TF1 training graphs (.meta + V2 checkpoint) for tests/train/test_meta_graph.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the fixtures change:

    /tmp/s51/tfvenv/bin/python tools/record_tf_meta_graph.py

For each variant (reference variables "ref", resource variables "resource", both with
GradientDescentOptimizer; "momentum_ref" with a Nesterov MomentumOptimizer and
"adam_resource" with AdamOptimizer) it builds a small MLP (x:0 [None, 4] -> relu
dense 5 -> "logits" [None, 3], mean squared error against y:0), trains it 3 steps
with the optimizer's minimize, saves it with tf.train.Saver, then in a fresh graph
imports the .meta, restores and records:
- logits for fixed inputs,
- the variables' values after 2 more training steps from the restored state,
- the collections' contents (names) as TF reads them back.
Written under tests/train/data/tf_meta_graphs/<variant>/ (model.ckpt.*, expected.json).
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "train", "data", "tf_meta_graphs")

X = (np.arange(24, dtype=np.float32).reshape(6, 4) - 11.0) / 7.0
Y = np.sin(np.arange(18, dtype=np.float32).reshape(6, 3))


def _build(tf, resource: bool, optimizer: str):
    """The MLP, its loss and train_op, with constant initial values (no random ops)."""
    rng = np.random.RandomState(7)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    w1 = tf.Variable(rng.randn(4, 5).astype(np.float32), name="w1", use_resource=resource)
    b1 = tf.Variable(np.zeros(5, np.float32), name="b1", use_resource=resource)
    w2 = tf.Variable(rng.randn(5, 3).astype(np.float32), name="w2", use_resource=resource)
    b2 = tf.Variable(np.full(3, 0.1, np.float32), name="b2", use_resource=resource)
    step = tf.Variable(0, trainable=False, name="step", use_resource=resource)
    hidden = tf.nn.relu(tf.matmul(x, w1) + b1, name="hidden")
    logits = tf.add(tf.matmul(hidden, w2), b2, name="logits")
    loss = tf.reduce_mean(tf.square(logits - y), name="loss")
    tf.add_to_collection(tf.GraphKeys.LOSSES, loss)
    opt = {"sgd": lambda: tf.train.GradientDescentOptimizer(0.05),
           "momentum": lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
           "adam": lambda: tf.train.AdamOptimizer(0.01)}[optimizer]()
    train_op = opt.minimize(loss, global_step=step, name="train")
    tf.add_to_collection("outputs", logits)
    return train_op


def _names(items):
    return [getattr(i, "name", str(i)) for i in items]


def _record(tf, variant: str, resource: bool, optimizer: str) -> None:
    out = os.path.join(OUT, variant)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    prefix = os.path.join(out, "model.ckpt")
    graph = tf.Graph()
    with graph.as_default():
        train_op = _build(tf, resource, optimizer)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train_op, {"x:0": X, "y:0": Y})
            saver.save(sess, prefix, write_state=False)  # no "checkpoint" file: abs paths
    expected = {}
    with tf.Graph().as_default() as g2:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            expected["logits"] = sess.run("logits:0", {"x:0": X}).tolist()
            expected["variables_restored"] = {
                v.op.name: sess.run(v).tolist() for v in tf.global_variables()}
            train = tf.get_collection(tf.GraphKeys.TRAIN_OP)[0]
            for _ in range(2):
                sess.run(train, {"x:0": X, "y:0": Y})
            expected["variables_trained"] = {
                v.op.name: sess.run(v).tolist() for v in tf.global_variables()}
            expected["loss_after"] = float(sess.run("loss:0", {"x:0": X, "y:0": Y}))
        expected["collections"] = {
            key: _names(g2.get_collection(key)) for key in g2.get_all_collection_keys()}
        expected["op_types"] = sorted({op.type for op in g2.get_operations()})
    expected["x"], expected["y"] = X.tolist(), Y.tolist()
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
    print(variant, sorted(os.listdir(out)))


def main() -> None:
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    tf.disable_v2_behavior()
    _record(tf, "ref", False, "sgd")
    _record(tf, "resource", True, "sgd")
    _record(tf, "momentum_ref", False, "momentum")
    _record(tf, "adam_resource", True, "adam")


if __name__ == "__main__":
    main()

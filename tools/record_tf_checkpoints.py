"""Write small TensorFlow V2 checkpoints (tensor bundles) for tests/train/test_tf_checkpoints.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the fixtures change:

    python tools/record_tf_checkpoints.py

It writes, under tests/train/data/tf_checkpoints/:
- basic/model.*   one shard: float32, float64, int32, int64, bool, a string tensor with
  non-ASCII bytes, a scalar, an empty tensor and nested scopes ("layer/dense/kernel");
  basic/checkpoint is TF's text index naming it;
- adam/model-*    a variable trained one step by AdamOptimizer (its "w/Adam" slots and
  "beta1_power"), written by a Saver with a global_step;
- sharded/model.* a Saver(sharded=True) checkpoint of variables on two devices, so the
  bundle has two data shards;
- expected.npz    each checkpoint's values as TF reads them back ("<ckpt>/<name>") and
  tf.train.list_variables of each ("list/<ckpt>/names", "list/<ckpt>/shapes" as a
  flat int array "list/<ckpt>/ranks" splits), all without pickling (strings as bytes
  arrays of fixed width).
"""

from __future__ import annotations

import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "train", "data", "tf_checkpoints")


def _basic(tf):
    """Variables of every dtype the tests cover, in nested scopes."""
    tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3) / 7, name="f32")
    tf.Variable(np.array([1.5, -2.25, np.pi]), name="f64")
    tf.Variable(np.array([[1, -2], [3, 2**31 - 1]], np.int32), name="i32")
    tf.Variable(np.array([2**40, -5], np.int64), name="i64")
    tf.Variable(np.array([True, False, True]), name="flag")
    tf.Variable(np.array([b"abc", "h\u00e9llo \u2603".encode(), b"", b"\xff\x00z"]),
                name="words")
    tf.Variable(np.float32(3.25), name="scalar")
    tf.Variable(np.zeros((0, 4), np.float32), name="empty")
    with tf.variable_scope("layer"):
        with tf.variable_scope("dense"):
            tf.get_variable("kernel", initializer=np.full((3, 2), 0.5, np.float32))
            tf.get_variable("bias", initializer=np.array([0.1, -0.1], np.float32))


def _adam(tf):
    """One AdamOptimizer step on a tiny least-squares problem (creates its slots)."""
    w = tf.Variable(np.array([[1.0], [2.0]], np.float32), name="w")
    x = tf.constant(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w) - 1.0))
    step = tf.train.get_or_create_global_step()
    return tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)


def _sharded(tf):
    """Variables on two devices: a sharded Saver writes one data shard per device."""
    with tf.device("/cpu:0"):
        tf.Variable(np.arange(4, dtype=np.float32), name="a")
    with tf.device("/device:CPU:1"):
        tf.Variable(np.arange(3, dtype=np.int64) * 10, name="b")


def _save(tf, name: str, build, sharded=False, step=None) -> str:
    """Build a graph with `build`, run it once, save; returns the checkpoint prefix."""
    directory = os.path.join(OUT, name)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    graph = tf.Graph()
    with graph.as_default():
        train = build(tf)
        config = tf.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            if train is not None:
                sess.run(train)
            saver = tf.train.Saver(sharded=sharded)
            # a relative prefix, so the `checkpoint` file TF writes holds relative paths
            cwd = os.getcwd()
            os.chdir(directory)
            try:
                prefix = saver.save(sess, "model", global_step=step, write_meta_graph=False)
            finally:
                os.chdir(cwd)
            return os.path.join(directory, prefix)


def _record(tf, arrays: dict, name: str, prefix: str) -> None:
    """TF's own reading of the checkpoint at `prefix` into `arrays`."""
    listed = tf.train.list_variables(prefix)
    arrays[f"list/{name}/names"] = np.array([n.encode() for n, _ in listed])
    arrays[f"list/{name}/ranks"] = np.array([len(s) for _, s in listed], np.int64)
    arrays[f"list/{name}/shapes"] = np.array([d for _, s in listed for d in s], np.int64)
    reader = tf.train.load_checkpoint(prefix)
    for var, _ in listed:
        value = np.asarray(reader.get_tensor(var))
        if value.dtype == object:  # fixed-width bytes (none ends in NUL: width-safe)
            value = np.array(value.tolist(), dtype=bytes)
        arrays[f"{name}/{var}"] = value


def main() -> None:
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    arrays: dict = {}
    for name, build, kwargs in [("basic", _basic, {}), ("adam", _adam, {"step": 1}),
                                ("sharded", _sharded, {"sharded": True})]:
        prefix = _save(tf, name, build, **kwargs)
        _record(tf, arrays, name, prefix)
        arrays[f"prefix/{name}"] = np.array(os.path.basename(prefix).encode())
        print(name, prefix, sorted(os.listdir(os.path.dirname(prefix))))
    np.savez(os.path.join(OUT, "expected.npz"), **arrays)


if __name__ == "__main__":
    main()

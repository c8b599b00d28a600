"""The init_from_checkpoint / warm_start scenarios that tools/record_tf_warm_start.py runs
under TensorFlow (tf.compat.v1) and tests/train/test_warm_start.py runs under onegraph.

Each scenario builds variables with TF1's names (`tf` is tensorflow.compat.v1 or
onegraph) and calls init_from_checkpoint or warm_start on the "basic" TF checkpoint of
tests/train/data/tf_checkpoints (f32 (2, 3), f64 (3,), i32 (2, 2), i64 (2,), flag (3,),
scalar (), layer/dense/kernel (3, 2), layer/dense/bias (2,), ...). `outcome` runs one
and returns what the recording stores: {"error": True} when the call or the
initializer raised, else each global variable's value after
global_variables_initializer, by name.
"""

from __future__ import annotations

import numpy as np


def _zeros(tf, name, shape, dtype="float32", trainable=True):
    return tf.get_variable(name, shape=list(shape), dtype=getattr(tf, dtype),
                           initializer=tf.zeros_initializer(), trainable=trainable)


def scope_to_scope(tf, ckpt):
    with tf.variable_scope("net"):
        with tf.variable_scope("dense"):
            _zeros(tf, "kernel", (3, 2))
            _zeros(tf, "bias", (2,))
    tf.train.init_from_checkpoint(ckpt, {"layer/": "net/"})


def inner_scope(tf, ckpt):
    with tf.variable_scope("net"):
        with tf.variable_scope("dense"):
            _zeros(tf, "kernel", (3, 2))
            _zeros(tf, "bias", (2,))
    _zeros(tf, "untouched", (2,))
    tf.train.init_from_checkpoint(ckpt, {"layer/dense/": "net/dense/"})


def name_to_name(tf, ckpt):
    _zeros(tf, "a", (2, 3))
    _zeros(tf, "b", (2,), "int64")
    tf.train.init_from_checkpoint(ckpt, [("f32", "a"), ("i64", "b")])


def name_to_variable(tf, ckpt):
    v = tf.Variable(np.zeros(3), name="v")  # not in the get_variable store
    tf.train.init_from_checkpoint(ckpt, {"f64": v})


def root_to_scope(tf, ckpt):
    with tf.variable_scope("top"):
        _zeros(tf, "f32", (2, 3))
        _zeros(tf, "scalar", ())
    tf.train.init_from_checkpoint(ckpt, {"/": "top/"})


def scope_to_root(tf, ckpt):
    _zeros(tf, "kernel", (3, 2))
    _zeros(tf, "bias", (2,))
    tf.train.init_from_checkpoint(ckpt, {"layer/dense/": "/"})


def ints_and_bools(tf, ckpt):
    _zeros(tf, "i", (2, 2), "int32")
    _zeros(tf, "fl", (3,), "bool")
    tf.train.init_from_checkpoint(ckpt, {"i32": "i", "flag": "fl"})


def missing_tensor(tf, ckpt):
    _zeros(tf, "a", (2, 3))
    tf.train.init_from_checkpoint(ckpt, {"nope": "a"})


def shape_mismatch(tf, ckpt):
    _zeros(tf, "b", (3, 2))
    tf.train.init_from_checkpoint(ckpt, {"f32": "b"})


def scope_variable_missing(tf, ckpt):
    with tf.variable_scope("net"):
        with tf.variable_scope("dense"):
            _zeros(tf, "kernel", (3, 2))
            _zeros(tf, "extra", (2,))
    tf.train.init_from_checkpoint(ckpt, {"layer/": "net/"})


def scope_to_name(tf, ckpt):
    with tf.variable_scope("net"):
        _zeros(tf, "kernel", (3, 2))
    tf.train.init_from_checkpoint(ckpt, {"layer/dense/kernel": "net/"})


def dtype_mismatch(tf, ckpt):
    _zeros(tf, "d", (3,))  # float32; the checkpoint's f64 is float64
    tf.train.init_from_checkpoint(ckpt, {"f64": "d"})


def _warm_graph(tf):
    _zeros(tf, "f32", (2, 3))
    with tf.variable_scope("layer"):
        with tf.variable_scope("dense"):
            _zeros(tf, "kernel", (3, 2))
            _zeros(tf, "bias", (2,))
    _zeros(tf, "scalar", (), trainable=False)


def warm_start_default(tf, ckpt):
    _warm_graph(tf)
    tf.train.warm_start(ckpt)


def warm_start_regex(tf, ckpt):
    _warm_graph(tf)
    tf.train.warm_start(ckpt, "layer/")


def warm_start_global_scopes(tf, ckpt):
    _warm_graph(tf)
    tf.train.warm_start(ckpt, ["scal", "f3"])


def warm_start_renamed(tf, ckpt):
    with tf.variable_scope("net"):
        _zeros(tf, "k", (3, 2))
    _zeros(tf, "f32", (2, 3))
    tf.train.warm_start(ckpt, ".*", var_name_to_prev_var_name={"net/k": "layer/dense/kernel"})


def warm_start_unused_rename(tf, ckpt):
    _warm_graph(tf)
    tf.train.warm_start(ckpt, "layer/", var_name_to_prev_var_name={"nothing": "f32"})


def warm_start_variables(tf, ckpt):
    _warm_graph(tf)
    scalar = [v for v in tf.global_variables() if v.name.startswith("scalar")]
    tf.train.warm_start(ckpt, scalar)


def warm_start_mixed_list(tf, ckpt):
    _warm_graph(tf)
    tf.train.warm_start(ckpt, ["f32", tf.global_variables()[0]])


def warm_start_none(tf, ckpt):
    _warm_graph(tf)
    tf.train.warm_start(ckpt, None)


def warm_start_missing(tf, ckpt):
    _warm_graph(tf)
    _zeros(tf, "fresh", (4,))
    tf.train.warm_start(ckpt)


SCENARIOS = [scope_to_scope, inner_scope, name_to_name, name_to_variable, root_to_scope,
             scope_to_root, ints_and_bools, missing_tensor, shape_mismatch,
             scope_variable_missing, scope_to_name, dtype_mismatch, warm_start_default,
             warm_start_regex, warm_start_global_scopes, warm_start_renamed,
             warm_start_unused_rename, warm_start_variables, warm_start_mixed_list,
             warm_start_none, warm_start_missing]


def _plain(name: str) -> str:
    """A variable name without TF's ":0"."""
    return name[:-2] if name.endswith(":0") else name


def outcome(tf, scenario, ckpt) -> dict:
    """Run `scenario` in a fresh graph of `tf` (see the module doc)."""
    graph = tf.Graph()
    with graph.as_default():
        try:
            scenario(tf, ckpt)
            init = tf.global_variables_initializer()
            with tf.Session() as sess:
                sess.run(init)
                values = {_plain(v.name): np.asarray(sess.run(v)).tolist()
                          for v in tf.global_variables()}
        except Exception as e:  # noqa: BLE001 - the recording stores whether it raised
            return {"error": True, "type": type(e).__name__}
    return {"values": values}

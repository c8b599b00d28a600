"""Record TF2-style frozen GraphDefs (tf.function concrete functions, frozen with
convert_variables_to_constants_v2) and TF's outputs, for og.import_graph_def's tests of
the function library, If/While/Case and PartitionedCall.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_graph_def_functions.py
TF2 (eager) is needed here: get_concrete_function and convert_variables_to_constants_v2
work on tf.function's graphs, not on tf.compat.v1 sessions.
Writes tests/train/data/tf_graph_defs/fn_<name>.pb (the GraphDef bytes) and
fn_<name>.npz: the feed and fetch names as 1-D unicode arrays `feeds` and `fetches`,
`runs` (how many input sets), and per run k the inputs as in_<k>_<i> and TF's outputs
as out_<k>_<i> (numeric/unicode only, so no pickle is needed).
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import (
    convert_variables_to_constants_v2)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "train",
                   "data", "tf_graph_defs")
RNG = np.random.default_rng(57)


def _w(*shape, scale=0.5):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _all_ops(gd) -> set:
    """Op types of the graph and of every library function."""
    kinds = {n.op for n in gd.node}
    for f in gd.library.function:
        kinds |= {n.op for n in f.node_def}
    return kinds


def _save(name, fn, specs, runs, top=(), anywhere=(), absent=(), lower=False,
          freeze=True):
    """Freeze fn's concrete function, run the frozen graph's function on each run's
    inputs, check the ops and store all. `top`: ops the top-level graph must hold;
    `anywhere`: ops the graph or its library must hold; `absent`: ops nowhere.
    freeze=False stores the concrete function's own graph: freezing inlines function
    calls and lowers Case even with lower_control_flow=False."""
    concrete = fn.get_concrete_function(*specs)
    frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=lower) \
        if freeze else concrete
    gd = frozen.graph.as_graph_def()
    kinds = _all_ops(gd)
    top_kinds = {n.op for n in gd.node}
    assert set(top) <= top_kinds, (name, sorted(top_kinds))
    assert set(anywhere) <= kinds, (name, sorted(kinds))
    assert not set(absent) & kinds, (name, sorted(kinds))
    feeds = [t.name for t in frozen.inputs]
    fetches = [t.name for t in frozen.outputs]
    outs = []
    for ins in runs:
        got = frozen(*[tf.constant(v) for v in ins])
        got = got if isinstance(got, (list, tuple)) else [got]
        outs.append([np.asarray(v) for v in got])
        # the original (unfrozen) function agrees: freezing kept the meaning
        ref = fn(*[tf.constant(v) for v in ins])
        ref = ref if isinstance(ref, (list, tuple)) else [ref]
        for a, b in zip(outs[-1], ref):
            np.testing.assert_allclose(a, np.asarray(b), rtol=1e-6)
    data = gd.SerializeToString()
    with open(os.path.join(OUT, f"fn_{name}.pb"), "wb") as f:
        f.write(data)
    arrays = {"feeds": np.array(feeds), "fetches": np.array(fetches),
              "runs": np.array(len(runs))}
    for k, (ins, got) in enumerate(zip(runs, outs)):
        for i, v in enumerate(ins):
            arrays[f"in_{k}_{i}"] = np.asarray(v)
        for i, v in enumerate(got):
            arrays[f"out_{k}_{i}"] = np.asarray(v)
    np.savez(os.path.join(OUT, f"fn_{name}.npz"), **arrays)
    print(f"fn_{name}", len(data), "bytes,", len(gd.node), "nodes,",
          len(gd.library.function), "functions,", feeds, fetches, sorted(kinds))


def _spec(shape, dtype=tf.float32, name=None):
    return tf.TensorSpec(shape, dtype, name=name)


def cond():
    """tf.cond on a computed predicate: If with two results, a branch reading a
    constant only."""
    @tf.function
    def f(x, p):
        return tf.cond(p, lambda: (x * 2.0 + 1.0, tf.reduce_sum(x)),
                       lambda: (x - tf.constant([1., 2., 3.]) * 0.5, tf.constant(-1.0)))
    xv = _w(3)
    runs = [(xv, np.array(True)), (xv, np.array(False)), (_w(3), np.array(True))]
    _save("cond", f, [_spec([3], name="x"), _spec([], tf.bool, name="p")], runs,
          top={"StatelessIf"}, absent={"Switch", "Merge"})


def while_capture():
    """Power iteration for n steps: A captured by the loop body (a While input)."""
    @tf.function
    def f(a, n):
        def body(i, v, s):
            w = tf.matmul(a, v)
            w = w / tf.norm(w)
            return i + 1, w, s + w
        return tf.while_loop(lambda i, v, s: i < n, body,
                             [tf.constant(0), tf.ones([3, 1]), tf.zeros([3, 1])])
    av = _w(3, 3) + np.eye(3, dtype=np.float32) * 2
    runs = [(av, np.array(k, np.int32)) for k in (0, 3, 7)]
    _save("while_capture", f, [_spec([3, 3], name="A"), _spec([], tf.int32, name="n")],
          runs, top={"StatelessWhile"}, absent={"Enter", "Merge"})


def switch_case():
    """tf.switch_case over three branches (an out-of-range index runs the last)."""
    @tf.function
    def f(x, k):
        return tf.switch_case(k, [lambda: x * 3.0, lambda: tf.sin(x) + x,
                                  lambda: x - tf.reduce_max(x)])
    xv = _w(4)
    runs = [(xv, np.array(k, np.int32)) for k in (0, 1, 2, 5)]
    _save("switch_case", f, [_spec([4], name="x"), _spec([], tf.int32, name="k")], runs,
          top={"StatelessCase"}, absent={"Switch"}, freeze=False)


def nested_call():
    """A tf.function called from a tf.function (PartitionedCall), twice, itself
    calling another."""
    @tf.function
    def inner(u):
        return tf.tanh(u) * 2.0

    @tf.function
    def middle(u, v):
        return inner(u) + v, u * v

    @tf.function
    def f(x, y):
        a, b = middle(x, y)
        c, _ = middle(a, b)
        return c + 1.0, b
    runs = [(_w(2, 3), _w(2, 3)), (_w(2, 3), _w(2, 3))]
    _save("nested_call", f, [_spec([2, 3], name="x"), _spec([2, 3], name="y")], runs,
          top={"PartitionedCall"}, anywhere={"Tanh"}, freeze=False)


def cond_in_while():
    """An If in a While body: sum x[i] doubled when positive, negated otherwise."""
    @tf.function
    def f(x):
        n = tf.shape(x)[0]

        def body(i, s):
            xi = tf.gather(x, i)    # og's importer takes constant StridedSlice bounds
            s = s + tf.cond(xi > 0, lambda: xi * 2.0, lambda: -xi)
            return i + 1, s
        return tf.while_loop(lambda i, s: i < n, body, [tf.constant(0), tf.constant(0.0)])
    runs = [(_w(5),), (_w(5),), (np.array([1., -2., 3., -4., 0.5], np.float32),)]
    _save("cond_in_while", f, [_spec([5], name="x")], runs, top={"StatelessWhile"},
          anywhere={"StatelessIf"})


def frozen_rnn():
    """A small RNN: h = tanh(x_t W + h U + b) over the time steps in a While, W/U/b
    tf.Variables frozen into constants."""
    w = tf.Variable(_w(3, 4), name="W")
    u = tf.Variable(_w(4, 4), name="U")
    b = tf.Variable(_w(4), name="b")

    @tf.function
    def f(xs):
        steps = tf.shape(xs)[0]

        def body(t, h):
            x_t = tf.gather(xs, t)   # og's importer takes constant StridedSlice bounds
            return t + 1, tf.tanh(tf.matmul(x_t, w) + tf.matmul(h, u) + b)
        _, h = tf.while_loop(lambda t, h: t < steps, body,
                             [tf.constant(0), tf.zeros([2, 4])])
        return h
    runs = [(_w(k, 2, 3),) for k in (1, 3, 6)]
    _save("frozen_rnn", f, [_spec([None, 2, 3], name="xs")], runs, top={"While"},
          absent={"VarHandleOp", "ReadVariableOp"})


def lowered_cond_while():
    """The default freezing (lower_control_flow=True): Switch/Merge, no If/While."""
    @tf.function
    def f(x, n):
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x + 1.0)
        _, z = tf.while_loop(lambda i, z: i < n, lambda i, z: (i + 1, z * 0.5 + y),
                             [tf.constant(0), y])
        return z
    xv = _w(3)
    runs = [(xv, np.array(2, np.int32)), (-np.abs(xv), np.array(4, np.int32))]
    _save("lowered", f, [_spec([3], name="x"), _spec([], tf.int32, name="n")], runs,
          lower=True, top={"Switch", "Merge", "Enter", "Exit"},
          absent={"If", "StatelessIf", "While", "StatelessWhile"})


def main():
    os.makedirs(OUT, exist_ok=True)
    cond()
    while_capture()
    switch_case()
    nested_call()
    cond_in_while()
    frozen_rnn()
    lowered_cond_while()


if __name__ == "__main__":
    main()

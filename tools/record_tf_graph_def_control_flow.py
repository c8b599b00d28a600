"""Record TF1 frozen GraphDefs with control flow v1 (tf.cond, tf.while_loop) and TF's
outputs, for og.import_graph_def's control-flow tests.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_graph_def_control_flow.py
Writes tests/train/data/tf_graph_defs/cf_<name>.pb (the GraphDef bytes) and
cf_<name>.npz: the feed and fetch names as 1-D unicode arrays `feeds` and `fetches`,
`runs` (how many input sets), and per run k the inputs as in_<k>_<i> and TF's outputs
as out_<k>_<i> (numeric/unicode only, so no pickle is needed).
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
tf.disable_control_flow_v2()     # Switch/Merge/Enter/Exit, not If/While

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "train",
                   "data", "tf_graph_defs")
RNG = np.random.default_rng(53)


def _w(*shape, scale=0.5):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _save(name, graph, runs, fetches, loops, variables=False):
    """Freeze `graph`, run the fetches on each feed dict of `runs` and store all."""
    with tf.Session(graph=graph) as sess:
        if variables:
            sess.run(tf.global_variables_initializer())
        outs = [sess.run(fetches, {graph.get_tensor_by_name(k): v for k, v in feeds.items()})
                for feeds in runs]
        gd = graph.as_graph_def()
        if variables:
            nodes = sorted({f.split(":")[0] for f in fetches})
            gd = tf.graph_util.convert_variables_to_constants(sess, gd, nodes)
    kinds = {n.op for n in gd.node}
    # the point of these graphs: control flow v1, not functional If/While
    assert {"Switch", "Merge"} <= kinds, (name, sorted(kinds))
    assert not kinds & {"If", "StatelessIf", "While", "StatelessWhile"}, name
    if loops:
        assert {"Enter", "Exit", "NextIteration", "LoopCond"} <= kinds, (name, sorted(kinds))
    data = gd.SerializeToString()
    with open(os.path.join(OUT, f"cf_{name}.pb"), "wb") as f:
        f.write(data)
    arrays = {"feeds": np.array(list(runs[0])), "fetches": np.array(list(fetches)),
              "runs": np.array(len(runs))}
    for k, (feeds, got) in enumerate(zip(runs, outs)):
        for i, v in enumerate(feeds.values()):
            arrays[f"in_{k}_{i}"] = np.asarray(v)
        for i, v in enumerate(got):
            arrays[f"out_{k}_{i}"] = np.asarray(v)
    np.savez(os.path.join(OUT, f"cf_{name}.npz"), **arrays)
    print(f"cf_{name}", len(data), "bytes,", len(gd.node), "nodes,", sorted(kinds))


def cond():
    """tf.cond on a placeholder predicate; the false branch has a constant-only op."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        p = tf.placeholder(tf.bool, [], name="p")
        y = tf.cond(p, lambda: x * 2.0 + 1.0, lambda: x - tf.constant([1., 2., 3.]) * 0.5)
        tf.identity(y, name="out")
    xv = _w(3)
    runs = [{"x:0": xv, "p:0": np.array(True)}, {"x:0": xv, "p:0": np.array(False)}]
    _save("cond", g, runs, ["out:0"], loops=False)


def nested_cond():
    """A cond in each branch of a cond, on predicates computed from the input; two
    results per cond."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        a, b = x[0], x[1]

        def inner_t():
            return tf.cond(b > 0, lambda: (a + b, a * b), lambda: (a - b, tf.constant(7.0)))

        def inner_f():
            return tf.cond(b > a, lambda: (b * 3.0, a), lambda: (tf.exp(a), b - 1.0))

        u, v = tf.cond(a > 0, inner_t, inner_f)
        tf.identity(u, name="u")
        tf.identity(v, name="v")
    runs = [{"x:0": np.array(v, np.float32)}
            for v in ([1.5, 2.0], [1.5, -2.0], [-1.0, 0.5], [-0.5, -2.0])]
    _save("nested_cond", g, runs, ["u:0", "v:0"], loops=False)


def while_capture():
    """Power iteration for n steps: A is read inside the loop (a constant Enter); also
    a cumulative sum of the iterates."""
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [3, 3], name="A")
        n = tf.placeholder(tf.int32, [], name="n")
        v0 = tf.ones([3, 1])

        def body(i, v, s):
            w = tf.matmul(a, v)
            w = w / tf.norm(w)
            return i + 1, w, s + w

        i, v, s = tf.while_loop(lambda i, v, s: i < n, body,
                                [tf.constant(0), v0, tf.zeros([3, 1])])
        tf.identity(i, name="i")
        tf.identity(v, name="v")
        tf.identity(s, name="s")
    av = _w(3, 3) + np.eye(3, dtype=np.float32) * 2
    runs = [{"A:0": av, "n:0": np.array(k, np.int32)} for k in (0, 3, 7)]
    _save("while_capture", g, runs, ["i:0", "v:0", "s:0"], loops=True)


def nested_while():
    """for i < n: for j < i: s += j * x (the inner loop reads x and i from outside)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        n = tf.placeholder(tf.int32, [], name="n")

        def outer(i, s):
            def inner(j, t):
                return j + 1, t + tf.cast(j, tf.float32) * x
            _, t = tf.while_loop(lambda j, t: j < i, inner, [tf.constant(0), s])
            return i + 1, t + 1.0

        i, s = tf.while_loop(lambda i, s: i < n, outer, [tf.constant(0), tf.zeros([2])])
        tf.identity(s, name="s")
        tf.identity(i, name="i")
    runs = [{"x:0": np.array([1.0, -0.5], np.float32), "n:0": np.array(k, np.int32)}
            for k in (1, 4)]
    _save("nested_while", g, runs, ["s:0", "i:0"], loops=True)


def while_max_iter():
    """Doubling until a limit, at most 4 times (maximum_iterations adds TF's counter)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        limit = tf.placeholder(tf.float32, [], name="limit")
        y = tf.while_loop(lambda s: s < limit, lambda s: s * 2.0, [x],
                          maximum_iterations=4)
        tf.identity(y, name="out")
    runs = [{"x:0": np.array(1.0, np.float32), "limit:0": np.array(5.0, np.float32)},
            {"x:0": np.array(1.0, np.float32), "limit:0": np.array(100.0, np.float32)},
            {"x:0": np.array(9.0, np.float32), "limit:0": np.array(5.0, np.float32)}]
    _save("while_max_iter", g, runs, ["out:0"], loops=True)


def cond_in_while():
    """A tf.cond in a loop body on the iteration's parity; a branch reads an outside
    tensor (entered, then switched)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        n = tf.placeholder(tf.int32, [], name="n")
        k = tf.constant(np.array([0.5, 2.0], np.float32))

        def body(i, v):
            v = tf.cond(tf.equal(i % 2, 0), lambda: v + x, lambda: v * k - 1.0)
            return i + 1, v

        _, v = tf.while_loop(lambda i, v: i < n, body, [tf.constant(0), tf.zeros([2])])
        tf.identity(v, name="out")
    runs = [{"x:0": np.array([1.0, 3.0], np.float32), "n:0": np.array(k, np.int32)}
            for k in (1, 2, 5)]
    _save("cond_in_while", g, runs, ["out:0"], loops=True)


def frozen_rnn():
    """A small recurrent cell h = tanh(W h + U x_t + b) over a loop, with variables
    frozen by convert_variables_to_constants, and a cond choosing the readout."""
    g = tf.Graph()
    with g.as_default():
        xs = tf.placeholder(tf.float32, [5, 3], name="xs")
        n = tf.placeholder(tf.int32, [], name="n")
        w = tf.Variable(_w(4, 4), name="W")
        u = tf.Variable(_w(3, 4), name="U")
        b = tf.Variable(_w(4), name="b")
        r = tf.Variable(_w(4, 2), name="R")

        def body(t, h):
            x_t = tf.reshape(tf.gather(xs, t), [1, 3])
            return t + 1, tf.tanh(tf.matmul(h, w) + tf.matmul(x_t, u) + b)

        _, h = tf.while_loop(lambda t, h: t < n, body, [tf.constant(0), tf.zeros([1, 4])])
        out = tf.cond(tf.reduce_sum(h) > 0, lambda: tf.matmul(h, r),
                      lambda: -tf.matmul(h, r) * 2.0)
        tf.identity(out, name="out")
    xv = _w(5, 3, scale=1.0)
    runs = [{"xs:0": xv, "n:0": np.array(k, np.int32)} for k in (0, 2, 5)]
    _save("frozen_rnn", g, runs, ["out:0"], loops=True, variables=True)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    cond()
    nested_cond()
    while_capture()
    nested_while()
    while_max_iter()
    cond_in_while()
    frozen_rnn()

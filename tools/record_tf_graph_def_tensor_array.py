"""Record TF1 frozen GraphDefs using TensorArrayV3 inside control flow v1 loops
(tf.nn.dynamic_rnn, tf.map_fn, tf.scan, tf.foldl/foldr, hand-written while loops) and
TF's outputs, for og.import_graph_def's TensorArray tests.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_graph_def_tensor_array.py
Writes tests/train/data/tf_graph_defs/ta_<name>.pb (the GraphDef bytes) and
ta_<name>.npz in the layout of record_tf_graph_def_control_flow.py: `feeds`, `fetches`,
`runs`, in_<k>_<i>, out_<k>_<i>; a run where TF raised stores no outputs but its
error class and message as err_<k> (a 2-element unicode array).
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow.compat.v1 as tf
# TF1's cells (tf.nn.rnn_cell needs Keras 2, this venv has Keras 3)
from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl as cells

tf.disable_v2_behavior()
tf.disable_control_flow_v2()     # Switch/Merge/Enter/Exit and TensorArrayV3, not While

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "train",
                   "data", "tf_graph_defs")
RNG = np.random.default_rng(53)


def _w(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _run(sess, graph, fetches, feeds):
    try:
        return sess.run(fetches, {graph.get_tensor_by_name(k): v
                                  for k, v in feeds.items()}), None
    except tf.errors.OpError as e:
        # TF's own sentence, without the traceback of where the node was defined
        lines = [s for s in e.message.split("\n") if s.strip() and not s.startswith(
            (" ", "Detected", "Graph", "Node:", "Original", "\t"))]
        return None, (type(e).__name__, (lines or [e.message])[0].strip()[:300])


def _save(name, graph, runs, fetches, variables=False):
    """Freeze `graph`, run the fetches on each feed dict of `runs` and store all."""
    with tf.Session(graph=graph) as sess:
        if variables:
            sess.run(tf.global_variables_initializer())
        outs = [_run(sess, graph, fetches, feeds) for feeds in runs]
        gd = graph.as_graph_def()
        if variables:
            nodes = sorted({f.split(":")[0] for f in fetches})
            gd = tf.graph_util.convert_variables_to_constants(sess, gd, nodes)
    kinds = {n.op for n in gd.node}
    # the point of these graphs: TensorArrayV3 in control flow v1, no While/TensorList
    assert "TensorArrayV3" in kinds, (name, sorted(kinds))
    assert not any(k.startswith("TensorList") or k in ("If", "StatelessIf", "While",
                                                       "StatelessWhile") for k in kinds), name
    data = gd.SerializeToString()
    with open(os.path.join(OUT, f"ta_{name}.pb"), "wb") as f:
        f.write(data)
    arrays = {"feeds": np.array(list(runs[0])), "fetches": np.array(list(fetches)),
              "runs": np.array(len(runs))}
    for k, (feeds, (got, err)) in enumerate(zip(runs, outs)):
        for i, v in enumerate(feeds.values()):
            arrays[f"in_{k}_{i}"] = np.asarray(v)
        if err is not None:
            arrays[f"err_{k}"] = np.array(err)
            continue
        for i, v in enumerate(got):
            arrays[f"out_{k}_{i}"] = np.asarray(v)
    np.savez(os.path.join(OUT, f"ta_{name}.npz"), **arrays)
    tas = sorted(k for k in kinds if k.startswith("TensorArray"))
    print(f"ta_{name}", len(data), "bytes,", len(gd.node), "nodes,", tas,
          [e for _, e in outs if e])


def _rnn(name, make_cell, seq_len, state_names):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, None, 3], name="x")
        lengths = tf.placeholder(tf.int32, [None], name="lengths") if seq_len else None
        with tf.variable_scope("rnn", initializer=tf.random_normal_initializer(0, 0.5,
                                                                               seed=7)):
            out, state = tf.nn.dynamic_rnn(make_cell(), x, sequence_length=lengths,
                                           dtype=tf.float32)
        tf.identity(out, name="out")
        states = list(state) if isinstance(state, tuple) else [state]
        for s, n in zip(states, state_names):
            tf.identity(s, name=n)
    runs = []
    for batch, steps in ((2, 4), (3, 1), (1, 6)):
        feeds = {"x:0": _w(batch, steps, 3)}
        if seq_len:
            feeds["lengths:0"] = RNG.integers(0, steps + 1, size=batch).astype(np.int32)
        runs.append(feeds)
    _save(name, g, runs, ["out:0"] + [f"{n}:0" for n in state_names], variables=True)


def rnn_graphs():
    _rnn("rnn_basic", lambda: cells.BasicRNNCell(4), False, ["h"])
    _rnn("rnn_basic_seqlen", lambda: cells.BasicRNNCell(4), True, ["h"])
    _rnn("rnn_lstm", lambda: cells.LSTMCell(4), False, ["c", "h"])
    _rnn("rnn_lstm_seqlen", lambda: cells.LSTMCell(5, num_proj=3), True, ["c", "h"])
    _rnn("rnn_gru", lambda: cells.GRUCell(4), False, ["h"])
    _rnn("rnn_gru_seqlen", lambda: cells.GRUCell(4), True, ["h"])


def map_fn():
    """map_fn with two outputs of different dtypes (unknown element shapes)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        a, b = tf.map_fn(lambda r: (r * 2.0 + tf.reduce_sum(r),
                                    tf.cast(tf.argmax(r), tf.int32)),
                         x, dtype=(tf.float32, tf.int32))
        tf.identity(a, name="a")
        tf.identity(b, name="b")
    runs = [{"x:0": _w(n, 3)} for n in (4, 1, 7)]
    _save("map_fn", g, runs, ["a:0", "b:0"])


def scan_fold():
    """tf.scan with an initializer, tf.scan without, tf.foldl and tf.foldr."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        s1 = tf.scan(lambda acc, r: acc * 0.5 + r, x, initializer=tf.ones([2]))
        s2 = tf.scan(lambda acc, r: acc + r, x)
        f1 = tf.foldl(lambda acc, r: acc * r + 1.0, x)
        f2 = tf.foldr(lambda acc, r: acc - r, x, initializer=tf.zeros([2]))
        for t, n in ((s1, "s1"), (s2, "s2"), (f1, "f1"), (f2, "f2")):
            tf.identity(t, name=n)
    runs = [{"x:0": _w(n, 2)} for n in (3, 1, 6)]
    _save("scan_fold", g, runs, ["s1:0", "s2:0", "f1:0", "f2:0"])


def while_dynamic():
    """A while loop writing a dynamic_size array of unknown element shape; stack,
    gather, concat and size read it after the loop."""
    g = tf.Graph()
    with g.as_default():
        n = tf.placeholder(tf.int32, [], name="n")
        v = tf.placeholder(tf.float32, [2], name="v")
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True,
                            clear_after_read=False)

        def body(i, t):
            return i + 1, t.write(i, v * tf.cast(i + 1, tf.float32))

        _, ta = tf.while_loop(lambda i, t: i < n, body, [tf.constant(0), ta])
        tf.identity(ta.stack(), name="stack")
        tf.identity(ta.gather([0, n - 1, 0]), name="gather")
        tf.identity(ta.concat(), name="concat")
        tf.identity(ta.size(), name="size")
    runs = [{"n:0": np.array(k, np.int32), "v:0": _w(2)} for k in (1, 3, 5)]
    _save("while_dynamic", g, runs, ["stack:0", "gather:0", "concat:0", "size:0"])


def while_fixed():
    """A fixed-size array with a known element shape filled by a loop in reverse
    order, read back in a second loop (a running maximum); outside loops, an int32
    array with a scatter, a write, a read of a row never written, stack and concat."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2, 2], name="x")
        n = tf.shape(x)[0]
        ta = tf.TensorArray(tf.float32, size=n, element_shape=[2, 2],
                            clear_after_read=False)

        def fill(i, t):
            return i + 1, t.write(n - 1 - i, tf.matmul(tf.gather(x, i), tf.gather(x, i)))

        _, ta = tf.while_loop(lambda i, t: i < n, fill, [tf.constant(0), ta])

        def scan(i, m):
            return i + 1, tf.maximum(m, ta.read(i))

        _, m = tf.while_loop(lambda i, m: i < n, scan,
                             [tf.constant(0), tf.fill([2, 2], -1e9)])
        tf.identity(ta.stack(), name="stack")
        tf.identity(m, name="max")
        tb = tf.TensorArray(tf.int32, size=4, clear_after_read=False)
        tb = tb.scatter([3, 1], tf.constant([[5], [6]]))
        tb = tb.write(0, tf.constant([7]))
        tf.identity(tb.read(1), name="read1")
        tf.identity(tb.stack()[0], name="row0")
        tf.identity(tb.concat(), name="concat")
    runs = [{"x:0": _w(k, 2, 2)} for k in (3, 1, 4)]
    _save("while_fixed", g, runs, ["stack:0", "max:0", "read1:0", "row0:0",
                                      "concat:0"])


def split():
    """TensorArraySplitV3 with equal lengths, then read and concat."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [6, 2], name="x")
        ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False).split(x, [2, 2, 2])
        tf.identity(ta.read(1), name="r1")
        tf.identity(ta.concat(), name="concat")
    runs = [{"x:0": _w(6, 2)}, {"x:0": _w(6, 2)}]
    _save("split", g, runs, ["r1:0", "concat:0"])


def bad_reads():
    """Reading a fixed-size array at a placeholder index: written (0), never written
    (1) and out of range (5): TF raises for the last two."""
    g = tf.Graph()
    with g.as_default():
        i = tf.placeholder(tf.int32, [], name="i")
        ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
        ta = ta.write(0, tf.constant([1.0, 2.0])).write(2, tf.constant([3.0, 4.0]))
        tf.identity(ta.read(i), name="out")
    runs = [{"i:0": np.array(k, np.int32)} for k in (0, 2, 1, 5)]
    _save("bad_reads", g, runs, ["out:0"])


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    rnn_graphs()
    map_fn()
    scan_fold()
    while_dynamic()
    while_fixed()
    split()
    bad_reads()

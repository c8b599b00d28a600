"""TF1 top-level names (tf.space_to_batch, tf.required_space_to_batch_paddings,
tf.matrix_square_root, tf.batch_scatter_update, tf.compat.dimension_at_index,
tf.get_seed, tf.grad_pass_through, tf.guarantee_const, tf.init_scope, tf.container,
tf.recompute_grad; TF's CPU build has no Conv2DBackprop*V2 kernels, so
tests/train/test_tf1_names.py checks og's v2 forms against the v1 ones) that
tools/record_tf_names.py runs under TensorFlow (tf.compat.v1) and
tests/train/test_tf1_names.py under onegraph: lists of values as nested lists."""

from __future__ import annotations

import numpy as np

R = np.random.default_rng(53)
X = R.standard_normal((2, 4, 6, 3)).astype(np.float32)
SPD = (lambda a: a @ a.T + 3 * np.eye(3))(R.standard_normal((3, 3))).astype(np.float64)


def _run(tf, fetches, init=False):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return [np.asarray(v).tolist() for v in sess.run(fetches)]


def space_to_batch(tf):
    x = tf.constant(X)
    return _run(tf, [tf.space_to_batch(x, [[0, 0], [1, 1]], block_size=2),
                     tf.space_to_batch(x, [[2, 2], [0, 2]], block_size=2)])


def required_paddings(tf):
    out = []
    for shape, block, base in (([5, 7], [2, 3], None), ([5, 7], [2, 3], [[1, 0], [0, 2]]),
                               ([4], [4], [[0, 3]]), ([3, 3, 3], [2, 2, 2], None)):
        p, c = tf.required_space_to_batch_paddings(shape, block, base)
        out.append(_run(tf, [p, c]))
    return out


def matrix_square_root(tf):
    return _run(tf, [tf.matrix_square_root(tf.constant(SPD))])


def batch_scatter_update(tf):
    v2 = tf.Variable(np.zeros((2, 4), np.float32))
    v3 = tf.Variable(np.zeros((2, 2, 3, 2), np.float32))
    u2 = tf.batch_scatter_update(v2, np.array([[1, 3], [0, 2]], np.int32),
                                 np.array([[1., 2.], [3., 4.]], np.float32))
    u3 = tf.batch_scatter_update(v3, np.array([[[2], [0]], [[1], [1]]], np.int64),
                                 np.arange(8, dtype=np.float32).reshape(2, 2, 1, 2))
    return _run(tf, [u2, u3], init=True)


def dimension_at_index(tf):
    return [tf.dimension_value(tf.dimension_at_index(s, i))
            for s, i in ((tf.TensorShape([2, None, 4]), 0), (tf.TensorShape([2, None, 4]), 1),
                         (tf.TensorShape([2, None, 4]), -1), (tf.TensorShape(None), 3))]


def get_seed(tf):
    out = [list(tf.get_seed(None)), list(tf.get_seed(7)), list(tf.get_seed(2 ** 40))]
    tf.set_random_seed(0)
    out.append(list(tf.get_seed(0)))
    tf.set_random_seed(12)
    out.append(list(tf.get_seed(9)))
    return out


def grad_pass_through(tf):
    x = tf.constant([0.4, 1.6, -2.5])
    y = tf.grad_pass_through(tf.round)(x)
    g = tf.gradients(tf.reduce_sum(y * y), x)[0]
    c = tf.guarantee_const(x * 2.0)
    with tf.container("box"):
        r = tf.recompute_grad(lambda t: t * t)(x)
    return _run(tf, [y, g, c, r])


def init_scope(tf):
    a = tf.constant(1.0)
    with tf.control_dependencies([a]):
        with tf.init_scope():
            b = tf.identity(tf.constant(2.0)) + 1.0
        c = tf.identity(tf.constant(3.0))
    return [len(b.op.control_inputs), len(b.op.inputs[0].op.control_inputs),
            len(c.op.control_inputs)]


CASES = ("space_to_batch", "required_paddings", "matrix_square_root",
         "batch_scatter_update", "dimension_at_index", "get_seed", "grad_pass_through",
         "init_scope")


def run(tf, name):
    """Build case `name` in a fresh graph of `tf` and return its observations."""
    with tf.Graph().as_default():
        return globals()[name](tf)

"""TF1's argument lists of tf.gradients and Optimizer.minimize / compute_gradients
(positional order, grad_loss, unconnected_gradients, aggregation_method,
gate_gradients, colocate_gradients_with_ops) that tools/record_tf_gradient_args.py runs
under TensorFlow (tf.compat.v1) and tests/train/test_gradient_args.py under onegraph.
Each case is a function of the module `tf` returning a list of observations (values as
lists, errors as [class name]).
"""

from __future__ import annotations

import numpy as np


def _value(v):
    return None if v is None else np.asarray(v).tolist()


def _err(fn):
    try:
        fn()
        return ["ok"]
    except Exception as e:  # noqa: BLE001 - the class is compared
        return [type(e).__name__]


def _model(tf):
    w = tf.Variable(np.array([1.0, -2.0, 3.0], np.float32), name="w")
    b = tf.Variable(np.array(0.5, np.float32), name="b")
    x = tf.constant(np.array([0.5, 1.0, -1.5], np.float32))
    loss = tf.reduce_sum(tf.square(w * x + b))
    return w, b, loss


def gradients_positional_and_knobs(tf):
    w, b, loss = _model(tf)
    unused = tf.Variable(np.zeros([2], np.float32), name="unused")
    g1 = tf.gradients(loss, [w, b], None, "named", True, True, tf.AggregationMethod.ADD_N)
    g2 = tf.gradients(loss, [w, unused], unconnected_gradients="zero")
    g3 = tf.gradients(loss, [w, unused],
                      unconnected_gradients=tf.UnconnectedGradients.NONE)
    g4 = tf.gradients(loss, [w], grad_ys=tf.constant(2.0),
                      aggregation_method=tf.AggregationMethod.EXPERIMENTAL_TREE)
    out = [g1[0].name.startswith("named/"), g3[1] is None]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out += [_value(v) for v in sess.run(g1 + g2 + [g3[0]] + g4)]
    out.append(_err(lambda: tf.gradients(loss, [w], aggregation_method=7)))
    out.append(_err(lambda: tf.gradients(loss, [w], unconnected_gradients="zeros")))
    return out


def minimize_positional_global_step(tf):
    w, b, loss = _model(tf)
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, step, [w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        sess.run(train)
        return [_value(sess.run(step)), _value(sess.run(w)), _value(sess.run(b))]


def minimize_knobs_and_grad_loss(tf):
    w, b, loss = _model(tf)
    opt = tf.train.MomentumOptimizer(0.05, 0.9)
    train = opt.minimize(loss, var_list=[w, b], gate_gradients=opt.GATE_GRAPH,
                         aggregation_method=tf.AggregationMethod.ADD_N,
                         colocate_gradients_with_ops=True, grad_loss=tf.constant(0.5))
    pairs = opt.compute_gradients(loss, [b], tf.train.Optimizer.GATE_NONE, None, True,
                                  tf.constant(3.0))
    out = [opt.GATE_NONE, opt.GATE_OP, opt.GATE_GRAPH]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out.append(_value(sess.run(pairs[0][0])))
        for _ in range(3):
            sess.run(train)
        out += [_value(sess.run(w)), _value(sess.run(b))]
    out.append(_err(lambda: opt.minimize(loss, gate_gradients=5)))
    out.append(_err(lambda: opt.compute_gradients(loss, aggregation_method="tree")))
    return out


CASES = ("gradients_positional_and_knobs", "minimize_positional_global_step",
         "minimize_knobs_and_grad_loss")


def run(tf, name):
    """Build case `name` in a fresh graph of `tf` and return its observations."""
    with tf.Graph().as_default():
        return globals()[name](tf)

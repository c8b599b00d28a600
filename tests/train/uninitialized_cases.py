"""TF1 code around uninitialized variables (tf.report_uninitialized_variables,
tf.is_variable_initialized, tf.assert_variables_initialized and
Scaffold's default readiness checks) that tools/record_tf_uninitialized.py runs under
TensorFlow (tf.compat.v1) and tests/train/test_uninitialized_variables.py under onegraph.

Each case is a function of the module `tf` (tensorflow.compat.v1 or onegraph) returning a
list of observations; `run(tf, name)` gives them with bytes as str and arrays as lists.
Variables start from tensors (random or computed initial values), which both TF and og
leave uninitialized until their initializer runs (og starts variables made from arrays
at their values, where TF does not).
"""

from __future__ import annotations

import numpy as np


def _value(v):
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode()
    if isinstance(v, np.ndarray):
        return [_value(x) for x in v.tolist()] if v.dtype.kind in "SUO" else v.tolist()
    if isinstance(v, list):
        return [_value(x) for x in v]
    if isinstance(v, (np.generic,)):
        return v.item()
    return v


def _error(tf, fn):
    """("ok", value), or the error's class name and the first line of its message."""
    try:
        return ["ok", _value(fn())]
    except Exception as e:  # noqa: BLE001 - the class name is what is compared
        return [type(e).__name__, str(e).splitlines()[0] if str(e) else ""]


def _variables(tf):
    v = tf.Variable(tf.random_normal([2], seed=1), name="v")
    with tf.variable_scope("s"):
        w = tf.Variable(tf.zeros([3]) + 1.0, name="w")
    loc = tf.Variable(tf.ones([]) * 2.0, name="loc", trainable=False,
                      collections=[tf.GraphKeys.LOCAL_VARIABLES])
    return v, w, loc


def report_in_steps(tf):
    v, w, loc = _variables(tf)
    report = tf.report_uninitialized_variables()
    only_w = tf.report_uninitialized_variables([w])
    flags = [tf.is_variable_initialized(x) for x in (v, w, loc)]
    out = []
    with tf.Session() as sess:
        out.append(_value(sess.run(report)))
        out.append(_value(sess.run(flags)))
        sess.run(v.initializer)
        out.append(_value(sess.run(report)))
        out.append(_value(sess.run(only_w)))
        sess.run(tf.global_variables_initializer())
        out.append(_value(sess.run(report)))
        out.append(_value(sess.run(flags)))
        sess.run(tf.local_variables_initializer())
        out.append(_value(sess.run(report)))
        out.append(_value(sess.run(only_w)))
    out.append(list(report.shape.as_list()) if hasattr(report.shape, "as_list")
               else list(report.shape))
    return out


def report_of_no_variables(tf):
    report = tf.report_uninitialized_variables([])
    with tf.Session() as sess:
        value = sess.run(report)
    return [_value(value), list(np.asarray(value).shape),
            tf.assert_variables_initialized([]) is None]


def assert_initialized(tf):
    v, w, _ = _variables(tf)
    check = tf.assert_variables_initialized([v, w])
    single = tf.assert_variables_initialized([w])
    out = []
    with tf.Session() as sess:
        out.append(_error(tf, lambda: sess.run(check))[0])
        sess.run(w.initializer)
        out.append(_error(tf, lambda: sess.run(single)))
        out.append(_error(tf, lambda: sess.run(check))[0])
        sess.run(v.initializer)
        out.append(_error(tf, lambda: sess.run(check)))
    return out


def read_before_init(tf):
    v, _, _ = _variables(tf)
    y = v * 2.0
    with tf.Session() as sess:
        try:
            sess.run(y)
        except Exception as e:  # noqa: BLE001 - the class and the words are compared
            # TF: "Attempting to use uninitialized value v" (og says more after it)
            return [type(e).__name__, "Attempting to use uninitialized value v" in str(e)]
    return ["ok"]


def scaffold_defaults(tf):
    v, w, loc = _variables(tf)
    scaffold = tf.train.Scaffold()
    scaffold.finalize()
    ready = tf.get_collection(tf.GraphKeys.READY_OP)
    ready_local = tf.get_collection(tf.GraphKeys.READY_FOR_LOCAL_INIT_OP)
    out = [len(ready), len(ready_local), ready[0] is scaffold.ready_op]
    with tf.Session() as sess:
        out.append(_value(sess.run(scaffold.ready_op)))
        out.append(_value(sess.run(scaffold.ready_for_local_init_op)))
        sess.run(scaffold.init_op)
        out.append(_value(sess.run(scaffold.ready_op)))
        out.append(_value(sess.run(scaffold.ready_for_local_init_op)))
    return out


def monitored_session_not_ready(tf):
    v, w, _ = _variables(tf)
    scaffold = tf.train.Scaffold(init_op=tf.variables_initializer([w]))
    try:
        with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold)):
            pass
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, "Variables not initialized: v" in str(e)]
    return ["ok"]


CASES = ("report_in_steps", "report_of_no_variables", "assert_initialized",
         "read_before_init", "scaffold_defaults", "monitored_session_not_ready")


def run(tf, name):
    """Build case `name` in a fresh graph of `tf` and return its observations."""
    with tf.Graph().as_default():
        return globals()[name](tf)

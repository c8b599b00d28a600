"""TF1 debugging checks (tf.assert_rank_in, tf.assert_same_float_dtype,
tf.assert_proper_iterable, tf.verify_tensor_all_finite / tf.debugging.assert_all_finite,
tf.add_check_numerics_ops, tf.debugging.is_numeric_tensor, is_non_decreasing) that
tools/record_tf_debugging_more.py runs under TensorFlow (tf.compat.v1) and
tests/train/test_debugging_more.py under onegraph.

Each case is a function of the module `tf` returning a list of observations: values as
lists, errors as [class name, stage] ("build" while building, "run" when run), dtypes by
name.
"""

from __future__ import annotations

import numpy as np


def _build(fn):
    try:
        return ["ok", fn()]
    except Exception as e:  # noqa: BLE001 - the class is compared
        return [type(e).__name__, "build"]


def _run(tf, fetch, feed=None):
    try:
        with tf.Session() as sess:
            value = sess.run(fetch, feed)
        return ["ok", _plain(value)]
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, "run"]


def _plain(value):
    """A fetched value as JSON: lists of lists, None for an op."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return None if value is None else np.asarray(value).tolist()


def _dtype_name(d) -> str:
    return {"float32": "float32", "float64": "float64", "float16": "float16"}.get(
        getattr(d, "name", str(d)).lower(), getattr(d, "name", str(d)).lower())


def rank_in_static(tf):
    x = tf.zeros([2, 3])
    out = [_build(lambda: tf.assert_rank_in(x, [1, 2]) is not None)]
    out.append(_build(lambda: tf.assert_rank_in(x, [0, 1, 3]) is not None))
    out.append(_build(lambda: tf.assert_rank_in(x, (2,), message="m") is not None))
    return out


def rank_in_dynamic(tf):
    p = tf.placeholder(tf.float32, None)
    check = tf.assert_rank_in(p, [1, 3])
    with tf.control_dependencies([check]):
        y = tf.identity(p)
    return [_run(tf, y, {p: np.zeros([4], np.float32)}),
            _run(tf, y, {p: np.zeros([1, 2, 3], np.float32)}),
            _run(tf, y, {p: np.zeros([2, 2], np.float32)})]


def rank_in_tensor_ranks(tf):
    p = tf.placeholder(tf.float32, None)
    r = tf.placeholder(tf.int32, [])
    check = tf.assert_rank_in(p, [r, 2])
    with tf.control_dependencies([check]):
        y = tf.reduce_sum(p)
    return [_run(tf, y, {p: np.ones([3], np.float32), r: 1}),
            _run(tf, y, {p: np.ones([3], np.float32), r: 4}),
            _run(tf, y, {p: np.ones([2, 2], np.float32), r: 4})]


def same_float_dtype(tf):
    a, b = tf.zeros([2]), tf.ones([2])
    c = tf.zeros([2], tf.float64)
    i = tf.zeros([2], tf.int32)
    out = [_build(lambda: _dtype_name(tf.assert_same_float_dtype([a, b])))]
    out.append(_build(lambda: _dtype_name(tf.assert_same_float_dtype(None))))
    out.append(_build(lambda: _dtype_name(tf.assert_same_float_dtype([], tf.float16))))
    out.append(_build(lambda: _dtype_name(tf.assert_same_float_dtype([c], tf.float64))))
    out.append(_build(lambda: tf.assert_same_float_dtype([a, c])))
    out.append(_build(lambda: tf.assert_same_float_dtype([i])))
    out.append(_build(lambda: tf.assert_same_float_dtype([a], tf.float64)))
    return out


def proper_iterable(tf):
    out = []
    for value in ([1, 2], (3,), {"a": 1}, range(2), "abc", b"ab", np.zeros(2), 5,
                  tf.zeros([2])):
        out.append(_build(lambda: tf.assert_proper_iterable(value)))
    return out


def all_finite(tf):
    p = tf.placeholder(tf.float32, [3])
    y = tf.verify_tensor_all_finite(p, "bad values") * 2.0
    z = tf.debugging.assert_all_finite(p, "bad values") + 1.0
    out = [_run(tf, y, {p: [1.0, 2.0, 3.0]}), _run(tf, y, {p: [1.0, np.nan, 3.0]}),
           _run(tf, z, {p: [1.0, np.inf, 3.0]}), _run(tf, z, {p: [0.5, 0.5, 0.5]})]
    out.append(_build(lambda: tf.verify_tensor_all_finite(tf.zeros([2], tf.int32), "m")))
    return out


def check_numerics_ops(tf):
    p = tf.placeholder(tf.float32, [2])
    y = tf.log(p) * 2.0
    z = tf.sqrt(y)
    check = tf.add_check_numerics_ops()
    return [_run(tf, [z, check], {p: [1.0, 2.0]}),
            _run(tf, [z, check], {p: [0.0, 2.0]}),
            _run(tf, [z, check], {p: [0.5, 2.0]}),
            _run(tf, z, {p: [0.0, 2.0]})[0]]


def check_numerics_ops_refuses_cond(tf):
    p = tf.placeholder(tf.float32, [])
    tf.cond(p > 0, lambda: p * 2.0, lambda: p - 1.0)
    return [_build(lambda: tf.add_check_numerics_ops())]


def numeric_and_monotone(tf):
    out = [tf.debugging.is_numeric_tensor(t) for t in
           (tf.zeros([2]), tf.zeros([2], tf.int64), tf.constant(["a"]),
            tf.constant([True]))]
    out.append(tf.debugging.is_numeric_tensor(np.zeros(2)))
    checks = [tf.debugging.is_non_decreasing([1, 2, 2]),
              tf.debugging.is_strictly_increasing([1, 2, 2]),
              tf.math.is_non_decreasing([3.0, 1.0]),
              tf.math.is_strictly_increasing(tf.constant([1, 5, 9], tf.uint8))]
    out.append(_run(tf, checks))
    out.append(_build(lambda: tf.debugging.is_non_decreasing(tf.constant(["a", "b"]))))
    return out


CASES = ("rank_in_static", "rank_in_dynamic", "rank_in_tensor_ranks", "same_float_dtype",
         "proper_iterable", "all_finite", "check_numerics_ops",
         "check_numerics_ops_refuses_cond", "numeric_and_monotone")


def run(tf, name):
    """Build case `name` in a fresh graph of `tf` and return its observations."""
    with tf.Graph().as_default():
        return globals()[name](tf)

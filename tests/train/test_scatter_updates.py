"""og's sparse variable updates (scatter_update, _sub, _mul, _div, _min, _max,
scatter_nd_update, _add, _sub; ops/state_scatter.py) against TensorFlow's results,
recorded in data/tf1_scatter_reference.npz by `tools/record_tf1_reference.py scatter`
(TensorFlow 2.21's tf.compat.v1); the Variable methods, repeated runs, and the errors."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, OneGraphError, ShapeError

from . import tf1_reference
from .tf1_scatter_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("scatter")


def _updated(start, fn, indices, updates):
    """The new value after one og.<fn> on a fresh variable holding `start`."""
    g = og.Graph()
    with g.as_default():
        var = og.Variable(start, name="var")
        op = getattr(og, fn)(var, np.asarray(indices, np.int64), updates)
        with og.Session() as sess:
            sess.run(og.global_variables_initializer())
            new = sess.run(op)
            np.testing.assert_array_equal(sess.run(var.read_value()), new)
    return new


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow(reference, case):
    name, fn, key, indices, updates = case
    inputs = make_inputs()
    start = inputs[key]
    value = inputs[updates[1:]] if isinstance(updates, str) else np.asarray(updates)
    got = _updated(start, fn, indices, value.astype(start.dtype))
    want = reference[f"out/{name}"]
    assert got.dtype == want.dtype == start.dtype
    if start.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


def test_variable_methods_take_indexed_slices_and_index_tuples():
    start = np.arange(12, dtype=np.float32).reshape(4, 3)
    rows = np.array([2, 0], np.int64)
    values = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    g = og.Graph()
    with g.as_default():
        var = og.Variable(start, name="var")
        delta = og.IndexedSlices(og.constant(values), og.constant(rows), var.read_value())
        ops = {"scatter_update": var.scatter_update(delta),
               "scatter_sub": var.scatter_sub(delta),
               "scatter_mul": var.scatter_mul(delta),
               "scatter_add": var.scatter_add(delta)}
        nd = var.scatter_nd_add([[3, 1], [0, 0]], np.array([10, 20], np.float32))
        with og.Session() as sess:
            for method, op in ops.items():   # the same as the og.<method> function's
                sess.run(var.initializer)
                by_method = sess.run(op)
                sess.run(var.initializer)
                by_function = sess.run(getattr(og, method)(var, rows, values))
                np.testing.assert_array_equal(by_method, by_function, err_msg=method)
            sess.run(var.initializer)
            got = sess.run(ops["scatter_update"])
            want = start.copy()
            want[rows] = values
            np.testing.assert_array_equal(got, want)
            sess.run(var.initializer)
            want = start.copy()
            want[3, 1] += 10
            want[0, 0] += 20
            np.testing.assert_array_equal(sess.run(nd), want)


def test_each_run_applies_the_update_again_and_negative_indices_count_from_the_end():
    g = og.Graph()
    with g.as_default():
        var = og.Variable(np.ones((3, 2), np.float32), name="var")
        op = og.scatter_mul(var, [-1], np.full((1, 2), 2.0, np.float32))
        with og.Session() as sess:
            sess.run(var.initializer)
            for _ in range(3):
                out = sess.run(op)
    np.testing.assert_array_equal(out, [[1, 1], [1, 1], [8, 8]])


def _run_update(start, build):
    g = og.Graph()
    with g.as_default():
        var = og.Variable(start, name="var")
        op = build(var)
        with og.Session() as sess:
            sess.run(var.initializer)
            return sess.run(op)


def test_run_time_errors_name_the_variable():
    with pytest.raises(ShapeError, match=r"'var'.*index 5 is out of range \[-4, 4\)"):
        _run_update(np.zeros((4, 2), np.float32),
                    lambda v: og.scatter_update(v, og.constant([1, 5]), 1.0))
    with pytest.raises(ShapeError, match=r"coordinate 1: index -4 is out of range"):
        _run_update(np.zeros((4, 3), np.float32),
                    lambda v: og.scatter_nd_sub(v, og.constant([[0, -4]]), [1.0]))
    with pytest.raises(ExecutionError, match="integer division by zero"):
        _run_update(np.ones((3,), np.int32),
                    lambda v: og.scatter_div(v, [0, 1], np.array([2, 0], np.int32)))
    # indices and updates fed at run time reach the kernel's shape check
    g = og.Graph()
    with g.as_default():
        var = og.Variable(np.zeros((4, 2), np.float32), name="var")
        idx = og.placeholder(og.int64, None)
        upd = og.placeholder(og.float32, None)
        op = og.scatter_max(var, idx, upd)
        with og.Session() as sess:
            sess.run(var.initializer)
            with pytest.raises(ShapeError, match=r"updates of shape \[3\] must have the "
                                                 r"shape \[2, 2\]"):
                sess.run(op, {idx: [0, 1], upd: np.zeros(3, np.float32)})


def test_build_time_errors():
    g = og.Graph()
    with g.as_default():
        var = og.Variable(np.zeros((4, 3), np.float32), name="var")
        flags = og.Variable(np.zeros((4,), bool), name="flags")
        with pytest.raises(TypeError, match="ref must be a Variable"):
            og.scatter_update(og.constant(np.zeros((4, 3), np.float32)), [0], 1.0)
        with pytest.raises(ShapeError, match=r"updates of shape \[2, 2\] must have the "
                                             r"shape \[2, 3\]"):
            og.scatter_sub(var, [0, 1], np.zeros((2, 2), np.float32))
        with pytest.raises(ShapeError, match="updates are float64 but the variable is "
                                             "float32"):
            og.scatter_min(var, [0], og.constant(np.zeros((1, 3))))
        with pytest.raises(ShapeError, match=r"must have the shape \[2, 3\] the indices "
                                             r"pick$"):
            og.scatter_nd_update(var, [[0], [1]], 1.0)   # as TF1: no scalar for nd
        with pytest.raises(ShapeError, match="index tuples of length 3 are longer"):
            og.scatter_nd_add(var, [[0, 1, 2]], [1.0])
        with pytest.raises(OneGraphError, match="indices: cannot convert"):
            og.scatter_update(var, [0.5], 1.0)
        with pytest.raises(ShapeError, match="indices"):
            og.scatter_update(var, og.constant([0.5]), 1.0)
        with pytest.raises(TypeError, match="give indices and updates, or one "
                                            "og.IndexedSlices"):
            var.scatter_update([0, 1])
        with pytest.raises(TypeError, match="name"):
            og.scatter_max(var, [0], 1.0, name=3)
        op = og.scatter_max(flags, [0], True)
        with og.Session() as sess:
            sess.run(flags.initializer)
            with pytest.raises(ShapeError, match="needs a numeric variable"):
                sess.run(op)

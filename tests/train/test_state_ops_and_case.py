"""TF1's og.assign family, og.case, og.tuple, the top-level clip functions and a
Session of the default graph, checked against plain Python and numpy."""

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ExecutionError, ShapeError


def test_assign_functions_update_the_variable_like_its_methods():
    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.array([1.0, 2.0], np.float32), name="v")
        rows = og.Variable(np.zeros((3, 2), np.float32), name="rows")
        set_v = og.assign(v, [5.0, 6.0], validate_shape=True, use_locking=False)
        add_v = og.assign_add(v, [1.0, 1.0])
        sub_v = og.assign_sub(v, [0.5, 0.5], name="take")
        spread = og.scatter_add(rows, [0, 2, 0], np.ones((3, 2), np.float32))
        with og.Session() as sess:  # the default graph, as tf.Session()
            sess.run(og.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(set_v), [5.0, 6.0])
            np.testing.assert_array_equal(sess.run(add_v), [6.0, 7.0])
            np.testing.assert_array_equal(sess.run(sub_v), [5.5, 6.5])
            np.testing.assert_array_equal(sess.run(v), [5.5, 6.5])
            np.testing.assert_array_equal(sess.run(spread), [[2, 2], [0, 0], [1, 1]])
    assert sub_v.name.endswith("take")


def test_assign_to_a_tensor_is_refused_by_name():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        for fn in (og.assign, og.assign_add, og.assign_sub):
            with pytest.raises(TypeError, match=f"{fn.__name__}: ref must be a Variable"):
                fn(x, [1.0, 2.0])


def _cases():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        first = og.case([(x < 0, lambda: og.constant(-1.0)), (x < 10, lambda: x * 2.0)],
                        default=lambda: x * 0.0)
        no_default = og.case([(x < 0, lambda: og.constant(-1.0)), (x > 5, lambda: x * 2.0)])
        exclusive = og.case({x < 0: lambda: og.constant(-1.0), x > 10: lambda: x * 2.0},
                            default=lambda: x, exclusive=True)
        overlapping = og.case([(x < 0, lambda: x), (x < 10, lambda: x * 3.0)],
                              default=lambda: x, exclusive=True)
    return g, x, first, no_default, exclusive, overlapping


@pytest.mark.parametrize("value", [-3.0, 4.0, 20.0])
def test_case_takes_the_first_true_predicate_else_the_default(value):
    g, x, first, no_default, exclusive, overlapping = _cases()
    sess = og.Session(g)

    def python_first(v):
        return -1.0 if v < 0 else v * 2.0 if v < 10 else 0.0

    assert sess.run(first, {x: value}) == python_first(value)
    assert sess.run(exclusive, {x: value}) == (-1.0 if value < 0 else
                                               value * 2 if value > 10 else value)
    if value < 0 or value > 5:
        assert sess.run(no_default, {x: value}) == (-1.0 if value < 0 else value * 2)
    else:  # no default: the last fn, asserting its predicate
        with pytest.raises(ExecutionError, match="none of the conditions evaluated as "
                                                 "True"):
            sess.run(no_default, {x: value})
    if value < 0:
        with pytest.raises(ExecutionError, match="more than one condition evaluated as "
                                                 "True"):
            sess.run(overlapping, {x: value})
    else:
        assert sess.run(overlapping, {x: value}) == (value * 3 if value < 10 else value)


def test_case_exports_as_nested_ifs():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        s = og.reduce_sum(x)
        y = og.case([(s < 0, lambda: -x), (s < 10, lambda: x * 2.0)], default=lambda: x)
    proto = to_onnx(g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})}))
    sess = og.Session(from_onnx(proto))
    for value, want in (([-1.0, -2.0], [1.0, 2.0]), ([1.0, 2.0], [2.0, 4.0]),
                        ([10.0, 2.0], [10.0, 2.0])):
        (got,) = sess.run(["y"], {"x": np.array(value, np.float32)})
        np.testing.assert_array_equal(got, want)


def test_case_refuses_what_is_not_predicate_fn_pairs():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        with pytest.raises(TypeError, match="non-empty list of \\(predicate, callable\\)"):
            og.case([])
        with pytest.raises(TypeError, match="non-empty list"):
            og.case([(x < 0, x)])
        with pytest.raises(TypeError, match="default must be a callable"):
            og.case([(x < 0, lambda: x)], default=x)


def test_tuple_waits_for_every_input():
    g = og.Graph()
    with g.as_default():
        counter = og.Variable(0.0, name="counter")
        x = og.placeholder(og.float32, [], name="x")
        bump = counter.assign_add(1.0)
        a, none, b = og.tuple([x * 2.0, None, x + 1.0], control_inputs=[bump])
    assert none is None
    with og.Session(g) as sess:
        sess.run(og.global_variables_initializer())
        assert sess.run(a, {x: 3.0}) == 6.0  # reading one result runs the whole gate
        assert sess.run(counter) == 1.0
        assert sess.run(b, {x: 3.0}) == 4.0
    with pytest.raises(TypeError, match="tensors must be a list"):
        og.tuple(x)


def test_clip_functions_at_the_top_level():
    g = og.Graph()
    with g.as_default():
        a, b = og.constant([3.0, 4.0]), og.constant([12.0])
        clipped, norm = og.clip_by_global_norm([a, b], 6.5)
        single = og.clip_by_norm(a, 1.0)
        total = og.global_norm([a, b])
    sess = og.Session(g)
    got_a, got_b, got_norm = sess.run([clipped[0], clipped[1], norm])
    assert got_norm == pytest.approx(13.0)
    np.testing.assert_allclose(got_a, [1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(got_b, [6.0], rtol=1e-6)
    np.testing.assert_allclose(sess.run(single), [0.6, 0.8], rtol=1e-6)
    assert sess.run(total) == pytest.approx(13.0)


def test_case_without_default_whose_last_fn_returns_a_plain_value():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        y = og.case([(x < 0, lambda: -x), (x >= 0, lambda: 1.0)])
    sess = og.Session(g)
    assert sess.run(y, {x: -2.0}) == 2.0
    assert sess.run(y, {x: 3.0}) == 1.0


def test_tuple_takes_sparse_gradients_and_ops_and_names_its_results():
    g = og.Graph()
    with g.as_default():
        table = og.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="table")
        rows = og.gather(table, [2, 0])
        (sparse,) = og.gradients(og.reduce_sum(rows), [table], )
        counter = og.Variable(0.0, name="counter")
        bump = counter.assign_add(1.0).op
        values, op = og.tuple([sparse, bump], name="gated")
        with pytest.raises(ValueError, match="every entry is None"):
            og.tuple([None, None])
        with pytest.raises(TypeError, match="tuple: entries must be tensors"):
            og.tuple([rows, "text"])
    assert isinstance(values, og.IndexedSlices) and values.values.name.startswith("gated/")
    with og.Session(g) as sess:
        sess.run(og.global_variables_initializer())
        got = sess.run(values.values)
        np.testing.assert_array_equal(got, np.ones((2, 2), np.float32))
        assert sess.run(counter) == 1.0  # reading the values ran the gate, so the op
        sess.run(op)
        assert sess.run(counter) == 2.0


def test_clip_functions_take_tf1s_arguments():
    g = og.Graph()
    with g.as_default():
        t = og.constant([[3.0, 4.0], [0.6, 0.8]])
        by_row = og.clip_by_norm(t, 1.0, [1], name="rows")
        given = og.clip_by_global_norm([t], 2.0, use_norm=og.constant(4.0), name="norm")
        total = og.global_norm([t], name="total")
    assert by_row.name == "rows" and total.name == "total"
    sess = og.Session(g)
    np.testing.assert_allclose(sess.run(by_row), [[0.6, 0.8], [0.6, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(sess.run(given[0][0]), [[1.5, 2.0], [0.3, 0.4]], rtol=1e-6)
    assert sess.run(total) == pytest.approx(np.sqrt(26.0))


def test_scatter_add_checks_its_updates_while_building():
    g = og.Graph()
    with g.as_default():
        rows = og.Variable(np.zeros((3, 2), np.float32), name="rows")
        with pytest.raises(ShapeError, match="updates are float64 but the variable is "
                                             "float32"):
            og.scatter_add(rows, [0], og.constant(np.ones((1, 2))))
        with pytest.raises(ShapeError, match=r"updates of shape \[2, 3\] must have the "
                                             r"shape \[2, 2\] the indices pick"):
            og.scatter_add(rows, [0, 1], np.ones((2, 3), np.float32))
        with pytest.raises(ShapeError, match="indices"):
            og.scatter_add(rows, og.constant([0.5]), np.ones((1, 2), np.float32))
        with pytest.raises(TypeError, match="scatter_add"):
            og.scatter_add(rows, [0], np.ones((1, 2), np.float32), name=3)
        last = og.scatter_add(rows, og.constant([-1], og.int32), np.ones((1, 2), np.float32))
        scalar = og.scatter_add(rows, [0, 0], 2.5)   # a scalar goes to every picked row
    with og.Session(g) as sess:
        sess.run(og.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(last), [[0, 0], [0, 0], [1, 1]])
        np.testing.assert_array_equal(sess.run(scalar), [[5, 5], [0, 0], [1, 1]])


def test_count_up_to_gives_the_old_value_and_stops_at_the_limit():
    # TF 2.21's tf.compat.v1.count_up_to on an int32 variable (graph mode) gave 0, 1,
    # then OutOfRangeError "Reached limit of 2", leaving the variable at 2; and
    # tf.compat.v1.train.limit_epochs(x, 2) left its epochs counter at 2 once exhausted
    g = og.Graph()
    with g.as_default():
        counter = og.Variable(np.int32(0), name="counter")
        step = og.count_up_to(counter, 2)
        limited = og.train.limit_epochs(og.constant(5), 2)
        with pytest.raises(ShapeError, match="must be an int32 or int64 scalar"):
            og.Variable(np.zeros(2, np.int64), name="vector").count_up_to(3)
        with pytest.raises(TypeError, match="limit must be an int"):
            counter.count_up_to(2.5)
    with og.Session(g) as sess:
        sess.run([og.global_variables_initializer(), og.local_variables_initializer()])
        assert [int(sess.run(step)), int(sess.run(step))] == [0, 1]
        with pytest.raises(og.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(step)
        assert sess.run(counter.read_value()) == 2
        assert sess.run(limited) == 5 and sess.run(limited) == 5
        for _ in range(3):
            with pytest.raises(og.errors.OutOfRangeError):
                sess.run(limited)
        epochs = [v for v in og.local_variables() if v.name.endswith("epochs")][0]
        assert sess.run(epochs.read_value()) == 2


def test_scatter_add_to_a_scalar_variable_is_a_named_error():
    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.float32(1.0), name="scalar")
        op = og.scatter_add(v, [0], [1.0])
    with og.Session(g) as sess:
        sess.run(v.initializer)
        with pytest.raises(ShapeError, match="the variable is a scalar"):
            sess.run(op)

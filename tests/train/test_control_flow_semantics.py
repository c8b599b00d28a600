"""Control-flow semantics checked against TF1's documented behaviour (audit /tmp/hunt_cf).

Oracles are exact math or numpy, never the code's own output: a while loop's gradient
uses the forward iteration's values (stateful ops in the body run once), several
gradients of one loop may run in one step, second order through og.cond, loop
invariants (dtype, shape) enforced when the graph is built, body tensors not usable
outside their loop, and map_fn/scan/foldl edge cases.
"""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import GradientNotDefinedError, OneGraphError, ShapeError


def _i(v):
    return og.constant(np.int64(v))


# --------------------------------------------------------------------------- F01

def test_while_gradient_uses_the_forward_dropout_mask():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [200])
        y = og.while_loop(lambda i, z: i < 1, lambda i, z: (i + 1, og.nn.dropout(z, rate=0.5)),
                          [_i(0), x])[1]
        gr = og.gradients(og.reduce_sum(y), x)[0]
    yv, gv = og.Session(g, seed=0).run([y, gr], {x: np.ones(200)})
    # y = mask * x / (1 - rate), so d sum(y) / dx = mask / (1 - rate) = y at x = 1
    assert 20 < np.count_nonzero(yv) < 180
    np.testing.assert_array_equal(gv, yv)


def test_while_gradient_does_not_run_stateful_body_ops_again():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [])
        counter = og.Variable(np.float64(0.0), name="counter")
        q = og.FIFOQueue(100, [og.float64], [[]])
        enq = q.enqueue_many([og.constant(np.arange(1.0, 11.0))])

        def body(i, z):
            with og.control_dependencies([counter.assign_add(1.0)]):
                return i + 1, z * x + q.dequeue()
        y = og.while_loop(lambda i, z: i < 3, body, [_i(0), og.zeros_like(x)])[1]
        gr = og.gradients(y, x)[0]
        size = q.size()
    s = og.Session(g)
    s.run(enq)
    yv, gv = s.run([y, gr], {x: 2.0})
    # z3 = (q0 x + q1) x + q2 with q = 1, 2, 3: value 1*4 + 2*2 + 3, d/dx = 2 q0 x + q1
    assert float(yv) == 11.0 and float(gv) == 6.0
    assert float(s.run(counter)) == 3.0
    assert int(s.run(size)) == 7


def test_while_gradient_does_not_call_the_body_again():
    calls = []
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [])

        def body(i, z):
            calls.append(1)
            return i + 1, og.sin(z) * x
        y = og.while_loop(lambda i, z: i < 3, body, [_i(0), x])[1]
        gr = og.gradients(y, x)[0]
    assert len(calls) == 1
    xv, eps = 0.8, 1e-6

    def f(v):
        z = v
        for _ in range(3):
            z = np.sin(z) * v
        return z
    got = og.Session(g).run(gr, {x: xv})
    assert abs(got - (f(xv + eps) - f(xv - eps)) / (2 * eps)) < 1e-7


def test_while_gradient_with_a_cond_in_the_body_uses_each_iterations_branch():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [])

        def body(i, z):
            z2 = og.cond(og.less(i, np.int64(2)), lambda: z * x, lambda: og.sin(z) + x)
            return i + 1, z2
        y = og.while_loop(lambda i, z: i < 5, body, [_i(0), x])[1]
        gr = og.gradients(y, x)[0]

    def f(v):
        z = v
        for i in range(5):
            z = z * v if i < 2 else np.sin(z) + v
        return z
    xv, eps = 0.6, 1e-6
    got = og.Session(g).run(gr, {x: xv})
    assert abs(got - (f(xv + eps) - f(xv - eps)) / (2 * eps)) < 1e-7


# --------------------------------------------------------------------------- F02

def test_two_gradients_of_one_loop_in_one_run():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [])
        w = og.Variable(np.float64(1.5), name="w")
        y = og.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, z * w),
                          [_i(0), og.ones_like(x)])[1]
        loss = y * x
        train = og.train.GradientDescentOptimizer(0.01).minimize(loss)
        (gw,) = og.gradients(loss, [w])
    s = og.Session(g)
    _, got = s.run([train, gw], {x: 1.0})
    assert got == pytest.approx(3 * 1.5 ** 2, abs=1e-12)   # d w^3 / dw
    assert float(s.run(w)) == pytest.approx(1.5 - 0.01 * 6.75, abs=1e-8)  # lr is float32


def test_second_order_through_a_while_loop_is_a_named_error():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [])
        y = og.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, z * x),
                          [_i(0), og.ones_like(x)])[1]
        g1 = og.gradients(y, x)[0]
        with pytest.raises(GradientNotDefinedError, match="second-order"):
            og.gradients(g1, x)


# --------------------------------------------------------------------------- F03

@pytest.mark.parametrize("taken", [True, False])
def test_second_order_gradient_through_cond(taken):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [])
        p = og.placeholder(og.bool_, [])
        y = og.cond(p, lambda: x * x * x, lambda: og.sin(x))
        g1 = og.gradients(y, x)[0]
        g2 = og.gradients(g1, x)[0]
    got = og.Session(g).run([g1, g2], {x: 0.7, p: taken})
    want = [3 * 0.49, 6 * 0.7] if taken else [np.cos(0.7), -np.sin(0.7)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


# --------------------------------------------------------------------------- F04

def test_gradient_of_an_outside_tensor_returned_unchanged_by_the_body():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [])
        y = og.placeholder(og.float64, [])
        out = og.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, y), [_i(0), x])[1]
        gx, gy = og.gradients(out, [x, y])
    s = og.Session(g)
    assert s.run(out, {x: 1.1, y: 0.4}) == 0.4
    # out == y whatever x is: d/dx = 0, d/dy = 1
    assert s.run([gx, gy], {x: 1.1, y: 0.4}) == [0.0, 1.0]


# --------------------------------------------------------------------------- F06

def test_while_loop_rejects_a_loop_variable_whose_dtype_changes():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(ShapeError, match="float32.*float64"):
            og.while_loop(lambda i, f: i < 2, lambda i, f: (i + 1, og.cast(f, og.float64)),
                          [_i(0), og.constant(np.float32(1.0))])


def test_while_loop_rejects_a_shape_change_without_an_invariant():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(ShapeError, match="shape_invariants"):
            og.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, og.concat([x, x], 0)),
                          [_i(0), og.constant(np.ones(1))])


def test_while_loop_shape_invariant_gives_correct_static_and_runtime_shapes():
    g = og.Graph()
    with g.as_default():
        _, x = og.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, og.concat([x, x], 0)),
                             [_i(0), og.constant(np.ones(1))],
                             shape_invariants=[(), [None]])
        assert x.shape == (None,)
        doubled = og.map_fn(lambda e: e * 2.0, x)
    np.testing.assert_array_equal(og.Session(g).run(doubled), np.full(8, 2.0))


# --------------------------------------------------------------------------- F07

def test_cond_branches_may_return_operations():
    # TF1: tf.cond(p, lambda: update_op, tf.no_op) runs the taken branch's op only
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.bool_, [], name="p")
        v = og.Variable(np.float32(0.0), name="v")
        step = og.cond(p, lambda: v.assign_add(1.0).op, og.no_op)
        pair = og.cond(p, lambda: (og.constant(2.0), v.assign_add(10.0).op),
                       lambda: (og.constant(3.0), og.no_op()))
        init = og.global_variables_initializer()
    assert isinstance(step, og.Operation) and isinstance(pair[1], og.Operation)
    sess = og.Session(g)
    sess.run(init)
    assert sess.run(step, {p: True}) is None
    assert sess.run(v) == 1.0
    sess.run(step, {p: False})
    assert sess.run(v) == 1.0
    assert sess.run(pair, {p: False})[0] == 3.0 and sess.run(v) == 1.0
    assert sess.run(pair, {p: True})[0] == 2.0 and sess.run(v) == 11.0


def test_cond_refuses_an_operation_against_a_tensor():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.bool_, [], name="p")
        with pytest.raises(OneGraphError, match="Operation matches only an Operation"):
            og.cond(p, og.no_op, lambda: og.constant(1.0))


def test_cond_rejects_branches_of_different_dtypes():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.bool_, [])
        with pytest.raises(ShapeError, match="float32.*int64"):
            og.cond(p, lambda: og.constant(np.float32(1.5)), lambda: og.constant(np.int64(2)))


# --------------------------------------------------------------------------- F08

def test_maximum_iterations_may_be_a_scalar_tensor():
    g = og.Graph()
    with g.as_default():
        m = og.placeholder(og.int64, [])
        r = og.while_loop(lambda i: i < 100, lambda i: [i + 1], [_i(0)], maximum_iterations=m)
        m32 = og.placeholder(og.int32, [])
        r32 = og.while_loop(lambda i: i < 100, lambda i: [i + 1], [_i(0)],
                            maximum_iterations=m32)
    s = og.Session(g)
    assert int(s.run(r[0], {m: 4})) == 4 and int(s.run(r32[0], {m32: 6})) == 6


# --------------------------------------------------------------------------- F14

def _doubling_loop(inner: list):
    """while i < 3: x *= 2 (from 1), appending the body's tensor x * 2 to `inner`."""
    def body(i, x):
        z = x * 2.0
        inner.append(z)
        return i + 1, z
    return og.while_loop(lambda i, x: i < 3, body, [_i(0), og.constant(1.0)])


def test_a_loop_body_tensor_used_outside_the_loop_is_rejected_when_built():
    g = og.Graph()
    with g.as_default():
        inner = []
        _doubling_loop(inner)
        with pytest.raises(OneGraphError, match="inside while loop"):
            og.reduce_sum(inner[0])


def test_fetching_a_loop_body_tensor_or_an_untaken_branch_raises():
    g = og.Graph()
    with g.as_default():
        inner = []
        r = _doubling_loop(inner)
        p = og.placeholder(og.bool_, [])
        branch = []

        def true_fn():
            branch.append(og.constant(3.0) * 2.0)
            return branch[0]
        c = og.cond(p, true_fn, lambda: og.constant(1.0))
    s = og.Session(g)
    assert float(s.run(r[1])) == 8.0
    with pytest.raises(OneGraphError, match="inside while loop"):
        s.run([r[1], inner[0]])
    assert float(s.run(branch[0], {p: True})) == 6.0
    with pytest.raises(OneGraphError, match="no value"):
        s.run([c, branch[0]], {p: False})


# --------------------------------------------------------------------------- F12

def test_map_fn_over_empty_elements_gives_an_empty_result():
    g = og.Graph()
    with g.as_default():
        r = og.map_fn(lambda x: x * 2.0, np.zeros((0, 2)))
        ph = og.placeholder(og.float64, [None, 3])
        r2 = og.map_fn(lambda x: og.reduce_sum(x), ph)
    s = og.Session(g)
    out = s.run(r)
    assert out.shape == (0, 2) and out.dtype == np.float64
    assert s.run(r2, {ph: np.zeros((0, 3))}).shape == (0,)
    np.testing.assert_array_equal(s.run(r2, {ph: np.ones((2, 3))}), [3.0, 3.0])


# --------------------------------------------------------------------------- F05

@pytest.mark.parametrize("which", ["map_fn", "scan"])
def test_map_fn_and_scan_memory_is_linear_in_the_number_of_elements(which):
    import tracemalloc

    n, width = 400, 250   # 800 KB of input; an O(n^2) history would hold ~160 MB
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [n, width])
        if which == "map_fn":
            y = og.map_fn(lambda e: og.sin(e), x)
        else:
            y = og.scan(lambda a, e: a * 0.5 + og.sin(e), x, og.zeros([width], og.float64))
        gr = og.gradients(og.reduce_sum(y * y), x)[0]
    xv = np.random.default_rng(0).standard_normal((n, width))
    s = og.Session(g)
    s.run([y, gr], {x: xv})  # plan once, outside the measurement
    tracemalloc.start()
    try:
        yv, gv = s.run([y, gr], {x: xv})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6, f"peak {peak / 1e6:.0f} MB"
    if which == "map_fn":   # d sum(sin(x)^2) / dx = 2 sin(x) cos(x)
        np.testing.assert_allclose(yv, np.sin(xv), rtol=1e-12)
        np.testing.assert_allclose(gv, 2 * np.sin(xv) * np.cos(xv), rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- F13

def test_cond_and_while_loop_take_nested_structures():
    import collections

    Pair = collections.namedtuple("Pair", "a b")
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.bool_, [])
        x = og.constant(2.0)
        r = og.cond(p, lambda: {"u": x, "v": (x * 3.0, Pair(x, x + 1.0))},
                    lambda: {"u": -x, "v": (x, Pair(x * x, x))})
        assert isinstance(r["v"][1], Pair)
        i, (s, t) = og.while_loop(lambda i, st: i < 4,
                                  lambda i, st: (i + 1, (st[0] + 1.0, st[1] * 2.0)),
                                  (_i(0), (og.constant(0.0), og.constant(1.0))))
        with pytest.raises(OneGraphError, match="different structures"):
            og.cond(p, lambda: (x, x), lambda: [x, (x,)])
    sess = og.Session(g)
    assert sess.run(r, {p: True}) == {"u": 2.0, "v": (6.0, Pair(2.0, 3.0))}
    assert sess.run(r, {p: False}) == {"u": -2.0, "v": (2.0, Pair(4.0, 2.0))}
    assert sess.run([i, s, t]) == [4, 4.0, 16.0]


def test_foldl_and_scan_without_initializer_start_from_the_first_element():
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [6])
        total = og.foldl(lambda a, e: a * 2.0 + e, x)
        running = og.scan(lambda a, e: a + e, x)
        pair = og.scan(lambda a, e: (a[0] + e, a[1] * e), x,
                       (og.constant(0.0, og.float64), og.constant(1.0, og.float64)))
        dx = og.gradients(og.reduce_sum(running), x)[0]
    want = v[0]
    for e in v[1:]:
        want = want * 2.0 + e
    s = og.Session(g)
    got_total, got_running, got_pair, got_dx = s.run([total, running, pair, dx], {x: v})
    assert got_total == want
    np.testing.assert_array_equal(got_running, np.cumsum(v))
    np.testing.assert_array_equal(got_pair[0], np.cumsum(v))
    np.testing.assert_array_equal(got_pair[1], np.cumprod(v))
    # d sum(cumsum(x)) / dx_k = number of prefixes holding x_k = n - k
    np.testing.assert_array_equal(got_dx, [6, 5, 4, 3, 2, 1])


def test_tf1_keywords_are_accepted():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3])
        (i,) = og.while_loop(lambda i: i < 3, lambda i: [i + 1], [_i(0)],
                             parallel_iterations=32, back_prop=True, swap_memory=False)
        (y,) = og.while_loop(lambda y: og.reduce_sum(y) < 100.0, lambda y: [y * 2.0], [x],
                             back_prop=False)
        assert og.gradients(og.reduce_sum(y), x)[0] is None
        m = og.map_fn(lambda e: e * 2.0, x, dtype=og.float64, parallel_iterations=4)
        with pytest.raises(ShapeError, match="dtype"):
            og.map_fn(lambda e: e * 2.0, x, dtype=og.float32)
    s = og.Session(g)
    assert int(s.run(i)) == 3
    np.testing.assert_array_equal(s.run(m, {x: [1.0, 2.0, 3.0]}), [2.0, 4.0, 6.0])


def _loop_in_a_loop_condition():
    """(graph, x, r, expected r for x = [1, 2]): r = while sum(4 v) < 100: v + 1, the
    4 v computed by a while_loop inside the condition."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")

        def condition(v):
            quadrupled = og.while_loop(lambda j, a: j < 2, lambda j, a: (j + 1, a * 2.0),
                                       [og.constant(0), v])[1]
            return og.reduce_sum(quadrupled) < 100.0

        r = og.while_loop(condition, lambda v: v + 1.0, x)
    want = np.array([1.0, 2.0], np.float32)
    while (want * 4).sum() < 100:
        want = want + 1
    return g, x, r, want


def test_a_while_loop_inside_another_loops_condition():
    """The inner loop's counter starts from a constant: the outer frame holds it
    through the condition's pivot (the Session refused the graph as a cycle)."""
    g, x, r, want = _loop_in_a_loop_condition()
    with g.as_default():
        dr = og.gradients(og.reduce_sum(r), [x])[0]
    got, grad = og.Session(g).run([r, dr], {x: np.array([1.0, 2.0], np.float32)})
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(grad, [1.0, 1.0])


def test_a_loop_in_a_loop_condition_saved_before_conditions_had_a_pivot():
    """Graphs built before the condition's pivot (no control edge from the counter's
    Merge) still run: the frame holds the inner loop whole."""
    g, x, r, want = _loop_in_a_loop_condition()
    model = g.to_model(signatures={"serving": og.signature({"x": x}, {"r": r})})
    graph = model.graph
    merges = {k for k, node in enumerate(graph.nodes) if node.op_type == "Merge"}
    stripped = 0
    for node in graph.nodes:
        kept = [c for c in node.control_inputs if c not in merges]
        stripped += len(node.control_inputs) - len(kept)
        node.control_inputs = kept
    assert stripped  # the pivot edges the old builder did not make
    got = og.Session(model).run_signature("serving", x=np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(got["r"], want)

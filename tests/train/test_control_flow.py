"""Control flow: og.cond / og.while_loop (Switch, Merge, Enter, Exit, NextIteration with
dead values), their gradients against finite differences, foldl / map_fn / scan, and
an LSTM trained with while_loop checked against its statically unrolled twin."""

import numpy as np
import pytest

import onegraph as og

from .gradcheck import check_op_gradients


def test_cond_runs_only_the_taken_branch():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.bool_, [], name="p")
        x = og.placeholder(og.float32, [2], name="x")
        q = og.FIFOQueue(4, [og.float32], [[2]])
        # the true branch dequeues: it must not run when p is false
        y = og.cond(p, lambda: q.dequeue() + x, lambda: x * 2.0)
        enq = q.enqueue(og.constant(np.float32([10, 20])))
        size = q.size()
        c = og.cond(p, lambda: og.constant(1.0), lambda: og.constant(2.0))
    sess = og.Session(g)
    np.testing.assert_array_equal(sess.run(y, {p: False, x: [1, 2]}), [2, 4])
    sess.run(enq)
    np.testing.assert_array_equal(sess.run(y, {p: True, x: [1, 2]}), [11, 22])
    assert int(sess.run(size)) == 0
    assert float(sess.run(c, {p: True})) == 1.0 and float(sess.run(c, {p: False})) == 2.0
    kinds = {n.op_type for n in g.ir_graph.nodes}
    assert {"Switch", "Merge"} <= kinds


@pytest.mark.parametrize("taken", [True, False])
def test_cond_gradients_match_finite_differences_for_both_predicates(taken):
    w = np.random.default_rng(0).standard_normal((3, 2))

    def build(x, v):
        p = og.constant(np.asarray(taken))
        h = og.matmul(x, og.constant(w))
        return og.cond(p, lambda: og.tanh(h) * v, lambda: og.exp(h) + v * v)

    rng = np.random.default_rng(1)
    grads = check_op_gradients(build, [rng.standard_normal((4, 3)) * 0.3,
                                       rng.standard_normal((4, 2))])
    assert all(gr is not None for gr in grads)


def test_cond_gradient_flows_only_through_taken_branch():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.bool_, [])
        a = og.Variable(np.float32(2.0), name="a")
        b = og.Variable(np.float32(3.0), name="b")
        y = og.cond(p, lambda: a * a, lambda: b * 5.0)
        ga, gb = og.gradients(y, [a, b])
    sess = og.Session(g)
    assert sess.run([ga, gb], {p: True}) == [4.0, 0.0]
    assert sess.run([ga, gb], {p: False}) == [0.0, 5.0]


def test_while_loop_values_and_maximum_iterations():
    g = og.Graph()
    with g.as_default():
        n = og.placeholder(og.int64, [])
        i, s = og.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i),
                             [og.constant(np.int64(0)), og.constant(np.int64(0))])
        (j,) = og.while_loop(lambda j: j < 100, lambda j: [j + 1], [og.constant(np.int64(0))],
                             maximum_iterations=7)
    sess = og.Session(g)
    assert sess.run([i, s], {n: 10}) == [10, 45]
    assert sess.run([i, s], {n: 0}) == [0, 0]
    assert int(sess.run(j)) == 7


def test_while_loop_gradient_bptt_matches_finite_differences():
    def build(x, w):
        def body(k, h):
            return k + 1, og.tanh(og.matmul(h, w) + x)
        _, h = og.while_loop(lambda k, h: k < 4, body, [og.constant(np.int64(0)), x])
        return h

    rng = np.random.default_rng(2)
    check_op_gradients(build, [rng.standard_normal((2, 3)) * 0.5,
                               rng.standard_normal((3, 3)) * 0.5])


def test_nested_while_and_cond_inside_loop_gradients():
    def build(x):
        def outer(i, acc):
            def inner(j, a):
                return j + 1, og.cond(og.less(j, np.int64(1)), lambda: a * x, lambda: a + x)
            _, a = og.while_loop(lambda j, a: j < 3, inner, [og.constant(np.int64(0)), acc])
            return i + 1, og.sin(a)
        _, out = og.while_loop(lambda i, a: i < 2, outer, [og.constant(np.int64(0)), x])
        return out

    check_op_gradients(build, [np.array([0.3, -0.7, 1.1])])


def test_foldl_map_fn_scan_and_their_gradients():
    g = og.Graph()
    with g.as_default():
        xs = og.placeholder(og.float64, [5, 2])
        total = og.foldl(lambda acc, x: acc + x * x, xs, og.zeros([2], og.float64))
        doubled = og.map_fn(lambda x: x * 2.0, xs)
        running = og.scan(lambda acc, x: acc + x, xs, og.zeros([2], og.float64))
    v = np.arange(10, dtype=np.float64).reshape(5, 2)
    sess = og.Session(g)
    t, d, r = sess.run([total, doubled, running], {xs: v})
    np.testing.assert_allclose(t, (v * v).sum(0))
    np.testing.assert_allclose(d, v * 2)
    np.testing.assert_allclose(r, np.cumsum(v, 0))
    rng = np.random.default_rng(3)
    check_op_gradients(lambda x: og.foldl(lambda a, e: a * og.cos(e), x,
                                          og.ones([2], og.float64)), [rng.standard_normal((4, 2))])
    check_op_gradients(lambda x: og.map_fn(lambda e: og.sin(e) * e, x),
                       [rng.standard_normal((3, 2))])
    check_op_gradients(lambda x: og.scan(lambda a, e: og.tanh(a + e), x,
                                         og.zeros([2], og.float64)),
                       [rng.standard_normal((3, 2))])


# --------------------------------------------------------------------------- LSTM

T, B, D, U = 6, 8, 3, 8


def _lstm_graph(dynamic: bool, dtype=np.float64, seed=0):
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(seed)
        xs = og.placeholder(dtype, [T, B, D], name="xs")
        target = og.placeholder(dtype, [B, 1], name="target")
        cell = og.nn.LSTMCell(U)
        zero = og.constant(np.zeros((B, U), dtype))
        cell.build(D, dtype, g)
        if dynamic:
            def body(t, c, h):
                _, (c2, h2) = cell(og.gather(xs, t), (c, h))
                return t + 1, c2, h2
            _, c, h = og.while_loop(lambda t, c, h: t < T, body,
                                    [og.constant(np.int64(0)), zero, zero])
        else:
            c = h = zero
            for t in range(T):
                _, (c, h) = cell(og.gather(xs, np.int64(t)), (c, h))
        pred = og.nn.dense(h, 1, name="head")
        loss = og.nn.mean_squared_error(target, pred)
        variables = og.trainable_variables(g)
        grads = og.gradients(loss, variables)
    return g, xs, target, loss, variables, grads


def _sequence_task(rng, n=B):
    xs = rng.standard_normal((T, n, D))
    target = np.tanh(xs[:, :, 0].sum(0, keepdims=True).T * 0.5)  # (n, 1)
    return xs, target


def test_lstm_while_loop_gradients_match_unrolled_and_finite_differences():
    rng = np.random.default_rng(0)
    xv, tv = _sequence_task(rng)
    gd, xs_d, t_d, loss_d, vars_d, grads_d = _lstm_graph(True)
    gs, xs_s, t_s, loss_s, vars_s, grads_s = _lstm_graph(False)
    sd, ss = og.Session(gd), og.Session(gs)
    ld, gvd = sd.run([loss_d, grads_d], {xs_d: xv, t_d: tv})
    ls, gvs = ss.run([loss_s, grads_s], {xs_s: xv, t_s: tv})
    assert abs(ld - ls) < 1e-12
    for a, b in zip(gvd, gvs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    # finite differences on the loop version, along a random direction per variable
    eps = 1e-6
    for v, gv in zip(vars_d, gvd):
        base = sd.run(v)
        d = rng.standard_normal(base.shape)
        vals = []
        for sign in (1, -1):
            sd.run(v.assign(base + sign * eps * d))
            vals.append(float(sd.run(loss_d, {xs_d: xv, t_d: tv})))
        sd.run(v.assign(base))
        numeric = (vals[0] - vals[1]) / (2 * eps)
        assert abs(numeric - float(np.sum(gv * d))) < 1e-6 + 1e-5 * abs(numeric), v.name


def test_lstm_trained_with_while_loop_learns():
    g = og.Graph()
    rng = np.random.default_rng(1)
    with g.as_default():
        og.set_random_seed(0)
        xs = og.placeholder(og.float32, [T, None, D], name="xs")
        target = og.placeholder(og.float32, [None, 1], name="target")
        cell = og.nn.LSTMCell(16)
        cell.build(D, np.float32, g)
        zeros = og.zeros_like(og.matmul(og.gather(xs, np.int64(0)),
                                        og.constant(np.zeros((D, 16), np.float32))))

        def body(t, c, h):
            _, (c2, h2) = cell(og.gather(xs, t), (c, h))
            return t + 1, c2, h2
        _, _, h = og.while_loop(lambda t, c, h: t < T, body,
                                [og.constant(np.int64(0)), zeros, zeros])
        pred = og.nn.dense(h, 1, name="head")
        loss = og.nn.mean_squared_error(target, pred)
        train = og.train.Adam(1e-2).minimize(loss)
    sess = og.Session(g)
    xv, tv = _sequence_task(rng, 256)
    xv, tv = xv.astype(np.float32), tv.astype(np.float32)
    first = float(sess.run(loss, {xs: xv, target: tv}))
    for step in range(150):
        rows = rng.integers(0, 256, 32)
        sess.run(train, {xs: xv[:, rows], target: tv[rows]})
    last = float(sess.run(loss, {xs: xv, target: tv}))
    assert last < first / 4, (first, last)

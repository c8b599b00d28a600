"""How og.gradients connects xs to ys: Variables read inside cond and while_loop,
loop variables that do not reach the loss, constant exponents, integer ys, grad_ys
shapes and tensors of another graph. Values are checked against finite differences
or closed forms, not against onegraph itself."""

import numpy as np
import pytest

import onegraph as og

C = og.constant


def _finite_difference(f, v, eps=1e-6):
    out = np.zeros_like(v)
    for i in range(v.size):
        d = np.zeros_like(v)
        d.flat[i] = eps
        out.flat[i] = (f(v + d) - f(v - d)) / (2 * eps)
    return out


@pytest.mark.parametrize("pred,want", [(True, [3.0, 3.0]), (False, [2.0, 2.0])])
def test_variable_read_inside_a_cond_branch_gets_the_taken_branch_gradient(pred, want):
    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.array([0.3, 0.5]), name="v")
        p = og.placeholder(og.bool_, [])
        loss = og.reduce_sum(og.cond(p, lambda: v.read_value() * 3.0, lambda: v * 2.0))
        (d,) = og.gradients(loss, [v])
        train = og.train.SGD(0.5).minimize(loss, var_list=[v], global_step=None)
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    np.testing.assert_allclose(sess.run(d, {p: pred}), want)
    sess.run(train, {p: pred})  # the step is taken whichever branch runs
    np.testing.assert_allclose(sess.run(v), np.array([0.3, 0.5]) - 0.5 * np.array(want),
                               rtol=1e-6)


def test_variable_read_with_read_value_inside_a_while_body():
    v0 = np.array([0.3, 0.5])
    h0 = np.array([1.0, 2.0])

    def forward(vv):
        h = h0
        for _ in range(3):
            h = np.sin(h * vv)
        return h.sum()

    g = og.Graph()
    with g.as_default():
        v = og.Variable(v0, name="v")
        _, h = og.while_loop(lambda i, h: i < 3,
                             lambda i, h: (i + 1, og.sin(h * v.read_value())),
                             [C(np.int64(0)), C(h0)])
        (d,) = og.gradients(og.reduce_sum(h), [v])
    assert d is not None
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    np.testing.assert_allclose(sess.run(d), _finite_difference(forward, v0), rtol=1e-6)


def test_loop_variable_that_does_not_reach_the_loss_has_no_gradient():
    g = og.Graph()
    with g.as_default():
        a = og.Variable(np.array([1.0, 2.0]), name="a")
        b = og.Variable(np.array([5.0, 5.0]), name="b")
        # b and c feed each other but never a: neither reaches the loss
        _, ya, yb, yc = og.while_loop(
            lambda i, ya, yb, yc: i < 2,
            lambda i, ya, yb, yc: (i + 1, ya * ya, yc * 2.0, yb + 1.0),
            [C(np.int64(0)), a, b, C(np.array([0.0, 0.0]))])
        loss = og.reduce_sum(ya)
        da, db = og.gradients(loss, [a, b])
        train = og.train.AdamW(0.1, weight_decay=0.5).minimize(loss, var_list=[a, b],
                                                              global_step=None)
    assert db is None and da is not None
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    np.testing.assert_allclose(sess.run(da), 4 * np.array([1.0, 2.0]) ** 3)
    sess.run(train)
    np.testing.assert_array_equal(sess.run(b), [5.0, 5.0])  # no decay of an unused one


def test_loop_variable_reaching_the_loss_through_another_keeps_its_gradient():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [2])
        w = og.placeholder(og.float64, [2])
        # w only reaches y through z, one iteration later
        _, y, z = og.while_loop(lambda i, y, z: i < 3,
                                lambda i, y, z: (i + 1, y + z, z * 2.0),
                                [C(np.int64(0)), x, w])
        (dw,) = og.gradients(og.reduce_sum(y), [w])
    assert dw is not None
    np.testing.assert_allclose(og.Session(g).run(dw, {x: [1.0, 1.0], w: [1.0, 2.0]}),
                               [7.0, 7.0])  # y = x + w + 2w + 4w


def test_gradient_of_a_constant_exponent():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3])
        p = C(np.array(2.5))
        (dp,) = og.gradients(og.reduce_sum(og.pow(x, p)), [p])
    xv = np.array([0.5, 1.5, 2.0])
    np.testing.assert_allclose(og.Session(g).run(dp, {x: xv}), np.sum(xv ** 2.5 * np.log(xv)))


def test_integer_ys_have_no_gradient():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3])
        assert og.gradients(og.cast(x * 10.0, og.int64), [x]) == [None]


def test_grad_ys_of_another_shape_is_refused():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3, 4])
        with pytest.raises(ValueError, match=r"grad_ys entry of shape \[\] for y .* of "
                                             r"shape \[3, 4\]"):
            og.gradients(og.identity(x), [x], grad_ys=2.0)
        with pytest.raises(ValueError, match="grad_ys entry of shape"):
            og.gradients(og.sin(x), [x], grad_ys=np.arange(4.0))
        (d,) = og.gradients(og.sin(x), [x], grad_ys=np.full((3, 4), 2.0))
    xv = np.ones((3, 4))
    np.testing.assert_allclose(og.Session(g).run(d, {x: xv}), 2 * np.cos(xv))


def test_xs_or_stop_gradients_of_another_graph_are_refused():
    g1 = og.Graph()
    with g1.as_default():
        x = og.placeholder(og.float64, [3], name="x")
        y = og.reduce_sum(x * x)
    g2 = og.Graph()
    with g2.as_default():
        z = og.placeholder(og.float64, [3], name="z")
    assert z.tensor_index == x.tensor_index  # would alias x if looked up by index
    with pytest.raises(ValueError, match="xs entry .* belongs to another graph"):
        og.gradients(y, [z])
    with pytest.raises(ValueError, match="stop_gradients entry .* belongs to another graph"):
        og.gradients(y, [x], stop_gradients=[z])


@pytest.mark.parametrize("equation,shapes", [
    ("ab,b->a", [(3, 4), (1,)]),
    ("abc,abc->a", [(2, 3, 1), (2, 1, 4)]),
    ("ij,jk->ik", [(3, 1), (4, 5)]),
    ("ab,cb->ac", [(3, 4), (2, 1)]),
])
def test_einsum_gradient_with_a_broadcast_label(equation, shapes):
    """Einsum broadcasts a size-1 dim against a longer one, as numpy does (the oracle)."""
    rng = np.random.default_rng(0)
    vals = [rng.standard_normal(s) for s in shapes]
    weight = rng.standard_normal(np.einsum(equation, *vals).shape)
    g = og.Graph()
    with g.as_default():
        phs = [og.placeholder(og.float64, list(s)) for s in shapes]
        loss = og.reduce_sum(og.einsum(equation, *phs) * C(weight))
        grads = og.gradients(loss, phs)
    got = og.Session(g).run(grads, dict(zip(phs, vals)))
    for k, v in enumerate(vals):
        def f(vk, k=k):
            args = list(vals)
            args[k] = vk
            return float(np.sum(np.einsum(equation, *args) * weight))
        np.testing.assert_allclose(got[k], _finite_difference(f, v), rtol=1e-6, atol=1e-8)


def test_einsum_gradient_with_broadcast_ellipsis_dims():
    # numpy's einsum refuses to sum broadcast ellipsis dims; the closed form: y[a] =
    # sum over (3, 4) of x1 * x2, so d/dx1 = sum of x2 over its 4, d/dx2 = sum of x1
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float64, [2, 3, 1])
        b = og.placeholder(og.float64, [2, 1, 4])
        da, db = og.gradients(og.reduce_sum(og.einsum("a...,a...->a", a, b)), [a, b])
    av = np.arange(6.0).reshape(2, 3, 1)
    bv = np.arange(8.0).reshape(2, 1, 4)
    got_a, got_b = og.Session(g).run([da, db], {a: av, b: bv})
    np.testing.assert_allclose(got_a, np.broadcast_to(bv.sum(axis=2, keepdims=True),
                                                      (2, 3, 1)))
    np.testing.assert_allclose(got_b, np.broadcast_to(av.sum(axis=1, keepdims=True),
                                                      (2, 1, 4)))


def test_stop_gradients_inside_a_while_body_are_honoured():
    xv = np.array([0.3, -0.7, 1.1])
    g = og.Graph()
    inner = []
    with g.as_default():
        x = og.placeholder(og.float64, [3])
        w = x * 2.0

        def body(i, y):
            h = og.sin(y)
            inner.append(h)
            return i + 1, h * w

        _, y = og.while_loop(lambda i, y: i < 2, body, [C(np.int64(0)), x])
        (d,) = og.gradients(og.reduce_sum(y), [x], stop_gradients=[inner[0]])
    # h is a constant in every iteration: y = h_2 * 2x, so dy/dx = 2 h_2
    np.testing.assert_allclose(og.Session(g).run(d, {x: xv}),
                               2 * np.sin(np.sin(xv) * 2 * xv), rtol=1e-12)


def test_equal_split_built_without_num_outputs_gets_dtypes_and_gradients():
    # an opset-13 style Split (no 'split' input, no num_outputs attribute): its parts
    # come from the node's output count, in inference as in the kernel
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [4, 6])
        parts = g.op("Split", [x], {"axis": 1}, num_outputs=3)
        assert [p.dtype for p in parts] == [og.float64] * 3
        assert [p.shape for p in parts] == [(4, 2)] * 3
        y = og.reduce_sum(og.cast(parts[1], og.float32))
        (dx,) = og.gradients(y, [x])
    want = np.zeros((4, 6))
    want[:, 2:4] = 1
    np.testing.assert_array_equal(og.Session(g).run(dx, {x: np.ones((4, 6))}), want)

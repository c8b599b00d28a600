"""TF1 semantics that a helper's audit against TensorFlow 2.21 (tf.compat.v1, graph
mode) found different in onegraph; the expected values are TensorFlow's results for
the same snippets (/tmp audit reproducers), each test failed before its fix."""

import numpy as np
import pytest

import onegraph as og


def _run(fetches, feed=None):
    return og.Session().run(fetches, feed)


@pytest.fixture(autouse=True)
def _fresh_graph():
    og.reset_default_graph()
    yield


def test_division_operators_follow_tf1():
    a = og.constant(np.array([7, -7], np.int32))
    b = og.constant(np.array([2, 2], np.int32))
    true_div, divide, floor_div, mod = _run([a / b, og.divide(a, b), a // b, a % b])
    for got in (true_div, divide):
        assert got.dtype == np.float64           # tf.truediv of int32
        np.testing.assert_array_equal(got, [3.5, -3.5])
    np.testing.assert_array_equal(floor_div, [3, -4])
    np.testing.assert_array_equal(mod, [1, 1])
    small = og.constant(np.array([7], np.int16))
    assert _run(small / 2).dtype == np.float32   # 8/16-bit ints divide in float32
    x = og.constant([1.5, -2.5])
    np.testing.assert_array_equal(_run([x // 1.0, 7.0 % x]), [[1.0, -3.0], [1.0, -0.5]])


def test_logical_operators_on_bool_tensors():
    t, f = og.constant([True, False]), og.constant([True, True])
    got = _run([t & f, t | f, t ^ f, ~t, True & t])
    assert [g.tolist() for g in got] == [[True, False], [True, True], [False, True],
                                         [False, True], [True, False]]
    with pytest.raises(TypeError, match="must be bool tensors"):
        og.constant([1, 2]) & og.constant([1, 0])
    with pytest.raises(TypeError, match="must be a bool tensor"):
        ~og.constant([1.0])


def test_where_picks_rows_with_a_vector_condition_and_finds_true_elements():
    c = og.constant([True, False])
    x = og.constant([[1.0, 2.0], [3.0, 4.0]])
    rows, found = _run([og.where(c, x, -x),
                        og.where(og.constant([[True, False], [False, True]]))])
    np.testing.assert_array_equal(rows, [[1.0, 2.0], [-3.0, -4.0]])
    assert found.dtype == np.int64
    np.testing.assert_array_equal(found, [[0, 0], [1, 1]])
    with pytest.raises(TypeError, match="both x and y, or neither"):
        og.where(c, x)


def test_dropout_second_argument_is_keep_prob():
    y = og.nn.dropout(og.ones([200, 200]), 0.9)
    dropped, top = _run([og.reduce_mean(og.cast(og.equal(y, 0.0), og.float32)),
                         og.reduce_max(y)])
    assert 0.08 < dropped < 0.12          # TF: 0.099
    np.testing.assert_allclose(top, 1 / 0.9, rtol=1e-6)
    keep = og.placeholder_with_default(np.float32(0.5), [])
    half = og.nn.dropout(og.ones([100, 100]), keep_prob=keep)
    assert 0.4 < float((_run(half) == 0).mean()) < 0.6
    with pytest.raises(TypeError, match="exactly one"):
        og.nn.dropout(og.ones([2]), 0.5, rate=0.5)


def test_one_hot_as_tf1():
    minus, ints, first_axis = _run([
        og.one_hot(og.constant(np.array([-1, 1], np.int32)), 3),
        og.one_hot(og.constant(np.array([0, 2], np.int32)), 3, on_value=5, off_value=-1),
        og.one_hot([0, 2], 3, axis=0)])
    np.testing.assert_array_equal(minus, [[0, 0, 0], [0, 1, 0]])   # -1: no class
    assert ints.dtype == np.int32
    np.testing.assert_array_equal(ints, [[5, -1, -1], [-1, -1, 5]])
    np.testing.assert_array_equal(first_axis, [[1, 0], [0, 0], [0, 1]])


def test_gather_arguments_in_tf1_order():
    p = og.constant(np.arange(12.0).reshape(3, 4).astype(np.float32))
    i = og.constant(np.array([1, 0], np.int32))
    rows = _run(og.gather(p, i, 1))             # 1 is validate_indices, as TF1
    assert rows.shape == (2, 4)
    cols = _run(og.gather(p, i, axis=1))
    assert cols.shape == (3, 2)
    params = np.arange(2 * 3 * 4).reshape(2, 3, 4).astype(np.float32)
    idx = np.array([[2, 0], [1, 1]])
    got = _run(og.gather(og.constant(params), og.constant(idx), axis=2, batch_dims=1))
    np.testing.assert_array_equal(
        got, np.stack([np.take(params[b], idx[b], axis=1) for b in range(2)]))


def test_gather_with_batch_dims_defaults_its_axis_and_checks_indices_when_run():
    """TF's default axis is batch_dims; an index past its batch's axis, or batch dims
    that differ at run time, fail the run (the flattened gather read a neighbouring
    batch's rows instead)."""
    params = np.arange(2 * 3 * 4).reshape(2, 3, 4).astype(np.float32)
    p = og.placeholder(og.float32, [None, 3, 4])
    i = og.placeholder(og.int32, [None, 2])
    y = og.gather(p, i, batch_dims=1)
    assert tuple(y.shape) == (None, 2, 4)
    sess = og.Session()
    idx = np.array([[2, -1], [0, 1]])
    np.testing.assert_array_equal(sess.run(y, {p: params, i: idx}),
                                  np.stack([params[b][idx[b]] for b in range(2)]))
    for bad in ([[0, 3], [1, 1]], [[0, -4], [1, 1]]):
        with pytest.raises(og.errors.ExecutionError, match="gather: an index is outside"):
            sess.run(y, {p: params, i: np.asarray(bad)})
    with pytest.raises(og.errors.ExecutionError, match="differ in their batch dims"):
        sess.run(y, {p: params, i: np.asarray([[0, 1]])})


def test_boolean_mask_checks_dims_known_only_when_run():
    x = og.placeholder(og.float32, [None, 5])
    m = og.placeholder(og.bool_, [None])
    picked = og.boolean_mask(x, m)
    sess = og.Session()
    assert sess.run(picked, {x: np.ones((3, 5)), m: [True, False, True]}).shape == (2, 5)
    for rows in (2, 4):     # Compress took a shorter mask as False, refused a longer
        with pytest.raises(og.errors.ExecutionError, match="the mask's shape must equal"):
            sess.run(picked, {x: np.ones((rows, 5)), m: [True, False, True]})


def test_argmax_defaults_to_axis_0():
    x = og.constant(np.array([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]], np.float32))
    top, low, narrow = _run([og.argmax(x), og.argmin(x),
                             og.argmax(x, 1, output_type=og.int32)])
    np.testing.assert_array_equal(top, [1, 0, 1])
    np.testing.assert_array_equal(low, [0, 1, 0])
    assert narrow.dtype == np.int32
    np.testing.assert_array_equal(narrow, [1, 0])
    np.testing.assert_array_equal(_run(og.argmax(x, dimension=1)), [1, 0])


def test_nn_max_pool2d_is_tf_nhwc_op():
    x = og.constant(np.zeros((2, 7, 7, 3), np.float32))
    assert _run(og.nn.max_pool2d(x, 2, 2, "SAME")).shape == (2, 4, 4, 3)
    assert _run(og.nn.avg_pool2d(x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID")).shape == \
        (2, 3, 3, 3)
    # onegraph's NCHW layer forms keep their behaviour under _layer names
    assert _run(og.nn.max_pool2d_layer(og.zeros([1, 3, 8, 8]), 2)).shape == (1, 3, 4, 4)


def test_gradients_as_tf1():
    x, y = og.constant([2.0]), og.constant([2.0])   # two constants, not one
    zero = og.constant([0.0])
    yy, xx = og.constant([0.0]), og.constant([-2.0])
    got = _run(og.gradients(x * y, [x, y])
               + og.gradients(og.nn.leaky_relu(zero, 0.2), zero)
               + og.gradients(og.atan2(yy, xx), [yy, xx]))
    np.testing.assert_allclose(np.concatenate(got), [2.0, 2.0, 0.2, -0.5, 0.0])


def test_euclidean_norm_over_no_axis_is_the_magnitude():
    np.testing.assert_array_equal(
        _run(og.reduce_euclidean_norm(og.constant([-3.0, 4.0]), axis=[])), [3.0, 4.0])


def test_tf1_argument_forms():
    """TF1 usages that onegraph refused (names, orders, tensors); values are TF's."""
    x = og.constant(np.arange(6.0).reshape(2, 3).astype(np.float32))
    ax = og.placeholder(og.int32, [])
    n = og.placeholder(og.float32, [None, 4, 5])
    assert og.reshape(n, [og.shape(n)[0], -1, 5]).shape == (None, None, 5)   # TF1 too
    assert og.reshape(n, [og.shape(n)[0], 20]).shape == (None, 20)
    outs = [og.split(og.constant(np.arange(6.0)), [1, -1, 2]),
            og.pad(og.constant([[1.0, 2.0, 3.0]]), [[0, 0], [1, 1]], "REFLECT"),
            og.pad(og.constant([[1.0, 2.0, 3.0]]), [[0, 0], [2, 1]], mode="SYMMETRIC"),
            og.pad(x, [[0, 0], [1, 0]], constant_values=9.0),
            og.reduce_sum(x, reduction_indices=[1], keep_dims=True),
            og.reduce_sum(input_tensor=x, axis=ax),
            og.expand_dims(x, dim=0), og.squeeze(og.zeros([1, 2]), squeeze_dims=[0]),
            og.transpose(a=x), og.zeros_like(x, dtype=og.int32),
            og.constant([1, 2], shape=[4]), og.constant(3.0, og.float32, [2, 2]),
            og.matmul(x, x, adjoint_b=True), og.nn.softmax(x, dim=0),
            og.clip_by_value(x, og.constant([1.0, 0.0, 0.0]), 4.0)]
    got = og.Session().run(outs, {ax: 0})
    assert [a.tolist() for a in got[0]] == [[0.0], [1.0, 2.0, 3.0], [4.0, 5.0]]
    np.testing.assert_array_equal(got[1], [[2.0, 1.0, 2.0, 3.0, 2.0]])
    np.testing.assert_array_equal(got[2], [[2.0, 1.0, 1.0, 2.0, 3.0, 3.0]])
    np.testing.assert_array_equal(got[3], [[9, 0, 1, 2], [9, 3, 4, 5]])
    np.testing.assert_array_equal(got[4], [[3.0], [12.0]])
    np.testing.assert_array_equal(got[5], [3.0, 5.0, 7.0])
    assert got[6].shape == (1, 2, 3) and got[7].shape == (2,)
    assert got[8].shape == (3, 2) and got[9].dtype == np.int32
    np.testing.assert_array_equal(got[10], [1, 2, 2, 2])            # TF1 repeats the last
    np.testing.assert_array_equal(got[11], np.full((2, 2), 3.0))
    np.testing.assert_allclose(got[12], [[5.0, 14.0], [14.0, 50.0]])
    np.testing.assert_allclose(got[13].sum(axis=0), [1.0, 1.0, 1.0], rtol=1e-6)
    np.testing.assert_array_equal(got[14], [[1.0, 1.0, 2.0], [3.0, 4.0, 4.0]])
    y = og.nn.conv2d(input=og.zeros([1, 5, 5, 3]), filter=og.zeros([3, 3, 3, 2]),
                     strides=[1, 1, 1, 1], padding="SAME")
    assert y.shape == (1, 5, 5, 2)
    assert og.placeholder(og.bool, [2]).dtype == og.bool_


def test_rnn_states_and_empty_sequences_as_tf1():
    x = og.placeholder(og.float32, [2, None, 4])
    out, (first, second) = og.nn.dynamic_rnn(og.nn.rnn_cell.MultiRNNCell(
        [og.nn.rnn_cell.LSTMCell(3), og.nn.GRUCell(2)]), x, dtype=og.float32)
    assert type(first).__name__ == "LSTMStateTuple"
    sess = og.Session()
    sess.run(og.global_variables_initializer())
    for steps in (0, 3):
        o, c, h = sess.run([out, first.c, first.h], {x: np.ones((2, steps, 4), np.float32)})
        assert o.shape == (2, steps, 2) and c.shape == h.shape == (2, 3)   # TF: (2, 0, 2)


def test_v1_cross_entropy_stops_the_labels_gradient():
    labels, logits = og.constant([[0.2, 0.8]]), og.constant([[1.0, 3.0]])
    v1 = og.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    v2 = og.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert og.gradients(v1, labels) == [None]                    # TF1: None
    np.testing.assert_allclose(_run(og.gradients(v2, labels)[0]),
                               [[2.126928, 0.12692805]], rtol=1e-6)


def test_cells_take_tf1_constructor_arguments():
    def sig(v):
        return 1 / (1 + np.exp(-v))

    xv = np.array([[0.5, -1.0]], np.float32)
    x = og.constant(xv)
    lstm = og.nn.rnn_cell.LSTMCell(2, initializer=og.constant_initializer(0.3),
                                   cell_clip=0.05, activation=og.nn.relu)
    h, state = lstm(x, lstm.zero_state(1, og.float32))
    gru = og.nn.rnn_cell.GRUCell(2, kernel_initializer=og.constant_initializer(0.2),
                                 bias_initializer=og.constant_initializer(0.1))
    g_out, _ = gru(x, gru.zero_state(1, og.float32))
    sess = og.Session()
    sess.run(og.global_variables_initializer())
    hv, cv, gv = sess.run([h, state.c, g_out])
    z = np.concatenate([xv, np.zeros((1, 2))], 1) @ np.full((4, 8), 0.3)
    i, j, f, o = np.split(z, 4, axis=1)
    c = np.clip(sig(f + 1.0) * 0 + sig(i) * np.maximum(j, 0), -0.05, 0.05)
    np.testing.assert_allclose(cv, c, rtol=1e-6)
    np.testing.assert_allclose(hv, sig(o) * np.maximum(c, 0), rtol=1e-6)
    gates = sig(np.concatenate([xv, np.zeros((1, 2))], 1) @ np.full((4, 4), 0.2) + 0.1)
    r, u = np.split(gates, 2, axis=1)
    cand = np.tanh(np.concatenate([xv, r * 0], 1) @ np.full((4, 2), 0.2) + 0.1)
    np.testing.assert_allclose(gv, (1 - u) * cand, rtol=1e-6)
    with pytest.raises(TypeError, match="shards"):
        og.nn.rnn_cell.LSTMCell(3, num_unit_shards=2)
    with pytest.raises(TypeError, match="num_proj"):
        og.nn.rnn_cell.LSTMCell(3, num_proj=0)
    peephole = og.nn.rnn_cell.LSTMCell(3, True)      # TF1's use_peepholes=True
    assert peephole.use_peepholes and peephole.state_size == (3, 3)
    assert og.nn.rnn_cell.LSTMCell(3, num_proj=2).state_size == (3, 2)


def test_review_mends_of_the_tf1_changes():
    """A helper's review of this work: og.where of an unknown rank, mirror pads of
    lengths known only at run time or negative, an empty constant value, and gather's
    batch_dims (mismatched batches named; differentiable)."""
    x = og.placeholder(og.float32)                      # rank unknown while building
    w = og.where(og.constant([True, False]), x, -x)
    p = og.placeholder(og.float32, [None])
    mirrored = og.pad(p, [[5, 0]], "SYMMETRIC")
    sess = og.Session()
    np.testing.assert_array_equal(
        sess.run(w, {x: np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)}),
        [[1.0, 2.0], [-3.0, -4.0]])                     # rows, as with a known rank
    with pytest.raises(og.errors.ExecutionError, match="SYMMETRIC padding"):
        sess.run(mirrored, {p: np.arange(3.0, dtype=np.float32)})
    with pytest.raises(ValueError, match="must not be negative"):
        og.pad(og.zeros([3]), [[-1, 1]], "REFLECT")
    with pytest.raises(og.ShapeError, match="empty value cannot fill"):
        og.constant([], og.float32, shape=[2])
    with pytest.raises(og.ShapeError, match="batch dim 0 is 2 in params"):
        og.gather(og.ones([2, 3]), [[0], [1], [2]], axis=1, batch_dims=1)


def test_gradients_of_sizes_known_only_at_run_time():
    """tile/pad with packed sizes, eye of a run-time size and gather with batch_dims
    differentiate (central differences of the same function in numpy)."""
    rng = np.random.RandomState(5)
    v = rng.randn(2, 3)
    idx = np.array([[2, 0], [1, 1]])
    x = og.placeholder(og.float64, [None, 3])
    n = og.shape(x)[0]
    total = (og.reduce_sum(og.square(og.tile(x, [n, 2])))
             + og.reduce_sum(og.square(og.pad(x, [[0, n], [1, 0]], constant_values=2.0)))
             + og.reduce_sum(og.eye(n, dtype=og.float64)
                             * og.matmul(x, x, transpose_b=True))
             + og.reduce_sum(og.pow(og.gather(x, og.constant(idx), axis=1, batch_dims=1),
                                    3.0)))
    (grad,) = og.gradients(total, [x])
    got = og.Session().run(grad, {x: v})

    def f(a):
        k = a.shape[0]
        picked = np.stack([a[b, idx[b]] for b in range(k)])
        return ((np.tile(a, (k, 2)) ** 2).sum()
                + (np.pad(a, [(0, k), (1, 0)], constant_values=2.0) ** 2).sum()
                + (np.eye(k) * (a @ a.T)).sum() + (picked ** 3).sum())

    num = np.zeros_like(v)
    for i in np.ndindex(v.shape):
        up, down = v.copy(), v.copy()
        up[i] += 1e-6
        down[i] -= 1e-6
        num[i] = (f(up) - f(down)) / 2e-6
    np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-6)


# tf.compat.v1.train.cosine_decay_restarts(0.1, step, 10), (... t_mul=1.0, m_mul=0.5,
# alpha=0.1), (... t_mul=1.5, m_mul=0.8), linear_cosine_decay(0.1, step, 50) and (...,
# num_periods=2.0, alpha=0.1, beta=0.01) at these steps, from TensorFlow 2.21
_RESTART_SCHEDULES = {
    0: [0.100000001, 0.100000001, 0.100000001, 0.100100003, 0.111000001],
    3: [0.0793892667, 0.0814503357, 0.0793892667, 0.0932674929, 0.0909063667],
    7: [0.0206107404, 0.0285496656, 0.0206107404, 0.0820075721, 0.0400056951],
    10: [0.100000001, 0.0550000034, 0.0800000057, 0.0724606737, 0.00959423278],
    15: [0.0853553414, 0.0324999988, 0.0600000024, 0.0556724779, 0.00863933004],
    29: [0.00061558187, 0.0105506135, 0.0591375418, 0.0158775132, 0.0409314893],
    30: [0.100000001, 0.0212500002, 0.056513425, 0.013919658, 0.033725407],
    44: [0.0726995245, 0.0136816083, 0.00374567439, 0.000521340757, 0.0126907034],
    45: [0.0691341683, 0.0128124999, 0.00192983449, 0.000344717613, 0.0140901683],
    70: [0.100000001, 0.010703125, 0.0127999997, 0.000100000005, 0.0109999999],
    100: [0.0691341683, 0.0100878915, 0.0285917167, 0.000100000005, 0.0109999999],
}


def test_cosine_restarts_and_linear_cosine_schedules_as_tf1():
    step = og.placeholder(og.int64, [])
    outs = [og.train.cosine_decay_restarts(0.1, step, 10),
            og.train.cosine_decay_restarts(0.1, step, 10, t_mul=1.0, m_mul=0.5, alpha=0.1),
            og.train.cosine_decay_restarts(0.1, step, 10, t_mul=1.5, m_mul=0.8),
            og.train.linear_cosine_decay(0.1, step, 50),
            og.train.linear_cosine_decay(0.1, step, 50, num_periods=2.0, alpha=0.1,
                                         beta=0.01)]
    sess = og.Session()
    for k, want in _RESTART_SCHEDULES.items():
        np.testing.assert_allclose(sess.run(outs, {step: k}), want, rtol=2e-6, atol=1e-8,
                                   err_msg=f"step {k}")
    with pytest.raises(ValueError, match="t_mul"):
        og.train.cosine_decay_restarts(0.1, step, 10, t_mul=0.0)

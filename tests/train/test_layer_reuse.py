"""og.nn layers built again in a reusing og.variable_scope share their variables, as
tf.layers and TF1's LSTMCell do (a train tower and an eval tower)."""

import numpy as np
import pytest

import onegraph as og


def test_batch_norm_eval_tower_uses_the_trained_moving_averages():
    x_v = np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 2], name="x")
        with og.variable_scope("model"):
            og.nn.batch_norm(x, training=True, momentum=0.0)
        with og.variable_scope("model", reuse=True):
            y_eval = og.nn.batch_norm(x, training=False)
        updates = g.get_collection(og.UPDATE_OPS)
    names = sorted(v.name for v in g.get_collection(og.GLOBAL_VARIABLES))
    assert names == ["model/batch_norm/beta", "model/batch_norm/gamma",
                     "model/batch_norm/moving_mean", "model/batch_norm/moving_variance"]
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    sess.run(updates, {x: x_v})  # momentum 0: the moving stats become the batch's
    mean, var = x_v.mean(axis=0), x_v.var(axis=0)
    np.testing.assert_allclose(sess.run(y_eval, {x: x_v}),
                               (x_v - mean) / np.sqrt(var + 1e-5), rtol=1e-5)


def test_lstm_cell_in_a_reusing_scope_shares_kernel_and_bias():
    rng = np.random.default_rng(0)
    x_v = rng.standard_normal((2, 3)).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2, 3], name="x")
        outs = []
        for reuse in (False, True):
            with og.variable_scope("rnn", reuse=reuse):
                cell = og.nn.LSTMCell(4)
                outs.append(cell(x, cell.zero_state(2))[0])
    names = sorted(v.name for v in g.get_collection(og.GLOBAL_VARIABLES))
    assert names == ["rnn/lstm_cell/bias", "rnn/lstm_cell/kernel"]
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    a, b = sess.run(outs, {x: x_v})
    np.testing.assert_array_equal(a, b)
    # the cell's documented gates (TF1's: input, cell, forget, output) on its kernel
    k, bias = sess.run([cell.kernel, cell.bias])
    z = np.concatenate([x_v, np.zeros((2, 4), np.float32)], axis=1) @ k + bias
    i, gg, f, o = np.split(z, 4, axis=1)

    def sig(t):
        return 1 / (1 + np.exp(-t))

    c = sig(i) * np.tanh(gg)
    np.testing.assert_allclose(a, sig(o) * np.tanh(c), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call,error,words", [
    (lambda x: og.nn.conv2d(x, 2, 3, padding=None), og.OneGraphError, "padding must be"),
    (lambda x: og.nn.max_pool2d_layer(x, padding=1), og.OneGraphError, "padding must be"),
    (lambda x: og.nn.conv2d(x, 2, "3x3"), TypeError, "kernel_size must be a positive int"),
    (lambda x: og.nn.conv2d(x, 2, (3,)), TypeError, "kernel_size must be a positive int"),
    (lambda x: og.nn.conv2d(x, 0, 3), TypeError, "filters must be a positive int"),
    (lambda x: og.nn.avg_pool2d_layer(x, 2, strides=0), TypeError,
     "strides must be a positive"),
    (lambda x: og.nn.LSTMCell("a"), TypeError, "num_units must be a positive int"),
])
def test_layer_arguments_are_checked_by_name(call, error, words):
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [1, 1, 4, 4])
        with pytest.raises(error, match=words):
            call(x)


def test_kernel_sizes_as_any_iterable_or_numpy_scalar():
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [1, 1, 8, 8])
        assert og.nn.conv2d(x, 2, range(3, 5)).shape == (1, 2, 8, 8)
        assert og.nn.conv2d(x, 2, np.array(3)).shape == (1, 2, 8, 8)
        assert og.nn.max_pool2d_layer(x, np.int64(2)).shape == (1, 1, 4, 4)

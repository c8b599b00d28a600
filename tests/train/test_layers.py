"""og.layers (TF1's tf.layers) against numpy spellings of TF's definitions (NHWC
convolution and pooling with TF's SAME padding, batch normalization), its variables'
names, sharing and regularizers, and an export run by onnxruntime."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import OneGraphError, ShapeError

from .nhwc_oracle import conv_nhwc, windows


def _session(g):
    sess = og.Session(g)
    with g.as_default():
        sess.run(og.global_variables_initializer())
    return sess


@pytest.mark.parametrize("padding, stride, dilation", [("same", 2, 1), ("valid", 1, 1),
                                                       ("same", 1, 2), ("valid", 3, 1)])
def test_conv2d_is_tf_nhwc_convolution(padding, stride, dilation):
    rng = np.random.RandomState(0)
    xv = rng.randn(2, 9, 8, 3)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [2, 9, 8, 3])
        y = og.layers.conv2d(x, 4, (3, 2), strides=stride, padding=padding.upper(),
                             dilation_rate=dilation,
                             bias_initializer=og.random_normal_initializer())
        first = og.layers.conv2d(og.transpose(x, [0, 3, 1, 2]), 4, (3, 2), strides=stride,
                                 padding=padding, dilation_rate=dilation,
                                 data_format="channels_first", name="conv2d", reuse=True)
        kernel, bias = og.global_variables()
    assert kernel.name == "conv2d/kernel" and kernel.shape == (3, 2, 3, 4)
    sess = _session(g)
    got, got_first, k, b = sess.run([y, first, kernel, bias], {x: xv})
    want = conv_nhwc(xv, k, b, stride, dilation, padding)
    # (atol too: the initializers are unseeded, and an output near 0 summed in another
    # order than the oracle's is off by more than 1e-12 of itself now and then)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(got_first, want.transpose(0, 3, 1, 2), rtol=1e-12,
                               atol=1e-13)


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_pooling_layers_are_tf_nhwc_pooling(padding):
    rng = np.random.RandomState(1)
    xv = rng.randn(2, 7, 6, 3)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [2, 7, 6, 3])
        biggest = og.layers.max_pooling2d(x, 3, 2, padding=padding)
        mean = og.layers.average_pooling2d(x, (2, 3), (2, 2), padding=padding)
    got_max, got_mean = og.Session(g).run([biggest, mean], {x: xv})
    np.testing.assert_array_equal(got_max, windows(xv, 3, 3, 2, 1, padding, -np.inf)
                                  .max(axis=(3, 4)))
    summed = windows(xv, 2, 3, 2, 1, padding, 0.0).sum(axis=(3, 4))
    count = windows(np.ones((2, 7, 6, 3)), 2, 3, 2, 1, padding, 0.0).sum(axis=(3, 4))
    np.testing.assert_allclose(got_mean, summed / count, rtol=1e-12)   # padding not counted


def test_dense_variables_sharing_and_regularizers():
    rng = np.random.RandomState(2)
    xv = rng.randn(3, 5, 4)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3, 5, 4])
        y = og.layers.dense(x, 2, activation=og.nn.relu, name="fc",
                            kernel_initializer=og.random_normal_initializer(seed=1),
                            kernel_regularizer=lambda w: og.reduce_sum(og.abs(w)),
                            activity_regularizer=lambda t: og.reduce_mean(t))
        again = og.layers.dense(x, 2, activation=og.nn.relu, name="fc", reuse=True,
                                kernel_regularizer=lambda w: og.reduce_sum(og.abs(w)))
        frozen = og.layers.dense(x, 3, use_bias=False, trainable=False)
        with pytest.raises(ValueError, match="already exists"):
            og.layers.dense(x, 2, name="fc")
        reg = og.losses.get_regularization_losses()
    assert [v.name for v in og.global_variables(g)] == ["fc/kernel", "fc/bias",
                                                        "dense/kernel"]
    assert [v.name for v in og.trainable_variables(g)] == ["fc/kernel", "fc/bias"]
    assert len(reg) == 2   # the kernel's once (not again on reuse), the activity's
    sess = _session(g)
    got, got_again, k, b, losses = sess.run(
        [y, again, og.global_variables(g)[0], og.global_variables(g)[1], reg], {x: xv})
    want = np.maximum(xv @ k + b, 0)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_array_equal(got_again, got)
    np.testing.assert_allclose(losses, [np.abs(k).sum(), want.mean()], rtol=1e-12)
    assert sess.run(frozen, {x: xv}).shape == (3, 5, 3)


def test_batch_normalization_trains_and_serves_as_tf1():
    rng = np.random.RandomState(3)
    xv = rng.randn(4, 3, 3, 2) * 2 + 1
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [4, 3, 3, 2])
        training = og.placeholder_with_default(False, [], name="training")
        y = og.layers.batch_normalization(x, training=training, momentum=0.9,
                                          gamma_initializer=og.constant_initializer(2.0))
        plain = og.layers.batch_normalization(x, training=True, center=False, scale=False)
        updates = og.get_collection(og.UPDATE_OPS)
        names = [v.name for v in og.global_variables()]
    assert names == ["batch_normalization/gamma", "batch_normalization/beta",
                     "batch_normalization/moving_mean",
                     "batch_normalization/moving_variance",
                     "batch_normalization_1/moving_mean",
                     "batch_normalization_1/moving_variance"]
    sess = _session(g)
    mean, var = xv.mean((0, 1, 2)), xv.var((0, 1, 2))
    got, got_plain = sess.run([y, plain], {x: xv, training: True})
    np.testing.assert_allclose(got, 2 * (xv - mean) / np.sqrt(var + 1e-3), rtol=1e-12)
    np.testing.assert_allclose(got_plain, (xv - mean) / np.sqrt(var + 1e-3), rtol=1e-12)
    sess.run(updates[:2], {x: xv, training: True})
    served = sess.run(y, {x: xv})
    moving_mean, moving_var = 0.1 * mean, 0.9 + 0.1 * var
    np.testing.assert_allclose(served, 2 * (xv - moving_mean) / np.sqrt(moving_var + 1e-3),
                               rtol=1e-12)


def test_float16_batch_normalization_keeps_float32_parameters_and_tf1_arguments():
    """(review: float16 moving averages drifted: 998.5 for 1000 after 1000 updates)"""
    xv = np.full((4, 2), 1000.0, np.float16) + np.array([[1], [-1], [2], [-2]], np.float16)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float16, [4, 2])
        y = og.layers.batch_normalization(x, training=True, momentum=0.5, fused=True)
        updates = og.get_collection(og.UPDATE_OPS)
        moving_mean = og.global_variables()[2]
        with pytest.raises(OneGraphError, match="gamma_constraint is not supported"):
            og.layers.batch_normalization(x, gamma_constraint=lambda v: v)
        with pytest.raises(OneGraphError, match="kernel_constraint is not supported"):
            og.layers.dense(x, 2, kernel_constraint=lambda v: v)
        with pytest.raises(OneGraphError, match="renorm is not supported"):
            og.layers.batch_normalization(x, renorm=True)
    assert moving_mean.dtype == og.float32
    sess = _session(g)
    for _ in range(20):
        got = sess.run([y] + updates, {x: xv})[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(sess.run(moving_mean), [1000.0, 1000.0], rtol=1e-6)
    centered = xv.astype(np.float32) - 1000.0
    np.testing.assert_allclose(got, centered / np.sqrt(centered.var(0) + 1e-3), rtol=2e-3)


def test_dropout_and_flatten():
    rng = np.random.RandomState(4)
    xv = rng.randn(2, 3, 4, 5).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2, 3, 4, 5])
        kept = og.layers.dropout(x, 0.5)   # TF1's default: training=False
        dropped = og.layers.dropout(x, 0.25, training=True)
        flat = og.layers.flatten(x)
        flat_first = og.layers.flatten(x, data_format="channels_first")
        with pytest.raises(OneGraphError, match="noise_shape"):
            og.layers.dropout(x, 0.5, noise_shape=[2, 1, 1, 5])
        with pytest.raises(OneGraphError, match="seed"):
            og.layers.dropout(x, 0.5, seed=3)
    got_kept, got_dropped, got_flat, got_first = og.Session(g, seed=0).run(
        [kept, dropped, flat, flat_first], {x: xv})
    np.testing.assert_array_equal(got_kept, xv)
    assert set(np.unique(np.isclose(got_dropped, xv / 0.75) | (got_dropped == 0))) == {True}
    np.testing.assert_array_equal(got_flat, xv.reshape(2, -1))
    np.testing.assert_array_equal(got_first, xv.transpose(0, 2, 3, 1).reshape(2, -1))


def test_bad_arguments_are_refused_while_building():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [1, 5, 5, 2])
        with pytest.raises(ValueError, match="data_format"):
            og.layers.conv2d(x, 2, 3, data_format="NHWC")
        with pytest.raises(ValueError, match="padding must be 'same' or 'valid'"):
            og.layers.max_pooling2d(x, 2, 2, padding="full")
        with pytest.raises(ValueError, match="dilation_rate"):
            og.layers.conv2d(x, 2, 3, strides=2, dilation_rate=2)
        with pytest.raises(ShapeError, match="must be 4-D"):
            og.layers.conv2d(og.placeholder(og.float32, [1, 5, 2]), 2, 3)
        with pytest.raises(ShapeError, match="floating point"):
            og.layers.dense(og.placeholder(og.int32, [1, 5]), 2)
        with pytest.raises(TypeError, match="kernel_regularizer must be a function"):
            og.layers.dense(og.layers.flatten(x), 2, kernel_regularizer=0.1)
        with pytest.raises(ShapeError, match="must give a scalar"):
            og.layers.dense(og.layers.flatten(x), 2, kernel_regularizer=lambda w: w)
        with pytest.raises(ShapeError, match="axis 4 must be a known dim"):
            og.layers.batch_normalization(x, axis=4)


def test_small_nhwc_network_exports_and_runs_in_onnxruntime():
    rng = np.random.RandomState(5)
    xv = rng.randn(2, 8, 8, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2, 8, 8, 3], name="images")
        h = og.layers.conv2d(x, 4, 3, padding="same", activation=og.nn.relu)
        h = og.layers.max_pooling2d(h, 2, 2)
        h = og.layers.batch_normalization(h, training=False)
        h = og.layers.average_pooling2d(h, 3, 1, padding="same")
        logits = og.layers.dense(og.layers.flatten(h), 5)
        sig = og.signature({"images": x}, {"logits": logits})
    sess = _session(g)
    want = sess.run(logits, {x: xv})
    proto = to_onnx(g, signatures={"serving": sig}, session=sess)
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(["logits"], {"images": xv})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

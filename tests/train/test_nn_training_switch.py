"""og.nn.batch_norm and og.nn.dropout with a run-time `training` tensor (TF1's
is_training placeholder): each mode against numpy, the moving averages updated only in
training runs, and the ONNX export (an If, and Dropout's training_mode input) run by
onnxruntime."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ShapeError

EPS = 1e-3


def _model():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3], name="x")
        training = og.placeholder_with_default(False, [], name="training")
        h = og.nn.batch_norm(x * 2.0, training, momentum=0.5, epsilon=EPS)
        loss = og.reduce_mean(og.square(h - 1.0))
        step = og.train.GradientDescentOptimizer(0.1).minimize(loss)
    moving = {v.name.split("/")[-1]: v for v in og.global_variables(g)
              if "moving" in v.name}
    gamma, beta = [v for v in og.trainable_variables(g)]
    return g, x, training, h, step, moving, (gamma, beta)


def _normalized(x, mean, var, gamma, beta):
    return (x - mean) / np.sqrt(var + EPS) * gamma + beta


def test_batch_norm_switches_statistics_and_updates_only_when_training():
    g, x, training, h, step, moving, (gamma, beta) = _model()
    data = np.random.RandomState(0).randn(8, 3).astype(np.float32)
    scaled = data * 2
    with og.Session(g) as sess:
        sess.run(og.global_variables_initializer())
        inference = sess.run(h, {x: data})  # the default: moving statistics
        np.testing.assert_allclose(inference, _normalized(scaled, 0, 1, 1, 0), rtol=1e-5)
        trained = sess.run(h, {x: data, training: True})
        np.testing.assert_allclose(
            trained, _normalized(scaled, scaled.mean(0), scaled.var(0), 1, 0), rtol=1e-4,
            atol=1e-5)
        sess.run(step, {x: data, training: True})
        mean, var = sess.run([moving["moving_mean"], moving["moving_variance"]])
        np.testing.assert_allclose(mean, 0.5 * scaled.mean(0), rtol=1e-5)
        np.testing.assert_allclose(var, 0.5 + 0.5 * scaled.var(0), rtol=1e-5)
        sess.run(step, {x: data})  # an inference-mode step leaves the averages
        np.testing.assert_array_equal(sess.run(moving["moving_mean"]), mean)
        g_value, b_value = sess.run([gamma, beta])
        served = sess.run(h, {x: data})
        np.testing.assert_allclose(served, _normalized(scaled, mean, var, g_value, b_value),
                                   rtol=1e-4, atol=1e-5)
        model = g.to_model(signatures={"serving": og.signature(
            {"x": x, "training": training}, {"h": h})}, session=sess)
    proto = to_onnx(model)
    assert "If" in [n.op_type for n in proto.graph.node]
    ort_sess = ort.InferenceSession(proto.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
    (got,) = ort_sess.run(None, {"x": data})
    np.testing.assert_allclose(got, served, rtol=1e-5, atol=1e-6)
    (got,) = ort_sess.run(None, {"x": data, "training": np.array(True)})
    np.testing.assert_allclose(got, _normalized(scaled, scaled.mean(0), scaled.var(0),
                                                g_value, b_value), rtol=1e-4, atol=1e-5)


def test_dropout_with_a_training_tensor():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [1000], name="x")
        training = og.placeholder_with_default(False, [], name="training")
        y = og.nn.dropout(x, rate=0.25, training=training)
    ones = np.ones(1000, np.float32)
    sess = og.Session(g, seed=3)
    np.testing.assert_array_equal(sess.run(y, {x: ones}), ones)
    dropped = sess.run(y, {x: ones, training: True})
    assert set(np.unique(dropped)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.18 < (dropped == 0).mean() < 0.32
    proto = to_onnx(g.to_model(signatures={"serving": og.signature(
        {"x": x, "training": training}, {"y": y})}))
    # onnxruntime's optimizer drops a Dropout whose training_mode has an initializer,
    # even when the input is fed: run the export as written
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    ort_sess = ort.InferenceSession(proto.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(ort_sess.run(None, {"x": ones})[0], ones)
    fed = ort_sess.run(None, {"x": ones, "training": np.array(True)})[0]
    assert 0.18 < (fed == 0).mean() < 0.32


def test_a_training_tensor_must_be_a_bool_scalar():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3], name="x")
        with pytest.raises(ShapeError, match="batch_norm: training must be a bool tensor"):
            og.nn.batch_norm(x, og.constant(1.0))
        with pytest.raises(ShapeError, match="dropout: training must be a scalar"):
            og.nn.dropout(x, rate=0.5, training=og.constant([True, False]))
        with pytest.raises(TypeError, match="dropout: training must be a bool"):
            og.nn.dropout(x, rate=0.5, training="yes")

"""og.losses (TF1's tf.losses) against numpy spellings of TF1's formulas, gradients by
central differences, and one export run by onnxruntime."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ShapeError

R = og.losses.Reduction


def _reduce(losses, weights, reduction):
    """TF1's compute_weighted_loss in numpy."""
    weights = np.broadcast_to(np.asarray(weights, losses.dtype), losses.shape)
    weighted = losses * weights
    if reduction == R.NONE:
        return weighted
    total = weighted.sum()
    count = {R.SUM: 1.0, R.MEAN: weights.sum(), R.SUM_OVER_BATCH_SIZE: losses.size,
             R.SUM_BY_NONZERO_WEIGHTS: np.count_nonzero(weights)}[reduction]
    return total / count if count else 0.0


def _softmax_xent(labels, logits):
    shifted = logits - logits.max(-1, keepdims=True)
    return -(labels * (shifted - np.log(np.exp(shifted).sum(-1, keepdims=True)))).sum(-1)


def _sigmoid_xent(z, x):
    return -z * np.log(1 / (1 + np.exp(-x))) - (1 - z) * np.log(1 - 1 / (1 + np.exp(-x)))


ELEMENTWISE = {
    "absolute_difference": lambda y, p: np.abs(p - y),
    "mean_squared_error": lambda y, p: (p - y) ** 2,
    "huber_loss": lambda y, p: np.where(np.abs(p - y) <= 1.0, 0.5 * (p - y) ** 2,
                                        np.abs(p - y) - 0.5),
    "log_loss": lambda y, p: -y * np.log(p + 1e-7) - (1 - y) * np.log(1 - p + 1e-7),
    "hinge_loss": lambda y, x: np.maximum(0.0, 1 - (2 * y - 1) * x),
    "sigmoid_cross_entropy": _sigmoid_xent,
}


def _inputs(name, rng):
    labels = rng.rand(4, 3)
    if name == "hinge_loss":
        labels = (labels > 0.5).astype(np.float64)
    preds = rng.rand(4, 3) * 0.9 + 0.05 if name == "log_loss" else rng.randn(4, 3) * 1.5
    return labels, preds


WEIGHTS = {"one": 1.0, "scalar": 2.5, "rows": np.array([[1.0], [0.0], [2.0], [0.5]]),
           "full": np.array([[1, 0, 2], [0, 0, 0], [3, 1, 1], [0.5, 0, 1]], np.float64),
           "zeros": np.zeros((4, 1))}


def _session_value_and_grad(build, feeds_arrays):
    """The loss and d(sum of the loss)/d(predictions) from a Session, for float64 inputs."""
    g = og.Graph()
    with g.as_default():
        holders = [og.placeholder(og.float64, a.shape) for a in feeds_arrays]
        loss = build(*holders)
        grad = og.gradients(og.reduce_sum(loss), [holders[1]])[0]
    sess = og.Session(g)
    return lambda arrays: sess.run([loss, grad], dict(zip(holders, arrays)))


def _central_difference(fn, arrays, eps=1e-6):
    x = arrays[1]
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (np.sum(fn([arrays[0], up])) - np.sum(fn([arrays[0], down]))) / (2 * eps)
    return grad


@pytest.mark.parametrize("weights", sorted(WEIGHTS))
@pytest.mark.parametrize("reduction", [R.NONE, R.SUM, R.MEAN, R.SUM_OVER_BATCH_SIZE,
                                       R.SUM_BY_NONZERO_WEIGHTS])
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_losses_weight_and_reduce_as_tf1(name, reduction, weights):
    rng = np.random.RandomState(len(name))
    labels, preds = _inputs(name, rng)
    w = WEIGHTS[weights]
    fn = getattr(og.losses, name)
    run = _session_value_and_grad(
        lambda y, p: fn(y, p, weights=w, reduction=reduction), [labels, preds])
    loss, grad = run([labels, preds])
    want = _reduce(ELEMENTWISE[name](labels, preds), w, reduction)
    np.testing.assert_allclose(loss, want, rtol=1e-10, atol=1e-12)
    numeric = _central_difference(lambda a: run(a)[0], [labels, preds])
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("reduction", [R.SUM_BY_NONZERO_WEIGHTS, R.MEAN])
@pytest.mark.parametrize("smoothing", [0, 0.2])
def test_softmax_cross_entropy_smooths_labels_and_weights_examples(smoothing, reduction):
    rng = np.random.RandomState(3)
    logits = rng.randn(5, 4) * 2
    onehot = np.eye(4)[rng.randint(0, 4, 5)]
    w = np.array([1.0, 0.0, 2.0, 0.5, 1.0])
    run = _session_value_and_grad(
        lambda y, x: og.losses.softmax_cross_entropy(
            y, x, weights=w, label_smoothing=smoothing, reduction=reduction),
        [onehot, logits])
    loss, grad = run([onehot, logits])
    smoothed = onehot * (1 - smoothing) + smoothing / 4
    np.testing.assert_allclose(loss, _reduce(_softmax_xent(smoothed, logits), w, reduction),
                               rtol=1e-10)
    np.testing.assert_allclose(grad, _central_difference(lambda a: run(a)[0], [onehot, logits]),
                               rtol=1e-5, atol=1e-7)


def test_softmax_cross_entropy_sends_no_gradient_to_the_labels():
    g = og.Graph()
    with g.as_default():
        y = og.placeholder(og.float32, [2, 3])
        x = og.placeholder(og.float32, [2, 3])
        grads = og.gradients(og.losses.softmax_cross_entropy(y, x), [y, x])
    assert grads[0] is None and grads[1] is not None


def test_sparse_softmax_cross_entropy_squeezes_labels_and_weights_of_a_trailing_one():
    rng = np.random.RandomState(4)
    logits = rng.randn(6, 5)
    ids = rng.randint(0, 5, 6)
    w = np.array([[1.0], [0.0], [3.0], [1.0], [0.0], [2.0]])
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [6, 5])
        loss = og.losses.sparse_softmax_cross_entropy(ids[:, None], x, weights=w)
        grad = og.gradients(loss, [x])[0]
    sess = og.Session(g)
    got, got_grad = sess.run([loss, grad], {x: logits})
    per_example = _softmax_xent(np.eye(5)[ids], logits)
    np.testing.assert_allclose(got, (per_example * w[:, 0]).sum() / 4, rtol=1e-12)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(got_grad, (probs - np.eye(5)[ids]) * w / 4, rtol=1e-10)


def test_sigmoid_cross_entropy_with_logits_is_stable_and_differentiable_at_zero():
    x = np.array([-100.0, -3.0, 0.0, 0.0, 2.0, 100.0])
    z = np.array([0.0, 0.3, 1.0, 0.0, 0.5, 1.0])
    g = og.Graph()
    with g.as_default():
        logits = og.placeholder(og.float64, [6])
        loss = og.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=logits)
        grad = og.gradients(og.reduce_sum(loss), [logits])[0]
    got, got_grad = og.Session(g).run([loss, grad], {logits: x})
    want = np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got_grad, 1 / (1 + np.exp(-x)) - z, rtol=1e-12, atol=1e-40)


def test_sigmoid_cross_entropy_label_smoothing():
    rng = np.random.RandomState(5)
    z = (rng.rand(3, 4) > 0.5).astype(np.float64)
    x = rng.randn(3, 4)
    g = og.Graph()
    with g.as_default():
        loss = og.losses.sigmoid_cross_entropy(z, og.constant(x), label_smoothing=0.1)
    got = og.Session(g).run(loss)
    np.testing.assert_allclose(got, _sigmoid_xent(z * 0.9 + 0.05, x).mean(), rtol=1e-12)


def test_cosine_distance_sums_over_its_axis():
    rng = np.random.RandomState(6)
    a = rng.randn(4, 3)
    b = rng.randn(4, 3)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    g = og.Graph()
    with g.as_default():
        per_row = og.losses.cosine_distance(a, og.constant(b), axis=1,
                                            reduction=R.NONE)
        mean = og.losses.cosine_distance(a, og.constant(b), dim=1)
    got_rows, got_mean = og.Session(g).run([per_row, mean])
    want = 1 - (a * b).sum(1, keepdims=True)
    np.testing.assert_allclose(got_rows, want, rtol=1e-12)
    np.testing.assert_allclose(got_mean, want.mean(), rtol=1e-12)


def test_all_zero_weights_give_zero_and_a_finite_gradient():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [3])
        loss = og.losses.mean_squared_error([1.0, 2.0, 3.0], p, weights=[0.0, 0.0, 0.0])
        grad = og.gradients(loss, [p])[0]
    got, got_grad = og.Session(g).run([loss, grad], {p: np.zeros(3, np.float32)})
    assert got == 0.0
    np.testing.assert_array_equal(got_grad, np.zeros(3))


def test_float16_losses_are_reduced_in_float32_and_returned_as_float16():
    values = np.full(4096, 0.1, np.float16)
    g = og.Graph()
    with g.as_default():
        loss = og.losses.compute_weighted_loss(og.constant(values), reduction=R.SUM)
    got = og.Session(g).run(loss)
    assert got.dtype == np.float16
    # summed in float16 the total stalls at 256 (the spacing there is 0.25)
    assert got == np.float16(np.float32(values.astype(np.float32).sum()))


def test_pairwise_losses_compute_half_and_int_predictions_in_float32_as_tf1():
    """(review: float16 mean_squared_error of 300 overflowed to inf in float16)"""
    g = og.Graph()
    with g.as_default():
        half = og.losses.mean_squared_error(np.zeros(4, np.float16),
                                            og.constant(np.array([300, 0, 0, 0], np.float16)),
                                            reduction=R.SUM)
        ints = og.losses.absolute_difference([1, 2], og.constant(np.array([4, 0], np.int32)))
        logistic = og.losses.log_loss(np.array([1, 0], np.float16),
                                      og.constant(np.array([0, 1], np.float16)))
    got_half, got_ints, got_log = og.Session(g).run([half, ints, logistic])
    assert got_half.dtype == np.float32 and got_half == 90000.0
    assert got_ints.dtype == np.float32 and got_ints == 2.5
    np.testing.assert_allclose(got_log, -np.log(np.float32(1e-7)), rtol=1e-6)


def test_tf1_names_and_squeezable_unknown_dims():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [None, 3])
        assert og.losses.mean_squared_error(p, p).name == "mean_squared_error/value"
        assert og.losses.cosine_distance(p, p, axis=1).name.startswith("cosine_distance_loss/")
        assert og.losses.sigmoid_cross_entropy(p, p).name.startswith(
            "sigmoid_cross_entropy_loss/")
        labels = og.placeholder(og.int64, [None, None])   # TF1 squeezes an unknown last dim
        weights = og.placeholder(og.float32, [None, None])
        loss = og.losses.sparse_softmax_cross_entropy(labels, p, weights=weights)
        smooth = og.losses.softmax_cross_entropy(p, p, label_smoothing=np.float32(0.1))
        dist = og.losses.cosine_distance(p, p, axis=np.int64(1))
        with pytest.raises(ValueError, match="delta must be positive"):
            og.losses.huber_loss(p, p, delta=np.float32(0))
    logits = np.array([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]], np.float32)
    got = og.Session(g).run(loss, {p: logits, labels: [[1], [2]], weights: [[1.0], [3.0]]})
    shifted = logits - logits.max(1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    np.testing.assert_allclose(got, -(log_probs[0, 1] + 3 * log_probs[1, 2]) / 2, rtol=1e-6)
    assert smooth is not None and dist is not None


def test_collections_total_loss_and_scope_filter():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [2])
        with og.name_scope("tower_0"):
            a = og.losses.absolute_difference([0.0, 0.0], p)
        b = og.losses.mean_squared_error([0.0, 0.0], p)
        og.losses.mean_squared_error([1.0, 1.0], p, loss_collection=None)
        og.add_to_collection(og.REGULARIZATION_LOSSES, og.nn.l2_loss(p))
        assert og.losses.get_losses() == [a, b]
        assert og.losses.get_losses(scope="tower_0") == [a]
        assert og.get_collection(og.LOSSES, "mean") == [b]
        total = og.losses.get_total_loss()
        data_only = og.losses.get_total_loss(add_regularization_losses=False)
        reg = og.losses.get_regularization_loss()
    got = og.Session(g).run([total, data_only, reg], {p: np.array([1.0, -3.0], np.float32)})
    np.testing.assert_allclose(got, [2.0 + 5.0 + 5.0, 7.0, 5.0])


def test_total_loss_without_losses_is_refused_and_regularization_loss_is_zero():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="no losses"):
            og.losses.get_total_loss()
        zero = og.losses.get_regularization_loss()
    assert og.Session(g).run(zero) == 0.0


def test_bad_arguments_are_refused_while_building():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [4, 3])
        with pytest.raises(ValueError, match="Invalid Reduction Key"):
            og.losses.mean_squared_error(p, p, reduction="mean")
        with pytest.raises(ShapeError, match=r"weights \(3,\) cannot weight losses \(4, 3\)"):
            og.losses.mean_squared_error(p, p, weights=np.ones(3, np.float32))
        with pytest.raises(ShapeError, match=r"incompatible"):
            og.losses.absolute_difference(np.zeros((4, 2), np.float32), p)
        with pytest.raises(TypeError, match="predictions must be a numeric tensor"):
            og.losses.mean_squared_error(p, og.constant(np.ones((4, 3), np.bool_)))
        with pytest.raises(ValueError, match="must specify 'axis'"):
            og.losses.cosine_distance(p, p)
        with pytest.raises(ValueError, match="label_smoothing"):
            og.losses.softmax_cross_entropy(p, p, label_smoothing=1.5)
        with pytest.raises(ValueError, match="delta must be positive"):
            og.losses.huber_loss(p, p, delta=0)
        with pytest.raises(TypeError, match="needs labels= and logits="):
            og.nn.sigmoid_cross_entropy_with_logits(logits=p)
        with pytest.raises(TypeError, match="scope must be a str"):
            og.get_collection(og.LOSSES, scope=3)


def test_weighted_softmax_loss_exports_and_runs_in_onnxruntime():
    rng = np.random.RandomState(7)
    logits = rng.randn(5, 4).astype(np.float32)
    onehot = np.eye(4, dtype=np.float32)[rng.randint(0, 4, 5)]
    w = np.array([1, 0, 2, 1, 0.5], np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [5, 4], name="x")
        y = og.placeholder(og.float32, [5, 4], name="y")
        loss = og.losses.softmax_cross_entropy(y, x, weights=w, label_smoothing=0.1)
        sig = og.signature({"x": x, "y": y}, {"loss": loss})
    proto = to_onnx(g, signatures={"serving": sig})
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(["loss"], {"x": logits, "y": onehot})[0]
    want = _reduce(_softmax_xent(onehot.astype(np.float64) * 0.9 + 0.025,
                                 logits.astype(np.float64)), w.astype(np.float64),
                   R.SUM_BY_NONZERO_WEIGHTS)
    np.testing.assert_allclose(got, want, rtol=1e-5)

"""og.metrics (TF1's tf.metrics) streamed over several batches against numpy over all
the batches at once, with weights, resets and collections."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ShapeError

BATCHES = [(np.array([1, 0, 1, 1]), np.array([1, 1, 0, 1]), np.array([1.0, 2.0, 0.0, 1.0])),
           (np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([0.5, 1.0, 3.0])),
           (np.array([1, 1]), np.array([0, 0]), np.array([1.0, 1.0]))]


def _stream(build, weighted):
    """The metric's value after streaming BATCHES through its update_op, the update
    op's last result, and numpy's labels, predictions and weights concatenated."""
    g = og.Graph()
    with g.as_default():
        y = og.placeholder(og.int64, [None], name="y")
        p = og.placeholder(og.int64, [None], name="p")
        w = og.placeholder(og.float32, [None], name="w")
        value, update = build(y, p, w if weighted else None)
        reset = og.local_variables_initializer()
    sess = og.Session(g)
    for labels, preds, weights in BATCHES:
        last = sess.run(update, {y: labels, p: preds, w: weights})
    final = sess.run(value)
    sess.run(reset)
    assert sess.run(value) == 0.0
    ys, ps, ws = (np.concatenate(parts) for parts in zip(*BATCHES))
    return final, last, ys.astype(float), ps.astype(float), ws if weighted else np.ones(len(ys))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", ["accuracy", "mean_squared_error", "mean_absolute_error",
                                  "root_mean_squared_error", "precision", "recall"])
def test_streamed_metrics_equal_the_metric_of_all_batches(name, weighted):
    fn = getattr(og.metrics, name)
    final, last, y, p, w = _stream(lambda a, b, c: fn(a, b, weights=c), weighted)
    tp, fp, fn_ = (w * ((y == 1) & (p == 1))).sum(), (w * ((y == 0) & (p == 1))).sum(), \
        (w * ((y == 1) & (p == 0))).sum()
    want = {"accuracy": (w * (y == p)).sum() / w.sum(),
            "mean_squared_error": (w * (p - y) ** 2).sum() / w.sum(),
            "mean_absolute_error": (w * abs(p - y)).sum() / w.sum(),
            "root_mean_squared_error": np.sqrt((w * (p - y) ** 2).sum() / w.sum()),
            "precision": tp / (tp + fp), "recall": tp / (tp + fn_)}[name]
    np.testing.assert_allclose(final, want, rtol=1e-6)
    np.testing.assert_allclose(last, want, rtol=1e-6)   # the update op gives it too


def test_mean_of_weighted_values_collections_and_zero_weight():
    g = og.Graph()
    with g.as_default():
        v = og.placeholder(og.float32, [None, 2])
        w = og.placeholder(og.float32, [None, 1])
        value, update = og.metrics.mean(v, w, metrics_collections=["m"],
                                        updates_collections=["u"])
        assert og.get_collection("m") == [value] and og.get_collection("u") == [update]
        assert [x.name for x in og.get_collection(og.METRIC_VARIABLES)] == [
            "mean/total", "mean/count"]
        assert og.global_variables() == []
        with pytest.raises(ShapeError, match="cannot weight"):
            og.metrics.mean(v, og.placeholder(og.float32, [None, 3]))
    sess = og.Session(g)
    assert sess.run(update, {v: np.ones((2, 2)), w: np.zeros((2, 1))}) == 0.0
    sess.run(update, {v: [[1, 2], [3, 4]], w: [[1], [3]]})
    np.testing.assert_allclose(sess.run(value), (1 + 2 + 9 + 12) / 8, rtol=1e-6)


def test_metric_arguments_are_checked():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [3])
        with pytest.raises(ShapeError, match="must have the same shape"):
            og.metrics.accuracy(a, og.placeholder(og.float32, [4]))
        with pytest.raises(TypeError, match="list of collection names"):
            og.metrics.mean(a, metrics_collections="m")
        with pytest.raises(TypeError, match="numbers or bools"):
            og.metrics.mean(og.constant(np.array(["x"])))

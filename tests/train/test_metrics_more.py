"""og.metrics' counts at thresholds, auc, sensitivity/specificity, mean_iou,
mean_per_class_accuracy and the cosine/relative/tensor means against TensorFlow's
tf.compat.v1.metrics: update_op's result and the value after each of three batches,
recorded in data/tf1_metrics_reference.npz by `tools/record_tf1_reference.py metrics`
(TensorFlow 2.21, graph mode); errors and run-time checks."""

import os

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError

from . import tf1_reference
from .tf1_metrics_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    path = os.path.join(tf1_reference.DATA, "tf1_metrics_reference.npz")
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)


def _run(reference, case):
    name, path, args, kwargs = case
    g = og.Graph()
    with g.as_default():
        holders = {}

        def value(v):
            if isinstance(v, str) and v.startswith("@"):
                key = v[1:]
                if key not in holders:
                    a = reference[f"in/{key}"]
                    holders[key] = og.placeholder(a.dtype, a.shape[1:], name=key)
                return holders[key]
            return v

        metric, update = tf1_reference.function(path)(
            *[value(a) for a in args], **{k: value(v) for k, v in kwargs.items()})
        sess = og.Session(g)
        sess.run(og.local_variables_initializer())
        batches = len(reference[f"in/{next(iter(holders))}"])
        got = []
        for b in range(batches):
            feed = {holders[k]: reference[f"in/{k}"][b] for k in holders}
            got.append((sess.run(update, feed), sess.run(metric)))
    return got


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow_batch_by_batch(reference, case):
    name = case[0]
    for b, (update, value) in enumerate(_run(reference, case)):
        for kind, got in (("update", update), ("value", value)):
            want = reference[f"{kind}/{name}/{b}"]
            assert got.shape == want.shape, (kind, b)
            assert got.dtype == want.dtype, (kind, b)
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-7,
                                       err_msg=f"{kind} after batch {b}")


@pytest.mark.parametrize("fn,args,kinds", [
    (og.metrics.auc, (), ("true_positives", "false_negatives", "true_negatives",
                          "false_positives")),
    (og.metrics.sensitivity_at_specificity, (0.5,), ("true_positives", "false_negatives",
                                                     "true_negatives", "false_positives")),
    (og.metrics.specificity_at_sensitivity, (0.5,), ("true_positives", "false_negatives",
                                                     "true_negatives", "false_positives")),
    (og.metrics.precision_at_thresholds, ([0.5],), ("true_positives", "false_positives")),
    (og.metrics.recall_at_thresholds, ([0.5],), ("true_positives", "false_negatives")),
])
@pytest.mark.parametrize("name", [None, "m"])
def test_metrics_at_thresholds_scope_and_collect_as_tf1(fn, args, kinds, name):
    # TF1's _confusion_matrix_at_thresholds: the counts it includes, tp fn tn fp in that
    # order, as metric variables in the metric's scope (its name, else its own)
    g = og.Graph()
    with g.as_default():
        y = og.placeholder(og.bool_, [4])
        p = og.placeholder(og.float32, [4])
        value, update = fn(y, p, *args, metrics_collections=["v"], updates_collections=["u"],
                           name=name)
        assert og.get_collection("v") == [value] and og.get_collection("u") == [update]
        scope = name or fn.__name__
        assert [x.name for x in og.get_collection(og.METRIC_VARIABLES)] == [
            f"{scope}/{kind}" for kind in kinds]
        assert value.op.name.startswith(f"{scope}/") and update.op.name.startswith(f"{scope}/")


def test_local_variables_initializer_restarts_the_counts():
    g = og.Graph()
    with g.as_default():
        y = og.placeholder(og.int64, [None])
        p = og.placeholder(og.float32, [None])
        auc, update = og.metrics.auc(y, p, num_thresholds=5)
        tp, tp_update = og.metrics.true_positives_at_thresholds(y, p, [0.5])
        sess = og.Session(g)
        feed = {y: np.asarray([1, 0, 1]), p: np.asarray([0.9, 0.2, 0.4], np.float32)}
        sess.run([update, tp_update], feed)
        sess.run([update, tp_update], feed)
        assert sess.run(tp) == [2.0]
        sess.run(og.local_variables_initializer())
        assert sess.run(tp) == [0.0]
        assert set(og.local_variables()) >= set(og.get_collection(og.GraphKeys.METRIC_VARIABLES))
        assert not set(og.global_variables()) & set(og.local_variables())


def test_bad_arguments_are_named_errors():
    y = og.constant(np.asarray([1, 0, 1]))
    p = og.constant(np.asarray([0.9, 0.2, 0.4], np.float32))
    cases = [
        (lambda: og.metrics.auc(y, p, curve="DET"), ValueError, "curve"),
        (lambda: og.metrics.auc(y, p, summation_method="simpson"), ValueError,
         "summation_method"),
        (lambda: og.metrics.auc(y, p, num_thresholds=1), ValueError, "num_thresholds"),
        (lambda: og.metrics.precision_at_thresholds(y, p, []), ValueError, "empty"),
        (lambda: og.metrics.recall_at_thresholds(y, p, ["a"]), TypeError, "thresholds"),
        (lambda: og.metrics.sensitivity_at_specificity(y, p, 1.5), ValueError, "[0, 1]"),
        (lambda: og.metrics.specificity_at_sensitivity(y, p, -0.1), ValueError, "[0, 1]"),
        (lambda: og.metrics.mean_iou(y, p, 0), ValueError, "num_classes"),
        (lambda: og.metrics.mean_iou(y, og.constant([1, 2]), 3), ShapeError, "same size"),
        (lambda: og.metrics.mean_per_class_accuracy(y, og.constant([True, False, True]), 2),
         ShapeError, "class ids"),
        (lambda: og.metrics.true_positives(y, og.constant([1, 0])), ShapeError,
         "same shape"),
        (lambda: og.metrics.mean_tensor(og.placeholder(og.float32, [None, 2])), ShapeError,
         "fully known shape"),
        (lambda: og.metrics.mean_cosine_distance(p, p, "0"), TypeError, "dim"),
        (lambda: og.metrics.auc(y, p, metrics_collections="m"), TypeError,
         "metrics_collections"),
        (lambda: og.metrics.recall_at_k(y, og.constant(np.zeros((3, 4))), 0), ValueError,
         "k must be >= 1"),
        (lambda: og.metrics.precision_at_k(p, og.constant(np.zeros((3, 4))), 2),
         ShapeError, "labels"),
        (lambda: og.metrics.recall_at_top_k(og.constant(np.zeros((3, 1, 1), np.int64)),
                                            og.constant(np.zeros((3,), np.int64))),
         ShapeError, "rank"),
        (lambda: og.metrics.average_precision_at_k(y, og.constant(np.zeros((3, 4))), 2,
                                                   weights=og.constant(np.ones((2, 3, 1)))),
         ShapeError, "cannot weight"),
    ]
    for fn, error, message in cases:
        with og.Graph().as_default():
            y = og.constant(np.asarray([1, 0, 1]))
            p = og.constant(np.asarray([0.9, 0.2, 0.4], np.float32))
            with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]")):
                fn()


@pytest.mark.parametrize("build, feed, message", [
    (lambda y, p: og.metrics.auc(y, p), [1.2, 0.5], "predictions must be in \\[0, 1\\]"),
    (lambda y, p: og.metrics.precision_at_thresholds(y, p, [0.5]), [-0.1, 0.5],
     "predictions must be in \\[0, 1\\]"),
    (lambda y, p: og.metrics.mean_iou(y, og.cast(p * 10, og.int64), 3), [0.5, 0.1],
     "predictions"),
    (lambda y, p: og.metrics.mean_per_class_accuracy(y * 5, og.cast(p, og.int64), 3),
     [0.5, 0.1], "labels must be in \\[0, 3\\)"),
])
def test_out_of_range_values_fail_when_update_runs(build, feed, message):
    g = og.Graph()
    with g.as_default():
        y = og.placeholder(og.int64, [None])
        p = og.placeholder(og.float32, [None])
        _, update = build(y, p)
        with pytest.raises(ExecutionError, match=message):
            og.Session(g).run(update, {y: np.asarray([1, 0]),
                                       p: np.asarray(feed, np.float32)})

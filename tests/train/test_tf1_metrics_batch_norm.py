"""og.metrics' shape rules and og.layers.batch_normalization's moving variance against
TensorFlow 2.21 tf.compat.v1 (graph mode).

Every expected number below is TensorFlow 2.21 tf.compat.v1's result for the same
snippet, recorded once from a TensorFlow install (TensorFlow is not a test dependency).
"""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ShapeError

# --------------------------------------------------------------------------- metrics
# TF1 squeezes a trailing dim of 1 that only labels or only predictions have
# (confusion_matrix.remove_squeezable_dimensions), squeezes weights of one rank more
# than the values and expands weights of one rank less ((N,) weights for (N, k) values).

c = og.constant

METRICS = {   # name: (build, TensorFlow 2.21 tf.compat.v1's value after one update)
    "accuracy_labels_column": (
        lambda: og.metrics.accuracy(c([[1], [0], [2]]), c([1, 1, 2])), 0.6666666865348816),
    "accuracy_predictions_column": (
        lambda: og.metrics.accuracy(c([1, 0, 2]), c([[1], [1], [2]])), 0.6666666865348816),
    "accuracy_labels_column_weights_column": (
        lambda: og.metrics.accuracy(c([[1], [0], [2]]), c([1, 1, 2]),
                                    weights=c([[1.], [2.], [0.5]])), 0.4285714328289032),
    "accuracy_labels_column_weights_vector": (
        lambda: og.metrics.accuracy(c([[1], [0], [2]]), c([1, 1, 2]),
                                    weights=c([1., 2., 0.5])), 0.4285714328289032),
    "accuracy_predictions_rank3": (
        lambda: og.metrics.accuracy(c([[1, 0], [2, 2]]), c([[[1], [1]], [[2], [0]]])), 0.5),
    "accuracy_per_example_weights": (
        lambda: og.metrics.accuracy(c([[1, 0], [2, 2]]), c([[1, 1], [2, 0]]),
                                    weights=c([1., 3.])), 0.5),
    "accuracy_weights_column_for_vector": (
        lambda: og.metrics.accuracy(c([1, 0, 2]), c([1, 1, 2]), weights=c([[1.], [2.], [0.5]])),
        0.4285714328289032),
    "mean_per_example_weights": (
        lambda: og.metrics.mean(c([[1., 2.], [3., 4.]]), weights=c([1., 0.])), 1.5),
    "mean_per_example_weights_3_columns": (
        lambda: og.metrics.mean(c([[1., 2., 5.], [3., 4., 6.]]), weights=c([0.5, 2.])), 4.0),
    "mean_weights_rank_plus_one": (
        lambda: og.metrics.mean(c([[1., 2., 5.], [3., 4., 6.]]),
                                weights=c([[[0.5], [1.], [2.]], [[2.], [0.], [1.]]])),
        3.769230842590332),
    "mean_rank3_values_rank2_weights": (
        lambda: og.metrics.mean(c(np.arange(12.).reshape(2, 3, 2).astype(np.float32)),
                                weights=c([[1., 2., 0.], [0.5, 1., 1.]])), 5.045454502105713),
    "mean_weights_column_for_vector": (
        lambda: og.metrics.mean(c([1., 5., 2.]), weights=c([[1.], [2.], [0.5]])),
        3.4285714626312256),
    "mse_labels_column": (
        lambda: og.metrics.mean_squared_error(c([[1.], [0.], [2.]]), c([1.5, 1., 2.]),
                                              weights=c([1., 2., 3.])), 0.375),
    "mae_predictions_column": (
        lambda: og.metrics.mean_absolute_error(c([1., 0., 2.]), c([[1.5], [1.], [2.]])), 0.5),
    "rmse_labels_column": (
        lambda: og.metrics.root_mean_squared_error(c([[1.], [0.], [2.]]), c([1.5, 1., 2.]),
                                                   weights=c([1., 2., 3.])),
        0.6123724579811096),
    "mse_per_example_weights": (
        lambda: og.metrics.mean_squared_error(c([[1., 0.], [1., 1.]]), c([[1., 3.], [0., 1.]]),
                                              weights=c([1., 2.])), 1.8333333730697632),
    "precision_labels_column": (
        lambda: og.metrics.precision(c([[1], [0], [1], [1]]), c([1, 1, 0, 1]),
                                     weights=c([1., 2., 3., 0.5])), 0.4285714328289032),
    "recall_labels_column": (
        lambda: og.metrics.recall(c([[True], [False], [True], [True]]),
                                  c([True, True, False, True]), weights=c([1., 2., 3., 0.5])),
        0.3333333432674408),
    "precision_per_example_weights": (
        lambda: og.metrics.precision(c([[1, 0], [1, 1]]), c([[1, 1], [0, 1]]),
                                     weights=c([1., 2.])), 0.75),
    "recall_per_example_weights": (
        lambda: og.metrics.recall(c([[1, 0], [1, 1]]), c([[1, 1], [0, 1]]),
                                  weights=c([1., 2.])), 0.6000000238418579),
}


def _metric(build, feed=None):
    g = og.Graph()
    with g.as_default():
        value, update = build()
    sess = og.Session(g)
    sess.run(og.local_variables_initializer(g))
    sess.run(update, feed)
    return float(sess.run(value))


@pytest.mark.parametrize("name", sorted(METRICS))
def test_metrics_squeeze_and_expand_like_tf1(name):
    build, want = METRICS[name]
    np.testing.assert_allclose(_metric(build), want, rtol=1e-6)


def test_metrics_squeeze_a_labels_dim_of_unknown_size_and_weights_of_unknown_batch():
    # TF1 squeezes a last dim that may be 1 ([None, None] labels with [None] predictions)
    def accuracy():
        return og.metrics.accuracy(og.placeholder(og.int32, [None, None], name="y"),
                                   og.placeholder(og.int32, [None], name="p"))
    got = _metric(accuracy, {"y": np.array([[1], [0], [2]], np.int32),
                             "p": np.array([1, 1, 2], np.int32)})
    np.testing.assert_allclose(got, 0.6666666865348816, rtol=1e-6)  # TF 2.21 tf.compat.v1

    def mean():
        return og.metrics.mean(og.placeholder(og.float32, [None, 2], name="v"),
                               weights=og.placeholder(og.float32, [None], name="w"))
    got = _metric(mean, {"v": np.array([[1., 2.], [3., 4.]], np.float32),
                         "w": np.array([1., 0.], np.float32)})
    assert got == 1.5  # TF 2.21 tf.compat.v1


@pytest.mark.parametrize("build,match", [
    # TF1: ValueError "Shapes (3,) and (3, 2) are incompatible"
    (lambda: og.metrics.accuracy(c([[1, 0], [2, 2], [0, 0]]), c([1, 1, 2])),
     "must have the same shape"),
    # a rank difference of 2 is not squeezed (TF1: "Shapes (3,) and (3, 1, 1) ...")
    (lambda: og.metrics.accuracy(c([[[1]], [[0]], [[2]]]), c([1, 1, 2])),
     "must have the same shape"),
    # (3,) weights expand to (3, 1), which cannot weight (2, 3) values (TF1's error too)
    (lambda: og.metrics.mean(c([[1., 2., 5.], [3., 4., 6.]]), weights=c([0.5, 2., 1.])),
     "cannot weight"),
    # weights two ranks short are not expanded (TF1: "weights can not be broadcast")
    (lambda: og.metrics.mean(c(np.zeros((2, 3, 2), np.float32)), weights=c([1., 2.])),
     "cannot weight"),
])
def test_metrics_still_refuse_what_tf1_refuses(build, match):
    with og.Graph().as_default():
        with pytest.raises(ShapeError, match=match):
            build()


# --------------------------------------------------------------------------- batch norm
# TF1's tf.layers.batch_normalization runs its fused kernel for fused None/True, a 4-D
# or 5-D float16/float32 input and axis 1 or the last: the moving variance then takes
# the unbiased batch variance; otherwise the biased one. Two training steps with
# momentum 0.5 on this input:

X = (((np.arange(48) * 7) % 11 - 5) / 3.0 + np.arange(48) % 3 * 0.5).astype(
    np.float32).reshape(2, 3, 4, 2)

BN = {   # name: (input, arguments, TF 2.21 tf.compat.v1's (moving_variance, moving_mean,
    #                                the first output values))
    "nhwc_fused_none": (X, {}, (
        [1.1773852109909058, 1.1773853302001953], [0.3020833432674408, 0.4479166269302368],
        [-1.900259256362915, 0.5228901505470276, -0.06376709043979645])),
    "nhwc_fused_true": (X, {"fused": True}, (
        [1.1773852109909058, 1.1773853302001953], [0.3020833432674408, 0.4479166269302368],
        [-1.900259256362915, 0.5228901505470276, -0.06376709043979645])),
    "nhwc_fused_false": (X, {"fused": False}, (
        [1.1387442350387573, 1.1387442350387573], [0.3020833134651184, 0.4479166269302368],
        [-1.9002591371536255, 0.5228901505470276, -0.06376707553863525])),
    "axis1": (X, {"axis": 1}, (
        [1.2996528148651123, 1.0111111402511597, 1.2996528148651123], [0.421875, 0.375, 0.328125],
        [-1.9453566074371338, 0.5272461771965027, -0.1999899446964264])),
    "axis2_not_fused": (X, {"axis": 2}, (
        [1.4421296119689941, 0.7633100748062134, 0.7633100748062134, 1.4421296119689941],
        [0.16666670143604279, 0.2291666567325592, 0.5208333730697632, 0.5833333730697632],
        [-1.4977480173110962, 0.7488739490509033, 0.03355222940444946])),
    "float64_not_fused": (X.astype(np.float64), {"fused": True}, (
        [1.138744225915246, 1.1387442124110692], [0.30208333767950535, 0.4479166679084301],
        [-1.9002591392328165, 0.5228900732522133, -0.06376708245420215])),
    "float16": (X.astype(np.float16), {}, (
        [1.177274465560913, 1.1773900985717773], [0.3020477294921875, 0.447906494140625],
        [-1.900390625, 0.5234375, -0.06378173828125])),
    "rank2_not_fused": (X.reshape(24, 2), {"fused": True}, (
        [1.1387442350387573, 1.1387442350387573], [0.3020833134651184, 0.4479166269302368],
        [-1.9002591371536255, 0.5228901505470276, -0.06376707553863525])),
    "rank5": (X.reshape(2, 3, 2, 2, 2), {}, (
        [1.1773853302001953, 1.1773852109909058], [0.3020833134651184, 0.4479166567325592],
        [-1.9002591371536255, 0.5228900909423828, -0.06376706063747406])),
    "rank5_axis1": (X.reshape(2, 3, 2, 2, 2), {"axis": 1}, (
        [1.2996528148651123, 1.0111111402511597, 1.2996528148651123], [0.421875, 0.375, 0.328125],
        [-1.9453566074371338, 0.5272461771965027, -0.1999899446964264])),
    "one_value_per_channel": (X[:1, :1, :1, :], {}, (
        [0.25, 0.25], [-1.25, 0.875], [0.0, 0.0])),
    "training_tensor_true": (X, {"training": True}, (
        [1.1773852109909058, 1.1773853302001953], [0.3020833432674408, 0.4479166269302368],
        [-1.900259256362915, 0.5228901505470276, -0.06376709043979645])),
    "training_tensor_false": (X, {"training": False}, (
        [1.0, 1.0], [0.0, 0.0], [-1.6658339500427246, 1.166083812713623, 0.33316680788993835])),
    "unknown_batch": (X, {"unknown_batch": True}, (
        [1.1773852109909058, 1.1773853302001953], [0.3020833432674408, 0.4479166269302368],
        [-1.900259256362915, 0.5228901505470276, -0.06376709043979645])),
}


@pytest.mark.parametrize("name", sorted(BN))
def test_batch_normalization_moving_variance_follows_tf1_fused_rule(name):
    x, kwargs, (want_mv, want_mm, want_y) = BN[name]
    kwargs = dict(kwargs)
    g = og.Graph()
    with g.as_default():
        if kwargs.pop("unknown_batch", False):
            xt = og.placeholder(og.float32, [None] + list(x.shape[1:]), name="x")
            feed = {xt: x}
        else:
            xt, feed = og.constant(x), None
        training = True
        if "training" in kwargs:   # a bool tensor, as TF1's is_training placeholder
            training = og.placeholder_with_default(kwargs.pop("training"), [])
        y = og.layers.batch_normalization(xt, training=training, momentum=0.5, **kwargs)
        updates = og.get_collection(og.UPDATE_OPS)
        mv = [v for v in og.global_variables() if "moving_variance" in v.name][0]
        mm = [v for v in og.global_variables() if "moving_mean" in v.name][0]
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    for _ in range(2):
        out = sess.run([y] + updates, feed)[0]
    assert out.dtype == x.dtype
    tol = dict(rtol=2e-3, atol=2e-3) if x.dtype == np.float16 else dict(rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sess.run(mv), want_mv, **tol)
    np.testing.assert_allclose(sess.run(mm), want_mm, **tol)
    np.testing.assert_allclose(out.reshape(-1)[:3], want_y, **tol)


def test_batch_normalization_audit_example():
    """(audit W13) 8 values 0..7 with momentum 0: TF1's moving variance is the unbiased
    6.0, not the biased 5.25."""
    g = og.Graph()
    with g.as_default():
        x = og.constant(np.arange(8, dtype=np.float32).reshape(2, 2, 2, 1))
        y = og.layers.batch_normalization(x, training=True, momentum=0.0)
        updates = og.get_collection(og.UPDATE_OPS)
        mv = [v for v in og.global_variables() if "moving_variance" in v.name][0]
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    sess.run([y] + updates)
    np.testing.assert_allclose(sess.run(mv), [6.0000005], rtol=1e-6)  # TF 2.21 tf.compat.v1


def test_nn_batch_norm_keeps_the_biased_variance():
    """og.nn.batch_norm (og's own layer) is unchanged: its moving variance takes the
    biased batch variance."""
    g = og.Graph()
    with g.as_default():
        x = og.constant(np.arange(8, dtype=np.float32).reshape(2, 1, 2, 2))
        y = og.nn.batch_norm(x, training=True, momentum=0.0)
        updates = og.get_collection(og.UPDATE_OPS)
        mv = [v for v in og.global_variables() if "moving_var" in v.name][0]
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    sess.run([y] + updates)
    np.testing.assert_allclose(sess.run(mv), [5.25], rtol=1e-6)

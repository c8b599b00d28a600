"""og.layers' classes (tf.compat.v1.layers.Dense, Conv2D, BatchNormalization, ...):
outputs equal to the functional forms' (checked against TF elsewhere) with the same
initializers, TF1's variable names and shapes, weight sharing across calls (gradients
from both calls, against central differences), calls at two input sizes, batch norm's
updates, regularization losses, trainable=False, get/set_weights, an ONNX export run
in onnxruntime, and the errors for bad arguments and mismatched calls."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import OneGraphError, ShapeError

from .graph_runs import session_and_onnxruntime

L = og.layers


def _session(g):
    sess = og.Session(g, seed=0)
    with g.as_default():
        sess.run(og.global_variables_initializer())
    return sess


# (class, constructor args, kwargs, functional form, input shape, variables' shapes)
CASES = {
    "dense": (L.Dense, (4,), {"activation": og.nn.relu}, L.dense, (2, 3),
              {"kernel": (3, 4), "bias": (4,)}),
    "dense_rank3": (L.Dense, (2,), {}, L.dense, (2, 5, 3), {"kernel": (3, 2), "bias": (2,)}),
    "conv1d": (L.Conv1D, (4, 3), {"strides": 2, "padding": "same"}, L.conv1d, (2, 9, 3),
               {"kernel": (3, 3, 4), "bias": (4,)}),
    "conv2d": (L.Conv2D, (4, 3), {"padding": "same", "dilation_rate": 2}, L.conv2d,
               (2, 6, 7, 3), {"kernel": (3, 3, 3, 4), "bias": (4,)}),
    "conv2d_nchw": (L.Conv2D, (4, (2, 3)), {"data_format": "channels_first",
                                            "use_bias": False}, L.conv2d, (2, 3, 6, 7),
                    {"kernel": (2, 3, 3, 4)}),
    "conv3d": (L.Conv3D, (3, (2, 3, 2)), {}, L.conv3d, (2, 4, 5, 6, 2),
               {"kernel": (2, 3, 2, 2, 3), "bias": (3,)}),
    "conv2d_transpose": (L.Conv2DTranspose, (2, 3), {"strides": 2}, L.conv2d_transpose,
                         (2, 4, 5, 3), {"kernel": (3, 3, 2, 3), "bias": (2,)}),
    "conv3d_transpose": (L.Conv3DTranspose, (2, 3), {"strides": (2, 1, 2),
                                                     "padding": "same"},
                         L.conv3d_transpose, (2, 3, 4, 3, 2),
                         {"kernel": (3, 3, 3, 2, 2), "bias": (2,)}),
    "separable_conv1d": (L.SeparableConv1D, (2, 2), {"depth_multiplier": 2,
                                                     "dilation_rate": 2},
                         L.separable_conv1d, (2, 9, 3),
                         {"depthwise_kernel": (2, 3, 2), "pointwise_kernel": (1, 6, 2),
                          "bias": (2,)}),
    "separable_conv2d": (L.SeparableConv2D, (4, 3), {"padding": "same", "strides": 2},
                         L.separable_conv2d, (2, 6, 7, 3),
                         {"depthwise_kernel": (3, 3, 3, 1),
                          "pointwise_kernel": (1, 1, 3, 4), "bias": (4,)}),
    "batch_normalization": (L.BatchNormalization, (), {"momentum": 0.5},
                            L.batch_normalization, (4, 5, 3),
                            {"gamma": (3,), "beta": (3,), "moving_mean": (3,),
                             "moving_variance": (3,)}),
    "batch_normalization_axis1": (L.BatchNormalization, (1,), {"epsilon": 0.01},
                                  L.batch_normalization, (2, 3, 4, 5),
                                  {"gamma": (3,), "beta": (3,), "moving_mean": (3,),
                                   "moving_variance": (3,)}),
    "max_pooling1d": (L.MaxPooling1D, (2, 1), {"data_format": "channels_first"},
                      L.max_pooling1d, (2, 3, 9), {}),
    "max_pooling2d": (L.MaxPooling2D, (3, 2), {"padding": "same"}, L.max_pooling2d,
                      (2, 6, 7, 3), {}),
    "max_pooling3d": (L.MaxPooling3D, (2, 2), {}, L.max_pooling3d, (2, 4, 5, 6, 2), {}),
    "average_pooling1d": (L.AveragePooling1D, (3, 2), {"padding": "same"},
                          L.average_pooling1d, (2, 9, 3), {}),
    "average_pooling2d": (L.AveragePooling2D, (2, 2), {}, L.average_pooling2d,
                          (2, 6, 7, 3), {}),
    "average_pooling3d": (L.AveragePooling3D, (2, (1, 2, 3)),
                          {"data_format": "channels_first"}, L.average_pooling3d,
                          (2, 2, 4, 5, 6), {}),
    "flatten": (L.Flatten, (), {"data_format": "channels_first"}, L.flatten, (2, 3, 4, 5),
                {}),
    "dropout": (L.Dropout, (), {"rate": 0.3}, L.dropout, (2, 5), {}),
}


def _initializers(shapes, seed):
    rng = np.random.RandomState(seed)
    inits = {}
    for name, shape in shapes.items():
        value = rng.randn(*shape).astype(np.float32)
        if name == "moving_variance":
            value = np.abs(value) + 0.5
        key = name[:-len("_kernel")] if name.endswith("_kernel") else name
        inits[f"{key}_initializer"] = og.constant_initializer(value)
    return inits


@pytest.mark.parametrize("case, training", [
    (case, training) for case in sorted(CASES) for training in (False, True)
    if not training or CASES[case][0] in (L.BatchNormalization, L.Dropout)])
def test_class_equals_the_functional_form_with_tf1_variables(case, training):
    cls, args, kwargs, fn, shape, shapes = CASES[case]
    xv = np.random.RandomState(3).randn(*shape).astype(np.float32)
    inits = _initializers(shapes, 4)
    call = {"training": training} if cls in (L.BatchNormalization, L.Dropout) else {}
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, shape, name="x")
        layer = cls(*args, **kwargs, **inits)
        assert not layer.built and layer.variables == []
        y = layer(x, **call)
        ref = fn(x, *args, **kwargs, **inits, **call, name="ref")
    assert layer.built
    names = [v.name for v in layer.variables]
    assert names == [f"{layer.name}/{k}" for k in shapes]
    assert [tuple(v.shape) for v in layer.variables] == list(shapes.values())
    for k in shapes:
        assert getattr(layer, k) is layer.variables[list(shapes).index(k)]
    sess = _session(g)
    if cls is L.Dropout and training:
        got = sess.run(y, {x: xv})
        kept = got != 0
        np.testing.assert_allclose(got[kept], xv[kept] / 0.7, rtol=1e-6)
        assert 0 < kept.sum() < xv.size
        return
    got, want = sess.run([y, ref], {x: xv})
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_names_follow_tf1s_numbering_and_scopes():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3])
        og.layers.dense(x, 2)                         # functional: "dense"
        a, b = L.Dense(2), L.Dense(5)
        assert (a.name, b.name) == ("dense", "dense_1")
        a(x)
        b(x)
        with og.variable_scope("outer"):
            c = L.Dense(1, name="head")
            c(x)
        c(x)                                          # outside "outer": still reused
        named = L.Conv2D(2, 1, name="mine")
        named(og.placeholder(og.float32, [1, 2, 2, 3]))
    assert a.scope_name == "dense_1" and b.scope_name == "dense_2"
    assert [v.name for v in b.variables] == ["dense_2/kernel", "dense_2/bias"]
    assert [v.name for v in c.variables] == ["outer/head/kernel", "outer/head/bias"]
    assert named.kernel.name == "mine/kernel"
    assert len(g.get_collection(og.GLOBAL_VARIABLES)) == 10
    assert L.Dense(1).variables == [] and "call the layer" in _raised(
        ValueError, lambda: L.Dense(1).scope_name)


def _raised(error, fn):
    with pytest.raises(error) as info:
        fn()
    return str(info.value)


def _central_difference_check(sess, loss, var, grad, feed, eps=1e-5):
    rng = np.random.RandomState(7)
    v0 = sess.run(var)
    d = rng.randn(*v0.shape)
    values = []
    for sign in (1, -1):
        var.load(v0 + sign * eps * d, sess)
        values.append(sess.run(loss, feed))
    var.load(v0, sess)
    numeric = (values[0] - values[1]) / (2 * eps)
    exact = float(np.sum(sess.run(grad, feed) * d))
    assert abs(numeric - exact) <= 1e-6 + 1e-6 * abs(exact), (numeric, exact)


@pytest.mark.parametrize("kind", ["dense", "conv2d"])
def test_two_calls_share_one_set_of_variables_and_both_give_gradients(kind):
    rng = np.random.RandomState(0)
    if kind == "dense":
        cls, fn, args, s1, s2 = L.Dense, L.dense, (3,), (2, 4), (5, 4)
        kwargs = {"activation": og.tanh}
    else:
        cls, fn, args = L.Conv2D, L.conv2d, (3, 2)
        kwargs = {"padding": "same", "activation": og.tanh}
        s1, s2 = (1, 4, 5, 2), (2, 3, 3, 2)      # other batch and spatial sizes
    v1, v2 = rng.randn(*s1), rng.randn(*s2)
    g = og.Graph()
    with g.as_default():
        x1 = og.placeholder(og.float64, s1)
        x2 = og.placeholder(og.float64, [None] * len(s2[:-1]) + [s2[-1]])
        layer = cls(*args, **kwargs)
        y1, y2 = layer(x1), layer(x2)
        w1 = og.constant(rng.randn(*y1.shape))
        loss = og.reduce_sum(y1 * w1) + og.reduce_sum(y2 * y2)
        grads = og.gradients(loss, layer.variables)
        part = og.gradients(og.reduce_sum(y1 * w1), layer.variables)
    assert len(g.get_collection(og.GLOBAL_VARIABLES)) == 2 and len(layer.variables) == 2
    assert layer.dtype == og.float64
    sess = _session(g)
    feed = {x1: v1, x2: v2}
    out1, out2 = sess.run([y1, y2], feed)
    assert out1.shape == s1[:-1] + (3,) and out2.shape == s2[:-1] + (3,)
    kernel, bias = sess.run(layer.variables)
    g2 = og.Graph()
    with g2.as_default():
        refs = [fn(og.constant(v), *args, **kwargs,
                   kernel_initializer=og.constant_initializer(kernel),
                   bias_initializer=og.constant_initializer(bias)) for v in (v1, v2)]
    want = _session(g2).run(refs)
    np.testing.assert_allclose(out1, want[0], rtol=1e-10)
    np.testing.assert_allclose(out2, want[1], rtol=1e-10)
    # the second call adds to the gradient of the shared kernel
    assert not np.allclose(sess.run(grads[0], feed), sess.run(part[0], feed))
    for var, grad in zip(layer.variables, grads):
        _central_difference_check(sess, loss, var, grad, feed)


def test_batch_normalization_training_updates_and_eval():
    xv = np.random.RandomState(1).randn(8, 3).astype(np.float32) * 2 + 1
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3])
        is_training = og.placeholder(og.bool, [])
        bn = L.BatchNormalization(momentum=0.25, epsilon=0.01)
        y_train = bn(x, training=True)
        y_eval = bn(x)                                  # training=False: no updates
        assert len(bn.updates) == 2
        y_switch = bn(x, training=is_training)
        assert len(bn.updates) == 4
        updates = g.get_collection(og.UPDATE_OPS)
    assert [id(u) for u in bn.updates] == [id(u) for u in updates]
    assert len(g.get_collection(og.GLOBAL_VARIABLES)) == 4
    assert [v.name for v in bn.trainable_variables] == ["batch_normalization/gamma",
                                                        "batch_normalization/beta"]
    assert bn.non_trainable_weights == [bn.moving_mean, bn.moving_variance]
    sess = _session(g)
    mean, var = xv.mean(0), xv.var(0)
    got, _ = sess.run([y_train, bn.updates[:2]], {x: xv})
    np.testing.assert_allclose(got, (xv - mean) / np.sqrt(var + 0.01), rtol=1e-4,
                               atol=1e-5)
    mm, mv = sess.run([bn.moving_mean, bn.moving_variance])
    np.testing.assert_allclose(mm, 0.75 * mean, rtol=1e-5)
    np.testing.assert_allclose(mv, 0.25 + 0.75 * var, rtol=1e-5)   # 2-D: biased variance
    np.testing.assert_allclose(sess.run(y_eval, {x: xv}), (xv - mm) / np.sqrt(mv + 0.01),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(sess.run(y_switch, {x: xv, is_training: False}),
                               sess.run(y_eval, {x: xv}), rtol=1e-6)


def test_regularization_losses_are_counted_once_and_activity_ones_per_call():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 2])
        d = L.Dense(2, kernel_initializer=og.constant_initializer([[1., 2.], [3., 4.]]),
                    kernel_regularizer=lambda w: 0.5 * og.reduce_sum(w * w),
                    bias_regularizer=lambda b: og.reduce_sum(b) + 1.0)
        d(x)
        d(x)
        assert len(d.losses) == 2 and len(g.get_collection(og.REGULARIZATION_LOSSES)) == 2
        a = L.Dense(1, activity_regularizer=lambda y: og.reduce_sum(y))
        a(x)
        a(x)
        assert len(a.losses) == 2
        bn = L.BatchNormalization(gamma_regularizer=lambda v: og.reduce_sum(v))
        bn(x, training=True)
        bn(x)
        assert len(bn.losses) == 1
    assert len(g.get_collection(og.REGULARIZATION_LOSSES)) == 5
    sess = _session(g)
    assert sess.run(d.losses) == [15.0, 1.0]
    assert sess.run(bn.losses) == [2.0]


def test_trainable_false_layers_train_nothing():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 4, 4, 2])
        conv = L.Conv2D(2, 3, trainable=False)
        bn = L.BatchNormalization(trainable=False)
        bn(conv(x), training=True)
    assert not conv.trainable and conv.trainable_weights == []
    assert conv.non_trainable_variables == conv.variables and len(conv.variables) == 2
    assert bn.trainable_variables == [] and len(bn.non_trainable_weights) == 4
    assert g.get_collection(og.TRAINABLE_VARIABLES) == []


def test_get_and_set_weights_round_trip():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3])
        d = L.Dense(2)
        y = d(x)
    sess = _session(g)
    values = [np.arange(6, dtype=np.float32).reshape(3, 2), np.array([1., -1.], np.float32)]
    d.set_weights(values, session=sess)
    got = d.get_weights(session=sess)
    for a, b in zip(got, values, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(sess.run(y, {x: np.ones((1, 3), np.float32)}), [[7., 8.]])
    with sess.as_default():                              # the default session
        d.set_weights([values[0] * 2, values[1]])
        np.testing.assert_array_equal(d.get_weights()[0], values[0] * 2)
    assert "set_weights got 1 arrays for 2" in _raised(
        ValueError, lambda: d.set_weights(values[:1], session=sess))
    assert "has shape [3, 2]" in _raised(
        ValueError, lambda: d.set_weights([values[0].T, values[1]], session=sess))
    assert "no default session" in _raised(ValueError, lambda: d.get_weights())
    assert L.MaxPooling2D(2, 2).get_weights() == []


def test_layers_export_and_run_in_onnxruntime():
    rng = np.random.RandomState(5)
    xv = rng.randn(2, 6, 7, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 6, 7, 3], name="x")
        init = {"bias_initializer": og.random_normal_initializer(seed=1)}
        conv = L.Conv2D(4, 3, padding="same", activation=og.nn.relu, **init)
        sep = L.SeparableConv2D(4, 3, strides=2, padding="same", **init)
        bn = L.BatchNormalization(moving_mean_initializer=og.constant_initializer(0.5))
        pool = L.MaxPooling2D(2, 2, padding="same")
        dense = L.Dense(5, **init)
        h = pool(bn(conv(x)))
        outs = {"a": dense(L.Flatten()(L.AveragePooling2D(3, 3)(h))),
                "b": pool(bn(sep(x))),
                "c": L.Conv2DTranspose(2, 3, strides=2, **init)(conv(x))}
    want, got = session_and_onnxruntime(g, {"x": x}, outs, {"x": xv}, _session(g))
    for key, a, b in zip(outs, got, want, strict=True):
        assert a.shape == b.shape, key
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=key)


def _f(v):
    return v


# (class, args, kwargs, error, message; the functional form raises the same)
BAD = [
    (L.Dense, (0,), {}, ValueError, "dense: units must be > 0"),
    (L.Dense, ("3",), {}, TypeError, "dense: units"),
    (L.Dense, (3,), {"activation": 5}, TypeError, "dense: activation must be a function"),
    (L.Dense, (3,), {"kernel_regularizer": "l2"}, TypeError, "kernel_regularizer"),
    (L.Dense, (3,), {"kernel_constraint": _f}, OneGraphError, "kernel_constraint"),
    (L.Dense, (3,), {"use_bias": "yes"}, TypeError, "use_bias"),
    (L.Conv1D, (0, 3), {}, TypeError, "conv1d: filters"),
    (L.Conv2D, (4, 3), {"padding": "full"}, ValueError, "padding must be"),
    (L.Conv2D, (4, 3), {"data_format": "NHWC"}, ValueError, "data_format must be"),
    (L.Conv2D, (4, (1, 2, 3)), {}, TypeError, "conv2d: kernel_size"),
    (L.Conv2D, (4, 3), {"strides": 2, "dilation_rate": 2}, ValueError, "cannot be combined"),
    (L.Conv3D, (4, 3), {"bias_constraint": _f}, OneGraphError, "bias_constraint"),
    (L.Conv2DTranspose, (2, 3), {"strides": 0}, TypeError, "conv2d_transpose: strides"),
    (L.Conv3DTranspose, (2, 3), {"padding": 1}, ValueError, "padding must be"),
    (L.SeparableConv1D, (2, 3), {"depth_multiplier": 0}, TypeError, "depth_multiplier"),
    (L.SeparableConv2D, (2, 3), {"pointwise_constraint": _f}, OneGraphError, "pointwise"),
    (L.MaxPooling1D, (2, 0), {}, TypeError, "max_pooling1d: strides"),
    (L.MaxPooling2D, (2, 2), {"padding": "x"}, ValueError, "padding must be"),
    (L.MaxPooling3D, ((2, 2), 2), {}, TypeError, "max_pooling3d: pool_size"),
    (L.AveragePooling1D, (2, 2), {"data_format": "x"}, ValueError, "data_format"),
    (L.AveragePooling2D, (-1, 2), {}, TypeError, "average_pooling2d: pool_size"),
    (L.AveragePooling3D, (2, 2), {"padding": "x"}, ValueError, "padding must be"),
    (L.Dropout, (1.5,), {}, ValueError, "rate"),
    (L.Dropout, (0.5,), {"seed": 1}, OneGraphError, "seed is not supported"),
    (L.Flatten, (), {"data_format": "x"}, ValueError, "data_format"),
    (L.BatchNormalization, (1.5,), {}, TypeError, "axis"),
    (L.BatchNormalization, (), {"momentum": "a"}, TypeError, "momentum must be a number"),
    (L.BatchNormalization, (), {"renorm": True}, OneGraphError, "renorm is not supported"),
    (L.BatchNormalization, (), {"virtual_batch_size": 2}, OneGraphError, "virtual_batch"),
]


@pytest.mark.parametrize("cls, args, kwargs, error, message", BAD,
                         ids=[f"{c[0].__name__}-{c[4]}" for c in BAD])
def test_bad_constructor_arguments_are_refused_as_the_functional_form_does(
        cls, args, kwargs, error, message):
    shape = CASES_BY_CLASS[cls]
    g = og.Graph()
    with g.as_default():
        got = _raised(error, lambda: cls(*args, **kwargs))
        assert message in got
        assert g.get_operations() == []                  # nothing built in the graph
        x = og.placeholder(og.float32, shape)
        fn = CASES[next(k for k, c in CASES.items() if c[0] is cls)][3]
        assert _raised(error, lambda: fn(x, *args, **kwargs)) == got


CASES_BY_CLASS = {c[0]: c[4] for c in reversed(list(CASES.values()))}


@pytest.mark.parametrize("cls, kwargs, error, message", [
    (L.Dense, {"name": 5}, TypeError, "name must be a str"),
    (L.Dense, {"dtype": og.int32}, TypeError, "floating dtype"),
    (L.Dense, {"trainable": "yes"}, TypeError, "trainable"),
    (L.Dense, {"dtype": "nothing"}, TypeError, "dtype"),
])
def test_bad_layer_arguments_are_refused(cls, kwargs, error, message):
    assert message in _raised(error, lambda: cls(2, **kwargs))


def test_later_calls_unlike_the_built_one_are_refused_by_name():
    g = og.Graph()
    with g.as_default():
        d = L.Dense(2)
        d(og.placeholder(og.float32, [None, 3]))
        d(og.placeholder(og.float32, [4, 7, 3]))          # another rank: fine for Dense
        assert "dense: built for 3 input channels" in _raised(
            ShapeError, lambda: d(og.placeholder(og.float32, [None, 4])))
        assert "must be float32, got float64" in _raised(
            TypeError, lambda: d(og.placeholder(og.float64, [None, 3])))
        assert "unexpected keyword argument 'mask'" in _raised(
            TypeError, lambda: d(og.placeholder(og.float32, [None, 3]), mask=1))
        conv = L.Conv2D(2, 3, data_format="channels_first")
        conv(og.placeholder(og.float32, [1, 3, 5, 5]))
        conv(og.placeholder(og.float32, [2, 3, 9, 8]))
        assert "conv2d: built for 3 input channels (axis 1)" in _raised(
            ShapeError, lambda: conv(og.placeholder(og.float32, [1, 4, 5, 5])))
        assert "built for inputs of rank 4" in _raised(
            ShapeError, lambda: conv(og.placeholder(og.float32, [1, 3, 5])))
        bn = L.BatchNormalization(axis=1)
        bn(og.placeholder(og.float32, [2, 3, 4]))
        assert "built for 3 input channels (axis 1)" in _raised(
            ShapeError, lambda: bn(og.placeholder(og.float32, [2, 4, 3])))
        typed = L.Dense(2, dtype=og.float64)
        assert "must be float64" in _raised(
            TypeError, lambda: typed(og.placeholder(og.float32, [1, 2])))
    assert len(g.get_collection(og.GLOBAL_VARIABLES)) == 8
    with og.Graph().as_default():
        assert "the graph the layer was built in" in _raised(
            ValueError, lambda: d(og.placeholder(og.float32, [None, 3])))


def test_a_layer_subclass_builds_once_and_shares():
    class Scale(L.Layer):
        """Multiplies by a learnt vector."""

        def build(self, input_shape):
            self.w = self.add_weight("w", [input_shape[-1]],
                                     initializer=og.constant_initializer(2.0),
                                     regularizer=lambda v: og.reduce_sum(v))
            super().build(input_shape)

        def call(self, inputs):
            return inputs * self.w

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3])
        layer = Scale(name="scale")
        y1, y2 = layer(x), layer.apply(x + 1.0)
    assert [v.name for v in layer.variables] == ["scale/w"] and len(layer.losses) == 1
    assert layer.trainable_weights == layer.variables
    sess = _session(g)
    a, b = sess.run([y1, y2], {x: np.ones((1, 3), np.float32)})
    np.testing.assert_array_equal(a, [[2., 2., 2.]])
    np.testing.assert_array_equal(b, [[4., 4., 4.]])

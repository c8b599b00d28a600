"""Training-API semantics that a TF1 user relies on: stop_gradients, grad_ys,
second-order gradients (Hessian-vector products against finite differences of the
gradient, in float64), schedules and Momentum on a graph that is not the default one,
clipping at the edges (infinite norm, zero norm), and dropout's rate."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import GradientNotDefinedError, OneGraphError, OpAttributeError


def test_stop_gradients_keep_the_gradient_of_listed_xs():
    g = og.Graph()
    with g.as_default():
        a = og.constant(0.0)
        b = 2 * a
        ga = og.gradients(a + b, [a, b], stop_gradients=[a, b])  # TF1's documented example
        x = og.placeholder(og.float32, [2], name="x")
        gx = og.gradients(x * x, [x], stop_gradients=[x])
        h = x * 3.0
        # h is a constant: x only reaches the sum directly
        gh = og.gradients(h * h + x, [x], stop_gradients=[h])
    sess = og.Session(g)
    assert [float(v) for v in sess.run(ga)] == [1.0, 1.0]
    xv = np.array([1.5, -2.0], np.float32)
    np.testing.assert_allclose(sess.run(gx[0], {x: xv}), 2 * xv)
    np.testing.assert_allclose(sess.run(gh[0], {x: xv}), [1.0, 1.0])


def test_grad_ys_must_match_ys():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [3])
        with pytest.raises(ValueError, match="1 grad_ys for 2 ys"):
            og.gradients([x * 2.0, x * 3.0], x, grad_ys=[og.ones([3])])


def _hvp_against_differences(build, x0, v0, labels=None):
    """Hessian-vector product of sum(build(x)) by og.gradients twice, against the
    central difference of og.gradients along v (both float64)."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, x0.shape, name="x")
        v = og.placeholder(og.float64, x0.shape, name="v")
        y = build(x)
        (grad,) = og.gradients(y, x)
        (hv,) = og.gradients(og.reduce_sum(grad * v), x)
    assert hv is not None
    sess = og.Session(g)
    got = sess.run(hv, {x: x0, v: v0})
    eps = 1e-5
    plus = sess.run(grad, {x: x0 + eps * v0})
    minus = sess.run(grad, {x: x0 - eps * v0})
    np.testing.assert_allclose(got, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-7)


_LABELS = np.array([0, 2, 1])


@pytest.mark.parametrize("name, build", [
    ("cube-sum", lambda x: og.reduce_sum(x * x * x)),
    ("mean-of-squares", lambda x: og.reduce_mean(og.square(x), axis=1) * og.reduce_sum(x)),
    ("tanh", lambda x: og.reduce_sum(og.tanh(x) * x)),
    ("sigmoid", lambda x: og.reduce_sum(og.sigmoid(x) * x)),
    ("relu", lambda x: og.reduce_sum(og.relu(x) * x)),
    ("softmax", lambda x: og.reduce_sum(og.nn.softmax(x) * x)),
    ("log-softmax", lambda x: og.reduce_sum(og.nn.log_softmax(x) * og.tanh(x))),
    ("sparse-xent", lambda x: og.reduce_sum(og.nn.sparse_softmax_cross_entropy(
        labels=og.constant(_LABELS), logits=x * x))),
    ("dense-xent", lambda x: og.reduce_sum(og.nn.softmax_cross_entropy(
        labels=og.constant(np.array([[0.2, 0.8, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0],
                                     [0.5, 0.0, 0.0, 1.0]])), logits=og.tanh(x) * 2.0))),
])
def test_second_order_gradients(name, build):
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal((3, 4))
    v0 = rng.standard_normal((3, 4))
    _hvp_against_differences(build, x0, v0)


def test_hessian_vector_product_helper():
    from onegraph.train.gradients import hessian_vector_product

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3])
        (hv,) = hessian_vector_product(og.reduce_sum(x ** 3.0), [x], [og.ones([3], og.float64)])
    xv = np.array([1.0, 2.0, -3.0])
    np.testing.assert_allclose(og.Session(g).run(hv, {x: xv}), 6 * xv)


def test_second_order_through_a_max_is_refused_by_name():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3])
        (grad,) = og.gradients(og.reduce_max(x * x), x)
        with pytest.raises(GradientNotDefinedError, match="ReduceGrad"):
            og.gradients(og.reduce_sum(grad * x), x)


def test_schedules_and_momentum_on_a_graph_that_is_not_the_default():
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.array([1.0, 2.0], np.float32), name="w")
        loss = og.reduce_sum(og.square(w)) * 0.5
    # built outside `with g.as_default()`: every constant must still land in g
    step = og.train.get_or_create_global_step(g)
    schedules = [og.train.exponential_decay(0.2, step, 1, 0.5, staircase=True),
                 og.train.cosine_decay(0.1, step, 10),
                 og.train.piecewise_constant(step, [5], [0.1, 0.01])]
    train = og.train.Momentum(schedules[0], momentum=0.9).minimize(loss, global_step=step)
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    np.testing.assert_allclose(sess.run(schedules), [0.2, 0.1, 0.1], rtol=1e-6)
    sess.run(train)
    # step 0: lr 0.2, velocity = grad = w, w -= 0.2 * w
    np.testing.assert_allclose(sess.run(w), [0.8, 1.6], rtol=1e-6)
    np.testing.assert_allclose(sess.run(schedules[0]), 0.1, rtol=1e-6)


def test_clip_by_global_norm_with_an_infinite_norm_gives_nan():
    g = og.Graph()
    with g.as_default():
        a = og.constant(np.array([np.inf, 1.0], np.float32))
        b = og.constant(np.array([3.0, 4.0], np.float32))
        (ca, cb), norm = og.train.clip_by_global_norm([a, b], 1.0)
    got_b, got_norm = og.Session(g).run([cb, norm])
    assert np.isinf(got_norm) and np.isnan(got_b).all()


def test_clip_by_norm_gradient_at_zero_is_finite():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2])
        (gx,) = og.gradients(og.reduce_sum(og.train.clip_by_norm(x, 1.0)), x)
        (gn,) = og.gradients(og.train.global_norm([x]), x)
    sess = og.Session(g)
    np.testing.assert_array_equal(sess.run(gx, {x: np.zeros(2, np.float32)}), [1.0, 1.0])
    assert np.isfinite(sess.run(gn, {x: np.zeros(2, np.float32)})).all()
    # away from zero the norm's gradient is x / |x|
    np.testing.assert_allclose(sess.run(gn, {x: np.array([3.0, 4.0], np.float32)}),
                               [0.6, 0.8], rtol=1e-6)


def test_global_norm_of_nothing_is_a_clear_error():
    with pytest.raises(OneGraphError, match="every tensor is None"):
        og.train.global_norm([None, None])


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5])
def test_dropout_rate_out_of_range(rate):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [4])
        with pytest.raises(ValueError, match=r"\[0, 1\)"):
            og.nn.dropout(x, rate=rate)


def test_dropout_op_with_ratio_one_in_training_is_refused():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [4])
        y = g.op("Dropout", [x, og.constant(np.float32(1.0)), og.constant(np.asarray(True))],
                 num_outputs=2)[0]
    with pytest.raises(OpAttributeError, match=r"ratio must be in \[0, 1\)"):
        og.Session(g).run(y, {x: np.ones(4, np.float32)})


def _helper(op_type, attrs=None):
    def build(*xs):
        return xs[0].graph.op(op_type, list(xs), attrs or {})
    return build


_R = np.random.default_rng(3)
_A = _R.standard_normal((2, 3))
_ROW = _R.standard_normal((1, 3))
_POS = _R.uniform(0.1, 0.9, (2, 3))
_SM = np.exp(_A) / np.exp(_A).sum(-1, keepdims=True)
# conv / pool gradient kernels: x (1, 2, 5, 6), a 3x2 conv of stride 2 with pads, its
# (1, 3, 3, 3) output gradient, and 2x2 / 3x3 pools
_X = _R.standard_normal((1, 2, 5, 6))
_W = _R.standard_normal((3, 2, 3, 2))
_CONV_ATTRS = {"strides": [2, 2], "pads": [1, 0, 1, 1], "kernel_shape": [3, 2]}
_DY = _R.standard_normal((1, 3, 3, 3))
_POOL_2 = {"kernel_shape": [2, 2], "strides": [2, 2]}
_POOL_3 = {"kernel_shape": [3, 3], "strides": [2, 1], "pads": [1, 1, 0, 1]}
# ConvTranspose's helpers: x (1, 3, 3, 3) to a (1, 2, 12, 3) output through w (3, 2, 3, 2)
# with an output_padding past the stride (below the dilation), and SAME_UPPER
_TCONV_ATTRS = {"strides": [2, 1], "dilations": [3, 1], "output_padding": [2, 0],
                "pads": [1, 0, 0, 1], "kernel_shape": [3, 2]}
_TCONV_SAME = {"strides": [2, 3], "auto_pad": "SAME_UPPER", "kernel_shape": [3, 2]}
_TX, _TDY = _R.standard_normal((1, 3, 3, 3)), _R.standard_normal((1, 2, 12, 3))
_TDY_SAME = _R.standard_normal((1, 2, 6, 9))


@pytest.mark.parametrize("op_type, attrs, inputs", [
    ("SumToShapeOf", None, [_A, _ROW]),
    ("BroadcastLike", None, [_ROW, _A]),
    ("ReluGrad", None, [_A, _A + 0.05]),
    ("SigmoidGrad", None, [_A, _POS]),
    ("TanhGrad", None, [_A, _POS]),
    ("SoftmaxGrad", {"axis": -1}, [_A, _SM]),
    ("LogSoftmaxGrad", {"axis": 1}, [_A, np.log(_SM)]),
    ("ReduceGrad", {"axes": [1], "keepdims": 0, "mode": "sum"}, [_A[:, 0], _A]),
    ("ReduceGrad", {"axes": [0], "keepdims": 1, "mode": "mean"}, [_ROW, _A]),
    ("OnesLike", None, [_A]),
    ("ZerosLike", None, [_A]),
    ("ConvGradInput", _CONV_ATTRS, [_DY, _W, _X]),
    ("ConvGradFilter", _CONV_ATTRS, [_X, _DY, _W]),
    ("ConvTransposeGradInput", _TCONV_ATTRS, [_TDY, _W, _TX]),
    ("ConvTransposeGradFilter", _TCONV_ATTRS, [_TDY, _TX, _W]),
    ("ConvTransposeGradInput", _TCONV_SAME, [_TDY_SAME, _W, _TX]),
    ("ConvTransposeGradFilter", _TCONV_SAME, [_TDY_SAME, _TX, _W]),
    ("AveragePoolGrad", dict(_POOL_3, count_include_pad=0), [_X, _R.standard_normal(
        (1, 2, 2, 6))]),
    ("MaxPoolGrad", _POOL_2, [_X, _R.standard_normal((1, 2, 2, 3))]),
    ("MaxPoolGrad", _POOL_3, [_X, _R.standard_normal((1, 2, 2, 6))]),
    ("MaxPoolGradGrad", _POOL_3, [_X, _R.standard_normal(_X.shape)]),
], ids=lambda v: v if isinstance(v, str) else None)
def test_gradient_helpers_against_finite_differences(op_type, attrs, inputs):
    """The rules second-order gradients use, each checked on its own (ReduceGrad's
    third input, the forward output, only matters for max/min and is not perturbed;
    inputs that give only a shape (the conv helpers' x of the input gradient and w of
    the filter gradient) or on which the result is piecewise constant (the max pools'
    x) are not perturbed)."""
    from .gradcheck import check_op_gradients

    ins = list(inputs)
    wrt = {"ConvGradInput": [0, 1], "ConvGradFilter": [0, 1], "AveragePoolGrad": [1],
           "ConvTransposeGradInput": [0, 1], "ConvTransposeGradFilter": [0, 1],
           "MaxPoolGrad": [1], "MaxPoolGradGrad": [1]}.get(op_type)
    if op_type == "ReduceGrad":
        ins.append(np.zeros(1))  # the forward output y: unused by sum/mean
        wrt = [0]
    check_op_gradients(_helper(op_type, attrs), ins, wrt=wrt)


def test_wgan_gp_gradient_penalty_trains_through_convs_and_pools():
    """WGAN-GP's gradient penalty, (|d critic / d x| - 1)^2, differentiated w.r.t. the
    critic's weights and x: second-order gradients through ConvGradInput/-Filter,
    MaxPoolGrad, AveragePoolGrad, leaky ReLU and a dense layer, against central
    differences (they were refused: ConvGradInput had no gradient rule)."""
    from .gradcheck import check_op_gradients

    rng = np.random.default_rng(11)

    def penalty(x, w1, w2, w3):
        h = og.nn.conv2d(x, w1, [1, 2, 2, 1], "SAME")
        h = og.nn.leaky_relu(h, 0.2)
        h = og.nn.max_pool(og.tanh(h), [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
        h = og.nn.conv2d(h, w2, [1, 1, 1, 1], "VALID")
        h = og.nn.avg_pool(og.nn.softplus(h), [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
        critic = og.matmul(og.reshape(h, [2, -1]), w3)
        (gx,) = og.gradients(og.reduce_sum(critic), [x])
        norm = og.sqrt(og.reduce_sum(og.square(gx), axis=[1, 2, 3]) + 1e-12)
        return og.reduce_sum(og.square(norm - 1.0))

    check_op_gradients(penalty, [rng.standard_normal((2, 7, 6, 2)),
                                 rng.standard_normal((3, 3, 2, 4)) * 0.5,
                                 rng.standard_normal((2, 2, 4, 3)) * 0.5,
                                 rng.standard_normal((2 * 1 * 3, 1))], rtol=1e-4,
                       atol=1e-6)

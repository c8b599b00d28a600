"""Gradient rules at edges a finite-difference sweep found broken: MatMul with 1-D
operands, 1x1 Conv with end pads, Pad cropping / pad value / dynamic axes, Gemm with a
partly known C, Clip with tensor bounds, GroupNormalization with per-group scale/bias,
Max/Min ties, and scatter max/min ties.

Numerical checks compare against central finite differences in float64
(`check_op_gradients`, or `check_declared` below where the placeholders need partly
unknown static shapes); tie conventions are checked against hand-computed values.
"""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import GradientNotDefinedError

from .gradcheck import check_op_gradients

raw = og.raw_ops


def f64(*shape, lo=-1.0, hi=1.0, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def const(v):
    return og.constant(np.asarray(v))


def check_declared(build, inputs, shapes, wrt, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Like check_op_gradients, but the placeholders are declared with `shapes` (None for
    dims unknown while building), and every element of input `wrt` is checked: dL/dx
    against (L(x + eps e_j) - L(x - eps e_j)) / (2 eps), L = sum(y * R), in float64."""
    rng = np.random.default_rng(1)
    g = og.Graph()
    with g.as_default():
        phs = [og.placeholder(np.asarray(a).dtype, s) for a, s in zip(inputs, shapes)]
        feed = dict(zip(phs, inputs))
        y = build(*phs)
        weights = og.constant(rng.standard_normal(og.Session(g).run(y, feed).shape))
        loss = og.reduce_sum(y * weights)
        (grad,) = og.gradients(loss, [phs[wrt]])
    sess = og.Session(g)
    got = np.asarray(sess.run(grad, feed))
    x = np.asarray(inputs[wrt], np.float64)
    assert got.shape == x.shape
    numeric = np.zeros_like(x)
    for j in range(x.size):
        step = np.zeros(x.size)
        step[j] = eps
        plus, minus = dict(feed), dict(feed)
        plus[phs[wrt]] = x + step.reshape(x.shape)
        minus[phs[wrt]] = x - step.reshape(x.shape)
        numeric.flat[j] = (sess.run(loss, plus) - sess.run(loss, minus)) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=rtol * 10, atol=atol)


def grads_of(build, inputs, weights):
    """og.gradients of sum(build(*inputs) * weights) w.r.t. every input, evaluated."""
    g = og.Graph()
    with g.as_default():
        phs = [og.placeholder(np.asarray(a).dtype, np.shape(a)) for a in inputs]
        loss = og.reduce_sum(build(*phs) * const(weights))
        grads = og.gradients(loss, phs)
    return og.Session(g).run(grads, dict(zip(phs, inputs)))


# ------------------------------------------------------------------ 1. MatMul, 1-D operands

@pytest.mark.parametrize("shapes", [
    [(4,), (2, 4, 3)],
    [(4,), (2, 2, 4, 3)],
    [(2, 3, 4), (4,)],
    [(2, 1, 3, 4), (4,)],
    [(3,), (3,)],
], ids=lambda s: "x".join(str(d) for d in s))
def test_matmul_vector_operand(shapes):
    check_op_gradients(lambda a, b: raw.MatMul(a, b), [f64(*s, seed=i) for i, s in
                                                         enumerate(shapes)])


# ------------------------------------------------------------ 2. Conv 1x1 with end pads

@pytest.mark.parametrize("x_shape,strides", [
    ((1, 2, 3, 3), [1, 1]),
    ((1, 2, 4, 4), [2, 2]),
    ((2, 2, 4, 3), [1, 2]),
])
def test_conv_1x1_end_pads(x_shape, strides):
    check_op_gradients(lambda x, w, b: raw.Conv(x, w, b, pads=[0, 0, 1, 1], strides=strides),
                       [f64(*x_shape), f64(3, 2, 1, 1, seed=1), f64(3, seed=2)])


# --------------------------------------------------------------------------------- 3. Pad

@pytest.mark.parametrize("pads", [[-1, 0, 0, 0], [1, -1, -1, 2], [0, -2, 0, -1]],
                         ids=str)
def test_pad_negative_pads_crop(pads):
    check_op_gradients(lambda x: raw.Pad(x, const(pads)), [f64(3, 4)])


def test_pad_negative_pads_with_axes():
    check_op_gradients(lambda x, v: raw.Pad(x, const([-1, 2]), v, const([-1])),
                       [f64(2, 3, 4), np.array(0.3)])


@pytest.mark.parametrize("value_shape", [(), (1,)])
def test_pad_constant_value_gets_the_padded_cells(value_shape):
    grads = check_op_gradients(lambda x, v: raw.Pad(x, const([1, 0, -1, 2]), v),
                               [f64(2, 3), np.full(value_shape, 0.7)])
    assert np.abs(grads[1]).sum() > 0


def test_pad_dynamic_axes_raise_gradient_not_defined():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [2, 3])
        axes = og.placeholder(og.int64, [1])
        y = raw.Pad(x, const([1, 1]), None, axes)
        with pytest.raises(GradientNotDefinedError, match="axes"):
            og.gradients(og.reduce_sum(y), [x])


# ------------------------------------------------------------------- 4. Gemm, partial C

@pytest.mark.parametrize("c_value,c_declared", [
    (f64(1, 2, seed=3), [None, 2]),
    (f64(3, 1, seed=3), [None, None]),
    (f64(1, 1, seed=3), [None, None]),
])
def test_gemm_c_with_unknown_dims(c_value, c_declared):
    check_declared(lambda a, b, c: raw.Gemm(a, b, c, beta=0.5),
                   [f64(3, 4), f64(4, 2, seed=1), c_value], [[3, 4], [4, 2], c_declared],
                   wrt=2)


# ------------------------------------------------------------------ 5. Clip tensor bounds

def clip_inputs(x_shape=(10,)):
    """x away from the bounds +-0.5 (a finite difference straddling one is not smooth)."""
    x = f64(*x_shape, lo=-2.0, hi=2.0)
    return np.where(np.abs(np.abs(x) - 0.5) < 0.05, 0.1, x)


@pytest.mark.parametrize("lo,hi", [
    (np.array(-0.5), np.array(0.5)),
    (np.array([-0.5]), np.array([[0.5]])),   # one-value bounds act as scalars
    (np.array(0.5), np.array(-0.5)),         # min > max: every output is max
], ids=["0d", "one_value", "min_above_max"])
def test_clip_tensor_bounds(lo, hi):
    check_op_gradients(lambda x, a, b: raw.Clip(x, a, b), [clip_inputs(), lo, hi])


def test_clip_only_one_bound():
    check_op_gradients(lambda x, a: raw.Clip(x, a), [clip_inputs(), np.array(-0.5)])
    check_op_gradients(lambda x, b: raw.Clip(x, None, b), [clip_inputs(), np.array(0.5)])


def test_clip_one_value_bound_of_higher_rank_than_x():
    check_op_gradients(lambda x, a, b: raw.Clip(x, a, b),
                       [np.array(0.2), np.array([[0.5]]), np.array([1.5])])
    check_op_gradients(lambda x, a, b: raw.Clip(x, a, b),
                       [np.array(-1.2), np.array([[-0.5]]), np.array([1.5])])


def test_clip_tie_with_a_bound_goes_to_x():
    x = np.array([-0.5, 0.5, 0.0, -1.0, 1.0])
    w = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    dx, dlo, dhi = grads_of(lambda t, a, b: raw.Clip(t, a, b),
                            [x, np.array(-0.5), np.array(0.5)], w)
    np.testing.assert_array_equal(dx, [1.0, 2.0, 4.0, 0.0, 0.0])
    assert (dlo, dhi) == (8.0, 16.0)


# ------------------------------------------------------- 6. GroupNorm, per-group scale

@pytest.mark.parametrize("groups,scale_n,bias_n", [(2, 2, 2), (1, 1, 1), (2, 2, 4)])
def test_group_norm_per_group_scale_and_bias(groups, scale_n, bias_n):
    check_op_gradients(lambda x, s, b: raw.GroupNormalization(x, s, b, num_groups=groups),
                       [f64(2, 4, 3), f64(scale_n, seed=1), f64(bias_n, seed=2)])


@pytest.mark.parametrize("x_declared", [[2, 4, 3], [2, None, 3]], ids=str)
@pytest.mark.parametrize("wrt", [0, 1, 2])
def test_group_norm_scale_form_known_only_at_run_time(x_declared, wrt):
    # scale/bias declared [None]: the rule cannot tell per-channel (4,) from per-group
    # (2,) while building, so both must work when fed
    for n in (4, 2):
        check_declared(lambda x, s, b: raw.GroupNormalization(x, s, b, num_groups=2),
                       [f64(2, 4, 3), f64(n, seed=1), f64(n, seed=2)],
                       [x_declared, [None], [None]], wrt=wrt)


# --------------------------------------------------------------------- 7. Max/Min ties

@pytest.mark.parametrize("build", [
    lambda x: raw.Max(x, x),
    lambda x: raw.Min(x, x, x),
    lambda x: raw.Max(x, x, x - 1.0),
], ids=["max_xx", "min_xxx", "max_xx_lower"])
def test_max_min_of_the_same_tensor(build):
    check_op_gradients(build, [f64(3, 4)])


def test_max_min_ties_go_to_the_first_operand_as_tf():
    """TF's MaximumGrad/MinimumGrad give a tie to x (x >= y / x <= y): TensorFlow 2.21's
    tf.gradients of tf.maximum(x, y) and tf.minimum(x, y) at x = y = 1 are [1], [0]
    each. Variadic Max/Min extend it: the first operand equal to the result."""
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([1.0, 5.0, 3.0])
    c = np.array([1.0, 0.0, 0.0])
    w = np.array([3.0, 6.0, 12.0])
    np.testing.assert_allclose(grads_of(lambda *t: raw.Max(*t), [a, b, c], w),
                               [[3.0, 0.0, 12.0], [0.0, 6.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(grads_of(lambda *t: raw.Min(*t), [a, b], w),
                               [[3.0, 6.0, 12.0], [0.0, 0.0, 0.0]])
    one = np.array([1.0])
    np.testing.assert_allclose(grads_of(lambda x, y: og.maximum(x, y), [one, one], one),
                               [[1.0], [0.0]])
    np.testing.assert_allclose(grads_of(lambda x, y: og.minimum(x, y), [one, one], one),
                               [[1.0], [0.0]])
    # ReduceMax keeps splitting ties evenly, as TF's reduce_max gradient does
    np.testing.assert_allclose(grads_of(lambda s: og.reduce_max(s, 0),
                                        [np.stack([a, b, c])], w)[0],
                               [[1.0, 0.0, 6.0], [1.0, 6.0, 6.0], [1.0, 0.0, 0.0]])


def test_scatter_max_and_min_split_ties_evenly():
    """Scatter with reduction max/min: dy goes to the candidates equal to the output
    (data's value and the updates written there), split evenly among ties, as TF's
    segment max/min gradients split them."""
    data = np.array([0.5, 2.0, -1.0])
    upd = np.array([0.5, 0.5, 3.0, -4.0])
    w = np.array([3.0, 6.0, 12.0])
    gd, gu = grads_of(lambda d, u: raw.ScatterElements(d, const(np.array([0, 0, 1, 2])), u,
                                                       reduction="max"), [data, upd], w)
    # position 0: data and two updates tie at 0.5; 1: the update 3.0 wins; 2: data wins
    np.testing.assert_allclose(gd, [1.0, 0.0, 12.0])
    np.testing.assert_allclose(gu, [1.0, 1.0, 6.0, 0.0])
    gd, gu = grads_of(lambda d, u: raw.ScatterND(d, const(np.array([[0], [2]])), u,
                                                 reduction="min"),
                      [data, np.array([0.5, -4.0])], w)
    np.testing.assert_allclose(gd, [1.5, 6.0, 0.0])
    np.testing.assert_allclose(gu, [1.5, 12.0])

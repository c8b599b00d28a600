"""TF1's math/array compositions (train/api_math.py) and og.nn's non-layer functions
(train/nn_ops.py) against numpy, gradients by central differences, and exports run by
onnxruntime."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ShapeError

from .gradcheck import check_op_gradients
from .graph_runs import run_on


TINY = np.array([0.0, 1e-30, -1e-30, 1e-9, -1e-9, 3e-8, 1e-4, -0.5, 1.0, 30.0, 80.0,
                 -80.0, -1.0, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log1p_and_expm1_are_accurate_near_zero(dtype):
    x = TINY.astype(dtype)
    with np.errstate(all="ignore"):
        want_log = np.log1p(x)
        want_exp = np.expm1(x)
    got_log, got_exp = run_on(lambda t: [og.log1p(t), og.expm1(t)], x)
    ulp = np.finfo(dtype).eps
    np.testing.assert_allclose(got_log, want_log, rtol=4 * ulp, atol=0)
    np.testing.assert_allclose(got_exp, want_exp, rtol=4 * ulp, atol=0)
    assert got_log.dtype == dtype and got_exp.dtype == dtype


def test_log1p_and_expm1_do_not_overflow_before_the_result_does():
    """(review: log(u) * x and (u - 1) * x overflowed before their division)"""
    big = {np.float32: (1e37, 85.0), np.float64: (1e306, 708.0)}
    for dtype, (huge, top) in big.items():
        x = np.array([huge, top, -top], dtype)
        with np.errstate(over="ignore"):
            want_log, want_exp = np.log1p(x[:1]), np.expm1(x[1:])
        got_log, got_exp = run_on(lambda t: [og.log1p(t[:1]), og.expm1(t[1:])], x)
        np.testing.assert_allclose(got_log, want_log, rtol=4 * np.finfo(dtype).eps)
        np.testing.assert_allclose(got_exp, want_exp, rtol=4 * np.finfo(dtype).eps)
    check_op_gradients(og.expm1, [np.array([700.0, 1e-9, -30.0])], rtol=1e-4)


def test_float16_log1p_and_expm1_are_computed_in_float32():
    x = np.array([-3.04e-4, 9.0, 6e4, 1e-3, -0.5], np.float16)
    got_log, got_exp = run_on(lambda t: [og.log1p(t), og.expm1(t)], x)
    assert got_log.dtype == np.float16 and got_exp.dtype == np.float16
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got_log, np.log1p(x.astype(np.float32)).astype(np.float16))
        np.testing.assert_array_equal(got_exp, np.expm1(x.astype(np.float32)).astype(np.float16))


def test_atan2_gradient_on_the_y_axis_is_tf1s():
    """(review: the x = 0 branch did not depend on x, so d/dx was 0 there)"""
    y, x = np.array([1.0, -2.0, 1.0]), np.array([0.0, 0.0, 1e-170])
    g = og.Graph()
    with g.as_default():
        ty, tx = og.placeholder(og.float64, [3]), og.placeholder(og.float64, [3])
        dy, dx = og.gradients(og.reduce_sum(og.atan2(ty, tx)), [ty, tx])
    got_dy, got_dx = og.Session(g).run([dy, dx], {ty: y, tx: x})
    np.testing.assert_allclose(got_dx, -y / (x * x + y * y), rtol=1e-12)
    np.testing.assert_allclose(got_dy, x / (x * x + y * y), rtol=1e-12, atol=1e-300)


def test_two_plain_numbers_of_mixed_kinds_take_the_first_ones_dtype():
    """(review: floormod(7.5, -2) was refused by an internal op's dtype check)"""
    g = og.Graph()
    with g.as_default():
        outs = [og.floormod(7.5, -2), og.floordiv(7.5, 2), og.truediv(7, 2.0),
                og.atan2(1.0, -1), og.squared_difference(3.0, 1)]
    got = og.Session(g).run(outs)
    np.testing.assert_allclose(got, [-0.5, 3.0, 3.5, 3 * np.pi / 4, 4.0], rtol=1e-6)


def test_log1p_expm1_and_atan2_gradients():
    rng = np.random.RandomState(0)
    x = rng.uniform(-0.9, 3, 12)
    check_op_gradients(og.log1p, [x])
    check_op_gradients(og.expm1, [rng.uniform(-3, 3, 12)])
    check_op_gradients(og.atan2, [rng.randn(12), rng.randn(12)])


def test_atan2_matches_numpy_in_every_quadrant():
    y = np.array([0.0, 1.0, -1.0, 0.0, 0.0, 2.0, -2.0, 3.0, -3.0, 1e-300])
    x = np.array([0.0, 0.0, 0.0, 1.0, -1.0, 2.0, -2.0, -1.0, 5.0, -1.0])
    got = run_on(og.atan2, y, x)
    np.testing.assert_allclose(got, np.arctan2(y, x), rtol=4e-16, atol=0)
    wide = np.array([1e300, -1e300, 3e-300]), np.array([-2e300, 5e299, 1e-300])
    np.testing.assert_allclose(run_on(og.atan2, *wide), np.arctan2(*wide), rtol=4e-16)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_floordiv_and_floormod_round_toward_minus_infinity(dtype):
    a = np.array([7, -7, 7, -7, 0, 6, -6, 5], dtype)
    b = np.array([2, 2, -2, -2, 3, 3, 3, -1], dtype)
    if dtype in (np.float32, np.float64):
        a = (a + np.array([0.5, -0.25, 0, 0, 0, 0.5, 0, 0])).astype(dtype)
    div, mod, also = run_on(lambda x, y: [og.floordiv(x, y), og.floormod(x, y), og.mod(x, y)],
                          a, b)
    np.testing.assert_array_equal(div, np.floor_divide(a, b))
    np.testing.assert_array_equal(mod, np.mod(a, b))
    np.testing.assert_array_equal(also, mod)
    assert div.dtype == dtype and mod.dtype == dtype


def test_floormod_gradient_and_floordiv_has_none():
    rng = np.random.RandomState(1)
    a, b = rng.uniform(0.1, 5, 8), rng.uniform(0.5, 2, 8) * rng.choice([-1, 1], 8)
    check_op_gradients(og.floormod, [a, b])
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [3])
        assert og.gradients(og.floordiv(x, 2.0), [x]) == [None]


@pytest.mark.parametrize("dtype, want", [(np.int8, np.float32), (np.int32, np.float64),
                                         (np.int64, np.float64), (np.float32, np.float32)])
def test_truediv_widens_integers_as_tf1(dtype, want):
    got = run_on(og.truediv, np.array([7, -7], dtype), np.array([2, 4], dtype))
    assert got.dtype == want
    np.testing.assert_array_equal(got, np.array([3.5, -1.75], want))


@pytest.mark.parametrize("name, ref, lo, hi", [
    ("tan", np.tan, -1.2, 1.2), ("asin", np.arcsin, -0.9, 0.9), ("acos", np.arccos, -0.9, 0.9),
    ("atan", np.arctan, -5, 5), ("sinh", np.sinh, -3, 3), ("cosh", np.cosh, -3, 3),
    ("asinh", np.arcsinh, -5, 5), ("acosh", np.arccosh, 1.1, 5), ("atanh", np.arctanh, -0.9, 0.9)])
def test_trigonometric_functions_and_their_gradients(name, ref, lo, hi):
    x = np.random.RandomState(2).uniform(lo, hi, 10)
    fn = getattr(og, name)
    np.testing.assert_allclose(run_on(fn, x), ref(x), rtol=1e-13)
    check_op_gradients(fn, [x])


def test_predicates_and_round():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, np.inf, -np.inf, np.nan, 2.4], np.float32)
    nan, inf, finite, rounded = run_on(
        lambda t: [og.is_nan(t), og.is_inf(t), og.is_finite(t), og.round(t)], x)
    np.testing.assert_array_equal(nan, np.isnan(x))
    np.testing.assert_array_equal(inf, np.isinf(x))
    np.testing.assert_array_equal(finite, np.isfinite(x))
    np.testing.assert_array_equal(rounded, np.round(x))   # halves to even, as TF
    ints = np.array([3, -2], np.int32)
    np.testing.assert_array_equal(run_on(og.round, ints), ints)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), ([0, 2], True),
                                            (-1, True)])
def test_variance_std_norm_and_count_nonzero(axis, keepdims):
    rng = np.random.RandomState(3)
    x = rng.randn(3, 4, 5) * (rng.rand(3, 4, 5) > 0.4)
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    var, std, norm, count = run_on(lambda t: [
        og.reduce_variance(t, axis, keepdims), og.reduce_std(t, axis, keepdims),
        og.reduce_euclidean_norm(t, axis, keepdims), og.count_nonzero(t, axis, keepdims)], x)
    np.testing.assert_allclose(var, np.var(x, np_axis, keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(std, np.std(x, np_axis, keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(norm, np.sqrt((x * x).sum(np_axis, keepdims=keepdims)),
                               rtol=1e-12)
    np.testing.assert_array_equal(count, np.count_nonzero(x, np_axis, keepdims=keepdims))
    assert count.dtype == np.int64
    check_op_gradients(lambda t: og.reduce_std(t, axis, keepdims), [rng.randn(3, 4, 5)])


def test_reverse_slice_and_broadcast_to():
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    rev, rev_none, block, rest, wide = run_on(lambda t: [
        og.reverse(t, [0, -1]), og.reverse(t, []), og.slice(t, [0, 1, 1], [2, 2, -1]),
        og.slice(t, og.constant([1, 0, 2]), og.constant([-1, 2, 2])),
        og.broadcast_to(og.slice(t, [0, 0, 0], [1, 3, 1]), [5, 2, 3, 4])], x)
    np.testing.assert_array_equal(rev, x[::-1, :, ::-1])
    np.testing.assert_array_equal(rev_none, x)
    np.testing.assert_array_equal(block, x[0:2, 1:3, 1:])
    np.testing.assert_array_equal(rest, x[1:, 0:2, 2:4])
    np.testing.assert_array_equal(wide, np.broadcast_to(x[0:1, :, 0:1], (5, 2, 3, 4)))
    check_op_gradients(lambda t: og.reverse(og.slice(t, [0, 1, 0], [-1, 2, 3]), [1]), [x])


def test_eye_linspace_meshgrid_and_matrix_transpose():
    g = og.Graph()
    with g.as_default():
        square = og.eye(3)
        batch = og.eye(2, 4, batch_shape=[2], dtype=og.int32)
        line = og.linspace(-1.0, 2.0, 7)
        one = og.linspace(5.0, 9.0, 1)
        n = og.placeholder(og.int32, [], name="n")
        fed = og.lin_space(og.constant(0.0, og.float64), 1.0, n)
        xs, ys, zs = og.meshgrid(og.constant([1, 2, 3]), og.constant([4, 5]),
                                 og.constant([6, 7, 8, 9]))
        ii, jj = og.meshgrid(og.constant([1, 2, 3]), og.constant([4, 5]), indexing="ij")
        mt = og.matrix_transpose(og.constant(np.arange(24).reshape(2, 3, 4)))
    got = og.Session(g).run([square, batch, line, one, fed, xs, ys, zs, ii, jj, mt], {n: 11})
    np.testing.assert_array_equal(got[0], np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(got[1], np.broadcast_to(np.eye(2, 4, dtype=np.int32),
                                                          (2, 2, 4)))
    np.testing.assert_allclose(got[2], np.linspace(-1, 2, 7, dtype=np.float32), rtol=1e-6)
    assert got[2][-1] == 2.0 and got[2].dtype == np.float32
    np.testing.assert_array_equal(got[3], [5.0])
    np.testing.assert_allclose(got[4], np.linspace(0, 1, 11), rtol=1e-15)
    for mine, want in zip(got[5:8], np.meshgrid([1, 2, 3], [4, 5], [6, 7, 8, 9])):
        np.testing.assert_array_equal(mine, want)
    for mine, want in zip(got[8:10], np.meshgrid([1, 2, 3], [4, 5], indexing="ij")):
        np.testing.assert_array_equal(mine, want)
    np.testing.assert_array_equal(got[10], np.arange(24).reshape(2, 3, 4).swapaxes(1, 2))


@pytest.mark.parametrize("data_format, axis", [(None, -1), ("NHWC", -1), ("NCHW", 1),
                                               ("NC", 1), ("NCDHW", 1)])
def test_bias_add_follows_data_format(data_format, axis):
    rng = np.random.RandomState(4)
    rank = 5 if data_format == "NCDHW" else 2 if data_format == "NC" else 4
    x = rng.randn(*([2, 3, 4, 5, 6][:rank]))
    b = rng.randn(x.shape[axis])
    shape = [1] * rank
    shape[axis] = -1
    got = run_on(lambda t, c: og.nn.bias_add(t, c, data_format=data_format), x, b)
    np.testing.assert_allclose(got, x + b.reshape(shape), rtol=1e-15)
    check_op_gradients(lambda t, c: og.nn.bias_add(t, c, data_format=data_format), [x, b])


@pytest.mark.parametrize("axes, keepdims", [([0], False), ([0, 2, 3], True), (1, False)])
def test_moments_and_l2_normalize(axes, keepdims):
    rng = np.random.RandomState(5)
    x = rng.randn(4, 3, 2, 2) * 3 + 1
    np_axes = tuple(axes) if isinstance(axes, list) else axes
    mean, var, unit = run_on(lambda t: list(og.nn.moments(t, axes, keepdims=keepdims))
                           + [og.nn.l2_normalize(t, axis=axes)], x)
    np.testing.assert_allclose(mean, x.mean(np_axes, keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(var, x.var(np_axes, keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(
        unit, x / np.sqrt(np.maximum((x * x).sum(np_axes, keepdims=True), 1e-12)), rtol=1e-12)
    check_op_gradients(lambda t: list(og.nn.moments(t, axes, keepdims=keepdims)), [x])
    check_op_gradients(lambda t: og.nn.l2_normalize(t, dim=axes), [x])


def test_activations_relu6_selu_softsign_swish():
    x = np.array([-7.0, -1.0, -0.1, 0.3, 2.0, 5.9, 6.5, 20.0])
    relu6, selu, softsign, swish = run_on(lambda t: [
        og.nn.relu6(t), og.nn.selu(t), og.nn.softsign(t), og.nn.swish(t)], x)
    np.testing.assert_array_equal(relu6, np.clip(x, 0, 6))
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    np.testing.assert_allclose(selu, scale * np.where(x > 0, x, alpha * np.expm1(x)),
                               rtol=1e-15)
    np.testing.assert_allclose(softsign, x / (1 + np.abs(x)), rtol=1e-15)
    np.testing.assert_allclose(swish, x / (1 + np.exp(-x)), rtol=1e-15)
    for fn in (og.nn.relu6, og.nn.selu, og.nn.softsign, og.nn.swish):
        check_op_gradients(fn, [x])


def test_in_top_k_counts_ties_as_in_and_bad_rows_as_out():
    scores = np.array([[0.1, 0.5, 0.5, 0.2], [0.9, 0.8, 0.7, 0.6], [0.3, 0.3, 0.3, 0.3],
                       [0.1, np.nan, 0.2, 0.3], [0.4, 0.3, 0.2, 0.1]], np.float32)
    targets = np.array([2, 3, 0, 1, 7], np.int32)
    k1, k2, k3 = run_on(lambda s, t: [og.nn.in_top_k(s, t, 1), og.nn.in_top_k(s, t, 2),
                                    og.nn.in_top_k(s, t, 3)], scores, targets)
    np.testing.assert_array_equal(k1, [True, False, True, False, False])
    np.testing.assert_array_equal(k2, [True, False, True, False, False])
    np.testing.assert_array_equal(k3, [True, False, True, False, False])
    np.testing.assert_array_equal(
        run_on(lambda s, t: og.nn.in_top_k(s, t, 4), scores, targets),
        [True, True, True, False, False])


def test_bad_arguments_are_refused_while_building():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2, 3])
        with pytest.raises(TypeError, match="log1p: x must be a float tensor"):
            og.log1p(og.constant([1, 2]))
        with pytest.raises(ShapeError, match="names an axis twice"):
            og.reverse(x, [0, -2])
        with pytest.raises(ShapeError, match="out of range"):
            og.reverse(x, [2])
        with pytest.raises(ShapeError, match="leave"):
            og.slice(x, [1, 0], [2, -1])
        with pytest.raises(ShapeError, match="one entry per axis"):
            og.slice(x, [0], [1])
        with pytest.raises(ShapeError, match="does not broadcast"):
            og.broadcast_to(x, [4, 3, 2])
        with pytest.raises(ShapeError, match="num must be >= 1"):
            og.linspace(0.0, 1.0, 0)
        with pytest.raises(ValueError, match="indexing"):
            og.meshgrid(x, indexing="xx")
        with pytest.raises(ShapeError, match="must be 1-D"):
            og.meshgrid(x)
        with pytest.raises(ShapeError, match="rank >= 2"):
            og.matrix_transpose(og.constant([1.0]))
        with pytest.raises(ValueError, match="data_format"):
            og.nn.bias_add(x, og.constant([1.0, 2.0, 3.0]), data_format="HWC")
        with pytest.raises(ShapeError, match="bias of 2 values for 3 channels"):
            og.nn.bias_add(x, og.constant([1.0, 2.0]))
        with pytest.raises(ShapeError, match=r"\(batch, classes\)"):
            og.nn.in_top_k(og.constant([1.0]), og.constant([0]), 1)
        with pytest.raises(ShapeError, match="numeric"):
            og.floormod(og.constant([True]), og.constant([False]))


def test_compositions_export_and_run_in_onnxruntime():
    rng = np.random.RandomState(6)
    xv = rng.randn(3, 4).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [3, 4], name="x")
        mean, var = og.nn.moments(x, [0])
        outs = {"log1p": og.log1p(og.abs(x)), "atan2": og.atan2(x, og.reverse(x, [1])),
                "mod": og.floormod(x, 0.7), "mean": mean, "var": var,
                "bias": og.nn.bias_add(x, og.constant([1.0, 2.0, 3.0, 4.0])),
                "in_top": og.nn.in_top_k(x, og.constant([0, 1, 2], og.int32), 2),
                "grid": og.meshgrid(og.slice(x, [0, 0], [1, -1])[0], og.constant([1.0, 2.0]))[0]}
        sig = og.signature({"x": x}, outs)
    want = og.Session(g).run(list(outs.values()), {x: xv})
    proto = to_onnx(g, signatures={"serving": sig})
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(list(outs), {"x": xv})
    for key, a, b in zip(outs, got, want):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, err_msg=key)
    np.testing.assert_allclose(want[1], np.arctan2(xv, xv[:, ::-1]), rtol=2e-6)


def test_review_mends_of_the_nn_functions():
    """in_top_k says False for a row holding a non-finite score and refuses batches of
    different sizes; relu6's and selu's gradients are TF's at their kinks; moments
    and count_nonzero take TF1's argument order and old names."""
    scores = np.array([[np.inf, 1, 2], [np.nan, 1, 2], [0.1, 0.2, 0.3]], np.float32)
    got = run_on(lambda s: og.nn.in_top_k(s, og.constant([2, 2, 2]), 2), scores)
    np.testing.assert_array_equal(got, [False, False, True])
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [3, 3])
        with pytest.raises(ShapeError, match="3 rows of predictions but 1 targets"):
            og.nn.in_top_k(p, og.constant([0]), 1)
        x = og.placeholder(og.float64, [5])
        d_relu6, d_selu = og.gradients(og.reduce_sum(og.nn.relu6(x)), [x])[0], \
            og.gradients(og.reduce_sum(og.nn.selu(x)), [x])[0]
        mean, var = og.nn.moments(x, [0], None, "stats", keep_dims=True)
        counted = og.count_nonzero(x, reduction_indices=[0], keep_dims=True)
        flipped = og.matrix_transpose(og.constant(np.eye(2)), conjugate=True)
    values = np.array([-1.0, 0.0, 3.0, 6.0, 7.0])
    got = og.Session(g).run([d_relu6, d_selu, mean, var, counted, flipped], {x: values})
    np.testing.assert_array_equal(got[0], [0, 0, 1, 0, 0])
    assert got[1][1] == 1.0507009873554804934193349852946   # scale, not scale * alpha
    assert got[2].shape == (1,) and got[4].tolist() == [4]
    np.testing.assert_allclose(got[3], [values.var()], rtol=1e-12)


def test_shapes_building_cannot_check_are_checked_at_run_time():
    """(review: with unknown dims broadcast_to broadcast both ways, slice clamped its
    block, bias_add broadcast a one-value bias and linspace took num <= 0; TF1 refuses
    each at run time; the exports leave the checks out)"""
    from onegraph.errors import ExecutionError

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None], name="x")
        bias = og.placeholder(og.float32, [None], name="bias")
        n = og.placeholder(og.int32, [], name="n")
        cases = [(og.broadcast_to(x[:, :1], [1, 3]), {}, "does not broadcast"),
                 (og.slice(x, [0, 1], [1, 5]), {}, "keep the block inside"),
                 (og.slice(x, og.constant([-1, 0]), og.constant([1, 1])), {},
                  "keep the block inside"),
                 (og.nn.bias_add(x, bias), {bias: np.ones(1, np.float32)},
                  "one value per channel"),
                 (og.linspace(0.0, 1.0, n), {n: 0}, "num must be at least 1")]
        fine = [og.broadcast_to(x[:, :1], [2, 3]), og.slice(x, [0, 1], [2, -1]),
                og.nn.bias_add(x, bias), og.linspace(0.0, 1.0, n)]
    sess = og.Session(g)
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    for tensor, feeds, message in cases:
        with pytest.raises(ExecutionError, match=message):
            sess.run(tensor, {x: xv, **feeds})
    got = sess.run(fine, {x: xv, bias: np.ones(3, np.float32), n: 4})
    np.testing.assert_array_equal(got[0], np.broadcast_to(xv[:, :1], (2, 3)))
    np.testing.assert_array_equal(got[1], xv[:, 1:])
    np.testing.assert_array_equal(got[2], xv + 1)
    np.testing.assert_allclose(got[3], np.linspace(0, 1, 4), rtol=1e-6)

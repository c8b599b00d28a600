"""Static shapes against TensorFlow's: the expected shapes are what tf.compat.v1 2.21
(graph mode) printed for the same expressions. First ops whose shape argument is known
only in part while building (``og.zeros([og.shape(x)[0], 3])``), then other shapes TF
knows while building (reductions of unknown rank, segment counts, crop sizes). The
run's shapes must agree with them."""

import numpy as np
import pytest

import onegraph as og

# name -> (expression of the placeholder x [None, 16, 16, 1], TF1's static shape)
CASES = {
    "random_uniform": (lambda x: og.random_uniform([og.shape(x)[0], 1, 1, 1]),
                       (None, 1, 1, 1)),
    "zeros": (lambda x: og.zeros([og.shape(x)[0], 3]), (None, 3)),
    "zeros_of_stack": (lambda x: og.zeros(og.stack([og.shape(x)[0], 3])), (None, 3)),
    "fill": (lambda x: og.fill([og.shape(x)[1], 2], 1.0), (16, 2)),
    "broadcast_to": (lambda x: og.broadcast_to(1.0, [og.shape(x)[0], 4]), (None, 4)),
    "reshape_batch_and_rest": (lambda x: og.reshape(x, [og.shape(x)[0], -1]), (None, None)),
    "reshape_rest_and_height": (lambda x: og.reshape(x, [-1, og.shape(x)[1], 16]),
                                (None, 16, 16)),
    "tile": (lambda x: og.tile(x, [1, og.shape(x)[0], 2, 1]), (None, None, 32, 1)),
    "ones_of_concat": (lambda x: og.ones(og.concat([og.shape(x)[:1], [5]], 0)), (None, 5)),
    "zeros_of_shape_slice": (lambda x: og.zeros(og.shape(x)[1:3]), (16, 16)),
    "zeros_of_shape": (lambda x: og.zeros(og.shape(x)), (None, 16, 16, 1)),
    "random_normal_of_last_and_first": (
        lambda x: og.random_normal([og.shape(x)[-1], og.shape(x)[0]]), (1, None)),
    "reshape_to_shape_slice": (lambda x: og.reshape(og.zeros([16 * 16]), og.shape(x)[1:3]),
                               (16, 16)),
    "fill_of_strided_shape": (lambda x: og.fill(og.shape(x)[::2], 0.0), (None, 16)),
    "zeros_of_cast_shape": (lambda x: og.zeros(og.cast(og.shape(x)[:2], og.int64)),
                            (None, 16)),
    "interpolation": (lambda x: (lambda e: e * x + (1 - e) * x)(
        og.random_uniform([og.shape(x)[0], 1, 1, 1])), (None, 16, 16, 1)),
    "zeros_of_a_product": (lambda x: og.zeros([og.shape(x)[0] * 2, 3]), (None, 3)),
    "reshape_to_stack": (lambda x: og.reshape(x, og.stack([-1, 256])), (None, 256)),
    "reshape_batch_known_rest": (lambda x: og.reshape(x, [og.shape(x)[0], 16, 16]),
                                 (None, 16, 16)),
    "resize_to_twice": (lambda x: og.image.resize_bilinear(x, og.shape(x)[1:3] * 2),
                        (None, None, None, 1)),
    "zeros_of_leading_dims": (lambda x: og.zeros(og.shape(x)[:-1]), (None, 16, 16)),
    "zeros_of_trailing_dims": (lambda x: og.zeros(og.shape(x)[-2:]), (16, 1)),
    "zeros_of_expanded_batch": (lambda x: og.zeros(og.expand_dims(og.shape(x)[0], 0)),
                                (None,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_static_shape_is_tensorflows_and_the_runs(name):
    build, want = CASES[name]
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 16, 16, 1])
        y = build(x)
        assert tuple(y.shape) == want
        got = og.Session(g).run(y, {x: np.zeros((3, 16, 16, 1), np.float32)})
    assert all(w is None or w == d for w, d in zip(want, got.shape)), got.shape


def test_a_dense_layer_reads_the_channels_of_an_interpolation():
    """WGAN-GP's interpolation of real and fake images, eps of shape [batch, 1, 1, 1]:
    the conv after it needs the channel count, which was lost (eps was (?, ?, ?, ?))."""
    g = og.Graph()
    with g.as_default():
        real = og.placeholder(og.float32, [None, 8, 8, 3])
        eps = og.random_uniform([og.shape(real)[0], 1, 1, 1])
        mixed = eps * real + (1.0 - eps) * og.zeros_like(real)
        h = og.layers.conv2d(mixed, 4, 3, padding="same")
        assert tuple(h.shape) == (None, 8, 8, 4)
        sess = og.Session(g)
        sess.run(og.global_variables_initializer())
        assert sess.run(h, {real: np.ones((2, 8, 8, 3), np.float32)}).shape == (2, 8, 8, 4)


def test_entries_of_unknown_length_leave_the_rank_unknown():
    # TF: <unknown> with n [None], (?, ?, 3) with n [2]
    g = og.Graph()
    with g.as_default():
        n = og.placeholder(og.int64, [None])
        m = og.placeholder(og.int64, [2])
        z = og.zeros(og.concat([n, [3]], 0))
        w = og.zeros(og.concat([m, [3]], 0))
        assert z.shape is None
        assert tuple(w.shape) == (None, None, 3)
        got = og.Session(g).run([z, w], {n: np.asarray([2, 2]), m: np.asarray([1, 4])})
    assert [v.shape for v in got] == [(2, 2, 3), (1, 4, 3)]


# name -> (expression of x [None, 8, 8, 3], v [None, 5], i int32 [None], u of unknown
# rank, ub bool of unknown rank; TF1's static shape)
MORE_CASES = {
    "newaxis": (lambda x, v, i, u, ub: x[..., og.newaxis], (None, 8, 8, 3, 1)),
    "reduce_max_of_unknown_rank": (lambda x, v, i, u, ub: og.reduce_max(u), ()),
    "reduce_mean_of_unknown_rank": (lambda x, v, i, u, ub: og.reduce_mean(u), ()),
    "reduce_any_of_unknown_rank": (lambda x, v, i, u, ub: og.reduce_any(ub), ()),
    "count_nonzero_of_unknown_rank": (lambda x, v, i, u, ub: og.count_nonzero(u), ()),
    "reduce_sum_kept_of_unknown_rank": (
        lambda x, v, i, u, ub: og.reduce_sum(u, keepdims=True), None),
    "reduce_sum_axis_of_unknown_rank": (lambda x, v, i, u, ub: og.reduce_sum(u, 0), None),
    "unsorted_segment_sum": (lambda x, v, i, u, ub: og.unsorted_segment_sum(v, i, 4), (4, 5)),
    "unsorted_segment_max_of_a_constant": (
        lambda x, v, i, u, ub: og.unsorted_segment_max(v, i, og.constant(4)), (4, 5)),
    "unsorted_segment_mean_of_a_placeholder": (
        lambda x, v, i, u, ub: og.unsorted_segment_mean(v, i, og.placeholder(og.int32, [])),
        (None, 5)),
    "random_crop": (lambda x, v, i, u, ub: og.random_crop(x, [2, 4, 4, 3]), (2, 4, 4, 3)),
    "random_crop_of_a_constant": (
        lambda x, v, i, u, ub: og.random_crop(x, og.constant([2, 4, 4, 3])), (2, 4, 4, 3)),
    "random_crop_of_the_batch": (
        lambda x, v, i, u, ub: og.random_crop(x, [og.shape(x)[0], 4, 4, 3]), (None, 4, 4, 3)),
}


@pytest.mark.parametrize("name", list(MORE_CASES))
def test_more_static_shapes_are_tensorflows(name):
    build, want = MORE_CASES[name]
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 8, 8, 3])
        v = og.placeholder(og.float32, [None, 5])
        i = og.placeholder(og.int32, [None])
        u = og.placeholder(og.float32, None)
        ub = og.placeholder(og.bool, None)
        y = build(x, v, i, u, ub)
        assert (None if y.shape is None else tuple(y.shape)) == want


def test_add_n_merges_its_inputs_shapes_and_refuses_different_ones():
    # TF: add_n of (?, 3) and (2, ?) is (2, 3); a scalar with a (4, 1) loss is refused
    # while building (tf.losses.get_total_loss over a Reduction.NONE loss)
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [None, 3])
        b = og.placeholder(og.float32, [2, None])
        total = og.add_n([a, b])
        assert tuple(total.shape) == (2, 3)
        with pytest.raises(og.errors.ShapeError, match="add_n: the inputs must have one "
                                                        "shape"):
            og.add_n([og.zeros([4, 1]), og.zeros([])])
        got = og.Session(g).run(total, {a: np.ones((2, 3)), b: np.full((2, 3), 2.0)})
    np.testing.assert_array_equal(got, np.full((2, 3), 3.0))

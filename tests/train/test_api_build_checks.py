"""Graph-building checks a TF1 user relies on, and two gradient fixes (from an audit
against numpy references and finite differences):

- tensors of different dtypes are never mixed implicitly (numpy would promote while
  the graph declared the first operand's dtype);
- indices, ids and labels must be integer tensors and conditions bool (a float
  tensor was silently truncated);
- an empty axis list reduces nothing, and squeezes every size-1 axis (TF's default);
- bad layer arguments are named errors at build time;
- d(x^p)/dp is 0 where x <= 0 (as TF), and the float32 logsumexp gradient is the
  softmax of x itself.
"""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import OneGraphError, ShapeError


def _run(fetch, feeds=None):
    g = fetch.graph
    return og.Session(g).run(fetch, feeds or {})


@pytest.mark.parametrize("build", [
    lambda a, b: a + b,
    lambda a, b: og.add(a, b),
    lambda a, b: og.matmul(og.reshape(a, [1, 3]), og.reshape(b, [3, 1])),
    lambda a, b: og.concat([a, b], 0),
    lambda a, b: og.add_n([a, b]),
    lambda a, b: og.where(og.greater(a, 0), a, b),
], ids=["operator", "add", "matmul", "concat", "add_n", "where"])
def test_operands_of_different_dtypes_are_refused(build):
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [3], name="a")
        b = og.placeholder(og.float64, [3], name="b")
        with pytest.raises(ShapeError, match="operands of different dtypes"):
            build(a, b)


def test_plain_values_still_take_the_tensors_dtype():
    g = og.Graph()
    with g.as_default():
        x = og.constant(np.array([1, 2, 3], np.int64))
        y = og.concat([x, [4]], 0) * 2 + 1
        assert y.dtype == x.dtype
    np.testing.assert_array_equal(_run(y), [3, 5, 7, 9])


@pytest.mark.parametrize("reduce", [og.reduce_sum, og.reduce_mean, og.reduce_max,
                                    og.reduce_min, og.reduce_prod, og.reduce_logsumexp])
def test_empty_axis_list_reduces_nothing(reduce):
    g = og.Graph()
    with g.as_default():
        x = og.constant(np.arange(4, dtype=np.float32).reshape(2, 2))
        y = reduce(x, axis=[])
    np.testing.assert_array_equal(_run(y), np.arange(4).reshape(2, 2))


def test_squeeze_with_an_empty_axis_list_squeezes_all():
    g = og.Graph()
    with g.as_default():
        y = og.squeeze(og.constant(np.zeros((1, 3, 1), np.float32)), [])
    assert _run(y).shape == (3,)


def test_float_indices_labels_and_conditions_are_refused():
    g = og.Graph()
    with g.as_default():
        params = og.constant(np.zeros((5, 2), np.float32))
        f = og.constant(np.array([0.99, 3.7], np.float32))
        logits = og.constant(np.zeros((2, 3), np.float32))
        with pytest.raises(ShapeError, match="gather: indices must be an integer tensor"):
            og.gather(params, f)
        with pytest.raises(ShapeError, match="embedding_lookup: ids must be an integer tensor"):
            og.nn.embedding_lookup(params, f)
        with pytest.raises(ShapeError, match="one_hot: indices"):
            og.one_hot(f, 4)
        with pytest.raises(ShapeError, match="labels must be an integer tensor"):
            og.nn.sparse_softmax_cross_entropy(labels=f, logits=logits)
        with pytest.raises(ShapeError, match="where: condition must be a bool tensor"):
            og.where(f, f, f)
        # plain Python values still convert
        picked = og.gather(params, [4, 0])
        mask = og.where([True, False], f, f * 2)
    assert _run(picked).shape == (2, 2)
    np.testing.assert_allclose(_run(mask), np.float32([0.99, 7.4]))


@pytest.mark.parametrize("pool", [og.nn.max_pool2d_layer,
                                  og.nn.avg_pool2d_layer])
def test_pool_padding_must_be_same_or_valid(pool):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [1, 1, 5, 5])
        with pytest.raises(OneGraphError, match="padding must be SAME or VALID"):
            pool(x, 2, padding="SAME ")
        with pytest.raises(ShapeError, match="must be NCHW"):
            pool(og.placeholder(og.float32, [5, 5]), 2)


def test_dense_refuses_an_integer_input():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.int64, [None, 3])
        with pytest.raises(ShapeError, match="must be floating point"):
            og.nn.dense(x, 4)


def test_batch_norm_axis_out_of_range_is_named():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(ShapeError, match="axis 3 is out of range"):
            og.nn.batch_norm(og.placeholder(og.float32, [3, 4]), training=True, axis=3)


@pytest.mark.parametrize("shape", [None, [4]])
def test_matmul_transpose_needs_rank_two(shape):
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, shape)
        b = og.placeholder(og.float32, [4, 3])
        with pytest.raises(ShapeError, match="transpose_a needs a of known rank >= 2"):
            og.matmul(a, b, transpose_a=True)


def test_pow_gradient_in_the_exponent_is_zero_where_the_base_is_not_positive():
    g = og.Graph()
    with g.as_default():
        x = og.constant(np.array([0.0, -2.0, 2.0]))
        p = og.placeholder(og.float64, [], name="p")
        (dp,) = og.gradients(og.reduce_sum(og.pow(x, p)), [p])
    got = og.Session(g).run(dp, {p: np.float64(2.0)})
    # TF's rule: sum of x^p log x over x > 0 only
    np.testing.assert_allclose(got, 4.0 * np.log(2.0), rtol=1e-12)


def test_logsumexp_gradient_in_float32_sums_to_one_at_large_logits():
    logits = np.array([[1e4, 1e4], [1e3, 1e3 - 1.0]], np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2, 2], name="x")
        (dx,) = og.gradients(og.reduce_sum(og.reduce_logsumexp(x, axis=1)), [x])
    got = og.Session(g).run(dx, {x: logits})
    wide = logits.astype(np.float64)
    e = np.exp(wide - wide.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-6, atol=0)

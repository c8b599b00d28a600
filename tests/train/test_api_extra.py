"""The TF1-named functions of train/api_extra.py against numpy oracles written here:
values (static and run-time shapes, negative axes, empty tensors, ties), gradients by
finite differences, named build-time errors for bad arguments, and for the random
functions shape/dtype, seeding rules and generous statistical bounds."""

import builtins
import math

import numpy as np
import pytest

import onegraph as og
import onegraph.train.api_extra as tfx
from onegraph.errors import OneGraphError, ShapeError

from .gradcheck import check_op_gradients
from .graph_runs import run_on

R = np.random.default_rng(7)


def built(fn):
    """fn() inside a fresh default graph, and that graph."""
    g = og.Graph()
    with g.as_default():
        return fn(), g


def evaluate(fn):
    out, g = built(fn)
    return og.Session(g, seed=0).run(out)


def placeholder_in_new_graph(dtype, shape):
    g = og.Graph()
    with g.as_default():
        return og.placeholder(dtype, shape, name="x")


# --------------------------------------------------------------------------- reduce_any/all

BOOLS = R.random((3, 4)) < 0.4


@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 1], [], (-2,)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dynamic", [False, True])
def test_reduce_any_all_match_numpy(axis, keepdims, dynamic):
    x = BOOLS.copy()
    x[1] = True  # a row of Trues and (likely) rows with Falses
    got_any, got_all = run_on(lambda t: [tfx.reduce_any(t, axis, keepdims),
                                         tfx.reduce_all(t, axis, keepdims)], x,
                              dynamic=dynamic)
    np_axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    if np_axis == ():
        want_any = want_all = x  # TF: an empty axis list reduces nothing
    else:
        want_any = np.any(x, axis=np_axis, keepdims=keepdims)
        want_all = np.all(x, axis=np_axis, keepdims=keepdims)
    np.testing.assert_array_equal(got_any, want_any)
    np.testing.assert_array_equal(got_all, want_all)
    assert got_any.dtype == bool and got_all.dtype == bool


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reduce_any_all_of_empty_tensors(axis):
    x = np.zeros((0, 3), bool)
    got_any, got_all = run_on(lambda t: [tfx.reduce_any(t, axis), tfx.reduce_all(t, axis)], x)
    np.testing.assert_array_equal(got_any, np.any(x, axis=axis))
    np.testing.assert_array_equal(got_all, np.all(x, axis=axis))


@pytest.mark.parametrize("fn", [tfx.reduce_any, tfx.reduce_all])
def test_reduce_any_all_bad_arguments(fn):
    what = fn.__name__
    with pytest.raises(ShapeError, match=f"{what}: x must be a bool tensor, got float32"):
        fn(placeholder_in_new_graph(og.float32, [2]))
    xb = placeholder_in_new_graph(og.bool_, [2, 3])
    with pytest.raises(ShapeError, match=f"{what}: axis 2 is out of range"):
        fn(xb, 2)
    with pytest.raises(TypeError, match=f"{what}: axis must be an int"):
        fn(xb, 1.0)
    with pytest.raises(TypeError, match=f"{what}: keepdims must be a bool"):
        fn(xb, 0, keepdims="yes")
    with pytest.raises(TypeError, match=f"{what}: name must be a str"):
        fn(xb, name=3)


# --------------------------------------------------------------------------- cumsum

def np_cumsum(x, axis, exclusive, reverse):
    """TF's cumsum from numpy parts: flip, inclusive sum, drop self, flip back."""
    y = np.flip(x, axis) if reverse else x
    c = np.cumsum(y, axis=axis)
    if exclusive:
        c = c - y
    return np.flip(c, axis) if reverse else c


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_cumsum_matches_numpy(axis, exclusive, reverse, dtype):
    x = R.integers(-5, 6, (2, 3, 4)).astype(dtype)
    got = run_on(lambda t: tfx.cumsum(t, axis, exclusive, reverse), x,
                 dynamic=axis == 1)
    np.testing.assert_allclose(got, np_cumsum(x, axis, exclusive, reverse))
    assert got.dtype == dtype


@pytest.mark.parametrize("shape, axis", [((0, 3), 0), ((2, 0), 1), ((2, 0), 0)])
def test_cumsum_of_empty_tensors(shape, axis):
    x = np.zeros(shape, np.float32)
    got = run_on(lambda t: tfx.cumsum(t, axis, exclusive=True, reverse=True), x)
    assert got.shape == shape


def test_cumsum_default_axis_is_0():
    x = R.standard_normal((3, 2))
    np.testing.assert_allclose(run_on(tfx.cumsum, x), np.cumsum(x, axis=0))


@pytest.mark.parametrize("exclusive, reverse", [(False, False), (True, True), (True, False)])
def test_cumsum_gradient(exclusive, reverse):
    check_op_gradients(lambda t: tfx.cumsum(t, 1, exclusive, reverse),
                       [R.standard_normal((3, 4))])


def test_cumsum_bad_arguments():
    x = placeholder_in_new_graph(og.float32, [2, 3])
    with pytest.raises(ShapeError, match=r"cumsum: axis 2 is out of range .* \[-2, 2\)"):
        tfx.cumsum(x, 2)
    with pytest.raises(TypeError, match="cumsum: axis must be an int"):
        tfx.cumsum(x, 1.0)
    with pytest.raises(TypeError, match="cumsum: exclusive must be a bool"):
        tfx.cumsum(x, 0, exclusive="no")
    with pytest.raises(TypeError, match="cumsum: reverse must be a bool"):
        tfx.cumsum(x, 0, reverse=None)
    with pytest.raises(ShapeError, match="cumsum: x must be a numeric tensor, got bool"):
        tfx.cumsum(placeholder_in_new_graph(og.bool_, [2]))
    with pytest.raises(ShapeError, match="cumsum: x must have rank >= 1"):
        tfx.cumsum(placeholder_in_new_graph(og.float32, []))


# --------------------------------------------------------------------------- top_k

def np_top_k(x, k):
    """Largest k of the last axis; equal values by ascending index (stable sort)."""
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order


@pytest.mark.parametrize("k", [0, 1, 3, 6])
@pytest.mark.parametrize("dynamic", [False, True])
def test_top_k_matches_numpy_with_ties_in_index_order(k, dynamic):
    x = R.integers(0, 3, (4, 6)).astype(np.float32)  # many ties
    values, indices = run_on(lambda t: tfx.top_k(t, k), x, dynamic=dynamic)
    want_v, want_i = np_top_k(x, k)
    np.testing.assert_array_equal(values, want_v)
    np.testing.assert_array_equal(indices, want_i)
    assert indices.dtype == np.int32 and values.dtype == np.float32


@pytest.mark.parametrize("k", [1, 3, 8])
def test_top_k_ties_when_k_is_much_smaller_than_the_axis(k):
    # k <= n / 8 takes the kernel's partial-selection path: ties must still go by index
    x = R.integers(0, 4, (5, 64)).astype(np.float64)
    values, indices = run_on(lambda t: tfx.top_k(t, k), x)
    want_v, want_i = np_top_k(x, k)
    np.testing.assert_array_equal(values, want_v)
    np.testing.assert_array_equal(indices, want_i)


def test_top_k_is_a_namedtuple_over_the_last_axis_of_higher_ranks():
    x = R.integers(-50, 50, (2, 3, 5)).astype(np.int64)
    out, _ = built(lambda: tfx.top_k(og.constant(x), k=2, sorted=False))
    assert out._fields == ("values", "indices")
    got = og.Session(out.values.graph).run(out)
    want_v, want_i = np_top_k(x, 2)
    np.testing.assert_array_equal(got.values, want_v)
    np.testing.assert_array_equal(got.indices, want_i)


def test_top_k_default_k_is_1_and_empty_rows_work():
    x = R.standard_normal((3, 4))
    values, indices = run_on(tfx.top_k, x)
    np.testing.assert_array_equal(values[:, 0], x.max(axis=1))
    np.testing.assert_array_equal(indices[:, 0], x.argmax(axis=1))
    values, indices = run_on(lambda t: tfx.top_k(t, 2), np.zeros((0, 3)))
    assert values.shape == (0, 2) and indices.shape == (0, 2)


def test_top_k_values_gradient():
    x = R.permutation(12).reshape(3, 4) + R.uniform(0, 0.1, (3, 4))  # distinct values
    check_op_gradients(lambda t: tfx.top_k(t, 2).values, [x])


def test_top_k_bad_arguments():
    x = placeholder_in_new_graph(og.float32, [2, 3])
    with pytest.raises(ShapeError, match=r"top_k: k=4 is larger than the last axis .* "
                                         r"\(length 3"):
        tfx.top_k(x, 4)
    with pytest.raises(ValueError, match="top_k: k must be >= 0, got -1"):
        tfx.top_k(x, -1)
    with pytest.raises(TypeError, match="top_k: k must be an int"):
        tfx.top_k(x, 2.0)
    with pytest.raises(TypeError, match="top_k: sorted must be a bool"):
        tfx.top_k(x, 1, sorted="yes")
    with pytest.raises(ShapeError, match="top_k: input must have rank >= 1"):
        tfx.top_k(placeholder_in_new_graph(og.float32, []))
    with pytest.raises(ShapeError, match="top_k: input must be a numeric tensor"):
        tfx.top_k(placeholder_in_new_graph(og.bool_, [3]))


def test_top_k_larger_than_a_run_time_axis_fails_when_run():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None])
        values = tfx.top_k(x, 4).values
    with pytest.raises(ShapeError, match="k=4"):
        og.Session(g).run(values, {x: np.zeros((2, 3), np.float32)})


# --------------------------------------------------------------------------- sort / argsort

def np_argsort(x, axis, direction):
    """Stable argsort; descending sorts the negation (ties keep index order)."""
    return np.argsort(-x if direction == "DESCENDING" else x, axis=axis, kind="stable")


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_sort_and_argsort_match_numpy(axis, direction, dynamic):
    x = R.integers(-3, 4, (5, 6)).astype(np.int64)  # ties in both directions
    got_sorted, got_order = run_on(
        lambda t: [tfx.sort(t, axis, direction), tfx.argsort(t, axis, direction)], x,
        dynamic=dynamic)
    order = np_argsort(x, axis, direction)
    np.testing.assert_array_equal(got_order, order)
    np.testing.assert_array_equal(got_sorted, np.take_along_axis(x, order, axis=axis))
    assert got_order.dtype == np.int32 and got_sorted.dtype == np.int64


def test_sort_defaults_floats_and_empty_axes():
    x = R.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(run_on(tfx.sort, x), np.sort(x, axis=-1))
    np.testing.assert_array_equal(run_on(tfx.argsort, x), np.argsort(x, axis=-1))
    e = np.zeros((3, 0), np.float32)
    assert run_on(tfx.sort, e).shape == (3, 0)
    assert run_on(lambda t: tfx.argsort(t, 0), e, dynamic=True).shape == (3, 0)


def test_sort_gradient():
    x = R.permutation(12).reshape(3, 4) + R.uniform(0, 0.1, (3, 4))
    check_op_gradients(lambda t: tfx.sort(t, axis=0, direction="DESCENDING"), [x])


@pytest.mark.parametrize("fn", [tfx.sort, tfx.argsort])
def test_sort_bad_arguments(fn):
    what = fn.__name__
    x = placeholder_in_new_graph(og.float32, [2, 3])
    with pytest.raises(ValueError, match=f"{what}: direction must be 'ASCENDING' or "
                                         "'DESCENDING', got 'ascending'"):
        fn(x, direction="ascending")
    with pytest.raises(ShapeError, match=f"{what}: axis 2 is out of range"):
        fn(x, 2)
    with pytest.raises(TypeError, match=f"{what}: axis must be an int"):
        fn(x, None)
    with pytest.raises(ShapeError, match=f"{what}: values must have rank >= 1"):
        fn(placeholder_in_new_graph(og.float32, []))
    with pytest.raises(TypeError, match=f"{what}: name must be a str"):
        fn(x, name=1)


def test_argsort_stable_must_be_a_bool():
    with pytest.raises(TypeError, match="argsort: stable must be a bool"):
        tfx.argsort(placeholder_in_new_graph(og.float32, [3]), stable="yes")


# --------------------------------------------------------------------------- range

@pytest.mark.parametrize("args, kwargs, want", [
    ((5,), {}, np.arange(5, dtype=np.int32)),
    ((2, 9, 3), {}, np.arange(2, 9, 3, dtype=np.int32)),
    ((5, 1, -1), {}, np.arange(5, 1, -1, dtype=np.int32)),
    ((5, 1), {}, np.arange(5, 1, dtype=np.int32)),
    ((0, 1, 0.25), {}, np.arange(0, 1, 0.25, dtype=np.float32)),
    ((1, 2.5), {}, np.arange(1, 2.5, dtype=np.float32)),
    ((3,), {"dtype": og.float64}, np.arange(3, dtype=np.float64)),
    ((-2, 2 ** 33, 2 ** 32), {}, np.arange(-2, 2 ** 33, 2 ** 32, dtype=np.int64)),
    ((np.int64(4),), {}, np.arange(4, dtype=np.int64)),
    ((0,), {}, np.arange(0, dtype=np.int32)),
], ids=["n", "start-limit-delta", "negative-delta", "empty", "float-delta", "float-limit",
        "dtype", "int64-beyond-int32", "numpy-int64", "zero"])
def test_range_matches_numpy_with_tf_dtypes(args, kwargs, want):
    got = evaluate(lambda: tfx.range(*args, **kwargs))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want)


def test_range_takes_scalar_tensors_and_widens_like_tf():
    def build(n, d):
        return [tfx.range(n), tfx.range(0, n, d), tfx.range(n, dtype=og.int64)]
    ints, floats, ints64 = run_on(build, np.int64(4), np.float64(1.5))
    np.testing.assert_array_equal(ints, np.arange(4))
    assert ints.dtype == np.int64 and ints64.dtype == np.int64
    np.testing.assert_allclose(floats, np.arange(0, 4, 1.5))
    assert floats.dtype == np.float64  # float64 tensor outranks the int64 one


def test_range_bad_arguments():
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="range: delta must not be 0"):
            tfx.range(0, 5, 0)
        with pytest.raises(TypeError, match="range: dtype must be one of int32, int64, "
                                            "float32, float64; got bool"):
            tfx.range(3, dtype=og.bool_)
        with pytest.raises(TypeError, match="range: limit must be a number or a scalar "
                                            "tensor, got str"):
            tfx.range(0, "5")
        with pytest.raises(TypeError, match="range: start must be a number"):
            tfx.range(True, 5)
        with pytest.raises(TypeError, match="range: delta must be a number"):
            tfx.range(0, 5, "1", dtype=og.int64)
        with pytest.raises(OneGraphError, match="range: start: .*not a whole number"):
            tfx.range(1.5, 4, dtype=og.int32)
        v = og.placeholder(og.int32, [2])
        with pytest.raises(ShapeError, match=r"range: limit must be a scalar, got shape \[2\]"):
            tfx.range(0, v)
        f = og.placeholder(og.float32, [])
        with pytest.raises(ShapeError, match="range: limit is a float32 tensor, but dtype "
                                             "is int32"):
            tfx.range(0, f, dtype=og.int32)
        with pytest.raises(ShapeError, match="range: start must be int32, int64, float32 "
                                             "or float64, got uint8"):
            tfx.range(og.placeholder(og.uint8, []), 3)


# --------------------------------------------------------------------------- gather_nd

def np_gather_nd(params, indices, batch_dims=0):
    """Loop over index tuples (per batch entry when batch_dims=1)."""
    if batch_dims == 1:
        return np.stack([np_gather_nd(p, i) for p, i in zip(params, indices)])
    k = indices.shape[-1]
    flat = indices.reshape(-1, k)
    rows = [params[tuple(t)] for t in flat]
    out_shape = indices.shape[:-1] + params.shape[k:]
    return np.array(rows, dtype=params.dtype).reshape(out_shape)


@pytest.mark.parametrize("index_shape", [(4, 3), (2, 2, 2), (5, 1), (0, 2)],
                         ids=["elements", "slices-2d-batch", "rows", "empty"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_gather_nd_matches_numpy(index_shape, dynamic):
    params = R.standard_normal((3, 4, 5))
    k = index_shape[-1]
    idx = np.stack([R.integers(0, d, index_shape[:-1]) for d in params.shape[:k]], -1)
    idx = idx.reshape(index_shape).astype(np.int32)
    got = run_on(lambda p, i: tfx.gather_nd(p, i), params, idx, dynamic=dynamic)
    np.testing.assert_array_equal(got, np_gather_nd(params, idx))


def test_gather_nd_batch_dims():
    params = R.standard_normal((2, 3, 4))
    idx = np.stack([R.integers(0, 3, (2, 5)), R.integers(0, 4, (2, 5))], -1)
    got = run_on(lambda p, i: tfx.gather_nd(p, i, batch_dims=1), params, idx)
    np.testing.assert_array_equal(got, np_gather_nd(params, idx, 1))
    got = run_on(lambda p, i: tfx.gather_nd(p, i[..., :1], None, 1), params, idx)
    np.testing.assert_array_equal(got, np_gather_nd(params, idx[..., :1], 1))


def test_gather_nd_gradient_sums_repeated_rows():
    idx = np.array([[0, 1], [2, 0], [0, 1]])
    check_op_gradients(lambda p, i: tfx.gather_nd(p, i), [R.standard_normal((3, 2, 4)), idx])


def test_gather_nd_bad_arguments():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [3, 4])
        with pytest.raises(ShapeError, match="gather_nd: indices must be an integer tensor"):
            tfx.gather_nd(p, og.placeholder(og.float32, [2, 1]))
        with pytest.raises(ShapeError, match=r"gather_nd: indices \[2, 3\] address 3 dims, "
                                             r"but params \[3, 4\] has 2"):
            tfx.gather_nd(p, og.placeholder(og.int64, [2, 3]))
        with pytest.raises(ShapeError, match="gather_nd: batch dim 0 is 3 in params but 2"):
            tfx.gather_nd(p, og.placeholder(og.int64, [2, 1]), batch_dims=1)
        with pytest.raises(ShapeError, match="gather_nd: indices must have rank > "
                                             "batch_dims=0"):
            tfx.gather_nd(p, og.placeholder(og.int64, []))
        with pytest.raises(ShapeError, match="index tuples of length 0"):
            tfx.gather_nd(p, og.placeholder(og.int64, [2, 0]))
        with pytest.raises(ValueError, match="gather_nd: batch_dims must be >= 0, got -1"):
            tfx.gather_nd(p, [[0]], batch_dims=-1)
        with pytest.raises(TypeError, match="gather_nd: batch_dims must be an int"):
            tfx.gather_nd(p, [[0]], batch_dims=1.0)


# --------------------------------------------------------------------------- scatter_nd

def np_scatter_nd(indices, updates, shape):
    """Zeros of shape, each update added at its index tuple (a Python loop)."""
    out = np.zeros(shape, updates.dtype)
    k = indices.shape[-1]
    flat_i = indices.reshape(-1, k)
    flat_u = updates.reshape((flat_i.shape[0],) + tuple(shape[k:]))
    for t, u in zip(flat_i, flat_u):
        out[tuple(t)] += u
    return out


@pytest.mark.parametrize("case", ["elements", "slices", "duplicates", "int", "empty"])
@pytest.mark.parametrize("shape_as_tensor", [False, True])
def test_scatter_nd_sums_like_tf(case, shape_as_tensor):
    shape = [4, 3]
    if case == "elements":
        idx, upd = np.array([[0, 1], [3, 2], [1, 0]]), R.standard_normal(3)
    elif case == "slices":
        idx, upd = np.array([[2], [0]]), R.standard_normal((2, 3))
    elif case == "duplicates":
        idx, upd = np.array([[1, 1], [1, 1], [0, 2], [1, 1]]), R.standard_normal(4)
    elif case == "int":
        idx, upd = np.array([[[0], [0]], [[3], [1]]]), R.integers(-9, 9, (2, 2, 3))
    else:
        idx, upd = np.zeros((0, 2), np.int64), np.zeros(0)

    def build(i, u):
        s = og.constant(np.array(shape, np.int32)) if shape_as_tensor else shape
        return tfx.scatter_nd(i, u, s)
    got = run_on(build, idx, upd)
    np.testing.assert_allclose(got, np_scatter_nd(idx, upd, shape))
    assert got.dtype == upd.dtype


def test_scatter_nd_with_a_run_time_shape():
    idx, upd = np.array([[1], [1]]), np.array([2.0, 5.0])
    got = run_on(lambda i, u, s: tfx.scatter_nd(i, u, s), idx, upd, np.array([3]))
    np.testing.assert_array_equal(got, [0, 7, 0])


def test_scatter_nd_gradient():
    idx = np.array([[1, 0], [0, 2], [1, 0]])
    check_op_gradients(lambda i, u: tfx.scatter_nd(i, u, [2, 3, 2]),
                       [idx, R.standard_normal((3, 2))])


def test_scatter_nd_bad_arguments():
    g = og.Graph()
    with g.as_default():
        u = og.placeholder(og.float32, [3])
        i = og.placeholder(og.int64, [3, 2])
        with pytest.raises(ShapeError, match=r"scatter_nd: updates must have shape \[3, 4\] "
                                             r"\(indices.shape\[:-1\] \+ shape\[2:\]\), got \[3\]"):
            tfx.scatter_nd(i, u, [5, 5, 4])
        with pytest.raises(ShapeError, match=r"scatter_nd: indices \[3, 2\] address 2 dims, "
                                             r"but the shape \[5\] has 1"):
            tfx.scatter_nd(i, u, [5])
        with pytest.raises(ShapeError, match="scatter_nd: indices must be an integer tensor"):
            tfx.scatter_nd(og.placeholder(og.float32, [3, 1]), u, [5])
        with pytest.raises(ShapeError, match="scatter_nd: shape: dim 0 is -2"):
            tfx.scatter_nd(i, u, [-2, 3])
        with pytest.raises(TypeError, match="scatter_nd: shape must be a list of ints"):
            tfx.scatter_nd(i, u, "5x5")
        with pytest.raises(ShapeError, match="scatter_nd: shape must be a 1-D tensor"):
            tfx.scatter_nd(i, u, og.placeholder(og.int64, [2, 2]))


# --------------------------------------------------------------------------- einsum

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("ij,kj", [(2, 3), (4, 3)]),           # implicit output: sorted free labels
    ("ij->ji", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 4)]),
    ("a...b,...b->a...", [(2, 3, 4, 5), (4, 5)]),   # '...'s of 2 and 1 dims, mid-term
    ("ij->", [(2, 3)]),
    ("i j , j k -> i k", [(2, 0), (0, 4)]),  # spaces, a zero-length contraction
]


@pytest.mark.parametrize("equation, shapes", EINSUM_CASES,
                         ids=[c[0].replace(" ", "_") for c in EINSUM_CASES])
def test_einsum_matches_numpy(equation, shapes):
    arrays = [R.standard_normal(s) for s in shapes]
    got = run_on(lambda *ts: tfx.einsum(equation, *ts), *arrays)
    np.testing.assert_allclose(got, np.einsum(equation.replace(" ", ""), *arrays),
                               rtol=1e-12, atol=1e-12)


# (diagonals such as 'ii->i' are checked in test_gradients.py)
@pytest.mark.parametrize("equation, shapes", [EINSUM_CASES[i] for i in (0, 1, 2, 5, 6)])
def test_einsum_gradient(equation, shapes):
    check_op_gradients(lambda *ts: tfx.einsum(equation, *ts),
                       [R.standard_normal(s) for s in shapes])


def test_einsum_of_uneven_ellipses_exports_for_onnxruntime():
    """ONNX's Einsum wants every '...' as wide: the narrower input gets size-1 dims"""
    import onnxruntime as ort

    from onegraph.convert import to_onnx

    a, b = R.standard_normal((2, 1, 2, 3)).astype(np.float32), \
        R.standard_normal((3, 3, 4)).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, a.shape, name="x")
        y = og.placeholder(og.float32, b.shape, name="y")
        z = tfx.einsum("...ij,...jk->...ik", x, y)
        sig = og.signature({"x": x, "y": y}, {"z": z})
    proto = to_onnx(g, signatures={"serving": sig})
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(["z"], {"x": a, "y": b})[0]
    np.testing.assert_allclose(got, np.einsum("...ij,...jk->...ik", a, b), rtol=1e-5)


def test_einsum_bad_arguments():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [2, 3])
        b = og.placeholder(og.float32, [3, 4])
        with pytest.raises(ValueError, match=r"einsum: equation 'ij,jk->ik' has 2 input "
                                             r"terms, but 1 inputs"):
            tfx.einsum("ij,jk->ik", a)
        with pytest.raises(ValueError, match="einsum: equation 'ij,jk=>ik' is malformed"):
            tfx.einsum("ij,jk=>ik", a, b)
        with pytest.raises(ValueError, match="einsum: output label 'z' of 'ij,jk->iz' is "
                                             "in no input"):
            tfx.einsum("ij,jk->iz", a, b)
        with pytest.raises(ValueError, match="a term may hold one '...'"):
            tfx.einsum("i.j,jk->ik", a, b)
        with pytest.raises(ShapeError, match=r"einsum: input 1 has shape \[3, 4\], which "
                                             r"does not fit term 'jkl'"):
            tfx.einsum("ij,jkl->ikl", a, b)
        with pytest.raises(ShapeError, match="einsum: operands of different dtypes"):
            tfx.einsum("ij,jk->ik", a, og.placeholder(og.float64, [3, 4]))
        with pytest.raises(ShapeError, match="label 'j' has sizes 3 and 4"):
            tfx.einsum("ij,kj->ik", a, b)
        with pytest.raises(ValueError, match="einsum: give at least one input"):
            tfx.einsum("ij")
        with pytest.raises(TypeError, match="einsum: equation must be a str"):
            tfx.einsum(None, a)


# --------------------------------------------------------------------------- tensordot

@pytest.mark.parametrize("shapes, axes", [
    (((2, 3), (3, 4)), 1),
    (((2, 3, 4), (3, 4, 5)), 2),
    (((2, 3), (4, 5)), 0),
    (((2, 3, 4), (4, 2)), [[0, 2], [1, 0]]),
    (((2, 3, 4), (5, 3)), [1, 1]),
    (((2, 3, 4), (4, 3)), ([-1, -2], [0, 1])),
    (((2, 0), (0, 3)), 1),
], ids=["matmul", "two", "outer", "lists", "ints", "negative", "empty"])
def test_tensordot_matches_numpy(shapes, axes):
    a, b = R.standard_normal(shapes[0]), R.standard_normal(shapes[1])
    got = run_on(lambda x, y: tfx.tensordot(x, y, axes), a, b)
    want = np.tensordot(a, b, axes if not isinstance(axes, list) or
                        isinstance(axes[0], list) else ([axes[0]], [axes[1]]))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_tensordot_gradient():
    check_op_gradients(lambda x, y: tfx.tensordot(x, y, [[0, 2], [1, 0]]),
                       [R.standard_normal((2, 3, 4)), R.standard_normal((4, 2))])


def test_tensordot_bad_arguments():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [2, 3])
        b = og.placeholder(og.float32, [4, 5])
        with pytest.raises(ShapeError, match=r"tensordot: axis 1 of a \(length 3\) and axis "
                                             r"0 of b \(length 4\) differ"):
            tfx.tensordot(a, b, 1)
        with pytest.raises(ShapeError, match="tensordot: axes=3 is more than the ranks"):
            tfx.tensordot(a, b, 3)
        with pytest.raises(ValueError, match="tensordot: axes must be >= 0"):
            tfx.tensordot(a, b, -1)
        with pytest.raises(TypeError, match="tensordot: axes must be an int or a pair"):
            tfx.tensordot(a, b, [0, 1, 2])
        with pytest.raises(ValueError, match=r"contract 2 axes of a but 1 of b"):
            tfx.tensordot(a, b, [[0, 1], [0]])
        with pytest.raises(ValueError, match=r"tensordot: axes\[0\]: axes \[0, -2\] repeat"):
            tfx.tensordot(a, b, [[0, -2], [0, 1]])
        with pytest.raises(ShapeError, match=r"tensordot: axes\[1\]: axis 2 is out of range"):
            tfx.tensordot(a, b, [0, 2])
        with pytest.raises(ShapeError, match="tensordot: a: the rank of .* must be known"):
            tfx.tensordot(og.placeholder(og.float32, None), b, 1)
        with pytest.raises(ShapeError, match="add up to more than 52"):
            tfx.tensordot(og.placeholder(og.float32, [1] * 30), og.placeholder(og.float32,
                                                                                [1] * 30), 1)
        with pytest.raises(ShapeError, match="tensordot: operands of different dtypes"):
            tfx.tensordot(a, og.placeholder(og.float64, [3]), 1)


# --------------------------------------------------------------------------- small ops

def test_not_equal_broadcasts_like_numpy():
    x = R.integers(0, 3, (3, 4)).astype(np.float32)
    y = R.integers(0, 3, (4,)).astype(np.float32)
    got, scalar = run_on(lambda a, b: [tfx.not_equal(a, b), tfx.not_equal(a, 1)], x, y)
    np.testing.assert_array_equal(got, np.not_equal(x, y))
    np.testing.assert_array_equal(scalar, x != 1)
    with og.Graph().as_default():
        with pytest.raises(ShapeError, match="not_equal: operands of different dtypes"):
            tfx.not_equal(og.placeholder(og.float32, [2]), og.constant(np.int64([1, 2])))


@pytest.mark.parametrize("shape", [(3, 4), (0, 5), (), (2, 1, 3)])
@pytest.mark.parametrize("dynamic", [False, True])
def test_size_and_rank(shape, dynamic):
    x = np.zeros(shape, np.float32)
    s32, s64, r = run_on(lambda t: [tfx.size(t), tfx.size(t, out_type=og.int64),
                                    tfx.rank(t)], x, dynamic=dynamic)
    assert s32 == x.size and s32.dtype == np.int32
    assert s64 == x.size and s64.dtype == np.int64
    assert r == x.ndim and r.dtype == np.int32


def test_rank_of_an_unknown_rank_is_computed_at_run_time():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, None)
        r, s = tfx.rank(x, name="r"), tfx.size(x, name="s")
    sess = og.Session(g)
    assert sess.run(r, {x: np.zeros((2, 3, 4), np.float32)}) == 3
    assert sess.run("s", {x: np.zeros((2, 5), np.float32)}) == 10
    with pytest.raises(TypeError, match="size: out_type must be one of int32, int64; got "
                                        "float32"):
        tfx.size(x, out_type=og.float32)
    with pytest.raises(OneGraphError, match="size: out_type: unknown dtype"):
        tfx.size(x, out_type="nonsense")
    with pytest.raises(TypeError, match="rank: name must be a str"):
        tfx.rank(x, name=1)


@pytest.mark.parametrize("dims, value, want_dtype", [
    ([2, 3], 7.5, np.float32), ([4], 2, np.int64), ([0, 3], 1.0, np.float32),
    ([], 3.0, np.float32), (2, np.float64(0.5), np.float64),
])
def test_fill_matches_numpy_full(dims, value, want_dtype):
    got = evaluate(lambda: tfx.fill(dims, value))
    np.testing.assert_array_equal(got, np.full(dims, value, want_dtype))
    assert got.dtype == want_dtype


def test_fill_with_tensor_value_and_dims_and_its_gradient():
    got = run_on(lambda v, d: tfx.fill(d, v), np.float64(2.5), np.array([2, 2]))
    np.testing.assert_array_equal(got, np.full((2, 2), 2.5))
    check_op_gradients(lambda v: tfx.fill([3, 2], v), [np.float64(0.7)])


def test_fill_bad_arguments():
    with og.Graph().as_default():
        with pytest.raises(ShapeError, match=r"fill: value must be a scalar, got shape \[2\]"):
            tfx.fill([2], [1.0, 2.0])
        with pytest.raises(ShapeError, match="fill: dims: dim 1 is -3"):
            tfx.fill([2, -3], 1.0)
        with pytest.raises(TypeError, match="fill: dims must be a list of ints"):
            tfx.fill("2x3", 1.0)
        with pytest.raises(OneGraphError, match="fill: value: cannot convert None"):
            tfx.fill([2], None)


@pytest.mark.parametrize("lengths, maxlen", [
    ([1, 3, 0, 2], None), ([1, 3, 0, 2], 5), ([1, 3], 2), ([[2, 0], [1, 4]], None),
    (np.zeros(0, np.int64), None), (np.zeros(0, np.int64), 3), ([2, 1], 0),
])
@pytest.mark.parametrize("dynamic", [False, True])
def test_sequence_mask_matches_numpy(lengths, maxlen, dynamic):
    lengths = np.asarray(lengths, np.int32)
    got, as_float = run_on(lambda t: [tfx.sequence_mask(t, maxlen),
                                      tfx.sequence_mask(t, maxlen, dtype=og.float32)],
                           lengths, dynamic=dynamic)
    m = (int(lengths.max()) if lengths.size else 0) if maxlen is None else maxlen
    want = np.arange(m) < lengths[..., None]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(as_float, want.astype(np.float32))
    assert got.dtype == bool and as_float.dtype == np.float32


def test_sequence_mask_with_a_tensor_maxlen():
    got = run_on(lambda t, m: tfx.sequence_mask(t, m), np.array([1, 2]), np.int64(3))
    np.testing.assert_array_equal(got, [[1, 0, 0], [1, 1, 0]])


def test_sequence_mask_bad_arguments():
    with og.Graph().as_default():
        with pytest.raises(ShapeError, match="sequence_mask: lengths must be an integer"):
            tfx.sequence_mask(og.placeholder(og.float32, [2]))
        with pytest.raises(ValueError, match="sequence_mask: maxlen must be >= 0, got -1"):
            tfx.sequence_mask([1, 2], -1)
        with pytest.raises(TypeError, match="sequence_mask: maxlen must be an int"):
            tfx.sequence_mask([1, 2], 2.5)
        with pytest.raises(ShapeError, match=r"sequence_mask: maxlen must be a scalar"):
            tfx.sequence_mask([1, 2], og.placeholder(og.int64, [1]))
        with pytest.raises(OneGraphError, match="sequence_mask: dtype: unknown dtype 'flot'"):
            tfx.sequence_mask([1, 2], dtype="flot")


# --------------------------------------------------------------------------- boolean_mask

@pytest.mark.parametrize("shape, mask_shape, axis", [
    ((5,), (5,), None), ((4, 3), (4,), 0), ((4, 3), (3,), 1), ((2, 3, 4), (2, 3), 0),
    ((2, 3, 4), (3, 4), 1), ((2, 3, 4), (3, 4), -2), ((2, 3, 4), (4,), -1),
    ((0, 3), (0,), 0), ((2, 0, 3), (2, 0), None),
], ids=["1d", "rows", "cols", "2d-mask", "2d-mask-axis1", "negative-axis", "last",
        "empty", "empty-2d-mask"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_boolean_mask_matches_numpy_indexing(shape, mask_shape, axis, dynamic):
    x = R.standard_normal(shape)
    mask = R.random(mask_shape) < 0.5
    got = run_on(lambda t, m: tfx.boolean_mask(t, m, axis=axis), x, mask, dynamic=dynamic)
    a = 0 if axis is None else axis % x.ndim
    np.testing.assert_array_equal(got, x[(slice(None),) * a + (mask,)])


def test_boolean_mask_gradient():
    mask = np.array([[True, False, True], [False, True, True]])
    check_op_gradients(lambda t, m: tfx.boolean_mask(t, m, axis=1),
                       [R.standard_normal((4, 2, 3, 2)), mask])


def test_boolean_mask_bad_arguments():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2, 3])
        with pytest.raises(ShapeError, match=r"boolean_mask: mask shape \[3\] does not match "
                                             r"dims 0..0 of tensor shape \[2, 3\]"):
            tfx.boolean_mask(x, og.placeholder(og.bool_, [3]))
        with pytest.raises(ShapeError, match="boolean_mask: a rank-2 mask from axis 1 needs "
                                             "a tensor of rank >= 3"):
            tfx.boolean_mask(x, og.placeholder(og.bool_, [3, 1]), axis=1)
        with pytest.raises(ShapeError, match="boolean_mask: mask must have a known rank >= 1, "
                                             "got a scalar"):
            tfx.boolean_mask(x, True)
        with pytest.raises(ShapeError, match="got an unknown rank"):
            tfx.boolean_mask(x, og.placeholder(og.bool_, None))
        with pytest.raises(ShapeError, match="boolean_mask: mask must be a bool tensor"):
            tfx.boolean_mask(x, og.placeholder(og.int64, [2]))
        with pytest.raises(ShapeError, match="boolean_mask: axis 2 is out of range"):
            tfx.boolean_mask(x, og.placeholder(og.bool_, [3]), axis=2)
        with pytest.raises(ShapeError, match="boolean_mask: tensor: the rank of .* must be "
                                             "known"):
            tfx.boolean_mask(og.placeholder(og.float32, None), og.placeholder(og.bool_, [3]))


# --------------------------------------------------------------------------- random

RANDOM = [tfx.random_normal, tfx.random_uniform, tfx.truncated_normal]
N = 100_000


def draw(fn, *args, graph_seed=None, session_seed=0, runs=1, **kwargs):
    g = og.Graph()
    with g.as_default():
        if graph_seed is not None:
            og.set_random_seed(graph_seed)
        out = fn(*args, **kwargs)
    sess = og.Session(g, seed=session_seed)
    values = [sess.run(out) for _ in range(runs)]
    return values[0] if runs == 1 else values


@pytest.mark.parametrize("fn", RANDOM)
@pytest.mark.parametrize("dtype", [og.float32, og.float64, og.float16])
def test_random_shape_and_dtype(fn, dtype):
    def build():
        x = og.placeholder(og.float32, [None, 3], name="x")
        return fn([2, 5], dtype=dtype), fn(og.shape(x), dtype=dtype), x
    (static, dynamic, x), g = built(build)
    assert static.shape == (2, 5) and static.dtype == dtype
    v, out = og.Session(g).run([static, dynamic], {x: np.zeros((4, 3), np.float32)})
    assert v.shape == (2, 5) and v.dtype == dtype.numpy
    assert out.shape == (4, 3) and out.dtype == dtype.numpy
    assert draw(fn, [0, 3]).shape == (0, 3)
    assert draw(fn, 4).shape == (4,)


@pytest.mark.parametrize("fn", RANDOM)
def test_random_seeding_follows_tf1(fn):
    # graph seed: a rebuilt graph draws alike, whatever the session's generator
    a = draw(fn, [50], graph_seed=3, session_seed=1)
    b = draw(fn, [50], graph_seed=3, session_seed=2)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, draw(fn, [50], graph_seed=4))
    # op seed alone: reproducible too, and a different op seed differs
    c = draw(fn, [50], seed=5, session_seed=1)
    np.testing.assert_array_equal(c, draw(fn, [50], seed=5, session_seed=2))
    assert not np.array_equal(c, draw(fn, [50], seed=6))
    # neither: the Session's generator, reproducible with its seed, fresh per run
    d1, d2 = draw(fn, [50], session_seed=9, runs=2)
    np.testing.assert_array_equal(d1, draw(fn, [50], session_seed=9))
    assert not np.array_equal(d1, d2)


@pytest.mark.parametrize("fn", RANDOM)
def test_two_ops_under_one_graph_seed_draw_differently(fn):
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(1)
        a, b = fn([50]), fn([50])
    x, y = og.Session(g).run([a, b])
    assert not np.array_equal(x, y)
    assert a.op.name != b.op.name


def test_a_seeded_op_draws_fresh_values_on_each_run():
    """TF1 and onnxruntime advance a seeded op's stream from run to run; a new Session
    starts it over."""
    a, b = draw(tfx.random_normal, [20], seed=1, runs=2)
    assert not np.array_equal(a, b)
    again, _ = draw(tfx.random_normal, [20], seed=1, runs=2)
    np.testing.assert_array_equal(a, again)


def assert_moments(values, mean, std):
    """Sample mean and std within 5 standard errors of the expected ones."""
    n = values.size
    assert abs(values.mean() - mean) < 5 * std / math.sqrt(n), (values.mean(), mean)
    # the std of the sample variance is about var * sqrt(2 / n) (4th moment <= 3 var^2)
    assert abs(values.var() - std ** 2) < 5 * std ** 2 * math.sqrt(2 / n), (values.std(), std)


def test_random_normal_statistics():
    v = draw(tfx.random_normal, [N], mean=2.0, stddev=3.0, dtype=og.float64, seed=11)
    assert_moments(v, 2.0, 3.0)
    assert abs(np.mean(v < 2.0 + 3.0) - 0.8413447) < 0.01  # Phi(1)


def test_random_uniform_float_statistics():
    v = draw(tfx.random_uniform, [N], minval=-1.0, maxval=3.0, seed=12)
    assert v.min() >= -1.0 and v.max() < 3.0
    assert_moments(v.astype(np.float64), 1.0, 4.0 / math.sqrt(12.0))
    w = draw(tfx.random_uniform, [1000], seed=13)  # default [0, 1)
    assert w.min() >= 0.0 and w.max() < 1.0 and w.dtype == np.float32


def test_random_uniform_never_reaches_maxval_after_rounding():
    # float16 rounds draws within 2**-12 of 1 up to 1.0: about 24 of 10**5 here
    v = draw(tfx.random_uniform, [N], dtype=og.float16, seed=18)
    assert v.max() < 1.0 and v.max() == np.nextafter(np.float16(1), np.float16(0))
    w = draw(tfx.random_uniform, [N], minval=-1.0, maxval=-0.5, dtype=og.float16, seed=19)
    assert w.min() >= -1.0 and w.max() < -0.5


@pytest.mark.parametrize("dtype", [og.int32, og.int64])
def test_random_uniform_int_statistics(dtype):
    v = draw(tfx.random_uniform, [N], minval=-3, maxval=5, dtype=dtype, seed=14)
    assert v.dtype == dtype.numpy
    counts = np.bincount(v - (-3), minlength=8)
    assert len(counts) == 8 and counts.min() > 0
    # each of the 8 values: N/8 expected, binomial std sqrt(N * 1/8 * 7/8)
    assert np.abs(counts - N / 8).max() < 5 * math.sqrt(N * 7 / 64)
    wide = draw(tfx.random_uniform, [1000], minval=-2 ** 31, maxval=2 ** 31 - 1,
                dtype=og.int32, seed=15)
    assert wide.min() < -2 ** 29 and wide.max() > 2 ** 29  # the whole range is reached


def truncated_cdf(x):
    """CDF of the standard normal truncated to [-2, 2] (math.erf oracle)."""
    phi = lambda t: 0.5 * (1 + math.erf(t / math.sqrt(2)))  # noqa: E731
    return (phi(x) - phi(-2)) / (phi(2) - phi(-2))


def test_truncated_normal_statistics_and_bounds():
    v = draw(tfx.truncated_normal, [N], mean=1.0, stddev=2.0, dtype=og.float64, seed=16)
    assert np.all(np.abs(v - 1.0) <= 4.0)
    z = (v - 1.0) / 2.0
    # moments of N(0, 1) truncated to [-2, 2]: mean 0, var 1 - 4 phi(2) / P(|Z| < 2)
    density = math.exp(-2.0) / math.sqrt(2 * math.pi)
    var = 1 - 4 * density / math.erf(math.sqrt(2))
    assert_moments(z, 0.0, math.sqrt(var))
    for t in (-1.9, -1.0, -0.3, 0.0, 0.5, 1.5, 1.99):  # the CDF (Kolmogorov: 1.4 / sqrt N)
        assert abs(np.mean(z <= t) - truncated_cdf(t)) < 0.01, t
    assert abs(z).max() > 1.95  # the tails up to the bound are drawn
    f32 = draw(tfx.truncated_normal, [N], seed=17)
    assert f32.dtype == np.float32 and np.abs(f32).max() <= 2.0


def test_truncated_normal_is_the_exact_inverse_cdf_of_its_uniform_draw():
    """Redraw the op's uniform (same seed) and invert the CDF by bisection on math.erf:
    the values must agree to float64 rounding, not merely in distribution."""
    g = og.Graph()
    with g.as_default():
        out = tfx.truncated_normal([2000], dtype=og.float64, seed=21)
    uniform = next(op for op in g.get_operations() if op.type == "RandomUniform")
    got = og.Session(g).run(out)
    h = og.Graph()
    with h.as_default():
        z = og.raw_ops.RandomUniform(**uniform.attrs)
    z = og.Session(h).run(z)
    erf = np.vectorize(math.erf)
    lo, hi = np.full(z.shape, -2.0), np.full(z.shape, 2.0)
    for _ in range(60):  # erf(x / sqrt 2) = z for x in [-2, 2]
        mid = (lo + hi) / 2
        below = erf(mid / math.sqrt(2)) < z
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    np.testing.assert_allclose(got, (lo + hi) / 2, rtol=0, atol=1e-12)
    assert np.abs(z).max() <= math.erf(math.sqrt(2))


@pytest.mark.parametrize("fn", RANDOM)
def test_random_bad_arguments(fn):
    what = fn.__name__
    with og.Graph().as_default():
        with pytest.raises(ValueError, match=f"{what}: seed must be >= 0, got -1"):
            fn([2], seed=-1)
        with pytest.raises(TypeError, match=f"{what}: seed must be None or an int"):
            fn([2], seed=1.5)
        with pytest.raises(ShapeError, match=f"{what}: shape: dim 0 is -2"):
            fn([-2])
        with pytest.raises(TypeError, match=f"{what}: shape must be a list of ints"):
            fn("2x2")
        with pytest.raises(ShapeError, match=f"{what}: shape must be an integer tensor"):
            fn(og.placeholder(og.float32, [2]))
        with pytest.raises(TypeError, match=f"{what}: dtype must be one of float16, float32, "
                                            "float64"):
            fn([2], dtype=og.bool_)
        with pytest.raises(TypeError, match=f"{what}: name must be a str"):
            fn([2], name=1)
        with pytest.raises(OneGraphError, match=f"{what}: dtype: unknown dtype"):
            fn([2], dtype="nonsense")


@pytest.mark.parametrize("fn, arg", [(tfx.random_normal, "mean"),
                                     (tfx.random_normal, "stddev"),
                                     (tfx.truncated_normal, "stddev"),
                                     (tfx.random_uniform, "minval"),
                                     (tfx.random_uniform, "maxval")])
def test_random_tensor_parameters_are_refused(fn, arg):
    with og.Graph().as_default():
        with pytest.raises(TypeError, match=f"{fn.__name__}: {arg} must be a Python number; "
                                            "a tensor is not supported"):
            fn([2], **{arg: og.constant(1.0)})
        with pytest.raises(TypeError, match=f"{fn.__name__}: {arg} must be a number, got str"):
            fn([2], **{arg: "1"})


def test_random_uniform_int_arguments():
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="random_uniform: maxval must be given for the "
                                             "integer dtype int32"):
            tfx.random_uniform([2], dtype=og.int32)
        with pytest.raises(ValueError, match=r"need minval < maxval .* got \[3, 3\)"):
            tfx.random_uniform([2], 3, 3, dtype=og.int64)
        with pytest.raises(ValueError, match="within the range of int32"):
            tfx.random_uniform([2], 0, 2 ** 31, dtype=og.int32)
        with pytest.raises(ValueError, match="spans above 2..53 are not supported"):
            tfx.random_uniform([2], -2 ** 62, 2 ** 62, dtype=og.int64)
        with pytest.raises(TypeError, match="random_uniform: minval must be an int"):
            tfx.random_uniform([2], 0.5, 4, dtype=og.int32)


# --------------------------------------------------------------------------- feeds

def test_placeholder_with_default_gives_the_default_unless_fed():
    g = og.Graph()
    with g.as_default():
        x = tfx.placeholder_with_default(og.constant(np.float32([1, 2, 3])), [None], name="p")
        y = x * 2.0
    assert x.shape == (None,) and x.dtype == og.float32 and x.name == "p"
    sess = og.Session(g)
    np.testing.assert_array_equal(sess.run(y), [2, 4, 6])
    np.testing.assert_array_equal(sess.run(y, {x: np.float32([5, 6])}), [10, 12])
    np.testing.assert_array_equal(sess.run(y, {"p": np.float32([1])}), [2])


def test_placeholder_with_default_is_not_a_build_time_constant():
    g = og.Graph()
    with g.as_default():
        s = tfx.placeholder_with_default(og.constant(np.int64([2, 3])), [2])
        v = og.placeholder(og.float32, [6])
        y = og.reduce_sum(og.reshape(v, s), axis=1)
    assert y.shape != (2,)  # the default must not fix the reshape's shape
    sess = og.Session(g)
    values = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(sess.run(y, {v: values}), [3, 12])
    np.testing.assert_array_equal(sess.run(y, {v: values, s: np.int64([3, 2])}), [1, 5, 9])


def test_placeholder_with_default_skips_the_default_when_fed_and_passes_gradients():
    g = og.Graph()
    with g.as_default():
        need = og.placeholder(og.float32, [2], name="need")
        x = tfx.placeholder_with_default(need * 3.0, None)
        loss = og.reduce_sum(x * x)
        grad, = og.gradients(loss, [need])
    assert x.shape is None
    sess = og.Session(g)
    # `need` is not fed: computing the default would fail
    np.testing.assert_array_equal(sess.run(x, {x: np.float32([[7]])}), [[7]])
    np.testing.assert_allclose(sess.run(grad, {need: np.float32([1, 2])}), [18, 36])


def test_placeholder_with_default_bad_arguments():
    with og.Graph().as_default():
        c = og.constant(np.zeros((2, 3), np.float32))
        with pytest.raises(ShapeError, match=r"placeholder_with_default: shape \[3, None\] "
                                             r"does not fit the default .* \[2, 3\]"):
            tfx.placeholder_with_default(c, [3, None])
        with pytest.raises(ShapeError, match="placeholder_with_default: shape .* does not fit"):
            tfx.placeholder_with_default(c, [None])
        with pytest.raises(TypeError, match="placeholder_with_default: shape must be a list"):
            tfx.placeholder_with_default(c, 3)
        with pytest.raises(TypeError, match="placeholder_with_default: name must be a str"):
            tfx.placeholder_with_default(c, [2, 3], name=5)


def test_all_lists_the_public_functions():
    public = {n for n in dir(tfx) if not n.startswith("_") and callable(getattr(tfx, n))
              and getattr(getattr(tfx, n), "__module__", "") == tfx.__name__}
    assert set(tfx.__all__) == public
    for n in tfx.__all__:
        assert "Raises:" in getattr(tfx, n).__doc__ or n == "TopKV2"


def test_seeded_op_in_a_while_loop_draws_new_values_each_iteration_and_run():
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(3)
        body = lambda i, acc: (i + 1, og.concat(  # noqa: E731
            [acc, tfx.random_uniform([1], seed=5)], 0))
        _, acc = og.while_loop(lambda i, acc: i < 4, body,
                               [og.constant(np.int64(0)), og.zeros([0])],
                               shape_invariants=[[], [None]])
    sess = og.Session(g)
    first, second = sess.run(acc), sess.run(acc)
    assert len(set(first.tolist())) == 4 and len(set(second.tolist())) == 4
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(og.Session(g).run(acc), first)  # a new Session repeats


@pytest.mark.parametrize("lo, hi", [(2 ** 60 + 1, 2 ** 60 + 11), (-2 ** 63, -2 ** 63 + 5),
                                    (2 ** 63 - 10, 2 ** 63 - 1)])
def test_int64_uniform_bounds_beyond_float64_precision(lo, hi):
    v = draw(tfx.random_uniform, [3000], minval=lo, maxval=hi, dtype=og.int64, seed=2)
    assert v.dtype == np.int64
    assert sorted({int(x) - lo for x in v}) == list(builtins.range(hi - lo))


def test_int32_nd_indices_export_to_onnx():
    # TF's indices are often int32; ONNX's GatherND and ScatterND take int64 only, so
    # gather_nd / scatter_nd cast them (the export failed the ONNX checker)
    ort = pytest.importorskip("onnxruntime")
    from onegraph.convert import to_onnx

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [3, 4], name="x")
        y = og.gather_nd(x, np.array([[0, 1], [2, 3]], np.int32), name="y")
        z = og.scatter_nd(np.array([[1], [0]], np.int32), og.constant([5.0, 6.0]),
                          np.array([3], np.int32), name="z")
    model = g.to_model(signatures={"serving": og.signature(inputs={"x": x},
                                                           outputs={"y": y, "z": z})})
    sess = ort.InferenceSession(to_onnx(model).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    xv = np.arange(12, dtype=np.float32).reshape(3, 4)
    got_y, got_z = sess.run(["y", "z"], {"x": xv})
    np.testing.assert_array_equal(got_y, [xv[0, 1], xv[2, 3]])   # numpy's indexing
    np.testing.assert_array_equal(got_z, [6.0, 5.0, 0.0])


def test_bytes_constants_keep_trailing_nul_bytes():
    # numpy's fixed-width bytes drop trailing NULs; TF's strings keep them (a BMP's
    # last row padding was lost before)
    with og.Graph().as_default():
        values = [og.constant(b"ab\x00\x00"), og.constant([b"x\x00", b"y"]),
                  og.constant([[b"\x00"], [b""]], dtype=og.string)]
        with og.Session() as sess:
            a, b, c = sess.run(values)
    assert a.item() == b"ab\x00\x00" and list(b) == [b"x\x00", b"y"]
    assert c.tolist() == [[b"\x00"], [b""]]


def test_reduction_over_an_empty_axes_tensor_reduces_nothing():
    # TF: axes given as a tensor that comes out empty reduce nothing (ONNX's default
    # reduces everything); TF's gradient graphs sum over such axes
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [2, 3])
        axes = og.placeholder(og.int32, [None])
        outs = [og.reduce_sum(x, axis=axes), og.reduce_mean(x, axis=axes),
                og.reduce_max(x, axis=axes, keepdims=True)]
        value = np.arange(6, dtype=np.float32).reshape(2, 3)
        with og.Session() as sess:
            for got in sess.run(outs, {x: value, axes: np.zeros(0, np.int32)}):
                np.testing.assert_array_equal(got, value)
            np.testing.assert_array_equal(sess.run(outs[0], {x: value, axes: [1]}),
                                          value.sum(1))

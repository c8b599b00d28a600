"""og.nn.with_space_to_batch with spatial (and batch) sizes known only when the graph
runs, and og.space_to_batch_nd / og.batch_to_space_nd with paddings and crops given as
integer tensors (as TF takes them): against numpy oracles of their definitions and of
a dilated convolution (float64 direct loops), TensorFlow's recorded values and
gradients (data/tf1_compat_reference.npz, data/tf1_nnextra2_reference.npz) with dims
hidden, central differences, and the run-time failures."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError
from onegraph.train import api_compat

from . import tf1_reference
from .tf1_compat_cases import CASES as COMPAT_CASES

_S2B_CASES = [c for c in COMPAT_CASES if c[1] in ("space_to_batch_nd", "batch_to_space_nd")]


# --------------------------------------------------------------------------- oracles

def np_space_to_batch(x, block, pads):
    """TF's definition: pad dims 1..M, split each into (size / b, b), move the block
    offsets to the front and merge them with the batch (offset-major)."""
    m = len(block)
    x = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - 1 - m))
    split = [x.shape[0]]
    for i, b in enumerate(block):
        assert x.shape[1 + i] % b == 0
        split += [x.shape[1 + i] // b, b]
    y = x.reshape(split + list(x.shape[1 + m:]))
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + \
        list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm)
    return y.reshape([x.shape[0] * int(np.prod(block))]
                     + [x.shape[1 + i] // b for i, b in enumerate(block)]
                     + list(x.shape[1 + m:]))


def np_batch_to_space(x, block, crops):
    """The inverse: spread the batch's block offsets over dims 1..M, then crop."""
    m = len(block)
    batch = x.shape[0] // int(np.prod(block))
    y = x.reshape(list(block) + [batch] + list(x.shape[1:]))
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm)
    y = y.reshape([batch] + [x.shape[1 + i] * b for i, b in enumerate(block)]
                  + list(x.shape[1 + m:]))
    index = [slice(None)] + [slice(c0, y.shape[1 + i] - c1)
                             for i, (c0, c1) in enumerate(crops)]
    return y[tuple(index)]


def np_dilated_conv2d(x, w, rate, padding):
    """NHWC x HWIO convolution with dilation `rate`, stride 1, TF's SAME or VALID
    padding, by direct loops in float64."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    (kh, kw), (rh, rw) = w.shape[:2], rate
    eh, ew = (kh - 1) * rh, (kw - 1) * rw
    if padding == "SAME":
        x = np.pad(x, [(0, 0), (eh // 2, eh - eh // 2), (ew // 2, ew - ew // 2), (0, 0)])
    oh, ow = x.shape[1] - eh, x.shape[2] - ew
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    out[:, i, j, :] += x[:, i + a * rh, j + b * rw, :] @ w[a, b]
    return out


def test_the_oracles_agree_with_each_other():
    # the dilated conv of a 1x1-dilated kernel is the plain one; b2s inverts s2b
    x = np.random.RandomState(0).randn(2, 5, 7, 3)
    pads = [[1, 2], [0, 1]]
    y = np_space_to_batch(x, [2, 4], pads)
    assert y.shape == (16, 4, 2, 3)
    np.testing.assert_array_equal(np_batch_to_space(y, [2, 4], pads), x)
    # a batch entry is the padded input read at a fixed offset with the block's stride
    padded = np.pad(x, [(0, 0), (1, 2), (0, 1), (0, 0)])
    np.testing.assert_array_equal(y[(1 * 4 + 3) * 2 + 1], padded[1, 1::2, 3::4])


# --------------------------------------------------------------------------- with_space_to_batch

def _conv_op(w, seen=None):
    """with_space_to_batch's op: an undilated VALID conv2d (its input appended to
    `seen`)."""
    def op(inp, num_spatial, padding):
        assert num_spatial == 2 and padding == "VALID"
        if seen is not None:
            seen.append(inp)
        return og.nn.conv2d(inp, w, [1, 1, 1, 1], padding)
    return op


def np_required_paddings(sizes, kernel, rate, padding):
    """TF's required_space_to_batch_paddings: SAME's filter padding (or none), the end
    padded up to the next multiple of the rate, no more."""
    pads = []
    for n, k, r in zip(sizes, kernel, rate):
        e = (k - 1) * r if padding == "SAME" else 0
        before, after = e // 2, e - e // 2
        pads.append([before, after + (-(n + e)) % r])
    return pads


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("rate, kernel", [([2, 3], (3, 2)), ([3, 2], (2, 3)),
                                          ([2, 2], (3, 3))])
def test_dilated_conv_of_sizes_known_only_at_run_time(padding, rate, kernel):
    rng = np.random.RandomState(1)
    w = rng.randn(kernel[0], kernel[1], 3, 2)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [None, None, None, 3])
        seen = []
        y = og.nn.with_space_to_batch(x, rate, padding, _conv_op(w, seen),
                                      filter_shape=w.shape)
        sess = og.Session(g)
        # sizes that need extra padding up to a multiple of the rate, and ones that don't
        for shape in [(2, 7, 8, 3), (1, 6, 6, 3), (3, 9, 11, 3)]:
            xv = rng.randn(*shape)
            got, converted = sess.run([y, seen[0]], {x: xv})
            np.testing.assert_array_equal(converted, np_space_to_batch(
                xv, rate, np_required_paddings(shape[1:3], kernel, rate, padding)))
            want = np_dilated_conv2d(xv, w, rate, padding)
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10,
                                       err_msg=str(shape))
            with og.Graph().as_default():  # and the same with every size known
                xs = og.constant(xv)
                static = og.Session().run(og.nn.with_space_to_batch(
                    xs, rate, padding, _conv_op(w), filter_shape=w.shape))
            np.testing.assert_allclose(got, static, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("known", [(None, 7, None, 3), (None, None, 8, 3), (2, 7, 8, 3)])
def test_dilated_conv_with_some_sizes_known(known):
    # int paddings for the known dims, run-time ones for the others, in one tensor
    rng = np.random.RandomState(6)
    w = rng.randn(3, 2, 3, 2)
    xv = rng.randn(2, 7, 8, 3)
    with og.Graph().as_default():
        x = og.placeholder(og.float64, list(known))
        y = og.nn.with_space_to_batch(x, [3, 3], "SAME", _conv_op(w), filter_shape=w.shape)
        got = og.Session().run(y, {x: xv})
    np.testing.assert_allclose(got, np_dilated_conv2d(xv, w, [3, 3], "SAME"), rtol=1e-10,
                               atol=1e-10)


@pytest.mark.parametrize("padding, rate, key", [("SAME", [2, 2], "ref_dilated_same"),
                                                ("VALID", [2, 1], "ref_dilated_valid")])
def test_matches_tensorflow_s_dilated_conv_with_sizes_hidden(padding, rate, key):
    ref = tf1_reference.load("nnextra2")
    xv, w = ref["in/nhwc"], ref["in/w_dil"]
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [None, None, None, xv.shape[3]])
        y = og.nn.with_space_to_batch(x, rate, padding, _conv_op(w), filter_shape=w.shape)
        got = og.Session().run(y, {x: xv})
    want = ref[f"out/{key}"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def _central_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def test_with_space_to_batch_gradient_with_sizes_hidden_by_central_differences():
    rng = np.random.RandomState(2)
    w = rng.randn(2, 3, 2, 2)
    xv = rng.randn(1, 5, 4, 2)
    weights = rng.randn(1, 5, 4, 2)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [None, None, None, 2])
        y = og.nn.with_space_to_batch(x, [2, 3], "SAME", _conv_op(w), filter_shape=w.shape)
        loss = og.reduce_sum(y * weights)
        (dx,) = og.gradients(loss, [x])
        sess = og.Session(g)
        got = sess.run(dx, {x: xv})
        want = _central_gradient(lambda v: sess.run(loss, {x: v}), xv)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_with_space_to_batch_of_unknown_rank_is_a_named_shape_error():
    with og.Graph().as_default():
        x = og.placeholder(og.float32, None)
        with pytest.raises(ShapeError, match="with_space_to_batch: .*rank"):
            og.nn.with_space_to_batch(x, [2, 2], "VALID", lambda i, n, p: i)


# --------------------------------------------------------------------------- tensor paddings

def _int_holder(value, dtype=og.int64, shape=(None, 2)):
    """An integer placeholder of unknown row count and the array to feed it."""
    array = np.asarray(value, dtype.numpy if hasattr(dtype, "numpy") else dtype)
    return og.placeholder(dtype, list(shape)), array


@pytest.mark.parametrize("dtype", [og.int64, og.int32])
@pytest.mark.parametrize("shape, block, pads", [
    ((2, 5, 7, 3), [2, 4], [[1, 2], [0, 1]]),
    ((1, 4, 6, 2), [2, 3], [[0, 0], [0, 0]]),
    ((3, 5, 2), [3], [[2, 2]]),
    ((2, 3, 4, 5, 1), [2, 2], [[1, 0], [2, 2]]),   # a dim after the block dims
])
def test_tensor_paddings_and_crops_match_the_definition(dtype, shape, block, pads):
    rng = np.random.RandomState(3)
    xv = rng.randn(*shape)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [None] * len(shape))
        p, pv = _int_holder(pads, dtype)
        y = og.space_to_batch_nd(x, block, p)
        back = og.batch_to_space_nd(y, block, p)
        got, got_back = og.Session(g).run([y, back], {x: xv, p: pv})
    np.testing.assert_array_equal(got, np_space_to_batch(xv, block, pads))
    np.testing.assert_array_equal(got_back, xv)


def test_tensor_crops_match_the_definition():
    rng = np.random.RandomState(4)
    xv = rng.randn(12, 3, 2, 2)
    with og.Graph().as_default():
        x = og.placeholder(og.float64, [12, 3, 2, 2])     # sizes known, crops not
        c, cv = _int_holder([[1, 2], [0, 3]])
        y = og.batch_to_space_nd(x, [2, 3], c)
        got = og.Session().run(y, {x: xv, c: cv})
    np.testing.assert_array_equal(got, np_batch_to_space(xv, [2, 3], [[1, 2], [0, 3]]))


def _tensor_pairs_function(path):
    """tf1_reference's function lookup, the pairs of space_to_batch_nd and
    batch_to_space_nd passed as an int64 tensor fed only when the graph runs."""
    fn = getattr(api_compat, path)

    def call(x, block, pairs):
        t = og.placeholder_with_default(np.asarray(pairs, np.int64), [None, None])
        return fn(x, block, t)
    return call


@pytest.mark.parametrize("tensor_pairs", [False, True], ids=["int_pairs", "tensor_pairs"])
@pytest.mark.parametrize("case", _S2B_CASES, ids=[c[0] for c in _S2B_CASES])
def test_matches_tensorflow_with_dims_hidden(monkeypatch, case, tensor_pairs):
    monkeypatch.setattr(tf1_reference, "function", _tensor_pairs_function if tensor_pairs
                        else lambda path: getattr(api_compat, path))
    key = case[2][0][1:]
    rank = tf1_reference.load("compat")[f"in/{key}"].ndim
    tf1_reference.check_case(tf1_reference.load("compat"), case,
                             hidden_dims={key: tuple(range(rank))})


@pytest.mark.parametrize("fn, block, pairs, shape", [
    (og.space_to_batch_nd, [2, 3], [[1, 1], [2, 1]], (2, 4, 3, 2)),
    (og.batch_to_space_nd, [2, 2], [[1, 0], [0, 3]], (8, 2, 3, 1)),
])
def test_gradient_with_tensor_pairs_by_central_differences(fn, block, pairs, shape):
    rng = np.random.RandomState(5)
    xv = rng.randn(*shape)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float64, [None] * len(shape))
        p, pv = _int_holder(pairs)
        y = fn(x, block, p)
        weights = og.placeholder(og.float64, None)
        loss = og.reduce_sum(y * weights)
        (dx,) = og.gradients(loss, [x])
        sess = og.Session(g)
        out_shape = sess.run(y, {x: xv, p: pv}).shape
        wv = rng.randn(*out_shape)
        got = sess.run(dx, {x: xv, p: pv, weights: wv})
        want = _central_gradient(lambda v: sess.run(loss, {x: v, p: pv, weights: wv}), xv)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


# --------------------------------------------------------------------------- failures

@pytest.mark.parametrize("build, shape, pairs, message", [
    (og.space_to_batch_nd, (1, 5, 4, 1), [[0, 0], [0, 0]],
     "space_to_batch_nd: .*not a multiple of block_shape"),
    (og.space_to_batch_nd, (1, 4, 4, 1), [[0, 0], [1, 2]],
     "space_to_batch_nd: .*not a multiple of block_shape"),
    (og.space_to_batch_nd, (1, 4, 4, 1), [[-2, 0], [0, 0]],
     "space_to_batch_nd: paddings must be >= 0"),
    (og.space_to_batch_nd, (1, 4, 4, 1), [[0, 0], [0, 0], [0, 0]],
     "space_to_batch_nd: paddings must be 2 \\[start, end\\] pairs"),
    (og.batch_to_space_nd, (6, 2, 2, 1), [[0, 0], [0, 0]],
     "batch_to_space_nd: .*batch .*not a multiple of prod\\(block_shape\\)"),
    (og.batch_to_space_nd, (8, 2, 2, 1), [[0, 2], [3, 2]],   # 5 > 2 * 2
     "batch_to_space_nd: crops .*exceed"),
    (og.batch_to_space_nd, (8, 2, 2, 1), [[0, 0], [0, -1]],
     "batch_to_space_nd: crops must be >= 0"),
], ids=["s2b_size", "s2b_padded_size", "s2b_negative", "s2b_rows", "b2s_batch",
        "b2s_crops", "b2s_negative"])
def test_bad_run_time_values_are_named_execution_errors(build, shape, pairs, message):
    with og.Graph().as_default():
        x = og.placeholder(og.float64, [None] * len(shape))
        p, pv = _int_holder(pairs, shape=(None, None))
        y = build(x, [2, 2], p)
        with pytest.raises(ExecutionError, match=message):
            og.Session().run(y, {x: np.ones(shape), p: pv})


@pytest.mark.parametrize("pairs, error, message", [
    (lambda: og.placeholder(og.int64, [3, 2]), ShapeError,
     "space_to_batch_nd: paddings must be 2 \\[start, end\\] pairs .*got shape \\[3, 2\\]"),
    (lambda: og.placeholder(og.int64, [4]), ShapeError,
     "space_to_batch_nd: paddings must be 2 \\[start, end\\] pairs .*got shape \\[4\\]"),
    (lambda: og.placeholder(og.float32, [2, 2]), ShapeError, "space_to_batch_nd: paddings"),
], ids=["rows", "rank", "dtype"])
def test_bad_tensor_paddings_are_named_errors_while_building(pairs, error, message):
    with og.Graph().as_default():
        x = og.placeholder(og.float64, [1, 4, 4, 1])
        with pytest.raises(error, match=message):
            og.space_to_batch_nd(x, [2, 2], pairs())


def test_a_tensor_block_shape_is_still_refused():
    with og.Graph().as_default():
        x = og.placeholder(og.float64, [1, 4, 4, 1])
        with pytest.raises(TypeError, match="space_to_batch_nd: block_shape must be a list"):
            og.space_to_batch_nd(x, og.constant([2, 2]), [[0, 0], [0, 0]])

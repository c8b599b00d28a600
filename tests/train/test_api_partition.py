"""og.dynamic_partition, og.dynamic_stitch (and parallel_dynamic_stitch) and
og.batch_gather against independent numpy oracles of TF1's definitions, the static
shapes tf.compat.v1 2.21 prints, gradients by central differences, run-time errors and
an ONNX export run in onnxruntime."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError

from .gradcheck import check_op_gradients
from .graph_runs import run_on, session_and_onnxruntime

RNG = np.random.default_rng(7)


# --------------------------------------------------------------------------- oracles

def partition_oracle(data, partitions, num_partitions):
    """TF1's definition: outputs[i] = the rows data[js...] with partitions[js] == i,
    in row-major order of js."""
    k = partitions.ndim
    rows = data.reshape((-1,) + data.shape[k:])
    flat = partitions.reshape(-1)
    return [np.stack([rows[j] for j in range(flat.size) if flat[j] == i])
            if (flat == i).any() else np.zeros((0,) + data.shape[k:], data.dtype)
            for i in range(num_partitions)]


def stitch_oracle(indices, data):
    """TF1's definition, written as its serial loop: merged[indices[m][i]] = data[m][i]
    for m, then i, in order (so a later duplicate overwrites); unnamed rows are 0."""
    tail = data[0].shape[indices[0].ndim:]
    top = max((int(i.max()) for i in indices if i.size), default=-1)
    merged = np.zeros((top + 1,) + tail, data[0].dtype)
    for idx, d in zip(indices, data):
        rows = d.reshape((-1,) + tail)
        for j, i in enumerate(idx.reshape(-1)):
            merged[i] = rows[j]
    return merged


def batch_gather_oracle(params, indices):
    """out[b..., i] = params[b..., indices[b..., i]] over the leading batch dims."""
    b = indices.ndim - 1
    out = np.zeros(indices.shape + params.shape[b + 1:], params.dtype)
    for pos in np.ndindex(*indices.shape):
        out[pos] = params[pos[:-1] + (indices[pos],)]
    return out


# --------------------------------------------------------------------------- values

PARTITION_CASES = {
    "1-D": (RNG.standard_normal((6, 3)).astype(np.float32),
            np.array([1, 0, 2, 1, 1, 0], np.int32), 3),
    "2-D partitions over 3-D data": (RNG.standard_normal((2, 3, 4)),
                                     np.array([[0, 1, 0], [1, 1, 0]], np.int32), 2),
    "empty partitions": (np.arange(5, dtype=np.float32),
                         np.array([3, 3, 0, 3, 0], np.int32), 5),
    "int64 partitions, float64 data": (RNG.standard_normal((4, 2)),
                                       np.array([1, 0, 1, 1], np.int64), 2),
    "same shapes": (np.arange(12, dtype=np.int32).reshape(3, 4),
                    np.array([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]], np.int32), 2),
    "no rows": (np.zeros((0, 2), np.float32), np.zeros([0], np.int32), 2),
    "one partition": (np.arange(6.0).reshape(3, 2), np.zeros([3], np.int32), 1),
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["known", "run-time shapes"])
@pytest.mark.parametrize("case", list(PARTITION_CASES))
def test_dynamic_partition_values(case, dynamic):
    data, parts, n = PARTITION_CASES[case]
    got = run_on(lambda d, p: og.dynamic_partition(d, p, n), data, parts, dynamic=dynamic)
    want = partition_oracle(data, parts, n)
    assert len(got) == n
    for g, w in zip(got, want):
        assert g.dtype == data.dtype
        np.testing.assert_array_equal(g, w)


def test_dynamic_partition_scalar_partitions():
    """A scalar partition takes the whole of data (a leading dim of 1) or nothing."""
    data = np.arange(6.0).reshape(2, 3)
    got = run_on(lambda d, p: og.dynamic_partition(d, p, 3), data, np.int32(1))
    for i, g in enumerate(got):
        np.testing.assert_array_equal(g, data[None] if i == 1 else np.zeros((0, 2, 3)))


STITCH_CASES = {
    "TF's example": ([np.array(6), np.array([4, 1]), np.array([[5, 2], [0, 3]])],
                     [np.array([61.0, 62.0]), np.array([[41.0, 42.0], [11.0, 12.0]]),
                      np.array([[[51.0, 52.0], [21.0, 22.0]], [[1.0, 2.0], [31.0, 32.0]]])]),
    "duplicates, later wins": ([np.array([0, 1, 2, 1], np.int32),
                                np.array([[2, 4], [2, 0]], np.int32)],
                               [np.arange(4, dtype=np.float32),
                                np.array([[10, 11], [12, 13]], np.float32)]),
    "unnamed rows are zero": ([np.array([5, 2], np.int32), np.array([2], np.int32)],
                              [RNG.standard_normal((2, 3)), RNG.standard_normal((1, 3))]),
    "int64 indices": ([np.array([[1, 0]], np.int64), np.array([3, 1], np.int64)],
                      [np.array([[[1, 2], [3, 4]]], np.int64),
                       np.array([[5, 6], [7, 8]], np.int64)]),
    "an empty input": ([np.zeros([0], np.int32), np.array([1, 0], np.int32)],
                       [np.zeros((0, 2), np.float32), np.ones((2, 2), np.float32)]),
    "no indices at all": ([np.zeros([0], np.int32), np.zeros([0, 0], np.int64)],
                          [np.zeros((0, 3)), np.zeros((0, 0, 3))]),
    "one input": ([np.array([2, 0, 2], np.int32)], [np.array([1.5, 2.5, 3.5])]),
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["known", "run-time shapes"])
@pytest.mark.parametrize("case", list(STITCH_CASES))
@pytest.mark.parametrize("fn", ["dynamic_stitch", "parallel_dynamic_stitch"])
def test_dynamic_stitch_values(fn, case, dynamic):
    indices, data = STITCH_CASES[case]
    m = len(indices)
    got = run_on(lambda *t: getattr(og, fn)(list(t[:m]), list(t[m:])), *indices, *data,
                 dynamic=dynamic)
    want = stitch_oracle(indices, data)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_dynamic_stitch_inverts_dynamic_partition():
    """TF's documented round trip: stitching the partitions of range(n) by the
    partitions of data gives data back."""
    data = RNG.standard_normal((7, 2))
    parts = np.array([2, 0, 1, 2, 2, 0, 1], np.int32)

    def build(d, p):
        ids = og.dynamic_partition(og.range(7), p, 3)
        return og.dynamic_stitch(ids, og.dynamic_partition(d, p, 3))

    np.testing.assert_array_equal(run_on(build, data, parts, dynamic=True), data)


BATCH_GATHER_CASES = {
    "2-D": (np.arange(12.0).reshape(3, 4), np.array([[3, 0], [1, 1], [2, 3]], np.int32)),
    "rows of 3-D params": (RNG.standard_normal((2, 5, 3)),
                           np.array([[4, 0, 4], [1, 2, 3]], np.int64)),
    "two batch dims": (RNG.standard_normal((2, 3, 4, 2)).astype(np.float32),
                       RNG.integers(0, 4, (2, 3, 5)).astype(np.int32)),
    "1-D indices": (np.array([5, 6, 7], np.int32), np.array([2, 2, 0], np.int32)),
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["known", "run-time shapes"])
@pytest.mark.parametrize("case", list(BATCH_GATHER_CASES))
def test_batch_gather_values(case, dynamic):
    params, indices = BATCH_GATHER_CASES[case]
    got = run_on(og.batch_gather, params, indices, dynamic=dynamic)
    np.testing.assert_array_equal(got, batch_gather_oracle(params, indices))


# --------------------------------------------------------------------------- static shapes

def test_static_shapes_as_tf1():
    """The shapes tf.compat.v1 2.21 prints for the same expressions."""
    with og.Graph().as_default():
        v = og.placeholder(og.float32, [None, 5])
        assert og.dynamic_partition(v, og.zeros([3], og.int32), 2)[0].shape == (None, 5)
        stitched = og.dynamic_stitch([og.constant([0, 1]), og.constant([2])],
                                     [og.zeros([2, 5]), og.zeros([1, 5])])
        assert stitched.shape == (3, 5)
        s = og.placeholder(og.float32, [None, None, 4])
        assert og.batch_gather(s, og.zeros([3, 2], og.int32)).shape == (3, 2, 4)


def test_static_shapes_more():
    with og.Graph().as_default():
        d = og.placeholder(og.float32, [4, 3, 2, 7])
        p = og.placeholder(og.int32, [4, 3])
        outs = og.dynamic_partition(d, p, 3)
        assert len(outs) == 3 and all(o.shape == (None, 2, 7) for o in outs)
        i = og.placeholder(og.int32, [None])
        assert og.dynamic_stitch([i, og.constant([1])],
                                 [og.zeros([2, 3]), og.zeros([1, 3])]).shape == (None, 3)
        assert og.dynamic_stitch([og.constant([[4, 0]])],
                                 [og.zeros([1, 2, 6], og.float64)]).shape == (5, 6)
        params = og.placeholder(og.float32, [2, None, 6])
        assert og.batch_gather(params, og.placeholder(og.int64, [None, 5])).shape == \
            (2, 5, 6)


# --------------------------------------------------------------------------- gradients

def test_dynamic_partition_gradient():
    data = RNG.standard_normal((3, 2, 4))
    parts = np.array([[1, 0], [3, 1], [1, 1]], np.int32)
    check_op_gradients(lambda d, p: og.dynamic_partition(d, p, 4), [data, parts])


def test_dynamic_stitch_gradient_zero_where_a_later_duplicate_won():
    indices, data = STITCH_CASES["duplicates, later wins"]
    data = [d.astype(np.float64) for d in data]
    grads = check_op_gradients(lambda i0, i1, d0, d1: og.dynamic_stitch([i0, i1], [d0, d1]),
                               list(indices) + data)
    # data[0]'s rows 0, 1, 2 are overwritten (by data[1]'s 0, data[0]'s 3, data[1]'s 2),
    # as is data[1]'s first index 2 (by its third); the winners' gradients are not zero
    np.testing.assert_array_equal(grads[0][:3], 0)
    assert grads[0][3] != 0
    assert grads[1][0, 0] == 0 and np.all(grads[1].reshape(-1)[1:] != 0)


def test_dynamic_stitch_gradient_of_rows():
    indices, data = STITCH_CASES["TF's example"]
    check_op_gradients(lambda a, b, c, x, y, z: og.dynamic_stitch([a, b, c], [x, y, z]),
                       list(indices) + list(data))


def test_batch_gather_gradient():
    params, indices = BATCH_GATHER_CASES["rows of 3-D params"]
    check_op_gradients(og.batch_gather, [params, indices])


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("bad", [2, -1])
def test_dynamic_partition_out_of_range_fails_the_run(bad):
    with pytest.raises(ExecutionError, match=r"dynamic_partition: partitions must be in "
                                             r"\[0, 2\)"):
        run_on(lambda d, p: og.dynamic_partition(d, p, 2)[0],
               np.ones((3, 2)), np.array([0, bad, 1], np.int32))


def test_dynamic_partition_shapes_disagreeing_at_run_time_fail_the_run():
    with pytest.raises(ExecutionError, match="dynamic_partition: partitions' shape must be "
                                             "the leading dims of data's"):
        run_on(lambda d, p: og.dynamic_partition(d, p, 2)[1],
               np.ones((4, 2)), np.array([0, 1, 1], np.int32), dynamic=True)


def test_dynamic_stitch_shapes_disagreeing_at_run_time_fail_the_run():
    with pytest.raises(ExecutionError, match="dynamic_stitch: each indices.m.'s shape must be"):
        run_on(lambda i, d: og.dynamic_stitch([i], [d]),
               np.array([0, 1, 1], np.int32), np.ones((4, 2)), dynamic=True)
    with pytest.raises(ExecutionError, match="dynamic_stitch: each indices.m.'s shape must be"):
        run_on(lambda i, j, d, e: og.dynamic_stitch([i, j], [d, e]),
               np.array([0], np.int32), np.array([1], np.int32),
               np.ones((1, 2)), np.ones((1, 3)), dynamic=True)


def test_dynamic_stitch_negative_index_fails_the_run():
    with pytest.raises(ExecutionError, match="dynamic_stitch: indices must be >= 0"):
        run_on(lambda i, j, d, e: og.dynamic_stitch([i, j], [d, e]),
               np.array([0, 1], np.int32), np.array([-1], np.int32),
               np.ones((2, 2)), np.ones((1, 2)))


@pytest.mark.parametrize("bad", [3, -1])
def test_batch_gather_out_of_range_fails_the_run(bad):
    with pytest.raises(ExecutionError, match=r"batch_gather: indices must be in \[0, "):
        run_on(og.batch_gather, np.ones((2, 3)), np.array([[0, 2], [bad, 1]], np.int32))


def test_batch_gather_batch_dims_differing_at_run_time_fail_the_run():
    with pytest.raises(ExecutionError, match="gather: params and indices differ in their "
                                             "batch dims"):
        run_on(og.batch_gather, np.ones((2, 3)), np.zeros((3, 1), np.int32), dynamic=True)


def test_bad_arguments_are_refused_while_building():
    with og.Graph().as_default():
        d = og.placeholder(og.float32, [4, 3])
        p = og.placeholder(og.int32, [4])
        with pytest.raises(ValueError, match="dynamic_partition: num_partitions"):
            og.dynamic_partition(d, p, 0)
        for bad in (2.0, True, og.constant(2)):
            with pytest.raises(TypeError, match="dynamic_partition: num_partitions"):
                og.dynamic_partition(d, p, bad)
        with pytest.raises(ShapeError, match="dynamic_partition: partitions"):
            og.dynamic_partition(d, og.placeholder(og.float32, [4]), 2)
        with pytest.raises(ShapeError, match="dynamic_partition: partitions"):
            og.dynamic_partition(d, og.placeholder(og.int32, [3]), 2)
        with pytest.raises(ShapeError, match="dynamic_partition: partitions"):
            og.dynamic_partition(d, og.placeholder(og.int32, None), 2)
        with pytest.raises(ValueError, match="dynamic_stitch: .*same number"):
            og.dynamic_stitch([p], [d, d])
        with pytest.raises(ValueError, match="dynamic_stitch: .*at least one"):
            og.dynamic_stitch([], [])
        with pytest.raises(TypeError, match="dynamic_stitch: indices"):
            og.dynamic_stitch(p, d)
        with pytest.raises(ShapeError, match="dynamic_stitch: indices"):
            og.dynamic_stitch([og.placeholder(og.float32, [4])], [d])
        with pytest.raises(ShapeError, match="dynamic_stitch: .*prefix"):
            og.dynamic_stitch([og.placeholder(og.int32, [5])], [d])
        with pytest.raises(ShapeError, match="dynamic_stitch: .*dtype"):
            og.dynamic_stitch([p, p], [d, og.placeholder(og.float64, [4, 3])])
        with pytest.raises(ShapeError, match="dynamic_stitch: .*trailing"):
            og.dynamic_stitch([p, p], [d, og.placeholder(og.float32, [4, 2])])
        with pytest.raises(ValueError, match="batch_gather: indices"):
            og.batch_gather(d, og.constant(1))
        with pytest.raises(ShapeError, match="batch_gather: indices"):
            og.batch_gather(d, og.placeholder(og.int32, None))
        with pytest.raises(ShapeError, match="batch_gather: indices"):
            og.batch_gather(d, og.placeholder(og.float32, [4, 1]))


# --------------------------------------------------------------------------- ONNX

def test_export_runs_in_onnxruntime():
    g = og.Graph()
    with g.as_default():
        d = og.placeholder(og.float32, [None, 3], name="d")
        p = og.placeholder(og.int32, [None], name="p")
        params = og.placeholder(og.float32, [None, 4], name="params")
        idx = og.placeholder(og.int64, [None, 2], name="idx")
        parts = og.dynamic_partition(d, p, 3)
        ids = og.dynamic_partition(og.range(og.shape(p, out_type=og.int32)[0]), p, 3)
        outs = {"part0": parts[0], "part2": parts[2],
                "stitched": og.dynamic_stitch(ids[::-1], parts[::-1]),
                "gathered": og.batch_gather(params, idx)}
    feeds = {"d": RNG.standard_normal((5, 3)).astype(np.float32),
             "p": np.array([2, 0, 2, 2, 0], np.int32),
             "params": RNG.standard_normal((2, 4)).astype(np.float32),
             "idx": np.array([[3, 1], [0, 0]], np.int64)}
    want, got = session_and_onnxruntime(g, {"d": d, "p": p, "params": params, "idx": idx},
                                        outs, feeds)
    oracle = partition_oracle(feeds["d"], feeds["p"], 3)
    expected = [oracle[0], oracle[2], feeds["d"],
                batch_gather_oracle(feeds["params"], feeds["idx"])]
    for w, o, e in zip(want, got, expected):
        np.testing.assert_array_equal(w, e)
        np.testing.assert_array_equal(o, e)

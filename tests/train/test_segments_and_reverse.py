"""og.unsorted_segment_sum, og.segment_sum and og.reverse_sequence against plain numpy
loops, with their gradients, and their ONNX export run by onnxruntime."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ShapeError


def _segment_sums(data, ids, count):
    out = np.zeros((count,) + data.shape[ids.ndim:], data.dtype)
    for index in np.ndindex(*ids.shape):
        if ids[index] >= 0:
            out[ids[index]] += data[index]
    return out


def _reversed(x, lengths, seq_axis, batch_axis):
    y = np.moveaxis(x, (batch_axis, seq_axis), (0, 1)).copy()
    for b, n in enumerate(lengths):
        y[b, :n] = y[b, :n][::-1]
    return np.moveaxis(y, (0, 1), (batch_axis, seq_axis))


def test_unsorted_segment_sum_drops_negative_ids_and_leaves_empty_segments_zero():
    rng = np.random.RandomState(0)
    data = rng.randn(2, 3, 4).astype(np.float32)
    ids = np.array([[0, 4, -1], [4, 1, 0]], np.int32)
    g = og.Graph()
    with g.as_default():
        d = og.placeholder(og.float32, [2, 3, 4], name="d")
        i = og.placeholder(og.int32, [2, 3], name="i")
        n = og.placeholder(og.int64, [], name="n")
        sums = og.unsorted_segment_sum(d, i, n)
        weights = og.constant(rng.randn(6, 4).astype(np.float32))
        grad = og.gradients(og.reduce_sum(sums * weights), [d])[0]
    got, got_grad = og.Session(g).run([sums, grad], {d: data, i: ids, n: 6})
    np.testing.assert_allclose(got, _segment_sums(data, ids, 6), rtol=1e-6)
    w = og.Session(g).run(weights)
    want_grad = np.where((ids >= 0)[..., None], w[np.maximum(ids, 0)], 0)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)


def test_segment_sum_counts_segments_from_the_largest_id():
    data = np.arange(15, dtype=np.float64).reshape(5, 3)
    g = og.Graph()
    with g.as_default():
        sums = og.segment_sum(og.constant(data), og.constant([0, 0, 1, 3, 3]))
        none = og.segment_sum(og.constant(np.zeros((0, 3))), og.constant(np.zeros(0, np.int64)))
    got, empty = og.Session(g).run([sums, none])
    np.testing.assert_array_equal(got, _segment_sums(data, np.array([0, 0, 1, 3, 3]), 4))
    assert empty.shape == (0, 3)


def test_segment_sum_arguments_are_checked_while_building():
    g = og.Graph()
    with g.as_default():
        d = og.placeholder(og.float32, [4, 2], name="d")
        with pytest.raises(ShapeError, match="must be a prefix of data's shape"):
            og.unsorted_segment_sum(d, og.constant([0, 1, 2]), 3)
        with pytest.raises(ShapeError, match="num_segments must be a scalar"):
            og.unsorted_segment_sum(d, og.constant([0, 1, 2, 0]), og.constant([3]))
        with pytest.raises(ShapeError, match="segment_ids must be 1-D"):
            og.segment_sum(d, og.constant([[0, 1], [1, 1]]))


@pytest.mark.parametrize("seq_axis, batch_axis", [(1, 0), (0, 1), (2, 0), (0, 2), (-1, 1)])
def test_reverse_sequence_on_any_pair_of_axes(seq_axis, batch_axis):
    rng = np.random.RandomState(1)
    x = rng.randn(3, 3, 3).astype(np.float32)
    lengths = np.array([3, 0, 2], np.int64)
    g = og.Graph()
    with g.as_default():
        t = og.placeholder(og.float32, [3, 3, 3], name="t")
        y = og.reverse_sequence(t, lengths, seq_axis=seq_axis, batch_axis=batch_axis)
        weights = og.constant(rng.randn(3, 3, 3).astype(np.float32))
        grad = og.gradients(og.reduce_sum(y * weights), [t])[0]
    got, got_grad = og.Session(g).run([y, grad], {t: x})
    np.testing.assert_array_equal(got, _reversed(x, lengths, seq_axis % 3, batch_axis % 3))
    w = og.Session(g).run(weights)
    np.testing.assert_array_equal(got_grad, _reversed(w, lengths, seq_axis % 3,
                                                      batch_axis % 3))


def test_reverse_sequence_refuses_equal_axes_and_missing_seq_axis():
    g = og.Graph()
    with g.as_default():
        t = og.placeholder(og.float32, [3, 4], name="t")
        with pytest.raises(ShapeError, match="seq_axis and batch_axis are both 1"):
            og.reverse_sequence(t, [1, 2, 3], seq_axis=1, batch_axis=1)
        with pytest.raises(TypeError, match="seq_axis is required"):
            og.reverse_sequence(t, [1, 2, 3])


def test_segments_and_reversal_export_to_onnx():
    g = og.Graph()
    with g.as_default():
        d = og.placeholder(og.float32, [None, 3], name="d")
        i = og.placeholder(og.int32, [None], name="i")
        sums = og.unsorted_segment_sum(d, i, 4)
        turned = og.reverse_sequence(og.reshape(d, [1, -1, 3]), [2], seq_axis=1,
                                     batch_axis=0)
    proto = to_onnx(g.to_model(signatures={"serving": og.signature(
        {"d": d, "i": i}, {"sums": sums, "turned": turned})}))
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    ids = np.array([3, -1, 0, 3], np.int32)
    got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"d": data, "i": ids})))
    np.testing.assert_array_equal(got["sums"], _segment_sums(data, ids, 4))
    np.testing.assert_array_equal(got["turned"][0], np.concatenate([data[1::-1], data[2:]]))


def test_unsorted_segment_sum_with_no_segments_and_ids_past_the_end():
    g = og.Graph()
    with g.as_default():
        d = og.placeholder(og.float32, [None, 2], name="d")
        i = og.placeholder(og.int32, [None], name="i")
        n = og.placeholder(og.int32, [], name="n")
        sums = og.unsorted_segment_sum(d, i, n)
    sess = og.Session(g)
    ones = np.ones((3, 2), np.float32)
    assert sess.run(sums, {d: ones, i: [-1, -1, -1], n: 0}).shape == (0, 2)
    with pytest.raises(ShapeError, match="index out of range"):
        sess.run(sums, {d: ones, i: [0, 1, 2], n: 2})  # an id of num_segments

"""og.train.maybe_batch and friends: only the examples keep_input keeps are batched
(a scalar per run, or a vector of rows with enqueue_many); the input's end still ends
the batches; bad keep_input is refused while building."""

import numpy as np
import pytest

import onegraph as og


def _drain(fetch):
    """Every batch until the input ends."""
    out = []
    with og.train.MonitoredSession() as sess:
        while not sess.should_stop():
            out.append(sess.run(fetch))
    return out


def test_a_scalar_keep_input_filters_examples_in_order():
    g = og.Graph()
    with g.as_default():
        x = og.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        batch = og.train.maybe_batch([x], og.equal(x % 2, 0), batch_size=2,
                                     allow_smaller_final_batch=True)
        got = _drain(batch)
    assert [b.tolist() for b in got] == [[0, 2], [4, 6], [8]]


def test_a_vector_keep_input_picks_rows_of_enqueue_many():
    g = og.Graph()
    with g.as_default():
        rows = og.constant(np.arange(12, dtype=np.int64).reshape(6, 2))
        rows = og.train.limit_epochs(rows, 1)
        keep = og.constant(np.array([True, False, True, True, False, True]))
        batch = og.train.maybe_shuffle_batch([rows], 4, capacity=10, min_after_dequeue=0,
                                             keep_input=keep, enqueue_many=True, seed=3,
                                             allow_smaller_final_batch=True)
        got = _drain(batch)
    kept = np.concatenate(got)
    assert sorted(kept[:, 0].tolist()) == [0, 4, 6, 10]
    assert (kept[:, 1] == kept[:, 0] + 1).all()


def test_join_forms_and_errors():
    g = og.Graph()
    with g.as_default():
        a = og.train.limit_epochs(og.constant(np.array([1, 2, 3], np.int64)), 1)
        b = og.train.limit_epochs(og.constant(np.array([10, 20, 30], np.int64)), 1)
        batch = og.train.maybe_batch_join([[a], [b]], og.constant(True), 6,
                                          enqueue_many=True,
                                          allow_smaller_final_batch=True)
        got = np.concatenate(_drain(batch))
        assert sorted(got.tolist()) == [1, 2, 3, 10, 20, 30]
        x = og.constant(np.float32(1.0))
        with pytest.raises(ValueError, match="keep_input must be a scalar, or a vector "
                                             "with enqueue_many=True"):
            og.train.maybe_batch([x], og.constant(np.array([True, False])), 2)
        with pytest.raises(TypeError, match="keep_input must be a bool"):
            og.train.maybe_shuffle_batch_join([[x]], 2, 4, 1, og.constant(np.int64(1)))

"""TF1's queue-based input pipelines: producers with epoch limits and shuffling,
batchers, and the end of input travelling down the queues to the training loop.

The epoch loops are written as TF1 programs are (Coordinator, start_queue_runners,
until OutOfRangeError) and check the multiset of examples seen, so a lost or
duplicated example fails. Every test that starts threads joins them and has a
timeout."""

import collections

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, OutOfRangeError
from onegraph.train import input_pipeline as ip
from onegraph.train.queue_runner import Coordinator, start_queue_runners

GRACE = 10


def _run_epochs(g, fetch, max_steps=10_000):
    """The TF1 loop in a new Session of `g`: run `fetch` until the input ends; every
    value fetched."""
    init = og.local_variables_initializer(g)
    sess = og.Session(g)
    sess.run(init)
    coord = Coordinator()
    threads = start_queue_runners(sess, coord)
    out = []
    try:
        while not coord.should_stop():
            out.append(sess.run(fetch))
            assert len(out) < max_steps, "the input never ended"
    except OutOfRangeError:
        pass
    finally:
        coord.request_stop()
    coord.join(threads, stop_grace_period_secs=GRACE)
    assert not any(t.is_alive() for t in threads)
    return out


def _counts(batches) -> collections.Counter:
    return collections.Counter(v for b in batches for v in np.asarray(b).ravel().tolist())


# -- limit_epochs --------------------------------------------------------------------


def test_limit_epochs_counts_runs_and_the_local_initializer_resets_it():
    g = og.Graph()
    with g.as_default():
        x = ip.limit_epochs(og.constant([1, 2]), num_epochs=2)
        init = og.local_variables_initializer()
    (epochs,) = g.get_collection(og.LOCAL_VARIABLES)
    assert epochs.name.endswith("epochs") and epochs not in og.global_variables(g)
    sess = og.Session(g)
    for _ in range(2):  # a second round after the reset
        sess.run(init)
        assert sess.run(x).tolist() == [1, 2] and sess.run(x).tolist() == [1, 2]
        with pytest.raises(OutOfRangeError):
            sess.run(x)


def test_limit_epochs_without_a_limit_returns_the_tensor():
    g = og.Graph()
    with g.as_default():
        t = og.constant(3)
        assert ip.limit_epochs(t) is t
    assert g.get_collection(og.LOCAL_VARIABLES) == []


@pytest.mark.parametrize("num_epochs, error", [(0, ValueError), (-1, ValueError),
                                               (1.5, TypeError), (True, TypeError)])
def test_limit_epochs_rejects_bad_num_epochs(num_epochs, error):
    with og.Graph().as_default(), pytest.raises(error, match="num_epochs"):
        ip.limit_epochs(og.constant(1), num_epochs)


# -- full epoch loops ----------------------------------------------------------------


@pytest.mark.timeout(60)
def test_slice_input_producer_and_batch_see_every_example_num_epochs_times():
    n, epochs = 24, 3
    xs = np.arange(n, dtype=np.int64)
    ys = (np.arange(n, dtype=np.float32) * 10).reshape(n, 1).repeat(2, axis=1)
    g = og.Graph()
    with g.as_default():
        x, y = ip.slice_input_producer([xs, ys], num_epochs=epochs, seed=1)
        assert tuple(x.shape) == () and tuple(y.shape) == (2,)
        xb, yb = ip.batch([x, y], batch_size=6, num_threads=2, capacity=8)
        assert tuple(xb.shape) == (6,) and tuple(yb.shape) == (6, 2)
    batches = _run_epochs(g, [xb, yb])
    for bx, by in batches:
        assert bx.shape == (6,) and by.shape == (6, 2)
        np.testing.assert_array_equal(by, ys[bx])  # rows stay together
    assert len(batches) == n * epochs // 6
    assert _counts(b[0] for b in batches) == collections.Counter(xs.tolist() * epochs)


@pytest.mark.timeout(60)
def test_shuffle_batch_sees_every_example_num_epochs_times():
    g = og.Graph()
    with g.as_default():
        (i,) = ip.slice_input_producer([np.arange(30, dtype=np.int32)], num_epochs=2,
                                       seed=3)
        b = ip.shuffle_batch([i], batch_size=5, capacity=20, min_after_dequeue=10,
                             num_threads=2, seed=4)
        assert tuple(b.shape) == (5,)
    batches = _run_epochs(g, b)
    assert all(x.shape == (5,) for x in batches)
    assert _counts(batches) == collections.Counter(list(range(30)) * 2)


@pytest.mark.timeout(60)
def test_batch_join_merges_several_readers_without_loss():
    g = og.Graph()
    with g.as_default():
        readers = [ip.slice_input_producer([np.arange(k * 10, k * 10 + 10,
                                                      dtype=np.int64)],
                                           num_epochs=2, shuffle=False)
                   for k in range(3)]
        b = ip.batch_join(readers, batch_size=4, allow_smaller_final_batch=True)
    batches = _run_epochs(g, b)
    assert _counts(batches) == collections.Counter(list(range(30)) * 2)


@pytest.mark.timeout(60)
def test_shuffle_batch_join_with_dicts_returns_dicts():
    g = og.Graph()
    with g.as_default():
        readers = []
        for k in range(2):
            v = ip.slice_input_producer([np.arange(k * 8, k * 8 + 8, dtype=np.int64)],
                                        num_epochs=1, seed=k)[0]
            readers.append({"id": v, "twice": v * 2})
        out = ip.shuffle_batch_join(readers, batch_size=4, capacity=8,
                                    min_after_dequeue=2, seed=5)
        assert set(out) == {"id", "twice"}
    batches = _run_epochs(g, out)
    for b in batches:
        np.testing.assert_array_equal(b["twice"], b["id"] * 2)
    assert _counts(b["id"] for b in batches) == collections.Counter(range(16))


@pytest.mark.timeout(60)
def test_string_input_producer_yields_each_string_num_epochs_times():
    names = ["a.txt", "b.txt", "c.txt"]
    g = og.Graph()
    with g.as_default():
        q = ip.string_input_producer(names, num_epochs=2, seed=0)
        name = q.dequeue()
    seen = _run_epochs(g, name)
    assert collections.Counter(str(np.asarray(s).item()) for s in seen) == \
        collections.Counter(names * 2)


@pytest.mark.timeout(60)
def test_allow_smaller_final_batch_returns_the_rest():
    g = og.Graph()
    with g.as_default():
        q = ip.range_input_producer(10, num_epochs=1, shuffle=False)
        b = ip.batch([q.dequeue()], batch_size=4, allow_smaller_final_batch=True)
        assert b.shape is not None and b.shape[0] is None
    batches = _run_epochs(g, b)
    assert [x.tolist() for x in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


@pytest.mark.timeout(60)
def test_without_smaller_final_batch_the_remainder_is_dropped():
    g = og.Graph()
    with g.as_default():
        q = ip.range_input_producer(10, num_epochs=1, shuffle=False)
        b = ip.batch(q.dequeue(), batch_size=4)  # a bare tensor: a tensor back
    batches = _run_epochs(g, b)
    assert [x.tolist() for x in batches] == [[0, 1, 2, 3], [4, 5, 6, 7]]


@pytest.mark.timeout(60)
def test_enqueue_many_batches_rows():
    g = og.Graph()
    with g.as_default():
        rows = ip.limit_epochs(np.arange(12, dtype=np.float32).reshape(6, 2), 2)
        b, _ = ip.batch([rows, np.zeros((6,), np.int64)], batch_size=4,
                        enqueue_many=True)
        assert tuple(b.shape) == (4, 2)
    batches = _run_epochs(g, b)
    assert len(batches) == 3
    assert _counts(batches) == collections.Counter(list(range(12)) * 2)


# -- shuffling --------------------------------------------------------------------------


def _first_epochs(seed, shuffle=True, n=10, epochs=2):
    g = og.Graph()
    with g.as_default():
        q = ip.range_input_producer(n, num_epochs=epochs, shuffle=shuffle, seed=seed)
        d = q.dequeue_many(n)
    return [x.tolist() for x in _run_epochs(g, d)]


@pytest.mark.timeout(60)
def test_seeded_shuffle_gives_a_reproducible_permutation_per_epoch():
    epochs = _first_epochs(seed=7)
    assert len(epochs) == 2
    assert all(sorted(e) == list(range(10)) for e in epochs)
    assert epochs[0] != list(range(10)) and epochs[0] != epochs[1]
    assert _first_epochs(seed=7) == epochs
    assert _first_epochs(seed=8) != epochs


@pytest.mark.timeout(60)
def test_without_shuffle_the_rows_keep_their_order():
    assert _first_epochs(seed=None, shuffle=False) == [list(range(10))] * 2


# -- outputs and failures -------------------------------------------------------------


def test_batch_keeps_the_structure_of_its_input():
    g = og.Graph()
    with g.as_default():
        a = og.constant(np.zeros((3,), np.float32))
        b = og.constant(np.int64(1))
        d = ip.batch({"b": b, "a": a}, batch_size=2)
        assert set(d) == {"a", "b"}
        assert tuple(d["a"].shape) == (2, 3) and tuple(d["b"].shape) == (2,)
        single = ip.batch([a], batch_size=2)
        assert isinstance(single, og.Tensor) and tuple(single.shape) == (2, 3)
        pair = ip.batch((a, b), batch_size=2)
        assert isinstance(pair, list) and len(pair) == 2
        assert len(g.get_collection(og.GraphKeys.QUEUE_RUNNERS)) == 3


@pytest.mark.timeout(60)
def test_an_empty_input_fails_instead_of_spinning():
    g = og.Graph()
    with g.as_default():
        q = ip.input_producer(og.constant(np.zeros((0, 2), np.float32)))
        d = q.dequeue()
    with pytest.raises(ExecutionError, match="no rows"):
        _run_epochs(g, d)


def _graph_with(fn):
    with og.Graph().as_default():
        return fn()


@pytest.mark.parametrize("build, error, match", [
    (lambda: ip.batch([og.constant(1.0)], 2, dynamic_pad=True), ValueError, "dynamic_pad"),
    (lambda: ip.batch_join([[og.constant(1.0)]], 2, dynamic_pad=True), ValueError,
     "dynamic_pad"),
    (lambda: ip.batch([og.constant(1.0)], 2, dynamic_pad=1), TypeError, "dynamic_pad"),
    (lambda: ip.batch([og.constant(1.0)], 0), ValueError, "batch_size"),
    (lambda: ip.batch([og.constant(1.0)], 2.5), TypeError, "batch_size"),
    (lambda: ip.batch([og.constant(1.0)], 2, capacity=0), ValueError, "capacity"),
    (lambda: ip.batch([og.constant(1.0)], 2, num_threads=0), ValueError, "num_threads"),
    (lambda: ip.batch([og.constant(1.0)], 2, enqueue_many="yes"), TypeError,
     "enqueue_many"),
    (lambda: ip.batch([og.constant(1.0)], 2, allow_smaller_final_batch=None), TypeError,
     "allow_smaller_final_batch"),
    (lambda: ip.batch([], 2), ValueError, "at least one"),
    (lambda: ip.batch("x", 2), TypeError, "tensors"),
    (lambda: ip.batch([og.placeholder(og.float32, None)], 2), ValueError, "rank"),
    (lambda: ip.batch([og.placeholder(og.float32, [None, 3])], 2), ValueError,
     "not fully defined"),
    (lambda: ip.batch([og.constant(1.0)], 2, shapes=[[], []]), ValueError, "shapes"),
    (lambda: ip.batch([og.constant(1.0)], 2, enqueue_many=True), ValueError, "scalar"),
    (lambda: ip.shuffle_batch([og.constant(1.0)], 2, capacity=4, min_after_dequeue=4),
     ValueError, "min_after_dequeue"),
    (lambda: ip.shuffle_batch([og.constant(1.0)], 2, capacity=4, min_after_dequeue=-1),
     ValueError, "min_after_dequeue"),
    (lambda: ip.shuffle_batch([og.constant(1.0)], 2, capacity=4, min_after_dequeue=1,
                              seed=1.5), TypeError, "seed"),
    (lambda: ip.batch_join([[og.constant(1.0)], [og.constant(1)]], 2), TypeError,
     "dtypes"),
    (lambda: ip.batch_join([{"a": og.constant(1.0)}, {"b": og.constant(1.0)}], 2),
     ValueError, "same keys"),
    (lambda: ip.batch_join([[og.constant(1.0)], [og.constant(1.0), og.constant(2.0)]], 2),
     ValueError, "differ in length"),
    (lambda: ip.batch_join([], 2), ValueError, "at least one"),
    (lambda: ip.input_producer(og.constant(1.0)), ValueError, "rank >= 1"),
    (lambda: ip.input_producer(og.placeholder(og.float32, [None, None])), ValueError,
     "element_shape"),
    (lambda: ip.input_producer(og.constant(np.zeros((2, 3))), element_shape=[4]),
     ValueError, "conflicts"),
    (lambda: ip.input_producer(og.constant([1, 2]), shuffle="no"), TypeError, "shuffle"),
    (lambda: ip.input_producer(og.constant([1, 2]), capacity=0), ValueError, "capacity"),
    (lambda: ip.input_producer(og.constant([1, 2]), num_epochs=0), ValueError,
     "num_epochs"),
    (lambda: ip.string_input_producer([]), ValueError, "non-empty"),
    (lambda: ip.string_input_producer(og.constant([1, 2])), TypeError, "og.string"),
    (lambda: ip.string_input_producer([["a"], ["b"]]), ValueError, "1-D"),
    (lambda: ip.range_input_producer(0), ValueError, "limit"),
    (lambda: ip.range_input_producer(2.0), TypeError, "limit"),
    (lambda: ip.slice_input_producer([]), ValueError, "at least one"),
    (lambda: ip.slice_input_producer(og.constant([1, 2])), TypeError, "list"),
    (lambda: ip.slice_input_producer([np.zeros(3), np.zeros(4)]), ValueError,
     "numbers of rows"),
    (lambda: ip.slice_input_producer([og.constant(1.0)]), ValueError, "scalar"),
])
def test_bad_arguments_are_named_errors(build, error, match):
    with pytest.raises(error, match=match):
        _graph_with(build)

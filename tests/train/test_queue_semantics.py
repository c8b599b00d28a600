"""Queue semantics as in TF1's QueueBase: close() lets pending enqueues finish (or
cancels them), enqueues are checked against the declared dtypes and shapes (at build
and at run time), dequeue_many with a tensor or zero count, dequeue_up_to, and the
graph-level seed of RandomShuffleQueue.

Every step that could block runs in a thread joined with a timeout, so a hang fails
the test instead of stopping the run.
"""

import re
import signal
import threading
import time

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError
from onegraph.ops import queue as queue_ops

TIMEOUT = 10.0


class _Call:
    """Run `fn` in a daemon thread; `finish()` joins it with a timeout."""

    def __init__(self, fn):
        self.result, self.error = None, None
        self.thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self.thread.start()

    def _run(self, fn):
        try:
            self.result = fn()
        except Exception as e:  # reported by finish()
            self.error = e

    def blocked(self, wait=0.2) -> bool:
        """True if the call is still running after `wait` seconds."""
        self.thread.join(wait)
        return self.thread.is_alive()

    def finish(self):
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive(), "the call hangs"
        return self


def _wait_for_blocked_enqueue(sess, q, call):
    """Wait until `call` (an enqueue of queue `q`) is inside the queue, waiting for room.

    Reads the Session's queue object: a producer thread that has not reached the queue
    yet when the test closes it would fail as a new enqueue, not a pending one.
    """
    deadline = time.monotonic() + TIMEOUT
    while True:
        queue = sess.state.get(("queue", q.name))
        if queue is not None and queue.pending_enqueues and queue.size() >= queue.capacity:
            break
        assert call.thread.is_alive(), f"the enqueue ended early: {call.error!r}"
        assert time.monotonic() < deadline, "the enqueue never blocked"
        time.sleep(0.01)
    assert call.blocked(), "enqueue on a full queue must block"


def _run(sess, fetch, feed=None):
    """sess.run in a thread with a timeout: returns the value or raises its error."""
    call = _Call(lambda: sess.run(fetch, feed)).finish()
    if call.error is not None:
        raise call.error
    return call.result


def _drain(sess, deq):
    got = []
    while True:
        try:
            got.append(int(_run(sess, deq)))
        except og.OutOfRangeError:
            return got


def _scalar_queue(capacity, cancel=False):
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(capacity, [og.int64], [[]])
        v = og.placeholder(og.int64, [], name="v")
        vs = og.placeholder(og.int64, [None], name="vs")
        ops = dict(q=q, v=v, vs=vs, enq=q.enqueue(v), enq_many=q.enqueue_many([vs]),
                   deq=q.dequeue(), close=q.close(), size=q.size())
        if cancel:
            ops["cancel"] = q.close(cancel_pending_enqueues=True)
    return og.Session(g), ops


# -- F09: close() and pending enqueues ------------------------------------------------


def test_close_lets_a_pending_enqueue_complete_once_there_is_room():
    sess, o = _scalar_queue(1)
    sess.run(o["enq"], {o["v"]: 1})
    producer = _Call(lambda: sess.run(o["enq"], {o["v"]: 2}))
    _wait_for_blocked_enqueue(sess, o["q"], producer)
    _run(sess, o["close"])
    assert producer.blocked(), "close() without cancel must not end a pending enqueue"
    assert int(_run(sess, o["deq"])) == 1
    assert producer.finish().error is None
    assert _drain(sess, o["deq"]) == [2]
    with pytest.raises(og.ExecutionError, match="closed"):
        _run(sess, o["enq"], {o["v"]: 3})    # new enqueues after close still fail


def test_close_with_cancel_pending_enqueues_cancels_them():
    sess, o = _scalar_queue(1, cancel=True)
    sess.run(o["enq"], {o["v"]: 1})
    producer = _Call(lambda: sess.run(o["enq"], {o["v"]: 2}))
    _wait_for_blocked_enqueue(sess, o["q"], producer)
    _run(sess, o["cancel"])
    err = producer.finish().error
    assert isinstance(err, og.ExecutionError) and "cancel" in str(err), err
    assert _drain(sess, o["deq"]) == [1]


def test_pending_enqueue_many_is_drained_after_close():
    sess, o = _scalar_queue(2)
    producer = _Call(lambda: sess.run(o["enq_many"], {o["vs"]: np.arange(5)}))
    _wait_for_blocked_enqueue(sess, o["q"], producer)
    _run(sess, o["close"])
    # the dequeuer waits for the pending producer even though the queue is closed
    assert _drain(sess, o["deq"]) == [0, 1, 2, 3, 4]
    assert producer.finish().error is None


def test_dequeue_many_after_close_waits_for_pending_enqueues():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(2, [og.int64], [[]])
        vs = og.placeholder(og.int64, [None])
        enq, deq4, close = q.enqueue_many([vs]), q.dequeue_many(4), q.close()
    sess = og.Session(g)
    producer = _Call(lambda: sess.run(enq, {vs: np.arange(4)}))
    _wait_for_blocked_enqueue(sess, q, producer)
    _run(sess, close)
    assert _run(sess, deq4).tolist() == [0, 1, 2, 3]
    assert producer.finish().error is None


def test_blocked_dequeue_is_released_by_a_cancelling_close():
    sess, o = _scalar_queue(1, cancel=True)
    consumer = _Call(lambda: sess.run(o["deq"]))
    assert consumer.blocked()
    _run(sess, o["cancel"])
    assert isinstance(consumer.finish().error, og.OutOfRangeError)


# -- F10: declared dtypes and shapes ---------------------------------------------------


def test_enqueue_of_a_wrong_static_shape_fails_at_build():
    with og.Graph().as_default():
        q = og.FIFOQueue(4, [og.float32], [[2]], name="q")
        with pytest.raises(og.ShapeError, match=r"component 0.*expected \[2\], got \[3\]"):
            q.enqueue(og.constant(np.ones(3, np.float32)))
        with pytest.raises(og.ShapeError, match=r"component 0.*expected \[2\], got \[3\]"):
            q.enqueue_many([og.placeholder(og.float32, [None, 3])])
        with pytest.raises(og.ShapeError, match="rank 0"):
            q.enqueue_many([og.constant(np.float32(1))])
        q.enqueue(og.placeholder(og.float32, [2]))           # compatible: accepted
        q.enqueue(og.placeholder(og.float32, None))           # unknown: checked at run
        q.enqueue_many([og.placeholder(og.float32, [None, 2])])


def test_enqueue_of_a_wrong_dtype_fails_at_build():
    with og.Graph().as_default():
        q = og.FIFOQueue(4, [og.float32, og.int64], [[], []], name="q")
        with pytest.raises(og.ShapeError, match="component 0: expected float32, got int64"):
            q.enqueue([og.placeholder(og.int64, []), og.placeholder(og.int64, [])])
        with pytest.raises(og.ShapeError, match="component 1: expected int64, got float32"):
            q.enqueue_many([og.placeholder(og.float32, [None]),
                            og.placeholder(og.float32, [None])])
        q.enqueue([3, 4])                                     # Python values are converted


def test_enqueue_many_components_of_different_static_lengths_fail_at_build():
    with og.Graph().as_default():
        q = og.FIFOQueue(4, [og.float32, og.int64], [[], []])
        with pytest.raises(og.ShapeError, match="length"):
            q.enqueue_many([og.constant(np.zeros(3, np.float32)),
                            og.constant(np.zeros(2, np.int64))])


def test_queue_rejects_shapes_that_do_not_match_dtypes():
    with og.Graph().as_default():
        with pytest.raises(og.OneGraphError, match="2 dtypes.*1 shapes"):
            og.FIFOQueue(4, [og.float32, og.int64], [[]])


def test_enqueue_of_a_wrong_runtime_shape_fails_and_adds_nothing():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(4, [og.float32], [[2]], name="q")
        v = og.placeholder(og.float32, None)
        vs = og.placeholder(og.float32, None)
        enq, enq_many, size = q.enqueue(v), q.enqueue_many([vs]), q.size()
        deq = q.dequeue()
    sess = og.Session(g)
    with pytest.raises(og.ShapeError,
                       match=r"'q'.*shape mismatch in component 0: expected \[2\], got \[3\]"):
        _run(sess, enq, {v: np.ones(3, np.float32)})
    with pytest.raises(og.ShapeError, match=r"expected \[2\], got \[3\]"):
        _run(sess, enq_many, {vs: np.ones((4, 3), np.float32)})
    with pytest.raises(og.ShapeError, match="rank 0"):
        _run(sess, enq_many, {vs: np.float32(1)})
    assert int(sess.run(size)) == 0
    _run(sess, enq_many, {vs: np.ones((2, 2), np.float32)})
    assert _run(sess, deq).shape == (2,)


def test_partially_known_declared_shapes_accept_any_size_in_unknown_dims():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(4, [og.float32], [[None, 2]])
        v = og.placeholder(og.float32, None)
        enq, deq = q.enqueue(v), q.dequeue()
    sess = og.Session(g)
    _run(sess, enq, {v: np.ones((3, 2), np.float32)})
    _run(sess, enq, {v: np.ones((1, 2), np.float32)})
    with pytest.raises(og.ShapeError, match=r"expected \[\?, 2\], got \[3, 3\]"):
        _run(sess, enq, {v: np.ones((3, 3), np.float32)})
    assert deq.shape == (None, 2)
    assert _run(sess, deq).shape == (3, 2)


def test_the_runtime_check_travels_with_the_saved_graph():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(4, [og.float32], [[2]], name="q")
        v = og.placeholder(og.float32, None, name="v")
        q.enqueue(v, name="enq")
    model = g.to_model()
    attrs = next(n for n in model.graphs[0].nodes if n.op_type == "FIFOQueue").attributes
    assert list(attrs["component_types"]) == ["float32"]
    assert list(attrs["component_ranks"]) == [1] and list(attrs["component_dims"]) == [2]
    sess = og.Session(model)
    with pytest.raises(og.ShapeError, match=r"expected \[2\], got \[3\]"):
        _run(sess, "enq", {"v": np.ones(3, np.float32)})
    _run(sess, "enq", {"v": np.ones(2, np.float32)})


def test_enqueue_kernel_checks_dtypes():
    q = queue_ops.Queue("q", 4, 1, dtypes=[np.dtype(np.float32)], shapes=[(2,)])
    with pytest.raises(og.ShapeError, match="dtype mismatch in component 0: expected "
                                            "float32, got int64"):
        queue_ops._enqueue([q, np.zeros(2, np.int64)], {}, None)
    assert q.size() == 0
    queue_ops._enqueue([q, np.zeros(2, np.float32)], {}, None)
    assert q.size() == 1


# -- F11: dequeue_many edge cases --------------------------------------------------------


def test_dequeue_many_takes_a_tensor_count():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(10, [og.float32], [[2]])
        n = og.placeholder(og.int64, [])
        enq = q.enqueue_many([og.constant(np.arange(10, dtype=np.float32).reshape(5, 2))])
        deq = q.dequeue_many(n)
        n32 = q.dequeue_many(og.constant(np.int32(1)))
    assert deq.shape == (None, 2) and n32.shape == (1, 2)
    sess = og.Session(g)
    sess.run(enq)
    np.testing.assert_array_equal(_run(sess, deq, {n: 3}), [[0, 1], [2, 3], [4, 5]])
    np.testing.assert_array_equal(_run(sess, n32), [[6, 7]])
    with pytest.raises(og.ExecutionError, match="n must be >= 0"):
        _run(sess, deq, {n: -1})


def test_dequeue_many_rejects_bad_counts_at_build():
    with og.Graph().as_default():
        q = og.FIFOQueue(10, [og.float32], [[2]])
        with pytest.raises(og.OneGraphError, match=">= 0"):
            q.dequeue_many(-1)
        with pytest.raises(og.ShapeError, match="integer"):
            q.dequeue_many(og.placeholder(og.float32, []))
        with pytest.raises(og.ShapeError, match="scalar"):
            q.dequeue_many(og.placeholder(og.int64, [2]))


def test_dequeue_many_zero_returns_empty_components_without_blocking():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(10, [og.float32, og.int64], [[2], []])
        a, b = q.dequeue_many(0)
        close = q.close()
    sess = og.Session(g)
    for _ in range(2):          # before and after close
        va, vb = _run(sess, [a, b])
        assert va.shape == (0, 2) and va.dtype == np.float32
        assert vb.shape == (0,) and vb.dtype == np.int64
        sess.run(close)
    assert a.shape == (0, 2)


def test_enqueue_many_of_a_scalar_is_a_named_error():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(10, [og.float32], [None])
        v = og.placeholder(og.float32, None)
        enq = q.enqueue_many([v])
    with pytest.raises(og.ShapeError, match="enqueue_many.*rank 0"):
        _run(og.Session(g), enq, {v: np.float32(1)})


# -- F13: dequeue_up_to and the graph seed -------------------------------------------------


def test_dequeue_up_to_returns_the_rest_after_close():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(10, [og.int64], [[]])
        vs = og.placeholder(og.int64, [None])
        enq, up3, close = q.enqueue_many([vs]), q.dequeue_up_to(3), q.close()
    assert up3.shape == (None,)
    sess = og.Session(g)
    sess.run(enq, {vs: np.arange(2)})
    consumer = _Call(lambda: sess.run(up3))
    assert consumer.blocked(), "before close dequeue_up_to waits for n elements"
    sess.run(enq, {vs: np.arange(2, 5)})
    assert consumer.finish().result.tolist() == [0, 1, 2]
    sess.run(close)
    assert _run(sess, up3).tolist() == [3, 4]
    with pytest.raises(og.OutOfRangeError):
        _run(sess, up3)


def test_dequeue_up_to_after_close_waits_for_pending_enqueues():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(2, [og.int64], [[]])
        vs = og.placeholder(og.int64, [None])
        enq, up5, close = q.enqueue_many([vs]), q.dequeue_up_to(5), q.close()
    sess = og.Session(g)
    producer = _Call(lambda: sess.run(enq, {vs: np.arange(3)}))
    _wait_for_blocked_enqueue(sess, q, producer)
    _run(sess, close)
    assert _run(sess, up5).tolist() == [0, 1, 2]
    assert producer.finish().error is None


def test_random_shuffle_dequeue_up_to_ignores_min_after_dequeue_once_closed():
    g = og.Graph()
    with g.as_default():
        q = og.RandomShuffleQueue(10, 4, [og.int64], [[]], seed=1)
        enq, up9, close = q.enqueue_many([np.arange(3)]), q.dequeue_up_to(9), q.close()
    sess = og.Session(g)
    sess.run(enq)
    sess.run(close)
    assert sorted(_run(sess, up9).tolist()) == [0, 1, 2]


def _shuffled(graph_seed, n=20, **kw):
    g = og.Graph()
    with g.as_default():
        if graph_seed is not None:
            og.set_random_seed(graph_seed)
        q = og.RandomShuffleQueue(n, 0, [og.int64], [[]], **kw)
        enq, deq = q.enqueue_many([np.arange(n)]), q.dequeue_many(n)
    sess = og.Session(g)
    sess.run(enq)
    return _run(sess, deq).tolist()


def test_random_shuffle_queue_follows_the_graph_seed():
    a, b = _shuffled(5), _shuffled(5)
    assert a == b and sorted(a) == list(range(20))
    assert _shuffled(6) != a
    # an op-level seed still wins; no seed at all stays fresh entropy
    assert _shuffled(5, seed=3) == _shuffled(None, seed=3)
    assert _shuffled(None) != _shuffled(None)


def test_weights_drawn_without_a_graph_seed_leave_the_queue_unseeded():
    # TF1: only set_random_seed makes a graph seeded (graph.seed); drawing initial
    # weights first must not make the queue's order fixed
    g = og.Graph()
    with g.as_default():
        og.nn.glorot_uniform((3, 3), 3, 3)
        q = og.RandomShuffleQueue(4, 0, [og.float32], [[3]])
        assert g.seed is None
        og.set_random_seed(7)
        assert g.seed == 7
    assert q.handle.op._node.attributes["seed"] == -1


def test_two_queues_under_one_graph_seed_shuffle_differently():
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(5)
        qs = [og.RandomShuffleQueue(20, 0, [og.int64], [[]]) for _ in range(2)]
        ops = [(q.enqueue_many([np.arange(20)]), q.dequeue_many(20)) for q in qs]
    sess = og.Session(g)
    orders = []
    for enq, deq in ops:
        sess.run(enq)
        orders.append(_run(sess, deq).tolist())
    assert orders[0] != orders[1]


def test_a_seeded_queue_does_not_shift_the_initializer_stream():
    def weights(with_queue):
        g = og.Graph()
        with g.as_default():
            og.set_random_seed(0)
            if with_queue:
                og.RandomShuffleQueue(4, 0, [og.float32], [[3]])
            return og.nn.glorot_uniform((3, 3), 3, 3)
    np.testing.assert_array_equal(weights(True), weights(False))


def test_queues_with_one_shared_name_share_their_elements():
    g = og.Graph()
    with g.as_default():
        a = og.FIFOQueue(4, [og.float32], shapes=[[2]], shared_name="shared")
        b = og.FIFOQueue(4, [og.float32], shapes=[[2]], shared_name="shared")
        put = a.enqueue([og.constant(np.array([1.0, 2.0], np.float32))])
        take = b.dequeue()
    sess = og.Session(g)
    sess.run(put)
    np.testing.assert_array_equal(sess.run(take), [1.0, 2.0])


@pytest.mark.parametrize("other,what", [
    (dict(capacity=5, dtypes=[og.float32], shapes=[[2]]), "capacity 4"),
    (dict(capacity=4, dtypes=[og.int32], shapes=[[2]]), "dtypes ['float32']"),
    (dict(capacity=4, dtypes=[og.float32], shapes=[[3]]), "shapes [[2]]"),
    (dict(capacity=4, dtypes=[og.float32, og.float32], shapes=[[2], [2]]), "components 1"),
])
def test_shared_name_asking_for_another_queue_is_refused(other, what):
    """TF1: "Shared queue ... has ... but requested ..."; never a silent mix."""
    g = og.Graph()
    with g.as_default():
        a = og.FIFOQueue(4, [og.float32], shapes=[[2]], shared_name="shared")
        b = og.FIFOQueue(other["capacity"], other["dtypes"], shapes=other["shapes"],
                         shared_name="shared")
        put = a.enqueue([og.constant(np.zeros(2, np.float32))])
        size = b.size()
    sess = og.Session(g)
    sess.run(put)
    with pytest.raises(og.OneGraphError, match=f"shared queue 'shared' has {re.escape(what)}"):
        sess.run(size)


def test_dequeue_many_of_elements_that_cannot_be_stacked_takes_nothing():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(5, [og.float32])  # shapes not declared
        x = og.placeholder(og.float32, None, name="x")
        enq, deq2, size = q.enqueue([x]), q.dequeue_many(2), q.size()
    sess = og.Session(g)
    sess.run(enq, {x: np.ones(2, np.float32)})
    sess.run(enq, {x: np.zeros(3, np.float32)})
    with pytest.raises(ShapeError, match=r"component 0 has elements of different shapes"):
        sess.run(deq2)
    assert sess.run(size) == 2
    np.testing.assert_array_equal(sess.run(q.dequeue()), np.ones(2))  # order kept


def test_interrupted_dequeue_many_puts_back_what_it_took():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(5, [og.int64], shapes=[[]])
        xs = og.placeholder(og.int64, [None], name="xs")
        enq, deq3, size = q.enqueue_many([xs]), q.dequeue_many(3), q.size()
    sess = og.Session(g)
    sess.run(enq, {xs: np.array([10, 20])})
    # Ctrl-C while it waits (a real signal: it wakes the blocked wait, as a user's does),
    # sent to the main thread itself. Python's own SIGINT handler is installed for the
    # test: a background job of a non-interactive shell (`make test &`) starts with
    # SIGINT ignored, as POSIX has it, and then Python raises no KeyboardInterrupt.
    # Should the interrupt still be lost, the watchdog closes the Session, so the test
    # fails instead of hanging.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, signal.pthread_kill,
                            (threading.main_thread().ident, signal.SIGINT))
    watchdog = threading.Timer(30, sess.close)
    timer.start()
    watchdog.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            sess.run(deq3)
    finally:
        timer.cancel()
        watchdog.cancel()
        signal.signal(signal.SIGINT, previous)
    assert sess.run(size) == 2
    sess.run(q.close())
    np.testing.assert_array_equal(sess.run(q.dequeue_up_to(5)), [10, 20])


@pytest.mark.parametrize("capacity,min_after", [(3, 3), (3, 5), (3, -1)])
def test_random_shuffle_queue_min_after_dequeue_must_be_below_capacity(capacity, min_after):
    with og.Graph().as_default():
        with pytest.raises(ValueError, match=r"min_after_dequeue .* must be >= 0 and < "
                                             r"capacity"):
            og.RandomShuffleQueue(capacity, min_after, [og.float32])


@pytest.mark.parametrize("capacity", [0, -1, 2.5, True])
def test_queue_capacity_must_be_a_positive_integer(capacity):
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="capacity must be a positive integer"):
            og.FIFOQueue(capacity, [og.float32])


def test_shuffle_queue_op_with_min_after_dequeue_at_capacity_is_refused_at_run_time():
    # a graph written by another tool can carry the bad attribute: refused, no deadlock
    g = og.Graph()
    with g.as_default():
        q = og.RandomShuffleQueue(3, 1, [og.float32], shapes=[[]])
    next(n for n in g.ir_graph.nodes if n.op_type == "RandomShuffleQueue") \
        .attributes["min_after_dequeue"] = 3
    with pytest.raises(ExecutionError, match="min_after_dequeue 3 must be >= 0 and < "
                                             "capacity 3"):
        og.Session(g).run(q.size())

"""Coordinator and QueueRunner (TF1's tf.train threading helpers): threads stop
together, the first error surfaces from join, the last runner thread closes its queue,
and a stop releases threads blocked on a full queue.

Every test that starts threads joins them and has a timeout, so a hang fails."""

import collections
import threading
import time

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import CancelledError, ExecutionError, OutOfRangeError
from onegraph.train.input_pipeline import limit_epochs
from onegraph.train.queue_runner import (QUEUE_RUNNERS, Coordinator, QueueRunner,
                                         add_queue_runner, start_queue_runners)

GRACE = 10  # seconds a test waits for its threads after a stop


def _wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def _epoch_graph(values, num_epochs, capacity=4, threads=1):
    """A queue a runner fills with `values`, `num_epochs` times, from `threads`
    threads."""
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(capacity, [og.int64], shapes=[[]], name="q")
        enq = q.enqueue_many([limit_epochs(np.asarray(values, np.int64), num_epochs)])
        qr = QueueRunner(q, [enq] * threads)
        add_queue_runner(qr)
        deq = q.dequeue()
        size = q.size()
    return g, qr, deq, size


# -- Coordinator --------------------------------------------------------------------------


def test_request_stop_sets_should_stop_and_wakes_waiters():
    coord = Coordinator()
    assert not coord.should_stop()
    assert coord.wait_for_stop(0.01) is False
    coord.request_stop()
    assert coord.should_stop() and coord.wait_for_stop(0.01) is True
    coord.join([])  # nothing to wait for, nothing reported


@pytest.mark.timeout(60)
def test_thread_exception_is_reraised_by_join_and_later_ones_are_dropped():
    coord = Coordinator()

    def worker(ex):
        with coord.stop_on_exception():
            raise ex

    first = threading.Thread(target=worker, args=(ValueError("first"),))
    first.start()
    first.join(GRACE)
    second = threading.Thread(target=worker, args=(KeyError("second"),))
    second.start()
    with pytest.raises(ValueError, match="first"):
        coord.join([first, second], stop_grace_period_secs=GRACE)
    assert not first.is_alive() and not second.is_alive()
    assert coord.joined


@pytest.mark.timeout(60)
def test_out_of_range_is_a_clean_stop():
    coord = Coordinator()
    t = threading.Thread(target=coord.request_stop, args=(OutOfRangeError("end"),))
    t.start()
    coord.join([t], stop_grace_period_secs=GRACE)  # does not raise
    assert coord.should_stop() and not t.is_alive()


def test_clean_stop_exception_types_are_configurable():
    coord = Coordinator(clean_stop_exception_types=(StopIteration,))
    coord.request_stop(OutOfRangeError("not clean here"))
    with pytest.raises(OutOfRangeError):
        coord.join([])


@pytest.mark.timeout(60)
def test_join_names_threads_alive_after_the_grace_period():
    coord = Coordinator()
    release = threading.Event()
    t = threading.Thread(target=release.wait, args=(GRACE,), name="laggard")
    coord.register_thread(t)
    t.start()
    try:
        coord.request_stop()
        with pytest.raises(RuntimeError, match="laggard"):
            coord.join(stop_grace_period_secs=0.05)
    finally:
        release.set()
        t.join(GRACE)
    assert not t.is_alive()


@pytest.mark.timeout(60)
def test_join_can_ignore_live_threads():
    coord = Coordinator()
    release = threading.Event()
    t = threading.Thread(target=release.wait, args=(GRACE,))
    t.start()
    try:
        coord.request_stop()
        coord.join([t], stop_grace_period_secs=0.05, ignore_live_threads=True)
    finally:
        release.set()
        t.join(GRACE)
    assert not t.is_alive()


def test_an_error_reported_after_join_is_raised_to_the_reporter():
    coord = Coordinator()
    coord.request_stop()
    coord.join([])
    with pytest.raises(ValueError, match="late"):
        coord.request_stop(ValueError("late"))


def test_clear_stop_forgets_the_stop_and_its_error():
    coord = Coordinator()
    coord.request_stop(ValueError("x"))
    coord.clear_stop()
    assert not coord.should_stop()
    coord.raise_requested_exception()  # nothing to raise
    coord.request_stop()
    coord.join([])


@pytest.mark.parametrize("call, error", [
    (lambda: Coordinator(clean_stop_exception_types=[int]), TypeError),
    (lambda: Coordinator(clean_stop_exception_types=5), TypeError),
    (lambda: Coordinator().register_thread("thread"), TypeError),
    (lambda: Coordinator().request_stop("boom"), TypeError),
    (lambda: Coordinator().join([1]), TypeError),
    (lambda: Coordinator().join([], stop_grace_period_secs=-1), ValueError),
    (lambda: Coordinator().join([], stop_grace_period_secs="1"), TypeError),
])
def test_coordinator_rejects_bad_arguments(call, error):
    with pytest.raises(error):
        call()


# -- QueueRunner --------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_last_runner_thread_closes_the_queue_at_the_end_of_input():
    values = list(range(7))
    g, qr, deq, _ = _epoch_graph(values, num_epochs=3, threads=2)
    sess = og.Session(g)
    sess.run(og.local_variables_initializer(g))
    coord = Coordinator()
    threads = start_queue_runners(sess, coord)
    assert len(threads) == 3  # two enqueue threads and the stop watcher
    seen = []
    try:
        while not coord.should_stop():
            seen.append(int(sess.run(deq)))
    except OutOfRangeError:
        pass
    finally:
        coord.request_stop()
    coord.join(threads, stop_grace_period_secs=GRACE)
    assert not any(t.is_alive() for t in threads)
    # each enqueue_many adds a whole epoch, so two threads still make exactly 3 epochs
    assert collections.Counter(seen) == collections.Counter(values * 3)


@pytest.mark.timeout(60)
def test_runner_without_coordinator_ends_on_its_own():
    g, qr, deq, size = _epoch_graph([1, 2], num_epochs=2, capacity=8)
    sess = og.Session(g)
    threads = qr.create_threads(sess, start=True)
    for t in threads:
        t.join(GRACE)
    assert not any(t.is_alive() for t in threads)
    assert sorted(int(sess.run(deq)) for _ in range(4)) == [1, 1, 2, 2]
    with pytest.raises(OutOfRangeError):
        sess.run(deq)  # closed by the runner and drained
    assert qr.exceptions_raised == []


@pytest.mark.timeout(60)
def test_a_failing_enqueue_surfaces_from_coord_join():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(4, [og.int64], shapes=[[]])
        check = og.Assert(og.constant(False), ["the reader broke"])
        with og.control_dependencies([check]):
            enq = q.enqueue(og.constant(np.int64(1)))
        add_queue_runner(QueueRunner(q, [enq]))
        deq = q.dequeue()
    sess = og.Session(g)
    coord = Coordinator()
    threads = start_queue_runners(sess, coord)
    with pytest.raises(ExecutionError, match="the reader broke"):
        try:
            while not coord.should_stop():
                sess.run(deq)  # released by the runner's cancel once it failed
        except OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads, stop_grace_period_secs=GRACE)
    assert not any(t.is_alive() for t in threads)


@pytest.mark.timeout(60)
def test_without_coordinator_errors_are_kept_in_exceptions_raised():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(4, [og.int64], shapes=[[]])
        with og.control_dependencies([og.Assert(og.constant(False), ["broken"])]):
            enq = q.enqueue(og.constant(np.int64(1)))
        qr = QueueRunner(q, [enq])
    threads = qr.create_threads(og.Session(g), start=True)
    for t in threads:
        t.join(GRACE)
    assert not any(t.is_alive() for t in threads)
    assert len(qr.exceptions_raised) == 1
    assert isinstance(qr.exceptions_raised[0], ExecutionError)


@pytest.mark.timeout(60)
def test_request_stop_releases_threads_blocked_on_a_full_queue():
    g, qr, deq, size = _epoch_graph([1, 2, 3], num_epochs=None, capacity=2, threads=2)
    sess = og.Session(g)
    coord = Coordinator()
    threads = start_queue_runners(sess, coord)
    _wait_until(lambda: int(sess.run(size)) == 2)  # full: both enqueues now wait
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=GRACE)  # the cancelled enqueues are no error
    assert not any(t.is_alive() for t in threads)


@pytest.mark.timeout(60)
def test_closing_the_session_releases_runner_threads():
    g, qr, deq, size = _epoch_graph([1, 2, 3], num_epochs=None, capacity=2)
    sess = og.Session(g)
    coord = Coordinator()
    threads = start_queue_runners(sess, coord)
    _wait_until(lambda: int(sess.run(size)) == 2)
    sess.close()
    # as TF1: the enqueue cancelled by the close is the error that stopped the threads
    with pytest.raises(CancelledError):
        coord.join(threads, stop_grace_period_secs=GRACE)
    assert not any(t.is_alive() for t in threads)


@pytest.mark.timeout(60)
def test_create_threads_is_a_no_op_while_the_runner_runs_in_that_session():
    g, qr, deq, size = _epoch_graph([1], num_epochs=None, capacity=1)
    sess = og.Session(g)
    coord = Coordinator()
    threads = qr.create_threads(sess, coord, start=True)
    try:
        assert qr.create_threads(sess, coord) == []
    finally:
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=GRACE)
    assert not any(t.is_alive() for t in threads)


@pytest.mark.timeout(60)
def test_start_queue_runners_uses_the_default_session_and_the_given_collection():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(4, [og.int64], shapes=[[]])
        enq = q.enqueue_many([limit_epochs(np.arange(3, dtype=np.int64), 1)])
        add_queue_runner(QueueRunner(q, [enq]), collection="mine")
        deq = q.dequeue_many(3)
    sess = og.Session(g)
    with sess.as_default():
        assert start_queue_runners() == []  # QUEUE_RUNNERS is empty
        coord = Coordinator()
        threads = start_queue_runners(coord=coord, collection="mine")
    try:
        assert sorted(sess.run(deq).tolist()) == [0, 1, 2]
    finally:
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=GRACE)
    assert g.get_collection(QUEUE_RUNNERS) == []


def test_start_queue_runners_rejects_bad_arguments():
    g = og.Graph()
    with g.as_default():
        g.add_to_collection("junk", "not a runner")
    sess = og.Session(g)
    with pytest.raises(ValueError, match="no default session"):
        start_queue_runners()
    with pytest.raises(TypeError, match="og.Session"):
        start_queue_runners("sess")
    with pytest.raises(TypeError, match="Coordinator"):
        start_queue_runners(sess, coord="coord")
    with pytest.raises(TypeError, match="QueueRunner"):
        start_queue_runners(sess, collection="junk")


def test_queue_runner_rejects_bad_arguments():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(4, [og.int64], shapes=[[]])
        enq = q.enqueue(np.int64(1))
    other = og.Graph()
    with other.as_default():
        q2 = og.FIFOQueue(4, [og.int64], shapes=[[]])
        foreign = q2.enqueue(np.int64(1))
    with pytest.raises(ValueError, match="queue and enqueue_ops"):
        QueueRunner(q, [])
    with pytest.raises(ValueError, match="queue and enqueue_ops"):
        QueueRunner(None, [enq])
    with pytest.raises(TypeError, match="FIFOQueue"):
        QueueRunner("q", [enq])
    with pytest.raises(TypeError, match="list of ops"):
        QueueRunner(q, enq)
    with pytest.raises(TypeError, match="enqueue_ops"):
        QueueRunner(q, ["enqueue"])
    with pytest.raises(ValueError, match="another graph"):
        QueueRunner(q, [foreign])
    with pytest.raises(TypeError, match="queue_closed_exception_types"):
        QueueRunner(q, [enq], queue_closed_exception_types=[OutOfRangeError])
    with pytest.raises(TypeError, match="queue_closed_exception_types"):
        QueueRunner(q, [enq], queue_closed_exception_types=(ValueError,))
    with pytest.raises(TypeError, match="QueueRunner"):
        add_queue_runner("qr")
    with pytest.raises(TypeError, match="og.Session"):
        QueueRunner(q, [enq]).create_threads("sess")

"""Threads that keep queues filled: TF1's `Coordinator`, `QueueRunner`,
`add_queue_runner` and `start_queue_runners` (tf.compat.v1.train).

A `QueueRunner` holds a queue and the ops that enqueue into it; `create_threads` runs
each enqueue op in a loop on its own thread, all in one Session. When an enqueue op
raises OutOfRangeError (its input has ended: an epoch limit, or an upstream queue
closed and drained), that thread stops; when the runner's last thread has stopped,
the runner closes its queue, so consumers drain it and then see OutOfRangeError
themselves: the end of input travels down a pipeline of queues. A `Coordinator`
lets the training loop and the runner threads stop together and carries the first
error a thread reported to `Coordinator.join`::

    coord = og.train.Coordinator()
    threads = og.train.start_queue_runners(sess, coord)
    try:
        while not coord.should_stop():
            sess.run(train_op)
    except og.OutOfRangeError:
        pass                      # the input is exhausted
    finally:
        coord.request_stop()      # closes the queues, releasing blocked threads
    coord.join(threads)           # re-raises the first error a thread reported
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
import threading
import time
import weakref
from typing import Iterable

from ..errors import OneGraphError, OutOfRangeError
from . import graph as _g
from .graph import Operation, Tensor
from .queues import FIFOQueue
from .session import Session, get_default_session

QUEUE_RUNNERS = _g.QUEUE_RUNNERS

_log = logging.getLogger(__name__)


# -- Coordinator ------------------------------------------------------------------------


def _exception_types(types, what: str) -> tuple:
    """`types` as a tuple of exception classes.

    Raises:
        TypeError: it is not an iterable of BaseException subclasses (names `what`).
    """
    if isinstance(types, type):
        types = (types,)
    try:
        out = tuple(types)
    except TypeError:
        raise TypeError(f"{what} must be a tuple of exception types, got "
                        f"{type(types).__name__} {types!r:.60}") from None
    bad = [t for t in out if not (isinstance(t, type) and issubclass(t, BaseException))]
    if bad:
        raise TypeError(f"{what} must be a tuple of exception types, got {bad[0]!r:.60} "
                        "in it")
    return out


class Coordinator:
    """Lets a set of threads stop together and report the first error (TF1's
    tf.train.Coordinator).

    Threads loop `while not coord.should_stop(): ...` and report failures with
    `coord.request_stop(e)` (or run inside `with coord.stop_on_exception():`); the
    main thread calls `coord.join(threads)`, which waits for them and re-raises the
    first reported error.

    Args:
        clean_stop_exception_types: exception types that request a stop without
            being an error (reported as if `request_stop()` had no exception).
            Default: (og.OutOfRangeError,), the end of an input pipeline.

    Raises:
        TypeError: clean_stop_exception_types is not a tuple of exception types.
    """

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (OutOfRangeError,)
        self._clean_stop_exception_types = _exception_types(
            clean_stop_exception_types, "Coordinator: clean_stop_exception_types")
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exception: BaseException | None = None
        self._joined = False
        self._registered_threads: set[threading.Thread] = set()

    def _exception_of(self, ex) -> BaseException | None:
        """The exception `ex` (an exception or an exc_info tuple) stands for, or None
        for no exception or a clean-stop one.

        Raises:
            TypeError: ex is neither.
        """
        if isinstance(ex, tuple):
            if len(ex) != 3:
                raise TypeError("request_stop: ex must be an exception or a "
                                f"sys.exc_info() tuple, got a tuple of {len(ex)}")
            ex = ex[1]
        if ex is not None and not isinstance(ex, BaseException):
            raise TypeError(f"request_stop: ex must be an exception or a sys.exc_info() "
                            f"tuple, got {type(ex).__name__} {ex!r:.60}")
        if isinstance(ex, self._clean_stop_exception_types):
            return None
        return ex

    def request_stop(self, ex=None) -> None:
        """Ask every coordinated thread to stop; `should_stop()` is True from now on.

        Only the exception of the first call that requests the stop is kept (and
        re-raised by `join`): errors threads report while stopping (a cancelled
        enqueue, say) are their reaction to the stop, not its cause.

        Args:
            ex: None, an exception, or a `sys.exc_info()` tuple. One of the
                clean-stop types counts as None.

        Raises:
            TypeError: ex is none of these.
            The exception `ex` itself, when `join()` has already returned: nobody
            would see it otherwise (as TF1).
        """
        ex = self._exception_of(ex)
        with self._lock:
            if self._joined and ex is not None:
                raise ex
            if not self._stop_event.is_set():
                if ex is not None and self._exception is None:
                    _log.info("Error reported to Coordinator: %s: %s",
                              type(ex).__name__, ex)
                    self._exception = ex
                self._stop_event.set()

    def clear_stop(self) -> None:
        """Forget a stop request and its exception, so threads can run again. Never
        raises."""
        with self._lock:
            self._joined = False
            self._exception = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        """Whether a stop was requested. Never raises."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context manager that reports an exception leaving its block with
        `request_stop(ex)` and swallows it (the thread then ends normally; `join`
        re-raises it). Never raises."""
        try:
            yield
        except BaseException:  # noqa: BLE001 - TF1 reports even KeyboardInterrupt
            self.request_stop(sys.exc_info())

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Block until a stop is requested or `timeout` seconds pass; whether a stop
        was requested. Never raises."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        """Add `thread` to those `join()` waits for.

        Raises:
            TypeError: thread is not a threading.Thread.
        """
        if not isinstance(thread, threading.Thread):
            raise TypeError(f"register_thread: expected a threading.Thread, got "
                            f"{type(thread).__name__}")
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads: Iterable[threading.Thread] | None = None,
             stop_grace_period_secs: float = 120, ignore_live_threads: bool = False
             ) -> None:
        """Wait for the registered threads and `threads` to end.

        Waits until they have all ended or a stop is requested; after a stop, gives
        them `stop_grace_period_secs` more seconds to end.

        Raises:
            TypeError: threads holds something that is not a threading.Thread, or
                stop_grace_period_secs is not a number.
            ValueError: stop_grace_period_secs is negative or NaN.
            The first non-clean exception reported to `request_stop`, if any.
            RuntimeError: otherwise, threads still alive after the grace period
                (unless ignore_live_threads), naming them.
        """
        if isinstance(stop_grace_period_secs, bool) or not isinstance(
                stop_grace_period_secs, (int, float)):
            raise TypeError(f"Coordinator.join: stop_grace_period_secs must be a number, "
                            f"got {type(stop_grace_period_secs).__name__}")
        if math.isnan(stop_grace_period_secs) or stop_grace_period_secs < 0:
            raise ValueError(f"Coordinator.join: stop_grace_period_secs must be >= 0, got "
                             f"{stop_grace_period_secs}")
        given = list(threads) if threads is not None else []
        bad = [t for t in given if not isinstance(t, threading.Thread)]
        if bad:
            raise TypeError(f"Coordinator.join: threads must be threading.Thread objects, "
                            f"got {type(bad[0]).__name__}")
        with self._lock:
            waiting = list(self._registered_threads.union(given))
        # short waits, so that threads ending on their own (no stop requested) are
        # noticed promptly
        while any(t.is_alive() for t in waiting) and not self.wait_for_stop(0.05):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in waiting:
            if t.is_alive():
                t.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in waiting if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exception is not None:
                raise self._exception
        if stragglers:
            if ignore_live_threads:
                _log.info("Coordinator stopped with threads still running: %s",
                          " ".join(stragglers))
            else:
                raise RuntimeError("Coordinator stopped with threads still running: "
                                   + " ".join(stragglers))

    @property
    def joined(self) -> bool:
        """Whether `join()` has returned (or raised) since the last `clear_stop()`."""
        return self._joined

    def raise_requested_exception(self) -> None:
        """Raise the exception reported to `request_stop`, if any.

        Raises:
            That exception.
        """
        with self._lock:
            if self._exception is not None:
                raise self._exception


# -- QueueRunner ------------------------------------------------------------------------


class QueueRunner:
    """The enqueue ops of one queue, each to run in a loop on a thread of its own
    (TF1's tf.train.QueueRunner).

    Args:
        queue: the og.FIFOQueue or og.RandomShuffleQueue the ops fill.
        enqueue_ops: the ops, one thread each (the same op may be listed several
            times, for several threads).
        close_op: op run when the last thread ends because its input ended;
            default `queue.close()` (queued and pending elements stay for dequeue).
        cancel_op: op run when the coordinator requests a stop; default
            `queue.close(cancel_pending_enqueues=True)`, which also ends enqueues
            blocked on a full queue.
        queue_closed_exception_types: exception types that mean "the input has
            ended" when an enqueue op raises them. Default (og.OutOfRangeError,).
            (An enqueue into a queue that is already closed raises
            og.ExecutionError here, where TF1 raises CancelledError.)

    Raises:
        ValueError: queue or enqueue_ops is missing or empty, or an op belongs to
            another graph than the queue.
        TypeError: queue is not an og queue, an enqueue/close/cancel op is not an
            og.Operation (or tensor), or queue_closed_exception_types is not a
            non-empty tuple of og error types.
    """

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None):
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner: must provide queue and enqueue_ops")
        if not isinstance(queue, FIFOQueue):
            raise TypeError(f"QueueRunner: queue must be an og.FIFOQueue or "
                            f"og.RandomShuffleQueue, got {type(queue).__name__}")
        if isinstance(enqueue_ops, (Operation, Tensor)) or not isinstance(
                enqueue_ops, (list, tuple)):
            raise TypeError(f"QueueRunner: enqueue_ops must be a list of ops, got "
                            f"{type(enqueue_ops).__name__}")
        for what, op in ([("enqueue_ops", op) for op in enqueue_ops]
                         + [("close_op", close_op), ("cancel_op", cancel_op)]):
            if op is None and what != "enqueue_ops":
                continue
            if not isinstance(op, (Operation, Tensor)):
                raise TypeError(f"QueueRunner: {what} must hold og ops, got "
                                f"{type(op).__name__} {op!r:.60}")
            if op.graph is not queue.graph:
                raise ValueError(f"QueueRunner: {what} entry {op.name!r} belongs to another "
                                 f"graph than queue {queue.name!r}")
        if queue_closed_exception_types is not None:
            if not isinstance(queue_closed_exception_types, tuple) \
                    or not queue_closed_exception_types or not all(
                        isinstance(t, type) and issubclass(t, OneGraphError)
                        for t in queue_closed_exception_types):
                raise TypeError("QueueRunner: queue_closed_exception_types, when given, "
                                "must be a non-empty tuple of og error types (subclasses "
                                f"of onegraph.errors.OneGraphError), got "
                                f"{queue_closed_exception_types!r:.80}")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(
            cancel_pending_enqueues=True)
        self._queue_closed_exception_types = (queue_closed_exception_types
                                              or (OutOfRangeError,))
        self._lock = threading.Lock()
        # Session -> enqueue threads of this runner still running in it
        self._runs_per_session: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._exceptions_raised: list[BaseException] = []

    @property
    def queue(self) -> FIFOQueue:
        """The queue the enqueue ops fill."""
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        """The enqueue ops, one thread each."""
        return list(self._enqueue_ops)

    @property
    def close_op(self):
        """The op closing the queue once the input has ended."""
        return self._close_op

    @property
    def cancel_op(self):
        """The op closing the queue and cancelling pending enqueues on a stop."""
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple:
        """Exception types that end an enqueue thread as "input ended"."""
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list[BaseException]:
        """Errors of threads created without a Coordinator (with one, they go to it
        instead). Emptied by `create_threads`."""
        return list(self._exceptions_raised)

    @property
    def name(self) -> str:
        """The queue's name."""
        return self._queue.name

    def _run(self, sess: Session, enqueue_op, coord: Coordinator | None) -> None:
        """Run `enqueue_op` until a stop, the end of its input, or an error; the last
        thread to see the end of its input closes the queue."""
        decremented = False
        try:
            enqueue = sess.make_callable(enqueue_op)
            while not (coord is not None and coord.should_stop()):
                try:
                    enqueue()
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as e:  # noqa: BLE001 - e.g. a closed Session
                                _log.debug("QueueRunner %s: ignored error closing the "
                                           "queue: %s", self.name, e)
                    return
        except Exception as e:  # noqa: BLE001 - reported, as TF1 does
            if coord is not None:
                coord.request_stop(e)
            else:
                _log.error("Exception in QueueRunner %s: %s: %s", self.name,
                           type(e).__name__, e)
                with self._lock:
                    self._exceptions_raised.append(e)
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess: Session, coord: Coordinator) -> None:
        """Wait for the coordinator's stop, then cancel the queue (releasing threads
        blocked on it)."""
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception as e:  # noqa: BLE001 - the Session may be closed already
            _log.debug("QueueRunner %s: ignored error cancelling the queue: %s",
                       self.name, e)

    def create_threads(self, sess: Session, coord: Coordinator | None = None,
                       daemon: bool = False, start: bool = False
                       ) -> list[threading.Thread]:
        """One thread per enqueue op running it in `sess`, plus (with `coord`) one
        that cancels the queue when a stop is requested; all registered with `coord`.

        Returns [] when this runner's threads for `sess` are still running.

        Raises:
            TypeError: sess is not an og.Session, or coord is not a Coordinator.
        """
        if not isinstance(sess, Session):
            raise TypeError(f"QueueRunner.create_threads: sess must be an og.Session, got "
                            f"{type(sess).__name__}")
        if coord is not None and not isinstance(coord, Coordinator):
            raise TypeError(f"QueueRunner.create_threads: coord must be a Coordinator or "
                            f"None, got {type(coord).__name__}")
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name=f"QueueRunnerThread-{self.name}-{op.name}")
                   for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(
                target=self._close_on_stop, args=(sess, coord),
                name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            t.daemon = bool(daemon)
            if start:
                t.start()
        return threads


# -- the QUEUE_RUNNERS collection -------------------------------------------------------


def add_queue_runner(qr: QueueRunner, collection: str = QUEUE_RUNNERS) -> None:
    """Add `qr` to a collection (default og.GraphKeys.QUEUE_RUNNERS) of its queue's
    graph, for `start_queue_runners`.

    Raises:
        TypeError: qr is not a QueueRunner, or collection is not hashable.
    """
    if not isinstance(qr, QueueRunner):
        raise TypeError(f"add_queue_runner: expected a QueueRunner, got "
                        f"{type(qr).__name__}")
    qr.queue.graph.add_to_collection(collection, qr)


def _builder_graph(sess: Session):
    """The og.Graph `sess` runs, or None (a Session of a loaded Model or IR graph,
    which has no collections)."""
    source = getattr(sess, "_source", None)
    if isinstance(source, _g.Graph) and source.ir_graph is sess.ir_graph:
        return source
    default = _g.get_default_graph()
    return default if default.ir_graph is sess.ir_graph else None


def start_queue_runners(sess: Session | None = None, coord: Coordinator | None = None,
                        daemon: bool = True, start: bool = True,
                        collection: str = QUEUE_RUNNERS) -> list[threading.Thread]:
    """Create (and by default start) the threads of every QueueRunner in the
    session graph's `collection`; the list of threads.

    Args:
        sess: the Session (default: the default session).
        coord: a Coordinator the threads report to and stop with.
        daemon: make the threads daemons (they do not keep Python alive).
        start: start the threads.
        collection: the collection holding the runners.

    Raises:
        ValueError: no sess is given and there is no default session.
        TypeError: sess is not an og.Session, coord is not a Coordinator, or an
            entry of the collection is not a QueueRunner.
    """
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("start_queue_runners: no session given and no default "
                             "session; pass sess or run inside `with sess.as_default():`")
    if not isinstance(sess, Session):
        raise TypeError(f"start_queue_runners: sess must be an og.Session, got "
                        f"{type(sess).__name__}")
    if coord is not None and not isinstance(coord, Coordinator):
        raise TypeError(f"start_queue_runners: coord must be a Coordinator or None, got "
                        f"{type(coord).__name__}")
    graph = _builder_graph(sess)
    runners = graph.get_collection(collection) if graph is not None else []
    bad = [r for r in runners if not isinstance(r, QueueRunner)]
    if bad:
        raise TypeError(f"start_queue_runners: collection {collection!r} holds a "
                        f"{type(bad[0]).__name__}, not a QueueRunner")
    if not runners:
        _log.warning("start_queue_runners: collection %r is empty: no threads started",
                     collection)
    threads: list[threading.Thread] = []
    for qr in runners:
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


__all__ = ["Coordinator", "QueueRunner", "add_queue_runner", "start_queue_runners"]

"""Operators: queues (the `onegraph` domain): bounded, blocking, shared across steps.

A queue op (FIFOQueue, RandomShuffleQueue) yields a handle to a queue that lives in the
executor's per-session state (keyed by `shared_name`), so every step of a Session sees
the same queue. Enqueue blocks while the queue is full (backpressure), Dequeue while it
is empty; after Close, enqueues fail and dequeues drain what is left, then raise
`OutOfRangeError` (the end of an input pipeline).
"""

from __future__ import annotations

import collections
import threading

import numpy as np

from ..errors import ExecutionError, OutOfRangeError
from .registry import TensorInfo, define

DOMAIN = "onegraph"
_CREATE_LOCK = threading.Lock()


class Queue:
    """A bounded queue of tuples of arrays (thread-safe, blocking).

    Args:
        name: shared name (for messages).
        capacity: maximum number of elements.
        num_components: arrays per element.
        shuffle_rng: if given, dequeue a uniformly random element (RandomShuffleQueue).
        min_after_dequeue: a shuffling dequeue waits until more than this many
            elements are queued (unless the queue is closed).
    """

    def __init__(self, name: str, capacity: int, num_components: int, shuffle_rng=None,
                 min_after_dequeue: int = 0):
        if capacity <= 0:
            raise ExecutionError(f"queue {name!r}: capacity must be positive")
        self.name, self.capacity, self.num_components = name, capacity, num_components
        self.items: collections.deque = collections.deque()
        self.closed = False
        self.cond = threading.Condition()
        self.rng = shuffle_rng
        self.min_after_dequeue = min_after_dequeue

    def size(self) -> int:
        with self.cond:
            return len(self.items)

    def enqueue_many(self, elements: list[tuple]) -> None:
        """Append elements one by one, blocking while full."""
        with self.cond:
            for el in elements:
                while len(self.items) >= self.capacity and not self.closed:
                    self.cond.wait()
                if self.closed:
                    raise ExecutionError(f"queue {self.name!r} is closed")
                self.items.append(el)
                self.cond.notify_all()

    def dequeue_many(self, n: int) -> list[tuple]:
        """Remove n elements, blocking until available.

        Raises:
            OutOfRangeError: the queue is closed and has fewer than n elements left.
        """
        out = []
        with self.cond:
            while len(out) < n:
                while not self._ready() and not self.closed:
                    self.cond.wait()
                if not self.items:
                    # put back what we took so no element is lost, then report the end
                    self.items.extendleft(reversed(out))
                    self.cond.notify_all()
                    raise OutOfRangeError(f"queue {self.name!r} is closed and has "
                                          f"{len(self.items)} element(s), {n} requested")
                if self.rng is not None:
                    k = int(self.rng.integers(len(self.items)))
                    self.items.rotate(-k)
                    out.append(self.items.popleft())
                    self.items.rotate(k)
                else:
                    out.append(self.items.popleft())
                self.cond.notify_all()
        return out

    def _ready(self) -> bool:
        return len(self.items) > (self.min_after_dequeue if self.rng is not None else 0)

    def close(self) -> None:
        """No more enqueues; waiting dequeuers drain the rest and then see the end."""
        with self.cond:
            self.closed = True
            self.cond.notify_all()


def _queue_kernel(shuffle):
    def kernel(inputs, attrs, ctx):
        """The session's queue named attrs['shared_name'] (created on first use)."""
        state = ctx.state
        key = ("queue", attrs["shared_name"])
        q = state.get(key)
        if q is None:
            with _CREATE_LOCK:
                q = state.get(key)
                if q is None:
                    rng = None
                    if shuffle:
                        seed = attrs["seed"]
                        rng = np.random.default_rng(None if seed < 0 else seed)
                    q = Queue(attrs["shared_name"], attrs["capacity"],
                              attrs["num_components"], rng, attrs["min_after_dequeue"])
                    state[key] = q
        return (q,)
    return kernel


def _q(x) -> Queue:
    if not isinstance(x, Queue):
        raise ExecutionError(f"expected a queue handle, got {type(x).__name__}")
    return x


def _enqueue(inputs, attrs, ctx):
    """Add one element (the component inputs)."""
    q = _q(inputs[0])
    comps = tuple(np.array(c) for c in inputs[1:])
    _check_components(q, comps)
    q.enqueue_many([comps])
    return ()


def _enqueue_many(inputs, attrs, ctx):
    """Add one element per row of the components (split along axis 0)."""
    q = _q(inputs[0])
    comps = [np.asarray(c) for c in inputs[1:]]
    _check_components(q, comps)
    n = {c.shape[0] for c in comps}
    if len(n) != 1:
        raise ExecutionError(f"EnqueueMany on {q.name!r}: components differ in length {n}")
    q.enqueue_many([tuple(np.array(c[i]) for c in comps) for i in range(n.pop())])
    return ()


def _check_components(q, comps):
    if len(comps) != q.num_components:
        raise ExecutionError(f"queue {q.name!r} holds {q.num_components} components, got "
                             f"{len(comps)}")


def _dequeue(inputs, attrs, ctx):
    """Remove one element; its components are the outputs."""
    (el,) = _q(inputs[0]).dequeue_many(1)
    return el


def _dequeue_many(inputs, attrs, ctx):
    """Remove n elements (input 1) and stack each component along a new axis 0."""
    q = _q(inputs[0])
    n = int(np.asarray(inputs[1]))
    els = q.dequeue_many(n)
    return tuple(np.stack([e[k] for e in els]) for k in range(q.num_components))


def _close(inputs, attrs, ctx):
    _q(inputs[0]).close()
    return ()


def _size(inputs, attrs, ctx):
    return (np.asarray(_q(inputs[0]).size(), np.int64),)


def _infer_handle(attrs, inputs):
    return [TensorInfo(None, None)]


def _infer_components(attrs, inputs):
    return [TensorInfo(None, None)] * int(attrs.get("num_components", 1))


_QUEUE_ATTRS = (("capacity", "int"), ("num_components", "int", 1),
                ("shared_name", "string"), ("min_after_dequeue", "int", 0),
                ("seed", "int", -1))
_STATEFUL = dict(domain=DOMAIN, stateful=True)

OPS = tuple(sorted((
    define("FIFOQueue", [], ["handle"], _queue_kernel(False), _QUEUE_ATTRS,
           infer=_infer_handle, doc="a bounded first-in first-out queue", **_STATEFUL),
    define("RandomShuffleQueue", [], ["handle"], _queue_kernel(True), _QUEUE_ATTRS,
           infer=_infer_handle, doc="a bounded queue dequeuing random elements", **_STATEFUL),
    define("QueueEnqueue", ["handle", "components*"], [], _enqueue,
           infer=lambda a, i: [], doc="enqueue one element (blocks while full)", **_STATEFUL),
    define("QueueEnqueueMany", ["handle", "components*"], [], _enqueue_many,
           infer=lambda a, i: [], doc="enqueue rows as elements", **_STATEFUL),
    define("QueueDequeue", ["handle"], ["components*"], _dequeue,
           [("num_components", "int", 1)], infer=_infer_components,
           doc="dequeue one element (blocks while empty)", **_STATEFUL),
    define("QueueDequeueMany", ["handle", "n"], ["components*"], _dequeue_many,
           [("num_components", "int", 1)], infer=_infer_components,
           doc="dequeue n elements, stacked", **_STATEFUL),
    define("QueueClose", ["handle"], [], _close, infer=lambda a, i: [],
           doc="close the queue", **_STATEFUL),
    define("QueueSize", ["handle"], ["size"], _size,
           infer=lambda a, i: [TensorInfo(np.dtype(np.int64), ())],
           doc="number of queued elements", **_STATEFUL),
), key=lambda op: op.name))

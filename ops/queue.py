"""Operators: queues (the `onegraph` domain): bounded, blocking, shared across steps.

A queue op (FIFOQueue, RandomShuffleQueue, PaddingFIFOQueue, PriorityQueue) yields
a handle to a queue that lives in the
executor's per-session state (keyed by `shared_name`), so every step of a Session sees
the same queue. Enqueue blocks while the queue is full (backpressure), Dequeue while it
is empty. Close works as TF1's QueueClose: new enqueues fail, enqueues already blocked
on a full queue still complete once there is room (unless the close was made with
`cancel_pending_enqueues`, which cancels them), and dequeues drain what is left, then
raise `OutOfRangeError` (the end of an input pipeline).

The queue op's `component_types` / `component_ranks` / `component_dims` attributes
declare each component's dtype and per-element shape; enqueues are checked against
them (a `ShapeError` names the queue and the component) and `DequeueMany(0)` builds
its empty result from them.

A PaddingFIFOQueue's batch pads each component to the largest shape among its elements
(zeros, "" for strings). A PriorityQueue's first component is an int64 scalar priority:
it dequeues the smallest first, equal priorities in insertion order; as TF's, its
DequeueUpTo does not return a short batch after close, and the elements a failing
DequeueMany / DequeueUpTo took are not put back.
"""

from __future__ import annotations

import bisect
import collections
import itertools
import threading

import numpy as np

from ..errors import CancelledError, ExecutionError, OutOfRangeError, ShapeError
from ..format import DType
from .registry import TensorInfo, define

DOMAIN = "onegraph"
_CREATE_LOCK = threading.Lock()


def format_shape(shape) -> str:
    """A shape as TF prints it: "[2, 3]", "?" for an unknown dim, "<unknown>" rank."""
    if shape is None:
        return "<unknown>"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def encode_shapes(shapes) -> tuple[list[int], list[int]]:
    """Per-component shapes (tuple with None dims, or None) -> (ranks, dims) attributes.

    `ranks[k]` is component k's rank (-1: unknown); `dims` concatenates the dims of the
    components of known rank (-1: unknown dim).
    """
    ranks, dims = [], []
    for s in shapes:
        if s is None:
            ranks.append(-1)
            continue
        ranks.append(len(s))
        dims.extend(-1 if d is None else int(d) for d in s)
    return ranks, dims


def decode_shapes(ranks, dims) -> list[tuple | None]:
    """The inverse of `encode_shapes`.

    Raises:
        ExecutionError: the dims do not add up to the ranks.
    """
    shapes, pos = [], 0
    for r in ranks:
        r = int(r)
        if r < 0:
            shapes.append(None)
            continue
        shapes.append(tuple(None if int(d) < 0 else int(d) for d in dims[pos:pos + r]))
        pos += r
    if pos != len(dims):
        raise ExecutionError(f"queue attributes: component_dims has {len(dims)} entries, "
                             f"component_ranks {list(ranks)} need {pos}")
    return shapes


def _compatible(declared, shape) -> bool:
    return declared is None or (len(declared) == len(shape) and all(
        d is None or d == s for d, s in zip(declared, shape)))


class Queue:
    """A bounded queue of tuples of arrays (thread-safe, blocking).

    Args:
        name: shared name (for messages).
        capacity: maximum number of elements.
        num_components: arrays per element.
        shuffle_rng: if given, dequeue a uniformly random element (RandomShuffleQueue).
        min_after_dequeue: a shuffling dequeue waits until more than this many
            elements are queued (unless the queue is closed).
        dtypes: numpy dtype of each component (None entries or no list: unchecked).
        shapes: per-element shape of each component (tuples with None for unknown
            dims, None for an unknown shape; no list: unchecked).

    Raises:
        ExecutionError: capacity is not positive, or dtypes/shapes do not have one
            entry per component.
    """

    kind = "FIFOQueue"  # TF's name of the queue class, in messages

    def __init__(self, name: str, capacity: int, num_components: int, shuffle_rng=None,
                 min_after_dequeue: int = 0, dtypes=None, shapes=None):
        if capacity <= 0:
            raise ExecutionError(f"queue {name!r}: capacity must be positive")
        if shuffle_rng is not None and not 0 <= min_after_dequeue < capacity:
            # a full queue would hold no more than min_after_dequeue: no dequeue ever runs
            raise ExecutionError(f"queue {name!r}: min_after_dequeue {min_after_dequeue} "
                                 f"must be >= 0 and < capacity {capacity}")
        self.name, self.capacity, self.num_components = name, capacity, num_components
        self.dtypes = list(dtypes) if dtypes else [None] * num_components
        self.shapes = list(shapes) if shapes else [None] * num_components
        if len(self.dtypes) != num_components or len(self.shapes) != num_components:
            raise ExecutionError(f"queue {name!r}: {num_components} components but "
                                 f"{len(self.dtypes)} dtypes and {len(self.shapes)} shapes")
        self.items: collections.deque = collections.deque()
        self.closed = False
        self.cancelled = False       # closed with cancel_pending_enqueues
        self.abandoned = None        # why every waiting and later op fails (Session closed)
        self.pending_enqueues = 0    # enqueue calls in progress (they may be waiting)
        self.cond = threading.Condition()
        self.rng = shuffle_rng
        self.min_after_dequeue = min_after_dequeue
        if shuffle_rng is not None:
            self.kind = "RandomShuffleQueue"

    def size(self) -> int:
        with self.cond:
            return len(self.items)

    def check(self, comps, batched: bool, op: str) -> None:
        """Check components against the declared dtypes and shapes.

        Args:
            comps: one array per component.
            batched: the arrays hold one element per row (EnqueueMany).
            op: the operation, for messages.

        Raises:
            ExecutionError: the wrong number of components.
            ShapeError: a dtype or shape differs from the declaration, a batched
                component is rank 0, or batched components differ in length.
        """
        if len(comps) != self.num_components:
            raise ExecutionError(f"{op} on queue {self.name!r}: the queue holds "
                                 f"{self.num_components} components, got {len(comps)}")
        for k, (c, want, declared) in enumerate(zip(comps, self.dtypes, self.shapes)):
            if want is not None and c.dtype != want:
                raise ShapeError(f"{op} on queue {self.name!r}: dtype mismatch in component "
                                 f"{k}: expected {want}, got {c.dtype}")
            shape = c.shape
            if batched:
                if c.ndim == 0:
                    raise ShapeError(f"{op} on queue {self.name!r}: component {k} is rank 0 "
                                     "(a scalar); enqueue_many needs one row per element")
                shape = shape[1:]
            if not _compatible(declared, shape):
                raise ShapeError(f"{op} on queue {self.name!r}: shape mismatch in component "
                                 f"{k}: expected {format_shape(declared)}, got "
                                 f"{format_shape(shape)}")
        if batched and len({c.shape[0] for c in comps}) > 1:
            raise ShapeError(f"{op} on queue {self.name!r}: components differ in length "
                             f"{[c.shape[0] for c in comps]}")

    def enqueue_many(self, elements: list[tuple]) -> None:
        """Append elements one by one, blocking while full.

        An enqueue that has started before `close()` keeps going (waiting for room)
        unless the close cancels pending enqueues.

        Raises:
            ExecutionError: the queue was closed before the call, or the call was
                waiting when `close(cancel_pending_enqueues=True)` ran (elements it had
                already added stay queued).
            CancelledError: the queue's Session was closed (before or during the call).
        """
        with self.cond:
            self._check_abandoned()
            if self.closed:
                raise ExecutionError(f"queue {self.name!r} is closed")
            self.pending_enqueues += 1
            try:
                for el in elements:
                    while len(self.items) >= self.capacity:
                        self.cond.wait()
                        self._check_abandoned()
                        if self.cancelled:
                            raise ExecutionError(
                                f"enqueue to queue {self.name!r} cancelled: the queue was "
                                "closed with cancel_pending_enqueues=True")
                    self._push(el)
                    self.cond.notify_all()
            finally:
                self.pending_enqueues -= 1
                self.cond.notify_all()

    def dequeue_many(self, n: int, allow_smaller: bool = False) -> list[tuple]:
        """Remove n elements, blocking until available.

        Once the queue is closed, a dequeue still waits for enqueues that are in
        progress (their elements will arrive) and then takes what is there.

        Args:
            n: number of elements.
            allow_smaller: after close, return the remaining 1..n-1 elements instead
                of raising (DequeueUpTo).

        Raises:
            OutOfRangeError: the queue is closed and has fewer than n elements left (or
                none, with allow_smaller); the elements taken are put back.
            CancelledError: the queue's Session was closed (before or while waiting);
                the elements taken are put back.
        """
        out = []
        with self.cond:
            self._check_abandoned()
            try:
                while len(out) < n:
                    while not self._ready() and not (self.closed
                                                     and not self.pending_enqueues):
                        self.cond.wait()
                        self._check_abandoned()
                    if not self.items:
                        if allow_smaller and out and self.short_batches:
                            break
                        raise OutOfRangeError(
                            f"{self.kind} {self.name!r} is closed and has insufficient "
                            f"elements (requested {n - len(out)}, current size "
                            f"{len(out) if self.restores else 0})")
                    out.append(self._pop())
                    self.cond.notify_all()
                if len(out) > 1:
                    self._check_stackable(out)
            except BaseException as e:
                # an error, a closed Session or an interrupt (Ctrl-C while waiting): put
                # back what was taken, in order, so no element is lost (a PriorityQueue
                # keeps TF's way on running out: the elements are gone)
                if self.restores or not isinstance(e, OutOfRangeError):
                    self._restore(out)
                self.cond.notify_all()
                raise
        return out

    # how elements are stored: a FIFO deque (RandomShuffleQueue: taken at random)
    short_batches = True   # DequeueUpTo returns the 1..n-1 left after close
    restores = True        # a DequeueMany that runs out puts its elements back

    def _push(self, el: tuple) -> None:
        self.items.append(el)

    def _pop(self) -> tuple:
        if self.rng is not None:
            k = int(self.rng.integers(len(self.items)))
            self.items.rotate(-k)
            el = self.items.popleft()
            self.items.rotate(k)
            return el
        return self.items.popleft()

    def _restore(self, out: list) -> None:
        self.items.extendleft(reversed(out))

    def stack(self, elements: list[tuple]) -> tuple:
        """Each component of `elements` stacked along a new axis 0."""
        return tuple(np.stack([e[k] for e in elements]) for k in range(self.num_components))

    def _check_stackable(self, elements: list[tuple]) -> None:
        """Raise ShapeError unless each component has one shape over `elements` (a
        queue with undeclared shapes may hold elements that cannot form a batch)."""
        for k in range(self.num_components):
            shapes = {np.shape(e[k]) for e in elements}
            if len(shapes) > 1:
                raise ShapeError(f"dequeue_many on queue {self.name!r}: component {k} has "
                                 f"elements of different shapes "
                                 f"{sorted(format_shape(s) for s in shapes)}; declare the "
                                 "queue's shapes or dequeue one at a time")

    def _ready(self) -> bool:
        if self.closed:  # min_after_dequeue no longer applies: drain
            return bool(self.items)
        return len(self.items) > (self.min_after_dequeue if self.rng is not None else 0)

    def empty_batch(self, op: str) -> tuple:
        """Zero elements: per component an array of shape [0, *declared shape].

        Raises:
            ShapeError: a component's dtype or shape is not fully declared.
        """
        out = []
        for k, (dt, shape) in enumerate(zip(self.dtypes, self.shapes)):
            if dt is None or shape is None or None in shape:
                raise ShapeError(f"{op}(0) on queue {self.name!r} needs the dtype and fully "
                                 f"defined shape of component {k} (declared "
                                 f"{format_shape(shape)})")
            out.append(np.empty((0,) + tuple(shape), dt))
        return tuple(out)

    def abandon(self, why: str) -> None:
        """Make every enqueue and dequeue waiting on this queue, and every later one,
        raise CancelledError(why) (its Session was closed). Never raises."""
        with self.cond:
            self.abandoned = why
            self.cond.notify_all()

    def _check_abandoned(self) -> None:
        if self.abandoned is not None:
            raise CancelledError(f"queue {self.name!r}: {self.abandoned}")

    def close(self, cancel_pending_enqueues: bool = False) -> None:
        """No more enqueues; waiting dequeuers drain the rest and then see the end.

        Enqueues already waiting for room complete as room appears, unless
        `cancel_pending_enqueues`, which makes them fail.
        """
        with self.cond:
            self.closed = True
            if cancel_pending_enqueues:
                self.cancelled = True
            self.cond.notify_all()


class PaddingQueue(Queue):
    """A FIFO queue whose batches pad each component to the largest element shape
    (zeros; "" for strings), so elements may differ in their unknown dims."""

    kind = "PaddingFIFOQueue"

    def _check_stackable(self, elements: list[tuple]) -> None:
        """Ranks are fixed by the declared shapes; dims may differ (they are padded)."""

    def stack(self, elements: list[tuple]) -> tuple:
        """Each component padded to the batch's largest shape and stacked on axis 0."""
        out = []
        for k in range(self.num_components):
            parts = [np.asarray(e[k]) for e in elements]
            shape = tuple(max(dims) for dims in zip(*(p.shape for p in parts)))
            batch = np.zeros((len(parts),) + shape, parts[0].dtype)
            if batch.dtype == object:
                batch[...] = ""
            for i, p in enumerate(parts):
                batch[(i,) + tuple(slice(0, d) for d in p.shape)] = p
            out.append(batch)
        return tuple(out)

    def empty_batch(self, op: str) -> tuple:
        """Zero elements: per component shape [0, *declared shape], unknown dims 0."""
        return tuple(np.empty((0,) + tuple(d or 0 for d in shape), dt)
                     for dt, shape in zip(self.dtypes, self.shapes))


class PriorityQueue(Queue):
    """A queue dequeuing the element of smallest priority (component 0, an int64
    scalar) first; equal priorities leave in the order they came."""

    kind = "PriorityQueue"
    short_batches = False
    restores = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.keys: list = []                  # (priority, arrival), sorted like items
        self.arrivals = itertools.count()

    def _push(self, el: tuple) -> None:
        key = (int(el[0]), next(self.arrivals))
        at = bisect.bisect(self.keys, key)
        self.keys.insert(at, key)
        self.items.insert(at, el)

    def _pop(self) -> tuple:
        self.keys.pop(0)
        return self.items.popleft()

    def _restore(self, out: list) -> None:
        for el in out:  # an interrupted dequeue: back in front of its equals
            key = (int(el[0]), -1 - next(self.arrivals))
            at = bisect.bisect(self.keys, key)
            self.keys.insert(at, key)
            self.items.insert(at, el)


_KINDS = {"FIFOQueue": Queue, "RandomShuffleQueue": Queue, "PaddingFIFOQueue": PaddingQueue,
          "PriorityQueue": PriorityQueue}


def _queue_kernel(shuffle, kind=None):
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
                    types = attrs["component_types"]
                    dtypes = [DType.parse(t).numpy for t in types] if types else None
                    shapes = (decode_shapes(attrs["component_ranks"],
                                            attrs["component_dims"])
                              if attrs["component_ranks"] else None)
                    make = _KINDS[kind or "FIFOQueue"]
                    q = make(attrs["shared_name"], attrs["capacity"],
                             attrs["num_components"], rng, attrs["min_after_dequeue"],
                             dtypes, shapes)
                    state[key] = q
                    if getattr(ctx, "session_closed", False):
                        # the Session closed while this queue was made: close() may
                        # have walked `state` before it was stored, so abandon it here
                        q.abandon("its Session was closed")
                    return (q,)
        _check_shared(q, attrs, kind or ("RandomShuffleQueue" if shuffle else "FIFOQueue"))
        return (q,)
    return kernel


def _check_shared(q, attrs, kind: str) -> None:
    """A queue op that finds its shared_name taken must ask for the same queue (as TF1:
    "Shared queue ... has ... but requested ...").

    Raises:
        ExecutionError: the existing queue differs in kind, capacity, components,
            component dtypes or shapes.
    """
    types = attrs["component_types"]
    dtypes = [DType.parse(t).numpy for t in types] if types else [None] * q.num_components
    shapes = (decode_shapes(attrs["component_ranks"], attrs["component_dims"])
              if attrs["component_ranks"] else [None] * q.num_components)
    asked = {"kind": kind,
             "capacity": attrs["capacity"], "components": attrs["num_components"],
             "dtypes": [None if d is None else np.dtype(d).name for d in dtypes],
             "shapes": [None if s is None else list(s) for s in shapes]}
    has = {"kind": q.kind,
           "capacity": q.capacity, "components": q.num_components,
           "dtypes": [None if d is None else np.dtype(d).name for d in q.dtypes],
           "shapes": [None if s is None else list(s) for s in q.shapes]}
    for what in asked:
        if asked[what] != has[what]:
            raise ExecutionError(f"shared queue {q.name!r} has {what} {has[what]} but this "
                                 f"queue op requested {asked[what]}")


def _q(x) -> Queue:
    if not isinstance(x, Queue):
        raise ExecutionError(f"expected a queue handle, got {type(x).__name__}")
    return x


def _enqueue(inputs, attrs, ctx):
    """Add one element (the component inputs)."""
    q = _q(inputs[0])
    comps = tuple(np.array(c) for c in inputs[1:])
    q.check(comps, False, "enqueue")
    q.enqueue_many([comps])
    return ()


def _enqueue_many(inputs, attrs, ctx):
    """Add one element per row of the components (split along axis 0)."""
    q = _q(inputs[0])
    comps = [np.asarray(c) for c in inputs[1:]]
    q.check(comps, True, "enqueue_many")
    n = comps[0].shape[0] if comps else 0
    q.enqueue_many([tuple(np.array(c[i], dtype=c.dtype) for c in comps) for i in range(n)])
    return ()


def _count(x, op: str) -> int:
    n = np.asarray(x)
    if n.ndim != 0 or n.dtype.kind not in "iu":
        raise ExecutionError(f"{op}: n must be an integer scalar, got {n.dtype} with shape "
                             f"{list(n.shape)}")
    if int(n) < 0:
        raise ExecutionError(f"{op}: n must be >= 0, got {int(n)}")
    return int(n)


def _stack(q: Queue, els: list[tuple]) -> tuple:
    return q.stack(els)


def _dequeue(inputs, attrs, ctx):
    """Remove one element; its components are the outputs."""
    (el,) = _q(inputs[0]).dequeue_many(1)
    return el


def _dequeue_many(inputs, attrs, ctx):
    """Remove n elements (input 1) and stack each component along a new axis 0; n=0
    returns empty components of the declared shapes at once."""
    q = _q(inputs[0])
    n = _count(inputs[1], "dequeue_many")
    return q.empty_batch("dequeue_many") if n == 0 else _stack(q, q.dequeue_many(n))


def _dequeue_up_to(inputs, attrs, ctx):
    """As DequeueMany, but once the queue is closed return the 1..n-1 elements left."""
    q = _q(inputs[0])
    n = _count(inputs[1], "dequeue_up_to")
    if n == 0:
        return q.empty_batch("dequeue_up_to")
    return _stack(q, q.dequeue_many(n, allow_smaller=True))


def _close(inputs, attrs, ctx):
    _q(inputs[0]).close(bool(attrs["cancel_pending_enqueues"]))
    return ()


def _size(inputs, attrs, ctx):
    return (np.asarray(_q(inputs[0]).size(), np.int64),)


def _infer_handle(attrs, inputs):
    return [TensorInfo(None, None)]


def _infer_components(attrs, inputs):
    return [TensorInfo(None, None)] * int(attrs.get("num_components", 1))


_QUEUE_ATTRS = (("capacity", "int"), ("num_components", "int", 1),
                ("shared_name", "string"), ("min_after_dequeue", "int", 0),
                ("seed", "int", -1),
                # declared element types and shapes (see encode_shapes); empty: unchecked
                ("component_types", "strings", ()), ("component_ranks", "ints", ()),
                ("component_dims", "ints", ()))
_STATEFUL = dict(domain=DOMAIN, stateful=True)

OPS = tuple(sorted((
    define("FIFOQueue", [], ["handle"], _queue_kernel(False), _QUEUE_ATTRS,
           infer=_infer_handle, doc="a bounded first-in first-out queue", **_STATEFUL),
    define("RandomShuffleQueue", [], ["handle"], _queue_kernel(True), _QUEUE_ATTRS,
           infer=_infer_handle, doc="a bounded queue dequeuing random elements", **_STATEFUL),
    define("PaddingFIFOQueue", [], ["handle"], _queue_kernel(False, "PaddingFIFOQueue"),
           _QUEUE_ATTRS, infer=_infer_handle,
           doc="a FIFO queue whose batches pad components to a common shape", **_STATEFUL),
    define("PriorityQueue", [], ["handle"], _queue_kernel(False, "PriorityQueue"),
           _QUEUE_ATTRS, infer=_infer_handle,
           doc="a queue dequeuing the smallest int64 priority first", **_STATEFUL),
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
    define("QueueDequeueUpTo", ["handle", "n"], ["components*"], _dequeue_up_to,
           [("num_components", "int", 1)], infer=_infer_components,
           doc="dequeue n elements, stacked; after close, the 1..n-1 left", **_STATEFUL),
    define("QueueClose", ["handle"], [], _close, [("cancel_pending_enqueues", "int", 0)],
           infer=lambda a, i: [], doc="close the queue", **_STATEFUL),
    define("QueueSize", ["handle"], ["size"], _size,
           infer=lambda a, i: [TensorInfo(np.dtype(np.int64), ())],
           doc="number of queued elements", **_STATEFUL),
), key=lambda op: op.name))

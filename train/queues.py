"""Queues for input pipelines: `og.FIFOQueue` and `og.RandomShuffleQueue`.

The queue lives in the Session (one per queue op, shared by all steps and threads).
A producer thread runs `enqueue` / `enqueue_many` steps, which block while the queue
is full; training steps `dequeue` / `dequeue_many`, which block while it is empty.
After `close()`, dequeues drain the rest and then raise `onegraph.OutOfRangeError`::

    q = og.FIFOQueue(capacity=8, dtypes=[og.float32, og.int64], shapes=[[64], []])
    enq = q.enqueue_many([xs, ys])        # feed xs, ys placeholders per step
    xb, yb = q.dequeue_many(32)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import graph as _g
from .graph import Operation, Tensor


class FIFOQueue:
    """A bounded first-in first-out queue of tuples of tensors.

    Args:
        capacity: maximum number of queued elements.
        dtypes: dtype of each component.
        shapes: shape of each component (per element), or None if unknown.
        name: name of the queue op.
        shared_name: Session-state key (default: the op's unique name).
    """

    _op_type = "FIFOQueue"

    def __init__(self, capacity: int, dtypes: Sequence, shapes: Sequence | None = None,
                 name: str | None = None, shared_name: str | None = None, **extra):
        self.graph = g = _g.get_default_graph()
        self.dtypes = [_g.as_dtype(d) for d in dtypes]
        self.shapes = list(shapes) if shapes is not None else [None] * len(self.dtypes)
        name = g.unique_name(name or self._op_type)
        attrs = {"capacity": int(capacity), "num_components": len(self.dtypes),
                 "shared_name": shared_name or name, **extra}
        saved, g._scope = g._scope, []
        try:
            self.handle = g.op(self._op_type, [], attrs, name=name)
        finally:
            g._scope = saved
        self.name = name

    def _components(self, values) -> list[Tensor]:
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if len(values) != len(self.dtypes):
            raise ValueError(f"queue {self.name!r} has {len(self.dtypes)} components, got "
                             f"{len(values)}")
        return [self.graph.convert(v, d) for v, d in zip(values, self.dtypes)]

    def enqueue(self, values, name=None) -> Operation:
        """An op adding one element (blocks while the queue is full)."""
        return self.graph.op("QueueEnqueue", [self.handle] + self._components(values),
                             name=name or f"{self.name}/enqueue")

    def enqueue_many(self, values, name=None) -> Operation:
        """An op adding one element per row (axis 0) of the components."""
        return self.graph.op("QueueEnqueueMany", [self.handle] + self._components(values),
                             name=name or f"{self.name}/enqueue_many")

    def _out(self, outs, batch):
        outs = outs if isinstance(outs, list) else [outs]
        return outs[0] if len(outs) == 1 else outs

    def dequeue(self, name=None):
        """Tensor(s) of one dequeued element (blocks while empty; OutOfRangeError once
        closed and drained)."""
        n = len(self.dtypes)
        outs = self.graph.op("QueueDequeue", [self.handle], {"num_components": n},
                             num_outputs=n, name=name or f"{self.name}/dequeue",
                             dtypes=self.dtypes, shapes=self.shapes)
        return self._out(outs, None)

    def dequeue_many(self, n: int, name=None):
        """Tensor(s) of n dequeued elements stacked along a new axis 0."""
        k = len(self.dtypes)
        shapes = [None if s is None else [n] + list(s) for s in self.shapes]
        outs = self.graph.op("QueueDequeueMany", [self.handle, np.asarray(n, np.int64)],
                             {"num_components": k}, num_outputs=k,
                             name=name or f"{self.name}/dequeue_many", dtypes=self.dtypes,
                             shapes=shapes)
        return self._out(outs, n)

    def close(self, name=None) -> Operation:
        """An op closing the queue."""
        return self.graph.op("QueueClose", [self.handle], name=name or f"{self.name}/close")

    def size(self, name=None) -> Tensor:
        """The number of queued elements (int64 scalar)."""
        return self.graph.op("QueueSize", [self.handle], name=name or f"{self.name}/size")


class RandomShuffleQueue(FIFOQueue):
    """A queue that dequeues uniformly random elements.

    Args:
        min_after_dequeue: a dequeue waits until more than this many elements are
            queued (better mixing), unless the queue is closed.
        seed: seed of the shuffling (-1 or None: fresh entropy).
    """

    _op_type = "RandomShuffleQueue"

    def __init__(self, capacity: int, min_after_dequeue: int, dtypes: Sequence,
                 shapes: Sequence | None = None, seed: int | None = None, name=None,
                 shared_name=None):
        super().__init__(capacity, dtypes, shapes, name, shared_name,
                         min_after_dequeue=int(min_after_dequeue),
                         seed=-1 if seed is None else int(seed))

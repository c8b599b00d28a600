"""Queues for input pipelines: `og.FIFOQueue`, `og.RandomShuffleQueue`,
`og.PaddingFIFOQueue` and `og.PriorityQueue` (all `og.QueueBase`s).

The queue lives in the Session (one per queue op, shared by all steps and threads).
A producer thread runs `enqueue` / `enqueue_many` steps, which block while the queue
is full; training steps `dequeue` / `dequeue_many` / `dequeue_up_to`, which block while
it is empty. After `close()` new enqueues fail, enqueues already waiting for room still
complete (unless `close(cancel_pending_enqueues=True)`), and dequeues drain the rest
and then raise `onegraph.OutOfRangeError`, as with TF1's `tf.queue.QueueBase`::

    q = og.FIFOQueue(capacity=8, dtypes=[og.float32, og.int64], shapes=[[64], []])
    enq = q.enqueue_many([xs, ys])        # feed xs, ys placeholders per step
    xb, yb = q.dequeue_many(32)

Components are checked against the declared dtypes and shapes: while building when the
static dtype and shape say enough, and again by the enqueue kernel at run time (the
queue op carries the declaration as attributes); either raises `onegraph.ShapeError`.
"""

from __future__ import annotations

import zlib
from typing import Sequence

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..format import DType
from ..ops.queue import encode_shapes, format_shape
from . import graph as _g
from .graph import Operation, Tensor


class QueueBase:
    """What every queue shares (TF1's tf.QueueBase): its op, enqueue and dequeue ops.
    Construct one of the subclasses; the arguments are FIFOQueue's.

    Args:
        capacity: maximum number of queued elements.
        dtypes: dtype of each component.
        shapes: shape of each component (per element; None or -1 for an unknown dim),
            or None if unknown. dequeue_many(0) needs fully defined shapes.
        name: name of the queue op.
        shared_name: Session-state key (default: the op's unique name).

    Raises:
        ValueError: capacity is not a positive integer.
        OneGraphError: shapes does not have one entry per dtype, or a dtype is unknown.
    """

    _op_type = "FIFOQueue"

    def __init__(self, capacity: int, dtypes: Sequence, shapes: Sequence | None = None,
                 name: str | None = None, shared_name: str | None = None, **extra):
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) \
                or capacity <= 0:
            raise ValueError(f"queue {name or self._op_type!r}: capacity must be a positive "
                             f"integer, got {capacity!r}")
        self.graph = g = _g.get_default_graph()
        self.dtypes = [_g.as_dtype(d) for d in dtypes]
        if shapes is not None and len(shapes) != len(self.dtypes):
            raise OneGraphError(f"queue {name or self._op_type!r}: {len(self.dtypes)} dtypes "
                                f"but {len(shapes)} shapes")
        self.shapes = ([None if s is None else _g._shape_tuple(s) for s in shapes]
                       if shapes is not None else [None] * len(self.dtypes))
        name = g.unique_name(name or self._op_type)
        ranks, dims = encode_shapes(self.shapes)
        attrs = {"capacity": int(capacity), "num_components": len(self.dtypes),
                 "shared_name": shared_name or name,
                 "component_types": [d.short_name for d in self.dtypes],
                 "component_ranks": ranks, "component_dims": dims,
                 **extra, **self._extra_attrs(g, name)}
        # `name` is already unique and scoped: create the op under exactly that name
        # (g.op would scope it again and, finding it reserved, add a suffix)
        g._used_names.discard(name)
        saved, g._scope = g._scope, []
        try:
            self.handle = g.op(self._op_type, [], attrs, name=name)
        finally:
            g._scope = saved
        self.name = name
        # the methods' ops take the caller's name scope, as TF1's (q.enqueue inside
        # scope "s" is "s/q/enqueue", not "s/s/q/enqueue")
        self._base = name.rsplit("/", 1)[-1]

    def _extra_attrs(self, graph, name: str) -> dict:
        """Attributes a subclass adds to the queue op (named `name` in `graph`)."""
        return {}

    def _components(self, values, batched: bool) -> list[Tensor]:
        """Convert `values` to tensors of the declared dtypes and check static shapes."""
        op = "enqueue_many" if batched else "enqueue"
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if len(values) != len(self.dtypes):
            raise ValueError(f"queue {self.name!r} has {len(self.dtypes)} components, got "
                             f"{len(values)}")
        out, lengths = [], set()
        for k, (v, dt, declared) in enumerate(zip(values, self.dtypes, self.shapes)):
            t = self.graph.convert(v, dt)
            if t.dtype is not DType.UNDEFINED and t.dtype != dt:
                raise ShapeError(f"{op} on queue {self.name!r}: dtype mismatch in component "
                                 f"{k}: expected {dt.short_name}, got {t.dtype.short_name} "
                                 "(convert with og.cast)")
            shape = t.shape
            if shape is not None and batched:
                if len(shape) == 0:
                    raise ShapeError(f"{op} on queue {self.name!r}: component {k} is rank 0 "
                                     "(a scalar); enqueue_many needs one row per element")
                if shape[0] is not None:
                    lengths.add(shape[0])
                shape = shape[1:]
            if shape is not None and declared is not None and not (
                    len(shape) == len(declared)
                    and all(a is None or b is None or a == b for a, b in zip(declared, shape))):
                raise ShapeError(f"{op} on queue {self.name!r}: shape mismatch in component "
                                 f"{k}: expected {format_shape(declared)}, got "
                                 f"{format_shape(shape)}")
            out.append(t)
        if len(lengths) > 1:
            raise ShapeError(f"{op} on queue {self.name!r}: components differ in length "
                             f"{sorted(lengths)}")
        return out

    def enqueue(self, values, name=None) -> Operation:
        """An op adding one element (blocks while the queue is full).

        Args:
            values: one tensor or value per component (a single one may be bare).

        Raises:
            ValueError: the wrong number of components.
            ShapeError: a component's static dtype or shape contradicts the queue's
                (the op raises ShapeError at run time for values the static
                information could not check).
        """
        return self.graph.op("QueueEnqueue", [self.handle] + self._components(values, False),
                             name=name or f"{self._base}/enqueue")

    def enqueue_many(self, values, name=None) -> Operation:
        """An op adding one element per row (axis 0) of the components.

        Raises:
            ValueError: the wrong number of components.
            ShapeError: a component is rank 0, its dtype or row shape contradicts the
                queue's, or the components' lengths differ (checked statically where
                known, otherwise by the op at run time).
        """
        return self.graph.op("QueueEnqueueMany",
                             [self.handle] + self._components(values, True),
                             name=name or f"{self._base}/enqueue_many")

    def _out(self, outs):
        outs = outs if isinstance(outs, list) else [outs]
        return outs[0] if len(outs) == 1 else outs

    def dequeue(self, name=None):
        """Tensor(s) of one dequeued element (blocks while empty; OutOfRangeError once
        closed and drained)."""
        n = len(self.dtypes)
        outs = self.graph.op("QueueDequeue", [self.handle], {"num_components": n},
                             num_outputs=n, name=name or f"{self._base}/dequeue",
                             dtypes=self.dtypes, shapes=self.shapes)
        return self._out(outs)

    def _count(self, n, op: str) -> tuple[Tensor, int | None]:
        """`n` as a scalar integer tensor, and its value when known while building."""
        if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
            if n < 0:
                raise OneGraphError(f"{op} on queue {self.name!r}: n must be >= 0, got {n}")
            return self.graph.constant(np.asarray(n, np.int64)), int(n)
        t = self.graph.convert(n)
        if t.dtype is not DType.UNDEFINED and np.dtype(t.dtype.numpy).kind not in "iu":
            raise ShapeError(f"{op} on queue {self.name!r}: n must be an integer scalar, "
                             f"got dtype {t.dtype.short_name}")
        if t.shape is not None and len(t.shape) != 0:
            raise ShapeError(f"{op} on queue {self.name!r}: n must be a scalar, got shape "
                             f"{format_shape(t.shape)}")
        value = self.graph.static_value(t)
        if value is not None and int(value) < 0:
            raise OneGraphError(f"{op} on queue {self.name!r}: n must be >= 0, got "
                                f"{int(value)}")
        return t, None if value is None else int(value)

    def _dequeue_n(self, op_type, op, n, name, exact: bool):
        k = len(self.dtypes)
        t, value = self._count(n, op)
        lead = value if exact else None
        shapes = [None if s is None else (lead,) + tuple(s) for s in self.shapes]
        outs = self.graph.op(op_type, [self.handle, t], {"num_components": k}, num_outputs=k,
                             name=name or f"{self._base}/{op}", dtypes=self.dtypes,
                             shapes=shapes)
        return self._out(outs)

    def dequeue_many(self, n, name=None):
        """Tensor(s) of n dequeued elements stacked along a new axis 0.

        Blocks until n elements are available. Once the queue is closed it still waits
        for enqueues in progress, then raises OutOfRangeError (at run time) if fewer
        than n elements are left; they stay queued. n=0 returns empty components of
        shape [0, *shape] at once (the shapes must be fully defined).

        Args:
            n: a non-negative Python int or a scalar integer tensor.

        Raises:
            OneGraphError: n is negative.
            ShapeError: n is not an integer scalar.
        """
        return self._dequeue_n("QueueDequeueMany", "dequeue_many", n, name, exact=True)

    def dequeue_up_to(self, n, name=None):
        """Tensor(s) of up to n dequeued elements stacked along a new axis 0.

        As `dequeue_many`, except that once the queue is closed it returns the 1..n-1
        elements left instead of failing; OutOfRangeError (at run time) when it is
        closed and empty. The leading dimension is statically unknown.

        Raises:
            OneGraphError: n is negative.
            ShapeError: n is not an integer scalar.
        """
        return self._dequeue_n("QueueDequeueUpTo", "dequeue_up_to", n, name, exact=False)

    def close(self, cancel_pending_enqueues: bool = False, name=None) -> Operation:
        """An op closing the queue.

        Later enqueues fail; dequeues drain what is left, then raise OutOfRangeError.
        Enqueues already waiting for room complete once there is some, unless
        `cancel_pending_enqueues`, which makes them fail with ExecutionError.
        """
        return self.graph.op("QueueClose", [self.handle],
                             {"cancel_pending_enqueues": int(bool(cancel_pending_enqueues))},
                             name=name or f"{self._base}/close")

    def size(self, name=None) -> Tensor:
        """The number of queued elements (int64 scalar)."""
        return self.graph.op("QueueSize", [self.handle], name=name or f"{self._base}/size")


class FIFOQueue(QueueBase):
    """A bounded first-in first-out queue of tuples of tensors (QueueBase's arguments
    and errors)."""

    _op_type = "FIFOQueue"


class PaddingFIFOQueue(FIFOQueue):
    """A FIFO queue whose dequeue_many / dequeue_up_to pad each component to the largest
    shape in the batch (zeros, "" for strings), so elements may differ in the dims
    declared None (TF1's tf.PaddingFIFOQueue).

    Args:
        capacity, dtypes, name, shared_name: as FIFOQueue.
        shapes: one shape per component, each of known rank (dims may be None).

    Raises:
        ValueError: shapes does not have one entry per dtype, or one has unknown rank;
            or as FIFOQueue.
    """

    _op_type = "PaddingFIFOQueue"

    def __init__(self, capacity: int, dtypes: Sequence, shapes: Sequence, names=None,
                 shared_name: str | None = None, name: str = "padding_fifo_queue"):
        if names is not None:
            raise ValueError("PaddingFIFOQueue: named components (names) are not supported")
        if shapes is None or len(shapes) != len(dtypes):
            got = "no" if shapes is None else len(shapes)
            raise ValueError(f"Shapes must be provided for all components, but received "
                             f"{len(dtypes)} dtypes and {got} shapes.")
        if any(s is None for s in shapes):
            raise ValueError(f"PaddingFIFOQueue: every component needs a shape of known "
                             f"rank, got shapes {list(shapes)}")
        super().__init__(capacity, dtypes, shapes, name, shared_name)


class PriorityQueue(FIFOQueue):
    """A queue dequeuing its elements by priority, smallest first (TF1's
    tf.PriorityQueue). Elements are (priority, *components): the priority is an
    int64 scalar, enqueued as the first value and returned as the first output.
    Equal priorities leave in the order they came. As TF's, dequeue_up_to after close
    fails with OutOfRangeError rather than return a short batch.

    Args:
        capacity: maximum number of queued elements.
        types: dtypes of the components after the priority.
        shapes: their shapes (required, as TF's).

    Raises:
        TypeError: shapes is None.
        ValueError: shapes does not have one entry per type; or as FIFOQueue.
    """

    _op_type = "PriorityQueue"

    def __init__(self, capacity: int, types: Sequence, shapes: Sequence, names=None,
                 shared_name: str | None = None, name: str = "priority_queue"):
        if names is not None:
            raise ValueError("PriorityQueue: named components (names) are not supported")
        if shapes is None or isinstance(shapes, (str, bytes)) or not hasattr(shapes,
                                                                              "__len__"):
            raise TypeError(f"Expected list for 'shapes' argument to 'PriorityQueue' Op, "
                            f"not {shapes!r:.40}.")
        dtypes = [DType.INT64] + list(types)
        shapes = [()] + list(shapes)
        if len(shapes) != len(dtypes):
            raise ValueError(f"Queue shapes must have the same length as dtypes, received "
                             f"len(shapes)={len(shapes)}, len(dtypes)={len(dtypes)}")
        super().__init__(capacity, dtypes, shapes, name, shared_name)


class RandomShuffleQueue(FIFOQueue):
    """A queue that dequeues uniformly random elements.

    Args:
        min_after_dequeue: a dequeue waits until more than this many elements are
            queued (better mixing), unless the queue is closed.
        seed: seed of the shuffling. None (or -1): as in TF1, derived from the graph
            seed (`og.set_random_seed`) and the queue's name, so two identical builds
            shuffle alike; fresh entropy when the graph has no seed.

    Raises:
        ValueError: min_after_dequeue is negative or not below capacity (a full queue
            would never release an element), or as `FIFOQueue`.
    """

    _op_type = "RandomShuffleQueue"

    def __init__(self, capacity: int, min_after_dequeue: int, dtypes: Sequence,
                 shapes: Sequence | None = None, seed: int | None = None, name=None,
                 shared_name=None):
        if isinstance(capacity, (int, np.integer)) and not isinstance(capacity, bool) \
                and not 0 <= int(min_after_dequeue) < capacity:
            raise ValueError(f"queue {name or self._op_type!r}: min_after_dequeue "
                             f"{min_after_dequeue} must be >= 0 and < capacity {capacity}")
        self._min_after_dequeue = int(min_after_dequeue)
        self._seed = -1 if seed is None else int(seed)
        super().__init__(capacity, dtypes, shapes, name, shared_name)

    def _extra_attrs(self, graph, name: str) -> dict:
        seed, graph_seed = self._seed, graph.seed
        if seed < 0 and graph_seed is not None:
            # TF1 derives an op seed from the graph seed and the op; here the op's
            # unique name stands for it, so unrelated ops do not change the order
            words = list(np.atleast_1d(graph_seed).tolist()) + [zlib.crc32(name.encode())]
            seed = int(np.random.SeedSequence(words).generate_state(1)[0])
        return {"min_after_dequeue": self._min_after_dequeue, "seed": seed}

"""TF1's queue-based input pipelines (tf.compat.v1.train): producers and batchers.

A producer (`input_producer`, `string_input_producer`, `range_input_producer`,
`slice_input_producer`) puts the rows of a tensor into a FIFOQueue, shuffled within
each epoch if asked and for `num_epochs` epochs if given; a batcher (`batch`,
`shuffle_batch`, `batch_join`, `shuffle_batch_join`) enqueues examples into a queue
and dequeues them `batch_size` at a time. Each adds a `QueueRunner` to the graph's
QUEUE_RUNNERS collection; `start_queue_runners` starts their threads::

    x, y = og.train.slice_input_producer([xs, ys], num_epochs=2, seed=1)
    xb, yb = og.train.batch([x, y], batch_size=32)
    sess.run(og.local_variables_initializer())     # the epoch counters
    coord = og.train.Coordinator()
    threads = og.train.start_queue_runners(sess, coord)
    ... sess.run(train_op) until og.OutOfRangeError ...

When a producer has done its epochs its queue closes; the batcher's threads then see
OutOfRangeError, its queue closes in turn, and the training loop's dequeue raises
OutOfRangeError once the last full batch (or, with allow_smaller_final_batch, the
last partial one) has been taken.

Not supported: `dynamic_pad=True` (no padding queue exists; refused with ValueError),
sparse tensors, the `maybe_*` variants (keep_input) and the queue-fullness summaries.
"""

from __future__ import annotations

import numpy as np

from ..format import DType
from . import api, api_extra
from . import graph as _g
from .api_random import random_shuffle
from .debugging import Assert
from .graph import Tensor
from .queue_runner import QueueRunner, add_queue_runner
from .queues import FIFOQueue, RandomShuffleQueue
from .variables import Variable


# -- argument checks ----------------------------------------------------------------


def _int_arg(value, what: str, minimum: int) -> int:
    """`value` as an int >= minimum.

    Raises:
        TypeError: value is not an int (a bool, a float, a tensor...).
        ValueError: value is below minimum.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r:.60}")
    if value < minimum:
        raise ValueError(f"{what} must be >= {minimum}, got {int(value)}")
    return int(value)


def _bool_arg(value, what: str) -> bool:
    """Raises TypeError unless value is a bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be a bool, got {type(value).__name__} {value!r:.60}")
    return bool(value)


def _num_epochs(num_epochs, what: str) -> int | None:
    """None, or num_epochs as an int >= 1 (TypeError / ValueError otherwise)."""
    return None if num_epochs is None else _int_arg(num_epochs, f"{what}: num_epochs", 1)


def _batch_size(batch_size, what: str):
    """A Python int >= 1, or a tensor (the queue checks it is an integer scalar).

    Raises:
        TypeError: batch_size is neither (a float, a bool, None).
        ValueError: an int below 1.
    """
    if isinstance(batch_size, Tensor):
        return batch_size
    return _int_arg(batch_size, f"{what}: batch_size", 1)


# -- epochs ---------------------------------------------------------------------------


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, which can be evaluated `num_epochs` times; later runs raise
    og.OutOfRangeError (TF1's tf.train.limit_epochs).

    The count is kept in a local variable `<name>/epochs` (og.LOCAL_VARIABLES), raised
    by og.count_up_to as in TF1 (it stops at num_epochs): run
    og.local_variables_initializer() to reset it. Concurrent runs share the count.

    Args:
        tensor: a tensor or value.
        num_epochs: None (no limit: `tensor` is returned as it is) or an int >= 1.
        name: name scope of the ops (default "limit_epochs").

    Raises:
        TypeError: num_epochs is not an int, or name is not a str.
        ValueError: num_epochs is below 1.
    """
    n = _num_epochs(num_epochs, "limit_epochs")
    if n is None:
        return tensor
    _g.check_name(name, "limit_epochs")
    t = _g.convert_to_tensor(tensor)
    g = t.graph
    with g.name_scope(name or "limit_epochs"):
        epochs = Variable(np.int64(0), trainable=False, name="epochs",
                          collections=[_g.LOCAL_VARIABLES], graph=g)
        # the increment is atomic, so concurrent runs each get a count of their own
        counted = epochs.count_up_to(n)
        with g.control_dependencies([counted]):
            return api.identity(t)


# -- producers --------------------------------------------------------------------------


def _merge_shape(static, given, what: str) -> tuple:
    """The element shape from a tensor's row shape and an optional given one.

    Raises:
        ValueError: they conflict, or the result is not fully defined.
    """
    if given is not None:
        given = _g._shape_tuple(given, f"{what}: element_shape")
    if static is None:
        merged = given
    elif given is None:
        merged = static
    else:
        if len(static) != len(given) or any(
                a is not None and b is not None and a != b for a, b in zip(static, given)):
            raise ValueError(f"{what}: element_shape {list(given)} conflicts with the "
                             f"input's row shape {list(static)}")
        merged = tuple(a if a is not None else b for a, b in zip(static, given))
    if merged is None or None in merged:
        raise ValueError(f"{what}: the input must have a fully defined row shape, or "
                         f"element_shape must be given (row shape: "
                         f"{'unknown' if merged is None else list(merged)})")
    return merged


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True,
                   seed=None, capacity=32, shared_name=None, name=None, cancel_op=None
                   ) -> FIFOQueue:
    """A FIFOQueue that a QueueRunner fills with the rows of `input_tensor`, epoch
    after epoch (TF1's tf.train.input_producer).

    Args:
        input_tensor: a tensor of rank >= 1; its rows (axis 0) are the elements.
        element_shape: the shape of a row, if the tensor's is not fully known.
        num_epochs: None (repeat forever) or an int >= 1: after that many epochs the
            queue is closed (dequeues drain it, then raise og.OutOfRangeError).
            Uses a local variable (og.local_variables_initializer resets it).
        shuffle: shuffle the rows within each epoch.
        seed: seed of the shuffle (None: from the graph seed, as og.random_shuffle).
        capacity: the queue's capacity.
        shared_name: the queue's Session-state key.
        name: name scope (default "input_producer").
        cancel_op: the QueueRunner's cancel op (default: close the queue cancelling
            pending enqueues).

    An input with no rows fails at run time (an ExecutionError reported to the
    Coordinator) instead of spinning forever.

    Raises:
        TypeError: num_epochs, capacity or seed is not an int, shuffle not a bool,
            name not a str, or element_shape not a shape.
        ValueError: input_tensor is a scalar, its row shape is not fully known and
            element_shape does not complete it (or contradicts it), or num_epochs
            or capacity is below 1.
    """
    what = "input_producer"
    n = _num_epochs(num_epochs, what)
    capacity = _int_arg(capacity, f"{what}: capacity", 1)
    shuffle = _bool_arg(shuffle, f"{what}: shuffle")
    seed = _g.check_seed(seed, what)
    _g.check_name(name, what)
    t = _g.convert_to_tensor(input_tensor)
    if t.shape is not None and len(t.shape) == 0:
        raise ValueError(f"{what}: input_tensor must have rank >= 1 (its rows are the "
                         f"elements), got the scalar {t.name!r}")
    if t.dtype is DType.UNDEFINED:
        raise ValueError(f"{what}: the dtype of {t.name!r} is unknown")
    shape = _merge_shape(None if t.shape is None else tuple(t.shape[1:]), element_shape,
                         what)
    g = t.graph
    with g.name_scope(name or "input_producer"):
        # TF1 asserts this for string_input_producer only; an empty input would make
        # the runner enqueue nothing forever, so every producer checks it
        nonempty = Assert(api.greater(api_extra.size(t), 0),
                          [f"{what}: the input tensor has no rows"])
        with g.control_dependencies([nonempty]):
            t = api.identity(t)
        if shuffle:
            t = random_shuffle(t, seed=seed)
        t = limit_epochs(t, n)
        q = FIFOQueue(capacity, [t.dtype], shapes=[shape], shared_name=shared_name,
                      name="fifo_queue")
        enqueue = q.enqueue_many([t])
        add_queue_runner(QueueRunner(q, [enqueue], cancel_op=cancel_op))
    return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None
                          ) -> FIFOQueue:
    """A FIFOQueue of the strings (e.g. file names) of a 1-D string tensor, epoch
    after epoch (TF1's tf.train.string_input_producer); arguments as
    `input_producer`.

    Raises:
        ValueError: string_tensor is an empty list, or not 1-D; or as
            `input_producer`.
        TypeError: string_tensor is a tensor of another dtype than og.string; or as
            `input_producer`.
    """
    what = "string_input_producer"
    if not isinstance(string_tensor, Tensor):
        if isinstance(string_tensor, (str, bytes)):
            raise ValueError(f"{what}: string_tensor must be a 1-D list of strings, got "
                             f"the single string {string_tensor!r:.60}")
        if len(string_tensor) == 0:
            raise ValueError(f"{what} requires a non-empty list of strings")
        string_tensor = _g.convert_to_tensor(string_tensor, DType.STRING)
    if string_tensor.dtype not in (DType.STRING, DType.UNDEFINED):
        raise TypeError(f"{what}: string_tensor must be og.string, got "
                        f"{string_tensor.dtype.short_name} ({string_tensor.name!r})")
    if string_tensor.shape is not None and len(string_tensor.shape) != 1:
        raise ValueError(f"{what}: string_tensor must be 1-D, got shape "
                         f"{list(string_tensor.shape)}")
    return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity,
                          shared_name, name or "input_producer", cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None) -> FIFOQueue:
    """A FIFOQueue of the integers 0 .. limit-1, epoch after epoch (TF1's
    tf.train.range_input_producer); arguments as `input_producer`.

    Args:
        limit: an int >= 1 (the elements are int32) or a scalar integer tensor.

    Raises:
        TypeError: limit is neither; or as `input_producer`.
        ValueError: limit is an int below 1; or as `input_producer`.
    """
    what = "range_input_producer"
    _g.check_name(name, what)
    if not isinstance(limit, Tensor):
        limit = _int_arg(limit, f"{what}: limit", 1)
    g = limit.graph if isinstance(limit, Tensor) else _g.get_default_graph()
    # as TF1: the range and the producer share one scope
    with g.name_scope(name or "input_producer") as scope:
        values = (api_extra.range(limit) if isinstance(limit, Tensor)
                  else api_extra.range(np.int32(limit), dtype=DType.INT32))
        return input_producer(values, [], num_epochs, shuffle, seed, capacity,
                              shared_name, scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None,
                         capacity=32, shared_name=None, name=None) -> list[Tensor]:
    """One row of each tensor of `tensor_list` per run, the same row of each: rows
    taken in (shuffled) order, epoch after epoch (TF1's tf.train.slice_input_producer).

    A range_input_producer queues the row indices; the results gather them.

    Returns:
        A list with, per tensor of shape [N, a, ..., z], a tensor of shape
        [a, ..., z].

    Raises:
        TypeError: tensor_list is not a list or tuple; or as `input_producer`.
        ValueError: tensor_list is empty, holds a scalar, or tensors whose static
            numbers of rows differ; or as `input_producer`.
    """
    what = "slice_input_producer"
    if not isinstance(tensor_list, (list, tuple)):
        raise TypeError(f"{what}: tensor_list must be a list of tensors, got "
                        f"{type(tensor_list).__name__}")
    if not tensor_list:
        raise ValueError(f"{what}: expected at least one tensor in tensor_list")
    _g.check_name(name, what)
    g = api._graph_of(*tensor_list)
    tensors = [_g.convert_to_tensor(t, graph=g) for t in tensor_list]
    rows = set()
    for t in tensors:
        if t.graph is not g:
            raise ValueError(f"{what}: {t.name!r} belongs to another graph than the "
                             "other tensors")
        if t.shape is not None:
            if len(t.shape) == 0:
                raise ValueError(f"{what}: {t.name!r} is a scalar; every tensor needs "
                                 "rows to slice")
            if t.shape[0] is not None:
                rows.add(t.shape[0])
    if len(rows) > 1:
        raise ValueError(f"{what}: the tensors have different numbers of rows "
                         f"{sorted(rows)}")
    with g.name_scope(name or "input_producer") as scope:
        first = tensors[0]
        if first.shape is not None and first.shape[0] is not None:
            limit = int(first.shape[0])
            if limit == 0:
                raise ValueError(f"{what}: the tensors have no rows")
        else:
            limit = api.gather(api.shape(first), 0)
        q = range_input_producer(limit, num_epochs, shuffle, seed, capacity, shared_name,
                                 name=scope)
        index = q.dequeue()
        return [api.gather(t, index) for t in tensors]


# -- batching ---------------------------------------------------------------------------


def _as_tensor_list(tensors, what: str) -> list:
    """The components of one example: a list/tuple, a dict (by sorted key) or a bare
    tensor.

    Raises:
        TypeError: tensors is none of these.
        ValueError: it is empty.
    """
    if isinstance(tensors, dict):
        out = [tensors[k] for k in sorted(tensors, key=str)]
    elif isinstance(tensors, (list, tuple)):
        out = list(tensors)
    elif isinstance(tensors, Tensor) or hasattr(tensors, "_as_graph_tensor"):
        out = [tensors]
    else:
        raise TypeError(f"{what}: tensors must be a list, tuple or dict of tensors, got "
                        f"{type(tensors).__name__}")
    if not out:
        raise ValueError(f"{what}: expected at least one tensor")
    return out


def _as_tensor_list_list(tensors_list, what: str) -> list[list]:
    """The examples of a *_join: a list of lists, or of dicts with the same keys.

    Raises:
        TypeError: tensors_list is not a list or tuple.
        ValueError: it is empty, or its entries differ in keys or length.
    """
    if not isinstance(tensors_list, (list, tuple)):
        raise TypeError(f"{what}: tensors_list must be a list of lists (or dicts) of "
                        f"tensors, got {type(tensors_list).__name__}")
    if not tensors_list:
        raise ValueError(f"{what}: expected at least one list of tensors")
    if isinstance(tensors_list[0], dict):
        keys = set(tensors_list[0])
        if any(not isinstance(d, dict) or set(d) != keys for d in tensors_list[1:]):
            raise ValueError(f"{what}: all dictionaries in tensors_list must have the same "
                             "keys")
    out = [_as_tensor_list(tl, what) for tl in tensors_list]
    if len({len(tl) for tl in out}) > 1:
        raise ValueError(f"{what}: the lists in tensors_list differ in length "
                         f"{[len(tl) for tl in out]}")
    return out


def _as_original_type(original, dequeued):
    """The batch in the structure of `original`, as TF1 returns it (a dict by key; a
    single tensor for one component given as a list or bare tensor)."""
    if isinstance(original, dict):
        values = dequeued if isinstance(dequeued, list) else [dequeued]
        return {k: values[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued


def _dtypes(lists: list[list[Tensor]], what: str) -> list:
    """The component dtypes, the same in every list.

    Raises:
        TypeError: the lists' dtypes differ.
        ValueError: a dtype is unknown.
    """
    types = [t.dtype for t in lists[0]]
    for other in lists[1:]:
        if [t.dtype for t in other] != types:
            raise TypeError(f"{what}: expected the same dtypes in every list: "
                            f"{[d.short_name for d in types]} vs. "
                            f"{[t.dtype.short_name for t in other]}")
    for t in lists[0]:
        if t.dtype is DType.UNDEFINED:
            raise ValueError(f"{what}: the dtype of {t.name!r} is unknown")
    return types


def _shapes(lists: list[list[Tensor]], shapes, enqueue_many: bool, what: str) -> list:
    """The per-example shape of each component: `shapes`, or merged from the
    tensors' static shapes (without the leading dim with enqueue_many).

    Raises:
        TypeError: shapes is not a list, or holds something that is not a shape.
        ValueError: shapes has the wrong length; a tensor's rank is unknown; with
            enqueue_many a tensor is a scalar; the lists' shapes conflict; or a shape
            is not fully defined (no padding queue exists to batch ragged examples).
    """
    k = len(lists[0])
    if shapes is not None:
        if not isinstance(shapes, (list, tuple)):
            raise TypeError(f"{what}: shapes must be a list of shapes, got "
                            f"{type(shapes).__name__}")
        if len(shapes) != k:
            raise ValueError(f"{what}: shapes has {len(shapes)} entries for {k} tensors")
        out = [_g._shape_tuple(s, f"{what}: shapes[{i}]") for i, s in enumerate(shapes)]
        if any(s is None for s in out):
            raise ValueError(f"{what}: every entry of shapes must be a shape, not None")
    else:
        out = []
        for i in range(k):
            merged = None
            for tl in lists:
                t = tl[i]
                if t.shape is None:
                    raise ValueError(f"{what}: cannot infer the rank of {t.name!r}; pass "
                                     "shapes=")
                s = tuple(t.shape)
                if enqueue_many:
                    if not s:
                        raise ValueError(f"{what}: {t.name!r} is a scalar, but "
                                         "enqueue_many=True needs one row per example")
                    s = s[1:]
                if merged is not None and (len(merged) != len(s) or any(
                        a is not None and b is not None and a != b
                        for a, b in zip(merged, s))):
                    raise ValueError(f"{what}: component {i} has shapes {list(merged)} and "
                                     f"{list(s)} in different lists")
                merged = s if merged is None else tuple(
                    a if a is not None else b for a, b in zip(merged, s))
            out.append(merged)
    for i, s in enumerate(out):
        if None in s:
            raise ValueError(f"{what}: the shape of component {i} ({lists[0][i].name!r}) "
                             f"is not fully defined ({['?' if d is None else d for d in s]});"
                             " pass shapes= (dynamic_pad is not supported)")
    return out


def _make_batch(what: str, lists: list[list[Tensor]], original, batch_size, capacity,
                enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                threads_per_list: int, min_after_dequeue=None, seed=None,
                keep_input=None):
    """Queue, enqueue ops, QueueRunner and dequeue shared by the batchers (`keep_input`:
    the maybe_* ones')."""
    batch_size = _batch_size(batch_size, what)
    capacity = _int_arg(capacity, f"{what}: capacity", 1)
    enqueue_many = _bool_arg(enqueue_many, f"{what}: enqueue_many")
    smaller = _bool_arg(allow_smaller_final_batch, f"{what}: allow_smaller_final_batch")
    _g.check_name(name, what)
    if min_after_dequeue is not None:
        min_after_dequeue = _int_arg(min_after_dequeue, f"{what}: min_after_dequeue", 0)
        if min_after_dequeue >= capacity:
            raise ValueError(f"{what}: capacity {capacity} must be bigger than "
                             f"min_after_dequeue {min_after_dequeue}")
        seed = _g.check_seed(seed, what)
    g = api._graph_of(*[t for tl in lists for t in tl])
    lists = [[_g.convert_to_tensor(t, graph=g) for t in tl] for tl in lists]
    for tl in lists:
        for t in tl:
            if t.graph is not g:
                raise ValueError(f"{what}: {t.name!r} belongs to another graph than the "
                                 "other tensors")
    types = _dtypes(lists, what)
    shapes = _shapes(lists, shapes, enqueue_many, what)
    with g.name_scope(name or what):
        if keep_input is not None:
            lists = _kept_rows(lists, keep_input, enqueue_many, g, what)
            enqueue_many = True
        if min_after_dequeue is None:
            q = FIFOQueue(capacity, types, shapes=shapes, shared_name=shared_name,
                          name="fifo_queue")
        else:
            q = RandomShuffleQueue(capacity, min_after_dequeue, types, shapes=shapes,
                                   seed=seed, shared_name=shared_name,
                                   name="random_shuffle_queue")
        enqueue = q.enqueue_many if enqueue_many else q.enqueue
        ops = [op for tl in lists for op in [enqueue(tl)] * threads_per_list]
        add_queue_runner(QueueRunner(q, ops))
        dequeued = (q.dequeue_up_to(batch_size) if smaller
                    else q.dequeue_many(batch_size))
    return _as_original_type(original, dequeued)


def _kept_rows(lists, keep_input, enqueue_many: bool, g, what: str) -> list:
    """Each list's examples as rows, only those `keep_input` keeps (TF1's maybe_*
    batchers): a scalar keeps all of a run's examples or none, a vector (with
    enqueue_many) picks rows.

    Raises:
        ValueError: keep_input is neither a scalar nor a vector, or a vector without
            enqueue_many.
    """
    keep = _g.convert_to_tensor(keep_input, DType.BOOL, g)
    if keep.dtype != DType.BOOL:
        raise TypeError(f"{what}: keep_input must be a bool tensor, got "
                        f"{keep.dtype.short_name}")
    rank = None if keep.shape is None else len(keep.shape)
    if rank not in (0, 1) or (rank == 1 and not enqueue_many):
        raise ValueError(f"{what}: keep_input must be a scalar, or a vector with "
                         f"enqueue_many=True, got shape {keep.shape}")
    out = []
    for tl in lists:
        rows = tl if enqueue_many else [api.expand_dims(t, 0) for t in tl]
        mask = keep if rank == 1 else api.tile(
            api.reshape(keep, [1]), api.reshape(g.op("Shape", [rows[0]],
                                                     {"start": 0, "end": 1}), [1]))
        out.append([api_extra.boolean_mask(t, mask) for t in rows])
    return out


def _refuse_dynamic_pad(dynamic_pad, what: str) -> None:
    """Raises TypeError unless dynamic_pad is a bool, ValueError if it is True."""
    if _bool_arg(dynamic_pad, f"{what}: dynamic_pad"):
        raise ValueError(f"{what}: dynamic_pad=True is not supported: onegraph has no "
                         "padding queue (TF1's PaddingFIFOQueue); give examples fully "
                         "defined shapes, or pad them to one shape before batching")


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False,
          shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
          shared_name=None, name=None):
    """Batches of `batch_size` examples, in the order they were enqueued (TF1's
    tf.train.batch).

    `num_threads` threads run the enqueue of `tensors` into a FIFOQueue (a
    QueueRunner in QUEUE_RUNNERS); the result dequeues `batch_size` elements.

    Args:
        tensors: one example: a list, tuple or dict of tensors (or a single tensor);
            with enqueue_many, a batch of examples along axis 0.
        batch_size: an int >= 1 or a scalar integer tensor.
        num_threads: enqueue threads (more than one makes the order nondeterministic).
        capacity: the queue's capacity.
        enqueue_many: each tensor holds many examples along axis 0.
        shapes: the per-example shape of each tensor, if not statically known.
        dynamic_pad: must be False (refused: no padding queue).
        allow_smaller_final_batch: once the input has ended, return the last
            1..batch_size-1 examples as a smaller batch instead of dropping them (the
            batch dim is then statically unknown).
        shared_name: the queue's Session-state key.
        name: name scope (default "batch").

    Returns:
        The batch in the structure of `tensors` (a dict for a dict; a single tensor
        for one tensor or a one-element list), each with a new leading batch dim.

    Raises:
        TypeError: an argument has the wrong type (tensors, an int or bool option,
            shapes), or name is not a str.
        ValueError: tensors is empty, batch_size, num_threads or capacity is below
            1, a shape is unknown or not fully defined (without shapes=), shapes
            has the wrong length, enqueue_many with a scalar, or dynamic_pad=True.
        ShapeError: shapes contradicts a tensor's static shape.
    """
    _refuse_dynamic_pad(dynamic_pad, "batch")
    num_threads = _int_arg(num_threads, "batch: num_threads", 1)
    lists = [_as_tensor_list(tensors, "batch")]
    return _make_batch("batch", lists, tensors, batch_size, capacity, enqueue_many,
                       shapes, allow_smaller_final_batch, shared_name, name, num_threads)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None,
               name=None):
    """As `batch`, with one enqueue thread per entry of `tensors_list` (e.g. one
    reader per file), all feeding one FIFOQueue (TF1's tf.train.batch_join).

    Args:
        tensors_list: a list of examples (lists or dicts of tensors), alike in
            dtypes and per-example shapes.

    Returns:
        The batch in the structure of tensors_list[0].

    Raises:
        TypeError: the examples' dtypes differ; or as `batch`.
        ValueError: tensors_list is empty or its entries differ in length, keys or
            shapes; or as `batch`.
    """
    _refuse_dynamic_pad(dynamic_pad, "batch_join")
    lists = _as_tensor_list_list(tensors_list, "batch_join")
    return _make_batch("batch_join", lists, tensors_list[0], batch_size, capacity,
                       enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                       1)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1,
                  seed=None, enqueue_many=False, shapes=None,
                  allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `batch_size` examples drawn at random from a RandomShuffleQueue
    (TF1's tf.train.shuffle_batch); arguments as `batch`.

    Args:
        capacity: the queue's capacity (> min_after_dequeue).
        min_after_dequeue: the fewest examples left after a dequeue while the input
            lasts (more mixing, more memory and start-up time).
        seed: seed of the queue's shuffling (None: from the graph seed).

    Raises:
        TypeError: min_after_dequeue or seed is not an int; or as `batch`.
        ValueError: min_after_dequeue is negative or not below capacity; or as
            `batch`.
    """
    num_threads = _int_arg(num_threads, "shuffle_batch: num_threads", 1)
    lists = [_as_tensor_list(tensors, "shuffle_batch")]
    return _make_batch("shuffle_batch", lists, tensors, batch_size, capacity,
                       enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                       num_threads, min_after_dequeue=min_after_dequeue, seed=seed)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """As `shuffle_batch`, with one enqueue thread per entry of `tensors_list`
    (TF1's tf.train.shuffle_batch_join); arguments as `batch_join`.

    Raises:
        As `batch_join` and `shuffle_batch`.
    """
    lists = _as_tensor_list_list(tensors_list, "shuffle_batch_join")
    return _make_batch("shuffle_batch_join", lists, tensors_list[0], batch_size,
                       capacity, enqueue_many, shapes, allow_smaller_final_batch,
                       shared_name, name, 1, min_after_dequeue=min_after_dequeue,
                       seed=seed)


__all__ = ["limit_epochs", "input_producer", "string_input_producer",
           "range_input_producer", "slice_input_producer", "batch", "batch_join",
           "shuffle_batch", "shuffle_batch_join"]

"""TF1's filtering batchers: og.train.maybe_batch, maybe_batch_join, maybe_shuffle_batch
and maybe_shuffle_batch_join.

Each is its batcher of train/input_pipeline.py with `keep_input`: a bool scalar that
keeps or drops a run's examples (all of them with enqueue_many), or, with
enqueue_many, a bool vector that keeps the rows it marks. Dropped examples never
reach the queue, so a batch holds kept examples only.
"""

from __future__ import annotations

from .input_pipeline import (_as_tensor_list, _as_tensor_list_list, _int_arg, _make_batch,
                             _refuse_dynamic_pad)

_KEEP_RAISES = """Raises:
        TypeError: keep_input is not a bool tensor or value; or as og.train.{base}.
        ValueError: keep_input is neither a scalar nor a vector, or a vector without
            enqueue_many; or as og.train.{base}."""


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32,
                enqueue_many=False, shapes=None, dynamic_pad=False,
                allow_smaller_final_batch=False, shared_name=None, name=None):
    _refuse_dynamic_pad(dynamic_pad, "maybe_batch")
    num_threads = _int_arg(num_threads, "maybe_batch: num_threads", 1)
    lists = [_as_tensor_list(tensors, "maybe_batch")]
    return _make_batch("maybe_batch", lists, tensors, batch_size, capacity, enqueue_many,
                       shapes, allow_smaller_final_batch, shared_name, name, num_threads,
                       keep_input=keep_input)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32,
                     enqueue_many=False, shapes=None, dynamic_pad=False,
                     allow_smaller_final_batch=False, shared_name=None, name=None):
    _refuse_dynamic_pad(dynamic_pad, "maybe_batch_join")
    lists = _as_tensor_list_list(tensors_list, "maybe_batch_join")
    return _make_batch("maybe_batch_join", lists, tensors_list[0], batch_size, capacity,
                       enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                       1, keep_input=keep_input)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    num_threads = _int_arg(num_threads, "maybe_shuffle_batch: num_threads", 1)
    lists = [_as_tensor_list(tensors, "maybe_shuffle_batch")]
    return _make_batch("maybe_shuffle_batch", lists, tensors, batch_size, capacity,
                       enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                       num_threads, min_after_dequeue=min_after_dequeue, seed=seed,
                       keep_input=keep_input)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                             keep_input, seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    lists = _as_tensor_list_list(tensors_list, "maybe_shuffle_batch_join")
    return _make_batch("maybe_shuffle_batch_join", lists, tensors_list[0], batch_size,
                       capacity, enqueue_many, shapes, allow_smaller_final_batch,
                       shared_name, name, 1, min_after_dequeue=min_after_dequeue,
                       seed=seed, keep_input=keep_input)


for _fn, _base in ((maybe_batch, "batch"), (maybe_batch_join, "batch_join"),
                   (maybe_shuffle_batch, "shuffle_batch"),
                   (maybe_shuffle_batch_join, "shuffle_batch_join")):
    _fn.__doc__ = (f"og.train.{_base} of the examples `keep_input` keeps (TF1's "
                   f"tf.train.{_fn.__name__}): a bool scalar keeps or drops a run's "
                   f"examples, a bool vector (with enqueue_many) the rows it marks; the "
                   f"other arguments are {_base}'s.\n\n    "
                   + _KEEP_RAISES.format(base=_base) + "\n    ")

__all__ = ["maybe_batch", "maybe_batch_join", "maybe_shuffle_batch",
           "maybe_shuffle_batch_join"]

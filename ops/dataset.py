"""Operators: TF's dataset iterator ops (onegraph domain): iterators over the Python-side
input pipelines of train/data.py, kept per session.

A pipeline cannot be stored in a graph file, so the nodes hold a `token` string; the
pipeline's opener (a callable taking the values of the graph tensors the pipeline
reads and returning a Python iterator of elements, each a list of arrays) lives in this
module's process-wide registry (token -> opener, as TF's FuncRegistry). A graph run
where its token was never registered (loaded from a file) fails, naming the token.

MakeIterator opens the pipeline and keeps the Python iterator in the session's state
under the iterator's key (attr `iterator`), replacing any earlier one (TF1's
initializer restarts the iterator). IteratorGetNext returns the next element's
components; at the end it raises OutOfRangeError ("End of sequence"). A one-shot
iterator's IteratorGetNext carries its pipeline's token and opens it itself on first
use in a session; an initializable one (empty token) fails until initialized.

Feedable iterators (TF1's string handles): IteratorToStringHandle returns a str naming
its iterator and records, in the session's state, the iterator's key, token and
declared types and shapes under it. IteratorGetNextFromStringHandle reads the element of
the iterator its fed handle names: a handle this session never made fails, as do
declared types or shapes that do not fit the named iterator's (TF: NotFound /
InvalidArgument).
"""

from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from ..errors import ExecutionError, OneGraphError, OutOfRangeError
from ..format import DType
from .process_registry import ProcessRegistry
from .queue import decode_shapes
from .record_io import RecordFileWriter
from .registry import TensorInfo, define

DOMAIN = "onegraph"

# token -> opener(values) -> iterator of elements
_OPENERS = ProcessRegistry("input pipeline", "a tf.data pipeline is not saved with the "
                           "graph: its graph was deleted, or the model was loaded from a "
                           "file; build the dataset and its iterator again here")

NOT_INITIALIZED = ("GetNext() failed because the iterator has not been initialized. Ensure "
                   "that you have run the initializer operation for this iterator before "
                   "getting the next element.")


def register(opener: Callable) -> str:
    """Keep `opener` in the process-wide registry under a new token and return the
    token.

    Raises:
        TypeError: opener is not callable.
    """
    if not callable(opener):
        raise TypeError(f"dataset registry: opener must be callable, got "
                        f"{type(opener).__name__}")
    return _OPENERS.register(opener)


def unregister(token: str) -> None:
    """Drop `token`'s pipeline (its graph is gone). Never raises."""
    _OPENERS.unregister(token)


def _opener(token: str) -> Callable:
    return _OPENERS.get(token)


class _Live:
    """A session's open iterator: the Python iterator and the lock serialising it."""

    def __init__(self, elements):
        self.elements = elements
        self.lock = threading.Lock()


def _open(token: str, values: list) -> _Live:
    try:
        return _Live(iter(_opener(token)(list(values))))
    except OneGraphError:
        raise
    except Exception as e:
        raise ExecutionError(f"opening the input pipeline failed: {type(e).__name__}: "
                             f"{e}") from e


def _make_iterator(inputs, attrs, ctx):
    """(Re)start the session's iterator `attrs['iterator']` on the pipeline `token`."""
    live = _open(attrs["token"], inputs)
    ctx.state[("dataset_iterator", attrs["iterator"])] = live
    return ()


def _expected(attrs) -> tuple[list, list]:
    dtypes = [DType.parse(t).numpy for t in attrs["output_types"]]
    shapes = decode_shapes(attrs["output_ranks"], attrs["output_dims"])
    if len(shapes) != len(dtypes):
        raise ExecutionError(f"IteratorGetNext: {len(dtypes)} output_types but "
                             f"{len(shapes)} output shapes")
    return dtypes, shapes


def _check(element, dtypes, shapes) -> tuple:
    """The element's components, checked against the declared dtypes and shapes.

    Raises:
        ExecutionError: the wrong number of components, a dtype or shape differs.
    """
    if len(element) != len(dtypes):
        raise ExecutionError(f"IteratorGetNext: the element has {len(element)} components, "
                             f"the iterator {len(dtypes)}")
    out = []
    for k, (value, dtype, shape) in enumerate(zip(element, dtypes, shapes)):
        value = np.asarray(value)
        if value.dtype != dtype:
            raise ExecutionError(f"IteratorGetNext: component {k} has dtype {value.dtype}, "
                                 f"the iterator expects {dtype}")
        if shape is not None and (len(shape) != value.ndim or any(
                d is not None and d != s for d, s in zip(shape, value.shape))):
            raise ExecutionError(f"IteratorGetNext: component {k} has shape "
                                 f"{list(value.shape)}, the iterator expects "
                                 f"{['?' if d is None else d for d in shape]}")
        out.append(value)
    return tuple(out)


def _get_next(inputs, attrs, ctx):
    """The next element of the session's iterator `attrs['iterator']`."""
    dtypes, shapes = _expected(attrs)
    return _next_of(ctx.state, attrs["iterator"], attrs["token"], dtypes, shapes)


def _next_of(state, iterator: str, token: str, dtypes, shapes) -> tuple:
    key = ("dataset_iterator", iterator)
    live = state.get(key)
    if live is None:
        if not token:
            raise ExecutionError(NOT_INITIALIZED)
        with _OPENERS.lock:  # a one-shot iterator opens once, whichever thread is first
            live = state.get(key)
            if live is None:
                live = state[key] = _open(token, [])
    with live.lock:
        try:
            element = next(live.elements)
        except StopIteration:
            raise OutOfRangeError("End of sequence") from None
        except OneGraphError:
            raise
        except Exception as e:
            raise ExecutionError(f"the input pipeline raised {type(e).__name__}: {e}") from e
    return _check(element, dtypes, shapes)


HANDLE_PREFIX = "onegraph-iterator:"


def _to_string_handle(inputs, attrs, ctx):
    """A str naming the iterator `attrs['iterator']` in this session (kept in its state
    with the iterator's token and declared types and shapes)."""
    handle = HANDLE_PREFIX + attrs["iterator"]
    ctx.state[("dataset_handle", handle)] = (attrs["iterator"], attrs["token"],
                                             _expected(attrs))
    return (np.asarray(handle, object),)


def _handle_text(value, what: str = "string_handle") -> str:
    value = np.asarray(value)
    if value.ndim != 0 or value.dtype != object:
        raise ExecutionError(f"{what} must be a scalar string, got an array of "
                             f"shape {list(value.shape)}")
    text = value[()]
    return text.decode("utf-8", "surrogateescape") if isinstance(text, bytes) else str(text)


def _fits(dtypes, shapes, want_dtypes, want_shapes) -> None:
    """Check a feedable iterator's declared types and shapes against those of the
    iterator its handle names.

    Raises:
        ExecutionError: the number of components, a dtype or a shape differs.
    """
    if len(dtypes) != len(want_dtypes):
        raise ExecutionError(f"Number of components does not match: expected "
                             f"{len(want_dtypes)} types but got {len(dtypes)}")
    for k, (d, w) in enumerate(zip(dtypes, want_dtypes)):
        if d != w:
            raise ExecutionError(f"Data type mismatch at component {k}: expected "
                                 f"{np.dtype(w).name} but got {np.dtype(d).name}")
    for k, (s, w) in enumerate(zip(shapes, want_shapes)):
        if w is not None and s is not None and (len(s) != len(w) or any(
                a is not None and b is not None and a != b for a, b in zip(s, w))):
            raise ExecutionError(f"Incompatible shapes at component {k}: expected "
                                 f"{_text(w)} but got {_text(s)}")


def _text(shape) -> str:
    return str(["?" if d is None else d for d in shape])


def _get_next_from_handle(inputs, attrs, ctx):
    """The next element of the iterator the fed string handle names in this session."""
    handle = _handle_text(inputs[0])
    named = ctx.state.get(("dataset_handle", handle))
    if named is None:
        raise ExecutionError(f"string handle {handle!r:.120} names no iterator of this "
                             "session (run the iterator's string_handle() in this session "
                             "and feed its value)")
    iterator, token, (their_dtypes, their_shapes) = named
    dtypes, shapes = _expected(attrs)
    _fits(their_dtypes, their_shapes, dtypes, shapes)
    return _next_of(ctx.state, iterator, token, dtypes, shapes)


def _infer_next(attrs, inputs):
    dtypes, shapes = _expected(attrs)
    return [TensorInfo(np.dtype(d), s) for d, s in zip(dtypes, shapes)]


def _single_element(inputs, attrs, ctx):
    """The one element of the pipeline `token` (TF's DatasetToSingleElement)."""
    dtypes, shapes = _expected(attrs)
    elements = _open(attrs["token"], inputs).elements
    try:
        element = next(elements, None)
        if element is None:
            raise ExecutionError("Dataset was empty.")
        if next(elements, None) is not None:
            raise ExecutionError("Dataset had more than one element.")
    except OneGraphError:
        raise
    except Exception as e:
        raise ExecutionError(f"the input pipeline raised {type(e).__name__}: {e}") from e
    return _check(element, dtypes, shapes)


def _to_tfrecord(inputs, attrs, ctx):
    """Write the pipeline's scalar string elements to a TFRecord file (TF's
    DatasetToTFRecord); the file appears whole or not at all."""
    name = _handle_text(inputs[0], "DatasetToTFRecord: filename")
    elements = _open(attrs["token"], inputs[1:]).elements
    writer = RecordFileWriter(name, attrs["compression_type"])
    try:
        for (value,) in elements:
            record = value[()] if isinstance(value, np.ndarray) else value
            writer.write(record if isinstance(record, bytes) else
                         str(record).encode("utf-8", "surrogateescape"))
    except BaseException:
        writer.discard()
        raise
    writer.close()
    return ()


_STATEFUL = dict(domain=DOMAIN, stateful=True)

OPS = (
    define("IteratorGetNext", [], ["components*"], _get_next,
           [("iterator", "string"), ("token", "string", ""), ("output_types", "strings", ()),
            ("output_ranks", "ints", ()), ("output_dims", "ints", ())],
           infer=_infer_next, doc="the next element of a tf.data iterator", **_STATEFUL),
    define("IteratorToStringHandle", [], ["handle"], _to_string_handle,
           [("iterator", "string"), ("token", "string", ""), ("output_types", "strings", ()),
            ("output_ranks", "ints", ()), ("output_dims", "ints", ())],
           infer=lambda a, i: [TensorInfo(np.dtype(object), ())],
           doc="a string naming a tf.data iterator in the session", **_STATEFUL),
    define("IteratorGetNextFromStringHandle", ["string_handle"], ["components*"],
           _get_next_from_handle,
           [("output_types", "strings", ()), ("output_ranks", "ints", ()),
            ("output_dims", "ints", ())],
           infer=_infer_next, doc="the next element of the tf.data iterator a string "
           "handle names", **_STATEFUL),
    define("DatasetToSingleElement", ["inputs*"], ["components*"], _single_element,
           [("token", "string"), ("output_types", "strings", ()),
            ("output_ranks", "ints", ()), ("output_dims", "ints", ())],
           infer=_infer_next, doc="the one element of a tf.data pipeline", **_STATEFUL),
    define("DatasetToTFRecord", ["filename", "inputs*"], [], _to_tfrecord,
           [("token", "string"), ("compression_type", "string", "")],
           infer=lambda a, i: [], doc="write a tf.data pipeline of strings to a TFRecord "
           "file", **_STATEFUL),
    define("MakeIterator", ["inputs*"], [], _make_iterator,
           [("iterator", "string"), ("token", "string")], infer=lambda a, i: [],
           doc="(re)start a tf.data iterator on a pipeline", **_STATEFUL),
)

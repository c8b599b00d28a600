"""TF1's queue-based readers (tf.TFRecordReader, tf.TextLineReader, ...): the input path
before tf.data::

    filename_queue = og.train.string_input_producer(["a.tfrecord", "b.tfrecord"],
                                                    num_epochs=1)
    reader = og.TFRecordReader()
    key, value = reader.read(filename_queue)   # "a.tfrecord:0", the first record

The reader lives in the Session (ops/readers.py): each run of `read` returns the next
record, opening the next file from the queue when one is used up; once the queue is
closed and empty it raises OutOfRangeError. Keys are TF's ("<file>:<n>", see
ops/readers.py); values are bytes. Readers cannot serialize their state
(supports_serialize is False).
"""

from __future__ import annotations

import numpy as np

from ..errors import UnimplementedError
from ..format import DType
from . import graph as _g
from .graph import Operation, Tensor
from .record_compression import TFRecordOptions, as_options, compression_name

__all__ = ["FixedLengthRecordReader", "IdentityReader", "ReaderBase", "TFRecordReader",
           "TextLineReader", "WholeFileReader"]


def _queue_handle(queue, what: str) -> Tensor:
    """The handle tensor of a queue object (anything with `.handle`) or a handle tensor.

    Raises:
        TypeError: queue is neither.
    """
    handle = getattr(queue, "handle", queue)
    if not isinstance(handle, Tensor):
        raise TypeError(f"{what}: queue must be a queue (e.g. og.FIFOQueue) or its handle, "
                        f"got {type(queue).__name__}")
    return handle


def _non_negative(value, what: str, name: str, positive: bool = False) -> int:
    """value as an int (> 0 if `positive`, else >= 0).

    Raises:
        TypeError: value is not an integer.
        ValueError: value is out of range.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what}: {name} must be an integer, got {value!r:.40}")
    if value < (1 if positive else 0):
        raise ValueError(f"{what}: {name} must be {'positive' if positive else '>= 0'}, "
                         f"got {int(value)}")
    return int(value)


class ReaderBase:
    """A reader of records from work units (file names) taken from a queue (TF1's
    tf.ReaderBase). Construct one of the subclasses.

    Args:
        reader_ref: the reader op's handle tensor.
        supports_serialize: whether serialize_state works (never here).
    """

    _op_type = ""

    def __init__(self, reader_ref: Tensor, supports_serialize: bool = False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize
        self.graph = reader_ref.graph if hasattr(reader_ref, "graph") else \
            _g.get_default_graph()

    @classmethod
    def _make(cls, name, attrs: dict) -> Tensor:
        """The reader op (named `name` or the op type), shared under its own name."""
        g = _g.get_default_graph()
        full = g.unique_name(name or cls._op_type)
        g._used_names.discard(full)  # create the op under exactly this (scoped) name
        saved, g._scope = g._scope, []
        try:
            return g.op(cls._op_type, [], {"shared_name": full, **attrs}, name=full)
        finally:
            g._scope = saved

    @property
    def reader_ref(self) -> Tensor:
        """The reader's handle tensor."""
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        """Whether the reader can serialize its state (False)."""
        return self._supports_serialize

    def read(self, queue, name=None) -> tuple[Tensor, Tensor]:
        """(key, value) string scalars of the next record; opens the next work unit
        from `queue` as needed (OutOfRangeError at run time once it is closed and
        empty).

        Raises:
            TypeError: queue is not a queue or a queue handle.
        """
        handle = _queue_handle(queue, f"{type(self).__name__}.read")
        return tuple(self.graph.op("ReaderRead", [self._reader_ref, handle], num_outputs=2,
                                   name=name or "ReaderRead",
                                   dtypes=[DType.STRING] * 2, shapes=[()] * 2))

    def read_up_to(self, queue, num_records, name=None) -> tuple[Tensor, Tensor]:
        """(keys, values) 1-D string tensors of up to num_records records, all from one
        work unit (fewer when it ends first).

        Raises:
            TypeError: queue is not a queue or a queue handle, or num_records is not an
                integer (or integer tensor).
            ValueError: num_records is not positive.
        """
        what = f"{type(self).__name__}.read_up_to"
        handle = _queue_handle(queue, what)
        if isinstance(num_records, Tensor):
            n = num_records
        else:
            n = self.graph.constant(np.asarray(
                _non_negative(num_records, what, "num_records", positive=True), np.int64))
        return tuple(self.graph.op("ReaderReadUpTo", [self._reader_ref, handle, n],
                                   num_outputs=2, name=name or "ReaderReadUpTo",
                                   dtypes=[DType.STRING] * 2, shapes=[(None,)] * 2))

    def num_records_produced(self, name=None) -> Tensor:
        """int64 scalar: records read since the start or the last reset."""
        return self.graph.op("ReaderNumRecordsProduced", [self._reader_ref],
                             name=name or "ReaderNumRecordsProduced")

    def num_work_units_completed(self, name=None) -> Tensor:
        """int64 scalar: work units finished since the start or the last reset."""
        return self.graph.op("ReaderNumWorkUnitsCompleted", [self._reader_ref],
                             name=name or "ReaderNumWorkUnitsCompleted")

    def reset(self, name=None) -> Operation:
        """An op closing the open work unit and zeroing both counters (the next read
        takes a new work unit from the queue)."""
        return self.graph.op("ReaderReset", [self._reader_ref], name=name or "ReaderReset")

    def serialize_state(self, name=None):
        """Not supported: raises UnimplementedError (supports_serialize is False)."""
        raise UnimplementedError(f"{type(self).__name__} does not support serializing its "
                                 "state")

    def restore_state(self, state, name=None):
        """Not supported: raises UnimplementedError (supports_serialize is False)."""
        raise UnimplementedError(f"{type(self).__name__} does not support restoring its "
                                 "state")


class TFRecordReader(ReaderBase):
    """Reads the records of TFRecord files; key "<file>:<byte offset of the record>".

    Args:
        name: the reader op's name.
        options: None, "ZLIB", "GZIP" or a TFRecordOptions (the files' compression).

    Raises:
        ValueError: options is not a valid compression.
    """

    _op_type = "TFRecordReader"

    def __init__(self, name=None, options=None):
        kind = TFRecordOptions.get_compression_type_string(as_options(options,
                                                                      "TFRecordReader"))
        super().__init__(self._make(name, {"compression": kind}))


class TextLineReader(ReaderBase):
    """Reads the lines of text files (without "\\n" / "\\r\\n"); key "<file>:<line
    number from 1>".

    Args:
        skip_header_lines: lines to skip at the start of each file.
        name: the reader op's name.

    Raises:
        TypeError, ValueError: skip_header_lines is not an integer >= 0.
    """

    _op_type = "TextLineReader"

    def __init__(self, skip_header_lines=None, name=None):
        skip = 0 if skip_header_lines is None else _non_negative(
            skip_header_lines, "TextLineReader", "skip_header_lines")
        super().__init__(self._make(name, {"skip_header_lines": skip}))


class WholeFileReader(ReaderBase):
    """Reads each file whole: key the file name, value its bytes."""

    _op_type = "WholeFileReader"

    def __init__(self, name=None):
        super().__init__(self._make(name, {}))


class IdentityReader(ReaderBase):
    """Returns each work unit as both key and value."""

    _op_type = "IdentityReader"

    def __init__(self, name=None):
        super().__init__(self._make(name, {}))


class FixedLengthRecordReader(ReaderBase):
    """Reads records of record_bytes bytes: after header_bytes, one every hop_bytes
    (0: back to back), none reaching into the last footer_bytes; key "<file>:<record
    index>". A file not made of whole records ends early (TF's reader).

    Args:
        record_bytes: bytes per record (> 0).
        header_bytes, footer_bytes, hop_bytes: >= 0.
        name: the reader op's name.
        encoding: None, "", "ZLIB" or "GZIP": the files' compression.

    Raises:
        TypeError: a size is not an integer.
        ValueError: a size is out of range or encoding is not valid.
    """

    _op_type = "FixedLengthRecordReader"

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        what = "FixedLengthRecordReader"
        attrs = {"record_bytes": _non_negative(record_bytes, what, "record_bytes", True)}
        for key, value in (("header_bytes", header_bytes), ("footer_bytes", footer_bytes),
                           ("hop_bytes", hop_bytes)):
            attrs[key] = 0 if value is None else _non_negative(value, what, key)
        attrs["encoding"] = compression_name(encoding, what)
        super().__init__(self._make(name, attrs))

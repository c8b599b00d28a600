"""Operators: TF1's queue-based file readers (onegraph domain).

A reader op (TFRecordReader, TextLineReader, WholeFileReader, FixedLengthRecordReader,
IdentityReader) yields a handle to a reader kept in the Session's state (keyed by
`shared_name`, as the queues of ops/queue.py), so its position carries over from step
to step. ReaderRead takes the handle and a queue of file names (a "work unit" each):
with no file open it dequeues the next name (blocking as the queue's dequeue does; a
closed, empty queue raises OutOfRangeError) and returns the next record as (key,
value). ReaderReadUpTo returns up to n records of one work unit. Keys are TF's:
"<file>:<byte offset>" (TFRecord), "<file>:<line number from 1>" (text lines),
"<file>:<record index>" (fixed length), the name itself (whole file, identity).
Values are bytes (IdentityReader's: the work unit, as text).
"""

from __future__ import annotations

import os
import threading

import numpy as np

from ..errors import ExecutionError
from .record_io import raw_lines, read_records, read_whole
from .registry import TensorInfo, define

DOMAIN = "onegraph"
_CREATE_LOCK = threading.Lock()


# --- the records of one work unit, per kind of reader ---------------------------------------

def _tfrecord_records(name: str, attrs):
    """(key, value) per record: key "<name>:<offset of the record in the stream>"."""
    offset = 0
    for record in read_records(name, attrs["compression"]):
        yield f"{name}:{offset}", record
        offset += 16 + len(record)  # length, its CRC, data, its CRC


def _text_records(name: str, attrs):
    """(key, line) per line after the first skip_header_lines: key "<name>:<line
    number>" (counted from 1, skipped lines included); "\\n" or "\\r\\n" removed."""
    skip = attrs["skip_header_lines"]
    for number, line in enumerate(raw_lines(name, ""), 1):
        if number > skip:
            yield f"{name}:{number}", line[:-1] if line.endswith(b"\r") else line


def _whole_file(name: str, attrs):
    """One record: the file's name and its whole content."""
    with open(name, "rb") as f:
        yield name, f.read()


def _identity(name: str, attrs):
    """One record: the work unit as key and value."""
    yield name, name


def _fixed_records(name: str, attrs):
    """(key, record) per record of record_bytes bytes, one every hop_bytes (0: every
    record_bytes) after header_bytes, none reaching into the last footer_bytes; key
    "<name>:<index>". A body not made of whole records ends early, as TF's reader."""
    size, header, footer = attrs["record_bytes"], attrs["header_bytes"], attrs["footer_bytes"]
    step = attrs["hop_bytes"] or size
    encoding = attrs["encoding"]
    if encoding:
        data = read_whole(name, encoding)  # the footer is only known at the stream's end
        end = len(data) - footer
        read = lambda at: data[at:at + size]  # noqa: E731 - a view of the whole stream
        yield from _fixed_from(name, read, header, end, size, step)
        return
    with open(name, "rb") as f:
        end = os.fstat(f.fileno()).st_size - footer

        def read(at):
            f.seek(at)
            return f.read(size)
        yield from _fixed_from(name, read, header, end, size, step)


def _fixed_from(name, read, start, end, size, step):
    index, at = 0, start
    while at + size <= end:
        yield f"{name}:{index}", read(at)
        index += 1
        at += step


# one record per work unit for these: the unit is done as soon as it is read
_KINDS = {"TFRecordReader": (_tfrecord_records, False),
          "TextLineReader": (_text_records, False),
          "WholeFileReader": (_whole_file, True),
          "IdentityReader": (_identity, True),
          "FixedLengthRecordReader": (_fixed_records, False)}


class Reader:
    """A reader's state in a Session: the open work unit and its counters.

    Args:
        kind: one of the reader op types.
        attrs: the reader op's attributes (its settings).
    """

    def __init__(self, kind: str, attrs):
        self.kind, self.attrs = kind, dict(attrs)
        self.records_of, self.single = _KINDS[kind]
        self.lock = threading.Lock()
        self.records = None     # the open work unit's records (an iterator), or None
        self.produced = 0
        self.completed = 0

    def read_up_to(self, queue, n: int) -> list[tuple]:
        """Up to n (key, value) records of one work unit (at least one), opening work
        units from `queue` as needed.

        Raises:
            OutOfRangeError: the queue is closed and empty (as its dequeue).
            CancelledError: the queue's Session was closed.
            ExecutionError: the queue does not hold one string per element.
            DataLossError, OSError: a file is damaged or cannot be read.
        """
        with self.lock:
            while True:
                if self.records is None:
                    self.records = iter(self.records_of(self._next_unit(queue), self.attrs))
                got = []
                for record in self.records:
                    got.append(record)
                    if len(got) == n:
                        break
                if self.single or len(got) < n:
                    self.records = None
                    self.completed += 1
                if got:
                    self.produced += len(got)
                    return got

    def _next_unit(self, queue) -> str:
        if getattr(queue, "num_components", None) != 1:
            raise ExecutionError(f"{self.kind}: the work queue must be a queue of one string "
                                 f"component (file names), got {type(queue).__name__}")
        (element,) = queue.dequeue_many(1)
        unit = element[0].item() if isinstance(element[0], np.ndarray) else element[0]
        if isinstance(unit, bytes):
            unit = unit.decode("utf-8")
        if not isinstance(unit, str):
            raise ExecutionError(f"{self.kind}: the work queue must hold strings, got "
                                 f"{type(unit).__name__}")
        return unit

    def reset(self) -> None:
        """Back to the start: no work unit open, both counters 0."""
        with self.lock:
            self.records, self.produced, self.completed = None, 0, 0


# --- kernels -------------------------------------------------------------------------------

def _reader_kernel(kind: str):
    def kernel(inputs, attrs, ctx):
        """The session's reader named attrs['shared_name'] (made on first use)."""
        key = ("reader", attrs["shared_name"])
        reader = ctx.state.get(key)
        if reader is None:
            with _CREATE_LOCK:
                reader = ctx.state.get(key)
                if reader is None:
                    reader = ctx.state[key] = Reader(kind, attrs)
        if reader.kind != kind or reader.attrs != dict(attrs):
            raise ExecutionError(f"shared reader {attrs['shared_name']!r} is a {reader.kind} "
                                 f"with settings {reader.attrs}, but this op asks for a "
                                 f"{kind} with {dict(attrs)}")
        return (reader,)
    return kernel


def _r(x) -> Reader:
    if not isinstance(x, Reader):
        raise ExecutionError(f"expected a reader handle, got {type(x).__name__}")
    return x


def _strings(values) -> np.ndarray:
    out = np.empty(len(values), object)
    out[:] = values
    return out


def _scalar(value) -> np.ndarray:
    out = np.empty((), object)
    out[()] = value
    return out


def _read(inputs, attrs, ctx):
    """The next record of the reader (input 0) as (key, value)."""
    ((key, value),) = _r(inputs[0]).read_up_to(inputs[1], 1)
    return _scalar(key), _scalar(value)


def _read_up_to(inputs, attrs, ctx):
    """Up to num_records records of one work unit, as 1-D keys and values."""
    n = np.asarray(inputs[2])
    if n.ndim != 0 or n.dtype.kind not in "iu":
        raise ExecutionError(f"ReaderReadUpTo: num_records must be an integer scalar, got "
                             f"{n.dtype} of shape {list(n.shape)}")
    if int(n) <= 0:
        raise ExecutionError(f"ReaderReadUpTo: num_records must be positive, got {int(n)}")
    got = _r(inputs[0]).read_up_to(inputs[1], int(n))
    return _strings([k for k, _ in got]), _strings([v for _, v in got])


def _produced(inputs, attrs, ctx):
    return (np.asarray(_r(inputs[0]).produced, np.int64),)


def _completed(inputs, attrs, ctx):
    return (np.asarray(_r(inputs[0]).completed, np.int64),)


def _reset(inputs, attrs, ctx):
    _r(inputs[0]).reset()
    return ()


def _string_outputs(rank):
    shape = () if rank == 0 else (None,)
    return lambda attrs, inputs: [TensorInfo(np.dtype(object), shape)] * 2


_INT64 = lambda attrs, inputs: [TensorInfo(np.dtype(np.int64), ())]  # noqa: E731
_HANDLE = lambda attrs, inputs: [TensorInfo(None, None)]  # noqa: E731
_STATEFUL = dict(domain=DOMAIN, stateful=True)
_SHARED = (("shared_name", "string"),)

OPS = tuple(sorted((
    define("TFRecordReader", [], ["handle"], _reader_kernel("TFRecordReader"),
           _SHARED + (("compression", "string", ""),), infer=_HANDLE,
           doc="a reader of the records of TFRecord files", **_STATEFUL),
    define("TextLineReader", [], ["handle"], _reader_kernel("TextLineReader"),
           _SHARED + (("skip_header_lines", "int", 0),), infer=_HANDLE,
           doc="a reader of the lines of text files", **_STATEFUL),
    define("WholeFileReader", [], ["handle"], _reader_kernel("WholeFileReader"), _SHARED,
           infer=_HANDLE, doc="a reader of whole files", **_STATEFUL),
    define("IdentityReader", [], ["handle"], _reader_kernel("IdentityReader"), _SHARED,
           infer=_HANDLE, doc="a reader giving each work unit as key and value",
           **_STATEFUL),
    define("FixedLengthRecordReader", [], ["handle"],
           _reader_kernel("FixedLengthRecordReader"),
           _SHARED + (("record_bytes", "int"), ("header_bytes", "int", 0),
                      ("footer_bytes", "int", 0), ("hop_bytes", "int", 0),
                      ("encoding", "string", "")), infer=_HANDLE,
           doc="a reader of fixed-length records", **_STATEFUL),
    define("ReaderRead", ["handle", "queue"], ["key", "value"], _read,
           infer=_string_outputs(0), doc="the next record (key, value)", **_STATEFUL),
    define("ReaderReadUpTo", ["handle", "queue", "num_records"], ["keys", "values"],
           _read_up_to, infer=_string_outputs(1),
           doc="up to num_records records of one work unit", **_STATEFUL),
    define("ReaderNumRecordsProduced", ["handle"], ["count"], _produced, infer=_INT64,
           doc="records read since the start or the last reset", **_STATEFUL),
    define("ReaderNumWorkUnitsCompleted", ["handle"], ["count"], _completed, infer=_INT64,
           doc="work units finished since the start or the last reset", **_STATEFUL),
    define("ReaderReset", ["handle"], [], _reset, infer=lambda a, i: [],
           doc="forget the open work unit and zero the counters", **_STATEFUL),
), key=lambda op: op.name))

"""TensorBoard event files as TF1's tf.summary.FileWriter writes them.

An event file is a TFRecord file of serialized `tensorflow.Event` protobufs. Each record
is the data's length (u64 little-endian), the masked CRC-32C of those 8 bytes (u32 LE),
the data, and the masked CRC-32C of the data. The first record of a file is
Event{wall_time, file_version="brain.Event:2"}; the file is named
`events.out.tfevents.<seconds, 10 digits>.<hostname><suffix>`.

The protobufs are written here by hand (wire format: varints, length-delimited fields),
in field-number order and leaving out proto3 default scalars, as TF's serializers emit
them, so the records are byte-identical to TF's for the same inputs.

Differences from TF1, on purpose:
- the file is created when the writer opens (TF1 creates it at the first event unless a
  suffix is given);
- the header event has no `source_metadata` (TF 2.x names its own C++ writer there);
- events are queued and written (then fsync'ed) when `max_queue` are pending, when
  `flush_secs` have passed since the last write (checked as events arrive: there is no
  background thread), and on flush()/close();
- a file whose name exists already (a reopen within the same second) is appended to;
  TF truncates it, losing the events of the earlier file;
- the MetaGraphDef event the constructor writes after the graph event holds the
  GraphDef only (no saver, collections or signatures).
"""

from __future__ import annotations

import functools
import operator
import os
import socket
import struct
import threading
import time
import warnings

import numpy as np

from ..format import DType
from ..format.ir import Graph as IRGraph, TensorKind
from ..ops.record_io import frame_record
from ..ops.summary_encoding import (encode_field, field_bytes, field_double, field_key,
                                    field_varint, read_fields, varint)

FILE_VERSION = "brain.Event:2"
_INT64 = (-(2 ** 63), 2 ** 63 - 1)
# og dtypes -> TF's DataType enum (types.proto); og types TF lacks are left out
_TF_DTYPE = {
    DType.FLOAT32: 1, DType.FLOAT64: 2, DType.INT32: 3, DType.UINT8: 4, DType.INT16: 5,
    DType.INT8: 6, DType.STRING: 7, DType.INT64: 9, DType.BOOL: 10, DType.BFLOAT16: 14,
    DType.UINT16: 17, DType.FLOAT16: 19, DType.UINT32: 22, DType.UINT64: 23,
}


# --- protobuf wire format ----------------------------------------------------------------

# TF's writers emit each field in number order, proto3 scalars left out at their default
# (the writers of ops/summary_encoding.py); length-delimited fields here are always set
_bytes_field = functools.partial(field_bytes, always=True)
_int_field = field_varint
_double_field = field_double
_key = field_key
_varint = varint


def _fields(data: bytes, what: str) -> list:
    """The top-level fields of a message as read_fields gives them (field number, wire
    type, int or raw bytes).

    Raises:
        ValueError: the bytes are not a valid message (naming `what`).
    """
    try:
        return read_fields(data)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


# --- argument checks -----------------------------------------------------------------------

def _as_bytes(value, what: str) -> bytes:
    """bytes of a bytes-like `value`; TypeError naming `what` otherwise."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be bytes (a serialized protobuf), got "
                    f"{type(value).__name__}")


def _as_step(step, what: str) -> int:
    """An int64 step from an int, a numpy integer or a 0-d integer array."""
    if isinstance(step, np.ndarray) and step.ndim == 0 and step.dtype.kind in "iu":
        step = step.item()
    if isinstance(step, (bool, np.bool_)):
        raise TypeError(f"{what} must be an int, got bool")
    try:
        step = operator.index(step)
    except TypeError:
        raise TypeError(f"{what} must be an int, got {type(step).__name__}") from None
    if not _INT64[0] <= step <= _INT64[1]:
        raise ValueError(f"{what} {step} is outside int64")
    return step


def _as_str(value, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    return value


# --- Event -------------------------------------------------------------------------------

def encode_event(wall_time, step=0, file_version=None, summary=None, graph_def=None,
                 session_log=None, meta_graph_def=None) -> bytes:
    """A serialized tensorflow.Event. `summary`, `session_log`, `graph_def` and
    `meta_graph_def` are serialized messages (bytes); at most one of them and
    `file_version` (a str) may be given, as they share Event's `what` oneof.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: several of the oneof fields are given, or step is outside int64.
    """
    if isinstance(wall_time, (bool, np.bool_)) or not isinstance(
            wall_time, (int, float, np.integer, np.floating)):
        raise TypeError(f"encode_event: wall_time must be a number, got "
                        f"{type(wall_time).__name__}")
    step = _as_step(step, "encode_event: step")
    given = {k: v for k, v in (("file_version", file_version), ("graph_def", graph_def),
                               ("summary", summary), ("session_log", session_log),
                               ("meta_graph_def", meta_graph_def)) if v is not None}
    if len(given) > 1:
        raise ValueError(f"encode_event: only one of {', '.join(given)} can be given "
                         "(they are one oneof of Event)")
    out = _double_field(1, float(wall_time)) + _int_field(2, step)
    if file_version is not None:
        out += _bytes_field(3, _as_str(file_version, "encode_event: file_version")
                            .encode("utf-8"))
    for field, name in ((4, "graph_def"), (5, "summary"), (7, "session_log"),
                        (9, "meta_graph_def")):
        if name in given:
            out += _bytes_field(field, _as_bytes(given[name], f"encode_event: {name}"))
    return out


class SessionLog:
    """TF1's tf.SessionLog: a session's START/STOP/CHECKPOINT marker in an event file.

    Raises TypeError (from the constructor) for a non-int status or non-str
    checkpoint_path/msg, ValueError for a status that is not one of the constants.
    """

    STATUS_UNSPECIFIED = 0
    START = 1
    STOP = 2
    CHECKPOINT = 3

    def __init__(self, status=STATUS_UNSPECIFIED, checkpoint_path: str = "",
                 msg: str = ""):
        if isinstance(status, (bool, np.bool_)) or not isinstance(status, (int, np.integer)):
            raise TypeError(f"SessionLog: status must be an int, got {type(status).__name__}")
        if not 0 <= status <= 3:
            raise ValueError(f"SessionLog: status must be 0..3 (STATUS_UNSPECIFIED, START, "
                             f"STOP, CHECKPOINT), got {status}")
        self.status = int(status)
        self.checkpoint_path = _as_str(checkpoint_path, "SessionLog: checkpoint_path")
        self.msg = _as_str(msg, "SessionLog: msg")

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The serialized tensorflow.SessionLog. Never raises."""
        out = _int_field(1, self.status)
        for field, text in ((2, self.checkpoint_path), (3, self.msg)):
            if text:
                out += _bytes_field(field, text.encode("utf-8"))
        return out

    @classmethod
    def FromString(cls, data: bytes) -> "SessionLog":  # noqa: N802 - protobuf's name
        """A SessionLog parsed from its serialized bytes (unknown fields skipped).

        Raises:
            ValueError: the bytes are not a valid SessionLog.
        """
        fields = {}
        for field, wire, value in _fields(bytes(data), "SessionLog"):
            fields[field] = value
        status = fields.get(1, 0)
        raw = {k: fields.get(k, b"") for k in (2, 3)}
        if not isinstance(status, int) or not all(isinstance(v, bytes) for v in raw.values()):
            raise ValueError("SessionLog: a field has the wrong wire type")
        return cls(status if 0 <= status <= 3 else cls.STATUS_UNSPECIFIED,
                   raw[2].decode("utf-8", "replace"), raw[3].decode("utf-8", "replace"))

    def __eq__(self, other) -> bool:
        return isinstance(other, SessionLog) and \
            self.SerializeToString() == other.SerializeToString()

    def __repr__(self) -> str:
        return (f"SessionLog(status={self.status}, checkpoint_path={self.checkpoint_path!r}, "
                f"msg={self.msg!r})")


# --- GraphDef ----------------------------------------------------------------------------

def _shape_proto(shape) -> bytes:
    """TensorShapeProto{dim=2 {size=1}, unknown_rank=3}; -1 is an unknown dim."""
    if shape is None:
        return _int_field(3, 1)
    return b"".join(_bytes_field(2, _int_field(1, int(d))) for d in shape)


def _attr_value(value) -> bytes | None:
    """AttrValue of an og attribute (None: no AttrValue form, such as graphs/tensors)."""
    if isinstance(value, (bool, np.bool_)):
        return _key(5, 0) + _varint(int(value))
    if isinstance(value, (int, np.integer)):
        return _key(3, 0) + _varint(int(value))
    if isinstance(value, (float, np.floating)):
        return _key(4, 5) + struct.pack("<f", float(value))
    if isinstance(value, str):
        return _bytes_field(2, value.encode("utf-8"))
    if isinstance(value, (list, tuple)):
        items = list(value)
        if all(isinstance(v, str) for v in items):
            body = b"".join(_bytes_field(2, v.encode("utf-8")) for v in items)
        elif all(isinstance(v, (int, np.integer)) for v in items):
            packed = b"".join(_varint(int(v)) for v in items)
            body = _bytes_field(3, packed) if items else b""
        elif all(isinstance(v, (int, float, np.integer, np.floating)) for v in items):
            body = _bytes_field(4, struct.pack(f"<{len(items)}f", *map(float, items)))
        else:
            return None
        return _bytes_field(1, body)
    return None


def _node_def(name: str, op: str, inputs=(), device: str = "", attrs=None) -> bytes:
    """NodeDef{name=1, op=2, input=3, device=4, attr=5 map<string, AttrValue>}."""
    out = _bytes_field(1, name.encode("utf-8")) + _bytes_field(2, op.encode("utf-8"))
    out += b"".join(_bytes_field(3, i.encode("utf-8")) for i in inputs)
    if device:
        out += _bytes_field(4, device.encode("utf-8"))
    for key in sorted(attrs or {}):
        entry = _bytes_field(1, key.encode("utf-8")) + _bytes_field(2, attrs[key])
        out += _bytes_field(5, entry)
    return out


def _tensor_attrs(t, ops_attrs: bool) -> dict:
    """dtype/shape attrs of a source tensor (Placeholder, Const, VariableV2)."""
    attrs = {}
    if t.dtype in _TF_DTYPE:
        attrs["dtype"] = _key(6, 0) + _varint(_TF_DTYPE[t.dtype])
    if ops_attrs:
        attrs["shape"] = _bytes_field(7, _shape_proto(t.shape))
    return attrs


def graph_def_bytes(graph) -> bytes:
    """A serialized tensorflow.GraphDef of an og graph (og.Graph or its IR graph), as
    TensorBoard draws it: one NodeDef per op, named as the op, with its og op type,
    inputs naming the producing node (":k" for its output k > 0), control inputs as
    "^name", its device and attrs (ints, floats, strings and lists of them; graphs and
    tensors are left out) plus "_output_shapes"; placeholders become "Placeholder",
    constants "Const" and variables "VariableV2" nodes with "dtype"/"shape" attrs.

    Raises:
        TypeError: graph is not an og.Graph or an IR graph.
    """
    ir = getattr(graph, "ir_graph", graph)
    if not isinstance(ir, IRGraph):
        raise TypeError(f"graph_def_bytes: graph must be an og.Graph, got "
                        f"{type(graph).__name__}")
    producers = ir.producers()
    nodes = []
    for k, t in enumerate(ir.tensors):
        if k in producers:
            continue
        if t.kind is TensorKind.CONSTANT:
            attrs = _tensor_attrs(t, False)
            attrs["_output_shapes"] = _bytes_field(1, _bytes_field(7, _shape_proto(t.shape)))
            nodes.append(_node_def(t.name, "Const", attrs=attrs))
        else:
            op = "VariableV2" if t.kind is TensorKind.VARIABLE else "Placeholder"
            nodes.append(_node_def(t.name, op, attrs=_tensor_attrs(t, True)))

    def source(index: int) -> str:
        n = producers.get(index)
        if n is None:
            return ir.tensors[index].name
        k = ir.nodes[n].outputs.index(index)
        return ir.nodes[n].name if k == 0 else f"{ir.nodes[n].name}:{k}"

    for node in ir.nodes:
        inputs = [source(i) for i in node.inputs if i >= 0]
        inputs += ["^" + ir.nodes[c].name for c in node.control_inputs]
        attrs = {}
        for key, value in node.attributes.items():
            encoded = _attr_value(value)
            if encoded is not None:
                attrs[key] = encoded
        shapes = [ir.tensors[o].shape for o in node.outputs if o >= 0]
        if shapes:
            attrs["_output_shapes"] = _bytes_field(1, b"".join(
                _bytes_field(7, _shape_proto(s)) for s in shapes))
        nodes.append(_node_def(node.name, node.op_type, inputs, node.device, attrs))
    # versions=4: VersionDef{producer=1}; og ops are not TF's, so the number only says
    # "a TF1-era graph" (TensorBoard does not read it)
    return b"".join(_bytes_field(1, n) for n in nodes) + _bytes_field(4, _int_field(1, 27))


# --- writing -----------------------------------------------------------------------------

class EventFileWriter:
    """Writes serialized Events to `logdir/events.out.tfevents.<time>.<host><suffix>`
    (TF1's EventFileWriter). Thread-safe. Events added after close() are dropped, as
    TF1 drops them, until reopen(), which starts a new file.

    Raises (from the constructor):
        TypeError: an argument has the wrong type.
        ValueError: max_queue or flush_secs is negative.
        NotADirectoryError: logdir (or a parent) exists and is not a directory.
        OSError: the directory or file cannot be created.
    """

    def __init__(self, logdir, max_queue: int = 10, flush_secs=120,
                 filename_suffix: str = ""):
        if not isinstance(logdir, (str, os.PathLike)):
            raise TypeError(f"EventFileWriter: logdir must be a str or path, got "
                            f"{type(logdir).__name__}")
        if isinstance(max_queue, bool) or not isinstance(max_queue, (int, np.integer)):
            raise TypeError(f"EventFileWriter: max_queue must be an int, got "
                            f"{type(max_queue).__name__}")
        if isinstance(flush_secs, bool) or not isinstance(
                flush_secs, (int, float, np.integer, np.floating)):
            raise TypeError(f"EventFileWriter: flush_secs must be a number, got "
                            f"{type(flush_secs).__name__}")
        if max_queue < 0 or not flush_secs >= 0:  # `not >=` also refuses NaN
            raise ValueError(f"EventFileWriter: max_queue ({max_queue}) and flush_secs "
                             f"({flush_secs}) must be >= 0")
        self._suffix = _as_str("" if filename_suffix is None else filename_suffix,
                               "EventFileWriter: filename_suffix")
        if os.sep in self._suffix or (os.altsep and os.altsep in self._suffix):
            raise ValueError(f"EventFileWriter: filename_suffix {self._suffix!r} must not "
                             "hold a path separator")
        self._logdir = os.fspath(logdir)
        if isinstance(self._logdir, bytes):
            self._logdir = os.fsdecode(self._logdir)
        self._max_queue, self._flush_secs = int(max_queue), float(flush_secs)
        self._lock = threading.Lock()
        self._pending: list = []
        self._file = None
        self._path = ""
        if os.path.exists(self._logdir) and not os.path.isdir(self._logdir):
            raise NotADirectoryError(f"EventFileWriter: logdir {self._logdir!r} exists and "
                                     "is not a directory")
        try:
            os.makedirs(self._logdir, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise NotADirectoryError(f"EventFileWriter: cannot create logdir "
                                     f"{self._logdir!r}: a part of it is a file") from None
        self._open()

    def _open(self) -> None:
        """Start a new file with its file_version event (caller holds the lock or is
        the constructor)."""
        now = time.time()  # one reading: the file's name and its first event agree
        name = f"events.out.tfevents.{int(now):010d}.{socket.gethostname()}{self._suffix}"
        self._path = os.path.join(self._logdir, name)
        # append: a file of the same name (same second) keeps its events
        self._file = open(self._path, "ab")
        self._pending = [encode_event(now, file_version=FILE_VERSION)]
        self._write_pending()

    def _write_pending(self) -> None:
        """Write the queued events and push them to disk (caller holds the lock)."""
        if self._pending:
            self._file.write(b"".join(frame_record(e) for e in self._pending))
            self._pending = []
        self._file.flush()
        os.fsync(self._file.fileno())
        self._last_write = time.monotonic()

    def get_logdir(self) -> str:
        """The directory the event files go to. Never raises."""
        return self._logdir

    @property
    def path(self) -> str:
        """The current (or last) event file's path."""
        return self._path

    @property
    def closed(self) -> bool:
        return self._file is None

    def add_event(self, event) -> None:
        """Queue a serialized Event (bytes); dropped when the writer is closed. Writes the
        queue when max_queue events are pending or flush_secs passed since the last write.

        Raises:
            TypeError: event is not bytes.
            OSError: writing failed.
        """
        event = _as_bytes(event, "EventFileWriter.add_event: event")
        with self._lock:
            if self._file is None:
                return
            self._pending.append(event)
            if (len(self._pending) >= self._max_queue
                    or time.monotonic() - self._last_write >= self._flush_secs):
                self._write_pending()

    def flush(self) -> None:
        """Write the queued events to disk (nothing when closed). Raises OSError."""
        with self._lock:
            if self._file is not None:
                self._write_pending()

    def close(self) -> None:
        """Write the queued events and close the file; later events are dropped until
        reopen(). Calling it again does nothing. Raises OSError."""
        with self._lock:
            if self._file is None:
                return
            try:
                self._write_pending()
            finally:
                self._file.close()
                self._file = None

    def reopen(self) -> None:
        """After close(): start a new event file. Does nothing when open. Raises OSError."""
        with self._lock:
            if self._file is None:
                os.makedirs(self._logdir, exist_ok=True)
                self._open()


def _summary_bytes(summary) -> bytes:
    """The bytes of a serialized Summary given as bytes, as Session.run's 0-d object
    array holding bytes, or as an og.Summary (any message with SerializeToString)."""
    serialize = getattr(summary, "SerializeToString", None)
    if callable(serialize) and not isinstance(summary, np.ndarray):
        summary = serialize()
    if isinstance(summary, np.ndarray) and summary.ndim == 0 and summary.dtype == object:
        summary = summary.item()
    if isinstance(summary, np.bytes_):
        summary = bytes(summary)
    if isinstance(summary, (bytes, bytearray, memoryview)):
        return bytes(summary)
    raise TypeError(f"FileWriter.add_summary: summary must be an og.Summary or serialized "
                    f"Summary bytes (or Session.run's 0-d array of them), got "
                    f"{type(summary).__name__}")


class FileWriter:
    """TF1's tf.summary.FileWriter: writes summaries, session logs and graphs to an event
    file in `logdir` for TensorBoard. A context manager (closes on exit). After close(),
    calls warn and are dropped (as in TF1) until reopen().

    Raises (from the constructor):
        NotImplementedError: a session is given (TF1's summary-writer-resource mode).
        TypeError, ValueError, NotADirectoryError, OSError: as EventFileWriter, or as
            add_graph for graph/graph_def.
    """

    def __init__(self, logdir, graph=None, max_queue: int = 10, flush_secs=120,
                 graph_def=None, filename_suffix: str | None = None, session=None):
        if session is not None:
            raise NotImplementedError("FileWriter: session= (TF1's SummaryWriter resource "
                                      "mode, writing from graph ops) is not supported; "
                                      "leave it None")
        self._writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False
        self._seen_tags: set = set()
        self._tags_lock = threading.Lock()
        if graph is not None or graph_def is not None:
            self.add_meta_graph(self.add_graph(graph=graph, graph_def=graph_def))

    @property
    def event_writer(self) -> EventFileWriter:
        return self._writer

    def _warn_if_closed(self) -> None:
        if self._closed:
            warnings.warn("Attempting to use a closed FileWriter. The operation will be a "
                          "noop unless the FileWriter is explicitly reopened.", stacklevel=3)

    def _add_event(self, global_step, **what) -> None:
        step = 0 if global_step is None else _as_step(global_step, "FileWriter: global_step")
        self._warn_if_closed()
        self._writer.add_event(encode_event(time.time(), step, **what))

    def add_summary(self, summary, global_step=None) -> None:
        """Write a serialized Summary (bytes, or the 0-d object array Session.run gives)
        as an event. As TF1, a value keeps its metadata only the first time its tag is
        seen (TF1 counts a tag as seen even when that first value had no metadata).

        Raises:
            TypeError: summary or global_step has the wrong type.
            ValueError: summary is not a valid serialized Summary, or the step is
                outside int64.
        """
        raw = _summary_bytes(summary)
        if global_step is not None:
            _as_step(global_step, "FileWriter.add_summary: global_step")
        what = "FileWriter.add_summary: summary"
        out = []
        with self._tags_lock:
            for field, wire, payload in _fields(raw, what):
                if field != 1 or wire != 2:  # not a Value: kept as it came
                    out.append(encode_field(field, wire, payload))
                    continue
                value_fields = _fields(payload, what + " value")
                tags = [p for f, w, p in value_fields if f == 1 and w == 2]
                tag = tags[-1] if tags else b""  # protobuf: the last one wins
                if tag in self._seen_tags:
                    payload = b"".join(encode_field(*f) for f in value_fields if f[0] != 9)
                else:
                    self._seen_tags.add(tag)
                out.append(_bytes_field(1, payload))
        self._add_event(global_step, summary=b"".join(out))

    def add_session_log(self, session_log, global_step=None) -> None:
        """Write a SessionLog as an event.

        Raises:
            TypeError: session_log is not a SessionLog, or global_step not an int.
            ValueError: the step is outside int64.
        """
        if not isinstance(session_log, SessionLog):
            raise TypeError(f"FileWriter.add_session_log: session_log must be a "
                            f"SessionLog, got {type(session_log).__name__}")
        self._add_event(global_step, session_log=session_log.SerializeToString())

    def add_event(self, event) -> None:
        """Write a serialized Event (bytes) as it is (its wall_time is not set).

        Raises:
            TypeError: event is not bytes.
        """
        event = _as_bytes(event, "FileWriter.add_event: event")
        self._warn_if_closed()
        self._writer.add_event(event)

    def add_graph(self, graph=None, global_step=None, graph_def=None) -> bytes:
        """Write a graph event: `graph` (an og.Graph) as its GraphDef, or `graph_def`
        given as serialized GraphDef bytes (TF1's deprecated form; `graph` may be such
        bytes too). Returns the GraphDef bytes written.

        Raises:
            ValueError: both graph and graph_def are given, or the step is outside int64.
            TypeError: neither is an og.Graph nor GraphDef bytes, or a bad step.
        """
        if graph is not None and graph_def is not None:
            raise ValueError("FileWriter.add_graph: pass only graph, or graph_def "
                             "(deprecated), but not both")
        given = graph if graph is not None else graph_def
        if isinstance(given, (bytes, bytearray, memoryview)):
            data = bytes(given)
        elif isinstance(getattr(given, "ir_graph", given), IRGraph):
            data = graph_def_bytes(given)
        else:
            raise TypeError(f"FileWriter.add_graph: graph must be an og.Graph (or "
                            f"graph_def serialized GraphDef bytes), got "
                            f"{type(given).__name__}")
        self._add_event(global_step, graph_def=data)
        return data

    def add_meta_graph(self, graph_def: bytes, global_step=None) -> None:
        """Write a MetaGraphDef event holding the serialized GraphDef `graph_def` (TF1's
        add_meta_graph; onegraph's meta graph is the graph alone: its field 2).

        Raises:
            TypeError: graph_def is not bytes, or a bad step.
        """
        data = _as_bytes(graph_def, "FileWriter.add_meta_graph: graph_def")
        self._add_event(global_step, meta_graph_def=_bytes_field(2, data))

    def get_logdir(self) -> str:
        """The directory the event files go to. Never raises."""
        return self._writer.get_logdir()

    def flush(self) -> None:
        """Write the queued events to disk. Raises OSError."""
        self._writer.flush()

    def close(self) -> None:
        """Write the queued events and close the file. Raises OSError."""
        self._writer.close()
        self._closed = True

    def reopen(self) -> None:
        """After close(): write to a new event file. Raises OSError."""
        self._writer.reopen()
        self._closed = False

    def __enter__(self) -> "FileWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class FileWriterCache:
    """One FileWriter per logdir, shared (TF1's tf.summary.FileWriterCache); a new
    writer is given the default graph, as in TF1."""

    _cache: dict = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir) -> FileWriter:
        """The FileWriter for `logdir`, made on first use. Raises as FileWriter."""
        from .graph import get_default_graph  # the graph module is heavy to import
        key = os.fspath(logdir) if isinstance(logdir, os.PathLike) else logdir
        with FileWriterCache._lock:
            if key not in FileWriterCache._cache:
                FileWriterCache._cache[key] = FileWriter(key, graph=get_default_graph())
            return FileWriterCache._cache[key]

    @staticmethod
    def clear() -> None:
        """Close and forget every cached writer. Raises OSError from a close."""
        with FileWriterCache._lock:
            writers = list(FileWriterCache._cache.values())
            FileWriterCache._cache = {}
            for w in writers:
                w.close()

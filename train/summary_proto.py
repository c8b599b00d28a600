"""TF1's summary protocol buffers as small Python classes: og.Summary (with its Value,
Image and Audio), og.HistogramProto and og.Event, so TF1 code that builds summaries by
hand (`og.Summary(value=[og.Summary.Value(tag="acc", simple_value=acc)])`) or reads
event files back (`og.train.summary_iterator(path)`) runs unchanged.

Each class has TF's field names, `SerializeToString()`, `FromString(data)` and
`ParseFromString(data)`, `HasField(name)` for its message fields and, where TF's has a
oneof, `WhichOneof(name)`. Serialization is the protobuf wire format (field-number
order, proto3 defaults left out), so the bytes equal TF's for the same contents; fields
this module does not know are skipped when parsing, as protobuf does.
"""

from __future__ import annotations

import struct

import numpy as np

from ..errors import DataLossError
from ..ops.record_io import read_records
from ..ops.summary_encoding import (field_bytes, field_double, field_float,
                                    field_packed_doubles, field_varint, read_fields)
from .event_file import SessionLog

# field kinds: how a value is written and read back
_DOUBLE, _FLOAT, _INT, _STRING, _BYTES, _DOUBLES = "double", "float", "int", "str", "bytes", \
    "doubles"


class _Message:
    """A protobuf message with fields declared in `_FIELDS` as (number, name, kind,
    default), kind one of the kinds above or a _Message subclass; fields in `_ONEOF`
    are written whenever they are set (not None), as protobuf writes oneof members."""

    _FIELDS: tuple = ()
    _ONEOF: tuple = ()

    def __init__(self, **fields):
        names = {name for _, name, _, _ in self._FIELDS}
        for name in fields:
            if name not in names:
                raise TypeError(f"{type(self).__name__}: no field named {name!r} (it has "
                                f"{sorted(names)})")
        for _, name, kind, default in self._FIELDS:
            value = fields.get(name, default)
            setattr(self, name, list(value) if isinstance(default, list) else value)

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's wire-format bytes.

        Raises:
            TypeError: a field holds a value of the wrong kind.
        """
        out = []
        for number, name, kind, _ in self._FIELDS:
            value = getattr(self, name)
            always = name in self._ONEOF
            if value is None:
                continue
            if isinstance(kind, type):
                out.append(field_bytes(number, value.SerializeToString(), always=True))
            elif kind == _DOUBLE:
                out.append(field_double(number, value, always))
            elif kind == _FLOAT:
                out.append(field_float(number, value, always))
            elif kind == _INT:
                out.append(field_varint(number, value, always))
            elif kind == _DOUBLES:
                out.append(field_packed_doubles(number, value))
            else:
                out.append(field_bytes(number, value, always))
        return b"".join(out)

    @classmethod
    def FromString(cls, data: bytes):  # noqa: N802 - protobuf's name
        """A message parsed from wire-format bytes.

        Raises:
            DataLossError: the bytes are not a well-formed message of this type.
        """
        message = cls()
        message.ParseFromString(data)
        return message

    def ParseFromString(self, data: bytes) -> None:  # noqa: N802 - protobuf's name
        """Replace this message's fields by those parsed from `data`.

        Raises:
            DataLossError: as FromString.
        """
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"{type(self).__name__}.ParseFromString: needs bytes, got "
                            f"{type(data).__name__}")
        self.__init__()
        by_number = {number: (name, kind) for number, name, kind, _ in self._FIELDS}
        try:
            fields = read_fields(bytes(data))
        except ValueError as e:
            raise DataLossError(f"{type(self).__name__}: {e}") from None
        for number, wire, value in fields:
            if number not in by_number:
                continue
            name, kind = by_number[number]
            setattr(self, name, self._decoded(name, kind, wire, value))

    def _decoded(self, name, kind, wire, value):
        expected = 2 if isinstance(kind, type) or kind in (_STRING, _BYTES, _DOUBLES) else \
            {_DOUBLE: 1, _FLOAT: 5, _INT: 0}[kind]
        if kind == _DOUBLES and wire == 1:  # an unpacked repeated double
            return getattr(self, name) + [struct.unpack("<d", value)[0]]
        if wire != expected:
            raise DataLossError(f"{type(self).__name__}.{name}: wire type {wire}, expected "
                                f"{expected}")
        if isinstance(kind, type):
            return kind.FromString(value)
        if kind == _DOUBLE:
            return struct.unpack("<d", value)[0]
        if kind == _FLOAT:
            return float(np.frombuffer(value, "<f4")[0])
        if kind == _INT:
            return value - (1 << 64) if value >= 1 << 63 else value
        if kind == _DOUBLES:
            return getattr(self, name) + np.frombuffer(value, "<f8").tolist()
        return value.decode("utf-8", "replace") if kind == _STRING else bytes(value)

    def HasField(self, name: str) -> bool:  # noqa: N802 - protobuf's name
        """Whether message or oneof field `name` is set.

        Raises:
            ValueError: no such message or oneof field.
        """
        kinds = {n: k for _, n, k, _ in self._FIELDS}
        if name not in kinds or not (isinstance(kinds[name], type) or name in self._ONEOF):
            raise ValueError(f'Protocol message {type(self).__name__} has no non-repeated '
                             f'submessage field "{name}"')
        return getattr(self, name) is not None

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and \
            self.SerializeToString() == other.SerializeToString()

    def __repr__(self) -> str:
        parts = [f"{name}={getattr(self, name)!r}" for _, name, _, default in self._FIELDS
                 if getattr(self, name) != default]
        return f"{type(self).__name__}({', '.join(parts)})"


class HistogramProto(_Message):
    """TF's HistogramProto: min, max, num, sum, sum_squares, bucket_limit, bucket."""

    _FIELDS = ((1, "min", _DOUBLE, 0.0), (2, "max", _DOUBLE, 0.0), (3, "num", _DOUBLE, 0.0),
               (4, "sum", _DOUBLE, 0.0), (5, "sum_squares", _DOUBLE, 0.0),
               (6, "bucket_limit", _DOUBLES, []), (7, "bucket", _DOUBLES, []))


class _Image(_Message):
    """Summary.Image: height, width, colorspace (channels), encoded_image_string (PNG)."""

    _FIELDS = ((1, "height", _INT, 0), (2, "width", _INT, 0), (3, "colorspace", _INT, 0),
               (4, "encoded_image_string", _BYTES, b""))


class _Audio(_Message):
    """Summary.Audio: sample_rate, num_channels, length_frames, encoded_audio_string,
    content_type."""

    _FIELDS = ((1, "sample_rate", _FLOAT, 0.0), (2, "num_channels", _INT, 0),
               (3, "length_frames", _INT, 0), (4, "encoded_audio_string", _BYTES, b""),
               (5, "content_type", _STRING, ""))


class _Value(_Message):
    """Summary.Value: a tag and one of simple_value, image, histo, audio or tensor (a
    serialized TensorProto); metadata is a serialized SummaryMetadata."""

    _FIELDS = ((1, "tag", _STRING, ""), (2, "simple_value", _FLOAT, None),
               (4, "image", _Image, None), (5, "histo", HistogramProto, None),
               (6, "audio", _Audio, None), (7, "node_name", _STRING, ""),
               (8, "tensor", _BYTES, None), (9, "metadata", _BYTES, None))
    _ONEOF = ("simple_value", "image", "histo", "audio", "tensor", "metadata")

    def WhichOneof(self, name: str):  # noqa: N802 - protobuf's name
        """The set member of oneof "value" (None when none is).

        Raises:
            ValueError: name is not "value".
        """
        if name != "value":
            raise ValueError(f'Protocol message Value has no "{name}" field.')
        for member in ("simple_value", "image", "histo", "audio", "tensor"):
            if getattr(self, member) is not None:
                return member
        return None


_Value.__name__, _Image.__name__, _Audio.__name__ = "Summary.Value", "Summary.Image", \
    "Summary.Audio"


class Summary(_Message):
    """TF's Summary proto (tf.Summary): `value`, a list of Summary.Value."""

    Value = _Value
    Image = _Image
    Audio = _Audio
    _FIELDS = ((1, "value", None, []),)

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's wire-format bytes (each value a length-delimited field 1)."""
        return b"".join(field_bytes(1, v.SerializeToString(), always=True)
                        for v in self.value)

    def ParseFromString(self, data: bytes) -> None:  # noqa: N802 - protobuf's name
        """Replace the values by those parsed from `data`.

        Raises:
            DataLossError: the bytes are not a well-formed Summary.
        """
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"Summary.ParseFromString: needs bytes, got "
                            f"{type(data).__name__}")
        try:
            fields = read_fields(bytes(data))
        except ValueError as e:
            raise DataLossError(f"Summary: {e}") from None
        self.value = [_Value.FromString(v) for number, wire, v in fields
                      if number == 1 and wire == 2]


class Event(_Message):
    """TF's Event proto: wall_time, step and one of file_version, graph_def (serialized
    GraphDef bytes), summary, session_log (an og.SessionLog), meta_graph_def (bytes)."""

    _FIELDS = ((1, "wall_time", _DOUBLE, 0.0), (2, "step", _INT, 0),
               (3, "file_version", _STRING, None), (4, "graph_def", _BYTES, None),
               (5, "summary", Summary, None), (7, "session_log", SessionLog, None),
               (9, "meta_graph_def", _BYTES, None))
    _ONEOF = ("file_version", "graph_def", "summary", "session_log", "meta_graph_def")

    def WhichOneof(self, name: str):  # noqa: N802 - protobuf's name
        """The set member of oneof "what" (None when none is).

        Raises:
            ValueError: name is not "what".
        """
        if name != "what":
            raise ValueError(f'Protocol message Event has no "{name}" field.')
        return next((m for m in self._ONEOF if getattr(self, m) is not None), None)


def summary_iterator(path):
    """The Events of event file `path`, in order (TF1's tf.train.summary_iterator).

    Raises:
        OSError: the file cannot be read.
        DataLossError: a record is truncated or its checksum is wrong (names the file
            and the record's offset).
    """
    for body in read_records(path):
        yield Event.FromString(body)


__all__ = ["Event", "HistogramProto", "Summary", "summary_iterator"]

"""TF's tf.train.Example protocol buffers (example.proto, feature.proto) as small Python
classes with protobuf's Python API: Example, SequenceExample, Features, Feature,
FeatureList, FeatureLists, BytesList, FloatList and Int64List.

Messages take their fields as keywords, maps are dicts and repeated fields lists, and
each has SerializeToString / FromString / ParseFromString / HasField and equality;
Feature has WhichOneof("kind"). Serialization is the wire format as protobuf writes it
with deterministic=True (map entries in its key order, packed floats and varints), so the
bytes equal TF's for the same contents. Parsing accepts packed and unpacked repeated
numbers and skips unknown fields; bad bytes raise DataLossError naming the message.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import DataLossError
from ..ops.summary_encoding import field_bytes, packed_int64s, read_fields, varint

# Field numbers from TF's feature.proto / example.proto
_BYTES_LIST, _FLOAT_LIST, _INT64_LIST = 1, 2, 3
_INT64_MIN, _UINT64_END = -2 ** 63, 2 ** 64


def _fields(data, what: str) -> list:
    """(number, wire type, value) of each field of `data`.

    Raises:
        TypeError: data is not bytes.
        DataLossError: the bytes are not a well-formed protobuf message.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what}.ParseFromString: needs bytes, got {type(data).__name__}")
    try:
        return read_fields(bytes(data))
    except ValueError as e:
        text = str(e).replace("malformed summary: ", "")
        raise DataLossError(f"{what}: cannot parse the bytes: {text}") from None


def _wire(what: str, field: int, wire: int, expected: int) -> None:
    if wire != expected:
        raise DataLossError(f"{what}: field {field} has wire type {wire}, expected "
                            f"{expected}")


def _packed_varints(data: bytes, what: str) -> list:
    """The int64s of a packed varint field (two's complement, as int64).

    Raises:
        DataLossError: a varint is truncated or overlong.
    """
    try:
        return packed_int64s(data)
    except ValueError:
        raise DataLossError(f"{what}: truncated or overlong varint in a packed field") \
            from None


# ---- text format, as protobuf's (upb's) text encoder writes it ------------------------

_ESCAPES = {9: "\\t", 10: "\\n", 13: "\\r", 34: '\\"', 39: "\\'", 92: "\\\\"}


def _quoted(data: bytes, utf8: bool) -> str:
    """A quoted string: C escapes, other control bytes (and, unless utf8, every byte
    above 126) as 3-digit octal."""
    out = []
    for byte in data:
        if byte in _ESCAPES:
            out.append(_ESCAPES[byte])
        elif 32 <= byte < 127 or (utf8 and byte >= 128):
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    text = "".join(out)
    if utf8:    # the raw bytes above 127 are UTF-8: show them as the characters
        text = text.encode("latin-1").decode("utf-8", "backslashreplace")
    return '"' + text + '"'


def _float_text(v) -> str:
    """A float32 as upb prints it: 6 significant digits, or 9 when 6 do not round-trip."""
    f = np.float32(v)
    if np.isnan(f):
        return "nan"
    if np.isinf(f):
        return "inf" if f > 0 else "-inf"
    text = "%.6g" % float(f)
    return text if np.float32(float(text)) == f else "%.9g" % float(f)


def _block(name: str, lines: list) -> list:
    return [name + " {"] + ["  " + line for line in lines] + ["}"]


def _map_lines(name: str, mapping: dict) -> list:
    """A map field's entries (in the deterministic order; TF's is its hash order)."""
    out = []
    for key in _sorted_keys(mapping):
        entry = ["key: " + _quoted(key.encode("utf-8"), True)] + \
            _block("value", mapping[key]._lines())
        out += _block(name, entry)
    return out


class _Base:
    """Shared API: equality by bytes, FromString, a protobuf-like repr."""

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and \
            self.SerializeToString() == other.SerializeToString()

    @classmethod
    def FromString(cls, data):  # noqa: N802 - protobuf's name
        """A message parsed from wire-format bytes.

        Raises:
            TypeError: data is not bytes.
            DataLossError: the bytes are not a well-formed message of this type.
        """
        message = cls()
        message.ParseFromString(data)
        return message

    def __str__(self) -> str:
        """The message in protobuf's text format, as TF prints it."""
        return "".join(line + "\n" for line in self._lines())

    __repr__ = __str__


class _List(_Base):
    """A message whose one field is `repeated T value = 1`."""

    def __init__(self, value=()):
        self.value = list(value)

    def _lines(self) -> list:
        return [f"value: {self._text(v)}" for v in self.value]

    def ParseFromString(self, data) -> None:  # noqa: N802 - protobuf's name
        """Replace the values by those parsed from `data`.

        Raises:
            TypeError: data is not bytes.
            DataLossError: the bytes are not a well-formed message of this type.
        """
        what = type(self).__name__
        values = []
        for number, wire, raw in _fields(data, what):
            if number == 1:
                values.extend(self._decode(wire, raw, what))
        self.value = values


class BytesList(_List):
    """TF's BytesList: `value`, a list of bytes (str is written as its UTF-8)."""

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's wire-format bytes.

        Raises:
            TypeError: a value is neither bytes nor str.
        """
        return b"".join(field_bytes(1, v, always=True) for v in self.value)

    @staticmethod
    def _text(v) -> str:
        return _quoted(v.encode("utf-8") if isinstance(v, str) else bytes(v), False)

    @staticmethod
    def _decode(wire, raw, what):
        _wire(what, 1, wire, 2)
        return [bytes(raw)]


class FloatList(_List):
    """TF's FloatList: `value`, a list of floats (stored as float32, packed)."""

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's wire-format bytes (one packed field).

        Raises:
            TypeError / ValueError: a value is not a real number.
        """
        if not self.value:
            return b""
        return field_bytes(1, np.asarray(self.value, dtype="<f4").tobytes())

    @staticmethod
    def _text(v) -> str:
        return _float_text(v)

    @staticmethod
    def _decode(wire, raw, what):
        if wire == 5:
            return np.frombuffer(raw, "<f4").tolist()
        _wire(what, 1, wire, 2)
        if len(raw) % 4:
            raise DataLossError(f"{what}: packed floats of {len(raw)} bytes (not a "
                                f"multiple of 4)")
        return np.frombuffer(raw, "<f4").tolist()


class Int64List(_List):
    """TF's Int64List: `value`, a list of int64 (packed varints)."""

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's wire-format bytes (one packed field).

        Raises:
            TypeError: a value is not an integer.
            ValueError: a value is outside the int64 range.
        """
        for v in self.value:
            if isinstance(v, (int, np.integer)) and not -2 ** 63 <= int(v) < 2 ** 63:
                raise ValueError(f"Int64List: value {v} is out of the int64 range")
        return field_bytes(1, b"".join(varint(v) for v in self.value))

    @staticmethod
    def _text(v) -> str:
        return str(int(v))

    @staticmethod
    def _decode(wire, raw, what):
        if wire == 0:
            return [raw - _UINT64_END if raw >= 2 ** 63 else raw]
        _wire(what, 1, wire, 2)
        return _packed_varints(raw, what)


_KINDS = (("bytes_list", _BYTES_LIST, BytesList), ("float_list", _FLOAT_LIST, FloatList),
          ("int64_list", _INT64_LIST, Int64List))


class Feature(_Base):
    """TF's Feature: one of bytes_list, float_list, int64_list (oneof "kind").

    Reading an unset member gives an empty list message that becomes the set member
    once it holds values (as protobuf's mutable sub-messages do)."""

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        self._members = {}
        self._kind = None
        for name, value in (("bytes_list", bytes_list), ("float_list", float_list),
                            ("int64_list", int64_list)):
            if value is not None:
                setattr(self, name, value)

    def _get(self, name):
        if name not in self._members:
            self._members[name] = dict((k, c) for k, _, c in _KINDS)[name]()
        return self._members[name]

    def _set(self, name, value):
        cls = dict((k, c) for k, _, c in _KINDS)[name]
        if not isinstance(value, cls):
            raise TypeError(f"Feature.{name} must be a {cls.__name__}, got "
                            f"{type(value).__name__}")
        self._members = {name: value}
        self._kind = name

    bytes_list = property(lambda self: self._get("bytes_list"),
                          lambda self, v: self._set("bytes_list", v))
    float_list = property(lambda self: self._get("float_list"),
                          lambda self, v: self._set("float_list", v))
    int64_list = property(lambda self: self._get("int64_list"),
                          lambda self, v: self._set("int64_list", v))

    def WhichOneof(self, name: str):  # noqa: N802 - protobuf's name
        """The set member of oneof "kind" (None when none is).

        Raises:
            ValueError: name is not "kind".
        """
        if name != "kind":
            raise ValueError(f'Protocol message Feature has no "{name}" field.')
        if self._kind is not None:
            return self._kind
        return next((k for k, m in self._members.items() if m.value), None)

    def HasField(self, name: str) -> bool:  # noqa: N802 - protobuf's name
        """Whether member `name` (or any member, for "kind") is set.

        Raises:
            ValueError: no such field.
        """
        if name == "kind":
            return self.WhichOneof("kind") is not None
        if name not in ("bytes_list", "float_list", "int64_list"):
            raise ValueError(f'Protocol message Feature has no non-repeated submessage '
                             f'field "{name}"')
        return self.WhichOneof("kind") == name

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's wire-format bytes (the set member, even when empty).

        Raises:
            TypeError / ValueError: a list holds a value of the wrong kind.
        """
        kind = self.WhichOneof("kind")
        if kind is None:
            return b""
        number = dict((k, n) for k, n, _ in _KINDS)[kind]
        return field_bytes(number, self._members[kind].SerializeToString(), always=True)

    def ParseFromString(self, data) -> None:  # noqa: N802 - protobuf's name
        """Replace the contents by those parsed from `data`.

        Raises:
            TypeError: data is not bytes.
            DataLossError: the bytes are not a well-formed Feature.
        """
        self.__init__()
        for number, wire, raw in _fields(data, "Feature"):
            for name, n, cls in _KINDS:
                if number == n:
                    _wire("Feature", number, wire, 2)
                    # protobuf merges a repeated oneof member into the one already set
                    message = cls.FromString(raw)
                    if self._kind == name:
                        message.value = self._members[name].value + message.value
                    self._set(name, message)

    def _lines(self) -> list:
        kind = self.WhichOneof("kind")
        return [] if kind is None else _block(kind, self._members[kind]._lines())


def _key_order(a: bytes, b: bytes) -> int:
    """protobuf's (upb's) deterministic order of string map keys: bytewise over the
    common prefix, then the longer key first ("abc" before "ab" before "a")."""
    n = min(len(a), len(b))
    if a[:n] != b[:n]:
        return -1 if a[:n] < b[:n] else 1
    return len(b) - len(a)


def _sorted_keys(mapping: dict) -> list:
    order = functools.cmp_to_key(lambda a, b: _key_order(a.encode(), b.encode()))
    return sorted(mapping, key=order)


def _map_bytes(mapping: dict, what: str) -> bytes:
    """A map<string, Message> field 1, entries in protobuf's deterministic order, each
    entry's key (1) and value (2) written even when empty.

    Raises:
        TypeError: a key is not a str.
    """
    out = []
    for key in mapping:
        if not isinstance(key, str):
            raise TypeError(f"{what}: map keys must be str, got {type(key).__name__}")
    for key in _sorted_keys(mapping):
        entry = field_bytes(1, key, always=True) + \
            field_bytes(2, mapping[key].SerializeToString(), always=True)
        out.append(field_bytes(1, entry, always=True))
    return b"".join(out)


def _map_parse(data, what: str, value_cls) -> dict:
    out = {}
    for number, wire, raw in _fields(data, what):
        if number != 1:
            continue
        _wire(what, 1, wire, 2)
        key, value = "", value_cls()
        for n, w, v in _fields(raw, what + " entry"):
            if n == 1:
                _wire(what + " entry", 1, w, 2)
                try:
                    key = bytes(v).decode("utf-8")
                except UnicodeDecodeError:
                    raise DataLossError(f"{what}: a key is not valid UTF-8") from None
            elif n == 2:
                _wire(what + " entry", 2, w, 2)
                value = value_cls.FromString(v)
        out[key] = value                     # a repeated key: the last one wins
    return out


class _Map(_Base):
    """A message whose one field, named _FIELD, is map<string, _VALUE>."""

    _FIELD = ""
    _VALUE: type = _Base

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's wire-format bytes (entries by sorted key).

        Raises:
            TypeError: a key is not a str or a value has the wrong kind.
        """
        return _map_bytes(getattr(self, self._FIELD), type(self).__name__)

    def ParseFromString(self, data) -> None:  # noqa: N802 - protobuf's name
        """Replace the entries by those parsed from `data`.

        Raises:
            TypeError: data is not bytes.
            DataLossError: the bytes are not a well-formed message of this type.
        """
        setattr(self, self._FIELD, _map_parse(data, type(self).__name__, self._VALUE))

    def _lines(self) -> list:
        return _map_lines(self._FIELD, getattr(self, self._FIELD))


class Features(_Map):
    """TF's Features: `feature`, a dict from name to Feature."""

    _FIELD, _VALUE = "feature", Feature

    def __init__(self, feature=None):
        self.feature = dict(feature or {})


class FeatureList(_Base):
    """TF's FeatureList: `feature`, a list of Feature."""

    def __init__(self, feature=()):
        self.feature = list(feature)

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's wire-format bytes.

        Raises:
            TypeError / ValueError: a feature holds a value of the wrong kind.
        """
        return b"".join(field_bytes(1, f.SerializeToString(), always=True)
                        for f in self.feature)

    def ParseFromString(self, data) -> None:  # noqa: N802 - protobuf's name
        """Replace the features by those parsed from `data`.

        Raises:
            TypeError: data is not bytes.
            DataLossError: the bytes are not a well-formed FeatureList.
        """
        out = []
        for number, wire, raw in _fields(data, "FeatureList"):
            if number == 1:
                _wire("FeatureList", 1, wire, 2)
                out.append(Feature.FromString(raw))
        self.feature = out

    def _lines(self) -> list:
        return [line for f in self.feature for line in _block("feature", f._lines())]


class FeatureLists(_Map):
    """TF's FeatureLists: `feature_list`, a dict from name to FeatureList."""

    _FIELD, _VALUE = "feature_list", FeatureList

    def __init__(self, feature_list=None):
        self.feature_list = dict(feature_list or {})


class _Holder(_Base):
    """A message of singular sub-message fields `_SUB` ((number, name, class), ...);
    a field counts as set once given, assigned or parsed, or when it is non-empty."""

    _SUB: tuple = ()

    def __init__(self, **fields):
        names = [name for _, name, _ in self._SUB]
        for name in fields:
            if name not in names:
                raise TypeError(f"{type(self).__name__}: no field named {name!r} (it has "
                                f"{names})")
        self._given = set()
        for _, name, cls in self._SUB:
            value = fields.get(name)
            if value is None:
                object.__setattr__(self, name, cls())
            else:
                setattr(self, name, value)

    def __setattr__(self, name, value):
        for _, field, cls in self._SUB:
            if name == field:
                if not isinstance(value, cls):
                    raise TypeError(f"{type(self).__name__}.{name} must be a "
                                    f"{cls.__name__}, got {type(value).__name__}")
                self._given.add(name)
        object.__setattr__(self, name, value)

    def HasField(self, name: str) -> bool:  # noqa: N802 - protobuf's name
        """Whether sub-message `name` is set.

        Raises:
            ValueError: no such field.
        """
        if name not in [n for _, n, _ in self._SUB]:
            raise ValueError(f'Protocol message {type(self).__name__} has no non-repeated '
                             f'submessage field "{name}"')
        return name in self._given or bool(getattr(self, name).SerializeToString())

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's wire-format bytes (set sub-messages, even when empty).

        Raises:
            TypeError / ValueError: a nested value has the wrong kind.
        """
        out = []
        for number, name, _ in self._SUB:
            body = getattr(self, name).SerializeToString()
            if body or name in self._given:
                out.append(field_bytes(number, body, always=True))
        return b"".join(out)

    def ParseFromString(self, data) -> None:  # noqa: N802 - protobuf's name
        """Replace the contents by those parsed from `data`.

        Raises:
            TypeError: data is not bytes.
            DataLossError: the bytes are not a well-formed message of this type.
        """
        what = type(self).__name__
        fields = _fields(data, what)
        self.__init__()
        for number, wire, raw in fields:
            for n, name, cls in self._SUB:
                if number == n:
                    _wire(what, n, wire, 2)
                    setattr(self, name, cls.FromString(raw))

    def _lines(self) -> list:
        return [line for _, name, _ in self._SUB if self.HasField(name)
                for line in _block(name, getattr(self, name)._lines())]


class Example(_Holder):
    """TF's Example: `features`, a Features."""

    _SUB = ((1, "features", Features),)


class SequenceExample(_Holder):
    """TF's SequenceExample: `context` (Features) and `feature_lists` (FeatureLists)."""

    _SUB = ((1, "context", Features), (2, "feature_lists", FeatureLists))


__all__ = ["BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features",
           "FloatList", "Int64List", "SequenceExample"]

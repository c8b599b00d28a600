"""Operators: TF's DecodeJSONExample (onegraph domain).

DecodeJSONExample(json_examples) -> binary_examples: each string, the JSON text of a
tf.train.Example (protobuf's JSON mapping: lowerCamel or original field names, int64
values as numbers or strings, bytes as base64, "NaN"/"Infinity" floats), becomes that
Example's wire-format bytes, written as TF's JSON-to-binary converter writes them: map
entries in the JSON's order, repeated numbers unpacked, set sub-messages always written.
The bytes are built here (ops/ may not import train/), field numbers from example.proto
and feature.proto. Bad JSON is InvalidArgumentError "Error while parsing JSON: ...".
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import struct

import numpy as np

from ..errors import InvalidArgumentError
from .regex_re2 import text_bytes
from .registry import TensorInfo, define
from .summary_encoding import field_bytes, field_key, varint

_D = "onegraph"
_OBJ = np.dtype(object)
# Feature's oneof: JSON names -> (canonical lowerCamel name, field number, value kind)
_KINDS = {"bytesList": ("bytesList", 1, "b"), "bytes_list": ("bytesList", 1, "b"),
          "floatList": ("floatList", 2, "f"), "float_list": ("floatList", 2, "f"),
          "int64List": ("int64List", 3, "i"), "int64_list": ("int64List", 3, "i")}
_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class _Bad(Exception):
    """A JSON text that is no Example: the message says where and why."""


def _object(value, where: str) -> list:
    if not isinstance(value, list) or (value and not isinstance(value[0], tuple)):
        raise _Bad(f"{where}: expected a JSON object, got {json.dumps(_plain(value))[:40]}")
    return value


def _plain(value):
    # object_pairs_hook keeps objects as [(key, value)] lists: show them as JSON again
    if isinstance(value, list) and value and isinstance(value[0], tuple):
        return {k: _plain(v) for k, v in value}
    return value


def _fields(pairs, where: str, known: tuple) -> list:
    seen = set()
    for key, _ in pairs:
        if key not in known:
            raise _Bad(f"{where}: no such field: '{key}'")
        if key in seen:
            raise _Bad(f"{where}: '{key}' has already been set")
        seen.add(key)
    return pairs


def _int64(v, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise _Bad(f"{where}: int64, invalid value {json.dumps(_plain(v))[:40]}")
    if isinstance(v, str):
        try:
            v = int(v, 10)
        except ValueError:
            raise _Bad(f"{where}: int64, invalid number: '{v}'") from None
    elif isinstance(v, float):
        if v != int(v):
            raise _Bad(f"{where}: int64, expected integer, but JSON number had fractional "
                       "part")
        v = int(v)
    if not -2 ** 63 <= v < 2 ** 63:
        raise _Bad(f"{where}: int64, {v} is out of range")
    return v


def _float(v, where: str) -> float:
    if isinstance(v, str):
        if v in _SPECIAL:
            return _SPECIAL[v]
        try:
            return float(v)
        except ValueError:
            raise _Bad(f"{where}: float, invalid number: '{v}'") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Bad(f"{where}: float, invalid value {json.dumps(_plain(v))[:40]}")
    if math.isfinite(v) and abs(v) > 3.4028234663852886e38:
        raise _Bad(f"{where}: float, {v} is out of range")
    return float(v)


def _bytes(v, where: str) -> bytes:
    if not isinstance(v, str):
        raise _Bad(f"{where}: bytes, expected a base64 string")
    text = v.replace("-", "+").replace("_", "/")     # protobuf also takes URL-safe base64
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise _Bad(f"{where}: bytes, corrupt base64") from None


def _list(kind: str, body, where: str) -> bytes:
    """A BytesList / FloatList / Int64List: its `value` entries, one field each."""
    out = []
    for key, values in _fields(_object(body, where), where, ("value",)):
        if values is None:
            continue
        if not isinstance(values, list) or (values and isinstance(values[0], tuple)):
            raise _Bad(f"{where}.value: expected a JSON array")
        for j, v in enumerate(values):
            at = f"{where}.value[{j}]"
            if kind == "b":
                out.append(field_bytes(1, _bytes(v, at), always=True))
            elif kind == "f":
                out.append(field_key(1, 5) + struct.pack("<f", _float(v, at)))
            else:
                out.append(field_key(1, 0) + varint(_int64(v, at)))
    return b"".join(out)


def _feature(body, where: str) -> bytes:
    pairs = _object(body, where)
    chosen = None
    for key, value in _fields(pairs, where, tuple(_KINDS)):
        name, _, _ = _KINDS[key]
        if chosen is not None:
            raise _Bad(f"{where}.{name}: '{name}' has already been set (either directly or "
                       "as part of a oneof)")
        chosen = (key, value)
    if chosen is None or chosen[1] is None:
        return b""
    name, number, kind = _KINDS[chosen[0]]
    return field_bytes(number, _list(kind, chosen[1], f"{where}.{name}"), always=True)


def _features(body, where: str) -> bytes:
    out = []
    for _, mapping in _fields(_object(body, where), where, ("feature",)):
        if mapping is None:
            continue
        for i, (key, value) in enumerate(_object(mapping, f"{where}.feature")):
            entry = field_bytes(1, key.encode("utf-8"), always=True) + \
                field_bytes(2, _feature(value, f"{where}.feature[{i}]"), always=True)
            out.append(field_bytes(1, entry, always=True))
    return b"".join(out)


def json_to_example_bytes(text: bytes) -> bytes:
    """The wire-format bytes of the tf.train.Example whose JSON text is `text`.

    Raises:
        InvalidArgumentError: the text is not JSON, or not an Example's JSON.
    """
    try:
        doc = json.loads(text.decode("utf-8"), object_pairs_hook=list)
        pairs = _fields(_object(doc, "Example"), "Example", ("features",))
        return b"".join(field_bytes(1, _features(v, "features"), always=True)
                        for _, v in pairs if v is not None)
    except UnicodeDecodeError:
        raise InvalidArgumentError("Error while parsing JSON: the text is not UTF-8") \
            from None
    except json.JSONDecodeError as e:
        raise InvalidArgumentError(f"Error while parsing JSON: invalid JSON in "
                                   f"tensorflow.Example, near {e.lineno}:{e.colno}: "
                                   f"{e.msg}") from None
    except (_Bad, RecursionError) as e:
        raise InvalidArgumentError(f"Error while parsing JSON: invalid JSON in "
                                   f"tensorflow.Example @ {e}") from None


def _as_bytes(v) -> bytes:
    if isinstance(v, bytes):
        return v
    if not isinstance(v, str):
        raise InvalidArgumentError(f"DecodeJSONExample: expected strings, got "
                                   f"{type(v).__name__}")
    return text_bytes(v)


def _decode_kernel(inputs, attrs, ctx):
    """DecodeJSONExample: each JSON text as its Example's bytes (same shape).

    Raises:
        InvalidArgumentError: a text that is not an Example's JSON.
    """
    x = np.asarray(inputs[0], dtype=object)
    out = np.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(x.reshape(-1).tolist()):
        flat[i] = json_to_example_bytes(_as_bytes(v)).decode("utf-8", "surrogateescape")
    return (out,)


OPS = (
    define("DecodeJSONExample", ["json_examples"], ["binary_examples"], _decode_kernel,
           infer=lambda attrs, inputs: [TensorInfo(_OBJ, inputs[0].shape)], domain=_D,
           doc="TF's DecodeJSONExample: JSON text of an Example -> its wire bytes."),
)

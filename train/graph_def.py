"""TF's GraphDef, NodeDef and AttrValue protos, parsed from their wire bytes.

Field numbers follow tensorflow/core/framework/graph.proto, node_def.proto,
attr_value.proto, tensor_shape.proto and versions.proto. Only parsing is provided
(og.import_graph_def reads frozen graphs; it never writes them). TensorProto values are
decoded by ops/io_ops.py's parse_array.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConversionError, DataLossError, ExecutionError
from ..ops.io_ops import _BY_TF_NUMBER, parse_array
from ..ops.summary_encoding import packed_int64s, read_fields

__all__ = ["AttrValue", "FunctionDef", "GraphDef", "NodeDef", "func_name", "parse_library",
           "tf_dtype"]


def _fields(data, what: str) -> list:
    """read_fields with a DataLossError naming the message that is malformed."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what}: expected bytes, got {type(data).__name__}")
    try:
        return read_fields(bytes(data))
    except ValueError as e:
        detail = str(e).replace("malformed summary: ", "")   # read_fields' wording
        raise DataLossError(f"cannot parse {what}: {detail}") from None


def _signed(v: int) -> int:
    """A varint read as TF's int64 (two's complement)."""
    return v - (1 << 64) if v >= 1 << 63 else v


def _varints(wire: int, value) -> list:
    """The ints of a repeated varint field entry: one varint, or a packed run.

    Raises:
        DataLossError: a packed varint is truncated or overlong.
    """
    if wire == 0:
        return [_signed(value)]
    try:
        return packed_int64s(value)
    except ValueError:
        raise DataLossError("cannot parse AttrValue: truncated packed varint") from None


def _floats(wire: int, value) -> list:
    """The floats of a repeated float field entry: one fixed32, or a packed run."""
    if len(value) % 4:
        raise DataLossError("cannot parse AttrValue: packed floats not a multiple of 4 bytes")
    return [float(v) for v in np.frombuffer(value, "<f4")]


def tf_dtype(num: int, where: str = "") -> np.dtype:
    """The numpy dtype of TF's DataType enum number (reference types, +100, as their base).

    Raises:
        ConversionError: a DataType og has no numpy dtype for (resource, variant, ...).
    """
    base = num - 100 if num > 100 else num
    if base not in _BY_TF_NUMBER:
        raise ConversionError(f"{where}TF DataType {num} is not supported")
    return _BY_TF_NUMBER[base]


def _shape(data) -> list | None:
    """A TensorShapeProto as a list of dims (None for -1), or None for unknown rank."""
    dims, unknown = [], False
    for field, _, value in _fields(data, "TensorShapeProto"):
        if field == 2:
            size = 0
            for f2, w2, v2 in _fields(value, "TensorShapeProto.Dim"):
                if f2 == 1 and w2 == 0:
                    size = _signed(v2)
            dims.append(None if size < 0 else size)
        elif field == 3:
            unknown = bool(value)
    return None if unknown else dims


class AttrValue:
    """One NodeDef attribute: `kind` names the oneof member set ("s", "i", "f", "b",
    "type", "shape", "tensor", "list", "func", "placeholder" or None) and `value` holds it
    (a list attribute's value is a dict of its member lists)."""

    def __init__(self, kind=None, value=None):
        self.kind, self.value = kind, value

    @classmethod
    def FromString(cls, data) -> "AttrValue":  # noqa: N802 - protobuf's name
        """Parse AttrValue bytes.

        Raises:
            DataLossError: the bytes are not a well-formed AttrValue.
            TypeError: data is not bytes.
        """
        out = cls()
        for field, wire, value in _fields(data, "AttrValue"):
            if field == 1:
                out.kind, out.value = "list", _list_value(value)
            elif field == 2:
                out.kind, out.value = "s", bytes(value)
            elif field == 3:
                out.kind, out.value = "i", _signed(value)
            elif field == 4:
                out.kind, out.value = "f", float(np.frombuffer(value, "<f4")[0])
            elif field == 5:
                out.kind, out.value = "b", bool(value)
            elif field == 6:
                out.kind, out.value = "type", int(value)
            elif field == 7:
                out.kind, out.value = "shape", _shape(value)
            elif field == 8:
                out.kind, out.value = "tensor", bytes(value)
            elif field == 9:
                out.kind, out.value = "placeholder", bytes(value).decode("utf-8", "replace")
            elif field == 10:
                out.kind, out.value = "func", bytes(value)
        return out

    def __repr__(self) -> str:
        return f"AttrValue({self.kind}={self.value!r:.60})"


def _list_value(data) -> dict:
    """AttrValue.ListValue as {"s": [...], "i": [...], "f", "b", "type", "shape",
    "tensor"}, only the members present."""
    out: dict = {}
    for field, wire, value in _fields(data, "AttrValue.ListValue"):
        if field == 2:
            out.setdefault("s", []).append(bytes(value))
        elif field == 3:
            out.setdefault("i", []).extend(_varints(wire, value))
        elif field == 4:
            vals = _floats(wire, value) if wire == 2 else \
                [float(np.frombuffer(value, "<f4")[0])]
            out.setdefault("f", []).extend(vals)
        elif field == 5:
            out.setdefault("b", []).extend(bool(v) for v in _varints(wire, value))
        elif field == 6:
            out.setdefault("type", []).extend(_varints(wire, value))
        elif field == 7:
            out.setdefault("shape", []).append(_shape(value))
        elif field == 8:
            out.setdefault("tensor", []).append(bytes(value))
        elif field == 9:
            out.setdefault("func", []).append(bytes(value))
    return out


def func_name(data) -> str:
    """The function name of a NameAttrList's bytes (a "func" attribute's value).

    Raises:
        DataLossError: the bytes are not a well-formed NameAttrList.
    """
    for field, wire, value in _fields(data, "NameAttrList"):
        if field == 1 and wire == 2:
            return _utf8(value, "NameAttrList.name")
    return ""


class NodeDef:
    """One graph node: name, op, input (["x", "x:1", "^ctrl"]), device, attr {name:
    AttrValue}."""

    def __init__(self, name="", op="", input=None, device="", attr=None):  # noqa: A002
        self.name, self.op, self.device = name, op, device
        self.input = list(input or [])
        self.attr = dict(attr or {})

    @classmethod
    def FromString(cls, data) -> "NodeDef":  # noqa: N802 - protobuf's name
        """Parse NodeDef bytes.

        Raises:
            DataLossError: the bytes are not a well-formed NodeDef.
            TypeError: data is not bytes.
        """
        out = cls()
        for field, wire, value in _fields(data, "NodeDef"):
            if wire != 2:
                continue
            if field == 1:
                out.name = _utf8(value, "NodeDef.name")
            elif field == 2:
                out.op = _utf8(value, "NodeDef.op")
            elif field == 3:
                out.input.append(_utf8(value, "NodeDef.input"))
            elif field == 4:
                out.device = _utf8(value, "NodeDef.device")
            elif field == 5:
                key, attr = "", AttrValue()
                for f2, w2, v2 in _fields(value, "NodeDef.attr entry"):
                    if f2 == 1 and w2 == 2:
                        key = _utf8(v2, "NodeDef.attr key")
                    elif f2 == 2 and w2 == 2:
                        attr = AttrValue.FromString(v2)
                out.attr[key] = attr
        return out

    def get(self, key: str, default=None):
        """The plain value of attribute `key` (a TensorProto's as a numpy array, a type's
        as a numpy dtype, an s's as str), or `default` when absent.

        Raises:
            ConversionError: a tensor or type attribute og cannot represent.
        """
        attr = self.attr.get(key)
        if attr is None or attr.kind is None:
            return default
        where = f"node {self.name!r} ({self.op}) attr {key!r}: "
        if attr.kind == "tensor":
            try:
                return parse_array(attr.value)
            except ExecutionError as e:
                raise ConversionError(where + str(e)) from None
        if attr.kind == "type":
            return tf_dtype(attr.value, where)
        if attr.kind == "s":
            return attr.value.decode("utf-8", "replace")
        if attr.kind == "list":
            if "type" in attr.value:
                return [tf_dtype(t, where) for t in attr.value["type"]]
            for member in ("i", "f", "b", "s", "shape", "tensor", "func"):
                if member in attr.value:
                    return attr.value[member]
            return []
        return attr.value

    def __repr__(self) -> str:
        return f"NodeDef(name={self.name!r}, op={self.op!r}, input={self.input!r})"


def _utf8(value, what: str) -> str:
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        raise DataLossError(f"cannot parse {what}: not UTF-8") from None


class FunctionDef:
    """One function of a GraphDef's library (function.proto's FunctionDef): `name`,
    `input_args` and `output_args` (the signature OpDef's argument names, in order),
    `node` (the body's NodeDefs, inputs named "node:output_arg:index" or an input
    argument's name), `ret` ({output arg: tensor in the body}) and `control_ret`."""

    def __init__(self, name="", input_args=None, output_args=None, node=None, ret=None,
                 control_ret=None):
        self.name = name
        self.input_args = list(input_args or [])
        self.output_args = list(output_args or [])
        self.node = list(node or [])
        self.ret = dict(ret or {})
        self.control_ret = dict(control_ret or {})

    @classmethod
    def FromString(cls, data) -> "FunctionDef":  # noqa: N802 - protobuf's name
        """Parse FunctionDef bytes (attr, arg_attr and resource_arg_unique_id, fields
        5/7/8, are not needed by the importer and skipped).

        Raises:
            DataLossError: the bytes are not a well-formed FunctionDef.
            TypeError: data is not bytes.
        """
        out = cls()
        for field, wire, value in _fields(data, "FunctionDef"):
            if wire != 2:
                continue
            if field == 1:
                out._signature(value)
            elif field == 3:
                out.node.append(NodeDef.FromString(value))
            elif field in (4, 6):
                key, ref = _string_entry(value, "FunctionDef.ret entry")
                (out.ret if field == 4 else out.control_ret)[key] = ref
        return out

    def _signature(self, data) -> None:
        """Read the OpDef: its name (1), input_arg (2) and output_arg (3) names."""
        for field, wire, value in _fields(data, "OpDef"):
            if wire != 2:
                continue
            if field == 1:
                self.name = _utf8(value, "OpDef.name")
            elif field in (2, 3):
                name = ""
                for f2, w2, v2 in _fields(value, "OpDef.ArgDef"):
                    if f2 == 1 and w2 == 2:
                        name = _utf8(v2, "OpDef.ArgDef.name")
                (self.input_args if field == 2 else self.output_args).append(name)

    def __repr__(self) -> str:
        return f"FunctionDef({self.name!r}, {len(self.node)} nodes)"


def _string_entry(data, what: str) -> tuple:
    """A map<string, string> entry's (key, value)."""
    key, value = "", ""
    for field, wire, v in _fields(data, what):
        if field == 1 and wire == 2:
            key = _utf8(v, what)
        elif field == 2 and wire == 2:
            value = _utf8(v, what)
    return key, value


def parse_library(data) -> dict:
    """A FunctionDefLibrary's functions (field 1) as {name: FunctionDef}; gradients
    (field 2) are not needed to run a graph and skipped.

    Raises:
        DataLossError: the bytes are malformed, or two functions share a name.
    """
    out: dict = {}
    for field, wire, value in _fields(data, "FunctionDefLibrary"):
        if field == 1 and wire == 2:
            fn = FunctionDef.FromString(value)
            if fn.name in out:
                raise DataLossError(f"cannot parse FunctionDefLibrary: function "
                                    f"{fn.name!r} is defined twice")
            out[fn.name] = fn
    return out


class GraphDef:
    """A TF GraphDef: `node` (a list of NodeDef), `versions` ({"producer",
    "min_consumer"}); the function library is kept as raw bytes in `library` and
    parsed by `functions()`."""

    def __init__(self, node=None, versions=None, library=b""):
        self.node = list(node or [])
        self.versions = dict(versions or {})
        self.library = library

    def functions(self) -> dict:
        """The library's functions as {name: FunctionDef} (empty without a library).

        Raises:
            DataLossError: the library bytes are malformed.
        """
        return parse_library(self.library) if self.library else {}

    @classmethod
    def FromString(cls, data) -> "GraphDef":  # noqa: N802 - protobuf's name
        """Parse GraphDef bytes (a frozen .pb file's contents).

        Raises:
            DataLossError: the bytes are not a well-formed GraphDef.
            TypeError: data is not bytes.
        """
        out = cls()
        out.ParseFromString(data)
        return out

    def ParseFromString(self, data) -> int:  # noqa: N802 - protobuf's name
        """Replace this GraphDef's contents with parsed bytes; returns their length.

        Raises:
            DataLossError: the bytes are not a well-formed GraphDef.
            TypeError: data is not bytes.
        """
        fields = _fields(data, "GraphDef")
        node, versions, library = [], {}, b""
        for field, wire, value in fields:
            if field in (1, 2, 4) and wire != 2:   # node, library, versions: messages
                raise DataLossError(f"cannot parse GraphDef: field {field} has wire type "
                                    f"{wire}, not a message")
            if field == 1:
                node.append(NodeDef.FromString(value))
            elif field == 2:
                library = bytes(value)
            elif field == 4:
                for f2, w2, v2 in _fields(value, "VersionDef"):
                    if f2 in (1, 2) and w2 == 0:
                        versions["producer" if f2 == 1 else "min_consumer"] = _signed(v2)
        self.node, self.versions, self.library = node, versions, library
        return len(data)

    def __repr__(self) -> str:
        return f"GraphDef({len(self.node)} nodes)"

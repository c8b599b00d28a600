"""TF's SavedModel protobuf (saved_model.pb), parsed from its wire bytes, as far as
loading a TF1 SavedModel needs: its MetaGraphDefs' tags, GraphDefs and SignatureDefs.

Field numbers follow tensorflow/core/protobuf/saved_model.proto and meta_graph.proto:
SavedModel {saved_model_schema_version = 1, meta_graphs = 2}; MetaGraphDef
{meta_info_def = 1, graph_def = 2, saver_def = 3, collection_def = 4, signature_def = 5,
asset_file_def = 6, object_graph_def = 7}; MetaInfoDef {tags = 4}; SignatureDef
{inputs = 1, outputs = 2, method_name = 3}; TensorInfo {name = 1, dtype = 2,
tensor_shape = 3, coo_sparse = 4, composite_tensor = 5}. Only parsing is provided.
"""

from __future__ import annotations

from ..errors import DataLossError
from .graph_def import GraphDef, _fields, _shape, _utf8

__all__ = ["ProtoTensorInfo", "ProtoSignatureDef", "ProtoMetaGraphDef", "parse_saved_model"]


def _message(wire: int, value, what: str):
    """A length-delimited field's bytes.

    Raises:
        DataLossError: the field is not length-delimited (wrong wire type).
    """
    if wire != 2:
        raise DataLossError(f"cannot parse {what}: wire type {wire}, not a message")
    return value


class ProtoTensorInfo:
    """A SignatureDef's TensorInfo: `name` ("node:0"; "" for a sparse or composite
    tensor, whose `encoding` then says which), TF `dtype` number and `shape` (a list of
    dims, None for unknown, or None for unknown rank)."""

    def __init__(self, name="", dtype=0, shape=None, encoding="name"):
        self.name, self.dtype, self.shape, self.encoding = name, dtype, shape, encoding

    @classmethod
    def parse(cls, data) -> "ProtoTensorInfo":
        """Parse TensorInfo bytes.

        Raises:
            DataLossError: the bytes are not a well-formed TensorInfo.
        """
        out = cls()
        for field, wire, value in _fields(data, "TensorInfo"):
            if field == 1:
                out.name = _utf8(_message(wire, value, "TensorInfo.name"), "TensorInfo.name")
            elif field == 2 and wire == 0:
                out.dtype = int(value)
            elif field == 3:
                out.shape = _shape(_message(wire, value, "TensorInfo.tensor_shape"))
            elif field == 4:
                out.encoding = "coo_sparse"
            elif field == 5:
                out.encoding = "composite_tensor"
        return out

    def __repr__(self) -> str:
        return f"ProtoTensorInfo({self.name!r}, dtype={self.dtype}, shape={self.shape})"


def _map_entry(data, what: str, parse_value) -> tuple:
    """(key, value) of one map<string, Message> entry (key = 1, value = 2)."""
    key, value = "", None
    for field, wire, v in _fields(data, what):
        if field == 1:
            key = _utf8(_message(wire, v, what), what + " key")
        elif field == 2:
            value = parse_value(_message(wire, v, what))
    return key, value


class ProtoSignatureDef:
    """A SignatureDef: `inputs` and `outputs` ({key: ProtoTensorInfo}), `method_name`."""

    def __init__(self, inputs=None, outputs=None, method_name=""):
        self.inputs, self.outputs = dict(inputs or {}), dict(outputs or {})
        self.method_name = method_name

    @classmethod
    def parse(cls, data) -> "ProtoSignatureDef":
        """Parse SignatureDef bytes.

        Raises:
            DataLossError: the bytes are not a well-formed SignatureDef.
        """
        out = cls()
        for field, wire, value in _fields(data, "SignatureDef"):
            if field in (1, 2):
                key, info = _map_entry(_message(wire, value, "SignatureDef"),
                                       "SignatureDef map entry", ProtoTensorInfo.parse)
                (out.inputs if field == 1 else out.outputs)[key] = \
                    info if info is not None else ProtoTensorInfo()
            elif field == 3:
                out.method_name = _utf8(_message(wire, value, "SignatureDef"),
                                        "SignatureDef.method_name")
        return out


class ProtoMetaGraphDef:
    """One MetaGraphDef: `tags`, `graph_def` (a GraphDef), `signature_def` ({key:
    ProtoSignatureDef}), and `object_graph` (whether it holds a TF2 SavedObjectGraph)."""

    def __init__(self):
        self.tags: list = []
        self.graph_def = GraphDef()
        self.signature_def: dict = {}
        self.object_graph = False

    @classmethod
    def parse(cls, data) -> "ProtoMetaGraphDef":
        """Parse MetaGraphDef bytes.

        Raises:
            DataLossError: the bytes are not a well-formed MetaGraphDef.
        """
        out = cls()
        for field, wire, value in _fields(data, "MetaGraphDef"):
            if field == 1:
                for f2, w2, v2 in _fields(_message(wire, value, "MetaInfoDef"),
                                          "MetaInfoDef"):
                    if f2 == 4:
                        out.tags.append(_utf8(_message(w2, v2, "MetaInfoDef.tags"),
                                              "MetaInfoDef.tags"))
            elif field == 2:
                out.graph_def = GraphDef.FromString(_message(wire, value, "GraphDef"))
            elif field == 5:
                key, sig = _map_entry(_message(wire, value, "MetaGraphDef"),
                                      "signature_def entry", ProtoSignatureDef.parse)
                out.signature_def[key] = sig if sig is not None else ProtoSignatureDef()
            elif field == 7:
                out.object_graph = True
        return out


def parse_saved_model(data) -> tuple:
    """(schema version, [ProtoMetaGraphDef]) of saved_model.pb's bytes.

    Raises:
        DataLossError: the bytes are not a well-formed SavedModel.
        TypeError: data is not bytes.
    """
    version, metas = 0, []
    for field, wire, value in _fields(data, "SavedModel"):
        if field == 1:
            if wire != 0:
                raise DataLossError(f"cannot parse SavedModel: schema version has wire "
                                    f"type {wire}")
            version = int(value)
        elif field == 2:
            metas.append(ProtoMetaGraphDef.parse(_message(wire, value, "SavedModel")))
        else:
            raise DataLossError(f"cannot parse SavedModel: unknown field {field} (not a "
                                "SavedModel)")
    if not metas:
        raise DataLossError("cannot parse SavedModel: it holds no MetaGraphDef")
    return version, metas

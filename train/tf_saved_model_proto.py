"""TF's SavedModel protobuf (saved_model.pb), parsed from its wire bytes, as far as
loading a SavedModel needs: its MetaGraphDefs' tags, GraphDefs, SignatureDefs and (TF2)
the SavedObjectGraph's nodes, variables and concrete functions' bound inputs.

Field numbers follow tensorflow/core/protobuf/saved_model.proto and meta_graph.proto:
SavedModel {saved_model_schema_version = 1, meta_graphs = 2}; MetaGraphDef
{meta_info_def = 1, graph_def = 2, saver_def = 3, collection_def = 4, signature_def = 5,
asset_file_def = 6, object_graph_def = 7}; MetaInfoDef {tags = 4}; SignatureDef
{inputs = 1, outputs = 2, method_name = 3}; TensorInfo {name = 1, dtype = 2,
tensor_shape = 3, coo_sparse = 4, composite_tensor = 5}. From saved_object_graph.proto
and trackable_object_graph.proto (checked against TF 2.21's generated descriptors):
SavedObjectGraph {nodes = 1, concrete_functions = 2 (map<string, SavedConcreteFunction>)};
SavedObject {children = 1 (ObjectReference {node_id = 1, local_name = 2}), user_object = 4,
asset = 5, function = 6, variable = 7, bare_concrete_function = 8, constant = 9,
resource = 10, captured_tensor = 12}; SavedVariable {dtype = 1, shape = 2, name = 6};
SavedConcreteFunction {bound_inputs = 2}. Only parsing is provided.
"""

from __future__ import annotations

from ..errors import DataLossError
from .graph_def import GraphDef, _fields, _shape, _utf8, _varints

__all__ = ["ProtoTensorInfo", "ProtoSignatureDef", "ProtoSavedObject", "ProtoSavedObjectGraph",
           "ProtoMetaGraphDef", "parse_saved_model"]


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


# SavedObject's oneof `kind` members by field number
_OBJECT_KINDS = {4: "user_object", 5: "asset", 6: "function", 7: "variable",
                 8: "bare_concrete_function", 9: "constant", 10: "resource",
                 12: "captured_tensor"}


class ProtoSavedObject:
    """One SavedObjectGraph node: `children` ([(node id, local name)]), `kind` (the
    SavedObject oneof member set, "" if none) and, for a variable, `dtype` (TF number),
    `shape` and `name`."""

    def __init__(self):
        self.children: list = []
        self.kind = ""
        self.dtype, self.shape, self.name = 0, None, ""

    @classmethod
    def parse(cls, data) -> "ProtoSavedObject":
        """Parse SavedObject bytes.

        Raises:
            DataLossError: the bytes are not a well-formed SavedObject.
        """
        out = cls()
        for field, wire, value in _fields(data, "SavedObject"):
            if field == 1:
                node_id, local = -1, ""
                for f2, w2, v2 in _fields(_message(wire, value, "ObjectReference"),
                                          "ObjectReference"):
                    if f2 == 1 and w2 == 0:
                        node_id = int(v2)
                    elif f2 == 2:
                        local = _utf8(_message(w2, v2, "ObjectReference.local_name"),
                                      "ObjectReference.local_name")
                if node_id < 0:
                    raise DataLossError("cannot parse SavedObject: a child reference has "
                                        "no node_id")
                out.children.append((node_id, local))
            elif field in _OBJECT_KINDS:
                out.kind = _OBJECT_KINDS[field]
                if field == 7:
                    out._variable(_message(wire, value, "SavedVariable"))
        return out

    def _variable(self, data) -> None:
        """Read a SavedVariable's dtype (1), shape (2) and name (6)."""
        for field, wire, value in _fields(data, "SavedVariable"):
            if field == 1 and wire == 0:
                self.dtype = int(value)
            elif field == 2:
                self.shape = _shape(_message(wire, value, "SavedVariable.shape"))
            elif field == 6:
                self.name = _utf8(_message(wire, value, "SavedVariable.name"),
                                  "SavedVariable.name")


def _bound_inputs(data) -> list:
    """A SavedConcreteFunction's bound_inputs (field 2, packed or not): node ids."""
    ids: list = []
    for field, wire, value in _fields(data, "SavedConcreteFunction"):
        if field == 2:
            ids.extend(int(v) for v in _varints(wire, value))
    return ids


class ProtoSavedObjectGraph:
    """A TF2 SavedObjectGraph: `nodes` ([ProtoSavedObject], the root first) and
    `bound_inputs` ({concrete function name: [node id of each captured input]})."""

    def __init__(self, nodes=None, bound_inputs=None):
        self.nodes = list(nodes or [])
        self.bound_inputs = dict(bound_inputs or {})

    @classmethod
    def parse(cls, data) -> "ProtoSavedObjectGraph":
        """Parse SavedObjectGraph bytes; every node id it refers to must exist.

        Raises:
            DataLossError: the bytes are not a well-formed SavedObjectGraph, or a child
                or bound input names a node it does not hold.
        """
        out = cls()
        for field, wire, value in _fields(data, "SavedObjectGraph"):
            if field == 1:
                out.nodes.append(ProtoSavedObject.parse(_message(wire, value, "SavedObject")))
            elif field == 2:
                key, ids = _map_entry(_message(wire, value, "SavedObjectGraph"),
                                      "concrete_functions entry", _bound_inputs)
                out.bound_inputs[key] = ids or []
        count = len(out.nodes)
        refs = [(f"node {i}'s child {name!r}", c) for i, n in enumerate(out.nodes)
                for c, name in n.children]
        refs += [(f"function {k!r}'s bound input", c) for k, ids in out.bound_inputs.items()
                 for c in ids]
        for what, node_id in refs:
            if not 0 <= node_id < count:
                raise DataLossError(f"cannot parse SavedObjectGraph: {what} is node "
                                    f"{node_id}, but it holds {count} nodes")
        return out


class ProtoMetaGraphDef:
    """One MetaGraphDef: `tags`, `graph_def` (a GraphDef), `signature_def` ({key:
    ProtoSignatureDef}), and `object_graph` (a TF2 SavedModel's ProtoSavedObjectGraph,
    None in a TF1 one)."""

    def __init__(self):
        self.tags: list = []
        self.graph_def = GraphDef()
        self.signature_def: dict = {}
        self.object_graph = None

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
                out.object_graph = ProtoSavedObjectGraph.parse(
                    _message(wire, value, "SavedObjectGraph"))
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

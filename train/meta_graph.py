"""og.train.import_meta_graph: bring a TF1 MetaGraphDef (a .meta file) into og.

The graph is built by og.import_graph_def, its variables (VariableV2 / VarHandleOp)
becoming og Variables (graph_def_state.py). The nodes of TF's own Saver (under the
scope of saver_def's filename tensor, "save/") are left out: the og.train.Saver
returned reads and writes the same checkpoints, by the variables' TF names.

Wire format (tensorflow/core/protobuf/meta_graph.proto, saver.proto, variable.proto):
MetaGraphDef {graph_def = 2, saver_def = 3, collection_def = 4 (map<string,
CollectionDef>: key = 1, value = 2)}; CollectionDef {node_list = 1, bytes_list = 2,
int64_list = 3, float_list = 4, any_list = 5}, each a message whose `value` is field 1;
SaverDef {filename_tensor_name = 1}; VariableDef {variable_name = 1, initializer_name = 2,
snapshot_name = 3, is_resource = 5, trainable = 7}.
"""

from __future__ import annotations

import os
import struct

from ..errors import ConversionError, DataLossError, NotFoundError
from .graph_def import GraphDef, _fields, _utf8, _varints
from .graph_def_import import import_graph_def
from .graph_def_state import imported_variables
from .saver import Saver
from .tf_saved_model_proto import ProtoMetaGraphDef

__all__ = ["import_meta_graph"]

# collections holding VariableDef protos (bytes_list): their items become Variables
_VARIABLE_COLLECTIONS = frozenset({"variables", "trainable_variables", "local_variables",
                                   "model_variables", "moving_average_variables",
                                   "concatenated_variables"})


def _og():
    from . import public    # og's namespace; imported late as public.py imports this
    return public


def _bytes(wire: int, value, what: str) -> bytes:
    if wire != 2:
        raise DataLossError(f"cannot parse {what}: wire type {wire}, not bytes")
    return bytes(value)


def _collection(data: bytes, key: str) -> tuple:
    """(kind, [values]) of one CollectionDef: "node_list" (str), "bytes_list" (bytes),
    "int64_list" (int), "float_list" (float) or "any_list" (skipped, values []).

    Raises:
        DataLossError: the bytes are not a well-formed CollectionDef.
    """
    kinds = {1: "node_list", 2: "bytes_list", 3: "int64_list", 4: "float_list",
             5: "any_list"}
    kind, values = "node_list", []
    what = f"CollectionDef {key!r}"
    for field, wire, value in _fields(data, what):
        if field not in kinds:
            continue
        kind = kinds[field]
        for f2, w2, v2 in _fields(_bytes(wire, value, what), what):
            if f2 != 1 or kind == "any_list":
                continue
            if kind == "node_list":
                values.append(_utf8(_bytes(w2, v2, what), what))
            elif kind == "bytes_list":
                values.append(_bytes(w2, v2, what))
            elif kind == "int64_list":
                values.extend(_varints(w2, v2))
            elif w2 == 5:       # one fixed32 float
                values.append(struct.unpack("<f", struct.pack("<I", v2))[0])
            else:               # a packed run of floats
                raw = _bytes(w2, v2, what)
                values.extend(struct.unpack(f"<{len(raw) // 4}f", raw[:len(raw) // 4 * 4]))
    return kind, values


def _variable_def(data: bytes) -> dict:
    """A VariableDef's variable_name, initializer_name and trainable (TF1's default True).

    Raises:
        DataLossError: the bytes are not a well-formed VariableDef.
    """
    out = {"variable_name": "", "initializer_name": "", "trainable": True}
    for field, wire, value in _fields(data, "VariableDef"):
        if field in (1, 2):
            key = "variable_name" if field == 1 else "initializer_name"
            out[key] = _utf8(_bytes(wire, value, "VariableDef"), "VariableDef")
        elif field == 7 and wire == 0:
            out["trainable"] = bool(value)
    return out


def _parse(data: bytes) -> tuple:
    """(ProtoMetaGraphDef, saver scope or "", {collection key: (kind, values)}).

    Raises:
        DataLossError: the bytes are not a well-formed MetaGraphDef.
    """
    meta = ProtoMetaGraphDef.parse(data)
    scope, collections = "", {}
    for field, wire, value in _fields(data, "MetaGraphDef"):
        if field == 3:
            for f2, w2, v2 in _fields(_bytes(wire, value, "SaverDef"), "SaverDef"):
                if f2 == 1:
                    name = _utf8(_bytes(w2, v2, "SaverDef"), "SaverDef")
                    scope = name.rpartition("/")[0]
        elif field == 4:
            key, body = "", b""
            for f2, w2, v2 in _fields(_bytes(wire, value, "collection_def"),
                                      "collection_def entry"):
                if f2 == 1:
                    key = _utf8(_bytes(w2, v2, "collection_def"), "collection_def key")
                elif f2 == 2:
                    body = _bytes(w2, v2, "collection_def")
            collections[key] = _collection(body, key)
    return meta, scope, collections


def _read(meta_graph_or_file) -> bytes:
    """The MetaGraphDef bytes of a path or of bytes.

    Raises:
        TypeError: neither a str/PathLike nor bytes.
        NotFoundError: the file does not exist.
    """
    if isinstance(meta_graph_or_file, (bytes, bytearray)):
        return bytes(meta_graph_or_file)
    if not isinstance(meta_graph_or_file, (str, os.PathLike)):
        raise TypeError(f"import_meta_graph: meta_graph_or_file must be a path or the "
                        f"MetaGraphDef's bytes, got {type(meta_graph_or_file).__name__}")
    path = os.fspath(meta_graph_or_file)
    if not os.path.isfile(path):
        raise NotFoundError(f"import_meta_graph: no such file {path!r}")
    with open(path, "rb") as f:
        return f.read()


def _in_scope(name: str, scope: str) -> bool:
    return bool(scope) and (name == scope or name.startswith(scope + "/"))


def _node_of(name: str) -> str:
    name = name[1:] if name.startswith("^") else name
    node, sep, index = name.rpartition(":")
    return node if sep and index.isdigit() else name


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None,
                      **kwargs):
    """Import a TF1 MetaGraphDef (the .meta file tf.train.Saver.save writes, or its
    bytes) into the default og graph, as TF1's tf.train.import_meta_graph.

    Variables become og Variables (zeros until initialized or restored); the
    collections are restored: VariableDef lists ("variables", "trainable_variables",
    ...) as those Variables, node lists (train_op, losses, summaries, ...) as the
    imported tensors ("name:i") and operations ("name"), int64/float lists as values.
    Other collections (TF's control-flow contexts, queue runners, savers) are skipped.
    Returns an og.train.Saver over the imported variables under their TF names (the
    checkpoint's keys), or None when the graph has no variables; with
    `return_elements` (TF's keyword), (that Saver, [Tensor or Operation per name]). clear_devices is
    accepted (og has one device); `import_scope` prefixes the imported names; other
    keyword argument input_map is passed to og.import_graph_def.

    Raises:
        TypeError: meta_graph_or_file is not a path or bytes, or an unknown keyword.
        NotFoundError: the file does not exist.
        DataLossError: the bytes are not a well-formed MetaGraphDef.
        ConversionError: as og.import_graph_def (unsupported op types, listed in one
            message), or a collection names a node the graph does not have.
    """
    del clear_devices           # og runs on one device
    unknown = set(kwargs) - {"input_map", "return_elements"}
    if unknown:
        raise TypeError(f"import_meta_graph: unexpected keyword arguments {sorted(unknown)}")
    if import_scope is not None and not isinstance(import_scope, str):
        raise TypeError(f"import_meta_graph: import_scope must be a str, got "
                        f"{type(import_scope).__name__}")
    meta, saver_scope, collections = _parse(_read(meta_graph_or_file))
    source = meta.graph_def
    nodes = [n for n in source.node if not _in_scope(n.name, saver_scope)]
    graph_def = GraphDef(nodes, source.versions, source.library)
    names = [n.name for n in nodes]
    og = _og()
    graph = og.get_default_graph()
    before = set(map(id, imported_variables(graph).values()))
    found = import_graph_def(graph_def, input_map=kwargs.get("input_map"),
                             return_elements=names, name=import_scope or "")
    operations = dict(zip(names, found))
    # this import's variables only (an earlier import into the graph made others)
    variables = {name: v for name, v in imported_variables(graph).items()
                 if id(v) not in before}
    _restore_collections(graph, collections, saver_scope, operations, variables)
    saver = Saver(dict(variables)) if variables else None
    wanted = kwargs.get("return_elements")
    if wanted is None:
        return saver
    return saver, [_returned(name, operations) for name in wanted]


def _returned(name, operations):
    """One of TF's return_elements: "node:i" -> Tensor, "node" -> Operation.

    Raises:
        TypeError: name is not a str.
        ConversionError: the graph has no such node or output.
    """
    if not isinstance(name, str):
        raise TypeError(f"import_meta_graph: return_elements must be str, got {name!r}")
    node = _node_of(name)
    if node not in operations:
        raise ConversionError(f"import_meta_graph: requested return element {name!r} is "
                              "not in the graph")
    return _element(name, node, operations[node])


def _restore_collections(graph, collections, saver_scope, operations, variables) -> None:
    """Add the meta graph's collections to `graph` (see import_meta_graph).

    Raises:
        ConversionError: a collection names a node that was not imported.
        DataLossError: a VariableDef is malformed.
    """
    for key, (kind, values) in sorted(collections.items()):
        if key in _VARIABLE_COLLECTIONS and kind == "bytes_list":
            for raw in values:
                info = _variable_def(raw)
                node = _node_of(info["variable_name"])
                if node not in variables:
                    raise ConversionError(f"import_meta_graph: collection {key!r} names "
                                          f"variable {node!r}, which was not imported")
                var = variables[node]
                if key == "trainable_variables":
                    var.trainable = True
                graph.add_to_collection(key, var)
        elif kind == "node_list":
            for name in values:
                node = _node_of(name)
                if _in_scope(node, saver_scope):
                    continue
                if node not in operations:
                    raise ConversionError(f"import_meta_graph: collection {key!r} names "
                                          f"{name!r}, which is not a node of the graph")
                graph.add_to_collection(key, _element(name, node, operations[node]))
        elif kind in ("int64_list", "float_list"):
            for value in values:
                graph.add_to_collection(key, value)


def _element(name: str, node: str, op):
    """The tensor ("node:i") or operation ("node") a node_list entry names.

    Raises:
        ConversionError: the node has no such output.
    """
    if name == node or name.startswith("^"):
        return op
    index = int(name.rpartition(":")[2])
    outputs = list(op.outputs) if op is not None else []
    if index >= len(outputs):
        raise ConversionError(f"import_meta_graph: a collection names {name!r}, but "
                              f"{node!r} has {len(outputs)} output(s)")
    return outputs[index]

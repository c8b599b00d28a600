"""SavedModel directories written by TensorFlow itself (saved_model.pb + variables/), TF1
and TF2 ones: read, frozen and imported into an og graph.

Loading freezes the graph, as TF's convert_variables_to_constants does: each variable
(a reference VariableV2, whose reads are Identity nodes, or a resource VarHandleOp, read
by ReadVariableOp / ResourceGather) becomes a constant holding its value from
variables/variables.* (TF's V2 checkpoint, read with every CRC checked; the keys are the
variables' names), and the graph is pruned to what the signatures need, so the saver,
restore and initializer subgraphs are left out. The variables are therefore not og
Variables: the loaded graph serves, it does not train.

TF2 object-based SavedModels (tf.saved_model.save) call a library function through a
StatefulPartitionedCall whose trailing inputs are the captured variables' VarHandleOps.
Their checkpoint keys are object-graph paths, found through the SavedObjectGraph: the
called concrete function's bound_inputs name the captured objects' nodes, in the order of
those inputs, and a variable's key is its shortest child path from the root (local names
escaped as TF's escape_local_name) + "/.ATTRIBUTES/VARIABLE_VALUE". Each captured handle
becomes a Const of that value, so inside the functions a ReadVariableOp of it becomes an
Identity and a ResourceGather a Gather; functions that write variables are refused.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import ConversionError, DataLossError, NotFoundError
from ..ops.io_ops import serialize_array
from .graph_def import AttrValue, GraphDef, NodeDef, func_name
from .tf_saved_model_proto import parse_saved_model

__all__ = ["PB_FILENAME", "INIT_OP_SIGNATURE", "has_tf_saved_model", "read_meta_graph",
           "captured_variable_keys", "freeze_meta_graph", "import_meta_graph",
           "load_into_graph"]

PB_FILENAME = "saved_model.pb"
_REF_VARIABLES = {"VariableV2", "Variable"}
# the MetaGraphDef's pseudo-signature naming the init op (TF2), not a model signature
INIT_OP_SIGNATURE = "__saved_model_init_op"
_VARIABLE_ATTRIBUTE = "/.ATTRIBUTES/VARIABLE_VALUE"


def has_tf_saved_model(export_dir) -> bool:
    """Whether export_dir holds TF's saved_model.pb. Never raises for a path."""
    return os.path.isfile(os.path.join(os.fsdecode(export_dir), PB_FILENAME))


def _tags_text(tags) -> str:
    return str(list(tags)).strip("[]")


def read_meta_graph(export_dir: str, tags):
    """The MetaGraphDef of export_dir/saved_model.pb whose tags are exactly `tags`.

    Raises:
        ConversionError: no saved_model.pb, or it cannot be read.
        DataLossError: saved_model.pb is not a well-formed SavedModel.
        RuntimeError: no meta graph has these tags (TF's words).
    """
    path = os.path.join(export_dir, PB_FILENAME)
    if not os.path.isfile(path):
        raise ConversionError(f"SavedModel file does not exist at: {path}")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ConversionError(f"cannot read {path!r}: {e.strerror or e}") from None
    try:
        _, metas = parse_saved_model(data)
    except DataLossError as e:
        raise DataLossError(f"{path}: {e}") from None
    meta = next((m for m in metas if set(m.tags) == set(tags)), None)
    if meta is None:
        available = "[" + ", ".join("{" + ", ".join(repr(t) for t in sorted(set(m.tags)))
                                    + "}" for m in metas) + "]"
        raise RuntimeError(
            f"MetaGraphDef associated with tags {_tags_text(tags)} could not be found in "
            f"SavedModel, with available tags '{available}'. To inspect available "
            "tag-sets in the SavedModel, please use the SavedModel CLI: `saved_model_cli`.")
    return meta


def _node_of(ref: str) -> str:
    """The node name of an input or tensor reference ("^a", "a:1", "a")."""
    ref = ref.lstrip("^")
    node, sep, index = ref.rpartition(":")
    return node if sep and index.isdigit() else ref


def _const_node(name: str, value: np.ndarray) -> NodeDef:
    """A Const NodeDef holding value."""
    attr = {"value": AttrValue("tensor", serialize_array(value))}
    return NodeDef(name, "Const", [], attr=attr)


class _Values:
    """Variable values from export_dir/variables/variables (read on first need)."""

    def __init__(self, export_dir: str, keys=None):
        self.prefix = os.path.join(export_dir, "variables", "variables")
        self._reader = None
        # TF2: {captured VarHandleOp name: its object-graph checkpoint key}
        self.keys = dict(keys or {})

    def get(self, var: NodeDef, dtype_attr: str = "dtype") -> np.ndarray:
        """The checkpoint value of variable node `var`, in its declared dtype and shape.

        Raises:
            ConversionError: no checkpoint, the variable is missing from it, or its
                value's dtype or shape is not the variable's.
            DataLossError: the checkpoint is corrupt.
        """
        from .checkpoint_utils import CheckpointReader

        if self._reader is None:
            if not os.path.isfile(self.prefix + ".index"):
                raise ConversionError(f"the SavedModel has variables (first {var.name!r}) "
                                      f"but no checkpoint {self.prefix}.index")
            self._reader = CheckpointReader(self.prefix)
        if var.name in self.keys:
            key = self.keys[var.name]
            if not self._reader.has_tensor(key):
                raise ConversionError(f"variable {key!r} (captured as graph node "
                                      f"{var.name!r}) is not in the SavedModel's "
                                      f"checkpoint {self.prefix}")
        else:
            keys = [var.name] + [k for k in [var.get("shared_name")] if k and k != var.name]
            key = next((k for k in keys if self._reader.has_tensor(k)), None)
        if key is None:
            raise ConversionError(f"variable {var.name!r} ({var.op}) is not in the "
                                  f"SavedModel's checkpoint {self.prefix}")
        try:
            value = self._reader.get_tensor(key)
        except NotFoundError as e:
            raise ConversionError(str(e)) from None
        want = var.get(dtype_attr)
        if want is not None and np.dtype(value.dtype) != np.dtype(want):
            raise ConversionError(f"variable {var.name!r}: the checkpoint holds "
                                  f"{value.dtype}, the graph declares {np.dtype(want)}")
        shape = var.get("shape")
        if shape is not None and None not in shape and list(value.shape) != list(shape):
            raise ConversionError(f"variable {var.name!r}: the checkpoint holds shape "
                                  f"{list(value.shape)}, the graph declares {shape}")
        return value


def _frozen(node: NodeDef, by_name: dict, values: _Values):
    """The node that replaces `node` when freezing, and whether its inputs are still
    needed: a variable becomes a Const of its value, a resource read of one a Const
    (ReadVariableOp) or a Gather of one (ResourceGather); other nodes stay.

    Raises:
        ConversionError: a resource variable used by an op freezing cannot rewrite.
    """
    if node.op in _REF_VARIABLES or node.op == "VarHandleOp" and node.name in values.keys:
        return _const_node(node.name, values.get(node)), False
    handles = [by_name.get(_node_of(r)) for r in node.input if not r.startswith("^")]
    if values.keys and _called_functions(node):
        # a TF2 function call: its captured handles become Consts; its body is
        # rewritten by _frozen_library
        return node, True
    var = handles[0] if handles else None
    if var is None or var.op != "VarHandleOp":
        if any(h is not None and h.op == "VarHandleOp" for h in handles):
            raise ConversionError(f"node {node.name!r} ({node.op}) uses resource "
                                  "variable(s) in a way freezing does not support (only "
                                  "ReadVariableOp and ResourceGather)")
        return node, True
    if node.op == "ReadVariableOp":
        return _const_node(node.name, values.get(var)), False
    if node.op == "ResourceGather" and not node.get("batch_dims", 0):
        # the params become a Const of their own, next to the gather
        params = _const_node(node.name + "/frozen_params", values.get(var))
        gather = NodeDef(node.name, "Gather", [params.name] + node.input[1:],
                         attr={k: v for k, v in node.attr.items() if k == "Tindices"})
        gather.attr["Tparams"] = node.attr.get("dtype", AttrValue())
        return [params, gather], True
    raise ConversionError(f"node {node.name!r} ({node.op}) uses resource variable "
                          f"{var.name!r}: freezing supports only ReadVariableOp and "
                          "ResourceGather reads")


def _called_functions(node: NodeDef, library=()) -> list:
    """The names of the functions `node` calls: through its func attributes (f,
    then_branch, body, branches, ...) or, if its op names a library function, by op."""
    names = [node.op] if node.op in library else []
    for attr in node.attr.values():
        if attr.kind == "func":
            names.append(func_name(attr.value))
        elif attr.kind == "list":
            names.extend(func_name(v) for v in attr.value.get("func", []))
    return names


def _object_paths(graph) -> dict:
    """{node id: checkpoint path} of a SavedObjectGraph: each node's first shortest
    child path from the root (breadth first, children in order, as TF's checkpoint
    traversal), local names escaped as TF's escape_local_name ("." -> "..", "/" -> ".S").
    """
    paths = {0: ""} if graph.nodes else {}
    queue = [0] if graph.nodes else []
    for node_id in queue:
        for child, local in graph.nodes[node_id].children:
            if child not in paths:
                name = local.replace(".", "..").replace("/", ".S")
                paths[child] = f"{paths[node_id]}/{name}" if paths[node_id] else name
                queue.append(child)
    return paths


def captured_variable_keys(meta) -> dict:
    """TF2: {VarHandleOp node name: checkpoint key} of the variables the graph's calls
    of saved concrete functions capture (the call's trailing inputs, one per bound
    input of the function in meta's SavedObjectGraph); {} for a TF1 meta graph.

    Raises:
        ConversionError: a call has fewer inputs than its function's bound inputs, or
            a captured variable is not reachable from the object graph's root.
    """
    graph = meta.object_graph
    if graph is None:
        return {}
    paths = _object_paths(graph)
    by_name = {n.name: n for n in meta.graph_def.node}
    keys: dict = {}
    for node in meta.graph_def.node:
        for fn in _called_functions(node):
            bound = graph.bound_inputs.get(fn)
            if not bound:
                continue
            inputs = [r for r in node.input if not r.startswith("^")]
            if len(inputs) < len(bound):
                raise ConversionError(f"node {node.name!r} calls {fn!r} with {len(inputs)} "
                                      f"inputs, fewer than its {len(bound)} captured ones")
            for ref, node_id in zip(inputs[len(inputs) - len(bound):], bound):
                handle = by_name.get(_node_of(ref))
                if handle is None or handle.op != "VarHandleOp" or \
                        graph.nodes[node_id].kind != "variable":
                    continue
                if node_id not in paths:
                    raise ConversionError(f"the variable captured as {handle.name!r} "
                                          f"(object node {node_id}) is not reachable from "
                                          "the SavedObjectGraph's root")
                keys[handle.name] = paths[node_id] + _VARIABLE_ATTRIBUTE
    return keys


# resource-variable ops inside functions that a frozen graph cannot honour (writes)
_VARIABLE_WRITES = ("Assign", "ResourceApply", "ResourceScatter", "ResourceSparseApply",
                    "DestroyResourceOp", "VarHandleOp")


def _frozen_function_node(node: NodeDef, fn_name: str) -> NodeDef:
    """A function body node with its captured variables frozen: ReadVariableOp ->
    Identity, ResourceGather -> Gather, VariableShape -> Shape; other nodes stay.

    Raises:
        ConversionError: the node writes or creates a variable.
    """
    if node.op == "ReadVariableOp":
        return NodeDef(node.name, "Identity", node.input, node.device,
                       {"T": node.attr.get("dtype", AttrValue())})
    if node.op == "ResourceGather" and not node.get("batch_dims", 0):
        attr = {"Tparams": node.attr.get("dtype", AttrValue())}
        if "Tindices" in node.attr:
            attr["Tindices"] = node.attr["Tindices"]
        return NodeDef(node.name, "Gather", node.input, node.device, attr)
    if node.op == "VariableShape":
        attr = {"out_type": node.attr["out_type"]} if "out_type" in node.attr else {}
        return NodeDef(node.name, "Shape", node.input, node.device, attr)
    if node.op.startswith(_VARIABLE_WRITES) or node.op == "ResourceGather":
        raise ConversionError(f"function {fn_name!r} node {node.name!r} ({node.op}) "
                              "writes or creates a variable (or gathers with batch_dims); "
                              "a frozen SavedModel serves only functions that read them")
    return node


def _frozen_library(nodes, library: dict) -> dict:
    """The library functions `nodes` call, directly or not, each with its variable
    reads frozen (_frozen_function_node); functions not called are left out.

    Raises:
        ConversionError: a called function is not in the library, or writes a variable.
    """
    from .graph_def import FunctionDef

    out: dict = {}
    todo = [f for n in nodes for f in _called_functions(n, library)]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        fn = library.get(name)
        if fn is None:
            raise ConversionError(f"the SavedModel's graph calls function {name!r}, which "
                                  "is not in its function library")
        body = [_frozen_function_node(n, name) for n in fn.node]
        out[name] = FunctionDef(fn.name, fn.input_args, fn.output_args, body, fn.ret,
                                fn.control_ret)
        todo.extend(f for n in body for f in _called_functions(n, library))
    return out


class _FrozenGraphDef(GraphDef):
    """A GraphDef whose function library is given already parsed (and rewritten)."""

    def __init__(self, node, versions, functions: dict):
        super().__init__(node, versions)
        self._functions = functions

    def functions(self) -> dict:
        """The rewritten library, {name: FunctionDef}. Never raises."""
        return dict(self._functions)


def freeze_meta_graph(meta, export_dir: str, tensor_names) -> GraphDef:
    """A new GraphDef of meta's graph pruned to what computes `tensor_names` ("node:i"),
    each variable it reads replaced by a Const of its checkpoint value; a TF2 meta
    graph's captured variables likewise, with the library functions it calls rewritten
    to read those Consts (the result's functions() is that library).

    Raises:
        ConversionError: a tensor names no node, a variable is missing from the
            checkpoint (or has another dtype/shape), a resource variable is used by
            an op other than ReadVariableOp / ResourceGather, or a called function
            writes a variable.
        DataLossError: the checkpoint is corrupt.
    """
    by_name = {n.name: n for n in meta.graph_def.node}
    values = _Values(export_dir, captured_variable_keys(meta))
    todo = []
    for name in tensor_names:
        node = _node_of(name)
        if node not in by_name:
            raise ConversionError(f"the signature names tensor {name!r}, which is not in "
                                  "the SavedModel's graph")
        todo.append(node)
    kept: dict = {}
    while todo:
        name = todo.pop()
        if name in kept:
            continue
        if name not in by_name:
            raise ConversionError(f"a node reads {name!r}, which is not in the "
                                  "SavedModel's graph")
        replaced, walk = _frozen(by_name[name], by_name, values)
        kept[name] = replaced if isinstance(replaced, list) else [replaced]
        if walk:
            todo.extend(_node_of(r) for r in kept[name][-1].input
                        if _node_of(r) not in kept and _node_of(r) not in
                        {n.name for n in kept[name]})
    nodes = [n for orig in meta.graph_def.node if orig.name in kept for n in kept[orig.name]]
    library = meta.graph_def.functions()
    if not library:
        return GraphDef(nodes, meta.graph_def.versions)
    return _FrozenGraphDef(nodes, meta.graph_def.versions, _frozen_library(nodes, library))


def _signature_tensors(meta, keys) -> list:
    """Every tensor name the chosen signatures name, in order, once each.

    Raises:
        ConversionError: a sparse or composite TensorInfo (only dense tensors load).
    """
    names = []
    for key in keys:
        sig = meta.signature_def[key]
        for side, infos in (("input", sig.inputs), ("output", sig.outputs)):
            for k, info in infos.items():
                if info.encoding != "name" or not info.name:
                    raise ConversionError(f"signature {key!r} {side} {k!r} is a "
                                          f"{info.encoding} tensor; only dense tensors "
                                          "load")
                name = info.name if ":" in info.name else info.name + ":0"
                if name not in names:
                    names.append(name)
    return names


def import_meta_graph(meta, export_dir: str, keys=None) -> dict:
    """Import meta's graph, frozen and pruned to the signatures `keys` (default: all),
    into the default og graph under TF's node names; returns {key: (inputs, outputs,
    method_name)}, inputs and outputs being {TF key: og Tensor}.

    Raises:
        ConversionError: as freeze_meta_graph, an unknown signature key, a sparse
            signature tensor, or an op og cannot import (og.import_graph_def's message).
        DataLossError: the checkpoint is corrupt.
    """
    from .graph_def_import import import_graph_def

    keys = [k for k in meta.signature_def if k != INIT_OP_SIGNATURE] if keys is None \
        else list(keys)
    missing = [k for k in keys if k not in meta.signature_def]
    if missing:
        raise ConversionError(f"the MetaGraphDef with tags {_tags_text(meta.tags)} has no "
                              f"signature {missing[0]!r} (it has "
                              f"{sorted(meta.signature_def)})")
    names = _signature_tensors(meta, keys)
    graph_def = freeze_meta_graph(meta, export_dir, names)
    tensors = dict(zip(names, import_graph_def(graph_def, return_elements=names, name="")
                       if names else []))
    out = {}
    for key in keys:
        sig = meta.signature_def[key]

        def pick(infos):
            return {k: tensors[i.name if ":" in i.name else i.name + ":0"]
                    for k, i in infos.items()}
        out[key] = (pick(sig.inputs), pick(sig.outputs), sig.method_name)
    return out


def load_into_graph(graph, tags, export_dir: str):
    """og.saved_model.loader.load of a TF SavedModel: import the meta graph with
    exactly `tags`, frozen, into og.Graph `graph`; returns a MetaGraphDef whose
    SignatureDefs' TensorInfos name the imported tensors.

    Raises:
        RuntimeError: no meta graph has these tags (TF's words).
        ConversionError: as read_meta_graph and import_meta_graph.
        DataLossError: saved_model.pb or the checkpoint is corrupt.
    """
    from .saved_model_defs import MetaGraphDef, SignatureDef, build_tensor_info

    meta = read_meta_graph(export_dir, tags)
    with graph.as_default():
        imported = import_meta_graph(meta, export_dir)
    sigs = {key: SignatureDef({k: build_tensor_info(t) for k, t in ins.items()},
                              {k: build_tensor_info(t) for k, t in outs.items()}, method)
            for key, (ins, outs, method) in imported.items()}
    return MetaGraphDef(meta.tags, sigs)

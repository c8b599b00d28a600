"""TF1's tf.saved_model over onegraph's files (og.saved_model): a SavedModel directory
holds one `saved_model.og` whose graphs are the meta graphs (graph 0 the first one
added, with the session's variable values), and whose metadata key
"saved_model:meta_graphs" (JSON) keeps each meta graph's tags, its SignatureDefs' keys
and method names, and its main op. TF's protobuf format is neither read nor written.

    og.saved_model.simple_save(sess, export_dir, inputs={"x": x}, outputs={"y": y})
    with og.Session(graph=og.Graph()) as sess:
        meta = og.saved_model.loader.load(sess, [og.saved_model.SERVING], export_dir)
"""

from __future__ import annotations

import json
import os

from ..errors import OneGraphError
from ..format import Model, TensorKind
from . import graph as _g
from . import saved_model_defs as _d
from .module_namespace import namespace
from .saved_model_defs import (MetaGraphDef, SignatureDef, TensorInfo, build_signature_def,
                               build_tensor_info, classification_signature_def,
                               get_tensor_from_tensor_info, is_valid_signature,
                               predict_signature_def, regression_signature_def)
from .tf_saved_model import has_tf_saved_model, load_into_graph

__all__ = ["SavedModelBuilder", "simple_save", "load", "maybe_saved_model_directory",
           "saved_model", "MODEL_FILENAME", "METADATA_KEY"]

# the file a SavedModel directory holds (TF's saved_model.pb)
MODEL_FILENAME = "saved_model.og"
# the Model.metadata key keeping the meta graphs' tags and signature facts (JSON)
METADATA_KEY = "saved_model:meta_graphs"
# SignatureDef keys TF keeps for itself (builder_impl)
_RESERVED = {"__saved_model_init_op": "initialization",
             "__saved_model_train_op": "the train op"}


def _dir_arg(export_dir, what: str) -> str:
    """export_dir as a str path.

    Raises:
        TypeError: it is not a str, bytes or os.PathLike.
        ValueError: it is empty.
    """
    if not isinstance(export_dir, (str, bytes, os.PathLike)):
        raise TypeError(f"{what}: export_dir must be a str or os.PathLike, got "
                        f"{type(export_dir).__name__}")
    path = os.fsdecode(export_dir)
    if not path:
        raise ValueError(f"{what}: export_dir is empty")
    return path


def _tags_arg(tags, what: str) -> list:
    """tags as a list of str.

    Raises:
        TypeError: tags is a bare str or not a list/tuple/set of str.
    """
    if isinstance(tags, (str, bytes)) or not isinstance(tags, (list, tuple, set, frozenset)):
        raise TypeError(f"{what}: tags must be a list of str (e.g. "
                        f"[og.saved_model.tag_constants.SERVING]), got "
                        f"{type(tags).__name__} {tags!r:.60}")
    for t in tags:
        if not isinstance(t, str):
            raise TypeError(f"{what}: tags must be str, got {type(t).__name__} {t!r:.60}")
    return list(tags)


def _session_graph(sess, what: str) -> _g.Graph:
    """The og.Graph a Session runs.

    Raises:
        TypeError: sess is not an og.Session, or runs a loaded Model or IR graph
            (there is no og.Graph to save).
        RuntimeError: sess is closed.
    """
    from .session import Session

    if not isinstance(sess, Session):
        raise TypeError(f"{what}: sess must be an og.Session, got {type(sess).__name__}")
    if sess.closed:
        raise RuntimeError(f"{what}: the session is closed (its variable values are gone)")
    source = getattr(sess, "_source", None)
    if isinstance(source, _g.Graph) and source.ir_graph is sess.ir_graph:
        return source
    default = _g.get_default_graph()
    if default.ir_graph is sess.ir_graph:
        return default
    raise TypeError(f"{what}: the session runs a loaded model, not an og.Graph; save a "
                    "loaded Model with og.save(model, path, session=sess)")


def _og_signatures(graph: _g.Graph, signature_def_map, what: str) -> dict:
    """{key: og.signature(...)} for a map of SignatureDefs, their tensors found in graph.

    Raises:
        TypeError: the map is not a dict of str keys to SignatureDefs.
        KeyError: a key TF reserves (TF's words).
        ValueError: a TensorInfo names no tensor of the graph.
    """
    from .api import signature

    if signature_def_map is None:
        return {}
    if not isinstance(signature_def_map, dict):
        raise TypeError(f"{what}: signature_def_map must be a dict {{key: SignatureDef}}, "
                        f"got {type(signature_def_map).__name__}")
    out = {}
    for key, sig in signature_def_map.items():
        if not isinstance(key, str):
            raise TypeError(f"{what}: signature_def_map keys must be str, got {key!r:.60}")
        if key in _RESERVED:
            raise KeyError(f'SignatureDef map key "{key}" is reserved for '
                           f"{_RESERVED[key]}. Please use a different key.")
        if not isinstance(sig, SignatureDef):
            raise TypeError(f"{what}: signature_def_map[{key!r}] must be a SignatureDef "
                            f"(og.saved_model.signature_def_utils.predict_signature_def"
                            f"(...)), got {type(sig).__name__}")
        ends = {}
        for side, infos in (("inputs", sig.inputs), ("outputs", sig.outputs)):
            ends[side] = {}
            for k, info in infos.items():
                try:
                    ends[side][k] = graph.get_tensor_by_name(info.name)
                except KeyError:
                    raise ValueError(f"{what}: signature {key!r} {side}[{k!r}] names "
                                     f"{info.name!r}, which is not a tensor of the "
                                     "session's graph") from None
        out[key] = signature(inputs=ends["inputs"], outputs=ends["outputs"])
    return out


def _op_name(op, what: str) -> str | None:
    """The node name of a main/init op (an Operation or a tensor), or None.

    Raises:
        TypeError: op is neither.
    """
    if op is None:
        return None
    name = getattr(op, "name", None)
    if not isinstance(name, str) or not hasattr(op, "graph"):
        raise TypeError(f"{what}: main_op must be an og Operation, got {type(op).__name__}")
    inner = getattr(op, "op", None)
    return inner.name if inner is not None and inner is not op else name


def _variables(graph: _g.Graph) -> list:
    """[name, trainable] of the graph's global variables (og.Variable objects), which
    loading makes Variables again (TF restores its variable collections)."""
    from .variables import Variable

    return [[v.name, bool(v.trainable)] for v in graph.get_collection(_g.GLOBAL_VARIABLES)
            if isinstance(v, Variable)]


def _restore_variables(graph: _g.Graph, names) -> None:
    """Make og.Variable handles for the loaded variables `names` ([name, trainable])
    and put them in the GLOBAL_VARIABLES (and TRAINABLE_VARIABLES) collections, so
    og.global_variables() and og.train.Saver see them as after TF's loader. A name
    whose tensor, Assign or read op is not in the graph is skipped. Never raises."""
    from .variables import Variable

    ir = graph.ir_graph
    for name, trainable in names:
        index = ir.find_tensor(name)
        if index is None or ir.tensors[index].kind is not TensorKind.VARIABLE:
            continue
        try:
            assign = graph.get_operation_by_name(f"{name}/Assign")
            read = graph.get_tensor_by_name(f"{name}/read")
        except KeyError:
            continue
        Variable._of_loaded(graph, _g.Tensor(graph, index), assign, read, trainable)


def _first(*ops):
    """The first of ops that is not None (tensors have no truth value), or None."""
    return next((op for op in ops if op is not None), None)


class SavedModelBuilder:
    """Builds a SavedModel directory (TF1's tf.saved_model.builder.SavedModelBuilder):
    `add_meta_graph_and_variables` once, `add_meta_graph` for more tag sets, `save`.

    Args:
        export_dir: the directory to create; it must not exist or be empty (it is made
            by `save`, not here).

    Raises:
        AssertionError: export_dir exists and is not empty (TF's words).
        NotADirectoryError: export_dir is a file.
        TypeError: export_dir is not a str or os.PathLike.
    """

    def __init__(self, export_dir):
        self._export_dir = _dir_arg(export_dir, "SavedModelBuilder")
        if os.path.exists(self._export_dir):
            if not os.path.isdir(self._export_dir):
                raise NotADirectoryError(f"SavedModelBuilder: export_dir "
                                         f"{self._export_dir!r} is a file")
            if os.listdir(self._export_dir):
                raise AssertionError(
                    f"Export directory {self._export_dir} already exists, and isn't empty. "
                    "Please choose a different export directory, or delete all the "
                    "contents of the specified directory.")
        self._models: list[Model] = []
        self._entries: list[dict] = []
        self._values: dict[str, object] = {}  # variable name -> value saved first

    def _add(self, graph, tags, signature_def_map, main_op, session, what: str) -> None:
        """Snapshot graph (variables from session, else from the first meta graph's
        values by name) as the next meta graph."""
        tags = _tags_arg(tags, what)
        if any(set(e["tags"]) == set(tags) for e in self._entries):
            raise ValueError(f"{what}: a meta graph with tags {sorted(set(tags))} was "
                             "added already; each meta graph needs its own tag set")
        sigs = _og_signatures(graph, signature_def_map, what)
        main = _op_name(main_op, what)
        model = graph.to_model(signatures=sigs, session=session)
        ir = model.graph
        if session is None:
            # TF restores a later meta graph's variables from the first one's checkpoint
            for i, t in enumerate(ir.tensors):
                value = self._values.get(t.name)
                if t.kind is TensorKind.VARIABLE and value is not None:
                    _g._check_variable_value(t, value)
                    ir.tensors[i] = type(t)(t.name, t.dtype, value.shape, t.kind, value,
                                            t.quantization)
        else:
            self._values = {t.name: t.data for t in ir.tensors
                            if t.kind is TensorKind.VARIABLE and t.data is not None}
        self._models.append(model)
        self._entries.append({"tags": tags, "main_op": main, "signatures": {
            k: signature_def_map[k].method_name for k in sigs}, "variables": _variables(
                graph)})

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None,
                                     init_op=None, train_op=None) -> None:
        """Add the session's graph as the first meta graph, with `tags` and the
        SignatureDefs of `signature_def_map`, its variables holding their values in
        `sess`. main_op (or legacy_init_op / init_op) runs after loading, as in TF.
        clear_devices, strip_default_attrs, saver and train_op change nothing here.

        Raises:
            AssertionError: called a second time (TF's words).
            TypeError: sess is not an og.Session of an og.Graph, tags is not a list of
                str, or signature_def_map is not a dict of SignatureDefs.
            ValueError: a signature names a tensor not in the graph, or
                assets_collection is given (assets are not supported).
            KeyError: a reserved signature key.
            RuntimeError: sess is closed.
        """
        what = "add_meta_graph_and_variables"
        if self._models:
            raise AssertionError("Graph state including variables and assets has "
                                 "already been saved. Please invoke `add_meta_graph()` "
                                 "instead.")
        if assets_collection:
            raise ValueError(f"{what}: assets are not supported (onegraph's SavedModel "
                             "is one .og file)")
        graph = _session_graph(sess, what)
        self._add(graph, tags, signature_def_map, _first(main_op, init_op, legacy_init_op),
                  sess, what)

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices=False, main_op=None,
                       strip_default_attrs=False, saver=None, init_op=None,
                       train_op=None) -> None:
        """Add the default graph as another meta graph, under other `tags`: its
        variables hold the values the first meta graph saved for the same names (TF
        restores them from its checkpoint), others their initial values.

        Raises:
            AssertionError: add_meta_graph_and_variables has not run (TF's words).
            ValueError: the tags equal an earlier meta graph's, a signature names a
                tensor not in the graph, or a variable's saved value does not fit its
                declaration here.
            TypeError: tags or signature_def_map is malformed.
            KeyError: a reserved signature key.
        """
        what = "add_meta_graph"
        if not self._models:
            raise AssertionError("Graph state including variables and assets has not "
                                 "been saved yet. Please invoke "
                                 "`add_meta_graph_and_variables()` first.")
        if assets_collection:
            raise ValueError(f"{what}: assets are not supported")
        try:
            self._add(_g.get_default_graph(), tags, signature_def_map,
                      _first(main_op, init_op, legacy_init_op), None, what)
        except OneGraphError as e:
            raise ValueError(f"{what}: {e}") from None

    def save(self, as_text: bool = False) -> str:
        """Write export_dir/saved_model.og (atomically: a temporary file renamed into
        place), making the directory. as_text changes nothing (one binary file).

        Returns:
            The path of the file written.

        Raises:
            ValueError: no meta graph was added.
            OSError: the directory or file cannot be written.
        """
        from .. import save as og_save

        if not self._models:
            raise ValueError("SavedModelBuilder.save: nothing to save; call "
                             "add_meta_graph_and_variables(sess, tags, ...) first")
        first = self._models[0]
        model = Model(graphs=[m.graph for m in self._models], opset_imports=dict(
            first.opset_imports), metadata=dict(first.metadata))
        entries = []
        for k, (m, entry) in enumerate(zip(self._models, self._entries)):
            names = {}
            for key, sig in m.signatures.items():
                # graph 0's keys stay as they are (og.Session(model).run_signature(key))
                stored = key if k == 0 else f"{key}@{k}"
                model.add_signature(stored, inputs=sig.inputs, outputs=sig.outputs,
                                    targets=sig.targets, graph=k)
                names[key] = {"name": stored, "method_name": entry["signatures"][key]}
            entries.append({"tags": entry["tags"], "graph": k, "main_op": entry["main_op"],
                            "signatures": names, "variables": entry["variables"]})
        model.metadata[METADATA_KEY] = json.dumps(entries, sort_keys=True)
        os.makedirs(self._export_dir, exist_ok=True)
        path = os.path.join(self._export_dir, MODEL_FILENAME)
        og_save(model, path)
        return path


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None) -> None:
    """Save the session's graph and variable values as a SavedModel with one predict
    signature, "serving_default", under the tag "serve" (TF1's simple_save).

    Raises:
        AssertionError: export_dir exists and is not empty.
        ValueError: inputs or outputs is empty.
        TypeError: session, inputs or outputs is malformed.
    """
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, [_d.SERVING],
        signature_def_map={_d.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                           predict_signature_def(inputs, outputs)},
        main_op=legacy_init_op, clear_devices=True)
    builder.save()


def maybe_saved_model_directory(export_dir) -> bool:
    """Whether export_dir holds a SavedModel (a saved_model.og file).

    Raises:
        TypeError: export_dir is not a str or os.PathLike.
    """
    path = _dir_arg(export_dir, "maybe_saved_model_directory")
    return os.path.isfile(os.path.join(path, MODEL_FILENAME))


def _entries(model: Model, path: str) -> list:
    """The meta graph entries kept in a SavedModel file's metadata.

    Raises:
        ValueError: the file has none, or they are malformed.
    """
    text = model.metadata.get(METADATA_KEY)
    if text is None:
        raise ValueError(f"{path} is a .og file but not a SavedModel (no "
                         f"{METADATA_KEY!r} metadata); load it with og.load")
    try:
        entries = json.loads(text)
        for e in entries:
            if not isinstance(e["tags"], list) or not 0 <= int(e["graph"]) < len(
                    model.graphs) or not isinstance(e["signatures"], dict):
                raise ValueError
    except (ValueError, TypeError, KeyError):
        raise ValueError(f"{path}: its {METADATA_KEY!r} metadata is malformed") from None
    return entries


def _tensor_info(ir, index: int) -> TensorInfo:
    """The TensorInfo of tensor `index` of an IR graph."""
    t = ir.tensors[index]
    dims = None if t.shape is None else [d if isinstance(d, int) and d >= 0 else None
                                         for d in t.shape]
    return TensorInfo(t.name, t.dtype, dims)


def _fill(sess, ir) -> None:
    """Put the loaded IR graph's tensors and nodes into the session's (empty) graph, in
    place: the Session and its og.Graph keep the same IR object, so tensors found by
    name are the Session's, and its variables start from the saved values (a
    Session initialises a variable from its tensor's data on first use).

    Raises:
        ValueError: the session's graph is not empty.
        RuntimeError: its og.Graph is finalized.
    """
    target = sess.ir_graph
    if target.tensors or target.nodes:
        raise ValueError(f"loader.load: the session's graph is not empty (it has "
                         f"{len(target.nodes)} ops); load into a Session of a new graph: "
                         "og.Session(graph=og.Graph())")
    builder = _session_graph(sess, "loader.load")
    if builder.finalized:
        raise RuntimeError("loader.load: the session's graph is finalized")
    builder.adopt(ir)


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs) -> MetaGraphDef:
    """Load the meta graph of export_dir whose tags are `tags` into the session's
    empty graph, its variables holding their saved values, and run its main op if it
    has one (TF1's tf.saved_model.loader.load). saver_kwargs change nothing. A
    directory holding TensorFlow's saved_model.pb (and no saved_model.og) is imported
    frozen: its variables become constants of their checkpoint values.

    Returns:
        A MetaGraphDef: `.signature_def` (key -> SignatureDef with TensorInfos naming
        the loaded tensors, and method_name) and `.meta_info_def.tags`.

    Raises:
        FileNotFoundError: export_dir holds no saved_model.og (TF's words).
        ConversionError: a TF SavedModel (saved_model.pb, loaded frozen by
            train/tf_saved_model.py) og cannot import: TF2 object-based, an op without
            a converter, a variable missing from its checkpoint.
        DataLossError: a TF SavedModel's saved_model.pb or checkpoint is corrupt.
        RuntimeError: no meta graph has these tags (TF's words), or sess is closed.
        ValueError: the session's graph is not empty, the file is not a SavedModel,
            or import_scope is given (not supported).
        TypeError: sess is not an og.Session of an og.Graph, or tags is not a list
            of str.
        FormatError: the file is malformed.
    """
    from .. import load as og_load

    path = _dir_arg(export_dir, "loader.load")
    tags = _tags_arg(tags, "loader.load")
    _session_graph(sess, "loader.load")
    if import_scope is not None:
        raise ValueError("loader.load: import_scope is not supported; load into a "
                         "Session of a new og.Graph")
    file = os.path.join(path, MODEL_FILENAME)
    if not os.path.isfile(file) and has_tf_saved_model(path):
        # TensorFlow's own saved_model.pb: imported frozen (train/tf_saved_model.py)
        graph = _session_graph(sess, "loader.load")
        if sess.ir_graph.tensors or sess.ir_graph.nodes or graph.finalized:
            raise ValueError("loader.load: the session's graph is not empty or is "
                             "finalized; load into a Session of a new graph: "
                             "og.Session(graph=og.Graph())")
        return load_into_graph(graph, tags, path)
    if not os.path.isfile(file):
        raise FileNotFoundError(f"SavedModel file does not exist at: {file}")
    # read into memory: the session must not depend on the file staying in place
    model = og_load(file, memory_map=False)
    entries = _entries(model, file)
    entry = next((e for e in entries if set(e["tags"]) == set(tags)), None)
    if entry is None:
        available = "[" + ", ".join(
            "{" + ", ".join(repr(t) for t in sorted(set(e["tags"]))) + "}"
            for e in entries) + "]"
        raise RuntimeError(
            f"MetaGraphDef associated with tags {str(tags).strip('[]')} could not be "
            f"found in SavedModel, with available tags '{available}'. To inspect "
            "available tag-sets in the SavedModel, please use the SavedModel CLI: "
            "`saved_model_cli`.")
    ir = model.graphs[int(entry["graph"])]
    _fill(sess, ir)
    graph = _session_graph(sess, "loader.load")
    _restore_variables(graph, entry.get("variables", []))
    sigs = {}
    for key, fact in entry["signatures"].items():
        stored = model.signatures[fact["name"]]
        sigs[key] = SignatureDef(
            {k: _tensor_info(ir, i) for k, i in stored.inputs.items()},
            {k: _tensor_info(ir, i) for k, i in stored.outputs.items()},
            fact["method_name"])
    if entry.get("main_op"):
        sess.run(graph.get_operation_by_name(entry["main_op"]))
    return MetaGraphDef(entry["tags"], sigs)


_CONSTANT_NAMES = ("SERVING", "TRAINING", "GPU", "TPU")
_SIGNATURE_NAMES = ("DEFAULT_SERVING_SIGNATURE_DEF_KEY", "PREDICT_METHOD_NAME",
                    "PREDICT_INPUTS", "PREDICT_OUTPUTS", "CLASSIFY_METHOD_NAME",
                    "CLASSIFY_INPUTS", "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES",
                    "REGRESS_METHOD_NAME", "REGRESS_INPUTS", "REGRESS_OUTPUTS")
_SIG_UTILS = {"build_signature_def": build_signature_def,
              "predict_signature_def": predict_signature_def,
              "classification_signature_def": classification_signature_def,
              "regression_signature_def": regression_signature_def,
              "is_valid_signature": is_valid_signature}
_UTILS = {"build_tensor_info": build_tensor_info,
          "get_tensor_from_tensor_info": get_tensor_from_tensor_info}


def _make_namespace():
    """The og.saved_model module object and its submodules (TF1's layout)."""
    tag_constants = namespace("saved_model.tag_constants", "TF1's SavedModel tags.",
                              {k: getattr(_d, k) for k in _CONSTANT_NAMES})
    signature_constants = namespace(
        "saved_model.signature_constants", "TF1's SignatureDef keys and method names.",
        {k: getattr(_d, k) for k in _SIGNATURE_NAMES})
    entries = {
        "builder": namespace("saved_model.builder", "SavedModelBuilder.",
                             {"SavedModelBuilder": SavedModelBuilder}),
        "loader": namespace("saved_model.loader", "Loading a SavedModel.",
                            {"load": load,
                             "maybe_saved_model_directory": maybe_saved_model_directory}),
        "tag_constants": tag_constants, "signature_constants": signature_constants,
        "signature_def_utils": namespace("saved_model.signature_def_utils",
                                         "Building SignatureDefs.", _SIG_UTILS),
        "utils": namespace("saved_model.utils", "TensorInfo helpers.", _UTILS),
        "Builder": SavedModelBuilder, "SavedModelBuilder": SavedModelBuilder,
        "simple_save": simple_save, "load": load,
        "maybe_saved_model_directory": maybe_saved_model_directory,
        "contains_saved_model": maybe_saved_model_directory,
        "TensorInfo": TensorInfo, "SignatureDef": SignatureDef,
        "MetaGraphDef": MetaGraphDef, **_SIG_UTILS, **_UTILS}
    entries.update({k: getattr(_d, k) for k in _CONSTANT_NAMES + _SIGNATURE_NAMES})
    return namespace("saved_model", "TF1's tf.saved_model over onegraph's .og files.",
                     entries)


saved_model = _make_namespace()

"""Checkpoints: `Saver` writes and restores variables through Save/Restore graph ops.

Layout of a checkpoint directory::

    dir/ckpt-100.og       a .og model holding one VARIABLE tensor per variable
    dir/ckpt-200.og
    dir/checkpoint.json   the index: {"latest": "ckpt-200.og", "all": [...oldest first]}
    dir/.checkpoint.lock  taken (fcntl.flock) while a save updates the index

Each file is written atomically by the format writer (temp file, fsync, rename) and
only then recorded in the index (itself replaced atomically), so a crash leaves the
previous checkpoint intact. The temp file of a save killed mid-write is removed by the
next save into the directory once its process is gone. Concurrent saves into one
directory, from threads or processes, serialise on the lock file and all get recorded.

A restore checks the whole file against the graph before it assigns anything, so it is
all or nothing (`ops/checkpoint.py`):
- `DataLossError`: the file is corrupted or truncated (a CRC-32 guards every data
  segment and the tensors' names, dtypes and shapes); the message names the file.
  `restore(..., fallback=True)` then tries the older checkpoints of the directory.
- `ShapeError`: a stored value's dtype or shape is not the variable's declared one
  (nothing is cast, as in TF1); `OneGraphError`: the file lacks a variable. Such a
  file is intact but belongs to another model: fallback does not skip it.

The index is validated whenever it is read: not JSON, not of the form above, or an
entry that is not a plain file name of the directory raises `DataLossError` naming it.
`save` reads it before writing anything, so a damaged index refuses the save rather
than leave an unrecorded checkpoint behind. A save deletes (rotates) only files named
like its own, `ckpt.og` and `ckpt-<step>.og`, and of those only the ones the index
records beyond `max_to_keep` (as TF1, never a file it does not record, such as one
copied in by hand). A save whose index cannot be written removes its new file again.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Iterable, Mapping

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: index updates lock this process only
    fcntl = None

from ..errors import DataLossError, ExecutionError, OneGraphError
from ..format import DType, TensorKind
from ..format.atomic import atomic_open, remove_stale_temp_files
from ..ops.checkpoint import DOMAIN, pack_shapes
from . import graph as _graph
from .session import NodeTarget
from .tf_checkpoint import is_tf_checkpoint, tf_latest_checkpoint, tf_to_og_checkpoint
from .variables import Variable

INDEX = "checkpoint.json"
LOCK = ".checkpoint.lock"
_OWN_FILE = re.compile(r"ckpt(?:-(-?[0-9]+))?\.og")  # the names save() gives its files
_TEMP_PREFIXES = (".og-", ".index-")  # atomic_open prefixes of checkpoint and index


def _write_atomic(path: str, text: str) -> None:
    with atomic_open(path, "w", prefix=".index-") as f:
        f.write(text)


def _plain_name(entry) -> bool:
    """Whether an index entry names a file of the directory itself (no folder part, not
    absolute, not "." or "..")."""
    return (isinstance(entry, str) and entry not in ("", ".", "..") and "\0" not in entry
            and "/" not in entry and os.path.basename(entry) == entry
            and not os.path.splitdrive(entry)[0])


def _index_problem(index) -> str | None:
    if not isinstance(index, dict):
        return f"it holds a JSON {type(index).__name__}, not an object"
    if not isinstance(index.get("all"), list):
        return "no 'all' list"
    latest = index.get("latest")
    for entry in index["all"] + ([] if latest is None else [latest]):
        if not _plain_name(entry):
            return f"entry {entry!r} is not a file name of the directory"
    return None


def _read_index(directory: str) -> dict:
    """The validated index of `directory`: {"latest": name or None, "all": [names]}.

    Raises:
        DataLossError: the index is unreadable or not of that form (names the file).
    """
    path = os.path.join(directory, INDEX)
    if not os.path.exists(path):
        return {"latest": None, "all": []}
    try:
        with open(path) as f:
            index = json.load(f)
    except (ValueError, OSError, RecursionError) as e:  # RecursionError: nesting too deep
        raise DataLossError(f"checkpoint index {path} is unreadable: {e}") from e
    problem = _index_problem(index)
    if problem is not None:
        raise DataLossError(f"checkpoint index {path} is damaged: {problem}")
    return {"latest": index.get("latest"), "all": list(index["all"])}


@contextlib.contextmanager
def _index_lock(directory: str):
    """Hold the directory's lock file (fcntl.flock, exclusive) for an index update, so
    savers in other processes, or other Saver objects, do not lose each other's entries.
    Where flock is missing or the file system refuses it, the block runs unlocked."""
    if fcntl is None:
        yield
        return
    fd = os.open(os.path.join(directory, LOCK), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # e.g. a network file system without locks
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def _directory(directory, function: str) -> str:
    """`directory` (str, bytes or os.PathLike) as a str path.

    Raises:
        TypeError: it is not a path (names `function`).
    """
    if not isinstance(directory, (str, bytes, os.PathLike)):
        raise TypeError(f"{function}: the checkpoint directory must be a path (str, bytes "
                        f"or os.PathLike), got {type(directory).__name__}")
    return os.fsdecode(directory)


def latest_checkpoint(directory: str) -> str | None:
    """Path of the newest checkpoint recorded in `directory` whose file exists, or None
    if there is none (as TF1's `tf.train.latest_checkpoint`, which also skips a recorded
    checkpoint whose files are gone). A directory without og checkpoints gives the TF
    V2 checkpoint prefix its TF `checkpoint` file records, if that exists.

    Raises:
        DataLossError: the index file (or TF's `checkpoint` file) is damaged (names it).
        TypeError: `directory` is not a path.
    """
    directory = _directory(directory, "latest_checkpoint")
    index = _read_index(directory)
    for name in [index["latest"]] + index["all"][::-1]:
        if name is not None and os.path.isfile(os.path.join(directory, name)):
            return os.path.join(directory, name)
    return tf_latest_checkpoint(directory)


def checkpoints(directory: str) -> list[str]:
    """Every recorded checkpoint of `directory`, oldest first (files may be gone).

    Raises:
        DataLossError: the index file is damaged (names it).
        TypeError: `directory` is not a path.
    """
    directory = _directory(directory, "checkpoints")
    return [os.path.join(directory, p) for p in _read_index(directory)["all"]]


def _step(name: str) -> int | None:
    m = _OWN_FILE.fullmatch(name)
    return None if m is None or m.group(1) is None else int(m.group(1))


def _records(directory: str, base: str) -> bool:
    """Whether the directory's index lists `base` (True when the index cannot be read:
    then nobody can tell, and a file is not deleted on a guess)."""
    try:
        return base in _read_index(directory)["all"]
    except Exception:  # noqa: BLE001 - DataLossError, OSError: unknown, keep the file
        return True


def _older_checkpoints(path: str) -> list[str]:
    """The checkpoints of `path`'s directory older than it, newest first: those recorded
    before it; all recorded ones if it is the latest; if it is not recorded, those with
    a smaller step.

    Raises:
        DataLossError: the index is damaged.
    """
    directory = os.path.dirname(path) or "."
    index = _read_index(directory)
    base, entries = os.path.basename(path), index["all"]
    if base in entries:
        older = entries[:entries.index(base)]
    elif base == index["latest"]:
        older = entries
    else:
        step = _step(base)
        older = [] if step is None else [
            f for f in entries if _step(f) is not None and _step(f) < step]
    return [os.path.join(directory, f) for f in reversed(older)]


def _parse_var_list(var_list) -> tuple[list | None, list]:
    """([(name in the checkpoint, variable tensor name)], [graphs of the Variables]).

    Raises:
        TypeError: var_list is not a list or mapping of Variables or names.
        ValueError: a variable, or a name in the checkpoint, appears twice.
    """
    if var_list is None:
        return None, []
    if isinstance(var_list, Mapping):
        for key in var_list:
            if not isinstance(key, str):
                raise TypeError(f"Saver: var_list keys are names in the checkpoint (str), "
                                f"got {key!r}")
        items = list(var_list.items())
    elif isinstance(var_list, Iterable) and not isinstance(var_list, (str, bytes)):
        items = [(None, v) for v in var_list]
    else:
        raise TypeError(f"Saver: var_list must be a list of Variables or a dict "
                        f"{{name: Variable}}, got {type(var_list).__name__}")
    pairs, graphs = [], []
    for key, v in items:
        if isinstance(v, Variable):
            target = v.name
            if all(g is not v.graph for g in graphs):
                graphs.append(v.graph)
        elif isinstance(v, str):
            target = v
        else:
            raise TypeError(f"Saver: var_list holds a {type(v).__name__} ({v!r:.80}), not "
                            "a Variable or a variable name")
        pairs.append((target if key is None else key, target))
    seen_names, seen_targets = set(), set()
    for name, target in pairs:
        if target in seen_targets:
            raise ValueError(f"Saver: var_list holds variable {target!r} twice (TF1: the "
                             "same variable would be saved under two names)")
        if name in seen_names:
            raise ValueError(f"Saver: var_list gives the name {name!r} in the checkpoint "
                             "to two variables")
        seen_names.add(name)
        seen_targets.add(target)
    return pairs, graphs


def _find_ops(ir, idx: list, names: list, restore_attrs: dict):
    """(filename tensor, Save node, Restore node) already in `ir` for exactly these
    variables, names and declared types, without control inputs; else None."""
    saves, restores = {}, {}
    for k, node in enumerate(ir.nodes):
        if node.op_type not in ("Save", "Restore") or node.domain != DOMAIN \
                or node.control_inputs or list(node.inputs[1:]) != idx:
            continue
        want = {"names": names} if node.op_type == "Save" else restore_attrs
        if node.attributes.keys() != want.keys() or any(
                list(node.attributes[a]) != list(v) for a, v in want.items()):
            continue
        (saves if node.op_type == "Save" else restores).setdefault(node.inputs[0], k)
    for fname, restore_n in restores.items():
        if fname in saves and ir.tensors[fname].dtype is DType.STRING:
            return fname, saves[fname], restore_n
    return None


class Saver:
    """Saves and restores variables of a Session's graph (TF1's `tf.train.Saver`).

    The Save/Restore ops are added when the Saver is made, as in TF1, if the graph is
    known then: the graph of the Variables in `var_list`, else the graph of an enclosing
    `with graph.as_default():` block. Such a Saver keeps working after
    `graph.finalize()`. Otherwise (or with `defer_build=True`) they are added at the
    first save or restore, to that Session's graph; one Saver may so serve several
    graphs, a `Model` loaded from a file among them. The ops live in the graph: an
    identical pair already there (from another Saver, or a saved model) is reused.

    Args:
        var_list: what to save: None (every variable tensor of the graph at the time of
            the save), a list of Variables or variable tensor names, or a dict
            {name in the checkpoint: Variable or variable tensor name} (TF1's way to
            restore a variable from a checkpoint that calls it otherwise).
        max_to_keep: keep at most this many checkpoints in the directory (older ones
            are deleted); None or 0 keeps all (TF1).
        allow_empty: with no variables to save, make the Saver a no-op (save and
            restore return None) instead of raising (TF1).
        defer_build: add the ops at the first save or restore even when the graph is
            known now (TF1).

    Raises:
        TypeError: var_list is not a list or dict, holds something other than Variables
            and names, or a dict key is not a str.
        ValueError: max_to_keep is not None or an int >= 0; var_list holds Variables of
            different graphs, or one variable (or one checkpoint name) twice; there is
            nothing to save and not allow_empty ("No variables to save").
        OneGraphError: a name in var_list is not a variable of the graph, or the graph
            is finalized.

    Example::

        saver = og.train.Saver(max_to_keep=3)
        path = saver.save(sess, "ckpt/", global_step=step)
        saver.restore(sess, og.train.latest_checkpoint("ckpt/"))
    """

    def __init__(self, var_list: Iterable | Mapping | None = None,
                 max_to_keep: int | None = 5, *, allow_empty: bool = False,
                 defer_build: bool = False):
        if max_to_keep is not None and (isinstance(max_to_keep, bool) or not isinstance(
                max_to_keep, (int, np.integer)) or max_to_keep < 0):
            raise ValueError(f"Saver: max_to_keep must be None or an int >= 0, got "
                             f"{max_to_keep!r}")
        self.max_to_keep = None if max_to_keep is None else int(max_to_keep)
        self.allow_empty = bool(allow_empty)
        self._pairs, graphs = _parse_var_list(var_list)
        if self._pairs == [] and not self.allow_empty:
            raise ValueError("Saver: No variables to save (var_list is empty)")
        if len(graphs) > 1:
            raise ValueError("Saver: var_list holds Variables of different graphs")
        self._lock = threading.Lock()
        # TF1 builds in the default graph; here only a graph named by var_list or an
        # explicit as_default() block, since a Saver is often made for a loaded Model
        graph = graphs[0] if graphs else (_graph._scopes.graphs[-1]
                                          if _graph._scopes.graphs else None)
        if graph is not None and not defer_build:
            self._ops(graph.ir_graph, graph)

    # -- graph ops --------------------------------------------------------------------

    def build(self, graph=None) -> None:
        """Add the save and restore ops to `graph` (default: the default og.Graph) now,
        while it can still take ops (TF1's Saver.build): a Saver made outside the
        graph's `as_default()` block, or with defer_build, otherwise adds them at its
        first save or restore. Building again does nothing.

        Raises:
            OneGraphError: the graph is finalized and lacks the ops, or a name in
                var_list is not one of its variables.
        """
        graph = graph if graph is not None else _graph.get_default_graph()
        self._ops(graph.ir_graph, graph)

    def _ops(self, ir, builder=None):
        """(filename tensor, Save node, Restore node) of this Saver in IR graph `ir`,
        found there or added (through `builder`, the training graph of `ir`, if any);
        None when there is nothing to save and allow_empty.

        Raises:
            OneGraphError: a name is not a variable of the graph, or the ops are missing
                and the graph is finalized.
            ValueError: nothing to save and not allow_empty.
        """
        with self._lock:
            pairs = self._pairs
            if pairs is None:
                pairs = [(t.name, t.name) for t in ir.tensors if t.kind is TensorKind.VARIABLE]
            if not pairs:
                if self.allow_empty:
                    return None
                raise ValueError(f"Saver: No variables to save (graph {ir.name!r} has none)")
            names, idx = [], []
            for name, target in pairs:
                i = ir.find_tensor(target)
                if i is None or ir.tensors[i].kind is not TensorKind.VARIABLE:
                    raise OneGraphError(f"Saver: {target!r} is not a variable of graph "
                                        f"{ir.name!r}")
                names.append(name)
                idx.append(i)
            # Restore checks each value against the variable's declared dtype and shape
            restore_attrs = {"names": names,
                             "dtypes": [int(ir.tensors[i].dtype) for i in idx],
                             "shapes": pack_shapes(ir.tensors[i].shape for i in idx)}
            found = _find_ops(ir, idx, names, restore_attrs)
            if found is not None:
                return found
            if builder is not None:
                return _add_ops_with_builder(builder, idx, names, restore_attrs)
            return _add_ops(ir, idx, names, restore_attrs)

    def _session_ops(self, sess):
        source = getattr(sess, "_source", None)
        builder = source if isinstance(source, _graph.Graph) and \
            source.ir_graph is sess.ir_graph else None
        return self._ops(sess.ir_graph, builder)

    # -- API ----------------------------------------------------------------------------

    def save(self, sess, directory: str, global_step=None) -> str | None:
        """Write a checkpoint of the variables' current values in `sess`.

        The index is read and checked before the file is written; the checkpoint is
        then recorded as the latest, and the oldest ones beyond `max_to_keep` are
        deleted. Temp files of saves into `directory` killed mid-write are removed.

        Args:
            sess: the Session.
            directory: checkpoint directory (created if missing).
            global_step: int >= 0, or a Variable/tensor whose value (an integer >= 0)
                numbers the file (`ckpt-<step>.og`; without it the file is `ckpt.og`).

        Returns:
            The checkpoint's path; None for an empty Saver made with allow_empty.

        Raises:
            DataLossError: the directory's index is damaged (nothing is written).
            ValueError: nothing to save and not allow_empty, or global_step (or its
                value) is negative or not a whole number.
            TypeError: global_step is a bool or a float (an int or a step tensor is
                expected).
            OneGraphError: a variable of var_list is not in the graph, the graph is
                finalized and lacks the Saver's ops, or a variable is uninitialised.
            OSError: the directory or file cannot be written (the file system's error,
                naming the file).
        """
        if isinstance(global_step, (bool, np.bool_)):
            raise TypeError(f"Saver.save: global_step must be an int or a step tensor, "
                            f"got bool {global_step!r}")
        if isinstance(global_step, (float, np.floating)):
            raise TypeError(f"Saver.save: global_step must be an int or a step tensor "
                            f"(Variable, tensor or tensor name), got "
                            f"{type(global_step).__name__} {global_step!r}")
        if isinstance(global_step, (int, np.integer)) and global_step < 0:
            raise ValueError(f"Saver.save: global_step must be >= 0, got {global_step}")
        ops = self._session_ops(sess)
        if ops is None:
            return None
        fname, save_n, _ = ops
        directory = os.fspath(directory)
        if global_step is not None and not isinstance(global_step, (int, np.integer)):
            value = np.asarray(sess.run(global_step))
            if value.shape != () or value.dtype.kind not in "iuf" or (
                    value.dtype.kind == "f" and not float(value).is_integer()) \
                    or value < 0:
                raise ValueError(f"Saver.save: global_step must hold an integer >= 0, "
                                 f"holds {value.dtype} {value!r:.60}")
            global_step = int(value)
        base = f"ckpt-{int(global_step)}.og" if global_step is not None else "ckpt.og"
        path = os.path.join(directory, base)
        os.makedirs(directory, exist_ok=True)
        with self._lock, _index_lock(directory):
            index = _read_index(directory)
            remove_stale_temp_files(directory, _TEMP_PREFIXES)
            try:
                sess.run(NodeTarget(save_n), {fname: np.asarray(path, dtype=object)})
            except ExecutionError as e:
                # Session.run wraps the Save kernel's write error; callers (the CLI among
                # them) catch OSError for a full disk or an unwritable file
                if isinstance(e.__cause__, OSError):
                    raise e.__cause__ from None
                raise
            files = [f for f in index["all"] if f != base] + [base]
            drop = files[:-self.max_to_keep] if self.max_to_keep else []
            files = files[len(drop):]
            try:
                _write_atomic(os.path.join(directory, INDEX),
                              json.dumps({"latest": base, "all": files}, indent=1))
            except BaseException:
                # a checkpoint the index cannot record is removed again: nothing would
                # ever rotate it away (rotation deletes only recorded files). The write
                # may have failed after the index was replaced (syncing the folder):
                # what the index now says decides, and an unreadable one keeps the file
                if base not in index["all"] and not _records(directory, base):
                    try:
                        os.unlink(path)
                    except OSError:
                        pass
                raise
            for f in drop:
                if _OWN_FILE.fullmatch(f):  # never a file the Saver did not name
                    try:
                        os.unlink(os.path.join(directory, f))
                    except FileNotFoundError:
                        pass
        return path

    def restore(self, sess, save_path: str, fallback: bool = False) -> str | None:
        """Assign the variables in `sess` from the checkpoint at `save_path`.

        Every variable is checked (present, declared dtype and shape) before any is
        assigned, so a failed restore changes nothing.

        Args:
            sess: the Session.
            save_path: a checkpoint file (or a directory: its latest checkpoint), or the
                prefix of a TF V2 checkpoint (variables restored by name from it).
            fallback: if the file is corrupted or missing, try the checkpoints recorded
                before it in its directory, newest first.

        Returns:
            The path actually restored; None for an empty Saver made with allow_empty.

        Raises:
            ValueError: save_path is None ("Can't load save_path when it is None", as
                TF1; e.g. `latest_checkpoint` found nothing).
            DataLossError: the checkpoint (and, with fallback, every older one) is
                corrupted or truncated, or with fallback the index is damaged; the
                message names the file(s).
            ShapeError: a stored value's dtype or shape is not the variable's.
            OneGraphError: the file lacks a variable, or a variable of var_list is not
                in the graph.
            FileNotFoundError: no checkpoint there (without fallback); for a TF
                checkpoint also a missing data shard (CheckpointNotFoundError).
        """
        if save_path is None:
            raise ValueError("Saver.restore: Can't load save_path when it is None.")
        ops = self._session_ops(sess)
        if ops is None:
            return None
        fname, _, restore_n = ops
        path = os.fspath(save_path)
        if os.path.isdir(path):
            latest = latest_checkpoint(path)
            if latest is None:
                raise FileNotFoundError(f"no checkpoint recorded in {path}")
            path = latest

        def attempt(p):
            if is_tf_checkpoint(p):  # TF V2 checkpoint: restored through an .og copy
                with tempfile.TemporaryDirectory() as tmp:
                    copy = tf_to_og_checkpoint(p, os.path.join(tmp, "ckpt.og"))
                    sess.run(NodeTarget(restore_n), {fname: np.asarray(copy, dtype=object)})
                return
            if not os.path.exists(p):
                raise FileNotFoundError(f"checkpoint {p} does not exist")
            sess.run(NodeTarget(restore_n), {fname: np.asarray(p, dtype=object)})

        if not fallback:
            attempt(path)
            return path
        failures = []

        def candidates():
            yield path
            try:  # the index is read only once the file asked for has failed
                older = _older_checkpoints(path)
            except DataLossError as e:
                failures.append(str(e))
                return
            yield from older

        for p in candidates():
            try:
                attempt(p)
                return p
            except FileNotFoundError:
                failures.append(f"{p}: missing")
            except DataLossError as e:  # corruption only: an incompatible file raises
                failures.append(str(e))
        raise DataLossError("no intact checkpoint: " + "; ".join(failures))


def _add_ops_with_builder(builder, idx, names, restore_attrs):
    """Add the Saver's placeholder and ops through the training graph `builder`."""
    if builder._finalized:
        raise OneGraphError(
            f"Saver: graph {builder.ir_graph.name!r} is finalized and has no Save/Restore "
            "ops for these variables; make the Saver before graph.finalize(), inside "
            "`with graph.as_default():` or with a var_list of Variables")
    Tensor = _graph.Tensor
    with builder.control_dependencies(None):
        fname = builder.placeholder(DType.STRING, [], name="save/filename")
        handles = [Tensor(builder, i) for i in idx]
        save = builder.op("Save", [fname] + handles, {"names": names}, name="save/Save")
        restore = builder.op("Restore", [fname] + handles, restore_attrs,
                             name="save/Restore")
    return fname.tensor_index, save.op.node_index, restore.op.node_index


def _add_ops(ir, idx, names, restore_attrs):
    """Add the Saver's filename tensor and ops to a plain IR graph (a loaded Model)."""
    base, k = "save", 0
    while ir.find_tensor(f"{base}/filename") is not None:
        k += 1
        base = f"save_{k}"
    fname = ir.add_tensor(f"{base}/filename", DType.STRING, ())
    ir.add_node("Save", [fname] + idx, [f"{base}/Save"], {"names": names},
                name=f"{base}/Save", domain=DOMAIN)
    save_n = len(ir.nodes) - 1
    ir.add_node("Restore", [fname] + idx, [f"{base}/Restore"], restore_attrs,
                name=f"{base}/Restore", domain=DOMAIN)
    return fname, save_n, len(ir.nodes) - 1

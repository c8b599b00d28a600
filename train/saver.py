"""Checkpoints: `Saver` writes and restores variables through Save/Restore graph ops.

Layout of a checkpoint directory::

    dir/ckpt-100.og      a .og model holding one VARIABLE tensor per variable
    dir/ckpt-200.og
    dir/checkpoint.json  the index: {"latest": "ckpt-200.og", "all": [...oldest first]}

Each file is written atomically by the format writer (temp file, fsync, rename) and
only then recorded in the index (itself replaced atomically), so a crash leaves the
previous checkpoint intact. Restoring verifies every CRC-32 first: a corrupted or
truncated file raises `DataLossError` naming it, and `restore(..., fallback=True)`
falls back to the newest older checkpoint that is intact.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Iterable

import numpy as np

from ..errors import DataLossError, OneGraphError
from ..format import DType, TensorKind
from ..format.atomic import atomic_open
from .session import NodeTarget

INDEX = "checkpoint.json"


def _write_atomic(path: str, text: str) -> None:
    with atomic_open(path, "w", prefix=".index-") as f:
        f.write(text)


def _read_index(directory: str) -> dict:
    path = os.path.join(directory, INDEX)
    if not os.path.exists(path):
        return {"latest": None, "all": []}
    try:
        with open(path) as f:
            index = json.load(f)
        if not isinstance(index.get("all"), list):
            raise ValueError("no 'all' list")
        return index
    except (ValueError, OSError) as e:
        raise DataLossError(f"checkpoint index {path} is unreadable: {e}") from e


def latest_checkpoint(directory: str) -> str | None:
    """Path of the newest checkpoint recorded in `directory`, or None if there is none.

    Raises:
        DataLossError: the index file is corrupted.
    """
    index = _read_index(directory)
    return os.path.join(directory, index["latest"]) if index.get("latest") else None


def checkpoints(directory: str) -> list[str]:
    """Every recorded checkpoint of `directory`, oldest first."""
    return [os.path.join(directory, p) for p in _read_index(directory)["all"]]


class Saver:
    """Saves and restores variables of a Session's graph.

    Args:
        var_list: Variables (or variable tensor names) to save; default: every
            variable tensor of the session's graph.
        max_to_keep: keep at most this many checkpoints (older ones are deleted);
            None keeps all.

    Example::

        saver = og.train.Saver(max_to_keep=3)
        path = saver.save(sess, "ckpt/", global_step=step)
        saver.restore(sess, og.train.latest_checkpoint("ckpt/"))
    """

    def __init__(self, var_list: Iterable | None = None, max_to_keep: int | None = 5):
        self._names = None if var_list is None else [
            v if isinstance(v, str) else v.handle.name for v in var_list]
        self.max_to_keep = max_to_keep
        self._ops: dict[int, tuple] = {}
        self._lock = threading.Lock()

    # -- graph ops --------------------------------------------------------------------

    def _graph_ops(self, sess):
        """(filename tensor, save node, restore node) in sess's graph, built once."""
        key = id(sess.graph)
        with self._lock:
            if key in self._ops:
                return self._ops[key]
            ir = sess.graph
            names = self._names
            if names is None:
                names = [t.name for t in ir.tensors if t.kind is TensorKind.VARIABLE]
            idx = []
            for n in names:
                i = ir.find_tensor(n)
                if i is None or ir.tensors[i].kind is not TensorKind.VARIABLE:
                    raise OneGraphError(f"Saver: {n!r} is not a variable of the graph")
                idx.append(i)
            builder = sess._source if hasattr(sess._source, "op") and hasattr(
                sess._source, "_ir") else None
            if builder is not None:
                from .graph import Tensor

                with builder.control_dependencies(None):
                    fname = builder.placeholder(DType.STRING, [], name="save/filename")
                    hs = [Tensor(builder, i) for i in idx]
                    save = builder.op("Save", [fname] + hs, {"names": list(names)},
                                      name="save/Save")
                    restore = builder.op("Restore", [fname] + hs, {"names": list(names)},
                                         name="save/Restore")
                ops = (fname.tensor_index, save.op.node_index, restore.op.node_index)
            else:
                base = "save"
                k = 0
                while ir.find_tensor(f"{base}/filename") is not None:
                    k += 1
                    base = f"save_{k}"
                fname = ir.add_tensor(f"{base}/filename", DType.STRING, ())
                ir.add_node("Save", [fname] + idx, [f"{base}/Save"], {"names": list(names)},
                            name=f"{base}/Save", domain="onegraph")
                save_n = len(ir.nodes) - 1
                ir.add_node("Restore", [fname] + idx, [f"{base}/Restore"],
                            {"names": list(names)}, name=f"{base}/Restore", domain="onegraph")
                ops = (fname, save_n, len(ir.nodes) - 1)
            self._ops[key] = ops
            return ops

    # -- API ----------------------------------------------------------------------------

    def save(self, sess, directory: str, global_step=None) -> str:
        """Write a checkpoint of the variables' current values in `sess`.

        Args:
            sess: the Session.
            directory: checkpoint directory (created if missing).
            global_step: int, or a Variable/tensor whose value numbers the file.

        Returns:
            The checkpoint's path.
        """
        os.makedirs(directory, exist_ok=True)
        fname, save_n, _ = self._graph_ops(sess)
        if global_step is not None and not isinstance(global_step, (int, np.integer)):
            global_step = int(sess.run(global_step))
        base = f"ckpt-{int(global_step)}.og" if global_step is not None else "ckpt.og"
        path = os.path.join(directory, base)
        sess.run(NodeTarget(save_n), {fname: np.asarray(path, dtype=object)})
        with self._lock:
            index = _read_index(directory)
            files = [f for f in index["all"] if f != base] + [base]
            if self.max_to_keep is not None and len(files) > self.max_to_keep:
                drop, files = files[:-self.max_to_keep], files[-self.max_to_keep:]
            else:
                drop = []
            _write_atomic(os.path.join(directory, INDEX),
                          json.dumps({"latest": base, "all": files}, indent=1))
            for f in drop:
                try:
                    os.unlink(os.path.join(directory, f))
                except FileNotFoundError:
                    pass
        return path

    def restore(self, sess, path: str, fallback: bool = False) -> str:
        """Assign the variables in `sess` from the checkpoint at `path`.

        Args:
            sess: the Session.
            path: a checkpoint file (or a directory: its latest checkpoint).
            fallback: if the file is corrupted, try the older checkpoints recorded in
                its directory, newest first.

        Returns:
            The path actually restored.

        Raises:
            DataLossError: the checkpoint (and, with fallback, every older one) is
                corrupted or truncated; the message names the file(s).
            FileNotFoundError: no checkpoint there.
        """
        if os.path.isdir(path):
            latest = latest_checkpoint(path)
            if latest is None:
                raise FileNotFoundError(f"no checkpoint recorded in {path}")
            path = latest
        fname, _, restore_n = self._graph_ops(sess)
        candidates = [path]
        if fallback:
            older = [p for p in checkpoints(os.path.dirname(path) or ".")
                     if os.path.abspath(p) != os.path.abspath(path)]
            candidates += list(reversed(older))
        errors = []
        for p in candidates:
            if not os.path.exists(p):
                if not fallback:
                    raise FileNotFoundError(f"checkpoint {p} does not exist")
                errors.append(f"{p}: missing")
                continue
            try:
                sess.run(NodeTarget(restore_n), {fname: np.asarray(p, dtype=object)})
                return p
            except DataLossError as e:
                errors.append(str(e))
                if not fallback:
                    raise
        raise DataLossError("no intact checkpoint: " + "; ".join(errors))

"""Reading checkpoints without a graph, as TF1's tf.train checkpoint utilities:
og.train.list_variables, load_variable, load_checkpoint (a CheckpointReader),
NewCheckpointReader, checkpoint_exists, get_checkpoint_mtimes, get_checkpoint_state,
checkpoints_iterator and remove_checkpoint.

A checkpoint is a file a Saver wrote (`dir/ckpt-<step>.og`, see train/saver.py), or
the prefix of a TensorFlow V2 checkpoint (`<prefix>.index` and its data shards, read
by train/tf_checkpoint.py); a directory stands for its latest recorded checkpoint (og's
index, else TF's `checkpoint` file). Every read verifies the file's checksums
(ops/checkpoint.py read_checkpoint; a TF tensor's CRC-32C when it is read), so a
damaged file raises DataLossError rather than giving wrong values.

Errors name the path they are about: a path with no checkpoint (missing, or a
directory that records none, or None) is CheckpointNotFoundError, a variable the
checkpoint lacks NotFoundError (TF1's NotFoundError), a damaged file or index
DataLossError, and an argument that is no path at all TypeError.
"""

from __future__ import annotations

import collections
import os
import time

import numpy as np

from ..errors import NotFoundError
from ..format import DType
from ..ops.checkpoint import read_checkpoint
from .saver import _read_index
from .saver import latest_checkpoint as _latest_checkpoint
from .tf_checkpoint import TFCheckpointReader, is_tf_checkpoint


class CheckpointNotFoundError(NotFoundError, FileNotFoundError, ValueError):
    """No checkpoint where one was asked for: no such file or directory, a directory
    recording none, or None (TF1's load_checkpoint raises ValueError "Couldn't find
    'checkpoint' file or checkpoints in given directory ..." for the last two, its
    reader NotFoundError for the first). Also a FileNotFoundError and a ValueError,
    the types this module raised before, so existing handlers keep working."""


def _path(value, what: str, none_is_missing: bool = True) -> str:
    """`value` (str, bytes or os.PathLike) as a str path.

    Raises:
        CheckpointNotFoundError: value is None and none_is_missing (TF1's message for
            load_checkpoint(None)).
        TypeError: value is no path at all (names `what`).
    """
    if value is None and none_is_missing:
        raise CheckpointNotFoundError(f"{what}: Couldn't find 'checkpoint' file or "
                                      "checkpoints in given directory None")
    try:
        path = os.fspath(value)
    except TypeError:
        raise TypeError(f"{what}: a checkpoint path must be a str, bytes or os.PathLike, "
                        f"got {type(value).__name__} {value!r:.60}") from None
    # bytes paths as str (the saver joins them with str names)
    return os.fsdecode(path) if isinstance(path, bytes) else path


def _checkpoint_file(ckpt_dir_or_file, what: str) -> str:
    """The checkpoint file meant: the path itself, or a directory's latest (og's index
    first, then TF's `checkpoint` text file). A TF V2 checkpoint is meant by its
    prefix (`<prefix>.index` exists), which is returned as it is.

    Raises:
        CheckpointNotFoundError: None, a directory that records no checkpoint (TF1's
            message), or no such file or directory; the message names the path.
        TypeError: not a path.
        DataLossError: the directory's index (or TF's `checkpoint` file) is damaged.
    """
    path = _path(ckpt_dir_or_file, what)
    if is_tf_checkpoint(path):
        return path
    if os.path.isdir(path):
        latest = _latest_checkpoint(path)
        if latest is None:
            raise CheckpointNotFoundError(f"{what}: Couldn't find 'checkpoint' file or "
                                          f"checkpoints in given directory {path}")
        return latest
    if not os.path.isfile(path):
        raise CheckpointNotFoundError(f"{what}: no checkpoint file or directory {path}")
    return path


class CheckpointReader:
    """The variables of one checkpoint file, read once (TF1's CheckpointReader). A TF
    V2 checkpoint prefix is read by train/tf_checkpoint.py's TFCheckpointReader, each
    tensor when asked for.

    Raises (constructor):
        DataLossError: the file is truncated, corrupted or not a checkpoint; for a TF
            checkpoint, its index is (bad magic, block CRC, compressed, unknown dtype).
        CheckpointNotFoundError: no such file (or a directory, or None), or a data shard
            of a TF checkpoint is missing.
        TypeError: path is no path.
    """

    def __init__(self, path: str):
        path = _path(path, "CheckpointReader")
        self._tf = None
        if is_tf_checkpoint(path):
            self.path = path
            self._tf = TFCheckpointReader(path, not_found=CheckpointNotFoundError)
            return
        if not os.path.isfile(path):
            raise CheckpointNotFoundError(f"CheckpointReader: no checkpoint file {path}")
        self.path = path
        self._values = read_checkpoint(path)

    def has_tensor(self, name: str) -> bool:
        """Whether the checkpoint holds a variable named `name`. Never raises."""
        if self._tf is not None:
            return self._tf.has_tensor(name)
        return _plain(name) in self._values

    def get_tensor(self, name: str) -> np.ndarray:
        """The stored value of variable `name` ("name:0" accepted), a copy.

        Raises:
            NotFoundError: the checkpoint has no such variable (TF1's NotFoundError).
            DataLossError: (TF checkpoint) its bytes are truncated or fail their CRC.
            FormatError: (TF checkpoint) a dtype og has not, or a partitioned variable.
        """
        if self._tf is not None:
            return self._tf.get_tensor(name)
        key = _plain(name)
        if key not in self._values:
            raise NotFoundError(f"Key {key} not found in checkpoint {self.path}")
        return self._values[key].copy()

    def get_variable_to_shape_map(self) -> dict:
        """{variable name: its shape as a list}. Never raises."""
        if self._tf is not None:
            return self._tf.get_variable_to_shape_map()
        return {k: list(v.shape) for k, v in self._values.items()}

    def get_variable_to_dtype_map(self) -> dict:
        """{variable name: its og dtype}.

        Raises:
            FormatError: (TF checkpoint) a variable's TF dtype has no og dtype.
        """
        if self._tf is not None:
            return self._tf.get_variable_to_dtype_map()
        return {k: DType.from_numpy(v.dtype) for k, v in self._values.items()}


def _plain(name) -> str:
    """A variable name without TF1's ":0" output suffix."""
    name = str(name)
    return name[:-2] if name.endswith(":0") else name


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """A CheckpointReader of a checkpoint file, or of a directory's latest checkpoint
    (TF1's tf.train.load_checkpoint).

    Raises:
        CheckpointNotFoundError: None, a directory recording no checkpoint, or no such
            file or directory (also a ValueError and a FileNotFoundError).
        TypeError: ckpt_dir_or_file is no path.
        DataLossError: the file (or the directory's index) is truncated, corrupted or
            not a checkpoint.
    """
    return CheckpointReader(_checkpoint_file(ckpt_dir_or_file, "load_checkpoint"))


def NewCheckpointReader(filepattern) -> CheckpointReader:  # noqa: N802 - TF1's name
    """TF1's tf.train.NewCheckpointReader: og.train.load_checkpoint.

    Raises:
        as load_checkpoint.
    """
    return CheckpointReader(_checkpoint_file(filepattern, "NewCheckpointReader"))


def load_variable(ckpt_dir_or_file, name: str) -> np.ndarray:
    """The stored value of variable `name` (TF1's tf.train.load_variable).

    Raises:
        as load_checkpoint, and NotFoundError: no such variable.
    """
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file) -> list:
    """[(name, shape as a list)] of a checkpoint's variables, sorted by name (TF1's
    tf.train.list_variables).

    Raises:
        as load_checkpoint.
    """
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return sorted(shapes.items())


def checkpoint_exists(checkpoint_prefix) -> bool:
    """Whether a checkpoint file (or a directory recording one) is there (TF1's
    deprecated tf.train.checkpoint_exists). Never raises for a missing path (nor for
    None: no checkpoint there).

    Raises:
        TypeError: checkpoint_prefix is no path.
        DataLossError: a directory's index is damaged (names it).
    """
    if checkpoint_prefix is None:
        return False
    path = _path(checkpoint_prefix, "checkpoint_exists")
    if os.path.isdir(path):
        return _latest_checkpoint(path) is not None
    return os.path.isfile(path)


def get_checkpoint_mtimes(checkpoint_prefixes) -> list:
    """The modification times (seconds since the epoch) of the checkpoint files that
    exist among `checkpoint_prefixes`, in their order (TF1's
    tf.train.get_checkpoint_mtimes). Never raises for a missing path.

    Raises:
        TypeError: checkpoint_prefixes is not a list of paths.
    """
    if isinstance(checkpoint_prefixes, (str, bytes, os.PathLike)) or not isinstance(
            checkpoint_prefixes, (list, tuple)):
        raise TypeError("get_checkpoint_mtimes: checkpoint_prefixes must be a list of "
                        f"paths, got {type(checkpoint_prefixes).__name__}")
    paths = [_path(p, f"get_checkpoint_mtimes: checkpoint_prefixes[{k}]",
                   none_is_missing=False) for k, p in enumerate(checkpoint_prefixes)]
    return [os.path.getmtime(p) for p in paths if os.path.isfile(p)]


CheckpointState = collections.namedtuple(
    "CheckpointState", ["model_checkpoint_path", "all_model_checkpoint_paths"])
CheckpointState.__doc__ = """What get_checkpoint_state gives (TF1's CheckpointState
proto's two fields): the latest checkpoint's path and every recorded one's, oldest
first."""


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The directory's CheckpointState, or None when it records no checkpoint (TF1's
    tf.train.get_checkpoint_state): og's own index (checkpoint.json), else TF's
    checkpoint state text file (`latest_filename`, default "checkpoint": what
    tf.train.Saver and og.train.update_checkpoint_state write).

    Raises:
        DataLossError: the index file, or TF's state file, is damaged (names it).
        TypeError: checkpoint_dir is no path.
    """
    directory = _path(checkpoint_dir, "get_checkpoint_state", none_is_missing=False)
    if not os.path.isdir(directory):
        return None
    index = _read_index(directory)
    if index["latest"] is None and not index["all"]:
        from .tf_checkpoint import tf_checkpoint_state

        tf_state = tf_checkpoint_state(directory, latest_filename or "checkpoint")
        return None if tf_state is None else CheckpointState(*tf_state)
    paths = [os.path.join(directory, name) for name in index["all"]]
    latest = index["latest"]
    return CheckpointState(os.path.join(directory, latest) if latest else paths[-1], paths)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None,
                         timeout_fn=None, poll_secs=1.0):
    """Yield the directory's latest checkpoint path each time a new one appears (TF1's
    tf.train.checkpoints_iterator, for an evaluation loop beside training), at most once
    every `min_interval_secs`. With `timeout` (seconds), waiting that long for a new one
    calls `timeout_fn` (if given): the iteration ends unless it returns False; without
    timeout_fn it just ends. `poll_secs` is how often the directory is looked at.

    Raises:
        DataLossError: the index file is damaged (names it).
        TypeError: checkpoint_dir is no path.
    """
    directory = _path(checkpoint_dir, "checkpoints_iterator", none_is_missing=False)
    last = None
    while True:
        started = time.monotonic()
        found = None
        while found is None:
            latest = _latest_checkpoint(directory) if os.path.isdir(directory) else None
            if latest is not None and latest != last:
                found = latest
                break
            if timeout is not None and time.monotonic() - started >= timeout:
                break
            time.sleep(poll_secs)
        if found is None:
            if timeout_fn is None or timeout_fn() is not False:
                return
            continue
        last = found
        yielded_at = time.monotonic()
        yield found
        wait = min_interval_secs - (time.monotonic() - yielded_at)
        if wait > 0:
            time.sleep(wait)


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=None,
                      meta_graph_suffix="meta"):
    """Delete a checkpoint file (TF1's tf.train.remove_checkpoint; the format and suffix
    arguments are accepted and ignored). As in TF1 the index still records it; readers
    such as latest_checkpoint skip a recorded file that is gone. A missing file is not
    an error.

    Raises:
        TypeError: checkpoint_prefix is no path.
        OSError: the file is there but cannot be removed (a directory, no permission).
    """
    del checkpoint_format_version, meta_graph_suffix
    try:
        os.remove(_path(checkpoint_prefix, "remove_checkpoint", none_is_missing=False))
    except FileNotFoundError:
        pass

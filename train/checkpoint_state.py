"""TF1's `checkpoint` state file: tf.train.generate_checkpoint_state_proto and
tf.train.update_checkpoint_state.

TF keeps, beside its checkpoints, a text-format CheckpointState proto named
`checkpoint` (or `latest_filename`):

    model_checkpoint_path: "model.ckpt-3"
    all_model_checkpoint_paths: "model.ckpt-1"
    all_model_checkpoint_paths: "model.ckpt-3"
    all_model_checkpoint_timestamps: 1.5
    ...
    last_preserved_timestamp: 0.25

These functions write that file as TF writes it (og's own Saver keeps its index in
checkpoint.json; og.train.latest_checkpoint reads TF's `checkpoint` file when a
directory has no og index).
"""

from __future__ import annotations

import os

from ..errors import NotFoundError
from ..format.atomic import atomic_open
from .checkpoint_utils import CheckpointState


class CheckpointStateProto(CheckpointState):
    """A CheckpointState (model_checkpoint_path, all_model_checkpoint_paths) with TF's
    two other fields, `all_model_checkpoint_timestamps` (seconds since the epoch, one per
    path, or empty) and `last_preserved_timestamp` (0.0 when unset); str() gives TF's
    text format."""

    def __new__(cls, model_checkpoint_path, all_model_checkpoint_paths,
                all_model_checkpoint_timestamps=(), last_preserved_timestamp=0.0):
        self = super().__new__(cls, model_checkpoint_path, list(all_model_checkpoint_paths))
        self.all_model_checkpoint_timestamps = [float(t) for t in
                                                all_model_checkpoint_timestamps]
        self.last_preserved_timestamp = float(last_preserved_timestamp)
        return self

    def __str__(self) -> str:
        """TF's str() of the proto (its C++ text printer: 2.0 prints as 2)."""
        return _text(self, _short_double)


def _text(state: CheckpointStateProto, double) -> str:
    """The state in protobuf's text format, doubles written by `double`."""
    lines = []
    if state.model_checkpoint_path:  # proto3: empty strings and zeros are not written
        lines.append(f"model_checkpoint_path: {_quoted(state.model_checkpoint_path)}")
    lines += [f"all_model_checkpoint_paths: {_quoted(p)}"
              for p in state.all_model_checkpoint_paths]
    lines += [f"all_model_checkpoint_timestamps: {double(t)}"
              for t in state.all_model_checkpoint_timestamps]
    if state.last_preserved_timestamp:
        lines.append(f"last_preserved_timestamp: {double(state.last_preserved_timestamp)}")
    return "".join(line + "\n" for line in lines)


_ESCAPES = {'"': '\\"', "'": "\\'", "\\": "\\\\", "\n": "\\n", "\r": "\\r",
            "\t": "\\t"}


def _quoted(text: str) -> str:
    """A string field as protobuf's text format writes it (TF's file): quotes, the
    backslash and \\n \\r \\t escaped, other control characters as 3-digit octal
    escapes, everything else (non-ASCII too) as it is."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7f:
            out.append(f"\\{ord(char):03o}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _file_double(value: float) -> str:
    """A double as protobuf's Python text format writes it (TF's file): repr."""
    return repr(float(value))


def _short_double(value: float) -> str:
    """A double as protobuf's C++ printer writes it: the shortest round-trip form,
    without a trailing ".0"."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _path(value, what: str) -> str:
    """`value` (str, bytes or os.PathLike) as a str.

    Raises:
        TypeError: it is not a path (names `what`).
    """
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"{what} must be a path (str, bytes or os.PathLike), got "
                        f"{type(value).__name__}")
    return os.fsdecode(value)


def _timestamps(values, what: str) -> list:
    """A list of timestamps (numbers), or [] for None.

    Raises:
        TypeError: values is not a list of numbers.
    """
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what} must be a list of numbers, got {type(values).__name__}")
    values = list(values)
    for t in values:
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise TypeError(f"{what} must hold numbers (seconds), got {t!r}")
    return values


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path,
                                    all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None,
                                    last_preserved_timestamp=None) -> CheckpointStateProto:
    """The CheckpointState TF1 would record (tf.train.generate_checkpoint_state_proto):
    model_checkpoint_path is appended to all_model_checkpoint_paths unless it is
    already its last entry; when save_dir is relative, relative paths are rewritten
    relative to save_dir. The caller's list is not changed (TF1 appends to it).

    Raises:
        TypeError: save_dir, a checkpoint path or a timestamp is of the wrong type.
        ValueError: timestamps are given but not one per checkpoint path (TF1's words).
    """
    save_dir = _path(save_dir, "generate_checkpoint_state_proto: save_dir")
    model = _path(model_checkpoint_path, "generate_checkpoint_state_proto: "
                  "model_checkpoint_path")
    if all_model_checkpoint_paths is None:
        paths = []
    elif isinstance(all_model_checkpoint_paths, (str, bytes, os.PathLike)):
        raise TypeError("generate_checkpoint_state_proto: all_model_checkpoint_paths must "
                        "be a list of paths, got a single path")
    else:
        paths = [_path(p, "generate_checkpoint_state_proto: all_model_checkpoint_paths[]")
                 for p in all_model_checkpoint_paths]
    if not paths or paths[-1] != model:
        paths.append(model)
    stamps = _timestamps(all_model_checkpoint_timestamps,
                         "generate_checkpoint_state_proto: all_model_checkpoint_timestamps")
    if stamps and len(stamps) != len(paths):
        raise ValueError("Checkpoint timestamps, if provided, must match checkpoint paths "
                         f"(got paths {paths} and timestamps {stamps})")
    if last_preserved_timestamp is not None and (
            isinstance(last_preserved_timestamp, bool)
            or not isinstance(last_preserved_timestamp, (int, float))):
        raise TypeError("generate_checkpoint_state_proto: last_preserved_timestamp must be "
                        f"a number (seconds), got {last_preserved_timestamp!r}")
    if not os.path.isabs(save_dir):
        # TF1 records paths relative to a relative save_dir
        if not os.path.isabs(model):
            model = os.path.relpath(model, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    return CheckpointStateProto(model, paths, stamps, last_preserved_timestamp or 0.0)


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None) -> None:
    """Write `save_dir/checkpoint` (or `save_dir/<latest_filename>`), TF's text-format
    CheckpointState of generate_checkpoint_state_proto's, atomically (temp file, fsync,
    rename), as TF1's tf.train.update_checkpoint_state.

    Raises:
        TypeError: an argument is of the wrong type (see generate_checkpoint_state_proto).
        ValueError: as generate_checkpoint_state_proto.
        RuntimeError: the checkpoint path is the state file's own path (TF1's words).
        og.errors.NotFoundError: save_dir does not exist (TF1's class).
        OSError: the file cannot be written (permissions, ...).
    """
    directory = _path(save_dir, "update_checkpoint_state: save_dir")
    if latest_filename is not None and not isinstance(latest_filename, str):
        raise TypeError("update_checkpoint_state: latest_filename must be a str or None, "
                        f"got {type(latest_filename).__name__}")
    state_file = os.path.join(directory, latest_filename or "checkpoint")
    state = generate_checkpoint_state_proto(
        directory, model_checkpoint_path, all_model_checkpoint_paths,
        all_model_checkpoint_timestamps, last_preserved_timestamp)
    if state_file == state.model_checkpoint_path:
        raise RuntimeError(f"Save path '{model_checkpoint_path}' conflicts with path used "
                           "for checkpoint state.  Please use a different save path.")
    if not os.path.isdir(directory):
        raise NotFoundError(f"update_checkpoint_state: directory {directory!r} does not "
                            "exist")
    with atomic_open(state_file, "w", prefix=".checkpoint-") as f:
        f.write(_text(state, _file_double))

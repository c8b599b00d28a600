"""Operators: Save and Restore (the `onegraph` domain): checkpoints as graph ops.

A checkpoint is a `.og` model holding one VARIABLE tensor per saved variable, written
atomically by the format writer (temp file, fsync, rename) with a CRC-32 per data
segment. Restore verifies every checksum before assigning anything, so a corrupted or
truncated file never loads silently: it raises `DataLossError` naming the file.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataLossError, ExecutionError, FormatError
from ..format import Graph, Model, TensorKind, load_model, save_model
from .registry import TensorInfo, VariableRef, define

DOMAIN = "onegraph"


def _filename(x) -> str:
    v = np.asarray(x, dtype=object).reshape(-1)
    if v.size != 1:
        raise ExecutionError("Save/Restore: filename must be a scalar string")
    name = v[0]
    return name.decode() if isinstance(name, bytes) else str(name)


def write_checkpoint(path: str, named_values, metadata=None) -> int:
    """Write {name: array} as a `.og` checkpoint (atomically); returns bytes written."""
    g = Graph("checkpoint")
    for name, value in named_values:
        value = np.array(value, order="C")
        g.add_tensor(name, value.dtype, value.shape, TensorKind.VARIABLE, value)
    model = Model(graphs=[g], metadata=dict(metadata or {}, kind="checkpoint"))
    return save_model(model, path)


def read_checkpoint(path: str) -> dict:
    """{name: array copy} of a checkpoint, every checksum verified.

    Raises:
        DataLossError: the file is truncated, corrupted or not a checkpoint (names it).
        FileNotFoundError: no such file.
    """
    try:
        model = load_model(path, check_data=True)
        out = {t.name: np.array(t.data) for t in model.graph.tensors
               if t.kind is TensorKind.VARIABLE and t.data is not None}
    except DataLossError as e:
        raise DataLossError(f"checkpoint {path}: {e}") from e
    except FormatError as e:
        raise DataLossError(f"checkpoint {path} is corrupted: {e}") from e
    return out


def _save(inputs, attrs, ctx):
    """Write the variables (inputs 1..) under attrs['names'] to the file named by input 0."""
    path = _filename(inputs[0])
    names = list(attrs["names"])
    refs = inputs[1:]
    if len(names) != len(refs):
        raise ExecutionError(f"Save: {len(names)} names for {len(refs)} variables")
    values = []
    for name, ref in zip(names, refs):
        if not isinstance(ref, VariableRef):
            raise ExecutionError(f"Save: input for {name!r} is not a variable")
        with ref.lock:
            values.append((name, ref.read()))
    write_checkpoint(path, values)
    return (np.asarray(path, dtype=object),)


def _restore(inputs, attrs, ctx):
    """Assign every variable (inputs 1..) its value named attrs['names'] in the file."""
    path = _filename(inputs[0])
    stored = read_checkpoint(path)
    names = list(attrs["names"])
    missing = [n for n in names if n not in stored]
    if missing:
        raise DataLossError(f"checkpoint {path} lacks variables {missing}")
    for name, ref in zip(names, inputs[1:]):
        value = stored[name]
        old = ref.value
        if old is not None and old.shape != value.shape:
            raise DataLossError(f"checkpoint {path}: {name!r} has shape {value.shape}, the "
                                f"variable {old.shape}")
        with ref.lock:
            ref.value = value if old is None else value.astype(old.dtype, copy=False)
    return (np.asarray(path, dtype=object),)


def _infer_path(attrs, inputs):
    return [TensorInfo(np.dtype(object), ())]


OPS = (
    define("Restore", ["filename", "vars*"], ["filename_out"], _restore,
           [("names", "strings")], infer=_infer_path, domain=DOMAIN, stateful=True,
           doc="assign variables from a checkpoint file"),
    define("Save", ["filename", "vars*"], ["filename_out"], _save, [("names", "strings")],
           infer=_infer_path, domain=DOMAIN, stateful=True,
           doc="write variables to a checkpoint file"),
)

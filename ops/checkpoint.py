"""Operators: Save and Restore (the `onegraph` domain): checkpoints as graph ops.

A checkpoint is a `.og` model holding one VARIABLE tensor per saved variable, written
atomically by the format writer (temp file, fsync, rename) with a CRC-32 per data
segment. The FlatBuffer part has no checksum of its own, and one flipped bit there can
change a variable's dtype or point it at another variable's (intact) data, so the
metadata also holds a CRC-32 of every tensor's name, kind, dtype, shape and bytes
(`tensors_crc32`; files written before it are read without that check).

Restore checks everything before it assigns anything, so a restore is all or nothing:
- a corrupted or truncated file raises `DataLossError` naming the file;
- a file lacking a variable raises `OneGraphError`;
- a value whose dtype or shape is not the variable's declared one raises `ShapeError`
  naming the variable, the file and both types. Nothing is cast, as in TF1's RestoreV2
  and Assign(validate_shape=True). The declared types are Restore's `dtypes` (DType
  codes, 0 = any) and `shapes` (see `pack_shapes`; -1 dims match any size) attributes;
  a Restore node without them checks against the variables' current values.
"""

from __future__ import annotations

import zlib

import numpy as np

from ..errors import (DataLossError, ExecutionError, FormatError, OneGraphError,
                      OpAttributeError, ShapeError)
from ..format import DType, Graph, Model, TensorKind, load_model, save_model
from .registry import TensorInfo, VariableRef, define

DOMAIN = "onegraph"
DIGEST_KEY = "tensors_crc32"  # checkpoint metadata: CRC-32 of the tensors (see _digest)


def _filename(x) -> str:
    v = np.asarray(x, dtype=object).reshape(-1)
    if v.size != 1:
        raise ExecutionError("Save/Restore: filename must be a scalar string")
    name = v[0]
    return name.decode() if isinstance(name, bytes) else str(name)


def _digest(tensors) -> str:
    """CRC-32 (8 hex digits) of each tensor's name, kind, dtype, shape and data bytes as
    the writer stores them (UTF-8 strings, little-endian numbers)."""
    crc = 0
    for t in tensors:
        head = f"{t.name}\0{int(t.kind)}\0{int(t.dtype)}\0{t.shape}\0"
        crc = zlib.crc32(head.encode("utf-8"), crc)
        if t.data is None:
            continue
        if t.dtype is DType.STRING:
            for s in np.asarray(t.data, dtype=object).reshape(-1):
                b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
                crc = zlib.crc32(len(b).to_bytes(8, "little") + b, crc)
        else:
            data = np.ascontiguousarray(t.data, dtype=t.dtype.numpy).reshape(-1)
            crc = zlib.crc32(data.view(np.uint8), crc)
    return f"{crc:08x}"


def write_checkpoint(path: str, named_values, metadata=None) -> int:
    """Write {name: array} as a `.og` checkpoint (atomically); returns bytes written."""
    g = Graph("checkpoint")
    for name, value in named_values:
        value = np.array(value, order="C")
        g.add_tensor(name, value.dtype, value.shape, TensorKind.VARIABLE, value)
    metadata = dict(metadata or {}, kind="checkpoint")
    metadata[DIGEST_KEY] = _digest(g.tensors)
    return save_model(Model(graphs=[g], metadata=metadata), path)


def _read_variables(path: str) -> dict:
    """{name: (DType in the file, array copy)} of a checkpoint's variables, every
    checksum verified.

    Raises:
        DataLossError: the file is truncated, corrupted or not a checkpoint (names it).
        FileNotFoundError: no such file.
    """
    try:
        model = load_model(path, check_data=True)
        tensors = model.graph.tensors
        expected = model.metadata.get(DIGEST_KEY)
        if expected is not None and expected != _digest(tensors):
            raise DataLossError("its tensors' names, dtypes, shapes or data do not match "
                                f"their checksum {DIGEST_KEY} (the header is damaged)")
        out = {t.name: (t.dtype, np.array(t.data)) for t in tensors
               if t.kind is TensorKind.VARIABLE and t.data is not None}
    except DataLossError as e:
        raise DataLossError(f"checkpoint {path}: {e}") from e
    except FormatError as e:
        raise DataLossError(f"checkpoint {path} is corrupted: {e}") from e
    return out


def read_checkpoint(path: str) -> dict:
    """{name: array copy} of a checkpoint, every checksum verified.

    Raises:
        DataLossError: the file is truncated, corrupted or not a checkpoint (names it).
        FileNotFoundError: no such file.
    """
    return {name: value for name, (_, value) in _read_variables(path).items()}


def pack_shapes(shapes) -> list[int]:
    """Restore's `shapes` attribute for a sequence of shapes: per shape its rank, then
    its dims (-1 = any size); a rank of -1 (for a shape of None) accepts any shape."""
    out: list[int] = []
    for shape in shapes:
        out += [-1] if shape is None else [len(shape), *(int(d) for d in shape)]
    return out


def _unpack_shapes(flat) -> list:
    out, flat, i = [], [int(v) for v in flat], 0
    while i < len(flat):
        rank, i = flat[i], i + 1
        if rank < 0:
            out.append(None)
            continue
        if i + rank > len(flat):
            raise OpAttributeError("Restore: attribute 'shapes' is truncated")
        out.append(tuple(flat[i:i + rank]))
        i += rank
    return out


def _expected_types(attrs, refs) -> list:
    """(DType or None, shape or None) each variable's restored value must have; None
    accepts anything."""
    dtypes, shapes = attrs.get("dtypes"), attrs.get("shapes")
    if dtypes is None or shapes is None:  # a Restore node made before these attributes
        return [(None, None) if r.value is None else
                (DType.from_numpy(r.value.dtype), r.value.shape) for r in refs]
    shapes = _unpack_shapes(shapes)
    if len(dtypes) != len(refs) or len(shapes) != len(refs):
        raise OpAttributeError(f"Restore: {len(dtypes)} dtypes and {len(shapes)} shapes for "
                               f"{len(refs)} variables")
    try:
        return [(DType(int(d)) if int(d) else None, s) for d, s in zip(dtypes, shapes)]
    except ValueError as e:
        raise OpAttributeError(f"Restore: attribute 'dtypes': {e}") from e


def _describe(dtype, shape) -> str:
    return (f"{dtype.short_name if dtype is not None else 'of any dtype'} "
            f"{shape if shape is not None else 'of any shape'}")


def _variables(op: str, names, refs) -> None:
    if len(names) != len(refs):
        raise ExecutionError(f"{op}: {len(names)} names for {len(refs)} variables")
    for name, ref in zip(names, refs):
        if not isinstance(ref, VariableRef):
            raise ExecutionError(f"{op}: input for {name!r} is not a variable")


def _save(inputs, attrs, ctx):
    """Write the variables (inputs 1..) under attrs['names'] to the file named by input 0."""
    path = _filename(inputs[0])
    names = list(attrs["names"])
    refs = inputs[1:]
    _variables("Save", names, refs)
    values = []
    for name, ref in zip(names, refs):
        with ref.lock:
            values.append((name, ref.read()))
    write_checkpoint(path, values)
    return (np.asarray(path, dtype=object),)


def _restore(inputs, attrs, ctx):
    """Assign every variable (inputs 1..) its value named attrs['names'] in the file,
    after checking all of them (see the module doc)."""
    path = _filename(inputs[0])
    names = list(attrs["names"])
    refs = inputs[1:]
    _variables("Restore", names, refs)
    expected = _expected_types(attrs, refs)
    stored = _read_variables(path)
    missing = [n for n in names if n not in stored]
    if missing:
        raise OneGraphError(f"checkpoint {path} lacks variables {missing}")
    problems = []
    for name, ref, (dtype, shape) in zip(names, refs, expected):
        found_dtype, value = stored[name]
        wrong_shape = shape is not None and (
            len(shape) != value.ndim or any(d >= 0 and d != n for d, n in zip(shape, value.shape)))
        if (dtype is not None and found_dtype is not dtype) or wrong_shape:
            what = repr(name) if name == ref.name else f"{name!r} (variable {ref.name!r})"
            problems.append(f"{what} is {_describe(dtype, shape)} in the graph but "
                            f"{_describe(found_dtype, value.shape)} in the file")
    if problems:
        raise ShapeError(f"checkpoint {path} does not fit the variables: "
                         + "; ".join(problems))
    for name, ref in zip(names, refs):
        with ref.lock:
            ref.value = stored[name][1]
    return (np.asarray(path, dtype=object),)


def _infer_path(attrs, inputs):
    return [TensorInfo(np.dtype(object), ())]


OPS = (
    define("Restore", ["filename", "vars*"], ["filename_out"], _restore,
           [("names", "strings"), ("dtypes", "ints", None), ("shapes", "ints", None)],
           infer=_infer_path, domain=DOMAIN, stateful=True,
           doc="assign variables from a checkpoint file, checking their declared dtypes "
               "and shapes first"),
    define("Save", ["filename", "vars*"], ["filename_out"], _save, [("names", "strings")],
           infer=_infer_path, domain=DOMAIN, stateful=True,
           doc="write variables to a checkpoint file"),
)

"""Operators: TF's Example parsing (onegraph domain), following ParseExampleV2 and
ParseSequenceExampleV2.

ParseExample(serialized, dense_defaults*) -> outputs*: serialized is a scalar (TF's
parse_single_example) or a vector of tf.train.Example bytes. Outputs: for each sparse
(VarLen) key its indices, then each one's values, then each one's dense_shape, then one
dense tensor per dense key. Attributes name the keys, their dtypes ("float32", "int64",
"string") and the dense shapes ("2,3"; "" a scalar; a leading "-1" a
FixedLenSequenceFeature padded with its default). An empty default means required.

ParseSequenceExample(serialized, context_dense_defaults*) -> outputs*: the context as
ParseExample's outputs, then the feature lists': sparse indices, values, shapes, then
dense values, then dense lengths (one int64 per example and dense list; absent for a
scalar input). Sparse lists have one more dim (the step) than context ones.

Errors while running are ExecutionError with TF's InvalidArgumentError text.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, ShapeError
from .regex_re2 import text_bytes
from .registry import TensorInfo, define
from .summary_encoding import packed_int64s, read_fields

_D = "onegraph"
_I64 = np.dtype(np.int64)
_OBJ = np.dtype(object)
# dtype name -> (Feature's oneof field number, TF's name in messages, numpy dtype)
_TYPES = {"float32": (2, "float", np.dtype(np.float32)), "int64": (3, "int64", _I64),
          "string": (1, "string", _OBJ)}
_KIND_NAME = {1: "string", 2: "float", 3: "int64"}


# ------------------------------------------------------------------ wire decoding

def _fields(data: bytes, what: str) -> list:
    try:
        return read_fields(data)
    except ValueError:
        raise ExecutionError(f"Could not parse example input, value: '{what}'") from None


def _feature(data: bytes) -> tuple:
    """One serialized Feature -> (kind number or 0, list of its values).

    Raises:
        ValueError: malformed bytes.
    """
    kind, values = 0, []
    for number, wire, raw in read_fields(data):
        if number not in (1, 2, 3):
            continue
        if wire != 2 and not (number == 2 and wire == 5):
            raise ValueError("bad wire type")
        if number != kind:
            kind, values = number, []
        for n, w, v in read_fields(raw) if wire == 2 else [(1, 5, raw)]:
            if n != 1:
                continue
            if number == 1 and w == 2:
                values.append(bytes(v))
            elif number == 2 and w in (2, 5) and len(v) % 4 == 0:
                values.extend(np.frombuffer(v, "<f4").tolist())
            elif number == 3 and w == 2:
                values.extend(packed_int64s(v))
            elif number == 3 and w == 0:
                values.append(v - 2 ** 64 if v >= 2 ** 63 else v)
            else:
                raise ValueError("bad wire type")
    return kind, values


def _map(data: bytes, value_fn) -> dict:
    """A map<string, M> field 1 of a message -> {key: value_fn(M's bytes)}.

    Raises:
        ValueError: malformed bytes.
    """
    out = {}
    for number, wire, raw in read_fields(data):
        if number != 1:
            continue
        if wire != 2:
            raise ValueError("bad wire type")
        key, value = b"", b""
        for n, w, v in read_fields(raw):
            if w == 2 and n == 1:
                key = bytes(v)
            elif w == 2 and n == 2:
                value = bytes(v)
        out[key.decode("utf-8", "surrogateescape")] = value_fn(value)
    return out


def _submessage(data: bytes, field: int) -> bytes:
    """The merged bytes of singular message field `field` (protobuf concatenates)."""
    parts = []
    for number, wire, raw in read_fields(data):
        if number == field:
            if wire != 2:
                raise ValueError("bad wire type")
            parts.append(bytes(raw))
    return b"".join(parts)


def _example(data: bytes) -> dict:
    """Example bytes -> {key: (kind, values)}."""
    return _map(_submessage(data, 1), _feature)


def _feature_list(data: bytes) -> list:
    return [_feature(bytes(raw)) for n, w, raw in read_fields(data) if n == 1 and w == 2]


def _sequence_example(data: bytes) -> tuple:
    """SequenceExample bytes -> ({context key: (kind, values)}, {list key: [(kind,
    values), ...]})."""
    return _map(_submessage(data, 1), _feature), _map(_submessage(data, 2), _feature_list)


def _as_bytes(v) -> bytes:
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v)
    if isinstance(v, str):
        return text_bytes(v)
    raise ExecutionError(f"serialized must hold strings, got {type(v).__name__}")


def _serialized(x) -> tuple:
    """The input as a list of bytes and whether it was a scalar.

    Raises:
        ExecutionError: not a scalar or vector of strings.
    """
    arr = np.asarray(x, dtype=object)
    if arr.ndim > 1:
        raise ExecutionError(f"Expected serialized to be a scalar or vector, got shape: "
                             f"{list(arr.shape)}")
    return [_as_bytes(v) for v in arr.reshape(-1).tolist()], arr.ndim == 0


# ------------------------------------------------------------------ values

def _values(kind_values: tuple, dtype: str) -> np.ndarray:
    """Decoded values as an array of `dtype` (strings as str with surrogate escapes)."""
    _, values = kind_values
    if dtype == "string":
        out = np.empty(len(values), dtype=object)
        out[:] = [v.decode("utf-8", "surrogateescape") for v in values]
        return out
    return np.asarray(values, dtype=_TYPES[dtype][2])


def _check_kind(kind_values, key, dtype, where, sparse=False) -> None:
    kind, _ = kind_values
    if kind and kind != _TYPES[dtype][0]:
        if sparse:
            raise ExecutionError(f"{where}Data types don't match. Expected type: "
                                 f"{_TYPES[dtype][1]}, Actual type: {_KIND_NAME[kind]}")
        raise ExecutionError(f"{where}Data types don't match. Data type: "
                             f"{_KIND_NAME[kind]} but expected type: {_TYPES[dtype][1]}")


def _shape_of(text: str) -> tuple:
    return tuple(int(d) for d in text.split(",")) if text else ()


def _shape_text(shape) -> str:
    return "[" + ",".join("?" if d < 0 else str(d) for d in shape) + "]"


def _name(batched: bool, i: int) -> str:
    return "Name: <unknown>, " if batched else ""


def _where(batched: bool, key: str, i: int) -> str:
    """The start of TF's message about feature `key` of example i."""
    return f"Name: <unknown>, Key: {key}, Index: {i}.  " if batched else f"Key: {key}.  "


def _dense_one(found, key, dtype, shape, default, batched, i):
    """One example's dense value of `shape` ((-1, ...) for a sequence feature: rows).

    Raises:
        ExecutionError: missing without default, a type or size mismatch (TF's text).
    """
    if found is None or (found[0] == 0 and not found[1]):
        if shape and shape[0] == -1:
            return np.zeros((0,) + shape[1:], _TYPES[dtype][2])
        if default.size == 0 and int(np.prod(shape)) != 0:
            raise ExecutionError(f"{_name(batched, i)}Feature: {key} (data type: "
                                 f"{_TYPES[dtype][1]}) is "
                                 f"required but could not be found.")
        return np.asarray(default).reshape(shape)
    where = _where(batched, key, i)
    _check_kind(found, key, dtype, where)
    values = _values(found, dtype)
    if shape and shape[0] == -1:
        stride = int(np.prod(shape[1:]))
        if stride == 0 or values.size % stride:
            raise ExecutionError(f"{where}Number of {_TYPES[dtype][1]} values is "
                                 f"not a multiple of stride length. Saw {values.size} "
                                 f"values but output shape is: {_shape_text(shape)}")
        return values.reshape((-1,) + shape[1:])
    if values.size != int(np.prod(shape)) and not batched:
        # TF's single-example parser says it this way
        name = {1: "bytes_list", 2: "float_list", 3: "int64_list"}[found[0]]
        raise ExecutionError(f"{where}Can't parse serialized Example: Some {name} slice "
                             f"was not parsed.")
    if values.size != int(np.prod(shape)):
        raise ExecutionError(f"{where}Number of {_TYPES[dtype][1]} values != "
                             f"expected.  Values size: {values.size} but output shape: "
                             f"{_shape_text(shape)}")
    return values.reshape(shape)


def _stack_dense(rows: list, shape, dtype, default, batched: bool) -> np.ndarray:
    """Per-example dense values stacked (sequence features padded with the default)."""
    np_dtype = _TYPES[dtype][2]
    if shape and shape[0] == -1:
        longest = max((r.shape[0] for r in rows), default=0)
        fill = default.reshape(-1)[0] if default.size else ("" if dtype == "string" else 0)
        out = np.empty((len(rows), longest) + shape[1:], np_dtype)
        out[...] = fill
        for b, r in enumerate(rows):
            out[b, :r.shape[0]] = r
    else:
        out = np.empty((len(rows),) + shape, np_dtype)
        for b, r in enumerate(rows):
            out[b, ...] = r                 # [b, ...]: a 0-d object array's element
    return out if batched else out[0]


def _sparse(rows: list, dtype: str, prefix_rank: int) -> tuple:
    """Per-example lists of (index prefix, values) -> indices, values, dense_shape; the
    prefix is the example (and step) index, the last dim the position in the list."""
    idx, vals, longest = [], [], 0
    extents = [0] * prefix_rank
    for prefix, values in rows:
        n = values.size
        longest = max(longest, n)
        for k, p in enumerate(prefix):
            extents[k] = max(extents[k], p + 1)
        block = np.empty((n, prefix_rank + 1), np.int64)
        block[:, :prefix_rank] = prefix
        block[:, prefix_rank] = np.arange(n)
        idx.append(block)
        vals.append(values)
    indices = np.concatenate(idx) if idx else np.zeros((0, prefix_rank + 1), np.int64)
    values = np.concatenate(vals) if vals else np.zeros(0, _TYPES[dtype][2])
    if dtype == "string":
        values = values.astype(object)
    return indices, values.astype(_TYPES[dtype][2]), extents, longest


def _attr_lists(attrs, prefix: str) -> tuple:
    sk, st = list(attrs[prefix + "sparse_keys"]), list(attrs[prefix + "sparse_types"])
    dk, dt = list(attrs[prefix + "dense_keys"]), list(attrs[prefix + "dense_types"])
    ds = [_shape_of(s) for s in attrs[prefix + "dense_shapes"]]
    return sk, st, dk, dt, ds


def _parse_features(examples: list, batched: bool, attrs, defaults, prefix="") -> list:
    """The sparse then dense outputs of one set of (context/example) features."""
    sk, st, dk, dt, ds = _attr_lists(attrs, prefix)
    ind, val, shp, dense = [], [], [], []
    for key, dtype in zip(sk, st):
        rows = []
        for b, ex in enumerate(examples):
            found = ex.get(key)
            if found is not None:
                _check_kind(found, key, dtype, _where(batched, key, b), sparse=True)
            rows.append(((b,) if batched else (), _values(found or (0, []), dtype)))
        indices, values, extents, longest = _sparse(rows, dtype, 1 if batched else 0)
        ind.append(indices)
        val.append(values)
        shp.append(np.array(([len(examples)] if batched else []) + [longest], np.int64))
    for k, (key, dtype, shape) in enumerate(zip(dk, dt, ds)):
        default = np.asarray(defaults[k], dtype=_TYPES[dtype][2])
        rows = [_dense_one(ex.get(key), key, dtype, shape, default, batched, b)
                for b, ex in enumerate(examples)]
        dense.append(_stack_dense(rows, shape, dtype, default, batched))
    return ind + val + shp + dense


def _decoded(data: list, decode) -> list:
    """decode(d) of each serialized message.

    Raises:
        ExecutionError: one is corrupt (TF's message).
    """
    out = []
    for d in data:
        try:
            out.append(decode(d))
        except ValueError:
            raise ExecutionError(f"Could not parse example input, value: "
                                 f"'{d[:40]!r}'") from None
    return out


def _example_kernel(inputs, attrs, ctx):
    """TF's ParseExampleV2 on Example bytes (a scalar or a vector).

    Raises:
        ExecutionError: corrupt bytes, a missing required feature, a type or size
            mismatch (TF's messages).
    """
    data, scalar = _serialized(inputs[0])
    examples = _decoded(data, _example)
    return tuple(_parse_features(examples, not scalar, attrs, inputs[1:]))


def _feature_infos(attrs, batch, prefix="", extra_rank=0) -> list:
    sk, st, dk, dt, ds = _attr_lists(attrs, prefix)
    lead = () if batch is False else (batch,)
    rank = len(lead) + extra_rank + 1
    out = [TensorInfo(_I64, (None, rank)) for _ in sk]
    out += [TensorInfo(_TYPES[t][2], (None,)) for t in st]
    out += [TensorInfo(_I64, (rank,)) for _ in sk]
    out += [TensorInfo(_TYPES[t][2], lead + tuple(None if d < 0 else d for d in s))
            for t, s in zip(dt, ds)]
    return out


def _batch_of(info):
    """False for a scalar serialized input, else its (maybe unknown) length."""
    if info.shape is None:
        return None
    if len(info.shape) > 1:
        raise ShapeError(f"Shape must be at most rank 1 but is rank {len(info.shape)}")
    return False if len(info.shape) == 0 else info.shape[0]


def _example_infer(attrs, inputs):
    return _feature_infos(attrs, _batch_of(inputs[0]))


def _check_feature_attrs(attrs, prefix="") -> str | None:
    sk, st, dk, dt, ds = _attr_lists(attrs, prefix)
    if len(sk) != len(st) or len(dk) != len(dt) or len(dk) != len(ds):
        return "keys, types and shapes must have equal lengths"
    for t in st + dt:
        if t not in _TYPES:
            return f"unsupported type {t!r} (float32, int64 or string)"
    for s in ds:
        if any(d < -1 for d in s) or -1 in s[1:]:
            return f"bad dense shape {list(s)}"
    return None


# ------------------------------------------------------------------ sequence examples

def _check_list_kind(found, key, dtype, step) -> None:
    """TF's message for step `step` of feature list `key` holding another type."""
    if found[0] and found[0] != _TYPES[dtype][0]:
        raise ExecutionError(f"Name: <unknown>, Feature list: {key}, Index: {step}.  Data "
                             f"types don't match. Expected type: {_TYPES[dtype][1]}")


def _sequence_kernel(inputs, attrs, ctx):
    """TF's ParseSequenceExampleV2 on SequenceExample bytes (a scalar or a vector).

    Raises:
        ExecutionError: corrupt bytes, a missing required feature or feature list, a
            type or size mismatch (TF's messages).
    """
    data, scalar = _serialized(inputs[0])
    batched = not scalar
    parsed = _decoded(data, _sequence_example)
    out = _parse_features([c for c, _ in parsed], batched, attrs, inputs[1:], "context_")
    lists = [f for _, f in parsed]
    sk, st, dk, dt, ds = _attr_lists(attrs, "feature_list_")
    missing_ok = set(attrs["feature_list_dense_missing_assumed_empty"])
    ind, val, shp, dense, lengths = [], [], [], [], []
    for key, dtype in zip(sk, st):
        rows, steps = [], 0
        for b, fl in enumerate(lists):
            feats = fl.get(key, [])
            steps = max(steps, len(feats))
            for t, found in enumerate(feats):
                _check_list_kind(found, key, dtype, t)
                rows.append(((b, t) if batched else (t,), _values(found, dtype)))
        indices, values, extents, longest = _sparse(rows, dtype, 2 if batched else 1)
        ind.append(indices)
        val.append(values)
        shp.append(np.array(([len(lists)] if batched else []) + [steps, longest], np.int64))
    for key, dtype, shape in zip(dk, dt, ds):
        rows = []
        for b, fl in enumerate(lists):
            if key not in fl:
                if key not in missing_ok:
                    raise ExecutionError(f"Name: <unknown>, Feature list '{key}' is "
                                         f"required but could not be found.  Did you mean "
                                         f"to include it in "
                                         f"feature_list_dense_missing_assumed_empty or "
                                         f"feature_list_dense_defaults?")
                rows.append(np.zeros((0,) + shape, _TYPES[dtype][2]))
                continue
            for t, found in enumerate(fl[key]):
                _check_list_kind(found, key, dtype, t)
            values = [_values(found, dtype) for found in fl[key]]
            total = sum(v.size for v in values)
            stride = int(np.prod(shape))
            for t, v in enumerate(values):
                if batched and v.size != stride:
                    # TF's batched parser checks step by step, its single one the total
                    raise ExecutionError(f"Name: <unknown>, Key: {key}, Index: {t}.  Number "
                                         f"of values != expected.  values size: {v.size} "
                                         f"but output shape: {_shape_text(shape)}")
            if any(v.size != stride for v in values):
                raise ExecutionError(f"Feature list '{key}' has an unexpected number of "
                                     f"values.  Total values size: {total} is not "
                                     f"consistent with output shape: "
                                     f"{_shape_text((-1,) + shape)}")
            rows.append(np.stack([v.reshape(shape) for v in values]) if values else
                        np.zeros((0,) + shape, _TYPES[dtype][2]))
        lengths.append(np.array([r.shape[0] for r in rows], np.int64))
        empty = np.zeros(0, _TYPES[dtype][2])
        dense.append(_stack_dense(rows, (-1,) + shape, dtype, empty, batched))
    return tuple(out + ind + val + shp + dense + (lengths if batched else []))


def _sequence_infer(attrs, inputs):
    batch = _batch_of(inputs[0])
    out = _feature_infos(attrs, batch, "context_")
    lists = _feature_infos(attrs, batch, "feature_list_", extra_rank=1)
    n_dense = len(attrs["feature_list_dense_keys"])
    lead = () if batch is False else (batch,)
    for k, t in enumerate(attrs["feature_list_dense_types"]):
        info = lists[len(lists) - n_dense + k]
        lists[len(lists) - n_dense + k] = TensorInfo(info.dtype,
                                                     lead + (None,) + info.shape[len(lead):])
    out += lists
    if batch is not False:
        out += [TensorInfo(_I64, (batch,)) for _ in range(n_dense)]
    return out


def _sequence_check(attrs):
    for prefix in ("context_", "feature_list_"):
        problem = _check_feature_attrs(attrs, prefix)
        if problem:
            return problem
    return None


def _feature_attrs(prefix=""):
    return [(prefix + "sparse_keys", "strings", []), (prefix + "sparse_types", "strings", []),
            (prefix + "dense_keys", "strings", []), (prefix + "dense_types", "strings", []),
            (prefix + "dense_shapes", "strings", [])]


OPS = (
    define("ParseExample", ["serialized", "dense_defaults*"], ["outputs*"],
           _example_kernel, attrs=_feature_attrs(), infer=_example_infer, domain=_D,
           check_attrs=_check_feature_attrs,
           doc="TF's ParseExampleV2: sparse indices, values, shapes, then dense values."),
    define("ParseSequenceExample", ["serialized", "context_dense_defaults*"], ["outputs*"],
           _sequence_kernel,
           attrs=_feature_attrs("context_") + _feature_attrs("feature_list_")
           + [("feature_list_dense_missing_assumed_empty", "strings", [])],
           infer=_sequence_infer, domain=_D, check_attrs=_sequence_check,
           doc="TF's ParseSequenceExampleV2: context outputs, feature-list outputs, "
               "then dense lengths (batched input)."),
)

"""TF1's Example parsing: the feature specs FixedLenFeature, VarLenFeature,
FixedLenSequenceFeature and SparseFeature, and parse_example, parse_single_example,
parse_single_sequence_example and parse_sequence_example, built on the ParseExample and
ParseSequenceExample ops (ops/parsing.py).

Dense features come back as Tensors of their shape (with a leading batch dim for a
batch), VarLen ones as SparseTensors; strings are str (bytes as surrogate escapes), as
elsewhere in onegraph. Bad specs raise ValueError/TypeError when the graph is built;
missing or malformed features raise ExecutionError (TF's InvalidArgumentError) when run.
"""

from __future__ import annotations

import collections

import numpy as np

from ..format import DType
from . import api, api_sparse
from . import graph as _g
from .sparse_tensor import SparseTensor

_DOMAIN = "onegraph"
_NAMES = {DType.FLOAT32: "float32", DType.INT64: "int64", DType.STRING: "string"}


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A dense feature of a fixed shape (TF1's tf.io.FixedLenFeature)."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A dense feature of any number of rows of a fixed shape (TF1's
    tf.io.FixedLenSequenceFeature); rows are padded with default_value in a batch."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any number of values, parsed as a SparseTensor (TF1's
    tf.io.VarLenFeature)."""


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A sparse feature stored as index feature(s) and a value feature, parsed as one
    SparseTensor of dense shape [size] (TF1's tf.io.SparseFeature); index_key and size
    are lists for more than one index dim."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _dtype_name(dtype, key: str) -> str:
    try:
        found = _g.as_dtype(dtype)
    except Exception:
        found = None
    if found not in _NAMES:
        shown = str(getattr(found, "name", dtype)).lower()
        raise TypeError(f"Feature {key!r}: DataType {shown} not in list of allowed values: "
                        f"float32, int64, string")
    return _NAMES[found]


def _shape(shape, key: str) -> list:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, (list, tuple)) or \
            not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
                    for d in shape):
        raise ValueError(f"Feature {key!r}: shape must be a list of ints >= 0 (a fully "
                         f"defined shape), got {shape!r}")
    return [int(d) for d in shape]


def _np_dtype(name: str):
    return {"float32": np.float32, "int64": np.int64, "string": object}[name]


def _default(value, name: str, shape, key: str) -> np.ndarray:
    """A default as an array of the feature's dtype and shape (TF reshapes it).

    Raises:
        ValueError: it has the wrong number of elements.
    """
    arr = np.asarray(value, dtype=_np_dtype(name))
    if arr.size != int(np.prod(shape)):
        raise ValueError(f"Cannot reshape a tensor with {arr.size} elements to shape "
                         f"{list(shape)} ({int(np.prod(shape))} elements) (the default of "
                         f"feature {key!r})")
    return arr.reshape(shape)


def _split(features, what: str, sequence: bool = False) -> dict:
    """Spec dict -> the op's attributes and defaults, keys sorted as TF sorts them.

    Raises:
        ValueError: no features, or a spec TF rejects (names the key).
        TypeError: a key is not a str.
    """
    if features is None:
        raise ValueError(f"Invalid argument: features cannot be None. ({what})")
    if not features:
        raise ValueError(f"{what}: Missing: features was {features!r}.")
    if not isinstance(features, dict):
        raise TypeError(f"{what}: features must be a dict from name to feature spec, got "
                        f"{type(features).__name__}")
    out = {"sparse_keys": [], "sparse_types": [], "dense_keys": [], "dense_types": [],
           "dense_shapes": [], "defaults": [], "missing_ok": [], "combine": []}
    features = _expand_sparse_features(features, out["combine"], sequence, what)
    for key in sorted(features):
        spec = features[key]
        if not isinstance(key, str):
            raise TypeError(f"{what}: feature names must be str, got {key!r}")
        if isinstance(spec, VarLenFeature):
            out["sparse_keys"].append(key)
            out["sparse_types"].append(_dtype_name(spec.dtype, key))
            continue
        if isinstance(spec, FixedLenFeature) and not sequence:
            name, shape = _dtype_name(spec.dtype, key), _shape(spec.shape, key)
            default = np.zeros(0, _np_dtype(name)) if spec.default_value is None else \
                _default(spec.default_value, name, shape, key)
            text = ",".join(str(d) for d in shape)
        elif isinstance(spec, FixedLenSequenceFeature):
            name, shape = _dtype_name(spec.dtype, key), _shape(spec.shape, key)
            if not spec.allow_missing and not sequence:
                raise ValueError(f"Unsupported: FixedLenSequenceFeature requires "
                                 f"allow_missing to be True. (feature '{key}')")
            if spec.allow_missing:
                out["missing_ok"].append(key)
            default = np.zeros(0, _np_dtype(name)) if spec.default_value is None else \
                np.asarray(spec.default_value, _np_dtype(name)).reshape(-1)[:1]
            text = ",".join(str(d) for d in [-1] + shape)
        else:
            raise ValueError(f"Unsupported {type(spec).__name__} {spec} for key '{key}' "
                             f"({what})")
        out["dense_keys"].append(key)
        out["dense_types"].append(name)
        out["dense_shapes"].append(text)
        out["defaults"].append(default)
    return out


def _expand_sparse_features(features: dict, combine: list, sequence: bool, what) -> dict:
    """The specs with each SparseFeature replaced by VarLen index and value features
    (TF's parsing does the same); `combine` gets (key, index keys, value key, sizes,
    already_sorted, the keys only the SparseFeatures asked for).

    Raises:
        ValueError: a SparseFeature among sequence features, or a bad index_key/size.
    """
    out = {k: v for k, v in features.items() if not isinstance(v, SparseFeature)}
    extra = set()
    for key, spec in features.items():
        if not isinstance(spec, SparseFeature):
            continue
        if sequence:
            raise ValueError(f"{what}: SparseFeature {key!r} is not supported among "
                             f"sequence features")
        keys = [spec.index_key] if isinstance(spec.index_key, str) else list(spec.index_key)
        sizes = [spec.size] if isinstance(spec.size, (int, np.integer)) else list(spec.size)
        if not keys or len(keys) != len(sizes) or not all(isinstance(k, str) for k in keys):
            raise ValueError(f"SparseFeature {key!r}: index_key and size must name as many "
                             f"index features as sizes, got {spec.index_key!r} and "
                             f"{spec.size!r}")
        for k in keys + [spec.value_key]:
            if k not in features:
                extra.add(k)
        for k in keys:
            out.setdefault(k, VarLenFeature(DType.INT64))
        out.setdefault(spec.value_key, VarLenFeature(spec.dtype))
        combine.append((key, keys, spec.value_key, [int(n) for n in sizes],
                        bool(spec.already_sorted)))
    if combine:
        combine.append(("", [], "", [], sorted(extra)))   # last: the keys to drop
    return out


def _combined(result: dict, combine: list) -> dict:
    """The parsed dict with each SparseFeature built from its index and value parts
    (TF's sparse_merge: index values as the last index dims, sorted unless
    already_sorted) and the parts nobody asked for dropped."""
    if not combine:
        return result
    drop = combine[-1][4]
    out = dict(result)
    for key, keys, value_key, sizes, already_sorted in combine[:-1]:
        ids = [result[k] for k in keys]
        indices = api.concat([ids[0].indices[:, :-1]] +
                             [api.expand_dims(i.values, 1) for i in ids], 1)
        shape = api.concat([ids[0].dense_shape[:-1],
                            api.constant(np.asarray(sizes, np.int64))], 0)
        sp = SparseTensor(indices, result[value_key].values, shape)
        out[key] = sp if already_sorted else api_sparse.reorder(sp)
    for k in drop:
        out.pop(k, None)
    return out


def _check_rank(t, rank_ok, what: str) -> None:
    shape = t.shape
    if t.dtype != DType.STRING:
        raise TypeError(f"{what}: serialized must be a string tensor, got {t.dtype}")
    if shape is not None and len(shape) not in rank_ok:
        raise ValueError(f"{what}: serialized must have rank {' or '.join(map(str, rank_ok))}"
                         f", got shape {list(shape)}")


def _results(outs: list, spec: dict) -> tuple:
    """The op's outputs -> {key: SparseTensor or Tensor}, and the rest of the outputs."""
    s = len(spec["sparse_keys"])
    d = len(spec["dense_keys"])
    result = {}
    for k, key in enumerate(spec["sparse_keys"]):
        result[key] = SparseTensor(outs[k], outs[s + k], outs[2 * s + k])
    for k, key in enumerate(spec["dense_keys"]):
        result[key] = outs[3 * s + k]
    return result, outs[3 * s + d:]


def _attrs(spec: dict, prefix: str = "") -> dict:
    return {prefix + k: list(spec[k]) for k in ("sparse_keys", "sparse_types", "dense_keys",
                                                "dense_types", "dense_shapes")}


def _parse(serialized, features, name, what: str, ranks) -> dict:
    g = _g.get_default_graph()
    spec = _split(features, what)
    ser = g.convert(serialized)
    _check_rank(ser, ranks, what)
    inputs = [ser] + [g.convert(d) for d in spec["defaults"]]
    n = 3 * len(spec["sparse_keys"]) + len(spec["dense_keys"])
    outs = g.op("ParseExample", inputs, _attrs(spec), name=name or "ParseExample",
                domain=_DOMAIN, num_outputs=n)
    result = _results(outs if isinstance(outs, list) else [outs], spec)[0]
    return _combined(result, spec["combine"])


def parse_example(serialized, features, name=None, example_names=None) -> dict:
    """Parse a vector of serialized tf.train.Example protos (TF1's tf.io.parse_example):
    {key: Tensor (batch, *shape) or SparseTensor (indices [N, 2], values, [batch,
    longest])}. example_names is accepted and unused (TF only puts it in messages).

    Raises:
        ValueError: no features, a bad spec, or serialized not a vector.
        TypeError: serialized is not a string tensor.
        (when run) ExecutionError: corrupt bytes, a missing required feature, a type or
            size mismatch (TF's messages).
    """
    return _parse(serialized, features, name, "parse_example", (1,))


def parse_single_example(serialized, features, name=None, example_names=None) -> dict:
    """Parse one serialized tf.train.Example (TF1's tf.io.parse_single_example):
    {key: Tensor of its shape or SparseTensor (indices [N, 1], values, [length])}.

    Raises:
        as parse_example; serialized must be a scalar.
    """
    return _parse(serialized, features, name, "parse_single_example", (0,))


def _parse_sequence(serialized, context_features, sequence_features, name, what, ranks):
    g = _g.get_default_graph()
    if not context_features and not sequence_features:
        raise ValueError(f"{what}: Missing features.")
    ctx = _split(context_features, what) if context_features else None
    seq = _split(sequence_features, what, sequence=True) if sequence_features else None
    empty = {k: [] for k in ("sparse_keys", "sparse_types", "dense_keys", "dense_types",
                             "dense_shapes", "defaults", "missing_ok")}
    ctx, seq = ctx or empty, seq or empty
    for key, shape in zip(seq["dense_keys"], seq["dense_shapes"]):
        if not shape.startswith("-1"):
            raise ValueError(f"{what}: sequence feature {key!r} must be a "
                             f"FixedLenSequenceFeature or VarLenFeature")
    seq = dict(seq, dense_shapes=[s[3:] if s.startswith("-1,") else "" for s in
                                  seq["dense_shapes"]])
    ser = g.convert(serialized)
    _check_rank(ser, ranks, what)
    attrs = dict(_attrs(ctx, "context_"), **_attrs(seq, "feature_list_"))
    attrs["feature_list_dense_missing_assumed_empty"] = list(seq["missing_ok"])
    n_ctx = 3 * len(ctx["sparse_keys"]) + len(ctx["dense_keys"])
    n_seq = 3 * len(seq["sparse_keys"]) + len(seq["dense_keys"])
    n = n_ctx + n_seq + (len(seq["dense_keys"]) if ranks == (1,) else 0)
    outs = g.op("ParseSequenceExample", [ser] + [g.convert(d) for d in ctx["defaults"]],
                attrs, name=name or "ParseSequenceExample", domain=_DOMAIN, num_outputs=n)
    outs = outs if isinstance(outs, list) else [outs]
    context, _ = _results(outs[:n_ctx], ctx)
    lists, lengths = _results(outs[n_ctx:], seq)
    return context, lists, dict(zip(seq["dense_keys"], lengths))


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None) -> tuple:
    """Parse one serialized tf.train.SequenceExample (TF1's
    tf.io.parse_single_sequence_example): (context dict, feature-list dict); dense lists
    are Tensors (steps, *shape), VarLen ones SparseTensors (indices [N, 2]).

    Raises:
        ValueError: no features, a bad spec, or serialized not a scalar.
        TypeError: serialized is not a string tensor.
        (when run) ExecutionError: corrupt bytes, a missing required feature (list), a
            type or size mismatch.
    """
    context, lists, _ = _parse_sequence(serialized, context_features, sequence_features,
                                        name, "parse_single_sequence_example", (0,))
    return context, lists


def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name=None) -> tuple:
    """Parse a vector of serialized SequenceExamples (TF1's tf.io.parse_sequence_example):
    (context dict, feature-list dict, {dense list key: int64 lengths (batch,)}); dense
    lists are padded with zeros to the longest.

    Raises:
        as parse_single_sequence_example; serialized must be a vector.
    """
    return _parse_sequence(serialized, context_features, sequence_features, name,
                           "parse_sequence_example", (1,))


__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "SparseFeature", "VarLenFeature",
           "parse_example", "parse_sequence_example", "parse_single_example",
           "parse_single_sequence_example"]

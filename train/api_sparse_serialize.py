"""TF1's sparse serialization: serialize_sparse, serialize_many_sparse and
deserialize_many_sparse (tf.io.* and their TF1 top-level names), over the ops of
ops/sparse_serialize.py. Serialized parts are TF's TensorProto bytes, so rows TF wrote
deserialize here and the other way round. Only out_type=string is supported (TF's
variant encoding has no onegraph counterpart).
"""

from __future__ import annotations

import numpy as np

from . import graph as _g
from .api_sparse import _sparse
from .sparse_tensor import SparseTensor

_D = "onegraph"
_TYPES = ("float32", "float64", "int32", "uint8", "int16", "int8", "object", "int64", "bool",
          "uint16", "float16", "uint32", "uint64")


def _check_out_type(out_type, what: str) -> None:
    """Raises TypeError unless out_type is string (variant is TF's, not onegraph's)."""
    shown = getattr(out_type, "name", out_type)
    if str(shown).lower().endswith("variant"):
        raise TypeError(f"{what}: out_type=variant is not supported in onegraph; use "
                        f"out_type=og.string")
    try:
        name = _g.as_dtype(out_type).numpy.name
    except (TypeError, ValueError, KeyError):
        name = None
    if name != "object":
        raise TypeError(f"{what}: out_type must be og.string, got {out_type!r}")


def _op(op_type: str, inputs: list, attrs: dict, name, what: str, num_outputs=None):
    _g.check_name(name, what)
    graph = inputs[0].graph
    return graph.op(op_type, inputs, attrs, name=name or what, domain=_D,
                    num_outputs=num_outputs)


def serialize_sparse(sp_input, name=None, out_type=None):
    """A [3] string tensor: the TensorProto bytes of sp_input's indices, values and
    dense_shape (tf.io.serialize_sparse / tf.serialize_sparse).

    Raises:
        TypeError: sp_input is not sparse; out_type is not og.string.
    """
    what = "serialize_sparse"
    _check_out_type(_g.as_dtype("string") if out_type is None else out_type, what)
    sp = _sparse(sp_input, f"{what}: sp_input")
    return _op("SerializeSparse", [sp.indices, sp.values, sp.dense_shape], {}, name, what)


def serialize_many_sparse(sp_input, name=None, out_type=None):
    """An [N, 3] string tensor: row b is serialize_sparse of minibatch entry b of a
    rank >= 2 sp_input (its first index dropped), N = dense_shape[0]
    (tf.io.serialize_many_sparse). Running it with rank < 2 or indices out of row-major
    order raises InvalidArgumentError.

    Raises:
        TypeError: sp_input is not sparse; out_type is not og.string.
        ValueError: sp_input's rank is known and below 2.
    """
    what = "serialize_many_sparse"
    _check_out_type(_g.as_dtype("string") if out_type is None else out_type, what)
    sp = _sparse(sp_input, f"{what}: sp_input")
    rank = sp.dense_shape.shape[0] if sp.dense_shape.shape else None
    if rank is not None and rank < 2:
        raise ValueError(f"{what}: rank of the SparseTensor should be > 1, but is {rank}")
    return _op("SerializeManySparse", [sp.indices, sp.values, sp.dense_shape], {}, name, what)


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None) -> SparseTensor:
    """One SparseTensor from an [N, 3] string tensor of serialized rows: row i's entries
    get leading index i (rows in order, each row's entries as stored), dense_shape is
    [N] + the per-dim maximum of the rows' shapes (tf.io.deserialize_many_sparse).
    `rank` (the result's rank) only sets static shapes. Running it raises
    InvalidArgumentError for N == 0, bytes that are no TensorProto, another dtype, or
    rows of different ranks.

    Raises:
        TypeError: serialized_sparse is not a string tensor; dtype is not supported.
        ShapeError: serialized_sparse's static shape is not [N, 3].
    """
    what = "deserialize_many_sparse"
    g = _g.get_default_graph()
    ser = serialized_sparse if isinstance(serialized_sparse, _g.Tensor) else \
        g.convert(np.asarray(serialized_sparse, dtype=object))
    if ser.dtype.numpy != np.dtype(object):
        raise TypeError(f"{what}: serialized_sparse must be a string tensor, got "
                        f"{ser.dtype.short_name}")
    kind = _g.as_dtype(dtype).numpy.name
    if kind not in _TYPES:
        raise TypeError(f"{what}: dtype {kind} is not supported")
    if rank is not None and (not isinstance(rank, (int, np.integer)) or rank < 1):
        raise ValueError(f"{what}: rank must be a positive int or None, got {rank!r}")
    ind, val, shp = _op("DeserializeManySparse", [ser],
                        {"dtype": kind, "rank": -1 if rank is None else int(rank)},
                        name, what, num_outputs=3)
    return SparseTensor(ind, val, shp)


__all__ = ["deserialize_many_sparse", "serialize_many_sparse", "serialize_sparse"]

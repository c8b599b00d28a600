"""TF1's SparseTensor: a tensor given by the positions and values of its present entries.

A SparseTensor is three tensors of one graph, as in TF1:
- `indices`: int64 (N, rank), the positions of the N present entries;
- `values`: (N,), their values;
- `dense_shape`: int64 (rank,), the shape of the dense tensor it stands for.
The sparse ops (ops/sparse.py) take and give those three tensors; the functions of
train/api_sparse.py wrap them. `Session.run` fetches a SparseTensor as a
SparseTensorValue (three arrays) and takes one (or a 3-tuple) as its feed; each of the
three tensors is also fetched and fed on its own. A SparseTensor is not a Tensor: ops
that want a dense tensor refuse it by name (og.sparse.to_dense makes one).
"""

from __future__ import annotations

import collections

import numpy as np

from ..errors import OneGraphError
from . import graph as _g
from . import partial_shapes
from .tensor_shape import TensorShape

_ONNX_INT64 = 7  # TensorProto.INT64, Cast's `to`

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])
SparseTensorValue.__doc__ = ("The value of a SparseTensor in a run (TF1's "
                             "tf.SparseTensorValue): indices, values, dense_shape arrays.")


class SparseTensor:
    """TF1's tf.SparseTensor(indices, values, dense_shape).

    Args:
        indices: (N, rank) integer tensor or array-like (made int64).
        values: (N,) tensor or array-like.
        dense_shape: (rank,) integer tensor or array-like (made int64).

    Raises:
        TypeError: indices or dense_shape are not integers.
        ValueError: indices is not a matrix, values not a vector, dense_shape not a
            vector, or their known sizes disagree (N, rank).
        OneGraphError: the three belong to different graphs.
    """

    def __init__(self, indices, values, dense_shape):
        g = _graph_of(indices, values, dense_shape)
        with g.as_default():
            self._indices = _int64(g, indices, "indices")
            self._values = g.convert(values)
            self._dense_shape = _int64(g, dense_shape, "dense_shape")
        self._shape_default = None  # sparse_placeholder's static shape
        _check_parts(self._indices.shape, self._values.shape, self._dense_shape.shape)

    @classmethod
    def from_value(cls, sparse_tensor_value):
        """A SparseTensor of constants from a SparseTensorValue (or a SparseTensor,
        returned as it is).

        Raises:
            TypeError: the value is neither.
        """
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        if not isinstance(sparse_tensor_value, SparseTensorValue):
            raise TypeError(f"SparseTensor.from_value: needs a SparseTensorValue, got "
                            f"{type(sparse_tensor_value).__name__}")
        return cls(*sparse_tensor_value)

    # -- parts ------------------------------------------------------------------------

    @property
    def indices(self):
        """The int64 (N, rank) positions of the present entries."""
        return self._indices

    @property
    def values(self):
        """The (N,) values of the present entries."""
        return self._values

    @property
    def dense_shape(self):
        """The int64 (rank,) shape of the dense tensor."""
        return self._dense_shape

    @property
    def dtype(self):
        """The values' dtype."""
        return self._values.dtype

    @property
    def graph(self):
        return self._values.graph

    @property
    def op(self):
        """The op that makes the values (TF1's SparseTensor.op)."""
        return self._values.op

    @property
    def shape(self) -> TensorShape:
        """The static dense shape: the dims of dense_shape known while building."""
        if self._shape_default is not None:
            return self._shape_default
        known = partial_shapes.entries(self.graph, self._dense_shape.tensor_index)
        if known is not None:
            # (entries only the run knows are None, or -1 from a partly known shape)
            return TensorShape([None if d is None or d < 0 else d for d in known])
        rank = self._dense_shape.shape[0] if self._dense_shape.shape else None
        return TensorShape(None if rank is None else [None] * rank)

    def get_shape(self) -> TensorShape:
        """The static dense shape (see `shape`). Never raises."""
        return self.shape

    def eval(self, feed_dict=None, session=None) -> SparseTensorValue:
        """This sparse tensor's value in one run of `session` (default: the default
        session), as TF1's SparseTensor.eval.

        Raises:
            ValueError: no session is given and none is the default.
        """
        return _g._session_for(session, self._values, "SparseTensor.eval").run(
            self, feed_dict)

    def consumers(self) -> list:
        """The ops reading any of the three tensors."""
        seen, out = set(), []
        for t in (self._indices, self._values, self._dense_shape):
            for op in t.consumers():
                if op.node_index not in seen:
                    seen.add(op.node_index)
                    out.append(op)
        return out

    # -- what Session.run and op building do with it -----------------------------------

    def _fetch_components(self):
        """(the three tensors, how their values make a SparseTensorValue)."""
        return ([self._indices, self._values, self._dense_shape],
                lambda values: SparseTensorValue(*values))

    def _feed_components(self, value) -> list:
        """[(tensor, value)] for a feed of this sparse tensor.

        Raises:
            TypeError: value is not a SparseTensorValue or 3-tuple.
        """
        if isinstance(value, SparseTensor):
            raise TypeError("feed of a SparseTensor: the value is a SparseTensor (a graph "
                            "tensor), not a value; feed a SparseTensorValue")
        if not isinstance(value, (tuple, list)) or len(value) != 3:
            raise TypeError(f"feed of a SparseTensor: needs a SparseTensorValue or an "
                            f"(indices, values, dense_shape) tuple, got "
                            f"{type(value).__name__}")
        return list(zip((self._indices, self._values, self._dense_shape), value))

    def _as_graph_tensor(self, graph):
        raise TypeError(f"{self!r} is a SparseTensor, not a Tensor: make it dense with "
                        "og.sparse.to_dense (og.sparse_tensor_to_dense) or use a sparse op")

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._indices!r}, values={self._values!r}, "
                f"dense_shape={self._dense_shape!r})")


def sparse_placeholder(dtype, shape=None, name=None) -> SparseTensor:
    """A SparseTensor of three placeholders, fed with a SparseTensorValue (TF1's
    tf.sparse_placeholder): values (None,) of `dtype`, indices int64 (None, rank) and
    dense_shape int64 (rank,), named name/values, name/indices and name/shape. With a
    known `shape` (a list, None or -1 for unknown dims), dense_shape defaults to it
    (still feedable) and the static shape is it.

    Raises:
        TypeError: dtype names no dtype, or shape is not a list of ints and Nones.
    """
    g = _g.get_default_graph()
    part = (lambda suffix: f"{name}/{suffix}") if name is not None else (lambda suffix: None)
    if shape is None:
        dense_shape = g.placeholder("int64", [None], name=part("shape"))
        static, rank = None, None
    else:
        dims = [None if d is None or d == -1 else int(d) for d in _dims(shape)]
        static, rank = TensorShape(dims), len(dims)
        from .api_extra import placeholder_with_default  # (api_extra imports much)
        default = g.constant(np.array([-1 if d is None else d for d in dims], np.int64),
                             name=part("shape_default"))
        dense_shape = placeholder_with_default(default, [rank], name=part("shape"))
    result = SparseTensor(g.placeholder("int64", [None, rank], name=part("indices")),
                          g.placeholder(dtype, [None], name=part("values")), dense_shape)
    result._shape_default = static
    return result


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """A SparseTensor as it is, a SparseTensorValue as a SparseTensor of constants,
    anything else as a Tensor (TF1's tf.convert_to_tensor_or_sparse_tensor; `name` is
    accepted for TF1's signature).

    Raises:
        TypeError: dtype differs from the sparse tensor's.
    """
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and _g.as_dtype(dtype) != value.dtype:
            raise TypeError(f"Sparse dtype: requested = {_g.as_dtype(dtype).name}, actual = "
                            f"{value.dtype.name}")
        return value
    return _g.get_default_graph().convert(value, dtype=dtype)


# ------------------------------------------------------------------------- helpers

def _graph_of(*parts):
    graphs = {id(p.graph): p.graph for p in parts if hasattr(p, "graph")}
    if len(graphs) > 1:
        raise OneGraphError("SparseTensor: indices, values and dense_shape belong to "
                               "different graphs")
    return next(iter(graphs.values())) if graphs else _g.get_default_graph()


def _int64(g, value, what: str):
    """`value` as an int64 tensor (integer tensors and arrays are cast, as TF1 converts).

    Raises:
        TypeError: it is not integer.
    """
    if not isinstance(value, _g.Tensor):
        array = np.asarray(value)
        value = array.astype(np.int64) if array.dtype.kind in "iu" or not array.size \
            else array
    tensor = g.convert(value)
    kind = tensor.dtype.name.lower()
    if not kind.startswith(("int", "uint")):
        raise TypeError(f"SparseTensor: {what} must be int64, got {kind}")
    if kind != "int64":
        tensor = g.op("Cast", [tensor], {"to": _ONNX_INT64})
    return tensor


def _check_parts(indices, values, dense_shape) -> None:
    for what, shape, rank in (("indices", indices, 2), ("values", values, 1),
                              ("dense_shape", dense_shape, 1)):
        if shape is not None and len(shape) != rank:
            raise ValueError(f"SparseTensor: {what} must have rank {rank}, got shape "
                             f"{tuple(shape)}")
    if indices is not None and values is not None and None not in (indices[0], values[0]) \
            and indices[0] != values[0]:
        raise ValueError(f"SparseTensor: indices hold {indices[0]} entries, values "
                         f"{values[0]}")
    if indices is not None and dense_shape is not None and \
            None not in (indices[1], dense_shape[0]) and indices[1] != dense_shape[0]:
        raise ValueError(f"SparseTensor: indices have rank {indices[1]}, dense_shape "
                         f"{dense_shape[0]} dims")


def _dims(shape) -> list:
    if isinstance(shape, TensorShape):
        return list(shape.as_list())
    if isinstance(shape, (list, tuple)):
        return list(shape)
    raise TypeError(f"sparse_placeholder: shape must be a list, got {type(shape).__name__}")


__all__ = ["SparseTensor", "SparseTensorValue", "convert_to_tensor_or_sparse_tensor",
           "sparse_placeholder"]


def sparse_argument(value, what: str) -> "SparseTensor":
    """value as a SparseTensor (a SparseTensorValue made constant): the sparse
    argument of a TF sparse function.

    Raises:
        TypeError: it is neither (the message starts with `what`).
    """
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    if not isinstance(value, SparseTensor):
        raise TypeError(f"{what}: needs a SparseTensor, got {type(value).__name__}")
    return value

"""TF1 top-level names that are small compositions or aliases of og's functions:
unravel_index, clip_by_average_norm,
is_non_decreasing / is_strictly_increasing / is_numeric_tensor, get_static_value,
tensor_scatter_add / sub / update, accumulate_n, sparse_matmul, py_function,
initialize_all_tables, get_logger, colocate_with, VERSION, and the eager-mode switches
of TF1 programs (disable_eager_execution, disable_v2_behavior, executing_eagerly).
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import __version__
from ..compat.v1 import (disable_eager_execution, disable_v2_behavior,  # noqa: F401
                         enable_eager_execution, executing_eagerly)
from ..format import DType
from . import api, api_compat, api_extra, api_linalg, api_math

from .api_py_func import py_func
from .graph import Tensor
from .namespaces import _NUMERIC, is_non_decreasing, is_strictly_increasing  # noqa: F401
from .lookup import tables_initializer
from .tf_logging import get_logger  # noqa: F401 - TF's tf.get_logger

VERSION = __version__

__all__ = ["VERSION", "accumulate_n", "clip_by_average_norm", "colocate_with",
           "disable_eager_execution", "disable_v2_behavior", "enable_eager_execution",
           "executing_eagerly", "get_logger", "get_static_value", "initialize_all_tables",
           "is_non_decreasing", "is_numeric_tensor", "is_strictly_increasing", "py_function",
           "sparse_matmul", "tensor_scatter_add", "tensor_scatter_sub",
           "tensor_scatter_update", "unravel_index"]

def unravel_index(indices, dims, name=None) -> Tensor:
    """The coordinates in an array of shape `dims` of flat `indices` (a scalar or a
    vector; TF's tf.unravel_index): shape [len(dims)] + indices' shape, the indices'
    dtype.

    Raises:
        TypeError: indices or dims is not an int32/int64 tensor or value.
        ValueError: indices has rank 2 or more (TF's message).
    """
    idx, shape = api._t(indices), api._t(dims)
    for t, what in ((idx, "indices"), (shape, "dims")):
        if t.dtype not in (DType.INT32, DType.INT64):
            raise TypeError(f"unravel_index: {what} must be int32 or int64, got "
                            f"{t.dtype.short_name}")
    if idx.shape is not None and len(idx.shape) > 1:
        raise ValueError(f'The indices can only be scalar or vector, got '
                         f'"[{",".join("?" if d is None else str(d) for d in idx.shape)}]"')
    shape = api.cast(shape, idx.dtype)
    # strides[k] = prod(dims[k+1:]): an exclusive cumulative product from the end
    strides = api_linalg.cumprod(shape, exclusive=True, reverse=True)
    flat = api.expand_dims(idx, 0)
    lead = api.concat([api.shape(strides), api.ones_like(api.shape(idx))], 0)
    strides, shape = api.reshape(strides, lead), api.reshape(shape, lead)
    return api.identity(api_math.floormod(api_math.floordiv(flat, strides), shape),
                        name=name)


def clip_by_average_norm(t, clip_norm, name=None) -> Tensor:
    """t scaled so that its L2 norm divided by its number of elements is at most
    clip_norm (TF's tf.clip_by_average_norm).

    Raises:
        TypeError / ShapeError: t is not a float tensor, or clip_norm not a scalar.
    """
    t = api._t(t)
    n = api.cast(api_extra.size(t), t.dtype)
    norm_inv = api.rsqrt(api.reduce_sum(t * t))
    clip = api.cast(api._t(clip_norm), t.dtype)
    scale = clip * api.minimum(norm_inv * n, 1.0 / clip)
    return api.identity(t * scale, name=name)


def is_numeric_tensor(tensor) -> bool:
    """Whether tensor is a Tensor of a numeric dtype (TF's tf.is_numeric_tensor).
    Never raises."""
    return isinstance(tensor, Tensor) and tensor.dtype in _NUMERIC


def get_static_value(tensor, partial: bool = False):
    """The value of tensor if it is known while building (a constant, or what folds
    from constants), else None (TF's tf.get_static_value). Never raises."""
    if not isinstance(tensor, Tensor):
        return np.asarray(tensor)
    value = tensor.graph.static_value(tensor)
    return None if value is None else np.array(value)


def tensor_scatter_add(tensor, indices, updates, name=None) -> Tensor:
    """TF1's name of og.tensor_scatter_nd_add. Raises as it."""
    return api_compat.tensor_scatter_nd_add(tensor, indices, updates, name=name)


def tensor_scatter_sub(tensor, indices, updates, name=None) -> Tensor:
    """TF1's name of og.tensor_scatter_nd_sub. Raises as it."""
    return api_compat.tensor_scatter_nd_sub(tensor, indices, updates, name=name)


def tensor_scatter_update(tensor, indices, updates, name=None) -> Tensor:
    """TF1's name of og.tensor_scatter_nd_update. Raises as it."""
    return api_compat.tensor_scatter_nd_update(tensor, indices, updates, name=name)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None) -> Tensor:
    """The elementwise sum of inputs (TF1's tf.accumulate_n; og.add_n). Raises as
    og.add_n."""
    return api.add_n(list(inputs), name=name)


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False,
                  b_is_sparse=False, name=None) -> Tensor:
    """a @ b (TF1's tf.sparse_matmul: the sparsity hints change nothing here). Raises
    as og.matmul."""
    return api.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b, name=name)


def py_function(func, inp, Tout, name=None):
    """A node calling func on its inputs' values (TF's tf.py_function). onegraph has
    no eager tensors: func gets numpy arrays, as og.py_func's does. Raises as
    og.py_func."""
    return py_func(func, inp, Tout, stateful=True, name=name)


def initialize_all_tables(name="init_all_tables"):
    """TF1's old name of og.tables_initializer. Never raises."""
    return tables_initializer(name)


@contextlib.contextmanager
def colocate_with(op, ignore_existing=False):
    """A block whose ops TF would place with op's; onegraph runs on one device, so
    it changes nothing. Never raises."""
    yield

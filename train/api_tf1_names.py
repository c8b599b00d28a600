"""More TF1 top-level names: space_to_batch, required_space_to_batch_paddings,
matrix_square_root, batch_scatter_update, dimension_at_index, get_seed,
grad_pass_through, guarantee_const, init_scope, container, recompute_grad and the
conv2d_backprop_*_v2 forms, each written with og's own functions."""

from __future__ import annotations

import contextlib

import numpy as np

from ..format import DType
from . import api, api_compat, api_extra, api_linalg_more, api_math, nn_more
from . import graph as _g
from .api_extra import _DEFAULT_GRAPH_SEED
from .graph import Tensor
from .tensor_shape import Dimension, TensorShape

__all__ = ["batch_scatter_update", "container", "conv2d_backprop_filter_v2",
           "conv2d_backprop_input_v2", "dimension_at_index", "get_seed", "grad_pass_through",
           "guarantee_const", "init_scope", "matrix_square_root", "recompute_grad",
           "required_space_to_batch_paddings", "space_to_batch"]

_MAXINT32 = 2 ** 31 - 1


def space_to_batch(input, paddings, block_size=None, name=None,  # noqa: A002 - TF's
                   block_shape=None) -> Tensor:
    """TF1's tf.space_to_batch: space_to_batch_nd over the two spatial dims of NHWC
    input with block_size (or block_shape, TF 2's name) in both.

    Raises:
        TypeError: neither or both of block_size and block_shape are given.
        (and what og.space_to_batch_nd raises)
    """
    if (block_size is None) == (block_shape is None):
        raise TypeError("space_to_batch: give block_size (or block_shape), one of them")
    size = block_size if block_size is not None else block_shape
    return api_compat.space_to_batch_nd(input, [size, size], paddings, name=name)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None,
                                     name=None) -> tuple:
    """(paddings, crops) making input_shape + base_paddings a multiple of block_shape
    for space_to_batch_nd, and the crops that undo the extra padding after
    batch_to_space_nd (TF1's tf.required_space_to_batch_paddings), as int32 tensors.

    Raises:
        ValueError: block_shape's length is not known while building.
    """
    g = _g.get_default_graph()
    shape = api.cast(g.convert(input_shape), DType.INT32)
    block = api.cast(g.convert(block_shape), DType.INT32)
    n = block.shape[0] if block.shape is not None and len(block.shape) == 1 else None
    if n is None:
        raise ValueError("required_space_to_batch_paddings: block_shape must be a vector "
                         "whose length is known while building")
    base = (api.zeros([n, 2], DType.INT32) if base_paddings is None
            else api.cast(g.convert(base_paddings), DType.INT32))
    start, end = base[:, 0], base[:, 1]
    full = shape + start + end
    extra = api_math.floormod(block - api_math.floormod(full, block), block)
    with g.name_scope(name or "required_space_to_batch_paddings"):
        paddings = api.stack([start, end + extra], axis=1, name="paddings")
        crops = api.stack([api.zeros_like(extra), extra], axis=1, name="crops")
    return paddings, crops


def matrix_square_root(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """The principal square root of each square matrix (TF1's tf.matrix_square_root:
    og.linalg.sqrtm)."""
    return api_linalg_more.sqrtm(input, name=name)


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    """ref[b..., indices[b..., i]] = updates[b..., i] for every batch position b (TF1's
    tf.batch_scatter_update: scatter_update along the first dim after the batch dims);
    returns the updated variable's value.

    Raises:
        ValueError: the rank of indices is not known while building, or ref's rank is
            below it.
    """
    del use_locking    # one update at a time in onegraph's runtime
    idx = _g.convert_to_tensor(indices)
    rank = len(idx.shape) if idx.shape is not None else None
    if rank is None or rank < 1:
        raise ValueError("batch_scatter_update: indices must have a rank known while "
                         "building, at least 1")
    if ref.shape is not None and len(ref.shape) < rank:
        raise ValueError(f"batch_scatter_update: ref's rank {len(ref.shape)} is below "
                         f"indices' rank {rank}")
    idx = api.cast(idx, DType.INT64)
    dims = api.shape(idx)
    coords = []
    for axis in range(rank - 1):   # the batch coordinate of every index along this dim
        along = api_extra.range(np.int64(0), dims[axis], np.int64(1))
        shape = [1] * rank
        shape[axis] = -1
        coords.append(api_math.broadcast_to(api.reshape(along, shape), dims))
    nd = api.stack(coords + [idx], axis=-1)
    from .state_ops import scatter_nd_update   # (state_ops builds on much of og)

    return scatter_nd_update(ref, nd, updates, name=name)


def dimension_at_index(shape, index) -> Dimension:
    """Dimension `index` of a shape (TF1's tf.compat.dimension_at_index): an unknown
    Dimension when the rank is unknown. Never raises but IndexError for a known rank."""
    shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    if shape.dims is None:
        return Dimension(None)
    return shape.dims[index]


def get_seed(op_seed):
    """(graph seed, op seed) of a random op by TF1's rules (tf.compat.v1.get_seed): with
    a graph seed, the op seed or the graph's op count; without one, TF's default graph
    seed with the op seed, or (None, None); each reduced mod 2**31 - 1, and (0, 0)
    becomes (0, 2**31 - 1). Never raises."""
    g = _g.get_default_graph()
    if g.seed is not None:
        if op_seed is None:
            op_seed = len(g.ir_graph.nodes)
        seeds = (int(g.seed) % _MAXINT32, int(op_seed) % _MAXINT32)
    elif op_seed is not None:
        seeds = (_DEFAULT_GRAPH_SEED, int(op_seed) % _MAXINT32)
    else:
        return None, None
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


def grad_pass_through(f):
    """f with an identity gradient (TF's tf.grad_pass_through): y = f(x) forward, dy
    passed to x unchanged backward (x + stop_gradient(f(x) - x)). Never raises."""
    def wrapped(x):
        x = _g.convert_to_tensor(x)
        return x + api.stop_gradient(f(x) - x)
    return wrapped


def guarantee_const(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """input, which the caller guarantees constant over the run (TF1's
    tf.guarantee_const; an Identity in onegraph). Never raises."""
    return api.identity(input, name=name)


@contextlib.contextmanager
def init_scope():
    """Build the block outside the current control dependencies and control-flow
    contexts (TF1's tf.init_scope, for ops that initialize state); the name scope is
    kept. Never raises."""
    g = _g.get_default_graph()
    saved = g._cf_stack
    g._cf_stack = []
    try:
        with g.control_dependencies(None):
            yield
    finally:
        g._cf_stack = saved


@contextlib.contextmanager
def container(container_name):
    """TF1's tf.container: the resource container of the block's stateful ops; one
    process holds onegraph's state, so it only checks the name. Yields the name.

    Raises:
        TypeError: container_name is not a str.
    """
    if not isinstance(container_name, str):
        raise TypeError(f"container: container_name must be a str, got "
                        f"{type(container_name).__name__}")
    yield container_name


def recompute_grad(f):
    """f, whose activations TF recomputes in the backward pass to save memory (TF's
    tf.recompute_grad); onegraph keeps them, so the values and gradients are f's.
    Never raises."""
    return f


def conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding,  # noqa: A002
                              use_cudnn_on_gpu=True, data_format="NHWC",
                              dilations=(1, 1, 1, 1), name=None) -> Tensor:
    """conv2d_backprop_filter with the filter itself given instead of its sizes (TF's
    Conv2DBackpropFilterV2)."""
    return nn_more.conv2d_backprop_filter(input, api.shape(filter), out_backprop, strides,
                                         padding, use_cudnn_on_gpu, data_format, dilations,
                                         name)


def conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding,  # noqa: A002
                             use_cudnn_on_gpu=True, data_format="NHWC",
                             dilations=(1, 1, 1, 1), name=None) -> Tensor:
    """conv2d_backprop_input with the input itself given instead of its sizes (TF's
    Conv2DBackpropInputV2)."""
    return nn_more.conv2d_backprop_input(api.shape(input), filter, out_backprop, strides,
                                        padding, use_cudnn_on_gpu, data_format, dilations,
                                        name)

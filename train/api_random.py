"""TF1's random sampling beyond the distributions: og.random_crop, og.random_shuffle
and og.multinomial, with og.random_uniform's seeding rules (api_extra._op_seed).
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_math
from . import graph as _g
from . import partial_shapes
from .api import _int_arg, _t
from .api_extra import _SEEDED_DOC, _dims_slice, _draw, _op_seed, random_uniform
from .graph import Tensor, check_seed
from .packing import holds_tensor, int64_tensor

__all__ = ["multinomial", "random_crop", "random_shuffle"]


def random_crop(value, size, seed=None, name=None) -> Tensor:
    """A block of shape `size` (ints, scalar tensors, or a 1-D integer tensor) cut
    from `value` at a uniformly random offset on every axis, as tf.random_crop; a size
    larger than value's is refused (when the graph runs, if only then known).

    {seeds}

    Raises:
        ShapeError: value's rank is unknown, size has another length, or a known size
            exceeds value's.
        TypeError: size is not ints or tensors, or seed not an int.
    """
    x = _t(value)
    _g.check_name(name, "random_crop")
    check_seed(seed, "random_crop")
    if x.shape is None:
        raise ShapeError("random_crop: value needs a known rank")
    rank = len(x.shape)
    g = x.graph
    if holds_tensor(size):
        size_t = int64_tensor(size, "random_crop: size", g)
        if size_t.shape is not None and tuple(size_t.shape) not in ((rank,), (None,)):
            raise ShapeError(f"random_crop: size must have {rank} entries, got shape "
                             f"{list(size_t.shape)}")
    else:
        sizes = api._int_list(size, "random_crop: size")
        if len(sizes) != rank:
            raise ShapeError(f"random_crop: size {sizes} must have one entry per axis of "
                             f"{x.name!r} of shape {list(x.shape)}")
        for k, (s, d) in enumerate(zip(sizes, x.shape)):
            if s < 0 or (d is not None and s > d):
                raise ShapeError(f"random_crop: size {sizes} does not fit {x.name!r} of "
                                 f"shape {list(x.shape)} (axis {k})")
        size_t = g.constant(np.asarray(sizes, np.int64))
    with g.name_scope(name or "random_crop"):
        room = _dims_slice(x, 0, None) - size_t + np.int64(1)   # offsets in [0, room)
        room = api_math._checked(room, api.greater_equal(room, np.int64(1)),
                                 "random_crop: size must not exceed the value's shape")
        u = random_uniform([rank], 0.0, 1.0, dtype=DType.FLOAT64, seed=seed)
        offset = api.cast(api.floor(u * api.cast(room, DType.FLOAT64)), DType.INT64)
        y = api.identity(api_math.slice(x, offset, size_t), name="value")
    # the crop's shape is `size`, as far as it is known while building (as TF's)
    dims = partial_shapes.entries(g, size_t.tensor_index)
    if dims is not None and len(dims) == rank:
        y.set_shape([None if d is None or d < 0 else d for d in dims])
    return y


def random_shuffle(value, seed=None, name=None) -> Tensor:
    """value with its first axis in a uniformly random order (tf.random_shuffle): the
    rows sorted by random keys.

    {seeds}

    Raises:
        ShapeError: value is a scalar.
        TypeError: seed is not an int.
    """
    x = _t(value)
    _g.check_name(name, "random_shuffle")
    check_seed(seed, "random_shuffle")
    if x.shape is not None and len(x.shape) == 0:
        raise ShapeError(f"random_shuffle: value must have rank >= 1, got the scalar "
                         f"{x.name!r}")
    g = x.graph
    with g.name_scope(name or "random_shuffle") as scope:
        n = _dims_slice(x, 0, 1)
        keys = _draw(g, "RandomUniform", (None, n), DType.FLOAT64, {"low": 0.0, "high": 1.0},
                     _op_seed(g, seed, scope, "random_shuffle"))
        order = g.op("TopK", [keys, n], {"axis": 0, "largest": 1, "sorted": 1},
                     num_outputs=2)[1]
        return api.gather(x, order, name="value")


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=DType.INT64
                ) -> Tensor:
    """num_samples class indices per row of logits (batch, classes), drawn with
    probabilities softmax(logits) (tf.multinomial; ONNX Multinomial).

    {seeds}

    Raises:
        ShapeError: logits are not 2-D floats.
        TypeError: num_samples is not an int >= 0, output_dtype not int32/int64, or
            seed not an int.
    """
    x = _t(logits)
    _g.check_name(name, "multinomial")
    check_seed(seed, "multinomial")
    if x.shape is not None and len(x.shape) != 2 or x.dtype not in (
            DType.FLOAT16, DType.FLOAT32, DType.FLOAT64):
        raise ShapeError(f"multinomial: logits must be 2-D floats (batch, classes), got "
                         f"{x.dtype.short_name} of shape {x.shape}")
    count = _int_arg(num_samples, "multinomial: num_samples")
    if count < 0:
        raise TypeError(f"multinomial: num_samples must be >= 0, got {count}")
    out = _g.as_dtype(output_dtype)
    if out not in (DType.INT32, DType.INT64):
        raise TypeError(f"multinomial: output_dtype must be int32 or int64, got "
                        f"{out.short_name}")
    g = x.graph
    with g.name_scope(name or "multinomial") as scope:
        attrs = {"sample_size": count, "dtype": api.onnx_type(out)}
        op_seed = _op_seed(g, seed, scope, "multinomial")
        if op_seed is not None:
            attrs["seed"] = op_seed
        return g.op("Multinomial", [x], attrs, name="value")


for _fn in (random_crop, random_shuffle, multinomial):
    _fn.__doc__ = _fn.__doc__.replace("{seeds}", _SEEDED_DOC)

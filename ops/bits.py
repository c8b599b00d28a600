"""Bit-level ops of the `onegraph` domain that ONNX lacks.

`Bitcast` is TF's tf.bitcast: the bytes of the input (little-endian, as numpy's
`view` on the hosts onegraph runs on) read as another numeric type. Unlike ONNX's
BitCast (same width only) the widths may differ: a wider input gains a last dim of
the width ratio, a narrower one must have that ratio as its last dim, which goes.
There is no gradient (TF has none).
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .elementwise import onnx_type_to_numpy
from .registry import TensorInfo, define

DOMAIN = "onegraph"


def _target(attrs) -> np.dtype:
    """The numpy dtype of the `to` attribute.

    Raises:
        OpAttributeError: it names no type, or a string or bool type.
    """
    dtype = onnx_type_to_numpy(attrs["to"])
    if dtype.kind in "OUSb":
        raise OpAttributeError(f"Bitcast: cannot bit-cast to {dtype}")
    return dtype


def _out_shape(shape, src: np.dtype, dst: np.dtype):
    """TF's bitcast shape for `shape` (None = unknown rank, None dims unknown).

    Raises:
        ShapeError: a narrower input is a scalar or its known last dim is not the ratio.
    """
    if shape is None or src.itemsize == dst.itemsize:
        return shape
    if src.itemsize > dst.itemsize:
        return tuple(shape) + (src.itemsize // dst.itemsize,)
    ratio = dst.itemsize // src.itemsize
    if not shape or (shape[-1] is not None and shape[-1] != ratio):
        raise ShapeError(f"Bitcast: an input of {src} cast to {dst} needs a last dim of "
                         f"{ratio}, got shape {list(shape)}")
    return tuple(shape[:-1])


def _bitcast_kernel(inputs, attrs, ctx):
    """The input's bytes read as `to` (little-endian), shaped as TF's bitcast."""
    x = np.asarray(inputs[0])
    dtype = _target(attrs)
    if x.dtype.kind in "OUSb":
        raise OpAttributeError(f"Bitcast: cannot bit-cast a {x.dtype} tensor")
    shape = _out_shape(x.shape, x.dtype, dtype)
    flat = np.ascontiguousarray(x).reshape(-1)
    if not np.little_endian:  # pragma: no cover - big-endian hosts
        return (flat.byteswap().view(dtype).byteswap().reshape(shape),)
    return (flat.view(dtype).reshape(shape),)


def _bitcast_infer(attrs, inputs):
    try:
        dtype = _target(attrs)
    except OpAttributeError:
        return [TensorInfo(None, None)]
    src = inputs[0].dtype
    if src is None or np.dtype(src).kind in "OUSb":
        return [TensorInfo(dtype, None)]
    return [TensorInfo(dtype, _out_shape(inputs[0].shape, np.dtype(src), dtype))]


OPS = (
    define("Bitcast", ["input"], ["output"], _bitcast_kernel, attrs=[("to", "int")],
           infer=_bitcast_infer, domain=DOMAIN,
           doc="TF's bitcast: the input's bytes as another numeric type (widths may "
               "differ: a last dim of the ratio is added or removed)"),
)

"""More of TF1's names: histogram_fixed_width (and _bins), bitcast, the og.bitwise,
og.dtypes and og.quantization namespaces (with TF1's top-level fake_quant_* aliases),
broadcast_dynamic_shape / broadcast_static_shape, extract_volume_patches,
batch_to_space and ensure_shape.

Names, argument order and defaults are tf.compat.v1's. Each function is built from
registered ONNX-semantics ops (ScatterElements, Slice, Concat, BitwiseAnd, BitShift,
Where, ...) so graphs using them export, except bitcast between types of different
widths, which is the `onegraph`-domain Bitcast op (ops/bits.py). Gradients are TF's:
extract_volume_patches and batch_to_space get theirs from their Slice / Reshape ops,
fake quantization passes the gradient straight through inside its nudged range, and
bitcast, the bit operations and the histograms have none. Bad arguments are refused
while building with a message naming the function; what only the run can tell (an
empty value range, incompatible run-time shapes) is checked when the graph runs by an
og.Assert (ExecutionError naming the function), which an ONNX export leaves out.
"""

from __future__ import annotations


import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api, api_compat, api_extra, api_math
from . import graph as _g
from .api import _brief, _t
from .api_extra import _dtype_arg, _i64
from .api_math import _checked
from .graph import Tensor
from .module_namespace import namespace
from .tensor_shape import TensorShape

int32, int64, float32, float64 = DType.INT32, DType.INT64, DType.FLOAT32, DType.FLOAT64
_SIGNED = (DType.INT8, DType.INT16, DType.INT32, DType.INT64)
_UNSIGNED = (DType.UINT8, DType.UINT16, DType.UINT32, DType.UINT64)
_INTS = _SIGNED + _UNSIGNED
_REALS = (DType.FLOAT16, DType.BFLOAT16, float32, float64)


def _finish(out: Tensor, name) -> Tensor:
    """out, as an Identity named `name` when a name is asked for."""
    return out if name is None else api.identity(out, name=name)


def _typed(x, allowed: tuple, what: str) -> Tensor:
    """x as a tensor of one of the `allowed` dtypes.

    Raises:
        TypeError: it is of another dtype (names `what`).
    """
    t = _t(x)
    if t.dtype not in allowed:
        names = ", ".join(d.short_name for d in allowed)
        raise TypeError(f"{what} must be a tensor of {names}; got {t.dtype.short_name}")
    return t


# --------------------------------------------------------------------------- histograms

def _histogram_args(values, value_range, nbins, what: str) -> tuple:
    """(values, lo, hi, nbins): values a numeric tensor, lo and hi scalars of its
    dtype (a tensor range checked lo < hi when the graph runs), nbins an int.

    Raises:
        TypeError: values is not int32/int64/float32/float64, nbins is not an int, or a
            value_range tensor is of another dtype than values.
        ValueError: nbins < 1, or a Python value_range is not 2 numbers lo < hi.
        ShapeError: a value_range tensor's known shape is not [2].
    """
    x = _typed(values, (int32, int64, float32, float64), f"{what}: values")
    if isinstance(nbins, (bool, np.bool_)) or not isinstance(nbins, (int, np.integer)):
        raise TypeError(f"{what}: nbins must be an int, got {_brief(nbins)}")
    if nbins < 1:
        raise ValueError(f"{what}: nbins must be >= 1, got {nbins}")
    if _g._is_symbolic(value_range):
        r = _t(value_range)
        if r.dtype != x.dtype:
            raise TypeError(f"{what}: value_range must be {x.dtype.short_name} as values, "
                            f"got {r.dtype.short_name}")
        if r.shape is not None and tuple(r.shape) not in ((2,), (None,)):
            raise ShapeError(f"{what}: value_range must have shape [2], got {list(r.shape)}")
        ok = api.less(r[0], r[1])
        r = _checked(r, ok, f"{what}: value_range must satisfy value_range[0] < "
                     "value_range[1]")
        return x, r[0], r[1], int(nbins)
    pair = np.asarray(value_range, dtype=x.dtype.numpy)
    if pair.shape != (2,) or not pair[0] < pair[1]:
        raise ValueError(f"{what}: value_range must be [lo, hi] with lo < hi, got "
                         f"{_brief(value_range)}")
    g = x.graph
    return x, g.constant(pair[0]), g.constant(pair[1]), int(nbins)


def _fixed_width_bins(x: Tensor, lo: Tensor, hi: Tensor, nbins: int) -> Tensor:
    """TF's HistogramFixedWidth kernel's bin of each value (int64, x's shape): in
    float64, (max(x, lo) - lo) / ((hi - lo) / nbins), at most nbins - 1, truncated."""
    step = api.cast(hi - lo, float64) / float(nbins)
    shifted = api.cast(api.maximum(x, lo) - lo, float64)
    return api.cast(api.minimum(shifted / step, float(nbins - 1)), int64)


def histogram_fixed_width(values, value_range, nbins=100, dtype=int32, name=None) -> Tensor:
    """TF's tf.histogram_fixed_width: how many of `values` (any shape) fall in each of
    nbins equal-width bins over value_range [lo, hi]; values below lo count in bin 0,
    those at or above hi in the last. A 1-D tensor of shape (nbins,) and `dtype`.
    No gradient, as in TF.

    Raises:
        TypeError: values is not int32/int64/float32/float64, nbins not an int, dtype
            not int32/int64, a value_range tensor not of values' dtype, or name not a
            str.
        ValueError: nbins < 1, or a Python value_range is not [lo, hi] with lo < hi.
        ShapeError: a value_range tensor's known shape is not [2].
        ExecutionError: when the graph runs, a value_range tensor has lo >= hi, or
            values hold a NaN.
    """
    what = "histogram_fixed_width"
    _g.check_name(name, what)
    out = _dtype_arg(dtype, (int32, int64), f"{what}: dtype")
    x, lo, hi, n = _histogram_args(values, value_range, nbins, what)
    g = x.graph
    if x.dtype.numpy.kind == "f":   # a NaN has no bin: TF's kernel refuses it
        x = _checked(x, api.logical_not(api_math.is_nan(x)),
                     f"{what}: values must not contain NaN")
    index = api.reshape(_fixed_width_bins(x, lo, hi, n), [-1])
    ones = api.ones_like(index, dtype=out)
    zeros = g.constant(np.zeros(n, out.numpy))
    counts = g.op("ScatterElements", [zeros, index, ones], {"axis": 0, "reduction": "add"})
    counts.set_shape([n])
    return _finish(counts, name)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=int32,
                               name=None) -> Tensor:
    """TF's tf.histogram_fixed_width_bins: the bin index of each of `values` (same
    shape) among nbins equal-width bins over value_range [lo, hi], as TF computes it:
    floor(nbins * (values - lo) / (hi - lo)) clipped to [0, nbins - 1] (in values'
    float dtype; integer values in float64). No gradient, as in TF.

    Raises:
        TypeError: values is not int32/int64/float32/float64, nbins not an int, dtype
            not int32/int64, a value_range tensor not of values' dtype, or name not a
            str.
        ValueError: nbins < 1, or a Python value_range is not [lo, hi] with lo < hi.
        ShapeError: a value_range tensor's known shape is not [2].
        ExecutionError: when the graph runs, a value_range tensor has lo >= hi.
    """
    what = "histogram_fixed_width_bins"
    _g.check_name(name, what)
    out = _dtype_arg(dtype, (int32, int64), f"{what}: dtype")
    x, lo, hi, n = _histogram_args(values, value_range, nbins, what)
    if x.dtype in (int32, int64):
        x, lo, hi = (api.cast(t, float64) for t in (x, lo, hi))
    scaled = (x - lo) / (hi - lo)
    index = api.floor(scaled * np.asarray(n, x.dtype.numpy))
    index = api.clip_by_value(index, np.asarray(0, x.dtype.numpy),
                              np.asarray(n - 1, x.dtype.numpy))
    return api.stop_gradient(api.cast(index, out), name=name)


# --------------------------------------------------------------------------- bitcast

def bitcast(input, type, name=None) -> Tensor:  # noqa: A002 - TF's names
    """TF's tf.bitcast: input's bytes read as `type` (little-endian, numpy's `view`).
    Of equal widths the shape stays; a wider input gains a last dim of the width
    ratio; a narrower one must have the ratio as its last dim, which goes (ONNX
    BitCast for equal widths, else the onegraph-domain Bitcast op). No gradient:
    og.gradients through it are None, as TF's.

    Raises:
        TypeError: input or type is not a numeric type (bool and strings are not),
            or name is not a str.
        OneGraphError: type names no dtype.
        ShapeError: a narrower input is a scalar or its known last dim is not the
            width ratio (a last dim only the run knows fails the run).
    """
    what = "bitcast"
    _g.check_name(name, what)
    numeric = _INTS + _REALS
    x = _typed(input, numeric, f"{what}: input")
    out = _dtype_arg(type, numeric, f"{what}: type")
    if out == x.dtype:
        return api.identity(x, name=name)
    g = x.graph
    if out.itemsize == x.dtype.itemsize:
        cast = g.op("BitCast", [x], {"to": api.onnx_type(out)})
    else:
        cast = g.op("Bitcast", [x], {"to": api.onnx_type(out)}, domain=_g.DOMAIN)
    # TF's Bitcast is not differentiable: its gradients are None, not an error
    return api.stop_gradient(cast, name=name)


# --------------------------------------------------------------------------- bitwise

def _int_pair(x, y, what: str) -> tuple:
    """x and y as integer tensors of one dtype.

    Raises:
        TypeError: they are not integers of one dtype.
    """
    try:
        a, b = api._pair(x, y, what)
    except ShapeError as e:
        raise TypeError(f"{what}: x and y must be integers of one dtype ({e})") from None
    _typed(a, _INTS, f"{what}: x")
    _typed(b, (a.dtype,), f"{what}: y")
    return a, b


def _bitwise(op_type: str, what: str):
    def fn(x, y, name=None) -> Tensor:
        _g.check_name(name, what)
        a, b = _int_pair(x, y, what)
        return a.graph.op(op_type, [a, b], name=name)

    fn.__name__ = what
    fn.__doc__ = (f"Elementwise {what} of integer tensors x and y (TF's "
                  f"tf.bitwise.{what}; ONNX {op_type}), with broadcasting.\n\n    Raises:\n"
                  "        TypeError: x and y are not integers of one dtype, or name is not "
                  "a str.\n    ")
    return fn


bitwise_and = _bitwise("BitwiseAnd", "bitwise_and")
bitwise_or = _bitwise("BitwiseOr", "bitwise_or")
bitwise_xor = _bitwise("BitwiseXor", "bitwise_xor")


def invert(x, name=None) -> Tensor:
    """~x of an integer tensor, every bit flipped (tf.bitwise.invert; ONNX BitwiseNot).

    Raises:
        TypeError: x is not an integer tensor, or name is not a str.
    """
    _g.check_name(name, "invert")
    t = _typed(x, _INTS, "invert: x")
    return t.graph.op("BitwiseNot", [t], name=name)


def _shift_amount(y: Tensor, bits: int) -> Tensor:
    """y clamped to [0, bits - 1], as TF's shift kernels clamp it."""
    lo, hi = (np.asarray(v, y.dtype.numpy) for v in (0, bits - 1))
    return api.clip_by_value(y, lo, hi)


def _powers(g, dtype: DType, exponent: Tensor, count: int) -> Tensor:
    """2**exponent in dtype (two's complement wrap-around at the top), by Gather
    from the table of 2**0 .. 2**(count - 1)."""
    table = np.left_shift(np.ones(count, dtype.numpy), np.arange(count, dtype=dtype.numpy))
    return g.op("Gather", [g.constant(table), api.cast(exponent, int64)], {"axis": 0})


def _shift_args(x, y, what: str, name) -> tuple:
    """(x, the shift amounts clamped into [0, bits), bits) of a shift of x by y.

    Raises:
        TypeError: x and y are not integers of one dtype, or name is not a str.
    """
    _g.check_name(name, what)
    a, b = _int_pair(x, y, what)
    bits = 8 * a.dtype.itemsize
    return a, _shift_amount(b, bits), bits


def left_shift(x, y, name=None) -> Tensor:
    """x shifted left by y bits (tf.bitwise.left_shift), elementwise with
    broadcasting; signed x wraps as two's complement (x * 2**y modulo the width). y
    outside [0, bits) is clamped into it, as TF's kernel does.

    Raises:
        TypeError: x and y are not integers of one dtype, or name is not a str.
    """
    a, s, bits = _shift_args(x, y, "left_shift", name)
    g = a.graph
    if a.dtype in _UNSIGNED:
        return g.op("BitShift", [a, s], {"direction": "LEFT"}, name=name)
    # a multiple of 2**s (the table wraps 2**(bits-1) to the lowest value) wraps as
    # the shift does in two's complement
    return api.multiply(a, _powers(g, a.dtype, s, bits), name=name)


def right_shift(x, y, name=None) -> Tensor:
    """x shifted right by y bits (tf.bitwise.right_shift), elementwise with
    broadcasting: arithmetic for signed x (the sign bit is copied in, i.e.
    floor(x / 2**y)), logical for unsigned. y outside [0, bits) is clamped into it,
    as TF's kernel does.

    Raises:
        TypeError: x and y are not integers of one dtype, or name is not a str.
    """
    a, s, bits = _shift_args(x, y, "right_shift", name)
    g = a.graph
    if a.dtype in _UNSIGNED:
        return g.op("BitShift", [a, s], {"direction": "RIGHT"}, name=name)
    # two floor divisions by 2**(s // 2) and 2**(s - s // 2): each power fits the
    # signed type, where 2**(bits - 1) would not
    half = s // np.asarray(2, a.dtype.numpy)
    count = bits // 2 + 1
    once = api_math.floordiv(a, _powers(g, a.dtype, half, count))
    return api_math.floordiv(once, _powers(g, a.dtype, s - half, count), name=name)


bitwise = namespace("bitwise", "TF's tf.bitwise (bitwise_and, bitwise_or, bitwise_xor, "
                     "invert, left_shift, right_shift).", {
                         "bitwise_and": bitwise_and, "bitwise_or": bitwise_or,
                         "bitwise_xor": bitwise_xor, "invert": invert,
                         "left_shift": left_shift, "right_shift": right_shift})


# --------------------------------------------------------------------------- dtypes

_DTYPE_NAMES = {
    "float16": DType.FLOAT16, "half": DType.FLOAT16, "bfloat16": DType.BFLOAT16,
    "float32": float32, "float64": float64, "double": float64, "int8": DType.INT8,
    "int16": DType.INT16, "int32": int32, "int64": int64, "uint8": DType.UINT8,
    "uint16": DType.UINT16, "uint32": DType.UINT32, "uint64": DType.UINT64,
    "bool": DType.BOOL, "string": DType.STRING,
}


# og.dtypes: tf.dtypes' functions (as_dtype, cast, saturate_cast), DType and the names
dtypes = namespace("dtypes", "TF's tf.dtypes (as_dtype, cast, saturate_cast, DType and "
                    "the dtype names).", dict(_DTYPE_NAMES, as_dtype=_g.as_dtype, cast=api.cast,
                                               saturate_cast=api_compat.saturate_cast,
                                               DType=DType))


# --------------------------------------------------------------------------- broadcasting

def _shape_vector(shape, what: str) -> Tensor:
    """A 1-D int32/int64 shape tensor.

    Raises:
        TypeError: it is not integer.
        ShapeError: its known rank is not 1.
    """
    t = _typed(shape, (int32, int64), what)
    if t.shape is not None and len(t.shape) != 1:
        raise ShapeError(f"{what} must be 1-D, got shape {list(t.shape)}")
    return t


def _ones_before(v: Tensor, length: Tensor) -> Tensor:
    """v with 1s put before it up to `length` (an int64 [1] tensor) entries."""
    g = v.graph
    missing = length - g.op("Shape", [v])
    ones = g.op("ConstantOfShape", [missing], {"value": np.ones(1, v.dtype.numpy)})
    return api.concat([ones, v], 0)


def broadcast_dynamic_shape(shape_x, shape_y, name=None) -> Tensor:
    """TF's tf.broadcast_dynamic_shape: the shape (a 1-D tensor of shape_x's dtype)
    that tensors of shapes shape_x and shape_y (1-D int32/int64 tensors) broadcast
    to, by numpy's rules (the shorter padded with 1s in front).

    Raises:
        TypeError: a shape is not an integer tensor, they differ in dtype, or name is
            not a str.
        ShapeError: a shape's known rank is not 1.
        ExecutionError: when the graph runs, the shapes do not broadcast.
    """
    what = "broadcast_dynamic_shape"
    _g.check_name(name, what)
    sx = _shape_vector(shape_x, f"{what}: shape_x")
    sy = _shape_vector(shape_y, f"{what}: shape_y")
    if sy.dtype != sx.dtype:
        raise TypeError(f"{what}: shape_x and shape_y must be of one dtype, got "
                        f"{sx.dtype.short_name} and {sy.dtype.short_name}")
    g = sx.graph
    length = api.maximum(g.op("Shape", [sx]), g.op("Shape", [sy]))
    px, py = _ones_before(sx, length), _ones_before(sy, length)
    one = np.asarray(1, sx.dtype.numpy)
    fits = api.logical_or(api.equal(px, py),
                          api.logical_or(api.equal(px, one), api.equal(py, one)))
    out = api.where(api.equal(px, one), py, px)
    known = [None if t.shape is None else t.shape[0] for t in (sx, sy)]
    if None not in known:
        out.set_shape([max(known)])
    return _checked(out, fits, f"{what}: the shapes do not broadcast (a pair of dims "
                    "differ and neither is 1)", name=name)


def _broadcast_dim(a, b, what: str):
    """TF's broadcast of two static dims (None unknown).

    Raises:
        ValueError: both known, different and neither 1.
    """
    if a is None or b is None:
        if a is not None and a > 1:
            return a
        if b is not None and b > 1:
            return b
        return None
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    raise ValueError(f"{what}: incompatible dims {a} and {b}")


def broadcast_static_shape(shape_x, shape_y) -> TensorShape:
    """TF's tf.broadcast_static_shape: the static shape (a TensorShape, None entries
    unknown; TensorShape(None) for an unknown rank) that shapes shape_x and shape_y
    (TensorShapes, tuples / lists of ints and Nones, or None for an unknown rank)
    broadcast to, with TF's rule for unknown dims (one known > 1 wins, else unknown).

    Raises:
        TypeError: a shape is not a list of ints and Nones.
        ShapeError: a dim is negative (other than -1, which means unknown).
        ValueError: the shapes are incompatible (known dims that differ, neither 1).
    """
    what = "broadcast_static_shape"
    sx = _g._shape_tuple(shape_x, f"{what}: shape_x")
    sy = _g._shape_tuple(shape_y, f"{what}: shape_y")
    if sx is None or sy is None:
        return TensorShape(None)
    n = max(len(sx), len(sy))
    sx, sy = (1,) * (n - len(sx)) + tuple(sx), (1,) * (n - len(sy)) + tuple(sy)
    try:
        return TensorShape([_broadcast_dim(a, b, what) for a, b in zip(sx, sy)])
    except ValueError:
        raise ValueError(f"{what}: incompatible shapes for broadcasting: {list(shape_x)} "
                         f"and {list(shape_y)}") from None


# --------------------------------------------------------------------------- patches

# one Slice op per tap: bound the taps of one patch, and the padded volume
_MAX_PATCH_TAPS = 1 << 16
_MAX_PADDED_VOXELS = 1 << 31
_VOLUME_DIMS = ("planes", "rows", "cols")


def _volume_geometry(x: Tensor, ksizes, strides, padding, what: str) -> tuple:
    """(output sizes, pads of the 5 dims) for the known spatial sizes of x.

    Raises:
        ShapeError: a VALID patch is larger than the volume, or SAME padding would
            make it more than 2**31 voxels.
    """
    out, pads = [], [[0, 0]]
    for n, k, s in zip(x.shape[1:4], ksizes, strides):
        if padding == "VALID" and k > n:
            raise ShapeError(f"{what}: a VALID patch of {k} is larger than the volume's "
                             f"{n}")
        o, pad = api_compat._tf_window(n, k, s, padding)
        pads.append(pad)
        out.append(o)
    pads.append([0, 0])
    voxels = int(np.prod([n + sum(p) for n, p in zip(x.shape[1:4], pads[1:4])]))
    if voxels > _MAX_PADDED_VOXELS:
        raise ShapeError(f"{what}: SAME padding makes the volume {voxels} voxels, more "
                         f"than {_MAX_PADDED_VOXELS}")
    return out, pads


def extract_volume_patches(input, ksizes, strides, padding, name=None) -> Tensor:  # noqa: A002
    """TF's tf.extract_volume_patches: the ksizes[1:4] patches of an NDHWC volume,
    taken every strides[1:4] voxels, each flattened into the last dim in TF's order
    (((plane * rows + row) * cols + col) * depth + channel): shape [batch, out_planes,
    out_rows, out_cols, planes * rows * cols * depth]. padding "SAME" pads with zeros
    as TF's conv3d (out = ceil(in / stride)), "VALID" takes whole patches only. One
    strided Slice per tap, concatenated, so the gradient (dz summed back onto the
    voxels, as TF's) comes from them.

    Raises:
        TypeError: ksizes or strides is not a list of 5 ints, or name is not a str.
        ValueError: a window is not [1, planes, rows, cols, 1] of ints >= 1, padding
            is not "SAME" or "VALID", or a patch has more than 65536 voxels.
        ShapeError: input is not 5-D, its depth, height or width is unknown while
            building, a VALID patch is larger than the volume, or SAME padding would
            make it more than 2**31 voxels.
    """
    what = "extract_volume_patches"
    _g.check_name(name, what)
    ks = list(api_compat._window(ksizes, f"{what}: ksizes", _VOLUME_DIMS))
    ss = list(api_compat._window(strides, f"{what}: strides", _VOLUME_DIMS))
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {_brief(padding)}")
    if int(np.prod(ks)) > _MAX_PATCH_TAPS:
        raise ValueError(f"{what}: a {ks} patch has more than {_MAX_PATCH_TAPS} voxels")
    x = _t(input)
    if x.shape is None or len(x.shape) != 5 or None in x.shape[1:4]:
        raise ShapeError(f"{what}: input must be 5-D NDHWC with depth, height and width "
                         f"known while building, got "
                         f"{'an unknown rank' if x.shape is None else list(x.shape)}")
    out, pads = _volume_geometry(x, ks, ss, padding, what)
    padded = api.pad(x, pads) if any(v for p in pads for v in p) else x
    g = x.graph
    taps = []
    for offset in np.ndindex(*ks):
        # an empty output gives an empty tap (an end below the start would count from
        # the back)
        ends = [o + (n - 1) * s + 1 if n else o for o, n, s in zip(offset, out, ss)]
        taps.append(g.op("Slice", [padded, _i64(g, list(offset)), _i64(g, ends),
                                   _i64(g, [1, 2, 3]), _i64(g, ss)]))
    if len(taps) == 1:
        return api.identity(taps[0], name=name)
    return g.op("Concat", taps, {"axis": 4}, name=name)


# --------------------------------------------------------------------------- batch_to_space

def batch_to_space(input, crops, block_size, name=None, block_shape=None) -> Tensor:  # noqa: A002
    """TF1's tf.batch_to_space, the inverse of og.nn.space_to_batch: the batch of a
    4-D NHWC input (batch * block_size**2) spread over block_size x block_size blocks
    of height and width, then cropped by crops [[top, bottom], [left, right]]
    (og.batch_to_space_nd with block_shape [block_size, block_size]). block_shape is
    block_size's newer name. The gradient is space_to_batch of dz, as TF's.

    Raises:
        TypeError: block_size is missing or not an int, or name is not a str.
        ValueError: block_size < 1, block_size and block_shape differ, or crops are
            not two non-negative pairs.
        ShapeError: input is not 4-D, its batch does not divide by block_size**2, or
            a crop exceeds its dim (see og.batch_to_space_nd; a crops tensor is
            checked when the graph runs, ExecutionError).
    """
    what = "batch_to_space"
    _g.check_name(name, what)
    if block_shape is not None and block_size is not None and block_shape != block_size:
        raise ValueError(f"{what}: give block_size or its newer name block_shape, not both")
    size = block_size if block_size is not None else block_shape
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"{what}: block_size must be an int, got {_brief(size)}")
    if size < 1:   # TF 2.21's takes 1 too (the input unchanged but for the crops)
        raise ValueError(f"{what}: block_size must be >= 1, got {size}")
    x = _t(input)
    if x.shape is None or len(x.shape) != 4:
        raise ShapeError(f"{what}: input must be 4-D NHWC, got "
                         f"{'an unknown rank' if x.shape is None else list(x.shape)}")
    return api_compat.batch_to_space_nd(x, [int(size)] * 2, crops, name=name)


# --------------------------------------------------------------------------- fake quant

def _quant_range(num_bits, narrow_range, what: str) -> tuple:
    """(quant_min, quant_max) of TF's fake quantization.

    Raises:
        TypeError: num_bits is not an int or narrow_range not a bool.
        ValueError: num_bits is outside [2, 16] (TF's attr range).
    """
    if isinstance(num_bits, (bool, np.bool_)) or not isinstance(num_bits, (int, np.integer)):
        raise TypeError(f"{what}: num_bits must be an int, got {_brief(num_bits)}")
    if not 2 <= num_bits <= 16:
        raise ValueError(f"{what}: num_bits must be in [2, 16], got {num_bits}")
    if not isinstance(narrow_range, (bool, np.bool_)):
        raise TypeError(f"{what}: narrow_range must be a bool, got {_brief(narrow_range)}")
    return (1 if narrow_range else 0), (1 << int(num_bits)) - 1


def _nudged(lo, hi, qmin: int, qmax: int, floor, clip) -> tuple:
    """TF's Nudge: (nudged_min, nudged_max, scale) so that 0 is exactly a quantized
    value. `floor` / `clip` are numpy's or the graph's (float32 arithmetic both)."""
    f = np.float32
    scale = (hi - lo) / f(qmax - qmin)
    zero_from_min = f(qmin) - lo / scale
    # zero_from_min clipped into [qmin, qmax] is >= 0, where std::round is floor(z + .5)
    zero = floor(clip(zero_from_min, f(qmin), f(qmax)) + f(0.5))
    return (f(qmin) - zero) * scale, (f(qmax) - zero) * scale, scale


def _fake_quant(x: Tensor, lo, hi, scale, name) -> Tensor:
    """x clamped to [lo, hi] and rounded to the grid lo + k * scale (TF's
    floor((clamped - lo) / scale + 0.5) * scale + lo), with the straight-through
    gradient: dz passes to x where lo <= x <= hi, to lo (hi) where x is below (above)
    the range when lo / hi carry gradients. lo, hi, scale: float32 scalars whose
    gradient-free values are the nudged ones."""
    inside = api.logical_and(api.greater_equal(x, lo), api.less_equal(x, hi))
    through = api.where(inside, x, api.where(api.less(x, lo), api.zeros_like(x) + lo,
                                             api.zeros_like(x) + hi))
    lo_v, hi_v, scale_v = (api.stop_gradient(v) for v in (lo, hi, scale))
    clamped = api.clip_by_value(api.stop_gradient(x), lo_v, hi_v)
    quantized = api.floor((clamped - lo_v) * (1.0 / scale_v) + 0.5) * scale_v + lo_v
    return api.add(through, api.stop_gradient(quantized - through), name=name)


def fake_quant_with_min_max_args(inputs, min=-6.0, max=6.0, num_bits=8,  # noqa: A002
                                 narrow_range=False, name=None) -> Tensor:
    """TF's tf.quantization.fake_quant_with_min_max_args: float32 inputs clamped to
    [min, max] nudged so that 0 is a grid point, and rounded to 2**num_bits - 1 steps
    (2**num_bits - 2 with narrow_range); the gradient passes straight through where
    nudged_min <= inputs <= nudged_max and is 0 outside, as TF's.

    Raises:
        TypeError: inputs is not float32, min / max not numbers, num_bits not an
            int, narrow_range not a bool, or name not a str.
        ValueError: min >= max (TF: "min has to be smaller than max"), or num_bits
            outside [2, 16].
    """
    what = "fake_quant_with_min_max_args"
    _g.check_name(name, what)
    x = _typed(inputs, (float32,), f"{what}: inputs")
    lo = np.float32(api_extra._python_number(min, f"{what}: min"))
    hi = np.float32(api_extra._python_number(max, f"{what}: max"))
    if not lo < hi:
        raise ValueError(f"{what}: min has to be smaller than max, got {min} and {max}")
    qmin, qmax = _quant_range(num_bits, narrow_range, what)
    n_lo, n_hi, scale = _nudged(lo, hi, qmin, qmax, np.floor, np.clip)
    g = x.graph
    return _fake_quant(x, g.constant(np.float32(n_lo)), g.constant(np.float32(n_hi)),
                       g.constant(np.float32(scale)), name)


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8,  # noqa: A002
                                 narrow_range=False, name=None) -> Tensor:
    """TF's tf.quantization.fake_quant_with_min_max_vars: as
    fake_quant_with_min_max_args with min and max float32 scalar tensors (variables,
    typically), nudged in the graph. The gradient passes straight through to inputs
    where nudged_min <= inputs <= nudged_max; min gets the sum of dz below that
    range and max the sum above it, as TF's.

    Raises:
        TypeError: inputs, min or max is not float32, num_bits not an int,
            narrow_range not a bool, or name not a str.
        ValueError: num_bits outside [2, 16].
        ShapeError: min or max is not a scalar (when known).
        ExecutionError: when the graph runs, min >= max.
    """
    what = "fake_quant_with_min_max_vars"
    _g.check_name(name, what)
    x = _typed(inputs, (float32,), f"{what}: inputs")
    lo = _typed(_t(min, float32) if not _g._is_symbolic(min) else min, (float32,),
                f"{what}: min")
    hi = _typed(_t(max, float32) if not _g._is_symbolic(max) else max, (float32,),
                f"{what}: max")
    for t, arg in ((lo, "min"), (hi, "max")):
        if t.shape is not None and len(t.shape) != 0:
            raise ShapeError(f"{what}: {arg} must be a scalar, got shape {list(t.shape)}")
    qmin, qmax = _quant_range(num_bits, narrow_range, what)
    lo = _checked(lo, api.less(lo, hi), f"{what}: min has to be smaller than max")
    n_lo, n_hi, scale = _nudged(api.stop_gradient(lo), api.stop_gradient(hi), qmin, qmax,
                                api.floor, api.clip_by_value)
    # the nudged bounds with min's and max's own gradients (TF's rule)
    n_lo = lo + api.stop_gradient(n_lo - lo)
    n_hi = hi + api.stop_gradient(n_hi - hi)
    return _fake_quant(x, n_lo, n_hi, scale, name)


quantization = namespace("quantization", "TF's tf.quantization "
                          "(fake_quant_with_min_max_args, fake_quant_with_min_max_vars).", {
                              "fake_quant_with_min_max_args": fake_quant_with_min_max_args,
                              "fake_quant_with_min_max_vars": fake_quant_with_min_max_vars})


# --------------------------------------------------------------------------- ensure_shape

def _merged_shape(x: Tensor, want: tuple, what: str) -> tuple:
    """x's static shape merged with `want` (both known ranks).

    Raises:
        ShapeError: their ranks or a pair of known dims differ.
    """
    have = x.shape
    if len(have) != len(want) or any(a is not None and b is not None and a != b
                                      for a, b in zip(have, want)):
        raise ShapeError(f"{what}: shape {list(want)} is not compatible with the shape "
                         f"{list(have)} of {x.name!r}")
    return tuple(a if a is not None else b for a, b in zip(have, want))


def ensure_shape(x, shape, name=None) -> Tensor:
    """TF's tf.ensure_shape: x, with its static shape merged with `shape` (a list of
    ints and Nones, None entries unknown; None for any shape), and a check when the
    graph runs that x's actual shape has the known dims of `shape` (left out where
    the static shape already tells).

    Raises:
        TypeError: shape is not a list of ints and Nones, or name is not a str.
        ShapeError: shape contradicts x's static shape (rank or a known dim).
        ExecutionError: when the graph runs, x's shape does not match `shape`.
    """
    what = "ensure_shape"
    _g.check_name(name, what)
    want = _g._shape_tuple(shape, f"{what}: shape")
    t = _t(x)
    if want is None:
        return api.identity(t, name=name)
    merged = want if t.shape is None else _merged_shape(t, want, what)
    if t.shape is not None and all(b is None or a is not None
                                   for a, b in zip(t.shape, want)):
        out = api.identity(t, name=name)
    else:
        out = _checked(t, _shape_matches(t, want),
                       f"{what}: the shape of {t.name!r} is not compatible with {list(want)}",
                       name=name)
    out.set_shape(list(merged))
    return out


def _shape_matches(x: Tensor, want: tuple) -> Tensor:
    """A bool tensor: x's run-time rank is len(want) and its dims equal want's known
    ones. x's shape is padded with zeros to len(want) entries before comparing, so a
    shorter rank still compares (and fails on the rank)."""
    g = x.graph
    n = len(want)
    dims = g.op("Shape", [x])
    padded = api.concat([dims, _i64(g, np.zeros(n, np.int64))], 0)
    head = g.op("Slice", [padded, _i64(g, [0]), _i64(g, [n])])
    expected = _i64(g, [-1 if d is None else d for d in want])
    known = g.constant(np.asarray([d is not None for d in want], bool))
    dims_ok = api.logical_or(api.logical_not(known), api.equal(head, expected))
    rank_ok = api.equal(g.op("Size", [dims]), np.int64(n))
    return api.logical_and(api_extra.reduce_all(dims_ok), rank_ok)


__all__ = [
    "batch_to_space", "bitcast", "bitwise", "broadcast_dynamic_shape",
    "broadcast_static_shape", "dtypes", "ensure_shape", "extract_volume_patches",
    "fake_quant_with_min_max_args", "fake_quant_with_min_max_vars",
    "histogram_fixed_width", "histogram_fixed_width_bins", "quantization",
]

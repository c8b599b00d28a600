"""Operators: quantization family (ONNX QDQ and integer-arithmetic ops).

QuantizeLinear / DequantizeLinear with per-tensor, per-axis and blocked scales,
DynamicQuantizeLinear, and the integer GEMMs MatMulInteger, ConvInteger, QLinearMatMul
and QLinearConv. Integer accumulation is exact: zero-point-shifted integer operands are
multiplied in float64 (BLAS), where every product and partial sum of 8/16-bit values is
an exactly representable integer, then converted to int32. Rounding to integers is half
to even (`np.rint`), as ONNX specifies; integer targets saturate to their range, float8
and float4 targets saturate to their largest finite value when `saturate` is set. Types
numpy lacks (float8, int4, int2, float4) come from ml_dtypes.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .conv import _pool_geometry, conv_nd
from .elementwise import onnx_type_to_numpy
from .linalg import _matmul_shape
from .registry import TensorInfo, define

_FLOAT_TARGETS = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                  "float4_e2m1fn")


def _limits(dtype):
    """(low, high) of an integer dtype, numpy's or ml_dtypes'."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
    else:
        import ml_dtypes

        info = ml_dtypes.iinfo(dtype)
    return int(info.min), int(info.max)


def _is_float_target(dtype) -> bool:
    return np.dtype(dtype).name in _FLOAT_TARGETS


def _to_float(x, dtype=np.float32):
    """Any numeric (incl. ml_dtypes int4/float8) array as a float array."""
    x = np.asarray(x)
    return x.astype(dtype)


def _compute_dtype(scale_dtype):
    """Arithmetic precision for a scale dtype: its own (the spec: the scale's type sets
    the precision of x / scale; ml_dtypes' bfloat16 division rounds the float32 quotient,
    which is the correctly rounded bfloat16 one), float32 for any other (int32)."""
    dt = np.dtype(scale_dtype)
    return dt if dt.name in ("float16", "bfloat16", "float32", "float64") \
        else np.dtype(np.float32)


def _expand_param(p, x_shape, axis, block_size, op, what):
    """Reshape/repeat a scale or zero point so it broadcasts against x.

    0-d or single-element 1-D: per tensor. 1-D (block_size 0): per axis. Same rank as x
    with block_size > 0: blocked along `axis` (each entry covers block_size elements).
    """
    p = np.asarray(p)
    rank = len(x_shape)
    if p.ndim == 0 or (p.ndim == 1 and p.size == 1 and block_size == 0):
        return p.reshape(())
    if rank == 0:
        raise ShapeError(f"{op}: {what} of shape {p.shape} for a scalar input")
    if not -rank <= axis < rank:
        raise OpAttributeError(f"{op}: axis {axis} out of range for rank {rank}")
    axis %= rank
    if block_size <= 0:
        if p.ndim != 1 or p.shape[0] != x_shape[axis]:
            raise ShapeError(f"{op}: per-axis {what} shape {p.shape} does not match input "
                             f"dim {x_shape[axis]} on axis {axis}")
        shape = [1] * rank
        shape[axis] = p.shape[0]
        return p.reshape(shape)
    if p.ndim != rank:
        raise ShapeError(f"{op}: blocked {what} must have the input's rank {rank}, "
                         f"got shape {p.shape}")
    n = x_shape[axis]
    if p.shape[axis] != -(-n // block_size):
        raise ShapeError(f"{op}: blocked {what} has {p.shape[axis]} blocks on axis {axis}, "
                         f"want ceil({n}/{block_size})")
    # off the axis the dims are x's (numpy would broadcast a 1 or refuse only later)
    if any(d != s for k, (d, s) in enumerate(zip(p.shape, x_shape)) if k != axis):
        raise ShapeError(f"{op}: blocked {what} of shape {tuple(p.shape)} must have the "
                         f"input's dims {tuple(x_shape)} off axis {axis}")
    return np.take(np.repeat(p, block_size, axis=axis), np.arange(n), axis=axis)


def _quantize_values(v, dtype, saturate):
    """Round (already scaled and shifted) float values `v` into `dtype`.

    Integer targets: round half to even and saturate, so +-inf become the type's
    maximum and minimum; NaN becomes the type's minimum (0 for unsigned types), which is
    what onnxruntime and onnx.reference give (the spec does not say).
    """
    dtype = np.dtype(dtype)
    if _is_float_target(dtype):
        import ml_dtypes

        v = v.astype(np.float32)
        if saturate:
            top = float(ml_dtypes.finfo(dtype).max)
            with np.errstate(invalid="ignore"):
                v = np.where(np.isnan(v), v, np.clip(v, -top, top))
        return v.astype(dtype)
    low, high = _limits(dtype)
    # NaN is set before the cast: NaN -> int64 is undefined (INT64_MIN on x86, which
    # wraps to 0 in the narrower type)
    v = np.where(np.isnan(v), low, np.clip(np.rint(v), low, high))
    return v.astype(np.int64).astype(dtype)


def quantize(x, scale, zero_point, dtype, axis=1, block_size=0, saturate=1, precision=None):
    """ONNX QuantizeLinear: saturate(round(x / scale) + zero_point) as `dtype`.

    For integer types NaN, including 0 / 0 from a zero scale, gives the type's minimum
    whatever the zero point (-128 for int8, 0 for uint8), as onnxruntime and
    onnx.reference do; x / 0 for x != 0 is +-inf and saturates.
    """
    x = np.asarray(x)
    scale = np.asarray(scale)
    cdt = np.dtype(precision) if precision is not None else _compute_dtype(scale.dtype)
    s = _expand_param(scale, x.shape, axis, block_size, "QuantizeLinear", "scale")
    with np.errstate(divide="ignore", invalid="ignore"):
        v = _to_float(x, cdt) / _to_float(s, cdt)
    if _is_float_target(dtype):
        if zero_point is not None:
            zp = _expand_param(zero_point, x.shape, axis, block_size, "QuantizeLinear",
                               "zero point")
            v = v + _to_float(zp, cdt)
        return _quantize_values(v, dtype, saturate)
    v = np.rint(v.astype(np.float64))   # exact from any float type
    if zero_point is not None:
        zp = _expand_param(zero_point, x.shape, axis, block_size, "QuantizeLinear",
                           "zero point")
        v = v + _to_float(zp, np.float64)
    return _quantize_values(v, dtype, saturate)


def dequantize(x, scale, zero_point, out_dtype=None, axis=1, block_size=0):
    """ONNX DequantizeLinear: (x - zero_point) * scale, in the scale's dtype."""
    x = np.asarray(x)
    scale = np.asarray(scale)
    out_dtype = np.dtype(out_dtype) if out_dtype is not None else scale.dtype
    cdt = np.float64 if np.float64 in (scale.dtype, out_dtype) else np.float32
    v = _to_float(x, cdt)
    if zero_point is not None:
        zp = _expand_param(zero_point, x.shape, axis, block_size, "DequantizeLinear",
                           "zero point")
        v = v - _to_float(zp, cdt)
    s = _expand_param(scale, x.shape, axis, block_size, "DequantizeLinear", "scale")
    return (v * _to_float(s, cdt)).astype(out_dtype)


def _output_dtype(attrs, zero_point_dtype):
    if zero_point_dtype is not None:
        return np.dtype(zero_point_dtype)
    if attrs.get("output_dtype"):
        return onnx_type_to_numpy(attrs["output_dtype"])
    return np.dtype(np.uint8)


def _check_zero_point_shape(op, scale, zp):
    """ShapeError unless the zero point has the scale's shape, as the spec asks (one
    value each counts as the same shape: () and (1,))."""
    if zp is None:
        return
    s, z = np.shape(scale), np.shape(zp)
    if s != z and not (np.size(scale) == 1 and np.size(zp) == 1):
        raise ShapeError(f"{op}: zero point of shape {z} must have the scale's shape {s}")


def _quantize_kernel(inputs, attrs, ctx):
    x, scale = inputs[0], inputs[1]
    zp = inputs[2] if len(inputs) > 2 else None
    _check_zero_point_shape("QuantizeLinear", scale, zp)
    dtype = _output_dtype(attrs, None if zp is None else np.asarray(zp).dtype)
    if attrs.get("output_dtype") and zp is not None \
            and onnx_type_to_numpy(attrs["output_dtype"]) != dtype:
        raise OpAttributeError(f"QuantizeLinear: output_dtype disagrees with the zero "
                               f"point's type {dtype}")
    precision = onnx_type_to_numpy(attrs["precision"]) if attrs.get("precision") else None
    return (quantize(x, scale, zp, dtype, attrs["axis"], attrs["block_size"],
                     attrs["saturate"], precision),)


def _quantize_infer(attrs, inputs):
    zp = inputs[2] if len(inputs) > 2 else None
    try:
        dtype = _output_dtype(attrs, None if zp is None else zp.dtype)
    except OpAttributeError:
        dtype = None
    return [TensorInfo(dtype, inputs[0].shape)]


def _dequantize_kernel(inputs, attrs, ctx):
    x, scale = inputs[0], inputs[1]
    zp = inputs[2] if len(inputs) > 2 else None
    _check_zero_point_shape("DequantizeLinear", scale, zp)
    out = onnx_type_to_numpy(attrs["output_dtype"]) if attrs.get("output_dtype") else None
    return (dequantize(x, scale, zp, out, attrs["axis"], attrs["block_size"]),)


def _dequantize_infer(attrs, inputs):
    dtype = inputs[1].dtype
    if attrs.get("output_dtype"):
        try:
            dtype = onnx_type_to_numpy(attrs["output_dtype"])
        except OpAttributeError:
            dtype = None
    return [TensorInfo(dtype, inputs[0].shape)]


def _dynamic_quantize_kernel(inputs, attrs, ctx):
    """uint8 quantization with scale/zero point from the data range (which includes 0)."""
    x = np.asarray(inputs[0], dtype=np.float32)
    # NaNs are left out of the range (onnxruntime does too): a single NaN must not
    # collapse the whole tensor's scale
    finite = x[~np.isnan(x)] if x.size and np.isnan(x.max()) else x
    lo = np.float32(min(0.0, float(finite.min()) if finite.size else 0.0))
    hi = np.float32(max(0.0, float(finite.max()) if finite.size else 0.0))
    scale = np.float32((hi - lo) / np.float32(255))
    if scale == 0:
        # all zeros (or empty): scale 1, as onnxruntime gives, so that a following
        # DequantizeLinear or division by the scale stays finite
        scale = np.float32(1)
        zp = np.uint8(0)
        y = np.zeros(x.shape, np.uint8)
    else:
        zp = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
        y = _quantize_values(np.rint(x / scale).astype(np.float64) + float(zp), np.uint8, 1)
    return (y, np.asarray(scale, np.float32), np.asarray(zp, np.uint8))


def _dynamic_quantize_infer(attrs, inputs):
    return [TensorInfo(np.dtype(np.uint8), inputs[0].shape),
            TensorInfo(np.dtype(np.float32), ()), TensorInfo(np.dtype(np.uint8), ())]


# ---------------------------------------------------------------------------------------
# Integer GEMMs


def _per_slice(p, shape, per_row: bool, op: str, what: str, operand: str):
    """A scale or zero point `p` of a matmul operand of `shape`, as an array that
    broadcasts against the operand without changing its shape.

    Accepted, as the ONNX spec words it: one value (0-d, or a single element of rank <=
    the operand's); per row of a ([..., M, K]): an M-vector or [..., M, 1]; per column of
    b ([..., K, N]): an N-vector or [..., 1, N]. The leading (batch) dims of an N-D `p`
    each equal the operand's or are 1 (the spec's [D1, D2, M, 1], [D1, D2, 1, N]).

    Returns:
        a 0-d array, or one of shape (M, 1) / (1, N) for a vector, or `p` itself.

    Raises:
        ShapeError: `p` fits none of these; names the op, `what` and `operand`.
    """
    p = np.asarray(p)
    rank = len(shape)
    if p.ndim == 0 or (p.size == 1 and p.ndim <= max(rank, 1)):
        return p.reshape(())
    if rank >= 2:
        along, unit = (-2, -1) if per_row else (-1, -2)
        n = shape[along]
        if p.ndim == 1 and p.shape[0] == n:
            return p.reshape((n, 1) if per_row else (1, n))
        batch = shape[rank - p.ndim:-2]
        if 2 <= p.ndim <= rank and p.shape[along] == n and p.shape[unit] == 1 and \
                all(d in (1, s) for d, s in zip(p.shape[:-2], batch)):
            return p
    if rank < 2:
        want = "one value (the operand is a vector)"
    else:
        nd = list(shape[:-2]) + ([shape[-2], 1] if per_row else [1, shape[-1]])
        want = (f"one value, a vector of {shape[-2 if per_row else -1]} (one per "
                f"{'row' if per_row else 'column'}) or shape {nd}")
    raise ShapeError(f"{op}: {what} of shape {tuple(p.shape)} does not fit {operand} of "
                     f"shape {tuple(shape)}: want {want}")


def _single(p, op: str, what: str):
    """`p` as a 0-d array; raises ShapeError (naming `what`) unless it holds one value."""
    p = np.asarray(p)
    if p.size != 1:
        raise ShapeError(f"{op}: {what} of shape {tuple(p.shape)} must hold one value")
    return p.reshape(())


def _shift_rows(a, zp, op="MatMulInteger", what="a_zero_point", operand="A"):
    """a (..., M, K) minus its zero point (one value or per row, see `_per_slice`), as
    float64 of a's shape."""
    a = np.asarray(a).astype(np.float64)
    if zp is None:
        return a
    return a - _per_slice(zp, a.shape, True, op, what, operand).astype(np.float64)


def _shift_cols(b, zp, op="MatMulInteger", what="b_zero_point", operand="B"):
    """b (..., K, N) minus its zero point (one value or per column, see `_per_slice`), as
    float64 of b's shape."""
    b = np.asarray(b).astype(np.float64)
    if zp is None:
        return b
    return b - _per_slice(zp, b.shape, False, op, what, operand).astype(np.float64)


def _int_matmul(a, b):
    """Exact integer matmul of zero-point-shifted float64 operands (ONNX MatMul shapes)."""
    return np.rint(np.matmul(a, b))


def _check_matmul_ranks(op, a, b):
    """ShapeError unless both operands have rank 1 or more (matmul takes no scalars)."""
    for name, v in (("A", a), ("B", b)):
        if np.ndim(v) == 0:
            raise ShapeError(f"{op}: {name} is a scalar; a matrix product takes operands "
                             f"of rank 1 or more")


def _matmul_integer_kernel(inputs, attrs, ctx):
    a, b = inputs[0], inputs[1]
    _check_matmul_ranks("MatMulInteger", a, b)
    azp = inputs[2] if len(inputs) > 2 else None
    bzp = inputs[3] if len(inputs) > 3 else None
    y = _int_matmul(_shift_rows(a, azp), _shift_cols(b, bzp))
    return (y.astype(np.int32),)


def _matmul_integer_infer(attrs, inputs):
    return [TensorInfo(np.dtype(np.int32), _matmul_shape(inputs[0].shape, inputs[1].shape,
                                                         where="MatMulInteger: "))]


def _requantize(acc, multiplier, y_zp):
    """rint(acc * multiplier) + y_zp, saturated to y_zp's type: the integer accumulator
    scaled by the float32 multiplier in_scale * w_scale / y_scale, the product taken
    exactly (float64), as the ONNX reference computes it (acc * in_scale * w_scale /
    y_scale rounds differently next to ties). onnxruntime rounds the product to
    float32 first, so where that lands on a tie (-71978 * 0.0011461836 = -82.5 in
    float32, -82.5000019 exactly) it can be one step off from this."""
    y_zp = np.asarray(y_zp)
    v = np.rint(acc * multiplier.astype(np.float64)) + y_zp.astype(np.float64).reshape(())
    return _quantize_values(v, y_zp.dtype, 1)


def _qlinear_matmul_kernel(inputs, attrs, ctx):
    """Integer matmul of the shifted operands, requantized with a_scale*b_scale/y_scale.

    a's scale and zero point are per tensor or per row, b's per tensor or per column
    (see `_per_slice`); y's are one value each. Raises ShapeError naming the input whose
    shape does not fit.
    """
    op = "QLinearMatMul"
    a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp = inputs[:8]
    y_s = _single(y_scale, op, "y_scale")
    y_zp = _single(y_zp, op, "y_zero_point")
    _check_matmul_ranks(op, a, b)
    a_shape, b_shape = np.shape(a), np.shape(b)
    f32 = np.float32
    rows = _per_slice(a_scale, a_shape, True, op, "a_scale", "a").astype(f32)
    cols = _per_slice(b_scale, b_shape, False, op, "b_scale", "b").astype(f32)
    acc = _int_matmul(_shift_rows(a, a_zp, op, "a_zero_point", "a"),
                      _shift_cols(b, b_zp, op, "b_zero_point", "b"))
    # matmul drops the unit axis of a vector operand: b's N axis when b is 1-D (rows
    # lose their trailing 1), a's M axis when a is 1-D (columns lose their 1 before N)
    if len(b_shape) == 1 and rows.ndim:
        rows = rows[..., 0]
    if len(a_shape) == 1 and cols.ndim:
        cols = cols[..., 0, :]
    multiplier = rows * cols / y_s.astype(f32)
    return (_requantize(acc, multiplier, y_zp),)


def _qlinear_matmul_infer(attrs, inputs):
    return [TensorInfo(inputs[7].dtype, _matmul_shape(inputs[0].shape, inputs[3].shape,
                                                      where="QLinearMatMul: "))]


def _conv_int(x, w, x_zp, w_zp, attrs):
    """Exact integer convolution (float64 GEMMs) of zero-point-shifted x and w."""
    xf = np.asarray(x).astype(np.float64)
    wf = np.asarray(w).astype(np.float64)
    if x_zp is not None:
        if np.size(x_zp) != 1:
            raise ShapeError(f"x_zero_point must hold one value (per-tensor), got shape "
                             f"{list(np.shape(x_zp))}")
        xf -= np.asarray(x_zp).astype(np.float64).reshape(())
    if w_zp is not None:
        wz = np.asarray(w_zp).astype(np.float64)
        if wz.size != 1 and (wz.ndim != 1 or wf.ndim == 0 or wz.size != wf.shape[0]):
            raise ShapeError(f"w_zero_point must hold one value or one per output channel "
                             f"({wf.shape[0] if wf.ndim else 1}), got shape {list(wz.shape)}")
        wf -= wz.reshape(()) if wz.size == 1 else wz.reshape((-1,) + (1,) * (wf.ndim - 1))
    conv_attrs = {k: attrs[k] for k in ("group", "pads", "strides", "dilations",
                                         "auto_pad")}
    if attrs.get("kernel_shape") and list(attrs["kernel_shape"]) != list(wf.shape[2:]):
        raise ShapeError(f"kernel_shape {attrs['kernel_shape']} does not match weight "
                         f"{wf.shape}")
    return np.rint(conv_nd(xf, wf, None, conv_attrs))


def _conv_integer_kernel(inputs, attrs, ctx):
    x, w = inputs[0], inputs[1]
    x_zp = inputs[2] if len(inputs) > 2 else None
    w_zp = inputs[3] if len(inputs) > 3 else None
    return (_conv_int(x, w, x_zp, w_zp, attrs).astype(np.int32),)


def _per_channel(p, m, op: str, what: str):
    """`p` as a 0-d array (one value) or an (m,) vector (m values: one per output
    channel); raises ShapeError (naming `what`) for any other size."""
    p = np.asarray(p)
    if p.size == 1:
        return p.reshape(())
    if p.size != m:
        raise ShapeError(f"{op}: {what} of shape {tuple(p.shape)} must hold one value or "
                         f"one per output channel ({m})")
    return p.reshape(m)


def _qlinear_conv_kernel(inputs, attrs, ctx):
    """Integer conv (+ int32 bias), requantized with x_scale*w_scale/y_scale.

    x_scale, y_scale and y_zero_point hold one value each, w_scale one or one per output
    channel, B one per output channel; raises ShapeError naming the input that does not.
    """
    op = "QLinearConv"
    x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp = inputs[:8]
    bias = inputs[8] if len(inputs) > 8 else None
    x_s, y_s = _single(x_scale, op, "x_scale"), _single(y_scale, op, "y_scale")
    y_zp = _single(y_zp, op, "y_zero_point")
    acc = _conv_int(x, w, x_zp, w_zp, attrs)
    nsp = acc.ndim - 2
    m = acc.shape[1]
    if bias is not None:
        b = np.asarray(bias)
        if b.size != m:
            raise ShapeError(f"{op}: B of shape {tuple(b.shape)} must hold one value per "
                             f"output channel ({m})")
        acc = acc + b.astype(np.float64).reshape((m,) + (1,) * nsp)
    f32 = np.float32
    ws = _per_channel(w_scale, m, op, "w_scale").astype(f32)
    ws = ws.reshape(ws.shape + (1,) * nsp if ws.ndim else ())
    multiplier = x_s.astype(f32) * ws / y_s.astype(f32)
    return (_requantize(acc, multiplier, y_zp),)


def _conv_shape(x, w, attrs):
    if x.shape is None:
        return None
    m = w.shape[0] if w is not None and w.shape is not None else None
    kernel = list(attrs.get("kernel_shape") or
                  (w.shape[2:] if w is not None and w.shape is not None
                   else [None] * (len(x.shape) - 2)))
    *_, out = _pool_geometry(x.shape[2:], kernel, attrs)
    return (x.shape[0], m) + tuple(out)


def _conv_integer_infer(attrs, inputs):
    return [TensorInfo(np.dtype(np.int32), _conv_shape(inputs[0], inputs[1], attrs))]


def _qlinear_conv_infer(attrs, inputs):
    return [TensorInfo(inputs[7].dtype, _conv_shape(inputs[0], inputs[3], attrs))]


_CONV_ATTRS = [("auto_pad", "string", "NOTSET"), ("dilations", "ints", None),
               ("group", "int", 1), ("kernel_shape", "ints", None), ("pads", "ints", None),
               ("strides", "ints", None)]

OPS = (
    define("ConvInteger", ["x", "w", "x_zero_point?", "w_zero_point?"], ["y"],
           _conv_integer_kernel, attrs=_CONV_ATTRS, infer=_conv_integer_infer,
           since_version=10),
    define("DequantizeLinear", ["x", "x_scale", "x_zero_point?"], ["y"], _dequantize_kernel,
           attrs=[("axis", "int", 1), ("block_size", "int", 0), ("output_dtype", "int", 0)],
           infer=_dequantize_infer, since_version=23),
    define("DynamicQuantizeLinear", ["x"], ["y", "y_scale", "y_zero_point"],
           _dynamic_quantize_kernel, infer=_dynamic_quantize_infer, since_version=11),
    define("MatMulInteger", ["A", "B", "a_zero_point?", "b_zero_point?"], ["Y"],
           _matmul_integer_kernel, infer=_matmul_integer_infer, since_version=10),
    define("QLinearConv", ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
                           "y_scale", "y_zero_point", "B?"], ["y"], _qlinear_conv_kernel,
           attrs=_CONV_ATTRS, infer=_qlinear_conv_infer, since_version=10),
    define("QLinearMatMul", ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point",
                             "y_scale", "y_zero_point"], ["y"], _qlinear_matmul_kernel,
           infer=_qlinear_matmul_infer, since_version=21),
    define("QuantizeLinear", ["x", "y_scale", "y_zero_point?"], ["y"], _quantize_kernel,
           attrs=[("axis", "int", 1), ("block_size", "int", 0), ("output_dtype", "int", 0),
                  ("precision", "int", 0), ("saturate", "int", 1)],
           infer=_quantize_infer, since_version=23),
)

KNOWN_FAILURES: dict[str, str] = {}

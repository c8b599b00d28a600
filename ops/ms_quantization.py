"""Operators: onnxruntime's quantized contrib ops (domain "com.microsoft").

These ops are not ONNX standard ops: onnxruntime defines them (its
docs/ContribOperators.md) and its quantization tool writes them when it quantizes in the
QOperator format (`quantize_static(..., quant_format=QuantFormat.QOperator)`): QGemm,
QLinearAdd, QLinearMul, QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool,
QLinearSoftmax, QLinearSigmoid and QLinearLeakyRelu. Inputs (with the optional ones),
attributes and defaults follow onnxruntime's op schemas.

The spec states each op as dequantize -> float op -> quantize. Where the 8-bit result
depends on how the float values in between round, the kernels do onnxruntime's CPU
arithmetic (float32 products and sums in its order, its lookup tables), so that results
match onnxruntime bit for bit; the exceptions measured are QLinearAdd and QLinearSoftmax,
one step off on about 1e-6 and 1e-5 of the outputs. Each kernel's docstring
states its arithmetic. The quantize/dequantize and rounding helpers
are those of `ops/quantization.py`; integer GEMMs are its exact float64 ones.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .activation import _leaky_relu, _sigmoid
from .common import broadcast_shape, infer_same
from .conv import _pad_for_windows, _pool_geometry, _window_slices
from .pool import _window_counts
from .quantization import (_int_matmul, _quantize_values, _shift_cols, _shift_rows, _single,
                           dequantize, quantize)
from .registry import TensorInfo, define, kernel_cache
from .shape import _concat

_DOMAIN = "com.microsoft"
# scale and zero point names of one-input ops (x's, then y's), as the schemas spell them
_UNARY_NAMES = ("X_scale", "X_zero_point", "Y_scale", "Y_zero_point")
_POOL_NAMES = ("x_scale", "x_zero_point", "y_scale", "y_zero_point")
_SOFTMAX_NAMES = ("X_scale", "x_zero_point", "y_scale", "y_zero_point")
_EIGHT_BIT = (np.dtype(np.uint8), np.dtype(np.int8))
_F32 = np.float32


# --------------------------------------------------------------------------------------
# Input checks shared by the ops
# --------------------------------------------------------------------------------------


def _padded(inputs, n):
    """The kernel's inputs as a list of n, None for omitted trailing optional ones."""
    return list(inputs) + [None] * (n - len(inputs))


def _quantized(x, op, what):
    """x as an array; raises ShapeError naming `what` unless it is uint8 or int8."""
    x = np.asarray(x)
    if x.dtype not in _EIGHT_BIT:
        raise ShapeError(f"{op}: {what} must be uint8 or int8, got {x.dtype}")
    return x


def _scale(s, op, what):
    """A per-tensor scale as a 0-d float32 array.

    Raises:
        ShapeError: `s` is missing, not float32 (the ops' tensor(float)) or holds more
            than one value.
    """
    if s is None:
        raise ShapeError(f"{op}: {what} is required")
    s = np.asarray(s)
    if s.dtype != np.float32:
        raise ShapeError(f"{op}: {what} must be float32, got {s.dtype}")
    return _single(s, op, what)


def _zero_point(zp, dtype, op, what):
    """A per-tensor zero point as a 0-d array of `dtype` (0 when omitted).

    Raises:
        ShapeError: it holds more than one value or its dtype is not `dtype` (the type of
            the data it belongs to).
    """
    if zp is None:
        return np.zeros((), dtype)
    zp = np.asarray(zp)
    if zp.dtype != dtype:
        raise ShapeError(f"{op}: {what} is {zp.dtype}, but the tensor it belongs to is "
                         f"{np.dtype(dtype)}")
    return _single(zp, op, what)


def _params(op, dtype, x_scale, x_zp, y_scale, y_zp, names):
    """Checked (x_scale, x_zero_point, y_scale, y_zero_point) of a one-input op."""
    return (_scale(x_scale, op, names[0]), _zero_point(x_zp, dtype, op, names[1]),
            _scale(y_scale, op, names[2]), _zero_point(y_zp, dtype, op, names[3]))


def _check_types(op, inputs, same=(), scales=()):
    """Dtype checks for inference (unknown dtypes pass): each group in `same` lists
    (position, name) of 8-bit tensors that must share one type; `scales` lists the
    positions and names of float32 scales.

    Raises:
        ShapeError: naming the op and the input whose type does not fit.
    """
    def info(pos):
        return inputs[pos] if pos < len(inputs) and inputs[pos] is not None else None

    for group in same:
        first = None
        for pos, name in group:
            t = info(pos)
            if t is None or t.dtype is None:
                continue
            if np.dtype(t.dtype) not in _EIGHT_BIT:
                raise ShapeError(f"{op}: {name} must be uint8 or int8, got {t.dtype}")
            if first is not None and np.dtype(t.dtype) != first[1]:
                raise ShapeError(f"{op}: {name} is {t.dtype}, but {first[0]} is {first[1]}")
            first = first or (name, np.dtype(t.dtype))
    for pos, name in scales:
        t = info(pos)
        if t is not None and t.dtype is not None and np.dtype(t.dtype) != np.float32:
            raise ShapeError(f"{op}: {name} must be float32, got {t.dtype}")


def _requantize_f32(v, y_zp):
    """rint(v) + y_zp saturated to y_zp's type, for float32 values v (onnxruntime's
    requantization: the float32 result rounded half to even, then the zero point)."""
    return _quantize_values(np.asarray(v, np.float64) + float(y_zp), y_zp.dtype, 1)


# --------------------------------------------------------------------------------------
# Lookup-table ops: QLinearSigmoid, QLinearLeakyRelu (and QLinearConcat's requantization)
# --------------------------------------------------------------------------------------


def _table(dtype, x_scale, x_zp, y_scale, y_zp, fn, attrs=None):
    """The 256-entry table y[code] = quantize(fn(dequantize(code))), indexed by the
    code's byte (int8 -1 is entry 255), as onnxruntime builds it: dequantize in float32,
    fn on float32, quantize as rint(v / y_scale) + y_zp. Memoised per node on the
    parameter values when `attrs` (an executor's resolved attributes) are given."""
    key = (np.dtype(dtype).char, float(x_scale), int(x_zp), float(y_scale), int(y_zp))
    cache = kernel_cache(attrs) if attrs is not None else {}
    table = cache.get(key)
    if table is None:
        codes = np.arange(256, dtype=np.uint8).view(dtype)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            values = fn(dequantize(codes, x_scale, x_zp))
            table = quantize(values, y_scale, y_zp, dtype)
        if attrs is not None:
            cache.clear()  # one parameter set per node in practice; keep the newest
            cache[key] = table
    return table


def _look_up(table, x):
    """table[x] elementwise, x's bytes as indices (int8 codes through their uint8 view)."""
    return table[x.view(np.uint8).reshape(-1)].reshape(x.shape)


def _lookup_kernel(op, fn):
    def kernel(inputs, attrs, ctx):
        """Y = quantize(f(dequantize(X))) through a 256-entry table (onnxruntime's
        method), f the float32 kernel of the corresponding standard op."""
        x, x_scale, x_zp, y_scale, y_zp = _padded(inputs, 5)
        x = _quantized(x, op, "X")
        params = _params(op, x.dtype, x_scale, x_zp, y_scale, y_zp, _UNARY_NAMES)
        table = _table(x.dtype, *params, lambda v: fn(v, attrs), attrs)
        return (_look_up(table, x),)
    kernel.__name__ = f"_{op.lower()}_kernel"
    return kernel


def _unary_infer(op, names=_UNARY_NAMES):
    def infer(attrs, inputs):
        _check_types(op, inputs, [((0, "X"), (2, names[1]), (4, names[3]))],
                     ((1, names[0]), (3, names[2])))
        return infer_same(attrs, inputs)
    return infer


# --------------------------------------------------------------------------------------
# QLinearAdd, QLinearMul
# --------------------------------------------------------------------------------------


def _binary_operands(op, inputs):
    """Checked (a, b, (a_scale, a_zp, b_scale, b_zp, c_scale, c_zp), output shape)."""
    a, a_scale, a_zp, b, b_scale, b_zp, c_scale, c_zp = _padded(inputs, 8)
    a = _quantized(a, op, "A")
    b = _quantized(b, op, "B")
    if a.dtype != b.dtype:
        raise ShapeError(f"{op}: A and B must have one type, got {a.dtype} and {b.dtype}")
    dt = a.dtype
    params = (_scale(a_scale, op, "A_scale"), _zero_point(a_zp, dt, op, "A_zero_point"),
              _scale(b_scale, op, "B_scale"), _zero_point(b_zp, dt, op, "B_zero_point"),
              _scale(c_scale, op, "C_scale"), _zero_point(c_zp, dt, op, "C_zero_point"))
    shape = broadcast_shape(a.shape, b.shape, where=f"{op}: A and B: ")
    return a, b, params, shape


def _fma32(q, ratio, addend):
    """float32(q * ratio + addend) rounded once, as an FMA does: the product of an 8-bit
    code and a float32 is exact in float64, and so (for any sane scales) is the sum."""
    return (q.astype(np.float64) * float(ratio) + addend.astype(np.float64)).astype(_F32)


def _qlinear_add_kernel(inputs, attrs, ctx):
    """C = (A_scale (A - A_zp) + B_scale (B - B_zp)) / C_scale + C_zp, numpy broadcasting.

    onnxruntime's float32 arithmetic (MLAS's AVX2 kernel): with r_a = A_scale / C_scale,
    r_b = B_scale / C_scale and k = C_zp - (r_a A_zp + r_b B_zp), C = rint(fma(A, r_a,
    fma(B, r_b, k))) saturated. Measured against onnxruntime: equal but for one step on
    12 of 7.9 million outputs (every pair of codes under 40 random scale sets), next to
    a rounding tie its kernels reach through another float32 order.
    """
    a, b, (sa, za, sb, zb, sc, zc), shape = _binary_operands("QLinearAdd", inputs)
    r_a = _F32(sa) / _F32(sc)
    r_b = _F32(sb) / _F32(sc)
    fixed = _F32(zc) - (_F32(r_a * _F32(za)) + _F32(r_b * _F32(zb)))
    a = np.broadcast_to(a, shape)
    b = np.broadcast_to(b, shape)
    v = _fma32(a, r_a, _fma32(b, r_b, np.full(shape, fixed, _F32)))
    return (_quantize_values(v.astype(np.float64), a.dtype, 1),)


def _qlinear_mul_kernel(inputs, attrs, ctx):
    """C = (A - A_zp)(B - B_zp) A_scale B_scale / C_scale + C_zp, numpy broadcasting.

    onnxruntime's arithmetic (MLAS): the integer product times the float32 ratio
    (A_scale B_scale) / C_scale, plus C_zp, each step rounded to float32, then rint and
    saturation.
    """
    a, b, (sa, za, sb, zb, sc, zc), shape = _binary_operands("QLinearMul", inputs)
    ratio = _F32(_F32(sa) * _F32(sb)) / _F32(sc)
    acc = (a.astype(np.int32) - int(za)) * (b.astype(np.int32) - int(zb))
    v = acc.astype(_F32) * ratio + _F32(zc)
    return (_quantize_values(np.asarray(v, np.float64).reshape(shape), a.dtype, 1),)


def _binary_infer(op):
    def infer(attrs, inputs):
        _check_types(op, inputs, [((0, "A"), (3, "B"), (2, "A_zero_point"),
                                   (5, "B_zero_point"), (7, "C_zero_point"))],
                     ((1, "A_scale"), (4, "B_scale"), (6, "C_scale")))
        a, b = inputs[0], inputs[3]
        return [TensorInfo(a.dtype, broadcast_shape(a.shape, b.shape,
                                                     where=f"{op}: A and B: "))]
    return infer


# --------------------------------------------------------------------------------------
# QLinearConcat
# --------------------------------------------------------------------------------------


def _concat_axis(axis, rank, op="QLinearConcat"):
    if not -rank <= axis < rank:
        raise OpAttributeError(f"{op}: axis {axis} is out of range for inputs of rank "
                               f"{rank}")
    return axis % rank


def _concat_triples(rest, op="QLinearConcat"):
    """The (X, X_scale, X_zero_point) triples after Y_scale and Y_zero_point."""
    if not rest or len(rest) % 3:
        raise ShapeError(f"{op}: after Y_scale and Y_zero_point the inputs must come as "
                         f"(X, X_scale, X_zero_point) triples, got {len(rest)} input(s)")
    return [rest[i:i + 3] for i in range(0, len(rest), 3)]


def _concat_shape(shapes, axis, op="QLinearConcat"):
    """Output shape of concatenating `shapes` (None for unknown dims) along `axis`.

    Raises:
        ShapeError: the inputs differ in rank or in a dim off the axis (names them).
        OpAttributeError: axis is out of range.
    """
    rank = len(shapes[0])
    for k, s in enumerate(shapes):
        if len(s) != rank:
            raise ShapeError(f"{op}: input X{k} has rank {len(s)}, X0 has rank {rank}")
    axis = _concat_axis(axis, rank, op)
    out = []
    for i in range(rank):
        dims = [s[i] for s in shapes]
        if i == axis:
            out.append(None if None in dims else sum(dims))
            continue
        known = {d for d in dims if d is not None}
        if len(known) > 1:
            raise ShapeError(f"{op}: dim {i} differs between the inputs: "
                             f"{[None if d is None else int(d) for d in dims]}")
        out.append(known.pop() if known else None)
    return tuple(out)


def _qlinear_concat_kernel(inputs, attrs, ctx):
    """Y = concat(quantize(dequantize(X_i)), axis) in Y's scale and zero point.

    Each X_i is requantized through a 256-entry table (dequantize in float32, quantize
    as rint(v / Y_scale) + Y_zp), as onnxruntime does, or copied when its scale and zero
    point are Y's. Zero points and data must all have Y_zero_point's type.
    """
    op = "QLinearConcat"
    y_scale = _scale(inputs[0], op, "Y_scale")
    if inputs[1] is None:
        raise ShapeError(f"{op}: Y_zero_point is required")
    dtype = _quantized(inputs[1], op, "Y_zero_point").dtype
    y_zp = _zero_point(inputs[1], dtype, op, "Y_zero_point")
    parts = []
    for k, (x, x_scale, x_zp) in enumerate(_concat_triples(list(inputs[2:]))):
        if x is None:
            raise ShapeError(f"{op}: input X{k} is missing")
        x = _quantized(x, op, f"X{k}")
        if x.dtype != dtype:
            raise ShapeError(f"{op}: X{k} is {x.dtype}, but Y_zero_point is {dtype}")
        xs = _scale(x_scale, op, f"X{k}'s scale")
        if x_zp is None:
            raise ShapeError(f"{op}: X{k}'s zero point is required")
        xz = _zero_point(x_zp, dtype, op, f"X{k}'s zero point")
        parts.append((x, xs, xz))
    _concat_shape([p[0].shape for p in parts], attrs["axis"])
    axis = _concat_axis(attrs["axis"], parts[0][0].ndim)
    arrays = []
    for x, xs, xz in parts:
        if xs == y_scale and xz == y_zp:
            arrays.append(x)
        else:
            arrays.append(_look_up(_table(dtype, xs, xz, y_scale, y_zp, lambda v: v), x))
    return _concat(arrays, {"axis": axis}, ctx)


def _qlinear_concat_infer(attrs, inputs):
    op = "QLinearConcat"
    _concat_triples(list(inputs[2:]))
    group = [(1, "Y_zero_point")]
    scales = [(0, "Y_scale")]
    for k, pos in enumerate(range(2, len(inputs), 3)):
        group += [(pos, f"X{k}"), (pos + 2, f"X{k}'s zero point")]
        scales.append((pos + 1, f"X{k}'s scale"))
    _check_types(op, inputs, [group], scales)
    zp = inputs[1]
    xs = [inputs[i] for i in range(2, len(inputs), 3)]
    if any(x is None or x.shape is None for x in xs):
        return [TensorInfo(zp.dtype, None)]
    return [TensorInfo(zp.dtype, _concat_shape([x.shape for x in xs], attrs["axis"]))]


# --------------------------------------------------------------------------------------
# QLinearGlobalAveragePool, QLinearAveragePool
# --------------------------------------------------------------------------------------


def _to_channels_first(x, channels_last):
    return np.moveaxis(x, -1, 1) if channels_last else x


def _from_channels_first(y, channels_last):
    return np.moveaxis(y, 1, -1) if channels_last else y


def _pool_rank(op, rank):
    if rank < 3:
        raise ShapeError(f"{op}: X has rank {rank}; it needs at least 3 (N, C and the "
                         f"spatial dims)")


def _global_average(x, x_scale, x_zp, y_scale, y_zp):
    """Mean over the spatial dims of channels-first x (N, C, *S), kept as size 1.

    onnxruntime's integer method: the exact sum of x - x_zp over each image, times the
    float32 multiplier x_scale / (y_scale * pixels), the product rounded to float32,
    then rint and y_zp.
    """
    n, c = x.shape[:2]
    pixels = int(np.prod(x.shape[2:]))
    if pixels == 0 and n * c:
        raise ShapeError(f"global average pooling over an empty image: X of shape "
                         f"{list(x.shape)}")
    acc = x.reshape(n, c, pixels).sum(axis=2, dtype=np.int64) - int(x_zp) * pixels
    multiplier = _F32(x_scale) / (_F32(y_scale) * _F32(pixels))
    v = acc.astype(_F32) * multiplier
    return _requantize_f32(v, y_zp).reshape((n, c) + (1,) * (x.ndim - 2))


def _qlinear_global_average_pool_kernel(inputs, attrs, ctx):
    """Y = quantize(GlobalAveragePool(dequantize(X))), (N, C, *S) or with channels_last
    (N, *S, C); see `_global_average` for the arithmetic."""
    op = "QLinearGlobalAveragePool"
    x, x_scale, x_zp, y_scale, y_zp = _padded(inputs, 5)
    x = _quantized(x, op, "X")
    _pool_rank(op, x.ndim)
    params = _params(op, x.dtype, x_scale, x_zp, y_scale, y_zp, _POOL_NAMES)
    last = bool(attrs["channels_last"])
    y = _global_average(_to_channels_first(x, last), *params)
    return (np.ascontiguousarray(_from_channels_first(y, last)),)


def _qlinear_global_average_pool_infer(attrs, inputs):
    _check_types("QLinearGlobalAveragePool", inputs, [((0, "X"), (2, "x_zero_point"),
                                                        (4, "y_zero_point"))],
                 ((1, "x_scale"), (3, "y_scale")))
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    _pool_rank("QLinearGlobalAveragePool", len(x.shape))
    if attrs["channels_last"]:
        return [TensorInfo(x.dtype, (x.shape[0],) + (1,) * (len(x.shape) - 2)
                           + (x.shape[-1],))]
    return [TensorInfo(x.dtype, tuple(x.shape[:2]) + (1,) * (len(x.shape) - 2))]


def _average_geometry(spatial, attrs):
    """(kernel, strides, dilations, pads_begin, pads_end, out_sp) of QLinearAveragePool
    over channels-first spatial dims (no dilations: the op has none)."""
    kernel = [int(k) for k in attrs["kernel_shape"]]
    return (kernel,) + tuple(_pool_geometry(spatial, kernel, attrs,
                                            bool(attrs["ceil_mode"])))


def _qlinear_average_pool_kernel(inputs, attrs, ctx):
    """Y = quantize(AveragePool(dequantize(X))), (N, C, *S) or with channels_last
    (N, *S, C).

    onnxruntime's arithmetic: X dequantized to float32, each window summed in float32
    in row-major tap order (one whole-array pass per kernel tap; taps in the padding add
    an exact 0), divided by the count (the in-bounds taps, or with count_include_pad the
    whole kernel, also where a ceil_mode window overhangs the padding), then
    rint(v / y_scale + y_zp) in float32. A window covering the whole unpadded image is
    the global average (`_global_average`), as in onnxruntime.
    """
    op = "QLinearAveragePool"
    x, x_scale, x_zp, y_scale, y_zp = _padded(inputs, 5)
    x = _quantized(x, op, "X")
    _pool_rank(op, x.ndim)
    xs, xz, ys, yz = _params(op, x.dtype, x_scale, x_zp, y_scale, y_zp, _POOL_NAMES)
    last = bool(attrs["channels_last"])
    xc = _to_channels_first(x, last)
    spatial = xc.shape[2:]
    try:
        kernel, strides, dil, pb, pe, out_sp = _average_geometry(spatial, attrs)
    except (ShapeError, OpAttributeError) as e:
        raise type(e)(f"{op}: {e}") from e
    if kernel == list(spatial) and not any(pb) and not any(pe):
        y = _global_average(xc, xs, xz, ys, yz)
        return (np.ascontiguousarray(_from_channels_first(y, last)),)
    values = dequantize(xc, xs, xz)
    padded = _pad_for_windows(values, kernel, strides, dil, pb, pe, out_sp)
    acc = np.zeros(xc.shape[:2] + tuple(out_sp), _F32)
    for _, slices in _window_slices(kernel, strides, dil, out_sp):
        acc += padded[(slice(None), slice(None)) + slices]
    if attrs["count_include_pad"]:
        acc /= _F32(np.prod(kernel))
    else:
        counts = _window_counts(spatial, kernel, strides, dil, pb, pe, out_sp, False)
        with np.errstate(divide="ignore", invalid="ignore"):
            acc /= counts.astype(_F32)
    v = acc / ys + _F32(yz)
    y = _quantize_values(v.astype(np.float64), x.dtype, 1)
    return (np.ascontiguousarray(_from_channels_first(y, last)),)


def _qlinear_average_pool_infer(attrs, inputs):
    _check_types("QLinearAveragePool", inputs, [((0, "X"), (2, "x_zero_point"),
                                                  (4, "y_zero_point"))],
                 ((1, "x_scale"), (3, "y_scale")))
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    _pool_rank("QLinearAveragePool", len(x.shape))
    last = bool(attrs["channels_last"])
    shape = tuple(x.shape)
    first = (shape[0], shape[-1]) + shape[1:-1] if last else shape
    *_, out_sp = _average_geometry(first[2:], attrs)
    out = (first[0],) + tuple(out_sp) + (first[1],) if last else first[:2] + tuple(out_sp)
    return [TensorInfo(x.dtype, out)]


# --------------------------------------------------------------------------------------
# QLinearSoftmax
# --------------------------------------------------------------------------------------


def _softmax_exp_table(x_scale, reduce_len):
    """onnxruntime's table of exp: entry 255 + t (t = x - row max, -255..0) holds
    float32(exp((t + shift) x_scale)), shift = max(0, ln(FLT_MAX / n) - 5) / x_scale
    for rows of n values, which keeps a row's float32 sum finite."""
    limit = _F32(np.finfo(_F32).max) / _F32(reduce_len)
    shift = max(0.0, float(np.log(np.float64(limit))) - 5.0) / float(x_scale)
    steps = np.arange(256, dtype=np.float64) - 255.0
    return np.exp((steps + shift) * float(x_scale)).astype(_F32)


def _softmax_axis(attrs, rank, op="QLinearSoftmax"):
    axis = attrs["axis"]
    if not -rank <= axis < rank:
        raise OpAttributeError(f"{op}: axis {axis} is out of range for X of rank {rank}")
    return axis % rank


def _softmax_rows(rows, x_scale, y_scale, y_zp):
    """Quantized softmax of each row of 8-bit codes `rows` (int16 array, (R, n)).

    onnxruntime's arithmetic (its x86-64 AVX2 kernel in MLAS): e from
    `_softmax_exp_table` at x - row max; the row's float32 sum in eight lanes over
    blocks of 16 values (lane j adds values j, j + 8, j + 16, ... in order), the
    remaining n % 16 values summed from first to last, then the eight lanes added to that
    one by one; y = rint((e / sum) * floor(1 / y_scale) + y_zp) in float32.
    The order is onnxruntime's, (e / sum) * floor(1 / y_scale): a product with 1 / sum
    puts ties such as 63.5 on the other side, e * floor(...) first overflows for a row
    of one value (e is then near FLT_MAX / e^5), and e * (floor(...) / sum) misses
    other ties (measured on quantized Llama and MobileViT attention).
    Measured: equal to onnxruntime for rows under 32 values; for longer rows one step
    off on about 1e-5 of the outputs (a row sum one ulp apart puts a .5 tie on the other
    side: onnxruntime's order for those rows is not reproduced exactly). With a huge
    X_scale (every value a maximum or nothing: exact ties such as 55.5) and a y_scale
    other than the 1/255 and 1/256 the quantization tools write, a few rows still come
    out one step apart.
    """
    r, n = rows.shape
    e = _softmax_exp_table(x_scale, n)[rows - rows.max(axis=1, keepdims=True) + 255]
    full = n // 16 * 16
    lanes = np.zeros((r, 8), _F32)
    if full:
        lanes = np.cumsum(e[:, :full].reshape(r, full // 8, 8), axis=1, dtype=_F32)[:, -1]
    rest = np.zeros((r, 1), _F32)
    if full < n:
        rest = np.cumsum(e[:, full:], axis=1, dtype=_F32)[:, -1:]
    total = np.cumsum(np.concatenate([rest, lanes], axis=1), axis=1, dtype=_F32)[:, -1:]
    v = (e / total) * np.floor(_F32(1) / _F32(y_scale)) + _F32(y_zp)
    return _quantize_values(v.astype(np.float64), y_zp.dtype, 1)


def _qlinear_softmax_kernel(inputs, attrs, ctx):
    """Y = quantize(Softmax(dequantize(X))) along `axis`: for opset < 13 over the dims
    from `axis` on (X seen as 2-D), from opset 13 over `axis` alone; see
    `_softmax_rows` for the arithmetic. x_zero_point is checked but not used: softmax
    does not see a shift of its input (onnxruntime ignores it too).
    """
    op = "QLinearSoftmax"
    x, x_scale, x_zp, y_scale, y_zp = _padded(inputs, 5)
    x = _quantized(x, op, "X")
    if y_zp is None:
        raise ShapeError(f"{op}: y_zero_point is required")
    xs, _, ys, yz = _params(op, x.dtype, x_scale, x_zp, y_scale, y_zp, _SOFTMAX_NAMES)
    if x.ndim == 0:
        raise ShapeError(f"{op}: X must have rank 1 or more, got a scalar")
    if not xs > 0:  # False for NaN too
        # the exp table divides by it; onnxruntime refuses it too
        raise ShapeError(f"{op}: X_scale must be positive, got {float(xs)}")
    axis = _softmax_axis(attrs, x.ndim)
    if x.size == 0:
        return (x.copy(),)
    if np.isinf(xs):
        # what onnxruntime's quantize_static writes when calibration saw an additive
        # attention mask's float32 min (max - min overflows). onnxruntime runs it: its
        # exp table is NaN at the row max (0 * inf) and 0 elsewhere, and every NaN
        # result converts to 0, whatever y_zero_point and the type (measured)
        return (np.zeros_like(x),)
    if attrs["opset"] < 13:
        moved = x
        n = int(np.prod(x.shape[axis:]))
    else:
        moved = np.moveaxis(x, axis, -1)
        n = x.shape[axis]
    y = _softmax_rows(moved.reshape(-1, n).astype(np.int16), xs, ys, yz).reshape(moved.shape)
    if attrs["opset"] >= 13:
        y = np.moveaxis(y, -1, axis)
    return (np.ascontiguousarray(y),)


def _qlinear_softmax_infer(attrs, inputs):
    _check_types("QLinearSoftmax", inputs, [((0, "X"), (2, "x_zero_point"),
                                              (4, "y_zero_point"))],
                 ((1, "X_scale"), (3, "y_scale")))
    x = inputs[0]
    if x.shape is not None:
        _softmax_axis(attrs, len(x.shape))
    return infer_same(attrs, inputs)


# --------------------------------------------------------------------------------------
# QGemm
# --------------------------------------------------------------------------------------


def _per_column(p, n, op, what):
    """QGemm's b_scale or b_zero_point: one value (0-d or [1]) or an [N] vector."""
    p = np.asarray(p)
    if p.ndim == 0 or (p.ndim == 1 and p.shape[0] in (1, n)):
        return p.reshape(()) if p.size == 1 else p
    raise ShapeError(f"{op}: {what} of shape {list(p.shape)} must be a scalar or a vector "
                     f"of 1 or N = {n} values")


def _gemm_c(c, m, n, op="QGemm"):
    """C as a float64 array broadcasting to (M, N), checked (int32, unidirectional)."""
    c = np.asarray(c)
    if c.dtype != np.int32:
        raise ShapeError(f"{op}: C must be int32, got {c.dtype}")
    if c.ndim > 2 or any(d not in (1, o) for d, o in zip(c.shape[::-1], (n, m))):
        raise ShapeError(f"{op}: C of shape {list(c.shape)} does not broadcast to the "
                         f"result's shape [{m}, {n}]")
    return c.astype(np.float64)


def _gemm_operands(a, b, attrs, op="QGemm"):
    """A (M, K) and B (K, N) after the transposes; raises ShapeError naming the input."""
    for name, t in (("A", a), ("B", b)):
        if t.ndim != 2:
            raise ShapeError(f"{op}: {name} must be 2-D, got shape {list(t.shape)}")
    a = a.T if attrs["transA"] else a
    b = b.T if attrs["transB"] else b
    if a.shape[1] != b.shape[0]:
        raise ShapeError(f"{op}: inner dims differ: A gives K = {a.shape[1]}, B gives "
                         f"K = {b.shape[0]} (transA={attrs['transA']}, "
                         f"transB={attrs['transB']})")
    return a, b


def _qgemm_kernel(inputs, attrs, ctx):
    """Y = alpha (A - a_zp)(B - b_zp) a_scale b_scale + C a_scale b_scale, quantized with
    y_scale and y_zero_point, or float32 when they are omitted (C is int32 in the scale
    alpha a_scale b_scale, zero point 0; b's scale and zero point per tensor or per column).

    onnxruntime's arithmetic: the exact integer product plus C, converted to float32
    and times the float32 multiplier alpha a_scale b_scale (/ y_scale), then rint and
    y_zero_point. Given y_scale without y_zero_point the output is that float32 product.
    """
    op = "QGemm"
    a, a_scale, a_zp, b, b_scale, b_zp, c, y_scale, y_zp = _padded(inputs, 9)
    a = _quantized(a, op, "A")
    b = _quantized(b, op, "B")
    a2, b2 = _gemm_operands(a, b, attrs)
    m, n = a2.shape[0], b2.shape[1]
    sa = _scale(a_scale, op, "a_scale")
    za = _zero_point(a_zp, a.dtype, op, "a_zero_point")
    sb = _per_column(_scale_vector(b_scale, op, "b_scale"), n, op, "b_scale")
    zb = None if b_zp is None else _per_column(b_zp, n, op, "b_zero_point")
    if zb is not None and zb.dtype != b.dtype:
        raise ShapeError(f"{op}: b_zero_point is {zb.dtype}, but B is {b.dtype}")
    if zb is not None and sb.size != zb.size:
        raise ShapeError(f"{op}: b_scale ({sb.size} values) and b_zero_point ({zb.size}) "
                         "must have the same shape")
    if y_zp is not None and y_scale is None:
        raise ShapeError(f"{op}: y_zero_point is given without y_scale")
    acc = _int_matmul(_shift_rows(a2, za, op, "a_zero_point", "A"),
                      _shift_cols(b2, zb, op, "b_zero_point", "B"))
    if c is not None:
        acc = acc + _gemm_c(c, m, n)
    multiplier = _F32(_F32(attrs["alpha"]) * _F32(sa)) * sb.astype(_F32)
    if y_scale is not None:
        multiplier = multiplier / _F32(_scale(y_scale, op, "y_scale"))
    v = acc.astype(_F32) * multiplier
    if y_zp is None:
        return (np.asarray(v, _F32).reshape(m, n),)
    y_zp = _quantized(y_zp, op, "y_zero_point")
    return (_requantize_f32(v, _single(y_zp, op, "y_zero_point")).reshape(m, n),)


def _scale_vector(s, op, what):
    """A scale that may hold one value per column: float32, checked."""
    if s is None:
        raise ShapeError(f"{op}: {what} is required")
    s = np.asarray(s)
    if s.dtype != np.float32:
        raise ShapeError(f"{op}: {what} must be float32, got {s.dtype}")
    return s


def _qgemm_infer(attrs, inputs):
    _check_types("QGemm", inputs, [((0, "A"), (2, "a_zero_point")),
                                   ((3, "B"), (5, "b_zero_point")), ((8, "y_zero_point"),)],
                 ((1, "a_scale"), (4, "b_scale"), (7, "y_scale")))
    c = inputs[6] if len(inputs) > 6 else None
    if c is not None and c.dtype is not None and np.dtype(c.dtype) != np.int32:
        raise ShapeError(f"QGemm: C must be int32, got {c.dtype}")
    a, b = inputs[0], inputs[3]
    y_zp = inputs[8] if len(inputs) > 8 else None
    dtype = y_zp.dtype if y_zp is not None else np.dtype(np.float32)
    if a.shape is None or b.shape is None:
        return [TensorInfo(dtype, None)]
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise ShapeError(f"QGemm: A and B must be 2-D, got {list(a.shape)} and "
                         f"{list(b.shape)}")
    m, ka = a.shape[::-1] if attrs["transA"] else a.shape
    kb, n = b.shape[::-1] if attrs["transB"] else b.shape
    if ka is not None and kb is not None and ka != kb:
        raise ShapeError(f"QGemm: inner dims differ ({ka} vs {kb})")
    return [TensorInfo(dtype, (m, n))]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

_EIGHT_BIT_NAMES = ("int8", "uint8")
_UNARY_INPUTS = ("X", "X_scale", "X_zero_point?", "Y_scale", "Y_zero_point?")
_BINARY_INPUTS = ("A", "A_scale", "A_zero_point?", "B", "B_scale", "B_zero_point?",
                  "C_scale", "C_zero_point?")

OPS = (
    define("QGemm", ("A", "a_scale", "a_zero_point", "B", "b_scale", "b_zero_point", "C?",
                     "y_scale?", "y_zero_point?"), ("Y",), _qgemm_kernel,
           (("alpha", "float", 1.0), ("transA", "int", 0), ("transB", "int", 0)),
           infer=_qgemm_infer, domain=_DOMAIN, dtypes=_EIGHT_BIT_NAMES,
           doc="Quantized Gemm: 8-bit A and B, int32 C, 8-bit or float32 output."),
    define("QLinearAdd", _BINARY_INPUTS, ("C",), _qlinear_add_kernel,
           infer=_binary_infer("QLinearAdd"),
           domain=_DOMAIN, dtypes=_EIGHT_BIT_NAMES,
           doc="Quantized elementwise Add with numpy broadcasting."),
    define("QLinearAveragePool", ("X", "x_scale", "x_zero_point?", "y_scale",
                                  "y_zero_point?"), ("Y",), _qlinear_average_pool_kernel,
           (("auto_pad", "string", "NOTSET"), ("ceil_mode", "int", 0),
            ("channels_last", "int", 0), ("count_include_pad", "int", 0),
            ("kernel_shape", "ints"), ("pads", "ints", None), ("strides", "ints", None)),
           infer=_qlinear_average_pool_infer, domain=_DOMAIN, dtypes=_EIGHT_BIT_NAMES,
           doc="Quantized AveragePool, NCHW or (channels_last) NHWC."),
    define("QLinearConcat", ("Y_scale", "Y_zero_point", "inputs*"), ("Y",),
           _qlinear_concat_kernel, (("axis", "int"),), infer=_qlinear_concat_infer,
           domain=_DOMAIN,
           doc="Concat of (X, X_scale, X_zero_point) triples, requantized to Y's scale."),
    define("QLinearGlobalAveragePool", ("X", "x_scale", "x_zero_point", "y_scale",
                                        "y_zero_point"), ("Y",),
           _qlinear_global_average_pool_kernel, (("channels_last", "int", 0),),
           infer=_qlinear_global_average_pool_infer, domain=_DOMAIN,
           dtypes=_EIGHT_BIT_NAMES, doc="Quantized GlobalAveragePool, NCHW or NHWC."),
    define("QLinearLeakyRelu", _UNARY_INPUTS, ("Y",),
           _lookup_kernel("QLinearLeakyRelu", _leaky_relu), (("alpha", "float", 0.01),),
           infer=_unary_infer("QLinearLeakyRelu"), domain=_DOMAIN, dtypes=_EIGHT_BIT_NAMES,
           doc="Quantized LeakyRelu through a 256-entry table."),
    define("QLinearMul", _BINARY_INPUTS, ("C",), _qlinear_mul_kernel,
           infer=_binary_infer("QLinearMul"),
           domain=_DOMAIN, dtypes=_EIGHT_BIT_NAMES,
           doc="Quantized elementwise Mul with numpy broadcasting."),
    define("QLinearSigmoid", _UNARY_INPUTS, ("Y",),
           _lookup_kernel("QLinearSigmoid", _sigmoid), infer=_unary_infer("QLinearSigmoid"),
           domain=_DOMAIN,
           dtypes=_EIGHT_BIT_NAMES, doc="Quantized Sigmoid through a 256-entry table."),
    define("QLinearSoftmax", ("X", "X_scale", "x_zero_point?", "y_scale", "y_zero_point"),
           ("Y",), _qlinear_softmax_kernel, (("axis", "int", -1), ("opset", "int")),
           infer=_qlinear_softmax_infer, domain=_DOMAIN, dtypes=_EIGHT_BIT_NAMES,
           doc="Quantized Softmax (onnxruntime's exp table)."),
)

KNOWN_FAILURES: dict[str, str] = {}

"""The rest of TF1's tf.compat.v1 names that programs written for TF1 still call: the
old casts (to_float, ...), Python 2's div, div_no_nan and the truncating divisions,
arg_max / arg_min, reverse_v2, where_v2, logical_xor, erfc, rint, log_sigmoid,
saturate_cast, scalar_mul, identity_n, shape_n, parallel_stack, is_tensor, the
assert_* family not in `debugging.py`, tensor_scatter_nd_*, the segment reductions,
space_to_batch_nd / batch_to_space_nd, extract_image_patches, the deprecated variable
and initializer aliases, get_collection_ref / add_to_collections and GraphKeys.

Names, argument order and defaults are TF1's. Each function is a few registered ONNX
ops (ScatterND with a reduction, GatherND, Pad, Reshape, Transpose, Slice, Where, ...)
so graphs using them export; gradients are TF1's where TF1 has them (the extremum and
product scatters get TF's rules through `gradient_override_map`, the others come from
their ops). Bad arguments are refused while building with a message naming the
function and the argument. Where TF1 checks values when the graph runs, so does the
run, with an error naming the node: ExecutionError for an integer division by zero or
a failed assertion, ScatterND's ShapeError for an index or segment id out of range.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import ExecutionError, OneGraphError, ShapeError
from ..format import DType
from . import api, api_extra, api_math, debugging
from . import graph as _g
from .api import _brief, _check_axis, _int_arg, _int_list, _t, _tensor_list
from .api_extra import (_cast, _dims_slice, _dtype_arg, _i64, _numeric, _rank, _scalar,
                        _with_segment_rows)
from .gradients import IndexedSlices, RegisterGradient, gradient_override_map
from .graph import Operation, Tensor
from .packing import holds_tensor, int64_tensor
from .variables import (Variable, global_variables, global_variables_initializer,
                        local_variables_initializer, variables_initializer)

float16, bfloat16, float32, float64 = (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32,
                                       DType.FLOAT64)
int32, int64, bool_ = DType.INT32, DType.INT64, DType.BOOL
_FLOATS = (float16, bfloat16, float32, float64)
_INT64_MAX = np.iinfo(np.int64).max


# --------------------------------------------------------------------------- helpers

def _finfo(np_type):
    """np.finfo, also for ml_dtypes' bfloat16 (which numpy's finfo does not know)."""
    try:
        return np.finfo(np_type)
    except (TypeError, ValueError):
        import ml_dtypes

        return ml_dtypes.finfo(np_type)


def _float_input(x, what: str) -> Tensor:
    """x as a float tensor.

    Raises:
        TypeError: it is of another dtype (names `what`), as TF1's float-only kernels.
    """
    t = _t(x)
    if t.dtype not in _FLOATS:
        raise TypeError(f"{what} must be a float tensor (float16, bfloat16, float32 or "
                        f"float64), got {t.dtype.short_name}")
    return t


def _message_arg(message, what: str) -> str:
    """TF1's message prefix ("" when None).

    Raises:
        TypeError: message is not a str or None.
    """
    if message is not None and not isinstance(message, str):
        raise TypeError(f"{what}: message must be a str, got {type(message).__name__}")
    return message or ""


def _summarize_arg(summarize, what: str):
    if summarize is not None and (isinstance(summarize, (bool, np.bool_)) or
                                  not isinstance(summarize, (int, np.integer))):
        raise TypeError(f"{what}: summarize must be an int, got "
                        f"{type(summarize).__name__} {_brief(summarize)}")
    return None if summarize is None else int(summarize)


def _data_arg(data, what: str):
    if data is not None and not isinstance(data, (list, tuple)):
        raise TypeError(f"{what}: data must be a list of tensors or strings, got "
                        f"{type(data).__name__}")
    return data


def _where(condition: Tensor, x, y, name=None) -> Tensor:
    """x where the bool tensor condition holds, else y, all three broadcast together
    (ONNX Where; og.where keeps TF1's row-selecting form for a 1-D condition)."""
    a, b = api._pair(x, y, "Where")
    return a.graph.op("Where", [condition, a, b], name=name)


def _dim(x: Tensor, i: int):
    """Dim i of x: an int when known while building, else an int64 scalar tensor read
    from the run-time shape."""
    if x.shape is not None and x.shape[i] is not None:
        return int(x.shape[i])
    return api.reshape(x.graph.op("Shape", [x], {"start": i, "end": i + 1}), [])


def _dim_mul(a, b: int):
    return a * b if isinstance(a, int) else a * np.int64(b)


def _dim_div(a, b: int):
    if isinstance(a, int):
        return a // b
    return a.graph.op("Div", [a, a.graph.constant(np.int64(b))])  # exact here


# --------------------------------------------------------------------------- casts

def _to(dtype: DType, what: str, default_name: str):
    def convert(x, name=default_name) -> Tensor:
        _g.check_name(name, what)
        t = _t(x)
        if t.dtype is DType.STRING:
            raise TypeError(f"{what}: cannot cast the string tensor {t.name!r} to "
                            f"{dtype.short_name}")
        return api.cast(t, dtype, name=name)

    convert.__name__ = what
    convert.__doc__ = (f"x cast to {dtype.short_name} (TF1's deprecated `tf.{what}`; "
                       "x itself when it already is).\n\n    Raises:\n        TypeError: "
                       "x is a string tensor, or name is not a str.\n        "
                       "OneGraphError: a plain x is not array-like.\n    ")
    return convert


to_float = _to(float32, "to_float", "ToFloat")
to_double = _to(float64, "to_double", "ToDouble")
to_int32 = _to(int32, "to_int32", "ToInt32")
to_int64 = _to(int64, "to_int64", "ToInt64")
to_bfloat16 = _to(bfloat16, "to_bfloat16", "ToBFloat16")


def saturate_cast(value, dtype, name=None) -> Tensor:
    """value cast to dtype without overflow, as TF's tf.saturate_cast: first clipped to
    the largest range within dtype's that value's own dtype holds (2147483520.0 is the
    largest float32 that fits int32; infinities become the finite limits), then cast.

    Raises:
        TypeError: value or dtype is a string type, or name is not a str.
        OneGraphError: dtype names no dtype.
    """
    _g.check_name(name, "saturate_cast")
    out = _dtype_arg(dtype, None, "saturate_cast: dtype")
    x = _t(value)
    for dt, what in ((x.dtype, "value"), (out, "dtype")):
        numeric = dt is bfloat16 or (dt not in (DType.STRING, DType.UNDEFINED) and
                                     dt.numpy.kind in "iufb")
        if not numeric:
            raise TypeError(f"saturate_cast: {what} must be numeric or bool, got "
                            f"{dt.short_name}")
    if x.dtype is not bool_:
        lo, hi = _saturation_bounds(x.dtype, out)
        x = api.clip_by_value(x, lo, hi)
    return _cast(x, out, name=name)


def _limits(dt: DType) -> tuple:
    """(lowest, highest) finite values of dt as exact fractions."""
    if dt is bool_:
        return Fraction(0), Fraction(1)
    kind = np.dtype(dt.numpy).kind
    if kind in "iu":
        info = np.iinfo(dt.numpy)
        return Fraction(int(info.min)), Fraction(int(info.max))
    info = _finfo(dt.numpy)
    return Fraction(float(info.min)), Fraction(float(info.max))


def _representable(value: Fraction, dt: DType, up: bool) -> np.ndarray:
    """The value of dt nearest to `value` on the side towards 0 (value >= it when
    `up` is False, <= it when True), as a 0-d array of dt."""
    np_type = dt.numpy
    if np.dtype(np_type).kind in "iu":
        return np.asarray(math.ceil(value) if up else math.floor(value), np_type)
    v = np.asarray(float(value)).astype(np_type)
    if up and Fraction(float(v)) < value:
        v = np.nextafter(v, np.asarray(np.inf, np_type))
    elif not up and Fraction(float(v)) > value:
        v = np.nextafter(v, np.asarray(-np.inf, np_type))
    return np.asarray(v, np_type)


def _saturation_bounds(src: DType, out: DType) -> tuple:
    """The clip bounds (of src's dtype) of saturate_cast from src to out."""
    s_lo, s_hi = _limits(src)
    o_lo, o_hi = _limits(out)
    return (_representable(max(s_lo, o_lo), src, True),
            _representable(min(s_hi, o_hi), src, False))


# --------------------------------------------------------------------------- divisions

def _division_operands(x, y, name, what: str) -> tuple:
    """(a, b, floats) for the division `what`: x and y as tensors of one numeric dtype
    (api_math's pairing) and whether that dtype is a float one.

    Raises:
        TypeError: name is not a str.
        ShapeError: x and y are tensors of different dtypes, or not numbers.
        OneGraphError: a plain operand does not convert to the other's dtype.
    """
    _g.check_name(name, what)
    a, b = api_math._operands(x, y, what)
    return a, b, api_math._is_float(a, what)


def div(x, y, name=None) -> Tensor:
    """x / y with Python 2's rule, as TF1's tf.div: floor division (towards -inf) for
    integers, true division for floats. A plain y takes x's dtype. Integer division by
    zero fails the run (ExecutionError). Float division has TF's gradient; integer
    division none.

    Raises:
        TypeError: name is not a str.
        ShapeError: x and y are tensors of different dtypes, or not numbers.
        OneGraphError: a plain operand does not convert to the other's dtype.
    """
    a, b, floats = _division_operands(x, y, name, "div")
    if floats:
        return api.divide(a, b, name=name)
    return api_math.floordiv(a, b, name=name)


def div_no_nan(x, y, name=None) -> Tensor:
    """x / y, but 0 wherever y is 0 (even where x is NaN or infinite), as
    tf.div_no_nan; integer operands are divided in floats as tf.truediv does (int8 /
    int16 / uint8 / uint16 in float32, wider ones in float64). Its gradient is TF's:
    dx = div_no_nan(dz, y), dy = -dz x / y^2 where y != 0, 0 where y == 0.

    Raises:
        TypeError: name is not a str.
        ShapeError: x and y are tensors of different dtypes, or not numbers.
        OneGraphError: a plain operand does not convert to the other's dtype.
    """
    a, b, floats = _division_operands(x, y, name, "div_no_nan")
    if not floats:
        wide = float64 if a.dtype.itemsize >= 4 else float32
        a, b = api.cast(a, wide), api.cast(b, wide)
    zero = api.equal(b, 0)
    quotient = api.divide(a, _where(zero, api.ones_like(b), b))
    return _where(zero, api.zeros_like(quotient), quotient, name=name)


def truncatediv(x, y, name=None) -> Tensor:
    """x / y rounded towards zero (C's division: -7 / 2 = -3), as tf.truncatediv; for
    floats trunc(x / y). Integer division by zero fails the run (ExecutionError). No
    gradient, as in TF.

    Raises:
        TypeError: name is not a str.
        ShapeError: x and y are tensors of different dtypes, or not numbers.
        OneGraphError: a plain operand does not convert to the other's dtype.
    """
    a, b, floats = _division_operands(x, y, name, "truncatediv")
    if not floats:
        return a.graph.op("Div", [a, b], name=name)  # ONNX's integer Div truncates
    q = api.divide(a, b)
    trunc = _where(api.less(q, 0), api.ceil(q), api.floor(q))
    return api.stop_gradient(trunc, name=name)


def truncatemod(x, y, name=None) -> Tensor:
    """The remainder of truncatediv, with the sign of x (C's fmod: truncatemod(-7, 2)
    = -1), as tf.truncatemod (ONNX Mod with fmod=1). Integer division by zero fails
    the run (ExecutionError). No gradient, as in TF.

    Raises:
        TypeError: name is not a str.
        ShapeError: x and y are tensors of different dtypes, or not numbers.
        OneGraphError: a plain operand does not convert to the other's dtype.
    """
    a, b, floats = _division_operands(x, y, name, "truncatemod")
    if not floats:
        return a.graph.op("Mod", [a, b], {"fmod": 1}, name=name)
    return api.stop_gradient(a.graph.op("Mod", [a, b], {"fmod": 1}), name=name)


def floor_div(x, y, name=None) -> Tensor:
    """floor(x / y), as tf.floor_div (TF's FloorDiv op: integers round towards -inf).
    Integer division by zero fails the run (ExecutionError). No gradient, as in TF.

    Raises:
        TypeError: name is not a str.
        ShapeError: x and y are tensors of different dtypes, or not numbers.
        OneGraphError: a plain operand does not convert to the other's dtype.
    """
    a, b, _ = _division_operands(x, y, name, "floor_div")  # refuses bools and strings
    return api_math.floordiv(a, b, name=name)


# --------------------------------------------------------------------------- arg_max

def _arg_extremum(op_type: str, what: str, input, dimension, output_type, name):  # noqa: A002
    _g.check_name(name, what)
    axis = _int_arg(dimension, f"{what}: dimension")
    dt = _dtype_arg(output_type, (int32, int64), f"{what}: output_type")
    x = _t(input)
    _numeric(x, f"{what}: input")
    if x.shape is not None and len(x.shape) == 0:
        raise ShapeError(f"{what}: input must have rank >= 1, got the scalar {x.name!r}")
    _check_axis(axis, x, f"{what}: dimension")
    # ONNX takes the first of equal values (select_last_index=0), as TF does
    out = x.graph.op(op_type, [x], {"axis": axis, "keepdims": 0})
    return _cast(out, dt, name=name)


def arg_max(input, dimension, output_type=int64, name=None) -> Tensor:  # noqa: A002
    """The index of the largest value along axis `dimension` (the first of equal
    ones), as TF1's tf.arg_max (tf.argmax's old name); int64 unless output_type is
    int32. `dimension` must be a Python int.

    Raises:
        TypeError: dimension is not an int, output_type is not int32 or int64, or name
            is not a str.
        ShapeError: input is not numeric or is a scalar, or dimension is out of range.
    """
    return _arg_extremum("ArgMax", "arg_max", input, dimension, output_type, name)


def arg_min(input, dimension, output_type=int64, name=None) -> Tensor:  # noqa: A002
    """The index of the smallest value along axis `dimension` (the first of equal
    ones), as TF1's tf.arg_min; int64 unless output_type is int32.

    Raises:
        TypeError: dimension is not an int, output_type is not int32 or int64, or name
            is not a str.
        ShapeError: input is not numeric or is a scalar, or dimension is out of range.
    """
    return _arg_extremum("ArgMin", "arg_min", input, dimension, output_type, name)


# --------------------------------------------------------------------------- elementwise

def reverse_v2(tensor, axis, name=None) -> Tensor:
    """tensor with its elements reversed along each axis of `axis` (an int or a list
    of ints; negative ones count from the end), as tf.reverse_v2.

    Raises:
        TypeError: axis is not an int or a list of ints, or name is not a str.
        ShapeError: an axis is out of range or given twice.
    """
    _g.check_name(name, "reverse_v2")
    axes = api._axes(axis, "reverse_v2: axis")
    x = _t(tensor)
    for a in axes:
        _check_axis(a, x, "reverse_v2: axis")
    if x.shape is not None and len({a % len(x.shape) for a in axes}) != len(axes):
        raise ShapeError(f"reverse_v2: axis {axes} names an axis twice")
    return api_math.reverse(x, axes, name=name)


def where_v2(condition, x=None, y=None, name=None) -> Tensor:
    """x where condition holds, else y, with all three broadcast together (numpy's
    rules), as tf.where_v2. Without x and y: the coordinates of the true (non-zero)
    elements of condition, an int64 [count, rank] tensor in row-major order.

    Raises:
        ValueError: only one of x and y is given.
        TypeError: name is not a str.
        ShapeError: condition is not bool (with x and y), x and y are tensors of
            different dtypes, or the shapes do not broadcast.
        OneGraphError: a plain operand does not convert.
    """
    _g.check_name(name, "where_v2")
    if (x is None) != (y is None):
        raise ValueError("where_v2: give both x and y, or neither")
    if x is None:
        c = _t(condition)
        if c.dtype is DType.STRING:
            raise ShapeError("where_v2: condition must be bool or numeric, got string")
        g = c.graph
        if c.shape is not None and len(c.shape) == 0:
            hits = g.op("NonZero", [api.reshape(c, [1])])
            hits = g.op("Slice", [hits, _i64(g, [0]), _i64(g, [0]), _i64(g, [0])])
        else:
            hits = g.op("NonZero", [c])
        return api.transpose(hits, [1, 0], name=name)
    a, b = api._pair(x, y, "where_v2")
    cond = _g.bool_tensor(condition, "where_v2: condition", a.graph)
    return a.graph.op("Where", [cond, a, b], name=name)


def logical_xor(x, y, name="LogicalXor") -> Tensor:
    """x != y of bool tensors, with broadcasting, as tf.logical_xor (ONNX Xor).

    Raises:
        TypeError: name is not a str.
        ShapeError: x or y is not bool, or the shapes do not broadcast.
        OneGraphError: a plain operand does not convert to bool.
    """
    _g.check_name(name, "logical_xor")
    g = api._graph_of(x, y)
    a = _g.bool_tensor(x, "logical_xor: x", g)
    b = _g.bool_tensor(y, "logical_xor: y", g)
    return g.op("Xor", [a, b], name=name)


# Numerical Recipes' erfcc (Chebyshev fit; fractional error below 1.2e-7 everywhere,
# 1.07e-7 checked against math.erfc), evaluated in float64 for the narrow floats.
_ERFCC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
          -1.13520398, 1.48851587, -0.82215223, 0.17087277)
# float64: 1 - erf(x) below the split (relative error <= 1.7e-14 there), above it the
# continued fraction erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/...)))
# to this depth (converged to rounding, checked against math.erfc), with exp(-x^2)
# taken as exp(-h^2) exp(-(x - h)(x + h)) for h = x rounded down to a multiple of
# 2^-12: h^2 is exact, so the rounding of x^2 (x^2 eps, 1e-13 at x = 26) is avoided.
_ERFC_SPLIT = 1.5
_ERFC_DEPTH = 80
_ERFC_GRID = 4096.0
_ERFC_ZERO = 28.0


def _erfc_narrow(x: Tensor) -> Tensor:
    """erfc of a float64 tensor to float32 precision (Numerical Recipes' erfcc)."""
    z = api.abs(x)
    t = 1.0 / (z * 0.5 + 1.0)
    poly = t * _ERFCC[-1]
    for c in _ERFCC[-2:0:-1]:
        poly = (poly + c) * t
    tail = t * api.exp(poly + _ERFCC[0] - z * z)
    return _where(api.greater_equal(x, 0.0), tail, 2.0 - tail)


def _erfc_wide(x: Tensor) -> Tensor:
    """erfc of a float64 tensor to within 2e-14 relative."""
    near = 1.0 - api.erf(x)
    # the branch not taken stays finite; erfc is 0 in float64 from 27.3 on
    far_x = api.minimum(api.maximum(x, _ERFC_SPLIT), _ERFC_ZERO)
    f = far_x
    for k in range(_ERFC_DEPTH, 0, -1):
        f = far_x + (0.5 * k) / f
    h = api.floor(far_x * _ERFC_GRID) / _ERFC_GRID
    gauss = api.exp(-(h * h)) * api.exp(-((far_x - h) * (far_x + h)))
    far = gauss / (f * math.sqrt(math.pi))
    return _where(api.less(x, _ERFC_SPLIT), near, far)


def erfc(x, name=None) -> Tensor:
    """The complementary error function 1 - erf(x), accurate where it is tiny (no
    cancellation), as tf.math.erfc: float64 to within 2e-14 relative, the narrower
    floats computed in float64 to within 1.2e-7 (Numerical Recipes' erfcc). Its
    gradient is TF's, -2/sqrt(pi) exp(-x^2).

    Raises:
        TypeError: x is not a float tensor, or name is not a str.
    """
    _g.check_name(name, "erfc")
    x = _float_input(x, "erfc: x")
    if x.dtype is float64:
        value = _erfc_wide(x)
    else:
        value = api.cast(_erfc_narrow(api.cast(x, float64)), x.dtype)
    # the value without a gradient, plus erf(x) - erf(x) (exactly 0) for its gradient
    e = api.erf(x)
    return api.subtract(api.stop_gradient(value), e - api.stop_gradient(e), name=name)


def rint(x, name=None) -> Tensor:
    """x rounded to the nearest integer, halves to even (rint(2.5) = 2, rint(-1.5) =
    -2), as tf.rint (ONNX Round). No gradient, as in TF.

    Raises:
        TypeError: x is not a float tensor, or name is not a str.
    """
    _g.check_name(name, "rint")
    x = _float_input(x, "rint: x")
    return x.graph.op("Round", [x], name=name)


def log_sigmoid(x, name=None) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x) without overflow, as tf.log_sigmoid:
    min(x, 0) - log1p(exp(-|x|)), written with two Wheres so that the gradient is
    sigmoid(-x) everywhere (1/2 at 0, as TF's).

    Raises:
        TypeError: x is not a float tensor, or name is not a str.
    """
    _g.check_name(name, "log_sigmoid")
    x = _float_input(x, "log_sigmoid: x")
    positive = api.greater_equal(x, 0.0)
    below = _where(positive, api.negative(x), x)        # -|x|
    low = _where(positive, api.zeros_like(x), x)        # min(x, 0)
    return api.subtract(low, api_math.log1p(api.exp(below)), name=name)


def scalar_mul(scalar, x, name=None):
    """scalar * x for a 0-D scalar (a number or a scalar tensor, converted to x's
    dtype), as tf.scalar_mul; for an og.IndexedSlices x, its values are scaled and
    an IndexedSlices returned.

    Raises:
        ValueError: scalar is not 0-D (or of unknown rank).
        TypeError: name is not a str.
        ShapeError: scalar is a tensor of another dtype than x.
        OneGraphError: a plain scalar does not convert to x's dtype.
    """
    _g.check_name(name, "scalar_mul")
    values = x.values if isinstance(x, IndexedSlices) else _t(x)
    g = values.graph
    try:
        s = g.convert(scalar, None if _g._is_symbolic(scalar) else _g._dtype_for(values))
    except OneGraphError as e:
        raise _g._named(e, "scalar_mul: scalar") from None
    if s.dtype != values.dtype:
        raise ShapeError(f"scalar_mul: scalar is {s.dtype.short_name} but x is "
                         f"{values.dtype.short_name}")
    if s.shape is None or len(s.shape) != 0:
        raise ValueError(f"scalar_mul: scalar must be a 0-D value, got shape "
                         f"{None if s.shape is None else list(s.shape)}")
    out = g.op("Mul", [s, values], name=name)
    return IndexedSlices(out, x.indices, x.like) if isinstance(x, IndexedSlices) else out


# --------------------------------------------------------------------------- lists

def _tensors(values, what: str) -> list:
    values = _tensor_list(values, what)
    g = api._graph_of(*values)
    return [_t(v, graph=g) for v in values]


def identity_n(input, name=None) -> list:  # noqa: A002 - TF's name
    """A list with an identity of each tensor of `input`, as tf.identity_n (gradients
    pass through each).

    Raises:
        TypeError: input is not a list or tuple, or name is not a str.
        ValueError: input is empty.
    """
    _g.check_name(name, "identity_n")
    ts = _tensors(input, "identity_n: input")
    g = ts[0].graph
    with g.name_scope(name or "IdentityN"):
        return [g.op("Identity", [t]) for t in ts]


def shape_n(input, out_type=int32, name=None) -> list:  # noqa: A002 - TF's name
    """The run-time shape of each tensor of `input` (int32 unless out_type is int64),
    as tf.shape_n; constants where the shapes are known while building.

    Raises:
        TypeError: input is not a list or tuple, out_type is not int32 or int64, or
            name is not a str.
        ValueError: input is empty.
    """
    _g.check_name(name, "shape_n")
    dt = _dtype_arg(out_type, (int32, int64), "shape_n: out_type")
    ts = _tensors(input, "shape_n: input")
    g = ts[0].graph
    with g.name_scope(name or "ShapeN"):
        return [_cast(g.op("Shape", [t]), dt) for t in ts]


def parallel_stack(values, name="parallel_stack") -> Tensor:
    """The tensors of `values` stacked along a new first axis, as tf.parallel_stack,
    which (unlike tf.stack) needs their shapes fully known while building.

    Raises:
        TypeError: values is not a list or tuple, or name is not a str.
        ValueError: values is empty.
        ShapeError: a shape is not fully known, the shapes differ, or the dtypes do.
    """
    _g.check_name(name, "parallel_stack")
    values = _tensor_list(values, "parallel_stack: values")
    ts = api._joined(values, "parallel_stack")
    first = ts[0].shape
    for k, t in enumerate(ts):
        if t.shape is None or any(d is None for d in t.shape):
            raise ShapeError(f"parallel_stack: values[{k}] {t.name!r} must have a fully "
                             f"known shape, got {None if t.shape is None else list(t.shape)}")
        if t.shape != first:
            raise ShapeError(f"parallel_stack: values[{k}] has shape {list(t.shape)}, "
                             f"values[0] {list(first)}")
    return api.stack(ts, 0, name=name)


def is_tensor(x) -> bool:
    """Whether x is a graph tensor (an og.Tensor, an og.Variable or an og.IndexedSlices),
    as tf.is_tensor; arrays and Python values are not. Raises nothing."""
    return isinstance(x, (Tensor, Variable, IndexedSlices))


# --------------------------------------------------------------------------- asserts

def _shown(item, g) -> str:
    """A data item of an assertion as text while building: strings as they are,
    tensors by their value when known, else by name."""
    if isinstance(item, str):
        return item
    try:
        t = _t(item, graph=g)
    except OneGraphError:
        return str(item)
    value = g.static_value(t)
    if value is None:
        return t.name
    value = np.asarray(value)
    return str(value[()]) if value.ndim == 0 else np.array2string(value, threshold=20)


def _static_failure(what: str, data, g) -> ExecutionError:
    """The error of an assertion found false while building: TF1 raises the run-time
    assertion's error (InvalidArgumentError) at once; here ExecutionError."""
    text = " ".join(_shown(d, g) for d in data)
    return ExecutionError(f"{what}: assertion failed while building (the values are "
                          f"constants): {text}")


def _assert_that(what: str, holds: Tensor, statics_hold, data, summarize, name):
    """The Assert op of `holds` (a bool tensor); ExecutionError at once when
    `statics_hold` is False (the operands were constants and the check fails)."""
    if statics_hold is False:
        raise _static_failure(what, data, holds.graph)
    return debugging.Assert(api_extra.reduce_all(holds), list(data), summarize,
                            name=name or what)


def _binary_assert(what: str, sym: str, op, np_op, x, y, data, summarize, message,
                   name, default=None) -> Operation:
    _g.check_name(name, what)
    message = _message_arg(message, what)
    summarize = _summarize_arg(summarize, what)
    data = _data_arg(data, what)
    a, b = api._pair(x, y, what)
    for t, which in ((a, "x"), (b, "y")):
        if t.dtype is DType.STRING:
            raise ShapeError(f"{what}: {which} must be numeric or bool, got string")
    if data is None:
        data = default or [f"Condition x {sym} y did not hold element-wise:",
                           f"x (name: {a.name}) =", a, f"y (name: {b.name}) =", b]
    if message:
        data = [message] + list(data)
    holds = op(a, b)
    g = a.graph
    sa, sb = g.static_value(a), g.static_value(b)
    statics = None if sa is None or sb is None else bool(np.all(np_op(sa, sb)))
    return _assert_that(what, holds, statics, data, summarize, name)


def _binary_doc(fn, sym: str):
    fn.__doc__ = (
        f"An op that fails a run (ExecutionError naming it) when some element of x is "
        f"not {sym} the matching element of y (broadcast), as TF1's `tf.{fn.__name__}`; "
        "it runs when something depends on it (og.control_dependencies) or is fetched. "
        "`data` (tensors or strings) replaces the default message and `message` goes "
        "first. When x and y are both constants the check is made while building.\n\n"
        "    Raises:\n        ExecutionError: x and y are constants and the condition "
        "fails (TF1's InvalidArgumentError at build time).\n        ShapeError: x and y "
        "do not broadcast, differ in dtype, or are strings.\n        TypeError: data "
        "is not a list, summarize not an int, or message or name not a str.\n    ")
    return fn


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("assert_greater_equal", ">=", api.greater_equal, np.greater_equal,
                          x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("assert_less_equal", "<=", api.less_equal, np.less_equal, x, y,
                          data, summarize, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert("assert_none_equal", "!=", api_extra.not_equal, np.not_equal,
                          x, y, data, summarize, message, name)


for _fn, _sym in ((assert_greater_equal, ">="), (assert_less_equal, "<="),
                  (assert_none_equal, "!=")):
    _binary_doc(_fn, _sym)


def _sign_assert(what: str, sym: str, zero_first: bool, op, np_op):
    def check(x, data=None, summarize=None, message=None, name=None) -> Operation:
        _g.check_name(name, what)
        t = _t(x)
        _numeric(t, f"{what}: x")
        zero = t.graph.constant(np.zeros((), t.dtype.numpy))
        default = [f"Condition x {sym} 0 did not hold element-wise:",
                   f"x (name: {t.name}) =", t]
        a, b = (zero, t) if zero_first else (t, zero)
        return _binary_assert(what, sym, op, np_op, a, b, data, summarize, message, name,
                              default=default)

    check.__name__ = what
    check.__doc__ = (
        f"An op that fails a run (ExecutionError naming it) when some element of x is "
        f"not {sym} 0, as TF1's `tf.{what}`; it runs when something depends on it or is "
        "fetched. `data` replaces the default message and `message` goes first. When x "
        "is a constant the check is made while building.\n\n    Raises:\n        "
        "ExecutionError: x is a constant and the condition fails.\n        ShapeError: "
        "x is not numeric.\n        TypeError: data is not a list, summarize not an "
        "int, or message or name not a str.\n    ")
    return check


assert_positive = _sign_assert("assert_positive", ">", True, api.less, np.less)
assert_negative = _sign_assert("assert_negative", "<", False, api.less, np.less)
assert_non_negative = _sign_assert("assert_non_negative", ">=", True, api.less_equal,
                                   np.less_equal)
assert_non_positive = _sign_assert("assert_non_positive", "<=", False, api.less_equal,
                                   np.less_equal)


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None,
                name=None) -> Operation:
    """An op that fails a run (ExecutionError naming it) unless |x - y| < atol + rtol
    |y| everywhere (broadcast), as TF1's tf.assert_near (whose test is the strict
    `<`); rtol and atol default to 10 eps of the dtype (numbers or tensors). When every
    operand is a constant the check is made while building.

    Raises:
        TypeError: x is not a float tensor, data is not a list, summarize not an int,
            or message or name not a str.
        ShapeError: y, rtol or atol is a tensor of another dtype, or shapes do not
            broadcast.
        ExecutionError: the operands are constants and they are not near.
        OneGraphError: a plain operand does not convert to x's dtype.
    """
    what = "assert_near"
    _g.check_name(name, what)
    message = _message_arg(message, what)
    summarize = _summarize_arg(summarize, what)
    data = _data_arg(data, what)
    a, b = api._pair(x, y, what)
    _float_input(a, "assert_near: x")
    g = a.graph
    eps = float(_finfo(a.dtype.numpy).eps)
    tols = []
    for value, which in ((rtol, "rtol"), (atol, "atol")):
        value = 10 * eps if value is None else value
        try:
            t = g.convert(value, None if _g._is_symbolic(value) else a.dtype)
        except OneGraphError as e:
            raise _g._named(e, f"assert_near: {which}") from None
        if t.dtype != a.dtype:
            raise ShapeError(f"assert_near: {which} is {t.dtype.short_name} but x is "
                             f"{a.dtype.short_name}")
        tols.append(t)
    r, t_abs = tols
    if data is None:
        data = [f"x and y not equal to tolerance rtol = {_shown(r, g)}, atol = "
                f"{_shown(t_abs, g)}", f"x (name: {a.name}) =", a,
                f"y (name: {b.name}) =", b]
    if message:
        data = [message] + list(data)
    holds = api.less(api.abs(a - b), t_abs + r * api.abs(b))
    statics = [g.static_value(t) for t in (a, b, r, t_abs)]
    verdict = None
    if all(s is not None for s in statics):
        sa, sb, sr, st = statics
        with np.errstate(all="ignore"):
            verdict = bool(np.all(np.abs(sa - sb) < st + sr * np.abs(sb)))
    return _assert_that(what, holds, verdict, data, summarize, name)


def _rank_assert(what: str, words: str, test, np_test, x, rank, data, summarize,
                 message, name) -> Operation:
    _g.check_name(name, what)
    message = _message_arg(message, what)
    summarize = _summarize_arg(summarize, what)
    data = _data_arg(data, what)
    t = _t(x)
    g = t.graph
    if _g._is_symbolic(rank):
        r = _g.integer_tensor(rank, f"{what}: rank", g)
        if r.shape is not None and len(r.shape) != 0:
            raise ValueError(f"{what}: rank must be a scalar, got shape {list(r.shape)}")
        known = g.static_value(r)
        known = None if known is None else int(np.asarray(known))
    else:
        known = _int_arg(rank, f"{what}: rank")
        r = g.constant(np.int64(known))
    if known is not None and t.shape is not None:
        if not np_test(len(t.shape), known):
            raise ValueError(f"{what}: {message + '.  ' if message else ''}Tensor "
                             f"{t.name} must have rank {words}{known}.  Received rank "
                             f"{len(t.shape)}, shape {list(t.shape)}")
        return g.op("NoOp", [], name=name or what)
    if data is None:
        data = [f"Tensor {t.name} must have rank {words}".rstrip(), r,
                "Received shape: ", api.shape(t)]
    if message:
        data = [message] + list(data)
    actual = g.op("Size", [api.shape(t)])
    holds = test(actual, _cast(r, int64))
    return debugging.Assert(api_extra.reduce_all(holds), list(data), summarize,
                            name=name or what)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """Check that x has rank `rank` (an int or an integer scalar tensor), as TF1's
    tf.assert_rank: when both are known while building, a mismatch raises ValueError
    at once and a match returns a no-op; otherwise an op that fails the run
    (ExecutionError naming it) when the run-time rank differs.

    Raises:
        ValueError: the static rank differs, or rank is not a scalar.
        TypeError: rank is not an int or integer tensor, data is not a list,
            summarize not an int, or message or name not a str.
        ShapeError: a rank tensor is not integer.
    """
    return _rank_assert("assert_rank", "", api.equal, lambda a, b: a == b, x, rank, data,
                        summarize, message, name)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """Check that x has rank `rank` or more, as TF1's tf.assert_rank_at_least: when
    both are known while building, a lower rank raises ValueError at once and
    otherwise a no-op is returned; else an op that fails the run (ExecutionError
    naming it) when the run-time rank is lower.

    Raises:
        ValueError: the static rank is lower, or rank is not a scalar.
        TypeError: rank is not an int or integer tensor, data is not a list,
            summarize not an int, or message or name not a str.
        ShapeError: a rank tensor is not integer.
    """
    return _rank_assert("assert_rank_at_least", "at least ", api.greater_equal,
                        lambda a, b: a >= b, x, rank, data, summarize, message, name)


def assert_integer(x, message=None, name=None) -> Operation:
    """Check while building that x is of an integer dtype, as TF1's tf.assert_integer;
    returns a no-op.

    Raises:
        TypeError: x is not of an integer dtype, or message or name is not a str.
    """
    _g.check_name(name, "assert_integer")
    message = _message_arg(message, "assert_integer")
    t = _t(x)
    if t.dtype is DType.UNDEFINED or t.dtype.numpy.kind not in "iu":
        raise TypeError(f"assert_integer: {message + '.  ' if message else ''}Expected "
                        f"\"x\" to be integer type.  Found: {t.name} of dtype "
                        f"{t.dtype.short_name}")
    return t.graph.op("NoOp", [], name=name or "assert_integer")


def assert_type(tensor, tf_type, message=None, name=None) -> Operation:
    """Check while building that tensor has dtype tf_type, as TF1's tf.assert_type;
    returns a no-op.

    Raises:
        TypeError: the dtypes differ, or message or name is not a str.
        OneGraphError: tf_type names no dtype.
    """
    _g.check_name(name, "assert_type")
    message = _message_arg(message, "assert_type")
    want = _dtype_arg(tf_type, None, "assert_type: tf_type")
    t = _t(tensor)
    if t.dtype != want:
        raise TypeError(f"assert_type: {message + '.  ' if message else ''}{t.name} must "
                        f"be of type {want.short_name}; got {t.dtype.short_name}")
    return t.graph.op("NoOp", [], name=name or "assert_type")


def assert_scalar(tensor, name=None, message=None) -> Tensor:
    """tensor, after checking while building that it is a scalar (rank 0 known), as
    TF1's tf.assert_scalar.

    Raises:
        ValueError: its rank is not 0 or not known.
        TypeError: message or name is not a str.
    """
    _g.check_name(name, "assert_scalar")
    message = _message_arg(message, "assert_scalar")
    t = _t(tensor)
    if t.shape is None or len(t.shape) != 0:
        raise ValueError(f"assert_scalar: {message + '.  ' if message else ''}Expected "
                         f"scalar shape for {t.name}, saw shape: "
                         f"{'unknown' if t.shape is None else list(t.shape)}")
    return t


# --------------------------------------------------------------------------- gradients

_EXTREMUM_GRADIENT = "onegraph.api_compat.ScatterNDExtremum"
_PRODUCT_GRADIENT = "onegraph.api_compat.ScatterNDProduct"


def _scatter_extremum_gradient(b, op, grads):
    """TF's gradient of TensorScatterMax/Min (and of the segment extrema built on it):
    dz is shared equally by the entries that equal the result, the tensor's own
    entry included."""
    (dz,) = grads
    x, idx, upd = op.inputs
    out = op.outputs[0]
    x_hit = api.cast(api.equal(x, out), dz.dtype)
    u_hit = api.cast(api.equal(upd, b.op("GatherND", [out, idx])), dz.dtype)
    hits = x_hit + b.op("ScatterND", [api.zeros_like(x_hit), idx, u_hit],
                        {"reduction": "add"})
    dx = dz * x_hit / hits
    du = b.op("GatherND", [dz / hits, idx]) * u_hit
    return [dx, None, du]


def _scatter_product_gradient(b, op, grads):
    """TF's gradient of UnsortedSegmentProd for a ScatterND with reduction 'mul' into
    ones: each entry gets the product of the others of its segment (computed without
    dividing by a zero entry; 0 for all of a segment holding two zeros)."""
    (dz,) = grads
    ones, idx, upd = op.inputs
    out = op.outputs[0]
    zero = api.equal(upd, api.zeros_like(upd))
    zeros = b.op("ScatterND", [api.zeros_like(out), idx, api.cast(zero, out.dtype)],
                 {"reduction": "add"})
    dz = _where(api.greater(zeros, 1.0), api.zeros_like(dz), dz)
    nonzero = _where(zero, api.ones_like(upd), upd)
    nonzero_prod = b.op("ScatterND", [ones, idx, nonzero], {"reduction": "mul"})
    partial = _where(zero, b.op("GatherND", [nonzero_prod, idx]),
                        b.op("GatherND", [out, idx]) / nonzero)
    return [None, None, b.op("GatherND", [dz, idx]) * partial]


for _name, _rule in ((_EXTREMUM_GRADIENT, _scatter_extremum_gradient),
                     (_PRODUCT_GRADIENT, _scatter_product_gradient)):
    try:
        RegisterGradient(_name)(_rule)
    except OneGraphError:  # registered by an earlier import of this module (a reload)
        pass


def _scatter(g, x: Tensor, idx: Tensor, upd: Tensor, reduction: str, name=None):
    """ScatterND(x, idx, upd) with `reduction`; max/min/mul get TF's gradients."""
    rule = {"max": _EXTREMUM_GRADIENT, "min": _EXTREMUM_GRADIENT,
            "mul": _PRODUCT_GRADIENT}.get(reduction)
    if rule is None:
        return g.op("ScatterND", [x, idx, upd], {"reduction": reduction}, name=name)
    with gradient_override_map({"ScatterND": rule}, graph=g):
        return g.op("ScatterND", [x, idx, upd], {"reduction": reduction}, name=name)


# --------------------------------------------------------------------------- tensor scatter

def _scatter_operands(tensor, indices, updates, what: str, numeric: bool) -> tuple:
    """(tensor, int64 indices, updates) checked against one another.

    Raises:
        ShapeError: indices is not an integer tensor or a scalar, its index tuples are
            longer than tensor's rank, updates is not indices.shape[:-1] +
            tensor.shape[k:] (where known) or of another dtype, or (numeric) tensor
            is not numeric.
        OneGraphError: tensor has no known dtype, or plain updates do not convert.
    """
    t = _t(tensor)
    g = t.graph
    if t.dtype is DType.UNDEFINED:
        raise OneGraphError(f"{what}: tensor {t.name!r} has no known dtype")
    if numeric:
        _numeric(t, f"{what}: tensor")
    i = _g.integer_tensor(indices, f"{what}: indices", g)
    try:
        u = g.convert(updates, None if _g._is_symbolic(updates) else t.dtype)
    except OneGraphError as e:
        raise _g._named(e, f"{what}: updates") from None
    if u.dtype != t.dtype:
        raise ShapeError(f"{what}: updates are {u.dtype.short_name} but tensor is "
                         f"{t.dtype.short_name}")
    if i.shape is not None:
        if len(i.shape) < 1:
            raise ShapeError(f"{what}: indices must have rank >= 1, got a scalar")
        k = i.shape[-1]
        if k is not None and t.shape is not None:
            if k > len(t.shape):
                raise ShapeError(f"{what}: indices {list(i.shape)} address {k} dims, but "
                                 f"tensor {list(t.shape)} has {len(t.shape)}")
            want = tuple(i.shape[:-1]) + tuple(t.shape[k:])
            if u.shape is not None and (len(u.shape) != len(want) or any(
                    a is not None and b is not None and a != b
                    for a, b in zip(u.shape, want))):
                raise ShapeError(f"{what}: updates must have shape {list(want)} "
                                 f"(indices.shape[:-1] + tensor.shape[{k}:]), got "
                                 f"{list(u.shape)}")
    return t, _cast(i, int64), u


_SCATTER_RAISES = """Raises:
        TypeError: name is not a str.
        ShapeError: indices is not an integer tensor of rank >= 1, its tuples address
            more dims than tensor has, or updates is not of tensor's dtype and of shape
            indices.shape[:-1] + tensor.shape[k:] (where known){numeric}.
        OneGraphError: tensor has no known dtype, or plain updates do not convert."""


def tensor_scatter_nd_update(tensor, indices, updates, name=None) -> Tensor:
    """A copy of tensor with the slices at the index tuples (the last axis of indices)
    replaced by updates, as tf.tensor_scatter_nd_update (ONNX ScatterND). Which of
    repeated indices wins is unspecified, as in TF. Unlike TF, a negative index counts
    from the end (ONNX); one out of range fails the run (ShapeError naming the node).
    Gradients are TF's: the replaced entries get none, updates get dz at their
    indices.

    {raises}
    """
    _g.check_name(name, "tensor_scatter_nd_update")
    t, i, u = _scatter_operands(tensor, indices, updates, "tensor_scatter_nd_update", False)
    return _scatter(t.graph, t, i, u, "none", name)


def tensor_scatter_nd_add(tensor, indices, updates, name=None) -> Tensor:
    """A copy of tensor with updates added at the index tuples (repeated indices add
    up), as tf.tensor_scatter_nd_add (ONNX ScatterND, reduction 'add'). Negative
    indices count from the end (ONNX), unlike TF.

    {raises}
    """
    _g.check_name(name, "tensor_scatter_nd_add")
    t, i, u = _scatter_operands(tensor, indices, updates, "tensor_scatter_nd_add", True)
    return _scatter(t.graph, t, i, u, "add", name)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None) -> Tensor:
    """A copy of tensor with updates subtracted at the index tuples (repeated indices
    add up), as tf.tensor_scatter_nd_sub (ScatterND adding -updates; unsigned
    integers wrap as TF's do). Negative indices count from the end (ONNX), unlike TF.

    {raises}
    """
    _g.check_name(name, "tensor_scatter_nd_sub")
    t, i, u = _scatter_operands(tensor, indices, updates, "tensor_scatter_nd_sub", True)
    minus = api.subtract(api.zeros_like(u), u) if t.dtype.numpy.kind == "u" \
        else api.negative(u)
    return _scatter(t.graph, t, i, minus, "add", name)


def tensor_scatter_nd_max(tensor, indices, updates, name=None) -> Tensor:
    """A copy of tensor where each indexed entry becomes the max of itself and its
    updates, as tf.tensor_scatter_nd_max (ScatterND, reduction 'max'). Gradients are
    TF's: dz is shared by the entries equal to the result. Negative indices count from
    the end (ONNX), unlike TF.

    {raises}
    """
    _g.check_name(name, "tensor_scatter_nd_max")
    t, i, u = _scatter_operands(tensor, indices, updates, "tensor_scatter_nd_max", True)
    return _scatter(t.graph, t, i, u, "max", name)


def tensor_scatter_nd_min(tensor, indices, updates, name=None) -> Tensor:
    """A copy of tensor where each indexed entry becomes the min of itself and its
    updates, as tf.tensor_scatter_nd_min (ScatterND, reduction 'min'), with TF's
    gradients. Negative indices count from the end (ONNX), unlike TF.

    {raises}
    """
    _g.check_name(name, "tensor_scatter_nd_min")
    t, i, u = _scatter_operands(tensor, indices, updates, "tensor_scatter_nd_min", True)
    return _scatter(t.graph, t, i, u, "min", name)


for _fn in (tensor_scatter_nd_update, tensor_scatter_nd_add, tensor_scatter_nd_sub,
            tensor_scatter_nd_max, tensor_scatter_nd_min):
    _fn.__doc__ = _fn.__doc__.replace("{raises}", _SCATTER_RAISES.replace(
        "{numeric}", "" if _fn is tensor_scatter_nd_update else ", or tensor is not "
        "numeric"))


# --------------------------------------------------------------------------- segments

def _segment_data(data, segment_ids, what: str, sorted_ids: bool = False) -> tuple:
    """(data, int64 ids) of a segment reduction.

    Raises:
        ShapeError: data is not numeric, segment_ids is not an integer tensor of
            known rank (1-D for the sorted ops), or its shape is not a prefix of
            data's.
        OneGraphError: data has no known dtype.
    """
    d = _t(data)
    g = d.graph
    if d.dtype is DType.UNDEFINED:
        raise OneGraphError(f"{what}: data {d.name!r} has no known dtype")
    _numeric(d, f"{what}: data")
    ids = _cast(_g.integer_tensor(segment_ids, f"{what}: segment_ids", g), int64)
    _rank(ids, f"{what}: segment_ids")
    if sorted_ids and len(ids.shape) != 1:
        raise ShapeError(f"{what}: segment_ids must be 1-D, got shape {list(ids.shape)}")
    if d.shape is not None and (len(ids.shape) > len(d.shape) or any(
            a is not None and b is not None and a != b for a, b in zip(ids.shape, d.shape))):
        raise ShapeError(f"{what}: segment_ids of shape {list(ids.shape)} must be a "
                         f"prefix of data's shape {list(d.shape)}")
    return d, ids


def _num_segments(num_segments, g, what: str) -> Tensor:
    """num_segments as an int64 scalar tensor.

    Raises:
        ShapeError: it is not an integer scalar.
        ValueError: it is negative (when known while building).
    """
    count = _cast(_g.integer_tensor(num_segments, f"{what}: num_segments", g), int64)
    _scalar(count, f"{what}: num_segments")
    known = g.static_value(count)
    if known is not None and int(np.asarray(known)) < 0:
        raise ValueError(f"{what}: num_segments must be >= 0, got {int(np.asarray(known))}")
    return count


def _sorted_count(ids: Tensor) -> Tensor:
    """max(ids) + 1 (0 for no ids): the segment count of the sorted segment ops."""
    top = ids.graph.op("ReduceMax", [ids], {"keepdims": 0})
    # ONNX's max of no ids is the int64 minimum
    return api.maximum(api.add(top, np.int64(1)), np.int64(0))


def _segment_reduce(d: Tensor, ids: Tensor, count: Tensor, reduction: str, initial,
                    name=None) -> Tensor:
    """out[i] = the reduction of initial and the rows of d whose id is i (i < count),
    as in og.unsorted_segment_sum: ScatterND into `initial`, one extra first row
    taking the rows of negative (dropped) ids; ids >= count fail the run."""
    g = d.graph
    rank = len(ids.shape)
    kept = api.greater_equal(ids, np.int64(0))
    index = api.expand_dims(_where(kept, api.add(ids, np.int64(1)), api.zeros_like(ids)),
                            -1)
    total = api.reshape(api.add(count, np.int64(1)), [1])
    start = g.op("ConstantOfShape", [api.concat([total, _dims_slice(d, rank, None)], 0)],
                 {"value": np.full(1, initial, d.dtype.numpy)})
    reduced = _scatter(g, start, index, d, reduction)
    return _with_segment_rows(g.op("Slice", [reduced, _i64(g, [1]), total, _i64(g, [0])],
                                   name=name), count, d, rank)


def _rows(v: Tensor, d: Tensor, ids: Tensor) -> Tensor:
    """v of shape [n] with size-1 axes added for the row dims of data d."""
    extra = _rank(d, "segment data") - len(ids.shape)
    if not extra:
        return v
    return v.graph.op("Unsqueeze", [v, _i64(v.graph, list(range(1, 1 + extra)))])


def _counts(d: Tensor, ids: Tensor, count: Tensor, dtype) -> Tensor:
    """How many rows each segment has (dtype), shaped to broadcast over the rows."""
    ones = api.cast(api.ones_like(ids), dtype)
    return _rows(api_extra.unsorted_segment_sum(ones, ids, count), d, ids)


def _extreme(dt: DType, highest: bool, infinite: bool):
    """The dtype's lowest (or highest) value; +-inf for floats when `infinite`."""
    if dt.numpy.kind in "iu":
        info = np.iinfo(dt.numpy)
        return info.max if highest else info.min
    if infinite:
        return np.inf if highest else -np.inf
    info = _finfo(dt.numpy)
    return info.max if highest else info.min


def _unsorted(what: str, reduction: str, highest):
    def reduce(data, segment_ids, num_segments, name=None) -> Tensor:
        _g.check_name(name, what)
        d, ids = _segment_data(data, segment_ids, what)
        count = _num_segments(num_segments, d.graph, what)
        initial = 1 if reduction == "mul" else _extreme(d.dtype, highest, False)
        return _segment_reduce(d, ids, count, reduction, initial, name)

    reduce.__name__ = what
    return reduce


_UNSORTED_RAISES = """Raises:
        TypeError: name is not a str.
        ShapeError: data is not numeric, segment_ids is not an integer tensor of
            known rank whose shape is a prefix of data's, or num_segments is not an
            integer scalar.
        ValueError: num_segments is negative.
        OneGraphError: data has no known dtype."""

unsorted_segment_max = _unsorted("unsorted_segment_max", "max", False)
unsorted_segment_max.__doc__ = f"""out[i] = the max of the rows data[j] with
    segment_ids[j] == i, for i < num_segments, as tf.unsorted_segment_max: the ids
    cover data's leading dims, a negative id drops its row, an empty segment is the
    dtype's lowest value (-3.4e38 for float32), ids >= num_segments fail the run
    (ShapeError naming the node).
    ScatterND with reduction 'max'; the gradient is TF's (dz shared by the rows equal
    to the max).

    {_UNSORTED_RAISES}
    """
unsorted_segment_min = _unsorted("unsorted_segment_min", "min", True)
unsorted_segment_min.__doc__ = f"""out[i] = the min of the rows data[j] with
    segment_ids[j] == i, as tf.unsorted_segment_min (see unsorted_segment_max); an
    empty segment is the dtype's highest value.

    {_UNSORTED_RAISES}
    """
unsorted_segment_prod = _unsorted("unsorted_segment_prod", "mul", None)
unsorted_segment_prod.__doc__ = f"""out[i] = the product of the rows data[j] with
    segment_ids[j] == i, as tf.unsorted_segment_prod (see unsorted_segment_max); an
    empty segment is 1. The gradient is TF's (the product of the other rows, without
    dividing by a zero).

    {_UNSORTED_RAISES}
    """


def _mean(what: str, sqrt: bool):
    def reduce(data, segment_ids, num_segments, name=None) -> Tensor:
        _g.check_name(name, what)
        d, ids = _segment_data(data, segment_ids, what)
        if sqrt:
            _float_input(d, f"{what}: data")
        count = _num_segments(num_segments, d.graph, what)
        summed = api_extra.unsorted_segment_sum(d, ids, count)
        n = api.maximum(_counts(d, ids, count, d.dtype), 1)
        if sqrt:
            return api.divide(summed, api.sqrt(n), name=name)
        # as TF's summed / N: integers are divided in floats (tf.truediv's dtypes)
        return api_math.truediv(summed, n, name=name)

    reduce.__name__ = what
    return reduce


unsorted_segment_mean = _mean("unsorted_segment_mean", False)
unsorted_segment_mean.__doc__ = f"""out[i] = the mean of the rows data[j] with
    segment_ids[j] == i, as tf.unsorted_segment_mean: sum / max(count, 1), so an
    empty segment is 0; as TF's, integer data give a float result (int32 -> float64,
    int8/int16 -> float32). Negative ids drop their rows.

    {_UNSORTED_RAISES}
    """
unsorted_segment_sqrt_n = _mean("unsorted_segment_sqrt_n", True)
unsorted_segment_sqrt_n.__doc__ = """out[i] = the sum of the rows data[j] with
    segment_ids[j] == i divided by sqrt(their count), as tf.unsorted_segment_sqrt_n;
    an empty segment is 0. Floats only (TF refuses integers).

    """ + _UNSORTED_RAISES.replace(
    "TypeError: name is not a str.", "TypeError: data is not a float tensor, or name is "
    "not a str.") + "\n    "


def _sorted(what: str, reduction: str):
    def reduce(data, segment_ids, name=None) -> Tensor:
        _g.check_name(name, what)
        d, ids = _segment_data(data, segment_ids, what, sorted_ids=True)
        count = _sorted_count(ids)
        if reduction == "mean":
            summed = api_extra.unsorted_segment_sum(d, ids, count)
            n = api.maximum(_counts(d, ids, count, d.dtype), 1)
            # integers: ONNX's Div truncates, as TF's integer SegmentMean does
            return d.graph.op("Div", [summed, n], name=name)
        if reduction == "mul":
            return _segment_reduce(d, ids, count, "mul", 1, name)
        out = _segment_reduce(d, ids, count, reduction,
                              _extreme(d.dtype, reduction == "min", True))
        filled = api.greater(_counts(d, ids, count, int64), np.int64(0))
        return _where(filled, out, api.zeros_like(out), name=name)

    reduce.__name__ = what
    return reduce


_SORTED_DOC = """out[i] = the {words} of the rows data[j] with segment_ids[j] == i, for
    i <= max(segment_ids), as tf.segment_{op}; an empty segment is {empty}. TF requires
    the 1-D ids sorted and non-negative; here they are not checked: any order gives
    the same result and a negative id drops its row (as og.segment_sum).{extra}

    Raises:
        TypeError: name is not a str.
        ShapeError: data is not numeric, or segment_ids is not a 1-D integer tensor
            whose length is data's first dim (where known).
        OneGraphError: data has no known dtype.
    """

segment_max = _sorted("segment_max", "max")
segment_min = _sorted("segment_min", "min")
segment_mean = _sorted("segment_mean", "mean")
segment_prod = _sorted("segment_prod", "mul")
for _fn, _words, _op, _empty, _extra in (
        (segment_max, "max", "max", "0", " Its gradient is TF's (dz shared by the rows "
         "equal to the max)."),
        (segment_min, "min", "min", "0", " Its gradient is TF's."),
        (segment_mean, "mean", "mean", "0", " Integer data give the truncated integer "
         "mean, as TF's."),
        (segment_prod, "product", "prod", "1", " Its gradient is TF's.")):
    _fn.__doc__ = _SORTED_DOC.format(words=_words, op=_op, empty=_empty, extra=_extra)


# --------------------------------------------------------------------------- space/batch

def _pairs(values, count: int, what: str) -> list:
    """A list of `count` [before, after] pairs of ints >= 0.

    Raises:
        TypeError: values is not such a list.
        ValueError: it has another length, or an entry is negative.
    """
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if not isinstance(values, (list, tuple)) or not all(
            isinstance(p, (list, tuple, np.ndarray)) for p in values):
        raise TypeError(f"{what} must be a list of [start, end] pairs of ints, got "
                        f"{_brief(values)}")
    pairs = [_int_list(list(p), f"{what}[{k}]") for k, p in enumerate(values)]
    if len(pairs) != count or any(len(p) != 2 for p in pairs):
        raise ValueError(f"{what} must hold {count} [start, end] pairs (one per block "
                         f"dim), got {_brief(values)}")
    if any(v < 0 for p in pairs for v in p):
        raise ValueError(f"{what} must be >= 0, got {pairs}")
    return pairs


def _tensor_pairs(values, count: int, what: str, g) -> Tensor:
    """Pairs given as an integer tensor (or a list holding scalar integer tensors), as
    an int64 [count, 2] tensor: its shape checked while building where known, and its
    shape and signs by Asserts run before it is read (TF's kernel checks them).

    Raises:
        ShapeError: it is not integer, or has a known shape other than [count, 2].
        TypeError: a list entry is neither an int nor a tensor.
    """
    t = int64_tensor(values, what, g)
    wanted = f"{what} must be {count} [start, end] pairs (a [{count}, 2] tensor)"
    if t.shape is not None and (len(t.shape) != 2 or
                                any(d not in (None, w) for d, w in zip(t.shape, (count, 2)))):
        raise ShapeError(f"{wanted}, got shape {list(t.shape)}")
    if t.shape is None or None in tuple(t.shape):
        # rank 2, last dim 2 and 2 * count entries: [count, 2] (the slice of a shorter
        # shape is empty, so no comparison fails for a wrong rank)
        shape = g.op("Shape", [t])
        last = g.op("Slice", [shape, _i64(g, [-1]), _i64(g, [_INT64_MAX])])
        fits = api.logical_and(
            api.logical_and(api.equal(g.op("Size", [shape]), np.int64(2)),
                            api.equal(g.op("Size", [t]), np.int64(2 * count))),
            api_extra.reduce_all(api.equal(last, np.int64(2))))
        t = api.reshape(api_math._checked(t, fits, wanted), [count, 2])
    return api_math._checked(t, t >= np.int64(0), f"{what} must be >= 0")


def _block_args(input, block_shape, pairs, what: str, pairs_name: str) -> tuple:  # noqa: A002
    """(input tensor, its rank, block sizes, pairs): the pairs a list of int pairs, or
    an int64 [M, 2] tensor where given as a tensor.

    Raises:
        TypeError: block_shape is not a list of ints, or the pairs are malformed.
        ValueError: block_shape is empty or holds a value < 1, or the pairs are not
            one non-negative pair per block dim.
        ShapeError: input's rank is unknown or below 1 + len(block_shape), or tensor
            pairs are not integer or of a known shape other than [M, 2].
    """
    blocks = _int_list(block_shape, f"{what}: block_shape")
    if not blocks:
        raise ValueError(f"{what}: block_shape must hold at least one int")
    if any(b < 1 for b in blocks):
        raise ValueError(f"{what}: block_shape must be >= 1, got {blocks}")
    x = _t(input)
    if holds_tensor(pairs):
        pairs = _tensor_pairs(pairs, len(blocks), f"{what}: {pairs_name}", x.graph)
    else:
        pairs = _pairs(pairs, len(blocks), f"{what}: {pairs_name}")
    rank = _rank(x, what)
    if rank < 1 + len(blocks):
        raise ShapeError(f"{what}: input of shape {list(x.shape)} needs rank >= "
                         f"{1 + len(blocks)} for {len(blocks)} block dims")
    return x, rank, blocks, pairs


def space_to_batch_nd(input, block_shape, paddings, name=None) -> Tensor:  # noqa: A002
    """TF's tf.space_to_batch_nd: the spatial dims 1..M of input (M = len(block_shape))
    are padded by paddings ([[start, end], ...]) and cut into blocks, each offset
    within a block becoming a batch: the result has shape [batch * prod(block_shape),
    padded[1] / block_shape[0], ..., remaining dims], its batch index being (offset
    index) * batch + b. block_shape is Python ints; paddings Python ints or, as in TF,
    an integer [M, 2] tensor (then checked when the graph runs). Pad, Reshape and
    Transpose, so the gradient (batch_to_space_nd of dz, as TF's) comes from them.

    Raises:
        TypeError: block_shape or paddings is not ints of the right form, or name not
            a str.
        ValueError: a block size < 1, a negative padding, or not one pair per block
            dim.
        ShapeError: input's rank is unknown or too small, a padded dim does not
            divide by its block size (when known; otherwise the run fails), or a
            paddings tensor is not integer or of a known shape other than [M, 2].
        ExecutionError: when the graph runs, for paddings given as a tensor: it is
            not [M, 2], holds a negative value, or a padded dim does not divide by its
            block size.
    """
    _g.check_name(name, "space_to_batch_nd")
    x, rank, blocks, pads = _block_args(input, block_shape, paddings, "space_to_batch_nd",
                                        "paddings")
    if isinstance(pads, Tensor):
        padded = _padded_at_run_time(x, rank, blocks, pads)
    else:
        padded = _padded(x, rank, blocks, pads)
    return _space_to_batch(padded, rank, blocks, name)


def _padded(x: Tensor, rank: int, blocks: list, pads: list) -> Tensor:
    """x padded by int pairs along dims 1..M.

    Raises:
        ShapeError: a padded dim known while building does not divide by its block.
    """
    for i, (b, (p0, p1)) in enumerate(zip(blocks, pads)):
        d = x.shape[1 + i]
        if d is not None and (d + p0 + p1) % b:
            raise ShapeError(f"space_to_batch_nd: dim {1 + i} of {x.name!r} ({d}) plus "
                             f"paddings {[p0, p1]} is not a multiple of block size {b}")
    if not any(v for p in pads for v in p):
        return x
    return api.pad(x, [[0, 0]] + pads + [[0, 0]] * (rank - 1 - len(blocks)))


def _padded_at_run_time(x: Tensor, rank: int, blocks: list, pads: Tensor) -> Tensor:
    """x padded by an int64 [M, 2] tensor along dims 1..M, then checked (an Assert
    run before the result is read) to be a multiple of the blocks there. Raises
    nothing while building."""
    g = x.graph
    m = len(blocks)
    parts = [g.constant(np.zeros((1, 2), np.int64)), pads]
    if rank - 1 - m:
        parts.append(g.constant(np.zeros((rank - 1 - m, 2), np.int64)))
    padded = api.pad(x, g.op("Concat", parts, {"axis": 0}))
    sizes = g.op("Shape", [padded], {"start": 1, "end": 1 + m})
    fits = api.equal(g.op("Mod", [sizes, _i64(g, blocks)]), np.int64(0))
    return api_math._checked(padded, fits, "space_to_batch_nd: a padded dim (the input's "
                             f"dim plus its paddings) is not a multiple of block_shape "
                             f"{blocks}")


def _space_to_batch(padded: Tensor, rank: int, blocks: list, name) -> Tensor:
    """The padded input cut into blocks moved to the batch: Reshape, Transpose,
    Reshape with the dims known while building, the others read when it runs. Raises
    nothing while building."""
    m = len(blocks)
    dims = [_dim(padded, k) for k in range(rank)]
    split = [dims[0]]
    for i, b in enumerate(blocks):
        split += [_dim_div(dims[1 + i], b), b]
    y = api.reshape(padded, split + dims[1 + m:])
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + \
        list(range(2 * m + 1, rank + m))
    y = api.transpose(y, perm)
    merged = [_dim_mul(dims[0], int(np.prod(blocks)))] + \
        [_dim_div(dims[1 + i], b) for i, b in enumerate(blocks)] + dims[1 + m:]
    return api.reshape(y, merged, name=name)


def batch_to_space_nd(input, block_shape, crops, name=None) -> Tensor:  # noqa: A002
    """TF's tf.batch_to_space_nd, the inverse of space_to_batch_nd: the batch dim of
    input (batch * prod(block_shape)) is spread over blocks of the spatial dims 1..M,
    which are then cropped by crops ([[start, end], ...]). block_shape is Python ints;
    crops Python ints or, as in TF, an integer [M, 2] tensor (then checked when the
    graph runs). Reshape, Transpose and Slice, so the gradient (space_to_batch_nd of
    dz, as TF's) comes from them.

    Raises:
        TypeError: block_shape or crops is not ints of the right form, or name not a
            str.
        ValueError: a block size < 1, a negative crop, or not one pair per block dim.
        ShapeError: input's rank is unknown or too small, its batch does not divide by
            prod(block_shape), or a crop exceeds its dim (when known; otherwise the
            run fails), or a crops tensor is not integer or of a known shape other
            than [M, 2].
        ExecutionError: when the graph runs, for crops given as a tensor: it is not
            [M, 2], holds a negative value, or a pair exceeds its dim, or the batch
            (unknown while building) does not divide by prod(block_shape).
    """
    _g.check_name(name, "batch_to_space_nd")
    x, rank, blocks, crops = _block_args(input, block_shape, crops, "batch_to_space_nd",
                                         "crops")
    total = int(np.prod(blocks))
    if x.shape[0] is not None and x.shape[0] % total:
        raise ShapeError(f"batch_to_space_nd: the batch of {x.name!r} ({x.shape[0]}) is "
                         f"not a multiple of prod(block_shape) = {total}")
    if isinstance(crops, Tensor):
        if x.shape[0] is None:
            fits = api.equal(_batch_mod(x, total), np.int64(0))
            x = api_math._checked(x, fits, f"batch_to_space_nd: the batch of {x.name!r} "
                                  f"is not a multiple of prod(block_shape) = {total}")
        return _cropped_at_run_time(_batch_to_space(x, rank, blocks), blocks, crops, name)
    for i, (b, (c0, c1)) in enumerate(zip(blocks, crops)):
        d = x.shape[1 + i]
        if d is not None and c0 + c1 > d * b:
            raise ShapeError(f"batch_to_space_nd: crops {[c0, c1]} exceed dim {1 + i} "
                             f"({d} * block {b} = {d * b})")
    y = _batch_to_space(x, rank, blocks)
    if not any(v for p in crops for v in p):
        return api.identity(y, name=name)
    g = x.graph
    starts = [c0 for c0, _ in crops]
    ends = [-c1 if c1 else _INT64_MAX for _, c1 in crops]
    return g.op("Slice", [y, _i64(g, starts), _i64(g, ends),
                          _i64(g, list(range(1, 1 + len(blocks))))], name=name)


def _batch_mod(x: Tensor, total: int) -> Tensor:
    """x's batch dim (read when the graph runs) modulo total. Raises nothing."""
    g = x.graph
    return g.op("Mod", [g.op("Shape", [x], {"start": 0, "end": 1}), _i64(g, [total])])


def _batch_to_space(x: Tensor, rank: int, blocks: list) -> Tensor:
    """The batch's block offsets spread over dims 1..M, uncropped: Reshape, Transpose,
    Reshape with the dims known while building, the others read when it runs. Raises
    nothing while building."""
    m = len(blocks)
    dims = [_dim(x, k) for k in range(rank)]
    batch = _dim_div(dims[0], int(np.prod(blocks)))
    y = api.reshape(x, blocks + [batch] + dims[1:])
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, m + rank))
    y = api.transpose(y, perm)
    return api.reshape(y, [batch] + [_dim_mul(dims[1 + i], b) for i, b in enumerate(blocks)]
                       + dims[1 + m:])


def _cropped_at_run_time(y: Tensor, blocks: list, crops: Tensor, name) -> Tensor:
    """y cropped along dims 1..M by an int64 [M, 2] tensor, after an Assert that no
    pair exceeds its dim. Raises nothing while building."""
    g = y.graph
    m = len(blocks)
    starts = g.op("Gather", [crops, g.constant(np.int64(0))], {"axis": 1})
    ends = g.op("Shape", [y], {"start": 1, "end": 1 + m}) - \
        g.op("Gather", [crops, g.constant(np.int64(1))], {"axis": 1})
    y = api_math._checked(y, api.less_equal(starts, ends), "batch_to_space_nd: crops "
                          "exceed their dims (a dim's crops add up to more than its size "
                          "times its block)")
    return g.op("Slice", [y, starts, ends, _i64(g, list(range(1, 1 + m)))], name=name)


def _window(values, what: str, dims=("rows", "cols")) -> tuple:
    """The spatial sizes of a TF [1, *dims, 1] window argument (ksizes, strides, rates
    of the patch functions; dims names them in messages).

    Raises:
        TypeError: it is not a list of len(dims) + 2 ints.
        ValueError: its first or last entry is not 1, or an entry is < 1.
    """
    v = _int_list(values, what)
    form = f"[1, {', '.join(dims)}, 1]"
    if len(v) != len(dims) + 2:
        raise TypeError(f"{what} must be a list of {len(dims) + 2} ints {form}, got {v}")
    if v[0] != 1 or v[-1] != 1 or min(v) < 1:
        raise ValueError(f"{what} must be {form} with {', '.join(dims)} >= 1, got {v}")
    return tuple(v[1:-1])


# Bounds that keep extract_image_patches from building or padding without end: the
# taps of one patch (each a Slice op), and the pixels of the zero-padded image.
_MAX_PATCH_TAPS = 1 << 16
_MAX_PADDED_PIXELS = 1 << 31


def _tf_window(n: int, span: int, stride: int, padding: str) -> tuple:
    """(output size, [pad before, pad after]) of a window reaching `span` elements
    moved by `stride` over n, with TF's "SAME" (ceil(n / stride) outputs, the odd pad
    after) or "VALID" (no pads; the caller refuses span > n). Raises nothing."""
    if padding == "SAME":
        out = -(-n // stride)
        total = max((out - 1) * stride + span - n, 0)
        return out, [total // 2, total - total // 2]
    return (n - span) // stride + 1, [0, 0]


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None,
                          name=None, sizes=None) -> Tensor:
    """TF1's tf.extract_image_patches: the ksizes[1] x ksizes[2] patches of NHWC
    images, taken every strides[1:3] pixels with taps rates[1:3] apart, each flattened
    into the last dim in TF's order ((row * cols + col) * depth + channel): shape
    [batch, out_rows, out_cols, rows * cols * depth]. padding "SAME" pads with zeros
    as TF's conv does (out = ceil(in / stride)), "VALID" takes whole patches only.
    `sizes` is ksizes' newer name. One strided Slice per tap, concatenated, so the
    gradient (dz summed back onto the pixels, as TF's) comes from them. An image
    whose height or width only the run knows gets its sizes and pads from graph ops.

    Raises:
        TypeError: ksizes, strides, rates or padding is missing or not a list of 4
            ints, or name is not a str.
        ValueError: a window is not [1, rows, cols, 1] of ints >= 1, padding is not
            "SAME" or "VALID", ksizes and sizes differ, or a patch has more than 65536
            pixels.
        ShapeError: images is not 4-D, a VALID patch is larger than the (dilated)
            image, or SAME padding would make the image more than 2**31 pixels (sizes
            known while building; a VALID patch larger than an image whose size only
            the run knows is an ExecutionError of the run).
    """
    what = "extract_image_patches"
    _g.check_name(name, what)
    if sizes is not None and ksizes is not None and list(np.ravel(sizes)) != \
            list(np.ravel(ksizes)):
        raise ValueError(f"{what}: give ksizes or its newer name sizes, not both")
    ksizes = ksizes if ksizes is not None else sizes
    for value, arg in ((ksizes, "ksizes"), (strides, "strides"), (rates, "rates"),
                       (padding, "padding")):
        if value is None:
            raise TypeError(f"{what}: {arg} is required")
    kr, kc = _window(ksizes, f"{what}: ksizes")
    sr, sc = _window(strides, f"{what}: strides")
    rr, rc = _window(rates, f"{what}: rates")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {_brief(padding)}")
    if kr * kc > _MAX_PATCH_TAPS:
        # one Slice op per tap: 2**31 taps would build ops until memory runs out
        raise ValueError(f"{what}: a {kr} x {kc} patch has more than {_MAX_PATCH_TAPS} "
                         f"pixels")
    x = _t(images)
    if x.shape is None or len(x.shape) != 4:
        raise ShapeError(f"{what}: images must be 4-D NHWC, got "
                         f"{'an unknown rank' if x.shape is None else list(x.shape)}")
    if x.shape[1] is None or x.shape[2] is None:
        return _patches_at_run_time(x, (kr, kc), (sr, sc), (rr, rc), padding, name)
    g = x.graph
    size = []
    pads = [[0, 0]]
    for n, k, s, r in ((x.shape[1], kr, sr, rr), (x.shape[2], kc, sc, rc)):
        span = (k - 1) * r + 1
        if padding == "VALID" and span > n:
            raise ShapeError(f"{what}: a VALID patch spans {span} pixels (ksize {k}, "
                             f"rate {r}), more than the image's {n}")
        out, pad = _tf_window(n, span, s, padding)
        pads.append(pad)
        size.append(out)
    pads.append([0, 0])
    padded_pixels = (x.shape[1] + sum(pads[1])) * (x.shape[2] + sum(pads[2]))
    if padded_pixels > _MAX_PADDED_PIXELS:
        raise ShapeError(f"{what}: SAME padding for a patch spanning rates x ksizes makes "
                         f"the image {padded_pixels} pixels, more than {_MAX_PADDED_PIXELS}")
    padded = api.pad(x, pads) if any(v for p in pads for v in p) else x
    (oh, ow) = size
    taps = []
    for i in range(kr):
        for j in range(kc):
            r0, c0 = i * rr, j * rc
            # an empty image gives empty taps (an end of start - stride + 1 < 0 would
            # count from the end)
            r1 = r0 + (oh - 1) * sr + 1 if oh else r0
            c1 = c0 + (ow - 1) * sc + 1 if ow else c0
            taps.append(g.op("Slice", [padded, _i64(g, [r0, c0]), _i64(g, [r1, c1]),
                                       _i64(g, [1, 2]), _i64(g, [sr, sc])]))
    if len(taps) == 1:
        return api.identity(taps[0], name=name)
    return g.op("Concat", taps, {"axis": 3}, name=name)


def _patches_at_run_time(x, ksizes, strides, rates, padding, name) -> Tensor:
    """extract_image_patches of NHWC images whose height or width only the run knows:
    the output size and SAME's pads computed by graph ops from the image's shape,
    one strided Slice per tap with run-time ends; the run checks that a VALID patch
    fits the image (ExecutionError, as TF's "output size would be negative")."""
    what = "extract_image_patches"
    g = x.graph
    n = api.gather(api.shape(x), _i64(g, [1, 2]))
    s = _i64(g, list(strides))
    spans = [(k - 1) * r + 1 for k, r in zip(ksizes, rates)]
    span = _i64(g, spans)
    zeros = _i64(g, [0, 0])
    if padding == "SAME":
        out = (n + s - 1) // s
        total = api.maximum((out - 1) * s + span - n, zeros)
        before = total // 2
        paddings = api.stack([zeros, api.stack([before[0], total[0] - before[0]]),
                              api.stack([before[1], total[1] - before[1]]), zeros])
        padded = api.pad(x, paddings)
    else:
        out = (n - span) // s + 1
        padded = api_math._checked(x, api.greater_equal(n, span),
                                   f"{what}: a VALID patch spans {spans} pixels, more than "
                                   "the image's height or width")
    # an empty output ends each tap's Slice at its start (a negative end would count
    # from the back)
    reach = api.maximum((out - 1) * s + 1, zeros)
    taps = []
    for i in range(ksizes[0]):
        for j in range(ksizes[1]):
            start = _i64(g, [i * rates[0], j * rates[1]])
            taps.append(g.op("Slice", [padded, start, start + reach, _i64(g, [1, 2]), s]))
    if len(taps) == 1:
        return api.identity(taps[0], name=name)
    return g.op("Concat", taps, {"axis": 3}, name=name)


# --------------------------------------------------------------------------- variables

def all_variables() -> list:
    """Every global Variable of the default graph: TF1's deprecated name of
    og.global_variables(). Raises nothing."""
    return global_variables()


def initialize_all_variables() -> Operation:
    """One op that (re)sets every global variable: TF1's deprecated name of
    og.global_variables_initializer() (a no-op when there are none). Raises nothing."""
    return global_variables_initializer()


def initialize_local_variables() -> Operation:
    """One op that (re)sets every local variable: TF1's deprecated name of
    og.local_variables_initializer() (a no-op when there are none). Raises nothing."""
    return local_variables_initializer()


def initialize_variables(var_list, name="init") -> Operation:
    """One op that runs the initializers of var_list: TF1's deprecated name of
    og.variables_initializer().

    Raises:
        TypeError: var_list is not a list of Variables, or name is not a str.
    """
    _g.check_name(name, "initialize_variables")
    try:
        return variables_initializer(var_list, name=name)
    except TypeError as e:
        words = str(e).split(": ", 1)[-1]
        raise TypeError(f"initialize_variables: {words}") from None


# --------------------------------------------------------------------------- collections

def get_collection_ref(key) -> list:
    """The default graph's collection `key` itself (created empty if missing), which
    the caller may change in place, as tf.get_collection_ref.

    Raises:
        TypeError: key is not hashable.
    """
    return _g.get_default_graph().get_collection_ref(key)


def add_to_collections(names, value) -> None:
    """Add value to each collection of `names` (one name, or a list, tuple or set of
    them; a repeated name adds it once), in the default graph, as
    tf.add_to_collections.

    Raises:
        TypeError: names is not a name or a collection of names, or a name is not
            hashable.
    """
    if isinstance(names, str):
        names = [names]
    elif not isinstance(names, (list, tuple, set, frozenset)):
        raise TypeError(f"add_to_collections: names must be a collection name or a list "
                        f"of them, got {type(names).__name__} {_brief(names)}")
    g = _g.get_default_graph()
    seen = []
    for n in names:
        try:
            hash(n)
        except TypeError:
            raise TypeError(f"add_to_collections: a collection name must be hashable "
                            f"(usually a str), got {type(n).__name__} {_brief(n)}") from None
        if n not in seen:
            seen.append(n)
    for n in seen:
        g.add_to_collection(n, value)


class GraphKeys:
    """TF1's tf.GraphKeys: the standard collection names. Those onegraph uses itself
    (variables, trainable_variables, local_variables, metric_variables, global_step,
    update_ops, queue_runners, losses, regularization_losses) are og's own keys, so
    `og.get_collection(GraphKeys.TRAINABLE_VARIABLES)` finds what og put there; the
    others are TF1's strings, for programs that keep their own collections."""

    GLOBAL_VARIABLES = _g.GLOBAL_VARIABLES
    VARIABLES = _g.GLOBAL_VARIABLES  # TF1's deprecated alias
    LOCAL_VARIABLES = _g.LOCAL_VARIABLES
    METRIC_VARIABLES = _g.METRIC_VARIABLES
    TRAINABLE_VARIABLES = _g.TRAINABLE_VARIABLES
    GLOBAL_STEP = _g.GLOBAL_STEP
    UPDATE_OPS = _g.UPDATE_OPS
    QUEUE_RUNNERS = _g.QUEUE_RUNNERS
    LOSSES = _g.LOSSES
    REGULARIZATION_LOSSES = _g.REGULARIZATION_LOSSES
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SUMMARIES = "summaries"
    SAVERS = "savers"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    ACTIVATIONS = "activations"
    ASSET_FILEPATHS = "asset_filepaths"
    BIASES = "biases"
    WEIGHTS = "weights"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    EVAL_STEP = "eval_step"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    TRAIN_OP = "train_op"
    TABLE_INITIALIZERS = "table_initializer"
    _VARIABLE_COLLECTIONS = [GLOBAL_VARIABLES, LOCAL_VARIABLES, METRIC_VARIABLES,
                             MODEL_VARIABLES, TRAINABLE_VARIABLES, MOVING_AVERAGE_VARIABLES,
                             CONCATENATED_VARIABLES, TRAINABLE_RESOURCE_VARIABLES]


__all__ = [
    "GraphKeys", "add_to_collections", "all_variables", "arg_max", "arg_min",
    "assert_greater_equal", "assert_integer", "assert_less_equal", "assert_near",
    "assert_negative", "assert_non_negative", "assert_non_positive", "assert_none_equal",
    "assert_positive", "assert_rank", "assert_rank_at_least", "assert_scalar",
    "assert_type", "batch_to_space_nd", "div", "div_no_nan", "erfc",
    "extract_image_patches", "floor_div", "get_collection_ref", "identity_n",
    "initialize_all_variables", "initialize_local_variables", "initialize_variables",
    "is_tensor", "log_sigmoid", "logical_xor", "parallel_stack", "reverse_v2", "rint",
    "saturate_cast", "scalar_mul", "segment_max", "segment_mean", "segment_min",
    "segment_prod", "shape_n", "space_to_batch_nd", "tensor_scatter_nd_add",
    "tensor_scatter_nd_max", "tensor_scatter_nd_min", "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update", "to_bfloat16", "to_double", "to_float", "to_int32",
    "to_int64", "truncatediv", "truncatemod", "unsorted_segment_max",
    "unsorted_segment_mean", "unsorted_segment_min", "unsorted_segment_prod",
    "unsorted_segment_sqrt_n", "where_v2",
]

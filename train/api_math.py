"""TF1's math and array functions that are compositions of ONNX ops: squared_difference,
log1p / expm1 (accurate near 0), floordiv / floormod / truediv, atan2, the inverse and
hyperbolic trig functions, is_nan / is_inf / is_finite, reduce_variance / reduce_std /
reduce_euclidean_norm / count_nonzero, reverse, slice, broadcast_to, eye, linspace,
meshgrid and matrix_transpose.

Names, argument order and defaults are TF1's; each builds registered ONNX-semantics
ops, so graphs using them export, and their gradients come from those ops' own
(floordiv and the predicates have none, as in TF1). Bad arguments are refused while
building with a message naming the function.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import graph as _g
from .api import _axes, _bool_arg, _check_axis, _int_arg, _pair, _t
from . import api_extra
from .api_extra import _cast, _dtype_arg, _numeric, _rank
from .graph import Tensor
from .packing import holds_tensor, int64_tensor

_FLOATS = (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64)
_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min


def _floats(x: Tensor, what: str) -> Tensor:
    """Refuse a tensor that is not of a float dtype.

    Raises:
        TypeError: it is not (names `what`).
    """
    if x.dtype not in _FLOATS:
        raise TypeError(f"{what} must be a float tensor, got {x.dtype.short_name}")
    return x


def _operands(x, y, what: str):
    """x and y as tensors of one dtype: as the binary ops pair them when either is a
    tensor, else y converted to x's dtype (TF1's rule for two plain numbers, so that
    floormod(7.5, -2) is a float32 op rather than a float32/int64 mix).

    Raises:
        ShapeError: two tensors of different dtypes (named after `what`).
    """
    if _g._is_symbolic(x) or _g._is_symbolic(y):
        return _pair(x, y, what)
    a = _t(x)
    return a, _t(y, a.dtype)


def _where_safe(condition: Tensor, replacement, x: Tensor) -> Tensor:
    """x with `replacement` where condition holds: a denominator made safe, so the
    unused branch of a later Where has a finite gradient."""
    return api.where(condition, api.ones_like(x) * replacement, x)


def _checked(result: Tensor, condition: Tensor, message: str, name=None) -> Tensor:
    """result, run after an og.Assert that `condition` (a bool tensor, any shape) holds
    everywhere: TF1's run-time shape checks for what building could not decide. ONNX
    has no such checks, so an export leaves the Assert out."""
    from .debugging import Assert

    g = result.graph
    check = Assert(api_extra.reduce_all(condition), [message])
    with g.control_dependencies([check]):
        return api.identity(result, name=name)


# --------------------------------------------------------------------------- elementwise

def squared_difference(x, y, name=None) -> Tensor:
    """(x - y)^2 elementwise, with broadcasting (tf.squared_difference)."""
    a, b = _operands(x, y, "squared_difference")
    return api.square(a - b, name=name)


def _in_float32(x: Tensor, fn, name) -> Tensor:
    """fn(x) computed in float32 for a float16/bfloat16 x (their rounding of the
    intermediate products is too coarse), in x's own dtype otherwise."""
    if x.dtype in (DType.FLOAT16, DType.BFLOAT16):
        return api.cast(fn(api.cast(x, DType.FLOAT32)), x.dtype, name=name)
    return api.identity(fn(x), name=name)


def log1p(x, name=None) -> Tensor:
    """log(1 + x), accurate where x is tiny (where log(1 + x) would round 1 + x).

    Uses log(u) * (x / (u - 1)) with u = 1 + x, whose rounding errors cancel
    (Goldberg); the ratio is taken first, so nothing overflows before log1p does.

    Raises:
        TypeError: x is not a float tensor.
    """
    def body(x):
        u = x + 1.0
        exact = api.equal(u, 1.0)
        ratio = api.log(u) * (x / _where_safe(exact, 1.0, u - 1.0))
        # u = inf: x / inf is NaN, but log1p(inf) = inf
        return api.where(exact, x, api.where(api.equal(u, math.inf), u, ratio))

    return _in_float32(_floats(_t(x), "log1p: x"), body, name)


def expm1(x, name=None) -> Tensor:
    """exp(x) - 1, accurate where x is tiny (where exp(x) - 1 cancels).

    Uses (u - 1) * (x / log(u)) with u = exp(x) (Kahan), the ratio first so nothing
    overflows before exp does; exact 0 and -1 / inf at the ends.

    Raises:
        TypeError: x is not a float tensor.
    """
    def body(x):
        u = api.exp(x)
        em = u - 1.0
        plain = api.logical_or(api.logical_or(api.equal(em, 0.0), api.equal(u, 0.0)),
                               api.equal(u, math.inf))
        ratio = em * (x / api.log(_where_safe(plain, math.e, u)))
        return api.where(api.equal(em, 0.0), x, api.where(plain, em, ratio))

    return _in_float32(_floats(_t(x), "expm1: x"), body, name)


def _is_float(a: Tensor, what: str) -> bool:
    """Whether the operands (of one dtype, as _pair made them) are floats, else integers.

    Raises:
        ShapeError: they are neither (bool, string).
    """
    _numeric(a, f"{what}: x")
    return a.dtype in _FLOATS


def floormod(x, y, name=None) -> Tensor:
    """x - floor(x / y) * y: the remainder with the divisor's sign, as Python's %
    (tf.floormod, also tf.mod). Integer division by 0 is an error at run time.

    Raises:
        ShapeError: x and y are not numbers of one dtype.
    """
    a, b = _operands(x, y, "floormod")
    if not _is_float(a, "floormod"):
        # ONNX Mod with fmod=0 is Python's % on integers
        return a.graph.op("Mod", [a, b], {"fmod": 0}, name=name)
    rem = a.graph.op("Mod", [a, b], {"fmod": 1})
    zero = api.zeros_like(rem)
    flip = api.logical_and(api_extra.not_equal(rem, zero),
                           api_extra.not_equal(api.less(b, zero), api.less(rem, zero)))
    return api.where(flip, rem + b, rem, name=name)


mod = floormod


def floordiv(x, y, name=None) -> Tensor:
    """floor(x / y) (tf.floordiv: integers round toward -inf, not toward 0 as ONNX's
    Div). No gradient, as in TF1.

    Raises:
        ShapeError: x and y are not numbers of one dtype.
    """
    a, b = _operands(x, y, "floordiv")
    if _is_float(a, "floordiv"):
        return api.stop_gradient(api.floor(a / b), name=name)
    # a - floormod(a, b) is a multiple of b, so the truncating Div is exact
    return api._div(a - floormod(a, b), b, name=name)


def truediv(x, y, name=None) -> Tensor:
    """x / y in floats: int8/int16/uint8/uint16 operands in float32, int32/int64 ones
    in float64, as tf.truediv (tf.div on floats).

    Raises:
        ShapeError: x and y are not numbers of one dtype.
    """
    a, b = _operands(x, y, "truediv")
    if not _is_float(a, "truediv"):
        wide = DType.FLOAT64 if a.dtype.itemsize >= 4 else DType.FLOAT32
        a, b = api.cast(a, wide), api.cast(b, wide)
    return api.divide(a, b, name=name)


def realdiv(x, y, name=None) -> Tensor:
    """x / y of float tensors (tf.realdiv).

    Raises:
        TypeError: x is not a float tensor.
    """
    a, b = _operands(x, y, "realdiv")
    _floats(a, "realdiv: x")
    return api.divide(a, b, name=name)


def atan2(y, x, name=None) -> Tensor:
    """The angle of the point (x, y) in (-pi, pi], elementwise (tf.atan2); atan2(0, 0)
    is 0 and signed zeros are not told apart.

    Computed by half angles, 2 atan(y / (r + x)) where x > 0 and 2 atan((r - x) / y)
    elsewhere (r = |(x, y)|, neither sum cancels), on x and y scaled by max(|x|, |y|)
    so r cannot overflow: unlike a quadrant-corrected atan(y / x), its gradient is
    TF's (x, -y) / r^2 on the y axis too.

    Raises:
        TypeError: y is not a float tensor.
        ShapeError: y and x are not of one dtype.
    """
    b, a = _operands(y, x, "atan2")
    _floats(b, "atan2: y")
    zero = api.zeros_like(b * a)
    size = api.maximum(api.abs(a), api.abs(b))
    size = _where_safe(api.equal(size, zero), 1.0, size)
    ys, xs = b / size, a / size
    r = api.sqrt(xs * xs + ys * ys)
    right = api.greater(a, zero)
    on_axis = api.equal(b, zero)
    half = api.where(right, ys / _where_safe(api.logical_not(right), 1.0, r + xs),
                     (r - xs) / _where_safe(on_axis, 1.0, ys))
    angle = atan(half) * 2.0
    # y = 0 with x <= 0: pi on the negative x axis, 0 at the origin. There y = 0, so
    # pi + y x / x^2 is pi with TF's gradient (x, -y) / r^2 = (1 / x, 0)
    negative = api.less(a, zero)
    slope = a / _where_safe(api.logical_not(negative), 1.0, a * a)
    axis = api.where(negative, b * slope + math.pi, zero)
    return api.where(api.logical_or(right, api.logical_not(on_axis)), angle, axis,
                     name=name)


def _unary(op_type: str, tf_name: str, floats_only: bool = True):
    def fn(x, name=None):
        x = _t(x)
        if floats_only:
            _floats(x, f"{tf_name}: x")
        return x.graph.op(op_type, [x], name=name)
    fn.__name__ = tf_name
    fn.__doc__ = (f"Elementwise {tf_name} (ONNX {op_type}).\n\n    Raises:\n"
                  f"        TypeError: x is not a float tensor.")
    return fn


tan = _unary("Tan", "tan")
asin = _unary("Asin", "asin")
acos = _unary("Acos", "acos")
atan = _unary("Atan", "atan")
sinh = _unary("Sinh", "sinh")
cosh = _unary("Cosh", "cosh")
asinh = _unary("Asinh", "asinh")
acosh = _unary("Acosh", "acosh")
atanh = _unary("Atanh", "atanh")
is_nan = _unary("IsNaN", "is_nan")


def round(x, name=None) -> Tensor:  # noqa: A001 - TF's name
    """x rounded to the nearest integer, halves to even as TF's (ONNX Round); an
    integer tensor is returned as it is.

    Raises:
        ShapeError: x is not numeric.
    """
    x = _t(x)
    _numeric(x, "round: x")
    if x.dtype not in _FLOATS:
        return api.identity(x, name=name)
    return x.graph.op("Round", [x], name=name)


def is_inf(x, name=None) -> Tensor:
    """Whether each element is +inf or -inf (tf.is_inf).

    Raises:
        TypeError: x is not a float tensor.
    """
    x = _floats(_t(x), "is_inf: x")
    return x.graph.op("IsInf", [x], name=name)


def is_finite(x, name=None) -> Tensor:
    """Whether each element is neither NaN nor +-inf (tf.is_finite).

    Raises:
        TypeError: x is not a float tensor.
    """
    x = _floats(_t(x), "is_finite: x")
    bad = api.logical_or(x.graph.op("IsNaN", [x]), x.graph.op("IsInf", [x]))
    return api.logical_not(bad, name=name)


# --------------------------------------------------------------------------- reductions

def _reduction_args(axis, keepdims, what: str):
    keepdims = False if keepdims is None else _bool_arg(keepdims, f"{what}: keepdims")
    axes = None if axis is None else _axes(axis, f"{what}: axis")
    return axes, keepdims


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """sqrt(sum(x^2)) over `axis` (all axes when None), as tf.reduce_euclidean_norm
    (ONNX ReduceL2).

    Raises:
        TypeError: axis or keepdims is of the wrong kind.
    """
    axes, keepdims = _reduction_args(axis, keepdims, "reduce_euclidean_norm")
    x = _t(input_tensor)
    inputs = [x] if axes is None else [x, x.graph.constant(np.asarray(axes, np.int64))]
    if axes == []:   # no axis reduced: sqrt(x^2) = |x| (TF's EuclideanNorm)
        return api.abs(x, name=name)
    return x.graph.op("ReduceL2", inputs, {"keepdims": int(keepdims)}, name=name)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """The (biased) variance mean((x - mean(x))^2) over `axis` (tf.math.reduce_variance).

    Raises:
        TypeError: x is not a float tensor, or axis or keepdims is of the wrong kind.
    """
    axes, keepdims = _reduction_args(axis, keepdims, "reduce_variance")
    x = _floats(_t(input_tensor), "reduce_variance: input_tensor")
    mean = api.reduce_mean(x, axis=axes, keepdims=True)
    return api.reduce_mean(api.square(x - mean), axis=axes, keepdims=keepdims, name=name)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """sqrt(reduce_variance(x)) over `axis` (tf.math.reduce_std).

    Raises:
        TypeError: x is not a float tensor, or axis or keepdims is of the wrong kind.
    """
    return api.sqrt(reduce_variance(input_tensor, axis, keepdims), name=name)


def count_nonzero(input_tensor, axis=None, keepdims=None, dtype=DType.INT64,
                  name=None, reduction_indices=None, keep_dims=None) -> Tensor:
    """How many elements are not 0 (not False, for bools) over `axis`
    (tf.count_nonzero; reduction_indices and keep_dims are TF1's old names), as `dtype`.

    Raises:
        TypeError: axis or keepdims is of the wrong kind, or dtype is not numeric.
        ValueError: an argument and its old name are both given.
    """
    if reduction_indices is not None:
        if axis is not None:
            raise ValueError("count_nonzero: give axis or its old name reduction_indices, "
                             "not both")
        axis = reduction_indices
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("count_nonzero: give keepdims or its old name keep_dims, "
                             "not both")
        keepdims = keep_dims
    axes, keepdims = _reduction_args(axis, keepdims, "count_nonzero")
    dt = _dtype_arg(dtype, None, "count_nonzero: dtype")
    if dt.numpy.kind not in "iuf":
        raise TypeError(f"count_nonzero: dtype must be numeric, got {dt.short_name}")
    x = _t(input_tensor)
    nonzero = x if x.dtype == DType.BOOL else api_extra.not_equal(x, api.zeros_like(x))
    counts = api.reduce_sum(api.cast(nonzero, DType.INT64), axis=axes, keepdims=keepdims)
    return _cast(counts, dt, name=name)


# --------------------------------------------------------------------------- arrays

def reverse(tensor, axis, name=None) -> Tensor:
    """tensor with the order of its elements reversed along each axis in `axis`
    (tf.reverse; an empty list reverses nothing).

    Raises:
        TypeError: axis is not an int or a list of ints.
        ShapeError: an axis is out of range or given twice.
    """
    axes = _axes(axis, "reverse: axis")
    x = _t(tensor)
    for a in axes:
        _check_axis(a, x, "reverse: axis")
    if x.shape is not None:
        r = len(x.shape)
        if len({a % r for a in axes}) != len(axes):
            raise ShapeError(f"reverse: axis {axes} names an axis twice")
    if not axes:
        return api.identity(x, name=name)
    g = x.graph
    n = len(axes)
    const = lambda v: g.constant(np.asarray(v, np.int64))  # noqa: E731
    return g.op("Slice", [x, const([-1] * n), const([_INT64_MIN] * n),
                          const(axes), const([-1] * n)], name=name)


def slice(input_, begin, size, name=None) -> Tensor:  # noqa: A001 - TF's name
    """The block of `size` elements starting at `begin` on every axis (tf.slice); a size
    of -1 takes everything from begin on. begin and size are lists of ints, 1-D
    integer tensors, or lists mixing ints and scalar integer tensors, of the input's
    rank.

    Raises:
        TypeError: begin or size is of the wrong kind.
        ShapeError: their lengths differ from the input's rank, or a block leaves the
            input (when known while building; otherwise the run raises
            ExecutionError).
    """
    x = _t(input_)
    g = x.graph
    symbolic = holds_tensor(begin) or holds_tensor(size)
    if not symbolic:
        starts = [_int_arg(b, "slice: begin") for b in _axes(begin, "slice: begin")]
        sizes = [_int_arg(s, "slice: size") for s in _axes(size, "slice: size")]
        _check_block(x, starts, sizes)
        ends = [_INT64_MAX if s == -1 else b + s for b, s in zip(starts, sizes)]
        starts_t = g.constant(np.asarray(starts, np.int64))
        ends_t = g.constant(np.asarray(ends, np.int64))
        n = len(starts)
    else:
        starts_t = _int64_bounds(begin, "slice: begin", g)
        size_t = _int64_bounds(size, "slice: size", g)
        for t, what in ((starts_t, "begin"), (size_t, "size")):
            if t.shape is not None and len(t.shape) != 1:
                raise ShapeError(f"slice: {what} must be 1-D, got shape {list(t.shape)}")
        ends_t = api.where(api.equal(size_t, -1), api.ones_like(size_t) * _INT64_MAX,
                           starts_t + size_t)
        n = _rank(x, "slice")
    axes = g.constant(np.arange(n, dtype=np.int64))
    if not symbolic and x.shape is not None and None not in x.shape:
        return g.op("Slice", [x, starts_t, ends_t, axes], name=name)
    # the block is checked when the run knows the sizes (ONNX's Slice would clamp it)
    dims = g.op("Shape", [x])
    if not symbolic:
        size_t = g.constant(np.asarray(sizes, np.int64))
    whole = api.equal(size_t, -1)
    inside = api.logical_and(
        api.logical_and(api.greater_equal(starts_t, 0), api.less_equal(starts_t, dims)),
        api.logical_or(whole, api.logical_and(api.greater_equal(size_t, 0),
                                              api.less_equal(starts_t + size_t, dims))))
    block = g.op("Slice", [x, starts_t, ends_t, axes])
    return _checked(block, inside, "slice: begin and size must keep the block inside the "
                    "input (size -1: to the end)", name)


def _int64_bounds(value, what: str, g) -> Tensor:
    """slice's begin or size as an int64 tensor (tensors, lists packing them, or ints)."""
    if holds_tensor(value):
        return int64_tensor(value, what, g)
    return api.cast(_g.integer_tensor(value, what, g), DType.INT64)


def _check_block(x: Tensor, starts: list, sizes: list) -> None:
    if len(starts) != len(sizes):
        raise ShapeError(f"slice: begin {starts} and size {sizes} differ in length")
    if x.shape is None:
        return
    if len(starts) != len(x.shape):
        raise ShapeError(f"slice: begin {starts} must have one entry per axis of "
                         f"{x.name!r} of shape {list(x.shape)}")
    for i, (b, s, d) in enumerate(zip(starts, sizes, x.shape)):
        if b < 0 or s < -1 or (d is not None and (b > d or (s != -1 and b + s > d))):
            raise ShapeError(f"slice: axis {i}: begin {b} and size {s} leave "
                             f"{x.name!r} of shape {list(x.shape)} (size -1 means "
                             "to the end)")


def broadcast_to(input, shape, name=None) -> Tensor:  # noqa: A002 - TF's name
    """input broadcast to `shape` (tf.broadcast_to; ONNX Expand).

    Raises:
        TypeError: shape is not a list of ints or an integer tensor.
        ShapeError: input does not broadcast to shape (when known while building;
            otherwise the run raises ExecutionError).
    """
    from .api_extra import _shape_operand, _shape_tensor

    x = _t(input)
    g = x.graph
    info = _shape_operand(shape, g, "broadcast_to: shape")
    dims = info[0]
    if dims is not None and x.shape is not None:
        ok = len(x.shape) <= len(dims) and all(
            d is None or d in (1, t) for d, t in zip(reversed(x.shape), reversed(dims)))
        if not ok:
            raise ShapeError(f"broadcast_to: {x.name!r} of shape {list(x.shape)} does "
                             f"not broadcast to {list(dims)}")
    target = _shape_tensor(g, info)
    out = g.op("Expand", [x, target])
    if dims is not None and x.shape is not None and None not in x.shape:
        return api.identity(out, name=name)
    # ONNX's Expand broadcasts both ways; TF1 refuses an input that does not fit
    out_shape = g.op("Shape", [out])
    fits = api.logical_and(api.equal(g.op("Shape", [out_shape]), g.op("Shape", [target])),
                           api_extra.reduce_all(api.equal(out_shape, target)))
    return _checked(out, fits, "broadcast_to: the input does not broadcast to the shape "
                    "asked for", name)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=DType.FLOAT32,
        name=None) -> Tensor:
    """The identity matrix (num_rows, num_columns), stacked to batch_shape + that
    (tf.eye). Sizes are ints or, as in TF1, integer scalar tensors (batch_shape a list
    of them or a 1-D tensor); with ints only the result is a constant, otherwise an
    EyeLike made at run time.

    Raises:
        TypeError: a size is not an int or an integer tensor, or dtype names no
            numeric dtype.
        ShapeError: a size is negative (a tensor's, when the graph runs:
            ExecutionError), or a size tensor has the wrong rank.
    """
    dt = _dtype_arg(dtype, None, "eye: dtype")
    if holds_tensor([num_rows, num_columns, batch_shape]):
        return _eye_at_run_time(num_rows, num_columns, batch_shape, dt, name)
    rows = _int_arg(num_rows, "eye: num_rows")
    cols = rows if num_columns is None else _int_arg(num_columns, "eye: num_columns")
    batch = [] if batch_shape is None else [_int_arg(b, "eye: batch_shape")
                                            for b in _axes(batch_shape, "eye: batch_shape")]
    if min([rows, cols] + batch) < 0:
        raise ShapeError(f"eye: sizes must be >= 0, got {rows}, {cols}, batch {batch}")
    value = np.broadcast_to(np.eye(rows, cols), tuple(batch) + (rows, cols))
    return api.constant(np.ascontiguousarray(value).astype(dt.numpy), name=name)


# EyeLike's output types; others are made in float32 and cast
_EYE_LIKE_DTYPES = (
    DType.FLOAT16, DType.FLOAT32, DType.FLOAT64, DType.INT8, DType.INT16, DType.INT32,
    DType.INT64, DType.UINT8, DType.UINT16, DType.UINT32, DType.UINT64, DType.BOOL)


def _eye_at_run_time(num_rows, num_columns, batch_shape, dt, name) -> Tensor:
    """`eye` with a size known at run time: EyeLike of a (rows, cols) plane, expanded
    over the batch shape."""
    g = api._graph_of(num_rows, num_columns, batch_shape)

    def size(v, what):
        if isinstance(v, (list, tuple)) or v is None:
            raise TypeError(f"eye: {what} must be an int or an integer scalar tensor, "
                            f"got {v!r:.60}")
        return int64_tensor([v], f"eye: {what}", g)

    rows = size(num_rows, "num_rows")
    cols = rows if num_columns is None else size(num_columns, "num_columns")
    plane_shape = g.op("Concat", [rows, cols], {"axis": 0})
    made = dt if dt in _EYE_LIKE_DTYPES else DType.FLOAT32
    zeros = g.op("ConstantOfShape", [plane_shape], {"value": np.zeros(1, made.numpy)})
    y = g.op("EyeLike", [zeros])
    if batch_shape is not None:
        batch = int64_tensor([batch_shape] if isinstance(batch_shape, int)
                             else batch_shape, "eye: batch_shape", g)
        if batch.shape is not None and len(batch.shape) != 1:
            raise ShapeError(f"eye: batch_shape must be 1-D, got shape {list(batch.shape)}")
        y = g.op("Expand", [y, g.op("Concat", [batch, plane_shape], {"axis": 0})])
    return _cast(y, dt, name=name) if made != dt or name is not None else y


def linspace(start, stop, num, name=None) -> Tensor:
    """`num` evenly spaced values from start to stop, both included (tf.linspace /
    tf.lin_space). start and stop are float scalars (numbers or tensors), num an int
    or an integer scalar tensor; num = 1 gives [start].

    Raises:
        TypeError: start is not a float, or num not an integer.
        ShapeError: start, stop or num is not a scalar.
    """
    a, b = _pair(start, stop, "linspace")
    if a.dtype not in _FLOATS:
        # plain numbers come in as ints; TF1 refuses integer tensors
        if _g._is_symbolic(start) or _g._is_symbolic(stop):
            raise TypeError(f"linspace: start and stop must be floats, got "
                            f"{a.dtype.short_name}")
        a, b = api.cast(a, DType.FLOAT32), api.cast(b, DType.FLOAT32)
    g = a.graph
    if _g._is_symbolic(num):
        n = _g.integer_tensor(num, "linspace: num", g)
    else:
        count = _int_arg(num, "linspace: num")
        if count < 1:
            raise ShapeError(f"linspace: num must be >= 1, got {count}")
        n = g.constant(np.asarray(count, np.int64))
    for t, what in ((a, "start"), (b, "stop"), (n, "num")):
        if t.shape is not None and len(t.shape) != 0:
            raise ShapeError(f"linspace: {what} must be a scalar, got shape {list(t.shape)}")
    n = api.cast(n, DType.INT64)
    steps = api.cast(n - 1, a.dtype)
    step = (b - a) / _where_safe(api.equal(steps, 0.0), 1.0, steps)
    index = api.cast(g.op("Range", [g.constant(np.asarray(0, np.int64)), n,
                                    g.constant(np.asarray(1, np.int64))]), a.dtype)
    # the last value is stop itself, not start + (num - 1) * step rounded
    values = a + index * step
    last = api.logical_and(api.equal(index, steps), api.greater(steps, 0.0))
    values = api.where(last, api.zeros_like(values) + b, values)
    if not _g._is_symbolic(num):
        return api.identity(values, name=name)
    return _checked(values, api.greater(n, 0), "linspace: num must be at least 1", name)


lin_space = linspace


def meshgrid(*args, **kwargs) -> list:
    """Coordinate grids of 1-D tensors (tf.meshgrid): with indexing="xy" (the
    default) the first two outputs' axes are swapped, as numpy.meshgrid.

    Raises:
        TypeError: an argument other than indexing= and name= is given.
        ValueError: indexing is not "xy" or "ij".
        ShapeError: an input is not 1-D.
    """
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", None)
    _g.check_name(name, "meshgrid")
    if kwargs:
        raise TypeError(f"meshgrid: unexpected arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if not args:
        return []
    ts = [_t(a) for a in args]
    for i, t in enumerate(ts):
        if t.shape is not None and len(t.shape) != 1:
            raise ShapeError(f"meshgrid: input {i} must be 1-D, got shape {list(t.shape)}")
    g = ts[0].graph
    order = list(range(len(ts)))
    if indexing == "xy" and len(ts) >= 2:
        order[0], order[1] = 1, 0   # output axis k holds input order[k]
    sizes = [g.op("Shape", [ts[i]]) for i in order]
    full = api.concat(sizes, axis=0)
    out = []
    with g.name_scope(name or "meshgrid"):
        for i, t in enumerate(ts):
            shape = [1] * len(ts)
            shape[order.index(i)] = -1
            out.append(g.op("Expand", [api.reshape(t, shape), full]))
    return out


def matrix_transpose(a, name=None, conjugate=False) -> Tensor:
    """a with its last two axes swapped (tf.matrix_transpose / tf.linalg.matrix_transpose;
    onegraph's tensors are real, so `conjugate` changes nothing).

    Raises:
        ShapeError: a has rank < 2 or an unknown rank.
        TypeError: conjugate is not a bool.
    """
    _bool_arg(conjugate, "matrix_transpose: conjugate")
    x = _t(a)
    r = _rank(x, "matrix_transpose")
    if r < 2:
        raise ShapeError(f"matrix_transpose: {x.name!r} must have rank >= 2, got "
                         f"shape {list(x.shape)}")
    perm = list(range(r - 2)) + [r - 1, r - 2]
    return api.transpose(x, perm, name=name)


__all__ = [
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "broadcast_to", "cosh",
    "count_nonzero", "expm1", "eye", "floordiv", "floormod", "is_finite", "is_inf",
    "is_nan", "lin_space", "linspace", "log1p", "matrix_transpose", "meshgrid", "mod",
    "realdiv", "reduce_euclidean_norm", "reduce_std", "reduce_variance", "reverse",
    "round", "sinh", "slice", "squared_difference", "tan", "truediv",
]

"""More TF1-named graph-building functions: boolean reductions, cumsum, top_k, sort,
range, gather_nd / scatter_nd, einsum / tensordot, fill, sequence_mask, boolean_mask,
the random generators and placeholder_with_default.

Each is built from registered ONNX-semantics ops (CumSum, TopK, GatherND, ScatterND,
Einsum, Compress, Expand, Range, RandomNormal, ...), so graphs stay portable. Argument
names, order and defaults are TF1's (`tf.gather_nd(params, indices, name=None,
batch_dims=0)`, ...); where a TF1 argument is not supported the docstring says so and
the function refuses it. Index outputs are int32 where TF1's are (top_k, argsort, size,
rank). Bad arguments are refused while building, with a message naming the function
and the argument.
"""

from __future__ import annotations

import builtins
import collections
import math
import re
import string
import zlib

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..format import DType
from . import api
from . import graph as _g
from .api import _axes, _bool_arg, _check_axis, _int_arg, _pair, _shape_arg, _t
from .graph import Tensor, as_dtype, check_seed
from .packing import holds_tensor, int64_tensor

float16, float32, float64 = DType.FLOAT16, DType.FLOAT32, DType.FLOAT64
int32, int64, bool_ = DType.INT32, DType.INT64, DType.BOOL


# --------------------------------------------------------------------------- helpers

def _numeric(x: Tensor, what: str) -> None:
    """Refuse a tensor that is not of an integer or float dtype.

    Raises:
        ShapeError: it is bool, string, ... (names `what`).
    """
    if x.dtype is not DType.UNDEFINED and x.dtype.numpy.kind not in "iuf":
        raise ShapeError(f"{what} must be a numeric tensor, got {x.dtype.short_name}")


def _rank(x: Tensor, what: str) -> int:
    """The static rank of x.

    Raises:
        ShapeError: it is unknown (names `what`).
    """
    if x.shape is None:
        raise ShapeError(f"{what}: the rank of {x.name!r} must be known while building "
                         "(give the placeholder a shape)")
    return len(x.shape)


def _not_scalar(x: Tensor, what: str) -> None:
    if x.shape is not None and len(x.shape) == 0:
        raise ShapeError(f"{what} must have rank >= 1, got the scalar {x.name!r}")


def _scalar(x: Tensor, what: str) -> None:
    if x.shape is not None and len(x.shape) != 0:
        raise ShapeError(f"{what} must be a scalar, got shape {list(x.shape)}")


def _cast(x: Tensor, dtype, name=None) -> Tensor:
    """x as dtype; an Identity when it already is and a name is asked for."""
    if x.dtype == as_dtype(dtype) and name is not None:
        return x.graph.op("Identity", [x], name=name)
    return api.cast(x, dtype, name=name)


def _i64(g, values) -> Tensor:
    return g.constant(np.asarray(values, np.int64))


def _dims_slice(x: Tensor, start: int, end: int | None) -> Tensor:
    """x's dims [start, end) as a 1-D int64 tensor (a constant when they are known)."""
    attrs = {"start": start} if start else {}
    if end is not None:
        attrs["end"] = end
    return x.graph.op("Shape", [x], attrs)


def _with_segment_rows(out: Tensor, count: Tensor, d: Tensor, rank: int) -> Tensor:
    """out, a segment reduction of data d over its first `rank` dims, with its static
    shape [num_segments] + d's row dims where num_segments (`count`) is known while
    building (TF's segment ops know it; the ScatterND and Slice they are built from
    do not carry it through)."""
    n = out.graph.static_value(count)
    if n is not None and d.shape is not None:
        out.set_shape([int(np.asarray(n))] + list(d.shape[rank:]))
    return out


def _shape_operand(shape, g, what: str) -> tuple:
    """A shape argument as (its dims when known while building, else None; the int64
    1-D tensor it was given as, or None for a list of ints). It is a list of ints (or
    an int), a 1-D integer tensor, or a list mixing ints and scalar integer tensors
    (packed into one, as TF1 does).

    Raises:
        TypeError: a list holds a non-int, or shape is another kind of value.
        ShapeError: a dim is negative, or a tensor shape is not 1-D or not integer.
    """
    if not holds_tensor(shape):
        return _shape_arg(shape, what), None
    t = int64_tensor(shape, what, g)
    if t.shape is not None and len(t.shape) != 1:
        raise ShapeError(f"{what} must be a 1-D tensor, got shape {list(t.shape)}")
    value = g.static_value(t)
    if value is None:
        return None, t
    dims = tuple(int(v) for v in np.asarray(value).reshape(-1))
    if any(d < 0 for d in dims):
        raise ShapeError(f"{what} has a negative dim: {list(dims)}")
    return dims, t


def _shape_tensor(g, shape_info: tuple) -> Tensor:
    """The int64 shape tensor of a `_shape_operand` result."""
    dims, t = shape_info
    return t if t is not None else _i64(g, dims)


def _dtype_arg(dtype, allowed: tuple | None, what: str) -> DType:
    """A dtype argument that must be one of `allowed` (None: any).

    Raises:
        TypeError: it is another dtype (names `what` and the allowed ones).
        OneGraphError: it names no dtype (names `what`).
    """
    try:
        dt = as_dtype(dtype)
    except OneGraphError as e:
        raise _g._named(e, what) from None
    if allowed is not None and dt not in allowed:
        names = ", ".join(d.short_name for d in allowed)
        raise TypeError(f"{what} must be one of {names}; got {dt.short_name}")
    return dt


def _python_number(value, what: str) -> float:
    """A Python (or numpy) real number, as TF1 accepts for mean, stddev, bounds.

    Raises:
        TypeError: value is a tensor, a bool, or not a number (names `what`).
    """
    if _g._is_symbolic(value):
        raise TypeError(f"{what} must be a Python number; a tensor is not supported here "
                        "(scale or shift the result with tensor arithmetic instead)")
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what} must be a number, got {type(value).__name__} "
                        f"{_g._brief(value)}")
    return float(value)


# --------------------------------------------------------------------------- reductions

def _bool_reduce(x, axis, keepdims, name, what: str, want_any: bool) -> Tensor:
    _g.check_name(name, what)
    keepdims = False if keepdims is None else _bool_arg(keepdims, f"{what}: keepdims")
    axes = None if axis is None else _axes(axis, f"{what}: axis")
    x = _g.bool_tensor(x, f"{what}: x")
    for a in axes or ():
        _check_axis(a, x, f"{what}: axis")
    # Count the elements that decide the answer (Trues for any, Falses for all): an
    # empty reduction counts 0, so any([]) is False and all([]) True, as in TF.
    deciding = x if want_any else api.logical_not(x)
    count = api.reduce_sum(api.cast(deciding, int64), axes, keepdims=keepdims)
    zero = x.graph.constant(np.int64(0))
    op = "Greater" if want_any else "Equal"
    return x.graph.op(op, [count, zero], name=name)


def reduce_any(x, axis=None, keepdims=False, name=None) -> Tensor:
    """Logical or of a bool tensor over `axis` (int or list; None = all axes, [] =
    none), as tf.reduce_any. Empty reductions give False. TF1's deprecated aliases
    reduction_indices and keep_dims are not accepted.

    Raises:
        TypeError: axis is not an int or a list of ints, keepdims is not a bool, or
            name is not a str.
        ShapeError: x is not a bool tensor, or an axis is out of range.
        OneGraphError: a plain x does not convert to bool.
    """
    return _bool_reduce(x, axis, keepdims, name, "reduce_any", True)


def reduce_all(x, axis=None, keepdims=False, name=None) -> Tensor:
    """Logical and of a bool tensor over `axis` (int or list; None = all axes, [] =
    none), as tf.reduce_all. Empty reductions give True. TF1's deprecated aliases
    reduction_indices and keep_dims are not accepted.

    Raises:
        TypeError: axis is not an int or a list of ints, keepdims is not a bool, or
            name is not a str.
        ShapeError: x is not a bool tensor, or an axis is out of range.
        OneGraphError: a plain x does not convert to bool.
    """
    return _bool_reduce(x, axis, keepdims, name, "reduce_all", False)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """Running sum along `axis` (ONNX CumSum), as tf.cumsum: `exclusive` leaves each
    element out of its own sum (the first is 0), `reverse` sums from the end.
    `axis` must be a Python int (TF1 also takes a scalar tensor).

    Raises:
        TypeError: axis is not an int, exclusive or reverse not a bool, or name not a
            str.
        ShapeError: x is not numeric or is a scalar, or axis is out of range.
    """
    _g.check_name(name, "cumsum")
    axis = _int_arg(axis, "cumsum: axis")
    exclusive = _bool_arg(exclusive, "cumsum: exclusive")
    reverse = _bool_arg(reverse, "cumsum: reverse")
    x = _t(x)
    _numeric(x, "cumsum: x")
    _not_scalar(x, "cumsum: x")
    _check_axis(axis, x, "cumsum: axis")
    return x.graph.op("CumSum", [x, x.graph.constant(np.int64(axis))],
                      {"exclusive": int(exclusive), "reverse": int(reverse)}, name=name)


# --------------------------------------------------------------------------- sorting

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _axis_length(x: Tensor, axis: int) -> Tensor:
    """The length of x's `axis` as an int64 [n] tensor: a constant when known while
    building, else read from x's shape at run time."""
    if x.shape is not None:
        axis %= len(x.shape)
        if x.shape[axis] is not None:
            return _i64(x.graph, [x.shape[axis]])
    return _dims_slice(x, axis, None if axis == -1 else axis + 1)


def top_k(input, k=1, sorted=True, name=None) -> TopKV2:  # noqa: A002 - TF's names
    """The k largest entries of the last axis and their indices, as tf.math.top_k:
    a TopKV2 namedtuple (values, indices), indices int32, values in descending order,
    equal values in ascending index order (as TF). `sorted=False` is accepted (the
    result is sorted anyway, which TF allows). `k` must be a Python int (TF1 also
    takes a scalar tensor).

    Raises:
        TypeError: k is not an int, sorted not a bool, or name not a str.
        ValueError: k is negative.
        ShapeError: input is not numeric or is a scalar, or k is larger than its known
            last dim (an unknown one is checked when the graph runs).
    """
    _g.check_name(name, "top_k")
    k = _int_arg(k, "top_k: k")
    if k < 0:
        raise ValueError(f"top_k: k must be >= 0, got {k}")
    _bool_arg(sorted, "top_k: sorted")
    x = _t(input)
    _numeric(x, "top_k: input")
    _not_scalar(x, "top_k: input")
    n = None if x.shape is None else x.shape[-1]
    if n is not None and k > n:
        raise ShapeError(f"top_k: k={k} is larger than the last axis of {x.name!r} "
                         f"(length {n}, shape {list(x.shape)})")
    values, indices = x.graph.op("TopK", [x, _i64(x.graph, [k])],
                                 {"axis": -1, "largest": 1, "sorted": 1}, name=name)
    return TopKV2(values, _cast(indices, int32))


_DIRECTIONS = ("ASCENDING", "DESCENDING")


def _sort_along(values, axis, direction, what: str):
    """TopK over the whole `axis`: (values, int64 indices), ties by ascending index."""
    axis = _int_arg(axis, f"{what}: axis")
    if direction not in _DIRECTIONS:
        raise ValueError(f"{what}: direction must be 'ASCENDING' or 'DESCENDING', got "
                         f"{_g._brief(direction)}")
    x = _t(values)
    _numeric(x, f"{what}: values")
    _not_scalar(x, f"{what}: values")
    _check_axis(axis, x, f"{what}: axis")
    return x.graph.op("TopK", [x, _axis_length(x, axis)],
                      {"axis": axis, "largest": int(direction == "DESCENDING"),
                       "sorted": 1})


def sort(values, axis=-1, direction="ASCENDING", name=None) -> Tensor:
    """values sorted along `axis`, as tf.sort (one TopK over the whole axis).

    Raises:
        TypeError: axis is not an int, or name not a str.
        ValueError: direction is not 'ASCENDING' or 'DESCENDING'.
        ShapeError: values is not numeric or is a scalar, or axis is out of range.
    """
    _g.check_name(name, "sort")
    out, _ = _sort_along(values, axis, direction, "sort")
    return out if name is None else out.graph.op("Identity", [out], name=name)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None) -> Tensor:
    """The int32 indices that sort values along `axis`, as tf.argsort. The order is
    always stable (equal values keep ascending index order, in both directions), which
    is what stable=True asks and stable=False allows.

    Raises:
        TypeError: axis is not an int, stable not a bool, or name not a str.
        ValueError: direction is not 'ASCENDING' or 'DESCENDING'.
        ShapeError: values is not numeric or is a scalar, or axis is out of range.
    """
    _g.check_name(name, "argsort")
    _bool_arg(stable, "argsort: stable")
    _, indices = _sort_along(values, axis, direction, "argsort")
    return _cast(indices, int32, name=name)


# --------------------------------------------------------------------------- range

# TF's order for inferring range's dtype from its arguments: the widest one wins.
_RANGE_DTYPES = (int32, int64, float32, float64)


def _range_arg_dtype(value, what: str) -> DType:
    """The dtype TF1 gives a range argument: a tensor's own, int32 for a Python int
    (int64 beyond the int32 range), float32 for a Python float.

    Raises:
        TypeError: value is a bool or not a number.
        ShapeError: a tensor is not a scalar, or not int32/int64/float32/float64.
    """
    if _g._is_symbolic(value):
        t = _t(value)
        _scalar(t, what)
        if t.dtype not in _RANGE_DTYPES:
            raise ShapeError(f"{what} must be int32, int64, float32 or float64, got "
                             f"{t.dtype.short_name}")
        return t.dtype
    if isinstance(value, (np.integer, np.floating)):
        dt = DType.from_numpy(np.asarray(value).dtype)
        if dt in _RANGE_DTYPES:
            return dt
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what} must be a number or a scalar tensor, got "
                        f"{type(value).__name__} {_g._brief(value)}")
    if isinstance(value, (float, np.floating)):
        return float32
    return int32 if -2 ** 31 <= value < 2 ** 31 else int64


def _range_operand(value, dtype: DType, explicit: bool, g, what: str) -> Tensor:
    """A range argument as a scalar tensor of `dtype`.

    Raises:
        ShapeError: an explicit dtype differs from a tensor argument's (TF1 refuses
            to convert it).
        OneGraphError: a Python value does not fit dtype (names `what`).
    """
    if _g._is_symbolic(value):
        t = _t(value)
        if explicit and t.dtype != dtype:
            raise ShapeError(f"{what} is a {t.dtype.short_name} tensor, but dtype is "
                             f"{dtype.short_name} (cast it with og.cast)")
        return _cast(t, dtype)
    try:
        return g.convert(value, dtype)
    except OneGraphError as e:
        raise _g._named(e, what) from None


def range(start, limit=None, delta=1, dtype=None, name=None) -> Tensor:  # noqa: A001
    """The sequence start, start + delta, ... up to but not including limit, as
    tf.range: range(n) is 0 .. n-1. The dtype, unless given, is the widest of the
    arguments' in TF's order int32 < int64 < float32 < float64, with Python ints
    int32 and Python floats float32.

    Raises:
        TypeError: an argument is not a number or a scalar tensor, dtype is not one of
            those four, or name is not a str.
        ValueError: delta is 0 (when known while building).
        ShapeError: a tensor argument is not a scalar, or its dtype differs from an
            explicit dtype.
        OneGraphError: a Python argument does not fit dtype (1.5 for int32, ...), or
            dtype names no dtype.
    """
    _g.check_name(name, "range")
    if limit is None:
        start, limit = 0, start
    args = {"start": start, "limit": limit, "delta": delta}
    own = [_range_arg_dtype(v, f"range: {k}") for k, v in args.items()]
    explicit = dtype is not None
    dt = _dtype_arg(dtype, _RANGE_DTYPES, "range: dtype") if explicit else \
        max(own, key=_RANGE_DTYPES.index)
    g = api._graph_of(start, limit, delta)
    ts = [_range_operand(v, dt, explicit, g, f"range: {k}") for k, v in args.items()]
    step = g.static_value(ts[2])
    if step is not None and step == 0:
        raise ValueError("range: delta must not be 0")
    return g.op("Range", ts, name=name)


# --------------------------------------------------------------------------- gather/scatter

def _check_gather_nd(p: Tensor, i: Tensor, batch_dims: int) -> None:
    """Refuse index and batch shapes that cannot fit params (where known).

    Raises:
        ShapeError: indices is a scalar, its last dim is 0 or addresses more dims than
            params has after batch_dims, or the batch dims differ.
    """
    if i.shape is None:
        return
    if len(i.shape) < 1 or len(i.shape) <= batch_dims:
        raise ShapeError(f"gather_nd: indices must have rank > batch_dims={batch_dims}, "
                         f"got shape {list(i.shape)}")
    k = i.shape[-1]
    if k == 0:
        raise ShapeError("gather_nd: the last dim of indices is 0; index tuples of "
                         "length 0 are not supported")
    if p.shape is None:
        return
    if len(p.shape) <= batch_dims or (k is not None and k > len(p.shape) - batch_dims):
        raise ShapeError(f"gather_nd: indices {list(i.shape)} address {k} dims, but params "
                         f"{list(p.shape)} has {len(p.shape) - batch_dims} after "
                         f"batch_dims={batch_dims}")
    for j in builtins.range(batch_dims):
        a, b = p.shape[j], i.shape[j]
        if a is not None and b is not None and a != b:
            raise ShapeError(f"gather_nd: batch dim {j} is {a} in params but {b} in "
                             "indices")


def gather_nd(params, indices, name=None, batch_dims=0) -> Tensor:
    """Slices of params addressed by index tuples (the last axis of indices), after
    `batch_dims` leading dims shared by both, as tf.gather_nd (ONNX GatherND).
    Unlike TF, a negative index counts from the end (ONNX); indices beyond a dim are
    an error when the graph runs, as in TF on CPU.

    Raises:
        TypeError: batch_dims is not an int, or name not a str.
        ValueError: batch_dims is negative.
        ShapeError: indices is not an integer tensor, or does not fit params (see
            above).
    """
    _g.check_name(name, "gather_nd")
    batch_dims = _int_arg(batch_dims, "gather_nd: batch_dims")
    if batch_dims < 0:
        raise ValueError(f"gather_nd: batch_dims must be >= 0, got {batch_dims}")
    p = _t(params)
    i = _g.integer_tensor(indices, "gather_nd: indices", p.graph)
    _check_gather_nd(p, i, batch_dims)
    # ONNX's GatherND takes int64 indices only (TF's int32 ones would not export)
    return p.graph.op("GatherND", [p, _cast(i, DType.INT64)], {"batch_dims": batch_dims},
                      name=name)


def _check_scatter_nd(i: Tensor, u: Tensor, dims) -> None:
    """Refuse indices and updates that do not fit the output shape (where known).

    Raises:
        ShapeError: indices is a scalar, its tuples are longer than the shape, or
            updates is not indices.shape[:-1] + shape[k:].
    """
    if i.shape is None:
        return
    if len(i.shape) < 1:
        raise ShapeError("scatter_nd: indices must have rank >= 1, got a scalar")
    k = i.shape[-1]
    if dims is None or k is None:
        return
    if k > len(dims):
        raise ShapeError(f"scatter_nd: indices {list(i.shape)} address {k} dims, but the "
                         f"shape {list(dims)} has {len(dims)}")
    want = tuple(i.shape[:-1]) + tuple(dims[k:])
    if u.shape is not None and (len(u.shape) != len(want) or any(
            a is not None and b is not None and a != b for a, b in zip(u.shape, want))):
        raise ShapeError(f"scatter_nd: updates must have shape {list(want)} (indices.shape"
                         f"[:-1] + shape[{k}:]), got {list(u.shape)}")


def scatter_nd(indices, updates, shape, name=None) -> Tensor:
    """A tensor of `shape`, zeros except at the index tuples, where the updates are
    summed (duplicates add up, as in tf.scatter_nd): ScatterND with reduction 'add'
    into zeros. `shape` is a list of ints or a 1-D integer tensor. Unlike TF, a
    negative index counts from the end (ONNX).

    Raises:
        TypeError: shape is neither a list of ints nor a tensor, or name not a str.
        ShapeError: indices is not an integer tensor, a dim of shape is negative, or
            indices and updates do not fit the shape (where known).
        OneGraphError: updates has no known dtype.
    """
    _g.check_name(name, "scatter_nd")
    u = _t(updates)
    g = u.graph
    if u.dtype is DType.UNDEFINED:
        raise OneGraphError(f"scatter_nd: updates {u.name!r} has no known dtype")
    i = _g.integer_tensor(indices, "scatter_nd: indices", g)
    shape_info = _shape_operand(shape, g, "scatter_nd: shape")
    _check_scatter_nd(i, u, shape_info[0])
    shape_t = _shape_tensor(g, shape_info)
    zeros = g.op("ConstantOfShape", [shape_t], {"value": np.zeros(1, u.dtype.numpy)})
    # (ONNX's ScatterND takes int64 indices only)
    return g.op("ScatterND", [zeros, _cast(i, DType.INT64), u], {"reduction": "add"},
                name=name)


# --------------------------------------------------------------------------- einsum

_EQUATION = re.compile(r"[A-Za-z.,]*(->[A-Za-z.]*)?")


def _subscripts(term: str, equation: str) -> list:
    """The labels of one term ('...' kept as one item).

    Raises:
        ValueError: a '.' outside one '...'.
    """
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ValueError(f"einsum: equation {equation!r}: a term may hold one '...' and "
                         "no other '.'")
    return ["..."] * ("..." in term) + [c for c in term.replace("...", "")]


def _parse_equation(equation, n_inputs: int) -> tuple:
    """(the input terms' label lists, the output's or None when implicit).

    Raises:
        TypeError: equation is not a str.
        ValueError: it is malformed, its term count is not the input count, or the
            output names a label no input has.
    """
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a str, got {type(equation).__name__}")
    eq = equation.replace(" ", "")
    if not _EQUATION.fullmatch(eq):
        raise ValueError(f"einsum: equation {equation!r} is malformed (letters, ',', "
                         "'...' and at most one '->')")
    lhs, arrow, rhs = eq.partition("->")
    terms = [_subscripts(t, equation) for t in lhs.split(",")]
    if len(terms) != n_inputs:
        raise ValueError(f"einsum: equation {equation!r} has {len(terms)} input terms, "
                         f"but {n_inputs} inputs were given")
    out = _subscripts(rhs, equation) if arrow else None
    known = {c for t in terms for c in t}
    for c in out or ():
        if c not in known or out.count(c) > 1:
            raise ValueError(f"einsum: output label {c!r} of {equation!r} is "
                             + ("repeated" if c in known else "in no input"))
    return terms, out


def einsum(equation, *inputs, name=None) -> Tensor:
    """Einstein summation over the inputs (ONNX Einsum), as tf.einsum: e.g.
    einsum('ij,jk->ik', a, b) is a matmul; '...' stands for broadcast dims.

    Raises:
        TypeError: equation is not a str, or name not a str.
        ValueError: no inputs, or the equation is malformed, has another number of
            terms than inputs, or outputs a label no input has.
        ShapeError: the inputs have different dtypes, an input's known rank does not
            match its term, or a label has two sizes.
    """
    _g.check_name(name, "einsum")
    if not inputs:
        raise ValueError("einsum: give at least one input tensor")
    terms, _ = _parse_equation(equation, len(inputs))
    g = api._graph_of(*inputs)
    first = next((x for x in inputs if _g._is_symbolic(x)), None)
    dtype = None if first is None else _g._dtype_for(_t(first, graph=g))
    ts = [_t(x, None if _g._is_symbolic(x) else dtype, graph=g) for x in inputs]
    _g.check_same_dtype("einsum", ts)
    for k, (t, term) in enumerate(zip(ts, terms)):
        labels = len(term) - ("..." in term)
        if t.shape is not None and (len(t.shape) < labels or
                                    ("..." not in term and len(t.shape) != labels)):
            raise ShapeError(f"einsum: input {k} has shape {list(t.shape)}, which does "
                             f"not fit term {''.join(term)!r} of {equation!r}")
    ts = _even_ellipses(ts, equation.replace(" ", "").partition("->")[0].split(","))
    return g.op("Einsum", ts, {"equation": equation.replace(" ", "")}, name=name)


def _even_ellipses(ts: list, terms: list) -> list:
    """The inputs with size-1 dims added at the front of their '...' so that every
    '...' stands for as many dims: tf.einsum broadcasts '...'s of different widths
    (as numpy), ONNX's Einsum (and onnxruntime) needs them equal. Left as they are
    when a rank is unknown."""
    widths = [None if "..." not in term or t.shape is None
              else len(t.shape) - (len(term) - 3) for t, term in zip(ts, terms)]
    if any(w is None for w, term in zip(widths, terms) if "..." in term):
        return ts
    widest = max((w for w in widths if w is not None), default=0)
    out = []
    for t, term, w in zip(ts, terms, widths):
        if w is not None and w < widest:
            at = term.index("...")   # labels before the '...'
            axes = np.arange(at, at + widest - w, dtype=np.int64)
            t = t.graph.op("Unsqueeze", [t, t.graph.constant(axes)])
        out.append(t)
    return out


def _axis_list(value, rank: int, what: str) -> list:
    """An int or list of ints as non-negative axes of a rank-`rank` tensor.

    Raises:
        TypeError: value is not an int or a list of ints.
        ShapeError: an axis is out of range.
        ValueError: an axis is repeated.
    """
    axes = _axes(value, what)
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise ShapeError(f"{what}: axis {a} is out of range for rank {rank}")
        out.append(a % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: axes {axes} repeat an axis")
    return out


def _tensordot_axes(axes, ra: int, rb: int) -> tuple:
    """TF's axes argument as (a's contracted axes, b's): an int N means a's last N
    with b's first N; a pair (of ints or lists) lists them.

    Raises:
        TypeError: axes is neither an int nor a pair.
        ValueError: N is negative, the pair's lists differ in length, or an axis
            repeats.
        ShapeError: N exceeds a rank, or an axis is out of range.
    """
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, (bool, np.bool_)):
        n = int(axes)
        if n < 0:
            raise ValueError(f"tensordot: axes must be >= 0, got {n}")
        if n > min(ra, rb):
            raise ShapeError(f"tensordot: axes={n} is more than the ranks {ra} and {rb}")
        return list(builtins.range(ra - n, ra)), list(builtins.range(n))
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise TypeError(f"tensordot: axes must be an int or a pair [a_axes, b_axes], got "
                        f"{_g._brief(axes)}")
    a_axes = _axis_list(axes[0], ra, "tensordot: axes[0]")
    b_axes = _axis_list(axes[1], rb, "tensordot: axes[1]")
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: axes {axes} contract {len(a_axes)} axes of a but "
                         f"{len(b_axes)} of b")
    return a_axes, b_axes


def tensordot(a, b, axes, name=None) -> Tensor:
    """Sum of products over the axes `axes` pairs up, as tf.tensordot: an int N
    contracts a's last N axes with b's first N; a pair [a_axes, b_axes] (ints or
    lists) names them. The result's axes are a's free ones then b's. Built as one
    Einsum, so both ranks must be known while building (TF1 also handles unknown
    ranks); a tensor `axes` is not supported.

    Raises:
        TypeError: axes is neither an int nor a pair, or name not a str.
        ValueError: see `axes` above (negative, repeated, unequal counts).
        ShapeError: a and b have different dtypes or an unknown rank (or ranks adding
            up to more than 52), an axis is out of range, or contracted dims differ.
    """
    _g.check_name(name, "tensordot")
    a, b = _pair(a, b, "tensordot")
    ra, rb = _rank(a, "tensordot: a"), _rank(b, "tensordot: b")
    if ra + rb > len(string.ascii_letters):  # one Einsum label per axis
        raise ShapeError(f"tensordot: ranks {ra} and {rb} add up to more than "
                         f"{len(string.ascii_letters)}, which one Einsum cannot label")
    a_axes, b_axes = _tensordot_axes(axes, ra, rb)
    for i, j in zip(a_axes, b_axes):
        da, db = a.shape[i], b.shape[j]
        if da is not None and db is not None and da != db:
            raise ShapeError(f"tensordot: axis {i} of a (length {da}) and axis {j} of b "
                             f"(length {db}) differ")
    letters = iter(string.ascii_letters)
    la = [next(letters) for _ in builtins.range(ra)]
    lb = [next(letters) for _ in builtins.range(rb)]
    for i, j in zip(a_axes, b_axes):
        lb[j] = la[i]
    out = [c for k, c in enumerate(la) if k not in a_axes] + \
        [c for k, c in enumerate(lb) if k not in b_axes]
    equation = f"{''.join(la)},{''.join(lb)}->{''.join(out)}"
    return a.graph.op("Einsum", [a, b], {"equation": equation}, name=name)


# --------------------------------------------------------------------------- small ops

def not_equal(x, y, name=None) -> Tensor:
    """Elementwise x != y with numpy broadcasting (bool), as tf.not_equal.

    Raises:
        TypeError: name is not a str.
        ShapeError: x and y are tensors of different dtypes.
        OneGraphError: a plain operand does not convert to the other's dtype.
    """
    _g.check_name(name, "not_equal")
    a, b = _pair(x, y, "not_equal")
    return a.graph.op("Not", [a.graph.op("Equal", [a, b])], name=name)


def size(input, name=None, out_type=int32) -> Tensor:  # noqa: A002 - TF's name
    """The number of elements of input, as tf.size (int32 unless out_type is int64);
    a constant when the shape is known while building.

    Raises:
        TypeError: out_type is not int32 or int64, or name not a str.
        OneGraphError: out_type names no dtype.
    """
    _g.check_name(name, "size")
    dt = _dtype_arg(out_type, (int32, int64), "size: out_type")
    x = _t(input)
    return _cast(x.graph.op("Size", [x]), dt, name=name)


def rank(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """The number of dims of input as an int32 scalar, as tf.rank: a constant when
    known while building, else computed from the run-time shape.

    Raises:
        TypeError: name is not a str.
    """
    _g.check_name(name, "rank")
    x = _t(input)
    if x.shape is not None:
        return x.graph.constant(np.int32(len(x.shape)), name=name)
    return _cast(x.graph.op("Size", [x.graph.op("Shape", [x])]), int32, name=name)


def fill(dims, value, name=None) -> Tensor:
    """A tensor of shape `dims` with every element `value` (a scalar, Python or
    tensor; Python values take og.constant's dtypes: int64, float32), as tf.fill:
    an Expand of the value, so the gradient reaches a tensor value. `dims` is a list
    of ints or a 1-D integer tensor.

    Raises:
        TypeError: dims is neither a list of ints nor a tensor, or name not a str.
        ShapeError: value is not a scalar, or a dim is negative.
        OneGraphError: value is not a number.
    """
    _g.check_name(name, "fill")
    graph = api._graph_of(dims, value)
    try:
        v = _t(value, graph=graph)
    except OneGraphError as e:
        raise _g._named(e, "fill: value") from None
    _scalar(v, "fill: value")
    shape_t = _shape_tensor(v.graph, _shape_operand(dims, v.graph, "fill: dims"))
    return v.graph.op("Expand", [v, shape_t], name=name)


def sequence_mask(lengths, maxlen=None, dtype=bool_, name=None) -> Tensor:
    """mask[..., j] = j < lengths[...], of shape lengths.shape + [maxlen], as
    tf.sequence_mask; maxlen defaults to max(lengths) (a last dim of 0 for empty
    lengths).

    Raises:
        TypeError: maxlen is neither an int nor a tensor, or name not a str.
        ValueError: maxlen is negative.
        ShapeError: lengths or a tensor maxlen is not an integer tensor, or maxlen is
            not a scalar.
        OneGraphError: dtype names no dtype.
    """
    _g.check_name(name, "sequence_mask")
    dt = _dtype_arg(dtype, None, "sequence_mask: dtype")
    lens = _cast(_g.integer_tensor(lengths, "sequence_mask: lengths"), int64)
    g = lens.graph
    if maxlen is None:
        # ONNX's max of no lengths is the int64 minimum: an empty Range, as in TF
        top = g.op("ReduceMax", [lens], {"keepdims": 0})
    elif _g._is_symbolic(maxlen):
        top = _g.integer_tensor(maxlen, "sequence_mask: maxlen", g)
        _scalar(top, "sequence_mask: maxlen")
        top = _cast(top, int64)
    else:
        top = _int_arg(maxlen, "sequence_mask: maxlen")
        if top < 0:
            raise ValueError(f"sequence_mask: maxlen must be >= 0, got {top}")
        top = g.constant(np.int64(top))
    positions = g.op("Range", [g.constant(np.int64(0)), top, g.constant(np.int64(1))])
    mask = g.op("Less", [positions, api.expand_dims(lens, -1)])
    return _cast(mask, dt, name=name)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None,  # noqa: A002
                     name=None, seq_dim=None, batch_dim=None) -> Tensor:
    """For each batch entry b, the first seq_lengths[b] entries along `seq_axis`
    reversed and the rest kept, as tf.reverse_sequence (seq_dim / batch_dim are its
    deprecated names). ONNX's ReverseSequence, between transposes when the axes are
    not (batch, time) = (0, 1) or (1, 0).

    Raises:
        TypeError: seq_axis is missing, or an axis or name is of the wrong type.
        ShapeError: the axes are out of range or equal, input's rank is unknown or
            below 2, or seq_lengths is not a 1-D integer tensor.
    """
    _g.check_name(name, "reverse_sequence")
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_axis is not None else (batch_dim or 0)
    if seq_axis is None:
        raise TypeError("reverse_sequence: seq_axis is required")
    x = _t(input)
    rank = _rank(x, "reverse_sequence: input")
    if rank < 2:
        raise ShapeError(f"reverse_sequence: input must have rank >= 2, got {rank}")
    t_axis = _check_axis(_int_arg(seq_axis, "reverse_sequence: seq_axis"), x,
                         "reverse_sequence: seq_axis") % rank
    b_axis = _check_axis(_int_arg(batch_axis, "reverse_sequence: batch_axis"), x,
                         "reverse_sequence: batch_axis") % rank
    if t_axis == b_axis:
        raise ShapeError(f"reverse_sequence: seq_axis and batch_axis are both {t_axis}")
    lengths = _g.integer_tensor(seq_lengths, "reverse_sequence: seq_lengths", x.graph)
    if lengths.shape is not None and len(lengths.shape) != 1:
        raise ShapeError(f"reverse_sequence: seq_lengths must be 1-D, got shape "
                         f"{list(lengths.shape)}")
    lengths = _cast(lengths, int64)
    if {t_axis, b_axis} == {0, 1}:
        return x.graph.op("ReverseSequence", [x, lengths],
                          {"batch_axis": b_axis, "time_axis": t_axis}, name=name)
    perm = [b_axis, t_axis] + [k for k in builtins.range(rank)
                              if k not in (b_axis, t_axis)]
    inverse = [perm.index(k) for k in builtins.range(rank)]
    moved = api.transpose(x, perm)
    turned = x.graph.op("ReverseSequence", [moved, lengths],
                        {"batch_axis": 0, "time_axis": 1})
    return api.transpose(turned, inverse, name=name)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None) -> Tensor:
    """out[i, ...] = the sum of data[j, ...] over the positions j with
    segment_ids[j] == i, for i < num_segments, as tf.unsorted_segment_sum:
    segment_ids holds the leading dims of data (its shape is a prefix of data's), a
    negative id drops its row, and a segment no id names is 0. ScatterND with
    reduction 'add' into zeros (one extra row takes the dropped rows); ids of
    num_segments or more are an error at run time.

    Raises:
        TypeError: name is not a str.
        ShapeError: segment_ids is not an integer tensor or its shape is not a prefix
            of data's (where known), or num_segments is not an integer scalar.
        OneGraphError: data has no known dtype.
    """
    _g.check_name(name, "unsorted_segment_sum")
    d = _t(data)
    g = d.graph
    if d.dtype is DType.UNDEFINED:
        raise OneGraphError(f"unsorted_segment_sum: data {d.name!r} has no known dtype")
    ids = _cast(_g.integer_tensor(segment_ids, "unsorted_segment_sum: segment_ids", g),
                int64)
    if ids.shape is not None and d.shape is not None and (
            len(ids.shape) > len(d.shape) or any(
                a is not None and b is not None and a != b
                for a, b in zip(ids.shape, d.shape))):
        raise ShapeError(f"unsorted_segment_sum: segment_ids of shape {list(ids.shape)} "
                         f"must be a prefix of data's shape {list(d.shape)}")
    count = _cast(_g.integer_tensor(num_segments, "unsorted_segment_sum: num_segments",
                                    g), int64)
    _scalar(count, "unsorted_segment_sum: num_segments")
    rank = len(ids.shape) if ids.shape is not None else _rank(ids, "segment_ids")
    # rows are shifted down by one: a dropped (negative) id goes to row 0, cut off
    # after, and an id of num_segments or more stays out of range
    kept = api.greater_equal(ids, np.int64(0))
    index = api.expand_dims(api.where(kept, api.add(ids, np.int64(1)), api.zeros_like(ids)),
                            -1)
    total = api.reshape(api.add(count, np.int64(1)), [1])
    zeros = g.op("ConstantOfShape", [api.concat([total, _dims_slice(d, rank, None)], 0)],
                 {"value": np.zeros(1, d.dtype.numpy)})
    summed = g.op("ScatterND", [zeros, index, d], {"reduction": "add"})
    return _with_segment_rows(g.op("Slice", [summed, _i64(g, [1]), total, _i64(g, [0])],
                                   name=name), count, d, rank)


def segment_sum(data, segment_ids, name=None) -> Tensor:
    """tf.segment_sum: unsorted_segment_sum over max(segment_ids) + 1 segments; the ids
    are 1-D. TF requires them sorted and non-negative; here they are not checked: any
    order gives the same sums, and a negative id drops its row.

    Raises:
        as `unsorted_segment_sum`, and ShapeError: segment_ids is not 1-D.
    """
    _g.check_name(name, "segment_sum")
    d = _t(data)
    ids = _cast(_g.integer_tensor(segment_ids, "segment_sum: segment_ids", d.graph), int64)
    if ids.shape is not None and len(ids.shape) != 1:
        raise ShapeError(f"segment_sum: segment_ids must be 1-D, got shape "
                         f"{list(ids.shape)}")
    top = d.graph.op("ReduceMax", [ids], {"keepdims": 0})
    # no ids (ONNX's max of nothing is the int64 minimum): no segments
    count = api.maximum(api.add(top, np.int64(1)), np.int64(0))
    return unsorted_segment_sum(d, ids, count, name=name)


def _check_mask_dims(x: Tensor, m: Tensor, axis: int) -> None:
    """Refuse a mask whose dims differ from x's dims axis .. axis+k-1 (where known).

    Raises:
        ShapeError: they differ, or the mask has more dims than x has from axis on.
    """
    k = len(m.shape)
    if axis + k > len(x.shape):
        raise ShapeError(f"boolean_mask: a rank-{k} mask from axis {axis} needs a tensor "
                         f"of rank >= {axis + k}, got shape {list(x.shape)}")
    for j, d in enumerate(m.shape):
        e = x.shape[axis + j]
        if d is not None and e is not None and d != e:
            raise ShapeError(f"boolean_mask: mask shape {list(m.shape)} does not match "
                             f"dims {axis}..{axis + k - 1} of tensor shape {list(x.shape)}")


def _merge_dims(x: Tensor, axis: int, k: int) -> Tensor:
    """x with its dims axis .. axis+k-1 merged into one (their product, not -1, so
    that an empty dim elsewhere still reshapes)."""
    g = x.graph
    parts = [] if axis == 0 else [_dims_slice(x, 0, axis)]
    span = _dims_slice(x, axis, axis + k)
    parts.append(g.op("ReduceProd", [span], {"keepdims": 1}))
    if axis + k < len(x.shape):
        parts.append(_dims_slice(x, axis + k, None))
    shape = parts[0] if len(parts) == 1 else g.op("Concat", parts, {"axis": 0})
    # allowzero: an empty dim is a 0 to keep, not ONNX's "copy the input's dim"
    return g.op("Reshape", [x, shape], {"allowzero": 1})


def boolean_mask(tensor, mask, name=None, axis=None) -> Tensor:
    """The slices of tensor where mask is True, as tf.boolean_mask: a rank-k mask
    covers tensor's dims axis .. axis+k-1 (axis defaults to 0), which become one dim
    holding the selected entries in row-major order. The mask's rank and the tensor's
    must be known while building (as in TF); their dims are compared where known, and
    dims known only at run time must agree (checked when the graph runs: ONNX Compress
    would take a shorter mask as False for the rest).

    Raises:
        TypeError: axis is not an int, or name not a str.
        ShapeError: mask is not bool, is a scalar or of unknown rank, tensor's rank is
            unknown, axis is out of range, or the mask does not fit the dims.
        ExecutionError (when run): dims known only then do not fit the mask.
    """
    _g.check_name(name, "boolean_mask")
    axis = 0 if axis is None else _int_arg(axis, "boolean_mask: axis")
    x = _t(tensor)
    m = _g.bool_tensor(mask, "boolean_mask: mask", x.graph)
    if m.shape is None or len(m.shape) == 0:
        raise ShapeError("boolean_mask: mask must have a known rank >= 1, got "
                         + ("an unknown rank" if m.shape is None else "a scalar"))
    r = _rank(x, "boolean_mask: tensor")
    _check_axis(axis, x, "boolean_mask: axis")
    axis %= r
    _check_mask_dims(x, m, axis)
    k = len(m.shape)
    if x.shape is None or None in tuple(x.shape[axis:axis + k]) + tuple(m.shape):
        # dims only the run knows must agree there: Compress would read a longer mask
        # past the tensor's end and a shorter one as False for the rest
        from .api_math import _checked

        g = x.graph
        covered = g.op("Shape", [x], {"start": axis, "end": axis + k})
        m = _checked(m, api.equal(g.op("Shape", [m]), covered),
                     "boolean_mask: the mask's shape must equal the dims of the tensor it "
                     "covers")
    flat = x if k == 1 else _merge_dims(x, axis, k)
    flat_mask = m if k == 1 else api.reshape(m, [-1])
    return x.graph.op("Compress", [flat, flat_mask], {"axis": axis}, name=name)


# --------------------------------------------------------------------------- random

# TF1's graph seed stand-in when only an op seed is given (tf.random.set_seed docs).
_DEFAULT_GRAPH_SEED = 87654321
# The seed attribute is a float (float32 in an ONNX file): seeds below 2**24 survive it.
_SEED_RANGE = 1 << 24
_FLOATS = (float16, float32, float64)


def _op_seed(g, seed, scope: str, what: str) -> float | None:
    """The seed attribute of a random op, by TF1's rules: none when neither the graph
    seed (og.set_random_seed) nor `seed` is set (the Session's generator draws, so
    og.Session(graph, seed=...) makes runs reproducible); else one derived from both,
    the op's unique name scope standing in for a missing op seed (as
    RandomShuffleQueue does), so identical builds draw alike.

    Raises:
        TypeError: seed is not an int or None.
        ValueError: seed is negative.
    """
    seed = check_seed(seed, what)
    if seed is None and g.seed is None:
        return None
    words = [_DEFAULT_GRAPH_SEED if g.seed is None else int(g.seed),
             zlib.crc32(scope.encode()) if seed is None else seed]
    return float(np.random.SeedSequence(words).generate_state(1)[0] % _SEED_RANGE)


def _draw(g, op_type: str, shape_info: tuple, dtype: DType, attrs: dict, seed):
    """One RandomNormal/RandomUniform node: with a `shape` attribute when the shape is
    known while building, else the *Like form over a run-time-shaped tensor."""
    dims, shape_t = shape_info
    attrs = dict(attrs, dtype=api.onnx_type(dtype), seed=seed)
    if dims is not None:
        return g.op(op_type, [], dict(attrs, shape=list(dims)))
    like = g.op("ConstantOfShape", [shape_t], {"value": np.zeros(1, np.float64)})
    return g.op(op_type + "Like", [like], attrs)


def _random_setup(shape, seed, name, default: str, what: str):
    """Checks shared by the random functions: (graph, shape info, name scope cm)."""
    _g.check_name(name, what)
    check_seed(seed, what)
    g = api._graph_of(shape)
    return g, _shape_operand(shape, g, f"{what}: shape"), g.name_scope(name or default)


_SEEDED_DOC = """Seeds follow TF1: with neither og.set_random_seed nor `seed`, values
    come from the Session's generator (og.Session(graph, seed=...) repeats them);
    otherwise the op seed is derived from both, so rebuilding the graph gives the same
    values: a seeded op draws new values on each run of a Session, the same sequence
    in every new Session."""


_NORMAL_RAISES = """Raises:
        TypeError: mean or stddev is not a Python number, dtype is not a float type,
            shape is not a list of ints or a tensor, seed is not an int, or name not a
            str.
        ValueError: seed is negative.
        ShapeError: a dim is negative, or a shape tensor is not 1-D integers.
        OneGraphError: dtype names no dtype."""


def _normal_setup(shape, mean, stddev, dtype, seed, name, what: str):
    """The checked arguments of random_normal / truncated_normal: (mean, stddev,
    dtype, graph, shape info, name scope cm). Raises as they say (_NORMAL_RAISES)."""
    mean = _python_number(mean, f"{what}: mean")
    stddev = _python_number(stddev, f"{what}: stddev")
    dt = _dtype_arg(dtype, _FLOATS, f"{what}: dtype")
    g, shape_info, scope_cm = _random_setup(shape, seed, name, what, what)
    return mean, stddev, dt, g, shape_info, scope_cm


def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None,
                  name=None) -> Tensor:
    """Normal(mean, stddev) values of `shape` (a list of ints or a 1-D integer tensor),
    as tf.random_normal; built under the name scope `name` ('random_normal').
    mean and stddev must be Python numbers (TF1 also takes tensors).

    {seeds}

    {normal_raises}
    """
    mean, stddev, dt, g, shape_info, scope_cm = _normal_setup(
        shape, mean, stddev, dtype, seed, name, "random_normal")
    with scope_cm as scope:
        op_seed = _op_seed(g, seed, scope, "random_normal")
        return _draw(g, "RandomNormal", shape_info, dt, {"mean": mean, "scale": stddev},
                     op_seed)


def _uniform_floats(g, shape_info, lo: float, hi: float, dt: DType, seed) -> Tensor:
    x = _draw(g, "RandomUniform", shape_info, dt, {"low": lo, "high": hi}, seed)
    if not lo < hi:
        return x
    # Drawn in float64 and rounded to dtype, a value just below maxval can round up to
    # it; TF's range is [minval, maxval), so such values become the largest below it.
    below = np.nextafter(dt.numpy.type(hi), dt.numpy.type(-np.inf))
    return g.op("Min", [x, g.constant(np.asarray(below, dt.numpy))])


# Integer draws are floor(u * span) of a float64 uniform u: exact while span <= 2**53.
_MAX_INT_SPAN = 2 ** 53


def _uniform_ints(g, shape_info, lo, hi, dt: DType, seed) -> Tensor:
    """Uniform integers in [lo, hi) of dtype dt.

    Raises:
        TypeError: a bound is not an int.
        ValueError: lo >= hi, the span exceeds 2**53, or a bound does not fit dt.
    """
    lo = _int_arg(lo, "random_uniform: minval")
    hi = _int_arg(hi, "random_uniform: maxval")
    info = np.iinfo(dt.numpy)
    if not info.min <= lo < hi <= info.max:
        raise ValueError(f"random_uniform: need minval < maxval within the range of "
                         f"{dt.short_name}, got [{lo}, {hi})")
    if hi - lo > _MAX_INT_SPAN:
        raise ValueError(f"random_uniform: maxval - minval is {hi - lo}; spans above "
                         "2**53 are not supported")
    u = _draw(g, "RandomUniform", shape_info, float64, {"low": 0.0, "high": float(hi - lo)},
              seed)
    # min(): float64 rounding of u * span could reach the span itself. The offset is
    # added in int64 (in float64, bounds past 2**53 would round; in int32, a span
    # past 2**31 would wrap), and lo + k always fits dt.
    k = g.op("Min", [g.op("Floor", [u]), g.constant(np.float64(hi - lo - 1))])
    return api.cast(g.op("Add", [api.cast(k, int64), g.constant(np.int64(lo))]), dt)


def random_uniform(shape, minval=0, maxval=None, dtype=float32, seed=None,
                   name=None) -> Tensor:
    """Uniform values in [minval, maxval) of `shape` (a list of ints or a 1-D integer
    tensor), as tf.random_uniform; maxval defaults to 1 for floats and must be given
    for int32/int64. Built under the name scope `name` ('random_uniform'). minval and
    maxval must be Python numbers (TF1 also takes tensors).

    {seeds}

    Raises:
        TypeError: a bound is not a Python number (an int for integer dtypes), dtype is
            not float16/32/64 or int32/64, shape is not a list of ints or a tensor,
            seed is not an int, or name not a str.
        ValueError: an integer dtype without maxval, minval >= maxval or bounds outside
            it, a span above 2**53, or a negative seed.
        ShapeError: a dim is negative, or a shape tensor is not 1-D integers.
        OneGraphError: dtype names no dtype.
    """
    dt = _dtype_arg(dtype, _FLOATS + (int32, int64), "random_uniform: dtype")
    if dt in _FLOATS:
        lo = _python_number(minval, "random_uniform: minval")
        hi = 1.0 if maxval is None else _python_number(maxval, "random_uniform: maxval")
    elif maxval is None:
        raise ValueError(f"random_uniform: maxval must be given for the integer dtype "
                         f"{dt.short_name}")
    g, shape_info, scope_cm = _random_setup(shape, seed, name, "random_uniform",
                                            "random_uniform")
    with scope_cm as scope:
        op_seed = _op_seed(g, seed, scope, "random_uniform")
        if dt in _FLOATS:
            return _uniform_floats(g, shape_info, lo, hi, dt, op_seed)
        return _uniform_ints(g, shape_info, minval, maxval, dt, op_seed)


# A truncated normal keeps |z| < 2 (TF1 redraws values beyond 2 stddev).
_TRUNCATION = 2.0
_ERF_BOUND = math.erf(_TRUNCATION / math.sqrt(2.0))  # P(|Z| < 2) = erf(2 / sqrt 2)
# Winitzki's constant: his closed form is within about 2e-3 of erfinv.
_WINITZKI_A = 0.147
_NEWTON_STEPS = 3


def _erfinv(z: Tensor) -> Tensor:
    """erfinv of a float32 or float64 tensor with |z| <= erf(sqrt 2): Winitzki's
    closed form, then Newton steps on erf(y) = z. On this range erf' >= 2 exp(-2) /
    sqrt(pi), so each step squares the error (times |y| <= 1.5): 2e-3 -> 1e-5 ->
    2e-10 -> below float64 rounding."""
    lg = api.log(1.0 - z * z)
    t = 2.0 / (math.pi * _WINITZKI_A) + lg * 0.5
    y = api.sign(z) * api.sqrt(api.sqrt(t * t - lg * (1.0 / _WINITZKI_A)) - t)
    for _ in builtins.range(_NEWTON_STEPS):
        y = y - (api.erf(y) - z) * api.exp(y * y) * (math.sqrt(math.pi) / 2.0)
    return y


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None,
                     name=None) -> Tensor:
    """Normal(mean, stddev) values conditioned on lying within 2 stddev of the mean,
    as tf.truncated_normal (which redraws the others). A static graph cannot redraw,
    so this is the inverse-CDF method, exact in distribution: u uniform on
    [Phi(-2), Phi(2)] (as z = 2u - 1 uniform on [-erf(sqrt 2), erf(sqrt 2)]), then
    sqrt(2) erfinv(z), with erfinv computed from the Erf op to the precision of
    dtype (float32 for float16 and float32; see `_erfinv`). Built under the name scope
    `name` ('truncated_normal').
    mean and stddev must be Python numbers (TF1 also takes tensors).

    {seeds}

    {normal_raises}
    """
    mean, stddev, dt, g, shape_info, scope_cm = _normal_setup(
        shape, mean, stddev, dtype, seed, name, "truncated_normal")
    with scope_cm as scope:
        op_seed = _op_seed(g, seed, scope, "truncated_normal")
        z = _draw(g, "RandomUniform", shape_info, float64,
                  {"low": -_ERF_BOUND, "high": _ERF_BOUND}, op_seed)
        if dt != float64:
            # Newton's steps reach float32 precision in float32 too, and the graph then
            # exports to a model onnxruntime runs (it has no float64 Erf kernel)
            z = api.cast(z, float32)
        x = _erfinv(z) * math.sqrt(2.0)
        # rounding must not carry a value past the bound the distribution promises
        x = api.clip_by_value(x, -_TRUNCATION, _TRUNCATION)
        return api.cast(x * stddev + mean, dt)


for _fn in (random_normal, random_uniform, truncated_normal):
    _fn.__doc__ = _fn.__doc__.replace("{seeds}", _SEEDED_DOC).replace(
        "{normal_raises}", _NORMAL_RAISES)


# --------------------------------------------------------------------------- feeds

def _check_compatible(x: Tensor, dims, what: str) -> None:
    """Refuse a static shape that contradicts x's known shape.

    Raises:
        ShapeError: the ranks or a pair of known dims differ.
    """
    if dims is None or x.shape is None:
        return
    if len(dims) != len(x.shape) or any(a is not None and b is not None and a != b
                                        for a, b in zip(dims, x.shape)):
        raise ShapeError(f"{what}: shape {list(dims)} does not fit the default "
                         f"{x.name!r} of shape {list(x.shape)}")


def placeholder_with_default(input, shape, name=None) -> Tensor:  # noqa: A002 - TF's
    """The value of `input` unless the returned tensor is fed, as
    tf.placeholder_with_default: an Identity whose static shape is `shape` (a list
    with None for dims a feed may change, or None for any rank). When it is fed,
    `input` is not computed. Its gradient is the identity's, as in TF.

    Raises:
        TypeError: shape is not a list of ints and Nones (or None), or name not a str.
        ShapeError: a dim is negative, or shape contradicts input's known shape.
        OneGraphError: input is not array-like.
    """
    _g.check_name(name, "placeholder_with_default")
    dims = _g._shape_tuple(shape, "placeholder_with_default: shape")
    x = _t(input)
    _check_compatible(x, dims, "placeholder_with_default")
    g = x.graph
    out = g.op("Identity", [x], name=name or "PlaceholderWithDefault")
    out._replace_shape(dims)
    # Identity folds a constant input into a build-time value, which later ops would
    # trust (a Reshape's static shape): a feed may change it, so it is not static.
    g._static.pop(out.tensor_index, None)
    return out


__all__ = [
    "TopKV2", "argsort", "boolean_mask", "cumsum", "einsum", "fill", "gather_nd",
    "not_equal", "placeholder_with_default", "random_normal", "random_uniform", "range",
    "rank", "reduce_all", "reduce_any", "reverse_sequence", "scatter_nd", "segment_sum",
    "sequence_mask", "size", "sort", "tensordot", "top_k", "truncated_normal",
    "unsorted_segment_sum",
]

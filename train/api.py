"""Public graph-building functions (re-exported as `onegraph.*`).

Every function adds nodes to the default graph (or the graph of its tensor inputs)
and returns symbolic `Tensor`s. Names follow TF1 where users expect them
(`og.reduce_mean`, `og.matmul`, `og.placeholder`); every registered op is also
available as `og.raw_ops.<OpType>(*inputs, **attrs)`.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..format import DType
from ..ops import REGISTRY
from . import graph as _g
from .graph import (GLOBAL_STEP, GLOBAL_VARIABLES, LOCAL_VARIABLES, LOSSES,
                    METRIC_VARIABLES, REGULARIZATION_LOSSES, TRAINABLE_VARIABLES,
                    UPDATE_OPS, Graph,
                    Operation, Tensor, as_dtype, convert_to_tensor, get_default_graph,
                    reset_default_graph)
from .packing import holds_tensor, int64_tensor
from .tensor_shape import Dimension, TensorShape, dimension_value
from .variables import (Variable, get_or_create_global_step, global_variables,
                        global_variables_initializer, local_variables,
                        local_variables_initializer, trainable_variables,
                        variables_initializer, is_variable_initialized,
                        report_uninitialized_variables, assert_variables_initialized)

float16, float32, float64 = DType.FLOAT16, DType.FLOAT32, DType.FLOAT64
int8, int16, int32, int64 = DType.INT8, DType.INT16, DType.INT32, DType.INT64
uint8, bool_, string = DType.UINT8, DType.BOOL, DType.STRING
# TF1's other dtype names
uint16, uint32, uint64, bfloat16 = DType.UINT16, DType.UINT32, DType.UINT64, DType.BFLOAT16
half, double = float16, float64
# x[..., og.newaxis] adds an axis, as numpy's and TF's None
newaxis = None

_ONNX_TYPE = {DType.FLOAT32: 1, DType.UINT8: 2, DType.INT8: 3, DType.UINT16: 4,
              DType.INT16: 5, DType.INT32: 6, DType.INT64: 7, DType.STRING: 8, DType.BOOL: 9,
              DType.FLOAT16: 10, DType.FLOAT64: 11, DType.UINT32: 12, DType.UINT64: 13,
              DType.BFLOAT16: 16}


def onnx_type(dtype) -> int:
    """The ONNX TensorProto type number of a dtype (for Cast's `to`)."""
    return _ONNX_TYPE[as_dtype(dtype)]


def _graph_of(*values) -> Graph:
    for v in values:
        if isinstance(v, Tensor):
            return v.graph
        if hasattr(v, "_as_graph_tensor"):
            return v.graph
        if isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, Tensor) or hasattr(x, "_as_graph_tensor"):
                    return x.graph
    return get_default_graph()


def _t(x, dtype=None, graph=None) -> Tensor:
    return convert_to_tensor(x, dtype, graph)


def _pair(a, b, op: str = "a binary op"):
    return _g._convert_pair(a, b, op) if (_g._is_symbolic(a) or _g._is_symbolic(b)) \
        else (_t(a), _t(b))


def _ints(values) -> np.ndarray:
    return np.asarray(list(values), dtype=np.int64)


def _brief(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _int_arg(value, what: str) -> int:
    """`value` as a Python int: ints and numpy integers, not bools (nor floats, strs,
    None, ...).

    Raises:
        TypeError: value is not an int (names `what`).
        ValueError: value is beyond the int64 range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} "
                        f"{_brief(value)}")
    v = int(value)
    if not -2 ** 63 <= v < 2 ** 63:
        raise ValueError(f"{what} is {v}, beyond the int64 range")
    return v


def _bool_arg(value, what: str) -> bool:
    """`value` as a Python bool: bools, numpy bools and the ints 0 and 1.

    Raises:
        TypeError: value is anything else (names `what`).
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise TypeError(f"{what} must be a bool, got {type(value).__name__} {_brief(value)}")


def _int_list(values, what: str) -> list:
    """A list or tuple (or 1-D integer array) of ints, as Python ints.

    Raises:
        TypeError: values is not such a list, or holds a non-int (names `what`).
        ValueError: an entry is beyond the int64 range.
    """
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "iu":
        values = values.tolist()
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"{what} must be a list of ints, got {type(values).__name__} "
                        f"{_brief(values)}")
    return [_int_arg(v, f"{what}[{k}]") for k, v in enumerate(values)]


def _axes(axis, what: str) -> list:
    """An axis argument (an int or a list of ints) as a list of ints.

    Raises:
        TypeError: it is neither (names `what`).
    """
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, (bool, np.bool_)):
        return [_int_arg(axis, what)]
    if isinstance(axis, np.ndarray) and axis.ndim == 0:
        return [_int_arg(axis.item(), what)]
    if isinstance(axis, (list, tuple, np.ndarray)):
        return _int_list(axis, what)
    raise TypeError(f"{what} must be an int or a list of ints, got "
                    f"{type(axis).__name__} {_brief(axis)}")


def _check_axis(axis: int, x: Tensor, what: str, extra: int = 0) -> int:
    """Refuse an axis outside [-rank - extra, rank + extra) when x's rank is known.

    Raises:
        ShapeError: it is outside (names `what`).
    """
    if x.shape is not None:
        r = len(x.shape) + extra
        if not -r <= axis < r:
            raise ShapeError(f"{what} {axis} is out of range for {x.name!r} of shape "
                             f"{list(x.shape)} (valid: [{-r}, {r}))")
    return axis


def _tensor_list(values, what: str) -> list:
    """`values` as a non-empty list (a list or tuple of tensors or values).

    Raises:
        TypeError: values is a single tensor or not a list/tuple (names `what`).
        ValueError: values is empty.
    """
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"{what} must be a list of tensors, got {type(values).__name__}"
                        + (" (wrap a single tensor in a list)" if _g._is_symbolic(values)
                           else f" {_brief(values)}"))
    if not values:
        raise ValueError(f"{what} is an empty list; give at least one tensor")
    return list(values)


def _shape_arg(shape, what: str) -> tuple:
    """A fully known shape: an int (a 1-D shape, as numpy and TF take it) or a list of
    ints >= 0.

    Raises:
        TypeError: shape is not an int or a list of ints (names `what`).
        ShapeError: a dim is negative or unknown.
    """
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = [shape]
    dims = _g._shape_tuple(shape, what)
    if dims is None or any(d is None for d in dims):
        raise ShapeError(f"{what} must be fully known (ints >= 0), got {_brief(shape)}")
    return dims


# --------------------------------------------------------------------------- sources

def placeholder(dtype, shape=None, name: str | None = None) -> Tensor:
    """A graph input fed at run time.

    Args:
        dtype: element type (og.float32, 'int64', np.uint8, ...).
        shape: list with None (or -1) for dims known only at run time; None for any
            rank.
        name: tensor name (feeds may use it).

    Returns:
        The placeholder `Tensor`.

    Raises:
        TypeError: shape is not a list of ints and Nones (a bare int is refused: write
            [n]), or name is not a str.
        ShapeError: a dim is negative other than -1.
        OneGraphError: dtype names no known dtype.
    """
    return get_default_graph().placeholder(dtype, shape, name)


def constant(value, dtype=None, shape=None, name: str | None = None,
             verify_shape=False) -> Tensor:
    """A constant tensor (TF1's tf.constant). Python floats become float32, Python ints
    int64. With `shape`, a scalar value fills it, a value of as many elements is
    reshaped, and a shorter one is extended with its last element, as TF1 does
    (verify_shape=True refuses any other shape than the value's).

    Args:
        value: array-like.
        dtype: convert to this dtype.
        shape: the result's shape (a list of ints).
        name: tensor name.

    Raises:
        OneGraphError: value is not array-like (None, a dict, a ragged list), or does
            not fit `dtype` (a str for a number, a fraction for an integer type, out of
            range).
        ShapeError: value has more elements than shape, or another shape when
            verify_shape.
        TypeError: name is not a str, or shape is not a list of ints.
    """
    if shape is not None:
        value = _shaped(value, dtype, _shape_arg(shape, "constant: shape"),
                        _bool_arg(verify_shape, "constant: verify_shape"))
    g = get_default_graph()
    if any(g._control):
        # inside control_dependencies TF1's Const op waits for them; a constant here is
        # a value with no op, so an Identity carries the dependencies
        return g.op("Identity", [g.constant(value, dtype)], name=name)
    return g.constant(value, dtype, name, shared=False)


def _shaped(value, dtype, dims: tuple, verify: bool) -> np.ndarray:
    """tf.constant's value given a shape: filled, reshaped or extended by its last
    element (TF1's rules)."""
    try:
        array = _g._as_array(value, None if dtype is None else as_dtype(dtype))
    except OneGraphError as e:
        raise _g._named(e, "constant: value") from None
    count = int(np.prod(dims))
    if verify and array.shape != dims:
        raise ShapeError(f"constant: value of shape {list(array.shape)} is not of shape "
                         f"{list(dims)} (verify_shape)")
    if array.size == 1:
        return np.full(dims, array.reshape(()), dtype=array.dtype)
    if array.size == 0 and count:
        raise ShapeError(f"constant: an empty value cannot fill shape {list(dims)}")
    if array.size > count:
        raise ShapeError(f"constant: value has {array.size} elements, more than shape "
                         f"{list(dims)} holds")
    flat = array.reshape(-1)
    if array.size < count:
        flat = np.concatenate([flat, np.repeat(flat[-1:], count - array.size)])
    return flat.reshape(dims)


# As TF's tf.zeros / tf.ones: a fill of this many elements or more is a ConstantOfShape
# node (a shape and one value in the file, the array made when the graph runs), not a
# constant holding every element in memory now and in every saved file.
_FILL_NODE_MIN_ELEMENTS = 1000
# ... of the dtypes ConstantOfShape takes at every opset the exporter writes (bfloat16
# came at 20, float8 at 19, int4 at 21: those stay constants, which export anywhere)
_FILL_NODE_DTYPES = frozenset({DType.FLOAT16, DType.FLOAT32, DType.FLOAT64, DType.INT8,
                               DType.INT16, DType.INT32, DType.INT64, DType.UINT8,
                               DType.UINT16, DType.UINT32, DType.UINT64, DType.BOOL})


def _filled(shape, value, dtype, name, what: str) -> Tensor:
    """A `shape` tensor of `value`: a constant when small, else a ConstantOfShape (also
    when the shape is a tensor known only at run time)."""
    dt = as_dtype(dtype)
    if dt == DType.STRING and value != 0:  # ONNX's ConstantOfShape fills no strings
        raise TypeError(f"{what}: a string tensor has zeros (empty strings) only")
    blank = np.full((), "", dtype=object) if dt == DType.STRING else dt.numpy.type(value)
    if holds_tensor(shape):
        from .api_extra import _shape_operand

        g = _graph_of(shape)
        dims, shape_t = _shape_operand(shape, g, f"{what}: shape")
        if dims is None:  # known at run time only
            if dt in _FILL_NODE_DTYPES:
                return g.op("ConstantOfShape", [shape_t],
                            {"value": np.full((1,), value, dt.numpy)}, name=name)
            return g.op("Expand", [g.constant(blank, dtype=dt), shape_t], name=name)
    else:
        dims = _shape_arg(shape, f"{what}: shape")
    count = 1
    for d in dims:
        count *= d
    if count < _FILL_NODE_MIN_ELEMENTS or dt not in _FILL_NODE_DTYPES:
        return constant(np.full(dims, blank, dtype=blank.dtype), dtype=dt, name=name)
    shape_t = constant(np.array(dims, dtype=np.int64),
                       name=None if name is None else f"{name}/shape")
    return get_default_graph().op("ConstantOfShape", [shape_t],
                                  {"value": np.full((1,), value, dt.numpy)}, name=name)


def zeros(shape, dtype=float32, name=None) -> Tensor:
    """A tensor of zeros (empty strings for og.string); shape is a list of ints (or an
    int, for 1-D), a 1-D integer tensor (og.shape(x)), or a list mixing ints and scalar
    integer tensors. As in TF, from 1000 elements up, or when the shape is known only
    at run time, it is a ConstantOfShape node that makes the array when the graph runs
    (the graph and its saved file hold only the shape).

    Raises:
        TypeError: shape is none of those.
        ShapeError: a dim is negative or None, or a shape tensor is not 1-D integers.
        OneGraphError: dtype names no known dtype.
    """
    return _filled(shape, 0, dtype, name, "zeros")


def ones(shape, dtype=float32, name=None) -> Tensor:
    """A tensor of ones; shape as for `zeros` (ints, a 1-D integer tensor, or ints
    mixed with scalar tensors). As in TF, from 1000 elements up, or when the shape is
    known only at run time, it is a ConstantOfShape node that makes the array then.

    Raises:
        TypeError: shape is none of those, or dtype is string.
        ShapeError: a dim is negative or None, or a shape tensor is not 1-D integers.
        OneGraphError: dtype names no known dtype.
    """
    return _filled(shape, 1, dtype, name, "ones")


def zeros_like(tensor, dtype=None, name=None, optimize=True) -> Tensor:
    """Zeros with the shape of `tensor` (at run time) and its dtype, or `dtype`.

    Raises:
        OneGraphError: dtype names no dtype.
    """
    x = _t(tensor)
    y = x.graph.op("ZerosLike", [x], name=None if dtype is not None else name)
    return y if dtype is None else cast(y, dtype, name=name)


def ones_like(tensor, dtype=None, name=None, optimize=True) -> Tensor:
    """Ones with the shape of `tensor` (at run time) and its dtype, or `dtype`.

    Raises:
        OneGraphError: dtype names no dtype.
    """
    x = _t(tensor)
    y = x.graph.op("OnesLike", [x], name=None if dtype is not None else name)
    return y if dtype is None else cast(y, dtype, name=name)


# --------------------------------------------------------------------------- scopes

def name_scope(name: str):
    """Context manager prefixing op names with `name/` in the default graph; a name
    ending in "/" re-enters that scope as it is, None or "" the root scope (TF1).

    Raises:
        TypeError: name is not a str or None.
    """
    return get_default_graph().name_scope(name)


def device(spec: str):
    """Context manager placing ops on a device, e.g. ``og.device("/job:ps/task:0")``;
    specs merge with the enclosing ones field by field and None resets them (TF1).

    Raises:
        TypeError: spec is not a str or None.
        ValueError: a part of spec is not job:, replica:, task: or a device.
    """
    return get_default_graph().device(spec)


def control_dependencies(control_inputs):
    """Context manager: ops created inside run after `control_inputs` (ops, tensors,
    variables, or their names, as TF1).

    Raises:
        TypeError: control_inputs is not a list of those, or None.
        KeyError: no op or tensor has a name given.
    """
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple, set)):
        raise TypeError(f"control_dependencies: control_inputs must be a list of ops or "
                        f"tensors, or None; got {type(control_inputs).__name__}")
    g = _graph_of(*(control_inputs or []))
    return g.control_dependencies(control_inputs)


def no_op(name: str | None = None) -> Operation:
    """An op that does nothing (useful as a target with control dependencies)."""
    return get_default_graph().op("NoOp", [], name=name)


def group(*inputs, name: str | None = None) -> Operation:
    """One op that runs all `inputs` (ops, tensors, variables, their names, or lists
    of them).

    Raises:
        TypeError: name is not a str, or an input is none of these.
        KeyError: no op or tensor has an input's name.
    """
    _g.check_name(name, "group")
    flat = []
    for x in inputs:
        flat.extend(x if isinstance(x, (list, tuple)) else [x])
    g = _graph_of(*flat)
    for x in flat:  # refused in group's words, not the NoOp's
        g._control_node(x, "group")
    return g.op("NoOp", [], name=name or "group", control_inputs=flat)


def tuple_(tensors, name: str | None = None, control_inputs=None) -> list:
    """`og.tuple`: each of `tensors` (tensors, sparse gradients or ops), passed on only
    once all of them (and `control_inputs`) are computed, as TF1's `tf.tuple`: whoever
    reads one result waits for every input. None entries stay None; the results are
    built in name scope `name` (default "tuple").

    Raises:
        TypeError: tensors is not a list or tuple, an entry is none of these, or name
            is not a str.
        ValueError: every entry is None (nothing to wait for).
    """
    from .gradients import IndexedSlices

    _g.check_name(name, "tuple")
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"tuple: tensors must be a list of tensors, got "
                        f"{type(tensors).__name__}")
    gating = []
    for t in tensors:
        if isinstance(t, IndexedSlices):
            gating += [t.values, t.indices]
        elif isinstance(t, (Operation, Tensor)) or hasattr(t, "_as_graph_tensor"):
            gating.append(t)
        elif t is not None:
            raise TypeError(f"tuple: entries must be tensors, IndexedSlices, ops or None, "
                            f"got {type(t).__name__}")
    if not gating:
        raise ValueError("tuple: every entry is None; there is nothing to wait for")
    g = _graph_of(*gating)
    with g.name_scope(name or "tuple"):
        gate = group(*gating, *(control_inputs or ()), name="control")
        with g.control_dependencies([gate]):
            out = []
            for t in tensors:
                if t is None:
                    out.append(None)
                elif isinstance(t, IndexedSlices):
                    out.append(IndexedSlices(identity(t.values), identity(t.indices), t.like))
                elif isinstance(t, Operation):
                    out.append(group(t))
                else:
                    out.append(identity(t))
    return out


tuple_.__name__ = "tuple"


def identity(x, name=None) -> Tensor:
    """x, as a new tensor (an Identity node)."""
    x = _t(x)
    return x.graph.op("Identity", [x], name=name)


def stop_gradient(x, name=None) -> Tensor:
    """x in the forward pass; blocks gradients in `og.gradients`."""
    x = _t(x)
    return x.graph.op("StopGradient", [x], name=name)


def add_to_collection(name: str, value) -> None:
    """Append to a collection of the default graph."""
    get_default_graph().add_to_collection(name, value)


def get_collection(name: str, scope: str | None = None) -> list:
    """A collection of the default graph (e.g. og.TRAINABLE_VARIABLES); with `scope`,
    only the items whose names match that regular expression from their start (TF1).

    Raises:
        TypeError: name is not hashable, or scope is not a str or None.
    """
    return get_default_graph().get_collection(name, scope)


# --------------------------------------------------------------------------- arithmetic

def _binary(op_type):
    def fn(x, y, name=None):
        a, b = _pair(x, y, op_type)
        return a.graph.op(op_type, [a, b], name=name)
    fn.__name__ = op_type.lower()
    fn.__doc__ = f"Elementwise {op_type} with numpy broadcasting (ONNX {op_type})."
    return fn


add = _binary("Add")
subtract = _binary("Sub")
multiply = _binary("Mul")
_div = _binary("Div")   # ONNX's Div: integers truncate (for sizes and counts inside og)


def divide(x, y, name=None) -> Tensor:
    """x / y as TF1's tf.divide and the / operator (tf.truediv): floats divide as they
    are; integers are divided in floats, int8/int16/uint8/uint16 in float32 and wider
    ones in float64 (7 / 2 is 3.5). Use og.floordiv for integer division.

    Raises:
        ShapeError: x and y are tensors of different dtypes.
    """
    a, b = _pair(x, y, "Div")
    if a.dtype is not DType.UNDEFINED and a.dtype.numpy.kind in "iu":
        wide = DType.FLOAT64 if a.dtype.numpy.itemsize >= 4 else DType.FLOAT32
        a, b = cast(a, wide), cast(b, wide)
    return a.graph.op("Div", [a, b], name=name)


pow = _binary("Pow")  # noqa: A001 - TF's name
maximum = _binary("Max")
minimum = _binary("Min")
equal = _binary("Equal")
less = _binary("Less")
less_equal = _binary("LessOrEqual")
greater = _binary("Greater")
greater_equal = _binary("GreaterOrEqual")
logical_and = _binary("And")
logical_or = _binary("Or")


def _unary(op_type):
    def fn(x, name=None):
        x = _t(x)
        return x.graph.op(op_type, [x], name=name)
    fn.__name__ = op_type.lower()
    fn.__doc__ = f"Elementwise {op_type} (ONNX {op_type})."
    return fn


negative = _unary("Neg")
abs = _unary("Abs")  # noqa: A001
exp = _unary("Exp")
log = _unary("Log")
sqrt = _unary("Sqrt")
reciprocal = _unary("Reciprocal")
tanh = _unary("Tanh")
sigmoid = _unary("Sigmoid")
relu = _unary("Relu")
sin = _unary("Sin")
cos = _unary("Cos")
floor = _unary("Floor")
ceil = _unary("Ceil")
sign = _unary("Sign")
erf = _unary("Erf")
logical_not = _unary("Not")


def square(x, name=None) -> Tensor:
    """x * x."""
    x = _t(x)
    return x.graph.op("Mul", [x, x], name=name)


def rsqrt(x, name=None) -> Tensor:
    """1 / sqrt(x)."""
    return reciprocal(sqrt(x), name=name)


def add_n(inputs: Sequence, name=None) -> Tensor:
    """Sum of a list of same-shaped tensors (one AddN node), as tf.add_n: the result's
    static shape holds what any input's says.

    Raises:
        TypeError: inputs is not a list or tuple.
        ValueError: inputs is empty.
        ShapeError: the tensors have different dtypes, or shapes known while
            building that differ (TF's add_n does not broadcast).
    """
    ts = [_t(x) for x in _tensor_list(inputs, "add_n: inputs")]
    _g.check_same_dtype("AddN", ts)
    if len(ts) == 1:
        return ts[0]
    merged = TensorShape(None)
    for t in ts:
        try:
            merged = merged.merge_with(t.get_shape())
        except ValueError:
            raise ShapeError(f"add_n: the inputs must have one shape, got "
                             f"{[None if u.shape is None else list(u.shape) for u in ts]}"
                             ) from None
    y = ts[0].graph.op("AddN", ts, name=name)
    if merged.ndims is not None:
        y.set_shape(merged)
    return y


def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False,
           adjoint_a: bool = False, adjoint_b: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, name=None) -> Tensor:
    """Matrix product (numpy matmul semantics; 2-D transposes via Gemm).

    Args:
        a, b: tensors; batch dims broadcast.
        transpose_a, transpose_b: use the transpose of the last two dims.
        adjoint_a, adjoint_b: TF1's adjoints, the same for real matrices.
        a_is_sparse, b_is_sparse: TF1's hints, accepted and ignored.

    Raises:
        ShapeError: a and b have different dtypes, or an operand to transpose is not
            of known rank >= 2.
        TypeError: transpose_a or transpose_b is not a bool.
    """
    # TF1's adjoints are the transposes of real matrices; the sparsity hints change
    # nothing here
    adjoint_a = _bool_arg(adjoint_a, "matmul: adjoint_a")
    adjoint_b = _bool_arg(adjoint_b, "matmul: adjoint_b")
    transpose_a = _bool_arg(transpose_a, "matmul: transpose_a") or adjoint_a
    transpose_b = _bool_arg(transpose_b, "matmul: transpose_b") or adjoint_b
    _bool_arg(a_is_sparse, "matmul: a_is_sparse")
    _bool_arg(b_is_sparse, "matmul: b_is_sparse")
    a, b = _pair(a, b, "MatMul")
    for flag, t, which in ((transpose_a, a, "a"), (transpose_b, b, "b")):
        if flag and (t.shape is None or len(t.shape) < 2):
            raise ShapeError(f"matmul: transpose_{which} needs {which} of known rank >= 2, "
                             f"got shape {t.shape}")
    if transpose_a or transpose_b:
        if (a.shape is not None and len(a.shape) == 2 and b.shape is not None
                and len(b.shape) == 2):
            return a.graph.op("Gemm", [a, b], {"transA": int(transpose_a),
                                               "transB": int(transpose_b)}, name=name)
        a = _swap_last(a) if transpose_a else a
        b = _swap_last(b) if transpose_b else b
    return a.graph.op("MatMul", [a, b], name=name)


def _swap_last(x):
    rank = len(x.shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return x.graph.op("Transpose", [x], {"perm": perm})


def cast(x, dtype, name=None) -> Tensor:
    """x converted to dtype (ONNX Cast)."""
    x = _t(x)
    if x.dtype == as_dtype(dtype):
        return x
    return x.graph.op("Cast", [x], {"to": onnx_type(dtype)}, name=name)


def where(condition, x=None, y=None, name=None) -> Tensor:
    """TF1's tf.where. With x and y: x where condition else y, elementwise; as TF1, a
    1-D condition picks whole rows of higher-rank x and y (its length their first
    dim), other shapes broadcast (tf.where_v2's rule). With neither: the indices of
    condition's true elements, an int64 (count, rank) tensor.

    Raises:
        ShapeError: condition is not bool, or x and y are tensors of different dtypes.
        TypeError: only one of x and y is given.
    """
    if x is None and y is None:
        cond = _g.bool_tensor(condition, "where: condition")
        g = cond.graph
        return g.op("Transpose", [g.op("NonZero", [cond])], {"perm": [1, 0]}, name=name)
    if x is None or y is None:
        raise TypeError("where: give both x and y, or neither (the indices of the true "
                        "elements)")
    x, y = _pair(x, y, "Where")
    g = x.graph
    cond = _g.bool_tensor(condition, "where: condition", g)
    if cond.shape is not None and len(cond.shape) == 1:
        # TF1's Select: one condition per row of higher-rank x and y
        if x.shape is not None and y.shape is not None:
            rank = max(len(x.shape), len(y.shape))
            if rank > 1:
                cond = reshape(cond, [-1] + [1] * (rank - 1))
        else:   # decided at run time: (n, 1, ..., 1) of x's rank
            rank_t = g.op("Size", [g.op("Shape", [x if x.shape is None else y])])
            ones = g.op("ConstantOfShape", [reshape(rank_t - np.int64(1), [1])],
                        {"value": np.ones(1, np.int64)})
            cond = g.op("Reshape", [cond, concat([constant_ints_of(g, [-1]), ones], 0)])
    return g.op("Where", [cond, x, y], name=name)


def clip_by_value(t, clip_value_min, clip_value_max, name=None) -> Tensor:
    """t clamped to [min, max] (TF1's tf.clip_by_value): scalar bounds are one ONNX
    Clip, bounds of other shapes broadcast elementwise (Max then Min).

    Raises:
        OneGraphError: a bound does not convert to t's dtype (None, a str, ...).
        ShapeError: a bound tensor has another dtype than t.
    """
    x = _t(t)
    g = x.graph
    try:
        lo = g.convert(clip_value_min, _g._dtype_for(x))
        hi = g.convert(clip_value_max, _g._dtype_for(x))
    except OneGraphError as e:
        raise _g._named(e, "clip_by_value") from None
    if all(b.shape is not None and len(b.shape) == 0 for b in (lo, hi)):
        return g.op("Clip", [x, lo, hi], name=name)
    return minimum(maximum(x, lo), hi, name=name)


# --------------------------------------------------------------------------- reductions

def _alias(value, old_value, new: str, old: str, what: str):
    """TF1's deprecated argument names (keep_dims, reduction_indices, dim, ...): the
    value given under either name.

    Raises:
        ValueError: both names are given.
    """
    if old_value is None:
        return value
    if value is not None:
        raise ValueError(f"{what}: give {new} or {old} (its old name), not both")
    return old_value


def _reduce(op_type):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        what = op_type
        axis = _alias(axis, reduction_indices, "axis", "reduction_indices", what)
        keepdims = _alias(keepdims, keep_dims, "keepdims", "keep_dims", what)
        keepdims = False if keepdims is None else _bool_arg(keepdims,
                                                             f"{op_type}: keepdims")
        x = _t(input_tensor)
        g = x.graph
        inputs = [x]
        if _g._is_symbolic(axis):   # TF1 also takes the axes as a tensor
            inputs.append(reshape(cast(_g.integer_tensor(axis, f"{what}: axis", g),
                                       DType.INT64), [-1]))
            # TF: axes that come out empty reduce nothing (ONNX's default: everything);
            # TF's own gradients sum over BroadcastGradientArgs' often empty axes
            return g.op(op_type, inputs, {"keepdims": int(keepdims),
                                          "noop_with_empty_axes": 1}, name=name)
        axes = None if axis is None else _axes(axis, f"{op_type}: axis")
        if axes is not None:
            if not axes:  # TF: an empty axis list reduces nothing (ONNX: everything)
                return g.op("Identity", [x], name=name)
            inputs.append(g.constant(_ints(axes)))
        return g.op(op_type, inputs, {"keepdims": int(keepdims)}, name=name)
    fn.__name__ = op_type
    fn.__doc__ = (f"{op_type} over `axis` (int, list or integer tensor; None = all axes, "
                  "[] = none), TF1's arguments.\n\n"
                  "    Args:\n        input_tensor: input.\n        axis: axes to "
                  "reduce (reduction_indices: TF1's old name).\n"
                  "        keepdims: keep reduced axes with size 1 (keep_dims: old "
                  "name).\n\n"
                  "    Raises:\n        TypeError: axis is not an int, a list of ints or "
                  "an integer tensor, or keepdims not a bool.\n"
                  "        ValueError: an argument is given under both its names.\n")
    return fn


reduce_sum = _reduce("ReduceSum")
reduce_mean = _reduce("ReduceMean")
reduce_max = _reduce("ReduceMax")
reduce_min = _reduce("ReduceMin")
reduce_prod = _reduce("ReduceProd")
reduce_logsumexp = _reduce("ReduceLogSumExp")


def _arg_extreme(op_type, what, x, axis, name, dimension, output_type):
    if dimension is not None:
        if axis is not None:
            raise ValueError(f"{what}: give axis or dimension (its old name), not both")
        axis = dimension
    axis = 0 if axis is None else _int_arg(axis, f"{what}: axis")
    out = as_dtype(output_type)
    if out not in (DType.INT32, DType.INT64):
        raise TypeError(f"{what}: output_type must be int32 or int64, got {out.short_name}")
    x = _t(x)
    _check_axis(axis, x, f"{what}: axis")
    y = x.graph.op(op_type, [x], {"axis": axis, "keepdims": 0},
                   name=None if out != DType.INT64 else name)
    return y if out == DType.INT64 else cast(y, out, name=name)


def argmax(input, axis=None, name=None, dimension=None,  # noqa: A002 - TF's name
           output_type=DType.INT64) -> Tensor:
    """Index of the maximum along `axis` (TF1's tf.argmax: axis None is 0; `dimension`
    is its old name; output_type int64 or int32).

    Raises:
        TypeError: axis is not an int, or output_type not int32/int64.
        ValueError: both axis and dimension are given.
        ShapeError: axis is out of range.
    """
    return _arg_extreme("ArgMax", "argmax", input, axis, name, dimension, output_type)


def argmin(input, axis=None, name=None, dimension=None,  # noqa: A002 - TF's name
           output_type=DType.INT64) -> Tensor:
    """Index of the minimum along `axis` (TF1's tf.argmin; see argmax).

    Raises:
        TypeError: axis is not an int, or output_type not int32/int64.
        ValueError: both axis and dimension are given.
        ShapeError: axis is out of range.
    """
    return _arg_extreme("ArgMin", "argmin", input, axis, name, dimension, output_type)


# --------------------------------------------------------------------------- shapes

def shape(input, name=None, out_type=DType.INT64) -> Tensor:  # noqa: A002 - TF's name
    """The run-time shape of input as a 1-D tensor of out_type, int64 or int32 (TF1's
    tf.shape, whose default is int32; onegraph's is int64, the integer type of ONNX's
    Shape and of og.constant(0), so that shapes and Python ints mix without casts).

    Raises:
        TypeError: out_type is not int32 or int64.
    """
    out = as_dtype(out_type)
    if out not in (DType.INT32, DType.INT64):
        raise TypeError(f"shape: out_type must be int32 or int64, got {out.short_name}")
    x = _t(input)
    y = x.graph.op("Shape", [x], name=None if out != DType.INT64 else name)
    return y if out == DType.INT64 else cast(y, out, name=name)


def reshape(x, new_shape, name=None) -> Tensor:
    """x with a new shape: a list with one -1 allowed, a 1-D integer tensor, or a list
    mixing ints and scalar integer tensors (``[og.shape(x)[0], -1]``, packed into one
    tensor as in TF1).

    Raises:
        TypeError: new_shape is none of those.
        ShapeError: the shape does not fit x (found while building), or a tensor in it
            is not integer (a scalar, inside a list).
    """
    x = _t(x)
    g = x.graph
    s = int64_tensor(new_shape, "reshape: new_shape", g) if holds_tensor(new_shape) \
        else g.constant(np.asarray(_int_list(new_shape, "reshape: new_shape"), np.int64))
    y = g.op("Reshape", [x, s], name=name)
    if isinstance(new_shape, (list, tuple)) and holds_tensor(new_shape) \
            and y.shape is not None and len(y.shape) == len(new_shape):
        # as TF1: the sizes given as ints stay known ([og.shape(x)[0], -1, 5] is
        # (?, ?, 5)), and so does -1 when x's size and every other size are
        known = [_static_size(g, v) for v in new_shape]
        dims = [d if d is not None else (k if k is not None and k >= 0 else None)
                for d, k in zip(y.shape, known)]
        total = _static_count(x)
        if known.count(-1) == 1 and total is not None and None not in \
                [d for d, k in zip(dims, known) if k != -1]:
            rest = int(np.prod([d for d, k in zip(dims, known) if k != -1]))
            if rest and total % rest == 0:
                dims[known.index(-1)] = total // rest
        y.set_shape(dims)
    return y


def _static_size(g, v):
    """An entry of a reshape target as an int when known while building, else None."""
    if _g._is_symbolic(v):
        value = g.static_value(_t(v, graph=g))
        return None if value is None or np.size(value) != 1 else int(np.asarray(value))
    return int(v)


def _static_count(x: Tensor):
    if x.shape is None or None in x.shape:
        return None
    return int(np.prod(x.shape))


def transpose(a, perm=None, name=None, conjugate=False) -> Tensor:
    """Permute the axes (default: reverse them), TF1's tf.transpose (conjugate is
    accepted for real tensors).

    Raises:
        TypeError: perm is not a list of ints, or conjugate is not a bool.
    """
    _bool_arg(conjugate, "transpose: conjugate")
    perm = None if perm is None else _int_list(perm, "transpose: perm")
    x = _t(a)
    return x.graph.op("Transpose", [x], {"perm": perm}, name=name)


def concat(values: Sequence, axis: int, name=None) -> Tensor:
    """Join tensors along an existing axis.

    Raises:
        TypeError: values is not a list of tensors, or axis is not an int.
        ValueError: values is empty.
        ShapeError: the tensors have different dtypes, or shapes that do not join.
    """
    values = _tensor_list(values, "concat: values")
    axis = _int_arg(axis, "concat: axis")
    ts = _joined(values, "Concat")
    return ts[0].graph.op("Concat", ts, {"axis": int(axis)}, name=name)


def _joined(values: list, what: str) -> list:
    """The values to concat or stack as tensors of one graph: plain values take the
    dtype of the first tensor among them (TF1's rule: stack([n_int32, 1]) is int32).

    Raises:
        ShapeError: two tensors have different dtypes.
    """
    graph = _graph_of(*values)
    first = next((v for v in values if _g._is_symbolic(v)), None)
    dtype = None if first is None else _g._dtype_for(_t(first, graph=graph))
    ts = [_t(v, None if _g._is_symbolic(v) else dtype, graph=graph) for v in values]
    _g.check_same_dtype(what, ts)
    return ts


def expand_dims(input, axis=None, name=None, dim=None) -> Tensor:  # noqa: A002
    """Insert a size-1 axis at `axis` (`dim` is TF1's old name).

    Raises:
        TypeError: axis is not an int, or neither axis nor dim is given.
        ValueError: both axis and dim are given.
        ShapeError: axis is out of range for x's rank + 1.
    """
    axis = _alias(axis, dim, "axis", "dim", "expand_dims")
    if axis is None:
        raise TypeError("expand_dims needs axis")
    axis = _int_arg(axis, "expand_dims: axis")
    x = _t(input)
    _check_axis(axis, x, "expand_dims: axis", extra=1)
    return x.graph.op("Unsqueeze", [x, x.graph.constant(_ints([axis]))], name=name)


def squeeze(input, axis=None, name=None, squeeze_dims=None) -> Tensor:  # noqa: A002
    """Remove size-1 axes: those listed, or all when `axis` is None or empty (as in TF,
    where the default is []); `squeeze_dims` is TF1's old name of axis.

    Raises:
        TypeError: axis is not an int or a list of ints.
        ValueError: both axis and squeeze_dims are given.
    """
    axis = _alias(axis, squeeze_dims, "axis", "squeeze_dims", "squeeze")
    axes = None if axis is None else _axes(axis, "squeeze: axis")
    x = _t(input)
    inputs = [x]
    if axes:
        inputs.append(x.graph.constant(_ints(axes)))
    return x.graph.op("Squeeze", inputs, name=name)


def stack(values: Sequence, axis: int = 0, name=None) -> Tensor:
    """Join tensors along a new axis.

    Raises:
        TypeError: values is not a list of tensors, or axis is not an int.
        ValueError: values is empty.
        ShapeError: the tensors have different dtypes or shapes.
    """
    values = _tensor_list(values, "stack: values")
    axis = _int_arg(axis, "stack: axis")
    return concat([expand_dims(v, axis) for v in _joined(values, "Concat")], axis,
                  name=name)


def unstack(x, num: int | None = None, axis: int = 0) -> list:
    """Split x along `axis` into `num` tensors with that axis removed.

    Raises:
        TypeError: num or axis is not an int.
        ValueError: num is negative or above `graph.MAX_OUTPUTS`.
        ShapeError: axis is out of range, or num differs from the axis's known length.
        OneGraphError: num is None and the axis length is unknown.
    """
    axis = _int_arg(axis, "unstack: axis")
    if num is not None:
        num = _int_arg(num, "unstack: num")
    x = _t(x)
    _check_axis(axis, x, "unstack: axis")
    dim = x.shape[axis] if x.shape is not None else None
    if num is not None and dim is not None and num != dim:
        raise ShapeError(f"unstack: num is {num} but axis {axis} of {x.name!r} has length "
                         f"{dim}")
    num = num if num is not None else dim
    if num is None:
        raise OneGraphError("unstack needs `num` when the axis length is unknown")
    if not 0 <= num <= _g.MAX_OUTPUTS:
        raise ValueError(f"unstack: {num} outputs; the count must be in "
                         f"[0, {_g.MAX_OUTPUTS}]")
    parts = x.graph.op("Split", [x], {"axis": axis, "num_outputs": num}, num_outputs=num)
    parts = parts if isinstance(parts, list) else [parts]
    return [squeeze(p, axis) for p in parts]


def _split_count(sizes: Tensor, num) -> int:
    """The number of parts a 1-D tensor of split sizes makes: its static length, or
    `num` when that is unknown.

    Raises:
        ShapeError: sizes is not 1-D, or `num` contradicts its length.
        ValueError: neither its length nor `num` is known, or the count is out of range.
    """
    if sizes.shape is not None and len(sizes.shape) != 1:
        raise ShapeError(f"split: num_or_size_splits must be 1-D, got shape "
                         f"{list(sizes.shape)}")
    length = sizes.shape[0] if sizes.shape is not None else None
    if num is not None:
        num = _int_arg(num, "split: num")
        if length is not None and num != length:
            raise ShapeError(f"split: num is {num}, but num_or_size_splits holds {length} "
                             f"sizes")
        length = num
    if length is None:
        raise ValueError("split: cannot tell the number of parts from num_or_size_splits "
                         "(its length is unknown); give num")
    if not 1 <= length <= _g.MAX_OUTPUTS:
        raise ValueError(f"split: {length} sizes; the count must be in "
                         f"[1, {_g.MAX_OUTPUTS}]")
    return length


def split(value, num_or_size_splits, axis: int = 0, num=None, name=None) -> list:
    """Split value along `axis` into num_or_size_splits equal parts or parts of the
    given sizes (one may be -1: the rest), TF1's tf.split. The sizes may also be a 1-D
    integer tensor, whose entries are then checked when the graph runs (they must be
    >= 0 and add up to the axis); the number of parts is its static length or `num`.

    Raises:
        TypeError: num_or_size_splits is not an int, a list of ints or an integer
            tensor, or axis not an int.
        ValueError: the count is < 1 or above `graph.MAX_OUTPUTS` or cannot be told
            (a sizes tensor of unknown length without `num`), or a size is < -1.
        ShapeError: axis is out of range, or the count or sizes do not fit the axis's
            known length (as TF1 finds at graph build time).
    """
    axis = _int_arg(axis, "split: axis")
    x = _t(value)
    num_or_sizes = num_or_size_splits
    g = x.graph
    _check_axis(axis, x, "split: axis")
    dim = x.shape[axis] if x.shape is not None else None
    if isinstance(num_or_sizes, (int, np.integer)) and not isinstance(num_or_sizes, bool):
        n = _int_arg(num_or_sizes, "split: num_or_sizes")
        if not 1 <= n <= _g.MAX_OUTPUTS:
            raise ValueError(f"split: num_or_sizes is {n}; the count must be in "
                             f"[1, {_g.MAX_OUTPUTS}]")
        if dim is not None and dim % n:
            raise ShapeError(f"split: axis {axis} of {x.name!r} has length {dim}, which "
                             f"does not split into {n} equal parts")
        out = g.op("Split", [x], {"axis": axis, "num_outputs": n}, num_outputs=n, name=name)
    elif _g._is_symbolic(num_or_sizes):
        # a 1-D tensor of sizes (TF1): the part count is its static length, or `num`
        sizes_t = int64_tensor(num_or_sizes, "split: num_or_sizes", g)
        n = _split_count(sizes_t, num)
        out = g.op("Split", [x, sizes_t], {"axis": axis}, num_outputs=n, name=name)
    else:
        sizes = _int_list(num_or_sizes, "split: num_or_sizes")
        if not 1 <= len(sizes) <= _g.MAX_OUTPUTS:
            raise ValueError(f"split: {len(sizes)} sizes; the count must be in "
                             f"[1, {_g.MAX_OUTPUTS}]")
        if any(v < -1 for v in sizes) or sizes.count(-1) > 1:
            raise ValueError(f"split: sizes must be >= 0, with at most one -1, got {sizes}")
        known = sum(v for v in sizes if v >= 0)
        if dim is not None and (known > dim or (-1 not in sizes and known != dim)):
            raise ShapeError(f"split: sizes {sizes} do not add up to the length {dim} of "
                             f"axis {axis} of {x.name!r}")
        if -1 in sizes:   # the rest of the axis (ONNX's Split takes no -1)
            k = sizes.index(-1)
            if dim is not None:
                sizes[k] = dim - known
            else:
                sizes[k] = reshape(shape(x)[axis] - np.int64(known), [])
        split_t = int64_tensor(sizes, "split: num_or_sizes", g) if holds_tensor(sizes) \
            else g.constant(_ints(sizes))
        out = g.op("Split", [x, split_t], {"axis": axis}, num_outputs=len(sizes),
                   name=name)
    return out if isinstance(out, list) else [out]


def gather(params, indices, validate_indices=None, name=None, axis=None,
           batch_dims=0) -> Tensor:
    """Slices along `axis` (default batch_dims, so 0 without them) of params picked by
    integer indices, TF1's tf.gather with its argument order (validate_indices is
    accepted and ignored, as TF1 does on CPU; indices are checked when the graph runs).
    batch_dims > 0 gathers within each of the leading batch_dims dims.

    Raises:
        TypeError: axis or batch_dims is not an int.
        ValueError: batch_dims is negative or above axis.
        ShapeError: indices is not an integer tensor.
        ExecutionError (when run): an index outside [-n, n) of its axis, or (with
            batch_dims) batch dims of params and indices that differ.
    """
    batch_dims = _int_arg(batch_dims, "gather: batch_dims")
    # TF's default axis is batch_dims (as given, before a negative one is resolved)
    axis = batch_dims if axis is None else _int_arg(axis, "gather: axis")
    p = _t(params)
    idx = _g.integer_tensor(indices, "gather: indices", p.graph)
    if not batch_dims:
        return p.graph.op("Gather", [p, idx], {"axis": axis}, name=name)
    return _batched_gather(p, idx, axis, batch_dims, name)


def _batched_gather(p: Tensor, idx: Tensor, axis: int, batch_dims: int, name) -> Tensor:
    """tf.gather with batch_dims: the batch dims flattened into the gathered axis, each
    batch's indices offset by its row of it, and one Gather (so it differentiates as
    Gather does); a negative index counts from its own batch's end, as ONNX's.

    Raises:
        ShapeError: a rank is unknown, or the batch dims of params and indices differ.
        ValueError: batch_dims or axis out of range.
    """
    if p.shape is None or idx.shape is None:
        raise ShapeError("gather: batch_dims needs params and indices of known rank")
    rank, irank = len(p.shape), len(idx.shape)
    if batch_dims < 0:
        batch_dims += irank
    if axis < 0:
        axis += rank
    if not 0 <= batch_dims <= axis < rank or batch_dims > irank:
        raise ValueError(f"gather: need 0 <= batch_dims <= axis < rank and batch_dims <= "
                         f"indices' rank, got batch_dims {batch_dims}, axis {axis}, ranks "
                         f"{rank} and {irank}")
    for k in range(batch_dims):
        a, b = p.shape[k], idx.shape[k]
        if a is not None and b is not None and a != b:
            raise ShapeError(f"gather: batch dim {k} is {a} in params {list(p.shape)} but "
                             f"{b} in indices {list(idx.shape)}")
    g = p.graph
    # params (B..., A..., N, R...) -> (B..., N, A..., R...): the gathered axis first
    perm = list(range(batch_dims)) + [axis] + [d for d in range(batch_dims, rank)
                                               if d != axis]
    moved = transpose(p, perm) if perm != list(range(rank)) else p
    dims = shape(moved)
    n = reshape(dims[batch_dims], [])
    flat = reshape(moved, concat([constant_ints_of(g, [-1]),
                                  g.op("Shape", [moved], {"start": batch_dims + 1})], 0))
    i64 = cast(idx, DType.INT64)
    i64 = where(less(i64, np.int64(0)), i64 + n, i64)
    # the flattened Gather would read a neighbouring batch's rows for an index past
    # its own batch's axis, and the batch offsets assume equal batch dims
    from .api_math import _checked

    i64 = _checked(i64, logical_and(greater_equal(i64, np.int64(0)), less(i64, n)),
                   "gather: an index is outside [-n, n) for the gathered axis of size n")
    if batch_dims:
        i64 = _checked(i64, equal(g.op("Shape", [p], {"end": batch_dims}),
                                  g.op("Shape", [idx], {"end": batch_dims})),
                       "gather: params and indices differ in their batch dims")
    batches = reduce_prod(dims[:batch_dims]) if batch_dims else np.int64(1)
    starts = g.op("Range", [g.constant(np.int64(0)), reshape(batches, []) * n, n])
    starts = reshape(starts, concat([g.op("Shape", [idx], {"end": batch_dims}),
                                     constant_ints_of(g, [1] * (irank - batch_dims))], 0))
    picked = g.op("Gather", [flat, i64 + starts], {"axis": 0})
    # picked: (B..., I..., A..., R...); TF's result is (B..., A..., I..., R...)
    n_a, n_i = axis - batch_dims, irank - batch_dims
    order = list(range(batch_dims)) + \
        [batch_dims + n_i + k for k in range(n_a)] + \
        [batch_dims + k for k in range(n_i)] + \
        list(range(batch_dims + n_i + n_a, rank - 1 + n_i))
    if order == list(range(len(order))):
        return identity(picked, name=name) if name is not None else picked
    return transpose(picked, order, name=name)


def constant_ints_of(g, values) -> Tensor:
    """An int64 vector constant of graph g."""
    return g.constant(np.asarray(list(values), dtype=np.int64))


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None,
            name=None) -> Tensor:
    """One-hot vectors along a new axis (last by default) of size `depth` (an int or an
    integer scalar tensor), TF1's tf.one_hot: on_value (1) at each index, off_value (0)
    elsewhere; an index outside [0, depth) (-1 for padding) gives a row of off_value.
    dtype defaults to on_value's or off_value's (Python ints: int32), else float32.

    Raises:
        TypeError: depth is neither an int nor a tensor, or axis not an int.
        ValueError: depth is negative (a tensor's: ShapeError when the graph runs).
        ShapeError: indices is not an integer tensor, a depth tensor not a scalar, or
            axis out of range.
        OneGraphError: on_value or off_value does not fit dtype.
    """
    i = _g.integer_tensor(indices, "one_hot: indices", _graph_of(indices, depth))
    g = i.graph
    if _g._is_symbolic(depth):
        depth_t = int64_tensor([depth], "one_hot: depth", g)
    else:
        depth = _int_arg(depth, "one_hot: depth")
        if depth < 0:
            raise ValueError(f"one_hot: depth must be >= 0, got {depth}")
        depth_t = g.constant(np.array(depth, np.int64))
    axis = -1 if axis is None else _int_arg(axis, "one_hot: axis")
    _check_axis(axis, i, "one_hot: axis", extra=1)
    if dtype is None:
        given = [v for v in (on_value, off_value) if v is not None]
        dtype = (DType.INT32 if all(isinstance(v, (int, np.integer)) and
                                    not isinstance(v, (bool, np.bool_)) for v in given)
                 else DType.BOOL if all(isinstance(v, (bool, np.bool_)) for v in given)
                 else float32) if given else float32
    want = as_dtype(dtype)
    try:
        on = _g._as_array(1 if on_value is None else on_value, want)
        off = _g._as_array(0 if off_value is None else off_value, want)
    except OneGraphError as e:
        raise _g._named(e, "one_hot: on_value/off_value") from None
    if on.shape != () or off.shape != ():
        raise ShapeError(f"one_hot: on_value and off_value must be scalars, got shapes "
                         f"{on.shape} and {off.shape}")
    # ONNX counts negative indices from the end; TF1 gives them a row of off_value
    i = cast(i, DType.INT64)
    i = g.op("Where", [g.op("Less", [i, g.constant(np.int64(0))]), depth_t, i])
    if want in _ONE_HOT_VALUE_TYPES:
        values = g.constant(np.asarray([off, on], want.numpy))
        return g.op("OneHot", [i, depth_t, values], {"axis": axis}, name=name)
    # onnxruntime has OneHot kernels for int64, float32 and float16 values only (with
    # int64 indices and depth): other dtypes pick on/off through a boolean mask, so an
    # export runs there too (its Where lacks bool, int16, uint16 and uint64: those go
    # through logic ops or int64)
    mask = cast(g.op("OneHot", [i, depth_t, g.constant(np.asarray([0, 1], np.int64))],
                     {"axis": axis}), DType.BOOL)
    if want is DType.BOOL:
        if bool(on) != bool(off):
            return identity(mask, name=name) if on else logical_not(mask, name=name)
        return g.op("Or" if on else "And", [mask, g.constant(np.asarray(bool(on)))],
                    name=name)
    carrier = DType.INT64 if want in _WHERE_CARRIED else want
    picked = g.op("Where", [mask, g.constant(np.asarray(on, want.numpy).astype(
        carrier.numpy)), g.constant(np.asarray(off, want.numpy).astype(carrier.numpy))])
    return cast(picked, want, name=name) if carrier is not want else \
        identity(picked, name=name)


_ONE_HOT_VALUE_TYPES = frozenset({DType.INT64, DType.FLOAT32, DType.FLOAT16})
_WHERE_CARRIED = frozenset({DType.INT16, DType.UINT16, DType.UINT64})


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0,
        constant_value=None) -> Tensor:
    """TF1's tf.pad: paddings is [[before, after], ...] per axis (ints, scalar integer
    tensors among them, or one integer tensor of shape [rank, 2]); mode "CONSTANT"
    fills with constant_values (`constant_value` is onegraph's older name), "REFLECT"
    mirrors without the edge and "SYMMETRIC" with it (those two need int paddings no
    larger than the axis, less than it for REFLECT).

    Raises:
        TypeError: paddings is not a list of [before, after] int pairs or a tensor, or
            mirror modes get tensor paddings.
        ValueError: mode is unknown, or a mirror padding is negative or too large for its
            axis (when the length is known only at run time: ExecutionError then).
        ShapeError: paddings has another number of rows than x has axes, or a tensor
            of paddings is not [rank, 2] integers.
        OneGraphError: the constant does not fit x's dtype.
    """
    x = _t(tensor)
    if not isinstance(mode, str) or mode.upper() not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(f"pad: mode must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC', got "
                         f"{_brief(mode)}")
    mode = mode.upper()
    if mode != "CONSTANT":
        if holds_tensor(paddings):
            raise TypeError(f"pad: mode {mode} needs paddings of ints")
        return _mirror_pad(x, _padding_list(x, paddings), mode, name)
    if holds_tensor(paddings):
        flat = _padding_tensor(x, paddings)
    else:
        flat = x.graph.constant(_padding_list(x, paddings))
    fill = constant_values if constant_value is None else constant_value
    g = x.graph
    try:
        value = _g._as_array(fill, x.dtype) if x.dtype is not DType.UNDEFINED \
            else _g._as_array(fill)
    except OneGraphError as e:
        raise _g._named(e, "pad: constant_values") from None
    if value.shape != ():
        raise ShapeError(f"pad: constant_values must be a scalar, got shape {value.shape}")
    return g.op("Pad", [x, flat, g.constant(value)], name=name)


def _mirror_pad(x: Tensor, pads: np.ndarray, mode: str, name) -> Tensor:
    """tf.pad's REFLECT / SYMMETRIC as slices of x reversed and joined along each axis
    (differentiable and exportable everywhere; ONNX's Pad has no symmetric mode)."""
    rank = len(pads) // 2
    edge = 0 if mode == "SYMMETRIC" else 1
    y = x
    for axis in range(rank):
        before, after = int(pads[axis]), int(pads[axis + rank])
        if not before and not after:
            continue
        if min(before, after) < 0:
            raise ValueError(f"pad: {mode} paddings must not be negative, got "
                             f"[{before}, {after}] for axis {axis}")
        n = y.shape[axis] if y.shape is not None else None
        limit = None if n is None else n - edge
        if limit is not None and max(before, after) > limit:
            raise ValueError(f"pad: {mode} padding [{before}, {after}] of axis {axis} "
                             f"must be at most {limit} for its length {n}")
        if n is None:   # checked when the run knows the length
            from .api_math import _checked

            length = reshape(shape(y)[axis], [])
            y = _checked(y, greater_equal(length - np.int64(edge + max(before, after)),
                                          np.int64(0)),
                         f"pad: {mode} padding [{before}, {after}] of axis {axis} must be "
                         f"at most the axis length{' - 1' if edge else ''}")
        parts = []
        if before:
            head = strided_slice(y, (slice(None),) * axis + (slice(edge, edge + before),))
            parts.append(_reversed(head, axis))
        parts.append(y)
        if after:
            tail = strided_slice(y, (slice(None),) * axis + (
                slice(-after - edge, -edge if edge else None),))
            parts.append(_reversed(tail, axis))
        y = concat(parts, axis)
    return identity(y, name=name) if name is not None or y is x else y


def _reversed(t: Tensor, axis: int) -> Tensor:
    return strided_slice(t, (slice(None),) * axis + (slice(None, None, -1),))


def _padding_list(x: Tensor, paddings) -> np.ndarray:
    """pad's [[before, after], ...] of ints as ONNX's pads (all befores, then afters)."""
    if isinstance(paddings, np.ndarray) and paddings.ndim == 0 or \
            not isinstance(paddings, (list, tuple, np.ndarray)) or not all(
            isinstance(p, (list, tuple, np.ndarray)) and len(p) == 2 for p in paddings):
        raise TypeError(f"pad: paddings must be a list of [before, after] pairs of ints, "
                        f"got {_brief(paddings)}")
    pads = np.asarray([_int_list(list(p), f"pad: paddings[{k}]")
                       for k, p in enumerate(paddings)], np.int64).reshape(-1, 2)
    if x.shape is not None and len(pads) != len(x.shape):
        raise ShapeError(f"pad: paddings has {len(pads)} rows for {x.name!r} of rank "
                         f"{len(x.shape)}")
    return np.concatenate([pads[:, 0], pads[:, 1]])


def _padding_tensor(x: Tensor, paddings) -> Tensor:
    """pad's paddings holding tensors, as ONNX's pads: the [rank, 2] tensor transposed
    and flattened."""
    g = x.graph
    pads = int64_tensor(paddings, "pad: paddings", g)
    shape = pads.shape
    if shape is not None and (len(shape) != 2 or shape[1] not in (None, 2)):
        raise ShapeError(f"pad: paddings must have shape [rank, 2], got {list(shape)}")
    if shape is not None and shape[0] is not None and x.shape is not None \
            and shape[0] != len(x.shape):
        raise ShapeError(f"pad: paddings has {shape[0]} rows for {x.name!r} of rank "
                         f"{len(x.shape)}")
    return g.op("Reshape", [g.op("Transpose", [pads], {"perm": [1, 0]}),
                            g.constant_ints([-1])])


def tile(x, multiples, name=None) -> Tensor:
    """Repeat x along each axis; multiples is a list of ints, a 1-D integer tensor, or
    a list mixing ints and scalar integer tensors.

    Raises:
        TypeError: multiples is none of those.
        ShapeError: a tensor in multiples is not integer (a scalar, inside a list).
    """
    x = _t(x)
    g = x.graph
    if holds_tensor(multiples):
        reps = int64_tensor(multiples, "tile: multiples", g)
    else:
        reps = g.constant(_ints(_int_list(multiples, "tile: multiples")))
    return g.op("Tile", [x, reps], name=name)


def strided_slice(x, key) -> Tensor:
    """Python indexing: ints, slices, Ellipsis, None (new axis) and 1-D index tensors.
    As in TF1, an int index and a slice's start and stop may also be scalar integer
    tensors (``x[:n]``, ``x[i, 0]``); steps are ints.

    Example: ``x[:, 1:3]``, ``x[0]``, ``x[..., ::-1]``, ``x[idx]`` (a gather).

    Raises:
        OneGraphError: an index of another kind (a bool, a float, a str, ...), a
            slice whose start or stop is not an int, a scalar tensor or None, a step
            that is not an int or None, or a zero step.
        ShapeError: a tensor start, stop or index inside a tuple is not an integer
            scalar.
        ValueError: an index or slice bound beyond the int64 range.
    """
    x = _t(x)
    g = x.graph
    if _g._is_symbolic(key):
        return gather(x, key)
    key = key if isinstance(key, tuple) else (key,)
    rank = len(x.shape) if x.shape is not None else None
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    expanded = []
    for k in key:
        if k is Ellipsis:
            if rank is None:
                raise OneGraphError("indexing with ... needs a known rank")
            expanded.extend([slice(None)] * (rank - n_real))
        else:
            expanded.append(k)
    starts, ends, axes, steps, squeeze_axes, new_axes = [], [], [], [], [], []
    axis = 0
    out_axis = 0
    for k in expanded:
        if k is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        if _g._is_symbolic(k):  # a scalar tensor inside a tuple: x[i, 0]
            k = _g.integer_tensor(k, "index", g)
            starts.append(k)
            ends.append(_index_end(k))
            axes.append(axis)
            steps.append(1)
            squeeze_axes.append(axis)
        elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            k = _int_arg(k, "index")
            starts.append(k)
            ends.append(k + 1 if k != -1 else np.iinfo(np.int64).max)
            axes.append(axis)
            steps.append(1)
            squeeze_axes.append(axis)
        elif isinstance(k, slice):
            for part in (k.start, k.stop, k.step):
                if part is not None and (isinstance(part, (bool, np.bool_)) or
                                         not isinstance(part, (int, np.integer))) \
                        and (part is k.step or not _g._is_symbolic(part)):
                    raise OneGraphError(f"unsupported index {k!r}: slice bounds must be "
                                        "ints, scalar integer tensors or None, and steps "
                                        "ints or None")
            for part in (k.start, k.stop, k.step):
                if part is not None and not _g._is_symbolic(part):
                    _int_arg(part, f"index {k!r}")
            if k.step is not None and int(k.step) == 0:
                raise OneGraphError(f"unsupported index {k!r}: the step must not be 0")
            if k != slice(None):
                step = 1 if k.step is None else int(k.step)
                big = np.iinfo(np.int64).max
                starts.append(k.start if k.start is not None else (0 if step > 0 else -1))
                ends.append(k.stop if k.stop is not None else (big if step > 0 else -big))
                axes.append(axis)
                steps.append(step)
            out_axis += 1
        else:
            raise OneGraphError(f"unsupported index {k!r}")
        axis += 1
    y = x
    if axes:
        bounds = [int64_tensor(v, "index", g) if holds_tensor(v) else g.constant(_ints(v))
                  for v in (starts, ends)]
        y = g.op("Slice", [x] + bounds + [g.constant(_ints(axes)), g.constant(_ints(steps))])
    if squeeze_axes:
        y = g.op("Squeeze", [y, g.constant(_ints(squeeze_axes))])
    for a in new_axes:
        y = g.op("Unsqueeze", [y, g.constant(_ints([a]))])
    return y


def _index_end(k: Tensor) -> Tensor:
    """The Slice end that takes the one element at the scalar index tensor k: k + 1,
    or to the end when k is -1 (k + 1 = 0 would take nothing)."""
    g = k.graph
    k64 = cast(k, DType.INT64)
    last = g.op("Equal", [k64, g.constant(np.int64(-1))])
    return g.op("Where", [last, g.constant(np.int64(np.iinfo(np.int64).max)),
                          g.op("Add", [k64, g.constant(np.int64(1))])])


# --------------------------------------------------------------------------- signatures

def signature(inputs: Mapping | None = None, outputs: Mapping | None = None,
              targets: Iterable = ()) -> dict:
    """A named entry point for `og.save(graph, path, signatures={...})`.

    Args:
        inputs: key -> placeholder tensor.
        outputs: key -> tensor.
        targets: ops to run for their effects (e.g. a train op).

    Raises:
        TypeError: inputs or outputs is not a mapping of str keys, or targets is not a
            list.
    """
    for what, m in (("inputs", inputs), ("outputs", outputs)):
        if m is not None and not isinstance(m, Mapping):
            raise TypeError(f"signature: {what} must be a dict {{key: tensor}}, got "
                            f"{type(m).__name__}")
        for k in (m or {}):
            if not isinstance(k, str):
                raise TypeError(f"signature: {what} keys must be str, got {k!r}")
    if not isinstance(targets, (list, tuple)):
        raise TypeError(f"signature: targets must be a list of ops, got "
                        f"{type(targets).__name__}")
    return {"inputs": {k: _t(v) for k, v in (inputs or {}).items()},
            "outputs": {k: _t(v) for k, v in (outputs or {}).items()},
            "targets": list(targets)}


# --------------------------------------------------------------------------- raw ops

class _RawOps:
    """Every registered op as a function: ``og.raw_ops.Conv(x, w, b, pads=[1, 1, 1, 1])``.

    Positional arguments are the op's inputs (None for an omitted optional input),
    keyword arguments its attributes; ``name=``, ``domain=`` and ``num_outputs=`` are
    passed to the graph builder. Returns one Tensor, a list for several outputs, or
    the Operation when the op has none.
    """

    def __getattr__(self, op_type: str):
        if op_type.startswith("_"):
            raise AttributeError(op_type)
        domain = "" if REGISTRY.has(op_type, "") else "onegraph"
        opdef = REGISTRY.get(op_type, domain)

        def fn(*inputs, name=None, num_outputs=None, **attrs):
            g = _graph_of(*inputs)
            return g.op(op_type, list(inputs), attrs, num_outputs=num_outputs, name=name,
                        domain=domain)
        fn.__name__ = op_type
        fn.__doc__ = f"{opdef.name} ({opdef.domain or 'ai.onnx'}): {opdef.doc}"
        return fn

    def __dir__(self):
        return sorted({op.name for op in REGISTRY})


raw_ops = _RawOps()

__all__ = [
    "GLOBAL_STEP", "GLOBAL_VARIABLES", "LOCAL_VARIABLES", "LOSSES", "METRIC_VARIABLES",
    "REGULARIZATION_LOSSES", "TRAINABLE_VARIABLES", "UPDATE_OPS", "Graph",
    "local_variables", "local_variables_initializer", "is_variable_initialized",
    "report_uninitialized_variables", "assert_variables_initialized",
    "Operation", "Tensor", "Variable", "abs", "add", "add_n", "add_to_collection", "argmax",
    "argmin", "as_dtype", "bool_", "cast", "ceil", "clip_by_value", "concat", "constant",
    "control_dependencies", "convert_to_tensor", "cos", "device", "divide", "equal", "erf",
    "exp", "expand_dims", "float16", "float32", "float64", "floor", "gather",
    "get_collection", "get_default_graph", "get_or_create_global_step",
    "global_variables", "global_variables_initializer", "greater", "greater_equal",
    "group", "identity", "int16", "int32", "int64", "int8", "less", "less_equal", "log",
    "logical_and", "logical_not", "logical_or", "matmul", "maximum", "minimum", "multiply",
    "name_scope", "negative", "no_op", "one_hot", "ones", "ones_like", "pad", "placeholder",
    "pow", "raw_ops", "reciprocal", "reduce_logsumexp", "reduce_max", "reduce_mean",
    "reduce_min", "reduce_prod", "reduce_sum", "relu", "reset_default_graph", "reshape",
    "rsqrt", "shape", "sigmoid", "sign", "signature", "sin", "split", "sqrt", "square",
    "squeeze", "stack", "stop_gradient", "strided_slice", "string", "subtract", "tanh",
    "tile", "trainable_variables", "transpose", "uint8", "uint16", "uint32", "uint64",
    "bfloat16", "half", "double", "unstack", "variables_initializer",
    "where", "zeros", "zeros_like", "onnx_type", "newaxis", "TensorShape", "Dimension",
    "dimension_value",
]

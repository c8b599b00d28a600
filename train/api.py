"""Public graph-building functions (re-exported as `onegraph.*`).

Every function adds nodes to the default graph (or the graph of its tensor inputs)
and returns symbolic `Tensor`s. Names follow TF1 where users expect them
(`og.reduce_mean`, `og.matmul`, `og.placeholder`); every registered op is also
available as `og.raw_ops.<OpType>(*inputs, **attrs)`.
"""

from __future__ import annotations

import contextlib
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..format import DType
from ..ops import REGISTRY
from . import graph as _g
from .graph import (GLOBAL_STEP, GLOBAL_VARIABLES, TRAINABLE_VARIABLES, UPDATE_OPS, Graph,
                    Operation, Tensor, as_dtype, convert_to_tensor, get_default_graph,
                    reset_default_graph)
from .variables import (Variable, get_or_create_global_step, global_variables,
                        global_variables_initializer, trainable_variables,
                        variables_initializer)

float16, float32, float64 = DType.FLOAT16, DType.FLOAT32, DType.FLOAT64
int8, int16, int32, int64 = DType.INT8, DType.INT16, DType.INT32, DType.INT64
uint8, bool_, string = DType.UINT8, DType.BOOL, DType.STRING

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
    """
    return get_default_graph().placeholder(dtype, shape, name)


def constant(value, dtype=None, name: str | None = None) -> Tensor:
    """A constant tensor. Python floats become float32, Python ints int64.

    Args:
        value: array-like.
        dtype: convert to this dtype.
        name: tensor name.
    """
    return get_default_graph().constant(value, dtype, name)


def zeros(shape, dtype=float32, name=None) -> Tensor:
    """A constant of zeros."""
    return constant(np.zeros(shape, as_dtype(dtype).numpy), name=name)


def ones(shape, dtype=float32, name=None) -> Tensor:
    """A constant of ones."""
    return constant(np.ones(shape, as_dtype(dtype).numpy), name=name)


def zeros_like(x, name=None) -> Tensor:
    """Zeros with the shape and dtype of x (at run time)."""
    x = _t(x)
    return x.graph.op("ZerosLike", [x], name=name)


def ones_like(x, name=None) -> Tensor:
    """Ones with the shape and dtype of x (at run time)."""
    x = _t(x)
    return x.graph.op("OnesLike", [x], name=name)


# --------------------------------------------------------------------------- scopes

def name_scope(name: str):
    """Context manager prefixing op names with `name/` in the default graph."""
    return get_default_graph().name_scope(name)


def device(spec: str):
    """Context manager placing ops on a device, e.g. ``og.device("/job:ps/task:0")``."""
    return get_default_graph().device(spec)


def control_dependencies(control_inputs):
    """Context manager: ops created inside run after `control_inputs` (ops/tensors)."""
    g = _graph_of(*(control_inputs or []))
    return g.control_dependencies(control_inputs)


def no_op(name: str | None = None) -> Operation:
    """An op that does nothing (useful as a target with control dependencies)."""
    return get_default_graph().op("NoOp", [], name=name)


def group(*inputs, name: str | None = None) -> Operation:
    """One op that runs all `inputs` (ops, tensors, variables, or lists of them)."""
    flat = []
    for x in inputs:
        flat.extend(x if isinstance(x, (list, tuple)) else [x])
    g = _graph_of(*flat)
    return g.op("NoOp", [], name=name or "group", control_inputs=flat)


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


def get_collection(name: str) -> list:
    """A collection of the default graph (e.g. og.TRAINABLE_VARIABLES)."""
    return get_default_graph().get_collection(name)


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
divide = _binary("Div")
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
    """Sum of a list of same-shaped tensors (one AddN node)."""
    ts = [_t(x) for x in inputs]
    _g.check_same_dtype("AddN", ts)
    if len(ts) == 1:
        return ts[0]
    return ts[0].graph.op("AddN", ts, name=name)


def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False, name=None) -> Tensor:
    """Matrix product (numpy matmul semantics; 2-D transposes via Gemm).

    Args:
        a, b: tensors; batch dims broadcast.
        transpose_a, transpose_b: use the transpose of the last two dims.

    Raises:
        ShapeError: a and b have different dtypes, or an operand to transpose is not
            of known rank >= 2.
    """
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


def where(condition, x, y, name=None) -> Tensor:
    """Elementwise select: x where condition else y (broadcasting)."""
    x, y = _pair(x, y, "Where")
    cond = _g.bool_tensor(condition, "where: condition", x.graph)
    return x.graph.op("Where", [cond, x, y], name=name)


def clip_by_value(x, clip_value_min, clip_value_max, name=None) -> Tensor:
    """x clamped to [min, max] (ONNX Clip)."""
    x = _t(x)
    g = x.graph
    return g.op("Clip", [x, g.convert(clip_value_min, x.dtype),
                         g.convert(clip_value_max, x.dtype)], name=name)


# --------------------------------------------------------------------------- reductions

def _reduce(op_type):
    def fn(x, axis=None, keepdims: bool = False, name=None):
        x = _t(x)
        g = x.graph
        inputs = [x]
        if axis is not None:
            axes = [axis] if np.isscalar(axis) else list(axis)
            if not axes:  # TF: an empty axis list reduces nothing (ONNX: everything)
                return g.op("Identity", [x], name=name)
            inputs.append(g.constant(_ints(axes)))
        return g.op(op_type, inputs, {"keepdims": int(keepdims)}, name=name)
    fn.__name__ = op_type
    fn.__doc__ = (f"{op_type} over `axis` (int or list; None = all axes, [] = none).\n\n"
                  "    Args:\n        x: input.\n        axis: axes to reduce.\n"
                  "        keepdims: keep reduced axes with size 1.\n")
    return fn


reduce_sum = _reduce("ReduceSum")
reduce_mean = _reduce("ReduceMean")
reduce_max = _reduce("ReduceMax")
reduce_min = _reduce("ReduceMin")
reduce_prod = _reduce("ReduceProd")
reduce_logsumexp = _reduce("ReduceLogSumExp")


def argmax(x, axis: int = -1, name=None) -> Tensor:
    """Index of the maximum along `axis` (int64)."""
    x = _t(x)
    return x.graph.op("ArgMax", [x], {"axis": axis, "keepdims": 0}, name=name)


def argmin(x, axis: int = -1, name=None) -> Tensor:
    """Index of the minimum along `axis` (int64)."""
    x = _t(x)
    return x.graph.op("ArgMin", [x], {"axis": axis, "keepdims": 0}, name=name)


# --------------------------------------------------------------------------- shapes

def shape(x, name=None) -> Tensor:
    """The run-time shape of x (int64 vector)."""
    x = _t(x)
    return x.graph.op("Shape", [x], name=name)


def reshape(x, new_shape, name=None) -> Tensor:
    """x with a new shape (a list with one -1 allowed, or an int64 tensor)."""
    x = _t(x)
    g = x.graph
    s = new_shape if _g._is_symbolic(new_shape) else g.constant(_ints(new_shape))
    return g.op("Reshape", [x, s], name=name)


def transpose(x, perm=None, name=None) -> Tensor:
    """Permute the axes (default: reverse them)."""
    x = _t(x)
    return x.graph.op("Transpose", [x], {"perm": None if perm is None else list(perm)},
                      name=name)


def concat(values: Sequence, axis: int, name=None) -> Tensor:
    """Join tensors along an existing axis."""
    graph = _graph_of(*values)
    first = next((v for v in values if _g._is_symbolic(v)), None)
    dtype = None if first is None else _g._dtype_for(_t(first, graph=graph))
    ts = [_t(v, None if _g._is_symbolic(v) else dtype, graph=graph) for v in values]
    _g.check_same_dtype("Concat", ts)
    return ts[0].graph.op("Concat", ts, {"axis": int(axis)}, name=name)


def expand_dims(x, axis: int, name=None) -> Tensor:
    """Insert a size-1 axis."""
    x = _t(x)
    return x.graph.op("Unsqueeze", [x, x.graph.constant(_ints([axis]))], name=name)


def squeeze(x, axis=None, name=None) -> Tensor:
    """Remove size-1 axes: those listed, or all when `axis` is None or empty (as in TF,
    where the default is [])."""
    x = _t(x)
    inputs = [x]
    if axis is not None and (np.isscalar(axis) or len(axis)):
        inputs.append(x.graph.constant(_ints([axis] if np.isscalar(axis) else axis)))
    return x.graph.op("Squeeze", inputs, name=name)


def stack(values: Sequence, axis: int = 0, name=None) -> Tensor:
    """Join tensors along a new axis."""
    return concat([expand_dims(v, axis) for v in values], axis, name=name)


def unstack(x, num: int | None = None, axis: int = 0) -> list:
    """Split x along `axis` into `num` tensors with that axis removed."""
    x = _t(x)
    num = num if num is not None else (x.shape[axis] if x.shape else None)
    if num is None:
        raise OneGraphError("unstack needs `num` when the axis length is unknown")
    parts = x.graph.op("Split", [x], {"axis": axis, "num_outputs": num}, num_outputs=num)
    parts = parts if isinstance(parts, list) else [parts]
    return [squeeze(p, axis) for p in parts]


def split(x, num_or_sizes, axis: int = 0, name=None) -> list:
    """Split x along `axis` into equal parts or parts of the given sizes."""
    x = _t(x)
    g = x.graph
    if np.isscalar(num_or_sizes):
        n = int(num_or_sizes)
        out = g.op("Split", [x], {"axis": axis, "num_outputs": n}, num_outputs=n, name=name)
    else:
        sizes = list(num_or_sizes)
        out = g.op("Split", [x, g.constant(_ints(sizes))], {"axis": axis},
                   num_outputs=len(sizes), name=name)
    return out if isinstance(out, list) else [out]


def gather(params, indices, axis: int = 0, name=None) -> Tensor:
    """Rows (slices along `axis`) of params picked by integer indices."""
    p = _t(params)
    return p.graph.op("Gather", [p, _g.integer_tensor(indices, "gather: indices", p.graph)],
                      {"axis": axis}, name=name)


def one_hot(indices, depth: int, on_value=1.0, off_value=0.0, dtype=float32,
            name=None) -> Tensor:
    """One-hot rows (last axis of size `depth`)."""
    i = _g.integer_tensor(indices, "one_hot: indices")
    g = i.graph
    values = g.constant(np.asarray([off_value, on_value], as_dtype(dtype).numpy))
    return g.op("OneHot", [i, g.constant(np.array(depth, np.int64)), values], {"axis": -1},
                name=name)


def pad(x, paddings, constant_value=0.0, name=None) -> Tensor:
    """Constant padding; paddings is [[before, after], ...] per axis."""
    x = _t(x)
    pads = np.asarray(paddings, np.int64)
    flat = np.concatenate([pads[:, 0], pads[:, 1]])
    g = x.graph
    return g.op("Pad", [x, g.constant(flat), g.constant(np.asarray(constant_value,
                                                                   x.dtype.numpy))],
                name=name)


def tile(x, multiples, name=None) -> Tensor:
    """Repeat x along each axis."""
    x = _t(x)
    return x.graph.op("Tile", [x, x.graph.constant(_ints(multiples))], name=name)


def strided_slice(x, key) -> Tensor:
    """Python indexing: ints, slices, Ellipsis, None (new axis) and 1-D index tensors.

    Example: ``x[:, 1:3]``, ``x[0]``, ``x[..., ::-1]``, ``x[idx]`` (a gather).
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
        if isinstance(k, (int, np.integer)):
            k = int(k)
            starts.append(k)
            ends.append(k + 1 if k != -1 else np.iinfo(np.int64).max)
            axes.append(axis)
            steps.append(1)
            squeeze_axes.append(axis)
        elif isinstance(k, slice):
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
        y = g.op("Slice", [x, g.constant(_ints(starts)), g.constant(_ints(ends)),
                           g.constant(_ints(axes)), g.constant(_ints(steps))])
    if squeeze_axes:
        y = g.op("Squeeze", [y, g.constant(_ints(squeeze_axes))])
    for a in new_axes:
        y = g.op("Unsqueeze", [y, g.constant(_ints([a]))])
    return y


# --------------------------------------------------------------------------- signatures

def signature(inputs: Mapping | None = None, outputs: Mapping | None = None,
              targets: Iterable = ()) -> dict:
    """A named entry point for `og.save(graph, path, signatures={...})`.

    Args:
        inputs: key -> placeholder tensor.
        outputs: key -> tensor.
        targets: ops to run for their effects (e.g. a train op).
    """
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
    "GLOBAL_STEP", "GLOBAL_VARIABLES", "TRAINABLE_VARIABLES", "UPDATE_OPS", "Graph",
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
    "tile", "trainable_variables", "transpose", "uint8", "unstack", "variables_initializer",
    "where", "zeros", "zeros_like", "onnx_type",
]

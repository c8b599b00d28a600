"""og.import_graph_def's op table: each TF op type as a call to og's TF1-named functions.

Each converter takes (node, inputs, ctx) - the NodeDef, its data inputs as og Tensors, and
the importer's context (static values, the node's name) - and returns an og Tensor, a
list of Tensors (one per TF output) or an og Operation (for nodes without outputs).
Attribute defaults are TF's (op_def) defaults.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConversionError
from .graph_def_functions import FUNCTION_CONVERTERS
from .graph_def_tensor_array import TENSOR_ARRAY_CONVERTERS

__all__ = ["CONVERTERS", "BACK_EDGE_SOURCES", "MERGE_KINDS"]

# a Merge's input from one of these is a loop's back edge (the importer patches it in)
BACK_EDGE_SOURCES = frozenset({"NextIteration", "RefNextIteration"})
MERGE_KINDS = frozenset({"Merge", "RefMerge"})


def _og():
    from . import public    # og's namespace; imported late as public.py imports this
    return public


def _where(node) -> str:
    return f"node {node.name!r} ({node.op})"


def _ints(ctx, node, t, what: str):
    """The static integer value of input `t` (a Const or a folded shape), as a list or int.

    Raises:
        ConversionError: the value is only known at run time.
    """
    value = _value(ctx, node, t, what)
    return int(value) if value.ndim == 0 else [int(v) for v in value.reshape(-1)]


def _value(ctx, node, t, what: str) -> np.ndarray:
    """The static value of input `t` as an array.

    Raises:
        ConversionError: the value is only known at run time.
    """
    value = ctx.static(t)
    if value is None:
        raise ConversionError(f"{_where(node)}: {what} must be a constant for og's "
                              f"importer, it is computed at run time")
    return np.asarray(value)


def _maybe_static(ctx, t):
    """Input `t` as plain ints when known while building (og's shape-like arguments
    often want Python values), else the tensor itself."""
    value = ctx.static(t)
    if value is None or np.asarray(value).dtype.kind not in "iu":
        return t
    value = np.asarray(value)
    return int(value) if value.ndim == 0 else value.tolist()


def _padding(node):
    """TF's padding attr: "SAME"/"VALID", or EXPLICIT's explicit_paddings as 4 pairs."""
    padding = node.get("padding", "VALID")
    if padding == "EXPLICIT":
        flat = [int(v) for v in node.get("explicit_paddings", [])]
        if len(flat) != 8:
            raise ConversionError(f"{_where(node)}: EXPLICIT padding needs 8 "
                                  f"explicit_paddings, got {len(flat)}")
        return [flat[i:i + 2] for i in range(0, 8, 2)]
    return padding


def _unary(fn_name):
    def convert(node, ins, ctx):
        fn = _og()
        for part in fn_name.split("."):
            fn = getattr(fn, part)
        return fn(ins[0], name=ctx.name)
    return convert


def _binary(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og(), fn_name)(ins[0], ins[1], name=ctx.name)
    return convert


def _shaped(fn_name):
    """A (tensor, shape-like argument) op; the argument passed as ints when static."""
    def convert(node, ins, ctx):
        return getattr(_og(), fn_name)(ins[0], _maybe_static(ctx, ins[1]), name=ctx.name)
    return convert


def _reduce(fn_name):
    def convert(node, ins, ctx):
        keep = bool(node.get("keep_dims", False))
        return getattr(_og(), fn_name)(ins[0], _maybe_static(ctx, ins[1]), keepdims=keep,
                                       name=ctx.name)
    return convert


def _placeholder(node, ins, ctx):
    shape = node.get("shape")
    return _og().placeholder(node.get("dtype"), shape, name=ctx.name)


def _const(node, ins, ctx):
    value = node.get("value")
    if value is None:
        raise ConversionError(f"{_where(node)}: has no value attr")
    dtype = node.get("dtype", value.dtype)
    return _og().constant(np.asarray(value, dtype=dtype), name=ctx.name)


def _matmul(node, ins, ctx):
    return _og().matmul(ins[0], ins[1], transpose_a=node.get("transpose_a", False),
                        transpose_b=node.get("transpose_b", False), name=ctx.name)


def _batch_matmul(node, ins, ctx):
    return _og().matmul(ins[0], ins[1], adjoint_a=node.get("adj_x", False),
                        adjoint_b=node.get("adj_y", False), name=ctx.name)


def _bias_add(node, ins, ctx):
    return _og().nn.bias_add(ins[0], ins[1], data_format=node.get("data_format", "NHWC"),
                             name=ctx.name)


def _conv2d(node, ins, ctx):
    return _og().nn.conv2d(ins[0], ins[1], strides=node.get("strides"),
                           padding=_padding(node), data_format=node.get("data_format", "NHWC"),
                           dilations=node.get("dilations", [1, 1, 1, 1]), name=ctx.name)


def _depthwise(node, ins, ctx):
    return _og().nn.depthwise_conv2d_native(
        ins[0], ins[1], node.get("strides"), _padding(node),
        data_format=node.get("data_format", "NHWC"),
        dilations=node.get("dilations", [1, 1, 1, 1]), name=ctx.name)


def _conv2d_backprop_input(node, ins, ctx):
    return _og().nn.conv2d_backprop_input(
        ins[0], ins[1], ins[2], strides=node.get("strides"), padding=_padding(node),
        data_format=node.get("data_format", "NHWC"),
        dilations=node.get("dilations", [1, 1, 1, 1]), name=ctx.name)


def _pool(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og().nn, fn_name)(ins[0], node.get("ksize"), node.get("strides"),
                                          node.get("padding"),
                                          data_format=node.get("data_format", "NHWC"),
                                          name=ctx.name)
    return convert


def _fused_batch_norm(node, ins, ctx):
    if node.get("is_training", True):
        raise ConversionError(f"{_where(node)}: is_training=True (batch statistics) is "
                              f"not supported; freeze the graph for inference")
    out = _og().nn.fused_batch_norm(ins[0], ins[1], ins[2], mean=ins[3], variance=ins[4],
                                    epsilon=node.get("epsilon", 1e-4),
                                    data_format=node.get("data_format", "NHWC"),
                                    is_training=False, name=ctx.name)
    y = out[0]
    # TF's outputs: y, batch mean, batch variance, then reserve spaces (the same stats)
    count = 6 if node.op == "FusedBatchNormV3" else 5
    return [y] + [ins[3], ins[4]] * 2 + [ins[3]] * (count - 5)


def _squeeze(node, ins, ctx):
    axis = node.get("squeeze_dims", []) or None
    return _og().squeeze(ins[0], axis=axis, name=ctx.name)


def _concat(node, ins, ctx):
    if node.op == "Concat":
        axis, values = ins[0], ins[1:]
    else:
        axis, values = ins[-1], ins[:-1]
    return _og().concat(list(values), _ints(ctx, node, axis, "the axis"), name=ctx.name)


def _pack(node, ins, ctx):
    return _og().stack(list(ins), axis=node.get("axis", 0), name=ctx.name)


def _unpack(node, ins, ctx):
    return list(_og().unstack(ins[0], num=node.get("num"), axis=node.get("axis", 0)))


def _strided_slice(node, ins, ctx):
    """TF's StridedSlice masks turned into a Python index for og.strided_slice."""
    og = _og()
    begin = _ints(ctx, node, ins[1], "begin")
    end = _ints(ctx, node, ins[2], "end")
    strides = _ints(ctx, node, ins[3], "strides")
    if not (isinstance(begin, list) and len(begin) == len(end) == len(strides)):
        raise ConversionError(f"{_where(node)}: begin, end and strides must be vectors of "
                              f"one length")
    masks = {k: int(node.get(k, 0)) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                              "new_axis_mask", "shrink_axis_mask")}
    key = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if masks["ellipsis_mask"] & bit:
            key.append(Ellipsis)
        elif masks["new_axis_mask"] & bit:
            key.append(None)
        elif masks["shrink_axis_mask"] & bit:
            key.append(b)
        else:
            key.append(slice(None if masks["begin_mask"] & bit else b,
                             None if masks["end_mask"] & bit else e, s))
    return og.identity(og.strided_slice(ins[0], tuple(key)), name=ctx.name)


def _pad(node, ins, ctx):
    og = _og()
    if node.op == "MirrorPad":
        paddings = np.reshape(_ints(ctx, node, ins[1], "paddings"), (-1, 2)).tolist()
        return og.pad(ins[0], paddings, mode=node.get("mode"), name=ctx.name)
    fill = _value(ctx, node, ins[2], "constant_values") if node.op == "PadV2" else 0
    return og.pad(ins[0], ins[1], constant_values=fill, name=ctx.name)


def _arg(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og(), fn_name)(ins[0], _maybe_static(ctx, ins[1]),
                                       output_type=node.get("output_type", np.int64),
                                       name=ctx.name)
    return convert


def _gather_v2(node, ins, ctx):
    return _og().gather(ins[0], ins[1], axis=_ints(ctx, node, ins[2], "the axis"),
                        batch_dims=node.get("batch_dims", 0), name=ctx.name)


def _resize(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og().image, fn_name)(
            ins[0], ins[1], align_corners=node.get("align_corners", False),
            half_pixel_centers=node.get("half_pixel_centers", False), name=ctx.name)
    return convert


def _split(node, ins, ctx):
    axis = _ints(ctx, node, ins[0], "the axis")
    return list(_og().split(ins[1], node.get("num_split"), axis=axis, name=ctx.name))


def _split_v(node, ins, ctx):
    sizes = _ints(ctx, node, ins[1], "size_splits")
    axis = _ints(ctx, node, ins[2], "the axis")
    return list(_og().split(ins[0], sizes, axis=axis, name=ctx.name))


def _top_k(node, ins, ctx):
    k = _ints(ctx, node, ins[1], "k")
    out = _og().nn.top_k(ins[0], k=k, sorted=node.get("sorted", True), name=ctx.name)
    return [out[0], out[1]]


def _range(node, ins, ctx):
    return _og().range(ins[0], ins[1], ins[2], dtype=node.get("Tidx"), name=ctx.name)


def _shape_like(fn_name):
    def convert(node, ins, ctx):
        return getattr(_og(), fn_name)(ins[0], out_type=node.get("out_type", np.int32),
                                       name=ctx.name)
    return convert


_SIMPLE_UNARY = {
    "Identity": "identity", "Snapshot": "identity", "StopGradient": "stop_gradient",
    "Neg": "negative", "Abs": "abs", "Sqrt": "sqrt", "Rsqrt": "rsqrt", "Square": "square",
    "Exp": "exp", "Log": "log", "Tanh": "tanh", "Sigmoid": "sigmoid", "Relu": "nn.relu",
    "Relu6": "nn.relu6", "Elu": "nn.elu", "Selu": "nn.selu", "Softplus": "nn.softplus",
    "Softmax": "nn.softmax", "LogSoftmax": "nn.log_softmax", "Erf": "erf", "Floor": "floor",
    "Ceil": "ceil", "Round": "round", "Sign": "sign", "LogicalNot": "logical_not",
    "Reciprocal": "reciprocal", "Sin": "sin", "Cos": "cos", "Rank": "rank",
}
_SIMPLE_BINARY = {
    "Add": "add", "AddV2": "add", "Sub": "subtract", "Mul": "multiply",
    "RealDiv": "realdiv", "Div": "div", "FloorDiv": "floordiv", "FloorMod": "floormod",
    "Maximum": "maximum", "Minimum": "minimum", "Pow": "pow",
    "SquaredDifference": "squared_difference", "Equal": "equal", "NotEqual": "not_equal",
    "Less": "less", "Greater": "greater", "LessEqual": "less_equal",
    "GreaterEqual": "greater_equal", "LogicalAnd": "logical_and", "LogicalOr": "logical_or",
    "Gather": "gather",
}

# --------------------------------------------------------------------- control flow v1
# TF1's dataflow control flow maps one to one onto og's own ops (ops/dataflow.py), which
# the Session runs as frames and the ONNX export rewrites to If / Loop; both read only
# the IR, so no og.cond / og.while_loop bookkeeping is made for imported nodes (and
# gradients through them are refused: see graph_def_import's module doc).

def _graph():
    return _og().get_default_graph()


def _predicate(t):
    """`t` with plain Identities (no control inputs) looked through. TF's cond switches
    its values on pred_id = Identity(pred) but its pivot on pred itself; og's export
    finds a cond by the one predicate its Switches share, and the values are equal."""
    while True:
        op = t.op
        if op is None or op.type != "Identity" or op.control_inputs:
            return t
        t = op.inputs[0]


def _switch(node, ins, ctx):
    return list(_graph().op("Switch", [ins[0], _predicate(ins[1])], name=ctx.name))


def _merge(node, ins, ctx):
    """Merge of the live input. For a loop's back edge (its NextIteration, built later)
    the importer passes the entering value and patches the input once that exists."""
    if not ins:
        raise ConversionError(f"{_where(node)}: a Merge needs at least one input")
    return list(_graph().op("Merge", list(ins), name=ctx.name))


def _enter(node, ins, ctx):
    frame = node.get("frame_name", "")
    if not isinstance(frame, str) or not frame:
        raise ConversionError(f"{_where(node)}: an Enter needs a frame_name")
    attrs = {"frame_name": frame, "is_constant": int(bool(node.get("is_constant", False))),
             "parallel_iterations": int(node.get("parallel_iterations", 10))}
    return _graph().op("Enter", [ins[0]], attrs, name=ctx.name)


def _exit(node, ins, ctx):
    """TF's Exit has no frame_name; og's names the frame it leaves (the importer
    tracks which frame each node runs in)."""
    if not ctx.frame:
        raise ConversionError(f"{_where(node)}: its input is not inside a loop frame "
                              "(no Enter leads to it)")
    return _graph().op("Exit", [ins[0]], {"frame_name": ctx.frame}, name=ctx.name)


_CONTROL_FLOW = {
    "Switch": _switch, "RefSwitch": _switch, "Merge": _merge, "RefMerge": _merge,
    "Enter": _enter, "RefEnter": _enter, "Exit": _exit, "RefExit": _exit,
    "NextIteration": lambda n, i, c: _graph().op("NextIteration", [i[0]], name=c.name),
    "RefNextIteration": lambda n, i, c: _graph().op("NextIteration", [i[0]], name=c.name),
    "LoopCond": lambda n, i, c: _graph().op("LoopCond", [i[0]], name=c.name),
}


CONVERTERS = {
    "Placeholder": _placeholder,
    "PlaceholderWithDefault": lambda n, i, c: _og().placeholder_with_default(
        i[0], n.get("shape"), name=c.name),
    "Const": _const,
    "IdentityN": lambda n, i, c: list(_og().identity_n(list(i), name=c.name)),
    "NoOp": lambda n, i, c: _og().no_op(name=c.name),
    # og's run-time check (tf.nn.dynamic_rnn adds one on sequence_length's shape)
    "Assert": lambda n, i, c: _og().Assert(i[0], list(i[1:]),
                                           summarize=int(n.get("summarize", 3)), name=c.name),
    "MatMul": _matmul, "BatchMatMul": _batch_matmul, "BatchMatMulV2": _batch_matmul,
    "BatchMatMulV3": _batch_matmul,
    "BiasAdd": _bias_add, "BiasAddV1": _bias_add,
    "AddN": lambda n, i, c: _og().add_n(list(i), name=c.name),
    "LeakyRelu": lambda n, i, c: _og().nn.leaky_relu(i[0], alpha=n.get("alpha", 0.2),
                                                     name=c.name),
    "Conv2D": _conv2d, "DepthwiseConv2dNative": _depthwise,
    "Conv2DBackpropInput": _conv2d_backprop_input,
    "MaxPool": _pool("max_pool"), "AvgPool": _pool("avg_pool"),
    "FusedBatchNorm": _fused_batch_norm, "FusedBatchNormV2": _fused_batch_norm,
    "FusedBatchNormV3": _fused_batch_norm,
    "Squeeze": _squeeze, "ConcatV2": _concat, "Concat": _concat,
    "Pack": _pack, "Unpack": _unpack,
    "Shape": _shape_like("shape"), "Size": _shape_like("size"),
    "StridedSlice": _strided_slice,
    "Transpose": lambda n, i, c: _og().transpose(i[0], _ints(c, n, i[1], "perm"),
                                                 name=c.name),
    "Slice": lambda n, i, c: _og().slice(i[0], _maybe_static(c, i[1]),
                                         _maybe_static(c, i[2]), name=c.name),
    "Fill": lambda n, i, c: _og().fill(_maybe_static(c, i[0]), i[1], name=c.name),
    "Pad": _pad, "PadV2": _pad, "MirrorPad": _pad,
    "Mean": _reduce("reduce_mean"), "Sum": _reduce("reduce_sum"),
    "Max": _reduce("reduce_max"), "Min": _reduce("reduce_min"),
    "Prod": _reduce("reduce_prod"), "Any": _reduce("reduce_any"),
    "All": _reduce("reduce_all"),
    "ArgMax": _arg("argmax"), "ArgMin": _arg("argmin"),
    "Cast": lambda n, i, c: _og().cast(i[0], n.get("DstT"), name=c.name),
    "ZerosLike": lambda n, i, c: _og().zeros_like(i[0], name=c.name),
    "OnesLike": lambda n, i, c: _og().ones_like(i[0], name=c.name),
    "GatherV2": _gather_v2,
    "Select": lambda n, i, c: _og().where(i[0], i[1], i[2], name=c.name),
    "SelectV2": lambda n, i, c: _og().where_v2(i[0], i[1], i[2], name=c.name),
    "ResizeBilinear": _resize("resize_bilinear"),
    "ResizeNearestNeighbor": _resize("resize_nearest_neighbor"),
    "Split": _split, "SplitV": _split_v, "TopKV2": _top_k, "Range": _range,
    "Einsum": lambda n, i, c: _og().einsum(n.get("equation"), *i, name=c.name),
}
CONVERTERS.update({op: _unary(fn) for op, fn in _SIMPLE_UNARY.items()})
CONVERTERS.update({op: _binary(fn) for op, fn in _SIMPLE_BINARY.items()})
CONVERTERS.update({op: _shaped(fn) for op, fn in (("Reshape", "reshape"), ("Tile", "tile"),
                                                  ("ExpandDims", "expand_dims"))})
CONVERTERS.update(_CONTROL_FLOW)
CONVERTERS.update(TENSOR_ARRAY_CONVERTERS)
CONVERTERS.update(FUNCTION_CONVERTERS)

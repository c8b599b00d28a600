"""og.import_graph_def's TensorArray converters: TF1's resource-style TensorArrayV3 ops
(tf.nn.dynamic_rnn, tf.map_fn, tf.scan, tf.foldl, hand-written while loops) as og's
functional TensorArray (train/tensor_array.py).

TF's array is a resource (the "handle") plus a scalar "flow" that orders its writes;
og's is a value: the flow tensor is the data itself, [size, *element_shape], and every
write returns a new flow. So TensorArrayV3 gives (a small constant standing for the
handle, og's initial flow), and each op takes its data from its flow_in input, the
tensor TF's control flow (Enter/Merge/Switch/NextIteration/Exit) carries through
loops, exactly where og's own while_loop carries a TensorArray. The handle only tells
a converter which TensorArrayV3 the array came from (dtype, element shape,
dynamic_size): the importer's context maps each handle tensor to the og TensorArray
built for it, and a converter follows its handle input back through Enter/Identity/
Switch/Exit to that tensor.

Facts kept from TF (tf.compat.v1 2.21): reading an element never written gives zeros
when the element shape is known; reading past a fixed size fails at run time (og's
Gather raises ShapeError where TF raises InvalidArgumentError). Not kept: TF's
clear_after_read (a second read of an element succeeds here), split into elements
of different lengths (refused). TensorArrayV2 (no flow output) and TensorArrayGradV3
have no converter, so the importer lists them as unsupported op types.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConversionError
from .tensor_array import TensorArray

__all__ = ["TENSOR_ARRAY_CONVERTERS"]

# ops a handle passes through unchanged on its way from TensorArrayV3 to its users
_PASS_THROUGH = frozenset({"Enter", "Identity", "Switch", "Exit", "NextIteration"})


def _og():
    from . import public    # og's namespace; imported late as public.py imports this
    return public


def _where(node) -> str:
    return f"node {node.name!r} ({node.op})"


def _template(node, ins, ctx) -> TensorArray:
    """The og TensorArray built for the TensorArrayV3 that `node`'s handle (input 0)
    comes from.

    Raises:
        ConversionError: the handle does not lead back to a TensorArrayV3 of this
            import through Enter/Identity/Switch/Exit.
    """
    arrays = ctx.tensor_arrays
    t = ins[0] if ins else None
    while t is None or t.tensor_index not in arrays:
        op = None if t is None else t.op
        if op is None or op.type not in _PASS_THROUGH or not op.inputs:
            raise ConversionError(f"{_where(node)}: its handle input does not come from a "
                                  "TensorArrayV3 node of the graph_def (through Enter/"
                                  "Identity/Switch/Exit only)")
        t = op.inputs[0]
    return arrays[t.tensor_index]


def _array(node, ins, ctx, flow_index: int) -> TensorArray:
    """The og TensorArray that `node`'s handle (input 0) stands for, holding the
    node's flow input.

    Raises:
        ConversionError: the handle does not lead back to a TensorArrayV3 of this
            import, or the node's dtype attr is not the array's.
    """
    template = _template(node, ins, ctx)
    for attr in ("dtype", "T"):
        want = node.get(attr)
        if want is not None and np.dtype(want) != template.dtype.numpy:
            raise ConversionError(f"{_where(node)}: its {attr} is {np.dtype(want).name} "
                                  f"but the TensorArray holds {template.dtype.short_name}")
    if len(ins) <= flow_index:
        raise ConversionError(f"{_where(node)}: expected a flow input at position "
                              f"{flow_index}, got {len(ins)} input(s)")
    flow = ins[flow_index]
    if flow.dtype != template.dtype:
        raise ConversionError(f"{_where(node)}: its flow input is "
                              f"{flow.dtype.short_name}, not the flow of a "
                              f"{template.dtype.short_name} TensorArray")
    return TensorArray(template.dtype, _flow=flow, _meta=template._meta)


def _create(node, ins, ctx):
    """TensorArrayV3(size) -> (handle, flow): og's TensorArray of the node's dtype,
    element_shape and dynamic_size; the handle is an int32 constant."""
    og = _og()
    dtype = node.get("dtype")
    if dtype is None:
        raise ConversionError(f"{_where(node)}: has no dtype attr")
    value = ctx.static(ins[0])
    size = int(np.asarray(value)) if value is not None else ins[0]
    ta = og.TensorArray(dtype, size=size, dynamic_size=bool(node.get("dynamic_size", False)),
                        element_shape=node.get("element_shape"))
    handle = og.constant(np.int32(len(ctx.tensor_arrays)), name=ctx.name)
    ctx.tensor_arrays[handle.tensor_index] = ta
    return [handle, ta.flow]


def _write(node, ins, ctx):
    """TensorArrayWriteV3(handle, index, value, flow_in) -> flow_out."""
    return _array(node, ins, ctx, 3).write(ins[1], ins[2]).flow


def _scatter(node, ins, ctx):
    """TensorArrayScatterV3(handle, indices, value, flow_in) -> flow_out."""
    return _array(node, ins, ctx, 3).scatter(ins[1], ins[2]).flow


def _read(node, ins, ctx):
    """TensorArrayReadV3(handle, index, flow_in) -> the element."""
    return _og().identity(_array(node, ins, ctx, 2).read(ins[1]), name=ctx.name)


def _gather(node, ins, ctx):
    """TensorArrayGatherV3(handle, indices, flow_in; element_shape) -> the elements,
    stacked."""
    ta = _array(node, ins, ctx, 2)
    _learn_shape(ta, node.get("element_shape"))
    return _og().identity(ta.gather(ins[1]), name=ctx.name)


def _learn_shape(ta: TensorArray, shape) -> None:
    """Take a reader's element_shape attr when the array's is still unknown: the
    importer may build a loop's readers after its Exit but before the body's write
    (a Merge does not wait for its back edge), so the write has not told it yet."""
    if ta._meta.element_shape is None and shape is not None:
        ta._meta.element_shape = tuple(shape)


def _size(node, ins, ctx):
    """TensorArraySizeV3(handle, flow_in) -> int32 size."""
    return _og().identity(_array(node, ins, ctx, 1).size(), name=ctx.name)


def _concat(node, ins, ctx):
    """TensorArrayConcatV3(handle, flow_in) -> (value, lengths): the elements joined
    along their axis 0, and each element's length (int64, all equal: og's arrays
    hold same-shape elements)."""
    og = _og()
    ta = _array(node, ins, ctx, 1)
    rest = node.get("element_shape_except0")
    if rest is not None and ta._meta.element_shape is None:
        _learn_shape(ta, [None] + list(rest))
    value = og.identity(ta.concat(), name=ctx.name)
    shape = og.shape(ta.stack(), out_type=np.int64)
    lengths = og.fill(og.reshape(og.gather(shape, 0), [1]), og.gather(shape, 1))
    return [value, lengths]


def _split(node, ins, ctx):
    """TensorArraySplitV3(handle, value, lengths, flow_in) -> flow_out, for lengths
    known while building and all equal (the value's rows regrouped into elements).

    Raises:
        ConversionError: lengths computed at run time or not all equal (og's flow
            cannot carry elements of different lengths).
    """
    og = _og()
    ta = _array(node, ins, ctx, 3)
    lengths = ctx.static(ins[2])
    op = ins[2].op
    if lengths is None and op is not None and op.type == "Cast":
        lengths = ctx.static(op.inputs[0])    # TF casts the lengths to int64
    if lengths is None:
        raise ConversionError(f"{_where(node)}: lengths must be a constant for og's "
                              "importer, they are computed at run time")
    lengths = [int(v) for v in np.asarray(lengths).reshape(-1)]
    if not lengths or len(set(lengths)) != 1:
        raise ConversionError(f"{_where(node)}: lengths {lengths} are not all equal; og's "
                              "importer splits into equal-length elements only")
    value = ins[1]
    rest = og.shape(value, out_type=np.int64)[1:]
    rows = og.reshape(value, og.concat([np.array([len(lengths), lengths[0]], np.int64),
                                        rest], 0))
    return ta.unstack(rows).flow


def _close(node, ins, ctx):
    """TensorArrayCloseV3(handle): a NoOp (og's arrays are values)."""
    _template(node, ins, ctx)
    return _og().no_op(name=ctx.name)


TENSOR_ARRAY_CONVERTERS = {
    "TensorArrayV3": _create,
    "TensorArrayWriteV3": _write, "TensorArrayWriteV2": _write,
    "TensorArrayScatterV3": _scatter, "TensorArrayScatterV2": _scatter,
    "TensorArrayReadV3": _read, "TensorArrayReadV2": _read,
    "TensorArrayGatherV3": _gather, "TensorArrayGatherV2": _gather,
    "TensorArraySizeV3": _size, "TensorArraySizeV2": _size,
    "TensorArrayConcatV3": _concat, "TensorArrayConcatV2": _concat,
    "TensorArraySplitV3": _split, "TensorArraySplitV2": _split,
    "TensorArrayCloseV3": _close, "TensorArrayCloseV2": _close,
}

"""Gradient rules of the indexing family.

Gather along axis 0 returns a *sparse* gradient: the builder's `b.indexed_slices(values,
indices, like)` (an `IndexedSlices` in onegraph.train) so embedding updates stay sparse.
"""

from __future__ import annotations

from ..errors import GradientNotDefinedError


def _gather(b, op, grads):
    (g,) = grads
    params, indices = op.inputs
    axis = int(op.attrs["axis"])
    # a row dim known to be 0 (empty params): the dense path below, as the sparse
    # values' shape [-1, 0, ...] cannot infer its -1 (nor can IndexedSlicesToDense)
    if axis == 0 and params.shape is not None and 0 not in params.shape[1:]:
        flat_idx = b.op("Reshape", [indices, b.constant_ints([-1])])
        row = [-1] + [d if d is not None else 0 for d in params.shape[1:]]
        if any(d is None for d in params.shape[1:]):
            # unknown row dims: take them from the run-time shape
            values = b.op("Reshape", [g, _row_shape(b, params, flat_idx)], {"allowzero": 1})
        else:
            values = b.op("Reshape", [g, b.constant_ints(row)])
        return [b.indexed_slices(values, flat_idx, params), None]
    # other axes (or unknown params shape): dense, scatter-added into zeros
    return [b.op("GatherGrad", [g, params, indices], {"axis": axis}), None]


def _row_shape(b, params, flat_idx):
    """[number of indices, params' row dims...] at run time. The count is spelled out
    rather than -1, which cannot be inferred when a row dim turns out to be 0."""
    shp = b.op("Shape", [params])
    tail = b.op("Slice", [shp, b.constant_ints([1]), b.constant_ints([2 ** 62])])
    return b.op("Concat", [b.op("Shape", [flat_idx]), tail], {"axis": 0})


def _slice(b, op, grads):
    ins = op.inputs
    inputs = [grads[0], ins[0]] + list(ins[1:])
    return [b.op("SliceGrad", inputs)] + [None] * (len(ins) - 1)


def _gather_elements(b, op, grads):
    x, idx = op.inputs
    zeros = b.op("ZerosLike", [x])
    return [b.op("ScatterElements", [zeros, idx, grads[0]],
                 {"axis": op.attrs["axis"], "reduction": "add"}), None]


def _gather_nd(b, op, grads):
    x, idx = op.inputs
    batch_dims = int(op.attrs.get("batch_dims", 0) or 0)
    if batch_dims:  # (ScatterND has no batch_dims)
        return [b.op("GatherNDGrad", [grads[0], x, idx], {"batch_dims": batch_dims}), None]
    zeros = b.op("ZerosLike", [x])
    return [b.op("ScatterND", [zeros, idx, grads[0]], {"reduction": "add"}), None]


def _scatter(gather_op, scatter_op, with_axis):
    """ScatterElements / ScatterND. reduction none: data's gradient is dy with the
    written positions zeroed, the updates' gradient is dy gathered at the indices (a
    repeated index gives every duplicate the gradient, although only one write wins).
    reduction add: dy passes to data unchanged. max / min: see `_scatter_extreme`."""
    def rule(b, op, grads):
        (g,) = grads
        data, idx, upd = op.inputs
        red = op.attrs["reduction"]
        attrs = {"axis": op.attrs["axis"]} if with_axis else {}
        if red in ("max", "min"):
            return _scatter_extreme(b, op, g, gather_op, scatter_op, attrs)
        if red not in ("none", "add"):
            raise GradientNotDefinedError(
                f"{op.type} gradient supports reduction none, add, max and min, not {red!r}")
        if red == "none":
            zeros = b.op("ZerosLike", [upd])
            g_data = b.op(scatter_op, [g, idx, zeros], dict(attrs, reduction="none"))
        else:
            g_data = g
        return [g_data, None, b.op(gather_op, [g, idx], attrs)]
    return rule


def _scatter_extreme(b, op, g, gather_op, scatter_op, attrs):
    """reduction max / min: each output is one of its candidates (data's value and the
    updates written there), and dy goes to the candidates equal to it, split evenly
    among ties (as TensorFlow's segment max/min gradients)."""
    data, idx, upd = op.inputs
    out = op.outputs[0]
    won_data = b.op("CastLike", [b.op("Equal", [data, out]), g])
    won_upd = b.op("CastLike", [b.op("Equal", [upd, b.op(gather_op, [out, idx], attrs)]), g])
    winners = b.op(scatter_op, [won_data, idx, won_upd], dict(attrs, reduction="add"))
    share = b.op("Div", [g, winners])
    return [b.op("Mul", [share, won_data]), None,
            b.op("Mul", [b.op(gather_op, [share, idx], attrs), won_upd])]


def _compress(b, op, grads):
    x, cond = op.inputs
    return [b.op("CompressGrad", [grads[0], x, cond], {"axis": op.attrs["axis"]}), None]


def _one_hot(b, op, grads):
    # output = values[1] where hot else values[0]: values gets the summed dy of each part
    (g,) = grads
    idx, depth, values = op.inputs
    if values.dtype.numpy.kind != "f":
        return [None, None, None]
    unit = b.op("CastLike", [b.constant_ints([0, 1]), values])
    hot = b.op("OneHot", [idx, depth, unit], {"axis": op.attrs["axis"]})
    d_on = b.op("ReduceSum", [b.op("Mul", [g, hot])], {"keepdims": 0})
    d_off = b.op("Sub", [b.op("ReduceSum", [g], {"keepdims": 0}), d_on])
    ax0 = b.constant_ints([0])
    return [None, None, b.op("Concat", [b.op("Unsqueeze", [d_off, ax0]),
                                        b.op("Unsqueeze", [d_on, ax0])], {"axis": 0})]


GRADIENTS = {
    "Compress": _compress, "Gather": _gather, "GatherElements": _gather_elements,
    "GatherND": _gather_nd, "OneHot": _one_hot,
    "ScatterElements": _scatter("GatherElements", "ScatterElements", True),
    "ScatterND": _scatter("GatherND", "ScatterND", False), "Slice": _slice,
}

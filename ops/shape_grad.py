"""Gradient rules of the shape family: reshapes, transposes, concat/split, pad, tile,
expand, dropout, identity."""

from __future__ import annotations

import numpy as np

from ..errors import GradientNotDefinedError
from .grad_util import static_ints


def _reshape_back(b, op, grads):
    """Ops that only change the shape: reshape the gradient to the input's shape."""
    x = op.inputs[0]
    # allowzero: x's shape is literal; a 0 in it (an empty x) must not copy dy's dim
    g = b.op("Reshape", [grads[0], b.op("Shape", [x])], {"allowzero": 1})
    return [g] + [None] * (len(op.inputs) - 1)


def _identity(b, op, grads):
    return [grads[0]]


def _transpose(b, op, grads):
    x = op.inputs[0]
    perm = op.attrs.get("perm")
    if perm is None:
        if x.shape is None:
            raise GradientNotDefinedError("Transpose gradient needs a known rank")
        perm = list(range(len(x.shape)))[::-1]
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return [b.op("Transpose", [grads[0]], {"perm": inv})]


def _concat(b, op, grads):
    (g,) = grads
    xs = op.inputs
    axis = int(op.attrs["axis"])
    sizes = []
    for x in xs:
        if x.shape is None or x.shape[axis] is None:
            return _concat_dynamic(b, op, g, axis)
        sizes.append(x.shape[axis])
    parts = b.op("Split", [g, b.constant_ints(sizes)], {"axis": axis},
                 num_outputs=len(sizes))
    return parts if isinstance(parts, list) else [parts]


def _concat_dynamic(b, op, g, axis):
    """Slice the gradient at run-time offsets (input sizes from Shape ops)."""
    out = []
    start = b.constant_ints([0])
    ax = b.constant_ints([axis])
    for x in op.inputs:
        size = b.op("Gather", [b.op("Shape", [x]), ax])
        end = b.op("Add", [start, size])
        out.append(b.op("Slice", [g, start, end, ax]))
        start = end
    return out


def _split(b, op, grads):
    axis = int(op.attrs["axis"])
    parts = [gr if gr is not None else b.op("ZerosLike", [y])
             for gr, y in zip(grads, op.outputs)]
    return [b.op("Concat", parts, {"axis": axis})] + [None] * (len(op.inputs) - 1)


def _expand(b, op, grads):
    return [b.op("SumToShapeOf", [grads[0], op.inputs[0]]), None]


def _tile(b, op, grads):
    """dx: dy viewed as (r0, d0, r1, d1, ...) with the repeat axes summed; the view's
    shape is built at run time when the repeats or x's shape are only known then.

    Raises:
        GradientNotDefinedError: x's rank is unknown.
    """
    x = op.inputs[0]
    if x.shape is None:
        raise GradientNotDefinedError("Tile gradient needs the input's rank")
    rank = len(x.shape)
    reps = static_ints(b, op.inputs[1])
    if reps is not None and all(d is not None for d in x.shape):
        split = b.constant_ints([v for r, d in zip(reps, x.shape) for v in (r, d)])
    else:
        column = b.constant_ints([1])
        pairs = b.op("Concat", [b.op("Unsqueeze", [b.op("Cast", [op.inputs[1]], {"to": 7}),
                                                   column]),
                                b.op("Unsqueeze", [b.op("Shape", [x]), column])],
                     {"axis": 1})
        split = b.op("Reshape", [pairs, b.constant_ints([-1])])
    # allowzero: a repeat of 0 is a literal 0 in the view (dy is empty then), not
    # "copy the input's dim" (which named a dim dy does not have)
    g = b.op("Reshape", [grads[0], split], {"allowzero": 1})
    axes = list(range(0, 2 * rank, 2))
    return [b.op("ReduceSum", [g, b.constant_ints(axes)], {"keepdims": 0}), None]


def _pad(b, op, grads):
    """Constant-mode Pad: dx is dy with the pads undone (the inner block, re-padded with
    zeros where negative pads cropped x); the constant value gets dy summed over the
    cells it filled. reflect/edge/wrap: see `_pad_copying`.

    Raises:
        GradientNotDefinedError: x of unknown rank; pads or axes not known while
            building (other than constant mode's all-axes run-time pads); in
            reflect/edge/wrap mode, a padded dim of x not known while building.
    """
    x = op.inputs[0]
    pads = static_ints(b, op.inputs[1])
    if x.shape is None:
        raise GradientNotDefinedError("Pad gradient needs an input of known rank")
    value = op.inputs[2] if len(op.inputs) > 2 else None
    axes_in = op.inputs[3] if len(op.inputs) > 3 else None
    mode = op.attrs.get("mode", "constant")
    if mode != "constant":
        return _pad_copying(b, op, grads[0], x, pads, axes_in, mode)
    if pads is None:
        if axes_in is not None:
            raise GradientNotDefinedError("Pad gradient with pads known only at run time "
                                          "needs no axes input")
        return _pad_dynamic(b, op, grads, x, value)
    axes = list(range(len(x.shape))) if axes_in is None else static_ints(b, axes_in)
    if axes is None:
        raise GradientNotDefinedError("Pad gradient needs axes known while building "
                                      "(the axes input is not a constant)")
    g = grads[0]
    k = len(axes)
    if min(pads, default=0) >= 0:
        ends = [-e if e > 0 else np.iinfo(np.int64).max for e in pads[k:]]
        gx = b.op("Slice", [g, b.constant_ints(pads[:k]), b.constant_ints(ends),
                            b.constant_ints(axes)])
    else:
        # padding by -pads crops what was padded and puts zeros where x was cropped
        gx = b.op("Pad", [g, b.constant_ints([-p for p in pads]), None,
                          b.constant_ints(axes)])
    out = [gx, None]
    if len(op.inputs) > 2:
        out.append(_pad_value_grad(b, g, x, value, pads, axes))
    if len(op.inputs) > 3:
        out.append(None)
    return out


def _pad_copying(b, op, g, x, pads, axes_in, mode):
    """Pad's gradient in reflect/edge/wrap mode, axis by axis. Along an axis the output
    holds the n values negative pads leave (the core) between copies of some of them
    (the borders), so dx is dy's core plus the borders added back onto the values they
    copy: the few border rows contracted with a (border, n) 0/1 matrix, one small
    MatMul, then zeros put back where negative pads cropped x."""
    axes = list(range(len(x.shape))) if axes_in is None else static_ints(b, axes_in)
    if pads is None or axes is None:
        raise GradientNotDefinedError(f"Pad gradient in {mode} mode needs pads and axes "
                                      "known while building")
    rank, k = len(x.shape), len(axes)
    for i, axis in enumerate(axes):
        axis %= rank
        begin, end = pads[i], pads[k + i]
        if begin == 0 and end == 0:
            continue
        d = x.shape[axis]
        if d is None:
            raise GradientNotDefinedError(f"Pad gradient in {mode} mode needs the padded "
                                          f"dims known while building (axis {axis})")
        lo, hi = max(-begin, 0), max(-end, 0)      # cropped off x
        pb, pe, n = max(begin, 0), max(end, 0), d - lo - hi
        g = _pad_borders_back(b, g, axis, rank, pb, pe, n, mode, x.dtype.numpy)
        if lo or hi:
            widths = [0] * (2 * rank)
            widths[axis], widths[rank + axis] = lo, hi
            g = b.op("Pad", [g, b.constant_ints(widths)])
    return [g] + [None] * (len(op.inputs) - 1)


def _pad_borders_back(b, g, axis, rank, pb, pe, n, mode, dtype):
    """dy's core (n values along `axis`, after pb border values) with the pb + pe
    border values added onto the core values they copied."""
    core = b.op("Slice", [g, b.constant_ints([pb]), b.constant_ints([pb + n]),
                          b.constant_ints([axis])])
    parts = [b.op("Slice", [g, b.constant_ints([s]), b.constant_ints([e]),
                            b.constant_ints([axis])])
             for s, e in ((0, pb), (pb + n, pb + n + pe)) if e > s]
    if not parts:  # only crops on this axis
        return core
    border = parts[0] if len(parts) == 1 else b.op("Concat", parts, {"axis": axis})
    j = np.concatenate([np.arange(-pb, 0), np.arange(n, n + pe)])
    if mode == "reflect":
        src = np.where(j < 0, -j, 2 * (n - 1) - j)
    elif mode == "edge":
        src = np.clip(j, 0, n - 1)
    else:  # wrap (pads may exceed n: several turns)
        src = j % n
    copies = np.zeros((len(j), n), dtype=dtype)
    np.add.at(copies, (np.arange(len(j)), src), 1)
    # contract along `axis` without moving the (large) core: the border's last or
    # second-to-last axis takes a matrix on that side; others move the small border
    if axis == rank - 1:
        back = b.op("MatMul", [border, b.constant(copies)])
    elif axis == rank - 2:
        back = b.op("MatMul", [b.constant(np.ascontiguousarray(copies.T)), border])
    else:
        perm = list(range(rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]   # a swap: its own inverse
        back = b.op("Transpose", [b.op("MatMul", [
            b.op("Transpose", [border], {"perm": perm}), b.constant(copies)])],
            {"perm": perm})
    return b.op("Add", [core, back])


def _pad_dynamic(b, op, grads, x, value):
    """Pad's gradient for pads known only at run time (all axes): dy padded by the
    parts negative pads cropped, then the block at max(pads_begin, 0) of x's shape."""
    g = grads[0]
    rank = len(x.shape)
    pads = b.op("Cast", [op.inputs[1]], {"to": 7})
    zero = b.constant_ints([0] * (2 * rank))
    regrow = b.op("Max", [b.op("Neg", [pads]), zero])
    grown = b.op("Pad", [g, regrow])
    starts = b.op("Max", [b.op("Slice", [pads, b.constant_ints([0]),
                                         b.constant_ints([rank])]),
                          b.constant_ints([0] * rank)])
    gx = b.op("Slice", [grown, starts, b.op("Add", [starts, b.op("Shape", [x])])])
    out = [gx, None]
    if len(op.inputs) > 2:
        out.append(_pad_value_grad(b, g, x, value, pads, list(range(rank))))
    return out


def _pad_value_grad(b, g, x, value, pads, axes):
    """d(Pad)/d(constant_value): dy summed over the padded cells (a mask that is x's
    shape of zeros padded with ones), shaped like the value input. pads: ints or an
    int64 tensor."""
    if value is None or value.dtype.numpy.kind != "f":
        return None
    zeros = b.op("ZerosLike", [x])
    one = b.constant(np.asarray(1, value.dtype.numpy))
    pads_t = pads if not isinstance(pads, (list, tuple)) else b.constant_ints(pads)
    mask = b.op("Pad", [zeros, pads_t, one, b.constant_ints(axes)])
    total = b.op("ReduceSum", [b.op("Mul", [g, mask])], {"keepdims": 0})
    # Expand, not Reshape: the value may be 0-d, (1,) or empty (an empty value pads
    # with 0, so its gradient is empty too)
    return b.op("Expand", [total, b.op("Shape", [value])])


def _dropout(b, op, grads):
    g = grads[0]
    if g is None:
        return [None] * len(op.inputs)
    # without training_mode the op is inference-mode Dropout: the output is x itself
    training = op.inputs[2] if len(op.inputs) > 2 else None
    if training is None:
        return [g] + [None] * (len(op.inputs) - 1)
    if len(op.outputs) < 2:
        raise GradientNotDefinedError("Dropout gradient needs the mask output when "
                                      "training_mode is given")
    x = op.inputs[0]
    ratio = op.inputs[1] if len(op.inputs) > 1 and op.inputs[1] is not None else None
    mask = b.op("CastLike", [op.outputs[1], x])
    if ratio is None:
        scale = b.constant(np.asarray(1.0 / (1.0 - op.attrs["ratio"]), x.dtype.numpy))
    else:
        one = b.constant(np.asarray(1.0, x.dtype.numpy))
        scale = b.op("Div", [one, b.op("Sub", [one, b.op("CastLike", [ratio, x])])])
    # in inference mode (training_mode false) the output is x itself
    gx = b.op("Where", [training, b.op("Mul", [b.op("Mul", [g, mask]), scale]), g])
    return [gx] + [None] * (len(op.inputs) - 1)


def _depth_to_space(b, op, grads):
    """SpaceToDepth undoes DCR mode. CRD mode is DCR after a channel permutation (CRD
    reads channel c * bs^2 + k where DCR reads k * C' + c, for C' = C / bs^2 output
    channels and block offset k), so its gradient gathers SpaceToDepth(dy)'s channels
    back into CRD order; that needs x's channel count known while building."""
    bs = int(op.attrs["blocksize"])
    g = b.op("SpaceToDepth", [grads[0]], {"blocksize": bs})
    if op.attrs.get("mode", "DCR") == "DCR":
        return [g]
    x = op.inputs[0]
    c = None if x.shape is None or len(x.shape) != 4 else x.shape[1]
    if c is None:
        raise GradientNotDefinedError("DepthToSpace gradient in CRD mode needs the input's "
                                      "channel count known while building")
    k = np.arange(c)
    order = (k % (bs * bs)) * (c // (bs * bs)) + k // (bs * bs)
    return [b.op("Gather", [g, b.constant(order.astype(np.int64))], {"axis": 1})]


def _space_to_depth(b, op, grads):
    return [b.op("DepthToSpace", [grads[0]], {"blocksize": op.attrs["blocksize"]})]


def _trilu(b, op, grads):
    ins = op.inputs
    k = ins[1] if len(ins) > 1 else None
    g = b.op("Trilu", [grads[0]] + ([k] if k is not None else []),
             {"upper": op.attrs["upper"]})
    return [g] + [None] * (len(ins) - 1)


def _resize(b, op, grads):
    ins = op.inputs
    x = ins[0]
    if x.dtype.numpy.kind != "f":
        return [None] * len(ins)
    if op.attrs["mode"] not in ("nearest", "linear", "cubic"):
        raise GradientNotDefinedError(f"Resize gradient: unknown mode {op.attrs['mode']!r}")
    out_shape = op.outputs[0].shape
    if out_shape is not None and 0 in out_shape:
        # an output axis floored to 0 cells (a scale below 1 / its length): nothing read
        # x, and ResizeGrad's per-axis plan cannot be built for the empty dy
        return [b.op("ZerosLike", [x])] + [None] * (len(ins) - 1)
    attrs = {k: v for k, v in op.attrs.items() if not k.startswith("__")}
    extra = list(ins[1:4]) + [None] * (3 - len(ins[1:4]))
    g = b.op("ResizeGrad", [grads[0], x] + extra, attrs)
    return [g] + [None] * (len(ins) - 1)


def _no_gradient(b, op, grads):
    """Outputs computed from integer inputs only (ConstantOfShape's fill is an attr)."""
    return [None] * len(op.inputs)


def _range(b, op, grads):
    # y_i = start + i * delta: dy/dstart = 1, dy/ddelta = i = (y_i - start) / delta;
    # the length is piecewise constant in limit
    (g,) = grads
    start, _, delta = op.inputs
    if start.dtype.numpy.kind != "f":
        return [None, None, None]
    steps = b.op("Div", [b.op("Sub", [op.outputs[0], start]), delta])
    return [b.op("Reshape", [b.op("ReduceSum", [g], {"keepdims": 0}), b.op("Shape", [start])]),
            None,
            b.op("Reshape", [b.op("ReduceSum", [b.op("Mul", [g, steps])], {"keepdims": 0}),
                             b.op("Shape", [delta])])]


def _reverse_sequence(b, op, grads):
    # the reversal is its own inverse: the gradient is reversed back the same way
    attrs = {k: op.attrs[k] for k in ("batch_axis", "time_axis") if k in op.attrs}
    return [b.op("ReverseSequence", [grads[0], op.inputs[1]], attrs), None]


GRADIENTS = {
    "Concat": _concat, "ConstantOfShape": _no_gradient, "DepthToSpace": _depth_to_space,
    "EyeLike": _no_gradient,
    "Dropout": _dropout, "Expand": _expand, "Flatten": _reshape_back, "Identity": _identity,
    "Pad": _pad, "Range": _range, "Reshape": _reshape_back, "Resize": _resize,
    "ReverseSequence": _reverse_sequence,
    "SpaceToDepth": _space_to_depth, "Split": _split,
    "Squeeze": _reshape_back, "Tile": _tile, "Transpose": _transpose, "Trilu": _trilu,
    "Unsqueeze": _reshape_back,
}

"""Operators: shape family (reshaping, layout, padding, resizing, constants)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpAttributeError, ResourceExhaustedError, ShapeError
from .common import broadcast_shape, check_result_size, infer_same
from .registry import NUM_OUTPUTS, TensorInfo, define

# Shape-manipulating subgraphs are constant-folded at inference time when every input
# value is known; beyond this many input elements we leave folding to the executor.
_FOLD_LIMIT = 1 << 16

_ALIGN_CORNERS_LENGTH = (
    "Resize align_corners with scales whose output length is fractional (4 x 0.6 = "
    "2.4): the expected outputs come from ONNX's reference, which divides by the "
    "fractional length minus one; onegraph divides by the output's whole length minus "
    "one, as the spec's text (length_resized), onnxruntime and PyTorch's "
    "interpolate(align_corners=True) do")
KNOWN_FAILURES: dict[str, str] = {
    "test_resize_downsample_scales_linear_align_corners": _ALIGN_CORNERS_LENGTH,
    "test_resize_downsample_scales_cubic_align_corners": _ALIGN_CORNERS_LENGTH,
}


# --------------------------------------------------------------------------- helpers

def _norm_axis(axis, rank, where="") -> int:
    """Map a possibly negative axis into [0, rank); raise ShapeError if out of range."""
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ShapeError(f"{where}axis {axis} out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _ints(arr) -> list[int]:
    return [int(v) for v in np.asarray(arr).reshape(-1)]


def _known(info) -> bool:
    return info is not None and info.value is not None


def _check_1d(value, op, name, scalar_too=False):
    """An operand the spec makes a 1-D tensor (Reshape's shape, Slice's starts, ...);
    with scalar_too a 0-D one passes as well (Expand's shape: onnxruntime and onnx's
    checker take a scalar there).

    Raises:
        ShapeError: it has another rank (onnxruntime refuses those too).
    """
    ndim = np.ndim(value)
    if ndim != 1 and not (scalar_too and ndim == 0):
        raise ShapeError(f"{op}: {name} must be a 1-D tensor, got shape "
                         f"{list(np.shape(value))}")


def _check_1d_info(info, op, name, scalar_too=False):
    """`_check_1d` for inference: checks a statically known rank only."""
    if info is not None and info.shape is not None and len(info.shape) != 1 \
            and not (scalar_too and len(info.shape) == 0):
        raise ShapeError(f"{op}: {name} must be a 1-D tensor, got shape {list(info.shape)}")


def _len1d(info):
    """Static length of a 1-D input (value or shape), or None."""
    if info is None:
        return None
    if info.value is not None:
        return int(np.asarray(info.value).size)
    if info.shape is not None and len(info.shape) == 1:
        return info.shape[0]
    return None


def _fold(kernel, attrs, inputs):
    """Run the kernel on statically known input values; None if some are unknown."""
    present = [t for t in inputs if t is not None]
    if not all(_known(t) for t in present):
        return None
    if sum(np.asarray(t.value).size for t in present) > _FOLD_LIMIT:
        return None
    args = [None if t is None else np.asarray(t.value) for t in inputs]
    outs = kernel(args, attrs, None)
    return [TensorInfo(np.asarray(o).dtype, tuple(np.asarray(o).shape), np.asarray(o))
            for o in outs]


def _folding(kernel):
    """Decorate an inference rule so it constant-folds when all input values are known.

    The plain rule runs first: folding is skipped when it predicts an output larger
    than the limit (ConstantOfShape, Expand, Range ... can make big tensors from tiny
    inputs, and materialising those belongs to the executor, not to inference).
    """
    def wrap(infer):
        def run(attrs, inputs):
            result = infer(attrs, inputs)
            if all(_prod(t.shape) is None or _prod(t.shape) <= _FOLD_LIMIT for t in result):
                folded = _fold(kernel, attrs, inputs)
                if folded is not None:
                    return folded
            return result
        run.__doc__ = infer.__doc__
        return run
    return wrap


def _prod(dims):
    if dims is None or any(d is None for d in dims):
        return None
    return int(math.prod(dims))


# --------------------------------------------------------------------------- Reshape

def _reshape_target(in_shape, target, allowzero):
    """Resolve 0 (copy) and -1 (infer) entries of a Reshape target; None dims if unknown."""
    if target.count(-1) > 1 or any(d < -1 for d in target):
        raise ShapeError(f"Reshape: target {list(target)} may hold one -1 and no other "
                         f"negative value")
    if allowzero and 0 in target and -1 in target:
        return _empty_reshape_target(in_shape, target)
    out = []
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            if in_shape is not None and i >= len(in_shape):
                raise ShapeError(f"Reshape: target {list(target)} copies input dim {i} "
                                 f"(a 0) but the input has rank {len(in_shape)}")
            out.append(None if in_shape is None else in_shape[i])
        else:
            out.append(d)
    if -1 in out:
        known = [d for d in out if d != -1]
        total = _prod(in_shape) if in_shape is not None else None
        if total is None or any(d is None for d in known):
            out[out.index(-1)] = None
        else:
            rest = math.prod(known)
            if rest == 0:
                raise ShapeError(f"Reshape: cannot infer the -1 in {list(target)}: the "
                                 f"other dims multiply to 0")
            if total % rest:
                raise ShapeError(f"Reshape: cannot reshape {list(in_shape)} ({total} "
                                 f"values) to {list(target)}: {total} is not a multiple "
                                 f"of {rest}")
            out[out.index(-1)] = total // rest
    return tuple(out)


def _empty_reshape_target(in_shape, target):
    """A target holding a literal 0 (allowzero=1) and a -1, which ONNX calls invalid: the
    output holds no values, so the -1 is any number. PyTorch's dynamo exporter writes
    such targets (view(batch, heads, -1, head_dim) on an empty batch), and onnxruntime
    takes the -1 as the input's non-zero dims' product over the target's other non-zero
    dims (an empty batch of (0, 4, 32) to [0, 8, -1, 16] gives [0, 8, 1, 16]): so does
    onegraph. None dims if unknown.

    Raises:
        ShapeError: the input holds values (the output would not), or the non-zero
            dims do not divide.
    """
    if in_shape is None or any(d is None for d in in_shape):
        return tuple(None if d == -1 else d for d in target)
    if math.prod(in_shape):
        raise ShapeError(f"Reshape: target {list(target)} has both 0 and -1 with "
                         f"allowzero=1, which only an empty input fits; {list(in_shape)} "
                         f"holds {math.prod(in_shape)} values")
    have = math.prod(d for d in in_shape if d)
    rest = math.prod(d for d in target if d not in (0, -1))
    if have % rest:
        raise ShapeError(f"Reshape: cannot infer the -1 in {list(target)} (allowzero=1) "
                         f"for the empty {list(in_shape)}: its non-zero dims multiply to "
                         f"{have}, not a multiple of {rest}")
    return tuple(have // rest if d == -1 else d for d in target)


def _check_reshape_size(in_shape, out_shape, target):
    """ShapeError unless a fully known input and output hold as many values."""
    total, want = _prod(in_shape), _prod(out_shape)
    if total is not None and want is not None and total != want:
        raise ShapeError(f"Reshape: cannot reshape {list(in_shape)} ({total} values) to "
                         f"{list(target)} ({want} values)")


def _reshape(inputs, attrs, ctx):
    """Reshape with ONNX 0 (copy dim unless allowzero) and -1 (inferred) entries."""
    x, shape = inputs
    _check_1d(shape, "Reshape", "shape")
    given = np.asarray(shape).tolist()
    target = given
    if 0 in target or any(d < 0 for d in target):
        target = list(_reshape_target(x.shape, [int(d) for d in given], attrs["allowzero"]))
    try:
        return (np.reshape(x, target),)
    except ValueError:  # numpy's words for a size mismatch; say it as inference does
        _check_reshape_size(x.shape, target, given)
        raise


@_folding(_reshape)
def _infer_reshape(attrs, inputs):
    """Output shape from the shape input's value, else rank from its length."""
    x, shape = inputs
    _check_1d_info(shape, "Reshape", "shape")
    if shape.value is not None:
        target = _ints(shape.value)
        out = _reshape_target(x.shape, target, attrs["allowzero"])
        _check_reshape_size(x.shape, out, target)
        return [TensorInfo(x.dtype, out)]
    n = _len1d(shape)
    return [TensorInfo(x.dtype, None if n is None else (None,) * n)]


# --------------------------------------------------------------------------- Flatten

def _flatten(inputs, attrs, ctx):
    """Collapse dims before and from `axis` into a 2-D matrix."""
    x = inputs[0]
    axis = _flatten_axis(attrs["axis"], x.ndim)
    return (x.reshape(int(math.prod(x.shape[:axis])), int(math.prod(x.shape[axis:]))),)


@_folding(_flatten)
def _infer_flatten(attrs, inputs):
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(x.dtype, (None, None))]
    axis = _flatten_axis(attrs["axis"], len(x.shape))
    return [TensorInfo(x.dtype, (_prod(x.shape[:axis]), _prod(x.shape[axis:])))]


def _flatten_axis(axis, rank):
    """Flatten's axis in [0, rank] (negative counts from the end).

    Raises:
        OpAttributeError: outside [-rank, rank].
    """
    if not -rank <= axis <= rank:
        raise OpAttributeError(f"Flatten: axis {axis} outside [{-rank}, {rank}] for a "
                               f"rank-{rank} input")
    return axis + rank if axis < 0 else axis


# --------------------------------------------------------------------------- Transpose

def _perm(attrs, rank):
    """Transpose's permutation of range(rank) (default: reversed).

    Raises:
        OpAttributeError: perm is not a permutation of the input's axes.
    """
    perm = attrs["perm"]
    if perm is None:
        return list(range(rank))[::-1]
    axes = [int(p) + rank if -rank <= int(p) < 0 else int(p) for p in perm]
    if sorted(axes) != list(range(rank)):
        raise OpAttributeError(f"Transpose: perm {list(perm)} is not a permutation of "
                               f"the {rank} axes of the input (each of 0..{rank - 1} "
                               "once)")
    return axes


def _transpose(inputs, attrs, ctx):
    """Permute axes; default reverses them."""
    x = inputs[0]
    perm = attrs["perm"]
    if perm is None:
        return (np.transpose(x),)
    try:
        return (np.transpose(x, perm),)
    except (ValueError, TypeError):  # numpy's words; say it as inference does
        _perm(attrs, x.ndim)
        raise


@_folding(_transpose)
def _infer_transpose(attrs, inputs):
    x = inputs[0]
    if x.shape is None:
        if attrs["perm"] is None:
            return [TensorInfo(x.dtype, None)]
        _perm(attrs, len(attrs["perm"]))
        return [TensorInfo(x.dtype, (None,) * len(attrs["perm"]))]
    return [TensorInfo(x.dtype, tuple(x.shape[p] for p in _perm(attrs, len(x.shape))))]


# --------------------------------------------------------------------------- Squeeze

def _axes_arg(inputs, attrs, pos, op, name="axes"):
    """Axes from the input at `pos` (opset >= 13) or the legacy `axes` attribute.

    Raises:
        ShapeError: the input has more than one dim (the spec's is 1-D; it would be read
            flattened).
    """
    if len(inputs) > pos and inputs[pos] is not None:
        if np.ndim(inputs[pos]) > 1:
            raise ShapeError(f"{op}: {name} must be a 1-D tensor, got shape "
                             f"{list(np.shape(inputs[pos]))}")
        return _ints(inputs[pos])
    return None if attrs.get("axes") is None else list(attrs["axes"])


def _unknown_axes_info(x, axes_info, per_axis: int) -> list:
    """Squeeze's (per_axis -1) or Unsqueeze's (+1) output when the axes input's values
    are not known while building: the rank is x's changed by per_axis for each axis,
    every dim unknown; nothing is known when x's rank or the axes' count is not."""
    n = _len1d(axes_info)
    if x.shape is None or n is None:
        return [TensorInfo(x.dtype, None)]
    return [TensorInfo(x.dtype, (None,) * (len(x.shape) + per_axis * n))]


def _squeeze(inputs, attrs, ctx):
    """Drop the given size-1 axes (all size-1 axes when none are given)."""
    x = inputs[0]
    axes = _axes_arg(inputs, attrs, 1, "Squeeze")
    if axes is None:
        return (np.squeeze(x),) if x.ndim else (x,)
    axes = tuple(_norm_axis(a, x.ndim, "Squeeze: ") for a in axes)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"Squeeze: axes {list(axes)} name an axis twice")
    for a in axes:
        if x.shape[a] != 1:
            raise ShapeError(f"Squeeze: axis {a} has size {x.shape[a]}, not 1 (input shape "
                             f"{list(x.shape)})")
    return (np.squeeze(x, axis=axes),)


@_folding(_squeeze)
def _infer_squeeze(attrs, inputs):
    x = inputs[0]
    axes_info = inputs[1] if len(inputs) > 1 else None
    if axes_info is not None and axes_info.value is None:
        return _unknown_axes_info(x, axes_info, -1)
    axes = (_ints(axes_info.value) if axes_info is not None
            else None if attrs.get("axes") is None else list(attrs["axes"]))
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    if axes is None:
        if any(d is None for d in x.shape):
            return [TensorInfo(x.dtype, None)]
        return [TensorInfo(x.dtype, tuple(d for d in x.shape if d != 1))]
    drop = {_norm_axis(a, len(x.shape)) for a in axes}
    for a in drop:
        if x.shape[a] not in (None, 1):
            raise ShapeError(f"Squeeze: axis {a} has size {x.shape[a]}, not 1")
    return [TensorInfo(x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in drop))]


# --------------------------------------------------------------------------- Unsqueeze

def _unsqueeze_shape(shape, axes):
    rank = len(shape) + len(axes)
    new = {_norm_axis(a, rank) for a in axes}
    if len(new) != len(axes):
        raise ShapeError("Unsqueeze: repeated axis")
    it = iter(shape)
    return tuple(1 if i in new else next(it) for i in range(rank))


def _unsqueeze(inputs, attrs, ctx):
    """Insert size-1 axes at the given output positions."""
    x = inputs[0]
    return (np.reshape(x, _unsqueeze_shape(x.shape, _axes_arg(inputs, attrs, 1,
                                                              "Unsqueeze"))),)


@_folding(_unsqueeze)
def _infer_unsqueeze(attrs, inputs):
    x = inputs[0]
    axes_info = inputs[1] if len(inputs) > 1 else None
    if axes_info is not None and axes_info.value is None:
        return _unknown_axes_info(x, axes_info, 1)
    axes = _ints(axes_info.value) if axes_info is not None else list(attrs["axes"] or [])
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    return [TensorInfo(x.dtype, _unsqueeze_shape(x.shape, axes))]


# --------------------------------------------------------------------------- Concat

def _concat(inputs, attrs, ctx):
    """Join inputs along `axis`."""
    arrays = [a for a in inputs if a is not None]
    _check_concat_dtypes([a.dtype for a in arrays])
    ranks = [a.ndim for a in arrays]
    if len(set(ranks)) > 1:
        raise ShapeError(f"Concat: inputs differ in rank: shapes "
                         f"{[list(a.shape) for a in arrays]}")
    return (np.concatenate(arrays, axis=_norm_axis(attrs["axis"], arrays[0].ndim)),)


def _check_concat_dtypes(dtypes) -> None:
    """Concat's inputs share one element type (numpy would promote int64 and float32
    to float64, and a shape built so reached Reshape as floats).

    Raises:
        ShapeError: two known dtypes differ.
    """
    known = [np.dtype(d) for d in dtypes if d is not None]
    if len(set(known)) > 1:
        raise ShapeError(f"Concat: inputs differ in dtype: {[str(d) for d in known]}")


@_folding(_concat)
def _infer_concat(attrs, inputs):
    present = [t for t in inputs if t is not None]
    _check_concat_dtypes([t.dtype for t in present])
    dtype = present[0].dtype
    shapes = [t.shape for t in present if t.shape is not None]
    if not shapes:
        return [TensorInfo(dtype, None)]
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        raise ShapeError("Concat: inputs differ in rank")
    axis = _norm_axis(attrs["axis"], rank, "Concat: ")
    out = []
    for i in range(rank):
        if i == axis:
            dims = [None if t.shape is None else t.shape[i] for t in present]
            out.append(None if None in dims else sum(dims))
        else:
            dims = {s[i] for s in shapes if s[i] is not None}
            if len(dims) > 1:
                raise ShapeError(f"Concat: dim {i} differs between inputs: {sorted(dims)}")
            out.append(dims.pop() if dims else None)
    return [TensorInfo(dtype, tuple(out))]


# --------------------------------------------------------------------------- Split

def _split_sizes(length, split, num_outputs):
    """Part lengths along the axis: explicit `split`, or num_outputs ceil-sized parts.

    Raises:
        ShapeError: neither is given.
        OpAttributeError: num_outputs is below 1.
    """
    if split is not None:
        return split
    if num_outputs is None:
        raise ShapeError("Split: need a `split` input or the `num_outputs` attribute")
    if num_outputs < 1:
        raise OpAttributeError(f"Split: num_outputs must be at least 1, got {num_outputs}")
    if length is None:
        return [None] * num_outputs
    part = -(-length // num_outputs)
    sizes = [part] * (length // part if part else num_outputs)
    if part and length % part:
        sizes.append(length % part)
    sizes += [0] * (num_outputs - len(sizes))
    return sizes


def _split_count(attrs):
    """Part count of an equal split: `num_outputs` (opset 18+) or, before opset 18,
    the number of outputs the node declares.

    Raises:
        OpAttributeError: num_outputs is given and below 1 or differs from the node's
            output count (the parts beyond it would be dropped, or outputs left without
            one).
    """
    declared = attrs.get(NUM_OUTPUTS)
    wanted = attrs["num_outputs"]
    if wanted is not None:
        if wanted < 1:
            raise OpAttributeError(f"Split: num_outputs must be at least 1, got {wanted}")
        if declared is not None and wanted != declared:
            raise OpAttributeError(f"Split: num_outputs is {wanted} but the node has "
                                   f"{declared} output(s)")
        return wanted
    return declared


def _check_split_source(has_split, attrs):
    """Split takes its sizes from a `split` input (or the pre-13 attribute) or equal
    parts from `num_outputs`, never both (the spec: "Either input 'split' or the
    attribute 'num_outputs' should be specified, but not both"; onnxruntime refuses).

    Raises:
        OpAttributeError: both are given (which one would win is a guess).
    """
    if has_split and attrs["num_outputs"] is not None:
        raise OpAttributeError(f"Split: give either the `split` sizes or the num_outputs "
                               f"attribute ({attrs['num_outputs']}), not both")


def _check_split_parts(sizes, attrs):
    """ShapeError unless there is one part per output the node declares."""
    declared = attrs.get(NUM_OUTPUTS)
    if declared is not None and len(sizes) != declared:
        raise ShapeError(f"Split: {len(sizes)} parts {list(sizes)} for the node's "
                         f"{declared} output(s)")


def _split(inputs, attrs, ctx):
    """Split along `axis` into given lengths or num_outputs near-equal parts."""
    x = inputs[0]
    axis = _norm_axis(attrs["axis"], x.ndim)
    split = _axes_arg(inputs, {"axes": attrs.get("split")}, 1, "Split", "split")
    _check_split_source(split is not None, attrs)
    sizes = _split_sizes(x.shape[axis], split, _split_count(attrs))
    if split is not None and min(split, default=0) < 0:
        raise ShapeError(f"Split: split sizes {list(split)} must not be negative")
    if sum(sizes) != x.shape[axis]:
        raise ShapeError(f"Split: parts {sizes} do not sum to {x.shape[axis]}")
    _check_split_parts(sizes, attrs)
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


@_folding(_split)
def _infer_split(attrs, inputs):
    x = inputs[0]
    split_info = inputs[1] if len(inputs) > 1 else None
    _check_split_source(split_info is not None or attrs.get("split") is not None, attrs)
    if split_info is not None and split_info.value is None:
        n = _len1d(split_info)
        if n is None:  # a sizes tensor of unknown length: one part per declared output
            n = attrs.get(NUM_OUTPUTS)
        if n is None:
            raise ShapeError("Split: number of outputs unknown")
        sizes = [None] * n
    else:
        split = (_ints(split_info.value) if split_info is not None
                 else None if attrs.get("split") is None else list(attrs["split"]))
        if split is None and _split_count(attrs) is None:
            # Equal split with no declared output count: nothing to infer from.
            return []
        length = None
        if x.shape is not None:
            length = x.shape[_norm_axis(attrs["axis"], len(x.shape))]
        sizes = _split_sizes(length, split, _split_count(attrs))
        # a -1 entry (TF1's "the rest", which og.split passes on) stays a -1 here,
        # which the graph builder reads as an unknown length; the kernel refuses it
        if split is not None and length is not None and min(split, default=0) >= 0 \
                and sum(split) != length:
            raise ShapeError(f"Split: parts {split} do not sum to {length}")
    _check_split_parts(sizes, attrs)
    if x.shape is None:
        return [TensorInfo(x.dtype, None) for _ in sizes]
    axis = _norm_axis(attrs["axis"], len(x.shape))
    return [TensorInfo(x.dtype, x.shape[:axis] + (s,) + x.shape[axis + 1:]) for s in sizes]


# --------------------------------------------------------------------------- Expand

def _expand_target(shape) -> tuple:
    """Expand's `shape` operand as a tuple of ints.

    Raises:
        ShapeError: it has a negative entry (numpy's "negative dimensions" before).
    """
    target = tuple(_ints(shape))
    if any(d < 0 for d in target):
        raise ShapeError(f"Expand: the shape {list(target)} has a negative dim")
    return target


def _expand(inputs, attrs, ctx):
    """Broadcast the input against a target shape (bidirectionally, like numpy)."""
    x, shape = inputs
    _check_1d(shape, "Expand", "shape", scalar_too=True)
    target = _expand_target(shape)
    out = broadcast_shape(x.shape, target, where="Expand: ")
    check_result_size("Expand", "the result", out, x.itemsize, beyond=x.nbytes,
                      cause=f"shape {list(target)}")
    return (np.array(np.broadcast_to(x, out)),)


@_folding(_expand)
def _infer_expand(attrs, inputs):
    x, shape = inputs
    _check_1d_info(shape, "Expand", "shape", scalar_too=True)
    if shape.value is not None:
        return [TensorInfo(x.dtype, broadcast_shape(x.shape, _expand_target(shape.value),
                                                    where="Expand: "))]
    n = _len1d(shape)
    if n is None or x.shape is None:
        return [TensorInfo(x.dtype, None)]
    return [TensorInfo(x.dtype, (None,) * max(n, len(x.shape)))]


# --------------------------------------------------------------------------- Tile

def _tile(inputs, attrs, ctx):
    """Repeat the input `repeats[i]` times along each axis."""
    x, repeats = inputs
    _check_1d(repeats, "Tile", "repeats")
    reps = _tile_repeats(_ints(repeats), x.ndim)
    return (np.tile(x, reps),)


def _tile_repeats(reps, rank):
    """Tile's repeats, checked: one non-negative count per input dim.

    Raises:
        ShapeError: otherwise.
    """
    if len(reps) != rank or any(r < 0 for r in reps):
        raise ShapeError(f"Tile: repeats {reps} must hold one non-negative count per "
                         f"dim of the rank-{rank} input")
    return reps


@_folding(_tile)
def _infer_tile(attrs, inputs):
    x, repeats = inputs
    _check_1d_info(repeats, "Tile", "repeats")
    if x.shape is None:
        n = _len1d(repeats)
        return [TensorInfo(x.dtype, None if n is None else (None,) * n)]
    if repeats.value is None:
        n = _len1d(repeats)
        if n is not None:
            _tile_repeats([0] * n, len(x.shape))
        return [TensorInfo(x.dtype, (None,) * len(x.shape))]
    reps = _tile_repeats(_ints(repeats.value), len(x.shape))
    return [TensorInfo(x.dtype, tuple(None if d is None else d * r
                                      for d, r in zip(x.shape, reps)))]


# --------------------------------------------------------------------------- Pad

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}


def _full_pads(rank, pads, axes):
    """Per-axis (begin, end) pairs for all axes from ONNX pads + optional axes."""
    axes = list(range(rank)) if axes is None else [_norm_axis(a, rank) for a in axes]
    if len(pads) != 2 * len(axes):
        raise ShapeError(f"Pad: {len(pads)} pads for {len(axes)} axes")
    begin, end = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        begin[a], end[a] = pads[i], pads[i + len(axes)]
    return begin, end


def _pad(inputs, attrs, ctx):
    """Pad (or crop, for negative pads) in constant/reflect/edge/wrap mode."""
    _check_1d(inputs[1], "Pad", "pads")
    x, pads = inputs[0], _ints(inputs[1])
    value = inputs[2] if len(inputs) > 2 else None
    if value is not None and np.size(value) != 1:
        raise ShapeError(f"Pad: constant_value must be a scalar (one element), got shape "
                         f"{list(np.shape(value))}")
    axes = None
    if len(inputs) > 3 and inputs[3] is not None:
        _check_1d(inputs[3], "Pad", "axes")
        axes = _ints(inputs[3])
    begin, end = _full_pads(x.ndim, pads, axes)
    for i, (d, b, e) in enumerate(zip(x.shape, begin, end)):
        if d + b + e < 0:
            raise ShapeError(f"Pad: pads {b} and {e} on axis {i} of size {d} leave "
                             f"{d + b + e} elements")
    _check_pad_size(x.shape, x.dtype, begin, end, pads)
    mode = attrs["mode"]
    if mode not in _PAD_MODES:
        raise ShapeError(f"Pad: unknown mode {mode!r}")
    if x.ndim == 0:  # no axes, no pads
        return (np.array(x),)
    widths = [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    if mode == "constant":
        return (_pad_constant(x, begin, end, value),)
    # reflect/edge/wrap copy values from the border that remains: crop, then pad
    x = x[tuple(slice(-min(b, 0), x.shape[i] + min(e, 0))
                for i, (b, e) in enumerate(zip(begin, end)))]
    for i, (b, e) in enumerate(widths):
        # reflect mirrors without repeating the border: at most dim - 1 values a side
        # (numpy would reflect again and again); edge and wrap need one value to copy
        room = x.shape[i] - 1 if mode == "reflect" else (math.inf if x.shape[i] else 0)
        if max(b, e) > max(room, 0):
            raise ShapeError(f"Pad: {mode} padding of {max(b, e)} on axis {i} of size "
                             f"{x.shape[i]} (at most {max(room, 0)})")
    if mode == "wrap":
        # output index j copies input j mod n, however many turns the pads take (numpy
        # before 2.0 gets pads longer than the axis wrong on both sides: (5, 1) on 3)
        for i, (b, e) in enumerate(widths):
            if b or e:
                x = np.take(x, np.arange(-b, x.shape[i] + e) % x.shape[i], axis=i)
        return (np.ascontiguousarray(x),)
    return (np.pad(x, widths, mode=_PAD_MODES[mode]),)


# The largest dimension and element count numpy can represent (beyond them it refuses
# in its own words: "Maximum allowed dimension exceeded" / "... size exceeded").
_NUMPY_MAX_ELEMENTS = np.iinfo(np.intp).max


def _check_pad_size(shape, dtype, begin, end, pads) -> None:
    """Refuse pads that give Pad an output numpy cannot even represent (a dim or an
    element count past 2**63 - 1: pads of 2**63 - 1), before anything is made. Outputs
    numpy can represent but not allocate (pads of 2**48) stay its MemoryError or
    "array is too big", which the Session reports as ResourceExhaustedError with the
    node's input shapes (tests/train/test_out_of_memory.py exercises that path with
    Pad). Dims must be known.

    Raises:
        ResourceExhaustedError: naming the pads and the output shape.
    """
    out = [int(d) + int(b) + int(e) for d, b, e in zip(shape, begin, end)]
    if max(out, default=0) > _NUMPY_MAX_ELEMENTS or math.prod(out) > _NUMPY_MAX_ELEMENTS:
        raise ResourceExhaustedError(
            f"Pad: pads {[int(p) for p in pads]} make the output of shape {out}, "
            f"beyond the {_NUMPY_MAX_ELEMENTS:,} elements an array can hold")


def _pad_constant(x, begin, end, value):
    """Constant-mode Pad without materialising the padding: output position j of an
    axis holds x[j - begin] where that is inside x, the fill elsewhere. (The spec's
    pad-then-crop: a crop longer than the axis eats into the other side's pad, and a
    huge pad cancelled by a huge negative one costs nothing.)"""
    fill = 0 if value is None else np.asarray(value).item()
    shape = tuple(d + b + e for d, b, e in zip(x.shape, begin, end))
    y = np.full(shape, fill, dtype=x.dtype)
    src, dst = [], []
    for d, b, n in zip(x.shape, begin, shape):
        first_src, first_dst = max(-b, 0), max(b, 0)
        count = max(0, min(d - first_src, n - first_dst))
        src.append(slice(first_src, first_src + count))
        dst.append(slice(first_dst, first_dst + count))
    y[tuple(dst)] = x[tuple(src)]
    return y


@_folding(_pad)
def _infer_pad(attrs, inputs):
    x, pads = inputs[0], inputs[1]
    axes = inputs[3] if len(inputs) > 3 else None
    _check_1d_info(pads, "Pad", "pads")
    _check_1d_info(axes, "Pad", "axes")
    value = inputs[2] if len(inputs) > 2 else None
    if value is not None and _prod(value.shape) not in (None, 1):
        raise ShapeError(f"Pad: constant_value must be a scalar (one element), got shape "
                         f"{list(value.shape)}")
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    if pads.value is None or (axes is not None and axes.value is None):
        return [TensorInfo(x.dtype, (None,) * len(x.shape))]
    begin, end = _full_pads(len(x.shape), _ints(pads.value),
                            None if axes is None else _ints(axes.value))
    for i, (d, b, e) in enumerate(zip(x.shape, begin, end)):
        if d is not None and d + b + e < 0:  # as the kernel says
            raise ShapeError(f"Pad: pads {b} and {e} on axis {i} of size {d} leave "
                             f"{d + b + e} elements")
    if x.dtype is not None and all(d is not None for d in x.shape):
        _check_pad_size(x.shape, x.dtype, begin, end, _ints(pads.value))
    return [TensorInfo(x.dtype, tuple(None if d is None else d + b + e
                                      for d, b, e in zip(x.shape, begin, end)))]


# --------------------------------------------------------------------------- Shape, Size

def _shape_range(rank, attrs):
    start, end = attrs["start"], attrs["end"]
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = rank if end is None else end
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return start, max(end, start)


def _shape(inputs, attrs, ctx):
    """The input's shape (dims start:end) as int64."""
    x = np.asarray(inputs[0])
    start, end = _shape_range(x.ndim, attrs)
    return (np.array(x.shape[start:end], dtype=np.int64),)


def _infer_shape(attrs, inputs):
    """1-D int64; its value is known when the selected dims are."""
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(np.dtype(np.int64), (None,))]
    start, end = _shape_range(len(x.shape), attrs)
    dims = x.shape[start:end]
    value = None if None in dims else np.array(dims, dtype=np.int64)
    return [TensorInfo(np.dtype(np.int64), (len(dims),), value)]


def _size(inputs, attrs, ctx):
    """Number of elements, as an int64 scalar."""
    return (np.array(np.asarray(inputs[0]).size, dtype=np.int64),)


def _infer_size(attrs, inputs):
    total = _prod(inputs[0].shape)
    value = None if total is None else np.array(total, dtype=np.int64)
    return [TensorInfo(np.dtype(np.int64), (), value)]


# --------------------------------------------------------------------------- constants

def _fill_value(attrs):
    value = attrs["value"]
    if value is None:
        return np.zeros((), dtype=np.float32)
    return np.asarray(value).reshape(-1)[0]


def _check_fill_value(attrs):
    """ConstantOfShape's `value` must hold one element (onnxruntime refuses others)."""
    value = attrs.get("value")
    if value is not None and np.size(value) != 1:
        return (f"attribute 'value' must be a one-element tensor, got shape "
                f"{list(np.shape(value))}")
    return None


def _constant_of_shape(inputs, attrs, ctx):
    """A tensor of the given shape filled with the `value` attribute's one element."""
    _check_1d(inputs[0], "ConstantOfShape", "input (the shape)")
    fill = _fill_value(attrs)
    dims = tuple(_ints(inputs[0]))
    if any(d < 0 for d in dims):
        raise ShapeError(f"ConstantOfShape: the shape {list(dims)} has a negative dim")
    check_result_size("ConstantOfShape", "the result", dims, fill.dtype.itemsize,
                      cause=f"input {list(dims)}")
    return (np.full(dims, fill, dtype=fill.dtype),)


@_folding(_constant_of_shape)
def _infer_constant_of_shape(attrs, inputs):
    dtype = _fill_value(attrs).dtype
    shape = inputs[0]
    _check_1d_info(shape, "ConstantOfShape", "input (the shape)")
    if shape.value is not None:
        return [TensorInfo(dtype, tuple(_ints(shape.value)))]
    n = _len1d(shape)
    return [TensorInfo(dtype, None if n is None else (None,) * n)]


_CONSTANT_VALUE_ATTRS = ("value", "value_float", "value_floats", "value_int",
                         "value_ints", "value_string", "value_strings")


def _check_constant_attrs(attrs):
    """Constant holds exactly one of its value attributes."""
    given = [k for k in _CONSTANT_VALUE_ATTRS if attrs.get(k) is not None]
    if len(given) != 1:
        return (f"exactly one of the attributes {', '.join(_CONSTANT_VALUE_ATTRS)} "
                f"must be given, got {given or 'none'}")
    return None


def _constant_value(attrs):
    problem = _check_constant_attrs(attrs)
    if problem:
        raise ShapeError(f"Constant: {problem}")
    given = [k for k in _CONSTANT_VALUE_ATTRS if attrs.get(k) is not None]
    key = given[0]
    v = attrs[key]
    if key == "value":
        return np.asarray(v)
    if key in ("value_float", "value_floats"):
        return np.array(v, dtype=np.float32)
    if key in ("value_int", "value_ints"):
        return np.array(v, dtype=np.int64)
    return np.array(v, dtype=object)


def _constant(inputs, attrs, ctx):
    """The tensor held by whichever value_* attribute is set."""
    return (_constant_value(attrs).copy(),)


def _infer_constant(attrs, inputs):
    v = _constant_value(attrs)
    return [TensorInfo(v.dtype, tuple(v.shape), v)]


# --------------------------------------------------------------------------- Range

def _range(inputs, attrs, ctx):
    """start + i*delta for i < max(ceil((limit-start)/delta), 0), in the input dtype."""
    start, limit, delta = (_scalar(a, name) for a, name in
                           zip(inputs, ("start", "limit", "delta")))
    dtype = start.dtype
    n = _range_length(start, limit, delta)
    # (the values are made in int64 or float64 first)
    check_result_size("Range", "the result", (n,), 8,
                      cause=f"start {start.item()}, limit {limit.item()}, delta {delta.item()}")
    if dtype.kind in "iu":
        return (np.arange(n, dtype=np.int64).astype(dtype) * dtype.type(delta)
                + dtype.type(start),)
    # Floats: values in float64 (covers the float32 stash precision too), then cast.
    return ((float(start) + np.arange(n, dtype=np.float64) * float(delta)).astype(dtype),)


def _scalar(value, name):
    """A Range operand: a scalar, or (as onnxruntime also accepts) a 1-element tensor."""
    a = np.asarray(value)
    if a.size != 1:
        raise ShapeError(f"Range: {name} must be a scalar, got shape {list(a.shape)}")
    return a.reshape(())


def _range_length(start, limit, delta):
    if not delta:
        raise ShapeError("Range: delta is 0")
    if np.asarray(start).dtype.kind in "iu":
        return max(-(-(int(limit) - int(start)) // int(delta)), 0)
    steps = (float(limit) - float(start)) / float(delta)
    if math.isnan(steps) or steps == math.inf:
        raise ShapeError(f"Range: start {float(start)}, limit {float(limit)} and delta "
                         f"{float(delta)} give {'no' if math.isnan(steps) else 'no finite'} "
                         "length")
    return max(int(math.ceil(steps)), 0) if steps > 0 else 0


@_folding(_range)
def _infer_range(attrs, inputs):
    """Length known from the three scalar values, else unknown."""
    if all(_known(t) for t in inputs):
        return [TensorInfo(inputs[0].dtype, (_range_length(*(t.value for t in inputs)),))]
    return [TensorInfo(inputs[0].dtype, (None,))]


# --------------------------------------------------------------------------- Identity

def _identity(inputs, attrs, ctx):
    """Pass the input (tensor, sequence or optional) through unchanged."""
    return (inputs[0],)


@_folding(_identity)
def _infer_identity(attrs, inputs):
    return [inputs[0]]


# --------------------------------------------------------------------------- Dropout

def _dropout(inputs, attrs, ctx):
    """Identity at inference: the input itself, not a copy (like Identity); with
    training_mode true, zero with prob `ratio` and rescale. The all-true inference
    mask is only built when the node declares the mask output."""
    x = inputs[0]
    for k, what in ((1, "ratio"), (2, "training_mode")):
        if len(inputs) > k and inputs[k] is not None and np.size(inputs[k]) != 1:
            raise ShapeError(f"Dropout: {what} must be a scalar, got shape "
                             f"{list(np.shape(inputs[k]))}")
    ratio = inputs[1] if len(inputs) > 1 and inputs[1] is not None else attrs["ratio"]
    ratio = float(np.asarray(ratio).reshape(-1)[0])
    training = len(inputs) > 2 and inputs[2] is not None and bool(
        np.asarray(inputs[2]).reshape(-1)[0])
    if not training or ratio == 0:
        declared = attrs.get(NUM_OUTPUTS)
        if declared is not None and declared < 2:
            return (x,)
        return (x, np.ones(np.shape(x), dtype=bool))
    if not 0 <= ratio < 1:
        raise OpAttributeError(f"Dropout: ratio must be in [0, 1) in training mode, "
                               f"got {ratio}")
    seed = attrs["seed"]
    if seed is not None:
        # Legacy MT19937 stream so that a given seed reproduces the ONNX test data.
        # (any int64 seed is valid ONNX; RandomState takes [0, 2**32): wrap it there)
        draws = np.random.RandomState(int(seed) % (1 << 32)).uniform(0.0, 1.0, x.shape)
    else:
        draws = (ctx.rng if ctx is not None else np.random.default_rng()).random(x.shape)
    mask = draws >= ratio
    return ((mask * x * (1.0 / (1.0 - ratio))).astype(x.dtype), mask)


def _infer_dropout(attrs, inputs):
    x = inputs[0]
    return [TensorInfo(x.dtype, x.shape), TensorInfo(np.dtype(bool), x.shape)]


# --------------------------------------------------------------------------- DepthToSpace

_BLOCK_MODES = ("DCR", "CRD")


def _block_args(op, attrs, shape):
    """DepthToSpace's and SpaceToDepth's blocksize, checked with the input's shape (a
    tuple with None for unknown dims, or None).

    Raises:
        OpAttributeError: blocksize is below 1, or mode is not DCR or CRD.
        ShapeError: the input is not 4-D, or (DepthToSpace) its channels are not a
            multiple of blocksize**2, or (SpaceToDepth) its height or width not of
            blocksize.
    """
    b = int(attrs["blocksize"])
    if b < 1:
        raise OpAttributeError(f"{op}: blocksize must be at least 1, got {b}")
    if attrs.get("mode", "DCR") not in _BLOCK_MODES:
        raise OpAttributeError(f"{op}: mode must be DCR or CRD, got {attrs['mode']!r}")
    if shape is None:
        return b
    if len(shape) != 4:
        raise ShapeError(f"{op}: input must be 4-D (N, C, H, W), got shape {list(shape)}")
    if op == "DepthToSpace":
        c = shape[1]
        if c is not None and c % (b * b):
            raise ShapeError(f"DepthToSpace: {c} channels not divisible by blocksize**2 = "
                             f"{b * b}")
    else:
        for d in shape[2:]:
            if d is not None and d % b:
                raise ShapeError(f"SpaceToDepth: spatial dim {d} not divisible by "
                                 f"blocksize {b} (input shape {list(shape)})")
    return b


def _depth_to_space(inputs, attrs, ctx):
    """Move channel blocks into b x b spatial blocks (DCR or CRD ordering)."""
    x = inputs[0]
    b = _block_args("DepthToSpace", attrs, x.shape)
    n, c, h, w = x.shape
    if attrs["mode"] == "CRD":
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return (y.reshape(n, c // (b * b), h * b, w * b),)


def _infer_depth_to_space(attrs, inputs):
    x = inputs[0]
    b = _block_args("DepthToSpace", attrs, x.shape)
    if x.shape is None:
        return [TensorInfo(x.dtype, (None,) * 4)]
    n, c, h, w = x.shape
    return [TensorInfo(x.dtype, (n, None if c is None else c // (b * b),
                                 None if h is None else h * b, None if w is None else w * b))]


def _space_to_depth(inputs, attrs, ctx):
    """Move b x b spatial blocks into channels (DCR or CRD ordering)."""
    x = inputs[0]
    b = _block_args("SpaceToDepth", attrs, x.shape)
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b)
    if attrs["mode"] == "CRD":
        y = y.transpose(0, 1, 3, 5, 2, 4)
    else:
        y = y.transpose(0, 3, 5, 1, 2, 4)
    return (y.reshape(n, c * b * b, h // b, w // b),)


def _infer_space_to_depth(attrs, inputs):
    x = inputs[0]
    b = _block_args("SpaceToDepth", attrs, x.shape)
    if x.shape is None:
        return [TensorInfo(x.dtype, (None,) * 4)]
    n, c, h, w = x.shape
    return [TensorInfo(x.dtype, (n, None if c is None else c * b * b,
                                 None if h is None else h // b, None if w is None else w // b))]


# --------------------------------------------------------------------------- Trilu

def _clamp_diagonal(k, shape):
    """Trilu's diagonal offset k brought into [-(rows + cols), rows + cols]: any k
    beyond either end keeps all or none of the matrix, as the clamped one does, and
    numpy's triu/tril overflow on an int64 k near its limits (they negate k and add
    the column count in C longs). Raises nothing."""
    bound = shape[-2] + shape[-1]
    return min(max(k, -bound), bound)


def _trilu(inputs, attrs, ctx):
    """Keep the upper (or lower) triangle of the last two dims, offset by k."""
    x = inputs[0]
    if np.ndim(x) < 2:
        raise ShapeError(f"Trilu: input of rank {np.ndim(x)}; it needs at least 2")
    k = 0
    if len(inputs) > 1 and inputs[1] is not None:
        given = np.asarray(inputs[1])
        # a scalar per the spec; a one-element 1-D k too, as onnxruntime takes it
        if given.size != 1 or given.ndim > 1 or given.dtype.kind not in "iu":
            raise ShapeError(f"Trilu: k must be an integer scalar, got "
                             f"{given.dtype} of shape {list(given.shape)}")
        k = int(given.reshape(-1)[0])
    return ((np.triu if attrs["upper"] else np.tril)(x, _clamp_diagonal(k, x.shape)),)


# --------------------------------------------------------------------------- Resize

def _round_half_up(v):
    return int(math.floor(v + 0.5))


def _resize_plan(in_shape, scales, sizes, roi, attrs):
    """Per-axis (out_len, scale, roi_start, roi_end) for every axis of the input.
    `scales` and `sizes` are None when not given (an empty tensor means not given).

    Raises:
        ShapeError: both or neither of scales and sizes are given, either has the wrong
            length, a scale is not finite and above 0, an output dim is negative, or
            (tf_crop_and_resize) roi does not hold 2 values per axis.
    """
    _check_resize_target(scales, sizes)
    rank = len(in_shape)
    axes = (list(range(rank)) if attrs["axes"] is None
            else [_norm_axis(a, rank, "Resize: axes: ") for a in attrs["axes"]])
    for name, given in (("sizes", sizes), ("scales", scales)):
        if given is not None and np.size(given) != len(axes):
            what = (f"the input's rank {rank}" if attrs["axes"] is None
                    else f"the {len(axes)} axes {list(attrs['axes'])}")
            raise ShapeError(f"Resize: {name} has {np.size(given)} entries; it needs one "
                             f"per axis, as many as {what}")
    out = list(in_shape)
    scale = [1.0] * rank
    if sizes is not None:
        sizes = _ints(sizes)
        policy = attrs["keep_aspect_ratio_policy"]
        # an empty axis has no scale; it stays empty (any other size is refused)
        if policy == "stretch":
            for a, s in zip(axes, sizes):
                out[a], scale[a] = s, s / in_shape[a] if in_shape[a] else 1.0
        else:
            ratios = [s / in_shape[a] for a, s in zip(axes, sizes) if in_shape[a]] or [1.0]
            common = min(ratios) if policy == "not_larger" else max(ratios)
            for a in axes:
                out[a], scale[a] = _round_half_up(common * in_shape[a]), common
    else:
        # the product in float32, as onnxruntime computes it (and as PyTorch's
        # floor(size * scale_factor) comes out): 5 * float32(1.8) is 9, not 8.99999
        values = np.asarray(scales, dtype=np.float32).reshape(-1)
        # a scale of 0 (which would make an empty axis) is outside the spec ("takes
        # value greater than 0"); onnxruntime refuses it
        if not np.all(np.isfinite(values)) or np.any(values <= 0):
            raise ShapeError(f"Resize: scales must be finite and greater than 0, got "
                             f"{values.tolist()}")
        for a, s in zip(axes, values):
            out[a], scale[a] = int(math.floor(np.float32(in_shape[a]) * s)), float(s)
    if any(d < 0 for d in out):
        raise ShapeError(f"Resize: output shape {out} of input {list(in_shape)} has a "
                         "negative dimension (sizes must not be negative)")
    starts, ends = [0.0] * rank, [1.0] * rank
    # roi only counts for tf_crop_and_resize (onnxruntime ignores it otherwise)
    if roi is not None and np.asarray(roi).size and \
            attrs["coordinate_transformation_mode"] == "tf_crop_and_resize":
        r = np.asarray(roi, dtype=np.float64).reshape(-1)
        if r.size != 2 * len(axes):
            what = (f"rank {rank}" if attrs["axes"] is None
                    else f"the {len(axes)} axes {list(attrs['axes'])}")
            raise ShapeError(f"Resize: roi has {r.size} values; it needs 2 x {len(axes)} "
                             f"(starts then ends, one per axis of {what})")
        if not np.isfinite(r).all():
            # a NaN coordinate became index -2**63 in the interpolation taps
            raise ShapeError(f"Resize: roi {r.tolist()} holds a value that is not finite")
        for i, a in enumerate(axes):
            starts[a], ends[a] = float(r[i]), float(r[i + len(axes)])
    return out, scale, starts, ends


def _check_resize_target(scales, sizes):
    """Resize's output is given by exactly one of `scales` and `sizes` (None: not
    given; an empty tensor must be turned into None first, it means "not given").

    Raises:
        ShapeError: both are given (the spec: "Only one of 'scales' and 'sizes' can be
            specified"; onnxruntime refuses, where onegraph used to take sizes), or
            neither.
    """
    if scales is not None and sizes is not None:
        raise ShapeError(f"Resize: give either scales or sizes, not both (scales "
                         f"{np.asarray(scales).reshape(-1).tolist()}, sizes "
                         f"{np.asarray(sizes).reshape(-1).tolist()}); an empty tensor "
                         f"stands for the one not given")
    if scales is None and sizes is None:
        raise ShapeError("Resize: needs scales or sizes (a non-empty tensor)")


def _source_coords(out_len, in_len, scale, start, end, mode):
    """Map output indices to (fractional) input coordinates per coordinate mode."""
    x = np.arange(out_len, dtype=np.float64)
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = out_len / (scale * in_len)
        offset = in_len / 2 * (1 - adjustment)
        return offset + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else np.zeros_like(x)
    # length_resized in align_corners and tf_crop_and_resize is the output's (whole)
    # length, as the spec's text defines it and onnxruntime and PyTorch's
    # interpolate(align_corners=True) compute it; the ONNX reference uses the
    # fractional in_len * scale when scales are given (its two downsampling
    # align_corners node tests expect that: docs/onnx_coverage.md)
    if mode == "align_corners":
        return x * (in_len - 1) / (out_len - 1) if out_len > 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":  # Resize-11/12's (TF's legacy nearest resize)
        return (x + 0.5) / scale
    if mode == "tf_crop_and_resize":
        if out_len > 1:
            return start * (in_len - 1) + x * (end - start) * (in_len - 1) / (out_len - 1)
        return np.full_like(x, 0.5 * (start + end) * (in_len - 1))
    raise ShapeError(f"Resize: unknown coordinate_transformation_mode {mode!r}")


# Source coordinates that are whole or half pixels in exact arithmetic can come out of
# the float64 formulas an ulp off (half_pixel_symmetric at scale 0.5 over 9 pixels gives
# 1.0000000000000002 for 1), and floor/ceil/round then jump a pixel. Within this relative
# distance a coordinate is taken to be the half-integer it approximates; a float32 scale's
# own rounding (3 / 0.33333334 = 8.99999982) moves coordinates far more and is kept.
_NEAREST_SNAP = 1e-9


def _nearest_index(coord, in_len, nearest_mode):
    """Input index per output for Resize mode nearest, by ONNX's nearest_mode."""
    halves = np.round(coord * 2) / 2
    near = np.abs(coord - halves) <= _NEAREST_SNAP * np.maximum(1.0, np.abs(coord))
    coord = np.where(near, halves, coord)
    if nearest_mode == "round_prefer_floor":
        idx = np.ceil(coord - 0.5)
    elif nearest_mode == "round_prefer_ceil":
        idx = np.floor(coord + 0.5)
    elif nearest_mode == "floor":
        idx = np.floor(coord)
    elif nearest_mode == "ceil":
        idx = np.ceil(coord)
    else:
        raise ShapeError(f"Resize: unknown nearest_mode {nearest_mode!r}")
    return np.clip(idx, 0, in_len - 1).astype(np.int64)


_RESIZE_CHOICES = {
    "mode": ("nearest", "linear", "cubic"),
    # tf_half_pixel_for_nn left the spec at opset 13; Resize-11/12 models still use it,
    # onnxruntime runs it, and the exporter rewrites it (convert/onnx_export.py)
    "coordinate_transformation_mode": (
        "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
        "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn"),
    "nearest_mode": ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"),
    "keep_aspect_ratio_policy": ("stretch", "not_larger", "not_smaller"),
}


def _check_resize_attrs(attrs):
    """Resize's string attributes hold one of the values the spec lists."""
    for name, allowed in _RESIZE_CHOICES.items():
        value = attrs.get(name)
        if value is not None and value not in allowed:
            return f"{name} must be one of {', '.join(allowed)}; got {value!r}"
    return None


def _cubic(d, a):
    d = np.abs(d)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _taps(coord, in_len, scale, attrs):
    """Input indices (out, K) and weights (out, K) of the linear/cubic filter per output."""
    cubic = attrs["mode"] == "cubic"
    support = 2.0 if cubic else 1.0
    # Antialiasing stretches the filter by 1/scale when downscaling.
    stretch = 1.0 / scale if attrs["antialias"] and scale < 1 else 1.0
    radius = support * stretch
    if stretch == 1.0:
        # floor(coord) and the next index (linear), floor(coord) - 1 .. floor(coord) + 2
        # (cubic): one more tap to the right would always weigh 0, adding nothing but
        # a third (a fifth) to the gather path's work.
        lo = np.floor(coord - radius) + 1
        k = int(2 * support)
    else:
        lo = np.ceil(coord - radius)
        k = int(math.ceil(2 * radius)) + 1
    idx = lo[:, None] + np.arange(k)[None, :]
    dist = (idx - coord[:, None]) / stretch
    if cubic:
        w = _cubic(dist, attrs["cubic_coeff_a"])
    else:
        w = np.maximum(0.0, 1.0 - np.abs(dist))
    inside = (idx >= 0) & (idx <= in_len - 1)
    if attrs["exclude_outside"]:
        w = np.where(inside, w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    w = w / np.where(total == 0, 1.0, total)
    return np.clip(idx, 0, in_len - 1).astype(np.int64), w


# Linear/cubic resizing along an axis of at most this many input values is a GEMM with
# the dense (out, in) interpolation matrix: in_len / taps times the multiplies of a
# gather per tap, but BLAS. Measured, float32, dense against gather: 21x28x28 x8
# (LR-ASPP's head) 1.0 vs 12.5 ms, 64x56x56 x2 2.1 vs 10.7, 3x512x512 x2 30 vs 50;
# 3x1024x1024 x2 176 vs 140 and x0.5 35 vs 11 (longer axes gather).
_RESIZE_DENSE_MAX = 512
# ... and while the matrix stays small: a long output axis (500 -> 400,000) would make
# it gigabytes where the gather needs the output alone.
_RESIZE_DENSE_CELLS = 1 << 21


def _resize_axis_gemm(y, axis, idx, w, in_len):
    """Resize y along `axis` by the interpolation taps (idx, w) (out, K), as one GEMM
    with the dense matrix R[o, i] = sum of the weights of output o's taps at i."""
    out_len = idx.shape[0]
    r = np.zeros((out_len, in_len))
    np.add.at(r, (np.repeat(np.arange(out_len), idx.shape[1]), idx.reshape(-1)),
              w.reshape(-1))
    r = r.astype(y.dtype)
    shape = y.shape
    pre, post = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
    y3 = np.ascontiguousarray(y).reshape(pre, in_len, post)
    if post == 1:
        out = np.matmul(y3.reshape(pre, in_len), r.T)
    else:
        out = np.matmul(r, y3)
    return out.reshape(shape[:axis] + (out_len,) + shape[axis + 1:])


def _onnxruntime_coords(out_len, in_len, scale, start, end, ctm):
    """Source coordinates as onnxruntime computes them, in float32 (`_source_coords`
    works in float64). Which input a tap reads can differ where a coordinate is within
    a float32 rounding of a whole pixel; for non-finite data that decides whether a
    NaN/inf is read (with a weight ~1e-7 or 0), so the non-finite path uses these."""
    f = np.float32
    x = np.arange(out_len, dtype=f)
    s, n, m = f(scale), f(in_len), f(out_len)
    half = f(0.5)
    with np.errstate(all="ignore"):
        if ctm == "asymmetric":
            c = x / s
        elif ctm == "pytorch_half_pixel":
            c = (x + half) / s - half if out_len > 1 else np.zeros_like(x)
        elif ctm == "tf_half_pixel_for_nn":
            c = (x + half) / s
        elif ctm == "align_corners":
            c = x * (n - 1) / (m - 1) if out_len > 1 else np.zeros_like(x)
        elif ctm == "tf_crop_and_resize":
            a, b = f(start), f(end)
            if out_len > 1:
                c = a * (n - 1) + (x * (b - a) * (n - 1)) / (m - 1)
            else:
                c = np.full_like(x, 0.5 * float(a + b) * float(n - 1))
        elif ctm == "half_pixel_symmetric":
            adjustment = m / (s * n)
            offset = (n / 2) * (1 - adjustment)
            c = (float(offset) + (x.astype(np.float64) + 0.5) / float(s) - 0.5).astype(f)
        else:  # half_pixel
            c = (x + half) / s - half
    return c.astype(np.float64)


def _onnxruntime_cubic_coeffs(s, a):
    """The 4 cubic weights (out, 4) of taps floor - 1 .. floor + 2 for fractions s, in
    float32 by onnxruntime's formulas: near a whole pixel a tap's weight comes out 0 or
    +-1e-8 by float32 rounding, and that decides 0 * inf = NaN against +-inf."""
    f = np.float32
    one, two = f(1), f(2)

    def far(d):
        return ((a * d - f(5) * a) * d + f(8) * a) * d - f(4) * a

    def near(d):
        return ((a + two) * d - (a + f(3))) * d * d + one

    return np.stack([far(s + one), near(s), near(one - s), far(two - s)],
                    axis=1).astype(np.float64)


def _onnxruntime_taps(coord, in_len, scale, attrs):
    """The input values onnxruntime's linear/cubic kernels read for each output, as
    taps (idx, w, read), each (out, K): a tap with `read` set is multiplied whatever its
    weight (0 * NaN and 0 * inf give NaN there, as in onnxruntime); one without it is
    not read at all. For non-finite data only: on finite data the values equal
    `_taps`'s up to rounding, and the dense GEMM is much faster.

      - linear: the coordinate clamped into [0, in_len - 1]; its floor and the next
        index (at the last index both taps are that one, weighted 0.5 each);
      - cubic: floor(coord) - 1 .. floor(coord) + 2, clamped into the axis, each
        multiplied (exclude_outside zeroes the weights outside);
      - antialias (any scale): onnxruntime's window of indices
        [floor(c + 1 - r), floor(c + 1 + r)) for support radius r (float32 as there),
        each index inside the axis read once; the weights of the window's indices
        outside the axis are folded onto the border index (dropped with
        exclude_outside).
    """
    n = in_len
    cubic = attrs["mode"] == "cubic"
    if attrs["antialias"]:
        f = np.float32
        support = f(2.0 if cubic else 1.0)
        stretch = f(1.0) / f(scale) if scale < 1 else f(1.0)
        radius = support * stretch
        center = (coord.astype(f) + f(0.5))
        lo = np.floor((center - radius).astype(np.float64) + 0.5)
        hi = np.floor((center + radius).astype(np.float64) + 0.5)
        x = lo[:, None] + np.arange(2 * int(math.ceil(radius)) + 1)[None, :]
        window = x < hi[:, None]
        # the filter's argument in float32, as there: whether a tap's weight is 0
        # exactly (then 0 * inf is NaN) or 1e-8 (inf) depends on it
        inv = f(1.0) / stretch
        dist = np.abs(((x.astype(f) - center[:, None]) + f(0.5)) * inv)
        if cubic:
            a = f(attrs["cubic_coeff_a"])
            near = ((a + f(2)) * dist - (a + f(3))) * dist * dist + f(1)
            far = (((dist - f(5)) * dist + f(8)) * dist - f(4)) * a
            w = np.where(dist < 1, near, np.where(dist < 2, far, f(0)))
        else:
            w = np.where(dist < 1, f(1) - dist, f(0))
        w = np.where(window, w.astype(np.float64), 0.0)
        inside = (x >= 0) & (x <= n - 1)
        if attrs["exclude_outside"]:
            w = np.where(inside, w, 0.0)
        total = w.sum(axis=1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
        left = np.where(x < 0, w, 0.0).sum(axis=1, keepdims=True)
        right = np.where(x > n - 1, w, 0.0).sum(axis=1, keepdims=True)
        w = w + np.where(x == 0, left, 0.0) + np.where(x == n - 1, right, 0.0)
        return np.clip(x, 0, n - 1).astype(np.int64), w, window & inside
    if cubic:
        # the fraction in float32, as there: a coordinate 1e-8 below a whole pixel has
        # fraction 1, so the farthest tap weighs exactly 0 (not 1e-8) and 0 * inf is NaN
        c = coord.astype(np.float32)
        base = np.floor(c)
        frac = c - base
        w = _onnxruntime_cubic_coeffs(frac, np.float32(attrs["cubic_coeff_a"]))
        idx = base.astype(np.float64)[:, None] + np.arange(-1, 3)[None, :]
        if attrs["exclude_outside"]:
            w = np.where((idx >= 0) & (idx <= n - 1), w, 0.0)
            total = w.sum(axis=1, keepdims=True)
            w = w / np.where(total == 0, 1.0, total)
        idx = np.clip(idx, 0, n - 1).astype(np.int64)
        return idx, w, np.ones(idx.shape, dtype=bool)
    c = np.clip(coord, 0, n - 1)
    x1 = np.floor(c)
    x2 = np.minimum(x1 + 1, n - 1)
    frac = c - x1
    same = x1 == x2
    w = np.stack([np.where(same, 0.5, 1.0 - frac), np.where(same, 0.5, frac)], axis=1)
    idx = np.stack([x1, x2], axis=1).astype(np.int64)
    return idx, w, np.ones(idx.shape, dtype=bool)


def _onnxruntime_image_axes(rank, mode, scale):
    """The axes onnxruntime's bilinear/trilinear/bicubic kernels interpolate (the
    others, batch and channel, must have scale 1 there); () where it refuses the
    resize. Without antialiasing these kernels read each output's 2 (4) neighbours
    along such an axis even when it is not resized (coordinate = index, the next index
    weighted 0), so there a NaN or inf spreads one index further (linear: to the
    previous index; cubic: to the 3 around it)."""
    if rank == 2:
        return (0, 1)
    if rank == 4:
        return (2, 3) if scale[1] == 1.0 else (1, 2)
    if mode == "linear" and rank in (3, 5):
        return tuple(range(rank - 3, rank))
    return ()


def _resize_axis_taps(y, axis, idx, w, read=None):
    """Resize y along `axis` by one gather and multiply-add per tap (idx, w) (out, K);
    where `read` (out, K) is False the tap adds nothing (and is not multiplied)."""
    wshape = [1] * y.ndim
    wshape[axis] = idx.shape[0]
    w = w.astype(y.dtype)
    acc = None
    for k in range(idx.shape[1]):
        part = np.take(y, idx[:, k], axis=axis)
        part *= w[:, k].reshape(wshape)
        if read is not None and not read[:, k].all():
            part = np.where(read[:, k].reshape(wshape), part, 0)
        if acc is None:
            acc = part
        else:
            acc += part
    return acc


def _resize(inputs, attrs, ctx):
    """Nearest/linear/cubic resize, separable per axis, in any coordinate mode.

    Linear/cubic axes of at most `_RESIZE_DENSE_MAX` values are a GEMM with the dense
    interpolation matrix. That multiplies the zero weights too (a NaN or inf would make
    its whole line NaN), so data holding NaN or inf takes the per-tap path on every
    axis, with onnxruntime's taps (`_onnxruntime_taps`): only the outputs whose taps
    read a NaN/inf are affected, as in onnxruntime (and, but for its reads of
    zero-weighted taps, ONNX's reference)."""
    x = inputs[0]
    roi = inputs[1] if len(inputs) > 1 else None
    scales = inputs[2] if len(inputs) > 2 else None
    sizes = inputs[3] if len(inputs) > 3 else None
    if scales is not None and np.asarray(scales).size == 0:
        scales = None
    if sizes is not None and np.asarray(sizes).size == 0:
        sizes = None
    out_shape, scale, starts, ends = _resize_plan(x.shape, scales, sizes, roi, attrs)
    _check_resize_size(x.shape, x.dtype, out_shape, scales, sizes, attrs["mode"])
    mode = attrs["mode"]
    if x.size == 0:  # e.g. a batch of 0: nothing to interpolate
        if any(o and not d for o, d in zip(out_shape, x.shape)):
            raise ShapeError(f"Resize: an empty axis of input shape {list(x.shape)} cannot "
                             f"grow to output shape {list(out_shape)}")
        return (np.zeros(out_shape, dtype=x.dtype),)
    if mode not in ("nearest", "linear", "cubic"):
        raise ShapeError(f"Resize: unknown mode {mode!r}")
    # float32 images interpolate in float32 (as onnxruntime does), the rest in float64
    # (no copy of a float32 input: nothing below writes into y)
    wide = np.float32 if x.dtype in (np.float32, np.float16) else np.float64
    y = x if mode == "nearest" else x.astype(wide, copy=False)
    plan = (x, out_shape, scale, starts, ends, attrs)
    if mode == "nearest":
        y, outside = _resize_axes(y, *plan, nonfinite=False, check=False)
    else:
        nonfinite = huge = False
        if x.dtype.kind not in "iub":
            # One BLAS pass (~1% of a GEMM resize): the sum of squares is finite only if
            # every value is, and is below ~1e19 (float32), too small for any
            # interpolation to overflow; otherwise look closer.
            flat = y.reshape(-1)
            if not np.isfinite(np.dot(flat, flat)):
                nonfinite = not np.isfinite(y).all()
                huge = not nonfinite
        result = _resize_axes(y, *plan, nonfinite=nonfinite, check=huge)
        if result is None:  # huge finite values overflowed to inf on an axis
            result = _resize_axes(y, *plan, nonfinite=True, check=False)
        y, outside = result
    if outside:
        mask = np.logical_or.reduce(np.broadcast_arrays(*outside)) if len(outside) > 1 \
            else outside[0]
        y = np.where(mask, attrs["extrapolation_value"], y)
    if y.dtype != x.dtype:
        if x.dtype.kind in "iu":
            info = np.iinfo(x.dtype)
            y = np.clip(np.rint(y), info.min, info.max)
        y = y.astype(x.dtype)
    return (y,)


def _check_resize_size(in_shape, dtype, out_shape, scales, sizes, mode) -> None:
    """Refuse a Resize whose output, or a partial result of its axis-by-axis passes (the
    first k axes resized), would take more than 2 GiB beyond its input, before any
    coordinate or value array is made: a scale of 2**40 or 1e9 (or such a size) asks
    for terabytes, which numpy refuses in its own words or, worse, overcommits and
    then fills for minutes. Nearest copies x's values; linear and cubic passes hold
    float32 values for float32/float16 x, float64 ones otherwise.

    Raises:
        ResourceExhaustedError: naming the output shape and the scales or sizes.
    """
    given = (f"scales {np.asarray(scales, dtype=np.float32).reshape(-1).tolist()}"
             if scales is not None else
             f"sizes {np.asarray(sizes).reshape(-1).tolist()}")
    dtype = np.dtype(dtype)
    itemsize = dtype.itemsize if mode == "nearest" else \
        4 if dtype in (np.float32, np.float16) else 8
    beyond = math.prod(int(d) for d in in_shape) * np.dtype(dtype).itemsize
    partials = [list(out_shape[:k + 1]) + list(in_shape[k + 1:])
                for k in range(len(in_shape))]
    worst = max(partials, key=lambda shape: math.prod(int(d) for d in shape),
                default=list(out_shape))
    what = "the output" if list(worst) == list(out_shape) else \
        f"a partial result (output shape {[int(d) for d in out_shape]})"
    check_result_size("Resize", what, worst, itemsize, beyond=beyond, cause=given)


def _resize_axes(y, x, out_shape, scale, starts, ends, attrs, nonfinite, check):
    """Resize y (x, widened) axis by axis: (y, masks of extrapolated outputs).
    `nonfinite` takes onnxruntime's taps on every axis; `check` (huge finite values)
    returns None as soon as a GEMM's output is not finite (it overflowed, and the next
    GEMM would spread that over whole lines)."""
    mode, ctm = attrs["mode"], attrs["coordinate_transformation_mode"]
    kept = [out_shape[a] == x.shape[a] and scale[a] == 1.0 and ctm != "tf_crop_and_resize"
            for a in range(x.ndim)]
    image_axes = _onnxruntime_image_axes(x.ndim, mode, scale) if nonfinite else ()
    # onnxruntime's non-antialiasing kernels read zero-weighted neighbours along an
    # image axis that is not resized too (unless nothing at all is resized: a copy)
    spread = () if attrs["antialias"] or all(kept) else image_axes
    if nonfinite and mode == "cubic" and x.ndim == 4 and scale[1] != 1.0:
        # channels-last bicubic (upsampling only there) runs its antialiasing kernel
        attrs, spread = dict(attrs, antialias=1), ()
    outside = []
    for axis in range(x.ndim):
        in_len = x.shape[axis]
        if kept[axis]:
            if axis in spread:
                idx, w, read = _onnxruntime_taps(np.arange(in_len, dtype=np.float64),
                                                 in_len, 1.0, attrs)
                y = _resize_axis_taps(y, axis, idx, w, read)
            continue
        # on non-finite data, onnxruntime's coordinates and taps along the axes it
        # interpolates (all, where it refuses the resize: any rule will do)
        as_ort = nonfinite and mode != "nearest" and (not image_axes or axis in image_axes)
        coords = _onnxruntime_coords if as_ort else _source_coords
        coord = coords(out_shape[axis], in_len, scale[axis], starts[axis], ends[axis], ctm)
        if ctm == "tf_crop_and_resize":
            # which samples lie outside is decided on onnxruntime's float32 coordinates:
            # a sample on the border in exact arithmetic can land on either side of it
            # in float64 (a flipped box's last sample at 4.0000000000000001 of 4)
            ort = coord if as_ort else _onnxruntime_coords(
                out_shape[axis], in_len, scale[axis], starts[axis], ends[axis], ctm)
            bad = (ort < 0) | (ort > in_len - 1)
            if bad.any():
                shape = [1] * x.ndim
                shape[axis] = out_shape[axis]
                outside.append(bad.reshape(shape))
        if mode == "nearest":
            y = np.take(y, _nearest_index(coord, in_len, attrs["nearest_mode"]), axis=axis)
            continue
        if nonfinite:
            if as_ort:
                idx, w, read = _onnxruntime_taps(coord, in_len, scale[axis], attrs)
            else:  # batch/channel under tf_crop_and_resize: only the taps that weigh
                idx, w = _taps(coord, in_len, scale[axis], attrs)
                read = w != 0
            y = _resize_axis_taps(y, axis, idx, w, read)
            continue
        idx, w = _taps(coord, in_len, scale[axis], attrs)
        if in_len <= _RESIZE_DENSE_MAX and len(idx) * in_len <= _RESIZE_DENSE_CELLS:
            y = _resize_axis_gemm(y, axis, idx, w, in_len)
            if check and not np.isfinite(y).all():
                return None
            continue
        # one gather and multiply-add per tap
        y = _resize_axis_taps(y, axis, idx, w)
    return y, outside


def _infer_resize(attrs, inputs):
    """Output dims need the scales/sizes values; otherwise only the rank is known."""
    x = inputs[0]
    get = (lambda i: inputs[i] if len(inputs) > i and inputs[i] is not None else None)
    roi, scales, sizes = get(1), get(2), get(3)
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    unknown = (None,) * len(x.shape)
    for t in (scales, sizes):
        if t is not None and t.value is not None and np.asarray(t.value).size == 0:
            if t is scales:
                scales = None
            else:
                sizes = None
    if (sizes is not None and sizes.value is None) or (
            sizes is None and (scales is None or scales.value is None)):
        return [TensorInfo(x.dtype, unknown)]
    if any(d is None for d in x.shape):
        return [TensorInfo(x.dtype, unknown)]
    out, _, _, _ = _resize_plan(x.shape, None if scales is None else scales.value,
                                None if sizes is None else sizes.value,
                                None if roi is None else roi.value, attrs)
    if x.dtype is not None:
        _check_resize_size(x.shape, x.dtype, out, None if scales is None else scales.value,
                           None if sizes is None else sizes.value, attrs["mode"])
    return [TensorInfo(x.dtype, tuple(out))]


# --------------------------------------------------------------------------- definitions

_AXES_ATTR = ("axes", "ints", None)  # legacy (pre-opset-13) attribute form

OPS = tuple(sorted((
    define("Concat", ["inputs*"], ["concat_result"], _concat, [("axis", "int")],
           infer=_infer_concat, since_version=13),
    define("Constant", [], ["output"], _constant,
           [("value", "tensor", None), ("value_float", "float", None),
            ("value_floats", "floats", None), ("value_int", "int", None),
            ("value_ints", "ints", None), ("value_string", "string", None),
            ("value_strings", "strings", None)],
           infer=_infer_constant, since_version=13, check_attrs=_check_constant_attrs),
    define("ConstantOfShape", ["input"], ["output"], _constant_of_shape,
           [("value", "tensor", None)], infer=_infer_constant_of_shape, since_version=9,
           check_attrs=_check_fill_value),
    define("DepthToSpace", ["input"], ["output"], _depth_to_space,
           [("blocksize", "int"), ("mode", "string", "DCR")],
           infer=_infer_depth_to_space, since_version=13),
    define("Dropout", ["data", "ratio?", "training_mode?"], ["output", "mask?"], _dropout,
           [("ratio", "float", 0.5), ("seed", "int", None)], infer=_infer_dropout,
           since_version=13),
    define("Expand", ["input", "shape"], ["output"], _expand, infer=_infer_expand,
           since_version=13),
    define("Flatten", ["input"], ["output"], _flatten, [("axis", "int", 1)],
           infer=_infer_flatten, since_version=13),
    define("Identity", ["input"], ["output"], _identity, infer=_infer_identity,
           since_version=13),
    define("Pad", ["data", "pads", "constant_value?", "axes?"], ["output"], _pad,
           [("mode", "string", "constant")], infer=_infer_pad, since_version=13),
    define("Range", ["start", "limit", "delta"], ["output"], _range,
           [("stash_type", "int", 1)], infer=_infer_range, since_version=11),
    define("Reshape", ["data", "shape"], ["reshaped"], _reshape, [("allowzero", "int", 0)],
           infer=_infer_reshape, since_version=13),
    define("Resize", ["X", "roi?", "scales?", "sizes?"], ["Y"], _resize,
           [("antialias", "int", 0), ("axes", "ints", None),
            ("coordinate_transformation_mode", "string", "half_pixel"),
            ("cubic_coeff_a", "float", -0.75), ("exclude_outside", "int", 0),
            ("extrapolation_value", "float", 0.0),
            ("keep_aspect_ratio_policy", "string", "stretch"),
            ("mode", "string", "nearest"), ("nearest_mode", "string", "round_prefer_floor")],
           infer=_infer_resize, since_version=13, check_attrs=_check_resize_attrs),
    define("Shape", ["data"], ["shape"], _shape, [("end", "int", None), ("start", "int", 0)],
           infer=_infer_shape, since_version=13),
    define("Size", ["data"], ["size"], _size, infer=_infer_size, since_version=13),
    define("SpaceToDepth", ["input"], ["output"], _space_to_depth,
           [("blocksize", "int"), ("mode", "string", "DCR")],
           infer=_infer_space_to_depth, since_version=13),
    define("Split", ["input", "split?"], ["outputs*"], _split,
           [("axis", "int", 0), ("num_outputs", "int", None), ("split", "ints", None)],
           infer=_infer_split, since_version=13),
    define("Squeeze", ["data", "axes?"], ["squeezed"], _squeeze, [_AXES_ATTR],
           infer=_infer_squeeze, since_version=13),
    define("Tile", ["input", "repeats"], ["output"], _tile, infer=_infer_tile,
           since_version=13),
    define("Transpose", ["data"], ["transposed"], _transpose, [("perm", "ints", None)],
           infer=_infer_transpose, since_version=13),
    define("Trilu", ["input", "k?"], ["output"], _trilu, [("upper", "int", 1)],
           infer=infer_same, since_version=14),
    define("Unsqueeze", ["data", "axes?"], ["expanded"], _unsqueeze, [_AXES_ATTR],
           infer=_infer_unsqueeze, since_version=13),
), key=lambda op: op.name))

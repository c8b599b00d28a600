"""Helpers shared by op family modules: inference rules used by many ops."""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, OneGraphError, ResourceExhaustedError, ShapeError
from .registry import TensorInfo


def remember(memo: dict, key, value, limit: int):
    """memo[key] = value, first emptying memo when it holds `limit` keys: a memo keyed
    by input shapes or patterns must not grow for ever under ever new keys."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value


def derived(cache: dict, key, source, make):
    """make(source), kept in cache[key] with `source` itself and made again only when
    another object comes (a weight converted or packed once per node): holding the
    source keeps its id, often part of `key`, from passing to a new array. Never
    raises beyond what `make` raises."""
    held = cache.get(key)
    if held is None or held[0] is not source:
        held = cache[key] = (source, make(source))
    return held[1]


def per_view(cache: dict, tag, w: np.ndarray) -> dict:
    """A dict in `cache` for this view of the array owning w's memory (its base, for
    a transposed or reshaped view made per call), under `tag`: what is made from a
    constant once (a pack, a reordered copy) is kept per part and orientation of it.
    Holding the owner keeps its id from passing to a new array. Never raises."""
    owner = w
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    views = derived(cache, (tag, id(owner)), owner, lambda _: {})
    return views.setdefault((w.ctypes.data - owner.ctypes.data, w.shape, w.strides), {})


def broadcast_shape(*shapes, where: str = ""):
    """Numpy/ONNX multidirectional broadcast of shapes with None for unknown dims.

    Raises:
        ShapeError: two known dims differ and neither is 1.
    """
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dim = 1
        for s in shapes:
            j = i - (rank - len(s))
            if j < 0:
                continue
            d = s[j]
            if d is None:
                dim = None if dim in (1, None) else dim
            elif d != 1:
                if dim not in (1, None) and dim != d:
                    raise ShapeError(f"{where}cannot broadcast shapes {list(shapes)}")
                dim = d
        out.append(dim)
    return tuple(out)


def infer_elementwise(attrs, inputs):
    """Output 0 has the broadcast shape and the dtype of input 0."""
    present = [t for t in inputs if t is not None]
    return [TensorInfo(present[0].dtype, broadcast_shape(*(t.shape for t in present)))]


def infer_same(attrs, inputs):
    """Output 0 has the dtype and shape of input 0."""
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


def infer_compare(attrs, inputs):
    """Output 0 is bool with the broadcast shape of all inputs."""
    present = [t for t in inputs if t is not None]
    return [TensorInfo(np.dtype(bool), broadcast_shape(*(t.shape for t in present)))]


# A result whose size comes from an attribute or an input's value (pads, strides, a
# Resize scale) rather than from the inputs' own sizes is refused when it would take
# this many bytes more than the input it is made from: a fuzzed pads=2**40 or scale of
# 1e9 must not reach numpy as an allocation (numpy's "Maximum allowed dimension
# exceeded", a MemoryError, or an overcommitted success that then runs for minutes).
# ms_fused's and the image ops' limits (on the whole result) are the same 2 GiB.
MAX_RESULT_BYTES = 1 << 31


def result_bytes(shape, itemsize: int) -> int:
    """The bytes of an array of `shape` and `itemsize`, in Python int arithmetic (no
    overflow whatever the dims)."""
    size = int(itemsize)
    for d in shape:
        size *= int(d)
    return size


def check_result_size(where: str, what: str, shape, itemsize: int, beyond: int = 0,
                      cause: str = "") -> None:
    """Refuse a result of `shape` whose bytes exceed MAX_RESULT_BYTES + `beyond` (the
    bytes of the input it grows from; Python int arithmetic, so no overflow whatever
    the dims). `where` names the op (or node and op; "" for none), `what` the result,
    `cause` (for the message) the attribute or input value that sizes it.

    Raises:
        ResourceExhaustedError: naming `where`, `what`, its shape, bytes and `cause`.
    """
    size = result_bytes(shape, itemsize)
    if size > MAX_RESULT_BYTES + beyond:
        grown = f" ({cause})" if cause else ""
        over = f"{beyond:,} bytes of input + " if beyond else ""
        prefix = f"{where}: " if where else ""
        raise ResourceExhaustedError(
            f"{prefix}{what}{grown} would have shape {[int(d) for d in shape]} and take "
            f"{size:,} bytes, over the limit of {over}{MAX_RESULT_BYTES:,} bytes")


# numpy's words for operands whose shapes do not fit (broadcasting, matmul, concatenate,
# stack, dot), each with what onegraph says instead: the Session reports them as a
# ShapeError, like the kernels' own checks, in its own words
_SHAPE_MISMATCH_WORDS = {
    "could not be broadcast": "they do not broadcast together",
    "mismatch in its core dimension": "a matrix product's inner dimensions differ",
    "input array dimensions except for the concatenation axis":
        "they differ outside the concatenation axis",
    "must have the same shape": "they must have the same shape",
    "not aligned": "a product's inner dimensions differ",
}


def is_shape_mismatch(e: ValueError) -> bool:
    """Whether numpy's ValueError `e` says that operand shapes do not fit."""
    text = str(e)
    return any(words in text for words in _SHAPE_MISMATCH_WORDS)


def _shape_mismatch_reason(e: ValueError) -> str:
    """onegraph's words for the shape mismatch numpy's `e` reports."""
    text = str(e)
    return next(ours for words, ours in _SHAPE_MISMATCH_WORDS.items() if words in text)


# numpy's ValueError for an array whose byte size exceeds the address space
_TOO_BIG_FOR_NUMPY = "array is too big"


def kernel_failure(e: Exception, where: str, args) -> OneGraphError:
    """The onegraph error to raise for exception `e` of a kernel that is not one:
    ShapeError for numpy's shape mismatches (in onegraph's words, numpy's left out),
    ResourceExhaustedError for MemoryError (numpy's "Unable to allocate ...") and
    numpy's "array is too big", ExecutionError otherwise. `where` names the node and op
    ("node 'n' (Pad)"), `args` are the kernel's inputs."""
    if isinstance(e, ValueError) and is_shape_mismatch(e):
        return ShapeError(f"{where}: input shapes {input_shapes(args)} do not fit: "
                          f"{_shape_mismatch_reason(e)}")
    if isinstance(e, MemoryError) or (isinstance(e, ValueError)
                                      and str(e).startswith(_TOO_BIG_FOR_NUMPY)):
        return ResourceExhaustedError(f"{where}: out of memory with input shapes "
                                      f"{input_shapes(args)}: {e}")
    return ExecutionError(f"{where} failed: {type(e).__name__}: {e}")


def input_shapes(args) -> str:
    """A kernel's input shapes for a message: "[2, 3], [2, 2]" ("-" for an omitted
    input or a value that is not an array)."""
    return ", ".join(str(list(a.shape)) if isinstance(a, np.ndarray) else "-"
                     for a in args)

"""The rest of TF1's sparse API, built from og's graph ops: tf.sparse.mask / sparse_mask
(IndexedSlices), merge / sparse_merge, reset_shape / sparse_reset_shape, split /
sparse_split, expand_dims, eye and bincount.

Every function is a composition of graph ops (Gather, Concat, Slice, Unique, ...), so
the result also runs from a saved .og file, and values gradients flow where the pieces
have them (split, reset_shape, expand_dims, merge pass the values through gathers or
identities). Run-time checks that TF makes in its kernels are og.Asserts (ExecutionError
when a run fails them, where TF raises InvalidArgumentError).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..format import DType
from . import api, api_extra, api_math
from . import graph as _g
from .api_linalg import setdiff1d
from .api_math import _checked
from .gradients import IndexedSlices
from .sparse_tensor import SparseTensor, SparseTensorValue
from .sparse_tensor import sparse_argument as _sparse

_DOMAIN = "onegraph"
_INT64 = DType.INT64


def _i64(g, value):
    return g.constant(np.asarray(value, np.int64))


def _rank(sp: SparseTensor):
    """The rank of sp: an int when known while building, else an int64 scalar tensor."""
    if sp.shape.ndims is not None:
        return sp.shape.ndims
    return api.shape(sp.dense_shape)[0]


def _is_int(value) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool)


# ------------------------------------------------------------------------------- mask

def mask(a, mask_indices, name=None) -> IndexedSlices:
    """The slices of the IndexedSlices `a` whose index is not in the 1-D
    `mask_indices`, in a's order (TF1's tf.sparse.mask / tf.sparse_mask).

    Raises:
        TypeError: a is not an og.IndexedSlices.
        ShapeError: mask_indices are not integers.
    """
    if not isinstance(a, IndexedSlices):
        raise TypeError(f"sparse.mask: a must be an IndexedSlices, got {type(a).__name__}")
    g = a.graph
    with g.name_scope(name or "sparse_mask"):
        drop = _g.integer_tensor(mask_indices, "sparse.mask: mask_indices", g)
        if drop.dtype != a.indices.dtype:  # TF converts them to a.indices' dtype
            drop = api.cast(drop, a.indices.dtype)
        kept, positions = setdiff1d(a.indices, drop)
        return IndexedSlices(api.gather(a.values, positions), kept, a.like)


# ------------------------------------------------------------------------------ merge

def _merge_lists(sp_ids, vocab_size):
    """(list of ids SparseTensors, list of vocab sizes) as TF's sparse_merge takes them.

    Raises:
        TypeError: the kinds are wrong (TF's messages).
        ValueError: the two lists differ in length.
    """
    if isinstance(sp_ids, (SparseTensor, SparseTensorValue)):
        if not (_is_int(vocab_size) or isinstance(vocab_size, _g.Tensor)):
            raise TypeError(f"vocab_size has to be a Tensor or Python int. Found "
                            f"{type(vocab_size)}")
        return [sp_ids], [vocab_size]
    if not isinstance(sp_ids, (list, tuple)):
        raise TypeError(f"sp_ids has to be a SparseTensor or list thereof. Found "
                        f"{type(sp_ids)}")
    if not isinstance(vocab_size, (list, tuple)):
        raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. Found "
                        f"{type(vocab_size)}")
    for dim in vocab_size:
        if not (_is_int(dim) or isinstance(dim, _g.Tensor)):
            raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. Found "
                            f"{type(dim)}")
    if len(sp_ids) != len(vocab_size):
        raise ValueError("sp_ids and vocab_size have to have equal lengths.")
    return list(sp_ids), list(vocab_size)


def merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False) -> SparseTensor:
    """One SparseTensor from ids and their weights (TF1's tf.sparse.merge /
    tf.sparse_merge): the last index dim of `sp_ids` is replaced by the ids (one
    column per SparseTensor when sp_ids is a list), the values are sp_values', the
    dense shape is sp_ids' without its last dim plus `vocab_size` (an int, a tensor,
    or a list of them matching sp_ids). Entries are put in row-major order unless
    already_sorted.

    Raises:
        TypeError: sp_ids, sp_values or vocab_size are of the wrong kind.
        ValueError: sp_ids and vocab_size lists differ in length.
    """
    ids_list, sizes = _merge_lists(sp_ids, vocab_size)
    ids_list = [_sparse(s, "sparse.merge: sp_ids") for s in ids_list]
    weights = _sparse(sp_values, "sparse.merge: sp_values")
    first = ids_list[0]
    g = first.graph
    with g.name_scope(name or "SparseMerge"):
        columns = [api.reshape(api.cast(s.values, _INT64), [-1, 1]) for s in ids_list]
        rank = _rank(first)
        lead_cols = api.stack([-1, rank - 1]) if isinstance(rank, _g.Tensor) else [-1, rank - 1]
        lead_dims = api.reshape(rank - 1, [1]) if isinstance(rank, _g.Tensor) else [rank - 1]
        lead = api_math.slice(first.indices, [0, 0], lead_cols)
        indices = api.concat([lead] + columns, 1)
        size_t = [api.reshape(api.cast(g.convert(v), _INT64), [1]) for v in sizes]
        shape = api.concat([api_math.slice(first.dense_shape, [0], lead_dims)] + size_t, 0)
        result = SparseTensor(indices, weights.values, shape)
        if already_sorted:
            return result
        out_indices, out_values = g.op("SparseReorder", [indices, weights.values, shape],
                                       domain=_DOMAIN, num_outputs=2)
        return SparseTensor(out_indices, out_values, shape)


# ------------------------------------------------------------------------ reset_shape

def reset_shape(sp_input, new_shape=None) -> SparseTensor:
    """sp_input with the same indices and values and dense shape `new_shape`, or its
    tight bounding box (max index + 1 per dim, 0s when empty) when None (TF1's
    tf.sparse.reset_shape / tf.sparse_reset_shape). A new_shape smaller than the
    input's in some dim, or of another rank, fails the run when it is not known
    while building.

    Raises:
        TypeError: sp_input is not sparse.
        ValueError: new_shape is not a vector, its length is not the input's rank, or
            (both known) it is smaller than the input's shape in some dim.
    """
    sp = _sparse(sp_input, "sparse.reset_shape")
    g = sp.graph
    indices, values = api.identity(sp.indices), api.identity(sp.values)
    in_shape = api.identity(sp.dense_shape)
    if new_shape is None:
        # a row of -1s keeps the max defined (and 0 after the + 1) for no entries
        rank = _rank(sp)
        floor = api_extra.fill(api.stack([1, rank]) if isinstance(rank, _g.Tensor) else [1, rank],
                         np.int64(-1))
        top = api.reduce_max(api.concat([indices, floor], 0), axis=0)
        return SparseTensor(indices, values, api.maximum(top + 1, api.zeros_like(top)))
    known = None if isinstance(new_shape, _g.Tensor) else np.asarray(new_shape)
    out = g.convert(new_shape)
    if out.shape is not None and len(out.shape) != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {len(out.shape)}: new_shape")
    out = api.cast(out, _INT64)
    if out.shape is not None and out.shape[0] is not None and sp.shape.ndims is not None \
            and out.shape[0] != sp.shape.ndims:
        raise ValueError(f"Dimensions {out.shape[0]} and {sp.shape.ndims} are not "
                         f"compatible: new_shape has another rank than sp_input")
    if known is not None and sp.shape.is_fully_defined():
        have = np.array(sp.shape.as_list(), np.int64)
        if not np.all(have <= known):
            raise ValueError(f"Requested new_shape should have dimension sizes >= "
                             f"sp_input.shape.  Found new_shape ({known.tolist()}), "
                             f"sp_input.shape ({have.tolist()}).")
        return SparseTensor(indices, values, out)
    same_rank = api.equal(api.shape(in_shape), api.shape(out))
    out = _checked(out, same_rank, "sparse.reset_shape: new_shape must have the input's rank")
    out = _checked(out, api.less_equal(in_shape, out),
                   "sparse.reset_shape: new_shape must be >= the input's shape in every dim")
    return SparseTensor(indices, values, out)


# ------------------------------------------------------------------------------ split

class _KeywordRequired:
    """TF1's stand-in first argument of sparse_split: its arguments go by keyword."""

    def __repr__(self) -> str:
        return "<keyword arguments required>"


def _split_bounds(g, dim, num_split: int):
    """(starts, sizes) int64 tensors of TF's uneven split of `dim` into num_split: the
    first dim % num_split pieces get one more."""
    base = api_math.floordiv(dim, _i64(g, num_split))
    extra = api_math.floormod(dim, _i64(g, num_split))
    k = _i64(g, np.arange(num_split))
    sizes = base + api.cast(api.less(k, extra), _INT64)
    starts = k * base + api.minimum(k, extra)
    return starts, sizes


def split(keyword_required=_KeywordRequired(), sp_input=None, num_split=None, axis=None,
          name=None, split_dim=None) -> list:
    """`num_split` SparseTensors cut from sp_input along `axis` (TF1's
    tf.sparse.split / tf.sparse_split; arguments by keyword): when the dim is not a
    multiple of num_split, the first dim % num_split
    pieces are one longer. Entries keep their order; indices are shifted into each
    piece. A num_split larger than the dim or an axis outside [-rank, rank) fails the
    run when not known while building.

    Raises:
        ValueError: an argument is positional or missing (axis too when split_dim is
            given, as in TF 2.21), split_dim is given, or num_split is not >= 1.
        TypeError: sp_input is not sparse or num_split is not an int.
    """
    if not isinstance(keyword_required, _KeywordRequired):
        raise ValueError("Keyword arguments are required for this function.")
    if sp_input is None:
        raise ValueError("sp_input is required")
    if num_split is None:
        raise ValueError("num_split is required")
    # TF 2.21 asks for axis before it looks at its old name, so split_dim alone is
    # refused too
    if axis is None:
        raise ValueError("axis is required")
    if split_dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'split_dim'")
    if not _is_int(num_split):
        raise TypeError(f"sparse.split: num_split must be an int, got "
                        f"{type(num_split).__name__}")
    if num_split < 1:
        raise ValueError(f"sparse.split: num_split must be >= 1, got {num_split}")
    sp = _sparse(sp_input, "sparse.split")
    g = sp.graph
    with g.name_scope(name or "SparseSplit"):
        rank = api.cast(api.shape(sp.dense_shape)[0], _INT64)
        ax = api.cast(g.convert(axis), _INT64)
        inside = api.logical_and(api.greater_equal(ax, -rank), api.less(ax, rank))
        ax = _checked(ax, inside, "sparse.split: axis must be in [-rank, rank)")
        ax = api.where(api.less(ax, _i64(g, 0)), ax + rank, ax)
        dim = api.reshape(api.gather(sp.dense_shape, ax), [])
        dim = _checked(dim, api.less_equal(_i64(g, num_split), dim),
                       f"sparse.split: num_split ({num_split}) must be at most the split "
                       f"dim's size")
        starts, sizes = _split_bounds(g, dim, num_split)
        column = api.reshape(api.gather(sp.indices, api.reshape(ax, [1]), axis=1), [-1])
        on_axis = api.cast(api.equal(api_extra.range(rank), ax), _INT64)
        pieces = []
        for k in range(num_split):
            start, size = starts[k], sizes[k]
            keep = api.logical_and(api.greater_equal(column, start),
                                   api.less(column, start + size))
            rows = api.reshape(api.where(keep), [-1])
            indices = api.gather(sp.indices, rows) - api.reshape(on_axis * start, [1, -1])
            shape = sp.dense_shape + on_axis * (size - dim)
            if sp.shape.ndims is not None:
                indices.set_shape([None, sp.shape.ndims])
                shape.set_shape([sp.shape.ndims])
            pieces.append(SparseTensor(indices, api.gather(sp.values, rows), shape))
        return pieces


# ------------------------------------------------------------------ expand_dims, eye

def expand_dims(sp_input, axis=None, name=None) -> SparseTensor:
    """sp_input with a dim of size 1 inserted at `axis` (default -1, after the last;
    Python's list.insert rule, negative counting from the end) (TF's
    tf.sparse.expand_dims). An axis outside [-rank - 1, rank] fails the run.

    Raises:
        TypeError: sp_input is not sparse, or axis is not an int or a tensor.
        ValueError: an int axis is out of range for an input of known rank.
    """
    sp = _sparse(sp_input, "sparse.expand_dims")
    axis = -1 if axis is None else axis
    if not (_is_int(axis) or isinstance(axis, _g.Tensor)):
        raise TypeError("axis must be an integer value in range [-rank(sp_input) - 1, "
                        "rank(sp_input)]")
    rank_known = sp.shape.ndims
    if _is_int(axis) and rank_known is not None and not -rank_known - 1 <= axis <= rank_known:
        raise ValueError(f"sparse.expand_dims: axis {axis} is outside [{-rank_known - 1}, "
                         f"{rank_known}] for a rank-{rank_known} input")
    g = sp.graph
    with g.name_scope(name or "expand_dims"):
        if _is_int(axis) and rank_known is not None:
            # known while building: constant slice bounds keep the static shape's dims
            at = int(axis) if axis >= 0 else int(axis) + rank_known + 1
            cut, cut_cols, rest = [at], [-1, at], [0, at]
        else:
            rank = api.cast(api.shape(sp.dense_shape)[0], _INT64)
            ax = api.cast(g.convert(axis), _INT64)
            inside = api.logical_and(api.greater_equal(ax, -rank - 1),
                                     api.less_equal(ax, rank))
            ax = _checked(ax, inside, "sparse.expand_dims: axis must be in [-rank - 1, rank]")
            ax = api.where(api.greater_equal(ax, _i64(g, 0)), ax, ax + rank + 1)
            cut, cut_cols = api.reshape(ax, [1]), api.stack([_i64(g, -1), ax])
            rest = api.stack([_i64(g, 0), ax])
        zeros = api.zeros(api.stack([api.shape(sp.indices)[0], _i64(g, 1)]), dtype=_INT64)
        before = api_math.slice(sp.indices, [0, 0], cut_cols)
        after = api_math.slice(sp.indices, rest, [-1, -1])
        indices = api.concat([before, zeros, after], 1)
        shape = api.concat([api_math.slice(sp.dense_shape, [0], cut), _i64(g, [1]),
                            api_math.slice(sp.dense_shape, cut, [-1])], 0)
        return SparseTensor(indices, api.identity(sp.values), shape)


def _count_arg(g, value, what: str):
    """num_rows / num_columns as an int64 scalar tensor (a tensor of another dtype is
    cast, as TF does).

    Raises:
        TypeError: it is neither an int nor a tensor.
    """
    if _is_int(value):
        return _i64(g, int(value))
    if isinstance(value, _g.Tensor):
        return value if value.dtype == _INT64 else api.cast(value, _INT64)
    raise TypeError(f"{what} must be an integer value, got {type(value).__name__}")


def eye(num_rows, num_columns=None, dtype="float32", name=None) -> SparseTensor:
    """The (num_rows, num_columns) SparseTensor with ones of `dtype` on the diagonal
    (TF's tf.sparse.eye; num_columns defaults to num_rows).

    Raises:
        TypeError: num_rows or num_columns is neither an int nor a tensor.
    """
    g = _g.get_default_graph()
    with g.name_scope(name or "eye"):
        rows = _count_arg(g, num_rows, "num_rows")
        cols = rows if num_columns is None else _count_arg(g, num_columns, "num_columns")
        if _is_int(num_rows) and (num_columns is None or _is_int(num_columns)):
            # sizes known while building: the entry count is static, as in TF
            side = int(num_rows) if num_columns is None else min(int(num_rows),
                                                                 int(num_columns))
            diag = _i64(g, np.arange(max(side, 0)))
        else:
            diag = api_extra.range(api.minimum(rows, cols), dtype=_INT64)
        return SparseTensor(api.stack([diag, diag], axis=1), api.ones_like(diag, dtype=dtype),
                            api.stack([rows, cols]))


# --------------------------------------------------------------------------- bincount

def _count_parts(values, weights, axis, what):
    """(flat values, their batch ids or None for one batch, flat weights or None,
    number of batches or None) of sparse.bincount's input.

    Raises:
        ValueError: weights is of the wrong kind, or the input's rank does not suit
            axis -1.
    """
    if isinstance(values, SparseTensor):
        if weights is not None:
            if isinstance(weights, SparseTensorValue):
                weights = SparseTensor.from_value(weights)
            if not isinstance(weights, SparseTensor):
                raise ValueError(f"Argument `weights` must be a SparseTensor if `values` "
                                 f"is a SparseTensor. Received weights={weights} of type: "
                                 f"{type(weights).__name__}")
            w = weights.values
            if weights.dense_shape is not values.dense_shape:
                w = _checked(w, api.equal(weights.dense_shape, values.dense_shape),
                             "'weights' and 'values' must have the same dense shape.")
            if weights.indices is not values.indices:
                same = api.equal(api.shape(weights.indices), api.shape(values.indices))
                w = _checked(w, same, "'weights' and 'values' must have the same indices.")
            weights = w
        rank = values.shape.ndims
        if axis == 0 or rank == 1:
            return values.values, None, weights, None
        if rank is not None and rank != 2:
            raise ValueError(f"{what}: axis=-1 needs a 1-D or 2-D input, got rank {rank}")
        return values.values, values.indices[:, 0], weights, values.dense_shape[0]
    if weights is not None and not isinstance(weights, _g.Tensor):
        weights = _g.get_default_graph().convert(weights)
    rank = None if values.shape is None else len(values.shape)
    if axis == 0 or rank == 1:
        flat_w = None if weights is None else api.reshape(weights, [-1])
        return api.reshape(values, [-1]), None, flat_w, None
    if rank != 2:
        raise ValueError(f"{what}: axis=-1 needs a 1-D or 2-D input, got rank {rank}")
    rows = api.shape(values)[0]
    width = api.shape(values)[1]
    batch = api_math.floordiv(api_extra.range(rows * width, dtype=_INT64), width)
    flat_w = None if weights is None else api.reshape(weights, [-1])
    return api.reshape(values, [-1]), batch, flat_w, api.cast(rows, _INT64)


def bincount(values, weights=None, axis=0, minlength=None, maxlength=None,
             binary_output=False, name=None) -> SparseTensor:
    """The counts of each non-negative integer of `values` (a tensor or a
    SparseTensor, whose absent entries are not counted) as a SparseTensor (TF's
    tf.sparse.bincount): axis 0 counts everything into one (size,) vector, axis -1
    counts each row of a 2-D input into (rows, size). With weights (values' shape, or
    a SparseTensor of its indices) each occurrence adds its weight; binary_output
    gives 1 for each present value. Values >= maxlength are dropped; size is
    maxlength when > 0, else max(largest value + 1, minlength). The counts have the
    weights' dtype, else values'. Negative values fail the run.

    Raises:
        ValueError: weights and binary_output are both given, axis is not 0 or -1,
            weights is not a SparseTensor for sparse values, or the rank does not suit
            axis -1.
        TypeError: values are not integers.
    """
    what = "sparse.bincount"
    if isinstance(values, SparseTensorValue):
        values = SparseTensor.from_value(values)
    g = values.graph if isinstance(values, (SparseTensor, _g.Tensor)) else \
        _g.get_default_graph()
    with g.name_scope(name or "count"):
        if not isinstance(values, SparseTensor):
            values = g.convert(values)
        if weights is not None and binary_output:
            raise ValueError("Arguments `binary_output` and `weights` are mutually "
                             "exclusive. Please specify only one.")
        axis = 0 if axis is None else axis
        if axis not in (0, -1):
            raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 "
                             f"are currently supported.")
        if values.dtype not in (DType.INT32, DType.INT64):
            raise TypeError(f"{what}: values must be int32 or int64, got {values.dtype.name}")
        flat, batch, w, batches = _count_parts(values, weights, axis, what)
        out_dtype = values.dtype if w is None else w.dtype
        flat = api.cast(flat, _INT64)
        flat = _checked(flat, api.greater_equal(flat, _i64(g, 0)),
                        "Input values must all be non-negative")
        if maxlength is not None and int(maxlength) >= 0:
            keep = api.reshape(api.where(api.less(flat, _i64(g, int(maxlength)))), [-1])
            flat = api.gather(flat, keep)
            batch = None if batch is None else api.gather(batch, keep)
            w = None if w is None else api.gather(w, keep)
        # TF's kernel starts its running max at -1: no values, size 0 (or minlength)
        top = api.reduce_max(api.concat([flat, _i64(g, [-1])], 0))
        if maxlength is not None and int(maxlength) > 0:
            size = _i64(g, int(maxlength))
        else:
            size = top + 1
            if minlength is not None:
                size = api.maximum(size, _i64(g, int(minlength)))
        # one sorted key per (batch, value): Unique sorts and counts them
        key = flat if batch is None else batch * (top + 1) + flat
        uniq, _, inverse, counts = g.op("Unique", [key], {"sorted": 1}, num_outputs=4)
        if binary_output:
            out_values = api.ones_like(uniq, dtype=out_dtype)
        elif w is None:
            out_values = api.cast(counts, out_dtype)
        else:
            zeros = api.zeros(api.shape(uniq), dtype=w.dtype)
            out_values = g.op("ScatterElements", [zeros, inverse, w],
                              {"axis": 0, "reduction": "add"})
        if batch is None:
            return SparseTensor(api.reshape(uniq, [-1, 1]), out_values,
                                api.reshape(size, [1]))
        stride = top + 1
        indices = api.stack([api_math.floordiv(uniq, stride), api_math.floormod(uniq, stride)],
                            axis=1)
        return SparseTensor(indices, out_values, api.stack([batches, size]))


_TOP_LEVEL = {"sparse_mask": mask, "sparse_merge": merge, "sparse_reset_shape": reset_shape,
              "sparse_split": split}

NAMESPACE = {"bincount": bincount, "expand_dims": expand_dims, "eye": eye, "mask": mask,
             "merge": merge, "reset_shape": reset_shape, "split": split}

__all__ = sorted(_TOP_LEVEL)

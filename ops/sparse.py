"""Operators: TF's sparse tensor ops (onegraph domain), a SparseTensor given as its three
tensors (indices int64 (N, rank), values (N,), dense_shape int64 (rank,)).

Names, inputs, outputs, attributes and refusal messages are TF's raw ops'. Like TF's
kernels, the ops that merge two sparse tensors (SparseAdd) expect their indices in
row-major order; the others take any order. `*Grad` ops are the helpers the gradient
rules of ops/sparse_grad.py emit (SparseAddGrad is TF's; the others are onegraph's).
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError
from .registry import TensorInfo, define

DOMAIN = "onegraph"


# ---------------------------------------------------------------- shared checks

def _fmt(values) -> str:
    """A vector as TF prints an index or a TensorShape: "[1,2]"."""
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _int_array(x, what: str) -> np.ndarray:
    """`x` as an int64 array.

    Raises:
        ExecutionError: x is not an integer tensor.
    """
    x = np.asarray(x)
    if x.dtype.kind not in "iu":
        raise ExecutionError(f"{what} must be an integer tensor, got {x.dtype}")
    return x.astype(np.int64, copy=False)


def _sparse(indices, values, shape, prefix: str = ""):
    """Check a SparseTensor's three tensors and return them as arrays.

    Raises:
        ExecutionError: indices is not a matrix, values not a vector, shape not a
            vector, or their sizes disagree.
    """
    ind = _int_array(indices, f"{prefix}indices")
    val = np.asarray(values)
    shp = _int_array(shape, f"{prefix}shape")
    if ind.ndim != 2:
        raise ExecutionError(f"Input {prefix}indices should be a matrix but received shape "
                             f"{_fmt(ind.shape)}")
    if val.ndim != 1:
        raise ExecutionError(f"Input {prefix}values should be a vector but received shape "
                             f"{_fmt(val.shape)}")
    if shp.ndim != 1:
        raise ExecutionError(f"Input {prefix}shape should be a vector but received shape "
                             f"{_fmt(shp.shape)}")
    if ind.shape[0] != val.shape[0]:
        raise ExecutionError(f"Number of rows of {prefix}indices ({ind.shape[0]}) does not "
                             f"match number of entries in {prefix}values ({val.shape[0]})")
    if ind.shape[1] != shp.shape[0]:
        raise ExecutionError(f"Number of columns of {prefix}indices ({ind.shape[1]}) does not "
                             f"match the number of elements of {prefix}shape "
                             f"({shp.shape[0]})")
    if np.any(shp < 0):
        raise ExecutionError(f"{prefix}shape has a negative dimension: {_fmt(shp)}")
    return ind, val, shp


def _scalar(x, what: str) -> np.ndarray:
    """`x` as a 0-d array.

    Raises:
        ExecutionError: x holds other than one element in a scalar shape.
    """
    x = np.asarray(x)
    if x.ndim != 0:
        raise ExecutionError(f"{what} should be a scalar but received shape {_fmt(x.shape)}")
    return x


def _check_bounds(ind: np.ndarray, shp: np.ndarray, what: str = "indices") -> None:
    """Refuse an index outside the dense shape (TF's "is out of bounds" message)."""
    bad = np.any((ind < 0) | (ind >= shp), axis=1)
    if bad.any():
        n = int(np.argmax(bad))
        raise ExecutionError(f"{what}[{n}] = {_fmt(ind[n])} is out of bounds: need 0 <= "
                             f"index < {_fmt(shp)}")


def _row_cmp(ind: np.ndarray) -> np.ndarray:
    """Sign (-1, 0, 1) of each index row against the previous one in row-major order:
    the sign of the first column where they differ (length N-1)."""
    if ind.shape[0] < 2:
        return np.zeros(0, np.int64)
    diff = np.sign(ind[1:] - ind[:-1])
    if diff.shape[1] == 0:
        return np.zeros(diff.shape[0], np.int64)
    first = np.argmax(diff != 0, axis=1)
    return diff[np.arange(diff.shape[0]), first]


def _validate_indices(ind: np.ndarray, shp: np.ndarray) -> None:
    """TF's SparseTensor::IndicesValid: every index in bounds, in row-major order and
    unique; the first offending index (bounds before order before repetition) is named.

    Raises:
        ExecutionError: with TF's message.
    """
    oob = np.any((ind < 0) | (ind >= shp), axis=1)
    cmp = np.concatenate([[1], _row_cmp(ind)])
    bad = oob | (cmp <= 0)
    if not bad.any():
        return
    n = int(np.argmax(bad))
    where = f"indices[{n}] = {_fmt(ind[n])}"
    if oob[n]:
        raise ExecutionError(f"{where} is out of bounds: need 0 <= index < {_fmt(shp)}")
    if cmp[n] < 0:
        raise ExecutionError(f"{where} is out of order. Many sparse ops require sorted "
                             "indices.\n    Use `tf.sparse.reorder` to create a correctly "
                             "ordered copy.")
    raise ExecutionError(f"{where} is repeated")


def _row_major_order(ind: np.ndarray) -> np.ndarray:
    """The stable permutation putting index rows in row-major order."""
    if ind.shape[1] == 0:
        return np.arange(ind.shape[0])
    return np.lexsort(ind.T[::-1])


def _linear(ind: np.ndarray, shp: np.ndarray) -> np.ndarray:
    """Row-major linear positions of in-bounds index rows in a dense tensor of `shp`."""
    strides = np.ones(len(shp), np.int64)
    if len(shp) > 1:
        strides[:-1] = np.cumprod(shp[::-1][:-1])[::-1]
    return ind @ strides if len(shp) else np.zeros(ind.shape[0], np.int64)


def _unlinear(pos: np.ndarray, shp: np.ndarray) -> np.ndarray:
    """Index rows (N, rank) of row-major linear positions in a dense tensor of `shp`."""
    out = np.zeros((pos.shape[0], len(shp)), np.int64)
    rest = pos.copy()
    for d in range(len(shp) - 1, -1, -1):  # a loop over dims, not elements
        size = max(int(shp[d]), 1)
        out[:, d] = rest % size
        rest //= size
    return out


def _lookup(table: np.ndarray, query: np.ndarray) -> np.ndarray:
    """For each row of `query`, the position of the same row in `table` (-1 if none)."""
    n = table.shape[0]
    if query.shape[0] == 0:
        return np.zeros(0, np.int64)
    both = np.concatenate([table, query]).reshape(n + query.shape[0], -1)
    _, inv = np.unique(both, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    pos = np.full(int(inv.max()) + 1, -1, np.int64)
    pos[inv[:n][::-1]] = np.arange(n)[::-1]  # the first occurrence wins
    return pos[inv[n:]]


def _info(dtype, shape=None):
    return TensorInfo(None if dtype is None else np.dtype(dtype), shape)


def _dtype(inputs, k):
    return inputs[k].dtype if inputs[k] is not None else None


def _known(info) -> np.ndarray | None:
    return None if info is None or info.value is None else np.asarray(info.value)


def _dim(info, k: int):
    """Dim k of a tensor's known static shape, else None."""
    if info is None or info.shape is None or len(info.shape) <= k:
        return None
    return info.shape[k]


def _rank(indices, shape):
    """A sparse tensor's rank from its indices' columns or its shape's length."""
    rank = _dim(indices, 1)
    return rank if rank is not None else _dim(shape, 0)


def _shape_info(rank, value=None):
    """The int64 (rank,) dense-shape output, its value when known while building."""
    return TensorInfo(np.dtype(np.int64), (rank,),
                      None if value is None else np.asarray(value, np.int64))


def _dims_of(shape_value, rank):
    """The dense dims a known shape value gives (-1 unknown), else `rank` Nones."""
    if shape_value is not None:
        return tuple(int(d) if d >= 0 else None for d in shape_value.reshape(-1))
    return None if rank is None else (None,) * rank


# ---------------------------------------------------------------- SparseToDense

def _sparse_to_dense(inputs, attrs, ctx):
    """TF's SparseToDense: a dense tensor of output_shape holding default_value, with
    sparse_values written at sparse_indices (a scalar, vector or matrix)."""
    ind = _int_array(inputs[0], "sparse_indices")
    shp = _int_array(inputs[1], "output_shape")
    values, default = np.asarray(inputs[2]), np.asarray(inputs[3])
    if ind.ndim > 2:
        raise ExecutionError(f"sparse_indices should be a scalar, vector, or matrix, got "
                             f"shape {_fmt(ind.shape)}")
    num_elems = ind.shape[0] if ind.ndim > 0 else 1
    num_dims = ind.shape[1] if ind.ndim > 1 else 1
    if shp.ndim > 1:
        raise ExecutionError(f"output_shape should be a scalar or vector, got shape "
                             f"{_fmt(shp.shape)}")
    shp = shp.reshape(-1)
    if shp.size != num_dims:
        raise ExecutionError(f"output_shape has incorrect number of elements: {shp.size} "
                             f"should be: {num_dims}")
    if np.any(shp < 0):
        raise ExecutionError(f"output_shape has a negative dimension: {_fmt(shp)}")
    if not (values.ndim == 0 or (values.ndim == 1 and values.size == num_elems)):
        raise ExecutionError(f"sparse_values has incorrect shape {_fmt(values.shape)}, "
                             f"should be [] or [{num_elems}]")
    if default.ndim != 0:
        raise ExecutionError(f"default_value should be a scalar, got shape "
                             f"{_fmt(default.shape)}")
    ind = ind.reshape(num_elems, num_dims)
    if attrs["validate_indices"]:
        _validate_indices(ind, shp)
    else:
        _check_bounds(ind, shp)
    out = np.full(tuple(shp), default, dtype=values.dtype)
    # later entries win over earlier repeats, as TF's sequential scatter
    out.reshape(-1)[_linear(ind, shp)] = values
    return (out,)


def _sparse_to_dense_infer(attrs, inputs):
    shp = _known(inputs[1])
    shape = tuple(int(d) for d in shp.reshape(-1)) if shp is not None else None
    if shape is None and inputs[1].shape is not None and len(inputs[1].shape) == 1 \
            and inputs[1].shape[0] is not None:
        shape = (None,) * inputs[1].shape[0]
    return [_info(_dtype(inputs, 2), shape)]


# ---------------------------------------------------------------- SparseTensorDenseMatMul

def _matmul_operands(inputs, attrs):
    """Checked (m, k, values, b, out_rows) of A(^T) @ B(^T); raises ExecutionError with
    TF's messages."""
    ind, val, shp = _sparse(inputs[0], inputs[1], inputs[2], "a_")
    b = np.asarray(inputs[3])
    if shp.size != 2:
        raise ExecutionError(f"Tensor 'a_shape' is not a vector of 2 elements, got "
                             f"{_fmt(shp)}")
    if b.ndim != 2:
        raise ExecutionError(f"Tensor 'b' is not a matrix, got shape {_fmt(b.shape)}")
    adj_a, adj_b = bool(attrs["adjoint_a"]), bool(attrs["adjoint_b"])
    if adj_b:
        b = b.T
    outer_left, inner_left = (shp[1], shp[0]) if adj_a else (shp[0], shp[1])
    if inner_left != b.shape[0]:
        raise ExecutionError(
            f"Cannot multiply A and B because inner dimension does not match: {inner_left} "
            f"vs. {b.shape[0]}.  Did you forget a transpose?  Dimensions of A: [{shp[0]}, "
            f"{shp[1]}).  Dimensions of B: {_fmt(np.asarray(inputs[3]).shape)}")
    lhs, rhs = (1, 0) if adj_a else (0, 1)
    m, k = ind[:, lhs], ind[:, rhs]
    bad_k = (k < 0) | (k >= b.shape[0])
    bad_m = (m < 0) | (m >= outer_left)
    bad = bad_k | bad_m
    if bad.any():
        i = int(np.argmax(bad))
        if bad_k[i]:
            raise ExecutionError(f"k ({k[i]}) from index[{i},{rhs}] out of bounds "
                                 f"(>={b.shape[0]})")
        raise ExecutionError(f"m ({m[i]}) from index[{i},{lhs}] out of bounds "
                             f"(>={outer_left})")
    return m, k, val, b, int(outer_left)


def _sparse_dense_matmul(inputs, attrs, ctx):
    """TF's SparseTensorDenseMatMul: op(A) @ op(B) for a sparse matrix A (repeated
    indices add) and a dense B, op being the transpose where adjoint_* is set."""
    m, k, val, b, rows = _matmul_operands(inputs, attrs)
    dtype = np.result_type(val.dtype, b.dtype)
    out = np.zeros((rows, b.shape[1]), dtype)
    np.add.at(out, m, val[:, None].astype(dtype) * b[k])
    return (out,)


def _sparse_dense_matmul_infer(attrs, inputs):
    """(rows of op(A), columns of op(B)): A's from its shape's value when known."""
    a_dims = _dims_of(_known(inputs[2]), 2) or (None, None)
    rows = a_dims[1 if int(attrs.get("adjoint_a", 0)) else 0] if len(a_dims) == 2 else None
    cols = _dim(inputs[3], 0 if int(attrs.get("adjoint_b", 0)) else 1)
    return [_info(_dtype(inputs, 1), (rows, cols))]


def _sparse_dense_matmul_grad_values(inputs, attrs, ctx):
    """d(loss)/d(a_values) of SparseTensorDenseMatMul given the output gradient: for
    each entry (m, k), the dot product of grad[m] and op(B)[k] (TF's rule)."""
    m, k, val, b, _ = _matmul_operands(inputs[:4], attrs)
    grad = np.asarray(inputs[4])
    return (np.sum(grad[m] * b[k], axis=1).astype(val.dtype),)


# ---------------------------------------------------------------- SparseAdd

def _same_shapes(a_shp, b_shp) -> None:
    if a_shp.size != b_shp.size:
        raise ExecutionError(f"Operands do not have the same ranks; got shapes: "
                             f"{_fmt(a_shp)} and {_fmt(b_shp)}")
    bad = np.nonzero(a_shp != b_shp)[0]
    if bad.size:
        d = int(bad[0])
        raise ExecutionError(f"Operands' shapes do not match: got {a_shp[d]} and "
                             f"{b_shp[d]} for dimension {d}")


def _sparse_add(inputs, attrs, ctx):
    """TF's SparseAdd of two row-major sparse tensors: the union of their entries,
    those present in both summed and kept only when |sum| >= thresh (entries of one
    operand alone are always kept, as TF's merge does)."""
    a_ind, a_val, a_shp = _sparse(inputs[0], inputs[1], inputs[2], "a_")
    b_ind, b_val, b_shp = _sparse(inputs[3], inputs[4], inputs[5], "b_")
    thresh = _scalar(inputs[6], "The magnitude threshold")
    _same_shapes(a_shp, b_shp)
    if a_val.dtype != b_val.dtype:
        raise ExecutionError(f"SparseAdd: a_values is {a_val.dtype}, b_values "
                             f"{b_val.dtype}")
    ind = np.concatenate([a_ind, b_ind])
    val = np.concatenate([a_val, b_val])
    order = _row_major_order(ind)  # stable: a's entry precedes b's equal one
    ind, val = ind[order], val[order]
    starts = np.concatenate([[0], np.nonzero(_row_cmp(ind) != 0)[0] + 1]) \
        if ind.shape[0] else np.zeros(0, np.int64)
    sums = np.add.reduceat(val, starts) if starts.size else val[:0]
    counts = np.diff(np.append(starts, ind.shape[0]))
    keep = (counts == 1) | (np.abs(sums) >= thresh)
    return (ind[starts][keep], sums[keep].astype(val.dtype), a_shp.copy())


def _sparse_add_infer(attrs, inputs):
    rank = _rank(inputs[0], inputs[2])
    return [_info(np.int64, (None, rank)), _info(_dtype(inputs, 1), (None,)),
            _shape_info(rank, _known(inputs[2]))]


def _sparse_add_grad(inputs, attrs, ctx):
    """TF's SparseAddGrad: the sum's value gradient routed back to the entries of a
    and b at the same index (zero where the sum dropped it)."""
    grad = np.asarray(inputs[0])
    a_ind, b_ind, s_ind = (_int_array(inputs[k], n) for k, n in
                           ((1, "a_indices"), (2, "b_indices"), (3, "sum_indices")))
    for what, x in (("a_indices", a_ind), ("b_indices", b_ind), ("sum_indices", s_ind)):
        if x.ndim != 2:
            raise ExecutionError(f"Input {what} should be a matrix but received shape "
                                 f"{_fmt(x.shape)}")
    if grad.shape != (s_ind.shape[0],):
        raise ExecutionError(f"backprop_val_grad has shape {_fmt(grad.shape)}, need "
                             f"[{s_ind.shape[0]}] (one per sum entry)")
    out = []
    for ind in (a_ind, b_ind):
        pos = _lookup(s_ind, ind)
        g = np.zeros(ind.shape[0], grad.dtype)
        g[pos >= 0] = grad[pos[pos >= 0]]
        out.append(g)
    return tuple(out)


# ---------------------------------------------------------------- SparseTensorDenseAdd

def _sparse_dense_add(inputs, attrs, ctx):
    """TF's SparseTensorDenseAdd: the dense b plus the sparse a (repeats add), of b's
    shape, which must equal a's (no broadcasting)."""
    ind, val, shp = _sparse(inputs[0], inputs[1], inputs[2], "a_")
    b = np.asarray(inputs[3])
    if b.ndim != shp.size:
        raise ExecutionError(f"Dimensionality mismatch: a_shape has {shp.size} dims, b "
                             f"has {b.ndim}")
    bad = np.nonzero(np.asarray(b.shape, np.int64) != shp)[0]
    if bad.size:
        d = int(bad[0])
        raise ExecutionError(f"Dimension {d} does not equal (no broadcasting is "
                             f"supported): sparse side {shp[d]} vs dense side {b.shape[d]}")
    _check_bounds(ind, shp)
    out = b.copy()
    np.add.at(out.reshape(-1), _linear(ind, shp), val.astype(b.dtype))
    return (out,)


def _sparse_dense_add_infer(attrs, inputs):
    return [_info(_dtype(inputs, 3), inputs[3].shape)]


# ---------------------------------------------------------------- SparseReorder

def _sparse_reorder(inputs, attrs, ctx):
    """TF's SparseReorder: the entries in row-major order (stable among repeats)."""
    ind, val, _ = _sparse(inputs[0], inputs[1], inputs[2], "input_")
    order = _row_major_order(ind)
    return (ind[order], val[order])


def _sparse_reorder_infer(attrs, inputs):
    return [_info(np.int64, inputs[0].shape), _info(_dtype(inputs, 1), inputs[1].shape)]


def _sparse_reorder_grad(inputs, attrs, ctx):
    """Values gradient of SparseReorder: the output gradient put back in input order."""
    ind = _int_array(inputs[0], "input_indices")
    grad = np.asarray(inputs[1])
    if ind.ndim != 2 or grad.shape != (ind.shape[0],):
        raise ExecutionError(f"SparseReorderGrad: indices {_fmt(ind.shape)} and gradient "
                             f"{_fmt(grad.shape)} do not agree")
    out = np.empty_like(grad)
    out[_row_major_order(ind)] = grad
    return (out,)


# ---------------------------------------------------------------- SparseReshape

def _sparse_reshape(inputs, attrs, ctx):
    """TF's SparseReshape: the same entries indexed in new_shape (one -1 inferred)."""
    ind = _int_array(inputs[0], "input_indices")
    shp = _int_array(inputs[1], "input_shape")
    new = _int_array(inputs[2], "new_shape")
    if ind.ndim != 2:
        raise ExecutionError(f"Input indices should be a matrix but received shape "
                             f"{_fmt(ind.shape)}")
    if shp.ndim != 1:
        raise ExecutionError(f"Input shape should be a vector but received shape "
                             f"{_fmt(shp.shape)}")
    if new.ndim != 1:
        raise ExecutionError(f"Target shape should be a vector but received shape "
                             f"{_fmt(new.shape)}")
    if ind.shape[1] != shp.size:
        raise ExecutionError(f"Input tensor rank must match input shape length, got "
                             f"{ind.shape[1]} and {shp.size}")
    dense_size = int(np.prod(shp))
    unknown = np.nonzero(new == -1)[0]
    if unknown.size > 1:
        raise ExecutionError(f"only one output dimension may be -1, not both {unknown[0]} "
                             f"and {unknown[1]}")
    neg = np.nonzero(new < -1)[0]
    if neg.size:
        raise ExecutionError(f"size {neg[0]} must be non-negative, not {new[neg[0]]}")
    out = np.where(new == -1, 1, new)
    product = int(np.prod(out))
    if unknown.size:
        if product <= 0:
            raise ExecutionError("reshape cannot infer the missing input size for an empty "
                                 "tensor unless all specified input sizes are non-zero")
        missing = dense_size // product
        if product * missing != dense_size:
            raise ExecutionError(
                f"Input to reshape is a SparseTensor with {dense_size} dense values, but the "
                f"requested shape requires a multiple of {product}. input_shape={_fmt(shp)} "
                f"output_shape={_fmt(out)}")
        out[unknown[0]] = missing
    if int(np.prod(out)) != dense_size:
        raise ExecutionError(
            f"Input to reshape is a tensor with {dense_size} dense values, but the requested "
            f"shape has {int(np.prod(out))}. input_shape={_fmt(shp)} output_shape={_fmt(out)}")
    _check_bounds(ind, shp, "input_indices")
    return (_unlinear(_linear(ind, shp), out), out)


def _sparse_reshape_infer(attrs, inputs):
    rank = _dim(inputs[2], 0)
    new, old = _known(inputs[2]), _known(inputs[1])
    value = None
    if new is not None and (old is not None or not np.any(new.reshape(-1) < 0)):
        value = new.reshape(-1).astype(np.int64)
        if old is not None and np.sum(value < 0) == 1 and np.prod(value[value >= 0]) > 0:
            value[value < 0] = int(np.prod(old)) // int(np.prod(value[value >= 0]))
        if np.any(value < 0):
            value = None
    return [_info(np.int64, (_dim(inputs[0], 0), rank)), _shape_info(rank, value)]


# ---------------------------------------------------------------- SparseReduce*

def _reduce_axes(axes, rank: int) -> np.ndarray:
    """Reduction axes made non-negative, sorted and unique.

    Raises:
        ExecutionError: an axis outside [-rank, rank) (TF's message).
    """
    axes = _int_array(axes, "reduction_axes").reshape(-1)
    bad = np.nonzero((axes < -rank) | (axes >= rank))[0]
    if bad.size:
        raise ExecutionError(f"Invalid reduction dimension {axes[bad[0]]}, for input with "
                             f"{rank} dimensions.")
    return np.unique(np.where(axes < 0, axes + rank, axes))


def _reduce_groups(inputs):
    """(group of each entry, values, kept-dims index of each group, kept shape with 1s
    for reduced dims, kept dims mask) of a SparseReduce* op."""
    ind, val, shp = _sparse(inputs[0], inputs[1], inputs[2], "input_")
    axes = _reduce_axes(inputs[3], shp.size)
    reduced = np.zeros(shp.size, bool)
    reduced[axes] = True
    _check_bounds(ind, shp, "input_indices")
    kept_shape = np.where(reduced, 1, shp)
    keys = np.where(reduced, 0, ind)
    lin = _linear(keys, kept_shape)
    uniq, group = np.unique(lin, return_inverse=True)
    return group.reshape(-1), val, uniq, kept_shape, reduced


def _group_reduce(group, val, count: int, mode: str) -> np.ndarray:
    if mode == "sum":
        out = np.zeros(count, val.dtype)
        np.add.at(out, group, val)
        return out
    low = -np.inf if val.dtype.kind == "f" else np.iinfo(val.dtype).min
    out = np.full(count, low, val.dtype)
    np.maximum.at(out, group, val)
    return out


def _reduce_dense(mode):
    def kernel(inputs, attrs, ctx):
        """TF's SparseReduceSum/Max: reduce the present entries over reduction_axes to
        a dense tensor (positions no entry reaches hold 0)."""
        group, val, uniq, kept_shape, reduced = _reduce_groups(inputs)
        out = np.zeros(int(np.prod(kept_shape)), val.dtype)
        out[uniq] = _group_reduce(group, val, uniq.size, mode)
        shape = kept_shape if attrs["keep_dims"] else kept_shape[~reduced]
        return (out.reshape(tuple(shape)),)
    return kernel


def _reduce_sparse(mode):
    def kernel(inputs, attrs, ctx):
        """TF's SparseReduceSumSparse/MaxSparse: reduce the present entries over
        reduction_axes to a sparse tensor, one entry per reached position."""
        group, val, uniq, kept_shape, reduced = _reduce_groups(inputs)
        vals = _group_reduce(group, val, uniq.size, mode)
        ind = _unlinear(uniq.astype(np.int64), kept_shape)
        if not attrs["keep_dims"]:
            ind, kept_shape = ind[:, ~reduced], kept_shape[~reduced]
        return (ind, vals, kept_shape.astype(np.int64))
    return kernel


def _reduced_dims(attrs, inputs):
    """The reduction's output dims (None unknown), or None when the axes or the rank
    are unknown while building."""
    rank = _rank(inputs[0], inputs[2])
    axes = _known(inputs[3])
    if rank is None or axes is None:
        return None
    axes = axes.reshape(-1).astype(np.int64)
    if np.any((axes < -rank) | (axes >= rank)):
        return None  # the run raises TF's message
    axes = set(int(a) % rank for a in axes)
    dims = _dims_of(_known(inputs[2]), rank)
    keep = int(attrs.get("keep_dims", 0))
    return tuple(1 if d in axes else dims[d] for d in range(rank) if keep or d not in axes)


def _reduce_dense_infer(attrs, inputs):
    return [_info(_dtype(inputs, 1), _reduced_dims(attrs, inputs))]


def _reduce_sparse_infer(attrs, inputs):
    dims = _reduced_dims(attrs, inputs)
    rank = None if dims is None else len(dims)
    value = None if dims is None or None in dims else np.array(dims, np.int64)
    return [_info(np.int64, (None, rank)), _info(_dtype(inputs, 1), (None,)),
            _shape_info(rank, value)]


def _reduce_sum_grad(inputs, attrs, ctx):
    """Values gradient of SparseReduceSum (TF's rule): each entry gets the output
    gradient at the position it was summed into."""
    ind = _int_array(inputs[0], "input_indices")
    shp = _int_array(inputs[1], "input_shape")
    grad = np.asarray(inputs[3])
    axes = _reduce_axes(inputs[2], shp.size)
    kept = np.where(np.isin(np.arange(shp.size), axes), 1, shp)
    if grad.size != int(np.prod(kept)):
        raise ExecutionError(f"SparseReduceSumGrad: gradient of shape {_fmt(grad.shape)} "
                             f"does not fit the reduced shape {_fmt(kept)}")
    keys = np.where(np.isin(np.arange(shp.size), axes), 0, ind)
    return (grad.reshape(-1)[_linear(keys, kept)],)


# ---------------------------------------------------------------- SparseConcat

def _sparse_concat(inputs, attrs, ctx):
    """TF's SparseConcat of N sparse tensors (inputs: N indices, N values, N shapes)
    along concat_dim (negative counts from the end); the result is row-major."""
    n = int(attrs["N"])
    if n < 1 or len(inputs) != 3 * n:
        raise ExecutionError(f"SparseConcat: N={n} needs 3*N inputs (N indices, N values, "
                             f"N shapes), got {len(inputs)}")
    parts = [_sparse(inputs[i], inputs[n + i], inputs[2 * n + i]) for i in range(n)]
    first = parts[0][2]
    rank = first.size
    for i, (_, _, shp) in enumerate(parts):
        if shp.size != rank:
            raise ExecutionError(f"Ranks of all input tensors should match: shape[0] = "
                                 f"{_fmt(first)} vs. shape[{i}] = {_fmt(shp)}")
    dim = int(attrs["concat_dim"])
    if not -rank <= dim < rank:
        raise ExecutionError(f"Concat dimension must be in range [{-rank}, {rank}), got "
                             f"{dim}")
    dim = dim + rank if dim < 0 else dim
    for i, (_, _, shp) in enumerate(parts):
        bad = np.nonzero((shp != first) & (np.arange(rank) != dim))[0]
        if bad.size:
            d = int(bad[0])
            raise ExecutionError(f"Input shapes must match: expected {first[d]} for "
                                 f"dimension {d} but got {shp[d]} at position {i}")
    sizes = np.array([shp[dim] for _, _, shp in parts], np.int64)
    offsets = np.cumsum(sizes) - sizes
    ind = np.concatenate([p[0] for p in parts]).reshape(-1, rank)
    ind[:, dim] += np.repeat(offsets, [p[0].shape[0] for p in parts])
    val = np.concatenate([p[1] for p in parts])
    out_shape = first.copy()
    out_shape[dim] = sizes.sum()
    order = _row_major_order(ind)
    return (ind[order], val[order], out_shape)


def _sparse_concat_infer(attrs, inputs):
    n = int(attrs["N"])
    dtype = _dtype(inputs, n) if len(inputs) > n else None
    shapes = inputs[2 * n:3 * n]
    rank = next((r for r in (_rank(inputs[k], inputs[2 * n + k]) for k in range(n)
                             if len(inputs) == 3 * n) if r is not None), None)
    values = [_known(x) for x in shapes]
    total = None
    if rank and len(values) == n and all(v is not None and v.size == rank for v in values):
        axis = int(attrs["concat_dim"]) % rank
        total = values[0].reshape(-1).astype(np.int64).copy()
        total[axis] = sum(int(v.reshape(-1)[axis]) for v in values)
    return [_info(np.int64, (None, rank)), _info(dtype, (None,)), _shape_info(rank, total)]


# ---------------------------------------------------------------- SparseSlice

def _sparse_slice(inputs, attrs, ctx):
    """TF's SparseSlice: the entries inside [start, start + size) re-based to start, in
    input order; the output shape is the box clipped to the input's shape."""
    ind, val, shp = _sparse(inputs[0], inputs[1], inputs[2])
    start = _int_array(inputs[3], "start").reshape(-1)
    size = _int_array(inputs[4], "size").reshape(-1)
    if start.size != shp.size or size.size != shp.size:
        raise ExecutionError(f"Expected start and size of length {shp.size} (the input's "
                             f"rank), got {start.size} and {size.size}")
    if np.any(start < 0) or np.any(size < 0):
        raise ExecutionError(f"start and size must be non-negative, got {_fmt(start)} and "
                             f"{_fmt(size)}")
    end = np.minimum(start + size, shp)
    keep = np.all((ind >= start) & (ind < end), axis=1)
    out_shape = np.maximum(end - start, 0)
    return (ind[keep] - start, val[keep], out_shape)


def _sparse_slice_infer(attrs, inputs):
    rank = _rank(inputs[0], inputs[2])
    return [_info(np.int64, (None, rank)), _info(_dtype(inputs, 1), (None,)),
            _shape_info(rank)]


# ---------------------------------------------------------------- SparseFillEmptyRows

def _fill_empty_rows(inputs, attrs, ctx):
    """TF's SparseFillEmptyRows: the entries grouped by row (stable), each empty row
    given one entry [row, 0, ...] of default_value; also which rows were empty and
    where each input entry went."""
    ind, val, shp = _sparse(inputs[0], inputs[1], inputs[2])
    default = _scalar(inputs[3], "default_value")
    if shp.size < 1:
        raise ExecutionError("dense_shape must be at least rank 1")
    rows_n = int(shp[0])
    rows = ind[:, 0]
    bad = np.nonzero((rows < 0) | (rows >= rows_n))[0]
    if bad.size:
        i = int(bad[0])
        sign = "<" if rows[i] < 0 else ">="
        limit = 0 if rows[i] < 0 else rows_n
        raise ExecutionError(f"indices({i}, 0) is invalid: {rows[i]} {sign} {limit}")
    count = np.bincount(rows, minlength=rows_n)
    empty = count == 0
    slots = np.maximum(count, 1)
    offset = np.cumsum(slots) - slots
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    within = np.arange(rows.size) - (np.cumsum(count) - count)[sorted_rows]
    pos = np.empty(rows.size, np.int64)
    pos[order] = offset[sorted_rows] + within
    total = int(slots.sum()) if rows_n else 0
    out_ind = np.zeros((total, shp.size), np.int64)
    out_val = np.empty(total, val.dtype)
    out_ind[pos] = ind
    out_val[pos] = val
    out_ind[offset[empty], 0] = np.nonzero(empty)[0]
    out_val[offset[empty]] = default
    return (out_ind, out_val, empty, pos)


def _fill_empty_rows_infer(attrs, inputs):
    rows = _dims_of(_known(inputs[2]), None)
    return [_info(np.int64, (None, _rank(inputs[0], inputs[2]))),
            _info(_dtype(inputs, 1), (None,)),
            _info(np.bool_, (rows[0] if rows else None,)), _info(np.int64, (_dim(inputs[0], 0),))]


def _fill_empty_rows_grad(inputs, attrs, ctx):
    """TF's SparseFillEmptyRowsGrad: d_values is the gradient where each input entry
    went; d_default_value the sum over the filled-in entries."""
    rmap = _int_array(inputs[0], "reverse_index_map")
    grad = np.asarray(inputs[1])
    if rmap.ndim != 1 or grad.ndim != 1:
        raise ExecutionError("reverse_index_map and grad_values must be vectors")
    if np.any((rmap < 0) | (rmap >= grad.size)):
        raise ExecutionError(f"reverse_index_map holds an index outside [0, {grad.size})")
    filled = np.ones(grad.size, bool)
    filled[rmap] = False
    return (grad[rmap], np.asarray(grad[filled].sum(), grad.dtype))


# ---------------------------------------------------------------- SparseSoftmax

def _softmax_groups(ind):
    """The group (all dims but the last) of each entry, numbered 0..G-1."""
    if ind.shape[0] == 0:
        return np.zeros(0, np.int64), 0
    _, group = np.unique(ind[:, :-1], axis=0, return_inverse=True)
    group = group.reshape(-1)
    return group, int(group.max()) + 1


def _sparse_softmax(inputs, attrs, ctx):
    """TF's SparseSoftmax: a softmax over the present entries of each innermost row,
    values in input order."""
    ind, val, shp = _sparse(inputs[0], inputs[1], inputs[2], "sp_")
    if shp.size < 2:
        raise ExecutionError(f"SparseSoftmax needs a sparse tensor of rank >= 2, got "
                             f"shape {_fmt(shp)}")
    if val.dtype.kind != "f":
        raise ExecutionError(f"SparseSoftmax takes float values, got {val.dtype}")
    group, count = _softmax_groups(ind)
    top = np.full(count, -np.inf, val.dtype)
    np.maximum.at(top, group, val)
    e = np.exp(val - top[group])
    total = np.zeros(count, val.dtype)
    np.add.at(total, group, e)
    return ((e / total[group]).astype(val.dtype),)


def _sparse_softmax_grad(inputs, attrs, ctx):
    """Values gradient of SparseSoftmax (TF's rule): out * (grad - sum(out * grad)) over
    each innermost row."""
    ind = _int_array(inputs[0], "sp_indices")
    out, grad = np.asarray(inputs[1]), np.asarray(inputs[2])
    if ind.ndim != 2 or out.shape != (ind.shape[0],) or grad.shape != out.shape:
        raise ExecutionError("SparseSoftmaxGrad: indices, output and gradient do not agree")
    group, count = _softmax_groups(ind)
    dot = np.zeros(count, out.dtype)
    np.add.at(dot, group, out * grad)
    return (out * (grad - dot[group]),)


# ---------------------------------------------------------------- SparseSparseMax/Min

def _sparse_sparse(pick):
    def kernel(inputs, attrs, ctx):
        """TF's SparseSparseMaximum/Minimum of two row-major sparse tensors of one
        shape: on the union of their indices, an absent side counting as 0."""
        a_ind, a_val, a_shp = _sparse(inputs[0], inputs[1], inputs[2], "a_")
        b_ind, b_val, b_shp = _sparse(inputs[3], inputs[4], inputs[5], "b_")
        _same_shapes(a_shp, b_shp)
        if a_val.dtype != b_val.dtype:
            raise ExecutionError(f"a_values is {a_val.dtype}, b_values {b_val.dtype}")
        ind = np.concatenate([a_ind, b_ind])
        lhs = np.concatenate([a_val, np.zeros_like(b_val)])
        rhs = np.concatenate([np.zeros_like(a_val), b_val])
        uniq, group = np.unique(ind, axis=0, return_inverse=True)
        group = group.reshape(-1)
        left = np.zeros(uniq.shape[0], a_val.dtype)
        right = np.zeros(uniq.shape[0], a_val.dtype)
        np.add.at(left, group, lhs)
        np.add.at(right, group, rhs)
        return (uniq.reshape(-1, a_shp.size).astype(np.int64), pick(left, right))
    return kernel


def _sparse_sparse_infer(attrs, inputs):
    return [_info(np.int64, (None, _rank(inputs[0], inputs[2]))),
            _info(_dtype(inputs, 1), (None,))]


# ---------------------------------------------------------------- SparseDenseCwise*

def _dense_at(ind, shp, dense, op_type):
    """The dense operand broadcast to the sparse shape, read at each index.

    Raises:
        ExecutionError: the dense shape does not broadcast to the sparse one.
    """
    dense = np.asarray(dense)
    shape = tuple(int(d) for d in shp)
    ok = dense.ndim <= len(shape) and all(
        d in (1, s) for d, s in zip(dense.shape[::-1], shape[::-1]))
    if not ok:
        raise ExecutionError(f"{op_type}: cannot broadcast the dense side "
                             f"{_fmt(dense.shape)} to the sparse side {_fmt(shp)}")
    _check_bounds(ind, shp, "sp_indices")
    full = np.broadcast_to(dense, shape)
    return full[tuple(ind.T)] if len(shape) else np.broadcast_to(full, ind.shape[:1])


def _truncating_divide(a, b):
    if a.dtype.kind in "iu":
        if np.any(b == 0):
            raise ExecutionError("Integer division by zero")
        q = np.abs(a) // np.abs(b)  # C++'s division truncates toward zero
        return (np.sign(a) * np.sign(b) * q).astype(a.dtype)
    return a / b


_CWISE = {"SparseDenseCwiseAdd": np.add, "SparseDenseCwiseMul": np.multiply,
          "SparseDenseCwiseDiv": _truncating_divide}


def _cwise(op_type):
    def kernel(inputs, attrs, ctx):
        """TF's SparseDenseCwise{Add,Mul,Div}: the op of each present value and the
        dense operand (broadcast to the sparse shape) at its index."""
        ind, val, shp = _sparse(inputs[0], inputs[1], inputs[2], "sp_")
        dense = _dense_at(ind, shp, inputs[3], op_type)
        return (np.asarray(_CWISE[op_type](val, dense.astype(val.dtype))).astype(val.dtype),)
    return kernel


def _cwise_grad(inputs, attrs, ctx):
    """(d values, d dense) of SparseDenseCwiseMul/Div (TF's rule): the dense gradient
    sums each entry's part into the broadcast position it read."""
    ind, val, shp = _sparse(inputs[0], inputs[1], inputs[2], "sp_")
    dense, grad = np.asarray(inputs[3]), np.asarray(inputs[4])
    at = _dense_at(ind, shp, dense, "SparseDenseCwiseGrad")
    if attrs["mode"] == "mul":
        d_val, d_at = grad * at, grad * val
    else:
        d_val, d_at = grad / at, grad * (-val / (at * at))
    shape = tuple(int(d) for d in shp)
    lead = len(shape) - dense.ndim
    # the position read in the dense operand: broadcast dims (size 1) read index 0
    rows = np.where(np.array(dense.shape, np.int64) == 1, 0, ind[:, lead:])
    d_dense = np.zeros(dense.shape, dense.dtype)
    np.add.at(d_dense.reshape(-1), _linear(rows, np.array(dense.shape, np.int64)), d_at)
    return (d_val.astype(val.dtype), d_dense)


# ---------------------------------------------------------------- registry

_ADJ = [("adjoint_a", "int", 0), ("adjoint_b", "int", 0)]
_SP3 = ["input_indices", "input_values", "input_shape"]
_OUT3 = ["output_indices", "output_values", "output_shape"]

OPS = (
    define("SparseToDense", ["sparse_indices", "output_shape", "sparse_values",
                             "default_value"], ["dense"], _sparse_to_dense,
           attrs=[("validate_indices", "int", 1)], infer=_sparse_to_dense_infer,
           domain=DOMAIN, doc="TF's SparseToDense"),
    define("SparseTensorDenseMatMul", ["a_indices", "a_values", "a_shape", "b"], ["product"],
           _sparse_dense_matmul, attrs=_ADJ, infer=_sparse_dense_matmul_infer,
           domain=DOMAIN, doc="TF's SparseTensorDenseMatMul"),
    define("SparseTensorDenseMatMulGradValues", ["a_indices", "a_values", "a_shape", "b",
                                                 "grad"], ["a_values_grad"],
           _sparse_dense_matmul_grad_values, attrs=_ADJ,
           infer=lambda attrs, inputs: [_info(_dtype(inputs, 1), (None,))], domain=DOMAIN,
           doc="a_values gradient of SparseTensorDenseMatMul"),
    define("SparseAdd", ["a_indices", "a_values", "a_shape", "b_indices", "b_values",
                         "b_shape", "thresh"], ["sum_indices", "sum_values", "sum_shape"],
           _sparse_add, infer=_sparse_add_infer, domain=DOMAIN, doc="TF's SparseAdd"),
    define("SparseAddGrad", ["backprop_val_grad", "a_indices", "b_indices", "sum_indices"],
           ["a_val_grad", "b_val_grad"], _sparse_add_grad,
           infer=lambda attrs, inputs: [_info(_dtype(inputs, 0), (None,))] * 2,
           domain=DOMAIN, doc="TF's SparseAddGrad"),
    define("SparseTensorDenseAdd", ["a_indices", "a_values", "a_shape", "b"], ["output"],
           _sparse_dense_add, infer=_sparse_dense_add_infer, domain=DOMAIN,
           doc="TF's SparseTensorDenseAdd"),
    define("SparseReorder", _SP3, ["output_indices", "output_values"], _sparse_reorder,
           infer=_sparse_reorder_infer, domain=DOMAIN, doc="TF's SparseReorder"),
    define("SparseReorderGrad", ["input_indices", "grad"], ["input_values_grad"],
           _sparse_reorder_grad,
           infer=lambda attrs, inputs: [_info(_dtype(inputs, 1), inputs[1].shape)],
           domain=DOMAIN, doc="values gradient of SparseReorder"),
    define("SparseReshape", ["input_indices", "input_shape", "new_shape"],
           ["output_indices", "output_shape"], _sparse_reshape, infer=_sparse_reshape_infer,
           domain=DOMAIN, doc="TF's SparseReshape"),
    define("SparseReduceSum", _SP3 + ["reduction_axes"], ["output"], _reduce_dense("sum"),
           attrs=[("keep_dims", "int", 0)], infer=_reduce_dense_infer, domain=DOMAIN,
           doc="TF's SparseReduceSum"),
    define("SparseReduceSumSparse", _SP3 + ["reduction_axes"], _OUT3, _reduce_sparse("sum"),
           attrs=[("keep_dims", "int", 0)], infer=_reduce_sparse_infer, domain=DOMAIN,
           doc="TF's SparseReduceSumSparse"),
    define("SparseReduceMax", _SP3 + ["reduction_axes"], ["output"], _reduce_dense("max"),
           attrs=[("keep_dims", "int", 0)], infer=_reduce_dense_infer, domain=DOMAIN,
           doc="TF's SparseReduceMax"),
    define("SparseReduceMaxSparse", _SP3 + ["reduction_axes"], _OUT3, _reduce_sparse("max"),
           attrs=[("keep_dims", "int", 0)], infer=_reduce_sparse_infer, domain=DOMAIN,
           doc="TF's SparseReduceMaxSparse"),
    define("SparseReduceSumGrad", ["input_indices", "input_shape", "reduction_axes", "grad"],
           ["input_values_grad"], _reduce_sum_grad,
           infer=lambda attrs, inputs: [_info(_dtype(inputs, 3), (None,))], domain=DOMAIN,
           doc="values gradient of SparseReduceSum"),
    define("SparseConcat", ["inputs*"], _OUT3, _sparse_concat,
           attrs=[("concat_dim", "int"), ("N", "int")], infer=_sparse_concat_infer,
           domain=DOMAIN, doc="TF's SparseConcat (inputs: N indices, N values, N shapes)"),
    define("SparseSlice", ["indices", "values", "shape", "start", "size"], _OUT3,
           _sparse_slice, infer=_sparse_slice_infer, domain=DOMAIN, doc="TF's SparseSlice"),
    define("SparseFillEmptyRows", ["indices", "values", "dense_shape", "default_value"],
           ["output_indices", "output_values", "empty_row_indicator", "reverse_index_map"],
           _fill_empty_rows, infer=_fill_empty_rows_infer, domain=DOMAIN,
           doc="TF's SparseFillEmptyRows"),
    define("SparseFillEmptyRowsGrad", ["reverse_index_map", "grad_values"],
           ["d_values", "d_default_value"], _fill_empty_rows_grad,
           infer=lambda attrs, inputs: [_info(_dtype(inputs, 1), (None,)),
                                        _info(_dtype(inputs, 1), ())],
           domain=DOMAIN, doc="TF's SparseFillEmptyRowsGrad"),
    define("SparseSoftmax", ["sp_indices", "sp_values", "sp_shape"], ["output"],
           _sparse_softmax,
           infer=lambda attrs, inputs: [_info(_dtype(inputs, 1), (_dim(inputs[1], 0),))],
           domain=DOMAIN, doc="TF's SparseSoftmax"),
    define("SparseSoftmaxGrad", ["sp_indices", "output", "grad"], ["sp_values_grad"],
           _sparse_softmax_grad,
           infer=lambda attrs, inputs: [_info(_dtype(inputs, 1), (None,))], domain=DOMAIN,
           doc="values gradient of SparseSoftmax"),
    define("SparseSparseMaximum", ["a_indices", "a_values", "a_shape", "b_indices",
                                   "b_values", "b_shape"], ["output_indices", "output_values"],
           _sparse_sparse(np.maximum), infer=_sparse_sparse_infer, domain=DOMAIN,
           doc="TF's SparseSparseMaximum"),
    define("SparseSparseMinimum", ["a_indices", "a_values", "a_shape", "b_indices",
                                   "b_values", "b_shape"], ["output_indices", "output_values"],
           _sparse_sparse(np.minimum), infer=_sparse_sparse_infer, domain=DOMAIN,
           doc="TF's SparseSparseMinimum"),
) + tuple(
    define(name, ["sp_indices", "sp_values", "sp_shape", "dense"], ["output"], _cwise(name),
           infer=lambda attrs, inputs: [_info(_dtype(inputs, 1), (None,))], domain=DOMAIN,
           doc=f"TF's {name}") for name in _CWISE) + (
    define("SparseDenseCwiseGrad", ["sp_indices", "sp_values", "sp_shape", "dense", "grad"],
           ["sp_values_grad", "dense_grad"], _cwise_grad, attrs=[("mode", "string")],
           infer=lambda attrs, inputs: [_info(_dtype(inputs, 1), (None,)),
                                        _info(_dtype(inputs, 3), inputs[3].shape)],
           domain=DOMAIN, doc="gradients of SparseDenseCwiseMul/Div"),
)

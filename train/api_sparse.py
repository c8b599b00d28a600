"""TF1's sparse functions: og.sparse.* and their TF1 top-level names (sparse_add,
sparse_tensor_to_dense, sparse_reduce_sum, ...), the ops of ops/sparse.py wrapped
around og.SparseTensor (train/sparse_tensor.py), plus the compositions TF1 writes in
Python (retain, transpose, to_indicator, from_dense, concat of unequal shapes), and
edit_distance, string_split and tf.strings.split (ops/sparse_decode.py).

Each function takes SparseTensors (a SparseTensorValue is made constant) and returns
SparseTensors or dense tensors as TF1's does; a dense tensor where a sparse one is
needed is a TypeError naming the argument.
"""

from __future__ import annotations

from . import api, api_extra, api_math
from . import graph as _g
from .api_sparse_more import NAMESPACE as _MORE, _TOP_LEVEL as _MORE_TOP_LEVEL
from .api_sparse_segment import sparse_segment_mean, sparse_segment_sqrt_n, sparse_segment_sum
from .module_namespace import namespace
from .sparse_tensor import (SparseTensor, SparseTensorValue,
                            convert_to_tensor_or_sparse_tensor, sparse_placeholder)
from .sparse_tensor import sparse_argument as _sparse

_DOMAIN = "onegraph"


def _op(op_type: str, inputs, attrs=None, name=None, num_outputs=None):
    g = _g.get_default_graph()
    return g.op(op_type, inputs, attrs, name=name, domain=_DOMAIN, num_outputs=num_outputs)


def _parts(sp: SparseTensor) -> list:
    return [sp.indices, sp.values, sp.dense_shape]


# ------------------------------------------------------------------- dense <-> sparse

def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of a SparseTensor, `default_value` (0) where no entry is
    (TF1's tf.sparse.to_dense / tf.sparse_tensor_to_dense). Running it with indices
    out of range, or repeated or out of order when validate_indices, raises
    ExecutionError.

    Raises:
        TypeError: sp_input is not sparse.
    """
    sp = _sparse(sp_input, "sparse.to_dense")
    g = _g.get_default_graph()
    default = g.convert(0 if default_value is None else default_value)
    if default.dtype != sp.dtype:
        default = api.cast(default, sp.dtype)
    return _op("SparseToDense", [sp.indices, sp.dense_shape, sp.values, default],
               {"validate_indices": int(bool(validate_indices))}, name=name)


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    """A dense tensor of `output_shape` holding `sparse_values` at `sparse_indices`
    (a scalar, vector or (N, rank) matrix) and `default_value` elsewhere (TF1's
    tf.sparse_to_dense).

    Raises:
        TypeError: the indices or shape are not integers.
    """
    g = _g.get_default_graph()
    values = g.convert(sparse_values)
    default = g.convert(default_value)
    if default.dtype != values.dtype:
        default = api.cast(default, values.dtype)
    return _op("SparseToDense", [g.convert(sparse_indices), g.convert(output_shape), values,
                                 default],
               {"validate_indices": int(bool(validate_indices))}, name=name)


def from_dense(tensor, name=None) -> SparseTensor:
    """The SparseTensor of a dense tensor's non-zero entries, in row-major order (TF's
    tf.sparse.from_dense)."""
    g = _g.get_default_graph()
    tensor = g.convert(tensor)
    with g.name_scope(name or "dense_to_sparse"):
        zero = api.zeros_like(tensor)
        indices = api.where(api_extra.not_equal(tensor, zero))
        return SparseTensor(indices, api_extra.gather_nd(tensor, indices),
                            api.shape(tensor))


def to_indicator(sp_input, vocab_size, name=None):
    """A dense bool tensor (..., vocab_size): True at each row's ids (TF1's
    tf.sparse.to_indicator / tf.sparse_to_indicator; the last index dim is dropped
    and the values, ids in [0, vocab_size), take its place).

    Raises:
        TypeError: sp_input is not sparse.
    """
    sp = _sparse(sp_input, "sparse.to_indicator")
    g = _g.get_default_graph()
    with g.name_scope(name or "SparseToIndicator"):
        rank = api.shape(sp.dense_shape)[0]
        lead = api_math.slice(sp.indices, [0, 0], api.stack([-1, rank - 1]))
        ids = api.reshape(api.cast(sp.values, "int64"), [-1, 1])
        positions = api.concat([lead, ids], 1)
        shape = api.concat([api_math.slice(sp.dense_shape, [0], api.reshape(rank - 1, [1])),
                            api.reshape(api.cast(g.convert(vocab_size), "int64"), [1])], 0)
        ones = api.ones_like(sp.values, dtype="bool")
        out = _op("SparseToDense", [positions, shape, ones, g.convert(False)],
                  {"validate_indices": 0})
        if sp.shape.ndims is not None:
            size = vocab_size if isinstance(vocab_size, int) else None
            out.set_shape(sp.shape.as_list()[:-1] + [size])
        return out


# ------------------------------------------------------------------------- arithmetic

def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """The dense product of a rank-2 SparseTensor and a dense matrix (TF1's
    tf.sparse.sparse_dense_matmul / tf.sparse_tensor_dense_matmul); adjoint_* take
    the (conjugate) transpose.

    Raises:
        TypeError: sp_a is not sparse.
    """
    sp = _sparse(sp_a, "sparse.sparse_dense_matmul")
    return _op("SparseTensorDenseMatMul", _parts(sp) + [b],
               {"adjoint_a": int(bool(adjoint_a)), "adjoint_b": int(bool(adjoint_b))},
               name=name)


def add(a, b, threshold=0, thresh=None):
    """a + b (TF1's tf.sparse.add / tf.sparse_add): two SparseTensors give a
    SparseTensor (entries whose magnitude falls below `threshold` dropped); a sparse
    and a dense one give a dense tensor.

    Raises:
        TypeError: neither is sparse.
    """
    threshold = threshold if thresh is None else thresh
    a_sparse = isinstance(a, (SparseTensor, SparseTensorValue))
    b_sparse = isinstance(b, (SparseTensor, SparseTensorValue))
    if not a_sparse and not b_sparse:
        raise TypeError("sparse.add: at least one of a and b must be a SparseTensor")
    if a_sparse and b_sparse:
        a, b = _sparse(a, "sparse.add"), _sparse(b, "sparse.add")
        g = _g.get_default_graph()
        thresh_t = api.cast(g.convert(threshold), a.dtype)
        out = _op("SparseAdd", _parts(a) + _parts(b) + [thresh_t], num_outputs=3)
        return SparseTensor(*out)
    sp, dense = (_sparse(a, "sparse.add"), b) if a_sparse else (_sparse(b, "sparse.add"), a)
    return _op("SparseTensorDenseAdd", _parts(sp) + [dense])


def _elementwise(op_type: str, sp_a, sp_b, what: str) -> SparseTensor:
    a, b = _sparse(sp_a, what), _sparse(sp_b, what)
    indices, values = _op(op_type, _parts(a) + _parts(b), num_outputs=2)
    return SparseTensor(indices, values, a.dense_shape)


def maximum(sp_a, sp_b, name=None) -> SparseTensor:
    """The entrywise maximum of two SparseTensors of one shape (TF1's
    tf.sparse.maximum / tf.sparse_maximum; an absent entry counts as 0)."""
    return _elementwise("SparseSparseMaximum", sp_a, sp_b, "sparse.maximum")


def minimum(sp_a, sp_b, name=None) -> SparseTensor:
    """The entrywise minimum of two SparseTensors of one shape (TF1's
    tf.sparse.minimum / tf.sparse_minimum)."""
    return _elementwise("SparseSparseMinimum", sp_a, sp_b, "sparse.minimum")


def softmax(sp_input, name=None) -> SparseTensor:
    """Softmax over the present entries of each innermost row (TF1's
    tf.sparse.softmax / tf.sparse_softmax)."""
    sp = _sparse(sp_input, "sparse.softmax")
    return SparseTensor(sp.indices, _op("SparseSoftmax", _parts(sp), name=name),
                        sp.dense_shape)


# ---------------------------------------------------------------------------- shape

def reorder(sp_input, name=None) -> SparseTensor:
    """The same SparseTensor with its entries in row-major order (TF1's
    tf.sparse.reorder / tf.sparse_reorder)."""
    sp = _sparse(sp_input, "sparse.reorder")
    indices, values = _op("SparseReorder", _parts(sp), name=name, num_outputs=2)
    return SparseTensor(indices, values, sp.dense_shape)


def reshape(sp_input, shape, name=None) -> SparseTensor:
    """The SparseTensor with dense shape `shape` (one -1 inferred), entries moved as a
    row-major reshape moves them (TF1's tf.sparse.reshape / tf.sparse_reshape)."""
    sp = _sparse(sp_input, "sparse.reshape")
    g = _g.get_default_graph()
    indices, dense_shape = _op("SparseReshape", [sp.indices, sp.dense_shape,
                                                 api.cast(g.convert(shape), "int64")],
                               name=name, num_outputs=2)
    return SparseTensor(indices, sp.values, dense_shape)


def transpose(sp_input, perm=None, name=None) -> SparseTensor:
    """The SparseTensor with its dims permuted by `perm` (default: reversed), entries
    reordered (TF1's tf.sparse.transpose / tf.sparse_transpose)."""
    sp = _sparse(sp_input, "sparse.transpose")
    g = _g.get_default_graph()
    with g.name_scope(name or "SparseTranspose"):
        rank = sp.shape.ndims
        if perm is None:  # reversed: a constant when the rank is known while building
            perm = list(range(rank - 1, -1, -1)) if rank is not None else api_extra.range(
                api.shape(sp.dense_shape)[0] - 1, -1, -1)
        perm = api.cast(g.convert(perm), "int64")
        indices = api.transpose(api.gather(api.transpose(sp.indices), perm))
        if rank is not None:
            indices.set_shape([None, rank])
        shape = api.gather(sp.dense_shape, perm)
        return reorder(SparseTensor(indices, sp.values, shape))


def retain(sp_input, to_retain) -> SparseTensor:
    """The entries of `sp_input` where the bool vector `to_retain` is True (TF1's
    tf.sparse.retain / tf.sparse_retain)."""
    sp = _sparse(sp_input, "sparse.retain")
    keep = api.reshape(api.where(to_retain), [-1])
    return SparseTensor(api.gather(sp.indices, keep),
                        api.gather(sp.values, keep), sp.dense_shape)


def slice(sp_input, start, size, name=None) -> SparseTensor:  # noqa: A001 - TF's name
    """The entries inside the box [start, start + size), shifted to it (TF1's
    tf.sparse.slice / tf.sparse_slice)."""
    sp = _sparse(sp_input, "sparse.slice")
    g = _g.get_default_graph()
    out = _op("SparseSlice", _parts(sp) + [api.cast(g.convert(start), "int64"),
                                           api.cast(g.convert(size), "int64")],
              name=name, num_outputs=3)
    return SparseTensor(*out)


def concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None):
    """The SparseTensors joined along `axis` (TF1's tf.sparse.concat /
    tf.sparse_concat); with expand_nonconcat_dim the other dims take the largest
    input's size.

    Raises:
        TypeError: sp_inputs is not a list of SparseTensors.
        ValueError: sp_inputs is empty.
    """
    axis = axis if concat_dim is None else concat_dim
    if not isinstance(sp_inputs, (list, tuple)) or not sp_inputs:
        raise (ValueError if isinstance(sp_inputs, (list, tuple)) else TypeError)(
            "sparse.concat: sp_inputs must be a non-empty list of SparseTensors")
    sps = [_sparse(s, f"sparse.concat: sp_inputs[{k}]") for k, s in enumerate(sp_inputs)]
    shapes = [s.dense_shape for s in sps]
    if expand_nonconcat_dim:
        largest = api.reduce_max(api.stack(shapes), axis=0)
        rank = api.shape(largest)[0]
        dim = api.cast(api_extra.range(rank), "int64")
        is_axis = api.equal(dim, (axis + rank) % rank if axis < 0 else axis)
        shapes = [api.where(is_axis, s, largest) for s in shapes]
    n = len(sps)
    out = _op("SparseConcat", [s.indices for s in sps] + [s.values for s in sps] + shapes,
              {"concat_dim": int(axis), "N": n}, name=name, num_outputs=3)
    return SparseTensor(*out)


def fill_empty_rows(sp_input, default_value, name=None):
    """(SparseTensor with an entry (row, 0, ...) = default_value added to each empty
    row, bool vector of the rows that were empty) (TF1's tf.sparse.fill_empty_rows /
    tf.sparse_fill_empty_rows)."""
    sp = _sparse(sp_input, "sparse.fill_empty_rows")
    g = _g.get_default_graph()
    default = api.cast(g.convert(default_value), sp.dtype)
    indices, values, empty, _ = _op("SparseFillEmptyRows", _parts(sp) + [default],
                                    name=name, num_outputs=4)
    return SparseTensor(indices, values, sp.dense_shape), empty


# ------------------------------------------------------------------------ reductions

def _reduce(op_type, sp_input, axis, keepdims, reduction_axes, keep_dims, sparse_out, what):
    sp = _sparse(sp_input, what)
    axis = axis if reduction_axes is None else reduction_axes
    keep = bool(keepdims if keep_dims is None else keep_dims)
    g = _g.get_default_graph()
    rank = sp.shape.ndims
    if axis is None:  # every dim: a constant when the rank is known while building
        axis = list(range(rank)) if rank is not None else api.cast(
            api_extra.range(api.shape(sp.dense_shape)[0]), "int32")
    axes = g.convert(axis, dtype="int32") if not isinstance(axis, _g.Tensor) else axis
    if sparse_out:
        out = _op(op_type + "Sparse", _parts(sp) + [axes], {"keep_dims": int(keep)},
                  num_outputs=3)
        return SparseTensor(*out)
    return _op(op_type, _parts(sp) + [axes], {"keep_dims": int(keep)})


def reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The dense sum over `axis` (all dims when None) of a SparseTensor (TF1's
    tf.sparse.reduce_sum / tf.sparse_reduce_sum)."""
    return _reduce("SparseReduceSum", sp_input, axis, keepdims, reduction_axes, keep_dims,
                   False, "sparse.reduce_sum")


def reduce_sum_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None) -> SparseTensor:
    """reduce_sum with a SparseTensor result (TF1's tf.sparse.reduce_sum_sparse)."""
    return _reduce("SparseReduceSum", sp_input, axis, keepdims, reduction_axes, keep_dims,
                   True, "sparse.reduce_sum_sparse")


def reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The dense max over `axis` of the present entries (TF1's tf.sparse.reduce_max /
    tf.sparse_reduce_max)."""
    return _reduce("SparseReduceMax", sp_input, axis, keepdims, reduction_axes, keep_dims,
                   False, "sparse.reduce_max")


def reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None) -> SparseTensor:
    """reduce_max with a SparseTensor result (TF1's tf.sparse.reduce_max_sparse)."""
    return _reduce("SparseReduceMax", sp_input, axis, keepdims, reduction_axes, keep_dims,
                   True, "sparse.reduce_max_sparse")


# ------------------------------------------------------------- sparse from other ops

def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """The Levenshtein distance between the sequences (the last dim) of two
    SparseTensors, per leading index, divided by the truth's length when normalize
    (inf for an empty truth) (TF1's tf.edit_distance). float32, shaped by the larger
    of the two dense shapes without their last dim.

    Raises:
        TypeError: hypothesis or truth is not a SparseTensor.
    """
    for what, value in (("Hypothesis", hypothesis), ("Truth", truth)):
        if not isinstance(value, (SparseTensor, SparseTensorValue)):
            raise TypeError(f"{what} must be a SparseTensor.")
    hyp, tru = _sparse(hypothesis, "edit_distance"), _sparse(truth, "edit_distance")
    return _op("EditDistance", _parts(hyp) + _parts(tru),
               {"normalize": int(bool(normalize))}, name=name)


def string_split(source, sep=None, skip_empty=True, delimiter=None,
                 result_type="SparseTensor", name=None) -> SparseTensor:
    """The tokens of each string of the 1-D `source`, split at every character of
    `delimiter` (default " "; `sep` is its other name), empty tokens dropped unless
    skip_empty=False, as a (len(source), most tokens) SparseTensor of strings (TF1's
    tf.string_split).

    Raises:
        ValueError: sep and delimiter are both given, or result_type is not
            "SparseTensor" (onegraph has no RaggedTensor).
    """
    if sep is not None and delimiter is not None:
        raise ValueError("string_split: give sep or delimiter, not both")
    if result_type != "SparseTensor":
        raise ValueError(f"string_split: result_type must be 'SparseTensor' (onegraph has no "
                         f"RaggedTensor), got {result_type!r}")
    g = _g.get_default_graph()
    text = delimiter if delimiter is not None else (" " if sep is None else sep)
    out = _op("StringSplitTF", [g.convert(source), g.convert(text)],
              {"skip_empty": int(bool(skip_empty))}, name=name, num_outputs=3)
    return SparseTensor(*out)


def strings_split(input=None, sep=None, maxsplit=-1, result_type="SparseTensor",  # noqa: A002
                  source=None, name=None) -> SparseTensor:
    """The pieces of each string of the 1-D `input` split at `sep` as a whole (at runs
    of whitespace when None), at most maxsplit splits each (-1: all), as a SparseTensor
    of strings (TF1's tf.strings.split).

    Raises:
        ValueError: input and source are both or neither given, or result_type is not
            "SparseTensor".
    """
    if (input is None) == (source is None):
        raise ValueError("strings.split: give input (or its old name source), once")
    if result_type != "SparseTensor":
        raise ValueError(f"strings.split: result_type must be 'SparseTensor' (onegraph has "
                         f"no RaggedTensor), got {result_type!r}")
    g = _g.get_default_graph()
    out = _op("StringSplitV2", [g.convert(input if source is None else source),
                                g.convert("" if sep is None else sep)],
              {"maxsplit": int(maxsplit)}, name=name, num_outputs=3)
    return SparseTensor(*out)


# ------------------------------------------------------------------------- crosses

_DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TF's key for cross_hashed when none is given


def _cross_inputs(inputs, what: str) -> tuple[list, list]:
    """The sparse inputs' parts (indices, values, shapes) and the dense inputs, sparse
    first as TF orders them, integer values cast to int64.

    Raises:
        TypeError: inputs is not a list or tuple, or holds other than Tensors and
            SparseTensors (TF's messages).
    """
    from .graph import Tensor
    if not isinstance(inputs, (tuple, list)):
        raise TypeError("Inputs must be a list")
    items = [SparseTensor.from_value(i) if isinstance(i, SparseTensorValue) else i
             for i in inputs]
    if not all(isinstance(i, (SparseTensor, Tensor)) for i in items):
        raise TypeError(what)
    sps = [i for i in items if isinstance(i, SparseTensor)]
    dense = [i for i in items if not isinstance(i, SparseTensor)]

    def as_int64(t):
        name = t.dtype.name.lower()
        return t if name in ("string", "int64") else api.cast(t, "int64")
    parts = ([s.indices for s in sps] + [as_int64(s.values) for s in sps]
             + [s.dense_shape for s in sps])
    return parts + [as_int64(d) for d in dense], sps


def cross(inputs, name=None, separator=None) -> SparseTensor:
    """The string crosses of a list of SparseTensors and dense [batch, k] tensors (int64
    or string), row by row: each row's cartesian product of features joined by
    `separator` ("_X_"), sparse inputs first (TF's tf.sparse.cross). Running it with
    rank or batch-size mismatches raises InvalidArgumentError.

    Raises:
        TypeError: inputs is not a list of Tensors and SparseTensors.
    """
    parts, sps = _cross_inputs(inputs, "All inputs must be Tensor or SparseTensor.")
    g = _g.get_default_graph()
    sep = g.convert("_X_" if separator is None else separator)
    out = _op("SparseCrossV2", [sep] + parts, {"N": len(sps)}, name=name, num_outputs=3)
    return SparseTensor(*out)


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None) -> SparseTensor:
    """The hashed crosses of a list of SparseTensors and dense tensors, as `cross` pairs
    them: FingerprintCat64 of the features' fingerprints seeded with hash_key
    (0xDECAFCAFFE), mod num_buckets when > 0 (TF's tf.sparse.cross_hashed; int64).

    Raises:
        TypeError: inputs is not a list of Tensors and SparseTensors.
        ValueError: num_buckets is negative.
    """
    parts, sps = _cross_inputs(inputs, "All inputs must be SparseTensors")
    if int(num_buckets) < 0:
        raise ValueError(f"num_buckets must be >= 0, got {num_buckets}")
    key = int(hash_key or _DEFAULT_HASH_KEY)
    if key >= 2 ** 63:  # the attribute is an int64: keep its bits
        key -= 2 ** 64
    attrs = {"N": len(sps), "hashed_output": 1, "num_buckets": int(num_buckets),
             "hash_key": key}
    return SparseTensor(*_op("SparseCross", parts, attrs, name=name, num_outputs=3))


# TF1's top-level names (tf.sparse_add, ...) and its tf.sparse namespace
_TOP_LEVEL = {
    "sparse_add": add, "sparse_concat": concat, "sparse_fill_empty_rows": fill_empty_rows,
    "sparse_maximum": maximum, "sparse_minimum": minimum, "sparse_reduce_max": reduce_max,
    "sparse_reduce_max_sparse": reduce_max_sparse, "sparse_reduce_sum": reduce_sum,
    "sparse_reduce_sum_sparse": reduce_sum_sparse, "sparse_reorder": reorder,
    "sparse_reshape": reshape, "sparse_retain": retain, "sparse_slice": slice,
    "sparse_softmax": softmax, "sparse_tensor_dense_matmul": sparse_dense_matmul,
    "sparse_tensor_to_dense": to_dense, "sparse_to_indicator": to_indicator,
    "sparse_transpose": transpose, "sparse_placeholder": sparse_placeholder,
    "sparse_segment_sum": sparse_segment_sum, "sparse_segment_mean": sparse_segment_mean,
    "sparse_segment_sqrt_n": sparse_segment_sqrt_n,
    "SparseTensor": SparseTensor, "SparseTensorValue": SparseTensorValue,
    "convert_to_tensor_or_sparse_tensor": convert_to_tensor_or_sparse_tensor,
    "edit_distance": edit_distance, "string_split": string_split, **_MORE_TOP_LEVEL,
}
globals().update(_TOP_LEVEL)

sparse = namespace("sparse", "TF1's tf.sparse: functions of og.SparseTensor.", {
    "SparseTensor": SparseTensor, "add": add, "concat": concat, "cross": cross,
    "cross_hashed": cross_hashed,
    "fill_empty_rows": fill_empty_rows, "from_dense": from_dense, "matmul": sparse_dense_matmul,
    "maximum": maximum, "minimum": minimum, "placeholder": sparse_placeholder,
    "reduce_max": reduce_max, "reduce_max_sparse": reduce_max_sparse,
    "reduce_sum": reduce_sum, "reduce_sum_sparse": reduce_sum_sparse, "reorder": reorder,
    "reshape": reshape, "retain": retain, "slice": slice, "softmax": softmax,
    "sparse_dense_matmul": sparse_dense_matmul, "to_dense": to_dense,
    "to_indicator": to_indicator, "transpose": transpose, "segment_sum": sparse_segment_sum,
    "segment_mean": sparse_segment_mean, "segment_sqrt_n": sparse_segment_sqrt_n, **_MORE})

__all__ = sorted(set(_TOP_LEVEL) | {"sparse", "sparse_to_dense"})

"""TF1 code for the rest of the sparse API (mask, merge, reset_shape, split, expand_dims,
eye, bincount) that tools/record_tf_sparse_more.py runs under TensorFlow
(tf.compat.v1) and tests/train/test_sparse_more.py under onegraph.

Each case is a function of the module `tf` (tensorflow.compat.v1 or onegraph) returning
{name: tensor, SparseTensor or IndexedSlices}; `run(tf, case)` builds it in a fresh
graph, runs it and returns {name: value} (sparse values as {"indices", "values",
"dense_shape"}), or {"error": exception class name} when building or running raised.
Dtypes and static shapes are returned as small int tensors (see `_dtype`, `_static`).
"""

from __future__ import annotations

import numpy as np

_IDX = [[0, 1, 0], [0, 4, 1], [1, 0, 0], [1, 6, 1], [2, 3, 0]]
_VAL = [1.5, -2.0, 3.0, 0.5, 4.0]
_SHAPE = [3, 7, 2]
_DTYPES = ["float32", "float64", "int32", "int64", "bool"]


def _is_og(tf) -> bool:
    return tf.__name__.startswith("onegraph")


def _sp(tf, indices=None, values=None, shape=None, dtype=np.float32):
    return tf.SparseTensor(np.array(_IDX if indices is None else indices, np.int64),
                           np.array(_VAL if values is None else values, dtype),
                           np.array(_SHAPE if shape is None else shape, np.int64))


def _dtype(tf, t):
    """t's dtype as its position in _DTYPES (an int64 constant)."""
    name = np.dtype(t.dtype.as_numpy_dtype).name
    return tf.constant(np.int64(_DTYPES.index(name)))


def _static(tf, shape):
    """A static shape as a constant (-1 unknown dim, [-2] unknown rank)."""
    dims = shape.as_list() if shape.ndims is not None else None
    return tf.constant(np.array([-2] if dims is None else [-1 if d is None else d
                                                           for d in dims], np.int64))


def _slices(tf, values, indices, shape):
    """IndexedSlices: TF's take the dense shape, og's a dense tensor of that shape."""
    values = tf.constant(np.asarray(values, np.float32))
    if _is_og(tf):
        return tf.IndexedSlices(values, tf.constant(indices), tf.zeros(shape))
    return tf.IndexedSlices(values, tf.constant(indices), tf.constant(np.array(shape)))


# ------------------------------------------------------------------------------ mask

def _rows():
    return np.arange(10, dtype=np.float32).reshape(5, 2)


def mask_basic(tf):
    a = _slices(tf, _rows(), np.array([12, 3, 7, 0, 5], np.int64), [13, 2])
    out = tf.sparse.mask(a, np.array([7, 12], np.int64))
    return {"masked": out, "values_dtype": _dtype(tf, out.values),
            "indices_dtype": _dtype(tf, out.indices)}


def mask_int32_top_level(tf):
    a = _slices(tf, _rows(), np.array([4, 3, 4, 0, 1], np.int32), [5, 2])
    return {"masked": tf.sparse_mask(a, np.array([4, 9], np.int32))}


def mask_nothing_removed(tf):
    a = _slices(tf, _rows(), np.array([4, 3, 2, 0, 1], np.int64), [5, 2])
    return {"masked": tf.sparse.mask(a, np.array([8], np.int64))}


def mask_dtype_mismatch(tf):
    a = _slices(tf, _rows(), np.array([4, 3, 2, 0, 1], np.int64), [5, 2])
    return {"masked": tf.sparse.mask(a, np.array([3], np.int32))}


# ----------------------------------------------------------------------------- merge

def _merge_inputs(tf):
    ids = tf.SparseTensor(np.array([[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [2, 1]],
                                   np.int64), np.array([0, 5, 3, 4, 9, 1], np.int64),
                          np.array([3, 3], np.int64))
    weights = tf.SparseTensor(ids.indices, tf.constant(np.array([0.1, 0.5, 0.2, 1.5, -1.0,
                                                                 2.0], np.float32)),
                              ids.dense_shape)
    return ids, weights


def merge_basic(tf):
    ids, weights = _merge_inputs(tf)
    out = tf.sparse.merge(ids, weights, 10)
    return {"merged": out, "dense": tf.sparse.to_dense(out)}


def merge_already_sorted_top_level(tf):
    ids, weights = _merge_inputs(tf)
    return {"merged": tf.sparse_merge(ids, weights, 10, already_sorted=True)}


def merge_list(tf):
    ids, weights = _merge_inputs(tf)
    ids2 = tf.SparseTensor(ids.indices, tf.constant(np.array([2, 0, 1, 2, 0, 1], np.int32)),
                           ids.dense_shape)
    out = tf.sparse.merge([ids, ids2], weights, [10, tf.constant(np.int64(3))])
    return {"merged": out, "static": _static(tf, out.get_shape())}


def merge_tensor_vocab_int32_ids(tf):
    _, weights = _merge_inputs(tf)
    ids = tf.SparseTensor(weights.indices, tf.constant(np.array([1, 1, 0, 2, 2, 0],
                                                                np.int32)), [3, 3])
    return {"merged": tf.sparse.merge(ids, weights, tf.constant(np.int32(4)))}


def merge_float_vocab_refused(tf):
    ids, weights = _merge_inputs(tf)
    return {"merged": tf.sparse.merge(ids, weights, 10.0)}


def merge_lengths_refused(tf):
    ids, weights = _merge_inputs(tf)
    return {"merged": tf.sparse.merge([ids, ids], weights, [10])}


def merge_ids_not_list_refused(tf):
    _, weights = _merge_inputs(tf)
    return {"merged": tf.sparse.merge(7, weights, [10])}


def merge_gradient(tf):
    ids, _ = _merge_inputs(tf)
    w = tf.constant(np.array([0.1, 0.5, 0.2, 1.5, -1.0, 2.0], np.float32))
    out = tf.sparse.merge(ids, tf.SparseTensor(ids.indices, w, ids.dense_shape), 10)
    scale = tf.constant(np.arange(30, dtype=np.float32).reshape(3, 10))
    loss = tf.reduce_sum(tf.sparse.to_dense(out) * scale)
    return {"d_weights": tf.convert_to_tensor(tf.gradients(loss, w)[0])}


# ----------------------------------------------------------------------- reset_shape

def reset_shape_tight(tf):
    out = tf.sparse.reset_shape(_sp(tf))
    return {"reset": out, "static": _static(tf, out.get_shape())}


def reset_shape_empty(tf):
    sp = tf.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.float32),
                         np.array([4, 5], np.int64))
    return {"reset": tf.sparse_reset_shape(sp)}


def reset_shape_bigger(tf):
    out = tf.sparse.reset_shape(_sp(tf), [4, 8, 2])
    return {"reset": out, "static": _static(tf, out.get_shape())}


def reset_shape_too_small_refused(tf):
    return {"reset": tf.sparse.reset_shape(_sp(tf), [3, 6, 2])}


def reset_shape_rank_refused(tf):
    return {"reset": tf.sparse.reset_shape(_sp(tf), [3, 14])}


def reset_shape_run_time_too_small(tf):
    new_shape = tf.placeholder_with_default(np.array([3, 6, 2], np.int64), [3])
    return {"reset": tf.sparse.reset_shape(_sp(tf), new_shape)}


def reset_shape_run_time_ok(tf):
    new_shape = tf.placeholder_with_default(np.array([5, 7, 3], np.int64), [3])
    out = tf.sparse.reset_shape(_sp(tf), new_shape)
    return {"reset": out, "static": _static(tf, out.get_shape())}


def reset_shape_gradient(tf):
    values = tf.constant(np.array(_VAL, np.float32))
    sp = tf.SparseTensor(np.array(_IDX, np.int64), values, np.array(_SHAPE, np.int64))
    out = tf.sparse.reset_shape(sp)
    loss = tf.reduce_sum(tf.sparse.to_dense(out) ** 2) + tf.sparse_reduce_sum(out)
    return {"d_values": tf.convert_to_tensor(tf.gradients(loss, values)[0])}


# ----------------------------------------------------------------------------- split

def split_uneven_axis1(tf):
    parts = tf.sparse.split(sp_input=_sp(tf), num_split=3, axis=1)
    out = {f"part{k}": p for k, p in enumerate(parts)}
    out.update({f"static{k}": _static(tf, p.get_shape()) for k, p in enumerate(parts)})
    return out


def split_axis0_top_level(tf):
    parts = tf.sparse_split(sp_input=_sp(tf), num_split=2, axis=0)
    return {f"part{k}": p for k, p in enumerate(parts)}


def split_negative_axis(tf):
    parts = tf.sparse.split(sp_input=_sp(tf), num_split=2, axis=-1)
    return {f"part{k}": p for k, p in enumerate(parts)}


def split_unordered(tf):
    sp = _sp(tf, [[2, 3, 0], [0, 4, 1], [1, 0, 0], [0, 1, 0], [1, 6, 1]])
    parts = tf.sparse.split(sp_input=sp, num_split=4, axis=1)
    return {f"part{k}": p for k, p in enumerate(parts)}


def split_dim_alone_refused(tf):
    return {"part0": tf.sparse.split(sp_input=_sp(tf), num_split=2, split_dim=1)[0]}


def split_positional_refused(tf):
    return {"part0": tf.sparse.split(_sp(tf), 2, 1)[0]}


def split_missing_axis_refused(tf):
    return {"part0": tf.sparse.split(sp_input=_sp(tf), num_split=2)[0]}


def split_too_many_refused(tf):
    return {"part0": tf.sparse.split(sp_input=_sp(tf), num_split=4, axis=0)[0]}


def split_gradient(tf):
    values = tf.constant(np.array(_VAL, np.float32))
    sp = tf.SparseTensor(np.array(_IDX, np.int64), values, np.array(_SHAPE, np.int64))
    if _is_og(tf):
        parts = tf.sparse.split(sp_input=sp, num_split=3, axis=1)
    else:  # TF's SparseSplit has no gradient: its oracle is the same cuts by SparseSlice
        parts = [tf.sparse.slice(sp, [0, s, 0], [3, n, 2])
                 for s, n in ((0, 3), (3, 2), (5, 2))]
    loss = tf.add_n([(k + 1.0) * tf.reduce_sum(tf.sparse.to_dense(p) ** 2)
                     for k, p in enumerate(parts)])
    return {"d_values": tf.convert_to_tensor(tf.gradients(loss, values)[0])}


# ------------------------------------------------------------------------ expand_dims

def expand_dims_axes(tf):
    sp = _sp(tf)
    out = {f"axis{a}": tf.sparse.expand_dims(sp, a) for a in (0, 1, 3, -1, -4)}
    out["default"] = tf.sparse.expand_dims(sp)
    return out


def expand_dims_tensor_axis(tf):
    out = tf.sparse.expand_dims(_sp(tf), tf.constant(np.int32(2)))
    return {"expanded": out, "dense": tf.sparse.to_dense(out)}


def expand_dims_float_axis_refused(tf):
    return {"expanded": tf.sparse.expand_dims(_sp(tf), 1.0)}


def expand_dims_axis_out_of_range(tf):
    return {"expanded": tf.sparse.expand_dims(_sp(tf), 5)}


def expand_dims_gradient(tf):
    values = tf.constant(np.array(_VAL, np.float32))
    sp = tf.SparseTensor(np.array(_IDX, np.int64), values, np.array(_SHAPE, np.int64))
    out = tf.sparse.expand_dims(sp, 1)
    scale = tf.constant(np.arange(42, dtype=np.float32).reshape(3, 1, 7, 2))
    loss = tf.reduce_sum(tf.sparse.to_dense(out) * scale)
    return {"d_values": tf.convert_to_tensor(tf.gradients(loss, values)[0])}


# -------------------------------------------------------------------------------- eye

def eye_shapes(tf):
    wide = tf.sparse.eye(2, 4, dtype=tf.int32)
    return {"square": tf.sparse.eye(3), "tall": tf.sparse.eye(4, 2),
            "wide": wide, "wide_dtype": _dtype(tf, wide.values),
            "tensor_rows": tf.sparse.eye(tf.constant(np.int32(2)), tf.constant(np.int64(3))),
            "empty": tf.sparse.eye(0)}


def eye_float_tensor_rows(tf):
    return {"eye": tf.sparse.eye(tf.constant(2.0))}


def eye_float_rows_refused(tf):
    return {"eye": tf.sparse.eye(2.0)}


# --------------------------------------------------------------------------- bincount

_DATA = np.array([[10, 20, 30, 20], [11, 101, 11, 10001]], np.int64)


def bincount_dense_rows(tf):
    out = tf.sparse.bincount(_DATA, axis=-1)
    return {"counts": out, "dtype": _dtype(tf, out.values)}


def bincount_dense_flat(tf):
    data = np.array([[3, 1, 1], [0, 3, 1]], np.int32)
    out = tf.sparse.bincount(data)
    return {"counts": out, "dtype": _dtype(tf, out.values)}


def bincount_weights(tf):
    weights = np.array([[2, 0.25, 15, 0.5], [2, 17, 3, 0.9]], np.float32)
    out = tf.sparse.bincount(_DATA, weights=weights, axis=-1)
    flat = tf.sparse.bincount(_DATA, weights=weights.astype(np.float64))
    return {"counts": out, "dtype": _dtype(tf, out.values), "flat": flat,
            "flat_dtype": _dtype(tf, flat.values)}


def bincount_binary(tf):
    return {"rows": tf.sparse.bincount(_DATA, binary_output=True, axis=-1),
            "flat": tf.sparse.bincount(_DATA, binary_output=True)}


def bincount_lengths(tf):
    return {"max": tf.sparse.bincount(_DATA, axis=-1, minlength=500, maxlength=500),
            "min": tf.sparse.bincount(np.array([1, 2, 2], np.int64), minlength=8),
            "max_only": tf.sparse.bincount(np.array([1, 7, 2, 9], np.int64), maxlength=5),
            "max_zero": tf.sparse.bincount(np.array([1, 7], np.int64), maxlength=0),
            "min_small": tf.sparse.bincount(np.array([1, 7], np.int64), minlength=2)}


def bincount_sparse(tf):
    data = tf.SparseTensor(np.array([[0, 3], [0, 7], [0, 8], [0, 11], [1, 9], [1, 11],
                                     [1, 18], [1, 27]], np.int64),
                           np.array([10, 20, 30, 20, 11, 101, 11, 10001], np.int32),
                           np.array([3, 30], np.int64))
    weights = tf.SparseTensor(data.indices, tf.constant(np.arange(8, dtype=np.float32)),
                              data.dense_shape)
    rows = tf.sparse.bincount(data, axis=-1)
    return {"rows": rows, "rows_dtype": _dtype(tf, rows.values),
            "flat": tf.sparse.bincount(data),
            "weighted_rows": tf.sparse.bincount(data, weights=weights, axis=-1),
            "weighted_flat": tf.sparse.bincount(data, weights=weights)}


def bincount_empty_rows(tf):
    data = np.array([[0, 2], [5, 5], [1, 0]], np.int32)
    return {"rows": tf.sparse.bincount(data, axis=-1, minlength=3)}


def bincount_weights_and_binary_refused(tf):
    return {"c": tf.sparse.bincount(_DATA, weights=np.ones((2, 4), np.float32),
                                    binary_output=True)}


def bincount_axis_refused(tf):
    return {"c": tf.sparse.bincount(_DATA, axis=1)}


def bincount_dense_weights_for_sparse_refused(tf):
    data = _sp(tf, values=[1, 2, 3, 4, 5], dtype=np.int64)
    return {"c": tf.sparse.bincount(data, weights=tf.constant(np.ones(5, np.float32)))}


def bincount_negative_refused(tf):
    return {"c": tf.sparse.bincount(np.array([1, -2, 3], np.int64))}


# ---------------------------------------------------------------------- static shapes

def static_shapes(tf):
    sp = _sp(tf)
    p = tf.sparse_placeholder(tf.float32, [None, 5])
    data = tf.placeholder_with_default(_DATA, [None, 4])  # no folding of the counts
    # dims known only at run time (TF1 does not fold a Slice of a constant shape)
    unknown = tf.SparseTensor(sp.indices, sp.values,
                              tf.placeholder_with_default(sp.dense_shape, [3]))
    made = {"expand_dims": tf.sparse.expand_dims(unknown, 1),
            "expand_placeholder": tf.sparse.expand_dims(p, 0),
            "eye": tf.sparse.eye(3, 5),
            "split_placeholder": tf.sparse.split(sp_input=p, num_split=2, axis=1)[1],
            "reset_placeholder": tf.sparse.reset_shape(p),
            "bincount_rows": tf.sparse.bincount(data, axis=-1),
            "bincount_flat": tf.sparse.bincount(data)}
    out = {k: _static(tf, v.get_shape()) for k, v in made.items()}
    out.update({f"{k}_indices": _static(tf, v.indices.get_shape()) for k, v in made.items()})
    out.update({f"{k}_values": _static(tf, v.values.get_shape()) for k, v in made.items()})
    return out


CASES = {f.__name__: f for f in (
    mask_basic, mask_int32_top_level, mask_nothing_removed, mask_dtype_mismatch,
    merge_basic, merge_already_sorted_top_level, merge_list, merge_tensor_vocab_int32_ids,
    merge_float_vocab_refused, merge_lengths_refused, merge_ids_not_list_refused,
    merge_gradient, reset_shape_tight, reset_shape_empty, reset_shape_bigger,
    reset_shape_too_small_refused, reset_shape_rank_refused, reset_shape_run_time_too_small,
    reset_shape_run_time_ok, reset_shape_gradient, split_uneven_axis1, split_axis0_top_level,
    split_negative_axis, split_unordered, split_dim_alone_refused, split_positional_refused,
    split_missing_axis_refused, split_too_many_refused, split_gradient, expand_dims_axes,
    expand_dims_tensor_axis, expand_dims_float_axis_refused, expand_dims_axis_out_of_range,
    expand_dims_gradient, eye_shapes, eye_float_tensor_rows, eye_float_rows_refused,
    bincount_dense_rows,
    bincount_dense_flat, bincount_weights, bincount_binary, bincount_lengths,
    bincount_sparse, bincount_empty_rows, bincount_weights_and_binary_refused,
    bincount_axis_refused, bincount_dense_weights_for_sparse_refused,
    bincount_negative_refused, static_shapes)}


def _plain(value):
    if hasattr(value, "indices") and hasattr(value, "dense_shape"):
        return {"indices": np.asarray(value.indices).tolist(),
                "values": np.asarray(value.values).tolist(),
                "dense_shape": np.asarray(value.dense_shape).tolist()}
    return np.asarray(value).tolist()


def run(tf, case) -> dict:
    """See the module doc."""
    graph = tf.Graph()
    with graph.as_default():
        try:
            made = CASES[case](tf)
            with tf.Session() as sess:
                values = sess.run(made)
        except Exception as e:  # noqa: BLE001 - the recording stores what raised
            return {"error": type(e).__name__}
    return {k: _plain(v) for k, v in values.items()}

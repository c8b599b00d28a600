"""TF1 set-operation code (tf.sets) that tools/record_tf_sets.py runs under TensorFlow
(tf.compat.v1) and tests/train/test_sets.py under onegraph: the results must agree.

Each case is a function of the module `tf` (tensorflow.compat.v1 or onegraph) returning
{name: tensor or SparseTensor}; `run(tf, case)` builds it in a fresh graph, runs it and
returns {"static": {name: static shapes and dtype}, "values": {name: value}} with
SparseTensorValues as {"indices", "values", "dense_shape"} lists and strings as str,
or {"error": exception class name, "message": its first line, "stage": "build"/"run"}.
"""

from __future__ import annotations

import numpy as np

OPS = ("intersection", "union", "a-b", "b-a")

# rank-2 sets: row 0 has repeats, row 1 overlaps b, row 2 is "empty-ish" in sparse form
_A2 = [[1, 2, 2, 5], [3, 4, 1, 1], [7, 7, 7, 7]]
_B2 = [[2, 5, 6, 6], [9, 1, 4, 0], [8, 7, 8, 8]]
_A3 = [[[1, 3], [2, 2]], [[5, 4], [0, 9]]]
_B3 = [[[3, 3], [2, 6]], [[0, 4], [9, 0]]]
# sparse sets in row-major order: row 1 of a and row 0 of b are empty
_SA_IND = [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [3, 0]]
_SA_VAL = [5, 1, 5, 3, 2, 9]
_SB_IND = [[1, 0], [2, 0], [2, 2], [3, 1]]
_SB_VAL = [8, 2, 4, 9]
_SHAPE2 = [4, 3]


def _sp(tf, ind, val, shape, dtype=np.int64):
    return tf.SparseTensor(np.array(ind, np.int64).reshape(-1, len(shape)),
                           np.array(val, dtype), np.array(shape, np.int64))


def _op(tf, name, a, b, **kw):
    if name == "intersection":
        return tf.sets.set_intersection(a, b, **kw)
    if name == "union":
        return tf.sets.set_union(a, b, **kw)
    return tf.sets.set_difference(a, b, aminusb=name == "a-b", **kw)


def _all_ops(tf, a, b, **kw):
    return {op: _op(tf, op, a, b, **kw) for op in OPS}


def _strs(rows):
    return np.array(rows, dtype=object).astype(str)


# ----------------------------------------------------------------- dense / dense

def dense_dense_int32(tf):
    return _all_ops(tf, tf.constant(np.array(_A2, np.int32)),
                    tf.constant(np.array(_B2, np.int32)))


def dense_dense_rank3_int64(tf):
    return _all_ops(tf, tf.constant(np.array(_A3, np.int64)),
                    tf.constant(np.array(_B3, np.int64)))


def dense_dense_other_widths(tf):
    # the last dims may differ: only the leading (group) dims must match
    a = tf.constant(np.array([[1, 2, 3], [4, 5, 6]], np.int8))
    b = tf.constant(np.array([[3, 1], [7, 7]], np.int8))
    return _all_ops(tf, a, b)


def dense_dense_uint(tf):
    out = {}
    for dt in (np.uint8, np.uint16, np.int16):
        a = tf.constant(np.array(_A2, dt))
        b = tf.constant(np.array(_B2, dt))
        out[f"union_{np.dtype(dt).name}"] = tf.sets.union(a, b)
        out[f"inter_{np.dtype(dt).name}"] = tf.sets.intersection(a, b)
    return out


def dense_dense_strings(tf):
    a = tf.constant(_strs([["b", "a", "a"], ["x", "y", "z"]]))
    b = tf.constant(_strs([["a", "c", "c"], ["z", "", "y"]]))
    return _all_ops(tf, a, b)


def dense_dense_empty_result(tf):
    a = tf.constant(np.array([[1, 1], [2, 2]], np.int32))
    return {"inter": tf.sets.intersection(a, a + 10), "diff": tf.sets.difference(a, a)}


def dense_dense_zero_width(tf):
    a = tf.constant(np.zeros((2, 0), np.int32))
    b = tf.constant(np.array([[1, 2], [3, 3]], np.int32))
    return _all_ops(tf, a, b)


def dense_dense_aliases(tf):
    a = tf.constant(np.array(_A2, np.int64))
    b = tf.constant(np.array(_B2, np.int64))
    return {"difference": tf.sets.difference(a, b),
            "difference_ba": tf.sets.difference(a, b, aminusb=False),
            "set_difference": tf.sets.set_difference(a, b),
            "union": tf.sets.union(a, b), "intersection": tf.sets.intersection(a, b)}


def dense_dense_placeholders(tf):
    a = tf.placeholder(tf.int32, [None, None, 3], name="a")
    b = tf.placeholder(tf.int32, [2, None, None], name="b")
    return {"union": tf.sets.union(a, b), "fed_a": a, "fed_b": b}


def dense_dense_unknown_rank(tf):
    a = tf.placeholder(tf.int32, None, name="a")
    b = tf.placeholder(tf.int32, [2, 3], name="b")
    return {"union": tf.sets.union(a, b), "fed_a": a, "fed_b": b}


# ----------------------------------------------------------------- dense / sparse

def dense_sparse_int64(tf):
    a = tf.constant(np.array([[5, 5, 1], [2, 0, 2], [3, 4, 3], [9, 9, 9]], np.int64))
    return _all_ops(tf, a, _sp(tf, _SB_IND, _SB_VAL, _SHAPE2))


def dense_sparse_rank3(tf):
    a = tf.constant(np.array(_A3, np.int32))
    b = _sp(tf, [[0, 0, 0], [0, 0, 1], [1, 1, 0]], [3, 1, 9], [2, 2, 5], np.int32)
    return _all_ops(tf, a, b)


def dense_sparse_strings(tf):
    a = tf.constant(_strs([["b", "a"], ["q", "q"]]))
    b = _sp(tf, [[0, 0], [0, 1], [1, 2]], _strs(["a", "z", "q"]), [2, 3], object)
    return _all_ops(tf, a, b)


def sparse_dense_flipped(tf):
    # TF's Python flips a sparse a and dense b (and a-b to b-a)
    a = _sp(tf, _SA_IND, _SA_VAL, _SHAPE2)
    b = tf.constant(np.array([[5, 5], [1, 1], [2, 2], [4, 4]], np.int64))
    return _all_ops(tf, a, b)


# ----------------------------------------------------------------- sparse / sparse

def sparse_sparse_int64(tf):
    return _all_ops(tf, _sp(tf, _SA_IND, _SA_VAL, _SHAPE2),
                    _sp(tf, _SB_IND, _SB_VAL, _SHAPE2))


def sparse_sparse_rank3_int16(tf):
    a = _sp(tf, [[0, 0, 0], [0, 1, 3], [1, 0, 1], [1, 0, 2]], [4, 4, 2, 2], [2, 2, 4],
            np.int16)
    b = _sp(tf, [[0, 1, 0], [1, 0, 0], [1, 1, 0]], [4, 3, 8], [2, 2, 4], np.int16)
    return _all_ops(tf, a, b)


def sparse_sparse_strings(tf):
    a = _sp(tf, [[0, 0], [0, 1], [1, 0]], _strs(["pear", "apple", "fig"]), [3, 2], object)
    b = _sp(tf, [[0, 0], [2, 0]], _strs(["apple", "kiwi"]), [3, 2], object)
    return _all_ops(tf, a, b)


def sparse_sparse_both_empty(tf):
    a = _sp(tf, [], [], [3, 2], np.int32)
    b = _sp(tf, [], [], [3, 2], np.int32)
    return _all_ops(tf, a, b)


def sparse_sparse_value_inputs(tf):
    a = tf.SparseTensorValue(np.array([[0, 1], [1, 0]], np.int64), np.array([3, 4], np.int32),
                             np.array([2, 2], np.int64))
    b = tf.SparseTensorValue(np.array([[0, 0]], np.int64), np.array([3], np.int32),
                             np.array([2, 2], np.int64))
    return {"union": tf.sets.union(a, b), "size": tf.sets.size(a)}


# ----------------------------------------------------------------- unsorted indices

_UNSORTED_IND = [[2, 0], [0, 1], [0, 0], [2, 1]]
_UNSORTED_VAL = [7, 1, 3, 6]


def unsorted_sparse_validated(tf):
    a = _sp(tf, _UNSORTED_IND, _UNSORTED_VAL, [3, 2])
    return {"union": tf.sets.union(a, a)}


def unsorted_sparse_b_validated(tf):
    a = tf.constant(np.array([[1, 1], [2, 2], [3, 3]], np.int64))
    return {"union": tf.sets.union(a, _sp(tf, _UNSORTED_IND, _UNSORTED_VAL, [3, 2]))}


def unsorted_within_row_unvalidated(tf):
    # out of order only inside each set: the groups stay together
    ind = [[0, 1], [0, 0], [2, 1], [2, 0]]
    a = _sp(tf, ind, [1, 3, 6, 7], [3, 2])
    b = tf.constant(np.array([[1, 1], [2, 2], [6, 3]], np.int64))
    return {"dense_sparse": tf.sets.union(b, a, validate_indices=False),
            "sparse_sparse": tf.sets.intersection(a, a, validate_indices=False),
            "size": tf.sets.size(a, validate_indices=False)}


def unsorted_size_validated(tf):
    return {"size": tf.sets.size(_sp(tf, _UNSORTED_IND, _UNSORTED_VAL, [3, 2]))}


# ----------------------------------------------------------------- set_size

def set_size_sparse(tf):
    a = _sp(tf, _SA_IND, _SA_VAL, _SHAPE2)
    b = _sp(tf, [[0, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 2]], _strs(["a", "a", "b", "c"]),
            [2, 3, 4], object)
    c = _sp(tf, [], [], [2, 5], np.uint8)
    return {"size2": tf.sets.set_size(a), "size3": tf.sets.size(b), "empty": tf.sets.size(c)}


def set_size_of_result(tf):
    a = tf.constant(np.array(_A2, np.int32))
    b = tf.constant(np.array(_B2, np.int32))
    return {"size": tf.sets.size(tf.sets.union(a, b))}


def set_size_dense(tf):
    return {"size": tf.sets.size(tf.constant(np.array(_A2, np.int32)))}


def set_size_float(tf):
    return {"size": tf.sets.size(_sp(tf, [[0, 0]], [1.0], [1, 1], np.float32))}


# ----------------------------------------------------------------- refusals

def err_dtype_mismatch(tf):
    return {"u": tf.sets.union(tf.constant(np.array([[1]], np.int32)),
                               tf.constant(np.array([[1]], np.int64)))}


def err_float_dtype(tf):
    return {"u": tf.sets.union(tf.constant(np.array([[1.0]], np.float32)),
                               tf.constant(np.array([[1.0]], np.float32)))}


def err_sparse_dtype_mismatch(tf):
    return {"u": tf.sets.union(_sp(tf, [[0, 0]], [1], [1, 1], np.int32),
                               _sp(tf, [[0, 0]], [1], [1, 1], np.int64))}


def err_rank1_dense(tf):
    return {"u": tf.sets.union(tf.constant(np.array([1, 2], np.int32)),
                               tf.constant(np.array([1, 2], np.int32)))}


def err_rank1_sparse(tf):
    a = _sp(tf, [[0], [1]], [1, 2], [3])
    return {"u": tf.sets.union(a, a)}


def err_rank1_size(tf):
    return {"s": tf.sets.size(_sp(tf, [[0], [1]], [1, 2], [3]))}


def err_dense_rank_mismatch(tf):
    return {"u": tf.sets.union(tf.constant(np.array(_A3, np.int32)),
                               tf.constant(np.array(_A2, np.int32)))}


def err_dense_shape_mismatch(tf):
    return {"u": tf.sets.union(tf.constant(np.array(_A2, np.int32)),
                               tf.constant(np.array(_A2[:2], np.int32)))}


def err_dense_shape_mismatch_fed(tf):
    a = tf.placeholder(tf.int32, [None, 2], name="a")
    b = tf.placeholder(tf.int32, [None, 2], name="b")
    return {"u": tf.sets.union(a, b), "fed_a": a, "fed_b": b}


def err_dense_sparse_shape_mismatch(tf):
    a = tf.constant(np.array(_A2, np.int64))
    return {"u": tf.sets.union(a, _sp(tf, _SB_IND, _SB_VAL, _SHAPE2))}


def err_dense_sparse_rank_mismatch(tf):
    a = tf.constant(np.array(_A3, np.int64))
    return {"u": tf.sets.union(a, _sp(tf, _SB_IND, _SB_VAL, [2, 3]))}


def err_sparse_sparse_shape_mismatch(tf):
    return {"u": tf.sets.intersection(_sp(tf, _SA_IND, _SA_VAL, _SHAPE2),
                                      _sp(tf, _SB_IND, _SB_VAL, [5, 3]))}


def err_sparse_sparse_rank_mismatch(tf):
    a = _sp(tf, [[0, 0, 0]], [1], [4, 1, 1])
    return {"u": tf.sets.intersection(a, _sp(tf, _SB_IND, _SB_VAL, _SHAPE2))}


def err_index_out_of_bounds(tf):
    return {"u": tf.sets.union(_sp(tf, [[0, 0], [5, 1]], [1, 2], [3, 2]),
                               _sp(tf, [[0, 0]], [1], [3, 2]))}


CASES = {f.__name__: f for f in (
    dense_dense_int32, dense_dense_rank3_int64, dense_dense_other_widths, dense_dense_uint,
    dense_dense_strings, dense_dense_empty_result, dense_dense_zero_width,
    dense_dense_aliases, dense_dense_placeholders, dense_dense_unknown_rank,
    dense_sparse_int64, dense_sparse_rank3, dense_sparse_strings, sparse_dense_flipped,
    sparse_sparse_int64, sparse_sparse_rank3_int16, sparse_sparse_strings,
    sparse_sparse_both_empty, sparse_sparse_value_inputs, unsorted_sparse_validated,
    unsorted_sparse_b_validated, unsorted_within_row_unvalidated, unsorted_size_validated,
    set_size_sparse, set_size_of_result, set_size_dense, set_size_float,
    err_dtype_mismatch, err_float_dtype, err_sparse_dtype_mismatch, err_rank1_dense,
    err_rank1_sparse, err_rank1_size, err_dense_rank_mismatch, err_dense_shape_mismatch,
    err_dense_shape_mismatch_fed, err_dense_sparse_shape_mismatch,
    err_dense_sparse_rank_mismatch, err_sparse_sparse_shape_mismatch,
    err_sparse_sparse_rank_mismatch, err_index_out_of_bounds)}

# values fed to placeholders named fed_*
FEEDS = {
    "dense_dense_placeholders": {"fed_a": np.array([[[1, 2, 2]], [[4, 0, 4]]], np.int32),
                                 "fed_b": np.array([[[2, 3]], [[5, 5]]], np.int32)},
    "dense_dense_unknown_rank": {"fed_a": np.array([[1, 2], [3, 3]], np.int32),
                                 "fed_b": np.array([[2, 9, 9], [0, 0, 0]], np.int32)},
    "err_dense_shape_mismatch_fed": {"fed_a": np.array([[1, 2]], np.int32),
                                     "fed_b": np.array([[1, 2], [3, 4]], np.int32)},
}


def _dtname(dtype) -> str:
    return str(getattr(dtype, "short_name", None) or dtype.name).lower()


def _shape(t):
    known = t.shape is not None and t.shape.ndims is not None
    dims = t.shape.as_list() if known else None
    return None if dims is None else [None if d is None else int(d) for d in dims]


def _static(t) -> dict:
    if hasattr(t, "indices") and hasattr(t, "dense_shape"):
        return {"indices": _shape(t.indices), "values": _shape(t.values),
                "dense_shape": _shape(t.dense_shape), "dtype": _dtname(t.values.dtype)}
    return {"shape": _shape(t), "dtype": _dtname(t.dtype)}


def _plain(value):
    if hasattr(value, "indices") and hasattr(value, "dense_shape"):
        return {"indices": _plain(value.indices), "values": _plain(value.values),
                "dense_shape": _plain(value.dense_shape)}
    arr = np.asarray(value)
    if arr.dtype.kind in "OSU":
        return [v.decode() if isinstance(v, bytes) else str(v)
                for v in arr.reshape(-1)] if arr.ndim else str(arr)
    return arr.tolist()


def _error(e, stage: str) -> dict:
    """What raised: its class, the kernel's or shape function's own first line (TF wraps
    run-time ones after a "Node: ..." line and appends the node to build-time ones)."""
    lines = str(e).strip().splitlines() or [""]
    nodes = [k for k, line in enumerate(lines) if line.startswith("Node: ")]
    text = lines[nodes[0] + 1] if nodes and nodes[0] + 1 < len(lines) else lines[0]
    text = text.split(" for '{{node")[0]
    return {"error": type(e).__name__, "message": text.strip(), "stage": stage}


def run(tf, case) -> dict:
    """See the module doc."""
    graph = tf.Graph()
    with graph.as_default():
        try:
            made = CASES[case](tf)
        except Exception as e:  # noqa: BLE001 - the recording stores what raised
            return _error(e, "build")
        static = {k: _static(v) for k, v in made.items()}
        fetch = {k: v for k, v in made.items() if not k.startswith("fed_")}
        feed = {made[k]: v for k, v in FEEDS.get(case, {}).items()}
        try:
            with tf.Session() as sess:
                values = sess.run(fetch, feed)
        except Exception as e:  # noqa: BLE001
            return _error(e, "run")
    return {"static": static, "values": {k: _plain(v) for k, v in values.items()}}

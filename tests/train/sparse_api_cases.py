"""TF1 sparse-tensor code that tools/record_tf_sparse_api.py runs under TensorFlow
(tf.compat.v1) and tests/train/test_sparse_api.py under onegraph: the values must agree.

Each case is a function of the module `tf` (tensorflow.compat.v1 or onegraph) returning
{name: tensor or SparseTensor}; `run(tf, case)` builds it in a fresh graph, runs it and
returns {name: value} with SparseTensorValues as {"indices", "values", "dense_shape"}
lists, or {"error": exception class name} when building or running raised.
"""

from __future__ import annotations

import numpy as np

_IDX = [[0, 3], [2, 1], [0, 0], [1, 2]]      # unordered on purpose
_VAL = [1.5, -2.0, 3.0, 0.5]
_SHAPE = [3, 4]


def _sp(tf, indices=None, values=None, shape=None, dtype=np.float32):
    return tf.SparseTensor(np.array(_IDX if indices is None else indices, np.int64),
                           np.array(_VAL if values is None else values, dtype),
                           np.array(_SHAPE if shape is None else shape, np.int64))


def dense_and_back(tf):
    sp = tf.sparse_reorder(_sp(tf))
    dense = tf.constant(np.array([[0, 2, 0], [1.5, 0, 0]], np.float32))
    back = tf.sparse.from_dense(dense)
    return {"to_dense": tf.sparse_tensor_to_dense(sp),
            "to_dense_default": tf.sparse.to_dense(sp, default_value=-1.0),
            "sparse_to_dense": tf.sparse_to_dense([[0, 1], [1, 0]], [2, 3], [7, 8], -1),
            "sparse_to_dense_vector": tf.sparse_to_dense([1, 4], [6], 5.0),
            "from_dense": back, "shape": tf.sparse.to_dense(back)}


def unordered_to_dense_refused(tf):
    return {"to_dense": tf.sparse_tensor_to_dense(_sp(tf))}


def unordered_to_dense_unvalidated(tf):
    return {"to_dense": tf.sparse_tensor_to_dense(_sp(tf), validate_indices=False)}


def matmul(tf):
    sp = _sp(tf)
    b = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    bt = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    return {"ab": tf.sparse_tensor_dense_matmul(sp, b),
            "atb": tf.sparse.sparse_dense_matmul(sp, bt, adjoint_a=True, adjoint_b=True)}


def adds(tf):
    a = tf.sparse_reorder(_sp(tf))
    b = _sp(tf, [[0, 3], [1, 1]], [-1.5, 4.0])
    return {"sparse_sparse": tf.sparse_add(a, tf.sparse_reorder(b)),
            "thresh": tf.sparse_add(a, tf.sparse_reorder(b), thresh=0.75),
            "sparse_dense": tf.sparse_add(a, tf.ones([3, 4])),
            "maximum": tf.sparse_maximum(a, tf.sparse_reorder(b)),
            "minimum": tf.sparse_minimum(a, tf.sparse_reorder(b))}


def reshape_transpose_retain(tf):
    sp = tf.sparse_reorder(_sp(tf))
    return {"reshape": tf.sparse_reshape(sp, [2, -1]),
            "reshape3": tf.sparse_reshape(sp, [3, 2, 2]),
            "transpose": tf.sparse_transpose(sp),
            "retain": tf.sparse_retain(sp, np.array([True, False, True, True])),
            "slice": tf.sparse_slice(sp, [0, 1], [2, 3])}


def reductions(tf):
    sp = tf.sparse_reorder(_sp(tf))
    return {"sum_all": tf.sparse_reduce_sum(sp),
            "sum_1": tf.sparse_reduce_sum(sp, axis=1),
            "sum_0_keep": tf.sparse_reduce_sum(sp, axis=0, keepdims=True),
            "sum_sparse": tf.sparse_reduce_sum_sparse(sp, axis=1),
            "max_neg": tf.sparse_reduce_max(sp, axis=-1),
            "max_sparse": tf.sparse_reduce_max_sparse(sp, axis=0)}


def concat_and_fill(tf):
    a = tf.sparse_reorder(_sp(tf))
    b = _sp(tf, [[1, 0]], [9.0], [2, 4])
    c = _sp(tf, [[0, 4]], [6.0], [1, 5])
    filled, empty = tf.sparse_fill_empty_rows(_sp(tf, [[0, 1], [2, 0]], [1.0, 2.0], [4, 3]),
                                              -1.0)
    return {"concat0": tf.sparse_concat(0, [a, b]),
            "concat_expand": tf.sparse_concat(0, [a, c], expand_nonconcat_dim=True),
            "filled": filled, "empty_rows": empty}


def softmax_and_indicator(tf):
    sp = tf.sparse_reorder(_sp(tf))
    ids = tf.SparseTensor(np.array([[0, 0], [0, 1], [2, 0]], np.int64),
                          np.array([3, 0, 3], np.int64), np.array([3, 2], np.int64))
    return {"softmax": tf.sparse_softmax(sp), "indicator": tf.sparse_to_indicator(ids, 5)}


def gradients(tf):
    values = tf.constant(np.array(_VAL, np.float32))
    sp = tf.sparse_reorder(tf.SparseTensor(np.array(_IDX, np.int64), values,
                                           np.array(_SHAPE, np.int64)))
    b = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    loss = tf.reduce_sum(tf.sparse_tensor_dense_matmul(sp, b) ** 2) \
        + tf.reduce_sum(tf.sparse_tensor_to_dense(sp) * 3.0) \
        + tf.sparse_reduce_sum(sp)
    grad_values, grad_b = tf.gradients(loss, [values, b])
    return {"d_values": grad_values, "d_b": grad_b}


def placeholder_feed(tf):
    p = tf.sparse_placeholder(tf.float32, shape=[None, 3], name="p")
    return {"dense": tf.sparse_tensor_to_dense(p), "fed": p,
            "static_shape": tf.constant(np.array([-1 if d is None else d
                                                  for d in p.shape.as_list()]))}


def _logits():
    return np.random.default_rng(7).normal(size=(5, 2, 4)).astype(np.float32)


def decoders(tf):
    x = tf.constant(_logits())
    lengths = tf.constant(np.array([5, 3], np.int32))
    (greedy,), greedy_p = tf.nn.ctc_greedy_decoder(x, lengths)
    (plain,), plain_p = tf.nn.ctc_greedy_decoder(x, lengths, merge_repeated=False)
    beams, beam_p = tf.nn.ctc_beam_search_decoder(x, lengths, beam_width=4, top_paths=2)
    (v2,), v2_p = tf.nn.ctc_beam_search_decoder_v2(x, lengths, beam_width=3)
    return {"greedy": greedy, "greedy_p": greedy_p, "plain": plain, "plain_p": plain_p,
            "beam0": beams[0], "beam1": beams[1], "beam_p": beam_p, "v2": v2, "v2_p": v2_p}


def edit_and_split(tf):
    hyp = tf.SparseTensor(np.array([[0, 0, 0], [1, 0, 0]], np.int64), np.array(["a", "b"]),
                          np.array([2, 1, 1], np.int64))
    truth = tf.SparseTensor(np.array([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]], np.int64),
                            np.array(["a", "b", "c", "a"]), np.array([2, 2, 2], np.int64))
    text = tf.constant(np.array(["a b", "c  d e", ""]))
    return {"normalized": tf.edit_distance(hyp, truth),
            "raw": tf.edit_distance(hyp, truth, normalize=False),
            "split": tf.string_split(text), "split_empty": tf.string_split(text,
                                                                           skip_empty=False),
            "split_chars": tf.string_split(tf.constant(np.array(["a,b;c"])), ",;"),
            "strings_split": tf.strings.split(tf.constant(np.array(["a,,b", "c"])), sep=","),
            "strings_split_ws": tf.strings.split(tf.constant(np.array([" x  y ", "z"])))}


def _ids(tf):
    return tf.SparseTensor(np.array([[0, 0], [0, 1], [2, 0], [2, 1], [3, 0]], np.int64),
                           np.array([1, 3, 4, -1, 0], np.int64), np.array([5, 2], np.int64))


def embeddings(tf):
    params = tf.constant(np.arange(15, dtype=np.float32).reshape(5, 3) / 4)
    ids = _ids(tf)
    valid = tf.SparseTensor(ids.indices, tf.constant(np.array([1, 3, 4, 2, 0], np.int64)),
                            ids.dense_shape)
    weights = tf.SparseTensor(ids.indices, tf.constant(np.array([1.0, 2.0, 0.5, -1.0, 3.0],
                                                                np.float32)), ids.dense_shape)
    out = {f"lookup_{c}": tf.nn.embedding_lookup_sparse(params, valid, weights, combiner=c)
           for c in ("sum", "mean", "sqrtn")}
    out["lookup_unweighted"] = tf.nn.embedding_lookup_sparse(params, valid, None,
                                                             combiner="mean")
    out["safe_mean"] = tf.nn.safe_embedding_lookup_sparse(params, ids, weights)
    out["safe_sum_default"] = tf.nn.safe_embedding_lookup_sparse(params, ids, None,
                                                                 combiner="sum", default_id=2)
    ids3 = tf.SparseTensor(np.array([[0, 0, 0], [1, 1, 0], [1, 1, 1]], np.int64),
                           np.array([4, 0, 2], np.int64), np.array([2, 2, 2], np.int64))
    out["safe_rank3"] = tf.nn.safe_embedding_lookup_sparse(params, ids3)
    return out


def ctc_loss_sparse(tf):
    labels = tf.SparseTensor(np.array([[0, 0], [0, 1], [1, 0]], np.int64),
                             np.array([1, 2, 0], np.int32), np.array([2, 2], np.int64))
    x = tf.constant(_logits())
    loss = tf.nn.ctc_loss(labels, x, tf.constant(np.array([5, 3], np.int32)))
    return {"loss": loss, "grad": tf.gradients(tf.reduce_sum(loss), x)[0]}


def _static(tf, shape):
    """A static shape as a constant (-1 unknown dim, [-2] unknown rank)."""
    dims = shape.as_list() if shape.ndims is not None else None
    return tf.constant(np.array([-2] if dims is None else [-1 if d is None else d
                                                           for d in dims], np.int64))


def static_shapes(tf):
    sp = _sp(tf)
    p = tf.sparse_placeholder(tf.float32, [None, 5])
    ids = tf.SparseTensor(np.array([[0, 0]], np.int64), np.array([1], np.int64),
                          np.array([2, 2], np.int64))
    params = tf.zeros([5, 3])
    made = {"to_dense": tf.sparse_tensor_to_dense(tf.sparse_reorder(sp)),
            "matmul": tf.sparse_tensor_dense_matmul(sp, tf.zeros([4, 2])),
            "matmul_placeholder": tf.sparse_tensor_dense_matmul(p, tf.zeros([5, 7])),
            "reduce_all": tf.sparse_reduce_sum(sp), "reduce_1": tf.sparse_reduce_sum(sp, 1),
            "reduce_keep": tf.sparse_reduce_sum(sp, 1, keepdims=True),
            "reduce_max_0": tf.sparse_reduce_max(sp, 0),
            "indicator": tf.sparse_to_indicator(ids, 5),
            "lookup": tf.nn.embedding_lookup_sparse(params, ids, None, combiner="sum"),
            "safe_lookup": tf.nn.safe_embedding_lookup_sparse(params, ids),
            "fill_empty": tf.sparse_fill_empty_rows(sp, 0.0)[1]}
    sparse = {"reshape": tf.sparse_reshape(sp, [-1, 2]), "transpose": tf.sparse_transpose(sp),
              "concat": tf.sparse_concat(0, [sp, sp]), "add": tf.sparse_add(sp, sp),
              "softmax_values": tf.sparse_softmax(tf.sparse_reorder(sp))}
    out = {k: _static(tf, v.get_shape()) for k, v in made.items()}
    out.update({f"{k}_dense": _static(tf, v.get_shape()) for k, v in sparse.items()})
    out["softmax_values_values"] = _static(tf, sparse["softmax_values"].values.get_shape())
    return out


CASES = {f.__name__: f for f in (
    dense_and_back, unordered_to_dense_refused, unordered_to_dense_unvalidated, matmul, adds,
    reshape_transpose_retain, reductions, concat_and_fill, softmax_and_indicator, gradients,
    placeholder_feed, decoders, edit_and_split, embeddings, ctc_loss_sparse, static_shapes)}

FEEDS = {"placeholder_feed": lambda p: {p: ([[0, 2], [1, 0]], [5.0, 6.0], [2, 3])}}


def _plain(value):
    if hasattr(value, "indices") and hasattr(value, "dense_shape"):
        values = np.asarray(value.values)
        if values.dtype.kind in "OS":  # TF's bytes, onegraph's str
            values = np.array([v.decode() if isinstance(v, bytes) else v for v in values])
        return {"indices": np.asarray(value.indices).tolist(), "values": values.tolist(),
                "dense_shape": np.asarray(value.dense_shape).tolist()}
    return np.asarray(value).tolist()


def run(tf, case) -> dict:
    """See the module doc."""
    graph = tf.Graph()
    with graph.as_default():
        try:
            made = CASES[case](tf)
            feed = {}
            if case in FEEDS:
                feed = FEEDS[case](made["fed"])
            with tf.Session() as sess:
                values = sess.run(made, feed)
        except Exception as e:  # noqa: BLE001 - the recording stores what raised
            return {"error": type(e).__name__}
    return {k: _plain(v) for k, v in values.items()}

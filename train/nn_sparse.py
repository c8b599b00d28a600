"""TF1's tf.nn functions with SparseTensor results or arguments: the CTC decoders
(ctc_greedy_decoder, ctc_beam_search_decoder and its _v2), embedding_lookup_sparse and
safe_embedding_lookup_sparse. The decoders are ops of ops/sparse_decode.py; the
embedding lookups are TF1's compositions (unique ids, a gather, segment sums), so their
gradients reach the embedding parameters as TF1's do.
"""

from __future__ import annotations

import logging

from . import api, api_compat, api_extra, api_math
from . import graph as _g
from .api_linalg import unique
from .api_sparse import fill_empty_rows, reshape as sparse_reshape, retain
from .sparse_tensor import SparseTensor, SparseTensorValue

_log = logging.getLogger("onegraph")
_COMBINERS = ("mean", "sqrtn", "sum")


def _logits(inputs, what: str):
    x = _g.get_default_graph().convert(inputs)
    if x.shape is not None and len(x.shape) != 3:
        raise ValueError(f"{what}: inputs must be (max_time, batch, num_classes), got shape "
                         f"{tuple(x.shape)}")
    return x


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """Best-path CTC decoding (TF1's tf.nn.ctc_greedy_decoder): the most likely class
    at each step, repeats merged (unless merge_repeated=False), blanks dropped.

    Args:
        inputs: (max_time, batch, num_classes) logits.
        sequence_length: (batch,) int32 steps of each example.
        blank_index: the blank class (default: the last; negative counts from the end).

    Returns:
        ([SparseTensor of the decoded labels, (batch, longest)], (batch, 1) minus the
        sum of each example's largest logits).

    Raises:
        ValueError: inputs is not 3-D (when its rank is known).
        (when run) ExecutionError: a sequence length exceeds max_time.
    """
    g = _g.get_default_graph()
    x = _logits(inputs, "ctc_greedy_decoder")
    lengths = api.cast(g.convert(sequence_length), "int32")
    indices, values, shape, log_prob = g.op(
        "CTCGreedyDecoder", [x, lengths],
        {"merge_repeated": int(bool(merge_repeated)),
         "blank_index": -1 if blank_index is None else int(blank_index)},
        domain="onegraph")
    return [SparseTensor(indices, values, shape)], log_prob


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1,
                            merge_repeated=True):
    """Prefix beam search CTC decoding (TF1's tf.nn.ctc_beam_search_decoder), the blank
    the last class.

    Returns:
        ([top_paths SparseTensors, best first], (batch, top_paths) log probabilities).

    Raises:
        ValueError: inputs is not 3-D, or beam_width / top_paths below 1.
        (when run) ExecutionError: top_paths > beam_width, or fewer beams than paths.
    """
    for what, v in (("beam_width", beam_width), ("top_paths", top_paths)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"ctc_beam_search_decoder: {what} must be an int >= 1, got "
                             f"{v!r}")
    g = _g.get_default_graph()
    x = _logits(inputs, "ctc_beam_search_decoder")
    lengths = api.cast(g.convert(sequence_length), "int32")
    out = g.op("CTCBeamSearchDecoder", [x, lengths],
               {"beam_width": beam_width, "top_paths": top_paths,
                "merge_repeated": int(bool(merge_repeated))},
               num_outputs=3 * top_paths + 1, domain="onegraph")
    out = out if isinstance(out, list) else [out]
    k = top_paths
    decoded = [SparseTensor(out[i], out[k + i], out[2 * k + i]) for i in range(k)]
    return decoded, out[3 * k]


def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width=100, top_paths=1):
    """TF's tf.nn.ctc_beam_search_decoder_v2: ctc_beam_search_decoder without merging
    repeated classes."""
    return ctc_beam_search_decoder(inputs, sequence_length, beam_width, top_paths,
                                   merge_repeated=False)


# --------------------------------------------------------------------- embeddings

def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None):
    """Per row of `sp_ids`, the combination of the embeddings of its ids (TF1's
    tf.nn.embedding_lookup_sparse): "sum", "mean" (default) or "sqrtn" of the
    embeddings weighted by `sp_weights` (None: all 1). Rows are those of
    sp_ids.indices[:, 0] up to the largest present (as TF1: trailing empty rows are
    not in the result).

    Raises:
        TypeError: sp_ids (or sp_weights, when given) is not a SparseTensor.
        ValueError: combiner is not one of "mean", "sqrtn", "sum".
    """
    if combiner is None:
        _log.warning('The default value of combiner will change from "mean" to "sqrtn" '
                     "after 2016/11/01.")
        combiner = "mean"
    if combiner not in _COMBINERS:
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    if isinstance(sp_ids, SparseTensorValue):
        sp_ids = SparseTensor.from_value(sp_ids)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError("sp_weights must be either None or SparseTensor")
    from .nn import embedding_lookup  # (nn imports this module at its end)
    g = _g.get_default_graph()
    with g.name_scope(name or "embedding_lookup_sparse"):
        segment_ids = api.cast(api.reshape(api_math.slice(sp_ids.indices, [0, 0], [-1, 1]),
                                           [-1]), "int32")
        ids, idx = unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        rows = api.gather(embeddings, idx)
        if sp_weights is None:
            weights = api.ones_like(api.cast(idx, embeddings.dtype))
        else:
            weights = api.cast(sp_weights.values, embeddings.dtype)
        per_row = api.reshape(weights, api.concat(
            [api.shape(weights), api.ones(api.expand_dims(api_extra.rank(rows) - 1, 0),
                                          dtype="int64")], 0))
        if rows.shape is not None:  # (n, 1, ..., 1), as TF1 sets it
            per_row.set_shape([None] + [1] * (len(rows.shape) - 1))
        total = api_extra.segment_sum(rows * per_row, segment_ids)
        if combiner == "sum":
            return total
        if combiner == "mean":
            return api_compat.div_no_nan(total, api_extra.segment_sum(per_row, segment_ids))
        return api_compat.div_no_nan(total, api.sqrt(
            api_extra.segment_sum(api.square(per_row), segment_ids)))


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, name=None,
                                 partition_strategy="div", max_norm=None):
    """embedding_lookup_sparse made safe, as TF1's tf.nn.safe_embedding_lookup_sparse:
    ids below 0 (and, unless combiner is "sum", weights <= 0) are dropped, and every
    row of sparse_ids (of any rank >= 2) gets a result: an empty row the embedding of
    `default_id`, or zeros when it is None. The result is (*dense_shape[:-1], dim).

    Raises:
        ValueError: embedding_weights is None or an empty list; a bad combiner.
        TypeError: sparse_ids is not a SparseTensor.
    """
    if embedding_weights is None or (isinstance(embedding_weights, list)
                                     and not embedding_weights):
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    if isinstance(sparse_ids, SparseTensorValue):
        sparse_ids = SparseTensor.from_value(sparse_ids)
    if not isinstance(sparse_ids, SparseTensor):
        raise TypeError("safe_embedding_lookup_sparse: sparse_ids must be a SparseTensor")
    g = _g.get_default_graph()
    with g.name_scope(name or "embedding_lookup"):
        shape = sparse_ids.dense_shape
        rank = api_extra.size(shape)
        lead = api_math.slice(shape, [0], api.expand_dims(rank - 1, 0))
        ids = sparse_reshape(sparse_ids, api.stack([api.reduce_prod(lead),
                                                    api.gather(shape, rank - 1)]))
        weights = None if sparse_weights is None else SparseTensor(
            ids.indices, sparse_weights.values, ids.dense_shape)
        valid = api.greater_equal(ids.values, api.cast(g.convert(0), ids.dtype))
        if weights is not None and combiner != "sum":
            valid = api.logical_and(valid, api.greater(
                weights.values, api.cast(g.convert(0), weights.dtype)))
        ids = retain(ids, valid)
        weights = None if weights is None else retain(weights, valid)
        ids, empty = fill_empty_rows(ids, default_id or 0)
        if weights is not None:
            weights, _ = fill_empty_rows(weights, 1.0)
        result = embedding_lookup_sparse(embedding_weights, ids, weights, combiner=combiner,
                                         partition_strategy=partition_strategy,
                                         max_norm=max_norm)
        if default_id is None:
            result = api.where(api.reshape(empty, [-1, 1]), api.zeros_like(result), result)
        out = api.reshape(result, api.concat(
            [lead, api_math.slice(api.shape(result), [1], [-1])], 0))
        if sparse_ids.shape.ndims is not None and result.shape is not None:
            out.set_shape(sparse_ids.shape.as_list()[:-1] + list(result.shape[1:]))
        return out


__all__ = ["ctc_beam_search_decoder", "ctc_beam_search_decoder_v2", "ctc_greedy_decoder",
           "embedding_lookup_sparse", "safe_embedding_lookup_sparse"]

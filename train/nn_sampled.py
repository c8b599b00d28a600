"""TF1's sampled losses and candidate samplers: og.nn.nce_loss,
og.nn.sampled_softmax_loss, og.nn.uniform_candidate_sampler and
og.nn.log_uniform_candidate_sampler.

A sampled loss scores each example's true classes and `num_sampled` classes drawn
for the whole batch (by default log-uniformly, with `unique`), rather than all
`num_classes`: the logits are rows of `weights` times the inputs plus `biases`, and
log(expected count) of each class is subtracted (TF's subtract_log_q), so the loss
estimates the full one. nce_loss is the sigmoid cross-entropy of those logits
(labels 1/num_true for the true classes, 0 for the sampled ones), summed per
example; sampled_softmax_loss their softmax cross-entropy. The gradient reaches only
the looked-up rows of weights and biases (og.IndexedSlices), as TF's does. The
samplers are onegraph-domain ops (ops/candidate_sampling.py).

Bad arguments are refused while building, naming the function and the argument:
num_sampled is at most ops.random_more.MAX_SAMPLE_ELEMENTS and range_max (num_classes)
fits int64 (ShapeError otherwise); weights and biases are a tensor or a non-empty list
of shards of rank 2 and 1, of the inputs' float dtype, and weights' second dim is
inputs' (ShapeError); remove_accidental_hits is a bool (TypeError).
"""

from __future__ import annotations

import numpy as np

from ..errors import OneGraphError, ShapeError
from ..ops.random_more import check_sample_count
from . import api
from . import graph as _g
from .api_extra import _op_seed, reduce_any
from .graph import Tensor, check_seed
from .nn import _positive_int, partitioned_rows, sigmoid_cross_entropy_with_logits
from .nn_more import softmax_cross_entropy_with_logits_v2

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def sampler_arguments(what: str, name, seed, num_true, num_sampled, unique,
                      range_max, range_name: str = "range_max") -> tuple:
    """(num_true, num_sampled, range_max) of a candidate sampler, checked; messages
    call range_max `range_name` (the sampled losses' num_classes).

    Raises:
        TypeError: a count is not a positive int, unique not a bool, seed not an int,
            or name not a str.
        ValueError: unique and num_sampled > range_max, or a negative seed.
        ShapeError: num_sampled is above MAX_SAMPLE_ELEMENTS (2**28), or range_max
            beyond int64.
    """
    _g.check_name(name, what)
    check_seed(seed, what)
    num_true = _positive_int(num_true, f"{what}: num_true")
    num_sampled = _positive_int(num_sampled, f"{what}: num_sampled")
    range_max = _positive_int(range_max, f"{what}: {range_name}")
    if not isinstance(unique, (bool, np.bool_)):
        raise TypeError(f"{what}: unique must be a bool, got {type(unique).__name__}")
    if unique and num_sampled > range_max:
        raise ValueError(f"{what}: num_sampled ({num_sampled}) must not exceed "
                         f"{range_name} ({range_max}) when unique")
    # the op's attributes are int64 and its output holds num_sampled ids
    if range_max > np.iinfo(np.int64).max:
        raise ShapeError(f"{what}: {range_name} ({range_max}) must fit int64")
    check_sample_count((num_sampled,), what, "sampled_candidates")
    return num_true, num_sampled, range_max


def _sampler(op_type: str, what: str, true_classes, num_true, num_sampled, unique,
             range_max, seed, name) -> tuple:
    """(sampled_candidates, true_expected_count, sampled_expected_count) of one
    candidate sampler op."""
    num_true, num_sampled, range_max = sampler_arguments(
        what, name, seed, num_true, num_sampled, unique, range_max)
    classes = _g.integer_tensor(true_classes, f"{what}: true_classes")
    shape = classes.shape
    if shape is not None and (len(shape) != 2 or shape[1] not in (None, num_true)):
        raise ShapeError(f"{what}: true_classes must be (batch, num_true={num_true}), got "
                         f"shape {list(shape)}")
    g = classes.graph
    with g.name_scope(name or what) as scope:
        classes = api.cast(classes, _g.DType.INT64)
        outputs = g.op(op_type, [classes],
                       {"num_true": num_true, "num_sampled": num_sampled,
                        "unique": int(bool(unique)), "range_max": range_max,
                        "seed": _op_seed(g, seed, scope, what)},
                       num_outputs=3, domain="onegraph")
    return tuple(outputs)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None) -> tuple:
    """Draw `num_sampled` class ids uniformly from [0, range_max) (distinct ones when
    `unique`), as TF1's tf.nn.uniform_candidate_sampler: returns (sampled_candidates
    (num_sampled,) int64, true_expected_count (batch, num_true) float32,
    sampled_expected_count (num_sampled,) float32). `true_classes` (batch, num_true)
    only give the shape of true_expected_count.

    Raises:
        TypeError: a count is not a positive int, unique not a bool, seed not an int,
            or name not a str.
        ValueError: unique and num_sampled > range_max, or a negative seed.
        ShapeError: true_classes is not (batch, num_true) integers.
    """
    return _sampler("UniformCandidateSampler", "uniform_candidate_sampler", true_classes,
                    num_true, num_sampled, unique, range_max, seed, name)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None) -> tuple:
    """Draw `num_sampled` class ids from the log-uniform (Zipfian) distribution
    P(k) = log((k + 2) / (k + 1)) / log(range_max + 1) over [0, range_max), as TF1's
    tf.nn.log_uniform_candidate_sampler (suits classes sorted by falling frequency);
    returns and raises as og.nn.uniform_candidate_sampler."""
    return _sampler("LogUniformCandidateSampler", "log_uniform_candidate_sampler",
                    true_classes, num_true, num_sampled, unique, range_max, seed, name)


def _shards(params, x: Tensor, rank: int, what: str, arg: str) -> list:
    """weights or biases as a list of tensors (one, or the shards given), checked
    against the inputs x while building.

    Raises:
        ShapeError: an empty list of shards, a shard of another rank than `rank`, of
            another dtype than x, or (weights) whose second dim is not x's.
        OneGraphError: a value is not a tensor or array (names what and arg).
    """
    values = list(params) if isinstance(params, (list, tuple)) else [params]
    if not values:
        raise ShapeError(f"{what}: {arg} must be a tensor or a non-empty list of shards, "
                         f"got an empty {type(params).__name__}")
    shards = []
    for k, v in enumerate(values):
        where = f"{what}: {arg}" + (f" shard {k}" if isinstance(params, (list, tuple))
                                    else "")
        try:
            t = _g.convert_to_tensor(v, None if _g._is_symbolic(v) else x.dtype, x.graph)
        except OneGraphError as e:
            raise _g._named(e, where) from None
        if t.shape is not None and len(t.shape) != rank:
            raise ShapeError(f"{where} must be {rank}-D, got shape {list(t.shape)}")
        if t.dtype is not _g.DType.UNDEFINED and x.dtype is not _g.DType.UNDEFINED \
                and t.dtype != x.dtype:
            raise ShapeError(f"{where} must be {x.dtype.short_name} like inputs, got "
                             f"{t.dtype.short_name}")
        if rank == 2 and t.shape is not None and x.shape is not None \
                and None not in (t.shape[1], x.shape[1]) and t.shape[1] != x.shape[1]:
            raise ShapeError(f"{where} has rows of {t.shape[1]} values but inputs have "
                             f"{x.shape[1]}")
        shards.append(t)
    return shards


def _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                    sampled_values, subtract_log_q, remove_accidental_hits,
                    partition_strategy, seed, what) -> tuple:
    """(logits, labels) (batch, num_true + num_sampled) of a sampled loss, as TF1's
    _compute_sampled_logits."""
    num_true = _positive_int(num_true, f"{what}: num_true")
    if not isinstance(partition_strategy, str) or partition_strategy not in ("mod", "div"):
        raise ValueError(f"{what}: partition_strategy must be 'mod' or 'div', got "
                         f"{partition_strategy!r:.60}")
    if not isinstance(remove_accidental_hits, (bool, np.bool_)):
        raise TypeError(f"{what}: remove_accidental_hits must be a bool, got "
                        f"{type(remove_accidental_hits).__name__}")
    x = inputs   # a tensor: _sampled_loss converted it
    if x.shape is not None and len(x.shape) != 2:
        raise ShapeError(f"{what}: inputs must be (batch, dim), got shape {list(x.shape)}")
    if x.dtype not in (_g.DType.FLOAT16, _g.DType.FLOAT32, _g.DType.FLOAT64):
        raise ShapeError(f"{what}: inputs must be float16/32/64, got {x.dtype.short_name}")
    weights = _shards(weights, x, 2, what, "weights")
    biases = _shards(biases, x, 1, what, "biases")
    labels = api.cast(_g.integer_tensor(labels, f"{what}: labels"), _g.DType.INT64)
    if labels.shape is not None and (len(labels.shape) != 2
                                     or labels.shape[1] not in (None, num_true)):
        raise ShapeError(f"{what}: labels must be (batch, num_true={num_true}), got shape "
                         f"{list(labels.shape)}")
    if sampled_values is None:
        # checked under this function's name first, so a bad count names nce_loss or
        # sampled_softmax_loss rather than the sampler it calls
        _, _, num_classes = sampler_arguments(what, None, seed, num_true, num_sampled,
                                              True, num_classes, "num_classes")
        rows = [t.shape[0] if t.shape is not None else None for t in weights]
        if None not in rows and sum(rows) < num_classes:
            # sampled ids reach num_classes - 1: a shorter weights matrix would fail
            # only in the runs that happen to draw a missing row
            raise ShapeError(f"{what}: weights have {sum(rows)} rows but num_classes is "
                             f"{num_classes}; classes are drawn from [0, num_classes)")
        sampled_values = log_uniform_candidate_sampler(
            labels, num_true, num_sampled, True, num_classes, seed=seed)
    if not isinstance(sampled_values, (tuple, list)) or len(sampled_values) != 3:
        raise TypeError(f"{what}: sampled_values must be (sampled_candidates, "
                        f"true_expected_count, sampled_expected_count), as a candidate "
                        f"sampler returns")
    sampled = api.cast(_g.integer_tensor(sampled_values[0], f"{what}: sampled_candidates"),
                       _g.DType.INT64)
    true_count, sampled_count = (api.stop_gradient(api.cast(c, x.dtype))
                                 for c in sampled_values[1:])
    flat_labels = api.reshape(labels, [-1])
    true_w = partitioned_rows(weights, flat_labels, partition_strategy)
    sampled_w = partitioned_rows(weights, sampled, partition_strategy)
    true_b = api.reshape(partitioned_rows(biases, flat_labels, partition_strategy),
                         [-1, num_true])
    sampled_b = partitioned_rows(biases, sampled, partition_strategy)
    dim = api.reshape(x.graph.op("Shape", [x], {"start": 1, "end": 2}), [])
    true_w = api.reshape(true_w, [-1, num_true, dim])
    true_logits = api.reduce_sum(api.expand_dims(x, 1) * true_w, axis=-1) + true_b
    sampled_logits = api.matmul(x, sampled_w, transpose_b=True) + sampled_b
    if remove_accidental_hits:
        # a sampled class that is one of the example's true classes is pushed to
        # -FLT_MAX, as TF's compute_accidental_hits + sparse_to_dense do
        hits = reduce_any(api.equal(api.expand_dims(labels, 2),
                                    api.reshape(sampled, [1, 1, -1])), axis=1)
        sampled_logits = sampled_logits + api.where(
            hits, api.constant(np.asarray(-_FLOAT32_MAX, x.dtype.numpy)),
            api.constant(np.zeros((), x.dtype.numpy)))
    if subtract_log_q:
        true_logits = true_logits - api.log(true_count)
        sampled_logits = sampled_logits - api.log(sampled_count)
    logits = api.concat([true_logits, sampled_logits], axis=1)
    targets = api.concat([api.ones_like(true_logits) / float(num_true),
                          api.zeros_like(sampled_logits)], axis=1)
    return logits, targets


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss", seed=None) -> Tensor:
    """Noise-contrastive estimation loss per example (batch,), as TF1's tf.nn.nce_loss:
    `weights` (num_classes, dim) (or a list of shards), `biases` (num_classes,),
    `labels` (batch, num_true) int, `inputs` (batch, dim). Classes are drawn with
    og.nn.log_uniform_candidate_sampler (unique) unless `sampled_values` gives a
    sampler's result. Meant for training; evaluate with the full softmax.

    Raises:
        TypeError: a count is not a positive int, sampled_values is not a sampler's
            triple, remove_accidental_hits not a bool, or name not a str.
        ValueError: partition_strategy is not "mod" or "div", or num_sampled >
            num_classes (the sampler draws distinct classes).
        ShapeError: inputs or labels have the wrong rank, or labels' second dim is not
            num_true; weights or biases are an empty list, of the wrong rank or dtype,
            weights' rows are not inputs' width or fewer than num_classes; num_sampled
            is above MAX_SAMPLE_ELEMENTS.
        OneGraphError: inputs, weights or biases are not tensors or arrays.
    """
    def per_example(logits, targets):
        losses = sigmoid_cross_entropy_with_logits(labels=targets, logits=logits)
        return api.reduce_sum(losses, axis=1)

    return _sampled_loss(per_example, "nce_loss", name, weights, biases, labels, inputs,
                         num_sampled, num_classes, num_true, sampled_values,
                         remove_accidental_hits, partition_strategy, seed)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                         num_true=1, sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss",
                         seed=None) -> Tensor:
    """Sampled softmax cross-entropy per example (batch,), as TF1's
    tf.nn.sampled_softmax_loss (arguments as og.nn.nce_loss; by default a sampled class
    that is one of the example's true classes is left out). Meant for training;
    evaluate with the full softmax.

    Raises:
        as og.nn.nce_loss.
    """
    def per_example(logits, targets):
        return softmax_cross_entropy_with_logits_v2(labels=api.stop_gradient(targets),
                                                    logits=logits)

    return _sampled_loss(per_example, "sampled_softmax_loss", name, weights, biases,
                         labels, inputs, num_sampled, num_classes, num_true,
                         sampled_values, remove_accidental_hits, partition_strategy, seed)


def _sampled_loss(per_example, what: str, name, weights, biases, labels, inputs,
                  num_sampled, num_classes, num_true, sampled_values,
                  remove_accidental_hits, partition_strategy, seed) -> Tensor:
    """per_example(logits, targets) of the sampled logits, under name scope `name`."""
    _g.check_name(name, what)
    try:
        x = _g.convert_to_tensor(inputs)
    except OneGraphError as e:
        raise _g._named(e, f"{what}: inputs") from None
    with x.graph.name_scope(name or what):
        logits, targets = _sampled_logits(
            weights, biases, labels, x, num_sampled, num_classes, num_true,
            sampled_values, True, remove_accidental_hits, partition_strategy, seed, what)
        return per_example(logits, targets)

"""TF1's tf.feature_column without Estimators: column constructors, input_layer,
linear_model and make_parse_example_spec, composed from onegraph's existing ops::

    cols = [numeric_column("x", shape=[2]),
            indicator_column(categorical_column_with_vocabulary_list("c", ["a", "b"]))]
    net = input_layer(features, cols)      # features: dict of tensors / SparseTensors
    spec = make_parse_example_spec(cols)   # for og.io.parse_example

crossed_column and shared_embedding_columns build the classes of
train/feature_column_crossed.py; the others live in train/feature_column_columns.py."""

from __future__ import annotations

import collections.abc
import math

import numpy as np

from .feature_column_columns import (BucketizedColumn, EmbeddingColumn,
                                     HashedCategoricalColumn, IdentityCategoricalColumn,
                                     IndicatorColumn, NumericColumn,
                                     VocabularyFileCategoricalColumn,
                                     VocabularyListCategoricalColumn, WeightedCategoricalColumn,
                                     _Builder, _CategoricalColumn, _Column, _DenseColumn,
                                     _check_key, _check_string_or_int, _dtr, _dtype, _is_int,
                                     _og)
from .feature_column_crossed import CrossedColumn, SharedEmbeddingColumn

__all__ = ["numeric_column", "bucketized_column", "categorical_column_with_identity",
           "categorical_column_with_vocabulary_list", "categorical_column_with_vocabulary_file",
           "categorical_column_with_hash_bucket", "weighted_categorical_column",
           "indicator_column", "embedding_column", "input_layer", "linear_model",
           "make_parse_example_spec", "crossed_column", "shared_embedding_columns"]


def _check_shape(shape, key) -> tuple:
    if not isinstance(shape, collections.abc.Iterable):
        shape = [shape]
    shape = tuple(shape)
    for d in shape:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise TypeError(f"shape dimensions must be integer. shape: {shape}, key: {key}")
        if d < 1:
            raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, "
                             f"key: {key}")
    return tuple(int(d) for d in shape)


def _nested_tuple(a):
    return tuple(_nested_tuple(x) for x in a) if isinstance(a, list) else a


def numeric_column(key, shape=(1,), default_value=None, dtype=None, normalizer_fn=None):
    """A dense column of a numeric feature of per-example `shape` (cast to float32).

    Raises:
        ValueError: a shape dimension < 1, default_value not of `shape`, dtype not numeric,
            key not a string.
        TypeError: a non-integer shape dimension, normalizer_fn not callable.
    """
    og = _og()
    dtype = og.float32 if dtype is None else _dtype(dtype)
    shape = _check_shape(shape, key)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {_dtr(dtype)}, key: {key}")
    if default_value is not None:
        if isinstance(default_value, (int, float)):
            default_value = _nested_tuple(np.full(shape, default_value).tolist())
        else:
            arr = np.asarray(default_value)
            if arr.shape != shape:
                raise ValueError("The shape of default_value must be equal to given shape. "
                                 f"default_value: {default_value}, shape: {shape}, key: {key}")
            default_value = _nested_tuple(arr.tolist())
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    _check_key(key)
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def bucketized_column(source_column, boundaries):
    """A column of the bucket ids of a 1-D numeric column (one-hot when dense).

    Raises:
        ValueError: source_column not a 1-D numeric_column, boundaries not a sorted list.
    """
    if not isinstance(source_column, NumericColumn):
        raise ValueError("source_column must be a column generated with numeric_column(). "
                         f"Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    if not boundaries or not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    for i in range(len(boundaries) - 1):
        if boundaries[i] >= boundaries[i + 1]:
            raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, tuple(boundaries))


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """A categorical column whose integer inputs are the ids in [0, num_buckets); others
    become default_value when it is given.

    Raises:
        ValueError: num_buckets < 1, default_value out of range, key not a string.
    """
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), "
                         f"column_name {key}")
    _check_key(key)
    return IdentityCategoricalColumn(key, int(num_buckets), default_value)


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=None):
    """A categorical column of FarmHash Fingerprint64 buckets of the (decimal text of the)
    inputs.

    Raises:
        ValueError: hash_bucket_size < 1 or None, dtype neither string nor integer.
    """
    og = _og()
    dtype = og.string if dtype is None else _dtype(dtype)
    if hash_bucket_size is None:
        raise ValueError(f"hash_bucket_size must be set. key: {key}")
    if hash_bucket_size < 1:
        raise ValueError("hash_bucket_size must be at least 1. hash_bucket_size: "
                         f"{hash_bucket_size}, key: {key}")
    _check_key(key)
    _check_string_or_int(dtype, f"column_name: {key}")
    return HashedCategoricalColumn(key, int(hash_bucket_size), dtype)


def _vocab_dtype(vocabulary_list):
    og = _og()
    kind = np.array(vocabulary_list).dtype.kind
    if kind in "USO":
        return og.string
    return og.int64 if kind in "iu" else _dtype(np.array(vocabulary_list).dtype)


def _check_oov(key, num_oov_buckets, default_value) -> None:
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1,
                                            num_oov_buckets=0):
    """A categorical column of each input's position in vocabulary_list; others get
    default_value, or one of num_oov_buckets hash buckets after the vocabulary.

    Raises:
        ValueError: empty or duplicated vocabulary, both num_oov_buckets and default_value,
            negative num_oov_buckets, dtype not matching the vocabulary's.
    """
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: "
                         f"{key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: "
                         f"{key}")
    vocab_dtype = _vocab_dtype(vocabulary_list)
    _check_oov(key, num_oov_buckets, default_value)
    _check_string_or_int(vocab_dtype, f"column_name: {key} vocabulary")
    if dtype is None:
        dtype = vocab_dtype
    elif _is_int(dtype) != _is_int(vocab_dtype):
        raise ValueError(f"dtype {_dtr(dtype)} and vocabulary dtype {_dtr(vocab_dtype)} do "
                         f"not match, column_name: {key}")
    _check_string_or_int(dtype, f"column_name: {key}")
    _check_key(key)
    return VocabularyListCategoricalColumn(key, tuple(vocabulary_list), _dtype(dtype),
                                           default_value, int(num_oov_buckets))


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None, dtype=None):
    """A categorical column of each input's line number in vocabulary_file (first
    vocabulary_size lines; the file's line count when None).

    Raises:
        ValueError: no vocabulary_file, vocabulary_size < 1, both num_oov_buckets and
            default_value, negative num_oov_buckets, dtype neither string nor integer.
        OSError: the file cannot be read to count its lines.
    """
    og = _og()
    dtype = og.string if dtype is None else _dtype(dtype)
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        with open(vocabulary_file, "rb") as fh:
            vocabulary_size = sum(1 for _ in fh)
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    _check_string_or_int(dtype, f"column_name: {key}")
    _check_key(key)
    return VocabularyFileCategoricalColumn(
        key, vocabulary_file, int(vocabulary_size), int(num_oov_buckets or 0), dtype,
        -1 if default_value is None else default_value)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=None):
    """A categorical column whose ids carry the weights of feature weight_feature_key.

    Raises:
        ValueError: dtype not floating or integer.
    """
    og = _og()
    dtype = og.float32 if dtype is None else _dtype(dtype)
    if dtype is None or not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {_dtr(dtype)} is not convertible to float.")
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)


def indicator_column(categorical_column):
    """A dense multi-hot (or weight-summing) column of a categorical column.

    Raises:
        ValueError: categorical_column is not categorical.
    """
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError("Unsupported input type. Input must be a CategoricalColumn. Given: "
                         f"{categorical_column}")
    return IndicatorColumn(categorical_column)


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    """A dense column of the combined embeddings of a categorical column's ids (variable
    embedding_weights of [num_buckets, dimension], truncated normal with stddev
    1/sqrt(dimension) unless initializer is given).

    Raises:
        ValueError: dimension < 1, initializer not callable, checkpoint arguments (not
            supported: warm-start with og.train.warm_start instead).
    """
    og = _og()
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if ckpt_to_load_from is not None or tensor_name_in_ckpt is not None:
        raise ValueError("ckpt_to_load_from and tensor_name_in_ckpt are not supported.")
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified. Embedding of "
                         f"column_name: {categorical_column.name}")
    if initializer is None:
        initializer = og.truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer,
                           max_norm, trainable)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """A categorical column of the hashed crosses of its keys (feature names, whose raw
    string or integer features are crossed, or categorical columns, whose ids are):
    og.sparse.cross_hashed into hash_bucket_size buckets, named by the sorted leaf names
    joined with "_X_".

    Raises:
        ValueError: hash_bucket_size < 1, fewer than two keys, a key neither a string
            nor a categorical column, a hashed categorical column as key (TF's messages).
    """
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, _CategoricalColumn)):
            raise ValueError("Unsupported key type. All keys must be either string, or "
                             "categorical column except HashedCategoricalColumn. "
                             f"Given: {key}")
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for "
                             "crossing. Hashing before crossing will increase probability "
                             "of collision. Instead, use the feature name as a string. "
                             f"Given: {key}")
    return CrossedColumn(tuple(keys), hash_bucket_size, hash_key)


def _base_categorical(col):
    while isinstance(col, WeightedCategoricalColumn):
        col = col.categorical_column
    return col


def shared_embedding_columns(categorical_columns, dimension, combiner="mean",
                             initializer=None, shared_embedding_collection_name=None,
                             ckpt_to_load_from=None, tensor_name_in_ckpt=None,
                             max_norm=None, trainable=True, use_safe_embedding_lookup=True):
    """TF1's shared embedding columns: one dense column per categorical column, all
    looking up one variable embedding_weights [num_buckets, dimension] created under
    the scope <collection name> (default: the sorted columns' names joined by "_" plus
    "_shared_embedding") by the first of them input_layer builds.

    Raises:
        ValueError: dimension < 1, only one of the checkpoint arguments (both are not
            supported either), initializer not callable, a column not categorical, columns
            of different kinds or bucket counts (TF's messages), no columns.
    """
    og = _og()
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or "
                         "none of them.")
    if ckpt_to_load_from is not None:
        raise ValueError("ckpt_to_load_from and tensor_name_in_ckpt are not supported.")
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified.")
    if initializer is None:
        initializer = og.truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))
    cols = list(categorical_columns)
    if not cols:
        raise ValueError("categorical_columns must not be empty.")
    for c in cols:
        if not isinstance(c, _CategoricalColumn):
            raise ValueError("All categorical_columns must be subclasses of _CategoricalColumn. "
                             f"Given: {c}, of type: {type(c)}")
    ordered = sorted(cols, key=lambda c: c.name)
    first = _base_categorical(ordered[0])
    buckets = ordered[0].num_buckets
    for c in ordered[1:]:
        base = _base_categorical(c)
        if not isinstance(base, type(first)):
            raise ValueError("To use shared_embedding_column, all categorical_columns must "
                             "have the same type, or be weighted_categorical_column or "
                             f"sequence column of the same type. Given column: {first} of "
                             f"type: {type(first)} does not match given column: {base} of "
                             f"type: {type(base)}")
        if buckets != c.num_buckets:
            raise ValueError("To use shared_embedding_column, all categorical_columns must "
                             f"have the same number of buckets. ven column: {first} with "
                             f"buckets: {buckets} does  not match column: {c} with buckets: "
                             f"{c.num_buckets}")
    name = shared_embedding_collection_name or (
        "_".join(c.name for c in ordered) + "_shared_embedding")
    return [SharedEmbeddingColumn(c, int(dimension), combiner, initializer, name, max_norm,
                                  trainable) for c in cols]


def _normalize(feature_columns, dense_only: bool) -> list:
    if isinstance(feature_columns, _Column):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    if not isinstance(feature_columns, collections.abc.Iterable):
        raise ValueError(f"Expected feature_columns to be iterable, found "
                         f"{type(feature_columns).__name__}.")
    cols = list(feature_columns)
    if not cols:
        raise ValueError("feature_columns must not be empty.")
    by_name: dict = {}
    for col in cols:
        if dense_only and not isinstance(col, _DenseColumn):
            raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap a "
                             "categorical column with an embedding_column or indicator_column. "
                             f"Given: {col}")
        if not isinstance(col, _Column):
            raise ValueError(f"Items of feature_columns must be a _FeatureColumn. Given "
                             f"(type {type(col)}): {col}.")
        if col.name in by_name:
            raise ValueError(f"Duplicate feature column name found for columns: "
                             f"{by_name[col.name]} and {col}. This usually means that these "
                             "columns refer to same base feature. Either one must be discarded "
                             "or a duplicated but renamed item must be inserted in features "
                             "dict.")
        by_name[col.name] = col
    return cols


def _flatten(tensor, n: int, name: str):
    """tensor as [batch, n], checking the static element count as TF's reshape does."""
    og = _og()
    shape = tensor.shape
    if shape.ndims is not None and all(d is not None for d in shape.as_list()[1:]):
        per_row = int(np.prod(shape.as_list()[1:]))
        if per_row != n:
            raise ValueError(f"Cannot reshape a tensor with {per_row} elements per example of "
                             f"column {name} to shape [batch,{n}]")
    return og.reshape(tensor, [-1, n])


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """TF1's input_layer: the dense columns' outputs, sorted by column name, each
    reshaped to [batch, elements], concatenated on axis 1 (float32).

    Raises:
        ValueError: no columns, a non-dense column, duplicate names, a feature missing from
            `features`, a rank-0 feature, a feature whose size does not fit its column.
    """
    og = _og()
    cols = _normalize(feature_columns, dense_only=True)
    builder = _Builder(features)
    outs = []
    with og.variable_scope(None, default_name="input_layer"):
        for col in sorted(cols, key=lambda c: c.name):
            with og.variable_scope(None, default_name=col._var_scope_name):
                t = _flatten(col.dense(builder, trainable), col.num_elements, col.name)
            outs.append(t)
            if cols_to_output_tensors is not None:
                cols_to_output_tensors[col] = t
        return og.concat(outs, 1)


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """TF1's linear_model: sum over the columns (sorted by name) of their weighted sums
    (variables linear_model/<col>/weights, zeros) plus linear_model/bias_weights.

    Raises:
        ValueError: no columns, duplicate names, a missing feature, an unknown
            sparse_combiner with categorical columns.
    """
    og = _og()
    cols = _normalize(feature_columns, dense_only=False)
    builder = _Builder(features)
    sums = []
    with og.variable_scope(None, default_name="linear_model"):
        for col in sorted(cols, key=lambda c: c.name):
            with og.variable_scope(None, default_name=col._var_scope_name):
                sums.append(_weighted_sum(col, builder, units, sparse_combiner, trainable))
        total = sums[0] if len(sums) == 1 else og.add_n(sums, name="weighted_sum_no_bias")
        bias = og.get_variable("bias_weights", shape=[units], dtype=og.float32,
                               initializer=og.zeros_initializer(), trainable=trainable)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        return og.nn.bias_add(total, bias, name="weighted_sum")


def _weighted_sum(col, builder, units, sparse_combiner, trainable):
    og = _og()
    if isinstance(col, _DenseColumn) and not isinstance(col, BucketizedColumn):
        n = col.num_elements
        t = _flatten(col.dense(builder, trainable), n, col.name)
        w = og.get_variable("weights", shape=[n, units], dtype=og.float32,
                            initializer=og.zeros_initializer(), trainable=trainable)
        return og.matmul(t, w, name="weighted_sum")
    if sparse_combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got "
                         f"{sparse_combiner!r}")
    ids, weights = col.sparse(builder, trainable)
    ids = og.sparse_reshape(ids, og.stack([ids.dense_shape[0], og.constant(np.int64(-1))]))
    if weights is not None:
        weights = og.sparse_reshape(weights, og.stack([weights.dense_shape[0],
                                                       og.constant(np.int64(-1))]))
    w = og.get_variable("weights", shape=[col.num_buckets, units], dtype=og.float32,
                        initializer=og.zeros_initializer(), trainable=trainable)
    return og.nn.safe_embedding_lookup_sparse(w, ids, weights, combiner=sparse_combiner,
                                              name="weighted_sum")


def make_parse_example_spec(feature_columns):
    """The og.io.parse_example spec the columns need: FixedLenFeature for numeric
    columns, VarLenFeature for categorical ones (and their weights).

    Raises:
        ValueError: an item is not a feature column, two columns disagree on a key's spec.
    """
    spec: dict = {}
    for col in feature_columns:
        if not isinstance(col, _Column):
            raise ValueError(f"All feature_columns must be _FeatureColumn instances. Given: {col}")
        for key, value in col.parse_spec().items():
            if key in spec and repr(spec[key]) != repr(value):
                raise ValueError(f"feature_columns contain different parse_spec for key {key}. "
                                 f"Given {spec[key]} and {value}")
            spec[key] = value
    return spec

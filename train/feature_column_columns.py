"""The column classes of TF1's tf.feature_column (see train/feature_column.py): each
column's name, parse spec, transformation of the features and dense or sparse output.

Columns follow TF 1.x semantics: names ("c_embedding", "p_bucketized",
"c_weighted_by_w"), variables (input_layer/<col>_embedding/embedding_weights,
linear_model/<col>/weights, linear_model/bias_weights), columns sorted by name, 1-D
inputs expanded to [batch, 1], dense categorical inputs turned sparse by dropping ""
(strings) or -1 (integers), and TF's error wording."""

from __future__ import annotations

import numpy as np

_COMBINERS = ("mean", "sqrtn", "sum")


def _og():
    # imported lazily: onegraph's public namespace loads train/ on first use
    import onegraph as og
    return og


def _dtype(d):
    """An og DType from an og DType, numpy dtype or name."""
    og = _og()
    if isinstance(d, np.dtype) and d.kind in "USO":
        return og.string
    return og.as_dtype(d)


def _dtr(d) -> str:
    """TF's repr of a dtype, as its messages print it."""
    return f"<dtype: '{_dtype(d).name.lower()}'>"


def _is_int(d) -> bool:
    return bool(_dtype(d).is_integer)


def _is_str(d) -> bool:
    return _dtype(d) == _og().string


def _check_string_or_int(d, prefix: str) -> None:
    if not (_is_str(d) or _is_int(d)):
        raise ValueError(f"{prefix} dtype must be string or integer. dtype: {_dtr(d)}.")


def _check_key(key) -> None:
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")


class _Column:
    """Base of every column: a name, sorting and a TF-like repr."""

    _fields: tuple = ()

    @property
    def _var_scope_name(self) -> str:
        return self.name

    def __repr__(self) -> str:
        parts = ", ".join(f"{f}={_field_repr(getattr(self, f))}" for f in self._fields)
        return f"{type(self).__name__}({parts})"


def _field_repr(v) -> str:
    og = _og()
    if isinstance(v, type(og.float32)):
        return f"tf.{v.name.lower()}"
    return repr(v)


class _DenseColumn(_Column):
    pass


class _CategoricalColumn(_Column):
    pass


class NumericColumn(_DenseColumn):
    _fields = ("key", "shape", "default_value", "dtype", "normalizer_fn")

    def __init__(self, key, shape, default_value, dtype, normalizer_fn):
        self.key, self.shape, self.default_value = key, shape, default_value
        self.dtype, self.normalizer_fn = dtype, normalizer_fn

    @property
    def name(self):
        return self.key

    @property
    def num_elements(self) -> int:
        return int(np.prod(self.shape))

    def parse_spec(self) -> dict:
        return {self.key: _og().io.FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def transform(self, builder):
        og = _og()
        t = builder.get(self.key)
        if isinstance(t, og.SparseTensor):
            raise ValueError("The corresponding Tensor of numerical column must be a Tensor. "
                             f"SparseTensor is not supported. key: {self.key}")
        if self.normalizer_fn is not None:
            t = self.normalizer_fn(t)
        return og.cast(t, og.float32)

    def dense(self, builder, trainable):
        return builder.get(self)


class BucketizedColumn(_DenseColumn, _CategoricalColumn):
    _fields = ("source_column", "boundaries")

    def __init__(self, source_column, boundaries):
        self.source_column, self.boundaries = source_column, boundaries

    @property
    def name(self):
        return f"{self.source_column.name}_bucketized"

    @property
    def num_buckets(self) -> int:
        return (len(self.boundaries) + 1) * self.source_column.shape[0]

    @property
    def num_elements(self) -> int:
        return self.num_buckets

    def parse_spec(self) -> dict:
        return self.source_column.parse_spec()

    def transform(self, builder):
        og = _og()
        x = builder.get(self.source_column)
        # TF's Bucketize: the bucket is the count of boundaries <= x
        b = og.constant(np.asarray(self.boundaries, np.float32))
        ge = og.greater_equal(og.expand_dims(x, -1), b)
        return og.reduce_sum(og.cast(ge, og.int64), axis=-1)

    def dense(self, builder, trainable):
        og = _og()
        return og.one_hot(builder.get(self), depth=len(self.boundaries) + 1,
                          on_value=1.0, off_value=0.0)

    def sparse(self, builder, trainable):
        og = _og()
        ids = builder.get(self)
        dim = self.source_column.shape[0]
        width = len(self.boundaries) + 1
        ids = og.reshape(ids, [-1, dim])
        # every (row, dimension) holds one id; dimension d's ids are offset by d * width
        ids = ids + og.constant(np.arange(dim, dtype=np.int64) * width)
        indices = og.where(og.greater_equal(ids, og.constant(np.int64(0))))
        st = og.SparseTensor(indices, og.reshape(ids, [-1]), og.shape(ids, out_type=og.int64))
        return st, None


class _Categorical(_CategoricalColumn):
    """A categorical column mapping one feature to ids."""

    def parse_spec(self) -> dict:
        return {self.key: _og().io.VarLenFeature(self.dtype)}

    @property
    def name(self):
        return self.key

    def sparse(self, builder, trainable):
        return builder.get(self), None

    def transform(self, builder):
        og = _og()
        st = _to_sparse(builder.get(self.key))
        values = self.ids(st.values, st.values.dtype)
        return og.SparseTensor(st.indices, values, st.dense_shape)

    def _check_input(self, dtype):
        if _is_int(self.dtype) != _is_int(dtype):
            raise ValueError("Column dtype and SparseTensors dtype must be compatible. key: "
                             f"{self.key}, column dtype: {_dtr(self.dtype)}, tensor dtype: "
                             f"{_dtr(dtype)}")
        _check_string_or_int(dtype, f"column_name: {self.key} input_tensor")


class IdentityCategoricalColumn(_Categorical):
    _fields = ("key", "number_buckets", "default_value")

    def __init__(self, key, number_buckets, default_value):
        self.key, self.number_buckets, self.default_value = key, number_buckets, default_value
        self.dtype = _og().int64

    @property
    def num_buckets(self):
        return self.number_buckets

    def ids(self, values, dtype):
        og = _og()
        if not _is_int(dtype):
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: {_dtr(dtype)}")
        values = og.cast(values, og.int64)
        if self.default_value is None:
            return values
        bad = og.logical_or(og.less(values, og.constant(np.int64(0))),
                            og.greater_equal(values, og.constant(np.int64(self.num_buckets))))
        return og.where(bad, og.fill(og.shape(values), og.constant(
            np.int64(self.default_value))), values)


class HashedCategoricalColumn(_Categorical):
    _fields = ("key", "hash_bucket_size", "dtype")

    def __init__(self, key, hash_bucket_size, dtype):
        self.key, self.hash_bucket_size, self.dtype = key, hash_bucket_size, dtype

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    def ids(self, values, dtype):
        og = _og()
        self._check_input(dtype)
        if not _is_str(dtype):
            values = og.as_string(values)  # TF hashes integers as their decimal text
        return og.string_to_hash_bucket_fast(values, self.hash_bucket_size, name="lookup")


class VocabularyListCategoricalColumn(_Categorical):
    _fields = ("key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets")

    def __init__(self, key, vocabulary_list, dtype, default_value, num_oov_buckets):
        self.key, self.vocabulary_list, self.dtype = key, vocabulary_list, dtype
        self.default_value, self.num_oov_buckets = default_value, num_oov_buckets

    @property
    def num_buckets(self):
        return len(self.vocabulary_list) + self.num_oov_buckets

    def ids(self, values, dtype):
        og = _og()
        from . import lookup
        self._check_input(dtype)
        key_dtype = self.dtype
        if _is_int(dtype):
            key_dtype = og.int64
            values = og.cast(values, og.int64)
        vocab = list(self.vocabulary_list)
        table = lookup.index_table_from_tensor(
            vocabulary_list=np.asarray(vocab, np.int64) if _is_int(key_dtype) else vocab,
            num_oov_buckets=self.num_oov_buckets, default_value=self.default_value,
            dtype=key_dtype, name=f"{self.key}_lookup")
        return table.lookup(values)


class VocabularyFileCategoricalColumn(_Categorical):
    _fields = ("key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype",
               "default_value")

    def __init__(self, key, vocabulary_file, vocabulary_size, num_oov_buckets, dtype,
                 default_value):
        self.key, self.vocabulary_file, self.vocabulary_size = key, vocabulary_file, \
            vocabulary_size
        self.num_oov_buckets, self.dtype, self.default_value = num_oov_buckets, dtype, \
            default_value

    @property
    def num_buckets(self):
        return self.vocabulary_size + self.num_oov_buckets

    def ids(self, values, dtype):
        og = _og()
        from . import lookup
        self._check_input(dtype)
        key_dtype = self.dtype
        if _is_int(dtype):
            key_dtype = og.int64
            values = og.cast(values, og.int64)
        table = lookup.index_table_from_file(
            vocabulary_file=self.vocabulary_file, num_oov_buckets=self.num_oov_buckets,
            vocab_size=self.vocabulary_size, default_value=self.default_value,
            key_dtype=key_dtype, name=f"{self.key}_lookup")
        return table.lookup(values)


class WeightedCategoricalColumn(_CategoricalColumn):
    _fields = ("categorical_column", "weight_feature_key", "dtype")

    def __init__(self, categorical_column, weight_feature_key, dtype):
        self.categorical_column, self.weight_feature_key = categorical_column, weight_feature_key
        self.dtype = dtype

    @property
    def name(self):
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def num_buckets(self):
        return self.categorical_column.num_buckets

    def parse_spec(self) -> dict:
        spec = dict(self.categorical_column.parse_spec())
        spec[self.weight_feature_key] = _og().io.VarLenFeature(self.dtype)
        return spec

    def transform(self, builder):
        og = _og()
        w = builder.get(self.weight_feature_key)
        if _dtype(w.dtype) != _dtype(self.dtype):
            raise ValueError(f"Bad dtype, expected {_dtr(self.dtype)}, but got {_dtr(w.dtype)}.")
        if not isinstance(w, og.SparseTensor):
            w = _to_sparse(w, ignore_value=0.0)
        if not _dtype(w.dtype).is_floating:
            w = og.SparseTensor(w.indices, og.cast(w.values, og.float32), w.dense_shape)
        ids, _ = self.categorical_column.sparse(builder, True)
        return ids, w

    def sparse(self, builder, trainable):
        return builder.get(self)


class IndicatorColumn(_DenseColumn):
    _fields = ("categorical_column",)

    def __init__(self, categorical_column):
        self.categorical_column = categorical_column

    @property
    def name(self):
        return f"{self.categorical_column.name}_indicator"

    @property
    def num_elements(self) -> int:
        return self.categorical_column.num_buckets

    def parse_spec(self) -> dict:
        return self.categorical_column.parse_spec()

    def transform(self, builder):
        og = _og()
        ids, weights = self.categorical_column.sparse(builder, True)
        size = self.categorical_column.num_buckets
        if weights is not None:
            # a weighted column's row holds the sum of its ids' weights (duplicates add)
            idx = og.stack([ids.indices[:, 0], ids.values], axis=1)
            shape = og.stack([ids.dense_shape[0], og.constant(np.int64(size))])
            return og.scatter_nd(idx, weights.values, shape)
        dense = og.sparse_tensor_to_dense(ids, default_value=-1)
        hot = og.one_hot(dense, depth=size, on_value=1.0, off_value=0.0)
        return og.reduce_sum(hot, axis=[-2])

    def dense(self, builder, trainable):
        return builder.get(self)


class EmbeddingColumn(_DenseColumn):
    _fields = ("categorical_column", "dimension", "combiner", "initializer", "max_norm",
               "trainable")

    def __init__(self, categorical_column, dimension, combiner, initializer, max_norm,
                 trainable):
        self.categorical_column, self.dimension, self.combiner = categorical_column, \
            dimension, combiner
        self.initializer, self.max_norm, self.trainable = initializer, max_norm, trainable

    @property
    def name(self):
        return f"{self.categorical_column.name}_embedding"

    @property
    def num_elements(self) -> int:
        return self.dimension

    def parse_spec(self) -> dict:
        return self.categorical_column.parse_spec()

    def dense(self, builder, trainable):
        og = _og()
        if self.combiner not in _COMBINERS:
            raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got "
                             f"{self.combiner!r}")
        ids, weights = self.categorical_column.sparse(builder, trainable)
        var = og.get_variable("embedding_weights",
                              shape=[self.categorical_column.num_buckets, self.dimension],
                              dtype=og.float32, initializer=self.initializer,
                              trainable=bool(self.trainable and trainable))
        return og.nn.safe_embedding_lookup_sparse(var, ids, weights, combiner=self.combiner,
                                                  name=f"{self.name}_weights",
                                                  max_norm=self.max_norm)


def _to_sparse(t, ignore_value=None):
    """A dense feature as a SparseTensor without its ignored entries ("" or -1 or 0)."""
    og = _og()
    if isinstance(t, og.SparseTensor):
        return t
    d = _dtype(t.dtype)
    if ignore_value is None:
        ignore_value = b"" if d == og.string else (-1 if d.is_integer else 0)
    ignore = og.constant(np.asarray(ignore_value, d.as_numpy_dtype() if d != og.string
                                    else object))
    indices = og.where(og.not_equal(t, ignore))
    return og.SparseTensor(indices, og.gather_nd(t, indices), og.shape(t, out_type=og.int64))


class _Builder:
    """TF's _LazyBuilder: raw features (rank checked, 1-D expanded) and transformed
    columns, each computed once."""

    def __init__(self, features):
        self._features = features
        self._cache: dict = {}

    def get(self, key):
        ck = key if isinstance(key, str) else id(key)
        if ck in self._cache:
            return self._cache[ck]
        out = self._raw(key) if isinstance(key, str) else key.transform(self)
        self._cache[ck] = out
        return out

    def _raw(self, key):
        og = _og()
        if key not in self._features:
            raise ValueError(f"Feature {key} is not in features dictionary.")
        t = self._features[key]
        if isinstance(t, og.SparseTensor):
            rank = t.dense_shape.shape.as_list()[0] if t.dense_shape.shape.ndims else None
            if rank == 1:
                return og.sparse_reshape(t, og.stack([t.dense_shape[0],
                                                      og.constant(np.int64(1))]))
            return t
        t = og.convert_to_tensor(t)
        ndims = t.shape.ndims
        if ndims == 0:
            raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {t}")
        return og.expand_dims(t, -1) if ndims == 1 else t

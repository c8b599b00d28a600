"""TF1's crossed and shared-embedding feature columns (see train/feature_column.py):
CrossedColumn hashes the cross of raw string features and categorical columns' ids
(og.sparse.cross_hashed) into hash_bucket_size buckets; SharedEmbeddingColumn embeds a
categorical column's ids with one variable shared by all columns of a
shared_embedding_columns call (found again through a graph collection, as TF's)."""

from __future__ import annotations

from .feature_column_columns import _COMBINERS, _CategoricalColumn, _DenseColumn, _og


def leaf_keys(cross) -> list:
    """The keys of a crossed column, nested crossed columns replaced by their keys."""
    out = []
    for k in cross.keys:
        out.extend(leaf_keys(k) if isinstance(k, CrossedColumn) else [k])
    return out


class CrossedColumn(_CategoricalColumn):
    _fields = ("keys", "hash_bucket_size", "hash_key")

    def __init__(self, keys, hash_bucket_size, hash_key):
        self.keys, self.hash_bucket_size, self.hash_key = keys, hash_bucket_size, hash_key

    @property
    def name(self):
        names = [k if isinstance(k, str) else k.name for k in leaf_keys(self)]
        return "_X_".join(sorted(names))

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    def parse_spec(self) -> dict:
        og = _og()
        spec: dict = {}
        for key in self.keys:
            if isinstance(key, str):
                spec[key] = og.io.VarLenFeature(og.string)
            else:
                spec.update(key.parse_spec())
        return spec

    def transform(self, builder):
        """The hashed cross of the leaf features (raw features for string keys, the ids
        of categorical columns).

        Raises:
            ValueError: a categorical key carries weights (TF's message).
        """
        og = _og()
        tensors = []
        for key in leaf_keys(self):
            if isinstance(key, str):
                tensors.append(builder.get(key))
                continue
            ids, weights = key.sparse(builder, True)
            if weights is not None:
                raise ValueError("crossed_column does not support weight_tensor, but the "
                                 "given column populates weight_tensor. Given column: "
                                 f"{key.name}")
            tensors.append(ids)
        return og.sparse.cross_hashed(tensors, num_buckets=self.hash_bucket_size,
                                      hash_key=self.hash_key)

    def sparse(self, builder, trainable):
        return builder.get(self), None


class SharedEmbeddingColumn(_DenseColumn):
    _fields = ("categorical_column", "dimension", "combiner", "initializer",
               "shared_embedding_collection_name", "ckpt_to_load_from",
               "tensor_name_in_ckpt", "max_norm", "trainable")

    def __init__(self, categorical_column, dimension, combiner, initializer,
                 shared_embedding_collection_name, max_norm, trainable):
        self.categorical_column, self.dimension = categorical_column, dimension
        self.combiner, self.initializer = combiner, initializer
        self.shared_embedding_collection_name = shared_embedding_collection_name
        self.ckpt_to_load_from = self.tensor_name_in_ckpt = None
        self.max_norm, self.trainable = max_norm, trainable

    @property
    def name(self):
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def _var_scope_name(self) -> str:
        # every column of the group enters the scope of the shared variable's name
        return self.shared_embedding_collection_name

    @property
    def num_elements(self) -> int:
        return self.dimension

    def parse_spec(self) -> dict:
        return self.categorical_column.parse_spec()

    def _weights(self, trainable):
        """The group's variable: the one in the graph collection named after the group,
        else a new embedding_weights in the current scope, added to it.

        Raises:
            ValueError: the collection holds more than one variable, or one of another
                shape (TF's messages).
        """
        og = _og()
        name = self.shared_embedding_collection_name
        shape = [self.categorical_column.num_buckets, self.dimension]
        found = og.get_collection(name)
        if found:
            if len(found) > 1:
                raise ValueError(f"Collection {found} can only contain one variable. Suggested "
                                 "fix A: Choose a unique name for this collection. Suggested "
                                 "fix B: Do not add any variables to this collection. The "
                                 "feature_column library already adds a variable under the "
                                 "hood.")
            var = found[0]
            if var.shape.as_list() != shape:
                raise ValueError(f"Shared embedding collection {name} contains variable "
                                 f"{var.name} of unexpected shape {var.shape}. Expected shape "
                                 f"is {tuple(shape)}.")
            return var
        var = og.get_variable("embedding_weights", shape=shape, dtype=og.float32,
                              initializer=self.initializer,
                              trainable=bool(self.trainable and trainable))
        og.add_to_collection(name, var)
        return var

    def dense(self, builder, trainable):
        og = _og()
        if self.combiner not in _COMBINERS:
            raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got "
                             f"{self.combiner!r}")
        ids, weights = self.categorical_column.sparse(builder, trainable)
        var = self._weights(trainable)
        return og.nn.safe_embedding_lookup_sparse(var, ids, weights, combiner=self.combiner,
                                                  name=f"{self.name}_weights",
                                                  max_norm=self.max_norm)

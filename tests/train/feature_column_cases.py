"""The feature-column scenarios that tools/record_tf_feature_column.py runs under
TensorFlow (tf.compat.v1.feature_column) and tests/train/test_feature_column.py under
onegraph (onegraph.train.feature_column).

`lib` is a namespace with `fc` (the feature_column module), constant, placeholder,
SparseTensor, the dtypes, constant_initializer, gradients, reduce_sum, global_variables,
convert_to_tensor and `path(name)` (the path of FILES[name] in a scratch folder). A
scenario returns {"out": {name: tensor}, "feed": {...}, "assign": bool}; the runner
initializes variables and tables, then (when "assign" is set) gives every global
variable the values `fill(shape)`, runs the outputs and records them with each global
variable's name and shape. "spec" outputs are make_parse_example_spec results, recorded
through `spec_record`."""

from __future__ import annotations

import numpy as np

FILES = {"vocab.txt": b"red\ngreen\nblue\n", "ivocab.txt": b"10\n20\n30\n40\n"}

WORDS = ["x", "zz", "hello", "hello world", "0123456789abcdef", "a" * 17, "b" * 32,
         "the quick brown fox", "\u00fcber", "\u65e5\u672c\u8a9e", "tab\there", "caf\u00e9",
         "d" * 70, "1", "-5", "k"]
INTS = [0, 1, 7, 42, 1000, 123456789, 2 ** 40, -5, -100]


def _s(items, shape=None) -> np.ndarray:
    """A string array of `items` as UTF-8 bytes (both frameworks accept it)."""
    out = np.empty(len(items), dtype=object)
    out[:] = [v.encode("utf-8") if isinstance(v, str) else v for v in items]
    return out.reshape(shape if shape is not None else (len(items),))


def fill(shape) -> np.ndarray:
    """The deterministic float32 values the runner assigns to a variable of `shape`."""
    n = int(np.prod(shape)) if len(shape) else 1
    return (np.arange(n, dtype=np.float32) * 0.25 - 0.5).reshape(shape)


def spec_record(spec) -> dict:
    """A make_parse_example_spec result as JSON-able data (class, shape, dtype, default)."""
    out = {}
    for key in sorted(spec):
        f = spec[key]
        rec = {"kind": type(f).__name__, "dtype": f.dtype.name.lower()}
        if hasattr(f, "shape"):
            rec["shape"] = [int(d) for d in f.shape]
            d = f.default_value
            rec["default"] = None if d is None else np.asarray(d).tolist()
        out[key] = rec
    return out


def _emb_init(lib, n):
    # weights row i = [i]: a sum-combined dimension-1 embedding shows the bucket id
    return lib.constant_initializer(np.arange(n, dtype=np.float32).reshape(n, 1))


def _numeric(lib):
    fc = lib.fc
    cols = [fc.numeric_column("x", shape=[2]), fc.numeric_column("a"),
            fc.numeric_column("m", shape=(2, 2), normalizer_fn=lambda t: t * 2.0 + 1.0)]
    feats = {"x": lib.constant(np.array([[1., 2.], [3., 4.]], np.float32)),
             "a": lib.constant(np.array([5., 6.], np.float32)),
             "m": lib.constant(np.arange(8, dtype=np.float32).reshape(2, 2, 2))}
    return {"out": {"net": fc.input_layer(feats, cols)}}


def _numeric_placeholder(lib):
    fc = lib.fc
    ph = lib.placeholder(lib.float32, [None, 3])
    ph2 = lib.placeholder(lib.int64, [None])
    cols = [fc.numeric_column("v", shape=[3]), fc.numeric_column("i", dtype=lib.int64)]
    return {"out": {"net": fc.input_layer({"v": ph, "i": ph2}, cols)},
            "feed": {ph: np.ones((2, 3), np.float32), ph2: np.array([3, -4], np.int64)}}


def _bucketized(lib):
    fc = lib.fc
    b = fc.bucketized_column(fc.numeric_column("p", shape=[2]), [0., 1., 5.])
    c = fc.bucketized_column(fc.numeric_column("q"), boundaries=[-1, 10])
    feats = {"p": lib.constant(np.array([[-3., 0.], [1., 4.9], [5., 100.]], np.float32)),
             "q": lib.constant(np.array([-1., 3., 11.], np.float32))}
    return {"out": {"net": fc.input_layer(feats, [b, c])}}


def _identity(lib):
    fc = lib.fc
    a = fc.indicator_column(fc.categorical_column_with_identity("i", num_buckets=4))
    b = fc.indicator_column(fc.categorical_column_with_identity("j", 5, default_value=0))
    feats = {"i": lib.constant(np.array([[0, 3], [2, -1], [-1, -1]], np.int64)),
             "j": lib.constant(np.array([1, 9, 4], np.int32))}
    return {"out": {"net": fc.input_layer(feats, [b, a])}}


def _vocab_str(lib):
    fc = lib.fc
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"], num_oov_buckets=3)
    d = fc.categorical_column_with_vocabulary_list("d", ("x", "y"), default_value=1)
    e = fc.categorical_column_with_vocabulary_list("e", ["p", "q"])
    feats = {"c": lib.constant(_s(["a", "", "zz", "b", "hello", "c"], (3, 2))),
             "d": lib.constant(_s(["y", "w", "x"])),
             "e": lib.constant(_s(["q", "nope", ""]))}
    cols = [fc.indicator_column(c), fc.indicator_column(d), fc.indicator_column(e)]
    return {"out": {"net": fc.input_layer(feats, cols)}}


def _vocab_int(lib):
    fc = lib.fc
    c = fc.categorical_column_with_vocabulary_list("n", [10, 20, 30], dtype=lib.int64)
    d = fc.categorical_column_with_vocabulary_list("m", [5, 6], num_oov_buckets=2)
    feats = {"n": lib.constant(np.array([[30, 10], [99, -1]], np.int64)),
             "m": lib.constant(np.array([[6], [77]], np.int32))}
    return {"out": {"net": fc.input_layer(feats, [fc.indicator_column(c),
                                                  fc.indicator_column(d)])}}


def _vocab_sparse(lib):
    fc = lib.fc
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"], num_oov_buckets=1)
    sp = lib.SparseTensor(np.array([[0, 0], [0, 1], [2, 0]], np.int64), _s(["c", "q", "a"]),
                          np.array([3, 2], np.int64))
    return {"out": {"net": fc.input_layer({"c": sp}, [fc.indicator_column(c)])}}


def _vocab_sparse_1d(lib):
    fc = lib.fc
    c = fc.categorical_column_with_identity("c", 3)
    sp = lib.SparseTensor(np.array([[0], [2]], np.int64), np.array([2, 1], np.int64),
                          np.array([3], np.int64))
    return {"out": {"net": fc.input_layer({"c": sp}, [fc.indicator_column(c)])}}


def _vocab_file(lib):
    fc = lib.fc
    c = fc.categorical_column_with_vocabulary_file("c", lib.path("vocab.txt"),
                                                   num_oov_buckets=2)
    d = fc.categorical_column_with_vocabulary_file("d", lib.path("ivocab.txt"), vocabulary_size=3,
                                                   dtype=lib.int64, default_value=0)
    feats = {"c": lib.constant(_s(["blue", "pink", "red"], (3, 1))),
             "d": lib.constant(np.array([[30], [40], [10]], np.int64))}
    return {"out": {"net": fc.input_layer(feats, [fc.indicator_column(c),
                                                  fc.indicator_column(d)])}}


def _hash_str(lib):
    fc = lib.fc
    n = 1000
    c = fc.categorical_column_with_hash_bucket("h", n)
    e = fc.embedding_column(c, 1, combiner="sum", initializer=_emb_init(lib, n))
    feats = {"h": lib.constant(_s(WORDS, (len(WORDS), 1)))}
    return {"out": {"net": fc.input_layer(feats, [e])}}


def _hash_int(lib):
    fc = lib.fc
    n = 997
    c = fc.categorical_column_with_hash_bucket("h", n, dtype=lib.int64)
    e = fc.embedding_column(c, 1, combiner="sum", initializer=_emb_init(lib, n))
    feats = {"h": lib.constant(np.array(INTS, np.int64).reshape(-1, 1))}
    return {"out": {"net": fc.input_layer(feats, [e])}}


def _weighted(lib):
    fc = lib.fc
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    w = fc.weighted_categorical_column(c, "cw")
    feats = {"c": lib.constant(_s(["a", "c", "b", "b"], (2, 2))),
             "cw": lib.constant(np.array([[0.5, 2.0], [1.0, 3.0]], np.float32))}
    emb = fc.embedding_column(w, 2, initializer=lib.constant_initializer(
        np.arange(6, dtype=np.float32).reshape(3, 2)))
    return {"out": {"ind": fc.input_layer(feats, [fc.indicator_column(w)]),
                    "emb": fc.input_layer(feats, [emb])}}


def _embedding(lib, combiner, max_norm=None):
    fc = lib.fc
    c = fc.categorical_column_with_identity("c", 4)
    init = lib.constant_initializer(np.arange(12, dtype=np.float32).reshape(4, 3) - 4.0)
    e = fc.embedding_column(c, 3, combiner=combiner, initializer=init, max_norm=max_norm)
    sp = lib.SparseTensor(np.array([[0, 0], [0, 1], [0, 2], [2, 0]], np.int64),
                          np.array([1, 3, 3, 2], np.int64), np.array([3, 3], np.int64))
    x = fc.numeric_column("b")
    feats = {"c": sp, "b": lib.constant(np.array([[1.], [2.], [3.]], np.float32))}
    return {"out": {"net": fc.input_layer(feats, [e, x])}}


def _embedding_grad(lib):
    fc = lib.fc
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    init = lib.constant_initializer(np.arange(6, dtype=np.float32).reshape(3, 2))
    e = fc.embedding_column(c, 2, combiner="sqrtn", initializer=init)
    feats = {"c": lib.constant(_s(["a", "c", "c", "", "", ""], (3, 2)))}
    net = fc.input_layer(feats, [e])
    loss = lib.reduce_sum(net * lib.constant(np.array([[1., 2.], [3., 4.], [5., 6.]],
                                                      np.float32)))
    var = lib.global_variables()[0]
    grad = lib.gradients(loss, [var])[0]
    return {"out": {"net": net, "grad": lib.convert_to_tensor(grad)}}


def _embedding_not_trainable(lib):
    fc = lib.fc
    c = fc.categorical_column_with_identity("c", 2)
    e = fc.embedding_column(c, 2, trainable=False,
                            initializer=lib.constant_initializer(1.5))
    feats = {"c": lib.constant(np.array([1, 0], np.int64))}
    net = fc.input_layer(feats, [e])
    return {"out": {"net": net, "n_trainable": lib.constant(
        np.int32(len(lib.trainable_variables())))}}


def _linear(lib, combiner, units):
    fc = lib.fc
    cols = [fc.numeric_column("x", shape=[2]),
            fc.bucketized_column(fc.numeric_column("p"), [0., 2.]),
            fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"],
                                                       num_oov_buckets=1),
            fc.weighted_categorical_column(fc.categorical_column_with_identity("i", 3), "iw")]
    feats = {"x": lib.constant(np.array([[1., 2.], [3., 4.], [0., -1.]], np.float32)),
             "p": lib.constant(np.array([-1., 1., 5.], np.float32)),
             "c": lib.constant(_s(["a", "b", "zz", "", "c", "c"], (3, 2))),
             "i": lib.constant(np.array([[2, 0], [1, -1], [-1, -1]], np.int64)),
             "iw": lib.constant(np.array([[2., 3.], [0.5, 0.], [0., 0.]], np.float32))}
    return {"out": {"pred": fc.linear_model(feats, cols, units=units, sparse_combiner=combiner)},
            "assign": True}


def _spec(lib):
    fc = lib.fc
    cols = [fc.numeric_column("x", shape=[2]),
            fc.numeric_column("y", default_value=1.5),
            fc.numeric_column("z", shape=(2,), dtype=lib.int64, default_value=(3, 4)),
            fc.bucketized_column(fc.numeric_column("p"), [0., 1.]),
            fc.categorical_column_with_vocabulary_list("c", ["a"]),
            fc.categorical_column_with_identity("i", 3),
            fc.indicator_column(fc.categorical_column_with_hash_bucket("h", 10)),
            fc.embedding_column(fc.categorical_column_with_hash_bucket(
                "n", 10, dtype=lib.int64), 2),
            fc.weighted_categorical_column(
                fc.categorical_column_with_vocabulary_file("f", lib.path("vocab.txt")), "fw")]
    return {"out": {"spec": fc.make_parse_example_spec(cols)}}


def _names(lib):
    fc = lib.fc
    c = fc.categorical_column_with_vocabulary_list("c", ["a"])
    cols = [fc.numeric_column("n"), fc.bucketized_column(fc.numeric_column("b"), [1.]),
            fc.categorical_column_with_identity("i", 2), c, fc.indicator_column(c),
            fc.embedding_column(c, 2), fc.weighted_categorical_column(c, "w"),
            fc.categorical_column_with_hash_bucket("h", 3)]
    return {"out": {"names": [col.name for col in cols]}}


def _err(build):
    return build


CASES = {
    "numeric": _numeric,
    "numeric_placeholder": _numeric_placeholder,
    "bucketized": _bucketized,
    "identity": _identity,
    "vocab_str": _vocab_str,
    "vocab_int": _vocab_int,
    "vocab_sparse": _vocab_sparse,
    "sparse_1d": _vocab_sparse_1d,
    "vocab_file": _vocab_file,
    "hash_str": _hash_str,
    "hash_int": _hash_int,
    "weighted": _weighted,
    "embedding_mean": lambda lib: _embedding(lib, "mean"),
    "embedding_sqrtn": lambda lib: _embedding(lib, "sqrtn"),
    "embedding_sum": lambda lib: _embedding(lib, "sum"),
    "embedding_max_norm": lambda lib: _embedding(lib, "sum", 5.0),
    "embedding_grad": _embedding_grad,
    "embedding_not_trainable": _embedding_not_trainable,
    "linear_sum": lambda lib: _linear(lib, "sum", 1),
    "linear_mean_units2": lambda lib: _linear(lib, "mean", 2),
    "linear_sqrtn": lambda lib: _linear(lib, "sqrtn", 1),
    "spec": _spec,
    "names": _names,
    # errors
    "err_missing_key": lambda lib: {"out": {"n": lib.fc.input_layer(
        {"a": lib.constant([[1.]])}, [lib.fc.numeric_column("b")])}},
    "err_numeric_shape": lambda lib: {"out": {"n": lib.fc.input_layer(
        {"a": lib.constant([[1., 2., 3.]])}, [lib.fc.numeric_column("a", shape=[2])])}},
    "err_numeric_bad_shape_arg": lambda lib: lib.fc.numeric_column("a", shape=[0]),
    "err_numeric_bad_default": lambda lib: lib.fc.numeric_column(
        "a", shape=[2], default_value=[1., 2., 3.]),
    "err_numeric_string_dtype": lambda lib: lib.fc.numeric_column("a", dtype=lib.string),
    "err_numeric_normalizer": lambda lib: lib.fc.numeric_column("a", normalizer_fn=3),
    "err_bucket_unsorted": lambda lib: lib.fc.bucketized_column(
        lib.fc.numeric_column("a"), [2., 1.]),
    "err_bucket_source": lambda lib: lib.fc.bucketized_column(
        lib.fc.categorical_column_with_identity("a", 2), [1.]),
    "err_bucket_shape": lambda lib: lib.fc.bucketized_column(
        lib.fc.numeric_column("a", shape=(2, 2)), [1.]),
    "err_vocab_empty": lambda lib: lib.fc.categorical_column_with_vocabulary_list("a", []),
    "err_vocab_dup": lambda lib: lib.fc.categorical_column_with_vocabulary_list(
        "a", ["x", "y", "x"]),
    "err_vocab_oov_default": lambda lib: lib.fc.categorical_column_with_vocabulary_list(
        "a", ["x"], default_value=0, num_oov_buckets=2),
    "err_vocab_neg_oov": lambda lib: lib.fc.categorical_column_with_vocabulary_list(
        "a", ["x"], num_oov_buckets=-1),
    "err_vocab_dtype": lambda lib: lib.fc.categorical_column_with_vocabulary_list(
        "a", ["x"], dtype=lib.int64),
    "err_vocab_input_dtype": lambda lib: {"out": {"n": lib.fc.input_layer(
        {"a": lib.constant(np.array([[1]], np.int64))}, [lib.fc.indicator_column(
            lib.fc.categorical_column_with_vocabulary_list("a", ["x"]))])}},
    "identity_out_of_range": lambda lib: {"out": {"n": lib.fc.input_layer(
        {"i": lib.constant(np.array([[1], [4]], np.int64))},
        [lib.fc.indicator_column(lib.fc.categorical_column_with_identity("i", 4))])}},
    "identity_negative": lambda lib: {"out": {"n": lib.fc.input_layer(
        {"i": lib.constant(np.array([[1], [-2]], np.int64))},
        [lib.fc.indicator_column(lib.fc.categorical_column_with_identity("i", 4))])}},
    "err_identity_buckets": lambda lib: lib.fc.categorical_column_with_identity("a", 0),
    "err_identity_default": lambda lib: lib.fc.categorical_column_with_identity(
        "a", 3, default_value=3),
    "err_hash_size": lambda lib: lib.fc.categorical_column_with_hash_bucket("a", 1),
    "err_hash_dtype": lambda lib: lib.fc.categorical_column_with_hash_bucket(
        "a", 5, dtype=lib.float32),
    "err_emb_dim": lambda lib: lib.fc.embedding_column(
        lib.fc.categorical_column_with_identity("a", 3), 0),
    "err_emb_combiner": lambda lib: lib.fc.embedding_column(
        lib.fc.categorical_column_with_identity("a", 3), 2, combiner="max"),
    "err_emb_init": lambda lib: lib.fc.embedding_column(
        lib.fc.categorical_column_with_identity("a", 3), 2, initializer=3),
    "err_not_dense": lambda lib: {"out": {"n": lib.fc.input_layer(
        {"a": lib.constant([[1]])}, [lib.fc.categorical_column_with_identity("a", 3)])}},
    "err_empty_columns": lambda lib: {"out": {"n": lib.fc.input_layer(
        {"a": lib.constant([[1.]])}, [])}},
    "err_duplicate_columns": lambda lib: {"out": {"n": lib.fc.input_layer(
        {"a": lib.constant([[1.]])}, [lib.fc.numeric_column("a"),
                                      lib.fc.numeric_column("a")])}},
    "err_rank0": lambda lib: {"out": {"n": lib.fc.input_layer(
        {"a": lib.constant(1.)}, [lib.fc.numeric_column("a")])}},
    "err_weighted_dtype": lambda lib: lib.fc.weighted_categorical_column(
        lib.fc.categorical_column_with_identity("a", 3), "w", dtype=lib.string),
    "err_indicator_arg": lambda lib: lib.fc.indicator_column(lib.fc.numeric_column("a")),
    "err_linear_combiner": lambda lib: {"out": {"n": lib.fc.linear_model(
        {"a": lib.constant([[1.]])}, [lib.fc.numeric_column("a")], sparse_combiner="max")}},
    "err_spec_bad": lambda lib: lib.fc.make_parse_example_spec(["a"]),
    "err_vocab_file_missing": lambda lib: lib.fc.categorical_column_with_vocabulary_file(
        "a", None),
}


# ------------------------------------------------------------ crossed and shared columns

def _cross_feats(lib):
    """Three rows: dense strings, dense int64 (1-D), sparse strings with an empty row."""
    return {"a": lib.constant(_s(["x", "y", "zz", "x", "", "q"], (3, 2))),
            "n": lib.constant(np.array([3, -7, 2 ** 40], np.int64)),
            "s": lib.SparseTensor(np.array([[0, 0], [0, 1], [2, 0]], np.int64),
                                  _s(["red", "blue", "green"]), np.array([3, 2], np.int64)),
            "p": lib.constant(np.array([[-1.], [1.5], [9.]], np.float32))}


def _crossed_linear(lib):
    fc = lib.fc
    voc = fc.categorical_column_with_vocabulary_list("s", ["red", "green"], num_oov_buckets=1)
    cols = [fc.crossed_column(["a", "n"], 11),
            fc.crossed_column([voc, "a"], 7, hash_key=77),
            fc.crossed_column([fc.bucketized_column(fc.numeric_column("p"), [0., 2.]), "n"], 5)]
    return {"out": {"pred": fc.linear_model(_cross_feats(lib), cols, units=2)},
            "assign": True}


def _crossed_indicator(lib):
    fc = lib.fc
    b = fc.bucketized_column(fc.numeric_column("p"), [0., 2.])
    cols = [fc.indicator_column(fc.crossed_column(["s", b], 6)),
            fc.indicator_column(fc.crossed_column(["n", "a", "s"], 13))]
    return {"out": {"net": fc.input_layer(_cross_feats(lib), cols)}}


def _crossed_embedding(lib):
    fc = lib.fc
    n = 1000
    cross = fc.crossed_column(["a", "s"], n, hash_key=123456789)
    nested = fc.crossed_column([fc.crossed_column(["n", "s"], 3), "p2"], n)
    feats = dict(_cross_feats(lib), p2=lib.constant(_s(["u", "v", "w"])))
    cols = [fc.embedding_column(cross, 1, combiner="sum", initializer=_emb_init(lib, n)),
            fc.embedding_column(nested, 1, combiner="sum", initializer=_emb_init(lib, n))]
    return {"out": {"net": fc.input_layer(feats, cols)}}


def _crossed_embedding_assigned(lib):
    fc = lib.fc
    cross = fc.crossed_column(["a", "n"], 9)
    cols = [fc.embedding_column(cross, 3, combiner="mean"), fc.numeric_column("p")]
    return {"out": {"net": fc.input_layer(_cross_feats(lib), cols)}, "assign": True}


def _shared_feats(lib):
    return {"i": lib.constant(np.array([[0, 2], [3, -1], [1, 1]], np.int64)),
            "j": lib.SparseTensor(np.array([[0, 0], [2, 0], [2, 1]], np.int64),
                                  np.array([3, 0, 2], np.int64), np.array([3, 2], np.int64)),
            "jw": lib.SparseTensor(np.array([[0, 0], [2, 0], [2, 1]], np.int64),
                                   np.array([2., 0.5, 4.], np.float32),
                                   np.array([3, 2], np.int64))}


def _shared(lib):
    fc = lib.fc
    i = fc.categorical_column_with_identity("i", 4)
    j = fc.categorical_column_with_identity("j", 4)
    cols = fc.shared_embedding_columns([j, i], 3, combiner="sqrtn")
    return {"out": {"net": fc.input_layer(_shared_feats(lib), cols)}, "assign": True}


def _shared_named_weighted(lib):
    fc = lib.fc
    i = fc.categorical_column_with_identity("i", 4)
    j = fc.weighted_categorical_column(fc.categorical_column_with_identity("j", 4), "jw")
    init = lib.constant_initializer(np.arange(8, dtype=np.float32).reshape(4, 2))
    cols = fc.shared_embedding_columns([i, j], 2, combiner="sum", initializer=init,
                                       shared_embedding_collection_name="shared_ij")
    return {"out": {"net": fc.input_layer(_shared_feats(lib), cols)}}


def _shared_crossed(lib):
    fc = lib.fc
    c1 = fc.crossed_column(["a", "n"], 10)
    c2 = fc.crossed_column(["a", "s"], 10)
    cols = fc.shared_embedding_columns([c1, c2], 2, combiner="mean")
    return {"out": {"net": fc.input_layer(_cross_feats(lib), cols)}, "assign": True}


def _cross_spec(lib):
    fc = lib.fc
    voc = fc.categorical_column_with_vocabulary_list("v", ["a"])
    cols = [fc.crossed_column(["a", voc], 5),
            fc.crossed_column([fc.crossed_column(["b", "a"], 3),
                               fc.bucketized_column(fc.numeric_column("p"), [0.])], 4)]
    cols += fc.shared_embedding_columns([fc.categorical_column_with_identity("i", 3),
                                         fc.categorical_column_with_identity("j", 3)], 2)
    return {"out": {"spec": fc.make_parse_example_spec(cols)}}


def _cross_names(lib):
    fc = lib.fc
    b = fc.bucketized_column(fc.numeric_column("p"), [0.])
    inner = fc.crossed_column(["zeta", "alpha"], 3)
    cols = [fc.crossed_column(["b", "a"], 5), fc.crossed_column([inner, b, "m"], 7),
            fc.indicator_column(fc.crossed_column(["a", "b"], 5))]
    cols += fc.shared_embedding_columns([fc.categorical_column_with_identity("y", 3),
                                         fc.categorical_column_with_identity("x", 3)], 2)
    return {"out": {"names": [col.name for col in cols]}}


def _weighted_key_cross(lib):
    fc = lib.fc
    w = fc.weighted_categorical_column(fc.categorical_column_with_identity("j", 4), "jw")
    cross = fc.crossed_column([w, "i"], 5)
    return {"out": {"n": fc.input_layer(_shared_feats(lib), [fc.indicator_column(cross)])}}


CASES.update({
    "crossed_linear": _crossed_linear,
    "crossed_indicator": _crossed_indicator,
    "crossed_embedding": _crossed_embedding,
    "crossed_embedding_assigned": _crossed_embedding_assigned,
    "shared": _shared,
    "shared_named_weighted": _shared_named_weighted,
    "shared_crossed": _shared_crossed,
    "cross_spec": _cross_spec,
    "cross_names": _cross_names,
    "err_cross_bucket_size": lambda lib: lib.fc.crossed_column(["a", "b"], 0),
    "err_cross_one_key": lambda lib: lib.fc.crossed_column(["a"], 5),
    "err_cross_key_type": lambda lib: lib.fc.crossed_column(
        ["a", lib.fc.numeric_column("n")], 5),
    "err_cross_hashed_key": lambda lib: lib.fc.crossed_column(
        ["a", lib.fc.categorical_column_with_hash_bucket("h", 5)], 5),
    "err_cross_weighted_key": _weighted_key_cross,
    "err_shared_dim": lambda lib: lib.fc.shared_embedding_columns(
        [lib.fc.categorical_column_with_identity("a", 3)], 0),
    "err_shared_init": lambda lib: lib.fc.shared_embedding_columns(
        [lib.fc.categorical_column_with_identity("a", 3)], 2, initializer=5),
    "err_shared_buckets": lambda lib: lib.fc.shared_embedding_columns(
        [lib.fc.categorical_column_with_identity("a", 3),
         lib.fc.categorical_column_with_identity("b", 4)], 2),
    "err_shared_kinds": lambda lib: lib.fc.shared_embedding_columns(
        [lib.fc.categorical_column_with_identity("a", 3),
         lib.fc.categorical_column_with_vocabulary_list("b", ["x", "y", "z"])], 2),
})

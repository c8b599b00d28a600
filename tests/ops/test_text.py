"""TfIdfVectorizer against onnxruntime and the ONNX reference evaluator.

Seeded random pools of 1- to 3-grams (integer and string) and random token rows, over
every mode, gram-length window, skip count, permuted and shared output columns and
weights; int32/int64/string inputs of shape [C] and [N, C], empty rows. onnxruntime is
the oracle throughout (it weights the i-th pool n-gram by weights[i], as the spec says;
the reference evaluator indexes weights by output column instead, so it is used only
without weights). Plus one case worked out by hand, inference vs the kernel's shapes,
and the named errors for malformed attributes and inputs.
"""

import numpy as np
import pytest

from onegraph.errors import OneGraphError, OpAttributeError, ShapeError
from onegraph.ops import KernelContext, TensorInfo, get_op

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402


def _model(x, attrs, shape=None):
    elem = TensorProto.STRING if x.dtype.kind in "OU" else helper.np_dtype_to_tensor_dtype(
        x.dtype)
    node = helper.make_node("TfIdfVectorizer", ["X"], ["Y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", elem, shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8
    return model


def _ort(x, attrs):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(_model(x, attrs).SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, {"X": x})[0]


def _reference(x, attrs):
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(_model(x, attrs)).run(None, {"X": x})[0]


def _ours(x, attrs):
    from onegraph import Session
    from onegraph.convert import from_onnx

    return Session(from_onnx(_model(x, attrs))).run(["Y"], {"X": x})[0]


def _kernel(x, attrs):
    op = get_op("TfIdfVectorizer")
    return op.kernel([x], op.resolve_attrs(attrs), KernelContext())[0]


def _random_pool(rng, sizes, vocab):
    """A pool with `sizes[n - 1]` distinct n-grams of tokens below `vocab`."""
    pool, counts = [], []
    for n, want in enumerate(sizes, start=1):
        counts.append(len(pool))
        grams = np.unique(rng.integers(0, vocab, (want, n)), axis=0)
        pool.extend(rng.permutation(grams).reshape(-1).tolist())
    return pool, counts


def _attrs(rng, pool, counts, mode, lo, hi, skip, shared=False, weights=False):
    total = sum((b - a) // n for n, (a, b) in
                enumerate(zip(counts, counts[1:] + [len(pool)]), start=1))
    if shared:  # several n-grams per output column, some columns unused
        indexes = rng.integers(0, max(1, total // 2) + 2, total)
    else:
        indexes = rng.permutation(total + 2)[:total]
    attrs = dict(mode=mode, min_gram_length=lo, max_gram_length=hi, max_skip_count=skip,
                 ngram_counts=counts, ngram_indexes=indexes.tolist(), pool_int64s=pool)
    if weights:
        attrs["weights"] = rng.uniform(0.5, 2.0, total).round(3).tolist()
    return attrs


CASES = [  # mode, min, max, skip, shared columns, weights
    ("TF", 1, 1, 0, False, False),
    ("TF", 1, 3, 0, False, False),
    ("TF", 1, 3, 2, False, False),
    ("TF", 2, 3, 3, True, False),
    ("TF", 3, 3, 1, False, False),
    ("IDF", 1, 2, 1, False, False),
    ("IDF", 1, 3, 2, False, True),
    ("IDF", 2, 2, 0, False, True),
    ("TFIDF", 1, 3, 1, False, False),
    ("TFIDF", 1, 3, 2, False, True),
    ("TFIDF", 1, 2, 4, True, True),
    ("TFIDF", 2, 3, 0, True, True),
]


@pytest.mark.parametrize("mode,lo,hi,skip,shared,weights", CASES)
@pytest.mark.parametrize("shape,dtype", [((4, 17), np.int64), ((23,), np.int32),
                                         ((3, 2), np.int64)])
def test_integers_against_onnxruntime(mode, lo, hi, skip, shared, weights, shape, dtype):
    rng = np.random.default_rng([lo, hi, skip, len(shape), shape[-1], len(mode)])
    pool, counts = _random_pool(rng, [5, 8, 6], vocab=5)
    attrs = _attrs(rng, pool, counts, mode, lo, hi, skip, shared, weights)
    x = rng.integers(0, 7, shape).astype(dtype)  # tokens 5 and 6 are in no n-gram
    got = _ours(x, attrs)
    want = _ort(x, attrs)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("mode,lo,hi,skip", [("TF", 1, 3, 2), ("IDF", 2, 3, 1),
                                             ("TFIDF", 1, 2, 0)])
def test_integers_against_reference(mode, lo, hi, skip):
    rng = np.random.default_rng([7, lo, hi, skip])
    pool, counts = _random_pool(rng, [4, 6, 5], vocab=4)
    attrs = _attrs(rng, pool, counts, mode, lo, hi, skip)
    if mode != "TF":  # the reference needs weights there, one per output column; all
        # ones then weigh alike whichever way they are indexed
        total = len(attrs["ngram_indexes"])
        attrs["ngram_indexes"] = rng.permutation(total).tolist()
        attrs["weights"] = [1.0] * total
    x = rng.integers(0, 5, (5, 12))
    np.testing.assert_array_equal(_ours(x, attrs), _reference(x, attrs))


@pytest.mark.parametrize("mode,lo,hi,skip,weights", [("TF", 1, 2, 1, False),
                                                     ("IDF", 1, 3, 0, True),
                                                     ("TFIDF", 2, 3, 2, True)])
@pytest.mark.parametrize("shape", [(3, 11), (9,)])
def test_strings_against_onnxruntime(mode, lo, hi, skip, weights, shape):
    rng = np.random.default_rng([lo, hi, skip, len(shape)])
    words = np.array(["the", "cat", "", "sat", "Mat", "caté", "on", "x"], dtype=object)
    pool, counts = _random_pool(rng, [4, 6, 5], vocab=6)
    attrs = _attrs(rng, pool, counts, mode, lo, hi, skip, weights=weights)
    attrs["pool_strings"] = [str(words[i]) for i in attrs.pop("pool_int64s")]
    x = words[rng.integers(0, len(words), shape)]
    np.testing.assert_allclose(_ours(x, attrs), _ort(x, attrs), rtol=1e-6)


def test_by_hand():
    # Pool: 1-grams 2, 3; 2-grams (2, 3), (5, 7). Row 0: 2 3 5 2 3; row 1: 5 0 7 2 9.
    # Skip 0: row 0 has 2 x2, 3 x2, (2,3) x2; row 1 has 2 x1.
    # Skip 1 adds 2-grams at distance 2: row 0 (2,5) (3,2) (5,3); row 1 (5,7) -> (5,7) x1.
    attrs = dict(mode="TFIDF", min_gram_length=1, max_gram_length=2, max_skip_count=1,
                 ngram_counts=[0, 2], ngram_indexes=[3, 0, 1, 2], pool_int64s=[2, 3, 2, 3, 5, 7],
                 weights=[1.0, 10.0, 100.0, 1000.0])
    x = np.array([[2, 3, 5, 2, 3], [5, 0, 7, 2, 9]])
    want = np.array([[20, 200, 0, 2], [0, 0, 1000, 1]], dtype=np.float32)
    np.testing.assert_array_equal(_kernel(x, attrs), want)
    np.testing.assert_array_equal(_ort(x, attrs), want)
    # IDF: presence times weight; TF: raw counts (weights ignored).
    np.testing.assert_array_equal(_kernel(x, {**attrs, "mode": "IDF"}),
                                  [[10, 100, 0, 1], [0, 0, 1000, 1]])
    np.testing.assert_array_equal(_kernel(x, {**attrs, "mode": "TF"}),
                                  [[2, 2, 0, 2], [0, 0, 1, 1]])


@pytest.mark.parametrize("x", [np.zeros((0,), np.int64), np.zeros((3, 0), np.int64),
                               np.array([[1], [2]], np.int32), np.array(2, np.int64)])
def test_edge_shapes(x):
    attrs = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=3,
                 ngram_counts=[0, 2], ngram_indexes=[0, 1, 2], pool_int64s=[1, 2, 1, 2])
    np.testing.assert_array_equal(_ours(x, attrs), _ort(x, attrs))


def test_empty_batch():
    attrs = dict(mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
                 ngram_counts=[0], ngram_indexes=[0, 4], pool_int64s=[1, 2])
    out = _kernel(np.zeros((0, 3), np.int64), attrs)
    assert out.shape == (0, 5) and out.dtype == np.float32


def test_infer_matches_kernel():
    op = get_op("TfIdfVectorizer")
    attrs = op.resolve_attrs(dict(mode="TF", min_gram_length=1, max_gram_length=1,
                                  max_skip_count=0, ngram_counts=[0], ngram_indexes=[0, 6],
                                  pool_int64s=[1, 2]))
    for x in (np.ones((4, 3), np.int64), np.ones(5, np.int32), np.array(1)):
        (info,) = op.infer(attrs, [TensorInfo(x.dtype, x.shape)])
        out = op.kernel([x], attrs, KernelContext())[0]
        assert info.dtype == out.dtype and tuple(info.shape) == out.shape
    with pytest.raises(ShapeError, match="TfIdfVectorizer"):
        op.infer(attrs, [TensorInfo(np.dtype(np.int64), (1, 2, 3))])


GOOD = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0,
            ngram_counts=[0, 2], ngram_indexes=[0, 1, 2], pool_int64s=[1, 2, 1, 2])


@pytest.mark.parametrize("change,match", [
    ({"mode": "BM25"}, "mode"),
    ({"min_gram_length": 0}, "min_gram_length"),
    ({"min_gram_length": 3, "max_gram_length": 2}, "min_gram_length"),
    ({"max_skip_count": -1}, "max_skip_count"),
    ({"max_gram_length": 3}, "max_gram_length 3 exceeds"),
    ({"pool_strings": ["a"]}, "exactly one of"),
    ({"pool_int64s": None}, "exactly one of"),
    ({"ngram_counts": [0, 1]}, "whole 2-grams"),
    ({"ngram_counts": [3, 1]}, "out of bounds"),
    ({"ngram_counts": [0, 9]}, "out of bounds"),
    ({"ngram_indexes": [0, 1]}, "fewer than"),
    ({"ngram_indexes": [0, -1, 2]}, ">= 0"),
    ({"pool_int64s": [1, 1, 1, 2]}, "1-gram twice"),
    ({"mode": "IDF", "weights": [1.0, 2.0]}, "weights has 2"),
])
def test_bad_attributes(change, match):
    with pytest.raises(OpAttributeError, match=f"TfIdfVectorizer: .*{match}"):
        _kernel(np.array([1, 2]), {**GOOD, **change})


def test_bad_inputs():
    with pytest.raises(ShapeError, match=r"TfIdfVectorizer: input must be \[C\] or \[N, C\]"):
        _kernel(np.ones((1, 2, 3), np.int64), GOOD)
    with pytest.raises(ShapeError, match="int64 pool needs int32/int64 input"):
        _kernel(np.array(["a", "b"], dtype=object), GOOD)
    strings = {**GOOD, "pool_int64s": None, "pool_strings": ["a", "b", "a", "b"]}
    with pytest.raises(ShapeError, match="string pool needs string input"):
        _kernel(np.array([1, 2]), strings)
    with pytest.raises(ShapeError, match="int32, int64 or string"):
        _kernel(np.array([1.0, 2.0]), GOOD)
    with pytest.raises(OneGraphError, match="TfIdfVectorizer"):
        _ours(np.ones((1, 2, 3), np.int64), GOOD)


def test_export_round_trip():
    from onegraph.convert import from_onnx, to_onnx

    rng = np.random.default_rng(11)
    pool, counts = _random_pool(rng, [3, 4], vocab=4)
    attrs = _attrs(rng, pool, counts, "TFIDF", 1, 2, 1, weights=True)
    x = rng.integers(0, 5, (3, 9))
    exported = to_onnx(from_onnx(_model(x, attrs, shape=x.shape)))
    onnx.checker.check_model(exported, full_check=True)
    sess = ort.InferenceSession(exported.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"X": x})[0], _ort(x, attrs), rtol=1e-6)


def test_strings_keep_trailing_nul_and_accept_bytes():
    attrs = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0,
                 ngram_counts=[0, 2], ngram_indexes=[0, 1, 2],
                 pool_strings=["a\x00", "b", "a\x00", "b"])
    x = np.array(["a", "a\x00", "b", b"b"], dtype=object)
    np.testing.assert_array_equal(_kernel(x, attrs), [1, 2, 1])


def test_regex_full_match_uses_re2_in_linear_time():
    """ONNX specifies RE2: "(a+)+$" on 40 a's and a b answers at once (Python's re
    backtracks for minutes), and Perl-only syntax RE2 lacks is a clear error."""
    pytest.importorskip("re2")
    import time

    op = get_op("RegexFullMatch")
    x = np.array(["a" * 40 + "b", "aaaa", "b"], dtype=object)
    start = time.perf_counter()
    (y,) = op.kernel([x], op.resolve_attrs({"pattern": "(a+)+$"}), KernelContext())
    assert time.perf_counter() - start < 5
    np.testing.assert_array_equal(y, [False, True, False])
    with pytest.raises(OpAttributeError, match=r"bad pattern '\(a\)\\\\1': invalid escape"):
        op.kernel([x], op.resolve_attrs({"pattern": r"(a)\1"}), KernelContext())

"""train/nn_tf1_more.py (CTC loss, transposed / depthwise / 3-D backprop convs,
space_to_batch, v2 pools, samplers, ...) against TensorFlow's recorded outputs and
gradients (tests/train/data/tf1_nnextra2_reference.npz, tools/record_tf1_reference.py
nnextra2), a brute-force CTC, finite differences and statistics of the samplers.

Tolerances: outputs and gradients rtol 1e-5 and atol 1e-5 times the largest
magnitude (tf1_reference.check_case's): both sides compute in float32 with another
summation order (im2col GEMM against TF's direct loops; the CTC in float64 here, in
float32 in TF), which leaves a few float32 ulps; anything structurally wrong (a
misplaced tap, a wrong padding, a dropped alignment) is off by O(1).
"""

import itertools
import sys
import os
import re

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ShapeError
from onegraph.train import nn_tf1_more as M

sys.path.insert(0, os.path.dirname(__file__))
import tf1_nnextra2_cases as C  # noqa: E402
import tf1_reference as R  # noqa: E402

from .gradcheck import check_op_gradients  # noqa: E402

REF = R.load("nnextra2")
# TF 2.21's eager gradient of depthwise_conv2d_native with dilations disagrees with
# finite differences (og's agrees: test_dilated_depthwise_gradient_by_differences), so
# only that case's output is compared with TF
_NO_TF_GRADIENT = {"dw_native_dilated"}


@pytest.fixture(autouse=True)
def _functions(monkeypatch):
    """Look "nn.<name>" up in nn_tf1_more first (og.nn may not re-export it yet)."""
    original = R.function

    def function(path):
        head, _, last = path.rpartition(".")
        if head == "nn" and last in M.__all__:
            return getattr(M, last)
        return original(path)
    monkeypatch.setattr(R, "function", function)


@pytest.mark.parametrize("case", C.CASES, ids=[c[0] for c in C.CASES])
def test_matches_tensorflow(case):
    if case[0] in _NO_TF_GRADIENT:
        case = case[:4] + ([],)
    R.check_case(REF, case)


_TRANSPOSE_CASES = [c for c in C.CASES if c[1].endswith("_transpose")]


@pytest.mark.parametrize("case", _TRANSPOSE_CASES, ids=[c[0] for c in _TRANSPOSE_CASES])
def test_transposes_with_sizes_known_only_at_run_time(case):
    """TensorFlow's conv1d/2d/3d_transpose cases again with the input's batch and
    spatial sizes unknown while building (its channels known): the same values and
    gradients, through the run-time cropped ConvTranspose."""
    image = case[2][0][1:]
    R.check_case(REF, case, hidden_dims={image: tuple(range(REF[f"in/{image}"].ndim - 1))})


def test_transposes_check_sizes_known_only_at_run_time():
    """A 1-D / 3-D transposed conv whose output_shape (fed) does not map back to the
    input is an ExecutionError of the run, as TF1's."""
    g = og.Graph()
    with g.as_default():
        x1 = og.placeholder(og.float32, [None, None, 3])
        x3 = og.placeholder(og.float32, [None, None, None, None, 2])
        sizes1 = og.placeholder(og.int32, [3])
        sizes3 = og.placeholder(og.int32, [5])
        y1 = M.conv1d_transpose(x1, np.ones((3, 4, 3), np.float32), sizes1, 2)
        y3 = M.conv3d_transpose(x3, np.ones((2, 2, 2, 5, 2), np.float32), sizes3,
                                [1, 2, 2, 2, 1], padding="VALID")
        assert y1.shape == (None, None, 4) and y3.shape == (None, None, None, None, 5)
        sess = og.Session(g)
        a = np.ones((2, 5, 3), np.float32)
        b = np.ones((1, 3, 2, 2, 2), np.float32)
        assert sess.run(y1, {x1: a, sizes1: [2, 9, 4]}).shape == (2, 9, 4)
        assert sess.run(y3, {x3: b, sizes3: [1, 7, 5, 4, 5]}).shape == (1, 7, 5, 4, 5)
        with pytest.raises(og.errors.ExecutionError, match="do not give the input's"):
            sess.run(y1, {x1: a, sizes1: [2, 11, 4]})
        with pytest.raises(og.errors.ExecutionError, match="output_shape's spatial sizes"):
            sess.run(y3, {x3: b, sizes3: [1, 8, 4, 4, 5]})


def test_reference_was_recorded_for_every_case():
    assert {c[0] for c in C.CASES} <= {k.split("/")[1] for k in REF if k.startswith("out/")}


def _run(build, *arrays):
    g = og.Graph()
    with g.as_default():
        holders = [og.placeholder(a.dtype, a.shape) for a in arrays]
        out = build(*holders)
        return og.Session(g).run(out, dict(zip(holders, arrays)))


# --------------------------------------------------------------------------- CTC

def _collapse(path, blank, merge):
    out, prev = [], None
    for p in path:
        if p != blank and not (merge and p == prev):
            out.append(p)
        prev = p
    return out


def _brute_ctc(logits, labels, blank, merge=True):
    """-log of the summed probability of every path that collapses to labels."""
    lp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    total = 0.0
    for path in itertools.product(range(logits.shape[1]), repeat=logits.shape[0]):
        if _collapse(path, blank, merge) == list(labels):
            total += np.exp(sum(lp[t, p] for t, p in enumerate(path)))
    return -np.log(total)


@pytest.mark.parametrize("labels,blank,merge", [
    ([1, 2], 0, True), ([1, 1], 0, True), ([2, 2, 1], 3, True), ([], 0, True),
    ([1, 1], 0, False), ([0, 2, 2], 1, False)])
def test_ctc_matches_brute_force_enumeration(labels, blank, merge):
    rng = np.random.RandomState(3)
    logits = rng.randn(5, 1, 4).astype(np.float64) * 1.5
    padded = np.asarray([labels + [0] * (3 - len(labels))], np.int64)
    if merge:
        got = _run(lambda x, y: M.ctc_loss_v2(y, x, [len(labels)], [5], blank_index=blank),
                   logits, padded)
    else:   # og.nn.ctc_loss's blank is the last class: move the blank there
        order = [c for c in range(4) if c != blank] + [blank]
        relabel = np.asarray([order.index(c) for c in range(4)])
        got = _run(lambda x, y: M.ctc_loss(y, x, [5], ctc_merge_repeated=False,
                                           label_length=[len(labels)]),
                   logits[:, :, order], relabel[padded])
    np.testing.assert_allclose(got[0], _brute_ctc(logits[:, 0], labels, blank, merge),
                               rtol=1e-12)


# TF1's tf.compat.v1.nn.ctc_loss (SparseTensor labels made from ctc_labels_last and
# ctc_label_length; blank is the last of the 5 classes), recorded by hand with
# tensorflow 2.21: the loss, and with merge off / collapse first
_TF1_CTC = np.array([7.397081, 8.722752, 6.2698274], np.float32)
_TF1_CTC_NO_MERGE = np.array([7.261683, 9.898676, 6.494113], np.float32)
_TF1_CTC_COLLAPSED = np.array([4.881882, 8.722752, 6.2698274], np.float32)
# d sum(loss * [1, -2, 0.5]) / d logits[:, 1, :] of the first
_TF1_CTC_GRAD_B1 = np.array([
    [-2.5390419e-01, -9.0162000e-03, -5.1940149e-01, 4.3554431e-01, 3.4677821e-01],
    [-4.6504259e-01, -6.1255980e-01, -1.6575520e-01, 1.0074561e+00, 2.3590110e-01],
    [-5.2130001e-04, -3.0938000e-03, -1.9713697e+00, 1.1092893e+00, 8.6569428e-01],
    [-6.7017490e-01, -1.1456507e+00, -6.2020001e-04, 5.0910878e-01, 1.3073374e+00],
    [0.0] * 5, [0.0] * 5], np.float32)


def _tf1_ctc(**kwargs):
    x = REF["in/ctc_logits"]
    g = og.Graph()
    with g.as_default():
        xp = og.placeholder(og.float32, x.shape)
        loss = M.ctc_loss(REF["in/ctc_labels_last"], xp, REF["in/ctc_logit_length"],
                          label_length=REF["in/ctc_label_length"], **kwargs)
        grad = og.gradients(og.reduce_sum(loss * og.constant(np.array([1.0, -2.0, 0.5],
                                                                      np.float32))), xp)[0]
        return og.Session(g).run([loss, grad], {xp: x})


def test_tf1_ctc_loss_with_dense_labels_matches_tensorflow():
    loss, grad = _tf1_ctc()
    np.testing.assert_allclose(loss, _TF1_CTC, rtol=1e-5)
    np.testing.assert_allclose(grad[:, 1], _TF1_CTC_GRAD_B1, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(_tf1_ctc(ctc_merge_repeated=False)[0], _TF1_CTC_NO_MERGE,
                               rtol=1e-5)
    np.testing.assert_allclose(_tf1_ctc(preprocess_collapse_repeated=True)[0],
                               _TF1_CTC_COLLAPSED, rtol=1e-5)


def test_tf1_ctc_loss_too_short_raises_or_is_ignored():
    x = REF["in/ctc_logits"]
    lengths = np.array([6, 4, 1], np.int32)    # 2 labels in 1 step
    args = (REF["in/ctc_labels_last"], x, lengths)
    kwargs = {"label_length": REF["in/ctc_label_length"]}
    got = _run(lambda: M.ctc_loss(*args, ignore_longer_outputs_than_inputs=True, **kwargs))
    np.testing.assert_allclose(got, [7.397081, 8.722752, 0.0], rtol=1e-5)
    with pytest.raises(og.OneGraphError, match="Not enough time|not enough time"):
        _run(lambda: M.ctc_loss(*args, **kwargs))
    # ctc_loss_v2 (dense) gives +inf, as TF's ctc_loss_dense
    got = _run(lambda: M.ctc_loss_v2(args[0], x, kwargs["label_length"], lengths,
                                     blank_index=-1))
    assert np.isinf(got[2]) and np.all(np.isfinite(got[:2]))


def test_tf1_ctc_loss_without_label_length_uses_every_label():
    labels = np.array([[1, 2], [3, 3]], np.int64)
    x = np.random.RandomState(0).randn(5, 2, 5).astype(np.float32)
    a = _run(lambda: M.ctc_loss(labels, x, [5, 5]))
    b = _run(lambda: M.ctc_loss_v2(labels, x, [2, 2], [5, 5], blank_index=4))
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_ctc_unique_argument_changes_nothing():
    y, lab, x = REF["in/ctc_labels"], REF["in/ctc_label_length"], REF["in/ctc_logits"]
    n = REF["in/ctc_logit_length"]
    got = _run(lambda: M.ctc_loss_v2(y, x, lab, n, unique=M.ctc_unique_labels(y)))
    np.testing.assert_allclose(got, REF["out/ctc_v2"], rtol=1e-5)


# --------------------------------------------------------------------------- others

def test_dilated_depthwise_gradient_by_differences():
    w = REF["in/dw_filter"].astype(np.float64)
    check_op_gradients(lambda x: M.depthwise_conv2d_native(x, w, [1, 1, 1, 1], "SAME",
                                                           dilations=[1, 2, 2, 1]),
                       [REF["in/nhwc"].astype(np.float64)])


@pytest.mark.parametrize("padding,rate,reference", [("SAME", [2, 2], "ref_dilated_same"),
                                                    ("VALID", [2, 1], "ref_dilated_valid")])
def test_with_space_to_batch_is_tf_s_dilated_convolution(padding, rate, reference):
    """with_space_to_batch around an undilated VALID conv = TF's dilated conv."""
    w = REF["in/w_dil"]

    def build(x):
        return M.with_space_to_batch(
            x, rate, padding, lambda inp, n, pad: og.nn.convolution(inp, w, pad),
            filter_shape=w.shape)
    got = _run(build, REF["in/nhwc"])
    want = REF[f"out/{reference}"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_with_space_to_batch_calls_op_directly_without_dilation():
    seen = []
    x = np.ones((1, 4, 4, 1), np.float32)
    got = _run(lambda t: M.with_space_to_batch(t, [1, 1], "SAME",
                                               lambda i, n, p: seen.append((n, p)) or i), x)
    assert seen == [(2, "SAME")] and got.shape == x.shape


def test_collapse_repeated_of_equal_rows():
    got = _run(lambda: M.collapse_repeated(np.array([[2, 2, 2]], np.int32), [3]))
    np.testing.assert_array_equal(got[0], [[2]])
    np.testing.assert_array_equal(got[1], [1])


# --------------------------------------------------------------------------- samplers

def _sample(build, runs=1, seed=5):
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(seed)
        out = build()
        sess = og.Session(g)
        return [sess.run(list(out)) for _ in range(runs)]


def _within(counts, probabilities, draws, sigmas=5.0):
    """Each count within `sigmas` binomial standard deviations of draws * p (seeded,
    so a pass cannot turn into a failure; a wrong distribution misses by far more)."""
    expected = draws * probabilities
    spread = np.sqrt(draws * probabilities * (1 - probabilities))
    assert np.all(np.abs(counts - expected) <= sigmas * spread + 1e-9), (counts, expected)


TRUE = np.array([[1, 2], [3, 3], [0, 5]], np.int64)


def test_fixed_unigram_distribution_and_expected_counts():
    unigrams = [1.0, 2.0, 3.0, 4.0, 0.0, 6.0]
    n = 20000
    ((sampled, true_count, sampled_count),) = _sample(
        lambda: M.fixed_unigram_candidate_sampler(TRUE, 2, n, False, 7, unigrams=unigrams,
                                                  num_reserved_ids=1, distortion=0.5))
    weights = np.array([0.0] + unigrams) ** 0.5
    p = weights / weights.sum()
    _within(np.bincount(sampled, minlength=7), p, n)
    assert not np.any(np.isin(sampled, [0, 5]))           # weight 0: reserved, and 0 ** .5
    np.testing.assert_allclose(true_count, p[TRUE] * n, rtol=1e-6)
    np.testing.assert_allclose(sampled_count, p[sampled] * n, rtol=1e-6)


def test_fixed_unigram_unique_expected_counts_follow_the_tries():
    unigrams = [5.0, 1.0, 1.0, 2.0, 8.0, 3.0]
    ((sampled, true_count, sampled_count),) = _sample(
        lambda: M.fixed_unigram_candidate_sampler(TRUE, 2, 4, True, 6, unigrams=unigrams))
    assert len(set(sampled.tolist())) == 4
    p = np.array(unigrams) / sum(unigrams)
    # one number of tries explains every expected count: -expm1(tries * log1p(-p))
    tries = np.log1p(-sampled_count.astype(np.float64)) / np.log1p(-p[sampled])
    assert np.allclose(tries, np.round(tries[0]), atol=1e-3) and round(tries[0]) >= 4
    np.testing.assert_allclose(true_count, -np.expm1(round(tries[0]) * np.log1p(-p[TRUE])),
                               rtol=1e-5)


def test_fixed_unigram_shards_and_vocab_file(tmp_path):
    # TF's ids: reserved 0, 1 (shard 1 keeps 1), then word ids counted on from the
    # kept reserved ones: 1 + k for unigram k; shard 1 keeps the odd ones -> weights
    # [0, u0, u2]
    unigrams = [3.0, 9.0, 1.0, 7.0]
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("".join(f"w{k},{u}\n" for k, u in enumerate(unigrams)))
    n = 6000
    ((sampled, true_count, _),) = _sample(
        lambda: M.fixed_unigram_candidate_sampler(np.array([[0], [2]]), 1, n, False, 3,
                                                  vocab_file=str(vocab), num_reserved_ids=2,
                                                  num_shards=2, shard=1))
    p = np.array([0.0, 3.0, 1.0]) / 4.0
    _within(np.bincount(sampled, minlength=3), p, n)
    np.testing.assert_allclose(true_count[:, 0], p[[0, 2]] * n, rtol=1e-6)


def test_learned_unigram_learns_the_true_classes_as_tensorflow():
    runs = _sample(lambda: M.learned_unigram_candidate_sampler(TRUE, 2, 3, False, 6), runs=4)
    # TF 2.21 (graph mode, the same true classes each run): row 1's (class 3) expected
    # counts 0.5, 0.75, 0.8333334, 0.875; the others' 0.5 (weights 1 + times seen)
    got = np.array([r[1] for r in runs])
    np.testing.assert_allclose(got[:, 1, 0], [0.5, 0.75, 0.8333334, 0.875], rtol=1e-6)
    np.testing.assert_allclose(got[:, 0], 0.5, rtol=1e-6)
    np.testing.assert_allclose(got[:, 2], 0.5, rtol=1e-6)


def test_learned_unigram_draws_follow_the_learned_weights():
    n = 20000
    runs = _sample(lambda: M.learned_unigram_candidate_sampler(TRUE, 2, n, False, 6), runs=3)
    for k, (sampled, _, sampled_count) in enumerate(runs):
        weights = np.ones(6) + k * np.bincount(TRUE.reshape(-1), minlength=6)
        p = weights / weights.sum()
        _within(np.bincount(sampled, minlength=6), p, n)
        np.testing.assert_allclose(sampled_count, p[sampled] * n, rtol=1e-5)


def test_samplers_are_reproducible_with_a_seed():
    def build():
        return M.fixed_unigram_candidate_sampler(TRUE, 2, 5, True, 6, unigrams=[1] * 6,
                                                 seed=3)
    a, b = _sample(build), _sample(build)
    np.testing.assert_array_equal(a[0][0], b[0][0])


def test_sampler_refuses_true_classes_out_of_range_when_run():
    with pytest.raises(og.OneGraphError, match="out of range"):
        _sample(lambda: M.learned_unigram_candidate_sampler(np.array([[6]]), 1, 2, False, 6))


# --------------------------------------------------------------------------- errors

X4 = np.zeros((2, 5, 6, 3), np.float32)


@pytest.mark.parametrize("build,error,match", [
    (lambda: M.ctc_loss_v2(np.zeros((3, 2), np.int32), np.zeros((4, 2, 5), np.float32),
                           [1, 1], [4, 4]), ShapeError, "batch sizes"),
    (lambda: M.ctc_loss_v2(np.zeros((2, 2), np.int32), np.zeros((4, 2, 5), np.float32),
                           [1, 1], [4, 4], blank_index=5), ValueError, "blank_index"),
    (lambda: M.ctc_loss_v2(og.zeros((2, 2), og.float32), np.zeros((4, 2, 5), np.float32),
                           [1, 1], [4, 4]), ShapeError, "labels"),
    (lambda: M.ctc_loss_v2(np.zeros((2, 2), np.int32), np.zeros((4, 5), np.float32),
                           [1, 1], [4, 4]), ShapeError, "3-D"),
    (lambda: M.ctc_loss_v2(np.zeros((2, 2), np.int32), np.zeros((4, 2, 5), np.float32),
                           [1, 1], [4, 4], unique=3), TypeError, "unique"),
    (lambda: M.ctc_loss(np.zeros((2, 2), np.int32), np.zeros((4, 2, 5), np.float32)),
     TypeError, "sequence_length"),
    (lambda: M.ctc_loss(np.zeros((2, 2), np.int32), np.zeros((4, 2, 5), np.float32), [4, 4],
                        logits=np.zeros((4, 2, 5), np.float32)), ValueError, "not both"),
    (lambda: M.conv1d_transpose(np.zeros((2, 5, 3), np.float32),
                                np.zeros((3, 4, 3), np.float32), [2, 12, 4], 2),
     ShapeError, "does not give"),
    (lambda: M.conv1d_transpose(np.zeros((2, 5, 3), np.float32),
                                np.zeros((3, 4, 2), np.float32), [2, 10, 4], 2),
     ShapeError, "channels"),
    (lambda: M.conv3d_transpose(np.zeros((1, 3, 4, 4, 2), np.float32),
                                np.zeros((2, 3, 3, 5, 2), np.float32), [1, 6, 8, 8, 4],
                                [1, 2, 2, 2, 1]), ShapeError, "channels"),
    (lambda: M.conv3d_transpose(np.zeros((1, 3, 4, 4, 2), np.float32),
                                np.zeros((2, 3, 3, 5, 2), np.float32), [1, 6, 8, 8, 5],
                                [1, 2, 2, 2, 1], padding="FULL"), ValueError, "padding"),
    (lambda: M.conv_transpose(np.zeros((2, 5), np.float32), np.zeros((3, 4, 3), np.float32),
                              [2, 10], 2), ValueError, "3, 4 or 5"),
    (lambda: M.depthwise_conv2d_native(X4, np.zeros((3, 3, 4, 2), np.float32), [1, 1, 1, 1],
                                       "SAME"), ShapeError, "channels"),
    (lambda: M.depthwise_conv2d_native(X4, np.zeros((3, 3, 3, 2), np.float32), [2, 1, 1, 1],
                                       "SAME"), ValueError, "batch"),
    (lambda: M.depthwise_conv2d_native_backprop_input(
        [2, 5, 6, 3], np.zeros((3, 3, 3, 2), np.float32), np.zeros((2, 5, 6, 6), np.float32),
        [1, 2, 2, 1], "SAME"), ShapeError, "does not give"),
    (lambda: M.depthwise_conv2d_native_backprop_filter(
        X4, [3, 3, 3, 2], np.zeros((2, 5, 6, 5), np.float32), [1, 1, 1, 1], "SAME"),
     ShapeError, "channels"),
    (lambda: M.conv3d_backprop_filter_v2(
        np.zeros((1, 4, 5, 5, 2), np.float32), [2, 3, 3, 2, 3],
        np.zeros((1, 3, 5, 5, 3), np.float32), [1, 1, 1, 1, 1], "SAME"),
     ShapeError, "out_backprop has size"),
    (lambda: M.conv3d_backprop_filter_v2(
        np.zeros((1, 4, 5, 5, 2), np.float32), [2, 3, 3, 2], np.zeros((1, 4, 5, 5, 3),
                                                                     np.float32),
        [1, 1, 1, 1, 1], "SAME"), ShapeError, "5 entries"),
    (lambda: M.space_to_batch(np.zeros((2, 4, 6), np.float32), [[0, 0], [0, 0]], 2),
     ShapeError, "4-D"),
    (lambda: M.space_to_batch(X4, [[0, 0], [0, 0]]), TypeError, "block_size"),
    (lambda: M.space_to_batch(X4, [[0, 0], [0, 0]], 2, block_shape=2), ValueError, "not both"),
    (lambda: M.with_space_to_batch(X4, [2, 2], "SAME", lambda i, n, p: i), ValueError,
     "filter_shape"),
    (lambda: M.with_space_to_batch(X4, [0, 2], "VALID", lambda i, n, p: i), ValueError,
     "dilation_rate"),
    (lambda: M.with_space_to_batch(X4, [2, 2], "FULL", lambda i, n, p: i), ValueError,
     "padding"),
    (lambda: M.max_pool_v2(np.zeros((2, 3), np.float32), 2, 2, "SAME"), ValueError, "rank"),
    (lambda: M.avg_pool_v2(X4, 2, 2, "SAME", data_format="NCDHW"), ValueError, "data_format"),
    (lambda: M.batch_norm_with_global_normalization(X4, 0.0, 1.0, 0.0, 1.0, 1e-3),
     TypeError, "scale_after_normalization"),
    (lambda: M.batch_norm_with_global_normalization(X4, 0.0, 1.0, 0.0, 1.0, 1e-3, True,
                                                    input=X4), ValueError, "not both"),
    (lambda: M.compute_average_loss(np.float32(2.0)), ValueError, "rank"),
    (lambda: M.compute_average_loss(np.ones(3, np.float32), global_batch_size=2.5),
     TypeError, "integer"),
    (lambda: M.fixed_unigram_candidate_sampler(TRUE, 2, 2, False, 5, unigrams=[1] * 6),
     ValueError, "range_max"),
    (lambda: M.fixed_unigram_candidate_sampler(TRUE, 2, 2, False, 6), ValueError,
     "exactly one"),
    (lambda: M.fixed_unigram_candidate_sampler(TRUE, 2, 2, False, 6, unigrams=[1] * 6,
                                               shard=1), ValueError, "shard"),
    (lambda: M.learned_unigram_candidate_sampler(TRUE, 3, 2, False, 6), ShapeError,
     "num_true"),
    (lambda: M.learned_unigram_candidate_sampler(TRUE, 2, 7, True, 6), ValueError,
     "range_max"),
    (lambda: M.all_candidate_sampler(TRUE, 2, 3, "yes"), TypeError, "unique"),
    (lambda: M.compute_accidental_hits(TRUE, np.zeros((2, 2), np.int64), 2), ShapeError,
     "1-D"),
    (lambda: M.compute_accidental_hits(og.constant(TRUE.astype(np.float32)),
                                       np.zeros(3, np.int64), 2),
     ShapeError, "true_classes"),
])
def test_bad_arguments_raise_while_building(build, error, match):
    with og.Graph().as_default():
        with pytest.raises(error, match=match):
            build()


# ------------------------------------------ samplers: robustness (sizes, edge values)

from onegraph.errors import ExecutionError, OpAttributeError  # noqa: E402
from onegraph.ops import get_op  # noqa: E402
from onegraph.ops.candidate_sampling_more import fixed_unigram_weights  # noqa: E402


def test_fixed_unigram_distortion_is_computed_without_overflow():
    # before: OverflowError (34, 'Numerical result out of range') from float ** 1e10
    ((sampled, true_count, sampled_count),) = _sample(
        lambda: M.fixed_unigram_candidate_sampler(TRUE, 2, 50, False, 6,
                                                  unigrams=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                                                  distortion=1e10))
    assert np.all(sampled == 5)                # the largest unigram takes everything
    np.testing.assert_allclose(sampled_count, 50.0)
    assert np.all(np.isfinite(true_count))
    # where float64 suffices the weights are TF's unigrams ** distortion exactly
    np.testing.assert_array_equal(fixed_unigram_weights([3.0, 0.5], 2.0, 1, 1, 0),
                                  [0.0, 9.0, 0.25])
    # 1e-30 ** 20 underflows and 1e30 ** 20 overflows float64: one common scale keeps
    # their ratio (a distortion of 20 on the same ratio at a sane scale)
    np.testing.assert_allclose(fixed_unigram_weights([1e-30, 2e-30], 20.0, 0, 1, 0),
                               [2.0 ** -20, 1.0], rtol=1e-6)
    np.testing.assert_allclose(fixed_unigram_weights([1e30, 2e30], 20.0, 0, 1, 0),
                               [2.0 ** -20, 1.0], rtol=1e-6)


@pytest.mark.parametrize("kwargs, error, match", [
    # before: hung (NaN / inf weights, or a 2**31-long Python loop)
    (dict(distortion=float("nan")), OpAttributeError, "distortion must be a finite"),
    (dict(distortion=float("inf")), OpAttributeError, "distortion must be a finite"),
    (dict(num_reserved_ids=2 ** 31, range_max=2 ** 31 + 6), ShapeError,
     "MAX_SAMPLE_ELEMENTS"),
    (dict(unigrams=[1.0, float("nan"), 1.0, 1.0, 1.0, 1.0]), OpAttributeError, "finite"),
    (dict(unigrams=[1.0, 1e39, 1.0, 1.0, 1.0, 1.0]), OpAttributeError, "float32"),
    (dict(unigrams=[0.0, 1.0, 1.0, 1.0, 1.0, 1.0], distortion=-1.0), OpAttributeError,
     "infinite weight"),
])
def test_fixed_unigram_bad_weights_are_refused_while_building(kwargs, error, match):
    args = dict(unigrams=[1.0] * 6, range_max=6)
    args.update(kwargs)
    with og.Graph().as_default():
        with pytest.raises(error, match=match):
            M.fixed_unigram_candidate_sampler(TRUE, 2, 2, False, **args)


def test_unique_draws_need_classes_a_draw_can_reach():
    # 1e-30 after 1e30 is lost in the running sum, so only one class can be drawn
    # (before: the draw loop never ended)
    with pytest.raises(og.OneGraphError, match="from the 1 a draw can reach"):
        _sample(lambda: M.fixed_unigram_candidate_sampler(
            np.array([[0]]), 1, 2, True, 2, unigrams=[1e30, 1e-30]))


def test_sampler_kernels_refuse_bad_attributes_by_name():
    classes = [np.zeros((2, 1), np.int64)]
    fixed = get_op("FixedUnigramCandidateSampler", "onegraph")
    good = {"num_true": 1, "num_sampled": 2, "unique": 0, "range_max": 4,
            "unigrams": [1.0, 2.0, 3.0, 4.0]}
    cases = [({"num_shards": 0}, OpAttributeError, "num_shards >= 1"),   # ZeroDivisionError
             ({"unigrams": None}, OpAttributeError, "unigrams"),         # TypeError
             ({"distortion": None}, OpAttributeError, "distortion"),     # TypeError
             ({"num_sampled": -1}, OpAttributeError, "at least 1"),      # accepted
             ({"num_reserved_ids": -1}, OpAttributeError, "num_reserved_ids >= 0"),
             ({"num_shards": 2 ** 63, "range_max": 1}, None, None)]       # OverflowError
    for change, error, match in cases:
        attrs = dict(fixed.resolve_attrs(good), **change)   # defaults, then the change
        if error is None:   # only id 0 is in shard 0 of so many
            sampled, _, _ = fixed.kernel([np.zeros((2, 1), np.int64)], attrs, None)
            assert np.all(sampled == 0)
            continue
        with pytest.raises(error, match=match):
            fixed.kernel(classes, attrs, None)
    learned = get_op("LearnedUnigramCandidateSampler", "onegraph")
    good = {"num_true": 1, "num_sampled": 2, "unique": 0, "range_max": 4}
    with pytest.raises(ShapeError, match="MAX_SAMPLE_ELEMENTS"):      # MemoryError
        learned.kernel(classes, dict(good, range_max=10 ** 10), None)
    with pytest.raises(OpAttributeError, match="at least 1"):         # ValueError
        learned.kernel(classes, dict(good, range_max=0), None)
    with pytest.raises(ExecutionError, match="out of range"):         # ValueError
        learned.kernel([np.array([[7], [0]], np.int64)], good, None)


def test_accidental_hits_kernel_matches_the_definition():
    op = get_op("ComputeAccidentalHits", "onegraph")
    rng = np.random.default_rng(0)
    for _ in range(20):
        true_classes = rng.integers(0, 12, (5, 3))
        sampled = rng.integers(0, 12, 8)
        rows, ids, weights = op.kernel([true_classes, sampled], {"num_true": 3}, None)
        last = {int(v): k for k, v in enumerate(sampled)}   # TF's map: the last wins
        want = [(i, last[int(v)]) for (i, _), v in np.ndenumerate(true_classes)
                if int(v) in last]
        assert list(zip(rows.tolist(), ids.tolist())) == want
        assert rows.dtype == np.int32 and ids.dtype == np.int64
        assert np.all(weights == np.finfo(np.float32).min)
    # before: ValueError "cannot convert float NaN to integer"
    with pytest.raises(ShapeError, match="sampled_candidates must be int64"):
        op.kernel([true_classes, np.array([np.nan])], {"num_true": 3}, None)


def test_fixed_unigram_without_unigrams_is_named():
    # before: TypeError "object of type 'NoneType' has no len()"
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="exactly one of vocab_file and unigrams"):
            M.fixed_unigram_candidate_sampler(TRUE, 2, 2, False, 6, unigrams=None)


def test_fixed_unigram_argument_types_are_named():
    # before: ValueError / TypeError from float() and numpy
    cases = [dict(distortion="abc"), dict(unigrams=["a", "b"]), dict(unigrams=1.5),
             dict(vocab_file=np.ones(2))]
    for kwargs in cases:
        args = dict(unigrams=[1.0] * 6)
        args.update(kwargs)
        with og.Graph().as_default():
            with pytest.raises(TypeError, match="fixed_unigram_candidate_sampler: "):
                M.fixed_unigram_candidate_sampler(TRUE, 2, 2, False, 6, **args)


def test_all_candidate_sampler_refuses_a_huge_num_sampled_while_building():
    # before: np.arange(num_sampled) while building: MemoryError, or ValueError "Maximum
    # allowed dimension exceeded" (sizes numpy refuses at once: no test may allocate)
    for n in (2 ** 40, 2 ** 63):
        with og.Graph().as_default():
            with pytest.raises(ShapeError, match="MAX_SAMPLE_ELEMENTS"):
                M.all_candidate_sampler(TRUE, 2, n, True)


@pytest.mark.parametrize("build,message", [
    (lambda: M.depthwise_conv2d_native_backprop_filter(
        np.zeros((1, 2, 2, 1), np.float32), [3, 3, 1, 1], np.zeros((1, 1, 1, 1), np.float32),
        [1, 1, 1, 1], [[0, 0], [0, 0], [0, 0], [0, 0]]),
     "depthwise_conv2d_native_backprop_filter: the filter (3) is larger than the padded "
     "input (2) on spatial axis 0"),
    (lambda: M.conv3d_backprop_filter_v2(np.zeros((1, 4, 5, 5, 2), np.float32),
                                         [3, 3, 3, 2, 3], np.zeros((1, 3, 3, 3, 3), np.float32),
                                         [1, 1, 1, 1, 1], "VALID"),
     "conv3d_backprop_filter: out_backprop has size 3 on spatial axis 0 but a convolution "
     "of this input, filter and padding makes 2"),
    (lambda: M.depthwise_conv2d_native_backprop_filter(
        X4, [3, 3, 3, 2], np.zeros((2, 5, 6, 5), np.float32), [1, 1, 1, 1], "SAME"),
     "depthwise_conv2d_native_backprop_filter: out_backprop has 5 channels but "
     "filter_sizes [3, 3, 3, 2] says 6"),
])
def test_backprop_filters_name_sizes_that_do_not_fit_the_convolution(build, message):
    # VALID output size (in - k) // stride + 1; depthwise out channels in * multiplier;
    # (VALID and SAME padding refuse a too large filter before, in their own words)
    with pytest.raises(ShapeError, match="^" + re.escape(message) + "$"):
        build()

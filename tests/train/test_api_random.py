"""og.random_crop, og.random_shuffle and og.multinomial (TF1's): what each draw can be,
how often each outcome comes (against the exact probabilities, within 4 standard
errors), seeding, errors and exports."""

import itertools

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ExecutionError, ShapeError


def _within(counts, probabilities, runs):
    """Each outcome's frequency within 4 standard errors of its probability."""
    for outcome, p in probabilities.items():
        got = counts.get(outcome, 0) / runs
        assert abs(got - p) <= 4 * np.sqrt(p * (1 - p) / runs) + 1e-12, (outcome, got, p)


def test_random_crop_takes_every_block_equally_often():
    xv = np.arange(4 * 5 * 2, dtype=np.float32).reshape(4, 5, 2)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None, 2])
        crop = og.random_crop(x, [2, 3, 2])
        by_tensor = og.random_crop(x, og.stack([og.shape(x)[0] - 1, 5, 2]))
        sess = og.Session(g, seed=0)
        counts = {}
        runs = 1200
        for _ in range(runs):
            y = sess.run(crop, {x: xv})
            o0, o1 = int(y[0, 0, 0]) // 10, (int(y[0, 0, 0]) % 10) // 2
            np.testing.assert_array_equal(y, xv[o0:o0 + 2, o1:o1 + 3])
            counts[(o0, o1)] = counts.get((o0, o1), 0) + 1
        _within(counts, {k: 1 / 9 for k in itertools.product(range(3), range(3))}, runs)
        y = sess.run(by_tensor, {x: xv})
        assert y.shape == (3, 5, 2) and int(y[0, 0, 0]) in (0, 10)
        with pytest.raises(ExecutionError, match="size must not exceed"):
            sess.run(crop, {x: xv[:1]})


def test_random_shuffle_gives_every_order_equally_often():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.int64, [None, 2])
        shuffled = og.random_shuffle(x)
        sess = og.Session(g, seed=1)
        xv = np.array([[0, 0], [1, 10], [2, 20]])
        counts = {}
        runs = 1800
        for _ in range(runs):
            y = sess.run(shuffled, {x: xv})
            np.testing.assert_array_equal(y[:, 1], y[:, 0] * 10)   # rows stay whole
            key = tuple(y[:, 0])
            counts[key] = counts.get(key, 0) + 1
        _within(counts, {p: 1 / 6 for p in itertools.permutations(range(3))}, runs)
        assert sess.run(shuffled, {x: np.zeros((0, 2), np.int64)}).shape == (0, 2)


def test_multinomial_draws_by_softmax_of_the_logits():
    probs = np.array([[0.1, 0.6, 0.3], [0.7, 0.0, 0.3]])
    logits = np.log(np.maximum(probs, 1e-30)).astype(np.float32) + np.float32(2.5)
    g = og.Graph()
    with g.as_default():
        draws = og.multinomial(og.constant(logits), 4000)
        small = og.multinomial(og.constant(logits), 3, output_dtype=og.int32)
        got = og.Session(g, seed=2).run(draws)
        assert og.Session(g, seed=2).run(small).dtype == np.int32
    assert got.shape == (2, 4000) and got.dtype == np.int64
    for row in range(2):
        counts = dict(zip(*np.unique(got[row], return_counts=True)))
        _within(counts, dict(enumerate(probs[row])), 4000)


def test_seeds_repeat_across_sessions():
    def build():
        g = og.Graph()
        with g.as_default():
            og.set_random_seed(5)
            x = og.constant(np.arange(20.0).reshape(10, 2))
            outs = [og.random_crop(x, [3, 2]), og.random_shuffle(x, seed=3),
                    og.multinomial(og.zeros([1, 6]), 10)]
        return g, outs
    g1, o1 = build()
    g2, o2 = build()
    s1, s2 = og.Session(g1), og.Session(g2)
    for _ in range(2):
        for a, b in zip(s1.run(o1), s2.run(o2)):
            np.testing.assert_array_equal(a, b)


def test_bad_arguments_are_named():
    x = og.zeros([4, 3])
    cases = [(lambda: og.random_crop(x, [5, 3]), ShapeError, "does not fit"),
             (lambda: og.random_crop(x, [2]), ShapeError, "one entry per axis"),
             (lambda: og.random_crop(og.placeholder(og.float32), [2]), ShapeError,
              "known rank"),
             (lambda: og.random_shuffle(og.constant(1.0)), ShapeError, "rank >= 1"),
             (lambda: og.multinomial(og.zeros([3]), 2), ShapeError, "2-D floats"),
             (lambda: og.multinomial(x, -1), TypeError, "num_samples must be >= 0"),
             (lambda: og.multinomial(x, 2, output_dtype=og.float32), TypeError,
              "int32 or int64"),
             (lambda: og.random_shuffle(x, seed=-1), ValueError, "seed")]
    for fn, error, message in cases:
        with pytest.raises(error, match=message):
            fn()


def test_random_sampling_exports_for_onnxruntime():
    xv = np.arange(12, dtype=np.float32).reshape(6, 2)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 2], name="x")
        outs = {"crop": og.random_crop(x, [3, 1]), "shuffled": og.random_shuffle(x),
                "drawn": og.multinomial(x, 4)}
        sig = og.signature({"x": x}, outs)
        proto = to_onnx(g, signatures={"serving": sig})
    crop, shuffled, drawn = ort.InferenceSession(
        proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(list(outs),
                                                                           {"x": xv})
    assert crop.shape == (3, 1) and int(crop[0, 0]) % 2 == int(crop[1, 0] - 2) % 2
    np.testing.assert_array_equal(np.sort(shuffled[:, 0]), xv[:, 0])
    assert drawn.shape == (6, 4) and set(drawn.ravel()) <= {0, 1}

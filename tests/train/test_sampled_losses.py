"""og.nn.nce_loss and og.nn.sampled_softmax_loss against TensorFlow's values and
gradients (given sampled classes), recorded in data/tf1_sampled_reference.npz by
`tools/record_tf1_reference.py sampled` (TensorFlow 2.21's tf.compat.v1); the
candidate samplers' draws against the probabilities they report; sparse gradients;
errors."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ShapeError

from . import tf1_reference
from .tf1_sampled_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("sampled")


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow_values_and_gradients(reference, case):
    tf1_reference.check_case(reference, case, rtol=1e-5, atol=1e-5)


_SHARDED = [c for c in CASES if c[0].endswith(("_mod", "_div"))]


@pytest.mark.parametrize("case", _SHARDED, ids=[c[0] for c in _SHARDED])
def test_shards_of_rows_known_only_at_run_time(reference, case):
    """The sharded cases again with every shard's row count (and the batch) unknown
    while building: "mod" then finds each shard's start from the run-time shapes."""
    shards = [k[1:] for arg in case[2][:2] for k in arg]
    hidden = {key: (0,) for key in shards + ["x", "labels2"]}
    tf1_reference.check_case(reference, case, rtol=1e-5, atol=1e-5, hidden_dims=hidden)


def _draws(sampler, unique, runs, num_sampled=4, range_max=10, seed=5):
    """Every run's (sampled, true_expected_count, sampled_expected_count)."""
    g = og.Graph()
    with g.as_default():
        out = sampler(og.constant(np.array([[0], [3], [9]], np.int64)), 1, num_sampled,
                      unique, range_max, seed=seed)
        sess = og.Session(g)
        return [sess.run(list(out)) for _ in range(runs)]


def _probabilities(kind, range_max=10):
    k = np.arange(range_max)
    if kind == "uniform":
        return np.full(range_max, 1.0 / range_max)
    return np.log((k + 2.0) / (k + 1.0)) / np.log(range_max + 1.0)


@pytest.mark.parametrize("kind", ["uniform", "log_uniform"])
@pytest.mark.parametrize("unique", [False, True])
def test_samplers_draw_as_often_as_their_expected_counts_say(kind, unique):
    sampler = getattr(og.nn, f"{kind}_candidate_sampler")
    runs = _draws(sampler, unique, 4000)
    counts = np.zeros(10)
    for sampled, true_count, sampled_count in runs:
        assert sampled.dtype == np.int64 and sampled.shape == (4,)
        assert true_count.dtype == np.float32 and true_count.shape == (3, 1)
        assert ((sampled >= 0) & (sampled < 10)).all()
        if unique:
            assert len(set(sampled.tolist())) == 4
        np.add.at(counts, sampled, 1)
        for k, count in zip(sampled, sampled_count):   # the sampler's own formula ...
            true_k = {0: 0, 3: 1, 9: 2}.get(int(k))
            if true_k is not None:                     # ... agrees for a true class
                np.testing.assert_allclose(count, true_count[true_k, 0], rtol=1e-6)
    frequency = counts / len(runs)
    p = _probabilities(kind)
    if not unique:
        # independent draws: each class k appears p(k) * num_sampled times on average,
        # and that is what both expected counts report, every run
        np.testing.assert_allclose(frequency, 4 * p, atol=0.06)
        np.testing.assert_allclose(runs[0][1].ravel(), 4 * p[[0, 3, 9]], rtol=1e-6)
    else:
        # distinct draws: every count of a run is 1 - (1 - p)^n for the run's number
        # of draws n > num_sampled, or p * num_sampled when the first num_sampled draws
        # were distinct (TF's approximations of P(drawn)) ...
        longer = 0
        for sampled, true_count, sampled_count in runs[:200]:
            ids = np.concatenate([[0, 3, 9], sampled])
            counts = np.concatenate([true_count.ravel(), sampled_count]).astype(np.float64)
            if np.allclose(counts, 4 * p[ids], rtol=1e-6):
                continue
            longer += 1
            n = np.log1p(-counts) / np.log1p(-p[ids])
            assert n.min() > 4.5 and np.ptp(n) < 1e-3 * n.max(), n
            assert abs(n[0] - round(n[0])) < 1e-3 * n[0], n
        assert 20 < longer < 200
        # ... and draws and counts agree with plain sequential sampling: draw until 4
        # distinct classes, counting the draws
        plain = np.random.default_rng(11)
        freq, count = np.zeros(10), np.zeros(10)
        for _ in range(len(runs)):
            found, n = set(), 0
            while len(found) < 4:
                found.add(int(plain.choice(10, p=p / p.sum())))
                n += 1
            freq[list(found)] += 1
            count += 4 * p if n == 4 else -np.expm1(n * np.log1p(-p))
        np.testing.assert_allclose(frequency, freq / len(runs), atol=0.03)
        mean_true = np.mean([c[1].ravel() for c in runs], axis=0)
        np.testing.assert_allclose(mean_true, count[[0, 3, 9]] / len(runs), atol=0.03)
    assert not np.array_equal(runs[0][0], runs[1][0])   # a seeded stream advances


def test_seeded_samplers_repeat_in_a_new_session_and_log_uniform_favours_small_ids():
    first = _draws(og.nn.log_uniform_candidate_sampler, False, 3, num_sampled=200,
                   range_max=1000)
    again = _draws(og.nn.log_uniform_candidate_sampler, False, 3, num_sampled=200,
                   range_max=1000)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a[0], b[0])
    drawn = np.concatenate([r[0] for r in first])
    assert np.mean(drawn < 10) > 0.25    # P(k < 10) = log(11) / log(1001) = 0.35


def test_training_with_sampled_softmax_updates_only_the_looked_up_rows():
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((30, 4)).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        w = og.Variable(w0, name="w")
        b = og.Variable(np.zeros(30, np.float32), name="b")
        x = og.constant(rng.standard_normal((5, 4)).astype(np.float32))
        labels = og.constant(np.array([[1], [2], [3], [1], [2]], np.int64))
        sampled = (og.constant(np.array([10, 11, 12], np.int64)),
                   og.constant(np.full((5, 1), 0.5, np.float32)),
                   og.constant(np.full(3, 0.5, np.float32)))
        loss = og.reduce_mean(og.nn.sampled_softmax_loss(
            w, b, labels, x, num_sampled=3, num_classes=30, sampled_values=sampled))
        step = og.train.GradientDescentOptimizer(0.5).minimize(loss)
        sess = og.Session(g)
        sess.run(og.global_variables_initializer())
        before = sess.run(loss)
        for _ in range(20):
            sess.run(step)
        after, w1 = sess.run([loss, w.read_value()])
    assert after < before
    changed = np.flatnonzero(np.any(w1 != w0, axis=1))
    assert changed.tolist() == [1, 2, 3, 10, 11, 12]


def test_bad_arguments_are_named():
    g = og.Graph()
    with g.as_default():
        w = og.constant(np.zeros((10, 3), np.float32))
        b = og.constant(np.zeros(10, np.float32))
        x = og.constant(np.zeros((2, 3), np.float32))
        y = og.constant(np.zeros((2, 1), np.int64))
        with pytest.raises(ShapeError, match=r"nce_loss: labels must be \(batch, "
                                             r"num_true=2\)"):
            og.nn.nce_loss(w, b, y, x, 3, 10, num_true=2)
        with pytest.raises(ShapeError, match="inputs must be"):
            og.nn.sampled_softmax_loss(w, b, y, og.constant(np.zeros(3, np.float32)), 3, 10)
        with pytest.raises(TypeError, match="sampled_values must be"):
            og.nn.nce_loss(w, b, y, x, 3, 10, sampled_values=(1, 2))
        with pytest.raises(ValueError, match="partition_strategy"):
            og.nn.nce_loss(w, b, y, x, 3, 10, partition_strategy="hash")
        with pytest.raises(ValueError, match=r"num_sampled \(12\) must not exceed "
                                             r"range_max \(10\)"):
            og.nn.uniform_candidate_sampler(y, 1, 12, True, 10)
        with pytest.raises(TypeError, match="unique must be a bool"):
            og.nn.uniform_candidate_sampler(y, 1, 3, 1, 10)
        with pytest.raises(TypeError, match="num_sampled must be a positive int"):
            og.nn.log_uniform_candidate_sampler(y, 1, 0, True, 10)


# ------------------------------------------------- robustness: sizes and edge values

from onegraph.errors import ExecutionError, OneGraphError, OpAttributeError  # noqa: E402
from onegraph.ops import candidate_sampling as cs  # noqa: E402
from onegraph.ops import get_op  # noqa: E402


def test_sampler_sizes_beyond_the_limit_are_refused_while_building():
    y = np.zeros((2, 1), np.int64)
    with og.Graph().as_default():
        # before: accepted, then 8+ GiB allocated (or MemoryError) when run
        with pytest.raises(ShapeError, match="MAX_SAMPLE_ELEMENTS"):
            og.nn.uniform_candidate_sampler(y, 1, 10 ** 9, False, 10 ** 9)
        with pytest.raises(ShapeError, match="MAX_SAMPLE_ELEMENTS"):
            og.nn.log_uniform_candidate_sampler(y, 1, 2 ** 31, False, 10)
        # before: OverflowError "Python int too large to convert to C long" when run
        with pytest.raises(ShapeError, match="range_max .* must fit int64"):
            og.nn.uniform_candidate_sampler(y, 1, 2, False, 2 ** 64)


@pytest.mark.parametrize("op", ["UniformCandidateSampler", "LogUniformCandidateSampler"])
def test_sampler_kernels_check_their_attributes(op):
    opdef = get_op(op, "onegraph")
    classes = [np.zeros((2, 1), np.int64)]
    good = {"num_true": 1, "num_sampled": 2, "unique": 1, "range_max": 5}
    cases = [({"num_sampled": None}, "must be given"),        # before: TypeError
             ({"num_sampled": 0}, "at least 1"),              # before: accepted
             ({"range_max": 0}, "at least 1"),
             ({"range_max": 2 ** 63}, "must fit int64"),      # before: accepted
             ({"num_sampled": 6}, "must not exceed range_max")]
    for change, message in cases:
        attrs = dict(good, **change)
        with pytest.raises(OpAttributeError, match=message):
            opdef.kernel(classes, attrs, None)
        with pytest.raises(OpAttributeError, match=message):   # and while building
            opdef.resolve_attrs(attrs)
    with pytest.raises(ShapeError, match="MAX_SAMPLE_ELEMENTS"):
        opdef.kernel(classes, dict(good, unique=0, num_sampled=10 ** 10), None)


def test_ids_stay_in_range_up_to_the_int64_limit():
    y = np.zeros((2, 1), np.int64)
    for sampler in (og.nn.uniform_candidate_sampler, og.nn.log_uniform_candidate_sampler):
        with og.Graph().as_default():
            sampled, _, count = sampler(y, 1, 1000, True, 2 ** 63 - 1, seed=3)
            s, c = og.Session().run([sampled, count])
        assert len(set(s.tolist())) == 1000 and s.min() >= 0 and np.all(np.isfinite(c))


@pytest.mark.parametrize("draw", [cs._uniform_draws, cs._log_uniform_draws])
@pytest.mark.parametrize("range_max, wanted", [(5, 5), (10, 3), (1000, 999), (50, 1),
                                               (2 ** 30, 300), (2 ** 27, 1000)])
def test_distinct_draws_are_the_first_distinct_ids_of_one_stream(draw, range_max, wanted):
    # the chunked search must find what a one-at-a-time loop over the same stream finds
    for seed in range(3):
        found, tries = cs._distinct_draws(draw, np.random.default_rng(seed), wanted,
                                          range_max)
        stream = draw(np.random.default_rng(seed), tries, range_max)
        first, seen = [], set()
        for k, v in enumerate(stream.tolist()):
            if v not in seen:
                seen.add(v)
                first.append(v)
        assert first == found.tolist() and len(first) == wanted
        assert stream[-1] not in set(stream[:-1].tolist())   # the last draw was needed


def test_distinct_draws_give_up_instead_of_hanging(monkeypatch):
    # before: no bound; ids of tiny probability kept the loop going (in effect forever)
    monkeypatch.setattr(cs, "MAX_UNIQUE_DRAWS", 5000)
    y = np.zeros((2, 1), np.int64)
    with og.Graph().as_default():
        sampled = og.nn.log_uniform_candidate_sampler(y, 1, 2000, True, 2000, seed=1)[0]
        with pytest.raises(ExecutionError, match="MAX_UNIQUE_DRAWS"):
            og.Session().run(sampled)


def test_sampled_loss_arguments_are_named():
    w = np.zeros((10, 3), np.float32)
    b = np.zeros(10, np.float32)
    x = np.zeros((2, 3), np.float32)
    y = np.zeros((2, 1), np.int64)
    cases = [
        # the loss, not the sampler it calls, is named (before: log_uniform_...)
        (lambda: og.nn.nce_loss(w, b, y, x, 0, 10), TypeError, "nce_loss: num_sampled"),
        (lambda: og.nn.nce_loss(w, b, y, x, 11, 10), ValueError,
         r"nce_loss: num_sampled \(11\) must not exceed num_classes \(10\)"),
        (lambda: og.nn.sampled_softmax_loss(w, b, y, x, 3, None), TypeError,
         "sampled_softmax_loss: num_classes"),
        # before: ValueError from concat / numpy's "truth value ... is ambiguous"
        (lambda: og.nn.nce_loss([], b, y, x, 3, 10), ShapeError, "non-empty list"),
        (lambda: og.nn.nce_loss(w, b, y, x, 3, 10, remove_accidental_hits=np.ones(2)),
         TypeError, "remove_accidental_hits must be a bool"),
        # before: a Gather failure when run
        (lambda: og.nn.nce_loss(np.float32(1), b, y, x, 3, 10), ShapeError,
         "weights must be 2-D"),
        (lambda: og.nn.nce_loss(w, np.zeros((10, 1), np.float32), y, x, 3, 10), ShapeError,
         "biases must be 1-D"),
        (lambda: og.nn.nce_loss(np.zeros((10, 4), np.float32), b, y, x, 3, 10), ShapeError,
         "rows of 4 values but inputs have 3"),
        (lambda: og.nn.nce_loss(w[:6], b, y, x, 3, 10), ShapeError,
         "weights have 6 rows but num_classes is 10"),
        (lambda: og.nn.nce_loss(og.constant(np.zeros((10, 3))), b, y, x, 3, 10),
         ShapeError, "must be float32 like inputs"),
        (lambda: og.nn.nce_loss(w, b, y, None, 3, 10), OneGraphError, "nce_loss: inputs"),
        (lambda: og.nn.nce_loss(w, b, y, np.zeros((2, 3), np.int32), 3, 10), ShapeError,
         "inputs must be float"),
    ]
    for build, error, message in cases:
        with og.Graph().as_default():
            with pytest.raises(error, match=message):
                build()

"""og.random_gamma, og.random_poisson and the stateless random functions: seeded
statistical checks against the exact distributions (so they cannot flake: every
seed is fixed and the statistics are deterministic), the implicit gamma gradient
against TensorFlow's RandomGammaGrad and against finite differences of the inverse
CDF, determinism of the stateless family, and named errors.

Thresholds: means within 5 standard errors; Kolmogorov-Smirnov statistics below
1.95 / sqrt(n) (the 0.1% critical value); chi-square statistics below the 0.1%
quantile of their distribution (Wilson-Hilferty: df (1 - 2/(9 df) + 3.09 sqrt(2/(9
df)))^3, within 1% of the exact quantile for df >= 3). Checked by hand: gamma draws
with alpha 3% off and Poisson draws with lam 2% off fail them, and the gradient checks
fail for a gradient 1e-4 off.
"""

import math

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, ShapeError
from onegraph.ops import get_op, special
from onegraph.ops.random_more import gamma_sample_grad

og.random   # noqa: B018 - load og's public names before the module below
from onegraph.train import api_random_more as rm  # noqa: E402

N = 20000
KS_LIMIT = 1.95 / math.sqrt(N)


def _run(*fetch, feed=None, graph=None):
    return og.Session(graph or og.get_default_graph()).run(list(fetch), feed)


def ks_statistic(samples, cdf) -> float:
    """The Kolmogorov-Smirnov distance between the samples' empirical CDF and cdf."""
    x = np.sort(np.asarray(samples, np.float64).ravel())
    f = cdf(x)
    n = len(x)
    return float(max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n)))


def chi_square_ok(counts, probs) -> tuple:
    """(statistic, 0.1% critical value) of counts against probabilities, bins with an
    expected count below 5 merged into the last kept bin."""
    counts = np.asarray(counts, np.float64)
    expected = np.asarray(probs, np.float64) * counts.sum()
    keep = expected >= 5
    c = np.append(counts[keep], counts[~keep].sum())
    e = np.append(expected[keep], expected[~keep].sum())
    if e[-1] < 5:
        c[-2] += c[-1]
        e[-2] += e[-1]
        c, e = c[:-1], e[:-1]
    stat = float(np.sum((c - e) ** 2 / e))
    df = len(c) - 1
    critical = df * (1 - 2 / (9 * df) + 3.09 * math.sqrt(2 / (9 * df))) ** 3
    return stat, critical


def _normal_cdf(x):
    return 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def _poisson_pmf(lam, k):
    return np.asarray([math.exp(-lam + j * math.log(lam) - math.lgamma(j + 1)) for j in k])


# ----------------------------------------------------------------- gamma, stateful

ALPHAS = np.asarray([0.3, 1.0, 4.5])
BETAS = np.asarray([1.0, 2.0, 0.5])


def test_random_gamma_matches_the_gamma_distribution():
    with og.Graph().as_default():
        x = rm.random_gamma([N], ALPHAS, beta=BETAS, dtype=og.float64, seed=11)
        assert x.shape == (N, 3) and x.dtype == og.float64
        (v,) = _run(x)
    mean, var = ALPHAS / BETAS, ALPHAS / BETAS ** 2
    np.testing.assert_array_less(np.abs(v.mean(0) - mean), 5 * np.sqrt(var / N))
    # the sample variance's standard error: sqrt((mu4 - var^2) / n), mu4 = var^2 (3 + 6/a)
    se_var = np.sqrt(var ** 2 * (2 + 6 / ALPHAS) / N)
    np.testing.assert_array_less(np.abs(v.var(0) - var), 5 * se_var)
    for k in range(3):
        assert ks_statistic(v[:, k], lambda t: special.igamma(ALPHAS[k], t * BETAS[k])) \
            < KS_LIMIT, k


def test_random_gamma_shape_dtype_and_floor():
    with og.Graph().as_default():
        shape = og.placeholder(og.int32, [2])
        x = rm.random_gamma(shape, [[1.0], [2.0]], beta=[3.0, 4.0, 5.0], seed=1)
        assert x.dtype == og.float32
        tiny = rm.random_gamma([2000], 1e-3, seed=2)   # mostly underflows: floored at tiny
        v, t = _run(x, tiny, feed={shape: [4, 5]})
    assert v.shape == (4, 5, 2, 3)
    assert t.min() == np.finfo(np.float32).tiny and np.all(t > 0)


def test_seeded_streams_repeat_in_a_new_session_and_advance_between_runs():
    g = og.Graph()
    with g.as_default():
        x = rm.random_gamma([4], 2.0, seed=5)
        y = rm.random_poisson([1.0, 9.0], [4], seed=5)
    s1, s2 = og.Session(g), og.Session(g)
    first = s1.run([x, y])
    second = s1.run([x, y])
    again = s2.run([x, y])
    assert not np.array_equal(first[0], second[0])
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)


# TensorFlow 2.21's tf.raw_ops.RandomGammaGrad(alpha, sample), float64, recorded once
# (17 digits) for the pairs below: small and large alpha, both tails.
_TF_ALPHA = np.asarray([0.05, 0.3, 0.5, 1.0, 1.0, 2.5, 4.0, 10.0, 10.0, 50.0, 0.7, 3.0])
_TF_SAMPLE = np.asarray([1e-4, 0.02, 1.7, 0.3, 5.0, 2.5, 0.8, 9.0, 20.0, 48.0, 6.0, 1e-3])
_TF_GRAD = np.asarray([
    1.7426831784515012e-02, 2.5419430208458904e-01, 2.3565769355158683e+00,
    5.9577846565618253e-01, 2.3570757536203653e+00, 1.0686730199876306e+00,
    4.1774985769097983e-01, 9.6418272428479612e-01, 1.4093215647394737e+00,
    9.8299976726018512e-01, 3.0199854203024055e+00, 2.7219922821392069e-03])


def test_implicit_gradient_matches_tensorflows_random_gamma_grad():
    # TF sums series for dP/da; og differentiates P numerically: they agree to 2e-8
    # relative (measured 1.1e-8 at the smallest sample, elsewhere 1e-10)
    np.testing.assert_allclose(gamma_sample_grad(_TF_ALPHA, _TF_SAMPLE), _TF_GRAD,
                               rtol=1e-7)
    # the float32 kernel (computed in float64, rounded): TF's float32 series agree to a
    # few float32 ulps
    kernel = get_op("RandomGammaGrad", "onegraph").kernel
    (got,) = kernel([_TF_ALPHA.astype(np.float32), _TF_SAMPLE.astype(np.float32)], {}, None)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _TF_GRAD, rtol=2e-6)


def _gamma_quantile(a, u):
    """x with P(a, x) = u by bisection in log x (float64 arrays; 200 halvings)."""
    lo, hi = np.full_like(a, -60.0), np.log(np.maximum(100.0 * a, 100.0))
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        below = special.igamma(a, np.exp(mid)) < u
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return np.exp(0.5 * (lo + hi))


def test_gradients_match_finite_differences_of_the_inverse_cdf():
    alpha = np.asarray([0.3, 1.0, 2.5, 8.0, 30.0])
    beta = np.asarray([1.0, 0.5, 2.0, 1.5, 3.0])
    with og.Graph().as_default():
        a, b = og.constant(alpha), og.constant(beta)
        x = rm.random_gamma([1], a, beta=b, dtype=og.float64, seed=3)[0]
        ga, gb = og.gradients(og.reduce_sum(x), [a, b])
        xv, gav, gbv = _run(x, ga, gb)
    u = special.igamma(alpha, xv * beta)        # each draw's fixed uniform quantile
    h = 1e-5 * alpha

    def draw(aa, bb):
        return _gamma_quantile(aa, u) / bb

    np.testing.assert_allclose(draw(alpha, beta), xv, rtol=1e-12)
    fd_a = (draw(alpha + h, beta) - draw(alpha - h, beta)) / (2 * h)
    fd_b = (draw(alpha, beta + h) - draw(alpha, beta - h)) / (2 * h)
    np.testing.assert_allclose(gav, fd_a, rtol=1e-6)
    np.testing.assert_allclose(gbv, fd_b, rtol=1e-6)


def test_expected_gradient_is_the_derivative_of_the_mean():
    # E[x] = alpha / beta, so the average of d x / d alpha over draws is 1 / beta
    with og.Graph().as_default():
        a = og.constant(np.asarray([0.5, 3.0]))
        x = rm.random_gamma([N], a, beta=2.0, dtype=og.float64, seed=8)
        (g,) = _run(og.gradients(og.reduce_mean(x, axis=0), a)[0])
    np.testing.assert_allclose(g, [0.5, 0.5], rtol=0.03)


# --------------------------------------------------------------------- Poisson

def test_random_poisson_matches_the_poisson_distribution():
    lam = np.asarray([0.5, 3.5, 40.0])
    with og.Graph().as_default():
        x = rm.random_poisson(lam, [N], dtype=og.int64, seed=4)
        assert x.shape == (N, 3) and x.dtype == og.int64
        (v,) = _run(x)
    np.testing.assert_array_less(np.abs(v.mean(0) - lam), 5 * np.sqrt(lam / N))
    for k, rate in enumerate(lam):
        top = int(rate + 10 * math.sqrt(rate) + 10)
        counts = np.bincount(v[:, k], minlength=top + 1)[:top + 1]
        stat, critical = chi_square_ok(counts, _poisson_pmf(rate, range(top + 1)))
        assert stat < critical, (rate, stat, critical)


# ------------------------------------------------------------------- stateless

SEED = [7, 19]


def test_stateless_values_are_a_function_of_the_seed():
    def build(seed):
        return [rm.stateless_uniform([3, 2], seed),
                rm.stateless_normal([4], seed, dtype=og.float64),
                rm.stateless_truncated_normal([4], seed),
                rm.stateless_categorical(og.constant(np.zeros((2, 5))), 6, seed),
                rm.stateless_multinomial(og.constant(np.zeros((2, 5))), 6, seed),
                rm.stateless_binomial([5], seed, 10.0, 0.4),
                rm.stateless_poisson([5], seed, 3.0),
                rm.stateless_gamma([5], seed, 2.0),
                rm.stateless_uniform([6], seed, minval=-5, maxval=5, dtype=og.int64)]

    og.set_random_seed(123)   # the graph seed plays no part
    g1 = og.Graph()
    with g1.as_default():
        og.set_random_seed(1)
        one = og.Session(g1).run(build(SEED))
        twice = og.Session(g1).run(build(SEED))
        other = og.Session(g1).run(build([7, 20]))
    g2 = og.Graph()
    with g2.as_default():
        seed_t = og.placeholder(og.int32, [2])
        fed = og.Session(g2).run(build(seed_t), {seed_t: np.asarray(SEED, np.int32)})
    for a, b, c, d in zip(one, twice, fed, other):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
        assert not np.array_equal(a, d)


def test_stateless_values_survive_saving(tmp_path):
    g = og.Graph()
    with g.as_default():
        seed = og.placeholder(og.int64, [2], name="seed")
        y = og.identity(rm.stateless_normal([3], seed, dtype=og.float64)
                        + rm.stateless_gamma([3], seed, 1.5, dtype=og.float64), name="y")
        sig = og.signature({"seed": seed}, {"y": y})
        want = og.Session(g).run(y, {seed: np.asarray(SEED)})
        path = str(tmp_path / "stateless.og")
        og.save(g, path, signatures={"serving": sig})
    got = og.Session(og.load(path)).run_signature("serving", seed=np.asarray(SEED))["y"]
    np.testing.assert_array_equal(got, want)


def test_stateless_uniform_and_normal_distributions():
    with og.Graph().as_default():
        u = rm.stateless_uniform([N], [1, 2], minval=-1.0, maxval=3.0, dtype=og.float64)
        z = rm.stateless_normal([N], [3, 4], mean=1.0, stddev=2.0, dtype=og.float64)
        t = rm.stateless_truncated_normal([N], [5, 6], dtype=og.float64)
        u16 = rm.stateless_uniform([N], [1, 2], dtype=og.float16)
        i = rm.stateless_uniform([N], [1, 3], minval=2, maxval=12, dtype=og.int32)
        uv, zv, tv, u16v, iv = _run(u, z, t, u16, i)
    assert uv.min() >= -1.0 and uv.max() < 3.0
    assert ks_statistic(uv, lambda x: (x + 1.0) / 4.0) < KS_LIMIT
    assert ks_statistic(zv, lambda x: _normal_cdf((x - 1.0) / 2.0)) < KS_LIMIT
    assert abs(zv.mean() - 1.0) < 5 * 2.0 / math.sqrt(N)
    assert abs(zv.var() - 4.0) < 5 * 4.0 * math.sqrt(2.0 / N)    # var's standard error
    assert np.abs(tv).max() < 2.0
    mass = _normal_cdf(2.0) - _normal_cdf(-2.0)
    assert ks_statistic(tv, lambda x: (_normal_cdf(x) - _normal_cdf(-2.0)) / mass) < KS_LIMIT
    assert u16v.dtype == np.float16 and u16v.max() < 1.0
    assert iv.dtype == np.int32 and iv.min() >= 2 and iv.max() < 12
    stat, critical = chi_square_ok(np.bincount(iv - 2, minlength=10), np.full(10, 0.1))
    assert stat < critical


def test_stateless_discrete_distributions():
    logits = np.log(np.asarray([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]]))
    with og.Graph().as_default():
        c = rm.stateless_categorical(og.constant(logits), N, [8, 9], dtype=og.int32)
        b = rm.stateless_binomial([N], [1, 1], counts=12.0, probs=0.3, output_dtype=og.int64)
        p = rm.stateless_poisson([N], [2, 2], lam=6.0, dtype=og.float32)
        cv, bv, pv = _run(c, b, p)
    assert cv.shape == (2, N) and cv.dtype == np.int32
    for row in range(2):
        stat, critical = chi_square_ok(np.bincount(cv[row], minlength=4), np.exp(logits[row]))
        assert stat < critical
    pmf = [math.comb(12, k) * 0.3 ** k * 0.7 ** (12 - k) for k in range(13)]
    stat, critical = chi_square_ok(np.bincount(bv, minlength=13), pmf)
    assert stat < critical
    assert pv.dtype == np.float32
    counts = np.bincount(pv.astype(np.int64), minlength=31)[:31]
    stat, critical = chi_square_ok(counts, _poisson_pmf(6.0, range(31)))
    assert stat < critical


def test_stateless_gamma_distribution_and_gradient():
    with og.Graph().as_default():
        a = og.constant(np.asarray([0.7, 5.0]))
        # (seed [4, 4] gives K = 2.09 sqrt(n) for alpha 0.7, a 3e-4 chance event: the
        # sampler is right, 2e6 numpy draws give K = 0.92; one fixed seed per check)
        x = rm.stateless_gamma([N, 2], [4, 5], alpha=a, beta=[1.0, 4.0], dtype=og.float64)
        (ga,) = og.gradients(og.reduce_mean(x, axis=0), [a])
        xv, gav = _run(x, ga)
    for k, (alpha, rate) in enumerate([(0.7, 1.0), (5.0, 4.0)]):
        assert ks_statistic(xv[:, k], lambda t: special.igamma(alpha, t * rate)) < KS_LIMIT
    np.testing.assert_allclose(gav, [1.0, 0.25], rtol=0.03)   # d E[x] / d alpha = 1 / beta


# ----------------------------------------------------------------------- errors

def test_bad_arguments_are_named_errors():
    logits = np.zeros((2, 3))
    cases = [
        (lambda: rm.stateless_uniform([2], [1, 2, 3]), ShapeError, r"shape \[2\]"),
        (lambda: rm.stateless_uniform([2], [1.0, 2.0]), TypeError, "two ints"),
        (lambda: rm.stateless_normal([2], og.constant(np.asarray([1.0, 2.0]))), TypeError,
         "int32 or int64"),
        (lambda: rm.stateless_uniform([2], SEED, dtype=og.int32), ValueError, "maxval"),
        (lambda: rm.stateless_uniform([2], SEED, dtype=og.bool), TypeError, "dtype"),
        (lambda: rm.stateless_uniform([-1], SEED), ShapeError, "ints >= 0"),
        (lambda: rm.stateless_categorical(np.zeros(3), 2, SEED), ShapeError, "2-D"),
        (lambda: rm.stateless_categorical(logits, -1, SEED), ValueError, "num_samples"),
        (lambda: rm.stateless_categorical(logits, 2, SEED, dtype=og.float32), TypeError,
         "dtype"),
        (lambda: rm.stateless_poisson([2], SEED, og.constant(np.asarray(3, np.int32))),
         TypeError, "lam"),
        (lambda: rm.random_gamma([2], 1.0, dtype=og.int32), TypeError, "dtype"),
        (lambda: rm.random_gamma([2], og.constant(np.ones(2)), dtype=og.float32), TypeError,
         "alpha"),
        (lambda: rm.random_gamma([2], 1.0, seed=-1), ValueError, "seed"),
        (lambda: rm.random_gamma([2], 1.0, seed=1.5), TypeError, "seed"),
        (lambda: rm.random_poisson(1.0, [2], dtype=og.bool), TypeError, "dtype"),
        (lambda: rm.random_poisson(og.constant(np.ones(2, np.int32)), [2]), TypeError,
         "lam"),
    ]
    for build, error, message in cases:
        with og.Graph().as_default():
            with pytest.raises(error, match=message):
                build()


def test_failures_when_the_graph_runs_are_named():
    cases = [
        (lambda: rm.random_gamma([2], og.constant(np.asarray([1.0, -1.0], np.float32))), "alpha"),
        (lambda: rm.stateless_gamma([2], SEED, 0.0), "alpha"),
        (lambda: rm.random_poisson(-1.0, [2]), "lam"),
        (lambda: rm.stateless_binomial([2], SEED, 2.5, 0.5), "whole numbers"),
        (lambda: rm.stateless_uniform([2], SEED, minval=3, maxval=3, dtype=og.int64),
         "minval < maxval"),
        (lambda: rm.stateless_poisson([3], SEED, np.ones(2)), "broadcast"),
    ]
    for build, message in cases:
        with og.Graph().as_default():
            y = build()
            with pytest.raises((ExecutionError, ShapeError), match=message):
                og.Session().run(y)


# ------------------------------------------------- robustness: sizes and edge values

def test_outputs_beyond_the_size_limit_are_refused_while_building():
    # before: accepted, then numpy's MemoryError / "array is too big" when run
    from onegraph.ops.random_more import MAX_SAMPLE_ELEMENTS
    logits = np.zeros((2, 3))
    cases = [
        lambda: rm.random_gamma([10 ** 10], 1.0),
        # alpha's dims count too: 2**15 * 2**14 values
        lambda: rm.random_gamma([2 ** 15], np.ones(2 ** 14, np.float32)),
        lambda: rm.random_poisson(1.0, [2 ** 31]),
        lambda: rm.stateless_uniform([10 ** 5, 10 ** 5], SEED),
        lambda: rm.stateless_normal([2 ** 62, 2 ** 62], SEED),
        lambda: rm.stateless_truncated_normal([MAX_SAMPLE_ELEMENTS + 1], SEED),
        lambda: rm.stateless_binomial([2 ** 31, 2 ** 31], SEED, 5.0, 0.5),
        lambda: rm.stateless_poisson([10 ** 10], SEED, 1.0),
        lambda: rm.stateless_gamma([10 ** 10], SEED, 1.0),
        lambda: rm.stateless_categorical(logits, 2 ** 31, SEED),
    ]
    for build in cases:
        with og.Graph().as_default():
            with pytest.raises(ShapeError, match="MAX_SAMPLE_ELEMENTS"):
                build()
    with og.Graph().as_default():
        rm.stateless_uniform([MAX_SAMPLE_ELEMENTS], SEED)   # the limit itself builds


def test_a_shape_known_only_when_run_is_refused_before_allocating():
    with og.Graph().as_default():
        shape = og.placeholder(og.int64, [2])
        y = rm.stateless_normal(shape, SEED)
        z = rm.random_gamma(shape, 1.0)
        for t in (y, z):
            with pytest.raises(ShapeError, match="MAX_SAMPLE_ELEMENTS"):
                og.Session().run(t, {shape: np.array([10 ** 6, 10 ** 6])})


@pytest.mark.parametrize("op, rest, attrs", [
    ("RandomGamma", [np.float32(1.0)], {}),
    ("RandomPoisson", [np.float32(1.0)], {"dtype": 1}),
    ("StatelessRandomUniform", [np.array(SEED, np.int64)], {"dtype": 1}),
    ("StatelessRandomNormal", [np.array(SEED, np.int64)], {"dtype": 1}),
    ("StatelessTruncatedNormal", [np.array(SEED, np.int64)], {"dtype": 1}),
    ("StatelessRandomUniformInt", [np.array(SEED, np.int64), np.int64(0), np.int64(5)], {}),
    ("StatelessRandomBinomial", [np.array(SEED, np.int64), np.float64(5), np.float64(.5)],
     {"dtype": 6}),
    ("StatelessRandomPoisson", [np.array(SEED, np.int64), np.float64(1)], {"dtype": 6}),
    ("StatelessRandomGamma", [np.array(SEED, np.int64), np.float32(1)], {}),
])
def test_kernels_refuse_huge_shapes_before_allocating(op, rest, attrs):
    # before: ValueError "array is too big" / "iterator is too large" or MemoryError
    opdef = get_op(op, "onegraph")
    for dims in ([2 ** 31, 2 ** 31], [2 ** 62, 2 ** 62], [10 ** 10]):
        with pytest.raises(ShapeError, match=f"{op}: the output of shape"):
            opdef.kernel([np.array(dims, np.int64)] + rest, opdef.resolve_attrs(attrs),
                         None)


def test_memory_errors_within_the_limit_become_execution_errors():
    from onegraph.ops.random_more import memory_guarded

    def kernel(inputs, attrs, ctx):
        raise MemoryError("Unable to allocate 9 GiB")

    with pytest.raises(ExecutionError, match="Op: out of memory"):
        memory_guarded("Op", kernel)([], {}, None)


def test_scalar_poisson_and_binomial_outputs_are_arrays():
    # before: AttributeError "'int' object has no attribute 'astype'" (numpy gives a
    # Python int for a 0-d rate)
    with og.Graph().as_default():
        a = rm.random_poisson(3.0, [], dtype=og.int32, seed=1)
        b = rm.stateless_poisson([], SEED, 3.0)
        c = rm.stateless_binomial([], SEED, 4.0, 0.5)
        d = rm.random_poisson(np.float32(2.0), [], dtype=og.float32, seed=2)
        values = _run(a, b, c, d)
    for v, dt in zip(values, (np.int32, np.int32, np.int32, np.float32)):
        assert isinstance(v, np.ndarray) and v.shape == () and v.dtype == dt


def test_poisson_rates_beyond_numpys_sampler_use_the_normal_approximation():
    # before: ValueError "lam value too large" for lam >~ 9.2e18
    with og.Graph().as_default():
        x = rm.random_poisson(1e19, [N], dtype=og.float64, seed=3)
        y = rm.stateless_poisson([N], SEED, 1e12, dtype=og.int64)
        xv, yv = _run(x, y)
    for v, lam in ((xv, 1e19), (yv.astype(np.float64), 1e12)):
        # mean within 5 standard errors, spread sqrt(lam) within 5% (10 standard errors)
        assert abs(v.mean() - lam) < 5 * math.sqrt(lam / N)
        assert abs(v.std() / math.sqrt(lam) - 1) < 0.05
        assert np.all(v == np.round(v))


def test_a_huge_rate_leaves_the_other_draws_as_they_were():
    with og.Graph().as_default():
        y = rm.stateless_poisson([3], SEED, np.asarray([2.0, 1e15, 5.0]), dtype=og.int64)
        z = rm.stateless_poisson([3], SEED, np.asarray([2.0, 0.0, 5.0]), dtype=og.int64)
        yv, zv = _run(y, z)
    np.testing.assert_array_equal(yv[[0, 2]], zv[[0, 2]])
    assert abs(yv[1] - 1e15) < 10 * math.sqrt(1e15)


def test_poisson_and_binomial_refusals_are_named_when_run():
    cases = [
        (lambda: rm.random_poisson(np.inf, [2]), ExecutionError, "finite"),
        (lambda: rm.stateless_poisson([2], SEED, np.inf), ExecutionError, "finite"),
        (lambda: rm.random_poisson(1e10, [2], dtype=og.int32), ExecutionError,
         "does not fit the output dtype int32"),
        (lambda: rm.stateless_poisson([2], SEED, 1e19, dtype=og.int64), ExecutionError,
         "does not fit the output dtype int64"),
        (lambda: rm.stateless_binomial([2], SEED, 1e19, 0.5), ExecutionError,
         "whole numbers below 2\\*\\*63"),
        (lambda: rm.stateless_binomial([2], SEED, np.inf, 0.5), ExecutionError, "inf"),
        (lambda: rm.stateless_binomial([2], SEED, 6e9, 0.9), ExecutionError,
         "does not fit the output dtype int32"),
        (lambda: rm.stateless_binomial([2], SEED, 5.0, np.nan), ExecutionError, "NaN"),
    ]
    for build, error, message in cases:
        with og.Graph().as_default():
            y = build()
            with pytest.raises(error, match=message):
                og.Session().run(y)


def test_stateless_binomial_edges_follow_tensorflow():
    # TF's RandomBinomialFunctor: count <= 0 or prob <= 0 -> 0, prob >= 1 -> count,
    # prob NaN -> NaN (before: an ExecutionError for all of them)
    counts = np.asarray([-3.0, 0.0, 7.0, 7.0, 7.0, 7.0, -np.inf, np.inf])
    probs = np.asarray([0.5, 0.5, -0.25, 0.0, 1.0, 1.5, 0.5, 0.0])
    with og.Graph().as_default():
        y = rm.stateless_binomial([8], SEED, counts, probs, output_dtype=og.int64)
        z = rm.stateless_binomial([2], SEED, [5.0, np.nan], [np.nan, 0.5],
                                  output_dtype=og.float32)
        w = rm.stateless_binomial([2], SEED, 6e9, 0.5, output_dtype=og.int64)
        yv, zv, wv = _run(y, z, w)
    np.testing.assert_array_equal(yv, [0, 0, 0, 0, 7, 7, 0, 0])
    assert np.isnan(zv).all()
    assert np.all(np.abs(wv - 3e9) < 10 * math.sqrt(6e9 * 0.25))


def test_stateless_uniform_int_kernel_bounds():
    op = get_op("StatelessRandomUniformInt", "onegraph")
    seed = np.array(SEED, np.int64)
    with pytest.raises(ShapeError, match="integers of one dtype"):
        op.kernel([np.array([2], np.int64), seed, np.float64(1.5), np.int64(5)], {}, None)
    with pytest.raises(ShapeError, match="integers of one dtype"):
        op.kernel([np.array([2], np.int64), seed, np.int32(1), np.int64(5)], {}, None)
    # a uint64 range beyond int64 (before: ValueError "high is out of bounds for int64")
    lo, hi = np.uint64(2 ** 63), np.uint64(2 ** 64 - 1)
    (v,) = op.kernel([np.array([1000], np.int64), seed, lo, hi], {}, None)
    assert v.dtype == np.uint64 and np.all((v >= lo) & (v < hi))

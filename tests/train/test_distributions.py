"""og.distributions against TensorFlow's tf.compat.v1.distributions.

distributions_cases.py ran under TF; tools/record_tf_distributions.py stored the values,
static shapes, gradients or errors in data/tf1_distributions_reference.json. The same code
runs here under onegraph. Tolerances: rtol 1e-5 (float32) and 1e-10 (float64), atol 1e-6 /
1e-12 for values near zero. Errors must have TF's class and message; the stage is not
compared (TF folds asserts on constants at build time, og checks them at run time).
Samples are random, so they are checked by shape, dtype, moments, seeds and gradients.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og
from onegraph.train import distributions as dist_mod

from . import distributions_cases as cases

with open(os.path.join(os.path.dirname(__file__), "data",
                       "tf1_distributions_reference.json")) as _f:
    REFERENCE = json.load(_f)

D = getattr(og, "distributions", dist_mod.distributions)


class _Og:
    """onegraph as the cases see it, with og.distributions (until exported)."""

    distributions = D

    def __getattr__(self, name):
        return getattr(og, name)


OG = _Og()


def _values(rec):
    return np.array([np.nan if x is None else float(x) if isinstance(x, str) else x
                     for x in rec["v"]], dtype=np.float64).reshape(rec["shape"])


def _same(got, want, where):
    assert got["shape"] == want["shape"], (where, got["shape"], want["shape"])
    assert got["dtype"] == want["dtype"], (where, got["dtype"], want["dtype"])
    if want["dtype"].startswith("float"):
        rtol, atol = (1e-10, 1e-12) if want["dtype"] == "float64" else (1e-5, 1e-6)
        np.testing.assert_allclose(_values(got), _values(want), rtol=rtol, atol=atol,
                                   err_msg=where)
    else:
        assert got["v"] == want["v"], where


@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_case_matches_tensorflow(case):
    want = REFERENCE[case]
    got = cases.run(OG, case)
    if "error" in want:
        assert "error" in got, f"TF raised {want}; onegraph gave {str(got)[:300]}"
        # og's failed Assert op raises og.errors.ExecutionError where TF raises
        # InvalidArgumentError
        same = {"InvalidArgumentError": ("InvalidArgumentError", "ExecutionError")}
        assert got["error"] in same.get(want["error"], (want["error"],)), (got, want)
        assert want["message"].strip(" .") in got["message"], (got, want)
        return
    assert "error" not in got, got
    assert got["static"] == want["static"], (got["static"], want["static"])
    assert sorted(got["values"]) == sorted(want["values"])
    for key in want["values"]:
        _same(got["values"][key], want["values"][key], f"{case}.{key}")


# ------------------------------------------------------------------ sampling statistics
def _draw(d, n=20000, seed=5):
    with og.Session() as sess:
        return sess.run(d.sample(n, seed=seed))


@pytest.mark.parametrize("make,mean,var", [
    (lambda: D.Normal(1.5, 2.0), 1.5, 4.0),
    (lambda: D.Uniform(-1.0, 3.0), 1.0, 16.0 / 12),
    (lambda: D.Laplace(0.5, 1.5), 0.5, 2 * 1.5 ** 2),
    (lambda: D.Exponential(2.0), 0.5, 0.25),
    (lambda: D.Gamma(3.0, 2.0), 1.5, 0.75),
    (lambda: D.Beta(2.0, 3.0), 0.4, 0.04),
    (lambda: D.StudentT(5.0, 1.0, 2.0), 1.0, 4.0 * 5 / 3),
    (lambda: D.Bernoulli(probs=0.3, dtype=og.float32), 0.3, 0.21),
    (lambda: D.Categorical(probs=[0.2, 0.3, 0.5], dtype=og.float32), 1.3, 0.61),
])
def test_sample_moments(make, mean, var):
    x = _draw(make()).astype(np.float64)
    assert x.shape == (20000,)
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / x.size) + 1e-3
    assert abs(x.var() - var) < 0.06 * var


def test_vector_sample_moments():
    x = _draw(D.Dirichlet([1.0, 2.0, 3.0]), 20000)
    np.testing.assert_allclose(x.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-5)
    m = _draw(D.Multinomial(np.array([4.0, 2.0], np.float32), probs=[0.2, 0.8]), 5000)
    assert m.shape == (5000, 2, 2)
    np.testing.assert_array_equal(m.sum(-1), np.broadcast_to([4.0, 2.0], (5000, 2)))
    np.testing.assert_allclose(m.mean(0), [[0.8, 3.2], [0.4, 1.6]], atol=0.06)
    dm = _draw(D.DirichletMultinomial(6.0, [1.0, 3.0]), 5000)
    np.testing.assert_array_equal(dm.sum(-1), 6.0)
    np.testing.assert_allclose(dm.mean(0), [1.5, 4.5], atol=0.1)


def test_seeds_repeat_draws():
    d = D.Normal([0.0, 1.0], 2.0)
    with og.Session() as sess:
        a = sess.run(d.sample(4, seed=11))
    with og.Session() as sess:
        b = sess.run(d.sample(4, seed=11))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["normal", "uniform", "laplace"])
def test_reparameterized_sample_gradients(kind):
    """d(sample)/d(param) through sample(): samples are loc + scale * eps (or low +
    (high - low) * u), so the gradient is 1 for loc and eps = (x - loc) / scale."""
    a = og.constant(0.7, dtype=og.float64)
    b = og.constant(1.9, dtype=og.float64)
    d = {"normal": D.Normal, "uniform": D.Uniform, "laplace": D.Laplace}[kind](a, b)
    assert d.reparameterization_type == D.FULLY_REPARAMETERIZED
    x = d.sample(50, seed=3)
    ga, gb = og.gradients(og.reduce_sum(x), [a, b])
    with og.Session() as sess:
        xs, gav, gbv = sess.run([x, ga, gb])
    if kind == "uniform":
        u = (xs - 0.7) / 1.2
        np.testing.assert_allclose(gav, np.sum(1 - u), rtol=1e-9)
        np.testing.assert_allclose(gbv, np.sum(u), rtol=1e-9)
    else:
        np.testing.assert_allclose(gav, 50.0, rtol=1e-12)
        np.testing.assert_allclose(gbv, np.sum((xs - 0.7) / 1.9), rtol=1e-9)


def test_register_kl_rejects_duplicates_and_non_callables():
    with pytest.raises(ValueError, match="has already been registered"):
        D.RegisterKL(D.Normal, D.Normal)(lambda a, b, name=None: None)
    with pytest.raises(TypeError, match="must be callable"):
        D.RegisterKL(D.Normal, D.Laplace)(3)


def test_register_kl_subclass():
    class MyNormal(D.Normal):
        pass

    @D.RegisterKL(MyNormal, D.Laplace)
    def _kl(a, b, name=None):
        return og.constant(42.0)

    with og.Session() as sess:
        assert sess.run(D.kl_divergence(MyNormal(0., 1.), D.Laplace(0., 1.))) == 42.0
        # MyNormal || Normal falls back to Normal || Normal
        assert sess.run(D.kl_divergence(MyNormal(0., 1.), D.Normal(0., 1.))) == 0.0


def test_namespace_exports():
    assert {"Normal", "kl_divergence", "RegisterKL", "FULLY_REPARAMETERIZED",
            "DirichletMultinomial"} <= set(D.__all__)

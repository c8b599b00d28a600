"""TF1's scalar-event distributions: Normal, Uniform, Laplace, Exponential, Gamma, Beta,
StudentT and Bernoulli, with their registered KL divergences."""

from __future__ import annotations

import math

import numpy as np

import onegraph as og

from ..format import DType
from .distributions_base import (
    FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED, Distribution, RegisterKL)


def _np_dtype(dtype):
    return np.float64 if dtype == og.float64 else np.float32


def params_same_dtype(named: dict, name: str, checks=()):
    """Converts {arg: value} to tensors named by arg inside the name scope `name`, running
    `checks(tensors)` (assert ops) first when given; raises ValueError when the
    float dtypes differ and TypeError for a non-float parameter (TF's rule)."""
    with og.name_scope(name) as scope:
        raw = {k: og.convert_to_tensor(v) for k, v in named.items()}
        deps = list(checks(raw)) if checks else []
        with og.control_dependencies(deps):
            out = {k: og.identity(v, name=k) for k, v in raw.items()}
    dtypes = {t.dtype for t in out.values()}
    for key, t in out.items():
        if not t.dtype.is_floating:
            raise TypeError(f"Expected floating point type, got {t.dtype.name.lower()}. "
                            f"({key})")
    if len(dtypes) > 1:
        first = next(iter(out.values())).dtype
        for key, t in out.items():
            if t.dtype != first:
                raise ValueError(f"{t.name}, type={t.dtype.name.lower()} must be of the "
                                 f"same type ({first.name.lower()}).")
    return out, scope


def xlogy(a, x):
    """a * log(x), 0 where x == 0 (TF's xlogy), broadcasting a against x."""
    a_b = a * og.ones_like(x)
    x_b = x * og.ones_like(a)
    zero = og.equal(x_b, 0.)
    safe_x = og.where_v2(zero, og.ones_like(x_b), x_b)
    return og.where_v2(zero, og.zeros_like(a_b), a_b * og.log(safe_x))


def _shape(x):
    return og.shape(x, out_type=og.int32)


def _ndtr(x):
    """Standard normal cdf (TF's special_math.ndtr: erf near 0, erfc in the tails)."""
    half_sqrt_2 = 0.5 * math.sqrt(2.)
    w = x * half_sqrt_2
    z = og.abs(w)
    y = og.where_v2(z < half_sqrt_2, 1. + og.math.erf(w),
                 og.where_v2(w > 0., 2. - og.math.erfc(z), og.math.erfc(z)))
    return 0.5 * y


def _log_ndtr(x, series_order=3):
    """log of the standard normal cdf (TF's special_math.log_ndtr: an asymptotic series
    below the lower segment, -ndtr(-x) above the upper one)."""
    lower, upper = (-20., 8.) if x.dtype == og.float64 else (-10., 5.)
    safe_low = og.minimum(x, lower)
    x_2 = og.square(safe_low)
    even, odd, x_2n = 0., 0., x_2
    for n in range(1, series_order + 1):
        y = float(np.prod(np.arange(2 * n - 1, 0, -2))) / x_2n
        if n % 2:
            odd = odd + y
        else:
            even = even + y
        x_2n = x_2n * x_2
    log_scale = -0.5 * x_2 - og.log(-safe_low) - 0.5 * math.log(2. * math.pi)
    low_part = log_scale + og.log(1. + even - odd)
    return og.where_v2(x > upper, -_ndtr(-x),
                    og.where_v2(x > lower, og.log(_ndtr(og.maximum(x, lower))), low_part))


def _log_cdf_laplace(x):
    """log of the standard Laplace cdf (TF's special_math.log_cdf_laplace)."""
    lower = math.log(0.5) + x
    upper = og.log1p(-0.5 * og.exp(-og.abs(x)))
    return og.where_v2(x < 0., lower, upper)


def _sample_front(n, dist):
    return og.concat([_n1(n), dist.batch_shape_tensor()], 0)


def _n1(n):
    """The sample count (int or int32 tensor) as a 1-element int32 tensor."""
    return og.reshape(og.cast(og.convert_to_tensor(n), og.int32), [1])


class _LocScale(Distribution):
    """Shared shape logic for two-parameter families."""

    _pair = ("loc", "scale")

    def _batch_shape_tensor(self):
        a, b = (getattr(self, "_" + k) for k in self._pair)
        return og.broadcast_dynamic_shape(_shape(a), _shape(b))

    def _batch_shape(self):
        a, b = (getattr(self, "_" + k) for k in self._pair)
        return og.broadcast_static_shape(a.shape, b.shape)

    def _event_shape_tensor(self):
        return og.constant([], dtype=og.int32)

    def _event_shape(self):
        return og.TensorShape([])

    def _init_loc_scale(self, parameters, loc, scale, validate_args, allow_nan_stats, name):
        """Set up a reparameterized loc/scale family (Normal, Laplace): the two of one
        float dtype, scale checked positive with validate_args."""
        t, scope = params_same_dtype({"loc": loc, "scale": scale}, name,
                                     _positive("scale") if validate_args else None)
        self._loc, self._scale = t["loc"], t["scale"]
        Distribution.__init__(self, self._scale.dtype, FULLY_REPARAMETERIZED, validate_args,
                              allow_nan_stats, parameters, [self._loc, self._scale], scope)


def _positive(*keys):
    def checks(raw):
        return [og.assert_positive(raw[k]) for k in keys]
    return checks


class Normal(_LocScale):
    """Normal(loc, scale) (TF1's tf.distributions.Normal)."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="Normal"):
        """Raises TypeError/ValueError for non-float or mixed dtypes; with validate_args
        a non-positive scale fails at run time."""
        self._init_loc_scale(dict(locals()), loc, scale, validate_args, allow_nan_stats, name)

    loc = property(lambda self: self._loc, doc="The mean.")
    scale = property(lambda self: self._scale, doc="The standard deviation.")

    def _sample_n(self, n, seed=None):
        sampled = og.random_normal(_sample_front(n, self), dtype=self.dtype, seed=seed)
        return sampled * self._scale + self._loc

    def _z(self, x):
        with og.name_scope("standardize"):
            return (x - self._loc) / self._scale

    def _log_prob(self, x):
        return -0.5 * og.square(self._z(x)) - (
            0.5 * math.log(2. * math.pi) + og.log(self._scale))

    def _cdf(self, x):
        return _ndtr(self._z(x))

    def _log_cdf(self, x):
        return _log_ndtr(self._z(x))

    def _survival_function(self, x):
        return _ndtr(-self._z(x))

    def _log_survival_function(self, x):
        return _log_ndtr(-self._z(x))

    def _entropy(self):
        return 0.5 * math.log(2. * math.pi * math.e) + og.log(
            self._scale * og.ones_like(self._loc))

    def _mean(self):
        return self._loc * og.ones_like(self._scale)

    def _mode(self):
        return self._mean()

    def _stddev(self):
        return self._scale * og.ones_like(self._loc)

    def _quantile(self, p):
        with og.name_scope("reconstruct"):
            return og.math.ndtri(p) * self._scale + self._loc


class Laplace(_LocScale):
    """Laplace(loc, scale) (TF1's tf.distributions.Laplace)."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="Laplace"):
        """As Normal."""
        self._init_loc_scale(dict(locals()), loc, scale, validate_args, allow_nan_stats, name)

    loc = property(lambda self: self._loc, doc="The location.")
    scale = property(lambda self: self._scale, doc="The scale.")

    def _sample_n(self, n, seed=None):
        npt = _np_dtype(self.dtype)
        # the open interval (-1, 1): log1p(-|u|) must stay finite
        u = og.random_uniform(_sample_front(n, self), minval=np.nextafter(npt(-1.), npt(0.)),
                              maxval=1., dtype=self.dtype, seed=seed)
        return self._loc - self._scale * og.sign(u) * og.log1p(-og.abs(u))

    def _z(self, x):
        return (x - self._loc) / self._scale

    def _log_prob(self, x):
        return -og.abs(self._z(x)) - (math.log(2.) + og.log(self._scale))

    def _prob(self, x):
        return og.exp(self._log_prob(x))

    def _log_cdf(self, x):
        return _log_cdf_laplace(self._z(x))

    def _log_survival_function(self, x):
        return _log_cdf_laplace(-self._z(x))

    def _cdf(self, x):
        z = self._z(x)
        return 0.5 + 0.5 * og.sign(z) * (1. - og.exp(-og.abs(z)))

    def _entropy(self):
        return math.log(2.) + 1. + og.log(self._scale + og.zeros_like(self._loc))

    def _mean(self):
        return self._loc + og.zeros_like(self._scale)

    def _mode(self):
        return self._mean()

    def _stddev(self):
        return math.sqrt(2.) * self._scale + og.zeros_like(self._loc)


class Uniform(_LocScale):
    """Uniform(low, high) (TF1's tf.distributions.Uniform)."""

    _pair = ("low", "high")

    def __init__(self, low=0., high=1., validate_args=False, allow_nan_stats=True,
                 name="Uniform"):
        """With validate_args, low >= high fails at run time (TF's message)."""
        parameters = dict(locals())

        def checks(raw):
            return [og.assert_less(raw["low"], raw["high"],
                                   message="uniform not defined when low >= high.")]
        t, scope = params_same_dtype({"low": low, "high": high}, name,
                                     checks if validate_args else None)
        self._low, self._high = t["low"], t["high"]
        super().__init__(self._low.dtype, FULLY_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters, [self._low, self._high], scope)

    low = property(lambda self: self._low, doc="Lower boundary.")
    high = property(lambda self: self._high, doc="Upper boundary.")

    def range(self, name="range"):
        """high - low."""
        with self._scope(name):
            return self._high - self._low

    def _sample_n(self, n, seed=None):
        u = og.random_uniform(_sample_front(n, self), dtype=self.dtype, seed=seed)
        return self._low + self.range() * u

    def _prob(self, x):
        bx = x * og.ones(self.batch_shape_tensor(), dtype=x.dtype)
        inside = og.where_v2(og.logical_or(bx < self._low, bx >= self._high),
                          og.zeros_like(bx), og.ones_like(bx) / self.range())
        return og.where_v2(og.is_nan(bx), bx, inside)

    def _cdf(self, x):
        shape = og.broadcast_dynamic_shape(_shape(x), self.batch_shape_tensor())
        zeros = og.zeros(shape, dtype=self.dtype)
        ones = og.ones(shape, dtype=self.dtype)
        below = og.where_v2(x < self._low, zeros, (x * ones - self._low) / self.range())
        return og.where_v2(x >= self._high, ones, below)

    def _entropy(self):
        return og.log(self.range())

    def _mean(self):
        return (self._low + self._high) / 2.

    def _variance(self):
        return og.square(self.range()) / 12.

    def _stddev(self):
        return self.range() / math.sqrt(12.)


class Gamma(_LocScale):
    """Gamma(concentration, rate) (TF1's tf.distributions.Gamma)."""

    _pair = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True,
                 name="Gamma"):
        """With validate_args, non-positive parameters fail at run time."""
        parameters = dict(locals())
        t, scope = params_same_dtype(
            {"concentration": concentration, "rate": rate}, name,
            _positive("concentration", "rate") if validate_args else None)
        self._concentration, self._rate = t["concentration"], t["rate"]
        super().__init__(self._concentration.dtype, FULLY_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters, list(t.values()), scope)

    concentration = property(lambda self: self._concentration, doc="Shape parameter.")
    rate = property(lambda self: self._rate, doc="Rate parameter.")

    def _sample_n(self, n, seed=None):
        return og.random_gamma(_n1(n), self._concentration, beta=self._rate,
                               dtype=self.dtype, seed=seed)

    def _valid_sample(self, x):
        if not self.validate_args:
            return x
        with og.control_dependencies([og.assert_positive(x)]):
            return og.identity(x)

    def _log_prob(self, x):
        x = self._valid_sample(x)
        return (xlogy(self._concentration - 1., x) - self._rate * x) - (
            og.lgamma(self._concentration) - self._concentration * og.log(self._rate))

    def _cdf(self, x):
        x = self._valid_sample(x)
        return og.igamma(self._concentration, self._rate * x)

    def _entropy(self):
        c = self._concentration
        return c - og.log(self._rate) + og.lgamma(c) + (1. - c) * og.digamma(c)

    def _mean(self):
        return self._concentration / self._rate

    def _variance(self):
        return self._concentration / og.square(self._rate)

    def _stddev(self):
        return og.sqrt(self._concentration) / self._rate

    def _mode(self):
        mode = (self._concentration - 1.) / self._rate
        if self.allow_nan_stats:
            nan = og.fill(self.batch_shape_tensor(),
                          og.constant(np.nan, dtype=self.dtype), name="nan")
            return og.where_v2(self._concentration > 1., mode, nan)
        check = og.assert_less(og.ones([], self.dtype), self._concentration,
                               message="mode not defined when any concentration <= 1")
        with og.control_dependencies([check]):
            return og.identity(mode)


class Exponential(Gamma):
    """Exponential(rate) = Gamma(1, rate) (TF1's tf.distributions.Exponential)."""

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        """As Gamma with concentration 1."""
        parameters = dict(locals())
        with og.name_scope(name) as scope:
            rate_t = og.convert_to_tensor(rate)
        super().__init__(og.ones([], dtype=rate_t.dtype), rate_t, validate_args,
                         allow_nan_stats, scope)
        self._parameters = parameters
        self._name = scope

    def _log_survival_function(self, value):
        return self._log_prob(value) - og.log(self._rate)

    def _sample_n(self, n, seed=None):
        npt = _np_dtype(self.dtype)
        # (0, 1), not [0, 1): -log(u) must be finite
        u = og.random_uniform(og.concat([_n1(n), _shape(self._rate)], 0),
                              minval=np.finfo(npt).tiny, maxval=1., dtype=self.dtype,
                              seed=seed)
        return -og.log(u) / self._rate


class Beta(_LocScale):
    """Beta(concentration1, concentration0) (TF1's tf.distributions.Beta)."""

    _pair = ("concentration1", "concentration0")

    def __init__(self, concentration1=None, concentration0=None, validate_args=False,
                 allow_nan_stats=True, name="Beta"):
        """With validate_args, non-positive concentrations fail at run time (TF's
        message)."""
        parameters = dict(locals())

        def checks(raw):
            return [og.assert_positive(raw[k],
                                       message="Concentration parameter must be positive.")
                    for k in ("concentration1", "concentration0")]
        t, scope = params_same_dtype(
            {"concentration1": concentration1, "concentration0": concentration0}, name,
            checks if validate_args else None)
        self._concentration1, self._concentration0 = t["concentration1"], t["concentration0"]
        with og.name_scope(scope):
            self._total_concentration = self._concentration1 + self._concentration0
        super().__init__(self._total_concentration.dtype, FULLY_REPARAMETERIZED,
                         validate_args, allow_nan_stats, parameters, list(t.values()), scope)

    concentration1 = property(lambda self: self._concentration1, doc="alpha.")
    concentration0 = property(lambda self: self._concentration0, doc="beta.")
    total_concentration = property(lambda self: self._total_concentration,
                                   doc="concentration1 + concentration0.")

    def _sample_n(self, n, seed=None):
        ones = og.ones_like(self._total_concentration, dtype=self.dtype)
        g1 = og.random_gamma(_n1(n), ones * self._concentration1,
                             dtype=self.dtype, seed=seed)
        g0 = og.random_gamma(_n1(n), ones * self._concentration0,
                             dtype=self.dtype, seed=None if seed is None else seed + 7919)
        return g1 / (g1 + g0)

    def _valid_sample(self, x):
        if not self.validate_args:
            return x
        checks = [og.assert_positive(x, message="sample must be positive"),
                  og.assert_less(x, og.ones([], self.dtype),
                                 message="sample must be less than `1`.")]
        with og.control_dependencies(checks):
            return og.identity(x)

    def _log_normalization(self):
        return (og.lgamma(self._concentration1) + og.lgamma(self._concentration0)
                - og.lgamma(self._total_concentration))

    def _log_prob(self, x):
        x = self._valid_sample(x)
        unnorm = (xlogy(self._concentration1 - 1., x)
                  + (self._concentration0 - 1.) * og.log1p(-x))
        return unnorm - self._log_normalization()

    def _prob(self, x):
        return og.exp(self._log_prob(x))

    def _cdf(self, x):
        return og.betainc(self._concentration1, self._concentration0, x)

    def _log_cdf(self, x):
        return og.log(self._cdf(x))

    def _entropy(self):
        c1, c0, tot = self._concentration1, self._concentration0, self._total_concentration
        return (self._log_normalization() - (c1 - 1.) * og.digamma(c1)
                - (c0 - 1.) * og.digamma(c0) + (tot - 2.) * og.digamma(tot))

    def _mean(self):
        return self._concentration1 / self._total_concentration

    def _variance(self):
        return self._mean() * (1. - self._mean()) / (1. + self._total_concentration)

    def _mode(self):
        mode = (self._concentration1 - 1.) / (self._total_concentration - 2.)
        if self.allow_nan_stats:
            nan = og.fill(self.batch_shape_tensor(),
                          og.constant(np.nan, dtype=self.dtype), name="nan")
            ok = og.logical_and(self._concentration1 > 1., self._concentration0 > 1.)
            return og.where_v2(ok, mode, nan)
        one = og.ones([], dtype=self.dtype)
        checks = [og.assert_less(one, self._concentration1,
                                 message="Mode undefined for concentration1 <= 1."),
                  og.assert_less(one, self._concentration0,
                                 message="Mode undefined for concentration0 <= 1.")]
        with og.control_dependencies(checks):
            return og.identity(mode)


class StudentT(Distribution):
    """StudentT(df, loc, scale) (TF1's tf.distributions.StudentT)."""

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="StudentT"):
        """With validate_args, non-positive df fails at run time."""
        parameters = dict(locals())
        t, scope = params_same_dtype({"df": df, "loc": loc, "scale": scale}, name,
                                     _positive("df") if validate_args else None)
        self._df, self._loc, self._scale = t["df"], t["loc"], t["scale"]
        super().__init__(self._scale.dtype, FULLY_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters, list(t.values()), scope)

    df = property(lambda self: self._df, doc="Degrees of freedom.")
    loc = property(lambda self: self._loc, doc="Location.")
    scale = property(lambda self: self._scale, doc="Scale.")

    def _batch_shape_tensor(self):
        return og.broadcast_dynamic_shape(
            _shape(self._df),
            og.broadcast_dynamic_shape(_shape(self._loc), _shape(self._scale)))

    def _batch_shape(self):
        return og.broadcast_static_shape(
            self._df.shape, og.broadcast_static_shape(self._loc.shape, self._scale.shape))

    def _event_shape_tensor(self):
        return og.constant([], dtype=og.int32)

    def _event_shape(self):
        return og.TensorShape([])

    def _sample_n(self, n, seed=None):
        normal = og.random_normal(_sample_front(n, self), dtype=self.dtype, seed=seed)
        df = self._df * og.ones(self.batch_shape_tensor(), dtype=self.dtype)
        gamma = og.random_gamma(_n1(n), 0.5 * df, beta=0.5, dtype=self.dtype,
                                seed=None if seed is None else seed + 104729)
        return normal * og.rsqrt(gamma / df) * self._scale + self._loc

    def _log_prob(self, x):
        y = (x - self._loc) / self._scale
        unnorm = -0.5 * (self._df + 1.) * og.log1p(og.square(y) / self._df)
        norm = (og.log(og.abs(self._scale)) + 0.5 * og.log(self._df)
                + 0.5 * np.log(np.pi) + og.lgamma(0.5 * self._df)
                - og.lgamma(0.5 * (self._df + 1.)))
        return unnorm - norm

    def _cdf(self, x):
        y = (x - self._loc) / og.abs(self._scale)
        x_t = self._df / (og.square(y) + self._df)
        neg_cdf = 0.5 * og.betainc(0.5 * self._df, 0.5, x_t)
        return og.where_v2(y < 0., neg_cdf, 1. - neg_cdf)

    def _entropy(self):
        df = self._df * og.ones(self.batch_shape_tensor(), dtype=self.dtype)
        half = og.constant(0.5, dtype=self.dtype)
        # lbeta(df/2, 1/2) = lgamma(df/2) + lgamma(1/2) - lgamma((df+1)/2)
        lbeta = og.lgamma(0.5 * df) + og.lgamma(half) - og.lgamma(0.5 * (df + 1.))
        return (og.log(og.abs(self._scale)) + 0.5 * og.log(df) + lbeta
                + 0.5 * (df + 1.) * (og.digamma(0.5 * (df + 1.)) - og.digamma(0.5 * df)))

    def _mean(self):
        mean = self._loc * og.ones(self.batch_shape_tensor(), dtype=self.dtype)
        return self._nan_below(mean, "mean not defined for components of df <= 1")

    def _nan_below(self, value, message):
        if self.allow_nan_stats:
            nan = og.fill(self.batch_shape_tensor(),
                          og.constant(np.nan, dtype=self.dtype), name="nan")
            return og.where_v2(self._df > og.ones(self.batch_shape_tensor(), self.dtype),
                            value, nan)
        check = og.assert_less(og.ones([], dtype=self.dtype), self._df, message=message)
        with og.control_dependencies([check]):
            return og.identity(value)

    def _variance(self):
        denom = og.where_v2(self._df > 2., self._df - 2., og.ones_like(self._df))
        var = (og.ones(self.batch_shape_tensor(), dtype=self.dtype)
               * og.square(self._scale) * self._df / denom)
        inf = og.fill(self.batch_shape_tensor(), og.constant(np.inf, dtype=self.dtype))
        two = og.fill(self.batch_shape_tensor(), og.constant(2., dtype=self.dtype))
        defined = og.where_v2(self._df > two, var, inf)
        return self._nan_below(defined, "variance not defined for components of df <= 1")

    def _mode(self):
        return og.identity(self._loc)


class Bernoulli(Distribution):
    """Bernoulli(logits= or probs=) (TF1's tf.distributions.Bernoulli)."""

    def __init__(self, logits=None, probs=None, dtype=DType.INT32, validate_args=False,
                 allow_nan_stats=True, name="Bernoulli"):
        """Raises ValueError unless exactly one of logits/probs is given (TF's
        message)."""
        parameters = dict(locals())
        if (logits is None) == (probs is None):
            raise ValueError("Must pass probs or logits, but not both.")
        with og.name_scope(name) as scope:
            if probs is None:
                self._logits = og.identity(og.convert_to_tensor(logits), name="logits")
                self._probs = og.sigmoid(self._logits, name="probs")
            else:
                p = og.convert_to_tensor(probs)
                if validate_args:
                    checks = [og.assert_non_negative(p), og.assert_less_equal(
                        p, og.ones([], p.dtype), message="probs has components greater "
                                                         "than 1.")]
                    with og.control_dependencies(checks):
                        p = og.identity(p)
                self._probs = og.identity(p, name="probs")
                self._logits = og.subtract(og.log(self._probs), og.log1p(-self._probs),
                                           name="logits")
        super().__init__(dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._logits, self._probs], scope)

    logits = property(lambda self: self._logits, doc="Log-odds of a 1.")
    probs = property(lambda self: self._probs, doc="Probability of a 1.")

    def _batch_shape_tensor(self):
        return _shape(self._logits)

    def _batch_shape(self):
        return self._logits.shape

    def _event_shape_tensor(self):
        return og.constant([], dtype=og.int32)

    def _event_shape(self):
        return og.TensorShape([])

    def _convert(self, value):
        return og.convert_to_tensor(value)

    def _sample_n(self, n, seed=None):
        shape = _sample_front(n, self)
        u = og.random_uniform(shape, seed=seed, dtype=self._probs.dtype)
        return og.cast(og.less(u, self._probs), self.dtype)

    def _log_prob(self, event):
        event = og.cast(event, self._logits.dtype)
        logits = og.ones_like(event) * self._logits
        event = og.ones_like(self._logits) * event
        return -og.nn.sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self):
        lg = self._logits
        return -lg * (og.sigmoid(lg) - 1.) + og.nn.softplus(-lg)

    def _mean(self):
        return og.identity(self._probs)

    def _variance(self):
        return self._mean() * (1. - self._probs)

    def _mode(self):
        return og.cast(self._probs > 0.5, self.dtype)


# ---------------------------------------------------------------------- KL divergences
@RegisterKL(Normal, Normal)
def _kl_normal_normal(a, b, name=None):
    with og.name_scope(name or "kl_normal_normal"):
        one = og.constant(1, dtype=a.dtype)
        two = og.constant(2, dtype=a.dtype)
        half = og.constant(0.5, dtype=a.dtype)
        s_a_sq, s_b_sq = og.square(a.scale), og.square(b.scale)
        ratio = s_a_sq / s_b_sq
        return (og.squared_difference(a.loc, b.loc) / (two * s_b_sq)
                + half * (ratio - one - og.log(ratio)))


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    with og.name_scope(name or "kl_bernoulli_bernoulli"):
        d0 = og.nn.softplus(-b.logits) - og.nn.softplus(-a.logits)
        d1 = og.nn.softplus(b.logits) - og.nn.softplus(a.logits)
        return og.sigmoid(a.logits) * d0 + og.sigmoid(-a.logits) * d1


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(g0, g1, name=None):
    with og.name_scope(name or "kl_gamma_gamma"):
        c0, c1, r0, r1 = g0.concentration, g1.concentration, g0.rate, g1.rate
        return ((c0 - c1) * og.digamma(c0) + og.lgamma(c1) - og.lgamma(c0)
                + c1 * og.log(r0) - c1 * og.log(r1) + c0 * (r1 / r0 - 1.))


@RegisterKL(Beta, Beta)
def _kl_beta_beta(d1, d2, name=None):
    with og.name_scope(name or "kl_beta_beta"):
        def delta(fn, attr):
            return fn(getattr(d2, attr)) - fn(getattr(d1, attr))
        return (delta(og.lgamma, "concentration1") + delta(og.lgamma, "concentration0")
                - delta(og.lgamma, "total_concentration")
                + (d1.concentration1 - d2.concentration1) * og.digamma(d1.concentration1)
                + (d1.concentration0 - d2.concentration0) * og.digamma(d1.concentration0)
                - (d1.total_concentration - d2.total_concentration)
                * og.digamma(d1.total_concentration))

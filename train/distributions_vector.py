"""TF1's categorical-family distributions: Categorical, Dirichlet, Multinomial and
DirichletMultinomial, with the Categorical and Dirichlet KL divergences."""

from __future__ import annotations

import numpy as np

import onegraph as og

from ..format import DType
from .distributions_base import (
    FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED, Distribution, RegisterKL)
from .distributions_scalar import params_same_dtype, xlogy


def _shape(x):
    return og.shape(x, out_type=og.int32)


def _static_int(n, what):
    """A Python int from `n` (int or int-valued array); raises NotImplementedError for
    a tensor: og.multinomial needs the number of draws when the graph is built."""
    if isinstance(n, og.Tensor):
        raise NotImplementedError(f"{what}: sampling needs a Python (static) count in "
                                  f"onegraph; got the tensor {n.name}")
    return int(np.max(np.asarray(n)))


def _lbeta(x):
    return og.reduce_sum(og.lgamma(x), -1) - og.lgamma(og.reduce_sum(x, -1))


def _logits_probs(logits, probs, validate_args, multidimensional):
    if (logits is None) == (probs is None):
        raise ValueError("Must pass probs or logits, but not both.")
    if probs is None:
        logits = og.identity(og.convert_to_tensor(logits), name="logits")
        if not logits.dtype.is_floating:
            raise TypeError(f"logits must be floating point, got {logits.dtype.name}")
        probs = og.nn.softmax(logits, name="probs") if multidimensional else og.sigmoid(
            logits, name="probs")
        return logits, probs
    probs = og.convert_to_tensor(probs)
    if validate_args:
        one = og.ones([], probs.dtype)
        checks = [og.assert_non_negative(probs, message="probs has negative components."),
                  og.assert_near(og.reduce_sum(probs, -1), one,
                                 message="probs does not sum to 1.")]
        with og.control_dependencies(checks):
            probs = og.identity(probs)
    probs = og.identity(probs, name="probs")
    return og.log(probs, name="logits"), probs


class Categorical(Distribution):
    """Categorical over {0, ..., K-1} (TF1's tf.distributions.Categorical)."""

    def __init__(self, logits=None, probs=None, dtype=DType.INT32, validate_args=False,
                 allow_nan_stats=True, name="Categorical"):
        """Raises ValueError unless exactly one of logits/probs is given."""
        parameters = dict(locals())
        with og.name_scope(name) as scope:
            self._logits, self._probs = _logits_probs(logits, probs, validate_args, True)
            if self._logits.shape.ndims is not None and self._logits.shape.ndims < 1:
                raise ValueError("Logits must have at least 1 dimension.")
            self._event_size = _shape(self._logits)[-1]
            self._batch_rank = self._logits.shape.ndims - 1
        super().__init__(dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         parameters, [self._logits, self._probs], scope)

    logits = property(lambda self: self._logits, doc="Unnormalized log probabilities.")
    probs = property(lambda self: self._probs, doc="Class probabilities.")
    event_size = property(lambda self: self._event_size, doc="K, as a tensor.")

    def _batch_shape_tensor(self):
        return _shape(self._logits)[:-1]

    def _batch_shape(self):
        return self._logits.shape[:-1]

    def _event_shape_tensor(self):
        return og.constant([], dtype=og.int32)

    def _event_shape(self):
        return og.TensorShape([])

    def _convert(self, value):
        value = og.convert_to_tensor(value)
        if not (value.dtype.is_integer or value.dtype.is_floating):
            raise TypeError(f"`value` should have integer `dtype` or `self.dtype` "
                            f"({self.dtype.name.lower()})")
        return og.cast(value, og.int32) if value.dtype.is_floating else value

    def _broadcast(self, k, params):
        params = params * og.ones_like(og.expand_dims(k, -1), dtype=params.dtype)
        k = k * og.ones(_shape(params)[:-1], dtype=k.dtype)
        return k, params

    def _sample_n(self, n, seed=None):
        n = _static_int(n, "Categorical.sample")
        logits_2d = og.reshape(self._logits, og.stack([-1, self._event_size]))
        out = og.int64 if self.dtype in (og.int64, og.float64) else og.int32
        draws = og.multinomial(logits_2d, n, seed=seed, output_dtype=out)
        draws = og.reshape(og.transpose(draws),
                           og.concat([[n], self.batch_shape_tensor()], 0))
        return og.cast(draws, self.dtype)

    def _log_prob(self, k):
        k, logits = self._broadcast(k, self._logits)
        return -og.nn.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _cdf(self, k):
        k, probs = self._broadcast(k, self._probs)
        flat_p = og.reshape(probs, og.stack([-1, self._event_size]))
        flat_k = og.reshape(k, [-1])
        mask = og.sequence_mask(flat_k, self._event_size)
        summed = og.reduce_sum(og.where_v2(mask, flat_p, og.zeros_like(flat_p)), -1)
        return og.reshape(summed, _shape(k))

    def _entropy(self):
        return -og.reduce_sum(og.nn.log_softmax(self._logits) * self._probs, -1)

    def _mode(self):
        return og.cast(og.argmax(self._logits, axis=self._batch_rank), self.dtype)


class _Concentrated:
    """Shapes and parameters of the distributions over the last axis of a
    `_concentration` (alpha), whose sum is `_total_concentration`."""

    concentration = property(lambda self: self._concentration, doc="alpha.")
    total_concentration = property(lambda self: self._total_concentration,
                                   doc="Sum of the last axis of concentration.")

    def _batch_shape_tensor(self):
        return _shape(self._total_concentration)

    def _batch_shape(self):
        return self._total_concentration.shape

    def _event_shape_tensor(self):
        return _shape(self._concentration)[-1:]

    def _event_shape(self):
        return self._concentration.shape.with_rank_at_least(1)[-1:]


class Dirichlet(_Concentrated, Distribution):
    """Dirichlet(concentration) over the simplex (TF1's tf.distributions.Dirichlet)."""

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True,
                 name="Dirichlet"):
        """With validate_args, non-positive concentration fails at run time."""
        parameters = dict(locals())

        def checks(raw):
            c = raw["concentration"]
            return [og.assert_positive(c, message="Concentration parameter must be "
                                                  "positive.")]
        t, scope = params_same_dtype({"concentration": concentration}, name,
                                     checks if validate_args else None)
        self._concentration = t["concentration"]
        with og.name_scope(scope):
            self._total_concentration = og.reduce_sum(self._concentration, -1)
        super().__init__(self._concentration.dtype, FULLY_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters, [self._concentration], scope)

    def _sample_n(self, n, seed=None):
        g = og.random_gamma(og.reshape(og.convert_to_tensor(n), [1]), self._concentration,
                            dtype=self.dtype, seed=seed)
        return g / og.reduce_sum(g, -1, keepdims=True)

    def _valid_sample(self, x):
        if not self.validate_args:
            return x
        checks = [og.assert_positive(x, message="samples must be positive"),
                  og.assert_near(og.ones([], self.dtype), og.reduce_sum(x, -1),
                                 message="sample last-dimension must sum to `1`")]
        with og.control_dependencies(checks):
            return og.identity(x)

    def _log_prob(self, x):
        x = self._valid_sample(x)
        return (og.reduce_sum(xlogy(self._concentration - 1., x), -1)
                - _lbeta(self._concentration))

    def _prob(self, x):
        return og.exp(self._log_prob(x))

    def _k(self):
        return og.cast(self.event_shape_tensor()[0], self.dtype)

    def _entropy(self):
        c, tot = self._concentration, self._total_concentration
        return (_lbeta(c) + (tot - self._k()) * og.digamma(tot)
                - og.reduce_sum((c - 1.) * og.digamma(c), -1))

    def _mean(self):
        return self._concentration / og.expand_dims(self._total_concentration, -1)

    def _variance(self):
        scale = og.rsqrt(1. + og.expand_dims(self._total_concentration, -1))
        x = scale * self._mean()
        return x * (scale - x)

    def _mode(self):
        mode = (self._concentration - 1.) / (
            og.expand_dims(self._total_concentration, -1) - self._k())
        if self.allow_nan_stats:
            nan = og.fill(_shape(mode), og.constant(np.nan, dtype=self.dtype), name="nan")
            ok = og.reduce_all(self._concentration > 1., axis=-1)
            return og.where_v2(og.expand_dims(ok, -1) & og.ones_like(mode, dtype=og.bool),
                            mode, nan)
        check = og.assert_less(og.ones([], self.dtype), self._concentration,
                               message="Mode undefined when any concentration <= 1")
        with og.control_dependencies([check]):
            return og.identity(mode)


def _log_combinations(n, counts):
    return og.lgamma(n + 1.) - og.reduce_sum(og.lgamma(counts + 1.), -1)


class _CountsBase(Distribution):
    """Shared total_count handling and sample checks for the count distributions."""

    def _valid_sample(self, counts):
        if not self.validate_args:
            return counts
        checks = [og.assert_non_negative(counts),
                  og.assert_equal(self._total_count, og.reduce_sum(counts, -1),
                                  message="counts must sum to `self.total_count`")]
        with og.control_dependencies(checks):
            return og.identity(counts)

    def _count_draws(self, logits_2d, n, seed, counts):
        """n draws per row of `logits_2d`, each a vector of counts summing to `counts`
        (per row): a fixed number of categorical draws, those past the row's count
        masked out."""
        most = _static_int(self._raw_total_count, type(self).__name__ + ".sample")
        k = _shape(logits_2d)[-1]
        draws = og.multinomial(logits_2d, n * most, seed=seed)  # [rows, n*most]
        draws = og.reshape(draws, og.stack([-1, n, most]))
        keep = og.sequence_mask(og.cast(og.reshape(counts, [-1]), og.int32), most,
                                dtype=self.dtype)  # [rows, most]
        hot = og.one_hot(draws, k, dtype=self.dtype) * og.expand_dims(
            og.expand_dims(keep, 1), -1)
        return og.reduce_sum(hot, -2)  # [rows, n, k]


class Multinomial(_CountsBase):
    """Multinomial(total_count, logits= or probs=) (TF1's tf.distributions.Multinomial)."""

    def __init__(self, total_count, logits=None, probs=None, validate_args=False,
                 allow_nan_stats=True, name="Multinomial"):
        """Raises ValueError unless exactly one of logits/probs is given."""
        parameters = dict(locals())
        self._raw_total_count = total_count
        with og.name_scope(name) as scope:
            tc = og.convert_to_tensor(total_count)
            self._logits, self._probs = _logits_probs(logits, probs, validate_args, True)
            if not tc.dtype.is_floating:
                tc = og.cast(tc, self._probs.dtype)
            if validate_args:
                with og.control_dependencies([og.assert_non_negative(tc)]):
                    tc = og.identity(tc)
            self._total_count = og.identity(tc, name="total_count")
            self._mean_val = og.expand_dims(self._total_count, -1) * self._probs
        super().__init__(self._probs.dtype, NOT_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters,
                         [self._total_count, self._logits, self._probs], scope)

    total_count = property(lambda self: self._total_count, doc="Number of trials.")
    logits = property(lambda self: self._logits, doc="Log-probabilities per class.")
    probs = property(lambda self: self._probs, doc="Probabilities per class.")

    def _batch_shape_tensor(self):
        return _shape(self._mean_val)[:-1]

    def _batch_shape(self):
        return self._mean_val.shape.with_rank_at_least(1)[:-1]

    def _event_shape_tensor(self):
        return _shape(self._mean_val)[-1:]

    def _event_shape(self):
        return self._mean_val.shape.with_rank_at_least(1)[-1:]

    def _sample_n(self, n, seed=None):
        n = _static_int(n, "Multinomial.sample")
        k = self.event_shape_tensor()[0]
        counts = og.ones_like(self._mean_val[..., 0]) * self._total_count
        logits = og.expand_dims(og.ones_like(counts), -1) * self._logits
        x = self._count_draws(og.reshape(logits, og.stack([-1, k])), n, seed, counts)
        x = og.transpose(x, [1, 0, 2])
        return og.reshape(x, og.concat([[n], self.batch_shape_tensor(), og.reshape(k, [1])], 0))

    def _log_prob(self, counts):
        counts = self._valid_sample(counts)
        return (og.reduce_sum(counts * og.nn.log_softmax(self._logits), -1)
                + _log_combinations(self._total_count, counts))

    def _mean(self):
        return og.identity(self._mean_val)

    def _variance(self):
        p = self._probs * og.expand_dims(og.ones_like(self._total_count), -1)
        return self._mean_val - self._mean_val * p


class DirichletMultinomial(_Concentrated, _CountsBase):
    """Dirichlet-compound multinomial (TF1's tf.distributions.DirichletMultinomial)."""

    def __init__(self, total_count, concentration, validate_args=False,
                 allow_nan_stats=True, name="DirichletMultinomial"):
        """With validate_args, non-positive concentration fails at run time."""
        parameters = dict(locals())
        self._raw_total_count = total_count

        def checks(raw):
            return [og.assert_positive(raw["concentration"],
                                       message="Concentration parameter must be positive.")]
        t, scope = params_same_dtype({"total_count": total_count,
                                      "concentration": concentration}, name,
                                     checks if validate_args else None)
        self._total_count, self._concentration = t["total_count"], t["concentration"]
        with og.name_scope(scope):
            self._total_concentration = og.reduce_sum(self._concentration, -1)
        super().__init__(self._concentration.dtype, NOT_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters, list(t.values()), scope)

    total_count = property(lambda self: self._total_count, doc="Number of trials.")
    def _sample_n(self, n, seed=None):
        n = _static_int(n, "DirichletMultinomial.sample")
        k = self.event_shape_tensor()[0]
        conc = self._concentration * og.expand_dims(
            og.ones_like(self._total_count), -1)
        logits = og.log(og.random_gamma([n], conc, dtype=self.dtype, seed=seed))
        counts = og.ones_like(self._total_concentration) * self._total_count
        rows = og.reshape(og.transpose(og.reshape(logits, og.concat(
            [[n, -1], og.reshape(k, [1])], 0)), [1, 0, 2]), og.stack([-1, k]))
        # one categorical draw set per (batch member, sample): a single sample each
        x = self._count_draws(rows, 1, None if seed is None else seed + 31,
                              og.reshape(og.tile(og.reshape(counts, [-1, 1]), [1, n]), [-1]))
        x = og.transpose(og.reshape(x, og.stack([-1, n, k])), [1, 0, 2])
        return og.reshape(x, og.concat([[n], self.batch_shape_tensor(), og.reshape(k, [1])], 0))

    def _log_prob(self, counts):
        counts = self._valid_sample(counts)
        return (_lbeta(self._concentration + counts) - _lbeta(self._concentration)
                + _log_combinations(self._total_count, counts))

    def _prob(self, counts):
        return og.exp(self._log_prob(counts))

    def _mean(self):
        return og.expand_dims(self._total_count, -1) * (
            self._concentration / og.expand_dims(self._total_concentration, -1))

    def _variance(self):
        c0 = og.expand_dims(self._total_concentration, -1)
        n = og.expand_dims(self._total_count, -1)
        scale = og.sqrt((1. + c0 / n) / (1. + c0))
        x = scale * self._mean()
        return x * (n * scale - x)


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a, b, name=None):
    with og.name_scope(name or "kl_categorical_categorical"):
        delta = og.nn.log_softmax(a.logits) - og.nn.log_softmax(b.logits)
        return og.reduce_sum(og.nn.softmax(a.logits) * delta, -1)


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(d1, d2, name=None):
    with og.name_scope(name or "kl_dirichlet_dirichlet"):
        c1, c2 = d1.concentration, d2.concentration
        digamma_diff = og.digamma(c1) - og.expand_dims(og.digamma(og.reduce_sum(c1, -1)), -1)
        return (og.reduce_sum((c1 - c2) * digamma_diff, -1) - _lbeta(c1) + _lbeta(c2))

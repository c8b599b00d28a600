"""TF1's tf.distributions base: Distribution, ReparameterizationType, kl_divergence, RegisterKL.

A Distribution subclass supplies `_batch_shape`, `_batch_shape_tensor`, `_event_shape`,
`_event_shape_tensor` and whichever of `_log_prob`, `_prob`, `_cdf`, ... it has; the public
methods open TF's name scopes, convert their argument to the distribution's dtype and fall
back between related methods the way TF does (prob = exp(log_prob), stddev = sqrt(variance)).
"""

from __future__ import annotations

import numpy as np

import onegraph as og


class ReparameterizationType:
    """Whether samples are a differentiable function of the parameters (TF's class)."""

    def __init__(self, rep_type: str):
        self._rep_type = rep_type

    def __repr__(self):
        return f"<Reparameterization Type: {self._rep_type}>"

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def as_shape_tensor(value, name="sample_shape"):
    """`value` (int, list, tuple or int tensor) as an int32 1-D tensor; raises TypeError
    for a non-integer tensor."""
    if isinstance(value, og.Tensor):
        if not value.dtype.is_integer:
            raise TypeError(f"{name} must be an integer tensor, got {value.dtype.name}")
        value = og.cast(value, og.int32)
        return og.reshape(value, [-1]) if value.shape.ndims == 0 else value
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        if arr.size:
            raise TypeError(f"{name} must hold integers, got {value!r}")
        arr = arr.astype(np.int32)
    return og.constant(arr.reshape(-1).astype(np.int32), name=name)


class Distribution:
    """TF1's tf.distributions.Distribution: the public API over the subclass hooks."""

    def __init__(self, dtype, reparameterization_type, validate_args, allow_nan_stats,
                 parameters=None, graph_parents=None, name=None):
        """Stores the common attributes; raises TypeError for a non-bool flag."""
        for flag, value in (("validate_args", validate_args),
                            ("allow_nan_stats", allow_nan_stats)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{flag} must be a Python bool, got {value!r}")
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._validate_args = bool(validate_args)
        self._allow_nan_stats = bool(allow_nan_stats)
        params = dict(parameters or {})
        params.pop("self", None)
        params.pop("__class__", None)
        self._parameters = params
        self._graph_parents = list(graph_parents or [])
        self._name = name if name else type(self).__name__ + "/"

    # ------------------------------------------------------------------ attributes
    @property
    def name(self):
        """The name scope the distribution was built in."""
        return self._name

    @property
    def dtype(self):
        """The dtype of samples."""
        return self._dtype

    @property
    def parameters(self):
        """The constructor's arguments, as a dict."""
        return {k: v for k, v in self._parameters.items() if not k.startswith("_")}

    @property
    def reparameterization_type(self):
        """FULLY_REPARAMETERIZED or NOT_REPARAMETERIZED."""
        return self._reparameterization_type

    @property
    def allow_nan_stats(self):
        """Whether undefined statistics give NaN (True) or raise (False)."""
        return self._allow_nan_stats

    @property
    def validate_args(self):
        """Whether arguments are checked at run time."""
        return self._validate_args

    def copy(self, **override_parameters_kwargs):
        """A new instance of the same class with some constructor arguments replaced."""
        params = dict(self.parameters, **override_parameters_kwargs)
        return type(self)(**params)

    def _scope(self, name, values=()):
        return og.name_scope(self.name + name + "/")

    # ------------------------------------------------------------------ shapes
    def batch_shape_tensor(self, name="batch_shape_tensor"):
        """The batch shape as an int32 tensor."""
        with self._scope(name):
            static = self.batch_shape
            if static.is_fully_defined():
                return og.constant(np.array(static.as_list(), np.int32), name="batch_shape")
            return self._batch_shape_tensor()

    @property
    def batch_shape(self):
        """The static batch shape (a TensorShape, possibly partly unknown)."""
        return og.TensorShape(self._batch_shape())

    def event_shape_tensor(self, name="event_shape_tensor"):
        """The event shape as an int32 tensor."""
        with self._scope(name):
            static = self.event_shape
            if static.is_fully_defined():
                return og.constant(np.array(static.as_list(), np.int32), name="event_shape")
            return self._event_shape_tensor()

    @property
    def event_shape(self):
        """The static event shape."""
        return og.TensorShape(self._event_shape())

    def is_scalar_event(self, name="is_scalar_event"):
        """A bool tensor: whether the event shape is []."""
        with self._scope(name):
            return og.constant(self.event_shape.ndims == 0, dtype=og.bool)

    def is_scalar_batch(self, name="is_scalar_batch"):
        """A bool tensor: whether the batch shape is []."""
        with self._scope(name):
            return og.constant(self.batch_shape.ndims == 0, dtype=og.bool)

    # ------------------------------------------------------------------ sampling
    def sample(self, sample_shape=(), seed=None, name="sample"):
        """Samples of shape sample_shape + batch_shape + event_shape."""
        with self._scope(name):
            shape_t = as_shape_tensor(sample_shape)
            # a Python count where known: og.multinomial needs it when building
            n = (og.reduce_prod(shape_t) if isinstance(sample_shape, og.Tensor)
                 else int(np.prod(np.asarray(sample_shape, dtype=np.int64))))
            samples = self._sample_n(n, seed)
            batch_event = og.shape(samples, out_type=og.int32)[1:]
            out = og.reshape(samples, og.concat([shape_t, batch_event], 0))
            if not isinstance(sample_shape, og.Tensor):
                static = og.TensorShape([int(d) for d in np.asarray(
                    sample_shape, dtype=np.int64).reshape(-1)])
                out.set_shape(static.concatenate(self.batch_shape).concatenate(
                    self.event_shape))
            return out

    # ------------------------------------------------------------------ densities
    def _convert(self, value):
        return og.convert_to_tensor(value, dtype=self.dtype)

    def _has(self, method):
        return getattr(type(self), method, None) is not getattr(Distribution, method, None)

    def log_prob(self, value, name="log_prob"):
        """Log probability density/mass at `value`."""
        with self._scope(name):
            value = self._convert(value)
            if self._has("_log_prob"):
                return self._log_prob(value)
            if self._has("_prob"):
                return og.log(self._prob(value))
            raise NotImplementedError(f"log_prob is not implemented: {type(self).__name__}")

    def prob(self, value, name="prob"):
        """Probability density/mass at `value`."""
        with self._scope(name):
            value = self._convert(value)
            if self._has("_prob"):
                return self._prob(value)
            if self._has("_log_prob"):
                return og.exp(self._log_prob(value))
            raise NotImplementedError(f"prob is not implemented: {type(self).__name__}")

    def log_cdf(self, value, name="log_cdf"):
        """Log of the cumulative distribution function at `value`."""
        with self._scope(name):
            value = self._convert(value)
            if self._has("_log_cdf"):
                return self._log_cdf(value)
            if self._has("_cdf"):
                return og.log(self._cdf(value))
            raise NotImplementedError(f"log_cdf is not implemented: {type(self).__name__}")

    def cdf(self, value, name="cdf"):
        """Cumulative distribution function at `value`."""
        with self._scope(name):
            value = self._convert(value)
            if self._has("_cdf"):
                return self._cdf(value)
            if self._has("_log_cdf"):
                return og.exp(self._log_cdf(value))
            raise NotImplementedError(f"cdf is not implemented: {type(self).__name__}")

    def log_survival_function(self, value, name="log_survival_function"):
        """log(1 - cdf(value))."""
        with self._scope(name):
            value = self._convert(value)
            if self._has("_log_survival_function"):
                return self._log_survival_function(value)
            if self._has("_survival_function"):
                return og.log(self._survival_function(value))
            if self._has("_cdf"):
                return og.log1p(-self._cdf(value))
            raise NotImplementedError(
                f"log_survival_function is not implemented: {type(self).__name__}")

    def survival_function(self, value, name="survival_function"):
        """1 - cdf(value)."""
        with self._scope(name):
            value = self._convert(value)
            if self._has("_survival_function"):
                return self._survival_function(value)
            if self._has("_log_survival_function"):
                return og.exp(self._log_survival_function(value))
            if self._has("_cdf"):
                return 1. - self._cdf(value)
            raise NotImplementedError(
                f"survival_function is not implemented: {type(self).__name__}")

    def quantile(self, value, name="quantile"):
        """The inverse cdf at probability `value`."""
        with self._scope(name):
            value = self._convert(value)
            if self._has("_quantile"):
                return self._quantile(value)
            raise NotImplementedError(f"quantile is not implemented: {type(self).__name__}")

    # ------------------------------------------------------------------ statistics
    def _stat(self, method, name):
        with self._scope(name):
            if self._has("_" + method):
                return getattr(self, "_" + method)()
            raise NotImplementedError(f"{method} is not implemented: {type(self).__name__}")

    def entropy(self, name="entropy"):
        """Shannon entropy in nats."""
        return self._stat("entropy", name)

    def mean(self, name="mean"):
        """The mean."""
        return self._stat("mean", name)

    def mode(self, name="mode"):
        """The mode."""
        return self._stat("mode", name)

    def variance(self, name="variance"):
        """The variance (square of stddev when only stddev is known)."""
        with self._scope(name):
            if self._has("_variance"):
                return self._variance()
            if self._has("_stddev"):
                return og.square(self._stddev())
            raise NotImplementedError(f"variance is not implemented: {type(self).__name__}")

    def stddev(self, name="stddev"):
        """The standard deviation (sqrt of variance when only variance is known)."""
        with self._scope(name):
            if self._has("_stddev"):
                return self._stddev()
            if self._has("_variance"):
                return og.sqrt(self._variance())
            raise NotImplementedError(f"stddev is not implemented: {type(self).__name__}")

    def covariance(self, name="covariance"):
        """The covariance matrix of vector-valued events."""
        return self._stat("covariance", name)

    def kl_divergence(self, other, name="kl_divergence"):
        """KL(self || other) through the registered function."""
        return kl_divergence(self, other, name=name)

    def cross_entropy(self, other, name="cross_entropy"):
        """H(self, other) = entropy(self) + KL(self || other)."""
        with self._scope(name):
            return self.entropy() + kl_divergence(self, other)

    def __str__(self):
        return (f"tf.distributions.{type(self).__name__}(\"{self.name.rstrip('/')}\", "
                f"batch_shape={self.batch_shape}, event_shape={self.event_shape}, "
                f"dtype={self.dtype.name.lower()})")


# ---------------------------------------------------------------------- KL registry
_DIVERGENCES: dict = {}


def _registered_kl(type_a, type_b):
    """The function registered for the closest (MRO) pair of classes, or None."""
    best, best_dist = None, None
    for i, a in enumerate(type_a.__mro__):
        for j, b in enumerate(type_b.__mro__):
            fn = _DIVERGENCES.get((a, b))
            if fn is not None and (best_dist is None or i + j < best_dist):
                best, best_dist = fn, i + j
    return best


def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    """KL(a || b) for a registered pair of distribution classes; raises NotImplementedError
    (TF's wording) for an unregistered pair. With allow_nan_stats=False a NaN in the result
    fails at run time with InvalidArgumentError."""
    fn = _registered_kl(type(distribution_a), type(distribution_b))
    if fn is None:
        raise NotImplementedError(
            f"No KL(distribution_a || distribution_b) registered for distribution_a "
            f"type {type(distribution_a).__name__} and distribution_b type "
            f"{type(distribution_b).__name__}")
    with og.name_scope("KullbackLeibler"):
        kl_t = fn(distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return kl_t
        kl_t = og.identity(kl_t, name="kl")
        check = og.assert_equal(og.reduce_any(og.is_nan(kl_t)), False,
                                message=f"KL calculation between {distribution_a.name} "
                                        f"and {distribution_b.name} returned NaN values "
                                        f"(and was called with allow_nan_stats=False). "
                                        f"Values:")
        with og.control_dependencies([check]):
            return og.identity(kl_t)


class RegisterKL:
    """Decorator registering a KL(a || b) function for two Distribution classes."""

    def __init__(self, dist_cls_a, dist_cls_b):
        """Raises TypeError when either argument is not a class."""
        for cls in (dist_cls_a, dist_cls_b):
            if not isinstance(cls, type):
                raise TypeError(f"RegisterKL needs classes, got {cls!r}")
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn):
        """Registers `kl_fn`; raises TypeError if it is not callable and ValueError if
        the pair already has a function (TF's messages)."""
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        if self._key in _DIVERGENCES:
            a, b = self._key
            raise ValueError(f"KL({a.__name__} || {b.__name__}) has already been registered "
                             f"to: {_DIVERGENCES[self._key]}")
        _DIVERGENCES[self._key] = kl_fn
        return kl_fn

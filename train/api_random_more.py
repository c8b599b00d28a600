"""TF's gamma and Poisson samplers and its stateless random functions: og.random_gamma,
og.random_poisson (tf.random_gamma / tf.random.gamma, tf.random_poisson /
tf.random.poisson, TF1 argument order) and og.random.stateless_uniform,
stateless_normal, stateless_truncated_normal, stateless_categorical,
stateless_multinomial, stateless_binomial, stateless_poisson, stateless_gamma.

The kernels are onegraph-domain ops (ops/random_more.py): graphs using them run and
save as .og files but do not export to ONNX. random_gamma (and stateless_gamma) are
differentiable in alpha (TF's implicit reparameterization gradient) and beta.

Stateless values are a deterministic function of (seed, shape, parameters): the same in
every session and run, different for different seeds. They come from numpy's Philox
generator keyed by the seed pair, not from TensorFlow's Philox streams, so they do not
equal TF's values for the same seed; only the distributions agree.

One call draws at most ops.random_more.MAX_SAMPLE_ELEMENTS (2**28) values: a larger
output is a ShapeError while building when its shape is known then, else when run.
Edge values follow ops/random_more.py: Poisson rates above 1e10 are drawn from a
rounded normal, binomial counts <= 0 or probs <= 0 give 0 and probs >= 1 give counts
(TF's rules), and draws that an integer output dtype cannot hold are an ExecutionError.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from ..ops.random_more import check_sample_count
from . import api
from . import graph as _g
from .api import _int_arg, _t
from .api_extra import _SEEDED_DOC, _dtype_arg, _op_seed, _shape_operand, _shape_tensor
from .graph import Tensor, check_seed

__all__ = ["random_gamma", "random_poisson"]

STATELESS_NAMES = ("stateless_binomial", "stateless_categorical", "stateless_gamma",
                   "stateless_multinomial", "stateless_normal", "stateless_poisson",
                   "stateless_truncated_normal", "stateless_uniform")

_FLOATS = (DType.FLOAT16, DType.FLOAT32, DType.FLOAT64)
_INTS = (DType.INT32, DType.INT64)
_OG = "onegraph"


def _op(g, op_type: str, inputs, attrs, name=None) -> Tensor:
    return g.op(op_type, inputs, attrs, name=name, domain=_OG)


def _param(value, dt: DType, g, what: str) -> Tensor:
    """A float parameter as a tensor of dtype dt.

    Raises:
        TypeError: a tensor of another dtype.
    """
    t = _g.convert_to_tensor(value, None if _g._is_symbolic(value) else dt, g)
    if t.dtype != dt:
        raise TypeError(f"{what} must be {dt.short_name}, got {t.dtype.short_name} "
                        f"({t.name!r})")
    return t


def _tiny(dt: DType) -> Tensor:
    return api.constant(np.asarray(np.finfo(dt.numpy).tiny, dt.numpy))


def _check_size(shape_info: tuple, param: Tensor | None, what: str) -> None:
    """Refuse while building an output (shape + the parameter's shape, for the
    shape-prefixed ops) of more than MAX_SAMPLE_ELEMENTS values, when its shape is
    known; the op checks it again when run.

    Raises:
        ShapeError: the output would be too large (names what).
    """
    dims = shape_info[0]
    if dims is None or (param is not None and param.shape is None):
        return
    check_sample_count(tuple(dims) + (tuple(param.shape) if param is not None else ()),
                       what)


def random_gamma(shape, alpha, beta=None, dtype=DType.FLOAT32, seed=None,
                 name=None) -> Tensor:
    """Gamma(alpha, rate beta) draws of shape `shape` + broadcast(alpha, beta).shape,
    as tf.random_gamma / tf.random.gamma (TF1): unit-rate draws (numpy's
    Marsaglia-Tsang sampler) divided by beta and floored at the dtype's smallest
    normal number. Differentiable in alpha (TF's implicit gradient: each draw held at
    its quantile of the gamma CDF) and in beta.

    {seeds}

    Example:
        >>> x = og.random_gamma([1000], [0.5, 3.0], seed=1)   # shape [1000, 2]

    Raises:
        TypeError: dtype is not float16/32/64, alpha or beta a tensor of another dtype,
            seed not an int, or name not a str.
        ValueError: seed is negative.
        ShapeError: shape is not a list of ints or a 1-D integer tensor, a dim is
            negative, or the output would hold more than MAX_SAMPLE_ELEMENTS values.
        ExecutionError (when run): alpha is not > 0.
    """
    what = "random_gamma"
    _g.check_name(name, what)
    check_seed(seed, what)
    dt = _dtype_arg(dtype, _FLOATS, f"{what}: dtype")
    g = api._graph_of(shape, alpha, beta)
    shape_info = _shape_operand(shape, g, f"{what}: shape")
    with g.as_default(), g.name_scope(name or what) as scope:
        a = _param(alpha, dt, g, f"{what}: alpha")
        b = None if beta is None else _param(beta, dt, g, f"{what}: beta")
        if b is not None:
            a = a + api.zeros_like(b)        # alpha broadcast against beta
        _check_size(shape_info, a, what)
        attrs = {}
        op_seed = _op_seed(g, seed, scope, what)
        if op_seed is not None:
            attrs["seed"] = op_seed
        sample = _op(g, "RandomGamma", [_shape_tensor(g, shape_info), a], attrs)
        if b is not None:
            sample = sample / b
        return api.maximum(_tiny(dt), sample, name="value")


def random_poisson(lam, shape, dtype=DType.FLOAT32, seed=None, name=None) -> Tensor:
    """Poisson(lam) draws of shape `shape` + lam.shape, as tf.random_poisson /
    tf.random.poisson (TF1 argument order; numpy's Poisson sampler, and for lam above
    1e10 round(N(lam, sqrt(lam))), whose error there is invisible). lam is float;
    dtype is float16/32/64, int32 or int64. Not differentiable (as in TF).

    {seeds}

    Raises:
        TypeError: lam is not float, dtype not one of those, seed not an int, or name
            not a str.
        ValueError: seed is negative.
        ShapeError: as random_gamma.
        ExecutionError (when run): lam is negative, NaN or infinite, or a draw does not
            fit an integer dtype.
    """
    what = "random_poisson"
    _g.check_name(name, what)
    check_seed(seed, what)
    dt = _dtype_arg(dtype, _FLOATS + _INTS, f"{what}: dtype")
    g = api._graph_of(shape, lam)
    shape_info = _shape_operand(shape, g, f"{what}: shape")
    with g.as_default(), g.name_scope(name or what) as scope:
        rate = _g.convert_to_tensor(lam, None if _g._is_symbolic(lam) else dt
                                    if dt in _FLOATS else DType.FLOAT32, g)
        if rate.dtype not in _FLOATS:
            raise TypeError(f"{what}: lam must be float16/32/64, got "
                            f"{rate.dtype.short_name}")
        _check_size(shape_info, rate, what)
        attrs = {"dtype": api.onnx_type(dt)}
        op_seed = _op_seed(g, seed, scope, what)
        if op_seed is not None:
            attrs["seed"] = op_seed
        return _op(g, "RandomPoisson", [_shape_tensor(g, shape_info), rate], attrs,
                   name="value")


# ----------------------------------------------------------------------- stateless

_STATELESS_DOC = """The values are a deterministic function of (seed, shape and the
    parameters): the same in every session and run, different for another seed. They
    come from numpy's Philox generator keyed by the seed pair; they are not TF's
    Philox values for the same seed (only the distribution matches)."""


def _seed_tensor(seed, g, what: str) -> Tensor:
    """The seed as a shape-[2] int32/int64 tensor.

    Raises:
        TypeError: it is not integers.
        ShapeError: it does not hold exactly two values.
    """
    if _g._is_symbolic(seed):
        t = _t(seed)
        if t.dtype not in _INTS:
            raise TypeError(f"{what}: seed must be int32 or int64, got {t.dtype.short_name}")
        if t.shape is not None and tuple(t.shape) not in ((2,), (None,)):
            raise ShapeError(f"{what}: seed must have shape [2], got {list(t.shape)}")
        return t
    s = np.asarray(seed)
    if s.dtype.kind not in "iu" or s.dtype == np.bool_:
        raise TypeError(f"{what}: seed must be two ints, got {seed!r}")
    if s.shape != (2,):
        raise ShapeError(f"{what}: seed must have shape [2], got {list(s.shape)}")
    if s.dtype == np.uint64 and np.any(s > np.iinfo(np.int64).max):
        raise TypeError(f"{what}: seed values must fit in int64, got {seed!r}")
    return g.constant(s.astype(np.int64))


def _stateless_setup(shape, seed, name, what: str, *values):
    """(graph, shape tensor, seed tensor) of a stateless function, its name and shape
    checked (the output at most MAX_SAMPLE_ELEMENTS values when its shape is known)."""
    _g.check_name(name, what)
    g = api._graph_of(shape, seed, *values)
    shape_info = _shape_operand(shape, g, f"{what}: shape")
    _check_size(shape_info, None, what)
    with g.as_default():
        seed_t = _seed_tensor(seed, g, what)
    return g, _shape_tensor(g, shape_info), seed_t


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=DType.FLOAT32,
                      name=None) -> Tensor:
    """Uniform values in [minval, maxval) of `shape`, as tf.random.stateless_uniform:
    floats (maxval defaults to 1) or, for int32/int64, integers (both bounds needed).

    {stateless}

    Raises:
        TypeError: dtype is not float16/32/64 or int32/int64, or seed not integers.
        ValueError: an integer dtype without maxval.
        ShapeError: seed is not of shape [2], shape is not a list of ints or a 1-D
            integer tensor, or the output would hold more than MAX_SAMPLE_ELEMENTS
            (2**28) values.
    """
    what = "stateless_uniform"
    dt = _dtype_arg(dtype, _FLOATS + _INTS, f"{what}: dtype")
    g, shape_t, seed_t = _stateless_setup(shape, seed, name, what, minval, maxval)
    with g.as_default(), g.name_scope(name or what):
        if dt in _INTS:
            if maxval is None:
                raise ValueError(f"{what}: an integer dtype ({dt.short_name}) needs maxval")
            lo = _param(minval, dt, g, f"{what}: minval")
            hi = _param(maxval, dt, g, f"{what}: maxval")
            return _op(g, "StatelessRandomUniformInt", [shape_t, seed_t, lo, hi], {},
                       name="value")
        u = _op(g, "StatelessRandomUniform", [shape_t, seed_t], {"dtype": api.onnx_type(dt)})
        lo = _param(minval, dt, g, f"{what}: minval")
        hi = _param(1.0 if maxval is None else maxval, dt, g, f"{what}: maxval")
        return api.add(u * (hi - lo), lo, name="value")


def _stateless_gaussian(op_type, what, shape, seed, mean, stddev, dtype, name):
    dt = _dtype_arg(dtype, _FLOATS, f"{what}: dtype")
    g, shape_t, seed_t = _stateless_setup(shape, seed, name, what, mean, stddev)
    with g.as_default(), g.name_scope(name or what):
        z = _op(g, op_type, [shape_t, seed_t], {"dtype": api.onnx_type(dt)})
        return api.add(z * _param(stddev, dt, g, f"{what}: stddev"),
                       _param(mean, dt, g, f"{what}: mean"), name="value")


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=DType.FLOAT32,
                     name=None) -> Tensor:
    """Normal(mean, stddev) values of `shape`, as tf.random.stateless_normal.

    {stateless}

    Raises:
        TypeError: dtype is not float16/32/64, or seed not integers.
        ShapeError: as stateless_uniform.
    """
    return _stateless_gaussian("StatelessRandomNormal", "stateless_normal", shape, seed,
                               mean, stddev, dtype, name)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=DType.FLOAT32,
                               name=None) -> Tensor:
    """Normal(mean, stddev) values of `shape` within two stddev of the mean (others
    drawn again), as tf.random.stateless_truncated_normal.

    {stateless}

    Raises:
        TypeError / ShapeError: as stateless_normal.
    """
    return _stateless_gaussian("StatelessTruncatedNormal", "stateless_truncated_normal",
                               shape, seed, mean, stddev, dtype, name)


def _stateless_classes(logits, num_samples, seed, dtype, name, what: str) -> Tensor:
    _g.check_name(name, what)
    x = _t(logits)
    if x.dtype not in _FLOATS or (x.shape is not None and len(x.shape) != 2):
        raise ShapeError(f"{what}: logits must be 2-D floats (batch, classes), got "
                         f"{x.dtype.short_name} of shape {x.shape}")
    out = _dtype_arg(dtype, _INTS, f"{what}: dtype")
    g = x.graph
    with g.as_default():
        seed_t = _seed_tensor(seed, g, what)
        if _g._is_symbolic(num_samples):
            count = api.cast(_t(num_samples), DType.INT64)
        else:
            n = _int_arg(num_samples, f"{what}: num_samples")
            if n < 0:
                raise ValueError(f"{what}: num_samples must be >= 0, got {n}")
            rows = x.shape[0] if x.shape is not None else None
            check_sample_count((rows, n), what)   # skipped while rows are unknown
            count = g.constant(np.asarray(n, np.int64))
        with g.name_scope(name or what):
            return _op(g, "StatelessMultinomial", [x, count, seed_t],
                       {"dtype": api.onnx_type(out)}, name="value")


def stateless_categorical(logits, num_samples, seed, dtype=DType.INT64, name=None) -> Tensor:
    """num_samples class indices per row of logits (batch, classes), drawn with
    probabilities softmax(logits), as tf.random.stateless_categorical.

    {stateless}

    Raises:
        ShapeError: logits are not 2-D floats, seed not of shape [2], or batch *
            num_samples is above MAX_SAMPLE_ELEMENTS.
        TypeError: dtype is not int32/int64, num_samples not an int, or seed not
            integers.
        ValueError: num_samples is negative.
    """
    return _stateless_classes(logits, num_samples, seed, dtype, name,
                              "stateless_categorical")


def stateless_multinomial(logits, num_samples, seed, output_dtype=DType.INT64,
                          name=None) -> Tensor:
    """tf.random.stateless_multinomial (TF1): stateless_categorical with output_dtype.

    {stateless}

    Raises:
        as stateless_categorical.
    """
    return _stateless_classes(logits, num_samples, seed, output_dtype, name,
                              "stateless_multinomial")


def stateless_binomial(shape, seed, counts, probs, output_dtype=DType.INT32,
                       name=None) -> Tensor:
    """Binomial(counts, probs) draws of `shape` (counts and probs broadcast to it), as
    tf.random.stateless_binomial, with TF's kernel's rules at the edges: counts <= 0
    or probs <= 0 give 0, probs >= 1 give counts, and a NaN count or prob gives NaN
    (which only a float output_dtype holds).

    {stateless}

    Raises:
        TypeError: output_dtype is not float16/32/64 or int32/int64, or seed not
            integers.
        ShapeError: as stateless_uniform (counts or probs not broadcasting to shape
            fails when the graph runs).
        ExecutionError (when run): a count to draw from is not a whole number below
            2**63, or a result does not fit an integer output_dtype (NaN, too large).
    """
    what = "stateless_binomial"
    dt = _dtype_arg(output_dtype, _FLOATS + _INTS, f"{what}: output_dtype")
    g, shape_t, seed_t = _stateless_setup(shape, seed, name, what, counts, probs)
    with g.as_default(), g.name_scope(name or what):
        n = _g.convert_to_tensor(counts, None if _g._is_symbolic(counts) else DType.FLOAT64,
                                 g)
        p = _g.convert_to_tensor(probs, None if _g._is_symbolic(probs) else DType.FLOAT64, g)
        return _op(g, "StatelessRandomBinomial", [shape_t, seed_t, n, p],
                   {"dtype": api.onnx_type(dt)}, name="value")


def stateless_poisson(shape, seed, lam, dtype=DType.INT32, name=None) -> Tensor:
    """Poisson(lam) draws of `shape` (lam broadcast to it), as
    tf.random.stateless_poisson (for lam above 1e10, round(N(lam, sqrt(lam)))).

    {stateless}

    Raises:
        TypeError: dtype is not float16/32/64 or int32/int64, lam not float, or seed
            not integers.
        ShapeError: as stateless_uniform.
        ExecutionError (when run): lam is negative, NaN or infinite, or a draw does not
            fit an integer dtype.
    """
    what = "stateless_poisson"
    dt = _dtype_arg(dtype, _FLOATS + _INTS, f"{what}: dtype")
    g, shape_t, seed_t = _stateless_setup(shape, seed, name, what, lam)
    with g.as_default(), g.name_scope(name or what):
        rate = _g.convert_to_tensor(lam, None if _g._is_symbolic(lam) else DType.FLOAT64, g)
        if rate.dtype not in _FLOATS:
            raise TypeError(f"{what}: lam must be float, got {rate.dtype.short_name}")
        return _op(g, "StatelessRandomPoisson", [shape_t, seed_t, rate],
                   {"dtype": api.onnx_type(dt)}, name="value")


def stateless_gamma(shape, seed, alpha, beta=None, dtype=DType.FLOAT32, name=None) -> Tensor:
    """Gamma(alpha, rate beta) draws of `shape` (alpha and beta broadcast to it), as
    tf.random.stateless_gamma; differentiable in alpha and beta like random_gamma.

    {stateless}

    Raises:
        TypeError: dtype is not float16/32/64, alpha or beta a tensor of another dtype,
            or seed not integers.
        ShapeError: as stateless_uniform.
    """
    what = "stateless_gamma"
    dt = _dtype_arg(dtype, _FLOATS, f"{what}: dtype")
    g, shape_t, seed_t = _stateless_setup(shape, seed, name, what, alpha, beta)
    with g.as_default(), g.name_scope(name or what):
        a = _param(alpha, dt, g, f"{what}: alpha")
        sample = _op(g, "StatelessRandomGamma", [shape_t, seed_t, a], {})
        if beta is not None:
            sample = sample / _param(beta, dt, g, f"{what}: beta")
        return api.maximum(_tiny(dt), sample, name="value")


for _fn in (random_gamma, random_poisson):
    _fn.__doc__ = _fn.__doc__.replace("{seeds}", _SEEDED_DOC)
for _fn in (stateless_uniform, stateless_normal, stateless_truncated_normal,
            stateless_categorical, stateless_multinomial, stateless_binomial,
            stateless_poisson, stateless_gamma):
    _fn.__doc__ = _fn.__doc__.replace("{stateless}", _STATELESS_DOC)

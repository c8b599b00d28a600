"""og.math and og.random: TF1's tf.math and tf.random namespaces over og's functions.

TF1 code from 1.13 on spells many functions as tf.math.log1p, tf.math.reduce_std,
tf.random.uniform, ...; these namespaces give og's functions under those names (the
same objects as og.log1p, og.random_uniform, ...), plus the few tf.math functions that
exist only there (divide_no_nan, multiply_no_nan, xlogy, ...).
"""

from __future__ import annotations

import types

from ..errors import ShapeError
from ..format import DType
from . import api, api_extra
from . import graph as _g
from .graph import Tensor
from .module_namespace import namespace

# tf.math's names that are og's functions of the same name (og.<name> or og.nn.<name>)
_MATH_NAMES = (
    "abs", "acos", "acosh", "add", "add_n", "argmax", "argmin", "asin", "asinh", "atan",
    "atan2", "atanh", "bincount", "ceil", "confusion_matrix", "cos", "cosh",
    "count_nonzero", "cumprod", "cumsum", "divide", "equal", "erf", "erfc", "exp",
    "expm1", "floor", "floordiv", "floormod", "greater", "greater_equal", "in_top_k",
    "invert_permutation", "is_finite", "is_inf", "is_nan", "l2_normalize", "less",
    "less_equal", "log", "log1p", "log_sigmoid", "log_softmax", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "mod", "multiply",
    "negative", "not_equal", "pow", "reciprocal", "reduce_all", "reduce_any",
    "reduce_euclidean_norm", "reduce_logsumexp", "reduce_max", "reduce_mean",
    "reduce_min", "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance", "rint",
    "round", "rsqrt", "scalar_mul", "segment_max", "segment_mean", "segment_min",
    "segment_prod", "segment_sum", "sigmoid", "sign", "sin", "sinh", "softmax",
    "softplus", "softsign", "sqrt", "square", "squared_difference", "subtract", "tan",
    "tanh", "top_k", "truediv", "unsorted_segment_max", "unsorted_segment_mean",
    "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sqrt_n",
    "unsorted_segment_sum", "zero_fraction")


def _pair(x, y, what):
    return api._pair(x, y, what)


def divide_no_nan(x, y, name=None) -> Tensor:
    """x / y, 0 where y is 0 (tf.math.divide_no_nan; og.div_no_nan)."""
    from .api_compat import div_no_nan

    return div_no_nan(x, y, name=name)


def multiply_no_nan(x, y, name=None) -> Tensor:
    """x * y, 0 where y is 0 even if x is inf or NaN (tf.math.multiply_no_nan).

    Raises:
        ShapeError: x and y are tensors of different dtypes.
    """
    a, b = _pair(x, y, "multiply_no_nan")
    zero = api.zeros_like(b)
    return api.where(api.equal(b, zero), api.zeros_like(a * b), a * b, name=name)


def reciprocal_no_nan(x, name=None) -> Tensor:
    """1 / x, 0 where x is 0 (tf.math.reciprocal_no_nan)."""
    t = api._t(x)
    return divide_no_nan(api.ones_like(t), t, name=name)


def xlogy(x, y, name=None) -> Tensor:
    """x * log(y), 0 where x is 0 (tf.math.xlogy).

    Raises:
        ShapeError: x and y are tensors of different dtypes.
    """
    a, b = _pair(x, y, "xlogy")
    zero = api.zeros_like(a)
    safe = api.where(api.equal(a, zero), api.ones_like(b), b)
    return api.where(api.equal(a, zero), zero, a * api.log(safe), name=name)


def xdivy(x, y, name=None) -> Tensor:
    """x / y, 0 where x is 0 (tf.math.xdivy).

    Raises:
        ShapeError: x and y are tensors of different dtypes.
    """
    a, b = _pair(x, y, "xdivy")
    zero = api.zeros_like(a)
    safe = api.where(api.equal(a, zero), api.ones_like(b), b)
    return api.where(api.equal(a, zero), zero, a / safe, name=name)


# TF's numeric dtypes (tf.debugging.is_numeric_tensor's)
_NUMERIC = {DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64, DType.INT8,
            DType.INT16, DType.INT32, DType.INT64, DType.UINT8, DType.UINT16, DType.UINT32,
            DType.UINT64}


def _sorted_check(x, strict: bool, name) -> Tensor:
    x = api.reshape(api._t(x), [-1])
    if x.dtype not in _NUMERIC:
        raise TypeError(f"Expected x to be numeric, instead found: {x.dtype.short_name}")
    step = x[1:] - x[:-1] if x.dtype not in (DType.UINT8, DType.UINT16, DType.UINT32,
                                             DType.UINT64) else None
    if step is None:  # unsigned: compare instead of subtracting
        ok = api.greater(x[1:], x[:-1]) if strict else api.greater_equal(x[1:], x[:-1])
    else:
        zero = api.zeros_like(step)
        ok = api.greater(step, zero) if strict else api.greater_equal(step, zero)
    return api_extra.reduce_all(ok, name=name)


def is_non_decreasing(x, name=None) -> Tensor:
    """Whether x's elements (flattened) never decrease: a bool scalar (TF's
    tf.debugging.is_non_decreasing; true for fewer than two elements).

    Raises:
        TypeError: x is not numeric (TF's message).
    """
    return _sorted_check(x, False, name)


def is_strictly_increasing(x, name=None) -> Tensor:
    """Whether x's elements (flattened) always increase: a bool scalar (TF's
    tf.debugging.is_strictly_increasing).

    Raises:
        TypeError: x is not numeric (TF's message).
    """
    return _sorted_check(x, True, name)


def polyval(coeffs, x, name=None) -> Tensor:
    """coeffs[0] * x^(n-1) + ... + coeffs[n-1] by Horner's rule (tf.math.polyval);
    coeffs is a list of tensors or numbers.

    Raises:
        TypeError: coeffs is not a list.
        ShapeError: a coefficient has another dtype than x.
    """
    if not isinstance(coeffs, (list, tuple)):
        raise TypeError(f"polyval: coeffs must be a list, got {type(coeffs).__name__}")
    t = api._t(x)
    if not coeffs:
        return api.zeros_like(t, name=name)
    result = None
    for c in coeffs:
        c_t = _g.convert_to_tensor(c, None if _g._is_symbolic(c) else t.dtype, t.graph)
        if c_t.dtype != t.dtype:
            raise ShapeError(f"polyval: coefficient of dtype {c_t.dtype.short_name} for x "
                             f"of dtype {t.dtype.short_name}")
        result = c_t + api.zeros_like(t) if result is None else result * t + c_t
    return api.identity(result, name=name)


def make_math(og_namespace, nn) -> types.ModuleType:
    """og.math from og's public names (og_namespace: name -> object) and og.nn."""
    entries = {}
    for n in _MATH_NAMES:
        value = og_namespace.get(n)
        if value is None:
            value = getattr(nn, n, None)
        if value is not None:
            entries[n] = value
    entries.update(divide_no_nan=divide_no_nan, multiply_no_nan=multiply_no_nan,
                   reciprocal_no_nan=reciprocal_no_nan, xlogy=xlogy, xdivy=xdivy,
                   is_non_decreasing=is_non_decreasing,
                   is_strictly_increasing=is_strictly_increasing, polyval=polyval,
                   accumulate_n=og_namespace["add_n"])
    from . import api_special  # lgamma, digamma, ..., and og.math.special

    entries.update({n: getattr(api_special, n) for n in api_special.MATH_NAMES})
    return namespace("math", "TF1's tf.math names over og's functions.", entries)


def make_random(og_namespace) -> types.ModuleType:
    """og.random: tf.random's TF1 names over og's random functions."""
    from .api_random import multinomial, random_shuffle

    def categorical(logits, num_samples, dtype=None, seed=None, name=None) -> Tensor:
        """tf.random.categorical: og.multinomial with TF's argument order."""
        return multinomial(logits, num_samples, seed=seed, name=name,
                           output_dtype="int64" if dtype is None else dtype)

    from .nn_sampled import log_uniform_candidate_sampler, uniform_candidate_sampler

    entries = {"normal": og_namespace["random_normal"],
               "uniform": og_namespace["random_uniform"],
               "uniform_candidate_sampler": uniform_candidate_sampler,
               "log_uniform_candidate_sampler": log_uniform_candidate_sampler,
               "truncated_normal": og_namespace["truncated_normal"],
               "shuffle": random_shuffle, "multinomial": multinomial,
               "categorical": categorical,
               "set_random_seed": og_namespace["set_random_seed"]}
    from . import api_random_more  # tf.random.gamma, poisson and the stateless family

    entries.update(gamma=api_random_more.random_gamma, poisson=api_random_more.random_poisson)
    entries.update({n: getattr(api_random_more, n) for n in api_random_more.STATELESS_NAMES})
    return namespace("random", "TF1's tf.random names over og's functions.",
                      entries)

"""TF1's special functions: og.lgamma, og.digamma, og.polygamma, og.igamma,
og.igammac, og.betainc, og.lbeta, og.zeta (tf.compat.v1's top-level names) and
og.math's erfinv, erfcinv, ndtri, bessel_i0, bessel_i0e, bessel_i1, bessel_i1e and
xlog1py, plus `special`, the og.math.special namespace (tf.math.special's Bessel
functions).

ONNX has none of these, so they are onegraph-domain ops (ops/special.py, numpy
kernels computed in float64; gradients in ops/special_grad.py): graphs using them run,
differentiate and save as .og files but do not export to ONNX. Inputs must be float
tensors (float16, bfloat16, float32, float64) as in TF; a Python number given with a
tensor takes the tensor's dtype (as og's binary ops pair them), two tensors must
share one dtype. Values outside a function's domain give NaN and poles give inf, as
in TF (see each function).
"""

from __future__ import annotations

import types

from ..errors import ShapeError
from ..format import DType
from . import api
from . import graph as _g
from .api import _t
from .graph import Tensor

# tf.compat.v1's top-level names (og.lgamma, ...); the rest are tf.math's only
__all__ = ["betainc", "digamma", "igamma", "igammac", "lbeta", "lgamma", "polygamma", "zeta"]
# og.math's names from this module (tf.compat.v1.math has all of them and `special`)
MATH_NAMES = ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "betainc", "digamma",
              "erfcinv", "erfinv", "igamma", "igammac", "lbeta", "lgamma", "ndtri",
              "polygamma", "special", "xlog1py", "zeta")

_FLOATS = (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64)


def _floats(what: str, *values) -> list[Tensor]:
    """values as tensors of one float dtype: Python numbers and arrays take the dtype
    of the first tensor among them (float32 when there is none).

    Raises:
        TypeError: a value is not float, or two tensors have different dtypes.
    """
    first = next((v for v in values if _g._is_symbolic(v)), None)
    anchor = _t(first) if first is not None else None
    out = []
    for v in values:
        if _g._is_symbolic(v):
            t = _t(v)
        else:
            t = _t(v, None if anchor is None else anchor.dtype,
                   None if anchor is None else anchor.graph)
            if anchor is None:
                anchor = t
        if t.dtype not in _FLOATS:
            raise TypeError(f"{what}: expected float tensors (float16, bfloat16, float32, "
                            f"float64), got {t.dtype.short_name} ({t.name!r})")
        out.append(t)
    dtypes = {t.dtype for t in out}
    if len(dtypes) > 1:
        raise TypeError(f"{what}: the inputs must have one dtype, got "
                        f"{[t.dtype.short_name for t in out]}")
    return out


def _op(what: str, op_type: str, values, name) -> Tensor:
    ts = _floats(what, *values)
    return ts[0].graph.op(op_type, ts, name=name, domain="onegraph")




def lgamma(x, name=None) -> Tensor:
    """log|Gamma(x)| elementwise (tf.lgamma / tf.math.lgamma): +inf at 0, at the
    negative integers and at +-inf, NaN for NaN.

    Example: ``og.lgamma([0.5, 3.0])`` evaluates to [log(sqrt(pi)), log(2)].

    Raises:
        TypeError: x is not a float tensor (integers are refused, as TF does).
    """
    return _op("lgamma", "Lgamma", [x], name)


def digamma(x, name=None) -> Tensor:
    """psi(x) = d/dx lgamma(x) (tf.digamma / tf.math.digamma): NaN at 0, at the
    negative integers and at -inf (as TF), +inf at +inf.

    Raises:
        TypeError: x is not a float tensor.
    """
    return _op("digamma", "Digamma", [x], name)


def polygamma(a, x, name=None) -> Tensor:
    """psi^(a)(x), the a-th derivative of digamma (tf.polygamma / tf.math.polygamma):
    a must hold non-negative whole numbers (NaN elsewhere); (-1)^(a+1) a! zeta(a+1, x)
    for a >= 1, with zeta's conventions at x <= 0. Broadcasts. Differentiable in x.

    Raises:
        TypeError: a or x is not a float tensor, or they differ in dtype (a Python
            number a takes x's dtype).
    """
    return _op("polygamma", "Polygamma", [a, x], name)


def zeta(x, q, name=None) -> Tensor:
    """The Hurwitz zeta function sum_k (q + k)^-x (tf.zeta / tf.math.zeta): inf at
    x = 1, NaN for x < 1; for q <= 0 an integer, inf if x is even else NaN; for q < 0
    not an integer, NaN unless x is an integer. Broadcasts. Differentiable in q.

    Raises:
        TypeError: x or q is not a float tensor, or they differ in dtype.
    """
    return _op("zeta", "Zeta", [x, q], name)


def igamma(a, x, name=None) -> Tensor:
    """P(a, x), the regularized lower incomplete gamma function (tf.igamma /
    tf.math.igamma): 0 at x = 0 (for any a), NaN for a <= 0 or x < 0, 1 at x = inf
    (0 when a is inf too). Broadcasts. Differentiable in x only (TF also gives a
    gradient for a).

    Raises:
        TypeError: a or x is not a float tensor, or they differ in dtype.
    """
    return _op("igamma", "Igamma", [a, x], name)


def igammac(a, x, name=None) -> Tensor:
    """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function
    (tf.igammac / tf.math.igammac): NaN for a <= 0 or x < 0, 1 at x = 0, 0 at
    x = inf. Broadcasts. Differentiable in x only.

    Raises:
        TypeError: a or x is not a float tensor, or they differ in dtype.
    """
    return _op("igammac", "Igammac", [a, x], name)


def betainc(a, b, x, name=None) -> Tensor:
    """I_x(a, b), the regularized incomplete beta function (tf.betainc /
    tf.math.betainc): NaN unless a > 0 and b > 0, then 0 at x = 0, 1 at x = 1, NaN
    outside [0, 1]. As in TF, a, b and x are each a scalar or of one common shape (no
    other broadcasting). Differentiable in x.

    Raises:
        TypeError: an argument is not a float tensor, or their dtypes differ.
        ShapeError: two non-scalar arguments have different (known) shapes.
    """
    ts = _floats("betainc", a, b, x)
    shapes = [t.shape for t in ts]
    full = [s for s in shapes if s is None or len(s) > 0]
    if any(s is not None for s in full):
        known = [s for s in full if s is not None]
        ranks = {len(s) for s in known}
        dims_differ = len(ranks) > 1 or any(
            da is not None and db is not None and da != db
            for s in known for da, db in zip(s, known[0]))
        if dims_differ:
            raise ShapeError(f"betainc: a, b and x must be scalars or of one shape, got "
                             f"{[None if s is None else list(s) for s in shapes]}")
    return ts[0].graph.op("Betainc", ts, name=name, domain="onegraph")


def lbeta(x, name=None) -> Tensor:
    """log|B(x)| over the last axis: sum(lgamma(x), -1) - lgamma(sum(x, -1))
    (tf.lbeta / tf.math.lbeta); an empty last axis gives -inf. Built from Lgamma and
    ReduceSum under the name scope `name` ('lbeta'), so its gradient is digamma(x_i) -
    digamma(sum x).

    Raises:
        TypeError: x is not a float tensor.
        ShapeError: x is a scalar (rank 0), which has no last axis.
    """
    (t,) = _floats("lbeta", x)
    if t.shape is not None and len(t.shape) == 0:
        raise ShapeError(f"lbeta: x must have rank >= 1, got a scalar ({t.name!r})")
    with t.graph.as_default(), api.name_scope(name or "lbeta"):
        log_prod = api.reduce_sum(lgamma(t), axis=-1)
        log_sum = lgamma(api.reduce_sum(t, axis=-1))
        return api.subtract(log_prod, log_sum, name="lbeta")


def erfinv(x, name=None) -> Tensor:
    """The inverse error function (tf.math.erfinv): +-inf at +-1, NaN outside
    [-1, 1].

    Raises:
        TypeError: x is not a float tensor.
    """
    return _op("erfinv", "Erfinv", [x], name)


def erfcinv(x, name=None) -> Tensor:
    """The inverse complementary error function (tf.math.erfcinv): inf at 0, -inf at 2,
    NaN outside [0, 2]. Accurate in the tail (erfcinv(1e-300) = 26.209...).

    Raises:
        TypeError: x is not a float tensor.
    """
    return _op("erfcinv", "Erfcinv", [x], name)


def ndtri(x, name=None) -> Tensor:
    """The inverse of the standard normal CDF (tf.math.ndtri): -inf at 0, inf at 1,
    NaN outside [0, 1].

    Raises:
        TypeError: x is not a float tensor.
    """
    return _op("ndtri", "Ndtri", [x], name)


def bessel_i0(x, name=None) -> Tensor:
    """I0(x), the modified Bessel function of order 0 (tf.math.bessel_i0): computed as
    e^|x| i0e(x), so it overflows to inf past |x| ~ 713 and is NaN at +-inf (as TF).

    Raises:
        TypeError: x is not a float tensor.
    """
    return _op("bessel_i0", "BesselI0", [x], name)


def bessel_i0e(x, name=None) -> Tensor:
    """e^-|x| I0(x) (tf.math.bessel_i0e): 1 at 0, 0 at +-inf.

    Raises:
        TypeError: x is not a float tensor.
    """
    return _op("bessel_i0e", "BesselI0e", [x], name)


def bessel_i1(x, name=None) -> Tensor:
    """I1(x), the modified Bessel function of order 1 (tf.math.bessel_i1), odd:
    e^|x| i1e(x), inf past |x| ~ 713 and NaN at +-inf (as TF).

    Raises:
        TypeError: x is not a float tensor.
    """
    return _op("bessel_i1", "BesselI1", [x], name)


def bessel_i1e(x, name=None) -> Tensor:
    """e^-|x| I1(x) (tf.math.bessel_i1e), odd: 0 at 0 and +-0 at +-inf.

    Raises:
        TypeError: x is not a float tensor.
    """
    return _op("bessel_i1e", "BesselI1e", [x], name)


def xlog1py(x, y, name=None) -> Tensor:
    """x * log(1 + y), and 0 where x is 0 whatever y is (tf.math.xlog1py).
    Broadcasts.

    Raises:
        TypeError: x or y is not a float tensor, or they differ in dtype.
    """
    return _op("xlog1py", "Xlog1py", [x, y], name)


def _special_namespace() -> types.ModuleType:
    entries = {"bessel_i0": bessel_i0, "bessel_i0e": bessel_i0e, "bessel_i1": bessel_i1,
               "bessel_i1e": bessel_i1e}
    module = types.ModuleType("onegraph.math.special",
                              "tf.math.special's names over og's Bessel functions.")
    for key, value in entries.items():
        setattr(module, key, value)
    module.__all__ = sorted(entries)
    return module


special = _special_namespace()

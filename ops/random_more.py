"""Operators (onegraph domain): TF's gamma and Poisson samplers and its stateless
random family, which ONNX lacks.

- RandomGamma(shape, alpha) and RandomPoisson(shape, lam): `shape` + alpha's (lam's)
  shape draws from the executor's generator or a seeded per-node stream, exactly as
  the ONNX random ops in random.py (`seed` attribute, `stateful`). Gamma draws are
  numpy's Marsaglia-Tsang sampler (Generator.standard_gamma), floored at the dtype's
  smallest normal number as TF does; Poisson draws are Generator.poisson.
- RandomGammaGrad(alpha, sample): d sample / d alpha of a unit-rate gamma draw held at
  its uniform quantile (the implicit, "reparameterization" gradient TF uses):
  -(dP(alpha, x)/d alpha) / p(x; alpha), P the regularized lower incomplete gamma
  function and p the gamma density. P's alpha-derivative has no closed form; it is a
  five-point central difference of special.igamma (or of igammac where P > 1/2, so the
  tail keeps its relative accuracy), with step 1e-3 * alpha: truncation error
  O(h^4) and rounding O(eps / h) are both near 1e-12 relative.
- Stateless*(shape, seed, ...): values that are a pure function of the int32/int64
  seed pair (and shape and parameters), drawn from numpy's Philox bit generator keyed
  by the seed's two 64-bit words (counter 0). They are not TensorFlow's Philox streams:
  same-seed values differ from TF's, only the distributions agree. Being functions of
  their inputs they are not `stateful` and may be constant-folded.

Limits and edge values:
- One op draws at most MAX_SAMPLE_ELEMENTS (2**28: 2 GiB of the 8-byte values the
  kernels work in) values into an output (the candidate samplers share the limit); a
  larger shape is a ShapeError, raised while building when the shape is known then and
  before anything is allocated otherwise. `check_sample_count` is the one place that
  enforces it. numpy's MemoryError below that limit becomes an ExecutionError.
- Poisson rates above POISSON_NORMAL_ABOVE (1e10) are drawn as round(N(lam, sqrt(lam)))
  (numpy's sampler refuses rates near 2**63; the approximation's skewness error,
  1/sqrt(lam) <= 1e-5, is invisible); rates must be finite.
- StatelessRandomBinomial follows TF's kernel: counts <= 0 or probs <= 0 give 0, probs
  >= 1 give counts, and a NaN count or prob gives NaN (an ExecutionError for an integer
  output, which has no NaN). Counts must be whole numbers below 2**63 (or -inf).
- Poisson and binomial draws that do not fit an integer output dtype are an
  ExecutionError rather than values wrapped around.

Gradients: RandomGamma and StatelessRandomGamma with respect to alpha (the rule below,
through RandomGammaGrad); the others have none (as in TF).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError
from . import special
from .elementwise import onnx_type_to_numpy
from .random import _rng, categorical_draws
from .registry import TensorInfo, define

_OG = "onegraph"
_FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


# The most memory one random op (or candidate sampler) may draw into one output, and
# so the most values: the kernels work in 8-byte floats and ints (float64 draws, int64
# ids) whatever the output dtype, so 2 GiB is 2**28 values. A larger request (a
# num_sampled of 1e9, a shape of [1e10]) is almost surely a mistake; it is refused with
# a ShapeError before anything is allocated, instead of numpy failing deep inside
# (MemoryError, "array is too big") or the machine swapping. This is the one place the
# limit is set; check_sample_count is the one check, shared by every sampler.
MAX_SAMPLE_BYTES = 2 ** 31
MAX_SAMPLE_ELEMENTS = MAX_SAMPLE_BYTES // 8


def check_sample_count(dims, op: str, what: str = "output") -> int:
    """The number of elements of the shape `dims` (ints >= 0; a None dim, unknown while
    building, skips the check and gives -1).

    Raises:
        ShapeError: more than MAX_SAMPLE_ELEMENTS elements (names op and what).
    """
    dims = tuple(dims)
    if any(d is None for d in dims):
        return -1
    count = math.prod(int(d) for d in dims)   # Python ints: no int64 wrap-around
    if count > MAX_SAMPLE_ELEMENTS:
        raise ShapeError(f"{op}: the {what} of shape {[int(d) for d in dims]} would hold "
                         f"{count:,} values, more than the {MAX_SAMPLE_ELEMENTS:,} "
                         f"(MAX_SAMPLE_ELEMENTS: 2 GiB of 8-byte values) one op may draw")
    return count


def _shape_arg(shape, op: str, param_shape: tuple = ()) -> tuple:
    """The output shape given as a 1-D integer tensor (`param_shape`, a parameter's
    shape appended to it by the op, counts towards the size limit).

    Raises:
        ShapeError: it is not 1-D integers, holds a negative dim, or shape +
            param_shape holds more than MAX_SAMPLE_ELEMENTS values.
    """
    s = np.asarray(shape)
    if s.ndim != 1 or s.dtype.kind not in "iu":
        raise ShapeError(f"{op}: shape must be a 1-D integer tensor, got {s.dtype} of shape "
                         f"{list(s.shape)}")
    if np.any(s < 0):
        raise ShapeError(f"{op}: negative dim in shape {s.tolist()}")
    dims = tuple(int(d) for d in s)
    check_sample_count(dims + tuple(param_shape), op)
    return dims


def memory_guarded(op: str, kernel):
    """`kernel` with numpy's MemoryError (an output within MAX_SAMPLE_ELEMENTS that this
    machine still cannot hold) turned into an ExecutionError naming the op."""
    def guarded(inputs, attrs, ctx):
        try:
            return kernel(inputs, attrs, ctx)
        except MemoryError:
            raise ExecutionError(f"{op}: out of memory while drawing its output (the "
                                 f"shape is within the {MAX_SAMPLE_ELEMENTS:,}-value "
                                 f"limit, but this machine cannot hold it)") from None
    guarded.__doc__ = kernel.__doc__
    guarded.__name__ = getattr(kernel, "__name__", "kernel")
    return guarded


def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype).name == "bfloat16"


def _float_param(x, op: str, what: str) -> np.ndarray:
    x = np.asarray(x)
    if not _is_float(x.dtype):
        raise ShapeError(f"{op}: {what} must be float, got {x.dtype}")
    return x


def _out_dtype(attrs, op: str) -> np.dtype:
    """The `dtype` attribute as a numpy dtype: a float or integer one.

    Raises:
        OpAttributeError: it is missing, unknown, or not a number type.
    """
    if attrs.get("dtype") is None:
        raise OpAttributeError(f"{op}: dtype is required")
    try:
        dtype = onnx_type_to_numpy(attrs["dtype"])
    except OpAttributeError as e:   # its message names Cast, not this op
        raise OpAttributeError(f"{op}: dtype {attrs['dtype']!r}: {e}") from None
    if not (_is_float(dtype) or dtype.kind in "iu"):
        raise OpAttributeError(f"{op}: dtype must be a float or integer type, got {dtype}")
    return dtype


def _counts_as(values, dtype, op: str) -> np.ndarray:
    """Whole-number draws (float64, NaN allowed for float outputs) as `dtype`.

    Raises:
        ExecutionError: an integer dtype cannot hold a draw (NaN, or beyond its range);
            numpy would wrap such values around silently.
    """
    values = np.asarray(values, np.float64)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and values.size:
        if np.isnan(values).any():
            raise ExecutionError(f"{op}: a draw is NaN (from a NaN parameter), which the "
                                 f"integer output dtype {dtype} cannot hold; ask for a "
                                 f"float dtype")
        info = np.iinfo(dtype)
        top = float(values.max())
        if top > info.max:   # Python compares a float with an int exactly
            raise ExecutionError(f"{op}: a draw ({top:.6g}) does not fit the output dtype "
                                 f"{dtype} (at most {info.max}); ask for a wider or a "
                                 f"float dtype")
    if dtype.name == "bfloat16":
        return values.astype(np.float32).astype(dtype)
    return values.astype(dtype)


def _floor_tiny(x, dtype) -> np.ndarray:
    """Gamma draws cast to dtype, floored at its smallest normal number (as TF does, so
    that log(sample) is finite)."""
    out = np.asarray(x, np.float64).astype(np.float32).astype(dtype) \
        if np.dtype(dtype).name == "bfloat16" else np.asarray(x).astype(dtype)
    tiny = np.finfo(np.float32 if np.dtype(dtype).name == "bfloat16" else dtype).tiny
    return np.maximum(out, np.asarray(tiny).astype(dtype))


# ------------------------------------------------------------------- stateful draws

def _gamma_kernel(inputs, attrs, ctx):
    """shape + alpha.shape unit-rate gamma draws (alpha's dtype)."""
    alpha = _float_param(inputs[1], "RandomGamma", "alpha")
    dims = _shape_arg(inputs[0], "RandomGamma", alpha.shape)
    a = np.broadcast_to(alpha.astype(np.float64), dims + alpha.shape)
    # checked on alpha itself, not on its broadcast: no output-sized temporaries
    if a.size and np.any(~(alpha.astype(np.float64) > 0)):
        raise ExecutionError("RandomGamma: alpha must be > 0 (and not NaN)")
    return (_floor_tiny(_rng(attrs, ctx).standard_gamma(a), alpha.dtype),)


# Above this rate a Poisson draw is round(N(lam, sqrt(lam))), clipped at 0: numpy's
# sampler refuses rates near 2**63 ("lam value too large"), and the approximation's
# error (skewness 1/sqrt(lam) <= 1e-5 here) is far below anything the draws can show.
# TF's own sampler is a transformed rejection method at every rate above 10.
POISSON_NORMAL_ABOVE = 1e10


def _poisson_draws(gen, lam: np.ndarray, op: str) -> np.ndarray:
    """Poisson(lam) draws (float64) for float64 rates of the output's shape.

    Raises:
        ExecutionError: a rate is negative, NaN or infinite.
    """
    if lam.size and not np.all((lam >= 0) & (lam < np.inf)):
        raise ExecutionError(f"{op}: lam must be >= 0 and finite (not NaN)")
    big = lam > POISSON_NORMAL_ABOVE
    if not big.any():
        # np.asarray: numpy returns a Python int, not an array, for a 0-d rate
        return np.asarray(gen.poisson(lam), np.float64)
    # the exact sampler sees 0 (which draws nothing) where the rate is big, so the
    # stream of the other elements is the one they would have drawn anyway
    out = np.asarray(gen.poisson(np.where(big, 0.0, lam)), np.float64)
    rate = lam[big]
    out[big] = np.maximum(np.rint(rate + np.sqrt(rate) * gen.standard_normal(rate.size)),
                          0.0)
    return out


def _poisson_kernel(inputs, attrs, ctx):
    """shape + lam.shape Poisson draws of the attribute dtype."""
    op = "RandomPoisson"
    lam = _float_param(inputs[1], op, "lam")
    dims = _shape_arg(inputs[0], op, lam.shape)
    dtype = _out_dtype(attrs, op)
    lam64 = np.broadcast_to(lam.astype(np.float64), dims + lam.shape)
    return (_counts_as(_poisson_draws(_rng(attrs, ctx), lam64, op), dtype, op),)


# ------------------------------------------------------------- the implicit gradient

_STEP = 1e-3


def _dp_da(a, x):
    """dP(a, x)/da (float64 arrays of one shape) by a five-point central difference;
    where P > 1/2 through Q = 1 - P, whose small values keep their relative accuracy."""
    h = _STEP * a
    upper = special.igamma(a, x) > 0.5
    fn = np.where(upper, -1.0, 1.0)

    def f(aa):
        return np.where(upper, special.igammac(aa, x), special.igamma(aa, x))

    diff = (f(a - 2 * h) - 8 * f(a - h) + 8 * f(a + h) - f(a + 2 * h)) / (12 * h)
    return fn * diff


def gamma_sample_grad(alpha, sample):
    """d sample / d alpha of unit-rate gamma draws at fixed quantile (float64 arrays):
    -(dP/da) / density, 0 where the sample is 0 or not finite."""
    a, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(sample, np.float64))
    shape = a.shape
    a, x = a.reshape(-1).copy(), x.reshape(-1).copy()
    out = np.zeros(a.shape)
    ok = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    if ok.any():
        aa, xx = a[ok], x[ok]
        log_density = (aa - 1.0) * np.log(xx) - xx - special.lgamma(aa)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            g = -_dp_da(aa, xx) * np.exp(-log_density)
        out[ok] = np.where(np.isfinite(g), g, 0.0)
    return out.reshape(shape)


def _gamma_grad_kernel(inputs, attrs, ctx):
    """d sample / d alpha (broadcast shape, alpha's dtype)."""
    alpha = _float_param(inputs[0], "RandomGammaGrad", "alpha")
    sample = _float_param(inputs[1], "RandomGammaGrad", "sample")
    try:
        np.broadcast_shapes(alpha.shape, sample.shape)
    except ValueError:
        raise ShapeError(f"RandomGammaGrad: alpha {list(alpha.shape)} and sample "
                         f"{list(sample.shape)} do not broadcast") from None
    with np.errstate(all="ignore"):
        g = gamma_sample_grad(alpha, sample)
    return (g.astype(alpha.dtype),)


def _gamma_gradient(b, op, grads):
    """[None for shape(/seed), d loss / d alpha]: the implicit gradient, summed over the
    sample dims (which lead, so SumToShapeOf finds them)."""
    (g,) = grads
    alpha = op.inputs[-1]
    sample = op.outputs[0]
    partial = b.op("RandomGammaGrad", [alpha, sample], {}, domain=_OG)
    grad = b.op("SumToShapeOf", [b.op("Mul", [g, partial]), alpha])
    return [None] * (len(op.inputs) - 1) + [grad]


# ------------------------------------------------------------------ stateless draws

def _generator(seed, op: str) -> np.random.Generator:
    """numpy's Philox generator keyed by the seed pair.

    Raises:
        ShapeError: seed is not two int32/int64 values.
    """
    s = np.asarray(seed)
    if s.shape != (2,) or s.dtype not in (np.int32, np.int64):
        raise ShapeError(f"{op}: seed must be a shape-[2] int32 or int64 tensor, got "
                         f"{s.dtype} of shape {list(s.shape)}")
    key = s.astype(np.int64).view(np.uint64)
    return np.random.Generator(np.random.Philox(key=key))


def _unit_floats(gen, dims, dtype) -> np.ndarray:
    """Uniform [0, 1) of dtype: rounding a float64 draw up to 1 is replaced by the
    largest value below it, so the range stays half-open."""
    dtype = np.dtype(dtype)
    if dtype in (np.float32, np.float64):
        return gen.random(dims, dtype=dtype)
    below = np.nextafter(np.float32(1), np.float32(0)).astype(dtype) \
        if dtype.name == "bfloat16" else np.nextafter(dtype.type(1), dtype.type(0))
    return np.minimum(gen.random(dims).astype(dtype), below)


def _stateless_setup(inputs, op):
    return _shape_arg(inputs[0], op), _generator(inputs[1], op)


def _stateless_uniform_kernel(inputs, attrs, ctx):
    """Uniform [0, 1) floats."""
    dims, gen = _stateless_setup(inputs, "StatelessRandomUniform")
    return (_unit_floats(gen, dims, _out_dtype(attrs, "StatelessRandomUniform")),)


def _stateless_uniform_int_kernel(inputs, attrs, ctx):
    """Uniform integers in [minval, maxval) of minval's dtype.

    Raises:
        ExecutionError: minval >= maxval.
    """
    op = "StatelessRandomUniformInt"
    dims, gen = _stateless_setup(inputs, op)
    lo, hi = np.asarray(inputs[2]), np.asarray(inputs[3])
    if lo.shape != () or hi.shape != ():
        raise ShapeError(f"{op}: minval and maxval must be scalars")
    if lo.dtype.kind not in "iu" or lo.dtype != hi.dtype:
        raise ShapeError(f"{op}: minval and maxval must be integers of one dtype, got "
                         f"{lo.dtype} and {hi.dtype}")
    low, high = int(lo), int(hi)
    if not low < high:
        raise ExecutionError(f"{op}: need minval < maxval, got {low} and {high}")
    # a uint64 maxval beyond int64 needs numpy's uint64 draws (minval is >= 0 then)
    kind = np.uint64 if high > np.iinfo(np.int64).max else np.int64
    return (gen.integers(low, high, dims, dtype=kind).astype(lo.dtype),)


def _stateless_normal_kernel(inputs, attrs, ctx):
    """Standard normal floats."""
    dims, gen = _stateless_setup(inputs, "StatelessRandomNormal")
    dtype = _out_dtype(attrs, "StatelessRandomNormal")
    return (gen.standard_normal(dims).astype(dtype),)


def _stateless_truncated_kernel(inputs, attrs, ctx):
    """Standard normal floats within (-2, 2): values outside are drawn again (TF's rule)."""
    dims, gen = _stateless_setup(inputs, "StatelessTruncatedNormal")
    dtype = _out_dtype(attrs, "StatelessTruncatedNormal")
    z = gen.standard_normal(dims)
    bad = np.abs(z) >= 2.0
    while bad.any():   # 4.6% redrawn each round: ends after a few rounds
        z[bad] = gen.standard_normal(int(bad.sum()))
        bad = np.abs(z) >= 2.0
    return (z.astype(dtype),)


def _stateless_multinomial_kernel(inputs, attrs, ctx):
    """num_samples class indices per row of unnormalised log-probabilities (the rules
    of random.py's Multinomial for +inf, NaN and all -inf rows).

    Raises:
        ShapeError: logits are not 2-D floats or num_samples not a scalar >= 0.
    """
    logits = _float_param(inputs[0], "StatelessMultinomial", "logits").astype(np.float64)
    count = np.asarray(inputs[1])
    if count.shape != () or count.dtype.kind not in "iu" or int(count) < 0:
        raise ShapeError("StatelessMultinomial: num_samples must be an integer scalar >= 0")
    gen = _generator(inputs[2], "StatelessMultinomial")
    if logits.ndim != 2:
        raise ShapeError(f"StatelessMultinomial: logits must be (batch, classes), got "
                         f"{list(logits.shape)}")
    dtype = _out_dtype(attrs, "StatelessMultinomial")
    rows, classes = logits.shape
    check_sample_count((rows, int(count)), "StatelessMultinomial")
    if classes == 0:
        if rows and int(count):
            raise ShapeError("StatelessMultinomial: logits have no classes to draw from")
        return (np.zeros((rows, int(count)), dtype),)
    if np.isnan(logits).any() or np.isneginf(logits).all(axis=1).any():
        raise ShapeError("StatelessMultinomial: a row of logits holds a NaN or only -inf; "
                         "it defines no distribution")
    return (categorical_draws(logits, gen.random((rows, int(count)))).astype(dtype),)


def _broadcast_param(x, dims, op: str, what: str) -> np.ndarray:
    """x as float64, broadcast (a view) to the output shape dims.

    Raises:
        ShapeError: x is not real numbers or does not broadcast to dims.
    """
    x = np.asarray(x)
    if x.dtype.kind not in "biuf" and x.dtype.name != "bfloat16":
        raise ShapeError(f"{op}: {what} must be real numbers, got {x.dtype}")
    try:
        return np.broadcast_to(x.astype(np.float64), dims)
    except ValueError:
        raise ShapeError(f"{op}: {what} of shape {list(np.shape(x))} does not broadcast to "
                         f"the output shape {list(dims)}") from None


def _stateless_binomial_kernel(inputs, attrs, ctx):
    """Binomial(counts, probs) draws of the output shape (counts, probs broadcast), with
    TF's rules at the edges: counts <= 0 or probs <= 0 give 0, probs >= 1 give counts,
    a NaN count or prob gives NaN.

    Raises:
        ExecutionError: a count to draw from (probs strictly between 0 and 1) is +inf,
            not a whole number, or 2**63 or more; or a result does not fit an integer
            output dtype (NaN, or beyond its range).
    """
    op = "StatelessRandomBinomial"
    dims, gen = _stateless_setup(inputs, op)
    dtype = _out_dtype(attrs, op)
    n = _broadcast_param(inputs[2], dims, op, "counts")
    p = _broadcast_param(inputs[3], dims, op, "probs")
    with np.errstate(invalid="ignore"):
        nan = np.isnan(n) | np.isnan(p)
        zero = ~nan & ((n <= 0) | (p <= 0))       # TF: no trials or no chance
        full = ~nan & ~zero & (p >= 1)            # TF: every trial succeeds
        draw = ~nan & ~zero & ~full
        bad = draw & ((n == np.inf) | (n != np.floor(n)) | (n >= 2.0 ** 63))
    if bad.any():
        raise ExecutionError(f"{op}: counts must be whole numbers below 2**63 (and not "
                             f"+inf), got {float(n[bad][0]):.6g}")
    # numpy draws nothing for n = 0 or p = 0, so the elements outside `draw` use no
    # random numbers: counts > 0 with probs in (0, 1) get the values they always had
    drawn = np.asarray(gen.binomial(np.where(draw, n, 0).astype(np.int64),
                                    np.where(draw, p, 0.0)), np.float64)
    out = np.where(full, n, np.where(nan, np.nan, np.where(zero, 0.0, drawn)))
    return (_counts_as(out, dtype, op),)


def _stateless_poisson_kernel(inputs, attrs, ctx):
    """Poisson(lam) draws of the output shape (lam broadcast)."""
    op = "StatelessRandomPoisson"
    dims, gen = _stateless_setup(inputs, op)
    dtype = _out_dtype(attrs, op)
    lam = _broadcast_param(_float_param(inputs[2], op, "lam"), dims, op, "lam")
    return (_counts_as(_poisson_draws(gen, lam, op), dtype, op),)


def _stateless_gamma_kernel(inputs, attrs, ctx):
    """Unit-rate gamma draws of the output shape (alpha broadcast; alpha's dtype)."""
    op = "StatelessRandomGamma"
    dims, gen = _stateless_setup(inputs, op)
    alpha = _float_param(inputs[2], op, "alpha")
    a = _broadcast_param(alpha, dims, op, "alpha")
    if a.size and np.any(~(alpha.astype(np.float64) > 0)):
        raise ExecutionError(f"{op}: alpha must be > 0 (and not NaN)")
    return (_floor_tiny(gen.standard_gamma(a), alpha.dtype),)


# --------------------------------------------------------------------------- inference

def _static_dims(info):
    """The output dims from a shape input whose value is known while building."""
    if info.value is not None:
        return tuple(int(d) for d in np.asarray(info.value).reshape(-1))
    if info.shape is not None and len(info.shape) == 1 and info.shape[0] is not None:
        return (None,) * info.shape[0]
    return None


def _attr_dtype(attrs):
    try:
        return onnx_type_to_numpy(attrs["dtype"]) if attrs.get("dtype") is not None else None
    except (KeyError, ValueError, OpAttributeError):
        return None


def _check_float_info(info, op, what):
    if info.dtype is not None and np.dtype(info.dtype).name not in _FLOAT_NAMES:
        raise ShapeError(f"{op}: {what} must be float, got {info.dtype}")


def _prefix_infer(op, what):
    """shape + param.shape, param's dtype (or the dtype attribute)."""
    def infer(attrs, inputs):
        shape_info, param = inputs[0], inputs[-1]
        _check_float_info(param, op, what)
        dims = _static_dims(shape_info)
        out = None if dims is None or param.shape is None else dims + tuple(param.shape)
        if out is not None:
            check_sample_count(out, op)   # refused while building, when it is known
        dtype = _attr_dtype(attrs) if "dtype" in attrs else param.dtype
        return [TensorInfo(dtype, out)]
    return infer


def _gamma_grad_infer(attrs, inputs):
    a, s = inputs
    _check_float_info(a, "RandomGammaGrad", "alpha")
    shape = None
    if a.shape is not None and s.shape is not None:
        try:
            known = [d for d in list(a.shape) + list(s.shape)]
            shape = tuple(np.broadcast_shapes(tuple(1 if d is None else d for d in a.shape),
                                              tuple(1 if d is None else d for d in s.shape)))
            if None in known:
                shape = None
        except ValueError:
            raise ShapeError(f"RandomGammaGrad: alpha {list(a.shape)} and sample "
                             f"{list(s.shape)} do not broadcast") from None
    return [TensorInfo(a.dtype, shape)]


def _stateless_infer(op: str, dtype_from=None):
    """The shape input's value as the output shape (refused above MAX_SAMPLE_ELEMENTS);
    dtype from the attribute or from input `dtype_from`."""
    def infer(attrs, inputs):
        dims = _static_dims(inputs[0])
        if dims is not None:
            check_sample_count(dims, op)   # refused while building, when it is known
        dtype = inputs[dtype_from].dtype if dtype_from is not None else _attr_dtype(attrs)
        return [TensorInfo(dtype, dims)]
    return infer


def _multinomial_infer(attrs, inputs):
    logits, count = inputs[0], inputs[1]
    rows = logits.shape[0] if logits.shape is not None and len(logits.shape) == 2 else None
    n = int(np.asarray(count.value)) if count.value is not None and \
        np.asarray(count.value).shape == () else None
    check_sample_count((rows, n), "StatelessMultinomial")
    return [TensorInfo(_attr_dtype(attrs), (rows, n))]


_DOMAIN = {"domain": _OG, "since_version": 1}
_SEED = ("seed", "float", None)
_guard = memory_guarded

OPS = (
    define("RandomGamma", ["shape", "alpha"], ["output"],
           _guard("RandomGamma", _gamma_kernel), attrs=[_SEED],
           infer=_prefix_infer("RandomGamma", "alpha"), gradient=_gamma_gradient,
           stateful=True, **_DOMAIN),
    define("RandomGammaGrad", ["alpha", "sample"], ["output"],
           _guard("RandomGammaGrad", _gamma_grad_kernel), infer=_gamma_grad_infer,
           **_DOMAIN),
    define("RandomPoisson", ["shape", "lam"], ["output"],
           _guard("RandomPoisson", _poisson_kernel), attrs=[("dtype", "int", 1), _SEED],
           infer=_prefix_infer("RandomPoisson", "lam"), stateful=True, **_DOMAIN),
    define("StatelessMultinomial", ["logits", "num_samples", "seed"], ["output"],
           _guard("StatelessMultinomial", _stateless_multinomial_kernel),
           attrs=[("dtype", "int", 7)], infer=_multinomial_infer, **_DOMAIN),
    define("StatelessRandomBinomial", ["shape", "seed", "counts", "probs"], ["output"],
           _guard("StatelessRandomBinomial", _stateless_binomial_kernel),
           attrs=[("dtype", "int", 6)], infer=_stateless_infer("StatelessRandomBinomial"),
           **_DOMAIN),
    define("StatelessRandomGamma", ["shape", "seed", "alpha"], ["output"],
           _guard("StatelessRandomGamma", _stateless_gamma_kernel),
           infer=_stateless_infer("StatelessRandomGamma", 2), gradient=_gamma_gradient,
           **_DOMAIN),
    define("StatelessRandomNormal", ["shape", "seed"], ["output"],
           _guard("StatelessRandomNormal", _stateless_normal_kernel),
           attrs=[("dtype", "int", 1)], infer=_stateless_infer("StatelessRandomNormal"),
           **_DOMAIN),
    define("StatelessRandomPoisson", ["shape", "seed", "lam"], ["output"],
           _guard("StatelessRandomPoisson", _stateless_poisson_kernel),
           attrs=[("dtype", "int", 6)], infer=_stateless_infer("StatelessRandomPoisson"),
           **_DOMAIN),
    define("StatelessRandomUniform", ["shape", "seed"], ["output"],
           _guard("StatelessRandomUniform", _stateless_uniform_kernel),
           attrs=[("dtype", "int", 1)], infer=_stateless_infer("StatelessRandomUniform"),
           **_DOMAIN),
    define("StatelessRandomUniformInt", ["shape", "seed", "minval", "maxval"], ["output"],
           _guard("StatelessRandomUniformInt", _stateless_uniform_int_kernel),
           infer=_stateless_infer("StatelessRandomUniformInt", 2), **_DOMAIN),
    define("StatelessTruncatedNormal", ["shape", "seed"], ["output"],
           _guard("StatelessTruncatedNormal", _stateless_truncated_kernel),
           attrs=[("dtype", "int", 1)], infer=_stateless_infer("StatelessTruncatedNormal"),
           **_DOMAIN),
)

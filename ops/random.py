"""Operators: random generators (RandomUniform, RandomNormal, their *Like forms,
Bernoulli, Multinomial).

Values come from the executor's generator (`ctx.rng`), or, when the `seed` attribute
is given, from a generator seeded with it (the float seed's bit pattern is the integer
seed, so distinct float seeds give distinct streams). As in onnxruntime and TF1, a
seeded node's stream advances from run to run and starts over in a new session: the
executor keeps one generator per node in its state (`NODE_KEY`); a kernel called on
its own draws the stream's start every time. All are `stateful`: never
constant-folded. Draws are made in float64 and cast to the requested dtype.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .elementwise import onnx_type_to_numpy
from .registry import NODE_KEY, KernelContext, TensorInfo, define


def _rng(attrs, ctx) -> np.random.Generator:
    seed = attrs.get("seed")
    if seed is None:
        return (ctx if ctx is not None else KernelContext()).rng
    bits = int(np.frombuffer(np.float64(seed).tobytes(), dtype=np.uint64)[0])
    node = attrs.get(NODE_KEY)
    state = getattr(ctx, "state", None) if node is not None else None
    if state is None:
        return np.random.default_rng(bits)
    key = ("random stream", node)
    rng = state.get(key)
    if rng is None:  # two threads may get here at once: both take the one stored
        rng = state.setdefault(key, np.random.default_rng(bits))
    return rng


def _dtype(attrs, fallback, op):
    if attrs.get("dtype") is None:
        if fallback is None:
            raise OpAttributeError(f"{op}: dtype is required")
        return np.dtype(fallback)
    return onnx_type_to_numpy(attrs["dtype"])


def _cast(values, dtype):
    return values.astype(np.float32).astype(dtype) if dtype.kind not in "fiub" \
        else values.astype(dtype)


def _uniform(shape, attrs, ctx, dtype):
    r = _rng(attrs, ctx).random(shape)
    return (_cast(attrs["low"] + r * (attrs["high"] - attrs["low"]), dtype),)


def _normal(shape, attrs, ctx, dtype):
    r = _rng(attrs, ctx).standard_normal(shape)
    return (_cast(attrs["mean"] + r * attrs["scale"], dtype),)


def _shape_attr(attrs, op):
    shape = tuple(int(d) for d in attrs["shape"])
    if any(d < 0 for d in shape):
        raise ShapeError(f"{op}: negative dim in shape {list(shape)}")
    return shape


def _random_uniform_kernel(inputs, attrs, ctx):
    """Uniform values in [low, high) of the attribute `shape`, drawn in float64: rounding
    to float16/bfloat16 (or float32, rarely) can give `high` itself, as in ONNX's
    reference (the spec promises no half-open range)."""
    return _uniform(_shape_attr(attrs, "RandomUniform"), attrs, ctx,
                    _dtype(attrs, None, "RandomUniform"))


def _random_normal_kernel(inputs, attrs, ctx):
    """Normal(mean, scale) values of the attribute `shape`."""
    return _normal(_shape_attr(attrs, "RandomNormal"), attrs, ctx,
                   _dtype(attrs, None, "RandomNormal"))


def _random_uniform_like_kernel(inputs, attrs, ctx):
    """Uniform values shaped like the input (dtype: attribute, else the input's)."""
    x = np.asarray(inputs[0])
    return _uniform(x.shape, attrs, ctx, _dtype(attrs, x.dtype, "RandomUniformLike"))


def _random_normal_like_kernel(inputs, attrs, ctx):
    """Normal values shaped like the input (dtype: attribute, else the input's)."""
    x = np.asarray(inputs[0])
    return _normal(x.shape, attrs, ctx, _dtype(attrs, x.dtype, "RandomNormalLike"))


def _bernoulli_kernel(inputs, attrs, ctx):
    """1 with probability p (the input), else 0."""
    p = np.asarray(inputs[0])
    draw = _rng(attrs, ctx).random(p.shape) < p.astype(np.float64)
    return (_cast(draw, _dtype(attrs, p.dtype, "Bernoulli")),)


def _multinomial_kernel(inputs, attrs, ctx):
    """`sample_size` class indices per row of unnormalised log-probabilities.

    A +inf logit is the limit of a logit growing without bound: its class is drawn
    every time (several +inf in a row share the draws equally). A row holding a NaN, or
    only -inf, is no distribution at all: refused (onnxruntime skips +inf and NaN
    classes and returns the out-of-range index `classes` for an all -inf row; drawing
    class 0 every time, as here before, hid the bad input).

    Raises:
        ShapeError: the input is not 2-D, or a row holds a NaN or only -inf.
        OpAttributeError: dtype is not int32 or int64.
    """
    logits = np.asarray(inputs[0]).astype(np.float64)
    if logits.ndim != 2:
        raise ShapeError(f"Multinomial: input must be (batch, classes), got {logits.shape}")
    dtype = _dtype(attrs, None, "Multinomial")
    if dtype not in (np.int32, np.int64):
        raise OpAttributeError(f"Multinomial: dtype must be int32 or int64, got {dtype}")
    if logits.shape[1]:
        nan_rows = np.flatnonzero(np.isnan(logits).any(axis=1))
        if nan_rows.size:
            raise ShapeError(f"Multinomial: row {int(nan_rows[0])} of the input holds a NaN "
                             "logit; it defines no distribution to draw from")
        dead = np.flatnonzero(np.isneginf(logits).all(axis=1))
        if dead.size:
            raise ShapeError(f"Multinomial: row {int(dead[0])} of the input is all -inf "
                             "(every class has probability 0); it defines no distribution")
    u = _rng(attrs, ctx).random((logits.shape[0], attrs["sample_size"]))
    return (categorical_draws(logits, u).astype(dtype),)


def categorical_draws(logits: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The classes (int64, rows x draws) that uniform draws u in [0, 1) pick from each
    row of float64 logits (rows x classes) by inverting the row's CDF; a +inf logit
    takes all of its row's probability. Rows must define a distribution."""
    top = logits.max(axis=1, keepdims=True) if logits.shape[1] else logits[:, :1]
    with np.errstate(invalid="ignore"):
        p = np.exp(logits - top)
    certain = np.isposinf(logits)
    p = np.where(certain.any(axis=1, keepdims=True), certain.astype(np.float64), p)
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    idx = (cdf[:, None, :] <= u[:, :, None]).sum(axis=2)
    return np.minimum(idx, logits.shape[1] - 1)


def _infer_dtype(attrs, fallback):
    try:
        return _dtype(attrs, fallback, "")
    except OpAttributeError:
        return None


def _shape_infer(attrs, inputs):
    return [TensorInfo(_infer_dtype(attrs, None), tuple(int(d) for d in attrs["shape"]))]


def _like_infer(attrs, inputs):
    return [TensorInfo(_infer_dtype(attrs, inputs[0].dtype), inputs[0].shape)]


def _multinomial_infer(attrs, inputs):
    batch = inputs[0].shape[0] if inputs[0].shape is not None else None
    return [TensorInfo(_infer_dtype(attrs, None), (batch, attrs["sample_size"]))]


_UNIFORM = [("high", "float", 1.0), ("low", "float", 0.0), ("seed", "float", None)]
_NORMAL = [("mean", "float", 0.0), ("scale", "float", 1.0), ("seed", "float", None)]

OPS = (
    define("Bernoulli", ["input"], ["output"], _bernoulli_kernel,
           attrs=[("dtype", "int", None), ("seed", "float", None)], infer=_like_infer,
           stateful=True, since_version=22),
    define("Multinomial", ["input"], ["output"], _multinomial_kernel,
           attrs=[("dtype", "int", 6), ("sample_size", "int", 1), ("seed", "float", None)],
           infer=_multinomial_infer, stateful=True, since_version=22),
    define("RandomNormal", [], ["output"], _random_normal_kernel,
           attrs=[("dtype", "int", 1), ("shape", "ints")] + _NORMAL, infer=_shape_infer,
           stateful=True, since_version=22),
    define("RandomNormalLike", ["input"], ["output"], _random_normal_like_kernel,
           attrs=[("dtype", "int", None)] + _NORMAL, infer=_like_infer, stateful=True,
           since_version=22),
    define("RandomUniform", [], ["output"], _random_uniform_kernel,
           attrs=[("dtype", "int", 1), ("shape", "ints")] + _UNIFORM, infer=_shape_infer,
           stateful=True, since_version=22),
    define("RandomUniformLike", ["input"], ["output"], _random_uniform_like_kernel,
           attrs=[("dtype", "int", None)] + _UNIFORM, infer=_like_infer, stateful=True,
           since_version=22),
)

_GLOBAL_STREAM = ("reference output was drawn from numpy's global RandomState at test "
                  "generation (mid-stream, after the input's draws); random values "
                  "cannot match it, only shape/dtype")
KNOWN_FAILURES: dict[str, str] = {"test_bernoulli": _GLOBAL_STREAM}
# The reasons above whose cases compare a fresh draw with a stored random reference: a
# draw can still match it by chance (test_bernoulli's ten values in about 0.5% of runs,
# measured), so a test expecting these failures must not treat a pass as an error.
CHANCE_MATCHES = frozenset({_GLOBAL_STREAM})

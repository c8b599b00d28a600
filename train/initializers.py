"""Variable initializers, as TF1's `tf.*_initializer` classes (init_ops).

An initializer is called as `init(shape, dtype=None, partition_info=None)` by
`og.get_variable` (or by hand) and returns the initial value of a variable of that
shape and dtype.

Design choice: every initializer here returns a concrete numpy array computed while
the graph is built, not ops that compute it in the Session. The variable then holds its
initial value as data, so a saved `.og` file carries it, any runtime that reads the file
starts from the same numbers, and a new Session needs no initializer run. The random
ones draw with numpy from a generator seeded by TF1's rules:

- neither the graph seed (`og.set_random_seed`) nor the initializer's `seed` is set:
  fresh entropy, so every build gives other values (as TF1);
- otherwise the generator is seeded with (graph seed, op seed); a missing graph seed
  is TF1's default 87654321, and a missing op seed is replaced by the initializer's
  unique name scope (under get_variable, "<variable>/Initializer/<kind>/"), as TF1
  derives it from the graph's op count: building the same graph twice gives the same
  values, two variables of one graph get different ones, and the same graph seed and
  op seed give the same values in any graph.

Unlike TF1, where the initializer op draws again each time it runs, re-running a
variable's initializer here restores the same initial values. (og.nn's layers draw
instead from one generator per graph, seeded with 0 when no graph seed is set, so
their unseeded builds repeat; these initializers follow TF1.)
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import OneGraphError
from ..format import DType
from . import graph as _g
from .api_extra import _DEFAULT_GRAPH_SEED, _python_number
from .graph import check_seed

# The floating-point dtypes of TF1 (`dtype.is_floating`).
FLOATS = (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64)
# std of a standard normal truncated to [-2, 2] (scipy.stats.truncnorm.std(a=-2, b=2)):
# TF divides by it so a truncated draw has the variance the scaling asks for.
TRUNCATED_STDDEV = 0.87962566103423978
# TF1's truncated normal redraws values more than this many stddevs from the mean.
_TRUNCATION = 2.0
_MODES = ("fan_in", "fan_out", "fan_avg")
_DISTRIBUTIONS = ("normal", "truncated_normal", "untruncated_normal", "uniform")


# --------------------------------------------------------------------------- helpers

def _dims(shape, what: str) -> tuple:
    """`shape` as a tuple of known ints.

    Raises:
        TypeError: shape is not a list/tuple of ints (names `what`).
        ValueError: a dim is unknown (None or -1) or negative.
    """
    try:
        dims = _g._shape_tuple(shape, f"{what}: shape")
    except OneGraphError as e:  # ShapeError: a negative dim
        raise ValueError(str(e)) from None
    if dims is None or None in dims:
        raise ValueError(f"{what}: shape must be fully known to draw values, got "
                         f"{_g._brief(shape)}")
    return dims


def _dtype(dtype, what: str, floats_only: bool) -> DType:
    """`dtype` as a DType, floating point when `floats_only` (TF1's assertion).

    Raises:
        TypeError: dtype names no dtype (names `what`).
        ValueError: floats_only and dtype is not float16/bfloat16/float32/float64.
    """
    try:
        dt = _g.as_dtype(dtype)
    except OneGraphError as e:
        raise TypeError(f"{what}: dtype: {e}") from None
    if floats_only and dt not in FLOATS:
        raise ValueError(f"{what}: dtype must be a floating point type, got "
                         f"{dt.short_name}")
    return dt


def _to_dtype(values: np.ndarray, dt: DType, what: str) -> np.ndarray:
    """The float64 draw `values` rounded to dt.

    Raises:
        ValueError: dt has no numpy type to compute in (bfloat16 without ml_dtypes).
    """
    if dt.raw_storage:
        raise ValueError(f"{what}: drawing {dt.short_name} values needs the ml_dtypes "
                         "package")
    return np.asarray(values).astype(dt.numpy)


def _generator(seed: int | None, kind: str) -> np.random.Generator:
    """The numpy generator of one draw, seeded by TF1's graph/op seed rules (see the
    module docstring); `kind` names the draw's name scope (TF1's op name)."""
    g = _g.get_default_graph()
    with g.name_scope(kind) as scope:
        pass
    if seed is None and g.seed is None:
        return np.random.default_rng()
    graph_seed = _DEFAULT_GRAPH_SEED if g.seed is None else int(g.seed)
    # The unique scope stands in for a missing op seed; as bytes it is one big int of
    # at least 14 bytes, so it never equals an explicit (int64) op seed.
    op_seed = int.from_bytes(scope.encode(), "big") if seed is None else seed
    return np.random.default_rng(np.random.SeedSequence([graph_seed, op_seed]))


def _truncated_standard_normal(rng: np.random.Generator, dims: tuple) -> np.ndarray:
    """Standard normal values within 2 of 0: values beyond are redrawn, as TF1 does."""
    z = np.asarray(rng.standard_normal(dims))
    bad = np.abs(z) > _TRUNCATION
    while bad.any():
        z[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(z) > _TRUNCATION
    return z


def _uniform_floats(rng, dims: tuple, lo: float, hi: float, dt: DType, what: str):
    """Uniform values in [lo, hi) rounded to dt; a value that rounds up to hi becomes
    the largest value below it, since TF's range excludes maxval."""
    values = _to_dtype(lo + (hi - lo) * rng.random(dims), dt, what)
    if lo < hi and dt in (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64):
        values = np.minimum(values, _largest_below(hi, dt.numpy))
    return values


def _largest_below(hi: float, dtype) -> np.ndarray:
    """The largest value of float dtype below hi (hi itself exactly representable or
    not), by its bit pattern: np.nextafter has no bfloat16 loop."""
    x = np.asarray(hi, dtype)
    if float(x) < hi:
        return x
    bits = x.view(np.dtype(f"u{x.itemsize}")).copy()
    one = bits.dtype.type(1)  # numpy 1.x would make uint - int an int64 (or float64)
    if float(x) > 0:
        bits -= one                     # a smaller magnitude
    elif float(x) == 0:
        bits = np.asarray(1 << (8 * x.itemsize - 1) | 1, bits.dtype)  # -smallest
    else:
        bits += one                     # a larger negative magnitude
    return bits.view(dtype)


def compute_fans(shape) -> tuple:
    """(fan_in, fan_out) of a weight shape, by TF1's rule: a scalar has 1 and 1, a
    vector its length twice, a matrix (in, out), and a kernel of rank >= 3 is taken
    as TF's (..., in_channels, out_channels): fan_in = receptive field * in,
    fan_out = receptive field * out, the receptive field being the product of the
    leading dims (a [3, 3, 16, 32] conv kernel: 144 and 288). An ONNX-layout
    (out, in, kh, kw) kernel would need its dims reordered first.

    Raises:
        TypeError: shape is not a list/tuple of ints.
        ValueError: a dim is unknown or negative.
    """
    dims = _dims(shape, "compute_fans")
    if not dims:
        return 1, 1
    if len(dims) == 1:
        return dims[0], dims[0]
    receptive = math.prod(dims[:-2])
    return dims[-2] * receptive, dims[-1] * receptive


# --------------------------------------------------------------------------- classes

class Initializer:
    """Base class: subclasses return the initial value for (shape, dtype).

    `dtype` set at construction is the default of `__call__`'s dtype argument.
    """

    _what = "initializer"
    _floats_only = False

    def __init__(self, dtype=DType.FLOAT32):
        self.dtype = _dtype(dtype, self._what, self._floats_only)

    def _call_dtype(self, dtype) -> DType:
        """The dtype of one call: `dtype`, or the initializer's own.

        Raises:
            TypeError: dtype names no dtype.
            ValueError: the initializer draws floats and dtype is not one.
        """
        if dtype is None:
            return self.dtype
        return _dtype(dtype, self._what, self._floats_only)

    def __call__(self, shape, dtype=None, partition_info=None):
        """The initial value of `shape` in `dtype` (default: the initializer's);
        partition_info is TF1's (only variance scaling reads its full_shape).

        Raises:
            NotImplementedError: always, in this base class.
        """
        raise NotImplementedError(f"{type(self).__name__} does not define __call__")

    def __repr__(self) -> str:
        return f"<og.{type(self).__name__} dtype={self.dtype.short_name}>"


class Zeros(Initializer):
    """All zeros (False for bool, "" for string), as tf.zeros_initializer.

    Raises:
        TypeError: dtype names no dtype.
    """

    _what = "zeros_initializer"

    def __call__(self, shape, dtype=None, partition_info=None):
        """An array of zeros of `shape` and `dtype` (default: the initializer's).

        Raises:
            TypeError: shape is not a list of ints, or dtype names no dtype.
            ValueError: a dim is unknown or negative.
        """
        dims = _dims(shape, self._what)
        dt = self._call_dtype(dtype)
        if dt is DType.STRING:
            return np.full(dims, "", dtype=object)
        return np.zeros(dims, dt.numpy)


class Ones(Initializer):
    """All ones (True for bool), as tf.ones_initializer.

    Raises:
        TypeError: dtype names no dtype.
    """

    _what = "ones_initializer"

    def __call__(self, shape, dtype=None, partition_info=None):
        """An array of ones of `shape` and `dtype` (default: the initializer's).

        Raises:
            TypeError: shape is not a list of ints, or dtype names no dtype.
            ValueError: a dim is unknown or negative, or dtype is string.
        """
        dims = _dims(shape, self._what)
        dt = self._call_dtype(dtype)
        if dt is DType.STRING:
            raise ValueError(f"{self._what}: a string tensor has no ones")
        return np.ones(dims, dt.numpy)


class Constant(Initializer):
    """Values given up front, as tf.constant_initializer(value, dtype, verify_shape).

    `value` (a scalar, list, tuple or numpy array) is laid out in C order over the
    requested shape: a scalar fills it, a list of exactly the right size is reshaped,
    a shorter one is padded with its last element (zeros if it is empty), and a longer
    one is refused, all as TF1 does.

    Raises:
        TypeError: value is not a scalar, list, tuple or numpy array, dtype names no
            dtype, or verify_shape is not a bool.
    """

    _what = "constant_initializer"

    def __init__(self, value=0, dtype=DType.FLOAT32, verify_shape: bool = False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError(f"constant_initializer: invalid type for initial value: "
                            f"{type(value).__name__} (expected Python scalar, list or "
                            "tuple of values, or numpy.ndarray)")
        if not isinstance(verify_shape, (bool, np.bool_)):
            raise TypeError(f"constant_initializer: verify_shape must be a bool, got "
                            f"{type(verify_shape).__name__}")
        super().__init__(dtype)
        self.value = value
        self.verify_shape = bool(verify_shape)

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        """The value laid out over `shape` in `dtype` (default: the initializer's).

        Raises:
            TypeError: shape is not a list of ints, dtype names no dtype, the value
                does not convert to dtype (a fraction for an integer type, a str for
                a number...), or verify_shape is on and the value's shape is not
                `shape` ("Expected Tensor's shape: (3, 4), got (8,).").
            ValueError: a dim is unknown or negative, or the value has more
                elements than the shape holds ("Too many elements provided...").
        """
        dims = _dims(shape, self._what)
        dt = self._call_dtype(dtype)
        verify = self.verify_shape if verify_shape is None else bool(verify_shape)
        try:
            values = _g._as_array(self.value, dt)
        except OneGraphError as e:
            raise TypeError(f"{self._what}: {e}") from None
        if verify and values.shape != dims:
            raise TypeError(f"Expected Tensor's shape: {dims}, got {values.shape}.")
        return _lay_out(values.reshape(-1), dims)


def _lay_out(flat: np.ndarray, dims: tuple) -> np.ndarray:
    """`flat` over `dims` in C order, TF1's way: padded with its last element (with
    the dtype's zero when empty, as a tensor proto without values is).

    Raises:
        ValueError: flat holds more elements than dims.
    """
    size = math.prod(dims)
    if flat.size > size:
        raise ValueError(f"Too many elements provided. Needed at most {size}, but "
                         f"received {flat.size}")
    if flat.size == size:
        return flat.reshape(dims)
    fill = flat[-1] if flat.size else np.zeros((), flat.dtype)[()]
    out = np.full(size, fill, dtype=flat.dtype)
    out[:flat.size] = flat
    return out.reshape(dims)


class _Seeded(Initializer):
    """An initializer drawing random values: keeps the checked op seed."""

    def __init__(self, seed=None, dtype=DType.FLOAT32):
        self.seed = check_seed(seed, self._what)
        super().__init__(dtype)


class RandomNormal(_Seeded):
    """Normal(mean, stddev) values, as tf.random_normal_initializer.

    Raises:
        TypeError: mean or stddev is not a number, seed not an int, or dtype names
            no dtype.
        ValueError: seed is negative, or dtype is not floating point.
    """

    _what = "random_normal_initializer"
    _floats_only = True

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=DType.FLOAT32):
        self.mean = _python_number(mean, f"{self._what}: mean")
        self.stddev = _python_number(stddev, f"{self._what}: stddev")
        super().__init__(seed, dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        """Normal values of `shape` in `dtype` (default: the initializer's).

        Raises:
            TypeError: shape is not a list of ints, or dtype names no dtype.
            ValueError: a dim is unknown or negative, or dtype is not floating point.
        """
        dims = _dims(shape, self._what)
        dt = self._call_dtype(dtype)
        z = _generator(self.seed, "random_normal").standard_normal(dims)
        return _to_dtype(z * self.stddev + self.mean, dt, self._what)


class TruncatedNormal(RandomNormal):
    """Normal(mean, stddev) values redrawn until within 2 stddev of the mean, as
    tf.truncated_normal_initializer (their std is about 0.88 * stddev).

    Raises:
        TypeError: mean or stddev is not a number, seed not an int, or dtype names
            no dtype.
        ValueError: seed is negative, or dtype is not floating point.
    """

    _what = "truncated_normal_initializer"

    def __call__(self, shape, dtype=None, partition_info=None):
        """Truncated normal values of `shape` in `dtype` (default: the initializer's).

        Raises:
            TypeError: shape is not a list of ints, or dtype names no dtype.
            ValueError: a dim is unknown or negative, or dtype is not floating point.
        """
        dims = _dims(shape, self._what)
        dt = self._call_dtype(dtype)
        z = _truncated_standard_normal(_generator(self.seed, "truncated_normal"), dims)
        return _to_dtype(z * self.stddev + self.mean, dt, self._what)


class RandomUniform(_Seeded):
    """Uniform values in [minval, maxval), as tf.random_uniform_initializer; maxval
    defaults to 1 for floats and must be given for integer dtypes.

    Raises:
        TypeError: a bound is not a number, seed not an int, or dtype names no dtype.
        ValueError: seed is negative.
    """

    _what = "random_uniform_initializer"

    def __init__(self, minval=0, maxval=None, seed=None, dtype=DType.FLOAT32):
        _python_number(minval, f"{self._what}: minval")
        if maxval is not None:
            _python_number(maxval, f"{self._what}: maxval")
        self.minval, self.maxval = minval, maxval
        super().__init__(seed, dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        """Uniform values of `shape` in `dtype` (default: the initializer's).

        Raises:
            TypeError: shape is not a list of ints, dtype names no dtype, or a bound
                is not an int for an integer dtype.
            ValueError: a dim is unknown or negative; for an integer dtype, maxval
                is missing, minval >= maxval, or a bound is outside the dtype; a
                dtype that is neither integer nor floating point.
        """
        dims = _dims(shape, self._what)
        dt = self._call_dtype(dtype)
        rng = _generator(self.seed, "random_uniform")
        if dt in FLOATS:
            hi = 1.0 if self.maxval is None else float(self.maxval)
            return _uniform_floats(rng, dims, float(self.minval), hi, dt, self._what)
        return self._integers(rng, dims, dt)

    def _integers(self, rng, dims: tuple, dt: DType) -> np.ndarray:
        """Uniform integers in [minval, maxval) of dt.

        Raises:
            TypeError: a bound is not an int.
            ValueError: dt is not an integer type, maxval is missing, or the bounds
                are not minval < maxval within dt's range.
        """
        if dt.numpy.kind not in "iu" or dt.raw_storage:
            raise ValueError(f"{self._what}: dtype must be a floating point or integer "
                             f"type, got {dt.short_name}")
        if self.maxval is None:
            raise ValueError(f"{self._what}: maxval must be given for the integer dtype "
                             f"{dt.short_name}")
        for what, v in (("minval", self.minval), ("maxval", self.maxval)):
            if not isinstance(v, numbers.Integral):
                raise TypeError(f"{self._what}: {what} must be an int for the integer "
                                f"dtype {dt.short_name}, got {_g._brief(v)}")
        lo, hi, info = int(self.minval), int(self.maxval), np.iinfo(dt.numpy)
        if not info.min <= lo < hi <= info.max:
            raise ValueError(f"{self._what}: need minval < maxval within the range of "
                             f"{dt.short_name}, got [{lo}, {hi})")
        return rng.integers(lo, hi, dims, dtype=dt.numpy)


class VarianceScaling(_Seeded):
    """Values whose variance is scale / n, as tf.variance_scaling_initializer, n being
    fan_in, fan_out or their mean (`mode`; fans by `compute_fans`, so kernels are
    taken in TF's (..., in, out) layout):

    - distribution "truncated_normal" (or its alias "normal"): a normal truncated to
      2 stddev, of stddev sqrt(scale / n) / 0.8796... so the truncated values have
      the asked variance;
    - "untruncated_normal": normal of stddev sqrt(scale / n);
    - "uniform": uniform in [-limit, limit), limit = sqrt(3 * scale / n).

    Raises:
        TypeError: scale is not a number, mode or distribution not a str, seed not an
            int, or dtype names no dtype.
        ValueError: scale <= 0, an unknown mode or distribution, a negative seed, or
            dtype is not floating point.
    """

    _what = "variance_scaling_initializer"
    _floats_only = True

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal",
                 seed=None, dtype=DType.FLOAT32):
        self.scale = _python_number(scale, f"{self._what}: scale")
        if not self.scale > 0:
            raise ValueError(f"{self._what}: scale must be a positive number, got {scale}")
        self.mode = _choice(mode, _MODES, f"{self._what}: mode")
        self.distribution = _choice(distribution, _DISTRIBUTIONS,
                                    f"{self._what}: distribution", lower=True)
        super().__init__(seed, dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        """Scaled random values of `shape` in `dtype` (default: the initializer's);
        the fans come from partition_info.full_shape when it is given (TF1's
        partitioned variables).

        Raises:
            TypeError: shape is not a list of ints, or dtype names no dtype.
            ValueError: a dim is unknown or negative, or dtype is not floating point.
        """
        dims = _dims(shape, self._what)
        dt = self._call_dtype(dtype)
        full = dims if partition_info is None else partition_info.full_shape
        variance = self.scale / max(1.0, self._fan(*compute_fans(full)))
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * variance)
            rng = _generator(self.seed, "random_uniform")
            return _uniform_floats(rng, dims, -limit, limit, dt, self._what)
        if self.distribution == "untruncated_normal":
            z = _generator(self.seed, "random_normal").standard_normal(dims)
            return _to_dtype(z * math.sqrt(variance), dt, self._what)
        z = _truncated_standard_normal(_generator(self.seed, "truncated_normal"), dims)
        return _to_dtype(z * (math.sqrt(variance) / TRUNCATED_STDDEV), dt, self._what)

    def _fan(self, fan_in: int, fan_out: int) -> float:
        """The n of scale / n for this initializer's mode."""
        if self.mode == "fan_in":
            return float(fan_in)
        if self.mode == "fan_out":
            return float(fan_out)
        return (fan_in + fan_out) / 2.0


def _choice(value, allowed: tuple, what: str, lower: bool = False) -> str:
    """`value`, one of the strs `allowed` (compared in lower case when `lower`).

    Raises:
        TypeError: value is not a str (names `what`).
        ValueError: it is not one of them.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    key = value.lower() if lower else value
    if key not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}; got {value!r}")
    return key


class GlorotUniform(VarianceScaling):
    """Uniform in [-limit, limit), limit = sqrt(6 / (fan_in + fan_out)), as
    tf.glorot_uniform_initializer (og.get_variable's default for floats).

    Raises:
        TypeError: seed is not an int, or dtype names no dtype.
        ValueError: seed is negative, or dtype is not floating point.
    """

    _what = "glorot_uniform_initializer"

    def __init__(self, seed=None, dtype=DType.FLOAT32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class GlorotNormal(VarianceScaling):
    """Truncated normal of std sqrt(2 / (fan_in + fan_out)), as
    tf.glorot_normal_initializer.

    Raises:
        TypeError: seed is not an int, or dtype names no dtype.
        ValueError: seed is negative, or dtype is not floating point.
    """

    _what = "glorot_normal_initializer"

    def __init__(self, seed=None, dtype=DType.FLOAT32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


class Orthogonal(_Seeded):
    """An orthogonal matrix times `gain`, as tf.orthogonal_initializer: the Q of the
    QR decomposition of a normal matrix, signs fixed by R's diagonal so Q is uniformly
    distributed. A shape of rank > 2 is treated as a (prod(shape[:-1]), shape[-1])
    matrix; with fewer rows than columns the rows are orthonormal, else the columns.

    Raises:
        TypeError: gain is not a number, seed not an int, or dtype names no dtype.
        ValueError: seed is negative, or dtype is not floating point.
    """

    _what = "orthogonal_initializer"
    _floats_only = True

    def __init__(self, gain=1.0, seed=None, dtype=DType.FLOAT32):
        self.gain = _python_number(gain, f"{self._what}: gain")
        super().__init__(seed, dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        """A (flattened) orthogonal matrix of `shape` in `dtype`.

        Raises:
            TypeError: shape is not a list of ints, or dtype names no dtype.
            ValueError: the shape has fewer than 2 dims, a dim is unknown or
                negative, or dtype is not floating point.
        """
        dims = _dims(shape, self._what)
        dt = self._call_dtype(dtype)
        if len(dims) < 2:
            raise ValueError(f"{self._what}: the shape must have at least 2 dims, got "
                             f"{list(dims)}")
        rows, cols = math.prod(dims[:-1]), dims[-1]
        rng = _generator(self.seed, "random_normal")
        if rows * cols == 0:
            return np.zeros(dims, dt.numpy)
        a = rng.standard_normal((cols, rows) if rows < cols else (rows, cols))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return _to_dtype(self.gain * q.reshape(dims), dt, self._what)


class Identity(Initializer):
    """gain times the identity matrix (a rectangular one for a non-square shape), as
    TF1's tf.initializers.identity; 2-D shapes only.

    Raises:
        TypeError: gain is not a number, or dtype names no dtype.
        ValueError: dtype is not a floating point type.
    """

    _what = "identity initializer"
    _floats_only = True

    def __init__(self, gain=1.0, dtype=DType.FLOAT32):
        _python_number(gain, f"{self._what}: gain")
        self.gain = gain
        super().__init__(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        """gain * eye(rows, cols) in `dtype` (default: the initializer's).

        Raises:
            TypeError: shape is not a list of ints, or dtype names no dtype.
            ValueError: the shape is not 2-D (TF's message), or a dim is unknown or
                negative.
        """
        dims = _dims(shape, self._what)
        dt = self._call_dtype(dtype)
        if len(dims) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D "
                             "matrices.")
        return _to_dtype(self.gain * np.eye(*dims), dt, self._what)


class UniformUnitScaling(_Seeded):
    """Uniform values in [-m, m), m = factor * sqrt(3 / n) with n the product of all
    dims but the last (at least 1), which keeps a linear layer's output scale, as TF1's
    tf.uniform_unit_scaling_initializer (deprecated there for variance_scaling).

    Raises:
        TypeError: factor is not a number, seed not an int, or dtype names no dtype.
        ValueError: seed is negative, or dtype is not a floating point type.
    """

    _what = "uniform_unit_scaling_initializer"
    _floats_only = True

    def __init__(self, factor=1.0, seed=None, dtype=DType.FLOAT32):
        _python_number(factor, f"{self._what}: factor")
        self.factor = factor
        super().__init__(seed, dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        """Uniform values of `shape` (partition_info's full shape sets the scale, as
        TF1) in `dtype` (default: the initializer's).

        Raises:
            TypeError: shape is not a list of ints, or dtype names no dtype.
            ValueError: a dim is unknown or negative.
        """
        dims = _dims(shape, self._what)
        dt = self._call_dtype(dtype)
        full = getattr(partition_info, "full_shape", None)
        scale_dims = _dims(full, self._what) if full is not None else dims
        n = max(1.0, float(math.prod(scale_dims[:-1])))
        limit = math.sqrt(3.0 / n) * self.factor
        rng = _generator(self.seed, "uniform_unit_scaling")
        return _uniform_floats(rng, dims, -limit, limit, dt, self._what)


def he_normal(seed=None) -> VarianceScaling:
    """Truncated normal of std sqrt(2 / fan_in), as tf.initializers.he_normal.

    Raises:
        TypeError: seed is not an int.
        ValueError: seed is negative.
    """
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None) -> VarianceScaling:
    """Uniform in +-sqrt(6 / fan_in), as tf.initializers.he_uniform.

    Raises:
        TypeError: seed is not an int.
        ValueError: seed is negative.
    """
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None) -> VarianceScaling:
    """Truncated normal of std sqrt(1 / fan_in), as tf.initializers.lecun_normal.

    Raises:
        TypeError: seed is not an int.
        ValueError: seed is negative.
    """
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None) -> VarianceScaling:
    """Uniform in +-sqrt(3 / fan_in), as tf.initializers.lecun_uniform.

    Raises:
        TypeError: seed is not an int.
        ValueError: seed is negative.
    """
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


# TF1's names (tf.zeros_initializer is the class itself, so `initializer=
# og.zeros_initializer` without parentheses works in get_variable too).
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
random_uniform_initializer = RandomUniform
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
uniform_unit_scaling_initializer = UniformUnitScaling
# tf.initializers' own short names
constant, zeros, ones, identity = Constant, Zeros, Ones, Identity
random_normal, truncated_normal, random_uniform = RandomNormal, TruncatedNormal, RandomUniform
glorot_normal, glorot_uniform, orthogonal = GlorotNormal, GlorotUniform, Orthogonal
variance_scaling, uniform_unit_scaling = VarianceScaling, UniformUnitScaling


# TF1's tf.initializers also names the graph's initializer ops
def global_variables():
    """The op initializing the default graph's global variables (TF1's
    tf.initializers.global_variables). Never raises."""
    from .variables import global_variables_initializer  # (variables imports this module)
    return global_variables_initializer()


def local_variables():
    """The op initializing the default graph's local variables (TF1's
    tf.initializers.local_variables). Never raises."""
    from .variables import local_variables_initializer  # (variables imports this module)
    return local_variables_initializer()


def variables(var_list, name: str = "init"):
    """The op initializing var_list (TF1's tf.initializers.variables).

    Raises:
        TypeError: as og.variables_initializer.
    """
    from .variables import variables_initializer  # (variables imports this module)
    return variables_initializer(var_list, name)


def tables_initializer(name: str = "init_all_tables"):
    """The op initializing the default graph's lookup tables (TF1's
    tf.initializers.tables_initializer; og.lookup). Never raises."""
    from .lookup import tables_initializer as tables  # (lookup builds on much of og)
    return tables(name)


__all__ = [
    "global_variables", "local_variables", "variables", "tables_initializer",
    "Initializer", "compute_fans", "constant_initializer", "glorot_normal_initializer",
    "glorot_uniform_initializer", "he_normal", "he_uniform", "lecun_normal",
    "lecun_uniform", "ones_initializer", "orthogonal_initializer",
    "random_normal_initializer", "random_uniform_initializer",
    "truncated_normal_initializer", "variance_scaling_initializer", "zeros_initializer",
    "uniform_unit_scaling_initializer", "Identity", "UniformUnitScaling",
]

"""TF1's linear-algebra and array functions built from ONNX ops: matrix_band_part,
matrix_diag / matrix_diag_part / matrix_set_diag (with TF's k bands and alignments),
diag / diag_part, trace, matrix_determinant (and slogdet / logdet), cross, norm,
cumprod, roll, repeat, searchsorted, invert_permutation, bincount, unique /
unique_with_counts, setdiff1d and confusion_matrix, plus a `linalg` namespace with
tf.linalg's names for them.

Names, argument order and defaults are tf.compat.v1's. Each function builds registered
ONNX-semantics ops (Trilu, Gather, Pad, Where, ScatterElements, Unique, Det, Compress,
...), so graphs using them export; the index arithmetic of the diagonal functions is
done while building when the matrix sizes are known (constants) and with Range/Shape
ops otherwise. Gradients come from those ops' own rules, except Det's, which is given
here (the cofactor matrix, see `matrix_determinant`). Bad arguments are refused while
building with a message naming the function and the argument; what only the run can
tell (a permutation with a repeat, a negative count) is checked when the graph runs,
as TF1 does, by an og.Assert that an ONNX export leaves out.
"""

from __future__ import annotations

import collections
import math
import types

import numpy as np

from ..errors import GradientNotDefinedError, OneGraphError, ShapeError
from ..format import DType
from . import api
from . import api_extra
from . import api_math
from . import graph as _g
from .api import _bool_arg, _check_axis, _int_arg, _pair, _t
from .api_extra import _cast, _dtype_arg, _numeric, _rank
from .api_math import _checked, _floats
from .gradients import RegisterGradient, gradient_override_map
from .graph import Tensor

int32, int64 = DType.INT32, DType.INT64
_INT64_MAX = np.iinfo(np.int64).max
_INDEX_DTYPES = (int32, int64)
_NUMERIC_OUT = (DType.INT32, DType.INT64, DType.FLOAT16, DType.FLOAT32, DType.FLOAT64)
# Reshape's attributes for a target that may hold a 0 meaning 0 (not "copy the dim")
_KEEP_ZEROS = {"allowzero": 1}


# --------------------------------------------------------------------------- helpers

def _finish(out: Tensor, name) -> Tensor:
    """out, as an Identity named `name` when a name is asked for."""
    return out if name is None else api.identity(out, name=name)


def _i64(g, values) -> Tensor:
    return g.constant(np.asarray(values, np.int64))


def _dim(x: Tensor, axis: int):
    """x's dim `axis` (rank known): a Python int when known while building, else an
    int64 scalar tensor read from x's shape at run time."""
    axis %= len(x.shape)
    if x.shape[axis] is not None:
        return int(x.shape[axis])
    g = x.graph
    d = g.op("Shape", [x], {"start": axis, "end": axis + 1})
    return g.op("Reshape", [d, _i64(g, [])])


def _vec(g, value) -> Tensor:
    """An int or an int64 scalar tensor as an int64 [1] tensor."""
    if isinstance(value, Tensor):
        return g.op("Reshape", [value, _i64(g, [1])])
    return _i64(g, [value])


def _leading_shape(x: Tensor, count: int) -> Tensor:
    """x's first `count` dims as an int64 1-D tensor."""
    if count == 0:
        return _i64(x.graph, np.zeros(0, np.int64))
    return x.graph.op("Shape", [x], {"end": count})


def _shape_of(g, parts: list) -> Tensor:
    """A 1-D int64 shape from pieces: ints, int64 scalar tensors and 1-D tensors."""
    if all(isinstance(p, int) for p in parts):
        return _i64(g, parts)
    pieces = [p if isinstance(p, Tensor) and p.shape is not None and len(p.shape) == 1
              else _vec(g, p) for p in parts]
    return g.op("Concat", pieces, {"axis": 0})


def _merge_last(x: Tensor, count: int, size) -> Tensor:
    """x with its last `count` axes merged into one of `size` (an int or a tensor)."""
    r = len(x.shape)
    if count == 1:
        return x
    g = x.graph
    lead = x.shape[:r - count]
    if None not in lead and isinstance(size, int):
        return g.op("Reshape", [x, _i64(g, list(lead) + [size])], _KEEP_ZEROS)
    target = _shape_of(g, [_leading_shape(x, r - count), size])
    return g.op("Reshape", [x, target], _KEEP_ZEROS)


def _gather(x: Tensor, idx: Tensor, axis: int) -> Tensor:
    """Gather along a non-negative axis whose gradient is dense: along axis 0 (whose
    rule gives IndexedSlices) it gathers along axis 1 of x with a leading 1 added."""
    g = x.graph
    if axis == 0:
        one = _i64(g, [0])
        out = g.op("Gather", [g.op("Unsqueeze", [x, one]), idx], {"axis": 1})
        return g.op("Squeeze", [out, one])
    return g.op("Gather", [x, idx], {"axis": axis})


def _pad_end(x: Tensor, value: Tensor) -> Tensor:
    """x with one `value` appended along its last axis (rank known)."""
    r = len(x.shape)
    pads = [0] * (2 * r)
    pads[2 * r - 1] = 1
    return x.graph.op("Pad", [x, _i64(x.graph, pads), value])


def _scalar_value(value, dtype: DType, g, what: str) -> Tensor:
    """A scalar argument (a number or a scalar tensor) as a scalar tensor of dtype.

    Raises:
        ShapeError: a tensor is not a scalar, or is of another dtype.
        OneGraphError: a number does not fit dtype (names `what`).
    """
    if _g._is_symbolic(value):
        t = _t(value)
        if t.shape is not None and len(t.shape) != 0:
            raise ShapeError(f"{what} must be a scalar, got shape {list(t.shape)}")
        if t.dtype != dtype:
            raise ShapeError(f"{what} is a {t.dtype.short_name} tensor, but the input is "
                             f"{dtype.short_name}")
        return t
    try:
        t = g.convert(np.asarray(_g._as_array(value, dtype)), dtype)
    except OneGraphError as e:
        raise _g._named(e, what) from None
    if t.shape != ():
        raise ShapeError(f"{what} must be a scalar, got shape {list(t.shape)}")
    return t


class _Ints:
    """Index arithmetic with one code path: on numpy int64 arrays when the sizes are
    known while building (the results become constants), on int64 tensors when some
    size is known only at run time."""

    def __init__(self, g, *sizes):
        self.g = g
        self.static = all(isinstance(s, (int, np.integer)) for s in sizes)

    def t(self, v):
        """v as this backend's value (an int64 tensor in the dynamic one)."""
        if self.static or isinstance(v, Tensor):
            return v
        return _i64(self.g, v)

    def arange(self, n):
        if self.static:
            return np.arange(n, dtype=np.int64)
        return self.g.op("Range", [self.t(0), self.t(n), self.t(1)])

    def minimum(self, a, b):
        return np.minimum(a, b) if self.static else api.minimum(self.t(a), self.t(b))

    def maximum(self, a, b):
        return np.maximum(a, b) if self.static else api.maximum(self.t(a), self.t(b))

    def where(self, c, a, b):
        if self.static:
            return np.where(c, a, b)
        a, b = self.t(a), self.t(b)
        c = self.g.constant(np.asarray(c)) if isinstance(c, (np.ndarray, bool)) else c
        return api.where(c, a, b)

    def both(self, a, b):
        if self.static:
            return np.logical_and(a, b)
        if isinstance(a, np.ndarray):
            a = self.g.constant(a)
        if isinstance(b, np.ndarray):
            b = self.g.constant(b)
        return api.logical_and(a, b)

    def col(self, v):
        if isinstance(v, np.ndarray):
            return v.reshape(-1, 1)
        return self.g.op("Unsqueeze", [v, _i64(self.g, [1])])

    def row(self, v):
        if isinstance(v, np.ndarray):
            return v.reshape(1, -1)
        return self.g.op("Unsqueeze", [v, _i64(self.g, [0])])

    def tensor(self, v, dtype=np.int64) -> Tensor:
        if isinstance(v, Tensor):
            return v
        return self.g.constant(np.asarray(v).astype(dtype))


# --------------------------------------------------------------------------- diagonals

_ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def _band(k, what: str) -> tuple:
    """TF's k argument: an int (one diagonal) or a pair (low, high) of ints.

    Raises:
        TypeError: k is a tensor or not ints.
        ValueError: k has more than two entries, or low > high.
    """
    if _g._is_symbolic(k):
        raise TypeError(f"{what}: k must be an int or a pair of ints; a tensor is not "
                        "supported")
    if isinstance(k, (list, tuple, np.ndarray)):
        ks = [_int_arg(v, f"{what}: k") for v in list(np.asarray(k).reshape(-1))] \
            if isinstance(k, np.ndarray) else [_int_arg(v, f"{what}: k") for v in k]
        if len(ks) not in (1, 2):
            raise ValueError(f"{what}: k must have one or two entries, got {len(ks)}")
        low, high = ks[0], ks[-1]
    else:
        low = high = _int_arg(k, f"{what}: k")
    if low > high:
        raise ValueError(f"{what}: k's lower diagonal {low} must not be above its upper "
                         f"diagonal {high}")
    return low, high


def _align(align, what: str) -> tuple:
    """(superdiagonals left-aligned, subdiagonals left-aligned) for TF's align.

    Raises:
        ValueError: align is not one of TF's four.
    """
    if align not in _ALIGNS:
        raise ValueError(f"{what}: align must be one of {', '.join(_ALIGNS)}; got "
                         f"{_g._brief(align)}")
    first, second = align.split("_")
    return first == "LEFT", second == "LEFT"


def _diag_len(B: _Ints, M, N, d):
    """The length of diagonal d of an M x N matrix (0 when d is outside it)."""
    return B.maximum(B.minimum(B.t(M) + B.minimum(d, 0), B.t(N) - B.maximum(d, 0)), 0)


def _max_diag_len(B: _Ints, M, N, low: int, high: int):
    """The longest diagonal among low..high of an M x N matrix: the lengths rise up to
    the plateau around d = N - M and fall after it, so the band's point nearest it."""
    nearest = B.minimum(B.maximum(B.t(N) - B.t(M), low), high)
    return _diag_len(B, M, N, nearest)


def _left_aligned(d, left_super: bool, left_sub: bool):
    """Whether diagonal d is left-aligned (TF: the main diagonal is left-aligned when
    either side is); a Python bool when it does not depend on d."""
    if left_super == left_sub:
        return left_super
    return (d >= 0) if left_super else (d <= 0)


def _matrix(x: Tensor, what: str) -> tuple:
    """(rank, M, N) of a tensor of matrices.

    Raises:
        ShapeError: its rank is unknown or below 2.
    """
    r = _rank(x, what)
    if r < 2:
        raise ShapeError(f"{what} must have rank >= 2, got shape {list(x.shape)}")
    return r, _dim(x, -2), _dim(x, -1)


def _check_band_bounds(x: Tensor, M, N, low: int, high: int, what: str):
    """TF's rule -M < k < N (or k == 0) for the band's ends: refused while building
    when the sizes are known; otherwise a run-time condition is returned."""
    if isinstance(M, int) and isinstance(N, int):
        for k in (low, high):
            if not (-M < k < N or k == 0):
                raise ShapeError(f"{what}: diagonal {k} is outside a {M} x {N} matrix "
                                 f"(valid: {-M} < k < {N}, or 0)")
        return None
    g = x.graph
    Mt = _i64(g, M) if isinstance(M, int) else M
    Nt = _i64(g, N) if isinstance(N, int) else N
    ok = None
    for k in {low, high}:
        if k == 0:
            continue
        inside = api.logical_and(api.less(-Mt, k), api.less(_i64(g, k), Nt))
        ok = inside if ok is None else api.logical_and(ok, inside)
    return ok


def _diag_part(x: Tensor, low: int, high: int, padding, left_super: bool, left_sub: bool,
               what: str, arg: str = "input") -> Tensor:
    """The band low..high of x's matrices: (..., L) for one diagonal, else
    (..., high - low + 1, L), rows from the highest diagonal down, each aligned as
    asked and filled with `padding`."""
    r, M, N = _matrix(x, f"{what}: {arg}")
    g = x.graph
    check = _check_band_bounds(x, M, N, low, high, what)
    pad = _scalar_value(padding, x.dtype, g, f"{what}: padding_value")
    B = _Ints(g, M, N)
    L = _max_diag_len(B, M, N, low, high)
    d = high - np.arange(high - low + 1, dtype=np.int64)          # one row per diagonal
    length = _diag_len(B, M, N, d)
    offset = B.where(_left_aligned(d, left_super, left_sub), 0, B.t(L) - length)
    q = B.row(B.arange(L)) - B.col(offset)                      # position on diagonal
    i = q - B.col(np.minimum(d, 0))
    j = q + B.col(np.maximum(d, 0))
    valid = B.both(q >= 0, q < B.col(length))
    size = B.t(M) * B.t(N)
    flat = B.where(valid, i * B.t(N) + j, size)
    if low == high:
        flat = flat[0] if B.static else g.op("Squeeze", [flat, _i64(g, [0])])
    xf = _pad_end(_merge_last(x, 2, size), pad)
    out = _gather(xf, B.tensor(flat), r - 2)
    return out if check is None else _checked(out, check, f"{what}: k is outside the "
                                              "matrix (valid: -rows < k < cols, or 0)")


def _diag_index(B: _Ints, M, N, L, low: int, high: int, left_super: bool, left_sub: bool):
    """For each (i, j) of an M x N matrix: whether it lies in the band low..high, and
    its position in the (high - low + 1) * L flattened diagonals (rows from the
    highest diagonal, aligned as asked; the slot after them where it lies on none)."""
    i = B.col(B.arange(M))
    j = B.row(B.arange(N))
    d = j - i
    in_band = B.both(d >= low, d <= high)
    length = _diag_len(B, M, N, d)
    offset = B.where(_left_aligned(d, left_super, left_sub), 0, B.t(L) - length)
    p = B.minimum(i, j) + offset
    valid = B.both(in_band, B.both(p >= 0, p < B.t(L)))
    span = high - low + 1
    flat = B.where(valid, (high - d) * B.t(L) + p, B.t(L) * span)
    return valid, flat


def matrix_band_part(input, num_lower, num_upper, name=None) -> Tensor:  # noqa: A002
    """The band of each innermost matrix: entry (i, j) is kept where
    (num_lower < 0 or i - j <= num_lower) and (num_upper < 0 or j - i <= num_upper),
    else 0 (tf.matrix_band_part / tf.linalg.band_part; ONNX Trilu, twice). The bounds
    are ints or integer scalar tensors; a negative one keeps that whole triangle.

    Raises:
        TypeError: a bound is not an int or an integer tensor, or name is not a str.
        ShapeError: input has rank < 2 (or unknown), a bound tensor is not a scalar,
            or a bound is above the number of rows (num_lower) or columns (num_upper)
            when both are known (TF1 refuses it; a tensor bound is checked when the
            graph runs).
    """
    _g.check_name(name, "matrix_band_part")
    x = _t(input)
    _, M, N = _matrix(x, "matrix_band_part: input")
    g = x.graph
    out = x
    checks = []
    for value, what, size, upper in ((num_lower, "num_lower", M, 1),
                                     (num_upper, "num_upper", N, 0)):
        label = f"matrix_band_part: {what}"
        if _g._is_symbolic(value):
            k = _g.integer_tensor(value, label, g)
            if k.shape is not None and len(k.shape) != 0:
                raise ShapeError(f"{label} must be a scalar, got shape {list(k.shape)}")
            k = api.cast(k, int64)
            size_t = _i64(g, size) if isinstance(size, int) else size
            checks.append(api.less_equal(k, size_t))
            # a negative bound keeps everything: a diagonal beyond the matrix
            k = api.where(api.less(k, 0), size_t, k)
            out = g.op("Trilu", [out, -k if upper else k], {"upper": upper})
            continue
        k = _int_arg(value, label)
        if isinstance(size, int) and k > size:
            raise ShapeError(f"{label} must be negative or at most the number of "
                             f"{'rows' if upper else 'columns'} ({size}), got {k}")
        if k >= 0:
            out = g.op("Trilu", [out, _i64(g, -k if upper else k)], {"upper": upper})
    if out is x:
        return api.identity(x, name=name)
    if checks:
        ok = checks[0] if len(checks) == 1 else api.logical_and(checks[0], checks[1])
        return _checked(out, ok, "matrix_band_part: num_lower must be at most the rows and "
                        "num_upper at most the columns", name)
    return _finish(out, name)


def matrix_diag(diagonal, name=None, k=0, num_rows=-1, num_cols=-1, padding_value=0,
                align="RIGHT_LEFT") -> Tensor:
    """Matrices with the given diagonals and `padding_value` elsewhere
    (tf.linalg.diag / tf.compat.v1.matrix_diag). With k an int, diagonal (..., L) is
    put on diagonal k; with k = (low, high), diagonal (..., high - low + 1, L) holds
    the diagonals from high down to low, each aligned in its row as `align` says
    (TF's RIGHT_LEFT, LEFT_RIGHT, LEFT_LEFT, RIGHT_RIGHT: superdiagonals, then
    subdiagonals). num_rows and num_cols default to the smallest that fit (a square
    when neither is given), as in TF. k and the sizes must be Python ints (TF1 also
    takes tensors); padding_value a number or a scalar tensor of diagonal's dtype.

    Raises:
        TypeError: k, num_rows or num_cols is not an int, or name not a str.
        ValueError: k has more than two entries or low > high, or align is not one
            of TF's four.
        ShapeError: diagonal has rank < 1 (< 2 for a band) or unknown, its band axis
            does not match k, or num_rows / num_cols is too small or inconsistent
            with k and the diagonal (checked when the graph runs if the diagonal's
            length is unknown while building).
    """
    what = "matrix_diag"
    _g.check_name(name, what)
    low, high = _band(k, what)
    left_super, left_sub = _align(align, what)
    rows = _int_arg(num_rows, f"{what}: num_rows")
    cols = _int_arg(num_cols, f"{what}: num_cols")
    for v, label in ((rows, "num_rows"), (cols, "num_cols")):
        if v < -1:
            raise ShapeError(f"{what}: {label} must be -1 (fit) or >= 0, got {v}")
    x = _t(diagonal)
    r = _rank(x, f"{what}: diagonal")
    span = high - low + 1
    if r < (1 if span == 1 else 2):
        raise ShapeError(f"{what}: diagonal must have rank >= {1 if span == 1 else 2} "
                         f"for k={list((low, high)) if span > 1 else low}, got shape "
                         f"{list(x.shape)}")
    if span > 1 and x.shape[-2] is not None and x.shape[-2] != span:
        raise ShapeError(f"{what}: diagonal's second-to-last dim must be the "
                         f"{span} diagonals of k=({low}, {high}), got shape "
                         f"{list(x.shape)}")
    g = x.graph
    pad = _scalar_value(padding_value, x.dtype, g, f"{what}: padding_value")
    L = _dim(x, -1)
    B = _Ints(g, L)
    min_rows = B.t(L) - min(high, 0)
    min_cols = B.t(L) + max(low, 0)
    check = None
    if B.static:
        if rows != -1 and rows < min_rows:
            raise ShapeError(f"{what}: num_rows={rows} is too small for diagonals of "
                             f"length {L} at k=({low}, {high}) (at least {min_rows})")
        if cols != -1 and cols < min_cols:
            raise ShapeError(f"{what}: num_cols={cols} is too small for diagonals of "
                             f"length {L} at k=({low}, {high}) (at least {min_cols})")
    if rows == -1 and cols == -1:
        M = N = B.maximum(min_rows, min_cols)
    else:
        M = min_rows if rows == -1 else rows
        N = min_cols if cols == -1 else cols
    if B.static:
        M, N = int(M), int(N)
        if M != min_rows and N != min_cols:
            raise ShapeError(f"{what}: num_rows={M} and num_cols={N} are not consistent "
                             f"with diagonals of length {L} at k=({low}, {high}) (one of "
                             f"them must be {min_rows} rows or {min_cols} columns)")
    elif rows != -1 or cols != -1:
        fits = api.logical_or(api.equal(B.t(M), min_rows), api.equal(B.t(N), min_cols))
        if rows != -1:
            fits = api.logical_and(fits, api.greater_equal(B.t(rows), min_rows))
        if cols != -1:
            fits = api.logical_and(fits, api.greater_equal(B.t(cols), min_cols))
        check = fits
    B = _Ints(g, M, N, L)
    _, flat = _diag_index(B, M, N, L, low, high, left_super, left_sub)
    xf = _pad_end(_merge_last(x, 1 if span == 1 else 2,
                              span * L if isinstance(L, int) else L * span), pad)
    out = _gather(xf, B.tensor(flat), len(xf.shape) - 1)
    if check is not None:
        return _checked(out, check, f"{what}: num_rows and num_cols do not fit the "
                        "diagonals and k", name)
    return _finish(out, name)


def matrix_diag_part(input, name=None, k=0, padding_value=0,  # noqa: A002 - TF's name
                     align="RIGHT_LEFT") -> Tensor:
    """The diagonals of each innermost matrix (tf.linalg.diag_part /
    tf.compat.v1.matrix_diag_part): with k an int, diagonal k as (..., L); with
    k = (low, high), the diagonals high down to low as (..., high - low + 1, L), L the
    longest of them, the shorter ones aligned as `align` says and filled with
    padding_value. Works for non-square matrices. k must be Python ints.

    Raises:
        TypeError: k is not an int or a pair of ints, or name not a str.
        ValueError: k has more than two entries or low > high, or align is not one of
            TF's four.
        ShapeError: input has rank < 2 (or unknown), or k lies outside the matrices
            (-rows < k < cols, or 0; checked when the graph runs if the sizes are
            unknown while building).
    """
    what = "matrix_diag_part"
    _g.check_name(name, what)
    low, high = _band(k, what)
    left_super, left_sub = _align(align, what)
    x = _t(input)
    return _finish(_diag_part(x, low, high, padding_value, left_super, left_sub, what),
                   name)


def matrix_set_diag(input, diagonal, name=None, k=0,  # noqa: A002 - TF's name
                    align="RIGHT_LEFT") -> Tensor:
    """input with the diagonals of its innermost matrices replaced by `diagonal`
    (tf.linalg.set_diag / tf.compat.v1.matrix_set_diag): with k an int, diagonal is
    (..., L) for diagonal k; with k = (low, high) it is (..., high - low + 1, L), rows
    from diagonal high down to low, aligned as `align` says; L is the band's longest
    diagonal. k must be Python ints.

    Raises:
        TypeError: k is not an int or a pair, or name not a str.
        ValueError: k has more than two entries or low > high, or align is not one of
            TF's four.
        ShapeError: input has rank < 2 (or unknown), input and diagonal differ in
            dtype, diagonal's shape is not input's batch shape + the band's, or k lies
            outside the matrices.
    """
    what = "matrix_set_diag"
    _g.check_name(name, what)
    low, high = _band(k, what)
    left_super, left_sub = _align(align, what)
    x, dg = _pair(input, diagonal, what)
    r, M, N = _matrix(x, f"{what}: input")
    g = x.graph
    check = _check_band_bounds(x, M, N, low, high, what)
    span = high - low + 1
    B = _Ints(g, M, N)
    L = _max_diag_len(B, M, N, low, high)
    want_rank = r - 1 if span == 1 else r
    if dg.shape is not None:
        want = list(x.shape[:-2]) + ([span] if span > 1 else []) + [
            int(L) if B.static else None]
        ok = len(dg.shape) == want_rank and all(
            a is None or b is None or a == b for a, b in zip(dg.shape, want))
        if not ok:
            raise ShapeError(f"{what}: diagonal must have shape {want} (None: any) for "
                             f"input of shape {list(x.shape)} and k=({low}, {high}), got "
                             f"{list(dg.shape)}")
    B = _Ints(g, M, N, L)
    in_band, flat = _diag_index(B, M, N, L, low, high, left_super, left_sub)
    dgf = _pad_end(_merge_last(dg, 1 if span == 1 else 2,
                               span * L if B.static else B.t(L) * span),
                   g.constant(np.zeros((), x.dtype.numpy)))
    values = _gather(dgf, B.tensor(flat), want_rank - (1 if span == 1 else 2))
    mask = B.tensor(in_band, bool) if B.static else in_band
    out = api.where(mask, values, x)
    if check is not None:
        return _checked(out, check, f"{what}: k is outside the matrix (valid: -rows < k "
                        "< cols, or 0)", name)
    return _finish(out, name)


def diag(diagonal, name=None) -> Tensor:
    """The tensor of rank 2r with `diagonal` (rank r >= 1) on its diagonal and zeros
    elsewhere: out[i1..ir, i1..ir] = diagonal[i1..ir] (tf.diag / tf.linalg.tensor_diag).

    Raises:
        TypeError: name is not a str.
        ShapeError: diagonal is a scalar or of unknown rank.
    """
    _g.check_name(name, "diag")
    x = _t(diagonal)
    r = _rank(x, "diag: diagonal")
    if r < 1:
        raise ShapeError("diag: diagonal must have rank >= 1, got a scalar")
    g = x.graph
    flat = g.op("Reshape", [x, _i64(g, [-1])]) if r != 1 else x
    square = matrix_diag(flat)
    if r == 1:
        return _finish(square, name)
    if None not in x.shape:
        target = _i64(g, list(x.shape) * 2)
    else:
        s = g.op("Shape", [x])
        target = g.op("Concat", [s, s], {"axis": 0})
    return g.op("Reshape", [square, target], _KEEP_ZEROS, name=name)


def diag_part(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """The diagonal of a tensor of rank 2r whose shape is D + D: out[i1..ir] =
    input[i1..ir, i1..ir], of shape D (tf.diag_part / tf.linalg.tensor_diag_part); a
    scalar is returned as it is.

    Raises:
        TypeError: name is not a str.
        ShapeError: input's rank is odd or unknown, or its two halves' dims differ
            (checked when the graph runs for dims unknown while building).
    """
    _g.check_name(name, "diag_part")
    x = _t(input)
    r = _rank(x, "diag_part: input")
    if r % 2:
        raise ShapeError(f"diag_part: input must have an even rank, got shape "
                         f"{list(x.shape)}")
    if r == 0:
        return api.identity(x, name=name)
    g = x.graph
    half = r // 2
    lead, tail = x.shape[:half], x.shape[half:]
    for a, b in zip(lead, tail):
        if a is not None and b is not None and a != b:
            raise ShapeError(f"diag_part: input's shape {list(x.shape)} is not D + D")
    if None not in lead and None not in tail:
        n = int(np.prod(lead, dtype=np.int64))
        flat = g.op("Reshape", [x, _i64(g, [n * n])], _KEEP_ZEROS)
        out = _gather(flat, _i64(g, np.arange(n) * (n + 1)), 0)
        return g.op("Reshape", [out, _i64(g, list(lead))], _KEEP_ZEROS, name=name)
    first = g.op("Shape", [x], {"end": half})
    second = g.op("Shape", [x], {"start": half})
    n = g.op("ReduceProd", [first], {"keepdims": 0})
    flat = g.op("Reshape", [x, _i64(g, [-1])])
    idx = g.op("Range", [_i64(g, 0), n, _i64(g, 1)]) * (n + 1)
    out = g.op("Reshape", [_gather(flat, idx, 0), first], _KEEP_ZEROS)
    return _checked(out, api.equal(first, second), "diag_part: input's shape is not D + D",
                    name)


def trace(x, name=None) -> Tensor:
    """The sum of the main diagonal of each innermost matrix (tf.trace /
    tf.linalg.trace; non-square matrices too), of shape x.shape[:-2].

    Raises:
        TypeError: name is not a str.
        ShapeError: x has rank < 2 (or unknown), or is not numeric.
    """
    _g.check_name(name, "trace")
    x = _t(x)
    _numeric(x, "trace: x")
    return api.reduce_sum(_diag_part(x, 0, 0, 0, True, True, "trace", "x"), axis=-1,
                          name=name)


# --------------------------------------------------------------------------- determinant

_DET_GRADIENT = "OneGraphLinalgDeterminant"


def _cofactors(b, a: Tensor) -> Tensor:
    """The cofactor matrix C of a's square matrices (C[i, j] = (-1)^(i+j) times the
    determinant of a without row i and column j), so that det(a) = sum_j a[i, j]
    C[i, j]: the n^2 minors are gathered into (..., n, n, n-1, n-1) and their Det
    taken at once. Exact for singular matrices too; O(n^5) work."""
    r = len(a.shape)
    n = a.shape[-1] if a.shape[-1] is not None else a.shape[-2]
    if n is not None:
        if n <= 1:
            fill = 0.0 if n == 0 else 1.0
            return b.op("Add", [b.op("ZerosLike", [a]), b.constant(
                np.asarray(fill, a.dtype.numpy))])
        keep = np.array([[c for c in range(n) if c != i] for i in range(n)], np.int64)
        sign = ((-1.0) ** np.add.outer(np.arange(n), np.arange(n))).astype(a.dtype.numpy)
        keep_t, sign_t = b.constant(keep), b.constant(sign)
    else:
        size = b.op("Reshape", [b.op("Shape", [a], {"start": r - 1}), _i64(b, [])])
        idx = b.op("Range", [_i64(b, 0), size, _i64(b, 1)])
        rest = b.op("Range", [_i64(b, 0), b.op("Sub", [size, _i64(b, 1)]), _i64(b, 1)])
        i_col = b.op("Unsqueeze", [idx, _i64(b, [1])])
        rest_row = b.op("Unsqueeze", [rest, _i64(b, [0])])
        later = b.op("GreaterOrEqual", [rest_row, i_col])
        keep_t = b.op("Add", [rest_row, b.op("Cast", [later],
                                             {"to": api.onnx_type(int64)})])
        parity = b.op("Mod", [b.op("Add", [i_col, b.op("Unsqueeze", [idx, _i64(b, [0])])]),
                              _i64(b, 2)])
        one = b.constant(np.asarray(1, a.dtype.numpy))
        sign_t = b.op("Sub", [one, b.op("Mul", [b.op("CastLike", [parity, a]),
                                                b.constant(np.asarray(2, a.dtype.numpy))])])
    rows = b.op("Gather", [a, keep_t], {"axis": r - 2})           # (..., i, r', n)
    minors = b.op("Gather", [rows, keep_t], {"axis": r})          # (..., i, r', j, c')
    perm = list(range(r - 2)) + [r - 2, r, r - 1, r + 1]
    minors = b.op("Transpose", [minors], {"perm": perm})          # (..., i, j, r', c')
    if isinstance(b, _g.Graph):
        with gradient_override_map({"Det": _DET_GRADIENT}, graph=b):
            dets = b.op("Det", [minors])
    else:
        dets = b.op("Det", [minors])
    return b.op("Mul", [dets, sign_t])


def _det_gradient(b, op, grads):
    """d det(A) / dA = the cofactor matrix of A (det(A) inv(A)^T where A is
    invertible), computed from minors so a singular A has its exact gradient too."""
    (dy,) = grads
    a = op.inputs[0]
    if a.shape is None:
        raise GradientNotDefinedError("Det gradient needs an input of known rank")
    if dy is None:
        return [None]
    cof = _cofactors(b, a)
    return [b.op("Mul", [b.op("Unsqueeze", [dy, _i64(b, [-2, -1])]), cof])]


try:
    RegisterGradient(_DET_GRADIENT)(_det_gradient)
except OneGraphError:  # this module was loaded again (importlib.reload)
    pass


def _square(x: Tensor, what: str) -> None:
    r = _rank(x, what)
    if r < 2:
        raise ShapeError(f"{what} must have rank >= 2, got shape {list(x.shape)}")
    if x.shape[-1] is not None and x.shape[-2] is not None and x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{what} must hold square matrices, got shape {list(x.shape)}")


def _det(input, what: str) -> Tensor:  # noqa: A002
    x = _floats(_t(input), f"{what}: input")
    if x.dtype == DType.BFLOAT16:
        raise TypeError(f"{what}: input must be float16, float32 or float64, got bfloat16")
    _square(x, f"{what}: input")
    with gradient_override_map({"Det": _DET_GRADIENT}, graph=x.graph):
        return x.graph.op("Det", [x])


def matrix_determinant(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """The determinant of each innermost square matrix (tf.matrix_determinant /
    tf.linalg.det; ONNX Det), of shape input.shape[:-2]; an empty 0 x 0 matrix has
    determinant 1. Its gradient is the cofactor matrix (TF1's det * inv(A)^T), taken
    from the n^2 minors' determinants, so it is also exact for singular matrices
    (where TF1's raises), at O(n^5) cost: meant for the small matrices determinants
    are used on.

    Raises:
        TypeError: input is not float16/float32/float64, or name is not a str.
        ShapeError: input has rank < 2 (or unknown), or its matrices are not square.
    """
    _g.check_name(name, "matrix_determinant")
    return _finish(_det(input, "matrix_determinant"), name)


Slogdet = collections.namedtuple("Slogdet", ["sign", "log_abs_determinant"])


def slogdet(input, name=None) -> Slogdet:  # noqa: A002 - TF's name
    """(sign, log|det|) of each innermost square matrix (tf.linalg.slogdet /
    tf.log_matrix_determinant), from ONNX Det: a determinant beyond the dtype's range
    overflows here where TF's LU-based one does not. The sign of a singular matrix
    is 0 and its log|det| is -inf.

    Raises:
        TypeError: input is not float16/float32/float64, or name is not a str.
        ShapeError: input has rank < 2 (or unknown), or its matrices are not square.
    """
    _g.check_name(name, "slogdet")
    det = _det(input, "slogdet")
    with det.graph.name_scope(name or "slogdet"):
        return Slogdet(api.sign(det), api.log(api.abs(det)))


def logdet(matrix, name=None) -> Tensor:
    """log(det(matrix)) of Hermitian positive definite matrices (tf.linalg.logdet;
    computed as the log of ONNX Det rather than TF's Cholesky factor, so a
    determinant beyond the dtype's range overflows).

    Raises:
        TypeError: matrix is not float16/float32/float64, or name is not a str.
        ShapeError: matrix has rank < 2 (or unknown), or is not square.
    """
    _g.check_name(name, "logdet")
    return api.log(_det(matrix, "logdet"), name=name)


# --------------------------------------------------------------------------- vectors

def cross(a, b, name=None) -> Tensor:
    """The cross product of the 3-vectors along the last axis (tf.cross /
    tf.linalg.cross); a and b must have the same shape, as in TF1 (no broadcasting).

    Raises:
        TypeError: name is not a str.
        ShapeError: a and b differ in dtype or shape (when known), are not numeric, or
            their last dim is not 3 (or their rank unknown).
    """
    _g.check_name(name, "cross")
    x, y = _pair(a, b, "cross")
    _numeric(x, "cross: a")
    r = _rank(x, "cross: a")
    _rank(y, "cross: b")
    if r < 1 or x.shape[-1] not in (3, None) or y.shape[-1] not in (3, None):
        raise ShapeError(f"cross: the last dim of a and b must be 3, got shapes "
                         f"{list(x.shape)} and {list(y.shape)}")
    if len(y.shape) != r or any(p is not None and q is not None and p != q
                                for p, q in zip(x.shape, y.shape)):
        raise ShapeError(f"cross: a and b must have the same shape, got {list(x.shape)} "
                         f"and {list(y.shape)}")
    g = x.graph
    first, second = _i64(g, [1, 2, 0]), _i64(g, [2, 0, 1])
    out = _gather(x, first, r - 1) * _gather(y, second, r - 1) \
        - _gather(x, second, r - 1) * _gather(y, first, r - 1)
    if None in x.shape or None in y.shape:
        same = api.equal(g.op("Shape", [x]), g.op("Shape", [y]))
        return _checked(out, same, "cross: a and b must have the same shape", name)
    return _finish(out, name)


def _norm_axis(axis, what: str):
    """norm's axis: None, an int, or a pair of distinct ints (a matrix norm).

    Raises:
        TypeError: it is a tensor or not ints.
        ValueError: a list that is not a pair of distinct ints.
    """
    if axis is None:
        return None, False
    if _g._is_symbolic(axis):
        raise TypeError(f"{what}: axis must be None, an int or a pair of ints; a tensor "
                        "is not supported")
    if isinstance(axis, (list, tuple, np.ndarray)):
        axes = [_int_arg(a, f"{what}: axis") for a in list(axis)]
        if len(axes) != 2 or axes[0] == axes[1]:
            raise ValueError(f"{what}: axis must be None, an int, or a pair of 2 distinct "
                             f"ints, got {_g._brief(axis)}")
        return axes, True
    return [_int_arg(axis, f"{what}: axis")], False


def norm(tensor, ord="euclidean", axis=None, keepdims=None,  # noqa: A002 - TF's names
         name=None, keep_dims=None) -> Tensor:
    """The norm of `tensor` over `axis`, as tf.norm / tf.linalg.norm (tf.compat.v1's,
    with keep_dims, TF1's old name of keepdims).

    axis None is the norm of all the elements as one vector; an int, a vector norm
    along that axis; a pair of ints, a matrix norm over those axes. Vector norms: ord
    'euclidean' (= 2), 1, np.inf, or any real p > 0 ((sum |x|^p)^(1/p)). Matrix
    norms: 'fro' / 'euclidean' (Frobenius), 1 (largest column sum of |x|: summed over
    axis[0], maximum over axis[1]) and np.inf (largest row sum). TF's matrix ord=2
    (the largest singular value) needs an SVD, which ONNX has no op for: it is refused.
    keepdims keeps the reduced axes as size 1.

    Raises:
        TypeError: tensor is not a float tensor, ord is a bool or a tensor or not a
            number or str, axis is a tensor or not ints, keepdims is not a bool, or
            name is not a str.
        ValueError: ord is not a supported norm for the kind of axis (a vector 'fro',
            p <= 0, a matrix ord other than 'fro', 'euclidean', 1, np.inf; a matrix
            ord 2), axis is a list that is not two distinct ints, or both keepdims and
            keep_dims are given.
        ShapeError: an axis is out of range, or the pair names one axis twice.
    """
    what = "norm"
    _g.check_name(name, what)
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError(f"{what}: give keepdims or its old name keep_dims, not both")
        keepdims = keep_dims
    keepdims = False if keepdims is None else _bool_arg(keepdims, f"{what}: keepdims")
    axes, is_matrix = _norm_axis(axis, what)
    if isinstance(ord, (bool, np.bool_)) or _g._is_symbolic(ord) or not isinstance(
            ord, (str, int, float, np.integer, np.floating)):
        raise TypeError(f"{what}: ord must be 'euclidean', 'fro' or a number, got "
                        f"{type(ord).__name__} {_g._brief(ord)}")
    if isinstance(ord, str):
        if ord not in ("euclidean", "fro") or (ord == "fro" and not is_matrix):
            kind = "matrix" if is_matrix else "vector"
            raise ValueError(f"{what}: ord {ord!r} is not a supported {kind} norm"
                             + ("; 'fro' needs a pair of axes" if ord == "fro" else ""))
        kind = "euclidean"
    else:
        p = float(ord)
        if is_matrix:
            if p == 2:
                raise ValueError(f"{what}: the matrix 2-norm (largest singular value) "
                                 "needs an SVD, which has no ONNX op; use 'fro', 1 or "
                                 "np.inf")
            if p not in (1, math.inf):
                raise ValueError(f"{what}: ord must be a supported matrix norm "
                                 f"('euclidean', 'fro', 1, np.inf), got {ord!r}")
        elif math.isnan(p) or p <= 0:
            raise ValueError(f"{what}: ord must be a supported vector norm ('euclidean', "
                             f"1, 2, np.inf or a real p > 0), got {ord!r}")
        kind = "euclidean" if p == 2 else ("one" if p == 1 else
                                           ("inf" if p == math.inf else "p"))
    x = _floats(_t(tensor), f"{what}: tensor")
    if axes is not None:
        r = _rank(x, what)
        for a in axes:
            _check_axis(a, x, f"{what}: axis")
        axes = [a % r for a in axes]
        if len(set(axes)) != len(axes):
            raise ShapeError(f"{what}: axis {list(axis)} names one axis twice")
    if kind == "euclidean":
        result = api.sqrt(api.reduce_sum(x * x, axes, keepdims=True))
    elif is_matrix:
        summed, top = (axes[0], axes[1]) if kind == "one" else (axes[1], axes[0])
        result = api.reduce_max(api.reduce_sum(api.abs(x), [summed], keepdims=True),
                                [top], keepdims=True)
    elif kind == "one":
        result = api.reduce_sum(api.abs(x), axes, keepdims=True)
    elif kind == "inf":
        result = api.reduce_max(api.abs(x), axes, keepdims=True)
    else:
        result = api.pow(api.reduce_sum(api.pow(api.abs(x), p), axes, keepdims=True),
                         1.0 / p)
    if keepdims:
        return _finish(result, name)
    if axes is None:
        return api.reshape(result, [], name=name)
    return api.squeeze(result, axes, name=name)


# --------------------------------------------------------------------------- scans, shifts

def _shift_in_ones(y: Tensor, s, axis: int, n) -> Tensor:
    """y moved s places forward along `axis`, ones shifted in (length n kept)."""
    g = y.graph
    r = len(y.shape)
    if isinstance(s, int) and isinstance(n, int):
        pads = [0] * (2 * r)
        pads[axis] = s
        padded = g.op("Pad", [y, _i64(g, pads), g.constant(np.ones((), y.dtype.numpy))])
        return g.op("Slice", [padded, _i64(g, [0]), _i64(g, [n]), _i64(g, [axis])])
    ones = g.op("Slice", [api.ones_like(y), _i64(g, [0]), _vec(g, s), _i64(g, [axis])])
    left = api.maximum(n - s, 0) if isinstance(n, Tensor) or isinstance(s, Tensor) \
        else max(n - s, 0)
    rest = g.op("Slice", [y, _i64(g, [0]), _vec(g, left), _i64(g, [axis])])
    return g.op("Concat", [ones, rest], {"axis": axis})


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """Running product along `axis`, as tf.cumprod / tf.math.cumprod: `exclusive`
    leaves each element out of its own product (the first is 1), `reverse` runs from
    the end. Exact for zeros and negatives (no exp/log): a parallel prefix scan of
    ceil(log2(n)) shifted multiplications (a while loop of them when the length is
    known only at run time), so its gradient is exact too, also at zeros (where
    TF1's, which divides by x, is NaN). `axis` must be a Python int (TF1 also takes a
    scalar tensor).

    Raises:
        TypeError: axis is not an int, exclusive or reverse not a bool, or name not a
            str.
        ShapeError: x is not numeric, is a scalar or of unknown rank, or axis is out
            of range.
    """
    what = "cumprod"
    _g.check_name(name, what)
    axis = _int_arg(axis, f"{what}: axis")
    exclusive = _bool_arg(exclusive, f"{what}: exclusive")
    reverse = _bool_arg(reverse, f"{what}: reverse")
    y = _t(x)
    _numeric(y, f"{what}: x")
    r = _rank(y, f"{what}: x")
    if r == 0:
        raise ShapeError(f"{what}: x must have rank >= 1, got a scalar")
    _check_axis(axis, y, f"{what}: axis")
    axis %= r
    g = y.graph
    if reverse:
        y = api_math.reverse(y, [axis])
    n = _dim(y, axis)
    if exclusive:
        y = _shift_in_ones(y, 1, axis, n)
    if isinstance(n, int):
        s = 1
        while s < n:
            y = y * _shift_in_ones(y, s, axis, n)
            s *= 2
    else:
        from .control_flow import while_loop

        def body(step, value):
            return step * 2, value * _shift_in_ones(value, step, axis, n)

        _, y = while_loop(lambda step, value: api.less(step, n), body,
                          [_i64(g, 1), y], name=f"{name or what}_scan")
    if reverse:
        y = api_math.reverse(y, [axis])
    return _finish(y, name)


def _roll_one(x: Tensor, shift, axis: int) -> Tensor:
    """x rolled by `shift` (an int or an int64 scalar tensor) along `axis`."""
    g = x.graph
    n = _dim(x, axis)
    if isinstance(n, int) and isinstance(shift, int):
        if n == 0 or shift % n == 0:
            return x
        cut = n - shift % n
        tail = g.op("Slice", [x, _i64(g, [cut]), _i64(g, [n]), _i64(g, [axis])])
        head = g.op("Slice", [x, _i64(g, [0]), _i64(g, [cut]), _i64(g, [axis])])
        return g.op("Concat", [tail, head], {"axis": axis})
    n_t = _i64(g, n) if isinstance(n, int) else n
    s_t = _i64(g, shift) if isinstance(shift, int) else shift
    cut = n_t - g.op("Mod", [s_t, api.maximum(n_t, 1)], {"fmod": 0})
    tail = g.op("Slice", [x, _vec(g, cut), _i64(g, [_INT64_MAX]), _i64(g, [axis])])
    head = g.op("Slice", [x, _i64(g, [0]), _vec(g, cut), _i64(g, [axis])])
    return g.op("Concat", [tail, head], {"axis": axis})


def roll(input, shift, axis, name=None) -> Tensor:  # noqa: A002 - TF's name
    """input with its elements shifted `shift` places along `axis`, those pushed off
    one end coming back at the other (tf.roll / tf.manip.roll). shift and axis are an
    int each or equal-length lists (an axis named twice gets the sum of its shifts);
    shift may also be an integer tensor (a scalar, or 1-D like axis); axis must be
    Python ints.

    Raises:
        TypeError: shift or axis is not an int, a list of ints (or, for shift, an
            integer tensor), or name is not a str.
        ValueError: shift and axis differ in length.
        ShapeError: input is a scalar or of unknown rank, an axis is out of range, or
            a shift tensor has the wrong shape or is not integer.
    """
    what = "roll"
    _g.check_name(name, what)
    x = _t(input)
    r = _rank(x, f"{what}: input")
    if r == 0:
        raise ShapeError(f"{what}: input must have rank >= 1, got a scalar")
    if _g._is_symbolic(axis):
        raise TypeError(f"{what}: axis must be an int or a list of ints; a tensor is not "
                        "supported")
    one_axis = not isinstance(axis, (list, tuple, np.ndarray))
    axes = api._axes(axis, f"{what}: axis")
    for a in axes:
        _check_axis(a, x, f"{what}: axis")
    axes = [a % r for a in axes]
    g = x.graph
    if _g._is_symbolic(shift):
        s = api.cast(_g.integer_tensor(shift, f"{what}: shift", g), int64)
        want = [] if one_axis else [len(axes)]
        if s.shape is None or list(s.shape) != want:
            raise ShapeError(f"{what}: shift must have shape {want} (one per axis), got "
                             f"{None if s.shape is None else list(s.shape)}")
        shifts = [s] if one_axis else [_gather(s, _i64(g, k), 0) for k in range(len(axes))]
    else:
        if one_axis != (not isinstance(shift, (list, tuple, np.ndarray))):
            raise ValueError(f"{what}: shift and axis must both be ints or both lists of "
                             f"one length, got {_g._brief(shift)} and {_g._brief(axis)}")
        shifts = api._axes(shift, f"{what}: shift")
    if len(shifts) != len(axes):
        raise ValueError(f"{what}: shift and axis must have the same length, got "
                         f"{len(shifts)} and {len(axes)}")
    total: dict = {}
    for a, s in zip(axes, shifts):
        total[a] = s if a not in total else total[a] + s
    out = x
    for a, s in total.items():
        out = _roll_one(out, s, a)
    return api.identity(out, name=name) if out is x or name is not None else out


def repeat(input, repeats, axis=None, name=None) -> Tensor:  # noqa: A002 - TF's name
    """Each element (slice along `axis`) of input repeated, as tf.repeat: repeats is
    an int, a list of ints or an integer tensor, one count per slice (or a single one
    for all); axis None repeats the flattened input. A scalar input is a 1-vector.

    Raises:
        TypeError: repeats is not an int, a list of ints or an integer tensor, axis
            is not an int, or name is not a str.
        ValueError: a count is negative.
        ShapeError: input has unknown rank, axis is out of range, repeats is not a
            scalar or 1-D, or its length is neither 1 nor the axis's (checked when the
            graph runs if unknown while building).
    """
    what = "repeat"
    _g.check_name(name, what)
    x = _t(input)
    g = x.graph
    if axis is None:
        x = g.op("Reshape", [x, _i64(g, [-1])])
        axis = 0
    else:
        axis = _int_arg(axis, f"{what}: axis")
    r = _rank(x, f"{what}: input")
    if r == 0:
        x = g.op("Reshape", [x, _i64(g, [1])])
        r = 1
    _check_axis(axis, x, f"{what}: axis")
    axis %= r
    n = _dim(x, axis)
    if _g._is_symbolic(repeats):
        reps = api.cast(_g.integer_tensor(repeats, f"{what}: repeats", g), int64)
        if reps.shape is None or len(reps.shape) > 1:
            raise ShapeError(f"{what}: repeats must be a scalar or 1-D, got shape "
                             f"{None if reps.shape is None else list(reps.shape)}")
        if len(reps.shape) == 1 and reps.shape[0] == 1:
            reps = g.op("Reshape", [reps, _i64(g, [])])
        if len(reps.shape) == 1 and isinstance(n, int) and reps.shape[0] not in (None, n):
            raise ShapeError(f"{what}: repeats has {reps.shape[0]} counts for an axis of "
                             f"length {n}")
        ok = api_extra.reduce_all(api.greater_equal(reps, 0))
        if len(reps.shape) == 0:
            out = _repeat_each(x, reps, axis, n)
        else:
            out = _repeat_counts(x, reps, axis, n)
        return _checked(out, ok, f"{what}: repeats must be >= 0", name)
    if isinstance(repeats, np.ndarray) and repeats.ndim > 1 or isinstance(
            repeats, (list, tuple)) and any(isinstance(c, (list, tuple, np.ndarray))
                                            for c in repeats):
        raise ShapeError(f"{what}: repeats must be a scalar or 1-D, got "
                         f"{_g._brief(repeats)}")
    if isinstance(repeats, (list, tuple)) or (isinstance(repeats, np.ndarray)
                                              and repeats.ndim == 1):
        counts = api._int_list(list(repeats), f"{what}: repeats")
    else:
        count = _int_arg(repeats.item() if isinstance(repeats, np.ndarray) else repeats,
                         f"{what}: repeats")
        if count < 0:
            raise ValueError(f"{what}: repeats must be >= 0, got {count}")
        return _finish(_repeat_each(x, count, axis, n), name)
    if any(c < 0 for c in counts):
        raise ValueError(f"{what}: repeats must be >= 0, got {counts}")
    if len(counts) == 1:
        return _finish(_repeat_each(x, counts[0], axis, n), name)
    if isinstance(n, int) and len(counts) != n:
        raise ShapeError(f"{what}: repeats has {len(counts)} counts for an axis of "
                         f"length {n}")
    idx = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    out = _gather(x, _i64(g, idx), axis)
    if isinstance(n, int):
        return _finish(out, name)
    return _checked(out, api.equal(n, len(counts)), f"{what}: repeats must have one count "
                    "per element of the axis", name)


def _repeat_each(x: Tensor, count, axis: int, n) -> Tensor:
    """x with every slice along `axis` repeated `count` times (an int or an int64
    scalar tensor): a new axis after it, expanded to count and merged into it."""
    g = x.graph
    r = len(x.shape)
    if isinstance(count, int) and count == 0:
        # the empty slice along the axis (onnxruntime's optimizer takes an Expand to a
        # 0-long axis for a no-op, so the Expand form's export failed to run there)
        return g.op("Slice", [x, _i64(g, [0]), _i64(g, [0]), _i64(g, [axis])])
    xu = g.op("Unsqueeze", [x, _i64(g, [axis + 1])])
    grow = [1] * (r + 1)
    grow[axis + 1] = count
    wide = g.op("Expand", [xu, _shape_of(g, grow)])
    merged = n * count if isinstance(n, int) and isinstance(count, int) else \
        (_i64(g, n) if isinstance(n, int) else n) * count
    dims = list(x.shape)
    if None not in dims and isinstance(merged, int):
        target = _i64(g, dims[:axis] + [merged] + dims[axis + 1:])
    else:
        parts = []
        if axis:
            parts.append(g.op("Shape", [x], {"end": axis}))
        parts.append(merged)
        if axis + 1 < r:
            parts.append(g.op("Shape", [x], {"start": axis + 1}))
        target = _shape_of(g, parts)
    return g.op("Reshape", [wide, target], _KEEP_ZEROS)


def _repeat_counts(x: Tensor, reps: Tensor, axis: int, n) -> Tensor:
    """x with slice k along `axis` repeated reps[k] times (reps an int64 1-D tensor of
    one count per slice, or one count): the source index of every output slice is
    the number of slices starting at or before it, minus one."""
    g = x.graph
    n_t = _i64(g, [n]) if isinstance(n, int) else _vec(g, n)
    reps = g.op("Expand", [reps, n_t])
    total = g.op("ReduceSum", [reps], {"keepdims": 0})
    starts = g.op("CumSum", [reps, _i64(g, 0)], {"exclusive": 1})
    marks = g.op("ConstantOfShape", [_vec(g, total + 1)],
                 {"value": np.zeros(1, np.int64)})
    marks = g.op("ScatterElements", [marks, api.minimum(starts, total),
                                     api.ones_like(starts)],
                 {"axis": 0, "reduction": "add"})
    idx = g.op("CumSum", [marks, _i64(g, 0)]) - 1
    idx = g.op("Slice", [idx, _i64(g, [0]), _vec(g, total)])
    return _gather(x, idx, axis)


# --------------------------------------------------------------------------- search, sets

def searchsorted(sorted_sequence, values, side="left", out_type=int32,
                 name=None) -> Tensor:
    """For each value, the index where it would be inserted into its row of the
    sorted innermost sequence to keep it sorted (tf.searchsorted): 'left' is the
    number of elements < value, 'right' the number <= value. The sequences are the
    last axis of sorted_sequence; values' rows pair with them in order (their leading
    dims flattened, as TF does), so both must hold the same number of rows. Costs
    O(rows * values * sequence length) comparisons (a broadcast Less and a sum).

    Raises:
        TypeError: out_type is not int32 or int64, or name is not a str.
        ValueError: side is not 'left' or 'right'.
        ShapeError: the inputs differ in dtype, are scalars or of unknown rank, are
            not numeric, or hold different numbers of rows (checked when the graph
            runs if unknown while building).
    """
    what = "searchsorted"
    _g.check_name(name, what)
    if side not in ("left", "right"):
        raise ValueError(f"{what}: side must be 'left' or 'right', got {_g._brief(side)}")
    dt = _dtype_arg(out_type, _INDEX_DTYPES, f"{what}: out_type")
    seq, vals = _pair(sorted_sequence, values, what)
    _numeric(seq, f"{what}: sorted_sequence")
    rs, rv = _rank(seq, f"{what}: sorted_sequence"), _rank(vals, f"{what}: values")
    if rs == 0 or rv == 0:
        raise ShapeError(f"{what}: sorted_sequence and values must have rank >= 1, got "
                         f"shapes {list(seq.shape)} and {list(vals.shape)}")
    g = seq.graph
    rows_s, rows_v = seq.shape[:-1], vals.shape[:-1]
    static_rows = None not in rows_s and None not in rows_v
    if static_rows and int(np.prod(rows_s, dtype=np.int64)) != int(
            np.prod(rows_v, dtype=np.int64)):
        raise ShapeError(f"{what}: sorted_sequence {list(seq.shape)} and values "
                         f"{list(vals.shape)} must hold the same number of rows")
    s2 = g.op("Flatten", [seq], {"axis": rs - 1})                  # (rows, N)
    v2 = g.op("Flatten", [vals], {"axis": rv - 1})                 # (rows, M)
    if not static_rows:
        same = api.equal(g.op("Shape", [s2], {"end": 1}), g.op("Shape", [v2], {"end": 1}))
        s2 = _checked(s2, same, f"{what}: sorted_sequence and values must hold the same "
                      "number of rows")
    s3 = g.op("Unsqueeze", [s2, _i64(g, [1])])                     # (rows, 1, N)
    v3 = g.op("Unsqueeze", [v2, _i64(g, [2])])                     # (rows, M, 1)
    below = g.op("Less" if side == "left" else "LessOrEqual", [s3, v3])
    counts = g.op("ReduceSum", [api.cast(below, int64), _i64(g, [2])], {"keepdims": 0})
    out = g.op("Reshape", [counts, g.op("Shape", [vals])], _KEEP_ZEROS)
    return _cast(out, dt, name=name)


def _vector(x: Tensor, what: str) -> None:
    r = _rank(x, what)
    if r != 1:
        raise ShapeError(f"{what} must be 1-D, got shape {list(x.shape)}")


def invert_permutation(x, name=None) -> Tensor:
    """The inverse of a permutation of 0..n-1: y[x[i]] = i (tf.invert_permutation;
    ONNX ScatterElements), of x's dtype. That x is a permutation is checked when the
    graph runs, as TF1 does.

    Raises:
        TypeError: name is not a str.
        ShapeError: x is not an integer tensor or not 1-D.
    """
    what = "invert_permutation"
    _g.check_name(name, what)
    p = _g.integer_tensor(x, f"{what}: x")
    _vector(p, f"{what}: x")
    g = p.graph
    n = _dim(p, 0)
    n_t = api.cast(_i64(g, n) if isinstance(n, int) else n, p.dtype)
    positions = g.op("Range", [api.cast(_i64(g, 0), p.dtype), n_t,
                               api.cast(_i64(g, 1), p.dtype)])
    message = f"{what}: x must be a permutation of 0 .. n-1 (each once)"
    # the range first (the scatter needs it), then that no position is written twice
    inside = api.logical_and(api.greater_equal(p, api.zeros_like(p)), api.less(p, n_t))
    p = _checked(p, inside, message)
    inverse = g.op("ScatterElements", [api.zeros_like(p), p, positions], {"axis": 0})
    once = api.equal(_gather(inverse, p, 0), positions)
    return _checked(inverse, once, message, name)


Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
ListDiff = collections.namedtuple("ListDiff", ["out", "idx"])


def _unique(x, out_idx, name, what: str):
    dt = _dtype_arg(out_idx, _INDEX_DTYPES, f"{what}: out_idx")
    v = _t(x)
    _vector(v, f"{what}: x")
    g = v.graph
    with g.name_scope(name or what):
        # onnxruntime's Unique takes int64, int8, float32, float64 and strings only: other
        # values go through a type that keeps them distinct (int64, float32) and back
        # (uint64 by its bit pattern: order of first appearance, not sorted, is kept)
        wide = _UNIQUE_WIDENED.get(v.dtype)
        y, _, inverse, counts = g.op("Unique", [v if wide is None else api.cast(v, wide)],
                                     {"sorted": 0}, num_outputs=4)
        if wide is not None:
            y = api.cast(y, v.dtype)
        return y, api.cast(inverse, dt), api.cast(counts, dt)


_UNIQUE_WIDENED = {DType.INT32: DType.INT64, DType.INT16: DType.INT64,
                   DType.UINT8: DType.INT64, DType.UINT16: DType.INT64,
                   DType.UINT32: DType.INT64, DType.UINT64: DType.INT64,
                   DType.BOOL: DType.INT64, DType.FLOAT16: DType.FLOAT32,
                   DType.BFLOAT16: DType.FLOAT32}


def unique(x, out_idx=int32, name=None) -> Unique:
    """The distinct elements of a 1-D tensor in the order they first appear, and for
    each element of x the index of its value in them (tf.unique; ONNX Unique with
    sorted=0): a Unique namedtuple (y, idx), idx of dtype out_idx.

    Raises:
        TypeError: out_idx is not int32 or int64, or name is not a str.
        ShapeError: x is not 1-D (or of unknown rank).
    """
    _g.check_name(name, "unique")
    y, idx, _ = _unique(x, out_idx, name, "unique")
    return Unique(y, idx)


def unique_with_counts(x, out_idx=int32, name=None) -> UniqueWithCounts:
    """As `unique`, with how many times each distinct element occurs
    (tf.unique_with_counts): a UniqueWithCounts namedtuple (y, idx, count), idx and
    count of dtype out_idx.

    Raises:
        TypeError: out_idx is not int32 or int64, or name is not a str.
        ShapeError: x is not 1-D (or of unknown rank).
    """
    _g.check_name(name, "unique_with_counts")
    return UniqueWithCounts(*_unique(x, out_idx, name, "unique_with_counts"))


def setdiff1d(x, y, index_dtype=int32, name=None) -> ListDiff:
    """The elements of 1-D x that are not in 1-D y, in x's order (repeats kept), and
    their positions in x (tf.setdiff1d): a ListDiff namedtuple (out, idx), idx of
    dtype index_dtype. Compares every pair (O(len(x) * len(y))).

    Raises:
        TypeError: index_dtype is not int32 or int64, or name is not a str.
        ShapeError: x and y are not 1-D, or are tensors of different dtypes.
    """
    what = "setdiff1d"
    _g.check_name(name, what)
    dt = _dtype_arg(index_dtype, _INDEX_DTYPES, f"{what}: index_dtype")
    a, b = _pair(x, y, what)
    _vector(a, f"{what}: x")
    _vector(b, f"{what}: y")
    g = a.graph
    with g.name_scope(name or what):
        hits = g.op("Equal", [g.op("Unsqueeze", [a, _i64(g, [1])]),
                              g.op("Unsqueeze", [b, _i64(g, [0])])])
        keep = api.logical_not(api_extra.reduce_any(hits, axis=1))
        n = _dim(a, 0)
        positions = g.op("Range", [_i64(g, 0), _i64(g, n) if isinstance(n, int) else n,
                                   _i64(g, 1)])
        out = g.op("Compress", [a, keep], {"axis": 0})
        idx = g.op("Compress", [positions, keep], {"axis": 0})
        return ListDiff(out, api.cast(idx, dt))


# --------------------------------------------------------------------------- counting

def _length_arg(value, what: str, g):
    """bincount's minlength / maxlength: None, an int >= 0 or an integer scalar tensor
    (as int64).

    Raises:
        TypeError: it is another kind of value.
        ValueError: an int is negative.
        ShapeError: a tensor is not an integer scalar.
    """
    if value is None:
        return None
    if _g._is_symbolic(value):
        t = _g.integer_tensor(value, what, g)
        if t.shape is not None and len(t.shape) != 0:
            raise ShapeError(f"{what} must be a scalar, got shape {list(t.shape)}")
        return api.cast(t, int64)
    v = _int_arg(value, what)
    if v < 0:
        raise ValueError(f"{what} must be >= 0, got {v}")
    return _i64(g, v)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=int32) -> Tensor:
    """How many times each value 0, 1, ... occurs in the integer tensor arr (all its
    elements), as tf.compat.v1.bincount: the result's length is max(arr) + 1 (0 for an
    empty arr), at least minlength and at most maxlength (values beyond are dropped).
    With weights (arr's shape) each occurrence adds its weight and the result has the
    weights' dtype, else `dtype` (int32, int64, float32 or float64). minlength and
    maxlength are ints or integer scalar tensors. Negative values are refused when
    the graph runs, as TF1 does.

    Raises:
        TypeError: dtype is not one of those four, or minlength / maxlength is not an
            int or an integer tensor.
        ValueError: minlength or maxlength is negative.
        ShapeError: arr is not an integer tensor, weights is not numeric or has
            another shape than arr, or a length tensor is not a scalar.
    """
    what = "bincount"
    out_dt = _dtype_arg(dtype, _NUMERIC_OUT, f"{what}: dtype")
    a = _g.integer_tensor(arr, f"{what}: arr")
    g = a.graph
    flat = api.cast(g.op("Reshape", [a, _i64(g, [-1])]), int64)
    flat = _checked(flat, api.greater_equal(flat, 0), f"{what}: arr must be non-negative")
    if weights is not None:
        w = _t(weights, graph=g)
        _numeric(w, f"{what}: weights")
        if w.shape is not None and a.shape is not None and (
                len(w.shape) != len(a.shape) or any(
                    p is not None and q is not None and p != q
                    for p, q in zip(w.shape, a.shape))):
            raise ShapeError(f"{what}: weights must have arr's shape {list(a.shape)}, got "
                             f"{list(w.shape)}")
        out_dt = w.dtype
        w = g.op("Reshape", [w, _i64(g, [-1])])
    else:
        w = api.cast(api.ones_like(flat), out_dt)
    low = _length_arg(minlength, f"{what}: minlength", g)
    high = _length_arg(maxlength, f"{what}: maxlength", g)
    top = g.op("ReduceMax", [g.op("Concat", [flat, _i64(g, [-1])], {"axis": 0})],
               {"keepdims": 0})
    length = top + 1
    if low is not None:
        length = api.maximum(length, low)
    if high is not None:
        length = api.minimum(length, high)
    slot = api.where(api.less(flat, length), flat, api.zeros_like(flat) + length)
    zeros = g.op("ConstantOfShape", [_vec(g, length + 1)],
                 {"value": np.zeros(1, out_dt.numpy)})
    counts = g.op("ScatterElements", [zeros, slot, w], {"axis": 0, "reduction": "add"})
    return g.op("Slice", [counts, _i64(g, [0]), _vec(g, length)])


def confusion_matrix(labels, predictions, num_classes=None, dtype=int32, name=None,
                     weights=None) -> Tensor:
    """The (num_classes, num_classes) matrix counting, at [label, prediction], the
    pairs of the 1-D labels and predictions (tf.compat.v1.confusion_matrix; float
    labels are truncated to integers as TF does). num_classes defaults to
    max(labels, predictions) + 1; weights (one per pair) are added instead of ones;
    the result has dtype `dtype`. Labels and predictions must be in [0, num_classes),
    checked when the graph runs as in TF1.

    Raises:
        TypeError: dtype is not numeric, num_classes not an int or an integer tensor,
            or name not a str.
        ValueError: num_classes is negative.
        ShapeError: labels or predictions is not 1-D or not numeric, they differ in
            length, or weights does not have their shape.
    """
    what = "confusion_matrix"
    _g.check_name(name, what)
    dt = _dtype_arg(dtype, _NUMERIC_OUT, f"{what}: dtype")
    lab, pred = _t(labels), _t(predictions)
    g = lab.graph
    pairs = []
    for t, label in ((lab, "labels"), (pred, "predictions")):
        _numeric(t, f"{what}: {label}")
        _vector(t, f"{what}: {label}")
        pairs.append(api.cast(t, int64))
    lab, pred = pairs
    if lab.shape[0] is not None and pred.shape[0] is not None and lab.shape[0] != \
            pred.shape[0]:
        raise ShapeError(f"{what}: labels and predictions differ in length "
                         f"({lab.shape[0]} and {pred.shape[0]})")
    with g.name_scope(name or what):
        if num_classes is None:
            both = g.op("Concat", [lab, pred, _i64(g, [-1])], {"axis": 0})
            n = g.op("ReduceMax", [both], {"keepdims": 0}) + 1
        else:
            n = _length_arg(num_classes, f"{what}: num_classes", g)
        if weights is None:
            w = api.cast(api.ones_like(lab), dt)
        else:
            w = _t(weights, graph=g)
            _numeric(w, f"{what}: weights")
            if w.shape is not None and (len(w.shape) != 1 or (
                    w.shape[0] is not None and lab.shape[0] is not None
                    and w.shape[0] != lab.shape[0])):
                raise ShapeError(f"{what}: weights must have the labels' shape "
                                 f"{list(lab.shape)}, got {list(w.shape)}")
            w = api.cast(w, dt)
        inside = api.logical_and(
            api.logical_and(api_extra.reduce_all(api.greater_equal(lab, 0)),
                            api_extra.reduce_all(api.greater_equal(pred, 0))),
            api.logical_and(api_extra.reduce_all(api.less(lab, n)),
                            api_extra.reduce_all(api.less(pred, n))))
        same = api.equal(g.op("Shape", [lab]), g.op("Shape", [pred]))
        cell = _checked(lab * n + pred, api.logical_and(inside, api_extra.reduce_all(same)),
                        f"{what}: labels and predictions must be in [0, num_classes) and "
                        "of one length")
        zeros = g.op("ConstantOfShape", [_vec(g, n * n)], {"value": np.zeros(1, dt.numpy)})
        cells = g.op("ScatterElements", [zeros, cell, w], {"axis": 0, "reduction": "add"})
        shape = g.op("Concat", [_vec(g, n), _vec(g, n)], {"axis": 0})
        return g.op("Reshape", [cells, shape], _KEEP_ZEROS)


log_matrix_determinant = slogdet


# --------------------------------------------------------------------------- tf.linalg

def _linalg_namespace() -> types.ModuleType:
    """og.linalg: tf.linalg's names for the functions here (and og's eye, matmul,
    matrix_transpose, einsum, tensordot)."""
    ns = types.ModuleType("onegraph.linalg", "TF's tf.linalg names (band_part, diag, "
                          "diag_part, set_diag, det, slogdet, logdet, trace, cross, norm, "
                          "tensor_diag, tensor_diag_part, eye, matmul, matrix_transpose, "
                          "transpose, einsum, tensordot).")
    names = {"band_part": matrix_band_part, "diag": matrix_diag,
             "diag_part": matrix_diag_part, "set_diag": matrix_set_diag,
             "det": matrix_determinant, "slogdet": slogdet, "logdet": logdet,
             "trace": trace, "cross": cross, "norm": norm, "tensor_diag": diag,
             "tensor_diag_part": diag_part, "eye": api_math.eye, "matmul": api.matmul,
             "matrix_transpose": api_math.matrix_transpose,
             "transpose": api_math.matrix_transpose, "einsum": api_extra.einsum,
             "tensordot": api_extra.tensordot}
    for key, fn in names.items():
        setattr(ns, key, fn)
    ns.__all__ = sorted(names)
    return ns


linalg = _linalg_namespace()


__all__ = [
    "bincount", "confusion_matrix", "cross", "cumprod", "diag", "diag_part",
    "invert_permutation", "linalg", "log_matrix_determinant", "matrix_band_part",
    "matrix_determinant", "matrix_diag", "matrix_diag_part", "matrix_set_diag", "norm",
    "repeat", "roll", "searchsorted", "setdiff1d", "trace", "unique", "unique_with_counts",
]

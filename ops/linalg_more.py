"""Operators (onegraph domain): LU factorisation, matrix functions and banded solves
that ONNX lacks, with TensorFlow's names and conventions: Lu, MatrixExponential,
MatrixSquareRoot, TridiagonalSolve, BandedTriangularSolve.

As in linalg_solve.py, each works on the last two axes with leading batch axes, in
float32 or float64 (float16/bfloat16 computed in float32); what the math cannot handle
is an ExecutionError naming the op. Gradients are in linalg_more_grad.py.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, ShapeError
from .elementwise import onnx_type_to_numpy
from .linalg_solve import _back, _broadcast_batch, _float_info, _square, _work
from .linalg_solve import _same_infer as _square_infer  # a float square matrix in, alike out
from .registry import TensorInfo, define


# ------------------------------------------------------------------------------ LU

def _batch_size(shape) -> int:
    """The number of matrices in an array of `shape` [..., rows, cols] (1 for a plain
    matrix, 0 for an empty batch)."""
    return int(np.prod(shape[:-2], dtype=np.int64))


def lu_factor(a: np.ndarray) -> tuple:
    """(packed LU, permutation) of square matrices [..., n, n] by Gaussian elimination
    with partial pivoting, as LAPACK's getrf (the first largest |pivot| wins): input[p]
    = L U, L unit lower (below the diagonal of the packed form), U upper. A zero pivot
    column is left as it is (no division), so singular matrices factor too. 0 x 0
    matrices (and empty batches) give empty factors and permutations."""
    shape = a.shape
    n = shape[-1]
    # The batch size is spelled out: reshape's -1 is ambiguous (an error) when the
    # array is empty, and 0 x 0 matrices (or an empty batch) are valid input.
    x = np.array(a.reshape((_batch_size(shape), n, n)), copy=True)
    batch = np.arange(x.shape[0])
    perm = np.tile(np.arange(n), (x.shape[0], 1))
    for k in range(n):
        piv = k + np.argmax(np.abs(x[:, k:, k]), axis=1)
        rows_k, rows_p = x[batch, k].copy(), x[batch, piv].copy()
        x[batch, k], x[batch, piv] = rows_p, rows_k
        pk, pp = perm[batch, k].copy(), perm[batch, piv].copy()
        perm[batch, k], perm[batch, piv] = pp, pk
        pivot = x[:, k, k]
        safe = np.where(pivot == 0, 1, pivot)
        scale = np.where((pivot == 0)[:, None], 0, x[:, k + 1:, k] / safe[:, None])
        x[:, k + 1:, k] = np.where((pivot == 0)[:, None], x[:, k + 1:, k], scale)
        x[:, k + 1:, k + 1:] -= scale[:, :, None] * x[:, k, None, k + 1:]
    return x.reshape(shape), perm.reshape(shape[:-1])


def _lu_kernel(inputs, attrs, ctx):
    """(lu, p): TF's packed LU of square matrices and the permutation vector."""
    x = _work(inputs[0], "Lu")
    _square(x, "Lu")
    if not np.all(np.isfinite(x)):
        raise ExecutionError("Lu: the input holds NaN or infinity")
    packed, perm = lu_factor(x)
    return (_back(packed, inputs[0]), perm.astype(onnx_type_to_numpy(attrs["output_idx_type"])))


# ------------------------------------------------------------------------ expm

# TensorFlow's linalg_impl.matrix_exponential (Higham 2005): Pade degree by the 1-norm,
# scaling by 2^s only for the top degree, then s squarings.
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
         1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
         33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
_LIMITS = {np.dtype(np.float64): ((3, 1.495585217958292e-002), (5, 2.539398330063230e-001),
                                  (7, 9.504178996162932e-001), (9, 2.097847961257068e+000),
                                  (13, 5.371920351148152)),
           np.dtype(np.float32): ((3, 4.258730016922831e-001), (5, 1.880152677804762e+000),
                                  (7, 3.925724783138660))}


def _pade(a, degree: int):
    """(U, V) of the degree-m Pade approximant: expm(A) ~ (V - U)^-1 (V + U)."""
    b = [np.asarray(c, a.dtype) for c in _PADE[degree]]
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    a2 = a @ a
    if degree == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a6 @ (a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
            + b[0] * eye
        return a @ u, v
    powers = [eye, a2]
    while len(powers) <= degree // 2:
        powers.append(powers[-1] @ a2)
    u = sum(b[2 * k + 1] * powers[k] for k in range(degree // 2 + 1))
    v = sum(b[2 * k] * powers[k] for k in range(degree // 2 + 1))
    return a @ u, v


def expm(a: np.ndarray) -> np.ndarray:
    """exp of square matrices [..., n, n] (float32 or float64) by TF's scaling and
    squaring: per matrix, the Pade degree its 1-norm allows (3 to 13 in float64, 3 to 7
    in float32), the top degree after scaling by 2^-s, then s squarings. Empty input
    gives empty output; a matrix holding NaN or infinity (or whose 1-norm overflows)
    gives a NaN matrix without raising (its squaring count would be infinite), and a
    finite one too large for the float range overflows to inf/NaN. Callers silence
    numpy's overflow warnings (np.errstate), since overflow is the answer there."""
    limits = _LIMITS[a.dtype]
    if a.size == 0:          # 0 x 0 matrices or an empty batch: TF returns them empty
        return np.empty_like(a)
    flat = a.reshape((_batch_size(a.shape),) + a.shape[-2:])
    out = np.empty_like(flat)
    for i, m in enumerate(flat):
        with np.errstate(all="ignore"):
            norm = float(np.abs(m).sum(axis=0).max())
        if not np.isfinite(norm):
            # NaN or infinity in the matrix (or a 1-norm past the float range): the
            # squaring count would be infinite (an OverflowError in int(); TF's loop
            # over it would not end), and the result is non-finite anyway: NaN.
            out[i] = np.nan
            continue
        top, top_limit = limits[-1]
        # only a norm above the top limit needs squarings; testing that first also
        # keeps a tiny norm (5e-324 / limit underflows to 0, log2 -inf) out of int()
        squarings = int(np.floor(np.log2(norm / top_limit))) if norm > top_limit else 0
        degree = next((d for d, lim in limits[:-1] if norm < lim), top)
        scaled = m / a.dtype.type(2.0 ** squarings) if degree == top else m
        u, v = _pade(scaled, degree)
        try:
            r = np.linalg.solve(v - u, v + u)
        except np.linalg.LinAlgError:
            raise ExecutionError("MatrixExponential: the Pade denominator is singular "
                                 "(the input holds NaN or infinity?)") from None
        for _ in range(squarings if degree == top else 0):
            r = r @ r
        out[i] = r
    return out.reshape(a.shape)


def _expm_kernel(inputs, attrs, ctx):
    x = _work(inputs[0], "MatrixExponential")
    _square(x, "MatrixExponential")
    with np.errstate(all="ignore"):
        return (_back(expm(x), inputs[0]),)


# ------------------------------------------------------------------------ sqrtm

_DB_ITERATIONS = 100


def sqrtm(a: np.ndarray) -> np.ndarray:
    """The principal square root of square matrices by the scaled Denman-Beavers
    iteration (product form): NaN for a matrix that has none (an eigenvalue on the
    closed negative real axis, where the iteration does not converge) or one holding
    NaN or infinity; the zero matrix gives zeros; empty input gives empty output."""
    if a.size == 0:          # 0 x 0 matrices or an empty batch: TF returns them empty
        return np.empty_like(a)
    flat = a.reshape((_batch_size(a.shape),) + a.shape[-2:]).astype(np.float64)
    out = np.empty_like(flat)
    n = a.shape[-1]
    tol = 10 * n * np.finfo(np.float64).eps
    for i, m in enumerate(flat):
        if not np.any(m):
            out[i] = 0.0
            continue
        y, z = m.copy(), np.eye(n)
        done = False
        for _ in range(_DB_ITERATIONS):
            try:
                yi, zi = np.linalg.inv(y), np.linalg.inv(z)
            except np.linalg.LinAlgError:
                break
            det = abs(np.linalg.det(y) * np.linalg.det(z))
            g = det ** (-1.0 / (2 * n)) if det > 0 and np.isfinite(det) else 1.0
            y_new = 0.5 * (g * y + zi / g)
            z_new = 0.5 * (g * z + yi / g)
            change = np.abs(y_new - y).sum() / max(np.abs(y_new).sum(), 1e-300)
            y, z = y_new, z_new
            if change <= tol:
                done = True
                break
        out[i] = y if done and np.all(np.isfinite(y)) else np.nan
    return out.reshape(a.shape)


def _sqrtm_kernel(inputs, attrs, ctx):
    x = _work(inputs[0], "MatrixSquareRoot")
    _square(x, "MatrixSquareRoot")
    with np.errstate(all="ignore"):
        return (_back(sqrtm(x), inputs[0]),)


# ------------------------------------------------------------------- tridiagonal

def tridiagonal_solve(diags: np.ndarray, rhs: np.ndarray, pivoting: bool, op: str):
    """X with A X = rhs for A given by compact diagonals [..., 3, m] (superdiagonal with
    its last entry unused, main, subdiagonal with its first entry unused) and rhs
    [..., m, k]: LAPACK gtsv's elimination (row interchanges where |sub| > |diag|) or,
    without pivoting, the Thomas algorithm. An empty system (m or k zero, or an empty
    batch) gives the empty solution; NaN or infinity propagates into the result.

    Raises:
        ExecutionError: the matrix is singular (a zero pivot).
    """
    batch = np.broadcast_shapes(diags.shape[:-2], rhs.shape[:-2])
    m, k = rhs.shape[-2:]
    if m == 0 or k == 0 or 0 in batch:
        # An empty system (0 x 0 matrices, no right-hand sides or an empty batch): TF
        # returns the empty solution; the elimination below cannot reshape it.
        return np.zeros(batch + (m, k), np.float64)
    du = np.array(np.broadcast_to(diags[..., 0, :], batch + (m,)), np.float64)
    d = np.array(np.broadcast_to(diags[..., 1, :], batch + (m,)), np.float64)
    dl = np.array(np.broadcast_to(diags[..., 2, :], batch + (m,)), np.float64)
    b = np.array(np.broadcast_to(rhs, batch + (m, k)), np.float64)
    du = du.reshape(-1, m)
    d = d.reshape(-1, m)
    dl = dl.reshape(-1, m)[:, 1:]          # dl[i] = A[i + 1, i]
    b = b.reshape(-1, m, k)
    du2 = np.zeros_like(d)
    fail = ExecutionError(f"{op}: the matrix is not invertible (a zero pivot)")
    for i in range(m - 1):
        swap = np.abs(d[:, i]) < np.abs(dl[:, i]) if pivoting else np.zeros(len(d), bool)
        keep = ~swap
        if np.any(keep & (d[:, i] == 0)):
            raise fail
        with np.errstate(all="ignore"):
            fact_keep = dl[:, i] / np.where(keep, d[:, i], 1.0)
            fact_swap = d[:, i] / np.where(swap, dl[:, i], 1.0)
        # no interchange
        d_next_keep = d[:, i + 1] - fact_keep * du[:, i]
        b_next_keep = b[:, i + 1] - fact_keep[:, None] * b[:, i]
        # interchange rows i and i + 1
        d_i_swap = dl[:, i]
        d_next_swap = du[:, i] - fact_swap * d[:, i + 1]
        du_i_swap = d[:, i + 1].copy()
        if i < m - 2:
            du2_swap = du[:, i + 1].copy()
            du_next_swap = -fact_swap * du2_swap
            du2[:, i] = np.where(swap, du2_swap, 0.0)
            du[:, i + 1] = np.where(swap, du_next_swap, du[:, i + 1])
        b_i_swap = b[:, i + 1].copy()
        b_next_swap = b[:, i] - fact_swap[:, None] * b[:, i + 1]
        d[:, i] = np.where(swap, d_i_swap, d[:, i])
        d[:, i + 1] = np.where(swap, d_next_swap, d_next_keep)
        du[:, i] = np.where(swap, du_i_swap, du[:, i])
        b[:, i] = np.where(swap[:, None], b_i_swap, b[:, i])
        b[:, i + 1] = np.where(swap[:, None], b_next_swap, b_next_keep)
    if np.any(d == 0):
        raise fail
    x = np.empty_like(b)
    for i in range(m - 1, -1, -1):
        acc = b[:, i].copy()
        if i + 1 < m:
            acc -= du[:, i, None] * x[:, i + 1]
        if i + 2 < m:
            acc -= du2[:, i, None] * x[:, i + 2]
        x[:, i] = acc / d[:, i, None]
    return x.reshape(batch + (m, k))


def _tridiagonal_solve_kernel(inputs, attrs, ctx):
    """X [..., m, k] for compact diagonals [..., 3, m] and rhs [..., m, k]."""
    op = "TridiagonalSolve"
    diags = _work(inputs[0], op)
    rhs = _work(inputs[1], op)
    if diags.shape[-2] != 3:
        raise ShapeError(f"{op}: diagonals must be [..., 3, m], got {list(diags.shape)}")
    if rhs.shape[-2] != diags.shape[-1]:
        raise ShapeError(f"{op}: rhs {list(rhs.shape)} does not fit diagonals "
                         f"{list(diags.shape)}: it needs {diags.shape[-1]} rows")
    try:
        np.broadcast_shapes(diags.shape[:-2], rhs.shape[:-2])
    except ValueError:
        raise ShapeError(f"{op}: the batch dims of diagonals {list(diags.shape)} and rhs "
                         f"{list(rhs.shape)} do not broadcast") from None
    x = tridiagonal_solve(diags, rhs, bool(int(attrs.get("partial_pivoting", 1))), op)
    return (_back(x, inputs[1]),)


# ---------------------------------------------------------------- banded triangular

def banded_to_dense(bands: np.ndarray, lower: bool) -> np.ndarray:
    """The [..., m, m] triangular matrix of TF's banded form [..., k, m]: lower, row j
    is the j-th subdiagonal right-aligned (A[i, i - j] = bands[j, i]); upper, row
    k - 1 - j is the j-th superdiagonal left-aligned (A[i, i + j] = bands[k-1-j, i])."""
    k, m = bands.shape[-2:]
    out = np.zeros(bands.shape[:-2] + (m, m), bands.dtype)
    for j in range(min(k, m)):
        idx = np.arange(j, m) if lower else np.arange(m - j)
        if lower:
            out[..., idx, idx - j] = bands[..., j, idx]
        else:
            out[..., idx, idx + j] = bands[..., k - 1 - j, idx]
    return out


def _banded_kernel(inputs, attrs, ctx):
    op = "BandedTriangularSolve"
    bands = _work(inputs[0], op)
    rhs = _work(inputs[1], op).astype(bands.dtype, copy=False)
    if rhs.shape[-2] != bands.shape[-1]:
        raise ShapeError(f"{op}: rhs {list(rhs.shape)} does not fit bands "
                         f"{list(bands.shape)}: it needs {bands.shape[-1]} rows")
    lower = bool(int(attrs.get("lower", 1)))
    a = banded_to_dense(bands, lower)
    if int(attrs.get("adjoint", 0)):
        a = np.swapaxes(a, -1, -2)
    if np.any(np.diagonal(a, axis1=-2, axis2=-1) == 0):
        raise ExecutionError(f"{op}: the matrix is singular (a zero on its diagonal)")
    try:
        np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    except ValueError:
        raise ShapeError(f"{op}: the batch dims of bands {list(bands.shape)} and rhs "
                         f"{list(rhs.shape)} do not broadcast") from None
    # the matrix is lower triangular when (lower and not adjoint) or (upper and adjoint)
    lower_now = lower != bool(int(attrs.get("adjoint", 0)))
    with np.errstate(all="ignore"):
        x = triangular_substitution(a, rhs, lower_now, bands.shape[-2])
    return (_back(x, inputs[1]),)


def triangular_substitution(a: np.ndarray, rhs: np.ndarray, lower: bool,
                            band: int) -> np.ndarray:
    """X with A X = rhs for triangular A [..., m, m] (nonzero diagonal) with `band`
    diagonals (the main one included) and rhs [..., m, n], batch dims broadcast: forward
    (lower) or back substitution over the band, as TF's banded kernel. NaN or infinity
    in A or rhs propagates into X (np.linalg.solve's LU refused such input as
    "singular"); callers silence numpy's warnings."""
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    m, n = rhs.shape[-2:]
    x = np.zeros(batch + (m, n), np.result_type(a, rhs))
    b = np.broadcast_to(rhs, batch + (m, n))
    rows = range(m) if lower else range(m - 1, -1, -1)
    for i in rows:
        lo, hi = (max(0, i - band + 1), i) if lower else (i + 1, min(m, i + band))
        acc = b[..., i, :] - np.einsum("...j,...jn->...n", a[..., i, lo:hi], x[..., lo:hi, :])
        x[..., i, :] = acc / a[..., i, i, None]
    return x


# --------------------------------------------------------------------------- inference

def _lu_infer(attrs, inputs):
    (lu,) = _square_infer("Lu")(attrs, inputs)
    idx = onnx_type_to_numpy(attrs["output_idx_type"])
    if idx not in (np.int32, np.int64):
        raise ShapeError(f"Lu: output_idx_type must be int32 or int64, got {idx}")
    return [lu, TensorInfo(idx, None if lu.shape is None else tuple(lu.shape[:-1]))]


def _rhs_infer(op):
    def infer(attrs, inputs):
        a, b = inputs
        _float_info(a, op)
        _float_info(b, op)
        if a.shape is None or b.shape is None:
            return [TensorInfo(b.dtype, None)]
        batch = _broadcast_batch(tuple(a.shape[:-2]), tuple(b.shape[:-2]), op)
        return [TensorInfo(b.dtype, batch + tuple(b.shape[-2:]))]
    return infer


_DOMAIN = {"domain": "onegraph", "since_version": 1}

OPS = (
    define("BandedTriangularSolve", ["bands", "rhs"], ["output"], _banded_kernel,
           attrs=[("lower", "int", 1), ("adjoint", "int", 0)],
           infer=_rhs_infer("BandedTriangularSolve"), **_DOMAIN),
    define("Lu", ["input"], ["lu", "p"], _lu_kernel, attrs=[("output_idx_type", "int", 6)],
           infer=_lu_infer, **_DOMAIN),
    define("MatrixExponential", ["input"], ["output"], _expm_kernel,
           infer=_square_infer("MatrixExponential"), **_DOMAIN),
    define("MatrixSquareRoot", ["input"], ["output"], _sqrtm_kernel,
           infer=_square_infer("MatrixSquareRoot"), **_DOMAIN),
    define("TridiagonalSolve", ["diagonals", "rhs"], ["output"], _tridiagonal_solve_kernel,
           attrs=[("partial_pivoting", "int", 1)], infer=_rhs_infer("TridiagonalSolve"),
           **_DOMAIN),
)

"""tf.linalg's LU, matrix functions and banded solvers: og.linalg.lu, lu_solve,
lu_matrix_inverse, lu_reconstruct, expm, sqrtm, tridiagonal_matmul,
tridiagonal_solve, eigh_tridiagonal and banded_triangular_solve.

The factorisations and matrix functions are onegraph-domain ops (ops/linalg_more.py,
gradients in ops/linalg_more_grad.py): Lu, MatrixExponential, MatrixSquareRoot,
TridiagonalSolve, BandedTriangularSolve. The rest are compositions of og ops (so
differentiable where those are): lu_solve, lu_matrix_inverse and lu_reconstruct
through triangular solves and a permutation matrix, tridiagonal_matmul through
shifted products, eigh_tridiagonal through og.self_adjoint_eig of the dense matrix.
Graphs using them save as .og files but do not export to ONNX.

These exist in TF only under tf.linalg, so this module adds them to og.linalg alone.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_extra, api_math
from . import graph as _g
from .api import _bool_arg, _t
from .api_linalg import linalg, matrix_band_part, matrix_diag, matrix_diag_part
from .api_linalg_solve import _matrices, _op, matrix_triangular_solve, self_adjoint_eig
from .graph import Tensor

__all__: list = []   # nothing at og's top level: TF has these only in tf.linalg

LINALG_NAMES = ("banded_triangular_solve", "eigh_tridiagonal", "expm", "lu",
                "lu_matrix_inverse", "lu_reconstruct", "lu_solve", "sqrtm",
                "tridiagonal_matmul", "tridiagonal_solve")


def _named(x: Tensor, name) -> Tensor:
    return api.identity(x, name=name) if name is not None else x


def _known_rank(x: Tensor, what: str, label: str = "lower_upper") -> Tensor:
    """x, whose rank must be known while building (its sizes may be known only at run
    time).

    Raises:
        ShapeError: it is not.
    """
    if x.shape is None:
        raise ShapeError(f"{what}: {label} needs a rank known while building (matrices "
                         "[..., n, n]), got an unknown shape")
    return x


def _run_size(x: Tensor, axis: int, dtype=DType.INT64) -> Tensor:
    """x's size along axis as a scalar of dtype, read when the graph runs."""
    return api.shape(x, out_type=dtype)[axis]


def _identity_like(x: Tensor) -> Tensor:
    """Identity matrices of x's shape [..., n, n] and dtype with n read at run time:
    the diagonal of a matrix of ones."""
    return matrix_band_part(api.ones_like(x), 0, 0)


def _square_at_run_time(packed: Tensor, what: str) -> Tensor:
    """packed, checked when the graph runs to hold square matrices (its sizes are
    unknown while building)."""
    square = api.equal(_run_size(packed, -2), _run_size(packed, -1))
    return api_math._checked(packed, square, f"{what}: lower_upper must hold square "
                                             "matrices")


def _permutation_matrix(p: Tensor, packed: Tensor, what: str) -> Tensor:
    """The permutation matrices of perm p [..., n] (P[i, perm[i]] = 1) in packed's
    dtype, n read at run time: perm == range(n). An Assert checks perm's length."""
    n = _run_size(packed, -1, p.dtype)
    fits = api.equal(_run_size(p, -1, p.dtype), n)
    p = api_math._checked(p, fits, f"{what}: perm's last dim must be the matrices' size")
    hits = api.equal(api.expand_dims(p, -1), api_extra.range(n, dtype=p.dtype))
    return api.cast(hits, packed.dtype)


def lu(input, output_idx_type=DType.INT32, name=None) -> tuple:  # noqa: A002 - TF's name
    """(lu, p): the LU factorisation with partial pivoting of square matrices, as
    tf.linalg.lu: input[..., p, :] = L U, with L unit lower triangular below lu's
    diagonal and U upper triangular on and above it (LAPACK getrf's choice of pivots:
    the first largest magnitude). Singular matrices factor too (a zero on U's
    diagonal). Differentiable in lu (TF's formula).

    Example:
        >>> lu_, p = og.linalg.lu(og.constant([[1.0, 2.0], [3.0, 4.0]]))   # p = [1, 0]

    Raises:
        TypeError: input is not float, or output_idx_type not int32/int64.
        ShapeError: the matrices are not square.
    """
    _g.check_name(name, "lu")
    x = _matrices(input, "lu")
    idx = _g.as_dtype(output_idx_type)
    if idx not in (DType.INT32, DType.INT64):
        raise TypeError(f"lu: output_idx_type must be int32 or int64, got {idx.short_name}")
    packed, perm = _op(x, "Lu", [x], {"output_idx_type": api.onnx_type(idx)}, name,
                       num_outputs=2)
    return packed, perm


def _lu_parts(lower_upper, perm, what: str):
    """(packed [..., n, n], unit lower L, upper U, permutation matrix P, n), with P
    [..., n, n] one-hot rows: P[i, perm[i]] = 1, so P A = A[perm]. n is None when it
    is known only at run time (then Asserts check the shapes when the graph runs)."""
    packed = _known_rank(_matrices(lower_upper, what), what)
    p = _t(perm, graph=packed.graph)
    if p.dtype not in (DType.INT32, DType.INT64):
        raise TypeError(f"{what}: perm must be int32 or int64, got {p.dtype.short_name}")
    if p.shape is not None and len(p.shape) == 0:
        raise ShapeError(f"{what}: perm must be [..., n], got a scalar")
    n = packed.shape[-1]
    if n is None:
        # TF1 takes sizes known only at run time: build what needs n from the run
        packed = _square_at_run_time(packed, what)
        eye = _identity_like(packed)
    else:
        n = int(n)
        eye = api.constant(np.eye(n, dtype=packed.dtype.numpy))
    lower = matrix_band_part(packed, -1, 0) - matrix_band_part(packed, 0, 0) + eye
    upper = matrix_band_part(packed, 0, -1)
    pmat = _permutation_matrix(p, packed, what) if n is None else \
        api.one_hot(p, n, dtype=packed.dtype)
    return packed, lower, upper, pmat, n


def _rows_fit(b: Tensor, packed: Tensor, n, what: str) -> Tensor:
    """rhs b [..., m, k], which must have m = n rows: checked while building when both
    are known, else by an Assert when the graph runs.

    Raises:
        ShapeError: b's rank is unknown, or m and n are known and differ.
    """
    b = _known_rank(b, what, "rhs")
    rows = b.shape[-2]
    if n is not None and rows is not None:
        if rows != n:
            raise ShapeError(f"{what}: rhs {list(b.shape)} does not fit matrices of size "
                             f"{n}: it needs {n} rows")
        return b
    fits = api.equal(_run_size(b, -2), _run_size(packed, -1))
    return api_math._checked(b, fits, f"{what}: rhs must have as many rows as the "
                                      "matrices' size")


def _lu_solve(lower_upper, perm, rhs, what: str, name) -> Tensor:
    """lu_solve, its errors naming `what`."""
    packed, lower, upper, pmat, n = _lu_parts(lower_upper, perm, what)
    b = _matrices(_g.convert_to_tensor(rhs, packed.dtype, packed.graph), what,
                  square=False)
    if b.dtype != packed.dtype:
        raise TypeError(f"{what}: rhs is {b.dtype.short_name} but lower_upper is "
                        f"{packed.dtype.short_name}")
    b = _rows_fit(b, packed, n, what)
    y = matrix_triangular_solve(lower, api.matmul(pmat, b), lower=True)
    return _named(matrix_triangular_solve(upper, y, lower=False), name)


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None) -> Tensor:
    """X with A X = rhs for A given by og.linalg.lu's (lower_upper, perm), as
    tf.linalg.lu_solve: rhs [..., n, k] permuted, then two triangular solves
    (differentiable in lower_upper and rhs). validate_args is accepted and ignored.
    The sizes may be known only at run time (as TF1); the ranks must be known.

    Raises:
        TypeError: lower_upper is not float, perm not integers, or rhs of another
            dtype.
        ShapeError: the matrices are not square, a rank is unknown while building,
            perm is a scalar, or rhs does not fit (all where known while building).
        ExecutionError: (when the graph runs) sizes unknown while building turn out not
            to fit: matrices not square, perm's length or rhs's rows not n.
    """
    del validate_args
    _g.check_name(name, "lu_solve")
    with api._graph_of(lower_upper, perm, rhs).as_default():
        return _lu_solve(lower_upper, perm, rhs, "lu_solve", name)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None) -> Tensor:
    """The inverse of A given its LU factors (tf.linalg.lu_matrix_inverse): lu_solve
    with the identity (sized at run time when the matrix size is unknown while
    building).

    Raises:
        as lu_solve.
    """
    del validate_args
    what = "lu_matrix_inverse"
    _g.check_name(name, what)
    with api._graph_of(lower_upper, perm).as_default():
        packed = _known_rank(_matrices(lower_upper, what), what)
        n = packed.shape[-1]
        if n is None:
            packed = _square_at_run_time(packed, what)
            eye = _identity_like(packed)
        else:
            eye = api.constant(np.eye(int(n), dtype=packed.dtype.numpy)) + \
                api.zeros_like(packed)
        return _lu_solve(packed, perm, eye, what, name)


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None) -> Tensor:
    """A = P^T L U from its LU factors (tf.linalg.lu_reconstruct). The matrix size
    may be known only at run time (as TF1); the rank must be known.

    Raises:
        as lu_solve.
    """
    del validate_args
    _g.check_name(name, "lu_reconstruct")
    with api._graph_of(lower_upper, perm).as_default():
        _, lower, upper, pmat, _ = _lu_parts(lower_upper, perm, "lu_reconstruct")
        return _named(api.matmul(pmat, api.matmul(lower, upper), transpose_a=True), name)


def expm(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """The matrix exponential of square matrices, as tf.linalg.expm: TF's scaling and
    squaring with Pade approximants (degree 3 to 13 by the 1-norm in float64, 3 to 7 in
    float32; Higham 2005). Differentiable (the exact adjoint Frechet derivative).

    Raises:
        TypeError: input is not float.
        ShapeError: the matrices are not square.
    """
    _g.check_name(name, "expm")
    x = _matrices(input, "expm")
    return _op(x, "MatrixExponential", [x], {}, name)


def sqrtm(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """The principal square root of square matrices, as tf.linalg.sqrtm, by the scaled
    Denman-Beavers iteration (TF uses a Schur method; both give the unique principal
    root). A matrix with an eigenvalue on the negative real axis has no real principal
    root: NaN. Differentiable (TF's formula: a Sylvester equation solved as an n^2
    system; it needs the input's shape known while building).

    Raises:
        TypeError: input is not float.
        ShapeError: the matrices are not square.
    """
    _g.check_name(name, "sqrtm")
    x = _matrices(input, "sqrtm")
    return _op(x, "MatrixSquareRoot", [x], {}, name)


_FORMATS = ("compact", "sequence", "matrix")


def _compact(diagonals, what: str, dtype=None) -> Tensor:
    """TF's 'sequence' diagonals (superdiagonal, main, subdiagonal; each [..., m]) as
    the compact [..., 3, m]."""
    if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
        raise TypeError(f"{what}: diagonals_format 'sequence' needs a list of three "
                        "tensors (superdiagonal, main diagonal, subdiagonal)")
    return api.stack([_g.convert_to_tensor(d, None if _g._is_symbolic(d) or
                                           np.asarray(d).dtype.kind == "f" else dtype)
                      for d in diagonals], axis=-2)


def _format(diagonals_format, what: str) -> str:
    if diagonals_format not in _FORMATS:
        raise ValueError(f"{what}: diagonals_format must be one of {list(_FORMATS)}, got "
                         f"{diagonals_format!r}")
    return diagonals_format


def _shift_rows(x: Tensor, up: bool) -> Tensor:
    """x [..., m, k] with its rows moved one up (row i holds row i + 1, last zero) or
    down (row i holds row i - 1, first zero)."""
    rank = len(x.shape)
    pad = [[0, 0]] * (rank - 2) + ([[0, 1]] if up else [[1, 0]]) + [[0, 0]]
    body = x[..., 1:, :] if up else x[..., :-1, :]
    return api.pad(body, pad)


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None) -> Tensor:
    """A rhs for tridiagonal A, as tf.linalg.tridiagonal_matmul: diagonals in TF's
    'compact' form [..., 3, m] (superdiagonal with its last entry unused, main,
    subdiagonal with its first entry unused), 'sequence' (those three [..., m]), or
    'matrix' [..., m, m] (only its tridiagonal band is read); rhs [..., m, k].
    Composed of og ops (differentiable).

    Raises:
        ValueError: diagonals_format is not one of those.
        TypeError: the diagonals are not float, or rhs of another dtype.
        ShapeError: rhs is not [..., m, k] with ranks known.
    """
    what = "tridiagonal_matmul"
    _g.check_name(name, what)
    fmt = _format(diagonals_format, what)
    g = api._graph_of(diagonals, rhs)
    with g.as_default():
        if fmt == "matrix":
            a = _matrices(diagonals, what)
            b = _matrices(_g.convert_to_tensor(rhs, a.dtype, g), what, square=False)
            return _named(api.matmul(matrix_band_part(a, 1, 1), b), name)
        d = _compact(diagonals, what, DType.FLOAT64) if fmt == "sequence" else \
            _matrices(diagonals, what, square=False)
        b = _matrices(_g.convert_to_tensor(rhs, d.dtype, g), what, square=False)
        if b.dtype != d.dtype:
            raise TypeError(f"{what}: rhs is {b.dtype.short_name} but the diagonals are "
                            f"{d.dtype.short_name}")
        if b.shape is None:
            raise ShapeError(f"{what}: rhs needs a known rank")
        sup, main, sub = (api.expand_dims(d[..., k, :], -1) for k in range(3))
        out = sup * _shift_rows(b, True) + main * b + sub * _shift_rows(b, False)
        return _named(out, name)


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True,
                      perturb_singular=False) -> Tensor:
    """X with A X = rhs for tridiagonal A, as tf.linalg.tridiagonal_solve: diagonals
    as tridiagonal_matmul's three formats; rhs [..., m, k] or [..., m] (or [..., k, m]
    with transpose_rhs); by Gaussian elimination with partial pivoting (LAPACK gtsv)
    or, with partial_pivoting=False, the Thomas algorithm. A singular matrix fails
    when the graph runs. Differentiable in diagonals and rhs (TF's formula).
    conjugate_rhs is a no-op for real values.

    Raises:
        ValueError: diagonals_format unknown, or perturb_singular=True (not supported).
        TypeError: not float, dtypes differ, or a flag is not a bool.
        ShapeError: the shapes do not fit.
    """
    what = "tridiagonal_solve"
    _g.check_name(name, what)
    fmt = _format(diagonals_format, what)
    if _bool_arg(perturb_singular, f"{what}: perturb_singular"):
        raise ValueError(f"{what}: perturb_singular=True is not supported")
    transpose = _bool_arg(transpose_rhs, f"{what}: transpose_rhs")
    _bool_arg(conjugate_rhs, f"{what}: conjugate_rhs")
    pivot = _bool_arg(partial_pivoting, f"{what}: partial_pivoting")
    g = api._graph_of(diagonals, rhs)
    with g.as_default():
        if fmt == "matrix":
            a = _matrices(diagonals, what)
            d = matrix_diag_part(a, k=(-1, 1), align="LEFT_RIGHT")
        elif fmt == "sequence":
            d = _compact(diagonals, what, DType.FLOAT64)
        else:
            d = _matrices(diagonals, what, square=False)
            if d.shape is not None and d.shape[-2] not in (None, 3):
                raise ShapeError(f"{what}: compact diagonals must be [..., 3, m], got "
                                 f"{list(d.shape)}")
        b = _t(_g.convert_to_tensor(rhs, d.dtype, g))
        if b.dtype != d.dtype:
            raise TypeError(f"{what}: rhs is {b.dtype.short_name} but the diagonals are "
                            f"{d.dtype.short_name}")
        if b.shape is None or d.shape is None:
            raise ShapeError(f"{what}: the ranks of diagonals and rhs must be known")
        vector = len(b.shape) == len(d.shape) - 1
        if vector:
            b = api.expand_dims(b, -1)
        elif transpose:
            b = api_math.matrix_transpose(b)
        m = d.shape[-1]
        if len(b.shape) < 2 or None not in (m, b.shape[-2]) and b.shape[-2] != m:
            raise ShapeError(f"{what}: rhs {list(b.shape)} (as solved) does not fit {m} x {m} "
                             "matrices")
        x = g.op("TridiagonalSolve", [d, b], {"partial_pivoting": int(pivot)},
                 domain="onegraph")
        if vector:
            x = api.squeeze(x, [-1])
        return _named(x, name)


def _tridiagonal_parts(a: Tensor, b: Tensor, what: str) -> tuple:
    """(alpha, beta, n) with alpha [n] and beta [n - 1] checked: while building where
    both lengths are known (n an int), else by an Assert when the graph runs (n None).

    Raises:
        ShapeError: alpha or beta is not 1-D, or known lengths do not fit.
    """
    if a.shape is None or len(a.shape) != 1:
        raise ShapeError(f"{what}: alpha must be 1-D (its length may be known only at run "
                         f"time), got {a.shape}")
    n = a.shape[0]
    if n is not None and (b.shape is None or tuple(b.shape) != (n - 1,)):
        raise ShapeError(f"{what}: beta must have shape [{n - 1}], got {b.shape}")
    if b.shape is None or len(b.shape) != 1:
        raise ShapeError(f"{what}: beta must be 1-D of length n - 1, got {b.shape}")
    if n is None:
        fits = api.equal(_run_size(b, 0) + np.int64(1), _run_size(a, 0))
        b = api_math._checked(b, fits, f"{what}: beta's length must be alpha's minus one")
    return a, b, n


def _index_range(select, select_range, a: Tensor, n, what: str) -> tuple:
    """(a, lo, hi) for select 'a' (all: hi None when n is unknown) or 'i' (TF's
    inclusive select_range); hi < n is checked by an Assert on a when n is known only
    at run time.

    Raises:
        ValueError: select is not 'a' or 'i', or the index range is bad.
        TypeError: select_range does not hold ints.
    """
    if select not in ("a", "i"):
        raise ValueError(f"{what}: select must be 'a' or 'i' ('v' is not supported), "
                         f"got {select!r}")
    if select == "a":
        return a, 0, None if n is None else n - 1
    if not isinstance(select_range, (list, tuple, np.ndarray)) or len(select_range) != 2:
        raise ValueError(f"{what}: select='i' needs select_range=(lo, hi), got "
                         f"{select_range!r:.60}")
    # ints only: int() would take "1" or truncate 1.5 to a silently other index
    lo, hi = (api._int_arg(v, f"{what}: select_range[{k}]")
              for k, v in enumerate(select_range))
    if not 0 <= lo <= hi < (n if n is not None else hi + 1):
        raise ValueError(f"{what}: select_range {select_range} must satisfy "
                         f"0 <= lo <= hi < {'n' if n is None else n}")
    if n is None:
        inside = api.less(np.int64(hi), _run_size(a, 0))
        a = api_math._checked(a, inside, f"{what}: select_range {select_range} must "
                                         "satisfy hi < n (alpha's length)")
    return a, lo, hi


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None,
                     tol=None, name=None):
    """Eigenvalues (ascending), and with eigvals_only=False the eigenvectors, of the
    symmetric tridiagonal matrix with diagonal alpha [n] and off-diagonal beta [n - 1],
    as tf.linalg.eigh_tridiagonal: through og.self_adjoint_eig of the dense matrix
    (numpy's LAPACK; TF bisects). select 'a' gives all, 'i' those with indices
    select_range = (lo, hi) inclusive; 'v' (a value range, a run-time count) is not
    supported. tol is accepted and ignored (LAPACK's accuracy is better). n may be
    known only at run time (as TF1).

    Raises:
        ValueError: select is not 'a' or 'i', or the index range is bad.
        TypeError: alpha is not float, beta of another dtype, or select_range does not
            hold ints.
        ShapeError: alpha or beta is not 1-D (or of unknown rank), or beta not of
            length n - 1 (where both are known while building).
        ExecutionError: (when the graph runs) with n unknown while building, beta's
            length is not n - 1 or select_range's hi is not below n.
    """
    what = "eigh_tridiagonal"
    _g.check_name(name, what)
    del tol
    g = api._graph_of(alpha, beta)
    with g.as_default():
        a = _t(alpha)
        if a.dtype not in (DType.FLOAT32, DType.FLOAT64):
            raise TypeError(f"{what}: alpha must be float32 or float64, got "
                            f"{a.dtype.short_name}")
        b = _t(_g.convert_to_tensor(beta, a.dtype, g))
        if b.dtype != a.dtype:
            raise TypeError(f"{what}: beta is {b.dtype.short_name} but alpha is "
                            f"{a.dtype.short_name}")
        a, b, n = _tridiagonal_parts(a, b, what)
        a, lo, hi = _index_range(select, select_range, a, n, what)
        dense = matrix_diag(a)
        if n is None or n > 1:   # (n = 1 at run time: beta empty, a zero 1 x 1 each)
            dense = dense + matrix_diag(b, k=1) + matrix_diag(b, k=-1)
        e, v = self_adjoint_eig(dense)
        if hi is not None:
            e = e[lo:hi + 1]
        if _bool_arg(eigvals_only, f"{what}: eigvals_only"):
            return _named(e, name)
        return _named(e, name), v if hi is None else v[:, lo:hi + 1]


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None) -> Tensor:
    """X with T X = rhs (T^T X with adjoint) for triangular T given by TF's banded form
    [..., k, m] (tf.linalg.banded_triangular_solve): lower, row j is the j-th
    subdiagonal aligned right (the diagonal first); upper, the superdiagonals aligned
    left with the diagonal last. rhs [..., m, n]. Not differentiable (TF registers no
    gradient either).

    Raises:
        TypeError: not float, dtypes differ, or a flag not a bool.
        ShapeError: rank below 2, or rhs does not fit (when the graph runs otherwise).
    """
    what = "banded_triangular_solve"
    _g.check_name(name, what)
    band = _matrices(bands, what, square=False)
    b = _matrices(_g.convert_to_tensor(rhs, band.dtype, band.graph), what, square=False)
    if b.dtype != band.dtype:
        raise TypeError(f"{what}: rhs is {b.dtype.short_name} but bands are "
                        f"{band.dtype.short_name}")
    attrs = {"lower": int(_bool_arg(lower, f"{what}: lower")),
             "adjoint": int(_bool_arg(adjoint, f"{what}: adjoint"))}
    return _op(band, "BandedTriangularSolve", [band, b], attrs, name)


for _key in LINALG_NAMES:
    setattr(linalg, _key, globals()[_key])
    linalg.__all__ = sorted(set(linalg.__all__) | {_key})

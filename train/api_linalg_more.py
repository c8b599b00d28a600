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
from . import api_math
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


def _known_size(x: Tensor, what: str) -> int:
    """The matrix size n of x [..., n, n], which must be known while building.

    Raises:
        ShapeError: it is not.
    """
    if x.shape is None or x.shape[-1] is None:
        raise ShapeError(f"{what}: the matrix size must be known while building, got "
                         f"shape {x.shape}")
    return int(x.shape[-1])


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
    [..., n, n] one-hot rows: P[i, perm[i]] = 1, so P A = A[perm]."""
    packed = _matrices(lower_upper, what)
    p = _t(perm, graph=packed.graph)
    if p.dtype not in (DType.INT32, DType.INT64):
        raise TypeError(f"{what}: perm must be int32 or int64, got {p.dtype.short_name}")
    n = _known_size(packed, what)
    eye = api.constant(np.eye(n, dtype=packed.dtype.numpy))
    lower = matrix_band_part(packed, -1, 0) - matrix_band_part(packed, 0, 0) + eye
    upper = matrix_band_part(packed, 0, -1)
    pmat = api.one_hot(p, n, dtype=packed.dtype)
    return packed, lower, upper, pmat, n


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None) -> Tensor:
    """X with A X = rhs for A given by og.linalg.lu's (lower_upper, perm), as
    tf.linalg.lu_solve: rhs [..., n, k] permuted, then two triangular solves
    (differentiable in lower_upper and rhs). validate_args is accepted and ignored.

    Raises:
        TypeError: lower_upper is not float, perm not integers, or rhs of another
            dtype.
        ShapeError: the matrices are not square, their size is unknown while building,
            or rhs does not fit.
    """
    del validate_args
    _g.check_name(name, "lu_solve")
    with api._graph_of(lower_upper, perm, rhs).as_default():
        packed, lower, upper, pmat, n = _lu_parts(lower_upper, perm, "lu_solve")
        b = _matrices(_g.convert_to_tensor(rhs, packed.dtype, packed.graph), "lu_solve",
                      square=False)
        if b.dtype != packed.dtype:
            raise TypeError(f"lu_solve: rhs is {b.dtype.short_name} but lower_upper is "
                            f"{packed.dtype.short_name}")
        if b.shape is not None and b.shape[-2] not in (None, n):
            raise ShapeError(f"lu_solve: rhs {list(b.shape)} does not fit matrices of size "
                             f"{n}: it needs {n} rows")
        y = matrix_triangular_solve(lower, api.matmul(pmat, b), lower=True)
        return _named(matrix_triangular_solve(upper, y, lower=False), name)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None) -> Tensor:
    """The inverse of A given its LU factors (tf.linalg.lu_matrix_inverse): lu_solve
    with the identity.

    Raises:
        as lu_solve.
    """
    del validate_args
    _g.check_name(name, "lu_matrix_inverse")
    with api._graph_of(lower_upper, perm).as_default():
        packed = _matrices(lower_upper, "lu_matrix_inverse")
        n = _known_size(packed, "lu_matrix_inverse")
        eye = api.constant(np.eye(n, dtype=packed.dtype.numpy)) + api.zeros_like(packed)
        return lu_solve(packed, perm, eye, name=name)


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None) -> Tensor:
    """A = P^T L U from its LU factors (tf.linalg.lu_reconstruct).

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


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None,
                     tol=None, name=None):
    """Eigenvalues (ascending), and with eigvals_only=False the eigenvectors, of the
    symmetric tridiagonal matrix with diagonal alpha [n] and off-diagonal beta [n - 1],
    as tf.linalg.eigh_tridiagonal: through og.self_adjoint_eig of the dense matrix
    (numpy's LAPACK; TF bisects). select 'a' gives all, 'i' those with indices
    select_range = (lo, hi) inclusive; 'v' (a value range, a run-time count) is not
    supported. tol is accepted and ignored (LAPACK's accuracy is better).

    Raises:
        ValueError: select is not 'a' or 'i', or the index range is bad.
        TypeError: alpha is not float, beta of another dtype, or select_range does not
            hold ints.
        ShapeError: alpha is not 1-D, or beta not of length n - 1.
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
        if a.shape is None or len(a.shape) != 1 or a.shape[0] is None:
            raise ShapeError(f"{what}: alpha must be 1-D of known length, got {a.shape}")
        n = a.shape[0]
        if b.shape is None or tuple(b.shape) != (n - 1,):
            raise ShapeError(f"{what}: beta must have shape [{n - 1}], got {b.shape}")
        if select not in ("a", "i"):
            raise ValueError(f"{what}: select must be 'a' or 'i' ('v' is not supported), "
                             f"got {select!r}")
        lo, hi = 0, n - 1
        if select == "i":
            if not isinstance(select_range, (list, tuple, np.ndarray)) or \
                    len(select_range) != 2:
                raise ValueError(f"{what}: select='i' needs select_range=(lo, hi), got "
                                 f"{select_range!r:.60}")
            # ints only: int() would take "1" or truncate 1.5 to a silently other index
            lo, hi = (api._int_arg(v, f"{what}: select_range[{k}]")
                      for k, v in enumerate(select_range))
            if not 0 <= lo <= hi < n:
                raise ValueError(f"{what}: select_range {select_range} must satisfy "
                                 f"0 <= lo <= hi < {n}")
        dense = matrix_diag(a)
        if n > 1:
            dense = dense + matrix_diag(b, k=1) + matrix_diag(b, k=-1)
        e, v = self_adjoint_eig(dense)
        e = e[lo:hi + 1]
        if _bool_arg(eigvals_only, f"{what}: eigvals_only"):
            return _named(e, name)
        return _named(e, name), v[:, lo:hi + 1]


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

"""TF1's matrix inverse, solves and decompositions: og.matrix_inverse,
og.matrix_solve, og.matrix_triangular_solve, og.cholesky, og.cholesky_solve,
og.matrix_solve_ls, og.qr, og.svd, og.self_adjoint_eig, og.self_adjoint_eigvals, and
their og.linalg names (inv, solve, triangular_solve, cholesky, cholesky_solve, lstsq,
qr, svd, eigh, eigvalsh); og.linalg.pinv, matrix_rank, matvec, normalize, and the
tf.linalg aliases adjoint, l2_normalize and global_norm.

ONNX has none of these, so they are onegraph-domain ops (ops/linalg_solve.py, with
gradients): graphs using them run, differentiate and save as .og files, but do not
export to ONNX. Like TF, only the lower triangle of a Cholesky or eigen input and
the named triangle of a triangular solve are read; a singular or non-positive-definite
matrix fails when the graph runs (ExecutionError).
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import api_math
from . import control_flow
from . import graph as _g
from .api import _bool_arg, _t
from .api_linalg import linalg
from .graph import Tensor
from .nn_ops import l2_normalize
from .optimizers import global_norm

__all__ = ["cholesky", "cholesky_solve", "matrix_inverse", "matrix_solve",
           "matrix_solve_ls", "matrix_triangular_solve", "qr", "self_adjoint_eig",
           "self_adjoint_eigvals", "svd"]

_FLOATS = (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64)


def _matrices(x, what: str, square: bool = True) -> Tensor:
    """x as a float tensor of rank >= 2 (square matrices when asked), where known.

    Raises:
        TypeError: x is not float.
        ShapeError: its rank is below 2 or its matrices are not square.
    """
    t = _t(x)
    if t.dtype not in _FLOATS:
        raise TypeError(f"{what}: expected float matrices, got {t.dtype.short_name} "
                        f"({t.name!r})")
    if t.shape is not None:
        if len(t.shape) < 2:
            raise ShapeError(f"{what}: expected rank >= 2 (matrices), got shape "
                             f"{list(t.shape)} ({t.name!r})")
        rows, cols = t.shape[-2:]
        if square and None not in (rows, cols) and rows != cols:
            raise ShapeError(f"{what}: expected square matrices, got shape "
                             f"{list(t.shape)} ({t.name!r})")
    return t


def _rhs(rhs, matrix: Tensor, what: str) -> Tensor:
    """The right-hand sides, of matrix's dtype, [..., n, k].

    Raises:
        ShapeError: rank below 2, or n is not the matrix's size (where known).
        TypeError: a dtype other than the matrix's.
    """
    b = _matrices(_g.convert_to_tensor(rhs, matrix.dtype, matrix.graph), what, False)
    if b.dtype != matrix.dtype:
        raise TypeError(f"{what}: rhs is {b.dtype.short_name} but the matrix is "
                        f"{matrix.dtype.short_name}")
    if b.shape is not None and matrix.shape is not None and \
            None not in (b.shape[-2], matrix.shape[-1]) and b.shape[-2] != matrix.shape[-1]:
        raise ShapeError(f"{what}: rhs {list(b.shape)} does not fit the matrix "
                         f"{list(matrix.shape)}: it needs {matrix.shape[-1]} rows")
    return b


def _op(x: Tensor, op_type: str, inputs, attrs, name, num_outputs=1):
    return x.graph.op(op_type, inputs, attrs, name=name, num_outputs=num_outputs,
                      domain="onegraph")


def matrix_inverse(input, adjoint=False, name=None) -> Tensor:  # noqa: A002 - TF's name
    """The inverse of each square matrix in the last two axes (of its transpose with
    adjoint), tf.matrix_inverse. A singular matrix fails when the graph runs.

    Raises:
        TypeError: input is not float, or adjoint not a bool.
        ShapeError: the matrices are not square.
    """
    _g.check_name(name, "matrix_inverse")
    x = _matrices(input, "matrix_inverse")
    return _op(x, "MatrixInverse", [x],
               {"adjoint": int(_bool_arg(adjoint, "matrix_inverse: adjoint"))}, name)


def matrix_solve(matrix, rhs, adjoint=False, name=None) -> Tensor:
    """X with matrix X = rhs (matrix^T X = rhs with adjoint), for [..., n, n] matrices
    and [..., n, k] right-hand sides, batch dims broadcast (tf.matrix_solve).

    Raises:
        TypeError / ShapeError: as matrix_inverse, or rhs does not fit.
    """
    _g.check_name(name, "matrix_solve")
    a = _matrices(matrix, "matrix_solve")
    b = _rhs(rhs, a, "matrix_solve")
    return _op(a, "MatrixSolve", [a, b],
               {"adjoint": int(_bool_arg(adjoint, "matrix_solve: adjoint"))}, name)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None) -> Tensor:
    """X with T X = rhs for T the lower (or upper) triangle of matrix (T^T with
    adjoint); the other triangle is not read (tf.matrix_triangular_solve).

    Raises:
        TypeError / ShapeError: as matrix_solve.
    """
    _g.check_name(name, "matrix_triangular_solve")
    a = _matrices(matrix, "matrix_triangular_solve")
    b = _rhs(rhs, a, "matrix_triangular_solve")
    attrs = {"lower": int(_bool_arg(lower, "matrix_triangular_solve: lower")),
             "adjoint": int(_bool_arg(adjoint, "matrix_triangular_solve: adjoint"))}
    return _op(a, "MatrixTriangularSolve", [a, b], attrs, name)


def cholesky(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """The lower-triangular L with L L^T = input, for symmetric positive-definite
    matrices (only their lower triangles are read), tf.cholesky.

    Raises:
        TypeError / ShapeError: as matrix_inverse.
    """
    _g.check_name(name, "cholesky")
    x = _matrices(input, "cholesky")
    return _op(x, "Cholesky", [x], {}, name)


def cholesky_solve(chol, rhs, name=None) -> Tensor:
    """X with A X = rhs given A's Cholesky factor chol (two triangular solves),
    tf.cholesky_solve.

    Raises:
        TypeError / ShapeError: as matrix_solve.
    """
    _g.check_name(name, "cholesky_solve")
    c = _matrices(chol, "cholesky_solve")
    b = _rhs(rhs, c, "cholesky_solve")
    y = matrix_triangular_solve(c, b, lower=True)
    x = matrix_triangular_solve(c, y, lower=True, adjoint=True)
    return api.identity(x, name=name) if name is not None else x


def _ls_tall(a: Tensor, at: Tensor, b: Tensor, reg: Tensor, eye: Tensor) -> Tensor:
    """(a^T a + reg I)^-1 a^T b: the normal equations of rows >= cols. Raises nothing."""
    gram = api.matmul(at, a) + reg * eye
    return cholesky_solve(cholesky(gram), api.matmul(at, b))


def _ls_wide(a: Tensor, at: Tensor, b: Tensor, reg: Tensor, eye: Tensor) -> Tensor:
    """a^T (a a^T + reg I)^-1 b: the minimum-norm normal equations of rows < cols.
    Raises nothing."""
    gram = api.matmul(a, at) + reg * eye
    return api.matmul(at, cholesky_solve(cholesky(gram), b))


def _ls_rows_checked(a: Tensor, b: Tensor, what: str) -> Tensor:
    """b, its row count checked against the matrix's: at once where both are known
    while building, otherwise by an Assert run before b is read (TF checks in its
    kernel; without this a misfit would fail deep in a matmul or a Cholesky solve).

    Raises:
        ShapeError: both row counts are known and differ.
    """
    rows_a = None if a.shape is None else a.shape[-2]
    rows_b = None if b.shape is None else b.shape[-2]
    if None not in (rows_a, rows_b):
        if rows_a != rows_b:
            raise ShapeError(f"{what}: rhs {list(b.shape)} does not fit the matrix "
                             f"{list(a.shape)}: it needs {rows_a} rows")
        return b
    fits = api.equal(api.shape(a)[-2], api.shape(b)[-2])
    return api_math._checked(b, fits, f"{what}: the rhs needs as many rows as the matrix")


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None) -> Tensor:
    """The least-squares solution X of matrix X = rhs (minimum norm when
    underdetermined), Tikhonov-regularised by l2_regularizer, through the normal
    equations and a Cholesky solve as TF's fast path (tf.matrix_solve_ls). Where the
    matrix sizes are known only when the graph runs, an og.cond picks the normal
    equations (rows >= cols or not) then, as TF1 does.

    Raises:
        TypeError: fast=False (TF's complete orthogonal decomposition is not built), or
            as matrix_solve.
        ValueError: l2_regularizer is negative.
        ShapeError: rhs does not fit (when the graph runs, where a row count is
            unknown while building: ExecutionError), or the matrix's rank is
            unknown (its transpose needs it; a rhs of unknown rank solves, but has no
            gradients, as og.matmul).
    """
    what = "matrix_solve_ls"
    _g.check_name(name, what)
    if not _bool_arg(fast, f"{what}: fast"):
        raise TypeError(f"{what}: only fast=True (the normal equations) is supported")
    a = _matrices(matrix, what, square=False)
    b = _matrices(_g.convert_to_tensor(rhs, a.dtype, a.graph), what, False)
    if a.shape is None:  # (ONNX's Transpose needs it)
        raise ShapeError(f"{what}: the matrix {a.name!r} has an unknown rank; it must be "
                         "known while building (its sizes need not be)")
    lam = float(l2_regularizer) if not _g._is_symbolic(l2_regularizer) else None
    if lam is not None and lam < 0:
        raise ValueError(f"{what}: l2_regularizer must be >= 0, got {lam}")
    with a.graph.as_default():
        b = _ls_rows_checked(a, b, what)
        at = api_math.matrix_transpose(a)
        reg = api.cast(_t(l2_regularizer, graph=a.graph), a.dtype) if lam is None else \
            api.constant(np.asarray(lam, a.dtype.numpy))
        rows, cols = a.shape[-2:]
        if None not in (rows, cols):
            size = min(rows, cols)
            eye = api.constant(np.eye(size, dtype=a.dtype.numpy))
            x = (_ls_tall if rows >= cols else _ls_wide)(a, at, b, reg, eye)
        else:
            x = _ls_at_run_time(a, at, b, reg)
    return api.identity(x, name=name) if name is not None else x


def _ls_at_run_time(a: Tensor, at: Tensor, b: Tensor, reg: Tensor) -> Tensor:
    """matrix_solve_ls's normal equations chosen when the graph runs (TF1's
    tf.cond(rows >= cols, ...)), the identity made at the run-time size. Raises
    nothing."""
    shape = api.shape(a)
    rows, cols = shape[-2], shape[-1]

    def branch(solve, size):
        return lambda: solve(a, at, b, reg, api_math.eye(size, dtype=a.dtype))

    return control_flow.cond(api.greater_equal(rows, cols), branch(_ls_tall, cols),
                             branch(_ls_wide, rows), name="matrix_solve_ls")


def qr(input, full_matrices=False, name=None) -> tuple:  # noqa: A002 - TF's name
    """(q, r): orthonormal q and upper-triangular r with q r = input, reduced ([m, k],
    [k, n], k = min(m, n)) or full ([m, m], [m, n]), tf.qr.

    Raises:
        TypeError: input is not float, or full_matrices not a bool.
        ShapeError: rank below 2.
    """
    _g.check_name(name, "qr")
    x = _matrices(input, "qr", square=False)
    full = int(_bool_arg(full_matrices, "qr: full_matrices"))
    q, r = _op(x, "Qr", [x], {"full_matrices": full}, name, num_outputs=2)
    return q, r


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """The singular value decomposition input = u diag(s) v^T: s descending, and with
    compute_uv the tuple (s, u, v) (v, not v^T, as TF), reduced or full; otherwise s
    alone, tf.svd. Singular vectors are unique only up to sign (numpy's LAPACK may
    choose other signs than TensorFlow's).

    Raises:
        TypeError: tensor is not float, or a flag not a bool.
        ShapeError: rank below 2.
    """
    _g.check_name(name, "svd")
    x = _matrices(tensor, "svd", square=False)
    want_uv = _bool_arg(compute_uv, "svd: compute_uv")
    full = int(_bool_arg(full_matrices, "svd: full_matrices"))
    # the vectors are computed even when not returned: the gradient of s needs them
    s, u, v = _op(x, "Svd", [x], {"compute_uv": 1, "full_matrices": full}, None,
                  num_outputs=3)
    if want_uv:
        return (api.identity(s, name=name) if name is not None else s), u, v
    return api.identity(s, name=name) if name is not None else s


def self_adjoint_eig(tensor, name=None) -> tuple:
    """(e, v): eigenvalues ascending and eigenvectors (columns) of symmetric matrices,
    of which only the lower triangles are read, tf.self_adjoint_eig. Eigenvectors are
    unique only up to sign.

    Raises:
        TypeError / ShapeError: as matrix_inverse.
    """
    _g.check_name(name, "self_adjoint_eig")
    x = _matrices(tensor, "self_adjoint_eig")
    e, v = _op(x, "SelfAdjointEig", [x], {"compute_v": 1}, name, num_outputs=2)
    return e, v


def self_adjoint_eigvals(tensor, name=None) -> Tensor:
    """The eigenvalues (ascending) of symmetric matrices, tf.self_adjoint_eigvals.

    Raises:
        TypeError / ShapeError: as matrix_inverse.
    """
    _g.check_name(name, "self_adjoint_eigvals")
    e, _ = self_adjoint_eig(tensor)
    return api.identity(e, name=name) if name is not None else e


def _cutoff_default(x: Tensor, scale: float) -> Tensor:
    """scale * max(m, n) * eps of matrices x, in x's dtype: the base of TF's default
    cutoffs for small singular values (from the run-time shape when the matrix dims
    are known only then). Raises nothing."""
    eps = float(np.finfo(x.dtype.numpy).eps)
    dims = None if x.shape is None else x.shape[-2:]
    if dims is not None and None not in dims:
        return api.cast(_g.convert_to_tensor(scale * float(max(dims)) * eps), x.dtype)
    shape = api.shape(x)
    longest = api.maximum(shape[-2], shape[-1])
    return api.cast(longest, x.dtype) * api.cast(_g.convert_to_tensor(scale * eps), x.dtype)


def pinv(a, rcond=None, validate_args=False, name=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of matrices, through the SVD, as tf.linalg.pinv:
    singular values at or below rcond * the largest (default 10 * max(m, n) * eps)
    count as zero.

    Raises:
        TypeError: a is not float, or name not a str.
        ShapeError: its rank is below 2.
    """
    del validate_args
    _g.check_name(name, "pinv")
    x = _matrices(a, "pinv", square=False)
    with x.graph.as_default():
        s, u, v = svd(x)
        cut = _cutoff_default(x, 10.0) if rcond is None else \
            api.cast(_g.convert_to_tensor(rcond), x.dtype)
        limit = api.reduce_max(s, axis=-1, keepdims=True) * cut
        inv_s = api.where(s > limit, 1.0 / api.where(s > limit, s, api.ones_like(s)),
                          api.zeros_like(s))
        out = api.matmul(v * api.expand_dims(inv_s, -2), u, transpose_b=True)
        return api.identity(out, name=name) if name is not None else out


def matrix_rank(a, tol=None, validate_args=False, name=None) -> Tensor:
    """The rank of matrices (int32): the singular values above `tol` (default the
    largest times max(m, n) * eps), as tf.linalg.matrix_rank.

    Raises:
        TypeError / ShapeError: as pinv.
    """
    del validate_args
    _g.check_name(name, "matrix_rank")
    x = _matrices(a, "matrix_rank", square=False)
    with x.graph.as_default():
        s = svd(x, compute_uv=False)
        if tol is None:
            tol = api.reduce_max(s, axis=-1, keepdims=True) * _cutoff_default(x, 1.0)
        else:
            tol = api.cast(_g.convert_to_tensor(tol), x.dtype)
        rank = api.reduce_sum(api.cast(s > tol, DType.INT32), axis=-1)
        return api.identity(rank, name=name) if name is not None else rank


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False,
           b_is_sparse=False, name=None) -> Tensor:
    """Matrices times vectors, a @ b[..., None] without the last axis, as
    tf.linalg.matvec (adjoint_a is transpose_a for real matrices; the sparsity hints
    are accepted and ignored).

    Raises:
        TypeError / ShapeError: as og.matmul.
    """
    del a_is_sparse, b_is_sparse
    _g.check_name(name, "matvec")
    b = _t(b)
    with b.graph.as_default():
        out = api.matmul(a, api.expand_dims(b, -1),
                         transpose_a=bool(transpose_a) or bool(adjoint_a))
        return api.squeeze(out, [-1], name=name)


def normalize(tensor, ord="euclidean", axis=None, name=None) -> tuple:  # noqa: A002
    """(tensor / its norm, the norm) with the norm kept as size-1 axes, as
    tf.linalg.normalize (ord and axis as og.norm).

    Raises:
        what og.norm raises.
    """
    _g.check_name(name, "normalize")
    x = _t(tensor)
    with x.graph.as_default():
        from .api_linalg import norm

        n = norm(x, ord=ord, axis=axis, keepdims=True)
        return x / n, n


for _key, _fn in {"inv": matrix_inverse, "solve": matrix_solve,
                  "triangular_solve": matrix_triangular_solve, "cholesky": cholesky,
                  "cholesky_solve": cholesky_solve, "lstsq": matrix_solve_ls, "qr": qr,
                  "svd": svd, "eigh": self_adjoint_eig,
                  "eigvalsh": self_adjoint_eigvals, "pinv": pinv, "matrix_rank": matrix_rank,
                  "matvec": matvec, "normalize": normalize,
                  "adjoint": api_math.matrix_transpose, "l2_normalize": l2_normalize,
                  "global_norm": global_norm}.items():
    setattr(linalg, _key, _fn)
    linalg.__all__ = sorted(set(linalg.__all__) | {_key})

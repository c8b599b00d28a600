"""Operators (onegraph domain): matrix inverse, solves and decompositions, which ONNX
lacks: MatrixInverse, MatrixSolve, MatrixTriangularSolve, Cholesky, Qr, Svd,
SelfAdjointEig, with TensorFlow's names, attributes and output conventions.

Each works on the last two axes of its inputs, any leading (batch) axes broadcast as
numpy's linalg does; the kernels are numpy.linalg's (LAPACK), in float32 or float64
(float16/bfloat16 computed in float32). A matrix the operation cannot handle
(singular, not positive definite) is an ExecutionError naming the op, as TensorFlow's
InvalidArgument. Gradients are in linalg_solve_grad.py.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, ShapeError
from .registry import TensorInfo, define

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _work(x, op: str) -> np.ndarray:
    """x as a float32/float64 array of rank >= 2.

    Raises:
        ShapeError: x is not float or has rank below 2.
    """
    x = np.asarray(x)
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        raise ShapeError(f"{op}: input must be float, got {x.dtype}")
    if x.ndim < 2:
        raise ShapeError(f"{op}: input must have rank >= 2 (a matrix or a batch of "
                         f"them), got shape {list(x.shape)}")
    return x if x.dtype in (np.float32, np.float64) else x.astype(np.float32)


def _square(x, op: str) -> None:
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{op}: the matrices must be square, got shape {list(x.shape)}")


def _adjoint(x):
    return np.swapaxes(x, -1, -2)


def _back(y, like) -> np.ndarray:
    return np.ascontiguousarray(y).astype(np.asarray(like).dtype, copy=False)


def _solve(a, b, op: str) -> np.ndarray:
    """a^-1 b over broadcast batch dims.

    Raises:
        ShapeError: the matrices do not fit.
        ExecutionError: a matrix is singular.
    """
    if b.ndim < 2 or a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"{op}: matrix {list(a.shape)} and rhs {list(b.shape)} do not "
                         "fit (rhs must be [..., n, k] for an [..., n, n] matrix)")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ShapeError(f"{op}: the batch dims of matrix {list(a.shape)} and rhs "
                         f"{list(b.shape)} do not broadcast") from None
    # both with the full batch dims: numpy 1.x reads a b of one dim fewer than a as a
    # stack of vectors, not as one matrix broadcast over the batch
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    try:
        with np.errstate(all="ignore"):
            return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise ExecutionError(f"{op}: the matrix is not invertible") from None


def _inverse_kernel(inputs, attrs, ctx):
    x = _work(inputs[0], "MatrixInverse")
    _square(x, "MatrixInverse")
    if int(attrs.get("adjoint", 0)):
        x = _adjoint(x)
    try:
        with np.errstate(all="ignore"):
            y = np.linalg.inv(x)
    except np.linalg.LinAlgError:
        raise ExecutionError("MatrixInverse: the input is not invertible") from None
    return (_back(y, inputs[0]),)


def _solve_kernel(inputs, attrs, ctx):
    a = _work(inputs[0], "MatrixSolve")
    b = _work(inputs[1], "MatrixSolve").astype(a.dtype, copy=False)
    _square(a, "MatrixSolve")
    if int(attrs.get("adjoint", 0)):
        a = _adjoint(a)
    return (_back(_solve(a, b, "MatrixSolve"), inputs[1]),)


def _triangular_solve_kernel(inputs, attrs, ctx):
    """Only the lower (or upper) triangle of the matrix is read, as TensorFlow."""
    a = _work(inputs[0], "MatrixTriangularSolve")
    b = _work(inputs[1], "MatrixTriangularSolve").astype(a.dtype, copy=False)
    _square(a, "MatrixTriangularSolve")
    a = np.tril(a) if int(attrs.get("lower", 1)) else np.triu(a)
    if int(attrs.get("adjoint", 0)):
        a = _adjoint(a)
    if np.any(np.diagonal(a, axis1=-2, axis2=-1) == 0):
        raise ExecutionError("MatrixTriangularSolve: the matrix is singular (a zero on "
                             "its diagonal)")
    return (_back(_solve(a, b, "MatrixTriangularSolve"), inputs[1]),)


def _cholesky_kernel(inputs, attrs, ctx):
    """The lower factor L of A = L L^T; only A's lower triangle is read."""
    x = _work(inputs[0], "Cholesky")
    _square(x, "Cholesky")
    lower = np.tril(x)
    sym = lower + _adjoint(np.tril(x, -1))
    try:
        y = np.linalg.cholesky(sym)
    except np.linalg.LinAlgError:
        raise ExecutionError("Cholesky: the decomposition failed; the input must be "
                             "symmetric positive definite") from None
    return (_back(y, inputs[0]),)


def _qr_kernel(inputs, attrs, ctx):
    x = _work(inputs[0], "Qr")
    mode = "complete" if int(attrs.get("full_matrices", 0)) else "reduced"
    q, r = np.linalg.qr(x, mode=mode)
    return (_back(q, inputs[0]), _back(r, inputs[0]))


def _svd_kernel(inputs, attrs, ctx):
    """s descending; u and v (not v^T) when compute_uv, as TensorFlow's Svd."""
    x = _work(inputs[0], "Svd")
    if not np.all(np.isfinite(x)):
        raise ExecutionError("Svd: the input holds NaN or infinity")
    full = bool(int(attrs.get("full_matrices", 0)))
    if not int(attrs.get("compute_uv", 1)):
        s = np.linalg.svd(x, compute_uv=False)
        k = x.shape[:-2]
        empty = np.zeros(k + (0, 0), x.dtype)
        return (_back(s, inputs[0]), _back(empty, inputs[0]), _back(empty, inputs[0]))
    try:
        u, s, vt = np.linalg.svd(x, full_matrices=full)
    except np.linalg.LinAlgError:
        raise ExecutionError("Svd: the decomposition did not converge") from None
    return (_back(s, inputs[0]), _back(u, inputs[0]), _back(_adjoint(vt), inputs[0]))


def _eig_kernel(inputs, attrs, ctx):
    """Eigenvalues ascending and (compute_v) the eigenvectors as columns, of the
    symmetric matrix whose lower triangle is the input's."""
    x = _work(inputs[0], "SelfAdjointEig")
    _square(x, "SelfAdjointEig")
    if not np.all(np.isfinite(x)):
        raise ExecutionError("SelfAdjointEig: the input holds NaN or infinity")
    try:
        if int(attrs.get("compute_v", 1)):
            e, v = np.linalg.eigh(x, UPLO="L")
        else:
            e = np.linalg.eigvalsh(x, UPLO="L")
            v = np.zeros(x.shape[:-2] + (0, 0), x.dtype)
    except np.linalg.LinAlgError:
        raise ExecutionError("SelfAdjointEig: the decomposition did not converge") from None
    return (_back(e, inputs[0]), _back(v, inputs[0]))


# --------------------------------------------------------------------------- inference

def _float_info(info, op: str):
    if info.dtype is not None and info.dtype.name not in _FLOATS:
        raise ShapeError(f"{op}: input must be float, got {info.dtype}")
    if info.shape is not None and len(info.shape) < 2:
        raise ShapeError(f"{op}: input must have rank >= 2, got shape {list(info.shape)}")


def _square_info(info, op: str):
    _float_info(info, op)
    s = info.shape
    if s is not None and None not in s[-2:] and s[-1] != s[-2]:
        raise ShapeError(f"{op}: the matrices must be square, got shape {list(s)}")


def _same_infer(op):
    def infer(attrs, inputs):
        _square_info(inputs[0], op)
        return [TensorInfo(inputs[0].dtype, inputs[0].shape)]
    return infer


def _solve_infer(op):
    def infer(attrs, inputs):
        a, b = inputs
        _square_info(a, op)
        _float_info(b, op)
        if a.shape is None or b.shape is None:
            return [TensorInfo(b.dtype, None)]
        if None not in (a.shape[-1], b.shape[-2]) and a.shape[-1] != b.shape[-2]:
            raise ShapeError(f"{op}: matrix {list(a.shape)} and rhs {list(b.shape)} do "
                             "not fit")
        batch = _broadcast_batch(a.shape[:-2], b.shape[:-2], op)
        return [TensorInfo(b.dtype, batch + tuple(b.shape[-2:]))]
    return infer


def _broadcast_batch(x, y, op: str) -> tuple:
    out = []
    for k in range(max(len(x), len(y))):
        dx = x[len(x) - 1 - k] if k < len(x) else 1
        dy = y[len(y) - 1 - k] if k < len(y) else 1
        if dx is None or dy is None:
            out.append(dy if dx == 1 else dx if dy == 1 else None)
        elif dx == 1 or dy == 1 or dx == dy:
            out.append(max(dx, dy) if 1 in (dx, dy) else dx)
        else:
            raise ShapeError(f"{op}: batch dims {list(x)} and {list(y)} do not broadcast")
    return tuple(reversed(out))


def _qr_infer(attrs, inputs):
    x = inputs[0]
    _float_info(x, "Qr")
    if x.shape is None:
        return [TensorInfo(x.dtype, None), TensorInfo(x.dtype, None)]
    *batch, m, n = x.shape
    full = int(attrs.get("full_matrices", 0))
    k = None if None in (m, n) else min(m, n)
    q_cols, r_rows = (m, m) if full else (k, k)
    return [TensorInfo(x.dtype, tuple(batch) + (m, q_cols)),
            TensorInfo(x.dtype, tuple(batch) + (r_rows, n))]


def _svd_infer(attrs, inputs):
    x = inputs[0]
    _float_info(x, "Svd")
    if x.shape is None:
        return [TensorInfo(x.dtype, None)] * 3
    *batch, m, n = x.shape
    batch = tuple(batch)
    k = None if None in (m, n) else min(m, n)
    if not int(attrs.get("compute_uv", 1)):
        return [TensorInfo(x.dtype, batch + (k,)), TensorInfo(x.dtype, batch + (0, 0)),
                TensorInfo(x.dtype, batch + (0, 0))]
    full = int(attrs.get("full_matrices", 0))
    return [TensorInfo(x.dtype, batch + (k,)),
            TensorInfo(x.dtype, batch + (m, m if full else k)),
            TensorInfo(x.dtype, batch + (n, n if full else k))]


def _eig_infer(attrs, inputs):
    x = inputs[0]
    _square_info(x, "SelfAdjointEig")
    if x.shape is None:
        return [TensorInfo(x.dtype, None), TensorInfo(x.dtype, None)]
    batch, n = tuple(x.shape[:-2]), x.shape[-1]
    v = batch + ((n, n) if int(attrs.get("compute_v", 1)) else (0, 0))
    return [TensorInfo(x.dtype, batch + (n,)), TensorInfo(x.dtype, v)]


_DOMAIN = {"domain": "onegraph", "since_version": 1}

OPS = (
    define("MatrixInverse", ["input"], ["output"], _inverse_kernel,
           attrs=[("adjoint", "int", 0)], infer=_same_infer("MatrixInverse"), **_DOMAIN),
    define("MatrixSolve", ["matrix", "rhs"], ["output"], _solve_kernel,
           attrs=[("adjoint", "int", 0)], infer=_solve_infer("MatrixSolve"), **_DOMAIN),
    define("MatrixTriangularSolve", ["matrix", "rhs"], ["output"], _triangular_solve_kernel,
           attrs=[("lower", "int", 1), ("adjoint", "int", 0)],
           infer=_solve_infer("MatrixTriangularSolve"), **_DOMAIN),
    define("Cholesky", ["input"], ["output"], _cholesky_kernel,
           infer=_same_infer("Cholesky"), **_DOMAIN),
    define("Qr", ["input"], ["q", "r"], _qr_kernel, attrs=[("full_matrices", "int", 0)],
           infer=_qr_infer, **_DOMAIN),
    define("Svd", ["input"], ["s", "u", "v"], _svd_kernel,
           attrs=[("compute_uv", "int", 1), ("full_matrices", "int", 0)],
           infer=_svd_infer, **_DOMAIN),
    define("SelfAdjointEig", ["input"], ["e", "v"], _eig_kernel,
           attrs=[("compute_v", "int", 1)], infer=_eig_infer, **_DOMAIN),
)

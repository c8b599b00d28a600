"""Gradients of the onegraph-domain matrix ops (linalg_solve.py), TensorFlow's
formulas (linalg_grad.py) as graph nodes:

- MatrixInverse: dA = -Y^T dY Y^T (adjoint: -Y dY^T Y... transposed accordingly).
- MatrixSolve / MatrixTriangularSolve: dB = A^-T dX, dA = -dB X^T (the triangle only
  for a triangular A; batch dims summed back where they were broadcast).
- Cholesky: Murray's formula, L^-T Phi(L^T dL) L^-1 symmetrised.
- Qr (rows >= columns, reduced; wide matrices by splitting off the extra columns),
  Svd, SelfAdjointEig: the standard spectral formulas, with 1/(s_i^2 - s_j^2)
  replaced by TF's "safe reciprocal" so repeated values give 0, not inf.

Every rule needs the ranks (and for Svd/Qr the matrix sizes) known while building.
"""

from __future__ import annotations

import numpy as np

from ..errors import GradientNotDefinedError

_OG = "onegraph"


def _rank(x, op: str) -> int:
    if x.shape is None:
        raise GradientNotDefinedError(f"{op} gradient needs an input of known rank")
    return len(x.shape)


def _t(b, x, rank: int):
    """x with its last two axes swapped."""
    return b.op("Transpose", [x], {"perm": list(range(rank - 2)) + [rank - 1, rank - 2]})


def _mm(b, x, y):
    return b.op("MatMul", [x, y])


def _eye_like(b, x):
    """The identity matrix of x's last dim (n x n), to broadcast against x."""
    n = b.op("Shape", [x], {"start": -1})
    zeros = b.op("ConstantOfShape", [b.op("Concat", [n, n], {"axis": 0})],
                 {"value": np.zeros(1, x.dtype.numpy)})
    return b.op("EyeLike", [zeros])


def _diag_matrix(b, v, like):
    """Vectors v [..., n] as diagonal matrices [..., n, n]."""
    return b.op("Mul", [b.op("Unsqueeze", [v, b.constant_ints([-1])]), _eye_like(b, like)])


def _lower(b, x):
    return b.op("Trilu", [x], {"upper": 0})


def _upper(b, x):
    return b.op("Trilu", [x], {"upper": 1})


def _const(b, value, like):
    """A scalar constant of like's dtype."""
    return b.constant(np.asarray(value, like.dtype.numpy))


def _safe_reciprocal(b, x):
    """x / (x^2 + 1e-20): 1/x, but 0 where x is 0 (TF's _SafeReciprocal)."""
    eps = _const(b, 1e-20, x)
    return b.op("Div", [x, b.op("Add", [b.op("Mul", [x, x]), eps])])


def _half_diagonal(b, x):
    """x with its diagonal halved."""
    eye = _eye_like(b, x)
    half = b.op("Mul", [b.op("Mul", [x, eye]), _const(b, 0.5, x)])
    return b.op("Sub", [x, half])


def _inverse(b, op, grads):
    (g,) = grads
    y = op.outputs[0]
    r = _rank(y, "MatrixInverse")
    if int(op.attrs.get("adjoint", 0)):
        inner = _mm(b, _t(b, g, r), y)           # Y: inverse of A^T
        out = _mm(b, y, inner)
    else:
        yt = _t(b, y, r)
        out = _mm(b, yt, _mm(b, g, yt))
    return [b.op("Neg", [out])]


def _sum_to(b, grad, like):
    return b.op("SumToShapeOf", [grad, like])


def _solve_pair(b, op, grads, solver: str, extra: dict):
    (g,) = grads
    a, rhs = op.inputs
    x = op.outputs[0]
    r = _rank(x, solver)
    _rank(a, solver)
    adjoint = int(op.attrs.get("adjoint", 0))
    attrs = dict(extra, adjoint=1 - adjoint)
    grad_b = b.op(solver, [a, g], attrs, domain=_OG)
    if adjoint:
        grad_a = b.op("Neg", [_mm(b, x, _t(b, grad_b, r))])
    else:
        grad_a = b.op("Neg", [_mm(b, grad_b, _t(b, x, r))])
    if solver == "MatrixTriangularSolve":
        grad_a = _lower(b, grad_a) if int(op.attrs.get("lower", 1)) else _upper(b, grad_a)
    return [_sum_to(b, grad_a, a), _sum_to(b, grad_b, rhs)]


def _solve(b, op, grads):
    return _solve_pair(b, op, grads, "MatrixSolve", {})


def _triangular_solve(b, op, grads):
    return _solve_pair(b, op, grads, "MatrixTriangularSolve",
                       {"lower": int(op.attrs.get("lower", 1))})


def _cholesky(b, op, grads):
    (g,) = grads
    chol = op.outputs[0]
    r = _rank(chol, "Cholesky")
    inv = b.op("MatrixTriangularSolve", [chol, _eye_like(b, chol)], {"lower": 1},
               domain=_OG)
    middle = _lower(b, _half_diagonal(b, _mm(b, _t(b, chol, r), g)))
    grad = _mm(b, _mm(b, _t(b, inv, r), middle), inv)
    grad = b.op("Add", [grad, _t(b, grad, r)])
    return [b.op("Mul", [grad, _const(b, 0.5, grad)])]


def _zero_if_none(b, grad, like):
    return grad if grad is not None else b.op("ZerosLike", [like])


def _qr(b, op, grads):
    q, r_mat = op.outputs
    dq, dr = (_zero_if_none(b, g, y) for g, y in zip(grads, op.outputs))
    a = op.inputs[0]
    rank = _rank(a, "Qr")
    if None in tuple(a.shape[-2:]):
        raise GradientNotDefinedError("Qr gradient needs the matrix sizes known")
    m, n = a.shape[-2:]
    if int(op.attrs.get("full_matrices", 0)) and m > n:
        raise GradientNotDefinedError("Qr gradient is not defined for full_matrices with "
                                      "more rows than columns (as in TensorFlow)")

    def times_inverse_transpose(x, upper):
        # x upper^-T, as (upper^-1 x^T)^T: one triangular solve
        return _t(b, b.op("MatrixTriangularSolve", [upper, _t(b, x, rank)],
                          {"lower": 0, "adjoint": 0}, domain=_OG), rank)

    def square_or_deep(q, r_mat, dq, dr):
        qdq = _mm(b, _t(b, q, rank), dq)
        qdq_ = b.op("Sub", [qdq, _t(b, qdq, rank)])
        rdr = _mm(b, r_mat, _t(b, dr, rank))
        rdr_ = b.op("Sub", [rdr, _t(b, rdr, rank)])
        tril = _lower(b, b.op("Add", [qdq_, rdr_]))
        grad_a = _mm(b, q, b.op("Add", [dr, times_inverse_transpose(tril, r_mat)]))
        grad_b = times_inverse_transpose(b.op("Sub", [dq, _mm(b, q, qdq)]), r_mat)
        return b.op("Add", [grad_a, grad_b])

    if m >= n:
        return [square_or_deep(q, r_mat, dq, dr)]
    # wide: A = [X | Y] with X square; Q R = [Q U | Q V]
    def cols(t, start, end):
        return b.op("Slice", [t, b.constant_ints([start]), b.constant_ints([end]),
                              b.constant_ints([-1])])
    y, u = cols(a, m, n), cols(r_mat, 0, m)
    dv, du = cols(dr, m, n), cols(dr, 0, m)
    dy = _mm(b, q, dv)
    dx = square_or_deep(q, u, b.op("Add", [dq, _mm(b, y, _t(b, dv, rank))]), du)
    return [b.op("Concat", [dx, dy], {"axis": -1})]


def _eig(b, op, grads):
    e, v = op.outputs
    ge, gv = grads
    x = op.inputs[0]
    rank = _rank(x, "SelfAdjointEig")
    if not int(op.attrs.get("compute_v", 1)):
        raise GradientNotDefinedError("SelfAdjointEig gradient needs compute_v=1 (the "
                                      "eigenvectors)")
    ge = _zero_if_none(b, ge, e)
    gv = _zero_if_none(b, gv, v)
    gaps = b.op("Sub", [b.op("Unsqueeze", [e, b.constant_ints([-2])]),
                        b.op("Unsqueeze", [e, b.constant_ints([-1])])])
    eye = _eye_like(b, x)
    off = b.op("Sub", [_const(b, 1.0, x), eye])
    f = b.op("Mul", [_safe_reciprocal(b, gaps), off])
    inner = b.op("Add", [_diag_matrix(b, ge, x),
                         b.op("Mul", [f, _mm(b, _t(b, v, rank), gv)])])
    grad = _mm(b, v, _mm(b, inner, _t(b, v, rank)))
    grad = _lower(b, b.op("Add", [grad, _t(b, grad, rank)]))
    return [_half_diagonal(b, grad)]


def _svd(b, op, grads):
    a = op.inputs[0]
    rank = _rank(a, "Svd")
    s, u, v = op.outputs
    gs = _zero_if_none(b, grads[0], s)
    if not int(op.attrs.get("compute_uv", 1)):
        raise GradientNotDefinedError("Svd gradient needs compute_uv=1 (og.svd computes "
                                      "the vectors for it)")
    if None in tuple(a.shape[-2:]):
        raise GradientNotDefinedError("Svd gradient needs the matrix sizes known")
    m, n = a.shape[-2:]
    gu = _zero_if_none(b, grads[1], u)
    gv = _zero_if_none(b, grads[2], v)
    full = int(op.attrs.get("full_matrices", 0))
    transposed = m > n
    if transposed:
        m, n, u, v, gu, gv = n, m, v, u, gv, gu
    if full and abs(m - n) > 1:
        raise GradientNotDefinedError("Svd gradient with full_matrices needs the two "
                                      "matrix sizes within 1 of each other (as in "
                                      "TensorFlow)")

    def cols(t, start, end):
        return b.op("Slice", [t, b.constant_ints([start]), b.constant_ints([end]),
                              b.constant_ints([-1])])
    s2 = b.op("Mul", [s, s])
    gaps = b.op("Sub", [b.op("Unsqueeze", [s2, b.constant_ints([-2])]),
                        b.op("Unsqueeze", [s2, b.constant_ints([-1])])])
    square = _square_like(b, s)
    off = b.op("Sub", [_const(b, 1.0, a), _eye_like(b, square)])
    f = b.op("Mul", [_safe_reciprocal(b, gaps), off])
    s_inv = _diag_matrix(b, _safe_reciprocal(b, s), square)
    # v1: the first m columns of v (all of them for a square or reduced v)
    v1, gv1 = (cols(v, 0, m), cols(gv, 0, m)) if full and m != n else (v, gv)
    u_gu = _mm(b, _t(b, u, rank), gu)
    v_gv = _mm(b, _t(b, v1, rank), gv1)
    f_u = b.op("Mul", [f, u_gu])
    f_v = b.op("Mul", [f, v_gv])
    s_mat = _diag_matrix(b, s, square)
    term1 = b.op("Add", [
        b.op("Add", [_diag_matrix(b, gs, square),
                     _mm(b, b.op("Add", [f_u, _t(b, f_u, rank)]), s_mat)]),
        _mm(b, s_mat, b.op("Add", [f_v, _t(b, f_v, rank)]))])
    grad = _mm(b, u, _mm(b, term1, _t(b, v1, rank)))
    if m != n:
        gv1t = _t(b, gv1, rank)
        term2 = b.op("Sub", [gv1t, _mm(b, _mm(b, gv1t, v1), _t(b, v1, rank))])
        if full:
            v2, gv2 = cols(v, m, n), cols(gv, m, n)
            term2 = b.op("Sub", [term2, _mm(b, _mm(b, _t(b, v1, rank), gv2),
                                            _t(b, v2, rank))])
        grad = b.op("Add", [grad, _mm(b, _mm(b, u, s_inv), term2)])
    return [_t(b, grad, rank) if transposed else grad]


def _square_like(b, s):
    """A [..., k, k] zeros matrix for the singular values s [..., k]."""
    return b.op("Mul", [b.op("Unsqueeze", [s, b.constant_ints([-1])]),
                        b.op("Unsqueeze", [b.op("ZerosLike", [s]),
                                           b.constant_ints([-2])])])


GRADIENTS = {
    (_OG, "MatrixInverse"): _inverse,
    (_OG, "MatrixSolve"): _solve,
    (_OG, "MatrixTriangularSolve"): _triangular_solve,
    (_OG, "Cholesky"): _cholesky,
    (_OG, "Qr"): _qr,
    (_OG, "SelfAdjointEig"): _eig,
    (_OG, "Svd"): _svd,
}

"""Gradients of linalg_more.py's ops as graph nodes:

- MatrixExponential: the adjoint Frechet derivative L(A^T, G), read off the upper
  right block of expm([[A^T, G], [0, A^T]]) (Najfeld and Havel). TF differentiates its
  Pade composition instead; the two agree to the approximation's accuracy.
- Lu: TF's _LuGrad for square matrices: with P A = L U and M = tril(L^T dL, -1) +
  triu(dU U^T), dA = P^T L^-T M U^-T.
- MatrixSquareRoot: TF's _MatrixSquareRootGrad: with R = sqrtm(A), dA = R dR + dR R,
  so the gradient X solves R^T X + X R^T = G, a Kronecker-sum system of size n^2
  (row-major vec: (R^T (x) I + I (x) R) vec X = vec G), solved by MatrixSolve.
- TridiagonalSolve: TF's _TridiagonalSolveGrad: d rhs = A^-T G (a solve with the
  transposed diagonals); the diagonals' gradients are the three diagonals of
  -d rhs X^T.

Every rule needs the matrix size known while building (MatrixSquareRoot its whole
shape).
"""

from __future__ import annotations

import numpy as np

from ..errors import GradientNotDefinedError

_OG = "onegraph"


def _size(x, op: str) -> int:
    if x.shape is None or len(x.shape) < 2 or x.shape[-1] is None:
        raise GradientNotDefinedError(f"{op} gradient needs the matrix size known")
    return int(x.shape[-1])


def _t(b, x):
    rank = len(x.shape)
    return b.op("Transpose", [x], {"perm": list(range(rank - 2)) + [rank - 1, rank - 2]})


def _slice(b, x, starts, ends, axes):
    return b.op("Slice", [x, b.constant_ints(starts), b.constant_ints(ends),
                          b.constant_ints(axes)])


def _expm(b, op, grads):
    (g,) = grads
    a = op.inputs[0]
    n = _size(a, "MatrixExponential")
    at = _t(b, a)
    top = b.op("Concat", [at, g], {"axis": -1})
    bottom = b.op("Concat", [b.op("ZerosLike", [at]), at], {"axis": -1})
    block = b.op("MatrixExponential", [b.op("Concat", [top, bottom], {"axis": -2})], {},
                 domain=_OG)
    return [_slice(b, block, [0, n], [n, 2 * n], [-2, -1])]


def _trilu(b, x, upper: int, k: int = 0):
    return b.op("Trilu", [x, b.constant(np.asarray(k, np.int64))], {"upper": upper})


def _lu(b, op, grads):
    g = grads[0]
    packed, perm = op.outputs
    n = _size(packed, "Lu")
    if g is None:
        return [None]
    if n == 0:
        # 0 x 0 matrices: the gradient is as empty as the input (OneHot refuses the
        # depth 0 the permutation matrix would need).
        return [b.op("ZerosLike", [op.inputs[0]])]
    eye = b.constant(np.eye(n, dtype=packed.dtype.numpy))
    lower = b.op("Add", [_trilu(b, packed, 0, -1), eye])
    upper = _trilu(b, packed, 1)
    middle = b.op("Add", [
        _trilu(b, b.op("MatMul", [_t(b, lower), _trilu(b, g, 0, -1)]), 0, -1),
        _trilu(b, b.op("MatMul", [_trilu(b, g, 1), _t(b, upper)]), 1)])
    y = b.op("MatrixTriangularSolve", [lower, middle], {"lower": 1, "adjoint": 1},
             domain=_OG)
    grad_pa = _t(b, b.op("MatrixTriangularSolve", [upper, _t(b, y)],
                         {"lower": 0, "adjoint": 0}, domain=_OG))
    unit = b.constant(np.asarray([0, 1], packed.dtype.numpy))
    p = b.op("OneHot", [perm, b.constant_ints([n]), unit], {"axis": -1})
    return [b.op("MatMul", [_t(b, p), grad_pa])]


def _kron(b, x, y, shape: tuple):
    """The Kronecker products of matrices x and y, both [..., n, n] of static `shape`:
    [..., n^2, n^2] with entry (i n + k, j n + l) = x[i, j] y[k, l]."""
    n = shape[-1]
    xe = b.op("Reshape", [x, b.constant_ints(list(shape[:-2]) + [n, 1, n, 1])])
    ye = b.op("Reshape", [y, b.constant_ints(list(shape[:-2]) + [1, n, 1, n])])
    return b.op("Reshape", [b.op("Mul", [xe, ye]),
                            b.constant_ints(list(shape[:-2]) + [n * n, n * n])])


def _sqrtm(b, op, grads):
    (g,) = grads
    root = op.outputs[0]
    shape = root.shape
    if shape is None or None in shape:
        raise GradientNotDefinedError("MatrixSquareRoot gradient needs the input's shape "
                                      "known while building")
    shape = tuple(int(d) for d in shape)
    if 0 in shape:
        # Empty input, empty gradient: Reshape reads a 0 in its target as "copy the
        # input's dim", so the Kronecker reshapes below cannot express empty matrices.
        return [b.op("ZerosLike", [op.inputs[0]])]
    n = shape[-1]
    eye = b.constant(np.eye(n, dtype=root.dtype.numpy))
    eye_full = b.op("Add", [eye, b.op("ZerosLike", [root])])
    root_t = _t(b, root)
    ksum = b.op("Add", [_kron(b, root_t, eye_full, shape), _kron(b, eye_full, root, shape)])
    vec = b.op("Reshape", [g, b.constant_ints(list(shape[:-2]) + [n * n, 1])])
    x = b.op("MatrixSolve", [ksum, vec], {}, domain=_OG)
    return [b.op("Reshape", [x, b.constant_ints(list(shape))])]


def _tridiagonal_solve(b, op, grads):
    (g,) = grads
    diags, rhs = op.inputs
    x = op.outputs[0]
    m = _size(diags, "TridiagonalSolve")
    if x.shape is None:
        raise GradientNotDefinedError("TridiagonalSolve gradient needs the rank known")
    zero = b.op("Mul", [_slice(b, diags, [0, 0], [1, 1], [-2, -1]),
                        b.constant(np.asarray(0, diags.dtype.numpy))])      # [..., 1, 1]
    sup = b.op("Concat", [_slice(b, diags, [2, 1], [3, m], [-2, -1]), zero], {"axis": -1})
    sub = b.op("Concat", [zero, _slice(b, diags, [0, 0], [1, m - 1], [-2, -1])],
               {"axis": -1})
    transposed = b.op("Concat", [sup, _slice(b, diags, [1, 0], [2, m], [-2, -1]), sub],
                      {"axis": -2})
    attrs = {"partial_pivoting": int(op.attrs.get("partial_pivoting", 1))}
    grad_rhs = b.op("TridiagonalSolve", [transposed, g], attrs, domain=_OG)
    row0 = b.op("Mul", [_slice(b, x, [0], [1], [-2]),
                        b.constant(np.asarray(0, x.dtype.numpy))])           # [..., 1, k]
    x_next = b.op("Concat", [_slice(b, x, [1], [m], [-2]), row0], {"axis": -2})
    x_prev = b.op("Concat", [row0, _slice(b, x, [0], [m - 1], [-2])], {"axis": -2})

    def diagonal(other):
        prod = b.op("Neg", [b.op("Mul", [grad_rhs, other])])
        total = b.op("ReduceSum", [prod, b.constant_ints([-1])], {"keepdims": 0})
        return b.op("Unsqueeze", [total, b.constant_ints([-2])])

    grad_diags = b.op("Concat", [diagonal(x_next), diagonal(x), diagonal(x_prev)],
                      {"axis": -2})
    return [b.op("SumToShapeOf", [grad_diags, diags]), b.op("SumToShapeOf", [grad_rhs, rhs])]


GRADIENTS = {
    (_OG, "Lu"): _lu,
    (_OG, "MatrixExponential"): _expm,
    (_OG, "MatrixSquareRoot"): _sqrtm,
    (_OG, "TridiagonalSolve"): _tridiagonal_solve,
}

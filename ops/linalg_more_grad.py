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

Every rule needs the rank known while building; sizes known only at run time are
read from the run's shapes (Slice ends past the end, Shape, Range).
"""

from __future__ import annotations

import numpy as np

from ..errors import GradientNotDefinedError

_OG = "onegraph"


_END = np.iinfo(np.int64).max   # a Slice end past any size


def _rank(x, op: str) -> int:
    if x.shape is None or len(x.shape) < 2:
        raise GradientNotDefinedError(f"{op} gradient needs the matrices' rank known "
                                      "while building")
    return len(x.shape)


def _last_dim(b, x):
    """x's last dim as a 1-element int64 tensor (a constant when known)."""
    n = x.shape[-1]
    return b.constant_ints([int(n)]) if n is not None else b.op("Shape", [x], {"start": -1})


def _t(b, x):
    rank = len(x.shape)
    return b.op("Transpose", [x], {"perm": list(range(rank - 2)) + [rank - 1, rank - 2]})


def _slice(b, x, starts, ends, axes):
    return b.op("Slice", [x, b.constant_ints(starts), b.constant_ints(ends),
                          b.constant_ints(axes)])


def _expm(b, op, grads):
    (g,) = grads
    a = op.inputs[0]
    _rank(a, "MatrixExponential")
    n = _last_dim(b, a)
    at = _t(b, a)
    top = b.op("Concat", [at, g], {"axis": -1})
    bottom = b.op("Concat", [b.op("ZerosLike", [at]), at], {"axis": -1})
    block = b.op("MatrixExponential", [b.op("Concat", [top, bottom], {"axis": -2})], {},
                 domain=_OG)
    # the upper right n x n block
    starts = b.op("Concat", [b.constant_ints([0]), n], {"axis": 0})
    ends = b.op("Concat", [n, b.constant_ints([_END])], {"axis": 0})
    return [b.op("Slice", [block, starts, ends, b.constant_ints([-2, -1])])]


def _trilu(b, x, upper: int, k: int = 0):
    return b.op("Trilu", [x, b.constant(np.asarray(k, np.int64))], {"upper": upper})


def _identity_like(b, x):
    """Identity matrices of x's shape and dtype, sized by the run: the diagonal of a
    matrix of ones (its upper triangle's lower triangle)."""
    ones = b.op("Add", [b.op("ZerosLike", [x]), b.constant(np.asarray(1, x.dtype.numpy))])
    return _trilu(b, _trilu(b, ones, 1), 0)


def _lu(b, op, grads):
    g = grads[0]
    packed, perm = op.outputs
    _rank(packed, "Lu")
    if g is None:
        return [None]
    # the identity and the permutation matrix (perm compared with 0..n-1) take n from
    # the run, and n = 0 (empty matrices) needs no special case
    lower = b.op("Add", [_trilu(b, packed, 0, -1), _identity_like(b, packed)])
    upper = _trilu(b, packed, 1)
    middle = b.op("Add", [
        _trilu(b, b.op("MatMul", [_t(b, lower), _trilu(b, g, 0, -1)]), 0, -1),
        _trilu(b, b.op("MatMul", [_trilu(b, g, 1), _t(b, upper)]), 1)])
    y = b.op("MatrixTriangularSolve", [lower, middle], {"lower": 1, "adjoint": 1},
             domain=_OG)
    grad_pa = _t(b, b.op("MatrixTriangularSolve", [upper, _t(b, y)],
                         {"lower": 0, "adjoint": 0}, domain=_OG))
    n = b.op("Squeeze", [_last_dim(b, packed), b.constant_ints([0])])
    columns = b.op("Range", [b.constant(np.asarray(0, np.int64)), n,
                             b.constant(np.asarray(1, np.int64))])
    hits = b.op("Equal", [b.op("Unsqueeze", [b.op("Cast", [perm], {"to": 7}),
                                             b.constant_ints([-1])]), columns])
    p = b.op("CastLike", [hits, packed])
    return [b.op("MatMul", [_t(b, p), grad_pa])]


def _reshaped(b, x, parts: list):
    """x reshaped to the concatenation of `parts` (lists of ints, or 1-D int64 tensors
    of sizes known only at run time); a constant shape when every part is ints, else
    built per run with allowzero (a 0 in it is an empty dim, not "copy x's")."""
    if all(isinstance(p, list) for p in parts):
        return b.op("Reshape", [x, b.constant_ints([d for p in parts for d in p])])
    shape = b.op("Concat", [p if not isinstance(p, list) else b.constant_ints(p)
                            for p in parts], {"axis": 0})
    return b.op("Reshape", [x, shape], {"allowzero": 1})


def _kron(b, x, y, batch, n, nn):
    """The Kronecker products of matrices x and y, both [..., n, n]: [..., n^2, n^2]
    with entry (i n + k, j n + l) = x[i, j] y[k, l]. batch, n and nn = n^2 are lists
    of ints or 1-D int64 tensors (see _reshaped)."""
    xe = _reshaped(b, x, [batch, n, [1], n, [1]])
    ye = _reshaped(b, y, [batch, [1], n, [1], n])
    return _reshaped(b, b.op("Mul", [xe, ye]), [batch, nn, nn])


def _sqrtm(b, op, grads):
    (g,) = grads
    root = op.outputs[0]
    rank = _rank(root, "MatrixSquareRoot")
    shape = root.shape
    if None not in shape:
        shape = [int(d) for d in shape]
        if 0 in shape:
            # Empty input, empty gradient: a constant Reshape reads a 0 in its target
            # as "copy the input's dim", so the Kronecker reshapes cannot express it.
            return [b.op("ZerosLike", [op.inputs[0]])]
        batch, n, nn = shape[:-2], [shape[-1]], [shape[-1] ** 2]
    else:   # the sizes of the run
        batch = b.op("Shape", [root], {"end": rank - 2})
        n = b.op("Shape", [root], {"start": -1})
        nn = b.op("Mul", [n, n])
    eye = _identity_like(b, root)
    root_t = _t(b, root)
    ksum = b.op("Add", [_kron(b, root_t, eye, batch, n, nn),
                        _kron(b, eye, root, batch, n, nn)])
    vec = _reshaped(b, g, [batch, nn, [1]])
    x = b.op("MatrixSolve", [ksum, vec], {}, domain=_OG)
    return [_reshaped(b, x, [batch, n, n])]


def _tridiagonal_solve(b, op, grads):
    (g,) = grads
    diags, rhs = op.inputs
    x = op.outputs[0]
    _rank(diags, "TridiagonalSolve")
    if x.shape is None:
        raise GradientNotDefinedError("TridiagonalSolve gradient needs the rank known")
    # (slices by offsets from both ends: the size m may be known only at run time)
    zero = b.op("Mul", [_slice(b, diags, [0, 0], [1, 1], [-2, -1]),
                        b.constant(np.asarray(0, diags.dtype.numpy))])      # [..., 1, 1]
    sup = b.op("Concat", [_slice(b, diags, [2, 1], [3, _END], [-2, -1]), zero],
               {"axis": -1})
    sub = b.op("Concat", [zero, _slice(b, diags, [0, 0], [1, -1], [-2, -1])], {"axis": -1})
    transposed = b.op("Concat", [sup, _slice(b, diags, [1, 0], [2, _END], [-2, -1]), sub],
                      {"axis": -2})
    attrs = {"partial_pivoting": int(op.attrs.get("partial_pivoting", 1))}
    grad_rhs = b.op("TridiagonalSolve", [transposed, g], attrs, domain=_OG)
    row0 = b.op("Mul", [_slice(b, x, [0], [1], [-2]),
                        b.constant(np.asarray(0, x.dtype.numpy))])           # [..., 1, k]
    x_next = b.op("Concat", [_slice(b, x, [1], [_END], [-2]), row0], {"axis": -2})
    x_prev = b.op("Concat", [row0, _slice(b, x, [0], [-1], [-2])], {"axis": -2})

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

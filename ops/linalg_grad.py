"""Gradient rules of the linalg family: MatMul (any rank, batch broadcasting) and Gemm."""

from __future__ import annotations

import string

import numpy as np

from ..errors import GradientNotDefinedError
from .grad_util import like_dtype, same_static_shape
from .linalg import _parse_einsum


def _swap_last(b, x):
    rank = len(x.shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return b.op("Transpose", [x], {"perm": perm})


def _matmul(b, op, grads):
    """dA = dY B^T and dB = A^T dY, with 1-D operands promoted to matrices as numpy
    does and batch dims summed back to each operand's shape.

    Raises:
        GradientNotDefinedError: an operand's rank is unknown.
    """
    (g,) = grads
    a, w = op.inputs
    if a.shape is None or w.shape is None:
        raise GradientNotDefinedError("MatMul gradient needs operands of known rank")
    ra, rw = len(a.shape), len(w.shape)
    if ra == 2 and rw == 2:
        return [b.op("Gemm", [g, w], {"transB": 1}), b.op("Gemm", [a, g], {"transA": 1})]
    # promote vectors to matrices as numpy does, then undo
    a2 = b.op("Unsqueeze", [a, b.constant_ints([0])]) if ra == 1 else a
    w2 = b.op("Unsqueeze", [w, b.constant_ints([1])]) if rw == 1 else w
    g2 = _promote_grad(b, g, ra == 1, rw == 1)
    ga = b.op("MatMul", [g2, _swap_last(b, w2)])
    gw = b.op("MatMul", [_swap_last(b, a2), g2])
    if ra > 2 or rw > 2:
        # sum the batch dims first: only then does the promoted vector's size match
        ga, gw = b.op("SumToShapeOf", [ga, a2]), b.op("SumToShapeOf", [gw, w2])
    # allowzero: an empty vector's shape [0] is literal, not "copy dim 0" of (1, 0)
    if ra == 1:
        ga = b.op("Reshape", [ga, b.op("Shape", [a])], {"allowzero": 1})
    if rw == 1:
        gw = b.op("Reshape", [gw, b.op("Shape", [w])], {"allowzero": 1})
    return [ga, gw]


def _promote_grad(b, g, a_vector, w_vector):
    """dY with the axes MatMul dropped for 1-D operands put back: (..., 1, N) for a
    vector A, (..., M, 1) for a vector B, (1, 1) for vector . vector (a 0-d dY)."""
    if a_vector and w_vector:
        return b.op("Unsqueeze", [g, b.constant_ints([0, 1])])
    if a_vector:
        return b.op("Unsqueeze", [g, b.constant_ints([-2])])
    if w_vector:
        return b.op("Unsqueeze", [g, b.constant_ints([-1])])
    return g


def _gemm(b, op, grads):
    (g,) = grads
    a, w = op.inputs[0], op.inputs[1]
    c = op.inputs[2] if len(op.inputs) > 2 else None
    attrs = op.attrs
    ta, tb = int(attrs["transA"]), int(attrs["transB"])
    alpha, beta = float(attrs["alpha"]), float(attrs["beta"])
    if alpha != 1.0:
        g_a = b.op("Mul", [g, like_dtype(b, alpha, g)])
    else:
        g_a = g
    # dA' = g B'^T and dB' = A'^T g, written back through each operand's transpose
    ga = {(0, 0): lambda: b.op("Gemm", [g_a, w], {"transB": 1}),
          (0, 1): lambda: b.op("Gemm", [g_a, w]),
          (1, 0): lambda: b.op("Gemm", [w, g_a], {"transB": 1}),
          (1, 1): lambda: b.op("Gemm", [w, g_a], {"transA": 1, "transB": 1})}[(ta, tb)]()
    gw = {(0, 0): lambda: b.op("Gemm", [a, g_a], {"transA": 1}),
          (1, 0): lambda: b.op("Gemm", [a, g_a]),
          (0, 1): lambda: b.op("Gemm", [g_a, a], {"transA": 1}),
          (1, 1): lambda: b.op("Gemm", [g_a, a], {"transA": 1, "transB": 1})}[(ta, tb)]()
    out = [ga, gw]
    if len(op.inputs) > 2:
        if c is None or beta == 0.0:
            out.append(None)
        else:
            gc = g if beta == 1.0 else b.op("Mul", [g, like_dtype(b, beta, g)])
            # Gemm itself broadcasts C to (M, N): a dim of C that is unknown while
            # building may still be a stretched 1, so sum unless the shapes are known
            # equal (unbroadcast would assume an unknown dim of C is not stretched)
            out.append(gc if same_static_shape(gc, c) else b.op("SumToShapeOf", [gc, c]))
    return out


def _einsum(b, op, grads):
    """The gradient of operand i is an Einsum of dy (with the output subscripts) and the
    other operands, producing operand i's subscripts. Ellipses are first spelled out as
    fresh letters (right-aligned, so they broadcast as numpy does); a label only operand
    i has (summed away in the forward) is supplied by a ones tensor shaped like operand
    i; size-1 dims stretched by broadcasting are summed back with SumToShapeOf.

    An operand that repeats a subscript (a diagonal or trace, 'ii->i') gets the
    gradient of its diagonal, an Einsum to its distinct subscripts, spread back onto the
    diagonal: each repeat after the first becomes a fresh letter tied to the first by an
    identity matrix (EyeLike of the dim's size).

    Raises:
        GradientNotDefinedError: an operand's rank is unknown.
    """
    (g,) = grads
    xs = op.inputs
    if any(x.shape is None for x in xs):
        raise GradientNotDefinedError("Einsum gradient needs operands of known rank")
    if any(x.dtype.numpy.kind != "f" for x in xs):
        return [None] * len(xs)
    terms, out = _parse_einsum(op.attrs["equation"], [len(x.shape) for x in xs])
    used = {s for t in terms + [out] for s in t if s != "..."}
    fresh = [c for c in string.ascii_letters if c not in used]
    n_ell = [len(x.shape) - (len(t) - 1) if "..." in t else 0 for t, x in zip(terms, xs)]
    ell = fresh[:max(n_ell, default=0)]

    def spell(term, n):
        letters = ell[len(ell) - n:] if n else []
        return "".join(c for s in term for c in (letters if s == "..." else [s]))

    specs = [spell(t, n) for t, n in zip(terms, n_ell)]
    out_spec = spell(out, len(ell))
    result = []
    spare = fresh[len(ell):]  # letters for the repeats of a diagonal operand
    for i, x in enumerate(xs):
        target = specs[i]
        distinct = "".join(dict.fromkeys(target))  # first appearances, in order
        others = [(out_spec, g)] + [(specs[j], xs[j]) for j in range(len(xs)) if j != i]
        present = set("".join(sp for sp, _ in others))
        if not set(target) <= present:
            others.append((target, b.op("OnesLike", [x])))  # (einsum reads its diagonal)
        eq = ",".join(sp for sp, _ in others) + "->" + distinct
        gx = b.op("Einsum", [t for _, t in others], {"equation": eq})
        if distinct != target:
            gx = _onto_diagonal(b, gx, x, target, distinct, spare)
        if _may_stretch(target, x, specs, xs):
            # x's size-1 dim met a longer one (numpy broadcasting, which Einsum allows):
            # the einsum above gives that dim size 1 where x is longer, or the longer
            # size where x has 1; Expand brings it to both, SumToShapeOf back to x's
            gx = b.op("Expand", [gx, b.op("Shape", [x])])
        if not same_static_shape(gx, x):
            gx = b.op("SumToShapeOf", [gx, x])
        result.append(gx)
    return result


def _may_stretch(target: str, x, specs: list, xs) -> bool:
    """Whether a label of x (subscripts `target`) may have size 1 in one operand and
    another size in another: it appears more than once among the operands, with a
    size 1 beside another size, or with an unknown size."""
    for label in set(target):
        sizes = [t.shape[k] for sp, t in zip(specs, xs) for k, c in enumerate(sp)
                 if c == label]
        if len(sizes) > 1 and (None in sizes or (1 in sizes and len(set(sizes)) > 1)):
            return True
    return False


def _onto_diagonal(b, gd, x, target: str, distinct: str, spare: list):
    """gd (subscripts `distinct`) spread onto the diagonal of x's subscripts `target`:
    zero off it. Each repeat of a letter is renamed to a spare letter and tied to the
    letter's first position by an identity matrix of that dim's size."""
    spelled, ties = [], []
    seen = set()
    for pos, c in enumerate(target):
        if c in seen:
            f = spare[len(ties)]
            n = b.op("Shape", [x], {"start": pos, "end": pos + 1})
            square = b.op("Concat", [n, n], {"axis": 0})
            zeros = b.op("ConstantOfShape", [square],
                         {"value": np.zeros(1, dtype=x.dtype.numpy)})
            ties.append((c + f, b.op("EyeLike", [zeros])))
            spelled.append(f)
        else:
            seen.add(c)
            spelled.append(c)
    eq = ",".join([distinct] + [sp for sp, _ in ties]) + "->" + "".join(spelled)
    return b.op("Einsum", [gd] + [t for _, t in ties], {"equation": eq})


GRADIENTS = {"Einsum": _einsum, "Gemm": _gemm, "MatMul": _matmul}

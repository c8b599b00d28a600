"""Operators: linalg family (MatMul, Gemm, Einsum).

Float32/float64 go straight to BLAS through np.matmul (transposes are passed as views,
never copied); float16 and bfloat16 are computed in float32 and cast back.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from . import onednn_matmul
from .blas import matmul_constant
from .common import broadcast_shape, derived
from .registry import TensorInfo, define, is_plan_constant, kernel_cache

_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))


def _widen(*arrays):
    """(arrays in a BLAS-friendly dtype, result dtype): narrow floats go through float32."""
    dt = arrays[0].dtype
    if dt in _NATIVE or dt.kind in "iub":
        return arrays, dt
    return tuple(np.asarray(a, dtype=np.float32) for a in arrays), dt


# --------------------------------------------------------------------------------------
# MatMul
# --------------------------------------------------------------------------------------


def _with_constant_weights(a, b, attrs):
    """((a, b) in a BLAS-friendly dtype, result dtype, whether b is constant): as
    `_widen`, but a plan-constant float16/bfloat16 b is widened once and kept in the
    node's cache (a float16 transformer converted every weight on every run); b is
    then that cached copy, itself constant."""
    constant = is_plan_constant(b)
    dt = a.dtype
    if not constant or dt in _NATIVE or dt.kind in "iub" or b.dtype != dt:
        return _widen(a, b) + (constant,)
    wide = derived(kernel_cache(attrs), ("widened", id(b)), b,
                   lambda v: np.asarray(v, dtype=np.float32))
    return (np.asarray(a, dtype=np.float32), wide), dt, True


def _matmul_kernel(inputs, attrs, ctx):
    (a, b), dt, constant = _with_constant_weights(inputs[0], inputs[1], attrs)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"MatMul: scalar operands are not allowed, got shapes "
                         f"{list(a.shape)} and {list(b.shape)}")
    if a.ndim > 2 and b.ndim == 2 and a.shape[-1] == b.shape[0]:
        # a stack against one matrix (a Linear layer on (N, H, W, C) or (N, T, C)) is
        # one GEMM on the rows of a: numpy would call BLAS once per leading index, with
        # short rows (ConvNeXt's 1x56x56x96 @ 96x384: 10.9 ms against 5.1)
        rows = a.reshape(int(np.prod(a.shape[:-1])), a.shape[-1])  # -1 fails when K = 0
        y = _times_weights(rows, b, attrs, constant).reshape(a.shape[:-1] + b.shape[1:])
    elif a.ndim > 2 or b.ndim > 2:
        y = np.matmul(_rows_contiguous(a), _rows_contiguous(b))
    elif a.ndim == 2 and b.ndim == 2:
        y = _times_weights(a, b, attrs, constant)
    else:
        y = np.matmul(a, b)
    return (np.asarray(y).astype(dt, copy=False),)


def _times_weights(a, b, attrs, constant):
    """a @ b for 2-D a and b; when b is `constant` (a plan constant, a view of one or
    the node's cached copy of one), through oneDNN's matmul (ops/onednn_matmul.py) or
    else the BLAS backend's packed product (ops/blas.py), with the reordered weights or
    pack in the node's cache; else numpy."""
    if constant:
        cache = kernel_cache(attrs)
        y = onednn_matmul.matmul_constant(a, b, cache)
        if y is None:
            y = matmul_constant(a, b, cache)
        if y is not None:
            return y
    return np.matmul(a, b)


def _rows_contiguous(x):
    """x, or a C-contiguous copy when its rows are not contiguous (a transposed view,
    such as attention's K^T from a Transpose): numpy's stacked matmul takes such an
    operand off BLAS. Measured per call (float32, one thread): 3 x (8 x 128 @ 128 x 512)
    187 us with the view, 35 us contiguous; (2, 12) heads of 64 x 64 @ 64 x 64 227 us
    against 128 us copy included. Views with contiguous rows (a head split of
    (B, S, H, D)) BLAS reads as they are: copying those costs more than it saves."""
    if x.ndim >= 2 and x.shape[-1] > 1 and x.strides[-1] != x.itemsize:
        return np.ascontiguousarray(x)
    return x


def _matmul_shape(sa, sb, where="MatMul: "):
    if sa is None or sb is None:
        return None
    if len(sa) == 0 or len(sb) == 0:
        raise ShapeError(f"{where}scalar operands are not allowed")
    a = (1,) + tuple(sa) if len(sa) == 1 else tuple(sa)
    b = tuple(sb) + (1,) if len(sb) == 1 else tuple(sb)
    ka, kb = a[-1], b[-2]
    if ka is not None and kb is not None and ka != kb:
        raise ShapeError(f"{where}inner dims differ: {list(sa)} @ {list(sb)}")
    batch = broadcast_shape(a[:-2], b[:-2], where=where)
    out = tuple(batch)
    if len(sa) > 1:
        out += (a[-2],)
    if len(sb) > 1:
        out += (b[-1],)
    return out


def _matmul_infer(attrs, inputs):
    a, b = inputs[0], inputs[1]
    return [TensorInfo(a.dtype, _matmul_shape(a.shape, b.shape))]


# --------------------------------------------------------------------------------------
# Gemm
# --------------------------------------------------------------------------------------


def _check_gemm_c(c_shape, y_shape):
    """Gemm's C must broadcast to the (M, N) result one way (unidirectionally): rank at
    most 2, each dim 1 or the result's (None = unknown).

    Raises:
        ShapeError: otherwise (numpy would broadcast the result up, or fail in its words).
    """
    if c_shape is None or y_shape is None:
        return
    if len(c_shape) > 2 or any(
            d is not None and o is not None and d not in (1, o)
            for d, o in zip(tuple(c_shape)[::-1], tuple(y_shape)[::-1])):
        raise ShapeError(f"Gemm: C of shape {list(c_shape)} does not broadcast to the "
                         f"result's shape {list(y_shape)} (M, N)")


def _factor(value: float, dtype):
    """Gemm's alpha or beta as a scalar of dtype. On integers a whole factor wraps
    modulo 2^bits as the products do (-1 on uint32 is 2^32 - 1, as ONNX's reference
    computes), rather than overflowing numpy's conversion."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        return dtype.type(value)
    bits = 8 * dtype.itemsize
    unsigned = np.dtype(f"u{dtype.itemsize}")
    return np.asarray(int(value) % (1 << bits), unsigned).view(dtype)[()]


def _gemm_kernel(inputs, attrs, ctx):
    a, b = inputs[0], inputs[1]
    c = inputs[2] if len(inputs) > 2 else None
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError(f"Gemm: A and B must be 2-D, got shapes {list(a.shape)} and "
                         f"{list(b.shape)}")
    (a, b), dt, constant = _with_constant_weights(a, b, attrs)
    if int(attrs["transA"]):
        a = a.T
    if int(attrs["transB"]):
        b = b.T
    alpha, beta = float(attrs["alpha"]), float(attrs["beta"])
    y = _times_weights(a, b, attrs, constant)
    if y.dtype.kind in "iu" and not (alpha.is_integer() and beta.is_integer()):
        # fractional factors on integers: scale in float64, truncate at the end
        y = y.astype(np.float64)
    if alpha != 1.0:
        y *= _factor(alpha, y.dtype)
    if c is not None and beta != 0.0:
        c = np.asarray(c, dtype=y.dtype)
        if beta != 1.0:
            c = c * _factor(beta, y.dtype)
        if not (c.shape == y.shape or c.ndim <= 1 and c.size in (1, y.shape[-1])):
            _check_gemm_c(c.shape, y.shape)
        y += c
    return (y.astype(dt, copy=False),)


def _gemm_infer(attrs, inputs):
    a, b = inputs[0], inputs[1]
    if a.shape is None or b.shape is None:
        return [TensorInfo(a.dtype, None)]
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise ShapeError(f"Gemm: A and B must be 2-D, got {a.shape} and {b.shape}")
    m, ka = a.shape[::-1] if int(attrs["transA"]) else a.shape
    kb, n = b.shape[::-1] if int(attrs["transB"]) else b.shape
    if ka is not None and kb is not None and ka != kb:
        raise ShapeError(f"Gemm: inner dims differ ({ka} vs {kb})")
    c = inputs[2] if len(inputs) > 2 else None
    if c is not None:
        _check_gemm_c(c.shape, (m, n))
    return [TensorInfo(a.dtype, (m, n))]


# --------------------------------------------------------------------------------------
# Einsum
# --------------------------------------------------------------------------------------


def _einsum_kernel(inputs, attrs, ctx):
    arrays, dt = _widen(*inputs)
    equation = attrs["equation"]
    try:
        y = np.einsum(equation.replace(" ", ""), *arrays, optimize=True)
    except (ValueError, IndexError) as e:  # ("" makes numpy index past its end)
        # say what is wrong in the equation's terms rather than numpy's
        _check_einsum(equation, [a.shape for a in arrays])
        raise ShapeError(f"Einsum: equation {equation!r} does not fit inputs of shapes "
                         f"{', '.join(str(list(a.shape)) for a in arrays)}: {e}") from e
    return (np.asarray(y).astype(dt, copy=False),)


def _check_einsum(equation, shapes):
    """Check an equation against the input shapes (None for unknown dims).

    Raises:
        OpAttributeError: the equation is malformed (see `_parse_einsum`).
        ShapeError: an operand's rank does not fit its term, or a label has two sizes.
    """
    terms, _ = _parse_einsum(equation, [len(s) for s in shapes])
    dims: dict = {}
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        letters = [s for s in term if s != "..."]
        if len(shape) < len(letters) or ("..." not in term and len(shape) != len(letters)):
            raise ShapeError(f"Einsum: term {''.join(term)!r} of equation {equation!r} "
                             f"names {len(letters)} dims{' and ...' if '...' in term else ''}"
                             f", but input {k} has rank {len(shape)} (shape {list(shape)})")
        at = term.index("...") if "..." in term else len(term)
        sized = list(zip(letters[:at], shape[:at])) + list(
            zip(letters[at:], shape[len(shape) - (len(letters) - at):]))
        for label, d in sized:
            old = dims.setdefault(label, d)
            if d is not None and old is not None and d != old and 1 not in (d, old):
                raise ShapeError(f"Einsum: label {label!r} has sizes {old} and {d} (in "
                                 f"equation {equation!r})")


def _parse_einsum(equation, ranks):
    """Split an equation into per-input term lists and the output term list.

    Each term is a list of single letters, with "..." kept as one item. The implicit
    output (no "->") is the ellipsis followed by letters used once, sorted.

    Raises:
        OpAttributeError: the equation is malformed: a character other than letters,
            ",", "->" and "..."; more than one "->" or one "..." a term; an output label
            repeated or missing from the inputs.
        ShapeError: its operand count is not the input count.
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    if "->" in rhs or "," in rhs:
        raise OpAttributeError(f"Einsum: equation {equation!r} is malformed: one \"->\" "
                               f"at most, and a single output term after it")
    terms = [_split_term(t) for t in lhs.split(",")]
    for term in terms + ([_split_term(rhs)] if arrow else []):
        bad = [s for s in term if s != "..." and not (s.isascii() and s.isalpha())]
        if bad or term.count("...") > 1:
            raise OpAttributeError(f"Einsum: equation {equation!r} is malformed: a term "
                                   f"holds letters and at most one \"...\", got "
                                   f"{''.join(term)!r}")
    if len(terms) != len(ranks):
        raise ShapeError(f"Einsum: equation {equation!r} has {len(terms)} operands, "
                         f"got {len(ranks)} inputs")
    if arrow:
        out = _split_term(rhs)
        # (an output "..." with none in the inputs stands for no dims, as in numpy and
        # onnxruntime: "ij,kj->..." sums to a scalar)
        used = {s for t in terms for s in t} | {"..."}
        missing = [s for s in out if s not in used]
        if missing or len(set(out)) != len(out):
            raise OpAttributeError(
                f"Einsum: equation {equation!r} is malformed: output labels "
                f"{''.join(out)!r} must each appear once, and in an input term")
    else:
        counts: dict[str, int] = {}
        for t in terms:
            for s in t:
                counts[s] = counts.get(s, 0) + 1
        has_ell = any("..." in t for t in terms)
        out = (["..."] if has_ell else []) + sorted(
            s for s, k in counts.items() if k == 1 and s != "...")
    return terms, out


def _split_term(term):
    out = []
    i = 0
    while i < len(term):
        if term.startswith("...", i):
            out.append("...")
            i += 3
        else:
            out.append(term[i])
            i += 1
    return out


def _einsum_infer(attrs, inputs):
    dtype = inputs[0].dtype
    shapes = [t.shape for t in inputs]
    if any(s is None for s in shapes):
        return [TensorInfo(dtype, None)]
    _check_einsum(attrs["equation"], shapes)
    terms, out = _parse_einsum(attrs["equation"], [len(s) for s in shapes])
    dims: dict[str, int | None] = {}
    ells = []
    for term, shape in zip(terms, shapes):
        n_ell = len(shape) - (len(term) - (1 if "..." in term else 0))
        k = 0
        for s in term:
            if s == "...":
                ells.append(tuple(shape[k:k + n_ell]))
                k += n_ell
                continue
            d = shape[k]
            k += 1
            old = dims.get(s)
            if old is None or old == 1:
                dims[s] = d if old is None or d is not None else old
            elif d is not None and d != 1 and d != old:
                raise ShapeError(f"Einsum: label {s!r} has sizes {old} and {d}")
    ell = broadcast_shape(*ells) if ells else ()
    shape = []
    for s in out:
        if s == "...":
            shape.extend(ell)
        else:
            shape.append(dims.get(s))
    return [TensorInfo(dtype, tuple(shape))]


Einsum = define(
    "Einsum", ("Inputs*",), ("Output",), _einsum_kernel, (("equation", "string"),),
    infer=_einsum_infer, since_version=12,
    doc="Einstein summation (np.einsum with contraction-order optimisation).")

Gemm = define(
    "Gemm", ("A", "B", "C?"), ("Y",), _gemm_kernel,
    (("alpha", "float", 1.0), ("beta", "float", 1.0), ("transA", "int", 0),
     ("transB", "int", 0)), infer=_gemm_infer, since_version=13,
    doc="alpha * A' @ B' + beta * C (C unidirectionally broadcast).")

MatMul = define(
    "MatMul", ("A", "B"), ("Y",), _matmul_kernel, infer=_matmul_infer, since_version=13,
    doc="numpy-style matmul with batch broadcasting.")

OPS = (Einsum, Gemm, MatMul)

KNOWN_FAILURES: dict[str, str] = {}

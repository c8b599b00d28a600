"""A random differential sweep of ops the other sweeps leave out: LRN, the global
pools, Range, Einsum (common uses and random equations), ArgMax/ArgMin at opsets
11-13, Softmax/LogSoftmax/Hardmax at opsets 1-12 (the input coerced to 2-D at `axis`,
default 1) and 13+, and Flatten at opsets 1-11.

Each example draws a VALID one-node model from a seeded numpy generator: the op's
attributes (LRN's size odd and even, alpha, beta, bias; GlobalLpPool's p; negative
axes, keepdims, select_last_index; an Einsum equation with implicit or explicit
output, ellipsis, repeated indices, batch matmuls, outer products and sums), its data
(float32 mostly, float16/float64 and ints where the op takes them, ties for the
arg/max ops, empty dims where valid) and Range's start/limit/delta (ints, fractional
and negative deltas, empty results), which are initializers in some draws and graph
inputs in the others. The model runs in the Session and in onnxruntime (CPU); the
outputs must agree in shape, dtype and value (integers exactly, floats within _TOL,
NaN at the same places). Where onnxruntime refuses an LRN, global pool or Hardmax
(float64; LRN of an even size or a rank other than 4; no images) the spec's formula
in float64 (_spec) stands in, and for other types it has no kernel for, ONNX's
reference evaluator; any other model onnxruntime refuses is skipped (that draw only),
and so is a result where onnxruntime leaves the spec and the reference evaluator or
_spec agrees with the Session (`OrtDiverges`, pinned in DEVIATIONS).

The draws avoid what the spec leaves open or onnxruntime cannot run: NaN in the
max-like ops (which NaN wins is unspecified; a few ArgMax/ArgMin draws have some, and
the reference evaluator settles them), empty Einsum dims (onnxruntime dies of
SIGFPE on some), empty spatial dims of a global pool with images in it (no mean or
max), opsets below 7 for float16 (onnxruntime's inserted casts fail there), empty dims
at opsets below 13 for Softmax/LogSoftmax/Hardmax (see FINDINGS), and Range's float
counts within 1e-3 of an integer (the spec's ceil of a rounded quotient). CumSum and
Flatten at opsets 13+ are in test_shape_index_sweep.py, Einsum and Softmax at 13+ also
in test_elementwise_sweep.py.

`ONEGRAPH_SWEEP_EXAMPLES` sets the draws per op (default: a CI-sized count,
deterministic). Each model runs a second time in the same Session on new feeds: the
fed data shuffled, Range's fed scalars drawn again. A quarter of the draws give the
graph inputs symbolic dims (a fifth of those no shape at all), and their second run
half the time data of other dims; a few make every input an initializer. FINDINGS are
the minimal reproductions of what the hunts (8 seeds x 3000 draws per op) found wrong
in the Session; INVALID checks that bad inputs raise named onegraph errors.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper  # noqa: E402

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402

from .ort_draws import (OrtDiverges, OrtRefused, assert_clean_sweep,  # noqa: E402
                        check_draws, declare_inputs, draw_model, ort_run,
                        as_initializers, assert_outputs_close, show_case)

# draws per op (the hunts behind this file ran 8 seeds x 3000 per op)
_PER_OP = int(os.environ.get("ONEGRAPH_SWEEP_EXAMPLES", "100"))
_IR = {1: 3, 2: 3, 6: 3, 7: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8,
       16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10, 22: 10}

F16, F32, F64 = np.float16, np.float32, np.float64
_DT = dict(f16=F16, f32=F32, f64=F64, i8=np.int8, u8=np.uint8, i16=np.int16,
           i32=np.int32, i64=np.int64)

# --------------------------------------------------------------------------------------
# Draw helpers: a case is a plain dict (a readable reproduction)
#   op, attrs, inputs: [(array or None, how)] with how "x" (data, fed), "c" (an
#   initializer), "f" (an operand fed at run time); n_out, opset
# --------------------------------------------------------------------------------------


def _pick(rng, values, p=None):
    """One of `values` (any objects), with probabilities `p`."""
    return values[int(rng.choice(len(values), p=p))]


def _dt(rng, kinds, p=None):
    """A numpy dtype among the names `kinds` (float32 first, the rest evenly, unless
    `p`)."""
    kinds = list(kinds)
    if p is None and "f32" in kinds and len(kinds) > 1:
        p = [0.6 if k == "f32" else 0.4 / (len(kinds) - 1) for k in kinds]
    return _DT[_pick(rng, kinds, p)]


def _data(rng, shape, dtype, ties=0.2, scale=1.0):
    """Random data of `dtype`: small ints for int types, normals * `scale` for floats
    (a share `ties` of the draws small ints: ties for the max-like ops)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return rng.integers(-5 if dtype.kind == "i" else 0, 6, size=shape).astype(dtype)
    if rng.random() < ties:
        return (rng.integers(-3, 4, size=shape) * 0.5).astype(dtype)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _with_specials(rng, x, share=0.15, nan=True):
    """`x` (float) with a share of its values made +-inf (and NaN unless not `nan`)."""
    m = rng.random(x.shape)
    y = np.where(m < share / 3, np.inf, np.where(m < 2 * share / 3, -np.inf, x))
    if nan:
        y = np.where(m > 1 - share / 3, np.nan, y)
    return y.astype(x.dtype)


def _case(op, inputs, attrs=None, n_out=1, opset=18):
    """A case dict (see above)."""
    return dict(op=op, attrs=attrs or {}, inputs=inputs, n_out=n_out, opset=opset)


def _how(rng, p_fed=0.4):
    """How an operand is given: an initializer ("c"), or fed at run time ("f")."""
    return "f" if rng.random() < p_fed else "c"


# --------------------------------------------------------------------------------------
# Per-op draws
# --------------------------------------------------------------------------------------


def _image(rng, lo=3, hi=5, empty=0.05, dmax=4):
    """An (N, C, spatial...) shape of rank lo..hi, a 0 batch or channel count with
    probability `empty`."""
    r = int(rng.integers(lo, hi + 1))
    s = [int(rng.integers(1, 4)), int(rng.integers(1, 6))] + \
        [int(rng.integers(1, dmax + 1)) for _ in range(r - 2)]
    if rng.random() < empty:
        s[int(rng.integers(0, 2))] = 0
    return s


def _draw_lrn(rng):
    """LRN of rank 3-5, size 1-1001 (odd and even), alpha, beta, bias drawn."""
    shape = _image(rng, 3, 5)
    shape[1] = int(rng.integers(1, 9)) if shape[1] else 0
    opset = _pick(rng, [1, 13, 18, 21])
    dt = _dt(rng, ("f32", "f16", "f64") if opset >= 13 else ("f32", "f64"))
    # (onnxruntime pads C + size - 1 channels: a size of 2**31 - 1 runs it out of memory)
    attrs = {"size": int(_pick(rng, [1, 2, 3, 4, 5, 6, 7, 9, 12, 31, 1001],
                               [.12, .1, .15, .1, .12, .1, .1, .07, .06, .04, .04]))}
    if rng.random() < 0.7:
        attrs["alpha"] = float(_pick(rng, [1e-4, 1e-3, 0.1, 0.5, 2.0]))
    if rng.random() < 0.7:
        attrs["beta"] = float(_pick(rng, [0.75, 0.5, 1.0, 2.0, 0.1]))
    if rng.random() < 0.6:
        attrs["bias"] = float(_pick(rng, [1.0, 2.0, 0.5, 0.1]))
    x = _data(rng, shape, dt, scale=float(_pick(rng, [1.0, 3.0, 0.1, 30.0])))
    if dt != F16 and rng.random() < 0.1:
        x = _with_specials(rng, x)
    return _case("LRN", [(x, "x")], attrs, opset=opset)


def _draw_global(rng):
    """A global pool of rank 3-5 (no images and empty pixels too; GlobalLpPool's p)."""
    op = _pick(rng, ["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"])
    shape = _image(rng, 3, 5, 0.1)
    if 0 in shape[:2] and rng.random() < 0.5:   # no images: empty spatial dims are valid
        shape[int(rng.integers(2, len(shape)))] = 0
    opset = _pick(rng, [2, 13, 18, 21, 22])
    dt = _dt(rng, ("f32", "f16", "f64"))
    if dt == F16 and opset < 7:
        opset = 13
    if rng.random() < 0.05 and 0 not in shape[:2]:   # long sums
        shape[2:] = [int(rng.integers(30, 70)) for _ in shape[2:4]] + shape[4:]
    x = _data(rng, shape, dt, ties=0.3 if op == "GlobalMaxPool" else 0.1,
              scale=float(_pick(rng, [1.0, 30.0], [0.8, 0.2])))
    if dt != F16 and rng.random() < 0.1:   # (no NaN in a max: unspecified)
        x = _with_specials(rng, x, nan=op != "GlobalMaxPool")
    attrs = {}
    if op == "GlobalLpPool" and rng.random() < 0.8:
        attrs["p"] = int(rng.integers(1, 4))
    return _case(op, [(x, "x")], attrs, opset=opset)


_FRACTIONS = [0.1, 0.25, 0.3, 0.5, 1 / 3, 0.7, 1.5, 2.5, 1e-2]


def _range_values(rng, dt):
    """(start, limit, delta) of Range for dtype `dt`: ints in [-12, 12], floats with
    fractional and negative deltas; empty results in a fifth of the draws. Float
    counts within 1e-3 of an integer are moved off it: the spec's ceil((limit - start)
    / delta) of a rounded quotient is then a coin toss between implementations."""
    if np.dtype(dt).kind in "iu":
        start = int(rng.integers(-12, 13))
        delta = int(_pick(rng, [1, 2, 3, 5, -1, -2, -3, 7]))
        n = int(rng.integers(0, 9))
        limit = start + n * delta - int(rng.integers(0, abs(delta)))
        if rng.random() < 0.2:   # the wrong side: empty
            limit = start - int(np.sign(delta)) * int(rng.integers(0, 5))
        lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        return [np.asarray(np.clip(v, lo, hi), dt) for v in (start, limit, delta)]
    start = float(np.round(rng.uniform(-5, 5), 2))
    delta = float(_pick(rng, _FRACTIONS + [1.0, 2.0])) * _pick(rng, [1, -1])
    n = float(rng.uniform(0, 12 if rng.random() < 0.9 else 3000))
    if rng.random() < 0.2:
        n = -float(rng.uniform(0, 3))
    q = n - np.floor(n)
    if q < 1e-3 or q > 1 - 1e-3:
        n = np.floor(n) + 0.5
    limit = start + n * delta
    vals = [np.asarray(v, dt) for v in (start, limit, delta)]
    # rounded to dt, the quotient may have moved next to an integer again
    n = (float(vals[1]) - float(vals[0])) / float(vals[2])
    if abs(n - np.round(n)) < 1e-3 and n > 0:
        vals[1] = np.asarray(float(vals[0]) + (np.round(n) + 0.5) * float(vals[2]), dt)
    return vals


def _draw_range(rng):
    """Range of an integer or float type, each operand an initializer or fed."""
    dt = _dt(rng, ("i64", "i32", "f32", "f64", "i16"), [0.3, 0.2, 0.25, 0.15, 0.1])
    hows = [_how(rng, 0.5) for _ in range(3)]
    return _case("Range", [(v, h) for v, h in zip(_range_values(rng, dt), hows)],
                 opset=_pick(rng, [11, 13, 18, 21]))


# Einsum: templates of the common uses (batch matmul, outer products, traces,
# diagonals, sums, contractions), the rest random equations.
_EINSUM_TEMPLATES = [
    "ij,jk->ik", "bij,bjk->bik", "i,j->ij", "ij,kl->ijkl", "ii->", "ii", "ii->i",
    "bii->bi", "ij->", "ij->j", "ij->ji", "ij", "ji", "i,i->", "i,i", "ij,ij->ij",
    "...ij,...jk->...ik", "...ii->...i", "i...->...", "...,...->...", "ij,jk,kl->il",
    "ij,jk,kl", "bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "ijk,ikl->jl", "a,b,c->abc",
    "iij->j", "ijj,j->i", "ij,j->i", "...j,j", "Ab,bC->AC", "ii,ii->i", "ab...,b->...a",
    ",ij->ij", "ij,", "->", "", "...", "ij,kj->...", "i->...i", "i j , j k -> k i",
    "Ab,bC", "ab,Ab",
]


def _einsum_equation(rng):
    """A random valid equation: 1-3 terms over a-e, a repeated index (a diagonal) now
    and then, an ellipsis in some, and an explicit output (a subset of the indices, in
    any order) in most."""
    n_ops = int(rng.integers(1, 4))
    use_ell = rng.random() < 0.3
    terms, seen = [], []
    for _ in range(n_ops):
        sub = [_pick(rng, list("abcde")) for _ in range(int(rng.integers(0, 4)))]
        if sub and rng.random() < 0.2:
            sub.append(_pick(rng, sub))
            sub = [str(c) for c in rng.permutation(sub)]
        seen += sub
        if use_ell and rng.random() < 0.8:
            pos = int(rng.integers(0, len(sub) + 1))
            sub = sub[:pos] + ["..."] + sub[pos:]
        terms.append("".join(sub))
    eq = ",".join(terms)
    if rng.random() < 0.7:
        out = "".join(c for c in rng.permutation(sorted(set(seen))) if rng.random() < 0.5)
        if "..." in eq:
            pos = int(rng.integers(0, len(out) + 1))
            out = out[:pos] + "..." + out[pos:]
        eq += "->" + out
    return eq


def _einsum_shapes(rng, eq):
    """Operand shapes for equation `eq`: one size 1-4 per index, one ellipsis shape
    (rank 0-2) each operand's ellipsis broadcasts from (some dims 1, some leading
    ones dropped)."""
    dims = {c: int(rng.integers(1, 5)) for c in sorted(set(eq)) if c.isalpha()}
    eq = eq.replace(" ", "")
    ell = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3)))]
    shapes = []
    for term in eq.split("->")[0].split(","):
        shape = []
        for part in term.split("..."):
            if shape or term.startswith("..."):
                k = int(rng.integers(0, len(ell) + 1)) if rng.random() < 0.3 else len(ell)
                shape += [d if rng.random() < 0.75 else 1 for d in ell[len(ell) - k:]]
            shape += [dims[c] for c in part]
        shapes.append(shape)
    return shapes


def _draw_einsum(rng):
    """Einsum of a template or random equation, 1-3 operands of one type."""
    eq = _pick(rng, _EINSUM_TEMPLATES) if rng.random() < 0.5 else _einsum_equation(rng)
    dt = _dt(rng, ("f32", "f64", "f16", "i32", "i64"))
    ins = [(_data(rng, s, dt), "x" if rng.random() < 0.8 else "c")
           for s in _einsum_shapes(rng, eq)]
    return _case("Einsum", ins, {"equation": eq}, opset=_pick(rng, [12, 13, 18, 21]))


def _draw_arg(rng):
    """ArgMax/ArgMin at opsets 11-13: axis, keepdims, select_last_index, ties."""
    r = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 5)) for _ in range(r)]
    axis = int(rng.integers(-r, r))
    if r > 1 and rng.random() < 0.05:   # an empty dim off the axis: an empty result
        shape[_pick(rng, [k for k in range(r) if k != axis % r])] = 0
    opset = _pick(rng, [11, 12, 13])
    dt = _dt(rng, ("f32", "f16", "f64", "i32", "i64", "i8", "u8"))
    x = _data(rng, shape, dt, ties=0.5)
    if np.dtype(dt).kind == "f" and rng.random() < 0.15:
        # (NaN in a twentieth: the spec leaves it open, see DEVIATIONS)
        x = _with_specials(rng, x, nan=rng.random() < 0.3)
    attrs = {}
    if rng.random() < 0.8 or 0 in shape:
        attrs["axis"] = axis
    if rng.random() < 0.6:
        attrs["keepdims"] = int(rng.integers(0, 2))
    if opset >= 12 and rng.random() < 0.6:
        attrs["select_last_index"] = int(rng.integers(0, 2))
    return _case(_pick(rng, ["ArgMax", "ArgMin"]), [(x, "x")], attrs, opset=opset)


def _draw_softmax(rng):
    """Softmax/LogSoftmax/Hardmax at opsets 1-18 (2-D coerced before 13), ranks 1-5."""
    op = _pick(rng, ["Softmax", "LogSoftmax", "Hardmax"])
    opset = _pick(rng, [1, 6, 7, 9, 11, 12, 13, 18], [.05, .05, .1, .15, .2, .25, .1, .1])
    r = int(rng.integers(1, 6))
    shape = [int(rng.integers(1, 5)) for _ in range(r)]
    if opset >= 13 and rng.random() < 0.05:   # (pre-13: see FINDINGS)
        shape[int(rng.integers(r))] = 0
    dt = _dt(rng, ("f32", "f16", "f64") if opset >= 7 else ("f32", "f64"))
    x = _data(rng, shape, dt, ties=0.4 if op == "Hardmax" else 0.1,
              scale=float(_pick(rng, [1.0, 10.0])))
    if op != "Hardmax" and dt != F16 and rng.random() < 0.1:
        x = _with_specials(rng, x, 0.1)
    attrs = {}
    if rng.random() < 0.7 or (opset < 13 and r < 2):
        attrs["axis"] = int(rng.integers(-r, r))
    return _case(op, [(x, "x")], attrs, opset=opset)


def _draw_flatten(rng):
    """Flatten at opsets 1/9/11, ranks 0-5, axis -r..r (0..r before 11)."""
    opset = _pick(rng, [1, 9, 11])
    r = int(rng.integers(1 if opset < 11 else 0, 6))
    shape = [int(rng.integers(1, 5)) for _ in range(r)]
    if r and rng.random() < 0.08:
        shape[int(rng.integers(r))] = 0
    dt = _dt(rng, ("f32", "f16", "f64") if opset < 9 else ("f32", "f16", "i64", "u8", "i8"))
    attrs = {}
    if rng.random() < 0.8 or r == 0:   # (the default axis 1 needs rank 1)
        attrs["axis"] = int(rng.integers(-r if opset >= 11 else 0, r + 1))
    return _case("Flatten", [(_data(rng, shape, dt), "x")], attrs, opset=opset)


DRAWS = {"LRN": _draw_lrn, "GlobalPool": _draw_global, "Range": _draw_range,
         "Einsum": _draw_einsum, "ArgMaxMin": _draw_arg, "Softmax": _draw_softmax,
         "Flatten": _draw_flatten}

# ops whose outputs sum many terms: their float tolerance scales with the output's size
_SUMMING = {"GlobalAveragePool", "GlobalLpPool", "Einsum", "Softmax", "LogSoftmax"}

# --------------------------------------------------------------------------------------
# Building, running and comparing
# --------------------------------------------------------------------------------------


def build(case):
    """The one-node ONNX model of `case`, its output names and its feeds; its graph
    inputs' dims symbolic if case["symbolic"], and their shapes (rank too) left out if
    that is "rankless"."""
    names, inputs, inits, feeds = declare_inputs(case["inputs"], case.get("symbolic"))
    if case.get("symbolic") == "rankless":
        for value in inputs:
            value.type.tensor_type.ClearField("shape")
    outs = [f"out{k}" for k in range(case["n_out"])]
    node = helper.make_node(case["op"], names, outs, **case["attrs"])
    return draw_model([node], inputs, inits, outs, case["opset"], _IR[case["opset"]]), \
        outs, feeds


# Float tolerances, relative (absolute for values below 1, or below the output's
# largest magnitude for _SUMMING ops): float16 a rounding or two of 2^-10; float32
# some tens of ulps (onnxruntime's vectorised exp and pow); float64 a few ulps of libm.
_TOL = {np.dtype(F16): 2.5e-3, np.dtype(F32): 1e-5, np.dtype(F64): 1e-11}


def _compare(got, ref, where, summing=False):
    """Assert the Session's outputs `got` match `ref` (shape, dtype, values)."""
    assert_outputs_close(got, ref, where, _TOL, summing)


def _reference_run(model, outs, feeds):
    """ONNX's reference evaluator's outputs (OrtRefused when it fails too)."""
    from onnx.reference import ReferenceEvaluator

    try:
        with np.errstate(all="ignore"):
            return ReferenceEvaluator(model).run(outs, feeds)
    except Exception as e:  # noqa: BLE001 (no reference either: skip the draw)
        raise OrtRefused(f"reference: {e}"[:300]) from e


def _spec_agrees(case, got, summing):
    """Whether the Session's `got` is the spec's result, where _spec computes it."""
    spec = _spec(case)
    try:
        return spec is not None and _compare(got, spec, "spec", summing) is None
    except AssertionError:
        return False


def _reference_agrees(model, outs, feeds, got, summing):
    """Whether ONNX's reference evaluator gives the Session's `got` for `feeds` (never
    for a Softmax, LogSoftmax or Hardmax before opset 13: the evaluator applies them per
    axis, not to the input coerced to 2-D)."""
    node, = model.graph.node
    if node.op_type in ("Softmax", "LogSoftmax", "Hardmax") and \
            model.opset_import[0].version < 13:
        return False
    try:
        _compare(got, _reference_run(model, outs, feeds), "reference", summing)
    except (AssertionError, OrtRefused):
        return False
    return True


def _attr(case, name, default):
    """A float attribute of `case` as ONNX stores it (float32), in float64."""
    return np.float64(np.float32(case["attrs"].get(name, default)))


def _spec(case):
    """The spec's result of an LRN, global pool, Softmax, LogSoftmax or Hardmax `case`,
    from its formula in float64 (rounded to the data's type): the stand-in where
    onnxruntime has no kernel (float64; LRN of an even size or a rank other than 4;
    empty images) and ONNX's reference evaluator is wrong too (its LRN takes rank 4
    only, its GlobalMaxPool of rank 5 adds a dim, it has no GlobalLpPool, its Hardmax
    is per axis at every opset). None for other ops."""
    op, attrs = case["op"], case["attrs"]
    x = np.asarray(case["inputs"][0][0])
    dt, f = x.dtype, x.astype(np.float64)
    if op == "LRN":
        size = attrs["size"]
        back = (size - 1) // 2
        sq = np.moveaxis(f * f, 1, 0)
        total = np.zeros_like(sq)
        c = sq.shape[0]
        # channel i sums channels i + k, k in -back .. size - 1 - back (an offset of C
        # or more either way adds nothing)
        for k in range(max(-back, 1 - c), min(size - back, c)):
            lo, hi = max(k, 0), c + min(k, 0)
            total[lo - k:hi - k] += sq[lo:hi]
        scale = _attr(case, "bias", 1.0) + _attr(case, "alpha", 1e-4) / size * total
        with np.errstate(all="ignore"):
            y = f / np.moveaxis(scale, 0, 1) ** _attr(case, "beta", 0.75)
    elif op.startswith("Global"):
        axes = tuple(range(2, x.ndim))
        shape = x.shape[:2] + (1,) * (x.ndim - 2)
        if not x.size:
            return [np.zeros(shape, dt)]
        p = attrs.get("p", 2)
        with np.errstate(all="ignore"):
            y = {"GlobalAveragePool": lambda: f.mean(axis=axes, keepdims=True),
                 "GlobalMaxPool": lambda: f.max(axis=axes, keepdims=True),
                 "GlobalLpPool": lambda: (np.abs(f) ** p).sum(axis=axes, keepdims=True)
                 ** (1.0 / p)}[op]()
    elif op in ("Hardmax", "Softmax", "LogSoftmax"):
        axis = attrs.get("axis", -1 if case["opset"] >= 13 else 1) % x.ndim
        if case["opset"] < 13:   # coerced to 2-D at axis
            f = f.reshape(int(np.prod(x.shape[:axis])), -1)
            axis = 1
        if not f.size:
            return [x.copy()]
        if op == "Hardmax":
            y = np.zeros_like(f)
            np.put_along_axis(y, np.expand_dims(np.argmax(f, axis=axis), axis), 1, axis)
        else:   # x - max - log(sum(exp(x - max))), exp of that for Softmax
            with np.errstate(all="ignore"):
                d = f - f.max(axis=axis, keepdims=True)
                y = d - np.log(np.exp(d).sum(axis=axis, keepdims=True))
                y = np.exp(y) if op == "Softmax" else y
        y = y.reshape(x.shape)
    else:
        return None
    return [y.astype(dt)]


def _expected(case):
    """onnxruntime's outputs for `case`; where it refuses the model or has no kernel
    for its types, the spec's (see _spec) or ONNX's reference evaluator's. With them,
    which stood in: "", "spec" or "reference"."""
    model, outs, feeds = build(case)
    try:
        return ort_run(model, outs, feeds), ""
    except OrtRefused as e:
        spec = _spec(case)
        if spec is not None:
            return spec, "spec"
        if "NOT_IMPLEMENTED" not in str(e):
            raise
        return _reference_run(model, outs, feeds), "reference"


def _refed(case, rng):
    """`case` with new feeds for the same model: each fed data input shuffled, or where
    the model's dims are symbolic, half the time new data of other (nonzero) dims
    (Einsum's stay: its labels tie them); and Range's fed scalars drawn again (of the
    same type)."""
    if case.get("symbolic") and case["op"] not in ("Einsum", "Range") and \
            rng.random() < 0.5:
        return dict(case, inputs=[
            (_data(rng, [d and int(rng.integers(1, 6)) for d in np.shape(v)],
                   np.asarray(v).dtype), h) if h == "x" else (v, h)
            for v, h in case["inputs"]])
    ins = [(rng.permutation(np.asarray(v).reshape(-1)).reshape(np.shape(v)), h)
           if h == "x" else (v, h) for v, h in case["inputs"]]
    if case["op"] == "Range":
        new = _range_values(rng, np.asarray(ins[0][0]).dtype)
        ins = [(n if h == "f" else v, h) for (v, h), n in zip(ins, new)]
    return dict(case, inputs=ins)


def check_case(case, seed=0, settle=True):
    """Run `case` in the Session and onnxruntime; raise AssertionError on a mismatch,
    OrtRefused when onnxruntime refuses the case (or, with `settle`, leaves the spec
    where the reference evaluator agrees with the Session: OrtDiverges). The Session
    then runs again on new feeds (its folded and cached state kept)."""
    model, outs, feeds = build(case)
    summing = case["op"] in _SUMMING
    ref, stand_in = _expected(case)
    session = og.Session(from_onnx(model))
    rng = np.random.default_rng(seed)
    for run in range(2):
        if run:
            if not feeds:
                return
            case = _refed(case, rng)
            feeds = build(case)[2]
            try:
                ref, stand_in = _expected(case)
            except OrtRefused:
                return
        got = session.run(outs, feeds)
        try:
            _compare(got, ref, f"run {run} " + show_case(case)
                     + (f" (vs {stand_in})" if stand_in else ""), summing)
        except AssertionError as e:
            if settle and not stand_in and (
                    _reference_agrees(model, outs, feeds, got, summing)
                    or _spec_agrees(case, got, summing)):
                raise OrtDiverges(str(e)[:300]) from e
            raise


def sweep(kind, count, seed=0):
    """Draw and check `count` examples of `kind`; returns (checked, refused, failures
    as (case, message))."""
    rng = np.random.default_rng([sorted(DRAWS).index(kind), seed])

    def cases():
        for _ in range(count):
            case = DRAWS[kind](rng)
            if rng.random() < 0.08:   # every input an initializer: the Session may fold it
                case["inputs"] = as_initializers(case["inputs"])
            elif rng.random() < 0.25:   # dims unknown until run time, a fifth the rank too
                case["symbolic"] = True if rng.random() < 0.8 else "rankless"
            yield case
    return check_draws(cases(), check_case, show_case)


@pytest.mark.parametrize("kind", sorted(DRAWS))
def test_random_ops_match_onnxruntime(kind):
    assert_clean_sweep(*sweep(kind, _PER_OP))


# --------------------------------------------------------------------------------------
# Findings: minimal reproductions of what the sweeps found wrong in the Session (each
# failed before its fix); the deviations of onnxruntime's they met (the Session must
# give the spec's result, as ONNX's reference evaluator or _spec computes it); and bad
# inputs, which must raise named onegraph errors.
# --------------------------------------------------------------------------------------

FINDINGS = [
    # GlobalMaxPool of no images (N * C = 0) with empty spatial dims: the (N, C, 1, ...)
    # result is empty, as onnxruntime's; the Session's numpy max over the empty pixel
    # axis failed (ValueError: zero-size array ... has no identity)
    pytest.param(_case("GlobalMaxPool", [(np.ones((0, 2, 0), F32), "x")], opset=13),
                 id="global-max-no-images-no-pixels"),
    # an explicit output "..." where no input has an ellipsis: it stands for no dims
    # (onnxruntime and ONNX's reference evaluator sum to a scalar); the Session refused
    # the equation as malformed at import
    pytest.param(_case("Einsum", [(np.arange(6, dtype=F32).reshape(2, 3), "x"),
                                  (np.ones((4, 3), F32), "x")], {"equation": "ij,kj->..."},
                       opset=12), id="einsum-output-ellipsis-without-input-one"),
    # a pre-13 Softmax/LogSoftmax/Hardmax of an input with an empty dim: the importer's
    # upgrade (onnx's Softmax adapters, onegraph's Hardmax rewrite) spells the op as
    # Flatten -> op -> Reshape(Shape(x)), and Reshape reads the 0 in the shape as "copy
    # the dim" (allowzero 0): "cannot reshape [0, 12] to [1, 0, 4, 3]". The fix belongs
    # in convert/ (allowzero=1 on that Reshape), outside the kernels
    pytest.param(_case("Softmax", [(np.ones((1, 0, 4, 3), F32), "x")], {"axis": 2},
                       opset=11), id="softmax-11-empty-dim",
                 marks=pytest.mark.xfail(strict=True, reason="convert/: Reshape allowzero")),
    pytest.param(_case("Hardmax", [(np.ones((1, 0, 4, 3), F32), "x")], {"axis": 2},
                       opset=9), id="hardmax-9-empty-dim",
                 marks=pytest.mark.xfail(strict=True, reason="convert/: Reshape allowzero")),
]


@pytest.mark.parametrize("case", FINDINGS)
def test_findings_match_onnxruntime(case):
    check_case(case, settle=False)


DEVIATIONS = [
    # ArgMax/ArgMin of NaN, which the spec leaves open: onnxruntime's answer depends on
    # where the NaN is (it wins at index 0, is passed over later); the Session, as
    # ONNX's reference evaluator (numpy), takes the first NaN for both
    pytest.param(_case("ArgMax", [(np.asarray([[1, np.nan, 3]], F32), "x")], {"axis": 1},
                       opset=13), id="argmax-nan"),
    pytest.param(_case("ArgMin", [(np.asarray([[1, 3, np.nan]], F64), "x")],
                       {"axis": 1, "select_last_index": 1}, opset=13), id="argmin-nan-last"),
    # a float32 Range of many elements: onnxruntime adds delta up (start += delta, its
    # rounding errors pile up: 0.009 off by the end here), the spec's
    # output[i] = start + i * delta rounds each element once
    pytest.param(_case("Range", [(np.asarray(v, F32), "c") for v in (0.1, 300.0, 0.1)],
                       opset=11), id="range-float32-accumulates"),
    # LRN with an infinity: onnxruntime slides its window's sum of squares (adding the
    # channel coming in, subtracting the one going out), so inf - inf makes NaN of the
    # channels after it too; the spec sums each window, and channels 2 and 3 here
    # (windows 1..3 and 2..3) hold no infinity
    pytest.param(_case("LRN", [(np.asarray([np.inf, 1, 2, 3], F32).reshape(1, 4, 1, 1),
                                "x")], {"size": 3}, opset=13), id="lrn-inf-sliding-sum"),
    # GlobalMaxPool of an image of -inf only: onnxruntime starts its max at the lowest
    # finite float and gives -3.4e38, the spec's max is -inf
    pytest.param(_case("GlobalMaxPool", [(np.asarray([[[-np.inf, -np.inf], [-1, 2]]], F32),
                                          "x")], opset=13), id="global-max-all-minus-inf"),
    # float64 LogSoftmax of a row holding +inf (also at opset 13+, test_elementwise_sweep):
    # the spec's x - max - log(sum(exp(x - max))) is NaN throughout (inf - inf),
    # onnxruntime gives -inf for the finite entries
    pytest.param(_case("LogSoftmax", [(np.asarray([[0.5, np.inf], [1.0, 2.0]], F64), "x")],
                       opset=11), id="logsoftmax-11-inf"),
]


@pytest.mark.parametrize("case", DEVIATIONS)
def test_onnxruntime_deviations_are_recognized(case):
    with pytest.raises(OrtDiverges):
        check_case(case)


# Invalid models and inputs (every dim symbolic, or no shape declared at all: known
# only at run time) must raise a named onegraph error (at import or run time), never a
# numpy one
_A = np.ones((2, 3), F32)
_S = (np.asarray(1, np.int64), "x")
INVALID = [
    pytest.param(_case("Range", [_S, (np.asarray(5, np.int64), "x"),
                                 (np.asarray(0, np.int64), "x")]), id="range-delta-0"),
    pytest.param(_case("Range", [(np.asarray(0.0, F32), "x"), (np.asarray(1.0, F32), "x"),
                                 (np.asarray(0.0, F32), "x")]), id="range-float-delta-0"),
    pytest.param(_case("Range", [(np.arange(2), "x"), _S, _S]), id="range-start-not-scalar"),
    pytest.param(_case("LRN", [(np.ones(3, F32), "x")], {"size": 3}), id="lrn-rank-1"),
    pytest.param(_case("LRN", [(np.ones((1, 3, 2), F32), "x")], {"size": 0}), id="lrn-size-0"),
    pytest.param(_case("GlobalAveragePool", [(_A, "x")]), id="global-average-rank-2"),
    pytest.param(_case("GlobalMaxPool", [(np.ones((1, 2, 0), F32), "x")]),
                 id="global-max-empty-image"),
    pytest.param(_case("GlobalAveragePool", [(np.ones((1, 2, 3, 0), F32), "x")]),
                 id="global-average-empty-image"),
    pytest.param(_case("GlobalLpPool", [(np.ones((1, 2, 3), F32), "x")], {"p": 0}),
                 id="global-lp-p-0"),
    pytest.param(_case("ArgMax", [(_A, "x")], {"axis": 2}, opset=13), id="argmax-axis"),
    pytest.param(_case("ArgMin", [(np.ones((2, 0), F32), "x")], {"axis": 1}, opset=13),
                 id="argmin-empty-axis"),
    pytest.param(_case("Flatten", [(_A, "x")], {"axis": 3}, opset=11), id="flatten-axis"),
    pytest.param(_case("Softmax", [(_A, "x")], {"axis": 2}, opset=11), id="softmax-11-axis"),
    pytest.param(_case("Hardmax", [(np.ones(3, F32), "x")], opset=9),
                 id="hardmax-9-default-axis-rank-1"),
    pytest.param(_case("Einsum", [(_A, "x")], {"equation": "ijk->i"}, opset=12),
                 id="einsum-rank"),
]


@pytest.mark.parametrize("symbolic", [True, "rankless"])
@pytest.mark.parametrize("case", INVALID)
def test_invalid_inputs_raise_named_errors(case, symbolic):
    with pytest.raises(og.errors.OneGraphError):
        model, outs, feeds = build(dict(case, symbolic=symbolic))
        og.Session(from_onnx(model)).run(outs, feeds)

"""A random differential sweep of the shape, indexing, reduction and Resize ops.

Each example draws a VALID one-node model from a seeded numpy generator: the op's
attributes (negative axes, omitted optional inputs, batch_dims, reductions, modes),
its data (float32 mostly, int64/int32/float16/bool where the op takes them, empty
tensors and rank 0 where valid) and its shape/index operands, which are initializers
in most draws (the Session folds or caches them) and graph inputs in the others
(computed at run time). The model runs in the Session and in onnxruntime (CPU); the
outputs must agree in shape, dtype and value. Models onnxruntime refuses are skipped
(that draw only), as are results where onnxruntime leaves the spec and ONNX's
reference evaluator agrees with the Session (`OrtDiverges`); the draws avoid the
cases the spec leaves undefined (duplicate indices of a plain scatter, NaN or
out-of-range floats cast to ints). `ONEGRAPH_SWEEP_EXAMPLES` sets the draws per op
(default: a CI-sized count, deterministic). Each model also runs a second time in the
same Session on its fed values shuffled (the folded and cached state kept); a quarter
of the draws give the graph inputs symbolic dims, a few make every input an
initializer, and some sprinkle NaN and infinities where the spec defines the result.
Where onnxruntime has no kernel for a type, its float32 run (integer nearest Resize)
or ONNX's reference evaluator stands in. The pinned cases at the end are the
deviations of onnxruntime's that the sweeps met (a sweep of 3000+ draws per op found
no mismatch or crash of the Session's own).
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

# draws per op (the hunts behind this file ran 3000+ per op)
_PER_OP = int(os.environ.get("ONEGRAPH_SWEEP_EXAMPLES", "50"))
_IR = {18: 8, 19: 9, 20: 9, 21: 10}
I64_MAX = np.iinfo(np.int64).max
I64_MIN = np.iinfo(np.int64).min

# --------------------------------------------------------------------------------------
# Draw helpers: a case is a plain dict (a readable reproduction)
#   op, attrs, inputs: [(array or None, how)] with how "x" (data, fed), "c" (an
#   initializer), "f" (an operand fed at run time), None (an omitted optional input);
#   n_out, opset
# --------------------------------------------------------------------------------------


def _pick(rng, values, p=None):
    """One of `values` (any objects), with probabilities `p`."""
    return values[int(rng.choice(len(values), p=p))]


def _shape(rng, lo=0, hi=4, dmax=5, empty=0.08):
    """A shape of rank lo..hi with dims 1..dmax (a 0 dim with probability `empty`)."""
    rank = int(rng.integers(lo, hi + 1))
    s = [int(rng.integers(1, dmax + 1)) for _ in range(rank)]
    if s and rng.random() < empty:
        s[int(rng.integers(len(s)))] = 0
    return s


def _data(rng, shape, dtype=np.float32):
    """Random data of `dtype`: small ints (ties) for int types, normals for floats."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-5 if dtype.kind == "i" else 0, 6, size=shape).astype(dtype)
    if rng.random() < 0.2:   # ties
        return rng.integers(-3, 4, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _dt(rng, kinds=("f32", "f16", "i64", "i32", "bool", "f64", "u8", "i8"), p=None):
    """A dtype among `kinds` (float32 first, then the rest evenly, unless `p`)."""
    names = dict(f32=np.float32, f16=np.float16, i64=np.int64, i32=np.int32,
                 bool=np.bool_, f64=np.float64, u8=np.uint8, i8=np.int8)
    if p is None:
        p = [0.6] + [0.4 / (len(kinds) - 1)] * (len(kinds) - 1) if len(kinds) > 1 else [1]
    return names[_pick(rng, list(kinds), p)]


def _how(rng, p_fed=0.3):
    """How a shape/index operand is given: an initializer, or fed at run time."""
    return "f" if rng.random() < p_fed else "c"


def _i64(values):
    """`values` as a 1-D int64 array."""
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _case(op, inputs, attrs=None, n_out=1, opset=18):
    """A case dict (see above)."""
    return dict(op=op, attrs=attrs or {}, inputs=inputs, n_out=n_out, opset=opset)


def _opset(rng, lo=18):
    return int(rng.integers(lo, 22))


# --------------------------------------------------------------------------------------
# Per-op draws
# --------------------------------------------------------------------------------------


def _draw_reshape(rng):
    shape = _shape(rng, 0, 4, 4, 0.1)
    n = int(np.prod(shape))
    for _ in range(100):
        target = _shape(rng, 0, 4, 6, 0.0 if n else 0.5)
        if int(np.prod(target)) == n:
            break
    else:
        target = [n]
    allowzero = int(rng.random() < 0.25)
    target = list(target)
    if not allowzero:
        for i in range(min(len(shape), len(target))):
            if target[i] == shape[i] and rng.random() < 0.3:
                target[i] = 0
    free = [i for i, t in enumerate(target) if t != 0]
    if free and n and rng.random() < 0.4:
        target[_pick(rng, free)] = -1
    attrs = {"allowzero": allowzero} if allowzero or rng.random() < 0.3 else {}
    dt = _dt(rng)
    return _case("Reshape", [(_data(rng, shape, dt), "x"), (_i64(target), _how(rng))],
                 attrs, opset=_opset(rng))


def _draw_flatten(rng):
    shape = _shape(rng, 0 if rng.random() < 0.05 else 1, 4)
    r = len(shape)
    attrs = {"axis": int(rng.integers(-r, r + 1))} if rng.random() < 0.8 else {}
    if r == 0:
        attrs = {}
    return _case("Flatten", [(_data(rng, shape, _dt(rng)), "x")], attrs, opset=_opset(rng))


def _draw_transpose(rng):
    shape = _shape(rng, 0, 5, 4)
    attrs = {}
    if shape and rng.random() < 0.85:
        attrs["perm"] = [int(p) for p in rng.permutation(len(shape))]
    return _case("Transpose", [(_data(rng, shape, _dt(rng)), "x")], attrs, opset=_opset(rng))


def _draw_squeeze(rng):
    shape = _shape(rng, 0, 5, 3)
    shape = [1 if rng.random() < 0.4 else d for d in shape]
    ones = [i for i, d in enumerate(shape) if d == 1]
    r = len(shape)
    ins = [(_data(rng, shape, _dt(rng)), "x")]
    if ones and rng.random() < 0.8:
        k = int(rng.integers(1, len(ones) + 1))
        axes = [int(a) - (r if rng.random() < 0.5 else 0)
                for a in rng.choice(ones, k, replace=False)]
        ins.append((_i64(axes), _how(rng)))
    return _case("Squeeze", ins, opset=_opset(rng))


def _draw_unsqueeze(rng):
    shape = _shape(rng, 0, 4, 3)
    k = int(rng.integers(1, 4))
    out_r = len(shape) + k
    axes = [int(a) - (out_r if rng.random() < 0.5 else 0)
            for a in rng.choice(out_r, k, replace=False)]
    return _case("Unsqueeze", [(_data(rng, shape, _dt(rng)), "x"), (_i64(axes), _how(rng))],
                 opset=_opset(rng))


def _draw_concat(rng):
    shape = _shape(rng, 1, 4, 4, 0.05)
    r = len(shape)
    axis = int(rng.integers(-r, r))
    dt = _dt(rng)
    ins = []
    for _ in range(int(rng.integers(1, 5))):
        s = list(shape)
        s[axis] = int(rng.integers(0, 4)) if rng.random() < 0.2 else int(rng.integers(1, 4))
        ins.append((_data(rng, s, dt), "x"))
    return _case("Concat", ins, {"axis": axis}, opset=_opset(rng))


def _draw_split(rng):
    shape = _shape(rng, 1, 4, 7, 0.03)
    r = len(shape)
    axis = int(rng.integers(-r, r))
    n = shape[axis]
    dt = _dt(rng)
    ins = [(_data(rng, shape, dt), "x")]
    attrs = {"axis": axis} if axis or rng.random() < 0.5 else {}
    opset = _opset(rng)
    if rng.random() < 0.5 and n > 0:
        k = int(rng.integers(1, n + 1))
        attrs["num_outputs"] = k
        # uneven: ceil(n / k) per output, the last smaller; a k that leaves an output
        # empty is invalid
        c = -(-n // k)
        if (k - 1) * c >= n:
            attrs["num_outputs"] = k = -(-n // c)
        return _case("Split", ins, attrs, n_out=k, opset=opset)
    k = int(rng.integers(1, 5))
    cuts = np.sort(rng.integers(0, n + 1, size=k - 1))
    split = np.diff(np.concatenate([[0], cuts, [n]]))
    ins.append((_i64(split), _how(rng)))
    return _case("Split", ins, attrs, n_out=k, opset=opset)


def _slice_bound(rng, n):
    return int(_pick(rng, [int(rng.integers(-n - 3, n + 4)), I64_MAX, I64_MIN,
                           -I64_MAX, n, -n - 1, 0, -1], [0.6, 0.07, 0.07, 0.03, 0.06,
                                                         0.05, 0.06, 0.06]))


def _draw_slice(rng):
    shape = _shape(rng, 1, 4, 6, 0.05)
    r = len(shape)
    k = int(rng.integers(1, r + 1))
    axes = [int(a) for a in rng.choice(r, k, replace=False)]
    starts = [_slice_bound(rng, shape[a]) for a in axes]
    ends = [_slice_bound(rng, shape[a]) for a in axes]
    steps = [int(_pick(rng, [1, -1, 2, -2, 3, -3, 7, I64_MAX, -I64_MAX],
                       [0.35, 0.25, 0.1, 0.1, 0.05, 0.05, 0.04, 0.03, 0.03])) for _ in axes]
    # onnxruntime reads an end of INT64_MAX with a negative step as numpy's None (to
    # the dim's start); the spec clamps it to n - 1 (an empty slice from below n - 1)
    ends = [n_1 if e == I64_MAX and st < 0 else e
            for e, st, n_1 in zip(ends, steps, [shape[a] - 1 for a in axes])]
    neg = [a - r if rng.random() < 0.4 else a for a in axes]
    how = _how(rng)
    idt = np.int64
    if rng.random() < 0.2:   # int32 operands: the int64 extremes become int32's
        idt = np.int32
        i32 = np.iinfo(np.int32)
        clip = [int(np.clip(v, i32.min, i32.max)) for v in starts + ends + steps]
        starts, ends, steps = clip[:k], clip[k:2 * k], clip[2 * k:]

    def _i64(values):   # noqa: F811 (the operands' type, int64 or int32)
        return np.asarray(values, dtype=idt).reshape(-1)

    ins = [(_data(rng, shape, _dt(rng)), "x"), (_i64(starts), how), (_i64(ends), how)]
    omit_axes = k == r and axes == list(range(r)) and rng.random() < 0.5
    omit_steps = all(s == 1 for s in steps) and rng.random() < 0.5
    if omit_axes and omit_steps:
        pass
    elif omit_axes:
        ins += [(None, None), (_i64(steps), how)]
    else:
        ins.append((_i64(neg), how))
        if not omit_steps:
            ins.append((_i64(steps), how))
    return _case("Slice", ins, opset=_opset(rng))


def _indices(rng, n, shape, dtype=np.int64):
    """Indices in [-n, n) of `shape` (any of them negative)."""
    if n == 0:
        return np.zeros(shape, dtype)
    return rng.integers(-n, n, size=shape).astype(dtype)


def _draw_gather(rng):
    shape = _shape(rng, 1, 4, 5, 0.05)
    r = len(shape)
    axis = int(rng.integers(-r, r))
    ishape = _shape(rng, 0, 2, 3, 0.05 if shape[axis] else 1.0)
    if shape[axis] == 0 and 0 not in ishape:
        ishape = [0]
    idx = _indices(rng, shape[axis], ishape, _dt(rng, ("i64", "i32"), [0.7, 0.3]))
    attrs = {"axis": axis} if axis or rng.random() < 0.5 else {}
    return _case("Gather", [(_data(rng, shape, _dt(rng)), "x"), (idx, _how(rng))], attrs,
                 opset=_opset(rng))


def _draw_gather_elements(rng):
    shape = _shape(rng, 1, 4, 5, 0.03)
    r = len(shape)
    axis = int(rng.integers(-r, r))
    ishape = [int(rng.integers(0 if d == 0 else 1, d + 1)) for d in shape]
    ishape[axis] = int(rng.integers(1, 5)) if shape[axis] else 0
    idx = _indices(rng, shape[axis], ishape, _dt(rng, ("i64", "i32"), [0.7, 0.3]))
    return _case("GatherElements", [(_data(rng, shape, _dt(rng)), "x"), (idx, _how(rng))],
                 {"axis": axis}, opset=_opset(rng))


def _draw_gather_nd(rng):
    shape = _shape(rng, 1, 4, 4, 0.0)
    r = len(shape)
    b = int(rng.integers(0, r)) if rng.random() < 0.4 else 0
    last = int(rng.integers(1, r - b + 1))
    mid = _shape(rng, 0, 2, 3, 0.05)
    ishape = shape[:b] + mid + [last]
    idx = np.zeros(ishape, np.int64)
    for j in range(last):
        n = shape[b + j]
        idx[..., j] = rng.integers(-n, n, size=ishape[:-1])
    attrs = {"batch_dims": b} if b or rng.random() < 0.3 else {}
    return _case("GatherND", [(_data(rng, shape, _dt(rng)), "x"), (idx, _how(rng))], attrs,
                 opset=_opset(rng))


def _draw_scatter_elements(rng):
    shape = _shape(rng, 1, 4, 5, 0.0)
    r = len(shape)
    axis = int(rng.integers(-r, r))
    red = _pick(rng, ["none", "add", "mul", "max", "min"])
    ishape = [int(rng.integers(1, d + 1)) for d in shape]
    n = shape[axis]
    if red == "none":   # unique targets: a permutation's prefix along axis
        ishape[axis] = int(rng.integers(1, n + 1))
        perm = np.argsort(rng.random(shape), axis=axis)
        idx = np.take(perm, np.arange(ishape[axis]), axis=axis)
        idx = idx[tuple(slice(0, d) for d in ishape)]
        idx = np.where(rng.random(idx.shape) < 0.4, idx - n, idx).astype(np.int64)
    else:
        ishape[axis] = int(rng.integers(1, 2 * n + 1))
        idx = _indices(rng, n, ishape)
    dt = _dt(rng, ("f32", "i64", "i32", "f16"))
    attrs = {"axis": axis, "reduction": red} if red != "none" or rng.random() < 0.5 else {
        "axis": axis}
    return _case("ScatterElements", [(_data(rng, shape, dt), "x"), (idx, _how(rng)),
                                     (_data(rng, ishape, dt), "x")], attrs, opset=_opset(rng))


def _draw_scatter_nd(rng):
    shape = _shape(rng, 1, 4, 4, 0.0)
    r = len(shape)
    last = int(rng.integers(1, r + 1))
    red = _pick(rng, ["none", "add", "mul", "max", "min"])
    mid = _shape(rng, 0, 2, 3, 0.0)
    if red == "none":
        slots = int(np.prod(shape[:last]))
        m = int(rng.integers(1, slots + 1))
        mid = [m]
        flat = rng.choice(slots, m, replace=False)
        idx = np.stack(np.unravel_index(flat, shape[:last]), axis=-1).astype(np.int64)
    else:
        idx = np.zeros(mid + [last], np.int64)
        for j in range(last):
            idx[..., j] = rng.integers(0, shape[j], size=mid)
    sub = np.asarray(shape[:last])
    idx = np.where(rng.random(idx.shape) < 0.3, idx - sub, idx).astype(np.int64)
    dt = _dt(rng, ("f32", "i64", "i32", "f16"))
    attrs = {"reduction": red} if red != "none" or rng.random() < 0.5 else {}
    upd = _data(rng, mid + shape[last:], dt)
    return _case("ScatterND", [(_data(rng, shape, dt), "x"), (idx, _how(rng)), (upd, "x")],
                 attrs, opset=_opset(rng))


def _draw_expand(rng):
    out = _shape(rng, 0, 4, 4, 0.05)
    r = len(out)
    ir = int(rng.integers(0, r + 1))
    inp = [d if rng.random() < 0.5 else 1 for d in out[r - ir:]]
    target = [d if rng.random() < 0.6 or d == 0 else 1 for d in out]
    # the shape may have a lower rank than the data too
    sr = int(rng.integers(0, r + 1)) if rng.random() < 0.2 else r
    target = target[r - sr:]
    if sr < ir:
        inp = inp[ir - sr:] if rng.random() < 0.5 else inp
    return _case("Expand", [(_data(rng, inp, _dt(rng)), "x"), (_i64(target), _how(rng))],
                 opset=_opset(rng))


def _draw_tile(rng):
    shape = _shape(rng, 1, 4, 4, 0.05)
    reps = [int(_pick(rng, [0, 1, 2, 3], [0.05, 0.45, 0.35, 0.15])) for _ in shape]
    return _case("Tile", [(_data(rng, shape, _dt(rng)), "x"), (_i64(reps), _how(rng))],
                 opset=_opset(rng))


def _draw_pad(rng):
    mode = _pick(rng, ["constant", "reflect", "edge", "wrap"], [0.4, 0.2, 0.2, 0.2])
    shape = _shape(rng, 1, 4, 5, 0.1 if mode == "constant" else 0.0)
    r = len(shape)
    use_axes = rng.random() < 0.35
    axes = sorted(int(a) for a in rng.choice(r, int(rng.integers(1, r + 1)), replace=False)) \
        if use_axes else list(range(r))
    begin, end = [], []
    for a in axes:
        n = shape[a]
        if mode == "reflect":
            hi = n - 1
        elif mode == "wrap":
            hi = 2 * n + 1
        else:
            hi = 3
        lo = -(n // 2) if mode in ("constant", "edge") and rng.random() < 0.3 else 0
        b = int(rng.integers(lo, hi + 1))
        e = int(rng.integers(lo, hi + 1))
        begin.append(b)
        end.append(e)
    dt = _dt(rng, ("f32", "i64", "i32", "f16"))
    how = _how(rng)
    ins = [(_data(rng, shape, dt), "x"), (_i64(begin + end), how)]
    opset = _opset(rng, 19 if mode == "wrap" else 18)
    cv = rng.random() < 0.5 and mode == "constant"
    if cv or use_axes:
        ins.append((np.asarray(2.5 if dt(0).dtype.kind == "f" else 7, dt), how) if cv
                   else (None, None))
    if use_axes:
        ins.append((_i64([a - r if rng.random() < 0.4 else a for a in axes]), how))
    attrs = {"mode": mode} if mode != "constant" or rng.random() < 0.5 else {}
    return _case("Pad", ins, attrs, opset=opset)


def _draw_depth_space(rng):
    b = int(rng.integers(1, 4))
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    dt = _dt(rng, ("f32", "i64", "f16"))
    if rng.random() < 0.5:
        c = int(rng.integers(1, 4)) * b * b
        mode = _pick(rng, ["DCR", "CRD"])
        attrs = {"blocksize": b}
        if mode == "CRD" or rng.random() < 0.5:
            attrs["mode"] = mode
        return _case("DepthToSpace", [(_data(rng, [n, c, h, w], dt), "x")], attrs,
                     opset=_opset(rng))
    c = int(rng.integers(1, 4))
    return _case("SpaceToDepth", [(_data(rng, [n, c, h * b, w * b], dt), "x")],
                 {"blocksize": b}, opset=_opset(rng))


def _draw_one_hot(rng):
    ishape = _shape(rng, 1, 3, 4, 0.05)   # onnxruntime refuses rank 0 indices
    depth = int(rng.integers(1, 7))
    idt = _dt(rng, ("i64", "i32", "f32"), [0.5, 0.25, 0.25])
    idx = rng.integers(-depth - 2, depth + 2, size=ishape).astype(idt)
    r = len(ishape) + 1
    attrs = {"axis": int(rng.integers(-r, r))} if rng.random() < 0.7 else {}
    vdt = _dt(rng, ("f32", "i64", "i32"), [0.6, 0.2, 0.2])
    how = _how(rng)
    depth_a = np.asarray(depth, _dt(rng, ("i64", "f32"), [0.7, 0.3]))
    if rng.random() < 0.3:
        depth_a = depth_a.reshape(1)
    return _case("OneHot", [(idx, "x"), (depth_a, how),
                            (np.asarray([0, 3], vdt), how)], attrs, opset=_opset(rng))


def _draw_non_zero(rng):
    shape = _shape(rng, 0, 4, 4, 0.1)
    dt = _dt(rng)
    x = _data(rng, shape, dt)
    if dt != np.bool_ and rng.random() < 0.5:
        x = np.where(rng.random(shape) < 0.5, 0, x).astype(dt)
    return _case("NonZero", [(x, "x")], opset=_opset(rng))


def _draw_trilu(rng):
    shape = _shape(rng, 2, 4, 5, 0.05)
    ins = [(_data(rng, shape, _dt(rng, ("f32", "i64", "f16", "bool"))), "x")]
    if rng.random() < 0.8:
        ins.append((np.asarray(int(rng.integers(-6, 7)), np.int64), _how(rng)))
    attrs = {"upper": int(rng.integers(0, 2))} if rng.random() < 0.8 else {}
    return _case("Trilu", ins, attrs, opset=_opset(rng))


def _draw_topk(rng):
    shape = _shape(rng, 1, 3, 6, 0.03)
    r = len(shape)
    axis = int(rng.integers(-r, r))
    k = int(rng.integers(0, shape[axis] + 1))
    dt = _dt(rng, ("f32", "i64", "i32", "f16"))
    x = _data(rng, shape, dt)
    if dt != np.float16 and rng.random() < 0.4:
        x = rng.integers(-2, 3, size=shape).astype(dt)   # ties
    attrs = {"axis": axis}
    if rng.random() < 0.5:
        attrs["largest"] = int(rng.integers(0, 2))
    if rng.random() < 0.3:
        attrs["sorted"] = 1
    return _case("TopK", [(x, "x"), (_i64([k]), _how(rng))], attrs, n_out=2,
                 opset=_opset(rng))


def _draw_arg(rng):
    shape = _shape(rng, 1, 4, 5, 0.0)
    r = len(shape)
    dt = _dt(rng, ("f32", "i64", "i32", "f16"))
    x = rng.integers(-2, 3, size=shape).astype(dt) if rng.random() < 0.5 else \
        _data(rng, shape, dt)
    attrs = {"axis": int(rng.integers(-r, r))}
    if rng.random() < 0.6:
        attrs["keepdims"] = int(rng.integers(0, 2))
    if rng.random() < 0.6:
        attrs["select_last_index"] = int(rng.integers(0, 2))
    return _case(_pick(rng, ["ArgMax", "ArgMin"]), [(x, "x")], attrs, opset=_opset(rng))


def _draw_cumsum(rng):
    shape = _shape(rng, 1, 4, 5, 0.05)
    r = len(shape)
    dt = _dt(rng, ("f32", "i64", "i32"), [0.6, 0.2, 0.2])
    axis = np.asarray(int(rng.integers(-r, r)), _dt(rng, ("i64", "i32"), [0.7, 0.3]))
    attrs = {}
    for a in ("exclusive", "reverse"):
        if rng.random() < 0.5:
            attrs[a] = int(rng.integers(0, 2))
    return _case("CumSum", [(_data(rng, shape, dt), "x"), (axis, _how(rng))], attrs,
                 opset=_opset(rng))


_REDUCES = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
            "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare"]


def _draw_reduce(rng):
    op = _pick(rng, _REDUCES)
    shape = _shape(rng, 0, 4, 4, 0.12)
    r = len(shape)
    ints = op not in ("ReduceL2", "ReduceLogSumExp", "ReduceMean")
    dt = _dt(rng, ("f32", "i64", "i32", "f16") if ints else ("f32", "f16"))
    x = _data(rng, shape, dt)
    if op in ("ReduceMax", "ReduceMin") and rng.random() < 0.2:
        x = rng.random(shape) < 0.5   # bool from opset 20
    attrs = {}
    if rng.random() < 0.6:
        attrs["keepdims"] = int(rng.integers(0, 2))
    ins = [(x, "x")]
    choice = rng.random()
    if r and choice < 0.7:
        k = int(rng.integers(1, r + 1))
        axes = [int(a) - (r if rng.random() < 0.4 else 0) for a in rng.choice(r, k, False)]
        ins.append((_i64(axes), _how(rng)))
    elif choice < 0.85:
        ins.append((_i64([]), _how(rng)))
        if rng.random() < 0.6:
            attrs["noop_with_empty_axes"] = int(rng.integers(0, 2))
    elif rng.random() < 0.5:
        attrs["noop_with_empty_axes"] = int(rng.integers(0, 2))
    # an empty reduction of Max/Min has no identity (undefined): keep a dim nonempty
    return _case(op, ins, attrs, opset=_opset(rng, 20 if x.dtype == np.bool_ else 18))


def _draw_resize(rng):
    r = _pick(rng, [4, 3, 2, 1, 5], [0.5, 0.2, 0.15, 0.1, 0.05])
    shape = [int(rng.integers(1, 4)) for _ in range(r - 2)] + \
        [int(rng.integers(1, 7)) for _ in range(min(r, 2))]
    shape = shape[-r:]
    mode = _pick(rng, ["nearest", "linear", "cubic"], [0.45, 0.35, 0.2])
    attrs = {"mode": mode}
    ctm = _pick(rng, ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                      "tf_crop_and_resize", "half_pixel_symmetric"],
                [0.3, 0.15, 0.15, 0.2, 0.1, 0.1])
    attrs["coordinate_transformation_mode"] = ctm
    if mode == "nearest":
        attrs["nearest_mode"] = _pick(rng, ["round_prefer_floor", "round_prefer_ceil",
                                            "floor", "ceil"])
    if mode == "cubic":
        if rng.random() < 0.4:
            attrs["cubic_coeff_a"] = float(_pick(rng, [-0.5, -0.75]))
        if rng.random() < 0.4:
            attrs["exclude_outside"] = 1
    if mode != "nearest" and rng.random() < 0.2 and ctm != "tf_crop_and_resize":
        attrs["antialias"] = 1
    axes = list(range(r))
    if rng.random() < 0.25:
        k = int(rng.integers(1, r + 1))
        axes = sorted(int(a) for a in rng.choice(r, k, replace=False))
        if mode != "nearest" and len(axes) > 3 - (mode == "cubic"):
            axes = axes[-2:]
    elif mode != "nearest":   # onnxruntime's linear/cubic resize the last 2-3 dims
        pass
    how = _how(rng)
    opset = _opset(rng, 19 if ctm == "half_pixel_symmetric" else 18)
    ins = [(_data(rng, shape, _dt(rng, ("f32", "f16", "i64", "u8"),
                                   [0.7, 0.1, 0.1, 0.1]) if mode == "nearest"
                  else np.float32), "x")]
    crop = ctm == "tf_crop_and_resize"
    # onnxruntime's nearest tf_crop_and_resize skips the roi of an axis whose size it
    # keeps (scale 1, or 1.25 on 3) and of the dims before the last two: those axes take
    # the full roi (0..1, the same identity either way; the outer ones keep their size)
    outer = [i for i, a in enumerate(axes) if a < r - 2] if crop else []
    if rng.random() < 0.5:
        # nearest: scales exact in float32 (with 1.3 or 2.6 a sample lands within an
        # ulp of a rounding tie, which onnxruntime's float32 arithmetic breaks one way
        # and float64 the other)
        choices = [1.0, 2.0, 0.5, 3.0, 1.5, 0.75, 1.25, 0.25, 2.5] if mode == "nearest" \
            else [1.0, 2.0, 0.5, 3.0, 1.5, 0.7, 1.3, 0.34, 2.6]
        scales = [float(_pick(rng, choices)) for _ in axes]
        if r > 2 and len(axes) == r and rng.random() < 0.6:
            scales[0] = scales[1] = 1.0
        for i in outer:
            scales[i] = 1.0
        same = [int(np.floor(shape[a] * s)) == shape[a] for a, s in zip(axes, scales)]
        tail = [(None, None), (np.asarray(scales, np.float32), how)]
    else:
        sizes = [int(rng.integers(1, 9)) for _ in axes]
        if r > 2 and len(axes) == r and rng.random() < 0.6:
            sizes[0], sizes[1] = shape[0], shape[1]
        for i in outer:
            sizes[i] = shape[axes[i]]
        same = [s == shape[a] for s, a in zip(sizes, axes)]
        tail = [(None, None), (None, None), (_i64(sizes), how)]
        # onnxruntime's antialias filter takes each axis's scale from the sizes it
        # computes, not the policy's one scale (see DEVIATIONS)
        if rng.random() < 0.3 and len(axes) > 1 and not crop and not attrs.get("antialias"):
            attrs["keep_aspect_ratio_policy"] = _pick(rng, ["not_larger", "not_smaller"])
    if crop:
        lo = rng.uniform(-0.2, 0.5, len(axes))
        hi = lo + rng.uniform(0.1, 1.0, len(axes))
        if mode == "nearest":
            keep = np.asarray(same, bool)
            lo[keep], hi[keep] = 0.0, 1.0
        tail[0] = (np.concatenate([lo, hi]).astype(np.float32), how)
        if rng.random() < 0.5:
            attrs["extrapolation_value"] = float(_pick(rng, [0.0, -1.0, 2.5]))
    ins += tail
    if axes != list(range(r)) or rng.random() < 0.1:
        attrs["axes"] = [a - r if rng.random() < 0.3 else a for a in axes]
    return _case("Resize", ins, attrs, opset=opset)


def _bshapes(rng, n):
    """`n` shapes that broadcast together."""
    out = _shape(rng, 0, 4, 4, 0.05)
    res = []
    for _ in range(n):
        k = int(rng.integers(0, len(out) + 1))
        res.append([d if rng.random() < 0.6 else 1 for d in out[len(out) - k:]])
    return res


def _draw_compare(rng):
    op = _pick(rng, ["Where", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
    if op == "Where":
        s = _bshapes(rng, 3)
        dt = _dt(rng)
        return _case(op, [(rng.random(s[0]) < 0.5, "x"), (_data(rng, s[1], dt), "x"),
                          (_data(rng, s[2], dt), "x")], opset=_opset(rng))
    s = _bshapes(rng, 2)
    dt = _dt(rng, ("f32", "i64", "i32", "f16", "bool") if op == "Equal"
             else ("f32", "i64", "i32", "f16"))
    a, b = _data(rng, s[0], dt), _data(rng, s[1], dt)
    if dt(0).dtype.kind == "f" and rng.random() < 0.3:
        a = np.where(rng.random(a.shape) < 0.3, np.nan, a).astype(dt)
        b = np.where(rng.random(b.shape) < 0.3, np.inf, b).astype(dt)
    if dt != np.bool_ and rng.random() < 0.4:
        b = rng.integers(-2, 3, size=s[1]).astype(dt)
        a = rng.integers(-2, 3, size=s[0]).astype(dt)
    return _case(op, [(a, "x"), (b, "x")], opset=_opset(rng))


_CAST_TYPES = {np.float32: 1, np.uint8: 2, np.int8: 3, np.int32: 6, np.int64: 7,
               np.bool_: 9, np.float16: 10, np.float64: 11}


def _draw_cast(rng):
    src = _pick(rng, list(_CAST_TYPES))
    dst = _pick(rng, list(_CAST_TYPES))
    shape = _shape(rng, 0, 3, 4, 0.05)
    if np.dtype(src).kind == "f":
        x = (rng.standard_normal(shape) * 3).astype(src)
        if np.dtype(dst).kind == "f" or dst == np.bool_:
            # NaN/inf to float or bool is defined (NaN -> True); to int it is not
            x = np.where(rng.random(shape) < 0.2, np.nan, x)
            x = np.where(rng.random(shape) < 0.1, -np.inf, x).astype(src)
        if np.dtype(dst).kind == "u":
            x = np.abs(x)   # a negative float to unsigned is undefined
        if rng.random() < 0.3 and np.dtype(dst).kind in "iu":
            x = np.trunc(x)
    else:
        x = _data(rng, shape, src)
        if dst == np.int8 or dst == np.uint8:
            x = np.clip(x, 0, 100).astype(src) if np.dtype(src).kind != "b" else x
    return _case("Cast", [(x, "x")], {"to": _CAST_TYPES[dst]}, opset=_opset(rng, 19))


DRAWS = {
    "Reshape": _draw_reshape, "Flatten": _draw_flatten, "Transpose": _draw_transpose,
    "Squeeze": _draw_squeeze, "Unsqueeze": _draw_unsqueeze, "Concat": _draw_concat,
    "Split": _draw_split, "Slice": _draw_slice, "Gather": _draw_gather,
    "GatherElements": _draw_gather_elements, "GatherND": _draw_gather_nd,
    "ScatterElements": _draw_scatter_elements, "ScatterND": _draw_scatter_nd,
    "Expand": _draw_expand, "Tile": _draw_tile, "Pad": _draw_pad,
    "DepthSpace": _draw_depth_space, "OneHot": _draw_one_hot, "NonZero": _draw_non_zero,
    "Trilu": _draw_trilu, "TopK": _draw_topk, "ArgMaxMin": _draw_arg, "CumSum": _draw_cumsum,
    "Reduce": _draw_reduce, "Resize": _draw_resize, "Compare": _draw_compare,
    "Cast": _draw_cast,
}


# --------------------------------------------------------------------------------------
# Building, running and comparing
# --------------------------------------------------------------------------------------


def build(case):
    """The one-node ONNX model of `case`, its output names and its feeds."""
    names, inputs, inits, feeds = declare_inputs(case["inputs"], case.get("symbolic"))
    while names and names[-1] == "":
        names.pop()
    outs = [f"out{k}" for k in range(case["n_out"])]
    node = helper.make_node(case["op"], names, outs, **case["attrs"])
    return draw_model([node], inputs, inits, outs, case["opset"], _IR[case["opset"]]), \
        outs, feeds


_TOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 1e-4,
        np.dtype(np.float64): 1e-4}


def _compare(got, ref, where):
    """Assert the Session's outputs `got` match `ref` (shape, dtype, values)."""
    assert_outputs_close(got, ref, where, _TOL)


def _reference_run(model, outs, feeds):
    """ONNX's reference evaluator's outputs (OrtRefused when it fails too)."""
    from onnx.reference import ReferenceEvaluator

    try:
        return ReferenceEvaluator(model).run(outs, feeds)
    except Exception as e:  # noqa: BLE001 (no reference either: skip the draw)
        raise OrtRefused(f"reference: {e}"[:300]) from e


show = show_case


def _reference_agrees(model, outs, feeds, got):
    """Whether ONNX's reference evaluator gives the Session's `got` for `feeds`."""
    from onnx.reference import ReferenceEvaluator

    try:
        ref = ReferenceEvaluator(model).run(outs, feeds)
        _compare(got, ref, "reference")
    except Exception:  # noqa: BLE001 (no agreement, whatever the reason)
        return False
    return True


def _for_reference(case):
    """`case` as ONNX's reference evaluator is given it: its Resize does not take
    negative axes, so they are counted from 0."""
    attrs = case["attrs"]
    if case["op"] == "Resize" and any(a < 0 for a in attrs.get("axes", [])):
        r = np.asarray(case["inputs"][0][0]).ndim
        return dict(case, attrs=dict(attrs, axes=[a % r for a in attrs["axes"]]))
    return case


def _for_ort(case):
    """`case` as onnxruntime is given it: the same model, but where onnxruntime leaves
    the spec, an equivalent one it reads right."""
    attrs = case["attrs"]
    if case["op"] == "Resize" and "keep_aspect_ratio_policy" in attrs and any(
            a < 0 for a in attrs.get("axes", [])):
        # onnxruntime's keep_aspect_ratio_policy does not take negative axes (it keeps
        # the input's sizes, or resizes other axes): the same axes, counted from 0
        r = np.asarray(case["inputs"][0][0]).ndim
        return dict(case, attrs=dict(attrs, axes=[a % r for a in attrs["axes"]]))
    return case


def _spec_weights(n, xs, mode, a, exclude=False):
    """(out, n) linear or cubic (coefficient `a`) interpolation weights at the input
    coordinates `xs`, edge-clamped, or with `exclude` the taps outside dropped and the
    rest renormalized."""
    w = np.zeros((len(xs), n))
    for k, x in enumerate(xs):
        x0 = int(np.floor(x))
        taps = range(x0, x0 + 2) if mode == "linear" else range(x0 - 1, x0 + 3)
        for j in taps:
            d = abs(x - j)
            if mode == "linear":
                c = max(0.0, 1 - d)
            elif d <= 1:
                c = (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
            else:
                c = a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a if d < 2 else 0.0
            if not (exclude and (j < 0 or j >= n)):
                w[k, min(max(j, 0), n - 1)] += c
    if exclude:
        w /= np.maximum(w.sum(axis=1, keepdims=True), 1e-30)
    return w


def _spec_crop_resize(case):
    """The spec's tf_crop_and_resize of a linear or cubic Resize `case` (no antialias
    or keep_aspect_ratio_policy), computed per axis in float64."""
    attrs = case["attrs"]
    x = np.asarray(case["inputs"][0][0], np.float64)
    r = x.ndim
    axes = [a % r for a in attrs.get("axes", range(r))]
    roi = np.asarray(case["inputs"][1][0], np.float64)
    if len(case["inputs"]) > 3:
        sizes = [int(s) for s in case["inputs"][3][0]]
    else:
        sizes = [int(np.floor(x.shape[a] * s)) for a, s in zip(axes, case["inputs"][2][0])]
    y, outside = x, np.zeros(x.shape, bool)
    for j, (ax, out) in enumerate(zip(axes, sizes)):
        n, lo, hi = x.shape[ax], roi[j], roi[len(axes) + j]
        i = np.arange(out, dtype=np.float64)
        xs = lo * (n - 1) + i * (hi - lo) * (n - 1) / (out - 1) if out > 1 else \
            np.full(out, 0.5 * (lo + hi) * (n - 1))
        w = _spec_weights(n, xs, attrs["mode"], attrs.get("cubic_coeff_a", -0.75),
                          bool(attrs.get("exclude_outside")))
        y = np.moveaxis(np.tensordot(w, np.moveaxis(y, ax, 0), axes=1), 0, ax)
        near = np.clip(np.floor(xs).astype(int), 0, n - 1)
        outside = np.moveaxis(np.moveaxis(outside, ax, 0)[near], 0, ax)
        np.moveaxis(outside, ax, 0)[(xs < 0) | (xs > n - 1)] = True
    return np.where(outside, attrs.get("extrapolation_value", 0.0), y).astype(np.float32)


def _spec_agrees(case, got):
    """Whether the Session's `got` is the spec's result, where the test computes it: a
    linear or cubic tf_crop_and_resize. onnxruntime skips the roi when every scale is 1
    and places the samples otherwise elsewhere, and ONNX's reference evaluator places
    them elsewhere again."""
    attrs = case["attrs"]
    if case["op"] != "Resize" or attrs["mode"] == "nearest" or attrs.get(
            "coordinate_transformation_mode") != "tf_crop_and_resize":
        return False
    try:
        _compare(got, [_spec_crop_resize(case)], "spec")
    except AssertionError:
        return False
    return True


def _expected(case):
    """onnxruntime's outputs for `case` (or its stand-ins, see check_case), and whether
    they are ONNX's reference evaluator's instead."""
    model, outs, feeds = build(case)
    try:
        return ort_run(build(_for_ort(case))[0], outs, feeds), False
    except OrtRefused as e:
        if "NOT_IMPLEMENTED" not in str(e) and "data type is not supported" not in str(e):
            raise
        if case["op"] == "Resize" and case["attrs"]["mode"] == "nearest":
            # no integer Resize in onnxruntime from opset 19: its float32 run (exact)
            f32 = dict(case, inputs=[(v.astype(np.float32), h) if h == "x" else (v, h)
                                     for v, h in case["inputs"]])
            dt = np.asarray(case["inputs"][0][0]).dtype
            return [o.astype(dt) for o in ort_run(build(_for_ort(f32))[0], outs, {
                k: v.astype(np.float32) if k == "in0" else v for k, v in feeds.items()})], False
        # no onnxruntime kernel for these types: ONNX's reference evaluator instead
        return _reference_run(model, outs, feeds), True


def _shuffled(case, rng):
    """`case` with the values of each fed input (data and run-time operands) shuffled:
    the same model, other feeds (often still valid). Resize's operands stay (the draws
    keep it off onnxruntime's deviations, see _draw_resize); None when the shuffle
    meets another (a Slice end of INT_MAX with a negative step, see _draw_slice)."""
    mix = ("x",) if case["op"] == "Resize" else ("x", "f")
    case = dict(case, inputs=[
        (rng.permutation(np.asarray(v).reshape(-1)).reshape(np.shape(v)), h)
        if h in mix else (v, h) for v, h in case["inputs"]])
    if case["op"] == "Slice" and len(case["inputs"]) > 4:
        top = np.iinfo(case["inputs"][2][0].dtype).max
        if any(e == top and st < 0 for e, st in zip(case["inputs"][2][0],
                                                     case["inputs"][4][0])):
            return None
    return case


def check_case(case, seed=0):
    """Run `case` in the Session and onnxruntime; raise AssertionError on a mismatch,
    OrtRefused when onnxruntime refuses the case. The Session then runs again on the
    fed values shuffled (its folded and cached state kept), when onnxruntime takes
    those too."""
    model, outs, feeds = build(case)
    session = og.Session(from_onnx(model))
    rng = np.random.default_rng(seed)
    for run in range(2):
        if run:
            if not feeds:
                return
            case = _shuffled(case, rng)
            if case is None:
                return
            feeds = build(case)[2]
            try:
                ref, by_reference = _expected(case)
            except OrtRefused:
                return
        else:
            ref, by_reference = _expected(case)
        got = session.run(outs, feeds)
        try:
            _compare(got, ref, f"run {run} " + show(case)
                     + (" (vs reference)" if by_reference else ""))
        except AssertionError as e:
            if not by_reference and (_reference_agrees(build(_for_reference(case))[0], outs,
                                                       feeds, got)
                                     or _spec_agrees(case, got)):
                raise OrtDiverges(str(e)[:300]) from e
            raise


# ops whose result on NaN and infinities the spec defines (the scatter reductions'
# max/min, TopK, ArgMax/ArgMin, Resize's interpolation and Cast to int do not)
_SPECIALS_OK = {"Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Concat", "Split",
                "Slice", "Gather", "GatherElements", "GatherND", "Expand", "Tile", "Pad",
                "DepthToSpace", "SpaceToDepth", "Trilu", "CumSum", "ReduceSum", "ReduceMean",
                "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                "ReduceSumSquare", "Where", "Equal", "Less", "Greater", "LessOrEqual",
                "GreaterOrEqual"}


def _with_specials(case, rng):
    """`case` with some NaN and infinities in its float data inputs."""
    ins = []
    for v, h in case["inputs"]:
        if h == "x" and np.asarray(v).dtype.kind == "f":
            m = rng.random(np.shape(v))
            v = np.where(m < 0.1, np.nan, np.where(m < 0.15, np.inf, np.where(
                m < 0.2, -np.inf, v))).astype(np.asarray(v).dtype)
        ins.append((v, h))
    return dict(case, inputs=ins)


def sweep(kind, count, seed=0):
    """Draw and check `count` examples of `kind`; returns (checked, refused, failures
    as (case, message))."""
    rng = np.random.default_rng([sorted(DRAWS).index(kind), seed])

    def cases():
        for _ in range(count):
            case = DRAWS[kind](rng)
            if case["op"] in _SPECIALS_OK and rng.random() < 0.15:
                case = _with_specials(case, rng)
            if rng.random() < 0.25:
                case["symbolic"] = True
            elif rng.random() < 0.1:   # every input an initializer: the Session may fold it
                case["inputs"] = as_initializers(case["inputs"])
            yield case
    return check_draws(cases(), check_case, show)


@pytest.mark.parametrize("kind", sorted(DRAWS))
def test_random_ops_match_onnxruntime(kind):
    assert_clean_sweep(*sweep(kind, _PER_OP))


# --------------------------------------------------------------------------------------
# Pinned cases: where onnxruntime leaves the spec (the Session must give the spec's
# result, as ONNX's reference evaluator or the test's own computation does), and the
# stand-ins check_case gives onnxruntime. Sweeps of 3000+ draws per op found no
# mismatch or crash of the Session's; these are the deviations of onnxruntime's they met.
# --------------------------------------------------------------------------------------

F32 = np.float32
_NEAREST_CEIL = dict(mode="nearest", nearest_mode="ceil")

DEVIATIONS = [
    # an end of INT64_MAX with a negative step: onnxruntime slices to the start (numpy's
    # None), the spec clamps the end to n - 1 (empty)
    pytest.param(_case("Slice", [(np.arange(6, dtype=F32), "x"), (_i64([3]), "c"),
                                 (_i64([I64_MAX]), "c"), (_i64([0]), "c"),
                                 (_i64([-1]), "c")]), id="slice-int64-max-end-negative-step"),
    # NonZero of a scalar: onnxruntime's indices are (1, n), the spec's (rank 0, n)
    pytest.param(_case("NonZero", [(np.asarray(3, np.int32), "x")]), id="nonzero-scalar"),
    # tf_crop_and_resize with every scale 1: onnxruntime copies the input, skipping roi
    pytest.param(_case("Resize", [(np.arange(9, dtype=F32).reshape(1, 1, 3, 3), "x"),
                                  (np.asarray([0, 0, .5, -.25, 1, 1, 1, 1], F32), "c"),
                                  (np.ones(4, F32), "c")],
                       dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize")),
                 id="resize-crop-unit-scales"),
    # nearest tf_crop_and_resize: onnxruntime skips the roi of the batch axis
    pytest.param(_case("Resize", [(np.arange(3, dtype=F32).reshape(3, 1, 1, 1), "x"),
                                  (np.asarray([.5, 0, 0, 0, 1, 1, 1, 1], F32), "c"),
                                  (np.ones(4, F32), "c")],
                       dict(_NEAREST_CEIL, coordinate_transformation_mode="tf_crop_and_resize")),
                 id="resize-crop-batch-roi"),
    # half_pixel_symmetric where floor(n * scale) == n: onnxruntime copies the input, the
    # spec shifts the samples by the scale it was asked for
    pytest.param(_case("Resize", [(np.arange(16, dtype=F32).reshape(2, 4, 2), "x"),
                                  (None, None), (np.asarray([1, 1, 1.25], F32), "c")],
                       dict(_NEAREST_CEIL,
                            coordinate_transformation_mode="half_pixel_symmetric"),
                       opset=19), id="resize-half-pixel-symmetric-same-size"),
    # antialias with keep_aspect_ratio_policy: onnxruntime filters the axis the policy
    # leaves at its size (2 -> 2) with scale 1, the spec (and the reference) with the
    # policy's scale 5/6
    pytest.param(_case("Resize", [(np.arange(12, dtype=F32).reshape(1, 1, 2, 6) % 5, "x"),
                                  (None, None), (None, None), (_i64([4, 5]), "c")],
                       dict(mode="cubic", antialias=1, keep_aspect_ratio_policy="not_larger",
                            axes=[2, 3]), opset=19), id="resize-antialias-keep-aspect"),
]


@pytest.mark.parametrize("case", DEVIATIONS)
def test_onnxruntime_deviations_are_recognized(case):
    with pytest.raises(OrtDiverges):
        check_case(case)


STAND_INS = [
    # keep_aspect_ratio_policy with negative axes: onnxruntime resizes other axes; it is
    # given the same axes counted from 0 (the Session's (1, 2, 4) is the spec's)
    pytest.param(_case("Resize", [(np.asarray([[[0.25, 0.5]]], F32), "x"), (None, None),
                                  (None, None), (_i64([3, 4]), "c")],
                       dict(mode="nearest", keep_aspect_ratio_policy="not_larger",
                            axes=[1, -1]), opset=20), id="resize-keep-aspect-negative-axes"),
    # an integer Resize (no onnxruntime kernel from opset 19): onnxruntime's float32 run
    pytest.param(_case("Resize", [(np.arange(30, dtype=np.int64).reshape(5, 6), "x"),
                                  (None, None), (np.asarray([1.5, 2.5], F32), "c")],
                       dict(mode="nearest", coordinate_transformation_mode="align_corners"),
                       opset=21), id="resize-int64-nearest"),
    # a float16 ScatterND reduction (no onnxruntime kernel): ONNX's reference evaluator
    pytest.param(_case("ScatterND", [(np.ones((3, 2), np.float16), "x"),
                                     (np.asarray([[0], [-1], [0]]), "c"),
                                     (np.full((3, 2), 2, np.float16), "x")],
                       dict(reduction="mul")), id="scatternd-float16-mul"),
]


@pytest.mark.parametrize("case", STAND_INS)
def test_stand_ins_agree(case):
    check_case(case)

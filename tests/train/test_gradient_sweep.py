"""A seeded random sweep of the gradient rules over the ops' geometry and attribute space.

tests/train/test_gradients.py checks each rule at one fixed geometry; this file draws
many. Each draw is a VALID one-node case (op, attributes, inputs) from a seeded numpy
generator, checked with `check_op_gradients` (float64, central differences along a
random direction, loss sum(y * R)). The families (FAMILIES) draw:

- Conv / ConvTranspose: 1-3 spatial dims, kernels 1-4, strides 1-3, dilations 1-2,
  asymmetric pads, auto_pad SAME_UPPER / SAME_LOWER / VALID, dense, grouped and
  depthwise groups, with or without bias, batch 1-2, ConvTranspose output_padding and
  output_shape; 2-D Convs past the forward kernel's path thresholds (conv_paths);
- MaxPool (ceil_mode, pads, dilations, strides), AveragePool (count_include_pad,
  ceil_mode), LpPool, the global pools, LRN;
- Slice, Pad, Gather / GatherElements / GatherND, ScatterElements / ScatterND, Tile,
  Expand, Concat, Split, Transpose, Reshape, DepthToSpace / SpaceToDepth, Resize, Trilu;
- the Reduce* ops, CumSum, Softmax / LogSoftmax / Hardmax, TopK, Einsum (random
  equations with ellipses and repeated subscripts), MatMul (ranks 1-4, broadcasting),
  Gemm (transA/transB/alpha/beta, broadcast C);
- BatchNormalization (training_mode 0/1), InstanceNormalization, LayerNormalization,
  GroupNormalization;
- RNN / GRU / LSTM (directions, layouts, sequence_lens, initial states, peepholes,
  linear_before_reset, input_forget, any subset of the outputs);
- the other ops with rules: Compress, ReverseSequence, Dropout, OneHot, Where,
  LpNormalization, MeanVarianceNormalization.

Across families, now and then: empty tensors (a dim of 0, zero repeats, Resize axes of
0 cells, k = 0), float inputs whose dims are unknown while building (they pass through
a Reshape to a shape fed at run time: the rules' run-time-shape paths), one tensor
passed as two same-shaped inputs (the gradients must add up), integer inputs (axes,
repeats, pads, starts) fed at run time instead of being constants.

The draws stay away from the points where the op is not differentiable, where finite
differences measure a one-sided or jumping slope instead of the rule's: values that a
selection compares (MaxPool, GlobalMaxPool, ReduceMax/Min, TopK, Hardmax) are distinct
with gaps of 0.05 (far above the 1e-6 step); |x| stays >= 0.2 where an absolute value
is taken (LpPool, ReduceL1); ReduceLogSum's sums stay positive; pool windows that
cover only padding are redrawn (their value is a fill, not a function of x);
ScatterElements / ScatterND without reduction never write a position twice (which
write wins is unspecified). Combinations a rule does not support (LpPool with
ceil_mode, Pad modes other than constant, ...) are drawn too and must raise
GradientNotDefinedError naming the op (`expect`), never return numbers.

`ONEGRAPH_SWEEP_EXAMPLES` sets the draws per family (times the family's weight in
FAMILIES; default: a CI-sized count, deterministic) and `ONEGRAPH_SWEEP_SEED` the seed
(default 0). FINDINGS holds the minimal reproductions of what the hunts found wrong in
the rules.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import GradientNotDefinedError

from .gradcheck import check_op_gradients
from ..window_length import padding_only_window, window_out

raw = og.raw_ops

# draws per family (the hunts behind this file ran 1000+ per family over several seeds)
_PER_FAMILY = int(os.environ.get("ONEGRAPH_SWEEP_EXAMPLES", "80"))
_SEED = int(os.environ.get("ONEGRAPH_SWEEP_SEED", "0"))
# whether the draws include empty tensors (a dim of 0, a zero repeat, an output axis
# resized to 0 cells, k = 0 in MatMul/Gemm) now and then
_EMPTIES = True
# the share of draws whose float inputs have dims unknown while building (`builder`)
_DYNAMIC = 0.2
_I64_MAX = np.iinfo(np.int64).max
_I64_MIN = np.iinfo(np.int64).min


# --------------------------------------------------------------------------------------
# Cases: plain dicts, so a failure prints a readable reproduction
# --------------------------------------------------------------------------------------


def case(op, inputs, attrs=None, fed=None, outputs=None, post=None, expect=None,
         num_outputs=None):
    """A one-node case.

    Args:
        op: the og.raw_ops name.
        inputs: arrays (None for an omitted optional input).
        attrs: the node's attributes.
        fed: per input, True to feed it through a placeholder (default: float inputs);
            the others become constants (known while building).
        outputs: indices of the node's outputs to check (default: all).
        post: optional function (outputs list, fed tensors) -> tensor(s) applied after.
        expect: a regex the GradientNotDefinedError must match when the rule does not
            support the draw (then no numbers are checked).
        num_outputs: the node's output count when it is not 1.
    """
    if fed is None:
        fed = [a is not None and np.asarray(a).dtype.kind == "f" for a in inputs]
    return dict(op=op, inputs=list(inputs), attrs=dict(attrs or {}), fed=list(fed),
                outputs=outputs, post=post, expect=expect, num_outputs=num_outputs,
                dynamic=[], tied={})


def show(c) -> str:
    """A case as text: op, attributes, input shapes (and integer inputs' values)."""
    parts = []
    for a, f in zip(c["inputs"], c["fed"]):
        if a is None:
            parts.append("None")
            continue
        a = np.asarray(a)
        text = f"{a.dtype}{list(a.shape)}"
        if a.dtype.kind != "f" or a.size <= 4:
            text += "=" + np.array2string(a, separator=",", threshold=60).replace("\n", "")
        parts.append(text + ("" if f else "(const)"))
    extra = f" outputs={c['outputs']}" if c["outputs"] is not None else ""
    extra += f" dynamic={c['dynamic']}" if c["dynamic"] else ""
    extra += f" tied={c['tied']}" if c["tied"] else ""
    extra += f" num_outputs={c['num_outputs']}" if c["num_outputs"] else ""
    return f"{c['op']}({', '.join(parts)}, {c['attrs']}){extra}"


def builder(c):
    """(build function over the fed inputs, the fed arrays) for check_op_gradients.

    The fed inputs listed in c["dynamic"] reach the node through a Reshape to their own
    shape fed at run time, so their dims are unknown while the graph (and the gradient)
    is built: the rules' run-time-shape paths. An input j in c["tied"] is the same
    tensor as input c["tied"][j] (one placeholder used twice: the gradients add up)."""
    tied = c["tied"]
    fed_arrays = [np.asarray(a) for j, (a, f) in enumerate(zip(c["inputs"], c["fed"]))
                  if f and j not in tied]
    n_fed = len(fed_arrays)
    fed_arrays += [ints(np.shape(c["inputs"][j])) for j in c["dynamic"]]

    def build(*phs):
        """The node over the placeholders (then the chosen outputs, `post`)."""
        it = iter(phs[:n_fed])
        args = [None if j in tied else next(it) if f else
                (None if a is None else og.constant(np.asarray(a)))
                for j, (a, f) in enumerate(zip(c["inputs"], c["fed"]))]
        for j, shape in zip(c["dynamic"], phs[n_fed:]):
            args[j] = raw.Reshape(args[j], shape)
        for j, i in tied.items():
            args[j] = args[i]
        while args and args[-1] is None:
            args.pop()
        kw = {"num_outputs": c["num_outputs"]} if c["num_outputs"] else {}
        outs = getattr(raw, c["op"])(*args, **kw, **c["attrs"])
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        if c["outputs"] is not None:
            outs = [outs[i] for i in c["outputs"]]
        if c["post"] is not None:
            return c["post"](outs, phs)
        return outs
    return build, fed_arrays


def check_case(c, seed=0):
    """Check one case: its expected GradientNotDefinedError, or the gradients of every
    float fed input against central differences."""
    build, arrays = builder(c)
    if c["expect"] is not None:
        with pytest.raises(GradientNotDefinedError, match=c["expect"]):
            check_op_gradients(build, arrays, seed=seed)
        return
    try:
        check_op_gradients(build, arrays, seed=seed)
    except Exception as e:  # name the draw, whatever failed
        raise AssertionError(f"{show(c)}: {type(e).__name__}: {e}") from e


# --------------------------------------------------------------------------------------
# Value and geometry helpers
# --------------------------------------------------------------------------------------


def pick(rng, values, p=None):
    """One of `values` (any objects), with probabilities `p`."""
    return values[int(rng.choice(len(values), p=p))]


def floats(rng, shape, lo=-1.0, hi=1.0):
    """Uniform float64 values."""
    return rng.uniform(lo, hi, shape)


def distinct(rng, shape):
    """Distinct float64 values 0.05 apart, shuffled: no ties for a selection to break
    (the gap is far above the finite-difference step)."""
    n = int(np.prod(shape, dtype=np.int64))
    return (rng.permutation(n) - n / 2.0).reshape(shape) * 0.05 + 0.01


def away(rng, shape, gap=0.2):
    """float64 values with |x| in [gap, 1]: away from the kink of |x| at 0."""
    return rng.uniform(gap, 1.0, shape) * rng.choice([-1.0, 1.0], shape)


def ints(values):
    """An int64 array."""
    return np.asarray(values, dtype=np.int64)


def window_pads(sp, kernel, strides, dil, mode, pads, ceil=False):
    """((begin, end) pads, output sizes) per spatial dim of a Conv/pool geometry; the
    SAME pads as the spec computes them (possibly negative); None if an output is
    empty."""
    nsp = len(sp)
    res, out = [], []
    for i in range(nsp):
        n, k, s, d = sp[i], kernel[i], strides[i], dil[i]
        if mode in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-n // s)
            total = (o - 1) * s + (k - 1) * d + 1 - n
            small = total // 2
            pb, pe = (small, total - small) if mode == "SAME_UPPER" else (total - small,
                                                                            small)
        elif mode == "VALID":
            pb, pe = 0, 0
            o = window_out(n, k, s, d, 0, 0, ceil)
        else:
            pb, pe = pads[i], pads[nsp + i]
            o = window_out(n, k, s, d, pb, pe, ceil)
        if o < 1:
            return None
        res.append((pb, pe))
        out.append(o)
    return res, out


def draw_window(rng, nsp, kmax=4, smax=3, dmax=2, pad_lt_kernel=False):
    """(kernel, strides, dilations, auto_pad, pads) of a random window geometry."""
    kernel = [int(rng.integers(1, kmax + 1)) for _ in range(nsp)]
    strides = [int(rng.integers(1, smax + 1)) for _ in range(nsp)]
    dil = [int(rng.integers(1, dmax + 1)) if rng.random() < 0.6 else 1 for _ in range(nsp)]
    mode = pick(rng, ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"], [0.55, 0.15, 0.15, 0.15])
    pads = [0] * (2 * nsp)
    wide = not pad_lt_kernel and rng.random() < 0.2   # Conv: pads past the window
    if mode == "NOTSET" and rng.random() < 0.8:
        for i in range(2 * nsp):
            k = kernel[i % nsp]
            top = k - 1 if pad_lt_kernel else (k - 1) * dil[i % nsp] + (2 if wide else 0)
            pads[i] = int(rng.integers(0, top + 1))
    return kernel, strides, dil, mode, pads


def window_attrs(rng, kernel, strides, dil, mode, pads, with_kernel=True):
    """The window attributes, each written only sometimes when it is the default."""
    nsp = len(kernel)
    attrs = {}
    if with_kernel:
        attrs["kernel_shape"] = kernel
    if any(s != 1 for s in strides) or rng.random() < 0.3:
        attrs["strides"] = strides
    if any(d != 1 for d in dil) or rng.random() < 0.3:
        attrs["dilations"] = dil
    if mode != "NOTSET":
        attrs["auto_pad"] = mode
    elif any(pads) or rng.random() < 0.3:
        attrs["pads"] = pads
    assert all(len(v) in (nsp, 2 * nsp) for v in attrs.values() if isinstance(v, list))
    return attrs


def spatial(rng, nsp, lo=1, hi=6):
    """Random spatial sizes (smaller in 3-D)."""
    hi = min(hi, 4) if nsp == 3 else hi
    return [int(rng.integers(lo, hi + 1)) for _ in range(nsp)]


# --------------------------------------------------------------------------------------
# Conv family
# --------------------------------------------------------------------------------------


def groups_channels(rng):
    """(group, in channels, out channels): dense, grouped or depthwise."""
    kind = pick(rng, ["dense", "grouped", "depthwise"])
    if kind == "dense":
        return 1, int(rng.integers(1, 4)), int(rng.integers(1, 4))
    if kind == "grouped":
        g = int(rng.integers(2, 4))
        return g, g * int(rng.integers(1, 3)), g * int(rng.integers(1, 3))
    g = int(rng.integers(1, 5))
    return g, g, g * int(rng.integers(1, 3))


def draw_conv(rng):
    """Conv over 1-3 spatial dims, any valid window geometry, groups, optional bias."""
    nsp = int(rng.integers(1, 4))
    g, cin, cout = groups_channels(rng)
    kernel, strides, dil, mode, pads = draw_window(rng, nsp, kmax=4 if nsp < 3 else 3)
    while True:
        sp = spatial(rng, nsp)
        geo = window_pads(sp, kernel, strides, dil, mode, pads)
        if geo is not None and min(p for pp in geo[0] for p in pp) >= 0:
            break
        kernel = [max(1, k - 1) if rng.random() < 0.5 else k for k in kernel]
        dil = [1 if rng.random() < 0.5 else d for d in dil]
    x = floats(rng, [int(rng.integers(1, 3)), cin] + sp)
    w = floats(rng, [cout, cin // g] + kernel)
    attrs = window_attrs(rng, kernel, strides, dil, mode, pads, rng.random() < 0.5)
    if g > 1 or rng.random() < 0.2:
        attrs["group"] = g
    ins = [x, w] + ([floats(rng, [cout])] if rng.random() < 0.5 else [])
    return case("Conv", ins, attrs)


def draw_conv_paths(rng):
    """2-D Conv geometries past the forward kernel's path thresholds (ops/conv.py,
    ops/conv_depthwise.py): 16+ input channels (channels-last im2col), at most half as
    many outputs as inputs at stride 1 (per-tap GEMMs), depthwise over 150+ output
    pixels per channel (the same-width and row forms), 1x1 with and without pads."""
    kind = pick(rng, ["nhwc", "taps", "depthwise", "pointwise"])
    n = int(rng.integers(1, 3))
    sp = [int(rng.integers(6, 17)) for _ in range(2)]
    kernel = [int(rng.integers(1, 4)) for _ in range(2)]
    attrs = {}
    if kind == "nhwc":
        cin, cout, g = int(rng.integers(16, 21)), int(rng.integers(1, 6)), 1
        attrs["strides"] = [int(rng.integers(1, 3)) for _ in range(2)]
    elif kind == "taps":
        cin, g = int(rng.integers(4, 13)), 1
        cout = int(rng.integers(1, cin // 2 + 1))
    elif kind == "depthwise":
        cin = cout = g = int(rng.integers(2, 6))
        sp = [int(rng.integers(10, 22)) for _ in range(2)]
        attrs["strides"] = [int(pick(rng, [1, 1, 2])) for _ in range(2)]
    else:
        cin, cout, g = int(rng.integers(1, 20)), int(rng.integers(1, 20)), 1
        kernel = [1, 1]
        attrs["strides"] = [int(rng.integers(1, 4)) for _ in range(2)]
    attrs["pads"] = [int(rng.integers(0, k)) if rng.random() < 0.7 else 0
                     for k in kernel + kernel]
    if g > 1:
        attrs["group"] = g
    x = floats(rng, [n, cin] + sp)
    w = floats(rng, [cout, cin // g] + kernel)
    ins = [x, w] + ([floats(rng, [cout])] if rng.random() < 0.5 else [])
    return case("Conv", ins, attrs)


def draw_conv_transpose(rng):
    """ConvTranspose over 1-3 spatial dims: explicit pads, output_padding (also in
    [stride, dilation)), output_shape or auto_pad (also where the resolved pads are
    negative: a SAME stride longer than the window); groups; optional bias."""
    nsp = int(rng.integers(1, 4))
    g, cin, cout = groups_channels(rng)
    kernel = [int(rng.integers(1, 5 if nsp < 3 else 4)) for _ in range(nsp)]
    strides = [int(rng.integers(1, 4)) for _ in range(nsp)]
    dil = [int(rng.integers(1, 3)) if rng.random() < 0.5 else 1 for _ in range(nsp)]
    sp = spatial(rng, nsp, hi=5)
    attrs = {}
    outpad = [int(rng.integers(0, s)) for s in strides] if rng.random() < 0.4 else [0] * nsp
    if rng.random() < 0.1 and any(d > s for d, s in zip(dil, strides)):
        # output_padding in [stride, dilation): valid
        i = [j for j in range(nsp) if dil[j] > strides[j]][0]
        outpad[i] = int(rng.integers(strides[i], dil[i]))
    if any(outpad):
        attrs["output_padding"] = outpad
    full = [s * (n - 1) + op + (k - 1) * d + 1
            for s, n, op, k, d in zip(strides, sp, outpad, kernel, dil)]
    how = pick(rng, ["pads", "output_shape", "SAME_UPPER", "SAME_LOWER", "VALID"],
               [0.4, 0.25, 0.125, 0.125, 0.1])
    if how == "pads":
        pads = [0] * (2 * nsp)
        for i in range(nsp):
            room = full[i] - 1
            top = (kernel[i] - 1) * dil[i] + (2 if rng.random() < 0.2 else 0)
            pb = int(rng.integers(0, min(room, top) + 1))
            pe = int(rng.integers(0, min(room - pb, top) + 1))
            pads[i], pads[nsp + i] = pb, pe
        attrs["pads"] = pads
    elif how == "output_shape":
        attrs["output_shape"] = [int(rng.integers(max(1, f - 3), f + 1)) for f in full]
        if rng.random() < 0.3:
            attrs["auto_pad"] = pick(rng, ["SAME_UPPER", "SAME_LOWER"])
    else:
        attrs["auto_pad"] = how
    if any(s != 1 for s in strides) or rng.random() < 0.3:
        attrs["strides"] = strides
    if any(d != 1 for d in dil):
        attrs["dilations"] = dil
    if rng.random() < 0.4:
        attrs["kernel_shape"] = kernel
    if g > 1:
        attrs["group"] = g
    x = floats(rng, [int(rng.integers(1, 3)), cin] + sp)
    w = floats(rng, [cin, cout // g] + kernel)
    ins = [x, w] + ([floats(rng, [cout])] if rng.random() < 0.5 else [])
    return case("ConvTranspose", ins, attrs)


# --------------------------------------------------------------------------------------
# Pooling family
# --------------------------------------------------------------------------------------


def draw_pool_geometry(rng, kmax=3, dmax=2, ceil_ok=True):
    """(x shape, attrs) of a pool whose every window covers an input cell."""
    while True:
        nsp = int(rng.integers(1, 4))
        kernel, strides, dil, mode, pads = draw_window(rng, nsp, kmax, 3, dmax, True)
        ceil = ceil_ok and rng.random() < 0.35
        sp = spatial(rng, nsp, hi=7)
        geo = window_pads(sp, kernel, strides, dil, mode, pads, ceil)
        if geo is None or padding_only_window(sp, kernel, strides, dil, *geo):
            continue
        attrs = window_attrs(rng, kernel, strides, dil, mode, pads)
        if ceil or rng.random() < 0.2:
            attrs["ceil_mode"] = int(ceil)
        return [int(rng.integers(1, 3)), int(rng.integers(1, 3))] + sp, attrs


def draw_max_pool(rng):
    """MaxPool over distinct values (its Y; sometimes Indices fetched too)."""
    shape, attrs = draw_pool_geometry(rng)
    if rng.random() < 0.2:
        return case("MaxPool", [distinct(rng, shape)], attrs, num_outputs=2, outputs=[0])
    return case("MaxPool", [distinct(rng, shape)], attrs)


def draw_average_pool(rng):
    """AveragePool, count_include_pad 0/1."""
    shape, attrs = draw_pool_geometry(rng)
    if rng.random() < 0.6:
        attrs["count_include_pad"] = int(rng.integers(0, 2))
    return case("AveragePool", [floats(rng, shape)], attrs)


def draw_lp_pool(rng):
    """LpPool (p 1-3) over |x| >= 0.2, ceil_mode 0 and 1; GlobalLpPool too."""
    if rng.random() < 0.2:
        shape = [int(rng.integers(1, 3)), int(rng.integers(1, 3))] + spatial(
            rng, int(rng.integers(1, 4)), hi=4)
        return case("GlobalLpPool", [away(rng, shape)], {"p": int(rng.integers(1, 4))})
    shape, attrs = draw_pool_geometry(rng)
    attrs["p"] = int(rng.integers(1, 4))
    return case("LpPool", [away(rng, shape)], attrs)


def draw_global_pool_lrn(rng):
    """GlobalAveragePool, GlobalMaxPool (distinct values), LRN."""
    shape = [int(rng.integers(1, 3)), int(rng.integers(1, 5))] + spatial(
        rng, int(rng.integers(1, 4)), hi=4)
    op = pick(rng, ["GlobalAveragePool", "GlobalMaxPool", "LRN"])
    if op == "GlobalAveragePool":
        return case(op, [floats(rng, shape)])
    if op == "GlobalMaxPool":
        return case(op, [distinct(rng, shape)])
    attrs = {"size": int(rng.integers(1, 6)), "alpha": float(rng.uniform(1e-4, 1.0)),
             "beta": float(rng.uniform(0.3, 1.0)), "bias": float(rng.uniform(0.5, 2.0))}
    return case(op, [floats(rng, shape, -2, 2)], attrs)


# --------------------------------------------------------------------------------------
# Shape and indexing family
# --------------------------------------------------------------------------------------


def dims(rng, rank, lo=1, hi=4):
    """A random shape."""
    return [int(rng.integers(lo, hi + 1)) for _ in range(rank)]


def maybe_empty(rng, shape, p=0.05):
    """`shape` with one dim made 0 now and then (an empty tensor)."""
    shape = list(shape)
    if shape and _EMPTIES and rng.random() < p:
        shape[int(rng.integers(len(shape)))] = 0
    return shape


def draw_slice(rng):
    """Slice: axes omitted, negative or shuffled, negative steps, out-of-range and
    huge starts/ends, sometimes fed at run time."""
    rank = int(rng.integers(1, 5))
    shape = maybe_empty(rng, dims(rng, rank, 1, 5))
    n = int(rng.integers(1, rank + 1))
    axes = [int(a) for a in rng.permutation(rank)[:n]]
    starts, ends, steps = [], [], []
    for a in axes:
        d = shape[a]
        step = int(pick(rng, [1, 1, 2, 3, -1, -1, -2, -3]))

        def bound():
            """A start or end: in or past the axis, now and then an int64 extreme."""
            if rng.random() < 0.1:
                return int(pick(rng, [_I64_MAX, _I64_MIN, 2 ** 31, -2 ** 31]))
            return int(rng.integers(-d - 3, d + 4))
        starts.append(bound())
        ends.append(bound())
        steps.append(step)
    omit_axes = axes == list(range(rank)) and rng.random() < 0.5
    axes = [a - rank if rng.random() < 0.4 else a for a in axes]
    omit_steps = all(s == 1 for s in steps) and rng.random() < 0.5
    ins = [floats(rng, shape), ints(starts), ints(ends)]
    if not (omit_axes and omit_steps):
        ins.append(None if omit_axes else ints(axes))
    if not omit_steps:
        ins.append(ints(steps))
    fed = [True] + [a is not None and rng.random() < 0.2 for a in ins[1:]]
    return case("Slice", ins, fed=fed)


def draw_pad(rng):
    """Pad: constant (with a pad value), reflect, edge, wrap; negative pads (crops),
    an axes input, wrap pads longer than the axis. The copying modes' rule needs pads
    known while building: fed pads must raise."""
    rank = int(rng.integers(1, 5))
    shape = dims(rng, rank, 1, 4)
    mode = pick(rng, ["constant", "reflect", "edge", "wrap"], [0.7, 0.1, 0.1, 0.1])
    axes = list(range(rank))
    with_axes = rng.random() < 0.4
    if with_axes:
        axes = [int(a) for a in rng.permutation(rank)[:int(rng.integers(1, rank + 1))]]
    pads = []
    for _ in range(2):
        for a in axes:
            d = shape[a]
            pads.append(int(rng.integers(-d + 1, 4)) if rng.random() < 0.3
                        else int(rng.integers(0, 4)))
    k = len(axes)
    for j, a in enumerate(axes):
        # keep each axis non-empty after negative pads
        while shape[a] + pads[j] + pads[k + j] < 1:
            pads[j if pads[j] < 0 else k + j] += 1
        if mode == "reflect":   # at most n - 1 mirrored values a side
            n = shape[a] + min(pads[j], 0) + min(pads[k + j], 0)
            pads[j], pads[k + j] = (min(p, n - 1) for p in (pads[j], pads[k + j]))
    ins = [floats(rng, shape), ints(pads)]
    value = None
    if mode == "constant" and rng.random() < 0.5:
        value = floats(rng, pick(rng, [(), (1,)]))
    if with_axes:
        ins += [value, ints([a - rank if rng.random() < 0.4 else a for a in axes])]
    elif value is not None:
        ins.append(value)
    fed = [a is not None and (np.asarray(a).dtype.kind == "f" or
                              (j == 1 and not with_axes and rng.random() < 0.2))
           for j, a in enumerate(ins)]
    return case("Pad", ins, {"mode": mode}, fed=fed,
                expect="Pad gradient in [a-z]+ mode needs pads" if mode != "constant"
                and fed[1] else None)


def draw_gather(rng):
    """Gather (any axis, negative and repeated indices), GatherElements, GatherND
    (batch_dims 0 and more, an empty batch or index list now and then)."""
    op = pick(rng, ["Gather", "GatherElements", "GatherND"])
    rank = int(rng.integers(1, 5 if op == "GatherND" else 4))
    shape = dims(rng, rank)
    data = floats(rng, shape)
    if op == "Gather":
        axis = int(rng.integers(-rank, rank))
        d = shape[axis]
        if _EMPTIES and rng.random() < 0.1:   # an empty dim beside the axis
            shape = maybe_empty(rng, shape, 1.0) if rank > 1 else shape
            shape[axis] = d
            data = floats(rng, shape)
        idx = rng.integers(-d, d, maybe_empty(rng, dims(rng, int(rng.integers(0, 3)), 1, 3)))
        return case(op, [data, ints(idx)], {"axis": axis}, fed=[True, rng.random() < 0.3])
    if op == "GatherElements":
        axis = int(rng.integers(-rank, rank))
        ishape = [int(rng.integers(1, d + 1)) for d in shape]
        ishape[axis] = int(rng.integers(1, 4))
        idx = rng.integers(-shape[axis], shape[axis], ishape)
        return case(op, [data, ints(idx)], {"axis": axis})
    bd = int(rng.integers(0, rank)) if rng.random() < 0.3 else 0
    m = int(rng.integers(1, rank - bd + 1))
    if _EMPTIES and bd and rng.random() < 0.1:   # no batches
        shape[0] = 0
        data = floats(rng, shape)
    batch = shape[:bd]
    ishape = batch + maybe_empty(rng, dims(rng, int(rng.integers(0, 3)), 1, 3), 0.1) + [m]
    idx = np.stack([rng.integers(-shape[bd + j], shape[bd + j], ishape[:-1])
                    for j in range(m)], axis=-1)
    attrs = {"batch_dims": bd} if bd or rng.random() < 0.3 else {}
    return case(op, [data, ints(idx).reshape(ishape)], attrs)


def draw_scatter(rng):
    """ScatterElements / ScatterND with reduction none (each position written once),
    add, max and min (repeats allowed; max/min over distinct values, no ties), and mul
    (must raise)."""
    op = pick(rng, ["ScatterElements", "ScatterND"])
    red = pick(rng, ["none", "add", "mul", "max", "min"], [0.4, 0.4, 0.1, 0.05, 0.05])
    rank = int(rng.integers(1, 4))
    shape = dims(rng, rank)
    data = floats(rng, shape)
    if op == "ScatterElements":
        axis = int(rng.integers(-rank, rank))
        ishape = [int(rng.integers(1, d + 1)) for d in shape]
        d = shape[axis]
        if red == "none":
            ishape[axis] = int(rng.integers(1, d + 1))
            moved = list(ishape)
            moved.append(moved.pop(axis))
            lines = [rng.permutation(d)[:moved[-1]] for _ in range(int(np.prod(moved[:-1])))]
            idx = np.moveaxis(np.array(lines).reshape(moved), -1, axis)
        else:
            ishape[axis] = int(rng.integers(1, 4))
            idx = rng.integers(0, d, ishape)
        idx = np.where(rng.random(idx.shape) < 0.3, idx - d, idx)
        upd = floats(rng, idx.shape)
        attrs = {"axis": axis, "reduction": red} if red != "none" or rng.random() < 0.5 \
            else {"axis": axis}
    else:
        m = int(rng.integers(1, rank + 1))
        lead = dims(rng, int(rng.integers(0, 3)), 1, 3)
        count = int(np.prod(lead, dtype=np.int64))
        space = int(np.prod(shape[:m]))
        if red == "none":
            if count > space:
                lead, count = [space], space
            flat = rng.permutation(space)[:count]
        else:
            flat = rng.integers(0, space, count)
        idx = np.stack(np.unravel_index(flat, shape[:m]), axis=-1).reshape(lead + [m])
        idx = np.where(rng.random(idx.shape) < 0.3, idx - np.array(shape[:m]), idx)
        upd = floats(rng, lead + shape[m:])
        attrs = {"reduction": red} if red != "none" or rng.random() < 0.5 else {}
    if red in ("max", "min"):
        both = distinct(rng, [data.size + upd.size])
        data, upd = both[:data.size].reshape(data.shape), both[data.size:].reshape(upd.shape)
    return case(op, [data, ints(idx), upd], attrs, expect=op if red == "mul" else None)


def draw_tile_expand(rng):
    """Tile (repeats 0-3, sometimes fed) and Expand (rank growth, 1 <-> d broadcast)."""
    rank = int(rng.integers(1, 4))
    shape = maybe_empty(rng, dims(rng, rank, 1, 3))
    if rng.random() < 0.5:
        reps = [int(rng.integers(0 if _EMPTIES and rng.random() < 0.1 else 1, 4))
                for _ in shape]
        return case("Tile", [floats(rng, shape), ints(reps)],
                    fed=[True, rng.random() < 0.3])
    shape = [1 if rng.random() < 0.4 else d for d in shape]
    extra = dims(rng, int(rng.integers(0, 3)), 1, 3)
    target = extra + [int(rng.integers(1, 4)) if d == 1 else pick(rng, [d, 1])
                      for d in shape]
    target = target[int(rng.integers(0, len(extra) + 1)):] if rng.random() < 0.2 else target
    return case("Expand", [floats(rng, shape), ints(target)], fed=[True, rng.random() < 0.3])


def draw_concat_split(rng):
    """Concat (1-4 inputs, negative axis, empty parts) and Split (uneven split input,
    num_outputs with an uneven last part, unused outputs)."""
    rank = int(rng.integers(1, 4))
    shape = dims(rng, rank)
    axis = int(rng.integers(-rank, rank))
    if rng.random() < 0.5:
        parts = []
        for _ in range(int(rng.integers(1, 5))):
            s = list(shape)
            s[axis] = int(rng.integers(0 if _EMPTIES and rng.random() < 0.15 else 1, 4))
            parts.append(floats(rng, s))
        return case("Concat", parts, {"axis": axis})
    shape[axis] = int(rng.integers(1, 7))
    d = shape[axis]
    x = floats(rng, shape)
    if rng.random() < 0.5:
        n = int(rng.integers(1, d + 1))
        cuts = np.sort(rng.choice(np.arange(0, d + 1), n - 1, replace=True) if _EMPTIES
                       else rng.choice(np.arange(1, d), n - 1, replace=False))
        sizes = np.diff(np.concatenate([[0], cuts, [d]]))
        c = case("Split", [x, ints(sizes)], {"axis": axis}, num_outputs=n)
    else:
        n = int(rng.integers(1, d + 1))
        c = case("Split", [x], {"axis": axis, "num_outputs": n})
    if rng.random() < 0.4 and n > 1:
        c["outputs"] = sorted(int(i) for i in rng.permutation(n)[:int(rng.integers(1, n))])
    return c


def draw_transpose_reshape(rng):
    """Transpose (random or default perm), Reshape with 0 and -1 in the shape,
    Squeeze, Unsqueeze, Flatten; now and then of an empty tensor."""
    rank = int(rng.integers(1, 5))
    shape = maybe_empty(rng, dims(rng, rank), 0.1)
    x = floats(rng, shape)
    other = pick(rng, [None, "Squeeze", "Unsqueeze", "Flatten"], [0.6, 0.15, 0.15, 0.1])
    if other == "Squeeze":
        shape = [1 if rng.random() < 0.4 else d for d in shape]
        ones = [i for i, d in enumerate(shape) if d == 1]
        chosen = [i - rank if rng.random() < 0.4 else i for i in ones if rng.random() < 0.7]
        ins = [floats(rng, shape)] + ([ints(chosen)] if chosen or rng.random() < 0.5 else [])
        return case("Squeeze", ins)
    if other == "Unsqueeze":
        n = int(rng.integers(1, 3))
        out_rank = rank + n
        axes = [int(a) for a in rng.permutation(out_rank)[:n]]
        return case("Unsqueeze", [x, ints([a - out_rank if rng.random() < 0.4 else a
                                             for a in axes])])
    if other == "Flatten":
        return case("Flatten", [x], {"axis": int(rng.integers(-rank, rank + 1))})
    if rng.random() < 0.5 or 0 in shape:
        attrs = {} if rng.random() < 0.2 else {"perm": [int(p) for p in rng.permutation(rank)]}
        return case("Transpose", [x], attrs)
    target = []
    rest = int(np.prod(shape))
    # keep a prefix with 0 (copy the input's dim), then factor the rest
    for i in range(rank):
        if rng.random() < 0.3 and rest % shape[i] == 0 and i == len(target):
            target.append(0)
            rest //= shape[i]
    while rest > 1 and rng.random() < 0.7:
        f = [q for q in range(2, rest + 1) if rest % q == 0]
        q = int(pick(rng, f))
        target.append(q)
        rest //= q
    target.append(rest if rng.random() < 0.5 else -1)
    if rng.random() < 0.3:
        j = int(rng.integers(len(target)))
        if target[j] > 0 and -1 not in target:
            target[j] = -1
    return case("Reshape", [x, ints(target)], fed=[True, rng.random() < 0.3])


def draw_depth_space(rng):
    """DepthToSpace (DCR, CRD) and SpaceToDepth, blocksize 1-3."""
    bs = int(rng.integers(1, 4))
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    if rng.random() < 0.5:
        mode = pick(rng, ["DCR", "CRD"])
        attrs = {"blocksize": bs} if mode == "DCR" and rng.random() < 0.5 else \
            {"blocksize": bs, "mode": mode}
        x = floats(rng, [n, c * bs * bs] + dims(rng, 2, 1, 3))
        return case("DepthToSpace", [x], attrs)
    x = floats(rng, [n, c] + [bs * int(rng.integers(1, 3)) for _ in range(2)])
    return case("SpaceToDepth", [x], {"blocksize": bs})


_COORD = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
          "asymmetric", "tf_crop_and_resize"]


def draw_resize(rng):
    """Resize: nearest (every nearest_mode), linear, cubic (coeff, exclude_outside),
    every coordinate_transformation_mode (crop with a roi and extrapolation value),
    scales or sizes (keep_aspect_ratio_policy), an axes subset, antialias."""
    rank = int(rng.integers(1, 5))
    shape = dims(rng, rank, 1, 5)
    mode = pick(rng, ["nearest", "linear", "cubic"])
    coord = pick(rng, _COORD)
    attrs = {"mode": mode, "coordinate_transformation_mode": coord}
    if mode == "nearest":
        attrs["nearest_mode"] = pick(rng, ["round_prefer_floor", "round_prefer_ceil",
                                           "floor", "ceil"])
    if mode == "cubic":
        attrs["cubic_coeff_a"] = float(pick(rng, [-0.75, -0.5, -0.6]))
        attrs["exclude_outside"] = int(rng.integers(0, 2))
    if mode != "nearest" and rng.random() < 0.3:
        attrs["antialias"] = 1
    axes = list(range(rank))
    if rng.random() < 0.4:
        axes = sorted(int(a) for a in rng.permutation(rank)[:int(rng.integers(1, rank + 1))])
        attrs["axes"] = [a - rank if rng.random() < 0.3 else a for a in axes]
    elif rank > 2 and rng.random() < 0.7:
        axes = axes[2:] if rng.random() < 0.5 else axes  # NCHW: resize the spatial dims
    naxes = len(axes)
    roi = None
    if coord == "tf_crop_and_resize":
        lo = rng.uniform(-0.3, 0.5, naxes)
        hi = lo + rng.uniform(0.3, 1.0, naxes)
        roi = np.concatenate([lo, hi])
        attrs["extrapolation_value"] = float(rng.uniform(-1, 1))
        if "axes" not in attrs:
            full_lo, full_hi = np.zeros(rank), np.ones(rank)
            full_lo[axes], full_hi[axes] = lo, hi
            roi = np.concatenate([full_lo, full_hi])
    scales = sizes = None
    if rng.random() < 0.5:
        scales = np.array([float(pick(rng, [0.5, 0.6, 0.75, 1.0, 1.5, 1.7, 2.0, 3.0]))
                           for _ in range(naxes)])
        span = (roi[naxes:] - roi[:naxes]) if roi is not None and roi.size == 2 * naxes \
            else (roi[rank:] - roi[:rank])[axes] if roi is not None else np.ones(naxes)
        if not _EMPTIES:
            scales = np.maximum(scales, 1.01 / (np.array(shape)[axes] * span))
        if "axes" not in attrs:
            full = np.ones(rank)
            full[axes] = scales
            scales = full
    else:
        sizes = [int(rng.integers(1, 7)) for _ in range(naxes)]
        if "axes" not in attrs:
            full = list(shape)
            for a, s in zip(axes, sizes):
                full[a] = s
            sizes = full
        sizes = ints(sizes)
        if rng.random() < 0.3:
            # (not_larger / not_smaller can round an axis to 0 cells)
            attrs["keep_aspect_ratio_policy"] = pick(
                rng, ["stretch", "not_larger", "not_smaller"] if _EMPTIES else ["stretch"])
    ins = [floats(rng, shape), roi, scales, sizes]
    return case("Resize", ins, attrs, fed=[True, False, False, False])


def draw_trilu(rng):
    """Trilu, upper/lower, k omitted or -4..4, ranks 2-4."""
    rank = int(rng.integers(2, 5))
    x = floats(rng, dims(rng, rank, 1, 4))
    attrs = {"upper": int(rng.integers(0, 2))} if rng.random() < 0.8 else {}
    ins = [x] + ([ints(int(rng.integers(-4, 5)))] if rng.random() < 0.7 else [])
    return case("Trilu", ins, attrs, fed=[True] + [rng.random() < 0.2] * (len(ins) - 1))


# --------------------------------------------------------------------------------------
# Reductions, softmax, linear algebra
# --------------------------------------------------------------------------------------

_REDUCE = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
           "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum"]


def draw_reduce(rng):
    """Reduce*: random axes (negative, shuffled, empty or omitted), keepdims,
    noop_with_empty_axes; values away from each op's kinks."""
    op = pick(rng, _REDUCE)
    rank = int(rng.integers(0 if rng.random() < 0.1 else 1, 5))
    shape = dims(rng, rank)
    if op in ("ReduceMax", "ReduceMin"):
        x = distinct(rng, shape)
    elif op in ("ReduceL1", "ReduceProd"):
        x = away(rng, shape, 0.5 if op == "ReduceProd" else 0.2)
        if op == "ReduceProd" and rng.random() < 0.2:
            x.flat[int(rng.integers(x.size))] = 0.0   # the product is smooth at a zero
    elif op == "ReduceLogSum":
        x = floats(rng, shape, 0.3, 1.5)
    else:
        x = floats(rng, shape)
    attrs = {}
    if rng.random() < 0.5:
        attrs["keepdims"] = int(rng.integers(0, 2))
    form = pick(rng, ["axes", "omitted", "empty"], [0.7, 0.15, 0.15] if rank else
                [0.0, 0.5, 0.5])
    ins = [x]
    if form == "axes":
        n = int(rng.integers(1, rank + 1))
        ins.append(ints([int(a) - rank if rng.random() < 0.4 else int(a)
                         for a in rng.permutation(rank)[:n]]))
    elif form == "empty":
        ins.append(ints(np.zeros(0)))
    if form != "axes" or rng.random() < 0.2:
        attrs["noop_with_empty_axes"] = int(rng.integers(0, 2))
    return case(op, ins, attrs, fed=[True] + [rng.random() < 0.2] * (len(ins) - 1))


def draw_cumsum(rng):
    """CumSum along a random axis (negative, int32 or int64), exclusive, reverse."""
    rank = int(rng.integers(1, 4))
    x = floats(rng, maybe_empty(rng, dims(rng, rank, 1, 5)))
    axis = np.asarray(int(rng.integers(-rank, rank)), pick(rng, [np.int64, np.int32]))
    attrs = {k: int(rng.integers(0, 2)) for k in ("exclusive", "reverse") if rng.random() < 0.7}
    return case("CumSum", [x, axis], attrs, fed=[True, rng.random() < 0.2])


def draw_softmax(rng):
    """Softmax, LogSoftmax (any axis) and Hardmax (times x, over distinct values)."""
    op = pick(rng, ["Softmax", "LogSoftmax", "Hardmax"])
    rank = int(rng.integers(1, 5))
    shape = maybe_empty(rng, dims(rng, rank))
    attrs = {} if rng.random() < 0.2 else {"axis": int(rng.integers(-rank, rank))}
    if op == "Hardmax":
        return case(op, [distinct(rng, shape)], attrs,
                    post=lambda outs, phs: outs[0] * phs[0])
    return case(op, [floats(rng, shape, -2, 2)], attrs)


def draw_top_k(rng):
    """TopK's values over distinct inputs: any axis, k 0..n, largest, sorted."""
    rank = int(rng.integers(1, 4))
    shape = dims(rng, rank, 1, 5)
    axis = int(rng.integers(-rank, rank))
    attrs = {"axis": axis}
    for k in ("largest", "sorted"):
        if rng.random() < 0.5:
            attrs[k] = int(rng.integers(0, 2))
    k = ints([int(rng.integers(0, shape[axis] + 1))])
    return case("TopK", [distinct(rng, shape), k], attrs, num_outputs=2, outputs=[0],
                fed=[True, rng.random() < 0.2])


def draw_einsum(rng):
    """Einsum over 1-3 operands: random subscripts with repeats inside an operand
    (diagonals), ellipses with broadcasting, explicit or implicit outputs."""
    letters = "abcdefg"
    size = {ch: int(rng.integers(1, 4)) for ch in letters}
    n_ops = int(rng.integers(1, 4))
    ell = rng.random() < 0.3
    ell_shape = dims(rng, int(rng.integers(0, 3)), 1, 3) if ell else []
    terms, shapes = [], []
    for _ in range(n_ops):
        rank = int(rng.integers(0, 4))
        subs = [pick(rng, list(letters[:5])) for _ in range(rank)]
        use_ell = ell and rng.random() < 0.7
        shp = [size[ch] for ch in subs]
        if use_ell:
            k = int(rng.integers(0, len(ell_shape) + 1))
            e = [1 if rng.random() < 0.3 else d for d in ell_shape[len(ell_shape) - k:]]
            pos = int(rng.integers(0, len(subs) + 1))
            terms.append("".join(subs[:pos]) + "..." + "".join(subs[pos:]))
            shp = shp[:pos] + e + shp[pos:]
        else:
            terms.append("".join(subs))
        shapes.append(shp)
    used = sorted(set("".join(terms).replace(".", "")))
    any_ell = any("..." in t for t in terms)
    if rng.random() < 0.7:
        out = [ch for ch in rng.permutation(used) if rng.random() < 0.6]
        out_s = "".join(out)
        if any_ell:
            pos = int(rng.integers(0, len(out_s) + 1))
            out_s = out_s[:pos] + "..." + out_s[pos:]
        eq = ",".join(terms) + "->" + out_s
    else:
        eq = ",".join(terms)
    return case("Einsum", [floats(rng, s) for s in shapes], {"equation": eq})


def draw_matmul(rng):
    """MatMul of ranks 1-4 with broadcast batch dims (now and then k = 0)."""
    m, k, n = (int(rng.integers(1, 5)) for _ in range(3))
    k = 0 if _EMPTIES and rng.random() < 0.05 else k
    ra, rb = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    batch = dims(rng, max(ra, rb) - 2, 1, 3) if max(ra, rb) > 2 else []

    def shape(r, core):
        """An operand of rank r around its (rows, cols) core, batch dims broadcast."""
        if r == 1:
            return [core[1 if core is a_core else 0]]
        b = batch[len(batch) - (r - 2):] if r > 2 else []
        b = [1 if rng.random() < 0.3 else d for d in b]
        return b + core
    a_core, b_core = [m, k], [k, n]
    return case("MatMul", [floats(rng, shape(ra, a_core)), floats(rng, shape(rb, b_core))])


def draw_gemm(rng):
    """Gemm: transA/transB, alpha/beta, C absent or of any broadcastable shape (now and
    then k = 0)."""
    m, k, n = (int(rng.integers(1, 5)) for _ in range(3))
    k = 0 if _EMPTIES and rng.random() < 0.05 else k
    attrs = {}
    ta, tb = int(rng.integers(0, 2)), int(rng.integers(0, 2))
    if ta or rng.random() < 0.3:
        attrs["transA"] = ta
    if tb or rng.random() < 0.3:
        attrs["transB"] = tb
    if rng.random() < 0.5:
        attrs["alpha"] = float(rng.uniform(-2, 2))
    if rng.random() < 0.5:
        attrs["beta"] = float(rng.uniform(-2, 2))
    a = floats(rng, [k, m] if ta else [m, k])
    b = floats(rng, [n, k] if tb else [k, n])
    c_shape = pick(rng, [None, (), (1,), (n,), (m, 1), (1, n), (m, n), (1, 1)])
    ins = [a, b] + ([] if c_shape is None else [floats(rng, c_shape)])
    return case("Gemm", ins, attrs)


# --------------------------------------------------------------------------------------
# Normalization
# --------------------------------------------------------------------------------------


def draw_batch_norm(rng):
    """BatchNormalization, inference (mean/var inputs get gradients) or training_mode
    (batch statistics; the running mean/var outputs too), ranks 2-5."""
    rank = int(rng.integers(2, 6))
    shape = [int(rng.integers(1, 4)), int(rng.integers(1, 4))] + dims(rng, rank - 2, 1, 3)
    c = shape[1]
    ins = [floats(rng, shape), floats(rng, [c]), floats(rng, [c]), floats(rng, [c]),
           floats(rng, [c], 0.5, 1.5)]
    attrs = {}
    if rng.random() < 0.5:
        attrs["epsilon"] = float(pick(rng, [1e-5, 1e-3, 0.1]))
    training = rng.random() < 0.5
    if training:
        if int(np.prod(shape)) // c < 2:
            shape[0] = 2
            ins[0] = floats(rng, shape)
        attrs["training_mode"] = 1
        if rng.random() < 0.5:
            attrs["momentum"] = float(rng.uniform(0.1, 0.99))
        outs = pick(rng, [None, [0], [1], [2], [0, 2]])
        return case("BatchNormalization", ins, attrs, num_outputs=3, outputs=outs)
    return case("BatchNormalization", ins, attrs)


def draw_instance_norm(rng):
    """InstanceNormalization, ranks 3-5."""
    rank = int(rng.integers(3, 6))
    shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + dims(rng, rank - 2, 1, 3)
    if int(np.prod(shape[2:])) < 2:
        shape[-1] = 2
    c = shape[1]
    attrs = {"epsilon": float(pick(rng, [1e-5, 1e-2]))} if rng.random() < 0.5 else {}
    return case("InstanceNormalization",
                [floats(rng, shape), floats(rng, [c]), floats(rng, [c])], attrs)


def draw_layer_norm(rng):
    """LayerNormalization: any axis (negative too), scale/bias over the normalized dims
    (sometimes broadcast), bias omitted, the Mean/InvStdDev outputs unused."""
    rank = int(rng.integers(1, 5))
    shape = dims(rng, rank)
    axis = int(rng.integers(-rank, rank))
    norm = shape[axis % rank:]
    if int(np.prod(norm)) < 2:
        shape[-1] = 2
        norm = shape[axis % rank:]

    def param():
        """A scale/bias shape: the normalized dims, some 1, sometimes fewer of them."""
        p = [1 if rng.random() < 0.2 else d for d in norm]
        return p[int(rng.integers(0, len(p) + 1)):] if rng.random() < 0.2 else p
    ins = [floats(rng, shape), floats(rng, param())]
    if rng.random() < 0.6:
        ins.append(floats(rng, param()))
    attrs = {"axis": axis} if axis != -1 or rng.random() < 0.5 else {}
    if rng.random() < 0.4:
        attrs["epsilon"] = float(pick(rng, [1e-5, 1e-2]))
    if rng.random() < 0.3:
        return case("LayerNormalization", ins, attrs, num_outputs=3, outputs=[0])
    return case("LayerNormalization", ins, attrs)


def draw_group_norm(rng):
    """GroupNormalization, per-channel (C,) or per-group (G,) scale and bias."""
    rank = int(rng.integers(2, 5))
    groups = int(rng.integers(1, 4))
    c = groups * int(rng.integers(1, 3))
    shape = [int(rng.integers(1, 3)), c] + dims(rng, rank - 2, 1, 3)
    if int(np.prod(shape[2:])) * (c // groups) < 2:
        shape.append(2)
    per = pick(rng, [c, groups])
    attrs = {"num_groups": groups}
    if rng.random() < 0.4:
        attrs["epsilon"] = float(pick(rng, [1e-5, 1e-2]))
    return case("GroupNormalization",
                [floats(rng, shape), floats(rng, [per]), floats(rng, [per])], attrs)


# --------------------------------------------------------------------------------------
# Other ops with rules: Compress, ReverseSequence, Dropout, OneHot, Where,
# LpNormalization, MeanVarianceNormalization
# --------------------------------------------------------------------------------------


def draw_misc(rng):
    """One of the other ops with gradient rules, its attributes drawn."""
    op = pick(rng, ["Compress", "ReverseSequence", "Dropout", "OneHot", "Where",
                    "LpNormalization", "MeanVarianceNormalization"])
    rank = int(rng.integers(1, 5))
    shape = dims(rng, rank)
    if op == "Compress":
        axis = int(rng.integers(-rank, rank)) if rng.random() < 0.7 else None
        n = shape[axis] if axis is not None else int(np.prod(shape))
        cond = rng.random(int(rng.integers(0, n + 1))) < 0.5
        return case(op, [floats(rng, shape), cond], {} if axis is None else {"axis": axis})
    if op == "ReverseSequence":
        shape = dims(rng, max(rank, 2))
        batch_axis = int(rng.integers(0, 2))
        attrs = {"batch_axis": batch_axis, "time_axis": 1 - batch_axis}
        lens = rng.integers(1, shape[1 - batch_axis] + 1, shape[batch_axis])
        return case(op, [floats(rng, shape), ints(lens)], attrs)
    if op == "Dropout":
        ins = [floats(rng, shape)]
        form = pick(rng, ["training", "inference", "no_inputs"])
        if form != "no_inputs":
            ins += [np.asarray(float(pick(rng, [0.0, 0.3, 0.5, 0.75]))),
                    np.asarray(form == "training")]
        fed = [True] + [False] * (len(ins) - 1)
        # the mask output (bool) is not differentiable; without it the rule raises when
        # training_mode is given (and passes dy through in inference mode)
        if rng.random() < 0.15:
            return case(op, ins, {"seed": int(rng.integers(0, 100))}, fed=fed,
                        expect="Dropout" if len(ins) > 2 else None)
        return case(op, ins, {"seed": int(rng.integers(0, 100))}, fed=fed, num_outputs=2,
                    outputs=[0])
    if op == "OneHot":
        depth = int(rng.integers(1, 5))
        idx = rng.integers(-depth, depth, shape)
        attrs = {"axis": int(rng.integers(-rank - 1, rank + 1))}
        return case(op, [ints(idx), ints(depth), floats(rng, [2])], attrs)
    if op == "Where":
        cond = rng.random(shape) < 0.5
        ys = [d if rng.random() < 0.7 else 1 for d in shape]
        ys = ys[int(rng.integers(0, rank + 1)):] if rng.random() < 0.3 else ys
        return case(op, [cond, floats(rng, shape), floats(rng, ys)])
    if op == "LpNormalization":
        p = int(rng.integers(1, 3))
        x = away(rng, shape) if p == 1 else floats(rng, shape)
        return case(op, [x], {"axis": int(rng.integers(-rank, rank)), "p": p})
    shape = dims(rng, max(rank, 2), 2, 4)
    axes = sorted(int(a) for a in rng.permutation(len(shape))[:int(rng.integers(1, len(shape)
                                                                                 + 1))])
    return case(op, [floats(rng, shape)], {"axes": axes})


_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                 "LSTM": ["Sigmoid", "Tanh", "Tanh"]}


def draw_recurrent(rng):
    """RNN / GRU / LSTM: direction, layout, optional bias, sequence_lens, initial states
    and peepholes, linear_before_reset, input_forget, the default activations spelled
    out, any subset of the outputs; other activations and clip must raise."""
    op = pick(rng, ["RNN", "GRU", "LSTM"])
    g = _GATES[op]
    steps, batch, size, hidden = (int(rng.integers(1, 4)) for _ in range(4))
    direction = pick(rng, ["forward", "reverse", "bidirectional"])
    nd = 2 if direction == "bidirectional" else 1
    layout = int(rng.integers(0, 2))
    x = floats(rng, [steps, batch, size] if layout == 0 else [batch, steps, size])
    state = [nd, batch, hidden] if layout == 0 else [batch, nd, hidden]
    ins = [x, floats(rng, [nd, g * hidden, size]), floats(rng, [nd, g * hidden, hidden])]
    optional = [floats(rng, [nd, 2 * g * hidden]) if rng.random() < 0.6 else None,
                ints(rng.integers(1, steps + 1, batch)) if rng.random() < 0.4 else None,
                floats(rng, state) if rng.random() < 0.5 else None]
    if op == "LSTM":
        optional += [floats(rng, state) if rng.random() < 0.5 else None,
                     floats(rng, [nd, 3 * hidden]) if rng.random() < 0.5 else None]
    ins += optional
    attrs = {"hidden_size": hidden}
    if direction != "forward" or rng.random() < 0.3:
        attrs["direction"] = direction
    if layout or rng.random() < 0.2:
        attrs["layout"] = layout
    if op == "GRU" and rng.random() < 0.5:
        attrs["linear_before_reset"] = int(rng.integers(0, 2))
    if op == "LSTM" and rng.random() < 0.3:
        attrs["input_forget"] = int(rng.integers(0, 2))
    expect = None
    what = pick(rng, ["plain", "default_acts", "other_acts", "clip"], [0.8, 0.1, 0.05, 0.05])
    if what == "default_acts":
        attrs["activations"] = _DEFAULT_ACTS[op] * nd
    elif what == "other_acts":
        attrs["activations"] = ["Relu"] * len(_DEFAULT_ACTS[op]) * nd
        expect = "activations"
    elif what == "clip":
        attrs["clip"] = float(rng.uniform(1.0, 3.0))
        expect = "clip"
    k = int(rng.integers(1, 4 if op == "LSTM" else 3))
    outs = sorted(int(i) for i in rng.permutation(k)[:int(rng.integers(1, k + 1))])
    return case(op, ins, attrs, num_outputs=k, outputs=outs, expect=expect)


# --------------------------------------------------------------------------------------
# The sweep
# --------------------------------------------------------------------------------------

# family -> (draw, weight: draws per _PER_FAMILY unit)
FAMILIES = {
    "conv": (draw_conv, 3), "conv_transpose": (draw_conv_transpose, 3),
    "conv_paths": (draw_conv_paths, 1),
    "max_pool": (draw_max_pool, 2), "average_pool": (draw_average_pool, 2),
    "lp_pool": (draw_lp_pool, 1), "global_pool_lrn": (draw_global_pool_lrn, 1),
    "slice": (draw_slice, 2), "pad": (draw_pad, 1), "gather": (draw_gather, 2),
    "scatter": (draw_scatter, 2), "tile_expand": (draw_tile_expand, 1),
    "concat_split": (draw_concat_split, 1), "transpose_reshape": (draw_transpose_reshape, 1),
    "depth_space": (draw_depth_space, 1), "resize": (draw_resize, 3),
    "trilu": (draw_trilu, 1), "reduce": (draw_reduce, 3), "cumsum": (draw_cumsum, 1),
    "softmax": (draw_softmax, 1), "top_k": (draw_top_k, 1), "einsum": (draw_einsum, 2),
    "matmul": (draw_matmul, 1), "gemm": (draw_gemm, 1), "batch_norm": (draw_batch_norm, 2),
    "instance_norm": (draw_instance_norm, 1), "layer_norm": (draw_layer_norm, 1),
    "group_norm": (draw_group_norm, 1), "misc": (draw_misc, 2),
    "recurrent": (draw_recurrent, 2),
}


# the share of draws that pass one tensor as two same-shaped inputs (`builder`), and
# the ops where that would leave the differentiable ground (a variance input taking a
# negative scale's values)
_TIED = 0.1
_NO_TIE = {"BatchNormalization"}
# rules that need static shapes and say so (GradientNotDefinedError) when dims are
# known only at run time: op -> case -> the message's pattern (None: no need)
_NEEDS_STATIC = {
    "DepthToSpace": lambda c: None if c["attrs"].get("mode", "DCR") == "DCR" else
    "DepthToSpace gradient in CRD mode needs the input's channel count",
    "LpPool": lambda c: "LpPool gradient with ceil_mode=1 needs the spatial dims"
    if c["attrs"].get("ceil_mode") else None,
    "Pad": lambda c: None if c["attrs"]["mode"] == "constant"
    or not np.any(c["inputs"][1]) else "Pad gradient in [a-z]+ mode needs the padded dims",
}


def draws(family, seed=_SEED, count=None):
    """The deterministic draws of one family for one seed."""
    draw, weight = FAMILIES[family]
    rng = np.random.default_rng([seed, sorted(FAMILIES).index(family)])
    n = _PER_FAMILY * weight if count is None else count
    out = []
    for _ in range(n):
        c = draw(rng)
        floats_fed = [j for j, (a, f) in enumerate(zip(c["inputs"], c["fed"]))
                      if f and np.asarray(a).dtype.kind == "f"]
        if rng.random() < _TIED and c["op"] not in _NO_TIE:
            pairs = [(i, j) for i in floats_fed for j in floats_fed
                     if i < j and np.shape(c["inputs"][i]) == np.shape(c["inputs"][j])]
            if pairs:
                i, j = pairs[int(rng.integers(len(pairs)))]
                c["tied"] = {j: i}
                c["inputs"][j] = c["inputs"][i]   # (what show() prints)
                floats_fed.remove(j)
        if rng.random() < _DYNAMIC:
            c["dynamic"] = floats_fed
            if c["op"] in _NEEDS_STATIC and c["expect"] is None:
                c["expect"] = _NEEDS_STATIC[c["op"]](c)
        out.append(c)
    return out


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_gradient_sweep(family):
    """Every draw of the family agrees with central differences (or raises as expected)."""
    for i, c in enumerate(draws(family)):
        check_case(c, seed=i)


# --------------------------------------------------------------------------------------
# Minimal reproductions of what the hunts found (each failed before its fix)
# --------------------------------------------------------------------------------------

_X23 = np.arange(6.0).reshape(2, 3) / 7.0 - 0.3
_X1C4 = np.sin(np.arange(8.0)).reshape(1, 2, 4)          # ConvTranspose (N, C, L)
_W_CT = np.cos(np.arange(12.0)).reshape(2, 3, 2) / 2.0   # (C, M, k)

FINDINGS = [
    # a zero repeat: the gradient's (repeat, dim) view had a literal 0, which Reshape
    # read as "copy the input's dim" (ShapeError)
    ("tile_zero_repeat", case("Tile", [_X23, ints([3, 0])])),
    # a scale that floors an axis to 0 output cells: ResizeGrad failed on the empty dy
    ("resize_empty_output", case("Resize", [_X23, None, np.array([0.4, 2.0])],
                                 {"mode": "linear"}, fed=[True, False, False])),
    # empty tensors: the shape-only ops' gradient Reshape read a 0 in x's shape as
    # "copy the input's dim" (ShapeError)
    ("unsqueeze_empty", case("Unsqueeze", [np.zeros((3, 0)), ints([0])])),
    ("flatten_empty", case("Flatten", [np.zeros((2, 0, 3))], {"axis": 2})),
    ("reshape_empty", case("Reshape", [np.zeros((0, 3)), ints([3, 0])], {"allowzero": 1})),
    # ... as did MatMul's for an empty 1-D operand (k = 0)
    ("matmul_empty_vector", case("MatMul", [np.zeros(0), np.zeros((2, 0, 3))])),
    # Gather on axis 0 with an empty row: the sparse values' shape [-1, 0] has no -1
    ("gather_empty_rows", case("Gather", [np.zeros((3, 0, 2)), ints([0, 2])])),
    # ... and with the row dims unknown while building: the run-time row shape [-1, 0]
    # could not infer its -1, nor could IndexedSlicesToDense reshape the values
    ("gather_empty_rows_unknown_dims",
     dict(case("Gather", [np.zeros((3, 0)), ints([1])]), dynamic=[0])),
    # inference-mode Dropout (no training_mode) without its mask output: the output is
    # x, its gradient dy; the rule asked for the mask
    ("dropout_inference_no_mask", case("Dropout", [_X23])),
    # the empty Resize output with x's dims unknown while building: ResizeGrad's
    # per-axis plans failed on the empty dy ("cannot reshape array of size 0")
    ("resize_empty_output_unknown_dims",
     dict(case("Resize", [_X23, None, np.array([0.4, 2.0])], {"mode": "linear"},
               fed=[True, False, False]), dynamic=[0])),
    # ConvTranspose was refused (GradientNotDefinedError) wherever its pads are not a
    # plain Conv's known while building; ConvTransposeGradInput/-Filter resolve them
    # per run. Spatial dims unknown while building, pads from auto_pad / output_shape:
    ("conv_transpose_same_unknown_dims",
     dict(case("ConvTranspose", [_X1C4, _W_CT], {"auto_pad": "SAME_LOWER",
                                                 "strides": [2]}), dynamic=[0, 1])),
    ("conv_transpose_output_shape_unknown_dims",
     dict(case("ConvTranspose", [_X1C4, _W_CT], {"output_shape": [8], "strides": [2]}),
          dynamic=[0])),
    # ... a SAME stride longer than the window (resolved begin pad -1 for 4 * 3 - 1)
    ("conv_transpose_same_negative_pad",
     case("ConvTranspose", [_X1C4, _W_CT[..., :1]], {"auto_pad": "SAME_UPPER",
                                                     "strides": [3]})),
    # ... an output_shape past the natural size (a negative end pad)
    ("conv_transpose_output_shape_past_natural",
     case("ConvTranspose", [_X1C4, _W_CT], {"output_shape": [9], "strides": [2]})),
    # ... output_padding in [stride, dilation)
    ("conv_transpose_output_padding_past_stride",
     case("ConvTranspose", [_X1C4, _W_CT], {"output_padding": [2], "strides": [2],
                                            "dilations": [3]})),
]


@pytest.mark.parametrize("c", [f[1] for f in FINDINGS], ids=[f[0] for f in FINDINGS])
def test_findings(c):
    """The minimal reproductions: each failed before its rule's fix."""
    check_case(c)

"""Plan-time rewrite: the exact Gelu written out with Erf becomes one Gelu step.

Exporters that predate ONNX's Gelu op (PyTorch below opset 20, TensorFlow, Hugging
Face's BERT code) spell Gelu(x) = 0.5 x (1 + erf(x / sqrt 2)) as five nodes:

    d = Div(x, sqrt 2)  or  Mul(x, 1 / sqrt 2)
    e = Erf(d)
    a = Add(e, 1)
    y = Mul(Mul(x, a), 0.5)  or  Mul(Mul(x, 0.5), a)  or  Mul(x, Mul(a, 0.5))

(either operand order in every Add and Mul). Five kernels make about 30 passes over
x plus four intermediates; the Gelu kernel makes 24 over scratch arrays that stay in
cache, and is more accurate in the negative tail (1 + erf cancels there).

A chain is rewritten only when its constants are single values of the stated
numbers (float32 or float64) and every intermediate is private: read by the next
step of the chain only, neither fetched, fed nor a graph output. At run time the
fused step computes Gelu when x is a float32 or float64 array of the constants'
dtype and at least their rank (so broadcasting leaves the shape alone), and runs the
five original kernels otherwise.
"""

from __future__ import annotations

import math

import numpy as np

from ..ops.activation import gelu as gelu_op

_DEFAULT_DOMAINS = ("", "ai.onnx")
_GELU_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# float32 rounds sqrt 2 and 1 / sqrt 2 to within 3e-8 relative
_CONSTANT_RTOL = 1e-6


def fuse_erf_gelu(steps, const, protected, Step):
    """Replace each Erf Gelu chain in `steps` by one step (see the module docstring).

    `const(i)` is tensor i's constant value or None; `protected` holds tensors that
    must stay materialised. Returns the new step list (`steps` itself when nothing
    matched); free lists are left for the caller to recompute.
    """
    producer = {t: k for k, s in enumerate(steps) for t in s.outputs if t >= 0}
    readers: dict[int, list[int]] = {}
    for k, s in enumerate(steps):
        for t in set(s.inputs):
            if t >= 0:
                readers.setdefault(t, []).append(k)

    def plain(k, op_type, n_inputs):
        s = steps[k]
        return s.node.op_type == op_type and s.node.domain in _DEFAULT_DOMAINS \
            and len(s.inputs) == n_inputs and len(s.outputs) == 1

    def private_reader(t):
        """The one step reading intermediate t, or None."""
        users = readers.get(t, [])
        if t in protected or len(users) != 1:
            return None
        return users[0]

    def other_operand(k, t, value):
        """Step k's operand besides t when that is a constant equal to `value`."""
        a, b = steps[k].inputs
        if (a == t) == (b == t):
            return None
        c = a if b == t else b
        v = const(c)
        if v is None or v.size != 1 or v.dtype not in _GELU_DTYPES \
                or not math.isclose(float(v.reshape(-1)[0]), value, rel_tol=_CONSTANT_RTOL):
            return None
        return c

    def scaled_input(k):
        """(x, scale constant) when step k is Div(x, sqrt 2) or Mul(x, 1 / sqrt 2)."""
        if plain(k, "Div", 2):
            x, c = steps[k].inputs
            if other_operand(k, x, math.sqrt(2.0)) == c:
                return x, c
        elif plain(k, "Mul", 2):
            for x in steps[k].inputs:
                c = other_operand(k, x, math.sqrt(0.5))
                if c is not None:
                    return x, c
        return None

    def tail(a, x):
        """(chain step indices, constants) of the Muls that turn a = 1 + erf into
        y = 0.5 x a, or None."""
        m = private_reader(a)
        if m is None or not plain(m, "Mul", 2):
            return None
        ins = steps[m].inputs
        product = steps[m].outputs[0]
        if sorted(ins) == sorted((a, x)) and a != x:            # Mul(x, a) * 0.5
            n = private_reader(product)
            if n is None or not plain(n, "Mul", 2):
                return None
            half = other_operand(n, product, 0.5)
            return ([m, n], [half]) if half is not None else None
        half = other_operand(m, a, 0.5)
        if half is not None:                                     # x * Mul(a, 0.5)
            n = private_reader(product)
            if n is not None and plain(n, "Mul", 2) \
                    and sorted(steps[n].inputs) == sorted((product, x)):
                return [m, n], [half]
            return None
        h = ins[0] if ins[1] == a else ins[1]                    # Mul(x, 0.5) * a
        k = producer.get(h)
        if h == a or k is None or private_reader(h) != m or not plain(k, "Mul", 2) \
                or x not in steps[k].inputs:
            return None
        half = other_operand(k, x, 0.5)
        return ([k, m], [half]) if half is not None else None

    replace: dict[int, object] = {}
    removed: set[int] = set()
    for k, erf in enumerate(steps):
        if not plain(k, "Erf", 1):
            continue
        d, e = erf.inputs[0], erf.outputs[0]
        j = producer.get(d)
        if j is None or private_reader(d) != k:
            continue
        scaled = scaled_input(j)
        add = private_reader(e)
        if scaled is None or add is None or not plain(add, "Add", 2):
            continue
        x, scale = scaled
        one = other_operand(add, e, 1.0)
        found = tail(steps[add].outputs[0], x) if one is not None else None
        if x < 0 or found is None:
            continue
        muls, halves = found
        chain = sorted([j, k, add] + muls)
        if removed.intersection(chain) or len(set(chain)) != 5:
            continue
        constants = {c: const(c) for c in (scale, one, *halves)}
        if len({v.dtype for v in constants.values()}) != 1:
            continue
        last = chain[-1]
        # Mul(x, 1 + erf) before the halving: x (1 + erf) overflows where x > max / 2
        doubles = sorted(steps[muls[0]].inputs) == sorted((steps[add].outputs[0], x))
        replace[last] = Step(_erf_gelu_kernel([steps[i] for i in chain], x, constants,
                                              doubles),
                             erf.attrs, (x,), steps[last].outputs, erf.node, (), False)
        removed.update(chain[:-1])
    if not replace:
        return steps
    return [replace.get(k, s) for k, s in enumerate(steps) if k not in removed]


def _erf_gelu_kernel(chain, x_index, constants, doubles=False):
    """One step computing the chain's output from x: Gelu when x is an array of the
    constants' float dtype and rank, else the chain's own kernels in order. With
    `doubles` the chain computes x (1 + erf(...)) before halving it, which overflows
    to inf where x > max / 2 (1 + erf is 2 there); the step gives that inf too."""
    dtype = next(iter(constants.values())).dtype
    rank = max(v.ndim for v in constants.values())
    output = chain[-1].outputs[0]
    half_max = dtype.type(np.finfo(dtype).max / 2)

    def kernel(inputs, attrs, ctx):
        x = inputs[0]
        if type(x) is np.ndarray and x.dtype == dtype and x.ndim >= rank:
            y = gelu_op(x)
            # (a max, no mask, on every call: the overflow is rare; fmax skips NaN)
            if doubles and x.size and np.fmax.reduce(x, axis=None) > half_max:
                y[x > half_max] = np.inf
            return (y,)
        values = dict(constants)
        values[x_index] = x
        for step in chain:
            outs = step.kernel([values[i] for i in step.inputs], step.attrs, ctx)
            values.update(zip(step.outputs, outs))
        return (values[output],)
    return kernel

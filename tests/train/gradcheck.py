"""Finite-difference gradient checking (the JAX `check_grads` recipe).

The loss is sum(output * R) for a fixed random R, evaluated in float64; the
analytic directional derivative <grad, v> along a random direction v is compared with
the central difference (L(x + eps v) - L(x - eps v)) / (2 eps).
"""

from __future__ import annotations

import numpy as np

import onegraph as og


def check_op_gradients(build, inputs, wrt=None, eps=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """Check og.gradients of `build(*placeholders)` against central differences.

    Args:
        build: function of input tensors returning one tensor (or a list).
        inputs: list of float64 arrays (non-float arrays are fed but not perturbed).
        wrt: indices of inputs to check (default: every float input).
    Returns:
        The analytic gradients (list of arrays).
    """
    rng = np.random.default_rng(seed)
    g = og.Graph()
    with g.as_default():
        phs = [og.placeholder(np.asarray(a).dtype, np.shape(a), name=f"in{i}")
               for i, a in enumerate(inputs)]
        outs = build(*phs)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        sess0 = og.Session(g, seed=1)
        feed = dict(zip(phs, inputs))
        values = sess0.run(list(outs), feed)
        weights = [og.constant(rng.standard_normal(np.shape(v)).astype(np.asarray(v).dtype))
                   for v in values]
        loss = og.add_n([og.reduce_sum(o * w) for o, w in zip(outs, weights)])
        if wrt is None:
            wrt = [i for i, a in enumerate(inputs) if np.asarray(a).dtype.kind == "f"]
        grads = og.gradients(loss, [phs[i] for i in wrt])
        grads = [gr.to_dense() if isinstance(gr, og.IndexedSlices) else gr for gr in grads]
    fetch = [gr for gr in grads if gr is not None]
    sess = og.Session(g, seed=1)
    got = sess.run(fetch, feed) if fetch else []
    analytic = []
    it = iter(got)
    for gr in grads:
        analytic.append(next(it) if gr is not None else None)
    for k, i in enumerate(wrt):
        x = np.asarray(inputs[i], dtype=np.float64)
        v = rng.standard_normal(x.shape)
        ga = analytic[k]
        ga = np.zeros_like(x) if ga is None else np.asarray(ga, np.float64)
        assert ga.shape == x.shape, (i, ga.shape, x.shape)

        def loss_at(xx):
            f = dict(feed)
            f[phs[i]] = xx
            og_seed_sess = og.Session(g, seed=1)
            return float(og_seed_sess.run(loss, f))
        numeric = (loss_at(x + eps * v) - loss_at(x - eps * v)) / (2 * eps)
        exact = float(np.sum(ga * v))
        assert abs(numeric - exact) <= atol + rtol * max(abs(numeric), abs(exact)) * 10, (
            f"input {i}: analytic {exact} vs numeric {numeric}")
    return analytic

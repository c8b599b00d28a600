"""Running a small graph of placeholders in a Session, for the API tests."""

import numpy as np

import onegraph as og


def run_on(fn, *arrays, dynamic=False):
    """fn of placeholders fed with `arrays` (their shapes, or all dims unknown)."""
    arrays = [np.asarray(a) for a in arrays]
    g = og.Graph()
    with g.as_default():
        phs = [og.placeholder(a.dtype, [None] * a.ndim if dynamic else a.shape)
               for a in arrays]
        out = fn(*phs)
    return og.Session(g, seed=0).run(out, dict(zip(phs, arrays)))

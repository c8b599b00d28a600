"""Running the TF1-compatibility cases (tests/train/tf1_<name>_cases.py, function-call
form) in onegraph and comparing with TensorFlow's recorded outputs and gradients
(tests/train/data/tf1_<name>_reference.npz, written by tools/record_tf1_reference.py),
and comparing nested recorded results of the other recorders (same_nested).
"""

import os

import numpy as np

import onegraph as og

DATA = os.path.join(os.path.dirname(__file__), "data")


def load(name: str) -> dict:
    """The recorded arrays of tf1_<name>_reference.npz (no pickle)."""
    with np.load(os.path.join(DATA, f"tf1_{name}_reference.npz"), allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def function(path: str):
    """og's function at a dotted path ("nn.conv2d_transpose")."""
    fn = og
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


def run_case(reference: dict, case, hidden_dims: dict | None = None) -> tuple:
    """(outputs, {input key: gradient}) of one case in onegraph, its "@key" inputs fed
    through placeholders of the recorded arrays; `hidden_dims` (key -> axes) leaves
    those axes of the placeholder unknown while building (axes None: its rank)."""
    name, path, args, kwargs, wrt = case
    g = og.Graph()
    with g.as_default():
        feeds, holders = {}, {}

        def value(v):
            if isinstance(v, str) and v.startswith("@"):
                key = v[1:]
                if key not in holders:
                    a = reference[f"in/{key}"]
                    hidden = (hidden_dims or {}).get(key, ())
                    shape = None if hidden is None else \
                        [None if i in hidden else d for i, d in enumerate(a.shape)]
                    holders[key] = og.placeholder(a.dtype, shape, name=key)
                    feeds[holders[key]] = a
                return holders[key]
            if isinstance(v, (tuple, list)):  # lists of shards, sampled_values, ...
                return type(v)(value(part) for part in v)
            return v

        result = function(path)(*[value(a) for a in args],
                                **{k: value(v) for k, v in kwargs.items()})
        several = f"nout/{name}" in reference
        outs = list(result) if several else [result]
        suffixes = [f"/{k}" for k in range(len(outs))] if several else [""]
        terms = [og.reduce_sum(og.cast(o, og.float64)
                               * og.constant(reference[f"r/{name}{s}"].astype(np.float64)))
                 for o, s in zip(outs, suffixes) if o.dtype in (og.float16, og.float32,
                                                                og.float64)]
        keys = [k[1:] for k in wrt if f"grad/{name}/{k[1:]}" in reference]
        grads = og.gradients(og.add_n(terms), [holders[k] for k in keys]) if keys else []
        got = og.Session(g).run(outs + list(grads), feeds)
    return got[:len(outs)], dict(zip(keys, (_dense(v) for v in got[len(outs):])))


def hidden_axes(reference: dict, case, kept: int = 0) -> dict:
    """run_case's hidden_dims that hide every axis, but the last `kept`, of each "@key"
    positional input of a case: its sizes known only when the graph runs."""
    keys = [a[1:] for a in case[2] if isinstance(a, str) and a.startswith("@")]
    return {k: tuple(range(reference[f"in/{k}"].ndim - kept)) for k in keys}


def _dense(value):
    """A fetched gradient as a dense array (a sparse one's rows summed into place, as
    TensorFlow's convert_to_tensor of IndexedSlices does)."""
    if not isinstance(value, og.IndexedSlicesValue):
        return value
    dense = np.zeros(value.dense_shape, value.values.dtype)
    np.add.at(dense, value.indices, value.values)
    return dense


def check_case(reference: dict, case, rtol=1e-5, atol=1e-5,
               hidden_dims: dict | None = None) -> None:
    """Assert a case's outputs (dtype, shape, values; exact for integers and bools)
    and gradients match TensorFlow's; atol scales with the largest magnitude.
    `hidden_dims` as run_case's."""
    name = case[0]
    outs, grads = run_case(reference, case, hidden_dims)
    several = f"nout/{name}" in reference
    if several:
        assert len(outs) == int(reference[f"nout/{name}"])
    for k, got in enumerate(outs):
        want = reference[f"out/{name}/{k}" if several else f"out/{name}"]
        assert got.shape == want.shape, (k, got.shape, want.shape)
        assert got.dtype == want.dtype, (k, got.dtype, want.dtype)
        if want.dtype.kind in "fc":
            scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale,
                                       err_msg=f"output {k}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"output {k}")
    for key, got in grads.items():
        want = reference[f"grad/{name}/{key}"]
        scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale,
                                   err_msg=f"d/d{key}")


def same_nested(mine, theirs, where: str, rtol=1e-6, atol=1e-6) -> None:
    """A recorded result (dicts of arrays as nested lists) equals og's: the same keys,
    shapes exactly, floats to rtol/atol, everything else exactly."""
    if isinstance(theirs, dict):
        assert isinstance(mine, dict) and sorted(mine) == sorted(theirs), where
        for key in theirs:
            same_nested(mine[key], theirs[key], f"{where}.{key}", rtol, atol)
        return
    want = np.asarray(theirs)
    got = np.asarray(mine)
    assert got.shape == want.shape, (where, got.shape, want.shape)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)

"""The outputs TensorFlow recorded for its SavedModel directories (NAME.npz keyed
"[TAGS:]SIGNATURE/in|out/KEY", tools/record_tf_saved_model_dirs.py and
tools/record_tf2_saved_model_dirs.py) and the check both SavedModel tests make of a
converted model's signatures."""

from __future__ import annotations

import os

import numpy as np

import onegraph as og


def reference(data: str, name: str, prefix: str = "") -> dict:
    """{signature: ({in key: array}, {out key: array})} TF recorded in data/NAME.npz for
    one tag set (`prefix` "TAGS:", or "" for the keys without one)."""
    out: dict = {}
    with np.load(os.path.join(data, name + ".npz")) as z:
        for k in z.files:
            if prefix and not k.startswith(prefix) or not prefix and ":" in k.split("/")[0]:
                continue
            sig, side, key = k[len(prefix):].split("/")
            out.setdefault(sig, ({}, {}))[side == "out"][key] = z[k]
    return out


def check_run_signatures(model, ref: dict, atol: float) -> None:
    """The model has exactly the recorded signatures and each gives TF's outputs."""
    assert sorted(model.signatures) == sorted(ref)
    sess = og.Session(model)
    for key, (ins, outs) in ref.items():
        got = sess.run_signature(key, **ins)
        assert sorted(got) == sorted(outs)
        for k, want in outs.items():
            np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=atol)

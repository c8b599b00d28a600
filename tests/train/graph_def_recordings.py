"""The recorded TensorFlow graphs under data/tf_graph_defs (tools/record_tf_graph_def_*.py:
<name>.pb and <name>.npz with the feeds, fetches and TF's outputs of each run) and the
three checks the graph_def tests make of each: imported into an og.Graph, saved to .og
and reloaded, exported to ONNX and run in onnxruntime."""

from __future__ import annotations

import os

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_graph_def
from onegraph.train.graph_def import GraphDef
from onegraph.train.graph_def_import import import_graph_def

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_graph_defs")


def read(name: str) -> bytes:
    """The recorded GraphDef's bytes (data/tf_graph_defs/<name>.pb)."""
    with open(os.path.join(DATA, f"{name}.pb"), "rb") as f:
        return f.read()


def load(name: str):
    """(graph_def, feeds, fetches, runs) of recording <name>; runs are (inputs, TF's
    outputs) pairs, leaving out the runs where TF raised (err_<k> in the npz)."""
    graph_def = GraphDef.FromString(read(name))
    ref = np.load(os.path.join(DATA, f"{name}.npz"))
    feeds = [str(s) for s in ref["feeds"]]
    fetches = [str(s) for s in ref["fetches"]]
    runs = [([ref[f"in_{k}_{i}"] for i in range(len(feeds))],
             [ref[f"out_{k}_{i}"] for i in range(len(fetches))])
            for k in range(int(ref["runs"])) if f"err_{k}" not in ref.files]
    return graph_def, feeds, fetches, runs


def check(got, want, what: str) -> None:
    """got equals TF's `want`: shape and dtype exactly, floats to 1e-5."""
    got = np.asarray(got)
    assert got.shape == want.shape, what
    assert got.dtype == want.dtype, what
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def model_feeds(feeds, ins) -> dict:
    """The serving signature's feeds: the placeholders' node names."""
    return {f.split(":")[0]: v for f, v in zip(feeds, ins)}


def _model(graph_def, fetches):
    return from_graph_def(graph_def, outputs=[f.split(":")[0] for f in fetches])


def check_imported(name: str) -> None:
    """Recording <name> imported with og.import_graph_def gives TF's outputs."""
    graph_def, feeds, fetches, runs = load(name)
    with og.Graph().as_default() as g:
        outs = import_graph_def(graph_def, return_elements=fetches + feeds)
        tensors, placeholders = outs[:len(fetches)], outs[len(fetches):]
        with og.Session(graph=g) as sess:
            for k, (ins, want) in enumerate(runs):
                got = sess.run(tensors, dict(zip(placeholders, ins)))
                for f, a, b in zip(fetches, got, want):
                    check(a, b, f"{name} run {k} {f}")


def check_og_file(name: str, tmp_path) -> None:
    """Recording <name> converted, saved to .og and loaded gives TF's outputs."""
    graph_def, feeds, fetches, runs = load(name)
    path = str(tmp_path / "m.og")
    og.save(_model(graph_def, fetches), path)
    sess = og.Session(og.load(path))
    for k, (ins, want) in enumerate(runs):
        got = sess.run_signature("serving", **model_feeds(feeds, ins))
        for f, b in zip(fetches, want):
            check(got[f.split(":")[0]], b, f"{name} run {k} {f}")


def check_onnxruntime(name: str, tmp_path) -> None:
    """Recording <name> converted and exported to ONNX gives TF's outputs in
    onnxruntime (skipped without it)."""
    ort = pytest.importorskip("onnxruntime")
    from onegraph.convert import to_onnx

    graph_def, feeds, fetches, runs = load(name)
    path = str(tmp_path / "m.onnx")
    to_onnx(_model(graph_def, fetches), path)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    assert sorted(names) == sorted(f.split(":")[0] for f in fetches)
    for k, (ins, want) in enumerate(runs):
        got = dict(zip(names, session.run(None, model_feeds(feeds, ins))))
        for f, b in zip(fetches, want):
            check(got[f.split(":")[0]], b, f"{name} run {k} {f} (onnxruntime)")

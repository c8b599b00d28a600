"""TF1 frozen graphs to .og (convert/tf_graph_def.py, `onegraph convert frozen.pb m.og`)
against TensorFlow: the GraphDefs and outputs TF 2.21 recorded
(tests/train/data/tf_graph_defs, tools/record_tf_graph_def.py), run by onegraph's
Session and, exported on to ONNX, by onnxruntime."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og
from onegraph.cli import main
from onegraph.convert.tf_graph_def import from_graph_def
from onegraph.errors import ConversionError

DATA = os.path.join(os.path.dirname(__file__), "..", "train", "data", "tf_graph_defs")


def _reference(name):
    ref = np.load(os.path.join(DATA, name + ".npz"))
    feeds = {str(f).split(":")[0]: ref[f"in_{i}"] for i, f in enumerate(ref["feeds"])}
    fetches = {str(f).split(":")[0]: ref[f"out_{i}"] for i, f in enumerate(ref["fetches"])}
    return feeds, fetches


def _close(got, want, what):
    assert got.shape == want.shape and got.dtype == want.dtype, what
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=what)


@pytest.mark.parametrize("name", ["cnn_nhwc", "cnn_nchw", "mlp", "shapes"])
def test_serving_signature_gives_tfs_outputs(name):
    feeds, fetches = _reference(name)
    model = from_graph_def(os.path.join(DATA, name + ".pb"))
    sig = model.signatures["serving"]
    assert set(sig.inputs) == set(feeds)
    assert set(sig.outputs) <= set(fetches) and sig.outputs  # the nodes nothing reads
    got = og.Session(model).run_signature("serving", **feeds)
    for key, value in got.items():
        _close(np.asarray(value), fetches[key], f"{name} {key}")


def test_cli_converts_and_the_export_runs_in_onnxruntime(tmp_path, capsys):
    ort = pytest.importorskip("onnxruntime")
    feeds, fetches = _reference("cnn_nhwc")
    og_path, onnx_path = str(tmp_path / "m.og"), str(tmp_path / "m.onnx")
    assert main(["convert", os.path.join(DATA, "cnn_nhwc.pb"), og_path,
                 "--outputs", "probs,logits"]) == 0
    assert "serving signature ['input'] -> ['logits', 'probs']" in capsys.readouterr().out
    assert main(["convert", og_path, onnx_path]) == 0
    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    for key, value in zip(names, session.run(None, feeds)):
        _close(value, fetches[key], key)


def _unsupported_pb(directory) -> str:
    """unsupported.pb with its MatrixDeterminant (imported since session 53) renamed
    to an op type og has no converter for; the name keeps its length, so the
    protobuf's length prefixes stay right."""
    with open(os.path.join(DATA, "unsupported.pb"), "rb") as f:
        data = f.read()
    assert b"MatrixDeterminant" in data
    path = os.path.join(str(directory), "unsupported.pb")
    with open(path, "wb") as f:
        f.write(data.replace(b"MatrixDeterminant", b"NoSuchDeterminant"))
    return path


def test_bad_graphs_and_arguments_are_conversion_errors(tmp_path):
    pb = os.path.join(DATA, "mlp.pb")
    unsupported = _unsupported_pb(tmp_path)
    with pytest.raises(ConversionError, match=r"outputs \['nope'\] name no node"):
        from_graph_def(pb, ["nope"])
    with pytest.raises(ConversionError, match="NoSuchDeterminant"):
        from_graph_def(unsupported)
    with open(pb, "rb") as f:
        data = f.read()
    with pytest.raises(ConversionError, match="not a TensorFlow GraphDef"):
        from_graph_def(data[:len(data) // 2])
    with pytest.raises(ConversionError, match="cannot read"):
        from_graph_def(str(tmp_path / "missing.pb"))
    out = str(tmp_path / "x.og")
    assert main(["convert", pb, out, "--opset", "13"]) != 0  # an export flag
    assert main(["convert", pb, out, "--outputs", "nope"]) != 0
    assert main(["convert", unsupported, out]) != 0
    assert not os.path.exists(out)
    assert main(["convert", out, str(tmp_path / "y.onnx"), "--outputs", "h"]) != 0


def test_info_describes_what_converting_gives(capsys, tmp_path):
    assert main(["info", os.path.join(DATA, "cnn_nhwc.pb"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["format"] == "tf-graphdef"
    assert sorted(info["signatures"]["serving"]["outputs"]) == ["log_probs", "probs"]
    assert main(["info", _unsupported_pb(tmp_path)]) != 0
    assert "NoSuchDeterminant" in capsys.readouterr().err

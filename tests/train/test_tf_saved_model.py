"""TF1 SavedModel directories written by TensorFlow 2.21 (tf.compat.v1 graph mode;
tools/record_tf_saved_model_dirs.py): loaded with og.saved_model.loader.load, converted
with onegraph.convert.from_saved_model and `onegraph convert`, exported to ONNX; each
compared with the outputs TF gave (NAME.npz, keyed "[TAGS:]SIGNATURE/in|out/KEY")."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import onegraph as og
from onegraph.cli import main
from onegraph.convert import from_saved_model
from onegraph.errors import ConversionError, DataLossError

from .saved_model_recordings import check_run_signatures, reference

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_saved_models")
# (model, tags, key prefix in the .npz)
CASES = [("mlp_ref", ["serve"], ""), ("mlp_res", ["serve"], ""), ("cnn_bn", ["serve"], ""),
         ("two_sigs_res", ["serve"], ""), ("two_sigs_res", ["train"], "train:")]


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,tags,prefix", CASES)
def test_loader_load_gives_tfs_outputs_through_the_signature_names(name, tags, prefix):
    ref = reference(DATA, name, prefix)
    with og.Session(graph=og.Graph()) as sess:
        meta = og.saved_model.loader.load(sess, tags, os.path.join(DATA, name))
        assert sorted(meta.meta_info_def.tags) == sorted(tags)
        assert sorted(meta.signature_def) == sorted(ref)
        for key, (ins, outs) in ref.items():
            sig = meta.signature_def[key]
            assert sig.method_name == "tensorflow/serving/predict"
            assert sorted(sig.inputs) == sorted(ins) and sorted(sig.outputs) == sorted(outs)
            feed = {sess.graph.get_tensor_by_name(sig.inputs[k].name): v
                    for k, v in ins.items()}
            for k, want in outs.items():
                _close(sess.run(sess.graph.get_tensor_by_name(sig.outputs[k].name), feed),
                       want)


def test_loaded_graph_is_frozen_and_pruned():
    with og.Session(graph=og.Graph()) as sess:
        og.saved_model.loader.load(sess, ["serve"], os.path.join(DATA, "mlp_ref"))
        types = {op.type for op in sess.graph.get_operations()}
        # (the loaded graph's: the process's default graph may hold other tests' ones)
        assert not og.global_variables(graph=sess.graph)
    for gone in ("SaveV2", "RestoreV2", "Assign", "VariableV2", "AssignVariableOp"):
        assert gone not in types


@pytest.mark.parametrize("name,tags,prefix", CASES)
def test_from_saved_model_run_signature(name, tags, prefix):
    ref = reference(DATA, name, prefix)
    model = from_saved_model(os.path.join(DATA, name), tags=tags, signature=None)
    check_run_signatures(model, ref, atol=1e-6)


def test_from_saved_model_default_signature_only():
    model = from_saved_model(os.path.join(DATA, "two_sigs_res"))
    assert list(model.signatures) == ["serving_default"]
    with pytest.raises(ConversionError, match="no signature 'nope'"):
        from_saved_model(os.path.join(DATA, "two_sigs_res"), signature="nope")


def test_cli_converts_a_saved_model_dir_and_onnx_export_runs(tmp_path, capsys):
    ort = pytest.importorskip("onnxruntime")
    ref = reference(DATA, "cnn_bn", "")["serving_default"]
    og_path, onnx_path = str(tmp_path / "m.og"), str(tmp_path / "m.onnx")
    assert main(["convert", os.path.join(DATA, "cnn_bn"), og_path]) == 0
    assert "serving_default" in capsys.readouterr().out
    got = og.Session(og.load(og_path)).run_signature("serving_default", **ref[0])
    for k, want in ref[1].items():
        _close(got[k], want)
    assert main(["convert", og_path, onnx_path]) == 0
    rt = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    names = [o.name for o in rt.get_outputs()]
    for k, v in zip(names, rt.run(None, ref[0])):
        _close(v, ref[1][k])
    assert sorted(names) == sorted(ref[1])


def test_cli_signature_flag_and_refusals(tmp_path):
    out = str(tmp_path / "m.og")
    src = os.path.join(DATA, "two_sigs_res")
    assert main(["convert", src, out, "--signature", "scaled"]) == 0
    assert list(og.load(out).signatures) == ["scaled"]
    assert main(["convert", src, str(tmp_path / "x.og"), "--opset", "13"]) != 0
    assert main(["convert", str(tmp_path), str(tmp_path / "y.og")]) != 0   # no .pb
    assert main(["convert", str(tmp_path / "nope"), str(tmp_path / "z.og")]) != 0


def test_wrong_tags_raise_tfs_runtime_error():
    msg = "MetaGraphDef associated with tags 'gpu' could not be found in SavedModel"
    with og.Session(graph=og.Graph()) as sess, pytest.raises(RuntimeError, match=msg):
        og.saved_model.loader.load(sess, ["gpu"], os.path.join(DATA, "two_sigs_res"))
    with pytest.raises(RuntimeError, match="available tags"):
        from_saved_model(os.path.join(DATA, "mlp_ref"), tags=["serve", "gpu"])


def test_missing_saved_model_pb(tmp_path):
    with pytest.raises(ConversionError, match="is not a directory"):
        from_saved_model(str(tmp_path / "nope"))
    with pytest.raises(ConversionError, match="SavedModel file does not exist"):
        from_saved_model(str(tmp_path))
    with og.Session(graph=og.Graph()) as sess, pytest.raises(FileNotFoundError):
        og.saved_model.loader.load(sess, ["serve"], str(tmp_path))


def test_tf2_object_based_saved_model_loads():
    # tf2_module: tf.Module with w = [[1, 2], [3, 4]] saved by the recorder,
    # signature y = x @ w (tests/train/test_tf2_saved_model.py checks TF's own outputs)
    x = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    want = x @ np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    model = from_saved_model(os.path.join(DATA, "tf2_module"))
    _close(og.Session(model).run_signature("serving_default", x=x)["y"], want)
    with og.Session(graph=og.Graph()) as sess:
        meta = og.saved_model.loader.load(sess, ["serve"], os.path.join(DATA, "tf2_module"))
        sig = meta.signature_def["serving_default"]
        got = sess.run(sess.graph.get_tensor_by_name(sig.outputs["y"].name),
                       {sess.graph.get_tensor_by_name(sig.inputs["x"].name): x})
    _close(got, want)


def _copy(name: str, tmp_path) -> str:
    dst = str(tmp_path / name)
    shutil.copytree(os.path.join(DATA, name), dst)
    return dst


def test_variable_missing_from_checkpoint(tmp_path):
    path = _copy("mlp_ref", tmp_path)
    shutil.rmtree(os.path.join(path, "variables"))
    with pytest.raises(ConversionError, match="no checkpoint"):
        from_saved_model(path)
    # another model's checkpoint (variables w and b): hidden/kernel is not there
    shutil.copytree(os.path.join(DATA, "two_sigs_res", "variables"),
                    os.path.join(path, "variables"))
    with og.Session(graph=og.Graph()) as sess, \
            pytest.raises(ConversionError, match="variable '(hidden|logits)/.*' .* is not in"):
        og.saved_model.loader.load(sess, ["serve"], path)


def test_corrupt_saved_model_pb_and_checkpoint(tmp_path):
    path = _copy("mlp_res", tmp_path)
    pb = os.path.join(path, "saved_model.pb")
    with open(pb, "rb") as f:
        data = f.read()
    with open(pb, "wb") as f:
        f.write(data[:len(data) // 2])
    with pytest.raises(DataLossError, match="saved_model.pb"):
        from_saved_model(path)
    with open(pb, "wb") as f:
        f.write(b"\xff" * 64)
    with og.Session(graph=og.Graph()) as sess, pytest.raises(DataLossError):
        og.saved_model.loader.load(sess, ["serve"], path)
    path = _copy("mlp_ref", tmp_path)
    shard = os.path.join(path, "variables", "variables.data-00000-of-00001")
    with open(shard, "r+b") as f:
        f.seek(8)
        byte = f.read(1)
        f.seek(8)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(DataLossError):
        from_saved_model(path)


def test_load_into_a_non_empty_graph_is_refused():
    graph = og.Graph()
    with graph.as_default():
        og.constant(1.0)
    with og.Session(graph=graph) as sess, pytest.raises(ValueError, match="not empty"):
        og.saved_model.loader.load(sess, ["serve"], os.path.join(DATA, "mlp_ref"))

"""TF2 object-based SavedModel directories written by TensorFlow 2.21 (tf.saved_model.save
of tf.Modules, eager; tools/record_tf2_saved_model_dirs.py): converted with
onegraph.convert.from_saved_model and `onegraph convert`, loaded with
og.saved_model.loader.load, exported to ONNX; each compared with the outputs TF gave
through the reloaded model's signatures (NAME.npz, keyed "SIGNATURE/in|out/KEY")."""

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

DATA = os.path.join(os.path.dirname(__file__), "data", "tf2_saved_models")
# (recording, model directory): control_else takes the tf.cond's other branch
CASES = [("mlp", "mlp"), ("cnn", "cnn"), ("two_sigs", "two_sigs"), ("control", "control"),
         ("control_else", "control")]


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,model_dir", CASES)
def test_from_saved_model_run_signature_gives_tfs_outputs(name, model_dir):
    ref = reference(DATA, name)
    model = from_saved_model(os.path.join(DATA, model_dir), signature=None)
    # TF2's "__saved_model_init_op" pseudo-signature is no model signature
    check_run_signatures(model, ref, atol=1e-5)


def test_default_signature_and_unknown_one():
    model = from_saved_model(os.path.join(DATA, "two_sigs"))
    assert list(model.signatures) == ["serving_default"]
    with pytest.raises(ConversionError, match="no signature 'nope'"):
        from_saved_model(os.path.join(DATA, "two_sigs"), signature="nope")


def test_loaded_graph_is_frozen_and_pruned():
    with og.Session(graph=og.Graph()) as sess:
        og.saved_model.loader.load(sess, ["serve"], os.path.join(DATA, "cnn"))
        types = {op.type for op in sess.graph.get_operations()}
        assert not og.global_variables(graph=sess.graph)
    assert "MatMul" in types
    for gone in ("VarHandleOp", "ReadVariableOp", "SaveV2", "RestoreV2", "MergeV2Checkpoints"):
        assert gone not in types


@pytest.mark.parametrize("name,model_dir", [("two_sigs", "two_sigs"), ("control", "control")])
def test_loader_load_of_a_tf2_dir_as_tf1s_loader(name, model_dir):
    # TF's tf.compat.v1.saved_model.loader.load reads TF2 dirs with tags ["serve"] too
    ref = reference(DATA, name)
    with og.Session(graph=og.Graph()) as sess:
        meta = og.saved_model.loader.load(sess, ["serve"], os.path.join(DATA, model_dir))
        for key, (ins, outs) in ref.items():
            sig = meta.signature_def[key]
            feed = {sess.graph.get_tensor_by_name(sig.inputs[k].name): v
                    for k, v in ins.items()}
            for k, want in outs.items():
                _close(sess.run(sess.graph.get_tensor_by_name(sig.outputs[k].name), feed),
                       want)


@pytest.mark.parametrize("name,model_dir", [("cnn", "cnn"), ("control", "control"),
                                            ("control_else", "control")])
def test_cli_converts_and_onnx_export_runs_in_onnxruntime(name, model_dir, tmp_path, capsys):
    ort = pytest.importorskip("onnxruntime")
    ins, outs = reference(DATA, name)["serving_default"]
    og_path, onnx_path = str(tmp_path / "m.og"), str(tmp_path / "m.onnx")
    assert main(["convert", os.path.join(DATA, model_dir), og_path]) == 0
    assert "serving_default" in capsys.readouterr().out
    got = og.Session(og.load(og_path)).run_signature("serving_default", **ins)
    for k, want in outs.items():
        _close(got[k], want)
    assert main(["convert", og_path, onnx_path]) == 0
    rt = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    feed = {i.name: np.asarray(ins[i.name]) for i in rt.get_inputs()}
    names = [o.name for o in rt.get_outputs()]
    assert sorted(names) == sorted(outs)
    for k, v in zip(names, rt.run(None, feed)):
        _close(v, outs[k])


def test_cli_signature_flag(tmp_path):
    out = str(tmp_path / "m.og")
    assert main(["convert", os.path.join(DATA, "two_sigs"), out, "--signature", "scaled"]) == 0
    assert list(og.load(out).signatures) == ["scaled"]


def _copy(name: str, tmp_path) -> str:
    dst = str(tmp_path / name)
    shutil.copytree(os.path.join(DATA, name), dst)
    return dst


def test_variable_missing_from_checkpoint_is_named(tmp_path):
    path = _copy("mlp", tmp_path)
    shutil.rmtree(os.path.join(path, "variables"))
    # another model's checkpoint: its variables are w and b, the mlp's w1, b1, w2, b2
    shutil.copytree(os.path.join(DATA, "two_sigs", "variables"),
                    os.path.join(path, "variables"))
    with pytest.raises(ConversionError,
                       match=r"variable '[wb][12]/\.ATTRIBUTES/VARIABLE_VALUE' .* is not in"):
        from_saved_model(path)


# protobuf wire helpers, to rewrite one MetaGraphDef field in a copy of saved_model.pb
def _varint(data: bytes, pos: int) -> tuple:
    value, shift = 0, 0
    while True:
        b = data[pos]
        value |= (b & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if b < 0x80:
            return value, pos


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        out.append(value & 0x7F | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def _replace_field(data: bytes, number: int, edit) -> bytes:
    """data (a message) with each length-delimited field `number` replaced by
    edit(its bytes); other fields are copied as they are."""
    out, pos = bytearray(), 0
    while pos < len(data):
        start = pos
        key, pos = _varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            assert wire == 2
            size, body = _varint(data, pos)
            pos = body + size
            if field == number:
                value = edit(data[body:pos])
                out += _encode_varint(key) + _encode_varint(len(value)) + value
                continue
        out += data[start:pos]
    return bytes(out)


def _edit_object_graph(path: str, edit) -> None:
    pb = os.path.join(path, "saved_model.pb")
    with open(pb, "rb") as f:
        data = f.read()
    data = _replace_field(data, 2, lambda meta: _replace_field(meta, 7, edit))
    with open(pb, "wb") as f:
        f.write(data)


def test_corrupt_object_graph(tmp_path):
    path = _copy("mlp", tmp_path)
    _edit_object_graph(path, lambda graph: graph[:len(graph) // 2])   # truncated
    with pytest.raises(DataLossError, match="saved_model.pb"):
        from_saved_model(path)
    path = _copy("cnn", tmp_path)
    # one node whose child reference names node 99, which does not exist
    _edit_object_graph(path, lambda graph: b"\x0a\x04\x0a\x02\x08\x63")
    with pytest.raises(DataLossError, match="node 99"):
        from_saved_model(path)
    path = _copy("two_sigs", tmp_path)
    # no nodes at all: the captured variables' checkpoint keys cannot be found
    _edit_object_graph(path, lambda graph: b"")
    with pytest.raises((ConversionError, DataLossError)):
        from_saved_model(path)


def test_checkpoint_keys_escape_local_names_as_tf():
    # TF's escape_local_name: "." -> "..", "/" -> ".S"; the key is the first shortest
    # child path from the root (a later, longer path to the same node is not used)
    from onegraph.train.tf_saved_model import _object_paths
    from onegraph.train.tf_saved_model_proto import ProtoSavedObject, ProtoSavedObjectGraph

    nodes = [ProtoSavedObject() for _ in range(4)]
    nodes[0].children = [(1, "net.v2/x"), (2, "b")]
    nodes[2].children = [(3, "k"), (1, "again")]
    paths = _object_paths(ProtoSavedObjectGraph(nodes))
    assert paths == {0: "", 1: "net..v2.Sx", 2: "b", 3: "b/k"}

"""og.train.import_meta_graph on TF1 training graphs written by TensorFlow 2.21
(tools/record_tf_meta_graph.py): an MLP trained 3 steps, saved by tf.train.Saver
(.meta + V2 checkpoint), with reference or resource variables and SGD, Nesterov
momentum or Adam. Compared with what TF gave after tf.train.import_meta_graph and
restore: the logits, the collections, and the variables after 2 more training steps."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ConversionError, DataLossError, NotFoundError

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_meta_graphs")
VARIANTS = ["ref", "resource", "momentum_ref", "adam_resource"]


def _expected(variant: str) -> dict:
    with open(os.path.join(DATA, variant, "expected.json")) as f:
        return json.load(f)


def _prefix(variant: str) -> str:
    return os.path.join(DATA, variant, "model.ckpt")


def _feeds(e: dict, with_labels: bool = True) -> dict:
    feeds = {"x:0": np.array(e["x"], np.float32)}
    if with_labels:
        feeds["y:0"] = np.array(e["y"], np.float32)
    return feeds


@pytest.mark.parametrize("variant", VARIANTS)
def test_restore_and_run_gives_tf_logits(variant):
    e = _expected(variant)
    g = og.Graph()
    with g.as_default():
        saver = og.train.import_meta_graph(_prefix(variant) + ".meta")
        with og.Session(graph=g) as sess:
            saver.restore(sess, _prefix(variant))
            got = sess.run("logits:0", _feeds(e, with_labels=False))
            np.testing.assert_allclose(got, e["logits"], rtol=1e-5, atol=1e-6)
            for var in g.get_collection("variables"):
                np.testing.assert_allclose(sess.run(var), e["variables_restored"][var.name],
                                           rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("variant", VARIANTS)
def test_collections_match_tf(variant):
    e = _expected(variant)
    g = og.Graph()
    with g.as_default():
        og.train.import_meta_graph(_prefix(variant) + ".meta")
    for key, names in e["collections"].items():
        got = [item.name for item in g.get_collection(key)]
        # og names an output 0 without TF's ":0" ("loss", and variables "w1")
        want = [n[:-2] if n.endswith(":0") else n for n in names]
        assert got == want, key
    assert all(v.trainable for v in g.get_collection("trainable_variables"))
    assert not [v for v in g.get_collection("variables") if v.name == "step"][0].trainable


@pytest.mark.parametrize("variant", VARIANTS)
def test_initializer_gives_tf_initial_values(variant):
    """The imported "<var>/Assign" is the variable's initializer: step starts at 0, b2
    at TF's 0.1 (the variables hold zeros before)."""
    g = og.Graph()
    with g.as_default():
        og.train.import_meta_graph(_prefix(variant) + ".meta")
        with og.Session(graph=g) as sess:
            sess.run(og.global_variables_initializer())
            values = {v.name: sess.run(v) for v in g.get_collection("variables")}
    np.testing.assert_allclose(values["b2"], np.full(3, 0.1, np.float32))
    assert int(values["step"]) == 0


def test_saver_writes_tf_names(tmp_path):
    e = _expected("resource")
    g = og.Graph()
    with g.as_default():
        saver = og.train.import_meta_graph(_prefix("resource") + ".meta")
        with og.Session(graph=g) as sess:
            saver.restore(sess, _prefix("resource"))
            path = saver.save(sess, str(tmp_path / "again"))
    names = sorted(name for name, _ in og.train.list_variables(path))
    assert names == sorted(e["variables_restored"])
    for name, want in e["variables_restored"].items():
        np.testing.assert_allclose(og.train.load_variable(path, name), want, rtol=1e-6)


# (TF's gradient graph sums over BroadcastGradientArgs' axes, empty for same-shaped
# operands: og.reduce_sum of an empty axes tensor reduces nothing, as TF's)
@pytest.mark.parametrize("variant", VARIANTS)
def test_two_training_steps_match_tf(variant):
    e = _expected(variant)
    g = og.Graph()
    with g.as_default():
        saver = og.train.import_meta_graph(_prefix(variant) + ".meta")
        train = g.get_collection("train_op")[0]
        with og.Session(graph=g) as sess:
            saver.restore(sess, _prefix(variant))
            for _ in range(2):
                sess.run(train, _feeds(e))
            for var in g.get_collection("variables"):
                np.testing.assert_allclose(sess.run(var), e["variables_trained"][var.name],
                                           rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(sess.run("loss:0", _feeds(e)), e["loss_after"],
                                       rtol=1e-5)


def test_import_scope_prefixes_names():
    e = _expected("ref")
    g = og.Graph()
    with g.as_default():
        saver = og.train.import_meta_graph(_prefix("ref") + ".meta", import_scope="m")
        with og.Session(graph=g) as sess:
            saver.restore(sess, _prefix("ref"))
            got = sess.run("m/logits:0", {"m/x:0": np.array(e["x"], np.float32)})
    np.testing.assert_allclose(got, e["logits"], rtol=1e-5, atol=1e-6)


def test_return_elements():
    g = og.Graph()
    with g.as_default():
        saver, (logits, train) = og.train.import_meta_graph(
            _prefix("ref") + ".meta", return_elements=["logits:0", "train"])
    assert isinstance(saver, og.train.Saver)
    assert (logits.name, train.name) == ("logits", "train")
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="nope"):
            og.train.import_meta_graph(_prefix("ref") + ".meta", return_elements=["nope:0"])


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def test_unsupported_ops_listed_in_one_conversion_error():
    nodes = b"".join(_field(1, _field(1, name.encode()) + _field(2, op.encode()))
                     for name, op in (("a", "NoSuchOpA"), ("b", "NoSuchOpB")))
    meta = _field(2, nodes)
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="2 unsupported op type.*NoSuchOpA.*"
                                                  "NoSuchOpB"):
            og.train.import_meta_graph(meta)


def test_bad_inputs(tmp_path):
    bad = tmp_path / "bad.meta"
    bad.write_bytes(b"\x0a\xff\xff\xff\x0fnot a proto")
    with og.Graph().as_default():
        with pytest.raises(DataLossError):
            og.train.import_meta_graph(str(bad))
        with pytest.raises(NotFoundError):
            og.train.import_meta_graph(str(tmp_path / "missing.meta"))
        with pytest.raises(TypeError):
            og.train.import_meta_graph(3)
        with pytest.raises(TypeError):
            og.train.import_meta_graph(_prefix("ref") + ".meta", bogus=1)


def test_variable_node_without_shape_is_refused():
    node = _field(1, b"v") + _field(2, b"VariableV2")
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="fully known shape"):
            og.train.import_meta_graph(_field(2, _field(1, node)))

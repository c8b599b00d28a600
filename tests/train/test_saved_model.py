"""og.saved_model (TF1's tf.saved_model over .og files), checked against TF's recorded
constants, signature facts, values and error messages (tools/record_tf_saved_model.py
writes data/tf1_saved_model_reference.json) and onnxruntime on an ONNX export."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og
from onegraph.train.saved_model import saved_model as sm

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                  "tf1_saved_model_reference.json")))
VALUES = REF["values"]
X = np.array(VALUES["x"], np.float32)


def _linear(g):
    """TF's recorded model in g: y = x @ w + b, w and b assigned the recorded values."""
    with g.as_default():
        x = og.placeholder(og.float32, [None, 2], name="x")
        w = og.Variable(og.zeros([2, 3]), name="w")
        b = og.Variable(og.zeros([3]), name="b")
        y = og.add(og.matmul(x, w), b, name="y")
    return x, w, b, y


def _trained(g):
    x, w, b, y = _linear(g)
    sess = og.Session(g)
    with g.as_default():
        sess.run(og.global_variables_initializer())
        sess.run([w.assign(np.array(VALUES["w"], np.float32)),
                  b.assign(np.array(VALUES["b"], np.float32))])
    return sess, x, w, b, y


def _load(tags, export_dir):
    g = og.Graph()
    sess = og.Session(graph=g)
    meta = sm.loader.load(sess, tags, export_dir)
    return g, sess, meta


def test_constants_are_tfs():
    for k, v in REF["constants"]["tag_constants"].items():
        assert getattr(sm.tag_constants, k) == v == getattr(sm, k)
    for k, v in REF["constants"]["signature_constants"].items():
        assert getattr(sm.signature_constants, k) == v == getattr(sm, k)


def test_signature_helpers_match_tf():
    g = og.Graph()
    x, _, _, y = _linear(g)
    with g.as_default():
        s = og.placeholder(og.string, [None], name="s")
        classes = og.as_string(og.argmax(y, 1), name="classes")
    sdu = sm.signature_def_utils
    sigs = {"predict": sdu.predict_signature_def({"x": x}, {"y": y}),
            "classify": sdu.classification_signature_def(s, classes, y),
            "regress": sdu.regression_signature_def(s, y)}
    for key, want in REF["signatures"].items():
        sig = sigs[key]
        assert sig.method_name == want["method_name"]
        assert sorted(sig.inputs) == want["inputs"]
        assert sorted(sig.outputs) == want["outputs"]
        assert sdu.is_valid_signature(sig) is want["valid"]
        # TF names a tensor "op:0", onegraph by its own name
        for k, name in want["input_names"].items():
            assert sig.inputs[k].name == name.split(":")[0]
        for k, name in want["output_names"].items():
            assert sig.outputs[k].name == name.split(":")[0]
    assert not sdu.is_valid_signature(None)
    assert not sdu.is_valid_signature(sdu.build_signature_def({"x": x}, {},
                                                              sm.PREDICT_METHOD_NAME))
    with pytest.raises(ValueError, match="Regression input|string Tensor"):
        sdu.regression_signature_def(x, y)
    with pytest.raises(ValueError, match="Prediction `inputs` cannot be None or empty."):
        sdu.predict_signature_def({}, {"y": y})
    info = sm.utils.build_tensor_info(y)
    assert sm.utils.get_tensor_from_tensor_info(info, g).tensor_index == y.tensor_index
    assert list(info.tensor_shape) == [None, 3]


def test_simple_save_then_load_gives_tfs_values(tmp_path):
    d = str(tmp_path / "m")
    g = og.Graph()
    sess, x, _, _, y = _trained(g)
    before = sess.run(y, {x: X})
    np.testing.assert_allclose(before, VALUES["before"], rtol=1e-6)
    sm.simple_save(sess, d, inputs={"x": x}, outputs={"y": y})
    sess.close()
    assert [sm.loader.maybe_saved_model_directory(p) for p in (d, str(tmp_path))] == \
        VALUES["maybe_dir"]
    g2, sess2, meta = _load([sm.tag_constants.SERVING], d)
    assert list(meta.meta_info_def.tags) == VALUES["tags"]
    sig = meta.signature_def[sm.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
    assert sig.method_name == VALUES["method_name"]
    yy = g2.get_tensor_by_name(sig.outputs["y"].name)
    xx = g2.get_tensor_by_name(sig.inputs["x"].name)
    after = sess2.run(yy, {xx: X})
    np.testing.assert_allclose(after, VALUES["after"], rtol=1e-6)
    np.testing.assert_array_equal(after, before)
    # the variables hold the saved values, no initializer run
    np.testing.assert_array_equal(sess2.run(g2.get_tensor_by_name("w")), VALUES["w"])
    # the file is a plain .og file too
    out = og.Session(og.load(os.path.join(d, "saved_model.og"))).run_signature(
        "serving_default", x=X)
    np.testing.assert_array_equal(out["y"], before)


def test_onnxruntime_agrees_on_the_saved_file(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    from onegraph.convert import to_onnx

    d = str(tmp_path / "m")
    g = og.Graph()
    sess, x, _, _, y = _trained(g)
    sm.simple_save(sess, d, inputs={"x": x}, outputs={"y": y})
    proto = to_onnx(og.load(os.path.join(d, "saved_model.og")),
                    signature="serving_default")
    run = ort.InferenceSession(proto.SerializeToString(),
                               providers=["CPUExecutionProvider"])
    (got,) = run.run(["y"], {"x": X})
    np.testing.assert_allclose(got, VALUES["after"], rtol=1e-6)


def test_errors_use_tfs_words(tmp_path):
    d = str(tmp_path / "m")
    g = og.Graph()
    sess, x, _, _, y = _trained(g)
    sm.simple_save(sess, d, inputs={"x": x}, outputs={"y": y})
    kind, text = REF["errors"]["exists"]
    with pytest.raises(AssertionError) as e:
        sm.builder.SavedModelBuilder(d)
    assert kind == "AssertionError" and str(e.value) == text.replace("D/m", d)
    kind, text = REF["errors"]["bad_tags"]
    with pytest.raises(RuntimeError) as e:
        _load(["nope"], d)
    assert kind == "RuntimeError" and str(e.value) == text
    kind, text = REF["errors"]["missing_dir"]
    with pytest.raises(OSError) as e:
        _load(["serve"], str(tmp_path / "no"))
    assert kind == "OSError"
    assert str(e.value).startswith(text.split("{")[0].replace("D/", f"{tmp_path}/"))
    with pytest.raises(TypeError, match="tags must be a list"):
        _load("serve", d)
    with pytest.raises(ValueError, match="import_scope"):
        sm.loader.load(og.Session(graph=og.Graph()), ["serve"], d, import_scope="a")
    # an empty directory may be exported into (TF); a file may not
    (tmp_path / "empty").mkdir()
    sm.builder.SavedModelBuilder(str(tmp_path / "empty"))
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError):
        sm.builder.SavedModelBuilder(str(tmp_path / "f"))


def test_loading_into_a_graph_that_has_ops_is_refused(tmp_path):
    d = str(tmp_path / "m")
    g = og.Graph()
    sess, x, _, _, y = _trained(g)
    sm.simple_save(sess, d, inputs={"x": x}, outputs={"y": y})
    with pytest.raises(ValueError, match="not empty"):
        sm.loader.load(sess, ["serve"], d)


def test_builder_two_meta_graphs_share_variables_and_run_main_op(tmp_path):
    d = str(tmp_path / "m")
    g = og.Graph()
    sess, x, w, b, y = _trained(g)
    with g.as_default():
        z = og.multiply(y, 2.0, name="z")
        count = og.Variable(0.0, name="count")
        main_op = count.assign(7.0)
    b_ = sm.builder.SavedModelBuilder(d)
    with pytest.raises(AssertionError, match="has not been saved yet"):
        b_.add_meta_graph(["x"])
    sess.run(count.initializer)
    b_.add_meta_graph_and_variables(
        sess, [sm.SERVING],
        signature_def_map={"serving_default": sm.predict_signature_def({"x": x}, {"y": y})},
        main_op=main_op)
    with pytest.raises(AssertionError, match="already been saved"):
        b_.add_meta_graph_and_variables(sess, [sm.TRAINING])
    sess.run(w.assign(np.zeros((2, 3), np.float32)))  # not what the 2nd graph gets
    with g.as_default():
        with pytest.raises(ValueError, match="tags"):
            b_.add_meta_graph([sm.SERVING])
        b_.add_meta_graph([sm.TRAINING, sm.GPU], signature_def_map={
            "double": sm.build_signature_def({"x": sm.utils.build_tensor_info(x)},
                                             {"z": sm.utils.build_tensor_info(z)},
                                             "custom/method")})
    assert b_.save(as_text=True).endswith("saved_model.og")
    g1, s1, m1 = _load([sm.SERVING], d)
    np.testing.assert_allclose(s1.run(g1.get_tensor_by_name("y"), {
        g1.get_tensor_by_name("x"): X}), VALUES["before"], rtol=1e-6)
    assert s1.run(g1.get_tensor_by_name("count")) == 7.0  # the main op ran
    g2, s2, m2 = _load([sm.GPU, sm.TRAINING], d)
    sig = m2.signature_def["double"]
    assert sig.method_name == "custom/method" and sorted(m2.meta_info_def.tags) == \
        ["gpu", "train"]
    got = s2.run(g2.get_tensor_by_name(sig.outputs["z"].name),
                 {g2.get_tensor_by_name(sig.inputs["x"].name): X})
    np.testing.assert_allclose(got, 2 * np.array(VALUES["before"]), rtol=1e-6)


def test_bad_signature_maps_are_refused(tmp_path):
    g = og.Graph()
    sess, x, _, _, y = _trained(g)
    b_ = sm.builder.SavedModelBuilder(str(tmp_path / "m"))
    with pytest.raises(TypeError, match="SignatureDef"):
        b_.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"a": {"x": x}})
    with pytest.raises(KeyError, match="reserved"):
        b_.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
            "__saved_model_init_op": sm.predict_signature_def({"x": x}, {"y": y})})
    other = og.Graph()
    with other.as_default():
        q = og.placeholder(og.float32, [2], name="elsewhere")
    with pytest.raises(ValueError, match="elsewhere"):
        b_.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
            "a": sm.predict_signature_def({"q": q}, {"y": y})})
    with pytest.raises(ValueError, match="nothing to save"):
        b_.save()
    assert not os.path.exists(str(tmp_path / "m"))


def test_loaded_variables_are_variables_again_and_train_on(tmp_path):
    d = str(tmp_path / "m")
    g = og.Graph()
    sess, x, w, b, y = _trained(g)
    with g.as_default():
        frozen = og.Variable(3.0, trainable=False, name="frozen")
        sess.run(frozen.initializer)
    sm.simple_save(sess, d, inputs={"x": x}, outputs={"y": y})
    g2, s2, _ = _load(["serve"], d)
    with g2.as_default():
        assert [v.name for v in og.global_variables()] == ["w", "b", "frozen"]
        assert [v.name for v in og.trainable_variables()] == ["w", "b"]
        xx, yy = g2.get_tensor_by_name("x"), g2.get_tensor_by_name("y")
        loss = og.reduce_sum(yy)
        step = og.train.GradientDescentOptimizer(0.5).minimize(loss)
        s2.run(step, {xx: X})
        # d(sum(x @ w + b))/dw = column sums of x, broadcast over w's columns
        want = np.array(VALUES["w"]) - 0.5 * X.sum(0)[:, None]
        np.testing.assert_allclose(s2.run(og.global_variables()[0]), want, rtol=1e-6)
        np.testing.assert_allclose(s2.run(og.global_variables()[1]),
                                   np.array(VALUES["b"]) - 0.5 * len(X), rtol=1e-6)
        assert s2.run(og.global_variables()[2]) == 3.0

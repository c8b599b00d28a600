"""Exporting a signature of a graph built with the training API: which signature, cut
at its inputs, named by its keys, with the values of a Session; the TF1 losses and
even splits written in ONNX ops. onnxruntime runs every export, against numpy."""

import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError


def _ort(proto, feeds=None):
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds or {})))


def _linear_graph():
    """y = x @ w with w a trainable (2, 1) variable starting at zeros, and a train op
    pulling y towards 1."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 2], name="x")
        w = og.Variable(np.zeros((2, 1), np.float32), name="w")
        y = og.matmul(x, w)
        loss = og.reduce_mean(og.square(y - 1.0))
        train = og.train.GradientDescentOptimizer(0.1).minimize(loss)
    sigs = {"serving": og.signature({"features": x}, {"score": y}),
            "train": og.signature({"features": x}, {"loss": loss}, [train])}
    return g, x, w, train, sigs


def test_a_closed_session_is_refused_rather_than_saving_initial_values(tmp_path):
    g, x, w, train, sigs = _linear_graph()
    with og.Session(g) as sess:
        sess.run(train, {x: np.ones((4, 2), np.float32)})
        assert sess.run(w).any()
    with pytest.raises(RuntimeError, match="session is closed"):
        og.save(g, tmp_path / "m.og", signatures=sigs, session=sess)
    with pytest.raises(RuntimeError, match="session is closed"):
        g.to_model(signatures=sigs, session=sess)
    with pytest.raises(RuntimeError, match="session is closed"):
        to_onnx(g, signatures=sigs, session=sess)
    assert not (tmp_path / "m.og").exists()


def test_a_loaded_model_trained_in_python_saves_and_exports_its_trained_values(tmp_path):
    g, x, w, train, sigs = _linear_graph()
    og.save(g, tmp_path / "m.og", signatures=sigs)
    model = og.load(tmp_path / "m.og")
    batch = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    sess = og.Session(model)
    for _ in range(3):
        sess.run_signature("train", features=batch)
    trained = sess.run_signature("serving", features=batch)["score"]
    assert np.abs(trained).max() > 0.1  # it moved from the zero start
    og.save(model, tmp_path / "trained.og", session=sess)
    again = og.Session(og.load(tmp_path / "trained.og"))
    np.testing.assert_array_equal(again.run_signature("serving", features=batch)["score"],
                                  trained)
    # the file given to og.load is unchanged: a Model is saved with a session's values
    # only when asked
    assert not og.Session(og.load(tmp_path / "m.og")).run_signature(
        "serving", features=batch)["score"].any()
    got = _ort(to_onnx(model, session=sess), {"features": batch})["score"]
    np.testing.assert_allclose(got, trained, rtol=1e-6)
    with pytest.raises(TypeError, match="takes only session="):
        og.save(model, tmp_path / "x.og", signatures=sigs)


def test_to_onnx_takes_a_graph_with_signatures_and_session():
    g, x, w, train, sigs = _linear_graph()
    sess = og.Session(g)
    sess.run(train, {x: np.ones((4, 2), np.float32)})
    wv = sess.run(w)
    batch = np.array([[0.5, -2.0]], np.float32)
    got = _ort(to_onnx(g, signatures=sigs, session=sess), {"features": batch})
    np.testing.assert_allclose(got["score"], batch @ wv, rtol=1e-6)
    with pytest.raises(TypeError, match="signatures= is for an og.Graph"):
        to_onnx(g.to_model(signatures=sigs), signatures=sigs)


def test_inputs_and_outputs_are_named_by_the_signature_keys_and_round_trip():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [1, 3], name="x")
        probs = og.nn.softmax(x * 2.0)
        cls = og.argmax(probs, axis=1)
    model = g.to_model(signatures={"serving": og.signature({"image": x},
                                                           {"probs": probs, "class": cls})})
    proto = to_onnx(model)
    assert [i.name for i in proto.graph.input] == ["image"]
    assert sorted(o.name for o in proto.graph.output) == ["class", "probs"]
    xv = np.array([[0.1, 0.9, -0.3]], np.float32)
    got = _ort(proto, {"image": xv})
    e = np.exp(2 * xv - (2 * xv).max())
    np.testing.assert_allclose(got["probs"], e / e.sum(), rtol=1e-6)
    assert got["class"].tolist() == [1]
    back = from_onnx(proto)
    out = og.Session(back).run_signature("serving", image=xv)
    np.testing.assert_allclose(out["probs"], got["probs"], rtol=1e-6)


def test_a_key_naming_another_tensor_keeps_the_tensor_name():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [2], name="a")
        b = og.identity(a * 3.0, name="b")
    # key "b" names another tensor of the graph: the output keeps its own name
    model = g.to_model(signatures={"serving": og.signature({"a": a}, {"b": a + 1.0})})
    proto = to_onnx(model)
    assert [o.name for o in proto.graph.output] != ["b"]
    got = list(_ort(proto, {"a": np.array([1, 2], np.float32)}).values())
    assert got[0].tolist() == [2.0, 3.0]
    assert b is not None


def _scaled_by_default(scale_key: str):
    """A model y = x * scale, scale a placeholder_with_default of 5 under `scale_key`."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [4], name="x")
        scale = og.placeholder_with_default(np.float32(5.0), [], name="scale")
        y = x * scale
    return g.to_model(signatures={"serving": og.signature({"x": x, scale_key: scale},
                                                          {"y": y})})


def test_placeholder_with_default_exports_as_an_input_with_a_default():
    model = _scaled_by_default("scale")
    proto = to_onnx(model)
    assert sorted(i.name for i in proto.graph.input) == ["scale", "x"]
    assert [t.name for t in proto.graph.initializer] == ["scale"]
    xv = np.arange(4, dtype=np.float32)
    assert _ort(proto, {"x": xv})["y"].tolist() == (xv * 5).tolist()
    assert _ort(proto, {"x": xv, "scale": np.array(-1, np.float32)})["y"].tolist() == (-xv).tolist()


def test_fed_intermediate_and_dequeued_tensors_are_cut_points():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        h = og.nn.relu(og.log(x))  # fed at serving time: log is not exported
        y = h * 2.0
        q = og.FIFOQueue(8, [og.float32], shapes=[[3]])
        batch = q.dequeue_many(2)
        z = og.reduce_sum(batch, axis=1)
    model = g.to_model(signatures={
        "serving": og.signature({"h": h}, {"y": y}),
        "batch": og.signature({"batch": batch}, {"z": z})})
    proto = to_onnx(model)
    # Log and Relu are not exported; Identities connect the keys to the tensor names
    assert {n.op_type for n in proto.graph.node} == {"Identity", "Mul"}
    assert _ort(proto, {"h": np.array([-1, 3], np.float32)})["y"].tolist() == [-2, 6]
    proto = to_onnx(model, signature="batch")
    got = _ort(proto, {"batch": np.arange(6, dtype=np.float32).reshape(2, 3)})["z"]
    assert got.tolist() == [3, 12]


def test_a_signature_input_the_outputs_do_not_read_stays_an_input():
    """A caller feeds every input of the signature; onnxruntime refuses a feed the model
    does not declare, so an unread input (TF1's batch_norm_with_global_normalization
    without scale_after_normalization ignores gamma) stays in the export, as in the
    Session and after an import."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        unused = og.placeholder(og.float32, [3], name="unused")
        y = x * 2.0
    model = g.to_model(signatures={"serving": og.signature({"x": x, "gamma": unused},
                                                           {"y": y})})
    proto = to_onnx(model)
    assert [i.name for i in proto.graph.input] == ["x", "gamma"]
    feeds = {"x": np.array([1, 2], np.float32), "gamma": np.zeros(3, np.float32)}
    assert _ort(proto, feeds)["y"].tolist() == [2, 4]
    assert og.Session(model).run_signature("serving", **feeds)["y"].tolist() == [2, 4]
    back = from_onnx(proto)
    assert og.Session(back).run(["y"], feeds)[0].tolist() == [2, 4]


def test_signature_is_chosen_by_name_in_the_api_and_the_cli(tmp_path):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        p, e = x + 1.0, x * 10.0
    sigs = {"predict": og.signature({"x": x}, {"p": p}),
            "embed": og.signature({"x": x}, {"e": e})}
    with pytest.raises(ConversionError, match=r"signatures \['embed', 'predict'\]: pick "
                                              "one with signature="):
        to_onnx(g, signatures=sigs)
    with pytest.raises(ConversionError, match=r"no signature 'serve' \(it has \['embed', "
                                              r"'predict'\]\)"):
        to_onnx(g, signatures=sigs, signature="serve")
    xv = np.array([1, 2], np.float32)
    assert _ort(to_onnx(g, signatures=sigs, signature="embed"), {"x": xv})["e"].tolist() \
        == [10, 20]
    og.save(g, tmp_path / "m.og", signatures=sigs)
    done = subprocess.run([sys.executable, "-m", "onegraph.cli", "convert",
                           str(tmp_path / "m.og"), str(tmp_path / "m.onnx"),
                           "--signature", "predict"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert _ort(onnx.load(tmp_path / "m.onnx"), {"x": xv})["p"].tolist() == [2, 3]
    done = subprocess.run([sys.executable, "-m", "onegraph.cli", "convert",
                           str(tmp_path / "m.onnx"), str(tmp_path / "n.og"),
                           "--signature", "predict"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "--signature applies to export" in done.stderr


def test_training_bookkeeping_stays_out_of_the_onnx_metadata():
    g, x, w, train, sigs = _linear_graph()
    with g.as_default():
        og.train.get_or_create_global_step()
    model = g.to_model(signatures=sigs, metadata={"author": "me"})
    assert "initializer" in model.metadata
    props = {p.key: p.value for p in to_onnx(model).metadata_props}
    assert props == {"author": "me"}


def test_truncated_normal_exports_to_a_model_onnxruntime_runs():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [1000], name="x")
        y = x + og.truncated_normal([1000], stddev=0.5, seed=3)
    model = g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})})
    got = _ort(to_onnx(model), {"x": np.zeros(1000, np.float32)})["y"]
    assert got.dtype == np.float32 and np.abs(got).max() <= 1.0 and got.std() > 0.3
    ours = og.Session(g).run(y, {x: np.zeros(1000, np.float32)})
    assert np.abs(ours).max() <= 1.0


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_cross_entropy_losses_export_as_onnx_ops():
    g = og.Graph()
    with g.as_default():
        logits = og.placeholder(og.float32, [None, 4], name="logits")
        onehot = og.placeholder(og.float32, [None, 4], name="onehot")
        labels = og.placeholder(og.int32, [None], name="labels")
        dense = og.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=logits)
        sparse = og.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                logits=logits)
    model = g.to_model(signatures={"serving": og.signature(
        {"logits": logits, "onehot": onehot, "labels": labels},
        {"dense": dense, "sparse": sparse})})
    rng = np.random.default_rng(0)
    lv = (rng.standard_normal((5, 4)) * 3).astype(np.float32)
    cls = np.array([0, 3, 1, 2, 3], np.int32)
    soft = rng.dirichlet(np.ones(4), 5).astype(np.float32)
    for opset in (13, 21):
        got = _ort(to_onnx(model, opset=opset), {"logits": lv, "onehot": soft,
                                                 "labels": cls})
        logp = _log_softmax(lv.astype(np.float64))
        np.testing.assert_allclose(got["dense"], -(soft * logp).sum(-1), rtol=1e-5)
        np.testing.assert_allclose(got["sparse"], -logp[np.arange(5), cls], rtol=1e-5)


def test_control_flow_refusal_says_what_it_is():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        y = g.op("Switch", [x, og.reduce_sum(x) > 0], name="lone_switch")[1]
    model = g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})})
    with pytest.raises(ConversionError, match=r"onegraph::Switch x1 \(first: node "
                                              r"'lone_switch'\).*a Switch read without"):
        to_onnx(model)


@pytest.mark.parametrize("opset", [13, 15, 17])
def test_even_split_exports_below_opset_18(opset):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [6, 2], name="x")
        a, b, c = og.split(x, 3, axis=0)
        parts = og.unstack(og.reshape(x, [3, 4]), axis=0)
    model = g.to_model(signatures={"serving": og.signature(
        {"x": x}, {"a": a, "c": c, "u": parts[2]})})
    proto = to_onnx(model, opset=opset)
    xv = np.arange(12, dtype=np.float32).reshape(6, 2)
    got = _ort(proto, {"x": xv})
    assert got["a"].tolist() == xv[:2].tolist() and got["c"].tolist() == xv[4:].tolist()
    assert got["u"].tolist() == xv.reshape(3, 4)[2].tolist()


def test_uneven_num_outputs_split_gets_its_sizes_below_opset_18():
    """Split-18's num_outputs with a smaller last part, as Split-13's `split` sizes."""
    from onnx import TensorProto, helper

    node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 7])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abc"])
    original = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    xv = np.arange(14, dtype=np.float32).reshape(2, 7)
    want = _ort(original, {"x": xv})
    assert [want[n].shape[1] for n in "abc"] == [3, 3, 1]
    proto = to_onnx(from_onnx(original), opset=15)
    got = _ort(proto, {"x": xv})
    for n in "abc":
        np.testing.assert_array_equal(got[n], want[n])


def test_num_outputs_splits_in_sibling_branches_get_their_own_lengths():
    """Two If branches each with their own local `t` (8 and 4 wide): each Split is
    rewritten for its own branch's length when exported below opset 18."""
    from onnx import TensorProto, helper

    def branch(name, make_t):
        nodes = make_t + [helper.make_node("Split", ["t"], ["p0", "p1", "p2"], axis=1,
                                           num_outputs=3),
                          helper.make_node("ReduceSum", ["p0"], ["r"], keepdims=0)]
        return helper.make_graph(nodes, name, [],
                                 [helper.make_tensor_value_info("r", TensorProto.FLOAT, [])])
    then_g = branch("then", [helper.make_node("Concat", ["x", "x"], ["t"], axis=1)])
    else_g = branch("else", [helper.make_node("Identity", ["x"], ["t"])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)], "m",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    original = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    proto = to_onnx(from_onnx(original), opset=17)
    xv = np.arange(8, dtype=np.float32).reshape(2, 4)
    for c in (True, False):
        feeds = {"c": np.array(c), "x": xv}
        assert _ort(proto, feeds)["y"] == _ort(original, feeds)["y"]


def test_one_fed_output_of_a_multi_output_node():
    """`a` of `a, b = split(x)` is a signature input, `b` still computed from x: the
    Split stays for b, its `a` renamed so `a` is defined once (the graph input)."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [4], name="x")
        a, b = og.split(x, 2)
        y = a * 10.0 + og.reduce_sum(b)
    model = g.to_model(signatures={"serving": og.signature({"x": x, "a": a}, {"y": y})})
    proto = to_onnx(model)
    got = _ort(proto, {"x": np.arange(4, dtype=np.float32),
                       "a": np.array([1, 2], np.float32)})["y"]
    assert got.tolist() == [15.0, 25.0]  # 10 * a + (2 + 3)


def test_a_default_exported_as_an_initializer_is_fed_by_name_after_the_round_trip():
    back = from_onnx(to_onnx(_scaled_by_default("k")))
    sess = og.Session(back)
    xv = np.arange(4, dtype=np.float32)
    assert sess.run_signature("serving", x=xv)["y"].tolist() == (xv * 5).tolist()
    assert sess.run_signature("serving", x=xv, k=np.array(-1, np.float32))["y"].tolist() \
        == (-xv).tolist()

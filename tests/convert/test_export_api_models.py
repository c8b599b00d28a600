"""Exporting graphs built with the training API: the `serving` signature is exported
(what its outputs depend on), variables as initializers holding their trained values;
checked by onnxruntime against a numpy forward pass from the fetched weights."""

import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError, OneGraphError


def _ort(proto, feeds):
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def _trained_mlp():
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(1)
        x = og.placeholder(og.float32, [None, 8], name="x")
        labels = og.placeholder(og.int64, [None], name="labels")
        h = og.nn.dense(x, 16, activation=og.nn.relu, name="l1")
        logits = og.nn.dense(h, 3, name="l2")
        loss = og.reduce_mean(og.nn.sparse_softmax_cross_entropy(labels=labels,
                                                                 logits=logits))
        train_op = og.train.Adam(1e-2).minimize(loss)
    sess = og.Session(g, seed=0)
    rng = np.random.default_rng(0)
    xb = rng.standard_normal((32, 8)).astype(np.float32)
    yb = rng.integers(0, 3, 32)
    for _ in range(5):
        sess.run(train_op, {x: xb, labels: yb})
    weights = [sess.run(v) for v in og.trainable_variables(g)]
    model = g.to_model(session=sess, signatures={
        "serving": og.signature({"x": x}, {"logits": logits}),
        "train": og.signature({"x": x, "labels": labels}, {"loss": loss}, [train_op])})
    return model, weights, xb, "logits"  # the ONNX output takes the signature's key


def test_trained_mlp_exports_its_serving_signature_with_trained_weights():
    model, (w1, b1, w2, b2), xb, logits = _trained_mlp()
    proto = to_onnx(model)
    onnx.checker.check_model(proto, full_check=True)
    want = np.maximum(xb @ w1 + b1, 0) @ w2 + b2  # numpy, from the fetched weights
    got = _ort(proto, {"x": xb})
    np.testing.assert_allclose(got[logits], want, rtol=1e-5, atol=1e-6)
    # only what serving reads: no labels input, no Adam slots, no step counter
    assert [i.name for i in proto.graph.input] == ["x"]
    assert sorted(t.name for t in proto.graph.initializer) == [
        "l1/bias", "l1/kernel", "l2/bias", "l2/kernel"]
    assert {n.domain for n in proto.graph.node} == {""}
    # and back: the imported model computes the same
    again = og.Session(from_onnx(proto)).run([logits], {"x": xb})[0]
    np.testing.assert_allclose(again, want, rtol=1e-5, atol=1e-6)


def test_cli_converts_a_saved_api_model(tmp_path):
    model, (w1, b1, w2, b2), xb, logits = _trained_mlp()
    og.save(model, tmp_path / "mlp.og")
    done = subprocess.run([sys.executable, "-m", "onegraph.cli", "convert",
                           str(tmp_path / "mlp.og"), str(tmp_path / "mlp.onnx")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = _ort(onnx.load(tmp_path / "mlp.onnx"), {"x": xb})
    np.testing.assert_allclose(got[logits], np.maximum(xb @ w1 + b1, 0) @ w2 + b2,
                               rtol=1e-5, atol=1e-6)


def test_a_model_without_outputs_or_serving_signature_is_refused():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        x * 2.0
    with pytest.raises(ConversionError, match="no outputs to export"):
        to_onnx(g.to_model())


def test_graph_ops_without_onnx_equivalent_export_as_onnx_ops():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [3], name="x")
        outs = {"sum": og.add_n([x, x, x]), "stop": og.stop_gradient(x) * 2.0,
                "zeros": og.zeros_like(x), "ones": og.ones_like(x)}
    model = g.to_model(signatures={"serving": og.signature({"x": x}, outs)})
    xv = np.array([1.0, np.nan, np.inf], np.float32)
    got = _ort(to_onnx(model), {"x": xv})
    by_key = {k: got[k] for k in outs}  # outputs are named by the signature's keys
    np.testing.assert_array_equal(by_key["sum"], 3 * xv)
    np.testing.assert_array_equal(by_key["stop"], 2 * xv)
    np.testing.assert_array_equal(by_key["zeros"], np.zeros(3, np.float32))  # not NaN*0
    np.testing.assert_array_equal(by_key["ones"], np.ones(3, np.float32))


def test_to_onnx_takes_a_graph_and_refuses_other_types():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        y = x + 1.0
    with pytest.raises(ConversionError, match="no outputs to export"):
        to_onnx(g)
    with pytest.raises(TypeError, match="expected an onegraph Model or og.Graph"):
        to_onnx("model.og")
    # with a serving signature naming its output it exports
    proto = to_onnx(g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})}))
    assert [o.name for o in proto.graph.output] == ["y"]  # the key, not y.name
    assert y.name != "y"


def test_unknown_rank_inputs_and_outputs_are_named():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, None, name="anyrank")
        y = og.identity(x, name="y")
    model = g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})})
    with pytest.raises(ConversionError, match="input 'x', output 'y': unknown rank"):
        to_onnx(model)


def test_a_variable_without_a_value_is_refused_by_name():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 4], name="x")
        v = og.Variable(og.constant(np.full((4, 2), 3.0, np.float32)) * 2.0, name="v")
        y = og.matmul(x, v, name="y")
    model = g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})})
    with pytest.raises(ConversionError, match="variable 'v' has no value"):
        to_onnx(model)


def test_to_model_refuses_a_session_of_another_graph():
    graphs = []
    for units in (2, 3):
        g = og.Graph()
        with g.as_default():
            og.nn.dense(og.placeholder(og.float32, [None, 4], name="x"), units, name="fc")
        graphs.append(g)
    sess = og.Session(graphs[0])
    with pytest.raises(OneGraphError, match="made for another graph"):
        graphs[1].to_model(session=sess)


def test_to_model_is_a_snapshot():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        y = og.identity(x * 2.0, name="y")
        model = g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})})
        nodes, inputs = len(model.graph.nodes), list(model.graph.inputs)
        og.placeholder(og.float32, [2], name="later") + 1.0
    assert len(model.graph.nodes) == nodes and model.graph.inputs == inputs
    got = _ort(to_onnx(model), {"x": np.array([1.0, 2.0], np.float32)})
    np.testing.assert_array_equal(got["y"], [2.0, 4.0])


def test_run_time_checks_chained_export_in_node_order():
    """Two og.slice blocks of unknown sizes, one cutting (a sum of) the other: each
    waits on its own run-time check (an Assert, left out of the export). The export kept the
    control edges' old node numbers, which named later nodes of the pruned graph and
    made a cycle ("cycle outside control-flow frames")."""
    xv = np.arange(20, dtype=np.float32).reshape(4, 5)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None], name="x")
        y = og.slice(x, [1, 0], [2, -1])
        for _ in range(20):  # enough kept nodes for the stale numbers to land on
            y = y + 1.0
        y = og.slice(y, [0, 1], [1, 3])
        sig = og.signature({"x": x}, {"y": y})
        want = og.Session(g).run(y, {x: xv})
        proto = to_onnx(g, signatures={"serving": sig})
    np.testing.assert_array_equal(want, xv[1:2, 1:4] + 20.0)
    got = ort.InferenceSession(proto.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(["y"], {"x": xv})
    np.testing.assert_array_equal(got[0], want)

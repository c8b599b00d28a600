"""Findings of an audit of og.Session's Python API by a user coming from onnxruntime
and TF1: what such a user tries first and what the Session says then."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
from onegraph.convert import from_onnx

from ..small_onnx import matmul_proto


@pytest.mark.parametrize("kind", ["str", "bytes", "pathlike"])
def test_a_path_is_refused_naming_the_loaders(tmp_path, kind):
    # onnxruntime's InferenceSession takes a path; og.Session takes a loaded model,
    # and the refusal says how to get one (it said only "got str")
    path = tmp_path / "m.onnx"
    onnx.save(matmul_proto(), str(path))
    arg = {"str": str(path), "bytes": os.fsencode(path), "pathlike": path}[kind]
    with pytest.raises(TypeError, match="Session needs a Model or Graph") as e:
        og.Session(arg)
    assert "og.load" in str(e.value) and "from_onnx" in str(e.value)


def test_a_modelproto_is_refused_naming_from_onnx():
    with pytest.raises(TypeError, match="Session needs a Model or Graph") as e:
        og.Session(matmul_proto())
    assert "from_onnx" in str(e.value)


def test_the_converted_model_runs_as_onnxruntime_runs_it():
    # the oracle: onnxruntime on the same proto
    ort = pytest.importorskip("onnxruntime")
    proto = matmul_proto()
    xv = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    (want,) = ort.InferenceSession(proto.SerializeToString()).run(None, {"x": xv})
    sess = og.Session(from_onnx(proto))
    np.testing.assert_allclose(sess.run("y", {"x": xv}), want, rtol=1e-6)
    np.testing.assert_allclose(sess.run_signature("serving", x=xv)["y"], want, rtol=1e-6)


def test_run_signature_documents_what_it_raises():
    # a closed session, a name that is no str and a value that does not fit are
    # raised by run_signature; its docstring listed only OneGraphError
    doc = og.Session.run_signature.__doc__
    for name in ("RuntimeError", "TypeError", "ShapeError", "OneGraphError"):
        assert name in doc, name
    sess = og.Session(from_onnx(matmul_proto()))
    with pytest.raises(og.ShapeError, match="input 'x'"):
        sess.run_signature("serving", x=np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="must be a str"):
        sess.run_signature(3, x=np.ones((2, 4), np.float32))
    sess.close()
    with pytest.raises(RuntimeError, match="closed"):
        sess.run_signature("serving", x=np.ones((2, 4), np.float32))


class _ClosingHandle:
    """A tensor handle (duck-typed: `tensor_index`) that closes the session when the
    run resolves it: close() landing between run's closed check and its planning, as
    another thread's close() can."""

    graph = None

    def __init__(self, sess, index):
        self.sess, self.index = sess, index

    @property
    def tensor_index(self):
        self.sess.close()
        return self.index


def test_a_run_racing_close_never_reads_a_variable_reset_to_its_initial_value():
    # close() cleared the state; a plan compiled afterwards made the variable afresh
    # from its initial value, and the run returned x @ ones where the session held
    # x @ twos (a thread stress showed it in about 1% of runs racing close())
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 4], name="x")
        v = og.Variable(np.ones((4, 2), np.float32), name="v")
        y = og.matmul(x, v, name="y")
        init = og.global_variables_initializer()
        bump = og.assign(v, np.full((4, 2), 2, np.float32))
    sess = og.Session(g)
    sess.run(init)
    sess.run(bump)
    xv = np.ones((1, 4), np.float32)
    np.testing.assert_array_equal(sess.run(y, {x: xv}), xv @ np.full((4, 2), 2, np.float32))
    sess2 = og.Session(g)
    sess2.run(init)
    sess2.run(bump)
    with pytest.raises(RuntimeError, match="the session is closed"):
        sess2.run(_ClosingHandle(sess2, y.tensor_index), {x: xv})
    assert sess2.closed and not sess2._plans  # nothing compiled into the closed session


def _folding_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    inits = [numpy_helper.from_array(np.array([1, 2], np.float32), "a"),
             numpy_helper.from_array(np.array([3, 4], np.float32), "b")]
    nodes = [helper.make_node("Add", ["a", "b"], ["c"], name="fold"),
             helper.make_node("Mul", ["x", "c"], ["y"], name="mul")]
    graph = helper.make_graph(nodes, "g", [x], [y], inits)
    return from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_optimize_false_set_after_a_run_runs_the_graph_as_written():
    # "Set Session.optimize = False to run the graph as written": a plan cached before
    # kept its folded constant, so the graph's Add never ran (a differential check
    # against optimize=False on a session that had run compared optimized to optimized)
    model = _folding_model()
    sess = og.Session(model)
    xv = np.ones(2, np.float32)
    sess.run("y", {"x": xv})
    sess.optimize = False
    meta = og.RunMetadata()
    np.testing.assert_array_equal(sess.run("y", {"x": xv}, run_metadata=meta), [4, 6])
    # the oracle: the graph's own nodes, each run as one step
    assert [(s.node, s.op_type) for s in meta.step_stats] == \
        [(n.name, n.op_type) for n in model.graph.nodes]
    sess.optimize = True
    meta = og.RunMetadata()
    sess.run("y", {"x": xv}, run_metadata=meta)
    assert [s.node for s in meta.step_stats] == ["mul"]  # folded again


def test_feeding_a_graph_tensor_says_it_is_one():
    # a TF1 classic: feeding the handle of a graph tensor (an og.constant, a
    # preprocessing op) instead of its value; TF1 raises TypeError "The value of a feed
    # cannot be a tf.Tensor object", onegraph said "dtype object does not match"
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        c = og.constant(np.ones(2, np.float32), name="c")
        y = og.multiply(x, 2.0, name="y")
    sess = og.Session(g)
    for value in (c, y, y.op):
        with pytest.raises(TypeError, match="feed for 'x': .*graph tensor or op") as e:
            sess.run(y, {x: value})
        assert "dtype object" not in str(e.value)
    np.testing.assert_array_equal(sess.run(y, {x: sess.run(c)}), [2, 2])

"""A signature of a model's second graph runs that graph (Session and `onegraph run`).

The format lets a signature name any graph of the model (Signature.graph); its tensor
indices mean tensors of that graph. The main graph here multiplies two inputs of the
same shapes, so running the signature's indices in it would give a*b, not a+b.
"""

import numpy as np

import onegraph as og
from onegraph.cli import main
from onegraph.format import Graph, Model


def _two_graph_model():
    first = Graph("main")
    x = first.add_input("x", "float32", [3])
    t = first.add_input("t", "float32", [3])
    (z,) = first.add_node("Mul", [x, t], ["z"])
    first.outputs = [z]
    second = Graph("sub")
    a = second.add_input("a", "float32", [3])
    b = second.add_input("b", "float32", [3])
    (d,) = second.add_node("Add", [a, b], ["d"])
    second.outputs = [d]
    model = Model(graphs=[first, second])
    model.opset_imports = {"": 17}
    model.add_signature("add", inputs={"a": a, "b": b}, outputs={"d": d}, graph=1)
    model.add_signature("serving", inputs={"x": x, "t": t}, outputs={"z": z})
    return model


def test_run_signature_of_another_graph_runs_that_graph(tmp_path):
    path = str(tmp_path / "m.og")
    og.save(_two_graph_model(), path)
    with og.Session(og.load(path)) as sess:
        a, b = np.full(3, 2, np.float32), np.full(3, 5, np.float32)
        np.testing.assert_array_equal(sess.run_signature("add", a=a, b=b)["d"], [7, 7, 7])
        np.testing.assert_array_equal(sess.run_signature("serving", x=a, t=b)["z"],
                                      [10, 10, 10])
        np.testing.assert_array_equal(sess.run_signature("add", a=b, b=b)["d"], [10] * 3)


def test_onegraph_run_of_a_signature_of_another_graph(tmp_path, capsys):
    path = str(tmp_path / "m.og")
    og.save(_two_graph_model(), path)
    np.save(tmp_path / "a.npy", np.full(3, 2, np.float32))
    np.save(tmp_path / "b.npy", np.full(3, 5, np.float32))
    out = tmp_path / "out"
    assert main(["run", path, "--signature", "add", "--input", f"a={tmp_path / 'a.npy'}",
                 "--input", f"b={tmp_path / 'b.npy'}", "--output-dir", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out / "d.npy"), [7, 7, 7])


def test_signature_session_of_another_graph_follows_optimize(tmp_path):
    path = str(tmp_path / "m.og")
    og.save(_two_graph_model(), path)
    sess = og.Session(og.load(path))
    sess.optimize = False
    a = np.full(3, 2, np.float32)
    sess.run_signature("add", a=a, b=a)
    (child,) = sess._signature_sessions.values()
    assert child.optimize is False
    sess.close()
    assert child.closed

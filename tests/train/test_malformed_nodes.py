"""Nodes that do not fit their op (a file written by another tool, or damaged) are
refused by name when a plan is made, not inside a kernel or the plan optimizer."""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError, OpAttributeError
from onegraph.format import Graph, Model


def _run(build, tmp_path):
    g = Graph("main")
    x = g.add_input("x", "float32", [1, 1, 4, 4])
    g.outputs = [build(g, x)]
    model = Model(graphs=[g])
    model.opset_imports = {"": 17}
    path = str(tmp_path / "m.og")
    og.save(model, path)
    return og.Session(og.load(path)).run(g.outputs, {"x": np.ones((1, 1, 4, 4), np.float32)})


def _weights(g, name):
    return g.add_constant(name, np.ones((1, 1, 1, 1), np.float32))


def test_conv_without_its_weights(tmp_path):
    with pytest.raises(ExecutionError, match=r"Conv needs input 1 \('W'\), which the node "
                                             r"does not give"):
        _run(lambda g, x: g.add_node("Conv", [x], ["y"])[0], tmp_path)


def test_too_many_inputs(tmp_path):
    with pytest.raises(ExecutionError, match=r"Relu takes at most 1 input\(s\) \(X\), the "
                                             r"node has 2"):
        _run(lambda g, x: g.add_node("Relu", [x, x], ["y"])[0], tmp_path)


def test_too_many_outputs(tmp_path):
    with pytest.raises(ExecutionError, match=r"Relu takes at most 1 output\(s\) \(Y\), the "
                                             r"node has 2"):
        _run(lambda g, x: g.add_node("Relu", [x], ["y", "z"])[0], tmp_path)


def test_attribute_of_the_wrong_kind(tmp_path):
    def concat(g, x):
        (a,) = g.add_node("Conv", [x, _weights(g, "w")], ["a"])
        (b,) = g.add_node("Conv", [x, _weights(g, "w2")], ["b"])
        return g.add_node("Concat", [a, b], ["y"], {"axis": np.zeros(0, np.float32)})[0]

    with pytest.raises(OpAttributeError, match="attribute 'axis' must be an integer"):
        _run(concat, tmp_path)


@pytest.mark.parametrize("kind,value,ok", [
    ("int", 3, True), ("int", np.int64(3), True), ("int", 2.5, False), ("int", "3", False),
    ("float", 1, True), ("float", np.float32(0.5), True), ("float", [1.0], False),
    ("ints", [1, 2], True), ("ints", (), True), ("ints", np.array([1, 2]), True),
    ("ints", [1.5], False), ("ints", 3, False), ("ints", np.ones((2, 2), int), False),
    ("floats", [1, 2.5], True), ("floats", ["a"], False),
    ("string", "x", True), ("string", b"x", True), ("string", 1, False),
    ("strings", ["a", b"b"], True), ("strings", [1], False), ("strings", "ab", False),
])
def test_attribute_kinds(kind, value, ok):
    from onegraph.ops.registry import _attr_fits

    assert _attr_fits(kind, value) is ok


def test_if_whose_branch_has_more_outputs_than_the_node(tmp_path):
    def build(g, x):
        branches = []
        for name in ("then", "else"):
            body = Graph(name)
            (a,) = body.add_node("Constant", [], [f"{name}_a"],
                                 {"value": np.ones(2, np.float32)})
            (b,) = body.add_node("Constant", [], [f"{name}_b"],
                                 {"value": np.zeros(2, np.float32)})
            body.outputs = [a, b]
            branches.append(body)
        cond = g.add_constant("c", np.array(True))
        return g.add_node("If", [cond], ["y"], {"then_branch": branches[0],
                                                "else_branch": branches[1]})[0]

    with pytest.raises(ExecutionError, match=r"If: then_branch has 2 output\(s\), the "
                                             r"node 1"):
        _run(build, tmp_path)


def test_a_name_two_tensors_share_is_refused_as_a_feed_or_fetch(tmp_path):
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    (y,) = g.add_node("Neg", [x], ["y"])
    g.tensors[y].name = "x"  # a file may repeat a name
    g.outputs = [y]
    model = Model(graphs=[g])
    model.opset_imports = {"": 17}
    path = str(tmp_path / "m.og")
    og.save(model, path)
    sess = og.Session(og.load(path))
    with pytest.raises(og.OneGraphError, match=r"2 tensors named 'x' \(indices \[0, 1\]\)"):
        sess.run("x", {"x": np.ones(2, np.float32)})
    np.testing.assert_array_equal(sess.run(y, {x: np.ones(2, np.float32)}), [-1, -1])

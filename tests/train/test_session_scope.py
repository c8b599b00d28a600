"""Session: values read by subgraphs through ONNX outer scope, and sequence feeds."""

import numpy as np

import onegraph as og
from onegraph.format import Graph, Model


def _if_model():
    """z = If(c, then: y + 1 where y = x * 2 lives only in the outer graph, else: x)."""
    g = Graph("main")
    x = g.add_input("x", "float32", [3])
    cond = g.add_input("c", "bool", [])
    two = g.add_constant("two", np.float32(2))
    one = g.add_constant("one", np.float32(1))
    g.add_node("Mul", [x, two], ["y"])  # consumed by no node of this graph
    then_g = Graph("then")
    then_g.add_tensor("y", "float32", [3])  # outer-scope reference by name
    then_g.add_tensor("one", "float32", [])
    (t_out,) = then_g.add_node("Add", ["y", "one"], ["t_out"])
    then_g.outputs = [t_out]
    else_g = Graph("else")
    else_g.add_tensor("x", "float32", [3])
    (e_out,) = else_g.add_node("Identity", ["x"], ["e_out"])
    else_g.outputs = [e_out]
    (z,) = g.add_node("If", [cond], ["z"], {"then_branch": then_g, "else_branch": else_g})
    g.outputs = [z]
    del one
    return Model(graphs=[g], opset_imports={"": 21})


def test_outer_scope_value_used_only_by_subgraph_is_computed_and_kept():
    """The Mul feeding only the then-branch runs before the If and is not freed early."""
    sess = og.Session(_if_model())
    x = np.array([1, 2, 3], np.float32)
    (z,) = sess.run(["z"], {"x": x, "c": np.array(True)})
    np.testing.assert_array_equal(z, x * 2 + 1)
    (z,) = sess.run(["z"], {"x": x, "c": np.array(False)})
    np.testing.assert_array_equal(z, x)


def test_sequence_and_optional_feeds_pass_through_untyped_inputs():
    """A list fed to an untyped input stays a list of arrays; None stays None."""
    g = Graph("main")
    s = g.add_tensor("s", "undefined", None)
    g.inputs = [s]
    (out,) = g.add_node("Identity", [s], ["out"])
    g.outputs = [out]
    sess = og.Session(Model(graphs=[g]))
    (value,) = sess.run(["out"], {"s": [np.ones(2), np.zeros(3)]})
    assert isinstance(value, list) and [v.shape for v in value] == [(2,), (3,)]
    (value,) = sess.run(["out"], {"s": None})
    assert value is None


def test_node_added_after_session_creation_is_a_target_by_name():
    """The node-name map follows a graph that grows after the Session was made."""
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    g.add_node("Relu", [x], ["y"], name="first")
    sess = og.Session(Model(graphs=[g]))
    sess.run("y", {"x": np.zeros(2, np.float32)})
    g.add_node("Identity", ["y"], ["z"], name="late")
    z, late = sess.run(["z", "late"], {"x": np.array([-1, 2], np.float32)})
    np.testing.assert_array_equal(z, [0, 2])
    assert late is None

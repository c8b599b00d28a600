"""Node and graph doc_strings (schema 1.5): kept by the file and by the ONNX round trip.

ONNX exporters put free text in NodeProto.doc_string (PyTorch: the source line of the
op) and GraphProto.doc_string; `from_onnx` -> `.og` -> `to_onnx` must give them back.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onegraph
from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import FormatError
from onegraph.format import SCHEMA_VERSION, Graph, Model

vi = helper.make_tensor_value_info
F = TensorProto.FLOAT


def test_schema_version_has_doc_strings():
    assert SCHEMA_VERSION >= (1, 5)


def _model_with_doc_strings():
    then_b = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["t"], doc_string="then: Neg (model.py:7)")],
        "then", [], [vi("t", F, [2])], doc_string="the branch taken when c")
    else_b = helper.make_graph([helper.make_node("Abs", ["x"], ["e"])], "else", [],
                               [vi("e", F, [2])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_b, else_branch=else_b,
                              doc_string="If: branch on c"),
             helper.make_node("Relu", ["y"], ["z"], name="act",
                              doc_string="File \"model.py\", line 12\n  z = relu(y)  é")]
    graph = helper.make_graph(nodes, "g", [vi("c", TensorProto.BOOL, []), vi("x", F, [2])],
                              [vi("z", F, [2])], doc_string="main graph ✓")
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _doc_strings(graph: onnx.GraphProto) -> list:
    out = [graph.doc_string]
    for node in graph.node:
        out.append(node.doc_string)
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out.append(_doc_strings(a.g))
    return out


def test_onnx_round_trip_keeps_node_and_graph_doc_strings(tmp_path):
    original = _model_with_doc_strings()
    model = from_onnx(original)
    assert model.graph.doc_string == "main graph ✓"
    assert model.graph.nodes[1].doc_string.endswith("z = relu(y)  é")
    path = tmp_path / "m.og"
    onegraph.save(model, path)
    loaded = onegraph.load(path)
    assert loaded == model
    exported = to_onnx(loaded)
    assert _doc_strings(exported.graph) == _doc_strings(original.graph)
    feeds = {"c": np.array(True), "x": np.array([1, -2], np.float32)}
    want = ort.InferenceSession(original.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    got = ort.InferenceSession(exported.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_array_equal(got[0], want[0])


def test_doc_strings_change_equality_and_absent_ones_stay_empty(tmp_path):
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    (y,) = g.add_node("Relu", [x], ["y"])
    g.outputs = [y]
    model = Model(graphs=[g], opset_imports={"": 21})
    path = tmp_path / "plain.og"
    onegraph.save(model, path)
    loaded = onegraph.load(path)
    assert loaded.graph.doc_string == "" and loaded.graph.nodes[0].doc_string == ""
    loaded.graph.nodes[0].doc_string = "changed"
    assert loaded != model
    # an empty doc_string writes no field: the ONNX node has none either
    assert not to_onnx(model).graph.node[0].HasField("doc_string")


@pytest.mark.parametrize("where", ["graph", "node"])
def test_lint_refuses_a_doc_string_that_is_not_text(tmp_path, where):
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    (y,) = g.add_node("Relu", [x], ["y"])
    g.outputs = [y]
    if where == "graph":
        g.doc_string = b"bytes"
    else:
        g.nodes[0].doc_string = "\ud800"  # a lone surrogate: not encodable as UTF-8
    path = tmp_path / "bad.og"
    with pytest.raises(FormatError, match="doc_string"):
        onegraph.save(Model(graphs=[g], opset_imports={"": 21}), path)
    assert not path.exists()

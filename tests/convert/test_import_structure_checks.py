"""Structural checks from_onnx makes before onnx's own C++ passes (the inliner, the
version converter, shape inference), which crash the process on some malformed models:
each case runs in a child process, so a crash fails the test instead of pytest."""

import subprocess
import sys
import textwrap

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from onegraph.convert import from_onnx
from onegraph.errors import ConversionError

# Each builds a model `m` with onnx.helper (h, T) and imports it.
CHILD = """
import sys, onnx
from onnx import helper as h, TensorProto as T
from onegraph.convert import from_onnx
{build}
try:
    from_onnx(m.SerializeToString())
    print("imported")
except Exception as e:
    print(type(e).__name__ + ": " + str(e))
"""

CRASHERS = {
    "dangling_regex_input": ("""
node = h.make_node("RegexFullMatch", ["nope"], ["m"], pattern="a.*")
g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.STRING, (2,))],
                 [h.make_tensor_value_info("m", T.BOOL, (2,))])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 20)])
""", "ConversionError: graph 'g': node 0 (RegexFullMatch) input 'nope' names no tensor"),
    "untyped_regex_input": ("""
node = h.make_node("RegexFullMatch", ["x"], ["m"], pattern="a.*")
g = h.make_graph([node], "g", [onnx.ValueInfoProto(name="x")],
                 [h.make_tensor_value_info("m", T.BOOL, (2,))])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 20)])
""", "imported"),
    "dangling_label_encoder_input": ("""
node = h.make_node("LabelEncoder", ["nope"], ["m"], domain="ai.onnx.ml",
                   keys_int64s=[1, 2], values_strings=["a", "b"])
g = h.make_graph([node], "g", [], [h.make_tensor_value_info("m", T.STRING, (2,))])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 20), h.make_opsetid("ai.onnx.ml", 3)])
""", "ConversionError: graph 'g': node 0 (LabelEncoder) input 'nope' names no tensor"),
    "opset11_unsqueeze_axes_float": ("""
node = h.make_node("Unsqueeze", ["x"], ["y"])
node.attribute.append(h.make_attribute("axes", 1.0))
g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, (2,))],
                 [h.make_tensor_value_info("y", T.FLOAT, None)])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 11)])
""", "ConversionError: graph 'g': node 0 (Unsqueeze) attribute 'axes' must be INTS, got "
     "FLOAT (opset 11)"),
    "opset11_split_type_and_field_disagree": ("""
node = h.make_node("Split", ["x"], ["a", "b"], split=[1, 1])
node.attribute[0].type = onnx.AttributeProto.FLOAT
g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, (2,))],
                 [h.make_tensor_value_info(n, T.FLOAT, None) for n in "ab"])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 11)])
""", "ConversionError: graph 'g': node 0 (Split) attribute 'split': its type is FLOAT but "
     "it holds a value in field 'ints'"),
    "minus_one_dim_before_slice": ("""
init = [h.make_tensor(n, T.INT64, [1], [v]) for n, v in (("s", 0), ("e", 3), ("a", 1))]
g = h.make_graph([h.make_node("Slice", ["x", "s", "e", "a"], ["y"])], "g",
                 [h.make_tensor_value_info("x", T.FLOAT, (2, -1))],
                 [h.make_tensor_value_info("y", T.FLOAT, None)], init)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
""", "imported"),
    "minus_five_dim_before_slice": ("""
init = [h.make_tensor(n, T.INT64, [1], [v]) for n, v in (("s", 0), ("e", 3), ("a", 1))]
g = h.make_graph([h.make_node("Slice", ["x", "s", "e", "a"], ["y"])], "g",
                 [h.make_tensor_value_info("x", T.FLOAT, (2, -5))],
                 [h.make_tensor_value_info("y", T.FLOAT, None)], init)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
""", "ConversionError: graph 'g' input 'x': dimension -5 is negative"),
}


@pytest.mark.parametrize("case", sorted(CRASHERS))
def test_malformed_model_is_refused_before_onnx_passes_can_crash(case):
    build, expected = CRASHERS[case]
    done = subprocess.run([sys.executable, "-c", CHILD.format(build=textwrap.dedent(build))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the import crashed the process ({done.returncode}): " \
                                 f"{done.stderr[-500:]}"
    assert done.stdout.strip().startswith(expected), done.stdout


def _nested_ifs(depth: int) -> onnx.ModelProto:
    """If inside If, `depth` levels, built from the top down in place (helper.make_node
    copies its graph attributes through protobuf, which stops at its parse depth)."""
    graph = h.make_graph([], "g", [h.make_tensor_value_info("c", T.BOOL, []),
                                   h.make_tensor_value_info("x", T.FLOAT, [1])],
                         [h.make_tensor_value_info(f"t{depth}", T.FLOAT, [1])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    g = model.graph
    for k in range(depth, 0, -1):
        node = g.node.add(op_type="If", input=["c"], output=[f"t{k}"])
        node.attribute.add(name="else_branch", type=onnx.AttributeProto.GRAPH).g.CopyFrom(
            h.make_graph([h.make_node("Identity", ["x"], [f"e{k}"])], f"else{k}", [],
                         [h.make_tensor_value_info(f"e{k}", T.FLOAT, [1])]))
        g = node.attribute.add(name="then_branch", type=onnx.AttributeProto.GRAPH).g
        g.name = f"level{k - 1}"
        g.output.append(h.make_tensor_value_info(f"t{k - 1}", T.FLOAT, [1]))
    g.node.append(h.make_node("Identity", ["x"], ["t0"]))
    return model


def test_deeply_nested_subgraphs_are_refused_without_recursion_error():
    with pytest.raises(ConversionError, match="nested more than 32 deep"):
        from_onnx(_nested_ifs(400))


def test_subgraphs_nested_within_the_limit_import():
    model = from_onnx(_nested_ifs(5))
    assert model.graph.nodes[0].op_type == "If"


def _ort_refuses(model) -> bool:
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - any refusal
        return True
    return False


def test_function_body_cannot_read_the_callers_values():
    """ONNX functions have no outer scope: `w` inside F is undefined, even though the
    calling graph has an initializer `w` (onnx's inliner would bind it to that)."""
    f = h.make_function("local", "F", ["a"], ["b"], [h.make_node("Add", ["a", "w"], ["b"])],
                        [h.make_opsetid("", 17)])
    g = h.make_graph([h.make_node("F", ["x"], ["y"], domain="local")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])],
                     [h.make_tensor("w", T.FLOAT, [2], [100.0, 100.0])])
    m = h.make_model(g, functions=[f], opset_imports=[h.make_opsetid("", 17),
                                                     h.make_opsetid("local", 1)])
    assert _ort_refuses(m)
    with pytest.raises(ConversionError, match=r"function 'local::F': node 0 \(Add\) input "
                                              r"'w' names no tensor"):
        from_onnx(m)


def test_function_named_like_a_standard_op_is_refused():
    f = h.make_function("", "Relu", ["a"], ["b"], [h.make_node("Neg", ["a"], ["b"])],
                        [h.make_opsetid("", 17)])
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])])
    m = h.make_model(g, functions=[f], opset_imports=[h.make_opsetid("", 17)])
    with pytest.raises(ConversionError, match="has the name of the standard ONNX op Relu"):
        from_onnx(m)


@pytest.mark.parametrize("field", ["f", "i"])
def test_attribute_value_in_another_field_than_its_type_is_refused(field):
    if field == "f":  # Softmax axis typed INT, its value in f
        node = h.make_node("Softmax", ["x"], ["y"])
        node.attribute.append(onnx.AttributeProto(name="axis", type=onnx.AttributeProto.INT,
                                                  f=1.0))
        what = "its type is INT but it holds a value in field 'f'"
    else:  # Transpose perm typed INTS, its value in i
        node = h.make_node("Transpose", ["x"], ["y"])
        node.attribute.append(onnx.AttributeProto(name="perm", type=onnx.AttributeProto.INTS,
                                                  i=1))
        what = "its type is INTS but it holds a value in field 'i'"
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    assert _ort_refuses(m)
    with pytest.raises(ConversionError, match=what):
        from_onnx(m)


def test_minus_one_dim_reads_as_unknown():
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, (2, -1))],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = from_onnx(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    assert model.graph.tensors[model.graph.inputs[0]].shape == (2, -1)
    import onegraph as og

    out = og.Session(model).run(["y"], {"x": np.array([[-1, 2, 3]] * 2, np.float32)})
    assert out[0].tolist() == [[0, 2, 3]] * 2

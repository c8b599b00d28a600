"""Fixes from a structure-aware fuzz of from_onnx / Session / to_onnx (about 200,000
mutated node-test and light models).

- Models on which onnx's C++ shape inference kills the process (a required input
  given as "", an axis attribute of 2**63 - 1, a negative GatherND batch_dims) are
  refused before it runs; each case runs in a child process, so a crash fails the
  test instead of ending the run.
- Exporting a model whose graph input has no element type is a ConversionError (onnx
  crashed on it too).
- A pre-opset-18 Split whose axis attribute has the wrong type is a ConversionError,
  not a TypeError.
- A graph output that is a graph input itself, declared with another type, is refused
  (the feed was cast to the output's type).
- Elu and Selu with a NaN or infinite alpha leave x > 0 alone (0 * alpha was NaN).
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto as T  # noqa: E402
from onnx import ValueInfoProto, helper  # noqa: E402

from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import ConversionError  # noqa: E402
from onegraph.train.session import Session  # noqa: E402

_PRELUDE = """
from onnx import helper, TensorProto as T, ValueInfoProto
from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError
def vi(n, t, s): return helper.make_tensor_value_info(n, t, s)
def model(nodes, ins, outs, ml=False):
    ops = [helper.make_opsetid("", 21)] + ([helper.make_opsetid("ai.onnx.ml", 4)] if ml else [])
    m = helper.make_model(helper.make_graph(nodes, "g", ins, outs), opset_imports=ops)
    m.ir_version = 10
    return m
"""


def _in_child(body: str) -> str:
    """Run body after the prelude in a fresh interpreter; its stdout (a crash fails)."""
    code = _PRELUDE + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    return done.stdout


@pytest.mark.parametrize("build, message", [
    ('model([helper.make_node("LabelEncoder", [""], ["y"], domain="ai.onnx.ml", '
     'keys_strings=["a"], values_int64s=[1])], [vi("x", T.STRING, [2])], '
     '[vi("y", T.INT64, [2])], ml=True)', "required input 0 ('X') of LabelEncoder is empty"),
    ('model([helper.make_node("EyeLike", [""], ["y"])], [vi("x", T.FLOAT, [2, 2])], '
     '[vi("y", T.FLOAT, [2, 2])])', "required input 0 ('input') of EyeLike is empty"),
    ('model([helper.make_node("LayerNormalization", ["x", "w"], ["y", "m", "s"], '
     'axis=2**63 - 1)], [vi("x", T.FLOAT, [2, 3]), vi("w", T.FLOAT, [3])], '
     '[vi("y", T.FLOAT, [2, 3]), vi("m", T.FLOAT, None), vi("s", T.FLOAT, None)])',
     "attribute axis = 9223372036854775807 is out of range"),
    ('model([helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=-7)], '
     '[vi("x", T.INT32, [2, 2]), vi("i", T.INT64, [2, 1])], [vi("y", T.INT32, None)])',
     "attribute batch_dims = -7 is out of range"),
], ids=["label_encoder_empty_input", "eye_like_empty_input", "huge_axis",
        "negative_batch_dims"])
def test_models_that_crash_onnx_inference_are_refused_first(build, message):
    out = _in_child(f"""
        try:
            from_onnx({build})
            print("imported")
        except ConversionError as e:
            print("refused:", e)
    """)
    assert "refused:" in out and message in out, out


def test_exporting_an_untyped_graph_input_is_refused():
    out = _in_child("""
        g = helper.make_graph([helper.make_node("EyeLike", ["x"], ["y"], dtype=1, k=1)], "g",
                              [ValueInfoProto(name="x")], [vi("y", T.FLOAT, [2, 3])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
        m.ir_version = 10
        try:
            to_onnx(from_onnx(m))
            print("exported")
        except ConversionError as e:
            print("refused:", e)
    """)
    assert "refused:" in out and "no known element type" in out, out


def test_split_axis_of_the_wrong_type_is_a_conversion_error():
    node = helper.make_node("Split", ["x"], ["a", "b"])
    node.attribute.append(helper.make_attribute("axis", [1]))
    m = helper.make_model(helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", T.FLOAT, [2, 4])],
        [helper.make_tensor_value_info(n, T.FLOAT, None) for n in "ab"]),
        opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with pytest.raises(ConversionError, match="axis"):
        from_onnx(m)


def test_output_that_is_its_input_with_another_type_is_refused():
    g = helper.make_graph([], "g", [helper.make_tensor_value_info("x", T.DOUBLE, [2])],
                          [helper.make_tensor_value_info("x", T.FLOAT16, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    with pytest.raises(ConversionError, match="'x' is its input itself, declared DOUBLE"):
        from_onnx(m)


@pytest.mark.parametrize("op, alpha", [("Elu", np.nan), ("Elu", np.inf), ("Selu", np.nan),
                                       ("Selu", -np.inf)])
def test_elu_selu_with_a_non_finite_alpha_match_onnxruntime(op, alpha):
    x = np.asarray([-1.0, 0.0, 0.5, 2.0], np.float32)
    m = helper.make_model(helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], alpha=float(alpha))], "g",
        [helper.make_tensor_value_info("x", T.FLOAT, [4])],
        [helper.make_tensor_value_info("y", T.FLOAT, [4])]),
        opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    got = Session(from_onnx(m)).run(["y"], {"x": x})[0]
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got[2:], want[2:])     # x > 0: untouched
    np.testing.assert_array_equal(np.isnan(got[:1]), np.isnan(want[:1]))

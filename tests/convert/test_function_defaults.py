"""Model-local functions' attribute defaults through attribute references, against
onnxruntime (which inlines as ONNX specifies).

B(x; beta = 0.3) = LeakyRelu(x, alpha=@beta) and A(x; alpha) = B(x, beta=@alpha): a
call A(x) that leaves alpha out leaves B's beta unset, so B's default 0.3 applies
(onegraph applied LeakyRelu's own default, 0.01, before: the reference was dropped by
onnx's inliner after the defaults had been copied). Found by the onnxscript sweep
(tests/convert/test_onnxscript_exported.py).
"""

import numpy as np
import pytest
from onnx import AttributeProto, TensorProto, helper

from onegraph.convert import from_onnx
from onegraph.train.session import Session

ort = pytest.importorskip("onnxruntime")

F = TensorProto.FLOAT


def _ref(name, target):
    return AttributeProto(name=name, ref_attr_name=target, type=AttributeProto.FLOAT)


def _b(default=0.3, body_op="LeakyRelu", in_if=False):
    """B(x; beta = default) = LeakyRelu(x, alpha=@beta), maybe inside an If branch."""
    inner = helper.make_node(body_op, ["x"], ["y"])
    inner.attribute.append(_ref("alpha", "beta"))
    nodes = [inner]
    if in_if:
        branch = helper.make_graph([inner], "then", [],
                                   [helper.make_tensor_value_info("y", F, [4])])
        other = helper.make_graph([helper.make_node("Identity", ["x"], ["y2"])], "else", [],
                                  [helper.make_tensor_value_info("y2", F, [4])])
        nodes = [helper.make_node("Constant", [], ["c"], value=helper.make_tensor(
                     "c", TensorProto.BOOL, [], [True])),
                 helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=other)]
    b = helper.make_function("custom", "B", ["x"], ["y"], nodes, [helper.make_opsetid("", 18)])
    if default is not None:
        b.attribute_proto.append(helper.make_attribute("beta", default))
    else:
        b.attribute.append("beta")
    return b


def _a(default=None):
    """A(x; alpha [= default]) = B(x, beta=@alpha)."""
    call = helper.make_node("B", ["x"], ["y"], domain="custom")
    call.attribute.append(_ref("beta", "alpha"))
    a = helper.make_function("custom", "A", ["x"], ["y"], [call],
                             [helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)])
    if default is None:
        a.attribute.append("alpha")
    else:
        a.attribute_proto.append(helper.make_attribute("alpha", default))
    return a


def _model(calls, functions):
    nodes = [helper.make_node(op, ["x"], [out], domain="custom", **attrs)
             for op, out, attrs in calls]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [4])],
                              [helper.make_tensor_value_info(out, F, [4])
                               for _, out, _ in calls])
    return helper.make_model(graph, functions=functions,
                             opset_imports=[helper.make_opsetid("", 18),
                                            helper.make_opsetid("custom", 1)])


def _both(model):
    x = np.array([-1.0, -2.0, 1.0, 2.0], np.float32)
    names = [o.name for o in model.graph.output]
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"]).run(names, {"x": x})
    got = Session(from_onnx(model)).run(names, {"x": x})
    return got, want


@pytest.mark.parametrize("in_if", [False, True])
def test_reference_to_an_attribute_the_call_leaves_out_takes_the_inner_default(in_if):
    model = _model([("A", "y", {}), ("B", "z", {}), ("A", "w", {"alpha": 0.7})],
                   [_a(), _b(in_if=in_if)])
    got, want = _both(model)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    # y and z take B's default, w the value given to A
    np.testing.assert_allclose(got[0], [-0.3, -0.6, 1.0, 2.0], rtol=1e-6)
    np.testing.assert_allclose(got[2], [-0.7, -1.4, 1.0, 2.0], rtol=1e-6)


def test_outer_default_wins_over_the_inner_one():
    model = _model([("A", "y", {})], [_a(default=0.05), _b()])
    got, want = _both(model)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[0], [-0.05, -0.1, 1.0, 2.0], rtol=1e-6)


def test_no_default_anywhere_leaves_the_op_default():
    """Neither A nor B defaults: LeakyRelu's own alpha (0.01) applies, as onnxruntime."""
    model = _model([("A", "y", {})], [_a(), _b(default=None)])
    got, want = _both(model)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[0], [-0.01, -0.02, 1.0, 2.0], rtol=1e-6)

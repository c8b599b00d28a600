"""BatchNormalization before opset 14: a node that declares its running mean and
variance outputs runs in training mode (batch statistics), as the opset-9 spec's
"output case 1" and onnxruntime have it; the saved_mean / saved_var outputs that opset
14 dropped are dropped on import when unread. The oracle is onnxruntime."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.errors import ConversionError

ort = pytest.importorskip("onnxruntime")
C = 3


def _model(opset, outputs, graph_outputs=("y",)):
    inits = [helper.make_tensor(n, TensorProto.FLOAT, [C], v) for n, v in
             [("s", [1, 2, 3]), ("b", [0, 0, 1]), ("m", [0, 1, 0]), ("v", [1, 1, 4])]]
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], list(outputs),
                            epsilon=1e-5)
    graph = helper.make_graph(
        [node], "bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, C, 2])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [2, C, 2] if o == "y" else [C])
         for o in graph_outputs],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


@pytest.mark.parametrize("opset,outputs", [
    (9, ["y", "rm", "rv", "sm", "sv"]), (13, ["y", "rm", "rv", "sm", "sv"]),
    (9, ["y", "rm", "rv", "", ""]), (9, ["y"]), (13, ["y"]),
])
def test_legacy_batchnorm_matches_onnxruntime(opset, outputs):
    model = _model(opset, outputs)
    x = np.random.default_rng(0).standard_normal((2, C, 2)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = og.Session(from_onnx(model)).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_read_saved_mean_is_refused_by_name():
    model = _model(9, ["y", "rm", "rv", "sm", "sv"], graph_outputs=("y", "sm"))
    with pytest.raises(ConversionError, match=r"saved_var output 'sm' .* is read"):
        from_onnx(model)


@pytest.mark.parametrize("source", [9, 13])
@pytest.mark.parametrize("target", [None, 13, 14, 15])
def test_legacy_training_batchnorm_exports_back(source, target):
    from onegraph.convert import to_onnx

    model = _model(source, ["y", "rm", "rv", "sm", "sv"])
    x = np.random.default_rng(1).standard_normal((2, C, 2)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    back = to_onnx(from_onnx(model), opset=target)
    onnx.checker.check_model(back, full_check=True)
    got = ort.InferenceSession(back.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_inference_batchnorm_exports_with_one_output_before_opset_14():
    from onegraph.convert import to_onnx

    back = to_onnx(from_onnx(_model(9, ["y"])), opset=13)
    node = next(n for n in back.graph.node if n.op_type == "BatchNormalization")
    assert list(node.output) == ["y"] and not any(a.name == "training_mode"
                                                  for a in node.attribute)

"""Old (IR 3, opset 9) models as onnxruntime saves them after optimizing
(`SessionOptions.optimized_model_filepath`): it keeps IR version 3 but no longer lists
the initializers as graph inputs, which IR 3 requires. They import (onnx's version
converter is given the model as IR 4, which states it as it is) and run as the model
onnxruntime was given runs in onnxruntime."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402


def _ir3_model(rng):
    """Conv -> BatchNormalization -> Relu -> Flatten -> Gemm at opset 9 and IR 3, every
    initializer also a graph input (as IR 3 asks)."""
    weights = {
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "scale": rng.uniform(0.5, 1.5, 4).astype(np.float32),
        "shift": rng.standard_normal(4).astype(np.float32),
        "mean": rng.standard_normal(4).astype(np.float32),
        "var": rng.uniform(0.5, 1.5, 4).astype(np.float32),
        "fc": rng.standard_normal((4 * 6 * 6, 5)).astype(np.float32),
        "fc_b": rng.standard_normal(5).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
             helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"],
                              ["bn"]),
             helper.make_node("Relu", ["bn"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fc_b"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])]
    inputs += [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape))
               for k, v in weights.items()]
    graph = helper.make_graph(
        nodes, "old", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 3
    onnx.checker.check_model(model)
    return model


def test_onnxruntime_saved_ir3_model_imports(tmp_path):
    rng = np.random.default_rng(0)
    model = _ir3_model(rng)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(tmp_path / "saved.onnx")
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    want = session.run(["y"], {"x": x})[0]
    saved = onnx.load(str(tmp_path / "saved.onnx"))
    # what the import has to cope with: IR 3, opset 9, initializers not among the inputs
    assert saved.ir_version == 3
    assert {o.domain: o.version for o in saved.opset_import}[""] == 9
    inputs = {i.name for i in saved.graph.input}
    assert any(t.name not in inputs for t in saved.graph.initializer)
    got = og.Session(from_onnx(saved)).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # the caller's proto is left as it was
    assert saved.ir_version == 3

"""Declared shapes of ceil_mode pools whose last window would start in the padding.

onnx 1.23's shape inference counts that window, onnxruntime and onegraph's kernels do
not: the imported graph must state the shape the kernels produce (so onegraph's own
inference agrees with it), and the export must pass the ONNX checker without stating
the wrong size, leaving the contradicted dims unknown.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onegraph as og
from onegraph.convert import from_onnx, to_onnx
from onegraph.ops.inference import infer_graph

# (input H = W, pool attrs): onnx infers one more output row and column than there is
CASES = [
    (3, dict(kernel_shape=[1, 1], strides=[3, 3])),
    (5, dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1])),
]


def _pool_model(size, attrs, op_type="MaxPool"):
    nodes = [helper.make_node(op_type, ["x"], ["p"], ceil_mode=1, **attrs),
             helper.make_node("Relu", ["p"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _ort_run(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _x(size):
    return np.random.default_rng(0).standard_normal((1, 2, size, size)).astype(np.float32)


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("size, attrs", CASES)
def test_imported_pool_states_the_shape_its_kernel_produces(size, attrs, op_type):
    model = _pool_model(size, attrs, op_type)
    onnx_says = onnx.shape_inference.infer_shapes(model).graph.output[0]
    onnx_dims = [d.dim_value for d in onnx_says.type.tensor_type.shape.dim]
    want = _ort_run(model, _x(size))
    assert onnx_dims[2] == want.shape[2] + 1  # the disagreement this file is about

    imported = from_onnx(model)
    graph = imported.graphs[0]
    got = og.Session(imported).run(["y"], {"x": _x(size)})[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    for name in ("p", "y"):
        assert graph.tensor(name).shape == want.shape
    infer_graph(graph)  # raises ShapeError when a declared shape contradicts a rule


@pytest.mark.parametrize("size, attrs", CASES)
def test_exported_pool_leaves_contradicted_dims_unknown(size, attrs):
    model = _pool_model(size, attrs)
    exported = to_onnx(from_onnx(model))  # runs check_model(full_check=True)
    stated = {v.name: v.type.tensor_type.shape.dim
              for v in list(exported.graph.value_info) + list(exported.graph.output)}
    for name in ("p", "y"):
        dims = stated[name]
        assert [d.dim_value for d in dims[:2]] == [1, 2]
        assert not any(d.HasField("dim_value") for d in dims[2:])
    np.testing.assert_array_equal(_ort_run(exported, _x(size)), _ort_run(model, _x(size)))


def test_export_keeps_shapes_onnx_agrees_with():
    model = _pool_model(6, dict(kernel_shape=[2, 2], strides=[2, 2]))
    exported = to_onnx(from_onnx(model))
    out = exported.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_value for d in out] == [1, 2, 3, 3]

"""Small ONNX models that several test files build the same way."""

import numpy as np


def matmul_proto():
    """y = x @ w with x float32 [N, 4] (N symbolic), w an arange(8) [4, 2] initializer,
    at opset 17. Needs onnx (callers skip without it)."""
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])
    w = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(4, 2), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x],
                              [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

"""Broadcasting before opset 7 (convert/onnx_legacy.py): Add, Sub, Mul, Div and Pow with
`broadcast=1, axis=k` align their second operand at axis k of the first, and a PRelu
slope of several elements is per channel. onnxruntime runs neither op before opset 7, so
numpy, spelling the old specification's alignment, is the oracle here (and ONNX's
pytorch-converted PReLU cases in test_onnx_backend_models.py).
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onegraph.convert import from_onnx, to_onnx
from onegraph.train.session import Session

F = TensorProto.FLOAT
ort = pytest.importorskip("onnxruntime")


def _model(node, a_shape, b_shape, y_shape, opset=6, b_initializer=None):
    inputs = [helper.make_tensor_value_info("a", F, a_shape)]
    inits = []
    if b_initializer is None:
        inputs.append(helper.make_tensor_value_info("b", F, b_shape))
    else:
        inits.append(onnx.numpy_helper.from_array(b_initializer, "b"))
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("y", F, y_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 3
    return model


OPS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
       "Pow": np.power}


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("axis, b_shape, view", [
    (1, (3, 4), (slice(None), slice(None), None)),   # B covers axes 1-2 of a [2,3,4,5]
    (0, (2,), (slice(None), None, None, None)),
    (-3, (3,), (slice(None), None, None)),            # axis counted from the end
    (2, (4, 5), (Ellipsis,)),                         # trailing: numpy's alignment
])
def test_binary_op_with_broadcast_axis_aligns_the_second_operand(op, axis, b_shape, view):
    rng = np.random.default_rng(0)
    a = (np.abs(rng.standard_normal((2, 3, 4, 5))) + 0.5).astype(np.float32)
    b = (rng.standard_normal(b_shape) + 3.0).astype(np.float32)
    node = helper.make_node(op, ["a", "b"], ["y"], broadcast=1, axis=axis)
    model = _model(node, [2, 3, 4, 5], list(b_shape), [2, 3, 4, 5])
    (got,) = Session(from_onnx(model)).run(["y"], {"a": a, "b": b})
    np.testing.assert_allclose(got, OPS[op](a, b[view]), rtol=1e-6)


def test_broadcast_axis_on_a_weight_exports_to_what_onnxruntime_runs():
    """A Caffe2-style bias (Add broadcast=1 axis=1 of a [C] initializer) comes back from
    to_onnx as a model onnxruntime runs to the same values."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    node = helper.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=1)
    model = _model(node, [2, 3, 4, 5], None, [2, 3, 4, 5], b_initializer=bias)
    imported = from_onnx(model)
    (got,) = Session(imported).run(["y"], {"a": a})
    want = a + bias[:, None, None]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    exported = to_onnx(imported)
    onnx.checker.check_model(exported, full_check=True)
    sess = ort.InferenceSession(exported.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(["y"], {"a": a})[0], want, rtol=1e-6)


@pytest.mark.parametrize("x_shape", [(2, 3, 4), (2, 3, 4, 5), (1, 3, 2, 2, 2)])
def test_prelu_before_opset_7_is_per_channel(x_shape):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(x_shape).astype(np.float32)
    slope = np.array([0.1, -0.5, 2.0], np.float32)
    node = helper.make_node("PRelu", ["a", "b"], ["y"])
    model = _model(node, list(x_shape), [3], list(x_shape))
    (got,) = Session(from_onnx(model)).run(["y"], {"a": x, "b": slope})
    per_channel = slope.reshape((3,) + (1,) * (len(x_shape) - 2))
    np.testing.assert_allclose(got, np.where(x < 0, per_channel * x, x), rtol=1e-6)


def test_prelu_from_opset_7_broadcasts_numpy_style():
    """Opset 7's PRelu aligns a [5] slope with the last axis; nothing is rewritten."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    slope = rng.standard_normal(5).astype(np.float32)
    model = _model(helper.make_node("PRelu", ["a", "b"], ["y"]), [2, 3, 5], [5],
                   [2, 3, 5], opset=7)
    (got,) = Session(from_onnx(model)).run(["y"], {"a": x, "b": slope})
    np.testing.assert_allclose(got, np.where(x < 0, slope * x, x), rtol=1e-6)

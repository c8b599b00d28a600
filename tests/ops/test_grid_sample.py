"""GridSample against onnxruntime with sampling points well outside the image.

Exports of PyTorch's grid_sample put points outside [-1, 1] routinely (flow fields,
affine warps); there border and reflection padding decide the result. For cubic,
PyTorch and onnxruntime apply the padding to each of the 4x4 taps and keep the
coordinate itself (the ONNX reference folds the coordinate first, which flattens the
filter at the border: up to 0.4 off on this data).
"""

import itertools

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402


def _grid_sample_model(mode, padding_mode, align_corners):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode,
                            padding_mode=padding_mode, align_corners=align_corners)
    graph = helper.make_graph(
        [node], "grid_sample",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5, 6]),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, [2, 4, 7, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return model


@pytest.mark.parametrize("mode,padding_mode,align_corners", list(itertools.product(
    ["nearest", "linear", "cubic"], ["zeros", "border", "reflection"], [0, 1])))
def test_matches_onnxruntime_outside_the_image(mode, padding_mode, align_corners):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = rng.uniform(-2.5, 2.5, (2, 4, 7, 2)).astype(np.float32)
    model = _grid_sample_model(mode, padding_mode, align_corners)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(
        None, {"x": x, "grid": grid})[0]
    got = onegraph.Session(from_onnx(model)).run(["y"], {"x": x, "grid": grid})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

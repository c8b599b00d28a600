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

from onnx import TensorProto  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402

from .single_node import one_node_model, run_onnxruntime  # noqa: E402


def _grid_sample_model(mode, padding_mode, align_corners):
    return one_node_model(
        "GridSample", [("x", TensorProto.FLOAT, [2, 3, 5, 6]),
                       ("grid", TensorProto.FLOAT, [2, 4, 7, 2])],
        opset=20, mode=mode, padding_mode=padding_mode, align_corners=align_corners)


@pytest.mark.parametrize("mode,padding_mode,align_corners", list(itertools.product(
    ["nearest", "linear", "cubic"], ["zeros", "border", "reflection"], [0, 1])))
def test_matches_onnxruntime_outside_the_image(mode, padding_mode, align_corners):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = rng.uniform(-2.5, 2.5, (2, 4, 7, 2)).astype(np.float32)
    model = _grid_sample_model(mode, padding_mode, align_corners)
    want = run_onnxruntime(model, {"x": x, "grid": grid})
    got = onegraph.Session(from_onnx(model)).run(["y"], {"x": x, "grid": grid})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

"""Kernel corners found by a differential sweep against onnxruntime: size-0 inputs
to kernels that flatten, Pad crops longer than the axis, GlobalLpPool, LpPool's p, and
float attribute defaults (ONNX FLOAT attributes are 32-bit)."""

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.errors import OpAttributeError

from .single_node import feeds_model, run_onnxruntime

F32 = np.float32


def _onegraph(model, feeds):
    return og.Session(from_onnx(model)).run(["y"], feeds)[0]


def _both(op, feeds, opset=21, initializers=None, **attrs):
    model = feeds_model(op, feeds, opset, initializers=initializers, **attrs)
    return _onegraph(model, feeds), run_onnxruntime(model, feeds)


@pytest.mark.parametrize("op, feeds, opset, attrs", [
    ("MatMul", {"a": np.ones((1, 2, 0), F32), "b": np.ones((0, 2), F32)}, 21, {}),
    ("MatMul", {"a": np.ones((3, 2, 0), F32), "b": np.ones((0, 4), F32)}, 21, {}),
    ("MatMul", {"a": np.ones((0, 3, 2), F32), "b": np.ones((2, 4), F32)}, 21, {}),
    ("LayerNormalization", {"x": np.ones((0, 4), F32), "s": np.ones(4, F32)}, 17,
     {"axis": -1}),
    ("LayerNormalization", {"x": np.ones((3, 0, 2), F32), "s": np.ones(2, F32)}, 17,
     {"axis": -1}),
    ("InstanceNormalization", {"x": np.ones((0, 2, 3), F32), "s": np.ones(2, F32),
                               "b": np.ones(2, F32)}, 21, {}),
    ("GlobalMaxPool", {"x": np.ones((0, 2, 3, 3), F32)}, 21, {}),
    ("GlobalAveragePool", {"x": np.ones((0, 2, 3, 3), F32)}, 21, {}),
    ("GlobalAveragePool", {"x": np.ones((0, 2, 3, 3), np.float16)}, 21, {}),
    ("GlobalLpPool", {"x": np.ones((0, 2, 3, 3), F32)}, 21, {}),
    # the mean of an empty axis: 0 as onnxruntime (PyTorch's EmbeddingBag(mode="mean")
    # gives an empty bag zeros through this); it was NaN
    ("ReduceMean", {"x": np.ones((0, 4), F32), "axes": np.array([0], np.int64)}, 18,
     {"keepdims": 0}),
    ("ReduceMean", {"x": np.ones((2, 0, 3), np.float16), "axes": np.array([1], np.int64)},
     18, {}),
    ("ReduceMean", {"x": np.ones((0, 4), np.int32), "axes": np.array([0], np.int64)}, 18,
     {}),
    # an empty axis whose result is empty too: onnxruntime's empty result (was an error)
    ("ArgMax", {"x": np.ones((0, 0), F32)}, 13,
     {"axis": 0, "keepdims": 0, "out_dtype": np.int64}),
    ("ArgMin", {"x": np.ones((2, 0, 0), F32)}, 13, {"axis": 1, "out_dtype": np.int64}),
])
def test_size_zero_inputs_match_onnxruntime(op, feeds, opset, attrs):
    got, want = _both(op, feeds, opset, **attrs)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape, pads, mode", [
    ((4, 1), [0, -2, 0, 1], "constant"),   # the crop runs past the axis into the pad
    ((4, 0), [1, -1, 2, 1], "constant"),
    ((2, 0), [0, 2, 0, -1], "constant"),
    ((3, 5), [-1, -7, 2, 3], "constant"),
    ((3, 5), [1, 2, -2, -1], "constant"),
    ((3, 0, 3), [0, 0, 0, 1, 0, 0], "reflect"),  # no padding on the empty axis
    ((0,), [0, 0], "reflect"),
    ((0,), [0, 0], "edge"),
])
def test_pad_crops_and_empty_axes_match_onnxruntime(shape, pads, mode):
    x = np.arange(1, 1 + int(np.prod(shape)), dtype=F32).reshape(shape)
    got, want = _both("Pad", {"x": x}, 21,
                      initializers={"pads": np.array(pads, np.int64)}, mode=mode)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 2, 7), (2, 1, 2, 3, 2)])
def test_global_lp_pool_matches_onnxruntime(p, dtype, shape):
    # onnxruntime implements GlobalLpPool for float32 only; float64 against numpy's norm
    x = np.random.default_rng(p).standard_normal(shape).astype(dtype)
    model = feeds_model("GlobalLpPool", {"x": x}, 21, p=p)
    got = _onegraph(model, {"x": x})
    if dtype == np.float32:
        want = run_onnxruntime(model, {"x": x})
    else:
        want = np.linalg.norm(x.reshape(shape[0], shape[1], -1), ord=p, axis=2)
        want = want.reshape(shape[:2] + (1,) * (len(shape) - 2))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["LpPool", "GlobalLpPool"])
def test_lp_pools_refuse_a_non_positive_p(op):
    attrs = {"kernel_shape": [2]} if op == "LpPool" else {}
    model = feeds_model(op, {"x": np.ones((1, 1, 4), F32)}, 21, p=0, **attrs)
    with pytest.raises(OpAttributeError, match="p must be a positive integer"):
        _onegraph(model, {"x": np.ones((1, 1, 4), F32)})


def test_omitted_float_attributes_default_to_their_float32_value():
    # ONNX FLOAT attributes are 32-bit: LeakyRelu's default alpha is float32(0.01),
    # which shows in a float64 model.
    x = np.array([-3.0, -1.0, 2.0])
    got, want = _both("LeakyRelu", {"x": x}, 16)
    np.testing.assert_array_equal(got, want)
    assert got[1] == -float(np.float32(0.01))


def test_batchnorm_default_momentum_matches_onnxruntime_in_float64():
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((4, 2, 3)), "s": np.ones(2), "b": np.zeros(2),
             "m": rng.standard_normal(2), "v": rng.random(2) + 0.5}
    model = feeds_model("BatchNormalization", feeds, 15, training_mode=1)
    for out, name in ((1, "running_mean"), (2, "running_var")):
        model.graph.node[0].output.append(name)
        model.graph.output.append(model.graph.output[0])
        model.graph.output[-1].name = name
    import onnxruntime as ort
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    got = og.Session(from_onnx(model)).run(["y", "running_mean", "running_var"], feeds)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("by", ["sizes", "scales"])
def test_resize_of_an_empty_batch_matches_onnxruntime(mode, by):
    # a dynamic-batch model from F.interpolate(size=...) fed a batch of 0
    x = np.ones((0, 2, 4, 5), F32)
    empty = np.zeros(0, F32)
    inits = ({"roi": empty, "scales": empty, "sizes": np.array([0, 2, 7, 9], np.int64)}
             if by == "sizes" else
             {"roi": empty, "scales": np.array([1, 1, 1.75, 2.0], F32)})
    got, want = _both("Resize", {"x": x}, 19, initializers=inits, mode=mode)
    assert got.shape == want.shape == (0, 2, 7, 9 if by == "sizes" else 10)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("n, scale", [(5, 1.8), (7, 1.3), (10, 0.7), (3, 2.2)])
def test_resize_output_size_from_scales_matches_onnxruntime(n, scale):
    # floor(n * scale) with the float32 scale multiplied in float32, as onnxruntime
    # (and PyTorch's interpolate(scale_factor=...)) size it: 5 * 1.8 gives 9
    x = np.arange(n, dtype=F32).reshape(1, 1, n)
    inits = {"roi": np.zeros(0, F32), "scales": np.array([1, 1, scale], F32)}
    got, want = _both("Resize", {"x": x}, 19, initializers=inits, mode="linear")
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

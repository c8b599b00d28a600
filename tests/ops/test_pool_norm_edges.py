"""Edge cases a conv/pool/normalisation sweep against onnxruntime found: MaxPool
indices on ties with the padding, empty pools with indices, GroupNormalization's
per-group scale (opsets 18-20), LayerNormalization's statistics dtype, and the Winograd
path with infinite inputs. One-node models through the Session; onnxruntime (or the
ONNX reference evaluator where onnxruntime deviates from the spec) is the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from .single_node import one_node_model  # noqa: E402


def _maxpool_with_indices(x, opset=12, **attrs):
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    model = one_node_model("MaxPool", [("x", elem, list(x.shape))], elem, opset=opset,
                           **attrs)
    model.graph.node[0].output.append("i")
    model.graph.output.append(helper.make_tensor_value_info("i", TensorProto.INT64, None))
    return model


def _both(model, feeds, names):
    got = og.Session(from_onnx(model)).run(names, feeds)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(names, feeds)
    return got, want


@pytest.mark.parametrize("dtype,fill", [(np.uint8, 0), (np.int8, -128),
                                        (np.float32, -np.inf)])
@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[2, 2], pads=[1, 1, 0, 0]),
    dict(kernel_shape=[1, 2], pads=[0, 1, 0, 0]),
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
    dict(kernel_shape=[3, 3], pads=[1, 2, 1, 2], dilations=[1, 2]),
    dict(kernel_shape=[2, 2], pads=[1, 1, 1, 1], storage_order=1),
], ids=str)
def test_maxpool_indices_never_point_into_the_padding(dtype, fill, attrs):
    """A window whose maximum equals the pad fill ties with the padding: its index
    must still name an element of x (the first in-image one of that value)."""
    rng = np.random.default_rng(0)
    x = np.full((2, 3, 5, 6), fill, dtype)
    hot = rng.random(x.shape) < 0.3
    x[hot] = rng.integers(1, 100, hot.sum()).astype(dtype)
    model = _maxpool_with_indices(x, **attrs)
    (y, i), (want_y, want_i) = _both(model, {"x": x}, ["y", "i"])
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(i, want_i)
    assert i.min() >= 0 and i.max() < x.size


def test_maxpool_indices_with_nan_stay_inside_the_image():
    x = np.full((1, 1, 3, 3), np.nan, np.float32)
    model = _maxpool_with_indices(x, kernel_shape=[2, 2], pads=[1, 1, 0, 0])
    y, i = og.Session(from_onnx(model)).run(["y", "i"], {"x": x})
    assert np.isnan(y).all() and i.min() >= 0 and i.max() < x.size


def test_maxpool_with_indices_and_an_empty_output():
    """A 3x3/2 pool of a 2x2 image has no full window: a 0x0 output by the spec's
    formula (the reference evaluator agrees; onnxruntime returns 1x1)."""
    x = np.random.default_rng(1).standard_normal((1, 2, 2, 2)).astype(np.float32)
    model = _maxpool_with_indices(x, kernel_shape=[3, 3], strides=[2, 2])
    y, i = og.Session(from_onnx(model)).run(["y", "i"], {"x": x})
    want_y, want_i = ReferenceEvaluator(model).run(None, {"x": x})
    assert y.shape == want_y.shape == i.shape == want_i.shape == (1, 2, 0, 0)
    assert i.dtype == np.int64


@pytest.mark.parametrize("opset,per", [(18, "group"), (21, "channel")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_group_normalization_scale_per_group_or_per_channel(opset, per, dtype):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 6, 4, 5)).astype(dtype)
    n = 3 if per == "group" else 6
    scale, bias = (rng.standard_normal(n).astype(dtype) for _ in range(2))
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = one_node_model("GroupNormalization", [("x", elem, list(x.shape))], elem,
                           {"s": scale, "b": bias}, opset=opset, num_groups=3,
                           epsilon=1e-3)
    got = og.Session(from_onnx(model)).run("y", {"x": x})
    if dtype == np.float32:
        want = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    else:  # onnxruntime has no float64 GroupNormalization
        (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_group_normalization_refuses_a_scale_of_neither_size():
    x = np.zeros((1, 6, 2, 2), np.float32)
    model = one_node_model("GroupNormalization", [("x", TensorProto.FLOAT, [1, 6, 2, 2])],
                           TensorProto.FLOAT, {"s": np.ones(4, np.float32),
                                               "b": np.ones(4, np.float32)},
                           opset=21, num_groups=3)
    with pytest.raises(og.OneGraphError, match="scale has 4 values; want 6 .* or 3"):
        og.Session(from_onnx(model)).run("y", {"x": x})


def test_layer_normalization_statistics_take_the_stash_type():
    """float64 X with the default stash_type (1): Mean and InvStdDev are float32, as
    the spec and onnxruntime have them; Y stays float64."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4))
    model = one_node_model("LayerNormalization", [("x", TensorProto.DOUBLE, [2, 3, 4])],
                           TensorProto.DOUBLE, {"s": rng.standard_normal(4)}, opset=17,
                           axis=-1)
    model.graph.node[0].output.extend(["mean", "isd"])
    model.graph.output.extend([helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                               for n in ("mean", "isd")])
    got, want = _both(model, {"x": x}, ["y", "mean", "isd"])
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("special", [np.inf, -np.inf, np.nan])
def test_wide_3x3_conv_with_a_non_finite_input(special):
    """64 -> 64 3x3 with constant weights runs as Winograd F(2x2, 3x3), whose
    transforms would turn one inf into NaNs over whole tiles."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 64, 20, 20)).astype(np.float32)
    x[0, 3, 5, 5] = special
    w = (rng.standard_normal((64, 64, 3, 3)) * 0.1).astype(np.float32)
    model = one_node_model("Conv", [("x", TensorProto.FLOAT, [1, 64, 20, 20])],
                           TensorProto.FLOAT, {"w": w}, pads=[1, 1, 1, 1])
    (got,), (want,) = _both(model, {"x": x}, ["y"])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-4, atol=1e-4)
    x[0, 3, 5, 5] = 0   # finite again: the Winograd path
    (got,), (want,) = _both(model, {"x": x}, ["y"])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op_type,attrs,message", [
    ("MaxPool", dict(kernel_shape=[0, 0]), r"kernel_shape \[0, 0\] must hold 2 positive"),
    ("AveragePool", dict(kernel_shape=[-1, -1]), "kernel_shape"),
    ("MaxPool", dict(kernel_shape=[2, 2], strides=[0, 1]), r"strides \[0, 1\]"),
    ("AveragePool", dict(kernel_shape=[2, 2], strides=[1]), r"strides \[1\] must hold 2"),
    ("MaxPool", dict(kernel_shape=[2, 2], dilations=[1, -2]), "dilations"),
    ("MaxPool", dict(kernel_shape=[2, 2], pads=[1, 1]), r"pads \[1, 1\] must hold 4"),
    ("Conv", dict(group=0), "group 0 must be at least 1"),
    ("Conv", dict(dilations=[0, 1]), "dilations"),
])
def test_window_attributes_are_checked(op_type, attrs, message):
    """Nonsense geometry is an OpAttributeError (it used to give zeros, -inf, or a
    group of 0 read as 1)."""
    x = np.ones((1, 2, 5, 5), np.float32)
    inputs = [("x", TensorProto.FLOAT, [1, 2, 5, 5])]
    inits = {"w": np.ones((3, 2, 2, 2), np.float32)} if op_type == "Conv" else None
    model = one_node_model(op_type, inputs, initializers=inits, **attrs)
    with pytest.raises(og.OneGraphError, match=message):
        og.Session(from_onnx(model)).run("y", {"x": x})


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
def test_wide_windows_over_small_images_loop_over_the_taps_that_reach_them(op_type):
    """Only the taps that land in the image are visited: a window of 2**40 rows over a
    4-pixel image is refused at once (its output size would be negative, which
    onnxruntime and ONNX's reference refuse too), and a wide padded window matches
    onnxruntime."""
    import time

    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    inputs = [("x", TensorProto.FLOAT, [1, 1, 4, 4])]
    if op_type == "MaxPool":
        model = one_node_model(op_type, inputs, kernel_shape=[2 ** 40, 2])
        start = time.perf_counter()
        with pytest.raises(og.OneGraphError, match="output size would be"):
            og.Session(from_onnx(model)).run("y", {"x": x})
        assert time.perf_counter() - start < 10
    model = one_node_model(op_type, inputs, kernel_shape=[9, 3], pads=[7, 1, 6, 1],
                           strides=[2, 1])
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = og.Session(from_onnx(model)).run("y", {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("shape,attrs", [
    ((1, 1, 2), dict(kernel_shape=[2], strides=[3], dilations=[2], ceil_mode=1)),
    ((1, 1, 2), dict(kernel_shape=[2], strides=[2], dilations=[2], ceil_mode=1,
                     count_include_pad=1)),
    ((1, 2, 2, 2), dict(kernel_shape=[2, 2], strides=[3, 3], dilations=[2, 2], ceil_mode=1)),
    ((1, 2, 3, 3), dict(kernel_shape=[3, 3], strides=[4, 4], dilations=[1, 2], ceil_mode=1)),
], ids=str)
def test_dilated_average_pool_of_the_image_size_is_not_the_global_mean(shape, attrs):
    """A window of the image's size with dilation > 1 skips pixels (and reaches past the
    image): one output window, but not the mean of the whole image."""
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32) * 10
    model = one_node_model("AveragePool", [("x", TensorProto.FLOAT, list(shape))],
                           opset=19, **attrs)
    got, want = _both(model, {"x": x}, ["y"])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)

"""Conv / pool fixes from a helper's audit against onnxruntime (about 31,700 runs);
each test failed before its fix."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.errors import OpAttributeError, ShapeError


def _model(node, x_shape, opset=22, outputs=("y",), **weights):
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info(o, TensorProto.INT64 if o == "i" else TensorProto.FLOAT,
                                       None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10)


def _both(model, x, outputs=("y",)):
    got = og.Session(from_onnx(model)).run(list(outputs), {"x": x})
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]
                                ).run(list(outputs), {"x": x})
    return got, want


def test_depthwise_conv_keeps_an_inf_to_the_outputs_that_read_it():
    """The channels-last depthwise form contracted its zero phase taps with the inf:
    0 * inf = NaN in outputs whose windows never read it."""
    x = np.ones((1, 2, 5, 5), np.float32)
    w = np.ones((2, 1, 3, 3), np.float32)
    for bad in (np.inf, np.nan):
        x[0, 0, 3, 3] = bad
        model = _model(helper.make_node("Conv", ["x", "w"], ["y"], group=2, strides=[2, 2]),
                       x.shape, w=w)
        (got,), (want,) = _both(model, x)
        np.testing.assert_array_equal(got, want)
        assert np.isfinite(got[0, 0]).sum() == 3


def test_conv_transpose_output_shape_beyond_the_natural_size_pads_the_end():
    """An output_shape two or more past the natural size shifted the result by a zero
    row (the negative total padding was split over both ends)."""
    x = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7)
    w = np.ones((1, 1, 4), np.float32)
    for size in (22, 23, 24):
        model = _model(helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3],
                                        output_shape=[size]), x.shape, w=w)
        (got,), (want,) = _both(model, x)
        np.testing.assert_array_equal(got, want)
    x2 = np.random.RandomState(0).rand(1, 1, 5, 5).astype(np.float32)
    model = _model(helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 3],
                                    output_shape=[17, 17]), x2.shape,
                   w=np.ones((1, 1, 3, 3), np.float32))
    (got,), (want,) = _both(model, x2)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("output_shape, message", [
    ([-3, 8], "must be positive"), ([0, 0], "must be positive"),
    ([20, 8], "more than stride - 1 beyond the natural size 8"),
    ([10], "must hold 2 values")])
def test_conv_transpose_refuses_impossible_output_shapes(output_shape, message):
    model = _model(helper.make_node("ConvTranspose", ["x", "w"], ["y"],
                                    output_shape=output_shape), (1, 2, 6, 6),
                   w=np.ones((2, 3, 3, 3), np.float32))
    with pytest.raises(OpAttributeError, match=message):
        og.Session(from_onnx(model)).run(["y"], {"x": np.ones((1, 2, 6, 6), np.float32)})


@pytest.mark.parametrize("then_bn", [False, True])
def test_a_conv_bias_of_the_wrong_size_is_named(then_bn):
    """A bias with 5 values for 6 outputs was numpy's reshape error; followed by a
    BatchNormalization, the plan's fold let numpy's ValueError escape Session.run."""
    w = np.ones((6, 4, 1, 1), np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c" if then_bn else "y"])]
    weights = {"w": w, "b": np.ones(5, np.float32)}
    if then_bn:
        nodes.append(helper.make_node("BatchNormalization", ["c", "s", "o", "m", "v"], ["y"]))
        weights.update(s=np.ones(6, np.float32), o=np.zeros(6, np.float32),
                       m=np.zeros(6, np.float32), v=np.ones(6, np.float32))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)],
                              ir_version=10)
    with pytest.raises(ShapeError, match=r"bias B must have shape \(6,\).*got \[5\]"):
        og.Session(from_onnx(model)).run(["y"], {"x": np.ones((1, 4, 6, 6), np.float32)})


def test_conv_transpose_bias_of_the_wrong_size_is_named():
    model = _model(helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"]), (1, 2, 4, 4),
                   w=np.ones((2, 3, 3, 3), np.float32), b=np.ones(4, np.float32))
    with pytest.raises(ShapeError, match=r"ConvTranspose: bias B must have shape \(3,\)"):
        og.Session(from_onnx(model)).run(["y"], {"x": np.ones((1, 2, 4, 4), np.float32)})


def test_lrn_of_a_non_positive_size_is_refused_by_name():
    for size in (0, -1):
        model = _model(helper.make_node("LRN", ["x"], ["y"], size=size), (1, 3, 4, 4),
                       opset=13)
        with pytest.raises(OpAttributeError, match="LRN: size must be a positive"):
            og.Session(from_onnx(model)).run(["y"], {"x": np.ones((1, 3, 4, 4), np.float32)})


def test_maxpool_indices_name_the_nan_its_value_took():
    """Y takes a window's NaN (np.maximum); its index named another element."""
    x = np.array([[[[0.2, 2.5, 1.5], [-0.6, 0.5, -2.3], [-1.0, -0.8, np.nan]]]], np.float32)
    model = _model(helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3],
                                    pads=[1, 1, 1, 1], strides=[2, 2]), x.shape,
                   outputs=("y", "i"))
    y, idx = og.Session(from_onnx(model)).run(["y", "i"], {"x": x})
    np.testing.assert_array_equal(x.reshape(-1)[idx.reshape(-1)], y.reshape(-1))


def test_winograd_takes_the_direct_path_when_its_transform_overflows():
    """Finite inputs near float32's limit overflowed in the Winograd input transform's
    sums (inf - inf = NaN) where a direct convolution stays finite."""
    rng = np.random.RandomState(0)
    x = rng.randn(1, 64, 20, 20).astype(np.float32)
    x[0, :, 8, 8], x[0, :, 8, 10] = 3e38, -3e38
    w = (rng.randn(64, 64, 3, 3) * 1e-4).astype(np.float32)
    model = _model(helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]), x.shape,
                   w=w)
    (got,), (want,) = _both(model, x)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_group_and_lp_normalization_attributes_are_named():
    model = _model(helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                    num_groups=0), (1, 4, 3, 3), opset=21,
                   s=np.ones(4, np.float32), b=np.zeros(4, np.float32))
    with pytest.raises(OpAttributeError, match="num_groups must be positive"):
        og.Session(from_onnx(model)).run(["y"], {"x": np.ones((1, 4, 3, 3), np.float32)})
    model = _model(helper.make_node("LpNormalization", ["x"], ["y"], axis=5), (1, 4, 3, 3),
                   opset=13)
    with pytest.raises(OpAttributeError, match="axis 5 is out of range for rank 4"):
        og.Session(from_onnx(model)).run(["y"], {"x": np.ones((1, 4, 3, 3), np.float32)})


@pytest.mark.parametrize("op,attrs", [
    ("Conv", {}), ("Conv", {"pads": [1, 0, 1, 0]}), ("Conv", {"auto_pad": "SAME_UPPER"}),
    ("MaxPool", {"kernel_shape": [3, 2]}), ("AveragePool", {"kernel_shape": [3, 2]}),
])
def test_a_stride_past_the_input_gives_its_single_window(op, attrs):
    """A stride longer than the input leaves one window along its dim, whatever its
    size: 2**62 gave an OverflowError from the strided views. The oracle is onnxruntime
    with the stride set to the input length (the same single window)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    weights = {"w": rng.standard_normal((3, 2, 3, 2)).astype(np.float32)} \
        if op == "Conv" else {}
    inputs = ["x", "w"] if op == "Conv" else ["x"]
    node = helper.make_node(op, inputs, ["y"], strides=[2 ** 62, 2], **attrs)
    got = og.Session(from_onnx(_model(node, x.shape, **weights))).run(["y"], {"x": x})[0]
    same = helper.make_node(op, inputs, ["y"], strides=[5, 2], **attrs)
    want = ort.InferenceSession(_model(same, x.shape, **weights).SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    assert got.shape == want.shape and got.shape[2] == 1
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_fused_conv_checks_its_padding_once_per_input_shape():
    """A Conv with constant weights (the Session's fused, cached step) refuses pads that
    would pad the input beyond the result limit on every input shape it meets (the
    check is made once per shape with the geometry), and still runs a shape it was
    given before: against onnxruntime."""
    from onegraph.errors import ResourceExhaustedError

    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    big = _model(helper.make_node("Conv", ["x", "w"], ["y"], name="padded",
                                  pads=[2 ** 40] * 4), ["n", 3, "h", "w"], w=w)
    sess = og.Session(from_onnx(big))
    for n in (1, 3, 1):
        with pytest.raises(ResourceExhaustedError, match="padded.*pads"):
            sess.run(["y"], {"x": np.ones((n, 3, 5, 5), np.float32)})
    small = _model(helper.make_node("Conv", ["x", "w"], ["y"], pads=[1] * 4),
                   ["n", 3, 5, 5], w=w)
    sess = og.Session(from_onnx(small))
    for n in (1, 2, 1):
        x = rng.standard_normal((n, 3, 5, 5)).astype(np.float32)
        got = sess.run(["y"], {"x": x})[0]
        want = ort.InferenceSession(small.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

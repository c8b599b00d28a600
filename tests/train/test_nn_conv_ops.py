"""og.nn's TF1 op forms of convolution and pooling (tf.nn.conv2d with a filter tensor,
depthwise_conv2d, max_pool, avg_pool) against numpy NHWC spellings with TF's padding,
gradients by central differences, and an export run by onnxruntime."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ShapeError

from .gradcheck import check_op_gradients
from .graph_runs import run_on
from .nhwc_oracle import conv_nhwc, windows


@pytest.mark.parametrize("padding, stride, dilation", [("SAME", 2, 1), ("VALID", 1, 1),
                                                       ("SAME", 1, 2), ("VALID", 2, 1)])
def test_conv2d_with_a_filter_tensor_is_tf1s_op(padding, stride, dilation):
    rng = np.random.RandomState(0)
    x = rng.randn(2, 7, 8, 3)
    w = rng.randn(3, 2, 3, 4)
    got, got_first = run_on(lambda a, f: [
        og.nn.conv2d(a, f, strides=[1, stride, stride, 1], padding=padding,
                     dilations=[1, dilation, dilation, 1]),
        og.nn.conv2d(og.transpose(a, [0, 3, 1, 2]), f, [1, 1, stride, stride], padding,
                     data_format="NCHW", dilations=dilation)], x, w)
    want = conv_nhwc(x, w, 0.0, stride, dilation, padding.lower())
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got_first, want.transpose(0, 3, 1, 2), rtol=1e-12)
    check_op_gradients(lambda a, f: og.nn.conv2d(a, f, stride, padding), [x, w])


def test_conv2d_explicit_padding_and_a_constant_filter():
    rng = np.random.RandomState(1)
    x = rng.randn(1, 4, 5, 2)
    w = rng.randn(3, 3, 2, 2)
    got = run_on(lambda a: og.nn.conv2d(a, w, [1, 1, 1, 1],
                                      [[0, 0], [2, 0], [1, 1], [0, 0]]), x)
    padded = np.pad(x, ((0, 0), (2, 0), (1, 1), (0, 0)))
    np.testing.assert_allclose(got, conv_nhwc(padded, w, 0.0, 1, 1, "valid"), rtol=1e-12)


@pytest.mark.parametrize("padding, rate", [("SAME", 1), ("VALID", 2)])
def test_depthwise_conv2d_keeps_channels_apart(padding, rate):
    rng = np.random.RandomState(2)
    x = rng.randn(2, 6, 6, 3)
    w = rng.randn(3, 3, 3, 2)   # multiplier 2
    got = run_on(lambda a, f: og.nn.depthwise_conv2d(a, f, [1, 1, 1, 1], padding,
                                                   rate=[rate, rate]), x, w)
    win = windows(x, 3, 3, 1, rate, padding.lower(), 0.0)   # (n, oh, ow, kh, kw, c)
    want = np.einsum("nijabc,abcm->nijcm", win, w).reshape(win.shape[:3] + (6,))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    check_op_gradients(lambda a, f: og.nn.depthwise_conv2d(a, f, 1, padding), [x, w])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_max_pool_and_avg_pool_are_tf1s(padding):
    rng = np.random.RandomState(3)
    x = rng.randn(2, 7, 6, 3)
    biggest, mean = run_on(lambda a: [og.nn.max_pool(a, [1, 3, 3, 1], [1, 2, 2, 1], padding),
                                    og.nn.avg_pool(a, 3, 2, padding)], x)
    np.testing.assert_array_equal(biggest, windows(x, 3, 3, 2, 1, padding.lower(), -np.inf)
                                  .max(axis=(3, 4)))
    summed = windows(x, 3, 3, 2, 1, padding.lower(), 0.0).sum(axis=(3, 4))
    count = windows(np.ones_like(x), 3, 3, 2, 1, padding.lower(), 0.0).sum(axis=(3, 4))
    np.testing.assert_allclose(mean, summed / count, rtol=1e-12)
    first = run_on(lambda a: og.nn.max_pool(og.transpose(a, [0, 3, 1, 2]), [1, 1, 3, 3],
                                          [1, 1, 2, 2], padding, data_format="NCHW"), x)
    np.testing.assert_array_equal(first, biggest.transpose(0, 3, 1, 2))


def test_bad_arguments_are_refused_while_building():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [1, 5, 5, 2])
        w = og.constant(np.ones((3, 3, 2, 4), np.float32))
        with pytest.raises(ValueError, match="must be 1 on the batch and channel"):
            og.nn.conv2d(x, w, [2, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="padding must be"):
            og.nn.conv2d(x, w, 1, "FULL")
        with pytest.raises(ValueError, match=r"\[0, 0\] on the batch and channel"):
            og.nn.conv2d(x, w, 1, [[1, 1], [0, 0], [0, 0], [0, 0]])
        with pytest.raises(ShapeError, match="input has 2 channels but filter"):
            og.nn.conv2d(x, og.constant(np.ones((3, 3, 3, 4), np.float32)), 1, "SAME")
        with pytest.raises(ValueError, match="data_format"):
            og.nn.max_pool(x, 2, 2, "SAME", data_format="HWC")
        with pytest.raises(TypeError, match="ksize must be a positive int"):
            og.nn.avg_pool(x, 0, 1, "SAME")
        with pytest.raises(ValueError, match="rate or dilations"):
            og.nn.depthwise_conv2d(x, og.constant(np.ones((3, 3, 2, 1), np.float32)), 1,
                                   "SAME", rate=2, dilations=2)


def test_tf1_image_ops_export_and_run_in_onnxruntime():
    rng = np.random.RandomState(4)
    xv = rng.randn(1, 8, 8, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [1, 8, 8, 3], name="x")
        w = og.Variable(rng.randn(3, 3, 3, 4).astype(np.float32), name="w")
        d = og.Variable(rng.randn(3, 3, 4, 2).astype(np.float32), name="d")
        h = og.nn.relu(og.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME"))
        h = og.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
        h = og.nn.depthwise_conv2d(h, d, [1, 1, 1, 1], "SAME")
        y = og.nn.avg_pool(h, 2, 2, "SAME")
        sig = og.signature({"x": x}, {"y": y})
    sess = og.Session(g)
    with g.as_default():
        sess.run(og.global_variables_initializer())
    want = sess.run(y, {x: xv})
    proto = to_onnx(g, signatures={"serving": sig}, session=sess)
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(["y"], {"x": xv})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_dilated_same_convolutions_of_unknown_image_sizes_export_for_onnxruntime():
    """(review: auto_pad SAME_UPPER with dilations, which onnxruntime refuses; the
    padding is now computed from the run-time shape)"""
    rng = np.random.RandomState(5)
    xv = rng.randn(2, 9, 7, 3).astype(np.float32)   # (onnxruntime's Conv is float32)
    w = rng.randn(3, 3, 3, 2).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None, None, 3], name="x")
        outs = {"conv": og.nn.conv2d(x, w, [1, 2, 2, 1], "SAME", dilations=2),
                "depthwise": og.nn.depthwise_conv2d(
                    x, rng.randn(3, 3, 3, 1).astype(np.float32), 1, "SAME", rate=3),
                "layer": og.layers.conv2d(x, 2, 3, padding="same", dilation_rate=2,
                                          use_bias=False)}
        sig = og.signature({"x": x}, outs)
    sess = og.Session(g)
    with g.as_default():
        sess.run(og.global_variables_initializer())
    conv, depthwise, layer = sess.run(list(outs.values()), {x: xv})
    # TF's SAME at stride 2 with a reach of 5: ceil(9/2) = 5 rows and ceil(7/2) = 4
    # columns, (5-1)*2 + 5 - 9 = 4 and (4-1)*2 + 5 - 7 = 4 pixels of padding, 2 a side
    want = conv_nhwc(np.pad(xv, ((0, 0), (2, 2), (2, 2), (0, 0))), w, 0.0, 2, 2, "valid")
    assert conv.shape == (2, 5, 4, 2)
    np.testing.assert_allclose(conv, want, rtol=1e-5, atol=1e-5)
    proto = to_onnx(g, signatures={"serving": sig}, session=sess)
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(list(outs), {"x": xv})
    for mine, theirs in zip((conv, depthwise, layer), got):
        np.testing.assert_allclose(theirs, mine, rtol=1e-5, atol=1e-5)

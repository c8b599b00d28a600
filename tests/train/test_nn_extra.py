"""og.nn's transposed, separable, atrous and 1-D convolutions, lrn, space_to_depth /
depth_to_space and weighted_cross_entropy_with_logits against TensorFlow's outputs and
gradients, recorded in data/tf1_nn_reference.npz by
`tools/record_tf1_reference.py nn` (TensorFlow 2.21's tf.compat.v1); og.layers'
conv2d_transpose; errors; exports."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ShapeError

from . import tf1_reference
from .tf1_nn_cases import CASES, make_inputs

@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("nn")


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow_values_and_gradients(reference, case):
    tf1_reference.check_case(reference, case)


def test_layers_conv2d_transpose_grows_images_as_tf1():
    x = np.random.RandomState(0).randn(2, 5, 6, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.float32, [None, 5, 6, 3])
        same = og.layers.conv2d_transpose(p, 4, 3, strides=2, padding="same")
        valid = og.layers.conv2d_transpose(p, 2, (3, 1), strides=(2, 3), use_bias=False,
                                           activation=og.nn.relu, name="up")
        first = og.layers.conv2d_transpose(og.transpose(p, [0, 3, 1, 2]), 5, 2, strides=2,
                                           data_format="channels_first")
        names = sorted(v.name for v in og.trainable_variables())
        sess = og.Session(g)
        sess.run(og.global_variables_initializer())
        a, b, c = sess.run([same, valid, first], {p: x})
        k_same, = [v for v in og.trainable_variables()
                   if v.name == "conv2d_transpose/kernel"]
        kernel = sess.run(k_same)
    assert names == ["conv2d_transpose/bias", "conv2d_transpose/kernel",
                     "conv2d_transpose_1/bias", "conv2d_transpose_1/kernel", "up/kernel"]
    assert a.shape == (2, 10, 12, 4) and b.shape == (2, 11, 18, 2) and c.shape == (2, 5, 10, 12)
    assert kernel.shape == (3, 3, 4, 3) and (b >= 0).all()
    # the layer is og.nn.conv2d_transpose of its kernel (checked against TF above)
    g2 = og.Graph()
    with g2.as_default():
        want = og.Session(g2).run(og.nn.conv2d_transpose(og.constant(x), og.constant(kernel),
                                                          [2, 10, 12, 4], [1, 2, 2, 1]))
    np.testing.assert_allclose(a, want, rtol=1e-6, atol=1e-6)


def test_bad_arguments_are_named():
    x = og.constant(np.zeros((1, 4, 4, 2), np.float32))
    w = og.constant(np.zeros((3, 3, 5, 2), np.float32))
    cases = [
        (lambda: og.nn.conv2d_transpose(x, w, [1, 9, 8, 5], [1, 2, 2, 1]), ShapeError,
         "size 9 on spatial axis 0 does not give the input's 4"),
        (lambda: og.nn.conv2d_transpose(x, w, [1, 8, 8, 4], [1, 2, 2, 1]), ShapeError,
         "output_shape has 4 channels"),
        (lambda: og.nn.conv2d_transpose(x, og.zeros([3, 3, 5, 3]), [1, 8, 8, 5],
                                        [1, 2, 2, 1]), ShapeError, "takes 3"),
        (lambda: og.nn.conv2d_transpose(x, w, [1, 8, 8], [1, 2, 2, 1]), ShapeError,
         "4 entries"),
        (lambda: og.nn.conv2d_transpose(x, w, None, [1, 2, 2, 1]), TypeError,
         "needs value"),
        (lambda: og.nn.conv2d_transpose(og.placeholder(og.float32, [1, None, 4, 2]), w,
                                        [1, 8, 8, 5], [1, 2, 2, 1]), ShapeError,
         "must be known while building"),
        (lambda: og.nn.lrn(x, depth_radius=-1), TypeError, "depth_radius"),
        (lambda: og.nn.lrn(og.zeros([2, 3])), ShapeError, "4-D"),
        (lambda: og.space_to_depth(x, 1), ValueError, "block_size must be an int >= 2"),
        (lambda: og.nn.atrous_conv2d(x, og.zeros([3, 3, 2, 1]), 0, "SAME"), TypeError,
         "rate must be a positive int"),
        (lambda: og.nn.conv1d(og.zeros([2, 5]), og.zeros([3, 2, 1]), 1, "SAME"),
         ShapeError, "conv1d: value must be 3-D"),
        (lambda: og.nn.conv1d(og.zeros([2, 5, 2]), og.zeros([3, 2, 1]), 1, "SAME",
                              data_format="NHWC"), ValueError, "NWC"),
        (lambda: og.nn.separable_conv2d(x, og.zeros([3, 3, 2, 2]), og.zeros([3, 3, 4, 1]),
                                        [1, 1, 1, 1], "SAME"), ShapeError,
         "pointwise_filter must be"),
        (lambda: og.nn.weighted_cross_entropy_with_logits(labels=og.zeros([2]),
                                                          logits=og.zeros([3]),
                                                          pos_weight=1.0), ShapeError,
         "same shape"),
    ]
    for fn, error, message in cases:
        with pytest.raises(error, match=message):
            fn()


def test_nn_extras_export_and_run_in_onnxruntime():
    rng = np.random.RandomState(4)
    xv = rng.randn(2, 5, 6, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 5, 6, 3], name="x")
        outs = {"up": og.nn.conv2d_transpose(x, og.constant(rng.randn(3, 3, 4, 3).astype(
                    np.float32)), [og.shape(x)[0], 10, 12, 4], [1, 2, 2, 1]),
                "valid_up": og.nn.conv2d_transpose(x, og.constant(rng.randn(2, 2, 2, 3).astype(
                    np.float32)), [2, 15, 18, 2], [1, 3, 3, 1], padding="VALID"),
                "lrn": og.nn.lrn(x, 1, alpha=0.1),
                "sep": og.nn.separable_conv2d(x, og.constant(rng.randn(3, 3, 3, 2).astype(
                    np.float32)), og.constant(rng.randn(1, 1, 6, 4).astype(np.float32)),
                    [1, 1, 1, 1], "SAME"),
                "s2d": og.depth_to_space(og.space_to_depth(og.pad(x, [[0, 0], [0, 1], [0, 0],
                                                                      [0, 0]]), 2), 2),
                "wce": og.nn.weighted_cross_entropy_with_logits(
                    labels=og.sigmoid(x), logits=x * 3.0, pos_weight=2.0)}
        sig = og.signature({"x": x}, outs)
        want = og.Session(g).run(list(outs.values()), {x: xv})
        proto = to_onnx(g, signatures={"serving": sig})
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(list(outs), {"x": xv})
    for key, a, b in zip(outs, got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=key)

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
from onegraph.errors import ExecutionError, ShapeError

from . import tf1_reference
from .graph_runs import session_and_onnxruntime
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


_TCONV_CASES = [c for c in CASES if c[1] == "nn.conv2d_transpose"]


@pytest.mark.parametrize("case", _TCONV_CASES, ids=[c[0] for c in _TCONV_CASES])
def test_conv2d_transpose_with_sizes_known_only_at_run_time(reference, case):
    """TensorFlow's conv2d_transpose cases again, with the image's batch, height and width
    unknown while building and output_shape fed as an int32 tensor (TF1's usual
    `tf.stack([batch, 2 * h, 2 * w, c])`): the same values and gradients."""
    name, _, (x_key, w_key, out_shape, strides), kwargs, wrt = case
    x_val, w_val = reference[f"in/{x_key[1:]}"], reference[f"in/{w_key[1:]}"]
    first = kwargs.get("data_format") == "NCHW"
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(x_val.dtype, [None, x_val.shape[1], None, None] if first
                           else [None, None, None, x_val.shape[3]])
        w = og.placeholder(w_val.dtype, w_val.shape)
        sizes = og.placeholder(og.int32, [4])
        y = og.nn.conv2d_transpose(x, w, sizes, strides, **kwargs)
        assert y.shape[1 if first else 3] == w_val.shape[2]
        loss = og.reduce_sum(og.cast(y, og.float64) * og.constant(
            reference[f"r/{name}"].astype(np.float64)))
        holders = {x_key: x, w_key: w}
        grads = og.gradients(loss, [holders[k] for k in wrt])
        got = og.Session(g).run([y] + grads, {x: x_val, w: w_val,
                                              sizes: np.array(out_shape, np.int32)})
    want = [reference[f"out/{name}"]] + [reference[f"grad/{name}/{k[1:]}"] for k in wrt]
    for a, b, what in zip(got, want, ["y"] + wrt, strict=True):
        assert a.shape == b.shape, what
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(b).max()),
                                   err_msg=what)


def test_conv2d_transpose_checks_sizes_known_only_at_run_time():
    """An output_shape whose height or width a conv2d would not map back to the input's
    size (or is not positive) is an ExecutionError of the run, as TF1's; a padding of
    the wrong form is refused while building."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None, None, 2])
        sizes = og.placeholder(og.int64, [4])
        w = np.ones((3, 3, 5, 2), np.float32)
        y = og.nn.conv2d_transpose(x, w, sizes, [1, 2, 2, 1])
        explicit = og.nn.conv2d_transpose(x, w, sizes, [1, 2, 2, 1],
                                          padding=[[0, 0], [1, 2], [0, 1], [0, 0]])
        with pytest.raises(ValueError, match="padding"):
            og.nn.conv2d_transpose(x, w, sizes, [1, 2, 2, 1], padding="FULL")
        sess = og.Session(g)
        image = np.ones((1, 4, 4, 2), np.float32)
        assert sess.run(y, {x: image, sizes: [1, 7, 8, 5]}).shape == (1, 7, 8, 5)
        assert sess.run(explicit, {x: image, sizes: [1, 7, 9, 5]}).shape == (1, 7, 9, 5)
        for bad in ([1, 9, 8, 5], [1, 8, 6, 5], [1, 0, 8, 5]):
            with pytest.raises(ExecutionError, match="output_shape's spatial sizes"):
                sess.run(y, {x: image, sizes: bad})
        with pytest.raises(ExecutionError, match="do not give the input's"):
            sess.run(explicit, {x: image, sizes: [1, 8, 8, 5]})


def test_layers_conv2d_transpose_with_sizes_known_only_at_run_time():
    """og.layers.conv2d_transpose on images whose height and width only the run knows
    grows them by the same rule, with the same values and gradients as the layer built
    for the known size, and exports: onnxruntime runs two image sizes."""
    rng = np.random.RandomState(1)
    kernel, bias = rng.randn(3, 2, 4, 3), rng.randn(4)
    for padding, fmt in (("same", "channels_last"), ("valid", "channels_first")):
        x = rng.randn(*((2, 5, 6, 3) if fmt == "channels_last" else (2, 3, 5, 6)))
        x = x.astype(np.float32)  # (onnxruntime has no float64 ConvTranspose)
        got = []
        for shape in (x.shape, [None, None, None, 3] if fmt == "channels_last"
                      else [None, 3, None, None]):
            g = og.Graph()
            with g.as_default():
                p = og.placeholder(og.float32, shape, name="x")
                y = og.layers.conv2d_transpose(
                    p, 4, (3, 2), strides=(2, 3), padding=padding, data_format=fmt,
                    kernel_initializer=og.constant_initializer(kernel),
                    bias_initializer=og.constant_initializer(bias))
                grads = og.gradients(og.reduce_sum(og.sin(y)), [p] + og.trainable_variables())
                sess = og.Session(g)
                sess.run(og.global_variables_initializer())
                got.append(sess.run([y] + grads, {p: x}))
        for a, b in zip(*got, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        grown = (10, 18) if padding == "same" else (11, 18)
        assert got[1][0].shape == ((2,) + grown + (4,) if fmt == "channels_last"
                                   else (2, 4) + grown)
        sig = og.signature({"x": p}, {"y": y})
        proto = to_onnx(g, signatures={"serving": sig}, session=sess)
        runner = ort.InferenceSession(proto.SerializeToString(),
                                      providers=["CPUExecutionProvider"])
        for image in (x, x[:1, :, :4] if fmt == "channels_last" else x[:1, :, :, :4]):
            np.testing.assert_allclose(runner.run(["y"], {"x": image})[0],
                                       sess.run(y, {p: image}), rtol=1e-5, atol=1e-5)


def test_a_valid_window_larger_than_the_input_is_refused_while_building():
    """As TF1's "Negative dimension size": these built an empty output instead (conv3d,
    max_pool3d and the N-D layers already refused it)."""
    x4 = og.placeholder(og.float32, [1, 1, 3, 2])
    x3 = og.placeholder(og.float32, [1, 3, 2])
    w = np.ones((1, 4, 2, 2), np.float32)
    builds = {
        "conv2d": lambda: og.nn.conv2d(x4, w, [1, 1, 1, 1], "VALID"),
        "dilated conv2d": lambda: og.nn.conv2d(x4, w[:, :2], [1, 1, 1, 1], "VALID",
                                               dilations=[1, 1, 3, 1]),
        "conv1d": lambda: og.nn.conv1d(x3, w[0], 1, "VALID"),
        "depthwise_conv2d": lambda: og.nn.depthwise_conv2d(x4, w[..., :1], [1, 1, 1, 1],
                                                           "VALID"),
        "max_pool": lambda: og.nn.max_pool(x4, [1, 1, 4, 1], [1, 1, 1, 1], "VALID"),
        "avg_pool": lambda: og.nn.avg_pool(x4, [1, 1, 4, 1], [1, 1, 1, 1], "VALID"),
        "conv2d layer": lambda: og.layers.conv2d(x4, 2, (1, 4)),
        "max_pooling2d": lambda: og.layers.max_pooling2d(x4, (1, 4), 1),
        "average_pooling2d": lambda: og.layers.average_pooling2d(x4, (1, 4), 1),
    }
    for what, build in builds.items():
        with pytest.raises(ShapeError, match=r"window \((4|5)\) is larger than the input "
                                             r"\(3\)"):
            build()
            pytest.fail(what)
    # a window that just fits builds, and unknown sides are left to the run
    assert og.nn.conv2d(x4, w[:, :3], [1, 1, 1, 1], "VALID").shape == (1, 1, 1, 2)
    og.nn.conv2d(og.placeholder(og.float32, [1, None, None, 2]), w, [1, 1, 1, 1], "VALID")


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
    want, got = session_and_onnxruntime(g, {"x": x}, outs, {"x": xv})
    for key, a, b in zip(outs, got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=key)

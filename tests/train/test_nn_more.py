"""onegraph.train.nn_more (TF1's batch_normalization, fused_batch_norm, the moments
helpers, softmax_cross_entropy_with_logits_v2, xw_plus_b / relu_layer / crelu / silu,
log_poisson_loss, zero_fraction, the 1-D / 3-D pools, tf.nn.pool, conv3d,
tf.nn.convolution, conv2d's backprops, max_pool_with_argmax, dilation2d / erosion2d)
against TensorFlow's outputs and gradients, recorded in data/tf1_nnmore_reference.npz
by `tools/record_tf1_reference.py nnmore` (TensorFlow 2.21's tf.compat.v1); errors;
run-time sizes; an export run in onnxruntime."""

import re

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ShapeError
from onegraph.train import nn_more as M

from . import tf1_reference
from .graph_runs import session_and_onnxruntime
from .tf1_nnmore_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("nnmore")


@pytest.fixture
def from_nn_more(monkeypatch):
    """Case paths ("nn.fused_batch_norm") resolved in nn_more."""
    monkeypatch.setattr(tf1_reference, "function", lambda path: getattr(M, path.split(".")[-1]))


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow_values_and_gradients(reference, from_nn_more, case):
    tf1_reference.check_case(reference, case)


_CONVOLUTION_CASES = [c for c in CASES if c[1] == "nn.convolution"]


@pytest.mark.parametrize("case", _CONVOLUTION_CASES, ids=[c[0] for c in _CONVOLUTION_CASES])
def test_convolution_of_an_input_of_unknown_rank(reference, from_nn_more, case):
    """nn.convolution's cases again with the input's rank unknown while building: its
    leading dims (one batch dim or several) are flattened at run time, as TF's
    expanded batch (a run-time Transpose error before, for several batch dims)."""
    tf1_reference.check_case(reference, case, hidden_dims={case[2][0][1:]: None})


def test_every_function_has_cases_or_a_test_of_its_own():
    tested = {path.split(".")[-1] for _, path, _, _, _ in CASES}
    tested |= {"zero_fraction", "sufficient_statistics", "MaxPoolWithArgmax"}
    assert tested == set(M.__all__)


def _run(build):
    """build() in a fresh graph, run; build returns (fetches, feed dict)."""
    g = og.Graph()
    with g.as_default():
        fetches, feed = build()
        return og.Session(g).run(fetches, feed)


def test_sufficient_statistics_and_zero_fraction_as_tensorflow():
    # scalar float results, which the recorder cannot weigh: TF's formulas, with the
    # values TensorFlow 2.21 gave for these inputs
    inputs = make_inputs()
    x, shift = inputs["x_nhwc"], inputs["shift3"]

    def build():
        xp = og.placeholder(og.float32, x.shape)
        sp = og.placeholder(og.float32, shift.shape)
        c, m, v, s = M.sufficient_statistics(xp, [0, 1, 2], sp)
        assert s is sp
        loss = og.reduce_sum(m * 1.5) + og.reduce_sum(v * 0.5) + og.reduce_sum(s * 2.0)
        c2, m2, v2, s2 = M.sufficient_statistics(xp, [1, -1], keepdims=True)
        assert s2 is None
        fractions = [M.zero_fraction(og.constant(inputs["sparse"])),
                     M.zero_fraction(og.constant(inputs["ints"])),
                     M.zero_fraction(og.constant(np.zeros((0, 3), np.float32))),
                     M.zero_fraction(og.constant(np.array([True, False, False])))]
        return [c, m, v, c2, m2, v2, *fractions, *og.gradients(loss, [xp, sp])], \
            {xp: x, sp: shift}

    c, m, v, c2, m2, v2, zf, zfi, zfe, zfb, gx, gs = _run(build)
    assert c.dtype == np.float32 and c.shape == () and c == 60.0
    np.testing.assert_allclose(m, (x - shift).sum((0, 1, 2)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v, ((x - shift) ** 2).sum((0, 1, 2)), rtol=1e-5, atol=1e-5)
    assert c2 == 15.0 and m2.shape == v2.shape == (2, 1, 6, 1)
    np.testing.assert_allclose(m2, x.sum((1, 3), keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v2, (x ** 2).sum((1, 3), keepdims=True), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(gx, 1.5 + (x - shift), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gs, -90.0 - (x - shift).sum((0, 1, 2)) + 2.0, rtol=1e-5,
                               atol=1e-4)
    for got, want in ((zf, 0.68333334), (zfi, 0.5), (zfb, 0.6666667)):
        assert got.dtype == np.float32 and got.shape == () and np.isclose(got, want)
    assert np.isnan(zfe)


def test_unknown_sizes_give_what_known_ones_do():
    rng = np.random.RandomState(1)
    xv = rng.randn(2, 5, 6, 7, 2).astype(np.float32)
    w = rng.randn(2, 3, 2, 2, 4).astype(np.float32)

    def outputs(shape):
        def build():
            x = og.placeholder(og.float32, shape)
            outs = [M.conv3d(x, w, [1, 1, 1, 1, 1], "SAME", dilations=[1, 2, 2, 1, 1]),
                    M.convolution(x, w, "SAME", strides=[2, 1, 2]),
                    M.max_pool3d(x, 3, 2, "SAME"),
                    M.avg_pool3d(x, [2, 3, 2], [2, 1, 2], "SAME"),
                    M.fused_batch_norm(x, np.ones(2, np.float32), np.zeros(2, np.float32),
                                       data_format="NDHWC")[2],
                    M.sufficient_statistics(x, [0, 1, 2])[0],
                    M.weighted_moments(x, [0, 2], np.float32(2.0))[1],
                    M.max_pool_with_argmax(og.reshape(x, [-1, 5, 6, 14]), 2, 2, "SAME")[1]]
            loss = og.add_n([og.reduce_sum(o * o) for o in outs[:4]])
            return outs + og.gradients(loss, [x]), {x: xv}
        return _run(build)

    known = outputs([2, 5, 6, 7, 2])
    for a, b in zip(known, outputs([None, None, None, None, 2]), strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_bad_arguments_are_named():
    x = og.constant(np.zeros((2, 5, 6, 3), np.float32))
    v = og.constant(np.zeros((2, 5, 6, 7, 3), np.float32))
    s = og.constant(np.zeros((2, 9, 3), np.float32))
    c3 = og.constant(np.ones(3, np.float32))
    w = og.constant(np.zeros((3, 3, 3, 4), np.float32))
    cases = [
        (lambda: M.batch_normalization(x, c3, og.constant(np.ones(4, np.float32)), None,
                                       None, 1e-3), ShapeError,
         "batch_normalization: variance of shape \\[4\\] does not broadcast"),
        (lambda: M.batch_normalization(x, c3, c3, None, None, "eps"), TypeError,
         "batch_normalization: variance_epsilon must be a number"),
        (lambda: M.batch_normalization(x, c3, og.constant(np.ones(3)), None, None, 1e-3),
         TypeError, "batch_normalization: mean, variance, offset and scale must have one "
         "dtype"),
        (lambda: M.batch_normalization(og.constant([1, 2]), c3, c3, None, None, 1.0),
         TypeError, "batch_normalization: x must be a float tensor"),
        (lambda: M.fused_batch_norm(x, c3, c3, is_training=False), ValueError,
         "fused_batch_norm: mean and variance must both be"),
        (lambda: M.fused_batch_norm(x, c3, c3, data_format="NCW"), ValueError,
         "fused_batch_norm: data_format must be"),
        (lambda: M.fused_batch_norm(v, c3, c3), ShapeError, "fused_batch_norm: x must be 4-D"),
        (lambda: M.fused_batch_norm(x, og.constant(np.ones(4, np.float32)), c3), ShapeError,
         "fused_batch_norm: scale must be 1-D with one value per channel \\(3\\)"),
        (lambda: M.fused_batch_norm(x, c3, c3, is_training="yes"), TypeError,
         "fused_batch_norm: is_training must be a bool"),
        (lambda: M.fused_batch_norm(x, c3, c3, epsilon=None), TypeError,
         "fused_batch_norm: epsilon must be a number"),
        (lambda: M.softmax_cross_entropy_with_logits_v2(labels=x, logits=x, axis=1, dim=1),
         ValueError, "softmax_cross_entropy_with_logits_v2: give axis or dim, not both"),
        (lambda: M.softmax_cross_entropy_with_logits_v2(labels=x, logits=x, axis=4),
         ShapeError, "softmax_cross_entropy_with_logits_v2: axis 4 is out of range"),
        (lambda: M.softmax_cross_entropy_with_logits_v2(labels=c3, logits=x), ShapeError,
         "softmax_cross_entropy_with_logits_v2: labels of shape \\[3\\]"),
        (lambda: M.softmax_cross_entropy_with_logits_v2(logits=x, labels=None), TypeError,
         "softmax_cross_entropy_with_logits_v2 needs labels and logits"),
        (lambda: M.xw_plus_b(x, w, c3), ShapeError, "xw_plus_b: x must be 2-D"),
        (lambda: M.xw_plus_b(og.zeros([2, 3]), og.zeros([4, 5]), og.zeros([5])),
         ShapeError, "xw_plus_b: x of shape \\[2, 3\\] and weights of shape \\[4, 5\\]"),
        (lambda: M.relu_layer(og.zeros([2, 4]), og.zeros([4, 5]), og.zeros([4])),
         ShapeError, "relu_layer: biases must be 1-D with one value per output"),
        (lambda: M.crelu(x, axis=4), ShapeError, "crelu: axis 4 is out of range"),
        (lambda: M.crelu(x, axis=1.0), TypeError, "crelu: axis must be an int"),
        (lambda: M.silu(x, beta="big"), TypeError, "silu: beta must be a number"),
        (lambda: M.log_poisson_loss(c3, x), ShapeError,
         "log_poisson_loss: log_input of shape"),
        (lambda: M.log_poisson_loss(x, x, compute_full_loss="no"), TypeError,
         "log_poisson_loss: compute_full_loss must be a bool"),
        (lambda: M.zero_fraction(og.constant(np.array(["a"]))), TypeError,
         "zero_fraction: value must be numeric"),
        (lambda: M.sufficient_statistics(x, [4]), ShapeError,
         "sufficient_statistics: axis 4 is out of range"),
        (lambda: M.sufficient_statistics(x, [0], keep_dims=True, keepdims=True), ValueError,
         "sufficient_statistics: give keepdims or its old name keep_dims"),
        (lambda: M.weighted_moments(x, "0", c3), TypeError, "weighted_moments: axes"),
        (lambda: M.weighted_moments(x, [0], og.zeros([4])), ShapeError,
         "weighted_moments: frequency_weights of shape \\[4\\] do not broadcast"),
        (lambda: M.normalize_moments(3, og.constant([1, 2]), c3, None), TypeError,
         "normalize_moments: mean_ss must be a float tensor"),
        (lambda: M.max_pool1d(x, 2, 2, "SAME"), ShapeError, "max_pool1d: input must be 3-D"),
        (lambda: M.max_pool1d(s, 2, 2, "SAME", data_format="NHWC"), ValueError,
         "max_pool1d: data_format must be 'NWC' or 'NCW'"),
        (lambda: M.max_pool1d(s, 2, 2, [[0, 0], [1, 1], [1, 0]]), ValueError,
         "max_pool1d: padding .* must be \\[0, 0\\] on the batch and channel axes"),
        (lambda: M.avg_pool1d(s, 2, 2, [[0, 0], [1, 1], [0, 0]]), ValueError,
         "avg_pool1d: padding must be 'SAME' or 'VALID'"),
        (lambda: M.avg_pool1d(s, 10, 1, "VALID"), ShapeError,
         "avg_pool1d: with VALID padding the window \\(10\\) is larger"),
        (lambda: M.max_pool3d(v, [1, 2, 2], [2, 2], "SAME"), ValueError,
         "max_pool3d: strides must have 1, 3 or 5 entries"),
        (lambda: M.max_pool3d(v, [2, 2, 2, 2, 1], 1, "SAME"), ValueError,
         "max_pool3d: ksize: .* must be 1 on the batch and channel axes"),
        (lambda: M.avg_pool3d(v, [2, 0, 2], 1, "SAME"), TypeError,
         "avg_pool3d: ksize must be positive ints"),
        (lambda: M.avg_pool3d(v, 2, 1, "SAME", data_format="NCHW"), ValueError,
         "avg_pool3d: data_format must be 'NDHWC' or 'NCDHW'"),
        (lambda: M.pool(x, [2, 2], "MIN", "SAME"), ValueError,
         "pool: pooling_type must be 'MAX' or 'AVG'"),
        (lambda: M.pool(x, [2, 2], "MAX", "SAME", dilation_rate=[2, 2]), ValueError,
         "pool: SAME padding is not implemented for dilation_rate"),
        (lambda: M.pool(x, [2, 2], "MAX", "VALID", [2, 1], [2, 1]), ValueError,
         "pool: strides \\[2, 1\\] > 1 cannot go with dilation_rate"),
        (lambda: M.pool(x, [2, 2], "MAX", "VALID", strides=[3, 1]), ValueError,
         "pool: strides \\[3, 1\\] larger than window_shape"),
        (lambda: M.pool(x, [2, 2], "MAX", "VALID", dilations=[1, 1], dilation_rate=[1, 1]),
         ValueError, "pool: give dilation_rate or dilations, not both"),
        (lambda: M.pool(x, [2, 2, 2, 2], "MAX", "VALID"), ValueError,
         "pool: window_shape must be a list of 1, 2 or 3 ints"),
        (lambda: M.conv3d(v, og.zeros([2, 2, 2, 4, 1]), [1, 1, 1, 1, 1], "SAME"), ShapeError,
         "conv3d: input has 3 channels but filter \\[2, 2, 2, 4, 1\\] takes 4"),
        (lambda: M.conv3d(v, w, [1, 1, 1, 1, 1], "SAME"), ShapeError,
         "conv3d: filter must be 5-D"),
        (lambda: M.conv3d(v, og.zeros([2, 2, 2, 3, 1]), None, "SAME"), TypeError,
         "conv3d needs input, filter \\(filters\\), strides and padding"),
        (lambda: M.conv3d(v, og.zeros([2, 2, 2, 3, 1]), 1, "FULL"), ValueError,
         "conv3d: padding must be 'SAME' or 'VALID'"),
        (lambda: M.conv3d(v, og.zeros([2, 2, 2, 3, 1], og.float64), 1, "SAME"), TypeError,
         "conv3d: filter must be float32"),
        (lambda: M.convolution(x, w, "SAME", strides=[2, 2], dilation_rate=[2, 1]), ValueError,
         "convolution: strides \\[2, 2\\] > 1 cannot go with dilation_rate"),
        (lambda: M.convolution(x, og.zeros([2, 2, 2, 2, 3, 1]), "SAME"), ValueError,
         "convolution: only 1, 2 or 3 spatial dims"),
        (lambda: M.convolution(s, w, "SAME"), ShapeError,
         "convolution: input of shape \\[2, 9, 3\\] has fewer than the 4 dims"),
        (lambda: M.convolution(x, w, "SAME", data_format="NCW"), ValueError,
         "convolution: data_format must be 'NHWC' or 'NCHW'"),
        (lambda: M.conv2d_backprop_input([2, 9, 6, 3], w, og.zeros([2, 3, 3, 4]),
                                         [1, 2, 2, 1], "SAME"), ShapeError,
         "conv2d_backprop_input: input_sizes's size 9 on spatial axis 0"),
        (lambda: M.conv2d_backprop_input([2, 5, 6, 3], w, og.zeros([2, 3, 3, 4]),
                                         [1, 2, 2, 1], None), TypeError,
         "conv2d_backprop_input needs input_sizes"),
        (lambda: M.conv2d_backprop_input([2, 5, 6, 3], w, og.zeros([2, 3, 3, 4]),
                                         [1, 2, 2, 1], "SAME", filters=w), ValueError,
         "conv2d_backprop_input: give filter or filters, not both"),
        (lambda: M.conv2d_backprop_filter(x, [3, 3, 3, 4], og.zeros([2, 3, 4, 4]),
                                          [1, 2, 2, 1], "SAME"), ShapeError,
         "conv2d_backprop_filter: out_backprop has size 4 on spatial axis 1"),
        (lambda: M.conv2d_backprop_filter(x, [3, 3, 2, 4], og.zeros([2, 3, 3, 4]),
                                          [1, 2, 2, 1], "SAME"), ShapeError,
         "conv2d_backprop_filter: input has 3 channels but filter_sizes"),
        (lambda: M.conv2d_backprop_filter(x, [3, 3, 3], og.zeros([2, 3, 3, 4]),
                                          [1, 2, 2, 1], "SAME"), ShapeError,
         "conv2d_backprop_filter: filter_sizes must have 4 entries"),
        (lambda: M.conv2d_backprop_filter(x, [3, 3, 3, 4], og.zeros([2, 3, 3, 4]),
                                          [1, 2, 2, 1], "SAME", use_cudnn_on_gpu=None),
         TypeError, "conv2d_backprop_filter: use_cudnn_on_gpu must be a bool"),
        (lambda: M.max_pool_with_argmax(x, 2, 2, "SAME", data_format="NCHW"), ValueError,
         "max_pool_with_argmax: data_format must be 'NHWC'"),
        (lambda: M.max_pool_with_argmax(x, 2, 2, "SAME", Targmax=og.float32), TypeError,
         "max_pool_with_argmax: Targmax must be int32 or int64"),
        (lambda: M.max_pool_with_argmax(x, 2, 2, "SAME", Targmax=og.int32,
                                        output_dtype=og.int32), ValueError,
         "max_pool_with_argmax: give Targmax or output_dtype, not both"),
        (lambda: M.dilation2d(x, og.zeros([3, 3, 2]), [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
         ShapeError, "dilation2d: input has 3 channels but filter \\[3, 3, 2\\] has 2"),
        (lambda: M.dilation2d(x, w, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"), ShapeError,
         "dilation2d: filter must be 3-D"),
        (lambda: M.dilation2d(x, og.zeros([3, 3, 3]), [1, 1, 1, 1], None, "SAME"), TypeError,
         "dilation2d needs input, filter"),
        (lambda: M.dilation2d(og.placeholder(og.float32, [1, None, 4, 3]),
                              og.zeros([3, 3, 3]), 1, 1, "SAME"), ShapeError,
         "dilation2d: the input's height and width must be known"),
        (lambda: M.erosion2d(x, og.zeros([3, 3, 2]), [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
         ShapeError, "erosion2d: value has 3 channels but kernel \\[3, 3, 2\\] has 2"),
        (lambda: M.erosion2d(x, og.zeros([3, 3]), [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
         ShapeError, "erosion2d: kernel must be 3-D"),
        (lambda: M.erosion2d(x, og.zeros([3, 3, 3]), [1, 1, 1, 1], [1, 1, 1, 1], "FULL"),
         ValueError, "erosion2d: padding must be 'SAME' or 'VALID'"),
    ]
    for fn, error, message in cases:
        with pytest.raises(error, match=message):
            fn()


def test_nn_more_exports_and_runs_in_onnxruntime():
    rng = np.random.RandomState(4)
    xv = rng.randn(2, 5, 6, 3).astype(np.float32)

    def c(*shape):
        return og.constant(rng.randn(*shape).astype(np.float32))

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 5, 6, 3], name="x")
        ones = og.constant(np.ones(3, np.float32))
        vol = og.reshape(x, [-1, 5, 3, 2, 3])
        seq = og.reshape(x, [-1, 10, 9])
        y, _, batch_var = M.fused_batch_norm(x, c(3), c(3))
        pooled, argmax = M.max_pool_with_argmax(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
        outs = {
            "bn": M.batch_normalization(x, c(3), ones, c(3), c(3), 1e-3),
            "fused": y, "fused_var": batch_var,
            "fused_infer": M.fused_batch_norm(x, c(3), c(3), c(3), ones,
                                              is_training=False)[0],
            "xent": M.softmax_cross_entropy_with_logits_v2(labels=og.nn.softmax(x),
                                                           logits=x * 2.0, axis=1),
            "relu_layer": M.relu_layer(og.reshape(x, [-1, 18]), c(18, 4), c(4)),
            "crelu": M.crelu(x, axis=1), "silu": M.silu(x, 0.5),
            "poisson": M.log_poisson_loss(og.abs(x) * 3.0, x, compute_full_loss=True),
            "zero_fraction": M.zero_fraction(og.nn.relu(x)),
            "wvar": M.weighted_moments(x, [0, 1], og.abs(x))[1],
            "max3d": M.max_pool3d(vol, 2, [1, 2, 1], "SAME"),
            "avg3d": M.avg_pool3d(vol, [2, 2, 2], 1, "VALID", data_format="NCDHW"),
            "avg1d": M.avg_pool1d(seq, 3, 2, "SAME"),
            "max1d": M.max_pool1d(seq, 2, 2, [[0, 0], [1, 0], [0, 0]]),
            "conv3d": M.conv3d(vol, c(2, 2, 2, 3, 4), [1, 1, 2, 1, 1], "SAME",
                               dilations=[1, 2, 1, 1, 1]),
            "conv1d": M.convolution(seq, c(3, 9, 2), "SAME", dilation_rate=[2]),
            "pool": M.pool(x, [2, 3], "AVG", "SAME", strides=[2, 2]),
            "backprop_input": M.conv2d_backprop_input([og.shape(x)[0], 9, 11, 4],
                                                      c(3, 3, 4, 3), x, [1, 2, 2, 1], "SAME"),
            "backprop_filter": M.conv2d_backprop_filter(x, [3, 3, 3, 2], c(2, 3, 3, 2),
                                                        [1, 2, 2, 1], "SAME"),
            "pooled": pooled, "argmax": argmax,
            "dilation": M.dilation2d(x, c(3, 2, 3), [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
            "erosion": M.erosion2d(x, c(2, 2, 3), [1, 2, 1, 1], [1, 1, 2, 1], "SAME"),
        }
    want, got = session_and_onnxruntime(g, {"x": x}, outs, {"x": xv})
    for key, a, b in zip(outs, got, want, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, key
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=key)


def test_unknown_sizes_export_and_run_in_onnxruntime():
    # dilated windows over sizes known only at run time: the SAME padding is computed
    # in the graph (onnxruntime refuses auto_pad with dilations)
    rng = np.random.RandomState(5)
    xv = rng.randn(2, 9, 8, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None, None, 3], name="x")
        vol = og.expand_dims(x, 1)
        w = og.constant(rng.randn(3, 2, 3, 4).astype(np.float32))
        outs = {"avg_dilated": M.pool(x, [2, 3], "AVG", "VALID", dilation_rate=[2, 2]),
                "max_dilated_3d": M.pool(vol, [1, 2, 2], "MAX", "VALID",
                                         dilation_rate=[1, 2, 1]),
                "conv_dilated": M.convolution(x, w, "SAME", dilation_rate=[2, 3]),
                "max3d": M.max_pool3d(vol, [1, 3, 2], [1, 2, 2], "SAME"),
                "argmax": M.max_pool_with_argmax(x, 3, 2, "SAME",
                                                 include_batch_in_index=True).argmax}
        sig = og.signature({"x": x}, outs)
        want = og.Session(g).run(list(outs.values()), {x: xv})
        proto = to_onnx(g, signatures={"serving": sig})
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(list(outs), {"x": xv})
    for key, a, b in zip(outs, got, want, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, key
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=key)


@pytest.mark.parametrize("x_shape,sizes,dy_shape,padding,message", [
    ([1, 2, 2, 1], [3, 3, 1, 1], [1, 1, 1, 1], [[0, 0]] * 4,
     "the filter (3) is larger than the padded input (2) on spatial axis 0"),
    ([1, 5, 5, 3], [3, 3, 3, 4], [1, 3, 3, 2], "VALID",
     "out_backprop has 2 channels but filter_sizes [3, 3, 3, 4] says 4"),
    ([1, 5, 5, 3], [3, 3, 3, 4], [1, 4, 3, 4], "VALID",
     "out_backprop has size 4 on spatial axis 0 but a conv2d of this input, filter and "
     "padding makes 3"),
])
def test_conv2d_backprop_filter_names_sizes_that_do_not_fit_one_conv2d(x_shape, sizes,
                                                                         dy_shape, padding,
                                                                         message):
    # VALID conv2d output size: (in - k) // stride + 1 = (5 - 3) // 1 + 1 = 3; VALID
    # refuses a too large filter before, in its own words, explicit padding here
    with og.Graph().as_default():
        x, dy = og.zeros(x_shape), og.zeros(dy_shape)
        with pytest.raises(ShapeError, match="^" + re.escape(
                f"conv2d_backprop_filter: {message}") + "$"):
            M.conv2d_backprop_filter(x, sizes, dy, [1, 1, 1, 1], padding)

"""Edge shapes and dtypes found by a dtype x operator sweep against onnxruntime:
0-d inputs, empty axes, huge integer exponents, infinite slopes, composite reductions
without axes. Each case runs as a one-node ONNX model through the Session and is
compared with onnxruntime, or with the ONNX reference evaluator where onnxruntime has
no kernel for the dtype."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx.reference import ReferenceEvaluator  # noqa: E402

from .single_node import feeds_model as _model  # noqa: E402
from .single_node import run_onnxruntime  # noqa: E402


def _onegraph(model, feeds):
    return og.Session(from_onnx(model)).run("y", feeds)


def _check(got, want):
    assert type(got) is np.ndarray, type(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op_type,attrs", [
    ("LeakyRelu", {}), ("Elu", {}), ("Selu", {}), ("Sigmoid", {}), ("HardSigmoid", {}),
    ("HardSwish", {}), ("Softsign", {}), ("Gelu", {"approximate": "tanh"}),
    ("Gelu", {}), ("Relu", {}), ("Tanh", {}), ("Softplus", {}),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations_of_a_0d_input(op_type, attrs, dtype):
    feeds = {"x": np.array(-0.75, dtype)}
    model = _model(op_type, feeds, 20, **attrs)
    got = _onegraph(model, feeds)
    if dtype == np.float32:
        _check(got, run_onnxruntime(model, feeds))
    elif op_type == "Softsign":  # the reference evaluator fails on 0-d inputs too
        _check(got, np.array(-0.75 / 1.75, dtype))
    else:  # onnxruntime has few float64 activations
        (want,) = ReferenceEvaluator(model).run(None, feeds)
        _check(got, np.asarray(want))


@pytest.mark.parametrize("op_type,feeds,opset,out_dtype,attrs", [
    ("PRelu", {"x": np.array(-1.0, np.float32), "s": np.array(0.1, np.float32)}, 16,
     None, {}),
    ("Not", {"x": np.array(True)}, 13, None, {}),
    ("IsNaN", {"x": np.array(1.0, np.float32)}, 20, np.bool_, {}),
    ("IsInf", {"x": np.array(np.inf, np.float32)}, 20, np.bool_, {}),
    ("BitwiseNot", {"x": np.array(5, np.int32)}, 18, None, {}),
    ("ArgMax", {"x": np.array([1.0, 3.0, 2.0], np.float32)}, 13, np.int64,
     {"keepdims": 0}),
    ("ArgMin", {"x": np.array([1.0, 3.0, 2.0], np.float32)}, 13, np.int64,
     {"keepdims": 0}),
    ("Clip", {"x": np.array(5.0, np.float32), "lo": np.array([0.0], np.float32),
              "hi": np.array([1.0], np.float32)}, 13, None, {}),
], ids=lambda v: v if isinstance(v, str) else "")
def test_0d_results_are_0d_arrays(op_type, feeds, opset, out_dtype, attrs):
    model = _model(op_type, feeds, opset, out_dtype, **attrs)
    got = _onegraph(model, feeds)
    want = run_onnxruntime(model, feeds)
    assert type(got) is np.ndarray and got.shape == want.shape == ()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op_type,shape,axis", [
    ("Softmax", (3, 0), -1), ("Softmax", (0, 3), 0), ("LogSoftmax", (3, 0), -1),
    ("LogSoftmax", (0, 3), 0), ("Softmax", (0, 3), 1)])
def test_softmax_over_an_empty_axis(op_type, shape, axis):
    feeds = {"x": np.zeros(shape, np.float32)}
    model = _model(op_type, feeds, 13, axis=axis)
    _check(_onegraph(model, feeds), run_onnxruntime(model, feeds))


@pytest.mark.parametrize("exclusive,reverse", [(1, 0), (1, 1), (0, 1)])
@pytest.mark.parametrize("shape,axis", [((0, 3), 0), ((2, 0), 1), ((2, 4), 1),
                                        ((3, 2), 0), ((5,), 0)])
def test_cumsum_exclusive_and_reverse(shape, axis, exclusive, reverse):
    x = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    feeds = {"x": x, "axis": np.array(axis, np.int64)}
    model = _model("CumSum", feeds, 14, exclusive=exclusive, reverse=reverse)
    _check(_onegraph(model, feeds), run_onnxruntime(model, feeds))


@pytest.mark.parametrize("op_type", ["ReduceL1", "ReduceL2", "ReduceSumSquare",
                                     "ReduceLogSum", "ReduceLogSumExp", "ReduceSum",
                                     "ReduceMax"])
def test_reductions_without_axes_keep_their_elementwise_steps(op_type):
    """noop_with_empty_axes=1 and no axes: nothing is reduced, but abs, square and
    log still apply (opset 18's text; onnxruntime and the reference agree)."""
    feeds = {"x": np.array([[-2.0, 3.0], [0.5, 4.0]], np.float32)}
    model = _model(op_type, feeds, 18, noop_with_empty_axes=1)
    with np.errstate(invalid="ignore"):
        _check(_onegraph(model, feeds), run_onnxruntime(model, feeds))


def test_reduce_l2_of_integers_does_not_overflow_the_squares():
    for x, norm in (([30000, 40000], 50000), ([5, 12], 13), ([46341, 0, 0], 46341)):
        feeds = {"x": np.array(x, np.int32)}
        model = _model("ReduceL2", feeds, 18, keepdims=0)
        got = _onegraph(model, feeds)
        np.testing.assert_array_equal(got, run_onnxruntime(model, feeds))
        assert got == norm and got.dtype == np.int32


@pytest.mark.parametrize("base,exponent", [
    (np.array([-1, -1, 2, -0.0], np.float16), np.array([2049, 65537, 3, -3], np.int32)),
    (np.array([-1, -1, -0.0], np.float32), np.array([2 ** 24 + 1, 2 ** 25, -(2 ** 30) - 1],
                                                   np.int64)),
    (np.array([1, -1, -1, 0], np.int32), np.array([2 ** 31, 2 ** 31 + 1, 2 ** 40, 2 ** 33],
                                                  np.int64)),
    (np.array([-1.5, 2.0, 9.0], np.float32), np.array([2.0, 0.5, 0.5], np.float32)),
    (np.array([[-1.5, 2.0], [3.0, 0.25]], np.float32), np.array([[2.0]], np.float32)),
], ids=["f16^i32", "f32^i64", "i32^i64", "f32^f32", "f32^2"])
def test_pow_keeps_the_parity_of_huge_integer_exponents(base, exponent):
    feeds = {"a": base, "b": exponent}
    model = _model("Pow", feeds, 15)
    got = _onegraph(model, feeds)
    with np.errstate(all="ignore"):
        want = run_onnxruntime(model, feeds)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=1e-6)


def test_prelu_with_an_infinite_slope_leaves_non_negative_values_alone():
    feeds = {"x": np.array([2.5, -0.0, 0.0, -1.0, 1.0], np.float32),
             "s": np.array([-np.inf], np.float32)}
    model = _model("PRelu", feeds, 16)
    got = _onegraph(model, feeds)
    want = run_onnxruntime(model, feeds)
    np.testing.assert_array_equal(got, want)   # [2.5, -0, 0, inf, 1]
    assert np.signbit(got[1]) and not np.signbit(got[2])
    nan_slope = {"x": feeds["x"], "s": np.array([np.nan], np.float32)}
    got = _onegraph(model, nan_slope)
    np.testing.assert_array_equal(got, run_onnxruntime(model, nan_slope))


def test_integer_gemm_with_fractional_alpha_and_beta():
    """onnxruntime has no integer Gemm: the ONNX reference evaluator is the oracle."""
    feeds = {"a": np.array([[1, 2], [3, -4]], np.int32),
             "b": np.array([[3, 1], [4, 1]], np.int32), "c": np.array([1, -3], np.int32)}
    model = _model("Gemm", feeds, 13, alpha=0.5, beta=1.5)
    got = _onegraph(model, feeds)
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_cast_of_out_of_range_integer_strings_wraps():
    feeds = {"x": np.array(["255", "-129", "7", "300"], dtype=object)}
    model = _model("Cast", feeds, 19, np.int8, to=onnx.TensorProto.INT8)
    got = _onegraph(model, feeds)
    np.testing.assert_array_equal(got, run_onnxruntime(model, feeds))
    np.testing.assert_array_equal(got, [-1, 127, 7, 44])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
@pytest.mark.parametrize("bias,lambd", [(1.5, 1.0), (0.5, 0.0), (2.7, 1.5)])
def test_integer_shrink_with_a_fractional_bias(dtype, bias, lambd):
    """Integers shrink in floating point and truncate the result (a bias of 1.5 is not
    1), as onnxruntime and the reference do."""
    x = np.arange(-5, 6).astype(dtype)
    model = _model("Shrink", {"x": x}, 9, bias=bias, lambd=lambd)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(run_onnxruntime(model, {"x": x}), want)
    _check(_onegraph(model, {"x": x}), want)

"""Fixes from the math/reduction kernel audit against onnxruntime: each case once gave a
wrong value, an overflow or a raw error; now it matches onnxruntime (or ONNX's
reference where onnxruntime has no kernel) or is refused by name as onnxruntime
refuses it."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx.reference import ReferenceEvaluator

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.errors import ConversionError, ShapeError

from .single_node import feeds_model, run_onnxruntime


def _run(model, feeds):
    return og.Session(from_onnx(model)).run(["y"], feeds)[0]


def test_float16_mean_does_not_overflow_in_its_sum():
    feeds = {"a": np.array([65504, -65504, 60000], np.float16),
             "b": np.array([65504, -65504, 10000], np.float16)}
    model = feeds_model("Mean", feeds, 13)
    got = _run(model, feeds)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, run_onnxruntime(model, feeds))
    np.testing.assert_array_equal(got, np.array([65504, -65504, 35000], np.float16))


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64, np.int32, np.int64])
@pytest.mark.parametrize("alpha, beta", [(-1.0, 1.0), (2.0, -3.0), (-1.0, -1.0)])
def test_integer_gemm_with_negative_whole_factors_wraps_as_the_reference(dtype, alpha, beta):
    feeds = {"a": np.array([[1, 2], [3, 4]], dtype), "b": np.array([[3], [4]], dtype),
             "c": np.array([[5], [1]], dtype)}
    model = feeds_model("Gemm", feeds, 13, alpha=alpha, beta=beta)
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    got = _run(model, feeds)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_einsum_ellipses_of_different_widths_broadcast_as_onnxruntime_runs_them():
    """The spec wants every '...' as wide and onnxruntime's shape inference refuses
    declared ones; its kernel (and ONNX's reference) broadcast them as numpy, and so
    does onegraph (og.einsum evens them out before export)."""
    from .single_node import one_node_model

    model = one_node_model("Einsum", [("a", T.FLOAT, None), ("b", T.FLOAT, None)],
                           opset=13, equation="...ij,...jk->...ik")
    feeds = {"a": np.ones((3, 4), np.float32), "b": np.ones((2, 4, 5), np.float32)}
    got = _run(model, feeds)
    np.testing.assert_array_equal(got, run_onnxruntime(model, feeds))
    assert got.shape == (2, 3, 5)


@pytest.mark.parametrize("bad", ["scale", "B", "input_mean", "input_var"])
def test_batch_normalization_parameters_hold_one_value_per_channel(bad):
    feeds = {"x": np.ones((2, 3, 4), np.float32)}
    params = {name: np.ones(3, np.float32) for name in ("scale", "B", "input_mean",
                                                        "input_var")}
    params[bad] = np.ones(1, np.float32)
    model = feeds_model("BatchNormalization", feeds, 15, initializers=params)
    with pytest.raises(ShapeError, match=rf"{bad} has shape \[1\]; it needs one value per "
                                         r"channel, shape \[3\]"):
        _run(model, feeds)


def test_batch_normalization_of_a_1d_input_has_one_channel():
    """(review: the per-channel check refused the spec's "single dimension input of size
    N in which case C is assumed to be 1")"""
    feeds = {"x": np.array([1, 2, 3], np.float32)}
    params = {name: np.full(1, v, np.float32) for name, v in
              (("scale", 2.0), ("B", 0.5), ("input_mean", 1.0), ("input_var", 4.0))}
    model = feeds_model("BatchNormalization", feeds, 15, initializers=params)
    np.testing.assert_allclose(_run(model, feeds), run_onnxruntime(model, feeds), rtol=1e-6)


def test_reduce_axes_input_must_be_one_dimensional():
    feeds = {"x": np.ones((2, 3), np.float32), "axes": np.array([[1]], np.int64)}
    model = feeds_model("ReduceSum", feeds, 18)
    with pytest.raises(ShapeError, match=r"axes must be a 1-D tensor, got shape \[1, 1\]"):
        _run(model, feeds)


def test_mod_refuses_an_fmod_other_than_0_or_1():
    feeds = {"a": np.array([5, -5], np.int32), "b": np.array([3, 3], np.int32)}
    # the import refuses every 0/1 flag of another value (the runtimes disagree on it)
    with pytest.raises(ConversionError, match="fmod = 2 must be 0 or 1"):
        _run(feeds_model("Mod", feeds, 13, fmod=2), feeds)


def test_bool_to_string_casts_back_and_float_specials_use_the_spec_literals():
    feeds = {"x": np.array([True, False])}
    model = feeds_model("Cast", feeds, 13, out_dtype=object, to=T.STRING)
    strings = _run(model, feeds)
    np.testing.assert_array_equal(strings, run_onnxruntime(model, feeds))   # "1", "0"
    back = feeds_model("Cast", {"x": strings}, 13, out_dtype=bool, to=T.BOOL)
    np.testing.assert_array_equal(_run(back, {"x": strings}), [True, False])
    words = {"x": np.array(["True", "false", " 1", "0"], object)}
    np.testing.assert_array_equal(
        _run(feeds_model("Cast", words, 13, out_dtype=bool, to=T.BOOL), words),
        [True, False, True, False])
    floats = {"x": np.array([np.nan, np.inf, -np.inf, 0.5], np.float32)}
    text = _run(feeds_model("Cast", floats, 13, out_dtype=object, to=T.STRING), floats)
    assert list(text) == ["NaN", "INF", "-INF", "0.5"]


@pytest.mark.parametrize("op", ["Squeeze", "Unsqueeze"])
def test_squeeze_and_unsqueeze_axes_must_be_one_dimensional(op):
    """(review: the Reduce* fix's flaw was left in these: [[0]] was read flattened)"""
    feeds = {"x": np.ones((1, 2), np.float32), "axes": np.array([[0]], np.int64)}
    with pytest.raises(ShapeError, match=rf"{op}: axes must be a 1-D tensor, got shape "
                                         r"\[1, 1\]"):
        _run(feeds_model(op, feeds, 13), feeds)

"""Fixes from the audit of the image, signal and miscellaneous ONNX kernels against
onnxruntime and ONNX's reference evaluator (one-node models built with onnx.helper, run
through `from_onnx` and a Session).

- Resize linear/cubic on data holding NaN or inf: only the outputs whose taps read
  them are affected, as in onnxruntime (the dense-GEMM path made whole lines NaN).
- MeanVarianceNormalization: out-of-range and repeated axes are refused.
- Hann/Hamming/BlackmanWindow: integer output types truncate a peak of exactly 1 to 1;
  a symmetric window of one sample is 1 (numpy's hanning(1) and the rest).
- RoiAlign, RotaryEmbedding, NonMaxSuppression, Col2Im, CenterCropPad, GridSample,
  Upsample, Resize: invalid inputs are refused by name (onnxruntime refuses them too),
  or give onnxruntime's result where it accepts them and the spec allows it.
- GridSample cubic: grid values far outside the image (1e19, inf) sample the border.
- Multinomial: a +inf logit is always drawn; NaN or all -inf rows are refused.
"""

import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError  # noqa: E402
from onegraph.ops import KernelContext, get_op  # noqa: E402
from onegraph.ops import shape as shape_ops  # noqa: E402

_NAMED = (ShapeError, OpAttributeError)


def _model(op, feeds, consts=None, opset=21, **attrs):
    """One `op` node reading the graph inputs `feeds` then the initializers `consts`
    (name -> array, in order; a name "" leaves an optional input out), output "y"."""
    consts = consts or {}
    node = helper.make_node(op, list(feeds) + list(consts), ["y"], **attrs)
    graph = helper.make_graph(
        [node], op.lower(),
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for k, v in feeds.items()],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items() if k])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def _og(model, feeds):
    return onegraph.Session(from_onnx(model)).run(["y"], feeds)[0]


def _ort(model, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _ref(model, feeds):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return ReferenceEvaluator(model).run(None, feeds)[0]


def _ort_refuses(model, feeds):
    with pytest.raises(Exception):  # noqa: B017 - onnxruntime's own exception types
        _ort(model, feeds)


def _assert_same_nonfinite(got, want, rtol=1e-4, atol=5e-4):
    """NaN where want has NaN, the same infinities, close finite values."""
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- Resize

def _resize(x, scales, opset=19, **attrs):
    return _model("Resize", {"x": x}, {"roi": np.array([], np.float32),
                                       "scales": np.array(scales, np.float32)},
                  opset=opset, **attrs)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_resize_nonfinite_value_reaches_only_its_taps(mode, bad):
    # the audit's case: 6 values, one of them NaN/inf, resized x2 (a GEMM before)
    x = np.array([[[[1, 2, bad, 4, 5, 6]]]], np.float32)
    model = _resize(x, [1, 1, 1, 2], mode=mode)
    got, want = _og(model, {"x": x}), _ort(model, {"x": x})
    _assert_same_nonfinite(got, want)
    assert np.isfinite(got).sum() >= (6 if mode == "linear" else 3)


def test_resize_nan_in_one_column_of_an_image():
    # only H resized: onnxruntime's bilinear kernel still reads the (zero-weighted)
    # right neighbour along the unscaled W axis, and so does onegraph on such data
    x = np.arange(4 * 5, dtype=np.float32).reshape(1, 1, 4, 5)
    x[0, 0, 2, 3] = np.nan
    model = _resize(x, [1, 1, 1.5, 1], mode="linear")
    got, want = _og(model, {"x": x}), _ort(model, {"x": x})
    _assert_same_nonfinite(got, want)
    assert np.isnan(got[..., 3]).sum() < got.shape[2]  # not the whole column


@pytest.mark.parametrize("seed", range(4))
def test_resize_nonfinite_random_cases_match_onnxruntime(seed):
    rng = np.random.default_rng(seed)
    compared = 0
    while compared < 30:
        mode = str(rng.choice(["linear", "cubic"]))
        ctm = str(rng.choice(["half_pixel", "align_corners", "asymmetric",
                              "pytorch_half_pixel", "half_pixel_symmetric"]))
        antialias, exclude = int(rng.random() < 0.3), int(rng.random() < 0.3)
        shape = (1, 2) + tuple(int(v) for v in rng.integers(1, 10, 2))
        scales = [1, 1] + [float(rng.choice([0.3, 0.5, 0.6, 1, 1.5, 2, 2.5, 3]))
                           for _ in range(2)]
        if all(int(np.floor(np.float32(n) * np.float32(s))) == n
               for n, s in zip(shape, scales)) and scales != [1, 1, 1, 1]:
            continue  # onnxruntime copies the input whatever the scales (not the spec)
        x = rng.standard_normal(shape).astype(np.float32)
        for _ in range(int(rng.integers(1, 4))):
            x[tuple(int(rng.integers(d)) for d in shape)] = rng.choice([np.nan, np.inf,
                                                                        -np.inf])
        model = _resize(x, scales, mode=mode, coordinate_transformation_mode=ctm,
                        antialias=antialias, exclude_outside=exclude)
        try:
            want = _ort(model, {"x": x})
        except Exception:  # noqa: BLE001 - exclude_outside with linear, say
            continue
        _assert_same_nonfinite(_og(model, {"x": x}), want)
        compared += 1


def test_resize_long_axis_nonfinite_matches_onnxruntime():
    # over 512 values an axis gathers per tap: onnxruntime's taps there too
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 3, 600)).astype(np.float32)
    x[0, 0, 1, 100], x[0, 1, 2, 599], x[0, 1, 0, 0] = np.nan, np.inf, -np.inf
    for mode, scales in (("linear", [1, 1, 2, 0.7]), ("cubic", [1, 1, 1.5, 1.5])):
        model = _resize(x, scales, mode=mode)
        _assert_same_nonfinite(_og(model, {"x": x}), _ort(model, {"x": x}))


def test_resize_finite_input_that_overflows_keeps_inf_to_its_taps():
    # cubic overshoot of float32's largest values gives inf in column 1 of rows 3-4
    # after the H axis; the W axis must not make those whole rows NaN (a GEMM would):
    # output column 7, whose W taps stay off column 1, is finite, as in onnxruntime
    # (which interpolates W first, so it does not overflow at all here)
    x = np.ones((1, 1, 4, 4), np.float32)
    x[0, 0, 1:3, 1] = 3e38
    model = _resize(x, [1, 1, 2, 2], mode="cubic")
    got, want = _og(model, {"x": x}), _ort(model, {"x": x})
    assert not np.isfinite(got[0, 0, 3:5, 1:3]).any()  # it did overflow
    np.testing.assert_allclose(got[..., 7], want[..., 7], rtol=1e-5)
    np.testing.assert_array_equal(got[..., 7], 1.0)


def test_resize_finite_data_keeps_the_gemm_path(monkeypatch):
    calls = []
    gemm = shape_ops._resize_axis_gemm
    monkeypatch.setattr(shape_ops, "_resize_axis_gemm",
                        lambda *a: calls.append(a[1]) or gemm(*a))
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 40)).astype(np.float32)
    model = _resize(x, [1, 1, 2, 2], mode="linear")
    np.testing.assert_allclose(_og(model, {"x": x}), _ort(model, {"x": x}), atol=1e-5)
    assert calls == [2, 3]
    calls.clear()
    x[0, 1, 5, 7] = np.nan
    _assert_same_nonfinite(_og(model, {"x": x}), _ort(model, {"x": x}))


def test_resize_roi_of_the_wrong_length_is_refused():
    x = np.zeros((1, 1, 4, 4), np.float32)
    model = _model("Resize", {"x": x}, {"roi": np.zeros(7, np.float32),
                                        "scales": np.array([1, 1, 2, 2], np.float32)},
                   opset=19, mode="linear", coordinate_transformation_mode="tf_crop_and_resize")
    _ort_refuses(model, {"x": x})
    with pytest.raises(ShapeError, match=r"Resize.*roi has 7 values"):
        _og(model, {"x": x})


# --------------------------------------------------------------------------- MVN

@pytest.mark.parametrize("shape,axes", [((2, 3, 4, 5), [-5]), ((2, 3, 4, 5), [4]),
                                        ((2, 3, 4, 5), [0, 2, -2]), ((2, 3, 4, 5), [1, 1]),
                                        ((3, 4, 5), None)])
def test_mvn_refuses_bad_axes(shape, axes):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    model = _model("MeanVarianceNormalization", {"x": x}, opset=13,
                   **({} if axes is None else {"axes": axes}))
    with pytest.raises(OpAttributeError, match=r"MeanVarianceNormalization: axes"):
        _og(model, {"x": x})


def test_mvn_valid_negative_axes_still_match_onnxruntime():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    model = _model("MeanVarianceNormalization", {"x": x}, opset=13, axes=[-1, -2])
    np.testing.assert_allclose(_og(model, {"x": x}), _ort(model, {"x": x}), atol=1e-5)


# --------------------------------------------------------------------------- windows

def _window(op, size, dtype, periodic):
    return _model(op, {}, {"size": np.array(size, np.int64)}, opset=17,
                  output_datatype=dtype, periodic=periodic)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("dtype", [onnx.TensorProto.INT64, onnx.TensorProto.INT32,
                                   onnx.TensorProto.UINT8, onnx.TensorProto.INT8])
def test_integer_windows_match_onnxruntime_and_reference(op, dtype):
    for periodic in (0, 1):
        for size in range(2, 20):
            model = _window(op, size, dtype, periodic)
            got = _og(model, {})
            np.testing.assert_array_equal(got, _ort(model, {}))
            np.testing.assert_array_equal(got, _ref(model, {}))


def test_blackman_peak_is_one_in_integers():
    got = _og(_window("BlackmanWindow", 5, onnx.TensorProto.INT64, 0), {})
    np.testing.assert_array_equal(got, [0, 0, 1, 0, 0])
    got = _og(_window("BlackmanWindow", 5, onnx.TensorProto.DOUBLE, 0), {})
    assert got[2] == 1.0


@pytest.mark.parametrize("op,numpy_window", [("HannWindow", np.hanning),
                                             ("HammingWindow", np.hamming),
                                             ("BlackmanWindow", np.blackman)])
def test_symmetric_window_of_one_sample_is_one(op, numpy_window):
    # onnxruntime and the reference divide 0 by 0 (NaN); numpy, PyTorch and SciPy give 1
    for dtype in (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.INT64):
        got = _og(_window(op, 1, dtype, 0), {})
        np.testing.assert_array_equal(got, numpy_window(1))
    # periodic N = 1 is well defined by the formula: onnxruntime's value
    model = _window(op, 1, onnx.TensorProto.FLOAT, 1)
    np.testing.assert_allclose(_og(model, {}), _ort(model, {}), atol=1e-6)


# --------------------------------------------------------------------------- RoiAlign

def _roi_feeds(x, rois, batch):
    return {"x": x, "rois": np.asarray(rois, np.float32), "b": np.asarray(batch, np.int64)}


def _roi_model(feeds, **attrs):
    return _model("RoiAlign", feeds, opset=21, **attrs)


_IMAGES = np.stack([np.zeros((1, 4, 4)), np.ones((1, 4, 4))]).astype(np.float32)


@pytest.mark.parametrize("index", [-1, 2, -3])
def test_roialign_refuses_batch_indices_out_of_range(index):
    feeds = _roi_feeds(_IMAGES, [[0, 0, 3, 3]], [index])
    model = _roi_model(feeds)
    _ort_refuses(model, feeds)
    with pytest.raises(ShapeError, match=rf"RoiAlign: batch_indices value {index} at "
                                         r"index 0 is out of range \[0, 2\)"):
        _og(model, feeds)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_roialign_refuses_nonfinite_rois(bad):
    feeds = _roi_feeds(_IMAGES, [[0, 0, 3, 3], [bad, 1, 2, 3]], [0, 1])
    model = _roi_model(feeds)
    _ort_refuses(model, feeds)
    with pytest.raises(ShapeError, match=r"RoiAlign: rois must be finite.*roi 1"):
        _og(model, feeds)


def test_roialign_negative_output_size_is_refused():
    feeds = _roi_feeds(_IMAGES, [[0, 0, 3, 3]], [0])
    model = _roi_model(feeds, output_height=-1)
    _ort_refuses(model, feeds)
    with pytest.raises(OpAttributeError, match=r"RoiAlign: output_height -1"):
        _og(model, feeds)


@pytest.mark.parametrize("x,attrs", [
    (_IMAGES, {"output_height": 0}),
    (_IMAGES, {"output_width": 0, "output_height": 3}),
    (np.zeros((1, 2, 0, 7), np.float32), {}),
    (np.zeros((1, 2, 6, 0), np.float32), {"output_height": 2, "output_width": 2}),
])
def test_roialign_empty_bins_or_image_give_onnxruntime_result(x, attrs):
    """Empty bins give onnxruntime's (empty) result. Over an empty image every sample
    point lies outside it and contributes 0, so each bin averages to 0: onnxruntime's
    shape, and zeros (its values there are not defined: 0 alone, NaN in one CI run
    after other tests; onnx's reference evaluator raises IndexError)."""
    feeds = _roi_feeds(x, [[1, 1, 4, 5]], [0])
    model = _roi_model(feeds, **attrs)
    want = _ort(model, feeds)
    got = _og(model, feeds)
    assert got.shape == want.shape
    if x.size == 0:
        want = np.zeros_like(want)
    np.testing.assert_array_equal(got, want)


def test_roialign_valid_input_still_matches_onnxruntime():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 8, 9)).astype(np.float32)
    feeds = _roi_feeds(x, [[0.5, 1, 6, 7], [2, 0, 8, 5]], [1, 0])
    model = _roi_model(feeds, output_height=3, output_width=2, sampling_ratio=2)
    np.testing.assert_allclose(_og(model, feeds), _ort(model, feeds), atol=1e-5)


# --------------------------------------------------------------------------- RotaryEmbedding

def _rope(x, cos, sin, pos=None):
    feeds = {"x": x, "cos": cos, "sin": sin}
    if pos is not None:
        feeds["pos"] = np.asarray(pos, np.int64)
    return _model("RotaryEmbedding", feeds, opset=23), feeds


_X = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
_ANGLES = np.random.default_rng(1).uniform(-3, 3, (5, 2))
_COS, _SIN = np.cos(_ANGLES).astype(np.float32), np.sin(_ANGLES).astype(np.float32)


@pytest.mark.parametrize("pos", [[[0, 1, -1]], [[0, 5, 1]], [[7, 0, 0]]])
def test_rotary_refuses_position_ids_out_of_range(pos):
    model, feeds = _rope(_X, _COS, _SIN, pos)
    _ort_refuses(model, feeds)
    bad = [p for p in pos[0] if not 0 <= p < 5][0]
    with pytest.raises(ShapeError, match=rf"RotaryEmbedding: position_ids value {bad} .*"
                                         r"out of range \[0, 5\)"):
        _og(model, feeds)


@pytest.mark.parametrize("case", ["2-D cache without position_ids",
                                  "position_ids of the wrong batch"])
def test_rotary_refuses_caches_or_positions_of_the_wrong_shape(case):
    if case.startswith("2-D"):
        model, feeds = _rope(_X, _COS[:3], _SIN[:3])
    else:
        model, feeds = _rope(_X, _COS, _SIN, [[0, 1, 2], [0, 1, 2]])
    _ort_refuses(model, feeds)
    with pytest.raises(ShapeError, match=r"RotaryEmbedding: (without|position_ids)"):
        _og(model, feeds)


def test_rotary_valid_positions_still_match_onnxruntime():
    model, feeds = _rope(_X, _COS, _SIN, [[4, 0, 2]])
    np.testing.assert_allclose(_og(model, feeds), _ort(model, feeds), atol=1e-6)


# --------------------------------------------------------------------------- Col2Im

def _col2im(x, image, block, **attrs):
    return _model("Col2Im", {"x": x}, {"image": np.array(image, np.int64),
                                       "block": np.array(block, np.int64)},
                  opset=18, **attrs)


@pytest.mark.parametrize("x,image,block,attrs,error,pattern", [
    (np.arange(4, dtype=np.float32).reshape(1, 4, 1), [4, 4], [2, 2],
     {"pads": [-1, -1, -1, -1]}, OpAttributeError, r"Col2Im: pads \[-1, -1, -1, -1\]"),
    (np.ones((1, 4, 9), np.float32), [4, 4], [2, 2], {"strides": [0, 1]},
     OpAttributeError, r"Col2Im: strides \[0, 1\]"),
    (np.ones((1, 4, 9), np.float32), [4, 4], [2, 2], {"dilations": [1, 0]},
     OpAttributeError, r"Col2Im: dilations \[1, 0\]"),
    (np.ones((1, 4, 9), np.float32), [4, 4], [2, 2], {"strides": [1, 1, 1]},
     OpAttributeError, r"Col2Im: strides \[1, 1, 1\] must hold 2 values"),
    (np.ones((1, 4, 9), np.float32), [4, 4], [0, 2], {}, ShapeError,
     r"Col2Im: block_shape \[0, 2\]"),
    (np.ones((4, 9), np.float32), [4, 4], [2, 2], {}, ShapeError,
     r"Col2Im: input must be 3-D"),
    (np.ones((1, 4, 9), np.float32), [4, 4], [2, 2, 1], {}, ShapeError,
     r"Col2Im: image_shape \[4, 4\] and block_shape \[2, 2, 1\]"),
])
def test_col2im_refuses_invalid_attributes_and_shapes(x, image, block, attrs, error,
                                                       pattern):
    model = _col2im(x, image, block, **attrs)
    with pytest.raises(error, match=pattern):
        _og(model, {"x": x})


def test_col2im_valid_input_still_matches_onnxruntime():
    x = np.random.default_rng(2).standard_normal((2, 3 * 4, 18)).astype(np.float32)
    model = _col2im(x, [5, 6], [2, 2], pads=[0, 1, 1, 0], strides=[2, 1])
    np.testing.assert_allclose(_og(model, {"x": x}), _ort(model, {"x": x}), atol=1e-5)


# --------------------------------------------------------------------------- CenterCropPad

@pytest.mark.parametrize("target,axes,error,pattern", [
    ([2, -1], None, ShapeError, r"CenterCropPad: shape \[2, -1\] has a negative"),
    ([2, 5], [1, 1], OpAttributeError, r"CenterCropPad: axes \[1, 1\] names an axis"),
    ([2, 5], [1, -1], OpAttributeError, r"CenterCropPad: axes \[1, -1\] names an axis"),
])
def test_center_crop_pad_refuses_negative_sizes_and_repeated_axes(target, axes, error,
                                                                  pattern):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    model = _model("CenterCropPad", {"x": x}, {"s": np.array(target, np.int64)}, opset=18,
                   **({} if axes is None else {"axes": axes}))
    with pytest.raises(error, match=pattern):
        _og(model, {"x": x})


# --------------------------------------------------------------------------- GridSample

def _grid_sample(x, grid, **attrs):
    return _model("GridSample", {"x": x, "grid": grid}, opset=22, **attrs)


_ROW = np.array([0, 1, 2, 3], np.float32).reshape(1, 1, 1, 4)


@pytest.mark.parametrize("gx", [1e19, 1e30, np.inf, -1e19, -np.inf])
def test_grid_sample_cubic_border_far_outside_reads_the_border(gx):
    # the ONNX reference folds the coordinate onto the border: 3 on the right, 0 on
    # the left; onnxruntime reads garbage once the index overflows int64 (-0.094)
    grid = np.array([gx, 0], np.float32).reshape(1, 1, 1, 2)
    model = _grid_sample(_ROW, grid, mode="cubic", padding_mode="border")
    got = _og(model, {"x": _ROW, "grid": grid})
    want = 3.0 if gx > 0 else 0.0
    np.testing.assert_array_equal(got.ravel(), [want])
    if np.isfinite(gx):
        np.testing.assert_array_equal(got, _ref(model, {"x": _ROW, "grid": grid}))


@pytest.mark.parametrize("gx", [1e19, -1e19, np.inf])
def test_grid_sample_cubic_zeros_far_outside_is_zero(gx):
    grid = np.array([gx, 0], np.float32).reshape(1, 1, 1, 2)
    model = _grid_sample(_ROW, grid, mode="cubic", padding_mode="zeros")
    np.testing.assert_array_equal(_og(model, {"x": _ROW, "grid": grid}).ravel(), [0.0])


def test_grid_sample_cubic_reflection_far_outside_folds_exactly():
    # reflection repeats every 8 pixels here (align_corners=0, width 4); the float32
    # pixel coordinate of grid x 1e18 is a multiple of 8 past -0.5 + 0.5, i.e. pixel 0.0,
    # where grid x -0.75 lands too. Both oracles lose the position in rounding
    # (onnxruntime 3.0, the reference 3.19); inf has no position: NaN (the reference
    # raises, onnxruntime reads garbage)
    def sample(gx):
        grid = np.array([gx, 0], np.float32).reshape(1, 1, 1, 2)
        model = _grid_sample(_ROW, grid, mode="cubic", padding_mode="reflection")
        return _og(model, {"x": _ROW, "grid": grid}).ravel()[0]

    assert sample(1e18) == sample(-0.75) == 0.0
    assert np.isnan(sample(np.inf))


def test_grid_sample_cubic_moderately_outside_still_matches_onnxruntime():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    grid = rng.uniform(-40, 40, (1, 3, 7, 2)).astype(np.float32)
    for padding in ("zeros", "border", "reflection"):
        model = _grid_sample(x, grid, mode="cubic", padding_mode=padding)
        feeds = {"x": x, "grid": grid}
        np.testing.assert_allclose(_og(model, feeds), _ort(model, feeds), atol=1e-4)


def test_grid_sample_empty_image_is_refused():
    x, grid = np.zeros((1, 1, 0, 4), np.float32), np.zeros((1, 2, 3, 2), np.float32)
    model = _grid_sample(x, grid)
    _ort_refuses(model, {"x": x, "grid": grid})
    with pytest.raises(ShapeError, match=r"GridSample: input X \(1, 1, 0, 4\) has an empty"):
        _og(model, {"x": x, "grid": grid})


# --------------------------------------------------------------------------- Multinomial

def _multinomial(logits, n=400):
    model = _model("Multinomial", {"x": logits}, opset=21, sample_size=n, dtype=7, seed=3.0)
    return model, _og(model, {"x": logits})


def test_multinomial_draws_a_positive_infinite_logit_every_time():
    logits = np.array([[0, np.inf, 0], [5, 1e30, 2], [np.inf, 0, np.inf]], np.float32)
    _, draws = _multinomial(logits)
    assert (draws[0] == 1).all()
    assert (draws[1] == 1).all()
    assert set(np.unique(draws[2])) == {0, 2}  # two +inf share the draws


@pytest.mark.parametrize("row,pattern", [([0, np.nan, 0], r"row 1 .* NaN"),
                                         ([-np.inf] * 3, r"row 1 .* all -inf")])
def test_multinomial_refuses_rows_without_a_distribution(row, pattern):
    logits = np.array([[0, 1, 2], row], np.float32)
    with pytest.raises(ShapeError, match=rf"Multinomial: {pattern}"):
        _multinomial(logits)


def test_multinomial_finite_rows_draw_as_before():
    logits = np.log(np.array([[0.2, 0.5, 0.3], [0.9, 0.05, 0.05]], np.float32))
    _, draws = _multinomial(logits, n=4000)
    freq = np.stack([np.bincount(d, minlength=3) / d.size for d in draws])
    np.testing.assert_allclose(freq, np.exp(logits), atol=0.05)


# --------------------------------------------------------------------------- NMS

@pytest.mark.parametrize("iou", [1.5, -0.5, np.nan])
def test_nms_refuses_iou_threshold_outside_zero_one(iou):
    boxes = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3], [0, 2.5, 1, 3.5]]],
                     np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)
    model = _model("NonMaxSuppression", {"boxes": boxes, "scores": scores},
                   {"max": np.array([10], np.int64), "iou": np.array([iou], np.float32)},
                   opset=11)
    _ort_refuses(model, {"boxes": boxes, "scores": scores})
    with pytest.raises(ShapeError, match=r"NonMaxSuppression: iou_threshold must be in "
                                         r"\[0, 1\]"):
        _og(model, {"boxes": boxes, "scores": scores})


@pytest.mark.parametrize("iou", [0.0, 1.0])
def test_nms_threshold_at_the_range_ends_matches_onnxruntime(iou):
    boxes = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3], [0, 0, 1, 1]]],
                     np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32)
    model = _model("NonMaxSuppression", {"boxes": boxes, "scores": scores},
                   {"max": np.array([10], np.int64), "iou": np.array([iou], np.float32)},
                   opset=11)
    feeds = {"boxes": boxes, "scores": scores}
    np.testing.assert_array_equal(_og(model, feeds), _ort(model, feeds))


# --------------------------------------------------------------------------- Upsample

@pytest.mark.parametrize("bad", [np.nan, np.inf, 0.0, -2.0])
def test_upsample_refuses_scales_that_are_not_finite_and_positive(bad):
    # (an opset-9 ONNX model is upgraded to Resize by the converter first; this is the
    # kernel onegraph graphs run)
    op = get_op("Upsample")
    x = np.ones((1, 1, 2, 2), np.float32)
    scales = np.array([1, 1, bad, 1], np.float32)
    with pytest.raises(ShapeError, match=r"Upsample: scales must be finite and greater"):
        op.kernel([x, scales], {"mode": "nearest"}, KernelContext())

"""ONNX MaxRoiPool (`ops/pool.py`) against onnxruntime 1.32's CPU kernel.

Oracle: onnxruntime's CPUExecutionProvider on one-node models, imported with
onegraph.convert.from_onnx and run in onegraph.Session. onnxruntime only has the
opset-1 float kernel (no MaxRoiPool-22 kernel; float16 runs through inserted casts to
float32), so the models are at opsets 8-21. The op only takes maxima, so outputs must
match bit for bit, NaN for NaN. Inputs onnxruntime aborts on, refuses, or turns into
undefined C conversions are refused with onegraph's named errors.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import OneGraphError, OpAttributeError, ShapeError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402
from onegraph.ops import pool as pool_ops  # noqa: E402

from .single_node import ort_session  # noqa: E402

OP = "MaxRoiPool"
LOWEST = np.finfo(np.float32).min
F32 = np.dtype(np.float32)


def _model(dtype=np.float32, opset=13, shaped=False, **attrs):
    """A one-node MaxRoiPool model with graph inputs x and r of `dtype` (of unknown
    shapes, or with `shaped` of ranks 4 and 2, as export needs)."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    xs, rs, ys = (["n", "c", "h", "w"], ["k", 5], ["k", "c", "ph", "pw"]) if shaped \
        else (None, None, None)
    node = helper.make_node(OP, ["x", "r"], ["y"], name="roi_pool", **attrs)
    graph = helper.make_graph(
        [node], "max_roi_pool",
        [helper.make_tensor_value_info("x", elem, xs),
         helper.make_tensor_value_info("r", elem, rs)],
        [helper.make_tensor_value_info("y", elem, ys)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _ort(x, rois, **attrs):
    """onnxruntime's Y for the one-node model."""
    return ort_session(_model(x.dtype, **attrs)).run(None, {"x": x, "r": rois})[0]


def _og(x, rois, opset=13, **attrs):
    """onegraph's Y: the one-node model imported by from_onnx, run in a Session."""
    model = from_onnx(_model(x.dtype, opset=opset, **attrs))
    return onegraph.Session(model).run(["y"], {"x": x, "r": rois})[0]


def _kernel(x, rois, pooled, scale=1.0):
    """The kernel called directly."""
    attrs = REGISTRY.get(OP, "").resolve_attrs({"pooled_shape": list(pooled),
                                                "spatial_scale": scale})
    return REGISTRY.get(OP, "").kernel([x, rois], attrs, None)[0]


def _random_case(rng, nans=False, infs=False):
    """(x, rois, pooled_shape, spatial_scale): ROIs with half-integer corners (C's
    round-half-away), reversed ones, ones partly or wholly outside the image, and
    fractional batch indices in (-1, N)."""
    n, c = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    h, w = int(rng.integers(1, 13)), int(rng.integers(1, 13))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    if nans:
        x[rng.random(x.shape) < 0.2] = np.nan
    if infs:
        x[rng.random(x.shape) < 0.3] = -np.inf
        x[rng.random(x.shape) < 0.05] = np.inf
    r = int(rng.integers(0, 9))
    corners = np.round(rng.uniform(-6, 20, (r, 4)) * 2) / 2
    batch = rng.uniform(-0.99, n - 0.01, (r, 1))
    rois = np.concatenate([batch, corners], axis=1).astype(np.float32)
    pooled = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
    scale = float(np.float32(rng.choice([1.0, 0.5, 0.25, 1.5, 0.0625, 0.3])))
    return x, rois, pooled, scale


@pytest.mark.parametrize("seed", range(60))
def test_random_cases_match_onnxruntime(seed):
    rng = np.random.default_rng(seed)
    x, rois, pooled, scale = _random_case(rng, nans=seed % 4 == 1, infs=seed % 4 == 2)
    want = _ort(x, rois, pooled_shape=list(pooled), spatial_scale=scale)
    got = _og(x, rois, pooled_shape=list(pooled), spatial_scale=scale)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(10))
def test_float16_matches_onnxruntime(seed):
    """onnxruntime runs float16 through float32 (inserted casts)."""
    rng = np.random.default_rng(100 + seed)
    x, rois, pooled, scale = _random_case(rng, infs=seed % 2 == 1)
    x, rois = x.astype(np.float16), rois.astype(np.float16)
    want = _ort(x, rois, pooled_shape=list(pooled), spatial_scale=scale)
    got = _og(x, rois, pooled_shape=list(pooled), spatial_scale=scale)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


def test_float64_computes_as_float32_does():
    """No onnxruntime kernel for double: the same bins, in float64."""
    rng = np.random.default_rng(7)
    x, rois, pooled, scale = _random_case(rng)
    got = _og(x.astype(np.float64), rois.astype(np.float64), pooled_shape=list(pooled),
              spatial_scale=scale)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, _kernel(x, rois, pooled, scale).astype(np.float64))


def test_larger_image_many_rois():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 16, 38, 50)).astype(np.float32)
    k = 40
    corners = rng.uniform(-20, 420, (k, 4)).astype(np.float32)
    rois = np.concatenate([rng.integers(0, 2, (k, 1)).astype(np.float32), corners], 1)
    attrs = dict(pooled_shape=[7, 7], spatial_scale=0.125)
    np.testing.assert_array_equal(_og(x, rois, **attrs), _ort(x, rois, **attrs))


def test_gathering_in_small_chunks(monkeypatch):
    """ROIs whose bins have one size are gathered a bounded number at a time."""
    monkeypatch.setattr(pool_ops, "_ROI_GATHER_ELEMENTS", 16)
    for seed in range(5):
        test_random_cases_match_onnxruntime(seed)
    test_larger_image_many_rois()


@pytest.mark.parametrize("opset", [8, 10, 13, 21])
def test_opsets_onnxruntime_runs(opset):
    rng = np.random.default_rng(opset)
    x, rois, pooled, scale = _random_case(rng)
    model = _model(opset=opset, pooled_shape=list(pooled), spatial_scale=scale)
    want = ort_session(model).run(None, {"x": x, "r": rois})[0]
    np.testing.assert_array_equal(
        _og(x, rois, opset=opset, pooled_shape=list(pooled), spatial_scale=scale), want)


# ---------------------------------------------------------------- hand-checked cases

X66 = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)


@pytest.mark.parametrize("roi, pooled, want", [
    ([0, 0, 0, 5, 5], (2, 2), [14, 17, 32, 35]),        # bins rows/cols [0,3) and [3,6)
    ([0, 0.5, 0.5, 2.5, 2.5], (1, 1), [21]),            # .5 rounds away: rows/cols 1..3
    ([0, 1.5, 1.5, 1.5, 1.5], (1, 1), [14]),            # 1.5 -> 2: the single pixel (2, 2)
    ([0, -0.5, -0.5, -0.5, -0.5], (1, 1), [0]),         # -0.5 -> -1: clipped away, 0
    ([0, 4, 4, 1, 1], (2, 2), [28, 28, 28, 28]),        # reversed: 1x1 at (4, 4)
    ([0, 7, 7, 9, 9], (2, 2), [0, 0, 0, 0]),            # wholly outside: empty bins
    ([0.9, 0, 0, 1, 1], (1, 1), [7]),                   # batch index truncated
    ([-0.9, 0, 0, 1, 1], (1, 1), [7]),                  # toward zero
    ([0, 0, 0, 1, 1], (5, 3), [0, 1, 1, 0, 1, 1, 6, 7, 7, 6, 7, 7, 6, 7, 7]),
])
def test_hand_checked(roi, pooled, want):
    rois = np.array([roi], np.float32)
    got = _og(X66, rois, pooled_shape=list(pooled))
    np.testing.assert_array_equal(got.ravel(), np.array(want, np.float32))
    np.testing.assert_array_equal(got, _ort(X66, rois, pooled_shape=list(pooled)))


def test_partly_outside_and_negative_rois():
    rois = np.array([[0, 4, 4, 9, 9], [0, -4, -4, 1, 1]], np.float32)
    got = _og(X66, rois, pooled_shape=[3, 3])
    np.testing.assert_array_equal(got[0].ravel(), [35, 0, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(got[1].ravel(), [0, 0, 0, 0, 0, 0, 0, 0, 7])


def test_spatial_scale_halves_the_rois():
    got = _og(X66, np.array([[0, 3, 3, 9, 9]], np.float32), pooled_shape=[2, 2],
              spatial_scale=0.5)
    np.testing.assert_array_equal(got.ravel(), [21, 23, 33, 35])


def test_nan_kept_only_when_last_in_its_bin():
    """std::max(v, y) keeps a NaN until the next value; a bin's result is the maximum
    of what follows its last NaN in row-major order."""
    rois = np.array([[0, 0, 0, 5, 5]], np.float32)
    for pos, first in (((0, 0), 14), ((1, 1), 14), ((2, 1), 14), ((2, 2), np.nan)):
        x = X66.copy()
        x[0, 0][pos] = np.nan
        got = _og(x, rois, pooled_shape=[2, 2])
        np.testing.assert_array_equal(got.ravel(), [first, 17, 32, 35])
    x = X66.copy()
    x[0, 0, 1, 2] = np.nan          # followed in its bin by (2, 0) 12, (2, 1) 13, (2, 2) 14
    x[0, 0, 2, 2] = -5
    np.testing.assert_array_equal(_og(x, rois, pooled_shape=[2, 2])[0, 0, 0, 0], 13)


def test_floor_is_float32_lowest_unless_after_a_nan():
    x = np.full((1, 1, 6, 6), -np.inf, np.float32)
    rois = np.array([[0, 0, 0, 5, 5]], np.float32)
    np.testing.assert_array_equal(_og(x, rois, pooled_shape=[2, 2]).ravel(), [LOWEST] * 4)
    x[0, 0, 0, 0] = np.nan          # the next value (-inf) replaces the NaN, no floor
    np.testing.assert_array_equal(_og(x, rois, pooled_shape=[2, 2]).ravel(),
                                  [-np.inf, LOWEST, LOWEST, LOWEST])
    np.testing.assert_array_equal(_og(x, rois, pooled_shape=[2, 2]),
                                  _ort(x, rois, pooled_shape=[2, 2]))


@pytest.mark.parametrize("xshape, nrois, want", [
    ((1, 1, 6, 6), 0, (0, 1, 2, 2)),     # no ROIs
    ((0, 1, 6, 6), 0, (0, 1, 2, 2)),     # empty batch, no ROIs
    ((1, 0, 6, 6), 1, (1, 0, 2, 2)),     # no channels
    ((1, 1, 0, 6), 1, (1, 1, 2, 2)),     # no rows: every bin empty, zeros
    ((1, 2, 6, 0), 2, (2, 2, 2, 2)),
])
def test_empty_shapes(xshape, nrois, want):
    x = np.ones(xshape, np.float32)
    rois = np.tile(np.array([[0, 0, 0, 1, 1]], np.float32), (nrois, 1))
    got = _og(x, rois, pooled_shape=[2, 2])
    assert got.shape == want and not got.any()
    np.testing.assert_array_equal(got, _ort(x, rois, pooled_shape=[2, 2]))


# ---------------------------------------------------------------- inference

def test_infer():
    op = REGISTRY.get(OP, "")
    attrs = op.resolve_attrs({"pooled_shape": [3, 4]})
    assert attrs["spatial_scale"] == 1.0
    (info,) = op.infer(attrs, [TensorInfo(F32, (2, 5, 9, 9)), TensorInfo(F32, (7, 5))])
    assert info.dtype == F32 and info.shape == (7, 5, 3, 4)
    (info,) = op.infer(attrs, [TensorInfo(F32, None), TensorInfo(F32, (None, 5))])
    assert info.shape == (None, None, 3, 4)
    with pytest.raises(ShapeError, match="MaxRoiPool: X must be 4-D"):
        op.infer(attrs, [TensorInfo(F32, (5, 9, 9)), TensorInfo(F32, (7, 5))])
    with pytest.raises(ShapeError, match=r"MaxRoiPool: rois must be \(num_rois, 5\)"):
        op.infer(attrs, [TensorInfo(F32, (1, 5, 9, 9)), TensorInfo(F32, (7, 4))])


def test_imported_model_declares_the_output_shape():
    model = from_onnx(_model(pooled_shape=[2, 3]))
    session = onegraph.Session(model)
    y = session.run(["y"], {"x": X66, "r": np.array([[0, 0, 0, 5, 5]] * 4, np.float32)})[0]
    assert y.shape == (4, 1, 2, 3)


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("attrs, match", [
    ({"pooled_shape": [2]}, "pooled_shape must hold 2 values"),
    ({"pooled_shape": [2, 2, 2]}, "pooled_shape must hold 2 values"),
    ({"pooled_shape": [0, 2]}, "pooled_shape values must be positive"),
    ({"pooled_shape": [2, -1]}, "pooled_shape values must be positive"),
    ({"pooled_shape": [2, 2], "spatial_scale": 0.0}, "spatial_scale must be positive"),
    ({"pooled_shape": [2, 2], "spatial_scale": -1.0}, "spatial_scale must be positive"),
    ({"pooled_shape": [2, 2], "spatial_scale": float("nan")},
     "spatial_scale must be positive"),
    ({}, "missing required attribute 'pooled_shape'"),
])
def test_bad_attributes(attrs, match):
    """onnxruntime refuses all of these when it creates the session."""
    with pytest.raises(OpAttributeError, match=match):
        REGISTRY.get(OP, "").resolve_attrs(attrs)
    with pytest.raises(OneGraphError, match=match):
        onegraph.Session(from_onnx(_model(**attrs))).run(
            ["y"], {"x": X66, "r": np.array([[0, 0, 0, 1, 1]], np.float32)})
    if attrs:
        with pytest.raises(Exception):
            _ort(X66, np.array([[0, 0, 0, 1, 1]], np.float32), **attrs)


@pytest.mark.parametrize("roi, match", [
    ([1, 0, 0, 1, 1], r"batch index 1\.0, outside \[0, 1\)"),
    ([-1, 0, 0, 1, 1], r"batch index -1\.0, outside"),
])
def test_batch_index_out_of_range(roi, match):
    rois = np.array([roi], np.float32)
    with pytest.raises(ShapeError, match=match):
        _og(X66, rois, pooled_shape=[2, 2])
    with pytest.raises(Exception, match="roi_batch_id"):
        _ort(X66, rois, pooled_shape=[2, 2])


def test_roi_on_an_empty_batch():
    with pytest.raises(ShapeError, match=r"outside \[0, 0\)"):
        _og(np.zeros((0, 1, 6, 6), np.float32), np.array([[0, 0, 0, 1, 1]], np.float32),
            pooled_shape=[2, 2])


@pytest.mark.parametrize("roi, scale, match", [
    ([np.nan, 0, 0, 1, 1], 1.0, "batch index nan, outside"),
    ([0, np.nan, 0, 1, 1], 1.0, "must be finite"),
    ([0, np.inf, 0, 1, 1], 1.0, "must be finite"),
    ([0, 10, 1, 20, 2], 1e38, "is not finite"),
    ([0, 1, 1, 2, 2], 1e30, "outside the 32-bit range"),
    ([0, 0, 0, 3e9, 1], 1.0, "outside the 32-bit range"),
    ([0, -2e9, 0, 2e9, 1], 1.0, "outside the 32-bit range"),
])
def test_undefined_coordinates_are_refused(roi, scale, match):
    """onnxruntime casts these to int (undefined behaviour; it returns garbage)."""
    with pytest.raises(ShapeError, match="MaxRoiPool: roi 0 .*" + match):
        _kernel(X66, np.array([roi], np.float32), (2, 2), scale)


@pytest.mark.parametrize("xshape, rshape", [
    ((1, 6, 6), (1, 5)),          # onnxruntime aborts the process
    ((1, 1, 1, 6, 6), (1, 5)),
    ((1, 1, 6, 6), (5,)),         # onnxruntime aborts the process
    ((1, 1, 6, 6), (1, 4)),
    ((1, 1, 6, 6), (1, 1, 5)),
])
def test_bad_shapes(xshape, rshape):
    with pytest.raises(ShapeError, match="MaxRoiPool: (X must be 4-D|rois must be)"):
        _kernel(np.zeros(xshape, np.float32), np.zeros(rshape, np.float32), (2, 2))
    with pytest.raises(OneGraphError, match="MaxRoiPool"):
        _og(np.zeros(xshape, np.float32), np.zeros(rshape, np.float32), pooled_shape=[2, 2])


# ---------------------------------------------------------------- export

def test_to_onnx_round_trip_runs_in_onnxruntime():
    rng = np.random.default_rng(3)
    x, rois, pooled, scale = _random_case(rng)
    model = from_onnx(_model(shaped=True, pooled_shape=list(pooled), spatial_scale=scale))
    proto = to_onnx(model, opset=21)       # onnxruntime has no MaxRoiPool-22 kernel
    assert [n.op_type for n in proto.graph.node] == [OP]
    want = ort_session(_model(pooled_shape=list(pooled), spatial_scale=scale)).run(
        None, {"x": x, "r": rois})[0]
    got = ort_session(proto).run(None, {"x": x, "r": rois})[0]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(onegraph.Session(from_onnx(proto)).run(
        ["y"], {"x": x, "r": rois})[0], want)


def test_to_onnx_at_the_model_opset_and_22():
    """since_version 22 (float16/bfloat16 added); version 1 is the same op."""
    assert REGISTRY.get(OP, "").since_version == 22
    model = from_onnx(_model(shaped=True, pooled_shape=[2, 2]))
    for opset in (None, 22):
        proto = to_onnx(model, opset=opset)
        onnx.checker.check_model(proto, full_check=True)
        assert [n.op_type for n in proto.graph.node] == [OP]


# ---------------------------------------------------------------- the test catches errors

def test_random_cases_catch_a_wrong_kernel(monkeypatch):
    """With numpy's round-half-to-even in place of C's round, the random cases fail."""
    monkeypatch.setattr(pool_ops, "_round_half_away", lambda v: np.round(v))
    failures = 0
    for seed in range(20):
        try:
            test_random_cases_match_onnxruntime(seed)
        except AssertionError:
            failures += 1
    assert failures > 0

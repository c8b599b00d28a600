"""onnxruntime's com.microsoft MaxpoolWithMask (`ops/ms_maxpool_mask.py`) against
onnxruntime 1.32's CPU kernel.

Oracle: onnxruntime's CPUExecutionProvider (graph optimizations off) on one-node models
imported with onegraph.convert.from_onnx and run in onegraph.Session, seeded random
inputs. The op only takes a max (no arithmetic), so outputs must match bit for bit,
NaN for NaN. The inputs onegraph refuses on purpose where onnxruntime runs (a mask it
would read misaligned, a 2-D/3-D mask off at its first position) are shown to run in
onnxruntime, and (misaligned masks) to differ from the per-plane reading of the mask.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import (OpAttributeError, ResourceExhaustedError,  # noqa: E402
                             ShapeError, UnsupportedOpError)
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from .single_node import node_inputs, ort_session  # noqa: E402

MS = "com.microsoft"
OP = "MaxpoolWithMask"
LOWEST = np.finfo(np.float32).min
F32, I32 = np.dtype(np.float32), np.dtype(np.int32)


def _opdef():
    """The registered MaxpoolWithMask definition."""
    return REGISTRY.get(OP, MS)


def _model(x, m, **attrs):
    """A one-node MaxpoolWithMask model with graph inputs x (float32) and m (int32)."""
    names, graph_inputs, _ = node_inputs([("x", x), ("m", m)])
    node = helper.make_node(OP, names, ["y"], domain=MS, **attrs)
    graph = helper.make_graph([node], OP, graph_inputs,
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT,
                                                             None)])
    return helper.make_model(graph, ir_version=9, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])


def _ort(x, m, **attrs):
    """onnxruntime's Y for the one-node model (raises whatever onnxruntime raises)."""
    return ort_session(_model(x, m, **attrs), optimize=False).run(
        None, {"x": x, "m": m})[0]


def _og(model, feeds):
    """onegraph's Y: the model imported by from_onnx, run in a Session."""
    return onegraph.Session(from_onnx(model)).run(["y"], feeds)[0]


def _check(x, m, **attrs):
    """onegraph's Y (model imported from ONNX, run in a Session) equals onnxruntime's
    bit for bit, and inference gives its dtype and shape. Returns Y."""
    want = _ort(x, m, **attrs)
    got = _og(_model(x, m, **attrs), {"x": x, "m": m})
    assert got.dtype == want.dtype == F32
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # NaN matches NaN
    op = _opdef()
    (info,) = op.infer(op.resolve_attrs(attrs), [TensorInfo(F32, x.shape),
                                                 TensorInfo(I32, m.shape)])
    assert info.dtype == F32 and tuple(info.shape) == got.shape
    return got


def _kernel(x, m, **attrs):
    """onegraph's kernel called directly (attributes resolved and checked first)."""
    op = _opdef()
    return op.kernel([x, m], op.resolve_attrs(attrs), None)[0]


def _x(*shape, seed=0):
    """A seeded standard-normal float32 array of `shape`."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _ones(*shape):
    """An all-on int32 mask of `shape`."""
    return np.ones(shape, np.int32)


# --------------------------------------------------------------------------------------
# Random cases against onnxruntime
# --------------------------------------------------------------------------------------


def _random_case(rng):
    """(x, m, attrs): 1-3 spatial dims, random kernel/strides/pads/auto_pad, a mask in
    one of the forms onegraph accepts, of random density (all off included)."""
    nsp = int(rng.integers(1, 4))
    sp = tuple(int(v) for v in rng.integers(1, 8 if nsp < 3 else 6, nsp))
    n, c = int(rng.integers(0, 3)), int(rng.integers(1, 4))
    kernel = [int(v) for v in rng.integers(1, 5, nsp)]
    attrs = {"kernel_shape": kernel}
    if rng.random() < 0.7:
        attrs["strides"] = [int(v) for v in rng.integers(1, 5, nsp)]
    mode = ["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER", None][int(rng.integers(0, 5))]
    if mode is not None:
        attrs["auto_pad"] = mode
    if rng.random() < 0.6:
        attrs["pads"] = [int(rng.integers(0, k)) for k in kernel + kernel]
    size = int(np.prod(sp))
    form = int(rng.integers(0, 3))
    if form == 0 or n * c == 0:
        planes = (1, 1)                       # one plane shared by every image plane
    elif form == 1 and size == 1:
        planes = (n, c)                       # a full mask of 1-pixel planes
    else:
        # M's N * C = total, X's n * c planes all read inside the first plane's worth
        # of elements: (min(n c, total) - 1) * size < total
        total = max(2, (n * c - 1) * size + 1)
        planes = (1, total) if rng.random() < 0.5 else (total, 1)
    x = rng.standard_normal((n, c) + sp).astype(np.float32)
    if rng.random() < 0.3:
        x[rng.random(x.shape) < 0.2] = rng.choice([np.nan, np.inf, -np.inf])
    density = [0.0, 0.3, 0.7, 1.0][int(rng.integers(0, 4))]
    m = (rng.random(planes + sp) < density).astype(np.int32)
    m *= np.int32(rng.choice([1, 7, -3]))
    if nsp > 1 and m.size:
        # onegraph refuses a 2-D/3-D mask off at the first position (onnxruntime
        # ignores that entry): the all-off windows come from the other entries
        m.reshape(m.shape[0], m.shape[1], -1)[:, :, 0] = 1
    return x, m, attrs


@pytest.mark.parametrize("seed", range(12))
def test_random_against_onnxruntime(seed):
    """Random shapes, windows and masks: Y bit for bit, or both refuse."""
    rng = np.random.default_rng(seed)
    lowest = 0
    for _ in range(25):
        x, m, attrs = _random_case(rng)
        try:
            want = _ort(x, m, **attrs)
        except Exception:
            # onnxruntime refuses it (a window too long): so must onegraph
            with pytest.raises(ShapeError):
                _kernel(x, m, **attrs)
            continue
        got = _check(x, m, **attrs)
        assert got.shape == want.shape
        lowest += int((got == LOWEST).sum())
    assert lowest > 0 or seed % 3  # windows reading nothing were exercised


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_unmasked_is_maxpool(nsp):
    """With every mask entry on (and no NaN) the op is MaxPool without dilation."""
    x = _x(2, 3, *([6, 5, 4][:nsp]), seed=nsp)
    attrs = dict(kernel_shape=[3, 2, 2][:nsp], strides=[2, 1, 2][:nsp],
                 pads=([1, 0, 1][:nsp]) * 2)
    got = _check(x, _ones(1, 1, *x.shape[2:]), **attrs)
    want = ort_session(helper.make_model(helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y"], **attrs)], "mp",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)]),
        ir_version=9, opset_imports=[helper.make_opsetid("", 17)]), optimize=False).run(
            None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------------------
# The semantics, case by case (values worked out by hand, and onnxruntime agrees)
# --------------------------------------------------------------------------------------


def test_first_off_entry_ends_the_1d_scan():
    """1-D: the first off entry ends the window's scan."""
    x = np.array([[[1, 2, 3, 4, 5, 6, 7, 8]]], np.float32)
    m = _ones(1, 1, 8)
    m[0, 0, 3] = 0
    y = _check(x, m, kernel_shape=[3])
    # windows [1 2 3] [2 3 |4] [3 |4 5] [|4 5 6] [5 6 7] [6 7 8]
    np.testing.assert_array_equal(y[0, 0], [3, 3, 3, LOWEST, 7, 8])
    rev = _check(x[:, :, ::-1].copy(), m, kernel_shape=[3])
    np.testing.assert_array_equal(rev[0, 0], [8, 7, 6, LOWEST, 4, 3])


def test_1d_mask_off_at_index_0_is_read():
    """1-D: an off entry at index 0 counts (no exemption there)."""
    x = np.array([[[5, 1, 2, 7]]], np.float32)
    m = np.array([[[0, 1, 1, 1]]], np.int32)
    np.testing.assert_array_equal(_check(x, m, kernel_shape=[2])[0, 0], [LOWEST, 2, 7])


def test_2d_off_entry_ends_only_its_row():
    """2-D: an off entry ends its window row; the next row starts afresh."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    m = _ones(1, 1, 4, 4)
    m[0, 0, 1, 1] = 0
    m[0, 0, 3, 2] = 0
    y = _check(x, m, kernel_shape=[2, 2])
    # window (0, 0): row 0 reads 0 1, row 1 reads 4 then stops at (1, 1): max 4;
    # (0, 1): row 1 starts at (1, 1), so only row 0's 1 2: max 2; (1, 0): 4, then
    # row 2's 8 9: max 9; (2, 2): row 3 starts at (3, 2): row 2's 10 11 only
    np.testing.assert_array_equal(y[0, 0], [[4, 2, 7], [9, 10, 11], [13, 13, 11]])


def test_3d_off_entry_ends_only_its_line():
    """3-D: an off entry ends its line along the last dim only."""
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 2, 2, 2)
    m = _ones(1, 1, 2, 2, 2)
    m[0, 0, 1, 1, 0] = 0  # the line (1, 1, :) reads nothing
    np.testing.assert_array_equal(_check(x, m, kernel_shape=[2, 2, 2]).ravel(), [5])
    m[0, 0, :, :, 0] = 0
    m[0, 0, 0, 0, 0] = 1
    np.testing.assert_array_equal(_check(x, m, kernel_shape=[2, 2, 2]).ravel(), [1])


def test_windows_reading_nothing_give_lowest():
    """A window that reads nothing gives float32's lowest."""
    x = np.full((1, 2, 3, 4), 9, np.float32)
    m = np.zeros((1, 1, 3, 4), np.int32)
    m[0, 0, 0, 0] = 1
    y = _check(x, m, kernel_shape=[2, 2], pads=[1, 1, 1, 1], strides=[2, 2])
    # only window (0, 0) holds the one "on" entry, (0, 0); every other line of every
    # window starts with an "off" entry or lies in the padding
    want = np.full((2, 3), LOWEST, np.float32)
    want[0, 0] = 9
    for c in range(2):
        np.testing.assert_array_equal(y[0, c], want)
    # an all-off 1-D mask reads nothing at all
    y = _check(_x(2, 3, 5), np.zeros((1, 1, 5), np.int32), kernel_shape=[2])
    assert (y == LOWEST).all()


def test_nan_never_wins_and_minus_inf_is_lowest():
    """NaN is skipped; a window of -inf gives lowest."""
    x = np.array([[[np.nan, 1, -np.inf, -np.inf, np.inf, np.nan]]], np.float32)
    y = _check(x, _ones(1, 1, 6), kernel_shape=[2])
    np.testing.assert_array_equal(y[0, 0], [1, 1, LOWEST, np.inf, np.inf])
    np.testing.assert_array_equal(_check(x, _ones(1, 1, 6), kernel_shape=[1])[0, 0],
                                  [LOWEST, 1, LOWEST, LOWEST, np.inf, LOWEST])


def test_any_nonzero_entry_is_on():
    """Every nonzero mask value is on, whatever its sign or size."""
    x = _x(1, 2, 5, 5, seed=3)
    m = np.random.default_rng(3).integers(-3, 4, (1, 1, 5, 5)).astype(np.int32)
    m[0, 0, 0, 0] = 2
    y = _check(x, m, kernel_shape=[3, 2])
    np.testing.assert_array_equal(y, _kernel(x, (m != 0).astype(np.int32),
                                             kernel_shape=[3, 2]))


@pytest.mark.parametrize("mshape", [(1, 1), (1, 5), (5, 1), (2, 3)])
def test_mask_plane_broadcast_forms(mshape):
    """M's N and C need not be X's: one plane is shared, a 1-pixel plane is per plane
    (modulo M's plane count), and a short X reads its planes from M's first ones."""
    x = _x(2, 3, 1, seed=1)
    m = np.random.default_rng(1).integers(0, 2, mshape + (1,)).astype(np.int32)
    _check(x, m, kernel_shape=[1])
    x2 = _x(1, 2, 3, seed=2)
    m2 = np.random.default_rng(2).integers(0, 2, (1, 4, 3)).astype(np.int32)
    _check(x2, m2, kernel_shape=[2])  # planes read at elements 0 and 3: aligned


@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("n,k,s", [(10, 1, 6), (10, 2, 7), (10, 3, 1), (10, 4, 1),
                                   (10, 3, 2), (7, 2, 5)])
def test_same_padding(mode, n, k, s):
    """onnxruntime's SAME_* head padding, negative when the stride passes the kernel
    (the windows move into the input); pads given with auto_pad are ignored."""
    x = _x(1, 2, n, n, seed=n + k + s)
    m = _ones(1, 1, n, n)
    m[0, 0, 1:, 2] = 0
    _check(x, m, kernel_shape=[k, k], strides=[s, s], auto_pad=mode)
    _check(x, m, kernel_shape=[k, 1], strides=[s, 1], auto_pad=mode,
           pads=[k - 1, 0, 0, 0])


def test_valid_ignores_pads():
    """auto_pad VALID ignores pads."""
    x, m = _x(1, 1, 6, seed=4), _ones(1, 1, 6)
    np.testing.assert_array_equal(_check(x, m, kernel_shape=[3], auto_pad="VALID",
                                         pads=[2, 2]),
                                  _check(x, m, kernel_shape=[3]))


@pytest.mark.parametrize("n,k,s,out", [(2, 3, 2, 1), (3, 4, 2, 1), (1, 4, 2, 0),
                                       (1, 5, 3, 0), (2, 3, 1, 0), (5, 6, 3, 1)])
def test_output_size_rounds_toward_zero(n, k, s, out):
    """(n + pads - k) / s + 1 in C's division: a window longer than the input by less
    than the stride is one clipped window, by less than twice the stride none."""
    y = _check(_x(1, 2, n, seed=n), _ones(1, 1, n), kernel_shape=[k], strides=[s])
    assert y.shape == (1, 2, out)


def test_storage_order_has_no_effect():
    """storage_order is accepted and changes nothing."""
    x, m = _x(1, 2, 4, 5, seed=6), _ones(1, 1, 4, 5)
    base = _check(x, m, kernel_shape=[2, 3])
    for order in (1, 5):
        np.testing.assert_array_equal(_check(x, m, kernel_shape=[2, 3],
                                             storage_order=order), base)


def test_empty_batch():
    """N = 0 gives an empty Y of the right shape, M's N and C free."""
    assert _check(np.zeros((0, 3, 4, 4), np.float32), _ones(1, 1, 4, 4),
                  kernel_shape=[2, 2]).shape == (0, 3, 3, 3)
    assert _check(np.zeros((0, 3, 4), np.float32), np.zeros((0, 3, 4), np.int32),
                  kernel_shape=[2]).shape == (0, 3, 3)


def test_empty_pads_and_strides_are_the_defaults():
    """Empty pads/strides lists read as absent."""
    x, m = _x(1, 1, 5, seed=7), _ones(1, 1, 5)
    op = _opdef()
    got = op.kernel([x, m], op.resolve_attrs({"kernel_shape": [2], "pads": [],
                                              "strides": []}), None)[0]
    np.testing.assert_array_equal(got, _check(x, m, kernel_shape=[2]))


# --------------------------------------------------------------------------------------
# Inference
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("xshape,attrs,want", [
    ((2, 3, 8), dict(kernel_shape=[3]), (2, 3, 6)),
    ((2, 3, 8, 9), dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1]),
     (2, 3, 4, 5)),
    ((1, 4, 5, 6, 7), dict(kernel_shape=[2, 2, 2], auto_pad="SAME_LOWER", strides=[2, 3, 1]),
     (1, 4, 3, 2, 7)),
    ((1, 1, 10), dict(kernel_shape=[1], auto_pad="SAME_UPPER", strides=[6]), (1, 1, 2)),
    ((None, 3, None, 9), dict(kernel_shape=[2, 2], strides=[2, 2]), (None, 3, None, 4)),
    ((1, 2, 2), dict(kernel_shape=[3], strides=[2]), (1, 2, 1)),
])
def test_infer(xshape, attrs, want):
    """Inference gives float32 and onnxruntime's output sizes; unknown stays unknown."""
    op = _opdef()
    mshape = (1, 1) + tuple(xshape[2:])
    (info,) = op.infer(op.resolve_attrs(attrs), [TensorInfo(F32, xshape),
                                                 TensorInfo(I32, mshape)])
    assert info.dtype == F32 and info.shape == want
    (unknown,) = op.infer(op.resolve_attrs(attrs), [TensorInfo(F32, None),
                                                    TensorInfo(I32, None)])
    assert unknown.dtype == F32 and unknown.shape is None


def test_infer_errors():
    """Inference refuses bad dtypes and shapes by name."""
    op = _opdef()
    attrs = op.resolve_attrs({"kernel_shape": [2, 2]})
    with pytest.raises(ShapeError, match="X must be float32"):
        op.infer(attrs, [TensorInfo(np.dtype(np.float64), (1, 1, 4, 4)),
                         TensorInfo(I32, (1, 1, 4, 4))])
    with pytest.raises(ShapeError, match="M must be int32"):
        op.infer(attrs, [TensorInfo(F32, (1, 1, 4, 4)), TensorInfo(np.dtype(np.int64), None)])
    with pytest.raises(ShapeError, match="spatial dims"):
        op.infer(attrs, [TensorInfo(F32, (1, 1, 4, 4)), TensorInfo(I32, (1, 1, 4, 5))])
    with pytest.raises(OpAttributeError, match="kernel_shape"):
        op.infer(attrs, [TensorInfo(F32, (1, 1, 4)), TensorInfo(I32, None)])


# --------------------------------------------------------------------------------------
# Errors: refused by name, as onnxruntime refuses them
# --------------------------------------------------------------------------------------


def _ort_refuses(x, m, ort_match, **attrs):
    """Assert onnxruntime refuses the node (at load: its shape inference, the graph
    inputs being shaped; or at run: its kernel) with a message matching `ort_match`, so
    a case cannot pass on an unrelated onnxruntime error."""
    with pytest.raises(Exception, match=ort_match):
        _ort(x, m, **attrs)


@pytest.mark.parametrize("attrs,err,match,ort_match", [
    ({}, OpAttributeError, "kernel_shape is not set", "kernel_shape must be specified"),
    ({"kernel_shape": [0, 2]}, OpAttributeError, "kernel_shape .* positive",
     "kernel_shape must only contain positive values"),
    ({"kernel_shape": [2, 2], "strides": [0, 1]}, OpAttributeError, "strides .* positive",
     "strides must only contain positive values"),
    ({"kernel_shape": [2, 2], "strides": [1]}, OpAttributeError, "strides .* 2 values",
     "strides has incorrect size"),
    ({"kernel_shape": [2, 2], "pads": [-1, 0, 0, 0]}, OpAttributeError, "negative",
     "pads must not contain negative values"),
    ({"kernel_shape": [2, 2], "pads": [2, 0, 0, 0]}, OpAttributeError, "smaller than",
     "Pad should be smaller than kernel"),
    ({"kernel_shape": [2, 2], "pads": [1, 1]}, OpAttributeError, "pads .* 4 values",
     "pads has incorrect size"),
    ({"kernel_shape": [2, 2], "auto_pad": "FOO"}, OpAttributeError, "auto_pad 'FOO'",
     "Unknown AutoPadType"),
    ({"kernel_shape": [2, 2], "dilations": [1, 1]}, OpAttributeError,
     "unknown attribute 'dilations'", "Unrecognized attribute: dilations"),
    ({"kernel_shape": [2, 2], "ceil_mode": 1}, OpAttributeError,
     "unknown attribute 'ceil_mode'", "Unrecognized attribute: ceil_mode"),
    ({"kernel_shape": [2, 2 ** 40]}, OpAttributeError, "beyond", None),
])
def test_attribute_errors(attrs, err, match, ort_match):
    """Bad attributes: named errors at resolve time, and onnxruntime refuses too."""
    with pytest.raises(err, match=match):
        _opdef().resolve_attrs(attrs)
    if ort_match is not None:
        _ort_refuses(_x(1, 1, 4, 4), _ones(1, 1, 4, 4), ort_match, **attrs)


def test_more_than_3d_is_unsupported():
    """4-D pooling: UnsupportedOpError, as onnxruntime refuses it."""
    with pytest.raises(UnsupportedOpError, match="only 1-D, 2-D and 3-D"):
        _opdef().resolve_attrs({"kernel_shape": [2, 2, 2, 2]})
    x = _x(1, 1, 3, 3, 3, 3)
    _ort_refuses(x, _ones(*x.shape), "Only 1D, 2D, and 3D pooling", kernel_shape=[2, 2, 2, 2])
    with pytest.raises(UnsupportedOpError, match="4 spatial dims"):
        _kernel(x, _ones(*x.shape), kernel_shape=[2, 2, 2])


@pytest.mark.parametrize("x,m,attrs,err,match,ort_match", [
    (_x(1, 4), _ones(1, 4), dict(kernel_shape=[2]), ShapeError, "1 to 3 spatial dims",
     "Input tensor must have at least 3 dimensions"),
    (_x(1, 2, 4, 4), _ones(1, 2, 4), dict(kernel_shape=[2, 2]), ShapeError, "X's rank 4",
     "Mask and input must have the same number of dimensions"),
    (_x(1, 2, 4, 4), _ones(1, 2, 4, 3), dict(kernel_shape=[2, 2]), ShapeError,
     "X's spatial dims", "Mask and input spatial dimensions mismatch"),
    (_x(1, 2, 4, 4), np.ones((0, 2, 4, 4), np.int32), dict(kernel_shape=[2, 2]), ShapeError,
     "N or C of 0", "Mask N and C dimensions must be greater than 0"),
    (np.zeros((1, 0, 4, 4), np.float32), _ones(1, 1, 4, 4), dict(kernel_shape=[2, 2]),
     ShapeError, "empty in a dim other than N", "Only N can be zero"),
    (np.zeros((1, 1, 0, 4), np.float32), np.ones((1, 1, 0, 4), np.int32),
     dict(kernel_shape=[1, 2]), ShapeError, "empty in a dim other than N",
     "Only N can be zero"),
    (_x(1, 2, 4, 4), _ones(1, 1, 4, 4), dict(kernel_shape=[2]), OpAttributeError,
     "kernel_shape .* 2 spatial dims", "kernel_shape has incorrect size"),
    (_x(1, 2, 4, 4), _ones(1, 1, 4, 4), dict(kernel_shape=[2, 2, 2]), OpAttributeError,
     "kernel_shape .* 2 spatial dims", "kernel_shape has incorrect size"),
    (_x(1, 1, 1, 2), _ones(1, 1, 1, 2), dict(kernel_shape=[3, 2]), ShapeError,
     "output size would be -1", "Calculated output dimension is negative"),
])
def test_input_errors(x, m, attrs, err, match, ort_match):
    """Bad inputs: named errors, and onnxruntime refuses them too."""
    with pytest.raises(err, match=match):
        _kernel(x, m, **attrs)
    _ort_refuses(x, m, ort_match, **attrs)


def test_dtype_errors():
    """onnxruntime's kernel is float32 only and M int32 (its schema refuses others)."""
    with pytest.raises(ShapeError, match="X must be float32 .*float64"):
        _kernel(_x(1, 1, 4).astype(np.float64), _ones(1, 1, 4), kernel_shape=[2])
    with pytest.raises(ShapeError, match="M must be int32, got int64"):
        _kernel(_x(1, 1, 4), np.ones((1, 1, 4), np.int64), kernel_shape=[2])


def test_huge_window_is_refused_before_allocating():
    """A 2**31 output: ResourceExhaustedError first."""
    with pytest.raises(ResourceExhaustedError, match="MaxpoolWithMask: the output"):
        _kernel(_x(1, 1, 4), _ones(1, 1, 4), kernel_shape=[2 ** 31 - 1],
                pads=[2 ** 31 - 2, 2 ** 31 - 2])


# --------------------------------------------------------------------------------------
# Refused where onnxruntime's result is wrong
# --------------------------------------------------------------------------------------


def _per_plane(x, m, k):
    """1-D, unit stride, no padding: plane p read with M's plane p mod (N * C)."""
    planes = x.shape[0] * x.shape[1]
    xs = x.reshape(planes, -1)
    ms = m.reshape(-1, x.shape[2])
    out = np.full((planes, x.shape[2] - k + 1), LOWEST, np.float32)
    for p in range(planes):
        for o in range(out.shape[1]):
            for t in range(o, o + k):
                if ms[p % len(ms), t] == 0:
                    break
                out[p, o] = max(out[p, o], xs[p, t])
    return out.reshape(x.shape[:2] + (-1,))


def test_misaligned_mask_is_refused():
    """A full (N, C, *spatial) mask: onnxruntime starts plane p at element
    (p * S) mod (N * C) of M, not at plane p, so its result is not the per-plane one."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    m = (rng.random((2, 3, 5)) > 0.3).astype(np.int32)
    assert not np.array_equal(_ort(x, m, kernel_shape=[2]), _per_plane(x, m, 2))
    with pytest.raises(ShapeError, match="misaligned"):
        _kernel(x, m, kernel_shape=[2])
    with pytest.raises(ShapeError, match="misaligned"):
        _og(_model(x, m, kernel_shape=[2]), {"x": x, "m": m})
    # the same mask shared by every plane (N = C = 1) is the per-plane reading
    np.testing.assert_array_equal(_check(x, m[:1, :1], kernel_shape=[2]),
                                  _per_plane(x, m[:1, :1], 2))


@pytest.mark.parametrize("shape", [(1, 2, 3, 3), (2, 1, 2, 2, 2)])
def test_mask_off_at_first_position_is_refused(shape):
    """onnxruntime's 2-D/3-D kernels never test the mask at spatial index 0: the
    element there is read although its entry is off (its 1-D kernel does test it)."""
    x = np.zeros(shape, np.float32)
    x.reshape(shape[0], shape[1], -1)[:, :, 0] = 5
    m = np.zeros((1, 1) + shape[2:], np.int32)
    k = [2] * (len(shape) - 2)
    assert (_ort(x, m, kernel_shape=k).reshape(shape[0], shape[1], -1)[:, :, 0] == 5).all()
    with pytest.raises(UnsupportedOpError, match="0 at the first spatial position"):
        _kernel(x, m, kernel_shape=k)


# --------------------------------------------------------------------------------------
# ONNX import / export
# --------------------------------------------------------------------------------------


def test_round_trip_through_to_onnx():
    """Imported, written back by to_onnx: onnxruntime runs the written model to the
    original's output, and so does onegraph."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    m = (rng.random((1, 1, 6, 7)) > 0.3).astype(np.int32)
    m[0, 0, 0, 0] = 1
    attrs = dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1])
    model = _model(x, m, **attrs)
    back = to_onnx(from_onnx(model))
    nodes = [(n.domain, n.op_type) for n in back.graph.node]
    assert nodes == [(MS, OP)]
    want = _ort(x, m, **attrs)
    again = ort_session(back, optimize=False).run(None, {"x": x, "m": m})[0]
    np.testing.assert_array_equal(again, want)
    np.testing.assert_array_equal(_og(back, {"x": x, "m": m}), want)


def test_between_standard_ops():
    """MaxpoolWithMask fed by Relu and feeding Add, run by Session and onnxruntime."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    m = (rng.random((1, 1, 5, 5)) > 0.2).astype(np.int32)
    m[0, 0, 0, 0] = 1
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node(OP, ["r", "m"], ["p"], domain=MS, kernel_shape=[2, 2]),
             helper.make_node("Add", ["p", "p"], ["y"])]
    _, graph_inputs, _ = node_inputs([("x", x), ("m", m)])
    model = helper.make_model(helper.make_graph(
        nodes, "g", graph_inputs,
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)]),
        ir_version=9, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    want = ort_session(model, optimize=False).run(None, {"x": x, "m": m})[0]
    np.testing.assert_array_equal(_og(model, {"x": x, "m": m}), want)

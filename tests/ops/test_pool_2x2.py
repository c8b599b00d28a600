"""The 2x2 stride-2 unpadded pool path (`ops.pool._reduce_2x2_s2`: two input rows,
then two columns) for MaxPool and AveragePool against onnxruntime: odd sizes (the last
row or column left out), ceil_mode where it adds no window and where it adds a partial
one (another path then), batch > 1, channel blocks of large inputs, float64, strided
inputs, NaN and infinities. A spy checks that the path ran where it should."""

from __future__ import annotations

import numpy as np
import pytest

from onegraph.ops import KernelContext, get_op
from onegraph.ops import pool as pool_ops
from onegraph.ops.registry import NUM_OUTPUTS

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

from .test_pool_gemm import _ort_pool  # noqa: E402


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("shape,attrs,two_pass", [
    ((1, 8, 56, 56), {}, True),
    ((2, 3, 15, 9), {}, True),                         # odd: last row/column unused
    ((1, 4, 14, 14), {"ceil_mode": 1}, True),          # even: ceil adds no window
    ((1, 4, 15, 14), {"ceil_mode": 1}, False),         # a partial last row of windows
    ((1, 4, 7, 7), {"pads": [1, 1, 0, 0]}, False),     # padded
    ((1, 600, 56, 56), {}, True),                      # past 5 MiB: channel blocks
    ((1, 5, 3, 2), {}, True),                          # one window, a row left out
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_by_two_pool_matches_onnxruntime(op_type, shape, attrs, two_pass, dtype,
                                             monkeypatch, numpy_kernels):
    calls = []
    real = pool_ops._reduce_2x2_s2
    monkeypatch.setattr(pool_ops, "_reduce_2x2_s2",
                        lambda *a: calls.append(1) or real(*a))
    # the GEMM average pool would take the small images: the window path is tested here
    monkeypatch.setattr(pool_ops, "_average_gemm_applies", lambda *a: False)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(dtype)
    # (onnxruntime's MaxPool drops NaN where numpy's maximum keeps it: NaN only in the
    # average, where both propagate it)
    x.reshape(-1)[:4] = [np.nan if op_type == "AveragePool" else 0.5, np.inf, -np.inf,
                         1e30]
    attrs = dict(kernel_shape=[2, 2], strides=[2, 2], **attrs)
    op = get_op(op_type)
    # one output, as the Session declares it (MaxPool's Indices not asked for)
    resolved = dict(op.resolve_attrs(attrs), **{NUM_OUTPUTS: 1})
    with np.errstate(invalid="ignore"):  # inf + -inf in a window: NaN, as wanted
        (got,) = op.kernel([x], resolved, KernelContext())
    if two_pass:  # whole windows only: the oracle is a reshape, in float64
        n, c, h, w = shape
        win = x[:, :, :h // 2 * 2, :w // 2 * 2].astype(np.float64).reshape(
            n, c, h // 2, 2, w // 2, 2)
        want = win.max(axis=(3, 5)) if op_type == "MaxPool" else win.mean(axis=(3, 5))
    elif dtype == np.float32:
        want = _ort_pool(x, attrs, op_type)
    else:
        pytest.skip("onnxruntime has no float64 AveragePool; float32 checks this path")
    assert got.shape == want.shape and got.dtype == dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert bool(calls) == two_pass


def test_strided_input_view():
    """A view with gaps (every other channel of a bigger array) is read as it is."""
    rng = np.random.default_rng(4)
    big = rng.standard_normal((1, 16, 20, 20)).astype(np.float32)
    x = big[:, ::2]
    attrs = dict(kernel_shape=[2, 2], strides=[2, 2])
    for op_type in ("MaxPool", "AveragePool"):
        op = get_op(op_type)
        resolved = dict(op.resolve_attrs(attrs), **{NUM_OUTPUTS: 1})
        (got,) = op.kernel([x], resolved, KernelContext())
        np.testing.assert_allclose(got, _ort_pool(x, attrs, op_type), rtol=1e-6,
                                   atol=1e-6)

"""ops/pool_jit.py: numba's window reductions (MaxPool's maximum, AveragePool's and
LpPool's sums). The kernels on random geometry against a float64 oracle (every window
reduced directly, NaN propagating as np.maximum), and the pools that the size rule
sends to them against onnxruntime, the compiled path recorded as taken."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from onegraph.ops import KernelContext, get_op
from onegraph.ops import pool as pool_ops

ort = pytest.importorskip("onnxruntime")

from .test_pool_gemm import _ort_pool  # noqa: E402


@pytest.fixture
def pool_kernels(numba_jit):
    """ops/pool_jit.py, the JIT backend set to numba (skipped where numba does not
    import)."""
    from onegraph.ops import jit

    return jit.kernels("pool")


def _windows_oracle(x, kernel, strides, pads, out_sp, reduce):
    """float64: `reduce` (np.max or np.sum) over the in-image taps of every window;
    -inf / 0 where a window holds none."""
    ho, wo = out_sp
    y = np.empty(x.shape[:2] + (ho, wo))
    h, w = x.shape[2:]
    for i, j in itertools.product(range(ho), range(wo)):
        r0, c0 = i * strides[0] - pads[0], j * strides[1] - pads[1]
        win = x[:, :, max(0, r0):max(0, r0 + kernel[0]), max(0, c0):max(0, c0 + kernel[1])]
        if win.shape[2] == 0 or win.shape[3] == 0:
            y[:, :, i, j] = -np.inf if reduce is np.max else 0.0
        else:
            y[:, :, i, j] = reduce(win.reshape(win.shape[:2] + (-1,)), axis=2)
    return y


def test_kernels_on_random_geometry_float64(pool_kernels):
    """max_2d and sum_2d on images 1-12, kernels 1-4, strides 1-3, pads 0-2 and
    overhanging last windows (ceil mode), batch 1-2, NaN and inf in the input:
    exact against the direct reduction of each window."""
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(250):
        h, w = (int(v) for v in rng.integers(1, 13, 2))
        kh, kw = (int(v) for v in rng.integers(1, 5, 2))
        sh, sw = (int(v) for v in rng.integers(1, 4, 2))
        pt, pl = min(int(rng.integers(0, 3)), kh - 1), min(int(rng.integers(0, 3)), kw - 1)
        ho = (h + 2 * pt - kh + int(rng.integers(0, sh))) // sh + 1
        wo = (w + 2 * pl - kw + int(rng.integers(0, sw))) // sw + 1
        if ho < 1 or wo < 1:
            continue
        x = rng.standard_normal((int(rng.integers(1, 3)), 3, h, w))
        x.flat[rng.integers(0, x.size, 2)] = [np.nan, np.inf]
        for kernel, reduce in ((pool_kernels.max_2d, np.max),
                               (pool_kernels.sum_2d, np.sum)):
            out = np.empty(x.shape[:2] + (ho, wo))
            args = (x, out, kh, kw, sh, sw, pt, pl)
            got = kernel(*args, -np.inf) if reduce is np.max else kernel(*args)
            with np.errstate(invalid="ignore"):
                want = _windows_oracle(x, (kh, kw), (sh, sw), (pt, pl), (ho, wo), reduce)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        checked += 1
    assert checked > 150


def test_mean_3x3_s2_on_random_geometry_float64(pool_kernels):
    """mean_3x3_s2 on images 1-15, leading pads 0-2, trailing extent from the output
    size (pads 0-2, ceil mode's overhang), batch 1-2, NaN and inf in the input, the
    padding counted or not: exact against the float64 window sums over the counts."""
    rng = np.random.default_rng(8)
    checked = 0
    for _ in range(200):
        h, w = (int(v) for v in rng.integers(1, 16, 2))
        pb = [int(v) for v in rng.integers(0, 3, 2)]
        pe = [int(v) for v in rng.integers(0, 3, 2)]
        ceil = int(rng.integers(0, 2))
        ho = (h + pb[0] + pe[0] - 3 + ceil) // 2 + 1
        wo = (w + pb[1] + pe[1] - 3 + ceil) // 2 + 1
        if ho < 1 or wo < 1 or (ho - 1) * 2 >= h + pb[0] or (wo - 1) * 2 >= w + pb[1]:
            continue  # (ONNX drops a last window that starts in the trailing padding)
        x = rng.standard_normal((int(rng.integers(1, 3)), 3, h, w))
        x.flat[rng.integers(0, x.size, 2)] = [np.nan, np.inf]
        include_pad = bool(rng.integers(0, 2))
        counts = pool_ops._window_counts([h, w], [3, 3], [2, 2], [1, 1], pb, pe,
                                         [ho, wo], include_pad)
        out = np.empty(x.shape[:2] + (ho, wo))
        got = pool_kernels.mean_3x3_s2(x, out, pb[0], pb[1],
                                       np.maximum(counts, 1).astype(np.float64))
        with np.errstate(invalid="ignore"):
            want = _windows_oracle(x, (3, 3), (2, 2), pb, (ho, wo), np.sum) \
                / np.maximum(counts, 1)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        checked += 1
    assert checked > 100


def test_max_3x3_s2_on_random_geometry_float64(pool_kernels):
    """max_3x3_s2 on images 1-15 (odd and even widths), leading pads 0-2, ceil mode's
    overhang, batch 1-2, NaN and inf in the input: exact against the float64 window
    maxima (NaN where a window holds one), and equal to max_2d's results."""
    rng = np.random.default_rng(10)
    checked = 0
    for _ in range(200):
        h, w = (int(v) for v in rng.integers(1, 16, 2))
        pt, pl = (int(v) for v in rng.integers(0, 3, 2))
        ho = (h + 2 * pt - 3 + int(rng.integers(0, 2))) // 2 + 1
        wo = (w + 2 * pl - 3 + int(rng.integers(0, 2))) // 2 + 1
        if ho < 1 or wo < 1:
            continue
        x = rng.standard_normal((int(rng.integers(1, 3)), 3, h, w))
        x.flat[rng.integers(0, x.size, 2)] = [np.nan, -np.inf]
        got = pool_kernels.max_3x3_s2(x, np.empty(x.shape[:2] + (ho, wo)), pt, pl, -np.inf)
        with np.errstate(invalid="ignore"):
            want = _windows_oracle(x, (3, 3), (2, 2), (pt, pl), (ho, wo), np.max)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=0, atol=0)
        np.testing.assert_array_equal(got, pool_kernels.max_2d(
            x, np.full_like(got, -np.inf), 3, 3, 2, 2, pt, pl, -np.inf))
        checked += 1
    assert checked > 100


def test_same_size_3x3_kernels_on_random_geometry_float64(pool_kernels):
    """mean_3x3_same and max_3x3_same (3x3, stride 1, one pixel of padding all round) on
    images 1-15 x 2-15, batch 1-2, NaN and inf in the input, the padding counted or
    not: exact against the float64 window sums over the counts and window maxima."""
    rng = np.random.default_rng(12)
    for _ in range(120):
        h, w = int(rng.integers(1, 16)), int(rng.integers(2, 16))
        x = rng.standard_normal((int(rng.integers(1, 3)), 3, h, w))
        x.flat[rng.integers(0, x.size, 2)] = [np.nan, np.inf]
        include_pad = bool(rng.integers(0, 2))
        counts = pool_ops._window_counts([h, w], [3, 3], [1, 1], [1, 1], [1, 1], [1, 1],
                                         [h, w], include_pad)
        mean = pool_kernels.mean_3x3_same(x, np.empty_like(x),
                                          np.maximum(counts, 1).astype(np.float64))
        top = pool_kernels.max_3x3_same(x, np.empty_like(x), -np.inf)
        with np.errstate(invalid="ignore"):
            sums = _windows_oracle(x, (3, 3), (1, 1), (1, 1), (h, w), np.sum)
            maxima = _windows_oracle(x, (3, 3), (1, 1), (1, 1), (h, w), np.max)
        for got, want in ((mean, sums / np.maximum(counts, 1)), (top, maxima)):
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("shape", [(1, 6, 28, 28), (2, 5, 7, 9)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_size_3x3_pools_match_onnxruntime(op_type, shape, dtype, pool_kernels,
                                               monkeypatch):
    """Inception's branch pools (3x3, stride 1, pads 1) through the one-pass kernels
    (recorded) against onnxruntime, the padding counted or not."""
    ran = []
    name = "max_3x3_same" if op_type == "MaxPool" else "mean_3x3_same"
    real = getattr(pool_kernels, name)
    monkeypatch.setattr(pool_kernels, name, lambda *a: (ran.append(1), real(*a))[1])
    x = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    for extra in ({}, {"count_include_pad": 1}) if op_type == "AveragePool" else ({},):
        attrs = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], **extra)
        got = _run(op_type, x, attrs)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, _ort_pool(x.astype(np.float32), attrs, op_type),
                                   rtol=1e-5, atol=1e-6)
    assert ran


CASES = [
    ((1, 8, 56, 56), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ((2, 5, 29, 30), dict(kernel_shape=[3, 3], strides=[2, 2])),
    ((1, 4, 31, 40), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    ((1, 3, 33, 28), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 2, 1],
                          count_include_pad=1)),
    ((1, 6, 28, 28), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                          ceil_mode=1)),
    ((1, 6, 28, 30), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((1, 3, 31, 29), dict(kernel_shape=[3, 3], strides=[3, 3], pads=[0, 1, 1, 0])),
]
# narrower images: MaxPool only (AveragePool's GEMMs take these first)
NARROW = [
    ((1, 4, 27, 27), dict(kernel_shape=[3, 3], strides=[2, 2])),
    ((2, 5, 14, 14), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1])),
    ((1, 3, 9, 8), dict(kernel_shape=[4, 3], strides=[2, 3], pads=[1, 1, 0, 2])),
]


def _run(op_type, x, attrs):
    op = get_op(op_type)
    return op.kernel([x], op.resolve_attrs(attrs, num_outputs=1), KernelContext())[0]


@pytest.mark.parametrize("case, op_type",
                         [(c, op) for c in CASES for op in ("MaxPool", "AveragePool")]
                         + [(c, "MaxPool") for c in NARROW], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pools_the_rule_sends_to_numba_match_onnxruntime(case, op_type, dtype,
                                                         pool_kernels, taken_by):
    """Strided pools (2x2 from 28 columns wide) run through pool_jit.py (recorded: 3x3
    stride-2 AveragePools through mean_3x3_s2, the rest through the window reductions)
    and match onnxruntime (float64 compared in float32, which onnxruntime pools)."""
    shape, attrs = case
    if op_type == "MaxPool":
        attrs = {k: v for k, v in attrs.items() if k != "count_include_pad"}
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    ran = taken_by(pool_ops, "_compiled_reduction")
    mean = taken_by(pool_ops, "_mean_3x3_compiled")
    got = _run(op_type, x, attrs)
    assert got.dtype == dtype
    if op_type == "AveragePool" and attrs["kernel_shape"] == [3, 3] \
            and attrs["strides"] == [2, 2]:
        assert any(mean) and not any(ran)   # sums and division in one pass
    else:
        assert any(ran)
    # finite inputs: onnxruntime's MaxPool keeps a NaN in some of its windows only (its
    # max instruction's operand order); NaN is checked against the oracle above
    want = _ort_pool(x.astype(np.float32), attrs, op_type)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape, attrs", [
    ((1, 4, 56, 56), dict(kernel_shape=[3, 3], pads=[1, 0, 1, 0])),   # stride 1
    ((1, 4, 26, 26), dict(kernel_shape=[2, 2], strides=[2, 2])),      # 2x2, narrow
    ((1, 4, 30, 30), dict(kernel_shape=[3, 3], strides=[2, 2], dilations=[2, 2])),
], ids=str)
def test_pools_outside_the_rule_stay_with_numpy(shape, attrs, pool_kernels, taken_by):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    ran = taken_by(pool_ops, "_compiled_reduction")
    for op_type in ("MaxPool", "AveragePool"):
        np.testing.assert_allclose(_run(op_type, x, attrs), _ort_pool(x, attrs, op_type),
                                   rtol=1e-5, atol=1e-6)
    assert not any(ran)

"""The two-GEMM AveragePool path (`ops.pool._average_2d_gemm`: Y = Ph @ X @ Pw^T) against
onnxruntime and, for float64, a direct window sum: pads, ceil_mode, count_include_pad,
dilations, strides, non-square kernels and images, batch > 1; inf and NaN inputs; and
the rule that picks it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from onegraph.ops import KernelContext, get_op
from onegraph.ops import pool as pool_ops

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _numpy_kernels(numpy_kernels):
    """The GEMM path under test is numpy's: numba's window sums (JIT backend numba)
    take some of these pools first (tests/ops/test_pool_jit.py)."""
    yield


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws from its own fresh generator: a test's inputs must not depend on
    which tests ran before it (a failure must reproduce under -k)."""
    global RNG
    RNG = np.random.default_rng(7)

GEMM_CASES = [
    ((1, 24, 28, 28), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ((2, 5, 28, 28), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                          count_include_pad=1)),
    ((2, 4, 12, 12), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((1, 6, 13, 9), dict(kernel_shape=[3, 2], strides=[2, 3], pads=[0, 1, 2, 1])),
    ((1, 6, 13, 9), dict(kernel_shape=[3, 2], strides=[2, 3], pads=[0, 1, 2, 1],
                         count_include_pad=1)),
    ((2, 3, 11, 10), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    ((2, 3, 11, 10), dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, pads=[1, 1, 1, 1],
                          count_include_pad=1)),
    ((1, 4, 12, 12), dict(kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 2, 2, 2])),
    ((1, 4, 12, 12), dict(kernel_shape=[2, 2], strides=[3, 3])),   # taps skip inputs
    ((1, 8, 14, 14), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),  # stride 1
    ((1, 3, 9, 9), dict(kernel_shape=[5, 5], strides=[2, 2], auto_pad="SAME_UPPER")),
    ((1, 3, 9, 8), dict(kernel_shape=[4, 3], strides=[2, 2], auto_pad="SAME_LOWER",
                        count_include_pad=1)),
    ((1, 2, 1, 6), dict(kernel_shape=[1, 2], strides=[1, 2])),
    # padding not counted: the GEMMs win further out (ShuffleNet's shortcut pools)
    ((1, 3, 56, 56), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ((2, 2, 57, 50), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 1])),
]


def _ort_pool(x, attrs, op_type="AveragePool"):
    """onnxruntime's output of one pool node (opset 21) on x."""
    from onnx import helper

    node = helper.make_node(op_type, ["x"], ["y"], **attrs)
    dt = helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", dt, x.shape)],
                              [helper.make_tensor_value_info("y", dt, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": np.ascontiguousarray(x)})[0]


def _ours(x, attrs):
    op = get_op("AveragePool")
    return op.kernel([x], op.resolve_attrs(attrs), KernelContext())[0]


def _takes_gemm(x, attrs):
    op = get_op("AveragePool")
    full = op.resolve_attrs(attrs)
    return pool_ops._average_gemm_applies(x.shape[2:], pool_ops._geometry(x.shape, full),
                                          bool(full.get("count_include_pad", 0)))


def _window_average_float64(x, attrs):
    """Oracle: every window summed directly (math.fsum), divided by its ONNX count."""
    import math

    op = get_op("AveragePool")
    full = op.resolve_attrs(attrs)
    kernel, strides, dil, pb, pe, (ho, wo) = pool_ops._geometry(x.shape, full)
    include = bool(full.get("count_include_pad", 0))
    h, w = x.shape[2:]
    y = np.empty(x.shape[:2] + (ho, wo))
    for i, j in itertools.product(range(ho), range(wo)):
        rows = [i * strides[0] - pb[0] + a * dil[0] for a in range(kernel[0])]
        cols = [j * strides[1] - pb[1] + b * dil[1] for b in range(kernel[1])]
        if include:
            n_rows = sum(-pb[0] <= r < h + pe[0] for r in rows)
            n_cols = sum(-pb[1] <= c < w + pe[1] for c in cols)
        else:
            n_rows = sum(0 <= r < h for r in rows)
            n_cols = sum(0 <= c < w for c in cols)
        rows = [r for r in rows if 0 <= r < h]
        cols = [c for c in cols if 0 <= c < w]
        for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
            total = math.fsum(x[n, c, r, q] for r in rows for q in cols)
            y[n, c, i, j] = total / max(n_rows * n_cols, 1)
    return y


@pytest.mark.parametrize("case", GEMM_CASES, ids=str)
def test_gemm_average_pool_matches_onnxruntime(case):
    shape, attrs = case
    x = RNG.standard_normal(shape).astype(np.float32)
    assert _takes_gemm(x, attrs)
    got, want = _ours(x, attrs), _ort_pool(x, attrs)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", GEMM_CASES, ids=str)
def test_gemm_average_pool_float64_to_rounding(case):
    """float64 (onnxruntime has no float64 AveragePool): against a direct fsum."""
    shape, attrs = case
    x = RNG.standard_normal(shape) * 1e3
    got = _ours(x, attrs)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, _window_average_float64(x, attrs), rtol=1e-12,
                               atol=1e-9)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[2, 2], strides=[3, 3]),    # the bad value lies in no window
], ids=str)
def test_non_finite_inputs_stay_in_their_windows(bad, attrs):
    """0 * inf in the GEMMs would spread an inf/NaN to every window of its row; such
    results are redone by the window passes, so only windows reading it are affected."""
    x = RNG.standard_normal((1, 3, 12, 12)).astype(np.float32)
    x[0, 1, 5, 5] = bad
    assert _takes_gemm(x, attrs)
    got, want = _ours(x, attrs), _ort_pool(x, attrs)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    assert np.isfinite(got[0, 0]).all() and np.isfinite(got[0, 2]).all()
    ok = np.isfinite(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-5, atol=1e-6)


def test_gemm_path_is_chosen_where_it_was_measured_faster():
    """The rule wo*(w + ho) <= 5*w*(kh + kw) (8 when the windows count only in-bounds
    taps), at the shapes it was measured on."""
    pays = pool_ops._average_gemm_pays
    assert pays((28, 28), [3, 3], (14, 14))          # 3x3/2 up to 28x28 inputs
    assert pays((14, 14), [3, 3], (7, 7))
    assert not pays((56, 56), [3, 3], (28, 28))      # a tie (0.96-1.06x)
    assert pays((14, 14), [2, 2], (7, 7))            # 2x2/2 up to 14x14 inputs
    assert not pays((28, 28), [2, 2], (14, 14))
    assert pays((14, 14), [3, 3], (14, 14))          # 3x3/1 up to 14x14
    assert not pays((28, 28), [3, 3], (28, 28))
    assert not pays((0, 5), [1, 1], (0, 5))
    # windows counting only in-bounds taps: wo*(w + ho) <= 8*w*(kh + kw)
    assert pays((56, 56), [3, 3], (28, 28), uneven=True)      # 0.57-0.72x
    assert not pays((28, 28), [3, 3], (28, 28), uneven=True)  # 3x3/1: 1.08x
    assert not pays((112, 112), [3, 3], (56, 56), uneven=True)


def test_large_average_pool_keeps_the_window_passes(monkeypatch):
    """Past the rule the GEMMs are not built (they would cost 1.3-4x)."""
    def refuse(*args):
        raise AssertionError("GEMM path taken")

    monkeypatch.setattr(pool_ops, "_average_2d_gemm", refuse)
    x = RNG.standard_normal((1, 4, 60, 60)).astype(np.float32)
    attrs = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    np.testing.assert_allclose(_ours(x, attrs), _ort_pool(x, attrs), rtol=1e-5, atol=1e-6)

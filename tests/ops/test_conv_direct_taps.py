"""numba's direct-taps Conv path (`ops.conv._conv_direct_taps`, conv_jit.into_stride_phases
and direct_taps: convs with few taps per output, an RGB stem or few channels each side)
against onnxruntime as the Session's fused Conv calls it (weight cache, Relu, `out=` a
Concat slice), a float64 geometry sweep against the direct sum (strides 1-4, pads 0-3
on each side, kernels 1-5, output channels not a multiple of four, batch 2), non-finite
inputs reaching exactly their windows, and the rule that sends convs there."""

from __future__ import annotations

import numpy as np
import pytest

from onegraph.ops import conv

from ..threads import run_together
from .test_conv_fast_paths import _assert_matches_ort, _run_conv

pytest.importorskip("onnxruntime")

CASES = [
    ((1, 3, 32, 32), (24, 3, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),  # stem
    ((2, 3, 21, 19), (10, 3, 3, 3), dict(strides=[2, 2])),                     # no pads
    ((1, 3, 17, 20), (7, 3, 3, 3), dict(pads=[0, 2, 1, 0])),                    # M % 4
    ((1, 1, 12, 12), (5, 1, 5, 5), dict(pads=[2, 2, 2, 2], strides=[3, 1])),
    ((1, 16, 14, 14), (32, 16, 3, 3), dict(pads=[1, 1, 1, 1])),                 # few M
    ((1, 8, 9, 11), (3, 8, 3, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    ((2, 2, 7, 6), (9, 2, 2, 4), dict(pads=[1, 0, 0, 3], strides=[1, 4])),
    ((1, 3, 2, 2), (4, 3, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),     # tiny image
]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("fused", ["cache", "cache+relu", "out+relu"])
def test_direct_taps_matches_onnxruntime(case, dtype, bias, fused, numba_jit, taken_by):
    xs, ws, attrs = case
    rng = np.random.default_rng(3)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype) if bias else None
    calls = taken_by(conv, "_conv_direct_taps")
    got = _run_conv(x, w, b, attrs, fused)
    assert calls, "the direct taps did not take the conv"
    _assert_matches_ort(got, x, w, b, attrs, fused.endswith("relu"))


def _direct_sum(x, w, b, strides, pb, pe):
    """Conv of float64 x by w (+ b) as a sum over the taps of the zero-padded image."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pb[0], pe[0]), (pb[1], pe[1])))
    ho = (h + pb[0] + pe[0] - kh) // strides[0] + 1
    wo = (wd + pb[1] + pe[1] - kw) // strides[1] + 1
    y = np.zeros((n, m, ho, wo))
    for a in range(kh):
        for t in range(kw):
            win = xp[:, :, a:a + (ho - 1) * strides[0] + 1:strides[0],
                     t:t + (wo - 1) * strides[1] + 1:strides[1]]
            y += np.einsum("nchw,mc->nmhw", win, w[:, :, a, t])
    return y + (0 if b is None else b[:, None, None])


def test_direct_taps_geometry_sweep_float64(numba_jit, taken_by):
    """Random geometries the rule sends to the direct taps, exact to float64 rounding
    against the direct sum, each called twice with one cache (the second call reuses
    the phase buffer, whose padding must still be zero)."""
    rng = np.random.default_rng(11)
    calls = taken_by(conv, "_conv_direct_taps")
    checked = 0
    for _ in range(120):
        c = int(rng.integers(1, 4))
        kh, kw = (int(v) for v in rng.integers(1, 6, 2))
        if c * kh * kw > 27:  # (the rule takes up to 144; few keep the oracle quick)
            continue
        h, wd = (int(v) for v in rng.integers(1, 16, 2))
        strides = [int(v) for v in rng.integers(1, 5, 2)]
        pb = [int(v) for v in rng.integers(0, 4, 2)]
        pe = [int(v) for v in rng.integers(0, 4, 2)]
        if h + pb[0] + pe[0] < kh or wd + pb[1] + pe[1] < kw:
            continue
        n, m = int(rng.integers(1, 3)), int(rng.integers(1, 11))
        x = rng.standard_normal((n, c, h, wd))
        w = rng.standard_normal((m, c, kh, kw))
        b = rng.standard_normal(m) if rng.random() < 0.7 else None
        attrs = dict(kernel_shape=[kh, kw], strides=strides, pads=pb + pe)
        want = _direct_sum(x, w, b, strides, pb, pe)
        cache: dict = {}
        for _ in range(2):
            got = conv.conv_nd(x, w, b, attrs, cache)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        # the same cache on a batch of another image: its own phase buffer
        x2 = rng.standard_normal((n, c, h + 1, wd))
        got2 = conv.conv_nd(x2, w, b, attrs, cache)
        np.testing.assert_allclose(got2, _direct_sum(x2, w, b, strides, pb, pe),
                                   rtol=1e-12, atol=1e-12)
        checked += 1
    assert checked > 40 and len(calls) == 3 * checked and all(calls)


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_non_finite_inputs_reach_exactly_their_windows(special, numba_jit):
    """An inf or NaN makes non-finite exactly the outputs whose windows read it: the
    spare taps of the last group of nine (zero weights) read a zero plane, not the
    image (0 * inf would be NaN)."""
    rng = np.random.default_rng(2)
    for c, ks, strides, pads in ((3, (3, 3), [2, 2], [1, 1, 1, 1]),   # 27 taps: 3 groups
                                 (1, (2, 2), [1, 1], [0, 0, 1, 1]),   # 4 taps + 5 spare
                                 (2, (3, 2), [1, 2], [1, 0, 0, 1])):  # 12 taps + 6 spare
        x = rng.standard_normal((1, c, 9, 10))
        x[0, 0, 0, 0] = special
        x[0, c - 1, 5, 4] = special
        w = rng.standard_normal((6, c) + ks)
        b = rng.standard_normal(6)
        attrs = dict(kernel_shape=list(ks), strides=strides, pads=pads)
        with np.errstate(invalid="ignore"):
            want = _direct_sum(x, w, b, strides, pads[:2], pads[2:])
            got = conv.conv_nd(x, w, b, attrs, {})
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-12)


def test_rule_takes_few_taps_and_outputs_and_leaves_the_rest():
    assert conv._direct_taps_pays(3, 24, [3, 3], [112, 112])         # RGB 3x3 stem
    assert conv._direct_taps_pays(16, 32, [3, 3], [56, 56])
    assert not conv._direct_taps_pays(3, 64, [3, 3], [112, 112])     # the GEMM's
    assert not conv._direct_taps_pays(3, 16, [7, 7], [112, 112])     # 147 taps
    assert not conv._direct_taps_pays(3, 8, [3, 3], [0, 5])          # no output


def test_numpy_backend_keeps_im2col(numpy_kernels, taken_by):
    """Without numba the same stem conv goes through im2col and matches."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 3, 16, 16))
    w = rng.standard_normal((8, 3, 3, 3))
    calls = taken_by(conv, "_conv_direct_taps")
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    got = conv.conv_nd(x, w, None, attrs, {})
    assert not calls
    np.testing.assert_allclose(got, _direct_sum(x, w, None, [2, 2], [1, 1], [1, 1]),
                               rtol=1e-12, atol=1e-12)


def test_threads_sharing_one_cache_get_their_own_phase_buffers(numba_jit):
    """Two threads run one conv (one weight cache, as threads sharing a Session do) on
    different images at once: each result is its own image's (numba's kernels release
    the GIL, so a shared phase buffer would mix the images)."""
    rng = np.random.default_rng(13)
    w = rng.standard_normal((16, 3, 3, 3))
    b = rng.standard_normal(16)
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    images = [rng.standard_normal((1, 3, 64, 64)) for _ in range(2)]
    wants = [_direct_sum(x, w, b, [2, 2], [1, 1], [1, 1]) for x in images]
    cache: dict = {}
    errors = []

    def work(k):
        for _ in range(60):
            got = conv.conv_nd(images[k], w, b, attrs, cache)
            if not np.allclose(got, wants[k], rtol=1e-12, atol=1e-12):
                errors.append(k)
                return

    assert not run_together(work, 2, 60) and not errors

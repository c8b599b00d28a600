"""The depthwise Conv path (`ops.conv_depthwise`, group == C == M, 2-D, no dilation)
against onnxruntime: numpy's three forms (same width for stride-1 convs as wide as their
input, NCHW rows for large images, channels-last for small ones) and numba's four
kernels (ops/conv_jit.py: same_3x3, strided_3x3, depthwise_3x3, padded), strides 1-3 and unequal,
symmetric/asymmetric/zero pads, auto_pad, ceil-like overhang, batch > 1, non-square
kernels, float32/float64/float16, bias, NaN and inf inputs, and as the Session's fused
Conv calls it (weight cache, Relu, `out=` a Concat slice)."""

from __future__ import annotations

import numpy as np
import pytest

from onegraph.ops import conv_depthwise

from .test_conv_fast_paths import _assert_matches_ort, _fused_conv, _run_conv

pytest.importorskip("onnxruntime")

CASES = [
    ((1, 24, 28, 28), (3, 3), dict(pads=[1, 1, 1, 1])),                  # same width
    ((2, 5, 21, 20), (5, 3), dict(pads=[2, 0, 1, 2])),                   # same width
    ((1, 4, 30, 17), (3, 5), dict(pads=[0, 3, 0, 1])),                   # same width
    ((1, 40, 9, 9), (3, 3), dict(pads=[1, 1, 1, 1])),                    # channels-last
    ((2, 16, 30, 26), (3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),  # rows, phases
    ((2, 48, 14, 14), (3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),  # c-last, phases
    ((1, 8, 23, 19), (5, 5), dict(pads=[2, 1, 0, 2], strides=[3, 2])),
    ((1, 6, 25, 31), (3, 2), dict(pads=[0, 1, 2, 0], strides=[1, 3])),
    ((3, 5, 12, 12), (4, 4), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    ((1, 7, 11, 10), (3, 3), dict(auto_pad="SAME_LOWER")),
    ((1, 9, 8, 8), (2, 2), dict(strides=[2, 2])),                        # no padding
    ((1, 4, 7, 6), (1, 3), dict(pads=[0, 1, 0, 1])),
    ((1, 3, 2, 2), (5, 5), dict(pads=[2, 2, 2, 2], strides=[2, 2])),     # image < kernel
    ((2, 12, 15, 15), (3, 3), dict(pads=[0, 0, 1, 1], strides=[2, 2])),  # trailing pad only
]


def _case(xs, ks, dtype, bias, seed=0):
    rng = np.random.default_rng(seed)
    c = xs[1]
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal((c, 1) + ks).astype(dtype)
    b = rng.standard_normal(c).astype(dtype) if bias else None
    return x, w, b


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("fused", ["plain", "cache", "cache+relu", "out+relu"])
def test_depthwise_matches_onnxruntime(case, dtype, bias, fused, jit_backend):
    xs, ks, attrs = case
    attrs = dict(attrs, group=xs[1])
    x, w, b = _case(xs, ks, dtype, bias)
    _assert_matches_ort(_run_conv(x, w, b, attrs, fused), x, w, b, attrs,
                        fused.endswith("relu"))


# size rules (_SAME_WIDTH_MIN_SPAN, _ROWS_MIN_SPAN) that force each form where it applies
FORMS = {"same_width": (0, 0), "rows": (1 << 30, 0), "channels_last": (1 << 30, 1 << 30)}


def _force(form, setattr_):
    same, rows = FORMS[form]
    setattr_(conv_depthwise, "_SAME_WIDTH_MIN_SPAN", same)
    setattr_(conv_depthwise, "_ROWS_MIN_SPAN", rows)


def _same_width_applies(xs, ks, attrs):
    if attrs.get("strides", [1, 1]) != [1, 1]:
        return False
    pads = attrs.get("pads", [0, 0, 0, 0])
    return attrs.get("auto_pad", "").startswith("SAME") or pads[1] + pads[3] == ks[1] - 1


@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_is_taken_and_agrees(form, monkeypatch, numpy_kernels):
    """Forcing each form (through the size rules) gives onnxruntime's result on every
    case, and the forced form is the one that ran wherever it applies."""
    ran = []
    real = getattr(conv_depthwise, f"_depthwise_{form}")
    monkeypatch.setattr(conv_depthwise, f"_depthwise_{form}",
                        lambda *a: (ran.append(1), real(*a))[1])
    _force(form, monkeypatch.setattr)
    applies = 0
    for xs, ks, attrs in CASES:
        applies += form != "same_width" or _same_width_applies(xs, ks, attrs)
        attrs = dict(attrs, group=xs[1])
        x, w, b = _case(xs, ks, np.float32, True, seed=3)
        got, _ = _fused_conv(x, w, b, attrs, "cache")
        _assert_matches_ort(got, x, w, b, attrs, relu=False)
    assert applies >= 4
    assert len(ran) == 2 * applies  # two calls per case (`_fused_conv` reruns)


def _random_geometries(seed, count):
    """(x, w, b, strides, leading pads, output size, want) for `count` random depthwise
    geometries (images 1-13, kernels 1-5, strides 1-3, pads 0-3 per side, a third of
    them stride 1 with the width kept, a third 3x3, a tenth 3x3 stride 1 pad 1, a tenth
    3x3 stride 2, batch 1-2) that have an output,
    float64, want being a direct sum over the taps of the zero-padded image."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        h, wd, kh, kw = (int(v) for v in rng.integers((1, 1, 1, 1), (14, 14, 6, 6)))
        if rng.random() < 0.3:
            kh = kw = 3
        sh, sw = (int(v) for v in rng.integers(1, 4, 2))
        pb = [int(v) for v in rng.integers(0, 4, 2)]
        pe = [int(v) for v in rng.integers(0, 4, 2)]
        if rng.random() < 0.3:  # stride 1, output as wide as the input
            sh = sw = 1
            pb[1] = int(rng.integers(0, kw))
            pe[1] = kw - 1 - pb[1]
        if rng.random() < 0.1:  # 3x3, stride 1, pad 1: the output as large as the input
            kh = kw = 3
            sh = sw = 1
            pb, pe = [1, 1], [1, 1]
        elif rng.random() < 0.1:  # 3x3 stride 2
            kh = kw = 3
            sh = sw = 2
        ho = (h + pb[0] + pe[0] - kh) // sh + 1
        wo = (wd + pb[1] + pe[1] - kw) // sw + 1
        if ho < 1 or wo < 1:
            continue
        n, c = (int(v) for v in rng.integers(1, (3, 6)))
        x = rng.standard_normal((n, c, h, wd))
        w = rng.standard_normal((c, 1, kh, kw))
        b = rng.standard_normal(c)
        xp = np.pad(x, ((0, 0), (0, 0), (pb[0], pe[0]), (pb[1], pe[1])))
        want = sum(xp[:, :, i:i + (ho - 1) * sh + 1:sh, j:j + (wo - 1) * sw + 1:sw]
                   * w[None, :, 0, i, j, None, None]
                   for i in range(kh) for j in range(kw)) + b[None, :, None, None]
        yield x, w, b, [sh, sw], pb, [ho, wo], want


def _check_into_strided_out(x, w, b, strides, pb, out_sp, want):
    """depthwise_2d into an `out` whose rows do not merge (every other column of a
    buffer): returned, and holding the result."""
    n, c = x.shape[:2]
    strided = np.full((n, c, out_sp[0], 2 * out_sp[1]), np.nan)[..., ::2]
    into = conv_depthwise.depthwise_2d(x, w, strides, pb, out_sp, {}, b, out=strided)
    assert into is strided
    np.testing.assert_allclose(strided, want, rtol=1e-12, atol=1e-12)


def test_depthwise_geometry_sweep_float64(numpy_kernels):
    """numpy's `depthwise_2d` on random geometry, every form, exact to float64 rounding
    against a direct sum over the taps of the zero-padded image."""
    checked = 0
    same_width = []
    for x, w, b, strides, pb, out_sp, want in _random_geometries(5, 300):
        for form in FORMS:
            with pytest.MonkeyPatch.context() as mp:
                _force(form, mp.setattr)
                real = conv_depthwise._depthwise_same_width
                mp.setattr(conv_depthwise, "_depthwise_same_width",
                           lambda *a: (same_width.append(a[1].shape[3] > a[0].shape[3]),
                                       real(*a))[1])
                got = conv_depthwise.depthwise_2d(x, w, strides, pb, out_sp, {}, b)
                _check_into_strided_out(x, w, b, strides, pb, out_sp, want)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        checked += 1
    assert checked > 150
    # the same-width form ran on enough of them, some with a kernel wider than the image
    assert len(same_width) > 15 and any(same_width)


def _record_compiled(monkeypatch):
    """{kernel name: calls} for the numba kernels of ops/conv_jit.py as depthwise_2d
    calls them."""
    from onegraph.ops import jit

    kernels = jit.kernels("conv")
    calls = {name: 0 for name in ("same_3x3", "strided_3x3", "depthwise_3x3", "padded")}
    for name in calls:
        real = getattr(kernels, name)

        def recording(*args, _name=name, _real=real):
            calls[_name] += 1
            return _real(*args)

        monkeypatch.setattr(kernels, name, recording)
    return calls


def test_compiled_depthwise_geometry_sweep_float64(monkeypatch, numba_jit):
    """numba's kernels on the same random geometry (and into a strided `out`), exact to
    float64 rounding against the direct sum; each of the four kernels ran on some."""
    calls = _record_compiled(monkeypatch)
    checked = 0
    for x, w, b, strides, pb, out_sp, want in _random_geometries(6, 300):
        got = conv_depthwise.depthwise_2d(x, w, strides, pb, out_sp, {}, b)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        _check_into_strided_out(x, w, b, strides, pb, out_sp, want)
        checked += 1
    assert checked > 150
    assert min(calls.values()) > 10, calls


@pytest.mark.parametrize("shifted", [False, True])
def test_rectified_input_equals_relu_first(jit_backend, shifted):
    """depthwise_2d(rectify=True) (a Relu moved into the conv, Session rewrite 12) gives
    to the bit what the conv of relu(x) gives, NaN, inf and -inf included, through every
    form (numba's rectify as they copy, the others rectify first); with a `shift` (the
    producer's bias moved too), what the conv of relu(x + shift) gives."""
    from onegraph.ops.activation import relu

    rng = np.random.default_rng(9)
    for shape, ks, strides, pads in (((1, 5, 9, 9), (3, 3), [1, 1], [1, 1]),    # same size
                                     ((2, 4, 9, 10), (3, 3), [2, 2], [1, 0]),   # stride 2
                                     ((1, 3, 8, 8), (3, 3), [1, 2], [0, 1]),    # row form
                                     ((1, 3, 9, 9), (5, 5), [1, 1], [2, 2]),    # padded
                                     ((1, 40, 9, 9), (3, 3), [2, 2], [1, 1])):
        x = rng.standard_normal(shape)
        x.flat[rng.integers(0, x.size, 4)] = [np.nan, np.inf, -np.inf, -0.0]
        w = rng.standard_normal((shape[1], 1) + ks)
        b = rng.standard_normal(shape[1])
        out_sp = [(s + 2 * p - k) // st + 1 for s, p, k, st
                  in zip(shape[2:], pads, ks, strides)]
        shift = rng.standard_normal(shape[1]) if shifted else None
        with np.errstate(invalid="ignore"):
            before = x + shift.reshape(-1, 1, 1) if shifted else x
            want = conv_depthwise.depthwise_2d(relu(before), w, strides, pads, out_sp, {}, b)
            got = conv_depthwise.depthwise_2d(x, w, strides, pads, out_sp, {}, b,
                                              rectify=True, shift=shift)
        np.testing.assert_array_equal(got, want)
        assert (x < 0).any()   # (the Relu had work to do)


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_non_finite_inputs_reach_exactly_their_windows(special, jit_backend):
    """An inf or NaN in the image makes non-finite exactly the outputs whose windows
    read it (the zero padding multiplies no value it does not hold), every kernel;
    the float64 oracle is the direct sum."""
    for shape, ks, strides, pads in (((1, 3, 9, 9), (3, 3), [1, 1], [1, 1]),
                                     ((1, 3, 9, 10), (3, 3), [2, 2], [1, 0]),
                                     ((2, 2, 8, 8), (5, 5), [1, 1], [2, 2])):
        rng = np.random.default_rng(1)
        x = rng.standard_normal(shape)
        x[:, :, 0, 0] = special
        x[:, :, 4, 5] = special
        w = rng.standard_normal((shape[1], 1) + ks)
        b = rng.standard_normal(shape[1])
        out_sp = [(s + 2 * p - k) // st + 1 for s, p, k, st
                  in zip(shape[2:], pads, ks, strides)]
        xp = np.pad(x, ((0, 0), (0, 0), (pads[0],) * 2, (pads[1],) * 2))
        with np.errstate(invalid="ignore"):
            want = sum(xp[:, :, i:i + (out_sp[0] - 1) * strides[0] + 1:strides[0],
                          j:j + (out_sp[1] - 1) * strides[1] + 1:strides[1]]
                       * w[None, :, 0, i, j, None, None]
                       for i in range(ks[0]) for j in range(ks[1])) + b[:, None, None]
            got = conv_depthwise.depthwise_2d(x, w, strides, pads, out_sp, {}, b)
        np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-12)

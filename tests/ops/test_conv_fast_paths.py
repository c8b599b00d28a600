"""The GEMM-then-shift Conv path (`ops.conv._conv_taps_2d`, stride 1, M <= C/2) against
onnxruntime: symmetric/asymmetric/zero pads, batch > 1, non-square kernels and images,
auto_pad, float64 and float16."""

from __future__ import annotations

import numpy as np
import pytest

from onegraph.ops import KernelContext, get_op

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")


@pytest.fixture(autouse=True)
def _own_paths(own_convs):
    """These tests check conv.py's own paths (each case is sized for one of them):
    oneDNN off (tests/ops/test_onednn.py has its own)."""


def _ort_conv(x, w, b, attrs):
    from onnx import TensorProto, helper

    dt = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
          np.float16: TensorProto.FLOAT16}[x.dtype.type]
    names = ["x", "w", "b"][:2 + (b is not None)]
    node = helper.make_node("Conv", names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info(nm, dt, a.shape)
        for nm, a in zip(names, (x, w, b))], [helper.make_tensor_value_info("y", dt, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip(names, (x, w, b))))[0]


@pytest.mark.parametrize("case", [
    ((1, 16, 17, 17), (8, 16, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((2, 12, 7, 10), (4, 12, 3, 3), dict(pads=[0, 2, 1, 0])),
    ((1, 8, 6, 6), (4, 8, 3, 3), {}),
    ((3, 10, 8, 5), (5, 10, 2, 3), dict(pads=[1, 0, 0, 2])),
    ((1, 8, 7, 7), (2, 8, 5, 5), dict(auto_pad="SAME_UPPER")),
    ((1, 8, 6, 7), (3, 8, 4, 2), dict(auto_pad="SAME_LOWER")),
    ((1, 6, 5, 5), (3, 6, 5, 5), {}),
], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_taps_path_matches_onnxruntime(case, dtype, bias):
    xs, ws, attrs = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype) if bias else None
    op = get_op("Conv")
    got = op.kernel([x, w] + ([b] if bias else []), op.resolve_attrs(attrs, num_outputs=1),
                    KernelContext())[0]
    _assert_matches_ort(got, x, w, b, attrs, relu=False)


def _fused_conv(x, w, b, attrs, fused):
    """Run `conv_nd` as the Session's fused Conv step does: twice with one weight cache
    (the second call reads what the first cached), with Relu when `fused` ends in
    "relu", and with `out=` a channel slice of a NaN-filled wider buffer when it
    starts with "out" (checked to be returned and the rest left alone)."""
    from onegraph.ops import conv as conv_ops

    resolved = get_op("Conv").resolve_attrs(attrs, num_outputs=1)
    cache: dict = {}
    out = buf = None
    for _ in range(2):
        if fused.startswith("out") and x.dtype != np.float16:
            shape = conv_ops.conv_nd(x, w, b, resolved).shape
            buf = np.full((shape[0], shape[1] + 5) + shape[2:], np.nan, x.dtype)
            out = buf[:, 2:2 + shape[1]]
        got = conv_ops.conv_nd(x, w, b, resolved, cache, out=out,
                               relu=fused.endswith("relu"))
    if out is not None:
        assert got is out and np.isnan(buf[:, :2]).all() and np.isnan(buf[:, -3:]).all()
    return got, cache


def _run_conv(x, w, b, attrs, fused):
    """The Conv kernel as registered ("plain"), or as the Session's fused step calls it
    (`_fused_conv`)."""
    if fused == "plain":
        op = get_op("Conv")
        return op.kernel([x, w] + ([] if b is None else [b]),
                         op.resolve_attrs(attrs, num_outputs=1), KernelContext())[0]
    return _fused_conv(x, w, b, attrs, fused)[0]


def _assert_matches_ort(got, x, w, b, attrs, relu):
    """got against onnxruntime's Conv (+ Relu); float64 is compared in float32."""
    f32 = (lambda a: None if a is None else a.astype(np.float32))
    want = _ort_conv(f32(x), f32(w), f32(b), attrs) if x.dtype == np.float64 else \
        _ort_conv(x, w, b, attrs)
    if relu:
        want = np.maximum(want, 0)
    assert got.dtype == x.dtype and got.shape == want.shape
    tol = 1e-2 if x.dtype == np.float16 else 1e-4
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol * np.abs(want.astype(np.float64)).max())


NHWC_CASES = [
    ((1, 32, 7, 7), (48, 32, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((2, 24, 14, 14), (40, 24, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
    ((1, 16, 9, 12), (20, 16, 3, 2), dict(pads=[0, 1, 2, 0], strides=[1, 2])),
    ((3, 20, 8, 8), (16, 20, 1, 3), dict(pads=[0, 1, 0, 1])),
    ((1, 16, 13, 13), (32, 16, 5, 5), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    ((1, 17, 6, 6), (9, 17, 2, 2), {}),
]


@pytest.mark.parametrize("case", NHWC_CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("fused", ["plain", "cache", "cache+relu", "out+relu"])
def test_conv_channels_last_path_matches_onnxruntime(case, dtype, bias, fused,
                                                     numpy_kernels):
    """`ops.conv._conv_nhwc_2d` (small images, C >= 16), called as the Conv kernel or
    as the Session's fused Conv calls it: with a per-node cache, Relu, and `out=` a
    channel slice of a larger (Concat) buffer."""
    xs, ws, attrs = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype) if bias else None
    _assert_matches_ort(_run_conv(x, w, b, attrs, fused), x, w, b, attrs,
                        fused.endswith("relu"))


def test_conv_channels_last_path_is_taken(numpy_kernels):
    """The cases above really run the channels-last path (not a fallback; numba's
    direct taps take some of them when the JIT backend is numba)."""
    from onegraph.ops import conv as conv_ops

    calls = []
    real = conv_ops._conv_nhwc_2d
    try:
        conv_ops._conv_nhwc_2d = lambda *a: (calls.append(1), real(*a))[1]
        for xs, ws, attrs in NHWC_CASES:
            x = np.ones(xs, np.float32)
            w = np.ones(ws, np.float32)
            conv_ops.conv_nd(x, w, None, get_op("Conv").resolve_attrs(attrs, num_outputs=1),
                             {})
    finally:
        conv_ops._conv_nhwc_2d = real
    assert len(calls) == len(NHWC_CASES)


WINOGRAD_CASES = [
    ((1, 64, 20, 20), (70, 64, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((2, 64, 21, 23), (65, 64, 3, 3), dict(pads=[1, 1, 1, 1])),      # odd output sizes
    ((1, 66, 22, 21), (64, 66, 3, 3), dict(pads=[0, 2, 1, 0])),      # asymmetric pads
    ((1, 64, 22, 21), (48, 64, 3, 3), dict(pads=[2, 0, 0, 2])),      # pads past a tap
    ((1, 64, 22, 22), (40, 64, 3, 3), {}),                           # no padding
    ((1, 64, 20, 20), (64, 64, 3, 3), dict(auto_pad="SAME_LOWER")),
    ((1, 96, 12, 12), (96, 96, 3, 3), dict(pads=[1, 1, 1, 1])),      # small, even, wide
]


@pytest.mark.parametrize("case", WINOGRAD_CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("fused", ["cache", "cache+relu", "out+relu"])
def test_conv_winograd_path_matches_onnxruntime(case, dtype, bias, fused, jit_backend):
    """`ops.conv._conv_winograd_3x3` (3x3 stride 1, shapes `_winograd_pays` accepts, a
    weight cache) as the Session's fused Conv calls it, against onnxruntime; with
    numpy's transforms and numba's."""
    xs, ws, attrs = case
    rng = np.random.default_rng(2)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype) if bias else None
    got, cache = _fused_conv(x, w, b, attrs, fused)
    assert any(k[0] == "w_winograd" for k in cache if isinstance(k, tuple))
    _assert_matches_ort(got, x, w, b, attrs, fused.endswith("relu"))


def test_conv_winograd_float64_is_exact_to_float64_rounding(jit_backend):
    """float64 through Winograd against a float64 direct sum (onnxruntime has none)."""
    from onegraph.ops import conv as conv_ops

    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 64, 20, 20))
    w = rng.standard_normal((40, 64, 3, 3))
    cache: dict = {}
    got = conv_ops.conv_nd(x, w, None, get_op("Conv").resolve_attrs(
        dict(pads=[1, 1, 1, 1]), num_outputs=1), cache)
    assert ("w_winograd", np.dtype(np.float64)) in cache
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = sum(np.einsum("mc,nchw->nmhw", w[:, :, a, b], xp[:, :, a:a + 20, b:b + 20])
               for a in range(3) for b in range(3))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _random_3x3_cases(seed, trials):
    """Random small 3x3 stride-1 convs for the float64 sweeps: yields (trial, (x, w, b,
    pads, ho, wo, relu)), skipping padded images smaller than the kernel."""
    rng = np.random.default_rng(seed)
    for trial in range(trials):
        h, w = (int(v) for v in rng.integers(1, 16, 2))
        pads = [int(v) for v in rng.integers(0, 6, 4)]
        ho, wo = h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2
        if ho < 1 or wo < 1:
            continue
        n, c, m = (int(v) for v in rng.integers(1, (3, 5, 5)))
        x = rng.standard_normal((n, c, h, w))
        wt = rng.standard_normal((m, c, 3, 3))
        b = rng.standard_normal(m) if trial % 2 else None
        yield trial, (x, wt, b, pads, ho, wo, trial % 3 == 0)


def _direct_3x3(x, wt, b, pads, ho, wo, relu):
    """The oracle: the nine taps summed directly in float64, bias and Relu after."""
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    want = sum(np.einsum("mc,nchw->nmhw", wt[:, :, a, e], xp[:, :, a:a + ho, e:e + wo])
               for a in range(3) for e in range(3))
    if b is not None:
        want = want + b.reshape(1, -1, 1, 1)
    return np.maximum(want, 0) if relu else want


def _count_compiled(monkeypatch, jit_backend):
    """A list that `_winograd_compiled` (numba's transforms) appends to per call; the
    numpy backend must never call it."""
    from onegraph.ops import conv as conv_ops

    calls = []
    real = conv_ops._winograd_compiled

    def recording(*args):
        assert jit_backend == "numba"
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(conv_ops, "_winograd_compiled", recording)
    return calls


def test_winograd_geometry_sweep_float64(jit_backend, monkeypatch):
    """`_conv_winograd_3x3` called directly on 1x1 to 15x15 images with 0-5 pixels of
    padding per side (a phase may hold no image values at all), odd and even output
    sizes, batch 1-2, with and without bias and Relu: exact to float64 rounding
    against a direct sum of the nine taps; numpy's transforms and numba's."""
    from onegraph.ops import conv as conv_ops

    calls = _count_compiled(monkeypatch, jit_backend)
    checked = 0
    for _, case in _random_3x3_cases(11, 200):
        x, wt, b, pads, ho, wo, relu = case
        y = np.empty((x.shape[0], wt.shape[0], ho * wo))
        conv_ops._conv_winograd_3x3(x, wt, b, pads[:2], [ho, wo], {}, relu, y)
        want = _direct_3x3(*case)
        np.testing.assert_allclose(y.reshape(want.shape), want, rtol=1e-12, atol=1e-12,
                                   err_msg=f"x {x.shape} pads {pads}")
        checked += 1
    assert checked > 150
    assert len(calls) == (checked if jit_backend == "numba" else 0)


@pytest.mark.parametrize("m, c, tiles", [(300, 240, 60), (24, 16, 49)])
def test_winograd_plane_products(m, c, tiles, blas_backend, taken_by):
    """`_winograd_products`: MKL's packed GEMM plane by plane where it takes the planes
    (large weights, MKL backend), numpy's batched matmul otherwise; the same products
    either way, into strided planes (as `_wino_planes` lays them out)."""
    from onegraph.ops import conv as conv_ops

    rng = np.random.default_rng(6)
    u = rng.standard_normal((16, m, c)).astype(np.float32)
    v = rng.standard_normal((16, c + 3, tiles))[:, :c].astype(np.float32)[:, :, :tiles]
    store = np.full((16, m, tiles + 5), np.nan, np.float32)
    prod = store[:, :, :tiles]
    packed = taken_by(conv_ops, "matmul_constant")
    conv_ops._winograd_products(u, v, prod, {})
    np.testing.assert_allclose(prod, np.matmul(u.astype(np.float64), v), rtol=1e-4,
                               atol=1e-4 * np.sqrt(c))
    assert np.isnan(store[:, :, tiles:]).all()
    assert any(packed) == (blas_backend == "mkl" and m * c >= 1 << 16), packed


@pytest.mark.parametrize("band_rows", [2, 4])
def test_winograd_in_bands_sweep_float64(band_rows, monkeypatch, jit_backend):
    """`_winograd_in_bands` with bands of 2 or 4 output rows (so most images here are
    split; a band may lie wholly in the top or bottom padding) writing into a
    (N, M, P) array and into a channel slice of a wider buffer: exact to float64
    rounding against a direct sum of the nine taps."""
    from onegraph.ops import conv as conv_ops

    monkeypatch.setattr(conv_ops, "_WINO_BAND_ROWS", band_rows)
    calls = _count_compiled(monkeypatch, jit_backend)
    split = 0
    for trial, case in _random_3x3_cases(12, 120):
        x, wt, b, pads, ho, wo, relu = case
        n, m = x.shape[0], wt.shape[0]
        sliced = trial % 4 == 1
        wide = np.full((n, m + 3, ho, wo), np.nan)
        y = wide[:, 1:m + 1].reshape(n, m, ho * wo) if sliced else np.empty((n, m, ho * wo))
        conv_ops._winograd_in_bands(x, wt, b, pads[:2], [ho, wo], {}, relu, y)
        want = _direct_3x3(*case)
        got = wide[:, 1:m + 1] if sliced else y.reshape(want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                   err_msg=f"x {x.shape} pads {pads}")
        if sliced:
            assert np.isnan(wide[:, 0]).all() and np.isnan(wide[:, m + 1:]).all()
        split += ho > 2 * band_rows
    assert split > 20
    assert bool(calls) == (jit_backend == "numba")


def test_winograd_is_chosen_where_it_was_measured_faster():
    from onegraph.ops.conv import _winograd_pays

    assert _winograd_pays(64, 64, (56, 56)) and _winograd_pays(128, 128, (14, 14))
    assert _winograd_pays(32, 128, (27, 27)) and _winograd_pays(64, 256, (13, 13))
    assert _winograd_pays(128, 32, (28, 28))
    assert not _winograd_pays(16, 64, (55, 55))  # few input channels
    assert not _winograd_pays(32, 48, (20, 20))  # few channels both sides
    assert not _winograd_pays(64, 64, (13, 13))  # small image, 64 channels
    assert not _winograd_pays(128, 32, (14, 14))  # small image, few outputs
    assert not _winograd_pays(32, 128, (13, 13))  # small image, few inputs
    assert not _winograd_pays(512, 512, (7, 7))  # tiny image
    # with numba's transforms, also from 14x14 at C*M/(C+M) >= 16
    assert _winograd_pays(128, 32, (14, 14), compiled=True)
    assert _winograd_pays(32, 32, (28, 28), compiled=True)
    assert not _winograd_pays(16, 64, (55, 55), compiled=True)
    assert not _winograd_pays(48, 192, (13, 13), compiled=True)
    assert not _winograd_pays(128, 32, (7, 7), compiled=True)
    assert _winograd_pays(64, 256, (13, 13), compiled=True)  # as without


def test_conv_taps_cases_take_the_taps_path():
    """The GEMM-then-shift cases above really run `_conv_taps_2d`."""
    from onegraph.ops import conv as conv_ops

    calls = []
    real = conv_ops._conv_taps_2d
    cases = [((1, 16, 17, 17), (8, 16, 3, 3), dict(pads=[1, 1, 1, 1])),
             ((2, 12, 7, 10), (4, 12, 3, 3), dict(pads=[0, 2, 1, 0]))]
    try:
        conv_ops._conv_taps_2d = lambda *a: (calls.append(1), real(*a))[1]
        for xs, ws, attrs in cases:
            op = get_op("Conv")
            op.kernel([np.ones(xs, np.float32), np.ones(ws, np.float32)],
                      op.resolve_attrs(attrs, num_outputs=1), KernelContext())
    finally:
        conv_ops._conv_taps_2d = real
    assert len(calls) == len(cases)


def test_conv_taps_path_keeps_its_reordered_weights_in_the_cache():
    """With the fused Conv's cache the taps path reorders its weights once; the
    second run uses them from the cache and still gives onnxruntime's output."""
    from onegraph.ops.conv import conv_nd

    rng = np.random.default_rng(8)
    # (20x20: past the channels-last path's small images; M <= C/2, not Winograd's)
    x = rng.standard_normal((1, 64, 20, 20)).astype(np.float32)
    w = rng.standard_normal((16, 64, 3, 3)).astype(np.float32)
    attrs = dict(pads=[1, 1, 1, 1])
    cache: dict = {}
    first = conv_nd(x, w, None, attrs, cache)
    wt = cache[("w_taps", np.dtype(np.float32))]
    second = conv_nd(x, w, None, attrs, cache)
    assert cache[("w_taps", np.dtype(np.float32))] is wt
    want = _ort_conv(x, w, None, attrs)
    for got in (first, second):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


ONES_ROW_CASES = [
    ((1, 8, 9, 9), (24, 8, 1, 1), {}),
    ((2, 6, 7, 5), (12, 6, 1, 1), {}),                                  # batch, M = 2C
    ((1, 8, 11, 10), (32, 8, 1, 1), dict(strides=[2, 2])),              # strided input view
    ((2, 4, 9, 8), (16, 4, 1, 1), dict(strides=[3, 2])),
    ((1, 12, 7, 7), (12, 3, 1, 1), dict(group=4)),                     # grouped: always
    ((2, 8, 9, 8), (4, 2, 1, 1), dict(group=4)),                       # M < C
    ((1, 12, 11, 10), (24, 6, 1, 1), dict(group=2, strides=[2, 2])),   # grouped, strided
]


@pytest.mark.parametrize("case", ONES_ROW_CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("fused", ["cache", "cache+relu", "out+relu"])
def test_conv_1x1_bias_as_ones_row_matches_onnxruntime(case, dtype, fused):
    """1x1 convs with M >= 2C or groups and a bias, as the Session's fused Conv calls
    them, take the bias through the GEMM (`_pointwise_with_ones_row`): against
    onnxruntime, and the path is really taken (the cached [W | b] matrix)."""
    xs, ws, attrs = case
    rng = np.random.default_rng(5)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    got, cache = _fused_conv(x, w, b, attrs, fused)
    assert cache["w_bias"].shape == (ws[0], ws[1] + 1)
    _assert_matches_ort(got, x, w, b, attrs, fused.endswith("relu"))


def test_conv_1x1_keeps_the_output_pass_bias_when_outputs_are_few():
    """M < 2C: the bias is added to the output (no [W | b] built), still correct."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 16, 6, 6)).astype(np.float32)
    w = rng.standard_normal((20, 16, 1, 1)).astype(np.float32)
    b = rng.standard_normal(20).astype(np.float32)
    got, cache = _fused_conv(x, w, b, {}, "cache")
    assert "w_bias" not in cache
    _assert_matches_ort(got, x, w, b, {}, relu=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("group, shuffle", [(4, 4), (3, 3), (4, 2), (2, None)])
def test_grouped_1x1_ones_row_writes_the_channel_shuffle(group, shuffle, dtype):
    """A grouped 1x1 conv with a bias asked for ShuffleNet's channel shuffle writes
    each group's GEMM straight into the shuffled channels (shuffle == group) or
    shuffles afterwards (another g): against onnxruntime's Conv, shuffled by numpy."""
    from onegraph.ops import conv as conv_ops

    rng = np.random.default_rng(7)
    n, c, m = 2, 12, 24
    x = rng.standard_normal((n, c, 5, 6)).astype(dtype)
    w = rng.standard_normal((m, c // group, 1, 1)).astype(dtype)
    b = rng.standard_normal(m).astype(dtype)
    attrs = dict(group=group)
    cache: dict = {}
    resolved = get_op("Conv").resolve_attrs(attrs, num_outputs=1)
    for _ in range(2):  # the second call runs on the cached [W | b]
        got = conv_ops.conv_nd(x, w, b, resolved, cache, shuffle=shuffle, relu=True)
    assert cache["w_bias"].shape == (m, c // group + 1)
    want = np.maximum(_ort_conv(x.astype(np.float32), w.astype(np.float32),
                                b.astype(np.float32), attrs), 0)
    if shuffle:
        want = want.reshape(n, shuffle, m // shuffle, 5, 6).transpose(0, 2, 1, 3, 4)
    assert got.dtype == dtype and got.shape == (n, m, 5, 6)
    np.testing.assert_allclose(got, want.reshape(n, m, 5, 6), rtol=1e-4, atol=1e-4)


def test_float16_weights_of_a_cached_conv_are_converted_once():
    """The fused Conv's float16 weights go to float32 once, into its cache (which is
    for fixed weights), and are used from there on later runs."""
    from onegraph.ops.conv import conv_nd

    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 16, 14, 14)).astype(np.float16)
    w = (rng.standard_normal((32, 16, 3, 3)) / 8).astype(np.float16)
    b = rng.standard_normal(32).astype(np.float16)
    attrs = dict(pads=[1, 1, 1, 1])
    cache: dict = {}
    first = conv_nd(x, w, b, attrs, cache)
    (held_w, wide), = [v for k, v in cache.items() if k == ("w", np.dtype(np.float32))]
    assert held_w is w and wide.dtype == np.float32
    second = conv_nd(x, w, b, attrs, cache)
    assert cache[("w", np.dtype(np.float32))][1] is wide
    want = _ort_conv(x, w, b, attrs)
    for got in (first, second):
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=1e-2, atol=1e-2)


# 1x1 convs on small images through MKL's packed GEMM in the (P, C) @ (C, M) orientation
# (`ops.conv._pointwise_transposed`): sizes MKL takes (>= 4M multiply-adds, >= 64k
# weights), pixel counts up to 169 that are no multiple of 16
TRANSPOSED_CASES = [
    ((1, 512, 7, 7), (256, 512, 1, 1), {}),                           # M < 2C
    ((2, 256, 7, 7), (768, 256, 1, 1), {}),                           # M >= 2C, batch
    ((1, 512, 13, 13), (128, 512, 1, 1), {}),
    ((1, 256, 14, 14), (512, 256, 1, 1), dict(strides=[2, 2])),       # strided input
    ((1, 320, 9, 11), (320, 320, 1, 1), {}),
]


@pytest.mark.parametrize("case", TRANSPOSED_CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("fused", ["cache", "cache+relu", "out+relu"])
def test_conv_1x1_small_images_transposed_matches_onnxruntime(case, dtype, bias, fused,
                                                              blas_backend, taken_by):
    """Under MKL these 1x1 convs take the transposed product (its pack of W^T is in the
    cache); under numpy the usual one. Either way they match onnxruntime, with the bias,
    the Relu and `out=` a channel slice of a wider buffer."""
    from onegraph.ops import conv as conv_ops

    taken = taken_by(conv_ops, "_pointwise_transposed")
    xs, ws, attrs = case
    rng = np.random.default_rng(8)
    x = rng.standard_normal(xs).astype(dtype)
    w = (rng.standard_normal(ws) / np.sqrt(ws[1])).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype) if bias else None
    got, _ = _fused_conv(x, w, b, attrs, fused)
    assert taken and all(taken) == (blas_backend == "mkl"), taken
    _assert_matches_ort(got, x, w, b, attrs, fused.endswith("relu"))


@pytest.mark.parametrize("npix, pays", [(49, True), (81, True), (169, True), (64, False),
                                        (144, False), (196, False), (4, True)])
def test_transposed_1x1_rule(npix, pays):
    from onegraph.ops.conv import _transposed_pays

    assert _transposed_pays(npix) == pays


def test_transposed_1x1_asks_the_blas_once_per_declined_shape(blas_backend, monkeypatch):
    """A 1x1 conv too small for MKL is declined once per input shape and then left to
    numpy without asking again (or never asked under the numpy backend); results stay
    those of the plain path."""
    from onegraph.ops import conv as conv_ops

    asked = []
    real = conv_ops.matmul_constant

    def counting(a, b, cache, constant="b", out=None, accumulate=False):
        asked.append(constant)
        return real(a, b, cache, constant, out, accumulate)

    monkeypatch.setattr(conv_ops, "matmul_constant", counting)
    rng = np.random.default_rng(9)
    w = rng.standard_normal((32, 64, 1, 1)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    cache: dict = {}
    for hw in (7, 7, 7, 9, 9):
        x = rng.standard_normal((1, 64, hw, hw)).astype(np.float32)
        got = conv_ops.conv_nd(x, w, b, {}, cache, relu=True)
        want = np.maximum(np.einsum("mc,nchw->nmhw", w[:, :, 0, 0], x)
                          + b[:, None, None], 0)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert asked.count("b") == (2 if blas_backend == "mkl" else 0), asked


ADD_CASES = [  # (x, w, attrs): each reaches a different conv path
    ((1, 64, 14, 14), (256, 64, 1, 1), {}),                            # ones row
    ((2, 256, 14, 14), (128, 256, 1, 1), {}),                          # plain 1x1
    ((1, 512, 7, 7), (256, 512, 1, 1), {}),                            # transposed
    ((1, 128, 28, 28), (256, 128, 1, 1), dict(strides=[2, 2])),       # strided 1x1
    ((1, 64, 16, 16), (64, 64, 3, 3), dict(pads=[1, 1, 1, 1])),       # Winograd
    ((1, 32, 7, 7), (48, 32, 3, 3), dict(pads=[1, 1, 1, 1])),         # channels-last
    ((1, 24, 9, 9), (48, 6, 1, 1), dict(group=4)),                     # grouped
]


@pytest.mark.parametrize("case", ADD_CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("relu", [True, False])
def test_conv_sums_into_the_residual(case, dtype, relu, blas_backend):
    """conv_nd(..., add=s) is relu(conv + s) written over s (a fitting array) on every
    path, twice on one cache (packs made, then used), against onnxruntime's Conv."""
    from onegraph.ops import conv as conv_ops

    xs, ws, attrs = case
    rng = np.random.default_rng(10)
    x = rng.standard_normal(xs).astype(dtype)
    w = (rng.standard_normal(ws) / np.sqrt(np.prod(ws[1:]))).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    resolved = get_op("Conv").resolve_attrs(attrs, num_outputs=1)
    conv = _ort_conv(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32),
                     attrs).astype(np.float64)
    cache: dict = {}
    for _ in range(2):
        s = rng.standard_normal(conv.shape).astype(dtype)
        want = conv + s
        if relu:
            want = np.maximum(want, 0)
        keep = s.copy()
        got = conv_ops.conv_nd(x, w, b, resolved, cache, relu=relu, add=s)
        assert got.dtype == dtype and got.shape == conv.shape
        assert np.shares_memory(got, s) and not np.array_equal(s, keep)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_conv_residual_that_does_not_fit_is_added_apart():
    """A broadcast shortcut, a read-only one, another dtype: the sum is a new array and
    the shortcut is left as it was; one that does not broadcast is a ShapeError."""
    from onegraph.errors import ShapeError
    from onegraph.ops import conv as conv_ops

    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 16, 6, 6)).astype(np.float32)
    w = rng.standard_normal((32, 16, 1, 1)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    plain = conv_ops.conv_nd(x, w, b, {})
    read_only = rng.standard_normal(plain.shape).astype(np.float32)
    read_only.flags.writeable = False
    for s in (rng.standard_normal((1, 32, 1, 1)).astype(np.float32), read_only,
              rng.standard_normal(plain.shape).astype(np.float64)):
        keep = s.copy()
        got = conv_ops.conv_nd(x, w, b, {}, {}, relu=True, add=s)
        assert not np.shares_memory(got, s) and got.dtype == np.float32
        np.testing.assert_array_equal(s, keep)
        np.testing.assert_allclose(got, np.maximum(plain + s, 0), rtol=1e-5, atol=1e-5)
    with pytest.raises(ShapeError, match="residual of shape"):
        conv_ops.conv_nd(x, w, b, {}, {}, add=np.zeros((1, 31, 6, 6), np.float32))


@pytest.fixture
def winograd4(monkeypatch, numba_jit):
    """numba's F(4x4, 3x3) Winograd for every 3x3 conv that takes Winograd (skipped
    where numba does not import); a list of the tile sizes that ran."""
    from onegraph.ops import conv as conv_ops

    tiles = []
    monkeypatch.setattr(conv_ops, "_winograd4_pays", lambda *a: tiles.append(4) or True)
    return tiles


def test_winograd4_geometry_sweep_float64(winograd4):
    """F(4x4, 3x3) on the random small convs of the F(2x2) sweeps (1x1 to 15x15 images,
    0-5 pixels of padding, partial last tile rows and columns, batch 1-2, bias, Relu),
    directly and in bands of 4 rows: float64 within 1e-11 of the direct sum (its
    transforms' multiples 4, 5, 8 cost a few more digits than F(2x2)'s)."""
    from onegraph.ops import conv as conv_ops

    checked = 0
    for trial, case in _random_3x3_cases(13, 200):
        x, wt, b, pads, ho, wo, relu = case
        y = np.empty((x.shape[0], wt.shape[0], ho * wo))
        if trial % 2:
            conv_ops._conv_winograd_3x3(x, wt, b, pads[:2], [ho, wo], {}, relu, y)
        else:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(conv_ops, "_WINO4_BAND_ROWS", 4)
                conv_ops._winograd_in_bands(x, wt, b, pads[:2], [ho, wo], {}, relu, y)
        want = _direct_3x3(*case)
        np.testing.assert_allclose(y.reshape(want.shape), want, rtol=1e-11, atol=1e-11,
                                   err_msg=f"x {x.shape} pads {pads}")
        checked += 1
    assert checked > 150 and len(winograd4) >= checked


@pytest.mark.parametrize("case", WINOGRAD_CASES + [
    ((1, 64, 28, 28), (64, 64, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((2, 72, 37, 30), (64, 72, 3, 3), dict(pads=[1, 1, 1, 1])),      # partial tiles
], ids=str)
@pytest.mark.parametrize("fused", ["cache", "cache+relu", "out+relu"])
def test_winograd4_matches_onnxruntime(case, fused, winograd4):
    """float32 F(4x4, 3x3) as the Session's fused Conv calls it, against onnxruntime
    (rtol 1e-4 and 1e-4 of the largest output)."""
    xs, ws, attrs = case
    rng = np.random.default_rng(5)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    got, cache = _fused_conv(x, w, b, attrs, fused)
    assert any(len(k) == 3 and k[2] == 4 for k in cache if isinstance(k, tuple)
               and k[0] == "w_winograd") and winograd4
    _assert_matches_ort(got, x, w, b, attrs, fused.endswith("relu"))


def test_winograd4_is_chosen_where_it_was_measured_faster():
    from onegraph.ops.conv import _winograd4_pays

    assert _winograd4_pays(64, 64, 56) and _winograd4_pays(64, 192, 56)
    assert _winograd4_pays(128, 128, 28) and _winograd4_pays(96, 96, 28)
    assert not _winograd4_pays(256, 256, 14)   # 1.05x
    assert not _winograd4_pays(32, 128, 27)    # few input channels
    assert not _winograd4_pays(128, 32, 28)    # few output channels

"""onnxruntime's tensor and math contrib ops (`ops/ms_tensor.py`) against onnxruntime.

The oracle is onnxruntime's CPUExecutionProvider on one-node models over seeded random
inputs, every declared output compared. onnxruntime has no CPU kernel for IsAllFinite,
ComplexMul, ComplexMulConj, Rfft, Irfft and TorchEmbedding: their oracle is the same
computation written as standard ONNX ops (IsNaN/IsInf/ReduceMax; Split/Mul/Sub/Add/
Concat; DFT; Gather) run in onnxruntime, and for Irfft of 2-D signals an explicit DFT
matrix formula written here from the definition.

Bounds: TOL rtol = atol = 1e-5 for float32 and float64 (measured max abs error 8.3e-7
for GridSample's bicubic taps, 4.8e-7 for CDist and Range, 1.2e-7 for
WordConvEmbedding; Inverse 6.1e-4 on entries ~1e2 of ill-conditioned random 4x4
matrices, inside rtol); exact (0 error, assert_array_equal) for integer, index and
hash outputs (MurmurHash3 bit for bit, DynamicTimeWarping's path, Unique's idx/counts,
UnfoldTensor) and measured 0 for GatherND, Pad, Trilu, CropAndResize (both modes),
ConvTransposeWithDynamicPads and NGramRepeatBlock; FFT_TOL 1e-4 for Rfft/Irfft against
onnxruntime's DFT (measured 1.3e-5 on outputs of magnitude ~10, 8.2e-7 for Irfft);
F16_TOL 2e-3 for float16 (measured 3.9e-3 abs = one float16 step on Inverse entries of
magnitude 4-8, inside rtol: onnxruntime inverts float16 matrices in float16, onegraph in
float32 with one rounding at the end).
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import (ExecutionError, OpAttributeError, ShapeError,  # noqa: E402
                             UnsupportedOpError)
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from .single_node import node_inputs, ort_session  # noqa: E402

MS = "com.microsoft"
TOL = dict(rtol=1e-5, atol=1e-5)
FFT_TOL = dict(rtol=1e-4, atol=1e-4)
F16_TOL = dict(rtol=2e-3, atol=2e-3)
F32 = np.float32


def _model(op, inputs, n_out, domain=MS, **attrs):
    """A one-node model of contrib `op` with outputs out0..out{n_out - 1}."""
    names, graph_inputs, _ = node_inputs(inputs)
    while names and names[-1] == "":
        names.pop()
    outs = [f"out{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, domain=domain, **attrs)
    graph = helper.make_graph([node], op, graph_inputs,
                              [helper.make_empty_tensor_value_info(o) for o in outs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _feeds(inputs):
    """The feed dict of `inputs` (omitted optional ones left out)."""
    return {k: np.asarray(v) for k, v in inputs if v is not None}


def _og(model, feeds):
    """onegraph's Session outputs of the imported `model`."""
    return onegraph.Session(from_onnx(model)).run([o.name for o in model.graph.output], feeds)


def _compare(got, want, tol):
    """Dtypes and shapes equal; values within `tol` (exact when None or not float)."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if tol is None or g.dtype.kind not in "fc":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **tol)


def _check(op, inputs, n_out=1, tol=TOL, **attrs):
    """Run the one-node model in onnxruntime and onegraph; compare every output."""
    model = _model(op, inputs, n_out, **attrs)
    feeds = _feeds(inputs)
    want = ort_session(model, optimize=False).run(None, feeds)
    got = _og(model, feeds)
    _compare(got, want, tol)
    return got


def _ms_only(op, inputs, n_out=1, **attrs):
    """onegraph's outputs of a one-node contrib model (for ops without a CPU kernel)."""
    return _og(_model(op, inputs, n_out, **attrs), _feeds(inputs))


def _kernel(op):
    """The contrib op's kernel as a function of (inputs, **attrs)."""
    opdef = REGISTRY.get(op, MS)
    return lambda inputs, **attrs: opdef.kernel(inputs, opdef.resolve_attrs(attrs), None)


@pytest.fixture
def rng():
    """A seeded generator per test."""
    return np.random.default_rng(0)


# --------------------------------------------------------------------------------------
# ExpandDims, Range, Pad, GatherND, Trilu, Unique, Inverse, CDist
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_expand_dims(rng, axis):
    """A 1 inserted at positive and negative axes."""
    _check("ExpandDims", [("x", rng.random((2, 3)).astype(F32)),
                          ("axis", np.array(axis, np.int32))])


_RANGES = [(1.0, 5.0, 0.3), (2.5, -1.0, -0.25), (10, -5, -3), (0, 7, None), (3, 3, 1)]
_RANGE_CASES = [(r, d) for r in _RANGES for d in (np.float32, np.float64)] + \
    [(r, d) for r in _RANGES[2:] for d in (np.int16, np.int32, np.int64)]


@pytest.mark.parametrize("bounds,dtype", _RANGE_CASES)
def test_range(bounds, dtype):
    """Float and integer ranges, up and down, empty, with delta defaulted."""
    start, limit, delta = bounds
    inputs = [("s", np.array(start, dtype)), ("l", np.array(limit, dtype))]
    if delta is not None:
        inputs.append(("d", np.array(delta, dtype)))
    _check("Range", inputs)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("pads", [[1, -1, 2, 1], [0, 2, 0, 0], [[2, 0, 1, 3]]])
def test_pad(rng, mode, pads):
    """Each mode with positive, negative (crop) and (1, 2 * rank) pads."""
    value = np.array(2.5, F32) if mode == "constant" else None
    _check("Pad", [("x", rng.random((3, 4)).astype(F32)), ("p", np.array(pads, np.int64)),
                   ("v", value)], mode=mode)


def test_pad_float16_and_one_element_value(rng):
    """float16 data with a one-element 1-D value."""
    _check("Pad", [("x", rng.random((2, 3, 2)).astype(np.float16)),
                   ("p", np.array([0, 1, 1, 1, 0, 2], np.int64)),
                   ("v", np.array([7], np.float16))])


@pytest.mark.parametrize("data_shape,idx", [
    ((2, 3, 4), [[[0, -1]], [[1, 2]]]), ((2, 3), [[1], [0]]), ((2, 3), [[0, 0], [1, 2]]),
    ((4, 2, 3), [[3, 1, -3]])])
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
def test_gather_nd(rng, data_shape, idx, idx_dtype):
    """Full and partial index tuples, negative indices, int32 and int64."""
    _check("GatherND", [("x", rng.random(data_shape).astype(F32)),
                        ("i", np.array(idx, idx_dtype))])


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, -1, 2, 9])
def test_trilu(rng, upper, k):
    """Upper and lower triangles, k absent, negative, beyond the matrix."""
    kk = None if k is None else np.array(k, np.int64)
    _check("Trilu", [("x", rng.random((2, 3, 4)).astype(F32)), ("k", kk)], upper=upper)


@pytest.mark.parametrize("x", [
    [2, 1, 1, 3, 4, 3], [5.0], [np.nan, 1, np.nan, 1, 0, -0.0], [-0.0, 2, 0.0],
    list(range(9, -1, -1))])
def test_unique(x):
    """First-occurrence order, each NaN distinct, -0.0 equal to 0.0."""
    got = _check("Unique", [("x", np.array(x, F32))], 3)
    np.testing.assert_array_equal(got[0][got[1]], np.array(x, F32))  # idx maps back
    # the sign of a zero is the first occurrence's, as onnxruntime keeps it
    np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(_run_unique(x)))


def _run_unique(x):
    """onnxruntime's y of Unique(x)."""
    model = _model("Unique", [("x", np.array(x, F32))], 3)
    return ort_session(model, optimize=False).run(None, {"x": np.array(x, F32)})[0]


def test_unique_random(rng):
    """Many repeats."""
    _check("Unique", [("x", rng.integers(0, 6, 40).astype(F32))], 3)


def test_inverse(rng):
    """Batched float32, float64 and float16 matrices."""
    _check("Inverse", [("x", rng.standard_normal((2, 3, 4, 4)).astype(F32))])
    _check("Inverse", [("x", rng.standard_normal((5, 5)))])
    _check("Inverse", [("x", (rng.standard_normal((3, 3)) + 2 * np.eye(3))
                        .astype(np.float16))], tol=F16_TOL)


@pytest.mark.parametrize("metric", ["sqeuclidean", "euclidean"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cdist(rng, metric, dtype):
    """Both metrics, with a zero distance (onnxruntime's abs keeps it >= 0)."""
    a = rng.standard_normal((5, 4)).astype(dtype)
    b = np.concatenate([rng.standard_normal((3, 4)), a[:1]]).astype(dtype)  # one d = 0
    _check("CDist", [("a", a), ("b", b)], metric=metric)


# --------------------------------------------------------------------------------------
# ops without an onnxruntime CPU kernel: standard ONNX compositions as the oracle
# --------------------------------------------------------------------------------------


def _run_graph(nodes, inputs, outputs):
    """Run standard-ONNX `nodes` in onnxruntime: inputs (name, array), output names."""
    _, graph_inputs, _ = node_inputs(inputs)
    graph = helper.make_graph(nodes, "oracle", graph_inputs,
                              [helper.make_empty_tensor_value_info(o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)],
                              ir_version=9)
    return ort_session(model, optimize=False).run(None, _feeds(inputs))


def _is_all_finite_oracle(arrays, nan_only, inf_only):
    """IsAllFinite as IsNaN/IsInf, Or, Cast, ReduceMax, Max, Less in onnxruntime."""
    nodes, flags = [], []
    for i in range(len(arrays)):
        checks = [] if inf_only else [f"nan{i}"]
        checks += [] if nan_only else [f"inf{i}"]
        if not inf_only:
            nodes.append(helper.make_node("IsNaN", [f"x{i}"], [f"nan{i}"]))
        if not nan_only:
            nodes.append(helper.make_node("IsInf", [f"x{i}"], [f"inf{i}"]))
        bad = checks[0]
        if len(checks) == 2:
            nodes.append(helper.make_node("Or", checks, [f"bad{i}"]))
            bad = f"bad{i}"
        nodes += [helper.make_node("Cast", [bad], [f"f{i}"], to=TensorProto.FLOAT),
                  helper.make_node("ReduceMax", [f"f{i}"], [f"m{i}"], keepdims=0)]
        flags.append(f"m{i}")
    nodes += [helper.make_node("Max", flags, ["any"]),
              helper.make_node("Constant", [], ["half"], value_float=0.5),
              helper.make_node("Less", ["any", "half"], ["y"])]
    return _run_graph(nodes, [(f"x{i}", a) for i, a in enumerate(arrays)], ["y"])[0]


@pytest.mark.parametrize("flags", [dict(), dict(isnan_only=1), dict(isinf_only=1)])
@pytest.mark.parametrize("poison", [None, np.nan, np.inf, -np.inf])
def test_is_all_finite(rng, flags, poison):
    """Finite inputs and each kind of poison under each flag."""
    arrays = [rng.standard_normal((3, 4)).astype(F32), rng.standard_normal(5)]
    if poison is not None:
        arrays[1][2] = poison
    want = _is_all_finite_oracle(arrays, flags.get("isnan_only"), flags.get("isinf_only"))
    (got,) = _ms_only("IsAllFinite", [(f"x{i}", a) for i, a in enumerate(arrays)], **flags)
    assert got.dtype == np.bool_ and got.shape == () and bool(got) == bool(want)


def _complex_mul_oracle(a, b, conj):
    """(Conj) complex multiplication as Split/Neg/Mul/Sub/Add/Concat in onnxruntime."""
    nodes = [helper.make_node("Split", ["a"], ["ar", "ai"], axis=-1, num_outputs=2),
             helper.make_node("Split", ["b"], ["br", "bi0"], axis=-1, num_outputs=2),
             helper.make_node("Neg" if conj else "Identity", ["bi0"], ["bi"]),
             helper.make_node("Mul", ["ar", "br"], ["rr"]),
             helper.make_node("Mul", ["ai", "bi"], ["ii"]),
             helper.make_node("Mul", ["ar", "bi"], ["ri"]),
             helper.make_node("Mul", ["ai", "br"], ["ir"]),
             helper.make_node("Sub", ["rr", "ii"], ["re"]),
             helper.make_node("Add", ["ri", "ir"], ["im"]),
             helper.make_node("Concat", ["re", "im"], ["y"], axis=-1)]
    return _run_graph(nodes, [("a", a), ("b", b)], ["y"])[0]


@pytest.mark.parametrize("op", ["ComplexMul", "ComplexMulConj"])
@pytest.mark.parametrize("shapes", [((3, 4, 2), (3, 4, 2)), ((2, 1, 5, 2), (3, 1, 2)),
                                    ((2,), (4, 2))])
def test_complex_mul(rng, op, shapes):
    """Equal and broadcast shapes."""
    a = rng.standard_normal(shapes[0]).astype(F32)
    b = rng.standard_normal(shapes[1]).astype(F32)
    want = _complex_mul_oracle(a, b, op == "ComplexMulConj")
    (got,) = _ms_only(op, [("a", a), ("b", b)])
    _compare([got], [want], TOL)


def test_complex_mul_float16(rng):
    """float16 rounded once from float32 products."""
    a = rng.standard_normal((4, 2)).astype(np.float16)
    b = rng.standard_normal((4, 2)).astype(np.float16)
    want = _complex_mul_oracle(a.astype(F32), b.astype(F32), False).astype(np.float16)
    (got,) = _ms_only("ComplexMul", [("a", a), ("b", b)])
    _compare([got], [want], F16_TOL)


def _rfft_oracle(x, ndim):
    """Rfft as standard DFT nodes: a one-sided DFT over the last axis, then full DFTs
    over the other signal axes."""
    nodes = [helper.make_node("Unsqueeze", ["x", "last"], ["xc"]),
             helper.make_node("DFT", ["xc", "", "a1"], ["y1"], onesided=1)]
    inits = [("last", np.array([-1], np.int64)), ("a1", np.array(-2, np.int64))]
    for k in range(2, ndim + 1):
        nodes.append(helper.make_node("DFT", [f"y{k - 1}", "", f"a{k}"], [f"y{k}"]))
        inits.append((f"a{k}", np.array(-1 - k, np.int64)))
    return _run_graph(nodes, [("x", x)] + inits, [f"y{ndim}"])[0]


@pytest.mark.parametrize("shape,ndim", [((3, 8), 1), ((2, 7), 1), ((16,), 1),
                                        ((2, 4, 6), 2), ((2, 3, 4, 5), 3)])
def test_rfft(rng, shape, ndim):
    """1-D (even and odd lengths), 2-D and 3-D signals against DFT nodes."""
    x = rng.standard_normal(shape).astype(F32)
    want = _rfft_oracle(x, ndim)
    (got,) = _ms_only("Rfft", [("x", x)], signal_ndim=ndim)
    _compare([got], [want], FFT_TOL)


def _irfft_oracle_1d(spec):
    """The Hermitian completion of the m bins to n = 2m - 1, then onnxruntime's inverse
    DFT (which scales by 1/n), real part."""
    m = spec.shape[-2]
    full = np.concatenate([spec, spec[..., 1:, :][..., ::-1, :] * np.array([1, -1], F32)],
                          axis=-2)
    nodes = [helper.make_node("DFT", ["z", "", "ax"], ["y"], inverse=1)]
    y = _run_graph(nodes, [("z", full.astype(F32)), ("ax", np.array(-2, np.int64))],
                   ["y"])[0]
    assert y.shape[-2] == 2 * m - 1
    return y[..., 0]


def _irfft_formula(spec, ndim):
    """Irfft from the definition with explicit DFT matrices: the inverse transform of
    the Hermitian-symmetric spectrum, 1/N-scaled, real part."""
    z = spec[..., 0].astype(np.float64) + 1j * spec[..., 1]
    m = z.shape[-1]
    n = 2 * m - 1
    k = np.arange(m)
    t = np.arange(n)
    # bins k and n-k contribute X_k e^{+} + conj(X_k) e^{-} = 2 Re(X_k e^{+}) (k >= 1)
    weight = np.where(k == 0, 1.0, 2.0)
    basis = np.exp(2j * np.pi * np.outer(k, t) / n) * weight[:, None]  # (m, n)
    for axis in range(z.ndim - ndim, z.ndim - 1):  # full inverse DFTs first
        size = z.shape[axis]
        mat = np.exp(2j * np.pi * np.outer(np.arange(size), np.arange(size)) / size)
        z = np.moveaxis(np.tensordot(np.moveaxis(z, axis, -1), mat, axes=([-1], [0])),
                        -1, axis) / size
    return (np.real(z @ basis) / n)


@pytest.mark.parametrize("shape", [(3, 5, 2), (9, 2), (2, 2, 4, 2)])
def test_irfft_1d(rng, shape):
    """Batched 1-D spectra against onnxruntime's inverse DFT and the formula."""
    spec = rng.standard_normal(shape).astype(F32)
    spec[..., 0, 1] = 0  # a real DC bin: a spectrum some real signal has
    want = _irfft_oracle_1d(spec)
    (got,) = _ms_only("Irfft", [("x", spec)], signal_ndim=1)
    _compare([got], [want], FFT_TOL)
    np.testing.assert_allclose(got, _irfft_formula(spec, 1), **FFT_TOL)


def test_irfft_2d_and_round_trip(rng):
    """Irfft(Rfft(x)) == x for odd n; 2-D spectra against the formula."""
    x = rng.standard_normal((2, 4, 7)).astype(F32)  # odd n: Irfft's 2m - 1 gives it back
    (spec,) = _ms_only("Rfft", [("x", x)], signal_ndim=2)
    (back,) = _ms_only("Irfft", [("x", spec)], signal_ndim=2)
    np.testing.assert_allclose(back, x, **FFT_TOL)
    spec = rng.standard_normal((3, 4, 3, 2)).astype(F32)
    (got,) = _ms_only("Irfft", [("x", spec)], signal_ndim=2)
    assert got.shape == (3, 4, 5)
    np.testing.assert_allclose(got, _irfft_formula(spec, 2), **FFT_TOL)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_torch_embedding(rng, dtype):
    """Rows gathered for float and integer weights (padding_idx has no forward effect)."""
    weight = (rng.standard_normal((7, 3)) * 4).astype(dtype)
    idx = rng.integers(0, 7, (2, 5)).astype(np.int64)
    want = _run_graph([helper.make_node("Gather", ["w", "i"], ["y"], axis=0)],
                      [("w", weight), ("i", idx)], ["y"])[0]
    (got,) = _ms_only("TorchEmbedding", [("w", weight), ("i", idx),
                                         ("p", np.array(1, np.int64)),
                                         ("s", np.array(True))])
    _compare([got], [want], None)


# --------------------------------------------------------------------------------------
# CropAndResize, MurmurHash3, WordConvEmbedding, NGramRepeatBlock, DTW, Unfold, ...
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("crop", [(4, 3), (1, 1), (1, 5), (6, 1)])
def test_crop_and_resize(rng, mode, crop):
    """Boxes inside, outside, flipped and degenerate; crop sizes with a 1."""
    x = rng.random((2, 3, 5, 6)).astype(F32)
    rois = np.array([[0.1, 0.2, 0.9, 0.7], [-0.2, 0.0, 0.5, 1.3], [0.3, 0.3, 0.3, 0.8],
                     [0.9, 0.8, 0.1, 0.05], [0.0, 0.0, 1.0, 1.0]], F32)
    _check("CropAndResize", [("x", x), ("r", rois),
                             ("b", np.array([1, 0, 1, 0, 1], np.int32)),
                             ("c", np.array(crop, np.int32))], mode=mode,
           extrapolation_value=-1.5)


def test_crop_and_resize_random_boxes(rng):
    """Random boxes partly outside the image, both modes."""
    x = rng.random((3, 2, 7, 9)).astype(F32)
    rois = (rng.random((12, 4)) * 1.4 - 0.2).astype(F32)
    for mode in ("bilinear", "nearest"):
        _check("CropAndResize", [("x", x), ("r", rois),
                                 ("b", rng.integers(0, 3, 12).astype(np.int32)),
                                 ("c", np.array([5, 4], np.int32))], mode=mode)


@pytest.mark.parametrize("attrs", [dict(), dict(seed=7), dict(positive=0, seed=2 ** 31 + 5)])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.float32,
                                   np.float64])
def test_murmur_hash3(rng, attrs, dtype):
    """Every numeric input dtype, seeds, positive=0 (bit for bit)."""
    if np.dtype(dtype).kind == "f":
        x = (rng.standard_normal(40) * 1e3).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    _check("MurmurHash3", [("x", x.reshape(5, 8))], **attrs)


def test_murmur_hash3_strings():
    """Strings of every tail length, multi-byte UTF-8, a long one."""
    words = ["", "a", "ab", "abc", "abcd", "abcde", "hello world", "日本語テキスト",
             "x" * 37]
    for attrs in (dict(), dict(seed=123, positive=0)):
        _check("MurmurHash3", [("x", np.array(words, object).reshape(3, 3))], **attrs)


@pytest.mark.parametrize("width", [1, 2, 3])
def test_word_conv_embedding(rng, width):
    """Words shorter and longer than the conv window, zeros inside."""
    seq = np.array([[3, 1, 4, 0, 0], [5, 9, 2, 6, 5], [2, 0, 0, 0, 0], [7, 7, 0, 3, 0],
                    [1, 8, 8, 0, 2]], np.int32)
    _check("WordConvEmbedding", [("s", seq),
                                 ("w", rng.standard_normal((6, 1, width, 3)).astype(F32)),
                                 ("b", rng.standard_normal(6).astype(F32)),
                                 ("c", rng.standard_normal((10, 3)).astype(F32))],
           conv_window_size=width, embedding_size=6, char_embedding_size=3)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 13])
def test_ngram_repeat_block(rng, n):
    """n-gram sizes from 1 to longer than the sequence."""
    ids = rng.integers(0, 4, (3, 12)).astype(np.int64)
    ids[1, -3:] = ids[1, 2:5]  # a sure repeat of a trigram's head
    _check("NGramRepeatBlock", [("i", ids), ("s", rng.standard_normal((3, 6)).astype(F32))],
           ngram_size=n)


@pytest.mark.parametrize("shape", [(5, 7), (1, 6, 4), (1, 1), (9, 3), (1, 8), (8, 1)])
def test_dynamic_time_warping(rng, shape):
    """Square, tall, wide, 1 x 1 and (1, M, N) cost matrices."""
    _check("DynamicTimeWarping", [("x", rng.random(shape).astype(F32))])


def test_dynamic_time_warping_ties(rng):
    """Integer costs, where onnxruntime's tie rule picks the step."""
    # small integer costs make equal sums, where the kernel's tie rule decides
    for _ in range(5):
        _check("DynamicTimeWarping", [("x", rng.integers(0, 3, (7, 6)).astype(F32))])


@pytest.mark.parametrize("shape,attrs", [((3, 10, 2), dict(size=3, step=2, dim=1)),
                                         ((3, 10), dict(size=4)),
                                         ((7, 2), dict(size=3, step=3, dim=0)),
                                         ((5,), dict(size=5, step=4))])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
def test_unfold_tensor(rng, shape, attrs, dtype):
    """Steps smaller, equal and larger than the size; dims 0, 1 and -1."""
    _check("UnfoldTensor", [("x", (rng.random(shape) * 9).astype(dtype))], **attrs)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample(rng, mode, padding_mode, align_corners):
    """Every mode, padding mode and align_corners."""
    x = rng.random((2, 3, 5, 6)).astype(F32)
    grid = (rng.random((2, 4, 3, 2)) * 2.4 - 1.2).astype(F32)
    _check("GridSample", [("x", x), ("g", grid)], mode=mode, padding_mode=padding_mode,
           align_corners=align_corners)


def test_float16_image_ops(rng):
    """onnxruntime has float32-only CPU kernels for CropAndResize and GridSample: the
    float16 result must be onnxruntime's float32 result on the same (float16) values,
    rounded to float16."""
    x = rng.random((2, 3, 5, 6)).astype(np.float16)
    rois = np.array([[0.1, 0.2, 0.9, 0.7], [-0.2, 0.0, 0.5, 1.3]], np.float16)
    idx, size = np.array([1, 0], np.int32), np.array([4, 3], np.int32)
    grid = (rng.random((2, 4, 3, 2)) * 2.4 - 1.2).astype(np.float16)
    for op, inputs, attrs in (
            ("CropAndResize", [("x", x), ("r", rois), ("b", idx), ("c", size)],
             dict(mode="bilinear")),
            ("GridSample", [("x", x), ("g", grid)], dict(mode="bicubic"))):
        wide = [(k, v.astype(F32) if v.dtype == np.float16 else v) for k, v in inputs]
        want = ort_session(_model(op, wide, 1, **attrs), optimize=False).run(
            None, _feeds(wide))[0].astype(np.float16)
        (got,) = _ms_only(op, inputs, **attrs)
        _compare([got], [want], F16_TOL)


@pytest.mark.parametrize("attrs,pads", [
    (dict(strides=[2, 1]), [1, 0, 2, 1]), (dict(), [0, 0, 0, 0]),
    (dict(strides=[2, 2], output_padding=[1, 0], dilations=[1, 2]), [1, 1, 0, 2]),
    (dict(group=2), [1, 1, 1, 1])])
def test_conv_transpose_with_dynamic_pads(rng, attrs, pads):
    """Pads from the input with strides, dilations, output_padding and groups."""
    _check("ConvTransposeWithDynamicPads",
           [("x", rng.random((2, 4, 4, 5)).astype(F32)),
            ("w", rng.random((4, 3, 3, 3)).astype(F32)), ("p", np.array(pads, np.int64)),
            ("b", rng.random(3 * attrs.get("group", 1)).astype(F32))], **attrs)


def test_sample_op(rng):
    """onnxruntime's sample op echoes its input."""
    _check("SampleOp", [("x", rng.random((2, 3)).astype(F32))])


# --------------------------------------------------------------------------------------
# inference, errors, round trip
# --------------------------------------------------------------------------------------


def test_inferred_shapes_match_outputs(rng):
    """Each op's inferred dtype and shape match the kernel's output."""
    cases = [
        ("ExpandDims", [rng.random((2, 3)).astype(F32), np.array(-1, np.int32)], {}),
        ("Pad", [rng.random((2, 3)).astype(F32), np.array([[1, 0, 2, -1]], np.int64)], {}),
        ("GatherND", [rng.random((2, 3, 4)).astype(F32), np.array([[1, 2]], np.int64)], {}),
        ("CDist", [rng.random((4, 3)).astype(F32), rng.random((2, 3)).astype(F32)], {}),
        ("ComplexMul", [rng.random((2, 1, 2)).astype(F32), rng.random((3, 2)).astype(F32)],
         {}),
        ("Rfft", [rng.random((2, 7)).astype(F32)], {}),
        ("Irfft", [rng.random((2, 4, 2)).astype(F32)], dict(signal_ndim=1)),
        ("MurmurHash3", [np.arange(6, dtype=np.int32).reshape(2, 3)], dict(positive=0)),
        ("TorchEmbedding", [rng.random((5, 3)).astype(F32), np.array([[1, 4]], np.int64)],
         {}),
        ("UnfoldTensor", [rng.random((3, 10)).astype(F32)], dict(size=4, step=3)),
        ("CropAndResize", [rng.random((1, 2, 4, 4)).astype(F32),
                           np.array([[0, 0, 1, 1]], F32), np.array([0], np.int32),
                           np.array([3, 2], np.int32)], {}),
        ("GridSample", [rng.random((1, 2, 4, 4)).astype(F32),
                        rng.random((1, 3, 5, 2)).astype(F32)], {}),
        ("ConvTransposeWithDynamicPads", [rng.random((1, 2, 4, 4)).astype(F32),
                                          rng.random((2, 3, 3, 3)).astype(F32),
                                          np.array([1, 0, 0, 1], np.int64)], {}),
        ("IsAllFinite", [rng.random(3).astype(F32)], {}),
    ]
    for op, arrays, attrs in cases:
        opdef = REGISTRY.get(op, MS)
        resolved = opdef.resolve_attrs(attrs)
        outs = opdef.kernel(arrays, resolved, None)
        infos = opdef.infer(resolved, [TensorInfo(a.dtype, a.shape, a) for a in arrays])
        for info, out in zip(infos, outs):
            assert info.dtype == out.dtype, op
            assert len(info.shape) == out.ndim, op
            assert all(d is None or d == s for d, s in zip(info.shape, out.shape)), op


def test_range_inference_does_not_materialise_huge_ranges():
    """A 1e12-long range only gets its length; a short one its values."""
    opdef = REGISTRY.get("Range", MS)
    attrs = opdef.resolve_attrs({})
    known = [TensorInfo(np.dtype(F32), (), np.array(v, F32)) for v in (0.0, 1e12)]
    (info,) = opdef.infer(attrs, known)
    assert info.shape == (999999995904,) and info.value is None
    small = [TensorInfo(np.dtype(np.int32), (), np.array(v, np.int32)) for v in (1, 8, 3)]
    (info,) = opdef.infer(attrs, small)
    np.testing.assert_array_equal(info.value, [1, 4, 7])


def test_errors(rng):
    """Bad inputs and attributes raise onegraph errors naming the op and the problem."""
    x = rng.random((2, 3)).astype(F32)
    with pytest.raises(ShapeError, match="ExpandDims: axis 3 out of range"):
        _kernel("ExpandDims")([x, np.array(3, np.int32)])
    with pytest.raises(ShapeError, match="Range: delta is 0"):
        _kernel("Range")([np.array(1.0, F32), np.array(2.0, F32), np.array(0.0, F32)])
    with pytest.raises(ShapeError, match="Range: start .* one dtype"):
        _kernel("Range")([np.array(1.0, F32), np.array(2, np.int32)])
    with pytest.raises(ShapeError, match=r"Pad: pads must be of shape \[4\]"):
        _kernel("Pad")([x, np.array([1, 1], np.int64)])
    with pytest.raises(ShapeError, match="Pad: reflect padding of 3"):
        _kernel("Pad")([x, np.array([0, 3, 0, 0], np.int64)], mode="reflect")
    with pytest.raises(OpAttributeError, match="Pad: unknown mode 'mirror'"):
        _kernel("Pad")([x, np.array([0, 1, 0, 0], np.int64)], mode="mirror")
    with pytest.raises(ShapeError, match="GatherND: index out of range"):
        _kernel("GatherND")([x, np.array([[2, 0]], np.int64)])
    with pytest.raises(ShapeError, match="Unique: input must be 1-D"):
        _kernel("Unique")([x])
    with pytest.raises(ExecutionError, match="Inverse: a matrix of X is singular"):
        _kernel("Inverse")([np.ones((2, 2), F32)])
    with pytest.raises(ShapeError, match="Inverse: X must be square"):
        _kernel("Inverse")([x])
    with pytest.raises(UnsupportedOpError, match="CDist: metric 'cityblock'"):
        _kernel("CDist")([x, x], metric="cityblock")
    with pytest.raises(ShapeError, match="CDist: A .* must be 2-D"):
        _kernel("CDist")([x, x.T])
    with pytest.raises(OpAttributeError, match="IsAllFinite: isnan_only and isinf_only"):
        _kernel("IsAllFinite")([x], isnan_only=1, isinf_only=1)
    with pytest.raises(ShapeError, match="ComplexMul: .* must end in a dim of 2"):
        _kernel("ComplexMul")([x, x])
    with pytest.raises(ShapeError, match="ComplexMulConj: .* do not broadcast"):
        _kernel("ComplexMulConj")([np.zeros((3, 2), F32), np.zeros((4, 2), F32)])
    with pytest.raises(UnsupportedOpError, match="Rfft: onesided=0"):
        _kernel("Rfft")([x], onesided=0)
    with pytest.raises(UnsupportedOpError, match="Irfft: normalized=1"):
        _kernel("Irfft")([x], signal_ndim=1, normalized=1)
    with pytest.raises(OpAttributeError, match="Rfft: signal_ndim must be 1, 2 or 3"):
        _kernel("Rfft")([x], signal_ndim=4)
    with pytest.raises(ShapeError, match="Irfft: X's last dim must be 2"):
        _kernel("Irfft")([x], signal_ndim=1)
    with pytest.raises(OpAttributeError, match="missing required attribute 'signal_ndim'"):
        _kernel("Irfft")([x])
    img = rng.random((1, 1, 4, 4)).astype(F32)
    box = np.array([[0, 0, 1, 1]], F32)
    with pytest.raises(ShapeError, match="CropAndResize: batch_indices .* out of range"):
        _kernel("CropAndResize")([img, box, np.array([1], np.int32),
                                  np.array([2, 2], np.int32)])
    with pytest.raises(ShapeError, match="CropAndResize: crop_size must be two positive"):
        _kernel("CropAndResize")([img, box, np.array([0], np.int32),
                                  np.array([0, 2], np.int32)])
    with pytest.raises(OpAttributeError, match="CropAndResize: unknown mode 'bicubic'"):
        _kernel("CropAndResize")([img, box, np.array([0], np.int32),
                                  np.array([2, 2], np.int32)], mode="bicubic")
    with pytest.raises(ShapeError, match="MurmurHash3: input must be int32"):
        _kernel("MurmurHash3")([np.zeros(3, np.int8)])
    with pytest.raises(OpAttributeError, match="MurmurHash3: seed .* does not fit"):
        _kernel("MurmurHash3")([np.zeros(3, np.int32)], seed=2 ** 33)
    with pytest.raises(ShapeError, match="TorchEmbedding: indices 0..5 out of range"):
        _kernel("TorchEmbedding")([x, np.array([0, 5], np.int64)])
    seq = np.array([[3, 11, 0]], np.int32)
    w, b, c = np.zeros((2, 1, 2, 3), F32), np.zeros(2, F32), np.zeros((10, 3), F32)
    with pytest.raises(ShapeError, match="WordConvEmbedding: character ids 3..11"):
        _kernel("WordConvEmbedding")([seq, w, b, c])
    with pytest.raises(OpAttributeError, match="WordConvEmbedding: conv_window_size=3"):
        _kernel("WordConvEmbedding")([seq, w, b, c], conv_window_size=3)
    with pytest.raises(ShapeError, match="NGramRepeatBlock: token ids"):
        _kernel("NGramRepeatBlock")([np.array([[9, 1, 9, 7, 9]], np.int64),
                                     np.zeros((1, 4), F32)], ngram_size=2)
    with pytest.raises(OpAttributeError, match="NGramRepeatBlock: ngram_size must be"):
        _kernel("NGramRepeatBlock")([np.array([[1]], np.int64), np.zeros((1, 4), F32)],
                                    ngram_size=0)
    with pytest.raises(ShapeError, match="DynamicTimeWarping: input must be"):
        _kernel("DynamicTimeWarping")([np.zeros((2, 2, 2), F32)])
    with pytest.raises(OpAttributeError, match="UnfoldTensor: size 4 must be in 1..3"):
        _kernel("UnfoldTensor")([x], size=4)
    with pytest.raises(OpAttributeError, match="UnfoldTensor: step must be positive"):
        _kernel("UnfoldTensor")([x], size=2, step=0)
    with pytest.raises(OpAttributeError, match="GridSample: unknown mode 'linear'"):
        _kernel("GridSample")([img, np.zeros((1, 2, 2, 2), F32)], mode="linear")
    with pytest.raises(ShapeError, match="GridSample: X and Grid must be 4-D"):
        _kernel("GridSample")([img[0], np.zeros((1, 2, 2), F32)])
    cw = rng.random((1, 2, 3, 3)).astype(F32)
    with pytest.raises(ShapeError, match="ConvTransposeWithDynamicPads: the Pads input"):
        _kernel("ConvTransposeWithDynamicPads")([img, cw])
    with pytest.raises(ShapeError, match="ConvTransposeWithDynamicPads: Pads must be a 1-D"):
        _kernel("ConvTransposeWithDynamicPads")([img, cw, np.zeros((1, 4), np.int64)])
    with pytest.raises(OpAttributeError, match="ConvTransposeWithDynamicPads: pads"):
        _kernel("ConvTransposeWithDynamicPads")([img, cw, np.zeros(3, np.int64)])


def test_round_trip_model(rng):
    """A small graph of contrib ops imported, run, written back by to_onnx: onnxruntime
    runs the written model to the original's outputs."""
    nodes = [
        helper.make_node("ExpandDims", ["img", "ax"], ["img4"], domain=MS),
        helper.make_node("CropAndResize", ["img4", "rois", "bi", "cs"], ["crops"],
                         domain=MS, mode="bilinear", extrapolation_value=0.5),
        helper.make_node("Pad", ["crops", "pads"], ["padded"], domain=MS, mode="edge"),
        helper.make_node("GatherND", ["padded", "gi"], ["rows"], domain=MS),
        helper.make_node("CDist", ["rows", "ref"], ["dist"], domain=MS, metric="euclidean"),
        helper.make_node("Range", ["r0", "r1"], ["steps"], domain=MS),
        helper.make_node("MurmurHash3", ["steps"], ["hash"], domain=MS, seed=3),
        helper.make_node("DynamicTimeWarping", ["dist"], ["path"], domain=MS),
    ]
    f, i32 = TensorProto.FLOAT, TensorProto.INT32
    graph = helper.make_graph(nodes, "contrib", [
        helper.make_tensor_value_info("img", f, [2, 6, 7]),
        helper.make_tensor_value_info("rois", f, [3, 4]),
        helper.make_tensor_value_info("ref", f, [4, 5])],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         (("dist", f), ("hash", TensorProto.UINT32), ("path", i32))],
        [onnx.numpy_helper.from_array(v, k) for k, v in (
            ("ax", np.array(1, np.int32)), ("bi", np.array([0, 0, 1], np.int32)),
            ("cs", np.array([4, 3], np.int32)),
            ("pads", np.array([0, 0, 0, 1, 0, 0, 0, 1], np.int64)),
            ("gi", np.array([[0, 0, 1], [2, 0, 3], [1, 0, 0]], np.int64)),
            ("r0", np.array(2, np.int32)), ("r1", np.array(9, np.int32)))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(MS, 1)], ir_version=9)
    feeds = {"img": rng.random((2, 6, 7)).astype(F32),
             "rois": np.array([[0.1, 0.0, 0.8, 0.9], [0.2, 0.3, 1.1, 0.7],
                               [0.0, 0.0, 1.0, 1.0]], F32),
             "ref": rng.random((4, 5)).astype(F32)}
    want = ort_session(model, optimize=False).run(None, feeds)
    got = _og(model, feeds)
    back = to_onnx(from_onnx(model))
    assert {n.op_type for n in back.graph.node if n.domain == MS} == \
        {n.op_type for n in nodes}
    again = ort_session(back, optimize=False).run(None, feeds)
    _compare(got, want, TOL)
    _compare(again, want, TOL)


def test_round_trip_optional_and_multi_output_nodes(rng):
    """Unique's three outputs, ConvTransposeWithDynamicPads' Pads-then-B inputs, Trilu,
    GridSample and UnfoldTensor survive import, to_onnx and onnxruntime."""
    nodes = [
        helper.make_node("ConvTransposeWithDynamicPads", ["x", "w", "pads", "b"], ["ct"],
                         domain=MS, strides=[2, 2]),
        helper.make_node("Trilu", ["ct", "k"], ["tri"], domain=MS, upper=0),
        helper.make_node("GridSample", ["tri", "grid"], ["gs"], domain=MS, mode="nearest",
                         padding_mode="border"),
        helper.make_node("UnfoldTensor", ["gs"], ["unf"], domain=MS, size=2, step=1, dim=2),
        helper.make_node("Unique", ["u"], ["uy", "uidx", "ucount"], domain=MS),
    ]
    f = TensorProto.FLOAT
    graph = helper.make_graph(nodes, "contrib2", [
        helper.make_tensor_value_info("x", f, [1, 2, 3, 3]),
        helper.make_tensor_value_info("grid", f, [1, 4, 5, 2]),
        helper.make_tensor_value_info("u", f, [12])],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         (("unf", f), ("uy", f), ("uidx", TensorProto.INT64),
          ("ucount", TensorProto.INT64))],
        [onnx.numpy_helper.from_array(v, k) for k, v in (
            ("w", rng.random((2, 3, 3, 3)).astype(F32)),
            ("pads", np.array([1, 0, 0, 1], np.int64)), ("b", rng.random(3).astype(F32)),
            ("k", np.array(1, np.int64)))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(MS, 1)], ir_version=9)
    feeds = {"x": rng.random((1, 2, 3, 3)).astype(F32),
             "grid": (rng.random((1, 4, 5, 2)) * 2.2 - 1.1).astype(F32),
             "u": rng.integers(0, 5, 12).astype(F32)}
    want = ort_session(model, optimize=False).run(None, feeds)
    got = _og(model, feeds)
    again = ort_session(to_onnx(from_onnx(model)), optimize=False).run(None, feeds)
    _compare(got, want, TOL)
    _compare(again, want, TOL)

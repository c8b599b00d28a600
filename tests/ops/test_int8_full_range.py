"""QLinearConv and com.microsoft QGemm on full-range int8 weights, against oracles that
are neither onegraph nor onnxruntime.

Why: on x86 CPUs without VNNI, onnxruntime's uint8 x int8 kernels add pairs of byte
products in 16 bits with saturation (255*127 + 255*127 comes out as 32767, not 64770;
see tests/ort_int8.py). The tests that use onnxruntime as the oracle therefore draw int8
weights from [-64, 63] on such machines, and onegraph's kernels would never meet weights
at -128 or 127 there. This file puts the extremes in on purpose, on every machine: the
first activations are 255 (and some 0), the first weights 127 and -128, so the sums
onnxruntime saturates occur (`test_the_data_exceeds_16_bit_pair_sums` proves it), plus
zero points at the ends of their ranges, where x - x_zp and w - w_zp need 9 bits.

What against what:
- QLinearConv (ONNX domain; uint8 x, int8 w, int32 bias, uint8 y; per-tensor and
  per-output-channel w scales and zero points; group 1, 2 and depthwise; stride and
  pads): onegraph against an exact int64 reference written here (sum of
  (x - x_zp) * (w - w_zp), plus bias, times x_scale * w_scale / y_scale, rounded half to
  even, plus y_zp, saturated, as the ONNX spec says), and that reference against onnx's
  ReferenceEvaluator on the same one-node model, so the two oracles check each other.
- QGemm (com.microsoft; uint8 or int8 A, int8 B, per-tensor and per-column B scales
  and zero points, optional int32 C, alpha, transA/transB; quantized and float32
  output): onegraph against an int64 reference written here from onnxruntime's
  ContribOperators.md: Y = alpha * a_scale * b_scale * ((A - a_zp) @ (B - b_zp) + C)
  (C is quantized with scale alpha * a_scale * b_scale and zero point 0), then, with
  y_scale and y_zero_point, round half to even of Y / y_scale, plus y_zero_point,
  saturated.

Scales of the quantized cases are powers of two, so that acc * x_scale * w_scale /
y_scale is exact in float32 and float64 alike: the specs do not say in which float
precision to requantize, and with these scales every precision gives the same integer,
so the comparison is exact (equality), ties included. Float outputs: rtol 1e-5.
onnxruntime is not used, so these tests run everywhere.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402

from .single_node import node_inputs  # noqa: E402

MS = "com.microsoft"
PAIR_SUM = 2 * 255 * 127          # 64770: what a 16-bit saturating pair sum gives 32767 for
INT16_MAX = 32767


# --------------------------------------------------------------------------------------
# Models and runs
# --------------------------------------------------------------------------------------


def _one_node(op, inputs, out_dtype, fed, domain="", **attrs):
    """A one-node model with output "y": `inputs` is a list of (name, array or None) in
    the op's input order (None leaves an optional input out); names in `fed` are graph
    inputs, the other arrays initializers."""
    names, graph_inputs, inits = node_inputs(inputs, fed)
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, ["y"], domain=domain, **attrs)
    out = helper.make_tensor_value_info(
        "y", helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype)), None)
    graph = helper.make_graph([node], op.lower(), graph_inputs, [out], inits)
    opsets = [helper.make_opsetid("", 13)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def _feeds(inputs, fed):
    return {name: np.asarray(value) for name, value in inputs
            if value is not None and name in fed}


def _onegraph(model, feeds):
    (y,) = og.Session(from_onnx(model)).run(["y"], feeds)
    return np.asarray(y)


def _pow2(exponent):
    return np.float32(2.0 ** exponent)


def _saturate(values, dtype):
    info = np.iinfo(dtype)
    return np.clip(values, info.min, info.max).astype(dtype)


def _requantize(total, multiplier, y_zp, dtype):
    """round_half_to_even(total * multiplier) + y_zp, saturated to `dtype`. `total` is
    an exact int64 array (|total| < 2**53); `multiplier` a float64 power of two (or an
    array of them), so the product is exact and so is the rounding."""
    assert np.all(np.abs(total) < 2 ** 53)
    assert np.all(np.frexp(np.asarray(multiplier, np.float64))[0] == 0.5), "power of two"
    return _saturate(np.round(total.astype(np.float64) * multiplier) + int(y_zp), dtype)


# --------------------------------------------------------------------------------------
# QLinearConv
# --------------------------------------------------------------------------------------


def _conv_acc(x, x_zp, w, w_zp, group, strides, pads):
    """Exact int64 sum of (x - x_zp) * (w - w_zp) of a grouped 2-D convolution (NCHW,
    OIHW); a padded position contributes 0 (x there equals x_zp)."""
    n, c, h, width = x.shape
    m, cg, kh, kw = w.shape
    assert c == cg * group and m % group == 0
    xs = x.astype(np.int64) - int(x_zp)
    xs = np.pad(xs, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    ws = w.astype(np.int64) - np.asarray(w_zp, np.int64).reshape(-1, 1, 1, 1)
    oh = (h + pads[0] + pads[2] - kh) // strides[0] + 1
    ow = (width + pads[1] + pads[3] - kw) // strides[1] + 1
    mg = m // group
    acc = np.zeros((n, m, oh, ow), np.int64)
    for g in range(group):
        xg = xs[:, g * cg:(g + 1) * cg]
        wg = ws[g * mg:(g + 1) * mg]
        for i in range(kh):
            for j in range(kw):
                patch = xg[:, :, i:i + strides[0] * (oh - 1) + 1:strides[0],
                           j:j + strides[1] * (ow - 1) + 1:strides[1]]
                acc[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch,
                                                         wg[:, :, i, j])
    return acc


# name: (x shape, w shape, group, strides, pads, per_channel, zero points)
# zero points: "zero" (x_zp 0, w_zp 0), "mid" (x_zp 128, w_zp small), "ends" (x_zp 255 or
# w_zp at -128 and 127, where x - x_zp and w - w_zp take 9 bits)
_CONV_CASES = {
    "group1-per-tensor": ((2, 4, 7, 7), (6, 4, 3, 3), 1, (1, 1), (0, 0, 0, 0), False, "zero"),
    "group1-per-tensor-mid-zp": ((2, 4, 6, 6), (5, 4, 3, 3), 1, (1, 1), (1, 1, 1, 1), False,
                                 "mid"),
    "group1-per-channel": ((2, 4, 7, 7), (6, 4, 3, 3), 1, (1, 1), (1, 1, 1, 1), True,
                           "zero"),
    "group1-per-channel-ends": ((1, 5, 6, 6), (4, 5, 3, 3), 1, (1, 1), (1, 1, 1, 1), True,
                                "ends"),
    "group2-per-channel": ((1, 4, 6, 6), (6, 2, 3, 3), 2, (1, 1), (1, 1, 1, 1), True, "mid"),
    "group2-per-tensor": ((2, 6, 5, 5), (4, 3, 3, 3), 2, (1, 1), (0, 0, 0, 0), False,
                          "zero"),
    "depthwise-per-channel": ((1, 4, 6, 6), (4, 1, 3, 3), 4, (1, 1), (1, 1, 1, 1), True,
                              "zero"),
    "depthwise-x2-ends": ((1, 3, 6, 6), (6, 1, 3, 3), 3, (1, 1), (0, 0, 0, 0), True, "ends"),
    "stride2-pad": ((1, 4, 9, 8), (5, 4, 3, 3), 1, (2, 2), (1, 0, 2, 1), True, "mid"),
    "stride2-pad-1x3": ((2, 3, 7, 9), (4, 3, 1, 3), 1, (2, 3), (0, 2, 1, 1), False, "zero"),
}


def _conv_case(name):
    """Inputs (in QLinearConv's order), attributes, and the int64 accumulator (without
    bias) of one case. x's channels 0 and 1 of image 0 are all 255 and its last image's
    channel 0 all 0; w's output channels 0 and 1 are all 127 and all -128."""
    x_shape, w_shape, group, strides, pads, per_channel, zps = _CONV_CASES[name]
    rng = np.random.default_rng(sorted(_CONV_CASES).index(name))
    m = w_shape[0]
    x = rng.integers(0, 256, x_shape).astype(np.uint8)
    x[0, :2] = 255
    if x_shape[0] > 1:
        x[-1, 0] = 0
    w = rng.integers(-128, 128, w_shape).astype(np.int8)
    w[0], w[1] = 127, -128
    if per_channel:
        w_s = np.array([_pow2(-5 - (k % 4)) for k in range(m)], np.float32)
    else:
        w_s = _pow2(-6)
    x_zp = {"zero": 0, "mid": 128, "ends": 255 if name.startswith("group") else 0}[zps]
    if zps == "zero":
        w_zp = np.zeros(np.shape(w_s), np.int8)
    elif zps == "mid":
        w_zp = rng.integers(-4, 5, np.shape(w_s)).astype(np.int8)
    else:
        w_zp = np.resize(np.array([0, -128, 127, 5], np.int8), m)
    x_s = _pow2(-4)
    acc = _conv_acc(x, x_zp, w, w_zp, group, strides, pads)
    # y_scale: a power of two putting most outputs of the random channels (2 on) inside
    # [0, 255] around y_zp 128 (channels 0 and 1, far larger, may saturate)
    scaled = acc * np.asarray(w_s, np.float64).reshape(1, -1, 1, 1)
    spread = max(float(np.std(scaled[:, 2:])), 1.0)
    y_s = _pow2(np.floor(np.log2(float(x_s) * spread / 48.0)))
    bias = rng.integers(-40000, 40001, m).astype(np.int32)
    inputs = [("x", x), ("x_scale", x_s), ("x_zero_point", np.uint8(x_zp)), ("w", w),
              ("w_scale", w_s), ("w_zero_point", w_zp), ("y_scale", y_s),
              ("y_zero_point", np.uint8(128)), ("B", bias)]
    attrs = {"group": group, "strides": list(strides), "pads": list(pads),
             "kernel_shape": list(w_shape[2:])}
    return inputs, attrs, acc


def _conv_expected(inputs, acc):
    v = dict(inputs)
    multiplier = (np.float64(v["x_scale"]) * np.asarray(v["w_scale"], np.float64)
                  / np.float64(v["y_scale"]))
    total = acc + v["B"].astype(np.int64).reshape(1, -1, 1, 1)
    return _requantize(total, np.reshape(multiplier, (1, -1, 1, 1)), v["y_zero_point"],
                       np.uint8)


@pytest.mark.parametrize("weights", ["initializers", "fed"])
@pytest.mark.parametrize("name", list(_CONV_CASES))
def test_qlinear_conv_full_range(name, weights):
    inputs, attrs, acc = _conv_case(name)
    fed = {"x"} if weights == "initializers" else {n for n, _ in inputs}
    model = _one_node("QLinearConv", inputs, np.uint8, fed, **attrs)
    feeds = _feeds(inputs, fed)
    want = _conv_expected(inputs, acc)
    # the two oracles agree: the int64 reference here and onnx's ReferenceEvaluator
    (ref,) = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_array_equal(ref, want)
    # not all saturated, not all in range: both sides of the clip are exercised
    assert 0 < np.count_nonzero((want > 0) & (want < 255)) < want.size
    got = _onegraph(model, feeds)
    assert got.dtype == np.uint8 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_qlinear_conv_without_bias_rounds_ties_to_even():
    """A 1x1 convolution over every uint8 code (x_zp 128) whose outputs land on .5 ties
    inside the 8-bit range: channel 0 has w - w_zp = 1 and multiplier 2**-1 (every odd
    accumulator is a tie), channels 1 and 2 have w - w_zp = 127 - (-128) = 255 and
    -128 - 127 = -255 (9 bits) and multiplier 2**-8 (x = 0 gives -127.5 and 127.5)."""
    x = np.arange(256, dtype=np.uint8).reshape(1, 1, 16, 16)
    w = np.array([1, 127, -128], np.int8).reshape(3, 1, 1, 1)
    w_zp = np.array([0, -128, 127], np.int8)
    w_s = np.array([_pow2(-2), _pow2(-9), _pow2(-9)], np.float32)
    inputs = [("x", x), ("x_scale", _pow2(-3)), ("x_zero_point", np.uint8(128)),
              ("w", w), ("w_scale", w_s), ("w_zero_point", w_zp), ("y_scale", _pow2(-4)),
              ("y_zero_point", np.uint8(128))]
    model = _one_node("QLinearConv", inputs, np.uint8, {"x"})
    acc = _conv_acc(x, 128, w, w_zp, 1, (1, 1), (0, 0, 0, 0))
    multiplier = np.array([2.0 ** -1, 2.0 ** -8, 2.0 ** -8]).reshape(1, 3, 1, 1)
    want = _requantize(acc, multiplier, 128, np.uint8)
    exact = acc * multiplier
    ties = exact - np.floor(exact) == 0.5
    assert np.count_nonzero(ties) == 128 + 2
    # half to even, not half up: -127.5 -> -128 -> code 0, and 127.5 -> 128 -> 255
    assert want[0, 1].reshape(-1)[0] == 0 and want[0, 2].reshape(-1)[0] == 255
    assert want[0, 0].reshape(-1)[1] == 128 - 64 and want[0, 0].reshape(-1)[3] == 128 - 62
    (ref,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(ref, want)
    np.testing.assert_array_equal(_onegraph(model, {"x": x}), want)


# --------------------------------------------------------------------------------------
# QGemm (com.microsoft)
# --------------------------------------------------------------------------------------


def _qgemm_total(a, a_zp, b, b_zp, c, trans_a, trans_b):
    """Exact int64 (A' - a_zp) @ (B' - b_zp) + C, where A' and B' are A and B transposed
    as transA and transB say, b_zp is one value or one per column of B', C is absent
    (0) or broadcast to (M, N)."""
    a64 = a.astype(np.int64).T if trans_a else a.astype(np.int64)
    b64 = b.astype(np.int64).T if trans_b else b.astype(np.int64)
    total = (a64 - int(a_zp)) @ (b64 - np.asarray(b_zp, np.int64).reshape(1, -1))
    if c is not None:
        total = total + c.astype(np.int64)
    return total


def _qgemm_case(seed, a_dtype, trans_a, trans_b, per_column, c_shape, zps, m=24, k=20,
                n=18):
    """Inputs of QGemm up to C (without y_scale, y_zero_point) and the exact total.
    A's row 0 is all at its maximum (255 or 127) and row 1 all at its minimum; B's
    column 0 all 127 and column 1 all -128."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(a_dtype)
    a = rng.integers(info.min, info.max + 1, (m, k)).astype(a_dtype)
    a[0], a[1] = info.max, info.min
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    b[:, 0], b[:, 1] = 127, -128
    width = (n,) if per_column else ()
    b_s = (np.array([_pow2(-5 - (j % 3)) for j in range(n)], np.float32) if per_column
           else _pow2(-6))
    if zps == "zero":
        a_zp, b_zp = 0, np.zeros(width, np.int8)
    elif zps == "mid":
        a_zp = 128 if a_dtype == np.uint8 else -3
        b_zp = rng.integers(-4, 5, width).astype(np.int8)
    else:   # the ends: a - a_zp and b - b_zp take 9 bits
        a_zp = info.max
        b_zp = (np.resize(np.array([0, 0, -128, 127], np.int8), n) if per_column
                else np.int8(-128))
    c = None if c_shape is None else rng.integers(-60000, 60001, c_shape).astype(np.int32)
    stored_a = np.ascontiguousarray(a.T) if trans_a else a
    stored_b = np.ascontiguousarray(b.T) if trans_b else b
    inputs = [("A", stored_a), ("a_scale", _pow2(-4)), ("a_zero_point", a_dtype(a_zp)),
              ("B", stored_b), ("b_scale", b_s), ("b_zero_point", np.asarray(b_zp, np.int8)),
              ("C", c)]
    total = _qgemm_total(stored_a, a_zp, stored_b, b_zp, c, trans_a, trans_b)
    return inputs, total


# (a dtype, transA, transB, per_column, C shape, zero points)
_QGEMM_QUANT = {
    "u8-transB0-per-tensor": (np.uint8, 0, 0, False, (18,), "zero"),
    "u8-transB1-per-tensor": (np.uint8, 0, 1, False, (24, 18), "mid"),
    "u8-transB0-per-column": (np.uint8, 0, 0, True, (1, 18), "mid"),
    "u8-transB1-per-column": (np.uint8, 0, 1, True, (18,), "zero"),
    "u8-transA1-transB1-ends": (np.uint8, 1, 1, True, (24, 1), "ends"),
    "u8-transB0-no-C-ends": (np.uint8, 0, 0, False, None, "ends"),
    "s8-transB0-per-column": (np.int8, 0, 0, True, (18,), "mid"),
    "s8-transB1-per-tensor-ends": (np.int8, 0, 1, False, (24, 18), "ends"),
}


def _qgemm_scale_for(total, a_s, b_s, alpha, target=48.0):
    """A power-of-two y_scale that puts most outputs of the random rows and columns (2
    on) inside the 8-bit range (rows and columns 0 and 1 may saturate)."""
    scaled = total * np.asarray(b_s, np.float64).reshape(1, -1)
    spread = max(float(np.std(scaled[2:, 2:])), 1.0)
    return _pow2(np.floor(np.log2(alpha * float(a_s) * spread / target)))


@pytest.mark.parametrize("weights", ["initializers", "fed"])
@pytest.mark.parametrize("alpha", [1.0, 0.5])
@pytest.mark.parametrize("name", list(_QGEMM_QUANT))
def test_qgemm_quantized_output_full_range(name, alpha, weights):
    a_dtype, trans_a, trans_b, per_column, c_shape, zps = _QGEMM_QUANT[name]
    inputs, total = _qgemm_case(sorted(_QGEMM_QUANT).index(name), a_dtype, trans_a,
                                trans_b, per_column, c_shape, zps)
    v = dict(inputs)
    y_s = _qgemm_scale_for(total, v["a_scale"], v["b_scale"], alpha)
    y_zp = a_dtype(128 if a_dtype == np.uint8 else 0)
    inputs += [("y_scale", y_s), ("y_zero_point", y_zp)]
    multiplier = (alpha * np.float64(v["a_scale"]) * np.asarray(v["b_scale"], np.float64)
                  / np.float64(y_s))
    want = _requantize(total, np.reshape(multiplier, (1, -1)), y_zp, a_dtype)
    info = np.iinfo(a_dtype)
    assert 0 < np.count_nonzero((want > info.min) & (want < info.max)) < want.size
    fed = {"A"} if weights == "initializers" else {n for n, val in inputs if val is not None}
    attrs = {"alpha": alpha, "transA": trans_a, "transB": trans_b}
    model = _one_node("QGemm", inputs, a_dtype, fed, domain=MS, **attrs)
    got = _onegraph(model, _feeds(inputs, fed))
    assert got.dtype == a_dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# (a dtype, transA, transB, per_column, C shape, zero points)
_QGEMM_FLOAT = {
    "u8-transB0-per-tensor": (np.uint8, 0, 0, False, (18,), "zero"),
    "u8-transB1-per-tensor": (np.uint8, 0, 1, False, None, "mid"),
    "u8-transB0-per-column": (np.uint8, 0, 0, True, (24, 18), "ends"),
    "u8-transB1-per-column": (np.uint8, 0, 1, True, (1, 18), "zero"),
    "u8-transA1-transB0-per-column": (np.uint8, 1, 0, True, (18,), "mid"),
    "s8-transB1-per-column-ends": (np.int8, 0, 1, True, (18,), "ends"),
}


@pytest.mark.parametrize("scales", ["powers of two", "arbitrary"])
@pytest.mark.parametrize("alpha", [1.0, 0.75])
@pytest.mark.parametrize("name", list(_QGEMM_FLOAT))
def test_qgemm_float_output_full_range(name, alpha, scales):
    a_dtype, trans_a, trans_b, per_column, c_shape, zps = _QGEMM_FLOAT[name]
    inputs, total = _qgemm_case(100 + sorted(_QGEMM_FLOAT).index(name), a_dtype, trans_a,
                                trans_b, per_column, c_shape, zps)
    if scales == "arbitrary":
        rng = np.random.default_rng(5)
        n = total.shape[1]
        inputs[1] = ("a_scale", np.float32(rng.uniform(0.003, 0.05)))
        inputs[4] = ("b_scale", rng.uniform(1e-4, 1e-2, n if per_column else ())
                     .astype(np.float32))
    v = dict(inputs)
    want = (alpha * np.float64(v["a_scale"]) * np.asarray(v["b_scale"], np.float64)
            .reshape(1, -1) * total)
    attrs = {"alpha": alpha, "transA": trans_a, "transB": trans_b}
    model = _one_node("QGemm", inputs, np.float32, {"A"}, domain=MS, **attrs)
    got = _onegraph(model, _feeds(inputs, {"A"}))
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=0)


# --------------------------------------------------------------------------------------
# The data really has what onnxruntime saturates
# --------------------------------------------------------------------------------------


def test_the_data_exceeds_16_bit_pair_sums():
    """Both data sets hold adjacent products 255 * 127 (whose pair sum 64770 a 16-bit
    saturating kernel turns into 32767) and exact accumulators far above 32767."""
    inputs, _, acc = _conv_case("group1-per-tensor")
    v = dict(inputs)
    x, w = v["x"].astype(np.int64), v["w"].astype(np.int64)
    assert v["x_zero_point"] == 0 and np.all(v["w_zero_point"] == 0)
    assert np.all(x[0, :2] == 255) and np.all(w[0] == 127) and np.all(w[1] == -128)
    # output channel 0 at image 0: at each of the 9 kernel taps, input channels 0 and 1
    # give the pair 255 * 127 + 255 * 127 (adjacent in the channel reduction)
    terms = x[0, :, 0:3, 0:3] * w[0]
    assert np.all(terms[:2] == 255 * 127) and np.all(terms[:2].sum(axis=0) == PAIR_SUM)
    assert np.all(acc[0, 0] > INT16_MAX) and acc[0, 0, 0, 0] == terms.sum()
    assert acc.max() > INT16_MAX and acc.min() < -INT16_MAX - 1
    assert 255 * 127 + 255 * 127 == PAIR_SUM > INT16_MAX
    want = _conv_expected(inputs, acc)
    got = _onegraph(_one_node("QLinearConv", inputs, np.uint8, {"x"},
                              **_conv_case("group1-per-tensor")[1]), {"x": v["x"]})
    np.testing.assert_array_equal(got, want)

    inputs, total = _qgemm_case(0, np.uint8, 0, 0, False, None, "zero")
    v = dict(inputs)
    a, b = v["A"].astype(np.int64), v["B"].astype(np.int64)
    assert np.all(a[0] == 255) and np.all(b[:, 0] == 127) and np.all(b[:, 1] == -128)
    k = a.shape[1]
    assert total[0, 0] == k * 255 * 127 and total[0, 1] == -k * 255 * 128
    # a kernel that saturated each pair of products at 16 bits would give at most this
    assert total[0, 0] > (k // 2) * INT16_MAX
